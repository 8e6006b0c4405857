// How the apps view words the platform's answers: pure functions, tested in
// tests/apps-format.test.js. They only present answers; every decision is the Rust side's.

const text = (v) => (v === null || v === undefined ? "" : String(v));

/** The pages of an app, in the order of its tab bar. */
export const APP_TABS = [
  { id: "overview", label: "Overview" },
  { id: "builds", label: "Builds" },
  { id: "deployments", label: "Deployments" },
  { id: "logs", label: "Logs" },
  { id: "secrets", label: "Secrets" },
  { id: "resources", label: "Resources" },
  { id: "jobs", label: "Jobs" },
  { id: "source", label: "Source" },
  { id: "domains", label: "Domains" },
  { id: "notifications", label: "Alerts" },
  { id: "access", label: "Access" },
];

/** " · 12 s" or " · 2 min 5 s" for a finished build; "" while it runs. */
export function buildDuration(build) {
  if (!build.started_at || !build.finished_at) return "";
  const s = Math.round((Date.parse(build.finished_at) - Date.parse(build.started_at)) / 1000);
  return s >= 60 ? ` · ${Math.floor(s / 60)} min ${s % 60} s` : ` · ${s} s`;
}

/** A service's limits and whether the runtime enforces them ("" when it has none). */
export function limitsText(limits) {
  if (!limits || (!limits.memory && !limits.cpu)) return "";
  const parts = [limits.memory && `memory ${limits.memory}`, limits.cpu && `cpu ${limits.cpu}`].filter(Boolean).join(", ");
  return ` · ${parts}${limits.enforced ? "" : " (not enforced by the process runtime)"}`;
}

/** The secret versions a deployment ran with: "db@v2, api/key@v1" ("" when none). */
export function deploymentSecrets(deployment) {
  return (deployment.services || []).flatMap((s) => (s.secrets || []).map((x) => `${x.path}@v${x.version}`)).join(", ");
}

/** The build's latest step as a line ("Uploading…"), or null before the first. */
export function buildStepLine(steps) {
  if (!steps || !steps.length) return null;
  const last = String(steps[steps.length - 1]);
  return `${last.charAt(0).toUpperCase()}${last.slice(1)}…`;
}

/** What a deployment diff lists: images and secret versions (never values). */
export function diffLines(diff) {
  const lines = [];
  for (const i of diff.images || []) lines.push(`image of ${i.service}: ${text(i.from)} → ${text(i.to)}`);
  for (const s of diff.secrets || []) lines.push(`secret ${s.path} (${s.service}): version ${text(s.from_version)} → ${text(s.to_version)}`);
  return lines;
}

const PHASES = { starting: "Starting…", building: "Updating…", running: "RUNNING", failed: "FAILED", invalid: "devfile.yaml is invalid", stopped: "Stopped" };

/** The development loop's state as a line and its tone (ok, error or muted). */
export function watchStateLine(state) {
  const phase = PHASES[state.phase] || state.phase;
  let extra = "";
  if (state.phase === "running") extra = ` ${state.url || ""}${state.seconds != null ? ` (${state.seconds.toFixed(1)} s after the change)` : ""}`;
  else if (state.message) extra = `: ${state.message}`;
  const tone = state.phase === "failed" || state.phase === "invalid" ? "error" : state.phase === "running" ? "ok" : "muted";
  return { text: phase + extra, tone };
}

/** "api (sync), web (image)": the services a change updated and how. */
export function servicesUpdated(services) {
  return Object.entries(services || {}).map(([s, how]) => `${s} (${how})`).join(", ");
}

/** The development loop's events as lines of its live log. */
export function devLogLines(events) {
  const lines = [];
  for (const e of events || []) {
    if (e.event === "log") lines.push(`${e.line.service}${e.line.kind === "build" ? " build" : ""} | ${e.line.line}`);
    else if (e.event === "changed") lines.push(`==> changed: ${e.files.join(", ")}`);
    else if (e.event === "rebuilding") lines.push(`==> updating ${servicesUpdated(e.services)}`);
    else if (e.event === "running") lines.push(`==> RUNNING ${e.url || ""}`);
    else if (e.event === "failed") lines.push(`==> FAILED: ${e.message}`);
    else if (e.event === "invalid") lines.push(`==> devfile.yaml is invalid:`, ...e.errors.map((x) => `    ${x}`));
  }
  return lines;
}

/** The live log keeps its last lines only. */
export const LIVE_LOG_LINES = 600;

/** `lines` after `more`, keeping the last `max`. */
export function keepLast(lines, more, max = LIVE_LOG_LINES) {
  const all = lines.concat(more);
  return all.length > max ? all.slice(all.length - max) : all;
}

/** A scan answer's packages: from the report's SBOM, or the bare SBOM when there is no report. */
export function scanPackages(scan) {
  const sbom = scan.report && scan.report.sbom ? scan.report.sbom : scan.sbom || { packages: [] };
  return sbom.packages || [];
}

