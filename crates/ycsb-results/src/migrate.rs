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
//! - A field added later whose default depends on the rest of the export
//!   (not expressible as a serde default) stays empty when read, and its
//!   reader asks this module for the value older exports imply. The one
//!   such field is `observation.gauge_kinds` (each gauge's kind, declared
//!   by its store since it was added): for a gauge it does not list,
//!   [`inferred_gauge_kind`] infers the kind from the naming conventions
//!   the stores followed before (`-bytes`, `-mb`, `-sec`, ...). Leaving
//!   the field empty keeps an older export's bytes when written back.

use crate::{GaugeKind, ResultsError, RunReport, SCHEMA_VERSION};

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

/// The kind of a gauge of an export written before gauges declared their
/// kind, from its name as the stores of that time named them (every name
/// they reported falls under one of these rules; others are
/// [`GaugeKind::Number`]).
pub fn inferred_gauge_kind(name: &str) -> GaugeKind {
    // The part after the store's prefix (`rocksdb.`), which is the
    // engine's own name for the figure.
    let figure = name.split_once('.').map_or(name, |(_, rest)| rest);
    let ends = |suffixes: &[&str]| suffixes.iter().any(|s| figure.ends_with(s));
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| figure.starts_with(p));
    if starts(&["stall."]) {
        // `rocksdb.stall.stop_for_pending_compaction_bytes` counts stalls.
        GaugeKind::Count
    } else if ends(&["-rate"]) {
        GaugeKind::BytesPerSecond
    } else if figure.contains("bytes")
        || ends(&["-size", "-usage", "size-all-mem-tables", "memory-used"])
    {
        GaugeKind::Bytes
    } else if ends(&["-mb"]) || figure.starts_with("mb-at-level") {
        GaugeKind::Mebibytes
    } else if ends(&["-sec"]) {
        GaugeKind::Seconds
    } else if figure == "map-use" {
        GaugeKind::Ratio
    } else if starts(&["is-"]) || ends(&["-pending", "-running"]) {
        GaugeKind::Flag
    } else if starts(&["num-", "estimate-num-"])
        || ends(&[
            "pages",
            "-files",
            "tables",
            "records",
            "entries",
            "depth",
            "height",
            "-count",
            "readers",
            "-hits",
            "-misses",
            "-writes",
            "evictions",
            "-evicted",
            "-read",
            "-written",
            "checkpoints",
            "-ops",
            "chunks",
            "generation",
            "-flushes",
            "-compactions",
            "-completed",
            "memtables",
            "-up",
            "-term",
            "-index",
        ])
    {
        GaugeKind::Count
    } else {
        GaugeKind::Number
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_gauges_get_the_kind_their_names_implied() {
        for (name, kind) in [
            ("rocksdb.num-files-at-level0", GaugeKind::Count),
            ("rocksdb.estimate-num-keys", GaugeKind::Count),
            (
                "rocksdb.estimate-pending-compaction-bytes",
                GaugeKind::Bytes,
            ),
            ("rocksdb.cur-size-all-mem-tables", GaugeKind::Bytes),
            ("rocksdb.block-cache-usage", GaugeKind::Bytes),
            ("rocksdb.live-sst-files-size", GaugeKind::Bytes),
            (
                "rocksdb.actual-delayed-write-rate",
                GaugeKind::BytesPerSecond,
            ),
            ("rocksdb.is-write-stopped", GaugeKind::Flag),
            ("rocksdb.compaction-pending", GaugeKind::Flag),
            ("rocksdb.num-running-compactions", GaugeKind::Count),
            ("rocksdb.stall.total", GaugeKind::Count),
            (
                "rocksdb.stall.stop_for_pending_compaction_bytes",
                GaugeKind::Count,
            ),
            ("wiredtiger.log-bytes-written", GaugeKind::Bytes),
            ("leveldb.mb-at-level1", GaugeKind::Mebibytes),
            ("leveldb.compaction-read-mb", GaugeKind::Mebibytes),
            ("leveldb.compaction-sec", GaugeKind::Seconds),
            ("leveldb.approximate-memory-usage", GaugeKind::Bytes),
            ("leveldb.approximate-size", GaugeKind::Bytes),
            ("lmdb.map-use", GaugeKind::Ratio),
            ("lmdb.leaf-pages", GaugeKind::Count),
            ("lmdb.depth", GaugeKind::Count),
            ("sqlite.memory-used", GaugeKind::Bytes),
            ("sqlite.cache-misses", GaugeKind::Count),
            ("wiredtiger.checkpoint-running", GaugeKind::Flag),
            ("wiredtiger.block-bytes-read", GaugeKind::Bytes),
            ("wiredtiger.pages-read", GaugeKind::Count),
            ("memory.records", GaugeKind::Count),
            ("etcd.members-up", GaugeKind::Count),
            ("fjall.compaction-sec", GaugeKind::Seconds),
            ("something.else", GaugeKind::Number),
        ] {
            assert_eq!(inferred_gauge_kind(name), kind, "{name}");
        }
    }

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
