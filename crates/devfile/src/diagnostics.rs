//! Validation findings and the `{valid, errors, warnings}` report the tools return.

use serde::Serialize;

/// How bad a finding is: errors make a devfile invalid, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The platform cannot build or run the app as described.
    Error,
    /// Likely a mistake, but the app can still be built and deployed.
    Warning,
}

/// One finding, located by its path in the document and, where known, its line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The document path, for example `components[1].container.endpoints[0].targetPort`.
    pub path: String,
    /// 1-based line, when the finding points at a node of the source.
    pub line: Option<usize>,
    /// What is wrong and which rule says so.
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.path.is_empty(), self.line) {
            (true, Some(line)) => write!(f, "line {line}: {}", self.message),
            (true, None) => write!(f, "{}", self.message),
            (false, Some(line)) => write!(f, "{} (line {line}): {}", self.path, self.message),
            (false, None) => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

/// The result of `validate_devfile`: every finding at once, not just the first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// All findings in document order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// True when there is no error (warnings allowed).
    pub fn valid(&self) -> bool {
        !self
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// Error messages, each naming its path and line.
    pub fn errors(&self) -> Vec<String> {
        self.of(Severity::Error)
    }

    /// Warning messages, each naming its path and line.
    pub fn warnings(&self) -> Vec<String> {
        self.of(Severity::Warning)
    }

    fn of(&self, severity: Severity) -> Vec<String> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .map(ToString::to_string)
            .collect()
    }

    /// The report in the spec's shape: `{valid, errors, warnings}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "valid": self.valid(),
            "errors": self.errors(),
            "warnings": self.warnings(),
        })
    }
}
