//! The benchmarks on the real in-process memory store.

use std::sync::Mutex;
use std::time::Duration;

use ycsb_db::{Fields, ReadOp, Record, ScanOp, Status, Store, ThreadContext};
use ycsb_memory::MemoryStore;

use super::*;

fn settings(num: u64) -> Settings {
    Settings {
        num,
        seed: 7,
        ..Settings::default()
    }
}

fn measured(store: &dyn Store, kind: BenchmarkKind, s: &Settings) -> BenchReport {
    match run(store, kind, s, &NoProgress).unwrap() {
        BenchOutcome::Measured(r) => r,
        BenchOutcome::Stats(_) => panic!("{kind:?} gave stats"),
    }
}

#[test]
fn levelstats_tables_the_files_per_level_or_says_there_are_none() {
    let store = MemoryStore::new();
    let text = match run(&store, BenchmarkKind::LevelStats, &settings(1), &NoProgress).unwrap() {
        BenchOutcome::Stats(text) => text,
        _ => panic!("levelstats measures nothing"),
    };
    assert_eq!(text, "levelstats: the store reports no files per level\n");
}

#[test]
fn names_round_trip_and_unknown_names_are_errors() {
    for name in BenchmarkKind::names() {
        assert_eq!(BenchmarkKind::from_name(name).unwrap().name(), name);
    }
    let list = parse_benchmarks("fillseq,,readrandom, stats").unwrap();
    assert_eq!(
        list,
        vec![
            BenchmarkKind::FillSeq,
            BenchmarkKind::ReadRandom,
            BenchmarkKind::Stats
        ]
    );
    let err = parse_benchmarks("fillseq,readrandm")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "--benchmarks: unknown benchmark 'readrandm'; did you mean 'readrandom'? (known: fillseq,"
        ),
        "{err}"
    );
}

#[test]
fn a_name_far_from_every_benchmark_gets_no_suggestion() {
    let err = parse_benchmarks("compact").unwrap_err().to_string();
    assert!(
        err.starts_with("--benchmarks: unknown benchmark 'compact' (known: fillseq,"),
        "{err}"
    );
}

#[test]
fn fillseq_writes_db_bench_keys_and_compressible_values() {
    let store = MemoryStore::new();
    let s = settings(100);
    let r = measured(&store, BenchmarkKind::FillSeq, &s);
    assert_eq!(r.operations, 100);
    assert_eq!(r.bytes, 100 * (16 + 100));
    assert_eq!(r.found, None);
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut out = Record::new();
    assert_eq!(
        t.read(
            &ReadOp::new("usertable", "0000000000000042", Fields::All),
            &mut out
        ),
        Status::Ok
    );
    let v = out.get(VALUE_FIELD).unwrap();
    assert_eq!(v.len(), 100);
    assert_eq!(&v[..50], &v[50..], "ratio 0.5 repeats a 50-byte prefix");
    out.clear();
    assert_eq!(
        t.read(
            &ReadOp::new("usertable", "0000000000000100", Fields::All),
            &mut out
        ),
        Status::NotFound
    );
}

#[test]
fn reads_find_what_was_written() {
    let store = MemoryStore::new();
    let s = Settings {
        reads: Some(500),
        ..settings(200)
    };
    measured(&store, BenchmarkKind::FillSeq, &s);
    let r = measured(&store, BenchmarkKind::ReadRandom, &s);
    assert_eq!(r.found, Some((500, 500)));
    assert_eq!(r.bytes, 500 * 116);
    assert!(
        r.line().ends_with(" MB/s (500 of 500 found)"),
        "{}",
        r.line()
    );
    let r = measured(&store, BenchmarkKind::ReadMissing, &s);
    assert_eq!(r.found, Some((0, 500)));
    assert!(
        r.line().ends_with(" operations; (0 of 500 found)"),
        "{}",
        r.line()
    );
    let r = measured(&store, BenchmarkKind::SeekRandom, &s);
    assert_eq!(r.found, Some((500, 500)));
    // Sequential reads stop at the end of the data.
    let r = measured(&store, BenchmarkKind::ReadSeq, &s);
    assert_eq!(r.operations, 200);
    assert_eq!(r.bytes, 200 * 116);
    let r = measured(&store, BenchmarkKind::ReadReverse, &s);
    assert_eq!(r.operations, 200);
    let s = Settings {
        reads: Some(50),
        ..s
    };
    assert_eq!(measured(&store, BenchmarkKind::ReadSeq, &s).operations, 50);
    assert_eq!(
        measured(&store, BenchmarkKind::ReadReverse, &s).operations,
        50
    );
}

