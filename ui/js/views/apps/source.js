// An app's git source: the repository and branch it deploys from, the commit last built and
// why the last attempt failed, the webhook to add to the forge (its secret shown to owners),
// the deploy key to add for an SSH address; deploying the branch's tip now, disconnecting
// (confirmed first), and the pull requests' preview apps. Connecting takes a public HTTPS
// address or an SSH one (the platform makes the deploy key); a token for a private HTTPS
// repository is never typed here: `slipway git connect --token-env` takes it. The platform
// checks every field; its refusal is shown under the field it names.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Input, focusFirstInvalid } from "../../components/field.js";
import { Muted } from "../../components/notice.js";
import { commitLine } from "./format.js";

const FORM_ID = "git-connect-form";

export function SourcePage({ api, app }) {
  const alive = useAlive();
  const [source, setSource] = useState(null);
  const [previews, setPreviews] = useState(null);
  const [shown, setShown] = useState(null);
  const [asked, setAsked] = useState(false);
  const [note, setNote] = useState(null);

  async function refresh() {
    const [s, p] = await Promise.all([
      api.tool("get_git_source", { app_id: app.app_id }),
      api.tool("list_previews", { app_id: app.app_id }),
    ]);
    if (!alive.current) return;
    setSource(s);
    setPreviews(p);
  }
  useEffect(() => {
    refresh();
  }, []);

  async function deployNow() {
    const r = await api.tool("deploy_git_source", { app_id: app.app_id });
    if (!alive.current) return;
    setNote(r.ok ? `Deploying ${r.value.queued}.` : r.error);
    refresh();
  }

  let body;
  if (!source) body = html`<${Muted}>Asking the platform for the app's git source…<//>`;
  else if (!source.ok && /no git source/.test(source.error)) {
    body = html`<div class="muted empty" id="source-empty">
      <p>The app deploys only what is uploaded (Build). Connect its repository to deploy every push to a branch, and a preview app for every pull request.</p>
    </div>
    <${Connect} api=${api} app=${app} onConnected=${(s) => {
      setShown(s);
      refresh();
    }} />`;
  } else if (!source.ok) body = html`<p class="error" role="alert">${source.error}</p>`;
  else body = html`<${Connected} source=${shown && shown.app_id === app.app_id ? { ...source.value, webhook_secret: shown.webhook_secret || source.value.webhook_secret } : source.value} />
    <div class="row">
      <button type="button" class="small" id="source-deploy" onClick=${deployNow}>Deploy the branch's tip now</button>
      <button type="button" class="small danger" id="source-disconnect" onClick=${() => setAsked(true)}>Disconnect</button>
    </div>
    ${asked
      ? html`<${ConfirmDisconnect} api=${api} app=${app} previews=${previews && previews.ok ? previews.value.previews.length : 0}
          onCancel=${() => setAsked(false)}
          onDone=${(line) => {
            setAsked(false);
            setShown(null);
            setNote(line);
            refresh();
          }} />`
      : null}
    <${Previews} list=${previews} />`;

  return html`
    <div class="row section-head"><h3>Source</h3>
      <button type="button" class="small" id="source-refresh" onClick=${refresh}>Refresh</button></div>
    <div id="source" aria-live="polite">${body}</div>
    ${note ? html`<p class="ok" role="status" id="source-note">${note}</p>` : null}`;
}

