// The tablist's keys and the status badge's tones: pure parts of the shared components.
import { test } from "node:test";
import assert from "node:assert/strict";
import { panelId, tabId, tabKeyTarget } from "../js/components/tabs.js";
import { statusTone } from "../js/components/status-badge.js";

test("arrow keys move to the next and previous tab, wrapping at both ends", () => {
  assert.equal(tabKeyTarget("ArrowRight", 0, 6), 1);
  assert.equal(tabKeyTarget("ArrowRight", 5, 6), 0);
  assert.equal(tabKeyTarget("ArrowLeft", 0, 6), 5);
  assert.equal(tabKeyTarget("ArrowLeft", 3, 6), 2);
});

test("Home and End go to the first and last tab; other keys are not the tablist's", () => {
  assert.equal(tabKeyTarget("Home", 4, 6), 0);
  assert.equal(tabKeyTarget("End", 1, 6), 5);
  for (const key of ["Enter", " ", "Tab", "ArrowDown", "a"]) assert.equal(tabKeyTarget(key, 2, 6), null, key);
  assert.equal(tabKeyTarget("ArrowRight", 0, 0), null);
});

test("a tab and its panel name each other", () => {
  assert.equal(tabId("app-tabs", "logs"), "app-tabs-logs");
  assert.equal(panelId("app-tabs", "logs"), "app-tabs-logs-panel");
});

test("statuses of apps, builds and deployments get a tone; unknown ones stay plain", () => {
  assert.equal(statusTone("RUNNING"), "good");
  assert.equal(statusTone("succeeded"), "good");
  assert.equal(statusTone("FAILED"), "bad");
  assert.equal(statusTone("failed"), "bad");
  assert.equal(statusTone("deploying"), "busy");
  assert.equal(statusTone("in_progress"), "busy");
  assert.equal(statusTone("registered"), "plain");
  assert.equal(statusTone(undefined), "plain");
});
