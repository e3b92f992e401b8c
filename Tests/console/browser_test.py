#!/usr/bin/env python3
"""The web console in a real browser: headless Chromium driven by Selenium against the real fieldsheet-server
on a loopback port, with the real `fieldsheet` CLI as the collector's device.

A reviewer signs in with her token, filters the submissions table, opens a record, rejects it with a comment;
the collector's device shows the comment after a sync; the collector fixes the record and syncs; the console
shows it `edited`. Entity lists: a list of households imported from CSV (`fieldsheet-server entities import`)
and a household registered and then visited from two devices through the push API (the record's entity change
as a device writes it on submission), so that both visits changed the same property since the same revision:
the reviewer pages the list's table (next, previous, last), searches and filters it, opens the household and
sees its properties, its history and the conflict (both values, who wrote each, which was kept), rejects one
visit in review and sees the history mark that change as coming from a rejected record. No page may log a browser console error (CSP violations included), and the table and the
record page must fit a phone's width (390 CSS pixels) without the page scrolling sideways.

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL names a server (a database of its own
is created there and dropped afterwards).

Usage: browser_test.py BIN_DIR [SCREENSHOT_DIR]   (screenshots default to .build/console-screenshots/BACKEND)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug")
SHOTS = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else ".build/console-screenshots")
SERVER = os.path.join(BIN, "fieldsheet-server")
CLI = os.path.join(BIN, "fieldsheet")
FORMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Schema", "forms")
ENTITY_FORMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forms")
HOSTILE_HOUSEHOLD = "Zawadi <b>bold</b> & <script>alert(2)</script>"
HOUSEHOLDS = 120
COMMENT = "Count the spare pumps too."
HOSTILE = "Roof <script>alert(1)</script> & \"annex\""
PHONE_WIDTH = 390


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(*arguments, env=None, stdin=""):
    result = subprocess.run(arguments, input=stdin, capture_output=True, text=True, timeout=60, env=env)
    if result.returncode != 0:
        raise Failure(f"{' '.join(arguments)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def wait_until(what, predicate, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except (StaleElementReferenceException, NoSuchElementException):
            # The page was replaced (a form's answer loading) between finding an element and reading it.
            value = None
        except WebDriverException as error:
            # The same race as Chromium's driver sometimes reports it: not as a stale element but as an
            # "unknown error" from its inspector, the node found no longer in the document.
            if "does not belong to the document" not in str(error):
                raise
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise Failure(f"timed out after {seconds} s waiting for {what}")


class Device:
    """A collector's device: the fieldsheet CLI with its own home."""

    def __init__(self, home, url, token):
        self.home = home
        run(CLI, "--home", home, "login", url, "--project", "demo", env={**os.environ, "FIELDSHEET_TOKEN": token})

    def __call__(self, *arguments):
        return run(CLI, "--home", self.home, *arguments)


