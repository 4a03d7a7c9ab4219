//! Report exporters and atomic export files.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use super::format::java_double;
use super::report::{JavaMeasurement, JavaNumber, JavaReport};
use super::ExporterKind;
use ycsb_results::{PhaseReport, RunReport};

/// Writes a [`RunReport`] in some format.
pub trait Exporter {
    /// Writes the whole report.
    ///
    /// # Errors
    ///
    /// The first error of the underlying writer.
    fn export(&mut self, report: &RunReport) -> io::Result<()>;
}

/// An exporter of the given kind writing to `out`.
pub fn new_exporter<'a>(kind: ExporterKind, out: Box<dyn Write + 'a>) -> Box<dyn Exporter + 'a> {
    match kind {
        ExporterKind::Text => Box::new(TextExporter::new(out)),
        ExporterKind::Json => Box::new(JsonExporter::new(out)),
        ExporterKind::JsonArray => Box::new(JsonArrayExporter::new(out)),
        ExporterKind::JavaJson => Box::new(JavaJsonExporter::new(out, false)),
        ExporterKind::JavaJsonArray => Box::new(JavaJsonExporter::new(out, true)),
    }
}

/// Java's text report: `[SECTION], Name, value` lines per phase.
///
/// ```text
/// [OVERALL], RunTime(ms), 20892
/// [OVERALL], Throughput(ops/sec), 47865.21156423511
/// [READ], Operations, 499304
/// [READ], AverageLatency(us), 1657.34
/// ...
/// [READ], Return=OK, 499304
/// ```
///
/// Metadata and configuration are not part of Java's format and are left
/// out. Several phases are separated by an empty line.
#[derive(Debug)]
pub struct TextExporter<W: Write> {
    out: W,
}

