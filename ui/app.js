// Slipway desktop UI. Presentation only: every rule lives in the Rust toolkit, reached
// through the `call_tool` command.
"use strict";

const invoke = (cmd, args) => window.__TAURI__.core.invoke(cmd, args);
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function tool(name, args) {
  try {
    return await invoke("call_tool", { name, args });
  } catch (e) {
    return { success: false, error: String(e && e.message ? e.message : e) };
  }
}

let selectedTemplate = null;

async function loadTemplates() {
  const box = $("#templates");
  const res = await tool("get_available_templates", {});
  box.replaceChildren();
  if (res.success === false) {
    box.append(el("p", { class: "error" }, res.error));
    return;
  }
  for (const t of res.templates) {
    const card = el("button", { type: "button", class: "card", role: "radio", "aria-checked": "false", "data-name": t.name },
      el("strong", {}, t.name),
      el("span", { class: "meta" }, `${t.language} · port ${t.default_port}`),
      el("span", {}, t.description));
    card.addEventListener("click", () => {
      selectedTemplate = t;
      for (const c of box.children) c.setAttribute("aria-checked", String(c === card));
      const port = $("#scaffold-form [name=port]");
      port.placeholder = `default ${t.default_port}`;
    });
    box.append(card);
  }
}

function showResult(box, ok, title, lines = []) {
  box.replaceChildren(el("p", { class: ok ? "ok" : "error" }, title));
  if (lines.length) {
    const list = el("ul");
    for (const l of lines) list.append(el("li", {}, l));
    box.append(list);
  }
}

$("#scaffold-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const box = $("#scaffold-result");
  if (!selectedTemplate) {
    showResult(box, false, "Pick a template first.");
    return;
  }
  const f = new FormData(ev.target);
  const args = {
    app_name: f.get("app_name").trim(),
    app_type: selectedTemplate.name,
    output_directory: f.get("output_directory").trim(),
    durable: f.get("durable") === "on",
    overwrite: f.get("overwrite") === "on",
  };
  for (const key of ["display_name", "description"]) {
    const v = f.get(key).trim();
    if (v) args[key] = v;
  }
  if (f.get("port")) args.port = Number(f.get("port"));
  const button = $("#scaffold-button");
  button.disabled = true;
  const res = await tool("scaffold_app", args);
  button.disabled = false;
  if (res.success === false) {
    showResult(box, false, res.error);
  } else {
    showResult(box, true, `Created ${res.project_path}`, res.files_created);
    $("#validate-form [name=devfile_path]").value = `${res.project_path}/devfile.yaml`;
  }
});

$("#validate-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const path = f.get("devfile_path").trim();
  const content = f.get("devfile_content");
  const args = path ? { devfile_path: path } : { devfile_content: content };
  const res = await tool("validate_devfile", args);
  const box = $("#validate-result");
  if (res.success === false) {
    showResult(box, false, res.error);
    return;
  }
  const lines = [...res.errors.map((e) => `Error: ${e}`), ...res.warnings.map((w) => `Warning: ${w}`)];
  showResult(box, res.valid, res.valid ? (res.warnings.length ? "Valid, with warnings" : "Valid") : `${res.errors.length} error(s)`, lines);
});

for (const b of document.querySelectorAll("nav button")) {
  b.addEventListener("click", () => {
    for (const o of document.querySelectorAll("nav button")) o.classList.toggle("active", o === b);
    for (const v of document.querySelectorAll(".view")) v.classList.toggle("hidden", v.id !== `view-${b.dataset.view}`);
  });
}

loadTemplates();
