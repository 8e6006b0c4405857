"""End-to-end test of the desktop app through WebDriver (tauri-driver + WebKitWebDriver).

Drives the real window: templates load from the Rust toolkit, a python-api app is scaffolded
from the form, an invalid name shows the rule, and the devfile check reports the result.
Run by scripts/desktop-e2e.sh under Xvfb; stdlib only, so nothing else needs installing.
"""

import json
import os
import tempfile
import time
import unittest
import urllib.error
import urllib.request

DRIVER = os.environ.get("WEBDRIVER_URL", "http://127.0.0.1:4444")
APP = os.environ["SLIPWAY_DESKTOP_BIN"]


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

    def find_all(self, css):
        found = request("POST", f"/session/{self.id}/elements", {"using": "css selector", "value": css})
        return [list(e.values())[0] for e in found]

    def wait_for(self, css, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = self.find_all(css)
            if found:
                return found
            time.sleep(0.2)
        raise AssertionError(f"no element matches {css!r} after {timeout}s")

    def click(self, element):
        request("POST", f"/session/{self.id}/element/{element}/click", {})

    def type(self, element, text):
        request("POST", f"/session/{self.id}/element/{element}/clear", {})
        request("POST", f"/session/{self.id}/element/{element}/value", {"text": text})

    def text(self, element):
        return request("GET", f"/session/{self.id}/element/{element}/text")

    def wait_text(self, css, predicate, timeout=20):
        """Polls the text of `css` with a script, not an element reference: the UI replaces
        the result's children, and WebKitWebDriver can drop the connection when asked for the
        text of an element that is being replaced."""
        deadline = time.time() + timeout
        last = ""
        script = "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';"
        while time.time() < deadline:
            last = request("POST", f"/session/{self.id}/execute/sync", {"script": script, "args": [css]}) or ""
            if predicate(last):
                return last
            time.sleep(0.3)
        raise AssertionError(f"{css!r} never satisfied the check; last text: {last!r}")


class DesktopTest(unittest.TestCase):
    def setUp(self):
        self.s = Session()
        self.out = tempfile.mkdtemp(prefix="slipway-desktop-")

    def tearDown(self):
        self.s.close()

    def test_scaffold_and_check_from_the_window(self):
        s = self.s
        cards = s.wait_for(".card")
        self.assertEqual(len(cards), 6)
        names = [s.text(e) for e in s.find_all(".card strong")]
        self.assertEqual(names, ["python-api", "python-dashboard", "js-web", "multi-container", "js-web-advanced", "durable-agent"])
        s.click(cards[0])

        s.type(s.wait_for("[name=app_name]")[0], "Bad--Name")
        s.type(s.wait_for("[name=output_directory]")[0], self.out)
        s.click(s.wait_for("#scaffold-button")[0])
        s.wait_text("#scaffold-result", lambda t: "app_name" in t and "lowercase" in t)
        self.assertEqual(os.listdir(self.out), [])

        s.type(s.wait_for("[name=app_name]")[0], "desk-app")
        s.click(s.wait_for("#scaffold-button")[0])
        s.wait_text("#scaffold-result", lambda t: t.startswith("Created ") and "devfile.yaml" in t)
        project = os.path.join(self.out, "desk-app")
        self.assertTrue(os.path.isfile(os.path.join(project, "devfile.yaml")))

        s.click(s.wait_for("nav button[data-view=check]")[0])
        s.click(s.wait_for("#validate-button")[0])
        s.wait_text("#validate-result", lambda t: t.startswith("Valid"))

    def test_apps_on_the_embedded_platform(self):
        """No platform is configured (scripts/desktop-e2e.sh points XDG dirs at a temporary
        home): the window registers an app on the embedded platform, shows its owner, and keeps
        an app secret."""
        s = self.s
        s.click(s.wait_for("nav button[data-view=apps]")[0])
        s.wait_text("#apps-list", lambda t: "No apps yet" in t or "desk-" in t, timeout=60)
        s.click(s.wait_for("#register summary")[0])
        s.type(s.wait_for("#register-form [name=name]")[0], "desk-reg")
        s.type(s.wait_for("#register-form [name=display_name]")[0], "Desk Reg")
        s.click(s.wait_for("#register-button")[0])
        s.wait_text("#register-result", lambda t: "registered desk-reg" in t, timeout=60)
        s.wait_text("#app-name", lambda t: t == "Desk Reg")
        s.wait_text("#apps-list", lambda t: "desk-reg" in t)
        s.wait_text("#access-table", lambda t: "owner" in t)
        s.type(s.wait_for("[name=secret_path]")[0], "db")
        s.type(s.wait_for("[name=secret_data]")[0], '{"DB_PASSWORD": "x"}')
        s.click(s.wait_for("#secret-save")[0])
        s.wait_text("#secrets-table", lambda t: "db" in t and "1" in t)
        # A bad path is refused with the rule, and nothing is stored.
        s.type(s.wait_for("[name=secret_path]")[0], "/abs")
        s.type(s.wait_for("[name=secret_data]")[0], '{"a": "b"}')
        s.click(s.wait_for("#secret-save")[0])
        s.wait_text("#app-detail", lambda t: "secret_path" in t and "'/'" in t)


if __name__ == "__main__":
    unittest.main(verbosity=2)
