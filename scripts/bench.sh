#!/usr/bin/env bash
# `make bench`: throughput and latency of real endpoints against the stack's floor.
#
# The floor is GET /bench/floor/?org=<uuid> (served only with TEAMCOMM_BENCH_FLOOR=true): one
# indexed single-row read through the same pool and repository layer as the API, without
# authentication. Each case is reported as a percentage of the floor's requests/sec, so the
# number says what the endpoint's own work costs, independent of the machine.
#
# Cases: floor; me (GET /v1/me/, target >= 95% of the floor); users (GET /v1/users/?page_size=25
# on an organization of 10,000 people through the directory page cache, target >= 50% of the
# floor); users_nocache (the same request to a second server whose page cache
# is off, TEAMCOMM_DIRECTORY_CACHE_TTL_SECS=0: the page query itself, target >= 50% of the
# floor); users_1m_nocache (the same uncached, in an organization of 1,000,000 people, target
# >= 50% of the floor: a page costs the same whatever the organization's size).
# The users case asks for the same page over and over, so it measures the cached path.
# checkin_responses (GET /v1/checkins/<uuid>/responses/ for one week, page of 25, on a check-in
# with 50,000 responses, through the check-in cache: target >= 50% of the floor);
# checkin_responses_nocache (the same on the second server, TEAMCOMM_CHECKIN_CACHE_TTL_SECS=0:
# the check-in read and the page's statement on every request; no target, reported);
# checkin_submit (POST of a new check-in
# response, target >= 50% of insert_floor: POST /bench/insert/, one bare single-row insert through
# the same pool and repository layer); send_message (POST /v1/send-message/ to one person, 202
# once queued, target >= 50% of insert_floor).
# delivered_matrix (no target, reported): delivered messages per second to a local Synapse. Run
# once, before the rounds, by scripts/bench_matrix.py: a second organization is connected to a
# fresh Synapse (installed with scripts/install-synapse.sh when missing) through the operator API,
# its people named by Matrix user, then BENCH_MATRIX_MESSAGES sends of one target each (every
# other one to a person by DM, the rest to one room) are queued, and the clock runs until every
# delivery is `delivered` (both servers' delivery loops work the queue, as servers sharing a
# database do). Before the rounds, so no backlog of the other cases' jobs is in the queue.
# webhooks (target: >= 2,000 deliveries/s): webhook deliveries per second to a local receiver,
# and the time from a kudos being posted to its webhook arriving (p50, p99). Run once, before
# the rounds, by scripts/bench_webhooks.py with the receiver
# crates/webhook-http/examples/bench_receiver.rs (built here in release): an endpoint for
# kudos.posted at the receiver (plain http to 127.0.0.1, allowed by
# TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS), then BENCH_WEBHOOK_RUNS rounds of BENCH_WEBHOOK_EVENTS
# kudos events copied into the outbox by one SQL statement and delivered by both servers (the
# rate: first to last arrival, every delivery `delivered`), and BENCH_WEBHOOK_KUDOS kudos posted
# one at a time (latency: the post's send to its webhook's arrival). The report gives the median
# of the rounds.
#
# Small machines are noisy (the same case moved between 83% and 98% of the floor from one run to
# the next on 2 cores), so the cases run interleaved for BENCH_ROUNDS rounds (floor, me, users,
# floor, me, users, ...) and the report gives the median req/s, p50 and p99 of each case.
#
# The server gets hourly rate limits of 1,000,000,000 in every scope, so wrk never meets a 429.
#
# Needs: cargo, PostgreSQL 13+ reachable at 127.0.0.1:5432 as user `postgres` (psql), curl,
# python3. Installs wrk with apt-get if it is missing.
#
# Environment:
#   BENCH_SECONDS      measured seconds per case and round (default 10; each also gets a 3 s warm-up)
#   BENCH_ROUNDS       interleaved rounds (default 3); the report shows medians over the rounds
#   BENCH_ENFORCE=1    exit 1 when a case is below its target (default: report only)
#   BENCH_SKIP_BUILD=1 use the release binary already built
#   BENCH_BIN          binary to run (default: the release build below; implies nothing about building)
#   BENCH_BIG_PEOPLE   people in the organization of users_1m_nocache (default 1000000)
#   TEAMCOMM_DIRECTORY_CACHE_TTL_SECS  passed to the cached server as is (default 5); the
#                      uncached server always runs with 0
#   BENCH_SKIP_MATRIX=1     skip delivered_matrix (and Synapse's installation)
#   BENCH_MATRIX_MESSAGES   messages of delivered_matrix (default 2000)
#   BENCH_MATRIX_PEOPLE     people they go to by DM (default 20)
#   TEAMCOMM_TEST_SYNAPSE_PYTHON  the Synapse venv's python (default: what install-synapse.sh prints)
#   BENCH_SKIP_WEBHOOKS=1   skip the webhooks case (and the receiver's build)
#   BENCH_WEBHOOK_EVENTS    events delivered per throughput round (default 20000)
#   BENCH_WEBHOOK_KUDOS     kudos posted per latency round (default 100)
#   BENCH_WEBHOOK_RUNS      rounds of the webhooks case (default 3)
#   CARGO_TARGET_DIR   default $HOME/.cache/teamcomm-target
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/teamcomm-target}"
BENCH_SECONDS="${BENCH_SECONDS:-10}"
BENCH_ROUNDS="${BENCH_ROUNDS:-3}"
[[ $BENCH_SECONDS =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_SECONDS must be a positive whole number" >&2; exit 1; }
[[ $BENCH_ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_ROUNDS must be a positive whole number" >&2; exit 1; }
WARMUP_SECONDS=3
THREADS=2
CONNECTIONS=64

LISTEN=127.0.0.1:18080
BASE="http://$LISTEN"
# The second server: same binary and database, directory page cache off.
LISTEN_NOCACHE=127.0.0.1:18081
BASE_NOCACHE="http://$LISTEN_NOCACHE"
PG_HOST=127.0.0.1
PG_PORT=5432
PG_USER=postgres
DB_NAME=teamcomm_bench
BENCH_DATABASE_URL="postgres://$PG_USER@$PG_HOST:$PG_PORT/$DB_NAME"
BIN="${BENCH_BIN:-$CARGO_TARGET_DIR/release/teamcomm}"
# People in the organization of the `users` case (the demo's 3 included).
USERS_TOTAL=10000
# People in the organization of the `users_1m_nocache` case (its admin included).
BIG_TOTAL="${BENCH_BIG_PEOPLE:-1000000}"
[[ $BIG_TOTAL =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_BIG_PEOPLE must be a positive whole number" >&2; exit 1; }
SKIP_MATRIX="${BENCH_SKIP_MATRIX:-0}"
MATRIX_MESSAGES="${BENCH_MATRIX_MESSAGES:-2000}"
MATRIX_PEOPLE="${BENCH_MATRIX_PEOPLE:-20}"
[[ $MATRIX_MESSAGES =~ ^[1-9][0-9]*$ && $MATRIX_MESSAGES -ge 2 ]] || { echo "bench: BENCH_MATRIX_MESSAGES must be a whole number of at least 2" >&2; exit 1; }
[[ $MATRIX_PEOPLE =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_MATRIX_PEOPLE must be a positive whole number" >&2; exit 1; }
SKIP_WEBHOOKS="${BENCH_SKIP_WEBHOOKS:-0}"
WEBHOOK_EVENTS="${BENCH_WEBHOOK_EVENTS:-20000}"
WEBHOOK_KUDOS="${BENCH_WEBHOOK_KUDOS:-100}"
WEBHOOK_RUNS="${BENCH_WEBHOOK_RUNS:-3}"
for v in WEBHOOK_EVENTS WEBHOOK_KUDOS WEBHOOK_RUNS; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_$v must be a positive whole number" >&2; exit 1; }
done
RECEIVER_BIN="$CARGO_TARGET_DIR/release/examples/bench_receiver"
# Hourly budget given to every rate-limit scope of the bench server: far above what wrk can send.
RATE_LIMIT=1000000000

log() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'bench: %s\n' "$*" >&2
    exit 1
}
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is required but not installed"; }

# ------------------------------------------------------------------------------ tools

need cargo
need curl
need psql
need python3

if ! command -v wrk >/dev/null 2>&1; then
    log "installing wrk (apt-get)"
    SUDO=()
    if [[ $(id -u) -ne 0 ]]; then
        need sudo
        SUDO=(sudo)
    fi
    if ! "${SUDO[@]+"${SUDO[@]}"}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; then
        "${SUDO[@]+"${SUDO[@]}"}" apt-get update -qq
        "${SUDO[@]+"${SUDO[@]}"}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
    fi
    need wrk
fi

if [[ $SKIP_MATRIX != 1 ]]; then
    SYNAPSE_PYTHON="${TEAMCOMM_TEST_SYNAPSE_PYTHON:-}"
    if [[ -z $SYNAPSE_PYTHON ]]; then
        log "installing Synapse for delivered_matrix (scripts/install-synapse.sh; BENCH_SKIP_MATRIX=1 skips the case)"
        SYNAPSE_PYTHON="$(bash scripts/install-synapse.sh | tail -n 1)"
    fi
    [[ -x $SYNAPSE_PYTHON ]] || die "no Synapse python at '$SYNAPSE_PYTHON' (scripts/install-synapse.sh prints it)"
fi

# ------------------------------------------------------------------------------ build

if [[ ${BENCH_SKIP_BUILD:-0} != 1 ]]; then
    log "building release binary (target dir $CARGO_TARGET_DIR)"
    cargo build --release -p teamcomm-api
    if [[ $SKIP_WEBHOOKS != 1 ]]; then
        log "building the webhook receiver (crates/webhook-http/examples/bench_receiver.rs)"
        cargo build --release -p teamcomm-webhook-http --example bench_receiver
    fi
fi
[[ -x $BIN ]] || die "no binary at $BIN"
[[ $SKIP_WEBHOOKS == 1 || -x $RECEIVER_BIN ]] || die "no webhook receiver at $RECEIVER_BIN"

# ------------------------------------------------------------------------------ database

for base in "$BASE" "$BASE_NOCACHE"; do
    if curl -s -o /dev/null --max-time 2 "$base/healthz"; then
        die "something already answers on ${base#http://}; stop it first"
    fi
done

log "creating a fresh database $DB_NAME"
PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -v ON_ERROR_STOP=1 -q \
    -c "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" \
    -c "CREATE DATABASE $DB_NAME" >/dev/null

# ------------------------------------------------------------------------------ server

WORK="$(mktemp -d "${TMPDIR:-/tmp}/teamcomm-bench.XXXXXX")"
SERVER_PIDS=()

cleanup() {
    local status=$?
    local pid
    for pid in "${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [[ $status -ne 0 ]]; then
        local f
        for f in "$WORK"/server-*.stderr; do
            [[ -s $f ]] || continue
            printf '\n--- %s (last 30 lines) ---\n' "$(basename "$f")" >&2
            tail -n 30 "$f" >&2 || true
        done
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Generous rate limits in every scope: the bench measures the endpoints, not the limiter's 429s.
# (TEAMCOMM_TEST_* names are ignored by the server; unset anyway for a clean environment.)
LIMITS=()
for scope in READS WRITES MESSAGING EMAIL INVITATIONS WORKFLOW_TRIGGERS AGENT AUTH; do
    LIMITS+=("TEAMCOMM_RATE_LIMIT_PER_HOUR_$scope=$RATE_LIMIT")
done

# The operator API's token (delivered_matrix connects an organization through it), and one key
# that both servers seal and unseal platform secrets with (each delivers the other's jobs).
OPERATOR_TOKEN="$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
PLATFORM_SECRET_KEY="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"

# The environment of every teamcomm process the bench runs.
BENCH_ENV=(
    -u TEAMCOMM_TLS_CERT -u TEAMCOMM_TLS_KEY -u TEAMCOMM_BASE_URL -u TEAMCOMM_TEST_CLI_VENV
    -u TEAMCOMM_RATE_LIMIT_ENTERPRISE_MULTIPLIER
    DATABASE_URL="$BENCH_DATABASE_URL"
    TEAMCOMM_OPERATOR_TOKEN="$OPERATOR_TOKEN"
    TEAMCOMM_PLATFORM_SECRET_KEY="$PLATFORM_SECRET_KEY"
    # The webhooks case's receiver listens on plain http on loopback.
    TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS=127.0.0.1
    "${LIMITS[@]}"
    RUST_LOG=warn
)

# start_server NAME LISTEN [ENV=VALUE...] -- ARGS...: starts a server in the background and waits
# until it is ready. Its output goes to $WORK/server-NAME.stdout and .stderr. (env execs the
# binary, so the recorded pid is the server's own and cleanup stops it.)
start_server() {
    local name=$1 listen=$2
    shift 2
    local extra=()
    while [[ $1 != -- ]]; do
        extra+=("$1")
        shift
    done
    shift
    log "starting $BIN $* ($name) on $listen"
    env "${BENCH_ENV[@]}" TEAMCOMM_LISTEN="$listen" "${extra[@]+"${extra[@]}"}" "$BIN" "$@" \
        >"$WORK/server-$name.stdout" 2>"$WORK/server-$name.stderr" &
    local pid=$!
    SERVER_PIDS+=("$pid")
    local _
    for _ in $(seq 1 600); do # up to 60 s (the first start applies migrations)
        kill -0 "$pid" 2>/dev/null || die "the $name server exited during start"
        if curl -sf -o /dev/null --max-time 1 "http://$listen/readyz"; then
            return 0
        fi
        sleep 0.1
    done
    die "the $name server did not become ready on $listen"
}

start_server cached "$LISTEN" TEAMCOMM_BENCH_FLOOR=true -- serve --demo

# The demo banner prints the admin's key alone on one line (indented), before the server binds.
KEY="$(grep -E '^[[:space:]]*tck_[0-9A-Za-z]{38}[[:space:]]*$' "$WORK/server-cached.stdout" | head -n 1 | tr -d '[:space:]' || true)"
[[ -n $KEY ]] || die "no demo API key in the server's output (was the database really empty?)"

ORG="$(curl -sf -H "X-API-KEY: $KEY" -H 'Accept: application/json' "$BASE/v1/me/" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["organization_uuid"])')" ||
    die "GET /v1/me/ with the demo key failed"
log "demo organization $ORG"

policy="$(curl -s -o /dev/null -D - -H "X-API-KEY: $KEY" "$BASE/v1/me/" | tr -d '\r' |
    awk -F': ' 'tolower($1) == "ratelimit-policy" { print $2 }' || true)"
[[ $policy == "\"reads\";q=$RATE_LIMIT;w=3600" ]] ||
    die "the server did not take the bench rate limits (RateLimit-Policy: ${policy:-absent})"

# ------------------------------------------------------------------------------ seeding

# One INSERT grows the organization to USERS_TOTAL people (the users_count trigger keeps
# organizations.user_count right); ANALYZE then gives the planner the real table sizes.
log "seeding the demo organization up to $USERS_TOTAL people"
PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$DB_NAME" -v ON_ERROR_STOP=1 -q \
    -c "INSERT INTO users (id, organization_id, email, first_name, last_name, role)
        SELECT gen_random_uuid(), o.id,
               format('bench%s@bench.teamcomm.dev', g),
               (ARRAY['Ada','Alan','Barbara','Claude','Dennis','Edsger','Frances','Grace','John','Ken',
                      'Leslie','Margaret','Niklaus','Radia','Tim','Yukihiro'])[1 + g % 16],
               format('Bench %s', lpad(g::text, 5, '0')),
               'member'
        FROM organizations o, generate_series(1, $USERS_TOTAL - (SELECT count(*) FROM users WHERE organization_id = '$ORG')) AS g
        WHERE o.id = '$ORG'" \
    -c "ANALYZE users" \
    -c "ANALYZE organizations" >/dev/null

people="$(curl -sf -H "X-API-KEY: $KEY" "$BASE/v1/users/?page_size=1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["count"])')" ||
    die "GET /v1/users/ with the demo key failed"
[[ $people == "$USERS_TOTAL" ]] || die "GET /v1/users/ counts $people people, expected $USERS_TOTAL"

# The big organization: created with SQL (one statement for its people; the count is kept per
# statement), its admin's key with `teamcomm admin create-api-key`. VACUUM sets the visibility
# map that the index-only scans of deep pages rely on (autovacuum would, later).
log "seeding an organization of $BIG_TOTAL people"
BIG_ADMIN="$(PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$DB_NAME" -v ON_ERROR_STOP=1 -qAt \
    -c "WITH org AS (
            INSERT INTO organizations (id, name, plan, api_access) VALUES (gen_random_uuid(), 'Bench Big', 'enterprise', TRUE)
            RETURNING id)
        INSERT INTO users (id, organization_id, email, first_name, last_name, role)
        SELECT gen_random_uuid(), org.id, 'admin@big.bench.teamcomm.dev', 'Aaron', 'Admin', 'admin' FROM org
        RETURNING id")"
[[ -n $BIG_ADMIN ]] || die "could not create the big organization"
PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$DB_NAME" -v ON_ERROR_STOP=1 -q \
    -c "INSERT INTO users (id, organization_id, email, first_name, last_name, role)
        SELECT gen_random_uuid(), u.organization_id,
               format('bench%s@big.bench.teamcomm.dev', g),
               (ARRAY['Ada','Alan','Barbara','Claude','Dennis','Edsger','Frances','Grace','John','Ken',
                      'Leslie','Margaret','Niklaus','Radia','Tim','Yukihiro'])[1 + g % 16],
               format('Bench %s', lpad(g::text, 7, '0')),
               'member'
        FROM users u, generate_series(1, $BIG_TOTAL - 1) AS g
        WHERE u.id = '$BIG_ADMIN'" \
    -c "VACUUM ANALYZE users" \
    -c "ANALYZE organizations" >/dev/null
BIG_KEY="$(env "${BENCH_ENV[@]}" "$BIN" admin create-api-key "$BIG_ADMIN" --name bench 2>"$WORK/admin.stderr" |
    grep -oE 'tck_[0-9A-Za-z]{38}' | head -n 1 || true)"
[[ -n $BIG_KEY ]] || die "teamcomm admin create-api-key gave no key: $(tail -n 5 "$WORK/admin.stderr")"

# Without --demo the server wants a session-signing secret; nothing here uses sessions.
JWT_SECRET="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
start_server nocache "$LISTEN_NOCACHE" TEAMCOMM_DIRECTORY_CACHE_TTL_SECS=0 TEAMCOMM_CHECKIN_CACHE_TTL_SECS=0 TEAMCOMM_JWT_SECRET="$JWT_SECRET" -- serve

people="$(curl -sf -H "X-API-KEY: $BIG_KEY" "$BASE_NOCACHE/v1/users/?page_size=1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["count"])')" ||
    die "GET /v1/users/ with the big organization's key failed"
[[ $people == "$BIG_TOTAL" ]] || die "GET /v1/users/ counts $people people in the big organization, expected $BIG_TOTAL"

# Check-in responses. A check-in with 100 participants gets 500 days of responses each (50,000,
# one SQL statement); the case reads a page of 25 of one week's 700. A second check-in, whose 100
# participants each get an API key (`teamcomm admin create-api-key`), takes the submissions: each
# request posts a new (participant, day) response, every day of the past year allowed, and the
# check-in's responses are deleted before each wrk run so the slots never run out.
psql_bench() {
    PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$DB_NAME" -v ON_ERROR_STOP=1 -qAt "$@"
}
RESPONDENTS=100
RESPONSE_DAYS=500
# create_checkin NAME PARTICIPANTS_JSON: creates a check-in through the API; prints its body.
create_checkin() {
    curl -sf -X POST -H "X-API-KEY: $KEY" -H 'Content-Type: application/json' "$BASE/v1/checkins/create/" \
        -d "{\"name\": \"$1\", \"schedule\": {\"days\": [0, 1, 2, 3, 4, 5, 6], \"time\": \"00:00\", \"timezone\": \"UTC\"},
             \"participants\": {\"user_uuids\": $2},
             \"questions\": [{\"question\": \"What did you do?\", \"question_type\": \"text\", \"short_question\": \"Done\"}],
             \"allow_past_responses\": true, \"allow_responses_before_trigger\": true}"
}
log "seeding a check-in with $((RESPONDENTS * RESPONSE_DAYS)) responses"
participants="$(psql_bench -c "SELECT json_agg(id) FROM (SELECT id FROM users WHERE organization_id = '$ORG' AND role = 'member' ORDER BY id LIMIT $RESPONDENTS) p")"
CHECKIN="$(create_checkin 'Bench stand-up' "$participants" | python3 -c 'import json, sys; print(json.load(sys.stdin)["uuid"])')" ||
    die "POST /v1/checkins/create/ failed"
psql_bench -c "INSERT INTO checkin_responses (id, organization_id, checkin_id, user_id, response_date, answers,
                   search_text, last_question_index, completed, questions_version, created_at, updated_at)
               SELECT gen_random_uuid(), c.organization_id, c.id, p.user_id, current_date - d,
                      jsonb_build_array(jsonb_build_object('uuid', c.questions->0->>'uuid',
                          'question', c.questions->0->>'question', 'response', 'Shipped part ' || d)),
                      'shipped part ' || d, 0, TRUE, c.questions_version, now(), now()
               FROM checkins c, unnest(c.participant_user_ids) AS p(user_id), generate_series(0, $RESPONSE_DAYS - 1) AS d
               WHERE c.id = '$CHECKIN'" \
    -c "VACUUM ANALYZE checkin_responses" >/dev/null
# VACUUM: a table at rest has its visibility map set (autovacuum's steady state), which lets
# the page's total be counted from the index alone, as in production.
RESP_FROM="$(date -u -d '-30 days' +%F)"
RESP_UNTIL="$(date -u -d '-24 days' +%F)"
responses="$(curl -sf -H "X-API-KEY: $KEY" "$BASE/v1/checkins/$CHECKIN/responses/?page_size=1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["count"])')" ||
    die "GET /v1/checkins/<uuid>/responses/ failed"
[[ $responses == $((RESPONDENTS * RESPONSE_DAYS)) ]] || die "the check-in counts $responses responses, expected $((RESPONDENTS * RESPONSE_DAYS))"

log "creating a check-in for submissions and $RESPONDENTS participant keys"
participants="$(psql_bench -c "SELECT json_agg(id) FROM (SELECT id FROM users WHERE organization_id = '$ORG' AND role = 'member' ORDER BY id DESC LIMIT $RESPONDENTS) p")"
submit_body="$(create_checkin 'Bench submissions' "$participants")" || die "POST /v1/checkins/create/ failed"
SUBMIT_CHECKIN="$(python3 -c 'import json, sys; print(json.load(sys.stdin)["uuid"])' <<<"$submit_body")"
QUESTION="$(python3 -c 'import json, sys; print(json.load(sys.stdin)["questions"][0]["uuid"])' <<<"$submit_body")"
{
    printf -- '-- Generated by scripts/bench.sh: each request posts a response for a new (key, day).\n'
    printf 'local keys = {\n'
    for user in $(python3 -c 'import json, sys; print(" ".join(json.loads(sys.argv[1])))' "$participants"); do
        k="$(env "${BENCH_ENV[@]}" "$BIN" admin create-api-key "$user" --name bench 2>>"$WORK/admin.stderr" |
            grep -oE 'tck_[0-9A-Za-z]{38}' | head -n 1 || true)"
        [[ -n $k ]] || die "teamcomm admin create-api-key gave no key: $(tail -n 5 "$WORK/admin.stderr")"
        printf '  "%s",\n' "$k"
    done
    printf '}\n'
    cat <<LUA
local threads = 0
function setup(thread)
  thread:set("thread_id", threads)
  threads = threads + 1
end
function init(args)
  sent = 0
end
function request()
  -- Thread t sends slots t, t + $THREADS, t + 2 * $THREADS...; a slot is a key and a day back.
  local slot = sent * $THREADS + thread_id
  sent = sent + 1
  local key = keys[(slot % #keys) + 1]
  local day = os.date("!%Y-%m-%d", os.time() - 86400 * math.floor(slot / #keys))
  local body = '{"responses": [{"uuid": "$QUESTION", "index": 0, "response": "Shipped the bench"}], "response_date": "' .. day .. '"}'
  return wrk.format("POST", nil, {["X-API-KEY"] = key, ["Content-Type"] = "application/json"}, body)
end
LUA
} >"$WORK/submit.lua"
reset_submissions() {
    psql_bench -c "DELETE FROM checkin_responses WHERE checkin_id = '$SUBMIT_CHECKIN'" >/dev/null
}
printf 'wrk.method = "POST"\n' >"$WORK/insert.lua"

# send_message: the admin sends a bot message to themself; 202 once the message, its delivery
# and its job are stored. The server's delivery loop runs meanwhile, as in production (the demo
# organization has no chat platform, so each job ends at once with platform_not_connected).
ADMIN_UUID="$(curl -sf -H "X-API-KEY: $KEY" "$BASE/v1/me/" | python3 -c 'import json, sys; print(json.load(sys.stdin)["uuid"])')" ||
    die "GET /v1/me/ with the demo key failed"
cat >"$WORK/send.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"message": "Bench", "target_users": ["$ADMIN_UUID"]}'
LUA

# ------------------------------------------------------------------------------ measuring

# Converts a wrk latency ("850.00us", "1.23ms", "1.02s") to milliseconds.
to_ms() {
    awk '{
        v = $1
        if (v ~ /us$/)      { sub(/us$/, "", v); v = v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v) }
        else if (v ~ /s$/)  { sub(/s$/, "", v); v = v * 1000 }
        printf "%.2f", v
    }'
}

declare -a CASES=()
declare -A RUNS=() TARGET=() BASELINE=() RPS=() P50=() P99=()

# median: the median of the numbers on stdin, one a line (mean of the middle two when even).
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "0"; exit }
        if (NR % 2) { printf "%.2f\n", v[(NR + 1) / 2] }
        else { printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }
    }'
}

