//! What a service's build depends on, as digests the development loop compares between two
//! moments: all its input files (to know whether to rebuild it at all) and its dependency
//! manifests (to know whether a sync is enough or it needs a full build).
//!
//! A service's inputs are the files under its build context, minus what `.dockerignore` or
//! `.gitignore` exclude, `.git` and the `.app` file, plus the devfile without its `imageUri`
//! lines (which `slipway build` writes: the loop must not rebuild because of its own write).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use slipway_devfile::Devfile;

use slipway_platform_client::ToolError;

/// Files whose change means the build command must run again (dependencies, the image
/// recipe): a change to any other file can be synced.
const DEPENDENCY_MANIFESTS: &[&str] = &[
    "requirements.txt",
    "requirements-dev.txt",
    "constraints.txt",
    "pyproject.toml",
    "poetry.lock",
    "uv.lock",
    "Pipfile",
    "Pipfile.lock",
    "setup.py",
    "setup.cfg",
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Cargo.lock",
    "Gemfile",
    "Gemfile.lock",
    "composer.json",
    "composer.lock",
    "Dockerfile",
    "Containerfile",
];

/// One service's digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePrint {
    /// Every input file and the devfile.
    pub inputs: u64,
    /// The dependency manifests, the Dockerfile and the devfile.
    pub dependencies: u64,
    /// The input files, relative to the project root.
    pub files: BTreeSet<String>,
}

/// The digests of every service of a project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprints(pub BTreeMap<String, ServicePrint>);

/// How a changed service is brought up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Only sources changed: the new files as a layer over the last image.
    Sync,
    /// A dependency manifest, the Dockerfile or the devfile changed, or a file was deleted.
    Full,
}

impl Fingerprints {
    /// Reads the project at `root` whose devfile is `devfile` (its text, already valid).
    pub fn take(root: &Path, devfile: &str) -> Result<Self, ToolError> {
        let model = Devfile::parse(devfile)
            .map_err(|e| ToolError::invalid("devfile", format!("devfile.yaml: {e}")))?;
        let normalized = without_image_uris(devfile);
        let mut prints = BTreeMap::new();
        for service in model.services() {
            let context = root.join(clean(&service.build_context));
            let mut inputs = DefaultHasher::new();
            let mut dependencies = DefaultHasher::new();
            normalized.hash(&mut inputs);
            normalized.hash(&mut dependencies);
            let mut files = BTreeSet::new();
            for path in input_files(root, &context) {
                let relative = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                // The devfile counts as data (above), not as bytes.
                if relative == "devfile.yaml" {
                    continue;
                }
                let Ok(bytes) = std::fs::read(&path) else {
                    continue;
                };
                relative.hash(&mut inputs);
                bytes.hash(&mut inputs);
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let dockerfile = service.dockerfile.as_deref() == Some(relative.as_str());
                if dockerfile || DEPENDENCY_MANIFESTS.contains(&name) {
                    relative.hash(&mut dependencies);
                    bytes.hash(&mut dependencies);
                }
                files.insert(relative);
            }
            prints.insert(
                service.name.clone(),
                ServicePrint {
                    inputs: inputs.finish(),
                    dependencies: dependencies.finish(),
                    files,
                },
            );
        }
        Ok(Self(prints))
    }

    /// The services whose inputs differ from `before`, each with how to bring it up to date
    /// (a service new to the devfile is built in full).
    pub fn changed_since(&self, before: &Self) -> BTreeMap<String, Mode> {
        self.0
            .iter()
            .filter_map(|(name, now)| {
                let mode = match before.0.get(name) {
                    None => Mode::Full,
                    Some(old) if old.inputs == now.inputs => return None,
                    Some(old) if old.dependencies != now.dependencies => Mode::Full,
                    Some(old) if !old.files.is_subset(&now.files) => Mode::Full,
                    Some(_) => Mode::Sync,
                };
                Some((name.clone(), mode))
            })
            .collect()
    }
}

