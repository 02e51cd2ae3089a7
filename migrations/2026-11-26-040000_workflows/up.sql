-- Workflows (issue 9 §3): an organization's automations and their runs. Rules in
-- crates/workflows (WorkflowService); SQL in crates/store-pg/src/repo/workflows.rs. Their labels
-- and stars are rows of entity_labels / featured_entities with entity_type 'workflows'.
CREATE TABLE workflows (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    -- `api_trigger` or a dotted event name (docs/events.md).
    trigger_type    TEXT NOT NULL,
    -- The actions as the domain serializes them (a JSON list of {type, ...}).
    actions         JSONB NOT NULL,
    active          BOOLEAN NOT NULL DEFAULT TRUE,
    frozen          BOOLEAN NOT NULL DEFAULT FALSE,
    -- Kept with each queued run (same transaction), so lists need no aggregate.
    total_runs      BIGINT NOT NULL DEFAULT 0,
    last_run_at     TIMESTAMPTZ,
    created_by_id   UUID REFERENCES users (id) ON DELETE SET NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX workflows_org_name_idx ON workflows (organization_id, name, id);

CREATE TABLE workflow_runs (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    workflow_id     UUID NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    status          TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    -- The trigger payload (a JSON object of at most 8 KiB) or the event's.
    payload         JSONB NOT NULL,
    triggered_by_id UUID REFERENCES users (id) ON DELETE SET NULL,
    queued_at       TIMESTAMPTZ NOT NULL,
    started_at      TIMESTAMPTZ,
    finished_at     TIMESTAMPTZ,
    error           TEXT
);
CREATE INDEX workflow_runs_workflow_idx ON workflow_runs (workflow_id, queued_at DESC, id DESC);
