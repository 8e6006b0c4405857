// An app's builds: build and deploy from a project folder (each long step shown as it
// happens, then the health wait), watch the folder (the development loop in the Rust core
// rebuilds and redeploys on every save), and the build history with each build's log and
// its image's scan report.
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { LogView } from "../../components/log-view.js";
import { Muted } from "../../components/notice.js";
import { StatusBadge } from "../../components/status-badge.js";
import { buildDuration, buildStepLine, devLogLines, keepLast, scanHeadline, scanPackages, servicesUpdated, watchStateLine } from "./format.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const BUILD_POLL_MS = 400;
const HEALTH_POLL_MS = 1000;
const HEALTH_POLLS = 300;
const DEV_POLL_MS = 700;

export function BuildsPage({ api, app, round, project, onProject, onBuilt }) {
  const build = useBuild(api, app, onBuilt);
  const folder = useRef(null);
  return html`
    <h3>Build and deploy</h3>
    <div class="inline">
      <label>Project folder<input ref=${folder} name="project_path" value=${project} placeholder=${`/home/you/projects/${app.name}`}
        onInput=${(e) => onProject(e.currentTarget.value)} /></label>
      <button type="button" class="small" id="build-button" disabled=${build.busy} onClick=${() => build.start(project.trim())}>Build and deploy</button>
    </div>
    <${BuildResult} progress=${build.progress} />
    <${WatchLoop} api=${api} app=${app} project=${project} onNeedFolder=${() => folder.current && folder.current.focus()} />
    <${BuildHistory} api=${api} app=${app} round=${round} />`;
}

/** The newest deployment of the app, or null. */
async function newestDeployment(api, appId) {
  const h = await api.appDeployments(appId);
  return (h.ok && h.value.deployments && h.value.deployments[0]) || null;
}

/**
 * A build from the window: build_start, then its steps as they come, then the wait for the
 * deployment it started to end (the one before keeps serving until then). `progress` is
 * {step} while it runs, {error} when it failed, {built, health} once built.
 */
function useBuild(api, app, onBuilt) {
  const alive = useAlive();
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState(null);
  const show = (p) => alive.current && setProgress(p);

  async function waitForHealth(before, built) {
    for (let i = 0; i < HEALTH_POLLS && alive.current; i++) {
      await sleep(HEALTH_POLL_MS);
      const d = await newestDeployment(api, app.app_id);
      if (d && (!before || d.id !== before.id) && (d.status === "RUNNING" || d.status === "FAILED")) {
        const health = d.status === "RUNNING"
          ? { tone: "ok", text: `RUNNING ${built.app_url ?? ""}` }
          : { tone: "error", text: `FAILED: ${d.reason || "see the diagnosis"}; the previous deployment keeps serving` };
        show({ built, health });
        if (alive.current) onBuilt();
        return;
      }
    }
  }

  async function start(projectPath) {
    setBusy(true);
    show({ step: "Starting the build…" });
    const before = await newestDeployment(api, app.app_id);
    const started = await api.buildStart(projectPath);
    let result = started.ok ? null : { success: false, error: started.error };
    while (!result) {
      await sleep(BUILD_POLL_MS);
      const polled = await api.buildPoll(started.value);
      if (!polled.ok) {
        result = { success: false, error: polled.error };
        break;
      }
      const line = buildStepLine(polled.value.steps);
      if (line) show({ step: line });
      result = polled.value.result;
    }
    if (alive.current) setBusy(false);
    if (result.success === false) return show({ error: result.error });
    show({ built: result, health: null });
    await waitForHealth(before, result);
  }

  return { busy, progress, start };
}

function BuildResult({ progress: p }) {
  let body = null;
  if (p && p.step) body = html`<p class="muted" id="build-step">${p.step}</p>`;
  else if (p && p.error) body = html`<p class="error" role="alert">${p.error}</p>`;
  else if (p && p.built) {
    const lines = [`app_id ${p.built.app_id}`, `app ${p.built.app_url ?? ""}`, ...Object.entries(p.built.service_urls || {}).map(([svc, url]) => `${svc}: ${url ?? ""}`)];
    const health = p.health || { tone: "muted", text: "Waiting for the new deployment to become healthy…" };
    body = html`<p class="ok" role="status">Built; the app is deploying.</p>
      <ul>${lines.map((l) => html`<li>${l}</li>`)}</ul>
      <p class=${health.tone} id="build-health">${health.text}</p>`;
  }
  return html`<div class="result" id="build-result" aria-live="polite">${body}</div>`;
}

