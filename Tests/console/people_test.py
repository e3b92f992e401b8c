#!/usr/bin/env python3
"""People and devices in the web console, in a real browser: headless Chromium driven by Selenium against the real
fieldsheet-server on a loopback port, with the real `fieldsheet` CLI as the collector's device.

As a new office team would: the server admin (the only shell step, `user add root --server-admin`, and publishing
the form) signs in, creates a project, invites a collector and a reviewer, and is shown each one's login code as
text and as a QR code (an inline SVG, read back by zbar's decoder when `zbarimg` is installed). The collector's
device enrols with `fieldsheet login --server URL --code CODE`, fills and syncs a record; the console lists the
device with its last sync and what it had waiting. The admin signs the device out while it holds an unsent record:
its next sync says "This device was signed out by your project's admin.", and the record is still listed and shown
on the device. The audit page shows a line for each act. Screenshots at 1280 and 390 px; no page may log a browser
console error (CSP violations included) or scroll sideways on a phone, and axe-core finds no serious or critical
violation on any of them.

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL names a server.

Usage: people_test.py BIN_DIR [SCREENSHOT_DIR]   (screenshots go to SCREENSHOT_DIR/people-BACKEND)
"""
import os
import re
import shutil
import subprocess

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_test import CLI, FORMS, SERVER, SHOTS, Browser, check, close, on_each_backend, report_failure, run, script, start_server, wait_until


