DROP TABLE webhook_deliveries;
DROP INDEX outbox_events_unrelayed_idx;
ALTER TABLE outbox_events DROP COLUMN relayed_at;