class Browser:
    def __init__(self, shots):
        self.shots = shots
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
        self.errors = []

    def collect_console(self, page):
        for entry in self.driver.get_log("browser"):
            if entry.get("level") in ("SEVERE", "ERROR"):
                self.errors.append(f"{page}: {entry.get('message')}")

    def open(self, url, page):
        self.driver.get(url)
        self.collect_console(page)

    def submit(self, form, page):
        form.submit()
        self.collect_console(page)

    def text(self):
        return self.driver.find_element(By.TAG_NAME, "body").text

    def shot(self, name):
        os.makedirs(self.shots, exist_ok=True)
        self.driver.save_screenshot(os.path.join(self.shots, name + ".png"))

    def at_phone_width(self, name, reload=True):
        """Shows the current page as a phone would (390 px wide, mobile viewport) and checks nothing overflows.
        A page that answered a form post is not reloaded (that would post the form again): `reload=False`
        applies the phone's metrics to the page as it is."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": PHONE_WIDTH, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        try:
            if reload:
                self.driver.refresh()
                self.collect_console(name)
            else:
                wait_until("the phone's width", lambda: self.driver.execute_script("return window.innerWidth;") == PHONE_WIDTH)
            widths = self.driver.execute_script(
                "return [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth];")
            self.shot(name + "-phone")
            check(widths[0] <= PHONE_WIDTH and widths[1] <= PHONE_WIDTH,
                  f"{name} overflows a phone's width: page {widths[0]} px, body {widths[1]} px, viewport {widths[2]} px")
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def accessible(self, page):
        """Runs axe-core (4.9, which selenium-axe-python bundles) on the current page: no serious or critical
        violation."""
        from selenium_axe_python import Axe
        axe = Axe(self.driver)
        axe.inject()
        violations = [v for v in axe.run()["violations"] if v.get("impact") in ("serious", "critical")]
        check(not violations, f"axe-core finds on {page}:\n" + axe.report(violations))


def push(url, token, client_id, mutations):
    """Pushes mutations as the device `client_id` would; returns the outcomes."""
    body = json.dumps({"clientId": client_id, "mutations": mutations}).encode()
    request = urllib.request.Request(f"{url}/v1/projects/demo/push", data=body,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        outcomes = json.loads(response.read())["outcomes"]
    check(all(o.get("status") == "applied" for o in outcomes), f"the push was not applied: {outcomes}")
    return outcomes


def submitted(record, form, answers, millis, entity):
    """A submitted record's mutation: its answers and the entity change the device decided on submission
    (the reserved field __entity), every field stamped at `millis`."""
    hlc = millis << 16
    changes = {name: {"value": value, "baseRevision": 0, "hlc": hlc} for name, value in answers.items()}
    changes["__entity"] = {"value": {"text": json.dumps(entity, sort_keys=True)}, "baseRevision": 0, "hlc": hlc}
    return {"mutationId": str(uuid.uuid4()), "recordId": record, "formId": form, "formVersion": 1, "state": "submitted",
            "changes": changes}


def entity_pages(browser, url, tokens):
    """The households list: registered on ana's device, visited on ana's and bob's since the same revision."""
    driver = browser.driver
    household = str(uuid.uuid4())
    visit_ana, visit_bob = str(uuid.uuid4()), str(uuid.uuid4())
    now = int(time.time() * 1000)
    push(url, tokens["ana"], "ana-phone", [submitted(
        household, "household-register", {"head_name": {"text": "Amina Yusuf"}, "members": {"integer": 4}, "district": {"text": "North"}},
        now - 60_000, {"list": "households", "entityId": household, "action": "create", "baseRevision": 0, "label": "Amina Yusuf"})])
    # Both devices held revision 1 and changed the members offline; Ana's change is the later one, so Bob's is
    # the one logged.
    push(url, tokens["ana"], "ana-phone", [submitted(
        visit_ana, "household-visit", {"household": {"choice": household}, "members": {"integer": 5}},
        now - 20_000, {"list": "households", "entityId": household, "action": "update", "baseRevision": 1})])
    push(url, tokens["bob"], "bob-phone", [submitted(
        visit_bob, "household-visit", {"household": {"choice": household}, "members": {"integer": 7}},
        now - 40_000, {"list": "households", "entityId": household, "action": "update", "baseRevision": 1})])

    # From the project page to the list's table.
    browser.open(url + "/console/projects/demo", "project with entity lists")
    driver.find_element(By.ID, "entity-lists").click()
    browser.collect_console("entity lists")
    wait_until("the entity lists", lambda: "households" in browser.text() and "Entity lists of demo" in browser.text())
    check("head_name (text)" in browser.text() and "members (integer)" in browser.text(), "the list's properties are not shown with their kinds")
    browser.shot("entity-lists")
    driver.find_element(By.LINK_TEXT, "households").click()
    browser.collect_console("entity table")

    def labels():
        return [row.find_element(By.CSS_SELECTOR, "td a").text for row in driver.find_elements(By.CSS_SELECTOR, "table.entities tbody tr")]

    def go(rel, name):
        driver.find_element(By.CSS_SELECTOR, f"nav.pager a[rel={rel}]").click()
        browser.collect_console(name)

    first = wait_until("the entity table", lambda: labels() if driver.find_elements(By.CSS_SELECTOR, "table.entities") else None)
    # 121 households ordered by label: Amina, Household 001…, and the hostile label last (Z).
    check(len(first) == 50 and first[0] == "Amina Yusuf" and first[1] == "Household 001", f"the first page is {first[:3]}… ({len(first)})")
    headers = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "table.entities thead th")]
    check(headers == ["Label", "district", "head_name", "members", "Creator", "Assignee", "Last change"], f"the table's headers are {headers}")
    check(not driver.find_elements(By.CSS_SELECTOR, "nav.pager a[rel=prev]"), "the first page links to a previous one")
    browser.shot("entity-table")
    browser.at_phone_width("entity-table")
    go("next", "entity table page 2")
    second = wait_until("the second page", lambda: labels() if "after=" in driver.current_url else None)
    check(second[0] == "Household 051" and len(second) == 50, f"the second page starts {second[:2]}")
    go("last", "entity table last page")
    last = wait_until("the last page", lambda: labels() if "last=1" in driver.current_url else None)
    check(len(last) == 50 and last[-1] == HOSTILE_HOUSEHOLD and not driver.find_elements(By.CSS_SELECTOR, "nav.pager a[rel=next]"),
          f"the last page ends {last[-2:]} ({len(last)} rows)")
    go("prev", "entity table before the last")
    before = wait_until("the page before the last", lambda: labels() if "before=" in driver.current_url else None)
    check(before[-1] == "Household " + f"{int(last[0].split()[1]) - 1:03d}" and len(before) == 50,
          f"the page before the last ends {before[-1]}, the last starts {last[0]}")

    # Search by label, then filter by a property and by assignee.
    browser.open(url + "/console/projects/demo/entities/households", "entity table")
    filters = driver.find_element(By.ID, "entity-filters")
    filters.find_element(By.NAME, "q").send_keys("household 11")
    browser.submit(filters, "entity search")
    found = wait_until("the search", lambda: labels() if "q=household" in driver.current_url else None)
    check(found == [f"Household {n}" for n in range(110, 120)], f"searching 'household 11' finds {found}")
    browser.open(url + "/console/projects/demo/entities/households?property=district&value=South&assignee=bob&col=members", "entity filter")
    found = labels()
    check(found == [f"Household {n:03d}" for n in range(10, 121, 10)], f"South households assigned to bob: {found}")
    headers = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "table.entities thead th")]
    check(headers == ["Label", "members", "Creator", "Assignee", "Last change"], f"the chosen column is not the only one: {headers}")
    browser.accessible("entity table")
    browser.open(url + "/console/projects/demo/entities/households?q=zawadi", "entity search hostile")
    check(labels() == [HOSTILE_HOUSEHOLD], "the hostile label is not shown as text")
    check(not driver.find_elements(By.CSS_SELECTOR, "table.entities b"), "the hostile label's markup was rendered")

    # The household: properties, conflict, history with the records that changed it.
    browser.open(url + "/console/projects/demo/entities/households?q=Amina", "entity search")
    driver.find_element(By.LINK_TEXT, "Amina Yusuf").click()
    browser.collect_console("entity")
    wait_until("the entity page", lambda: "Properties" in browser.text())
    properties = {item.find_element(By.TAG_NAME, "dt").text: item.find_element(By.TAG_NAME, "dd").text
                  for item in driver.find_elements(By.CSS_SELECTOR, "#properties > div")}
    # The list's other declared properties (the example household forms save village and water_source too)
    # have no value on this household.
    held = {name: value for name, value in properties.items() if value != "(empty)"}
    check(held == {"district text": "North", "head_name text": "Amina Yusuf", "members integer": "5"}, f"the properties are {properties}")
    # Bob's value lost: it changed nothing, so the entity is at the revision Ana's visit made.
    check(driver.find_element(By.ID, "entity-revision").text == "2", "the entity is not at revision 2")
    conflicts = driver.find_elements(By.CSS_SELECTOR, "section.entity-conflict")
    check(len(conflicts) == 1, f"{len(conflicts)} conflicts shown")
    conflict = conflicts[0].text
    check("members" in conflict and "Held by the server" in conflict and "5" in conflict and "ana on ana-phone" in conflict
          and "From the record" in conflict and "7" in conflict and "bob on bob-phone" in conflict and visit_bob[:8] in conflict,
          f"the conflict shows {conflict!r}")
    kept = conflicts[0].find_element(By.CSS_SELECTOR, ".badge").find_element(By.XPATH, "..").text
    check(kept.startswith("5"), f"the kept value is not Ana's 5: {kept!r}")
    history = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#entity-history > li")]
    check(len(history) == 2, f"the history has {len(history)} entries: {history}")
    check("created by a record" in history[0] and household[:8] in history[0] and "ana on ana-phone" in history[0], f"history: {history[0]!r}")
    check("updated by a record" in history[1] and visit_ana[:8] in history[1] and "members: 4 → 5" in history[1]
          and "rejected" not in history[1].lower(), f"history: {history[1]!r}")
    browser.shot("entity")
    browser.accessible("entity")
    browser.at_phone_width("entity")

    # Ana's visit rejected in review: its record's page links to the household, whose history marks the change.
    driver.find_element(By.LINK_TEXT, visit_ana[:8]).click()
    browser.collect_console("visit record")
    wait_until("the visit's record page", lambda: driver.find_elements(By.ID, "record-entity"))
    check(driver.find_element(By.ID, "record-entity").text == "Amina Yusuf", "the record page does not link to its entity")
    form = driver.find_element(By.ID, "review-form")
    form.find_element(By.CSS_SELECTOR, "input[value=rejected]").click()
    browser.submit(form, "visit rejected")
    wait_until("the review to be saved", lambda: driver.find_element(By.ID, "review-state").text == "Rejected")
    driver.find_element(By.ID, "record-entity").click()
    browser.collect_console("entity after rejection")
    wait_until("the entity page again", lambda: driver.find_elements(By.ID, "entity-history"))
    history = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#entity-history > li")]
    check("Rejected" in history[1] and "rejected in review; its change stays applied" in history[1], f"the rejected change: {history[1]!r}")
    check("rejected" not in history[0].lower(), f"the registration is marked: {history[0]!r}")
    members = driver.find_element(By.XPATH, "//dl[@id='properties']/div[dt[starts-with(., 'members')]]/dd").text
    check(members == "5", f"the rejected record's value is no longer applied: members {members!r}")
    browser.shot("entity-rejected")
    driver.find_element(By.ID, "created-by").click()
    wait_until("the registration record", lambda: "Register a household" in browser.text())
    check(driver.find_element(By.ID, "record-entity").text == "Amina Yusuf", "the registration does not link to its entity")


