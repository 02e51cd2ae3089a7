-- A live task carries no archive stamp: a restore clears `archived_at` and
-- `archived_with_board`. A list of live tasks relies on it and does not read them (nor the
-- organization it filters on): fewer columns for PostgreSQL to send and the server to read
-- on every page. Rows written before the rule are cleared first.
UPDATE plan_tasks SET archived_at = NULL, archived_with_board = false
 WHERE NOT is_archived AND (archived_at IS NOT NULL OR archived_with_board);

ALTER TABLE plan_tasks ADD CONSTRAINT plan_tasks_live_unstamped
    CHECK (is_archived OR (archived_at IS NULL AND NOT archived_with_board));
