// One line saying how something went: an answer (ok) or the error the Rust side gave.
import { html } from "../../vendor/preact-htm.js";

/** `res` is an api.js result; `okText` is what to say when it succeeded. Nothing when null. */
export function Outcome({ res, okText, id }) {
  if (!res) return null;
  if (!res.ok) return html`<p class="error" role="alert" id=${id}>${res.error}</p>`;
  return html`<p class="ok" role="status" id=${id}>${okText}</p>`;
}

/** A muted line (loading, empty). */
export function Muted({ children, id, extra = "" }) {
  return html`<p class=${`muted ${extra}`.trim()} id=${id}>${children}</p>`;
}

/** A link opened in the system browser (Rust checks the scheme), never in the window. */
export function ExternalLink({ api, url }) {
  const open = (ev) => {
    ev.preventDefault();
    api.openUrl(url);
  };
  return html`<a href=${url} class="url" onClick=${open}>${url}</a>`;
}
