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

// ---- Apps: list, status, lifecycle, build, logs, secrets, access -------------------------

let appsNext = null;
let currentApp = null;
// Each list load and app view has a ticket; an answer for an older ticket is dropped, so a
// slow reply never overwrites what the user asked for since.
let appsTicket = 0;
let viewTicket = 0;

function text(v) {
  return v === null || v === undefined ? "" : String(v);
}

function badge(status) {
  return el("span", { class: `badge ${text(status)}` }, text(status) || "unknown");
}

async function loadApps(more = false) {
  const list = $("#apps-list");
  const args = more && appsNext ? { next_page_token: appsNext } : {};
  const ticket = ++appsTicket;
  const res = await tool("list_apps", args);
  if (ticket !== appsTicket) return;
  if (!more) list.replaceChildren();
  if (res.success === false) {
    list.append(el("li", { class: "error" }, res.error));
    $("#apps-more").classList.add("hidden");
    return;
  }
  for (const a of res.apps) {
    const b = el("button", { type: "button", "data-app": a.app_id }, el("span", {}, a.name), badge(a.status));
    b.addEventListener("click", () => openApp(a.app_id));
    list.append(el("li", {}, b));
  }
  if (!list.children.length) list.append(el("li", { class: "muted" }, "No apps yet: register one below, or build a project."));
  appsNext = res.next_page_token || null;
  $("#apps-more").classList.toggle("hidden", !appsNext);
  markCurrent();
}

function markCurrent() {
  for (const b of document.querySelectorAll("#apps-list button")) {
    b.setAttribute("aria-current", String(b.dataset.app === currentApp));
  }
}

function section(title, ...children) {
  return el("div", { class: "section" }, el("h3", {}, title), ...children);
}

function resultLine(box, res, okText) {
  box.replaceChildren(el("p", { class: res.success === false ? "error" : "ok" }, res.success === false ? res.error : okText));
}

async function openApp(appId) {
  currentApp = appId;
  markCurrent();
  const pane = $("#app-detail");
  const ticket = ++viewTicket;
  pane.replaceChildren(el("p", { class: "muted" }, "Loading…"));
  const [app, status] = await Promise.all([tool("get_app", { app_id: appId }), tool("get_app_status", { app_id: appId })]);
  if (ticket !== viewTicket) return;
  if (app.success === false) {
    pane.replaceChildren(el("p", { class: "error" }, app.error));
    return;
  }
  const header = el("div", { class: "row" }, el("h2", { id: "app-name" }, app.display_name || app.name), badge(status.status || app.status));
  const info = el("p", { class: "muted mono" }, `${app.name} · ${app.app_id}`);
  const urls = el("ul", { class: "list mono" });
  if (status.app_url) urls.append(el("li", {}, `App: ${status.app_url}`));
  for (const svc of status.services || []) urls.append(el("li", {}, `${svc.name} (${svc.status}): ${text(svc.url)}`));
  const reason = status.reason ? el("p", { class: "error" }, status.reason) : el("span");
  pane.replaceChildren(header, info, urls, reason, lifecycle(app), buildBox(app), logsBox(app), secretsBox(app), accessBox(app));
}

function lifecycle(app) {
  const box = el("div", { class: "result" });
  const toggle = el("button", { type: "button", class: "small" }, app.enabled ? "Disable" : "Enable");
  toggle.addEventListener("click", async () => {
    toggle.disabled = true;
    const res = await tool(app.enabled ? "disable_app" : "enable_app", { app_id: app.app_id });
    toggle.disabled = false;
    if (res.success === false) return resultLine(box, res);
    await loadApps();
    openApp(app.app_id);
  });
  const refresh = el("button", { type: "button", class: "small" }, "Refresh status");
  refresh.addEventListener("click", () => openApp(app.app_id));
  const del = el("button", { type: "button", class: "small danger" }, "Delete…");
  del.addEventListener("click", () => {
    const sure = el("button", { type: "button", class: "small danger", id: "confirm-delete" }, `Delete ${app.name} permanently`);
    const no = el("button", { type: "button", class: "small" }, "Keep it");
    no.addEventListener("click", () => box.replaceChildren());
    sure.addEventListener("click", async () => {
      const res = await tool("delete_app", { app_id: app.app_id });
      if (res.success === false) return resultLine(box, res);
      currentApp = null;
      $("#app-detail").replaceChildren(el("p", { class: "ok" }, res.message));
      loadApps();
    });
    box.replaceChildren(el("p", {}, "This stops the app, deletes its builds, logs and secrets, and frees its name."), el("div", { class: "row" }, sure, no));
  });
  return el("div", {}, el("div", { class: "row" }, refresh, toggle, del), box);
}

