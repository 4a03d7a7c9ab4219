//! Runs one hot path of the client a given number of times, and nothing
//! else, so that `cargo xtask instructions` can count its instructions per
//! operation under cachegrind: the difference between a run of `n` and a
//! run of `2n` operations, divided by `n`, is the marginal cost of one,
//! free of start-up.
//!
//! `ycsb-hot-paths <path> <operations>`, where `<path>` is one of
//! [`PATHS`]. Each path runs exactly the library code a `ycsb` run
//! executes per operation (the same functions `benches/hot_path.rs` times),
//! on the `basic` store, which does nothing, so that only the client is
//! counted.

use std::hint::black_box;
use std::process::ExitCode;

use ycsb_core::db::codec;
use ycsb_core::db::{Fields, Properties, Record, RecordTemplate, StoreContext, ThreadContext};
use ycsb_core::internals::{Measurements, ValueRng};
use ycsb_core::measurement::MeasurementSettings;
use ycsb_core::workload::CoreWorkload;

/// The paths, with what each one counts.
const PATHS: [(&str, &str); 5] = [
    (
        "workload_a",
        "one operation of workload A (zipfian, half reads and half updates) on the basic store: \
         the choice, the key, an update's value, the timed call and its recording",
    ),
    (
        "workload_c",
        "one operation of workload C (zipfian reads) on the basic store",
    ),
    (
        "load_insert",
        "one load insert on the basic store: the key, ten random 100-byte fields, the timed call",
    ),
    (
        "record_values",
        "a loaded record's values: ten 100-byte fields filled as a load insert fills them",
    ),
    (
        "record_codec",
        "the record codec on ten 100-byte fields: an insert's encoding, a read's decoding and \
         an update's merge of one field",
    ),
];

fn workload_properties(read_proportion: f64) -> Properties {
    Properties::new()
        .with("recordcount", 1_000_000)
        .with("operationcount", 0)
        .with("readproportion", read_proportion)
        .with("updateproportion", 1.0 - read_proportion)
        .with("requestdistribution", "zipfian")
}

/// Runs `path` `operations` times.
fn run(path: &str, operations: u64) -> Result<(), String> {
    let store_properties = Properties::new();
    let store = (ycsb_basic::DESCRIPTOR.open)(&StoreContext::new(&store_properties))
        .map_err(|e| e.to_string())?;
    let mut db = store
        .thread(ThreadContext::new(0, 1))
        .map_err(|e| e.to_string())?;
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    let mut recorder = measurements.recorder(0);
    let names: Vec<String> = (0..10).map(|i| format!("field{i}")).collect();
    let template = RecordTemplate::new(&names, 100);
    let mut values = ValueRng::new(1);
    let mut record = Record::with_capacity(10, 1000);
    match path {
        "workload_a" | "workload_c" => {
            let read_proportion = if path == "workload_a" { 0.5 } else { 1.0 };
            let workload = CoreWorkload::from_properties(&workload_properties(read_proportion))
                .map_err(|e| e.to_string())?;
            let mut thread = workload.thread(0, 1, 42).map_err(|e| e.to_string())?;
            for _ in 0..operations {
                black_box(thread.do_transaction(&mut *db, &mut recorder, None));
            }
        }
        "load_insert" => {
            let workload =
                CoreWorkload::from_properties(&workload_properties(0.5).with("operationcount", 1))
                    .map_err(|e| e.to_string())?;
            let mut thread = workload.thread(0, 1, 42).map_err(|e| e.to_string())?;
            for _ in 0..operations {
                black_box(thread.do_insert(&mut *db, &mut recorder, &mut |_| {}));
            }
        }
        "record_values" => {
            for _ in 0..operations {
                record.clear();
                record.push_template(&template, |area, starts| values.fill_at(area, starts, 100));
                black_box(&record);
            }
        }
        "record_codec" => {
            record.push_template(&template, |area, starts| values.fill_at(area, starts, 100));
            let mut change = Record::new();
            change.push("field7", &[b'u'; 100]);
            let (mut encoded, mut merged, mut read) = (
                Vec::with_capacity(2048),
                Vec::with_capacity(2048),
                Record::new(),
            );
            for _ in 0..operations {
                encoded.clear();
                codec::encode(black_box(&record), &mut encoded);
                read.clear();
                codec::decode(black_box(&encoded), Fields::All, &mut read)
                    .map_err(|e| e.to_string())?;
                merged.clear();
                codec::merge(black_box(&encoded), &change, &mut merged)
                    .map_err(|e| e.to_string())?;
                black_box((&read, &merged));
            }
        }
        _ => return Err(format!("unknown path '{path}'")),
    }
    Ok(())
}

fn usage() -> String {
    let mut text = String::from("usage: ycsb-hot-paths <path> <operations>\npaths:\n");
    for (name, meaning) in PATHS {
        text.push_str(&format!("  {name}: {meaning}\n"));
    }
    text
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--list") {
        for (name, meaning) in PATHS {
            println!("{name}\t{meaning}");
        }
        return ExitCode::SUCCESS;
    }
    let [path, operations] = args.as_slice() else {
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    let Ok(operations) = operations.parse::<u64>() else {
        eprintln!("ycsb-hot-paths: operations: '{operations}' is not a whole number");
        return ExitCode::from(2);
    };
    match run(path, operations) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ycsb-hot-paths: {e}");
            eprint!("{}", usage());
            ExitCode::from(2)
        }
    }
}
