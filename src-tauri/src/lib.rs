//! The Slipway desktop shell: a window over the UI in `ui/`, and thin commands that hand
//! tool calls to the toolkit and care calls to the care client. Architecture invariant: only
//! this crate knows Tauri, and it holds no business rule.

pub mod commands;

use std::path::PathBuf;
use std::sync::Arc;

use tauri::Manager as _;

/// The desktop's own files (the enrollment draft, the welcome marker):
/// `$XDG_DATA_HOME/slipway/desktop`, beside the embedded platform's and care's directories.
pub fn desktop_data_dir() -> PathBuf {
    slipway_care::embedded::default_data_dir()
        .parent()
        .map(|p| p.join("desktop"))
        .unwrap_or_else(|| PathBuf::from("desktop"))
}

/// Builds the app on any runtime (the real one, or Tauri's mock runtime in tests). With no
/// platform configured, platform tools use an embedded one under the user's data directory;
/// with no care service configured, care commands use an embedded one with the demo data.
pub fn build_app<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .manage(commands::tools::Tools::new(
            slipway_platform::embedded::default_data_dir(),
        ))
        .manage(commands::dev::DevSessions::default())
        .manage(commands::build::Builds::default())
        .manage(commands::dev::WatchedDevfile::default())
        .manage(Arc::new(commands::care::Care::new(
            slipway_care::embedded::default_data_dir(),
            desktop_data_dir(),
        )))
        .invoke_handler(tauri::generate_handler![
            commands::tools::list_tools,
            commands::tools::call_tool,
            commands::env::environment,
            commands::env::dismiss_welcome,
            commands::care::care_missing_info,
            commands::care::care_submit_missing_info,
            commands::care::care_enrollment_options,
            commands::care::care_check_enrollment,
            commands::care::care_enroll,
            commands::care::care_load_draft,
            commands::care::care_save_draft,
            commands::care::care_clear_draft,
            commands::care::care_users,
            commands::care::care_create_user,
            commands::care::care_set_permissions,
            commands::care::care_delete_user,
            commands::history::app_deployments,
            commands::history::app_deployment_diff,
            commands::history::app_rollback,
            commands::history::app_diagnosis,
            commands::build::build_start,
            commands::build::build_poll,
            commands::dev::dev_start,
            commands::dev::dev_poll,
            commands::dev::dev_stop,
            commands::dev::devfile_watch,
            commands::dev::devfile_latest,
        ])
}

/// Starts the desktop app; on exit, stops the embedded platform (and the apps it runs) and
/// the embedded care service.
pub fn run() {
    build_app(tauri::Builder::default())
        .build(tauri::generate_context!())
        .expect("the Slipway window could not start (is a display available?)")
        .run(|app, event| {
            if let tauri::RunEvent::Exit = event {
                app.state::<commands::dev::DevSessions>().shutdown();
                app.state::<commands::tools::Tools>().shutdown();
                app.state::<Arc<commands::care::Care>>().shutdown();
            }
        });
}
