//! `ycsb bench --db-engine rocksdb` against RocksDB's own `db_bench`
//! (Debian's rocksdb-tools, linked to the same librocksdb as the debug
//! build of `ycsb`): a user who types db_bench's command line gets the
//! database db_bench opens (the same OPTIONS file) and db_bench's key
//! sequence (the same `(N of M found)`).
//!
//! CI installs rocksdb-tools (`DEBIAN_PACKAGES`), so db_bench missing is a
//! failure, not a skip.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

const DB_BENCH: &str = "/usr/bin/db_bench";

/// Options that cannot be equal, each with the reason.
const MAY_DIFFER: &[(&str, &str)] = &[(
    "DBOptions.listeners",
    // db_bench installs `ErrorHandlerListener`, a class of its own
    // (tools/db_bench_tool.cc) that only prints; no other program has it.
    "db_bench's own listener class",
)];

fn db_bench(args: &[String]) -> Output {
    assert!(
        Path::new(DB_BENCH).exists(),
        "{DB_BENCH} is missing: install the rocksdb-tools package (cargo xtask deps)"
    );
    let out = Command::new(DB_BENCH)
        .args(args)
        .output()
        .expect("db_bench runs");
    assert!(out.status.success(), "db_bench {args:?}: {}", stderr(&out));
    out
}

fn ycsb_bench(args: &[String]) -> Option<Output> {
    let stores = run("stores");
    if !stdout(&stores).lines().any(|l| l.starts_with("rocksdb ")) {
        eprintln!("the ycsb binary has no rocksdb store; skipped");
        return None;
    }
    let out = ycsb()
        .args(["bench", "--db-engine=rocksdb"])
        .args(args)
        .output()
        .expect("ycsb runs");
    assert!(
        out.status.success(),
        "ycsb bench {args:?}: {}",
        stderr(&out)
    );
    Some(out)
}

/// The newest `OPTIONS-*` file of `dir` as `section.option` → value.
fn options(dir: &Path) -> BTreeMap<String, String> {
    let newest: PathBuf = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("OPTIONS-"))
        })
        .max_by_key(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name["OPTIONS-".len()..].parse::<u64>().unwrap_or(0)
        })
        .unwrap_or_else(|| panic!("no OPTIONS file in {}", dir.display()));
    let text = std::fs::read_to_string(&newest).unwrap();
    let mut section = String::new();
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            continue;
        }
        let (key, value) = line.split_once('=').expect("option=value");
        out.insert(format!("{section}.{key}"), value.to_string());
    }
    assert!(out.len() > 100, "{}: too few options", newest.display());
    out
}

/// Runs both programs with `flags` (each on its own database under a
/// temporary directory) and returns every option whose value differs
/// outside [`MAY_DIFFER`], as `option: db_bench's | ycsb's`.
fn options_differences(flags: &[&str]) -> Option<Vec<String>> {
    let tmp = tempfile::tempdir().unwrap();
    let with_db = |name: &str| -> Vec<String> {
        let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        args.push(format!("--db={}", tmp.path().join(name).display()));
        args
    };
    ycsb_bench(&with_db("ycsb"))?;
    db_bench(&with_db("db_bench"));
    let theirs = options(&tmp.path().join("db_bench"));
    let ours = options(&tmp.path().join("ycsb"));
    let mut keys: Vec<&String> = theirs.keys().chain(ours.keys()).collect();
    keys.sort();
    keys.dedup();
    let missing = "(absent)".to_string();
    Some(
        keys.into_iter()
            .filter(|k| !MAY_DIFFER.iter().any(|(name, _)| name == k))
            .filter_map(|k| {
                let (t, o) = (
                    theirs.get(k).unwrap_or(&missing),
                    ours.get(k).unwrap_or(&missing),
                );
                (t != o).then(|| format!("{k}: {t} | {o}"))
            })
            .collect(),
    )
}

#[test]
fn db_bench_s_plain_command_line_opens_db_bench_s_options() {
    // The command line (fewer keys), no engine flag: every default
    // is db_bench's.
    let flags = [
        "--benchmarks=fillseq",
        "--num=2000",
        "--value_size=100",
        "--key_size=16",
        "--threads=1",
        "--seed=42",
    ];
    if let Some(diff) = options_differences(&flags) {
        assert!(
            diff.is_empty(),
            "OPTIONS differ (db_bench | ycsb):\n{}",
            diff.join("\n")
        );
    }
}

#[test]
fn db_bench_s_engine_flags_set_the_same_options() {
    // Every engine flag that reaches the OPTIONS file, away from its
    // default.
    let flags = [
        "--benchmarks=fillrandom",
        "--num=2000",
        "--seed=7",
        "--cache_size=1048576",
        "--bloom_bits=10",
        "--write_buffer_size=4194304",
        "--max_write_buffer_number=3",
        "--compression_type=none",
        "--max_background_jobs=3",
        "--target_file_size_base=8388608",
        "--max_bytes_for_level_base=33554432",
        "--open_files=500",
        "--level0_file_num_compaction_trigger=3",
        "--level0_slowdown_writes_trigger=10",
        "--level0_stop_writes_trigger=20",
        "--mmap_read=true",
    ];
    if let Some(diff) = options_differences(&flags) {
        assert!(
            diff.is_empty(),
            "OPTIONS differ (db_bench | ycsb):\n{}",
            diff.join("\n")
        );
    }
}

