//! Several clients' exports as one (`ycsb merge`): counts summed,
//! percentiles from the sum of the clients' histograms (each export
//! carries every section's full histogram), never from averaged
//! percentiles; time series lined up by wall clock. See
//! docs/multi-client.md.
//!
//! [`Merge`] folds each export in as it is added: its histograms are
//! decoded, added to the merged ones and dropped, so memory holds one
//! histogram per merged section and each input's small facts (metadata,
//! configuration, phase names, time series), whatever the number of
//! clients.
//!
//! ```
//! # use ycsb_results::{Merge, RunMetadata};
//! let mut merge = Merge::new(&["OK", "NOT_FOUND"]);
//! // merge.add("client-0.json", ycsb_results::read_export(file)?)?; ...
//! assert!(merge.mismatches().is_empty());
//! let mut metadata = RunMetadata::new("ycsb merge", "0.1.0", "2026-11-29T22:38:16+00:00");
//! metadata.command_line = vec!["ycsb".into(), "merge".into()];
//! let merged = merge.finish(metadata);
//! assert!(merged.phases.is_empty());
//! ```

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::histogram::{decode_histogram, encode_histogram, java_percentile, HistogramError};
use crate::{
    ConfigEntry, JavaSection, PercentileLatency, PhaseObservation, PhaseReport, ReportFormat,
    RunMetadata, RunReport, SectionReport, SeriesRow, SeriesSection, StatusCount,
};

/// Why an export cannot be merged.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A section carries no histogram (an export of a ycsb older than
    /// the field), so its percentiles cannot be merged exactly.
    #[error(
        "{input}: {field} is missing: exact merging needs the histogram that exports of this ycsb carry"
    )]
    MissingHistogram {
        /// The input, as named to [`Merge::add`].
        input: String,
        /// The JSON path of the field (`phases[0].sections[1].histogram`).
        field: String,
    },
    /// A section's histogram does not decode.
    #[error(transparent)]
    Histogram(#[from] HistogramError),
    /// A section counts a status the store contract does not know.
    #[error("{input}: {field}: unknown status '{status}'")]
    UnknownStatus {
        /// The input.
        input: String,
        /// The JSON path of the field (`phases[0].sections[1].returns`).
        field: String,
        /// The status's name.
        status: String,
    },
}

/// The configuration that makes two exports measurements of one workload:
/// each must be the same in every export.
const SAME_WORKLOAD: &[&str] = &[
    "recordcount",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "deleteproportion",
    "requestdistribution",
    "fieldcount",
    "fieldlength",
    "table",
    "client.count",
];

/// How far apart the clients' phases may be and still count as running
/// side by side: launch skew and unsynchronised clocks.
const TIME_SLACK_S: f64 = 60.0;

/// What the merge keeps of one input besides its figures.
#[derive(Debug)]
struct Input {
    name: String,
    metadata: RunMetadata,
    config: Vec<ConfigEntry>,
    /// The phases' names, in the export's order.
    phases: Vec<String>,
    /// The phases' total run time.
    runtime_ns: u64,
}

impl Input {
    fn config(&self, key: &str) -> Option<&ConfigEntry> {
        self.config.iter().find(|e| e.key == key)
    }
}

/// One merged section: the figures so far and the summed histogram.
#[derive(Debug)]
struct SectionSum {
    report: SectionReport,
    histogram: Histogram<u64>,
    /// The percentiles the first client listed, in its order.
    percentiles: Vec<f64>,
}

/// One merged phase.
#[derive(Debug)]
struct PhaseSum {
    name: String,
    runtime_ns: u64,
    operations: u64,
    throughput: f64,
    format: ReportFormat,
    sections: Vec<SectionSum>,
    observations: Vec<PhaseObservation>,
}

/// The exports of a multi-client run, merged one at a time.
#[derive(Debug)]
pub struct Merge {
    /// The store contract's statuses in its order (ycsb-db's `Status`).
    statuses: Vec<String>,
    inputs: Vec<Input>,
    phases: Vec<PhaseSum>,
}

