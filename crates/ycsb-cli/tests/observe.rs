//! The time series, resources, gauges, stability, warm-up and
//! amplification of real runs of the `ycsb` binary.

mod common;

use common::*;
use serde_json::Value;

fn json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", path.display()))
}

fn phase<'a>(export: &'a Value, name: &str) -> &'a Value {
    export["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == name)
        .unwrap_or_else(|| panic!("no {name} phase in {export}"))
}

#[test]
fn leveldb_rows_carry_gauges_resources_and_db_size() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let series = dir.path().join("series.jsonl");
    let export = dir.path().join("export.json");
    let o = run(&format!(
        "-load -run -db leveldb -P workloads/workloada -P leveldb/leveldb.properties \
         -p leveldb.dbname={} -p recordcount=5000 -p operationcount=40000 \
         -p timeseries.granularity=50 -p timeseries.file={} \
         -p exporter=json -p exportfile={} -p seed=1",
        db.display(),
        series.display(),
        export.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    // Each phase: its stability and amplification, or (too few intervals
    // on a slow machine) one line saying it is too short to judge.
    for phase in ["load", "run"] {
        let figures = err.contains(&format!("{phase} stability: "))
            && err.contains(&format!("{phase} amplification: write "));
        let too_short = err.contains(&format!("{phase}: too short to judge"));
        assert!(figures != too_short, "{phase}: {err}");
    }

    let rows: Vec<Value> = std::fs::read_to_string(&series)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rows.iter().any(|r| r["phase"] == "load"));
    let run_rows: Vec<&Value> = rows.iter().filter(|r| r["phase"] == "run").collect();
    assert!(!run_rows.is_empty());
    let mut operations = 0;
    for row in &run_rows {
        assert!(
            row["gauges"]["leveldb.num-files-at-level0"].is_number(),
            "{row}"
        );
        let client = &row["client"];
        assert!(client["rss_bytes"].as_u64().unwrap() > 0, "{row}");
        assert!(client["cpu_user_pct"].as_f64().unwrap() >= 0.0, "{row}");
        assert!(client["write_bytes"].is_u64(), "{row}");
        assert!(row["db_size_bytes"].as_u64().unwrap() > 0, "{row}");
        operations += row["operations"].as_u64().unwrap();
    }
    // Every operation lands in exactly one interval.
    assert_eq!(operations, 40000);
    let busy = run_rows
        .iter()
        .find(|r| r["operations"].as_u64().unwrap() > 0)
        .unwrap();
    let read = busy["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "READ")
        .unwrap();
    for figure in [
        "avg_us",
        "p50_us",
        "p99_us",
        "p999_us",
        "max_us",
        "throughput",
    ] {
        assert!(read[figure].is_number(), "{figure}: {read}");
    }
    assert!(read["p99_us"].as_u64() <= read["max_us"].as_u64());

    // The JSON export carries the same series and the phase figures.
    let export = json(&export);
    let run = phase(&export, "run");
    let observation = &run["observation"];
    assert_eq!(
        observation["series"].as_array().unwrap().len(),
        run_rows.len()
    );
    assert!(
        observation["stability"]["mean_throughput"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(observation["stability"]["cv"].is_number());
    let amplification = &phase(&export, "load")["observation"]["amplification"];
    // The load wrote at least the user data (the write-ahead log alone
    // does) and the directory holds about that much.
    assert!(
        amplification["write_amplification"].as_f64().unwrap() > 0.5,
        "{amplification}"
    );
    assert!(
        amplification["space_amplification"].as_f64().unwrap() > 0.2,
        "{amplification}"
    );
}

#[test]
fn csv_series_has_a_fixed_header_for_both_phases() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("series.csv");
    let o = run(&format!(
        "-load -run -db basic -P workloads/workloadb -p recordcount=500 -p operationcount=2000 \
         -p basicdb.verbose=false -p timeseries.granularity=50 -p timeseries.file={}",
        series.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&series).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..3], ["phase", "time_s", "unix_ms"]);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.len() >= 2);
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert!(row[col("time_s")].parse::<f64>().is_ok());
    }
    let total = |phase: &str, column: &str| -> u64 {
        rows.iter()
            .filter(|r| r[col("phase")] == phase)
            .map(|r| r[col(column)].parse::<u64>().unwrap_or(0))
            .sum()
    };
    assert_eq!(total("load", "INSERT_operations"), 500);
    assert_eq!(
        total("run", "READ_operations") + total("run", "UPDATE_operations"),
        2000
    );
}

