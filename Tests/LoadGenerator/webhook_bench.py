#!/usr/bin/env python3
"""How long a webhook event takes from its commit to a receiver while devices push (issue 28's target: p50 <= 20 ms,
p99 <= 200 ms with 200 devices pushing).

Everything on the hot path is a release build or cheap: the release fieldsheet-server (SQLite in a temporary
directory, or the PostgreSQL database of `--database`), one endpoint wanting every event, a receiver in this script on loopback (asyncio, a minimal HTTP/1.1
reader that answers 200 at once; the signature is not checked here, the webhook tests check it), and the release
fieldsheet-loadgen's "devices at once" scenario (or paced, `--device-period-ms`) as the devices (each of N devices pushes 3 batches of 10 new
records and pulls after each).

The latency is the receiver's clock at the first arrival of each event minus the moment the event's commit was
durable, from the server's timing trace (`serve --log-level trace`: one "Webhook delivery timed" line per attempt,
with when the delivery's commit was durable, when the push handed it to the delivery service, when its attempt
started and finished; no body or secret). The trace splits that time: commit -> hand-over -> the attempt's start ->
the receiver, and a server whose trace has the finer stamps (taken, added, curlStart, sent) splits hand-over ->
receiver leg by leg: into the endpoint's queue, waiting for a slot, the transfer added to a sender thread's multi
handle, libcurl beginning it, the request sent, the receiver reading it. The event's `occurredAt` (taken inside the push's transaction, before the rest of its group commit
and the group's fsync) is reported too, as occurredAt -> commit: it is the push's side, not the delivery's.
Deliveries the service claimed itself (not handed over by a push) have no commit time in the trace; they are
counted, and measured from `occurredAt`.

Then, from the server's own delivery log (its SQLite database, read once every delivery is noted delivered), where
that time went: commit -> the attempt's start (waiting to be claimed and sent: `delivered_at - response_ms -
created_at`), the attempt itself (`response_ms`, libcurl's request and the receiver's answer), and how many TCP
connections the receiver was opened for all of it (one per delivery without keep-alive).

The trace also says, for each handed-over event, how many attempts were under way when it was handed over (from
the same lines' start and finish times), splitting "hand-over -> attempt start" into the events that found every
one of the endpoint's slots taken (`--batches-in-flight` x 32; the wait is for an earlier attempt to end) and the
others, and how many handed-over deliveries were waiting to start at that moment (on SQLite a group commit hands
over up to 16 pushes' events at once, `GroupCommit.largestGroup`: those behind it in the queue wait for the ones
before to start).

`--keep DIR` keeps the server's log (`server.err`, with the timing trace) and the receiver's arrivals
(`arrivals.json`: event id -> [arrival, occurredAt], seconds since 1970) in DIR, for a scheduler trace taken
beside the run (`perf record -k mono -e sched:sched_switch,sched:sched_wakeup -a`; see
`webhook_sched.py`).

`--receiver-nice N` runs the receiver's thread at nice N (below 0 needs root): a receiver that gets the CPU when it
wants it, as one on a core or machine of its own would, to tell the server's waits from the receiver's.

`--receiver-nice N` applies to each receiver process too.

`--device-period-ms P` paces the devices instead of starting them all at once: device i of N starts round r at
(i / N + r) x P ms after the start (at once, if its round before ended later), so the server is offered
N x 10 x 1000 / P records a second spread over time, as field devices on their own schedules send them, rather
than N pushes in the same instant.

`--database postgres://...` runs the server on that PostgreSQL database (empty: the bench makes its project)
instead of SQLite; the delivery log's figures are then left out, the timing trace is the same.

Usage: webhook_bench.py BIN_DIR [--devices N] [--device-period-ms P] [--database URL] [--batches-in-flight K] [--keep DIR] [--receiver-nice N]
       [--receiver processes|single] [--receiver-processes P]
"""
import argparse
import asyncio
import hashlib
import hmac
import multiprocessing
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "odata"))
from odata_bench import run  # noqa: E402  (the same set-up helper as the OData bench)

SECRET = "webhook-bench-secret-0123456789"
MAX_HEADER = 64 * 1024
MAX_BODY = 16 * 1024 * 1024


async def read_request(reader):
    """One request's head and body from a kept connection; None when its head or body is over the limits."""
    head = await reader.readuntil(b"\r\n\r\n")
    if len(head) > MAX_HEADER:
        return None
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length > MAX_BODY:
        return None
    return head, await reader.readexactly(length)


