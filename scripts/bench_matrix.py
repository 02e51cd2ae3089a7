"""The `delivered_matrix` case of scripts/bench.sh: delivered messages per second to a local Synapse.

Run by bench.sh with the interpreter of the Synapse venv (scripts/install-synapse.sh), which starts
the homeserver; everything else is the standard library. Steps:

1. Starts Synapse on a free loopback port in a fresh directory, configured like the Matrix tests'
   harness (crates/chat/src/testing/synapse.rs): SQLite, client API only, no federation, relaxed
   `rc_*` limits, registration with a shared secret, `bcrypt_rounds: 4`. The homeserver watches
   its standard input, a pipe from this process, and exits (removing its directory) when this
   process ends, however it ends.
2. Registers a bot (admin) and BENCH_MATRIX_PEOPLE people; logs the bot in on the pinned device
   TEAMCOMMBOT (as a deployment does: transaction ids dedupe per device); the bot creates a room.
3. Connects the organization to Matrix through the operator API (`PUT .../platform/`, kind
   matrix, the bot's token, the homeserver's URL) and names each person's Matrix user
   (`PUT .../users/{uuid}/platform-identity/`).
4. Warm-up: one message to each person (which creates their DM room) and one to the room,
   waited for until delivered.
5. Measured: BENCH_MATRIX_MESSAGES messages through `POST /v1/send-message/` (202), one target
   each, alternately to a person (round robin, by DM) and to the room; the clock runs from the
   first request until every delivery of the organization is `delivered` (counted in SQL in
   `message_deliveries`, every 0.2 s). A delivery that fails stops the case.
6. Checks on the homeserver that the room holds each of its messages exactly once, disconnects
   the organization (the servers stop polling it) and stops Synapse.

The last line on stdout is the result for bench.sh:
    messages=<n> seconds=<s> rate=<delivered/s> queue_rate=<accepted/s> people=<n>
    synapse_cpu=<s> servers_cpu=<s> machine_cpu=<s>
the last three being the CPU seconds Synapse, the teamcomm servers (BENCH_SERVER_PIDS) and the
whole machine (every core, /proc/stat) used while the measured messages were delivered: where
the time went. Progress goes to stderr.

Environment (all set by bench.sh): BENCH_BASE (a teamcomm server), BENCH_OPERATOR_TOKEN,
BENCH_MATRIX_ORG, BENCH_MATRIX_KEY (an admin key of that organization), BENCH_MATRIX_PEOPLE_UUIDS
(space-separated), BENCH_MATRIX_MESSAGES, BENCH_DATABASE_URL (for psql), BENCH_MATRIX_DIR (a
directory the homeserver's own directory is created in), BENCH_MATRIX_TIMEOUT (seconds to wait
for the deliveries, default 600), BENCH_SERVER_PIDS (space-separated, optional).
"""

import hashlib
import hmac
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

SHARED_SECRET = "teamcomm-bench-registration-secret"
BOT_DEVICE = "TEAMCOMMBOT"
SERVER_NAME = "localhost"
STARTUP_TIMEOUT = 60.0
POLL_INTERVAL = 0.2

# Runs the homeserver until standard input closes, then removes its directory and exits at once.
WATCHED_HOMESERVER = r"""
import os, runpy, shutil, sys, threading
config, data_dir = sys.argv[1], sys.argv[2]
def end_with_owner():
    sys.stdin.buffer.read()
    shutil.rmtree(data_dir, ignore_errors=True)
    os._exit(0)
threading.Thread(target=end_with_owner, daemon=True).start()
sys.argv = ["synapse.app.homeserver", "-c", config]
runpy.run_module("synapse.app.homeserver", run_name="__main__")
"""


def log(message):
    print(f"==> delivered_matrix: {message}", file=sys.stderr, flush=True)


