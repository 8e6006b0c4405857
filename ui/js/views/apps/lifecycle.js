// An app's actions: refresh or watch its status, enable or disable it, delete it (confirmed
// first, naming the data that goes with it, offering to remove the project's .app file too).
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Outcome } from "../../components/notice.js";
import { INTERVAL_MS, SETTLED, watchStatus } from "../../watch-status.js";
import { dataRemovedText, deleteDataText } from "./format.js";

export function Lifecycle({ api, app, project, onReload, onListChanged, onDeleted, onSettled }) {
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  const [confirming, setConfirming] = useState(false);
  const [watchLine, setWatchLine] = useState("");

  async function toggle() {
    setBusy(true);
    const answer = await api.tool(app.enabled ? "disable_app" : "enable_app", { app_id: app.app_id });
    setBusy(false);
    setRes(answer.ok ? null : answer);
    if (!answer.ok) return;
    onListChanged();
    onReload();
  }

  return html`<div class="app-actions">
    <div class="row">
      <button type="button" class="small" id="status-refresh" onClick=${onReload}>Refresh status</button>
      <${StatusWatch} api=${api} app=${app} onLine=${setWatchLine} onSettled=${onSettled} />
      <button type="button" class="small" disabled=${busy} onClick=${toggle}>${app.enabled ? "Disable" : "Enable"}</button>
      <button type="button" class="small danger" onClick=${() => (setRes(null), setConfirming(true))}>Delete…</button>
    </div>
    <p class="muted" id="status-watching" aria-live="polite">${watchLine}</p>
    <div class="result" aria-live="polite">
      <${Outcome} res=${res} />
      ${confirming ? html`<${ConfirmDelete} api=${api} app=${app} project=${project} onCancel=${() => setConfirming(false)} onDeleted=${onDeleted} />` : null}
    </div>
  </div>`;
}

/** Watch status: polls every 10 s until RUNNING or FAILED, then shows the app's latest logs. */
function StatusWatch({ api, app, onLine, onSettled }) {
  const alive = useAlive();
  const signal = useRef(null);
  const [watching, setWatching] = useState(false);
  useEffect(() => () => signal.current && (signal.current.stopped = true), []);

  async function click() {
    if (signal.current) {
      signal.current.stopped = true;
      return;
    }
    const mine = { stopped: false };
    signal.current = mine;
    setWatching(true);
    const settled = await watchStatus({
      fetchStatus: async () => {
        const r = await api.tool("get_app_status", { app_id: app.app_id });
        return r.ok ? r.value : { success: false, error: r.error };
      },
      onUpdate: (s) => {
        const now = new Date().toLocaleTimeString();
        if (s.success === false) onLine(`${now}: ${s.error} (trying again in ${INTERVAL_MS / 1000} s)`);
        else if (SETTLED.includes(s.status)) onLine(`${now}: ${s.status}`);
        else onLine(`${now}: ${s.status}; checking every ${INTERVAL_MS / 1000} s until RUNNING or FAILED`);
      },
      signal: mine,
    });
    signal.current = null;
    if (!alive.current) return;
    setWatching(false);
    if (settled) onSettled();
  }

  return html`<button type="button" class="small" id="status-watch" onClick=${click}>${watching ? "Stop watching" : "Watch status"}</button>`;
}

/**
 * The delete confirmation, naming the app's resources and volumes (their data goes with it);
 * the folder offered is the one typed on the Builds page, if any.
 */
function ConfirmDelete({ api, app, project, onCancel, onDeleted }) {
  const [folder, setFolder] = useState(project.trim());
  const [forget, setForget] = useState(Boolean(project.trim()));
  const [res, setRes] = useState(null);
  const [busy, setBusy] = useState(false);
  const data = deleteDataText(app);

  async function remove() {
    setBusy(true);
    const answer = await api.tool("delete_app", { app_id: app.app_id });
    if (!answer.ok) {
      setBusy(false);
      return setRes(answer);
    }
    const lines = [{ ok: true, text: answer.value.message }];
    const removed = dataRemovedText(answer.value);
    if (removed) lines.push({ ok: true, text: removed, id: "data-removed" });
    if (forget && folder.trim()) {
      const gone = await api.forgetAppFile(folder.trim(), app.app_id);
      lines.push({ ok: gone.ok, text: gone.ok ? `removed ${gone.value}` : gone.error, id: "forgot-app-file" });
    }
    onDeleted(lines);
  }

  return html`<div class="confirm">
    <p>This stops the app, deletes its builds, logs and secrets, and frees its name.</p>
    ${data ? html`<p id="delete-data"><strong>${data}</strong> This cannot be undone.</p>` : null}
    <div class="inline">
      <label class="check"><input type="checkbox" id="forget-app-file" checked=${forget} onChange=${(e) => setForget(e.currentTarget.checked)} />Also remove the .app file in</label>
      <label>Project folder<input name="forget_project" id="forget-project" value=${folder} placeholder=${`/home/you/projects/${app.name}`}
        onInput=${(e) => setFolder(e.currentTarget.value)} /></label>
    </div>
    <div class="row">
      <button type="button" class="small danger" id="confirm-delete" disabled=${busy} onClick=${remove}>Delete ${app.name} permanently</button>
      <button type="button" class="small" onClick=${onCancel}>Keep it</button>
    </div>
    <${Outcome} res=${res} />
  </div>`;
}
