//! The measurement properties and their checked settings.

use std::path::PathBuf;
use std::time::Duration;

use ycsb_db::{Properties, Property, PropertyDecl, PropertyError};

ycsb_db::choice_property! {
    /// Which latency is recorded (Java's `measurement.interval`).
    pub enum MeasurementInterval {
        /// The service time of each operation only.
        Op = "op",
        /// Only the latency from the operation's intended start under a
        /// target throughput, which includes the time it waited behind
        /// slow predecessors (coordinated omission); its sections carry the
        /// plain operation names and the return codes.
        Intended = "intended",
        /// Both; the intended latency goes to `Intended-` sections.
        Both = "both",
    }
}

ycsb_db::choice_property! {
    /// The format of the final report (Java's `exporter`).
    pub enum ExporterKind {
        /// Java's text format: `[READ], Operations, 1000` lines.
        Text = "text" | "site.ycsb.measurements.exporter.TextMeasurementsExporter",
        /// One JSON document with metadata, configuration and figures.
        Json = "json",
        /// Our JSON array of Java's `{"metric", "measurement", "value"}`
        /// objects, each with a `"phase"` key.
        JsonArray = "jsonarray",
        /// Java's `JSONMeasurementsExporter`, byte for byte: concatenated
        /// pretty-printed objects (not one JSON document).
        JavaJson = "site.ycsb.measurements.exporter.JSONMeasurementsExporter",
        /// Java's `JSONArrayMeasurementsExporter`, byte for byte.
        JavaJsonArray = "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter",
    }
}

use ycsb_results::MeasurementType;

/// The value of `measurementtype`: a [`MeasurementType`] (declared in
/// ycsb-results, with the report it describes) as a property choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MeasurementTypeChoice(pub(crate) MeasurementType);

impl ycsb_db::Choice for MeasurementTypeChoice {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("histogram", Self(MeasurementType::Histogram)),
        ("hdrhistogram", Self(MeasurementType::HdrHistogram)),
        (
            "hdrhistogram+histogram",
            Self(MeasurementType::HdrHistogramAndHistogram),
        ),
        (
            "hdrhistogram+raw",
            Self(MeasurementType::HdrHistogramAndRaw),
        ),
        ("timeseries", Self(MeasurementType::TimeSeries)),
        ("raw", Self(MeasurementType::Raw)),
        ("csv", Self(MeasurementType::Csv)),
        // YCSB-cpp's default (count, minimum, maximum and average per
        // operation): hdrhistogram reports those figures, and more.
        ("basic", Self(MeasurementType::HdrHistogram)),
    ];
    const NAMES: &'static [&'static str] = &[
        "histogram",
        "hdrhistogram",
        "hdrhistogram+histogram",
        "hdrhistogram+raw",
        "timeseries",
        "raw",
        "csv",
    ];
}

/// `hdrhistogram.percentiles`.
pub const PERCENTILES: Property<Vec<String>> = Property::new(
    "hdrhistogram.percentiles",
    "50,95,99,99.9",
    "Comma-separated latency percentiles (each above 0 and at most 100) listed per operation in the final report.",
);

/// `measurement.interval`.
pub const MEASUREMENT_INTERVAL: Property<MeasurementInterval> = Property::new(
    "measurement.interval",
    "op",
    "Latency recorded: op (service time), intended (from the start time a target throughput intended, \
     counting queueing delay) or both (intended latency in Intended- sections).",
);

/// `status.interval`.
pub const STATUS_INTERVAL: Property<Duration> = Property::new(
    "status.interval",
    "10",
    "Seconds between status lines (with -s).",
);

/// `status.gauges`.
pub const STATUS_GAUGES: Property<Vec<String>> = Property::new(
    "status.gauges",
    "",
    "Engine gauges appended to each -s status line as [name=value]: gauge names (rocksdb.num-files-at-level0,rocksdb.is-write-stopped), or all; none when empty, keeping Java's status line. Every gauge is in the time series (timeseries.file, the JSON export) whatever this says.",
);

/// `exporter`.
pub const EXPORTER: Property<ExporterKind> = Property::new(
    "exporter",
    "text",
    "Final report format: text (Java's TextMeasurementsExporter), json (one document with metadata, configuration, series and histograms), jsonarray (Java's objects with a phase key), or Java's class names site.ycsb.measurements.exporter.JSONMeasurementsExporter / JSONArrayMeasurementsExporter for their exact output.",
);

