// The status watch against a fake status source and clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { watchStatus, INTERVAL_MS } from "../js/watch-status.js";

test("polls every interval until RUNNING and reports each answer", async () => {
  const answers = [{ status: "deploying" }, { success: false, error: "timed out" }, { status: "deploying" }, { status: "RUNNING", app_url: "http://127.0.0.1:4000" }];
  const seen = [];
  const slept = [];
  const settled = await watchStatus({
    fetchStatus: async () => answers.shift(),
    onUpdate: (s, round) => seen.push([round, s.status ?? "error"]),
    sleep: async (ms) => slept.push(ms),
  });
  assert.equal(settled.status, "RUNNING");
  assert.deepEqual(seen, [[1, "deploying"], [2, "error"], [3, "deploying"], [4, "RUNNING"]]);
  assert.deepEqual(slept, [INTERVAL_MS, INTERVAL_MS, INTERVAL_MS]);
  assert.ok(INTERVAL_MS >= 10_000 && INTERVAL_MS <= 15_000);
});

test("FAILED ends the watch too", async () => {
  const settled = await watchStatus({ fetchStatus: async () => ({ status: "FAILED", reason: "crashed" }), sleep: async () => {} });
  assert.equal(settled.reason, "crashed");
});

test("a suspended app ends the watch: waiting does not change it (as slipway status --watch)", async () => {
  let polls = 0;
  const settled = await watchStatus({ fetchStatus: async () => { polls++; return { status: "suspended" }; }, sleep: async () => {} });
  assert.equal(settled.status, "suspended");
  assert.equal(polls, 1);
});

test("a stopped watch resolves to null without polling again", async () => {
  const signal = { stopped: false };
  let polls = 0;
  const settled = await watchStatus({
    fetchStatus: async () => { polls++; return { status: "deploying" }; },
    sleep: async () => { signal.stopped = true; },
    signal,
  });
  assert.equal(settled, null);
  assert.equal(polls, 1);
});
