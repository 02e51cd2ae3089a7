-- The transactional outbox: every event of the spec's list is written here in the same
-- transaction as the change it reports (docs/events.md). Delivery reads it in id order.
CREATE TABLE outbox_events (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    event_type      TEXT NOT NULL,
    -- The check-in or form the event concerns (subscriptions filter on it).
    object_id       UUID,
    -- The document a subscriber receives (envelope and data).
    payload         JSONB NOT NULL,
    occurred_at     TIMESTAMPTZ NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX outbox_events_org_idx ON outbox_events (organization_id, id);
