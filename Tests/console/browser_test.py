#!/usr/bin/env python3
"""The web console in a real browser: headless Chromium driven by Selenium against the real fieldsheet-server
on a loopback port, with the real `fieldsheet` CLI as the collector's device.

A reviewer signs in with her token, filters the submissions table, opens a record, rejects it with a comment;
the collector's device shows the comment after a sync; the collector fixes the record and syncs; the console
shows it `edited`. No page may log a browser console error (CSP violations included), and the table and the
record page must fit a phone's width (390 CSS pixels) without the page scrolling sideways.

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL names a server (a database of its own
is created there and dropped afterwards).

Usage: browser_test.py BIN_DIR [SCREENSHOT_DIR]   (screenshots default to .build/console-screenshots/BACKEND)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug")
SHOTS = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else ".build/console-screenshots")
SERVER = os.path.join(BIN, "fieldsheet-server")
CLI = os.path.join(BIN, "fieldsheet")
FORMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Schema", "forms")
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

    def at_phone_width(self, name):
        """Shows the current page as a phone would (390 px wide, mobile viewport) and checks nothing overflows."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": PHONE_WIDTH, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        try:
            self.driver.refresh()
            self.collect_console(name)
            widths = self.driver.execute_script(
                "return [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth];")
            self.shot(name + "-phone")
            check(widths[0] <= PHONE_WIDTH and widths[1] <= PHONE_WIDTH,
                  f"{name} overflows a phone's width: page {widths[0]} px, body {widths[1]} px, viewport {widths[2]} px")
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


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
        output = open(os.path.join(work, "server.out"), "w")
        server = subprocess.Popen([SERVER, "serve", *storage, "--port", "0", "--log-level", "warning"],
                                  stdout=output, stderr=open(os.path.join(work, "server.log"), "w"))
        url = wait_until("the server to listen", lambda: next(
            (line.split(" ", 2)[2].strip() for line in open(os.path.join(work, "server.out")) if line.startswith("listening on ")), None))

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
        check(headers()[4:] == ["Nom du site", "Visité le", "Type de site"], f"the table's headers are {headers()}")
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

        # Signing out ends the session.
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form[action='/console/logout']"), "sign-out")
        wait_until("the signed-out page", lambda: "You are signed out." in browser.text())
        browser.open(url + "/console/projects/demo", "after sign-out")
        check("/console/login" in driver.current_url, "the session still works after signing out")

        check(not browser.errors, "the browser logged console errors:\n" + "\n".join(browser.errors))
        print(f"console browser test passed on {backend}; screenshots in {shots}")
    except Exception:
        if browser:
            try:
                browser.shot("failure")
                print(f"page at failure: {browser.driver.current_url}\n{browser.text()[:2000]}", file=sys.stderr)
            except Exception:
                pass
        if os.path.exists(os.path.join(work, "server.log")):
            print("server log:\n" + open(os.path.join(work, "server.log")).read()[-4000:], file=sys.stderr)
        raise
    finally:
        if browser:
            browser.driver.quit()
        if server:
            server.terminate()
            server.wait(timeout=30)


def main():
    work = tempfile.mkdtemp(prefix="fieldsheet-console-")
    try:
        scenario("sqlite", os.path.join(work, "sqlite"), ["--data", os.path.join(work, "sqlite", "server")])
        url = os.environ.get("FIELDSHEET_TEST_POSTGRES_URL")
        if not url:
            print("NOTE: FIELDSHEET_TEST_POSTGRES_URL is not set: the console browser test ran on SQLite only.")
            return
        name = "fieldsheet_console_" + uuid.uuid4().hex[:12]
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
