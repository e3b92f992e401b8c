#!/usr/bin/env python3
"""The OData feed and the GeoJSON export against the real fieldsheet-server on a loopback port, read by clients
that are not ours: python-odata (PyPI), an independent OData v4 client that reflects the entity sets from
$metadata, pages through @odata.nextLink and authenticates with HTTP Basic (the user's token as the password,
as Power BI and Excel hold it), and the `geojson` package's validity check. The records are filled and synced
by the real `fieldsheet` CLI (the collector's device), with a repeat group nested in another.

Checks: the record count, one record's typed values, its repeat rows keyed to it (and the nested rows keyed to
their parent instance), a filtered page (review state, author, submission time), following next links across
pages, clear 400 problems for what the feed does not read, and one GeoJSON Feature per located record.

pyodata (SAP's client, named in the issue) speaks OData v2 only (its Client refuses any other version and reads
v2's `d`/`__next` JSON), so it cannot read a v4 feed; python-odata takes its place (docs/integrations.md).

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL is set (in a database of its own).
    python3 Tests/odata/check_feed.py .build/debug
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid

import geojson
import requests
from requests.auth import HTTPBasicAuth
from odata import ODataService

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/debug"
SERVER = os.path.join(BIN, "fieldsheet-server")
CLI = os.path.join(BIN, "fieldsheet")
FORM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "well-survey.json")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(*arguments, env=None, ok=(0,)):
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=120, env=env)
    if result.returncode not in ok:
        raise Failure(f"{' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def wait_until(what, predicate, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise Failure(f"timed out waiting for {what}")


class Device:
    """A collector's device: the fieldsheet CLI with its own home."""

    def __init__(self, home, url, token):
        self.home = home
        run(CLI, "--home", home, "login", url, "--project", "survey", env={**os.environ, "FIELDSHEET_TOKEN": token})

    def __call__(self, *arguments, ok=(0,)):
        return run(CLI, "--home", self.home, *arguments, ok=ok)


