-- One link of a type between two tasks, whichever way it points: `relates_to` and `duplicates`
-- either way round are the same link, and a reverse `blocks` is a cycle. The key makes the
-- second of two racing writes fail instead of both passing a read of the existing links.
-- Links such a race may already have doubled keep their oldest row.
DELETE FROM plan_task_relations r
USING plan_task_relations o
WHERE o.relation_type = r.relation_type
  AND LEAST(o.source_task_id, o.target_task_id) = LEAST(r.source_task_id, r.target_task_id)
  AND GREATEST(o.source_task_id, o.target_task_id) = GREATEST(r.source_task_id, r.target_task_id)
  AND (o.created_at, o.id) < (r.created_at, r.id);

ALTER TABLE plan_task_relations
    DROP CONSTRAINT plan_task_relations_source_task_id_target_task_id_relation__key;
CREATE UNIQUE INDEX plan_task_relations_pair_key ON plan_task_relations (
    LEAST(source_task_id, target_task_id),
    GREATEST(source_task_id, target_task_id),
    relation_type
);
-- The dropped key was also the index of a task's outgoing links (lists, the blocks walk).
CREATE INDEX plan_task_relations_source_idx ON plan_task_relations (source_task_id);