# define_case NAME BASELINE TARGET_PCT
#   BASELINE is the case the target compares with ("floor", "me", or "-" for no target);
#   TARGET_PCT the minimum requests/sec as a percentage of the baseline's median.
define_case() {
    CASES+=("$1")
    BASELINE[$1]=$2
    TARGET[$1]=$3
    RUNS[$1]=""
}

# run_case NAME URL [HEADER] [SCRIPT] [BEFORE]
#   Warms up for WARMUP_SECONDS, then measures for BENCH_SECONDS with wrk, and appends
#   "req/s p50_ms p99_ms" to the case's runs. HEADER is one "Name: value" request header
#   (e.g. the API key). SCRIPT is a wrk Lua script that builds the requests (writes); without
#   it the case is a GET of URL, checked once with curl first. BEFORE is a command run before
#   each wrk invocation (to reset what a write case consumed).
run_case() {
    local name=$1 url=$2 header=${3:-} script=${4:-} before=${5:-}
    local hdr=()
    if [[ -n $header ]]; then
        hdr=(-H "$header")
    fi
    local scr=()
    if [[ -n $script ]]; then
        scr=(-s "$script")
    else
        local code
        code="$(curl -s -o "$WORK/check-$name.json" -w '%{http_code}' "${hdr[@]+"${hdr[@]}"}" "$url")"
        [[ $code == 200 ]] || die "$name: $url answered $code: $(head -c 300 "$WORK/check-$name.json")"
    fi

    local wrk_args=(-t"$THREADS" -c"$CONNECTIONS" --latency "${hdr[@]+"${hdr[@]}"}" "${scr[@]+"${scr[@]}"}")
    [[ -z $before ]] || eval "$before"
    log "$name: warm-up ${WARMUP_SECONDS}s"
    wrk "${wrk_args[@]}" -d"${WARMUP_SECONDS}s" "$url" >/dev/null
    [[ -z $before ]] || eval "$before"
    log "$name: measuring ${BENCH_SECONDS}s ($THREADS threads, $CONNECTIONS connections)"
    local out
    out="$(wrk "${wrk_args[@]}" -d"${BENCH_SECONDS}s" "$url")"
    printf '%s\n' "$out" >>"$WORK/wrk-$name.txt"

    if grep -q 'Non-2xx or 3xx responses' <<<"$out"; then
        printf '%s\n' "$out" >&2
        die "$name: some responses were not 2xx (a 429 means the rate limits were not raised); the numbers would be meaningless"
    fi
    if grep -q 'Socket errors' <<<"$out"; then
        log "$name: warning: $(grep 'Socket errors' <<<"$out" | sed 's/^ *//')"
    fi

    local rps p50 p99
    rps="$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")"
    p50="$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_ms)"
    p99="$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_ms)"
    [[ -n $rps ]] || die "$name: could not read Requests/sec from wrk"
    log "$name: $rps req/s, p50 $p50 ms, p99 $p99 ms"
    RUNS[$name]+="$rps $p50 $p99"$'\n'
}