/// The devfile as data without its `imageUri` values (and the `attributes` maps they leave
/// empty), so the loop's own write of them changes nothing; comments and layout changes do
/// not count either.
fn without_image_uris(devfile: &str) -> String {
    fn strip(value: &mut serde_yaml::Value) {
        match value {
            serde_yaml::Value::Mapping(map) => {
                map.remove("imageUri");
                for (_, v) in map.iter_mut() {
                    strip(v);
                }
                let empty_attributes = map
                    .get("attributes")
                    .is_some_and(|a| a.as_mapping().is_some_and(serde_yaml::Mapping::is_empty));
                if empty_attributes {
                    map.remove("attributes");
                }
            }
            serde_yaml::Value::Sequence(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    match serde_yaml::from_str::<serde_yaml::Value>(devfile) {
        Ok(mut value) => {
            strip(&mut value);
            serde_yaml::to_string(&value).unwrap_or_else(|_| devfile.to_owned())
        }
        Err(_) => devfile.to_owned(),
    }
}

/// A build context path (`.`, `./api`, `api/`) without `.` parts; `..` parts are dropped
/// too (the validator refuses them; a context cannot reach outside the project).
fn clean(context: &str) -> PathBuf {
    Path::new(context)
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .collect()
}

/// The files under `context` that a build would see and a developer edits: `.dockerignore`
/// and `.gitignore` (of the project root and below) honoured, `.git` and `.app` skipped.
pub fn input_files(root: &Path, context: &Path) -> Vec<PathBuf> {
    let mut walk = ignore::WalkBuilder::new(context);
    walk.hidden(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .parents(true)
        .add_custom_ignore_filename(".dockerignore")
        .filter_entry(|e| {
            let name = e.file_name();
            name != ".git" && name != slipway_platform_client::APP_FILE
        });
    // The root's own ignore files apply to a context below it.
    if context != root {
        for name in [".gitignore", ".dockerignore"] {
            let file = root.join(name);
            if file.is_file() {
                walk.add_ignore(file);
            }
        }
    }
    let mut files: Vec<PathBuf> = walk
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .collect();
    files.sort();
    files
}

/// Whether a changed `path` can matter to a build (not under `.git`, not `.app`, not
/// ignored): the watcher drops the rest before waking the loop.
pub fn matters(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else {
        return false;
    };
    let mut parts = relative.components();
    match parts.next() {
        Some(first) if first.as_os_str() == ".git" => false,
        Some(first) if first.as_os_str() == slipway_platform_client::APP_FILE => {
            parts.next().is_some()
        }
        Some(_) => true,
        None => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A valid one-service devfile (its Dockerfile must exist beside it).
    pub(crate) const DEVFILE: &str = r#"schemaVersion: 2.2.0
metadata:
  name: demo
  displayName: Demo
components:
  - name: api-image
    image:
      imageName: api
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: api
    container:
      image: api
      endpoints:
        - name: http
          targetPort: 8000
commands:
  - id: run
    exec:
      component: api
      commandLine: python3 main.py
      workingDir: ${PROJECT_SOURCE}
      group: { kind: run, isDefault: true }
"#;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("devfile.yaml", DEVFILE),
            ("main.py", "print(1)\n"),
            ("requirements.txt", "fastapi\n"),
            ("Dockerfile", "FROM scratch\n"),
            (".gitignore", "__pycache__/\n"),
            (".dockerignore", ".venv\n"),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn take(dir: &Path) -> Fingerprints {
        let devfile = std::fs::read_to_string(dir.join("devfile.yaml")).unwrap();
        Fingerprints::take(dir, &devfile).unwrap()
    }

    #[test]
    fn a_source_edit_syncs_and_a_manifest_edit_or_a_deletion_rebuilds() {
        let dir = project();
        let root = dir.path();
        let start = take(root);
        assert!(start.0["api"].files.contains("main.py"));

        // Ignored files, .app and .git change nothing.
        std::fs::create_dir_all(root.join(".venv/lib")).unwrap();
        std::fs::write(root.join(".venv/lib/x.py"), "x").unwrap();
        std::fs::create_dir_all(root.join("__pycache__")).unwrap();
        std::fs::write(root.join("__pycache__/main.pyc"), "x").unwrap();
        std::fs::write(root.join(".app"), "{}").unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref").unwrap();
        assert!(take(root).changed_since(&start).is_empty());

        // imageUri written by a build changes nothing either.
        let devfile = std::fs::read_to_string(root.join("devfile.yaml")).unwrap();
        let with_uri =
            slipway_devfile::set_image_uri(&devfile, "api", "slipway.local/demo/api@sha256:00")
                .unwrap();
        assert_ne!(with_uri, devfile);
        std::fs::write(root.join("devfile.yaml"), &with_uri).unwrap();
        assert!(take(root).changed_since(&start).is_empty());

        std::fs::write(root.join("devfile.yaml"), &devfile).unwrap();
        std::fs::write(root.join("main.py"), "print(2)\n").unwrap();
        let edited = take(root);
        assert_eq!(edited.changed_since(&start)["api"], Mode::Sync);

        std::fs::write(root.join("requirements.txt"), "fastapi\nhttpx\n").unwrap();
        assert_eq!(take(root).changed_since(&edited)["api"], Mode::Full);

        let before = take(root);
        std::fs::write(root.join("helper.py"), "X = 1\n").unwrap();
        let added = take(root);
        assert_eq!(
            added.changed_since(&before)["api"],
            Mode::Sync,
            "an added file syncs"
        );
        std::fs::remove_file(root.join("helper.py")).unwrap();
        assert_eq!(
            take(root).changed_since(&added)["api"],
            Mode::Full,
            "a deletion rebuilds"
        );
    }

    #[test]
    fn only_paths_that_can_matter_wake_the_loop() {
        let root = Path::new("/p");
        assert!(matters(root, Path::new("/p/main.py")));
        assert!(matters(root, Path::new("/p/src/app.py")));
        assert!(!matters(root, Path::new("/p/.git/index")));
        assert!(!matters(root, Path::new("/p/.app")));
        assert!(!matters(root, Path::new("/elsewhere/x")));
    }
}
