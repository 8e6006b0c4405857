// Where a slipway:// link takes the window. The shell reads every link with the toolkit's
// grammar (Rust) and hands the UI its meaning; this only maps a meaning to a view and what
// that view is to open, so main.js can follow it. An unreadable link changes nothing: the
// window says what is wrong (the message is Rust's) and stays where it is.

/**
 * `link` is one entry of take_links: {kind: "missing_info", uuid}, {kind: "app", app_id},
 * {kind: "invite", code, url} or {kind: "error", error}. Returns {view, shared} (what to put
 * in the views' shared state before going there) or {error}.
 */
export function routeLink(link) {
  switch (link && link.kind) {
    case "missing_info":
      return { view: "missing", shared: { missingInfo: { uuid: link.uuid } } };
    case "app":
      return { view: "apps", shared: { openApp: link.app_id } };
    case "invite":
      return { view: "env", shared: { invite: { code: link.code, url: link.url || "" } } };
    case "error":
      return { error: `This link cannot be opened. ${link.error}` };
    default:
      return { error: "This link cannot be opened: the window does not know what it means." };
  }
}
