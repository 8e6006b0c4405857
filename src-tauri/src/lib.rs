//! The Slipway desktop shell: a window over the UI in `ui/`, and thin commands that hand
//! tool calls to the toolkit. Architecture invariant: only this crate knows Tauri, and it
//! holds no business rule.

pub mod commands;

/// Builds the app on any runtime (the real one, or Tauri's mock runtime in tests).
pub fn build_app<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.invoke_handler(tauri::generate_handler![
        commands::tools::list_tools,
        commands::tools::call_tool
    ])
}

/// Starts the desktop app.
pub fn run() {
    build_app(tauri::Builder::default())
        .run(tauri::generate_context!())
        .expect("the Slipway window could not start (is a display available?)");
}
