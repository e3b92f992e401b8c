#!/usr/bin/env python3
"""Where a webhook event waits between its hand-over and its attempt, from a scheduler trace taken beside
`webhook_bench.py --keep DIR` (issue 28's last target: commit -> receiver p50 <= 20 ms, p99 <= 200 ms).

Take the trace with `perf record -k mono -e sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new -a -o
DIR/perf.data` around the bench run (tracepoints only: no hardware counters needed), write the offset of
CLOCK_REALTIME over CLOCK_MONOTONIC to DIR/clock (seconds, one line; `time.time() -
time.clock_gettime(time.CLOCK_MONOTONIC)`), then `perf script -i DIR/perf.data -F comm,pid,tid,cpu,time,event,trace
> DIR/sched.txt` and run `webhook_sched.py DIR`.

It finds, by what they do rather than by name (threads may inherit their creator's name): the server (the process
with the most threads), the receiver's thread (the Python thread that the server's threads wake most), the dispatcher (the server thread that started the most threads) and the attempt workers (the threads it
started). For each it reports its time on a CPU, its time runnable but waiting for
a CPU (woken or preempted, not yet running) and the wait from each wake-up to running. For each event handed over
(`DIR/server.err`'s "Webhook delivery timed" lines) it splits hand-over -> attempt start into the wait until the
dispatcher next ran after the hand-over and the rest (the wait for a free slot in the endpoint's queue and for the
worker to run). Only the busy window is counted: from the first hand-over to the last attempt's end.

Usage: webhook_sched.py DIR
"""
import bisect
import collections
import re
import sys

LINE = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def pct(values, unit=" ms", scale=1000.0):
    ordered = sorted(values)
    if not ordered:
        return "none"
    pick = lambda q: ordered[min(len(ordered) - 1, int(len(ordered) * q))] * scale
    return f"p50 {pick(0.5):.1f}{unit}, p90 {pick(0.9):.1f}{unit}, p99 {pick(0.99):.1f}{unit}, max {ordered[-1] * scale:.1f}{unit} (n={len(ordered)})"


