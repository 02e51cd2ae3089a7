-- The durable queue behind every outbound send (issue 8 §4; kernel::jobs). A job is written in
-- the transaction of the change it belongs to; workers claim due jobs with a lease
-- (FOR UPDATE SKIP LOCKED) and finish them fenced by (id, attempt, state = 'running').
CREATE TABLE jobs (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- kernel::jobs::JobKind; only the worker of a kind reads its payload.
    kind            TEXT NOT NULL,
    payload         JSONB NOT NULL,
    state           TEXT NOT NULL DEFAULT 'queued'
                    CHECK (state IN ('queued', 'running', 'done', 'failed')),
    -- Attempts started (claims) so far: the fence a holder's completion must match.
    attempt         INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    max_attempts    INTEGER NOT NULL CHECK (max_attempts >= 1),
    -- Not before this instant (the backoff's next attempt).
    run_at          TIMESTAMPTZ NOT NULL,
    -- The holder's lease while running; past it the job is claimable again.
    lease_until     TIMESTAMPTZ,
    last_error      TEXT,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at     TIMESTAMPTZ,
    CHECK ((state = 'running') = (lease_until IS NOT NULL)),
    CHECK ((state IN ('done', 'failed')) = (finished_at IS NOT NULL))
);
-- The claim's scan: only unfinished jobs, due first, up to now. Finished jobs stay out of it,
-- so the index stays the size of the backlog however many jobs are kept.
CREATE INDEX jobs_due_idx ON jobs (run_at, id) WHERE state IN ('queued', 'running');
-- The claim's sweep of expired leases: only what workers hold now.
CREATE INDEX jobs_lease_idx ON jobs (lease_until) WHERE state = 'running';
-- No index on organization_id: every send would pay for it, and only the rare deletion of an
-- organization (its cascade) would use it.
