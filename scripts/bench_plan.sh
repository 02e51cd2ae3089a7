#!/usr/bin/env bash
# `make bench-plan`: the Plan (Beta) area against the stack's floors (issue 11 §4).
#
# Same method as scripts/bench.sh: a fresh database, `teamcomm serve --demo` with
# TEAMCOMM_BENCH_FLOOR=true (GET /bench/floor/?org= is one indexed single-row read, POST
# /bench/insert/ one bare single-row insert, both through the same pool and repository layer
# as the API), wrk in interleaved rounds; a case's verdict is the median over rounds of its
# answers/s as a percentage of its floor's in the same round (the ratio of the two medians is
# shown beside it).
#
# Set-up: the demo organization gets the Plan beta through the operator API; a project and
# boards are created through the API (POST /v1/plan/projects/, POST /v1/plan/boards/); the
# board PAGE gets BENCH_PLAN_TASKS tasks and the board BIG BENCH_PLAN_BIG_TASKS tasks, each in
# one SQL statement (numbers 1..N, rank increasing, all in the board's default column), then
# VACUUM ANALYZE (a table at rest, as autovacuum leaves it).
#
# Cases:
#   floor                    GET /bench/floor/?org=
#   plan_tasks_page          GET /v1/plan/tasks/?board=<PAGE uuid>&page_size=25 (target >= 50% of floor)
#   plan_tasks_page_1m       the same on BIG (target >= 50% of floor, and flat: at least
#                            BENCH_PLAN_FLAT_PCT% of plan_tasks_page)
#   insert_floor             POST /bench/insert/?org=
#   plan_task_create         POST /v1/plan/tasks/ {"title", "board", "state"} spread over
#                            BENCH_PLAN_CREATE_BOARDS boards (target >= 50% of insert_floor), into
#                            their columns in turn. Each create takes its board's row lock for the
#                            task's number (KEY-n without gaps), so creates on one board queue behind
#                            each other; spreading them is what many teams do. Every run (each case
#                            of each round) gets boards of its own, made just before it: a column
#                            holds at most 5,000 live tasks (column_too_large), which one run on
#                            reused boards would reach.
#   plan_task_create_1board  the same, every create on one board (reported, no target)
#   plan_delta               once, after the rounds (scripts/bench_plan_delta.py): BENCH_PLAN_DELTA_WRITERS
#                            writers PATCH tasks of PAGE (title and version) at BENCH_PLAN_DELTA_RATE
#                            changes per minute, spread evenly, for BENCH_PLAN_DELTA_SECONDS, while a
#                            poller follows GET /v1/plan/boards/<PAGE>/delta/?updated_since=<cursor>
#                            from the snapshot's delta_cursor (GET boards/<PAGE>/board/), every
#                            BENCH_PLAN_DELTA_POLL seconds. Reports delta p50/p99, write p50/p99 and
#                            how long a change took to appear; fails if any change written is never
#                            seen by the poller (each change is to a task no other change touches,
#                            so every (task, version) written must come back exactly).
#
# Small machines are noisy, so the wrk cases run interleaved for BENCH_ROUNDS rounds and the
# report gives the median req/s, p50 and p99 of each, and each case's percentage of its floor
# round by round. Each round ends by settling the database
# (VACUUM ANALYZE of the tables its writes grew, CHECKPOINT), so every round starts at rest. Every Plan rate limit (per minute) and
# every hourly one is 1,000,000,000, so wrk never meets a 429.
#
# Needs: cargo, PostgreSQL 13+ at 127.0.0.1:5432 as user `postgres` (psql), curl, python3.
# Installs wrk with apt-get if it is missing.
#
# Environment:
#   BENCH_SECONDS              measured seconds per case and round (default 10; plus a 3 s warm-up)
#   BENCH_ROUNDS               interleaved rounds (default 3)
#   BENCH_ENFORCE=1            exit 1 when a case is below its target (default: report only)
#   BENCH_SKIP_BUILD=1         use the release binary already built
#   BENCH_BIN                  binary to run (default: the release build)
#   BENCH_PLAN_TASKS           tasks on PAGE (default 100000)
#   BENCH_PLAN_BIG_TASKS       tasks on BIG (default 1000000)
#   BENCH_PLAN_FLAT_PCT        plan_tasks_page_1m must reach this % of plan_tasks_page (default 80)
#   BENCH_PLAN_CREATE_BOARDS   boards plan_task_create spreads over (default 8)
#   BENCH_PLAN_SKIP_DELTA=1    skip plan_delta
#   BENCH_PLAN_DELTA_RATE      changes per minute (default 1200; the target is 1,000)
#   BENCH_PLAN_DELTA_SECONDS   how long the writers write (default 60)
#   BENCH_PLAN_DELTA_WRITERS   concurrent writers (default 8)
#   BENCH_PLAN_DELTA_POLL      seconds between two polls (default 1)
#   BENCH_PLAN_CALLGRIND=1     instead of the wrk rounds: the server's instructions per request
#                              of floor and the two page cases, by callgrind (see "instructions")
#   BENCH_PLAN_CALLGRIND_REQUESTS  requests per case under callgrind (default 400)
#   CARGO_TARGET_DIR           default $HOME/.cache/teamcomm-target
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/teamcomm-target}"
BENCH_SECONDS="${BENCH_SECONDS:-10}"
BENCH_ROUNDS="${BENCH_ROUNDS:-3}"
PAGE_TASKS="${BENCH_PLAN_TASKS:-100000}"
BIG_TASKS="${BENCH_PLAN_BIG_TASKS:-1000000}"
FLAT_PCT="${BENCH_PLAN_FLAT_PCT:-80}"
CREATE_BOARDS="${BENCH_PLAN_CREATE_BOARDS:-8}"
SKIP_DELTA="${BENCH_PLAN_SKIP_DELTA:-0}"
DELTA_RATE="${BENCH_PLAN_DELTA_RATE:-1200}"
DELTA_SECONDS="${BENCH_PLAN_DELTA_SECONDS:-60}"
DELTA_WRITERS="${BENCH_PLAN_DELTA_WRITERS:-8}"
DELTA_POLL="${BENCH_PLAN_DELTA_POLL:-1}"
for v in BENCH_SECONDS BENCH_ROUNDS PAGE_TASKS BIG_TASKS FLAT_PCT CREATE_BOARDS DELTA_RATE DELTA_SECONDS DELTA_WRITERS; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench-plan: $v must be a positive whole number" >&2; exit 1; }
done
[[ $DELTA_POLL =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench-plan: BENCH_PLAN_DELTA_POLL must be a number of seconds" >&2; exit 1; }
# Board keys CAA..CZZ: one board for the check, and CREATE_BOARDS + 1 per round.
[[ $(((CREATE_BOARDS + 1) * BENCH_ROUNDS + 1)) -le 676 ]] ||
    { echo "bench-plan: (BENCH_PLAN_CREATE_BOARDS + 1) * BENCH_ROUNDS must be at most 675" >&2; exit 1; }
WARMUP_SECONDS=3
THREADS=2
CONNECTIONS=64
# wrk's request timeout: long, so a slow case is measured (slowly) rather than reported as 0 req/s
# with every request a timeout.
WRK_TIMEOUT=30s

LISTEN=127.0.0.1:18090
BASE="http://$LISTEN"
PG_HOST=127.0.0.1
PG_PORT=5432
PG_USER=postgres
DB_NAME=teamcomm_bench_plan
BENCH_DATABASE_URL="postgres://$PG_USER@$PG_HOST:$PG_PORT/$DB_NAME"
BIN="${BENCH_BIN:-$CARGO_TARGET_DIR/release/teamcomm}"
# Every rate-limit budget of the bench server: far above what wrk can send.
RATE_LIMIT=1000000000

log() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'bench-plan: %s\n' "$*" >&2
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

# ------------------------------------------------------------------------------ build

if [[ ${BENCH_SKIP_BUILD:-0} != 1 ]]; then
    log "building release binary (target dir $CARGO_TARGET_DIR)"
    cargo build --release -p teamcomm-api
fi
[[ -x $BIN ]] || die "no binary at $BIN"

# ------------------------------------------------------------------------------ database

if curl -s -o /dev/null --max-time 2 "$BASE/healthz"; then
    die "something already answers on $LISTEN; stop it first"
fi

psql_bench() {
    PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$DB_NAME" -v ON_ERROR_STOP=1 -qAt "$@"
}

log "creating a fresh database $DB_NAME"
PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -v ON_ERROR_STOP=1 -q \
    -c "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" \
    -c "CREATE DATABASE $DB_NAME" >/dev/null

# ------------------------------------------------------------------------------ server

WORK="$(mktemp -d "${TMPDIR:-/tmp}/teamcomm-bench-plan.XXXXXX")"
SERVER_PID=""

cleanup() {
    local status=$?
    if [[ -n ${CG_PID:-} ]] && kill -0 "$CG_PID" 2>/dev/null; then
        kill -TERM "$CG_PID" 2>/dev/null || true
    fi
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ $status -ne 0 && -s $WORK/server.stderr ]]; then
        printf '\n--- server.stderr (last 30 lines) ---\n' >&2
        tail -n 30 "$WORK/server.stderr" >&2 || true
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LIMITS=()
for scope in READS WRITES MESSAGING EMAIL INVITATIONS WORKFLOW_TRIGGERS AGENT AUTH; do
    LIMITS+=("TEAMCOMM_RATE_LIMIT_PER_HOUR_$scope=$RATE_LIMIT")
done
for scope in READS WRITES BULK DELTA; do
    LIMITS+=("TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_$scope=$RATE_LIMIT")
done
OPERATOR_TOKEN="$(python3 -c 'import secrets; print(secrets.token_hex(24))')"

# The bench server's settings (the callgrind mode starts a second server with them).
SERVER_ENV=(env -u TEAMCOMM_TLS_CERT -u TEAMCOMM_TLS_KEY -u TEAMCOMM_BASE_URL -u TEAMCOMM_TEST_CLI_VENV
    -u TEAMCOMM_RATE_LIMIT_ENTERPRISE_MULTIPLIER
    DATABASE_URL="$BENCH_DATABASE_URL" TEAMCOMM_OPERATOR_TOKEN="$OPERATOR_TOKEN"
    TEAMCOMM_BENCH_FLOOR=true "${LIMITS[@]}" RUST_LOG=warn)

# wait_ready PID ADDRESS SECONDS STDERR: until the server answers /readyz, or dies naming why.
wait_ready() {
    local deadline=$((SECONDS + $3))
    while ((SECONDS < deadline)); do
        kill -0 "$1" 2>/dev/null || die "the server on $2 exited during start: $(tail -n 5 "$4")"
        curl -sf -o /dev/null --max-time 2 "http://$2/readyz" && return 0
        sleep 0.1
    done
    die "the server did not become ready on $2"
}

log "starting $BIN serve --demo on $LISTEN"
"${SERVER_ENV[@]}" TEAMCOMM_LISTEN="$LISTEN" \
    "$BIN" serve --demo >"$WORK/server.stdout" 2>"$WORK/server.stderr" &
SERVER_PID=$!
wait_ready "$SERVER_PID" "$LISTEN" 60 "$WORK/server.stderr" # the first start applies migrations

KEY="$(grep -E '^[[:space:]]*tck_[0-9A-Za-z]{38}[[:space:]]*$' "$WORK/server.stdout" | head -n 1 | tr -d '[:space:]' || true)"
[[ -n $KEY ]] || die "no demo API key in the server's output (was the database really empty?)"

json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# api METHOD PATH [JSON]: a call with the demo admin's key; prints the body, fails unless 2xx.
api() {
    local body=() code
    [[ -z ${3:-} ]] || body=(-H 'Content-Type: application/json' -d "$3")
    code="$(curl -s -o "$WORK/api.json" -w '%{http_code}' -X "$1" -H "X-API-KEY: $KEY" \
        "${body[@]+"${body[@]}"}" "$BASE$2")"
    [[ $code == 2* ]] || die "$1 $2 answered $code: $(head -c 400 "$WORK/api.json")"
    cat "$WORK/api.json"
}

ORG="$(api GET /v1/me/ | json_field organization_uuid)"
log "demo organization $ORG; turning the Plan beta on"
code="$(curl -s -o "$WORK/operator.json" -w '%{http_code}' -X PATCH -H "Authorization: Bearer $OPERATOR_TOKEN" \
    -H 'Content-Type: application/json' -d '{"plan_beta": true}' "$BASE/operator/v1/organizations/$ORG/")"
[[ $code == 2* ]] || die "PATCH /operator/v1/organizations/$ORG/ answered $code: $(head -c 400 "$WORK/operator.json")"

policy="$(curl -s -o /dev/null -D - -H "X-API-KEY: $KEY" "$BASE/v1/plan/projects/" | tr -d '\r' |
    awk -F': ' 'tolower($1) == "ratelimit-policy" { print $2 }' || true)"
