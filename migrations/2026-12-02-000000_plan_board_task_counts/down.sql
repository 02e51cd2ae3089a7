DROP TRIGGER plan_tasks_count_board_delete ON plan_tasks;
DROP TRIGGER plan_tasks_count_board_update ON plan_tasks;
DROP TRIGGER plan_tasks_count_board_insert ON plan_tasks;
DROP FUNCTION plan_tasks_count_board();
DROP TABLE plan_board_task_counts;