# ==============================================================================================
# CASES. Each round runs every case once, in this order; the floor comes first so every round
# measures the baseline next to the cases compared with it.
#
# To add a case: one define_case line (its name, the case its target compares with, and the
# percentage) and one run_case line in bench_round.
# ==============================================================================================
define_case floor - -
define_case me floor 95
define_case users floor 50 # cached
define_case users_nocache floor 50
define_case users_1m_nocache floor 50
define_case checkin_responses floor 50 # cached
define_case checkin_responses_nocache - -
define_case insert_floor - -
define_case checkin_submit insert_floor 50
define_case send_message insert_floor 50

bench_round() {
    run_case floor "$BASE/bench/floor/?org=$ORG"
    run_case me "$BASE/v1/me/" "X-API-KEY: $KEY"
    run_case users "$BASE/v1/users/?page_size=25" "X-API-KEY: $KEY"
    run_case users_nocache "$BASE_NOCACHE/v1/users/?page_size=25" "X-API-KEY: $KEY"
    run_case users_1m_nocache "$BASE_NOCACHE/v1/users/?page_size=25" "X-API-KEY: $BIG_KEY"
    run_case checkin_responses "$BASE/v1/checkins/$CHECKIN/responses/?date_start=$RESP_FROM&date_end=$RESP_UNTIL&page_size=25" "X-API-KEY: $KEY"
    run_case checkin_responses_nocache "$BASE_NOCACHE/v1/checkins/$CHECKIN/responses/?date_start=$RESP_FROM&date_end=$RESP_UNTIL&page_size=25" "X-API-KEY: $KEY"
    run_case insert_floor "$BASE/bench/insert/?org=$ORG" "" "$WORK/insert.lua"
    run_case checkin_submit "$BASE/v1/checkins/$SUBMIT_CHECKIN/responses/" "" "$WORK/submit.lua" reset_submissions
    run_case send_message "$BASE/v1/send-message/" "X-API-KEY: $KEY" "$WORK/send.lua"
    # >>> add new cases here <<<
}

