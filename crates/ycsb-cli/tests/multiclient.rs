//! Several `ycsb` processes against one real redis-server on loopback:
//! `client.count`/`client.index` split the load and keep run-phase inserts
//! apart (Java YCSB's clients collide), and `ycsb merge` sums their JSON
//! exports and HdrHistogram logs with exact percentiles, checked against
//! the PyPI `hdrhistogram` package.

mod common;
mod rel_support;

mod hdr_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::*;
use rel_support::*;

const RECORDS: u64 = 3_000;

/// The records in the server: every key but the scan index.
fn records(redis: &Redis) -> u64 {
    let out = Command::new("redis-cli")
        .args(["-p", &redis.port.to_string(), "DBSIZE"])
        .output()
        .expect("redis-cli runs (Debian package redis-tools)");
    let size: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    size - 1 // _indices
}

/// Starts one client process with the common arguments and `extra`.
fn client(phase: &str, redis: &Redis, extra: &[String]) -> Child {
    ycsb()
        .args([phase, "redis", "-P", "workloads/workloada", "-p"])
        .arg(format!("redis.port={}", redis.port))
        .args(["-p", "redis.index=lex", "-p"])
        .arg(format!("recordcount={RECORDS}"))
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ycsb starts")
}

fn wait_all(children: Vec<Child>) {
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn p(assignment: String) -> [String; 2] {
    ["-p".to_string(), assignment]
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn section<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["phases"][0]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} section"))
}