[[ $policy == *"q=$RATE_LIMIT;"* ]] ||
    die "the server did not take the bench's Plan rate limits (RateLimit-Policy: ${policy:-absent})"

# ------------------------------------------------------------------------------ seeding

PROJECT="$(api POST /v1/plan/projects/ '{"name": "Bench"}' | json_field uuid)"
# new_board KEY: creates a board of the project; prints its uuid.
new_board() { api POST /v1/plan/boards/ "{\"name\": \"Bench $1\", \"project\": \"$PROJECT\", \"key\": \"$1\"}" | json_field uuid; }
# default_state KEY: the board's default column (where a task without `state` goes).
default_state() {
    api GET "/v1/plan/boards/$1/states/" | python3 -c '
import json, sys
body = json.load(sys.stdin)
states = body["results"] if isinstance(body, dict) else body
print(next(s["uuid"] for s in states if s.get("is_default")))'
}

# seed KEY BOARD_UUID N: N tasks on the board in one statement, its next number after them.
seed() {
    local key=$1 board=$2 n=$3 state
    state="$(default_state "$key")"
    log "seeding $n tasks on $key"
    psql_bench \
        -c "INSERT INTO plan_tasks (id, organization_id, board_id, number, state_id, title, rank, created_at, updated_at)
            SELECT gen_random_uuid(), '$ORG', '$board', g, '$state', format('Bench task %s', g),
                   g * 1024, now() - interval '1 day', now() - interval '1 day'
            FROM generate_series(1, $n) AS g" \
        -c "UPDATE plan_boards SET next_task_number = $n + 1 WHERE id = '$board'" >/dev/null
}