function buildBox(app) {
  const input = el("input", { name: "project_path", placeholder: "/home/you/projects/" + app.name });
  const go = el("button", { type: "button", class: "small" }, "Build and deploy");
  const box = el("div", { class: "result" });
  go.addEventListener("click", async () => {
    const project = input.value.trim();
    if (!project) return resultLine(box, { success: false, error: "project folder: give the folder holding devfile.yaml" });
    go.disabled = true;
    box.replaceChildren(el("p", { class: "muted" }, "Packing, uploading and building… this can take a minute."));
    const res = await tool("build_app", { project_path: project });
    go.disabled = false;
    if (res.success === false) {
      resultLine(box, res);
      return;
    }
    const lines = [`app_id ${res.app_id}`, `app ${text(res.app_url)}`];
    for (const [svc, url] of Object.entries(res.service_urls || {})) lines.push(`${svc}: ${text(url)}`);
    showResult(box, true, "Built; the app is deploying. Refresh the status in a few seconds.", lines);
  });
  return section("Build", el("div", { class: "inline" }, el("label", {}, "Project folder", input), go), box);
}

function logsBox(app) {
  const box = el("div", {});
  const show = el("button", { type: "button", class: "small" }, "Show latest logs");
  show.addEventListener("click", async () => {
    const res = await tool("get_app_logs", { app_id: app.app_id, latest_only: true });
    if (res.success === false) return resultLine(box, res);
    if (!res.logs.length) return box.replaceChildren(el("p", { class: "muted" }, "No logs yet."));
    const table = el("table", {}, el("tr", {}, el("th", {}, "service"), el("th", {}, "kind"), el("th", {}, "time"), el("th", {}, "size"), el("th", {}, "presigned URL (15 min)")));
    for (const l of res.logs) {
      table.append(el("tr", {}, el("td", {}, l.service), el("td", {}, l.kind), el("td", {}, l.time), el("td", {}, `${l.size} B`), el("td", { class: "mono" }, l.url)));
    }
    box.replaceChildren(table);
  });
  return section("Logs", show, box);
}

function secretsBox(app) {
  const table = el("div", { id: "secrets-table" });
  const box = el("div", { class: "result" });
  const scope = { secret_type: "app", app_id: app.app_id };
  async function refresh() {
    const res = await tool("list_secrets", scope);
    if (res.success === false) return resultLine(table, res);
    if (!res.secrets.length) return table.replaceChildren(el("p", { class: "muted" }, "No app secrets. They reach the app's services as environment variables when it deploys."));
    const t = el("table", {}, el("tr", {}, el("th", {}, "path"), el("th", {}, "version"), el("th", {}, "updated"), el("th", {}, "")));
    for (const sec of res.secrets) {
      const reveal = el("button", { type: "button", class: "small" }, "Show value");
      const cell = el("td", { class: "mono" });
      reveal.addEventListener("click", async () => {
        const got = await tool("get_secret", { ...scope, secret_path: sec.secret_path });
        cell.replaceChildren(got.success === false ? el("span", { class: "error" }, got.error) : JSON.stringify(got.data));
      });
      t.append(el("tr", {}, el("td", { class: "mono" }, sec.secret_path), el("td", {}, text(sec.version)), el("td", {}, text(sec.updated_at)), el("td", {}, reveal, cell)));
    }
    table.replaceChildren(t);
  }
  const path = el("input", { name: "secret_path", placeholder: "db/credentials" });
  const data = el("input", { name: "secret_data", placeholder: '{"DB_PASSWORD": "…"}' });
  const save = el("button", { type: "button", class: "small", id: "secret-save" }, "Save secret");
  save.addEventListener("click", async () => {
    const args = { ...scope, secret_path: path.value.trim(), data: data.value.trim() };
    const listed = await tool("list_secrets", { ...scope, prefix: args.secret_path });
    const exists = listed.success !== false && (listed.paths || []).includes(args.secret_path);
    const res = await tool(exists ? "update_secret" : "create_secret", args);
    if (res.success === false) return resultLine(box, res);
    data.value = "";
    resultLine(box, res, res.message);
    refresh();
  });
  refresh();
  return section("Secrets", table, el("div", { class: "inline" }, el("label", {}, "Path", path), el("label", {}, "Data (JSON object)", data), save), box);
}

