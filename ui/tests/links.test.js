// The window's title per view and where a slipway:// link takes the window (plain functions),
// and the api.js calls behind them against a fake window.__TAURI__.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { routeLink } from "../js/links.js";
import { titleFor, VIEW_LABELS } from "../js/title.js";

const calls = [];
const listeners = {};
let failTitle = false;
globalThis.window = {
  __TAURI__: {
    core: { invoke: (cmd, args) => (calls.push([cmd, args]), Promise.resolve([{ kind: "app", app_id: "a" }])) },
    event: { listen: (name, handler) => ((listeners[name] = handler), Promise.resolve(() => {})) },
    window: {
      getCurrentWindow: () => ({
        setTitle: (title) => (failTitle ? Promise.reject("window.set_title not allowed") : (calls.push(["set_title", title]), Promise.resolve())),
      }),
    },
  },
};
const api = await import("../js/api.js");

test("the title names the view with the nav's own label", () => {
  assert.equal(titleFor("missing"), "Missing information · Slipway");
  assert.equal(titleFor("apps"), "Apps · Slipway");
  assert.equal(titleFor("env"), "Environments · Slipway");
  assert.equal(titleFor("welcome"), "Welcome · Slipway");
  assert.equal(titleFor("nope"), "Slipway");
  // Every nav button of index.html has its label as the title, and no two views share one.
  const html = readFileSync(new URL("../index.html", import.meta.url), "utf8");
  const nav = [...html.matchAll(/data-view="([^"]+)"[^>]*>([^<]+)</g)].map((m) => [m[1], m[2].trim()]);
  assert.ok(nav.length >= 8, JSON.stringify(nav));
  for (const [view, label] of nav) assert.equal(titleFor(view), `${label} · Slipway`, view);
  const labels = Object.values(VIEW_LABELS);
  assert.equal(new Set(labels).size, labels.length);
});

test("each kind of link opens its view with what that view is to open", () => {
  const uuid = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";
  assert.deepEqual(routeLink({ kind: "missing_info", uuid }), { view: "missing", shared: { missingInfo: { uuid } } });
  assert.deepEqual(routeLink({ kind: "app", app_id: "0190a7c4" }), { view: "apps", shared: { openApp: "0190a7c4" } });
  assert.deepEqual(routeLink({ kind: "invite", code: "slwi_x", url: "http://127.0.0.1:8700" }), {
    view: "env",
    shared: { invite: { code: "slwi_x", url: "http://127.0.0.1:8700" } },
  });
  assert.deepEqual(routeLink({ kind: "invite", code: "slwi_x", url: null }), { view: "env", shared: { invite: { code: "slwi_x", url: "" } } });
});

test("a link Rust refused, or one the UI does not know, goes nowhere and says why", () => {
  const refused = routeLink({ kind: "error", error: "\"slipway://nope/\" is not a screen Slipway knows. Slipway opens …" });
  assert.deepEqual(Object.keys(refused), ["error"]);
  assert.match(refused.error, /^This link cannot be opened\. "slipway:\/\/nope\/" is not a screen/);
  for (const odd of [null, {}, { kind: "settings" }]) {
    const r = routeLink(odd);
    assert.equal(r.view, undefined);
    assert.match(r.error, /cannot be opened/);
  }
});

test("links are taken from the shell, and its nudge calls the handler", async () => {
  const res = await api.takeLinks();
  assert.deepEqual(calls.at(-1), ["take_links", {}]);
  assert.deepEqual(res.value, [{ kind: "app", app_id: "a" }]);
  let nudged = 0;
  assert.equal((await api.onLinksWaiting(() => (nudged += 1))).ok, true);
  listeners["links-waiting"]({ payload: null });
  assert.equal(nudged, 1);
});

test("the OS window's title is set through Tauri's window API; a refusal is a failure, not a throw", async () => {
  assert.equal((await api.setWindowTitle("Apps · Slipway")).ok, true);
  assert.deepEqual(calls.at(-1), ["set_title", "Apps · Slipway"]);
  failTitle = true;
  const res = await api.setWindowTitle("Apps · Slipway");
  assert.equal(res.ok, false);
  assert.match(res.error, /not allowed/);
});
