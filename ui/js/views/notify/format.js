// Pure helpers of the notification screens (docs/notifications.md): the request a channel form
// makes, and how a delivery reads. The platform checks every field and names the one at fault.

export const CHANNEL_KINDS = ["webhook", "slack", "email"];

/** The fields each kind's form shows. */
export const KIND_FIELDS = {
  webhook: ["url", "secret"],
  slack: ["url"],
  email: ["host", "port", "from", "to", "username", "password", "ca_certificate"],
};

/** Every field a channel request may name (a refusal naming another is shown under the form). */
export const CHANNEL_FIELDS = ["name", "kind", ...new Set(Object.values(KIND_FIELDS).flat())];

/**
 * The request body of a channel form: only the kind's fields, empty ones left out (the
 * platform's defaults then apply: a made webhook secret, port 587), the port as a number when
 * it is one and the recipients split on commas and spaces.
 */
export function channelSettings(form) {
  const body = { name: (form.name || "").trim(), kind: form.kind };
  for (const field of KIND_FIELDS[form.kind] || []) {
    const raw = form[field];
    if (raw === undefined || raw === null || String(raw).trim() === "") continue;
    if (field === "to") body.to = String(raw).split(/[\s,]+/).filter(Boolean);
    else if (field === "port") body.port = /^\d+$/.test(String(raw).trim()) ? Number(String(raw).trim()) : String(raw);
    else if (field === "password" || field === "ca_certificate" || field === "secret") body[field] = String(raw);
    else body[field] = String(raw).trim();
  }
  return body;
}

/** A delivery in a few words: its status, tries, and the last error or when it is tried next. */
export function deliveryLine(d) {
  const tries = d.attempts.length;
  const last = tries ? d.attempts[tries - 1] : null;
  if (d.status === "delivered") return `delivered${tries > 1 ? ` after ${tries} tries` : ""}`;
  if (d.status === "failed") return `failed after ${tries} ${tries === 1 ? "try" : "tries"}: ${last && last.error ? last.error : "no reason"}`;
  if (!tries) return "waiting to be sent";
  return `retrying (${tries} ${tries === 1 ? "try" : "tries"}; next ${d.next_attempt_at || "soon"}): ${last && last.error ? last.error : ""}`;
}

/** The event names of a subscription, or "every event" when it holds all that fit. */
export function eventsLine(events, all) {
  if (all && all.length && all.every((e) => events.includes(e))) return "every event";
  return events.join(", ");
}
