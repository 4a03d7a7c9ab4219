//! The invariant "nothing outside the store crates switches on a store's
//! name": the non-test code of the orchestration crates spells no store
//! name and no store property name; what they need to know about a store
//! comes from its descriptor. Adding a store must not mean editing them.

mod common;

use std::path::Path;

use common::{root, rust_files};

/// The crates that must know stores only through the registry.
const ORCHESTRATION: &[&str] = &[
    "crates/ycsb-core/src",
    "crates/ycsb-cli/src",
    "crates/ycsb-dbbench/src",
    "crates/ycsb-experiment/src",
    "xtask/src",
];

/// Places that name a store on purpose: (file, the quoted text, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "crates/ycsb-core/src/measurement/settings.rs",
        "\"basic\"",
        "YCSB-cpp's measurementtype=basic, a measurement type, not the store",
    ),
    (
        "crates/ycsb-cli/src/bench.rs",
        "\"rocksdb\"",
        "ycsb bench's default store, as db_bench's",
    ),
    (
        "crates/ycsb-dbbench/src/args.rs",
        "\"rocksdb\"",
        "ycsb bench's default store, as db_bench's",
    ),
    (
        "crates/ycsb-experiment/src/proc.rs",
        "\"memory\"",
        "the cgroup memory controller, not the store",
    ),
    (
        "xtask/src/bench.rs",
        "\"basic",
        "the client's own cost is measured on the store that does nothing",
    ),
    (
        "xtask/src/overhead.rs",
        "\"basic",
        "the client's own cost is measured on the store that does nothing",
    ),
    (
        "xtask/src/dbbench.rs",
        "\"rocksdb\"",
        "compares ycsb bench with RocksDB's own db_bench",
    ),
    (
        "xtask/src/engine_bench.rs",
        "\"rocksdb\"",
        "the direct-engine loops this bench compares with exist per engine",
    ),
    (
        "xtask/src/engine_bench.rs",
        "\"leveldb\"",
        "the direct-engine loops this bench compares with exist per engine",
    ),
    (
        "xtask/src/engine_bench.rs",
        "\"lmdb\"",
        "YCSB-cpp has bindings for these engines only (YCSB_CPP_ENGINES)",
    ),
    (
        "xtask/src/engine_bench.rs",
        "\"sqlite\"",
        "YCSB-cpp has bindings for these engines only (YCSB_CPP_ENGINES)",
    ),
    (
        "xtask/src/main.rs",
        "\"etcd\"",
        "the Debian package's service, stopped after installing it (not the store)",
    ),
    (
        "xtask/src/main.rs",
        "\"memcached\"",
        "the Debian package of the server and its service, stopped after installing it (not the store)",
    ),
    (
        "crates/ycsb-experiment/src/matrix/axes.rs",
        "\"memcached\"",
        "the server a matrix starts (server = \"memcached\"), as it names redis-server",
    ),
    (
        "crates/ycsb-experiment/src/run/command.rs",
        "\"memcached\"",
        "the server program a cell starts, as it names redis-server",
    ),
    (
        "xtask/src/engine_bench.rs",
        "\"lmdb\"",
        "YCSB-cpp has bindings for these engines and not for others",
    ),
    (
        "xtask/src/engine_bench.rs",
        "\"sqlite\"",
        "YCSB-cpp has bindings for these engines and not for others",
    ),
    (
        "xtask/src/engine_bench.rs",
        "\"wiredtiger\"",
        "the direct-engine loops this bench compares with exist per engine",
    ),
    (
        "xtask/src/engines.rs",
        "\"rocksdb\"",
        "builds the engines' release libraries, which exist per engine",
    ),
    (
        "xtask/src/engines.rs",
        "\"leveldb\"",
        "builds the engines' release libraries, which exist per engine",
    ),
    (
        "xtask/src/redis_bench.rs",
        "\"redis",
        "compares the redis store with redis-benchmark",
    ),
    (
        "xtask/src/pg_bench.rs",
        "\"jdbc",
        "compares the jdbc store with pgbench on a PostgreSQL it starts",
    ),
    (
        "xtask/src/pg_bench.rs",
        "\"db.",
        "points the jdbc store at the PostgreSQL it starts",
    ),
    (
        "xtask/src/memcached_bench.rs",
        "\"memcached",
        "compares the memcached store with memaslap on a memcached it starts",
    ),
];

/// The file's code before its test module, without comment lines; `None`
/// for a file of tests.
fn non_test_code(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    if name == "tests.rs" || name.ends_with("_tests.rs") || name.contains("fuzz") {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    Some(
        code.lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// Every quoted store name (`"rocksdb"`) and store property (`"rocksdb.`
/// as a prefix of a declared property).
fn needles() -> Vec<String> {
    let mut needles = Vec::new();
    for store in ycsb_stores::STORES {
        needles.push(format!("\"{}\"", store.name));
        for decl in store.properties {
            for name in std::iter::once(decl.name).chain(decl.aliases.iter().copied()) {
                needles.push(format!("\"{name}"));
            }
        }
    }
    needles
}

#[test]
fn orchestration_code_names_no_store() {
    let root = root();
    let needles = needles();
    let mut found = Vec::new();
    for dir in ORCHESTRATION {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        for file in files {
            let relative = file
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            let Some(code) = non_test_code(&file) else {
                continue;
            };
            for (number, line) in code.lines().enumerate() {
                for needle in &needles {
                    let allowed = ALLOWED
                        .iter()
                        .any(|(f, text, _)| *f == relative && needle.starts_with(text));
                    if line.contains(needle.as_str()) && !allowed {
                        found.push(format!(
                            "{relative}:{}: {needle}: {}",
                            number + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "store names outside the store crates (use the store's descriptor):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_a_store_name() {
    let needles = needles();
    assert!(needles.iter().any(|n| n == "\"rocksdb\""));
    assert!(needles.iter().any(|n| n == "\"leveldb.dbname"));
    let line = r#"let dir = props.get_str("leveldb.dbname");"#;
    assert!(needles.iter().any(|n| line.contains(n.as_str())));
}