# delivered_matrix: once, before the rounds (see the top of this file and bench_matrix.py).
MATRIX_RESULT=""
if [[ $SKIP_MATRIX != 1 ]]; then
    log "delivered_matrix: an organization of $MATRIX_PEOPLE people and an admin, connected to a local Synapse"
    operator() { # operator METHOD PATH [JSON]: prints the body; fails unless 2xx
        local body=()
        [[ -z ${3:-} ]] || body=(-d "$3")
        curl -sf -X "$1" -H "Authorization: Bearer $OPERATOR_TOKEN" -H 'Content-Type: application/json' \
            "$BASE$2" "${body[@]+"${body[@]}"}"
    }
    uuid_of() { python3 -c 'import json, sys; print(json.load(sys.stdin)["uuid"])'; }
    MATRIX_ORG="$(operator POST /operator/v1/organizations/ '{"name": "Bench Matrix", "plan": "business"}' | uuid_of)" ||
        die "delivered_matrix: creating the organization failed"
    new_person() { # new_person N ROLE
        operator POST "/operator/v1/organizations/$MATRIX_ORG/users/" \
            "{\"email\": \"p$1@matrix.bench.teamcomm.dev\", \"first_name\": \"Matrix\", \"last_name\": \"Bench $1\", \"role\": \"$2\"}" | uuid_of
    }
    MATRIX_ADMIN="$(new_person 0 admin)" || die "delivered_matrix: creating the admin failed"
    MATRIX_PEOPLE_UUIDS=""
    for n in $(seq 1 "$MATRIX_PEOPLE"); do
        MATRIX_PEOPLE_UUIDS+="$(new_person "$n" member) " || die "delivered_matrix: creating person $n failed"
    done
    MATRIX_KEY="$(env "${BENCH_ENV[@]}" "$BIN" admin create-api-key "$MATRIX_ADMIN" --name bench 2>>"$WORK/admin.stderr" |
        grep -oE 'tck_[0-9A-Za-z]{38}' | head -n 1 || true)"
    [[ -n $MATRIX_KEY ]] || die "teamcomm admin create-api-key gave no key: $(tail -n 5 "$WORK/admin.stderr")"
    mkdir -p "$WORK/matrix"
    MATRIX_RESULT="$(env BENCH_BASE="$BASE" BENCH_OPERATOR_TOKEN="$OPERATOR_TOKEN" BENCH_MATRIX_ORG="$MATRIX_ORG" \
        BENCH_MATRIX_KEY="$MATRIX_KEY" BENCH_MATRIX_PEOPLE_UUIDS="$MATRIX_PEOPLE_UUIDS" \
        BENCH_MATRIX_MESSAGES="$MATRIX_MESSAGES" BENCH_DATABASE_URL="$BENCH_DATABASE_URL" \
        BENCH_MATRIX_DIR="$WORK/matrix" BENCH_SERVER_PIDS="${SERVER_PIDS[*]}" \
        "$SYNAPSE_PYTHON" scripts/bench_matrix.py | tail -n 1)" ||
        die "delivered_matrix failed (Synapse's stderr: $(tail -n 5 "$WORK/matrix/synapse.stderr" 2>/dev/null))"
    log "delivered_matrix: $MATRIX_RESULT"
