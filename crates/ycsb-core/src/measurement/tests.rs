//! Tests of recording, merging, report formats and export files.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use ycsb_db::{Origin, Properties, PropertyError, Status, REDACTED};

use super::*;
use ycsb_results::{
    MeasurementType, Operation, PercentileLatency, PhaseReport, ReportFormat, RunReport,
    SectionReport, StatusCount,
};

fn settings(interval: MeasurementInterval) -> MeasurementSettings {
    MeasurementSettings {
        interval,
        ..MeasurementSettings::default()
    }
}

fn section<'a>(report: &'a PhaseReport, name: &str) -> &'a SectionReport {
    report
        .sections
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no section {name} in {report:#?}"))
}

fn returns(section: &SectionReport) -> Vec<(&str, u64)> {
    section
        .returns
        .iter()
        .map(|r| (r.status.as_str(), r.count))
        .collect()
}

// ---------------------------------------------------------------- operations

#[test]
fn measurements_are_shared_and_recorders_move_to_threads() {
    fn shared<T: Send + Sync>() {}
    fn movable<T: Send>() {}
    shared::<Measurements>();
    movable::<Recorder>();
}

#[test]
fn operations_are_in_report_order_with_java_names() {
    let names: Vec<_> = Operation::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(
        names,
        [
            "READ",
            "UPDATE",
            "INSERT",
            "SCAN",
            "SCAN-LATENCY-PER-RECORD",
            "READ-MODIFY-WRITE",
            "DELETE",
            "VERIFY",
            "CLEANUP",
            "BATCH_READ",
            "BATCH_UPDATE",
            "BATCH_INSERT",
            "BATCH_DELETE"
        ]
    );
    for (i, op) in Operation::ALL.iter().enumerate() {
        assert_eq!(op.index(), i);
        assert_eq!(op.intended_name(), format!("Intended-{}", op.name()));
    }
    assert_eq!(Operation::COUNT, 13);
}

// ------------------------------------------------------------------ settings

#[test]
fn settings_defaults_match_the_declarations() {
    let s = MeasurementSettings::from_properties(&Properties::new()).unwrap();
    assert_eq!(s, MeasurementSettings::default());
    assert_eq!(s.publish_period(), Duration::from_millis(100));
    let names: Vec<_> = PROPERTIES.iter().map(|d| d.name).collect();
    assert_eq!(
        names,
        [
            "hdrhistogram.percentiles",
            "measurement.interval",
            "status.interval",
            "status.gauges",
            "exporter",
            "exportfile",
            "measurementtype",
            "histogram.buckets",
            "measurement.histogram.verbose",
            "measurement.raw.output_file",
            "measurement.raw.no_summary",
            "measurement.output_file",
            "reportlatencyforeacherror",
            "latencytrackederrors",
            "outputstyle",
            "hdrhistogram.fileoutput",
            "hdrhistogram.output.path"
        ]
    );
}

#[test]
fn settings_accept_java_names() {
    let props = Properties::new()
        .with(
            "exporter",
            "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter",
        )
        .with("measurement.interval", "both")
        .with("status.interval", "0.5")
        .with("hdrhistogram.percentiles", "90, 99.99")
        .with("exportfile", "out/report.txt")
        .with("measurementtype", "hdrhistogram");
    let s = MeasurementSettings::from_properties(&props).unwrap();
    assert_eq!(s.exporter, ExporterKind::JavaJsonArray);
    assert_eq!(s.interval, MeasurementInterval::Both);
    assert_eq!(s.status_interval, Duration::from_millis(500));
    assert_eq!(s.publish_period(), Duration::from_millis(50));
    assert_eq!(s.percentiles, [90.0, 99.99]);
    assert_eq!(s.export_file.as_deref(), Some(Path::new("out/report.txt")));
    for (name, kind) in [
        (
            "site.ycsb.measurements.exporter.TextMeasurementsExporter",
            ExporterKind::Text,
        ),
        (
            "site.ycsb.measurements.exporter.JSONMeasurementsExporter",
            ExporterKind::JavaJson,
        ),
        ("jsonarray", ExporterKind::JsonArray),
        ("json", ExporterKind::Json),
    ] {
        let props = Properties::new().with("exporter", name);
        assert_eq!(
            MeasurementSettings::from_properties(&props)
                .unwrap()
                .exporter,
            kind
        );
    }
}

#[test]
fn settings_errors_name_value_and_origin() {
    let err = |key: &str, value: &str| {
        let mut props = Properties::new();
        props.set(key, value, Origin::Flag("-p"));
        MeasurementSettings::from_properties(&props)
            .unwrap_err()
            .to_string()
    };
    let hdr = err("measurementtype", "hdr");
    assert!(
        hdr.starts_with("measurementtype: invalid value 'hdr' (-p flag): expected one of"),
        "{hdr}"
    );
    assert!(err("histogram.buckets", "0").contains("between 1 and"));
    assert!(err("latencytrackederrors", "NOT_FOUND,TIMEOUT").contains("'TIMEOUT' is not a status"));
    assert!(err("timeseries.granularity", "5").contains("milliseconds"));
    assert_eq!(
        err("hdrhistogram.percentiles", "50,abc"),
        "hdrhistogram.percentiles: invalid value '50,abc' (-p flag): 'abc' is not a percentile above 0 and at most 100"
    );
    assert!(err("hdrhistogram.percentiles", "0").contains("'0' is not a percentile"));
    assert!(err("hdrhistogram.percentiles", "100.5").contains("'100.5' is not a percentile"));
    assert_eq!(
        err("status.interval", "0"),
        "status.interval: invalid value '0' (-p flag): expected a number of seconds above 0"
    );
    assert!(err("measurement.interval", "all").starts_with(
        "measurement.interval: invalid value 'all' (-p flag): expected one of op, intended, both"
    ));
    assert!(err("exporter", "xml").contains("expected one of text, json, jsonarray"));
    let mut props = Properties::new();
    props.set("status.interval", "ten", Origin::Flag("-p"));
    assert!(matches!(
        MeasurementSettings::from_properties(&props),
        Err(PropertyError::Invalid { .. })
    ));
}

// ------------------------------------------------------ recording and merging