PAGE_BOARD="$(new_board PAGE)"
BIG_BOARD="$(new_board BIG)"
seed PAGE "$PAGE_BOARD" "$PAGE_TASKS"
seed BIG "$BIG_BOARD" "$BIG_TASKS"
psql_bench -c "VACUUM ANALYZE plan_tasks" -c "ANALYZE plan_boards" -c "ANALYZE plan_states" >/dev/null

for pair in "$PAGE_BOARD $PAGE_TASKS" "$BIG_BOARD $BIG_TASKS"; do
    read -r board n <<<"$pair"
    count="$(api GET "/v1/plan/tasks/?board=$board&page_size=1" | json_field count)"
    [[ $count == "$n" ]] || die "GET /v1/plan/tasks/?board=$board counts $count tasks, expected $n"
done

# The create cases' requests: fresh boards for each run (a column holds at most 5,000 live
# tasks, column_too_large; a run creates more than that on one board), each create into the
# boards' columns in turn, column by column across the boards (two creates in a row go to two
# boards when there are several).
CREATED_BOARDS=0
LETTERS=ABCDEFGHIJKLMNOPQRSTUVWXYZ
# create_script FILE N: N new boards (keys CAA, CAB, ...) and FILE, the wrk script creating on them.
create_script() {
    local file=$1 n=$2 i k pairs=()
    local keys=()
    for i in $(seq 1 "$n"); do
        k="C${LETTERS:CREATED_BOARDS/26:1}${LETTERS:CREATED_BOARDS%26:1}"
        CREATED_BOARDS=$((CREATED_BOARDS + 1))
        new_board "$k" >/dev/null
        keys+=("$k")
    done
    while read -r pair; do pairs+=("$pair"); done < <(
        for k in "${keys[@]}"; do
            api GET "/v1/plan/boards/$k/states/" | python3 -c '
import json, sys
body = json.load(sys.stdin)
states = body["results"] if isinstance(body, dict) else body
for i, s in enumerate(states):
    print(i, sys.argv[1], s["uuid"])' "$k"
        done | sort -s -n -k1,1 | awk '{ print $2 " " $3 }'
    )
    {
        printf -- '-- Generated by scripts/bench_plan.sh.\n'
        printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
        printf 'local targets = {'
        for pair in "${pairs[@]}"; do
            read -r k state <<<"$pair"
            printf '{"%s", "%s"}, ' "$k" "$state"
        done
        printf '}\n'
        cat <<'LUA'
local sent = 0
function request()
  sent = sent + 1
  local t = targets[(sent % #targets) + 1]
  local body = '{"title": "Bench task ' .. sent .. '", "board": "' .. t[1] .. '", "state": "' .. t[2] .. '"}'
  return wrk.format(nil, nil, nil, body)
end
LUA
    } >"$file"
    LAST_CREATE_KEY=${keys[0]}
}
printf 'wrk.method = "POST"\n' >"$WORK/insert.lua"
create_script "$WORK/check.lua" 1
api POST /v1/plan/tasks/ "{\"title\": \"Bench check\", \"board\": \"$LAST_CREATE_KEY\"}" >/dev/null
SOLO_KEY=$LAST_CREATE_KEY

# ------------------------------------------------------------------------------ instructions

# BENCH_PLAN_CALLGRIND=1: instead of the wrk rounds, the server's instructions per request of
# the read cases, counted by callgrind (repeatable whatever else the machine does; PostgreSQL is
# not counted). A second server of the same binary runs under valgrind on the seeded database;
# each case: 20 requests to warm up, counters zeroed, BENCH_PLAN_CALLGRIND_REQUESTS requests one
# after the other on one connection, a dump.
if [[ ${BENCH_PLAN_CALLGRIND:-0} == 1 ]]; then
    command -v valgrind >/dev/null || die "BENCH_PLAN_CALLGRIND=1 needs valgrind (apt-get install valgrind)"
    CG_REQUESTS="${BENCH_PLAN_CALLGRIND_REQUESTS:-400}"
    CG_LISTEN=127.0.0.1:18091
    log "callgrind: a second server on $CG_LISTEN under valgrind"
    "${SERVER_ENV[@]}" TEAMCOMM_LISTEN="$CG_LISTEN" \
        TEAMCOMM_JWT_SECRET="$(python3 -c 'import secrets; print(secrets.token_hex(32))')" \
        valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/callgrind.out" \
        "$BIN" serve >"$WORK/callgrind.stdout" 2>"$WORK/callgrind.stderr" &
    CG_PID=$!
    wait_ready "$CG_PID" "$CG_LISTEN" 600 "$WORK/callgrind.stderr"
    # requests PATH N [KEY]: N GETs one after the other on one connection; fails unless all 200.
    requests() {
        python3 - "$CG_LISTEN" "$1" "$2" "${3:-}" <<'PY'
import http.client, sys
host, port = sys.argv[1].rsplit(":", 1)
path, n, key = sys.argv[2], int(sys.argv[3]), sys.argv[4]
conn = http.client.HTTPConnection(host, int(port), timeout=600)
for _ in range(n):
    conn.request("GET", path, headers={"X-API-KEY": key} if key else {})
    answer = conn.getresponse()
    body = answer.read()
    if answer.status != 200:
        sys.exit(f"GET {path} answered {answer.status}: {body[:200]!r}")
PY
    }
    CG_PATHS=("floor /bench/floor/?org=$ORG -"
        "plan_tasks_page /v1/plan/tasks/?board=$PAGE_BOARD&page_size=25 $KEY"
        "plan_tasks_page_1m /v1/plan/tasks/?board=$BIG_BOARD&page_size=25 $KEY")
    for entry in "${CG_PATHS[@]}"; do
        read -r name path key <<<"$entry"
        requests "$path" 30 "${key#-}"
    done
    callgrind_control -i on "$CG_PID" >/dev/null 2>&1
    for entry in "${CG_PATHS[@]}"; do
        read -r name path key <<<"$entry"
        requests "$path" 20 "${key#-}"
        callgrind_control -z "$CG_PID" >/dev/null 2>&1
        requests "$path" "$CG_REQUESTS" "${key#-}"
        callgrind_control -d "$name" "$CG_PID" >/dev/null 2>&1
    done
    kill -TERM "$CG_PID" 2>/dev/null || true
    wait "$CG_PID" 2>/dev/null || true
    printf '\nServer instructions per request (callgrind, %s requests a case, one at a time):\n' "$CG_REQUESTS"
    for dump in "$WORK"/callgrind.out.*; do
        name="$(awk '/^desc: Trigger: /{ print $NF; exit }' "$dump")"
        total="$(awk '/^(summary|totals):/{ print $2; exit }' "$dump")"
        [[ -n $total ]] || continue
        printf '  %-24s %12d\n' "$name" "$((total / CG_REQUESTS))"
    done
    exit 0
fi

# ------------------------------------------------------------------------------ measuring

# A wrk latency ("850.00us", "1.23ms", "1.02s") in milliseconds.
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
declare -A RUNS=() TARGET=() BASELINE=() RPS=() P50=() P99=() FAILED=()

median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "0"; exit }
        if (NR % 2) { printf "%.2f\n", v[(NR + 1) / 2] }
        else { printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }
    }'
}

