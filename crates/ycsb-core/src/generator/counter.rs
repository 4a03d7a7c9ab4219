//! Counting generators: per-thread [`Counter`] and [`Sequential`], and the
//! shared [`AcknowledgedCounter`] of run-phase inserts.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::error::{range_len, GeneratorError};
use super::{NumberGenerator, Rng64};

/// `start`, `start + 1`, … for one thread (wrapping at 2^64).
///
/// Java's `CounterGenerator` is one counter shared by all threads; a
/// per-thread counter needs no atomics. Where threads must share a
/// sequence, use [`Sequential`] (disjoint interleaved streams) or
/// [`AcknowledgedCounter`]. [`last_value`](NumberGenerator::last_value) is
/// `start − 1` (wrapping) before the first draw, like Java's.
#[derive(Clone, Debug)]
pub struct Counter {
    next: u64,
}

impl Counter {
    /// A counter whose first value is `start`.
    pub fn new(start: u64) -> Self {
        Self { next: start }
    }
}

impl NumberGenerator for Counter {
    fn next_value(&mut self, _rng: &mut Rng64) -> u64 {
        let v = self.next;
        self.next = v.wrapping_add(1);
        v
    }

    fn last_value(&self) -> u64 {
        self.next.wrapping_sub(1)
    }
}

/// One thread's share of Java's `SequentialGenerator`: `start..=end` in
/// order, wrapping around, split among threads without sharing anything.
///
/// Java's generator is one shared counter c = 0, 1, 2, … yielding
/// `start + c mod (end − start + 1)`. Thread t of T here yields
/// `start + ((t + k·T) mod (end − start + 1))` for k = 0, 1, …, so the T
/// threads together yield exactly the values Java's counter would hand out
/// (each thread taking every T-th). [`last_value`](NumberGenerator::last_value)
/// is `start` before the first draw.
#[derive(Clone, Debug)]
pub struct Sequential {
    start: u64,
    interval: u64,
    /// (t + k·T) mod interval for the next draw.
    offset: u64,
    /// T mod interval.
    step: u64,
    last: u64,
}

impl Sequential {
    /// Thread `thread_id`'s share (0-based) among `thread_count` threads of
    /// the sequence over `start..=end`.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::EmptyRange`] if `start > end`,
    /// [`GeneratorError::RangeTooLarge`] for the full `u64` range,
    /// [`GeneratorError::InvalidThread`] unless
    /// `thread_id < thread_count`.
    pub fn new(
        start: u64,
        end: u64,
        thread_id: u64,
        thread_count: u64,
    ) -> Result<Self, GeneratorError> {
        let interval = range_len(start, end)?;
        if thread_id >= thread_count {
            return Err(GeneratorError::InvalidThread {
                thread_id,
                thread_count,
            });
        }
        Ok(Self {
            start,
            interval,
            offset: thread_id % interval,
            step: thread_count % interval,
            last: start,
        })
    }
}

impl NumberGenerator for Sequential {
    fn next_value(&mut self, _rng: &mut Rng64) -> u64 {
        self.last = self.start + self.offset;
        // offset + step may exceed u64 for intervals above 2^63; compare
        // against the distance to the end instead of adding first.
        let room = self.interval - self.step;
        if self.offset >= room {
            self.offset -= room;
        } else {
            self.offset += self.step;
        }
        self.last
    }

    fn last_value(&self) -> u64 {
        self.last
    }
}

/// Java's window of pending acknowledgements: 2^20 inserts in flight.
pub const ACK_WINDOW_SIZE: usize = 1 << 20;

/// Keeps the two hot counters on separate cache lines: `next` is written
/// by every insert, `limit` read by every read of the `latest`
/// distribution.
#[repr(align(128))]
#[derive(Debug)]
struct Padded<T>(T);

