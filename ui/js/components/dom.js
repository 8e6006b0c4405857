// A tiny DOM builder for the views written without Preact (the secrets view, the header).

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

export function text(v) {
  return v === null || v === undefined ? "" : String(v);
}
