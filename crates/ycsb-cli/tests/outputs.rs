//! Issue 17 (reliability), items 1 and 3: what the tool writes.
//!
//! A device, FIFO or symbolic link at an output path is written, never
//! replaced by a regular file (as root, `-p exportfile=/dev/null` used to
//! replace /dev/null); an HdrHistogram log that cannot be written fails
//! the run (exit 1) with the report and export still written; an export
//! that cannot be written still prints the text report on standard output.
//!
//! Devices are made with mknod inside the test's temp dir (`c 1 3`, the
//! null device; `c 1 7`, the full device); where mknod is not permitted
//! the case is skipped with the reason printed.

mod common;

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// A short benchmark writing a JSON export to `export`.
fn run_with_export(export: &Path, extra: &[&str]) -> std::process::Output {
    let mut cmd = ycsb();
    cmd.args([
        "run",
        "basic",
        "-p",
        "recordcount=10",
        "-p",
        "operationcount=50",
        "-p",
        "exporter=json",
    ]);
    for a in extra {
        cmd.args(["-p", a]);
    }
    cmd.arg("-p")
        .arg(format!("exportfile={}", export.display()))
        .output()
        .unwrap()
}

/// A character device `major:minor` at `dir/name`, or `None` (with the
/// reason printed) where devices cannot be made or opened here.
fn device(dir: &Path, name: &str, major: u32, minor: u32) -> Option<PathBuf> {
    let path = dir.join(name);
    let made = Command::new("mknod")
        .arg(&path)
        .args(["c", &major.to_string(), &minor.to_string()])
        .stderr(Stdio::piped())
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!(
                "skipped: mknod is not permitted here: {}",
                stderr(&o).trim()
            );
            return None;
        }
        Err(e) => {
            eprintln!("skipped: mknod cannot run: {e}");
            return None;
        }
    }
    if let Err(e) = std::fs::OpenOptions::new().write(true).open(&path) {
        eprintln!("skipped: a device made by mknod cannot be opened here: {e}");
        return None;
    }
    Some(path)
}

fn is_char_device(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

fn mkfifo(path: &Path) -> bool {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: mkfifo failed");
    }
    ok
}

/// A JSON export to read back.
fn export_of_a_run(dir: &Path) -> PathBuf {
    let export = dir.join("export.json");
    let o = run_with_export(&export, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    export
}

#[test]
fn an_export_to_a_device_writes_the_device_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(null) = device(dir.path(), "null", 1, 3) else {
        return;
    };
    let o = run_with_export(&null, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_char_device(&null), "the device was replaced");

    // The same for ycsb merge -o and ycsb report -o.
    let export = export_of_a_run(dir.path());
    let o = ycsb()
        .args(["merge", "-o"])
        .arg(&null)
        .arg(&export)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_char_device(&null), "merge -o replaced the device");
    let Some(page) = device(dir.path(), "page.html", 1, 3) else {
        return;
    };
    ycsb_report(&[&export], &page);
    assert!(is_char_device(&page), "report -o replaced the device");
}

#[test]
fn an_export_to_a_fifo_goes_to_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    if !mkfifo(&fifo) {
        return;
    }
    // The reader: a child process, so that a FIFO replaced by a regular
    // file (the reader then never gets a writer) is killed, not hung on.
    let mut reader = Command::new("cat")
        .arg(&fifo)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let o = run_with_export(&fifo, &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while reader.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished = reader.try_wait().unwrap().is_some();
    if !finished {
        reader.kill().unwrap();
        reader.wait().unwrap();
    }
    let mut read = String::new();
    reader
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut read)
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(finished, "the FIFO's reader got no writer");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
    let json: serde_json::Value = serde_json::from_str(&read).unwrap();
    assert_eq!(json["phases"][0]["phase"], "run", "{read}");
}