fi
# The value of NAME=VALUE in the delivered_matrix result line.
matrix_field() { tr ' ' '\n' <<<"$MATRIX_RESULT" | awk -F= -v k="$1" '$1 == k { print $2 }'; }

# webhooks: once, before the rounds (see the top of this file and bench_webhooks.py). The kudos
# are given by members of the demo organization (10 a day each) to its admin.
WEBHOOK_RESULT=""
if [[ $SKIP_WEBHOOKS != 1 ]]; then
    givers=$(((WEBHOOK_KUDOS * WEBHOOK_RUNS + 1 + 9) / 10))
    log "webhooks: keys of $givers kudos givers"
    WEBHOOK_KEYS=""
    for user in $(psql_bench -c "SELECT id FROM users WHERE organization_id = '$ORG' AND role = 'member' ORDER BY id OFFSET $((2 * RESPONDENTS)) LIMIT $givers"); do
        k="$(env "${BENCH_ENV[@]}" "$BIN" admin create-api-key "$user" --name bench-kudos 2>>"$WORK/admin.stderr" |
            grep -oE 'tck_[0-9A-Za-z]{38}' | head -n 1 || true)"
        [[ -n $k ]] || die "teamcomm admin create-api-key gave no key: $(tail -n 5 "$WORK/admin.stderr")"
        WEBHOOK_KEYS+="$k "
    done
    WEBHOOK_RESULT="$(env BENCH_BASE="$BASE" BENCH_KEY="$KEY" BENCH_WEBHOOK_KEYS="$WEBHOOK_KEYS" \
        BENCH_KUDOS_RECEIVER="$ADMIN_UUID" BENCH_DATABASE_URL="$BENCH_DATABASE_URL" \
        BENCH_RECEIVER_BIN="$RECEIVER_BIN" BENCH_SERVER_PIDS="${SERVER_PIDS[*]}" \
        BENCH_WEBHOOK_EVENTS="$WEBHOOK_EVENTS" BENCH_WEBHOOK_KUDOS="$WEBHOOK_KUDOS" \
        BENCH_WEBHOOK_RUNS="$WEBHOOK_RUNS" python3 scripts/bench_webhooks.py | tail -n 1)" ||
        die "the webhooks case failed"
    log "webhooks: $WEBHOOK_RESULT"
