//! Tauri commands, one module per domain.

pub mod browser;
pub mod build;
pub mod care;
pub mod dev;
pub mod drafts;
pub mod env;
pub mod history;
pub mod jobs;
pub mod links;
pub mod notifications;
pub mod people;
pub mod resources;
mod run;
pub mod selection;
pub mod startup;
pub mod tools;
pub mod worklist;

/// Every command the window may invoke, in one list beside the modules that define them
/// (so the shell's builder stays short as commands are added).
pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    tauri::generate_handler![
        tools::list_tools,
        tools::call_tool,
        tools::forget_app_file,
        tools::check_new_app,
        env::environment,
        env::dismiss_welcome,
        env::set_home_view,
        env::environments,
        env::sign_in,
        env::use_environment,
        env::sign_out,
        care::care_missing_info,
        care::care_submit_missing_info,
        care::care_answer,
        care::care_amend_missing_info,
        care::care_enrollment_options,
        care::care_check_enrollment,
        care::care_enroll,
        drafts::care_draft_load,
        drafts::care_draft_save,
        drafts::care_draft_clear,
        care::care_users,
        care::care_create_user,
        care::care_set_permissions,
        care::care_delete_user,
        history::app_deployments,
        history::app_deployment_diff,
        history::app_rollback,
        history::app_diagnosis,
        history::app_builds,
        history::build_log,
        resources::app_resources,
        resources::resource_credentials,
        resources::resource_rotate,
        resources::resource_destroy,
        jobs::app_jobs,
        jobs::job_runs,
        jobs::job_run_now,
        jobs::job_run_log,
        notifications::notify_events,
        notifications::notify_channels,
        notifications::notify_add_channel,
        notifications::notify_test_channel,
        notifications::notify_remove_channel,
        notifications::notify_subscriptions,
        notifications::notify_subscribe,
        notifications::notify_unsubscribe,
        notifications::notify_deliveries,
        build::build_start,
        build::build_poll,
        dev::dev_start,
        dev::dev_poll,
        dev::dev_stop,
        dev::devfile_watch,
        dev::devfile_latest,
        startup::ui_ready,
        browser::open_url,
        links::take_links,
        people::me,
        people::people_list,
        people::people_invite,
        people::people_invites,
        people::people_revoke_invite,
        people::people_set_role,
        people::people_remove,
        people::people_audit,
        people::tokens_list,
        people::tokens_create,
        people::tokens_revoke,
        people::grants_list,
        people::grants_approve,
        people::grants_revoke,
        people::join_with_invite,
        people::sso_status,
        people::sso_sign_in,
        worklist::care_me,
        worklist::care_worklist,
        worklist::care_task,
        worklist::care_claim,
        worklist::care_release,
        worklist::care_watch_events,
    ]
}
