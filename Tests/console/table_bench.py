#!/usr/bin/env python3
"""How the console's submissions table pages through 100,000 records: the real fieldsheet-server on loopback,
one form filled 100,000 times through the push API, then every page of the table walked by its next-page links.
Prints the median time of the first ten and of the last ten pages (a keyset page deep in the table should cost
what the first one does), for each sort.

Usage: table_bench.py BIN_DIR [--records N] [--database postgres://…]   (SQLite in a temporary directory by default)
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

FORM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Schema", "forms", "follow-up-job.json")


def run(*arguments):
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"{' '.join(arguments)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def call(url, token, body=None):
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read().decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--database")
    options = parser.parse_args()
    server_bin = os.path.join(os.path.abspath(options.bin), "fieldsheet-server")
    work = tempfile.mkdtemp(prefix="fieldsheet-table-bench-")
    storage = ["--database", options.database] if options.database else ["--data", os.path.join(work, "data")]
    server = None
    try:
        run(server_bin, "project", "create", "bench", *storage)
        rita = run(server_bin, "user", "add", "rita", "--project", "bench", "--role", "reviewer", *storage).strip()
        ana = run(server_bin, "user", "add", "ana", "--project", "bench", "--role", "collector", *storage).strip()
        run(server_bin, "form", "publish", FORM, "--project", "bench", *storage)
        out = os.path.join(work, "server.out")
        server = subprocess.Popen([server_bin, "serve", *storage, "--port", "0", "--log-level", "error"], stdout=open(out, "w"))
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            url = next((line.split()[2] for line in open(out) if line.startswith("listening on ")), None)
            time.sleep(0.05)
        if url is None:
            sys.exit("the server did not start")

        started = time.monotonic()
        millis = int(time.time() * 1000) - 3_600_000
        for batch in range(0, options.records, 1000):
            mutations = []
            for n in range(batch, min(batch + 1000, options.records)):
                hlc = (millis + n) << 16
                mutations.append({
                    "mutationId": f"m{n}", "recordId": str(uuid.uuid4()), "formId": "follow-up-job", "formVersion": 1,
                    "state": "submitted",
                    "changes": {"site": {"value": {"text": f"Site {n}"}, "baseRevision": 0, "hlc": hlc},
                                "priority": {"value": {"choice": "normal"}, "baseRevision": 0, "hlc": hlc}}})
            call(f"{url}/v1/projects/bench/push", ana, json.dumps({"clientId": "bench-device", "mutations": mutations}).encode())
        print(f"{options.records} records pushed in {time.monotonic() - started:.0f} s ({'PostgreSQL' if options.database else 'SQLite'})")

        for sort in ("-updated", "created"):
            path = f"/console/projects/bench/forms/follow-up-job?sort={sort}"
            times = []
            rows = 0
            while path:
                began = time.perf_counter()
                html = call(url + path, rita)
                times.append((time.perf_counter() - began) * 1000)
                rows += html.count("/console/projects/bench/records/")
                found = re.search(r'<a href="([^"]+)" rel="next">', html)
                path = found.group(1).replace("&amp;", "&") if found else None
            print(f"sort {sort}: {len(times)} pages, {rows} rows; first 10 pages median {statistics.median(times[:10]):.1f} ms, "
                  f"last 10 pages median {statistics.median(times[-10:]):.1f} ms, slowest {max(times):.1f} ms")
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