fi
# The value of NAME=VALUE in the webhooks result line.
webhook_field() { tr ' ' '\n' <<<"$WEBHOOK_RESULT" | awk -F= -v k="$1" '$1 == k { print $2 }'; }

for round in $(seq 1 "$BENCH_ROUNDS"); do
    log "round $round of $BENCH_ROUNDS"
    bench_round
done

# ------------------------------------------------------------------------------ report

for name in "${CASES[@]}"; do
    [[ -n ${RUNS[$name]} ]] || die "$name: no runs (is it missing from bench_round?)"
    RPS[$name]="$(awk 'NF { print $1 }' <<<"${RUNS[$name]}" | median)"
    P50[$name]="$(awk 'NF { print $2 }' <<<"${RUNS[$name]}" | median)"
    P99[$name]="$(awk 'NF { print $3 }' <<<"${RUNS[$name]}" | median)"
done

pct_of() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }'; }

printf '\nEach round: %s s measured per case (after a %s s warm-up), wrk %s threads, %s connections.\n' \
    "$BENCH_SECONDS" "$WARMUP_SECONDS" "$THREADS" "$CONNECTIONS"
printf '\nreq/s per round:\n'
for name in "${CASES[@]}"; do
    printf '  %-17s %s\n' "$name" "$(awk 'NF { printf "%8.0f", $1 }' <<<"${RUNS[$name]}")"
