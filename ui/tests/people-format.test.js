// How the People view and the token list word the platform's answers (js/views/people/format.js),
// and the Copy button's fallback (js/components/copy.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ACCOUNT_ROLES, PEOPLE_TABS, actionText, actorText, appendPage, days, expiry, fieldErrors, fromNow, inviteLine, otherError,
  personName, removedLine, removeWarning, revokeWarning, scopeWords, shortTime, tokenExpiry,
} from "../js/views/people/format.js";
import { copiedLine, copyText } from "../js/components/copy.js";

const NOW = Date.parse("2026-11-22T10:00:00Z");

test("times read as minutes in UTC; none is a dash; a text that is no time is kept", () => {
  assert.equal(shortTime("2026-11-22T10:04:59Z"), "2026-11-22 10:04 UTC");
  assert.equal(shortTime("2026-11-22T11:04:00+01:00"), "2026-11-22 10:04 UTC");
  assert.equal(shortTime(null), "—");
  assert.equal(shortTime("soon"), "soon");
});

test("an expiry says how far off it is", () => {
  assert.equal(fromNow("2026-11-29T10:00:00Z", NOW), "in 7 days");
  assert.equal(fromNow("2026-11-23T11:00:00Z", NOW), "in 1 day");
  assert.equal(fromNow("2026-11-25T09:59:58Z", NOW), "in 3 days");
  assert.equal(fromNow("2026-11-22T12:00:00Z", NOW), "in less than a day");
  assert.equal(fromNow("2026-11-22T09:00:00Z", NOW), "expired");
  assert.equal(expiry("2026-11-29T10:00:00Z", NOW), "2026-11-29 10:00 UTC (in 7 days)");
  assert.equal(expiry(null, NOW), "never");
});

test("an invite's answer says the code is shown once and until when it works", () => {
  const line = inviteLine({ email: "dana@example.org", role: "member", expires_at: "2026-11-29T10:00:00Z" }, NOW);
  assert.equal(line, "Invited dana@example.org as member. The code is shown only now: it works once, until 2026-11-29 10:00 UTC (in 7 days).");
});

test("the removal names what happens to the person's tokens and apps, and who gets the apps", () => {
  const dana = { id: "u2", email: "dana@example.org", name: "Dana" };
  assert.equal(personName(dana), "Dana <dana@example.org>");
  assert.equal(personName({ email: "x@y.z", name: "x@y.z" }), "x@y.z");
  const warning = removeWarning(dana, { email: "owner@localhost" });
  assert.match(warning, /tokens stop working at once/);
  assert.match(warning, /passes to you \(owner@localhost\)/);
  assert.equal(removedLine({ removed: dana, transferred_apps: [{ app_id: "a1", name: "shop" }, { app_id: "a2" }] }), "Removed Dana <dana@example.org>. Apps passed to you: shop, a2.");
  assert.equal(removedLine({ removed: dana, transferred_apps: [] }), "Removed Dana <dana@example.org>. No app passed to you.");
});

test("audit actions read as words; unknown ones as they are; no actor is a dash", () => {
  assert.equal(actionText("person.role_changed"), "changed the role of");
  assert.equal(actionText("invite.created"), "invited");
  assert.equal(actionText("something.new"), "something.new");
  assert.equal(actorText({ id: "u1", email: "owner@localhost" }), "owner@localhost");
  assert.equal(actorText(null), "—");
});

test("the next audit page is appended without repeating an entry", () => {
  const first = [{ id: "3" }, { id: "2" }];
  assert.deepEqual(appendPage(first, [{ id: "2" }, { id: "1" }]).map((e) => e.id), ["3", "2", "1"]);
  assert.deepEqual(appendPage(first, undefined).map((e) => e.id), ["3", "2"]);
});

test("a refusal goes beside the field it names, else under the form", () => {
  const refused = { ok: false, error: "email: must have one @", field: "email" };
  assert.deepEqual(fieldErrors(refused, "email"), ["email: must have one @"]);
  assert.deepEqual(fieldErrors(refused, "role"), []);
  assert.deepEqual(fieldErrors({ ok: true }, "email"), []);
  assert.equal(otherError(refused, ["email", "role"]), null);
  assert.equal(otherError({ ok: false, error: "409 already_member", field: null }, ["email"]), "409 already_member");
  assert.equal(otherError(null, ["email"]), null);
});

test("days: empty is the platform's default; anything else goes to Rust as typed", () => {
  assert.equal(days(""), null);
  assert.equal(days("  "), null);
  assert.equal(days(" 14 "), "14");
  assert.equal(days("ten"), "ten");
});

test("tokens made before lifetimes never expire; revoking the window's own says it signs the window out", () => {
  assert.equal(tokenExpiry({ expires_at: null }, NOW), "never (made before tokens had lifetimes)");
  assert.equal(tokenExpiry({ expires_at: "2027-02-20T10:00:00Z" }, NOW), "2027-02-20 10:00 UTC (in 90 days)");
  assert.equal(revokeWarning({ name: "ci", current: false }, "staging"), "Programs using ci are refused from their next request.");
  assert.match(revokeWarning({ name: "laptop", current: true }, "staging"), /window is signed out of staging/);
  assert.match(revokeWarning({ name: "laptop", current: true }, null), /unable to reach this computer's platform/);
});

test("the roles offered and the tabs", () => {
  assert.deepEqual(ACCOUNT_ROLES, ["member", "admin"]);
  assert.deepEqual(PEOPLE_TABS.map((t) => t.id), ["people", "notifications", "audit"]);
});

test("Copy writes to the clipboard; without one, or when it refuses, the text is selected instead", async () => {
  const written = [];
  let selected = 0;
  const select = () => (selected += 1);
  assert.equal(await copyText("slwi_x", { writeText: async (t) => written.push(t) }, select), "copied");
  assert.deepEqual(written, ["slwi_x"]);
  assert.equal(selected, 0);
  assert.equal(await copyText("slwi_x", { writeText: async () => { throw new Error("NotAllowedError"); } }, select), "selected");
  assert.equal(await copyText("slwi_x", undefined, select), "selected");
  assert.equal(selected, 2);
  assert.match(copiedLine("selected"), /press Ctrl\+C/);
  assert.equal(copiedLine("copied"), "Copied to the clipboard.");
  assert.equal(copiedLine(null), "");
});

test("a scope reads as what it allows", () => {
  assert.equal(scopeWords({ read_only: true, apps: null, secrets: false }), "reads only, all your apps, no secret values");
  assert.equal(scopeWords({ read_only: false, apps: ["a"], secrets: true }), "reads and changes, 1 app, with secret values");
  assert.equal(scopeWords({ read_only: false, apps: ["a", "b"], secrets: true }), "reads and changes, 2 apps, with secret values");
  assert.equal(scopeWords(null), "everything you may");
});
