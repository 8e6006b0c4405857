// Saving a secret from a form: version 1 of a new path, or a new version of an existing one.
// Both secret views use this one copy. Which of the two it is should be the toolkit's answer
// (a single "save" tool); until there is one, the path is looked up first.

/**
 * `scope` is `{secret_type, app_id?}`. Resolves to `{res, updated}`: the api.js result of
 * create_secret or update_secret, and whether the path existed (a new version was made).
 */
export async function saveSecret(api, scope, secretPath, data) {
  const listed = secretPath ? await api.tool("list_secrets", { ...scope, prefix: secretPath }) : null;
  const updated = Boolean(listed && listed.ok && (listed.value.paths || []).includes(secretPath));
  const res = await api.tool(updated ? "update_secret" : "create_secret", { ...scope, secret_path: secretPath, data });
  return { res, updated };
}
