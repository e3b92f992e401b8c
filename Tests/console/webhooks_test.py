#!/usr/bin/env python3
"""The console's webhooks page in a real browser: headless Chromium driven by Selenium against the real
fieldsheet-server on a loopback port, a real receiver on another loopback port, the real `fieldsheet` CLI as the
collector's device.

A project admin signs in, adds an endpoint for the receiver and sees its signing secret once. The collector's
device submits a record; the receiver refuses the first attempt (500) and takes the retry: the delivery log
shows the delivery with its attempts, HTTP status and response time, and the receiver holds the event with a
signature it can verify with the secret, and a body that Schema/webhook-event.schema.json accepts, with the
labels of the record's fields and chosen values. Redeliver sends the same event (same id) again. Removing the endpoint
empties the table. The secret appears on no page but the one that answered the add; no page logs a browser
console error, and the page fits a phone's width.

Usage: webhooks_test.py BIN_DIR [SCREENSHOT_DIR]   (screenshots go to SCREENSHOT_DIR/webhooks)
"""
import hashlib
import hmac
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading

import jsonschema
from referencing import Registry, Resource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import FORMS, SERVER, SHOTS, Browser, By, Device, Failure, check, close, run, start_server, wait_until  # noqa: E402


class Receiver(http.server.ThreadingHTTPServer):
    """Takes webhook deliveries on loopback: refuses the first with 500, keeps every later one."""

    def __init__(self):
        self.lock = threading.Lock()
        self.refused = 0
        self.received = []
        super().__init__(("127.0.0.1", 0), ReceiverHandler)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/events"


class ReceiverHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.server.lock:
            refuse = self.server.refused == 0
            if refuse:
                self.server.refused += 1
            else:
                self.server.received.append((dict(self.headers.items()), body))
        self.send_response(500 if refuse else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *arguments):
        pass


def verified(headers, body, secret):
    """Whether the FieldSheet-Signature header signs the body with the secret (docs/integrations.md)."""
    fields = dict(part.split("=", 1) for part in headers.get("FieldSheet-Signature", "").split(",") if "=" in part)
    expected = hmac.new(secret.encode(), fields.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("v1", ""))


def event_validator():
    """A JSON Schema validator of webhook bodies: Schema/webhook-event.schema.json with the record fields' schema it refers to."""
    schemas = [json.load(open(os.path.join(FORMS, "..", name))) for name in ("webhook-event.schema.json", "record-fields.schema.json")]
    registry = Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in schemas)
    jsonschema.Draft202012Validator.check_schema(schemas[0])
    return jsonschema.Draft202012Validator(schemas[0], registry=registry)


