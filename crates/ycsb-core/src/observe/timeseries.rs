//! The time-series rows, a phase's observation, and the CSV and JSON-lines
//! writers of `timeseries.file`.

use std::io::{self, Write};

use serde::Serialize;

use ycsb_results::SeriesRow;

/// The operations that get CSV columns, in report order (`VERIFY` and
/// `CLEANUP` are only in the JSON forms).
const CSV_OPERATIONS: [&str; 6] = [
    "READ",
    "UPDATE",
    "INSERT",
    "SCAN",
    "READ-MODIFY-WRITE",
    "DELETE",
];

const RESOURCE_COLUMNS: [&str; 8] = [
    "cpu_user_pct",
    "cpu_system_pct",
    "rss_bytes",
    "peak_rss_bytes",
    "read_bytes",
    "write_bytes",
    "voluntary_ctxt_switches",
    "involuntary_ctxt_switches",
];

/// Writes rows as CSV with a header fixed when the writer is made, so every
/// phase of a run shares one set of columns:
///
/// `phase,time_s,unix_ms,interval_s,warmup,operations,throughput,errors`,
/// then `client_<figure>` and `monitor_<figure>` for `cpu_user_pct`,
/// `cpu_system_pct`, `rss_bytes`, `peak_rss_bytes`, `read_bytes`,
/// `write_bytes`, `voluntary_ctxt_switches`, `involuntary_ctxt_switches`,
/// then `db_size_bytes`, then for each of `READ`, `UPDATE`, `INSERT`,
/// `SCAN`, `READ-MODIFY-WRITE`, `DELETE`: `<OP>_operations`,
/// `<OP>_errors`, `<OP>_avg_us`, `<OP>_p50_us`, `<OP>_p99_us`,
/// `<OP>_p999_us`, `<OP>_max_us`; with intended latency also
/// `Intended-<OP>_avg_us` to `Intended-<OP>_max_us`; and one column per
/// gauge named when the writer was made (a gauge that appears only later is
/// in the JSON forms only). A figure not available is an empty cell.
#[derive(Debug)]
pub struct CsvWriter<W: Write> {
    out: W,
    intended: bool,
    gauges: Vec<String>,
    line: String,
}

fn csv_field(line: &mut String, value: &str) {
    if value.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&value.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(value);
    }
}

impl<W: Write> CsvWriter<W> {
    /// A writer that writes the header line now.
    ///
    /// # Errors
    ///
    /// The error of writing the header.
    pub fn new(mut out: W, intended: bool, gauges: Vec<String>) -> io::Result<Self> {
        let mut header: Vec<String> = [
            "phase",
            "time_s",
            "unix_ms",
            "interval_s",
            "warmup",
            "operations",
            "throughput",
            "errors",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for who in ["client", "monitor"] {
            header.extend(RESOURCE_COLUMNS.iter().map(|c| format!("{who}_{c}")));
        }
        header.push("db_size_bytes".into());
        for op in CSV_OPERATIONS {
            for figure in [
                "operations",
                "errors",
                "avg_us",
                "p50_us",
                "p99_us",
                "p999_us",
                "max_us",
            ] {
                header.push(format!("{op}_{figure}"));
            }
        }
        if intended {
            for op in CSV_OPERATIONS {
                for figure in ["avg_us", "p50_us", "p99_us", "p999_us", "max_us"] {
                    header.push(format!("Intended-{op}_{figure}"));
                }
            }
        }
        header.extend(gauges.iter().cloned());
        let mut line = String::new();
        for (i, h) in header.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            csv_field(&mut line, h);
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        out.flush()?;
        Ok(Self {
            out,
            intended,
            gauges,
            line,
        })
    }

    /// Writes and flushes one row.
    ///
    /// # Errors
    ///
    /// The error of writing or flushing.
    pub fn write_row(&mut self, phase: &str, row: &SeriesRow) -> io::Result<()> {
        use std::fmt::Write as _;
        let line = &mut self.line;
        line.clear();
        csv_field(line, phase);
        let _ = write!(
            line,
            ",{:.3},{},{:.3},{},{},{:.3},{}",
            row.time_s,
            row.unix_ms,
            row.interval_s,
            row.warmup,
            row.operations,
            row.throughput,
            row.errors
        );
        for usage in [&row.client, &row.monitor] {
            match usage {
                Some(u) => {
                    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
                    let _ = write!(
                        line,
                        ",{:.2},{:.2},{},{},{},{},{},{}",
                        u.cpu_user_pct,
                        u.cpu_system_pct,
                        u.rss_bytes,
                        u.peak_rss_bytes,
                        opt(u.read_bytes),
                        opt(u.write_bytes),
                        u.voluntary_ctxt_switches,
                        u.involuntary_ctxt_switches
                    );
                }
                None => line.push_str(",,,,,,,,"),
            }
        }
        line.push(',');
        if let Some(size) = row.db_size_bytes {
            let _ = write!(line, "{size}");
        }
        let find = |name: &str| row.sections.iter().find(|s| s.name == name);
        for op in CSV_OPERATIONS {
            match find(op) {
                Some(s) => {
                    let _ = write!(
                        line,
                        ",{},{},{:.2},{},{},{},{}",
                        s.operations, s.errors, s.avg_us, s.p50_us, s.p99_us, s.p999_us, s.max_us
                    );
                }
                None => line.push_str(",,,,,,,"),
            }
        }
        if self.intended {
            for op in CSV_OPERATIONS {
                let name = format!("Intended-{op}");
                match find(&name) {
                    Some(s) => {
                        let _ = write!(
                            line,
                            ",{:.2},{},{},{},{}",
                            s.avg_us, s.p50_us, s.p99_us, s.p999_us, s.max_us
                        );
                    }
                    None => line.push_str(",,,,,"),
                }
            }
        }
        for gauge in &self.gauges {
            line.push(',');
            if let Some(v) = row.gauges.get(gauge) {
                let _ = write!(line, "{v}");
            }
        }
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }
}

/// The writer of `timeseries.file`: CSV or JSON lines.
#[derive(Debug)]
pub enum SeriesWriter<W: Write> {
    /// One JSON object per line: a [`SeriesRow`] with a `"phase"` key.
    JsonLines(W),
    /// CSV with a fixed header.
    Csv(CsvWriter<W>),
}

#[derive(Serialize)]
struct PhaseRow<'a> {
    phase: &'a str,
    #[serde(flatten)]
    row: &'a SeriesRow,
}

