// The account's audit: who invited, accepted, changed, removed, made or revoked what, newest
// first, a page at a time ("More" asks for the next one).
import { html, useEffect, useState } from "../../../vendor/preact-htm.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { actionText, actorText, appendPage, shortTime } from "./format.js";

/** `round` reloads from the first page (something changed). */
export function Audit({ api, round }) {
  const alive = useAlive();
  const [entries, setEntries] = useState(null);
  const [next, setNext] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  async function load(pageToken) {
    setBusy(true);
    const r = await api.peopleAudit(pageToken);
    if (!alive.current) return;
    setBusy(false);
    if (!r.ok) return setError(r.error);
    setError(null);
    setEntries((before) => (pageToken ? appendPage(before || [], r.value.entries) : r.value.entries || []));
    setNext(r.value.next_page_token || null);
  }
  useEffect(() => {
    load(null);
  }, [round]);

  let body;
  if (error) body = html`<p class="error" role="alert">${error}</p>`;
  else if (!entries) body = html`<${Muted}>Loading the audit…<//>`;
  else if (!entries.length) body = html`<${Muted} extra="empty">Nothing happened yet.<//>`;
  else
    body = html`<table id="audit-table">
      <thead><tr><th>when</th><th>who</th><th>what</th><th>about</th><th>detail</th></tr></thead>
      <tbody>${entries.map((e) => html`<tr key=${e.id} data-action=${e.action}>
        <td>${shortTime(e.at)}</td><td class="mono">${actorText(e.actor)}</td><td title=${e.action}>${actionText(e.action)}</td>
        <td class="mono">${e.subject || "—"}</td><td>${e.detail || ""}</td>
      </tr>`)}</tbody>
    </table>`;

  return html`
    <div class="row section-head"><h3>Audit</h3><button type="button" class="small" id="audit-refresh" onClick=${() => load(null)}>Refresh</button></div>
    ${body}
    ${next && !error ? html`<button type="button" class="small" id="audit-more" disabled=${busy} onClick=${() => load(next)}>${busy ? "Loading…" : "More"}</button>` : null}`;
}
