// Your own tokens on the platform this window uses: when each was made, when it expires and
// was last used, which one this window uses; make one (shown once, with Copy) and revoke one
// (confirmed first; revoking the window's own token signs the window out, said twice).
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { CopyText } from "../../components/copy.js";
import { Input } from "../../components/field.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { days, expiry, fieldErrors, otherError, revokeWarning, shortTime, tokenExpiry } from "../people/format.js";

const FIELDS = ["name", "expires_in_days"];

/** `environment`: the remote environment in use (null: this computer); `reload` after signing out. */
export function Tokens({ api, environment, reload }) {
  const alive = useAlive();
  const [open, setOpen] = useState(false);
  const [res, setRes] = useState(null);
  const [asked, setAsked] = useState(null);
  const [revoked, setRevoked] = useState(null);

  async function load() {
    const r = await api.tokensList();
    if (alive.current) setRes(r);
  }
  // Listed when the section is opened: on this computer that starts the local platform.
  useEffect(() => {
    if (open) load();
  }, [open, environment]);

  let body;
  if (!res) body = html`<${Muted}>Loading your tokens…<//>`;
  else if (!res.ok) body = html`<p class="error" role="alert">${res.error}</p>`;
  else
    body = html`<table id="tokens-table">
      <thead><tr><th>name</th><th>made</th><th>expires</th><th>last used</th><th></th></tr></thead>
      <tbody>${(res.value.tokens || []).map((t) => html`<tr key=${t.id} data-token=${t.name}>
        <td>${t.name}${t.current ? html` <span class="badge good">this window</span>` : null}</td>
        <td>${shortTime(t.created_at)}</td><td>${tokenExpiry(t)}</td>
        <td>${t.last_used_at ? shortTime(t.last_used_at) : html`<span class="muted">never</span>`}</td>
        <td><button type="button" class="small danger" data-revoke-token=${t.name} onClick=${() => (setRevoked(null), setAsked({ token: t, key: Date.now() }))}>Revoke…</button></td>
      </tr>`)}</tbody>
    </table>`;

  async function afterRevoke(token) {
    setAsked(null);
    if (token.current && environment) {
      // The window's token no longer works: forget it, like signing out, and start again.
      await api.signOut(environment);
      return reload();
    }
    setRevoked(token);
    load();
  }

  return html`<details class="box" id="tokens" onToggle=${(e) => setOpen(e.currentTarget.open)}>
    <summary>Your tokens on ${environment ? `${environment}'s` : "this computer's"} platform</summary>
    <p class="muted">Tokens let programs and other machines act as you. Revoke one you no longer use; the platform refuses it from the next request.</p>
    ${open ? body : null}
    <div class="result" aria-live="polite">
      ${asked ? html`<${ConfirmRevoke} key=${asked.key} api=${api} token=${asked.token} environment=${environment}
        onCancel=${() => setAsked(null)} onRevoked=${() => afterRevoke(asked.token)} />` : null}
      ${revoked ? html`<p class="ok" role="status" id="token-revoked">Revoked ${revoked.name}.</p>` : null}
    </div>
    ${open ? html`<${NewToken} api=${api} onMade=${load} />` : null}
  </details>`;
}

/** The revocation, once confirmed; the window's own token needs the sign-out acknowledged too. */
function ConfirmRevoke({ api, token, environment, onCancel, onRevoked }) {
  const alive = useAlive();
  const keep = useRef(null);
  const [understood, setUnderstood] = useState(false);
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  useEffect(() => keep.current && keep.current.focus(), []);

  async function revoke() {
    setBusy(true);
    const r = await api.tokensRevoke(token.id);
    if (!alive.current) return;
    if (r.ok) return onRevoked();
    setBusy(false);
    setRes(r);
  }
  const blocked = token.current && !understood;
  return html`<div class="confirm" role="alertdialog" id="confirm-revoke-token-dialog" aria-labelledby="confirm-revoke-token-title" aria-describedby="confirm-revoke-token-text">
    <p id="confirm-revoke-token-title"><strong>Revoke the token ${token.name}?</strong></p>
    <p id="confirm-revoke-token-text">${revokeWarning(token, environment)}</p>
    ${token.current ? html`<label class="check"><input type="checkbox" id="revoke-current-understood" checked=${understood}
      onChange=${(e) => setUnderstood(e.currentTarget.checked)} />I understand: this window will be signed out</label>` : null}
    <div class="row">
      <button type="button" class="small danger" id="confirm-revoke-token" disabled=${busy || blocked} onClick=${revoke}>Revoke ${token.name}</button>
      <button type="button" class="small" ref=${keep} onClick=${onCancel}>Keep it</button>
    </div>
    ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </div>`;
}

/** Makes a token: its secret is shown once, with Copy. */
function NewToken({ api, onMade }) {
  const alive = useAlive();
  const [form, setForm] = useState({ name: "", days: "" });
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);

  async function make(ev) {
    ev.preventDefault();
    setBusy(true);
    const r = await api.tokensCreate(form.name.trim(), days(form.days));
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (r.ok) {
      setForm({ name: "", days: "" });
      onMade();
    }
  }
  const made = res && res.ok ? res.value : null;
  return html`<form id="token-form" novalidate onSubmit=${make}>
    <h3>Make a token</h3>
    <div class="inline">
      <${Input} label="Name" name="token_name" value=${form.name} onValue=${(v) => setForm({ ...form, name: v })} errors=${fieldErrors(res, "name")} placeholder="CI on the build server" />
      <${Input} label="Days it works" name="token_days" type="number" step="1" value=${form.days} onValue=${(v) => setForm({ ...form, days: v })} errors=${fieldErrors(res, "expires_in_days")} placeholder="90" />
      <button type="submit" class="small" id="token-create" disabled=${busy}>${busy ? "Making…" : "Make token"}</button>
    </div>
    <div id="token-result" aria-live="polite">
      ${otherError(res, FIELDS) ? html`<p class="error" role="alert">${otherError(res, FIELDS)}</p>` : null}
      ${made ? html`<p class="ok" role="status">Made ${made.name}, working until ${expiry(made.expires_at)}. It is shown only now: copy it to where it is used.</p>
        <${CopyText} id="new-token" label="Token" text=${made.token} />` : null}
    </div>
  </form>`;
}
