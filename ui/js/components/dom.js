// A tiny DOM builder for the views written without Preact (the apps view).

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

export const $ = (sel, root = document) => root.querySelector(sel);

export function text(v) {
  return v === null || v === undefined ? "" : String(v);
}

/** A result box: a headline (ok or error) and optional lines. */
export function showResult(box, ok, title, lines = []) {
  box.replaceChildren(el("p", { class: ok ? "ok" : "error", role: ok ? "status" : "alert" }, title));
  if (lines.length) {
    const list = el("ul");
    for (const l of lines) list.append(el("li", {}, l));
    box.append(list);
  }
}
