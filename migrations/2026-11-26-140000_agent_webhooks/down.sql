DROP TABLE agent_webhooks;
