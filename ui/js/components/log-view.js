// A log (or any long preformatted text) that scrolls inside itself, never widening the page,
// and reachable by keyboard to scroll. `follow` keeps the newest line in view as it grows.
import { html, useEffect, useRef } from "../../vendor/preact-htm.js";

export function LogView({ text, id, label, follow = false, extra = "" }) {
  const pre = useRef(null);
  useEffect(() => {
    if (follow && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text, follow]);
  return html`<pre ref=${pre} id=${id} class=${`mono log ${extra}`.trim()} tabindex="0" aria-label=${label}>${text}</pre>`;
}
