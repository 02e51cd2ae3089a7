DROP TRIGGER plan_tasks_one_level_update ON plan_tasks;
DROP TRIGGER plan_tasks_one_level_insert ON plan_tasks;
DROP FUNCTION plan_tasks_one_level();
