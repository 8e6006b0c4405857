// The worklist's lists: which tab shows what, the status words, and how an event, a claim's
// answer or a further page changes a loaded list.
import { test } from "node:test";
import assert from "node:assert/strict";
import { actionsFor, appendPage, applyEvent, belongs, focusAfterChange, holderText, putTask, queryFor, recounter, setTotal, statusWord, withLatest } from "../js/worklist-state.js";

const me = { id: "staff-1", name: "Demo care staff" };
const task = (uuid, status, expires, owner = null, extra = {}) => ({
  uuid,
  status,
  expires,
  authored: "2026-01-01T00:00:00Z",
  patient: `Patient ${uuid}`,
  program: "DemoCareProgram",
  ownerId: owner ? owner.id : null,
  owner: owner ? owner.name : null,
  ...extra,
});
const list = (rows, total = rows.length, next = null) => ({ rows, total, next });

test("each tab asks for its requests; Mine asks for the signed-in user's", () => {
  assert.deepEqual(queryFor("open", me), { statuses: ["requested", "in-progress"], owner: null });
  assert.deepEqual(queryFor("mine", me), { statuses: [], owner: "staff-1" });
  assert.deepEqual(queryFor("all", me), { statuses: [], owner: null });
});

test("statuses read as words, and who holds a request", () => {
  assert.equal(statusWord("requested"), "open");
  assert.equal(statusWord("in-progress"), "claimed");
  assert.equal(statusWord("completed"), "answered");
  assert.equal(statusWord("failed"), "expired");
  assert.equal(statusWord("entered-in-error"), "deleted");
  assert.equal(holderText(task("a", "requested"), me), "nobody");
  assert.equal(holderText(task("a", "in-progress", null, me), me), "you");
  assert.equal(holderText(task("a", "in-progress", null, { id: "s2", name: "Jo" }), me), "Jo");
});

test("Claim while nobody holds it, Release only for its holder", () => {
  assert.deepEqual(actionsFor(task("a", "requested"), me), { claim: true, release: false });
  assert.deepEqual(actionsFor(task("a", "in-progress", null, me), me), { claim: false, release: true });
  assert.deepEqual(actionsFor(task("a", "in-progress", null, { id: "s2" }), me), { claim: false, release: false });
  assert.deepEqual(actionsFor(task("a", "completed", null, me), me), { claim: false, release: false });
});

test("a claim event changes the row in place, and Mine and Open decide what they keep", () => {
  const open = list([task("a", "requested", "2026-03-01"), task("b", "requested", "2026-04-01")]);
  const claimed = { uuid: "a", status: "in-progress", owner: "s2", ownerName: "Jo" };
  const out = applyEvent(open, claimed, "open", me);
  assert.equal(out.fetch, false);
  assert.equal(out.list.rows[0].status, "in-progress");
  assert.equal(out.list.rows[0].owner, "Jo");
  assert.equal(out.list.rows[0].patient, "Patient a", "the row keeps what the event does not carry");
  assert.equal(out.list.total, 2);
  // Answered: out of Open, the total follows.
  const done = applyEvent(out.list, { uuid: "a", status: "completed", owner: "s2", ownerName: "Jo" }, "open", me);
  assert.deepEqual(done.list.rows.map((r) => r.uuid), ["b"]);
  assert.equal(done.list.total, 1);
  // Released by me: out of Mine.
  const mine = list([task("c", "in-progress", "2026-03-01", me)]);
  const released = applyEvent(mine, { uuid: "c", status: "requested", owner: null, ownerName: null }, "mine", me);
  assert.deepEqual(released.list.rows, []);
  // Deleted: out of every tab, All included.
  const all = list([task("d", "requested", "2026-03-01")]);
  assert.deepEqual(applyEvent(all, { uuid: "d", status: "entered-in-error", owner: null }, "all", me).list.rows, []);
});

test("an event about a request the list does not show asks for it only when the tab wants it", () => {
  const open = list([task("a", "requested", "2026-03-01")]);
  const fresh = { uuid: "n", status: "requested", owner: null, ownerName: null };
  assert.deepEqual(applyEvent(open, fresh, "open", me), { list: open, fetch: true });
  assert.equal(applyEvent(open, fresh, "mine", me).fetch, false);
  assert.equal(applyEvent(open, { ...fresh, status: "completed" }, "open", me).fetch, false);
  assert.equal(applyEvent(open, { ...fresh, status: "in-progress", owner: "staff-1" }, "mine", me).fetch, true);
});

test("a fetched request goes in by expiry; past the loaded rows it waits for its page", () => {
  const open = list([task("a", "requested", "2026-03-01"), task("b", "requested", "2026-05-01")]);
  const n = task("n", "requested", "2026-04-01");
  const placed = putTask(open, n, "open", me);
  assert.deepEqual(placed.rows.map((r) => r.uuid), ["a", "n", "b"]);
  assert.equal(placed.total, 3);
  const later = task("z", "requested", "2026-09-01");
  assert.deepEqual(putTask(open, later, "open", me).rows.map((r) => r.uuid), ["a", "b", "z"]);
  const paged = list(open.rows, 30, "/fhir/Task?_cursor=x");
  const waiting = putTask(paged, later, "open", me);
  assert.deepEqual(waiting.rows.map((r) => r.uuid), ["a", "b"]);
  assert.equal(waiting.total, 30, "left to the recount");
  // Put again (the claim's answer after its event): replaced, not repeated.
  const again = putTask(placed, { ...n, status: "in-progress", ownerId: "staff-1", owner: "Demo care staff" }, "open", me);
  assert.deepEqual(again.rows.map((r) => r.uuid), ["a", "n", "b"]);
  assert.equal(again.total, 3);
  assert.equal(belongs("open", again.rows[1], me), true);
});

