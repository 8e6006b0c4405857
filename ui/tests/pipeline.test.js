// The New app pipeline's state machine against fake steps.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createPipeline, DONE, FAILED, PENDING, RUNNING, SKIPPED } from "../js/pipeline.js";

const step = (id, run) => ({ id, label: id, run });

test("runs the steps in order, showing progress, and keeps what they share", async () => {
  const seen = [];
  const p = createPipeline(
    [
      step("scaffold", async (ctx, progress) => {
        progress("writing files");
        ctx.project = "/p/orders";
        return { ok: true, detail: "created /p/orders" };
      }),
      step("register", async (ctx) => ({ ok: true, detail: `registered ${ctx.project}` })),
    ],
    (s) => seen.push(s.map((x) => `${x.id}:${x.status}${x.detail ? ` ${x.detail}` : ""}`).join(" | ")),
  );
  assert.equal(await p.start(), true);
  assert.deepEqual(seen, [
    "scaffold:pending | register:pending",
    "scaffold:running | register:pending",
    "scaffold:running writing files | register:pending",
    "scaffold:done created /p/orders | register:pending",
    "scaffold:done created /p/orders | register:running",
    "scaffold:done created /p/orders | register:done registered /p/orders",
  ]);
});

test("a failure stops the run where it happened; retry runs that step again, then the rest", async () => {
  const calls = [];
  let buildAttempts = 0;
  const p = createPipeline([
    step("scaffold", async () => (calls.push("scaffold"), { ok: true })),
    step("build", async () => {
      calls.push("build");
      buildAttempts += 1;
      if (buildAttempts === 1) return { ok: false, error: "build api 500: the builder crashed" };
      return { ok: true, detail: "built" };
    }),
    step("deploy", async () => (calls.push("deploy"), { ok: true, detail: "RUNNING" })),
  ]);
  assert.equal(await p.start(), false);
  assert.deepEqual(p.state().map((s) => s.status), [DONE, FAILED, PENDING]);
  assert.equal(p.state()[1].error, "build api 500: the builder crashed");
  assert.equal(await p.retry(), true);
  assert.deepEqual(calls, ["scaffold", "build", "build", "deploy"]);
  assert.deepEqual(p.state().map((s) => s.status), [DONE, DONE, DONE]);
  assert.equal(p.state()[1].error, null);
  // Nothing failed: retry has nothing to do.
  assert.equal(await p.retry(), false);
});

test("a throw is a failure with its message; skipped steps are not run", async () => {
  let deployed = false;
  const p = createPipeline([
    step("scaffold", async () => {
      throw new Error("disk full");
    }),
    step("deploy", async () => {
      deployed = true;
      return { ok: true };
    }),
  ]);
  assert.equal(await p.start(), false);
  assert.equal(p.state()[0].error, "disk full");
  const q = createPipeline([step("scaffold", async () => ({ ok: true })), step("deploy", async () => ((deployed = true), { ok: true }))]);
  assert.equal(await q.start(["deploy"]), true);
  assert.deepEqual(q.state().map((s) => s.status), [DONE, SKIPPED]);
  assert.equal(deployed, false);
});

test("a second start while running is refused, and a new start forgets the last run", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  const p = createPipeline([step("slow", async (ctx) => (await gate, (ctx.n = (ctx.n || 0) + 1), { ok: true }))]);
  const first = p.start();
  assert.equal(p.busy(), true);
  assert.equal(p.state()[0].status, RUNNING);
  assert.equal(await p.start(), false);
  release();
  assert.equal(await first, true);
  assert.equal(p.ctx().n, 1);
  assert.equal(await p.start(), true);
  assert.equal(p.ctx().n, 1, "a new run starts with an empty context");
});