#[test]
fn readseq_crosses_scan_chunks_and_reverse_skips_holes() {
    let store = MemoryStore::new();
    let s = settings(2500);
    measured(&store, BenchmarkKind::FillSeq, &s);
    // Holes: every key from 1000 to 1999 is deleted.
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    for n in 1000..2000 {
        assert_eq!(t.delete("usertable", &format!("{n:016}")), Status::Ok);
    }
    assert_eq!(
        measured(&store, BenchmarkKind::ReadSeq, &s).operations,
        1500
    );
    assert_eq!(
        measured(&store, BenchmarkKind::ReadReverse, &s).operations,
        1500
    );
}

#[test]
fn deletes_remove_keys() {
    let store = MemoryStore::new();
    let s = settings(300);
    measured(&store, BenchmarkKind::FillSeq, &s);
    let r = measured(&store, BenchmarkKind::DeleteSeq, &s);
    assert_eq!((r.operations, r.bytes), (300, 0));
    assert!(r.line().ends_with(" 300 operations;"), "{}", r.line());
    assert_eq!(
        measured(&store, BenchmarkKind::ReadRandom, &s).found,
        Some((0, 300))
    );
    measured(&store, BenchmarkKind::FillRandom, &s);
    measured(&store, BenchmarkKind::DeleteRandom, &s);
}

#[test]
fn every_thread_does_the_whole_count_in_batches() {
    let store = MemoryStore::new();
    let s = Settings {
        threads: 3,
        batch_size: 7,
        histogram: true,
        ..settings(100)
    };
    let r = measured(&store, BenchmarkKind::FillRandom, &s);
    // db_bench writes whole batches while they fit in the count
    // (`Duration::Done(entries_per_batch_)` before each): 14 batches of 7
    // are 98 writes of the 100, per thread.
    assert_eq!(r.operations, 294);
    // One histogram sample per batch.
    assert_eq!(r.histograms.len(), 1);
    assert_eq!(r.histograms[0].1.count(), 42);
    let text = r.histogram_text().unwrap();
    assert!(
        text.starts_with("Microseconds per write:\nCount: 42 "),
        "{text}"
    );
}

#[test]
fn read_while_writing_reports_only_readers() {
    let store = MemoryStore::new();
    let s = Settings {
        threads: 2,
        ..settings(1000)
    };
    measured(&store, BenchmarkKind::FillSeq, &s);
    let r = measured(&store, BenchmarkKind::ReadWhileWriting, &s);
    assert_eq!(r.operations, 2000);
    let (found, of) = r.found.unwrap();
    assert_eq!(of, 2000);
    // Not all 2000: the memory store replaces a skip-list entry by removing
    // it first, so a read racing the writer's overwrite can miss its key.
    assert!(found > 1000, "{found}");
}

struct Collect(Mutex<Vec<IntervalReport>>);

impl Progress for Collect {
    fn interval(&self, report: &IntervalReport) {
        self.0.lock().unwrap().push(report.clone());
    }
}

