// Check a devfile: by path it is watched (in Rust, with notify) and checked again on every
// change on disk, so an edit in the user's own editor shows up here within a second; pasted
// content is checked once through the toolkit's validator.
import { html, render, useEffect, useState } from "../../vendor/preact-htm.js";
import { Input } from "../components/field.js";

/** One finding: where (path and line), what, and the line itself. */
function Finding({ f }) {
  const where = [f.path, f.line != null ? `line ${f.line}` : null].filter(Boolean).join(", ");
  const kind = f.severity === "error" ? "Error" : "Warning";
  return html`<li class=${f.severity === "error" ? "error" : ""}>
    ${kind}${where ? html` <span class="mono">(${where})</span>` : null}: ${f.message}
    ${f.source != null ? html`<pre class="source mono">${f.line} | ${f.source}</pre>` : null}
  </li>`;
}

function Check({ api, shared, visit }) {
  const [path, setPath] = useState(shared.devfilePath);
  const [content, setContent] = useState("");
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  const [watched, setWatched] = useState(null);

  // A project scaffolded since the last visit is offered here.
  useEffect(() => {
    if (shared.devfilePath) setPath(shared.devfilePath);
  }, [visit]);

  // While a file is watched, pick up each new check.
  useEffect(() => {
    if (!watched) return undefined;
    const timer = setInterval(async () => {
      const r = await api.devfileLatest();
      if (r.ok && r.value && r.value.version !== watched.version) {
        setWatched(r.value);
        setRes({ ok: true, watched: r.value });
      }
    }, 500);
    return () => clearInterval(timer);
  }, [watched]);

  async function submit(ev) {
    ev.preventDefault();
    setBusy(true);
    if (path.trim()) {
      const r = await api.devfileWatch(path.trim());
      setBusy(false);
      setWatched(r.ok ? r.value : null);
      setRes(r.ok ? { ok: true, watched: r.value } : { ...r, field: "devfile_path" });
      return;
    }
    const r = await api.tool("validate_devfile", { devfile_content: content });
    setBusy(false);
    setWatched(null);
    setRes(r);
  }

  let out = null;
  if (res && !res.ok) out = html`<p class="error" role="alert">${res.error}</p>`;
  else if (res && res.watched) {
    const w = res.watched;
    const errors = w.findings.filter((f) => f.severity === "error").length;
    const title = w.unreadable ? "Cannot read the file" : w.valid ? (w.findings.length ? "Valid, with warnings" : "Valid") : `${errors} error(s)`;
    out = html`<p class=${w.valid ? "ok" : "error"} role="status">${title}</p>
      ${w.unreadable ? html`<p class="error">${w.unreadable}</p>` : null}
      <ul>${w.findings.map((f) => html`<${Finding} f=${f} />`)}</ul>
      <p class="muted" id="validate-watching">Watching the file: checked again on every save (check ${w.version}).</p>`;
  } else if (res) {
    const v = res.value;
    const title = v.valid ? (v.warnings.length ? "Valid, with warnings" : "Valid") : `${v.errors.length} error(s)`;
    out = html`<p class=${v.valid ? "ok" : "error"} role="status">${title}</p>
      <ul>${v.errors.map((e) => html`<li class="error">Error: ${e}</li>`)}${v.warnings.map((w) => html`<li>Warning: ${w}</li>`)}</ul>`;
  }
  return html`
    <h2>Check a devfile</h2>
    <form id="validate-form" onSubmit=${submit}>
      <${Input} label="devfile.yaml path (watched: re-checked on every save)" name="devfile_path" value=${path} onValue=${setPath} placeholder="/home/you/projects/orders-api/devfile.yaml" errors=${res && !res.ok && res.field === "devfile_path" ? [res.error] : []} />
      <${Input} label="or paste its content" name="devfile_content" type="textarea" value=${content} onValue=${setContent} />
      <button type="submit" id="validate-button" class="primary" disabled=${busy}>${busy ? "Checking…" : "Check"}</button>
    </form>
    <div id="validate-result" class="result" aria-live="polite">${out}</div>`;
}

export function mount(root, ctx) {
  let visit = 0;
  return () => render(html`<${Check} ...${ctx} visit=${++visit} />`, root);
}
