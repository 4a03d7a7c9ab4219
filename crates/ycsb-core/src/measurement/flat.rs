//! The worker thread's and its slot's latency counts: HdrHistogram's
//! bucket layout in a plain array, recorded with a few instructions.
//!
//! `hdrhistogram::Histogram::record` is general (any unit and precision,
//! resizing, total-count and extreme tracking, overflow checks): about 60
//! instructions per value, a tenth of a whole operation against the `basic`
//! store. A worker only ever records nanoseconds at 3 significant digits
//! and hands its counts to its slot every publish period, so it keeps
//! exactly the counts array a `Histogram` would keep, indexed by the same
//! formula with the constants of that one configuration.
//!
//! The slot keeps the same array: a publication adds the worker's counts
//! to the slot's over the indexes its extremes span ([`move_into`]), and
//! only the status thread (each status interval, each time-series tick, at
//! the end) turns a slot's counts into a `Histogram` ([`drain_into`]), one
//! `record_n` per distinct value. With `record_n` at every 100 ms
//! publication, a run whose latencies spread (a loaded machine, valgrind)
//! paid tens of thousands of instructions a publication.
//! A test records the same values both ways and compares the histograms.
//!
//! [`move_into`]: FlatCounts::move_into
//! [`drain_into`]: FlatCounts::drain_into

use hdrhistogram::Histogram;

/// HdrHistogram's layout for lowest discernible value 1 and 3 significant
/// digits: unit magnitude 0, 2^11 sub-buckets (the smallest power of two
/// above 2·10^3), of which the upper half is used in every bucket but the
/// first.
const SUB_BUCKET_HALF_COUNT_MAGNITUDE: u32 = 10;
const SUB_BUCKET_HALF_COUNT: usize = 1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (2 << SUB_BUCKET_HALF_COUNT_MAGNITUDE) - 1;
/// 64 − unit magnitude − sub-bucket count magnitude.
const LEADING_ZERO_COUNT_BASE: u32 = 64 - (SUB_BUCKET_HALF_COUNT_MAGNITUDE + 1);

/// The counts index of `value`: HdrHistogram's `index_for`.
#[inline]
fn index_of(value: u64) -> usize {
    let bucket = LEADING_ZERO_COUNT_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + sub_bucket - SUB_BUCKET_HALF_COUNT
}

/// The lowest value counted at `index`: HdrHistogram's `value_for`.
fn value_at(index: usize) -> u64 {
    let bucket = (index >> SUB_BUCKET_HALF_COUNT_MAGNITUDE) as i64 - 1;
    let sub_bucket = (index & (SUB_BUCKET_HALF_COUNT - 1)) + SUB_BUCKET_HALF_COUNT;
    if bucket < 0 {
        (sub_bucket - SUB_BUCKET_HALF_COUNT) as u64
    } else {
        (sub_bucket as u64) << bucket
    }
}

/// One worker section's latency counts since its last publication.
#[derive(Clone, Debug, Default)]
pub(super) struct FlatCounts {
    /// Counts by HdrHistogram index; grown to the largest index seen.
    counts: Vec<u32>,
    /// Values recorded since the last drain.
    total: u64,
}

impl FlatCounts {
    /// Counts one value. The caller keeps the total below 2^32 between
    /// drains (the recorder publishes long before).
    #[inline]
    pub(super) fn record(&mut self, value: u64) {
        let index = index_of(value);
        match self.counts.get_mut(index) {
            Some(count) => *count += 1,
            None => self.grow_and_record(index),
        }
        self.total += 1;
    }

    #[cold]
    #[inline(never)]
    fn grow_and_record(&mut self, index: usize) {
        // Whole buckets at a time: a latency that grew once usually grows
        // on.
        let len = (index | (SUB_BUCKET_HALF_COUNT - 1)) + 1;
        self.counts.resize(len, 0);
        self.counts[index] += 1;
    }

    /// Counts `value` `count` times (tests fill a slot with it).
    #[cfg(test)]
    pub(super) fn record_n(&mut self, value: u64, count: u32) {
        self.record(value);
        self.counts[index_of(value)] += count - 1;
        self.total += u64::from(count - 1);
    }

    /// Values recorded since the last drain.
    pub(super) fn len(&self) -> u64 {
        self.total
    }

