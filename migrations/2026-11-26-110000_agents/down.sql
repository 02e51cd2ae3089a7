DROP TABLE agent_keys;
DROP TABLE agent_registrations;
DROP TABLE agent_register_challenges;
DROP TABLE agent_messages;
DROP TABLE agent_health_checks;
DROP TABLE agent_reports;
