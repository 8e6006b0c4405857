// Join with an invite: the platform's URL and the code an admin sent (or the link, which
// holds both; Rust reads it), the name to be known by, and a name for the environment. The platform
// accepts the code and gives a token, which is saved like a sign-in's; the window then uses
// the environment. Refusals land on their field. A slipway://invite link (`invite`: {code, url})
// fills in the code and URL and puts the cursor on the name.
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { Input } from "../../components/field.js";
import { useAlive } from "../../components/hooks.js";
import { fieldErrors, otherError } from "../people/format.js";

const FIELDS = ["url", "code", "name", "environment"];
const EMPTY = { url: "", code: "", name: "", environment: "" };

export function JoinForm({ api, reload, invite }) {
  const alive = useAlive();
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  const box = useRef(null);
  const set = (k) => (v) => setForm({ ...form, [k]: v });

  // Each link is a new object, filled in even when the same invite was opened before.
  useEffect(() => {
    if (!invite) return;
    setForm((f) => ({ ...f, code: invite.code, url: invite.url || f.url }));
    setRes(null);
    const name = box.current && box.current.querySelector("[name=join_name]");
    if (name) name.focus();
  }, [invite]);

  async function join(ev) {
    ev.preventDefault();
    setBusy(true);
    const r = await api.joinWithInvite({ url: form.url.trim(), code: form.code.trim(), name: form.name.trim(), environment: form.environment.trim() });
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (r.ok) reload();
  }

  return html`<form id="join-form" class="box" ref=${box} novalidate autocomplete="off" onSubmit=${join}>
    <h3>Join with an invite</h3>
    <p class="muted">An admin of the platform sent you a code (or a link holding it).</p>
    <div class="grid">
      <${Input} label="Platform URL" name="join_url" value=${form.url} onValue=${set("url")} errors=${fieldErrors(res, "url")} placeholder="https://slipway.example.org" hint="may stay empty when you paste the link" />
      <${Input} label="Invite code or link" name="join_code" value=${form.code} onValue=${set("code")} errors=${fieldErrors(res, "code")} placeholder="slwi_…" />
      <${Input} label="Your name" name="join_name" value=${form.name} onValue=${set("name")} errors=${fieldErrors(res, "name")} hint="empty: the part of your e-mail before the @" />
      <${Input} label="Environment name" name="join_environment" value=${form.environment} onValue=${set("environment")} errors=${fieldErrors(res, "environment")} placeholder="team" hint="letters, digits, - and _" />
    </div>
    <button type="submit" class="primary" id="join-button" disabled=${busy}>${busy ? "Joining…" : "Join and use it"}</button>
    <div id="join-result" aria-live="polite">
      ${otherError(res, FIELDS) ? html`<p class="error" role="alert">${otherError(res, FIELDS)}</p>` : null}
    </div>
  </form>`;
}
