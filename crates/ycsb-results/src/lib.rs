//! The results of ycsb-rs runs as typed data.
//!
//! A run's [`RunReport`] (metadata, configuration, per phase the figures
//! of each section with its HdrHistogram, the observation's time series,
//! gauges, stability and amplification) is what `ycsb` measures, what its
//! JSON export (`exporter=json`) holds and what every reader of exports
//! (`ycsb report`, `ycsb merge`, the live view, experiment matrices) works
//! on. This crate depends on no other ycsb crate: ycsb-core computes and
//! writes these types, the readers read them with [`read_export`].
//! [`Merge`] is `ycsb merge`: the exports of a multi-client run as one,
//! their histograms ([`decode_histogram`], [`encode_histogram`]) summed
//! and the percentiles computed by the one rule, [`java_percentile`].
//!
//! # Schema versions
//!
//! An export carries `schema_version` ([`SCHEMA_VERSION`]); one written
//! before the field existed reads as version 1, with serde defaults for
//! every field added since. The [`migrate`] module holds the rule and is
//! the only place that knows older shapes.
//!
//! ```
//! let export = br#"{"metadata": {"tool": "ycsb", "version": "0.1.0",
//!     "git_revision": null, "host": null, "start_time": "2026-11-29T22:38:16+00:00",
//!     "command_line": ["ycsb", "load", "basic"]},
//!   "config": [{"key": "recordcount", "value": "1000", "origin": "-p flag"}],
//!   "phases": [{"phase": "load", "runtime_ms": 20, "runtime_ns": 20000000,
//!     "operations": 1000, "throughput": 50000.0, "sections": [], "measurements": []}]}"#;
//! let report = ycsb_results::read_export(&export[..]).unwrap();
//! assert_eq!(report.schema_version, ycsb_results::SCHEMA_VERSION);
//! assert_eq!(report.phase("load").unwrap().operations, 1000);
//! assert_eq!(report.config_value("recordcount"), Some("1000"));
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

use std::io::{self, BufReader, Read};

use serde::Deserialize;

mod gauge;
mod histogram;
mod merge;
pub mod migrate;
mod number;
mod observe;
mod procfs;
mod report;

pub use gauge::GaugeKind;
pub use histogram::{
    decode_histogram, encode_histogram, java_percentile, java_quantile, HistogramError,
};
pub use merge::{Merge, MergeError};
pub use observe::{
    Amplification, IntervalPoint, P99Spread, PhaseObservation, ResourceUsage, SeriesRow,
    SeriesSection, Stability, SteadyState, WarmupSummary, JUDGED_WINDOWS,
};
pub use procfs::ProcStat;
pub use report::{
    ConfigEntry, DurabilityEntry, EngineBuildEntry, EngineReportEntry, JavaSection,
    MeasurementType, Operation, PercentileLatency, PhaseReport, RawPoint, ReportFormat,
    RunMetadata, RunReport, SectionReport, SeriesUnit, StatusCount,
};

/// The version of the export's shape this build writes and reads (see
/// [`migrate`] for the rule).
pub const SCHEMA_VERSION: u32 = 1;

/// Why an export could not be read.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// Reading failed.
    #[error("cannot be read: {0}")]
    Read(#[source] io::Error),
    /// The text is not JSON.
    #[error("is not JSON (line {line}, column {column}): {reason}")]
    Malformed {
        /// The line of the first error (1-based).
        line: usize,
        /// Its column (1-based).
        column: usize,
        /// What was wrong.
        reason: String,
    },
    /// The JSON is not a ycsb export (`exporter=json`): another document,
    /// or a value of the wrong type.
    #[error("not a ycsb JSON export (exporter=json): {reason} (line {line}, column {column})")]
    NotAnExport {
        /// The line of the value that did not fit (1-based).
        line: usize,
        /// Its column (1-based).
        column: usize,
        /// What did not fit.
        reason: String,
    },
    /// The export was written by a newer build, in a shape this one does
    /// not know.
    #[error("is an export of schema version {found}; this build reads up to version {supported}")]
    NewerSchema {
        /// The export's version.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
}

impl From<serde_json::Error> for ResultsError {
    fn from(e: serde_json::Error) -> Self {
        use serde_json::error::Category;
        let (line, column) = (e.line(), e.column());
        match e.classify() {
            Category::Io => ResultsError::Read(io::Error::from(e)),
            Category::Syntax | Category::Eof => ResultsError::Malformed {
                line,
                column,
                reason: reason(&e),
            },
            Category::Data => ResultsError::NotAnExport {
                line,
                column,
                reason: reason(&e),
            },
        }
    }
}

/// serde_json's message without its own ` at line L column C` suffix.
fn reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Reads a JSON export (`exporter=json`, or `ycsb merge`'s output) of any
/// version from `reader`, streaming (the text is never held whole), and
/// brings it to [`SCHEMA_VERSION`] ([`migrate`]). Java's `measurements`
/// arrays, derived from the figures, are skipped.
///
/// # Errors
///
/// [`ResultsError::Read`] when reading fails, [`ResultsError::Malformed`]
/// for text that is not JSON (or has more after the document),
/// [`ResultsError::NotAnExport`] for JSON of another shape,
/// [`ResultsError::NewerSchema`] for an export of a newer version.
pub fn read_export(reader: impl Read) -> Result<RunReport, ResultsError> {
    let mut de = serde_json::Deserializer::from_reader(BufReader::new(reader));
    let report = RunReport::deserialize(&mut de)?;
    de.end()?;
    migrate::to_current(report)
}
