DROP INDEX jobs_finished_idx;
