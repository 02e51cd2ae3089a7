CREATE OR REPLACE FUNCTION plan_tasks_count_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO plan_column_task_counts AS c (board_id, state_id, organization_id, live_tasks)
        SELECT board_id, state_id, organization_id, count(*) FROM new_tasks WHERE NOT is_archived
        GROUP BY board_id, state_id, organization_id ORDER BY board_id, state_id
        ON CONFLICT (board_id, state_id) DO UPDATE SET live_tasks = c.live_tasks + excluded.live_tasks;
    ELSIF TG_OP = 'DELETE' THEN
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

DROP TABLE plan_board_task_counts;
