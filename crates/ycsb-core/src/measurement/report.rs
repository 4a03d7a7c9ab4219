//! The final report's Java form and the metadata and configuration a run
//! records. The report's data types live in ycsb-results; this module
//! computes what only ycsb-core knows (the host, the redacted command line
//! and configuration) and lists the figures as Java's exporters do.

use serde::Serialize;

use ycsb_db::{redact_value, EngineBuild, Origin, Properties, PropertyDecl};

use ycsb_results::{
    ConfigEntry, EngineBuildEntry, JavaSection, PhaseReport, ReportFormat, RunMetadata,
    SectionReport,
};

use super::format::java_ordinal;
use ycsb_results::RawPoint;
use ycsb_results::{MeasurementType, Operation};

/// How an engine was built, as exported.
pub fn engine_build_entry(build: &EngineBuild) -> EngineBuildEntry {
    EngineBuildEntry {
        library: build.library.to_string(),
        assertions: build.assertions.as_str().to_string(),
        evidence: build.evidence.clone(),
    }
}

/// Metadata for a run starting now on this host, with no git revision
/// (set [`RunMetadata::git_revision`] when the build knows it).
///
/// Arguments of the form `name=value` (as after `-p`) whose name is a
/// secret by [`ycsb_db::is_secret`] with `known` have their value redacted, and
/// credentials in other values (URLs, headers) by [`redact_value`].
pub fn run_metadata(
    tool: impl Into<String>,
    version: impl Into<String>,
    command_line: impl IntoIterator<Item = String>,
    known: &[&PropertyDecl],
) -> RunMetadata {
    let mut metadata = RunMetadata::new(tool, version, chrono::Local::now().to_rfc3339());
    metadata.host = host_name();
    metadata.command_line = command_line
        .into_iter()
        .map(|arg| ycsb_db::redact_argument(&arg, known).into_owned())
        .collect();
    metadata
}

fn host_name() -> Option<String> {
    let from_kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    from_kernel
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// The effective configuration: every set property, and the default of
/// every declared property that was not set, sorted by key, with secret
/// values (by [`ycsb_db::is_secret`]) replaced by [`ycsb_db::REDACTED`] and credentials in
/// other values redacted ([`redact_value`]).
pub fn effective_config(props: &Properties, known: &[&PropertyDecl]) -> Vec<ConfigEntry> {
    let mut entries: Vec<ConfigEntry> = props
        .iter()
        .map(|(key, value, origin)| ConfigEntry {
            key: key.to_string(),
            value: value.to_string(),
            origin: origin.to_string(),
        })
        .collect();
    for decl in known {
        let Some(default) = decl.default else {
            continue;
        };
        let listed = entries.iter().any(|e| decl.matches(&e.key));
        if !listed && !props.is_set(decl) {
            entries.push(ConfigEntry {
                key: decl.name.to_string(),
                value: default.to_string(),
                origin: Origin::Default.to_string(),
            });
        }
    }
    for entry in &mut entries {
        entry.value = redact_value(&entry.key, &entry.value, known).into_owned();
    }
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    entries
}

/// A number of Java's report, printed as an integer or a double as Java
/// does for that line.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JavaNumber {
    /// Printed as a plain integer.
    Integer(u64),
    /// A Java `int` that may be negative (`MinLatency(us), -1` of a
    /// section without latencies), printed as a plain integer.
    Signed(i64),
    /// Printed as Java's `Double.toString` would, without exponent.
    Float(f64),
}

/// One line of Java's report: `[metric], measurement, value`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JavaMeasurement {
    /// The section (`OVERALL`, `READ`, `Intended-READ`).
    pub metric: String,
    /// The figure's name (`Operations`, `95thPercentileLatency(us)`).
    pub measurement: String,
    /// Its value.
    pub value: JavaNumber,
}

/// What ycsb-core makes of a [`PhaseReport`] in Java's forms: the lines
/// of Java's report and the raw latencies.
pub trait JavaReport {
    /// The phase's figures as Java's exporters write them, in order:
    /// `OVERALL` runtime and throughput, then each section as its
    /// `measurementtype` exports it (Java's `OneMeasurement*`
    /// `exportMeasurements`).
    fn java_measurements(&self) -> Vec<JavaMeasurement>;

