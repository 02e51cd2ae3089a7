DROP INDEX plan_tasks_board_rank_idx;
