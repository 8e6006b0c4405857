// Routes between the views. Each view module exports `mount(root, ctx)`, called once on first
// visit, returning an optional `show()` called on every visit; views stay mounted (hidden)
// so a half-filled form survives switching views. The window's title names the view, and
// slipway:// links (a first start's, or forwarded by a second start) open their view.
import * as api from "./api.js";
import { el } from "./components/dom.js";
import { routeLink } from "./links.js";
import { titleFor } from "./title.js";

const VIEWS = {
  welcome: () => import("./views/welcome.js"),
  new: () => import("./views/new-app.js"),
  check: () => import("./views/check.js"),
  apps: () => import("./views/apps.js"),
  secrets: () => import("./views/secrets.js"),
  worklist: () => import("./views/worklist.js"),
  enroll: () => import("./views/enroll.js"),
  missing: () => import("./views/missing-info.js"),
  people: () => import("./views/people.js"),
  "care-users": () => import("./views/care-users.js"),
  env: () => import("./views/environments.js"),
};

const mounted = new Map();
// Shared between views: the last scaffolded project's devfile (the check view offers it).
export const shared = { devfilePath: "" };
let current = null;

export async function go(name) {
  if (!VIEWS[name]) name = "new";
  current = name;
  // The document's title is what screen readers announce; the OS window's, what window
  // lists and task switchers show.
  document.title = titleFor(name);
  api.setWindowTitle(document.title);
  for (const b of document.querySelectorAll("nav button")) {
    const on = b.dataset.view === name;
    b.classList.toggle("active", on);
    if (on) b.setAttribute("aria-current", "page");
    else b.removeAttribute("aria-current");
  }
  const main = document.getElementById("main");
  let entry = mounted.get(name);
  if (!entry) {
    const root = el("section", { id: `view-${name}`, class: "view" });
    main.append(root);
    entry = { root, show: null };
    mounted.set(name, entry);
    try {
      const mod = await VIEWS[name]();
      entry.show = mod.mount(root, { api, go, shared }) || null;
    } catch (e) {
      root.replaceChildren(el("p", { class: "error", role: "alert" }, `This view could not load: ${e && e.message ? e.message : e}`));
    }
  }
  if (current !== name) return;
  for (const [n, v] of mounted) v.root.classList.toggle("hidden", n !== name);
  if (entry.show) entry.show();
}

async function header() {
  const box = document.getElementById("env");
  const res = await api.environment();
  if (!res.ok) {
    box.replaceChildren(el("span", { class: "error" }, res.error));
    return null;
  }
  const env = res.value;
  const change = el("button", { type: "button", class: "small", id: "env-switch", "data-view": "env" }, "Environments…");
  change.addEventListener("click", () => go("env"));
  box.replaceChildren(
    el("span", { class: "badge env-name", title: env.description }, env.name),
    el("span", { id: "signed-in", title: env.description }, `Signed in: ${env.signed_in}`),
    ...(env.token_store ? [el("span", { id: "token-store", class: "muted" }, env.token_store)] : []),
    change,
  );
  return env;
}

for (const b of document.querySelectorAll("nav button")) {
  // After a switch the keyboard continues in the view, not back at the top of the page.
  b.addEventListener("click", () => go(b.dataset.view).then(() => document.getElementById("main").focus({ preventScroll: true })));
}
// The navigation works from here on (the end-to-end test waits for this).
document.body.dataset.ready = "true";

// A link the window cannot open changes nothing: it says why, above the view, until
// dismissed or a good link follows.
function linkNotice(message) {
  const box = document.getElementById("link-notice");
  if (!message) {
    box.replaceChildren();
    return;
  }
  const dismiss = el("button", { type: "button", class: "small", id: "link-notice-dismiss" }, "Dismiss");
  dismiss.addEventListener("click", () => linkNotice(null));
  box.replaceChildren(el("p", { class: "error", role: "alert", id: "link-error" }, message), dismiss);
}

// Follows the links waiting in the shell, in order (the last good one decides the view).
async function followLinks() {
  const res = await api.takeLinks();
  if (!res.ok) return;
  for (const link of res.value) {
    const to = routeLink(link);
    if (to.error) {
      linkNotice(to.error);
      continue;
    }
    linkNotice(null);
    Object.assign(shared, to.shared);
    await go(to.view);
  }
}

// Listening first, then the links that arrived before the page did (a first start's).
const linksFollowed = api.onLinksWaiting(followLinks).then(followLinks);

// The first view, unless a link or the user already picked one while the environment was read.
header().then(async (env) => {
  // After a switch of environment the window reloads and shows the environments again.
  const again = sessionStorage.getItem("slipway.view");
  sessionStorage.removeItem("slipway.view");
  await linksFollowed;
  // The view its user chose to start on (care staff: the worklist; someone who chose is past
  // the welcome), else the welcome on a first start, else the developer's first view.
  if (current === null) await go(again || (env && env.home) || (env && env.welcome ? "welcome" : "new"));
  // The first view is on screen: the window is interactive.
  requestAnimationFrame(() => api.uiReady());
  showAdminViews();
});

// People is an admin's view: its nav entry shows once the platform says this window's person
// is an admin (the view itself tells a member it is for admins).
async function showAdminViews() {
  // Lazy: asking does not start this computer's platform (the window starts it on first use).
  const me = await api.me(true);
  const admin = me.ok && me.value && me.value.role === "admin";
  document.getElementById("nav-people").classList.toggle("hidden", !admin);
}
