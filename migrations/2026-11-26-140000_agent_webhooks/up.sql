-- Agents' webhooks (issue 10 §3): messages left for an agent are pushed to its hook. One per
-- organization and agent name; the secret (sent as X-Webhook-Secret) sealed with the platform
-- key like webhook endpoints' secrets. Rules in crates/agents (AgentService::set_webhook,
-- AgentHookWorker); SQL in crates/store-pg/src/repo/agent_hooks.rs.
CREATE TABLE agent_webhooks (
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_name      TEXT NOT NULL,
    url             TEXT NOT NULL,
    secret_sealed   BYTEA,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (organization_id, agent_name)
);
