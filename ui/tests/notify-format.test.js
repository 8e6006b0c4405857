import { test } from "node:test";
import assert from "node:assert/strict";
import { CHANNEL_FIELDS, channelSettings, deliveryLine, eventsLine } from "../js/views/notify/format.js";

test("a channel form sends only its kind's fields, the defaults left to the platform", () => {
  assert.deepEqual(channelSettings({ name: " ops ", kind: "webhook", url: " https://h.example/x ", secret: "", host: "left over" }), {
    name: "ops",
    kind: "webhook",
    url: "https://h.example/x",
  });
  assert.deepEqual(
    channelSettings({ name: "mail", kind: "email", host: "smtp.example.com", port: "2525", from: "a@example.com", to: "b@example.com, c@example.com", password: " p w " }),
    { name: "mail", kind: "email", host: "smtp.example.com", port: 2525, from: "a@example.com", to: ["b@example.com", "c@example.com"], password: " p w " },
  );
  // A port that is not a number goes as typed: the platform names the field.
  assert.equal(channelSettings({ name: "m", kind: "email", port: "x" }).port, "x");
  assert.ok(CHANNEL_FIELDS.includes("ca_certificate") && CHANNEL_FIELDS.includes("name"));
});

test("a delivery says how it went, with the last error", () => {
  const attempt = (error) => ({ attempt: 1, at: "t", error });
  assert.equal(deliveryLine({ status: "delivered", attempts: [attempt(null)] }), "delivered");
  assert.equal(deliveryLine({ status: "delivered", attempts: [attempt("x"), attempt(null)] }), "delivered after 2 tries");
  assert.equal(deliveryLine({ status: "failed", attempts: [attempt("a"), attempt("cannot connect")] }), "failed after 2 tries: cannot connect");
  assert.match(deliveryLine({ status: "pending", attempts: [attempt("refused")], next_attempt_at: "2026-11-28T10:00:00Z" }), /retrying \(1 try; next 2026-11-28T10:00:00Z\): refused/);
  assert.equal(deliveryLine({ status: "pending", attempts: [] }), "waiting to be sent");
});

test("a subscription to every event says so", () => {
  assert.equal(eventsLine(["job.failed", "job.missed"], ["job.failed", "job.missed"]), "every event");
  assert.equal(eventsLine(["job.failed"], ["job.failed", "job.missed"]), "job.failed");
});
