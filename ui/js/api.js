// The only file that calls Tauri's invoke() (and its window and event APIs). One function per
// command; every function resolves (never rejects) to {ok, value, error, field}. Failures of the care commands also
// carry `kind` (which screen to show), `errors` (every {code, message, fields}) and
// `fieldErrors` ({path: [message…]}), all decided in Rust.

const NO_BRIDGE = { message: "the Slipway window bridge is not available" };

function bridge() {
  return globalThis.window && globalThis.window.__TAURI__;
}

function invoke(cmd, args) {
  const tauri = bridge();
  if (!tauri) return Promise.reject(NO_BRIDGE);
  return tauri.core.invoke(cmd, args);
}

/** Normalises whatever a rejected invoke() carries into the common failure shape. */
export function failure(e) {
  if (e && typeof e === "object") {
    const errors = Array.isArray(e.errors) ? e.errors : [];
    const field = e.field ?? (errors[0] && errors[0].fields && errors[0].fields[0]) ?? null;
    return {
      ok: false,
      value: null,
      error: String(e.message ?? "the call failed"),
      field,
      kind: e.kind ?? "error",
      status: e.status ?? null,
      errors,
      fieldErrors: e.fieldErrors ?? {},
    };
  }
  return { ok: false, value: null, error: String(e), field: null, kind: "error", status: null, errors: [], fieldErrors: {} };
}

async function command(cmd, args) {
  try {
    const value = await invoke(cmd, args);
    return { ok: true, value, error: null, field: null };
  } catch (e) {
    return failure(e);
  }
}

/** Runs a toolkit tool; a result with `success: false` is a failure naming its field. */
export async function tool(name, args = {}) {
  const res = await command("call_tool", { name, args });
  if (!res.ok) return res;
  if (res.value && res.value.success === false) {
    return { ok: false, value: res.value, error: String(res.value.error ?? "the tool failed"), field: res.value.field ?? null, kind: "error", errors: [], fieldErrors: {} };
  }
  return res;
}

/** Checks a new app's settings with scaffold_app's rules, writing nothing: {valid, project_path} or {valid: false, field, error}. */
export const checkNewApp = (args) => command("check_new_app", { args });

/** The environment the window works in and who is signed in. */
export const environment = () => command("environment");
/** The saved environments (never a token) and the one in use: {current, saved}. */
export const environments = () => command("environments");
/** Checks the platform token, saves the environment (tokens in the keyring or a 0600 file) and uses it. */
export const signIn = (environment) => platformCall("sign_in", { environment });
/** Uses a saved, signed-in environment; null for this computer. */
export const useEnvironment = (name) => command("use_environment", { name });
/** Forgets an environment's tokens; its URLs stay. */
export const signOut = (name) => command("sign_out", { name });
/** Remembers that the welcome was seen. */
export const dismissWelcome = () => command("dismiss_welcome");
/** Chooses the view the window opens on ("worklist"), or null for the default again. */
export const setHomeView = (view) => command("set_home_view", { view });

/** The fields a missing-information request asks for. */
export const careMissingInfo = (uuid) => command("care_missing_info", { uuid });
/** Submits the values: `fields` are the GET fields, each with a string `value`. */
export const careSubmitMissingInfo = (uuid, fields) => command("care_submit_missing_info", { uuid, fields });
/** What an answered request holds: answeredBy/At, fields with their values now, amendments, amendable(Until). */
export const careAnswer = (uuid) => command("care_answer", { uuid });
/** Corrects an answered request: the same fields and rules as the submission. */
export const careAmendMissingInfo = (uuid, fields) => command("care_amend_missing_info", { uuid, fields });

/** The values offered by the enrollment form (genders, contact types). */
export const careEnrollmentOptions = () => command("care_enrollment_options");
/** Checks an enrollment document with the service's own validator: {valid, errors, fieldErrors}. */
export const careCheckEnrollment = (document) => command("care_check_enrollment", { document });
/** Submits an enrollment document. */
export const careEnroll = (document) => command("care_enroll", { document });
/**
 * A care form's saved draft, `kind` "enrollment" or "missing_info" (with the request's `uuid`):
 * {document, saved_at, not_restored, key_store, key_notice}; `document` is null when there is
 * none, `not_restored` says that one could not be opened (and was removed).
 */
