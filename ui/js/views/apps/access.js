// Who may use an app: its users and roles, a grant (of the roles the toolkit says you may
// grant, to a user of the account) and a revoke where the toolkit says it is allowed.
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Muted, Outcome } from "../../components/notice.js";

export function AccessPage({ api, app }) {
  const alive = useAlive();
  const [perms, setPerms] = useState(null);
  const [people, setPeople] = useState([]);
  const [res, setRes] = useState(null);
  const who = useRef(null);
  const role = useRef(null);

  async function refresh() {
    const r = await api.tool("list_app_permissions", { app_id: app.app_id });
    if (alive.current) setPerms(r);
  }
  useEffect(() => {
    refresh();
    // The account's users to pick from; an e-mail or id typed in works too.
    api.tool("list_account_users", {}).then((r) => alive.current && r.ok && setPeople(r.value.users || []));
  }, []);

  async function grant() {
    const r = await api.tool("grant_app_role", { app_id: app.app_id, role: role.current.value, user_id: who.current.value.trim() });
    if (!alive.current) return;
    setRes({ ...r, text: r.ok ? r.value.message : "" });
    if (r.ok) who.current.value = "";
    refresh();
  }
  async function revoke(u) {
    const r = await api.tool("revoke_app_role", { app_id: app.app_id, role: u.role, user_id: u.user_id });
    if (!alive.current) return;
    setRes({ ...r, text: r.ok ? r.value.message : "" });
    refresh();
  }

  const grantable = (perms && perms.ok && perms.value.grantable_roles) || [];
  let table;
  if (!perms) table = html`<${Muted}>Loading access…<//>`;
  else if (!perms.ok) table = html`<p class="error">${perms.error}</p>`;
  else {
    table = html`<table>
      <thead><tr><th>user</th><th>email</th><th>role</th><th></th></tr></thead>
      <tbody>${perms.value.users.map((u) => html`<tr key=${`${u.user_id}-${u.role}`}><td>${u.name}</td><td>${u.email}</td><td>${u.role}</td>
        <td><button type="button" class="small" data-user=${u.email || u.user_id} disabled=${!u.revocable} title=${u.revoke_note || ""}
          onClick=${() => revoke(u)}>Revoke</button></td></tr>`)}</tbody>
    </table>`;
  }
  // Whether a role may be revoked or granted, and why not, is the toolkit's answer.
  const cannot = perms && perms.ok && !grantable.length;
  return html`<h3>Access</h3>
    <div id="access-table">${table}</div>
    <div class="inline">
      <label>User (e-mail or id)<input ref=${who} name="grant_user" placeholder="colleague@example.com" list="account-users" /></label>
      <datalist id="account-users">${people.map((u) => html`<option value=${u.email}>${u.name}</option>`)}</datalist>
      <label>Role<select ref=${role} name="grant_role">${grantable.map((r) => html`<option value=${r}>${r}</option>`)}</select></label>
      <button type="button" class="small" id="grant-button" disabled=${!grantable.length} onClick=${grant}>Grant</button>
    </div>
    <div class="result" aria-live="polite">
      ${cannot && !res ? html`<${Muted}>As ${perms.value.your_role || "a viewer"} of this app you cannot grant roles.<//>` : null}
      <${Outcome} res=${res} okText=${res && res.text} />
    </div>`;
}
