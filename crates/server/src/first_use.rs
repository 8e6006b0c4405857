//! A server an embedding program starts on first use, on a data directory of its own, and
//! then shares between its callers (the embedded platform, the embedded care service):
//! nothing runs until something needs it, one caller starts it while the others wait, and a
//! stop takes it back out.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a start produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Started<T, A> {
    /// A server started here: kept, shared and answered from until it is taken back.
    Here(T),
    /// The answer of a server someone else runs: returned as it is, nothing is kept (the
    /// next call looks again).
    Elsewhere(A),
}

/// A server on a data directory, started on first use, then shared.
#[derive(Debug)]
pub struct FirstUse<T> {
    what: &'static str,
    data_dir: PathBuf,
    slot: Mutex<Option<T>>,
}

impl<T> FirstUse<T> {
    /// Nothing runs yet; `what` names the server in errors ("the embedded platform");
    /// `data_dir` is where it keeps its data.
    pub const fn new(what: &'static str, data_dir: PathBuf) -> Self {
        Self {
            what,
            data_dir,
            slot: Mutex::new(None),
        }
    }

    /// Where the server keeps its data.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// `read`'s answer from the running server, which `start` starts first on the data
    /// directory if none runs (on
    /// the first call, and again after a failed start or [`FirstUse::take`]). Callers wait
    /// for each other, so only one of them ever starts it. A panic in an earlier call leaves
    /// it unusable, which is an error.
    pub fn get_or_start<A>(
        &self,
        start: impl FnOnce(&Path) -> Result<Started<T, A>, String>,
        read: impl FnOnce(&T) -> A,
    ) -> Result<A, String> {
        let mut slot = self
            .slot
            .lock()
            .map_err(|_| format!("{} is unusable after an earlier panic", self.what))?;
        if let Some(running) = slot.as_ref() {
            return Ok(read(running));
        }
        match start(&self.data_dir)? {
            Started::Here(server) => Ok(read(slot.insert(server))),
            Started::Elsewhere(answer) => Ok(answer),
        }
    }

    /// Takes the running server back out, for the caller to stop; `None` when none runs (or
    /// after a panic, when nothing can be taken).
    pub fn take(&self) -> Option<T> {
        self.slot.lock().ok().and_then(|mut slot| slot.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_once_then_shares_until_taken() {
        let first = FirstUse::new("the test server", PathBuf::from("/data"));
        let starts = std::cell::Cell::new(0);
        let start = |n: u32| {
            starts.set(starts.get() + 1);
            Ok(Started::<u32, u32>::Here(n))
        };
        let on_its_dir = |dir: &Path| {
            assert_eq!(dir, first.data_dir());
            start(7)
        };
        assert_eq!(first.get_or_start(on_its_dir, |n| n * 10), Ok(70));
        assert_eq!(first.get_or_start(|_| start(8), |n| n * 10), Ok(70));
        assert_eq!(starts.get(), 1);
        assert_eq!(first.take(), Some(7));
        assert_eq!(first.take(), None);
        assert_eq!(first.get_or_start(|_| start(9), |n| *n), Ok(9));
        assert_eq!(starts.get(), 2);
    }

    #[test]
    fn a_failed_start_or_one_found_elsewhere_keeps_nothing() {
        let first = FirstUse::<u32>::new("the test server", PathBuf::from("/data"));
        let failed = first.get_or_start(|_| Err::<Started<u32, u32>, _>("no port".into()), |n| *n);
        assert_eq!(failed, Err("no port".to_owned()));
        let elsewhere = first.get_or_start(|_| Ok(Started::Elsewhere(5)), |n| *n);
        assert_eq!(elsewhere, Ok(5));
        assert_eq!(first.take(), None);
        assert_eq!(first.get_or_start(|_| Ok(Started::Here(6)), |n| *n), Ok(6));
    }

    #[test]
    fn a_panic_while_starting_is_reported_to_later_callers() {
        let first = std::sync::Arc::new(FirstUse::<u32>::new(
            "the test server",
            PathBuf::from("/data"),
        ));
        let panicking = std::sync::Arc::clone(&first);
        let joined = std::thread::spawn(move || {
            let _ = panicking.get_or_start(
                |_| -> Result<Started<u32, u32>, String> { panic!("boom") },
                |n| *n,
            );
        })
        .join();
        assert!(joined.is_err());
        assert_eq!(
            first.get_or_start(|_| Ok(Started::Here(1)), |n| *n),
            Err("the test server is unusable after an earlier panic".to_owned())
        );
        assert_eq!(first.take(), None);
    }
}