/// With a warm-up, the final report covers only what came after it.
#[test]
fn warmup_is_excluded_from_the_report_but_kept_in_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    // About 1 ms per operation (random 0-1 ms sleeps plus overhead) on one
    // thread: 400 warm-up operations then 600 measured ones.
    let o = run(&format!(
        "run basic -P workloads/workloada -p recordcount=100 -p operationcount=1000 \
         -p basicdb.verbose=false -p basicdb.simulatedelay=2 \
         -p measurement.warmup=400ops -p timeseries.granularity=100 \
         -p exporter=json -p exportfile={}",
        export.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("run warm-up: "), "{}", stderr(&o));
    let export = json(&export);
    let run = phase(&export, "run");
    let warmup = &run["observation"]["warmup"];
    let warm_ops = warmup["operations"].as_u64().unwrap();
    // The status thread checks the count every few milliseconds, so the
    // warm-up ends at or shortly after 400 operations; the upper bound is
    // loose because a busy test machine can delay that thread.
    assert!((400..900).contains(&warm_ops), "{warmup}");
    assert_eq!(run["operations"].as_u64().unwrap(), 1000 - warm_ops);
    let measured: u64 = run["sections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "READ" || s["name"] == "UPDATE")
        .map(|s| s["operations"].as_u64().unwrap())
        .sum();
    // Workers publish at most 100 ms late: at about one operation per
    // millisecond, up to ~100 operations may fall on the other side of the
    // boundary; 150 leaves room for a slow machine without letting the
    // warm-up's 400 through.
    let expected = 1000 - warm_ops;
    assert!(
        measured.abs_diff(expected) <= 150,
        "report sections hold {measured} operations, expected about {expected}"
    );
    assert!(measured < 1000 - 250);
    let series = run["observation"]["series"].as_array().unwrap();
    let in_series: u64 = series
        .iter()
        .map(|r| r["operations"].as_u64().unwrap())
        .sum();
    assert_eq!(in_series, 1000, "the series keeps the warm-up");
    assert!(series[0]["warmup"] == true);
    assert!(series.last().unwrap()["warmup"] == false);
    assert!(
        run["observation"]["stability"]["intervals"]
            .as_u64()
            .unwrap()
            >= 1
    );
}

#[test]
fn granularity_zero_turns_observation_off() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    let o = run(&format!(
        "run basic -p operationcount=100 -p basicdb.verbose=false \
         -p timeseries.granularity=0 -p exporter=json -p exportfile={}",
        export.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let export = json(&export);
    assert!(phase(&export, "run").get("observation").is_none());
    assert!(!stderr(&o).contains("stability"));
}

#[test]
fn monitor_pid_samples_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let o = run(&format!(
        "run basic -p operationcount=300 -p basicdb.verbose=false -p basicdb.simulatedelay=2 \
         -p timeseries.granularity=100 -p monitor.pid={} -p exporter=json -p exportfile={}",
        sleeper.id(),
        export.display()
    ));
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let export = json(&export);
    let series = phase(&export, "run")["observation"]["series"]
        .as_array()
        .unwrap()
        .clone();
    let monitor = &series[0]["monitor"];
    assert!(monitor["rss_bytes"].as_u64().unwrap() > 0, "{monitor}");
    // A sleeping process uses no CPU to speak of.
    assert!(
        monitor["cpu_user_pct"].as_f64().unwrap() < 50.0,
        "{monitor}"
    );
}

#[test]
fn a_target_adds_intended_latency_and_a_time_warmup_closes_an_interval() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("series.csv");
    let export = dir.path().join("export.json");
    let o = run(&format!(
        "run basic -P workloads/workloada -p recordcount=100 -p operationcount=600 \
         -p basicdb.verbose=false -target 1000 -p measurement.warmup=0.25s \
         -p timeseries.granularity=100 -p timeseries.file={} -p exporter=json -p exportfile={}",
        series.display(),
        export.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let export = json(&export);
    let run = phase(&export, "run");
    let observation = &run["observation"];
    let end = observation["warmup"]["end_s"].as_f64().unwrap();
    // It ends at the first series tick after 0.25 s (0.3 s on an idle
    // machine; later when the status thread is delayed).
    assert!((0.25..1.0).contains(&end), "{observation}");
    let rows = observation["series"].as_array().unwrap();
    // The warm-up's last interval ends at the warm-up's end.
    let last_warm = rows.iter().rev().find(|r| r["warmup"] == true).unwrap();
    assert_eq!(last_warm["time_s"].as_f64().unwrap(), end);
    let busy = rows
        .iter()
        .find(|r| r["operations"].as_u64().unwrap() > 0)
        .unwrap();
    let names: Vec<&str> = busy["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"Intended-READ"), "{names:?}");
    let text = std::fs::read_to_string(&series).unwrap();
    assert!(text
        .lines()
        .next()
        .unwrap()
        .contains("Intended-READ_p99_us"));
}

#[test]
fn a_phase_that_ends_during_its_warmup_reports_nothing() {
    for granularity in ["0", "1000"] {
        let o = run(&format!(
            "run basic -p operationcount=200 -p basicdb.verbose=false \
             -p measurement.warmup=1000ops -p timeseries.granularity={granularity}"
        ));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("ended during its warm-up"),
            "{}",
            stderr(&o)
        );
        let report = stdout(&o);
        assert_eq!(
            report_value(&report, "OVERALL", "RunTime(ms)").as_deref(),
            Some("0")
        );
        assert_eq!(
            report_value(&report, "READ", "Operations").as_deref(),
            Some("0"),
            "{report}"
        );
    }
}

#[test]
fn progress_bar_only_on_a_terminal() {
    let args = "run basic -p operationcount=2000 -p basicdb.verbose=false \
                -p basicdb.simulatedelay=2 -p timeseries.granularity=200";
    // Piped standard error: no bar (no escape sequence, no carriage return).
    let o = run(args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains('\u{1b}') && !stderr(&o).contains('\r'));

    // Under a pseudo-terminal (script(1), util-linux, Essential in Debian)
    // the bar is drawn and then cleared.
    let command = format!("{} {args}", env!("CARGO_BIN_EXE_ycsb"));
    // script(1) keeps a copy of the session: in the test's own directory.
    let dir = tempfile::tempdir().unwrap();
    let typescript = dir.path().join("typescript");
    let o = std::process::Command::new("script")
        .args(["-qec", &command])
        .arg(&typescript)
        .current_dir(root())
        .output()
        .expect("script(1) runs");
    assert!(o.status.success(), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(text.contains("\r\u{1b}[2Krun ["), "{text:?}");
    assert!(text.contains("ops/s elapsed "), "{text:?}");
    assert!(text.contains("/2000 ops"), "{text:?}");
    // With -s the status lines take the place of the bar.
    let o = std::process::Command::new("script")
        .args(["-qec", &format!("{command} -s")])
        .arg(&typescript)
        .current_dir(root())
        .output()
        .expect("script(1) runs");
    assert!(!stdout(&o).contains("\u{1b}[2K"), "{:?}", stdout(&o));
}

#[test]
fn status_lines_keep_java_form_and_short_runs_say_too_short_once() {
    let line = |extra: &str| {
        let o = run(&format!(
            "-run -db memory -P workloads/workloadc -s -p operationcount=2000 {extra}"
        ));
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let err = line("");
    let status: Vec<&str> = err.lines().filter(|l| l.contains(" sec: ")).collect();
    assert!(!status.is_empty(), "{err}");
    // Java's status line: no engine values unless asked.
    assert!(status.iter().all(|l| !l.contains("[memory.")), "{err}");
    // One 1 s interval judges nothing: one line says so, no figures.
    assert_eq!(err.matches("too short to judge").count(), 1, "{err}");
    assert!(
        err.contains(
            "run: too short to judge stability and amplification (1 intervals of 1 s; 10 needed)"
        ),
        "{err}"
    );
    assert!(!err.contains("run stability:") && !err.contains("amplification: write"));

    let err = line("-p status.gauges=all");
    assert!(err.contains("[memory.records="), "{err}");
    let err = line("-p status.gauges=memory.records,memory.nope");
    assert!(err.contains("[memory.records="), "{err}");
    assert_eq!(
        err.matches(
            "ycsb: status.gauges: the store reports no gauge 'memory.nope' (it has memory.records"
        )
        .count(),
        1,
        "{err}"
    );
}
