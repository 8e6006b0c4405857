//! Generates the Tauri context and the permissions of the app's own commands.

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(&["list_tools", "call_tool"])),
    )
    .expect("tauri build script");
}