#[test]
fn threads_merge_with_exact_counts_and_precise_percentiles() {
    const N: u64 = 100_000;
    const THREADS: u64 = 4;
    let measurements = Arc::new(Measurements::new(
        &MeasurementSettings::default(),
        THREADS as usize,
    ));
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let measurements = &measurements;
            scope.spawn(move || {
                let mut recorder = measurements.recorder(t as usize);
                // The threads together record 1..=N microseconds, each
                // value once; every tenth is NOT_FOUND.
                for us in (1..=N).filter(|us| us % THREADS == t) {
                    // BATCHED_OK succeeds: its latency stays in READ.
                    let status = if us % 10 == 0 {
                        Status::BatchedOk
                    } else {
                        Status::Ok
                    };
                    recorder.record(Operation::Read, status, us * 1_000);
                    recorder.publish_if_due(Instant::now());
                }
            });
        }
    });
    let report = measurements.summary("run", Duration::from_secs(2), N);
    assert_eq!(report.sections.len(), 1);
    let read = section(&report, "READ");
    assert_eq!(read.operations, N);
    assert_eq!(returns(read), [("OK", 90_000), ("BATCHED_OK", 10_000)]);
    assert_eq!((read.min_us, read.max_us), (1, N));
    assert_eq!((read.min_ns, read.max_ns), (1_000, N * 1_000));
    // The mean is exact: (1 + N) / 2 microseconds.
    assert_eq!(read.average_us, 50_000.5);
    // Java: 1000 * operations / RunTime(ms) = 1000 * 100000 / 2000.
    assert_eq!(report.throughput, 50_000.0);
    let percentiles: Vec<f64> = read.percentiles.iter().map(|p| p.percentile).collect();
    assert_eq!(percentiles, [50.0, 95.0, 99.0, 99.9]);
    for p in &read.percentiles {
        // The p-th percentile of 1..=N us is p/100 * N us. HdrHistogram
        // with 3 significant digits reports a bucket's highest equivalent
        // value, at most 0.1 % above the true one, never below it.
        let exact_ns = (p.percentile / 100.0 * N as f64) as u64 * 1_000;
        assert!(
            p.ns >= exact_ns && p.ns <= exact_ns + exact_ns / 1_000,
            "p{}: {} ns, exact {} ns",
            p.percentile,
            p.ns,
            exact_ns
        );
        assert_eq!(p.us, p.ns / 1_000);
    }
}

#[test]
fn percentile_ranks_round_up_without_roundoff() {
    let settings = MeasurementSettings {
        percentiles: vec![0.01, 10.0, 21.0, 50.0, 99.9, 100.0],
        ..MeasurementSettings::default()
    };
    let measurements = Measurements::new(&settings, 1);
    let mut recorder = measurements.recorder(0);
    for us in 1..=10 {
        recorder.record(Operation::Scan, Status::Ok, us * 1_000);
    }
    drop(recorder);
    let report = measurements.summary("run", Duration::from_secs(1), 10);
    let values: Vec<_> = section(&report, "SCAN")
        .percentiles
        .iter()
        .map(|p| p.us)
        .collect();
    // The value at p is the ceil(p/100 * n)-th smallest: 21 % of 10 values
    // is 2.1, so the third.
    assert_eq!(values, [1, 1, 3, 5, 10, 10]);
}

#[test]
fn intervals_count_each_operation_once() {
    let measurements = Measurements::new(&MeasurementSettings::default(), 2);
    let mut a = measurements.recorder(0);
    let mut b = measurements.recorder(1);
    for i in 0..100 {
        a.record(Operation::Insert, Status::Ok, 10_000 + i);
    }
    for _ in 0..30 {
        b.record(Operation::Insert, Status::Error, 50_000);
    }
    a.publish();
    b.publish();
    let first = measurements.take_interval();
    // Java's DBWrapper: failed inserts' latencies in INSERT-FAILED, their
    // statuses counted under INSERT.
    assert_eq!(first.sections.len(), 2);
    let insert = &first.sections[0];
    assert_eq!((insert.name, insert.count), ("INSERT", 100));
    assert_eq!((insert.min_us, insert.max_us), (10, 10));
    assert_eq!(insert.returns[Status::Ok.index()], 100);
    assert_eq!(insert.returns[Status::Error.index()], 30);
    let failed = &first.sections[1];
    assert_eq!(
        (failed.name, failed.count, failed.failed),
        ("INSERT-FAILED", 30, true)
    );
    assert_eq!((failed.min_us, failed.max_us), (50, 50));
    assert_eq!(failed.returns, [0; Status::COUNT]);
    assert_eq!(first.operations(), 130);

    for _ in 0..7 {
        a.record(Operation::Update, Status::Ok, 3_000);
    }
    a.publish();
    let second = measurements.take_interval();
    let names: Vec<_> = second.sections.iter().map(|s| (s.name, s.count)).collect();
    // INSERT stays listed, idle, as in Java's status line.
    assert_eq!(names, [("UPDATE", 7), ("INSERT", 0), ("INSERT-FAILED", 0)]);
    assert_eq!(second.sections[1].mean_us, 0.0);
    assert_eq!(second.operations(), 7);

    let third = measurements.take_interval();
    assert_eq!(third.operations(), 0);

    // Unpublished data reaches the summary once the recorder is dropped.
    b.record(Operation::Insert, Status::Ok, 1_000);
    drop(b);
    drop(a);
    let report = measurements.summary("load", Duration::from_secs(1), 138);
    assert_eq!(section(&report, "INSERT").operations, 101);
    assert_eq!(section(&report, "INSERT-FAILED").operations, 30);
    assert_eq!(section(&report, "UPDATE").operations, 7);
    assert_eq!(
        returns(section(&report, "INSERT")),
        [("OK", 101), ("ERROR", 30)]
    );
}

#[test]
fn a_status_line_before_the_first_tick_leaves_its_operations_to_the_ticks() {
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    measurements.start_ticking();
    let mut recorder = measurements.recorder(0);
    for _ in 0..5 {
        recorder.record(Operation::Read, Status::Ok, 1_000);
    }
    recorder.publish();
    // Java's first status line, at 0 seconds, comes before any tick.
    assert_eq!(measurements.take_interval().operations(), 0);
    let tick = measurements.take_tick();
    assert_eq!(tick.sections.iter().map(|s| s.operations()).sum::<u64>(), 5);
    assert_eq!(measurements.take_interval().operations(), 5);
}

#[test]
fn publish_if_due_publishes_only_after_the_period() {
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    let mut recorder = measurements.recorder(0);
    let later = Instant::now() + Duration::from_secs(1);
    recorder.record(Operation::Read, Status::Ok, 1_000);
    recorder.publish_if_due(later);
    assert_eq!(measurements.take_interval().sections[0].count, 1);
    // The next deadline is a publish period after `later`.
    recorder.record(Operation::Read, Status::Ok, 1_000);
    recorder.publish_if_due(later + Duration::from_millis(50));
    assert_eq!(measurements.take_interval().sections[0].count, 0);
    recorder.publish_if_due(later + Duration::from_millis(100));
    assert_eq!(measurements.take_interval().sections[0].count, 1);
}

