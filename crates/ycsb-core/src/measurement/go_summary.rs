//! go-ycsb's summary of a phase (`outputstyle`: plain, table or json), as
//! its `histograms.Output` prints it.
//!
//! One row per operation in go-ycsb's names, sorted by name: `READ`,
//! `UPDATE`, `READ_MODIFY_WRITE`, ..., failed calls as `<OP>_ERROR`, and
//! `TOTAL`, every successful store call. The columns are go-ycsb's header:
//! `Operation, Takes(s), Count, OPS, Avg(us), Min(us), Max(us), 50th(us),
//! 90th(us), 95th(us), 99th(us), 99.9th(us), 99.99th(us)`.
//!
//! Where the figures differ from go-ycsb's, on purpose: `Takes(s)` is the
//! phase's runtime for every row (go-ycsb: from the first operation of
//! that row's kind to the moment the summary is printed), `Avg(us)`,
//! `Min(us)` and `Max(us)` are exact (go-ycsb reads them off its histogram
//! of whole microseconds), and percentiles never pass the exact extremes.

use std::collections::BTreeMap;
use std::io::{self, Write};

use hdrhistogram::Histogram;

use super::hdrlog::decode_histogram;
use ycsb_results::java_percentile;
use ycsb_results::{Operation, PhaseReport, SectionReport};

ycsb_db::choice_property! {
    /// go-ycsb's `outputstyle`: how its summary of a phase is printed.
    pub enum OutputStyle {
        /// `READ   - Takes(s): 10.0, Count: 4999, OPS: 499.9, ...`, one
        /// line per operation.
        Plain = "plain",
        /// A bordered text table (go-ycsb's `tablewriter`).
        Table = "table",
        /// One line of JSON: an array of objects of text values.
        Json = "json",
    }
}

/// go-ycsb's column names, in its order.
const HEADER: [&str; 13] = [
    "Operation",
    "Takes(s)",
    "Count",
    "OPS",
    "Avg(us)",
    "Min(us)",
    "Max(us)",
    "50th(us)",
    "90th(us)",
    "95th(us)",
    "99th(us)",
    "99.9th(us)",
    "99.99th(us)",
];

/// The percentiles of go-ycsb's columns.
const PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// Writes go-ycsb's summary of `report` in `style`; nothing when the phase
/// measured no store call (as go-ycsb prints nothing for no rows).
///
/// # Errors
///
/// What writing to `out` returns.
pub fn write_go_summary(
    report: &PhaseReport,
    style: OutputStyle,
    out: &mut dyn Write,
) -> io::Result<()> {
    let rows = go_rows(report);
    if rows.is_empty() {
        return Ok(());
    }
    match style {
        OutputStyle::Plain => {
            for row in &rows {
                let fields: Vec<String> = HEADER[1..]
                    .iter()
                    .zip(&row[1..])
                    .map(|(name, value)| format!("{name}: {value}"))
                    .collect();
                writeln!(out, "{:<6} - {}", row[0], fields.join(", "))?;
            }
            Ok(())
        }
        OutputStyle::Table => write_table(&rows, out),
        OutputStyle::Json => {
            let objects: Vec<BTreeMap<&str, &str>> = rows
                .iter()
                .map(|row| {
                    HEADER
                        .iter()
                        .zip(row)
                        .map(|(name, value)| (*name, value.as_str()))
                        .collect()
                })
                .collect();
            // Go's encoding/json writes a map's keys sorted, as BTreeMap.
            let text = serde_json::to_string(&objects).map_err(io::Error::other)?;
            writeln!(out, "{text}")
        }
    }
}

/// One row's figures, merged over the sections go-ycsb counts as one.
struct GoRow {
    histogram: Histogram<u64>,
    count: u64,
    sum_ns: f64,
    min_ns: u64,
    max_ns: u64,
}

