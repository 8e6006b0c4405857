#!/usr/bin/env bash
# Checks the .deb and .rpm that `bash scripts/dev package` builds, as a user's machine sees them:
#   bash scripts/package-check.sh DEB RPM
# Both packages must hold /usr/bin/slipway-desktop (the window) and /usr/bin/slipway (the CLI), a
# .desktop entry that handles slipway:// links (MimeType=x-scheme-handler/slipway; and an Exec
# line with %u) whose icon is in the hicolor theme, nothing under /home or the build machine's
# paths, and no maintainer script touching the user's data. The .deb's Depends must cover what
# dpkg-shlibdeps computes for both binaries (at the versions it computes), so that
# `apt-get install ./slipway_….deb` pulls in every library; the .rpm's Requires must name every
# shared library both binaries link (soname()(64bit), as rpmbuild would). The version must be
# the workspace's. Every failure is named; the exit status is 1 if there is any.
set -euo pipefail

if [ $# -ne 2 ] || [ ! -f "$1" ] || [ ! -f "$2" ]; then
  echo "usage: bash scripts/package-check.sh DEB RPM (both files must exist)" >&2
  exit 2
fi
deb=$(realpath "$1")
rpm=$(realpath "$2")
cd "$(dirname "$0")/.."
root=$(pwd)
if ! command -v rpm2archive >/dev/null && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq rpm >/dev/null
fi
for tool in dpkg-deb dpkg-shlibdeps readelf rpm rpm2archive python3 cargo; do
  command -v "$tool" >/dev/null || { echo "package-check: $tool is missing (apt-get install dpkg-dev binutils rpm)" >&2; exit 2; }
done

failures=0
fail() { printf 'package-check: FAIL: %s\n' "$*" >&2; failures=$((failures + 1)); }
ok() { printf 'package-check: ok: %s\n' "$*"; }
# expect KIND WHAT GOT WANT
expect() {
  if [ "$3" = "$4" ]; then ok "$1: $2 $3"; else fail "$1: $2 is '$3', expected '$4'"; fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The workspace's version: the one both packages must carry.
version=$(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
meta = json.load(sys.stdin)
print(next(p["version"] for p in meta["packages"] if p["name"] == "slipway-desktop"))')
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

# Checks one unpacked package tree ($1: its root, $2: "deb" or "rpm", $3: its file list).
check_tree() {
  local tree=$1 kind=$2 list=$3 bin desktop exec icon
  for bin in /usr/bin/slipway-desktop /usr/bin/slipway; do
    if [ -f "$tree$bin" ] && [ -x "$tree$bin" ]; then ok "$kind: $bin"; else fail "$kind: $bin is missing or not executable"; fi
  done
  # The window's binary must never be the CLI's name, and the CLI must be the CLI.
  if [ -x "$tree/usr/bin/slipway" ] && ! timeout 20 "$tree/usr/bin/slipway" --help 2>/dev/null | grep -q '^Usage: slipway '; then
    fail "$kind: /usr/bin/slipway does not answer --help like the CLI (is it the window?)"
  fi
  mapfile -t desktops < <(find "$tree/usr/share/applications" -name '*.desktop' 2>/dev/null)
  if [ ${#desktops[@]} -ne 1 ]; then
    fail "$kind: expected one .desktop file under /usr/share/applications, found ${#desktops[@]}"
  else
    desktop=${desktops[0]}
    if grep -qx 'MimeType=x-scheme-handler/slipway;' "$desktop"; then ok "$kind: .desktop MimeType=x-scheme-handler/slipway;"
    else fail "$kind: ${desktop#"$tree"} has no line 'MimeType=x-scheme-handler/slipway;' (it has: $(grep '^MimeType=' "$desktop" || echo none))"; fi
    exec=$(grep '^Exec=' "$desktop" || true)
    if [[ "$exec" =~ ^Exec=(/usr/bin/)?slipway-desktop\ .*%u ]]; then ok "$kind: .desktop $exec"
    else fail "$kind: ${desktop#"$tree"} must run slipway-desktop with %u, it has '${exec:-no Exec line}'"; fi
    icon=$(sed -n 's/^Icon=//p' "$desktop")
    if [ -n "$icon" ] && compgen -G "$tree/usr/share/icons/hicolor/*/apps/$icon.png" >/dev/null; then
      ok "$kind: icon $icon in hicolor $(cd "$tree/usr/share/icons/hicolor" && find . -path "*/apps/$icon.png" | cut -d/ -f2 | sort -V | tr '\n' ' ')"
    else fail "$kind: the .desktop's icon '${icon:-none}' is not in /usr/share/icons/hicolor/*/apps/"; fi
    if grep -qE "/home/|$root|$target|/tmp/" "$desktop"; then fail "$kind: ${desktop#"$tree"} names a build machine path: $(grep -E "/home/|$root|$target|/tmp/" "$desktop")"; fi
  fi
  for bin in /usr/bin/slipway-desktop /usr/bin/slipway; do
    if [ -f "$tree$bin" ] && readelf -d "$tree$bin" 2>/dev/null | grep -qE '\((RPATH|RUNPATH)\)'; then
      fail "$kind: $bin has a library search path baked in: $(readelf -d "$tree$bin" | grep -E '\((RPATH|RUNPATH)\)')"
    fi
  done
  local stray
  stray=$(grep -E "^(/home|/root|/tmp|/work|$root|$target)(/|$)" "$list" || true)
  if [ -n "$stray" ]; then fail "$kind: files outside the system paths: $stray"; else ok "$kind: nothing under /home, /root, /tmp or the build paths"; fi
  stray=$(grep -vE '^/usr/(bin|share)/' "$list" || true)
  if [ -n "$stray" ]; then fail "$kind: files outside /usr/bin and /usr/share: $stray"; fi
}

# Fails when a maintainer script ($2, the scripts' text) could touch the user's data.
check_scripts() {
  local kind=$1 text=$2
  # shellcheck disable=SC2016 # a literal $HOME in the scripts' text
  local data='\.local/share|XDG_DATA_HOME|\$HOME|/home/|/root/'
  if grep -qE "$data" <<<"$text"; then
    fail "$kind: a maintainer script touches the user's data: $(grep -E "$data" <<<"$text" | head -3)"
  else
    ok "$kind: no maintainer script touches the user's data"
  fi
}

# ---- the .deb
mkdir "$work/deb" "$work/debctl"
dpkg-deb -x "$deb" "$work/deb"
dpkg-deb -e "$deb" "$work/debctl"
(cd "$work/deb" && find . ! -type d | sed 's|^\.||' | sort) >"$work/deb.list"
check_tree "$work/deb" deb "$work/deb.list"
expect deb "package name" "$(dpkg-deb -f "$deb" Package)" slipway
expect deb "version (the workspace's)" "$(dpkg-deb -f "$deb" Version)" "$version"
check_scripts deb "$(cat "$work"/debctl/{preinst,postinst,prerm,postrm} 2>/dev/null || true)"

# What dpkg-shlibdeps computes for both binaries, plus WebKitGTK by name, must be declared.
declared=$(dpkg-deb -f "$deb" Depends)
mkdir -p "$work/shlibs/debian"
printf 'Source: slipway\n\nPackage: slipway\nArchitecture: any\n' >"$work/shlibs/debian/control"
computed=$(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$work/deb/usr/bin/slipway-desktop" -e "$work/deb/usr/bin/slipway" 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')
if [ -z "$computed" ]; then
  fail "deb: dpkg-shlibdeps computed nothing for the two binaries"
else
  missing=()
  IFS=',' read -ra needs <<<"$computed, libwebkit2gtk-4.1-0"
  for need in "${needs[@]}"; do
    need=$(echo "$need" | xargs)
    pkg=${need%% *}
    min=$(sed -nE 's/.*\(>= ([^)]*)\).*/\1/p' <<<"$need")
    covered=no
    IFS=',' read -ra have <<<"$declared"
    for dep in "${have[@]}"; do
      dep=$(echo "$dep" | xargs)
      [ "${dep%% *}" = "$pkg" ] || continue
      if [ -z "$min" ]; then covered=yes; break; fi
      got=$(sed -nE 's/.*\(>= ([^)]*)\).*/\1/p' <<<"$dep")
      if [ -n "$got" ] && dpkg --compare-versions "$got" ge "$min"; then covered=yes; break; fi
    done
    [ $covered = yes ] || missing+=("$need")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    fail "deb: Depends lacks $(printf '%s; ' "${missing[@]}")(dpkg-shlibdeps computes: $computed; add them to bundle.linux.deb.depends in src-tauri/tauri.conf.json)"
  else
    ok "deb: Depends covers dpkg-shlibdeps ($computed)"
  fi
fi

# ---- the .rpm
mkdir "$work/rpm"
(cd "$work/rpm" && rpm2archive - <"$rpm" | tar -xz)
(cd "$work/rpm" && find . ! -type d | sed 's|^\.||' | sort) >"$work/rpm.list"
if ! diff -q <(rpm -qpl "$rpm" 2>/dev/null | sort) "$work/rpm.list" >/dev/null; then
  fail "rpm: rpm -qpl lists other files than its payload holds"
fi
check_tree "$work/rpm" rpm "$work/rpm.list"
expect rpm "package name" "$(rpm -qp --qf '%{NAME}' "$rpm")" slipway
expect rpm "version (the workspace's)" "$(rpm -qp --qf '%{VERSION}' "$rpm")" "$version"
check_scripts rpm "$(rpm -qp --scripts "$rpm" 2>/dev/null || true)"
if diff -q "$work/deb.list" "$work/rpm.list" >/dev/null; then ok "rpm: the same files as the .deb"
else fail "rpm: its files differ from the .deb's: $(diff "$work/deb.list" "$work/rpm.list" | grep '^[<>]' | tr '\n' ' ')"; fi
requires=$(rpm -qpR "$rpm" 2>/dev/null)
missing=()
for lib in $(readelf -d "$work/rpm/usr/bin/slipway-desktop" "$work/rpm/usr/bin/slipway" 2>/dev/null \
    | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | sort -u); do
  grep -qxF "$lib()(64bit)" <<<"$requires" || missing+=("$lib()(64bit)")
done
if [ ${#missing[@]} -gt 0 ]; then
  fail "rpm: Requires lacks ${missing[*]} (add them to bundle.linux.rpm.depends in src-tauri/tauri.conf.json)"
else
  ok "rpm: Requires names every library both binaries link"
fi

if [ "$failures" -gt 0 ]; then
  echo "package-check: $failures check(s) failed for $(basename "$deb") and $(basename "$rpm")" >&2
  exit 1
fi
echo "package-check: $(basename "$deb") and $(basename "$rpm") are complete"
