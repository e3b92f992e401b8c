#!/usr/bin/env python3
"""The console's entity table at 1,000,000 entities: the real fieldsheet-server on loopback, one list loaded and then
pages of the table timed as a reviewer's
browser asks for them: the first page, the next ones, a page in the middle by its keyset link, the last page and
the one before it, a search by label (one that matches many entities, one that matches a few, one that matches
none), a filter by a property's value (common and rare) and by assignee.

The load (timed): the first IMPORTED households from a CSV through `fieldsheet-server entities import` (which
declares the list and its properties, and writes each entity, its stamps and history as the office would), then,
on SQLite, the rest copied from those in one SQL statement (each copy with its own id, label and feed sequence,
its fields those of the household it copies with the label changed; no history entries). `--imported N` equal to
`--entities` imports everything through the command (slow: about 2 ms an entity on the shared machine).

Each page is asked for REPEAT times; the median and the slowest are printed (milliseconds, the whole HTTP request
on loopback, so the server's time plus a loopback round trip).

Usage: entity_table_bench.py BIN_DIR [--entities N] [--imported N] [--repeat R] [--database postgres://…]
                              [--data-from DIR] [--keep-data DIR] [--loaded]
       (SQLite by default; on PostgreSQL every entity is imported, unless `--loaded`)

`--data-from DIR` copies a data directory an earlier load left (SQLite; `--keep-data DIR` keeps one) instead of
loading; the first command on the copy (adding a reviewer) migrates it, and its time is printed (a new
migration's cost on an existing list). `--entities` must be the count that directory holds. `--loaded` (with
`--database`) times a PostgreSQL database that already holds the list (loaded by an earlier run, or in SQL as
`copy_in_sql` does): it is migrated by the first command, and left as it is but for one more reviewer.
"""
import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

DISTRICTS = [f"D{n:02d}" for n in range(20)]


