//! A run's report: metadata, configuration, and per phase the figures of
//! each section (an operation's latency, its failures, its intended
//! latency).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::number::f64_or_nan;
use crate::observe::PhaseObservation;

/// Everything a report export contains.
///
/// The JSON exporter (`exporter=json`) writes these fields and adds, per
/// phase, a `measurements` array: Java's `{"metric", "measurement",
/// "value"}` lines, which are derived from the rest and are not read back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The version of the export's shape ([`crate::SCHEMA_VERSION`] when
    /// written now; exports written before the field existed read as
    /// version 1, see [`crate::migrate`]).
    #[serde(default = "crate::migrate::unversioned")]
    pub schema_version: u32,
    /// Who ran what, where and when.
    pub metadata: RunMetadata,
    /// The effective configuration, secrets redacted.
    pub config: Vec<ConfigEntry>,
    /// The phases run, in order.
    pub phases: Vec<PhaseReport>,
    /// Texts the store produced at the end (for example `rocksdb.stats`),
    /// saved with the results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engine_reports: Vec<EngineReportEntry>,
}

impl RunReport {
    /// The phase named `name` (`load`, `run`), the first if there are
    /// several.
    pub fn phase(&self, name: &str) -> Option<&PhaseReport> {
        self.phases.iter().find(|p| p.phase == name)
    }

    /// The value of a configuration entry, by its key as listed.
    pub fn config_value(&self, key: &str) -> Option<&str> {
        self.config
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.value.as_str())
    }
}

/// One text a store produced at the end of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineReportEntry {
    /// The report's name, for example `rocksdb.stats`.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// Who ran what, where and when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMetadata {
    /// The program's name (`ycsb-rs`).
    pub tool: String,
    /// The program's version.
    pub version: String,
    /// The source revision the program was built from, if known.
    pub git_revision: Option<String>,
    /// The host name, if known.
    pub host: Option<String>,
    /// When the run started, RFC 3339 with the local offset.
    pub start_time: String,
    /// The command line, secret property values redacted.
    pub command_line: Vec<String>,
    /// The store's name (`rocksdb`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// The engine behind the store (`RocksDB`), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The exact engine version linked or connected to, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// How the engine was built (library file, assertions), when the
    /// store names its engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_build: Option<EngineBuildEntry>,
    /// Client threads a stopped phase left inside store calls
    /// (`stop.grace`), each named with where it waited: the figures miss
    /// what they had not published. Empty (and not exported) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stuck_threads: Vec<String>,
    /// Whether the store acknowledged writes only once they were synced
    /// to disk, by the property its descriptor names; `None` for a store
    /// whose durability the client does not decide (a server's, or one
    /// that keeps no data), and in exports written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<DurabilityEntry>,
}

impl RunMetadata {
    /// Metadata that names only who ran (`tool` and its `version`) and when
    /// (`start_time`, RFC 3339): every other field unknown or empty, to be
    /// set as far as the caller knows it.
    pub fn new(
        tool: impl Into<String>,
        version: impl Into<String>,
        start_time: impl Into<String>,
    ) -> Self {
        RunMetadata {
            tool: tool.into(),
            version: version.into(),
            git_revision: None,
            host: None,
            start_time: start_time.into(),
            command_line: Vec::new(),
            store: None,
            engine: None,
            engine_version: None,
            engine_build: None,
            stuck_threads: Vec::new(),
            durability: None,
        }
    }
}

/// A run's durability as exported: the store property that decides it,
/// its value in force, and whether acknowledged writes survive a machine
/// crash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DurabilityEntry {
    /// The property (`rocksdb.sync`).
    pub property: String,
    /// Its value in force (set, or the default).
    pub value: String,
    /// Whether every acknowledged write was synced to disk.
    pub durable: bool,
}

/// How the engine of a run was built, as exported (ycsb-db's
/// `EngineBuild`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineBuildEntry {
    /// The shared library's path, `static`, `remote` or `unknown`.
    pub library: String,
    /// `enabled`, `disabled` or `unknown`: figures measured with
    /// assertions enabled are slower than the engine's release build.
    pub assertions: String,
    /// How the assertions were established (`imports __assert_fail`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
}

impl EngineBuildEntry {
    /// Whether the engine was built with assertions enabled.
    pub fn assertions_enabled(&self) -> bool {
        self.assertions == "enabled"
    }
}

/// One property of the effective configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigEntry {
    /// The property name as set (or the declared name for a default).
    pub key: String,
    /// The value, or `<redacted>` for a secret.
    pub value: String,
    /// Where the value came from (`workloads/workloada:3`, `-p flag`,
    /// `default`).
    pub origin: String,
}