/// The shared sequence of run-phase insert key numbers, whose
/// [`limit`](Self::limit) only covers completed inserts: Java's
/// `AcknowledgedCounterGenerator`.
///
/// An inserting thread [`claim`](Self::next)s a number, inserts the key,
/// then [`acknowledge`](Self::acknowledge)s it. The limit is the largest v
/// such that every number from `start` to v is acknowledged, so a read
/// chosen at or below it never targets a key whose insert is still under
/// way, even when inserts complete out of order.
///
/// Shared through an `Arc`; every method takes `&self` and is lock-free.
/// Acknowledgements are recorded in a ring of `window` slots (Java's
/// 2^20 by default); a slot stores the number acknowledged in it, so a
/// stale slot can never pass for a newer number. Whoever wins a try-lock
/// flag advances the limit over the contiguous acknowledged prefix; an
/// acknowledger that loses is covered by the winner's re-check after
/// releasing the flag, so no acknowledgement is ever left unaccounted (Java
/// can leave one pending until the next acknowledgement). More than
/// `window` numbers in flight is an error, not a hang.
pub struct AcknowledgedCounter {
    start: u64,
    next: Padded<AtomicU64>,
    /// One past the limit: the oldest number not known to be acknowledged.
    pending: Padded<AtomicU64>,
    advancing: AtomicBool,
    /// Slot `v & mask` holds v + 1 once v is acknowledged (0: never used).
    window: Box<[AtomicU64]>,
    mask: u64,
}

impl std::fmt::Debug for AcknowledgedCounter {
    /// The counters and the window size, not the million window slots.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcknowledgedCounter")
            .field("start", &self.start)
            .field("next", &self.next.0.load(Ordering::Relaxed))
            .field("limit", &self.limit())
            .field("window", &self.window.len())
            .finish()
    }
}

/// `len` zeroed slots from the allocator's zeroed memory: for the 8 MiB
/// default window a `calloc`, whose fresh pages the kernel zeroes only when
/// they are first touched, instead of writing every slot at start-up
/// (8.4 M instructions, and 8 MiB of resident memory a workload without
/// inserts never uses).
fn zeroed_window(len: usize) -> Box<[AtomicU64]> {
    if len == 0 {
        return Box::new([]);
    }
    let layout = std::alloc::Layout::array::<AtomicU64>(len).expect("window fits in memory");
    // SAFETY: the layout's size is not zero; all-zero bytes are a valid
    // `AtomicU64` (zero); the memory comes from the global allocator with
    // the layout of a `[AtomicU64]` of `len` slots, which is how the box
    // frees it.
    unsafe {
        let slots = std::alloc::alloc_zeroed(layout).cast::<AtomicU64>();
        if slots.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(slots, len))
    }
}

impl AcknowledgedCounter {
    /// A counter whose first number is `start` (the run phase's
    /// `insertstart + recordcount`, say), with Java's window of
    /// [`ACK_WINDOW_SIZE`] pending acknowledgements.
    pub fn new(start: u64) -> Self {
        Self::build(start, ACK_WINDOW_SIZE)
    }

    /// Like [`new`](Self::new) with room for `window` pending
    /// acknowledgements.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::InvalidWindow`] unless `window` is a power of two.
    pub fn with_window(start: u64, window: usize) -> Result<Self, GeneratorError> {
        if !window.is_power_of_two() {
            return Err(GeneratorError::InvalidWindow(window));
        }
        Ok(Self::build(start, window))
    }

    fn build(start: u64, window: usize) -> Self {
        Self {
            start,
            next: Padded(AtomicU64::new(start)),
            pending: Padded(AtomicU64::new(start)),
            advancing: AtomicBool::new(false),
            window: zeroed_window(window),
            mask: window as u64 - 1,
        }
    }

    /// The first number handed out.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Claims the next number (one atomic increment).
    #[allow(clippy::should_implement_trait)] // shared `&self`, not an Iterator
    pub fn next(&self) -> u64 {
        self.next.0.fetch_add(1, Ordering::Relaxed)
    }

    /// How many numbers have been claimed so far.
    pub fn claimed(&self) -> u64 {
        self.next.0.load(Ordering::Relaxed) - self.start
    }

