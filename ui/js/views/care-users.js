// Admin: care users and their object/field permissions, through the care admin API.
import { html, render, useEffect, useState } from "../../vendor/preact-htm.js";
import { Input } from "../components/field.js";

const OBJECTS = ["CarePlan", "Account", "ContactPoint", "Consent", "MemberPlan", "Prescription", "AdditionalObject", "ErxRequest", "DataRequest"];
const FLAGS = ["read", "create", "edit"];

function Permissions({ user, api, onSaved }) {
  const [perms, setPerms] = useState(user.permissions || []);
  const [field, setField] = useState({ object: "Account", field: "" });
  const [res, setRes] = useState(null);
  const flip = (i, flag) => setPerms(perms.map((p, j) => (j === i ? { ...p, [flag]: !p[flag] } : p)));
  async function save() {
    const r = await api.careSetPermissions(user.id, perms);
    setRes(r);
    if (r.ok) onSaved();
  }
  return html`<div class="box perms" data-user=${user.name}>
    <table><tr><th>object</th><th>field</th>${FLAGS.map((f) => html`<th>${f}</th>`)}<th></th></tr>
      ${perms.map((p, i) => html`<tr>
        <td>${p.object}</td><td>${p.field || html`<span class="muted">all fields</span>`}</td>
        ${FLAGS.map((f) => html`<td><input type="checkbox" aria-label=${`${f} ${p.object}${p.field ? "." + p.field : ""}`} checked=${Boolean(p[f])} onChange=${() => flip(i, f)} /></td>`)}
        <td><button type="button" class="small" onClick=${() => setPerms(perms.filter((_, j) => j !== i))}>Remove</button></td></tr>`)}
    </table>
    <div class="inline">
      <${Input} label="Object" name="perm-object" type="select" options=${OBJECTS} value=${field.object} onValue=${(v) => setField({ ...field, object: v })} />
      <${Input} label="Field (empty: the whole object)" name="perm-field" value=${field.field} onValue=${(v) => setField({ ...field, field: v })} />
      <button type="button" class="small" onClick=${() => setPerms([...perms, { object: field.object, ...(field.field.trim() ? { field: field.field.trim() } : {}), read: true, create: false, edit: false }])}>Add entry</button>
      <button type="button" class="small" onClick=${save}>Save permissions</button>
    </div>
    ${res ? html`<p class=${res.ok ? "ok" : "error"} role=${res.ok ? "status" : "alert"}>${res.ok ? "Saved." : res.error}</p>` : null}
  </div>`;
}

function CareUsers({ api, visit }) {
  const [users, setUsers] = useState(null);
  const [error, setError] = useState(null);
  const [open, setOpen] = useState(null);
  const [form, setForm] = useState({ name: "", admin: false });
  const [created, setCreated] = useState(null);

  async function load() {
    const r = await api.careUsers();
    if (r.ok) {
      setUsers(r.value);
      setError(null);
    } else setError(r);
  }
  useEffect(() => {
    load();
  }, [visit]);

  async function create(ev) {
    ev.preventDefault();
    const r = await api.careCreateUser({ name: form.name, admin: form.admin, permissions: [] });
    setCreated(r);
    if (r.ok) {
      setForm({ name: "", admin: false });
      load();
    }
  }
  async function del(u) {
    const r = await api.careDeleteUser(u.id);
    if (!r.ok) setError(r);
    load();
  }

  let list;
  if (error) list = html`<p class="error" role="alert">${error.error}</p>`;
  else if (!users) list = html`<p class="muted">Loading users… (the first call starts the local care service)</p>`;
  else if (!users.length) list = html`<p class="muted empty">No care users.</p>`;
  else
    list = html`<table id="care-users-table"><tr><th>name</th><th>role</th><th>permissions</th><th></th></tr>
      ${users.map((u) => html`<tr key=${u.id}>
        <td>${u.name}</td><td>${u.admin ? "admin" : "staff"}</td><td>${u.admin ? "every access" : `${u.permissions.length} entr${u.permissions.length === 1 ? "y" : "ies"}`}</td>
        <td class="row">${u.admin ? null : html`<button type="button" class="small" onClick=${() => setOpen(open === u.id ? null : u.id)}>${open === u.id ? "Close" : "Permissions"}</button>`}
          <button type="button" class="small danger" onClick=${() => del(u)}>Delete</button></td></tr>
        ${open === u.id ? html`<tr><td colspan="4"><${Permissions} user=${u} api=${api} onSaved=${load} /></td></tr>` : null}`)}
    </table>`;

  return html`
    <div class="row"><h2>Care users</h2><button type="button" class="small" onClick=${load}>Refresh</button></div>
    <p class="muted">Who may use the care services, and what each may read, create and edit (per object, or per field).</p>
    ${list}
    <form id="care-user-form" class="box" onSubmit=${create}>
      <h3>Add a user</h3>
      <div class="inline">
        <${Input} label="Name" name="care-user-name" value=${form.name} onValue=${(v) => setForm({ ...form, name: v })} errors=${created && !created.ok ? [created.error] : []} />
        <${Input} label="Admin" name="care-user-admin" type="checkbox" value=${form.admin} onValue=${(v) => setForm({ ...form, admin: v })} />
        <button type="submit" class="small" id="care-user-create">Add user</button>
      </div>
      ${created && created.ok ? html`<p class="ok" role="status">Created ${created.value.name}. Its token, shown only now: <code id="care-user-token">${created.value.token}</code></p>` : null}
    </form>`;
}

export function mount(root, { api }) {
  let visit = 0;
  return () => render(html`<${CareUsers} api=${api} visit=${++visit} />`, root);
}
