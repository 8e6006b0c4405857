// Notification channels (admins, on the People screen): the account's channels with "Send a
// test" (it says whether the message arrived and why not) and Remove; a form that adds a
// signed webhook, a Slack-compatible webhook or an e-mail channel (a made signing secret is
// shown once); whole-account subscriptions; and the newest deliveries with their tries.
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { CopyText } from "../../components/copy.js";
import { Input } from "../../components/field.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { fieldErrors, otherError, shortTime } from "../people/format.js";
import { CHANNEL_FIELDS, CHANNEL_KINDS, KIND_FIELDS, channelSettings, deliveryLine, eventsLine } from "./format.js";

const LABELS = {
  url: "URL",
  secret: "Signing secret (empty: one is made)",
  host: "Mail server",
  port: "Port (587)",
  from: "From",
  to: "To (addresses, comma-separated)",
  username: "User name",
  password: "Password",
  ca_certificate: "CA certificate (PEM, optional)",
};
const EMPTY = { name: "", kind: "webhook" };

export function Channels({ api, round, onChanged }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  const [subs, setSubs] = useState(null);
  const [events, setEvents] = useState([]);
  const [tested, setTested] = useState(null);
  const [done, setDone] = useState(null);

  async function load() {
    const [c, s, e] = await Promise.all([api.notifyChannels(), api.notifySubscriptions(), api.notifyEvents()]);
    if (!alive.current) return;
    setRes(c);
    setSubs(s);
    if (e.ok) setEvents(e.value.events.map((x) => x.name));
  }
  useEffect(() => {
    load();
  }, [round]);

  async function test(c) {
    setTested({ name: c.name, res: null });
    const r = await api.notifyTestChannel(c.id);
    if (!alive.current) return;
    setTested({ name: c.name, res: r });
    load();
  }
  async function act(what, call) {
    const r = await call();
    if (!alive.current) return;
    setDone(r.ok ? { ok: true, text: what } : r);
    if (r.ok) onChanged();
  }

  let body;
  if (!res) body = html`<${Muted}>Loading channels…<//>`;
  else if (!res.ok) body = html`<p class="error" role="alert">${res.error}</p>`;
  else if (!res.value.channels.length) body = html`<${Muted} extra="empty" id="channels-empty">No channels yet: add one below, then subscribe it to an app's events (on the app's Notifications tab) or to every app's here.<//>`;
  else {
    const wholeAccount = (subs && subs.ok ? subs.value.subscriptions : []).filter((s) => !s.app_id);
    body = html`<table id="channels-table">
      <thead><tr><th>channel</th><th>kind</th><th>target</th><th>last delivery</th><th>whole account</th><th></th></tr></thead>
      <tbody>${res.value.channels.map((c) => {
        const sub = wholeAccount.find((s) => s.channel_id === c.id);
        return html`<tr key=${c.id} data-channel=${c.name}>
          <td class="mono">${c.name}</td><td>${c.kind}</td><td class="mono">${c.target}</td>
          <td>${c.last_delivery_failed === null ? "—" : c.last_delivery_failed ? html`<span class="error">failed</span>` : "delivered"}</td>
          <td>${sub ? eventsLine(sub.events, events) : "—"}</td>
          <td><div class="row">
            <button type="button" class="small" data-action="test" aria-label=${`Send a test over ${c.name}`} onClick=${() => test(c)}>Send a test</button>
            ${sub
              ? html`<button type="button" class="small" data-action="unsubscribe" aria-label=${`Stop telling ${c.name} about every app`} onClick=${() => act(`${c.name} no longer hears every app.`, () => api.notifyUnsubscribe(sub.id))}>Stop whole account</button>`
              : html`<button type="button" class="small" data-action="subscribe" aria-label=${`Tell ${c.name} about every app`} onClick=${() => act(`${c.name} now hears every event of every app.`, () => api.notifySubscribe(c.id, null, ["all"]))}>Every app</button>`}
            <button type="button" class="small danger" data-action="remove" aria-label=${`Remove ${c.name}`} onClick=${() => act(`Removed ${c.name}.`, () => api.notifyRemoveChannel(c.id))}>Remove</button>
          </div></td>
        </tr>`;
      })}</tbody>
    </table>`;
  }
  const testLine = tested && tested.res
    ? tested.res.ok
      ? tested.res.value.delivered
        ? html`<p class="ok" role="status" id="channel-test-result">Delivered: the test message reached ${tested.name}.</p>`
        : html`<p class="error" role="alert" id="channel-test-result">Not delivered over ${tested.name}: ${tested.res.value.error}</p>`
      : html`<p class="error" role="alert" id="channel-test-result">${tested.res.error}</p>`
    : tested ? html`<${Muted}>Sending a test over ${tested.name}…<//>` : null;
  return html`
    <div class="row section-head"><h3>Notification channels</h3></div>
    ${body}
    <div class="result" aria-live="polite">${testLine}
      ${done ? html`<p class=${done.ok ? "ok" : "error"} role=${done.ok ? "status" : "alert"} id="channel-action-result">${done.ok ? done.text : done.error}</p>` : null}</div>
    <${ChannelForm} api=${api} onAdded=${onChanged} />
    <${Deliveries} api=${api} appId=${null} round=${round} />`;
}