    /// Java's `lastValue()`: the largest v such that every number up to v
    /// is acknowledged or below `start` (numbers below `start` are taken as
    /// loaded before the run). Before any acknowledgement it is
    /// `start − 1`, and `None` when `start` is 0.
    pub fn limit(&self) -> Option<u64> {
        self.pending.0.load(Ordering::Acquire).checked_sub(1)
    }

    /// Marks `value`, a number from [`next`](Self::next), as inserted.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::NotClaimed`] for a number never handed out,
    /// [`GeneratorError::AlreadyAcknowledged`] for a second
    /// acknowledgement, [`GeneratorError::WindowOverflow`] when `value` is
    /// a window size or more beyond the oldest unacknowledged number (the
    /// acknowledgement is then not recorded).
    pub fn acknowledge(&self, value: u64) -> Result<(), GeneratorError> {
        if value < self.start || value >= self.next.0.load(Ordering::Relaxed) {
            return Err(GeneratorError::NotClaimed { value });
        }
        // Acquire pairs with the advancing thread's release: a slot it
        // passed is then seen as consumed.
        let oldest = self.pending.0.load(Ordering::Acquire);
        if value < oldest {
            return Err(GeneratorError::AlreadyAcknowledged { value });
        }
        if value - oldest > self.mask {
            return Err(GeneratorError::WindowOverflow {
                value,
                oldest,
                window: self.window.len(),
            });
        }
        let slot = &self.window[(value & self.mask) as usize];
        // SeqCst with the flag operations below: either this thread wins the
        // flag, or the holder's re-check after releasing it sees this slot.
        if slot.swap(value + 1, Ordering::SeqCst) == value + 1 {
            return Err(GeneratorError::AlreadyAcknowledged { value });
        }
        self.advance();
        Ok(())
    }

