-- Live tasks per board, kept next to the column counts (2026-11-28-000000_plan_task_counts) by
-- statement triggers of their own on plan_tasks, in the transaction of the write, so a board's
-- task list reads its count as one row. Summed from the column counts, the count cost the page
-- statement an aggregate and a bitmap scan of the counters on every page (decisions §73). The
-- column counts stay for the column limit and the lists of one column.
--
-- A statement's triggers fire in name order, so every writer changes the board counters
-- (`plan_tasks_count_board_*`) before the column counters (`plan_tasks_count_live_*`), each in
-- key order: all writers lock counters in one order. A write that moves tasks between columns
-- of one board nets to nothing per board and leaves its counter alone.
CREATE TABLE plan_board_task_counts (
    board_id uuid PRIMARY KEY REFERENCES plan_boards (id) ON DELETE CASCADE,
    -- the board's, so a count scoped by organization reads this table alone
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    live_tasks bigint NOT NULL
);

INSERT INTO plan_board_task_counts (board_id, organization_id, live_tasks)
SELECT board_id, organization_id, sum(live_tasks) FROM plan_column_task_counts
GROUP BY board_id, organization_id;

-- The live rows a statement removed (old) and added (new), netted per board.
CREATE FUNCTION plan_tasks_count_board() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO plan_board_task_counts AS c (board_id, organization_id, live_tasks)
        SELECT board_id, organization_id, count(*) FROM new_tasks WHERE NOT is_archived
        GROUP BY board_id, organization_id ORDER BY board_id
        ON CONFLICT (board_id) DO UPDATE SET live_tasks = c.live_tasks + excluded.live_tasks;
    ELSIF TG_OP = 'DELETE' THEN
        -- Tasks go only with their organization, whose cascade may have taken the counters
        -- (with the boards) first: what is left is decremented, nothing is inserted.
        UPDATE plan_board_task_counts c SET live_tasks = c.live_tasks - gone.n
        FROM (SELECT board_id, count(*) AS n FROM old_tasks WHERE NOT is_archived
              GROUP BY board_id) gone
        WHERE c.board_id = gone.board_id;
    ELSE
        INSERT INTO plan_board_task_counts AS c (board_id, organization_id, live_tasks)
        SELECT board_id, organization_id, sum(n)
        FROM (SELECT board_id, organization_id, -1 AS n FROM old_tasks WHERE NOT is_archived
              UNION ALL
              SELECT board_id, organization_id, 1 FROM new_tasks WHERE NOT is_archived) moved
        GROUP BY board_id, organization_id HAVING sum(n) <> 0
        ORDER BY board_id
        ON CONFLICT (board_id) DO UPDATE SET live_tasks = c.live_tasks + excluded.live_tasks;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER plan_tasks_count_board_insert AFTER INSERT ON plan_tasks
    REFERENCING NEW TABLE AS new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION plan_tasks_count_board();
CREATE TRIGGER plan_tasks_count_board_update AFTER UPDATE ON plan_tasks
    REFERENCING OLD TABLE AS old_tasks NEW TABLE AS new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION plan_tasks_count_board();
CREATE TRIGGER plan_tasks_count_board_delete AFTER DELETE ON plan_tasks
    REFERENCING OLD TABLE AS old_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION plan_tasks_count_board();
