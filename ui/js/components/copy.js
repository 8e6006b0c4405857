// A value shown once (an invite's code, its link, a new token) with a Copy button. The
// clipboard can be missing or refuse a write; then the text is selected and the line says to
// press Ctrl+C, so a copy never fails silently.
import { html, useRef, useState } from "../../vendor/preact-htm.js";

/**
 * Copies `text` with `clipboard.writeText`; when there is no clipboard or it refuses, calls
 * `select()` (which selects the text on screen). Resolves to "copied" or "selected".
 */
export async function copyText(text, clipboard, select) {
  if (clipboard && typeof clipboard.writeText === "function") {
    try {
      await clipboard.writeText(text);
      return "copied";
    } catch {
      // Refused (no permission, no user gesture): fall back to the selection.
    }
  }
  select();
  return "selected";
}

/** What the line under the value says after a copy. */
export function copiedLine(how) {
  if (how === "copied") return "Copied to the clipboard.";
  if (how === "selected") return "The text is selected: press Ctrl+C to copy it.";
  return "";
}

/** `id` names the read-only input holding the value (its Copy button is `${id}-copy`). */
export function CopyText({ id, label, text }) {
  const input = useRef(null);
  const [how, setHow] = useState(null);
  const select = () => {
    if (!input.current) return;
    input.current.focus();
    input.current.select();
  };
  async function copy() {
    const nav = globalThis.navigator;
    setHow(await copyText(text, nav && nav.clipboard, select));
  }
  return html`<div class="field copy" data-path=${id}>
    <label for=${id}>${label}</label>
    <div class="copy-row">
      <input id=${id} class="mono" readonly value=${text} ref=${input} onFocus=${(e) => e.currentTarget.select()} />
      <button type="button" class="small" id=${`${id}-copy`} onClick=${copy}>Copy</button>
    </div>
    <small id=${`${id}-copied`} role="status">${copiedLine(how)}</small>
  </div>`;
}
