#!/usr/bin/env python3
"""How fast the OData feed answers at 100,000 records (issue 28's targets: any page of 1,000 records, records or
repeat table, <= 100 ms on the server; `$metadata` of a 500-field form <= 50 ms).

The real fieldsheet-server on loopback (SQLite in a temporary directory, or --database postgres://...). The well
survey form (Tests/odata/well-survey.json: a repeat of pumps holding a repeat of repairs) is filled 100,000 times
through the push API, each record with 1 to 3 pumps and a repair on every other pump; then every page of
`Submissions` and of `Submissions_pumps` is walked by its @odata.nextLink, a filtered walk (review state and
author) and a `$skip` page deep in the set are read, and `$metadata` of a 500-field form is read 20 times. Each
request is timed whole on loopback (request, the server's work, the answer read), so a figure is the server's
time plus the transfer of the page; the first page of each walk is also timed again warm.

The first page of the filtered walk with `$count=true` (the one page of a counted walk that counts) is also read
10 times on its own. `--keep DIR` copies the SQLite data directory to DIR once the server stopped (to time a
migration on a database of this size). `--reuse DIR` starts from a copy of a data directory kept that way
instead of pushing: the set-up command (adding a reviewer, which migrates the copy first) is timed, and the walks
run on the very records the kept run pushed, so two builds compare on one database. `--filtered-only` reads only
the filtered walk, its counted first page and the unfiltered first page (warm, the control for the load).

Usage: odata_bench.py BIN_DIR [--records N] [--database postgres://...] [--keep DIR | --reuse DIR] [--filtered-only]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

FORM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "well-survey.json")


def run(*arguments):
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"{' '.join(arguments)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def call(url, token, body=None):
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return response.read()


def timed(url, token):
    began = time.perf_counter()
    body = call(url, token)
    return (time.perf_counter() - began) * 1000, body


def summary(times):
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, len(ordered) * 99 // 100)]
    return (f"{len(times)} requests: median {statistics.median(times):.1f} ms, p99 {p99:.1f} ms, "
            f"slowest {max(times):.1f} ms, first {times[0]:.1f} ms, last {times[-1]:.1f} ms")


def walk(url, token, path):
    """Every page of an entity set by its next links: the times, and how many entities."""
    times, entities, next_url = [], 0, url + path
    while next_url:
        millis, body = timed(next_url, token)
        page = json.loads(body)
        times.append(millis)
        entities += len(page["value"])
        next_url = page.get("@odata.nextLink")
    return times, entities


def wide_form(fields):
    kinds = ["text", "integer", "decimal", "boolean", "date", "singleChoice", "multipleChoice", "location"]
    definitions = []
    for n in range(fields):
        kind = kinds[n % len(kinds)]
        field = {"id": f"f{n}", "kind": kind, "label": f"Field {n}"}
        if kind in ("singleChoice", "multipleChoice"):
            field["choices"] = [{"value": f"c{c}", "label": f"Choice {c}"} for c in range(5)]
        definitions.append(field)
    return {"id": "wide", "version": 1, "title": "Wide", "completionLabel": "Submit",
            "pages": [{"id": f"p{p}", "fields": definitions[p * 50:(p + 1) * 50]} for p in range(fields // 50)]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--database")
    parser.add_argument("--keep")
    parser.add_argument("--reuse")
    parser.add_argument("--filtered-only", action="store_true")
    options = parser.parse_args()
    server_bin = os.path.join(os.path.abspath(options.bin), "fieldsheet-server")
    work = tempfile.mkdtemp(prefix="fieldsheet-odata-bench-")
    storage = ["--database", options.database] if options.database else ["--data", os.path.join(work, "data")]
    backend = "PostgreSQL" if options.database else "SQLite"
    server = None
    try:
        if options.reuse:
            shutil.copytree(options.reuse, os.path.join(work, "data"))
            began = time.monotonic()
            rita = run(server_bin, "user", "add", "rita-again", "--project", "bench", "--role", "reviewer", *storage).strip()
            print(f"reused {options.reuse}: adding a reviewer (migrating the copy first, if it needs it) took {time.monotonic() - began:.2f} s")
        else:
            run(server_bin, "project", "create", "bench", *storage)
            rita = run(server_bin, "user", "add", "rita", "--project", "bench", "--role", "reviewer", *storage).strip()
            tokens = [run(server_bin, "user", "add", name, "--project", "bench", "--role", "collector", *storage).strip() for name in ("ana", "bob")]
            run(server_bin, "form", "publish", FORM, "--project", "bench", *storage)
            wide = os.path.join(work, "wide.json")
            with open(wide, "w") as file:
                json.dump(wide_form(500), file)
            run(server_bin, "form", "publish", wide, "--project", "bench", *storage)
        out = os.path.join(work, "server.out")
        server = subprocess.Popen([server_bin, "serve", *storage, "--port", "0", "--log-level", "error"], stdout=open(out, "w"))
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            url = next((line.split()[2] for line in open(out) if line.startswith("listening on ")), None)
            time.sleep(0.05)
        if url is None:
            sys.exit("the server did not start")

        if not options.reuse:
            started = time.monotonic()
            millis = int(time.time() * 1000) - 3_600_000
            pumps = 0
            for batch in range(0, options.records, 1000):
                mutations = []
                for n in range(batch, min(batch + 1000, options.records)):
                    hlc = (millis + n) << 16

                    def change(value):
                        return {"value": value, "baseRevision": 0, "hlc": hlc}
                    changes = {"site": change({"text": f"Well {n}"}), "households": change({"integer": n % 500}),
                               "depth": change({"decimal": f"{n % 90}.5"}), "working": change({"boolean": n % 3 != 0}),
                               "rating": change({"choice": "good" if n % 2 else "poor"})}
                    for position in range(1 + n % 3):
                        pump = str(uuid.uuid4())
                        changes[f"pumps/{pump}/@position"] = change({"integer": position})
                        changes[f"pumps/{pump}/pump_type"] = change({"text": f"type {position}"})
                        changes[f"pumps/{pump}/flow"] = change({"decimal": f"{position + 10}.5"})
                        if position % 2 == 0:
                            repair = str(uuid.uuid4())
                            changes[f"pumps/{pump}/repairs/{repair}/@position"] = change({"integer": 0})
                            changes[f"pumps/{pump}/repairs/{repair}/part"] = change({"text": "seal"})
                        pumps += 1
                    mutations.append({"mutationId": f"m{n}", "recordId": str(uuid.uuid4()), "formId": "well-survey", "formVersion": 1,
                                      "state": "submitted", "changes": changes})
                token = tokens[(batch // 1000) % 2]
                call(f"{url}/v1/projects/bench/push", token, json.dumps({"clientId": f"bench-{token[:6]}", "mutations": mutations}).encode())
            print(f"{options.records} records ({pumps} pumps) pushed in {time.monotonic() - started:.0f} s ({backend})")

        root = "/v1/projects/bench/forms/well-survey/odata/"
        if not options.filtered_only:
            times, entities = walk(url, rita, root + "Submissions")
            print(f"Submissions, every page by nextLink: {entities} records, {summary(times)}")
            times, entities = walk(url, rita, root + "Submissions_pumps")
            print(f"Submissions_pumps, every page by nextLink: {entities} rows, {summary(times)}")
        query = urllib.parse.urlencode({"$filter": "__reviewState eq 'received' and __author eq 'bob'", "$count": "true"})
        times, entities = walk(url, rita, root + "Submissions?" + query)
        print(f"Submissions filtered (review state and author: one of the two collectors): {entities} records, {summary(times)}")
        counted = [timed(url + root + "Submissions?" + query, rita)[0] for _ in range(10)]
        print(f"Submissions filtered with $count=true, first page again (it counts): {summary(counted)}")
        warm = [timed(url + root + "Submissions", rita)[0] for _ in range(10)]
        print(f"Submissions first page again, warm: {summary(warm)}")
        if options.filtered_only:
            return
        deep = [timed(url + root + "Submissions?" + urllib.parse.urlencode({"$skip": options.records - 1000}), rita)[0] for _ in range(5)]
        print(f"Submissions $skip={options.records - 1000} (an offset, not a cursor): {summary(deep)}")
        metadata = [timed(url + "/v1/projects/bench/forms/wide/odata/$metadata", rita)[0] for _ in range(20)]
        print(f"$metadata of a 500-field form: {summary(metadata)}")
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
        if options.keep and not options.database:
            shutil.copytree(os.path.join(work, "data"), options.keep)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
