DROP INDEX workflows_event_trigger_idx;
ALTER TABLE workflow_runs DROP COLUMN actions_completed;
