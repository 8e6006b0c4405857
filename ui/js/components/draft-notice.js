// The notice above a care form whose draft was restored (with a button to discard it), could
// not be restored, or is kept until its key can be read; and, where no keyring service runs,
// where the drafts' key is kept (or that what is typed is not being saved). `note` is drafts.js's loadNotice(); `keyNotice` the latest one Rust gave.
import { html } from "../../vendor/preact-htm.js";

export function DraftNotice({ note, keyNotice, onDiscard }) {
  const key = keyNotice || (note && note.keyNotice);
  if (!note && !key) return null;
  return html`<div id="draft-notice" class=${`screen draft-notice${note && (note.kind === "lost" || note.kind === "kept") ? " warn" : ""}`} role="status" data-kind=${note ? note.kind : "key"}>
    ${note
      ? html`<div class="row"><span id="draft-note">${note.text}</span>
          ${note.kind === "restored" ? html`<button type="button" class="small" id="draft-discard" onClick=${onDiscard}>Discard</button>` : null}</div>`
      : null}
    ${key ? html`<p class="muted" id="draft-key-notice">${key}</p>` : null}
  </div>`;
}
