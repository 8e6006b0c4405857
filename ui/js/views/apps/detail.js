// One app: its name, status and actions above a tab bar of its pages (overview, builds,
// deployments, logs, secrets, resources, jobs, source, domains, alerts, access). A page is built on its first visit and kept
// while the app stays open, so a build, a watch or a half-typed secret survives switching tabs.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { StatusBadge } from "../../components/status-badge.js";
import { TabPanel, Tabs } from "../../components/tabs.js";
import { AccessPage } from "./access.js";
import { BuildsPage } from "./builds.js";
import { DeploymentsPage } from "./deployments.js";
import { DomainsPage } from "./domains.js";
import { SourcePage } from "./source.js";
import { APP_TABS } from "./format.js";
import { Lifecycle } from "./lifecycle.js";
import { LogsPage } from "./logs.js";
import { OverviewPage } from "./overview.js";
import { JobsPage } from "./jobs.js";
import { NotificationsPage } from "./notifications.js";
import { ResourcesPage } from "./resources.js";
import { SecretsPage } from "./secrets.js";

const TABS_ID = "app-tabs";

/**
 * `tab` and `onTab` are the Apps view's (the page stays chosen from one app to the next);
 * `onListChanged` reloads the list, `onStatus` brings its badge up to date, `onDeleted(lines)`
 * closes the app with what its deletion did.
 */
export function AppDetail({ api, appId, tab, onTab, onListChanged, onStatus, onDeleted }) {
  const alive = useAlive();
  const [app, setApp] = useState(null);
  const [status, setStatus] = useState(null);
  const [error, setError] = useState(null);
  const [visited, setVisited] = useState(() => new Set([tab]));
  // The project folder typed on the Builds page: Watch uses it and Delete offers it.
  const [project, setProject] = useState("");
  // Bumped when something ran that changes the builds, deployments or logs: they reload.
  const [round, setRound] = useState(0);

  async function load() {
    const [a, s] = await Promise.all([api.tool("get_app", { app_id: appId }), api.tool("get_app_status", { app_id: appId })]);
    if (!alive.current) return;
    if (!a.ok) return setError(a.error);
    setError(null);
    setApp(a.value);
    setStatus(s.ok ? s.value : null);
    if (s.ok && s.value.status) onStatus(appId, s.value.status);
  }
  useEffect(() => {
    load();
  }, []);
  useEffect(() => {
    setVisited((v) => (v.has(tab) ? v : new Set([...v, tab])));
  }, [tab]);

  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!app) return html`<p class="muted">Loading…</p>`;

  const shown = (status && status.status) || app.status;
  const changed = () => {
    setRound((r) => r + 1);
    load();
  };
  const page = (id, content) => html`<${TabPanel} tabs=${TABS_ID} tab=${id} selected=${tab}>${visited.has(id) ? content() : null}<//>`;
  return html`
    <div class="app-head">
      <div class="row"><h2 id="app-name">${app.display_name || app.name}</h2><span id="app-status"><${StatusBadge} status=${shown} /></span></div>
      <p class="muted mono app-ids">${app.name} · ${app.app_id} · ${app.enabled ? "enabled" : "disabled"}</p>
      <${Lifecycle} api=${api} app=${app} project=${project} onReload=${load} onListChanged=${onListChanged} onDeleted=${onDeleted}
        onSettled=${() => {
          changed();
          onTab("logs");
        }} />
    </div>
    <${Tabs} id=${TABS_ID} label=${`${app.display_name || app.name}: pages`} tabs=${APP_TABS} selected=${tab} onSelect=${onTab} />
    ${page("overview", () => html`<${OverviewPage} api=${api} app=${app} status=${status} shown=${shown} />`)}
    ${page("builds", () => html`<${BuildsPage} api=${api} app=${app} round=${round} project=${project} onProject=${setProject} onBuilt=${changed} />`)}
    ${page("deployments", () => html`<${DeploymentsPage} api=${api} app=${app} round=${round} onRolledBack=${changed} />`)}
    ${page("logs", () => html`<${LogsPage} api=${api} app=${app} round=${round} />`)}
    ${page("secrets", () => html`<${SecretsPage} api=${api} app=${app} />`)}
    ${page("resources", () => html`<${ResourcesPage} api=${api} app=${app} onChanged=${load} />`)}
    ${page("jobs", () => html`<${JobsPage} api=${api} app=${app} />`)}
    ${page("source", () => html`<${SourcePage} api=${api} app=${app} />`)}
    ${page("domains", () => html`<${DomainsPage} api=${api} app=${app} />`)}
    ${page("notifications", () => html`<${NotificationsPage} api=${api} app=${app} />`)}
    ${page("access", () => html`<${AccessPage} api=${api} app=${app} />`)}`;
}
