//! The `process` runtime: runs a service's image as a plain process group on this host.
//!
//! Preparing verifies the platform signature ([`ImageRequest::verify`]) first — nothing of an image
//! that does not verify is unpacked — then puts its layers together (unpacked once each, see
//! [`crate::layers`]) in `DATA_DIR/run/<app_id>/<service>/<deployment_id>`. Image paths (`WorkingDir`, `PATH`
//! entries under `/app`) are mapped into that directory. Virtual environments made by the
//! native builder carry the absolute path of the build directory in their scripts (shebangs,
//! `activate`); [`relocate_venvs`] rewrites that path to the unpacked one, so console scripts
//! run in place and a rebuild of the service (which empties the build directory) never
//! touches a running deployment.

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::sys::signal::Signal;

use crate::pgroup::{self, Group};
use crate::runtime::{
    BoxFuture, Exit, ImageRequest, Instance, PreparedImage, Runtime, RuntimeError, Verified,
    log_output, remove_run_dir,
};

// Both live with the `Runtime` trait, which every runtime and `ImageRequest::run_dir` use;
// re-exported here, where other crates name them.
pub use crate::runtime::{RUN_DIR, STOP_GRACE};

/// The process backend.
#[derive(Debug, Clone)]
pub struct ProcessRuntime {
    data_dir: PathBuf,
}

impl ProcessRuntime {
    /// A backend unpacking under `data_dir/run`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            data_dir: data_dir.to_path_buf(),
        }
    }
}

impl Runtime for ProcessRuntime {
    fn name(&self) -> &'static str {
        "process"
    }

    fn prepare(&self, request: &ImageRequest) -> Result<PreparedImage, RuntimeError> {
        let Verified { image, store } = request.verify(&self.data_dir)?;
        let root = request.run_dir(&self.data_dir);
        if root.exists() {
            std::fs::remove_dir_all(&root)?;
        }
        std::fs::create_dir_all(&root)?;
        for layer in &image.manifest.layers {
            let unpacked = crate::layers::unpacked(&self.data_dir, &store, layer)?;
            crate::layers::assemble(&unpacked, &root)?;
        }
        relocate_venvs(&root)?;
        let run = crate::runtime::ImageRun::of(&image.config["config"]);
        let command = run.command;
        if command.is_empty() {
            return Err(RuntimeError::Unsupported(
                "the image config has neither Entrypoint nor Cmd".into(),
            ));
        }
        let working_dir = map_path(&root, &run.working_dir);
        // PATH entries point into the image: map them into the unpacked tree.
        let env = run
            .env
            .into_iter()
            .map(|(name, value)| {
                let value = if name == "PATH" {
                    value
                        .split(':')
                        .map(|p| map_path(&root, p).display().to_string())
                        .collect::<Vec<_>>()
                        .join(":")
                } else {
                    value
                };
                (name, value)
            })
            .collect();
        Ok(PreparedImage {
            root,
            command,
            working_dir,
            env,
            container: None,
            volumes: request.volumes.clone(),
        })
    }

    fn start(
        &self,
        image: &PreparedImage,
        extra_env: &[(String, String)],
        log: &Path,
    ) -> Result<Box<dyn Instance>, RuntimeError> {
        let (out, err) = log_output(log)?;
        if image.command.is_empty() {
            return Err(RuntimeError::Unsupported("empty command".into()));
        }
        let (program, args) = if image.volumes.is_empty() {
            (image.command[0].clone(), image.command[1..].to_vec())
        } else {
            crate::volumes::wrap(
                &image.root,
                &image.volumes,
                &image.command,
                &image.working_dir,
            )?
        };
        let mut command = tokio::process::Command::new(&program);
        command
            .args(args)
            .current_dir(&image.working_dir)
            .env_clear()
            .env("HOME", &image.root)
            .env("LANG", "C.UTF-8");
        for (name, value) in image.env.iter().chain(extra_env) {
            command.env(name, value);
        }
        command.stdin(Stdio::null()).stdout(out).stderr(err);
        let group = Group::spawn(&mut command).map_err(|error| RuntimeError::Start {
            what: image.command.join(" "),
            error,
        })?;
        let marker = group.pgid().and_then(|pgid| {
            let marker = image.root.with_extension(MARKER_EXTENSION);
            pgroup::write_marker(&marker, pgid).map(|()| marker)
        });
        Ok(Box::new(ProcessInstance { group, marker }))
    }

    fn reap_orphans(&self) -> usize {
        let mut reaped = 0;
        for marker in group_markers(&self.data_dir.join(RUN_DIR)) {
            if let Some(pgid) = pgroup::live_group(&marker) {
                pgroup::kill_group(pgid);
                reaped += 1;
            }
            let _ = std::fs::remove_file(&marker);
        }
        reaped
    }

    fn discard(&self, request: &ImageRequest) {
        remove_run_dir(&request.run_dir(&self.data_dir));
    }
}

