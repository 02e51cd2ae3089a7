-- Free-plan daily throttles (issue 10 §4, spec "Free-plan daily throttles"): what a free-plan
-- organization's CLI sessions counted of each daily limit (`agent_reports`, `emails`) on each UTC
-- day. One statement adds one and checks the limit (crates/store-pg/src/repo/daily_counters.rs:
-- INSERT .. ON CONFLICT DO UPDATE .. WHERE used < limit), so the count holds across restarts and
-- several server processes. Rows of past days are no longer read (at most two small rows per
-- free organization and day); they go with their organization.
CREATE TABLE daily_counters (
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    counter         TEXT NOT NULL CHECK (counter IN ('agent_reports', 'emails')),
    day             DATE NOT NULL,
    used            INTEGER NOT NULL CHECK (used >= 0),
    PRIMARY KEY (organization_id, counter, day)
);