# define_case NAME BASELINE TARGET_PCT ("-" for no target)
define_case() {
    CASES+=("$1")
    BASELINE[$1]=$2
    TARGET[$1]=$3
    RUNS[$1]=""
}

# wait_idle: until no query of the server runs, so a slow case's backlog (statements still
# running after wrk hung up) is not charged to the next one.
wait_idle() {
    local _ n
    for _ in $(seq 1 600); do
        n="$(psql_bench -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB_NAME'
                            AND backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()")"
        [[ $n == 0 ]] && return 0
        sleep 0.2
    done
    log "warning: queries still running after 120 s"
}

# settle: the tables the write cases grew vacuumed and analysed, and a checkpoint, so the next
# round's cases run on a database at rest (as the seeding leaves it) and no autovacuum or
# checkpoint the writes set off lands in one of them: without it the page cases fell round
# after round (56%, 48%, 40% of the floor) as a round's creates left more work behind.
settle() {
    log "settling: VACUUM ANALYZE of the written tables, CHECKPOINT"
    psql_bench -c "VACUUM ANALYZE plan_tasks, plan_task_events, plan_column_task_counts, plan_boards, report_channels" \
        -c "CHECKPOINT" >/dev/null
}

# run_case NAME URL [HEADER] [SCRIPT]: a warm-up, then BENCH_SECONDS of wrk, each after the
# database is idle; appends "req/s p50_ms p99_ms" to the case's runs. Without SCRIPT, a GET
# checked once with curl first.
run_case() {
    local name=$1 url=$2 header=${3:-} script=${4:-}
    local hdr=() scr=()
    [[ -z $header ]] || hdr=(-H "$header")
    if [[ -n $script ]]; then
        scr=(-s "$script")
    else
        local code
        code="$(curl -s -o "$WORK/check-$name.json" -w '%{http_code}' "${hdr[@]+"${hdr[@]}"}" "$url")"
        [[ $code == 200 ]] || die "$name: $url answered $code: $(head -c 300 "$WORK/check-$name.json")"
    fi
    local wrk_args=(-t"$THREADS" -c"$CONNECTIONS" --timeout "$WRK_TIMEOUT" --latency "${hdr[@]+"${hdr[@]}"}" "${scr[@]+"${scr[@]}"}")
    wait_idle
    log "$name: warm-up ${WARMUP_SECONDS}s"
    wrk "${wrk_args[@]}" -d"${WARMUP_SECONDS}s" "$url" >/dev/null
    wait_idle
    log "$name: measuring ${BENCH_SECONDS}s ($THREADS threads, $CONNECTIONS connections)"
    local out
    out="$(wrk "${wrk_args[@]}" -d"${BENCH_SECONDS}s" "$url")"
    if grep -q 'Socket errors' <<<"$out"; then
        log "$name: warning: $(grep 'Socket errors' <<<"$out" | sed 's/^ *//')"
    fi
    # Only 2xx answers count: a case that answers errors under load (a 503 when the pool's
    # checkout times out) is reported with them and fails its target.
    local requests seconds failed rps p50 p99
    requests="$(awk '$2 == "requests" && $3 == "in" { print $1 }' <<<"$out")"
    seconds="$(awk '$2 == "requests" && $3 == "in" { sub(/s,?$/, "", $4); print $4 }' <<<"$out")"
    failed="$(awk -F': *' '/Non-2xx or 3xx responses/ { print $2 }' <<<"$out")"
    failed="${failed:-0}"
    [[ -n $requests && -n $seconds ]] || die "$name: could not read the request count from wrk"
    rps="$(awk -v n="$requests" -v f="$failed" -v s="$seconds" 'BEGIN { printf "%.2f", (n - f) / s }')"
    p50="$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_ms)"
    p99="$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_ms)"
    if [[ $failed != 0 ]]; then
        log "$name: warning: $failed of $requests answers were not 2xx"
        FAILED[$name]=$((${FAILED[$name]:-0} + failed))
    fi
    log "$name: $rps 2xx/s, p50 $p50 ms, p99 $p99 ms"
    RUNS[$name]+="$rps ${p50:-0} ${p99:-0}"$'\n'
}

