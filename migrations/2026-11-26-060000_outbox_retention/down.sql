DROP INDEX outbox_events_relayed_idx;
