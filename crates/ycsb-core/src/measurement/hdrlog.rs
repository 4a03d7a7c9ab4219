//! HdrHistogram interval logs (Java YCSB's `hdrhistogram.fileoutput`) and
//! the base64 V2 histogram encoding that exports carry for exact merging.
//!
//! A log is HdrHistogram's standard text format, which Java's
//! `HistogramLogProcessor`, the `hdrhistogram` Python package and the Rust
//! crate read:
//!
//! ```text
//! #[Logging for: READ]
//! #[Histogram log format version 1.3]
//! #[StartTime: 1764456000.123 (seconds since epoch), Sat Nov 29 22:40:00 +00:00 2025]
//! #[BaseTime: 1764456000.123 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! 0.000,1.000,2.769,HISTFAAAAEV42pNpmSzMwMCyAAJMQAwDAAQ...
//! ```
//!
//! One line per status interval, its timestamp in seconds after the
//! `BaseTime` (the phase start). Values are whole microseconds, as Java
//! YCSB logs them (so Java's post-processing and HdrHistogram's tools read
//! them unchanged), and `Interval_Max` is the maximum divided by 10^6, as
//! Java's `HistogramLogWriter` writes it. The nanosecond histograms are
//! converted bucket by bucket (each bucket's highest value, truncated to
//! whole microseconds as Java's `(end - start) / 1000`).
//!
//! The logs cover the whole phase, a `measurement.warmup` included; the
//! histogram each [`SectionReport`](super::SectionReport) carries covers
//! what the report covers.

use std::fs::File;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::{Counter, Histogram};
use ycsb_db::{Properties, Property, PropertyError};

use super::IntervalSnapshot;

/// `hdrhistogram.fileoutput`.
pub const HDR_FILE_OUTPUT: Property<bool> = Property::new(
    "hdrhistogram.fileoutput",
    "false",
    "Write an HdrHistogram interval log per operation (<hdrhistogram.output.path><OPERATION>.hdr, e.g. READ.hdr; load-/run- prefixed when one process runs both phases): one compressed V2 histogram of latencies in microseconds (Java's unit) per status interval, readable by HdrHistogram's tools and ycsb merge.",
);

/// `hdrhistogram.output.path`.
pub const HDR_OUTPUT_PATH: Property<String> = Property::new(
    "hdrhistogram.output.path",
    "",
    "Prefix of the HdrHistogram interval log files, as in Java YCSB: a directory needs its trailing slash (results/ gives results/READ.hdr; the directory must exist).",
);

/// Java's `HistogramLogWriter` divides `Interval_Max` by 10^6.
const MAX_VALUE_DIVISOR: f64 = 1e6;

/// The longest interval log line read (a histogram of HdrHistogram's
/// widest range, every count distinct, takes a fraction of it): a longer
/// one is refused before it is held, so a file without line ends cannot
/// fill memory.
pub const MAX_LOG_LINE: usize = 8 << 20;

fn new_histogram() -> Histogram<u64> {
    match Histogram::new(3) {
        Ok(h) => h,
        // 3 significant digits is always within HdrHistogram's 0..=5.
        Err(e) => unreachable!("HdrHistogram refused 3 significant digits: {e:?}"),
    }
}

/// A nanosecond histogram in whole microseconds, as Java records them.
pub fn to_microseconds<C: Counter>(nanos: &Histogram<C>, into: &mut Histogram<u64>) {
    into.reset();
    for bucket in nanos.iter_recorded() {
        let us = bucket.value_iterated_to() / 1_000;
        // Auto-resizing: fails only if the counts array cannot grow.
        let _ = into.record_n(us, bucket.count_at_value().as_u64());
    }
}

/// Where the interval logs go.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HdrLogSettings {
    /// Whether logs are written (`hdrhistogram.fileoutput`).
    pub enabled: bool,
    /// The file name prefix (`hdrhistogram.output.path`).
    pub prefix: String,
}

impl HdrLogSettings {
    /// Reads [`HDR_FILE_OUTPUT`] and [`HDR_OUTPUT_PATH`].
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming an unreadable value and its origin.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        Ok(Self {
            enabled: props.get(&HDR_FILE_OUTPUT)?,
            prefix: props.get(&HDR_OUTPUT_PATH)?,
        })
    }
}

