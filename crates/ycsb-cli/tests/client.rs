//! What Java's `Client`, its `StatusThread` and `CommandLine` and
//! YCSB-cpp's `ycsbc` do with their flags and properties (issue 16, item
//! 9): which phases run, status lines with a label and counts that add up,
//! and `ycsb shell` on the memory store and on RocksDB.

mod common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::{report_value, run, stderr, stdout, ycsb};

/// Which phases an invocation ran, from the phase lines on standard error.
fn phases(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.contains(" threads"))
        .filter_map(|l| l.split_once(" phase: ").map(|(p, _)| p.to_string()))
        .collect()
}

/// Phase flags and properties as Java's Client and YCSB-cpp read them:
/// Java's bin/ycsb passes -load or -t (`dotransactions`), YCSB-cpp sets
/// `doload`/`dotransaction`, and with none of them Java runs the
/// transaction phase.
#[test]
fn phases_come_from_flags_and_properties_as_in_java_and_ycsb_cpp() {
    let base = "-P workloads/workloada -p recordcount=20 -p operationcount=30";
    for (args, expected) in [
        ("-db memory", &["run"][..]),
        ("-t -db memory", &["run"]),
        ("-run -db memory", &["run"]),
        ("-load -db memory", &["load"]),
        ("-load -run -db memory", &["load", "run"]),
        ("-db memory -p dotransactions=false", &["load"]),
        ("-db memory -p dotransactions=true", &["run"]),
        (
            "-db memory -p doload=true -p dotransaction=true",
            &["load", "run"],
        ),
        ("-db memory -p dotransaction=true", &["run"]),
        ("load memory", &["load"]),
        ("run memory", &["run"]),
        // A flag is its property, so a later -p overrides it as in Java.
        ("load memory -p dotransactions=true", &["run"]),
        // YCSB-cpp's pause between the phases: read, not warned about.
        (
            "-load -run -db memory -p sleepafterload=1",
            &["load", "run"],
        ),
    ] {
        let o = run(&format!("{args} {base}"));
        assert!(o.status.success(), "{args}: {}", stderr(&o));
        assert_eq!(phases(&o), expected, "{args}");
        assert!(!stderr(&o).contains("warning"), "{args}: {}", stderr(&o));
    }
    // The run phase alone on a store nothing loaded reads nothing, but runs.
    let o = run(&format!("-db memory {base}"));
    assert!(report_value(&stdout(&o), "READ", "Return=NOT_FOUND").is_some());
}

/// The status line starts with the `-l` label directly followed by the
/// date (Java's `label + format.format(new Date())`), `-s` and
/// `-p status=true` both turn them on, and each line's per-operation
/// `Count=` figures add up to the operations it reports for its interval.
#[test]
fn status_lines_carry_the_label_and_counts_that_add_up() {
    for status in ["-s", "-p status=true"] {
        let o = run(&format!(
            "run basic -P workloads/workloada -p operationcount=0 -p maxexecutiontime=3 -p status.interval=1 {status} -l exp7: -p basicdb.simulatedelay=0"
        ));
        assert!(o.status.success(), "{}", stderr(&o));
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().filter(|l| l.contains(" sec: ")).collect();
        assert!(lines.len() >= 2, "{err}");
        let mut previous = 0u64;
        for line in &lines {
            let rest = line.strip_prefix("exp7:").expect("the label first");
            // exp7:2026-12-01 14:11:03:716 1 sec: 50 operations; ...
            let (date, rest) = rest.split_at(23);
            assert_eq!(date.as_bytes()[4], b'-', "{line}");
            // Java's spacing: date, one space, whole seconds, " sec: ",
            // the total, " operations; ", then "<rate> current ops/sec; ".
            let (seconds, after) = rest[1..].split_once(" sec: ").expect("seconds");
            assert!(seconds.parse::<u64>().is_ok(), "{line}");
            // (The first line, at 0 seconds, may end there.)
            let (total, after) = after.split_once(" operations;").expect("operations");
            let total: u64 = total.parse().unwrap();
            if total != 0 {
                let (rate, _) = after.split_once(" current ops/sec; ").expect("rate");
                let rate = rate.trim_start();
                assert!(rate.parse::<f64>().is_ok(), "{line}");
            }
            let counted: u64 = after
                .split('[')
                .skip(1)
                .filter(|s| !s.starts_with("CLEANUP:") && s.contains(": Count="))
                .map(|s| {
                    let count = s.split_once("Count=").unwrap().1;
                    count.split(',').next().unwrap().parse::<u64>().unwrap()
                })
                .sum();
            assert_eq!(counted, total - previous, "{line}");
            previous = total;
        }
        let ops: u64 = report_value(&stdout(&o), "READ", "Operations")
            .unwrap()
            .parse::<u64>()
            .unwrap()
            + report_value(&stdout(&o), "UPDATE", "Operations")
                .unwrap()
                .parse::<u64>()
                .unwrap();
        assert_eq!(previous, ops, "the last line's total is the report's");
    }
}

