// Who is told about this app's events (docs/notifications.md): its subscriptions, with a form
// for its owners that subscribes one of the account's channels to chosen events (the platform
// refuses anyone else, naming the role), and its newest deliveries with their tries. Admins
// add the channels on the People screen.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { Deliveries } from "../notify/channels.js";
import { eventsLine } from "../notify/format.js";

export function NotificationsPage({ api, app }) {
  const alive = useAlive();
  const [state, setState] = useState(null);
  const [picked, setPicked] = useState({ channel: "", events: null });
  const [res, setRes] = useState(null);
  const [round, setRound] = useState(0);

  async function load() {
    const [channels, subs, events] = await Promise.all([api.notifyChannels(), api.notifySubscriptions(), api.notifyEvents()]);
    if (alive.current) setState({ channels, subs, events });
  }
  useEffect(() => {
    load();
  }, [round]);

  if (!state) return html`<h3>Alerts</h3><${Muted}>Asking the platform who hears this app…<//>`;
  const failed = [state.channels, state.subs, state.events].find((r) => !r.ok);
  if (failed) return html`<h3>Alerts</h3><p class="error" role="alert">${failed.error}</p>`;
  const appEvents = state.events.value.events.filter((e) => e.about_an_app);
  const names = appEvents.map((e) => e.name);
  const chosen = picked.events || names;
  const mine = state.subs.value.subscriptions.filter((s) => !s.app_id || s.app_id === app.app_id);
  const channels = state.channels.value.channels;

  async function subscribe(ev) {
    ev.preventDefault();
    const r = await api.notifySubscribe(picked.channel, app.app_id, chosen.length === names.length ? ["all"] : chosen);
    if (!alive.current) return;
    setRes(r);
    if (r.ok) setRound((n) => n + 1);
  }
  async function unsubscribe(id) {
    const r = await api.notifyUnsubscribe(id);
    if (!alive.current) return;
    setRes(r.ok ? { ok: true, value: null } : r);
    setRound((n) => n + 1);
  }
  const toggle = (name) => setPicked({ ...picked, events: chosen.includes(name) ? chosen.filter((n) => n !== name) : [...chosen, name] });

  return html`
    <div class="row section-head"><h3>Alerts</h3></div>
    ${mine.length
      ? html`<table id="app-subscriptions">
          <thead><tr><th>channel</th><th>for</th><th>events</th><th></th></tr></thead>
          <tbody>${mine.map((s) => html`<tr key=${s.id} data-subscription=${s.channel_name}>
            <td class="mono">${s.channel_name}</td><td>${s.app_id ? "this app" : "every app (set by an admin)"}</td>
            <td>${eventsLine(s.events, names)}</td>
            <td>${s.app_id ? html`<button type="button" class="small" aria-label=${`Stop telling ${s.channel_name}`} onClick=${() => unsubscribe(s.id)}>Stop</button>` : null}</td>
          </tr>`)}</tbody>
        </table>`
      : html`<${Muted} extra="empty" id="app-subscriptions-empty">Nobody is told about this app's failures yet.<//>`}
    ${channels.length
      ? html`<form id="subscribe-form" class="box" novalidate onSubmit=${subscribe}>
          <h4>Tell a channel (owners)</h4>
          <label for="subscribe-channel">Channel</label>
          <select id="subscribe-channel" value=${picked.channel} onChange=${(e) => setPicked({ ...picked, channel: e.currentTarget.value })}>
            <option value="">—</option>
            ${channels.map((c) => html`<option value=${c.id}>${c.name} (${c.kind})</option>`)}
          </select>
          <fieldset><legend>Events</legend>
            ${appEvents.map((e) => html`<label key=${e.name} class="check"><input type="checkbox" name="event" value=${e.name} checked=${chosen.includes(e.name)} onChange=${() => toggle(e.name)} /> ${e.description} <span class="mono muted">${e.name}</span></label>`)}
          </fieldset>
          <button type="submit" class="small" id="subscribe-button">Subscribe</button>
        </form>`
      : html`<p class="muted" id="no-channels">The account has no notification channels: an admin adds them on the People screen.</p>`}
    <div class="result" aria-live="polite">
      ${res ? html`<p class=${res.ok ? "ok" : "error"} role=${res.ok ? "status" : "alert"} id="subscribe-result">${res.ok ? (res.value ? `${res.value.channel_name} now hears ${eventsLine(res.value.events, names)} of ${app.name || "this app"}.` : "Stopped.") : res.error}</p>` : null}
    </div>
    <${Deliveries} api=${api} appId=${app.app_id} round=${round} />`;
}
