//! The final report: figures per phase, run metadata and configuration.

use serde::{Serialize, Serializer};

use ycsb_db::{redact_value, EngineBuild, Origin, Properties, PropertyDecl, Status};

use super::format::java_ordinal;
use super::Operation;

/// Everything a report export contains.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// Who ran what, where and when.
    pub metadata: RunMetadata,
    /// The effective configuration, secrets redacted (see
    /// `effective_config`).
    pub config: Vec<ConfigEntry>,
    /// The phases run, in order.
    pub phases: Vec<PhaseReport>,
    /// Texts the store produced at the end (for example `rocksdb.stats`),
    /// saved with the results.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub engine_reports: Vec<EngineReportEntry>,
}

/// One text a store produced at the end of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EngineReportEntry {
    /// The report's name, for example `rocksdb.stats`.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// Who ran what, where and when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// The engine behind the store (`RocksDB`), when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The exact engine version linked or connected to, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// How the engine was built (library file, assertions), when the
    /// store names its engine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_build: Option<EngineBuildEntry>,
}

/// How the engine of a run was built, as exported: see
/// [`ycsb_db::EngineBuild`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EngineBuildEntry {
    /// The shared library's path, `static`, `remote` or `unknown`.
    pub library: String,
    /// `enabled`, `disabled` or `unknown`: figures measured with
    /// assertions enabled are slower than the engine's release build.
    pub assertions: String,
    /// How the assertions were established (`imports __assert_fail`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub evidence: String,
}

impl From<&EngineBuild> for EngineBuildEntry {
    fn from(build: &EngineBuild) -> Self {
        Self {
            library: build.library.to_string(),
            assertions: build.assertions.as_str().to_string(),
            evidence: build.evidence.clone(),
        }
    }
}

impl RunMetadata {
    /// Metadata for a run starting now on this host, with no git revision
    /// (set [`RunMetadata::git_revision`] when the build knows it).
    ///
    /// Arguments of the form `name=value` (as after `-p`) whose name is a
    /// secret by [`ycsb_db::is_secret`] with `known` have their value redacted, and
    /// credentials in other values (URLs, headers) by [`redact_value`].
    pub fn new(
        tool: impl Into<String>,
        version: impl Into<String>,
        command_line: impl IntoIterator<Item = String>,
        known: &[&PropertyDecl],
    ) -> Self {
        Self {
            tool: tool.into(),
            version: version.into(),
            git_revision: None,
            host: host_name(),
            start_time: chrono::Local::now().to_rfc3339(),
            command_line: command_line
                .into_iter()
                .map(|arg| ycsb_db::redact_argument(&arg, known).into_owned())
                .collect(),
            store: None,
            engine: None,
            engine_version: None,
            engine_build: None,
        }
    }
}

fn host_name() -> Option<String> {
    let from_kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    from_kernel
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// One property of the effective configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigEntry {
    /// The property name as set (or the declared name for a default).
    pub key: String,
    /// The value, or [`ycsb_db::REDACTED`] for a secret.
    pub value: String,
    /// Where the value came from (`workloads/workloada:3`, `-p flag`,
    /// `default`).
    pub origin: String,
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

/// The figures of one finished phase.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    pub throughput: f64,
    /// The sections seen: operations in report order, then the intended
    /// latency.
    pub sections: Vec<SectionReport>,
    /// The phase's time series, resources, stability and amplification
    /// (see [`crate::observe`]); `None` when not observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<crate::observe::PhaseObservation>,
}

/// The cumulative figures of one section (an operation's latency or its
/// intended latency).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SectionReport {
    /// Java's section name (`READ`, `Intended-READ`).
    pub name: String,
    /// The operation.
    pub operation: Operation,
    /// Whether this is intended latency.
    pub intended: bool,
    /// Latencies recorded (Java's `Operations`).
    pub operations: u64,
    /// The exact mean latency in microseconds.
    pub average_us: f64,
    /// The smallest latency in whole microseconds (0 when none).
    pub min_us: u64,
    /// The largest latency in whole microseconds (0 when none).
    pub max_us: u64,
    /// The exact mean latency in nanoseconds.
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
    /// clients. Decode it with [`decode_histogram`](super::decode_histogram).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// Operations per status, in [`Status::ALL`] order, only those that
    /// occurred.
    pub returns: Vec<StatusCount>,
}

/// One latency percentile.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StatusCount {
    /// The status, serialized by its Java name (`NOT_FOUND`).
    #[serde(serialize_with = "status_name")]
    pub status: Status,
    /// How many operations returned it.
    pub count: u64,
}

fn status_name<S: Serializer>(status: &Status, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(status.name())
}

/// A number of Java's report, printed as an integer or a double as Java
/// does for that line.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JavaNumber {
    /// Printed as a plain integer.
    Integer(u64),
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

impl PhaseReport {
    /// The phase's figures as Java's exporters write them, in order:
    /// `OVERALL` runtime and throughput, then per section the operation
    /// count, average, minimum and maximum latency, the configured
    /// percentiles and the `Return=` counts.
    pub fn java_measurements(&self) -> Vec<JavaMeasurement> {
        let line = |metric: &str, measurement: String, value: JavaNumber| JavaMeasurement {
            metric: metric.to_string(),
            measurement,
            value,
        };
        let mut lines = vec![
            line(
                "OVERALL",
                "RunTime(ms)".into(),
                JavaNumber::Integer(self.runtime_ms),
            ),
            line(
                "OVERALL",
                "Throughput(ops/sec)".into(),
                JavaNumber::Float(self.throughput),
            ),
        ];
        for s in &self.sections {
            let name = s.name.as_str();
            lines.push(line(
                name,
                "Operations".into(),
                JavaNumber::Integer(s.operations),
            ));
            lines.push(line(
                name,
                "AverageLatency(us)".into(),
                JavaNumber::Float(s.average_us),
            ));
            lines.push(line(
                name,
                "MinLatency(us)".into(),
                JavaNumber::Integer(s.min_us),
            ));
            lines.push(line(
                name,
                "MaxLatency(us)".into(),
                JavaNumber::Integer(s.max_us),
            ));
            for p in &s.percentiles {
                lines.push(line(
                    name,
                    format!("{}PercentileLatency(us)", java_ordinal(p.percentile)),
                    JavaNumber::Integer(p.us),
                ));
            }
            for r in &s.returns {
                lines.push(line(
                    name,
                    format!("Return={}", r.status.name()),
                    JavaNumber::Integer(r.count),
                ));
            }
        }
        lines
    }
}
