DROP TABLE workflow_runs;
DROP TABLE workflows;
