//! Following log files for the live stream (`GET /v1/apps/{app_id}/logs/stream`): which
//! files, how far each has been read (the [`Cursor`]), and reading the complete lines added
//! since.
//!
//! The cursor names every file being followed with the byte offset after the last line sent,
//! so a client that reconnects with it (`Last-Event-ID`) gets exactly the lines after the
//! last one it saw, from every file, even those that a newer build or deployment replaced in
//! the meantime: a replaced file is read to its end before it is dropped from the cursor.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Most bytes read from one file per poll, so one busy service cannot starve the others.
const READ_LIMIT: u64 = 256 * 1024;

/// One followed log file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogSource {
    /// `DATA_DIR/builds/<build_id>/log` of a service's build.
    Build {
        /// The build.
        build_id: String,
        /// Its service.
        service: String,
    },
    /// `DATA_DIR/deployments/<deployment_id>/<service>.log`.
    Runtime {
        /// The deployment.
        deployment_id: String,
        /// The service.
        service: String,
    },
}

impl LogSource {
    /// The service the log belongs to.
    pub fn service(&self) -> &str {
        match self {
            Self::Build { service, .. } | Self::Runtime { service, .. } => service,
        }
    }

    /// `build` or `runtime`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Build { .. } => "build",
            Self::Runtime { .. } => "runtime",
        }
    }

    /// The build or deployment id.
    pub fn owner_id(&self) -> &str {
        match self {
            Self::Build { build_id, .. } => build_id,
            Self::Runtime { deployment_id, .. } => deployment_id,
        }
    }

    fn key(&self) -> String {
        match self {
            Self::Build { build_id, service } => format!("b:{build_id}:{service}"),
            Self::Runtime {
                deployment_id,
                service,
            } => format!("r:{deployment_id}:{service}"),
        }
    }

    fn parse_key(key: &str) -> Option<Self> {
        let mut parts = key.splitn(3, ':');
        let (kind, id, service) = (parts.next()?, parts.next()?, parts.next()?);
        let id = uuid::Uuid::parse_str(id).ok()?.to_string();
        let valid_service = !service.is_empty()
            && service.len() <= 63
            && service
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !valid_service {
            return None;
        }
        let service = service.to_owned();
        match kind {
            "b" => Some(Self::Build {
                build_id: id,
                service,
            }),
            "r" => Some(Self::Runtime {
                deployment_id: id,
                service,
            }),
            _ => None,
        }
    }
}

/// Every followed file and the offset after the last line sent from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cursor(BTreeMap<LogSource, u64>);

/// A cursor that does not parse.
#[derive(Debug, thiserror::Error)]
#[error(
    "not a cursor of this stream (expected `b:<build>:<service>=<offset>` or `r:<deployment>:<service>=<offset>` entries separated by commas)"
)]
pub struct BadCursor;

impl Cursor {
    /// Parses the text of [`Cursor::encode`]; at most 64 entries.
    pub fn parse(text: &str) -> Result<Self, BadCursor> {
        let mut map = BTreeMap::new();
        for entry in text.split(',').filter(|e| !e.is_empty()) {
            let (key, offset) = entry.rsplit_once('=').ok_or(BadCursor)?;
            let source = LogSource::parse_key(key).ok_or(BadCursor)?;
            let offset = offset.parse::<u64>().map_err(|_| BadCursor)?;
            map.insert(source, offset);
        }
        if map.len() > 64 {
            return Err(BadCursor);
        }
        Ok(Self(map))
    }

