//! Yes-or-no questions on the terminal, asked alike by every command that asks one.

use std::io::{BufRead, Write};

/// Asks `question` on stderr with `[Y/n]` (`default_yes`) or `[y/N]` and reads the answer from
/// stdin: "y" or "yes" in any case is yes, an empty answer is the default, anything else no.
///
/// # Errors
/// Standard input cannot be read.
pub(crate) fn yes(question: &str, default_yes: bool) -> Result<bool, String> {
    eprint!(
        "{question} {} ",
        if default_yes { "[Y/n]" } else { "[y/N]" }
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    Ok(is_yes(&answer, default_yes))
}

fn is_yes(answer: &str, default_yes: bool) -> bool {
    match answer.trim().to_ascii_lowercase().as_str() {
        "" => default_yes,
        "y" | "yes" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_answer_is_the_default_and_only_y_or_yes_is_yes() {
        assert!(super::is_yes("\n", true));
        assert!(!super::is_yes("\n", false));
        assert!(super::is_yes(" YES\n", false));
        assert!(super::is_yes("y", false));
        assert!(!super::is_yes("no", true));
        assert!(!super::is_yes("yep", true));
    }
}