#[test]
fn intended_mode_names_sections_like_java() {
    let record = |mode| {
        let measurements = Measurements::new(&settings(mode), 1);
        let mut recorder = measurements.recorder(0);
        recorder.record(Operation::Read, Status::Ok, 5_000);
        recorder.record_intended(Operation::Read, Status::Ok, 9_000);
        drop(recorder);
        measurements.summary("run", Duration::from_secs(1), 1)
    };

    let op = record(MeasurementInterval::Op);
    assert_eq!(op.sections.len(), 1);
    assert_eq!(section(&op, "READ").max_us, 5);

    // intended: the plain name carries the intended latency and statuses.
    let intended = record(MeasurementInterval::Intended);
    assert_eq!(intended.sections.len(), 1);
    let read = section(&intended, "READ");
    assert!(read.intended);
    assert_eq!((read.operations, read.max_us), (1, 9));
    assert_eq!(returns(read), [("OK", 1)]);

    let both = record(MeasurementInterval::Both);
    let names: Vec<_> = both.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["READ", "Intended-READ"]);
    assert_eq!(section(&both, "READ").max_us, 5);
    assert_eq!(returns(section(&both, "READ")), [("OK", 1)]);
    assert_eq!(section(&both, "Intended-READ").max_us, 9);
    assert!(section(&both, "Intended-READ").returns.is_empty());
}

#[test]
fn sixteen_threads_stay_far_below_64_mib() {
    let measurements = Measurements::new(&settings(MeasurementInterval::Both), 16);
    let mut recorders: Vec<_> = (0..16).map(|t| measurements.recorder(t)).collect();
    // Latencies from 100 ns to 10 s make every histogram grow to its
    // largest realistic size: about 100 KiB with 32-bit counts, two per
    // thread and section (local and published), 14 MiB in all for this
    // worst case of two operations with intended latency; one operation
    // type without intended latency and a 100 ms maximum needs a sixth.
    let latencies: Vec<u64> = (0..=80)
        .map(|i| (100.0 * 10f64.powf(i as f64 / 10.0)) as u64)
        .collect();
    for recorder in &mut recorders {
        for &ns in &latencies {
            for op in [Operation::Read, Operation::Update] {
                recorder.record(op, Status::Ok, ns);
                recorder.record_intended(op, Status::Ok, ns);
            }
        }
        recorder.publish();
        // Refill the local histograms so both copies per thread exist.
        for &ns in &latencies {
            for op in [Operation::Read, Operation::Update] {
                recorder.record(op, Status::Ok, ns);
                recorder.record_intended(op, Status::Ok, ns);
            }
        }
    }
    let _ = measurements.take_interval();
    for recorder in &mut recorders {
        recorder.publish();
    }
    let total: usize = measurements.histogram_bytes()
        + recorders.iter().map(|r| r.histogram_bytes()).sum::<usize>();
    assert!(total > 0);
    assert!(total < 16 << 20, "{} MiB", total >> 20);
}

// ----------------------------------------------------------- number formats

#[test]
fn java_number_formats() {
    assert_eq!(java_double(47865.21156423511), "47865.21156423511");
    assert_eq!(java_double(1000.0), "1000.0");
    assert_eq!(java_double(1e7), "10000000.0");
    assert_eq!(java_double(0.1), "0.1");
    assert_eq!(java_double(0.0), "0.0");
    assert_eq!(java_double(f64::NAN), "NaN");
    assert_eq!(java_double(f64::INFINITY), "Infinity");

    assert_eq!(java_decimal(29719.528047195), "29719.53");
    assert_eq!(java_decimal(244.145), "244.15");
    // DecimalFormat("#.##") keeps one integer digit: 0.5, not .5.
    assert_eq!(java_decimal(0.125), "0.12"); // a tie: half-even
    assert_eq!(java_decimal(0.375), "0.38");
    assert_eq!(java_decimal(0.5), "0.5");
    assert_eq!(java_decimal(0.59), "0.59");
    assert_eq!(java_decimal(-0.5), "-0.5");
    assert_eq!(java_decimal(0.001), "0");
    assert_eq!(java_decimal(0.0), "0");
    assert_eq!(java_decimal(2.0), "2");
    assert_eq!(java_decimal(2.10), "2.1");
    assert_eq!(java_decimal(1234567.891), "1234567.89");

    for (p, name) in [
        (50.0, "50th"),
        (1.0, "1st"),
        (2.0, "2nd"),
        (3.0, "3rd"),
        (11.0, "11th"),
        (12.0, "12th"),
        (13.0, "13th"),
        (21.0, "21st"),
        (95.0, "95th"),
        (100.0, "100th"),
        (99.9, "99.9"),
        (99.99, "99.99"),
    ] {
        assert_eq!(java_ordinal(p), name);
    }
}

#[test]
fn remaining_time_as_java() {
    for (seconds, text) in [
        // Java tests the length of its text so far: one digit is
        // "second", two are "seconds".
        (0, "0 second "),
        (1, "1 second "),
        (3, "3 second "),
        (9, "9 second "),
        (10, "10 seconds "),
        (59, "59 seconds "),
        (60, "1 minute "),
        (91, "1 minute "),
        (150, "2 minutes "),
        (3_600, "1 hour "),
        (3_661, "1 hour 1 minute "),
        (7_322, "2 hours 2 minutes "),
        (86_400, "1 day "),
        (90_061, "1 day 1 hour "),
        (2 * 86_400 + 120, "2 days "),
    ] {
        assert_eq!(remaining_text(seconds), text, "{seconds} s");
    }
}

// --------------------------------------------------------------- status line

fn reference_time() -> chrono::NaiveDateTime {
    NaiveDate::from_ymd_opt(2021, 4, 24)
        .and_then(|d| d.and_hms_milli_opt(11, 57, 4, 722))
        .unwrap()
}

#[test]
fn status_line_matches_the_reference_example() {
    let mut returns = [0; Status::COUNT];
    returns[Status::Ok.index()] = 297_276;
    let snapshot = IntervalSnapshot {
        sections: vec![IntervalSection {
            name: "INSERT",
            operation: Operation::Insert,
            intended: false,
            failed: false,
            count: 297_276,
            min_us: 85,
            max_us: 75_647,
            mean_us: 244.1512,
            p50_us: 201,
            p90_us: 310,
            p99_us: 508,
            p999_us: 1_792,
            p9999_us: 18_335,
            returns,
        }],
        histograms: vec![],
    };
    let line = StatusLine {
        label: "",
        now: reference_time(),
        elapsed: Duration::from_millis(10_001),
        total_operations: 297_225,
        interval_operations: 297_225,
        interval: Duration::from_millis(10_001),
        // 91 seconds at 29719.53 ops/sec: "1 minute".
        remaining_operations: 2_702_775,
    };
    assert_eq!(
        format_status_line(&line, &snapshot),
        "2021-04-24 11:57:04:722 10 sec: 297225 operations; 29719.53 current ops/sec; \
         est completion in 1 minute [INSERT: Count=297276, Max=75647, Min=85, Avg=244.15, \
         50=201, 90=310, 99=508, 99.9=1792, 99.99=18335]"
    );

    // No estimate when the run has no fixed end, no throughput before the
    // first operation, and a label in front of the time.
    let done = StatusLine {
        remaining_operations: 0,
        ..line.clone()
    };
    assert!(format_status_line(&done, &snapshot)
        .contains("29719.53 current ops/sec; [INSERT: Count=297276,"));
    let idle = StatusLine {
        label: "exp1 ",
        elapsed: Duration::from_millis(999),
        total_operations: 0,
        interval_operations: 0,
        ..line
    };
    assert_eq!(
        format_status_line(
            &idle,
            &IntervalSnapshot {
                sections: vec![],
                histograms: vec![]
            }
        ),
        "exp1 2021-04-24 11:57:04:722 0 sec: 0 operations;"
    );
}

