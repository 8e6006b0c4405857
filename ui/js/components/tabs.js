// Tabs as the WAI-ARIA pattern has them: a tablist of tabs (one tab stop, the selected one;
// arrow keys, Home and End move between tabs and select them) and a tabpanel per tab,
// labelled by its tab. Which tab is selected is the caller's state.
import { html, useRef } from "../../vendor/preact-htm.js";

/**
 * The tab a key moves to from `index` among `count` tabs (wrapping at both ends), or null
 * when the key is not one a tablist handles.
 */
export function tabKeyTarget(key, index, count) {
  if (count <= 0) return null;
  switch (key) {
    case "ArrowRight":
      return (index + 1) % count;
    case "ArrowLeft":
      return (index - 1 + count) % count;
    case "Home":
      return 0;
    case "End":
      return count - 1;
    default:
      return null;
  }
}

/** The ids a tab and its panel share: `${id}-${tab}` for the tab, `-panel` after it. */
export const tabId = (id, tab) => `${id}-${tab}`;
export const panelId = (id, tab) => `${id}-${tab}-panel`;

/** `tabs`: `[{id, label}]`; `onSelect(tabId)` on a click or a key. */
export function Tabs({ id, label, tabs, selected, onSelect }) {
  const buttons = useRef([]);
  const onKeyDown = (ev) => {
    const next = tabKeyTarget(ev.key, tabs.findIndex((t) => t.id === selected), tabs.length);
    if (next === null) return;
    ev.preventDefault();
    onSelect(tabs[next].id);
    const button = buttons.current[next];
    if (button) button.focus();
  };
  return html`<div class="tabs" role="tablist" id=${id} aria-label=${label} onKeyDown=${onKeyDown}>
    ${tabs.map((t, i) => {
      const on = t.id === selected;
      return html`<button type="button" role="tab" key=${t.id} id=${tabId(id, t.id)} data-tab=${t.id}
        class=${on ? "active" : ""} aria-selected=${on ? "true" : "false"} aria-controls=${panelId(id, t.id)}
        tabindex=${on ? "0" : "-1"} ref=${(b) => (buttons.current[i] = b)} onClick=${() => onSelect(t.id)}>${t.label}</button>`;
    })}
  </div>`;
}

/** The panel of tab `tab` of tablist `tabs`; hidden (and kept) while another tab is selected. */
export function TabPanel({ tabs, tab, selected, children }) {
  return html`<div role="tabpanel" class="tabpanel" id=${panelId(tabs, tab)} aria-labelledby=${tabId(tabs, tab)}
    tabindex="0" hidden=${tab !== selected}>${children}</div>`;
}
