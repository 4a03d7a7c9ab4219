//! `ycsb load/run jdbc` against real PostgreSQL clusters started here:
//! Java's table created by `jdbc.createtable`, workload A with verified
//! data, workload E's scans, the server's figures and durability in the
//! export; a server killed and restarted mid-run; a wrong password and an
//! unreachable server as one line and exit status 2.

mod common;
mod rel_support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::*;
use rel_support::*;
use ycsb_jdbc::testing::{MariaDb, Postgres, MARIADB_PASSWORD, PASSWORD};

use common::report_count as count;

/// `-p` arguments pointing the store at `server`, with the table created.
fn server_args(server: &Postgres) -> Vec<String> {
    url_args(&server.url(), "postgres", PASSWORD)
}

/// `-p` arguments for the server at `url`, logged in as `user`, with the
/// table created.
fn url_args(url: &str, user: &str, password: &str) -> Vec<String> {
    [
        format!("db.url={url}"),
        format!("db.user={user}"),
        format!("db.passwd={password}"),
        "jdbc.createtable=true".to_string(),
    ]
    .into_iter()
    .flat_map(|p| ["-p".to_string(), p])
    .collect()
}

/// Workload A over 300 records, four threads, every read verified.
const WORKLOAD_A: [&str; 8] = [
    "-P",
    "workloads/workloada",
    "-p",
    "recordcount=300",
    "-p",
    "dataintegrity=true",
    "-threads",
    "4",
];

