// Assistants you let act for you through the platform's /mcp (docs/mcp.md): approve the sign-in
// whose page shows a code, choosing what it may do (the page's choice is kept unless you pick
// here); each assistant let in, with what it may do and when it last acted; revoke one
// (confirmed first): its next request is refused.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { Input } from "../../components/field.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { fieldErrors, otherError, scopeWords, shortTime } from "../people/format.js";

/** `environment`: the remote environment in use (null: this computer). */
export function Assistants({ api, environment }) {
  const alive = useAlive();
  const [open, setOpen] = useState(false);
  const [res, setRes] = useState(null);
  const [asked, setAsked] = useState(null);
  const [done, setDone] = useState(null);

  async function load() {
    const r = await api.grantsList();
    if (alive.current) setRes(r);
  }
  useEffect(() => {
    if (open) load();
  }, [open, environment]);

  async function revoke(grant) {
    const r = await api.grantsRevoke(grant.id);
    if (!alive.current) return;
    setAsked(null);
    setDone(r.ok ? { ok: true, text: `Revoked ${grant.client_name}: its next request is refused.` } : { ok: false, text: r.error });
    load();
  }

  let body;
  if (!res) body = html`<${Muted}>Loading the assistants you let in…<//>`;
  else if (!res.ok) body = html`<p class="error" role="alert">${res.error}</p>`;
  else if (!(res.value.grants || []).length) body = html`<p class="muted" id="no-assistants">No assistant acts for you.</p>`;
  else
    body = html`<table id="assistants-table">
      <thead><tr><th>assistant</th><th>may</th><th>let in</th><th>last acted</th><th></th></tr></thead>
      <tbody>${res.value.grants.map((g) => html`<tr key=${g.id} data-assistant=${g.client_name}>
        <td>${g.client_name}</td><td>${scopeWords(g.scope)}</td><td>${shortTime(g.created_at)}</td>
        <td>${g.last_used_at ? shortTime(g.last_used_at) : html`<span class="muted">never</span>`}</td>
        <td><button type="button" class="small danger" data-revoke-assistant=${g.client_name} onClick=${() => (setDone(null), setAsked(g))}>Revoke…</button></td>
      </tr>`)}</tbody>
    </table>`;

  return html`<details class="box" id="assistants" onToggle=${(e) => setOpen(e.currentTarget.open)}>
    <summary>Connected assistants</summary>
    <p class="muted">AI assistants connect to ${environment ? `${environment}'s` : "this computer's"} platform at its /mcp address and act as you, within what you allow here.</p>
    ${open ? body : null}
    <div class="result" aria-live="polite">
      ${asked ? html`<div class="confirm" role="alertdialog" id="confirm-revoke-assistant" aria-labelledby="confirm-revoke-assistant-title">
        <p id="confirm-revoke-assistant-title"><strong>Revoke ${asked.client_name}? It will no longer act for you.</strong></p>
        <div class="row">
          <button type="button" class="small danger" id="confirm-revoke-assistant-button" onClick=${() => revoke(asked)}>Revoke ${asked.client_name}</button>
          <button type="button" class="small" onClick=${() => setAsked(null)}>Keep it</button>
        </div>
      </div>` : null}
      ${done ? html`<p class=${done.ok ? "ok" : "error"} role=${done.ok ? "status" : "alert"} id="assistant-result">${done.text}</p>` : null}
    </div>
    ${open ? html`<${Approve} api=${api} onApproved=${load} />` : null}
  </details>`;
}

const FIELDS = ["user_code"];

/** Approves a sign-in by the code its page shows. */
function Approve({ api, onApproved }) {
  const alive = useAlive();
  const [form, setForm] = useState({ code: "", access: "page", secrets: "page" });
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);

  async function approve(ev) {
    ev.preventDefault();
    setBusy(true);
    const readOnly = form.access === "page" ? null : form.access === "read";
    const secrets = form.secrets === "page" ? null : form.secrets === "yes";
    const r = await api.grantsApprove(form.code.trim(), readOnly, secrets);
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (r.ok) {
      setForm({ code: "", access: "page", secrets: "page" });
      onApproved();
    }
  }
  const approved = res && res.ok ? res.value : null;
  return html`<form id="assistant-approve-form" novalidate onSubmit=${approve}>
    <h3>Let an assistant in</h3>
    <p class="muted">Its sign-in page shows a code such as K7QP-3MZD.</p>
    <div class="inline">
      <${Input} label="Code" name="assistant_code" value=${form.code} onValue=${(v) => setForm({ ...form, code: v })} errors=${fieldErrors(res, "user_code")} placeholder="K7QP-3MZD" />
      <label>It may
        <select id="assistant-access" value=${form.access} onChange=${(e) => setForm({ ...form, access: e.currentTarget.value })}>
          <option value="page">what its page asked</option><option value="read">read only</option><option value="write">read and change</option>
        </select></label>
      <label>Secret values
        <select id="assistant-secrets" value=${form.secrets} onChange=${(e) => setForm({ ...form, secrets: e.currentTarget.value })}>
          <option value="page">as its page asked</option><option value="no">no</option><option value="yes">yes</option>
        </select></label>
      <button type="submit" class="small" id="assistant-approve" disabled=${busy}>${busy ? "Approving…" : "Approve"}</button>
    </div>
    <div id="assistant-approve-result" aria-live="polite">
      ${otherError(res, FIELDS) ? html`<p class="error" role="alert">${otherError(res, FIELDS)}</p>` : null}
      ${approved ? html`<p class="ok" role="status">Approved ${approved.client_name}: its page continues by itself. It ${scopeWords(approved.asked)}.</p>` : null}
    </div>
  </form>`;
}