#[test]
fn intervals_are_reported_in_db_bench_format() {
    let store = MemoryStore::new();
    let s = Settings {
        // Shorter than any 256 operations take, so every check reports.
        stats_interval: Some(Duration::from_nanos(1)),
        ..settings(1000)
    };
    let progress = Collect(Mutex::new(Vec::new()));
    run(&store, BenchmarkKind::FillSeq, &s, &progress).unwrap();
    let reports = progress.0.into_inner().unwrap();
    let totals: Vec<u64> = reports.iter().map(|r| r.total_ops).collect();
    assert_eq!(totals, vec![256, 512, 768]);
    let line = reports[1].to_string();
    assert!(
        line.contains(" ... thread 0: (256,512) ops and ("),
        "{line}"
    );
    assert!(line.ends_with(" seconds"), "{line}");
}

/// Counts what `ops_finished` is told, per thread.
struct Count(Mutex<Vec<(usize, u64)>>);

impl Progress for Count {
    fn interval(&self, _: &IntervalReport) {}

    fn ops_finished(&self, thread: usize, ops: u64) {
        self.0.lock().unwrap().push((thread, ops));
    }
}

#[test]
fn finished_operations_are_counted_in_chunks_for_the_report_file() {
    let store = MemoryStore::new();
    let s = Settings {
        threads: 2,
        report_interval: Some(Duration::from_secs(1)),
        ..settings(1000)
    };
    let progress = Count(Mutex::new(Vec::new()));
    run(&store, BenchmarkKind::FillRandom, &s, &progress).unwrap();
    let calls = progress.0.into_inner().unwrap();
    for thread in 0..2 {
        let chunks: Vec<u64> = calls
            .iter()
            .filter(|(t, _)| *t == thread)
            .map(|(_, ops)| *ops)
            .collect();
        // Every 256 operations, then the rest as the thread ends.
        assert_eq!(chunks, vec![256, 256, 256, 232], "thread {thread}");
    }
    // Off unless asked.
    let progress = Count(Mutex::new(Vec::new()));
    run(
        &store,
        BenchmarkKind::FillRandom,
        &settings(1000),
        &progress,
    )
    .unwrap();
    assert!(progress.0.into_inner().unwrap().is_empty());
}

#[test]
fn result_line_is_db_bench_format() {
    let r = BenchReport {
        benchmark: BenchmarkKind::FillSeq,
        operations: 500_000,
        elapsed: Duration::from_micros(1_811_000),
        thread_time: Duration::from_micros(1_811_000),
        bytes: 500_000 * 116,
        found: None,
        histograms: Vec::new(),
        message: None,
    };
    assert_eq!(
        r.line(),
        "fillseq      :       3.622 micros/op 276090 ops/sec 1.811 seconds 500000 operations;   30.5 MB/s"
    );
    let r = BenchReport {
        benchmark: BenchmarkKind::ReadRandom,
        found: Some((315_873, 500_000)),
        ..r
    };
    assert!(r
        .line()
        .ends_with("500000 operations;   30.5 MB/s (315873 of 500000 found)"));
    // db_bench's readrandomwriterandom: no bytes, its message after `;`.
    let r = BenchReport {
        benchmark: BenchmarkKind::ReadRandomWriteRandom,
        bytes: 0,
        found: None,
        message: Some("( reads:450000 writes:50000 total:500000 found:0)".into()),
        ..r
    };
    assert_eq!(
        r.line(),
        "readrandomwriterandom :       3.622 micros/op 276090 ops/sec 1.811 seconds 500000 operations; ( reads:450000 writes:50000 total:500000 found:0)"
    );
}

