//! The Rust-native engines, fjall (LSM) and redb (B-tree), through the
//! `ycsb` binary: every surface and every failure the other embedded
//! engines are held to, one table of engines driving each case.

mod common;
mod rel_support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::*;
use rel_support::*;

/// What a case needs to know of an engine: its property names and what
/// it shows.
struct Engine {
    name: &'static str,
    /// The property naming its data directory.
    dir: &'static str,
    /// Properties for a fast unsynced run (redb syncs every commit by
    /// default, which the data-shape tests do not need).
    fast: &'static [&'static str],
    /// A gauge every status line carries.
    gauge: &'static str,
    /// Its statistics report.
    report: &'static str,
    /// What the report always says.
    report_says: &'static str,
}

const ENGINES: &[Engine] = &[
    Engine {
        name: "fjall",
        dir: "fjall.dir",
        fast: &[],
        gauge: "fjall.num-files-at-level0",
        report: "fjall.stats",
        report_says: "tables=",
    },
    Engine {
        name: "redb",
        dir: "redb.path",
        fast: &["-p", "redb.durability=none"],
        gauge: "redb.tree-height",
        report: "redb.stats",
        report_says: "leaf_pages=",
    },
];

impl Engine {
    /// `-p <dir property>=<path>`.
    fn at(&self, path: &Path) -> [String; 2] {
        ["-p".to_string(), format!("{}={}", self.dir, path.display())]
    }

    /// `-P <engine>/<engine>.properties`: the shipped file.
    fn shipped(&self) -> [String; 2] {
        ["-P".to_string(), format!("{0}/{0}.properties", self.name)]
    }
}

fn ycsb_ok(args: &[&str], extra: &[&[String]]) -> String {
    let o = ycsb_out(args, extra);
    assert!(o.status.success(), "{args:?} {extra:?}: {}", stderr(&o));
    stdout(&o)
}

fn ycsb_out(args: &[&str], extra: &[&[String]]) -> Output {
    ycsb().args(args).args(extra.concat()).output().unwrap()
}

fn figure(out: &str, section: &str, name: &str) -> u64 {
    report_value(out, section, name)
        .unwrap_or_else(|| panic!("no [{section}], {name} in: {out}"))
        .parse()
        .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_engines_are_registered() {
    let stores = registered_stores();
    for e in ENGINES {
        assert!(stores.iter().any(|s| s == e.name), "{stores:?}");
    }
}

/// Workload A with data integrity: loaded with the shipped properties in
/// one process, run in a second, every record read back and verified in a
/// third; `-s` status lines carry the engine's gauges; the engine version
/// is on standard error.
#[test]
fn workload_a_with_integrity_across_three_processes() {
    for e in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let at = e.at(&dir.path().join("db"));
        let fast = strings(e.fast);
        let shape = strings(&INTEGRITY_RECORDS);
        let load = ycsb_out(
            &["load", e.name, "-P", "workloads/workloada", "-threads", "4"],
            &[&e.shipped(), &at, &fast, &shape],
        );
        assert!(load.status.success(), "{}: {}", e.name, stderr(&load));
        assert_eq!(figure(&stdout(&load), "INSERT", "Return=OK"), 2000);
        assert!(
            stderr(&load).contains(&format!("load phase: 4 threads, {} ", e.name)),
            "{}: engine version not said: {}",
            e.name,
            stderr(&load)
        );
        let run = ycsb_out(
            &[
                "run",
                e.name,
                "-P",
                "workloads/workloada",
                "-threads",
                "4",
                "-p",
                "operationcount=3000",
                "-s",
                "-p",
                "status.interval=1",
                // Status lines show engine gauges only when asked.
                "-p",
                "status.gauges=all",
            ],
            &[&e.shipped(), &at, &fast, &shape],
        );
        assert!(run.status.success(), "{}: {}", e.name, stderr(&run));
        let out = stdout(&run);
        assert!(
            !out.contains("NOT_FOUND") && !out.contains("ERROR"),
            "{out}"
        );
        let reads = figure(&out, "READ", "Return=OK");
        assert_eq!(figure(&out, "VERIFY", "Return=OK"), reads, "{out}");
        assert!(figure(&out, "UPDATE", "Return=OK") > 0, "{out}");
        assert!(
            stderr(&run).contains(&format!("{}=", e.gauge)),
            "{}: {}",
            e.name,
            stderr(&run)
        );
        // Every record, updated or not, reads back intact in a third
        // process.
        let out = ycsb_ok(
            &[&["run", e.name][..], &READ_EACH_RECORD].concat(),
            &[&at, &fast, &shape],
        );
        assert_eq!(figure(&out, "VERIFY", "Return=OK"), 2000, "{out}");
    }
}

