//! The etcd store through the `ycsb` binary, against real three-member
//! etcd clusters: scans (workload E), a member killed mid-run, and bad
//! endpoints. Data integrity across processes is in `integrity.rs`.

mod common;
mod rel_support;

use std::time::Duration;

use common::*;
use rel_support::*;
use ycsb_etcd::testing::EtcdCluster;

fn endpoints(cluster: &EtcdCluster) -> String {
    format!("etcd.endpoints={}", cluster.endpoints())
}

#[test]
fn workload_e_scans_in_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = EtcdCluster::start(dir.path(), 3).unwrap();
    let endpoints = endpoints(&cluster);
    let load = ycsb()
        .args([
            "load",
            "etcd",
            "-P",
            "workloads/workloade",
            "-p",
            &endpoints,
        ])
        .args(["-p", "recordcount=300", "-threads", "4"])
        .output()
        .unwrap();
    assert!(load.status.success(), "{}", stderr(&load));
    assert_eq!(
        report_value(&stdout(&load), "INSERT", "Return=OK").as_deref(),
        Some("300"),
        "{}",
        stdout(&load)
    );
    assert!(stderr(&load).contains("etcd"), "{}", stderr(&load));

    let export = dir.path().join("run.json");
    let run = ycsb()
        .args(["run", "etcd", "-P", "workloads/workloade", "-p", &endpoints])
        .args(["-p", "recordcount=300", "-p", "operationcount=400"])
        .args(["-p", "insertorder=ordered", "-threads", "2"])
        .args(json_export(&export))
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let json = read_json(&export);
    let phase = &json["phases"][0];
    assert!(returns(phase, "SCAN", "OK") > 300, "{phase}");
    assert_eq!(failures(phase), 0, "{phase}");
    assert!(
        json.to_string().contains("etcd.members-up"),
        "the gauges are in the export"
    );
}

/// Kills one of three members once the run is under way: the run goes on
/// against the other two, its failed operations are counted apart
/// (SERVICE_UNAVAILABLE), and it ends normally at its time limit. The
/// member killed is a follower, so that no election (whose length depends
/// on the machine's load) decides how many operations fail.
#[test]
fn a_member_killed_mid_run_is_survived() {
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = EtcdCluster::start(dir.path(), 3).unwrap();
    let endpoints = endpoints(&cluster);
    let load = ycsb()
        .args(["load", "etcd", "-p", &endpoints, "-p", "recordcount=200"])
        .output()
        .unwrap();
    assert!(load.status.success(), "{}", stderr(&load));

    let export = dir.path().join("run.json");
    let (mut child, mut lines) = spawn_watched(
        ycsb()
            .args(["run", "etcd", "-P", "workloads/workloada", "-p", &endpoints])
            .args(["-p", "recordcount=200", "-p", "operationcount=0"])
            .args(["-p", "maxexecutiontime=6", "-threads", "3"])
            .args(["-s", "-p", "status.interval=1"])
            .args(json_export(&export)),
    );
    lines
        .wait_for(Duration::from_secs(30), status_with_operations)
        .expect("a status line");
    let follower = (cluster.leader().unwrap() + 1) % 3;
    cluster.kill(follower).unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(60), "the run");
    let err = lines.rest();
    assert!(status.success(), "{err}\n{}", cluster.report());
    assert!(!err.contains("panicked"), "{err}");
    let phase = &read_json(&export)["phases"][0];
    // One thread talked to the killed member: its operation in flight, at
    // least, failed.
    let unavailable = returns(phase, "READ", "SERVICE_UNAVAILABLE")
        + returns(phase, "UPDATE", "SERVICE_UNAVAILABLE");
    assert!(unavailable >= 1, "{phase}");
    assert_eq!(failures(phase), unavailable, "{phase}");
    let ok = returns(phase, "READ", "OK") + returns(phase, "UPDATE", "OK");
    assert!(
        ok > 100 * unavailable,
        "{ok} OK, {unavailable} failed: {phase}\n{}",
        cluster.report()
    );
}

#[test]
fn bad_endpoints_are_one_line_and_exit_2() {
    for (value, expect) in [
        ("etcd.endpoints=nohostport", "etcd.endpoints"),
        ("etcd.dial_timeout=2h", "etcd.dial_timeout"),
    ] {
        let out = ycsb()
            .args(["load", "etcd", "-p", value, "-p", "recordcount=1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}: {}", stderr(&out));
        let err = stderr(&out);
        let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{err}");
        assert!(errors[0].contains(expect), "{err}");
    }
    // Nothing listening: the store cannot open.
    let port = free_port();
    let out = ycsb()
        .args([
            "load",
            "etcd",
            "-p",
            &format!("etcd.endpoints=127.0.0.1:{port}"),
        ])
        .args(["-p", "etcd.dial_timeout=300ms", "-p", "recordcount=1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no member answered"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}
