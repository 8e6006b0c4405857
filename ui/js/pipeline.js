// A run of named steps that the user watches: each step is pending, running (with a progress
// line), done (with what it did), failed (with the error where it happened) or skipped. A
// failed step can be retried, and the run goes on from there; the steps before it are not
// repeated. Kept apart from the New app view so the state machine is tested with fake steps
// (tests/pipeline.test.js).

export const PENDING = "pending";
export const RUNNING = "running";
export const DONE = "done";
export const FAILED = "failed";
export const SKIPPED = "skipped";

/**
 * `steps`: `[{id, label, run(ctx, progress)}]`. `run` resolves to `{ok: true, detail}` or
 * `{ok: false, error}` (a throw counts as a failure with its message); it may call
 * `progress(text)` while it works and may keep what later steps need on `ctx`.
 * `onChange(state)` sees a fresh copy of every step's state after each change.
 */
export function createPipeline(steps, onChange = () => {}) {
  let state = steps.map((s) => ({ id: s.id, label: s.label, status: PENDING, detail: "", error: null }));
  let ctx = {};
  let busy = false;

  const emit = () => onChange(state.map((s) => ({ ...s })));
  const set = (i, patch) => {
    state = state.map((s, k) => (k === i ? { ...s, ...patch } : s));
    emit();
  };

  async function runFrom(first) {
    if (busy) return false;
    busy = true;
    try {
      for (let i = first; i < steps.length; i++) {
        if (state[i].status === SKIPPED) continue;
        set(i, { status: RUNNING, detail: "", error: null });
        let out;
        try {
          out = await steps[i].run(ctx, (text) => set(i, { detail: String(text) }));
        } catch (e) {
          out = { ok: false, error: e && e.message ? e.message : String(e) };
        }
        if (!out || out.ok === false) {
          set(i, { status: FAILED, error: (out && out.error) || "the step failed" });
          return false;
        }
        set(i, { status: DONE, detail: out.detail ?? state[i].detail });
      }
      return true;
    } finally {
      busy = false;
    }
  }

  return {
    /** A copy of every step's state. */
    state: () => state.map((s) => ({ ...s })),
    /** What the steps kept for each other (the project path, the app id, …). */
    ctx: () => ctx,
    /** Whether a step is running now. */
    busy: () => busy,
    /**
     * Runs every step from the first, forgetting an earlier run; the ids in `skip` are shown
     * as skipped and not run. Resolves to true when every step that ran is done.
     */
    start(skip = []) {
      if (busy) return Promise.resolve(false);
      ctx = {};
      state = steps.map((s) => ({ id: s.id, label: s.label, status: skip.includes(s.id) ? SKIPPED : PENDING, detail: "", error: null }));
      emit();
      return runFrom(0);
    },
    /** Runs the failed step again and, when it succeeds, the steps after it. */
    retry() {
      const failed = state.findIndex((s) => s.status === FAILED);
      return failed < 0 ? Promise.resolve(false) : runFrom(failed);
    },
  };
}