/// An error reading or writing interval logs and encoded histograms.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum HdrLogError {
    /// A log file could not be created or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// A histogram could not be encoded.
    #[error("encoding the {section} histogram: {reason}")]
    Encode {
        /// The section.
        section: String,
        /// What went wrong.
        reason: String,
    },
    /// An input could not be read.
    #[error("{origin}: {source}")]
    Read {
        /// The input and line (`file:line`).
        origin: String,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// A text that should hold a base64 V2 histogram does not.
    #[error("{origin}: not a base64 HdrHistogram V2 histogram: {reason}")]
    Decode {
        /// Where the text came from (`file:line`, a JSON path).
        origin: String,
        /// What went wrong.
        reason: String,
    },
}

/// Decodes [`encode_histogram`](ycsb_results::encode_histogram)'s text with ycsb-results'
/// [`decode_histogram`](ycsb_results::decode_histogram), which checks
/// every declared length before allocating; `origin` names where the text
/// came from, for the error.
///
/// # Errors
///
/// [`HdrLogError::Decode`] when the text is not base64 or not a V2
/// histogram, or declares lengths its bytes or its range cannot hold.
pub fn decode_histogram(text: &str, origin: &str) -> Result<Histogram<u64>, HdrLogError> {
    ycsb_results::decode_histogram(text, origin).map_err(|e| HdrLogError::Decode {
        origin: e.origin,
        reason: e.reason,
    })
}

/// One open log file.
#[derive(Debug)]
struct LogFile {
    name: &'static str,
    path: PathBuf,
    out: BufWriter<File>,
}

/// The interval logs of one phase: one file per section, created when the
/// section first appears, one line per interval.
///
/// Feed it every [`IntervalSnapshot`] of the phase (taken with
/// [`MeasurementSettings::interval_histograms`](super::MeasurementSettings::interval_histograms)
/// on) and call [`HdrLogs::finish`] at the end.
pub struct HdrLogs {
    prefix: String,
    start: SystemTime,
    files: Vec<LogFile>,
    serializer: V2DeflateSerializer,
    bytes: Vec<u8>,
    text: String,
    /// The interval's histogram in microseconds, reused.
    micros: Histogram<u64>,
}

