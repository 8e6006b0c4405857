//! The native builder: runs the service's devfile build command with `sh -c` in a clean
//! copy of the context, then packs the service's directory (with what the build made, such
//! as `.venv` or `node_modules`) as an OCI image whose config runs the devfile's run command
//! on the service's port. pip and npm downloads are cached in `DATA_DIR/cache/{pip,npm}`
//! across builds (both caches are content-addressed, so a changed lock file simply fetches
//! what is new).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::{
    BuildError, BuildLog, BuiltImage, Job, Output, image_uri, prepare_sources, project_dir,
    run_logged,
};
use slipway_image::Digest;
use slipway_image::oci::{
    APP_ROOT, Descriptor, RunConfig, SOURCE_DATE_EPOCH, extend_image, pack_layer, write_image,
};

/// `PATH` inside images, before the app's own `bin` directories.
pub const IMAGE_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Why a service cannot be built natively, if it cannot (checked when the upload arrives).
pub fn unbuildable(service: &slipway_devfile::ServiceSpec) -> Option<String> {
    if service.run_command.is_none() {
        return Some(format!(
            "service {:?} has no run command (an exec command of group kind 'run' on it); the \
             native builder needs one",
            service.name
        ));
    }
    None
}

/// Builds `job` natively: the build command in the unpacked context, then the service's
/// directory packed as one layer under a config that runs the run command.
pub async fn build(job: &Job, out: &Output) -> Result<BuiltImage, BuildError> {
    let service = &job.service;
    let (run_line, run_dir) = run_command(service)?;
    let src = prepare_sources(job).await?;
    job.log.note(&format!(
        "context unpacked; building service {} natively",
        service.name
    ));
    let run_path = project_dir(&src, &run_dir, "run command's working directory")?;
    let mut pack_rel = relative(&run_dir);
    if let Some((line, dir)) = &service.build_command {
        run_build_command(job, &src, line, dir).await?;
        pack_rel = common_ancestor(&pack_rel, &relative(dir));
    } else {
        job.log
            .note("the service has no build command; packing its files as they are");
    }
    let pack_dir = src.join(&pack_rel);
    let run = run_config(job, run_line, &run_path, &pack_dir);
    job.log.note(&format!(
        "packing {} as the image layer",
        if pack_rel.as_os_str().is_empty() {
            ".".to_owned()
        } else {
            pack_rel.display().to_string()
        }
    ));
    store_image(job, out, move |out, log, ref_name| {
        let layer = pack_layer(&out.store, &pack_dir)?;
        log.note(&format!(
            "layer {} ({} bytes{})",
            layer.descriptor.digest,
            layer.descriptor.size,
            if layer.new { "" } else { ", already stored" }
        ));
        Ok(write_image(
            &out.store,
            std::slice::from_ref(&layer),
            &run,
            ref_name,
        )?)
    })
    .await
}

/// The service's run command line and its working directory (relative to the project
/// root); a service without one cannot be built natively ([`unbuildable`] says why).
fn run_command(service: &slipway_devfile::ServiceSpec) -> Result<(String, String), BuildError> {
    service
        .run_command
        .clone()
        .ok_or_else(|| BuildError::Spec(unbuildable(service).unwrap_or_default()))
}

/// Runs the build command `line` with `sh -c` in directory `dir` of the sources at `src`,
/// into the build log.
async fn run_build_command(job: &Job, src: &Path, line: &str, dir: &str) -> Result<(), BuildError> {
    let cwd = project_dir(src, dir, "build command's working directory")?;
    let command = build_command(job, src, line, &cwd)?;
    job.log.note(&format!("$ {line}   (in {dir})"));
    run_logged(command, "build command", job).await?;
    job.log.note("build command succeeded");
    Ok(())
}

/// The build command's process: a clean environment (the devfile's variables, a `HOME` of
/// the build's own, the server's `PATH`) with pip's and npm's caches in `DATA_DIR/cache`,
/// so that nothing of the server's environment leaks into a build.
fn build_command(
    job: &Job,
    src: &Path,
    line: &str,
    cwd: &Path,
) -> Result<tokio::process::Command, BuildError> {
    let service = &job.service;
    let home = job.work.join("home");
    std::fs::create_dir_all(&home)?;
    let pip = job.cache.join("pip");
    let npm = job.cache.join("npm");
    std::fs::create_dir_all(&pip)?;
    std::fs::create_dir_all(&npm)?;
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(line).current_dir(cwd).env_clear();
    for var in &service.env {
        command.env(&var.name, &var.value);
    }
    command
        .env("HOME", &home)
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| IMAGE_PATH.into()),
        )
        .env("PIP_CACHE_DIR", &pip)
        .env("npm_config_cache", &npm)
        .env("PROJECT_SOURCE", src)
        .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH.to_string())
        .env("LANG", "C.UTF-8");
    if let Some(port) = service.port() {
        command.env("PORT", port.to_string());
    }
    Ok(command)
}

