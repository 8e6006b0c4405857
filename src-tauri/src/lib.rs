//! The Slipway desktop shell: a window over the UI in `ui/`, and thin commands that hand
//! tool calls to the toolkit. Architecture invariant: only this crate knows Tauri, and it
//! holds no business rule.

pub mod commands;

use tauri::Manager as _;

/// Builds the app on any runtime (the real one, or Tauri's mock runtime in tests). With no
/// platform configured, platform tools use an embedded one under the user's data directory.
pub fn build_app<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .manage(commands::tools::Tools::new(
            slipway_platform::embedded::default_data_dir(),
        ))
        .invoke_handler(tauri::generate_handler![
            commands::tools::list_tools,
            commands::tools::call_tool
        ])
}

/// Starts the desktop app; on exit, stops the embedded platform and the apps it runs.
pub fn run() {
    build_app(tauri::Builder::default())
        .build(tauri::generate_context!())
        .expect("the Slipway window could not start (is a display available?)")
        .run(|app, event| {
            if let tauri::RunEvent::Exit = event {
                app.state::<commands::tools::Tools>().shutdown();
            }
        });
}