impl<W: Write> TextExporter<W> {
    /// A text exporter writing to `out`.
    pub fn new(out: W) -> Self {
        Self { out }
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Writes one phase's block, for printing a phase as soon as it ends.
    ///
    /// # Errors
    ///
    /// The first error of the underlying writer.
    pub fn write_phase(&mut self, phase: &PhaseReport) -> io::Result<()> {
        for m in phase.java_measurements() {
            let value = match m.value {
                JavaNumber::Integer(v) => v.to_string(),
                JavaNumber::Signed(v) => v.to_string(),
                JavaNumber::Float(v) => java_double(v),
            };
            writeln!(self.out, "[{}], {}, {}", m.metric, m.measurement, value)?;
        }
        Ok(())
    }
}

impl<W: Write> Exporter for TextExporter<W> {
    fn export(&mut self, report: &RunReport) -> io::Result<()> {
        for (i, phase) in report.phases.iter().enumerate() {
            if i > 0 {
                writeln!(self.out)?;
            }
            self.write_phase(phase)?;
        }
        self.out.flush()
    }
}

/// One JSON document: `metadata`, `config` and `phases`, each phase with
/// our figures (nanosecond precision included) and a `measurements` array
/// of Java's `{"metric", "measurement", "value"}` objects.
#[derive(Debug)]
pub struct JsonExporter<W: Write> {
    out: W,
}

impl<W: Write> JsonExporter<W> {
    /// A JSON exporter writing to `out`.
    pub fn new(out: W) -> Self {
        Self { out }
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[derive(Serialize)]
struct JsonPhase<'a> {
    #[serde(flatten)]
    phase: &'a PhaseReport,
    measurements: Vec<JavaMeasurement>,
}

#[derive(Serialize)]
struct JsonDocument<'a> {
    schema_version: u32,
    metadata: &'a ycsb_results::RunMetadata,
    config: &'a [ycsb_results::ConfigEntry],
    phases: Vec<JsonPhase<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    engine_reports: &'a [ycsb_results::EngineReportEntry],
}

impl<W: Write> Exporter for JsonExporter<W> {
    fn export(&mut self, report: &RunReport) -> io::Result<()> {
        let document = JsonDocument {
            schema_version: report.schema_version,
            metadata: &report.metadata,
            config: &report.config,
            phases: report
                .phases
                .iter()
                .map(|phase| JsonPhase {
                    phase,
                    measurements: phase.java_measurements(),
                })
                .collect(),
            engine_reports: &report.engine_reports,
        };
        serde_json::to_writer_pretty(&mut self.out, &document)?;
        writeln!(self.out)?;
        self.out.flush()
    }
}

/// Java's `JSONArrayMeasurementsExporter` format: one array of
/// `{"metric", "measurement", "value"}` objects, each with an added
/// `"phase"` key so that the phases of one process stay apart.
#[derive(Debug)]
pub struct JsonArrayExporter<W: Write> {
    out: W,
}

impl<W: Write> JsonArrayExporter<W> {
    /// A JSON array exporter writing to `out`.
    pub fn new(out: W) -> Self {
        Self { out }
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[derive(Serialize)]
struct PhaseMeasurement<'a> {
    phase: &'a str,
    #[serde(flatten)]
    measurement: JavaMeasurement,
}

impl<W: Write> Exporter for JsonArrayExporter<W> {
    fn export(&mut self, report: &RunReport) -> io::Result<()> {
        let entries: Vec<PhaseMeasurement<'_>> = report
            .phases
            .iter()
            .flat_map(|phase| {
                phase
                    .java_measurements()
                    .into_iter()
                    .map(|measurement| PhaseMeasurement {
                        phase: &phase.phase,
                        measurement,
                    })
            })
            .collect();
        serde_json::to_writer_pretty(&mut self.out, &entries)?;
        writeln!(self.out)?;
        self.out.flush()
    }
}

/// Java's `JSONMeasurementsExporter` (`array: false`) and
/// `JSONArrayMeasurementsExporter` (`array: true`), byte for byte: Jackson
/// 1.9's default pretty printer (two-space indented fields, `" : "`,
/// objects separated by one space at the top level and by `", "` in the
/// array, `[ ` and ` ]` around it, no final newline), numbers as Java's
/// `Double.toString` (`1.0E7`), NaN and infinities quoted.
///
/// Java runs one phase per process; with several, the objects of every
/// phase follow each other (`array: false`), or each phase gets its own
/// array on its own line.
#[derive(Debug)]
pub struct JavaJsonExporter<W: Write> {
    out: W,
    array: bool,
}

impl<W: Write> JavaJsonExporter<W> {
    /// A Java JSON exporter writing to `out`.
    pub fn new(out: W, array: bool) -> Self {
        Self { out, array }
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn object(&mut self, m: &JavaMeasurement) -> io::Result<()> {
        let value = match m.value {
            JavaNumber::Integer(v) => v.to_string(),
            JavaNumber::Signed(v) => v.to_string(),
            JavaNumber::Float(v) if v.is_finite() => java_double_exponent(v),
            JavaNumber::Float(v) => format!("\"{}\"", java_double(v)),
        };
        write!(
            self.out,
            "{{\n  \"metric\" : {},\n  \"measurement\" : {},\n  \"value\" : {}\n}}",
            serde_json::to_string(&m.metric)?,
            serde_json::to_string(&m.measurement)?,
            value
        )
    }
}

impl<W: Write> Exporter for JavaJsonExporter<W> {
    fn export(&mut self, report: &RunReport) -> io::Result<()> {
        let mut first = true;
        for (p, phase) in report.phases.iter().enumerate() {
            if self.array {
                if p > 0 {
                    writeln!(self.out)?;
                }
                write!(self.out, "[")?;
                first = true;
            }
            for m in phase.java_measurements() {
                let separator = match (first, self.array) {
                    (true, _) => " ",
                    (false, true) => ", ",
                    (false, false) => " ",
                };
                if !first || self.array {
                    write!(self.out, "{separator}")?;
                }
                self.object(&m)?;
                first = false;
            }
            if self.array {
                // Jackson: an empty array is `[ ]`, else ` ]` after the last.
                write!(self.out, " ]")?;
            }
        }
        self.out.flush()
    }
}

/// A double as Java's `Double.toString` writes it: the shortest decimal
/// that reads back to the same value, plain from 10^-3 up to below 10^7
/// (`47865.21156423511`, `0.0`), in computerized scientific notation
/// outside (`1.0E7`, `1.2345E-4`).
pub fn java_double_exponent(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || (1e-3..1e7).contains(&magnitude) || !value.is_finite() {
        return java_double(value);
    }
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    if mantissa.contains('.') {
        format!("{mantissa}E{exponent}")
    } else {
        format!("{mantissa}.0E{exponent}")
    }
}

/// Writes an output file (an export, a merged result, a report page, an
/// engine report). What is at `path` decides how:
///
/// - nothing, or a regular file: readers see the old content or the whole
///   new one, never a part: `f` writes to a temporary file in the same
///   directory, which is flushed, synced and renamed over `path`;
/// - a device, FIFO or socket (`/dev/null`, `/dev/stdout`, a pipe to
///   another program): it is opened and written in place, never replaced
///   by a regular file;
/// - a symbolic link: it is resolved and what it points to is written as
///   above (the link stays, the file it names is replaced atomically); a
///   dangling link has its target created in place.
///
/// A missing parent directory is not created: the error names it.
///
/// # Errors
///
/// [`check_output_path`]'s refusal (a directory, a missing directory), or
/// the error of `f` or of creating, writing, syncing or renaming the file;
/// after a failed atomic write the temporary file is removed and `path`
/// left untouched.
pub fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    check_output_path(path).map_err(|why| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} {why}", path.display()),
        )
    })?;
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match fs::canonicalize(path) {
            Ok(target) => write_atomically(&target, f),
            // A dangling link: what it names is created through it.
            Err(_) => write_in_place(path, f),
        },
        Ok(meta) if !meta.file_type().is_file() => write_in_place(path, f),
        _ => write_by_rename(path, f),
    }
}

/// Why nothing can be written at `path`, before any work is done: it is
/// a directory, or its parent directory does not exist or is not a
/// directory (a missing directory is never created silently). The reason
/// reads after the path ("is a directory", "cannot be written: directory
/// /x does not exist").
///
/// # Errors
///
/// The reason, as text.
pub fn check_output_path(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err("is a directory".into());
    }
    let dir = parent(path).unwrap_or(Path::new("."));
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "cannot be written: {} is not a directory",
            dir.display()
        )),
        Err(_) => Err(format!(
            "cannot be written: directory {} does not exist",
            dir.display()
        )),
    }
}

/// Writes a device, FIFO or dangling link's target through an ordinary
/// open, no rename.
fn write_in_place(path: &Path, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let mut out = BufWriter::new(file);
    f(&mut out)?;
    out.flush()
}

fn write_by_rename(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let (temp, file) = create_temp_beside(path)?;
    let result = (|| {
        let mut out = BufWriter::new(file);
        f(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    // Makes the rename itself durable; directories cannot be synced on
    // every platform, and the data is already safe, so failure is ignored.
    if let Some(dir) = parent(path) {
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

fn parent(path: &Path) -> Option<&Path> {
    match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Some(Path::new(".")),
        other => other,
    }
}

fn create_temp_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file path", path.display()),
        )
    })?;
    let dir = parent(path).unwrap_or(Path::new("."));
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.{n}.tmp", std::process::id()));
        let temp = dir.join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}
