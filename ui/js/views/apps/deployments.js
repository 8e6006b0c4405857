// An app's deployments, newest first: what each ran (images, secret versions), why, how it
// ended; each with its changes from the one before and a rollback (confirmed first).
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { StatusBadge } from "../../components/status-badge.js";
import { commitLine, deploymentSecrets } from "./format.js";
import { DiffView } from "./overview.js";

const RELOAD_AFTER_ROLLBACK_MS = 3000;

export function DeploymentsPage({ api, app, round, onRolledBack }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  const [asked, setAsked] = useState(null);
  async function refresh() {
    const r = await api.appDeployments(app.app_id);
    if (alive.current) setRes(r);
  }
  useEffect(() => {
    refresh();
  }, [round]);

  let body;
  if (!res) body = html`<${Muted}>Loading deployments…<//>`;
  else if (!res.ok) body = html`<p class="error">${res.error}</p>`;
  else if (!(res.value.deployments || []).length) body = html`<${Muted} extra="empty">No deployments yet: build the app.<//>`;
  else {
    const all = res.value.deployments;
    body = html`<table>
      <thead><tr><th>started</th><th>status</th><th>why</th><th>secrets</th><th></th></tr></thead>
      <tbody>${all.map((d, i) => html`<${DeploymentRow} key=${d.id} api=${api} app=${app} deployment=${d} first=${i === all.length - 1}
        onRollback=${() => setAsked({ deployment: d, key: Date.now() })} />`)}</tbody>
    </table>`;
  }
  return html`
    <div class="row section-head"><h3>Deployments</h3>
      <button type="button" class="small" id="history-refresh" onClick=${refresh}>Refresh history</button></div>
    <div id="history">${body}</div>
    <div class="result" aria-live="polite">
      ${asked ? html`<${ConfirmRollback} key=${asked.key} api=${api} app=${app} deployment=${asked.deployment} onCancel=${() => setAsked(null)}
        onDone=${() => setTimeout(() => alive.current && (refresh(), onRolledBack()), RELOAD_AFTER_ROLLBACK_MS)} />` : null}
    </div>`;
}

function DeploymentRow({ api, app, deployment: d, first, onRollback }) {
  const alive = useAlive();
  const [diff, setDiff] = useState(null);
  const secrets = deploymentSecrets(d);
  async function changes() {
    const r = await api.appDeploymentDiff(app.app_id, d.id);
    if (alive.current) setDiff(r);
  }
  return html`<tr data-deployment-row=${d.id}>
    <td>${d.created_at}</td>
    <td><${StatusBadge} status=${d.status} /></td>
    <td>${d.cause}${d.reason ? ` — ${d.reason}` : ""}${d.commit ? html`<div class="mono hint" data-commit=${d.commit.sha}>${commitLine(d.commit)}</div>` : null}</td>
    <td class="mono">${secrets || "—"}</td>
    <td>
      <div class="row">
        <button type="button" class="small" disabled=${first} title=${first ? "The first deployment has nothing before it to compare with" : ""} onClick=${changes}>Changes</button>
        <button type="button" class="small" data-deployment=${d.id} onClick=${onRollback}>Roll back to this…</button>
      </div>
      ${diff ? (diff.ok ? html`<${DiffView} diff=${diff.value} />` : html`<p class="error">${diff.error}</p>`) : null}
    </td>
  </tr>`;
}

/** Deploys an earlier deployment again with its images and secret versions, once confirmed. */
function ConfirmRollback({ api, app, deployment: d, onCancel, onDone }) {
  const alive = useAlive();
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function rollBack() {
    setBusy(true);
    const r = await api.appRollback(app.app_id, d.id);
    if (!alive.current) return;
    setRes(r);
    if (r.ok) onDone();
    else setBusy(false);
  }
  if (res && res.ok) return html`<p class="ok" role="status">${res.value.message}</p>`;
  const secrets = deploymentSecrets(d);
  return html`<div class="confirm">
    <p>Deploy ${d.id} again with its images and secret versions (${secrets || "no secrets"})? The current deployment serves until the rollback is healthy.</p>
    <div class="row">
      <button type="button" class="small danger" id="confirm-rollback" disabled=${busy} onClick=${rollBack}>Roll back</button>
      <button type="button" class="small" onClick=${onCancel}>Cancel</button>
    </div>
    ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </div>`;
}
