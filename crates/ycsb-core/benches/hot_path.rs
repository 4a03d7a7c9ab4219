//! Micro-benchmarks of everything a client thread does per operation:
//! each generator, key building, value generation, the clock, histogram
//! recording, and the whole per-operation loop on the `basic` store.
//!
//! `cargo bench -p ycsb-core --bench hot_path` (add a filter such as
//! `-- generator/` to run a group). These are measurements, not tests: the
//! machines they run on are shared and noisy, so read them as figures and
//! compare within one run. docs/performance.md says how; the reference
//! figures are in docs/journal/performance-client.md ("Micro-benchmarks").

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ycsb_core::db::StoreContext;
use ycsb_core::db::{Properties, Record, Status, ThreadContext};
use ycsb_core::generator::{
    fnvhash64, seeded_rng, AcknowledgedCounter, Discrete, Exponential, Hotspot, NumberGenerator,
    ScrambledZipfian, Sequential, SkewedLatest, Uniform, Zipfian,
};
use ycsb_core::internals::{
    build_deterministic_value, build_key_name, fill_random_value, Clock, ClockSource, KeyOrder,
    Measurements, ValueRng,
};
use ycsb_core::measurement::MeasurementSettings;
use ycsb_core::workload::CoreWorkload;
use ycsb_results::Operation;

fn generators(c: &mut Criterion) {
    let mut group = c.benchmark_group("generator");
    group.throughput(Throughput::Elements(1));
    let mut rng = seeded_rng(1, 0);
    let mut draw = |name: &str, g: &mut dyn NumberGenerator| {
        group.bench_function(name, |b| b.iter(|| g.next_value(black_box(&mut rng))));
    };
    draw("uniform_1e6", &mut Uniform::new(0, 999_999).unwrap());
    draw("zipfian_1e6", &mut Zipfian::new(0, 999_999, 0.99).unwrap());
    draw(
        "scrambled_zipfian_1e6",
        &mut ScrambledZipfian::new(0, 999_999).unwrap(),
    );
    draw(
        "hotspot_1e6",
        &mut Hotspot::new(0, 999_999, 0.2, 0.8).unwrap(),
    );
    draw(
        "exponential",
        &mut Exponential::new(95.0, 857_142.0).unwrap(),
    );
    draw(
        "sequential_1e6",
        &mut Sequential::new(0, 999_999, 0, 1).unwrap(),
    );
    let inserts = Arc::new(AcknowledgedCounter::new(1_000_000));
    draw("skewed_latest_1e6", &mut SkewedLatest::new(inserts));
    group.finish();

    let mut group = c.benchmark_group("generator");
    group.throughput(Throughput::Elements(1));
    let mut rng = seeded_rng(1, 0);
    let mut mix = Discrete::new(vec![(0.5, 'r'), (0.5, 'u')]).unwrap();
    group.bench_function("discrete_workload_a", |b| b.iter(|| mix.next(&mut rng)));
    let mut mix = Discrete::new(vec![
        (0.2, 'r'),
        (0.2, 'u'),
        (0.2, 'i'),
        (0.2, 's'),
        (0.2, 'm'),
    ])
    .unwrap();
    group.bench_function("discrete_five_choices", |b| b.iter(|| mix.next(&mut rng)));
    // Start-up: ζ over 10^10 + 1 items with a non-default constant (Java
    // sums every term: minutes).
    group.bench_function("scrambled_zipfian_new_theta_0.8", |b| {
        b.iter(|| ScrambledZipfian::with_constant(0, black_box(999_999), 0.8).unwrap())
    });
    group.finish();
}

