#!/usr/bin/env python3
"""The plan_delta case of scripts/bench_plan.sh: the delta feed under concurrent changes.

Writers PATCH tasks of one board (a new title, conditioned on the task's version) at a steady
rate, spread evenly over the run, while one poller follows GET /v1/plan/boards/<b>/delta/
from the cursor of the board's snapshot (GET /v1/plan/boards/<b>/board/), each answer's
delta_cursor the next call's updated_since. Every change goes to a task no other change
touches, so each (task uuid, version) answered to a writer must come back in the feed exactly
as written: one missing is a failure (exit 1, the missing ones listed).

Environment (set by bench_plan.sh): BENCH_BASE, BENCH_KEY, BENCH_BOARD (its key),
BENCH_BOARD_TASKS (tasks numbered 1..N on it, at version 1), BENCH_DELTA_RATE (changes a
minute), BENCH_DELTA_SECONDS, BENCH_DELTA_WRITERS, BENCH_DELTA_POLL (seconds between polls).

The last line of stdout is the result as NAME=VALUE pairs separated by spaces.
"""

import http.client
import json
import os
import sys
import threading
import time
import urllib.parse

BASE = urllib.parse.urlsplit(os.environ["BENCH_BASE"])
KEY = os.environ["BENCH_KEY"]
BOARD = os.environ["BENCH_BOARD"]
BOARD_TASKS = int(os.environ["BENCH_BOARD_TASKS"])
RATE = int(os.environ.get("BENCH_DELTA_RATE", "1200"))
SECONDS = int(os.environ.get("BENCH_DELTA_SECONDS", "60"))
WRITERS = int(os.environ.get("BENCH_DELTA_WRITERS", "8"))
POLL = float(os.environ.get("BENCH_DELTA_POLL", "1"))
# After the last write: the cursor lags the store's clock by 2 s and is truncated to the
# second, so a change is due within about 3 s plus a poll; past this it is missed.
SETTLE_SECONDS = 10


def log(msg):
    print(f"==> plan_delta: {msg}", file=sys.stderr, flush=True)


class Client:
    """One keep-alive connection with the key."""

    def __init__(self):
        self.conn = http.client.HTTPConnection(BASE.hostname, BASE.port, timeout=30)

    def call(self, method, path, body=None):
        headers = {"X-API-KEY": KEY, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                if attempt == 2:
                    raise
        if resp.status // 100 != 2:
            raise RuntimeError(f"{method} {path} answered {resp.status}: {raw[:400]!r}")
        return json.loads(raw)


def pct(values, p):
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


total = RATE * SECONDS // 60
if total > BOARD_TASKS:
    sys.exit(f"plan_delta: {total} changes need {total} tasks; the board has {BOARD_TASKS}")
interval = 60.0 / RATE

lock = threading.Lock()
written = {}  # (uuid, version) -> monotonic time the write was answered
write_ms = []
errors = []
seen = {}  # (uuid, version) -> monotonic time first seen
duplicates = 0
delta_ms = []
polls = 0
max_batch = 0
writers_done = threading.Event()


def writer(index, start):
    client = Client()
    try:
        for change in range(index, total, WRITERS):
            due = start + change * interval
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            number = change + 1
            sent = time.monotonic()
            task = client.call(
                "PATCH",
                f"/v1/plan/tasks/{BOARD}-{number}/",
                {"title": f"Changed by the bench ({number})", "version": 1},
            )
            answered = time.monotonic()
            if "version" not in task or "uuid" not in task:
                raise RuntimeError(f"the task answered has no uuid or version: {str(task)[:300]}")
            with lock:
                written[(task["uuid"], task["version"])] = answered
                write_ms.append((answered - sent) * 1000)
    except Exception as e:  # noqa: BLE001 (reported, and the case fails)
        with lock:
            errors.append(f"writer {index}: {e}")


def take(answer, at):
    """Records the tasks of one delta answer."""
    global duplicates, max_batch
    # Archived entries may carry no version; none of the bench's changes archives.
    tasks = answer.get("changed", []) + answer.get("created", []) + answer.get("archived", [])
    with lock:
        max_batch = max(max_batch, len(tasks))
        for t in tasks:
            k = (t["uuid"], t.get("version"))
            if k in seen:
                duplicates += 1
            else:
                seen[k] = at


def poller(cursor, stop_at):
    global polls
    client = Client()
    try:
        while True:
            began = time.monotonic()
            q = urllib.parse.urlencode({"updated_since": cursor})
            answer = client.call("GET", f"/v1/plan/boards/{BOARD}/delta/?{q}")
            ended = time.monotonic()
            with lock:
                polls += 1
                delta_ms.append((ended - began) * 1000)
            take(answer, ended)
            cursor = answer["delta_cursor"] or cursor
            if writers_done.is_set():
                with lock:
                    caught_up = all(k in seen for k in written)
                if caught_up or time.monotonic() > stop_at[0]:
                    return
            time.sleep(max(0.0, POLL - (time.monotonic() - began)))
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append(f"poller: {e}")


snapshot = Client().call("GET", f"/v1/plan/boards/{BOARD}/board/")
cursor = snapshot["delta_cursor"]
log(f"snapshot cursor {cursor}; {total} changes, one every {interval * 1000:.0f} ms over {WRITERS} writers")
stop_at = [float("inf")]
poll_thread = threading.Thread(target=poller, args=(cursor, stop_at))
poll_thread.start()
start = time.monotonic() + 0.5
threads = [threading.Thread(target=writer, args=(i, start)) for i in range(WRITERS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
finished = time.monotonic()
stop_at[0] = finished + SETTLE_SECONDS
writers_done.set()
poll_thread.join()

if errors:
    for e in errors[:10]:
        print(f"plan_delta: {e}", file=sys.stderr)
    sys.exit(1)

missed = [k for k in written if k not in seen]
lags = [(seen[k] - at) * 1000 for k, at in written.items() if k in seen]
elapsed = max(finished - start, 1e-9)
if missed:
    print(
        f"plan_delta: FAILED: {len(missed)} of {len(written)} changes were never seen by the poller, e.g. {missed[:5]}",
        file=sys.stderr,
    )
    sys.exit(1)

result = {
    "written": len(written),
    "writers": WRITERS,
    "seconds": f"{elapsed:.1f}",
    "rate_per_minute": f"{len(written) * 60 / elapsed:.0f}",
    "poll_seconds": POLL,
    "seen": sum(1 for k in written if k in seen),
    "duplicates": duplicates,
    # seen but not written by the bench: nothing else writes to the board
    "unexpected": sum(1 for k in seen if k not in written),
    "polls": polls,
    "max_batch": max_batch,
    "delta_p50_ms": f"{pct(delta_ms, 50):.1f}",
    "delta_p99_ms": f"{pct(delta_ms, 99):.1f}",
    "delta_max_ms": f"{max(delta_ms):.1f}",
    "write_p50_ms": f"{pct(write_ms, 50):.1f}",
    "write_p99_ms": f"{pct(write_ms, 99):.1f}",
    "seen_p50_ms": f"{pct(lags, 50):.0f}",
    "seen_p99_ms": f"{pct(lags, 99):.0f}",
}
print(" ".join(f"{k}={v}" for k, v in result.items()))
