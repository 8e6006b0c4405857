//! Generates the Tauri context and the permissions of the app's own commands.

/// Every command of `src/commands`, so each gets an `allow-…` permission.
const COMMANDS: &[&str] = &[
    "open_url",
    "list_tools",
    "call_tool",
    "forget_app_file",
    "check_new_app",
    "environment",
    "dismiss_welcome",
    "environments",
    "sign_in",
    "use_environment",
    "sign_out",
    "care_missing_info",
    "care_submit_missing_info",
    "care_enrollment_options",
    "care_check_enrollment",
    "care_enroll",
    "care_load_draft",
    "care_save_draft",
    "care_clear_draft",
    "care_users",
    "care_create_user",
    "care_set_permissions",
    "care_delete_user",
    "app_deployments",
    "app_deployment_diff",
    "app_rollback",
    "app_diagnosis",
    "app_builds",
    "build_log",
    "build_start",
    "build_poll",
    "dev_start",
    "dev_poll",
    "dev_stop",
    "devfile_watch",
    "devfile_latest",
    "ui_ready",
    "me",
    "people_list",
    "people_invite",
    "people_invites",
    "people_revoke_invite",
    "people_set_role",
    "people_remove",
    "people_audit",
    "tokens_list",
    "tokens_create",
    "tokens_revoke",
    "join_with_invite",
    "sso_status",
    "sso_sign_in",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build script");
}