fn keys_and_values(c: &mut Criterion) {
    let mut group = c.benchmark_group("key");
    group.throughput(Throughput::Elements(1));
    let mut key = String::with_capacity(32);
    let mut n = 0u64;
    group.bench_function("fnvhash64", |b| {
        b.iter(|| {
            n += 1;
            fnvhash64(black_box(n))
        })
    });
    group.bench_function("build_hashed", |b| {
        b.iter(|| {
            n += 1;
            build_key_name(black_box(n), KeyOrder::Hashed, 1, &mut key);
        })
    });
    group.bench_function("build_ordered_padded_20", |b| {
        b.iter(|| {
            n += 1;
            build_key_name(black_box(n), KeyOrder::Ordered, 20, &mut key);
        })
    });
    group.finish();

    let mut group = c.benchmark_group("value");
    let mut rng = seeded_rng(1, 0);
    for len in [100usize, 1000] {
        let mut buf = vec![0u8; len];
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_function(format!("random_{len}"), |b| {
            b.iter(|| fill_random_value(&mut rng, black_box(&mut buf)))
        });
    }
    let mut record = Record::with_capacity(10, 1000);
    let names: Vec<String> = (0..10).map(|i| format!("field{i}")).collect();
    group.throughput(Throughput::Bytes(1000));
    // As a load insert builds its record: every value written in place by
    // one run of the eight-lane value stream, then the fields' frames.
    let mut values = ValueRng::new(1);
    let template = ycsb_core::db::RecordTemplate::new(&names, 100);
    group.bench_function("record_10x100_filled", |b| {
        b.iter(|| {
            record.clear();
            record.push_template(&template, |area, starts| values.fill_at(area, starts, 100));
        })
    });
    // Field by field, each value its own fill of the same stream.
    group.bench_function("record_10x100_push_with", |b| {
        b.iter(|| {
            record.clear();
            for name in &names {
                record.push_with(name, 100, |buf| values.fill_values(buf, 100));
            }
        })
    });
    // The same with the general stream (groups one word at a time), for
    // comparison.
    group.bench_function("record_10x100_push_with_xoshiro", |b| {
        b.iter(|| {
            record.clear();
            for name in &names {
                record.push_with(name, 100, |buf| fill_random_value(&mut rng, buf));
            }
        })
    });
    // What an embedded store does per read of a 10 x 100-byte record:
    // decode its stored bytes into the caller's (cleared) record.
    record.clear();
    record.push_template(&template, |area, starts| values.fill_at(area, starts, 100));
    let mut stored = Vec::new();
    ycsb_core::db::codec::encode(&record, &mut stored);
    let mut read = Record::new();
    group.throughput(Throughput::Bytes(stored.len() as u64));
    group.bench_function("decode_10x100", |b| {
        b.iter(|| {
            read.clear();
            ycsb_core::db::codec::decode(black_box(&stored), ycsb_core::db::Fields::All, &mut read)
                .unwrap();
        })
    });
    // What an embedded store does per read in place: check the stored
    // bytes, then show them.
    group.bench_function("parse_10x100", |b| {
        b.iter(|| ycsb_core::db::codec::EncodedRecord::parse(black_box(&stored)).unwrap())
    });
    // An insert's encoding, and an update's merge of one 100-byte field.
    let mut encoded = Vec::with_capacity(2048);
    group.bench_function("encode_10x100", |b| {
        b.iter(|| {
            encoded.clear();
            ycsb_core::db::codec::encode(black_box(&record), &mut encoded);
        })
    });
    let mut change = Record::new();
    change.push("field7", &[b'u'; 100]);
    group.bench_function("merge_one_10x100", |b| {
        b.iter(|| {
            encoded.clear();
            ycsb_core::db::codec::merge(black_box(&stored), &change, &mut encoded).unwrap();
        })
    });
    let mut out = Vec::new();
    group.throughput(Throughput::Bytes(100));
    group.bench_function("deterministic_100", |b| {
        b.iter(|| build_deterministic_value("user6284781860667377211", "field3", 100, &mut out))
    });
    group.finish();
}

fn clock_and_recording(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock");
    group.throughput(Throughput::Elements(1));
    for source in [ClockSource::Auto, ClockSource::Std] {
        let clock = Clock::new(source);
        group.bench_function(format!("now_{}", clock.name()), |b| b.iter(|| clock.now()));
        group.bench_function(format!("interval_{}", clock.name()), |b| {
            b.iter(|| {
                let start = clock.now();
                clock.nanos_between(start, clock.now())
            })
        });
    }
    group.bench_function("instant_now", |b| b.iter(std::time::Instant::now));
    group.finish();

    let mut group = c.benchmark_group("recorder");
    group.throughput(Throughput::Elements(1));
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    let mut recorder = measurements.recorder(0);
    let mut latency = 0u64;
    group.bench_function("record", |b| {
        b.iter(|| {
            // Latencies spread over three decades, as a real store's.
            latency = (latency + 7_919) % 2_000_000;
            recorder.record(Operation::Read, Status::Ok, black_box(latency + 100));
            recorder.record_intended(Operation::Read, Status::Ok, latency + 100);
        })
    });
    group.finish();
}

fn workload_props(clock: &str) -> Properties {
    Properties::new()
        .with("recordcount", 1_000_000)
        .with("operationcount", 0)
        .with("readproportion", 0.5)
        .with("updateproportion", 0.5)
        .with("requestdistribution", "zipfian")
        .with("measurement.clock", clock)
}

fn operation_loop(c: &mut Criterion) {
    let mut group = c.benchmark_group("operation");
    group.throughput(Throughput::Elements(1));
    let props = Properties::new();
    let store = (ycsb_basic::DESCRIPTOR.open)(&StoreContext::new(&props)).unwrap();
    for clock in ["auto", "std", "off"] {
        let workload = CoreWorkload::from_properties(&workload_props(clock)).unwrap();
        let mut thread = workload.thread(0, 1, 42).unwrap();
        let mut db = store.thread(ThreadContext::new(0, 1)).unwrap();
        let measurements = Measurements::new(&MeasurementSettings::default(), 1);
        let mut recorder = measurements.recorder(0);
        group.bench_function(format!("workload_a_basic_clock_{clock}"), |b| {
            b.iter(|| thread.do_transaction(&mut *db, &mut recorder, None))
        });
    }
    // A load insert: key, 10 random fields of 100 bytes, the timed call.
    let workload = CoreWorkload::from_properties(&workload_props("auto")).unwrap();
    let mut thread = workload.thread(0, 1, 42).unwrap();
    let mut db = store.thread(ThreadContext::new(0, 1)).unwrap();
    let measurements = Measurements::new(&MeasurementSettings::default(), 1);
    let mut recorder = measurements.recorder(0);
    group.throughput(Throughput::Bytes(1000));
    group.bench_function("load_insert_basic_10x100", |b| {
        b.iter(|| thread.do_insert(&mut *db, &mut recorder, &mut |_| {}))
    });
    group.finish();
}

criterion_group!(
    benches,
    generators,
    keys_and_values,
    clock_and_recording,
    operation_loop
);
criterion_main!(benches);
