//! `ycsb bench`: db_bench's command line and output on any store.
//!
//! db_bench's vocabulary (flags, defaults, which engine flag sets which
//! store property, the help) is `ycsb_dbbench`'s; this module turns argv
//! into its [`Args`], opens and reopens the store, prints db_bench's lines
//! and maps errors to exit codes.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use ycsb_db::{Properties, PropertyDecl, Store, StoreContext, StoreDescriptor};
use ycsb_dbbench::{self as dbbench, Args, BenchError, BenchOutcome, IntervalReport, Progress};

use crate::{build_properties, find_store, warn_unknown, Failure};

fn usage(message: impl std::fmt::Display) -> Failure {
    Failure::usage(message)
}

/// The store's properties: `-P`/`-p` in argv order, then what db_bench's
/// flags set; and the warnings about flags the store lacks, to print once
/// the input is known good.
fn store_properties(
    args: &Args,
    store: &StoreDescriptor,
) -> Result<(Properties, Vec<String>), Failure> {
    let (props, warnings) = args.store_properties(store, build_properties(&args.property_sources)?);
    Ok((props, warnings.into_iter().map(|w| w.to_string()).collect()))
}

fn open(
    descriptor: &StoreDescriptor,
    props: &Properties,
    fresh: bool,
) -> Result<Box<dyn Store>, Failure> {
    let props = if fresh {
        dbbench::fresh_properties(descriptor, props)
    } else {
        props.clone()
    };
    let output: ycsb_db::OutputSink = Arc::new(Mutex::new(std::io::stdout()));
    let context = StoreContext::new(&props).with_output(output);
    // A store that cannot be used (a refused data directory, a server
    // that is not there) is bad input, as for `ycsb load|run`.
    (descriptor.open)(&context).map_err(|e| usage(descriptor.name_server_in(e, &props)))
}

/// Interval lines to standard error; finished operations counted for the
/// `--report_file` reporter.
struct StderrProgress {
    counts: Arc<Vec<ThreadCount>>,
}

/// One thread's finished operations, on its own cache line: each thread
/// adds to its own every few hundred operations, the reporter reads all.
#[repr(align(64))]
#[derive(Default)]
struct ThreadCount(AtomicU64);

impl Progress for StderrProgress {
    fn interval(&self, report: &IntervalReport) {
        eprintln!("{report}");
    }

    fn ops_finished(&self, thread: usize, ops: u64) {
        if let Some(count) = self.counts.get(thread % self.counts.len().max(1)) {
            count.0.fetch_add(ops, Ordering::Relaxed);
        }
    }
}

/// db_bench's ReporterAgent: every `interval`, the operations all threads
/// finished since the last line, as `secs_elapsed,interval_qps` (the
/// count, not divided by the interval: db_bench's column), from the first
/// benchmark to the last.
struct Reporter {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

impl Reporter {
    fn start(
        path: &std::path::Path,
        interval: Duration,
        counts: Arc<Vec<ThreadCount>>,
    ) -> Result<Self, Failure> {
        let file = std::fs::File::create(path)
            .map_err(|e| usage(format!("--report_file={}: {e}", path.display())))?;
        let mut out = std::io::BufWriter::new(file);
        let header = writeln!(out, "secs_elapsed,interval_qps").and_then(|()| out.flush());
        header.map_err(|e| usage(format!("--report_file={}: {e}", path.display())))?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut reported = 0u64;
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                let done: u64 = counts.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
                let secs = (started.elapsed().as_secs_f64()).round() as u64;
                writeln!(out, "{secs},{}", done - reported)?;
                out.flush()?;
                reported = done;
            }
            Ok(())
        });
        Ok(Self { stop, thread })
    }

    fn finish(self, path: &std::path::Path) -> Result<(), Failure> {
        let _ = self.stop.send(());
        match self.thread.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Failure::runtime(format!(
                "writing --report_file={}: {e}",
                path.display()
            ))),
            Err(_) => Err(Failure::runtime("the --report_file reporter panicked")),
        }
    }
}

/// The machine's CPU as db_bench shows it: (`count * model`, cache size),
/// from `/proc/cpuinfo`.
fn cpu_info() -> Option<(String, String)> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let field = |name: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .filter(|(k, _)| k.trim() == name)
            .map(|(_, v)| v.trim().to_string())
            .collect::<Vec<_>>()
    };
    let models = field("model name");
    let model = models.first()?.clone();
    let cache = field("cache size").first().cloned().unwrap_or_default();
    Some((format!("{} * {model}", models.len()), cache))
}

/// db_bench's header block, in its words and layout (`RocksDB:    version
/// 7.8.3`, `Keys:`, `Entries:` ...), so that parsers of db_bench output
/// read ours.
fn header(args: &Args, descriptor: &StoreDescriptor, store: &dyn Store, props: &Properties) {
    let s = &args.settings;
    let info = store.engine_info();
    if info.name.is_empty() {
        println!("Store:      {}", descriptor.name);
    } else {
        println!("{}:    version {}", info.name, info.version);
        println!("Store:      {}", descriptor.name);
    }
    let compressed = (s.value_size as f64 * s.compression_ratio + 0.5) as u64;
    let mb = |bytes: f64| bytes * s.num as f64 / 1_048_576.0;
    let build = store.engine_build();
    if build != ycsb_db::EngineBuild::unknown() {
        println!("Build:      {build}");
    }
    // db_bench prints its warning in the header too, so both tools' outputs
    // carry it.
    if let Some(warning) = build.warning() {
        println!("{warning}");
    }
    println!(
        "Date:       {}",
        chrono::Local::now().format("%a %b %e %H:%M:%S %Y")
    );
    if let Some((cpu, cache)) = cpu_info() {
        println!("CPU:        {cpu}");
        println!("CPUCache:   {cache}");
    }
    println!("Keys:       {} bytes each", s.key_size);
    println!(
        "Values:     {} bytes each ({compressed} bytes after compression)",
        s.value_size
    );
    println!("Entries:    {}", s.num);
    println!(
        "RawSize:    {:.1} MB (estimated)",
        mb((s.key_size + s.value_size) as f64)
    );
    println!(
        "FileSize:   {:.1} MB (estimated)",
        mb(s.key_size as f64 + s.value_size as f64 * s.compression_ratio)
    );
    if let Some(codec) = descriptor
        .dbbench_property("--compression_type")
        .and_then(|p| props.get_str(p))
    {
        println!("Compression: {}", db_bench_codec(codec));
    }
    println!("------------------------------------------------");
}

