// People (admins): the account's people with their roles, invites with a code shown once,
// the notification channels, and the audit. The nav shows this view only to admins (`me` says the role); a member who
// opens it anyway is told it is for admins. The platform decides every rule and refuses
// with the field at fault.
import { html, render, useEffect, useState } from "../../vendor/preact-htm.js";
import { useAlive } from "../components/hooks.js";
import { Muted } from "../components/notice.js";
import { TabPanel, Tabs } from "../components/tabs.js";
import { Channels } from "./notify/channels.js";
import { Audit } from "./people/audit.js";
import { PEOPLE_TABS, personName } from "./people/format.js";
import { InviteForm, PendingInvites } from "./people/invites.js";
import { PeopleList } from "./people/list.js";

const TABS_ID = "people-tabs";

function People({ api, visit }) {
  const alive = useAlive();
  const [me, setMe] = useState(null);
  const [tab, setTab] = useState("people");
  const [visited, setVisited] = useState(() => new Set(["people"]));
  // Bumped after every change and every visit: the lists and the audit reload.
  const [round, setRound] = useState(0);
  const changed = () => setRound((r) => r + 1);

  useEffect(() => {
    api.me().then((r) => alive.current && setMe(r));
    changed();
  }, [visit]);
  const select = (t) => {
    setTab(t);
    setVisited((v) => (v.has(t) ? v : new Set([...v, t])));
  };

  if (!me) return html`<h2>People</h2><${Muted}>Loading…<//>`;
  if (!me.ok) return html`<h2>People</h2><p class="error" role="alert">${me.error}</p>`;
  if (me.value.role !== "admin")
    return html`<h2>People</h2>
      <div class="screen warn" id="people-only-admins" role="status">
        <h3>Only admins manage people</h3>
        <p>You are signed in as ${personName(me.value)}, a ${me.value.role || "member"} of this platform's account. An admin invites people, changes their roles and reads the audit; ask one of them.</p>
        <p class="muted">Your own tokens are on the Environments screen.</p>
      </div>`;

  const page = (id, content) => html`<${TabPanel} tabs=${TABS_ID} tab=${id} selected=${tab}>${visited.has(id) ? content() : null}<//>`;
  return html`
    <h2>People</h2>
    <p class="muted">Who works on this platform (signed in as ${personName(me.value)}, admin). Account roles are separate from the roles people hold on each app.</p>
    <${Tabs} id=${TABS_ID} label="People" tabs=${PEOPLE_TABS} selected=${tab} onSelect=${select} />
    ${page("people", () => html`
      <${PeopleList} api=${api} me=${me.value} round=${round} onChanged=${changed} />
      <${InviteForm} api=${api} onInvited=${changed} />
      <${PendingInvites} api=${api} round=${round} onChanged=${changed} />`)}
    ${page("notifications", () => html`<${Channels} api=${api} round=${round} onChanged=${changed} />`)}
    ${page("audit", () => html`<${Audit} api=${api} round=${round} />`)}`;
}

export function mount(root, { api }) {
  let visit = 0;
  return () => render(html`<${People} api=${api} visit=${++visit} />`, root);
}
