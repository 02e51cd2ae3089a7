"""The `webhooks` case of scripts/bench.sh: webhook deliveries per second to a local receiver, and
the time from a kudos being posted to its webhook arriving.

Run by bench.sh (standard library only) after both servers started, with
TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS=127.0.0.1 (plain http to loopback allowed). Steps:

1. Starts the receiver (crates/webhook-http/examples/bench_receiver.rs, BENCH_RECEIVER_BIN) on a
   free loopback port. It counts deliveries, records the first arrival of each `webhook-id` (unix
   nanoseconds, and the kudos uuid of the body) and checks the Standard Webhooks signature of one
   delivery in 16 with the endpoint's secret. It exits when this process ends.
2. Creates an endpoint for `kudos.posted` through the API (`POST /v1/webhooks/`, the demo admin's
   key) at `http://127.0.0.1:<port>/in`, and gives its signing secret to the receiver.
3. BENCH_WEBHOOK_RUNS rounds (default 3), each of:
   - throughput: one SQL statement copies the outbox row of a real kudos event (the one a
     `POST /v1/kudos/` wrote) BENCH_WEBHOOK_EVENTS times (default 20,000), each with a new
     time-ordered event id, as the server writes events (`crates/store-pg/src/repo/outbox.rs`:
     id, organization, type, payload with its `event_id`). The servers' delivery loops relay
     them (a delivery and a job per event) and deliver. The clock runs until the receiver has
     every event and every delivery of the endpoint is `delivered` in `webhook_deliveries`. The
     rate is the deliveries over the time from the first arrival to the last
     (`rate`); the rate from the insert's commit to the last arrival, relay included, is
     reported beside it (`e2e_rate`).
   - latency: BENCH_WEBHOOK_KUDOS kudos (default 100) posted one at a time through
     `POST /v1/kudos/`, each a random 50-150 ms after the previous one's answer (so posts fall at
     every phase of the delivery loop's tick), by givers taking turns (BENCH_WEBHOOK_KEYS: a
     giver may give 10 kudos a day). Each kudos' latency is the receiver's arrival time of its
     webhook minus the time just before its request was sent (one clock: same machine).
4. Deletes the endpoint and stops the receiver.

The last line on stdout is the result for bench.sh:
    events=<n> kudos=<n> runs=<n> rate=<median deliveries/s> rate_runs=<a,b,c>
    e2e_rate=<median> e2e_runs=<a,b,c> p50_ms=<median> p99_ms=<median> p50_runs=<..>
    p99_runs=<..> max_ms=<max over runs> verified=<n> bad_signatures=<n> duplicates=<n>
    servers_cpu=<s> postgres_cpu=<s> receiver_cpu=<s> machine_cpu=<s> seconds=<s>
the CPU figures (seconds) being those of the throughput runs together: the teamcomm servers
(BENCH_SERVER_PIDS), PostgreSQL (every process named postgres), the receiver, and the whole
machine (every core, /proc/stat), over `seconds` of wall time. Progress goes to stderr.

Environment (set by bench.sh): BENCH_BASE, BENCH_KEY (the demo admin's key), BENCH_WEBHOOK_KEYS
(space-separated keys of members who give the kudos), BENCH_KUDOS_RECEIVER (the uuid of the
person they go to), BENCH_DATABASE_URL (psql), BENCH_RECEIVER_BIN, BENCH_SERVER_PIDS,
BENCH_WEBHOOK_EVENTS, BENCH_WEBHOOK_KUDOS, BENCH_WEBHOOK_RUNS, BENCH_WEBHOOK_TIMEOUT (seconds to
wait for one run's deliveries, default 300).
"""

import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.parse

POLL_INTERVAL = 0.05


def log(message):
    print(f"==> webhooks: {message}", file=sys.stderr, flush=True)