fn ok_inserts(doc: &serde_json::Value) -> u64 {
    section(doc, "INSERT")["returns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "OK")
        .map_or(0, |r| r["count"].as_u64().unwrap())
}

#[test]
fn three_clients_insert_disjoint_keys_and_merge_exactly() {
    let redis = Redis::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let clients = 3;

    // Load: each client inserts its share, in parallel.
    let loads = (0..clients)
        .map(|i| {
            let mut extra = Vec::new();
            extra.extend(p(format!("client.count={clients}")));
            extra.extend(p(format!("client.index={i}")));
            client("load", &redis, &extra)
        })
        .collect();
    wait_all(loads);
    assert_eq!(
        records(&redis),
        RECORDS,
        "the shares cover the data set once"
    );

    // Run: half the operations insert.
    let exports: Vec<PathBuf> = (0..clients)
        .map(|i| dir.path().join(format!("run{i}.json")))
        .collect();
    let runs = (0..clients)
        .map(|i| {
            let mut extra = Vec::new();
            extra.extend(p(format!("client.count={clients}")));
            extra.extend(p(format!("client.index={i}")));
            for a in [
                "operationcount=1500",
                "insertproportion=0.5",
                "readproportion=0.3",
                "updateproportion=0.2",
                "exporter=json",
                "hdrhistogram.fileoutput=true",
                "hdrhistogram.percentiles=50,90,99,99.9",
            ] {
                extra.extend(p(a.to_string()));
            }
            extra.extend(p(format!("exportfile={}", exports[i].display())));
            std::fs::create_dir(dir.path().join(format!("c{i}"))).unwrap();
            extra.extend(p(format!(
                "hdrhistogram.output.path={}/c{i}/",
                dir.path().display()
            )));
            extra.extend(["-threads".to_string(), "2".to_string()]);
            client("run", &redis, &extra)
        })
        .collect();
    wait_all(runs);
    let docs: Vec<serde_json::Value> = exports.iter().map(|e| json(e)).collect();
    let inserted: u64 = docs.iter().map(ok_inserts).sum();
    assert!(inserted > 1_500, "{inserted} inserts");
    assert_eq!(
        records(&redis),
        RECORDS + inserted,
        "every run-phase insert of every client wrote a new record"
    );

    // Merge the exports: sums, and percentiles of the summed histograms.
    let merged_path = dir.path().join("merged.json");
    let mut cmd = ycsb();
    cmd.args(["merge", "-o"]).arg(&merged_path).args(&exports);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let merged = json(&merged_path);
    let phase = &merged["phases"][0];
    assert_eq!(phase["phase"], "run");
    // The merged export names the store the clients measured.
    assert_eq!(merged["metadata"]["store"], docs[0]["metadata"]["store"]);
    assert_eq!(merged["metadata"]["engine"], docs[0]["metadata"]["engine"]);
    assert!(merged["metadata"]["store"].is_string());
    let operations: u64 = docs
        .iter()
        .map(|d| d["phases"][0]["operations"].as_u64().unwrap())
        .sum();
    assert_eq!(phase["operations"].as_u64(), Some(operations));
    assert_eq!(operations, 4_500);
    let export_names: Vec<&Path> = exports.iter().map(PathBuf::as_path).collect();
    let python = hdr_support::decode_exports("50,90,99,99.9", "run", &export_names);
    for name in ["READ", "UPDATE", "INSERT"] {
        let m = section(&merged, name);
        let sum: u64 = docs
            .iter()
            .map(|d| section(d, name)["operations"].as_u64().unwrap())
            .sum();
        assert_eq!(m["operations"].as_u64(), Some(sum), "{name}");
        assert_eq!(
            report_value(&text, name, "Operations").as_deref(),
            Some(sum.to_string().as_str())
        );
        let max = docs
            .iter()
            .map(|d| section(d, name)["max_ns"].as_u64().unwrap())
            .max();
        assert_eq!(m["max_ns"].as_u64(), max, "{name}");
        assert_eq!(python[name]["count"].as_u64(), Some(sum));
        for pct in m["percentiles"].as_array().unwrap() {
            let key = match pct["percentile"].as_f64().unwrap() {
                v if v.fract() == 0.0 => format!("{v:.0}"),
                v => v.to_string(),
            };
            // HdrHistogram's bucket value, kept within the exact extremes
            // as every report's percentiles are.
            let bucket = python[name]["percentiles"][&key].as_u64().unwrap();
            let (min_ns, max_ns) = (m["min_ns"].as_u64().unwrap(), m["max_ns"].as_u64().unwrap());
            assert_eq!(
                Some(bucket.clamp(min_ns, max_ns)),
                pct["ns"].as_u64(),
                "{name} p{key}: merged {pct}, python {}",
                python[name]
            );
        }
    }
    assert_eq!(ok_inserts(&merged), inserted);
    // The time series, lined up by wall clock, keeps every operation.
    let series_ops = |d: &serde_json::Value| -> u64 {
        d["phases"][0]["observation"]["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["operations"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        series_ops(&merged),
        docs.iter().map(series_ops).sum::<u64>(),
        "merged series"
    );

    // Merge the READ logs: the same count and percentiles again.
    let logs: Vec<PathBuf> = (0..clients)
        .map(|i| dir.path().join(format!("c{i}/READ.hdr")))
        .collect();
    std::fs::create_dir(dir.path().join("merged")).unwrap();
    let merged_log = dir.path().join("merged/READ.hdr");
    let mut cmd = ycsb();
    cmd.args(["merge", "-o"]).arg(&merged_log).args(&logs);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let decoded = hdr_support::decode("50,90,99,99.9", &[&merged_log]);
    let read = section(&merged, "READ");
    assert_eq!(decoded["READ"]["count"], read["operations"]);
    for pct in read["percentiles"].as_array().unwrap() {
        let key = match pct["percentile"].as_f64().unwrap() {
            v if v.fract() == 0.0 => format!("{v:.0}"),
            v => v.to_string(),
        };
        // The logs hold whole microseconds, as Java's.
        let logged = decoded["READ"]["percentiles"][&key].as_u64().unwrap();
        let us = pct["us"].as_u64().unwrap();
        assert!(
            logged >= us && logged - us <= us / 1_000 + 1,
            "p{key}: log {logged} us, report {us} us"
        );
    }
}

/// Java YCSB's behaviour, for contrast: clients that do not know of each
/// other start their insert counters at the same number and overwrite each
/// other's new records (this is what `client.count` prevents).
#[test]
fn clients_without_a_partition_collide_as_in_java() {
    let redis = Redis::start(&[]);
    wait_all(vec![client("load", &redis, &[])]);
    let extra: Vec<String> = [
        "operationcount=400",
        "insertproportion=1",
        "readproportion=0",
        "updateproportion=0",
    ]
    .iter()
    .flat_map(|a| p(a.to_string()))
    .collect();
    wait_all((0..2).map(|_| client("run", &redis, &extra)).collect());
    // Both inserted user<hash(3000..3399)>: 400 new records, not 800.
    assert_eq!(records(&redis), RECORDS + 400);
}

#[test]
fn merge_refuses_bad_inputs_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let not_export = dir.path().join("x.json");
    std::fs::write(&not_export, "{\"a\": 1}").unwrap();
    let mut cmd = ycsb();
    cmd.arg("merge").arg(&not_export);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("x.json: not a ycsb JSON export (exporter=json): missing field `metadata`"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let out = run("merge");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no input files"));

    let out = run("merge a.json b.hdr");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not both"));
}

/// Properties of a bad partition are refused before anything runs.
#[test]
fn a_client_index_beyond_the_count_is_refused() {
    let out = run("run basic -p client.count=2 -p client.index=2");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("client.index") && err.contains("below client.count (2)"),
        "{err}"
    );
}
