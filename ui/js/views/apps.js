// Apps: the list, each app's status and service URLs, lifecycle, build, logs, secrets and
// access. Every decision (what may be revoked, create or update of a secret) comes from Rust.
import { $, el, showResult, text } from "../components/dom.js";
import { INTERVAL_MS, watchStatus } from "../watch-status.js";

export function mount(root, { api, shared }) {
  const tool = async (name, args) => {
    const r = await api.tool(name, args);
    return r.ok ? r.value : { success: false, error: r.error, field: r.field };
  };

  root.append(
    el("div", { class: "split" },
      el("div", { class: "pane" },
        el("div", { class: "row" }, el("h2", {}, "Apps"), el("button", { type: "button", id: "apps-refresh", class: "small" }, "Refresh")),
        el("ul", { id: "apps-list", class: "list", "aria-live": "polite" }),
        el("button", { type: "button", id: "apps-more", class: "small hidden" }, "Load more"),
        registerBox()),
      el("div", { class: "pane", id: "app-detail", "aria-live": "polite" },
        el("p", { class: "muted" }, "Select an app to see its status, builds, logs, secrets and who can access it."))));

  function registerBox() {
    const form = el("form", { id: "register-form", autocomplete: "off" },
      el("label", {}, "App name", el("input", { name: "name", required: "", placeholder: "orders-api" })),
      el("label", {}, "Display name", el("input", { name: "display_name", required: "", placeholder: "Orders API" })),
      el("label", {}, "Project folder (writes its .app file)", el("input", { name: "project_path", placeholder: "/home/you/projects/orders-api" })),
      el("button", { type: "submit", id: "register-button", class: "primary" }, "Register"));
    const result = el("div", { id: "register-result", class: "result", "aria-live": "polite" });
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const f = new FormData(form);
      const args = { name: f.get("name").trim(), display_name: f.get("display_name").trim() };
      const project = f.get("project_path").trim();
      if (project) args.project_path = project;
      const button = $("#register-button", root);
      button.disabled = true;
      const res = await tool("register_app", args);
      button.disabled = false;
      if (res.success === false) return showResult(result, false, res.error);
      showResult(result, true, res.message, res.app_file ? [`wrote ${res.app_file}`] : []);
      form.reset();
      await loadApps();
      openApp(res.app_id);
    });
    return el("details", { id: "register", class: "box" }, el("summary", {}, "Register an app"), form, result);
  }

  let appsNext = null;
  let currentApp = null;
  // Each list load and app view has a ticket; an answer for an older ticket is dropped, so a
  // slow reply never overwrites what the user asked for since.
  let appsTicket = 0;
  let viewTicket = 0;

  const badge = (status) => el("span", { class: `badge ${text(status)}` }, text(status) || "unknown");

  async function loadApps(more = false) {
    const list = $("#apps-list", root);
    if (!more && !list.children.length) list.append(el("li", { class: "muted" }, "Loading apps… (the first call starts the local platform)"));
    const args = more && appsNext ? { next_page_token: appsNext } : {};
    const ticket = ++appsTicket;
    const res = await tool("list_apps", args);
    if (ticket !== appsTicket) return;
    if (!more) list.replaceChildren();
    if (res.success === false) {
      list.append(el("li", { class: "error", role: "alert" }, res.error));
      $("#apps-more", root).classList.add("hidden");
      return;
    }
    for (const a of res.apps) {
      const b = el("button", { type: "button", "data-app": a.app_id }, el("span", {}, a.name), badge(a.status));
      b.addEventListener("click", () => openApp(a.app_id));
      list.append(el("li", {}, b));
    }
    if (!list.children.length) list.append(el("li", { class: "muted empty" }, "No apps yet: register one below, or build a project."));
    appsNext = res.next_page_token || null;
    $("#apps-more", root).classList.toggle("hidden", !appsNext);
    markCurrent();
  }

  function markCurrent() {
    for (const b of root.querySelectorAll("#apps-list button")) b.setAttribute("aria-current", String(b.dataset.app === currentApp));
  }

  const section = (title, ...children) => el("div", { class: "section" }, el("h3", {}, title), ...children);
  const resultLine = (box, res, okText) =>
    box.replaceChildren(el("p", { class: res.success === false ? "error" : "ok" }, res.success === false ? res.error : okText));

  async function openApp(appId) {
    currentApp = appId;
    markCurrent();
    const pane = $("#app-detail", root);
    const ticket = ++viewTicket;
    pane.replaceChildren(el("p", { class: "muted" }, "Loading…"));
    const [app, status] = await Promise.all([tool("get_app", { app_id: appId }), tool("get_app_status", { app_id: appId })]);
    if (ticket !== viewTicket) return;
    if (app.success === false) return pane.replaceChildren(el("p", { class: "error", role: "alert" }, app.error));
    // The list shows the status it was loaded with: bring this app's badge up to date.
    const listed = root.querySelector(`#apps-list button[data-app="${appId}"] .badge`);
    if (listed && status.status) listed.replaceWith(badge(status.status));
    const header = el("div", { class: "row" }, el("h2", { id: "app-name" }, app.display_name || app.name), el("span", { id: "app-status" }, badge(status.status || app.status)));
    const info = el("p", { class: "muted mono" }, `${app.name} · ${app.app_id}`);
    // Service URLs open in the system browser; limits say whether the runtime enforces them.
    const link = (url) => {
      const a = el("a", { href: url, class: "url" }, url);
      a.addEventListener("click", (ev) => {
        ev.preventDefault();
        api.openUrl(url);
      });
      return a;
    };
    const limits = (l) => {
      if (!l || (!l.memory && !l.cpu)) return "";
      const parts = [l.memory && `memory ${l.memory}`, l.cpu && `cpu ${l.cpu}`].filter(Boolean).join(", ");
      return ` · ${parts}${l.enforced ? "" : " (not enforced by the process runtime)"}`;
    };
    const urls = el("ul", { class: "list mono", id: "app-urls" });
    if (status.app_url) urls.append(el("li", {}, "App: ", link(status.app_url)));
    for (const svc of status.services || []) {
      urls.append(el("li", {}, `${svc.name} (${svc.status}): `, svc.url ? link(svc.url) : el("span", { class: "muted" }, "internal"), el("span", { class: "muted" }, limits(svc.limits))));
    }
    const reason = status.reason ? el("p", { class: "error" }, status.reason) : el("span");
    const failed = (status.status || app.status) === "FAILED";
    pane.replaceChildren(header, info, urls, reason, lifecycle(app), ...(failed ? [diagnosisBox(app)] : []), buildBox(app), buildsBox(app), historyBox(app), logsBox(app), secretsBox(app), accessBox(app));
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
    const refresh = el("button", { type: "button", class: "small", id: "status-refresh" }, "Refresh status");
    refresh.addEventListener("click", () => openApp(app.app_id));
    // Watch status: poll every 10 s until RUNNING or FAILED, then show the app with its logs.
    const watch = el("button", { type: "button", class: "small", id: "status-watch" }, "Watch status");
    const watching = el("p", { class: "muted", id: "status-watching", "aria-live": "polite" });
    watch.addEventListener("click", async () => {
      if (watch.signal) {
        watch.signal.stopped = true;
        return;
      }
      const signal = { stopped: false };
      watch.signal = signal;
      watch.textContent = "Stop watching";
      const settled = await watchStatus({
        fetchStatus: () => tool("get_app_status", { app_id: app.app_id }),
        onUpdate: (s) => {
          const now = new Date().toLocaleTimeString();
          watching.textContent = s.success === false
            ? `${now}: ${s.error} (trying again in ${INTERVAL_MS / 1000} s)`
            : `${now}: ${s.status}; checking every ${INTERVAL_MS / 1000} s until RUNNING or FAILED`;
        },
        signal,
      });
      watch.signal = null;
      watch.textContent = "Watch status";
      if (!settled || currentApp !== app.app_id) return;
      await openApp(app.app_id);
      const logs = $("#app-detail [data-action=show-logs]", root);
      if (logs) logs.click();
    });
    const del = el("button", { type: "button", class: "small danger" }, "Delete…");
    del.addEventListener("click", () => {
      const sure = el("button", { type: "button", class: "small danger", id: "confirm-delete" }, `Delete ${app.name} permanently`);
      const no = el("button", { type: "button", class: "small" }, "Keep it");
      // The project's .app file names the deleted app; offer to remove it too (the folder the
      // build box was given, if any).
      const built = $("#app-detail [name=project_path]", root);
      const folder = el("input", { name: "forget_project", id: "forget-project", value: built ? built.value.trim() : "", placeholder: "/home/you/projects/" + app.name });
      const forget = el("input", { type: "checkbox", id: "forget-app-file" });
      forget.checked = Boolean(folder.value);
      no.addEventListener("click", () => box.replaceChildren());
      sure.addEventListener("click", async () => {
        const res = await tool("delete_app", { app_id: app.app_id });
        if (res.success === false) return resultLine(box, res);
        currentApp = null;
        const lines = [el("p", { class: "ok" }, res.message)];
        if (forget.checked && folder.value.trim()) {
          const gone = await api.forgetAppFile(folder.value.trim(), app.app_id);
          lines.push(gone.ok ? el("p", { class: "ok", id: "forgot-app-file" }, `removed ${gone.value}`) : el("p", { class: "error", id: "forgot-app-file" }, gone.error));
        }
        $("#app-detail", root).replaceChildren(...lines);
        loadApps();
      });
      box.replaceChildren(
        el("p", {}, "This stops the app, deletes its builds, logs and secrets, and frees its name."),
        el("div", { class: "inline" },
          el("label", { class: "check" }, forget, "Also remove the .app file in"),
          el("label", {}, "Project folder", folder)),
        el("div", { class: "row" }, sure, no));
    });
    return el("div", {}, el("div", { class: "row" }, refresh, watch, toggle, del), watching, box);
  }

  // Why a FAILED app failed: the platform's diagnosis, shown as it comes.
  function diagnosisBox(app) {
    const box = el("div", { id: "diagnosis", "aria-live": "polite" }, el("p", { class: "muted" }, "Finding out why…"));
    api.appDiagnosis(app.app_id).then((res) => {
      if (!res.ok) return box.replaceChildren(el("p", { class: "error" }, res.error));
      const d = res.value;
      const parts = [];
      if (d.reason) parts.push(el("p", { class: "error" }, d.reason));
      for (const s of d.failing_services || []) {
        parts.push(el("p", {}, `Service ${s.service} is ${s.status}; its log ends:`), el("pre", { class: "mono log" }, s.log_tail || "(empty)"));
      }
      if (d.failed_build) parts.push(el("p", {}, `The newest build (${d.failed_build.service}) failed: ${text(d.failed_build.error)}`), el("pre", { class: "mono log" }, d.failed_build.log_tail || "(empty)"));
      for (const e of (d.devfile && d.devfile.errors) || []) parts.push(el("p", { class: "error" }, `devfile: ${e}`));
      if (d.last_good_deployment_id && d.changes_since_last_good) {
        parts.push(el("p", {}, `Since the last deployment that ran well (${d.last_good_deployment_id}):`), diffView(d.changes_since_last_good));
      }
      box.replaceChildren(...(parts.length ? parts : [el("p", { class: "muted" }, "No failing service or build was found.")]));
    });
    return section("Why it failed", box);
  }

  // A deployment diff: images, secret versions (never values), devfile lines.
  function diffView(diff) {
    const rows = [];
    for (const i of diff.images || []) rows.push(el("li", {}, `image of ${i.service}: ${text(i.from)} → ${text(i.to)}`));
    for (const s of diff.secrets || []) rows.push(el("li", {}, `secret ${s.path} (${s.service}): version ${text(s.from_version)} → ${text(s.to_version)}`));
    const list = el("ul", { class: "list mono diff" }, ...(rows.length ? rows : [el("li", { class: "muted" }, "same images and secret versions")]));
    return el("div", {}, list, diff.devfile && diff.devfile.changed ? el("pre", { class: "mono log" }, diff.devfile.diff) : el("p", { class: "muted" }, "devfile unchanged"));
  }

  // The build history: every build of every service, newest first, each with its log and
  // its image's scan report on request; paged like the app list.
  function buildsBox(app) {
    const table = el("table", { id: "builds" });
    const more = el("button", { type: "button", class: "small hidden", id: "builds-more" }, "Load more builds");
    const empty = el("p", { class: "muted" }, "Loading builds…");
    let next = null;
    const duration = (b) => {
      if (!b.started_at || !b.finished_at) return "";
      const s = Math.round((Date.parse(b.finished_at) - Date.parse(b.started_at)) / 1000);
      return s >= 60 ? ` · ${Math.floor(s / 60)} min ${s % 60} s` : ` · ${s} s`;
    };
    function row(b) {
      const detail = el("div", { class: "build-detail" });
      const logButton = el("button", { type: "button", class: "small", "data-action": "build-log" }, "Log");
      logButton.addEventListener("click", async () => {
        logButton.disabled = true;
        detail.replaceChildren(el("p", { class: "muted" }, "Loading the log…"));
        const res = await api.buildLog(b.build_id);
        logButton.disabled = false;
        if (!res.ok) return detail.replaceChildren(el("p", { class: "error", role: "alert" }, res.error));
        const log = res.value.log || "";
        detail.replaceChildren(
          ...(res.value.log_truncated ? [el("p", { class: "muted" }, "Only the end of a long log is shown.")] : []),
          log.trim() ? el("pre", { class: "mono log build-log", tabindex: "0" }, log) : el("p", { class: "muted" }, "The log is empty."));
      });
      const scanButton = el("button", { type: "button", class: "small", "data-action": "build-scan" }, "Scan report");
      scanButton.disabled = b.status !== "succeeded";
      scanButton.title = scanButton.disabled ? "Only a succeeded build has an image to scan" : "";
      scanButton.addEventListener("click", async () => {
        scanButton.disabled = true;
        detail.replaceChildren(el("p", { class: "muted" }, "Loading the scan report…"));
        const res = await tool("get_build_scan_report", { build_id: b.build_id });
        scanButton.disabled = false;
        detail.replaceChildren(scanView(res));
      });
      return el("tr", { "data-build": b.build_id },
        el("td", {}, b.created_at, el("div", { class: "muted" }, `${b.builder}${duration(b)}`)),
        el("td", {}, b.service),
        el("td", {}, badge(b.status), b.error ? el("div", { class: "error" }, b.error) : ""),
        el("td", {}, el("div", { class: "row" }, logButton, scanButton), detail));
    }
    async function load(append) {
      const ticket = viewTicket;
      const res = await api.appBuilds(app.app_id, append ? next : null);
      if (ticket !== viewTicket) return;
      if (!res.ok) {
        empty.className = "error";
        empty.textContent = res.error;
        return;
      }
      if (!append) table.replaceChildren(el("tr", {}, el("th", {}, "started"), el("th", {}, "service"), el("th", {}, "status"), el("th", {}, "")));
      for (const b of res.value.builds || []) table.append(row(b));
      next = res.value.next_page_token || null;
      more.classList.toggle("hidden", !next);
      const none = table.rows.length <= 1;
      empty.className = none ? "muted empty" : "hidden";
      empty.textContent = none ? "No builds yet: build the app from its project folder." : "";
    }
    more.addEventListener("click", () => load(true));
    const reload = el("button", { type: "button", class: "small", id: "builds-refresh" }, "Refresh builds");
    reload.addEventListener("click", () => load(false));
    load(false);
    return section("Build history", reload, empty, table, more);
  }

  // A build's scan: the advisories found (or why there is no report) and the package list.
  function scanView(res) {
    if (res.success === false) return el("p", { class: "error", role: "alert" }, res.error);
    const packages = (res.report && res.report.sbom ? res.report.sbom : res.sbom || { packages: [] }).packages || [];
    const parts = [];
    if (res.report) {
      const vulns = res.report.vulnerabilities || [];
      const db = res.report.advisory_db || {};
      parts.push(el("p", { class: vulns.length ? "error" : "ok", id: "scan-summary" },
        vulns.length ? `${vulns.length} known vulnerabilit${vulns.length === 1 ? "y" : "ies"}` : "No known vulnerabilities",
        ` in ${packages.length} packages (checked ${res.report.scanned_at} against ${db.advisories ?? "?"} advisories)`));
      if (vulns.length) {
        const t = el("table", {}, el("tr", {}, el("th", {}, "advisory"), el("th", {}, "package"), el("th", {}, "severity"), el("th", {}, "fixed in"), el("th", {}, "summary")));
        for (const v of vulns) t.append(el("tr", {}, el("td", { class: "mono" }, v.id), el("td", { class: "mono" }, `${v.package} ${v.version}`), el("td", {}, v.severity || "—"), el("td", { class: "mono" }, v.fixed || "—"), el("td", {}, v.summary)));
        parts.push(t);
      }
    } else {
      parts.push(el("p", { class: "muted", id: "scan-summary" }, `No scan report: ${res.error || "the platform has none"}. ${packages.length} packages found in the image.`));
    }
    if (packages.length) {
      const list = el("ul", { class: "mono" });
      for (const p of packages) list.append(el("li", {}, `${p.name} ${p.version} (${p.ecosystem})`));
      parts.push(el("details", {}, el("summary", {}, `${packages.length} packages`), list));
    }
    return el("div", { class: "scan" }, ...parts);
  }

  // The deployment history, each with its diff and a rollback (confirmed first).
  function historyBox(app) {
    const box = el("div", { id: "history" }, el("p", { class: "muted" }, "Loading deployments…"));
    const result = el("div", { class: "result", "aria-live": "polite" });
    async function refresh() {
      const res = await api.appDeployments(app.app_id);
      if (!res.ok) return box.replaceChildren(el("p", { class: "error" }, res.error));
      const all = res.value.deployments || [];
      if (!all.length) return box.replaceChildren(el("p", { class: "muted empty" }, "No deployments yet: build the app."));
      const t = el("table", {}, el("tr", {}, el("th", {}, "started"), el("th", {}, "status"), el("th", {}, "why"), el("th", {}, "secrets"), el("th", {}, "")));
      all.forEach((d, i) => {
        const secrets = d.services.flatMap((s) => s.secrets.map((x) => `${x.path}@v${x.version}`)).join(", ");
        const detail = el("div", {});
        const show = el("button", { type: "button", class: "small" }, "Changes");
        // The first deployment has nothing before it to compare with.
        show.disabled = i === all.length - 1;
        show.addEventListener("click", async () => {
          const diff = await api.appDeploymentDiff(app.app_id, d.id);
          detail.replaceChildren(diff.ok ? diffView(diff.value) : el("p", { class: "error" }, diff.error));
        });
        const back = el("button", { type: "button", class: "small", "data-deployment": d.id }, "Roll back to this…");
        back.addEventListener("click", () => {
          const sure = el("button", { type: "button", class: "small danger", id: "confirm-rollback" }, "Roll back");
          const no = el("button", { type: "button", class: "small" }, "Cancel");
          no.addEventListener("click", () => result.replaceChildren());
          sure.addEventListener("click", async () => {
            sure.disabled = true;
            const res = await api.appRollback(app.app_id, d.id);
            if (!res.ok) return result.replaceChildren(el("p", { class: "error", role: "alert" }, res.error));
            result.replaceChildren(el("p", { class: "ok" }, res.value.message));
            setTimeout(refresh, 3000);
          });
          result.replaceChildren(el("p", {}, `Deploy ${d.id} again with its images and secret versions (${secrets || "no secrets"})? The current deployment serves until the rollback is healthy.`), el("div", { class: "row" }, sure, no));
        });
        t.append(el("tr", {}, el("td", {}, d.created_at), el("td", {}, badge(d.status)), el("td", {}, d.cause + (d.reason ? ` — ${d.reason}` : "")), el("td", { class: "mono" }, secrets || "—"), el("td", {}, show, back, detail)));
      });
      box.replaceChildren(t);
    }
    const reload = el("button", { type: "button", class: "small", id: "history-refresh" }, "Refresh history");
    reload.addEventListener("click", refresh);
    refresh();
    return section("Deployments", reload, box, result);
  }

  function buildBox(app) {
    const input = el("input", { name: "project_path", placeholder: "/home/you/projects/" + app.name });
    const go = el("button", { type: "button", class: "small", id: "build-button" }, "Build and deploy");
    const box = el("div", { class: "result", id: "build-result", "aria-live": "polite" });
    // Each long step shows as it happens: packing, uploading, building, then the health wait.
    const step = (message) => box.replaceChildren(el("p", { class: "muted", id: "build-step" }, message));
    go.addEventListener("click", async () => {
      const ticket = viewTicket;
      go.disabled = true;
      step("Starting the build…");
      const newest = async () => {
        const h = await api.appDeployments(app.app_id);
        return h.ok && h.value.deployments && h.value.deployments[0];
      };
      const before = await newest();
      const started = await api.buildStart(input.value.trim());
      if (!started.ok) {
        go.disabled = false;
        return resultLine(box, { success: false, error: started.error });
      }
      let res = null;
      while (!res) {
        await new Promise((r) => setTimeout(r, 400));
        const polled = await api.buildPoll(started.value);
        if (!polled.ok) {
          res = { success: false, error: polled.error };
          break;
        }
        const steps = polled.value.steps;
        if (steps.length && ticket === viewTicket) step(`${steps[steps.length - 1][0].toUpperCase()}${steps[steps.length - 1].slice(1)}…`);
        res = polled.value.result;
      }
      go.disabled = false;
      if (ticket !== viewTicket) return;
      if (res.success === false) return resultLine(box, res);
      const lines = [`app_id ${res.app_id}`, `app ${text(res.app_url)}`];
      for (const [svc, url] of Object.entries(res.service_urls || {})) lines.push(`${svc}: ${text(url)}`);
      showResult(box, true, "Built; the app is deploying.", lines);
      const wait = el("p", { class: "muted", id: "build-health" }, "Waiting for the new deployment to become healthy…");
      box.append(wait);
      // The deployment this build started, once it has ended (the one before keeps serving
      // until then).
      for (let i = 0; i < 300 && ticket === viewTicket; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        const d = await newest();
        if (d && (!before || d.id !== before.id) && (d.status === "RUNNING" || d.status === "FAILED")) {
          wait.className = d.status === "RUNNING" ? "ok" : "error";
          wait.textContent = d.status === "RUNNING" ? `RUNNING ${text(res.app_url)}` : `FAILED: ${d.reason || "see the diagnosis"}; the previous deployment keeps serving`;
          return;
        }
      }
    });
    return section("Build", el("div", { class: "inline" }, el("label", {}, "Project folder", input), go), box, watchBox(app, input));
  }

  // Watch: the development loop (in the Rust core) rebuilds and redeploys on every save.
  // The window polls its state, the last change, the rebuilt services and the live log.
  function watchBox(app, folder) {
    const ticket = viewTicket;
    const toggle = el("input", { type: "checkbox", id: "watch-switch", role: "switch" });
    const state = el("p", { id: "watch-state", class: "muted", "aria-live": "polite" }, "Not watching.");
    const change = el("p", { id: "watch-change", class: "muted mono" });
    const rebuilt = el("p", { id: "watch-rebuilt", class: "muted" });
    const log = el("pre", { id: "watch-log", class: "log", "aria-label": "Live log" });
    let last = 0;
    let timer = null;
    const show = (snapshot) => {
      if (!snapshot) return;
      const st = snapshot.state;
      const phase = { starting: "Starting…", building: "Updating…", running: "RUNNING", failed: "FAILED", invalid: "devfile.yaml is invalid", stopped: "Stopped" }[st.phase] || st.phase;
      const extra = st.phase === "running" ? ` ${st.url || ""}${st.seconds != null ? ` (${st.seconds.toFixed(1)} s after the change)` : ""}` : st.message ? `: ${st.message}` : "";
      state.className = st.phase === "failed" || st.phase === "invalid" ? "error" : st.phase === "running" ? "ok" : "muted";
      state.textContent = phase + extra;
      change.textContent = st.last_change.length ? `Last change: ${st.last_change.join(", ")}` : "";
      const services = Object.entries(st.rebuilt || {}).map(([s, m]) => `${s} (${m})`);
      rebuilt.textContent = services.length ? `Updated: ${services.join(", ")}` : "";
      for (const e of snapshot.events) {
        if (e.event === "log") log.append(`${e.line.service}${e.line.kind === "build" ? " build" : ""} | ${e.line.line}\n`);
        else if (e.event === "changed") log.append(`==> changed: ${e.files.join(", ")}\n`);
        else if (e.event === "rebuilding") log.append(`==> updating ${Object.entries(e.services).map(([s, m]) => `${s} (${m})`).join(", ")}\n`);
        else if (e.event === "running") log.append(`==> RUNNING ${e.url || ""}\n`);
        else if (e.event === "failed") log.append(`==> FAILED: ${e.message}\n`);
        else if (e.event === "invalid") log.append(`==> devfile.yaml is invalid:\n${e.errors.map((x) => `    ${x}`).join("\n")}\n`);
      }
      while (log.childNodes.length > 600) log.firstChild.remove();
      log.scrollTop = log.scrollHeight;
      last = snapshot.last;
      if (!st.active) stopPolling();
    };
    const poll = async () => {
      if (ticket !== viewTicket) return stopPolling();
      const res = await api.devPoll(app.app_id, last);
      if (!res.ok || !res.value) return stopPolling();
      show(res.value);
    };
    const startPolling = () => {
      stopPolling();
      timer = setInterval(poll, 700);
    };
    function stopPolling() {
      if (timer) clearInterval(timer);
      timer = null;
    }
    toggle.addEventListener("change", async () => {
      toggle.disabled = true;
      if (toggle.checked) {
        const path = folder.value.trim();
        if (!path) {
          toggle.checked = false;
          toggle.disabled = false;
          state.className = "error";
          state.textContent = "Enter the project folder first.";
          return folder.focus();
        }
        last = 0;
        log.replaceChildren();
        const res = await api.devStart(app.app_id, path);
        toggle.disabled = false;
        if (!res.ok) {
          toggle.checked = false;
          state.className = "error";
          state.textContent = res.error;
          return;
        }
        show(res.value);
        startPolling();
      } else {
        stopPolling();
        await api.devStop(app.app_id);
        toggle.disabled = false;
        state.className = "muted";
        state.textContent = "Not watching; the app keeps running as it is.";
      }
    });
    // A loop started earlier in this window goes on: show it.
    api.devPoll(app.app_id, 0).then((res) => {
      if (ticket !== viewTicket || !res.ok || !res.value) return;
      toggle.checked = res.value.state.active;
      show(res.value);
      if (res.value.state.active) startPolling();
    });
    return el(
      "div",
      { class: "watch" },
      el("label", { class: "inline" }, toggle, " Watch the folder: rebuild and redeploy on every save"),
      state,
      change,
      rebuilt,
      log,
    );
  }

  function logsBox(app) {
    const box = el("div", {});
    const show = el("button", { type: "button", class: "small", "data-action": "show-logs" }, "Show latest logs");
    show.addEventListener("click", async () => {
      const res = await tool("get_app_logs", { app_id: app.app_id, latest_only: true });
      if (res.success === false) return resultLine(box, res);
      if (!res.logs.length) return box.replaceChildren(el("p", { class: "muted" }, "No logs yet."));
      const table = el("table", {}, el("tr", {}, el("th", {}, "service"), el("th", {}, "kind"), el("th", {}, "time"), el("th", {}, "size"), el("th", {}, "presigned URL (15 min)")));
      for (const l of res.logs) table.append(el("tr", {}, el("td", {}, l.service), el("td", {}, l.kind), el("td", {}, l.time), el("td", {}, `${l.size} B`), el("td", { class: "mono" }, l.url)));
      box.replaceChildren(table);
    });
    return section("Logs", show, box);
  }

  function secretsBox(app) {
    const table = el("div", { id: "secrets-table" }, el("p", { class: "muted" }, "Loading secrets…"));
    const box = el("div", { class: "result" });
    const scope = { secret_type: "app", app_id: app.app_id };
    async function refresh() {
      const res = await tool("list_secrets", scope);
      if (res.success === false) return resultLine(table, res);
      if (!res.secrets.length) return table.replaceChildren(el("p", { class: "muted empty" }, "No app secrets. They reach the app's services as environment variables when it deploys."));
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
    const table = el("div", { id: "access-table" }, el("p", { class: "muted" }, "Loading access…"));
    const box = el("div", { class: "result" });
    // The account's users to pick from; an e-mail or id typed in works too.
    const who = el("input", { name: "grant_user", placeholder: "colleague@example.com", list: "account-users" });
    const people = el("datalist", { id: "account-users" });
    tool("list_account_users", {}).then((res) => {
      if (res.success === false) return;
      people.replaceChildren(...(res.users || []).map((u) => el("option", { value: u.email }, u.name)));
    });
    const role = el("select", { name: "grant_role" });
    const grant = el("button", { type: "button", class: "small", id: "grant-button" }, "Grant");
    async function refresh() {
      const perms = await tool("list_app_permissions", { app_id: app.app_id });
      if (perms.success === false) return resultLine(table, perms);
      const grantable = perms.grantable_roles || [];
      role.replaceChildren(...grantable.map((r) => el("option", { value: r }, r)));
      grant.disabled = grantable.length === 0;
      const t = el("table", {}, el("tr", {}, el("th", {}, "user"), el("th", {}, "email"), el("th", {}, "role"), el("th", {}, "")));
      for (const u of perms.users) {
        const revoke = el("button", { type: "button", class: "small", "data-user": u.email || u.user_id }, "Revoke");
        // Whether this role may be revoked, and why not, is the toolkit's answer.
        revoke.disabled = !u.revocable;
        if (u.revoke_note) revoke.title = u.revoke_note;
        revoke.addEventListener("click", async () => {
          const res = await tool("revoke_app_role", { app_id: app.app_id, role: u.role, user_id: u.user_id });
          resultLine(box, res, res.message);
          refresh();
        });
        t.append(el("tr", {}, el("td", {}, u.name), el("td", {}, u.email), el("td", {}, u.role), el("td", {}, revoke)));
      }
      table.replaceChildren(t);
      if (!grantable.length) box.replaceChildren(el("p", { class: "muted" }, `As ${text(perms.your_role) || "a viewer"} of this app you cannot grant roles.`));
    }
    grant.addEventListener("click", async () => {
      const res = await tool("grant_app_role", { app_id: app.app_id, role: role.value, user_id: who.value.trim() });
      resultLine(box, res, res.message);
      if (res.success !== false) who.value = "";
      refresh();
    });
    refresh();
    return section("Access", table, el("div", { class: "inline" }, el("label", {}, "User (e-mail or id)", who, people), el("label", {}, "Role", role), grant), box);
  }

  $("#apps-refresh", root).addEventListener("click", () => loadApps());
  $("#apps-more", root).addEventListener("click", () => loadApps(true));
  // Every visit reloads the list; an app another view asked for (New app's "Show in Apps")
  // opens.
  return () => {
    loadApps();
    if (shared && shared.openApp) {
      openApp(shared.openApp);
      shared.openApp = null;
    }
  };
}
