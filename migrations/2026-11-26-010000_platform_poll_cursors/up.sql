-- Where the server's last poll of an organization's chat platform ended (issue 8 §5): the reply
-- loop (crates/api/src/server.rs, `AppState::poll_replies`) reads it before each poll and saves
-- the batch's cursor only once the batch's replies were handed to the check-in engine, so a
-- restart or a crash re-reads replies rather than losing them (the engine takes a reply once).
-- One row per connected organization; it goes with the connection (disconnecting forgets it).
CREATE TABLE platform_poll_cursors (
    organization_id UUID PRIMARY KEY
        REFERENCES platform_connections (organization_id) ON DELETE CASCADE,
    -- The platform the cursor is of: a cursor of another kind is not read.
    kind            TEXT NOT NULL CHECK (kind IN ('matrix', 'slack')),
    -- The platform's opaque position (Matrix: the `/sync` `next_batch` token).
    cursor          TEXT NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