#[test]
fn stats_and_bad_settings() {
    let store = MemoryStore::new();
    let BenchOutcome::Stats(text) =
        run(&store, BenchmarkKind::Stats, &settings(1), &NoProgress).unwrap()
    else {
        panic!("stats is text");
    };
    assert!(text.contains("memory.records: 0"), "{text}");
    for (s, flag) in [
        (settings(0), "--num"),
        (
            Settings {
                threads: 0,
                ..settings(1)
            },
            "--threads",
        ),
        (
            Settings {
                key_size: 0,
                ..settings(1)
            },
            "--key_size",
        ),
        (
            Settings {
                batch_size: 0,
                ..settings(1)
            },
            "--batch_size",
        ),
        (
            Settings {
                compression_ratio: 0.0,
                ..settings(1)
            },
            "--compression_ratio",
        ),
    ] {
        let err = run(&store, BenchmarkKind::FillSeq, &s, &NoProgress)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(flag), "{err}");
    }
}

#[test]
fn later_benchmarks_draw_other_keys() {
    let store = MemoryStore::new();
    let mut s = settings(1000);
    measured(&store, BenchmarkKind::FillRandom, &s);
    let after_fill = measured(&store, BenchmarkKind::ReadSeq, &s).operations;
    // The same streams again write exactly the same keys.
    measured(&store, BenchmarkKind::Overwrite, &s);
    assert_eq!(
        measured(&store, BenchmarkKind::ReadSeq, &s).operations,
        after_fill
    );
    s.first_stream += thread_streams(BenchmarkKind::Overwrite, &s);
    measured(&store, BenchmarkKind::Overwrite, &s);
    let after_overwrite = measured(&store, BenchmarkKind::ReadSeq, &s).operations;
    // About 1 - e^-1 of the keys after one pass, 1 - e^-2 after two.
    assert!(
        after_fill < 700 && after_overwrite > 800,
        "{after_fill} {after_overwrite}"
    );
}

#[test]
fn keys_are_zero_padded_decimal() {
    let mut key = String::new();
    for (n, width, expected) in [
        (0, 16, "0000000000000000"),
        (42, 16, "0000000000000042"),
        (123_456, 3, "123456"),
        (7, 1, "7"),
        (u64::MAX, 22, "0018446744073709551615"),
    ] {
        make_key(&mut key, n, width);
        assert_eq!(key, expected);
        assert_eq!(key, format!("{n:0width$}"));
    }
}

#[test]
fn every_stores_dbbench_vocabulary_is_the_benchs() {
    for store in ycsb_stores::STORES {
        for (flag, _) in store.dbbench_flags {
            assert!(
                crate::args::is_engine_flag(flag),
                "{}: {flag} is not one of db_bench's engine flags",
                store.name
            );
        }
        for (property, value) in store.dbbench_properties {
            // A bare-value layout reads the value back under a field name,
            // which must be the one the bench writes and reads.
            if property.ends_with("raw_field") {
                assert_eq!(*value, VALUE_FIELD, "{}: {property}", store.name);
            }
        }
    }
}

#[test]
fn thread_seeds_are_db_bench_s_thread_state_seeds() {
    // db_bench's ThreadState(i, ++total_thread_count_) seeds Random64 with
    // seed_base + the count of threads started so far in the run, from 1;
    // readwhilewriting's writer is its thread 0.
    let mut s = Settings {
        seed: 42,
        threads: 2,
        ..Settings::default()
    };
    assert_eq!(thread_seed(BenchmarkKind::FillRandom, &s, 0), 43);
    assert_eq!(thread_seed(BenchmarkKind::FillRandom, &s, 1), 44);
    s.first_stream = 2;
    assert_eq!(thread_seed(BenchmarkKind::ReadWhileWriting, &s, 2), 45);
    assert_eq!(thread_seed(BenchmarkKind::ReadWhileWriting, &s, 0), 46);
    assert_eq!(thread_seed(BenchmarkKind::ReadWhileWriting, &s, 1), 47);
    s.seed = u64::MAX;
    assert_eq!(thread_seed(BenchmarkKind::FillRandom, &s, 0), 2);
}