/// One process group, and the marker file that lets a later run stop it if this server dies
/// without doing so.
struct ProcessInstance {
    group: Group,
    marker: Option<PathBuf>,
}

impl ProcessInstance {
    /// The group is gone: its marker goes too.
    fn forget(&mut self) {
        if let Some(marker) = self.marker.take() {
            let _ = std::fs::remove_file(marker);
        }
    }
}

/// Marker files are `<run dir of the service>.pgid` ([`pgroup::write_marker`]): the start time
/// they hold tells a live group from a later, unrelated process that reuses the number.
const MARKER_EXTENSION: &str = "pgid";

/// Every marker under the runtime's run directory (`run/<app>/<service>/<deployment>.pgid`).
fn group_markers(run: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dirs = |p: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(p)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default()
    };
    for app in dirs(run) {
        for service in dirs(&app) {
            out.extend(
                dirs(&service)
                    .into_iter()
                    .filter(|p| p.extension().is_some_and(|e| e == MARKER_EXTENSION)),
            );
        }
    }
    out
}

impl Instance for ProcessInstance {
    fn pid(&self) -> Option<u32> {
        self.group.pid()
    }

    fn is_alive(&mut self) -> bool {
        self.group.is_running()
    }

    fn wait(&mut self) -> BoxFuture<'_, Exit> {
        Box::pin(async move {
            let status = self.group.wait().await;
            // Whatever the service left running in the background goes with it.
            self.group.kill();
            self.forget();
            status.map_or_else(|e| Exit::wait_failed(&e), exit_of)
        })
    }

    fn stop(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.group.is_running() {
                self.group.signal(Signal::SIGTERM);
                if tokio::time::timeout(STOP_GRACE, self.group.wait())
                    .await
                    .is_err()
                {
                    tracing::warn!(pid = ?self.group.pid(), "service ignored SIGTERM; killing");
                }
            }
            self.group.kill();
            let _ = self.group.wait().await;
            self.forget();
        })
    }
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit {
            code: Some(code),
            description: format!("exit code {code}"),
        },
        (None, Some(signal)) => Exit {
            code: None,
            description: format!("killed by signal {signal}"),
        },
        _ => Exit {
            code: None,
            description: status.to_string(),
        },
    }
}

/// An absolute image path as a path on this host: `root` + the path when that exists in the
/// unpacked image (`/app/.venv/bin`), the path itself otherwise (`/usr/bin`, which the
/// process runtime takes from the host).
fn map_path(root: &Path, image_path: &str) -> PathBuf {
    let relative = crate::runtime::relative(image_path);
    let inside = root.join(&relative);
    if !relative.as_os_str().is_empty() && inside.exists() {
        inside
    } else if relative.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        PathBuf::from(image_path)
    }
}

/// Rewrites the build-time absolute path of every virtual environment under `root` (a
/// directory holding `pyvenv.cfg`) to where it now is, in the text files of its `bin`
/// directory: script shebangs (`#!/…/work/<app>/<svc>/src/.venv/bin/python`), pip's
/// `'''exec'` launcher lines and the `activate` scripts. Interpreter symbolic links
/// (`bin/python → /usr/bin/python3`) point at the host's Python and stay as they are.
pub fn relocate_venvs(root: &Path) -> std::io::Result<()> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("pyvenv.cfg").is_file() {
            relocate_venv(&dir)?;
            continue;
        }
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    Ok(())
}