/// Workload E: scans in key order from a reopened database, with inserts
/// between them.
#[test]
fn workload_e_scans_a_reopened_database() {
    for e in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let at = e.at(&dir.path().join("db"));
        let fast = strings(e.fast);
        let sizes = strings(&["-p", "recordcount=1000", "-p", "operationcount=1000"]);
        ycsb_ok(
            &["load", e.name, "-P", "workloads/workloade"],
            &[&at, &fast, &sizes],
        );
        let out = ycsb_ok(
            &["run", e.name, "-P", "workloads/workloade"],
            &[&at, &fast, &sizes],
        );
        let scans = figure(&out, "SCAN", "Return=OK");
        assert!(scans > 900, "{}: {out}", e.name);
        assert_eq!(
            scans + figure(&out, "INSERT", "Return=OK"),
            1000,
            "{}: {out}",
            e.name
        );
        assert!(!out.contains("Return=ERROR"), "{out}");
    }
}

/// The JSON export names the engine and its exact version, and carries
/// the engine's reports, which are also saved beside it; the time series
/// has the engine's gauges and the amplification figures.
#[test]
fn export_names_the_engine_version_and_carries_its_reports() {
    for e in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("out.json");
        let series = dir.path().join("series.jsonl");
        ycsb_ok(
            &[
                "-load",
                "-run",
                "-db",
                e.name,
                "-P",
                "workloads/workloada",
                "-p",
                "recordcount=1000",
                "-p",
                "operationcount=1000",
                "-p",
                "exporter=json",
            ],
            &[
                &e.at(&dir.path().join("db")),
                &strings(e.fast),
                &[
                    "-p".into(),
                    format!("exportfile={}", export.display()),
                    "-p".into(),
                    format!("timeseries.file={}", series.display()),
                ],
            ],
        );
        let json = read_json(&export);
        assert_eq!(json["metadata"]["store"], e.name);
        let version = json["metadata"]["engine_version"].as_str().unwrap_or("");
        assert_eq!(version.split('.').count(), 3, "{}: {version:?}", e.name);
        let reports = json["engine_reports"].as_array().expect("engine reports");
        let stats = reports
            .iter()
            .find(|r| r["name"] == e.report)
            .expect(e.report);
        let text = stats["text"].as_str().unwrap();
        assert!(text.contains(e.report_says), "{}: {text}", e.name);
        let saved = dir.path().join(format!("out.json.{}.txt", e.report));
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), text);
        let options = dir.path().join(format!("out.json.{}.options.txt", e.name));
        assert!(
            std::fs::read_to_string(&options)
                .unwrap()
                .contains(&format!("version={version}\n")),
            "{}",
            e.name
        );
        let rows = std::fs::read_to_string(&series).unwrap();
        let last: serde_json::Value =
            serde_json::from_str(rows.lines().last().expect("a time-series row")).unwrap();
        assert!(last["gauges"][e.gauge].is_number(), "{}: {last}", e.name);
        for phase in json["phases"].as_array().unwrap() {
            let amp = &phase["observation"]["amplification"];
            assert!(amp.is_object(), "{}: {phase}", e.name);
        }
    }
}

/// Every file under `dir`, with contents and times: what "untouched" is
/// checked against.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>, std::time::SystemTime)> {
    files_under(dir)
        .into_iter()
        .map(|path| {
            let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
            let contents = std::fs::read(&path).unwrap();
            (path, contents, modified)
        })
        .collect()
}

