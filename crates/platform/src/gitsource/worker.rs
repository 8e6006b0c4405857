//! The loop that serves every source: a deploy waiting is fetched (the ref's tip: a newer
//! push than the event's is what gets built), its devfile's directory packed and checked
//! like an upload, and its builds queued with the commit they come from; a source that
//! polls asks its repository for the branch's tip when due and, on a commit not seen
//! before, leaves a deploy waiting. Whatever fails is a failed deployment with the reason.
//! Builds are watched to their end, so a failed build is one too.

use std::time::Duration;

use slipway_devfile::Devfile;
use slipway_git::{Fetcher, GitErrorKind, RemoteUrl};
use slipway_runtime::build::context::{ContextError, Encoding};

use super::GitSources;
use super::events::short;
use crate::db::now_millis;
use crate::jobs::ContextCheck;
use crate::model::BuildStatus;
use crate::store::builds::{self, NewBuild};
use crate::store::git::{self as store, GitSourceRow, LastCommit};
use crate::store::{apps, deployments};

/// How long the loop sleeps when nothing wakes it (the polling's resolution).
const TICK: Duration = Duration::from_secs(5);

pub(super) async fn run(sources: GitSources) {
    loop {
        if let Err(e) = pass(&sources).await {
            tracing::warn!(error = %e, "git sources: a pass failed; trying again");
        }
        tokio::select! {
            () = sources.inner.wake.notified() => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

async fn pass(sources: &GitSources) -> Result<(), sqlx::Error> {
    let rows = {
        let mut tx = sources.inner.db.begin_read().await?;
        let rows = store::all(&mut tx).await?;
        tx.commit().await?;
        rows
    };
    for row in rows {
        if row.pending_ref.is_some() {
            attempt(sources, &row).await?;
        } else if poll_due(&row) {
            poll(sources, &row).await?;
        }
    }
    Ok(())
}

fn poll_due(row: &GitSourceRow) -> bool {
    row.poll_seconds.is_some_and(|every| {
        row.polled_at
            .is_none_or(|at| now_millis() - at >= every.saturating_mul(1000))
    })
}

/// A failure with the commit it concerns (when the fetch got that far).
struct Failure {
    reason: String,
    commit: Option<LastCommit>,
    devfile: String,
}

/// Asks the repository for the branch's tip; a commit not attempted before is left waiting.
async fn poll(sources: &GitSources, row: &GitSourceRow) -> Result<(), sqlx::Error> {
    let head = match (RemoteUrl::parse(&row.repo_url), sources.credential(row)) {
        (Ok(remote), Ok(credential)) => {
            let cache = sources.cache(&row.app_id);
            Fetcher::new(&cache, &remote, &credential)
                .head(&row.branch)
                .await
                .map_err(|e| e.message)
        }
        (Err(e), _) => Err(e.to_string()),
        (_, Err(e)) => Err(e),
    };
    let mut tx = sources.inner.db.begin_write().await?;
    store::polled(&mut tx, &row.app_id).await?;
    match head {
        Ok(sha) if row.last.as_ref().is_none_or(|l| l.sha != sha) => {
            store::set_pending(
                &mut tx,
                &row.app_id,
                &format!("refs/heads/{}", row.branch),
                Some(&sha),
                "poll",
            )
            .await?;
            tx.commit().await?;
            tracing::info!(app_id = %row.app_id, commit = short(&sha), "polling found a new commit");
            sources.wake();
        }
        Ok(_) => tx.commit().await?,
        Err(reason) => {
            store::finish_attempt(&mut tx, &row.app_id, None, None, Some(&reason)).await?;
            tx.commit().await?;
        }
    }
    Ok(())
}

/// Fetches, packs, checks and queues the waiting deploy of `row`.
async fn attempt(sources: &GitSources, row: &GitSourceRow) -> Result<(), sqlx::Error> {
    let refname = row.pending_ref.clone().unwrap_or_default();
    let context_id = uuid::Uuid::new_v4().to_string();
    let context_path = sources
        .inner
        .runner
        .context_path(&context_id, Encoding::Zstd);
    match prepare(sources, row, &refname, &context_path).await {
        Ok((commit, devfile_text, devfile)) => {
            let queued = queue(sources, row, &commit, &devfile_text, &devfile, &context_id).await;
            match queued {
                Ok(ids) => {
                    for id in &ids {
                        sources.inner.runner.enqueue(id.clone());
                    }
                    tracing::info!(app_id = %row.app_id, commit = short(&commit.sha), builds = ids.len(), "git deploy queued its builds");
                    let (me, app_id) = (sources.clone(), row.app_id.clone());
                    tokio::spawn(
                        async move { watch(&me, &app_id, ids, commit, devfile_text).await },
                    );
                }
                Err(e) => {
                    let _ = std::fs::remove_file(&context_path);
                    return Err(e);
                }
            }
        }
        Err(failure) => {
            let _ = std::fs::remove_file(&context_path);
            tracing::info!(app_id = %row.app_id, reason = %failure.reason, "git deploy failed");
            let mut tx = sources.inner.db.begin_write().await?;
            if apps::get(&mut tx, &row.app_id).await?.is_some() {
                deployments::record_failed(
                    &mut tx,
                    &row.app_id,
                    &failure.devfile,
                    &failure.reason,
                    failure.commit.as_ref(),
                )
                .await?;
                store::finish_attempt(
                    &mut tx,
                    &row.app_id,
                    row.pending_at,
                    failure.commit.as_ref(),
                    Some(&failure.reason),
                )
                .await?;
            }
            tx.commit().await?;
        }
    }
    Ok(())
}

/// The commit fetched and packed at `context_path`, with its checked devfile.
async fn prepare(
    sources: &GitSources,
    row: &GitSourceRow,
    refname: &str,
    context_path: &std::path::Path,
) -> Result<(LastCommit, String, Devfile), Failure> {
    let fail = |reason: String, commit: Option<&LastCommit>| Failure {
        reason,
        commit: commit.cloned(),
        devfile: String::new(),
    };
    let remote =
        RemoteUrl::parse(&row.repo_url).map_err(|e| fail(format!("repo_url: {e}"), None))?;
    let credential = sources.credential(row).map_err(|e| fail(e, None))?;
    let cache = sources.cache(&row.app_id);
    let fetcher = Fetcher::new(&cache, &remote, &credential);
    let fetched = fetcher
        .fetch(refname)
        .await
        .map_err(|e| fail(fetch_reason(&remote, &e), None))?;
    let commit = LastCommit {
        sha: fetched.sha.clone(),
        branch: refname
            .strip_prefix("refs/heads/")
            .unwrap_or(refname)
            .to_owned(),
        author: fetched.author,
        subject: fetched.subject,
    };
    std::fs::create_dir_all(sources.inner.runner.contexts_dir())
        .map_err(|e| fail(format!("cannot keep the build context: {e}"), Some(&commit)))?;
    fetcher
        .archive(&commit.sha, &row.path, context_path)
        .await
        .map_err(|e| fail(e.message, Some(&commit)))?;
    let checked = sources
        .inner
        .runner
        .check_context(context_path, Encoding::Zstd)
        .await
        .map_err(|e| match e {
            ContextCheck::Context(ContextError::NoDevfile) => fail(
                format!(
                    "commit {} has no devfile.yaml in {}",
                    short(&commit.sha),
                    if row.path.is_empty() {
                        "the repository's root".to_owned()
                    } else {
                        format!("{:?}", row.path)
                    }
                ),
                Some(&commit),
            ),
            ContextCheck::Context(other) => {
                fail(format!("the commit's files: {other}"), Some(&commit))
            }
            ContextCheck::Invalid { errors, devfile } => Failure {
                reason: format!(
                    "the devfile of commit {} is not valid: {}",
                    short(&commit.sha),
                    errors.join("; ")
                ),
                commit: Some(commit.clone()),
                devfile,
            },
        })?;
    if let Some(problem) = checked
        .devfile
        .services()
        .iter()
        .find_map(|s| sources.inner.runner.unbuildable(s))
    {
        return Err(Failure {
            reason: problem,
            commit: Some(commit),
            devfile: checked.devfile_text,
        });
    }
    Ok((commit, checked.devfile_text, checked.devfile))
}

/// A fetch failure in words a person acts on.
fn fetch_reason(remote: &RemoteUrl, e: &slipway_git::GitError) -> String {
    let said = &e.message;
    match e.kind {
        GitErrorKind::Unauthorized => format!(
            "{} refused the credential (a revoked or mistyped token, or a deploy key not added to the repository): {said}",
            remote.host()
        ),
        GitErrorKind::RepoNotFound => format!(
            "{} has no repository at {} (or hides it from this credential): {said}",
            remote.host(),
            remote
        ),
        GitErrorKind::Unreachable => format!("cannot reach {}: {said}", remote.host()),
        _ => said.clone(),
    }
}

/// The builds of `commit`, queued for every service with the devfile as the app's, and the
/// deploy marked done, in one transaction.
async fn queue(
    sources: &GitSources,
    row: &GitSourceRow,
    commit: &LastCommit,
    devfile_text: &str,
    devfile: &Devfile,
    context_id: &str,
) -> Result<Vec<String>, sqlx::Error> {
    let mut tx = sources.inner.db.begin_write().await?;
    if apps::get(&mut tx, &row.app_id).await?.is_none() {
        return Ok(Vec::new());
    }
    apps::set_devfile(&mut tx, &row.app_id, devfile_text).await?;
    let builder = sources.inner.runner.builder().as_str();
    let mut ids = Vec::new();
    for service in devfile.services() {
        let id = builds::insert(
            &mut tx,
            &NewBuild {
                app_id: &row.app_id,
                service: &service.name,
                builder,
                devfile: devfile_text,
                context_id,
                context_encoding: Encoding::Zstd.as_str(),
                created_by: &row.created_by,
            },
        )
        .await?;
        builds::set_commit(&mut tx, &id, commit).await?;
        ids.push(id);
    }
    store::finish_attempt(&mut tx, &row.app_id, row.pending_at, Some(commit), None).await?;
    tx.commit().await?;
    Ok(ids)
}

/// Waits for the builds' end; a failed or cancelled one is a failed deployment with its
/// reason (the succeeded ones deploy as after any upload).
async fn watch(
    sources: &GitSources,
    app_id: &str,
    ids: Vec<String>,
    commit: LastCommit,
    devfile: String,
) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let Ok(mut tx) = sources.inner.db.begin_read().await else {
            continue;
        };
        let mut done = true;
        let mut failed = None;
        for id in &ids {
            match builds::get(&mut tx, id).await {
                Ok(Some(b)) => match b.status {
                    BuildStatus::Queued | BuildStatus::InProgress => done = false,
                    BuildStatus::Failed | BuildStatus::Cancelled => {
                        failed.get_or_insert(format!(
                            "the build of service {} {}: {}",
                            b.service,
                            b.status.as_str(),
                            b.error.unwrap_or_default()
                        ));
                    }
                    BuildStatus::Succeeded => {}
                },
                // Deleted with its app.
                Ok(None) => return,
                Err(_) => done = false,
            }
        }
        let _ = tx.commit().await;
        if !done {
            continue;
        }
        if let Some(reason) = failed {
            let recorded = async {
                let mut tx = sources.inner.db.begin_write().await?;
                deployments::record_failed(&mut tx, app_id, &devfile, &reason, Some(&commit))
                    .await?;
                store::finish_attempt(&mut tx, app_id, None, None, Some(&reason)).await?;
                tx.commit().await
            }
            .await;
            if let Err(e) = recorded {
                tracing::warn!(app_id, error = %e, "cannot record a failed git deploy");
            }
        }
        return;
    }
}
