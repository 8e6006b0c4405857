//! The buildah builder: builds the service's Dockerfile with
//! `buildah build --isolation chroot`, exports the image as an OCI layout with
//! `buildah push <tag> oci:<dir>`, and imports its blobs (each checked against its digest)
//! into the platform's store, where the manifest is signed like any other image.

use std::path::Path;
use std::process::Stdio;

use super::{
    BuildError, BuiltImage, Job, Output, image_uri, prepare_sources, project_dir, run_logged,
};
use slipway_image::oci::{Descriptor, Index, Manifest, REF_NAME_ANNOTATION};
use slipway_image::{Digest, ImageError};

/// Whether `buildah` is on `PATH` and runs (`buildah --version` succeeds).
pub fn available() -> bool {
    std::process::Command::new("buildah")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
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
    let tag = format!(
        "{}/{}/{}:{}",
        super::IMAGE_HOST,
        job.app_name,
        service.name,
        job.build_id
    );
    let layout = job.work.join("oci");

    let mut build = tokio::process::Command::new("buildah");
    build
        .arg("build")
        .arg("--isolation")
        .arg("chroot")
        .arg("-f")
        .arg(&dockerfile_path)
        .arg("-t")
        .arg(&tag)
        .arg(&context)
        .env("BUILDAH_ISOLATION", "chroot");
    job.log.note(&format!(
        "$ buildah build --isolation chroot -f {dockerfile} -t {tag} {}",
        service.build_context
    ));
    run_logged(build, "buildah build", job).await?;

    let mut push = tokio::process::Command::new("buildah");
    push.arg("push")
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
    let digest = tokio::task::spawn_blocking(move || import(&out, &layout, &ref_name))
        .await
        .map_err(|e| BuildError::Io(std::io::Error::other(e)))??;
    job.log.note(&format!("imported and signed {digest}"));
    Ok(BuiltImage {
        image_uri: image_uri(&job.app_name, &service.name, &digest),
        digest,
    })
}

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
