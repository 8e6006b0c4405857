// An app's overview: where it answers (its URL and each service's, with their limits), and,
// when it FAILED, the platform's diagnosis of why.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { LogView } from "../../components/log-view.js";
import { ExternalLink, Muted } from "../../components/notice.js";
import { diffLines, limitsText } from "./format.js";

export function OverviewPage({ api, app, status, shown }) {
  const services = (status && status.services) || [];
  const appUrl = status && status.app_url;
  return html`
    <h3>Where it answers</h3>
    ${!appUrl && !services.length ? html`<${Muted}>No URL yet: build and deploy the app (Builds).<//>` : null}
    <ul class="list mono" id="app-urls">
      ${appUrl ? html`<li>App: <${ExternalLink} api=${api} url=${appUrl} /></li>` : null}
      ${services.map((svc) => html`<li key=${svc.name}>${svc.name} (${svc.status}): ${svc.url ? html`<${ExternalLink} api=${api} url=${svc.url} />` : html`<span class="muted">internal</span>`}<span class="muted">${limitsText(svc.limits)}</span></li>`)}
    </ul>
    ${status && status.reason ? html`<p class="error">${status.reason}</p>` : null}
    ${shown === "FAILED" ? html`<${Diagnosis} api=${api} app=${app} status=${status} />` : null}`;
}

/** Why a FAILED app failed: the platform's diagnosis, shown as it comes. */
function Diagnosis({ api, app, status }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  useEffect(() => {
    api.appDiagnosis(app.app_id).then((r) => alive.current && setRes(r));
  }, [status]);
  let body;
  if (!res) body = html`<${Muted}>Finding out why…<//>`;
  else if (!res.ok) body = html`<p class="error">${res.error}</p>`;
  else body = diagnosisParts(res.value);
  return html`<h3>Why it failed</h3><div id="diagnosis" aria-live="polite">${body}</div>`;
}

function diagnosisParts(d) {
  const parts = [];
  if (d.reason) parts.push(html`<p class="error">${d.reason}</p>`);
  for (const s of d.failing_services || []) {
    parts.push(html`<p>Service ${s.service} is ${s.status}; its log ends:</p><${LogView} text=${s.log_tail || "(empty)"} label=${`${s.service}: end of its log`} />`);
  }
  const b = d.failed_build;
  if (b) parts.push(html`<p>The newest build (${b.service}) failed: ${b.error ?? ""}</p><${LogView} text=${b.log_tail || "(empty)"} label="The failed build's log" />`);
  for (const e of (d.devfile && d.devfile.errors) || []) parts.push(html`<p class="error">devfile: ${e}</p>`);
  if (d.last_good_deployment_id && d.changes_since_last_good) {
    parts.push(html`<p>Since the last deployment that ran well (${d.last_good_deployment_id}):</p><${DiffView} diff=${d.changes_since_last_good} />`);
  }
  return parts.length ? parts : html`<${Muted}>No failing service or build was found.<//>`;
}

/** A deployment diff: images, secret versions (never values), devfile lines. */
export function DiffView({ diff }) {
  const lines = diffLines(diff);
  return html`<div>
    <ul class="list mono diff">${lines.length ? lines.map((l) => html`<li>${l}</li>`) : html`<li class="muted">same images and secret versions</li>`}</ul>
    ${diff.devfile && diff.devfile.changed ? html`<${LogView} text=${diff.devfile.diff} label="devfile changes" />` : html`<${Muted}>devfile unchanged<//>`}
  </div>`;
}