impl GoRow {
    fn new() -> Self {
        Self {
            histogram: Histogram::new(3).unwrap_or_else(|_| unreachable!("3 digits")),
            count: 0,
            sum_ns: 0.0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    fn add(&mut self, section: &SectionReport) {
        if section.operations == 0 {
            return;
        }
        if let Some(h) = section
            .histogram
            .as_deref()
            .and_then(|text| decode_histogram(text, &section.name).ok())
        {
            // Adding fails only if the counts array cannot grow.
            let _ = self.histogram.add(&h);
        }
        self.count += section.operations;
        self.sum_ns += section.average_ns * section.operations as f64;
        self.min_ns = self.min_ns.min(section.min_ns);
        self.max_ns = self.max_ns.max(section.max_ns);
    }

    fn cells(&self, name: &str, seconds: f64) -> Vec<String> {
        let mean_us = if self.count == 0 {
            0.0
        } else {
            self.sum_ns / self.count as f64 / 1_000.0
        };
        let min_ns = if self.count == 0 { 0 } else { self.min_ns };
        let ops = if seconds > 0.0 {
            self.count as f64 / seconds
        } else {
            0.0
        };
        let mut cells = vec![
            name.to_string(),
            format!("{seconds:.1}"),
            self.count.to_string(),
            format!("{ops:.1}"),
            // go-ycsb's int64(mean): truncated.
            (mean_us as u64).to_string(),
            (min_ns / 1_000).to_string(),
            (self.max_ns / 1_000).to_string(),
        ];
        for p in PERCENTILES {
            let ns = java_percentile(&self.histogram, p).clamp(min_ns, self.max_ns.max(min_ns));
            cells.push((ns / 1_000).to_string());
        }
        cells
    }
}

/// go-ycsb's rows of a phase, sorted by name as go-ycsb sorts them.
fn go_rows(report: &PhaseReport) -> Vec<Vec<String>> {
    // As go-ycsb's TOTAL: the calls as measured, the intended latencies
    // when only those are (measurement.interval=intended).
    let measured_intended = report.sections.iter().all(|s| s.intended);
    let mut rows: BTreeMap<String, GoRow> = BTreeMap::new();
    for section in report.sections.iter().filter(|s| {
        s.intended == measured_intended
            && !matches!(
                s.operation,
                Operation::Verify | Operation::Cleanup | Operation::ScanLatencyPerRecord
            )
    }) {
        let name = go_name(section);
        rows.entry(name).or_insert_with(GoRow::new).add(section);
        // A batched call's records are in their operations' rows already.
        if !section.failed
            && section.operation != Operation::ReadModifyWrite
            && !section.operation.is_batch()
        {
            rows.entry("TOTAL".to_string())
                .or_insert_with(GoRow::new)
                .add(section);
        }
    }
    let seconds = report.runtime_ns as f64 / 1e9;
    rows.iter()
        .filter(|(_, row)| row.count > 0)
        .map(|(name, row)| row.cells(name, seconds))
        .collect()
}

/// go-ycsb's name of a section: `READ_MODIFY_WRITE`, failures `READ_ERROR`
/// (with `reportlatencyforeacherror`, `READ_NOT_FOUND_ERROR`).
fn go_name(section: &SectionReport) -> String {
    let operation = section.operation.name().replace('-', "_");
    if !section.failed {
        return operation;
    }
    let status = section
        .name
        .rsplit_once('-')
        .map(|(_, status)| status)
        .filter(|status| *status != "FAILED");
    match status {
        Some(status) => format!("{operation}_{status}_ERROR"),
        None => format!("{operation}_ERROR"),
    }
}

/// go-ycsb's table (olekukonko/tablewriter 0.0.5's defaults): borders of
/// `+`, `-` and `|`, one space of padding, headers upper-cased and
/// centred, numbers right-aligned and text left-aligned.
fn write_table(rows: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .chain([HEADER[column].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line: String = widths.iter().fold("+".to_string(), |mut line, width| {
        line.push_str(&"-".repeat(width + 2));
        line.push('+');
        line
    });
    writeln!(out, "{line}")?;
    let mut heading = String::from("|");
    for (name, width) in HEADER.iter().zip(&widths) {
        let title = table_title(name);
        let gap = width.saturating_sub(title.chars().count());
        let left = gap / 2;
        heading.push_str(&format!(
            " {}{title}{} |",
            " ".repeat(left),
            " ".repeat(gap - left)
        ));
    }
    writeln!(out, "{heading}")?;
    writeln!(out, "{line}")?;
    for row in rows {
        let mut text = String::from("|");
        for (cell, width) in row.iter().zip(&widths) {
            if is_decimal(cell) {
                text.push_str(&format!(" {cell:>width$} |"));
            } else {
                text.push_str(&format!(" {cell:<width$} |"));
            }
        }
        writeln!(out, "{text}")?;
    }
    writeln!(out, "{line}")
}

/// tablewriter's `Title`: `_` becomes a space, a `.` too unless digits (or
/// spaces) stand on both sides, and the result is upper-cased.
fn table_title(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let digit_or_space = |c: char| c.is_ascii_digit() || c == ' ';
    let replaced: String = chars
        .iter()
        .enumerate()
        .map(|(i, &c)| match c {
            '_' => ' ',
            '.' if (i != 0 && !digit_or_space(chars[i - 1]))
                || (i != chars.len() - 1 && !digit_or_space(chars[i + 1])) =>
            {
                ' '
            }
            other => other,
        })
        .collect();
    replaced.trim().to_uppercase()
}

/// tablewriter's test for a right-aligned cell: a decimal number
/// (`-?(\d{1,3}(,\d{3})*|\d+)(\.\d+)?`).
fn is_decimal(cell: &str) -> bool {
    let digits = cell.strip_prefix('-').unwrap_or(cell);
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let whole_ok = all_digits(whole)
        || whole.split(',').enumerate().all(|(i, group)| {
            all_digits(group)
                && if i == 0 {
                    group.len() <= 3
                } else {
                    group.len() == 3
                }
        });
    whole_ok && fraction.is_none_or(all_digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::{MeasurementSettings, Measurements};
    use std::time::Duration;
    use ycsb_db::Status;

    /// A phase of 2 s: reads of 100..=1000 us in steps of 100 (ten), one
    /// failed read of 5 ms, four updates of 300 us.
    fn phase() -> PhaseReport {
        let measurements = Measurements::new(&MeasurementSettings::default(), 1);
        let mut recorder = measurements.recorder(0);
        for us in (100..=1_000).step_by(100) {
            recorder.record(Operation::Read, Status::Ok, us * 1_000);
        }
        recorder.record(Operation::Read, Status::NotFound, 5_000_000);
        for _ in 0..4 {
            recorder.record(Operation::Update, Status::Ok, 300_000);
        }
        recorder.record(Operation::Cleanup, Status::Ok, 1_000);
        drop(recorder);
        measurements.summary("run", Duration::from_secs(2), 15)
    }

    fn text(style: OutputStyle) -> String {
        let mut out = Vec::new();
        write_go_summary(&phase(), style, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn plain_is_go_ycsbs_line_per_operation_sorted_with_total() {
        assert_eq!(
            text(OutputStyle::Plain),
            "READ   - Takes(s): 2.0, Count: 10, OPS: 5.0, Avg(us): 550, Min(us): 100, Max(us): 1000, \
             50th(us): 500, 90th(us): 900, 95th(us): 1000, 99th(us): 1000, 99.9th(us): 1000, 99.99th(us): 1000\n\
             READ_ERROR - Takes(s): 2.0, Count: 1, OPS: 0.5, Avg(us): 5000, Min(us): 5000, Max(us): 5000, \
             50th(us): 5000, 90th(us): 5000, 95th(us): 5000, 99th(us): 5000, 99.9th(us): 5000, 99.99th(us): 5000\n\
             TOTAL  - Takes(s): 2.0, Count: 14, OPS: 7.0, Avg(us): 478, Min(us): 100, Max(us): 1000, \
             50th(us): 300, 90th(us): 900, 95th(us): 1000, 99th(us): 1000, 99.9th(us): 1000, 99.99th(us): 1000\n\
             UPDATE - Takes(s): 2.0, Count: 4, OPS: 2.0, Avg(us): 300, Min(us): 300, Max(us): 300, \
             50th(us): 300, 90th(us): 300, 95th(us): 300, 99th(us): 300, 99.9th(us): 300, 99.99th(us): 300\n"
        );
    }

    #[test]
    fn table_is_tablewriters_default_rendering() {
        let table = text(OutputStyle::Table);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 8, "{table}");
        assert_eq!(
            lines[1],
            "| OPERATION  | TAKES(S) | COUNT | OPS | AVG(US) | MIN(US) | MAX(US) | 50TH(US) | 90TH(US) | 95TH(US) | 99TH(US) | 99.9TH(US) | 99.99TH(US) |"
        );
        assert_eq!(
            lines[3],
            "| READ       |      2.0 |    10 | 5.0 |     550 |     100 |    1000 |      500 |      900 |     1000 |     1000 |       1000 |        1000 |"
        );
        assert_eq!(lines[0], lines[2]);
        assert_eq!(lines[0], lines[7]);
        assert!(
            lines[0].starts_with("+------------+----------+-------+"),
            "{table}"
        );
        assert!(lines[4].starts_with("| READ_ERROR |"), "{table}");
    }

    #[test]
    fn json_is_one_line_of_objects_with_sorted_keys() {
        let json = text(OutputStyle::Json);
        assert!(
            json.ends_with("}]\n") && json.lines().count() == 1,
            "{json}"
        );
        assert!(
            json.starts_with(
                "[{\"50th(us)\":\"500\",\"90th(us)\":\"900\",\"95th(us)\":\"1000\",\"99.99th(us)\":\"1000\",\
                 \"99.9th(us)\":\"1000\",\"99th(us)\":\"1000\",\"Avg(us)\":\"550\",\"Count\":\"10\",\
                 \"Max(us)\":\"1000\",\"Min(us)\":\"100\",\"OPS\":\"5.0\",\"Operation\":\"READ\",\"Takes(s)\":\"2.0\"}"
            ),
            "{json}"
        );
        let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
        let names: Vec<&str> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["Operation"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["READ", "READ_ERROR", "TOTAL", "UPDATE"]);
    }

    #[test]
    fn tablewriter_titles_and_numbers() {
        assert_eq!(table_title("99.9th(us)"), "99.9TH(US)");
        assert_eq!(table_title("Takes(s)"), "TAKES(S)");
        assert_eq!(table_title("a_b.c"), "A B C");
        for number in ["0", "12", "1,234", "2.0", "-3.5", "1000"] {
            assert!(is_decimal(number), "{number}");
        }
        for text in ["READ", "1,23", "", "1.", ".5", "1e3"] {
            assert!(!is_decimal(text), "{text}");
        }
    }

    #[test]
    fn a_phase_without_store_calls_prints_nothing() {
        let measurements = Measurements::new(&MeasurementSettings::default(), 1);
        let report = measurements.summary("run", Duration::from_secs(1), 0);
        let mut out = Vec::new();
        write_go_summary(&report, OutputStyle::Table, &mut out).unwrap();
        assert!(out.is_empty());
    }
}