/// The `(N of M found)` of `benchmark`'s line in db_bench's output format.
fn found(output: &Output, benchmark: &str) -> (u64, u64) {
    let text = stdout(output);
    let line = text
        .lines()
        .find(|l| l.starts_with(benchmark) && l.contains(" found)"))
        .unwrap_or_else(|| panic!("no {benchmark} line with found keys in:\n{text}"));
    let open = line.rfind('(').unwrap();
    let (n, rest) = line[open + 1..].split_once(" of ").unwrap();
    let m = rest.split_whitespace().next().unwrap();
    (n.parse().unwrap(), m.parse().unwrap())
}

#[test]
fn several_benchmarks_in_one_process_draw_db_bench_s_keys() {
    // fillrandom writes about 1 - 1/e of the keys and overwrite, drawing
    // from the next thread's seed, adds to them (1 - 1/e² ≈ 86 %); then
    // readrandom (a third seed) finds exactly the keys db_bench finds only
    // if every key number of all three streams is db_bench's.
    let tmp = tempfile::tempdir().unwrap();
    for seed in ["42", "1234567"] {
        let args = |name: &str| -> Vec<String> {
            vec![
                "--benchmarks=fillseq,fillrandom,overwrite,readrandom".into(),
                "--num=5000".into(),
                "--threads=1".into(),
                format!("--seed={seed}"),
                format!("--db={}", tmp.path().join(name).display()),
            ]
        };
        let Some(ours) = ycsb_bench(&args("ycsb")) else {
            return;
        };
        let theirs = db_bench(&args("db_bench"));
        let (n, m) = found(&theirs, "readrandom");
        assert!(n < m && n > m * 8 / 10, "db_bench found {n} of {m}");
        assert_eq!(found(&ours, "readrandom"), (n, m), "--seed={seed}");
    }
}

/// What follows `operations;` and the MB/s on `benchmark`'s result line:
/// db_bench's message (`( reads:... )`), or an empty string.
fn message(output: &Output, benchmark: &str) -> String {
    let text = stdout(output);
    let line = text
        .lines()
        .find(|l| l.split(" : ").next().map(str::trim) == Some(benchmark))
        .unwrap_or_else(|| panic!("no {benchmark} line in:\n{text}"));
    let rest = line.split_once("operations;").unwrap().1;
    rest.find('(')
        .map_or(String::new(), |at| rest[at..].to_string())
}

/// Issue 35 item 6: readrandomwriterandom, updaterandom, fillbatch and
/// mixgraph (with its key-range, key, value and scan models) make
/// db_bench's choices: with the same flags and seed, their messages, which
/// count gets, puts, seeks, keys found, the average value size and scan
/// length, are db_bench's to the digit, and each benchmark is preceded by
/// db_bench's `DB path:` line.
#[test]
fn new_benchmarks_make_db_bench_s_choices() {
    let tmp = tempfile::tempdir().unwrap();
    let benchmarks = [
        "readrandomwriterandom",
        "updaterandom",
        "fillbatch",
        "mixgraph",
    ];
    for (seed, mixgraph, sizes) in [
        (
            "5",
            &[
                "--mix_get_ratio=0.6",
                "--mix_put_ratio=0.3",
                "--mix_seek_ratio=0.1",
            ][..],
            &[][..],
        ),
        (
            "9",
            &MIXGRAPH_SKEWED_MODEL[..],
            &["--value_sigma=30", "--iter_sigma=20"][..],
        ),
    ] {
        let args = |name: &str| -> Vec<String> {
            let mut args: Vec<String> = vec![
                format!(
                    "--benchmarks=fillseq,{},fillseq,mixgraph",
                    benchmarks.join(",")
                ),
                "--num=4000".into(),
                "--reads=3000".into(),
                "--readwritepercent=70".into(),
                format!("--seed={seed}"),
                format!(
                    "--db={}",
                    tmp.path().join(format!("{name}{seed}")).display()
                ),
            ];
            args.extend(mixgraph.iter().chain(sizes).map(|f| f.to_string()));
            args
        };
        let Some(ours) = ycsb_bench(&args("ycsb")) else {
            return;
        };
        let theirs = db_bench(&args("db_bench"));
        for benchmark in benchmarks {
            let want = message(&theirs, benchmark);
            if benchmark != "fillbatch" {
                assert!(!want.is_empty(), "{benchmark}: {}", stdout(&theirs));
            }
            assert_eq!(message(&ours, benchmark), want, "{benchmark} --seed={seed}");
        }
        let paths = |o: &Output| {
            stdout(o)
                .lines()
                .filter(|l| l.starts_with("DB path: ["))
                .count()
        };
        assert_eq!(paths(&ours), paths(&theirs), "{}", stdout(&ours));
    }
}