/// Runs `ycsb shell` with `args`, typing `input` on its standard input.
fn shell(args: &[&str], input: &str) -> Output {
    let mut child = ycsb()
        .arg("shell")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ycsb shell starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The answers without prompts and timing lines (Java prints `> ` before
/// reading each command and `<n> ms` after it).
fn answers(o: &Output) -> Vec<String> {
    stdout(o)
        .lines()
        .map(|l| l.trim_start_matches("> ").to_string())
        .filter(|l| !l.is_empty() && !is_timing(l))
        .collect()
}

/// Java's `<milliseconds> ms` line.
fn is_timing(line: &str) -> bool {
    line.strip_suffix(" ms")
        .is_some_and(|ms| ms.parse::<u64>().is_ok())
}

#[test]
fn shell_on_memory_answers_as_java_s_command_line() {
    let o = shell(
        &["memory"],
        "help\ninsert user1 field0=a field1=b\nread user1 field1\nupdate user1 field0=c\nscan user1 2\ntable\ndelete user1\nread user1\nquit\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let answers = answers(&o);
    let after_help: Vec<&str> = answers
        .iter()
        .map(String::as_str)
        .skip_while(|l| !l.starts_with("  quit"))
        .skip(1)
        .collect();
    assert_eq!(
        after_help,
        [
            "Result: OK",
            "Return code: OK",
            "field1=b",
            "Result: OK",
            "Result: OK",
            "--------------------------------",
            "Record 0",
            "field0=c",
            "field1=b",
            "--------------------------------",
            "Using table \"usertable\"",
            "Return result: OK",
            "Return code: NOT_FOUND",
        ]
    );
    assert!(stdout(&o).starts_with("YCSB Command Line client\n"));
    assert!(stdout(&o).contains("\nConnected.\n"));
    let timings = stdout(&o)
        .lines()
        .filter(|l| is_timing(l.trim_start_matches("> ")))
        .count();
    assert_eq!(timings, 7, "one timing line per command but help and quit");
}

/// A persistent engine: what one shell inserts, the next one reads from
/// the same directory, and `-table` picks the table as in Java.
#[test]
fn shell_on_rocksdb_keeps_records_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("rocksdb.dbname={}", dir.path().join("db").display());
    let first = shell(
        &["rocksdb", "-p", &db],
        "insert user7 field0=persisted\nquit\n",
    );
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(answers(&first).last().unwrap(), "Result: OK");
    let second = shell(
        &["rocksdb", "-p", &db, "-table", "usertable"],
        "read user7\nscan user0 10 field0\n",
    );
    assert!(second.status.success(), "{}", stderr(&second));
    let answers = answers(&second);
    let tail: Vec<&str> = answers.iter().map(String::as_str).skip(4).collect();
    assert_eq!(
        tail,
        [
            "Return code: OK",
            "field0=persisted",
            "Result: OK",
            "--------------------------------",
            "Record 0",
            "field0=persisted",
            "--------------------------------",
        ]
    );
}

/// Defaults that differ from Java's say so where users look them up.
#[test]
fn defaults_that_differ_from_java_say_so_in_the_reference() {
    let o = run("properties");
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    for name in ["recordcount", "operationcount"] {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("  {name} = 1000")))
            .unwrap_or_else(|| panic!("{name} in: {text}"));
        let entry = lines[at + 1];
        assert!(
            entry.contains("differs from Java's on purpose") && entry.contains("default is 0"),
            "{entry}"
        );
    }
}
