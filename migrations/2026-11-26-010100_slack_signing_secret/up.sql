-- A Slack connection's signing secret (issue 8 §1): Slack signs every request it pushes (events,
-- button clicks) with it, and `POST /integrations/slack/{organization}/events/` and
-- `.../interactivity/` verify that signature before reading anything. Sealed like the bot token
-- (AES-256-GCM, the organization and kind as associated data; the plaintext carries a purpose
-- prefix, so a sealed token moved into this column does not open as a signing secret). NULL:
-- nothing Slack pushes for the organization is accepted.
ALTER TABLE platform_connections
    ADD COLUMN sealed_signing_secret BYTEA
        CHECK (sealed_signing_secret IS NULL OR length(sealed_signing_secret) > 28);
