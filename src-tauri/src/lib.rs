//! The Slipway desktop shell: a window over the UI in `ui/`, and thin commands that hand
//! tool calls to the toolkit and care calls to the care client. Architecture invariant: only
//! this crate knows Tauri, and it holds no business rule.

pub mod commands;
#[cfg(test)]
mod layers;

use std::path::PathBuf;
use std::sync::Arc;

use tauri::Manager as _;

/// The desktop's own files (the care forms' sealed drafts, the welcome marker):
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
    let selection = Arc::new(commands::selection::Selection::load(&desktop_data_dir()));
    builder
        .manage(Arc::clone(&selection))
        .manage(commands::tools::Tools::new(
            slipway_platform::embedded::default_data_dir(),
            Arc::clone(&selection),
        ))
        .manage(Arc::new(slipway_care_client::draft::Drafts::open(
            &desktop_data_dir(),
        )))
        .manage(commands::dev::DevSessions::default())
        .manage(commands::build::Builds::default())
        .manage(commands::dev::WatchedDevfile::default())
        .manage(commands::links::Links::default())
        .manage(commands::worklist::Worklist::default())
        .manage(Arc::new(commands::care::Care::new(
            slipway_care::embedded::default_data_dir(),
            desktop_data_dir(),
            selection,
        )))
        .plugin(tauri_plugin_deep_link::init())
        .plugin(tauri_plugin_notification::init())
        .setup(|app| {
            if let Some(window) = app.get_webview_window("main") {
                lean_webview(&window);
            }
            commands::links::listen(app.handle());
            commands::worklist::open_on_click(app.handle());
            // A switch of environment stops the worklist's subscription to the old service.
            let handle = app.handle().clone();
            app.state::<Arc<commands::selection::Selection>>()
                .on_set(move || handle.state::<commands::worklist::Worklist>().shutdown());
            Ok(())
        })
        .invoke_handler(commands::handler())
}

