// The worklist's lists as data: which requests each tab shows, the words for their statuses,
// and how a live event, a claim's answer or a further page changes a loaded list; and the
// recount of a partly loaded tab's total after events. Pure (no DOM; calls and timers handed
// in), so it is unit-tested with node --test. A list is {rows, total, next}: the rows loaded
// so far in the service's order (expiry, then age), how many match in all, and the link to
// the next page.

/** What "Open" shows: nobody holds it yet, or someone works on it. */
export const OPEN = ["requested", "in-progress"];

export const TABS = [
  { id: "open", label: "Open" },
  { id: "mine", label: "Mine" },
  { id: "all", label: "All" },
];

/** The search of a tab: {statuses, owner}. "Mine" needs to know who `me` is. */
export function queryFor(tab, me) {
  switch (tab) {
    case "open":
      return { statuses: OPEN, owner: null };
    case "mine":
      return { statuses: [], owner: me ? me.id : null };
    default:
      return { statuses: [], owner: null };
  }
}

/** Whether `task` ({status, ownerId}) is one the tab lists. A deleted request is in none. */
export function belongs(tab, task, me) {
  if (!task || task.status === "entered-in-error") return false;
  switch (tab) {
    case "open":
      return OPEN.includes(task.status);
    case "mine":
      return Boolean(me && task.ownerId && task.ownerId === me.id);
    default:
      return true;
  }
}

const WORDS = {
  requested: "open",
  "in-progress": "claimed",
  completed: "answered",
  cancelled: "cancelled",
  failed: "expired",
  "entered-in-error": "deleted",
};

const TONES = { requested: "busy", "in-progress": "plain", completed: "good", failed: "bad" };

/** The word shown for a Task status (the README's mapping). */
export function statusWord(status) {
  return WORDS[status] || String(status || "unknown");
}

/** The badge tone of a Task status: good, bad, busy or plain. */
export function statusTone(status) {
  return TONES[status] || "plain";
}

/** Who holds it, as the list says it. */
export function holderText(task, me) {
  if (!task.ownerId) return "nobody";
  if (me && task.ownerId === me.id) return "you";
  return task.owner || task.ownerId;
}

/** Which buttons a row offers: Claim while nobody holds it, Release while you do. */
export function actionsFor(task, me) {
  return {
    claim: task.status === "requested",
    release: task.status === "in-progress" && Boolean(me && task.ownerId === me.id),
  };
}

export const emptyList = () => ({ rows: [], total: 0, next: null });

/** The list with a page appended (a row already shown is not repeated). */
export function appendPage(list, page) {
  const known = new Set(list.rows.map((r) => r.uuid));
  return {
    rows: [...list.rows, ...page.tasks.filter((t) => !known.has(t.uuid))],
    total: page.total ?? list.total,
    next: page.next || null,
  };
}

function sortKey(task) {
  return `${task.expires || "9999-12-31"}|${task.authored || ""}`;
}

/**
 * The list with `task` (a full row) in its place: replaced where it is, taken out when it no
 * longer belongs to the tab, or inserted in the service's order. A task that sorts after the
 * last loaded row while further pages exist is left to those pages. The total follows a loaded
 * row that leaves, and a row that arrives while every row is loaded (it was not in the tab);
 * while further pages exist, a row not loaded may have been counted already, so the total is
 * left to a recount (`recounter`).
 */
export function putTask(list, task, tab, me) {
  const i = list.rows.findIndex((r) => r.uuid === task.uuid);
  const fits = belongs(tab, task, me);
  if (i >= 0) {
    if (!fits) return { ...list, rows: list.rows.filter((_, j) => j !== i), total: Math.max(0, list.total - 1) };
    const rows = list.rows.slice();
    rows[i] = task;
    return { ...list, rows };
  }
  if (!fits) return list;
  const key = sortKey(task);
  let at = list.rows.findIndex((r) => sortKey(r) > key);
  if (at < 0) {
    if (list.next) return list;
    at = list.rows.length;
  }
  const rows = [...list.rows.slice(0, at), task, ...list.rows.slice(at)];
  return { ...list, rows, total: list.next ? list.total : list.total + 1 };
}

/** The list with the total a recount gave. */
export function setTotal(list, total) {
  return typeof total === "number" ? { ...list, total } : list;
}

/**
 * A fetched row with what the latest event about it says laid over it: a fetch started for
 * one event may answer after a later event (created, then claimed: the first answer landing
 * last would show the request open again).
 */
export function withLatest(task, event) {
  if (!event || event.uuid !== task.uuid) return task;
  return { ...task, status: event.status, ownerId: event.owner ?? null, owner: event.ownerName ?? null };
}

/** How long after the last event the totals are counted again. */
export const RECOUNT_DELAY_MS = 500;

/**
 * Recounts tabs' totals once events pause: `schedule(tab)` marks a tab; after `delay` without
 * another, `count(tab)` (resolving to a number, or null) runs for each marked tab and
 * `onCount(tab, n)` gets the answer, unless a later count of that tab was started meanwhile
 * (only the latest answer is kept).
 */
export function recounter({ count, onCount, delay = RECOUNT_DELAY_MS, timers = globalThis }) {
  let timer = null;
  const marked = new Set();
  const latest = new Map();
  const run = () => {
    timer = null;
    const tabs = [...marked];
    marked.clear();
    return Promise.all(
      tabs.map(async (tab) => {
        const mine = (latest.get(tab) || 0) + 1;
        latest.set(tab, mine);
        const n = await count(tab);
        if (latest.get(tab) === mine && typeof n === "number") onCount(tab, n);
      }),
    );
  };
  return {
    schedule(tab) {
      marked.add(tab);
      if (timer !== null) timers.clearTimeout(timer);
      timer = timers.setTimeout(run, delay);
    },
    cancel() {
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      marked.clear();
    },
  };
}

/**
 * A live event ({uuid, status, owner, ownerName}) applied to a loaded list. The event does
 * not carry the patient, program or expiry: a request the list does not show yet but should
 * comes back as `fetch: true`, for the caller to load it and `putTask` it.
 */
export function applyEvent(list, event, tab, me) {
  const i = list.rows.findIndex((r) => r.uuid === event.uuid);
  const changed = {
    ...(i >= 0 ? list.rows[i] : { uuid: event.uuid }),
    status: event.status,
    ownerId: event.owner ?? null,
    owner: event.ownerName ?? null,
  };
  if (i >= 0) return { list: putTask(list, changed, tab, me), fetch: false };
  return { list, fetch: belongs(tab, changed, me) };
}

/**
 * Where the keyboard focus goes when the row button that had it went away: a claim or release
 * swapped it for the other (the row's new one), or an event took the row out of the tab (the
 * Open button of the row now in its place, else of the last row). `was` is {uuid, action,
 * index}: the button that had the focus and its row's place; `rows` the rows the tab shows.
 * `null`: no row is left (the caller focuses the tab).
 */
export function focusAfterChange(was, rows, me) {
  if (!was) return null;
  const i = rows.findIndex((r) => r.uuid === was.uuid);
  if (i >= 0) {
    const can = actionsFor(rows[i], me);
    if (was.action === "open" || can[was.action]) return { uuid: was.uuid, action: was.action };
    return { uuid: was.uuid, action: can.release ? "release" : can.claim ? "claim" : "open" };
  }
  if (!rows.length) return null;
  const at = Math.min(Math.max(0, was.index), rows.length - 1);
  return { uuid: rows[at].uuid, action: "open" };
}
