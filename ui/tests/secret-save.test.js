// Saving a secret from a form: a new path is created, an existing one gets a new version.
import { test } from "node:test";
import assert from "node:assert/strict";
import { saveSecret } from "../js/secret-save.js";

function fakeApi(paths, listOk = true) {
  const calls = [];
  return {
    calls,
    tool: async (name, args) => {
      calls.push([name, args]);
      if (name === "list_secrets") return listOk ? { ok: true, value: { paths } } : { ok: false, error: "no access" };
      return { ok: true, value: { message: `${name} ${args.secret_path}` } };
    },
  };
}
const scope = { secret_type: "app", app_id: "a1" };

test("a path that exists gets a new version", async () => {
  const api = fakeApi(["db", "db/replica"]);
  const { res, updated } = await saveSecret(api, scope, "db", '{"P": "x"}');
  assert.equal(updated, true);
  assert.equal(res.value.message, "update_secret db");
  assert.deepEqual(api.calls, [["list_secrets", { ...scope, prefix: "db" }], ["update_secret", { ...scope, secret_path: "db", data: '{"P": "x"}' }]]);
});

test("a new path (only a longer one exists) is created", async () => {
  const api = fakeApi(["db/replica"]);
  const { updated } = await saveSecret(api, scope, "db", "{}");
  assert.equal(updated, false);
  assert.equal(api.calls.at(-1)[0], "create_secret");
});

test("an empty path or a failed lookup goes to create, whose rules answer", async () => {
  const empty = fakeApi([]);
  await saveSecret(empty, scope, "", "{}");
  assert.deepEqual(empty.calls.map((c) => c[0]), ["create_secret"]);
  const failed = fakeApi(["db"], false);
  assert.equal((await saveSecret(failed, scope, "db", "{}")).updated, false);
});
