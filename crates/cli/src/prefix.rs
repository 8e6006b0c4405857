//! Prefixed, coloured log lines for `slipway logs -f` and `slipway dev`: `api | line`, or
//! `api build | line` for a build, each service in its own colour on a terminal (none when
//! `NO_COLOR` is set or the output is not a terminal).

use std::io::{IsTerminal as _, Write as _};

use slipway_platform_client::stream::LogLine;

/// ANSI foreground colours given to services in the order they first appear.
const PALETTE: [u8; 6] = [36, 33, 32, 35, 34, 31];

/// Prints lines with a service prefix.
#[derive(Debug)]
pub struct Printer {
    colour: bool,
    services: Vec<String>,
    width: usize,
}

impl Printer {
    /// A printer for standard output.
    pub fn for_stdout() -> Self {
        Self {
            colour: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            services: Vec::new(),
            width: 0,
        }
    }

    /// The prefix of `line`, padded so the lines of several services align.
    pub fn prefix(&mut self, line: &LogLine) -> String {
        let index = match self.services.iter().position(|s| *s == line.service) {
            Some(i) => i,
            None => {
                self.services.push(line.service.clone());
                self.services.len() - 1
            }
        };
        let label = if line.kind == "build" {
            format!("{} build", line.service)
        } else {
            line.service.clone()
        };
        self.width = self.width.max(label.len());
        let padded = format!("{label:<width$} |", width = self.width);
        if self.colour {
            format!("\x1b[{}m{padded}\x1b[0m", PALETTE[index % PALETTE.len()])
        } else {
            padded
        }
    }

    /// Prints `line` with its prefix.
    pub fn print(&mut self, line: &LogLine) {
        let prefix = self.prefix(line);
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{prefix} {}", line.line);
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(service: &str, kind: &str) -> LogLine {
        LogLine {
            service: service.into(),
            kind: kind.into(),
            source_id: "x".into(),
            line: "hello".into(),
        }
    }

    #[test]
    fn prefixes_name_the_service_and_the_build_and_align() {
        let mut printer = Printer {
            colour: false,
            services: Vec::new(),
            width: 0,
        };
        assert_eq!(printer.prefix(&line("api", "runtime")), "api |");
        assert_eq!(printer.prefix(&line("api", "build")), "api build |");
        assert_eq!(printer.prefix(&line("web", "runtime")), "web       |");
        printer.colour = true;
        assert_eq!(
            printer.prefix(&line("web", "runtime")),
            "\x1b[33mweb       |\x1b[0m"
        );
    }
}