/// `exportfile`.
pub const EXPORT_FILE: Property<PathBuf> = Property::optional(
    "exportfile",
    "File the final report is written to (a regular file is replaced atomically, a device or FIFO written in place, a symlink followed; its directory must exist); standard output when unset.",
);

/// `measurementtype`.
pub(crate) const MEASUREMENT_TYPE: Property<MeasurementTypeChoice> = Property::new(
    "measurementtype",
    "hdrhistogram",
    "How latencies are kept and reported, as Java: hdrhistogram (percentiles within 0.1 %; YCSB-cpp's basic is read as it), histogram (1 ms buckets up to histogram.buckets, LatencyVariance, 95th/99th as bucket x 1000), hdrhistogram+histogram (HdrOP then BucketOP sections), hdrhistogram+raw (HdrOP then RawOP sections), timeseries (average latency per timeseries.granularity milliseconds) or raw (every latency written out); or go-ycsb's csv (the report as hdrhistogram, and every latency as go-ycsb's CSV in measurement.output_file).",
);

/// `histogram.buckets`.
pub const HISTOGRAM_BUCKETS: Property<u64> = Property::new(
    "histogram.buckets",
    "1000",
    "measurementtype=histogram: the number of 1 ms latency buckets; longer latencies count in one overflow bucket.",
);

/// `measurement.histogram.verbose`.
pub const HISTOGRAM_VERBOSE: Property<bool> = Property::new(
    "measurement.histogram.verbose",
    "false",
    "Also list the latency histogram in the final report, as Java: with histogram, one `[OP], i, count` line per 1 ms bucket and `[OP], >buckets, overflow`; with hdrhistogram, one `[OP], value, count` line per recorded value (microseconds).",
);

/// `measurement.raw.output_file`.
pub const RAW_OUTPUT_FILE: Property<PathBuf> = Property::optional(
    "measurement.raw.output_file",
    "measurementtype=raw or hdrhistogram+raw: the file every latency is appended to (`OP,timestamp(ms),latency(us)` lines); standard output when unset.",
);

/// `measurement.output_file` (go-ycsb's).
pub const CSV_OUTPUT_FILE: Property<PathBuf> = Property::optional(
    "measurement.output_file",
    "measurementtype=csv: the file go-ycsb's CSV of every latency is written to (`operation,timestamp_us,latency_us`: the operation's start in microseconds since the Unix epoch and its latency; successful operations also as TOTAL, failed ones as OP_ERROR); created or emptied by the first phase of a run, appended to by the next; standard output when unset.",
);

/// `measurement.raw.no_summary`.
pub const RAW_NO_SUMMARY: Property<bool> = Property::new(
    "measurement.raw.no_summary",
    "false",
    "measurementtype=raw: report only the operation count and Return= lines, without the average, extremes and percentiles.",
);

/// `reportlatencyforeacherror`.
pub const REPORT_LATENCY_FOR_EACH_ERROR: Property<bool> = Property::new(
    "reportlatencyforeacherror",
    "false",
    "Measure the latency of each failed operation under `<OP>-<STATUS>` (READ-NOT_FOUND, UPDATE-ERROR) instead of `<OP>-FAILED`, as Java's DBWrapper.",
);

/// `latencytrackederrors`.
pub const LATENCY_TRACKED_ERRORS: Property<Vec<String>> = Property::optional(
    "latencytrackederrors",
    "Comma-separated statuses (NOT_FOUND,ERROR,...) whose failed operations are measured under `<OP>-<STATUS>`; other failures go to `<OP>-FAILED`. Ignored with reportlatencyforeacherror=true, as in Java.",
);

/// `outputstyle` (go-ycsb's; also `measurement.output_style`).
pub const OUTPUT_STYLE: Property<super::OutputStyle> = Property::optional(
    "outputstyle",
    "go-ycsb's summary of each phase on standard output instead of Java's text report: plain (`READ   - Takes(s): 10.0, Count: 4999, OPS: 499.9, Avg(us): ...`), table (a bordered table) or json (one line); one row per operation in go-ycsb's names (READ_MODIFY_WRITE, failures as READ_ERROR) and TOTAL. Unset: Java's report. Takes(s) is the phase's runtime for every row.",
)
.aliases(&["measurement.output_style"]);

