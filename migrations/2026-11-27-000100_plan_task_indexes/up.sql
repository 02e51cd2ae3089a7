-- A page of a board's live tasks in rank order is an index scan of the page, not a sort of the board.
CREATE INDEX plan_tasks_board_rank_idx ON plan_tasks (board_id, rank, id) WHERE NOT is_archived;