def main():
    work = tempfile.mkdtemp(prefix="fieldsheet-webhooks-")
    shots = os.path.join(SHOTS, "webhooks")
    storage = ["--data", os.path.join(work, "server")]
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    server = None
    browser = None
    try:
        run(SERVER, "project", "create", "demo", *storage)
        tokens = {name: run(SERVER, "user", "add", name, "--project", "demo", "--role", role, *storage).strip()
                  for name, role in (("rita", "admin"), ("ana", "collector"))}
        run(SERVER, "form", "publish", os.path.join(FORMS, "follow-up-job.json"), "--project", "demo", *storage)
        server, url = start_server(work, storage, "--webhooks-allow-private-addresses", "--webhook-retry-delay", "0.05",
                                   "--webhook-max-retry-delay", "0.3", "--webhook-poll-interval", "0.1")

        browser = Browser(shots)
        driver = browser.driver
        browser.open(url + "/console/projects/demo", "sign-in")
        driver.find_element(By.ID, "token").send_keys(tokens["rita"])
        browser.submit(driver.find_element(By.CSS_SELECTOR, "form"), "sign-in")
        wait_until("the forms page", lambda: "Forms of demo" in browser.text())
        driver.find_element(By.LINK_TEXT, "Webhooks").click()
        browser.collect_console("webhooks")
        wait_until("the webhooks page", lambda: "Webhooks of demo" in browser.text())
        check("No endpoints yet." in browser.text(), "a new project lists an endpoint")

        # Adding the endpoint (every event kind is ticked by default): the secret is shown once.
        driver.find_element(By.ID, "url").send_keys(receiver.url)
        browser.submit(driver.find_element(By.ID, "add-endpoint"), "webhooks-added")
        notice = wait_until("the new secret", lambda: driver.find_elements(By.CSS_SELECTOR, "#new-secret code"))
        secret = notice[0].text.strip()
        check(len(secret) >= 16, f"the secret shown is {secret!r}")
        browser.shot("webhooks-added")
        browser.accessible("webhooks")
        rows = driver.find_elements(By.CSS_SELECTOR, "#endpoints tbody tr")
        check(len(rows) == 1 and receiver.url in rows[0].text and "record.submitted" in rows[0].text,
              f"the endpoints table reads {[row.text for row in rows]}")

        # The device submits a record; the first attempt is refused, the retry delivered.
        ana = Device(os.path.join(work, "ana"), url, tokens["ana"])
        ana("sync")
        record = ana("fill", "follow-up-job", "--set", "site=Pump house 3", "--set", "priority=high",
                     "--set", "reason=Leak", "--complete").strip()
        ana("sync")
        wait_until("the receiver to take the event", lambda: receiver.received, seconds=30)
        headers, body = receiver.received[0]
        event = json.loads(body)
        check(event["type"] == "record.submitted" and event["record"]["recordId"] == record,
              f"the receiver got {event['type']} for {event.get('record', {}).get('recordId')}, not record.submitted for {record}")
        check(verified(headers, body, secret), "the delivery's FieldSheet-Signature does not verify with the secret shown")
        errors = sorted(event_validator().iter_errors(event), key=str)
        check(not errors, f"the body does not follow Schema/webhook-event.schema.json: {errors[0].message if errors else ''} "
              f"at {list(errors[0].absolute_path) if errors else ''}")
        labels = event["record"].get("labels", {})
        check(labels.get("fields", {}).get("site") == "Site" and labels.get("fields", {}).get("priority") == "Priority"
              and labels.get("choices", {}).get("priority") == {"high": "High"},
              f"the record's labels read {labels}")

        def delivered_row():
            browser.open(url + "/console/projects/demo/webhooks", "webhooks-log")
            cells = [row.find_elements(By.TAG_NAME, "td") for row in driver.find_elements(By.CSS_SELECTOR, "#deliveries tbody tr")]
            return next((row for row in cells if len(row) > 6 and row[2].text == "record.submitted" and row[5].text == "delivered"), None)
        row = wait_until("the delivery log to show the delivery", delivered_row)
        check(row[3].text == event["id"], f"the log shows event {row[3].text}, the receiver got {event['id']}")
        check(int(row[6].text) == 2 and row[7].text == "200" and row[8].text.endswith("ms"),
              f"attempts, HTTP status and response time read {row[6].text!r}, {row[7].text!r}, {row[8].text!r}")
        check(secret not in driver.page_source, "the secret is shown again on the delivery log")
        browser.shot("webhooks-log")
        browser.accessible("webhook delivery log")
        browser.at_phone_width("webhooks-log")

        # Redeliver: the same event, with the same id, again.
        count = len(receiver.received)
        redeliver = next(r for r in driver.find_elements(By.CSS_SELECTOR, "#deliveries tbody tr") if event["id"] in r.text)
        browser.submit(redeliver.find_element(By.TAG_NAME, "form"), "webhooks-redeliver")
        wait_until("the redelivery", lambda: len(receiver.received) > count, seconds=30)
        again = json.loads(receiver.received[-1][1])
        check(again["id"] == event["id"], f"the redelivery carries event {again['id']}, not {event['id']}")

        # Removing the endpoint.
        browser.open(url + "/console/projects/demo/webhooks", "webhooks")
        browser.submit(driver.find_element(By.CSS_SELECTOR, "#endpoints form"), "webhooks-removed")
        wait_until("the endpoint to go", lambda: "No endpoints yet." in browser.text())
        check(not browser.errors, f"the browser logged errors: {browser.errors}")
        print(f"webhooks page: endpoint added, event delivered after a refusal, signature verified, redelivered, removed; screenshots in {shots}")
    finally:
        close(browser, server)
        receiver.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
