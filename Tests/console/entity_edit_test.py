#!/usr/bin/env python3
"""A project admin edits an entity from its console page, in a real browser: headless Chromium driven by Selenium
against the real fieldsheet-server on a loopback port, with the real `fieldsheet` CLI as two collectors' devices.

Ana registers a household on her device and both devices sync. Offline, Ana visits it and changes its members;
Bob changes the head's name. Meanwhile the admin, in the console, sets the members and the label. When the devices
sync, Bob's change of another property merges with the admin's; Ana's change of the same property, made before the
admin's, loses and is kept in the entity's conflict log with both values; the history names the console edit; the
devices receive the admin's values. Then the admin edits from a page that a device's change has made stale: the
console shows both values and saves only when the admin confirms. No page logs a browser console error; the page
passes axe-core and fits a phone's width.

Runs on SQLite, and on PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL names a server.

Usage: entity_edit_test.py BIN_DIR [SCREENSHOT_DIR]   (screenshots go to SCREENSHOT_DIR/entity-edit-BACKEND)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import (  # noqa: E402
    ENTITY_FORMS, SERVER, SHOTS, Browser, By, Device, check, close, on_each_backend, report_failure, run, script, start_server, wait_until)

# Updates a household's head (the property the visit form does not touch).
HEAD_FORM = {
    "id": "household-head", "version": 1, "title": "Rename the head", "completionLabel": "Save",
    "entity": {"list": "households", "entityId": "household"},
    "pages": [{"id": "main", "fields": [
        {"id": "household", "kind": "singleChoice", "label": "Household", "required": True, "choicesFrom": {"entityList": "households"}},
        {"id": "head_name", "kind": "text", "label": "Head of household", "saveTo": "head_name"},
    ]}],
}


def device_entity(device, household):
    """The household as the device holds it (`fieldsheet entities households --json`)."""
    for line in device("entities", "households", "--json").splitlines():
        entity = json.loads(line)
        if entity["id"] == household:
            return entity
    return None


def scenario(backend, work, storage):
    shots = os.path.join(SHOTS, "entity-edit-" + backend)
    os.makedirs(work, exist_ok=True)
    server = None
    browser = None
    try:
        run(SERVER, "project", "create", "demo", *storage)
        tokens = {name: run(SERVER, "user", "add", name, "--project", "demo", "--role", role, *storage).strip()
                  for name, role in (("adam", "admin"), ("ana", "collector"), ("bob", "collector"))}
        head_form = os.path.join(work, "household-head.json")
        with open(head_form, "w") as out:
            json.dump(HEAD_FORM, out)
        for form in [os.path.join(ENTITY_FORMS, name) for name in sorted(os.listdir(ENTITY_FORMS))] + [head_form]:
            run(SERVER, "form", "publish", form, "--project", "demo", *storage)
        server, url = start_server(work, storage)

        ana = Device(os.path.join(work, "ana"), url, tokens["ana"])
        bob = Device(os.path.join(work, "bob"), url, tokens["bob"])
        ana("sync")
        household = ana("fill", "household-register", "--set", "head_name=Amina Yusuf", "--set", "members=4",
                        "--set", "district=North", "--complete").strip()
        ana("sync")
        bob("sync")
        check(device_entity(bob, household) is not None, "Bob's device did not receive the household")
        # Offline: Ana's visit changes the members, Bob's the head's name.
        ana("fill", "household-visit", "--set", f"household={household}", "--set", "members=7", "--complete")
        bob("fill", "household-head", "--set", f"household={household}", "--set", "head_name=Amina Y. Diallo", "--complete")

        browser = Browser(shots)
        driver = browser.driver
        browser.open(url + "/console/projects/demo", "sign-in")
        driver.find_element(By.ID, "token").send_keys(tokens["adam"])
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form"), "sign-in")
        wait_until("the project page", lambda: "Forms of demo" in browser.text())
        page = f"{url}/console/projects/demo/entities/households/{household}"
        browser.open(page, "entity")
        form = wait_until("the edit form", lambda: driver.find_elements(By.ID, "edit"))[0]
        browser.shot("entity-edit-form")
        browser.accessible("entity with its edit form")
        browser.at_phone_width("entity-edit-form")

        def field(name):
            label = driver.find_element(By.XPATH, f"//form[@id='edit']//label[starts-with(normalize-space(.), '{name} ')]")
            return driver.find_element(By.ID, label.get_attribute("for"))

        def properties():
            return {item.find_element(By.TAG_NAME, "dt").text.split(" ")[0]: item.find_element(By.TAG_NAME, "dd").text
                    for item in driver.find_elements(By.CSS_SELECTOR, "#properties > div")}

        # The admin sets the members and the label.
        form = driver.find_element(By.ID, "edit")
        label = form.find_element(By.ID, "entity-label")
        label.clear()
        label.send_keys("Amina Yusuf (North)")
        members = field("members")
        members.clear()
        members.send_keys("6")
        browser.submit(form, "entity edited")
        wait_until("the edit to be saved", lambda: properties().get("members") == "6")
        check(driver.find_element(By.TAG_NAME, "h1").text == "Amina Yusuf (North)", "the new label is not the page's title")
        history = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#entity-history > li")]
        check("edited in the console" in history[-1] and "adam" in history[-1] and "members: 4 → 6" in history[-1]
              and "label: Amina Yusuf → Amina Yusuf (North)" in history[-1], f"the history's last entry: {history[-1]!r}")

        # The devices sync: Bob's head merges, Ana's members (older than the admin's) loses and is logged.
        ana("sync")
        bob("sync")
        ana("sync")
        browser.open(page, "entity after the devices synced")
        held = properties()
        check(held.get("members") == "6" and held.get("head_name") == "Amina Y. Diallo", f"the properties are {held}")
        conflicts = driver.find_elements(By.CSS_SELECTOR, "section.entity-conflict")
        check(len(conflicts) == 1, f"{len(conflicts)} conflicts shown")
        conflict = conflicts[0].text
        check("members" in conflict and "Held by the server" in conflict and "6" in conflict and "adam on console" in conflict
              and "From the record" in conflict and "7" in conflict and "ana" in conflict, f"the conflict shows {conflict!r}")
        kept = conflicts[0].find_element(By.CSS_SELECTOR, ".badge").find_element(By.XPATH, "..").text
        check(kept.startswith("6"), f"the kept value is not the admin's 6: {kept!r}")
        browser.shot("entity-edit-merged")
        for name, device in (("Ana", ana), ("Bob", bob)):
            def received(device=device):
                entity = device_entity(device, household)
                if entity and entity["label"] == "Amina Yusuf (North)" and entity["properties"].get("members") == {"integer": 6}:
                    return entity
                device("sync")
                return None
            entity = wait_until(f"{name}'s device to hold the admin's values", received)
            check(entity["properties"].get("head_name") == {"text": "Amina Y. Diallo"}, f"{name}'s device holds {entity}")

        # A page made stale by a device: Bob renames the head again and syncs while the admin's page is open.
        browser.open(page, "entity before a stale edit")
        bob("fill", "household-head", "--set", f"household={household}", "--set", "head_name=Amina Diallo", "--complete")
        bob("sync")
        head = field("head_name")
        head.clear()
        head.send_keys("A. Y. Diallo")
        browser.submit(driver.find_element(By.ID, "edit"), "entity stale edit")
        clashes = wait_until("the changed-since notice", lambda: driver.find_elements(By.ID, "edit-clashes"))
        check("head_name now holds Amina Diallo; you set A. Y. Diallo" in clashes[0].text, f"the notice reads {clashes[0].text!r}")
        check(properties().get("head_name") == "Amina Diallo", "the stale edit was saved without confirmation")
        check(driver.find_element(By.ID, "edit-save").text == "Overwrite and save", "the button does not say it overwrites")
        browser.shot("entity-edit-changed-since")
        browser.accessible("entity edit changed since")
        browser.at_phone_width("entity-edit-changed-since", reload=False)
        browser.submit(driver.find_element(By.ID, "edit"), "entity edit confirmed")
        wait_until("the confirmed edit", lambda: properties().get("head_name") == "A. Y. Diallo" and not driver.find_elements(By.ID, "edit-clashes"))

        # A value of the wrong kind is refused with what is expected, and nothing is saved.
        members = field("members")
        members.clear()
        members.send_keys("many")
        browser.submit(driver.find_element(By.ID, "edit"), "entity edit refused")
        error = wait_until("the refusal", lambda: driver.find_elements(By.ID, "edit-error"))
        check("members: \"many\" is not a whole number" in error[0].text and "Nothing was saved." in error[0].text, f"the refusal reads {error[0].text!r}")
        check(properties().get("members") == "6", "a refused edit changed the members")
        # The two refusals answer 409 and 400, which the browser logs as failed loads of those pages: expected there only.
        expected = [e for e in browser.errors if e.startswith(("entity stale edit:", "entity edit refused:")) and ("409" in e or "400" in e)]
        check(not [e for e in browser.errors if e not in expected], f"the browser logged errors: {browser.errors}")
        print(f"{backend}: entity edited in the console, merged with a device's edit, the same property's loser logged, "
              f"devices updated, a stale edit confirmed; screenshots in {shots}")
    except Exception:
        report_failure(browser, work)
        raise
    finally:
        close(browser, server)


if __name__ == "__main__":
    script(lambda: on_each_backend("entity-edit", scenario))
