#!/usr/bin/env python3
"""A new office team runs a whole project from the web console, in a real browser (headless Chromium through
Selenium) against the real fieldsheet-server on a loopback port, with nothing but the console and the real
`fieldsheet` CLI on the collector's device. The only shell step is the server's first admin
(`user add root --server-admin`).

The admin signs in, creates a project, invites a collector and a reviewer (each one's login code shown as text
and as a QR code), and the collector's device enrols with its code. The admin uploads an XLSForm workbook with a
mistake, sees the finding at its cell, fixes it, previews and publishes it. The device collects three records;
the admin approves two at once in the submissions table and sends the third back with a comment, which the
device shows. The device starts a draft of version 1 answering the location, a field version 2 drops; the admin
publishes version 2 from the console (a workbook without the location, with a notes field) while the device
holds the draft; after a sync the draft opens on version 2 with its other answers, the location shown once as
not in version 2; it is finished and sent, and the console's record page says which version each change of its
history was made against, the location kept there. The audit log holds a line for each act.

Every page is shown at a desk's width (1280 px) and a phone's (390 px), screenshots kept; no page may log a
browser console error (CSP violations included) or scroll sideways on the phone, and axe-core finds no serious or
critical violation on the pages touched. The pieces people_test.py and forms_test.py check in depth (QR codes,
revocation, the map, closing a form) are theirs; their helpers are used here, not copied.

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL names a server.

Usage: office_test.py BIN_DIR [SCREENSHOT_DIR]   (screenshots in SCREENSHOT_DIR/office/BACKEND)
"""
import os
import re
import sys

from openpyxl import load_workbook
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test  # noqa: E402
from browser_test import Browser, check, close, on_each_backend, report_failure, run, script, wait_until  # noqa: E402
from forms_test import upload, workbook  # noqa: E402
from people_test import cli, decoded_qr  # noqa: E402

COMMENT = "The gate photo is missing."
SITES = [("North gate", "52.5200,13.4050"), ("South yard", "52.5100,13.3900"), ("East shed", "52.5150,13.4200")]


def workbook_version_2(path):
    """The site survey's second version: the location question replaced by a notes question."""
    workbook(path, "states")
    book = load_workbook(path)
    survey = book["survey"]
    for cell, value in zip(survey[4], ("text", "notes", "Notes")):
        cell.value = value
    book.save(path)


def device(home, *arguments):
    """The collector's CLI; fails the test on a non-zero exit status."""
    status, out, err = cli(home, *arguments)
    check(status == 0, f"fieldsheet {' '.join(arguments)} exited {status}:\n{out}\n{err}")
    return out


