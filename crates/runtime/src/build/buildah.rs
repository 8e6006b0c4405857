//! The buildah builder: builds the service's Dockerfile with
//! `buildah build --isolation chroot`, exports the image as an OCI layout with
//! `buildah push <tag> oci:<dir>`, and imports its blobs (each checked against its digest)
//! into the platform's store, where the manifest is signed like any other image.

use std::path::Path;
use std::process::Stdio;

use super::{
    BuildError, BuiltImage, Job, Output, image_uri, prepare_sources, project_dir, run_logged,
    scrub, trust,
};
use slipway_image::oci::{Descriptor, Index, Manifest, REF_NAME_ANNOTATION};
use slipway_image::{Digest, ImageError};

/// Whether `buildah` is on `PATH` and runs (`buildah --version` succeeds).
pub fn available() -> bool {
    crate::engine::runs("buildah")
}

/// Why a service cannot be built with buildah, if it cannot (checked when the upload arrives).
pub fn unbuildable(service: &slipway_devfile::ServiceSpec) -> Option<String> {
    if service.dockerfile.is_none() {
        return Some(format!(
            "service {:?} has no image component with a Dockerfile; the buildah builder needs one",
            service.name
        ));
    }
    None
}

/// Builds `job` with buildah.
pub async fn build(job: &Job, out: &Output) -> Result<BuiltImage, BuildError> {
    let service = &job.service;
    let dockerfile = service
        .dockerfile
        .clone()
        .ok_or_else(|| BuildError::Spec(unbuildable(service).unwrap_or_default()))?;
    let src = prepare_sources(job).await?;
    let context = project_dir(&src, &service.build_context, "build context")?;
    let dockerfile_dir = Path::new(&dockerfile).parent().map_or_else(
        || ".".to_owned(),
        |p| {
            let s = p.display().to_string();
            if s.is_empty() { ".".to_owned() } else { s }
        },
    );
    let dockerfile_path = project_dir(&src, &dockerfile_dir, "Dockerfile's directory")?
        .join(Path::new(&dockerfile).file_name().unwrap_or_default());
    if !dockerfile_path.is_file() {
        return Err(BuildError::Spec(format!(
            "the Dockerfile {dockerfile:?} is not in the build context"
        )));
    }
    let text = std::fs::read_to_string(&dockerfile_path)?;
    let missing = missing_base_images(&text, job).await;
    if !missing.is_empty() {
        return Err(BuildError::BaseImagesMissing(missing));
    }
    let bases = base_images(&text);
    if !bases.is_empty() {
        job.log.note(&format!(
            "buildah: the Dockerfile's base images are here: {}",
            bases.join(", ")
        ));
    }
    let tag = format!(
        "{}/{}/{}:{}",
        super::IMAGE_HOST,
        job.app_name,
        service.name,
        job.build_id
    );
    let layout = job.work.join("oci");

    let mounted = run_build(job, &dockerfile, &dockerfile_path, &context, &tag).await?;

    let mut push = tokio::process::Command::new("buildah");
    // gzip whatever containers.conf says (zstd is possible there): the scrub and the
    // store read gzip layers.
    push.arg("push")
        .arg("--compression-format")
        .arg("gzip")
        .arg(&tag)
        .arg(format!("oci:{}", layout.display()));
    job.log
        .note(&format!("$ buildah push {tag} oci:<work>/oci"));
    let pushed = run_logged(push, "buildah push", job).await;
    // The image now lives in the platform store; buildah's copy is not needed either way.
    let mut rmi = tokio::process::Command::new("buildah");
    rmi.arg("rmi").arg(&tag);
    let _ = run_logged(rmi, "buildah rmi", job).await;
    pushed?;

    let out = out.clone();
    let ref_name = format!("{}/{}", job.app_name, service.name);
    let (removed, digest) = tokio::task::spawn_blocking(move || {
        // buildah keeps the mount targets an image lacked, empty, in its layers.
        let removed = if mounted {
            scrub::remove_empty_targets(
                &layout,
                &[trust::CA_TARGET, trust::PIP_CONF_TARGET],
                |d| out.store.blob_path(d).exists(),
            )?
        } else {
            0
        };
        Ok::<_, BuildError>((removed, import(&out, &layout, &ref_name)?))
    })
    .await
    .map_err(|e| BuildError::Io(std::io::Error::other(e)))??;
    if removed > 0 {
        job.log.note(&format!(
            "removed the {removed} empty file(s) buildah left in the image where the CA bundle and pip.conf were mounted ({}, {})",
            trust::CA_TARGET,
            trust::PIP_CONF_TARGET
        ));
    }
    job.log.note(&format!("imported and signed {digest}"));
    Ok(BuiltImage {
        image_uri: image_uri(&job.app_name, &service.name, &digest),
        digest,
    })
}

