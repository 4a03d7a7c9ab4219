//! `ycsb load/run memcached` against real memcached servers started here:
//! workload A with verified data over two servers in both protocols, with
//! the servers' figures in the export; a server killed and restarted
//! mid-run.

mod common;
mod rel_support;

use std::time::Duration;

use common::*;
use rel_support::*;

use common::report_count as count;

#[test]
fn workload_a_keeps_its_data_over_two_servers_in_both_protocols() {
    for protocol in ["text", "binary"] {
        let servers = [Memcached::start(), Memcached::start()];
        let hosts = format!(
            "memcached.hosts={},{}",
            servers[0].addr(),
            servers[1].addr()
        );
        let protocol_property = format!("memcached.protocol={protocol}");
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("run.json");
        let common_args = [
            "-P",
            "workloads/workloada",
            "-p",
            &hosts,
            "-p",
            &protocol_property,
            "-p",
            "recordcount=400",
            "-p",
            "dataintegrity=true",
            "-threads",
            "4",
        ];
        let load = ycsb()
            .args(["load", "memcached"])
            .args(common_args)
            .output()
            .unwrap();
        assert!(load.status.success(), "{}", stderr(&load));
        let out = stdout(&load);
        assert_eq!(count(&out, "INSERT", "Return=OK"), 400, "{out}");
        // Keys were spread over both servers.
        let items: Vec<u64> = servers.iter().map(|s| s.stat("curr_items")).collect();
        assert_eq!(items.iter().sum::<u64>(), 400);
        assert!(items.iter().all(|&n| n > 100), "{items:?}");

        let run = ycsb()
            .args(["run", "memcached"])
            .args(common_args)
            .args(["-p", "operationcount=2000", "-p", "status.interval=1"])
            .args(json_export(&export))
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", stderr(&run));
        let report = std::fs::read_to_string(&export).unwrap();
        let json: serde_json::Value = serde_json::from_str(&report).unwrap();
        let phase = &json["phases"][0];
        let sections = phase["sections"].as_array().unwrap();
        let operations = |op: &str| {
            sections
                .iter()
                .find(|s| s["name"] == op)
                .and_then(|s| s["operations"].as_u64())
                .unwrap_or(0)
        };
        assert_eq!(operations("READ") + operations("UPDATE"), 2000, "{report}");
        // Every read record verified: updates merged, nothing lost.
        let text = ycsb()
            .args(["run", "memcached"])
            .args(common_args)
            .args(["-p", "operationcount=500"])
            .output()
            .unwrap();
        assert!(text.status.success(), "{}", stderr(&text));
        let out = stdout(&text);
        let verified = count(&out, "VERIFY", "Return=OK");
        assert_eq!(verified, count(&out, "READ", "Return=OK"), "{out}");
        assert!(verified > 100, "{out}");
        for bad in ["UNEXPECTED_STATE", "ERROR", "NOT_FOUND"] {
            assert!(!out.contains(&format!("Return={bad}")), "{out}");
        }
        // The servers' figures, summed over both, in the time series.
        let series = phase["observation"]["series"].as_array().unwrap();
        let last = &series.last().unwrap()["gauges"];
        assert_eq!(last["memcached.curr_items"], 400.0, "{last}");
        assert_eq!(last["memcached.servers_up"], 2.0, "{last}");
        assert!(last["memcached.bytes"].as_f64().unwrap() > 400.0 * 1000.0);
        assert_eq!(
            json["metadata"]["engine"], "memcached",
            "{}",
            json["metadata"]
        );
    }
}

/// The server is killed once the run is under way and started again
/// (empty) a moment later: operations fail with SERVICE_UNAVAILABLE,
/// counted apart from the others, the threads reconnect, the run goes on
/// and ends on time.
#[test]
fn a_server_killed_and_restarted_mid_run_is_reconnected() {
    let mut server = Memcached::start();
    let hosts = format!("memcached.hosts={}", server.addr());
    let load = ycsb()
        .args(["load", "memcached", "-p", &hosts, "-p", "recordcount=200"])
        .output()
        .unwrap();
    assert!(load.status.success(), "{}", stderr(&load));

    let (out, _) = run_across_an_interruption(
        ycsb()
            .args([
                "run",
                "memcached",
                "-P",
                "workloads/workloada",
                "-p",
                &hosts,
            ])
            .args(["-p", "recordcount=200", "-p", "operationcount=0"])
            .args(["-p", "maxexecutiontime=4", "-threads", "2"])
            .args(["-s", "-p", "status.interval=1"]),
        || {
            server.kill();
            std::thread::sleep(Duration::from_millis(300));
            server.restart();
        },
    );
    // After the restart: reconnected, the (empty) server answers again.
    let after = count(&out, "READ", "Return=NOT_FOUND") + count(&out, "UPDATE", "Return=NOT_FOUND");
    assert!(after > 0, "{out}");
    assert!(count(&out, "READ", "Return=OK") > 0, "{out}");
}