#[test]
fn status_line_from_recorded_intervals() {
    let measurements = Measurements::new(&settings(MeasurementInterval::Both), 1);
    let mut recorder = measurements.recorder(0);
    for us in 1..=1_000 {
        recorder.record(Operation::Read, Status::Ok, us * 1_000);
        recorder.record_intended(Operation::Read, Status::Ok, us * 1_000 + 500);
    }
    recorder.publish();
    let snapshot = measurements.take_interval();
    let line = StatusLine {
        label: "",
        now: reference_time(),
        elapsed: Duration::from_secs(20),
        total_operations: 2_000,
        interval_operations: 1_000,
        interval: Duration::from_secs(10),
        remaining_operations: 0,
    };
    // Up to 1 ms HdrHistogram's buckets are at most 512 ns wide, and these
    // values sit low enough in theirs that the microsecond figures are
    // exact.
    assert_eq!(
        format_status_line(&line, &snapshot),
        "2021-04-24 11:57:04:722 20 sec: 2000 operations; 100 current ops/sec; \
         [READ: Count=1000, Max=1000, Min=1, Avg=500.5, 50=500, 90=900, 99=990, 99.9=999, 99.99=1000] \
         [Intended-READ: Count=1000, Max=1000, Min=1, Avg=501, 50=500, 90=900, 99=990, 99.9=999, 99.99=1000]"
    );
}

#[test]
fn status_line_has_javas_median_small_averages_and_seconds() {
    // Two reads of 0 and 1 us: Avg=0.5 (DecimalFormat "#.##" keeps the
    // 0), the median is the first of them.
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    let mut recorder = measurements.recorder(0);
    recorder.record(Operation::Read, Status::Ok, 300);
    recorder.record(Operation::Read, Status::Ok, 1_000);
    recorder.publish();
    let snapshot = measurements.take_interval();
    let line = StatusLine {
        label: "",
        now: reference_time(),
        elapsed: Duration::from_secs(1),
        total_operations: 2,
        interval_operations: 2,
        interval: Duration::from_secs(1),
        // 6 more at 2 ops/s: Java's "3 second" (one digit, singular).
        remaining_operations: 6,
    };
    assert_eq!(
        format_status_line(&line, &snapshot),
        "2021-04-24 11:57:04:722 1 sec: 2 operations; 2 current ops/sec; est completion in 3 second \
         [READ: Count=2, Max=1, Min=0, Avg=0.65, 50=0, 90=1, 99=1, 99.9=1, 99.99=1]"
    );
}

#[test]
fn percentiles_never_pass_the_exact_extremes() {
    // 21.781 ms falls in a bucket whose value is 21.789 ms: read off the
    // bucket, every percentile would stand above Max=21781.
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    let mut recorder = measurements.recorder(0);
    for _ in 0..3 {
        recorder.record(Operation::Update, Status::Ok, 21_781_000);
    }
    recorder.publish();
    let snapshot = measurements.take_interval();
    let update = &snapshot.sections[0];
    assert_eq!((update.min_us, update.max_us), (21_781, 21_781));
    assert_eq!(
        [
            update.p50_us,
            update.p90_us,
            update.p99_us,
            update.p999_us,
            update.p9999_us
        ],
        [21_781; 5]
    );
    drop(recorder);
    let report = measurements.summary("run", Duration::from_secs(1), 3);
    let update = section(&report, "UPDATE");
    assert_eq!(update.max_us, 21_781);
    for p in &update.percentiles {
        assert_eq!((p.ns, p.us), (21_781_000, 21_781), "p{}", p.percentile);
    }
    let text = java_text(&report);
    assert!(
        text.contains("[UPDATE], 99.9PercentileLatency(us), 21781\n"),
        "{text}"
    );
}

// ------------------------------------------------------------------- reports

fn golden_phase() -> PhaseReport {
    let section =
        |name: &str, op, intended, operations, average_us, min_us, max_us, pct: [u64; 4]| {
            SectionReport {
                name: name.to_string(),
                operation: op,
                intended,
                operations,
                average_us,
                min_us,
                max_us,
                average_ns: average_us * 1_000.0,
                min_ns: min_us * 1_000,
                max_ns: max_us * 1_000,
                percentiles: [50.0, 95.0, 99.0, 99.9]
                    .into_iter()
                    .zip(pct)
                    .map(|(percentile, us)| PercentileLatency {
                        percentile,
                        us,
                        ns: us * 1_000,
                    })
                    .collect(),
                returns: Vec::new(),
                histogram: None,
                failed: false,
                java: None,
            }
        };
    let mut read = section(
        "READ",
        Operation::Read,
        false,
        499_304,
        1657.34,
        78,
        1_483_188,
        [1_200, 4_000, 7_000, 21_000],
    );
    read.returns = vec![
        StatusCount {
            status: Status::Ok.name().to_string(),
            count: 499_300,
        },
        StatusCount {
            status: Status::NotFound.name().to_string(),
            count: 4,
        },
    ];
    let mut update = section(
        "UPDATE",
        Operation::Update,
        false,
        500_696,
        2_000.0,
        90,
        2_000_000,
        [1_500, 5_000, 8_000, 30_000],
    );
    update.returns = vec![StatusCount {
        status: Status::Ok.name().to_string(),
        count: 500_696,
    }];
    let intended = section(
        "Intended-READ",
        Operation::Read,
        true,
        499_304,
        1700.5,
        80,
        1_483_190,
        [1_300, 4_100, 7_100, 21_100],
    );
    PhaseReport {
        phase: "run".to_string(),
        runtime_ms: 20_892,
        runtime_ns: 20_892_000_000,
        operations: 1_000_000,
        // Java: 1000 * operations / RunTime(ms).
        throughput: 1000.0 * 1_000_000.0 / 20_892.0,
        sections: vec![read, update, intended],
        format: ReportFormat::default(),
        observation: None,
    }
}

const GOLDEN_TEXT: &str = "\
[OVERALL], RunTime(ms), 20892
[OVERALL], Throughput(ops/sec), 47865.21156423511
[READ], Operations, 499304
[READ], AverageLatency(us), 1657.34
[READ], MinLatency(us), 78
[READ], MaxLatency(us), 1483188
[READ], 50thPercentileLatency(us), 1200
[READ], 95thPercentileLatency(us), 4000
[READ], 99thPercentileLatency(us), 7000
[READ], 99.9PercentileLatency(us), 21000
[READ], Return=OK, 499300
[READ], Return=NOT_FOUND, 4
[UPDATE], Operations, 500696
[UPDATE], AverageLatency(us), 2000.0
[UPDATE], MinLatency(us), 90
[UPDATE], MaxLatency(us), 2000000
[UPDATE], 50thPercentileLatency(us), 1500
[UPDATE], 95thPercentileLatency(us), 5000
[UPDATE], 99thPercentileLatency(us), 8000
[UPDATE], 99.9PercentileLatency(us), 30000
[UPDATE], Return=OK, 500696
[Intended-READ], Operations, 499304
[Intended-READ], AverageLatency(us), 1700.5
[Intended-READ], MinLatency(us), 80
[Intended-READ], MaxLatency(us), 1483190
[Intended-READ], 50thPercentileLatency(us), 1300
[Intended-READ], 95thPercentileLatency(us), 4100
[Intended-READ], 99thPercentileLatency(us), 7100
[Intended-READ], 99.9PercentileLatency(us), 21100
";