def main():
    folder = sys.argv[1]
    offset = float(open(f"{folder}/clock").readline())
    events = []  # (time, kind, cpu, current tid, fields)
    pid_of = {}
    comm_of = {}
    for raw in open(f"{folder}/sched.txt", errors="replace"):
        match = LINE.match(raw)
        if not match:
            continue
        comm, pid, tid, cpu, time, kind, rest = match.groups()
        pid, tid = int(pid), int(tid)
        if tid:
            pid_of[tid] = pid
        fields = dict(FIELD.findall(rest))
        if kind == "sched_switch":
            comm_of[int(fields["next_pid"])] = fields["next_comm"]
        events.append((float(time) + offset, kind, int(cpu), tid, fields))

    # The delivery log's timing lines: hand-over, start, finish per attempt.
    timed = []
    for line in open(f"{folder}/server.err", errors="replace"):
        if "Webhook delivery timed" not in line:
            continue
        fields = dict(pair.split("=", 1) for pair in line.split() if "=" in pair)
        handed = None if fields.get("handed", "-") == "-" else float(fields["handed"])
        dispatched = None if fields.get("dispatched", "-") in ("-", None) else float(fields["dispatched"])
        timed.append((handed, dispatched, float(fields["started"]), float(fields["finished"])))
    begin = min(h for h, _, _, _ in timed if h is not None)
    end = max(f for _, _, _, f in timed)
    print(f"busy window: {end - begin:.2f} s ({len(timed)} attempts, {sum(1 for t in timed if t[0] is not None)} handed over)")

    threads_of = collections.defaultdict(set)
    for tid, pid in pid_of.items():
        threads_of[pid].add(tid)
    server = max(threads_of, key=lambda pid: len(threads_of[pid]))
    server_threads = threads_of[server]

    wakes = collections.Counter()  # (waker, wakee)
    for time, kind, cpu, tid, fields in events:
        if kind == "sched_wakeup" and begin <= time <= end:
            wakes[(tid, int(fields["pid"]))] += 1
    from_server = collections.Counter()
    for (waker, wakee), count in wakes.items():
        if waker in server_threads and wakee not in server_threads and comm_of.get(wakee, "").startswith("python"):
            from_server[wakee] += count
    receiver = from_server.most_common(1)[0][0]
    # The dispatcher starts the attempt workers' threads: the server thread that created the most threads.
    created = collections.defaultdict(set)
    for time, kind, cpu, tid, fields in events:
        if kind == "sched_wakeup_new" and tid in server_threads:
            created[tid].add(int(fields["pid"]))
    dispatcher = max(created, key=lambda tid: len(created[tid]))
    workers = created[dispatcher]
    print(f"server pid {server} ({len(server_threads)} threads); receiver thread {receiver} (pid {pid_of[receiver]}); "
          f"{len(workers)} attempt workers; dispatcher thread {dispatcher}")

    # Per thread: on-CPU, runnable-waiting, and each wake-up's wait to run, inside the window.
    running_since = {}
    runnable_since = {}
    on_cpu = collections.Counter()
    runnable = collections.Counter()
    wake_waits = collections.defaultdict(list)
    runs = collections.defaultdict(list)  # tid -> [(start, end)]
    cpu_busy = collections.Counter()  # (cpu, pid) -> seconds
    current = {}
    for time, kind, cpu, tid, fields in events:
        if kind in ("sched_wakeup", "sched_wakeup_new"):
            wakee = int(fields["pid"])
            if wakee not in running_since and wakee not in runnable_since:
                runnable_since[wakee] = (time, True)
        elif kind == "sched_switch":
            prev, nxt = int(fields["prev_pid"]), int(fields["next_pid"])
            if prev in running_since:
                start = running_since.pop(prev)
                a, b = max(start, begin), min(time, end)
                if b > a:
                    on_cpu[prev] += b - a
                    cpu_busy[(cpu, pid_of.get(prev, -1))] += b - a
                runs[prev].append((start, time))
            if fields["prev_state"].startswith("R"):
                runnable_since[prev] = (time, False)
            if nxt in runnable_since:
                since, woken = runnable_since.pop(nxt)
                a, b = max(since, begin), min(time, end)
                if b > a:
                    runnable[nxt] += b - a
                if woken and begin <= time <= end:
                    wake_waits[nxt].append(time - since)
            if nxt:
                running_since[nxt] = time
    window = end - begin

    def report(name, tids):
        waits = [w for tid in tids for w in wake_waits[tid]]
        print(f"{name}: on a CPU {sum(on_cpu[t] for t in tids) / window * 100:.0f}% of the window, runnable and waiting "
              f"{sum(runnable[t] for t in tids) / window * 100:.0f}%; wake-up -> running {pct(waits)}")

    report("dispatcher", [dispatcher])
    report("attempt workers (together)", workers)
    report("receiver", [receiver])
    others = server_threads - workers - {dispatcher}
    report("the server's other threads (together)", others)
    for cpu in sorted({c for c, _ in cpu_busy}):
        shares = sorted(((seconds, pid) for (c, pid), seconds in cpu_busy.items() if c == cpu), reverse=True)
        total = sum(seconds for seconds, _ in shares)
        names = ", ".join(f"{'server' if pid == server else 'receiver' if pid == pid_of[receiver] else pid} {seconds / window * 100:.0f}%"
                          for seconds, pid in shares[:4])
        print(f"cpu {cpu}: busy {total / window * 100:.0f}% of the window ({names})")

    # Each handed-over event: hand-over -> the dispatcher's next run -> attempt start.
    starts = sorted(start for start, _ in runs[dispatcher])
    ends = [e for _, e in sorted(runs[dispatcher])]
    to_dispatcher, after_dispatcher, to_dispatched, dispatched_to_start = [], [], [], []
    for handed, dispatched, started, _ in timed:
        if handed is None:
            continue
        # The dispatcher's first run that ends after the hand-over (a run under way at the hand-over may have
        # taken its queue already; then the next one takes it).
        i = bisect.bisect_left(ends, handed)
        if i >= len(starts):
            continue
        ran = max(starts[i], handed)
        to_dispatcher.append(ran - handed)
        after_dispatcher.append(started - ran)
        if dispatched is not None:
            to_dispatched.append(dispatched - handed)
            dispatched_to_start.append(started - dispatched)
    print(f"hand-over -> the dispatcher next on a CPU: {pct(to_dispatcher)}")
    print(f"the dispatcher on a CPU -> attempt start: {pct(after_dispatcher)}")
    if to_dispatched:
        print(f"hand-over -> dispatched to a worker (server stamp): {pct(to_dispatched)}")
        print(f"dispatched -> attempt start (the worker's wake-up): {pct(dispatched_to_start)}")


if __name__ == "__main__":
    main()