done

printf '\nMedians over %s round(s):\n' "$BENCH_ROUNDS"
printf '%-17s %10s %9s %9s %9s  %s\n' case 'req/s' 'p50 ms' 'p99 ms' 'vs floor' target
below=0
for name in "${CASES[@]}"; do
    vs_floor="$(pct_of "${RPS[$name]}" "${RPS[floor]}")"
    base=${BASELINE[$name]}
    verdict=""
    if [[ $base != - ]]; then
        pct="$(pct_of "${RPS[$name]}" "${RPS[$base]}")"
        target=${TARGET[$name]}
        if awk -v p="$pct" -v t="$target" 'BEGIN { exit !(p >= t) }'; then
            verdict=">= $target% of $base ($pct%): ok"
        else
            verdict=">= $target% of $base ($pct%): BELOW TARGET"
            below=1
        fi
    fi
    printf '%-17s %10.0f %9s %9s %8s%%  %s\n' "$name" "${RPS[$name]}" "${P50[$name]}" "${P99[$name]}" "$vs_floor" "$verdict"
done

printf '\nGET /v1/me/ reaches %s%% of the floor (target >= %s%%).\n' \
    "$(pct_of "${RPS[me]}" "${RPS[floor]}")" "${TARGET[me]}"
printf 'GET /v1/users/?page_size=25 (%s people), cached, reaches %s%% of the floor (target >= %s%%).\n' \
    "$USERS_TOTAL" "$(pct_of "${RPS[users]}" "${RPS[floor]}")" "${TARGET[users]}"
