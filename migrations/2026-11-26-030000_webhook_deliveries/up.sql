-- Webhook delivery (issue 9 §2): the relay reads new outbox events (relayed_at IS NULL), and in
-- one transaction marks them relayed, writes a webhook_deliveries row per (event, subscribed
-- enabled endpoint) and a `webhook_delivery` job for each. Rules in crates/webhooks (delivery.rs);
-- SQL in crates/store-pg/src/repo/webhook_deliveries.rs.
ALTER TABLE outbox_events ADD COLUMN relayed_at TIMESTAMPTZ;
-- Events written before delivery existed are not delivered now.
UPDATE outbox_events SET relayed_at = created_at;
-- The relay's scan: only what is still to fan out.
CREATE INDEX outbox_events_unrelayed_idx ON outbox_events (id) WHERE relayed_at IS NULL;

CREATE TABLE webhook_deliveries (
    id               UUID PRIMARY KEY,
    organization_id  UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    endpoint_id      UUID NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id         UUID NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
    event_type       TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'delivered', 'failed')),
    -- Attempts made so far.
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_status_code INTEGER,
    last_error       TEXT,
    -- When the next attempt is due while pending.
    next_attempt_at  TIMESTAMPTZ,
    delivered_at     TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (event_id, endpoint_id)
);
-- An endpoint's recent deliveries (newest first), its failed ones (replay) and its last success.
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
