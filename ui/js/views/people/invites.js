// Inviting someone (e-mail, account role, days the code lasts): the answer's code and link
// are shown once, each with Copy. Below, the pending invites with Revoke.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { CopyText } from "../../components/copy.js";
import { Input } from "../../components/field.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { ACCOUNT_ROLES, days, expiry, fieldErrors, inviteLine, otherError, shortTime } from "./format.js";

const FIELDS = ["email", "role", "expires_in_days"];
const EMPTY = { email: "", role: "member", days: "" };

export function InviteForm({ api, onInvited }) {
  const alive = useAlive();
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  const set = (k) => (v) => setForm({ ...form, [k]: v });

  async function invite(ev) {
    ev.preventDefault();
    setBusy(true);
    const r = await api.peopleInvite(form.email.trim(), form.role || null, days(form.days));
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (r.ok) {
      setForm(EMPTY);
      onInvited();
    }
  }

  const invited = res && res.ok ? res.value : null;
  return html`<form id="invite-form" class="box" novalidate onSubmit=${invite}>
    <h3>Invite someone</h3>
    <div class="inline">
      <${Input} label="E-mail" name="invite_email" type="email" value=${form.email} onValue=${set("email")} errors=${fieldErrors(res, "email")} placeholder="dana@example.org" />
      <${Input} label="Account role" name="invite_role" type="select" options=${ACCOUNT_ROLES} value=${form.role} onValue=${set("role")} errors=${fieldErrors(res, "role")} />
      <${Input} label="Days the code works" name="invite_days" type="number" step="1" value=${form.days} onValue=${set("days")} errors=${fieldErrors(res, "expires_in_days")} placeholder="7" />
      <button type="submit" class="small" id="invite-button" disabled=${busy}>${busy ? "Inviting…" : "Invite"}</button>
    </div>
    <div id="invite-result" class="result" aria-live="polite">
      ${otherError(res, FIELDS) ? html`<p class="error" role="alert">${otherError(res, FIELDS)}</p>` : null}
      ${invited ? html`<p class="ok" role="status">${inviteLine(invited)}</p>
        <p class="muted">Send them the code and this platform's URL, or the link: they join with "Join with an invite" on the desktop's Environments screen, or with the CLI.</p>
        <div class="grid">
          <${CopyText} id="invite-code" label="Code" text=${invited.code} />
          <${CopyText} id="invite-link" label="Link" text=${invited.link || ""} />
        </div>` : null}
    </div>
  </form>`;
}

/** The pending invites (never their codes), each with Revoke. */
export function PendingInvites({ api, round, onChanged }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  const [revoked, setRevoked] = useState(null);

  async function load() {
    const r = await api.peopleInvites();
    if (alive.current) setRes(r);
  }
  useEffect(() => {
    load();
  }, [round]);

  async function revoke(invite) {
    const r = await api.peopleRevokeInvite(invite.id);
    if (!alive.current) return;
    setRevoked(r.ok ? { ok: true, email: invite.email } : r);
    await load();
    if (r.ok) onChanged();
  }

  let body;
  if (!res) body = html`<${Muted}>Loading invites…<//>`;
  else if (!res.ok) body = html`<p class="error" role="alert">${res.error}</p>`;
  else if (!(res.value.invites || []).length) body = html`<${Muted} extra="empty" id="invites-empty">No pending invites.<//>`;
  else
    body = html`<table id="invites-table">
      <thead><tr><th>e-mail</th><th>role</th><th>invited by</th><th>sent</th><th>expires</th><th></th></tr></thead>
      <tbody>${res.value.invites.map((i) => html`<tr key=${i.id} data-invite=${i.email}>
        <td class="mono">${i.email}</td><td>${i.role}</td><td class="mono">${i.invited_by ? i.invited_by.email : "—"}</td>
        <td>${shortTime(i.created_at)}</td><td>${expiry(i.expires_at)}</td>
        <td><button type="button" class="small" data-revoke=${i.email} onClick=${() => revoke(i)}>Revoke</button></td>
      </tr>`)}</tbody>
    </table>`;

  return html`
    <div class="row section-head"><h3>Pending invites</h3></div>
    ${body}
    ${revoked ? html`<p class=${revoked.ok ? "ok" : "error"} role=${revoked.ok ? "status" : "alert"} id="revoke-invite-result">
      ${revoked.ok ? `Revoked the invite for ${revoked.email}: its code no longer works.` : revoked.error}</p>` : null}`;
}
