-- Executing workflow runs (issue 9 §3): how far a run got, so a retried run resumes after the
-- actions already done instead of repeating them; and the relay's lookup of the workflows an
-- event starts (teamcomm_workflows::Workflow::runs_on).
ALTER TABLE workflow_runs
    ADD COLUMN actions_completed INTEGER NOT NULL DEFAULT 0 CHECK (actions_completed >= 0);
CREATE INDEX workflows_event_trigger_idx ON workflows (organization_id, trigger_type)
    WHERE active AND NOT frozen;
