// The form state helpers: paths as the Rust validator reports them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendAt, currentErrors, errorsFor, getPath, inputValue, joinPath, parsePath, removePath, setPath, unplacedErrors } from "../js/form-state.js";

test("paths parse and join like the validator's", () => {
  assert.deepEqual(parsePath("patient.addresses[0].city"), ["patient", "addresses", 0, "city"]);
  assert.deepEqual(parsePath("[2].value"), [2, "value"]);
  assert.equal(joinPath(["patient", "addresses", 0, "city"]), "patient.addresses[0].city");
});

test("setPath creates objects and arrays and never mutates", () => {
  const before = { patient: { id: "P" } };
  const after = setPath(before, "patient.addresses[0].city", "Springfield");
  assert.deepEqual(after, { patient: { id: "P", addresses: [{ city: "Springfield" }] } });
  assert.deepEqual(before, { patient: { id: "P" } });
  assert.equal(getPath(after, "patient.addresses[0].city"), "Springfield");
  assert.equal(getPath(after, "physician.id"), undefined);
});

test("repeatable groups append and remove", () => {
  let s = appendAt({}, "consents", { id: "C1" });
  s = appendAt(s, "consents", { id: "C2" });
  assert.deepEqual(s.consents.map((c) => c.id), ["C1", "C2"]);
  s = removePath(s, "consents[0]");
  assert.deepEqual(s, { consents: [{ id: "C2" }] });
  assert.deepEqual(removePath({ a: 1, physician: { id: "x" } }, "physician"), { a: 1 });
});

test("errors are found by path and the unplaced ones listed", () => {
  const fe = { "patient.lastName": ["'lastName' is required"], "": ["body"] };
  assert.deepEqual(errorsFor(fe, "patient.lastName"), ["'lastName' is required"]);
  assert.deepEqual(errorsFor(fe, "patient.id"), []);
  assert.deepEqual(unplacedErrors(fe, new Set(["patient.lastName"])), [{ path: "", message: "body" }]);
});

test("inputs become JSON values of their kind", () => {
  assert.equal(inputValue("integer", "3"), 3);
  assert.equal(inputValue("integer", "three"), "three");
  assert.equal(inputValue("boolean", true), true);
  assert.equal(inputValue("text", "3"), "3");
});

test("an answer's errors follow the field: gone once it changes, back if changed back", () => {
  const sent = { patient: { lastName: "" }, consents: [{ id: "" }] };
  const fe = { "patient.lastName": ["needs a value"], "consents[0].id": ["needs a value"], "": ["body"] };
  assert.deepEqual(currentErrors(fe, sent, sent), fe);
  const typed = setPath(sent, "patient.lastName", "Doe");
  assert.deepEqual(currentErrors(fe, sent, typed), { "consents[0].id": ["needs a value"], "": ["body"] });
  const removed = removePath(typed, "consents[0]");
  assert.deepEqual(currentErrors(fe, sent, removed), { "": ["body"] });
  assert.deepEqual(currentErrors(fe, sent, setPath(typed, "patient.lastName", "")), fe);
  // The missing-information form: values keyed by field UUID.
  assert.deepEqual(currentErrors({ u1: ["bad"], u2: ["bad"] }, { u1: "x", u2: "" }, { u1: "x", u2: "42" }), { u1: ["bad"] });
});