    /// Writes every latency the raw types kept, at the end of the phase.
    ///
    /// For Java's `raw` and `hdrhistogram+raw`, as `OneMeasurementRaw`
    /// does: per section a header line `<OP> latency raw data: op,
    /// timestamp(ms), latency(us)`, then one `<OP>,<timestamp ms>,<latency
    /// us>` line per operation in the order they ended.
    ///
    /// For go-ycsb's `csv`, as its `csvs.Output`: the header
    /// `operation,timestamp_us,latency_us`, then one line per operation
    /// with its start in microseconds since the Unix epoch. go-ycsb's
    /// operation names: `READ_MODIFY_WRITE` for `READ-MODIFY-WRITE`, a
    /// failed operation as `<OP>_ERROR`, and every successful one a second
    /// time as `TOTAL` (go-ycsb's `DbWrapper` measures both; not a
    /// read-modify-write, whose read and update are there already). Sections
    /// follow in report order, each in time order, `TOTAL` last; `Intended-`
    /// sections (which go-ycsb lacks) keep their prefix as `INTENDED_`.
    ///
    /// Nothing for the other types.
    ///
    /// # Errors
    ///
    /// The first error of `out`.
    fn write_raw(&self, out: &mut dyn std::io::Write) -> std::io::Result<()>;

    /// [`JavaReport::write_raw`] for a later phase of the same run that
    /// appends to what an earlier phase wrote: without the CSV header, so
    /// the file stays one CSV table (Java's raw sections carry their own
    /// headers and are written whole).
    ///
    /// # Errors
    ///
    /// The first error of `out`.
    fn write_raw_continued(&self, out: &mut dyn std::io::Write) -> std::io::Result<()>;

    /// Whether [`JavaReport::write_raw`] writes anything.
    fn has_raw(&self) -> bool;
}

impl JavaReport for PhaseReport {
    fn java_measurements(&self) -> Vec<JavaMeasurement> {
        let format = &self.format;
        let mut out = Lines {
            out: Vec::new(),
            format,
        };
        out.push(
            "OVERALL",
            "RunTime(ms)",
            JavaNumber::Integer(self.runtime_ms),
        );
        out.push(
            "OVERALL",
            "Throughput(ops/sec)",
            JavaNumber::Float(self.throughput),
        );
        for s in &self.sections {
            let name = s.name.as_str();
            let empty = JavaSection::default();
            let java = s.java.as_ref().unwrap_or(&empty);
            match format.measurement_type {
                MeasurementType::HdrHistogram | MeasurementType::Csv => out.hdr(name, s, true),
                MeasurementType::Histogram => out.buckets(name, s, java, true),
                MeasurementType::HdrHistogramAndHistogram => {
                    // Java's TwoInOneMeasurement: statuses go to the first.
                    out.hdr(&format!("Hdr{name}"), s, true);
                    out.buckets(&format!("Bucket{name}"), s, java, false);
                }
                MeasurementType::HdrHistogramAndRaw => {
                    out.hdr(&format!("Hdr{name}"), s, true);
                    out.raw(&format!("Raw{name}"), s, java, false);
                }
                MeasurementType::TimeSeries => out.series(name, s, java),
                MeasurementType::Raw => out.raw(name, s, java, true),
            }
        }
        out.out
    }

    fn write_raw(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.format.measurement_type == MeasurementType::Csv {
            writeln!(out, "operation,timestamp_us,latency_us")?;
        }
        self.write_raw_continued(out)
    }

    fn write_raw_continued(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let prefix = match self.format.measurement_type {
            MeasurementType::Raw => "",
            MeasurementType::HdrHistogramAndRaw => "Raw",
            MeasurementType::Csv => return write_go_csv_rows(self, out),
            _ => return Ok(()),
        };
        for s in &self.sections {
            let name = format!("{prefix}{}", s.name);
            writeln!(
                out,
                "{name} latency raw data: op, timestamp(ms), latency(us)"
            )?;
            for p in s.java.iter().flat_map(|j| &j.raw) {
                writeln!(out, "{name},{},{}", p.timestamp_ms(), p.latency_us)?;
            }
        }
        Ok(())
    }

    fn has_raw(&self) -> bool {
        self.format.measurement_type.keeps_raw()
    }
}

