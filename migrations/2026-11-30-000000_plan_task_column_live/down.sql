DROP TRIGGER plan_task_column_live_update ON plan_tasks;
DROP TRIGGER plan_task_column_live_insert ON plan_tasks;
DROP FUNCTION plan_task_column_live();