/** Watch: the window polls the development loop's state, last change, rebuilt services and live log. */
function WatchLoop({ api, app, project, onNeedFolder }) {
  const alive = useAlive();
  const [on, setOn] = useState(false);
  const [busy, setBusy] = useState(false);
  const [state, setState] = useState({ text: "Not watching.", tone: "muted" });
  const [change, setChange] = useState("");
  const [rebuilt, setRebuilt] = useState("");
  const [lines, setLines] = useState([]);
  const last = useRef(0);
  const timer = useRef(null);

  const stopPolling = () => {
    if (timer.current) clearInterval(timer.current);
    timer.current = null;
  };
  function show(snapshot) {
    const st = snapshot.state;
    setState(watchStateLine(st));
    setChange(st.last_change.length ? `Last change: ${st.last_change.join(", ")}` : "");
    const updated = servicesUpdated(st.rebuilt);
    setRebuilt(updated ? `Updated: ${updated}` : "");
    setLines((l) => keepLast(l, devLogLines(snapshot.events)));
    last.current = snapshot.last;
    if (!st.active) stopPolling();
  }
  async function poll() {
    const res = await api.devPoll(app.app_id, last.current);
    if (!alive.current || !res.ok || !res.value) return stopPolling();
    show(res.value);
  }
  const startPolling = () => {
    stopPolling();
    timer.current = setInterval(poll, DEV_POLL_MS);
  };
  // A loop started earlier in this window goes on: show it. Leaving stops only the polling.
  useEffect(() => {
    api.devPoll(app.app_id, 0).then((res) => {
      if (!alive.current || !res.ok || !res.value) return;
      setOn(res.value.state.active);
      show(res.value);
      if (res.value.state.active) startPolling();
    });
    return stopPolling;
  }, []);

  async function startWatching() {
    const path = project.trim();
    if (!path) {
      setState({ text: "Enter the project folder first.", tone: "error" });
      return onNeedFolder();
    }
    last.current = 0;
    setLines([]);
    setBusy(true);
    setOn(true);
    const res = await api.devStart(app.app_id, path);
    if (!alive.current) return;
    setBusy(false);
    if (!res.ok) {
      setOn(false);
      return setState({ text: res.error, tone: "error" });
    }
    show(res.value);
    startPolling();
  }
  async function stopWatching() {
    stopPolling();
    setBusy(true);
    setOn(false);
    await api.devStop(app.app_id);
    if (!alive.current) return;
    setBusy(false);
    setState({ text: "Not watching; the app keeps running as it is.", tone: "muted" });
  }

  return html`<div class="watch">
    <label class="check"><input type="checkbox" id="watch-switch" role="switch" checked=${on} disabled=${busy}
      onChange=${(e) => (e.currentTarget.checked ? startWatching() : stopWatching())} /> Watch the folder: rebuild and redeploy on every save</label>
    <p id="watch-state" class=${state.tone} aria-live="polite">${state.text}</p>
    <p id="watch-change" class="muted mono">${change}</p>
    <p id="watch-rebuilt" class="muted">${rebuilt}</p>
    <${LogView} id="watch-log" label="Live log" text=${lines.length ? `${lines.join("\n")}\n` : ""} follow=${true} />
  </div>`;
}

