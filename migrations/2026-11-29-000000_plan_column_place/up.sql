-- The column limit (`column_too_large`: a column holds at most 5,000 live tasks), checked by
-- the statement that creates a task, under the board row's lock that numbers it. Checked by
-- the service before the write, as it was, two creates into a column one short of the limit
-- would both pass and overfill it; and the check cost a round trip of its own.
--
-- The rank a created task takes (`plan_column_end`), once its column is known to have room
-- for it: a column whose kept count (`plan_column_task_counts`) has reached `max_live` refuses
-- it with a check violation named `plan_column_full`, which the store answers as the domain's
-- column limit. PL/pgSQL and volatile, as `plan_column_end` is: called once the create holds
-- the board lock, its query takes a fresh snapshot then, and so sees the counts of the creates
-- that held the lock before (the statement's own snapshot, taken before it waited, does not).
-- The refusal aborts the whole statement, so the refused create takes no number.
CREATE FUNCTION plan_column_place(board uuid, state uuid, new_task uuid, step bigint, max_live bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF (SELECT live_tasks FROM plan_column_task_counts
        WHERE board_id = board AND state_id = state) >= max_live THEN
        RAISE EXCEPTION 'the column holds % live tasks already', max_live
            USING ERRCODE = 'check_violation', CONSTRAINT = 'plan_column_full';
    END IF;
    RETURN plan_column_end(board, state, new_task, step);
END
$$;
