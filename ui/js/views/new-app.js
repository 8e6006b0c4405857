// New app as one visible pipeline: template → name → folder → options (checked as the user
// types, by scaffold_app's own rules in Rust) → scaffold → validate → register → build →
// deploy (run one after another, each with its state, and a retry of the step that failed).
import { html, render, useEffect, useRef, useState } from "../../vendor/preact-htm.js";
import { Input } from "../components/field.js";
import { createPipeline, DONE, FAILED, PENDING, RUNNING, SKIPPED } from "../pipeline.js";

/** The fields each form step holds: a check error on one of them fails that step. */
const FORM_STEPS = [
  { id: "template", label: "Template", fields: ["app_type"] },
  { id: "name", label: "Name", fields: ["app_name"] },
  { id: "folder", label: "Folder", fields: ["output_directory"] },
  { id: "options", label: "Options", fields: ["display_name", "port", "description", "durable", "overwrite", "fabrics", "permissions"] },
];
/** The steps that run on the platform, skipped when the user only scaffolds. */
const PLATFORM_STEPS = ["register", "build", "deploy"];
const DEPLOY_POLL_MS = 2000;
const DEPLOY_POLLS = 300;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const titleCase = (name) => name.split("-").filter(Boolean).map((p) => p[0].toUpperCase() + p.slice(1)).join(" ");

/** The run steps; `args()` is the form as scaffold_app takes it when the run started. */
function runSteps(api, args) {
  return [
    {
      id: "scaffold",
      label: "Scaffold",
      run: async (ctx, progress) => {
        ctx.args = args();
        progress(`writing the ${ctx.args.app_type} template`);
        const res = await api.tool("scaffold_app", ctx.args);
        if (!res.ok) return { ok: false, error: res.field ? `${res.field}: ${res.error}` : res.error };
        ctx.project = res.value.project_path;
        ctx.files = res.value.files_created;
        return { ok: true, detail: `created ${ctx.project} (${ctx.files.length} files)` };
      },
    },
    {
      id: "validate",
      label: "Validate",
      run: async (ctx) => {
        const res = await api.tool("validate_devfile", { devfile_path: `${ctx.project}/devfile.yaml` });
        if (!res.ok) return { ok: false, error: res.error };
        const v = res.value;
        if (v.valid === false) return { ok: false, error: `devfile.yaml: ${(v.errors || []).join("; ")}` };
        const warnings = (v.warnings || []).length;
        return { ok: true, detail: warnings ? `devfile.yaml is valid (${warnings} warning${warnings > 1 ? "s" : ""})` : "devfile.yaml is valid" };
      },
    },
    {
      id: "register",
      label: "Register",
      run: async (ctx) => {
        const a = ctx.args;
        const res = await api.tool("register_app", { name: a.app_name, display_name: a.display_name || titleCase(a.app_name), project_path: ctx.project });
        if (!res.ok) return { ok: false, error: res.field ? `${res.field}: ${res.error}` : res.error };
        ctx.appId = res.value.app_id;
        return { ok: true, detail: `${res.value.message}; wrote ${res.value.app_file}` };
      },
    },
    {
      id: "build",
      label: "Build",
      run: async (ctx, progress) => {
        const started = await api.buildStart(ctx.project);
        if (!started.ok) return { ok: false, error: started.error };
        for (;;) {
          await sleep(400);
          const polled = await api.buildPoll(started.value);
          if (!polled.ok) return { ok: false, error: polled.error };
          const { steps, result } = polled.value;
          if (steps.length) progress(steps[steps.length - 1]);
          if (result) {
            if (result.success === false) return { ok: false, error: result.error || "the build failed" };
            ctx.appId = result.app_id || ctx.appId;
            // The build answers the app's URL (kept from the first build on); it answers once RUNNING.
            ctx.appUrl = result.app_url || ctx.appUrl;
            const ids = result.build_ids || (result.build_id ? [result.build_id] : []);
            const built = `built ${ids.length} image${ids.length === 1 ? "" : "s"}`;
            return { ok: true, detail: result.app_url ? `${built}; the app will answer at ${result.app_url}` : built };
          }
        }
      },
    },
    {
      id: "deploy",
      label: "Deploy",
      run: async (ctx, progress) => {
        for (let i = 0; i < DEPLOY_POLLS; i++) {
          const res = await api.tool("get_app_status", { app_id: ctx.appId });
          if (res.ok) {
            const s = res.value;
            if (s.status === "RUNNING") {
              ctx.appUrl = s.app_url || ctx.appUrl;
              return { ok: true, detail: s.app_url ? `RUNNING at ${s.app_url}` : "RUNNING" };
            }
            if (s.status === "FAILED") return { ok: false, error: `FAILED: ${s.reason || "see the app's diagnosis"} (fix the project, then retry the build)` };
            const services = (s.services || []).map((x) => `${x.name} ${x.status}`).join(", ");
            progress(`${s.status}${services ? `: ${services}` : ""}`);
          } else progress(`asking for the status again (${res.error})`);
          await sleep(DEPLOY_POLL_MS);
        }
        return { ok: false, error: "no answer of RUNNING or FAILED after 10 minutes; retry to keep waiting" };
      },
    },
  ];
}

