//! `measurement.clock`: every clock times real store calls correctly, and
//! `off` records no time but still counts every operation.

mod common;

use common::*;

/// The value of `[SECTION], name, value` in a text report.
fn figure(report: &str, section: &str, name: &str) -> f64 {
    let prefix = format!("[{section}], {name}, ");
    report
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {prefix} in:\n{report}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{prefix}: {e}"))
}

const MIX: &str = "run basic -p recordcount=1000 -p operationcount=2000 -p readproportion=0.5 -p updateproportion=0.5 -p seed=7";

#[test]
fn off_records_zero_latency_and_counts_every_operation() {
    let out = run(&format!("{MIX} -p measurement.clock=off"));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    let reads = figure(&report, "READ", "Operations");
    let updates = figure(&report, "UPDATE", "Operations");
    assert_eq!(reads + updates, 2000.0);
    for section in ["READ", "UPDATE"] {
        assert_eq!(
            figure(&report, section, "AverageLatency(us)"),
            0.0,
            "{section}"
        );
        assert_eq!(figure(&report, section, "MaxLatency(us)"), 0.0, "{section}");
        assert_eq!(
            figure(&report, section, "Return=OK"),
            figure(&report, section, "Operations")
        );
    }
}

#[test]
fn timing_clocks_measure_store_calls() {
    for clock in ["auto", "std"] {
        // Every call of the basic store takes a few nanoseconds: over a
        // thousand calls the mean cannot be 0 with a working clock.
        let out = run(&format!("{MIX} -p measurement.clock={clock}"));
        assert!(out.status.success(), "{clock}: {}", stderr(&out));
        let report = stdout(&out);
        assert!(
            figure(&report, "READ", "AverageLatency(us)") > 0.0,
            "{clock}:\n{report}"
        );

        // Each call sleeps 3 ms: no latency may be shorter, whatever the
        // TSC's rate (a wrong calibration would scale every latency).
        let out = run(&format!(
            "run basic -p recordcount=10 -p operationcount=20 -p readproportion=1 -p updateproportion=0 \
             -p basicdb.simulatedelay=3 -p basicdb.randomizedelay=false -p measurement.clock={clock}"
        ));
        assert!(out.status.success(), "{clock}: {}", stderr(&out));
        let report = stdout(&out);
        assert!(
            figure(&report, "READ", "MinLatency(us)") >= 3000.0,
            "{clock}:\n{report}"
        );
    }
}
