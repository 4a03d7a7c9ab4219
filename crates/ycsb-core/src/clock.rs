//! The latency clock: two readings per operation, so its cost is the
//! floor of what the client adds to every operation.
//!
//! `std::time::Instant::now` goes through the vDSO's `clock_gettime`, about
//! 25 ns a reading on the machines this was tuned on (an ordered TSC read,
//! a seqlock and a conversion). When the kernel itself keeps time with the
//! TSC, which means it found the TSC invariant and synchronised across
//! cores, reading it directly costs about 10 ns; ticks become nanoseconds
//! with one multiplication and a shift, the rate calibrated once per
//! process against `Instant`. Everywhere else the clock falls back to
//! `Instant`.
//!
//! The TSC read is not ordered with the instructions around it: it may
//! execute a few nanoseconds before the store call's last instructions
//! retire. HdrHistogram keeps 3 significant digits, so this matters only
//! for latencies of a few nanoseconds, which only the `basic` store has.
//!
//! The kernel's verdict is read once per process. A virtual machine that
//! migrates to a host whose TSC runs at another rate makes the kernel
//! leave the TSC, but this process would keep the old calibration: on
//! hosts that migrate, use `measurement.clock=std`.
//!
//! `measurement.clock=off` takes no readings at all: every latency is
//! recorded as 0, to show what timing costs (`cargo xtask bench`).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ycsb_db::{choice_property, Property};

choice_property! {
    /// Which clock times operations (`measurement.clock`).
    pub enum ClockSource {
        /// The CPU's time-stamp counter when the kernel keeps time with it
        /// (x86-64 Linux with `tsc` as its clocksource), else the OS
        /// monotonic clock.
        Auto = "auto",
        /// The OS monotonic clock (`std::time::Instant`).
        Std = "std",
        /// No timing: latencies are recorded as 0, operations still counted.
        Off = "off",
    }
}

/// `measurement.clock` (listed with the CoreWorkload's properties, whose
/// threads time the operations).
pub const CLOCK: Property<ClockSource> = Property::new(
    "measurement.clock",
    "auto",
    "Clock that times every operation: auto (the CPU's time-stamp counter when the kernel keeps \
     time with it, about 10 ns a reading, else the OS clock), std (the OS monotonic clock, about \
     25 ns) or off (no timing: latencies are recorded as 0, to measure what timing costs).",
);

/// A clock reading: only meaningful to the [`Clock`] that took it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(u64);

// An explicit one-byte tag: otherwise the variant is encoded in a niche of
// the `Instant` inside, and each of the three to four checks an operation
// makes (two readings, a conversion, `is_timing`) decoded it with five
// instructions instead of one comparison.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
enum Kind {
    /// Stamps are TSC ticks.
    Tsc(Tsc),
    /// Stamps are nanoseconds since the clock's base instant.
    Std,
    /// Stamps are always 0.
    Off,
}

/// A latency clock, cheap to copy into each thread.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    kind: Kind,
    base: Instant,
}

impl Clock {
    /// The clock `source` asks for: with [`ClockSource::Auto`] the TSC when
    /// [`tsc_is_reliable`] (calibrating it the first time, about 5 ms),
    /// else the OS clock.
    pub fn new(source: ClockSource) -> Self {
        let kind = match source {
            ClockSource::Auto => match Tsc::get() {
                Some(tsc) => Kind::Tsc(tsc),
                None => Kind::Std,
            },
            ClockSource::Std => Kind::Std,
            ClockSource::Off => Kind::Off,
        };
        let base = match kind {
            Kind::Tsc(tsc) => tsc.base,
            _ => Instant::now(),
        };
        Self { kind, base }
    }