#[test]
fn random_writes_and_reads_draw_two_numbers_per_operation() {
    // db_bench draws a database choice, then the key: with seed 42 the
    // first thread's keys are the 2nd, 4th, ... outputs of mt19937_64(43).
    let store = MemoryStore::new();
    let s = Settings {
        seed: 42,
        num: 1000,
        writes: Some(3),
        reads: Some(3),
        ..settings(1000)
    };
    let mut rng = crate::random::Mt64::new(43);
    let expected: Vec<u64> = (0..3)
        .map(|_| {
            rng.next_u64();
            rng.next_u64() % 1000
        })
        .collect();
    measured(&store, BenchmarkKind::FillRandom, &s);
    let mut written = Vec::new();
    let mut scan = ScanResult::new();
    let mut thread = store.thread(ThreadContext::new(0, 1)).unwrap();
    thread.scan(&ScanOp::new("usertable", "", 10, Fields::All), &mut scan);
    for (key, _) in scan.iter() {
        written.push(key.parse::<u64>().unwrap());
    }
    let mut sorted = expected.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(written, sorted);
    // The same stream reads exactly those keys: all found.
    let report = measured(&store, BenchmarkKind::ReadRandom, &s);
    assert_eq!(report.found, Some((3, 3)));
}

/// How many records `store` holds, by one scan.
fn records_in(store: &dyn Store) -> usize {
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut rows = ycsb_db::ScanResult::new();
    assert_eq!(
        t.scan(
            &ScanOp::new("usertable", "", usize::MAX, Fields::All),
            &mut rows
        ),
        Status::Ok
    );
    rows.len()
}

#[test]
fn fillbatch_writes_num_keys_in_batches_of_a_thousand() {
    let store = MemoryStore::new();
    let s = Settings {
        histogram: true,
        // Ignored by fillbatch, which db_bench fixes at 1000.
        batch_size: 7,
        ..settings(3000)
    };
    let r = measured(&store, BenchmarkKind::FillBatch, &s);
    assert_eq!(r.operations, 3000);
    assert_eq!(r.bytes, 3000 * 116);
    assert_eq!(records_in(&store), 3000);
    // One histogram sample per batch.
    assert_eq!(r.histograms[0].0, Operation::Write);
    assert_eq!(r.histograms[0].1.count(), 3);
    assert!(BenchmarkKind::FillBatch.needs_fresh_db());
    // As db_bench: only whole batches that fit in --num (2 of 2500).
    let store = MemoryStore::new();
    let r = measured(&store, BenchmarkKind::FillBatch, &settings(2500));
    assert_eq!(r.operations, 2000);
    assert_eq!(records_in(&store), 2000);
    // --writes counts as for fillseq (db_bench's writes_ in DoWrite).
    let store = MemoryStore::new();
    let s = Settings {
        writes: Some(1000),
        ..settings(5000)
    };
    assert_eq!(
        measured(&store, BenchmarkKind::FillBatch, &s).operations,
        1000
    );
}

#[test]
fn readrandomwriterandom_does_readwritepercent_reads_in_each_hundred() {
    let store = MemoryStore::new();
    let s = Settings {
        histogram: true,
        readwritepercent: 70,
        ..settings(1000)
    };
    measured(&store, BenchmarkKind::FillSeq, &s);
    let r = measured(&store, BenchmarkKind::ReadRandomWriteRandom, &s);
    assert_eq!(r.operations, 1000);
    // Every key exists, so every read finds; db_bench counts no bytes.
    assert_eq!(
        r.message.as_deref(),
        Some("( reads:700 writes:300 total:1000 found:700)")
    );
    assert_eq!(r.bytes, 0);
    let ops: Vec<(Operation, u64)> = r.histograms.iter().map(|(o, h)| (*o, h.count())).collect();
    assert_eq!(ops, vec![(Operation::Read, 700), (Operation::Write, 300)]);
    let text = r.histogram_text().unwrap();
    assert!(text.starts_with("Microseconds per read:\n"), "{text}");
    assert!(text.contains("\nMicroseconds per write:\n"), "{text}");
    // --reads/--writes: the larger of the two, db_bench's readwrites_.
    let s = Settings {
        reads: Some(50),
        writes: Some(120),
        readwritepercent: 0,
        ..s
    };
    let r = measured(&store, BenchmarkKind::ReadRandomWriteRandom, &s);
    assert_eq!(
        r.message.as_deref(),
        Some("( reads:0 writes:120 total:120 found:0)")
    );
}