/// A directory of another engine, or of someone's files, is refused with
/// one line naming it (exit 2), and left exactly as it was, even with
/// `destroy=true`.
#[test]
fn foreign_directories_are_refused_untouched() {
    let root = tempfile::tempdir().unwrap();
    // One database of every other embedded engine, and plain files.
    let mut foreign = Vec::new();
    for maker in ["leveldb", "fjall", "redb"] {
        let db = root.path().join(maker);
        let dir_property = match maker {
            "leveldb" => "leveldb.dbname",
            "fjall" => "fjall.dir",
            _ => "redb.path",
        };
        ycsb_ok(
            &[
                "load",
                maker,
                "-p",
                "recordcount=50",
                "-p",
                "redb.durability=none",
            ],
            &[&["-p".to_string(), format!("{dir_property}={}", db.display())]],
        );
        foreign.push((maker, db));
    }
    let plain = root.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("notes.txt"), "keep me\n").unwrap();
    foreign.push(("files", plain));
    for e in ENGINES {
        for (maker, db) in foreign.iter().filter(|(m, _)| *m != e.name) {
            let before = snapshot(db);
            for destroy in ["false", "true"] {
                let o = ycsb_out(
                    &["load", e.name, "-p", "recordcount=10"],
                    &[
                        &e.at(db),
                        &["-p".into(), format!("{}.destroy={destroy}", e.name)],
                    ],
                );
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(2), "{} on {maker}: {err}", e.name);
                let error = one_error_line(&err);
                assert!(
                    error.contains(&db.display().to_string())
                        && error.contains("nothing was changed"),
                    "{}",
                    error
                );
                assert!(!err.contains("panicked"), "{err}");
            }
            assert!(
                snapshot(db) == before,
                "{} changed {maker}'s directory",
                e.name
            );
        }
    }
}

/// A database another `ycsb` process has open is refused (exit 2, one
/// line saying it is locked), and the holder goes on unharmed.
#[test]
fn a_database_held_by_another_process_is_refused() {
    for e in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let at = e.at(&dir.path().join("db"));
        let (mut holder, mut lines) = spawn_watched(
            ycsb()
                .args(["load", e.name, "-p", "recordcount=100000000"])
                .args(["-s", "-p", "status.interval=1"])
                .args(&at)
                .args(e.fast),
        );
        lines
            .wait_for(Duration::from_secs(60), |l| l.contains(" sec: "))
            .unwrap_or_else(|| panic!("{}: no status line: {:?}", e.name, lines.seen));
        let o = ycsb_out(&["run", e.name, "-p", "operationcount=10"], &[&at]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", e.name);
        assert!(err.contains("is in use"), "{}: {err}", e.name);
        signal(&holder, SIGTERM);
        let status = wait_bounded(&mut holder, Duration::from_secs(60), "the holder");
        assert_eq!(status.code(), Some(130), "{}: {}", e.name, lines.rest());
    }
}

/// A database on a read-only file system, and a new one there: exit 2,
/// one line with the path and the system's reason.
#[test]
fn a_read_only_file_system_is_a_clear_error() {
    let fs = Tmpfs::mount("4m");
    for e in ENGINES {
        ycsb_ok(
            &["load", e.name, "-p", "recordcount=20"],
            &[&e.at(&fs.path().join(e.name)), &strings(e.fast)],
        );
    }
    let remount = std::process::Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(fs.path())
        .output()
        .unwrap();
    assert!(remount.status.success(), "{}", stderr(&remount));
    for e in ENGINES {
        for db in [fs.path().join(e.name), fs.path().join("new")] {
            let o = ycsb_out(
                &[
                    "run",
                    e.name,
                    "-p",
                    "recordcount=20",
                    "-p",
                    "operationcount=20",
                ],
                &[&e.at(&db)],
            );
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{}: {err}", e.name);
            let error = one_error_line(&err);
            assert!(
                error.contains(&db.display().to_string())
                    && error.contains("Read-only file system"),
                "{}",
                error
            );
        }
    }
}

