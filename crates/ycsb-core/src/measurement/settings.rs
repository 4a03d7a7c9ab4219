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
        Json = "json" | "site.ycsb.measurements.exporter.JSONMeasurementsExporter",
        /// Java's JSON array of `{"metric", "measurement", "value"}` objects.
        JsonArray = "jsonarray"
            | "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter",
    }
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
    "Final report format: text, json or jsonarray (Java's exporter class names are accepted).",
);

/// `exportfile`.
pub const EXPORT_FILE: Property<PathBuf> = Property::optional(
    "exportfile",
    "File the final report is written to (a regular file is replaced atomically, a device or FIFO written in place, a symlink followed; its directory must exist); standard output when unset.",
);

/// `measurementtype`.
pub const MEASUREMENT_TYPE: Property<String> = Property::new(
    "measurementtype",
    "hdrhistogram",
    "How latencies are kept; only hdrhistogram is supported.",
);

/// Every property the measurement module reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    PERCENTILES.decl(),
    MEASUREMENT_INTERVAL.decl(),
    STATUS_INTERVAL.decl(),
    STATUS_GAUGES.decl(),
    EXPORTER.decl(),
    EXPORT_FILE.decl(),
    MEASUREMENT_TYPE.decl(),
    super::hdrlog::HDR_FILE_OUTPUT.decl(),
    super::hdrlog::HDR_OUTPUT_PATH.decl(),
];

/// Java's other measurement types, refused with a specific message.
const JAVA_TYPES: &[&str] = &[
    "histogram",
    "hdrhistogram+histogram",
    "hdrhistogram+raw",
    "timeseries",
    "raw",
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
    /// `(0, 100]`, `status.interval` is zero, or `measurementtype` is not
    /// `hdrhistogram`.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let kind = props.get(&MEASUREMENT_TYPE)?;
        let kind = kind.trim().to_ascii_lowercase();
        if kind != "hdrhistogram" {
            let reason = if JAVA_TYPES.contains(&kind.as_str()) {
                "only hdrhistogram is supported (Java's histogram, hdrhistogram+histogram, \
                 hdrhistogram+raw, timeseries and raw types are not)"
            } else {
                "expected hdrhistogram"
            };
            return Err(props.invalid(MEASUREMENT_TYPE.decl(), reason));
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

        Ok(Self {
            percentiles,
            interval: props.get(&MEASUREMENT_INTERVAL)?,
            status_interval,
            status_gauges: props.get(&STATUS_GAUGES)?,
            exporter: props.get(&EXPORTER)?,
            export_file: props.get_opt(&EXPORT_FILE)?,
            interval_histograms: props.get(&super::hdrlog::HDR_FILE_OUTPUT)?,
        })
    }

    /// How often a [`Recorder`](super::Recorder) publishes: every 100 ms or
    /// a tenth of the status interval, whichever is shorter (at least 1 ms),
    /// so a status line misses at most a tenth of an interval per thread.
    pub fn publish_period(&self) -> Duration {
        (self.status_interval / 10).clamp(MIN_PUBLISH_PERIOD, MAX_PUBLISH_PERIOD)
    }
}
