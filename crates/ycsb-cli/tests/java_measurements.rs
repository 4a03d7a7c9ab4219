//! Java's measurement types, failed-operation sections and exporters in
//! real runs of the `ycsb` binary.

mod common;

use common::*;

#[test]
fn javas_workload_template_runs_verbatim() {
    // The file is Java's own (measurementtype=histogram, histogram.buckets,
    // maxscanrate, scanoptimelimit, timeseries.granularity=1000); only its
    // sizes are overridden, as a Java user would with -p.
    let o = run("-load -run -db basic -P workloads/workload_template \
         -p recordcount=100 -p operationcount=200 -p basicdb.verbose=false -p seed=1");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("unknown"), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let out = stdout(&o);
    // OneMeasurementHistogram's figures.
    assert!(out.contains("[INSERT], LatencyVariance(us), "), "{out}");
    assert!(out.contains("[READ], LatencyVariance(us), "), "{out}");
    assert!(out.contains("[READ], 95thPercentileLatency(us), "), "{out}");
    // Java prints no Return= lines for CLEANUP.
    assert!(out.contains("[CLEANUP], Operations, "), "{out}");
    assert!(!out.contains("[CLEANUP], Return="), "{out}");
}

#[test]
fn reads_of_missing_records_are_measured_as_failed() {
    // No load phase: every read is NOT_FOUND, a failure in Java's DBWrapper.
    let o = run("run memory -p recordcount=50 -p operationcount=40 \
         -p readproportion=1 -p updateproportion=0 -p seed=3");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        report_value(&out, "READ", "Operations").as_deref(),
        Some("0"),
        "{out}"
    );
    assert_eq!(
        report_value(&out, "READ", "Return=NOT_FOUND").as_deref(),
        Some("40"),
        "{out}"
    );
    assert_eq!(
        report_value(&out, "READ-FAILED", "Operations").as_deref(),
        Some("40"),
        "{out}"
    );
    assert!(!out.contains("[READ-FAILED], Return="), "{out}");

    let o = run("run memory -p recordcount=50 -p operationcount=40 \
         -p readproportion=1 -p updateproportion=0 -p seed=3 \
         -p latencytrackederrors=NOT_FOUND");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        report_value(&out, "READ-NOT_FOUND", "Operations").as_deref(),
        Some("40"),
        "{out}"
    );
}

#[test]
fn raw_type_appends_every_latency_to_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.csv");
    let o = run(&format!(
        "load basic -p recordcount=30 -p basicdb.verbose=false -p measurementtype=raw \
         -p measurement.raw.output_file={}",
        raw.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&raw).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("INSERT latency raw data: op, timestamp(ms), latency(us)")
    );
    let inserts = lines
        .clone()
        .take_while(|l| l.starts_with("INSERT,"))
        .count();
    assert_eq!(inserts, 30, "{text}");
    let out = stdout(&o);
    assert_eq!(
        report_value(&out, "INSERT", "Total Operations").as_deref(),
        Some("30"),
        "{out}"
    );
}

