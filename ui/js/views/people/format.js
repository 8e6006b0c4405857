// How the People view and the token list word the platform's answers: times, expiries, the
// audit's actions, the removal warning. Pure functions (tests/people-format.test.js); every
// rule (who may do what, the limits) stays on the platform, which answers with field errors.

/** The account roles the role select offers; the platform decides which are allowed. */
export const ACCOUNT_ROLES = ["member", "admin"];

/** The view's two tabs. */
export const PEOPLE_TABS = [
  { id: "people", label: "People and invites" },
  { id: "notifications", label: "Notifications" },
  { id: "audit", label: "Audit" },
];

/** An RFC 3339 time as `2026-11-22 10:04 UTC`; a dash for none; the text as is when it is not a time. */
export function shortTime(ts) {
  if (ts === null || ts === undefined || ts === "") return "—";
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return String(ts);
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** How far `ts` is from `now`, to the nearest day: "in 7 days", "in 1 day", "in less than a day", "expired". */
export function fromNow(ts, now = Date.now()) {
  const t = new Date(ts).getTime();
  if (Number.isNaN(t)) return "";
  const left = t - now;
  if (left <= 0) return "expired";
  const days = Math.round(left / DAY_MS);
  if (days === 0) return "in less than a day";
  return `in ${days} day${days === 1 ? "" : "s"}`;
}

/** An expiry with its distance: "2026-11-29 10:04 UTC (in 7 days)". */
export function expiry(ts, now = Date.now()) {
  if (ts === null || ts === undefined) return "never";
  const left = fromNow(ts, now);
  return left ? `${shortTime(ts)} (${left})` : shortTime(ts);
}

/** What an invite's answer says about its code. */
export function inviteLine(invite, now = Date.now()) {
  return `Invited ${invite.email} as ${invite.role}. The code is shown only now: it works once, until ${expiry(invite.expires_at, now)}.`;
}

/** A person as a line names them: "Dana <dana@example.org>" (the e-mail alone when the name is it). */
export function personName(p) {
  if (!p) return "";
  if (!p.name || p.name === p.email) return p.email;
  return `${p.name} <${p.email}>`;
}

/** The removal warning: what happens to the person's tokens, app roles and apps. */
export function removeWarning(person, me) {
  const you = me && me.email ? `you (${me.email})` : "you";
  return `Their tokens stop working at once, their roles on apps go, and every app only they own passes to ${you}.`;
}

/** What a removal did: who, and which apps passed to the admin. */
export function removedLine(answer) {
  const who = personName(answer.removed);
  const apps = (answer.transferred_apps || []).map((a) => a.name || a.app_id);
  return apps.length ? `Removed ${who}. Apps passed to you: ${apps.join(", ")}.` : `Removed ${who}. No app passed to you.`;
}

const ACTIONS = {
  "invite.created": "invited",
  "invite.accepted": "accepted an invite",
  "invite.revoked": "revoked an invite",
  "person.role_changed": "changed the role of",
  "person.removed": "removed",
  "app.ownership_transferred": "took over an app of",
  "token.created": "made the token",
  "token.revoked": "revoked the token",
  "sso.signed_in": "signed in with SSO",
  "sso.refused": "was refused SSO",
};

/** An audit action in words; an action this window does not know is shown as it is. */
export function actionText(action) {
  return ACTIONS[action] || action;
}

/** Who did it: the actor's e-mail; a dash when there was none yet (an invite accepted, an SSO refusal). */
export function actorText(actor) {
  return actor && actor.email ? actor.email : "—";
}

/** The audit entries so far with the next page after them (an entry already shown is not repeated). */
export function appendPage(entries, page) {
  const seen = new Set(entries.map((e) => e.id));
  return [...entries, ...(page || []).filter((e) => !seen.has(e.id))];
}

/** The messages to show beside `field` when `res` is a refusal naming it. */
export function fieldErrors(res, field) {
  return res && !res.ok && res.field === field ? [res.error] : [];
}

/** A refusal that names none of `fields` (shown under the form), or null. */
export function otherError(res, fields) {
  return res && !res.ok && !fields.includes(res.field) ? res.error : null;
}

/** A days field as typed, or null when left empty (the platform's default). The Rust side reads the number and names the field when it is not one. */
export function days(text) {
  const t = String(text ?? "").trim();
  return t ? t : null;
}

/** How a token's expiry reads: tokens made before tokens had lifetimes never expire. */
export function tokenExpiry(token, now = Date.now()) {
  return token.expires_at ? expiry(token.expires_at, now) : "never (made before tokens had lifetimes)";
}

/** The warning before a token is revoked; the token this window uses signs the window out. */
export function revokeWarning(token, environment) {
  const refused = `Programs using ${token.name} are refused from their next request.`;
  if (!token.current) return refused;
  const where = environment ? `signed out of ${environment}` : "unable to reach this computer's platform with it";
  return `${refused} This window uses this token: once it is revoked, the window is ${where}.`;
}

/** What a token or an assistant's grant may do, in words (`scope`: {read_only, apps, secrets}). */
export function scopeWords(scope) {
  if (!scope) return "everything you may";
  const access = scope.read_only ? "reads only" : "reads and changes";
  const apps = scope.apps ? `${scope.apps.length} app${scope.apps.length === 1 ? "" : "s"}` : "all your apps";
  return `${access}, ${apps}, ${scope.secrets ? "with" : "no"} secret values`;
}