#[test]
fn an_export_through_a_symlink_replaces_the_file_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = run_with_export(&link, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(json["phases"][0]["phase"], "run");
    // Only the two names: no temporary file left beside either.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["link.json", "real.json"]);

    // A dangling link: the file it names is created.
    let gone = dir.path().join("gone.json");
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink(&gone, &dangling).unwrap();
    let export = export_of_a_run(dir.path());
    let o = ycsb()
        .args(["merge", "-o"])
        .arg(&dangling)
        .arg(&export)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&gone)
        .unwrap()
        .contains("\"phases\""));
}

/// Item 3: a full disk under the HdrHistogram logs (each log a link to
/// the full device) fails the run, and the export is still written.
#[test]
fn hdr_logs_that_cannot_be_written_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let Some(full) = device(dir.path(), "full", 1, 7) else {
        return;
    };
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    for name in ["READ.hdr", "UPDATE.hdr"] {
        std::os::unix::fs::symlink(&full, logs.join(name)).unwrap();
    }
    let export = dir.path().join("export.json");
    let prefix = format!("hdrhistogram.output.path={}/", logs.display());
    let o = run_with_export(&export, &["hdrhistogram.fileoutput=true", &prefix]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("HdrHistogram log") && err.contains("No space left on device"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(json["phases"][0]["phase"], "run", "the export is written");
}

/// Item 3: an export that cannot be written (a full disk) fails the run
/// and the results still reach standard output as the text report.
#[test]
fn an_export_that_cannot_be_written_prints_the_text_report() {
    let dir = tempfile::tempdir().unwrap();
    let Some(full) = device(dir.path(), "full", 1, 7) else {
        return;
    };
    let o = run_with_export(&full, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(is_char_device(&full), "the device was replaced");
    let out = stdout(&o);
    assert!(
        report_value(&out, "OVERALL", "RunTime(ms)").is_some(),
        "no text report on stdout: {out}"
    );
    assert!(report_value(&out, "READ", "Operations").is_some(), "{out}");
}

/// A short leveldb benchmark (it has engine reports) exporting to
/// `export`.
fn leveldb_with_export(dir: &Path, export: &Path) -> std::process::Output {
    ycsb()
        .args(["run", "leveldb", "-p"])
        .arg(format!("leveldb.dbname={}", dir.join("db").display()))
        .args(["-p", "recordcount=10", "-p", "operationcount=50"])
        .args(json_export(export))
        .output()
        .unwrap()
}

/// Item 1: engine reports go beside a regular export file only; with a
/// device as the export nothing is created beside it.
#[test]
fn no_engine_report_is_created_beside_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let Some(null) = device(dir.path(), "null", 1, 3) else {
        return;
    };
    let o = leveldb_with_export(dir.path(), &null);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_char_device(&null), "the device was replaced");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["db", "null"], "files beside the device");
    assert!(stderr(&o).contains("engine reports are not written beside"));
}

/// Item 3: an engine report that cannot be written fails the run (a
/// directory in its way), with the export and the other reports written.
#[test]
fn an_engine_report_that_cannot_be_written_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("out.json");
    std::fs::create_dir(dir.path().join("out.json.leveldb.stats.txt")).unwrap();
    let o = leveldb_with_export(dir.path(), &export);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("out.json.leveldb.stats.txt") && err.contains("is a directory"),
        "{err}"
    );
    assert!(export.is_file(), "the export is written");
    assert!(dir.path().join("out.json.leveldb.options.txt").is_file());
}

/// Asserts that `o` is bad input: exit 2, one line on standard error
/// holding every needle, nothing on standard output.
fn assert_refused(what: &str, o: &std::process::Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{what}: '{needle}' not in {err}");
    }
    assert!(stdout(o).is_empty(), "{what}: {}", stdout(o));
}

