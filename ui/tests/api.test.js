// api.js against a fake window.__TAURI__: every function resolves to {ok, value, error, field}.
import { test } from "node:test";
import assert from "node:assert/strict";

const calls = [];
let answer = () => Promise.resolve(null);
globalThis.window = { __TAURI__: { core: { invoke: (cmd, args) => { calls.push([cmd, args]); return answer(cmd, args); } } } };
const api = await import("../js/api.js");

test("a tool result is ok and passes the command its name and arguments", async () => {
  answer = () => Promise.resolve({ templates: [{ name: "python-api" }] });
  const res = await api.tool("get_available_templates", {});
  assert.equal(res.ok, true);
  assert.deepEqual(res.value.templates[0].name, "python-api");
  assert.deepEqual(calls.at(-1), ["call_tool", { name: "get_available_templates", args: {} }]);
});

test("a tool answering success:false is a failure naming its field", async () => {
  answer = () => Promise.resolve({ success: false, error: "app_name: must be lowercase", field: "app_name" });
  const res = await api.tool("scaffold_app", { app_name: "Bad" });
  assert.equal(res.ok, false);
  assert.equal(res.error, "app_name: must be lowercase");
  assert.equal(res.field, "app_name");
});

test("a rejected care command keeps its kind, errors and field errors", async () => {
  answer = () => Promise.reject({ kind: "unmet", status: 412, message: "2 fields are not fulfilled", errors: [{ code: "VALUE_REQUIRED", message: "needs a value", fields: ["u1"] }], fieldErrors: { u1: ["needs a value"] } });
  const res = await api.careSubmitMissingInfo("5f0c", []);
  assert.equal(res.ok, false);
  assert.equal(res.kind, "unmet");
  assert.equal(res.status, 412);
  assert.equal(res.field, "u1");
  assert.deepEqual(res.fieldErrors, { u1: ["needs a value"] });
  assert.deepEqual(calls.at(-1), ["care_submit_missing_info", { uuid: "5f0c", fields: [] }]);
});

test("a plain string rejection becomes a failure", async () => {
  answer = () => Promise.reject("command care_users not found");
  const res = await api.careUsers();
  assert.deepEqual(res, { ok: false, value: null, error: "command care_users not found", field: null, kind: "error", status: null, errors: [], fieldErrors: {} });
});

test("the enrollment check passes the document", async () => {
  answer = () => Promise.resolve({ valid: true, errors: [], fieldErrors: {} });
  const doc = { patient: { id: "P-1" } };
  const res = await api.careCheckEnrollment(doc);
  assert.equal(res.ok, true);
  assert.deepEqual(calls.at(-1), ["care_check_enrollment", { document: doc }]);
});

test("people, tokens, join and SSO send the argument names the Rust commands take", async () => {
  answer = () => Promise.resolve({ success: true });
  const sent = async (promise) => {
    const res = await promise;
    assert.equal(res.ok, true);
    return calls.at(-1);
  };
  assert.deepEqual(await sent(api.me()), ["me", { lazy: false }]);
  assert.deepEqual(await sent(api.me(true)), ["me", { lazy: true }]);
  assert.deepEqual(await sent(api.peopleList()), ["people_list", {}]);
  assert.deepEqual(await sent(api.peopleInvite("dana@example.org", "admin", 3)), ["people_invite", { email: "dana@example.org", role: "admin", expiresInDays: 3 }]);
  assert.deepEqual(await sent(api.peopleInvite("dana@example.org")), ["people_invite", { email: "dana@example.org", role: null, expiresInDays: null }]);
  assert.deepEqual(await sent(api.peopleInvites()), ["people_invites", {}]);
  assert.deepEqual(await sent(api.peopleRevokeInvite("i1")), ["people_revoke_invite", { id: "i1" }]);
  assert.deepEqual(await sent(api.peopleSetRole("dana@example.org", "admin")), ["people_set_role", { id: "dana@example.org", role: "admin" }]);
  assert.deepEqual(await sent(api.peopleRemove("u2")), ["people_remove", { id: "u2" }]);
  assert.deepEqual(await sent(api.peopleAudit()), ["people_audit", { pageToken: null }]);
  assert.deepEqual(await sent(api.peopleAudit("p2")), ["people_audit", { pageToken: "p2" }]);
  assert.deepEqual(await sent(api.tokensList()), ["tokens_list", {}]);
  assert.deepEqual(await sent(api.tokensCreate("ci", 30)), ["tokens_create", { name: "ci", expiresInDays: 30 }]);
  assert.deepEqual(await sent(api.tokensRevoke("t1")), ["tokens_revoke", { id: "t1" }]);
  assert.deepEqual(await sent(api.joinWithInvite({ url: "http://x", code: "slwi_a", name: "", environment: "team" })), ["join_with_invite", { url: "http://x", code: "slwi_a", name: null, environment: "team" }]);
  assert.deepEqual(await sent(api.ssoStatus("http://x")), ["sso_status", { url: "http://x" }]);
  assert.deepEqual(await sent(api.ssoSignIn("http://x", "work")), ["sso_sign_in", { url: "http://x", environment: "work" }]);
});

test("a people command answering success:false is a failure naming its field", async () => {
  answer = () => Promise.resolve({ success: false, error: "expires_in_days: must be a whole number from 1 to 30", field: "expires_in_days" });
  const res = await api.peopleInvite("dana@example.org", "member", 90);
  assert.equal(res.ok, false);
  assert.equal(res.field, "expires_in_days");
  assert.match(res.error, /1 to 30/);
});

test("the resource commands send the argument names the Rust commands take", async () => {
  answer = () => Promise.resolve({ success: true });
  const sent = async (promise) => {
    const res = await promise;
    assert.equal(res.ok, true);
    return calls.at(-1);
  };
  assert.deepEqual(await sent(api.appResources("a1")), ["app_resources", { appId: "a1" }]);
  assert.deepEqual(await sent(api.resourceCredentials("a1", "relationalDatabase", "main")), ["resource_credentials", { appId: "a1", kind: "relationalDatabase", name: "main" }]);
  assert.deepEqual(await sent(api.resourceRotate("a1", "cache", "hot")), ["resource_rotate", { appId: "a1", kind: "cache", name: "hot" }]);
  assert.deepEqual(await sent(api.resourceDestroy("a1", "cache", "hot")), ["resource_destroy", { appId: "a1", kind: "cache", name: "hot" }]);
});

test("a resource refusal (success:false) is a failure with the platform's words", async () => {
  answer = () => Promise.resolve({ success: false, error: "permission denied: viewers cannot read credentials", retryable: false });
  const res = await api.resourceCredentials("a1", "cache", "hot");
  assert.equal(res.ok, false);
  assert.equal(res.error, "permission denied: viewers cannot read credentials");
});