impl Merge {
    /// An empty merge. `statuses` are the names of the store contract's
    /// statuses in its order (ycsb-db's `Status::ALL`): the merged
    /// sections list their counts in that order, and an export counting
    /// any other status is refused.
    pub fn new(statuses: &[&str]) -> Self {
        Self {
            statuses: statuses.iter().map(|s| s.to_string()).collect(),
            inputs: Vec::new(),
            phases: Vec::new(),
        }
    }

    /// Folds the export `report`, named `input` in errors, problems and
    /// the merged configuration (its path), into the merge.
    ///
    /// # Errors
    ///
    /// [`MergeError::MissingHistogram`] for a section without its
    /// histogram, [`MergeError::Histogram`] for one that does not decode,
    /// [`MergeError::UnknownStatus`] for a status the contract does not
    /// know. The merge is then unchanged.
    pub fn add(&mut self, input: impl Into<String>, report: RunReport) -> Result<(), MergeError> {
        let input = input.into();
        let RunReport {
            metadata,
            config,
            phases,
            ..
        } = report;
        let facts = Input {
            name: input.clone(),
            metadata,
            config,
            phases: phases.iter().map(|p| p.phase.clone()).collect(),
            runtime_ns: phases.iter().map(|p| p.runtime_ns).sum(),
        };
        // Every histogram decoded and checked first, each text dropped as
        // it is: a bad section leaves the sums alone.
        let mut decoded = Vec::with_capacity(phases.len());
        for (index, mut phase) in phases.into_iter().enumerate() {
            let mut sections = Vec::with_capacity(phase.sections.len());
            for (k, mut section) in std::mem::take(&mut phase.sections).into_iter().enumerate() {
                let field = |name: &str| format!("phases[{index}].sections[{k}].{name}");
                let Some(encoded) = section.histogram.take() else {
                    return Err(MergeError::MissingHistogram {
                        input,
                        field: field("histogram"),
                    });
                };
                let histogram =
                    decode_histogram(&encoded, &format!("{input}: {}", field("histogram")))?;
                if let Some(unknown) = section
                    .returns
                    .iter()
                    .find(|r| !self.statuses.contains(&r.status))
                {
                    return Err(MergeError::UnknownStatus {
                        input,
                        field: field("returns"),
                        status: unknown.status.clone(),
                    });
                }
                sections.push((section, histogram));
            }
            decoded.push((phase, sections));
        }
        for (phase, sections) in decoded {
            self.fold_phase(phase, sections);
        }
        self.inputs.push(facts);
        Ok(())
    }

    /// Adds one client's phase, its sections decoded, to the merged phase
    /// of its name.
    fn fold_phase(&mut self, phase: PhaseReport, sections: Vec<(SectionReport, Histogram<u64>)>) {
        let at = match self.phases.iter().position(|p| p.name == phase.phase) {
            Some(at) => at,
            None => {
                self.phases.push(PhaseSum {
                    name: phase.phase.clone(),
                    runtime_ns: 0,
                    operations: 0,
                    throughput: 0.0,
                    format: phase.format,
                    sections: Vec::new(),
                    observations: Vec::new(),
                });
                self.phases.len() - 1
            }
        };
        let sum = &mut self.phases[at];
        // The clients ran side by side: the longest is the phase's time,
        // and their rates add up.
        sum.runtime_ns = sum.runtime_ns.max(phase.runtime_ns);
        sum.operations += phase.operations;
        sum.throughput += phase.throughput;
        for (section, histogram) in sections {
            add_section(&mut sum.sections, section, &histogram);
        }
        if let Some(observation) = phase.observation {
            sum.observations.push(observation);
        }
    }

