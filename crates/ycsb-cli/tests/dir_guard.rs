//! The directory guard through the `ycsb` binary, for every embedded store
//! the binary links (found by their descriptors' directory layouts, not by
//! name): a second `ycsb` never destroys a live database, and a directory
//! holding files named like an engine's but not its own is refused, with
//! exit status 2 and one line, and left as it was.

mod common;
mod rel_support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::*;
use rel_support::*;
use ycsb_db::StoreDescriptor;

/// Every compiled-in store that keeps its data in a directory the guard
/// checks.
fn embedded() -> Vec<&'static StoreDescriptor> {
    let stores: Vec<_> = ycsb_stores::STORES
        .iter()
        .filter(|d| d.dir_layout.is_some())
        .collect();
    assert!(
        stores.len() >= 7,
        "{:?}",
        stores.iter().map(|d| d.name).collect::<Vec<_>>()
    );
    stores
}

fn dir_property(store: &StoreDescriptor, dir: &Path) -> String {
    let property = store.data_dir.expect("a data directory").name;
    format!("{property}={}", dir.display())
}

fn fresh_args(store: &StoreDescriptor) -> Vec<String> {
    store
        .fresh
        .iter()
        .flat_map(|(k, v)| ["-p".to_string(), format!("{k}={v}")])
        .collect()
}

/// Asserts a refusal: exit status 2, nothing on standard output, one line
/// on standard error holding `said`.
#[track_caller]
fn assert_refused(o: &Output, said: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(err.contains(said), "{what}: {err}");
    assert!(stdout(o).is_empty(), "{what}: {}", stdout(o));
}

#[test]
fn a_second_ycsb_never_destroys_a_live_database() {
    for store in embedded() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("db");
        let at = dir_property(store, &db);
        let (mut holder, mut lines) = spawn_watched(
            ycsb()
                .args(["load", store.name, "-P", "workloads/workloada"])
                .args(["-p", "recordcount=100000000", "-p", "dataintegrity=true"])
                .args(["-s", "-p", "status.interval=1", "-p", &at]),
        );
        // The first 100 records, read back at the end, are in.
        lines
            .wait_for(Duration::from_secs(60), |l| {
                status_line_operations(l).is_some_and(|n| n >= 100)
            })
            .unwrap_or_else(|| panic!("{}: no status line: {:?}", store.name, lines.seen));
        // Today's data loss: a second load asked to start empty.
        let o = ycsb()
            .args(["load", store.name, "-P", "workloads/workloada"])
            .args(["-p", "recordcount=10", "-p", &at])
            .args(fresh_args(store))
            .output()
            .unwrap();
        assert_refused(
            &o,
            "is in use",
            &format!("{}: a second fresh load", store.name),
        );
        // db_bench's fill benchmarks start empty too.
        let o = ycsb()
            .args(["bench", "--benchmarks=fillseq", "--num=10"])
            .arg(format!("--db-engine={}", store.name))
            .arg(format!("--db={}", db.display()))
            .output()
            .unwrap();
        assert_refused(
            &o,
            "is in use",
            &format!("{}: ycsb bench fillseq", store.name),
        );
        signal(&holder, 15);
        let status = wait_bounded(&mut holder, Duration::from_secs(60), "the holder");
        assert_eq!(status.code(), Some(130), "{}: {}", store.name, lines.rest());
        // The holder's first records are all there and intact.
        let o = ycsb()
            .args(["run", store.name, "-P", "workloads/workloadc"])
            .args(["-p", "recordcount=100", "-p", "operationcount=100"])
            .args(["-p", "dataintegrity=true", "-p", &at])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}: {}", store.name, stderr(&o));
        let report = stdout(&o);
        assert_eq!(
            report_value(&report, "READ", "Return=OK").as_deref(),
            Some("100"),
            "{}: {report}",
            store.name
        );
        assert_eq!(
            report_value(&report, "VERIFY", "Return=OK").as_deref(),
            Some("100")
        );
    }
}

#[test]
fn a_directory_with_files_named_like_an_engine_s_is_refused_and_kept() {
    for store in embedded() {
        let layout = store.dir_layout.unwrap();
        // A project that happens to hold a file named like each of the
        // engine's (fjall's `version` wiped such a directory).
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("README.md"), "# my project\n").unwrap();
        std::fs::write(project.join("src/main.rs"), "fn main() {}\n").unwrap();
        for name in layout.fixed_names() {
            std::fs::write(project.join(name), format!("my {name}, not a database\n")).unwrap();
        }
        let before = snapshot(&project);
        let at = dir_property(store, &project);
        for fresh in [false, true] {
            let mut load = ycsb();
            load.args(["load", store.name, "-P", "workloads/workloada"])
                .args(["-p", "recordcount=10", "-p", &at]);
            if fresh {
                load.args(fresh_args(store));
            }
            let o = load.output().unwrap();
            assert_refused(
                &o,
                "nothing was changed",
                &format!("{} load, fresh: {fresh}", store.name),
            );
            assert!(
                snapshot(&project) == before,
                "{}: the project changed",
                store.name
            );
        }
        let o = ycsb()
            .args(["bench", "--benchmarks=fillseq", "--num=10"])
            .arg(format!("--db-engine={}", store.name))
            .arg(format!("--db={}", project.display()))
            .output()
            .unwrap();
        assert_refused(&o, "nothing was changed", &format!("{} bench", store.name));
        assert!(
            snapshot(&project) == before,
            "{}: bench changed the project",
            store.name
        );
    }
}
