//! Engine libraries are loaded when a store uses them, not when `ycsb`
//! starts (issue 37, item 4; `ycsb-lazylink`): a run of the basic store
//! loads no engine and no OpenSSL, and a run of each embedded engine loads
//! its library with `dlopen` and still names that file as its build.
//!
//! glibc's `LD_DEBUG=files` lists every object the dynamic loader maps and
//! why: `needed by` the program for a library linked into it, `dynamically
//! loaded by` for one opened with `dlopen` (whose own dependencies are
//! then `needed by` it).

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod common;
mod rel_support;

use common::*;
use rel_support::*;

/// The C runtime every Rust program on Linux needs: nothing else may be
/// loaded at start-up.
const RUNTIME: [&str; 4] = [
    "libc.so.6",
    "libm.so.6",
    "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
];

/// How the loader came to map an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loaded {
    /// Needed by the program or the C runtime: mapped before `main`.
    AtStartUp,
    /// Opened with `dlopen`, or needed by a library that was.
    OnUse,
}

/// The objects the loader mapped, each with how it came to.
fn loaded_objects(loader_log: &str) -> Vec<(String, Loaded)> {
    let mut opened: Vec<String> = Vec::new();
    let mut objects = Vec::new();
    for line in loader_log.lines() {
        let Some((file, how)) = line
            .split_once("file=")
            .and_then(|(_, r)| r.split_once(" ["))
        else {
            continue;
        };
        let file = file.trim().to_owned();
        let loaded = if how.contains("dynamically loaded by") {
            Loaded::OnUse
        } else if let Some((_, by)) = how.split_once("needed by ") {
            let by = by.split(" [").next().unwrap_or(by).trim();
            if opened.iter().any(|o| o == by) {
                Loaded::OnUse
            } else {
                Loaded::AtStartUp
            }
        } else {
            continue;
        };
        if loaded == Loaded::OnUse {
            // What it needs is listed under its full path.
            opened.push(file.clone());
            opened.push(resolved_path(&file));
        }
        objects.push((file, loaded));
    }
    objects
}

/// `file` as the loader names it once found: a soname resolves to a path
/// under a system library directory, which `needed by` lines then use.
fn resolved_path(file: &str) -> String {
    if file.contains('/') {
        return file.to_owned();
    }
    [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib",
    ]
    .iter()
    .map(|dir| format!("{dir}/{file}"))
    .find(|path| std::path::Path::new(path).exists())
    .unwrap_or_else(|| file.to_owned())
}

#[test]
fn the_log_parser_tells_start_up_from_use() {
    let log = "\
     1234:\tfile=libm.so.6 [0];  needed by /x/ycsb [0]\n\
     1234:\tfile=libm.so.6 [0];  generating link map\n\
     1234:\tfile=/usr/lib/librocksdb.so.7.8 [0];  dynamically loaded by /x/ycsb [0]\n\
     1234:\tfile=libgflags.so.2.2 [0];  needed by /usr/lib/librocksdb.so.7.8 [0]\n\
     [OVERALL], RunTime(ms), 1\n";
    assert_eq!(
        loaded_objects(log),
        [
            ("libm.so.6".to_owned(), Loaded::AtStartUp),
            ("/usr/lib/librocksdb.so.7.8".to_owned(), Loaded::OnUse),
            ("libgflags.so.2.2".to_owned(), Loaded::OnUse),
        ]
    );
}

#[test]
fn a_basic_run_loads_only_the_c_runtime() {
    let o = ycsb()
        .args(["-run", "-db", "basic", "-P", "workloads/workloada"])
        .args(["-p", "operationcount=10", "-p", "basic.silent=true"])
        .env("LD_DEBUG", "files")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let loaded = loaded_objects(&err);
    assert!(
        loaded.iter().any(|(file, _)| file == "libc.so.6"),
        "the loader's log was not read: {err}"
    );
    for (file, how) in &loaded {
        let name = file.rsplit('/').next().unwrap_or(file);
        assert!(
            RUNTIME.contains(&name),
            "{file} was loaded ({how:?}) by a run of the basic store"
        );
    }
}

#[test]
fn each_engine_loads_its_library_when_its_store_opens_and_names_it() {
    for engine in embedded_engines() {
        let dir = tempfile::tempdir().unwrap();
        let o = ycsb()
            .args(["-load", "-db", engine.name, "-P", "workloads/workloada"])
            .args(["-p", "recordcount=20", "-p"])
            .arg(format!(
                "{}={}",
                engine.dir_property,
                dir.path().join("db").display()
            ))
            .env("LD_DEBUG", "files")
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(o.status.success(), "{}: {err}", engine.name);
        let build = err
            .lines()
            .find_map(|l| l.strip_prefix("Engine: "))
            .unwrap_or_else(|| panic!("{}: no Engine line in {err}", engine.name));
        let loaded = loaded_objects(&err);
        for (file, how) in &loaded {
            let name = file.rsplit('/').next().unwrap_or(file);
            assert!(
                *how == Loaded::OnUse || RUNTIME.contains(&name),
                "{}: {file} was loaded at start-up",
                engine.name
            );
        }
        // An engine in a shared library (the C engines) is dlopen'ed, and
        // its build line names that file, not the ycsb program; a Rust
        // engine is compiled in and loads nothing.
        if let Some(library) = build.split(['(', ',']).nth(1).filter(|l| l.contains(".so")) {
            let opened: Vec<&str> = loaded
                .iter()
                .filter(|(_, how)| *how == Loaded::OnUse)
                .map(|(file, _)| file.rsplit('/').next().unwrap_or(file))
                .collect();
            let soname_stem = library
                .rsplit('/')
                .next()
                .unwrap()
                .split(".so")
                .next()
                .unwrap();
            assert!(
                opened.iter().any(|f| f.starts_with(soname_stem)),
                "{}: {library} is named but the loader opened {opened:?}",
                engine.name
            );
        }
    }
}
