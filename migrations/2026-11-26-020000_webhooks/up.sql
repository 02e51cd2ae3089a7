-- Webhook endpoints (issue 9 §1): where an organization's events are delivered. Rules in
-- crates/webhooks (WebhookService); SQL in crates/store-pg/src/repo/webhooks.rs.
CREATE TABLE webhook_endpoints (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- Normalized by the WHATWG URL rules and checked by the destination guard.
    url             TEXT NOT NULL,
    -- Dotted event names (docs/events.md), at least one.
    events          TEXT[] NOT NULL CHECK (cardinality(events) > 0),
    name            TEXT NOT NULL DEFAULT '',
    -- Check-ins or forms whose events alone are delivered; empty: all.
    object_ids      UUID[] NOT NULL DEFAULT '{}',
    -- Sealed (AES-256-GCM under the key of TEAMCOMM_PLATFORM_SECRET_KEY, bound to the
    -- organization, endpoint and field), not hashed: deliveries send and sign with them.
    signing_secret  BYTEA NOT NULL,
    bearer_token    BYTEA,
    enabled         BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason TEXT,
    created_by_id   UUID REFERENCES users (id) ON DELETE SET NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Lists (newest first) and the legacy delete by URL go through the organization.
CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (organization_id, created_at DESC, id DESC);
