//! End-to-end tests of `cargo xtask experiment` when cells fail, with the
//! real `ycsb` binary on cheap stores: a failed cell (or a failed shared
//! load, which fails the cells that would run on its data) does not stop
//! the matrix; the failures and their reasons are in the summaries and the
//! report, and the experiment exits with status 1. The runner never
//! deletes or replaces what it did not make; a refused matrix is bad
//! input (status 2).

mod common;

use std::path::{Path, PathBuf};

use common::{read, run_experiment, write_matrix};

/// The matrix file `m.toml` in `dir`, on workload A.
fn matrix(dir: &Path, body: &str) -> PathBuf {
    write_matrix(&dir.join("m.toml"), "workloada", body)
}

/// The shared load of the first db fails (its store refuses a property),
/// so its two run cells fail without running; the other db's load and
/// cells still run, and everything is in the summaries with the reasons.
#[test]
fn a_failed_shared_load_fails_only_its_cells_and_the_matrix_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(
        tmp.path(),
        r#"name = "loads"
reuse_load_across = ["threadcount"]

[properties]
recordcount = 100
operationcount = 200

[axes]
db = ["broken", "leveldb"]
threadcount = [1, 2]

[db.broken]
store = "leveldb"
properties = { "leveldb.cache_size" = "lots" }
"#,
    );
    let results = tmp.path().join("results");
    let (out, err) = run_experiment(&m, &results, &[]);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("experiment: 4 cells run, 0 already complete, 3 failed"),
        "{err}"
    );
    assert!(
        err.contains(
            "3 cells failed (rerun to retry them): load,db=broken,r1 db=broken,threadcount=1,r1 db=broken,threadcount=2,r1"
        ),
        "{err}"
    );
    let e = results.join("loads");
    let cells = e.join("cells");
    for done in ["db=leveldb,threadcount=1,r1", "db=leveldb,threadcount=2,r1"] {
        assert!(
            cells.join(done).join("cell.json").is_file(),
            "{done}: {err}"
        );
    }
    // The load's own reason, and the run cells' pointing at it.
    let failed_load = read(
        &e.join("loads")
            .join(".failed-load,db=broken,r1")
            .join("failure.txt"),
    );
    assert!(
        failed_load.contains("exited with") && failed_load.contains("leveldb.cache_size"),
        "{failed_load}"
    );
    let dependent = "its shared load load,db=broken,r1 failed";
    let csv = read(&e.join("summary-failed.csv"));
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(
        csv.starts_with("db,threadcount,repeat,cell,reason\n"),
        "{csv}"
    );
    assert!(
        csv.contains("broken,1,1,\"db=broken,threadcount=1,r1\",")
            && csv.contains(dependent)
            && csv.contains("leveldb.cache_size"),
        "{csv}"
    );
    let md = read(&e.join("summary.md"));
    assert!(
        md.contains("### Failed cells") && md.contains(dependent) && md.contains("| leveldb | "),
        "{md}"
    );
    let run = read(&e.join("summary-run.csv"));
    assert_eq!(run.lines().count(), 3, "the two leveldb rows: {run}");
    let html = read(&e.join("report.html"));
    assert!(
        html.contains("<section id=\"failed\"><h2>Failed cells</h2>") && html.contains(dependent),
        "the report names the failures"
    );
    // --report alone finds the same failures in what the run kept.
    let (out, err) = run_experiment(&m, &results, &["--report"]);
    assert!(out.status.success(), "{err}");
    assert_eq!(read(&e.join("summary-failed.csv")), csv);
}

/// Directories the runner did not make, where it would replace a cell,
/// write a partial cell or put a cell's data, are left as they are: those
/// cells fail saying so, the others run.
#[test]
fn the_runner_never_replaces_what_it_did_not_make() {
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(
        tmp.path(),
        r#"name = "own"

[properties]
recordcount = 50
operationcount = 100

[axes]
db = ["basic", "memory"]
fieldlength = [8, 16]
"#,
    );
    let results = tmp.path().join("results");
    let (out, err) = run_experiment(&m, &results, &[]);
    assert!(out.status.success(), "{err}");
    let e = results.join("own");
    let cells = e.join("cells");
    let foreign = |dir: &Path| {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    };
    // Where a complete cell would be renamed to.
    foreign(&cells.join("db=basic,fieldlength=8,r1"));
    // Where a cell is written before the rename (not a leftover to delete).
    std::fs::remove_dir_all(cells.join("db=memory,fieldlength=8,r1")).unwrap();
    foreign(&cells.join(".partial-db=memory,fieldlength=8,r1"));
    // Where a cell's DB directory goes: a regular file.
    std::fs::remove_dir_all(cells.join("db=basic,fieldlength=16,r1")).unwrap();
    std::fs::write(e.join("data").join("db=basic,fieldlength=16,r1"), "mine\n").unwrap();

    let (out, err) = run_experiment(&m, &results, &[]);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("3 cells run, 1 already complete, 3 failed"),
        "{err}"
    );
    assert_eq!(
        err.matches("was not made by cargo xtask experiment")
            .count(),
        3,
        "{err}"
    );
    for dir in [
        cells.join("db=basic,fieldlength=8,r1"),
        cells.join(".partial-db=memory,fieldlength=8,r1"),
    ] {
        assert_eq!(read(&dir.join("notes.txt")), "mine\n");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "{}",
            dir.display()
        );
    }
    assert_eq!(
        read(&e.join("data").join("db=basic,fieldlength=16,r1")),
        "mine\n"
    );
    assert!(cells
        .join("db=memory,fieldlength=16,r1")
        .join("cell.json")
        .is_file());
    let csv = read(&e.join("summary-failed.csv"));
    assert_eq!(csv.lines().count(), 4, "{csv}");
}

/// A matrix whose name would put results outside `--results` is refused
/// with one line naming file:line, status 2, nothing written.
#[test]
fn a_matrix_name_outside_the_results_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(tmp.path(), "name = \"..\"\n[axes]\ndb = [\"memory\"]\n");
    for extra in [&["--check"][..], &[]] {
        let (out, err) = run_experiment(&m, &tmp.path().join("results"), extra);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("m.toml:4: experiment.name '..' cannot name a directory"),
            "{err}"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["m.toml"]);
}
