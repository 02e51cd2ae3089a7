-- Relayed events are kept 30 days (teamcomm_webhooks::delivery::EVENT_RETENTION), then deleted
-- with their deliveries (WebhookWorker::prune, hourly): this index finds the old ones.
CREATE INDEX outbox_events_relayed_idx ON outbox_events (relayed_at) WHERE relayed_at IS NOT NULL;