/// The figures of one finished phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseReport {
    /// `load` or `run`.
    pub phase: String,
    /// The phase's duration in whole milliseconds (Java's `RunTime(ms)`).
    pub runtime_ms: u64,
    /// The phase's duration in nanoseconds.
    pub runtime_ns: u64,
    /// Operations completed.
    pub operations: u64,
    /// Operations per second as Java computes it, `1000 * operations /
    /// runtime_ms` over the whole milliseconds (0 below 1 ms).
    #[serde(deserialize_with = "f64_or_nan")]
    pub throughput: f64,
    /// The sections seen: operations in report order (each followed by
    /// its failed-latency sections), then the intended latency.
    pub sections: Vec<SectionReport>,
    /// How Java's exporters list the sections (`measurementtype` and its
    /// options); Java's defaults in exports older than the field.
    #[serde(default)]
    pub format: ReportFormat,
    /// The phase's time series, resources, stability and amplification;
    /// `None` when not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<PhaseObservation>,
}

impl PhaseReport {
    /// The section named `name` (`READ`, `Intended-READ`, `READ-FAILED`).
    pub fn section(&self, name: &str) -> Option<&SectionReport> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The series rows of its observation (none when not observed).
    pub fn series(&self) -> &[crate::SeriesRow] {
        self.observation
            .as_ref()
            .map_or(&[], |o| o.series.as_slice())
    }
}

/// How the sections of a phase are listed in Java's format.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportFormat {
    /// `measurementtype`.
    pub measurement_type: MeasurementType,
    /// `histogram.buckets`.
    pub histogram_buckets: usize,
    /// `measurement.histogram.verbose`.
    pub histogram_verbose: bool,
    /// `measurement.raw.no_summary`.
    pub raw_no_summary: bool,
}

impl Default for ReportFormat {
    /// Java's defaults (`hdrhistogram`).
    fn default() -> Self {
        Self {
            measurement_type: MeasurementType::HdrHistogram,
            histogram_buckets: 1000,
            histogram_verbose: false,
            raw_no_summary: false,
        }
    }
}

/// How latencies are kept and reported (Java's `measurementtype`; the
/// property itself is declared by ycsb-core).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MeasurementType {
    /// Java's `OneMeasurementHistogram`: 1 ms buckets up to
    /// `histogram.buckets`, variance, 95th/99th as bucket × 1000.
    Histogram,
    /// Java's `OneMeasurementHdrHistogram`: percentiles within 0.1 %.
    HdrHistogram,
    /// Both, as Java's `TwoInOneMeasurement`: `Hdr<OP>` then
    /// `Bucket<OP>` sections.
    HdrHistogramAndHistogram,
    /// Both, as Java's `TwoInOneMeasurement`: `Hdr<OP>` then `Raw<OP>`
    /// sections, with every latency written out.
    HdrHistogramAndRaw,
    /// Java's `OneMeasurementTimeSeries`: the average latency per
    /// `timeseries.granularity` milliseconds.
    TimeSeries,
    /// Java's `OneMeasurementRaw`: every latency written out, with
    /// percentiles from the sorted list.
    Raw,
    /// go-ycsb's `csv`: the report as `hdrhistogram`, and every latency
    /// written out as go-ycsb's `operation,timestamp_us,latency_us` CSV.
    Csv,
}

impl MeasurementType {
    /// Every type, in the order the property lists them.
    pub const ALL: [MeasurementType; 7] = [
        MeasurementType::Histogram,
        MeasurementType::HdrHistogram,
        MeasurementType::HdrHistogramAndHistogram,
        MeasurementType::HdrHistogramAndRaw,
        MeasurementType::TimeSeries,
        MeasurementType::Raw,
        MeasurementType::Csv,
    ];

    /// The property value that names it (`hdrhistogram+raw`).
    pub const fn name(self) -> &'static str {
        match self {
            MeasurementType::Histogram => "histogram",
            MeasurementType::HdrHistogram => "hdrhistogram",
            MeasurementType::HdrHistogramAndHistogram => "hdrhistogram+histogram",
            MeasurementType::HdrHistogramAndRaw => "hdrhistogram+raw",
            MeasurementType::TimeSeries => "timeseries",
            MeasurementType::Raw => "raw",
            MeasurementType::Csv => "csv",
        }
    }

    /// The type named `name` ([`MeasurementType::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether every latency is kept (the raw types).
    pub fn keeps_raw(self) -> bool {
        matches!(self, Self::Raw | Self::HdrHistogramAndRaw | Self::Csv)
    }

    /// Whether 1 ms buckets are kept (the histogram types).
    pub fn keeps_buckets(self) -> bool {
        matches!(self, Self::Histogram | Self::HdrHistogramAndHistogram)
    }
}

