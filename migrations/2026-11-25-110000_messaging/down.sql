DROP TABLE platform_identities;
DROP TABLE platform_connections;
DROP TABLE emails;
DROP TABLE message_deliveries;
DROP TABLE messages;