def run(*arguments, timeout=3600):
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        sys.exit(f"{' '.join(arguments)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def call(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read().decode()


def entity_id(n):
    """A fixed id per row, so that the middle page's keyset link can be written without reading the table."""
    return str(uuid.UUID(int=n + 1))


def label(n):
    return f"Household {n:07d}"


def write_csv(path, count):
    with open(path, "w") as out:
        out.write("name,label,assignee,district,village,members,head_name,phone,water,latrine,notes\n")
        for n in range(count):
            # Every 1,000th household is assigned to ana; one in 20 of each district.
            assignee = "ana" if n % 1000 == 0 else ""
            out.write(f"{entity_id(n)},{label(n)},{assignee},{DISTRICTS[n % 20]},Village {n % 997},{n % 12 + 1},Head {n},"
                      f"+2557{n:08d},{'well' if n % 3 else 'tap'},{'yes' if n % 2 else 'no'},note {n % 101}\n")


def copy_in_sql(database, imported, count):
    """Fills the list up to `count` households from the `imported` ones: household i copies household i % imported
    (its district, assignee and other values), with its own id, label and sequence."""
    db = sqlite3.connect(database)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        project = db.execute("SELECT id FROM projects WHERE name = 'bench'").fetchone()[0]
        with db:
            db.execute(f"""
                WITH RECURSIVE n(i) AS (SELECT {imported} UNION ALL SELECT i + 1 FROM n WHERE i < {count - 1})
                INSERT INTO entities (project_id, id, list, revision, sequence, creator_id, assignee_id, deleted, label, fields, created_at, updated_at)
                SELECT t.project_id, printf('00000000-0000-0000-0000-%012x', n.i + 1), t.list, 1, n.i + 1, t.creator_id, t.assignee_id, 0,
                       printf('Household %07d', n.i), replace(t.fields, t.label, printf('Household %07d', n.i)), t.created_at, t.updated_at
                FROM n JOIN entities t ON t.project_id = {project} AND t.id = printf('00000000-0000-0000-0000-%012x', n.i % {imported} + 1)
                """)
            db.execute("UPDATE entity_lists SET last_sequence = ? WHERE project_id = ? AND name = 'households'", (count, project))
        db.execute("ANALYZE")
    finally:
        db.close()


def load(options, server_bin, storage, work):
    """Creates the project, its members and the list; returns the reviewer's token."""
    run(server_bin, "project", "create", "bench", *storage)
    rita = run(server_bin, "user", "add", "rita", "--project", "bench", "--role", "reviewer", *storage).strip()
    run(server_bin, "user", "add", "ana", "--project", "bench", "--role", "collector", *storage)
    csv = os.path.join(work, "households.csv")
    imported = options.entities if options.database else min(options.imported, options.entities)
    write_csv(csv, imported)
    started = time.monotonic()
    print(run(server_bin, "entities", "import", csv, "--project", "bench", "--list", "households", "--user", "rita", *storage).strip(),
          flush=True)
    loaded = time.monotonic() - started
    print(f"load: {imported:,} entities ({os.path.getsize(csv) / 1e6:.1f} MB of CSV) imported in {loaded:.1f} s "
          f"({loaded / imported * 1000:.2f} ms an entity; {'PostgreSQL' if options.database else 'SQLite'})", flush=True)
    if imported < options.entities:
        started = time.monotonic()
        copy_in_sql(os.path.join(work, "data", "fieldsheet.sqlite"), imported, options.entities)
        print(f"load: {options.entities - imported:,} more copied in SQL in {time.monotonic() - started:.1f} s", flush=True)
    if not options.database:
        database = os.path.join(work, "data")
        total = sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(database) for f in files)
        print(f"data directory after the load: {total / 1e6:.0f} MB")
    return rita


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--imported", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--database")
    parser.add_argument("--data-from")
    parser.add_argument("--keep-data")
    parser.add_argument("--loaded", action="store_true")
    options = parser.parse_args()
    server_bin = os.path.join(os.path.abspath(options.bin), "fieldsheet-server")
    work = tempfile.mkdtemp(prefix="fieldsheet-entity-bench-")
    storage = ["--database", options.database] if options.database else ["--data", os.path.join(work, "data")]
    server = None
    try:
        if options.data_from or (options.loaded and options.database):
            if options.data_from:
                shutil.copytree(options.data_from, os.path.join(work, "data"))
            # The first command that opens the copy migrates it.
            started = time.monotonic()
            reviewer = f"rena{uuid.uuid4().hex[:8]}" if options.loaded else "rena"
            rita = run(server_bin, "user", "add", reviewer, "--project", "bench", "--role", "reviewer", *storage).strip()
            print(f"migrated (and a reviewer added) in {time.monotonic() - started:.1f} s", flush=True)
        else:
            rita = load(options, server_bin, storage, work)
        if options.keep_data:
            shutil.copytree(os.path.join(work, "data"), options.keep_data)

        out = os.path.join(work, "server.out")
        server = subprocess.Popen([server_bin, "serve", *storage, "--port", "0", "--log-level", "error"], stdout=open(out, "w"))
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            url = next((line.split()[2] for line in open(out) if line.startswith("listening on ")), None)
            time.sleep(0.05)
        if url is None:
            sys.exit("the server did not start")
        base = "/console/projects/bench/entities/households"

        def rows(html):
            return len(re.findall(r'<a href="/console/projects/bench/entities/households/[0-9a-f-]{36}">', html))

        def link(html, rel):
            found = re.search(rf'<a href="([^"]+)" rel="{rel}">', html)
            return found.group(1).replace("&amp;", "&") if found else None

        def timed(name, path, expect_rows=None):
            times = []
            html = ""
            for _ in range(options.repeat):
                began = time.perf_counter()
                html = call(url + path, rita)
                times.append((time.perf_counter() - began) * 1000)
            count = rows(html)
            if expect_rows is not None and count != expect_rows:
                sys.exit(f"{name}: {count} rows, expected {expect_rows} ({path})")
            print(f"{name:<44} {count:>3} rows  median {statistics.median(times):7.1f} ms  slowest {max(times):7.1f} ms", flush=True)
            return html

        middle = options.entities // 2
        cursor = urllib.parse.quote(f"{entity_id(middle)}:{label(middle)}", safe="")
        # Warm the server (the first request compiles nothing, but opens the pool's connections).
        call(url + base, rita)
        first = timed("first page", base, 50)
        second = timed("next page (2nd)", link(first, "next"), 50)
        timed("next page (3rd)", link(second, "next"), 50)
        middle_page = timed(f"middle page (after {label(middle)})", f"{base}?after={cursor}", 50)
        check = re.search(r'<a href="[^"]+">(Household \d+)</a>', middle_page)
        if not check or check.group(1) != label(middle + 1):
            sys.exit(f"the middle page starts at {check.group(1) if check else 'nothing'}, expected {label(middle + 1)}")
        timed("previous page (before the middle)", f"{base}?before={cursor}", 50)
        last = timed("last page", base + "?last=1", 50)
        timed("previous page (before the last)", link(last, "prev"), 50)
        timed("search 'Household 00' (many match, first ones)", base + "?q=Household+00", 50)
        halfway = timed(f"search '{label(middle)[:12]}' (the first match half-way)", base + "?q=" + label(middle)[:12].replace(" ", "+"), 50)
        timed(f"search '{label(middle)[:12]}', next page", link(halfway, "next"), 50)
        timed(f"search '{label(middle)[:12]}', previous page (before the next)", link(call(url + link(halfway, "next"), rita), "prev"), 50)
        timed("search '0999' (1,000 match, spread)", base + "?q=0999", 50)
        timed("search '0999999' (one matches, the last)", base + "?q=0999999", 1 if options.entities == 1_000_000 else None)
        timed("search 'nobody' (none match)", base + "?q=nobody", 0)
        district = timed("filter district = D07 (1 in 20)", base + "?property=district&value=D07", 50)
        timed("filter district = D07, next page", link(district, "next"), 50)
        # Each imported household's head is copied to one household in IMPORTED: a value few entities have.
        timed("filter head_name = 'Head 9999' (few, spread)", base + "?property=head_name&value=Head+9999",
              min(50, options.entities // options.imported) if not options.database and options.imported == 10_000 else None)
        timed("filter note = 'note 7' (1 in 101)", base + "?property=notes&value=note+7", 50)
        timed("filter district = D99 (none match)", base + "?property=district&value=D99", 0)
        timed("filter assignee = ana (1 in 1,000)", base + "?assignee=ana", 50)
        assigned = timed("filter assignee = ana, next page", link(call(url + base + "?assignee=ana", rita), "next"), 50)
        del assigned
        timed("an entity's page", f"{base}/{entity_id(middle)}")
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