/// Every property the measurement module reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    PERCENTILES.decl(),
    MEASUREMENT_INTERVAL.decl(),
    STATUS_INTERVAL.decl(),
    STATUS_GAUGES.decl(),
    EXPORTER.decl(),
    EXPORT_FILE.decl(),
    MEASUREMENT_TYPE.decl(),
    HISTOGRAM_BUCKETS.decl(),
    HISTOGRAM_VERBOSE.decl(),
    RAW_OUTPUT_FILE.decl(),
    RAW_NO_SUMMARY.decl(),
    CSV_OUTPUT_FILE.decl(),
    REPORT_LATENCY_FOR_EACH_ERROR.decl(),
    LATENCY_TRACKED_ERRORS.decl(),
    OUTPUT_STYLE.decl(),
    super::hdrlog::HDR_FILE_OUTPUT.decl(),
    super::hdrlog::HDR_OUTPUT_PATH.decl(),
];

/// The longest time a recorder keeps data before publishing it.
const MAX_PUBLISH_PERIOD: Duration = Duration::from_millis(100);
/// The shortest, so that a tiny status interval cannot make every thread
/// take its lock constantly.
const MIN_PUBLISH_PERIOD: Duration = Duration::from_millis(1);

/// The checked measurement settings.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasurementSettings {
    /// The percentiles of the final report, each in `(0, 100]`.
    pub percentiles: Vec<f64>,
    /// Which latency is recorded.
    pub interval: MeasurementInterval,
    /// The time between status lines.
    pub status_interval: Duration,
    /// The engine gauges a status line shows (`status.gauges`); `all`
    /// for every one.
    pub status_gauges: Vec<String>,
    /// The final report's format.
    pub exporter: ExporterKind,
    /// Where the final report goes; standard output when `None`.
    pub export_file: Option<PathBuf>,
    /// Whether each interval snapshot carries the merged histogram of every
    /// section (`hdrhistogram.fileoutput`: the interval logs need them).
    pub interval_histograms: bool,
    /// How latencies are kept and reported.
    pub kind: MeasurementType,
    /// `histogram.buckets`: the 1 ms buckets of the histogram types.
    pub histogram_buckets: usize,
    /// `measurement.histogram.verbose`.
    pub histogram_verbose: bool,
    /// `measurement.raw.no_summary`.
    pub raw_no_summary: bool,
    /// `measurement.raw.output_file`: where the raw types' latencies are
    /// appended; standard output when `None`.
    pub raw_output_file: Option<PathBuf>,
    /// `measurement.output_file`: where `measurementtype=csv` writes its
    /// CSV; standard output when `None`.
    pub csv_output_file: Option<PathBuf>,
    /// Where the failed operations of each status are measured.
    pub failures: FailureSections,
    /// `timeseries.granularity` in milliseconds for
    /// `measurementtype=timeseries` (Java's unit and default).
    pub timeseries_granularity_ms: u64,
    /// `outputstyle`: go-ycsb's summary on standard output instead of
    /// Java's text report; `None` for Java's.
    pub output_style: Option<super::OutputStyle>,
}

/// Where the latency of a failed operation goes, per status: Java's
/// `DBWrapper` measures it under `<OP>-FAILED`, or under `<OP>-<STATUS>`
/// for the statuses `latencytrackederrors` lists (all of them with
/// `reportlatencyforeacherror=true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FailureSections {
    /// Per [`Status::index`](ycsb_db::Status::index): whether that status
    /// has its own section.
    pub own_section: [bool; ycsb_db::Status::COUNT],
}

impl Default for MeasurementSettings {
    /// The declared defaults.
    fn default() -> Self {
        Self {
            percentiles: vec![50.0, 95.0, 99.0, 99.9],
            interval: MeasurementInterval::Op,
            status_interval: Duration::from_secs(10),
            status_gauges: Vec::new(),
            exporter: ExporterKind::Text,
            export_file: None,
            interval_histograms: false,
            kind: MeasurementType::HdrHistogram,
            histogram_buckets: 1000,
            histogram_verbose: false,
            raw_no_summary: false,
            raw_output_file: None,
            csv_output_file: None,
            failures: FailureSections::default(),
            timeseries_granularity_ms: 1000,
            output_style: None,
        }
    }
}

impl MeasurementSettings {
    /// Reads and checks the measurement properties.
    ///
    /// # Errors
    ///
    /// [`PropertyError::Invalid`] naming the property, the value and where
    /// it came from, when a value does not parse, a percentile is outside
    /// `(0, 100]`, `status.interval` or `histogram.buckets` is zero, or
    /// `latencytrackederrors` names no status.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let kind = props.get(&MEASUREMENT_TYPE)?.0;
        if kind == MeasurementType::TimeSeries && crate::observe::granularity_ms(props)? == 0 {
            return Err(props.invalid(
                crate::observe::GRANULARITY.decl(),
                "measurementtype=timeseries needs a granularity above 0 milliseconds",
            ));
        }
        let histogram_buckets = props.get_checked(&HISTOGRAM_BUCKETS, |&b| {
            if (1..=100_000_000).contains(&b) {
                Ok(())
            } else {
                Err("expected between 1 and 100000000 buckets".to_string())
            }
        })? as usize;

