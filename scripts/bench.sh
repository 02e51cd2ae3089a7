#!/usr/bin/env bash
# `make bench`: throughput and latency of real endpoints against the stack's floor.
#
# The floor is GET /bench/floor/?org=<uuid> (served only with TEAMCOMM_BENCH_FLOOR=true): one
# indexed single-row read through the same pool and repository layer as the API, without
# authentication. Each case is reported as a percentage of the floor's requests/sec, so the
# number says what the endpoint's own work costs, independent of the machine.
#
# Needs: cargo, PostgreSQL reachable at 127.0.0.1:5432 as user `postgres` (psql), curl, python3.
# Installs wrk with apt-get if it is missing.
#
# Environment:
#   BENCH_SECONDS      measured seconds per case (default 10; each case also gets a 3 s warm-up)
#   BENCH_ENFORCE=1    exit 1 when a case is below its target (default: report only)
#   BENCH_SKIP_BUILD=1 use the release binary already built
#   BENCH_BIN          binary to run (default: the release build below; implies nothing about building)
#   CARGO_TARGET_DIR   default $HOME/.cache/teamcomm-target
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/teamcomm-target}"
BENCH_SECONDS="${BENCH_SECONDS:-10}"
WARMUP_SECONDS=3
THREADS=2
CONNECTIONS=64

LISTEN=127.0.0.1:18080
BASE="http://$LISTEN"
PG_HOST=127.0.0.1
PG_PORT=5432
PG_USER=postgres
DB_NAME=teamcomm_bench
BENCH_DATABASE_URL="postgres://$PG_USER@$PG_HOST:$PG_PORT/$DB_NAME"
BIN="${BENCH_BIN:-$CARGO_TARGET_DIR/release/teamcomm}"

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

log "creating a fresh database $DB_NAME"
PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -v ON_ERROR_STOP=1 -q \
    -c "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" \
    -c "CREATE DATABASE $DB_NAME" >/dev/null

# ------------------------------------------------------------------------------ server

WORK="$(mktemp -d "${TMPDIR:-/tmp}/teamcomm-bench.XXXXXX")"
SERVER_PID=""

cleanup() {
    local status=$?
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ $status -ne 0 && -s $WORK/server.stderr ]]; then
        printf '\n--- server stderr (last 30 lines) ---\n' >&2
        tail -n 30 "$WORK/server.stderr" >&2 || true
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "starting $BIN serve --demo on $LISTEN"
env -u TEAMCOMM_TLS_CERT -u TEAMCOMM_TLS_KEY -u TEAMCOMM_BASE_URL \
    DATABASE_URL="$BENCH_DATABASE_URL" \
    TEAMCOMM_LISTEN="$LISTEN" \
    TEAMCOMM_BENCH_FLOOR=true \
    RUST_LOG=warn \
    "$BIN" serve --demo >"$WORK/server.stdout" 2>"$WORK/server.stderr" &
SERVER_PID=$!

ready=0
for _ in $(seq 1 600); do # up to 60 s (first start applies migrations)
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited during start"
    if curl -sf -o /dev/null --max-time 1 "$BASE/readyz"; then
        ready=1
        break
    fi
    sleep 0.1
done
[[ $ready == 1 ]] || die "the server did not become ready on $LISTEN"

# The demo banner prints the admin's key alone on one line (indented), before the server binds.
KEY="$(grep -E '^[[:space:]]*tck_[0-9A-Za-z]{38}[[:space:]]*$' "$WORK/server.stdout" | head -n 1 | tr -d '[:space:]' || true)"
[[ -n $KEY ]] || die "no demo API key in the server's output (was the database really empty?)"

ORG="$(curl -sf -H "X-API-KEY: $KEY" -H 'Accept: application/json' "$BASE/v1/me/" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["organization_uuid"])')" ||
    die "GET /v1/me/ with the demo key failed"
log "demo organization $ORG"

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
declare -A RPS=() P50=() P99=() TARGET=()