define_case floor - -
define_case plan_tasks_page floor 50
define_case plan_tasks_page_1m floor 50
define_case insert_floor - -
define_case plan_task_create insert_floor 50
define_case plan_task_create_1board - -

bench_round() {
    run_case floor "$BASE/bench/floor/?org=$ORG"
    run_case plan_tasks_page "$BASE/v1/plan/tasks/?board=$PAGE_BOARD&page_size=25" "X-API-KEY: $KEY"
    run_case plan_tasks_page_1m "$BASE/v1/plan/tasks/?board=$BIG_BOARD&page_size=25" "X-API-KEY: $KEY"
    run_case insert_floor "$BASE/bench/insert/?org=$ORG" "" "$WORK/insert.lua"
    create_script "$WORK/create.lua" "$CREATE_BOARDS"
    run_case plan_task_create "$BASE/v1/plan/tasks/" "X-API-KEY: $KEY" "$WORK/create.lua"
    create_script "$WORK/create1.lua" 1
    run_case plan_task_create_1board "$BASE/v1/plan/tasks/" "X-API-KEY: $KEY" "$WORK/create1.lua"
    settle
}

# One request at a time (median of 5, curl's total time): what a case costs without queueing
# behind the other 63 connections.
solo_ms() { # solo_ms METHOD URL [HEADER] [BODY]
    local i hdr=() body=()
    [[ -z ${3:-} ]] || hdr=(-H "$3")
    [[ -z ${4:-} ]] || body=(-H 'Content-Type: application/json' -d "$4")
    for i in 1 2 3 4 5; do
        curl -s -o /dev/null -w '%{time_total}\n' -X "$1" "${hdr[@]+"${hdr[@]}"}" "${body[@]+"${body[@]}"}" "$2"
    done | awk '{ print $1 * 1000 }' | median
}
wait_idle
SOLO="floor $(solo_ms GET "$BASE/bench/floor/?org=$ORG") ms"
SOLO+=", plan_tasks_page $(solo_ms GET "$BASE/v1/plan/tasks/?board=$PAGE_BOARD&page_size=25" "X-API-KEY: $KEY") ms"
SOLO+=", plan_tasks_page_1m $(solo_ms GET "$BASE/v1/plan/tasks/?board=$BIG_BOARD&page_size=25" "X-API-KEY: $KEY") ms"
SOLO+=", insert_floor $(solo_ms POST "$BASE/bench/insert/?org=$ORG") ms"
SOLO+=", plan_task_create $(solo_ms POST "$BASE/v1/plan/tasks/" "X-API-KEY: $KEY" "{\"title\": \"Solo\", \"board\": \"$SOLO_KEY\"}") ms"
log "one request at a time: $SOLO"