impl std::fmt::Debug for HdrLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HdrLogs")
            .field("prefix", &self.prefix)
            .field("start", &self.start)
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl HdrLogs {
    /// Logs for a phase that started at `start`, written to
    /// `<prefix><label><SECTION>.hdr` (`label` is `""`, or `"run-"` when a
    /// process runs several phases).
    pub fn new(settings: &HdrLogSettings, label: &str, start: SystemTime) -> Self {
        Self {
            prefix: format!("{}{label}", settings.prefix),
            start,
            files: Vec::new(),
            serializer: V2DeflateSerializer::new(),
            bytes: Vec::new(),
            text: String::new(),
            micros: new_histogram(),
        }
    }

    /// The file a section's log goes to.
    pub fn path_of(&self, section: &str) -> PathBuf {
        PathBuf::from(format!("{}{section}.hdr", self.prefix))
    }

    /// Appends one interval, which began `offset` after the phase start and
    /// lasted `length`, to the log of every section in `snapshot`.
    ///
    /// # Errors
    ///
    /// [`HdrLogError::Io`] when a file cannot be created or written.
    pub fn write_interval(
        &mut self,
        snapshot: &IntervalSnapshot,
        offset: Duration,
        length: Duration,
    ) -> Result<(), HdrLogError> {
        for section in &snapshot.histograms {
            let index = match self.files.iter().position(|f| f.name == section.name) {
                Some(index) => index,
                None => {
                    let file = self.create(section.name)?;
                    self.files.push(file);
                    self.files.len() - 1
                }
            };
            self.bytes.clear();
            to_microseconds(&section.histogram, &mut self.micros);
            self.serializer
                .serialize(&self.micros, &mut self.bytes)
                .map_err(|e| HdrLogError::Encode {
                    section: section.name.to_string(),
                    reason: format!("{e:?}"),
                })?;
            self.text.clear();
            base64::engine::general_purpose::STANDARD.encode_string(&self.bytes, &mut self.text);
            let file = &mut self.files[index];
            writeln!(
                file.out,
                "{:.3},{:.3},{:.3},{}",
                offset.as_secs_f64(),
                length.as_secs_f64(),
                self.micros.max() as f64 / MAX_VALUE_DIVISOR,
                self.text
            )
            .map_err(|source| HdrLogError::Io {
                path: file.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    fn create(&self, name: &'static str) -> Result<LogFile, HdrLogError> {
        let path = self.path_of(name);
        let io_error = |source| HdrLogError::Io {
            path: path.clone(),
            source,
        };
        // A missing directory is not created (a session checks it exists
        // before running); a device or FIFO is written in place.
        let mut out = BufWriter::new(File::create(&path).map_err(io_error)?);
        let seconds = self
            .start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let date = chrono::DateTime::<chrono::Local>::from(self.start)
            .format("%a %b %d %H:%M:%S %:z %Y")
            .to_string();
        write!(
            out,
            "#[Logging for: {name}]\n\
             #[Histogram log format version 1.3]\n\
             #[StartTime: {seconds:.3} (seconds since epoch), {date}]\n\
             #[BaseTime: {seconds:.3} (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
        )
        .map_err(io_error)?;
        Ok(LogFile { name, path, out })
    }

    /// Flushes every log and returns the files written, in the order their
    /// sections appeared.
    ///
    /// # Errors
    ///
    /// [`HdrLogError::Io`] for the first file that cannot be flushed.
    pub fn finish(&mut self) -> Result<Vec<PathBuf>, HdrLogError> {
        for file in &mut self.files {
            file.out.flush().map_err(|source| HdrLogError::Io {
                path: file.path.clone(),
                source,
            })?;
        }
        Ok(self.files.iter().map(|f| f.path.clone()).collect())
    }
}

/// One interval read back from a log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogInterval {
    /// The line's tag (`Tag=...`), if any.
    pub tag: Option<String>,
    /// When the interval started, in seconds since the epoch when the log
    /// has a `StartTime` or `BaseTime`, else as written.
    pub start: f64,
    /// The interval's length in seconds.
    pub length: f64,
    /// Its histogram.
    pub histogram: Histogram<u64>,
}

/// An interval log read back.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct IntervalLog {
    /// The section named by a `#[Logging for: NAME]` comment, if any.
    pub name: Option<String>,
    /// The `StartTime`, in seconds since the epoch, if given.
    pub start_time: Option<f64>,
    /// The intervals in file order.
    pub intervals: Vec<LogInterval>,
}

/// Reads an interval log's text; `origin` (a file name) prefixes errors.
///
/// Timestamps are made absolute with the `BaseTime` (or, lacking one, the
/// `StartTime`), as HdrHistogram's readers do for relative timestamps.
/// [`IntervalLogReader`] reads a file one interval at a time instead.
///
/// # Errors
///
/// [`HdrLogError::Decode`] naming `origin:line` for a line that is neither
/// a comment, the legend nor a well-formed interval.
pub fn read_interval_log(text: &str, origin: &str) -> Result<IntervalLog, HdrLogError> {
    let mut reader = IntervalLogReader::new(text.as_bytes(), origin);
    let mut intervals = Vec::new();
    while let Some(interval) = reader.next_interval()? {
        intervals.push(interval);
    }
    Ok(IntervalLog {
        name: reader.name,
        start_time: reader.start_time,
        intervals,
    })
}

/// The timing of one interval line, its histogram left encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalTiming {
    /// The line's number in the file (from 1).
    pub line: usize,
    /// When the interval started, as [`LogInterval::start`].
    pub start: f64,
    /// The interval's length in seconds.
    pub length: f64,
}

/// Reads an interval log one line at a time: memory holds one line (at
/// most [`MAX_LOG_LINE`] bytes) and one decoded histogram, whatever the
/// file's size.
#[derive(Debug)]
pub struct IntervalLogReader<R> {
    input: R,
    origin: String,
    line_number: usize,
    line: Vec<u8>,
    name: Option<String>,
    start_time: Option<f64>,
    base_time: Option<f64>,
}

/// An interval line split into its fields.
struct IntervalFields<'a> {
    tag: Option<&'a str>,
    start: f64,
    length: f64,
    encoded: &'a str,
}

