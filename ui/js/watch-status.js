// Watching an app's status: poll every `interval` ms until it settles (or the watch is
// stopped), reporting each answer. Kept apart from the view so the loop is tested
// with a fake clock (tests/watch-status.test.js).

/**
 * The statuses waiting does not change: RUNNING and FAILED end a deployment, and a suspended
 * app stays suspended until someone enables it. The same list as `slipway status --watch`
 * (the toolkit's `AppStatus::settled`).
 */
export const SETTLED = ["RUNNING", "FAILED", "suspended"];

/** The default poll interval: every 10 s, as people expect of a status watch. */
export const INTERVAL_MS = 10_000;

/**
 * Polls `fetchStatus()` (resolving to a status object or `{success: false, error}`) until its
 * `status` is settled. `onUpdate(status, round)` sees every answer. Resolves to the settled
 * status, or to null when `signal.stopped` becomes true. A failed poll does not end the
 * watch: the next round tries again.
 */
export async function watchStatus({ fetchStatus, onUpdate = () => {}, interval = INTERVAL_MS, sleep = defaultSleep, signal = { stopped: false } }) {
  for (let round = 1; ; round++) {
    if (signal.stopped) return null;
    const status = await fetchStatus();
    if (signal.stopped) return null;
    onUpdate(status, round);
    if (status && SETTLED.includes(status.status)) return status;
    await sleep(interval);
  }
}

function defaultSleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
