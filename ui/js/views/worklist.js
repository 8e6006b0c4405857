// Care staff's home: the missing-information requests as a worklist. Tabs Open (nobody holds
// it, or someone works on it), Mine (you hold it) and All; each row its expiry, patient,
// program, who holds it and status, with Claim / Release (a refusal, such as a 409 naming who
// holds it, stays on its row) and Open (the request in the missing-information view). "More"
// follows the service's next link. The list is live: the shell follows the care service's
// events and each one changes the lists loaded here without a reload; the nav entry counts the
// open requests. What a list is and how an event changes it: worklist-state.js.
import { html, render, useEffect, useRef, useState } from "../../vendor/preact-htm.js";
import { Tabs, TabPanel } from "../components/tabs.js";
import { useAlive } from "../components/hooks.js";
import { Muted } from "../components/notice.js";
import {
  TABS,
  actionsFor,
  appendPage,
  applyEvent,
  belongs,
  emptyList,
  focusAfterChange,
  holderText,
  putTask,
  queryFor,
  recounter,
  setTotal,
  statusTone,
  statusWord,
  withLatest,
} from "../worklist-state.js";

const PAGE = 20;

/** The nav entry's count of open requests (hidden when unknown). */
function showOpenCount(n) {
  const badge = document.getElementById("nav-worklist-count");
  const button = badge && badge.closest("button");
  if (!badge || !button) return;
  const known = typeof n === "number";
  badge.hidden = !known;
  badge.textContent = known ? String(n) : "";
  if (known) button.setAttribute("aria-label", `Worklist, ${n} open`);
  else button.removeAttribute("aria-label");
}

function liveText(stream) {
  if (!stream) return "Connecting to live updates…";
  switch (stream.state) {
    case "live":
      return "Live: changes appear as they happen.";
    case "retrying":
      return `Live updates interrupted (${stream.message}); trying again in ${Math.max(1, Math.round(stream.retry_in_ms / 1000))} s.`;
    case "ended":
      return `No live updates: ${stream.message}`;
    default:
      return "";
  }
}

function Row({ task, me, busy, error, onClaim, onRelease, onOpen }) {
  const can = actionsFor(task, me);
  const who = task.patient || task.patientId || "a patient";
  const errId = `wl-err-${task.uuid}`;
  // A refusal is read with the buttons it is about.
  const described = error ? errId : undefined;
  return html`<tr data-request=${task.uuid} data-status=${task.status}>
    <td class="mono">${task.expires || "—"}</td>
    <td>${task.patient || html`<span class="muted">${task.patientId || "—"}</span>`}</td>
    <td>${task.program || "—"}</td>
    <td data-holder>${holderText(task, me)}</td>
    <td><span class=${`badge ${statusTone(task.status)}`} data-status=${task.status}>${statusWord(task.status)}</span>${task.amended
      ? html` <span class="badge plain" data-amended title="The answer was corrected after it was submitted">amended</span>`
      : null}</td>
    <td><div class="wl-actions">
      ${can.claim
        ? html`<button type="button" class="small" data-action="claim" disabled=${busy} aria-label=${`Claim the request for ${who}`} aria-describedby=${described}
            onClick=${() => onClaim(task)}>Claim</button>`
        : null}
      ${can.release
        ? html`<button type="button" class="small" data-action="release" disabled=${busy} aria-label=${`Release the request for ${who}`} aria-describedby=${described}
            onClick=${() => onRelease(task)}>Release</button>`
        : null}
      <button type="button" class="small" data-action="open" aria-label=${`Open the request for ${who}`} aria-describedby=${described} onClick=${() => onOpen(task)}>Open</button>
      ${error ? html`<p class="error" role="alert" id=${errId}>${error}</p>` : null}
    </div></td>
  </tr>`;
}

