// The account's people: name, e-mail, account role (a select; a refusal shows beside it),
// when they joined and were last active, and Remove (confirmed first, saying what it does).
import { html, useEffect, useRef, useState } from "../../../vendor/preact-htm.js";
import { FieldErrors } from "../../components/field.js";
import { useAlive } from "../../components/hooks.js";
import { Muted } from "../../components/notice.js";
import { ACCOUNT_ROLES, personName, removedLine, removeWarning, shortTime } from "./format.js";

/** `round` reloads the list; `onChanged` tells the view something changed (the audit reloads). */
export function PeopleList({ api, me, round, onChanged }) {
  const alive = useAlive();
  const [res, setRes] = useState(null);
  // The last role change per person id: a refusal is shown in that row.
  const [roleRes, setRoleRes] = useState({});
  const [asked, setAsked] = useState(null);
  const [removed, setRemoved] = useState(null);

  // Loads overlap (a change reloads, and so does the round it bumps) and their answers may
  // come back in any order: only the answer to the latest one is shown.
  const latest = useRef(0);
  async function load() {
    const mine = ++latest.current;
    const r = await api.peopleList();
    if (alive.current && mine === latest.current) setRes(r);
  }
  useEffect(() => {
    load();
  }, [round]);

  async function changeRole(p, role) {
    if (role === p.role) return;
    const r = await api.peopleSetRole(p.id, role);
    if (!alive.current) return;
    setRoleRes({ ...roleRes, [p.id]: r });
    // A refusal puts the select back on the role the platform holds.
    await load();
    if (r.ok) onChanged();
  }

  let body;
  if (!res) body = html`<${Muted}>Loading people…<//>`;
  else if (!res.ok) body = html`<p class="error" role="alert">${res.error}</p>`;
  else
    body = html`<table id="people-table">
      <thead><tr><th>name</th><th>e-mail</th><th>role</th><th>joined</th><th>last active</th><th></th></tr></thead>
      <tbody>${(res.value.users || []).map((p) => {
        const you = me && me.id === p.id;
        const errId = `role-${p.id}-err`;
        // Any refusal of a role change (a bad role, the last admin) belongs beside its select.
        const changed = roleRes[p.id];
        const errors = changed && !changed.ok ? [changed.error] : [];
        return html`<tr key=${p.id} data-person=${p.email}>
          <td>${p.name}${you ? html` <span class="badge">you</span>` : null}</td>
          <td class="mono">${p.email}</td>
          <td><div class=${"field" + (errors.length ? " invalid" : "")} data-path=${`role-${p.email}`}>
            <select aria-label=${`Account role of ${p.email}`} name="person_role" value=${p.role} aria-invalid=${errors.length ? "true" : "false"}
              aria-describedby=${errors.length ? errId : undefined} onChange=${(e) => changeRole(p, e.currentTarget.value)}>
              ${ACCOUNT_ROLES.map((r) => html`<option value=${r}>${r}</option>`)}
            </select>
            <${FieldErrors} id=${errId} messages=${errors} />
          </div></td>
          <td>${shortTime(p.joined_at)}</td>
          <td>${p.last_active_at ? shortTime(p.last_active_at) : html`<span class="muted">not yet</span>`}</td>
          <td>${you
            ? html`<span class="muted" title="Another admin can remove you; your apps would otherwise pass to nobody.">—</span>`
            : html`<button type="button" class="small danger" data-remove=${p.email} onClick=${() => (setRemoved(null), setAsked({ person: p, key: Date.now() }))}>Remove…</button>`}</td>
        </tr>`;
      })}</tbody>
    </table>`;

  return html`
    <div class="row section-head"><h3>People</h3><button type="button" class="small" id="people-refresh" onClick=${load}>Refresh</button></div>
    ${body}
    <div class="result" aria-live="polite">
      ${asked ? html`<${ConfirmRemove} key=${asked.key} api=${api} me=${me} person=${asked.person} onCancel=${() => setAsked(null)}
        onRemoved=${(answer) => {
          setAsked(null);
          setRemoved(answer);
          load();
          onChanged();
        }} />` : null}
      ${removed ? html`<p class="ok" role="status" id="remove-result">${removedLine(removed)}</p>` : null}
    </div>`;
}

/** The removal, once confirmed: names the person and says what it does. */
function ConfirmRemove({ api, me, person, onCancel, onRemoved }) {
  const alive = useAlive();
  const keep = useRef(null);
  const [busy, setBusy] = useState(false);
  const [res, setRes] = useState(null);
  // The safe choice has the focus when the question appears.
  useEffect(() => keep.current && keep.current.focus(), []);

  async function remove() {
    setBusy(true);
    const r = await api.peopleRemove(person.id);
    if (!alive.current) return;
    if (r.ok) return onRemoved(r.value);
    setBusy(false);
    setRes(r);
  }
  const who = personName(person);
  return html`<div class="confirm" role="alertdialog" id="confirm-remove-dialog" aria-labelledby="confirm-remove-title" aria-describedby="confirm-remove-text">
    <p id="confirm-remove-title"><strong>Remove ${who} from the account?</strong></p>
    <p id="confirm-remove-text">${removeWarning(person, me)}</p>
    <div class="row">
      <button type="button" class="small danger" id="confirm-remove" disabled=${busy} onClick=${remove}>Remove ${person.name || person.email}</button>
      <button type="button" class="small" ref=${keep} onClick=${onCancel}>Keep ${person.name || person.email}</button>
    </div>
    ${res && !res.ok ? html`<p class="error" role="alert">${res.error}</p>` : null}
  </div>`;
}