fn golden_report() -> RunReport {
    let mut props = Properties::new();
    props.set(
        "recordcount",
        "1000",
        Origin::File {
            path: Arc::from(Path::new("workloads/workloada")),
            line: 3,
        },
    );
    props.set("redis.password", "hunter2", Origin::Flag("-p"));
    let args = ["ycsb", "run", "redis", "-p", "redis.password=hunter2", "-s"];
    let mut metadata = run_metadata(
        "ycsb-rs",
        "0.1.0",
        args.iter().map(|a| a.to_string()),
        PROPERTIES,
    );
    metadata.git_revision = Some("abc123".to_string());
    let mut load = golden_phase();
    load.phase = "load".to_string();
    load.sections.truncate(1);
    RunReport {
        schema_version: ycsb_results::SCHEMA_VERSION,
        metadata,
        config: effective_config(&props, PROPERTIES),
        phases: vec![load, golden_phase()],
        engine_reports: Vec::new(),
    }
}

#[test]
fn text_report_is_javas_format() {
    let mut out = Vec::new();
    TextExporter::new(&mut out)
        .write_phase(&golden_phase())
        .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), GOLDEN_TEXT);
}

#[test]
fn text_report_separates_phases_and_leaves_out_metadata() {
    let report = golden_report();
    let mut out = Vec::new();
    new_exporter(ExporterKind::Text, Box::new(&mut out))
        .export(&report)
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    let (load, run) = text.split_once("\n\n").unwrap();
    assert!(load.starts_with("[OVERALL], RunTime(ms), 20892\n"));
    assert!(load.ends_with("[READ], Return=NOT_FOUND, 4"));
    assert_eq!(run, GOLDEN_TEXT);
    assert!(!text.contains("hunter2"));
}

#[test]
fn summary_throughput_and_text_agree_with_java() {
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    let report = measurements.summary("run", Duration::from_millis(20_892), 1_000_000);
    assert_eq!((report.runtime_ms, report.sections.len()), (20_892, 0));
    let mut out = Vec::new();
    TextExporter::new(&mut out).write_phase(&report).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "[OVERALL], RunTime(ms), 20892\n[OVERALL], Throughput(ops/sec), 47865.21156423511\n"
    );
    // Java divides by the whole milliseconds it prints, not the exact
    // runtime: 3 operations in 1.9 ms are 1000 * 3 / 1 = 3000 ops/sec
    // (the exact rate would be 1578.9).
    let short = measurements.summary("run", Duration::from_micros(1_900), 3);
    assert_eq!(
        (short.runtime_ms, short.throughput),
        (1, 1000.0 * 3.0 / 1.0)
    );
    // Below 1 ms Java divides by zero (Infinity); we report 0.
    let zero = measurements.summary("run", Duration::from_micros(900), 5);
    assert_eq!(zero.throughput, 0.0);
}

/// Writes `report` with the JSON exporter.
fn json_export(report: &RunReport) -> Vec<u8> {
    let mut out = Vec::new();
    JsonExporter::new(&mut out).export(report).unwrap();
    out
}

#[test]
fn json_export_round_trips_through_the_typed_reader() {
    let mut report = golden_report();
    report.phases[1].observation = Some(ycsb_results::PhaseObservation {
        granularity_s: 1.0,
        start_unix_ms: 1_795_993_319_000,
        warmup: None,
        series: vec![ycsb_results::SeriesRow::empty(1.0, 1.0, false)],
        stability: None,
        amplification: ycsb_results::Amplification::new(10.0, 20.0, Some(30), None),
        gauge_kinds: [("x.cache-bytes".to_string(), ycsb_db::GaugeKind::Bytes)].into(),
    });
    let written = json_export(&report);
    let text = String::from_utf8(written.clone()).unwrap();
    assert!(
        text.starts_with("{\n  \"schema_version\": 1,\n  \"metadata\""),
        "{text}"
    );
    let read = ycsb_results::read_export(&written[..]).unwrap();
    assert_eq!(read, report);
    assert_eq!(json_export(&read), written);
}

#[test]
fn an_export_older_than_the_schema_version_is_written_back_unchanged_but_for_it() {
    // Written by the ycsb binary of 028fdfb, the last without the field.
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ycsb-results/tests/fixtures/export-028fdfb-run.json"
    );
    let old = std::fs::read_to_string(fixture).unwrap();
    let read = ycsb_results::read_export(old.as_bytes()).unwrap();
    let expected = old.replacen("{\n", "{\n  \"schema_version\": 1,\n", 1);
    assert_eq!(String::from_utf8(json_export(&read)).unwrap(), expected);
}

#[test]
fn json_report_is_one_document_with_figures_and_no_secret() {
    let report = golden_report();
    let mut out = Vec::new();
    new_exporter(ExporterKind::Json, Box::new(&mut out))
        .export(&report)
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();

    assert_eq!(json["metadata"]["tool"], "ycsb-rs");
    assert_eq!(json["metadata"]["git_revision"], "abc123");
    assert_eq!(
        json["metadata"]["command_line"][4],
        "redis.password=<redacted>"
    );
    assert!(
        chrono::DateTime::parse_from_rfc3339(json["metadata"]["start_time"].as_str().unwrap())
            .is_ok()
    );

    let config = json["config"].as_array().unwrap();
    let entry = |key: &str| config.iter().find(|e| e["key"] == key).cloned().unwrap();
    assert_eq!(entry("redis.password")["value"], REDACTED);
    assert_eq!(entry("recordcount")["origin"], "workloads/workloada:3");
    assert_eq!(entry("hdrhistogram.percentiles")["value"], "50,95,99,99.9");
    assert_eq!(entry("hdrhistogram.percentiles")["origin"], "default");

    let run = &json["phases"][1];
    assert_eq!(run["phase"], "run");
    assert_eq!(run["runtime_ms"], 20_892);
    assert_eq!(run["operations"], 1_000_000);
    assert_eq!(run["throughput"], 47865.21156423511);
    let read = &run["sections"][0];
    assert_eq!(read["name"], "READ");
    assert_eq!(read["operation"], "READ");
    assert_eq!(read["average_us"], 1657.34);
    assert_eq!(read["max_ns"], 1_483_188_000u64);
    assert_eq!(read["percentiles"][3]["percentile"], 99.9);
    assert_eq!(read["percentiles"][3]["us"], 21_000);
    assert_eq!(read["returns"][1]["status"], "NOT_FOUND");
    assert_eq!(read["returns"][1]["count"], 4);

    let measurements = run["measurements"].as_array().unwrap();
    assert_eq!(measurements.len(), GOLDEN_TEXT.lines().count());
    assert_eq!(
        measurements[2],
        serde_json::json!({"metric": "READ", "measurement": "Operations", "value": 499304})
    );
    assert!(measurements.contains(&serde_json::json!(
        {"metric": "Intended-READ", "measurement": "99.9PercentileLatency(us)", "value": 21100}
    )));
}