#[test]
fn updaterandom_reads_then_writes_each_key() {
    let store = MemoryStore::new();
    let s = Settings {
        histogram: true,
        ..settings(500)
    };
    measured(&store, BenchmarkKind::FillSeq, &s);
    let r = measured(&store, BenchmarkKind::UpdateRandom, &s);
    assert_eq!(r.operations, 500);
    assert_eq!(r.message.as_deref(), Some("( updates:500 found:500)"));
    // The bytes read and the bytes written.
    assert_eq!(r.bytes, 2 * 500 * 116);
    assert_eq!(r.histograms[0].0, Operation::Update);
    assert!(
        r.line().contains(" MB/s ( updates:500 found:500)"),
        "{}",
        r.line()
    );
}

#[test]
fn mixgraph_mixes_gets_puts_and_seeks_as_its_ratios() {
    let store = MemoryStore::new();
    let mut s = settings(2000);
    measured(&store, BenchmarkKind::FillSeq, &s);
    s.reads = Some(10_000);
    s.histogram = true;
    s.mixgraph.get_ratio = 0.6;
    s.mixgraph.put_ratio = 0.3;
    s.mixgraph.seek_ratio = 0.1;
    s.mixgraph.max_scan_len = 20;
    let r = measured(&store, BenchmarkKind::MixGraph, &s);
    assert_eq!(r.operations, 10_000);
    let message = r.message.clone().unwrap();
    let counts: Vec<u64> = message
        .trim_start_matches("( Gets:")
        .split([' ', ',', ':'])
        .filter_map(|w| w.parse().ok())
        .collect();
    let (gets, puts, seeks) = (counts[0], counts[1], counts[2]);
    assert_eq!(gets + puts + seeks, 10_000, "{message}");
    // The query type is rand % 1000 slots of 600/300/100 with uniform keys:
    // binomial sigma at n = 1e4 is at most 50, the bounds are 4 sigma.
    assert!(
        gets.abs_diff(6000) < 200 && puts.abs_diff(3000) < 200,
        "{message}"
    );
    // Uniform keys below num that all exist: every get and seek finds.
    assert!(
        message.contains(&format!(
            ", reads {} in {} found, avg size: ",
            gets + seeks,
            gets + seeks
        )),
        "{message}"
    );
    assert!(message.ends_with(" scan)\n"), "{message:?}");
    let ops: Vec<Operation> = r.histograms.iter().map(|(o, _)| *o).collect();
    assert_eq!(
        ops,
        vec![Operation::Read, Operation::Write, Operation::Seek]
    );
    // Put sizes follow the value Pareto, at least 10 bytes and at most
    // --mix_max_value_size.
    let mut t = store.thread(ThreadContext::new(0, 1)).unwrap();
    let mut rows = ycsb_db::ScanResult::new();
    t.scan(
        &ScanOp::new("usertable", "", usize::MAX, Fields::All),
        &mut rows,
    );
    let sizes: Vec<usize> = rows.iter().map(|(_, r)| r.value_bytes()).collect();
    assert_eq!(sizes.len(), 2000);
    assert!(sizes.iter().all(|n| (10..=1024).contains(n) || *n == 100));
    assert!(sizes.iter().any(|n| *n != 100), "puts rewrote values");
}

#[test]
fn mixgraph_without_puts_prints_c_s_nan_average() {
    let store = MemoryStore::new();
    let s = Settings {
        reads: Some(100),
        ..settings(100)
    };
    let r = measured(&store, BenchmarkKind::MixGraph, &s);
    assert_eq!(
        r.message.as_deref(),
        Some("( Gets:100 Puts:0 Seek:0, reads 0 in 100 found, avg size: -nan value, -nan scan)\n")
    );
}