function accessBox(app) {
  const table = el("div", { id: "access-table" });
  const box = el("div", { class: "result" });
  const who = el("input", { name: "grant_user", placeholder: "colleague@example.com" });
  const role = el("select", { name: "grant_role" });
  const grant = el("button", { type: "button", class: "small", id: "grant-button" }, "Grant");
  async function refresh() {
    const [perms, roles] = await Promise.all([tool("list_app_permissions", { app_id: app.app_id }), tool("list_grantable_roles", { app_id: app.app_id })]);
    if (perms.success === false) return resultLine(table, perms);
    const grantable = roles.success === false ? [] : roles.roles;
    role.replaceChildren(...grantable.map((r) => el("option", { value: r }, r)));
    grant.disabled = grantable.length === 0;
    const t = el("table", {}, el("tr", {}, el("th", {}, "user"), el("th", {}, "email"), el("th", {}, "role"), el("th", {}, "")));
    const owners = perms.users.filter((u) => u.role === "owner").length;
    for (const u of perms.users) {
      const revoke = el("button", { type: "button", class: "small" }, "Revoke");
      const lastOwner = u.role === "owner" && owners === 1;
      revoke.disabled = !grantable.includes(u.role) || lastOwner;
      if (lastOwner) revoke.title = "An app always keeps at least one owner";
      revoke.addEventListener("click", async () => {
        const res = await tool("revoke_app_role", { app_id: app.app_id, role: u.role, user_id: u.user_id });
        resultLine(box, res, res.message);
        refresh();
      });
      t.append(el("tr", {}, el("td", {}, u.name), el("td", {}, u.email), el("td", {}, u.role), el("td", {}, revoke)));
    }
    table.replaceChildren(t);
    if (!grantable.length) box.replaceChildren(el("p", { class: "muted" }, `As ${text(roles.your_role) || "a viewer"} of this app you cannot grant roles.`));
  }
  grant.addEventListener("click", async () => {
    const res = await tool("grant_app_role", { app_id: app.app_id, role: role.value, user_id: who.value.trim() });
    resultLine(box, res, res.message);
    if (res.success !== false) who.value = "";
    refresh();
  });
  refresh();
  return section("Access", table, el("div", { class: "inline" }, el("label", {}, "User (e-mail or id)", who), el("label", {}, "Role", role), grant), box);
}

$("#apps-refresh").addEventListener("click", () => loadApps());
$("#apps-more").addEventListener("click", () => loadApps(true));

$("#register-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const args = { name: f.get("name").trim(), display_name: f.get("display_name").trim() };
  const project = f.get("project_path").trim();
  if (project) args.project_path = project;
  const button = $("#register-button");
  button.disabled = true;
  const res = await tool("register_app", args);
  button.disabled = false;
  const box = $("#register-result");
  if (res.success === false) {
    showResult(box, false, res.error);
    return;
  }
  showResult(box, true, res.message, res.app_file ? [`wrote ${res.app_file}`] : []);
  ev.target.reset();
  await loadApps();
  openApp(res.app_id);
});

for (const b of document.querySelectorAll("nav button[data-view=apps]")) {
  b.addEventListener("click", () => loadApps());
}

loadTemplates();
