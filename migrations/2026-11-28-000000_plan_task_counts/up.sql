-- Live (not archived) tasks per board column, kept as tasks are written, so a board's task
-- page (its envelope's `count`) and the column limit (`column_too_large`, 5,000) read a few
-- rows instead of counting the board's tasks (a count grows with the board: about 21 ms per
-- 100,000 live tasks, so a page of a board of 1,000,000 could not be as fast as one of 1,000).
--
-- A board's count is the sum of its columns' rows. Kept by statement triggers on plan_tasks,
-- in the transaction of the write, whoever writes the tasks (the task repository, a board's or
-- a column's archive cascade, SQL seeding): one place, so no writer can forget it.
-- Statement-level, with transition tables, so a write of many tasks (a board archive, a
-- column's tasks moved when it is archived, a seeding of a million rows) changes each counter
-- once, not once per task. In a table of their own rather than on the board and column rows:
-- only these triggers lock counters, always last in their transaction and in key order, so
-- they never join a lock cycle with the writers of boards and columns (a rename, a reorder of
-- columns), and the board row gets no new version per task write.
CREATE TABLE plan_column_task_counts (
    board_id uuid NOT NULL REFERENCES plan_boards (id) ON DELETE CASCADE,
    state_id uuid NOT NULL REFERENCES plan_states (id) ON DELETE CASCADE,
    -- the board's, so a count scoped by organization reads this table alone
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    live_tasks bigint NOT NULL,
    PRIMARY KEY (board_id, state_id)
);

INSERT INTO plan_column_task_counts (board_id, state_id, organization_id, live_tasks)
SELECT board_id, state_id, organization_id, count(*) FROM plan_tasks WHERE NOT is_archived
GROUP BY board_id, state_id, organization_id;

-- The live rows a statement removed (old) and added (new), netted per column: a write that
-- moves no task between columns and archives or restores none (a title, a rank) changes
-- nothing. Counters change in key order (the ORDER BY feeds the INSERT), so two writers lock
-- them in the same order.
CREATE FUNCTION plan_tasks_count_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO plan_column_task_counts AS c (board_id, state_id, organization_id, live_tasks)
        SELECT board_id, state_id, organization_id, count(*) FROM new_tasks WHERE NOT is_archived
        GROUP BY board_id, state_id, organization_id ORDER BY board_id, state_id
        ON CONFLICT (board_id, state_id) DO UPDATE SET live_tasks = c.live_tasks + excluded.live_tasks;
    ELSIF TG_OP = 'DELETE' THEN
        -- Tasks go only with their organization, whose cascade may have taken the counters
        -- (with the boards) first: what is left is decremented, nothing is inserted.
        UPDATE plan_column_task_counts c SET live_tasks = c.live_tasks - gone.n
        FROM (SELECT board_id, state_id, count(*) AS n FROM old_tasks WHERE NOT is_archived
              GROUP BY board_id, state_id) gone
        WHERE c.board_id = gone.board_id AND c.state_id = gone.state_id;
    ELSE
        INSERT INTO plan_column_task_counts AS c (board_id, state_id, organization_id, live_tasks)
        SELECT board_id, state_id, organization_id, sum(n)
        FROM (SELECT board_id, state_id, organization_id, -1 AS n FROM old_tasks
              WHERE NOT is_archived
              UNION ALL
              SELECT board_id, state_id, organization_id, 1 FROM new_tasks
              WHERE NOT is_archived) moved
        GROUP BY board_id, state_id, organization_id HAVING sum(n) <> 0
        ORDER BY board_id, state_id
        ON CONFLICT (board_id, state_id) DO UPDATE SET live_tasks = c.live_tasks + excluded.live_tasks;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER plan_tasks_count_live_insert AFTER INSERT ON plan_tasks
    REFERENCING NEW TABLE AS new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION plan_tasks_count_live();
CREATE TRIGGER plan_tasks_count_live_update AFTER UPDATE ON plan_tasks
    REFERENCING OLD TABLE AS old_tasks NEW TABLE AS new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION plan_tasks_count_live();
CREATE TRIGGER plan_tasks_count_live_delete AFTER DELETE ON plan_tasks
    REFERENCING OLD TABLE AS old_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION plan_tasks_count_live();

-- The rank after the last live task of a column but `except_task`: where a created or moved
-- task goes. PL/pgSQL and volatile so that its query takes a fresh snapshot when it runs:
-- called by the statement that creates a task once that statement holds the board row's lock,
-- it sees the tasks of the creates that held the lock before, which the statement's own
-- snapshot (taken before it waited for the lock) does not.
CREATE FUNCTION plan_column_end(board uuid, state uuid, except_task uuid, step bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN (SELECT COALESCE(max(rank), 0) + step FROM plan_tasks
            WHERE board_id = board AND state_id = state AND NOT is_archived AND id <> except_task);
END
$$;
