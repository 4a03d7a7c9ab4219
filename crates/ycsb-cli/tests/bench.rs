//! `ycsb bench`: db_bench's benchmarks and output through the binary, on
//! the memory, leveldb and redis stores (and rocksdb when the binary has
//! it).

mod common;
mod rel_support;

use common::*;
use rel_support::*;

const ALL: &str = "fillseq,fillrandom,overwrite,readrandom,readmissing,readseq,readreverse,\
                   readwhilewriting,seekrandom,deleterandom,deleteseq,stats";

/// A parsed db_bench result line.
#[derive(Debug)]
struct Line {
    name: String,
    operations: u64,
    found: Option<(u64, u64)>,
}

/// Parses `name : X micros/op N ops/sec S seconds N operations;[ R MB/s][ (F of M found)]`
/// strictly, so a format drift fails the test.
fn parse_line(line: &str) -> Option<Line> {
    let (name, rest) = line.split_once(" : ")?;
    if name.len() < 12 || name.trim_end() != name.trim() {
        return None;
    }
    let t: Vec<&str> = rest.split_whitespace().collect();
    t[0].parse::<f64>().ok()?;
    if t[1] != "micros/op" || t[3] != "ops/sec" || t[5] != "seconds" || t[7] != "operations;" {
        return None;
    }
    t[2].parse::<u64>().ok()?;
    let operations = t[6].parse().ok()?;
    let found = line.rfind(" found)").map(|end| {
        let open = line[..end].rfind('(').unwrap();
        let (f, m) = line[open + 1..end].split_once(" of ").unwrap();
        (f.parse().unwrap(), m.parse().unwrap())
    });
    Some(Line {
        name: name.trim().to_string(),
        operations,
        found,
    })
}

fn lines(out: &str) -> Vec<Line> {
    out.lines()
        .filter(|l| l.contains(" micros/op "))
        .map(|l| parse_line(l).unwrap_or_else(|| panic!("not db_bench's format: {l}")))
        .collect()
}

fn bench(args: &[&str]) -> (Vec<Line>, String) {
    let o = ycsb().arg("bench").args(args).output().unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{args:?}: {}\n{out}", stderr(&o));
    (lines(&out), out)
}

fn find<'a>(lines: &'a [Line], name: &str) -> &'a Line {
    lines
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no {name} line"))
}

/// Every benchmark on a store that scans in key order.
fn check_ordered_store(lines: &[Line], num: u64) {
    let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        ALL.split(',').filter(|n| *n != "stats").collect::<Vec<_>>()
    );
    for l in lines {
        assert!(l.operations > 0, "{l:?}");
    }
    assert_eq!(find(lines, "fillseq").operations, num);
    // After fillrandom and overwrite of fresh keys, every key was written
    // by one of them with probability 1 - (1 - 1/num)^(2 num), about 86 %.
    let (found, of) = find(lines, "readrandom").found.unwrap();
    assert_eq!(of, num);
    assert!(found > num * 7 / 10 && found < num, "{found} of {of}");
    assert_eq!(find(lines, "readmissing").found, Some((0, num)));
    let stored = find(lines, "readseq").operations;
    assert!(stored > num * 7 / 10 && stored < num, "{stored}");
    assert_eq!(find(lines, "readreverse").operations, stored);
    let (seek_found, _) = find(lines, "seekrandom").found.unwrap();
    assert!(seek_found > num * 7 / 10, "{seek_found}");
}

#[test]
fn every_benchmark_on_memory() {
    let (lines, out) = bench(&[
        "--db-engine=memory",
        &format!("--benchmarks={ALL}"),
        "--num=3000",
        "--seed=5",
    ]);
    check_ordered_store(&lines, 3000);
    assert!(out.contains("Keys:       16 bytes each\n"), "{out}");
    assert!(
        out.contains("Values:     100 bytes each (50 bytes after compression)\n"),
        "{out}"
    );
    assert!(out.contains("memory.records: "), "{out}");
    assert!(!out.contains("Set seed"), "{out}");
}