    /// Which clock this is: `tsc`, `std` or `off`.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Tsc(_) => "tsc",
            Kind::Std => "std",
            Kind::Off => "off",
        }
    }

    /// Whether readings measure time at all (not [`ClockSource::Off`]).
    pub fn is_timing(&self) -> bool {
        !matches!(self.kind, Kind::Off)
    }

    /// Reads the clock.
    #[inline]
    pub fn now(&self) -> Stamp {
        match self.kind {
            Kind::Tsc(_) => Stamp(rdtsc()),
            Kind::Std => Stamp(saturating_nanos(self.base.elapsed())),
            Kind::Off => Stamp(0),
        }
    }

    /// Nanoseconds from `start` to `end`; 0 if `end` is earlier.
    #[inline]
    pub fn nanos_between(&self, start: Stamp, end: Stamp) -> u64 {
        let delta = end.0.saturating_sub(start.0);
        match self.kind {
            Kind::Tsc(tsc) => tsc.nanos(delta),
            Kind::Std => delta,
            Kind::Off => 0,
        }
    }

    /// The reading `span` after `stamp` (`stamp` itself for
    /// [`ClockSource::Off`]).
    pub fn after(&self, stamp: Stamp, span: Duration) -> Stamp {
        let nanos = saturating_nanos(span);
        let ticks = match self.kind {
            Kind::Tsc(tsc) => {
                u64::try_from((u128::from(nanos) << 32) / u128::from(tsc.mult.max(1)))
                    .unwrap_or(u64::MAX)
            }
            Kind::Std => nanos,
            Kind::Off => 0,
        };
        Stamp(stamp.0.saturating_add(ticks))
    }

    /// The `Instant` of a reading (the clock's base instant for
    /// [`ClockSource::Off`], whose readings carry no time).
    #[inline]
    pub fn instant(&self, stamp: Stamp) -> Instant {
        match self.kind {
            Kind::Tsc(tsc) => {
                self.base + Duration::from_nanos(tsc.nanos(stamp.0.saturating_sub(tsc.base_ticks)))
            }
            Kind::Std => self.base + Duration::from_nanos(stamp.0),
            Kind::Off => self.base,
        }
    }
}

impl Default for Clock {
    /// [`ClockSource::Auto`].
    fn default() -> Self {
        Self::new(ClockSource::Auto)
    }
}

fn saturating_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The calibrated TSC: nanoseconds = ticks × `mult` >> 32.
#[derive(Clone, Copy, Debug)]
struct Tsc {
    mult: u64,
    base_ticks: u64,
    base: Instant,
}

impl Tsc {
    /// The process-wide calibration, if the TSC is reliable here.
    fn get() -> Option<Tsc> {
        static CALIBRATION: OnceLock<Option<Tsc>> = OnceLock::new();
        *CALIBRATION.get_or_init(|| {
            if tsc_is_reliable() {
                Tsc::calibrate(Duration::from_millis(5))
            } else {
                None
            }
        })
    }

    /// Counts ticks over `window` of `Instant` time. Each end pairs an
    /// `Instant` with the mean of the tick readings taken just before and
    /// after it, so the rate's error is about 20 ns / 5 ms = 4·10⁻⁶,
    /// far below the histograms' 10⁻³ resolution.
    fn calibrate(window: Duration) -> Option<Tsc> {
        fn paired() -> (u64, Instant) {
            // A pair is only as exact as the gap between its two counter
            // reads: a preemption there would skew the rate by its length
            // over the window (1 ms in 5 ms: 20 %). Keep the tightest of a
            // few tries; an undisturbed one takes well under a microsecond.
            let mut best = (u64::MAX, 0, Instant::now());
            for _ in 0..64 {
                let before = rdtsc();
                let now = Instant::now();
                let after = rdtsc();
                let gap = after.saturating_sub(before);
                if gap < best.0 {
                    best = (gap, before + gap / 2, now);
                }
                if gap < 4_096 {
                    break;
                }
            }
            (best.1, best.2)
        }
        let (t0, i0) = paired();
        loop {
            // Sleep, not spin: the window is the process's start-up wall
            // time either way, but a spin was also 5 ms of CPU time in
            // every process, counted against the client wherever CPU time
            // is compared (engine-bench's whole-process ops per CPU-second).
            std::thread::sleep(window.saturating_sub(i0.elapsed()));
            let (t1, i1) = paired();
            let elapsed = i1.duration_since(i0);
            if elapsed >= window {
                let ticks = t1.checked_sub(t0)?;
                let per_second = ticks as f64 / elapsed.as_secs_f64();
                // A rate outside 100 MHz to 20 GHz is no time-stamp
                // counter of a real CPU: some emulation, better not used.
                if !(1e8..=2e10).contains(&per_second) {
                    return None;
                }
                let mult = (1e9 / per_second * (1u64 << 32) as f64) as u64;
                return Some(Tsc {
                    mult,
                    base_ticks: t0,
                    base: i0,
                });
            }
        }
    }

    #[inline]
    fn nanos(&self, ticks: u64) -> u64 {
        ((u128::from(ticks) * u128::from(self.mult)) >> 32).min(u128::from(u64::MAX)) as u64
    }
}

