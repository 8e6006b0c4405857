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