def scenario(backend, work, storage):
    """The reviewer's loop on one storage backend (`storage`: the server's --data or --database option)."""
    shots = os.path.join(SHOTS, backend)
    os.makedirs(work, exist_ok=True)
    server = None
    browser = None
    try:
        run(SERVER, "project", "create", "demo", *storage)
        tokens = {name: run(SERVER, "user", "add", name, "--project", "demo", "--role", role, *storage).strip()
                  for name, role in (("rita", "reviewer"), ("ana", "collector"), ("bob", "collector"))}
        for form in sorted(os.listdir(FORMS)):
            run(SERVER, "form", "publish", os.path.join(FORMS, form), "--project", "demo", *storage)
        for form in sorted(os.listdir(ENTITY_FORMS)):
            run(SERVER, "form", "publish", os.path.join(ENTITY_FORMS, form), "--project", "demo", *storage)
        # The households list from a CSV: 120 households (every tenth assigned to bob), one with a hostile label.
        households = os.path.join(work, "households.csv")
        with open(households, "w") as out:
            out.write("label,assignee,district,members,head_name\n")
            for n in range(1, HOUSEHOLDS + 1):
                name = HOSTILE_HOUSEHOLD if n == 7 else f"Household {n:03d}"
                quoted = '"' + name.replace('"', '""') + '"'
                out.write(f"{quoted},{'bob' if n % 10 == 0 else ''},{'North' if n % 2 else 'South'},{n % 9 + 1},Head {n}\n")
        imported = run(SERVER, "entities", "import", households, "--project", "demo", "--list", "households", "--user", "rita", *storage)
        check(f"imported {HOUSEHOLDS} rows" in imported, f"the import says {imported!r}")
        server, url = start_server(work, storage)

        ana = Device(os.path.join(work, "ana"), url, tokens["ana"])
        bob = Device(os.path.join(work, "bob"), url, tokens["bob"])
        ana("sync")
        bob("sync")
        job = ana("fill", "follow-up-job", "--set", "site=B2 basement", "--set", "priority=normal", "--set", "technicians=2",
                  "--complete").strip()
        ana("fill", "follow-up-job", "--set", f"site={HOSTILE}", "--set", "priority=high",
            "--set", "reason=Leak", "--complete")
        bob("fill", "follow-up-job", "--set", "site=Bob's yard", "--set", "priority=low", "--complete")
        ana("sync")
        bob("sync")
        check(re.fullmatch(r"[0-9a-f-]{36}", job), f"fill printed no record id: {job!r}")

        browser = Browser(shots)
        driver = browser.driver
        # Signing in: the console sends the browser to the sign-in page, which turns the token into a session.
        browser.open(url + "/console/projects/demo", "sign-in")
        check("/console/login" in driver.current_url, f"not sent to sign in: {driver.current_url}")
        browser.shot("sign-in")
        driver.find_element(By.ID, "token").send_keys(tokens["rita"])
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form"), "sign-in")
        wait_until("the forms page", lambda: "Forms of demo" in browser.text())
        session = next((c for c in driver.get_cookies() if c["name"] == "fieldsheet_session"), None)
        check(session and session.get("httpOnly") and session.get("sameSite") == "Strict",
              f"the session cookie is not HttpOnly and SameSite=Strict: {session}")
        browser.shot("forms")

        # The submissions table, then filtered by author.
        driver.find_element(By.LINK_TEXT, "New Follow-up Job").click()
        browser.collect_console("submissions")
        wait_until("the table", lambda: driver.find_elements(By.CSS_SELECTOR, "table.records tbody tr"))
        check(len(driver.find_elements(By.CSS_SELECTOR, "table.records tbody tr")) == 3, "the table does not hold the 3 records")
        check(HOSTILE in browser.text(), "the hostile site name is not shown as text")
        filters = driver.find_element(By.CSS_SELECTOR, "form.filters")
        filters.find_element(By.NAME, "author").send_keys("ana")
        browser.submit(filters, "submissions filtered")
        # The rows' texts are read inside the wait, which retries while the filtered page replaces the old one.
        rows = wait_until("the filtered table", lambda: [r.text for r in driver.find_elements(By.CSS_SELECTOR, "table.records tbody tr")
                                                        if "author=ana" in driver.current_url])
        check(len(rows) == 2 and all("ana" in text for text in rows), f"filtering by author ana shows {rows}")
        browser.shot("submissions")
        browser.at_phone_width("submissions")

        # One record: labelled answers, then rejected with a comment.
        driver.find_element(By.LINK_TEXT, job[:8]).click()
        browser.collect_console("record")
        wait_until("the record page", lambda: "Answers" in browser.text())
        check("B2 basement" in browser.text() and "Site" in browser.text(), "the record page does not show the labelled answers")
        browser.shot("record")
        browser.at_phone_width("record")
        form = driver.find_element(By.ID, "review-form")
        form.find_element(By.CSS_SELECTOR, "input[value=rejected]").click()
        form.find_element(By.ID, "comment").send_keys(COMMENT)
        browser.submit(form, "record after review")
        wait_until("the review to be saved", lambda: driver.find_element(By.ID, "review-state").text == "Rejected")
        check(driver.find_element(By.ID, "review-comment").text == COMMENT, "the review comment is not shown")
        browser.shot("record-rejected")

        # The collector's device shows the comment after a sync; the fix goes back as an edit.
        ana("sync")
        line = next((l for l in ana("records").splitlines() if l.startswith(job)), "")
        check(line.endswith(f"sent back (rejected): {COMMENT}"), f"fieldsheet records shows {line!r}")
        check(f"Review:  sent back (rejected): {COMMENT}" in ana("show", job), "fieldsheet show does not show the review")
        ana("edit", job, "--set", "technicians=5", "--complete")
        ana("sync")

        browser.open(driver.current_url.split("?")[0], "record after the fix")
        check(driver.find_element(By.ID, "review-state").text == "Edited", "the fixed record is not shown as edited")
        check("technicians" in browser.text().lower() and "5" in browser.text(), "the fixed value is not shown")
        browser.shot("record-edited")
        browser.open(url + "/console/projects/demo/forms/follow-up-job?review=edited", "submissions edited")
        rows = driver.find_elements(By.CSS_SELECTOR, "table.records tbody tr")
        check(len(rows) == 1 and job[:8] in rows[0].text, "the edited filter does not show exactly the fixed record")

        # A form written in English and French, filled on the device in French (choices typed by their French
        # labels): the reviewer reads it in the form's default language, then in French from the page's language
        # links; the stored values are the same either way.
        visit = ana("fill", "site-visit", "--language", "fr", "--set", "site_name=Dépôt B", "--set", "site_type=Bureau",
                    "--set", "ppe_checked=yes", "--set", "rating=Bon", "--complete").strip()
        ana("sync")
        check(re.fullmatch(r"[0-9a-f-]{36}", visit), f"fill printed no record id: {visit!r}")
        record_url = f"{url}/console/projects/demo/records/{visit}"
        browser.open(record_url, "bilingual record")
        languages = driver.find_element(By.ID, "languages")
        check("Type of site" in browser.text() and "Office" in browser.text() and "Bureau" not in browser.text(),
              "the record is not shown in the form's default language (English)")
        check(languages.find_element(By.CSS_SELECTOR, "strong").text == "English (en)", "the language shown is not marked")
        languages.find_element(By.LINK_TEXT, "Français (fr)").click()
        wait_until("the record in French", lambda: "Type de site" in browser.text())
        check("lang=Fran" in driver.current_url, f"the language is not in the address: {driver.current_url}")
        text = browser.text()
        check("Nom du site" in text and "Dépôt B" in text and "Bureau" in text and "Bon" in text and "Type of site" not in text,
              "the record is not shown in French")
        browser.shot("record-french")
        browser.accessible("record")
        browser.at_phone_width("record-french")
        browser.open(record_url + "?lang=de", "record in an unknown language")
        check("not written in \"de\"" in browser.text() and "Type of site" in browser.text(),
              "an unknown language is not explained, or the page is not in the default language")
        # The form's records table in French, reached from the record page in French: the headers and choices read
        # in French, its rows open records in French, and a review saved there returns to the page in French.
        browser.open(record_url + "?lang=fr", "bilingual record in French")
        driver.find_element(By.LINK_TEXT, "site-visit").click()
        browser.collect_console("bilingual submissions")
        def headers():
            return [h.text for h in driver.find_elements(By.CSS_SELECTOR, "table.records thead th")]
        wait_until("the table in French", lambda: "Nom du site" in headers())
        check(headers()[-3:] == ["Nom du site", "Visité le", "Type de site"], f"the table's headers are {headers()}")
        check("Bureau" in driver.find_element(By.CSS_SELECTOR, "table.records tbody").text, "a choice in the table is not in French")
        check(driver.find_element(By.CSS_SELECTOR, "#languages strong").text == "Français (fr)", "the table's language is not marked")
        browser.shot("submissions-french")
        browser.at_phone_width("submissions-french")
        driver.find_element(By.LINK_TEXT, visit[:8]).click()
        wait_until("the record in French from the table", lambda: "Type de site" in browser.text())
        form = driver.find_element(By.ID, "review-form")
        form.find_element(By.CSS_SELECTOR, "input[value=approved]").click()
        browser.submit(form, "bilingual record after review")
        wait_until("the review to be saved", lambda: driver.find_element(By.ID, "review-state").text == "Approved")
        check("Type de site" in browser.text() and "lang=Fran" in driver.current_url,
              f"after the review the record is not in French: {driver.current_url}")

        # A record of 120 instances is paged: 50 instances at a time, with links to the next and previous 50.
        sets = ["--set", "site=Depot"]
        for index in range(1, 121):
            sets += ["--set", f"defects[{index}].location=Bay {index}", "--set", f"defects[{index}].severity=low",
                     "--set", f"defects[{index}].action=note"]
        big = ana("fill", "defect-inspection", *sets, "--complete").strip()
        ana("sync")
        browser.open(f"{url}/console/projects/demo/records/{big}", "record of 120 instances")
        def instances():
            return [h.text for h in driver.find_elements(By.CSS_SELECTOR, "section.instance > h4")]
        check(instances() == [f"Defect {n}" for n in range(1, 51)], f"the first page shows {len(instances())} instances")
        check("Defects: 1–50 of 120" in browser.text(), "the first page does not say which instances it shows")
        check(not driver.find_elements(By.CSS_SELECTOR, "a.previous-instances"), "the first page links to a previous one")
        browser.shot("record-paged")
        browser.at_phone_width("record-paged")
        driver.find_element(By.CSS_SELECTOR, "a.next-instances").click()
        wait_until("the second page", lambda: "Defects: 51–100 of 120" in browser.text())
        check(instances() == [f"Defect {n}" for n in range(51, 101)], f"the second page shows {instances()[:3]}…")
        # The answers only: the history below lists some of the fill's changes, whichever instances they were.
        answers = driver.find_element(By.CSS_SELECTOR, "dl.answers").text
        check("Bay 51" in answers and "Bay 50" not in answers, "the second page shows other instances' answers")
        driver.find_element(By.CSS_SELECTOR, "a.next-instances").click()
        wait_until("the last page", lambda: "Defects: 101–120 of 120" in browser.text())
        check(instances() == [f"Defect {n}" for n in range(101, 121)], "the last page does not show the last 20")
        check(not driver.find_elements(By.CSS_SELECTOR, "a.next-instances"), "the last page links to a next one")
        driver.find_element(By.CSS_SELECTOR, "a.previous-instances").click()
        wait_until("the page before", lambda: "Defects: 51–100 of 120" in browser.text())
        check(len(driver.find_elements(By.CSS_SELECTOR, "ol.history li li")) <= 51, "a history entry lists more than 50 changes")

        entity_pages(browser, url, tokens)

        # Signing out ends the session.
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form[action='/console/logout']"), "sign-out")
        wait_until("the signed-out page", lambda: "You are signed out." in browser.text())
        browser.open(url + "/console/projects/demo", "after sign-out")
        check("/console/login" in driver.current_url, "the session still works after signing out")

        check(not browser.errors, "the browser logged console errors:\n" + "\n".join(browser.errors))
        print(f"console browser test passed on {backend}; screenshots in {shots}")
    except Exception:
        report_failure(browser, work)
        raise
    finally:
        close(browser, server)