#[test]
fn json_array_report_is_javas_array_with_phases() {
    let report = golden_report();
    let mut out = Vec::new();
    JsonArrayExporter::new(&mut out).export(&report).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let entries = json.as_array().unwrap();
    assert_eq!(
        entries[0],
        serde_json::json!({"phase": "load", "metric": "OVERALL", "measurement": "RunTime(ms)", "value": 20892})
    );
    let run: Vec<_> = entries.iter().filter(|e| e["phase"] == "run").collect();
    assert_eq!(run.len(), GOLDEN_TEXT.lines().count());
    assert_eq!(run[1]["measurement"], "Throughput(ops/sec)");
    assert_eq!(run[1]["value"], 47865.21156423511);
}

#[test]
fn effective_config_lists_defaults_once_and_redacts_secrets() {
    let mut props = Properties::new();
    props.set("exporter", "json", Origin::Flag("-p"));
    props.set("db.auth_token", "s3cr3t", Origin::Api);
    let known = [PROPERTIES, PROPERTIES].concat();
    let config = effective_config(&props, &known);
    let keys: Vec<_> = config.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "db.auth_token",
            "exporter",
            "hdrhistogram.fileoutput",
            "hdrhistogram.output.path",
            "hdrhistogram.percentiles",
            "histogram.buckets",
            "measurement.histogram.verbose",
            "measurement.interval",
            "measurement.raw.no_summary",
            "measurementtype",
            "reportlatencyforeacherror",
            "status.gauges",
            "status.interval"
        ]
    );
    assert_eq!(config[0].value, REDACTED);
    assert_eq!(
        (config[1].value.as_str(), config[1].origin.as_str()),
        ("json", "-p flag")
    );
}

// -------------------------------------------------------------- export files

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn atomic_write_replaces_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.txt");
    std::fs::write(&path, "old report").unwrap();
    write_atomically(&path, |out| out.write_all(b"new report\n")).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new report\n");
    assert_eq!(entries(dir.path()), ["report.txt"]);
}

#[test]
fn atomic_write_leaves_no_partial_file_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let failing = |out: &mut dyn Write| {
        out.write_all(&[b'x'; 100_000])?;
        Err(io::Error::other("exporter failed"))
    };

    let existing = dir.path().join("kept.txt");
    std::fs::write(&existing, "old report").unwrap();
    let err = write_atomically(&existing, failing).unwrap_err();
    assert_eq!(err.to_string(), "exporter failed");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "old report");

    let fresh = dir.path().join("fresh.txt");
    assert!(write_atomically(&fresh, failing).is_err());
    assert!(!fresh.exists());
    assert_eq!(entries(dir.path()), ["kept.txt"]);

    let missing_dir = dir.path().join("no/such/dir/report.txt");
    let err = write_atomically(&missing_dir, |_| Ok(())).unwrap_err();
    assert!(
        err.to_string().contains("directory") && err.to_string().contains("no/such/dir"),
        "{err}"
    );
    assert!(!dir.path().join("no").exists(), "no directory is created");
}

#[cfg(unix)]
#[test]
fn atomic_write_through_a_symlink_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.txt");
    let link = dir.path().join("link.txt");
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    write_atomically(&link, |out| out.write_all(b"new")).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    assert_eq!(entries(dir.path()), ["link.txt", "real.txt"]);
}

#[test]
fn export_to_a_file_through_the_exporter_factory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let report = golden_report();
    write_atomically(&path, |out| {
        new_exporter(ExporterKind::Json, Box::new(out)).export(&report)
    })
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["phases"].as_array().unwrap().len(), 2);
}

// ------------------------------------------------- Java's measurement types

/// One phase recorded with `settings`: reads of 1500 us, 2500 us and
/// 4000 us (OK) and one NOT_FOUND read of 700 us.
fn java_type_phase(settings: &MeasurementSettings) -> PhaseReport {
    let measurements = Measurements::new(settings, 1);
    let mut recorder = measurements.recorder(0);
    for us in [1_500, 2_500, 4_000] {
        recorder.record(Operation::Read, Status::Ok, us * 1_000 + 999);
    }
    recorder.record(Operation::Read, Status::NotFound, 700_000);
    drop(recorder);
    let mut report = measurements.summary("run", Duration::from_millis(1_000), 4);
    // Fixed figures for the comparison (the runtime is not measured here).
    report.runtime_ms = 1_000;
    report
}