/// WebKitGTK's settings for a forms-and-tables window: no GPU compositing (its buffers were
/// 70 MB of the web process's memory, for a UI that does not animate) and the document-viewer
/// cache model (no page cache for back/forward navigation the app never does). Measured with
/// `scripts/bench-desktop.py` (BENCHMARKS.md).
/// `SLIPWAY_WEBVIEW_DEFAULTS=1` keeps WebKit's defaults: WebKitWebDriver's screenshots hang
/// on some pages without compositing, so the run that takes the documentation's screenshots
/// sets it (scripts/desktop-e2e.sh with SCREENSHOT_DIR).
fn lean_webview<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    if std::env::var_os("SLIPWAY_WEBVIEW_DEFAULTS").is_some_and(|v| v == "1") {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let applied = window.with_webview(|webview| {
            use webkit2gtk::{SettingsExt as _, WebContextExt as _, WebViewExt as _};
            let view = webview.inner();
            if let Some(settings) = view.settings() {
                settings.set_hardware_acceleration_policy(
                    webkit2gtk::HardwareAccelerationPolicy::Never,
                );
                // The UI draws nothing with WebGL, and a WebGL context would set up GL (with
                // Mesa's software driver, libLLVM) in the web process for it.
                settings.set_enable_webgl(false);
            }
            if let Some(context) = view.context() {
                context.set_cache_model(webkit2gtk::CacheModel::DocumentViewer);
            }
        });
        if let Err(e) = applied {
            eprintln!("slipway: the window's WebKit settings could not be applied: {e}");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = window;
}

/// WebKit and GTK settings that exist only as environment variables, read when WebKit starts
/// its processes and when GTK opens the display: no DMA-BUF renderer (the window composites
/// nothing on the GPU anyway, see [`lean_webview`]), no JavaScript JIT (a forms UI does not
/// need it) and no GDK OpenGL (GTK would otherwise set up GLX in the app's process, with
/// Mesa's software driver, for a window that draws nothing with GL) and a named DRM render
/// node: WebKit's UI process otherwise opens an EGL display (Mesa, and with its software
/// driver libLLVM: 17 MiB) only to ask it which GPU device the web process should use for
/// GBM buffers, which the disabled DMA-BUF renderer never allocates; with the device named,
/// it asks nothing. `/dev/dri/renderD128` is the first render node, the right one on most
/// machines with a GPU. Together they take 45 MiB off the window's memory (BENCHMARKS.md).
/// The apps the embedded platform starts get an environment of their own (the runtime
/// clears it), so they are unaffected.
#[cfg(target_os = "linux")]
const LEAN_ENV: &[(&str, &str)] = &[
    ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
    ("JSC_useJIT", "0"),
    ("GDK_GL", "disable"),
    ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/dri/renderD128"),
];

/// Names the [`LEAN_ENV`] variables that [`relaunch_lean`] added (comma-separated), so that
/// programs Slipway starts for the user, such as the browser, can be given the environment
/// without them ([`commands::browser`]).
pub const LEAN_ENV_MARKER: &str = "SLIPWAY_LEAN_ENV";

/// The variables [`relaunch_lean`] added to this process's environment (none the user set).
pub fn lean_env_added() -> Vec<String> {
    std::env::var(LEAN_ENV_MARKER)
        .map(|v| {
            v.split(',')
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Re-executes this program with [`LEAN_ENV`] set (a variable the user set is kept), unless
/// `SLIPWAY_WEBVIEW_DEFAULTS=1`. Setting them in-process would need `unsafe` (`set_var`
/// while other threads may read the environment); `exec` keeps the process id, so WebDriver
/// and process managers see one process. Returns only when nothing needs changing, or when
/// the exec failed (then WebKit's defaults apply and stderr says so).
pub fn relaunch_lean() {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt as _;
        if std::env::var_os("SLIPWAY_WEBVIEW_DEFAULTS").is_some_and(|v| v == "1") {
            return;
        }
        let missing: Vec<&(&str, &str)> = LEAN_ENV
            .iter()
            .filter(|(k, _)| std::env::var_os(k).is_none())
            .collect();
        if missing.is_empty() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut command = std::process::Command::new(exe);
        command.args(std::env::args_os().skip(1));
        for (k, v) in &missing {
            command.env(k, v);
        }
        let added: Vec<&str> = missing.iter().map(|(k, _)| *k).collect();
        command.env(LEAN_ENV_MARKER, added.join(","));
        let error = command.exec();
        eprintln!(
            "slipway: could not restart with the lean WebKit settings ({error}); WebKit's defaults apply"
        );
    }
}

/// Starts the desktop app; on exit, stops the embedded platform (and the apps it runs) and
/// the embedded care service. One window per user: the single-instance plugin comes first,
/// so a second start hands its arguments (a `slipway://` link) to the running window, which
/// comes to the front, and exits before anything else is set up.
pub fn run() {
    let single = tauri_plugin_single_instance::init(|app, args, _cwd| {
        // Readable links reached the deep-link plugin already (the "deep-link" feature).
        if let Some(raw) = commands::links::unreadable_link(args) {
            commands::links::arrived(app, &raw);
        }
        commands::links::bring_to_front(app);
    });
    build_app(tauri::Builder::default().plugin(single))
        .build(tauri::generate_context!())
        .expect("the Slipway window could not start (is a display available?)")
        .run(|app, event| {
            if let tauri::RunEvent::Exit = event {
                app.state::<commands::dev::DevSessions>().shutdown();
                app.state::<commands::tools::Tools>().shutdown();
                app.state::<commands::worklist::Worklist>().shutdown();
                app.state::<Arc<commands::care::Care>>().shutdown();
            }
        });
}

#[cfg(test)]
mod wiring {
    //! The command wiring on Tauri's mock runtime, with the app's real context (its
    //! capabilities included): every command the UI calls is registered and allowed for the
    //! main window, arguments arrive under the names `api.js` sends, and a command that is not
    //! wired is refused; `slipway://` links wait for the window, read. No window system is
    //! needed.

    use serde_json::{Value, json};
    use tauri::ipc::{CallbackFn, InvokeBody};
    use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder};
    use tauri::webview::InvokeRequest;

    fn app() -> (
        tauri::App<tauri::test::MockRuntime>,
        tauri::WebviewWindow<tauri::test::MockRuntime>,
    ) {
        let app = super::build_app(mock_builder())
            .build(tauri::generate_context!())
            .expect("the app builds on the mock runtime");
        let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .expect("the main window");
        (app, window)
    }

    fn invoke(
        window: &tauri::WebviewWindow<tauri::test::MockRuntime>,
        cmd: &str,
        args: Value,
    ) -> Result<Value, Value> {
        get_ipc_response(
            window,
            InvokeRequest {
                cmd: cmd.into(),
                callback: CallbackFn(0),
                error: CallbackFn(1),
                url: "tauri://localhost".parse().unwrap(),
                body: InvokeBody::Json(args),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|body| body.deserialize::<Value>().unwrap())
    }

    #[test]
    fn the_ui_commands_are_wired_and_allowed() {
        let (_app, window) = app();
        let tools = invoke(&window, "list_tools", json!({})).expect("list_tools");
        let names: Vec<&str> = tools
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"scaffold_app") && names.contains(&"share_secret"),
            "{names:?}"
        );

        // A tool through call_tool, with the argument names api.js uses: a devfile with an
        // error comes back as the validator's findings, not as a failed command.
        let dir = tempfile::tempdir().unwrap();
        let devfile = dir.path().join("devfile.yaml");
        std::fs::write(&devfile, "schemaVersion: 2.2.0\nmetadata: {}\n").unwrap();
        let checked = invoke(
            &window,
            "call_tool",
            json!({"name": "validate_devfile", "args": {"devfile_path": devfile.display().to_string()}}),
        )
        .expect("call_tool");
        assert_eq!(checked["valid"], false, "{checked}");
        assert!(checked.to_string().contains("metadata.name"), "{checked}");

        // A tool's own refusal is a result naming the field; an unknown tool is an error.
        let refused = invoke(
            &window,
            "call_tool",
            json!({"name": "scaffold_app", "args": {"app_name": "Bad Name", "app_type": "python-api", "output_directory": dir.path().display().to_string()}}),
        )
        .expect("call_tool");
        assert_eq!(refused["success"], false, "{refused}");
        assert_eq!(refused["field"], "app_name", "{refused}");
        let unknown = invoke(&window, "call_tool", json!({"name": "nope", "args": {}}))
            .expect_err("an unknown tool");
        assert!(unknown.to_string().contains("unknown tool"), "{unknown}");

        // New app's live check: scaffold_app's rule, on its field, and nothing written.
        let checked = invoke(
            &window,
            "check_new_app",
            json!({"args": {"app_name": "Bad--Name", "app_type": "python-api", "output_directory": dir.path().display().to_string()}}),
        )
        .expect("check_new_app");
        assert_eq!(checked["valid"], false, "{checked}");
        assert_eq!(checked["field"], "app_name", "{checked}");
        let fine = invoke(
            &window,
            "check_new_app",
            json!({"args": {"app_name": "fine", "app_type": "python-api", "output_directory": dir.path().display().to_string()}}),
        )
        .expect("check_new_app");
        assert_eq!(fine["valid"], true, "{fine}");
        assert!(!dir.path().join("fine").exists());

        // A sign-in with a broken field is refused on that field before anything is asked of
        // the network or saved.
        let refused = invoke(
            &window,
            "sign_in",
            json!({"environment": {"name": "staging", "platform_url": "localhost:8700", "platform_token": "t"}}),
        )
        .expect("sign_in");
        assert_eq!(refused["success"], false, "{refused}");
        assert_eq!(refused["field"], "platform_url", "{refused}");
        let listed = invoke(&window, "environments", json!({})).expect("environments");
        assert!(listed["saved"].is_array(), "{listed}");

        // Service URLs: only http(s) opens, refused before any launcher starts.
        let refused = invoke(&window, "open_url", json!({"url": "file:///etc/passwd"}))
            .expect_err("a file: URL");
        assert!(
            refused.to_string().contains("only http and https"),
            "{refused}"
        );

        // Something the window never calls is not there.
        assert!(invoke(&window, "no_such_command", json!({})).is_err());
    }

    #[test]
    fn links_wait_for_the_window_read_by_the_toolkit() {
        let (app, window) = app();
        // Nothing arrived (the test's own arguments are no link).
        assert_eq!(invoke(&window, "take_links", json!({})).unwrap(), json!([]));
        let request = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";
        super::commands::links::arrived(
            app.handle(),
            &format!("slipway://care/missing-info/{request}"),
        );
        super::commands::links::arrived(app.handle(), "slipway://invite/slwi_secret/extra");
        let taken = invoke(&window, "take_links", json!({})).expect("take_links");
        assert_eq!(taken[0], json!({"kind": "missing_info", "uuid": request}));
        assert_eq!(taken[1]["kind"], "error", "{taken}");
        let message = taken[1]["error"].as_str().unwrap();
        assert!(
            message.contains("slipway://apps/<app UUID>") && !message.contains("secret"),
            "{message}"
        );
        // Taken once: the window follows each link one time.
        assert_eq!(invoke(&window, "take_links", json!({})).unwrap(), json!([]));
        // The UI names the view in the OS window's title too: allowed for the main window.
        invoke(
            &window,
            "plugin:window|set_title",
            json!({"label": "main", "value": "Apps · Slipway"}),
        )
        .expect("set_title is allowed");
        let refused = invoke(
            &window,
            "plugin:window|set_fullscreen",
            json!({"label": "main", "value": true}),
        )
        .expect_err("other window setters stay refused");
        assert!(refused.to_string().contains("not allowed"), "{refused}");
    }

    #[test]
    fn the_worklist_commands_are_wired_and_refuse_before_the_network() {
        let (_app, window) = app();
        // Registered and allowed: an argument of the wrong type is refused by Tauri after the
        // permission check and before the command runs.
        for (cmd, args) in [
            ("care_task", json!({})),
            ("care_claim", json!({"uuid": 5})),
            ("care_release", json!({})),
            ("care_worklist", json!({"statuses": "requested"})),
        ] {
            let refused = invoke(&window, cmd, args).expect_err(cmd).to_string();
            assert!(refused.contains("invalid args"), "{cmd}: {refused}");
        }
        // An unknown status is refused on its field before any care service is asked.
        let refused = invoke(
            &window,
            "care_worklist",
            json!({"statuses": ["requested", "done"], "owner": null, "next": null, "count": null}),
        )
        .expect_err("an unknown status");
        assert_eq!(refused["field"], "status", "{refused}");
        assert_eq!(refused["kind"], "invalid", "{refused}");
    }

    #[test]
    fn the_draft_commands_are_wired_and_refuse_a_form_that_is_none() {
        let (_app, window) = app();
        // Registered and allowed: an argument of the wrong type is refused by Tauri after the
        // permission check and before the command runs.
        let refused = invoke(&window, "care_draft_save", json!({"kind": 5}))
            .expect_err("a kind that is no string")
            .to_string();
        assert!(refused.contains("invalid args"), "{refused}");
        // A kind or request UUID that names no draft is refused on its field before any file
        // or key is touched (the UUID becomes part of a file name).
        for (cmd, args) in [
            ("care_draft_load", json!({"kind": "invoice", "uuid": null})),
            (
                "care_draft_clear",
                json!({"kind": "missing_info", "uuid": "../../enrollment"}),
            ),
            (
                "care_draft_save",
                json!({"kind": "missing_info", "uuid": null, "document": {}}),
            ),
        ] {
            let refused = invoke(&window, cmd, args).expect_err(cmd);
            assert_eq!(refused["field"], "kind", "{cmd}: {refused}");
            assert_eq!(refused["kind"], "invalid", "{cmd}: {refused}");
        }
    }

    #[test]
    fn the_people_commands_are_wired_and_refuse_before_the_network() {
        let (_app, window) = app();
        // People, invites, the audit and tokens are registered and allowed: an argument of
        // the wrong type is refused by Tauri after the permission check and before the
        // command runs, so nothing reaches a platform.
        for (cmd, args) in [
            ("me", json!({"lazy": "yes"})),
            ("people_invite", json!({"email": 1})),
            ("people_revoke_invite", json!({})),
            ("people_set_role", json!({"id": "dana@example.org"})),
            ("people_remove", json!({})),
            ("people_audit", json!({"pageToken": 5})),
            ("tokens_create", json!({})),
            ("tokens_revoke", json!({})),
            ("grants_approve", json!({"readOnly": "yes"})),
            ("grants_revoke", json!({})),
        ] {
            let refused = invoke(&window, cmd, args).expect_err(cmd).to_string();
            assert!(refused.contains("invalid args"), "{cmd}: {refused}");
        }
        // Joining and SSO refuse a broken field before an invite code is spent or a browser
        // opens; an invite link pasted as the code brings its platform URL.
        let refused = invoke(
            &window,
            "join_with_invite",
            json!({"url": "http://127.0.0.1:9", "code": "slwi_x", "name": null, "environment": "my team"}),
        )
        .expect("join_with_invite");
        assert_eq!(refused["field"], "environment", "{refused}");
        let refused = invoke(
            &window,
            "join_with_invite",
            json!({"url": "", "code": "slipway://invite/slwi_x?url=localhost%3A8700", "name": "Dana", "environment": "team"}),
        )
        .expect("join_with_invite");
        assert_eq!(refused["field"], "url", "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("localhost:8700"),
            "{refused}"
        );
        for cmd in ["sso_status", "sso_sign_in"] {
            let refused = invoke(
                &window,
                cmd,
                json!({"url": "localhost:8700", "environment": "work"}),
            )
            .expect(cmd);
            assert_eq!(refused["field"], "url", "{cmd}: {refused}");
        }
    }

    #[test]
    fn the_job_commands_are_wired_and_allowed() {
        let (_app, window) = app();
        for (cmd, args) in [
            ("app_jobs", json!({})),
            ("job_runs", json!({"appId": "a", "job": 1})),
            ("job_run_now", json!({"appId": "a"})),
            ("job_run_log", json!({"appId": "a", "job": "j", "runId": 3})),
        ] {
            let refused = invoke(&window, cmd, args).expect_err(cmd).to_string();
            assert!(refused.contains("invalid args"), "{cmd}: {refused}");
        }
    }

    #[test]
    fn the_notification_commands_are_wired_and_allowed() {
        let (_app, window) = app();
        for (cmd, args) in [
            ("notify_add_channel", json!({})),
            ("notify_test_channel", json!({"channel": 1})),
            ("notify_remove_channel", json!({})),
            ("notify_subscribe", json!({"channel": "c", "events": "all"})),
            ("notify_unsubscribe", json!({"id": 2})),
            ("notify_deliveries", json!({"appId": 3})),
        ] {
            let refused = invoke(&window, cmd, args).expect_err(cmd).to_string();
            assert!(refused.contains("invalid args"), "{cmd}: {refused}");
        }
    }

    #[test]
    fn the_resource_commands_are_wired_and_allowed() {
        let (_app, window) = app();
        // Registered and allowed: an argument of the wrong type (or one missing) is refused by
        // Tauri after the permission check and before the command runs, so nothing reaches a
        // platform.
        for (cmd, args) in [
            ("app_resources", json!({})),
            (
                "resource_credentials",
                json!({"appId": "a", "kind": 1, "name": "main"}),
            ),
            ("resource_rotate", json!({"appId": "a", "kind": "cache"})),
            (
                "resource_destroy",
                json!({"appId": 5, "kind": "cache", "name": "hot"}),
            ),
        ] {
            let refused = invoke(&window, cmd, args).expect_err(cmd).to_string();
            assert!(refused.contains("invalid args"), "{cmd}: {refused}");
        }
    }
}