    /// Bytes held by the counts.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.counts.len() * std::mem::size_of::<u32>()
    }

    /// Adds the counts to `into` and zeroes them here (keeping the
    /// array): the publication's step. `lowest` and `highest` are the
    /// smallest and largest value recorded since the last move or drain
    /// (the section's extremes), so only the indexes between them are
    /// visited; a plain add over them, which the compiler vectorises, costs
    /// less than testing each count.
    ///
    /// The caller keeps `into`'s total below 2^32 (the recorder folds a
    /// full slot first).
    pub(super) fn move_into(&mut self, into: &mut FlatCounts, lowest: u64, highest: u64) {
        if self.total == 0 {
            return;
        }
        // The extremes were recorded, so the array reaches `highest`; the
        // clamps only keep a wrong hint from panicking (debug builds say).
        debug_assert!(lowest <= highest && index_of(highest) < self.counts.len());
        let last = index_of(highest).min(self.counts.len() - 1);
        let first = index_of(lowest).min(last);
        if into.counts.len() <= last {
            into.counts.resize(self.counts.len(), 0);
        }
        let (mine, theirs) = (
            &mut self.counts[first..=last],
            &mut into.counts[first..=last],
        );
        for (mine, theirs) in mine.iter_mut().zip(theirs) {
            *theirs += *mine;
            *mine = 0;
        }
        into.total += self.total;
        self.total = 0;
    }

    /// Adds the counts to `into` and zeroes them (keeping the array): the
    /// status thread's step, one `record_n` per distinct value.
    pub(super) fn drain_into(&mut self, into: &mut Histogram<u64>) {
        // The array spans the largest latency ever seen (tens of thousands
        // of counts after a slow outlier), the values of one period usually
        // a few hundred: runs of zeroes are skipped eight counts at a time,
        // and the scan stops once it has found every value recorded.
        let mut left = self.total;
        let mut base = 0;
        for chunk in self.counts.chunks_mut(8) {
            if left == 0 {
                break;
            }
            if chunk.iter().fold(0, |any, &c| any | c) != 0 {
                for (offset, count) in chunk.iter_mut().enumerate() {
                    if *count != 0 {
                        // Fails only when the histogram cannot grow; then
                        // nothing better can be done than keep the other
                        // figures.
                        let _ = into.record_n(value_at(base + offset), u64::from(*count));
                        left -= u64::from(*count);
                        *count = 0;
                    }
                }
            }
            base += chunk.len();
        }
        self.total = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn direct(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new(3).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    fn flat(values: &[u64]) -> Histogram<u64> {
        let mut f = FlatCounts::default();
        for &v in values {
            f.record(v);
        }
        assert_eq!(f.len(), values.len() as u64);
        let mut h = Histogram::new(3).unwrap();
        f.drain_into(&mut h);
        assert_eq!(f.len(), 0);
        h
    }

    fn assert_same(values: &[u64]) {
        let (a, b) = (direct(values), flat(values));
        let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value().into()))
                .collect()
        };
        assert_eq!(buckets(&a), buckets(&b));
        assert_eq!(a.len(), b.len());
        assert_eq!((a.min(), a.max()), (b.min(), b.max()));
    }

    #[test]
    fn layout_is_hdrhistograms() {
        let mut values: Vec<u64> = (0..5000).collect();
        for shift in 0..64 {
            let p = 1u64 << shift;
            values.extend([p - 1, p, p + 1, p.saturating_mul(3) / 2]);
        }
        values.push(u64::MAX / 2);
        for &v in &values {
            assert!(value_at(index_of(v)) <= v, "{v}");
            assert_eq!(index_of(value_at(index_of(v))), index_of(v), "{v}");
        }
        assert_same(&values);
    }

    #[test]
    fn random_latencies_land_in_the_same_buckets() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let values: Vec<u64> = (0..100_000)
            .map(|_| {
                let magnitude = rng.random_range(0..40);
                rng.random_range(0..=(1u64 << magnitude))
            })
            .collect();
        assert_same(&values);
    }

    /// The publication path: a worker's counts moved into its slot every
    /// period (with that period's extremes), the slot drained now and then.
    /// Values of every magnitude grow the worker's and the slot's arrays at
    /// different times; a count left behind or added twice changes the
    /// histogram.
    #[test]
    fn moved_then_drained_counts_make_the_same_histogram() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(12);
        let (mut local, mut slot) = (FlatCounts::default(), FlatCounts::default());
        let mut moved = Histogram::new(3).unwrap();
        let mut all = Vec::new();
        for period in 0..60 {
            let (mut lowest, mut highest) = (u64::MAX, 0);
            for _ in 0..rng.random_range(0..500) {
                let magnitude = rng.random_range(0..(10 + period / 2));
                let value = rng.random_range(0..=(1u64 << magnitude));
                local.record(value);
                (lowest, highest) = (lowest.min(value), highest.max(value));
                all.push(value);
            }
            local.move_into(&mut slot, lowest, highest);
            assert_eq!(local.len(), 0);
            assert!(local.counts.iter().all(|&c| c == 0), "period {period}");
            if period % 7 == 6 {
                slot.drain_into(&mut moved);
            }
        }
        slot.drain_into(&mut moved);
        let direct = direct(&all);
        let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(buckets(&moved), buckets(&direct));
        assert_eq!(moved.len(), all.len() as u64);
    }

    #[test]
    fn drained_counts_start_again_from_zero() {
        let mut f = FlatCounts::default();
        f.record(5);
        f.record(1_000_000);
        let mut h = Histogram::new(3).unwrap();
        f.drain_into(&mut h);
        f.record(7);
        f.drain_into(&mut h);
        assert_eq!(h.len(), 3);
        assert_eq!(h.count_at(5), 1);
        assert_eq!(h.count_at(7), 1);
        // A drain stops at the last value it holds; values past that place
        // in the next period are still found.
        f.record(3);
        f.record(2_000_000);
        f.drain_into(&mut h);
        assert_eq!(h.len(), 5);
        assert_eq!(h.count_at(2_000_000), 1);
        let mut again = Histogram::new(3).unwrap();
        f.drain_into(&mut again);
        assert_eq!(again.len(), 0);
    }
}