impl Serialize for MeasurementType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for MeasurementType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown measurement type \"{name}\"")))
    }
}

/// An operation type, measured and reported separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// A read of one record.
    Read,
    /// An update of one record.
    Update,
    /// An insert of one record.
    Insert,
    /// A scan of consecutive records.
    Scan,
    /// A scan's latency divided by the records it returned (Java master's
    /// `SCAN-LATENCY-PER-RECORD`, measured beside `SCAN` with no status).
    ScanLatencyPerRecord,
    /// A read followed by an update of the same record (timed as one).
    ReadModifyWrite,
    /// A delete of one record.
    Delete,
    /// The verification of a read value (`dataintegrity=true`).
    Verify,
    /// A thread's store cleanup at the end of a phase.
    Cleanup,
    /// One batched read call (`batch.size` above 1: go-ycsb's
    /// `BATCH_READ`); its records are also measured under `READ`.
    BatchRead,
    /// One batched update call (go-ycsb's `BATCH_UPDATE`).
    BatchUpdate,
    /// One batched insert call (go-ycsb's `BATCH_INSERT`).
    BatchInsert,
    /// One batched delete call (go-ycsb's `BATCH_DELETE`).
    BatchDelete,
}

impl Operation {
    /// Every operation, in report order.
    pub const ALL: [Operation; 13] = [
        Operation::Read,
        Operation::Update,
        Operation::Insert,
        Operation::Scan,
        Operation::ScanLatencyPerRecord,
        Operation::ReadModifyWrite,
        Operation::Delete,
        Operation::Verify,
        Operation::Cleanup,
        Operation::BatchRead,
        Operation::BatchUpdate,
        Operation::BatchInsert,
        Operation::BatchDelete,
    ];

    /// The number of operations (the length of [`Operation::ALL`]).
    pub const COUNT: usize = Self::ALL.len();

    /// A dense index in `0..Operation::COUNT`, its position in
    /// [`Operation::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The section name Java YCSB prints (`READ`, `READ-MODIFY-WRITE`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Operation::Read => "READ",
            Operation::Update => "UPDATE",
            Operation::Insert => "INSERT",
            Operation::Scan => "SCAN",
            Operation::ScanLatencyPerRecord => "SCAN-LATENCY-PER-RECORD",
            Operation::ReadModifyWrite => "READ-MODIFY-WRITE",
            Operation::Delete => "DELETE",
            Operation::Verify => "VERIFY",
            Operation::Cleanup => "CLEANUP",
            Operation::BatchRead => "BATCH_READ",
            Operation::BatchUpdate => "BATCH_UPDATE",
            Operation::BatchInsert => "BATCH_INSERT",
            Operation::BatchDelete => "BATCH_DELETE",
        }
    }

    /// Java's name of the intended-latency section (`Intended-READ`).
    pub const fn intended_name(self) -> &'static str {
        match self {
            Operation::Read => "Intended-READ",
            Operation::Update => "Intended-UPDATE",
            Operation::Insert => "Intended-INSERT",
            Operation::Scan => "Intended-SCAN",
            Operation::ScanLatencyPerRecord => "Intended-SCAN-LATENCY-PER-RECORD",
            Operation::ReadModifyWrite => "Intended-READ-MODIFY-WRITE",
            Operation::Delete => "Intended-DELETE",
            Operation::Verify => "Intended-VERIFY",
            Operation::Cleanup => "Intended-CLEANUP",
            Operation::BatchRead => "Intended-BATCH_READ",
            Operation::BatchUpdate => "Intended-BATCH_UPDATE",
            Operation::BatchInsert => "Intended-BATCH_INSERT",
            Operation::BatchDelete => "Intended-BATCH_DELETE",
        }
    }

    /// Whether this is a whole batched call (`BATCH_INSERT`, ...), whose
    /// records are counted in their own operation's section: no
    /// operation of the phase's count of its own.
    pub const fn is_batch(self) -> bool {
        matches!(
            self,
            Operation::BatchRead
                | Operation::BatchUpdate
                | Operation::BatchInsert
                | Operation::BatchDelete
        )
    }

    /// The operation named `name` ([`Operation::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Operation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Operation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown operation \"{name}\"")))
    }
}

