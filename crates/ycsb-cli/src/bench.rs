//! `ycsb bench`: db_bench's command line and output on any store.
//!
//! db_bench's vocabulary (flags, defaults, which engine flag sets which
//! store property, the help) is `ycsb_dbbench`'s; this module turns argv
//! into its [`Args`], opens and reopens the store, prints db_bench's lines
//! and maps errors to exit codes.

use std::sync::{Arc, Mutex};

use ycsb_db::{Properties, PropertyDecl, Store, StoreContext, StoreDescriptor, StoreError};
use ycsb_dbbench::{
    self as dbbench, Args, BenchError, BenchOutcome, IntervalReport, Progress, PropertySource,
};

use crate::args::PropertySource as Source;
use crate::{build_properties, find_store, warn_unknown, Failure};

fn usage(message: impl std::fmt::Display) -> Failure {
    Failure::usage(message)
}

/// The store's properties: `-P`/`-p` in argv order, then what db_bench's
/// flags set.
fn store_properties(args: &Args, store: &StoreDescriptor) -> Result<Properties, Failure> {
    let sources: Vec<Source> = args
        .property_sources
        .iter()
        .map(|source| match source {
            PropertySource::File(path) => Source::File(path.clone()),
            PropertySource::Assignment { key, value } => Source::Assignment {
                flag: "-p",
                key: key.clone(),
                value: value.clone(),
            },
        })
        .collect();
    let (props, warnings) = args.store_properties(store, build_properties(&sources)?);
    for warning in warnings {
        eprintln!("ycsb bench: warning: {warning}");
    }
    Ok(props)
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
    (descriptor.open)(&context).map_err(|e| match e {
        StoreError::Property(_) => usage(e),
        other => Failure::runtime(other),
    })
}

struct StderrProgress;

impl Progress for StderrProgress {
    fn interval(&self, report: &IntervalReport) {
        eprintln!("{report}");
    }
}

fn header(args: &Args, descriptor: &StoreDescriptor, store: &dyn Store) {
    let s = &args.settings;
    let info = store.engine_info();
    let engine = if info.name.is_empty() {
        String::new()
    } else {
        format!(" ({} {})", info.name, info.version)
    };
    let compressed = (s.value_size as f64 * s.compression_ratio + 0.5) as u64;
    let mb = |bytes: f64| bytes * s.num as f64 / 1_048_576.0;
    println!("Store:      {}{engine}", descriptor.name);
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
    println!("------------------------------------------------");
}

/// Runs `ycsb bench` with the arguments after `bench`.
pub fn run(args: Vec<String>) -> Result<u8, Failure> {
    let Some(mut args) = Args::parse(args).map_err(usage)? else {
        print!("{}", dbbench::help_text(ycsb_stores::STORES));
        return Ok(0);
    };
    let descriptor = find_store(&args.engine)?;
    let props = store_properties(&args, &descriptor)?;
    let known: Vec<&PropertyDecl> = descriptor.properties.to_vec();
    warn_unknown(&props, &known);
    let fresh_possible = descriptor.can_start_fresh();
    if !fresh_possible && !args.use_existing_db {
        eprintln!(
            "ycsb bench: note: store '{}' cannot be emptied; benchmarks run on its existing data",
            descriptor.name
        );
    }
    dbbench::check_existing_db(args.use_existing_db, &descriptor, &props).map_err(usage)?;
    let mut store = open(&descriptor, &props, !args.use_existing_db)?;
    // Whether the open store is empty and untouched, so that a fresh
    // benchmark need not reopen it.
    let mut untouched = !args.use_existing_db;
    if let Some(seed) = args.seed_from_clock() {
        println!("Set seed to {seed} because --seed was 0");
    }
    header(&args, &descriptor, store.as_ref());
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
        let outcome = dbbench::run(store.as_ref(), kind, &args.settings, &StderrProgress).map_err(
            |e| match e {
                BenchError::Invalid { .. } | BenchError::UnknownBenchmark { .. } => usage(e),
                other => Failure::runtime(other),
            },
        )?;
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
    store.close().map_err(Failure::runtime)?;
    Ok(0)
}