#[test]
fn every_benchmark_on_leveldb_then_existing_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (lines, out) = bench(&[
        "--db-engine",
        "leveldb",
        &db,
        &format!("--benchmarks={ALL}"),
        "--num=3000",
        "--seed=5",
        "--histogram",
    ]);
    check_ordered_store(&lines, 3000);
    assert!(
        out.contains("Microseconds per write:\nCount: 3000 Average: "),
        "{out}"
    );
    assert!(out.contains("Microseconds per seek:\n"), "{out}");
    assert!(out.contains("leveldb.num-files-at-level0: "), "{out}");
    // deleteseq removed everything; fill again and read it in a second
    // process with --use_existing_db, which skips fills.
    bench(&[
        "--db-engine=leveldb",
        &db,
        "--benchmarks=fillseq",
        "--num=500",
    ]);
    let (lines, out) = bench(&[
        "--db-engine=leveldb",
        &db,
        "--benchmarks=fillseq,readrandom",
        "--num=500",
        "--use_existing_db",
    ]);
    assert!(
        out.contains("fillseq      : skipped (--use_existing_db is true)\n"),
        "{out}"
    );
    assert_eq!(find(&lines, "readrandom").found, Some((500, 500)));
    // A fresh run destroys it first.
    let (lines, _) = bench(&[
        "--db-engine=leveldb",
        &db,
        "--benchmarks=readrandom",
        "--num=500",
    ]);
    assert_eq!(find(&lines, "readrandom").found, Some((0, 500)));
}