impl<W: Write> SeriesWriter<W> {
    /// Writes and flushes one row, so that a crash later leaves it whole.
    ///
    /// # Errors
    ///
    /// The error of writing or flushing.
    pub fn write_row(&mut self, phase: &str, row: &SeriesRow) -> io::Result<()> {
        match self {
            SeriesWriter::JsonLines(out) => {
                let mut line = serde_json::to_vec(&PhaseRow { phase, row })?;
                line.push(b'\n');
                // One write per line: a reader never sees half a row
                // followed by more data.
                out.write_all(&line)?;
                out.flush()
            }
            SeriesWriter::Csv(csv) => csv.write_row(phase, row),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_results::{ResourceUsage, SeriesSection};

    fn sample_row() -> SeriesRow {
        let mut row = SeriesRow::empty(2.0, 1.0, false);
        row.unix_ms = 1_700_000_000_000;
        row.operations = 10;
        row.throughput = 10.0;
        row.sections.push(SeriesSection {
            name: "READ".into(),
            operation: "READ".into(),
            intended: false,
            operations: 10,
            throughput: 10.0,
            errors: 1,
            avg_us: 12.5,
            min_us: 3,
            p50_us: 11,
            p99_us: 40,
            p999_us: 41,
            max_us: 42,
        });
        row.client = Some(ResourceUsage {
            cpu_user_pct: 50.0,
            cpu_system_pct: 5.0,
            rss_bytes: 4096,
            peak_rss_bytes: 8192,
            read_bytes: None,
            write_bytes: Some(100),
            read_bytes_per_s: None,
            write_bytes_per_s: Some(100.0),
            voluntary_ctxt_switches: 7,
            involuntary_ctxt_switches: 1,
        });
        row.db_size_bytes = Some(123);
        row.gauges.insert("leveldb.num-files-at-level0".into(), 2.0);
        row
    }

    #[test]
    fn csv_rows_match_the_header() {
        let mut out = Vec::new();
        {
            let mut w = CsvWriter::new(
                &mut out,
                true,
                vec!["leveldb.num-files-at-level0".into(), "odd,name".into()],
            )
            .unwrap();
            w.write_row("run", &sample_row()).unwrap();
            w.write_row("run", &SeriesRow::empty(3.0, 1.0, true))
                .unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let header: Vec<&str> = lines[0].split(',').collect();
        // The quoted gauge name holds a comma: one more split piece.
        let columns = header.len() - 1;
        assert!(lines[0].ends_with("\"odd,name\""));
        for line in &lines[1..] {
            assert_eq!(line.split(',').count(), columns, "{line}");
        }
        let row: Vec<&str> = lines[1].split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        assert_eq!(row[col("phase")], "run");
        assert_eq!(row[col("READ_p99_us")], "40");
        assert_eq!(row[col("READ_errors")], "1");
        assert_eq!(row[col("UPDATE_p99_us")], "");
        assert_eq!(row[col("client_write_bytes")], "100");
        assert_eq!(row[col("client_read_bytes")], "");
        assert_eq!(row[col("db_size_bytes")], "123");
        assert_eq!(row[col("leveldb.num-files-at-level0")], "2");
        assert_eq!(row[col("warmup")], "false");
        assert!(header.contains(&"Intended-READ_p99_us"));
    }

    #[test]
    fn json_lines_read_back() {
        let mut out = Vec::new();
        let mut w = SeriesWriter::JsonLines(&mut out);
        w.write_row("load", &sample_row()).unwrap();
        w.write_row("run", &sample_row()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1]["phase"], "run");
        assert_eq!(rows[0]["sections"][0]["p99_us"], 40);
        assert_eq!(rows[0]["gauges"]["leveldb.num-files-at-level0"], 2.0);
        let back: SeriesRow = serde_json::from_value(rows[0].clone()).unwrap();
        assert_eq!(back, sample_row());
    }
}