export const careDraftLoad = (kind, uuid = null) => command("care_draft_load", { kind, uuid });
/** Saves a care form's draft, encrypted, in the user's data directory: {saved_at, key_store, key_notice}. */
export const careDraftSave = (kind, uuid, document) => command("care_draft_save", { kind, uuid, document });
/** Forgets a care form's draft. */
export const careDraftClear = (kind, uuid = null) => command("care_draft_clear", { kind, uuid });

/** Results of the history commands carry `success: false` on failure, like tools. */
async function platformCall(cmd, args) {
  const res = await command(cmd, args);
  if (res.ok && res.value && res.value.success === false) {
    return { ok: false, value: res.value, error: String(res.value.error ?? "the call failed"), field: res.value.field ?? null, kind: "error", errors: [], fieldErrors: {} };
  }
  return res;
}
/** An app's deployments, newest first: what each ran (images, secret versions), why, how it ended. */
export const appDeployments = (appId) => platformCall("app_deployments", { appId });
/** What changed from `against` (default: the deployment before) to `deploymentId`. */
export const appDeploymentDiff = (appId, deploymentId, against = null) => platformCall("app_deployment_diff", { appId, deploymentId, against });
/** Deploys an earlier deployment again with its images and secret versions. */
export const appRollback = (appId, deploymentId) => platformCall("app_rollback", { appId, deploymentId });
/** Why an app is where it is (log tails, failed build, devfile findings, changes since it ran well). */
export const appDiagnosis = (appId) => platformCall("app_diagnosis", { appId });

/** One page of an app's builds, newest first: {builds, next_page_token}. */
export const appBuilds = (appId, pageToken = null) => platformCall("app_builds", { appId, pageToken });
/** One build with its log (`log`, and `log_truncated` when only its end is shown). */
export const buildLog = (buildId) => platformCall("build_log", { buildId });

/**
 * An app's backing resources and volumes: {app_id, resources: [{kind, name, engine, state,
 * memory_mb, size_bytes, variables}], volumes: [{name, size, ephemeral, used_bytes, mounts}]}
 * (variable names, never values).
 */
export const appResources = (appId) => platformCall("app_resources", { appId });
export const appJobs = (appId) => platformCall("app_jobs", { appId });
export const jobRuns = (appId, job) => platformCall("job_runs", { appId, job });
export const jobRunNow = (appId, job) => platformCall("job_run_now", { appId, job });
export const jobRunLog = (appId, job, runId) => platformCall("job_run_log", { appId, job, runId });
/** The events a notification subscription can name: {events: [{name, description, about_an_app}]}. */
export const notifyEvents = () => platformCall("notify_events", {});
/** The account's notification channels, without secrets: {channels: [{id, name, kind, target, last_delivery_failed}]}. */
export const notifyChannels = () => platformCall("notify_channels", {});
/** Adds a channel (admins): settings {name, kind, url | host, port, from, to, …}; a made webhook secret is in the answer once. */
export const notifyAddChannel = (settings) => platformCall("notify_add_channel", { settings });
/** Sends a test message now: {delivered, error}. */
export const notifyTestChannel = (channel) => platformCall("notify_test_channel", { channel });
/** Removes a channel with its subscriptions and deliveries (admins). */
export const notifyRemoveChannel = (channel) => platformCall("notify_remove_channel", { channel });
/** The subscriptions the signed-in person can see: {subscriptions: [...]}. */
export const notifySubscriptions = () => platformCall("notify_subscriptions", {});
/** Subscribes a channel to events of an app (owners), or of the whole account with appId null (admins). */
export const notifySubscribe = (channel, appId, events) => platformCall("notify_subscribe", { channel, appId, events });
/** Ends a subscription. */
export const notifyUnsubscribe = (id) => platformCall("notify_unsubscribe", { id });
/** The newest deliveries with their attempts: one app's, or all with appId null (admins). */
export const notifyDeliveries = (appId = null) => platformCall("notify_deliveries", { appId });
/** One resource's credentials (editors and owners): {kind, name, engine, url, host, port, user, password, database}. */
export const resourceCredentials = (appId, kind, name) => platformCall("resource_credentials", { appId, kind, name });
/** New credentials for a resource; the app restarts on them: {app_id, kind, name, resources}. */
export const resourceRotate = (appId, kind, name) => platformCall("resource_rotate", { appId, kind, name });
/** Destroys a resource and its data for good (owners): {app_id, kind, name, message}. */
export const resourceDestroy = (appId, kind, name) => platformCall("resource_destroy", { appId, kind, name });

