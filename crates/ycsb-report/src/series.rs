//! Reading a phase's time series: which rows a rate chart may use, how
//! long the phase lasted, and the true reason when there is nothing to
//! chart.

use ycsb_results::{PhaseReport, RunReport, SeriesRow, SeriesSection};

use crate::runs::seconds_label;

/// Sections that are bookkeeping, not workload operations.
pub(crate) const SKIPPED_SECTIONS: [&str; 2] = ["CLEANUP", "VERIFY"];

/// A rate interval shorter than this share of the granularity (a phase's
/// last, partial interval) is left out of rate charts: its few operations
/// over a few milliseconds are noise that a full-width point would
/// present as a full interval's rate.
const FULL_INTERVAL: f64 = 0.9;

/// A phase's rows whose interval is full enough to chart as a rate.
pub(crate) fn full_rows(phase: &PhaseReport) -> Vec<&SeriesRow> {
    let granularity = granularity(phase);
    phase
        .series()
        .iter()
        .filter(|r| r.interval_s.is_nan() || r.interval_s >= granularity * FULL_INTERVAL)
        .collect()
}

fn granularity(phase: &PhaseReport) -> f64 {
    phase.observation.as_ref().map_or(0.0, |o| o.granularity_s)
}

/// How long the phase lasted, seconds: its last interval's end, or its
/// runtime when it has no series.
pub(crate) fn phase_seconds(phase: &PhaseReport) -> f64 {
    phase
        .series()
        .last()
        .map(|r| r.time_s)
        .filter(|t| t.is_finite())
        .unwrap_or(phase.runtime_ms as f64 / 1000.0)
}

/// Why a phase has no time series at all; `None` when it has one.
pub(crate) fn why_no_series(doc: &RunReport, phase: &PhaseReport) -> Option<String> {
    if !phase.series().is_empty() {
        return None;
    }
    let granularity = doc.config_value("timeseries.granularity");
    if granularity.and_then(|g| g.parse::<f64>().ok()) == Some(0.0) {
        return Some("timeseries.granularity=0 turns the time series off".into());
    }
    Some(match &phase.observation {
        Some(o) => format!(
            "the phase lasted {}, less than its first interval of {}",
            seconds_label(phase.runtime_ms as f64 / 1000.0),
            seconds_label(o.granularity_s)
        ),
        None => "the export has no time series for this phase (phases[].observation.series)".into(),
    })
}

/// Why a rate chart (throughput, CPU, I/O) has nothing of a phase that
/// has a series: every interval was partial.
pub(crate) fn why_no_rates(doc: &RunReport, phase: &PhaseReport) -> String {
    why_no_series(doc, phase).unwrap_or_else(|| {
        format!(
            "the phase lasted {}, less than one full interval of {} to take a rate over",
            seconds_label(phase_seconds(phase)),
            seconds_label(granularity(phase))
        )
    })
}

/// Why the client's resources are missing from a phase: no series, or
/// `/proc` was not readable (every row without them).
pub(crate) fn why_no_client(doc: &RunReport, phase: &PhaseReport, rate: bool) -> String {
    if let Some(reason) = why_no_series(doc, phase) {
        return reason;
    }
    if phase.series().iter().all(|r| r.client.is_none()) {
        return "the client's resources were not sampled: /proc/self was not readable where it ran"
            .into();
    }
    if rate && full_rows(phase).is_empty() {
        return why_no_rates(doc, phase);
    }
    "the client's I/O counters (/proc/self/io) were not readable where it ran".into()
}

/// Why stability cannot be judged from a phase's intervals: fewer than
/// `JUDGED_WINDOWS` steady-state windows (`steadystate.window`).
pub(crate) fn too_short_reason(doc: &RunReport, phase: &PhaseReport) -> Option<String> {
    let window = doc
        .config_value("steadystate.window")
        .and_then(|w| w.parse::<usize>().ok())
        .unwrap_or(5)
        .max(1);
    let intervals = phase
        .observation
        .as_ref()
        .and_then(|o| o.stability.as_ref())
        .map_or(0, |s| s.intervals);
    let needed = ycsb_results::JUDGED_WINDOWS * window;
    (intervals < needed).then(|| {
        format!(
            "{intervals} intervals of {} ({} in all); judging needs {needed} \
             ({} windows of steadystate.window={window})",
            seconds_label(granularity(phase)),
            seconds_label(phase_seconds(phase)),
            ycsb_results::JUDGED_WINDOWS
        )
    })
}

/// The workload operations a phase measured (no bookkeeping, no failed
/// or intended twins), from its final sections.
pub(crate) fn operations(phase: &PhaseReport) -> Vec<String> {
    phase
        .sections
        .iter()
        .filter(|s| !s.intended && !s.failed)
        .map(|s| s.name.as_str())
        .filter(|n| !SKIPPED_SECTIONS.contains(n))
        .map(str::to_string)
        .collect()
}

/// The section of operation `op` in a row: its service time, or its
/// intended latency.
pub(crate) fn section<'a>(
    row: &'a SeriesRow,
    op: &str,
    intended: bool,
) -> Option<&'a SeriesSection> {
    row.sections.iter().find(|s| {
        s.intended == intended
            && match s.name.strip_prefix("Intended-") {
                Some(name) => intended && name == op,
                None => !intended && s.name == op,
            }
    })
}

/// Whether a phase's rows have intended latency for `op`.
pub(crate) fn has_intended(phase: &PhaseReport, op: &str) -> bool {
    phase
        .series()
        .iter()
        .any(|r| section(r, op, true).is_some_and(|s| s.operations > 0))
}