/// Runs `buildah build` with the job's CA bundle mounted; returns whether the image was
/// built with it (its layers may then hold the empty mount targets [`scrub`] removes). When
/// it fails, its log says why if it can: a certificate failing verification (the error then
/// names `--build-ca-bundle`), or a `RUN` step replacing the mounted bundle. The latter, with
/// the host's bundle mounted by default, builds once more without it (said in the log), so a
/// Dockerfile that installs `ca-certificates` builds as it would without Slipway.
async fn run_build(
    job: &Job,
    dockerfile: &str,
    dockerfile_path: &Path,
    context: &Path,
    tag: &str,
) -> Result<bool, BuildError> {
    let what = "buildah build";
    let mut bundle = job.ca_bundle.clone();
    // Whether this attempt runs without the bundle because the first one replaced it.
    let mut again = false;
    loop {
        let mut build = tokio::process::Command::new("buildah");
        build.arg("build").arg("--isolation").arg("chroot");
        let mut shown = String::new();
        for (host, target) in trust_mounts(job, bundle.as_ref())? {
            build
                .arg("--volume")
                .arg(format!("{}:{target}:ro", host.display()));
            shown.push_str(&format!("--volume <{}>:{target}:ro ", host.display()));
        }
        build
            .arg("-f")
            .arg(dockerfile_path)
            .arg("-t")
            .arg(tag)
            .arg(context)
            .env("BUILDAH_ISOLATION", "chroot");
        job.log.note(&format!(
            "$ buildah build --isolation chroot {shown}-f {dockerfile} -t {tag} {}",
            job.service.build_context
        ));
        let from = job.log.size();
        let Err(failed) = run_logged(build, what, job).await else {
            return Ok(bundle.is_some());
        };
        let BuildError::Command { .. } = failed else {
            return Err(failed);
        };
        let (verify, busy) = diagnose(job, from);
        match (busy, &bundle) {
            (true, Some(b)) if !b.chosen => {
                job.log.note(&format!(
                    "a RUN step replaces {}, where the host's CA bundle was mounted; building again without it",
                    trust::CA_TARGET
                ));
                bundle = None;
                again = true;
                continue;
            }
            (true, Some(b)) => {
                return Err(BuildError::BundleReplaced {
                    what: what.to_owned(),
                    bundle: b.path.display().to_string(),
                });
            }
            _ => {}
        }
        return Err(match verify {
            Some(line) if again => BuildError::CertificateVerifyUnmounted {
                what: what.to_owned(),
                line,
            },
            Some(line) => BuildError::CertificateVerify {
                what: what.to_owned(),
                line,
                bundle: bundle
                    .as_ref()
                    .map_or_else(|| "none".to_owned(), |b| b.path.display().to_string()),
            },
            None => failed,
        });
    }
}

/// What the build log says from byte `from` (this attempt's start) on: the certificate
/// failure of the step that failed, and whether a `RUN` step hit the mounted bundle.
fn diagnose(job: &Job, from: u64) -> (Option<String>, bool) {
    let mut verify = trust::StepVerifyFailure::default();
    let mut busy = false;
    let _ = job.log.scan_from(from, |line| {
        busy |= trust::bundle_busy(line);
        verify.line(line);
        true
    });
    (verify.found(), busy)
}

/// The `(host file, path in the build)` mounts for `bundle`: the bundle itself and a pip
/// configuration pointing at it.
fn trust_mounts(
    job: &Job,
    bundle: Option<&trust::CaBundle>,
) -> Result<Vec<(std::path::PathBuf, &'static str)>, BuildError> {
    let Some(bundle) = bundle else {
        return Ok(Vec::new());
    };
    // Checked at start-up; a file removed since is said here rather than by buildah.
    if !bundle.path.is_file() {
        return Err(BuildError::Spec(format!(
            "the build CA bundle {} (--build-ca-bundle) is not a readable file",
            bundle.path.display()
        )));
    }
    std::fs::create_dir_all(&job.work)?;
    let pip_conf = job.work.join("pip.conf");
    std::fs::write(
        &pip_conf,
        format!("[global]\ncert = {}\n", trust::CA_TARGET),
    )?;
    Ok(vec![
        (bundle.path.clone(), trust::CA_TARGET),
        (pip_conf, trust::PIP_CONF_TARGET),
    ])
}

/// The base images a Dockerfile starts `FROM` (not `scratch`, not an earlier stage's name,
/// not an `ARG`-substituted reference, which only the build can resolve).
pub fn base_images(dockerfile: &str) -> Vec<String> {
    let mut stages: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in dockerfile.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words
            .first()
            .is_none_or(|w| !w.eq_ignore_ascii_case("FROM"))
        {
            continue;
        }
        let args: Vec<&str> = words[1..]
            .iter()
            .copied()
            .filter(|w| !w.starts_with("--"))
            .collect();
        let Some(image) = args.first() else { continue };
        let lower = image.to_ascii_lowercase();
        let earlier_stage = stages.contains(&lower);
        if let (Some(as_kw), Some(name)) = (args.get(1), args.get(2))
            && as_kw.eq_ignore_ascii_case("AS")
        {
            stages.push(name.to_ascii_lowercase());
        }
        if lower == "scratch" || image.contains('$') || earlier_stage {
            continue;
        }
        if !out.iter().any(|o| o == image) {
            out.push((*image).to_owned());
        }
    }
    out
}

