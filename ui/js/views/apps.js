// Apps: the list with each app's status and the register form on the left; the chosen app on
// the right, its pages in tabs (views/apps/). Every decision (what may be revoked or granted,
// what a status means) is the Rust side's; this view shows the answers.
import { html, render, useEffect, useRef, useState } from "../../vendor/preact-htm.js";
import { AppDetail } from "./apps/detail.js";
import { AppList, RegisterBox } from "./apps/list.js";

function AppsView({ api, shared, visit }) {
  const [apps, setApps] = useState(null);
  const [listError, setListError] = useState(null);
  const [next, setNext] = useState(null);
  const [current, setCurrent] = useState(null);
  const [tab, setTab] = useState("overview");
  const [deleted, setDeleted] = useState(null);
  // Each list load has a ticket; an answer for an older one is dropped, so a slow reply never
  // overwrites what the user asked for since.
  const ticket = useRef(0);

  async function loadApps(more = false) {
    const mine = ++ticket.current;
    const res = await api.tool("list_apps", more && next ? { next_page_token: next } : {});
    if (mine !== ticket.current) return;
    if (!res.ok) {
      setListError(res.error);
      setNext(null);
      return;
    }
    setListError(null);
    setApps((a) => (more && a ? [...a, ...res.value.apps] : res.value.apps));
    setNext(res.value.next_page_token || null);
  }
  const open = (appId) => {
    setDeleted(null);
    setCurrent(appId);
  };
  // Every visit reloads the list; an app another view asked for (New app's "Show in Apps") opens.
  useEffect(() => {
    loadApps();
    if (shared && shared.openApp) {
      open(shared.openApp);
      shared.openApp = null;
    }
  }, [visit]);

  // The list shows the status it was loaded with: an opened app's badge is brought up to date.
  const onStatus = (appId, status) => setApps((a) => a && a.map((x) => (x.app_id === appId && x.status !== status ? { ...x, status } : x)));
  const onDeleted = (lines) => {
    setCurrent(null);
    setDeleted(lines);
    loadApps();
  };

  let detail;
  if (current) {
    detail = html`<${AppDetail} key=${current} api=${api} appId=${current} tab=${tab} onTab=${setTab}
      onListChanged=${() => loadApps()} onStatus=${onStatus} onDeleted=${onDeleted} />`;
  } else if (deleted) {
    detail = deleted.map((l) => html`<p class=${l.ok ? "ok" : "error"} id=${l.id} role=${l.ok ? "status" : "alert"}>${l.text}</p>`);
  } else {
    detail = html`<p class="muted">Select an app to see its status, builds, deployments, logs, secrets, resources and who can access it.</p>`;
  }
  return html`<div class="split">
    <div class="pane">
      <${AppList} apps=${apps} error=${listError} more=${Boolean(next)} current=${current} onOpen=${open}
        onRefresh=${() => loadApps()} onMore=${() => loadApps(true)} />
      <${RegisterBox} api=${api} onRegistered=${async (appId) => {
        await loadApps();
        open(appId);
      }} />
    </div>
    <div class="pane" id="app-detail">${detail}</div>
  </div>`;
}

export function mount(root, { api, shared }) {
  let visit = 0;
  return () => render(html`<${AppsView} api=${api} shared=${shared} visit=${++visit} />`, root);
}