#[test]
fn threads_and_batches_count_as_db_bench() {
    let o = ycsb()
        .args([
            "bench",
            "--db-engine=memory",
            "--benchmarks=fillrandom,readrandom",
        ])
        .args(["--num=2000", "--threads=3", "--batch_size=10", "--seed=1"])
        .args([
            "--stats_interval_seconds=1",
            "--compression_ratio=0.25",
            "--value_size=40",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = lines(&stdout(&o));
    // Every thread does the whole count, as db_bench.
    assert_eq!(find(&lines, "fillrandom").operations, 6000);
    assert_eq!(find(&lines, "readrandom").found.unwrap().1, 6000);
    assert!(stdout(&o).contains("Values:     40 bytes each (10 bytes after compression)"));
}

#[test]
fn every_benchmark_on_redis() {
    let redis = Redis::start(&[]);
    let port = format!("redis.port={}", redis.port);
    let (lines, out) = bench(&[
        "--db-engine=redis",
        "-p",
        &port,
        &format!("--benchmarks={ALL}"),
        "--num=500",
        "--seed=5",
    ]);
    assert_eq!(lines.len(), 11, "{out}");
    assert_eq!(find(&lines, "fillseq").operations, 500);
    let (found, of) = find(&lines, "readrandom").found.unwrap();
    assert!(found > 350 && of == 500, "{found} of {of}");
    assert_eq!(find(&lines, "readmissing").found, Some((0, 500)));
    assert!(out.contains("Engine: Redis "), "{out}");
}

#[test]
fn rocksdb_when_the_binary_has_it() {
    let o = run("stores");
    if !stdout(&o).lines().any(|l| l.starts_with("rocksdb ")) {
        eprintln!("the ycsb binary has no rocksdb store yet; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (lines, out) = bench(&[
        "--db-engine=rocksdb",
        &db,
        &format!("--benchmarks={ALL}"),
        "--num=3000",
        "--seed=5",
        "--bloom_bits=10",
        "--cache_size=1048576",
    ]);
    check_ordered_store(&lines, 3000);
    assert!(out.contains("** rocksdb.stats **"), "{out}");
    // db_bench's header block, as its parsers expect it.
    assert!(
        out.lines().any(|l| l.starts_with("RocksDB:    version ")),
        "{out}"
    );
    assert!(out.contains("\nCompression: Snappy\n"), "{out}");
}

#[test]
fn leveldb_db_bench_header_and_compression_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (lines, out) = bench(&[
        "--db-engine=leveldb",
        &db,
        "--benchmarks=fillseq,levelstats",
        "--num=100",
        "--seed=5",
        "--compression=0",
    ]);
    // db_bench's levelstats table, sizes from LevelDB's mb-at-level gauges.
    assert!(
        out.contains("Level Files Size(MB)\n--------------------\n  0        0        0\n"),
        "{out}"
    );
    assert_eq!(find(&lines, "fillseq").operations, 100);
    let header: Vec<&str> = out.lines().take_while(|l| !l.starts_with("---")).collect();
    assert!(header[0].starts_with("LevelDB:    version 1."), "{out}");
    for line in [
        "Keys:       16 bytes each",
        "Values:     100 bytes each (50 bytes after compression)",
        "Entries:    100",
        "Compression: NoCompression",
    ] {
        assert!(header.contains(&line), "{line}: {out}");
    }
    assert!(
        header.iter().any(|l| l.starts_with("Date:       ")),
        "{out}"
    );
}

#[test]
fn help_names_every_benchmark_and_engine_flag() {
    let o = run("bench --help");
    assert!(o.status.success());
    let out = stdout(&o);
    for name in ALL.split(',') {
        assert!(out.contains(name), "{name}: {out}");
    }
    assert!(out.contains("--cache_size") && out.contains("rocksdb.cache_size, leveldb.cache_size"));
}

#[test]
fn report_file_is_db_bench_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("report.csv");
    let (lines, _) = bench(&[
        "--db-engine=memory",
        "--benchmarks=fillseq,readrandom",
        "--num=20000",
        "--seed=5",
        "--report_interval_seconds=1",
        &format!("--report_file={}", csv.display()),
    ]);
    let total: u64 = lines.iter().map(|l| l.operations).sum();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines();
    assert_eq!(rows.next(), Some("secs_elapsed,interval_qps"), "{text}");
    // However fast the machine: whole seconds rising, counts adding up to
    // at most the operations run.
    let mut last_secs = 0;
    let mut counted = 0;
    for row in rows {
        let (secs, ops) = row.split_once(',').unwrap();
        let secs: u64 = secs.parse().unwrap();
        assert!(secs >= last_secs, "{text}");
        last_secs = secs;
        counted += ops.parse::<u64>().unwrap();
    }
    assert!(counted <= total, "{counted} > {total}: {text}");

    let out = ycsb()
        .args(["bench", "--db-engine=memory", "--report_interval_seconds=1"])
        .arg(format!(
            "--report_file={}",
            dir.path().join("no/r.csv").display()
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--report_file="), "{}", stderr(&out));
}

#[test]
fn every_benchmark_on_the_b_tree_engines_then_existing_data() {
    for (engine, gauge) in [("lmdb", "lmdb.depth: "), ("sqlite", "sqlite.pages: ")] {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("--db={}", dir.path().join("db").display());
        let engine_flag = format!("--db-engine={engine}");
        let (lines, out) = bench(&[
            &engine_flag,
            &db,
            &format!("--benchmarks={ALL}"),
            "--num=3000",
            "--seed=5",
        ]);
        check_ordered_store(&lines, 3000);
        assert!(out.contains(gauge), "{engine}: {out}");
        bench(&[&engine_flag, &db, "--benchmarks=fillseq", "--num=500"]);
        let (lines, _) = bench(&[
            &engine_flag,
            &db,
            "--benchmarks=readrandom",
            "--num=500",
            "--use_existing_db",
        ]);
        assert_eq!(
            find(&lines, "readrandom").found,
            Some((500, 500)),
            "{engine}"
        );
        // A fresh run empties it first.
        let (lines, _) = bench(&[&engine_flag, &db, "--benchmarks=readrandom", "--num=500"]);
        assert_eq!(find(&lines, "readrandom").found, Some((0, 500)), "{engine}");
    }
}

/// db_bench's message after a result line's `;` (and MB/s), as printed.
fn message_of<'a>(out: &'a str, name: &str) -> &'a str {
    let line = out
        .lines()
        .find(|l| l.split(" : ").next().map(str::trim) == Some(name))
        .unwrap_or_else(|| panic!("no {name} line: {out}"));
    let rest = line.split_once("operations;").unwrap().1;
    let at = rest.find('(').unwrap_or(rest.len());
    &rest[at..]
}

/// One benchmark of issues #35 item 6 and #38 item 4 on a real engine:
/// the flags, and what its output must show.
struct NewBenchmark {
    flags: &'static [&'static str],
    /// More flags: a mixgraph model.
    model: &'static [&'static str],
    check: fn(&[Line], &str),
}