/// Base images of `dockerfile` that buildah has not got and cannot pull (each pull gets
/// [`PULL_TIMEOUT`]); what was tried goes to the build log.
async fn missing_base_images(dockerfile: &str, job: &Job) -> Vec<String> {
    let mut missing = Vec::new();
    for image in base_images(dockerfile) {
        let present = tokio::process::Command::new("buildah")
            .args(["inspect", "--type", "image", &image])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|s| s.success());
        if present {
            continue;
        }
        job.log.note(&format!(
            "base image {image} is not on this machine; trying to pull it"
        ));
        let pulled = tokio::time::timeout(
            PULL_TIMEOUT,
            tokio::process::Command::new("buildah")
                .args(["pull", "--quiet", &image])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .status(),
        )
        .await;
        if !matches!(pulled, Ok(Ok(s)) if s.success()) {
            job.log.note(&format!("cannot pull {image}"));
            missing.push(image);
        }
    }
    missing
}

/// How long one base-image pull may take before the image counts as unreachable.
pub const PULL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Imports the one image of the OCI layout at `layout` into the store and signs it.
pub fn import(out: &Output, layout: &Path, ref_name: &str) -> Result<Digest, BuildError> {
    let index: Index = serde_json::from_slice(&std::fs::read(layout.join("index.json"))?)
        .map_err(|e| ImageError::Document(format!("index.json: {e}")))?;
    let entry = index
        .manifests
        .first()
        .ok_or_else(|| ImageError::Document("index.json lists no image".into()))?;
    let blob = |d: &Digest| layout.join("blobs/sha256").join(d.hex());
    let digest = Digest::parse(&entry.digest)?;
    let manifest = Manifest::parse(&std::fs::read(blob(&digest))?)?;
    let mut parts = vec![Digest::parse(&manifest.config.digest)?];
    for layer in &manifest.layers {
        parts.push(Digest::parse(&layer.digest)?);
    }
    for part in &parts {
        out.store.import_file(&blob(part), part)?;
    }
    out.store.import_file(&blob(&digest), &digest)?;
    let mut descriptor: Descriptor = entry.clone();
    descriptor
        .annotations
        .insert(REF_NAME_ANNOTATION.to_owned(), ref_name.to_owned());
    out.store.add_to_index(&descriptor)?;
    out.key.sign_image(&out.store, &digest)?;
    Ok(digest)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base_images_are_the_from_lines_that_name_images() {
        let dockerfile = "ARG V=3\nFROM python:3.12-slim AS build\nRUN x\nFROM --platform=linux/amd64 build AS again\nFROM scratch\nFROM node:20-slim\nfrom python:3.12-slim\nFROM img:${V}\n";
        assert_eq!(
            super::base_images(dockerfile),
            ["python:3.12-slim", "node:20-slim"]
        );
        assert!(super::base_images("FROM scratch\nCOPY . /app\n").is_empty());
    }

    use std::collections::BTreeMap;

    use super::*;
    use slipway_image::oci::{RunConfig, pack_layer, write_image};
    use slipway_image::{ImageStore, PlatformKey, verify_image};

    #[test]
    fn an_exported_oci_layout_is_imported_checked_and_signed() {
        // An OCI layout like `buildah push … oci:<dir>` writes, made by our own writer.
        let exported = tempfile::tempdir().unwrap();
        let source = ImageStore::open(exported.path()).unwrap();
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(tree.path().join("hello.txt"), "hello").unwrap();
        let layer = pack_layer(&source, tree.path()).unwrap();
        let run = RunConfig {
            cmd: vec!["/hello".into()],
            working_dir: "/".into(),
            env: Vec::new(),
            port: None,
            labels: BTreeMap::new(),
        };
        let manifest = write_image(&source, &[layer], &run, "x/y").unwrap();

        let data = tempfile::tempdir().unwrap();
        let out = Output {
            store: ImageStore::open(data.path()).unwrap(),
            key: PlatformKey::load_or_create(data.path()).unwrap(),
        };
        let digest = import(&out, source.root(), "app/svc").unwrap();
        assert_eq!(digest.as_str(), manifest.digest);
        verify_image(data.path(), digest.as_str()).unwrap();
        assert_eq!(out.store.blob_count().unwrap(), 3);

        // A blob whose content does not match its name is refused.
        let config = Manifest::parse(&source.read_blob(&digest).unwrap())
            .unwrap()
            .config;
        let config_digest = Digest::parse(&config.digest).unwrap();
        std::fs::write(source.blob_path(&config_digest), b"{}").unwrap();
        let other = tempfile::tempdir().unwrap();
        let out = Output {
            store: ImageStore::open(other.path()).unwrap(),
            key: PlatformKey::load_or_create(other.path()).unwrap(),
        };
        assert!(matches!(
            import(&out, source.root(), "app/svc"),
            Err(BuildError::Image(ImageError::DigestMismatch { .. }))
        ));
    }
}