def die(message):
    print(f"bench: webhooks: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


class Http:
    """One keep-alive connection to a base URL."""

    def __init__(self, base):
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname, u.port or 80
        self.conn = None

    def call(self, method, path, body=None, headers=None, raw=False):
        data = None
        hdrs = dict(headers or {})
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                r = self.conn.getresponse()
                payload = r.read()
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        if raw:
            return r.status, payload
        return r.status, (json.loads(payload) if payload else None)


def psql(sql):
    out = subprocess.run(
        ["psql", os.environ["BENCH_DATABASE_URL"], "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql],
        capture_output=True,
        text=True,
        env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"},
    )
    if out.returncode != 0:
        die(f"psql failed: {out.stderr.strip()}")
    return out.stdout.strip()


def cpu_of(pid):
    """User + system CPU seconds of a process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def postgres_pids():
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/comm") as f:
                    if f.read().strip() == "postgres":
                        pids.append(int(name))
            except OSError:
                pass
    return pids


def machine_cpu():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    """The nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def main():
    base = os.environ["BENCH_BASE"]
    key = os.environ["BENCH_KEY"]
    giver_keys = os.environ["BENCH_WEBHOOK_KEYS"].split()
    receiver_uuid = os.environ["BENCH_KUDOS_RECEIVER"]
    events = int(os.environ.get("BENCH_WEBHOOK_EVENTS", "20000"))
    kudos_per_run = int(os.environ.get("BENCH_WEBHOOK_KUDOS", "100"))
    runs = int(os.environ.get("BENCH_WEBHOOK_RUNS", "3"))
    timeout = float(os.environ.get("BENCH_WEBHOOK_TIMEOUT", "300"))
    server_pids = [int(p) for p in os.environ.get("BENCH_SERVER_PIDS", "").split()]
    if len(giver_keys) * 10 < kudos_per_run * runs + 1:
        die(f"{len(giver_keys)} givers cannot give {kudos_per_run * runs + 1} kudos today (10 each)")

    receiver = subprocess.Popen(
        [os.environ["BENCH_RECEIVER_BIN"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        line = receiver.stdout.readline().split()
        if len(line) != 2 or line[0] != "listening":
            die(f"the receiver did not start (said {line!r})")
        rx_base = f"http://{line[1]}"
        rx = Http(rx_base)
        api = Http(base)
        auth = {"X-API-KEY": key}

        status, body = api.call(
            "POST",
            "/v1/webhooks/",
            {"url": f"{rx_base}/in", "events": ["kudos.posted"], "name": "bench"},
            auth,
        )
        if status != 201:
            die(f"POST /v1/webhooks/ answered {status}: {body}")
        endpoint, secret = body["id"], body["secret"]
        log(f"endpoint {endpoint} -> {rx_base}/in")

        givers = [Http(base) for _ in giver_keys]
        turn = [0]

        def post_kudos(text):
            i = turn[0] % len(giver_keys)
            turn[0] += 1
            sent = time.time()
            status, body = givers[i].call(
                "POST",
                "/v1/kudos/",
                {"content": text, "users_receivers": [receiver_uuid]},
                {"X-API-KEY": giver_keys[i]},
            )
            if status != 201:
                die(f"POST /v1/kudos/ answered {status}: {body}")
            return body["uuid"], sent

        def reset():
            status, _ = rx.call("POST", "/_bench/reset", secret.encode(), raw=True)
            if status != 204:
                die(f"the receiver's reset answered {status}")

        def stats():
            return rx.call("GET", "/_bench/stats")[1]

        def delivered_in_db():
            return int(psql(
                f"SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '{endpoint}' AND status = 'delivered'"
            ))

        def wait_for(n, what):
            deadline = time.time() + timeout
            while True:
                s = stats()
                if s["distinct"] >= n:
                    return s
                if time.time() > deadline:
                    die(f"{what}: {s['distinct']} of {n} arrived after {timeout:.0f} s")
                time.sleep(POLL_INTERVAL)

        # The template event: a real kudos, delivered once (also a warm-up of the connection).
        reset()
        template_kudos, _ = post_kudos("Bench template")
        wait_for(1, "the template kudos")
        template = psql(
            "SELECT id FROM outbox_events WHERE event_type = 'kudos.posted' "
            f"AND payload->'data'->'kudos'->>'uuid' = '{template_kudos}'"
        )
        if not template:
            die("the template kudos wrote no kudos.posted event")
        deadline = time.time() + timeout
        while (delivered_before := delivered_in_db()) < 1:
            if time.time() > deadline:
                die("the template kudos' delivery was not recorded delivered")
            time.sleep(POLL_INTERVAL)

        rates, e2e_rates, p50s, p99s, maxes = [], [], [], [], []
        verified = bad = duplicates = 0
        cpu = {"servers": 0.0, "postgres": 0.0, "receiver": 0.0, "machine": 0.0, "seconds": 0.0}
        for run in range(1, runs + 1):
            # ---------------------------------------------------------------- throughput
            reset()
            pg = postgres_pids()
            before = (
                sum(cpu_of(p) for p in server_pids),
                sum(cpu_of(p) for p in pg),
                cpu_of(receiver.pid),
                machine_cpu(),
                time.time(),
            )
            # Ids: UUID v7 layout, the insert's milliseconds then a counter (time-ordered, as
            # Uuid::now_v7 gives), the rest random.
            committed = psql(f"""
                WITH t AS (SELECT * FROM outbox_events WHERE id = '{template}'),
                     ids AS (
                         SELECT g, (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint + g / 4096), 12, '0')
                                    || '7' || lpad(to_hex(g % 4096), 3, '0') || '8'
                                    || substr(md5(random()::text), 1, 15))::uuid AS id
                           FROM generate_series(0, {events} - 1) AS g)
                INSERT INTO outbox_events (id, organization_id, event_type, object_id, payload, occurred_at)
                SELECT ids.id, t.organization_id, t.event_type, t.object_id,
                       jsonb_set(jsonb_set(t.payload, '{{event_id}}', to_jsonb(ids.id::text)),
                                 '{{event_timestamp}}', to_jsonb(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))),
                       now()
                  FROM t, ids
                RETURNING extract(epoch FROM clock_timestamp())""").splitlines()
            inserted_at = float(committed[-1]) if committed else time.time()
            s = wait_for(events, f"run {run}")
            expected = delivered_before + events
            deadline = time.time() + timeout
            while (n := delivered_in_db()) < expected:
                if time.time() > deadline:
                    die(f"run {run}: {n - delivered_before} of {events} deliveries recorded delivered")
                time.sleep(POLL_INTERVAL)
            delivered_before = expected
            after = (
                sum(cpu_of(p) for p in server_pids),
                sum(cpu_of(p) for p in pg),
                cpu_of(receiver.pid),
                machine_cpu(),
                time.time(),
            )
            for k, i in (("servers", 0), ("postgres", 1), ("receiver", 2), ("machine", 3), ("seconds", 4)):
                cpu[k] += after[i] - before[i]
            first, last = int(s["first_ns"]) / 1e9, int(s["last_ns"]) / 1e9
            rate = (events - 1) / (last - first) if last > first else float("inf")
            e2e = events / (last - inserted_at)
            rates.append(rate)
            e2e_rates.append(e2e)
            verified += s["verified"]
            bad += s["bad_signatures"]
            duplicates += s["count"] - s["distinct"]
            log(
                f"run {run}: {events} deliveries, first to last arrival {last - first:.2f} s: {rate:.0f}/s "
                f"({e2e:.0f}/s from the insert, relay included); {s['verified']} signatures checked, "
                f"{s['bad_signatures']} bad, {s['count'] - s['distinct']} duplicates"
            )

            # ---------------------------------------------------------------- latency
            reset()
            posted = {}
            for i in range(kudos_per_run):
                time.sleep(random.uniform(0.05, 0.15))
                uuid, sent = post_kudos(f"Bench latency {run}.{i}")
                posted[uuid] = sent
            s = wait_for(kudos_per_run, f"latency run {run}")
            verified += s["verified"]
            bad += s["bad_signatures"]
            duplicates += s["count"] - s["distinct"]
            _, text = rx.call("GET", "/_bench/arrivals", raw=True)
            arrived = {}
            for row in text.decode().splitlines():
                _, at, kudos = row.split()
                arrived[kudos] = int(at) / 1e9
            missing = [u for u in posted if u not in arrived]
            if missing:
                die(f"latency run {run}: no webhook for kudos {missing[:3]}")
            lat = [1000 * (arrived[u] - t) for u, t in posted.items()]
            delivered_before += kudos_per_run
            p50s.append(percentile(lat, 50))
            p99s.append(percentile(lat, 99))
            maxes.append(max(lat))
            log(f"latency run {run}: {kudos_per_run} kudos, p50 {p50s[-1]:.0f} ms, p99 {p99s[-1]:.0f} ms, max {maxes[-1]:.0f} ms")

        if bad:
            die(f"{bad} deliveries had a bad or missing signature")
        status, _ = api.call("DELETE", f"/v1/webhooks/{endpoint}/", None, auth, raw=True)
        if status != 204:
            log(f"warning: deleting the endpoint answered {status}")

        def runs_of(values):
            return ",".join(f"{v:.0f}" for v in values)

        fields = {
            "events": events,
            "kudos": kudos_per_run,
            "runs": runs,
            "rate": f"{statistics.median(rates):.0f}",
            "rate_runs": runs_of(rates),
            "e2e_rate": f"{statistics.median(e2e_rates):.0f}",
            "e2e_runs": runs_of(e2e_rates),
            "p50_ms": f"{statistics.median(p50s):.0f}",
            "p99_ms": f"{statistics.median(p99s):.0f}",
            "p50_runs": runs_of(p50s),
            "p99_runs": runs_of(p99s),
            "max_ms": f"{max(maxes):.0f}",
            "verified": verified,
            "bad_signatures": bad,
            "duplicates": duplicates,
            "servers_cpu": f"{cpu['servers']:.1f}",
            "postgres_cpu": f"{cpu['postgres']:.1f}",
            "receiver_cpu": f"{cpu['receiver']:.1f}",
            "machine_cpu": f"{cpu['machine']:.1f}",
            "seconds": f"{cpu['seconds']:.1f}",
        }
        print(" ".join(f"{k}={v}" for k, v in fields.items()), flush=True)
    finally:
        receiver.stdin.close()
        try:
            receiver.wait(timeout=5)
        except subprocess.TimeoutExpired:
            receiver.kill()


if __name__ == "__main__":
    main()
