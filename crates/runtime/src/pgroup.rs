//! Process groups: every command a build or a service runs (for the container runtime, the
//! attached `<engine> run` client) is spawned as the leader of a group of its own, and
//! stopped by signalling the whole group, so nothing it started in the background outlives
//! it. A group can leave a marker file naming it (its id and the
//! leader's start time), so that a later run can stop a group a killed server left behind
//! without ever signalling an unrelated process that reuses the number.

use std::path::Path;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// A child process that leads its own process group.
#[derive(Debug)]
pub struct Group {
    child: tokio::process::Child,
    pgid: Option<Pid>,
}

impl Group {
    /// Spawns `command` as the leader of a new process group (killed if dropped).
    pub fn spawn(command: &mut tokio::process::Command) -> std::io::Result<Self> {
        command.process_group(0).kill_on_drop(true);
        let child = command.spawn()?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        Ok(Self { child, pgid })
    }

    /// The leader's pid, while it has not been reaped.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The leader.
    pub fn child(&mut self) -> &mut tokio::process::Child {
        &mut self.child
    }

    /// Whether the leader still runs (it has not exited, or its end is not yet known).
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the leader to exit (cancel safe); the rest of the group may still run.
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }

    /// The group's id (the leader's pid), unless the leader was already reaped at spawn.
    pub fn pgid(&self) -> Option<Pid> {
        self.pgid
    }

    /// Sends `signal` to every process of the group (best effort: a group that is gone
    /// already is not an error).
    pub fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, signal);
        }
    }

    /// Kills every process of the group.
    pub fn kill(&self) {
        self.signal(Signal::SIGKILL);
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22).
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields are counted after
    // its closing parenthesis, which is field 3.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Writes a marker file at `marker` naming the live group `pgid` as `"<pgid> <start time>"`.
pub fn write_marker(marker: &Path, pgid: Pid) -> Option<()> {
    let started = start_time(pgid.as_raw())?;
    std::fs::write(marker, format!("{} {started}\n", pgid.as_raw())).ok()
}

/// The group a marker names, if that very group still runs (same id, same start time).
pub fn live_group(marker: &Path) -> Option<Pid> {
    let text = std::fs::read_to_string(marker).ok()?;
    let mut parts = text.split_whitespace();
    let pgid: i32 = parts.next()?.parse().ok()?;
    let started: u64 = parts.next()?.parse().ok()?;
    (pgid > 1 && start_time(pgid) == Some(started)).then(|| Pid::from_raw(pgid))
}

/// Kills every process of group `pgid`.
pub fn kill_group(pgid: Pid) {
    let _ = killpg(pgid, Signal::SIGKILL);
}

/// What tests of process groups watch for.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;
    use std::time::Duration;

    /// The pid a test's command wrote to `file` (as `echo $! > file`), once it is there.
    pub async fn pid_in(file: &Path) -> i32 {
        for _ in 0..100 {
            if let Ok(text) = std::fs::read_to_string(file)
                && let Ok(pid) = text.trim().parse::<i32>()
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no pid in {} within 2 s", file.display());
    }

    /// Whether process `pid` ended within 2 s (gone, or a zombie of init about to be reaped).
    pub async fn ended(pid: i32) -> bool {
        for _ in 0..100 {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| s.rsplit(')').next().map(|r| r.trim().chars().next()));
            if matches!(state, None | Some(Some('Z'))) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn killing_the_group_takes_its_background_children() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let mut command = tokio::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!("sleep 60 & echo $! > {}; wait", pidfile.display()));
        let mut group = Group::spawn(&mut command).unwrap();
        let background = testing::pid_in(&pidfile).await;
        assert!(start_time(background).is_some());
        group.kill();
        let _ = group.child().wait().await;
        // The background sleep was in the group: it is gone.
        assert!(
            testing::ended(background).await,
            "the background child outlived its group"
        );
    }

    #[test]
    fn markers_name_only_the_very_group_they_were_written_for() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("x.pgid");
        let me = Pid::from_raw(i32::try_from(std::process::id()).unwrap());
        write_marker(&marker, me).unwrap();
        assert_eq!(live_group(&marker), Some(me));
        // Same number, another start time: a reused pid is not the group.
        let text = std::fs::read_to_string(&marker).unwrap();
        let pid = text.split_whitespace().next().unwrap();
        std::fs::write(&marker, format!("{pid} 1\n")).unwrap();
        assert_eq!(live_group(&marker), None);
        std::fs::write(&marker, "garbage").unwrap();
        assert_eq!(live_group(&marker), None);
    }
}
