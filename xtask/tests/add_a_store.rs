//! "A store is one crate and one registry line", tried for real: in a copy
//! of the workspace, the template of docs/store-template becomes a new
//! store crate, one line goes into the registry, `cargo xtask stores
//! --write` derives what cargo needs, and then the store builds into
//! `ycsb`, is listed by `ycsb stores`, documented by `ycsb properties`,
//! runs workload A with its integrity checked, and passes the conformance
//! kit (the template's own tests).
//!
//! The copy builds in its own target directory (`target/add-a-store`), so
//! that its `ycsb`, made with the new store alone, never replaces the one
//! the other tests run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the workspace")
        .to_path_buf()
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[track_caller]
fn succeeds(command: &mut Command) -> String {
    let out = command.output().expect("the command starts");
    assert!(out.status.success(), "{command:?} failed:\n{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The workspace's files (tracked, and new ones git does not ignore) copied
/// into `to`.
fn copy_workspace(from: &Path, to: &Path) {
    let listed = succeeds(Command::new("git").current_dir(from).args([
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
    ]));
    for name in listed.split('\0').filter(|n| !n.is_empty()) {
        let source = from.join(name);
        // A file deleted in the working tree but still in the index.
        if !source.is_file() {
            continue;
        }
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&source, &target).unwrap();
    }
}

/// The template, renamed: `mystore` becomes `name` in every file.
fn make_store_from_template(template: &Path, crate_dir: &Path, name: &str, type_name: &str) {
    for entry in ["Cargo.toml", "src/lib.rs", "tests/conformance.rs"] {
        let text = std::fs::read_to_string(template.join(entry)).unwrap();
        let text = text
            .replace("MyStore", type_name)
            .replace("MyThread", &format!("{type_name}Thread"))
            .replace("mystore", name);
        let target = crate_dir.join(entry);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, text).unwrap();
    }
}

/// The one registry line.
fn add_registry_line(lib_rs: &Path, name: &str) {
    let text = std::fs::read_to_string(lib_rs).unwrap();
    let marker = "    features: [\n";
    assert!(text.contains(marker), "the registry's form changed");
    let line = format!("        \"{name}\" => ycsb_{name}::DESCRIPTOR,\n");
    std::fs::write(lib_rs, text.replacen(marker, &format!("{marker}{line}"), 1)).unwrap();
}

#[test]
fn a_new_store_is_one_crate_and_one_registry_line() {
    let root = root();
    let copy = tempfile::tempdir().unwrap();
    let ws = copy.path();
    copy_workspace(&root, ws);
    make_store_from_template(
        &root.join("docs/store-template"),
        &ws.join("crates/ycsb-toy"),
        "toy",
        "ToyStore",
    );
    add_registry_line(&ws.join("crates/ycsb-stores/src/lib.rs"), "toy");

    // Until the derived lists are written, the check says so.
    let stale = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["stores", "--root"])
        .arg(ws)
        .output()
        .unwrap();
    assert!(!stale.status.success(), "{}", text(&stale));
    assert!(
        text(&stale).contains("cargo xtask stores --write"),
        "{}",
        text(&stale)
    );
    succeeds(
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(["stores", "--write", "--root"])
            .arg(ws),
    );

    let target = root.join("target").join("add-a-store");
    let cargo_in_copy = |args: &[&str]| {
        let mut c = Command::new(cargo());
        c.current_dir(ws)
            .env("CARGO_TARGET_DIR", &target)
            .args(args)
            .arg("--offline");
        c
    };
    // The store's own tests: the conformance kit and its capacity.
    succeeds(&mut cargo_in_copy(&["test", "-q", "-p", "ycsb-toy"]));
    // ycsb with the new store alone.
    succeeds(&mut cargo_in_copy(&[
        "build",
        "-q",
        "-p",
        "ycsb-cli",
        "--no-default-features",
        "--features",
        "toy",
    ]));
    let ycsb = target.join("debug").join("ycsb");
    let run = |args: &[&str]| succeeds(Command::new(&ycsb).current_dir(ws).args(args));

    let stores = run(&["stores"]);
    assert!(
        stores.lines().any(|l| l.starts_with("toy ")),
        "ycsb stores:\n{stores}"
    );
    let reference = run(&["properties", "--markdown"]);
    assert!(reference.contains("toy.capacity"), "{reference}");

    let report = run(&[
        "-load",
        "-run",
        "-db",
        "toy",
        "-P",
        "workloads/workloada",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=2000",
        "-p",
        "dataintegrity=true",
        "-p",
        "toy.capacity=500",
        "-threads",
        "2",
    ]);
    for line in [
        "[INSERT], Operations, 500",
        "[VERIFY], Return=OK,",
        "[READ], Return=OK,",
        "[UPDATE], Return=OK,",
    ] {
        assert!(report.contains(line), "no {line:?} in:\n{report}");
    }
    assert!(!report.contains("Return=ERROR"), "{report}");
    assert!(!report.contains("UNEXPECTED_STATE"), "{report}");
}