    /// The reasons the inputs added so far are not the clients of one run
    /// (one line each; empty when they are): different phases, stores or
    /// workloads, the same `client.index` twice, runs that did not overlap
    /// in time. Whether two inputs are the same file is the caller's to
    /// check.
    pub fn mismatches(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let Some(first) = self.inputs.first() else {
            return problems;
        };
        for input in &self.inputs[1..] {
            if input.phases != first.phases {
                problems.push(format!(
                    "{} has phases [{}] but {} has [{}]: merge exports of the same phase (a load with loads, a run with runs)",
                    input.name,
                    input.phases.join(", "),
                    first.name,
                    first.phases.join(", ")
                ));
            }
            if let (Some(a), Some(b)) = (&first.metadata.store, &input.metadata.store) {
                if a != b {
                    problems.push(format!(
                        "{} ran against store '{b}' but {} against '{a}'",
                        input.name, first.name
                    ));
                }
            }
            for key in SAME_WORKLOAD {
                if let (Some(a), Some(b)) = (first.config(key), input.config(key)) {
                    if !same_value(&a.value, &b.value) {
                        problems.push(format!(
                            "{} has {key}={} ({}) but {} has {key}={} ({}): not the same workload",
                            input.name, b.value, b.origin, first.name, a.value, a.origin
                        ));
                    }
                }
            }
        }

        // Distinct client indexes (a merged export, already a sum of
        // clients, has none of its own).
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for input in &self.inputs {
            if input.config("merge.input.0").is_some() {
                continue;
            }
            let index = input
                .config("client.index")
                .map_or("0", |e| e.value.as_str());
            match seen.iter().find(|(_, i)| *i == index) {
                Some((other, _)) => problems.push(format!(
                    "{} and {other} are both client.index={index}: each client of a run has its own index (client.count, client.index)",
                    input.name
                )),
                None => seen.push((&input.name, index)),
            }
        }

        // Time: every client's phases overlap the others'.
        let windows: Vec<(f64, f64, &Input)> = self
            .inputs
            .iter()
            .filter_map(|i| {
                let start = chrono::DateTime::parse_from_rfc3339(&i.metadata.start_time).ok()?;
                let start = start.timestamp_millis() as f64 / 1e3;
                Some((start, start + i.runtime_ns as f64 / 1e9, i))
            })
            .collect();
        if let (Some(latest), Some(earliest_end)) = (
            windows.iter().max_by(|a, b| a.0.total_cmp(&b.0)),
            windows.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        ) {
            if latest.0 > earliest_end.1 + TIME_SLACK_S {
                problems.push(format!(
                    "{} started {:.0} s after {} had finished: the clients of one run measure at the same time",
                    latest.2.name,
                    latest.0 - earliest_end.1,
                    earliest_end.2.name
                ));
            }
        }
        problems
    }

    /// The merged export, under `metadata` (the merge's own: its command
    /// line, host and time), which takes the store, its engine and build
    /// from the first input (the clients measured one store) and its
    /// durability when every input agrees on it. The configuration is the
    /// first input's, each origin naming that input, and one
    /// `merge.input.<i>` entry per input saying where and when it ran.
    pub fn finish(self, mut metadata: RunMetadata) -> RunReport {
        if let Some(first) = self.inputs.first() {
            let m = &first.metadata;
            metadata.store.clone_from(&m.store);
            metadata.engine.clone_from(&m.engine);
            metadata.engine_version.clone_from(&m.engine_version);
            metadata.engine_build.clone_from(&m.engine_build);
            if self
                .inputs
                .iter()
                .all(|i| i.metadata.durability == m.durability)
            {
                metadata.durability.clone_from(&m.durability);
            }
        }
        let mut config: Vec<ConfigEntry> = self
            .inputs
            .first()
            .map(|first| {
                first
                    .config
                    .iter()
                    .map(|c| ConfigEntry {
                        key: c.key.clone(),
                        value: c.value.clone(),
                        origin: format!("{} ({})", c.origin, first.name),
                    })
                    .collect()
            })
            .unwrap_or_default();
        for (i, input) in self.inputs.iter().enumerate() {
            let mut who = input.name.clone();
            if let Some(host) = &input.metadata.host {
                who.push_str(&format!(" on {host}"));
            }
            who.push_str(&format!(" at {}", input.metadata.start_time));
            config.push(ConfigEntry {
                key: format!("merge.input.{i}"),
                value: who,
                origin: "ycsb merge".into(),
            });
        }
        let statuses = self.statuses;
        let phases = self
            .phases
            .into_iter()
            .map(|p| PhaseReport {
                phase: p.name,
                runtime_ms: p.runtime_ns / 1_000_000,
                runtime_ns: p.runtime_ns,
                operations: p.operations,
                throughput: p.throughput,
                sections: finish_sections(p.sections, &statuses),
                format: p.format,
                observation: merge_observations(&p.observations),
            })
            .collect();
        RunReport {
            schema_version: crate::SCHEMA_VERSION,
            metadata,
            config,
            phases,
            engine_reports: Vec::new(),
        }
    }
}