/// go-ycsb's CSV rows of a phase (see [`JavaReport::write_raw`]).
fn write_go_csv_rows(phase: &PhaseReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // go-ycsb measures no clean-up and no latency per scanned record.
    for s in phase.sections.iter().filter(|s| {
        !matches!(
            s.operation,
            Operation::Cleanup | Operation::ScanLatencyPerRecord
        )
    }) {
        let mut name = s.operation.name().replace('-', "_");
        if s.intended {
            name.insert_str(0, "INTENDED_");
        }
        if s.failed {
            name.push_str("_ERROR");
        }
        for p in raw_points(s) {
            writeln!(out, "{name},{},{}", p.start_us(), p.latency_us)?;
        }
    }
    // go-ycsb's TOTAL: every successful database call, as measured (the
    // intended latencies when only those are measured); its
    // READ_MODIFY_WRITE is measured apart from the calls it is made of.
    let measured_intended = phase.sections.iter().all(|s| s.intended);
    let mut total: Vec<RawPoint> = phase
        .sections
        .iter()
        .filter(|s| {
            !s.failed
                && s.intended == measured_intended
                && !s.operation.is_batch()
                && !matches!(
                    s.operation,
                    Operation::ReadModifyWrite
                        | Operation::ScanLatencyPerRecord
                        | Operation::Verify
                        | Operation::Cleanup
                )
        })
        .flat_map(raw_points)
        .copied()
        .collect();
    total.sort_by_key(|p| p.end_us);
    for p in total {
        writeln!(out, "TOTAL,{},{}", p.start_us(), p.latency_us)?;
    }
    Ok(())
}

/// The latencies a raw type kept in a section, in the order they ended.
fn raw_points(s: &SectionReport) -> impl Iterator<Item = &RawPoint> {
    s.java.iter().flat_map(|j| &j.raw)
}

/// Java's lines of one phase, as they are built.
struct Lines<'f> {
    out: Vec<JavaMeasurement>,
    /// How the phase was measured and is reported.
    format: &'f ReportFormat,
}