/// A load that fills an 8 MB tmpfs: exit 1, the engine's reason, and the
/// export of what ran. Every embedded engine's default settings are run in
/// faults.rs; here redb both ways: synced commits fail as the disk fills;
/// unsynced ones fail at the close, which makes them durable (12 000
/// records of 1 KB are enough to overfill 8 MB, and unsynced inserts do
/// not stop early).
#[test]
fn a_load_that_fills_the_disk_ends_with_a_clear_error() {
    for (e, durability, records) in [
        (&ENGINES[1], &["-p", "redb.durability=immediate"][..], 50000),
        (&ENGINES[1], &["-p", "redb.durability=none"][..], 12000),
    ] {
        let fs = Tmpfs::mount("8m");
        let out = tempfile::tempdir().unwrap();
        let export = out.path().join("load.json");
        let o = ycsb_out(
            &[
                "load",
                e.name,
                "-P",
                "workloads/workloada",
                "-threads",
                "2",
                "-p",
                "exporter=json",
            ],
            &[
                &e.at(&fs.path().join("db")),
                &["-p".into(), format!("recordcount={records}")],
                &strings(durability),
                &["-p".into(), format!("exportfile={}", export.display())],
            ],
        );
        let err = stderr(&o);
        let case = format!("{} {durability:?}", e.name);
        assert!(!err.contains("panicked"), "{case}: {err}");
        assert_eq!(o.status.code(), Some(1), "{case}: {err}");
        assert!(err.contains("No space left on device"), "{case}: {err}");
        let json = read_json(&export);
        let load = &json["phases"][0];
        if durability.contains(&"redb.durability=none") {
            // Every insert was acknowledged; the close said they are not
            // all on disk.
            assert!(
                err.contains("ycsb: error: closing the store: "),
                "{case}: {err}"
            );
        } else {
            assert!(err.contains("load phase incomplete"), "{case}: {err}");
            assert!(returns(load, "INSERT", "ERROR") >= 1, "{case}: {load}");
            assert!(returns(load, "INSERT", "OK") < records, "{case}: {load}");
        }
    }
}

/// `ycsb bench` with db_bench's vocabulary: fill, then read what was
/// filled in a second process with `--use_existing_db`.
#[test]
fn bench_fills_then_reads_the_existing_database() {
    for e in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("--db={}", dir.path().join("db").display());
        let base = [
            "bench",
            "--db-engine",
            e.name,
            "--num=2000",
            "--cache_size=8388608",
        ];
        let out = ycsb_ok(
            &[&base[..], &["--benchmarks=fillseq,stats", &db]].concat(),
            &[&strings(e.fast)],
        );
        assert!(out.contains("fillseq"), "{}: {out}", e.name);
        assert!(out.contains(e.report), "{}: stats: {out}", e.name);
        let out = ycsb_ok(
            &[
                &base[..],
                &["--benchmarks=readrandom", "--use_existing_db=1", &db],
            ]
            .concat(),
            &[&strings(e.fast)],
        );
        assert!(out.contains("(2000 of 2000 found)"), "{}: {out}", e.name);
    }
}

/// `ycsb serve <engine>`: the redis store loads and runs workload A with
/// data integrity against it over RESP.
#[test]
fn serve_embeds_the_engine_for_the_redis_store() {
    for e in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let (mut server, mut lines) = spawn_watched(
            ycsb()
                .args(["serve", e.name, "--resp", "0", "--http", "off"])
                .args(e.at(&dir.path().join("db")))
                .args(e.fast),
        );
        let line = lines
            .wait_for(Duration::from_secs(30), |l| l.contains(" over RESP at "))
            .unwrap_or_else(|| panic!("{}: no address: {:?}", e.name, lines.seen));
        let port = line
            .split(" over RESP at ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|a| a.rsplit(':').next())
            .unwrap()
            .to_string();
        let client = strings(&[
            "-p",
            &format!("redis.port={port}"),
            "-p",
            "redis.index=lex",
            "-p",
            "recordcount=500",
            "-p",
            "operationcount=1000",
            "-p",
            "dataintegrity=true",
        ]);
        ycsb_ok(&["load", "redis", "-P", "workloads/workloada"], &[&client]);
        let out = ycsb_ok(&["run", "redis", "-P", "workloads/workloada"], &[&client]);
        let reads = figure(&out, "READ", "Return=OK");
        assert_eq!(figure(&out, "VERIFY", "Return=OK"), reads, "{out}");
        signal(&server, SIGTERM);
        let status = wait_bounded(&mut server, Duration::from_secs(30), "ycsb serve");
        assert!(status.success(), "{}: {}", e.name, lines.rest());
    }
}
