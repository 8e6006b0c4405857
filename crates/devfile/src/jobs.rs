//! Scheduled jobs: exec commands with a cron `schedule` in their `attributes`, run by the
//! platform in their component's image and environment on its clock.
//!
//! ```yaml
//! commands:
//!   - id: nightly-report
//!     attributes:
//!       schedule: "0 3 * * *"        # cron: five fields, or six with seconds first
//!       timeZone: Europe/Paris       # IANA; UTC when unset
//!       concurrency: forbid          # forbid (default): a run due while one runs is skipped
//!       runMissed: true              # run once at start when runs were missed meanwhile
//!     exec:
//!       component: api
//!       commandLine: python3 report.py
//! ```

use crate::model::Devfile;

/// What a run due while another runs does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// Skipped, and recorded as skipped (the default).
    Forbid,
    /// Started beside the running one.
    Allow,
}

impl Concurrency {
    /// The devfile's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbid => "forbid",
            Self::Allow => "allow",
        }
    }
}

/// One scheduled job of a devfile.
#[derive(Debug, Clone)]
pub struct JobDecl {
    /// The command's id: the job's name.
    pub name: String,
    /// The service whose image and environment it runs in.
    pub service: String,
    /// The shell command line.
    pub command_line: String,
    /// The cron pattern as written.
    pub schedule: String,
    /// The IANA time zone it is read in (`UTC` when unset).
    pub time_zone: String,
    /// forbid or allow.
    pub concurrency: Concurrency,
    /// Run once at start when runs were missed while the platform was down.
    pub run_missed: bool,
}

impl JobDecl {
    /// The parsed schedule (valid: [`Devfile::jobs`] keeps only jobs that parse).
    pub fn cron(&self) -> croner::Cron {
        parse_schedule(&self.schedule).expect("checked by Devfile::jobs")
    }

    /// The time zone (valid, as above).
    pub fn zone(&self) -> jiff::tz::TimeZone {
        parse_zone(&self.time_zone).expect("checked by Devfile::jobs")
    }

    /// The first time after `after` the job is due.
    pub fn next_after(&self, after: jiff::Timestamp) -> Option<jiff::Timestamp> {
        let from = after.to_zoned(self.zone());
        self.cron()
            .find_next_occurrence(&from, false)
            .ok()
            .map(|z| z.timestamp())
    }
}

/// A cron pattern: five fields (minute granularity) or six (seconds first), `@hourly`-style
/// aliases; the error says what is wrong with it.
pub fn parse_schedule(text: &str) -> Result<croner::Cron, String> {
    croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Optional)
        .build()
        .parse(text)
        .map_err(|e| e.to_string())
}

/// An IANA time zone name from the system's database.
pub fn parse_zone(name: &str) -> Result<jiff::tz::TimeZone, String> {
    jiff::tz::TimeZone::get(name).map_err(|_| format!("{name:?} is not an IANA time zone name"))
}

impl Devfile {
    /// The scheduled jobs: exec commands whose attributes have a valid `schedule`, in
    /// devfile order.
    pub fn jobs(&self) -> Vec<JobDecl> {
        self.commands
            .iter()
            .filter_map(|c| {
                let exec = c.exec.as_ref()?;
                let text = |k: &str| c.attributes.get(k).and_then(|v| v.as_str());
                let schedule = text("schedule")?;
                parse_schedule(schedule).ok()?;
                let time_zone = text("timeZone").unwrap_or("UTC");
                parse_zone(time_zone).ok()?;
                Some(JobDecl {
                    name: c.id.clone(),
                    service: exec.component.clone(),
                    command_line: exec.command_line.clone(),
                    schedule: schedule.to_owned(),
                    time_zone: time_zone.to_owned(),
                    concurrency: if text("concurrency") == Some("allow") {
                        Concurrency::Allow
                    } else {
                        Concurrency::Forbid
                    },
                    run_missed: c
                        .attributes
                        .get("runMissed")
                        .and_then(serde_json::Value::as_bool)
                        .unwrap_or(false),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_and_six_field_schedules_parse_and_bad_ones_say_why() {
        assert!(parse_schedule("*/15 * * * *").is_ok());
        assert!(parse_schedule("*/2 * * * * *").is_ok());
        assert!(parse_schedule("@hourly").is_ok());
        assert!(!parse_schedule("61 * * * *").unwrap_err().is_empty());
        assert!(parse_schedule("every minute").is_err());
        assert!(parse_zone("Europe/Paris").is_ok());
        assert!(parse_zone("Mars/Olympus").unwrap_err().contains("IANA"));
    }
}
