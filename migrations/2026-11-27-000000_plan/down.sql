DROP TABLE plan_idempotency_keys;
DELETE FROM entity_labels WHERE entity_type = 'tasks';
ALTER TABLE entity_labels DROP CONSTRAINT entity_labels_entity_type_check;
ALTER TABLE entity_labels ADD CONSTRAINT entity_labels_entity_type_check
    CHECK (entity_type IN ('checkins', 'forms', 'workflows'));
DROP TABLE plan_task_participants;
DROP TABLE plan_comment_reactions;
DROP TABLE plan_comments;
DROP TABLE plan_task_relations;
DROP TABLE plan_task_events;
DROP TABLE plan_tasks;
DROP TABLE plan_states;
DROP TABLE plan_board_visits;
DROP TABLE plan_board_members;
DROP TABLE plan_board_keys;
DROP TABLE plan_boards;
DROP TABLE plan_project_members;
DROP TABLE plan_projects;