function ChannelForm({ api, onAdded }) {
  const alive = useAlive();
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  const set = (k) => (v) => setForm({ ...form, [k]: v });

  async function add(ev) {
    ev.preventDefault();
    setBusy(true);
    const r = await api.notifyAddChannel(channelSettings(form));
    if (!alive.current) return;
    setBusy(false);
    setRes(r);
    if (r.ok) {
      setForm({ ...EMPTY, kind: form.kind });
      onAdded();
    }
  }
  const made = res && res.ok ? res.value : null;
  return html`<form id="channel-form" class="box" novalidate onSubmit=${add}>
    <h3>Add a channel</h3>
    <p class="muted">A webhook gets each event as signed JSON; a Slack-compatible webhook gets a message; e-mail goes over SMTP with STARTTLS. No message holds a secret, a log line or an app's data.</p>
    <div class="inline">
      <${Input} label="Name" name="channel_name" value=${form.name} onValue=${set("name")} errors=${fieldErrors(res, "name")} placeholder="ops" />
      <${Input} label="Kind" name="channel_kind" type="select" options=${CHANNEL_KINDS} value=${form.kind} onValue=${set("kind")} errors=${fieldErrors(res, "kind")} />
    </div>
    <div class="grid">
      ${(KIND_FIELDS[form.kind] || []).map((f) => html`<${Input} key=${f} label=${LABELS[f]} name=${`channel_${f}`}
        type=${f === "password" ? "password" : f === "ca_certificate" ? "textarea" : "text"}
        value=${form[f] || ""} onValue=${set(f)} errors=${fieldErrors(res, f)} />`)}
    </div>
    <button type="submit" class="small" id="channel-add" disabled=${busy}>${busy ? "Adding…" : "Add channel"}</button>
    <div id="channel-result" class="result" aria-live="polite">
      ${otherError(res, CHANNEL_FIELDS) ? html`<p class="error" role="alert">${otherError(res, CHANNEL_FIELDS)}</p>` : null}
      ${made ? html`<p class="ok" role="status">Added ${made.channel.name} (${made.channel.kind}) to ${made.channel.target}. Send a test to check it.</p>
        ${made.signing_secret ? html`<p class="muted">The signing secret is shown only now: the receiver checks the Slipway-Signature header with it.</p>
          <${CopyText} id="channel-secret" label="Signing secret" text=${made.signing_secret} />` : null}` : null}
    </div>
  </form>`;
}

/** The newest deliveries (of one app, or all for an admin), each with its tries. */
export function Deliveries({ api, appId, round }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  async function load() {
    const r = await api.notifyDeliveries(appId);
    if (alive.current) setRes(r);
  }
  useEffect(() => {
    load();
  }, [round]);
  let body;
  if (!res) body = html`<${Muted}>Loading deliveries…<//>`;
  else if (!res.ok) body = html`<p class="error" role="alert">${res.error}</p>`;
  else if (!res.value.deliveries.length) body = html`<${Muted} extra="empty" id="deliveries-empty">Nothing sent yet.<//>`;
  else
    body = html`<table id="deliveries-table">
      <thead><tr><th>when</th><th>event</th><th>app</th><th>channel</th><th>outcome</th></tr></thead>
      <tbody>${res.value.deliveries.map((d) => html`<tr key=${d.id} data-delivery=${d.id} data-status=${d.status}>
        <td>${shortTime(d.event.occurred_at)}</td><td class="mono">${d.event.type}</td>
        <td>${d.event.app ? d.event.app.name : "—"}</td><td class="mono">${d.channel_name}</td>
        <td class=${d.status === "failed" ? "error" : ""}>${deliveryLine(d)}</td>
      </tr>`)}</tbody>
    </table>`;
  return html`<div class="row section-head"><h3>Recent deliveries</h3>
      <button type="button" class="small" id="deliveries-refresh" onClick=${load}>Refresh</button></div>
    ${body}`;
}