def scenario(backend, work, storage):
    os.makedirs(work, exist_ok=True)
    server = None
    try:
        run(SERVER, "project", "create", "survey", *storage)
        tokens = {name: run(SERVER, "user", "add", name, "--project", "survey", "--role", role, *storage).strip()
                  for name, role in (("rita", "reviewer"), ("ana", "collector"), ("bob", "collector"))}
        run(SERVER, "form", "publish", FORM, "--project", "survey", *storage)
        server = subprocess.Popen([SERVER, "serve", *storage, "--port", "0", "--log-level", "warning"],
                                  stdout=open(os.path.join(work, "server.out"), "w"), stderr=open(os.path.join(work, "server.log"), "w"))
        url = wait_until("the server to listen", lambda: next(
            (line.split(" ", 2)[2].strip() for line in open(os.path.join(work, "server.out")) if line.startswith("listening on ")), None))

        ana = Device(os.path.join(work, "ana"), url, tokens["ana"])
        bob = Device(os.path.join(work, "bob"), url, tokens["bob"])
        ana("sync")
        bob("sync")
        first = ana("fill", "well-survey", "--set", "site=Well 1", "--set", "households=42", "--set", "depth=12.5", "--set", "working=yes",
                    "--set", "visited=2026-03-01", "--set", "position=-1.2921, 36.8219, 8", "--set", "rating=good",
                    "--set", "pumps[1].pump_type=hand", "--set", "pumps[1].flow=11.5", "--set", "pumps[1].repairs[1].part=seal",
                    "--set", "pumps[1].repairs[2].part=handle", "--set", "pumps[2].pump_type=solar", "--set", "pumps[2].flow=30",
                    "--complete").strip()
        located = [first]
        for index in range(2, 6):
            sets = ["--set", f"site=Well {index}", "--set", f"households={index}", "--set", f"pumps[1].pump_type=type {index}"]
            if index != 3:
                sets += ["--set", f"position={-1 - index / 10}, {36 + index / 10}"]
            record = (bob if index % 2 == 0 else ana)("fill", "well-survey", *sets, "--complete").strip()
            if index != 3:
                located.append(record)
        ana("fill", "well-survey", "--set", "site=Unfinished", "--dismiss", ok=(3,))  # a draft: the reviewer does not see it
        ana("sync")
        bob("sync")
        before_review = time.time()
        review = requests.post(f"{url}/v1/projects/survey/records/{first}/review",
                               headers={"Authorization": f"Bearer {tokens['rita']}"}, json={"state": "approved"}, timeout=30)
        check(review.status_code == 200, f"review: {review.status_code} {review.text}")

        root = f"{url}/v1/projects/survey/forms/well-survey/odata/"
        session = requests.Session()
        session.headers["Prefer"] = "odata.maxpagesize=2"  # small pages, so reading everything follows next links
        service = ODataService(root, session=session, auth=HTTPBasicAuth("rita", tokens["rita"]), reflect_entities=True, quiet_progress=True)
        check(sorted(service.entities) == ["Submissions", "Submissions_pumps", "Submissions_repairs"], f"entity sets: {sorted(service.entities)}")
        Submission = service.entities["Submissions"]
        Pump = service.entities["Submissions_pumps"]
        Repair = service.entities["Submissions_repairs"]

        # The record count, and every record through the next links (2 per page: 3 pages).
        check(service.query(Submission).count() == 5, f"count: {service.query(Submission).count()}")
        records = service.query(Submission).all()
        check(len(records) == 5 and len({r.__id for r in records}) == 5, f"records read through next links: {len(records)}")
        check([r.__id for r in records] == sorted(r.__id for r in records), "records are in id order")

        # One record's values, typed by its field kinds.
        one = next(r for r in records if r.__id == first)
        check(one.site == "Well 1" and one.households == 42 and float(one.depth) == 12.5, f"values: {one.site} {one.households} {one.depth}")
        check(one.working is True and one.visited == "2026-03-01" and one.rating == "good", f"values: {one.working} {one.visited} {one.rating}")
        check(one.position == {"latitude": -1.2921, "longitude": 36.8219, "accuracy": 8} or one.position == json.dumps(one.position),
              f"position: {one.position!r}")
        check(one.__author == "ana" and one.__reviewState == "approved", f"author {one.__author}, review {one.__reviewState}")

        # Its repeat rows, keyed to it, and the nested rows keyed to their parent instance.
        pumps = [p for p in service.query(Pump).all() if p.__recordId == first]
        check([(p.pump_type, float(p.flow), p.__position) for p in pumps] == [("hand", 11.5, 1), ("solar", 30.0, 2)],
              f"pumps: {[(p.pump_type, p.flow, p.__position) for p in pumps]}")
        check(service.query(Pump).count() == 6, f"pump rows: {service.query(Pump).count()}")
        repairs = service.query(Repair).filter(f"__author eq 'ana'").all()
        check([r.part for r in repairs] == ["seal", "handle"] and all(r.__parentId == pumps[0].__id and r.__recordId == first for r in repairs),
              f"repairs: {[(r.part, r.__parentId) for r in repairs]}")

        # A filtered page: python-odata joins its filters with and, each in parentheses.
        approved = service.query(Submission).filter("__reviewState eq 'approved'").all()
        check([r.__id for r in approved] == [first], f"approved: {[r.__id for r in approved]}")
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(before_review - 3600))
        bobs = service.query(Submission).filter("__author eq 'bob'").filter(f"__submittedAt ge {since}").all()
        check(len(bobs) == 2 and all(r.__author == "bob" for r in bobs), f"bob's: {[r.__author for r in bobs]}")
        check(service.query(Submission).filter("__submittedAt lt 2000-01-01").count() == 0, "nothing was submitted before 2000")

        # A page by hand: the next link is absolute, keeps the filter and $count, and ends.
        auth = HTTPBasicAuth("power-bi", tokens["rita"])
        page = requests.get(root + "Submissions", params={"$filter": "__reviewState ne 'approved'", "$count": "true", "$select": "__id,site"},
                            headers={"Prefer": "odata.maxpagesize=3"}, auth=auth, timeout=30).json()
        check(page["@odata.count"] == 4 and len(page["value"]) == 3 and set(page["value"][0]) == {"__id", "site"}, f"page: {page}")
        following = requests.get(page["@odata.nextLink"], headers={"Prefer": "odata.maxpagesize=3"}, auth=auth, timeout=30).json()
        check(len(following["value"]) == 1 and "@odata.nextLink" not in following, f"next page: {following}")
        # The walk's count is the first page's, carried in the link's $skiptoken: the next page reports it uncounted.
        check(following.get("@odata.count") == 4, f"next page's count: {following.get('@odata.count')}")

        # What the feed does not read is a 400 problem naming the option.
        bad = requests.get(root + "Submissions", params={"$filter": "site eq 'Well 1' or households gt 3"}, auth=auth, timeout=30)
        check(bad.status_code == 400 and bad.headers["Content-Type"] == "application/problem+json" and bad.json()["field"] == "$filter",
              f"bad filter: {bad.status_code} {bad.text}")
        refused = requests.get(root + "Submissions", auth=HTTPBasicAuth("rita", "wrong"), timeout=30)
        check(refused.status_code == 401 and "Basic" in refused.headers.get("WWW-Authenticate", ""), f"wrong token: {refused.status_code}")

        # GeoJSON: valid, one Point feature per located record, longitude first.
        response = requests.get(f"{url}/v1/projects/survey/forms/well-survey/records.geojson", auth=auth, timeout=30)
        check(response.status_code == 200 and response.headers["Content-Type"] == "application/geo+json", f"geojson: {response.status_code}")
        collection = geojson.loads(response.text)
        check(collection.is_valid, f"GeoJSON is not valid: {collection.errors()}")
        features = collection["features"]
        check(sorted(f["id"] for f in features) == sorted(located), f"features: {[f['id'] for f in features]} for {located}")
        feature = next(f for f in features if f["id"] == first)
        check(feature["geometry"]["coordinates"] == [36.8219, -1.2921], f"coordinates: {feature['geometry']}")
        check(feature["properties"]["site"] == "Well 1" and feature["properties"]["households"] == 42, f"properties: {feature['properties']}")
        print(f"{backend}: 5 records, 6 pump rows, 2 repair rows, {len(features)} features; the feed read by python-odata, the GeoJSON valid")
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)


def main():
    work = tempfile.mkdtemp(prefix="fieldsheet-odata-")
    try:
        scenario("sqlite", os.path.join(work, "sqlite"), ["--data", os.path.join(work, "sqlite", "server")])
        url = os.environ.get("FIELDSHEET_TEST_POSTGRES_URL")
        if not url:
            print("NOTE: FIELDSHEET_TEST_POSTGRES_URL is not set: the OData check ran on SQLite only.")
            return
        name = "fieldsheet_odata_" + uuid.uuid4().hex[:12]
        run("psql", url, "-q", "-c", f"CREATE DATABASE {name}")
        try:
            parts = urllib.parse.urlsplit(url)
            scenario("postgres", os.path.join(work, "postgres"), ["--database", parts._replace(path="/" + name).geturl()])
        finally:
            run("psql", url, "-q", "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
