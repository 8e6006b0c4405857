// The window's title names the view, so window lists, screen readers and task switchers tell
// Slipway's windows and views apart. The names are the nav's labels (a unit test holds them
// to index.html), plus the two views the nav does not list.
export const VIEW_LABELS = {
  new: "New app",
  check: "Check devfile",
  apps: "Apps",
  secrets: "Secrets",
  worklist: "Worklist",
  enroll: "Enrollment",
  missing: "Missing information",
  people: "People",
  "care-users": "Care users",
  welcome: "Welcome",
  env: "Environments",
};

/** "Missing information · Slipway" for the view `missing`; just "Slipway" for no known view. */
export function titleFor(view) {
  const label = VIEW_LABELS[view];
  return label ? `${label} · Slipway` : "Slipway";
}
