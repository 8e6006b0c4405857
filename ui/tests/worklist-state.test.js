// The worklist's lists: which tab shows what, the status words, and how an event, a claim's
// answer or a further page changes a loaded list.
import { test } from "node:test";
import assert from "node:assert/strict";
import { actionsFor, appendPage, applyEvent, belongs, holderText, putTask, queryFor, statusWord } from "../js/worklist-state.js";

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
  assert.equal(waiting.total, 31);
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
