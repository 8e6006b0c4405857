// How the apps view words the platform's answers (js/views/apps/format.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  APP_TABS, buildDuration, buildStepLine, deploymentSecrets, devLogLines, diffLines, keepLast, limitsText, scanHeadline, scanPackages, servicesUpdated, watchStateLine,
} from "../js/views/apps/format.js";

test("an app has six pages, overview first", () => {
  assert.deepEqual(APP_TABS.map((t) => t.id), ["overview", "builds", "deployments", "logs", "secrets", "access"]);
});

test("a build's duration in seconds, or minutes and seconds; nothing while it runs", () => {
  assert.equal(buildDuration({ started_at: "2026-01-01T10:00:00Z", finished_at: "2026-01-01T10:00:42Z" }), " · 42 s");
  assert.equal(buildDuration({ started_at: "2026-01-01T10:00:00Z", finished_at: "2026-01-01T10:02:05Z" }), " · 2 min 5 s");
  assert.equal(buildDuration({ started_at: "2026-01-01T10:00:00Z", finished_at: null }), "");
});

test("limits say when the runtime does not enforce them", () => {
  assert.equal(limitsText(null), "");
  assert.equal(limitsText({ memory: null, cpu: null, enforced: false }), "");
  assert.equal(limitsText({ memory: "256Mi", cpu: "0.5", enforced: true }), " · memory 256Mi, cpu 0.5");
  assert.equal(limitsText({ memory: "256Mi", enforced: false }), " · memory 256Mi (not enforced by the process runtime)");
});

test("a deployment's secrets are paths at versions, never values", () => {
  const d = { services: [{ secrets: [{ path: "db", version: 2 }] }, { secrets: [] }, { secrets: [{ path: "api/key", version: 1 }] }] };
  assert.equal(deploymentSecrets(d), "db@v2, api/key@v1");
  assert.equal(deploymentSecrets({ services: [] }), "");
});

test("the build's latest step becomes a line", () => {
  assert.equal(buildStepLine([]), null);
  assert.equal(buildStepLine(["packing the project", "uploading 3 files"]), "Uploading 3 files…");
});

test("a diff lists images and secret versions", () => {
  const diff = { images: [{ service: "api", from: "a:1", to: "a:2" }], secrets: [{ path: "db", service: "api", from_version: 1, to_version: null }] };
  assert.deepEqual(diffLines(diff), ["image of api: a:1 → a:2", "secret db (api): version 1 → "]);
  assert.deepEqual(diffLines({}), []);
});

test("the development loop's state as a line and a tone", () => {
  assert.deepEqual(watchStateLine({ phase: "running", url: "http://127.0.0.1:4000", seconds: 1.234 }), { text: "RUNNING http://127.0.0.1:4000 (1.2 s after the change)", tone: "ok" });
  assert.deepEqual(watchStateLine({ phase: "failed", message: "exit 1" }), { text: "FAILED: exit 1", tone: "error" });
  assert.deepEqual(watchStateLine({ phase: "invalid" }), { text: "devfile.yaml is invalid", tone: "error" });
  assert.deepEqual(watchStateLine({ phase: "building" }), { text: "Updating…", tone: "muted" });
  assert.deepEqual(watchStateLine({ phase: "new-phase" }), { text: "new-phase", tone: "muted" });
  assert.equal(servicesUpdated({ api: "sync", web: "image" }), "api (sync), web (image)");
});

test("the loop's events become lines of its live log, which keeps its last lines", () => {
  const lines = devLogLines([
    { event: "changed", files: ["main.py"] },
    { event: "rebuilding", services: { api: "sync" } },
    { event: "log", line: { service: "api", kind: "build", line: "with the sync builder" } },
    { event: "log", line: { service: "api", kind: "run", line: "listening" } },
    { event: "running", url: "http://127.0.0.1:4000" },
    { event: "invalid", errors: ["services: empty"] },
    { event: "unknown" },
  ]);
  assert.deepEqual(lines, ["==> changed: main.py", "==> updating api (sync)", "api build | with the sync builder", "api | listening", "==> RUNNING http://127.0.0.1:4000", "==> devfile.yaml is invalid:", "    services: empty"]);
  assert.deepEqual(keepLast(["a", "b"], ["c", "d"], 3), ["b", "c", "d"]);
  assert.deepEqual(keepLast([], ["a"], 3), ["a"]);
});

test("a scan answer with a report counts its advisories; without one it says why", () => {
  const report = { report: { scanned_at: "today", advisory_db: { advisories: 10 }, vulnerabilities: [{ id: "X" }], sbom: { packages: [{ name: "a" }, { name: "b" }] } } };
  assert.equal(scanPackages(report).length, 2);
  assert.deepEqual(scanHeadline(report), { tone: "error", text: "1 known vulnerability in 2 packages (checked today against 10 advisories)" });
  const clean = { report: { scanned_at: "today", vulnerabilities: [], sbom: { packages: [] } } };
  assert.deepEqual(scanHeadline(clean), { tone: "ok", text: "No known vulnerabilities in 0 packages (checked today against ? advisories)" });
  const none = { report: null, error: "no advisory database", sbom: { packages: [{ name: "a" }] } };
  assert.deepEqual(scanHeadline(none), { tone: "muted", text: "No scan report: no advisory database. 1 packages found in the image." });
});