function Worklist({ api, openRequest }) {
  const alive = useAlive();
  const [me, setMe] = useState(null);
  const [meError, setMeError] = useState(null);
  const [tab, setTab] = useState("open");
  // Per tab: {rows, total, next}, plus loading and error.
  const [lists, setLists] = useState({});
  const [status, setStatus] = useState({});
  const [rowBusy, setRowBusy] = useState({});
  const [rowError, setRowError] = useState({});
  const [stream, setStream] = useState(null);
  // Events arrive outside Preact's render: they read the current state through this ref.
  const now = useRef({ lists, me });
  now.current = { lists, me };
  const loads = useRef({});
  // The requests being fetched after an event, each with its fetch's number and the latest
  // event about it (laid over the answer, which may land after a later event).
  const fetching = useRef({});
  // A partly loaded tab's total is counted again by the service once events pause.
  const recount = useRef(null);
  if (!recount.current)
    recount.current = recounter({
      count: async (t) => {
        const r = await api.careWorklist({ ...queryFor(t, now.current.me), count: 1, total: true });
        return r.ok ? (r.value.total ?? null) : null;
      },
      onCount: (t, n) => alive.current && setLists((l) => (l[t] ? { ...l, [t]: setTotal(l[t], n) } : l)),
    });

  // The row button the keyboard was on ({el, tab, uuid, action, index}), so the focus is not left
  // on the page's body when the button goes: Claim swapped for Release, or the row taken out
  // by an event.
  const root = useRef(null);
  const focused = useRef(null);
  function onFocusIn(ev) {
    const button = ev.target.closest && ev.target.closest("tr[data-request] button[data-action]");
    if (!button) {
      focused.current = null;
      return;
    }
    const row = button.closest("tr");
    focused.current = {
      el: button,
      tab: row.closest("table").id.replace(/^wl-table-/, ""),
      uuid: row.dataset.request,
      action: button.dataset.action,
      index: Array.from(row.parentElement.children).indexOf(row),
    };
  }
  function onFocusOut(ev) {
    // Moved away on purpose (the button is still there and usable): nothing to follow.
    const gone = ev.target;
    setTimeout(() => {
      const was = focused.current;
      if (was && was.el === gone && gone.isConnected && !gone.disabled) focused.current = null;
    });
  }
  useEffect(() => {
    // focusin/focusout bubble (focus and blur do not); Preact would not name them right.
    const box = root.current;
    box.addEventListener("focusin", onFocusIn);
    box.addEventListener("focusout", onFocusOut);
    return () => {
      box.removeEventListener("focusin", onFocusIn);
      box.removeEventListener("focusout", onFocusOut);
    };
  }, []);
  useEffect(() => {
    const was = focused.current;
    const box = root.current;
    if (!was || !box || was.tab !== tab || !lists[tab]) return;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected && !active.disabled) return;
    const rows = lists[tab].rows.filter((t) => belongs(tab, t, me));
    const target = focusAfterChange(was, rows, me);
    const el = target
      ? box.querySelector(`#wl-table-${tab} tr[data-request="${target.uuid}"] button[data-action="${target.action}"]`)
      : box.querySelector(`#wl-tabs [aria-selected="true"]`);
    if (el && !el.disabled) el.focus();
  }, [lists, rowBusy, tab]);

  // The nav counts the open requests: the Open tab's total.
  const openTotal = lists.open ? lists.open.total : null;
  useEffect(() => {
    if (openTotal !== null) showOpenCount(openTotal);
  }, [openTotal]);

  async function load(which, more = false) {
    const who = now.current.me;
    if (which === "mine" && !who) return;
    // Only the answer to the latest load of a tab is kept.
    const mine = (loads.current[which] = (loads.current[which] || 0) + 1);
    setStatus((s) => ({ ...s, [which]: { loading: true, error: null } }));
    const before = more ? now.current.lists[which] : null;
    const q = queryFor(which, who);
    const r = await api.careWorklist(before && before.next ? { next: before.next } : { ...q, count: PAGE, total: true });
    if (!alive.current || loads.current[which] !== mine) return;
    if (!r.ok) {
      setStatus((s) => ({ ...s, [which]: { loading: false, error: r.error } }));
      return;
    }
    setLists((l) => ({ ...l, [which]: appendPage(more && l[which] ? l[which] : emptyList(), r.value) }));
    setStatus((s) => ({ ...s, [which]: { loading: false, error: null } }));
  }

  function put(task) {
    const who = now.current.me;
    setLists((l) => {
      const out = {};
      for (const [t, list] of Object.entries(l)) out[t] = putTask(list, task, t, who);
      return out;
    });
  }

  async function onEvent(event) {
    const { lists: current, me: who } = now.current;
    const fetch = Object.entries(current).some(([t, list]) => applyEvent(list, event, t, who).fetch);
    setLists((l) => {
      const out = {};
      for (const [t, list] of Object.entries(l)) out[t] = applyEvent(list, event, t, who).list;
      return out;
    });
    setRowError((e) => ({ ...e, [event.uuid]: null }));
    // A tab with further pages cannot tell whether a request it has not loaded was counted.
    for (const [t, list] of Object.entries(current)) if (list.next) recount.current.schedule(t);
    const under = fetching.current[event.uuid];
    if (under) under.event = event;
    if (!fetch) return;
    const mine = (under ? under.n : 0) + 1;
    fetching.current[event.uuid] = { n: mine, event };
    const r = await api.careTask(event.uuid);
    const latest = fetching.current[event.uuid];
    // Only the answer to the latest fetch of a request is kept.
    if (!latest || latest.n !== mine) return;
    delete fetching.current[event.uuid];
    if (alive.current && r.ok) put(withLatest(r.value, latest.event));
  }

  useEffect(() => {
    (async () => {
      const r = await api.careMe();
      if (!alive.current) return;
      if (!r.ok) {
        setMeError(r.error);
        return;
      }
      setMe(r.value);
      now.current.me = r.value;
      await load("open");
      await api.onCareTask((e) => onEvent(e));
      await api.onCareEvents((s) => {
        setStream(s);
        // A stream that does not continue after the last event seen may have missed some:
        // the loaded lists are read again.
        if (s.state === "live" && !s.resumed) for (const t of Object.keys(now.current.lists)) load(t);
      });
      await watch();
    })();
    return () => recount.current.cancel();
  }, []);

  // Starts following the events (the shell keeps one subscription running; one that ended,
  // say on a service without events, is started again).
  async function watch() {
    const watched = await api.careWatchEvents();
    if (!watched.ok && alive.current) setStream({ state: "ended", message: watched.error });
  }

  function reload() {
    load(tab);
    if (stream && stream.state === "ended") watch();
  }

  function select(t) {
    setTab(t);
    if (!now.current.lists[t]) load(t);
  }

  async function hold(task, action) {
    setRowBusy((b) => ({ ...b, [task.uuid]: true }));
    setRowError((e) => ({ ...e, [task.uuid]: null }));
    const r = action === "claim" ? await api.careClaim(task.uuid) : await api.careRelease(task.uuid);
    if (!alive.current) return;
    setRowBusy((b) => ({ ...b, [task.uuid]: false }));
    if (r.ok) put(r.value);
    else setRowError((e) => ({ ...e, [task.uuid]: r.error }));
  }

  if (meError)
    return html`<h2>Worklist</h2><div id="wl-screen" class="screen bad" role="alert"><h3>The worklist is unavailable</h3><p>${meError}</p></div>`;

  const panel = (t) => {
    const list = lists[t];
    const st = status[t] || {};
    let body;
    if (st.error) body = html`<p class="error" role="alert">${st.error}</p>`;
    else if (!list) body = html`<${Muted}>Loading requests…<//>`;
    else if (!list.rows.length) body = html`<${Muted} extra="empty">No requests here.<//>`;
    else
      body = html`<table id=${`wl-table-${t}`} class="worklist">
        <caption class="muted">${list.rows.length} of ${Math.max(list.total, list.rows.length)} request${Math.max(list.total, list.rows.length) === 1 ? "" : "s"}</caption>
        <thead><tr><th scope="col">expires</th><th scope="col">patient</th><th scope="col">program</th><th scope="col">held by</th><th scope="col">status</th><th scope="col"><span class="muted">actions</span></th></tr></thead>
        <tbody>${list.rows
          .filter((task) => belongs(t, task, me))
          .map(
            (task) => html`<${Row} key=${task.uuid} task=${task} me=${me} busy=${rowBusy[task.uuid]} error=${rowError[task.uuid]}
              onClaim=${(x) => hold(x, "claim")} onRelease=${(x) => hold(x, "release")} onOpen=${(x) => openRequest(x.uuid)} />`,
          )}</tbody>
      </table>`;
    return html`${body}
      ${list && list.next
        ? html`<button type="button" class="small" id=${`wl-more-${t}`} disabled=${st.loading} onClick=${() => load(t, true)}>
            ${st.loading ? "Loading…" : "More"}</button>`
        : null}`;
  };

  return html`<div ref=${root}>
    <div class="row"><h2>Worklist</h2>
      <span class="muted" id="wl-me">${me ? `signed in to care as ${me.name}` : ""}</span>
      <button type="button" class="small" id="wl-reload" onClick=${reload}>Reload</button>
      <${StartHere} api=${api} />
    </div>
    <p class="muted" id="wl-live" role="status">${liveText(stream)}</p>
    <${Tabs} id="wl-tabs" label="Requests" tabs=${TABS} selected=${tab} onSelect=${select} />
    ${TABS.map((t) => html`<${TabPanel} key=${t.id} tabs="wl-tabs" tab=${t.id} selected=${tab}>${panel(t.id)}<//>`)}
  </div>`;
}

/** "Open Slipway on the worklist": the care staff's home view, remembered by the shell. */
function StartHere({ api }) {
  const [on, setOn] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api.environment().then((res) => setOn(res.ok && res.value.home === "worklist"));
  }, []);
  async function change(ev) {
    const want = ev.target.checked;
    const res = await api.setHomeView(want ? "worklist" : null);
    if (res.ok) {
      setOn(want);
      setError(null);
    } else {
      setError(res.error);
    }
  }
  return html`<label class="check" for="wl-home">
      <input type="checkbox" id="wl-home" checked=${!!on} disabled=${on === null} onChange=${change} />
      Open Slipway on the worklist</label>
    ${error ? html`<span class="error" role="alert">${error}</span>` : null}`;
}

export function mount(root, { api, go, shared }) {
  const openRequest = (uuid) => {
    shared.missingInfo = { uuid };
    go("missing");
  };
  render(html`<${Worklist} api=${api} openRequest=${openRequest} />`, root);
}
