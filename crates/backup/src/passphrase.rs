//! The archive's passphrase: read from a file (never a flag's value, which every user of the
//! machine sees in the process list), held as a secret whose `Debug` shows nothing, and
//! turned into age's scrypt recipient and identity.

use std::path::Path;

use age::secrecy::SecretString;

use crate::error::BackupError;

/// How hard the passphrase is stretched when an archive is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WorkFactor {
    /// age's own choice: scrypt tuned to about a second on this machine.
    #[default]
    Measured,
    /// scrypt with N = 2^log_n. Only for tests, which would otherwise spend a second per
    /// archive; an archive written this way is as easy to brute-force as the number says.
    Fixed(u8),
}

/// A passphrase read from `--passphrase-file`.
#[derive(Clone)]
pub struct Passphrase(SecretString);

impl std::fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Passphrase(…)")
    }
}

impl Passphrase {
    /// The file's first line without its line ending. An empty first line is refused: an
    /// archive under an empty passphrase would be readable by anyone.
    pub fn from_file(path: &Path) -> Result<Self, BackupError> {
        let refuse = |reason: String| BackupError::Passphrase {
            path: path.display().to_string(),
            reason,
        };
        let bytes = std::fs::read(path).map_err(|e| refuse(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|_| refuse("is not UTF-8 text".into()))?;
        Self::from_text(&text).map_err(refuse)
    }

    /// The passphrase in `text` (its first line), or why there is none.
    pub(crate) fn from_text(text: &str) -> Result<Self, String> {
        let line = text.split('\n').next().unwrap_or_default();
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            return Err(
                "the first line is empty; write the passphrase on the file's first line".into(),
            );
        }
        Ok(Self(SecretString::from(line.to_owned())))
    }

    /// The recipient that encrypts an archive.
    pub(crate) fn recipient(&self, work: WorkFactor) -> age::scrypt::Recipient {
        let mut recipient = age::scrypt::Recipient::new(self.0.clone());
        if let WorkFactor::Fixed(log_n) = work {
            recipient.set_work_factor(log_n.clamp(1, 63));
        }
        recipient
    }

    /// The identity that decrypts one.
    pub(crate) fn identity(&self) -> age::scrypt::Identity {
        age::scrypt::Identity::new(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use age::secrecy::ExposeSecret as _;

    use super::*;

    #[test]
    fn the_first_line_is_the_passphrase() {
        for (text, expected) in [
            ("correct horse\n", "correct horse"),
            ("correct horse", "correct horse"),
            ("correct horse\r\n", "correct horse"),
            ("  spaces stay  \nsecond line\n", "  spaces stay  "),
        ] {
            let p = Passphrase::from_text(text).unwrap();
            assert_eq!(p.0.expose_secret(), expected, "{text:?}");
        }
    }

    #[test]
    fn an_empty_first_line_is_refused() {
        for text in ["", "\n", "\r\n", "\nsecond"] {
            assert!(Passphrase::from_text(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn debug_shows_nothing() {
        let p = Passphrase::from_text("hunter2").unwrap();
        assert!(!format!("{p:?}").contains("hunter2"));
    }

    #[test]
    fn a_missing_file_names_the_flag() {
        let err = Passphrase::from_file(Path::new("/nonexistent/pass")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--passphrase-file /nonexistent/pass"),
            "{err}"
        );
    }
}
