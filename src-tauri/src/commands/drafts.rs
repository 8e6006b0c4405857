//! Draft commands: the care forms' drafts (the enrollment form, each missing-information
//! request's form) of the environment in use, sealed and kept by the toolkit
//! (`slipway_care_client::draft`). The key store may block (the keyring is a D-Bus call, and
//! may raise its unlock prompt), so each runs on a blocking thread.

use std::sync::Arc;

use serde_json::Value;
use slipway_care_client::Failure;
use slipway_care_client::draft::{Draft, DraftError, DraftKind, Drafts, LoadAnswer, SaveAnswer};

use super::selection::Selection;

fn failure(e: DraftError) -> Failure {
    match e {
        DraftError::Kind(e) => Failure::invalid("kind", e.to_string()),
        other => Failure::unavailable(other.to_string()),
    }
}

/// The draft `kind` names, in the environment in use.
fn draft(selection: &Selection, kind: &str, uuid: Option<&str>) -> Result<Draft, DraftError> {
    Ok(Draft::new(
        selection.current().as_deref(),
        DraftKind::parse(kind, uuid)?,
    )?)
}

async fn blocking<T: Send + 'static>(
    (drafts, selection): (&Arc<Drafts>, &Selection),
    kind: &str,
    uuid: Option<&str>,
    work: impl FnOnce(&Drafts, Draft) -> Result<T, DraftError> + Send + 'static,
) -> Result<T, Failure> {
    let draft = draft(selection, kind, uuid).map_err(failure)?;
    let drafts = Arc::clone(drafts);
    tauri::async_runtime::spawn_blocking(move || work(&drafts, draft).map_err(failure))
        .await
        .map_err(|e| Failure::unavailable(format!("the draft call stopped unexpectedly: {e}")))?
}

/// The form's saved draft: `{document, saved_at, not_restored, key_unavailable, key_store,
/// key_notice}` (`document` null when there is none; `not_restored` set when one did not open
/// and was removed; `key_unavailable` when one is kept but its key cannot be read now).
/// `kind` is `enrollment` or `missing_info` (with the request's `uuid`).
#[tauri::command]
pub async fn care_draft_load(
    drafts: tauri::State<'_, Arc<Drafts>>,
    selection: tauri::State<'_, Arc<Selection>>,
    kind: String,
    uuid: Option<String>,
) -> Result<LoadAnswer, Failure> {
    blocking((&drafts, &selection), &kind, uuid.as_deref(), |d, k| {
        d.load(&k).map(LoadAnswer::from)
    })
    .await
}

/// Saves the form's draft, sealed: `{saved_at, key_store, key_notice}`.
#[tauri::command]
pub async fn care_draft_save(
    drafts: tauri::State<'_, Arc<Drafts>>,
    selection: tauri::State<'_, Arc<Selection>>,
    kind: String,
    uuid: Option<String>,
    document: Value,
) -> Result<SaveAnswer, Failure> {
    blocking(
        (&drafts, &selection),
        &kind,
        uuid.as_deref(),
        move |d, k| d.save(&k, &document),
    )
    .await
}

/// Forgets the form's draft.
#[tauri::command]
pub async fn care_draft_clear(
    drafts: tauri::State<'_, Arc<Drafts>>,
    selection: tauri::State<'_, Arc<Selection>>,
    kind: String,
    uuid: Option<String>,
) -> Result<(), Failure> {
    blocking((&drafts, &selection), &kind, uuid.as_deref(), |d, k| {
        d.clear(&k)
    })
    .await
}
