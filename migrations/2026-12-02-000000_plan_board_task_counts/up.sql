-- Live tasks per board, kept next to the column counts (2026-11-28-000000_plan_task_counts) by
-- the same statement triggers, so a board's task list reads its count as one row. Summed from
-- the column counts, the count cost the page statement a fifth of its time in PostgreSQL: its
-- generic plan set up an aggregate and a bitmap scan of the counters on every page (measured
-- with pgbench on the bench's database; one row costs half as much). The column counts stay
-- for the column limit and the lists of one column.
--
-- The triggers change the column counters first and then the board counters, each in key
-- order, so two writers always lock counters in the same order. A write that moves tasks
-- between columns of one board nets to nothing per board and leaves its counter alone.
CREATE TABLE plan_board_task_counts (
    board_id uuid PRIMARY KEY REFERENCES plan_boards (id) ON DELETE CASCADE,
    -- the board's, so a count scoped by organization reads this table alone
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    live_tasks bigint NOT NULL
);

INSERT INTO plan_board_task_counts (board_id, organization_id, live_tasks)
SELECT board_id, organization_id, sum(live_tasks) FROM plan_column_task_counts
GROUP BY board_id, organization_id;

CREATE OR REPLACE FUNCTION plan_tasks_count_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO plan_column_task_counts AS c (board_id, state_id, organization_id, live_tasks)
        SELECT board_id, state_id, organization_id, count(*) FROM new_tasks WHERE NOT is_archived
        GROUP BY board_id, state_id, organization_id ORDER BY board_id, state_id
        ON CONFLICT (board_id, state_id) DO UPDATE SET live_tasks = c.live_tasks + excluded.live_tasks;
        INSERT INTO plan_board_task_counts AS c (board_id, organization_id, live_tasks)
        SELECT board_id, organization_id, count(*) FROM new_tasks WHERE NOT is_archived
        GROUP BY board_id, organization_id ORDER BY board_id
        ON CONFLICT (board_id) DO UPDATE SET live_tasks = c.live_tasks + excluded.live_tasks;
    ELSIF TG_OP = 'DELETE' THEN
        -- Tasks go only with their organization, whose cascade may have taken the counters
        -- (with the boards) first: what is left is decremented, nothing is inserted.
        UPDATE plan_column_task_counts c SET live_tasks = c.live_tasks - gone.n
        FROM (SELECT board_id, state_id, count(*) AS n FROM old_tasks WHERE NOT is_archived
              GROUP BY board_id, state_id) gone
        WHERE c.board_id = gone.board_id AND c.state_id = gone.state_id;
        UPDATE plan_board_task_counts c SET live_tasks = c.live_tasks - gone.n
        FROM (SELECT board_id, count(*) AS n FROM old_tasks WHERE NOT is_archived
              GROUP BY board_id) gone
        WHERE c.board_id = gone.board_id;
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