const NEW_BENCHMARKS: &[NewBenchmark] = &[
    // fillbatch writes --num keys, 1000 per batch; readseq finds them all.
    NewBenchmark {
        flags: &[
            "--benchmarks=fillbatch,readseq",
            "--num=3000",
            "--histogram",
        ],
        model: &[],
        check: |lines, out| {
            assert_eq!(find(lines, "fillbatch").operations, 3000, "{out}");
            assert_eq!(find(lines, "readseq").operations, 3000, "{out}");
            // One latency sample per batch of 1000.
            assert!(out.contains("Microseconds per write:\nCount: 3 "), "{out}");
        },
    },
    // --batch_size groups fillrandom's writes; a batch that would pass
    // --num is not written (db_bench's Done(entries_per_batch_)).
    NewBenchmark {
        flags: &["--benchmarks=fillrandom", "--num=1050", "--batch_size=100"],
        model: &[],
        check: |lines, out| assert_eq!(find(lines, "fillrandom").operations, 1000, "{out}"),
    },
    NewBenchmark {
        flags: &[
            "--benchmarks=fillseq,readrandomwriterandom",
            "--num=2000",
            "--readwritepercent=80",
        ],
        model: &[],
        check: |lines, out| {
            assert_eq!(find(lines, "readrandomwriterandom").operations, 2000);
            assert_eq!(
                message_of(out, "readrandomwriterandom"),
                "( reads:1600 writes:400 total:2000 found:1600)",
                "{out}"
            );
        },
    },
    NewBenchmark {
        flags: &[
            "--benchmarks=fillseq,updaterandom",
            "--num=1000",
            "--histogram",
        ],
        model: &[],
        check: |lines, out| {
            assert_eq!(find(lines, "updaterandom").operations, 1000);
            assert_eq!(
                message_of(out, "updaterandom"),
                "( updates:1000 found:1000)"
            );
            assert!(out.contains(" MB/s ( updates:1000 found:1000)"), "{out}");
            assert!(out.contains("Microseconds per update:\n"), "{out}");
        },
    },
    // The writer thread is not in the figures (db_bench excludes it from
    // the merge): the line counts the reader's reads only, all found.
    NewBenchmark {
        flags: &[
            "--benchmarks=fillseq,readwhilewriting",
            "--num=2000",
            "--benchmark_write_rate_limit=200000",
        ],
        model: &[],
        check: |lines, out| {
            assert_eq!(
                find(lines, "readwhilewriting").found,
                Some((2000, 2000)),
                "{out}"
            );
        },
    },
    NewBenchmark {
        flags: &[
            "--benchmarks=fillseq,mixgraph",
            "--num=3000",
            "--reads=4000",
            "--value_k=0.2615",
            "--value_sigma=25.45",
            "--iter_k=2.517",
            "--iter_sigma=14.236",
            "--mix_max_scan_len=50",
            "--sine_mix_rate",
            "--sine_a=1000",
            "--sine_b=0.000073",
            "--sine_d=400000",
            "--sine_mix_rate_interval_milliseconds=100",
            "--histogram",
        ],
        model: &MIXGRAPH_SKEWED_MODEL,
        check: |lines, out| {
            assert_eq!(find(lines, "mixgraph").operations, 4000, "{out}");
            let message = message_of(out, "mixgraph");
            let numbers: Vec<f64> = message
                .split([' ', ',', ':', '(', ')'])
                .filter_map(|w| w.parse().ok())
                .collect();
            // Gets, Puts, Seek, reads found, reads, avg value, avg scan.
            assert_eq!(numbers.len(), 7, "{message}");
            assert_eq!(numbers[0] + numbers[1] + numbers[2], 4000.0, "{message}");
            assert_eq!(numbers[4], numbers[0] + numbers[2], "{message}");
            assert!(numbers[1] > 0.0 && numbers[2] > 0.0, "{message}");
            // Put sizes are at least 10 bytes, at most 1024.
            assert!((10.0..=1024.0).contains(&numbers[5]), "{message}");
            assert!(message.starts_with("( Gets:"), "{message}");
            // db_bench's message ends in a newline of its own.
            assert!(out.contains(" scan)\n\n"), "{out}");
            for op in ["read", "write", "seek"] {
                assert!(
                    out.contains(&format!("Microseconds per {op}:\n")),
                    "{op}: {out}"
                );
            }
        },
    },
];