def on_each_backend(name, scenario):
    """Runs `scenario(backend, work, storage)` on SQLite, then on PostgreSQL in a database of its own when
    FIELDSHEET_TEST_POSTGRES_URL names a server (dropped afterwards); `storage` is the server's --data or
    --database option. What every console browser script does."""
    work = tempfile.mkdtemp(prefix=f"fieldsheet-{name}-")
    try:
        scenario("sqlite", os.path.join(work, "sqlite"), ["--data", os.path.join(work, "sqlite", "server")])
        url = os.environ.get("FIELDSHEET_TEST_POSTGRES_URL")
        if not url:
            print(f"NOTE: FIELDSHEET_TEST_POSTGRES_URL is not set: the {name} test ran on SQLite only.")
            return
        database = f"fieldsheet_{name.replace('-', '_')}_" + uuid.uuid4().hex[:12]
        run("psql", url, "-q", "-c", f"CREATE DATABASE {database}")
        try:
            parts = urllib.parse.urlsplit(url)
            scenario("postgres", os.path.join(work, "postgres"), ["--database", parts._replace(path="/" + database).geturl()])
        finally:
            run("psql", url, "-q", "-c", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def start_server(work, storage, *options, binary=None):
    """Starts `fieldsheet-server serve` on a free loopback port with the scenario's storage and any further
    options; its output goes to `work`/server.out and its log to `work`/server.log (which `report_failure`
    shows). Returns the process and the URL it printed, once it listens."""
    out = os.path.join(work, "server.out")
    server = subprocess.Popen([binary or SERVER, "serve", *storage, "--port", "0", "--log-level", "warning", *options],
                              stdout=open(out, "w"), stderr=open(os.path.join(work, "server.log"), "w"))
    url = wait_until("the server to listen", lambda: next(
        (line.split(" ", 2)[2].strip() for line in open(out) if line.startswith("listening on ")), None))
    return server, url


def close(browser, server):
    """At a scenario's end, passed or not: stops its browser and its server (either may not have started)."""
    if browser:
        browser.driver.quit()
    if server:
        server.terminate()
        server.wait(timeout=30)


def report_failure(browser, work):
    """On a failing scenario: a screenshot and the page's text, and the end of the server's log."""
    if browser:
        try:
            browser.shot("failure")
            print(f"page at failure: {browser.driver.current_url}\n{browser.text()[:2000]}", file=sys.stderr)
        except Exception:
            pass
    if os.path.exists(os.path.join(work, "server.log")):
        print("server log:\n" + open(os.path.join(work, "server.log")).read()[-4000:], file=sys.stderr)


def script(main):
    """Runs `main` as a script: a Failure is one line on stderr and exit status 1."""
    try:
        main()
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    script(lambda: on_each_backend("console", scenario))