printf 'The same uncached reaches %s%% of the floor (target >= %s%%); with %s people, %s%% (target >= %s%%).\n' \
    "$(pct_of "${RPS[users_nocache]}" "${RPS[floor]}")" "${TARGET[users_nocache]}" \
    "$BIG_TOTAL" "$(pct_of "${RPS[users_1m_nocache]}" "${RPS[floor]}")" "${TARGET[users_1m_nocache]}"

if [[ -n $MATRIX_RESULT ]]; then
    printf '\ndelivered_matrix (no target, reported): %s messages of one target each, every other one to one of %s people by DM, the rest to one room,\n' \
        "$(matrix_field messages)" "$(matrix_field people)"
    printf '  accepted at %s/s, all delivered to the local Synapse after %s s: %s delivered messages/s.\n' \
        "$(matrix_field queue_rate)" "$(matrix_field seconds)" "$(matrix_field rate)"
    printf '  CPU seconds meanwhile: Synapse %s, both teamcomm servers %s, the whole machine %s (%s cores).\n' \
        "$(matrix_field synapse_cpu)" "$(matrix_field servers_cpu)" "$(matrix_field machine_cpu)" "$(nproc)"
else
    printf '\ndelivered_matrix: skipped (BENCH_SKIP_MATRIX=1).\n'
fi

if [[ -n $WEBHOOK_RESULT ]]; then
    rate="$(webhook_field rate)"
    verdict="$(awk -v r="$rate" 'BEGIN { print (r >= 2000 ? "ok" : "BELOW TARGET") }')"
    [[ $verdict == ok ]] || below=1
    printf '\nwebhooks (target >= 2,000 deliveries/s): %s events a round, %s round(s), both servers delivering to one local receiver:\n' \
        "$(webhook_field events)" "$(webhook_field runs)"
    printf '  %s deliveries/s from the first arrival to the last (rounds: %s): %s;\n' "$rate" "$(webhook_field rate_runs)" "$verdict"
    printf '  %s/s from the outbox insert to the last arrival, relay included (rounds: %s).\n' \
        "$(webhook_field e2e_rate)" "$(webhook_field e2e_runs)"
    printf '  kudos posted to its webhook arrived (%s kudos a round): p50 %s ms, p99 %s ms (rounds: p50 %s, p99 %s; max %s ms).\n' \
        "$(webhook_field kudos)" "$(webhook_field p50_ms)" "$(webhook_field p99_ms)" \
        "$(webhook_field p50_runs)" "$(webhook_field p99_runs)" "$(webhook_field max_ms)"
    printf '  signatures checked %s (bad %s), duplicate arrivals %s.\n' \
        "$(webhook_field verified)" "$(webhook_field bad_signatures)" "$(webhook_field duplicates)"
    printf '  CPU seconds over the throughput rounds (%s s): both servers %s, PostgreSQL %s, receiver %s, whole machine %s (%s cores).\n' \
        "$(webhook_field seconds)" "$(webhook_field servers_cpu)" "$(webhook_field postgres_cpu)" \
        "$(webhook_field receiver_cpu)" "$(webhook_field machine_cpu)" "$(nproc)"
else
    printf '\nwebhooks: skipped (BENCH_SKIP_WEBHOOKS=1).\n'
fi

if [[ $below == 1 && ${BENCH_ENFORCE:-0} == 1 ]]; then
    exit 1
fi