#[test]
fn new_benchmarks_on_rocksdb_and_leveldb() {
    for engine in ["rocksdb", "leveldb"] {
        for case in NEW_BENCHMARKS {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("db");
            let mut args = vec![
                format!("--db-engine={engine}"),
                format!("--db={}", path.display()),
                "--seed=5".to_string(),
            ];
            args.extend(case.flags.iter().chain(case.model).map(|f| f.to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (lines, out) = bench(&args);
            (case.check)(&lines, &out);
            // db_bench's line before each benchmark.
            let db_path = format!("DB path: [{}]", path.display());
            assert_eq!(
                out.lines().filter(|l| *l == db_path).count(),
                lines.len(),
                "{engine} {:?}: {out}",
                case.flags
            );
        }
    }
}

#[test]
fn duration_stops_the_random_benchmarks_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let started = std::time::Instant::now();
    let (lines, out) = bench(&[
        "--db-engine=leveldb",
        &db,
        "--benchmarks=fillseq,readrandom",
        "--num=1000",
        "--reads=2000000000",
        "--duration=2",
    ]);
    let took = started.elapsed();
    // fillseq runs by count; readrandom until 2 whole seconds have passed,
    // checked as each 1000th read is about to start (so one short of a
    // multiple of 1000). Two billion reads would take hours: the bound
    // of 30 s leaves a loaded machine room and still fails if the
    // duration were ignored.
    assert_eq!(find(&lines, "fillseq").operations, 1000);
    let reads = find(&lines, "readrandom");
    assert_eq!(reads.operations % 1000, 999, "{out}");
    assert!(took >= std::time::Duration::from_secs(2), "{took:?}");
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
}

#[test]
fn statistics_block_on_rocksdb_and_a_warning_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (_, out) = bench(&[
        "--db-engine=rocksdb",
        &db,
        "--benchmarks=fillseq,readrandom",
        "--num=500",
        "--statistics",
    ]);
    // After the last result line, RocksDB's Statistics::ToString.
    let at = out
        .find("\nSTATISTICS:\n")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(out[..at].contains("readrandom   : "), "{out}");
    assert!(
        out[at..].contains("\nrocksdb.block.cache.miss COUNT : "),
        "{out}"
    );
    assert!(
        out[at..].contains("\nrocksdb.db.get.micros P50 : "),
        "{out}"
    );

    let o = ycsb()
        .args(["bench", "--db-engine=leveldb"])
        .arg(format!("--db={}", dir.path().join("ldb").display()))
        .args(["--benchmarks=fillseq", "--num=100", "--statistics"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("STATISTICS:"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--statistics has no meaning for store 'leveldb'; ignored"),
        "{}",
        stderr(&o)
    );
}

/// A batch is one write of the engine: RocksDB's own counters say
/// `fillbatch` (1000 puts a batch) and `--batch_size=50` deletes wrote
/// their keys in one write call per batch.
#[test]
fn batches_are_one_engine_write_each() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let counter = |out: &str, name: &str| -> u64 {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} COUNT : ")))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .trim()
            .parse()
            .unwrap()
    };
    let (_, out) = bench(&[
        "--db-engine=rocksdb",
        &db,
        "--benchmarks=fillbatch",
        "--num=5000",
        "--statistics",
    ]);
    assert_eq!(counter(&out, "rocksdb.number.keys.written"), 5000, "{out}");
    assert_eq!(counter(&out, "rocksdb.write.self"), 5, "{out}");
    let (_, out) = bench(&[
        "--db-engine=rocksdb",
        &db,
        "--use_existing_db=1",
        "--benchmarks=deleteseq",
        "--num=5000",
        "--batch_size=50",
        "--statistics",
    ]);
    assert_eq!(counter(&out, "rocksdb.write.self"), 100, "{out}");
}

#[test]
fn help_names_the_new_flags_and_the_default_db_path() {
    let o = run("bench --help");
    let out = stdout(&o);
    for word in [
        "fillbatch",
        "readrandomwriterandom",
        "updaterandom",
        "mixgraph",
        "--duration",
        "--benchmark_write_rate_limit",
        "--readwritepercent",
        "--keyrange_dist_a/b/c/d",
        "--sine_mix_rate",
        "ycsb-dbbench-rocksdb",
    ] {
        assert!(out.contains(word), "{word}: {out}");
    }
}
