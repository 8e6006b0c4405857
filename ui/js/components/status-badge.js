// A status as a badge: the word the platform answered, coloured by what it means. The word is
// always shown (never colour alone).
import { html } from "../../vendor/preact-htm.js";

const TONES = {
  RUNNING: "good",
  succeeded: "good",
  FAILED: "bad",
  failed: "bad",
  deploying: "busy",
  queued: "busy",
  in_progress: "busy",
};

/** The tone of a status of an app, a build or a deployment: good, bad, busy or plain. */
export function statusTone(status) {
  return TONES[status] || "plain";
}

export function StatusBadge({ status }) {
  const word = status === null || status === undefined || status === "" ? "unknown" : String(status);
  return html`<span class=${`badge ${statusTone(status)}`} data-status=${word}>${word}</span>`;
}
