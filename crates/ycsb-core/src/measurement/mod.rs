//! Latency measurement and the reports Java YCSB prints.
//!
//! Each worker thread owns a [`Recorder`] and records every operation into
//! thread-local counts in HdrHistogram's layout (nanoseconds, 3
//! significant digits, created lazily per operation type, growing as
//! needed): no lock and no shared atomic per operation. Every
//! [`MeasurementSettings::publish_period`] the recorder adds what it
//! gathered to the counts of its own mutex-guarded slot, which only the
//! status thread also touches (turning them into HdrHistograms). [`Measurements::take_tick`] (the
//! status thread, every `timeseries.granularity`) merges the slots into the
//! figures of one time-series interval, which then fold into the status
//! line's interval and the cumulative totals;
//! [`Measurements::take_interval`] (every `status.interval`) takes in what
//! is left and gives the figures of one status line;
//! [`Measurements::summary`] gives the [`PhaseReport`](ycsb_results::PhaseReport) of a finished phase,
//! which the [`Exporter`]s write in Java's text format or as JSON.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use ycsb_core::db::Status;
//! # use ycsb_core::internals::Measurements;
//! use ycsb_core::measurement::{MeasurementSettings, TextExporter};
//! use ycsb_core::results::Operation;
//!
//! let measurements = Measurements::new(&MeasurementSettings::default(), 1);
//! let mut recorder = measurements.recorder(0);
//! recorder.record(Operation::Read, Status::Ok, 250_000);
//! recorder.publish_if_due(Instant::now());
//! drop(recorder); // publishes the rest
//! let report = measurements.summary("run", Duration::from_millis(1000), 1);
//! let mut text = Vec::new();
//! TextExporter::new(&mut text).write_phase(&report).unwrap();
//! assert!(String::from_utf8(text).unwrap().contains("[READ], Operations, 1\n"));
//! ```
//!
//! # Where the output deliberately differs from Java YCSB
//!
//! - Latencies are recorded in nanoseconds and shown in whole microseconds
//!   (truncated, as Java's `(end - start) / 1000`). `AverageLatency(us)`
//!   and `MinLatency`/`MaxLatency` are exact (Java derives the average and
//!   the extremes from histogram buckets); percentiles come from the
//!   histogram, within its 0.1 % precision, as in Java.
//! - Floating-point values in the text report are printed as the shortest
//!   plain decimal that reads back to the same value, always with a
//!   fractional part (`1000.0`, `47865.21156423511`). Java's
//!   `Double.toString` switches to `1.0E7` notation at 10^7 and above;
//!   plain decimals parse everywhere, so we never use exponents.
//! - Sections are listed in a fixed order ([`Operation::ALL`](ycsb_results::Operation::ALL), then the
//!   `Intended-` sections) and `Return=` lines in [`Status::ALL`](ycsb_db::Status::ALL) order,
//!   where Java follows hash-map order. Only statuses that occurred are
//!   listed, as in Java.
//! - No JVM lines (`[TOTAL_GCS_...]`, `[TOTAL_GC_TIME...]`): there is no
//!   garbage collector.
//! - `exporter=json` writes one JSON
//!   document with metadata, configuration and per phase both our figures
//!   and a Java-style `measurements` array; `jsonarray` writes Java's array
//!   of `{"metric", "measurement", "value"}` objects, each with an added
//!   `"phase"` key so that a load and a run in one process stay apart.
//! - With several phases in one process, the text report writes one block
//!   per phase, separated by an empty line.
//! - The status line has no trailing space (Java ends it with one), and no
//!   completion estimate while no operation has completed (Java then
//!   prints an estimate of about 292 billion years).
//! - With `measurementtype=hdrhistogram` the average and extremes are
//!   exact; the other types (`histogram`, `timeseries`, `raw` and the two
//!   combinations) compute theirs from whole microseconds as Java does.
//! - Java's exporter class names write Java's bytes (`JavaJsonExporter`);
//!   the text report and `json`/`jsonarray` keep the plain decimals above.
//! - `hdrhistogram.percentiles` defaults to `50,95,99,99.9` (Java:
//!   `95,99`), and an unreadable list is an error (Java warns and uses its
//!   default).

mod export;
mod flat;
mod format;
mod go_summary;
pub(crate) mod hdrlog;
mod java;
pub(crate) mod recorder;
mod report;
mod settings;
#[cfg(test)]
mod tests;

pub use export::{
    check_output_path, java_double_exponent, new_exporter, write_atomically, Exporter,
    JavaJsonExporter, JsonArrayExporter, JsonExporter, TextExporter,
};
pub use format::{format_status_line, java_ordinal, StatusLine};
pub use go_summary::{write_go_summary, OutputStyle};
pub(crate) use hdrlog::HdrLogSettings;
pub use hdrlog::{
    decode_histogram, read_interval_log, HdrLogError, IntervalLog, IntervalLogReader,
    IntervalTiming, LogInterval, MAX_LOG_LINE,
};
pub use recorder::{IntervalSection, IntervalSnapshot, TickSection, TickSnapshot};
pub(crate) use recorder::{Measurements, Recorder};
pub(crate) use report::effective_config;
pub use report::{engine_build_entry, run_metadata, JavaMeasurement, JavaNumber, JavaReport};
pub use settings::{
    ExporterKind, FailureSections, MeasurementInterval, MeasurementSettings, CSV_OUTPUT_FILE,
    RAW_OUTPUT_FILE,
};
pub(crate) use settings::{EXPORT_FILE, MEASUREMENT_INTERVAL, PROPERTIES, STATUS_INTERVAL};

#[cfg(test)]
use {
    format::{java_decimal, java_double, remaining_text},
    recorder::SectionHistogram,
};