/// The image config's run: `sh -c <run line>` in the run command's directory as it lies
/// in the packed layer (`run_path` inside `pack_dir`, under [`APP_ROOT`]), with the
/// environments' `bin` directories the build made (`.venv`, `node_modules`) first on `PATH`.
fn run_config(job: &Job, run_line: String, run_path: &Path, pack_dir: &Path) -> RunConfig {
    let service = &job.service;
    let mut working_dir = Path::new("/").join(APP_ROOT);
    let inner = run_path.strip_prefix(pack_dir).unwrap_or(Path::new(""));
    if !inner.as_os_str().is_empty() {
        working_dir.push(inner);
    }
    let mut path = Vec::new();
    for bin in [".venv/bin", "node_modules/.bin"] {
        if run_path.join(bin).is_dir() {
            path.push(working_dir.join(bin).display().to_string());
        }
    }
    path.push(IMAGE_PATH.to_owned());
    let mut env = vec![format!("PATH={}", path.join(":"))];
    env.extend(
        service
            .env
            .iter()
            .map(|v| format!("{}={}", v.name, v.value)),
    );
    if let Some(port) = service.port() {
        env.push(format!("PORT={port}"));
    }
    RunConfig {
        cmd: vec!["sh".into(), "-c".into(), run_line],
        working_dir: working_dir.display().to_string(),
        env,
        port: service.port(),
        labels: BTreeMap::from([
            ("dev.slipway.app".to_owned(), job.app_name.clone()),
            ("dev.slipway.service".to_owned(), service.name.clone()),
        ]),
    }
}

/// Runs `make` (which stores an image's blobs and manifest) on a blocking thread, signs the
/// manifest it returns and names the image.
async fn store_image(
    job: &Job,
    out: &Output,
    make: impl FnOnce(&Output, &BuildLog, &str) -> Result<Descriptor, BuildError> + Send + 'static,
) -> Result<BuiltImage, BuildError> {
    let out = out.clone();
    let ref_name = format!("{}/{}", job.app_name, job.service.name);
    let log = job.log.clone();
    let digest = tokio::task::spawn_blocking(move || -> Result<Digest, BuildError> {
        let manifest = make(&out, &log, &ref_name)?;
        let digest = Digest::parse(&manifest.digest)?;
        out.key.sign_image(&out.store, &digest)?;
        Ok(digest)
    })
    .await
    .map_err(|e| BuildError::Io(std::io::Error::other(e)))??;
    Ok(BuiltImage {
        image_uri: image_uri(&job.app_name, &job.service.name, &digest),
        digest,
    })
}

/// A sync build: the new context's service directory packed as one more layer over `base`
/// (an image of an earlier build of the service), with `base`'s config. No build command
/// runs, so what it made (`.venv`, `node_modules`) stays as it was in `base`: right when no
/// dependency manifest changed, which the caller checks. Seconds become milliseconds for a
/// source edit. A file deleted since `base` is still in the image; the development loop
/// builds in full when files are deleted.
pub async fn sync(job: &Job, out: &Output, base: &Digest) -> Result<BuiltImage, BuildError> {
    let service = &job.service;
    let (_, run_dir) = run_command(service)?;
    let src = prepare_sources(job).await?;
    let mut pack_rel = relative(&run_dir);
    if let Some((_, dir)) = &service.build_command {
        pack_rel = common_ancestor(&pack_rel, &relative(dir));
    }
    let pack_dir = src.join(&pack_rel);
    job.log.note(&format!(
        "sync: packing the changed sources of service {} over image {base} (no build command)",
        service.name
    ));
    let base = base.clone();
    store_image(job, out, move |out, log, ref_name| {
        out.key.check_signature(&out.store, &base)?;
        let layer = pack_layer(&out.store, &pack_dir)?;
        log.note(&format!(
            "layer {} ({} bytes)",
            layer.descriptor.digest, layer.descriptor.size
        ));
        Ok(extend_image(&out.store, &base, &layer, ref_name)?)
    })
    .await
}

/// A devfile directory (`.`, `api`, `./web/`) as a relative path.
fn relative(dir: &str) -> PathBuf {
    Path::new(dir)
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// The deepest directory containing both `a` and `b`.
fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packed_directory_holds_both_working_directories() {
        assert_eq!(
            common_ancestor(&relative("api"), &relative("./api")),
            PathBuf::from("api")
        );
        assert_eq!(
            common_ancestor(&relative("api/src"), &relative("api")),
            PathBuf::from("api")
        );
        assert_eq!(
            common_ancestor(&relative("api"), &relative("web")),
            PathBuf::new()
        );
        assert_eq!(relative("."), PathBuf::new());
    }
}
