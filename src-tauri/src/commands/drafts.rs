//! Draft commands: the care forms' drafts (the enrollment form, each missing-information
//! request's form), sealed and kept by the toolkit (`slipway_toolkit::care::draft`). The key
//! store may block (the keyring is a D-Bus call), so each runs on a blocking thread.

use std::sync::Arc;

use serde_json::Value;
use slipway_toolkit::care::Failure;
use slipway_toolkit::care::draft::{DraftError, DraftKind, Drafts, LoadAnswer, SaveAnswer};

fn failure(e: DraftError) -> Failure {
    match e {
        DraftError::Kind(e) => Failure::invalid("kind", e.to_string()),
        other => Failure::unavailable(other.to_string()),
    }
}

async fn blocking<T: Send + 'static>(
    drafts: &Arc<Drafts>,
    kind: &str,
    uuid: Option<&str>,
    work: impl FnOnce(&Drafts, DraftKind) -> Result<T, DraftError> + Send + 'static,
) -> Result<T, Failure> {
    let kind = DraftKind::parse(kind, uuid).map_err(|e| failure(e.into()))?;
    let drafts = Arc::clone(drafts);
    tauri::async_runtime::spawn_blocking(move || work(&drafts, kind).map_err(failure))
        .await
        .map_err(|e| Failure::unavailable(format!("the draft call stopped unexpectedly: {e}")))?
}

/// The form's saved draft: `{document, saved_at, not_restored, key_store, key_notice}`
/// (`document` null when there is none; `not_restored` set when one did not open and was
/// removed). `kind` is `enrollment` or `missing_info` (with the request's `uuid`).
#[tauri::command]
pub async fn care_draft_load(
    drafts: tauri::State<'_, Arc<Drafts>>,
    kind: String,
    uuid: Option<String>,
) -> Result<LoadAnswer, Failure> {
    blocking(&drafts, &kind, uuid.as_deref(), |d, k| {
        d.load(&k).map(LoadAnswer::from)
    })
    .await
}

/// Saves the form's draft, sealed: `{saved_at, key_store, key_notice}`.
#[tauri::command]
pub async fn care_draft_save(
    drafts: tauri::State<'_, Arc<Drafts>>,
    kind: String,
    uuid: Option<String>,
    document: Value,
) -> Result<SaveAnswer, Failure> {
    blocking(&drafts, &kind, uuid.as_deref(), move |d, k| {
        d.save(&k, &document)
    })
    .await
}

/// Forgets the form's draft.
#[tauri::command]
pub async fn care_draft_clear(
    drafts: tauri::State<'_, Arc<Drafts>>,
    kind: String,
    uuid: Option<String>,
) -> Result<(), Failure> {
    blocking(&drafts, &kind, uuid.as_deref(), |d, k| d.clear(&k)).await
}
