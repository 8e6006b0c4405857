// An app's scheduled jobs (devfile commands with attributes.schedule), as the platform runs them
// in the app's running deployment: each job's schedule, time zone, next due time and last run;
// per job its runs (skipped and missed due times included) and a run's output; editors and
// owners start a run by hand (the platform decides who may).
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { runLine } from "./format.js";

export function JobsPage({ api, app }) {
  const alive = useAlive();
  const [list, setList] = useState(null);
  // The job whose runs are shown: {name, runs: result|null}.
  const [open, setOpen] = useState(null);
  const [started, setStarted] = useState(null);
  const [log, setLog] = useState(null);

  async function refresh() {
    const r = await api.appJobs(app.app_id);
    if (alive.current) setList(r);
  }
  async function showRuns(name) {
    setOpen({ name, runs: null });
    setLog(null);
    const r = await api.jobRuns(app.app_id, name);
    if (alive.current) setOpen({ name, runs: r });
  }
  async function runNow(name) {
    setStarted({ name, res: null });
    const r = await api.jobRunNow(app.app_id, name);
    if (!alive.current) return;
    setStarted({ name, res: r });
    refresh();
    showRuns(name);
  }
  async function showLog(name, run) {
    setLog({ run: run.id, res: null });
    const r = await api.jobRunLog(app.app_id, name, run.id);
    if (alive.current) setLog({ run: run.id, res: r });
  }
  useEffect(() => {
    refresh();
  }, []);

  let body;
  if (!list) body = html`<${Muted}>Asking the platform for the app's jobs…<//>`;
  else if (!list.ok) body = html`<p class="error" role="alert">${list.error}</p>`;
  else if (!list.value.jobs.length) {
    body = html`<div class="muted empty" id="jobs-empty">
      <p>No scheduled jobs run for this app.</p>
      <p>${"A job is a command in devfile.yaml with a cron schedule in its attributes, for example "}
        <code>attributes: {schedule: "0 3 * * *", timeZone: Europe/Paris}</code>${"; it runs in its component's image and environment while the app runs."}</p>
    </div>`;
  } else {
    body = html`<table id="jobs-table">
      <thead><tr><th>job</th><th>schedule</th><th>time zone</th><th>next run</th><th>last run</th><th></th></tr></thead>
      <tbody>${list.value.jobs.map((j) => html`<tr key=${j.name} data-job=${j.name}>
        <td class="mono">${j.name}</td><td class="mono">${j.schedule}</td><td>${j.time_zone}</td>
        <td>${j.next_run_at || "—"}</td><td>${runLine(j.last_run)}</td>
        <td><div class="row">
          <button type="button" class="small" data-action="runs" aria-label=${`Show the runs of ${j.name}`} onClick=${() => showRuns(j.name)}>Runs</button>
          <button type="button" class="small" data-action="run-now" aria-label=${`Run ${j.name} now`} onClick=${() => runNow(j.name)}>Run now</button>
        </div></td>
      </tr>`)}</tbody>
    </table>`;
  }

  const startedLine = started && started.res
    ? started.res.ok
      ? html`<p class="ok" role="status" id="job-started">Started ${started.res.value.id} of ${started.name}.</p>`
      : html`<p class="error" role="alert" id="job-started">${started.res.error}</p>`
    : null;

  return html`
    <div class="row section-head"><h3>Jobs</h3>
      <button type="button" class="small" id="jobs-refresh" onClick=${refresh}>Refresh</button></div>
    <div id="jobs">${body}</div>
    <div class="result" aria-live="polite">${startedLine}</div>
    ${open ? html`<${Runs} open=${open} log=${log} onLog=${showLog} />` : null}`;
}

function Runs({ open, log, onLog }) {
  const { name, runs } = open;
  if (!runs) return html`<${Muted}>Asking for the runs of ${name}…<//>`;
  if (!runs.ok) return html`<p class="error" role="alert">${runs.error}</p>`;
  const list = runs.value.runs;
  return html`<div id="job-runs">
    <h4>Runs of ${name}</h4>
    ${list.length
      ? html`<table>
          <thead><tr><th>run</th><th>status</th><th>trigger</th><th>at</th><th>exit</th><th>why</th><th></th></tr></thead>
          <tbody>${list.map((r) => html`<tr key=${r.id} data-run=${r.id}>
            <td class="mono">${r.id}</td><td>${r.status}</td><td>${r.trigger}</td>
            <td>${r.started_at || r.scheduled_at || "—"}</td><td>${r.exit_code ?? "—"}</td>
            <td>${(r.reason || "").split("\n")[0] || "—"}</td>
            <td>${r.log_path ? html`<button type="button" class="small" aria-label=${`Show the output of ${r.id}`} onClick=${() => onLog(name, r)}>Output</button>` : null}</td>
          </tr>`)}</tbody>
        </table>`
      : html`<${Muted}>No runs yet.<//>`}
    ${log ? html`<div id="job-run-log">${!log.res ? html`<${Muted}>Fetching the output of ${log.run}…<//>` : log.res.ok ? html`<pre class="log" aria-label=${`Output of ${log.run}`}>${log.res.value.log || "(no output)"}</pre>` : html`<p class="error" role="alert">${log.res.error}</p>`}</div>` : null}
  </div>`;
}