    /// `key=offset` entries separated by commas (URL- and header-safe).
    pub fn encode(&self) -> String {
        self.0
            .iter()
            .map(|(source, offset)| format!("{}={offset}", source.key()))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The followed files.
    pub fn sources(&self) -> impl Iterator<Item = &LogSource> {
        self.0.keys()
    }

    /// Where `source` is read from next, if followed.
    pub fn offset(&self, source: &LogSource) -> Option<u64> {
        self.0.get(source).copied()
    }

    /// Follows `source` from `offset`.
    pub fn set(&mut self, source: LogSource, offset: u64) {
        self.0.insert(source, offset);
    }

    /// Stops following `source`.
    pub fn remove(&mut self, source: &LogSource) {
        self.0.remove(source);
    }
}

/// The complete lines of `path` after `offset` (at most [`READ_LIMIT`] bytes' worth), each
/// with the offset after it. With `to_end`, a last line without its newline is returned too
/// (the file will not grow: its build or deployment is over). A missing file has no lines.
pub fn read_lines(path: &Path, offset: u64, to_end: bool) -> std::io::Result<Vec<(String, u64)>> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.take(READ_LIMIT).read_to_end(&mut bytes)?;
    let mut lines = Vec::new();
    let mut start = 0;
    while let Some(newline) = bytes[start..].iter().position(|&b| b == b'\n') {
        let end = start + newline;
        let text = String::from_utf8_lossy(&bytes[start..end]);
        lines.push((
            text.trim_end_matches('\r').to_owned(),
            offset + end as u64 + 1,
        ));
        start = end + 1;
    }
    let full_read = (bytes.len() as u64) < READ_LIMIT;
    if to_end && full_read && start < bytes.len() {
        let text = String::from_utf8_lossy(&bytes[start..]);
        lines.push((text.into_owned(), offset + bytes.len() as u64));
    } else if lines.is_empty() && bytes.len() as u64 == READ_LIMIT {
        // One line longer than the limit: send it in pieces rather than never.
        let text = String::from_utf8_lossy(&bytes);
        lines.push((text.into_owned(), offset + READ_LIMIT));
    }
    Ok(lines)
}

/// The offset where the last `lines` lines of `path` begin (0 when it has fewer), so a new
/// stream starts with some context instead of a whole day of logs.
pub fn tail_offset(path: &Path, lines: usize) -> std::io::Result<u64> {
    if lines == 0 {
        return std::fs::metadata(path).map_or(Ok(0), |m| Ok(m.len()));
    }
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    let window = size.min(READ_LIMIT);
    file.seek(SeekFrom::Start(size - window))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    // A newline that ends the file does not start a line.
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let mut seen = 0;
    for (i, &b) in body.iter().enumerate().rev() {
        if b == b'\n' {
            seen += 1;
            if seen == lines {
                return Ok(size - window + i as u64 + 1);
            }
        }
    }
    // Fewer lines than asked in the window: all of it when it is the whole file.
    Ok(if window == size { 0 } else { size - window })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(service: &str) -> LogSource {
        LogSource::Build {
            build_id: uuid::Uuid::new_v4().to_string(),
            service: service.into(),
        }
    }

    #[test]
    fn a_cursor_round_trips_and_refuses_what_it_did_not_write() {
        let mut cursor = Cursor::default();
        cursor.set(build("api"), 12);
        cursor.set(
            LogSource::Runtime {
                deployment_id: uuid::Uuid::new_v4().to_string(),
                service: "web-2".into(),
            },
            0,
        );
        assert_eq!(Cursor::parse(&cursor.encode()).unwrap(), cursor);
        assert_eq!(Cursor::parse("").unwrap(), Cursor::default());
        for bad in [
            "x:1:api=3",
            "b:not-a-uuid:api=3",
            "b:6f1c1f9e-58a5-4c1c-9a57-1f2d8f1b7a10:API=3",
            "b:6f1c1f9e-58a5-4c1c-9a57-1f2d8f1b7a10:api=-1",
            "b:6f1c1f9e-58a5-4c1c-9a57-1f2d8f1b7a10:api",
        ] {
            assert!(Cursor::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_complete_lines_are_read_until_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        assert!(read_lines(&path, 0, false).unwrap().is_empty(), "missing");
        std::fs::write(&path, "one\r\ntwo\nthr").unwrap();
        let lines = read_lines(&path, 0, false).unwrap();
        assert_eq!(lines, vec![("one".into(), 5), ("two".into(), 9)]);
        assert!(read_lines(&path, 9, false).unwrap().is_empty());
        assert_eq!(
            read_lines(&path, 9, true).unwrap(),
            vec![("thr".into(), 12)]
        );
    }

    #[test]
    fn the_tail_starts_at_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "a\nbb\nccc\n").unwrap();
        assert_eq!(tail_offset(&path, 1).unwrap(), 5);
        assert_eq!(tail_offset(&path, 2).unwrap(), 2);
        assert_eq!(tail_offset(&path, 3).unwrap(), 0);
        assert_eq!(tail_offset(&path, 10).unwrap(), 0);
        assert_eq!(tail_offset(&dir.path().join("none"), 3).unwrap(), 0);
    }
}
