// The drafts' window-side logic: debounced, ordered saves; the notices; which answers end one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { draftSaver, endsDraft, loadNotice, restoredNotice, savedNotice, withDraft } from "../js/drafts.js";

/** Timers run by hand. */
function fakeTimers() {
  let next = 1;
  const due = new Map();
  return {
    setTimeout(fn) {
      due.set(next, fn);
      return next++;
    },
    clearTimeout(id) {
      due.delete(id);
    },
    fire() {
      const fns = [...due.values()];
      due.clear();
      fns.forEach((fn) => fn());
    },
    get pending() {
      return due.size;
    },
  };
}

test("typing saves once, the last values, after the pause", async () => {
  const timers = fakeTimers();
  const calls = [];
  const answers = [];
  const saver = draftSaver({ save: async (d) => (calls.push(["save", d]), { ok: true, value: d }), clear: async () => calls.push(["clear"]), onSaved: (r) => answers.push(r), timers });
  saver.schedule({ a: "1" });
  saver.schedule({ a: "12" });
  assert.equal(timers.pending, 1);
  assert.deepEqual(calls, []);
  timers.fire();
  await saver.flush();
  assert.deepEqual(calls, [["save", { a: "12" }]]);
  assert.deepEqual(answers, [{ ok: true, value: { a: "12" } }]);
});

test("a clear drops the scheduled save and waits for the one under way", async () => {
  const timers = fakeTimers();
  const calls = [];
  let finishSave;
  const save = (d) => new Promise((resolve) => (finishSave = () => (calls.push(["saved", d]), resolve({ ok: true }))));
  const saver = draftSaver({ save, clear: async () => calls.push(["clear"]), timers });
  saver.schedule({ a: "1" });
  timers.fire(); // the save starts and is slow
  saver.schedule({ a: "2" }); // typed again: scheduled, never sent
  const cleared = saver.clear();
  assert.equal(timers.pending, 0);
  await Promise.resolve();
  assert.deepEqual(calls, []);
  finishSave();
  await cleared;
  assert.deepEqual(calls, [["saved", { a: "1" }], ["clear"]]);
});

test("flush saves what is scheduled now", async () => {
  const timers = fakeTimers();
  const calls = [];
  const saver = draftSaver({ save: async (d) => calls.push(d), clear: async () => {}, timers });
  await saver.flush();
  assert.deepEqual(calls, []);
  saver.schedule({ a: "x" });
  await saver.flush();
  assert.deepEqual(calls, [{ a: "x" }]);
  assert.equal(timers.pending, 0);
});

test("a draft fills only the fields the request asks for, with text", () => {
  const initial = { f1: "", f2: "false" };
  assert.deepEqual(withDraft(initial, { f1: "72.5", f2: "true", gone: "x", f3: 5 }), { f1: "72.5", f2: "true" });
  assert.deepEqual(withDraft(initial, { f1: 7 }), initial);
  assert.deepEqual(withDraft(initial, null), initial);
});

const notFound = (code) => ({ ok: false, kind: "not_found", errors: [{ code, message: "missing", fields: [] }] });

test("submitted, ended and unknown requests end their draft; others keep it", () => {
  assert.equal(endsDraft({ ok: true }), true);
  assert.equal(endsDraft({ ok: false, kind: "not_active" }), true);
  assert.equal(endsDraft(notFound("REQUEST_NOT_FOUND")), true);
  // The request is there, a record it needs is not: the draft stays.
  for (const code of ["CARE_PLAN_NOT_FOUND", "CARE_PROGRAM_NOT_FOUND", "GROUP_NOT_FOUND", "PATIENT_ACCOUNT_NOT_FOUND"]) {
    assert.equal(endsDraft(notFound(code)), false, code);
  }
  // A 404 that does not say what is missing (a route unknown to another service) keeps it.
  assert.equal(endsDraft({ ok: false, kind: "not_found" }), false);
  assert.equal(endsDraft(notFound("NOT_FOUND")), false);
  for (const kind of ["unmet", "invalid", "unavailable", "server", "forbidden", "unauthorized"]) {
    assert.equal(endsDraft({ ok: false, kind }), false, kind);
  }
  assert.equal(endsDraft(null), false);
});

test("the notices say when it was typed, or that it could not be restored", () => {
  const format = (d) => d.toISOString();
  assert.equal(restoredNotice(Date.UTC(2026, 1, 3, 9, 30), format), "Restored what you typed on 2026-02-03T09:30:00.000Z.");
  assert.equal(restoredNotice(null), "Restored what you typed last time.");
  assert.deepEqual(loadNotice({ document: { a: "1" }, saved_at: 0, key_notice: "No keyring service…" }, format), {
    kind: "restored",
    text: "Restored what you typed last time.",
    keyNotice: "No keyring service…",
  });
  assert.deepEqual(loadNotice({ document: null, not_restored: "could not be restored" }), { kind: "lost", text: "could not be restored", keyNotice: null });
  assert.equal(loadNotice({ document: null, not_restored: null }), null);
  assert.equal(loadNotice(null), null);
});

test("a draft whose key cannot be read now is said to be kept, and a failed save says typing is not saved", () => {
  assert.deepEqual(loadNotice({ document: null, not_restored: null, key_unavailable: "kept; unlock the keyring" }), {
    kind: "kept",
    text: "kept; unlock the keyring",
    keyNotice: null,
  });
  assert.equal(savedNotice({ ok: true, value: { key_notice: null } }), null);
  assert.equal(savedNotice({ ok: true, value: { key_notice: "No keyring service…" } }), "No keyring service…");
  assert.equal(savedNotice({ ok: false, error: "unlock the keyring" }), "What you type is not being saved: unlock the keyring");
});