def scenario(backend, work, storage):
    shots = os.path.join(browser_test.SHOTS, "office", backend)
    os.makedirs(work, exist_ok=True)
    server = None
    browser = None
    try:
        root = run(browser_test.SERVER, "user", "add", "root", "--server-admin", *storage).strip()
        server, url = browser_test.start_server(work, storage)
        browser = Browser(shots)
        driver = browser.driver

        def page(name, phone=True, reload=True):
            """A screenshot at a desk's width, the same at a phone's, and axe-core's check."""
            browser.shot(name)
            browser.accessible(name)
            if phone:
                browser.at_phone_width(name, reload=reload)

        # Sign in, create the project.
        browser.open(url + "/console", "sign-in")
        driver.find_element(By.ID, "token").send_keys(root)
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form[action='/console/login']"), "sign-in")
        wait_until("the projects page", lambda: "Create a project" in browser.text())
        page("projects")
        driver.find_element(By.ID, "project-name").send_keys("demo")
        browser.submit(driver.find_element(By.ID, "new-project"), "create project")
        wait_until("the new project's people page", lambda: "People of demo" in browser.text())

        # Invite a collector and a reviewer; each gets a login code.
        codes = {}
        for name, role in (("ana", "collector"), ("rita", "reviewer")):
            browser.open(url + "/console/projects/demo/users", "people")
            driver.find_element(By.ID, "invite-name").send_keys(name)
            Select(driver.find_element(By.ID, "invite-role")).select_by_value(role)
            browser.submit(driver.find_element(By.ID, "invite"), "invite " + name)
            codes[name] = wait_until(f"{name}'s login code", lambda: driver.find_element(By.ID, "login-code").text.strip())
            held = decoded_qr(browser, work)
            check(held is None or codes[name] in held, f"the QR code holds {held!r}, not {name}'s code")
            if name == "ana":
                page("login-code", reload=False)
        browser.open(url + "/console/projects/demo/users", "people")
        check("ana" in browser.text() and "rita" in browser.text() and "reviewer" in browser.text(), "the people page does not list the invited")
        page("people")

        # The collector's device enrols with its code.
        home = os.path.join(work, "ana")
        out = device(home, "login", "--server", url, "--code", codes["ana"])
        check("as a member of demo" in out, f"login --code says {out}")

        # The form: a workbook with a mistake, its finding at its cell; fixed, previewed, published.
        path = os.path.join(work, "site-survey.xlsx")
        workbook(path, "state")
        upload(browser, url, path, "upload with a finding")
        findings = driver.find_element(By.ID, "findings").text
        check("survey!A3" in findings, f"the finding does not name its cell: {findings}")
        check(not driver.find_elements(By.ID, "publish-form"), "a form with an error can be published")
        page("upload-finding", reload=False)
        workbook(path, "states")
        upload(browser, url, path, "upload fixed")
        check(not driver.find_elements(By.ID, "findings"), "the fixed workbook still has findings")
        check("State of the site" in driver.find_element(By.ID, "preview").text, "the preview does not show the form")
        page("upload-preview", reload=False)
        browser.submit(driver.find_element(By.ID, "publish-form"), "publish")
        wait_until("version 1 published", lambda: "Published site-survey version 1." in browser.text())
        page("published", reload=False)

        # Collecting on the device.
        device(home, "sync")
        records = [device(home, "fill", "site-survey", "--set", f"site={site}", "--set", "state=good", "--set", f"where={where}",
                          "--complete").split()[0] for site, where in SITES]
        check(all(re.fullmatch(r"[0-9a-f-]{36}", r) for r in records), f"fill printed no record ids: {records}")
        device(home, "sync")

        # Bulk review: two approved at once, the third sent back with a comment the device then shows.
        browser.open(url + "/console/projects/demo/forms/site-survey", "submissions")
        wait_until("the table", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#bulk-review input[type=checkbox]")) == 3)
        for record in records[:2]:
            driver.find_element(By.ID, f"select-{record}").click()
        form = driver.find_element(By.ID, "bulk-review")
        form.find_element(By.CSS_SELECTOR, "input[name=decision][value=approved]").click()
        browser.submit(form, "bulk approved")
        wait_until("the bulk approval", lambda: "Approved 2 records." in browser.text())
        page("bulk-approved", reload=False)
        driver.find_element(By.ID, f"select-{records[2]}").click()
        form = driver.find_element(By.ID, "bulk-review")
        form.find_element(By.CSS_SELECTOR, "input[name=decision][value=hasIssues]").click()
        form.find_element(By.ID, "bulk-comment").send_keys(COMMENT)
        browser.submit(form, "bulk sent back")
        wait_until("the record sent back", lambda: "Sent back 1 record." in browser.text())
        device(home, "sync")
        line = next((l for l in device(home, "records").splitlines() if l.startswith(records[2])), "")
        check(COMMENT in line, f"the device does not show the comment: {line!r}")

        # The device holds a draft of version 1, answering the location; version 2 (no location, a notes
        # question) is published from the console meanwhile.
        status, out, err = cli(home, "fill", "site-survey", "--set", "site=West pier", "--set", "where=52.5300,13.3800", "--dismiss")
        draft = out.split()[0] if out.split() else ""
        check(status == 3 and re.fullmatch(r"[0-9a-f-]{36}", draft), f"the draft was not kept ({status}): {out}{err}")
        device(home, "sync")
        workbook_version_2(path)
        upload(browser, url, path, "upload version 2")
        check(not driver.find_elements(By.ID, "findings"), "version 2 has findings: " + browser.text()[:600])
        check("Notes" in driver.find_element(By.ID, "preview").text, "the preview does not show version 2")
        page("upload-version-2", reload=False)
        browser.submit(driver.find_element(By.ID, "publish-form"), "publish version 2")
        wait_until("version 2 published", lambda: "Published site-survey version 2." in browser.text())

        # The draft moves over: on version 2, its site kept, the location shown once as not in version 2.
        device(home, "sync")
        status, out, err = cli(home, "resume", draft, "--dismiss")
        check(status == 3 and "This draft moved from version 1 to version 2 of the form site-survey." in err
              and "These answers are not in version 2 of the form: Where:" in err, f"the draft did not move over ({status}): {out}{err}")
        shown = device(home, "show", draft)
        check("West pier" in shown and "52.53" not in shown, f"the moved draft shows {shown}")
        status, out, err = cli(home, "resume", draft, "--set", "state=poor", "--set", "notes=Pier closed for repairs", "--complete")
        check(status == 0 and "not in version 2" not in err, f"the moved draft was not submitted, or the move was shown again ({status}): {out}{err}")
        device(home, "sync")

        # Its page: the history names the version of each change, the location kept in the one made on version 1.
        browser.open(url + f"/console/projects/demo/records/{draft}", "moved record")
        history = wait_until("the record's history", lambda: driver.find_element(By.CSS_SELECTOR, "ol.history").text)
        check("form version 1 · created as draft" in history and "form version 2 · draft → submitted" in history,
              f"the history does not name each change's version:\n{history}")
        check("Where: (empty) → 52.53" in history and "Where: 52.53" in history and "→ (empty)" in history,
              f"the history does not keep the location given on version 1:\n{history}")
        check("Notes: (empty) → Pier closed for repairs" in history, f"the history lacks the answer given on version 2:\n{history}")
        page("moved-record")
        driver.execute_script("document.querySelector('ol.history').scrollIntoView();")
        browser.shot("moved-record-history")

        # The audit log holds a line for each act.
        browser.open(url + "/console/projects/demo/audit", "audit")
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#audit tbody tr")]
        for action, subject, count in (("project.created", "demo", 1), ("member.invited", "ana", 1), ("member.invited", "rita", 1),
                                       ("login-code.created", "", 2), ("login-code.used", "ana", 1), ("form.uploaded", "site-survey.xlsx", 3),
                                       ("form.published", "site-survey@1", 1), ("form.published", "site-survey@2", 1),
                                       ("records.reviewed", "site-survey", 2)):
            found = sum(action in row and subject in row for row in rows)
            check(found >= count, f"the audit log has {found} {action} line(s) for {subject!r}, not {count}:\n" + "\n".join(rows))
        page("audit")
        browser.open(url + "/console/audit", "server audit")
        check("sign-in" in browser.text(), "the server's audit log has no sign-in")

        check(not browser.errors, "the browser logged console errors:\n" + "\n".join(browser.errors))
        print(f"console office test passed on {backend}; screenshots in {shots}")
    except Exception:
        report_failure(browser, work)
        raise
    finally:
        close(browser, server)


if __name__ == "__main__":
    script(lambda: on_each_backend("office", scenario))
