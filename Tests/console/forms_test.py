#!/usr/bin/env python3
"""Running a project's forms from the web console, in a real browser (headless Chromium through Selenium) against
the real fieldsheet-server on a loopback port, with the real `fieldsheet` CLI as the collector's device.

The project's admin uploads an XLSForm workbook with a mistake, sees the finding at its cell, fixes the
workbook and uploads it again, reads the preview and publishes it. The collector syncs and fills records on the
device. The admin ticks two records in the submissions table and approves them at once, then sends one back
with a comment, which the device shows after its next sync. The admin closes the form: a new record from the
device is refused with the reason, and the console says the form is closed. The map of the form's records draws
each located record as a link, and following one opens that record. The audit log holds a line for each of the
admin's acts. Every page is shown at a desk's width
(1280 px) and a phone's (390 px), screenshots kept; no page may log a browser console error (CSP violations
included) or scroll sideways on the phone, and axe-core finds no serious or critical violation on the pages touched.

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL names a server (a database of its own is
created there and dropped afterwards).

Usage: forms_test.py BIN_DIR [SCREENSHOT_DIR]   (screenshots in SCREENSHOT_DIR/forms/BACKEND; the directory
defaults to .build/console-screenshots)
"""
import os
import re
import subprocess
import sys

from openpyxl import Workbook
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test  # noqa: E402  (the shared scaffolding: Browser, Device, check, run, wait_until)
from browser_test import Browser, Device, check, close, on_each_backend, report_failure, run, script, wait_until  # noqa: E402

COMMENT = "Photo of the gate is missing."
SITES = [("North gate", "52.5200,13.4050"), ("South yard", "52.5100,13.3900"), ("East shed", "52.5150,13.4200")]

def workbook(path, list_name):
    """The site survey as an XLSForm workbook; `list_name` is the list its choice question names (a list the
    choices sheet does not have is the mistake the first upload makes)."""
    book = Workbook()
    survey = book.active
    survey.title = "survey"
    for row in (["type", "name", "label"], ["text", "site", "Site"], [f"select_one {list_name}", "state", "State of the site"],
                ["geopoint", "where", "Where"]):
        survey.append(row)
    choices = book.create_sheet("choices")
    for row in (["list_name", "name", "label"], ["states", "good", "Good"], ["states", "poor", "Poor"]):
        choices.append(row)
    settings = book.create_sheet("settings")
    settings.append(["form_title", "form_id"])
    settings.append(["Site Survey", "site-survey"])
    book.save(path)


def upload(browser, url, path, page):
    driver = browser.driver
    browser.open(url + "/console/projects/demo", "project page")
    form = driver.find_element(By.ID, "upload-form")
    form.find_element(By.ID, "form-file").send_keys(path)
    browser.submit(form, page)
    wait_until(f"the check of {os.path.basename(path)}", lambda: "Checking" in browser.text())


