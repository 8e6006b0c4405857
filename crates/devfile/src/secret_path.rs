//! Secret paths: the one copy of the rule, here beside the app-name rule because the
//! platform's vault, the toolkit's secrets tools (which check before any request) and the
//! desktop all need it and none may do I/O for it. The spec's rule is "must not start with `/` and must not contain `..`;
//! may contain `/` separators". Paths also become parts of environment variable names and
//! are shown in lists, so this vault is stricter, and says so in every error:
//!
//! - 1 to [`PATH_MAX`] characters, segments separated by `/`;
//! - no leading or trailing `/`, no empty segment (`a//b`);
//! - no `.` or `..` segment, and no `..` anywhere;
//! - each segment 1 to [`SEGMENT_MAX`] characters from `A–Z a–z 0–9 . _ -`.

/// Longest path, in characters.
pub const PATH_MAX: usize = 256;
/// Longest segment between two `/`.
pub const SEGMENT_MAX: usize = 64;

/// The characters a segment may hold, for error messages.
pub const ALLOWED: &str = "letters A-Z a-z, digits, '.', '_' and '-'";

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// Checks a secret path; the error is the rule it breaks.
pub fn check(raw: &str) -> Result<(), String> {
    if raw.is_empty() {
        return Err("must not be empty".into());
    }
    if raw.chars().count() > PATH_MAX {
        return Err(format!("must be at most {PATH_MAX} characters"));
    }
    if raw.starts_with('/') {
        return Err("must not start with '/'".into());
    }
    if raw.contains("..") {
        return Err("must not contain '..'".into());
    }
    if raw.ends_with('/') {
        return Err("must not end with '/'".into());
    }
    for segment in raw.split('/') {
        check_segment(segment)?;
    }
    Ok(())
}

fn check_segment(segment: &str) -> Result<(), String> {
    if segment.is_empty() {
        return Err("must not contain an empty segment ('//')".into());
    }
    if segment == "." {
        return Err("must not contain a '.' segment".into());
    }
    if segment.chars().count() > SEGMENT_MAX {
        return Err(format!(
            "each segment between '/' must be at most {SEGMENT_MAX} characters"
        ));
    }
    if let Some(bad) = segment.chars().find(|c| !allowed(*c)) {
        return Err(format!(
            "must contain only {ALLOWED} and '/' separators; found {bad:?}"
        ));
    }
    Ok(())
}

/// Checks a list prefix: like a path, but it may end in `/` or part-way through a segment.
pub fn check_prefix(raw: &str) -> Result<(), String> {
    if raw.is_empty() {
        return Ok(());
    }
    let trimmed = raw.strip_suffix('/').unwrap_or(raw);
    check(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_paths_pass() {
        for p in ["a", "db/credentials", "team-1/api_key.v2", &"a".repeat(64)] {
            assert_eq!(check(p), Ok(()), "{p}");
        }
    }

    #[test]
    fn bad_paths_name_their_rule() {
        let cases = [
            ("", "empty"),
            ("/abs", "start with '/'"),
            ("a/../b", "'..'"),
            ("..", "'..'"),
            ("a/..", "'..'"),
            ("a..b", "'..'"),
            ("a/", "end with '/'"),
            ("a//b", "empty segment"),
            ("./a", "'.' segment"),
            ("a b", "found ' '"),
            ("a\\b", "found '\\\\'"),
            ("é", "found 'é'"),
            ("a\nb", "found '\\n'"),
        ];
        for (p, rule) in cases {
            let err = check(p).expect_err(p);
            assert!(err.contains(rule), "{p:?}: {err}");
        }
        assert!(check(&"a".repeat(65)).unwrap_err().contains("segment"));
        let long = vec!["abcdefgh"; 40].join("/");
        assert!(check(&long).unwrap_err().contains("256"));
    }

    #[test]
    fn prefixes_may_end_in_a_slash() {
        assert_eq!(check_prefix(""), Ok(()));
        assert_eq!(check_prefix("db/"), Ok(()));
        assert_eq!(check_prefix("db/cre"), Ok(()));
        assert!(check_prefix("/db").is_err());
        assert!(check_prefix("../").is_err());
    }
}