/** Every build of every service, newest first, paged like the app list. */
function BuildHistory({ api, app, round }) {
  const alive = useAlive();
  const [builds, setBuilds] = useState(null);
  const [error, setError] = useState(null);
  const [next, setNext] = useState(null);
  async function load(more) {
    const res = await api.appBuilds(app.app_id, more ? next : null);
    if (!alive.current) return;
    if (!res.ok) return setError(res.error);
    setError(null);
    const page = res.value.builds || [];
    setBuilds((b) => (more && b ? [...b, ...page] : page));
    setNext(res.value.next_page_token || null);
  }
  useEffect(() => {
    load(false);
  }, [round]);

  let body;
  if (error) body = html`<p class="error" role="alert">${error}</p>`;
  else if (!builds) body = html`<${Muted}>Loading builds…<//>`;
  else if (!builds.length) body = html`<${Muted} extra="empty">No builds yet: build the app from its project folder.<//>`;
  else {
    body = html`<table id="builds">
      <thead><tr><th>started</th><th>service</th><th>status</th><th></th></tr></thead>
      <tbody>${builds.map((b) => html`<${BuildRow} key=${b.build_id} api=${api} build=${b} />`)}</tbody>
    </table>`;
  }
  return html`<div class="row section-head"><h3>Build history</h3>
      <button type="button" class="small" id="builds-refresh" onClick=${() => load(false)}>Refresh builds</button></div>
    ${body}
    <button type="button" class=${next ? "small" : "small hidden"} id="builds-more" onClick=${() => load(true)}>Load more builds</button>`;
}

/** One build: its log or its image's scan report on request, shown under its buttons. */
function BuildRow({ api, build: b }) {
  const alive = useAlive();
  const [busy, setBusy] = useState(false);
  const [detail, setDetail] = useState(null);
  async function fetch(kind, loading, call) {
    setBusy(true);
    setDetail({ kind: "loading", text: loading });
    const res = await call();
    if (!alive.current) return;
    setBusy(false);
    setDetail({ kind, res });
  }
  const showLog = () => fetch("log", "Loading the log…", () => api.buildLog(b.build_id));
  const showScan = () => fetch("scan", "Loading the scan report…", () => api.tool("get_build_scan_report", { build_id: b.build_id }));
  // Only a succeeded build has an image to scan.
  const scannable = b.status === "succeeded";
  return html`<tr data-build=${b.build_id}>
    <td>${b.created_at}<div class="muted">${b.builder}${buildDuration(b)}</div></td>
    <td>${b.service}</td>
    <td><${StatusBadge} status=${b.status} />${b.error ? html`<div class="error">${b.error}</div>` : null}</td>
    <td>
      <div class="row">
        <button type="button" class="small" data-action="build-log" disabled=${busy} onClick=${showLog}>Log</button>
        <button type="button" class="small" data-action="build-scan" disabled=${busy || !scannable}
          title=${scannable ? "" : "Only a succeeded build has an image to scan"} onClick=${showScan}>Scan report</button>
      </div>
      <div class="build-detail">${detail ? html`<${BuildDetail} detail=${detail} />` : null}</div>
    </td>
  </tr>`;
}

function BuildDetail({ detail }) {
  if (detail.kind === "loading") return html`<${Muted}>${detail.text}<//>`;
  if (!detail.res.ok) return html`<p class="error" role="alert">${detail.res.error}</p>`;
  if (detail.kind === "scan") return html`<${ScanView} scan=${detail.res.value} />`;
  const log = detail.res.value.log || "";
  return html`${detail.res.value.log_truncated ? html`<${Muted}>Only the end of a long log is shown.<//>` : null}
    ${log.trim() ? html`<${LogView} text=${log} extra="build-log" label="Build log" />` : html`<${Muted}>The log is empty.<//>`}`;
}

/** A build's scan: the advisories found (or why there is no report) and the package list. */
function ScanView({ scan }) {
  const head = scanHeadline(scan);
  const packages = scanPackages(scan);
  const vulns = (scan.report && scan.report.vulnerabilities) || [];
  return html`<div class="scan">
    <p class=${head.tone} id="scan-summary">${head.text}</p>
    ${vulns.length ? html`<table>
      <thead><tr><th>advisory</th><th>package</th><th>severity</th><th>fixed in</th><th>summary</th></tr></thead>
      <tbody>${vulns.map((v) => html`<tr><td class="mono">${v.id}</td><td class="mono">${v.package} ${v.version}</td><td>${v.severity || "—"}</td><td class="mono">${v.fixed || "—"}</td><td>${v.summary}</td></tr>`)}</tbody>
    </table>` : null}
    ${packages.length ? html`<details><summary>${packages.length} packages</summary>
      <ul class="mono">${packages.map((p) => html`<li>${p.name} ${p.version} (${p.ecosystem})</li>`)}</ul></details>` : null}
  </div>`;
}
