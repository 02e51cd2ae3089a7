DROP INDEX plan_task_relations_source_idx;
DROP INDEX plan_task_relations_pair_key;
ALTER TABLE plan_task_relations
    ADD CONSTRAINT plan_task_relations_source_task_id_target_task_id_relation__key
    UNIQUE (source_task_id, target_task_id, relation_type);
