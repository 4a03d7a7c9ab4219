//! `batch.size` (go-ycsb's) end to end: a RocksDB load of batches of 50
//! is one write of 50 keys per batch in `rocksdb.stats` and verifies with
//! `dataintegrity` in a second process; the report counts records in
//! `[INSERT]` and the throughput, and batches in `[BATCH_INSERT]`.

mod common;

use common::*;

/// The figure of `[section], name` in a text report, as a number.
fn figure(out: &str, section: &str, name: &str) -> f64 {
    report_value(out, section, name)
        .unwrap_or_else(|| panic!("no [{section}], {name} in: {out}"))
        .parse()
        .unwrap()
}

/// `(writes, keys)` of RocksDB's `Cumulative writes: W writes, K keys,
/// ...` line in `rocksdb.stats`.
fn cumulative_writes(stats: &str) -> (u64, u64) {
    let line = stats
        .lines()
        .find(|l| l.starts_with("Cumulative writes: "))
        .unwrap_or_else(|| panic!("no Cumulative writes line in {stats}"));
    let numbers: Vec<u64> = line["Cumulative writes: ".len()..]
        .split(", ")
        .take(2)
        .map(|part| {
            let number = part.split(' ').next().unwrap();
            // RocksDB abbreviates large counts (`12K`); these are small.
            number.parse().unwrap_or_else(|_| panic!("{line}"))
        })
        .collect();
    (numbers[0], numbers[1])
}

/// Loads 5,000 records into a new RocksDB with `batch_size` and returns
/// the report and the engine's cumulative `(writes, keys)`.
fn rocksdb_load(dir: &std::path::Path, batch_size: u32) -> (String, (u64, u64)) {
    let export = dir.join(format!("load-{batch_size}.json"));
    let o = ycsb()
        .args(["load", "rocksdb", "-P", "workloads/workloada", "-p"])
        .arg(format!("rocksdb.dbname={}", dir.join("db").display()))
        .args(["-p", "rocksdb.destroy=true", "-p", "recordcount=5000"])
        .args(["-p", "dataintegrity=true", "-p", "threadcount=1", "-p"])
        .arg(format!("batch.size={batch_size}"))
        .args(["-p", "exporter=text", "-p"])
        .arg(format!("exportfile={}", export.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(&export).unwrap();
    let stats_file = dir.join(format!("load-{batch_size}.json.rocksdb.stats.txt"));
    let stats = std::fs::read_to_string(&stats_file)
        .unwrap_or_else(|e| panic!("{}: {e}", stats_file.display()));
    (report, cumulative_writes(&stats))
}

#[test]
fn a_rocksdb_load_of_batches_of_50_writes_50_keys_per_write_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (report, (writes, keys)) = rocksdb_load(dir.path(), 1);
    assert_eq!((writes, keys), (5000, 5000), "one write per record");
    assert!(!report.contains("BATCH_INSERT"), "{report}");

    let (report, (writes, keys)) = rocksdb_load(dir.path(), 50);
    assert_eq!((writes, keys), (100, 5000), "50 keys per write");
    // Records in [INSERT] and the throughput, batches in [BATCH_INSERT].
    assert_eq!(figure(&report, "INSERT", "Operations"), 5000.0, "{report}");
    assert_eq!(figure(&report, "INSERT", "Return=OK"), 5000.0, "{report}");
    assert_eq!(
        figure(&report, "BATCH_INSERT", "Operations"),
        100.0,
        "{report}"
    );
    let runtime_ms = figure(&report, "OVERALL", "RunTime(ms)");
    let throughput = figure(&report, "OVERALL", "Throughput(ops/sec)");
    assert!(
        (throughput - 5000.0 * 1000.0 / runtime_ms).abs() < 1e-6,
        "{report}"
    );

    // A second process reads every record back, in batches of 50, and
    // verifies each; then updates and reads of workload A in batches.
    let db = format!("rocksdb.dbname={}", dir.path().join("db").display());
    for (mix, operations) in [
        (
            &[
                "readproportion=1",
                "updateproportion=0",
                "requestdistribution=sequential",
            ][..],
            5000.0,
        ),
        (&["readproportion=0.5", "updateproportion=0.5"][..], 3000.0),
    ] {
        let mut command = ycsb();
        command
            .args(["run", "rocksdb", "-P", "workloads/workloada", "-p", &db])
            .args(["-p", "recordcount=5000", "-p", "dataintegrity=true"])
            .args(["-p", "batch.size=50", "-p", "threadcount=1", "-p"])
            .arg(format!("operationcount={operations}"));
        for property in mix {
            command.args(["-p", property]);
        }
        let o = command.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        let reads = figure(&out, "READ", "Operations");
        assert!(reads > 0.0, "{out}");
        assert_eq!(figure(&out, "READ", "Return=OK"), reads, "{out}");
        assert_eq!(figure(&out, "VERIFY", "Return=OK"), reads, "{out}");
        assert!(figure(&out, "BATCH_READ", "Operations") > 0.0, "{out}");
        assert!(!out.contains("UNEXPECTED_STATE"), "{out}");
        assert!(!out.contains("Return=ERROR"), "{out}");
        assert!(!out.contains("NOT_FOUND"), "{out}");
    }
}

/// The default, `batch.size=1`, is today's run bit for bit: the same
/// operations, keys and values (the basic store's trace) as without the
/// property, and batches of 4 the same load.
#[test]
fn batch_size_1_runs_the_same_operations_as_no_batch_size() {
    let trace = |extra: &[&str]| {
        let o = ycsb()
            .args(["-load", "-run", "-db", "basic", "-P", "workloads/workloada"])
            .args(["-p", "recordcount=40", "-p", "operationcount=200"])
            .args(["-p", "threadcount=1", "-p", "seed=7", "-p", "fieldlength=8"])
            .args(["-p", "basicdb.verbose=true"])
            .args(extra.iter().flat_map(|p| ["-p", p]))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
            .lines()
            .filter(|l| {
                ["INSERT ", "READ ", "UPDATE "]
                    .iter()
                    .any(|op| l.starts_with(op))
            })
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let without = trace(&[]);
    assert_eq!(without.len(), 240);
    assert_eq!(trace(&["batch.size=1"]), without);
    // Batches of 4 load the same records in the same order (the basic
    // store takes the default batch calls: one record at a time).
    let batched = trace(&["batch.size=4"]);
    assert_eq!(batched[..40], without[..40]);
}