/// The cumulative figures of one section (an operation's latency or its
/// intended latency).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectionReport {
    /// Java's section name (`READ`, `Intended-READ`).
    pub name: String,
    /// The operation.
    pub operation: Operation,
    /// Whether this is intended latency.
    pub intended: bool,
    /// Whether it holds the latencies of failed operations (`READ-FAILED`,
    /// `READ-NOT_FOUND`); their statuses are counted in the operation's
    /// own section, as Java's `DBWrapper` does.
    #[serde(default)]
    pub failed: bool,
    /// Latencies recorded (Java's `Operations`).
    pub operations: u64,
    /// The exact mean latency in microseconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub average_us: f64,
    /// The smallest latency in whole microseconds (0 when none).
    pub min_us: u64,
    /// The largest latency in whole microseconds (0 when none).
    pub max_us: u64,
    /// The exact mean latency in nanoseconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub average_ns: f64,
    /// The smallest latency in nanoseconds (0 when none).
    pub min_ns: u64,
    /// The largest latency in nanoseconds (0 when none).
    pub max_ns: u64,
    /// The configured percentiles, in their configured order.
    pub percentiles: Vec<PercentileLatency>,
    /// The whole latency histogram (nanoseconds), HdrHistogram's
    /// compressed V2 encoding in base64, as in an interval log line: what
    /// `ycsb merge` adds up to compute exact percentiles over several
    /// clients ([`crate::decode_histogram`] reads it). Absent in the
    /// first exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// Operations per status, in the store contract's status order, only
    /// those that occurred.
    pub returns: Vec<StatusCount>,
    /// The figures of `measurementtype` other than `hdrhistogram`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java: Option<JavaSection>,
}

impl SectionReport {
    /// The latency of percentile `p` in whole microseconds, if listed.
    pub fn percentile_us(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|e| e.percentile == p)
            .map(|e| e.us)
    }
}

/// One latency percentile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileLatency {
    /// The percentile, in `(0, 100]`.
    pub percentile: f64,
    /// Its latency in whole microseconds.
    pub us: u64,
    /// Its latency in nanoseconds (HdrHistogram's bucket value, within
    /// 0.1 %).
    pub ns: u64,
}

/// How many operations returned a status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCount {
    /// The status's Java name (`OK`, `NOT_FOUND`). A name rather than
    /// ycsb-db's `Status`, so that this crate depends on no other and an
    /// export naming a status this build does not know still reads.
    pub status: String,
    /// How many operations returned it.
    pub count: u64,
}

/// A section's figures for Java's other measurement types, in whole
/// microseconds as Java keeps them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JavaSection {
    /// Sum of the latencies (Java's `totallatency`).
    pub sum_us: u64,
    /// Sum of their squares (Java's `totalsquaredlatency`).
    #[serde(default, deserialize_with = "f64_or_nan")]
    pub sum_sq_us: f64,
    /// `histogram`: the 1 ms buckets, then the overflow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<u64>,
    /// `timeseries`: the units that saw latencies, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<SeriesUnit>,
    /// `raw`: every latency, in the order the operations ended (written
    /// to `measurement.raw.output_file`, not to exports).
    #[serde(skip)]
    pub raw: Vec<RawPoint>,
}

/// One latency of the types that keep every latency (`raw`,
/// `hdrhistogram+raw`, `csv`): when it ended and how long it took, as
/// Java's `RawDataPoint` (which keeps milliseconds) and go-ycsb's
/// `csventry` (which keeps the start in microseconds) need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawPoint {
    /// Microseconds since the Unix epoch when the operation ended.
    pub end_us: u64,
    /// The latency in whole microseconds.
    pub latency_us: u64,
}

impl RawPoint {
    /// Milliseconds since the Unix epoch when the operation ended: Java's
    /// `System.currentTimeMillis()` after the operation.
    pub fn timestamp_ms(&self) -> u64 {
        self.end_us / 1_000
    }

    /// Microseconds since the Unix epoch when the operation started
    /// (go-ycsb's `start.UnixMicro()`): its end less its latency.
    pub fn start_us(&self) -> u64 {
        self.end_us.saturating_sub(self.latency_us)
    }
}

/// One unit of `measurementtype=timeseries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesUnit {
    /// The unit's start: milliseconds after the section's first latency,
    /// a multiple of `timeseries.granularity`.
    pub time_ms: u64,
    /// Latencies recorded in the unit.
    pub operations: u64,
    /// Their sum in whole microseconds.
    pub sum_us: u64,
}

impl SeriesUnit {
    /// The average latency of the unit (Java's `sum / count`).
    pub fn average_us(&self) -> f64 {
        self.sum_us as f64 / self.operations as f64
    }
}