class Receiver:
    """Counts each event id once, with the latency of its first arrival in milliseconds."""

    def __init__(self, nice=None):
        self.nice = nice
        self.latencies = {}
        self.arrivals = {}
        self.requests = 0
        self.connections = 0
        self.bad_signatures = 0  # not checked by this receiver
        self.port = None
        self.ready = threading.Event()

    def received(self):
        return len(self.latencies)

    def collect(self):
        pass  # counted here as they came

    def stop(self):
        pass  # a daemon thread of this process

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            while True:
                request = await read_request(reader)
                if request is None:
                    break
                head, body = request
                arrived = time.time()
                self.requests += 1
                event = json.loads(body)
                if event["id"] not in self.latencies:
                    self.latencies[event["id"]] = arrived * 1000 - event["occurredAt"]
                    self.arrivals[event["id"]] = (arrived, event["occurredAt"] / 1000)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def serve(self):
        if self.nice is not None:
            # This thread's own priority (Linux: a thread's nice value is its own), so the receiver can be given
            # the CPU ahead of the load generator it shares a core with.
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)

        async def main():
            server = await asyncio.start_server(self.handle, "127.0.0.1", 0, limit=MAX_HEADER, backlog=1024)
            self.port = server.sockets[0].getsockname()[1]
            self.ready.set()
            async with server:
                await server.serve_forever()
        asyncio.run(main())


OCCURRED = re.compile(rb'"occurredAt":(-?\d+(?:\.\d+)?)')
EVENT_ID = re.compile(rb'"id":"([^"]+)"')


def verified(head, body):
    """Whether the request's FieldSheet-Signature header signs `body` with SECRET (t=TIMESTAMP,v1=HEX over
    `TIMESTAMP.BODY`)."""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() != b"fieldsheet-signature":
            continue
        parts = dict(part.strip().split(b"=", 1) for part in value.split(b",") if b"=" in part)
        timestamp, given = parts.get(b"t"), parts.get(b"v1")
        if timestamp is None or given is None:
            return False
        expected = hmac.new(SECRET.encode(), timestamp + b"." + body, hashlib.sha256).hexdigest().encode()
        return hmac.compare_digest(expected, given)
    return False


def receiver_process(listener, pipe, counter, index, nice):
    """One process of the `processes` receiver: serves the shared port and checks every signature. It counts the
    events it saw first in `counter[index]` (shared memory: the parent never waits on it, and it never waits on the
    parent during the run) and, when the parent asks on `pipe`, sends its arrivals and counts."""
    if nice is not None:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    arrivals = {}
    counts = {"requests": 0, "connections": 0, "bad": 0}

    async def handle(reader, writer):
        counts["connections"] += 1
        try:
            while True:
                request = await read_request(reader)
                if request is None:
                    break
                head, body = request
                arrived = time.time()
                counts["requests"] += 1
                if not verified(head, body):
                    counts["bad"] += 1
                    writer.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
                else:
                    # The event's id is the body's first "id" (the envelope's, before its data's).
                    event = EVENT_ID.search(body).group(1).decode()
                    if event not in arrivals:
                        arrivals[event] = (arrived, float(OCCURRED.search(body).group(1)))
                        counter[index] += 1
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def asked():
        pipe.recv()
        pipe.send((arrivals, counts))

    async def main():
        server = await asyncio.start_server(handle, sock=listener, limit=MAX_HEADER)
        asyncio.get_running_loop().add_reader(pipe.fileno(), asked)
        async with server:
            await server.serve_forever()
    asyncio.run(main())