/** Starts build_app on a project folder with progress; the value is a ticket for buildPoll. */
export const buildStart = (projectPath) => command("build_start", { projectPath });
/** The steps a build reported so far and, once done, its result: {steps, result}. */
export const buildPoll = (ticket) => command("build_poll", { ticket });

/** Checks a devfile by path and keeps re-checking it on every change on disk: {version, valid, findings, unreadable}. */
export const devfileWatch = (devfilePath) => command("devfile_watch", { devfilePath });
/** The latest check of the watched devfile (null when none is watched). */
export const devfileLatest = () => command("devfile_latest");

/** Starts the development loop on a project folder for an app (Watch): {state, events, last}. */
export const devStart = (appId, projectPath) => command("dev_start", { appId, projectPath });
/** The loop's state and its events after `after`; value null when the app is not watched. */
export const devPoll = (appId, after) => command("dev_poll", { appId, after });
/** Stops watching (the app keeps running). */
export const devStop = (appId) => command("dev_stop", { appId });

/** Care users with their permissions (admin). */
export const careUsers = () => command("care_users");
/** Creates a care user; the answer holds its token, shown once. */
export const careCreateUser = (user) => command("care_create_user", { user });
/** Replaces a care user's permissions. */
export const careSetPermissions = (id, permissions) => command("care_set_permissions", { id, permissions });
/** Deletes a care user. */
export const careDeleteUser = (id) => command("care_delete_user", { id });

/**
 * Who this window is on its platform: {id, email, name, role} (role "admin" or "member").
 * `lazy`: do not start this computer's platform for the question (answers its first person's role).
 */
export const me = (lazy = false) => platformCall("me", { lazy });
/** The account's people: {users: [{id, email, name, role, joined_at, last_active_at}]}. */
export const peopleList = () => platformCall("people_list", {});
/** Invites an e-mail address (admin): the answer holds the code, shown once, and the link. */
export const peopleInvite = (email, role = null, expiresInDays = null) => platformCall("people_invite", { email, role, expiresInDays });
/** Pending invites (admin), never their codes: {invites}. */
export const peopleInvites = () => platformCall("people_invites", {});
/** Revokes a pending invite (admin). */
export const peopleRevokeInvite = (id) => platformCall("people_revoke_invite", { id });
/** Changes a person's account role (admin); `id` is their UUID or e-mail. */
export const peopleSetRole = (id, role) => platformCall("people_set_role", { id, role });
/** Removes a person (admin): {removed, transferred_apps}. */
export const peopleRemove = (id) => platformCall("people_remove", { id });
/** One page of the account's audit, newest first: {entries, next_page_token}. */
export const peopleAudit = (pageToken = null) => platformCall("people_audit", { pageToken });

/** This person's own tokens (never a secret): {tokens: [{id, name, created_at, expires_at, last_used_at, current}]}. */
export const tokensList = () => platformCall("tokens_list", {});
/** Makes a token: the answer holds it, shown once. */
export const tokensCreate = (name, expiresInDays = null) => platformCall("tokens_create", { name, expiresInDays });
/** Revokes one of this person's tokens. */
export const tokensRevoke = (id) => platformCall("tokens_revoke", { id });
/** The assistants you let in through the platform's /mcp (docs/mcp.md). */
export const grantsList = () => platformCall("grants_list", {});
/** Approves the sign-in whose page shows `code`; null keeps what the page asked for. */
export const grantsApprove = (code, readOnly = null, secrets = null) => platformCall("grants_approve", { code, readOnly, secrets });
export const grantsRevoke = (id) => platformCall("grants_revoke", { id });