/// Adds one client's section to the merged sections of its name.
fn add_section(merged: &mut Vec<SectionSum>, s: SectionReport, histogram: &Histogram<u64>) {
    let index = match merged.iter().position(|m| m.report.name == s.name) {
        Some(i) => i,
        None => {
            merged.push(SectionSum {
                report: SectionReport {
                    name: s.name.clone(),
                    operation: s.operation,
                    intended: s.intended,
                    failed: s.failed,
                    java: None,
                    operations: 0,
                    average_us: 0.0,
                    min_us: 0,
                    max_us: 0,
                    average_ns: 0.0,
                    min_ns: u64::MAX,
                    max_ns: 0,
                    percentiles: Vec::new(),
                    returns: Vec::new(),
                    histogram: None,
                },
                // Auto-resizing, so any client's range fits.
                histogram: Histogram::new(3).unwrap_or_else(|_| histogram.clone()),
                percentiles: s.percentiles.iter().map(|p| p.percentile).collect(),
            });
            merged.len() - 1
        }
    };
    let sum = &mut merged[index];
    let m = &mut sum.report;
    // The exact sums: mean weighted by each client's count.
    let total = m.operations + s.operations;
    if total > 0 {
        m.average_ns = (m.average_ns * m.operations as f64 + s.average_ns * s.operations as f64)
            / total as f64;
    }
    m.operations = total;
    if s.operations > 0 {
        m.min_ns = m.min_ns.min(s.min_ns);
        m.max_ns = m.max_ns.max(s.max_ns);
    }
    for r in s.returns {
        match m.returns.iter_mut().find(|x| x.status == r.status) {
            Some(x) => x.count += r.count,
            None => m.returns.push(r),
        }
    }
    add_java(&mut m.java, s.java.as_ref());
    // Adding fails only if the counts array cannot grow.
    let _ = sum.histogram.add(histogram);
}

/// The merged sections' percentiles and encoded histograms, in report
/// order.
fn finish_sections(sums: Vec<SectionSum>, statuses: &[String]) -> Vec<SectionReport> {
    let order = |r: &StatusCount| statuses.iter().position(|s| *s == r.status);
    let mut merged: Vec<SectionReport> = sums
        .into_iter()
        .map(|sum| {
            let mut m = sum.report;
            if m.min_ns == u64::MAX {
                m.min_ns = 0;
            }
            m.average_us = m.average_ns / 1_000.0;
            m.min_us = m.min_ns / 1_000;
            m.max_us = m.max_ns / 1_000;
            m.returns.sort_by_key(|r| order(r).unwrap_or(usize::MAX));
            m.percentiles = sum
                .percentiles
                .iter()
                .map(|&percentile| {
                    // Within the exact extremes, as a single client
                    // reports them: a bucket's value may lie above Max.
                    let ns = java_percentile(&sum.histogram, percentile)
                        .clamp(m.min_ns, m.max_ns.max(m.min_ns));
                    PercentileLatency {
                        percentile,
                        us: ns / 1_000,
                        ns,
                    }
                })
                .collect();
            m.histogram = Some(encode_histogram(&sum.histogram));
            m
        })
        .collect();
    // Report order: operations, then intended sections, as a single client.
    // Each operation's failed sections after it: FAILED, then per status.
    merged.sort_by_cached_key(|m| {
        (
            m.intended,
            m.operation.index(),
            m.failed,
            !m.name.ends_with("-FAILED"),
            m.name.clone(),
        )
    });
    merged
}

/// Adds one client's Java-type figures to the merged ones: sums, buckets
/// bucket by bucket, timeseries units by their offset from each client's
/// first latency.
fn add_java(into: &mut Option<JavaSection>, from: Option<&JavaSection>) {
    let Some(from) = from else {
        return;
    };
    let into = into.get_or_insert_with(JavaSection::default);
    into.sum_us += from.sum_us;
    into.sum_sq_us += from.sum_sq_us;
    if into.buckets.len() < from.buckets.len() {
        into.buckets.resize(from.buckets.len(), 0);
    }
    for (mine, theirs) in into.buckets.iter_mut().zip(&from.buckets) {
        *mine += theirs;
    }
    for unit in &from.series {
        match into
            .series
            .binary_search_by_key(&unit.time_ms, |u| u.time_ms)
        {
            Ok(i) => {
                into.series[i].operations += unit.operations;
                into.series[i].sum_us += unit.sum_us;
            }
            Err(i) => into.series.insert(i, *unit),
        }
    }
}