#[test]
fn go_ycsbs_csv_type_writes_every_latency_to_measurement_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("latencies.csv");
    std::fs::write(&csv, "left over from an earlier run\n").unwrap();
    let before_us = unix_us();
    // go-ycsb's habit: -p measurementtype=csv -p measurement.output_file=F;
    // both phases in one process, so the file holds one table of both.
    // (Failed operations as OP_ERROR: the unit test of the report.)
    let o = run(&format!(
        "-load -run -db memory -p recordcount=40 -p operationcount=300 \
         -p readproportion=0.5 -p updateproportion=0.3 -p readmodifywriteproportion=0.2 \
         -p requestdistribution=uniform -p seed=5 -p measurementtype=csv \
         -p measurement.output_file={}",
        csv.display(),
    ));
    let after_us = unix_us();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("not read"), "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    // go-ycsb creates the file anew: nothing of its earlier content, one
    // header.
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("operation,timestamp_us,latency_us"));
    let mut per_op = std::collections::BTreeMap::<String, u64>::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 3, "{line}");
        let start: u64 = fields[1].parse().unwrap();
        let latency: u64 = fields[2].parse().unwrap();
        assert!(
            before_us <= start && start + latency <= after_us,
            "{line} outside the run {before_us}..{after_us}"
        );
        *per_op.entry(fields[0].to_string()).or_default() += 1;
    }
    let of = |op: &str| per_op.get(op).copied().unwrap_or(0);
    // The report's counts agree (the load's report comes first).
    let out = stdout(&o);
    let run_report = &out[out.find("[OVERALL]").unwrap() + 1..];
    let run_report = &run_report[run_report.find("[OVERALL]").unwrap()..];
    let count = |section: &str| -> u64 {
        report_value(run_report, section, "Operations").map_or(0, |v| v.parse().unwrap())
    };
    assert_eq!(of("INSERT"), 40, "{per_op:?}");
    assert_eq!(of("READ"), count("READ"), "{per_op:?}");
    assert_eq!(of("READ_ERROR"), count("READ-FAILED"), "{per_op:?}");
    assert_eq!(of("UPDATE"), count("UPDATE"), "{per_op:?}");
    assert_eq!(
        of("READ_MODIFY_WRITE"),
        count("READ-MODIFY-WRITE"),
        "{per_op:?}"
    );
    assert!(
        of("READ") > 0 && of("UPDATE") > 0 && of("READ_MODIFY_WRITE") > 0,
        "{per_op:?}"
    );
    // TOTAL repeats every successful database call of both phases.
    assert_eq!(
        of("TOTAL"),
        of("INSERT") + of("READ") + of("UPDATE"),
        "{per_op:?}"
    );
    assert_eq!(of("CLEANUP"), 0, "{per_op:?}");
    // The report itself is hdrhistogram's, on standard output.
    assert!(
        out.contains("[UPDATE], 99thPercentileLatency(us), "),
        "{out}"
    );

    // A file that cannot be created is refused before anything runs.
    let o = run(&format!(
        "run basic -p recordcount=10 -p operationcount=10 -p measurementtype=csv \
         -p measurement.output_file={}",
        dir.path().join("missing/latencies.csv").display()
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("measurement.output_file=") && err.contains("(-p flag)"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{err}"
    );
}

fn unix_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

#[test]
fn javas_json_exporter_class_writes_concatenated_objects() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    let o = run(&format!(
        "load basic -p recordcount=10 -p basicdb.verbose=false \
         -p exporter=site.ycsb.measurements.exporter.JSONMeasurementsExporter -p exportfile={}",
        export.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&export).unwrap();
    assert!(
        text.starts_with(
            "{\n  \"metric\" : \"OVERALL\",\n  \"measurement\" : \"RunTime(ms)\",\n  \"value\" : "
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "} {\n  \"metric\" : \"OVERALL\",\n  \"measurement\" : \"Throughput(ops/sec)\""
        ),
        "{text}"
    );
    assert!(text.ends_with('}'), "{text}");
    // Every object parses; together they are a stream, not one document.
    let objects: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&text)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(objects
        .iter()
        .any(|o| o["metric"] == "INSERT" && o["value"] == 10));
}

/// go-ycsb's `outputstyle` (also `measurement.output_style`): its summary
/// of each phase on standard output instead of Java's report.
#[test]
fn go_ycsbs_output_styles_replace_javas_report() {
    let base = "-load -run -db memory -P workloads/workloada -p recordcount=50 \
         -p operationcount=200 -p seed=5";
    let o = run(&format!("{base} -p outputstyle=plain"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("[OVERALL]"), "{out}");
    // (YCSB-cpp's command line adds its summary lines after each phase.)
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once(" - Takes(s): "))
        .map(|(name, _)| name.trim_end())
        .collect();
    // The load, then the run, each sorted by name as go-ycsb.
    assert_eq!(
        names,
        ["INSERT", "TOTAL", "READ", "TOTAL", "UPDATE"],
        "{out}"
    );
    assert!(
        out.lines()
            .next()
            .unwrap()
            .starts_with("INSERT - Takes(s): ")
            && out.contains(", Count: 50, OPS: ")
            && out.contains(", 99.99th(us): "),
        "{out}"
    );

    let o = run(&format!("{base} -p measurement.output_style=table"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let headings: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| OPERATION "))
        .collect();
    assert_eq!(headings.len(), 2, "{out}");
    assert!(
        headings[0].ends_with("| 99.9TH(US) | 99.99TH(US) |"),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("| TOTAL  ")), "{out}");

    let o = run(&format!("{base} -p outputstyle=json"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let phases: Vec<serde_json::Value> = out
        .lines()
        .filter(|l| l.starts_with('['))
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(phases.len(), 2, "{out}");
    assert_eq!(phases[0][0]["Operation"], "INSERT");
    assert_eq!(phases[0][0]["Count"], "50");
    let run_total = phases[1]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["Operation"] == "TOTAL")
        .unwrap();
    assert_eq!(run_total["Count"], "200");
}
