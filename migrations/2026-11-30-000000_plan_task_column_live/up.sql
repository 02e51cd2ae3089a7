-- A live task is in a live column of its own board. The service checks this before it writes
-- (and answers `state_not_on_board`), from the columns it read: read from the board cache
-- (`PlanBoardCache`, up to its time-to-live old when another instance archived the column) or
-- read just before a concurrent column archive committed. This trigger checks again when the
-- task is written, so no such read ever stores a task in an archived column or in another
-- board's column; the store answers the refusal by name (`COLUMN_GONE`). PL/pgSQL: its query
-- takes a fresh snapshot, so it sees an archive that committed while the write waited.
CREATE FUNCTION plan_task_column_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM plan_states
                   WHERE id = NEW.state_id AND board_id = NEW.board_id AND NOT is_archived) THEN
        RAISE EXCEPTION 'a live task is in a live column of its board'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'plan_task_column_live';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER plan_task_column_live_insert BEFORE INSERT ON plan_tasks
    FOR EACH ROW WHEN (NOT NEW.is_archived)
    EXECUTE FUNCTION plan_task_column_live();
CREATE TRIGGER plan_task_column_live_update BEFORE UPDATE OF state_id, board_id, is_archived
    ON plan_tasks
    FOR EACH ROW WHEN (NOT NEW.is_archived AND (OLD.is_archived
        OR NEW.state_id IS DISTINCT FROM OLD.state_id OR NEW.board_id IS DISTINCT FROM OLD.board_id))
    EXECUTE FUNCTION plan_task_column_live();