/** The headline of a scan answer: {tone, text}. */
export function scanHeadline(scan) {
  const packages = scanPackages(scan).length;
  if (!scan.report) return { tone: "muted", text: `No scan report: ${scan.error || "the platform has none"}. ${packages} packages found in the image.` };
  const vulns = (scan.report.vulnerabilities || []).length;
  const db = scan.report.advisory_db || {};
  const found = vulns ? `${vulns} known vulnerabilit${vulns === 1 ? "y" : "ies"}` : "No known vulnerabilities";
  return { tone: vulns ? "error" : "ok", text: `${found} in ${packages} packages (checked ${scan.report.scanned_at} against ${db.advisories ?? "?"} advisories)` };
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** `1536` → "1.5 KiB", as the Rust side words sizes (`slipway_platform_client::human_bytes`). */
export function humanBytes(bytes) {
  const n = Number(bytes);
  if (!Number.isFinite(n) || n < 0) return "";
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${Math.round(n)} B` : `${value.toFixed(1)} ${BYTE_UNITS[unit]}`;
}

/** A backing resource in words: "relationalDatabase main (postgres)", "(…, detached)" when no longer declared. */
export function resourceLine(r) {
  const detached = r.state && r.state !== "attached" ? `, ${r.state}` : "";
  return `${r.kind} ${r.name} (${r.engine}${detached})`;
}

/** A volume in words: "volume files (1.2 MiB used of 1Gi)", "…, ephemeral)" when it starts empty on each deploy. */
export function volumeLine(v) {
  const of = v.size ? ` of ${v.size}` : "";
  return `volume ${v.name} (${humanBytes(v.used_bytes ?? 0)} used${of}${v.ephemeral ? ", ephemeral" : ""})`;
}

/** The data that goes with an app when it is deleted: one line per resource and volume. */
export function appDataLines(app) {
  return [...((app && app.resources) || []).map(resourceLine), ...((app && app.volumes) || []).map(volumeLine)];
}

/** What the delete confirmation says of the app's data ("" when it has none). */
export function deleteDataText(app) {
  const lines = appDataLines(app);
  return lines.length ? `Its data is destroyed with it: ${lines.join(", ")}.` : "";
}

/** What a deletion's answer says was destroyed with the app ("" when nothing was). */
export function dataRemovedText(answer) {
  const lines = (answer && answer.data_removed) || [];
  return lines.length ? `Data destroyed with it: ${lines.join("; ")}.` : "";
}

/** A resource's size column: the data it holds and its memory cap ("—" when neither is known). */
export function resourceSize(r) {
  const parts = [];
  if (r.size_bytes !== null && r.size_bytes !== undefined) parts.push(humanBytes(r.size_bytes));
  if (r.memory_mb !== null && r.memory_mb !== undefined) parts.push(`cap ${r.memory_mb} MiB`);
  return parts.length ? parts.join(", ") : "—";
}

/**
 * Which resource actions to offer for the caller's app role (the platform's `your_role`):
 * editors and owners reveal and rotate credentials, owners destroy; a viewer gets none. When
 * the role is unknown every action is offered and the platform's answer decides.
 */
export function resourceActions(role) {
  if (!role) return { reveal: true, rotate: true, destroy: true };
  return { reveal: role === "owner" || role === "editor", rotate: role === "owner" || role === "editor", destroy: role === "owner" };
}

/** A connection URL with its password masked (as shown until Show is pressed). */
export function maskedUrl(url, password) {
  const u = String(url ?? "");
  return password ? u.split(String(password)).join("••••••") : u;
}

/** A job's run in a few words: "succeeded 2026-11-28T03:00:01Z"; "never" without one. */
export function runLine(run) {
  if (!run) return "never";
  const at = run.started_at || run.scheduled_at || "";
  return `${run.status} ${at}`.trim();
}

/** What a domain serves: "→ example.org" for a redirect, its service, or the primary one. */
export function domainServes(d) {
  if (d.redirect_to) return `→ ${d.redirect_to}`;
  return d.service || "the app's first public service";
}

/** Where a domain's certificate stands, in one line a person can act on. */
export function domainStateLine(d) {
  const c = d.certificate;
  const until = c ? c.expires_at.slice(0, 10) : "";
  switch (d.state) {
    case "issued":
      return c && c.source === "operator"
        ? `Served with the platform's certificate (${c.issuer}), valid until ${until}.`
        : `Issued by ${c ? c.issuer : "the CA"}, valid until ${until}${c && c.renews_at ? `; renews ${c.renews_at.slice(0, 10)}` : ""}.`;
    case "renewing":
      return `Renewing (the current certificate, valid until ${until}, is still served)${d.reason ? `: ${d.reason}` : "."}`;
    case "failed":
      return `Not issued: ${d.reason || "the CA refused"}${d.next_attempt_at ? ` Trying again ${d.next_attempt_at.slice(0, 16).replace("T", " ")}.` : ""}`;
    default:
      return `Waiting: ${d.reason || "the certificate is being requested."}`;
  }
}

/** A commit as one line: "1a2b3c4d5e6f Subject (branch) — Author". */
export function commitLine(c) {
  return `${text(c.sha).slice(0, 12)} ${text(c.subject)} (${text(c.branch)}) — ${text(c.author)}`;
}