    /// Moves the limit over the contiguous acknowledged prefix, if no other
    /// thread is doing so.
    fn advance(&self) {
        loop {
            if self
                .advancing
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
            {
                return;
            }
            // Only the flag holder writes `pending`.
            let mut index = self.pending.0.load(Ordering::Relaxed);
            // At most a window: acknowledgements beyond it are refused.
            while self.window[(index & self.mask) as usize].load(Ordering::Acquire) == index + 1 {
                index += 1;
            }
            self.pending.0.store(index, Ordering::Release);
            self.advancing.store(false, Ordering::SeqCst);
            // An acknowledger that failed to take the flag while it was held
            // may have filled the slot at `index` after the scan looked.
            if self.window[(index & self.mask) as usize].load(Ordering::SeqCst) != index + 1 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_start_zeroed() {
        for len in [0, 1, 2, 1 << 12, ACK_WINDOW_SIZE] {
            let window = zeroed_window(len);
            assert_eq!(window.len(), len);
            assert!(window.iter().all(|slot| slot.load(Ordering::Relaxed) == 0));
        }
        let counter = AcknowledgedCounter::with_window(7, 1).unwrap();
        assert_eq!(counter.next(), 7);
    }
    use crate::generator::seeded_rng;
    use rand::seq::SliceRandom;
    use std::sync::Arc;

    #[test]
    fn counter_counts_from_start() {
        let mut rng = seeded_rng(0, 0);
        let mut c = Counter::new(5);
        assert_eq!(c.last_value(), 4);
        let got: Vec<u64> = (0..4).map(|_| c.next_value(&mut rng)).collect();
        assert_eq!(got, [5, 6, 7, 8]);
        assert_eq!(c.last_value(), 8);
        let mut c = Counter::new(u64::MAX);
        assert_eq!(c.next_value(&mut rng), u64::MAX);
        assert_eq!(c.next_value(&mut rng), 0);
    }

    #[test]
    fn sequential_single_thread_wraps() {
        let mut rng = seeded_rng(0, 0);
        let mut s = Sequential::new(10, 13, 0, 1).unwrap();
        let got: Vec<u64> = (0..9).map(|_| s.next_value(&mut rng)).collect();
        assert_eq!(got, [10, 11, 12, 13, 10, 11, 12, 13, 10]);
        assert_eq!(s.last_value(), 10);
    }

    #[test]
    fn sequential_threads_interleave_like_the_shared_counter() {
        let mut rng = seeded_rng(0, 0);
        // T threads taking k values each cover Java's first k·T values.
        for (start, end, threads) in [(0u64, 9u64, 3u64), (5, 11, 4), (0, 2, 7), (100, 100, 2)] {
            let interval = end - start + 1;
            let rounds = 11;
            let mut gens: Vec<Sequential> = (0..threads)
                .map(|t| Sequential::new(start, end, t, threads).unwrap())
                .collect();
            for k in 0..rounds {
                for (t, g) in gens.iter_mut().enumerate() {
                    let java_counter = t as u64 + k * threads;
                    assert_eq!(g.next_value(&mut rng), start + java_counter % interval);
                }
            }
        }
    }

    #[test]
    fn sequential_handles_huge_intervals() {
        let mut rng = seeded_rng(0, 0);
        let mut s = Sequential::new(1, u64::MAX, 1, 3).unwrap();
        // interval = 2^64 − 1; thread 1 of 3: offsets 1, 4, 7, …
        assert_eq!(s.next_value(&mut rng), 2);
        assert_eq!(s.next_value(&mut rng), 5);
        let mut s = Sequential::new(0, u64::MAX - 1, 0, 1).unwrap();
        s.offset = u64::MAX - 1;
        assert_eq!(s.next_value(&mut rng), u64::MAX - 1);
        assert_eq!(s.next_value(&mut rng), 0);
    }

    #[test]
    fn sequential_rejects_bad_parameters() {
        assert!(matches!(
            Sequential::new(3, 2, 0, 1),
            Err(GeneratorError::EmptyRange { .. })
        ));
        assert!(matches!(
            Sequential::new(0, u64::MAX, 0, 1),
            Err(GeneratorError::RangeTooLarge { .. })
        ));
        assert!(matches!(
            Sequential::new(0, 9, 2, 2),
            Err(GeneratorError::InvalidThread {
                thread_id: 2,
                thread_count: 2
            })
        ));
        assert!(matches!(
            Sequential::new(0, 9, 0, 0),
            Err(GeneratorError::InvalidThread { .. })
        ));
    }

    #[test]
    fn ack_limit_advances_over_the_contiguous_prefix_only() {
        let c = AcknowledgedCounter::new(100);
        assert_eq!(c.limit(), Some(99));
        let claimed: Vec<u64> = (0..5).map(|_| c.next()).collect();
        assert_eq!(claimed, [100, 101, 102, 103, 104]);
        assert_eq!(c.claimed(), 5);
        c.acknowledge(101).unwrap();
        c.acknowledge(103).unwrap();
        assert_eq!(c.limit(), Some(99));
        c.acknowledge(100).unwrap();
        assert_eq!(c.limit(), Some(101));
        c.acknowledge(102).unwrap();
        assert_eq!(c.limit(), Some(103));
        c.acknowledge(104).unwrap();
        assert_eq!(c.limit(), Some(104));
        assert_eq!(AcknowledgedCounter::new(0).limit(), None);
        assert_eq!(
            format!("{c:?}"),
            "AcknowledgedCounter { start: 100, next: 105, limit: Some(104), window: 1048576 }"
        );
    }

    #[test]
    fn ack_errors() {
        let c = AcknowledgedCounter::with_window(10, 4).unwrap();
        assert!(matches!(
            c.acknowledge(10),
            Err(GeneratorError::NotClaimed { value: 10 })
        ));
        for _ in 0..8 {
            c.next();
        }
        assert!(matches!(
            c.acknowledge(9),
            Err(GeneratorError::NotClaimed { value: 9 })
        ));
        assert!(matches!(
            c.acknowledge(18),
            Err(GeneratorError::NotClaimed { value: 18 })
        ));
        // Window of 4 from the oldest pending number 10: 10..=13 fit.
        c.acknowledge(13).unwrap();
        assert!(matches!(
            c.acknowledge(14),
            Err(GeneratorError::WindowOverflow {
                value: 14,
                oldest: 10,
                window: 4
            })
        ));
        assert!(matches!(
            c.acknowledge(13),
            Err(GeneratorError::AlreadyAcknowledged { value: 13 })
        ));
        for v in 10..13 {
            c.acknowledge(v).unwrap();
        }
        assert_eq!(c.limit(), Some(13));
        assert!(matches!(
            c.acknowledge(12),
            Err(GeneratorError::AlreadyAcknowledged { value: 12 })
        ));
        // The refused 14 can be acknowledged once the window moved on; the
        // slots of 10..13 are reused by 14..17.
        for v in [15, 17, 14, 16] {
            c.acknowledge(v).unwrap();
        }
        assert_eq!(c.limit(), Some(17));
        assert!(matches!(
            AcknowledgedCounter::with_window(0, 3),
            Err(GeneratorError::InvalidWindow(3))
        ));
    }

    #[test]
    fn ack_concurrent_out_of_order() {
        // Four threads claim numbers, hold a few back, and acknowledge them
        // shuffled. Meanwhile the limit must never pass an unacknowledged
        // number, and at the end it must cover everything.
        const THREADS: u64 = 4;
        const PER_THREAD: u64 = 20_000;
        let c = Arc::new(AcknowledgedCounter::with_window(1000, 1 << 12).unwrap());
        let acked: Arc<Vec<AtomicBool>> = Arc::new(
            (0..THREADS * PER_THREAD)
                .map(|_| AtomicBool::new(false))
                .collect(),
        );
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (c, acked) = (Arc::clone(&c), Arc::clone(&acked));
                std::thread::spawn(move || {
                    let mut rng = seeded_rng(10, t);
                    let mut held = Vec::with_capacity(16);
                    for claimed in 1..=PER_THREAD {
                        held.push(c.next());
                        if held.len() == 16 || claimed == PER_THREAD {
                            held.shuffle(&mut rng);
                            // A descheduled thread can hold the oldest number
                            // while others run a window ahead: retry what
                            // overflowed after acknowledging the rest. The
                            // holder of the oldest number always succeeds, so
                            // this cannot livelock.
                            while !held.is_empty() {
                                held.retain(|&v| {
                                    acked[(v - 1000) as usize].store(true, Ordering::SeqCst);
                                    match c.acknowledge(v) {
                                        Ok(()) => false,
                                        Err(GeneratorError::WindowOverflow { .. }) => {
                                            acked[(v - 1000) as usize]
                                                .store(false, Ordering::SeqCst);
                                            true
                                        }
                                        Err(e) => panic!("{e}"),
                                    }
                                });
                                if !held.is_empty() {
                                    std::thread::yield_now();
                                }
                            }
                        }
                        if let Some(limit) = c.limit() {
                            // Every number up to the limit is acknowledged.
                            for v in limit.saturating_sub(20).max(1000)..=limit {
                                assert!(acked[(v - 1000) as usize].load(Ordering::SeqCst), "{v}");
                            }
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(c.limit(), Some(1000 + THREADS * PER_THREAD - 1));
    }

    proptest::proptest! {
        #[test]
        fn sequential_threads_cover_the_shared_counter(
            start in 0u64..1000,
            len in 1u64..50,
            threads in 1u64..9,
            rounds in 1u64..20,
        ) {
            // Round-robin over the threads reproduces Java's single counter
            // value for value.
            let end = start + len - 1;
            let mut rng = seeded_rng(0, 0);
            let mut gens: Vec<Sequential> =
                (0..threads).map(|t| Sequential::new(start, end, t, threads).unwrap()).collect();
            let mut java = 0u64;
            for _ in 0..rounds {
                for g in &mut gens {
                    proptest::prop_assert_eq!(g.next_value(&mut rng), start + java % len);
                    java += 1;
                }
            }
        }
    }
}