/// Whether the TSC can time operations on this machine: the kernel keeps
/// time with it (Linux's `current_clocksource` is `tsc`), which it does
/// only after checking that it is invariant and synchronised across CPUs.
pub fn tsc_is_reliable() -> bool {
    cfg!(all(target_arch = "x86_64", target_os = "linux"))
        && std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .is_ok_and(|source| source.trim() == "tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86-64 CPU and only reads a counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn rdtsc() -> u64 {
    // Never called: `tsc_is_reliable` is false on other architectures.
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clock_measures_a_sleep_but_off() {
        for source in [ClockSource::Auto, ClockSource::Std] {
            let clock = Clock::new(source);
            // Instant readings bracket the clock's own on both sides, so
            // the clock's interval must lie between the inner and the outer
            // one whatever the scheduler does between readings; 1 % plus
            // 50 µs covers the TSC's calibration error (its pairs are
            // sub-microsecond over a 5 ms window: about 0.02 %).
            let outer_start = Instant::now();
            let start = clock.now();
            let inner_start = Instant::now();
            std::thread::sleep(Duration::from_millis(20));
            let inner_end = Instant::now();
            let end = clock.now();
            let outer_end = Instant::now();
            let measured = clock.nanos_between(start, end) as f64;
            let inner = (inner_end - inner_start).as_nanos() as f64;
            let outer = (outer_end - outer_start).as_nanos() as f64;
            assert!(
                measured >= inner * 0.99 - 50_000.0 && measured <= outer * 1.01 + 50_000.0,
                "{}: {measured} ns, not within [{inner}, {outer}] ns",
                clock.name()
            );
            assert_eq!(clock.nanos_between(end, start), 0, "backwards is 0");
        }
        let off = Clock::new(ClockSource::Off);
        assert!(!off.is_timing());
        let start = off.now();
        std::thread::sleep(Duration::from_millis(1));
        assert_eq!(off.nanos_between(start, off.now()), 0);
    }

    #[test]
    fn after_adds_the_span_in_the_clocks_units() {
        for source in [ClockSource::Auto, ClockSource::Std] {
            let clock = Clock::new(source);
            let start = clock.now();
            let later = clock.after(start, Duration::from_millis(3));
            let nanos = clock.nanos_between(start, later);
            // The TSC round trip loses at most a tick or two to rounding.
            assert!((2_999_990..=3_000_010).contains(&nanos), "{nanos}");
            assert_eq!(clock.after(start, Duration::ZERO), start);
        }
        let off = Clock::new(ClockSource::Off);
        assert_eq!(off.after(off.now(), Duration::from_secs(1)), off.now());
    }

    #[test]
    fn instants_of_readings_follow_the_os_clock() {
        for source in [ClockSource::Auto, ClockSource::Std] {
            let clock = Clock::new(source);
            let before = Instant::now();
            let stamp = clock.now();
            let after = Instant::now();
            let at = clock.instant(stamp);
            // Within a millisecond either side: the calibration error over
            // a test's lifetime is microseconds.
            let slack = Duration::from_millis(1);
            assert!(
                at + slack >= before && at <= after + slack,
                "{}",
                clock.name()
            );
        }
    }

    /// This thread's CPU time in clock ticks (usually 10 ms), from
    /// /proc/thread-self/stat: utime + stime.
    #[cfg(target_os = "linux")]
    fn thread_cpu_ticks() -> u64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // The fields after the command name, which is in parentheses.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn calibration_waits_without_using_the_cpu() {
        // A 300 ms window: a spin would be 30 ticks of CPU time; sleeping,
        // it is the few readings at either end (0 ticks, at most 1 when a
        // tick boundary falls in them). 10 leaves room for a slow machine.
        let before = thread_cpu_ticks();
        let calibrated = Tsc::calibrate(Duration::from_millis(300));
        let used = thread_cpu_ticks() - before;
        assert!(used < 10, "calibration used {used} ticks of CPU time");
        if let Some(tsc) = calibrated {
            assert!(tsc.mult > 0);
        }
    }

    #[test]
    fn auto_uses_the_tsc_exactly_when_the_kernel_does() {
        let clock = Clock::new(ClockSource::Auto);
        assert_eq!(clock.name() == "tsc", tsc_is_reliable());
        assert_eq!(Clock::new(ClockSource::Std).name(), "std");
    }
}
