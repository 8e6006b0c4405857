//! Deleting an app with everything it has: its rows (builds, deployments, secrets,
//! resources, domains, git source, access) in the caller's transaction, then, once that
//! committed, its processes, unpacked images, logs, resources' data and build jobs. One
//! place, because an app is deleted by a person (`DELETE /v1/apps/{id}`) and by the
//! platform itself (a pull request's preview when the pull request closes; previews with
//! their app).

use crate::deploy::Deployer;
use crate::jobs::Runner;
use crate::store::{apps, builds, deployments};

/// What is left to clean once the rows are gone.
#[derive(Debug)]
pub struct Teardown {
    /// The app.
    pub app_id: String,
    build_ids: Vec<String>,
    resources: Vec<crate::store::resources::ResourceRow>,
    deployment_ids: Vec<String>,
}

/// Deletes the rows of `app_id` in `tx`; `None` when there was no such app.
pub async fn delete_rows(
    tx: &mut crate::db::Tx,
    app_id: &str,
) -> Result<Option<Teardown>, sqlx::Error> {
    let build_ids = builds::ids_of_app(tx, app_id).await?;
    let resources = crate::store::resources::of_app(tx, app_id).await?;
    let deployment_ids: Vec<String> = deployments::of_app_newest_first(tx, app_id)
        .await?
        .into_iter()
        .map(|d| d.id)
        .collect();
    if !apps::delete(tx, app_id).await? {
        return Ok(None);
    }
    Ok(Some(Teardown {
        app_id: app_id.to_owned(),
        build_ids,
        resources,
        deployment_ids,
    }))
}

impl Teardown {
    /// After the rows' deletion committed: stops every process of the app (and any
    /// deployment still starting), removes its unpacked images and runtime logs, destroys its
    /// resources' data, cancels its builds and removes their logs.
    pub async fn finish(self, deployer: &Deployer, runner: &Runner) {
        deployer.remove(&self.app_id, &self.deployment_ids).await;
        deployer.resources().destroy_app(&self.resources).await;
        for build_id in &self.build_ids {
            runner.cancel(build_id);
            let log = runner.log(build_id);
            if let Some(dir) = log.path().parent() {
                let _ = tokio::fs::remove_dir_all(dir).await;
            }
        }
        let _ =
            tokio::fs::remove_dir_all(crate::data_dir::git_cache(&runner.data_dir(), &self.app_id))
                .await;
    }
}