for round in $(seq 1 "$BENCH_ROUNDS"); do
    log "round $round of $BENCH_ROUNDS"
    bench_round
done

# plan_delta: once, after the rounds, so its writes disturb none of them.
DELTA_RESULT=""
if [[ $SKIP_DELTA != 1 ]]; then
    log "plan_delta: $DELTA_WRITERS writers, $DELTA_RATE changes a minute for ${DELTA_SECONDS}s, one poller every ${DELTA_POLL}s"
    DELTA_RESULT="$(env BENCH_BASE="$BASE" BENCH_KEY="$KEY" BENCH_BOARD=PAGE BENCH_BOARD_TASKS="$PAGE_TASKS" \
        BENCH_DELTA_RATE="$DELTA_RATE" BENCH_DELTA_SECONDS="$DELTA_SECONDS" \
        BENCH_DELTA_WRITERS="$DELTA_WRITERS" BENCH_DELTA_POLL="$DELTA_POLL" \
        python3 scripts/bench_plan_delta.py | tail -n 1)" || die "plan_delta failed (see above)"
    log "plan_delta: $DELTA_RESULT"
fi
delta_field() { tr ' ' '\n' <<<"$DELTA_RESULT" | awk -F= -v k="$1" '$1 == k { print $2 }'; }

# ------------------------------------------------------------------------------ report

