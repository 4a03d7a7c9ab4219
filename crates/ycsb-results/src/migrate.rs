//! The one place that knows older export shapes.
//!
//! # The rule
//!
//! - Every export written since `schema_version` exists names its version
//!   ([`SCHEMA_VERSION`] when written by this build). Exports written
//!   before the field existed have none: they are version 1.
//! - Adding a field changes no version: its declaration gets a serde
//!   default (`#[serde(default)]`, or `Option`), which is what an older
//!   export reads as, and older readers ignore the field. That is how
//!   every export since the JSON exporter existed reads today (the first
//!   had no `histogram`, `failed`, `format`, `java` or `observation`, no
//!   store or engine in the metadata, no error figures in the stability).
//! - Renaming or removing a field, or changing its type or meaning, bumps
//!   [`SCHEMA_VERSION`] and adds a step here that turns the previous
//!   version into the next. Such a step may read the document as a
//!   `serde_json::Value`: this module is the only code that reads our
//!   exports by key.
//! - An export of a version newer than this build knows is refused
//!   ([`ResultsError::NewerSchema`]) rather than guessed at.

use crate::{ResultsError, RunReport, SCHEMA_VERSION};

/// The version of an export that does not name one.
pub(crate) fn unversioned() -> u32 {
    1
}

/// `report` as read from an export of its `schema_version`, brought to
/// [`SCHEMA_VERSION`].
///
/// # Errors
///
/// [`ResultsError::NewerSchema`] for a version this build does not know.
pub fn to_current(mut report: RunReport) -> Result<RunReport, ResultsError> {
    match report.schema_version {
        // Version 1 is the current shape; what older exports lack is
        // filled in by the declarations' serde defaults.
        1 => {}
        found => {
            return Err(ResultsError::NewerSchema {
                found,
                supported: SCHEMA_VERSION,
            })
        }
    }
    report.schema_version = SCHEMA_VERSION;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_version_is_refused() {
        let mut report: RunReport = serde_json::from_str(
            r#"{"metadata": {"tool": "t", "version": "0", "git_revision": null, "host": null,
                "start_time": "", "command_line": []}, "config": [], "phases": []}"#,
        )
        .unwrap();
        assert_eq!(report.schema_version, 1, "no field reads as version 1");
        assert_eq!(to_current(report.clone()).unwrap().schema_version, 1);
        report.schema_version = SCHEMA_VERSION + 1;
        let refused = to_current(report).unwrap_err();
        assert!(
            matches!(refused, ResultsError::NewerSchema { found, supported }
            if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION)
        );
    }
}
