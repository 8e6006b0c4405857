//! Packing a project directory into a build context (tar.gz) the way `docker build` would
//! see it: `.dockerignore` honoured, `.git` and the `.app` file never shipped.

use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::apps::APP_FILE;
use crate::error::ToolError;

/// What was packed.
#[derive(Debug)]
pub struct Packed {
    /// The compressed tar.
    pub bytes: Vec<u8>,
    /// Files included.
    pub files: usize,
}

/// Packs `root`. `.dockerignore` lines are read with gitignore semantics (`!` re-includes,
/// `**` matches across directories), which covers what Dockerfiles' users write in practice.
/// `always` (the devfile and the Dockerfiles, relative to `root`) is shipped even when
/// `.dockerignore` excludes it: keeping them out of the image is what such lines mean, and
/// the platform needs them to build — `docker build` treats the Dockerfile the same way.
pub fn pack(root: &Path, always: &[&str]) -> Result<Packed, ToolError> {
    let ignore = dockerignore(root)?;
    let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    tar.follow_symlinks(false);
    let mut files = 0;
    add_dir(&mut tar, root, root, &ignore, &mut files)?;
    for rel in always {
        let path = root.join(rel);
        let rel_path = Path::new(rel);
        if path.is_file()
            && ignore
                .matched_path_or_any_parents(rel_path, false)
                .is_ignore()
        {
            tar.append_path_with_name(&path, rel_path)
                .map_err(|e| ToolError::io("pack", &path, &e))?;
            files += 1;
        }
    }
    let encoder = tar
        .into_inner()
        .map_err(|e| ToolError::io("pack", root, &e))?;
    let bytes = encoder
        .finish()
        .map_err(|e| ToolError::io("compress", root, &e))?;
    Ok(Packed { bytes, files })
}

/// Packs the project at `root` whose devfile is `model`, always shipping the devfile and
/// every service's Dockerfile (see [`pack`]).
pub fn pack_project(root: &Path, model: &slipway_devfile::Devfile) -> Result<Packed, ToolError> {
    let dockerfiles: Vec<String> = model
        .services()
        .iter()
        .filter_map(|s| s.dockerfile.clone())
        .collect();
    let mut always: Vec<&str> = vec!["devfile.yaml"];
    always.extend(dockerfiles.iter().map(String::as_str));
    pack(root, &always)
}

fn dockerignore(root: &Path) -> Result<Gitignore, ToolError> {
    let mut builder = GitignoreBuilder::new(root);
    let path = root.join(".dockerignore");
    if path.is_file()
        && let Some(e) = builder.add(&path)
    {
        return Err(ToolError::invalid_args(format!(".dockerignore: {e}")));
    }
    builder
        .build()
        .map_err(|e| ToolError::invalid_args(format!(".dockerignore: {e}")))
}

fn add_dir(
    tar: &mut tar::Builder<GzEncoder<Vec<u8>>>,
    root: &Path,
    dir: &Path,
    ignore: &Gitignore,
    files: &mut usize,
) -> Result<(), ToolError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| ToolError::io("read", dir, &e))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path);
        let name = entry.file_name();
        let file_type = entry
            .file_type()
            .map_err(|e| ToolError::io("read", &path, &e))?;
        if dir == root && (name == ".git" || name == APP_FILE) {
            continue;
        }
        if ignore
            .matched_path_or_any_parents(rel, file_type.is_dir())
            .is_ignore()
        {
            continue;
        }
        if file_type.is_dir() {
            add_dir(tar, root, &path, ignore, files)?;
        } else if file_type.is_file() || file_type.is_symlink() {
            tar.append_path_with_name(&path, rel)
                .map_err(|e| ToolError::io("pack", &path, &e))?;
            *files += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_dockerignore_and_never_ships_git_or_app_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("Dockerfile", "FROM scratch"),
            (
                ".dockerignore",
                "*.log\nnode_modules\n!keep.log\ndevfile.yaml\n",
            ),
            ("devfile.yaml", "x"),
            ("a.log", "x"),
            ("keep.log", "x"),
            ("node_modules/x/index.js", "x"),
            ("src/main.py", "x"),
            (".git/HEAD", "x"),
            (".app", "{}"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let packed = pack(root, &["devfile.yaml"]).unwrap();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(packed.bytes.as_slice()));
        let mut names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ".dockerignore",
                "Dockerfile",
                "devfile.yaml",
                "keep.log",
                "src/main.py"
            ]
        );
        assert_eq!(packed.files, 5);
    }
}