impl<R: BufRead> IntervalLogReader<R> {
    /// A reader of `input`; `origin` (the file's name) prefixes errors.
    pub fn new(input: R, origin: impl Into<String>) -> Self {
        Self {
            input,
            origin: origin.into(),
            line_number: 0,
            line: Vec::new(),
            name: None,
            start_time: None,
            base_time: None,
        }
    }

    /// The section named by a `#[Logging for: NAME]` comment read so far.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The `StartTime` read so far, in seconds since the epoch.
    pub fn start_time(&self) -> Option<f64> {
        self.start_time
    }

    /// `origin:line` of the line read last.
    pub fn at(&self) -> String {
        format!("{}:{}", self.origin, self.line_number)
    }

    /// The next interval, its histogram decoded; `None` at the end.
    ///
    /// # Errors
    ///
    /// [`HdrLogError::Decode`] naming `origin:line` for a line that is
    /// neither a comment, the legend nor a well-formed interval (its
    /// histogram's declared lengths included), is not text or is longer
    /// than [`MAX_LOG_LINE`]; [`HdrLogError::Read`] when the input cannot
    /// be read.
    pub fn next_interval(&mut self) -> Result<Option<LogInterval>, HdrLogError> {
        if !self.advance()? {
            return Ok(None);
        }
        let at = self.at();
        let base = self.base_time.or(self.start_time).unwrap_or(0.0);
        let fields = self.fields()?;
        let histogram = decode_histogram(fields.encoded, &at)?;
        Ok(Some(LogInterval {
            tag: fields.tag.map(str::to_string),
            start: fields.start + base,
            length: fields.length,
            histogram,
        }))
    }

    /// The next interval's timing, its histogram not decoded; `None` at
    /// the end.
    ///
    /// # Errors
    ///
    /// As [`IntervalLogReader::next_interval`], but a histogram's own
    /// encoding is not checked.
    pub fn next_timing(&mut self) -> Result<Option<IntervalTiming>, HdrLogError> {
        if !self.advance()? {
            return Ok(None);
        }
        let base = self.base_time.or(self.start_time).unwrap_or(0.0);
        let line = self.line_number;
        let fields = self.fields()?;
        Ok(Some(IntervalTiming {
            line,
            start: fields.start + base,
            length: fields.length,
        }))
    }

    /// Reads lines up to the next interval line (left in `self.line`),
    /// taking in the comments on the way; false at the end.
    fn advance(&mut self) -> Result<bool, HdrLogError> {
        loop {
            self.line.clear();
            self.line_number += 1;
            let limit = MAX_LOG_LINE as u64 + 1;
            let read = (&mut self.input)
                .take(limit)
                .read_until(b'\n', &mut self.line)
                .map_err(|source| HdrLogError::Read {
                    origin: self.at(),
                    source,
                })?;
            if read == 0 {
                return Ok(false);
            }
            if self.line.len() > MAX_LOG_LINE {
                return Err(self.bad(format!(
                    "a line longer than {} MiB (an interval log's lines are histograms of a few kB)",
                    MAX_LOG_LINE >> 20
                )));
            }
            while matches!(self.line.last(), Some(b'\n' | b'\r')) {
                self.line.pop();
            }
            let line = std::str::from_utf8(&self.line).map_err(|_| HdrLogError::Decode {
                origin: format!("{}:{}", self.origin, self.line_number),
                reason: "not text".into(),
            })?;
            if let Some(rest) = line.strip_prefix("#[Logging for: ") {
                self.name = Some(rest.trim_end_matches(']').trim().to_string());
            } else if let Some(rest) = line.strip_prefix("#[StartTime: ") {
                self.start_time = rest.split_whitespace().next().and_then(|s| s.parse().ok());
            } else if let Some(rest) = line.strip_prefix("#[BaseTime: ") {
                self.base_time = rest.split_whitespace().next().and_then(|s| s.parse().ok());
            } else if !(line.starts_with('#')
                || line.starts_with("\"StartTimestamp\"")
                || line.is_empty())
            {
                return Ok(true);
            }
        }
    }

