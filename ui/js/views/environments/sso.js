// Sign in with SSO: the platform's URL (the window asks it whether it has single sign-on and
// with which provider) and a name for the environment. The sign-in happens in the system
// browser; the window waits for it (up to 5 minutes), then saves and uses the environment.
// Cancel stops the waiting here; a sign-in the browser still finishes is kept.
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { Input } from "../../components/field.js";
import { useAlive } from "../../components/hooks.js";
import { fieldErrors, otherError } from "../people/format.js";

const FIELDS = ["url", "environment"];
const STATUS_DELAY_MS = 500;

export function SsoForm({ api, reload }) {
  const alive = useAlive();
  const [url, setUrl] = useState("");
  const [environment, setEnvironment] = useState("");
  // The platform's answer for the URL typed: {url, res}.
  const [status, setStatus] = useState(null);
  const [waiting, setWaiting] = useState(false);
  const [res, setRes] = useState(null);
  // Which sign-in the window waits for; Cancel moves on from it.
  const attempt = useRef(0);

  // Asks the platform once typing pauses; an answer counts only for the URL it was asked for.
  useEffect(() => {
    const typed = url.trim();
    if (!typed) return setStatus(null);
    const timer = setTimeout(async () => {
      const r = await api.ssoStatus(typed);
      if (alive.current) setStatus({ url: typed, res: r });
    }, STATUS_DELAY_MS);
    return () => clearTimeout(timer);
  }, [url]);

  const enabled = status && status.url === url.trim() && status.res.ok && status.res.value.enabled;
  async function signIn(ev) {
    ev.preventDefault();
    const mine = ++attempt.current;
    setRes(null);
    setWaiting(true);
    const r = await api.ssoSignIn(url.trim(), environment.trim());
    if (!alive.current) return;
    // The environment is saved and in use even after a Cancel: the window starts again on it.
    if (r.ok) return reload();
    if (mine !== attempt.current) return;
    setWaiting(false);
    setRes(r);
  }
  const cancel = () => {
    attempt.current += 1;
    setWaiting(false);
  };

  let statusLine = null;
  if (status && status.url === url.trim()) {
    if (!status.res.ok) statusLine = null;
    else if (status.res.value.enabled) statusLine = html`<p class="ok" id="sso-status">This platform signs people in with ${status.res.value.issuer || "its identity provider"}.</p>`;
    else statusLine = html`<p class="muted" id="sso-status">This platform has no single sign-on: join with an invite or sign in with a token.</p>`;
  }
  const urlErrors = fieldErrors(res, "url").concat(status && status.url === url.trim() && !status.res.ok ? [status.res.error] : []);
  return html`<form id="sso-form" class="box" novalidate autocomplete="off" onSubmit=${signIn}>
    <h3>Sign in with SSO</h3>
    <div class="grid">
      <${Input} label="Platform URL" name="sso_url" value=${url} onValue=${setUrl} errors=${urlErrors} placeholder="https://slipway.example.org" />
      <${Input} label="Environment name" name="sso_environment" value=${environment} onValue=${setEnvironment} errors=${fieldErrors(res, "environment")} placeholder="work" hint="letters, digits, - and _" />
    </div>
    ${statusLine}
    ${waiting
      ? html`<div class="row" id="sso-waiting" role="status"><span>Finish signing in in your browser…</span>
          <button type="button" class="small" id="sso-cancel" onClick=${cancel}>Cancel</button></div>`
      : html`<button type="submit" class="primary" id="sso-button" disabled=${!enabled}>Sign in with SSO</button>`}
    <div id="sso-result" aria-live="polite">
      ${otherError(res, FIELDS) ? html`<p class="error" role="alert">${otherError(res, FIELDS)}</p>` : null}
    </div>
  </form>`;
}
