// An app's backing resources (devfile managedInfra and the durable block) and volumes, as the
// platform reports them: names of the variables each gives the app, never their values. Per
// resource, editors and owners reveal its credentials (the password hidden until shown) and
// rotate them; owners destroy it with its data. Each action is confirmed first where it cannot
// be undone, and the platform decides who may do what.
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { copiedLine, copyText } from "../../components/copy.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { humanBytes, maskedUrl, resourceActions, resourceLine, resourceSize } from "./format.js";

/** `onChanged` reloads the app (its record carries the lists the delete confirmation names). */
export function ResourcesPage({ api, app, onChanged }) {
  const alive = useAlive();
  const [list, setList] = useState({ ok: true, value: { resources: app.resources || [], volumes: app.volumes || [] } });
  const [role, setRole] = useState(null);
  // The action under the table: {action: "credentials"|"rotate"|"destroy", resource, key}.
  const [asked, setAsked] = useState(null);

  async function refresh() {
    const r = await api.appResources(app.app_id);
    if (alive.current) setList(r);
  }
  useEffect(() => {
    refresh();
    // The caller's role on the app decides which actions are offered (the platform checks again).
    api.tool("list_grantable_roles", { app_id: app.app_id }).then((r) => alive.current && r.ok && setRole(r.value.your_role || null));
  }, []);

  const may = resourceActions(role);
  const ask = (action, resource) => setAsked({ action, resource, key: Date.now() });
  const done = () => {
    refresh();
    onChanged();
  };

  const resources = (list.ok && list.value.resources) || [];
  const volumes = (list.ok && list.value.volumes) || [];
  let body;
  if (!list.ok) body = html`<p class="error">${list.error}</p>`;
  else if (!resources.length && !volumes.length) {
    body = html`<div class="muted empty" id="resources-empty">
      <p>This app has no backing resources and no volumes.</p>
      <p>${"Backing resources (a relationalDatabase: postgres or mysql; a cache: redis or memcached; an inMemoryDatabase: redis; a queue; an objectStorage bucket; a keyValueTable) are declared in devfile.yaml under "}
        <code>metadata.platform.managedInfra</code>${", a Restate server under "}<code>metadata.platform.durable</code>${"; volumes are "}<code>volume</code>${" components, mounted by containers through their "}<code>volumeMounts</code>.</p>
      <p>The platform provisions both when the app is built and deployed, and gives every service the resources' connection variables.</p>
    </div>`;
  } else {
    body = html`
      <h4>Backing resources</h4>
      ${resources.length
        ? html`<table id="resources-table">
            <thead><tr><th>kind</th><th>name</th><th>engine</th><th>state</th><th>size</th><th>variables</th><th></th></tr></thead>
            <tbody>${resources.map((r) => html`<${ResourceRow} key=${`${r.kind}/${r.name}`} resource=${r} may=${may} onAsk=${ask} />`)}</tbody>
          </table>`
        : html`<${Muted} extra="empty">No backing resources: declare them in devfile.yaml under metadata.platform.managedInfra.<//>`}
      <h4>Volumes</h4>
      ${volumes.length
        ? html`<table id="volumes-table">
            <thead><tr><th>name</th><th>declared size</th><th>used</th><th>ephemeral</th><th>mounts</th></tr></thead>
            <tbody>${volumes.map((v) => html`<tr key=${v.name} data-volume=${v.name}>
              <td class="mono">${v.name}</td><td>${v.size || "—"}</td><td>${humanBytes(v.used_bytes ?? 0)}</td>
              <td>${v.ephemeral ? "yes (empty on each deploy)" : "no"}</td><td class="mono">${(v.mounts || []).join(", ") || "—"}</td>
            </tr>`)}</tbody>
          </table>`
        : html`<${Muted} extra="empty">No volumes: declare them as volume components in devfile.yaml.<//>`}
      ${role === "viewer" ? html`<${Muted} id="resources-viewer">As a viewer of this app you see its resources but not their credentials.<//>` : null}`;
  }

  const close = () => setAsked(null);
  let action = null;
  if (asked && asked.action === "credentials") action = html`<${Credentials} key=${asked.key} api=${api} app=${app} resource=${asked.resource} onClose=${close} />`;
  else if (asked && asked.action === "rotate") action = html`<${ConfirmRotate} key=${asked.key} api=${api} app=${app} resource=${asked.resource} onCancel=${close} onDone=${done} />`;
  else if (asked && asked.action === "destroy") action = html`<${ConfirmDestroy} key=${asked.key} api=${api} app=${app} resource=${asked.resource} onCancel=${close} onDone=${done} />`;

  return html`
    <div class="row section-head"><h3>Resources</h3>
      <button type="button" class="small" id="resources-refresh" onClick=${refresh}>Refresh</button></div>
    <div id="resources">${body}</div>
    <div class="result" id="resource-action" aria-live="polite">${action}</div>`;
}

function ResourceRow({ resource: r, may, onAsk }) {
  const what = resourceLine(r);
  return html`<tr data-resource=${`${r.kind}/${r.name}`}>
    <td>${r.kind}</td><td class="mono">${r.name}</td><td>${r.engine}</td>
    <td>${r.state}${r.state === "detached" ? html`<br /><small class="muted">no longer declared; its data is kept until destroyed</small>` : null}</td>
    <td>${resourceSize(r)}</td>
    <td class="mono">${(r.variables || []).join(", ") || "—"}</td>
    <td><div class="row">
      ${may.reveal ? html`<button type="button" class="small" data-action="credentials" aria-label=${`Reveal the credentials of ${what}`} onClick=${() => onAsk("credentials", r)}>Reveal credentials</button>` : null}
      ${may.rotate ? html`<button type="button" class="small" data-action="rotate" aria-label=${`Rotate the credentials of ${what}`} onClick=${() => onAsk("rotate", r)}>Rotate…</button>` : null}
      ${may.destroy ? html`<button type="button" class="small danger" data-action="destroy" aria-label=${`Destroy ${what}`} onClick=${() => onAsk("destroy", r)}>Destroy…</button>` : null}
    </div></td>
  </tr>`;
}

/** A resource's credentials: the password (in the URL too) hidden until Show is pressed. */
function Credentials({ api, app, resource: r, onClose }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  const [shown, setShown] = useState(false);
  const [how, setHow] = useState(null);
  const urlInput = useRef(null);
  useEffect(() => {
    api.resourceCredentials(app.app_id, r.kind, r.name).then((x) => alive.current && setRes(x));
  }, []);

  if (!res) return html`<${Muted}>Asking the platform for the credentials of ${resourceLine(r)}…<//>`;
  if (!res.ok) return html`<p class="error" role="alert" id="resource-credentials-error">${res.error}</p>`;
  const c = res.value;
  async function copyUrl() {
    const nav = globalThis.navigator;
    // When the clipboard refuses, the URL is shown in full and selected for Ctrl+C.
    const selectUrl = () => {
      setShown(true);
      setTimeout(() => urlInput.current && (urlInput.current.focus(), urlInput.current.select()), 0);
    };
    setHow(await copyText(c.url, nav && nav.clipboard, selectUrl));
  }
  const hidden = "••••••";
  const row = (label, value, id) => html`<tr><th scope="row">${label}</th><td class="mono" id=${id}>${value === "" || value === null || value === undefined ? "—" : String(value)}</td></tr>`;
  return html`<div class="watch" id="resource-credentials">
    <p><strong>Credentials of ${resourceLine(c)}</strong></p>
    <div class="copy-row">
      <input id="resource-url" class="mono" readonly aria-label="Connection URL" value=${shown ? c.url : maskedUrl(c.url, c.password)} ref=${urlInput} />
      <button type="button" class="small" id="resource-url-copy" onClick=${copyUrl}>Copy URL</button>
    </div>
    <small id="resource-url-copied" role="status">${copiedLine(how)}</small>
    <table>
      <tbody>
        ${row("host", c.host, "resource-host")}
        ${row("port", c.port, "resource-port")}
        ${row("user", c.user, "resource-user")}
        ${row("password", shown ? c.password : c.password ? hidden : "", "resource-password")}
        ${row("database", c.database, "resource-database")}
      </tbody>
    </table>
    <div class="row">
      <button type="button" class="small" id="resource-password-toggle" aria-pressed=${shown ? "true" : "false"} onClick=${() => setShown(!shown)}>${shown ? "Hide password" : "Show password"}</button>
      <button type="button" class="small" onClick=${onClose}>Close</button>
    </div>
  </div>`;
}

/** New credentials for a resource, once confirmed: the old password stops working. */
function ConfirmRotate({ api, app, resource: r, onCancel, onDone }) {
  const alive = useAlive();
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function rotate() {
    setBusy(true);
    const x = await api.resourceRotate(app.app_id, r.kind, r.name);
    if (!alive.current) return;
    setRes(x);
    if (x.ok) onDone();
    else setBusy(false);
  }
  if (res && res.ok) return html`<p class="ok" role="status" id="resource-rotated">New credentials for ${resourceLine(r)}: the app restarts on them.</p>`;
  return html`<div class="confirm" id="confirm-rotate-box">
    <p>Rotate the credentials of ${resourceLine(r)}? The old password stops working; the app restarts on the new one.</p>
    <div class="row">
      <button type="button" class="small danger" id="confirm-rotate" disabled=${busy} onClick=${rotate}>Rotate the credentials</button>
      <button type="button" class="small" onClick=${onCancel}>Cancel</button>
    </div>
    ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </div>`;
}

/** Destroys a resource and its data for good, once confirmed. */
function ConfirmDestroy({ api, app, resource: r, onCancel, onDone }) {
  const alive = useAlive();
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function destroy() {
    setBusy(true);
    const x = await api.resourceDestroy(app.app_id, r.kind, r.name);
    if (!alive.current) return;
    setRes(x);
    if (x.ok) onDone();
    else setBusy(false);
  }
  if (res && res.ok) return html`<p class="ok" role="status" id="resource-destroyed">${res.value.message}</p>`;
  const attached = r.state === "attached";
  return html`<div class="confirm" id="confirm-destroy-box">
    <p id="confirm-destroy-text">Destroy ${resourceLine(r)}? Its data is destroyed for good: there is no undo.${attached
      ? " It is still declared in devfile.yaml, so the next deploy provisions it again, empty."
      : ""}</p>
    <div class="row">
      <button type="button" class="small danger" id="confirm-destroy" disabled=${busy} onClick=${destroy}>Destroy ${r.kind} ${r.name} and its data</button>
      <button type="button" class="small" onClick=${onCancel}>Keep it</button>
    </div>
    ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </div>`;
}