        let mut failures = FailureSections::default();
        if props.get(&REPORT_LATENCY_FOR_EACH_ERROR)? {
            failures.own_section = [true; ycsb_db::Status::COUNT];
        } else if let Some(names) = props.get_opt(&LATENCY_TRACKED_ERRORS)? {
            for name in names {
                let name = name.trim().trim_matches('"');
                if name.is_empty() {
                    continue;
                }
                match ycsb_db::Status::ALL.iter().find(|s| s.name() == name) {
                    Some(status) => failures.own_section[status.index()] = true,
                    None => {
                        return Err(props.invalid(
                            LATENCY_TRACKED_ERRORS.decl(),
                            format!(
                            "'{name}' is not a status (expected names such as ERROR, NOT_FOUND, \
                                 UNEXPECTED_STATE, SERVICE_UNAVAILABLE)"
                        ),
                        ))
                    }
                }
            }
        }

        let mut percentiles = Vec::new();
        for raw in props.get(&PERCENTILES)? {
            match raw.parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 100.0 => percentiles.push(p),
                _ => {
                    return Err(props.invalid(
                        PERCENTILES.decl(),
                        format!("'{raw}' is not a percentile above 0 and at most 100"),
                    ))
                }
            }
        }

        let status_interval = props.get_checked(&STATUS_INTERVAL, |d| {
            if d.is_zero() {
                Err("expected a number of seconds above 0".to_string())
            } else {
                Ok(())
            }
        })?;

        let exporter = props.get(&EXPORTER)?;
        let export_file = props.get_opt(&EXPORT_FILE)?;
        let output_style = props.get_opt(&OUTPUT_STYLE)?;
        if output_style.is_some() && exporter != ExporterKind::Text && export_file.is_none() {
            // Both would go to standard output, the summary into the
            // export's JSON.
            return Err(PropertyError::Conflict {
                message: format!(
                    "{} prints go-ycsb's summary on standard output, where {} without exportfile writes its export: set exportfile",
                    props.describe(OUTPUT_STYLE.decl()),
                    props.describe(EXPORTER.decl())
                ),
            });
        }

        Ok(Self {
            percentiles,
            interval: props.get(&MEASUREMENT_INTERVAL)?,
            status_interval,
            status_gauges: props.get(&STATUS_GAUGES)?,
            exporter,
            export_file,
            interval_histograms: props.get(&super::hdrlog::HDR_FILE_OUTPUT)?,
            kind,
            histogram_buckets,
            histogram_verbose: props.get(&HISTOGRAM_VERBOSE)?,
            raw_no_summary: props.get(&RAW_NO_SUMMARY)?,
            raw_output_file: props.get_opt(&RAW_OUTPUT_FILE)?,
            csv_output_file: props.get_opt(&CSV_OUTPUT_FILE)?,
            failures,
            timeseries_granularity_ms: crate::observe::granularity_ms(props)?,
            output_style,
        })
    }

    /// How often a [`Recorder`](super::Recorder) publishes: every 100 ms or
    /// a tenth of the status interval, whichever is shorter (at least 1 ms),
    /// so a status line misses at most a tenth of an interval per thread.
    pub fn publish_period(&self) -> Duration {
        (self.status_interval / 10).clamp(MIN_PUBLISH_PERIOD, MAX_PUBLISH_PERIOD)
    }
}

#[cfg(test)]
mod choice_tests {
    use super::*;
    use ycsb_db::Choice;

    #[test]
    fn every_measurement_type_is_a_choice_under_its_own_name() {
        let choices = MeasurementTypeChoice::CHOICES;
        assert_eq!(choices.len(), MeasurementType::ALL.len() + 1);
        for (kind, (name, choice)) in MeasurementType::ALL.iter().zip(choices) {
            assert_eq!((*name, choice.0), (kind.name(), *kind));
        }
        // YCSB-cpp's default type, accepted under its name.
        let props = Properties::new().with("measurementtype", "basic");
        let settings = MeasurementSettings::from_properties(&props).unwrap();
        assert_eq!(settings.kind, MeasurementType::HdrHistogram);
        assert_eq!(
            MeasurementTypeChoice::NAMES,
            MeasurementType::ALL.map(MeasurementType::name)
        );
    }
}