/// db_bench's `--statistics` block after the last benchmark: `STATISTICS:`
/// and the engine's statistics text (RocksDB's `Statistics::ToString`),
/// which a store reports as its `<store>.statistics` final report. A store
/// without one has had `--statistics` warned about as a flag it has no
/// setting for; nothing is printed for it.
fn print_statistics(store: &dyn Store) {
    if let Some(report) = store
        .final_reports()
        .into_iter()
        .find(|r| r.name.ends_with(".statistics"))
    {
        print!("STATISTICS:\n{}\n", report.text);
    }
}

/// A codec as db_bench names it (`Snappy`, `NoCompression`).
fn db_bench_codec(codec: &str) -> String {
    match codec.to_ascii_lowercase().as_str() {
        "none" | "no" | "false" | "0" => "NoCompression".into(),
        "snappy" => "Snappy".into(),
        "zlib" => "ZLIB".into(),
        "bzip2" => "BZip2".into(),
        "lz4" => "LZ4".into(),
        "lz4hc" => "LZ4HC".into(),
        "zstd" => "ZSTD".into(),
        other => other.to_string(),
    }
}

/// Runs `ycsb bench` with the arguments after `bench`.
pub fn run(args: Vec<String>) -> Result<u8, Failure> {
    let Some(mut args) = Args::parse(args).map_err(usage)? else {
        print!("{}", dbbench::help_text(ycsb_stores::STORES));
        return Ok(0);
    };
    let descriptor = find_store(&args.engine)?;
    let (props, warnings) = store_properties(&args, &descriptor)?;
    let fresh_possible = descriptor.can_start_fresh();
    dbbench::check_existing_db(args.use_existing_db, &descriptor, &props).map_err(usage)?;
    let mut store = open(&descriptor, &props, !args.use_existing_db)?;
    // Warnings only once the input is good and the store usable: a bad
    // input (or a store that cannot be used) is one line.
    for warning in warnings {
        eprintln!("ycsb bench: warning: {warning}");
    }
    let known: Vec<&PropertyDecl> = descriptor.properties.to_vec();
    warn_unknown(&props, &known);
    if !fresh_possible && !args.use_existing_db {
        eprintln!(
            "ycsb bench: note: store '{}' cannot be emptied; benchmarks run on its existing data",
            descriptor.name
        );
    }
    // Whether the open store is empty and untouched, so that a fresh
    // benchmark need not reopen it.
    let mut untouched = !args.use_existing_db;
    if let Some(seed) = args.seed_from_clock() {
        println!("Set seed to {seed} because --seed was 0");
    }
    header(&args, &descriptor, store.as_ref(), &props);
    // Every benchmark thread (readwhilewriting's writer too) has a slot.
    let counts: Arc<Vec<ThreadCount>> = Arc::new(
        (0..args.settings.threads + 1)
            .map(|_| ThreadCount::default())
            .collect(),
    );
    let progress = StderrProgress {
        counts: Arc::clone(&counts),
    };
    let reporter = match args.settings.report_interval {
        Some(interval) => Some(Reporter::start(&args.report_file, interval, counts)?),
        None => None,
    };
    for &kind in &args.benchmarks {
        if kind.needs_fresh_db() {
            if args.use_existing_db {
                println!("{:<12} : skipped (--use_existing_db is true)", kind.name());
                continue;
            }
            if !untouched && fresh_possible {
                store.close().map_err(Failure::runtime)?;
                drop(store);
                store = open(&descriptor, &props, true)?;
            }
        }
        untouched = false;
        // db_bench's line before each benchmark it runs; a store that
        // keeps no files of its own (a server, memory) has no path to show.
        if kind.measures() {
            if let Some(dir) = descriptor.data_dir_in(&props) {
                println!("DB path: [{}]", dir.display());
            }
        }
        let outcome =
            dbbench::run(store.as_ref(), kind, &args.settings, &progress).map_err(|e| match e {
                BenchError::Invalid { .. } | BenchError::UnknownBenchmark { .. } => usage(e),
                other => Failure::runtime(other),
            })?;
        args.settings.first_stream += dbbench::thread_streams(kind, &args.settings);
        match outcome {
            BenchOutcome::Measured(report) => {
                println!("{}", report.line());
                if let Some(h) = report.histogram_text() {
                    println!("{h}");
                }
            }
            BenchOutcome::Stats(text) => print!("{text}"),
            _ => {}
        }
    }
    if let Some(reporter) = reporter {
        reporter.finish(&args.report_file)?;
    }
    if args.statistics() {
        print_statistics(store.as_ref());
    }
    store.close().map_err(Failure::runtime)?;
    Ok(0)
}