#[test]
fn duration_overrides_the_count() {
    let store = MemoryStore::new();
    let s = Settings {
        reads: Some(u64::MAX / 2),
        duration: Some(Duration::from_secs(1)),
        ..settings(100)
    };
    let start = std::time::Instant::now();
    let r = measured(&store, BenchmarkKind::ReadRandom, &s);
    let took = start.elapsed();
    // Whole seconds, checked every 1000 reads: at least 1 s, and a memory
    // store's 1000 reads take far less than the 4 s of slack.
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The check runs as the count reaches a multiple of 1000, before that
    // read: the reads done are one short of it, as in db_bench.
    assert_eq!(r.operations % 1000, 999, "stops on a check boundary");
    // fillseq is by count only, as db_bench's sequential fills.
    let r = measured(&store, BenchmarkKind::FillSeq, &s);
    assert_eq!(r.operations, 100);
}

#[test]
fn write_rate_limit_paces_the_fills() {
    let store = MemoryStore::new();
    // 2000 writes of 116 bytes = 232,000 bytes at 500,000 bytes/s, 50,000
    // per 100 ms refill: the first refill's worth at once, the rest after
    // four more refills, 400 ms after the limiter was made. It is made
    // before the threads open their store threads and start their clocks,
    // so the measured time can be that much shorter: 300 ms leaves 100 ms
    // for it (the limiter never grants early; a loaded machine only adds),
    // and without the limit the 2000 writes take a few milliseconds.
    let s = Settings {
        write_rate_limit: 500_000,
        ..settings(2000)
    };
    let r = measured(&store, BenchmarkKind::FillRandom, &s);
    assert_eq!(r.operations, 2000);
    assert!(r.elapsed >= Duration::from_millis(300), "{:?}", r.elapsed);
}

#[test]
fn deletes_run_whole_batches_and_deleterandom_honours_duration() {
    let store = MemoryStore::new();
    let s = Settings {
        batch_size: 7,
        ..settings(100)
    };
    measured(&store, BenchmarkKind::FillSeq, &settings(100));
    // 14 batches of 7 fit in 100 (db_bench's DoDelete): keys 98 and 99 stay.
    let r = measured(&store, BenchmarkKind::DeleteSeq, &s);
    assert_eq!(r.operations, 98);
    assert_eq!(records_in(&store), 2);
    let s = Settings {
        deletes: Some(u64::MAX / 2),
        duration: Some(Duration::from_secs(1)),
        ..settings(100)
    };
    let started = std::time::Instant::now();
    let r = measured(&store, BenchmarkKind::DeleteRandom, &s);
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(r.operations % 1000, 999);
}

#[test]
fn sine_write_rate_replaces_the_write_limit_with_the_sine() {
    let store = MemoryStore::new();
    // A flat sine of 100,000 bytes/s (A = 0): 10,000 bytes per 100 ms
    // refill; 300 writes of 116 bytes = 34,800 bytes need the first
    // refill's worth and three more, 300 ms after the limiter was made
    // (200 ms leaves room for the threads' start; without a limit this
    // takes about a millisecond).
    let mut s = settings(300);
    s.mixgraph.sine_write_rate = true;
    s.mixgraph.sine = [0.0, 1.0, 0.0, 100_000.0];
    assert_eq!(s.effective_write_rate_limit(), 100_000);
    let r = measured(&store, BenchmarkKind::FillRandom, &s);
    assert!(r.elapsed >= Duration::from_millis(200), "{:?}", r.elapsed);
    // A sine at or below zero at 0 s means no limit, as db_bench's 0.
    s.mixgraph.sine = [1.0, 1.0, 0.0, -5.0];
    assert_eq!(s.effective_write_rate_limit(), 0);
}
