// How the apps view words the platform's answers (js/views/apps/format.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  APP_TABS, commitLine, domainServes, domainStateLine, runLine, appDataLines, buildDuration, buildStepLine, dataRemovedText, deleteDataText, deploymentSecrets, devLogLines, diffLines, humanBytes, keepLast, limitsText, maskedUrl,
  resourceActions, resourceLine, resourceSize, scanHeadline, scanPackages, servicesUpdated, volumeLine, watchStateLine,
} from "../js/views/apps/format.js";

test("an app has nine pages, overview first", () => {
  assert.deepEqual(APP_TABS.map((t) => t.id), ["overview", "builds", "deployments", "logs", "secrets", "resources", "jobs", "source", "domains", "notifications", "access"]);
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

test("bytes are worded as the Rust side words them", () => {
  assert.equal(humanBytes(0), "0 B");
  assert.equal(humanBytes(1023), "1023 B");
  assert.equal(humanBytes(1536), "1.5 KiB");
  assert.equal(humanBytes(1258291), "1.2 MiB");
  assert.equal(humanBytes(5 * 1024 ** 3), "5.0 GiB");
  assert.equal(humanBytes(3 * 1024 ** 5), "3072.0 TiB");
  assert.equal(humanBytes(null), "0 B");
  assert.equal(humanBytes(undefined), "");
  assert.equal(humanBytes(-1), "");
});

const APP = {
  resources: [
    { kind: "relationalDatabase", name: "main", engine: "postgres", state: "attached", memory_mb: null, size_bytes: 7 * 1024 * 1024, variables: ["DATABASE_URL", "PGHOST"] },
    { kind: "cache", name: "old", engine: "redis", state: "detached", memory_mb: 64, size_bytes: null, variables: [] },
  ],
  volumes: [
    { name: "files", size: "1Gi", ephemeral: false, used_bytes: 1258291, mounts: ["api:/data"] },
    { name: "scratch", size: null, ephemeral: true, used_bytes: 0, mounts: [] },
  ],
};

test("resources and volumes in words: detached and ephemeral ones say so", () => {
  assert.equal(resourceLine(APP.resources[0]), "relationalDatabase main (postgres)");
  assert.equal(resourceLine(APP.resources[1]), "cache old (redis, detached)");
  assert.equal(volumeLine(APP.volumes[0]), "volume files (1.2 MiB used of 1Gi)");
  assert.equal(volumeLine(APP.volumes[1]), "volume scratch (0 B used, ephemeral)");
  assert.deepEqual(appDataLines(APP), ["relationalDatabase main (postgres)", "cache old (redis, detached)", "volume files (1.2 MiB used of 1Gi)", "volume scratch (0 B used, ephemeral)"]);
});

test("the delete confirmation names the data that goes with the app, and says nothing when there is none", () => {
  assert.equal(
    deleteDataText({ resources: APP.resources.slice(0, 1), volumes: APP.volumes.slice(0, 1) }),
    "Its data is destroyed with it: relationalDatabase main (postgres), volume files (1.2 MiB used of 1Gi).",
  );
  assert.equal(deleteDataText({ resources: [], volumes: [] }), "");
  assert.equal(deleteDataText({}), "");
  assert.deepEqual(appDataLines(null), []);
});

test("after a deletion, the data the answer says was destroyed", () => {
  assert.equal(dataRemovedText({ data_removed: ["relationalDatabase main (postgres, attached)", "volume files (1.2 MiB used of 1Gi)"] }),
    "Data destroyed with it: relationalDatabase main (postgres, attached); volume files (1.2 MiB used of 1Gi).");
  assert.equal(dataRemovedText({ data_removed: [] }), "");
  assert.equal(dataRemovedText({ message: "app deleted" }), "");
});

test("a resource's size column: its data and its memory cap", () => {
  assert.equal(resourceSize(APP.resources[0]), "7.0 MiB");
  assert.equal(resourceSize(APP.resources[1]), "cap 64 MiB");
  assert.equal(resourceSize({ size_bytes: 2048, memory_mb: 128 }), "2.0 KiB, cap 128 MiB");
  assert.equal(resourceSize({}), "—");
});

test("viewers get no resource action, editors reveal and rotate, owners destroy too", () => {
  assert.deepEqual(resourceActions("viewer"), { reveal: false, rotate: false, destroy: false });
  assert.deepEqual(resourceActions("editor"), { reveal: true, rotate: true, destroy: false });
  assert.deepEqual(resourceActions("owner"), { reveal: true, rotate: true, destroy: true });
  // Unknown: offered, and the platform's answer decides.
  assert.deepEqual(resourceActions(null), { reveal: true, rotate: true, destroy: true });
});

test("a connection URL hides its password until shown", () => {
  assert.equal(maskedUrl("postgres://app:0123abcd@127.0.0.1:5432/main", "0123abcd"), "postgres://app:••••••@127.0.0.1:5432/main");
  assert.equal(maskedUrl("redis://:pw@127.0.0.1:6380/0", "pw"), "redis://:••••••@127.0.0.1:6380/0");
  assert.equal(maskedUrl("memcached://127.0.0.1:11211", ""), "memcached://127.0.0.1:11211");
  assert.equal(maskedUrl(null, "x"), "");
});

test("a job's last run in a few words", () => {
  assert.equal(runLine(null), "never");
  assert.equal(runLine({ status: "succeeded", started_at: "2026-11-28T03:00:01Z" }), "succeeded 2026-11-28T03:00:01Z");
  assert.equal(runLine({ status: "missed", started_at: null, scheduled_at: "2026-11-28T03:00:00Z" }), "missed 2026-11-28T03:00:00Z");
});

test("a domain's state says what to do about it", () => {
  const cert = { source: "acme", issuer: "Pebble Intermediate", serial: "ab", not_before: "2026-11-01T00:00:00Z", expires_at: "2027-01-30T00:00:00Z", renews_at: "2026-12-31T00:00:00Z" };
  assert.equal(domainStateLine({ state: "issued", certificate: cert }), "Issued by Pebble Intermediate, valid until 2027-01-30; renews 2026-12-31.");
  assert.equal(domainStateLine({ state: "issued", certificate: { ...cert, source: "operator", renews_at: null, issuer: "Ops CA" } }),
    "Served with the platform's certificate (Ops CA), valid until 2027-01-30.");
  assert.equal(domainStateLine({ state: "pending", reason: "DNS not pointing here: x resolves to 192.0.2.1", certificate: null }),
    "Waiting: DNS not pointing here: x resolves to 192.0.2.1");
  assert.equal(domainStateLine({ state: "failed", reason: "the CA refused: blocked", next_attempt_at: "2026-11-28T20:10:00Z", certificate: null }),
    "Not issued: the CA refused: blocked Trying again 2026-11-28 20:10.");
  assert.match(domainStateLine({ state: "renewing", reason: null, certificate: cert }), /^Renewing \(the current certificate, valid until 2027-01-30, is still served\)\.$/);
  assert.equal(domainServes({ redirect_to: "example.org" }), "→ example.org");
  assert.equal(domainServes({ service: "web" }), "web");
  assert.equal(domainServes({}), "the app's first public service");
});

test("a commit reads as its short id, subject, branch and author", () => {
  assert.equal(
    commitLine({ sha: "1a2b3c4d5e6f7a8b9c0d", subject: "Fix the cart", branch: "main", author: "Ada" }),
    "1a2b3c4d5e6f Fix the cart (main) — Ada",
  );
});