fn java_text(report: &PhaseReport) -> String {
    let mut out = Vec::new();
    TextExporter::new(&mut out).write_phase(report).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn histogram_type_prints_javas_bucket_figures() {
    let settings = MeasurementSettings {
        kind: MeasurementType::Histogram,
        histogram_buckets: 3,
        histogram_verbose: true,
        ..MeasurementSettings::default()
    };
    let text = java_text(&java_type_phase(&settings));
    // Java's OneMeasurementHistogram: sum 1500+2500+4000 = 8000 us over 3,
    // variance (1500^2+2500^2+4000^2)/3 - mean^2; buckets 1 ms wide, the
    // 95th/99th percentile the first bucket reaching the share, x 1000;
    // 4000 us overflows 3 buckets, so no 99th line is reached... the
    // running share after bucket 2 is 2/3, below 0.95: no percentile line.
    let mean = 8000.0 / 3.0;
    let variance = (1500.0f64 * 1500.0 + 2500.0 * 2500.0 + 4000.0 * 4000.0) / 3.0 - mean * mean;
    let expected = format!(
        "[OVERALL], RunTime(ms), 1000\n\
         [OVERALL], Throughput(ops/sec), 4.0\n\
         [READ], Operations, 3\n\
         [READ], AverageLatency(us), {}\n\
         [READ], LatencyVariance(us), {}\n\
         [READ], MinLatency(us), 1500\n\
         [READ], MaxLatency(us), 4000\n\
         [READ], Return=OK, 3\n\
         [READ], Return=NOT_FOUND, 1\n\
         [READ], 0, 0\n\
         [READ], 1, 1\n\
         [READ], 2, 1\n\
         [READ], >3, 1\n\
         [READ-FAILED], Operations, 1\n\
         [READ-FAILED], AverageLatency(us), 700.0\n\
         [READ-FAILED], LatencyVariance(us), 0.0\n\
         [READ-FAILED], MinLatency(us), 700\n\
         [READ-FAILED], MaxLatency(us), 700\n\
         [READ-FAILED], 95thPercentileLatency(us), 0\n\
         [READ-FAILED], 99thPercentileLatency(us), 0\n\
         [READ-FAILED], 0, 1\n\
         [READ-FAILED], 1, 0\n\
         [READ-FAILED], 2, 0\n\
         [READ-FAILED], >3, 0\n",
        java_double(mean),
        java_double(variance)
    );
    assert_eq!(text, expected);

    // With room for every latency, the percentiles are bucket x 1000.
    let settings = MeasurementSettings {
        kind: MeasurementType::Histogram,
        ..MeasurementSettings::default()
    };
    let text = java_text(&java_type_phase(&settings));
    assert!(
        text.contains(
            "[READ], 95thPercentileLatency(us), 4000\n[READ], 99thPercentileLatency(us), 4000\n"
        ),
        "{text}"
    );
}

#[test]
fn timeseries_type_prints_javas_units() {
    let settings = MeasurementSettings {
        kind: MeasurementType::TimeSeries,
        timeseries_granularity_ms: 3_600_000,
        ..MeasurementSettings::default()
    };
    let text = java_text(&java_type_phase(&settings));
    // One hour units: every latency falls in unit 0.
    let expected = format!(
        "[OVERALL], RunTime(ms), 1000\n\
         [OVERALL], Throughput(ops/sec), 4.0\n\
         [READ], Operations, 3\n\
         [READ], AverageLatency(us), {avg}\n\
         [READ], MinLatency(us), 1500\n\
         [READ], MaxLatency(us), 4000\n\
         [READ], Return=OK, 3\n\
         [READ], Return=NOT_FOUND, 1\n\
         [READ], 0, {avg}\n\
         [READ-FAILED], Operations, 1\n\
         [READ-FAILED], AverageLatency(us), 700.0\n\
         [READ-FAILED], MinLatency(us), 700\n\
         [READ-FAILED], MaxLatency(us), 700\n\
         [READ-FAILED], 0, 700.0\n",
        avg = java_double(8000.0 / 3.0)
    );
    assert_eq!(text, expected);
}

#[test]
fn raw_type_prints_javas_summary_and_every_latency() {
    let settings = MeasurementSettings {
        kind: MeasurementType::Raw,
        ..MeasurementSettings::default()
    };
    let report = java_type_phase(&settings);
    let text = java_text(&report);
    // OneMeasurementRaw: percentiles at index (int) (n * q) of the sorted
    // latencies: n = 3 gives index 0 up to p1..p5 and p50 = index 1.
    let expected = "[OVERALL], RunTime(ms), 1000\n\
         [OVERALL], Throughput(ops/sec), 4.0\n\
         [READ], Total Operations, 3\n\
         [READ], Below is a summary of latency in microseconds:, -1\n\
         [READ], Average, 2666.6666666666665\n\
         [READ], Min, 1500\n\
         [READ], Max, 4000\n\
         [READ], p1, 1500\n\
         [READ], p5, 1500\n\
         [READ], p50, 2500\n\
         [READ], p90, 4000\n\
         [READ], p95, 4000\n\
         [READ], p99, 4000\n\
         [READ], p99.9, 4000\n\
         [READ], p99.99, 4000\n\
         [READ], Return=OK, 3\n\
         [READ], Return=NOT_FOUND, 1\n\
         [READ-FAILED], Total Operations, 1\n\
         [READ-FAILED], Below is a summary of latency in microseconds:, -1\n\
         [READ-FAILED], Average, 700.0\n\
         [READ-FAILED], Min, 700\n\
         [READ-FAILED], Max, 700\n\
         [READ-FAILED], p1, 700\n\
         [READ-FAILED], p5, 700\n\
         [READ-FAILED], p50, 700\n\
         [READ-FAILED], p90, 700\n\
         [READ-FAILED], p95, 700\n\
         [READ-FAILED], p99, 700\n\
         [READ-FAILED], p99.9, 700\n\
         [READ-FAILED], p99.99, 700\n";
    assert_eq!(text, expected);
    let mut raw = Vec::new();
    report.write_raw(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let lines: Vec<&str> = raw.lines().collect();
    assert_eq!(
        lines[0],
        "READ latency raw data: op, timestamp(ms), latency(us)"
    );
    let latencies: Vec<&str> = lines[1..4]
        .iter()
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    assert_eq!(latencies, ["1500", "2500", "4000"]);
    assert!(lines[1].starts_with("READ,1"), "{}", lines[1]);
    assert_eq!(
        lines[4],
        "READ-FAILED latency raw data: op, timestamp(ms), latency(us)"
    );
}

#[test]
fn csv_type_reports_as_hdrhistogram_and_writes_go_ycsbs_csv() {
    let settings = MeasurementSettings {
        kind: MeasurementType::Csv,
        ..MeasurementSettings::default()
    };
    let measurements = Measurements::new(&settings, 1);
    let mut recorder = measurements.recorder(0);
    let before_us = wall_clock_us();
    recorder.record(Operation::Read, Status::Ok, 1_500_999);
    recorder.record(Operation::Update, Status::Ok, 2_000_000);
    recorder.record(Operation::Read, Status::NotFound, 700_000);
    recorder.record(Operation::ReadModifyWrite, Status::Ok, 3_600_000);
    recorder.record(Operation::Cleanup, Status::Ok, 10_000);
    let after_us = wall_clock_us();
    drop(recorder);
    let report = measurements.summary("run", Duration::from_millis(1_000), 4);

    // The report is hdrhistogram's: the same lines as with that type.
    let hdr = MeasurementSettings::default();
    let hdr_measurements = Measurements::new(&hdr, 1);
    let mut hdr_recorder = hdr_measurements.recorder(0);
    hdr_recorder.record(Operation::Read, Status::Ok, 1_500_999);
    hdr_recorder.record(Operation::Update, Status::Ok, 2_000_000);
    hdr_recorder.record(Operation::Read, Status::NotFound, 700_000);
    hdr_recorder.record(Operation::ReadModifyWrite, Status::Ok, 3_600_000);
    hdr_recorder.record(Operation::Cleanup, Status::Ok, 10_000);
    drop(hdr_recorder);
    let mut hdr_report = hdr_measurements.summary("run", Duration::from_millis(1_000), 4);
    hdr_report.format.measurement_type = MeasurementType::Csv;
    assert_eq!(report.java_measurements(), hdr_report.java_measurements());

    let mut out = Vec::new();
    report.write_raw(&mut out).unwrap();
    let csv = String::from_utf8(out).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("operation,timestamp_us,latency_us"));
    let rows: Vec<(&str, u64, u64)> = lines
        .map(|l| {
            let mut f = l.split(',');
            let row = (
                f.next().unwrap(),
                f.next().unwrap().parse().unwrap(),
                f.next().unwrap().parse().unwrap(),
            );
            assert_eq!(f.next(), None, "{l}");
            row
        })
        .collect();
    let names: Vec<(&str, u64)> = rows.iter().map(|r| (r.0, r.2)).collect();
    // go-ycsb's names; every successful database call once more as TOTAL
    // (not the read-modify-write, which go-ycsb measures apart); no
    // clean-up, which go-ycsb does not measure.
    assert_eq!(
        names,
        [
            ("READ", 1_500),
            ("READ_ERROR", 700),
            ("UPDATE", 2_000),
            ("READ_MODIFY_WRITE", 3_600),
            ("TOTAL", 1_500),
            ("TOTAL", 2_000),
        ]
    );
    // The timestamp is the start: the end less the latency, and the end
    // lies between the wall-clock readings around the recording.
    for (name, start_us, latency_us) in rows {
        let end_us = start_us + latency_us;
        assert!(
            (before_us..=after_us + 1).contains(&end_us),
            "{name}: end {end_us} outside {before_us}..={after_us}"
        );
    }
}

fn wall_clock_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

#[test]
fn combined_types_name_their_halves_as_java() {
    let settings = MeasurementSettings {
        kind: MeasurementType::HdrHistogramAndHistogram,
        ..MeasurementSettings::default()
    };
    let text = java_text(&java_type_phase(&settings));
    // TwoInOneMeasurement: statuses only in the first half.
    assert!(text.contains("[HdrREAD], Operations, 3\n"), "{text}");
    assert!(text.contains("[HdrREAD], Return=NOT_FOUND, 1\n"), "{text}");
    assert!(
        text.contains("[BucketREAD], LatencyVariance(us), "),
        "{text}"
    );
    assert!(!text.contains("[BucketREAD], Return="), "{text}");
    assert!(text.contains("[HdrREAD-FAILED], Operations, 1\n"), "{text}");
}

#[test]
fn failures_get_their_own_sections_when_asked() {
    let mut props = Properties::new();
    props.set("latencytrackederrors", "NOT_FOUND", Origin::Api);
    let settings = MeasurementSettings::from_properties(&props).unwrap();
    let measurements = Measurements::new(&settings, 1);
    let mut recorder = measurements.recorder(0);
    recorder.record(Operation::Read, Status::NotFound, 1_000);
    recorder.record(Operation::Read, Status::Error, 2_000);
    recorder.record(Operation::ReadModifyWrite, Status::Error, 3_000);
    recorder.record(Operation::Cleanup, Status::Ok, 4_000);
    drop(recorder);
    let report = measurements.summary("run", Duration::from_secs(1), 3);
    let names: Vec<(&str, u64)> = report
        .sections
        .iter()
        .map(|s| (s.name.as_str(), s.operations))
        .collect();
    assert_eq!(
        names,
        [
            ("READ", 0),
            ("READ-FAILED", 1),
            ("READ-NOT_FOUND", 1),
            ("READ-MODIFY-WRITE", 1),
            ("CLEANUP", 1)
        ]
    );
    assert_eq!(
        returns(&report.sections[0]),
        [("ERROR", 1), ("NOT_FOUND", 1)]
    );
    // Java prints no Return= lines for READ-MODIFY-WRITE and CLEANUP.
    assert!(report.sections[3..].iter().all(|s| s.returns.is_empty()));

    let mut props = Properties::new();
    props.set("reportlatencyforeacherror", "true", Origin::Api);
    let settings = MeasurementSettings::from_properties(&props).unwrap();
    assert_eq!(settings.failures.own_section, [true; Status::COUNT]);
}

#[test]
fn java_json_exporters_write_jacksons_bytes() {
    let mut phase = golden_phase();
    phase.sections.truncate(1);
    phase.sections[0].percentiles.truncate(1);
    phase.sections[0].returns.truncate(1);
    phase.throughput = 1.0e7;
    let report = RunReport {
        schema_version: ycsb_results::SCHEMA_VERSION,
        metadata: run_metadata("t", "0", Vec::new(), &[]),
        config: Vec::new(),
        phases: vec![phase],
        engine_reports: Vec::new(),
    };
    let object = |metric: &str, measurement: &str, value: &str| {
        format!(
            "{{\n  \"metric\" : \"{metric}\",\n  \"measurement\" : \"{measurement}\",\n  \"value\" : {value}\n}}"
        )
    };
    let objects = [
        object("OVERALL", "RunTime(ms)", "20892"),
        object("OVERALL", "Throughput(ops/sec)", "1.0E7"),
        object("READ", "Operations", "499304"),
        object("READ", "AverageLatency(us)", "1657.34"),
        object("READ", "MinLatency(us)", "78"),
        object("READ", "MaxLatency(us)", "1483188"),
        object("READ", "50thPercentileLatency(us)", "1200"),
        object("READ", "Return=OK", "499300"),
    ];
    let mut out = Vec::new();
    new_exporter(ExporterKind::JavaJson, Box::new(&mut out))
        .export(&report)
        .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), objects.join(" "));
    let mut out = Vec::new();
    new_exporter(ExporterKind::JavaJsonArray, Box::new(&mut out))
        .export(&report)
        .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("[ {} ]", objects.join(", "))
    );
}