/** Accepts an invite on a platform, saves the environment with the token it gives and uses it. */
export const joinWithInvite = ({ url, code, name, environment }) => platformCall("join_with_invite", { url, code, name: name || null, environment });
/** Whether a platform signs people in with single sign-on: {enabled, issuer}. */
export const ssoStatus = (url) => platformCall("sso_status", { url });
/** Opens the platform's SSO page in the system browser, waits (up to 5 minutes), saves the environment and uses it. */
export const ssoSignIn = (url, environment) => platformCall("sso_sign_in", { url, environment });

/** Opens an http(s) URL in the system browser (Rust checks the scheme). */
export function openUrl(url) {
  return command("open_url", { url });
}

/** After a delete: removes the project's `.app` file when it names that app (Rust checks). */
export function forgetAppFile(projectPath, appId) {
  return command("forget_app_file", { projectPath, appId });
}

/** Tells the shell the first view is on screen (the start-up benchmark's mark). */
export function uiReady() {
  return command("ui_ready", {});
}

/**
 * The slipway:// links that arrived and the window has not followed yet, oldest first, each
 * read by Rust: {kind: "missing_info", uuid}, {kind: "app", app_id}, {kind: "invite", code,
 * url} or {kind: "error", error}. Taking them empties the queue.
 */
export const takeLinks = () => command("take_links", {});

/** Calls `handler` whenever links wait (the shell's "links-waiting" event); ok once listening. */
export async function onLinksWaiting(handler) {
  const tauri = bridge();
  try {
    if (!tauri || !tauri.event) throw NO_BRIDGE;
    await tauri.event.listen("links-waiting", () => handler());
    return { ok: true, value: null, error: null, field: null };
  } catch (e) {
    return failure(e);
  }
}

/** Names the OS window (what window lists, task switchers and screen readers show). */
export async function setWindowTitle(title) {
  const tauri = bridge();
  try {
    if (!tauri || !tauri.window) throw NO_BRIDGE;
    await tauri.window.getCurrentWindow().setTitle(title);
    return { ok: true, value: null, error: null, field: null };
  } catch (e) {
    return failure(e);
  }
}

/** Who the care staff token belongs to: {id, name, admin}. */
export const careMe = () => command("care_me");
/**
 * A page of the care worklist, {tasks, total, next}: by Task `statuses` and `owner` (a user
 * id), or the page a `next` link names; `total` (counted only when asked) is how many match. Each task: {uuid, status, patientId, patient,
 * program, ownerId, owner, expires, authored, description}.
 */
export const careWorklist = ({ statuses = [], owner = null, next = null, count = null, total = false } = {}) =>
  command("care_worklist", { statuses, owner, next, count, total });
/** One request as the worklist shows it. */
export const careTask = (uuid) => command("care_task", { uuid });
/** Claims a request for the signed-in user; a 409's message says who holds it. */
export const careClaim = (uuid) => command("care_claim", { uuid });
/** Releases a request the signed-in user holds. */
export const careRelease = (uuid) => command("care_release", { uuid });
/** Starts (once) the shell's subscription to the care service's events. */
export const careWatchEvents = () => command("care_watch_events");

async function listen(event, handler) {
  const tauri = bridge();
  try {
    if (!tauri || !tauri.event) throw NO_BRIDGE;
    await tauri.event.listen(event, (e) => handler(e.payload));
    return { ok: true, value: null, error: null, field: null };
  } catch (e) {
    return failure(e);
  }
}

/** Calls `handler({id, uuid, status, owner, ownerName})` for every change of a care request. */
export const onCareTask = (handler) => listen("care-task", handler);
/** Calls `handler({state: "live"|"retrying"|"ended", resumed, message, retry_in_ms})` as the subscription goes. */
export const onCareEvents = (handler) => listen("care-events", handler);
