// Check a devfile by path or content through the toolkit's validator.
import { html, render, useEffect, useState } from "../../vendor/preact-htm.js";
import { Input } from "../components/field.js";

function Check({ api, shared, visit }) {
  const [path, setPath] = useState(shared.devfilePath);
  const [content, setContent] = useState("");
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);

  // A project scaffolded since the last visit is offered here.
  useEffect(() => {
    if (shared.devfilePath) setPath(shared.devfilePath);
  }, [visit]);

  async function submit(ev) {
    ev.preventDefault();
    setBusy(true);
    const r = await api.tool("validate_devfile", path.trim() ? { devfile_path: path.trim() } : { devfile_content: content });
    setBusy(false);
    setRes(r);
  }

  let out = null;
  if (res && !res.ok) out = html`<p class="error" role="alert">${res.error}</p>`;
  else if (res) {
    const v = res.value;
    const title = v.valid ? (v.warnings.length ? "Valid, with warnings" : "Valid") : `${v.errors.length} error(s)`;
    out = html`<p class=${v.valid ? "ok" : "error"} role="status">${title}</p>
      <ul>${v.errors.map((e) => html`<li class="error">Error: ${e}</li>`)}${v.warnings.map((w) => html`<li>Warning: ${w}</li>`)}</ul>`;
  }
  return html`
    <h2>Check a devfile</h2>
    <form id="validate-form" onSubmit=${submit}>
      <${Input} label="devfile.yaml path" name="devfile_path" value=${path} onValue=${setPath} placeholder="/home/you/projects/orders-api/devfile.yaml" errors=${res && !res.ok && res.field === "devfile_path" ? [res.error] : []} />
      <${Input} label="or paste its content" name="devfile_content" type="textarea" value=${content} onValue=${setContent} />
      <button type="submit" id="validate-button" class="primary" disabled=${busy}>${busy ? "Checking…" : "Check"}</button>
    </form>
    <div id="validate-result" class="result" aria-live="polite">${out}</div>`;
}

export function mount(root, ctx) {
  let visit = 0;
  return () => render(html`<${Check} ...${ctx} visit=${++visit} />`, root);
}