#[test]
fn doubles_as_javas_double_to_string() {
    for (value, text) in [
        (0.0, "0.0"),
        (1.0, "1.0"),
        (47865.21156423511, "47865.21156423511"),
        (9_999_999.0, "9999999.0"),
        (1.0e7, "1.0E7"),
        (1.2345e8, "1.2345E8"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (-2.5e-5, "-2.5E-5"),
    ] {
        assert_eq!(java_double_exponent(value), text, "{value}");
    }
}

#[test]
fn intended_latency_of_failures_goes_to_intended_failed_sections() {
    let settings = MeasurementSettings {
        interval: MeasurementInterval::Both,
        ..MeasurementSettings::default()
    };
    let measurements = Measurements::new(&settings, 1);
    let mut recorder = measurements.recorder(0);
    recorder.record(Operation::Update, Status::Ok, 1_000);
    recorder.record_intended(Operation::Update, Status::Ok, 5_000);
    recorder.record(Operation::Update, Status::ServiceUnavailable, 2_000);
    recorder.record_intended(Operation::Update, Status::ServiceUnavailable, 6_000);
    recorder.record(Operation::Cleanup, Status::Ok, 3_000);
    recorder.record_intended(Operation::Cleanup, Status::Ok, 3_000);
    drop(recorder);
    let report = measurements.summary("run", Duration::from_secs(1), 2);
    let names: Vec<(&str, u64, usize)> = report
        .sections
        .iter()
        .map(|s| (s.name.as_str(), s.operations, s.returns.len()))
        .collect();
    // Java's DBWrapper: measure() and measureIntended() both take the
    // failure's name; statuses only in UPDATE.
    assert_eq!(
        names,
        [
            ("UPDATE", 1, 2),
            ("UPDATE-FAILED", 1, 0),
            ("CLEANUP", 1, 0),
            ("Intended-UPDATE", 1, 0),
            ("Intended-UPDATE-FAILED", 1, 0),
            ("Intended-CLEANUP", 1, 0)
        ]
    );
    assert_eq!(section(&report, "Intended-UPDATE-FAILED").min_us, 6);
}
