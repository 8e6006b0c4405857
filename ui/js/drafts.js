// The care forms' drafts as the window handles them (Rust seals and keeps them): saves are
// debounced and run one after another, so a clear is never overtaken by a save that started
// before it; the notice a restored draft shows; which answers end a request's draft. Pure
// apart from the timers and calls handed in; unit-tested with `node --test`.

/** How long typing must pause before the draft is saved. */
export const SAVE_DELAY_MS = 400;

/**
 * A saver for one form's draft. `save(doc)` and `clear()` are the api calls (they resolve,
 * never reject); `onSaved(res)` gets each save's answer. `schedule(doc)` saves `doc` once
 * typing pauses; `flush()` saves a scheduled one now; `clear()` drops a scheduled one and
 * removes the draft after any save under way.
 */
export function draftSaver({ save, clear, onSaved = () => {}, delay = SAVE_DELAY_MS, timers = globalThis }) {
  let timer = null;
  let pending = null;
  let chain = Promise.resolve();
  const run = (op) => (chain = chain.then(op, op));
  const cancel = () => {
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
    pending = null;
  };
  const saveNow = () => {
    const doc = pending;
    cancel();
    return run(async () => onSaved(await save(doc)));
  };
  return {
    schedule(doc) {
      if (timer !== null) timers.clearTimeout(timer);
      pending = doc;
      timer = timers.setTimeout(saveNow, delay);
    },
    flush() {
      return timer !== null ? saveNow() : chain;
    },
    clear() {
      cancel();
      return run(() => clear());
    },
    cancel,
  };
}

/** The notice of a restored draft; `format` writes the time (the user's locale by default). */
export function restoredNotice(savedAt, format = (d) => d.toLocaleString()) {
  return savedAt ? `Restored what you typed on ${format(new Date(savedAt))}.` : "Restored what you typed last time.";
}

/**
 * The values of a request's form with its draft laid over them: only the fields the request
 * asks for now, and only text values (what the form's inputs hold).
 */
export function withDraft(initial, saved) {
  const out = { ...initial };
  if (!saved || typeof saved !== "object") return out;
  for (const key of Object.keys(initial)) {
    if (typeof saved[key] === "string") out[key] = saved[key];
  }
  return out;
}

/**
 * Whether a request's answer ends its draft: submitted, no longer active (409), or gone (a
 * 404 saying the request itself is unknown). A 404 about a record the request needs (its care
 * plan, program, group, patient account) leaves the request, and its draft, in place.
 */
export function endsDraft(res) {
  if (!res) return false;
  if (res.ok || res.kind === "not_active") return true;
  return res.kind === "not_found" && (res.errors || []).some((e) => e.code === "REQUEST_NOT_FOUND");
}

/**
 * The notice to show for a load answer ({document, saved_at, not_restored, key_unavailable,
 * key_notice}), or null: restored, lost (removed), or kept (its key cannot be read now).
 */
export function loadNotice(answer, format) {
  if (!answer) return null;
  if (answer.document) return { kind: "restored", text: restoredNotice(answer.saved_at, format), keyNotice: answer.key_notice || null };
  if (answer.not_restored) return { kind: "lost", text: answer.not_restored, keyNotice: null };
  if (answer.key_unavailable) return { kind: "kept", text: answer.key_unavailable, keyNotice: null };
  return null;
}

/** What a save's answer has to tell: where the key is kept (no keyring service), or that typing is not being saved. */
export function savedNotice(res) {
  if (!res) return null;
  if (res.ok) return (res.value && res.value.key_notice) || null;
  return `What you type is not being saved: ${res.error}`;
}