impl Lines<'_> {
    fn push(&mut self, metric: &str, measurement: impl Into<String>, value: JavaNumber) {
        self.out.push(JavaMeasurement {
            metric: metric.to_string(),
            measurement: measurement.into(),
            value,
        });
    }

    fn returns(&mut self, name: &str, s: &SectionReport) {
        for r in &s.returns {
            self.push(
                name,
                format!("Return={}", r.status),
                JavaNumber::Integer(r.count),
            );
        }
    }

    /// `OneMeasurementHdrHistogram`.
    fn hdr(&mut self, name: &str, s: &SectionReport, statuses: bool) {
        let format = self.format;
        self.push(name, "Operations", JavaNumber::Integer(s.operations));
        self.push(name, "AverageLatency(us)", JavaNumber::Float(s.average_us));
        self.push(name, "MinLatency(us)", JavaNumber::Integer(s.min_us));
        self.push(name, "MaxLatency(us)", JavaNumber::Integer(s.max_us));
        for p in &s.percentiles {
            self.push(
                name,
                format!("{}PercentileLatency(us)", java_ordinal(p.percentile)),
                JavaNumber::Integer(p.us),
            );
        }
        if statuses {
            self.returns(name, s);
        }
        if format.histogram_verbose {
            for (value_us, count) in recorded_microseconds(s) {
                // Java writes the count as a double here.
                self.push(name, value_us.to_string(), JavaNumber::Float(count as f64));
            }
        }
    }

    /// `OneMeasurementHistogram`: the average and variance over whole
    /// microseconds, the 95th/99th percentiles as the first 1 ms bucket
    /// where the running share reaches 0.95/0.99, times 1000.
    fn buckets(&mut self, name: &str, s: &SectionReport, java: &JavaSection, statuses: bool) {
        let format = self.format;
        let n = s.operations as f64;
        let mean = java.sum_us as f64 / n;
        let variance = java.sum_sq_us / n - mean * mean;
        self.push(name, "Operations", JavaNumber::Integer(s.operations));
        self.push(name, "AverageLatency(us)", JavaNumber::Float(mean));
        self.push(name, "LatencyVariance(us)", JavaNumber::Float(variance));
        self.extremes(name, s);
        let buckets = format.histogram_buckets;
        let count = |i: usize| java.buckets.get(i).copied().unwrap_or(0);
        let mut running = 0u64;
        let mut done_95th = false;
        for i in 0..buckets {
            running += count(i);
            let share = running as f64 / n;
            if !done_95th && share >= 0.95 {
                self.push(
                    name,
                    "95thPercentileLatency(us)",
                    JavaNumber::Integer(i as u64 * 1000),
                );
                done_95th = true;
            }
            if share >= 0.99 {
                self.push(
                    name,
                    "99thPercentileLatency(us)",
                    JavaNumber::Integer(i as u64 * 1000),
                );
                break;
            }
        }
        if statuses {
            self.returns(name, s);
        }
        if format.histogram_verbose {
            for i in 0..buckets {
                self.push(name, i.to_string(), JavaNumber::Integer(count(i)));
            }
            self.push(
                name,
                format!(">{buckets}"),
                JavaNumber::Integer(count(buckets)),
            );
        }
    }

    /// `MinLatency(us)` and `MaxLatency(us)` of the types whose `int`
    /// extremes start at -1.
    fn extremes(&mut self, name: &str, s: &SectionReport) {
        let (min, max) = if s.operations == 0 {
            (JavaNumber::Signed(-1), JavaNumber::Signed(-1))
        } else {
            (JavaNumber::Integer(s.min_us), JavaNumber::Integer(s.max_us))
        };
        self.push(name, "MinLatency(us)", min);
        self.push(name, "MaxLatency(us)", max);
    }

    /// `OneMeasurementTimeSeries`: the totals, then `[OP], <ms offset>,
    /// <average>` per unit that saw latencies (a section with none lists
    /// unit 0 with NaN, as Java's forced end of an empty unit).
    fn series(&mut self, name: &str, s: &SectionReport, java: &JavaSection) {
        self.push(name, "Operations", JavaNumber::Integer(s.operations));
        self.push(
            name,
            "AverageLatency(us)",
            JavaNumber::Float(java.sum_us as f64 / s.operations as f64),
        );
        self.extremes(name, s);
        self.returns(name, s);
        if java.series.is_empty() {
            self.push(name, "0", JavaNumber::Float(f64::NAN));
        }
        for unit in &java.series {
            self.push(
                name,
                unit.time_ms.to_string(),
                JavaNumber::Float(unit.average_us()),
            );
        }
    }

    /// `OneMeasurementRaw`'s summary: percentiles are the values at index
    /// `(int) (n * q)` of the sorted latencies.
    fn raw(&mut self, name: &str, s: &SectionReport, java: &JavaSection, statuses: bool) {
        let format = self.format;
        let total = java.raw.len();
        self.push(name, "Total Operations", JavaNumber::Integer(total as u64));
        if total > 0 && !format.raw_no_summary {
            self.push(
                name,
                "Below is a summary of latency in microseconds:",
                JavaNumber::Signed(-1),
            );
            self.push(
                name,
                "Average",
                JavaNumber::Float(java.sum_us as f64 / total as f64),
            );
            let mut sorted: Vec<u64> = java.raw.iter().map(|p| p.latency_us).collect();
            sorted.sort_unstable();
            self.push(name, "Min", JavaNumber::Integer(sorted[0]));
            self.push(name, "Max", JavaNumber::Integer(sorted[total - 1]));
            for (label, q) in RAW_PERCENTILES {
                // Java: measurements.get((int) (totalOps * q)).
                let index = ((total as f64 * q) as usize).min(total - 1);
                self.push(name, label, JavaNumber::Integer(sorted[index]));
            }
        }
        if statuses {
            self.returns(name, s);
        }
    }
}

/// `OneMeasurementRaw`'s percentiles, by label.
const RAW_PERCENTILES: [(&str, f64); 8] = [
    ("p1", 0.01),
    ("p5", 0.05),
    ("p50", 0.5),
    ("p90", 0.9),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

/// The section's histogram in whole microseconds, as Java's
/// `recordedValues()` iterates it: each distinct recorded value (HdrHistogram
/// bucket, 3 significant digits) with its count.
fn recorded_microseconds(s: &SectionReport) -> Vec<(u64, u64)> {
    let Some(histogram) = s
        .histogram
        .as_deref()
        .and_then(|h| super::decode_histogram(h, &s.name).ok())
    else {
        return Vec::new();
    };
    let Ok(mut micros) = hdrhistogram::Histogram::<u64>::new(3) else {
        return Vec::new();
    };
    for bucket in histogram.iter_recorded() {
        let _ = micros.record_n(bucket.value_iterated_to() / 1_000, bucket.count_at_value());
    }
    micros
        .iter_recorded()
        .map(|b| {
            (
                b.value_iterated_to().min(i32::MAX as u64),
                b.count_at_value(),
            )
        })
        .collect()
}
