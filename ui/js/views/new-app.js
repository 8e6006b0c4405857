// New app: pick a template, fill the form, scaffold through the toolkit.
import { html, render, useEffect, useState } from "../../vendor/preact-htm.js";
import { Input } from "../components/field.js";

function NewApp({ api, shared }) {
  const [templates, setTemplates] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [picked, setPicked] = useState(null);
  const [form, setForm] = useState({ app_name: "", output_directory: "", display_name: "", port: "", description: "", durable: false, overwrite: false });
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);

  useEffect(() => {
    api.tool("get_available_templates").then((res) => (res.ok ? setTemplates(res.value.templates) : setLoadError(res.error)));
  }, []);

  const set = (k) => (v) => setForm({ ...form, [k]: v });
  const errs = (k) => (result && !result.ok && result.field === k ? [result.error] : []);

  async function submit(ev) {
    ev.preventDefault();
    if (!picked) {
      setResult({ ok: false, error: "Pick a template first.", field: null });
      return;
    }
    const args = { app_name: form.app_name.trim(), app_type: picked.name, output_directory: form.output_directory.trim(), durable: form.durable, overwrite: form.overwrite };
    for (const k of ["display_name", "description"]) if (form[k].trim()) args[k] = form[k].trim();
    if (String(form.port).trim()) args.port = Number(form.port);
    setBusy(true);
    const res = await api.tool("scaffold_app", args);
    setBusy(false);
    setResult(res);
    if (res.ok) shared.devfilePath = `${res.value.project_path}/devfile.yaml`;
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

  return html`
    <h2>Pick a template</h2>
    <div id="templates" class="cards" role="radiogroup" aria-label="Templates">${cards}</div>
    <form id="scaffold-form" autocomplete="off" onSubmit=${submit}>
      <div class="grid">
        <${Input} label="App name" name="app_name" value=${form.app_name} onValue=${set("app_name")} errors=${errs("app_name")} placeholder="orders-api" hint="lowercase letters, digits and hyphens; starts with a letter" />
        <${Input} label="Create in folder" name="output_directory" value=${form.output_directory} onValue=${set("output_directory")} errors=${errs("output_directory")} placeholder="/home/you/projects" />
        <${Input} label="Display name" name="display_name" value=${form.display_name} onValue=${set("display_name")} errors=${errs("display_name")} placeholder="Orders API" />
        <${Input} label="Port" name="port" type="number" value=${form.port} onValue=${set("port")} errors=${errs("port")} placeholder=${picked ? `default ${picked.default_port}` : "template default"} />
        <${Input} label="Description" name="description" wide value=${form.description} onValue=${set("description")} errors=${errs("description")} placeholder="What the app does" />
        <${Input} label="Durable workflows (Restate)" name="durable" type="checkbox" value=${form.durable} onValue=${set("durable")} />
        <${Input} label="Replace existing files" name="overwrite" type="checkbox" value=${form.overwrite} onValue=${set("overwrite")} />
      </div>
      <button type="submit" id="scaffold-button" class="primary" disabled=${busy}>${busy ? "Creating…" : "Create app"}</button>
    </form>
    <div id="scaffold-result" class="result" aria-live="polite">
      ${result && !result.ok ? html`<p class="error" role="alert">${result.error}</p>` : null}
      ${result && result.ok
        ? html`<p class="ok" role="status">Created ${result.value.project_path}</p><ul>${result.value.files_created.map((f) => html`<li>${f}</li>`)}</ul>`
        : null}
    </div>`;
}

export function mount(root, ctx) {
  render(html`<${NewApp} ...${ctx} />`, root);
}