/// `ycsb <command> <store>` with the server's `args`, then `workload` and
/// `more`: its output, once it has exited 0.
fn succeeds(
    command: &str,
    store: &str,
    args: &[String],
    workload: &[&str],
    more: &[&str],
) -> Output {
    let out = ycsb()
        .args([command, store])
        .args(args)
        .args(workload)
        .args(more)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// The server's `args` and a JSON export to `path`.
fn with_export(args: &[String], path: &Path) -> Vec<String> {
    args.iter().cloned().chain(json_export(path)).collect()
}

/// Loads [`WORKLOAD_A`] through the store named `store` (an alias of
/// jdbc): all 300 inserts succeed.
fn load_a(store: &str, args: &[String]) {
    let out = stdout(&succeeds("load", store, args, &WORKLOAD_A, &[]));
    assert_eq!(count(&out, "INSERT", "Return=OK"), 300);
}

/// Runs 1,500 operations of [`WORKLOAD_A`] through `store`: every read
/// verifies, and none is unexpected, failed or missing.
fn run_a_verified(store: &str, args: &[String]) {
    let run = succeeds(
        "run",
        store,
        args,
        &WORKLOAD_A,
        &["-p", "operationcount=1500"],
    );
    let out = stdout(&run);
    let verified = count(&out, "VERIFY", "Return=OK");
    assert_eq!(verified, count(&out, "READ", "Return=OK"), "{out}");
    assert!(verified > 300, "{out}");
    for bad in ["UNEXPECTED_STATE", "ERROR", "NOT_FOUND"] {
        assert!(!out.contains(&format!("Return={bad}")), "{out}");
    }
}

#[test]
fn workload_a_keeps_its_data_and_the_export_has_the_servers_figures() {
    let server = Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("run.json");
    let args = server_args(&server);
    load_a("postgresql", &args);
    let rows: i64 = server
        .client()
        .count("SELECT count(*) FROM usertable")
        .unwrap();
    assert_eq!(rows, 300);
    run_a_verified("jdbc", &args);
    let run = succeeds(
        "run",
        "jdbc",
        &with_export(&args, &export),
        &WORKLOAD_A,
        &["-p", "operationcount=1500", "-p", "status.interval=1"],
    );
    let report = std::fs::read_to_string(&export).unwrap();
    assert!(!report.contains(PASSWORD), "the password is in the export");
    assert!(
        !stderr(&run).contains(PASSWORD),
        "the password is on stderr"
    );
    let json: serde_json::Value = serde_json::from_str(&report).unwrap();
    let metadata = &json["metadata"];
    assert_eq!(metadata["engine"], "PostgreSQL", "{metadata}");
    let durability = &metadata["durability"];
    assert_eq!(
        durability["property"], "pg.synchronous_commit",
        "{metadata}"
    );
    assert_eq!(durability["value"], "on", "{metadata}");
    assert_eq!(durability["durable"], true, "{metadata}");
    let series = json["phases"][0]["observation"]["series"]
        .as_array()
        .unwrap();
    let last = &series.last().unwrap()["gauges"];
    assert!(last["pg.table_bytes"].as_f64().unwrap() > 8192.0, "{last}");
    assert!(last["pg.xact_commit"].as_f64().unwrap() > 0.0, "{last}");
}

/// Workload E: scans answered by Java's range query (their order is
/// checked by the store's tests), inserts beside them.
#[test]
fn workload_e_scans() {
    let server = Postgres::start();
    let args = server_args(&server);
    let workload_e = ["-P", "workloads/workloade", "-p", "recordcount=300"];
    succeeds("load", "jdbc", &args, &workload_e, &[]);
    let run = succeeds(
        "run",
        "jdbc",
        &args,
        &workload_e,
        &["-p", "operationcount=300", "-threads", "2"],
    );
    let out = stdout(&run);
    assert!(count(&out, "SCAN", "Return=OK") > 200, "{out}");
    for bad in ["UNEXPECTED_STATE", "ERROR", "NOT_IMPLEMENTED"] {
        assert!(!out.contains(&format!("Return={bad}")), "{out}");
    }
}

/// The server is killed once the run is under way and started again a
/// moment later: operations fail with SERVICE_UNAVAILABLE, counted apart,
/// the threads reconnect, the run goes on and ends on time, and the
/// records are still there (PostgreSQL recovers them).
#[test]
fn a_server_killed_and_restarted_mid_run_is_reconnected() {
    let mut server = Postgres::start();
    let args = server_args(&server);
    succeeds("load", "jdbc", &args, &[], &["-p", "recordcount=200"]);
    let (out, err) = run_across_an_interruption(
        ycsb()
            .args(["run", "jdbc", "-P", "workloads/workloada"])
            .args(&args)
            .args(["-p", "recordcount=200", "-p", "operationcount=0"])
            .args(["-p", "maxexecutiontime=5", "-threads", "2"])
            .args(["-s", "-p", "status.interval=1"]),
        || {
            server.kill();
            std::thread::sleep(Duration::from_millis(300));
            server.restart();
        },
    );
    assert!(!out.contains("Return=NOT_FOUND"), "{out}");
    assert!(count(&out, "READ", "Return=OK") > 0, "{out}");
    assert!(!err.contains(PASSWORD), "{err}");
}

#[test]
fn a_wrong_password_or_a_closed_port_is_one_line_and_exit_status_2() {
    let server = Postgres::start();
    let o = ycsb()
        .args(["load", "jdbc", "-p"])
        .arg(format!("db.url={}", server.url()))
        .args(["-p", "db.passwd=Wr0ngPassw0rd"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("cannot open jdbc"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&server.url()) && line.contains("password authentication failed"),
        "{line}"
    );
    assert!(!err.contains("Wr0ngPassw0rd"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let o = ycsb()
        .args(["load", "postgresql", "-p"])
        .arg(format!("pg.port={closed}"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("jdbc:postgresql://127.0.0.1:{closed}/test"))
            && err.contains("pg.port="),
        "{err}"
    );
}

/// MariaDB through the same store: Java's table made by the load,
/// workload A verified, the server's name and durability in the export.
#[test]
fn workload_a_keeps_its_data_on_mariadb() {
    let server = MariaDb::start();
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("run.json");
    let args = url_args(&server.url(), "ycsb", MARIADB_PASSWORD);
    load_a("mariadb", &args);
    run_a_verified("mysql", &args);
    succeeds(
        "run",
        "jdbc",
        &with_export(&args, &export),
        &WORKLOAD_A,
        &["-p", "operationcount=300"],
    );
    let report = std::fs::read_to_string(&export).unwrap();
    assert!(
        !report.contains(MARIADB_PASSWORD),
        "the password is in the export"
    );
    let json: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(
        json["metadata"]["engine"], "MariaDB",
        "{}",
        json["metadata"]
    );
    // The durability recorded is the server's own setting (MariaDB's
    // default flushes the log at every commit), not PostgreSQL's property.
    let durability = &json["metadata"]["durability"];
    assert_eq!(
        durability["property"], "innodb_flush_log_at_trx_commit",
        "{durability}"
    );
    assert_eq!(durability["value"], "1", "{durability}");
    assert_eq!(durability["durable"], true, "{durability}");
}

/// `batch.size=50`: the load sends each thread's records 50 to a
/// transaction (BATCH_INSERT counts the calls: 75 records a thread are a
/// batch of 50 and one of 25), and a run of batched reads and updates
/// verifies every record.
#[test]
fn batched_loads_and_runs_keep_their_data() {
    let server = Postgres::start();
    let args = server_args(&server);
    let batched = ["-p", "batch.size=50"];
    let out = stdout(&succeeds("load", "jdbc", &args, &WORKLOAD_A, &batched));
    assert_eq!(count(&out, "INSERT", "Return=OK"), 300, "{out}");
    assert_eq!(count(&out, "BATCH_INSERT", "Operations"), 8, "{out}");
    let rows: i64 = server
        .client()
        .count("SELECT count(*) FROM usertable")
        .unwrap();
    assert_eq!(rows, 300);
    let run = succeeds(
        "run",
        "jdbc",
        &args,
        &WORKLOAD_A,
        &[&batched[..], &["-p", "operationcount=1000"]].concat(),
    );
    let out = stdout(&run);
    // Each batch of 50 is one kind, drawn as workload A draws an
    // operation: 20 batches, so the split between reads and updates
    // varies from run to run; every record read is verified.
    let (reads, updates) = (
        count(&out, "READ", "Return=OK"),
        count(&out, "UPDATE", "Return=OK"),
    );
    assert_eq!(reads + updates, 1000, "{out}");
    assert_eq!(count(&out, "VERIFY", "Return=OK"), reads, "{out}");
    assert!(reads > 0, "{out}");
    for bad in ["UNEXPECTED_STATE", "ERROR", "NOT_FOUND"] {
        assert!(!out.contains(&format!("Return={bad}")), "{out}");
    }
}