class ProcessReceiver:
    """The `processes` receiver: `count` processes on one port (SO_REUSEPORT), their arrivals gathered here once
    the run is over (`collect`). Counts each event id once, with the latency of its first arrival in
    milliseconds."""

    def __init__(self, count, nice=None):
        self.count = count
        self.nice = nice
        self.latencies = {}
        self.arrivals = {}
        self.requests = 0
        self.connections = 0
        self.bad_signatures = 0
        self.port = None
        self.ready = threading.Event()
        self.processes = []
        self.pipes = []
        self.counter = None

    def serve(self):
        context = multiprocessing.get_context("fork")
        self.counter = context.Array("q", self.count, lock=False)
        for index in range(self.count):
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            listener.bind(("127.0.0.1", self.port or 0))
            listener.listen(1024)
            self.port = listener.getsockname()[1]
            mine, theirs = context.Pipe()
            process = context.Process(target=receiver_process, args=(listener, theirs, self.counter, index, self.nice), daemon=True)
            process.start()
            listener.close()
            theirs.close()
            self.pipes.append(mine)
            self.processes.append(process)
        self.ready.set()

    def received(self):
        """Events seen so far (an event retried into another process may count twice until `collect`)."""
        return sum(self.counter)

    def collect(self):
        for pipe in self.pipes:
            pipe.send("arrivals")
        for pipe in self.pipes:
            arrivals, tally = pipe.recv()
            for event, (arrived, occurred) in arrivals.items():
                if event not in self.latencies or arrived < self.arrivals[event][0]:
                    self.latencies[event] = arrived * 1000 - occurred
                    self.arrivals[event] = (arrived, occurred / 1000)
            self.requests += tally["requests"]
            self.connections += tally["connections"]
            self.bad_signatures += tally["bad"]

    def stop(self):
        for process in self.processes:
            process.terminate()


def percentiles(values, unit=" ms"):
    ordered = sorted(values)
    if not ordered:
        return "none"
    pick = lambda q: ordered[min(len(ordered) - 1, int(len(ordered) * q))]
    return f"p50 {pick(0.5):.0f}{unit}, p99 {pick(0.99):.0f}{unit}, max {ordered[-1]:.0f}{unit}"


def trace(database, expected, receiver):
    """Where the time went, from the server's delivery log once it noted every delivery."""
    deadline = time.monotonic() + 120
    rows = []
    while time.monotonic() < deadline:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as db:
            rows = db.execute("SELECT created_at, delivered_at, response_ms, attempts FROM webhook_deliveries "
                              "WHERE status = 'delivered'").fetchall()
        if len(rows) >= expected:
            break
        time.sleep(0.2)
    waits = [((delivered - created) * 1000 - millis) for created, delivered, millis, _ in rows]
    attempts = [millis for _, _, millis, _ in rows]
    print(f"trace: {len(rows)} of {expected} deliveries noted delivered, {sum(1 for row in rows if row[3] > 1)} after more than one "
          f"attempt; commit -> attempt starts {percentiles(waits)}; the attempt {percentiles(attempts)}; "
          f"{receiver.connections} connections to the receiver for {receiver.requests} requests")


def thread_names(pid):
    """The server's threads by their kernel name (Linux), each name with its threads' CPU time so far
    (`schedstat`, nanoseconds on a CPU): the webhook sender has one thread, `fs-webhook-send`, driving every
    attempt, so its CPU time over the events delivered is the CPU per attempt."""
    names = {}
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/comm") as file:
                name = file.read().strip()
            with open(f"/proc/{pid}/task/{task}/schedstat") as file:
                nanos = int(file.read().split()[0])
            count, total = names.get(name, (0, 0))
            names[name] = (count + 1, total + nanos)
    except (OSError, ValueError, IndexError):
        return "unknown"
    return ", ".join(f"{name} {count} ({total / 1e6:.0f} ms CPU)"
                     for name, (count, total) in sorted(names.items(), key=lambda item: -item[1][1]))


def in_flight_at(moments, intervals):
    """For each moment (sorted or not), how many of `intervals` (start, end) were under way at it."""
    import bisect
    starts = sorted(start for start, _ in intervals)
    ends = sorted(end for _, end in intervals)
    return [bisect.bisect_right(starts, moment) - bisect.bisect_right(ends, moment) for moment in moments]


# The legs of hand-over -> receiver in the trace's order: the push handed the delivery over; a sender turn took it
# into its endpoint's queue; a turn gave it a slot and signed it (the attempt's start; since the turn deals a
# burst out to the sender's threads, the thread it was dealt to signed it, so this leg includes that hand-over);
# the sender's thread added its transfer to a multi handle; libcurl began the transfer; libcurl had sent the
# request; the receiver read it.
LEGS = ["hand-over -> taken into the queue", "taken -> slot and signature (attempt start)", "attempt start -> transfer added",
        "transfer added -> libcurl began it", "libcurl began -> request sent", "request sent -> receiver"]