def die(message):
    print(f"bench: delivered_matrix: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


class Http:
    """One keep-alive HTTP/1.1 connection to a base URL; JSON in and out."""

    def __init__(self, base_url):
        url = urllib.parse.urlsplit(base_url)
        self.host, self.port = url.hostname, url.port or 80
        self.conn = None

    def call(self, method, path, body=None, headers=None):
        payload = None if body is None else json.dumps(body).encode()
        sent = {"Accept": "application/json", **(headers or {})}
        if payload is not None:
            sent["Content-Type"] = "application/json"
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
            try:
                self.conn.request(method, path, body=payload, headers=sent)
                answer = self.conn.getresponse()
                raw = answer.read()
                break
            except (http.client.HTTPException, ConnectionError):
                # The server closed an idle keep-alive connection: reconnect once.
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = raw.decode(errors="replace")
        return answer.status, data


def enc(raw):
    return urllib.parse.quote(raw, safe="")


CLK_TCK = os.sysconf("SC_CLK_TCK")


def process_cpu(pids):
    """CPU seconds (user + system) the processes used so far."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                # Fields after the command's closing parenthesis; utime and stime are 14 and 15.
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / CLK_TCK


def machine_cpu():
    """CPU seconds every core of the machine spent busy so far."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks[:8]) - idle) / CLK_TCK


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def relaxed_limits():
    relaxed = {"per_second": 10000, "burst_count": 10000}
    return {
        "rc_message": relaxed,
        "rc_registration": relaxed,
        "rc_room_creation": relaxed,
        "rc_joins_per_room": relaxed,
        "rc_login": {"address": relaxed, "account": relaxed, "failed_attempts": relaxed},
        "rc_joins": {"local": relaxed, "remote": relaxed},
        "rc_invites": {"per_room": relaxed, "per_user": relaxed, "per_issuer": relaxed},
        "rc_admin_redaction": relaxed,
        "rc_3pid_validation": relaxed,
        "rc_presence": {"per_user": relaxed},
        "rc_delayed_event_mgmt": relaxed,
        "rc_reports": relaxed,
        "rc_profile": relaxed,
        "rc_user_directory": relaxed,
        "rc_media_create": relaxed,
    }


def start_synapse(parent):
    """Starts the homeserver; answers (process, base URL, directory)."""
    home = tempfile.mkdtemp(prefix="synapse-", dir=parent)
    port = free_port()
    path = lambda name: os.path.join(home, name)  # noqa: E731
    config = {
        "server_name": SERVER_NAME,
        "public_baseurl": f"http://127.0.0.1:{port}/",
        "pid_file": path("homeserver.pid"),
        "listeners": [{
            "port": port, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": False,
            "x_forwarded": False, "resources": [{"names": ["client"], "compress": False}],
        }],
        "database": {"name": "sqlite3", "args": {"database": path("homeserver.db")}},
        "log_config": path("log.yaml"),
        "media_store_path": path("media"),
        "signing_key_path": path("signing.key"),
        "registration_shared_secret": SHARED_SECRET,
        "macaroon_secret_key": "teamcomm-bench-macaroon-secret",
        "form_secret": "teamcomm-bench-form-secret",
        "enable_registration": False,
        "report_stats": False,
        "enable_metrics": False,
        "federation_domain_whitelist": [],
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "url_preview_enabled": False,
        "presence": {"enabled": False},
        "bcrypt_rounds": 4,
        **relaxed_limits(),
    }
    logging = {
        "version": 1,
        "formatters": {"precise": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
        "handlers": {"file": {
            "class": "logging.FileHandler", "formatter": "precise",
            "filename": path("homeserver.log"),
        }},
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }
    # YAML is a superset of JSON.
    with open(path("homeserver.yaml"), "w") as f:
        json.dump(config, f)
    with open(path("log.yaml"), "w") as f:
        json.dump(logging, f)
    # Any 32-byte seed is a valid ed25519 key; writing one skips --generate-keys.
    with open(path("signing.key"), "w") as f:
        f.write("ed25519 a_bench AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n")
    stderr = open(os.path.join(parent, "synapse.stderr"), "w")
    process = subprocess.Popen(
        [sys.executable, "-c", WATCHED_HOMESERVER, path("homeserver.yaml"), home],
        cwd=home, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr,
    )
    base = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    while True:
        if process.poll() is not None:
            die(f"Synapse exited ({process.returncode}) during start; see {stderr.name}")
        try:
            status, _ = Http(base).call("GET", "/health")
            if status == 200:
                break
        except OSError:
            pass
        if time.monotonic() - started > STARTUP_TIMEOUT:
            die(f"Synapse not healthy after {STARTUP_TIMEOUT:.0f} s")
        time.sleep(0.05)
    log(f"Synapse up on {base} in {time.monotonic() - started:.1f} s")
    return process, base


def stop_synapse(process):
    if process.poll() is not None:
        return
    process.stdin.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def register(hs, localpart, admin):
    """Registers with the shared secret; answers the account (user_id, access_token, ...)."""
    status, answer = hs.call("GET", "/_synapse/admin/v1/register")
    if status != 200:
        die(f"registration nonce: {status} {answer}")
    nonce = answer["nonce"]
    password = f"pw-{localpart}"
    role = "admin" if admin else "notadmin"
    mac = hmac.new(SHARED_SECRET.encode(), f"{nonce}\0{localpart}\0{password}\0{role}".encode(),
                   hashlib.sha1).hexdigest()
    status, answer = hs.call("POST", "/_synapse/admin/v1/register", {
        "nonce": nonce, "username": localpart, "password": password, "admin": admin, "mac": mac,
    })
    if status != 200:
        die(f"register {localpart}: {status} {answer}")
    return answer


def login(hs, localpart, device_id):
    status, answer = hs.call("POST", "/_matrix/client/v3/login", {
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": localpart},
        "password": f"pw-{localpart}",
        "device_id": device_id,
    })
    if status != 200:
        die(f"login {localpart}: {status} {answer}")
    return answer


def psql(sql):
    out = subprocess.run(
        ["psql", os.environ["BENCH_DATABASE_URL"], "-v", "ON_ERROR_STOP=1", "-qAt", "-F", "\t",
         "-c", sql],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def deliveries(org):
    """The organization's deliveries by status: {status: count}."""
    rows = psql(
        "SELECT d.status, count(*) FROM message_deliveries d JOIN messages m ON m.id = d.message_id "
        f"WHERE m.organization_id = '{org}' GROUP BY 1"
    )
    return {status: int(n) for status, n in rows}


def explain_and_die(org, what):
    failed = psql(
        "SELECT coalesce(d.failure_reason, '-'), count(*) FROM message_deliveries d "
        f"JOIN messages m ON m.id = d.message_id WHERE m.organization_id = '{org}' "
        "AND d.status = 'failed' GROUP BY 1"
    )
    jobs = psql(
        "SELECT state, coalesce(last_error, '-'), count(*) FROM jobs "
        f"WHERE organization_id = '{org}' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5"
    )
    die(f"{what}; failed deliveries by reason: {failed}; jobs by state and last error: {jobs}")


def wait_delivered(org, expected, timeout):
    """Waits until `expected` deliveries of the organization are delivered; answers the time."""
    deadline = time.monotonic() + timeout
    while True:
        counts = deliveries(org)
        if counts.get("failed"):
            explain_and_die(org, f"{counts['failed']} deliveries failed")
        if counts.get("delivered", 0) >= expected:
            return time.monotonic()
        if time.monotonic() > deadline:
            explain_and_die(org, f"after {timeout} s only {counts} of {expected} delivered")
        time.sleep(POLL_INTERVAL)


def room_bodies(bot, room_id):
    """The bodies of the room's m.room.message events (all pages)."""
    bodies, since = [], None
    flt = enc(json.dumps({"types": ["m.room.message"]}))
    while True:
        path = f"/_matrix/client/v3/rooms/{enc(room_id)}/messages?dir=b&limit=1000&filter={flt}"
        if since:
            path += f"&from={enc(since)}"
        status, answer = bot.call("GET", path)
        if status != 200:
            die(f"reading the room: {status} {answer}")
        chunk = answer.get("chunk", [])
        bodies += [e.get("content", {}).get("body") for e in chunk]
        since = answer.get("end")
        if not chunk or not since:
            return bodies


def main():
    env = os.environ
    base = env["BENCH_BASE"]
    org = env["BENCH_MATRIX_ORG"]
    key = env["BENCH_MATRIX_KEY"]
    people = env["BENCH_MATRIX_PEOPLE_UUIDS"].split()
    total = int(env["BENCH_MATRIX_MESSAGES"])
    timeout = int(env.get("BENCH_MATRIX_TIMEOUT", "600"))
    operator_headers = {"Authorization": f"Bearer {env['BENCH_OPERATOR_TOKEN']}"}
    if not people or total < 2:
        die("needs people and at least 2 messages")

    synapse, hs_url = start_synapse(env["BENCH_MATRIX_DIR"])
    api = Http(base)
    connected = False
    try:
        hs = Http(hs_url)
        register(hs, "benchbot", admin=True)
        bot_login = login(hs, "benchbot", BOT_DEVICE)
        bot_headers = {"Authorization": f"Bearer {bot_login['access_token']}"}

        class Bot(Http):
            def call(self, method, path, body=None, headers=None):
                return super().call(method, path, body, {**bot_headers, **(headers or {})})

        bot = Bot(hs_url)
        matrix_ids = [register(hs, f"benchp{i}", admin=False)["user_id"] for i in range(len(people))]
        status, answer = bot.call("POST", "/_matrix/client/v3/createRoom",
                                  {"preset": "private_chat", "name": "bench"})
        if status != 200:
            die(f"createRoom: {status} {answer}")
        room_id = answer["room_id"]
        log(f"bot {bot_login['user_id']} on device {bot_login['device_id']}, "
            f"{len(people)} people, room {room_id}")

        status, answer = api.call("PUT", f"/operator/v1/organizations/{org}/platform/",
                                  {"kind": "matrix", "secret": bot_login["access_token"],
                                   "base_url": hs_url}, operator_headers)
        if status != 200:
            die(f"connecting the organization to Matrix: {status} {answer}")
        connected = True
        for uuid, matrix_id in zip(people, matrix_ids):
            status, answer = api.call(
                "PUT", f"/operator/v1/organizations/{org}/users/{uuid}/platform-identity/",
                {"platform_user_id": matrix_id}, operator_headers)
            if status != 204:
                die(f"platform identity of {uuid}: {status} {answer}")

        sent_to_room = 0

        def send(n, to_room):
            target = ({"target_channels": [room_id]} if to_room
                      else {"target_users": [people[n % len(people)]]})
            status, answer = api.call("POST", "/v1/send-message/",
                                      {"message": f"Bench delivery {n}", **target},
                                      {"X-API-KEY": key})
            if status != 202:
                die(f"POST /v1/send-message/: {status} {answer}")

        # Warm-up: every person's DM room exists, the bot's identity is checked.
        log(f"warm-up: {len(people)} DMs (each creates its room) and 1 room message")
        started = time.monotonic()
        for n in range(len(people)):
            send(n, to_room=False)
        send(len(people), to_room=True)
        sent_to_room += 1
        warm = len(people) + 1
        wait_delivered(org, warm, timeout)
        log(f"warm-up delivered in {time.monotonic() - started:.1f} s")

        log(f"measuring: {total} messages, every other one to the room")
        servers = env.get("BENCH_SERVER_PIDS", "").split()
        cpu_before = (process_cpu([synapse.pid]), process_cpu(servers), machine_cpu())
        started = time.monotonic()
        for i in range(total):
            to_room = i % 2 == 1
            send(warm + i, to_room)
            sent_to_room += to_room
        queued = time.monotonic()
        done = wait_delivered(org, warm + total, timeout)
        cpu = [after - before for after, before in zip(
            (process_cpu([synapse.pid]), process_cpu(servers), machine_cpu()), cpu_before)]
        seconds = done - started
        queue_seconds = queued - started
        log(f"{total} accepted in {queue_seconds:.1f} s, all delivered after {seconds:.1f} s")
        log(f"CPU seconds meanwhile: Synapse {cpu[0]:.1f}, the teamcomm servers {cpu[1]:.1f}, "
            f"the whole machine {cpu[2]:.1f} (of {seconds * os.cpu_count():.1f} on "
            f"{os.cpu_count()} cores)")

        bodies = [b for b in room_bodies(bot, room_id) if (b or "").startswith("Bench delivery ")]
        if len(bodies) != sent_to_room or len(set(bodies)) != sent_to_room:
            die(f"the room holds {len(bodies)} bench messages ({len(set(bodies))} distinct), "
                f"{sent_to_room} were sent there")
        log(f"the room holds each of its {sent_to_room} messages once")
    finally:
        if connected:
            api.call("DELETE", f"/operator/v1/organizations/{org}/platform/", None,
                     operator_headers)
        stop_synapse(synapse)

    print(f"messages={total} seconds={seconds:.2f} rate={total / seconds:.1f} "
          f"queue_rate={total / queue_seconds:.0f} people={len(people)} "
          f"synapse_cpu={cpu[0]:.1f} servers_cpu={cpu[1]:.1f} machine_cpu={cpu[2]:.1f}")


if __name__ == "__main__":
    # bench.sh's cleanup sends TERM: leave through `finally` (Synapse stops with us either way).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
