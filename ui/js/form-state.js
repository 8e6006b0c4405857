// Form state shaped like the request JSON, addressed by the same paths the Rust validator
// reports (`patient.addresses[0].city`). Pure functions, unit-tested with `node --test`.

/** Splits `a.b[0].c` into ["a", "b", 0, "c"]. */
export function parsePath(path) {
  const parts = [];
  for (const m of String(path).matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    parts.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  }
  return parts;
}

/** Joins parts back into a path. */
export function joinPath(parts) {
  let out = "";
  for (const p of parts) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out ? `.${p}` : p;
  }
  return out;
}

/** The value at `path`, or undefined. */
export function getPath(obj, path) {
  let cur = obj;
  for (const p of parsePath(path)) {
    if (cur === null || cur === undefined) return undefined;
    cur = cur[p];
  }
  return cur;
}

/** A copy of `obj` with `value` at `path` (objects and arrays created as needed). */
export function setPath(obj, path, value) {
  const parts = parsePath(path);
  const set = (cur, i) => {
    if (i === parts.length) return value;
    const key = parts[i];
    const base = cur !== null && cur !== undefined ? cur : typeof key === "number" ? [] : {};
    const copy = Array.isArray(base) ? base.slice() : { ...base };
    copy[key] = set(base[key], i + 1);
    return copy;
  };
  return set(obj, 0);
}

/** A copy of `obj` without the key or array element at `path`. */
export function removePath(obj, path) {
  const parts = parsePath(path);
  const last = parts.pop();
  const parent = getPath(obj, joinPath(parts));
  if (parent === null || parent === undefined) return obj;
  let next;
  if (Array.isArray(parent)) next = parent.filter((_, i) => i !== last);
  else {
    next = { ...parent };
    delete next[last];
  }
  return parts.length ? setPath(obj, joinPath(parts), next) : next;
}

/** Appends `item` to the array at `path` (created if absent). */
export function appendAt(obj, path, item) {
  const cur = getPath(obj, path);
  return setPath(obj, path, [...(Array.isArray(cur) ? cur : []), item]);
}

/** Errors for one field path: its own messages. */
export function errorsFor(fieldErrors, path) {
  return (fieldErrors && fieldErrors[path]) || [];
}

/**
 * The errors not shown on any field the form renders (`rendered` is a set of paths), so a
 * summary can list them; each keeps its path.
 */
export function unplacedErrors(fieldErrors, rendered) {
  const out = [];
  for (const [path, messages] of Object.entries(fieldErrors || {})) {
    if (!rendered.has(path)) for (const m of messages) out.push({ path, message: m });
  }
  return out;
}

/** Turns an input's text into the JSON value of a field of `kind` ("integer", "boolean", text). */
export function inputValue(kind, raw) {
  if (kind === "boolean") return Boolean(raw);
  if (kind === "integer") return /^-?\d+$/.test(String(raw).trim()) ? Number(raw) : raw;
  return raw;
}

/**
 * The errors of an answer that still apply: those of paths whose value is what was sent
 * (`submitted`); a field changed since no longer shows an error about its old value, and one
 * changed back shows it again. The document-level errors (path "") always apply.
 */
export function currentErrors(fieldErrors, submitted, current) {
  const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const out = {};
  for (const [path, messages] of Object.entries(fieldErrors || {})) {
    if (path === "" || same(getPath(submitted, path), getPath(current, path))) out[path] = messages;
  }
  return out;
}
