//! Figures of the pieces `cargo xtask bench` cannot see from outside the
//! `ycsb` process: the clock's own cost per reading, the start-up of
//! zipfian choosers over 10^10 items, and the raw speed of value
//! generation. Prints `name value` lines (xtask parses them).
//!
//! `cargo run --release -p ycsb-core --example perf_probe`

use std::hint::black_box;
use std::time::{Duration, Instant};

use ycsb_core::generator::{seeded_rng, ScrambledZipfian, Zipfian};
use ycsb_core::internals::fill_random_value;
use ycsb_core::internals::{Clock, ClockSource};

/// Best of `rounds` timings of `f`, which performs `per_round` units of work.
fn best_ns_per_unit(rounds: usize, per_round: u64, mut f: impl FnMut()) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..rounds {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed());
    }
    best.as_nanos() as f64 / per_round as f64
}

fn main() {
    const READINGS: u64 = 5_000_000;
    for (source, label) in [(ClockSource::Auto, "auto"), (ClockSource::Std, "std")] {
        let clock = Clock::new(source);
        let ns = best_ns_per_unit(5, READINGS, || {
            for _ in 0..READINGS {
                black_box(clock.now());
            }
        });
        println!("clock_{label}_source {}", clock.name());
        println!("clock_{label}_ns_per_reading {ns:.2}");
        // A timed interval as the workload takes it: two readings and the
        // conversion to nanoseconds.
        let ns = best_ns_per_unit(5, READINGS, || {
            for _ in 0..READINGS {
                let start = clock.now();
                black_box(clock.nanos_between(start, clock.now()));
            }
        });
        println!("clock_{label}_ns_per_interval {ns:.2}");
    }

    // Start-up of the zipfian choosers over 10^10 items: the default
    // constant uses Java's precomputed zeta, any other needs ζ(10^10, θ).
    let mut worst_ms: f64 = 0.0;
    for theta in [0.5, 0.8, 0.9, 0.99, 1.2, 2.0] {
        let start = Instant::now();
        let chooser = ScrambledZipfian::with_constant(0, 9_999_999_999, theta);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        black_box(&chooser);
        let start = Instant::now();
        let zipfian = Zipfian::new(0, 9_999_999_999, theta);
        let plain_ms = start.elapsed().as_secs_f64() * 1e3;
        black_box(&zipfian);
        println!("zipfian_startup_theta_{theta}_ms {:.3}", ms.max(plain_ms));
        worst_ms = worst_ms.max(ms).max(plain_ms);
    }
    println!("zipfian_startup_worst_ms {worst_ms:.3}");

    // Field values alone: 10 fields of 100 bytes, as the load phase makes.
    let mut rng = seeded_rng(1, 0);
    let mut field = [0u8; 100];
    const RECORDS: u64 = 1_000_000;
    let ns = best_ns_per_unit(3, RECORDS * 1000, || {
        for _ in 0..RECORDS * 10 {
            fill_random_value(&mut rng, black_box(&mut field));
        }
    });
    println!("value_generation_gb_per_s {:.2}", 1.0 / ns);
}