for name in "${CASES[@]}"; do
    [[ -n ${RUNS[$name]} ]] || die "$name: no runs"
    RPS[$name]="$(awk 'NF { print $1 }' <<<"${RUNS[$name]}" | median)"
    P50[$name]="$(awk 'NF { print $2 }' <<<"${RUNS[$name]}" | median)"
    P99[$name]="$(awk 'NF { print $3 }' <<<"${RUNS[$name]}" | median)"
done

pct_of() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? 100 * a / b : 0) }'; }

printf '\nEach round: %s s measured per case (after a %s s warm-up), wrk %s threads, %s connections, timeout %s.\n' \
    "$BENCH_SECONDS" "$WARMUP_SECONDS" "$THREADS" "$CONNECTIONS" "$WRK_TIMEOUT"
printf 'Boards: PAGE %s tasks, BIG %s tasks; creates spread over %s boards.\n' "$PAGE_TASKS" "$BIG_TASKS" "$CREATE_BOARDS"
printf '\n2xx answers/s per round:\n'
for name in "${CASES[@]}"; do
    printf '  %-24s %s\n' "$name" "$(awk 'NF { printf "%8.0f", $1 }' <<<"${RUNS[$name]}")"
done

# paired_pct NAME BASE: the median over rounds of NAME's 2xx/s as a percentage of BASE's in
# the same round. A round's cases run within a minute of each other, so the machine's drift
# over a run (the floor itself moved from 12,542 to 18,165 answers/s between rounds of one run)
# cancels out; the ratio of the two medians (shown beside it) pairs numbers from different
# rounds.
paired_pct() {
    paste -d' ' <(awk 'NF { print $1 }' <<<"${RUNS[$1]}") <(awk 'NF { print $1 }' <<<"${RUNS[$2]}") |
        awk '{ printf "%.2f\n", ($2 > 0 ? 100 * $1 / $2 : 0) }' | median
}

