-- Sub-tasks nest one level: a task given a parent must not be a parent, and its parent must
-- not be a sub-task. The domain checks this before it writes (and answers why), but two
-- writes racing (A put under B while B is put under A, or a sub-task created under a task that
-- is being made a sub-task) could each pass their check. This trigger checks again inside the
-- write's transaction, after taking the board row's lock (creates hold it already; sub-tasks
-- share their parent's board), so such writes run one after the other and the second sees the
-- first. PL/pgSQL: each query takes a fresh snapshot once the lock is held.
CREATE FUNCTION plan_tasks_one_level() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM plan_boards WHERE id = NEW.board_id FOR UPDATE;
    IF EXISTS (SELECT 1 FROM plan_tasks WHERE id = NEW.parent_id AND parent_id IS NOT NULL)
       OR EXISTS (SELECT 1 FROM plan_tasks WHERE parent_id = NEW.id) THEN
        RAISE EXCEPTION 'sub-tasks nest one level only'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'plan_tasks_one_level';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER plan_tasks_one_level_insert BEFORE INSERT ON plan_tasks
    FOR EACH ROW WHEN (NEW.parent_id IS NOT NULL)
    EXECUTE FUNCTION plan_tasks_one_level();
CREATE TRIGGER plan_tasks_one_level_update BEFORE UPDATE OF parent_id ON plan_tasks
    FOR EACH ROW WHEN (NEW.parent_id IS NOT NULL AND NEW.parent_id IS DISTINCT FROM OLD.parent_id)
    EXECUTE FUNCTION plan_tasks_one_level();