function Connected({ source: s }) {
  return html`<dl class="facts" id="source-facts">
    <dt>Repository</dt><dd class="mono" id="source-repo">${s.repo_url}</dd>
    <dt>Branch</dt><dd class="mono">${s.branch}${s.path ? html` · <span>${s.path}</span>` : null}</dd>
    <dt>Last built</dt><dd id="source-commit">${s.last_commit ? commitLine(s.last_commit) : "nothing yet"}</dd>
    ${s.last_error ? html`<dt>Failed</dt><dd class="error" id="source-error">${s.last_error}</dd>` : null}
    ${s.pending ? html`<dt>Waiting</dt><dd class="mono">${s.pending}</dd>` : null}
    ${s.poll_interval_seconds ? html`<dt>Polling</dt><dd>every ${s.poll_interval_seconds} s</dd>` : null}
    ${s.deploy_key
      ? html`<dt>Deploy key</dt><dd><code class="wrap" id="source-deploy-key">${s.deploy_key}</code>
          <p class="hint">Add it to the repository as a read-only deploy key.</p></dd>`
      : null}
    <dt>Webhook</dt><dd><code class="wrap" id="source-webhook">${s.webhook_url}</code>
      ${s.webhook_secret
        ? html`<p>Secret: <code class="wrap" id="source-webhook-secret">${s.webhook_secret}</code></p>`
        : html`<p class="hint">Its secret is shown to the app's owners.</p>`}
      <p class="hint">Content type application/json; push and pull request events (GitLab: the secret as the token).</p></dd>
  </dl>`;
}

function Previews({ list }) {
  if (!list) return null;
  if (!list.ok) return html`<p class="error" role="alert">${list.error}</p>`;
  const rows = list.value.previews;
  return html`<h4>Previews</h4>
    ${rows.length
      ? html`<table id="previews-table">
          <thead><tr><th>pull request</th><th>app</th><th>status</th><th>commit</th></tr></thead>
          <tbody>${rows.map((p) => html`<tr key=${p.number}>
            <td>#${p.number}</td>
            <td>${p.url ? html`<a href=${p.url} target="_blank" rel="noreferrer">${p.app_name}</a>` : p.app_name}</td>
            <td>${p.status}${p.last_error ? html` · <span class="error">${p.last_error}</span>` : null}</td>
            <td>${p.commit ? commitLine(p.commit) : ""}</td>
          </tr>`)}</tbody>
        </table>`
      : html`<p class="muted" id="previews-empty">No open pull request has a preview: one into the deployed branch gets its own app, deleted when it closes.</p>`}`;
}

function Connect({ api, app, onConnected }) {
  const alive = useAlive();
  const [repo, setRepo] = useState("");
  const [branch, setBranch] = useState("main");
  const [path, setPath] = useState("");
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function connect(e) {
    e.preventDefault();
    setBusy(true);
    const args = { app_id: app.app_id, repo_url: repo.trim() };
    if (branch.trim()) args.branch = branch.trim();
    if (path.trim()) args.path = path.trim();
    const r = await api.tool("connect_git_source", args);
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (r.ok) onConnected(r.value);
    else focusFirstInvalid(FORM_ID);
  }
  const errorsOf = (field) => (res && !res.ok && res.field === field ? [res.error] : null);
  const general = res && !res.ok && !["repo_url", "branch", "path"].includes(res.field);
  return html`<form id=${FORM_ID} class="stack" onSubmit=${connect} aria-label="Connect a repository">
    <h4>Connect a repository</h4>
    <${Input} label="Repository" name="repo_url" value=${repo} onValue=${setRepo} required
      placeholder="git@github.com:acme/shop.git" errors=${errorsOf("repo_url")}
      hint="An SSH address (the platform makes a deploy key to add) or a public https:// one. For a private https repository, run slipway git connect --token-env VAR." />
    <${Input} label="Branch" name="branch" value=${branch} onValue=${setBranch} errors=${errorsOf("branch")} hint="Pushes to it deploy." />
    <${Input} label="Directory (optional)" name="path" value=${path} onValue=${setPath} errors=${errorsOf("path")} hint="Where the devfile is, such as services/api; default the root." />
    <div class="row"><button type="submit" id="git-connect" disabled=${busy || !repo.trim()}>Connect and deploy</button></div>
    ${general ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </form>`;
}

/** Disconnects once confirmed: pushes stop deploying, the previews are deleted. */
function ConfirmDisconnect({ api, app, previews, onCancel, onDone }) {
  const alive = useAlive();
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  async function go() {
    setBusy(true);
    const r = await api.tool("disconnect_git_source", { app_id: app.app_id });
    if (!alive.current) return;
    setRes(r);
    if (r.ok) onDone("Disconnected: pushes no longer deploy; the running deployment keeps serving.");
    else setBusy(false);
  }
  return html`<div class="confirm" id="confirm-disconnect-box">
    <p>Stop deploying from the repository?${previews ? ` Its ${previews} preview app(s) are deleted with their data.` : ""} The running deployment keeps serving.</p>
    <div class="row">
      <button type="button" class="small danger" id="confirm-disconnect" disabled=${busy} onClick=${go}>Disconnect</button>
      <button type="button" class="small" onClick=${onCancel}>Keep it</button>
    </div>
    ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </div>`;
}