def timing(errors, receiver, slots):
    """Commit -> receiver and its parts, from the server's "Webhook delivery timed" lines (first attempt of each
    event that reached the receiver)."""
    first = {}
    attempts = []
    with open(errors, errors="replace") as file:
        for line in file:
            if "Webhook delivery timed" not in line:
                continue
            fields = dict(pair.split("=", 1) for pair in line.split() if "=" in pair)
            attempts.append((float(fields["started"]), float(fields["finished"])))
            event = fields.get("event")
            if event and event not in first:
                first[event] = fields
    parts = {"occurredAt -> commit": [], "commit -> hand-over": [], "hand-over -> attempt start": [],
             "attempt start -> receiver": [], "commit -> receiver": []}
    unstamped = []
    handed_waits = []
    legs = {name: [] for name in LEGS}
    for event, (arrived, occurred) in receiver.arrivals.items():
        fields = first.get(event)
        if fields is None or fields.get("committed", "-") == "-":
            unstamped.append((arrived - occurred) * 1000)
            continue
        committed, handed, started = (float(fields[key]) for key in ("committed", "handed", "started"))
        parts["occurredAt -> commit"].append((committed - occurred) * 1000)
        parts["commit -> hand-over"].append((handed - committed) * 1000)
        parts["hand-over -> attempt start"].append((started - handed) * 1000)
        parts["attempt start -> receiver"].append((arrived - started) * 1000)
        parts["commit -> receiver"].append((arrived - committed) * 1000)
        handed_waits.append((handed, (started - handed) * 1000))
        # The finer legs, from servers whose trace has them (taken, added, curlStart, sent).
        stamps = [handed] + [float(fields[key]) if fields.get(key, "-") != "-" else None
                             for key in ("taken", "started", "added", "curlStart", "sent")] + [arrived]
        if None not in stamps:
            for name, (begin, end) in zip(LEGS, zip(stamps, stamps[1:])):
                legs[name].append((end - begin) * 1000)
    stamped = len(parts["commit -> receiver"])
    print(f"timing trace: {stamped} events handed over at commit, {len(unstamped)} claimed by the service "
          f"(occurredAt -> receiver {percentiles(unstamped)})")
    for name, values in parts.items():
        print(f"  {name}: {percentiles(values)}")
    if legs[LEGS[0]]:
        print(f"  hand-over -> receiver, leg by leg ({len(legs[LEGS[0]])} events):")
        for name in LEGS:
            print(f"    {name}: {percentiles(legs[name])}")
    moments = [handed for handed, _ in handed_waits]
    counts = in_flight_at(moments, attempts)
    # The queue ahead of each hand-over: deliveries handed over no later and not started yet (the trace has no
    # time for when the service's own claims were queued, so they are not counted).
    ahead = [count - 1 for count in in_flight_at(moments, [(handed, handed + wait / 1000) for handed, wait in handed_waits])]
    free = [wait for (_, wait), count in zip(handed_waits, counts) if count < slots]
    full = [wait for (_, wait), count in zip(handed_waits, counts) if count >= slots]
    print(f"  hand-over -> attempt start, fewer than {slots} attempts under way at hand-over ({len(free)} events): {percentiles(free)}")
    print(f"  hand-over -> attempt start, all {slots} slots taken at hand-over ({len(full)} events): {percentiles(full)}")
    print(f"  handed over and not started yet at an event's hand-over (the queue ahead of it): {percentiles(ahead, unit='')}")
    under_way = in_flight_at([start for start, _ in attempts], attempts)
    print(f"  attempts under way when an attempt starts: {percentiles(under_way, unit='')}")
    return parts["commit -> receiver"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("--devices", type=int, default=200)
    parser.add_argument("--device-period-ms", type=int, default=0,
                        help="each device pushes once a period, the devices spread over it (0: all at once)")
    parser.add_argument("--batches-in-flight", type=int)
    parser.add_argument("--receiver-nice", type=int, help="the receiver thread's nice value (below 0 needs root)")
    parser.add_argument("--keep", help="a directory to keep the server's log and the receiver's arrivals in")
    parser.add_argument("--receiver", choices=["processes", "single"], default="processes",
                        help="processes sharing the port, checking signatures (default), or the one asyncio thread of before")
    parser.add_argument("--receiver-processes", type=int, default=4)
    parser.add_argument("--database", help="an empty PostgreSQL database for the server (postgres://...); "
                        "SQLite in a temporary directory without it")
    options = parser.parse_args()
    if options.device_period_ms < 0:
        parser.error("--device-period-ms must be 0 or more")
    server_bin = os.path.join(os.path.abspath(options.bin), "fieldsheet-server")
    loadgen = os.path.join(os.path.abspath(options.bin), "fieldsheet-loadgen")
    work = tempfile.mkdtemp(prefix="fieldsheet-webhook-bench-")
    storage = ["--database", options.database] if options.database else ["--data", os.path.join(work, "data")]
    server = None
    receiver = None
    try:
        if options.receiver == "single":
            receiver = Receiver(options.receiver_nice)
        else:
            receiver = ProcessReceiver(max(1, options.receiver_processes), options.receiver_nice)
        if options.receiver == "single":
            threading.Thread(target=receiver.serve, daemon=True).start()
        else:
            receiver.serve()
        if not receiver.ready.wait(10):
            sys.exit("the receiver did not start")
        run(server_bin, "project", "create", "bench", *storage)
        token = run(server_bin, "user", "add", "bench", "--project", "bench", "--role", "reviewer", *storage).strip()
        fields = [{"id": f"f{n}", "kind": "text", "label": f"Field {n}"} for n in range(1, 21)]
        wide = os.path.join(work, "wide.json")
        with open(wide, "w") as file:
            json.dump({"id": "wide", "version": 1, "title": "Wide Record", "completionLabel": "Create",
                       "pages": [{"id": "main", "fields": fields}]}, file)
        run(server_bin, "form", "publish", wide, "--project", "bench", *storage)
        run(server_bin, "webhooks", "add", f"http://127.0.0.1:{receiver.port}/events", "--project", "bench",
            "--secret", SECRET, *storage)
        out = os.path.join(work, "server.out")
        in_flight = ["--webhook-batches-in-flight", str(options.batches_in_flight)] if options.batches_in_flight else []
        errors = os.path.join(work, "server.err")
        server = subprocess.Popen([server_bin, "serve", *storage, "--port", "0", "--log-level", "trace",
                                   "--webhooks-allow-private-addresses", *in_flight], stdout=open(out, "w"), stderr=open(errors, "w"))
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            url = next((line.split()[2] for line in open(out) if line.startswith("listening on ")), None)
            time.sleep(0.05)
        if url is None:
            sys.exit("the server did not start")
        expected = options.devices * 3 * 10
        began = time.monotonic()
        table = subprocess.run([loadgen, url, token, str(server.pid), "0", "0", str(options.devices), "0",
                                str(options.device_period_ms)],
                               capture_output=True, text=True, timeout=600)
        pushed = time.monotonic() - began
        if table.returncode != 0:
            sys.exit(f"fieldsheet-loadgen exited {table.returncode}: {table.stderr}")
        deadline = time.monotonic() + 300
        while receiver.received() < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        receiver.collect()
        if len(receiver.latencies) < expected:
            sys.exit(f"only {len(receiver.latencies)} of {expected} events arrived within 300 s")
        drained = time.monotonic() - began
        if receiver.bad_signatures:
            sys.exit(f"{receiver.bad_signatures} requests came with a signature that does not check out")
        latencies = sorted(receiver.latencies.values())
        flight = options.batches_in_flight or "default"
        pace = f", each pushing every {options.device_period_ms} ms" if options.device_period_ms else " at once"
        print(f"webhook latency, {options.devices} devices{pace} (batches in flight per endpoint: {flight}): {expected} events, "
              f"devices done in {pushed:.2f} s, last event received at {drained:.2f} s, {receiver.requests} requests; "
              f"occurredAt -> receiver {percentiles(latencies)}; receiver: {options.receiver}"
              f"{f' x {options.receiver_processes}, signatures checked' if options.receiver == 'processes' else ''}")
        if options.database:
            print(f"trace: (the delivery log is read on SQLite only) {receiver.connections} connections to the receiver "
                  f"for {receiver.requests} requests")
        else:
            trace(os.path.join(work, "data", "fieldsheet.sqlite"), expected, receiver)
        print(f"the server's threads: {thread_names(server.pid)}")
        server.terminate()
        server.wait(timeout=30)
        if options.keep:
            os.makedirs(options.keep, exist_ok=True)
            shutil.copy(errors, os.path.join(options.keep, "server.err"))
            with open(os.path.join(options.keep, "arrivals.json"), "w") as file:
                json.dump(receiver.arrivals, file)
        committed = timing(errors, receiver, 32 * (options.batches_in_flight or 4))
        print(f"commit -> receiver ({len(committed)} events): {percentiles(committed)}")
    finally:
        if receiver is not None:
            receiver.stop()
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
