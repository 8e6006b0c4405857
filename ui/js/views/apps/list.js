// The left pane of Apps: the account's apps (paged) with their status, and the form that
// registers a new one.
import { html, useState } from "../../../vendor/preact-htm.js";
import { StatusBadge } from "../../components/status-badge.js";

/** `apps` is null while the first page loads; `error` the failed answer's message. */
export function AppList({ apps, error, more, current, onOpen, onRefresh, onMore }) {
  let items;
  if (error) items = html`<li class="error" role="alert">${error}</li>`;
  else if (apps === null) items = html`<li class="muted">Loading apps… (the first call starts the local platform)</li>`;
  else if (!apps.length) items = html`<li class="muted empty">No apps yet: register one below, or build a project.</li>`;
  else {
    items = apps.map((a) => html`<li key=${a.app_id}>
      <button type="button" data-app=${a.app_id} aria-current=${String(a.app_id === current)} onClick=${() => onOpen(a.app_id)}>
        <span>${a.name}</span><${StatusBadge} status=${a.status} />
      </button>
    </li>`);
  }
  return html`
    <div class="row"><h2>Apps</h2><button type="button" id="apps-refresh" class="small" onClick=${onRefresh}>Refresh</button></div>
    <ul id="apps-list" class="list" aria-live="polite">${items}</ul>
    <button type="button" id="apps-more" class=${more && !error ? "small" : "small hidden"} onClick=${onMore}>Load more</button>`;
}

/** Registers an app (and writes its .app file when a project folder is given). */
export function RegisterBox({ api, onRegistered }) {
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function submit(ev) {
    ev.preventDefault();
    const form = ev.currentTarget;
    const f = new FormData(form);
    const args = { name: f.get("name").trim(), display_name: f.get("display_name").trim() };
    const project = f.get("project_path").trim();
    if (project) args.project_path = project;
    setBusy(true);
    const answer = await api.tool("register_app", args);
    setBusy(false);
    setRes(answer);
    if (!answer.ok) return;
    form.reset();
    onRegistered(answer.value.app_id);
  }
  return html`<details id="register" class="box">
    <summary>Register an app</summary>
    <form id="register-form" autocomplete="off" onSubmit=${submit}>
      <label>App name<input name="name" required placeholder="orders-api" /></label>
      <label>Display name<input name="display_name" required placeholder="Orders API" /></label>
      <label>Project folder (writes its .app file)<input name="project_path" placeholder="/home/you/projects/orders-api" /></label>
      <button type="submit" id="register-button" class="primary" disabled=${busy}>Register</button>
    </form>
    <div id="register-result" class="result" aria-live="polite">
      ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
      ${res && res.ok ? html`<p class="ok" role="status">${res.value.message}</p>
        ${res.value.app_file ? html`<ul><li>wrote ${res.value.app_file}</li></ul>` : null}` : null}
    </div>
  </details>`;
}
