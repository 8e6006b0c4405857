//! Volumes on the process runtime: the service runs in a private mount namespace
//! (`unshare --mount`) where each volume's directory is bind-mounted at its `path`. Nothing
//! outside that namespace sees the mounts, so the host's own `path` is never touched:
//!
//! - a path inside the image (its first directory exists in the unpacked tree, like `/app`)
//!   is mounted there, in the deployment's run directory, where the service's relative
//!   paths lead too;
//! - any other path (`/data`) is mounted in a view of the host's file system: an overlay of
//!   the root file system (so the mount point is made in the overlay, not on the host) with
//!   the host's other mounts bound back in, which the service is `chroot`ed into. A path
//!   that would need a new directory inside another of the host's mounts cannot be made
//!   that way, and is refused with the reason.

use std::path::{Path, PathBuf};

use crate::runtime::{RuntimeError, VolumeMount, relative};

/// The script `sh -c` runs inside the new mount namespace: `$1` view dir (empty without a
/// view), `$2` upper, `$3` work, then `N` and N host mounts to bind into the view, then `M`
/// and M (source, target) pairs, then the working directory and the command.
const SCRIPT: &str = r#"set -e
V="$1"; U="$2"; W="$3"; shift 3
N="$1"; shift
if [ -n "$V" ]; then
  mount -t overlay slipway-view -o "lowerdir=/,upperdir=$U,workdir=$W" "$V"
fi
i=0
while [ "$i" -lt "$N" ]; do mount --rbind "$1" "$V$1"; shift; i=$((i+1)); done
M="$1"; shift
i=0
while [ "$i" -lt "$M" ]; do
  if [ -n "$V" ]; then mkdir -p "$V$2"; fi
  mount --bind "$1" "$V$2"; shift 2; i=$((i+1))
done
D="$1"; shift
if [ -n "$V" ]; then exec chroot "$V" /bin/sh -c 'cd "$0" && exec "$@"' "$D" "$@"; fi
cd "$D" && exec "$@"
"#;

/// The program and arguments that run `command` in `working_dir` with `volumes` mounted.
/// `root` is the deployment's unpacked image (its run directory).
pub fn wrap(
    root: &Path,
    volumes: &[VolumeMount],
    command: &[String],
    working_dir: &Path,
) -> Result<(String, Vec<String>), RuntimeError> {
    let mut binds: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut needs_view = false;
    for v in volumes {
        std::fs::create_dir_all(&v.host)?;
        let relative = relative(&v.path);
        let first = relative.components().next();
        let in_image = first.is_some_and(|c| root.join(c).is_dir());
        if in_image {
            let target = root.join(&relative);
            std::fs::create_dir_all(&target)?;
            binds.push((v.host.clone(), target));
        } else {
            needs_view = true;
            binds.push((v.host.clone(), PathBuf::from(&v.path)));
        }
    }
    let (view, upper, work, mounts) = if needs_view {
        let mounts = host_mounts();
        for (_, target) in &binds {
            refuse_inside_other_mount(target, &mounts)?;
        }
        let base = root.with_extension("view");
        let (view, upper, work) = (base.join("root"), base.join("upper"), base.join("work"));
        for dir in [&view, &upper, &work] {
            std::fs::create_dir_all(dir)?;
        }
        (view, upper, work, mounts)
    } else {
        Default::default()
    };
    let mut args: Vec<String> = vec![
        "--mount".into(),
        "--propagation".into(),
        "private".into(),
        "--".into(),
        "/bin/sh".into(),
        "-c".into(),
        SCRIPT.into(),
        "slipway-volumes".into(),
        text(&view),
        text(&upper),
        text(&work),
        mounts.len().to_string(),
    ];
    args.extend(mounts.iter().map(|m| text(m)));
    args.push(binds.len().to_string());
    for (source, target) in &binds {
        args.push(text(source));
        args.push(text(target));
    }
    args.push(text(working_dir));
    args.extend(command.iter().cloned());
    Ok(("unshare".into(), args))
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

/// The host's mount points other than `/` that are not inside another one (binding those
/// recursively brings the ones inside along), from `/proc/self/mountinfo`.
fn host_mounts() -> Vec<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut points: Vec<PathBuf> = info
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape)
        .map(PathBuf::from)
        .filter(|p| p != Path::new("/"))
        .collect();
    points.sort();
    points.dedup();
    let mut top: Vec<PathBuf> = Vec::new();
    for p in points {
        if !top.iter().any(|t| p.starts_with(t)) {
            top.push(p);
        }
    }
    top
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && let Ok(n) = u8::from_str_radix(&field[i + 1..i + 4], 8)
        {
            out.push(n);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A mount point that does not exist and lies inside one of the host's other mounts would
/// have to be made on the host: refused.
fn refuse_inside_other_mount(target: &Path, mounts: &[PathBuf]) -> Result<(), RuntimeError> {
    if target.is_dir() {
        return Ok(());
    }
    if let Some(mount) = mounts.iter().find(|m| target.starts_with(m)) {
        return Err(RuntimeError::Unsupported(format!(
            "the process runtime cannot mount a volume at {}: it does not exist and lies \
             inside the host's mount {}, where making it would change the host; choose a path \
             outside it (for example /data) or run the platform with --runtime container",
            target.display(),
            mount.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/mnt/with\\040space"), "/mnt/with space");
        assert_eq!(unescape("/plain"), "/plain");
    }

    #[test]
    fn paths_inside_the_image_need_no_view() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("app")).unwrap();
        let data = tempfile::tempdir().unwrap();
        let (program, args) = wrap(
            root.path(),
            &[VolumeMount {
                name: "data".into(),
                host: data.path().join("v"),
                path: "/app/data".into(),
            }],
            &["python3".into(), "main.py".into()],
            &root.path().join("app"),
        )
        .unwrap();
        assert_eq!(program, "unshare");
        // No view: empty view, upper and work, no host mounts.
        assert_eq!(&args[8..12], ["", "", "", "0"]);
        assert!(root.path().join("app/data").is_dir());
        assert!(data.path().join("v").is_dir());
    }
}
