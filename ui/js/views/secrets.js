// Secrets: the user's own, an app's, and the account's shared ones, in tabs. A prefix filters
// the paths; each secret shows its latest version number, and its history lists every kept
// version, any of which can be viewed. Values stay hidden until revealed. Saving an existing
// path makes a new version; deleting asks first; sharing copies into the shared scope. Every
// rule (paths, JSON data, who may do what) is the toolkit's: its errors name the field.
import { el, text } from "../components/dom.js";
import { tabKeyTarget } from "../components/tabs.js";
import { saveSecret } from "../secret-save.js";

const SCOPES = [
  { id: "user", label: "Mine", note: "Private to you." },
  { id: "app", label: "An app's", note: "Reach the app's services as environment variables when it deploys." },
  { id: "shared", label: "Shared", note: "Readable by every member of the account." },
];

export function mount(root, { api }) {
  const tool = async (name, args) => {
    const r = await api.tool(name, args);
    return r.ok ? r.value : { success: false, error: r.error, field: r.field };
  };
  let scope = "user";
  let ticket = 0;

  const tabs = el("div", { class: "tabs", role: "tablist", "aria-label": "Secret scope" });
  const appPick = el("select", { name: "secrets_app", id: "secrets-app", "aria-label": "App" });
  const appLabel = el("label", { class: "hidden", id: "secrets-app-label" }, "App", appPick);
  const prefix = el("input", { name: "secrets_prefix", id: "secrets-prefix", placeholder: "db/" });
  const note = el("p", { class: "muted", id: "secrets-note" });
  const table = el("div", { id: "secrets-list", "aria-live": "polite" });
  const detail = el("div", { id: "secret-detail", class: "result", "aria-live": "polite" });
  const path = el("input", { name: "new_secret_path", id: "new-secret-path", placeholder: "db/credentials" });
  const data = el("textarea", { name: "new_secret_data", id: "new-secret-data", rows: "2", placeholder: '{"DB_PASSWORD": "…"}' });
  const save = el("button", { type: "button", class: "primary", id: "new-secret-save" }, "Save");
  const saved = el("div", { id: "new-secret-result", class: "result", "aria-live": "polite" });

  for (const s of SCOPES) {
    const b = el("button", { type: "button", role: "tab", "data-scope": s.id, id: `secrets-tab-${s.id}` }, s.label);
    b.addEventListener("click", () => {
      scope = s.id;
      refresh();
    });
    tabs.append(b);
  }
  // Arrow keys, Home and End move between the scopes, as in every tablist.
  tabs.addEventListener("keydown", (ev) => {
    const next = tabKeyTarget(ev.key, SCOPES.findIndex((s) => s.id === scope), SCOPES.length);
    if (next === null) return;
    ev.preventDefault();
    scope = SCOPES[next].id;
    refresh();
    tabs.children[next].focus();
  });

  root.append(
    el("h2", {}, "Secrets"),
    tabs,
    el("div", { class: "inline" }, appLabel, el("label", {}, "Paths starting with", prefix)),
    note,
    table,
    detail,
    el("div", { class: "section" },
      el("h3", {}, "Add or update"),
      el("p", { class: "muted" }, "Saving a path that exists makes a new version; the earlier ones are kept."),
      el("div", { class: "inline" }, el("label", {}, "Path", path), el("label", {}, "Data (a JSON object)", data), save),
      saved));

  const args = () => (scope === "app" ? { secret_type: "app", app_id: appPick.value } : { secret_type: scope });
  const error = (box, res) => box.replaceChildren(el("p", { class: "error", role: "alert" }, res.error));
  const ok = (box, message) => box.replaceChildren(el("p", { class: "ok", role: "status" }, message));

  async function loadApps() {
    const res = await tool("list_apps", {});
    if (res.success === false) return false;
    const chosen = appPick.value;
    appPick.replaceChildren(...res.apps.map((a) => el("option", { value: a.app_id }, a.name)));
    if (chosen) appPick.value = chosen;
    return res.apps.length > 0;
  }

  async function refresh() {
    const mine = ++ticket;
    for (const b of tabs.children) {
      const on = b.dataset.scope === scope;
      b.classList.toggle("active", on);
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.tabIndex = on ? 0 : -1;
    }
    appLabel.classList.toggle("hidden", scope !== "app");
    note.textContent = SCOPES.find((s) => s.id === scope).note;
    detail.replaceChildren();
    if (scope === "app" && !appPick.value) {
      table.replaceChildren(el("p", { class: "muted" }, "Loading apps…"));
      const any = await loadApps();
      if (mine !== ticket) return;
      if (!any) return table.replaceChildren(el("p", { class: "muted empty" }, "No apps yet: register one in Apps to keep its secrets here."));
    }
    table.replaceChildren(el("p", { class: "muted" }, "Loading secrets…"));
    const query = { ...args() };
    if (prefix.value.trim()) query.prefix = prefix.value.trim();
    const res = await tool("list_secrets", query);
    if (mine !== ticket) return;
    if (res.success === false) return error(table, res);
    if (!res.secrets.length) {
      return table.replaceChildren(el("p", { class: "muted empty" }, query.prefix ? `No secret paths start with ${query.prefix}.` : "No secrets here yet."));
    }
    const t = el("table", {}, el("tr", {}, el("th", {}, "path"), el("th", {}, "version"), el("th", {}, "updated"), el("th", {}, "")));
    for (const sec of res.secrets) {
      const actions = el("td", { class: "actions" });
      const button = (label, onClick) => {
        const b = el("button", { type: "button", class: "small", "data-action": label.toLowerCase(), "data-path": sec.secret_path }, label);
        b.addEventListener("click", onClick);
        actions.append(b);
      };
      button("History", () => history(sec.secret_path));
      button("Edit", () => {
        path.value = sec.secret_path;
        data.focus();
      });
      if (scope !== "shared") button("Share", () => share(sec.secret_path));
      button("Delete", () => remove(sec.secret_path));
      t.append(el("tr", {}, el("td", { class: "mono" }, sec.secret_path), el("td", {}, text(sec.version)), el("td", {}, text(sec.updated_at)), actions));
    }
    table.replaceChildren(t);
  }

  // One version's value, hidden until revealed.
  function valueOf(secretPath, version) {
    const cell = el("div", { class: "mono value", id: `secret-value-${version}` });
    const reveal = el("button", { type: "button", class: "small", "data-version": String(version) }, `Show version ${version}`);
    reveal.addEventListener("click", async () => {
      const got = await tool("get_secret", { ...args(), secret_path: secretPath, version });
      if (got.success === false) return error(cell, got);
      cell.replaceChildren(JSON.stringify(got.data));
      if (got.metadata && Object.keys(got.metadata).length) cell.append(el("span", { class: "muted" }, `  metadata ${JSON.stringify(got.metadata)}`));
    });
    return el("li", {}, reveal, cell);
  }

  async function history(secretPath) {
    detail.replaceChildren(el("p", { class: "muted" }, `Loading the versions of ${secretPath}…`));
    const got = await tool("get_secret", { ...args(), secret_path: secretPath });
    if (got.success === false) return error(detail, got);
    const versions = (got.versions || [got.version]).slice().reverse();
    detail.replaceChildren(
      el("h3", {}, `${secretPath}: ${versions.length} version${versions.length === 1 ? "" : "s"} kept (latest ${got.version})`),
      el("ul", { class: "versions", id: "secret-versions" }, ...versions.map((v) => valueOf(secretPath, v))));
  }

  function remove(secretPath) {
    const sure = el("button", { type: "button", class: "danger small", id: "secret-delete-confirm" }, `Delete ${secretPath} and every version`);
    const no = el("button", { type: "button", class: "small" }, "Keep it");
    no.addEventListener("click", () => detail.replaceChildren());
    sure.addEventListener("click", async () => {
      const res = await tool("delete_secret", { ...args(), secret_path: secretPath });
      if (res.success === false) return error(detail, res);
      ok(detail, res.message);
      refresh().then(() => ok(detail, res.message));
    });
    detail.replaceChildren(el("p", {}, `Deleting ${secretPath} removes every version permanently.`), el("div", { class: "row" }, sure, no));
  }

  function share(secretPath) {
    const to = el("input", { name: "share_to", id: "share-to", value: secretPath });
    const go = el("button", { type: "button", class: "small primary", id: "share-go" }, "Copy to shared");
    const out = el("div", { class: "result" });
    go.addEventListener("click", async () => {
      const a = { from_secret_type: scope, from_secret_path: secretPath, to_shared_path: to.value.trim() };
      if (scope === "app") a.app_id = appPick.value;
      const res = await tool("share_secret", a);
      if (res.success === false) return error(out, res);
      ok(out, res.message || `copied to shared/${a.to_shared_path}`);
    });
    detail.replaceChildren(
      el("p", {}, `Copy ${secretPath} into the shared scope, readable by every member of the account. The original is unchanged.`),
      el("div", { class: "inline" }, el("label", {}, "Shared path", to), go), out);
  }

  save.addEventListener("click", async () => {
    const a = { ...args(), secret_path: path.value.trim(), data: data.value.trim() };
    if (scope === "app" && !a.app_id) return error(saved, { error: "Pick an app first." });
    save.disabled = true;
    const { res, updated } = await saveSecret(api, args(), a.secret_path, a.data);
    save.disabled = false;
    if (!res.ok) return error(saved, res);
    data.value = "";
    ok(saved, res.value.message);
    await refresh();
    if (updated) history(a.secret_path);
  });
  let typing = null;
  prefix.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(refresh, 250);
  });
  appPick.addEventListener("change", refresh);
  return () => refresh();
}