def cli(home, *arguments):
    """The device's CLI; returns (exit status, stdout, stderr) without failing on a non-zero status."""
    result = subprocess.run([CLI, "--home", home, *arguments], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return result.returncode, result.stdout, result.stderr


def decoded_qr(browser, work):
    """The text the page's QR code holds, read by zbar from a screenshot of the SVG; None without zbarimg."""
    if not shutil.which("zbarimg"):
        return None
    image = os.path.join(work, "qr.png")
    browser.driver.find_element(By.ID, "login-qr").screenshot(image)
    result = subprocess.run(["zbarimg", "--raw", "-q", image], capture_output=True, text=True, timeout=30)
    check(result.returncode == 0, f"zbarimg read no QR code from the page: {result.stderr}")
    return result.stdout.strip()


def scenario(backend, work, storage):
    shots = os.path.join(SHOTS, "people-" + backend)
    os.makedirs(work, exist_ok=True)
    server = None
    browser = None
    try:
        root = run(SERVER, "user", "add", "root", "--server-admin", *storage).strip()
        server, url = start_server(work, storage)

        browser = Browser(shots)
        driver = browser.driver

        def body():
            return browser.text()

        # The server admin signs in with the token the shell printed, and creates the project.
        browser.open(url + "/console", "sign-in")
        driver.find_element(By.ID, "token").send_keys(root)
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form[action='/console/login']"), "sign-in")
        wait_until("the projects page", lambda: "Create a project" in body())
        browser.shot("projects")
        browser.accessible("projects")
        driver.find_element(By.ID, "project-name").send_keys("district-north")
        browser.submit(driver.find_element(By.ID, "new-project"), "create project")
        wait_until("the new project's people page", lambda: "People of district-north" in body())
        check("root" in body() and "admin" in body(), "the creator is not listed as the project's admin")
        # Its form comes from the shell for now (uploading forms in the browser is its own page).
        run(SERVER, "form", "publish", os.path.join(FORMS, "follow-up-job.json"), "--project", "district-north", *storage)

        codes = {}
        for name, role in (("ana", "collector"), ("rita", "reviewer")):
            browser.open(url + "/console/projects/district-north/users", "people")
            driver.find_element(By.ID, "invite-name").send_keys(name)
            Select(driver.find_element(By.ID, "invite-role")).select_by_value(role)
            browser.submit(driver.find_element(By.ID, "invite"), "invite " + name)
            code = wait_until(f"{name}'s login code", lambda: driver.find_element(By.ID, "login-code").text.strip())
            check(re.fullmatch(r"[2-9A-HJKMNP-TV-Z]{5}-[2-9A-HJKMNP-TV-Z]{5}", code), f"not a login code: {code!r}")
            svg = driver.find_element(By.ID, "login-qr")
            check(svg.tag_name == "svg" and svg.find_elements(By.TAG_NAME, "path"), "the code page has no QR code drawn as SVG")
            check(f"--code {code}" in driver.find_element(By.ID, "login-command").text, "the page does not say the login command")
            held = decoded_qr(browser, work)
            if held is not None:
                check(code in held and url in held, f"the QR code holds {held!r}, not the code and the server")
            codes[name] = code
            if name == "ana":
                browser.accessible("login code")
                browser.shot("login-code")
                browser.at_phone_width("login-code", reload=False)
        browser.open(url + "/console/projects/district-north/users", "people")
        check("ana" in body() and "rita" in body() and "reviewer" in body(), "the people page does not list the invited")
        browser.shot("people")
        browser.accessible("people")
        browser.at_phone_width("people")

        # The collector's device enrols with its code, fills a record and syncs.
        home = os.path.join(work, "ana")
        status, out, err = cli(home, "login", "--server", url, "--code", codes["ana"])
        check(status == 0 and "as a member of district-north" in out, f"login --code failed ({status}): {out}{err}")
        status, out, err = cli(home, "fill", "follow-up-job", "--set", "site=Pump house", "--set", "technicians=2", "--complete")
        check(status == 0, f"fill failed: {out}{err}")
        status, out, err = cli(home, "sync")
        check(status == 0 and out.startswith("pushed 1"), f"sync failed ({status}): {out}{err}")
        status, out, err = cli(home, "login", "--server", url, "--code", codes["ana"])
        check(status == 4 and "used already" in err, f"a used code was taken again ({status}): {out}{err}")

        # The console lists the device with its last sync; the admin signs it out while it holds an unsent record.
        driver.find_element(By.LINK_TEXT, "ana").click()
        browser.collect_console("person")
        wait_until("ana's device", lambda: driver.find_elements(By.CSS_SELECTOR, "#devices tbody tr[id^='device-']"))
        row = driver.find_element(By.CSS_SELECTOR, "#devices tbody tr[id^='device-']")
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        check(cells[4].endswith("UTC") and cells[5] == "0 records" and cells[6] == "active", f"the device row says {cells}")
        check("fieldsheet/" in cells[1], f"no client version in {cells}")
        browser.shot("person")
        browser.accessible("person")
        browser.at_phone_width("person")
        status, out, err = cli(home, "fill", "follow-up-job", "--set", "site=Water tower", "--set", "technicians=1", "--complete")
        unsent = out.strip().splitlines()[0] if out.strip() else ""
        check(status == 0 and re.fullmatch(r"[0-9a-f-]{36}", unsent), f"fill failed: {out}{err}")
        # (The phone-width check reloaded the page: the row is found again.)
        browser.submit(driver.find_element(By.CSS_SELECTOR, "#devices form[action$='/revoke']"), "revoke")
        wait_until("the device marked signed out", lambda: "signed out " in driver.find_element(By.ID, "devices").text)
        browser.shot("person-revoked")

        status, out, err = cli(home, "sync")
        check(status == 4 and "This device was signed out by your project's admin." in err, f"the revoked device's sync ({status}): {out}{err}")
        status, out, err = cli(home, "status")
        check("signed out: This device was signed out by your project's admin." in out and "in 1 record" in out, f"status says {out}{err}")
        status, out, err = cli(home, "records")
        check(status == 0 and unsent in out, f"the unsent record is not listed: {out}{err}")
        status, out, err = cli(home, "show", unsent, "--json")
        check(status == 0 and "Water tower" in out, f"the unsent record cannot be shown: {out}{err}")

        # The audit log holds a line for each act.
        browser.open(url + "/console/projects/district-north/audit", "audit")
        audit = body()
        for action in ("project.created", "member.invited", "login-code.created", "login-code.used", "device.revoked"):
            check(action in audit, f"the audit log has no {action} line:\n{audit[:3000]}")
        browser.shot("audit")
        browser.accessible("audit")
        browser.at_phone_width("audit")
        Select(driver.find_element(By.ID, "audit-action")).select_by_value("device.revoked")
        browser.submit(driver.find_element(By.ID, "audit-filters"), "audit filtered")
        wait_until("the filtered log", lambda: "action=device.revoked" in driver.current_url)
        rows = driver.find_elements(By.CSS_SELECTOR, "#audit tbody tr")
        check(len(rows) == 1 and "device.revoked" in rows[0].text and "root" in rows[0].text, f"the filtered log shows {[r.text for r in rows]}")
        # The server's own log: sign-ins belong to no project.
        browser.open(url + "/console/audit", "server audit")
        check("sign-in" in body() and "server-admin.granted" in body(), "the server's audit log lacks the sign-in or the command line's act")

        check(not browser.errors, "the browser logged console errors:\n" + "\n".join(browser.errors))
        print(f"console people test passed on {backend}; screenshots in {shots}")
    except Exception:
        report_failure(browser, work)
        raise
    finally:
        close(browser, server)



if __name__ == "__main__":
    script(lambda: on_each_backend("people", scenario))
