ALTER TABLE plan_tasks DROP CONSTRAINT plan_tasks_live_unstamped;
