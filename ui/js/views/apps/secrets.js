// An app's secrets: they reach its services as environment variables when it deploys. Values
// stay hidden until revealed; saving an existing path makes a new version. The full history
// of each secret is in the Secrets view.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Muted, Outcome } from "../../components/notice.js";
import { saveSecret } from "../../secret-save.js";

export function SecretsPage({ api, app }) {
  const alive = useAlive();
  const scope = { secret_type: "app", app_id: app.app_id };
  const [list, setList] = useState(null);
  const [path, setPath] = useState("");
  const [data, setData] = useState("");
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);

  async function refresh() {
    const r = await api.tool("list_secrets", scope);
    if (alive.current) setList(r);
  }
  useEffect(() => {
    refresh();
  }, []);

  async function save() {
    setBusy(true);
    const { res: r } = await saveSecret(api, scope, path.trim(), data.trim());
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (!r.ok) return;
    setData("");
    refresh();
  }

  let table;
  if (!list) table = html`<${Muted}>Loading secrets…<//>`;
  else if (!list.ok) table = html`<p class="error">${list.error}</p>`;
  else if (!list.value.secrets.length) table = html`<${Muted} extra="empty">No app secrets. They reach the app's services as environment variables when it deploys.<//>`;
  else {
    table = html`<table>
      <thead><tr><th>path</th><th>version</th><th>updated</th><th></th></tr></thead>
      <tbody>${list.value.secrets.map((sec) => html`<${SecretRow} key=${sec.secret_path} api=${api} scope=${scope} secret=${sec} />`)}</tbody>
    </table>`;
  }
  return html`<h3>Secrets</h3>
    <div id="secrets-table">${table}</div>
    <div class="inline">
      <label>Path<input name="secret_path" placeholder="db/credentials" value=${path} onInput=${(e) => setPath(e.currentTarget.value)} /></label>
      <label>Data (JSON object)<input name="secret_data" placeholder='{"DB_PASSWORD": "…"}' value=${data} onInput=${(e) => setData(e.currentTarget.value)} /></label>
      <button type="button" class="small" id="secret-save" disabled=${busy} onClick=${save}>Save secret</button>
    </div>
    <div class="result" id="secret-save-result" aria-live="polite"><${Outcome} res=${res} okText=${res && res.ok ? res.value.message : ""} /></div>`;
}

function SecretRow({ api, scope, secret: sec }) {
  const alive = useAlive();
  const [value, setValue] = useState(null);
  async function reveal() {
    const r = await api.tool("get_secret", { ...scope, secret_path: sec.secret_path });
    if (alive.current) setValue(r);
  }
  return html`<tr>
    <td class="mono">${sec.secret_path}</td><td>${sec.version ?? ""}</td><td>${sec.updated_at ?? ""}</td>
    <td><button type="button" class="small" aria-label=${`Show value of ${sec.secret_path}`} onClick=${reveal}>Show value</button>
      <span class="mono">${value ? (value.ok ? JSON.stringify(value.value.data) : html`<span class="error">${value.error}</span>`) : null}</span></td>
  </tr>`;
}
