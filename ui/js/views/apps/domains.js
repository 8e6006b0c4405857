// An app's custom domains: each name with where its certificate stands (pending and why,
// issued with its issuer and expiry, renewing, failed with the CA's message), adding one (a
// name to serve, or a redirect to another of the app's domains) and removing one, confirmed
// first. The platform decides who may (editors and owners add and remove) and checks every
// name; its refusal is shown under the field it names.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Input, focusFirstInvalid } from "../../components/field.js";
import { Muted } from "../../components/notice.js";
import { domainServes, domainStateLine } from "./format.js";

const FORM_ID = "domain-add-form";

export function DomainsPage({ api, app }) {
  const alive = useAlive();
  const [list, setList] = useState(null);
  const [asked, setAsked] = useState(null);
  const [done, setDone] = useState(null);

  async function refresh() {
    const r = await api.tool("list_domains", { app_id: app.app_id });
    if (alive.current) setList(r);
  }
  useEffect(() => {
    refresh();
  }, []);

  const domains = list && list.ok ? list.value.domains : [];
  let body;
  if (!list) body = html`<${Muted}>Asking the platform for the app's domains…<//>`;
  else if (!list.ok) body = html`<p class="error" role="alert">${list.error}</p>`;
  else if (!domains.length) {
    body = html`<div class="muted empty" id="domains-empty">
      <p>The app is served on no domain of its own yet.</p>
      <p>Add one below, then point its DNS (an A or AAAA record) at the platform: the certificate is issued and renewed by itself.</p>
    </div>`;
  } else {
    body = html`<table id="domains-table">
      <thead><tr><th>domain</th><th>serves</th><th>certificate</th><th></th></tr></thead>
      <tbody>${domains.map((d) => html`<tr key=${d.name} data-domain=${d.name}>
        <td class="mono">${d.name}</td>
        <td>${domainServes(d)}</td>
        <td data-state=${d.state}>${domainStateLine(d)}</td>
        <td><button type="button" class="small danger" aria-label=${`Remove ${d.name}`} onClick=${() => setAsked(d.name)}>Remove</button></td>
      </tr>`)}</tbody>
    </table>`;
  }

  return html`
    <div class="row section-head"><h3>Domains</h3>
      <button type="button" class="small" id="domains-refresh" onClick=${refresh}>Refresh</button></div>
    <div id="domains" aria-live="polite">${body}</div>
    ${asked
      ? html`<${ConfirmRemove} key=${asked} api=${api} app=${app} name=${asked} onCancel=${() => setAsked(null)}
          onDone=${(line) => {
            setAsked(null);
            setDone(line);
            refresh();
          }} />`
      : null}
    ${done ? html`<p class="ok" role="status" id="domain-done">${done}</p>` : null}
    <${AddDomain} api=${api} app=${app} targets=${domains.filter((d) => !d.redirect_to).map((d) => d.name)}
      onAdded=${(d) => {
        setDone(`Added ${d.name}. Point its DNS at the platform; its state shows here.`);
        refresh();
      }} />`;
}

function AddDomain({ api, app, targets, onAdded }) {
  const alive = useAlive();
  const [name, setName] = useState("");
  const [service, setService] = useState("");
  const [redirect, setRedirect] = useState("");
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function add(e) {
    e.preventDefault();
    setBusy(true);
    const args = { app_id: app.app_id, name };
    if (service.trim()) args.service = service.trim();
    if (redirect) args.redirect_to = redirect;
    const r = await api.tool("add_domain", args);
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (r.ok) {
      setName("");
      setService("");
      setRedirect("");
      onAdded(r.value);
    } else focusFirstInvalid(FORM_ID);
  }
  const errorsOf = (field) => (res && !res.ok && res.field === field ? [res.error] : null);
  const general = res && !res.ok && !["name", "service", "redirect_to"].includes(res.field);
  return html`<form id=${FORM_ID} class="stack" onSubmit=${add} aria-label="Add a domain">
    <h4>Add a domain</h4>
    <${Input} label="Domain" name="domain_name" value=${name} onValue=${setName} required placeholder="orders.example.org"
      errors=${errorsOf("name")} hint="A name you own, such as orders.example.org; not a wildcard." />
    <${Input} label="Service (optional)" name="domain_service" value=${service} onValue=${setService}
      errors=${errorsOf("service")} hint="Default: the app's first public service." />
    <${Input} label="Redirect to (optional)" name="domain_redirect_to" type="select" value=${redirect} onValue=${setRedirect}
      options=${targets} errors=${errorsOf("redirect_to")} hint="Send this name to another of the app's domains, such as www. to the apex." />
    <div class="row"><button type="submit" id="domain-add" disabled=${busy || !name.trim()}>Add the domain</button></div>
    ${general ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </form>`;
}

/** Removes a domain once confirmed: it stops being served, its certificate is deleted. */
function ConfirmRemove({ api, app, name, onCancel, onDone }) {
  const alive = useAlive();
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function remove() {
    setBusy(true);
    const r = await api.tool("remove_domain", { app_id: app.app_id, name });
    if (!alive.current) return;
    setRes(r);
    if (r.ok) onDone(`Removed ${name}: it is no longer served.`);
    else setBusy(false);
  }
  return html`<div class="confirm" id="confirm-domain-box">
    <p>Stop serving the app on ${name}? Its certificate is deleted; adding it again issues a new one.</p>
    <div class="row">
      <button type="button" class="small danger" id="confirm-domain-remove" disabled=${busy} onClick=${remove}>Remove ${name}</button>
      <button type="button" class="small" onClick=${onCancel}>Keep it</button>
    </div>
    ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </div>`;
}