    fn bad(&self, reason: impl Into<String>) -> HdrLogError {
        HdrLogError::Decode {
            origin: self.at(),
            reason: reason.into(),
        }
    }

    /// The fields of the interval line in `self.line`.
    fn fields(&self) -> Result<IntervalFields<'_>, HdrLogError> {
        // `advance` checked that the line is text.
        let line = std::str::from_utf8(&self.line).map_err(|_| self.bad("not text"))?;
        let (tag, fields) = match line.strip_prefix("Tag=") {
            Some(rest) => {
                let (tag, fields) = rest
                    .split_once(',')
                    .ok_or_else(|| self.bad("a tag alone"))?;
                (Some(tag), fields)
            }
            None => (None, line),
        };
        let mut parts = fields.splitn(4, ',');
        let mut number_field = |what: &str| -> Result<f64, HdrLogError> {
            parts
                .next()
                .and_then(|s| s.trim().parse::<f64>().ok())
                .ok_or_else(|| self.bad(format!("expected the {what} as a number")))
        };
        let start = number_field("start timestamp")?;
        let length = number_field("interval length")?;
        let _max = number_field("interval maximum")?;
        let encoded = parts
            .next()
            .ok_or_else(|| self.bad("expected a compressed histogram"))?;
        Ok(IntervalFields {
            tag,
            start,
            length,
            encoded,
        })
    }
}

/// Writes the HdrHistogram interval logs of a session's phases from their
/// status updates (`hdrhistogram.fileoutput=true`): one set of logs per
/// phase, the phase name prefixing the files when the session runs several
/// phases, so the run's logs do not replace the load's.
#[derive(Debug)]
pub(crate) struct HdrLogWriter {
    settings: HdrLogSettings,
    label_phases: bool,
    current: Option<(crate::runner::Phase, HdrLogs)>,
    written: Vec<PathBuf>,
    errors: Vec<HdrLogError>,
    failed: bool,
}

impl HdrLogWriter {
    pub(crate) fn new(settings: HdrLogSettings, label_phases: bool) -> Self {
        Self {
            settings,
            label_phases,
            current: None,
            written: Vec::new(),
            errors: Vec::new(),
            failed: false,
        }
    }

    /// Logs one status interval. A write error stops the logging, not the
    /// benchmark: it is returned once.
    pub(crate) fn on_status(
        &mut self,
        update: &crate::runner::StatusUpdate<'_>,
    ) -> Option<HdrLogError> {
        if !self.settings.enabled || self.failed {
            return None;
        }
        if self.current.as_ref().map(|(p, _)| *p) != Some(update.phase) {
            self.finish_phase();
            let label = if self.label_phases {
                format!("{}-", update.phase.name())
            } else {
                String::new()
            };
            let start = SystemTime::now()
                .checked_sub(update.elapsed)
                .unwrap_or_else(SystemTime::now);
            self.current = Some((update.phase, HdrLogs::new(&self.settings, &label, start)));
        }
        let (_, logs) = self.current.as_mut()?;
        let offset = update.elapsed.saturating_sub(update.interval_length);
        match logs.write_interval(update.interval, offset, update.interval_length) {
            Ok(()) => None,
            Err(e) => {
                self.failed = true;
                Some(e)
            }
        }
    }

    fn finish_phase(&mut self) {
        if let Some((_, mut logs)) = self.current.take() {
            match logs.finish() {
                Ok(paths) => self.written.extend(paths),
                Err(e) => self.errors.push(e),
            }
        }
    }

