-- The pruning of finished jobs (JobQueue::prune_finished): oldest finished first, reading only
-- finished jobs. A job's finish already rewrites its row and its other indexes, so this adds
-- one index entry to that write and nothing to enqueueing.
CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE finished_at IS NOT NULL;
