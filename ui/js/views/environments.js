// Environments: this computer (embedded) or a named remote one (platform URL, care URL,
// tokens). Signing in checks the platform token against the platform; tokens go to the OS
// keyring (or a 0600 file where there is none, which the window says); signing out forgets
// them. Joining with an invite and signing in with SSO save an environment the same way.
// Below them, the settings of the environment in use: your tokens on its platform. Every
// rule is checked in Rust; a refusal lands on its field. A slipway://invite link fills in the
// join form (main.js puts it in the shared state; show() hands it over).
import { html, render, useEffect, useState } from "../../vendor/preact-htm.js";
import { Input } from "../components/field.js";
import { JoinForm } from "./environments/join.js";
import { SsoForm } from "./environments/sso.js";
import { Tokens } from "./environments/tokens.js";
import { Assistants } from "./environments/assistants.js";

const EMPTY = { name: "", platform_url: "", platform_token: "", care_url: "", care_namespace: "", care_token: "", care_admin_token: "" };

function Environments({ api, reload, visit, invite }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);

  async function load() {
    const res = await api.environments();
    if (res.ok) setList(res.value);
    else setError(res.error);
  }
  useEffect(() => {
    load();
  }, [visit]);

  const set = (k) => (v) => setForm({ ...form, [k]: v });
  const errs = (k) => (result && !result.ok && result.field === k ? [result.error] : []);

  async function signIn(ev) {
    ev.preventDefault();
    setBusy(true);
    const env = {};
    for (const [k, v] of Object.entries(form)) if (v.trim()) env[k] = v.trim();
    env.name = form.name.trim();
    env.platform_url = form.platform_url.trim();
    env.platform_token = form.platform_token.trim();
    const res = await api.signIn(env);
    setBusy(false);
    setResult(res);
    if (res.ok) reload();
  }

  async function use(name) {
    const res = await api.useEnvironment(name);
    if (!res.ok) return setResult(res);
    reload();
  }

  async function signOut(name) {
    const res = await api.signOut(name);
    if (!res.ok) return setResult(res);
    reload();
  }

  // Filling the form from a saved environment: signing in again asks only for the tokens.
  const edit = (e) => setForm({ ...EMPTY, name: e.name, platform_url: e.platform_url, care_url: e.care_url || "", care_namespace: e.care_namespace || "" });

  let rows;
  if (error) rows = html`<p class="error" role="alert">${error}</p>`;
  else if (!list) rows = html`<p class="muted">Loading environments…</p>`;
  else
    rows = html`<table id="environments">
      <tr><th>environment</th><th>platform</th><th>care</th><th>tokens</th><th></th></tr>
      <tr data-env="">
        <td><strong>This computer</strong></td><td colspan="3" class="muted">the embedded platform and care services (or the platform SLIPWAY_PLATFORM_URL names)</td>
        <td>${list.current === null ? html`<span class="badge good">in use</span>` : html`<button type="button" class="small" id="use-local" onClick=${() => use(null)}>Use</button>`}</td>
      </tr>
      ${list.saved.map(
        (e) => html`<tr data-env=${e.name}>
          <td><strong>${e.name}</strong></td>
          <td class="mono">${e.platform_url}</td>
          <td class="mono">${e.care_url || html`<span class="muted">none</span>`}</td>
          <td>${e.signed_in ? (e.token_store === "keyring" ? "OS keyring" : html`<span class="mono">${e.token_store}</span>`) : html`<span class="muted">signed out</span>`}</td>
          <td><div class="row">
            ${list.current === e.name ? html`<span class="badge good">in use</span>` : e.signed_in ? html`<button type="button" class="small" data-action="use" onClick=${() => use(e.name)}>Use</button>` : null}
            ${e.signed_in ? html`<button type="button" class="small" data-action="sign-out" onClick=${() => signOut(e.name)}>Sign out</button>` : html`<button type="button" class="small" data-action="sign-in-again" onClick=${() => edit(e)}>Sign in…</button>`}
          </div></td>
        </tr>`,
      )}
    </table>`;

  return html`
    <h2>Environments</h2>
    <p class="muted">Where the window works: this computer, or a remote platform and care service you sign in to. Tokens are kept in the OS keyring; where there is none (a headless machine), in files readable by you only.</p>
    ${rows}
    <h3>Sign in to a remote environment</h3>
    <form id="sign-in-form" autocomplete="off" onSubmit=${signIn}>
      <div class="grid">
        <${Input} label="Name" name="name" required value=${form.name} onValue=${set("name")} errors=${errs("environment")} placeholder="staging" hint="letters, digits, - and _" />
        <${Input} label="Platform URL" name="platform_url" required value=${form.platform_url} onValue=${set("platform_url")} errors=${errs("platform_url")} placeholder="https://slipway.example.org" />
        <${Input} label="Platform token" name="platform_token" type="password" required wide value=${form.platform_token} onValue=${set("platform_token")} errors=${errs("platform_token")} />
        <${Input} label="Care base URL (optional)" name="care_url" value=${form.care_url} onValue=${set("care_url")} errors=${errs("care_url")} placeholder="https://care.example.org" />
        <${Input} label="Care namespace" name="care_namespace" value=${form.care_namespace} onValue=${set("care_namespace")} errors=${errs("care_namespace")} placeholder="care" />
        <${Input} label="Care staff token" name="care_token" type="password" value=${form.care_token} onValue=${set("care_token")} errors=${errs("care_token")} />
        <${Input} label="Care admin token" name="care_admin_token" type="password" value=${form.care_admin_token} onValue=${set("care_admin_token")} errors=${errs("care_admin_token")} />
      </div>
      <button type="submit" class="primary" id="sign-in-button" disabled=${busy}>${busy ? "Checking the tokens…" : "Sign in and use it"}</button>
    </form>
    <div id="sign-in-result" class="result" aria-live="polite">
      ${result && !result.ok ? html`<p class="error" role="alert">${result.field ? `${result.field}: ` : ""}${result.error}</p>` : null}
    </div>
    <${JoinForm} api=${api} reload=${reload} invite=${invite} />
    <${SsoForm} api=${api} reload=${reload} />
    ${list ? html`<${Tokens} api=${api} environment=${list.current} reload=${reload} />` : null}
    ${list ? html`<${Assistants} api=${api} environment=${list.current} />` : null}`;
}

export function mount(root, ctx) {
  let visit = 0;
  // A switch of environment reloads the window, so every view starts again on the new one;
  // this view is shown again after the reload.
  const reload = () => {
    sessionStorage.setItem("slipway.view", "env");
    location.reload();
  };
  const draw = (invite) => render(html`<${Environments} ...${ctx} reload=${reload} visit=${visit} invite=${invite} />`, root);
  draw(null);
  return () => {
    visit += 1;
    const invite = ctx.shared && ctx.shared.invite;
    if (invite) ctx.shared.invite = null;
    draw(invite ? { ...invite } : null);
  };
}