def scenario(backend, work, storage):
    """The admin's session on one storage backend (`storage`: the server's --data or --database option)."""
    shots = os.path.join(browser_test.SHOTS, "forms", backend)
    os.makedirs(work, exist_ok=True)
    server = None
    browser = None
    try:
        run(browser_test.SERVER, "project", "create", "demo", *storage)
        tokens = {name: run(browser_test.SERVER, "user", "add", name, "--project", "demo", "--role", role, *storage).strip()
                  for name, role in (("adam", "admin"), ("ana", "collector"))}
        server, url = browser_test.start_server(work, storage)

        browser = Browser(shots)
        driver = browser.driver
        browser.open(url + "/console/projects/demo", "sign-in")
        driver.find_element(By.ID, "token").send_keys(tokens["adam"])
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form"), "sign-in")
        wait_until("the forms page", lambda: "Forms of demo" in browser.text())
        check("No form is published" in browser.text(), "the new project already lists a form")
        browser.shot("forms-empty")
        browser.accessible("forms page")

        # The workbook with a mistake: the finding at its cell, and nothing to publish.
        wrong = os.path.join(work, "site-survey.xlsx")
        workbook(wrong, "state")
        upload(browser, url, wrong, "upload with a finding")
        findings = driver.find_element(By.ID, "findings").text
        check("survey!A3" in findings and "state" in findings, f"the finding does not name its cell: {findings}")
        check(not driver.find_elements(By.ID, "publish-form"), "a form with an error can be published")
        browser.shot("upload-finding")
        browser.at_phone_width("upload-finding")
        browser.accessible("upload with a finding")

        # Fixed: no finding, the preview, then published.
        workbook(wrong, "states")
        upload(browser, url, wrong, "upload fixed")
        check(not driver.find_elements(By.ID, "findings"), "the fixed workbook still has findings: " + browser.text()[:400])
        preview = driver.find_element(By.ID, "preview").text
        check("State of the site" in preview and "Good" in preview and "Poor" in preview and "location" in preview,
              f"the preview does not show the fields as a person sees them: {preview}")
        browser.shot("upload-preview")
        browser.at_phone_width("upload-preview")
        browser.accessible("upload preview")
        browser.submit(driver.find_element(By.ID, "publish-form"), "publish")
        wait_until("the form to be published", lambda: "Published site-survey version 1." in browser.text())
        browser.shot("forms-published")
        browser.at_phone_width("forms-published")

        # The collector's device gets the form and fills three located records.
        ana = Device(os.path.join(work, "ana"), url, tokens["ana"])
        ana("sync")
        records = []
        for site, where in SITES:
            records.append(ana("fill", "site-survey", "--set", f"site={site}", "--set", "state=good", "--set", f"where={where}",
                               "--complete").strip())
        ana("sync")
        check(all(re.fullmatch(r"[0-9a-f-]{36}", r) for r in records), f"fill printed no record ids: {records}")

        # Bulk review: two ticked records approved at once, then one sent back with a comment.
        browser.open(url + "/console/projects/demo/forms/site-survey", "submissions")
        wait_until("the table", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#bulk-review input[type=checkbox]")) == 3)
        check("All 3 submitted records matching this filter" in browser.text(), "the table does not offer every matching record")
        for record in records[:2]:
            driver.find_element(By.ID, f"select-{record}").click()
        form = driver.find_element(By.ID, "bulk-review")
        form.find_element(By.CSS_SELECTOR, "input[name=decision][value=approved]").click()
        browser.shot("bulk-review")
        browser.submit(form, "bulk approved")
        wait_until("the bulk approval", lambda: "Approved 2 records." in browser.text())
        badges = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.records tbody tr")]
        check(sum("Approved" in row for row in badges) == 2, f"the table does not show two approved records: {badges}")
        browser.shot("bulk-approved")
        browser.at_phone_width("bulk-approved")
        browser.accessible("submissions with bulk review")
        driver.find_element(By.ID, f"select-{records[2]}").click()
        form = driver.find_element(By.ID, "bulk-review")
        form.find_element(By.CSS_SELECTOR, "input[name=decision][value=hasIssues]").click()
        form.find_element(By.ID, "bulk-comment").send_keys(COMMENT)
        browser.submit(form, "bulk sent back")
        wait_until("the record sent back", lambda: "Sent back 1 record." in browser.text())
        ana("sync")
        line = next((l for l in ana("records").splitlines() if l.startswith(records[2])), "")
        check(COMMENT in line, f"the device does not show the comment: {line!r}")

        # The map: each located record a point linking to its page.
        browser.open(url + "/console/projects/demo", "project page")
        driver.find_element(By.ID, "map-site-survey").click()
        browser.collect_console("map")
        wait_until("the map", lambda: driver.find_elements(By.CSS_SELECTOR, "#record-map a"))
        points = driver.find_elements(By.CSS_SELECTOR, "#record-map a")
        check(len(points) == 3, f"the map draws {len(points)} points, not 3")
        check(all(p.find_element(By.TAG_NAME, "title").get_attribute("textContent").startswith("Record ") for p in points),
              "a point has no title")
        browser.shot("map")
        browser.at_phone_width("map")
        browser.accessible("map")
        # The phone's view reloaded the page: the points are found again.
        points = driver.find_elements(By.CSS_SELECTOR, "#record-map a")
        target = next(p for p in points if records[0][:8] in p.get_attribute("aria-label"))
        target.click()
        browser.collect_console("record from the map")
        wait_until("the record from the map", lambda: records[0] in driver.current_url and "North gate" in browser.text())

        # Closing the form: the device's new record is refused with the reason; edits would still be taken.
        browser.open(url + "/console/projects/demo", "project page")
        driver.find_element(By.ID, "close-site-survey").click()
        browser.collect_console("form closed")
        wait_until("the form to be closed", lambda: "Closed site-survey to new records." in browser.text())
        check(driver.find_elements(By.ID, "closed-site-survey"), "the form is not marked closed")
        browser.shot("form-closed")
        browser.at_phone_width("form-closed")
        browser.accessible("forms page with a closed form")
        ana("fill", "site-survey", "--set", "site=Late site", "--set", "state=poor", "--set", "where=52.50,13.41", "--complete")
        sync = subprocess.run([browser_test.CLI, "--home", os.path.join(work, "ana"), "sync"], capture_output=True, text=True, timeout=60)
        check("closed to new records" in sync.stderr, f"the device was not told the form is closed: {sync.stdout}\n{sync.stderr}")
        refused = subprocess.run([browser_test.CLI, "--home", os.path.join(work, "ana"), "fill", "site-survey", "--set", "site=Later"],
                                 capture_output=True, text=True, timeout=60)
        check(refused.returncode != 0 and "closed to new records" in refused.stderr,
              f"the device starts a new record of the closed form: {refused.stdout}\n{refused.stderr}")

        # The audit log holds a line for each of the admin's acts, the command line's setup included.
        browser.open(url + "/console/projects/demo/audit", "audit")
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#audit tbody tr")]
        for action, subject in (("form.uploaded", "site-survey.xlsx"), ("form.published", "site-survey@1"),
                                ("records.reviewed", "site-survey"), ("form.closed", "site-survey"), ("token.issued", "adam")):
            check(any(action in row and subject in row for row in rows), f"the audit log has no {action} line for {subject}:\n" + "\n".join(rows))
        check(sum("records.reviewed" in row for row in rows) == 2, "the two bulk reviews are not two lines:\n" + "\n".join(rows))
        browser.accessible("audit")

        check(not browser.errors, "the browser logged console errors:\n" + "\n".join(browser.errors))
        print(f"console forms test passed on {backend}; screenshots in {shots}")
    except Exception:
        report_failure(browser, work)
        raise
    finally:
        close(browser, server)



if __name__ == "__main__":
    script(lambda: on_each_backend("forms", scenario))
