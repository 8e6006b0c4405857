// An app's latest logs: one per service and kind, each a presigned URL valid for 15 minutes.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { ExternalLink, Muted } from "../../components/notice.js";

export function LogsPage({ api, app, round }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  async function show() {
    setRes(null);
    const r = await api.tool("get_app_logs", { app_id: app.app_id, latest_only: true });
    if (alive.current) setRes(r);
  }
  useEffect(() => {
    show();
  }, [round]);

  let body;
  if (!res) body = html`<${Muted}>Loading the latest logs…<//>`;
  else if (!res.ok) body = html`<p class="error" role="alert">${res.error}</p>`;
  else if (!res.value.logs.length) body = html`<${Muted} extra="empty">No logs yet.<//>`;
  else {
    body = html`<table>
      <thead><tr><th>service</th><th>kind</th><th>time</th><th>size</th><th>presigned URL (15 min)</th></tr></thead>
      <tbody>${res.value.logs.map((l) => html`<tr><td>${l.service}</td><td>${l.kind}</td><td>${l.time}</td><td>${l.size} B</td>
        <td class="mono"><${ExternalLink} api=${api} url=${l.url} /></td></tr>`)}</tbody>
    </table>`;
  }
  return html`<div class="row section-head"><h3>Latest logs</h3>
      <button type="button" class="small" data-action="show-logs" onClick=${show}>Show latest logs</button></div>
    <div id="app-logs" aria-live="polite">${body}</div>`;
}