    /// Flushes the last phase's logs: every file written, and the errors
    /// of flushing them.
    pub(crate) fn finish(&mut self) -> (Vec<PathBuf>, Vec<HdrLogError>) {
        self.finish_phase();
        (
            std::mem::take(&mut self.written),
            std::mem::take(&mut self.errors),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::{MeasurementSettings, Measurements, SectionHistogram};
    use ycsb_db::Status;
    use ycsb_results::encode_histogram;
    use ycsb_results::{java_percentile, Operation};

    #[test]
    fn the_log_reader_decodes_with_the_results_codec_and_names_the_place() {
        // The codec itself is tested in ycsb-results; this is the wrapper
        // the interval logs read with.
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record(2_500).unwrap();
        let back = decode_histogram(&encode_histogram(&h), "log").unwrap();
        assert_eq!(back.max(), h.max());
        let err = decode_histogram("not base64!", "a.hdr:3").unwrap_err();
        assert!(err.to_string().starts_with("a.hdr:3: "), "{err}");
    }

    #[test]
    fn a_log_round_trips_through_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let settings = HdrLogSettings {
            enabled: true,
            prefix: format!("{}/", dir.path().display()),
        };
        let start = UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
        let mut logs = HdrLogs::new(&settings, "", start);
        let mut expected = Vec::new();
        for (i, latency) in [10_000u64, 2_600_000].into_iter().enumerate() {
            let mut h = Histogram::<u64>::new(3).unwrap();
            h.record_n(latency, i as u64 + 1).unwrap();
            // Java logs whole microseconds.
            let mut micros = Histogram::<u64>::new(3).unwrap();
            micros.record_n(latency / 1_000, i as u64 + 1).unwrap();
            expected.push(micros);
            let snapshot = IntervalSnapshot {
                sections: Vec::new(),
                histograms: vec![SectionHistogram {
                    name: "READ",
                    histogram: h,
                }],
            };
            logs.write_interval(
                &snapshot,
                Duration::from_secs(i as u64),
                Duration::from_secs(1),
            )
            .unwrap();
        }
        let files = logs.finish().unwrap();
        assert_eq!(files, vec![dir.path().join("READ.hdr")]);
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(text.contains("#[StartTime: 1700000000.250 (seconds since epoch), "));
        // Interval_Max: 10 us / 10^6, then 2600 us / 10^6, as Java's writer.
        assert!(text.contains("\n0.000,1.000,0.000,HISTF"), "{text}");
        assert!(text.contains("\n1.000,1.000,0.003,HISTF"), "{text}");
        let log = read_interval_log(&text, "READ.hdr").unwrap();
        assert_eq!(log.name.as_deref(), Some("READ"));
        assert_eq!(log.intervals.len(), 2);
        assert!((log.intervals[1].start - 1_700_000_001.25).abs() < 1e-6);
        for (interval, h) in log.intervals.iter().zip(&expected) {
            assert_eq!(&interval.histogram, h);
        }
        let bad = read_interval_log("0.0,1.0,2.0,@@@\n", "x.hdr").unwrap_err();
        assert!(bad.to_string().starts_with("x.hdr:1: "), "{bad}");
    }

    #[test]
    fn snapshots_carry_histograms_only_when_asked() {
        for keep in [false, true] {
            let settings = MeasurementSettings {
                interval_histograms: keep,
                ..MeasurementSettings::default()
            };
            let measurements = Measurements::new(&settings, 1);
            let mut recorder = measurements.recorder(0);
            recorder.record(Operation::Read, Status::Ok, 5_000);
            recorder.record(Operation::Read, Status::Ok, 7_000);
            recorder.publish();
            let first = measurements.take_interval();
            let second = measurements.take_interval();
            if keep {
                assert_eq!(first.histograms.len(), 1);
                assert_eq!(first.histograms[0].name, "READ");
                assert_eq!(first.histograms[0].histogram.len(), 2);
                // An idle interval still logs an (empty) histogram.
                assert_eq!(second.histograms[0].histogram.len(), 0);
            } else {
                assert!(first.histograms.is_empty() && second.histograms.is_empty());
            }
            drop(recorder);
            let report = measurements.summary("run", Duration::from_secs(1), 2);
            let encoded = report.sections[0].histogram.as_deref().unwrap();
            let total = decode_histogram(encoded, "report").unwrap();
            assert_eq!(total.len(), 2);
            assert_eq!(
                java_percentile(&total, 50.0),
                report.sections[0].percentiles[0].ns
            );
        }
    }
}