/// Every file in `dir` with its bytes, sorted by name.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Issue 33 item 2: no output lands on the property file it was read with,
/// by any name (itself, `..`, a symbolic link, a hard link), whichever
/// output it is; the file is unchanged and nothing ran.
#[test]
fn no_output_replaces_a_property_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let workload = "recordcount=10\noperationcount=20\n";
    let wl = d.join("wl");
    std::fs::write(&wl, workload).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(&wl, d.join("alias")).unwrap();
    std::fs::hard_link(&wl, d.join("hard")).unwrap();
    let logs = d.join("logs");
    std::fs::create_dir(&logs).unwrap();
    let hdr_named = logs.join("READ.hdr");
    std::fs::write(&hdr_named, workload).unwrap();
    let cases: Vec<(PathBuf, Vec<String>)> = vec![
        (wl.clone(), vec![format!("exportfile={}", wl.display())]),
        (
            wl.clone(),
            vec![format!("exportfile={}/sub/../wl", d.display())],
        ),
        (
            wl.clone(),
            vec![format!("exportfile={}/alias", d.display())],
        ),
        (wl.clone(), vec![format!("exportfile={}/hard", d.display())]),
        (
            wl.clone(),
            vec![format!("timeseries.file={}", wl.display())],
        ),
        (
            wl.clone(),
            vec![
                "measurementtype=raw".into(),
                format!("measurement.raw.output_file={}/alias", d.display()),
            ],
        ),
        (
            wl.clone(),
            vec![
                "measurementtype=csv".into(),
                format!("measurement.output_file={}", wl.display()),
            ],
        ),
        (
            hdr_named.clone(),
            vec![
                "hdrhistogram.fileoutput=true".into(),
                format!("hdrhistogram.output.path={}/", logs.display()),
            ],
        ),
    ];
    for (input, properties) in cases {
        let mut cmd = ycsb();
        cmd.args(["run", "basic", "-P"]).arg(&input);
        for p in &properties {
            cmd.args(["-p", p]);
        }
        let o = cmd.output().unwrap();
        let what = properties.join(" ");
        let output = properties.last().unwrap().split('=').next().unwrap();
        assert_refused(
            &what,
            &o,
            &[
                output,
                &format!("the property file {} (read with -P)", input.display()),
                "-p flag",
            ],
        );
        assert_eq!(
            std::fs::read_to_string(&input).unwrap(),
            workload,
            "{what} changed the property file"
        );
    }
    // A property file whose every value a later -p replaced (or an empty
    // one) is still an input.
    for (name, text) in [("overridden", "recordcount=10\n"), ("empty", "")] {
        let file = d.join(name);
        std::fs::write(&file, text).unwrap();
        let o = ycsb()
            .args(["run", "basic", "-P"])
            .arg(&file)
            .args(["-p", "recordcount=20"])
            .arg("-p")
            .arg(format!("exportfile={}", file.display()))
            .output()
            .unwrap();
        assert_refused(
            name,
            &o,
            &[&format!(
                "the property file {} (read with -P)",
                file.display()
            )],
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "{name}");
    }
    // Two outputs on one file are refused too.
    let o = ycsb()
        .args(["run", "basic", "-P"])
        .arg(&wl)
        .arg("-p")
        .arg(format!("exportfile={}/out.json", d.display()))
        .arg("-p")
        .arg(format!("timeseries.file={}/sub/../out.json", d.display()))
        .output()
        .unwrap();
    assert_refused(
        "two outputs",
        &o,
        &["timeseries.file", "exportfile", "a file of its own"],
    );
    assert!(!d.join("out.json").exists());
}

/// Issue 33 item 2: nor does an output land on a file the workload reads
/// (`datafile`, `keyfile`).
#[test]
fn no_output_replaces_a_workload_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = root().join("crates/ycsb-cli/tests/data");
    for (property, file, extra) in [
        ("datafile", "bsd.csv", "keyfield=license,paragraph"),
        ("keyfile", "bsd.keys", "recordcount=3"),
    ] {
        let input = dir.path().join(file);
        std::fs::copy(data.join(file), &input).unwrap();
        let was = std::fs::read(&input).unwrap();
        let o = ycsb()
            .args(["run", "basic", "-p", extra, "-p"])
            .arg(format!("{property}={}", input.display()))
            .arg("-p")
            .arg(format!("exportfile={}/./{file}", dir.path().display()))
            .output()
            .unwrap();
        assert_refused(
            property,
            &o,
            &[
                "exportfile",
                &format!("{property}={}", input.display()),
                "never replaces an input",
            ],
        );
        assert_eq!(std::fs::read(&input).unwrap(), was, "{property} changed");
    }
}

