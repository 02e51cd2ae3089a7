DROP FUNCTION plan_column_end(uuid, uuid, uuid, bigint);
DROP TRIGGER plan_tasks_count_live_delete ON plan_tasks;
DROP TRIGGER plan_tasks_count_live_update ON plan_tasks;
DROP TRIGGER plan_tasks_count_live_insert ON plan_tasks;
DROP FUNCTION plan_tasks_count_live();
DROP TABLE plan_column_task_counts;
