#!/usr/bin/env python3
"""Sensitive answers in the web console, in a real browser: headless Chromium against the real fieldsheet-server
on a loopback port, the real `fieldsheet` CLI as the collector's device.

The project gets a key (`project key create`); the collector fills a record whose diagnosis and income are
sensitive and syncs: her device seals them to the project key. The reviewer's submissions table and record page
show "sensitive — encrypted" where those answers stand and the other answers as usual, never the plaintext; the
collector's own device still shows what she typed; the export decrypts with the key file. No page may log a
browser console error.

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL names a server.

Usage: sensitive_test.py BIN_DIR [SCREENSHOT_DIR]
"""
import json
import os
import sys

sys.argv = sys.argv[:3]
import browser_test as base  # noqa: E402  (the scaffolding: Browser, Device, check, run, wait_until)
from browser_test import Browser, Device, check, close, on_each_backend, run, script, start_server, wait_until  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

SHOTS = os.path.join(base.SHOTS, "sensitive")
DIAGNOSIS = "PLAINMARK tuberculosis"
INCOME = "48213"
FORM = {
    "id": "intake", "version": 1, "title": "Household intake", "completionLabel": "Save", "editableAfterSubmit": True,
    "pages": [{"id": "main", "fields": [
        {"id": "name", "kind": "text", "label": "Name", "required": True},
        {"id": "diagnosis", "kind": "text", "label": "Diagnosis", "required": True, "sensitive": True},
        {"id": "income", "kind": "integer", "label": "Monthly income", "sensitive": True},
    ]}],
}


def scenario(backend, work, storage):
    shots = os.path.join(SHOTS, backend)
    os.makedirs(work, exist_ok=True)
    server = None
    browser = None
    try:
        run(base.SERVER, "project", "create", "demo", *storage)
        tokens = {name: run(base.SERVER, "user", "add", name, "--project", "demo", "--role", role, *storage).strip()
                  for name, role in (("rita", "reviewer"), ("ana", "collector"))}
        form = os.path.join(work, "intake.json")
        with open(form, "w") as out:
            json.dump(FORM, out)
        run(base.SERVER, "form", "publish", form, "--project", "demo", *storage)
        key = os.path.join(work, "demo.key")
        created = run(base.SERVER, "project", "key", "create", "demo", "--out", key, *storage)
        check("created key" in created, f"project key create says {created!r}")
        check(oct(os.stat(key).st_mode & 0o777) == "0o600", "the key file is readable by others")
        server, url = start_server(work, storage)

        ana = Device(os.path.join(work, "ana"), url, tokens["ana"])
        ana("sync")
        record = ana("fill", "intake", "--set", "name=Household 7", "--set", f"diagnosis={DIAGNOSIS}", "--set", f"income={INCOME}",
                     "--complete").strip()
        ana("sync")
        shown = ana("show", record)
        check(DIAGNOSIS in shown and INCOME in shown, f"the collector's own device lost what she typed:\n{shown}")

        browser = Browser(shots)
        driver = browser.driver
        browser.open(url + "/console/projects/demo", "sign-in")
        driver.find_element(By.ID, "token").send_keys(tokens["rita"])
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form"), "sign-in")
        wait_until("the forms page", lambda: "Forms of demo" in browser.text())
        driver.find_element(By.LINK_TEXT, "Household intake").click()
        browser.collect_console("submissions")
        wait_until("the table", lambda: driver.find_elements(By.CSS_SELECTOR, "table.records tbody tr"))
        check(DIAGNOSIS not in browser.text() and INCOME not in browser.text(), "the submissions table shows a sensitive answer")
        browser.shot("submissions")
        driver.find_element(By.LINK_TEXT, record[:8]).click()
        browser.collect_console("record")
        wait_until("the record page", lambda: "Answers" in browser.text())
        text = browser.text()
        check("Household 7" in text, "the record page does not show the answer in clear")
        check(text.count("sensitive — encrypted") >= 2, f"the record page does not say the sensitive answers are encrypted:\n{text}")
        check(DIAGNOSIS not in text and INCOME not in text and DIAGNOSIS not in driver.page_source, "the record page shows a sensitive answer")
        browser.shot("record")
        browser.at_phone_width("record")
        check(not browser.errors, f"browser console errors: {browser.errors}")

        sealed = run(base.SERVER, "export", "--project", "demo", "--form", "intake", *storage)
        check(DIAGNOSIS not in sealed and "sensitive — encrypted (key " in sealed, f"the export without the key:\n{sealed}")
        opened = run(base.SERVER, "form", "export", "--project", "demo", "--form", "intake", "--decrypt-with", key, *storage)
        check(DIAGNOSIS in opened and INCOME in opened, f"the export with the key:\n{opened}")
        print(f"sensitive answers in the console: {backend} ok")
    finally:
        close(browser, server)



if __name__ == "__main__":
    script(lambda: on_each_backend("sensitive", scenario))
