"""End-to-end test of the .deb as a user gets it: installed with apt-get, the installed window
started, started again with a slipway:// link, then the package removed.

One window per user: the second start of /usr/bin/slipway-desktop with
slipway://care/missing-info/<the demo request> exits 0 within 3 seconds, and the one window
(one process on this D-Bus session, one WebDriver window) shows that request's form, its title
naming the view. `apt-get remove` then takes the programs away and leaves the user's data.

Run by scripts/desktop-e2e.sh when SLIPWAY_DEB names the package, under Xvfb and a D-Bus
session, as root (apt-get), with HOME a temporary directory and no XDG_* variables, so the app
keeps its data where a user's would be (~/.local/share/slipway). Stdlib only.
"""

import os
import subprocess
import sys
import time
import unittest

DEB = os.path.realpath(os.environ["SLIPWAY_DEB"])
INSTALLED = "/usr/bin/slipway-desktop"
CLI = "/usr/bin/slipway"
os.environ["SLIPWAY_DESKTOP_BIN"] = INSTALLED
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_desktop as desktop  # noqa: E402  (reads SLIPWAY_DESKTOP_BIN when imported)


def apt_get(*args):
    done = subprocess.run(["apt-get", *args], env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                          capture_output=True, text=True, timeout=900)
    if done.returncode:
        raise AssertionError(f"apt-get {' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def installed(package):
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return done.returncode == 0 and "install ok installed" in done.stdout


class PackageTest(unittest.TestCase):
    def test_installed_one_window_follows_a_link_and_removal_keeps_the_data(self):
        self.assertEqual(os.geteuid(), 0, "the package test installs the .deb with apt-get: run it as root")
        package = subprocess.run(["dpkg-deb", "-f", DEB, "Package"], capture_output=True, text=True, check=True).stdout.strip()
        self.assertFalse(installed(package), f"{package} is installed on this machine already; the test installs and removes it, so remove it first")
        started = time.monotonic()
        apt_get("install", "-y", DEB)
        self.addCleanup(lambda: installed(package) and apt_get("remove", "-y", package))
        print(f"installed {os.path.basename(DEB)} in {time.monotonic() - started:.1f}s", file=sys.stderr)
        for program in (INSTALLED, CLI):
            self.assertTrue(os.access(program, os.X_OK), program)

        s = desktop.Session()
        try:
            s.wait_text("#env", lambda t: "Signed in" in t)
            self.assertEqual(len(desktop.app_processes()), 1)
            code, seconds, err = desktop.start_again(f"slipway://care/missing-info/{desktop.DEMO_REQUEST}")
            self.assertEqual(code, 0, err)
            self.assertLess(seconds, 3.0, err)
            s.wait_text("#mi-form", lambda t: f"request {desktop.DEMO_REQUEST}" in t, timeout=60)
            s.wait_title("Missing information · Slipway")
            self.assertEqual(len(s.windows()), 1)
            self.assertEqual(len(desktop.app_processes()), 1)
        finally:
            s.close()
        deadline = time.time() + 30
        while desktop.app_processes() and time.time() < deadline:
            time.sleep(0.2)
        self.assertEqual(desktop.app_processes(), [], "the window did not exit")

        # The form came from the embedded care service, which keeps its data in the user's
        # data directory; removing the package leaves it.
        data = os.path.join(os.environ["HOME"], ".local", "share", "slipway")
        kept = sorted(os.listdir(data))
        self.assertTrue(kept, data)
        apt_get("remove", "-y", package)
        self.assertFalse(installed(package))
        for program in (INSTALLED, CLI):
            self.assertFalse(os.path.exists(program), program)
        self.assertEqual(sorted(os.listdir(data)), kept)


if __name__ == "__main__":
    unittest.main(verbosity=2)