/// Issue 33 item 2: `ycsb merge -o` and `ycsb report -o` never replace
/// one of their inputs, by name or through a link.
#[test]
fn merge_and_report_never_replace_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (c0, c1) = (d.join("c0.json"), d.join("c1.json"));
    std::fs::rename(export_of_a_run(d), &c0).unwrap();
    std::fs::rename(export_of_a_run(d), &c1).unwrap();
    let c0_was = std::fs::read(&c0).unwrap();
    let c1_was = std::fs::read(&c1).unwrap();
    std::os::unix::fs::symlink(&c1, d.join("link.json")).unwrap();
    for output in [c0.clone(), d.join("link.json")] {
        let o = ycsb()
            .args(["merge", "-o"])
            .arg(&output)
            .arg(&c0)
            .arg(&c1)
            .output()
            .unwrap();
        assert_refused("merge", &o, &["merge: -o", "is the same file as the input"]);
    }
    assert_eq!(
        std::fs::read(&c0).unwrap(),
        c0_was,
        "merge replaced its input"
    );
    assert_eq!(
        std::fs::read(&c1).unwrap(),
        c1_was,
        "merge replaced its input"
    );
    // An export named like a page is still an input of report.
    let page = d.join("page.html");
    std::fs::copy(&c0, &page).unwrap();
    let o = ycsb()
        .args(["report"])
        .arg(&page)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert_refused(
        "report",
        &o,
        &["report: -o", "is the same file as the export"],
    );
    assert_eq!(
        std::fs::read(&page).unwrap(),
        c0_was,
        "report replaced its input"
    );
}

/// Issue 33 item 2: nothing is written into an embedded store's open
/// database directory (the database file itself, a file beside it, the
/// HdrHistogram logs, through a link to the directory): refused before
/// the store opens, every file of the database unchanged, and it still
/// opens and reads.
#[test]
fn no_output_goes_into_the_database_directory() {
    for (store, property, file) in [
        ("sqlite", "sqlite.dbpath", "ycsb.sqlite"),
        ("lmdb", "lmdb.dbpath", "data.mdb"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let dbpath = format!("{property}={}", db.display());
        let o = ycsb()
            .args(["load", store, "-p", &dbpath, "-p", "recordcount=10"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{store}: {}", stderr(&o));
        std::os::unix::fs::symlink(&db, dir.path().join("link")).unwrap();
        let before = contents(&db);
        assert!(before.iter().any(|(name, _)| name == file), "{before:?}");
        for output in [
            format!("exportfile={}", db.join(file).display()),
            format!("exportfile={}", db.join("export.json").display()),
            format!("exportfile={}/link/{file}", dir.path().display()),
            format!("timeseries.file={}", db.join("series.csv").display()),
            format!("hdrhistogram.output.path={}/", db.display()),
        ] {
            let o = ycsb()
                .args(["run", store, "-p", &dbpath, "-p", "recordcount=10"])
                .args(["-p", "hdrhistogram.fileoutput=true", "-p", &output])
                .output()
                .unwrap();
            let name = output.split('=').next().unwrap();
            assert_refused(
                &format!("{store} {output}"),
                &o,
                &[
                    name,
                    &format!("inside the {store} database directory"),
                    property,
                ],
            );
        }
        assert_eq!(contents(&db), before, "{store}: the database changed");
        let o = ycsb()
            .args(["run", store, "-p", &dbpath, "-p", "recordcount=10"])
            .args(["-p", "operationcount=20", "-p", "readproportion=1"])
            .args(["-p", "updateproportion=0"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{store}: {}", stderr(&o));
        assert_eq!(
            report_value(&stdout(&o), "READ", "Return=OK").as_deref(),
            Some("20"),
            "{store}: {}",
            stdout(&o)
        );
    }
}