# run_case NAME TARGET_PCT URL [HEADER]
#   Warms up for WARMUP_SECONDS, then measures for BENCH_SECONDS with wrk. TARGET_PCT is the
#   minimum requests/sec as a percentage of the floor ("-" for none). HEADER is one
#   "Name: value" request header (e.g. the API key).
run_case() {
    local name=$1 target=$2 url=$3 header=${4:-}
    local hdr=()
    if [[ -n $header ]]; then
        hdr=(-H "$header")
    fi

    local code
    code="$(curl -s -o "$WORK/check-$name.json" -w '%{http_code}' "${hdr[@]+"${hdr[@]}"}" "$url")"
    [[ $code == 200 ]] || die "$name: $url answered $code: $(head -c 300 "$WORK/check-$name.json")"

    local wrk_args=(-t"$THREADS" -c"$CONNECTIONS" --latency "${hdr[@]+"${hdr[@]}"}")
    log "$name: warm-up ${WARMUP_SECONDS}s"
    wrk "${wrk_args[@]}" -d"${WARMUP_SECONDS}s" "$url" >/dev/null
    log "$name: measuring ${BENCH_SECONDS}s ($THREADS threads, $CONNECTIONS connections)"
    local out
    out="$(wrk "${wrk_args[@]}" -d"${BENCH_SECONDS}s" "$url")"
    printf '%s\n' "$out" >"$WORK/wrk-$name.txt"

    if grep -q 'Non-2xx or 3xx responses' <<<"$out"; then
        printf '%s\n' "$out" >&2
        die "$name: some responses were not 2xx; the numbers would be meaningless"
    fi
    if grep -q 'Socket errors' <<<"$out"; then
        log "$name: warning: $(grep 'Socket errors' <<<"$out" | sed 's/^ *//')"
    fi

    RPS[$name]="$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")"
    P50[$name]="$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_ms)"
    P99[$name]="$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_ms)"
    TARGET[$name]=$target
    [[ -n ${RPS[$name]} ]] || die "$name: could not read Requests/sec from wrk"
    CASES+=("$name")
}

# ==============================================================================================
# CASES. The floor must run first: every other case is reported against it.
#
# To add a case, append one run_case line below. Planned next:
#   GET /v1/users/ with a full page of 25. The demo organization has only 3 people, so first
#   create at least 22 more (with `"$BIN" admin create-user "$ORG" --email … --role member` and
#   DATABASE_URL="$BENCH_DATABASE_URL"), then:
#     run_case users 90 "$BASE/v1/users/?page_size=25" "X-API-KEY: $KEY"
#   (choose its target when the endpoint exists).
# ==============================================================================================
bench_cases() {
    run_case floor - "$BASE/bench/floor/?org=$ORG"
    run_case me 90 "$BASE/v1/me/" "X-API-KEY: $KEY"
    # >>> add new cases here <<<
}

bench_cases

# ------------------------------------------------------------------------------ report

floor_rps=${RPS[floor]}
below=0
printf '\n%-8s %12s %10s %10s %10s  %s\n' case 'req/s' 'p50 ms' 'p99 ms' 'vs floor' target
for name in "${CASES[@]}"; do
    pct="$(awk -v a="${RPS[$name]}" -v b="$floor_rps" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')"
    target=${TARGET[$name]}
    verdict=""
    if [[ $target != - ]]; then
        if awk -v p="$pct" -v t="$target" 'BEGIN { exit !(p >= t) }'; then
            verdict=">= $target%: ok"
        else
            verdict=">= $target%: BELOW TARGET"
            below=1
        fi
    fi
    printf '%-8s %12.0f %10s %10s %9s%%  %s\n' "$name" "${RPS[$name]}" "${P50[$name]}" "${P99[$name]}" "$pct" "$verdict"
done

me_pct="$(awk -v a="${RPS[me]}" -v b="$floor_rps" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')"
printf '\nGET /v1/me/ reaches %s%% of the floor (target >= %s%%).\n' "$me_pct" "${TARGET[me]}"

if [[ $below == 1 && ${BENCH_ENFORCE:-0} == 1 ]]; then
    exit 1
fi
