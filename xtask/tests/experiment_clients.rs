//! `cargo xtask experiment` with a `clients` axis, end to end with the
//! real `ycsb` binary: N processes per cell against one `ycsb serve`
//! memory server, each phase started together (`start.at`), the load split
//! so that every key is loaded exactly once, and the cell's export the
//! exact `ycsb merge` of the clients' exports, which are kept.

mod common;
// How ycsb-cli's tests read an export's counts.
#[path = "../../crates/ycsb-cli/tests/export_support/mod.rs"]
mod export_support;

use serde_json::Value;

use common::{json, run_experiment, write_matrix};
use export_support::returns;

fn config<'a>(export: &'a Value, key: &str) -> Option<&'a str> {
    export["config"]
        .as_array()?
        .iter()
        .find(|c| c["key"] == key)?["value"]
        .as_str()
}

const RECORDS: u64 = 1000;
const OPERATIONS: u64 = 1500;

#[test]
fn three_clients_load_every_key_once_and_merge_exactly() {
    let dir = tempfile::tempdir().unwrap();
    // The client store that talks RESP (redis) to an in-process memory
    // store behind `ycsb serve`: one data set for every client.
    let matrix = write_matrix(
        &dir.path().join("m.toml"),
        "workloadc",
        &format!(
            r#"name = "clients"
time_limit = 60

[properties]
recordcount = {RECORDS}
operationcount = {OPERATIONS}
fieldcount = 2
fieldlength = 8

[axes]
db = ["served"]
clients = [1, 3]

[db.served]
store = "redis"
server = "ycsb-serve"
engine = "memory"
"#
        ),
    );
    let (out, err) = run_experiment(&matrix, &dir.path().join("results"), &[]);
    assert!(out.status.success(), "{err}");
    let cells = dir.path().join("results/clients/cells");

    // One client: as before, no client directory.
    let single = cells.join("db=served,clients=1,r1");
    assert!(!single.join("clients").exists());
    assert_eq!(json(&single.join("cell.json"))["clients"], 1);

    let cell = cells.join("db=served,clients=3,r1");
    let record = json(&cell.join("cell.json"));
    assert_eq!(record["clients"], 3);
    let export = json(&cell.join("export.json"));
    let phases = export["phases"].as_array().unwrap();
    assert_eq!(
        phases
            .iter()
            .map(|p| p["phase"].clone())
            .collect::<Vec<_>>(),
        ["load", "run"]
    );
    // The load split the key space: 334 + 333 + 333 inserts, in all the
    // record count, each acknowledged.
    let mut loaded = Vec::new();
    for i in 0..3 {
        let client = json(&cell.join(format!("clients/load-client-{i}.json")));
        assert_eq!(
            config(&client, "client.index"),
            Some(i.to_string().as_str())
        );
        assert_eq!(config(&client, "client.count"), Some("3"));
        assert!(config(&client, "start.at").is_some(), "{client}");
        loaded.push(client["phases"][0]["operations"].as_u64().unwrap());
    }
    assert_eq!(loaded, [334, 333, 333]);
    assert_eq!(phases[0]["operations"], RECORDS);
    assert_eq!(returns(&phases[0], "INSERT", "OK"), RECORDS);
    // Every key loaded once: every read of the three clients, over all
    // RECORDS keys, found its record.
    assert_eq!(phases[1]["operations"], 3 * OPERATIONS);
    assert_eq!(returns(&phases[1], "READ", "OK"), 3 * OPERATIONS);
    assert_eq!(returns(&phases[1], "READ", "NOT_FOUND"), 0);
    // The run's merged histogram counts every client's reads.
    let mut per_client = 0;
    for i in 0..3 {
        let client = json(&cell.join(format!("clients/run-client-{i}.json")));
        per_client += returns(&client["phases"][0], "READ", "OK");
    }
    assert_eq!(per_client, 3 * OPERATIONS);
    // The cell's export is ycsb merge's: it names its inputs.
    for i in 0..3 {
        let input = config(&export, &format!("merge.input.{i}")).unwrap();
        assert!(input.contains(&format!("run-client-{i}.json")), "{input}");
    }
    assert!(cell.join("clients/load.json").is_file());
    assert!(cell.join("clients/merge-run.txt").is_file());
    // Every client's command, with its index and the group's start time.
    let commands = std::fs::read_to_string(cell.join("command.txt")).unwrap();
    let started: Vec<_> = commands
        .lines()
        .filter(|l| l.contains("start.at="))
        .collect();
    assert_eq!(started.len(), 6, "{commands}");
    for i in 0..3 {
        assert_eq!(
            started
                .iter()
                .filter(|l| l.contains(&format!("client.index={i} ")))
                .count(),
            2,
            "{commands}"
        );
    }
    // The summary has a row per client count.
    let csv = std::fs::read_to_string(dir.path().join("results/clients/summary-run.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
}
