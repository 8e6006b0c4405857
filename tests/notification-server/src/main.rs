//! A notification server for the desktop end-to-end test: `org.freedesktop.Notifications` on
//! the session bus (the Desktop Notifications Specification, with actions), so the window's
//! notifications can be read and clicked where no desktop runs (Xvfb). Each notification it
//! is given is printed on stdout as one JSON line `{"id", "app", "summary", "body",
//! "actions"}`; a line `click ID` on stdin clicks notification ID (the `ActionInvoked` signal
//! with the `default` action, as a desktop sends it for a click on the notification). It
//! prints `ready` once it owns its name.

use std::collections::HashMap;
use std::io::{BufRead as _, Write as _};

use zbus::zvariant::OwnedValue;

const PATH: &str = "/org/freedesktop/Notifications";
const NAME: &str = "org.freedesktop.Notifications";

struct Server {
    last: u32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".into(), "body".into()]
    }

    #[allow(clippy::too_many_arguments)] // the specification's signature
    fn notify(
        &mut self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        self.last += 1;
        let line = serde_json::json!({"id": self.last, "app": app_name, "summary": summary,
            "body": body, "actions": actions});
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
        self.last
    }

    fn close_notification(&self, _id: u32) {}

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "slipway-e2e".into(),
            "slipway".into(),
            "0".into(),
            "1.2".into(),
        )
    }
}

fn main() -> zbus::Result<()> {
    let connection = zbus::blocking::connection::Builder::session()?
        .name(NAME)?
        .serve_at(PATH, Server { last: 0 })?
        .build()?;
    println!("ready");
    std::io::stdout().flush().ok();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(id) = line.trim().strip_prefix("click ") {
            let id: u32 = id
                .trim()
                .parse()
                .map_err(|_| zbus::Error::Failure(format!("not a notification id: {id:?}")))?;
            connection.emit_signal(None::<()>, PATH, NAME, "ActionInvoked", &(id, "default"))?;
        }
    }
    Ok(())
}