printf '\nPer round, as a percentage of its baseline in the same round:\n'
for name in "${CASES[@]}"; do
    base=${BASELINE[$name]}
    [[ $base != - ]] || continue
    printf '  %-24s %s  (of %s)\n' "$name" "$(paste -d' ' <(awk 'NF { print $1 }' <<<"${RUNS[$name]}") \
        <(awk 'NF { print $1 }' <<<"${RUNS[$base]}") | awk '{ printf "%7.1f%%", ($2 > 0 ? 100 * $1 / $2 : 0) }')" "$base"
done

printf '\nMedians over %s round(s); the verdict is on the median of the paired (same-round) percentages:\n' "$BENCH_ROUNDS"
printf '%-24s %10s %9s %9s %9s %9s %9s  %s\n' case '2xx/s' 'p50 ms' 'p99 ms' 'vs floor' 'vs insert' 'paired' target
below=0
for name in "${CASES[@]}"; do
    base=${BASELINE[$name]}
    verdict=""
    paired=-
    [[ $base != - || ${FAILED[$name]:-0} == 0 ]] || verdict="${FAILED[$name]} answers not 2xx"
    if [[ $base != - ]]; then
        pct="$(paired_pct "$name" "$base")"
        paired="$pct%"
        target=${TARGET[$name]}
        if [[ ${FAILED[$name]:-0} != 0 ]]; then
            verdict=">= $target% of $base ($pct%): BELOW TARGET, ${FAILED[$name]} answers not 2xx"
            below=1
        elif awk -v p="$pct" -v t="$target" 'BEGIN { exit !(p >= t) }'; then
            verdict=">= $target% of $base ($pct%): ok"
        else
            verdict=">= $target% of $base ($pct%): BELOW TARGET"
            below=1
        fi
    fi
    printf '%-24s %10.0f %9s %9s %8s%% %8s%% %9s  %s\n' "$name" "${RPS[$name]}" "${P50[$name]}" "${P99[$name]}" \
        "$(pct_of "${RPS[$name]}" "${RPS[floor]}")" "$(pct_of "${RPS[$name]}" "${RPS[insert_floor]}")" "$paired" "$verdict"
done

flat="$(paired_pct plan_tasks_page_1m plan_tasks_page)"
if awk -v p="$flat" -v t="$FLAT_PCT" 'BEGIN { exit !(p >= t) }'; then
    verdict=ok
else
    verdict="NOT FLAT"
    below=1
fi
printf '\nA page of 25 on %s tasks runs at %s%% of the page on %s (flat: >= %s%%): %s.\n' \
    "$BIG_TASKS" "$flat" "$PAGE_TASKS" "$FLAT_PCT" "$verdict"
printf 'One request at a time (median of 5): %s.\n' "$SOLO"
printf 'POST /v1/plan/tasks/ on one board: %s%% of insert_floor; over %s boards: %s%%.\n' \
    "$(pct_of "${RPS[plan_task_create_1board]}" "${RPS[insert_floor]}")" "$CREATE_BOARDS" \
    "$(pct_of "${RPS[plan_task_create]}" "${RPS[insert_floor]}")"

if [[ -n $DELTA_RESULT ]]; then
    rate="$(delta_field rate_per_minute)"
    verdict="$(awk -v r="$rate" 'BEGIN { print (r >= 1000 ? "ok" : "BELOW TARGET (fewer than 1,000 changes a minute were written)") }')"
    [[ $verdict == ok ]] || below=1
    printf '\nplan_delta: %s changes by %s writers in %s s (%s a minute: %s), polled every %s s:\n' \
        "$(delta_field written)" "$(delta_field writers)" "$(delta_field seconds)" "$rate" "$verdict" "$(delta_field poll_seconds)"
    printf '  every change seen by the poller: %s of %s (duplicates %s); %s polls.\n' \
        "$(delta_field seen)" "$(delta_field written)" "$(delta_field duplicates)" "$(delta_field polls)"
    printf '  GET boards/<b>/delta/: p50 %s ms, p99 %s ms, max %s ms; largest answer %s tasks.\n' \
        "$(delta_field delta_p50_ms)" "$(delta_field delta_p99_ms)" "$(delta_field delta_max_ms)" "$(delta_field max_batch)"
    printf '  PATCH tasks/<t>/: p50 %s ms, p99 %s ms.\n' "$(delta_field write_p50_ms)" "$(delta_field write_p99_ms)"
    printf '  write answered to seen by the poller: p50 %s ms, p99 %s ms (the cursor lags the clock by 2 s, truncated to the second).\n' \
        "$(delta_field seen_p50_ms)" "$(delta_field seen_p99_ms)"
else
    printf '\nplan_delta: skipped (BENCH_PLAN_SKIP_DELTA=1).\n'
fi

if [[ $below == 1 && ${BENCH_ENFORCE:-0} == 1 ]]; then
    exit 1
fi