test("More appends the next page without repeating a row an event put in already", () => {
  const first = list([task("a", "requested", "2026-03-01")], 3, "/fhir/Task?_cursor=x");
  const page = { tasks: [task("a", "requested", "2026-03-01"), task("b", "requested", "2026-04-01")], total: 3, next: null };
  const out = appendPage(first, page);
  assert.deepEqual(out.rows.map((r) => r.uuid), ["a", "b"]);
  assert.equal(out.next, null);
  assert.equal(out.total, 3);
});

test("the total does not drift while further pages are not loaded: a claim of a row counted already adds nothing", () => {
  // 30 open requests, 2 loaded. "x" (not loaded, counted in the 30) is claimed: the event asks
  // for it, and its row goes in by expiry, the total unchanged.
  const paged = list([task("a", "requested", "2026-03-01"), task("b", "requested", "2026-05-01")], 30, "/fhir/Task?_cursor=x");
  const claimed = { uuid: "x", status: "in-progress", owner: "s2", ownerName: "Jo" };
  assert.equal(applyEvent(paged, claimed, "open", me).fetch, true);
  const placed = putTask(paged, task("x", "in-progress", "2026-04-01", { id: "s2", name: "Jo" }), "open", me);
  assert.deepEqual(placed.rows.map((r) => r.uuid), ["a", "x", "b"]);
  assert.equal(placed.total, 30);
  // Answered while not loaded: nothing to take out, and nothing taken off a guess.
  assert.deepEqual(applyEvent(paged, { uuid: "y", status: "completed" }, "open", me), { list: paged, fetch: false });
  // A loaded row that leaves is taken off the total; the recount's answer replaces it.
  const left = applyEvent(placed, { uuid: "a", status: "completed" }, "open", me).list;
  assert.equal(left.total, 29);
  assert.equal(setTotal(left, 28).total, 28);
  assert.equal(setTotal(left, null).total, 29);
});

test("a fetched row takes the status and holder of the latest event about it", () => {
  const fetched = task("n", "requested", "2026-04-01");
  const claimed = { uuid: "n", status: "in-progress", owner: "s2", ownerName: "Jo" };
  const out = withLatest(fetched, claimed);
  assert.equal(out.status, "in-progress");
  assert.equal(out.ownerId, "s2");
  assert.equal(out.owner, "Jo");
  assert.equal(out.patient, "Patient n");
  assert.equal(withLatest(fetched, { ...claimed, uuid: "other" }), fetched);
  assert.equal(withLatest(fetched, null), fetched);
  // Created, then claimed: the answer to the first fetch lands last, and still shows the claim.
  const open = list([]);
  const shown = putTask(open, withLatest(fetched, claimed), "open", me);
  assert.deepEqual(actionsFor(shown.rows[0], me), { claim: false, release: false });
});

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
      return Promise.all(fns.map((fn) => fn()));
    },
    get pending() {
      return due.size;
    },
  };
}

test("totals are counted again once events pause, each tab once, the latest answer kept", async () => {
  const timers = fakeTimers();
  const asked = [];
  const answers = [];
  const finish = [];
  const count = (tab) => new Promise((resolve) => (asked.push(tab), finish.push(resolve)));
  const r = recounter({ count, onCount: (tab, n) => answers.push([tab, n]), timers });
  r.schedule("open");
  r.schedule("all");
  r.schedule("open");
  assert.equal(timers.pending, 1);
  assert.deepEqual(asked, []);
  const first = timers.fire();
  assert.deepEqual(asked, ["open", "all"]);
  // More events: Open is counted again before the first count answers.
  r.schedule("open");
  const second = timers.fire();
  assert.deepEqual(asked, ["open", "all", "open"]);
  finish[2](7); // the later count of Open answers first
  finish[0](9); // the earlier one last: dropped
  finish[1](40);
  await Promise.all([first, second]);
  assert.deepEqual(answers, [["open", 7], ["all", 40]]);
  r.schedule("all");
  r.cancel();
  assert.equal(timers.pending, 0);
});

test("the focus follows a claimed or released row, or moves to the row in the place of one that left", () => {
  const rows = [task("a", "in-progress", "2026-03-01", me), task("b", "requested", "2026-04-01"), task("c", "requested", "2026-05-01")];
  // Claimed: its Claim button became Release.
  assert.deepEqual(focusAfterChange({ uuid: "a", action: "claim", index: 0 }, rows, me), { uuid: "a", action: "release" });
  // Released: Release became Claim.
  assert.deepEqual(focusAfterChange({ uuid: "b", action: "release", index: 1 }, rows, me), { uuid: "b", action: "claim" });
  // Claimed by someone else: neither button, so Open.
  const taken = [task("b", "in-progress", "2026-04-01", { id: "s2", name: "Jo" })];
  assert.deepEqual(focusAfterChange({ uuid: "b", action: "claim", index: 0 }, taken, me), { uuid: "b", action: "open" });
  assert.deepEqual(focusAfterChange({ uuid: "c", action: "open", index: 2 }, rows, me), { uuid: "c", action: "open" });
  // The row left the tab: the row now in its place, or the last one.
  assert.deepEqual(focusAfterChange({ uuid: "gone", action: "claim", index: 1 }, rows, me), { uuid: "b", action: "open" });
  assert.deepEqual(focusAfterChange({ uuid: "gone", action: "open", index: 7 }, rows, me), { uuid: "c", action: "open" });
  assert.equal(focusAfterChange({ uuid: "gone", action: "open", index: 0 }, [], me), null);
  assert.equal(focusAfterChange(null, rows, me), null);
});
