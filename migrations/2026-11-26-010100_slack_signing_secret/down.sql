ALTER TABLE platform_connections DROP COLUMN sealed_signing_secret;