fn relocate_venv(venv: &Path) -> std::io::Result<()> {
    let bin = venv.join("bin");
    let Some(name) = venv.file_name().and_then(|n| n.to_str()) else {
        return Ok(());
    };
    let Ok(entries) = std::fs::read_dir(&bin) else {
        return Ok(());
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            files.push(entry.path());
        }
    }
    let marker = format!("/{name}/bin/");
    let old_root = files.iter().find_map(|f| {
        let mut head = [0u8; 1024];
        let n = std::fs::File::open(f)
            .and_then(|mut h| h.read(&mut head))
            .ok()?;
        let text = std::str::from_utf8(&head[..n]).ok()?;
        text.lines().take(3).find_map(|line| {
            let at = line.find(&marker)?;
            let start = line[..at].rfind(['!', ' ', '\'', '"']).map_or(0, |i| i + 1);
            let old = &line[start..at + 1 + name.len()];
            old.starts_with('/').then(|| old.to_owned())
        })
    });
    let new_root = venv.display().to_string();
    let Some(old_root) = old_root.filter(|old| *old != new_root) else {
        return Ok(());
    };
    for file in files {
        let meta = std::fs::metadata(&file)?;
        if meta.len() > 1024 * 1024 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if text.contains(&old_root) {
            // A new file renamed over the old one: the old one may be a hard link to the
            // shared unpacked layer, which must stay as it is.
            let temp = file.with_extension("relocating");
            std::fs::write(&temp, text.replace(&old_root, &new_root))?;
            std::fs::set_permissions(
                &temp,
                std::fs::Permissions::from_mode(meta.permissions().mode()),
            )?;
            std::fs::rename(&temp, &file)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orphans_left_by_a_dead_server_are_reaped_and_strangers_are_not() {
        use std::os::unix::process::CommandExt as _;
        let dir = tempfile::tempdir().unwrap();
        let runtime = ProcessRuntime::new(dir.path());
        let root = dir.path().join(RUN_DIR).join("app").join("api").join("dep");
        std::fs::create_dir_all(&root).unwrap();
        let spawn = || {
            std::process::Command::new("sleep")
                .arg("60")
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let mut orphan = spawn();
        let pgid = nix::unistd::Pid::from_raw(i32::try_from(orphan.id()).unwrap());
        let marker = root.with_extension(MARKER_EXTENSION);
        pgroup::write_marker(&marker, pgid).expect("marker written");
        assert_eq!(marker, root.with_extension("pgid"));

        // A marker whose start time does not match names a process that merely reuses the
        // number: it is left alone.
        let mut stranger = spawn();
        let other = dir
            .path()
            .join(RUN_DIR)
            .join("app")
            .join("web")
            .join("dep.pgid");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        std::fs::write(&other, format!("{} 1\n", stranger.id())).unwrap();

        assert_eq!(runtime.reap_orphans(), 1);
        let status = orphan.wait().unwrap();
        assert!(!status.success(), "the orphan was killed: {status:?}");
        assert!(
            matches!(stranger.try_wait(), Ok(None)),
            "the stranger still runs"
        );
        assert!(!marker.exists() && !other.exists(), "markers are cleared");
        assert_eq!(runtime.reap_orphans(), 0);
        let _ = stranger.kill();
        let _ = stranger.wait();
    }

    #[test]
    fn venv_scripts_are_relocated_to_the_unpacked_path() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("app/.venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let old = "/data/work/abc/api/src/.venv";
        std::fs::write(
            venv.join("bin/uvicorn"),
            format!("#!{old}/bin/python3\nimport sys\n"),
        )
        .unwrap();
        std::fs::set_permissions(
            venv.join("bin/uvicorn"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(venv.join("bin/activate"), format!("VIRTUAL_ENV={old}\n")).unwrap();
        std::os::unix::fs::symlink("/usr/bin/python3", venv.join("bin/python")).unwrap();
        relocate_venvs(dir.path()).unwrap();
        let script = std::fs::read_to_string(venv.join("bin/uvicorn")).unwrap();
        assert_eq!(
            script.lines().next().unwrap(),
            format!("#!{}/bin/python3", venv.display())
        );
        let mode = std::fs::metadata(venv.join("bin/uvicorn"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert!(
            std::fs::read_to_string(venv.join("bin/activate"))
                .unwrap()
                .contains(&venv.display().to_string())
        );
        assert_eq!(
            std::fs::read_link(venv.join("bin/python")).unwrap(),
            Path::new("/usr/bin/python3")
        );
    }

    #[test]
    fn image_paths_map_into_the_unpacked_tree_when_present() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("app/.venv/bin")).unwrap();
        assert_eq!(map_path(dir.path(), "/app"), dir.path().join("app"));
        assert_eq!(
            map_path(dir.path(), "/app/.venv/bin"),
            dir.path().join("app/.venv/bin")
        );
        assert_eq!(map_path(dir.path(), "/usr/bin"), PathBuf::from("/usr/bin"));
        assert_eq!(map_path(dir.path(), "/"), dir.path());
    }
}