/// Lines up the clients' time series by wall-clock time and sums what
/// adds up (operations, errors; throughput is the bucket's operations per
/// second). Per-interval latencies are the largest of the clients' (an
/// upper bound: the series carry no per-interval histograms); resources
/// are left out (they are per host); gauges come from the first client
/// that has them (the shared server).
fn merge_observations(observed: &[PhaseObservation]) -> Option<PhaseObservation> {
    let first = observed.first()?;
    let granularity_ms = (first.granularity_s * 1_000.0).round().max(1.0) as u64;
    let start = observed.iter().map(|o| o.start_unix_ms).min()?;
    let mut buckets: BTreeMap<u64, SeriesRow> = BTreeMap::new();
    for obs in observed {
        for row in &obs.series {
            // The bucket whose end is nearest this row's end.
            let offset = row.unix_ms.saturating_sub(start);
            let bucket = (offset + granularity_ms / 2) / granularity_ms;
            let end_s = (bucket * granularity_ms) as f64 / 1_000.0;
            let merged = buckets.entry(bucket).or_insert_with(|| {
                let mut r = SeriesRow::empty(end_s, first.granularity_s, row.warmup);
                r.unix_ms = start + bucket * granularity_ms;
                r
            });
            merged.operations += row.operations;
            merged.errors += row.errors;
            merged.warmup &= row.warmup;
            // The server's figures from one client only (each samples
            // the same server), from a full interval, not a tail fragment.
            let full = row.interval_s >= first.granularity_s * 0.5;
            if full && merged.gauges.is_empty() && !row.gauges.is_empty() {
                merged.gauges = row.gauges.clone();
                merged.db_size_bytes = row.db_size_bytes;
            }
            if full && merged.monitor.is_none() {
                merged.monitor = row.monitor.clone();
            }
            for s in &row.sections {
                match merged.sections.iter_mut().find(|m| m.name == s.name) {
                    Some(m) => add_series_section(m, s),
                    None => merged.sections.push(s.clone()),
                }
            }
        }
    }
    // Rates over the bucket, not sums of the clients' rates: a client's
    // short tail interval has a rate far from its share of the bucket.
    let seconds = granularity_ms as f64 / 1_000.0;
    for row in buckets.values_mut() {
        row.throughput = row.operations as f64 / seconds;
        for s in &mut row.sections {
            s.throughput = s.operations as f64 / seconds;
        }
    }
    Some(PhaseObservation {
        granularity_s: first.granularity_s,
        start_unix_ms: start,
        warmup: None,
        series: buckets.into_values().collect(),
        stability: None,
        amplification: None,
        // Every client's store declared the same kinds; the first
        // declaration of a gauge is kept.
        gauge_kinds: observed.iter().rev().fold(BTreeMap::new(), |mut kinds, o| {
            kinds.extend(o.gauge_kinds.clone());
            kinds
        }),
    })
}

fn add_series_section(m: &mut SeriesSection, s: &SeriesSection) {
    let total = m.operations + s.operations;
    if total > 0 {
        m.avg_us = (m.avg_us * m.operations as f64 + s.avg_us * s.operations as f64) / total as f64;
    }
    if s.operations > 0 {
        m.min_us = if m.operations > 0 {
            m.min_us.min(s.min_us)
        } else {
            s.min_us
        };
    }
    m.operations = total;
    m.errors += s.errors;
    m.p50_us = m.p50_us.max(s.p50_us);
    m.p99_us = m.p99_us.max(s.p99_us);
    m.p999_us = m.p999_us.max(s.p999_us);
    m.max_us = m.max_us.max(s.max_us);
}

/// Equal as numbers when both are (`0` and `0.0`), else as text.
fn same_value(a: &str, b: &str) -> bool {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

#[cfg(test)]
mod tests;