const STATE_WORDS = { [PENDING]: "pending", [RUNNING]: "running", [DONE]: "done", [FAILED]: "failed", [SKIPPED]: "skipped" };

function Step({ s, onRetry, busy }) {
  return html`<li data-step=${s.id} class=${`step ${s.status}`} aria-current=${s.status === RUNNING ? "step" : undefined}>
    <span class="step-mark" aria-hidden="true"></span>
    <span class="step-label">${s.label}</span>
    <span class="step-state">${STATE_WORDS[s.status]}${s.status === RUNNING ? "…" : ""}</span>
    ${s.detail ? html`<span class="step-detail">${s.detail}</span>` : null}
    ${s.error ? html`<span class="step-error error" role="alert">${s.error}</span>` : null}
    ${s.status === FAILED && onRetry ? html`<button type="button" class="small retry" id="retry-step" disabled=${busy} onClick=${onRetry}>Retry ${s.label.toLowerCase()}</button>` : null}
  </li>`;
}

function NewApp({ api, shared, go }) {
  const [templates, setTemplates] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [picked, setPicked] = useState(null);
  const [form, setForm] = useState({ app_name: "", output_directory: "", display_name: "", port: "", description: "", durable: false, overwrite: false, deploy: true });
  const [check, setCheck] = useState(null);
  const [run, setRun] = useState(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const checkTicket = useRef(0);
  const formRef = useRef(form);
  formRef.current = form;
  const pickedRef = useRef(picked);
  pickedRef.current = picked;

  useEffect(() => {
    api.tool("get_available_templates").then((res) => (res.ok ? setTemplates(res.value.templates) : setLoadError(res.error)));
  }, []);

  /** The form as scaffold_app takes it. */
  function args() {
    const f = formRef.current;
    const a = { app_name: f.app_name.trim(), app_type: pickedRef.current ? pickedRef.current.name : "", output_directory: f.output_directory.trim(), durable: f.durable, overwrite: f.overwrite };
    for (const k of ["display_name", "description"]) if (f[k].trim()) a[k] = f[k].trim();
    if (String(f.port).trim()) a.port = Number(f.port);
    return a;
  }

  const pipeline = useRef(null);
  if (!pipeline.current) pipeline.current = createPipeline(runSteps(api, args), setRun);

  // Each change is checked by the Rust rules a moment after the user stops typing; an answer
  // for an older form is dropped.
  useEffect(() => {
    const ticket = ++checkTicket.current;
    const timer = setTimeout(async () => {
      const res = await api.checkNewApp(args());
      if (ticket === checkTicket.current) setCheck(res.ok ? res.value : { valid: false, field: null, error: res.error });
    }, 150);
    return () => clearTimeout(timer);
  }, [form, picked]);

  // The settings the last run scaffolded with: while the form still holds them, the live
  // check's "already has the template's files" is that run's own project, not a mistake.
  const ranArgs = useRef(null);
  const scaffolded = Boolean(run && run.some((x) => x.id === "scaffold" && x.status === DONE) && ranArgs.current === JSON.stringify(args()));
  const set = (k) => (v) => setForm({ ...form, [k]: v });
  const typed = { template: Boolean(picked), name: form.app_name.trim() !== "", folder: form.output_directory.trim() !== "", options: true };
  // A field's message: the live check's (once the user typed there) or the last run's.
  const errs = (k) => {
    if (scaffolded) return [];
    if (check && !check.valid && check.field === k && (k !== "app_name" || typed.name) && (k !== "output_directory" || typed.folder)) return [check.error];
    if (result && !result.ok && result.field === k) return [result.error];
    return [];
  };

  function formStep(step) {
    const field = check && !check.valid && !scaffolded ? check.field : null;
    if (field && step.fields.includes(field) && (step.id !== "name" || typed.name) && (step.id !== "folder" || typed.folder) && (step.id !== "template" || picked))
      return { id: step.id, label: step.label, status: FAILED, detail: "", error: check.error };
    if (!typed[step.id]) return { id: step.id, label: step.label, status: PENDING, detail: "", error: null };
    const detail = {
      template: picked && picked.name,
      name: form.app_name.trim(),
      folder: scaffolded ? pipeline.current.ctx().project : check && check.valid ? check.project_path : form.output_directory.trim(),
      options: [String(form.port).trim() ? `port ${form.port}` : picked ? `port ${picked.default_port}` : null, form.durable ? "durable" : null, form.overwrite ? "replace files" : null, form.deploy ? "then deploy" : "scaffold only"].filter(Boolean).join(", "),
    }[step.id];
    // The later form steps are only done once the earlier ones' fields pass the check.
    const done = scaffolded || (check && (check.valid || !step.fields.includes(check.field)));
    return { id: step.id, label: step.label, status: done ? DONE : PENDING, detail, error: null };
  }

  async function submit(ev) {
    ev.preventDefault();
    if (!picked) {
      setResult({ ok: false, error: "Pick a template first.", field: "app_type" });
      return;
    }
    const checked = await api.checkNewApp(args());
    if (checked.ok && !checked.value.valid) {
      setCheck(checked.value);
      setResult({ ok: false, error: `${checked.value.field ? `${checked.value.field}: ` : ""}${checked.value.error}`, field: checked.value.field });
      const input = document.querySelector(`#view-new [name=${checked.value.field}]`);
      if (input) input.focus();
      return;
    }
    setResult(null);
    setBusy(true);
    ranArgs.current = JSON.stringify(args());
    const ok = await pipeline.current.start(form.deploy ? [] : PLATFORM_STEPS);
    finish(ok);
  }

  function finish(ok) {
    setBusy(false);
    const ctx = pipeline.current.ctx();
    if (ctx.project) shared.devfilePath = `${ctx.project}/devfile.yaml`;
    if (ok) setResult({ ok: true, project: ctx.project, files: ctx.files || [], appId: ctx.appId, appUrl: ctx.appUrl });
  }

  async function retry() {
    setBusy(true);
    finish(await pipeline.current.retry());
  }

  let cards;
  if (loadError) cards = html`<p class="error" role="alert">${loadError}</p>`;
  else if (!templates) cards = html`<p class="muted">Loading templates…</p>`;
  else if (!templates.length) cards = html`<p class="muted">No templates in this build.</p>`;
  else
    cards = templates.map(
      (t) => html`<button type="button" class="card" role="radio" aria-checked=${String(picked === t)} data-name=${t.name} onClick=${() => setPicked(t)}>
        <strong>${t.name}</strong><span class="meta">${t.language} · port ${t.default_port}</span><span>${t.description}</span>
      </button>`,
    );

  const runState = run || pipeline.current.state();
  const steps = [...FORM_STEPS.map(formStep), ...runState];

  return html`
    <h2>New app</h2>
    <ol id="pipeline" class="pipeline" aria-label="Steps">
      ${steps.map((s) => html`<${Step} key=${s.id} s=${s} busy=${busy} onRetry=${FORM_STEPS.some((f) => f.id === s.id) ? null : retry} />`)}
    </ol>
    <h3>Template</h3>
    <div id="templates" class="cards" role="radiogroup" aria-label="Templates">${cards}</div>
    ${errs("app_type").length ? html`<p class="field-error" role="alert">${errs("app_type")[0]}</p>` : null}
    <form id="scaffold-form" autocomplete="off" onSubmit=${submit}>
      <div class="grid">
        <${Input} label="App name" name="app_name" value=${form.app_name} onValue=${set("app_name")} errors=${errs("app_name")} placeholder="orders-api" hint="lowercase letters, digits and hyphens; starts with a letter" />
        <${Input} label="Create in folder" name="output_directory" value=${form.output_directory} onValue=${set("output_directory")} errors=${errs("output_directory")} placeholder="/home/you/projects" hint=${check && check.valid && typed.folder ? `the project will be ${check.project_path}` : null} />
        <${Input} label="Display name" name="display_name" value=${form.display_name} onValue=${set("display_name")} errors=${errs("display_name")} placeholder="Orders API" />
        <${Input} label="Port" name="port" type="number" value=${form.port} onValue=${set("port")} errors=${errs("port")} placeholder=${picked ? `default ${picked.default_port}` : "template default"} />
        <${Input} label="Description" name="description" wide value=${form.description} onValue=${set("description")} errors=${errs("description")} placeholder="What the app does" />
        <${Input} label="Durable workflows (Restate)" name="durable" type="checkbox" value=${form.durable} onValue=${set("durable")} />
        <${Input} label="Replace existing files" name="overwrite" type="checkbox" value=${form.overwrite} onValue=${set("overwrite")} />
        <${Input} label="Then register, build and deploy it on the platform" name="deploy" type="checkbox" value=${form.deploy} onValue=${set("deploy")} />
      </div>
      <button type="submit" id="scaffold-button" class="primary" disabled=${busy}>${busy ? "Working…" : form.deploy ? "Create and deploy" : "Create app"}</button>
    </form>
    <div id="scaffold-result" class="result" aria-live="polite">
      ${result && !result.ok ? html`<p class="error" role="alert">${result.error}</p>` : null}
      ${result && result.ok
        ? html`<p class="ok" role="status">Created ${result.project}</p>
            ${result.appUrl ? html`<p>Running at <a class="url" href=${result.appUrl} onClick=${(e) => (e.preventDefault(), api.openUrl(result.appUrl))}>${result.appUrl}</a></p>` : null}
            ${result.appId ? html`<button type="button" class="small" id="open-new-app" onClick=${() => ((shared.openApp = result.appId), go("apps"))}>Show in Apps</button>` : null}
            <details><summary>${result.files.length} files</summary><ul>${result.files.map((f) => html`<li>${f}</li>`)}</ul></details>`
        : null}
    </div>`;
}

export function mount(root, ctx) {
  render(html`<${NewApp} ...${ctx} />`, root);
}
