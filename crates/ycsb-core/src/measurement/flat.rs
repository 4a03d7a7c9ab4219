//! Latency counts in HdrHistogram's bucket layout, in a plain array: a
//! worker's, its slot's and the status thread's time-series interval.
//!
//! `hdrhistogram::Histogram::record` is general (any unit and precision,
//! resizing, total-count and extreme tracking, overflow checks): about 60
//! instructions per value, a tenth of a whole operation against the `basic`
//! store. A worker only ever records nanoseconds at 3 significant digits
//! and hands its counts to its slot every publish period, so it keeps
//! exactly the counts array a `Histogram` would keep, indexed by the same
//! formula with the constants of that one configuration.
//!
//! The slot and the time-series interval keep the same array: a
//! publication adds the worker's counts to the slot's over the indexes its
//! extremes span ([`move_into`]), a tick adds every slot's to the interval
//! the same way and reads its percentiles off the array
//! ([`values_at_quantiles`]), and only the fold into the status-line interval
//! and the totals makes `Histogram`s ([`drain`]), one `record_n` per
//! distinct value. Before, every publication and tick paid `record_n`s,
//! whole-array adds and resets: costs that follow wall time, not
//! operations, and grow with the spread of the latencies (a loaded
//! machine, valgrind).
//! Tests hold each step to the crate's `Histogram` on the same values.
//!
//! [`move_into`]: FlatCounts::move_into
//! [`values_at_quantiles`]: FlatCounts::values_at_quantiles
//! [`drain`]: FlatCounts::drain

#[cfg(test)]
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

/// A count in a [`FlatCounts`] array: 32 bits for a worker and its slot
/// (half the memory; the recorder folds a slot before it could
/// overflow), 64 for the status thread's time-series interval, which sums
/// every slot.
pub(super) trait Count:
    Copy
    + Default
    + PartialEq
    + std::ops::AddAssign
    + std::ops::BitOr<Output = Self>
    + From<u32>
    + Into<u64>
{
}

impl Count for u32 {}
impl Count for u64 {}

/// One section's latency counts: a worker's since its last publication, a
/// slot's since the status thread last took it, or the status thread's
/// time-series interval.
#[derive(Clone, Debug, Default)]
pub(super) struct FlatCounts<C = u32> {
    /// Counts by HdrHistogram index; grown to the largest index seen.
    counts: Vec<C>,
    /// Values counted since the last drain.
    total: u64,
}

impl<C: Count> FlatCounts<C> {
    /// Counts one value. The caller keeps every count below its type's
    /// maximum between drains (the recorder publishes long before).
    #[inline]
    pub(super) fn record(&mut self, value: u64) {
        let index = index_of(value);
        match self.counts.get_mut(index) {
            Some(count) => *count += C::from(1),
            None => self.grow_and_record(index),
        }
        self.total += 1;
    }

    #[cold]
    #[inline(never)]
    fn grow_and_record(&mut self, index: usize) {
        self.grow_to(index);
        self.counts[index] += C::from(1);
    }

    /// Makes room for `index`, whole buckets at a time: a latency that
    /// grew once usually grows on.
    fn grow_to(&mut self, index: usize) {
        if self.counts.len() <= index {
            let len = (index | (SUB_BUCKET_HALF_COUNT - 1)) + 1;
            self.counts.resize(len, C::default());
        }
    }

    /// Counts `value` `count` times (tests fill a slot with it).
    #[cfg(test)]
    pub(super) fn record_n(&mut self, value: u64, count: u32) {
        self.record(value);
        self.counts[index_of(value)] += C::from(count - 1);
        self.total += u64::from(count - 1);
    }

    /// Values counted since the last drain.
    pub(super) fn len(&self) -> u64 {
        self.total
    }

    /// Bytes held by the counts.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.counts.len() * std::mem::size_of::<C>()
    }

    /// Adds the counts to `into` and zeroes them here (keeping the
    /// array): a publication's step, and a slot's into the time-series
    /// interval. `lowest` and `highest` are the smallest and largest value
    /// counted since the last move or drain (the section's extremes), so
    /// only the indexes between them are visited, a block at a time, and a
    /// block of zero counts (most of them: one outlier stretches the range
    /// over thousands) is skipped after one vectorised test.
    pub(super) fn move_into<D: Count + From<C>>(
        &mut self,
        into: &mut FlatCounts<D>,
        lowest: u64,
        highest: u64,
    ) {
        if self.total == 0 {
            return;
        }
        // The extremes were counted, so the array reaches `highest`; the
        // clamps only keep a wrong hint from panicking (debug builds say).
        debug_assert!(lowest <= highest && index_of(highest) < self.counts.len());
        let last = index_of(highest).min(self.counts.len() - 1);
        let first = index_of(lowest).min(last);
        into.grow_to(last);
        let (mine, theirs) = (
            &mut self.counts[first..=last],
            &mut into.counts[first..=last],
        );
        let mut mine = mine.chunks_exact_mut(BLOCK);
        let mut theirs = theirs.chunks_exact_mut(BLOCK);
        for (mine, theirs) in (&mut mine).zip(&mut theirs) {
            if any_counted(mine) {
                add_and_zero(mine, theirs);
            }
        }
        add_and_zero(mine.into_remainder(), theirs.into_remainder());
        into.total += self.total;
        self.total = 0;
    }

    /// Hands each counted value's bucket (its lowest value) and count to
    /// `take`, in increasing order, and zeroes the counts (keeping the
    /// array): the status thread's step into HdrHistograms, one `record_n`
    /// per distinct value. `lowest` is the smallest value counted since
    /// the last drain (the section's minimum), where the scan starts.
    pub(super) fn drain(&mut self, lowest: u64, mut take: impl FnMut(u64, u64)) {
        // The array spans the largest latency ever seen (tens of thousands
        // of counts after a slow outlier), the values of one interval
        // usually a few hundred: runs of zeroes are skipped eight counts at
        // a time, and the scan stops once it has found every value.
        let zero = C::default();
        let mut left = self.total;
        // A multiple of eight at or below the minimum's index; clamped so
        // that a wrong hint cannot panic (debug builds say).
        debug_assert!(self.total == 0 || index_of(lowest) < self.counts.len());
        let mut base = (index_of(lowest) & !7).min(self.counts.len());
        for chunk in self.counts[base..].chunks_mut(8) {
            if left == 0 {
                break;
            }
            if any_counted(chunk) {
                for (offset, count) in chunk.iter_mut().enumerate() {
                    if *count != zero {
                        let n: u64 = (*count).into();
                        take(value_at(base + offset), n);
                        left = left.saturating_sub(n);
                        *count = zero;
                    }
                }
            }
            base += chunk.len();
        }
        self.total = 0;
    }

    /// Adds the counts to `into` and zeroes them (see [`drain`](Self::drain)).
    #[cfg(test)]
    pub(super) fn drain_into(&mut self, into: &mut Histogram<u64>) {
        self.drain(0, |value, count| into.record_n(value, count).unwrap());
    }

    /// HdrHistogram's `value_at_quantile` over these counts, for each of
    /// `quantiles`: the highest value equivalent to the first bucket at
    /// which the running count reaches the quantile of the total (the
    /// lowest for quantile 0); 0s when empty. One pass when the quantiles
    /// ascend (a later, smaller one starts the scan again). A test holds it
    /// to the crate's on the same values.
    pub(super) fn values_at_quantiles<const N: usize>(&self, quantiles: [f64; N]) -> [u64; N] {
        let mut values = [0; N];
        if self.total == 0 {
            return values;
        }
        // The scan's place: counts before `base` sum to `running`.
        let (mut base, mut running) = (0usize, 0u64);
        for (quantile, value) in quantiles.into_iter().zip(&mut values) {
            let quantile = quantile.min(1.0);
            let wanted = ((quantile * self.total as f64).ceil() as u64).max(1);
            if wanted <= running {
                (base, running) = (0, 0);
            }
            // Whole chunks of eight while the wanted count lies beyond.
            while base + 8 <= self.counts.len() {
                let chunk: u64 = self.counts[base..base + 8].iter().map(|&c| c.into()).sum();
                if running + chunk >= wanted {
                    break;
                }
                running += chunk;
                base += 8;
            }
            while base < self.counts.len() {
                let count: u64 = self.counts[base].into();
                if running + count >= wanted {
                    let lowest = value_at(base);
                    *value = if quantile == 0.0 {
                        lowest
                    } else {
                        lowest.saturating_add(equivalent_range(base)) - 1
                    };
                    break;
                }
                running += count;
                base += 1;
            }
        }
        values
    }
}

/// How many counts [`FlatCounts::move_into`] tests at once for zeroes:
/// 128 bytes of 32-bit counts, a few vector instructions.
const BLOCK: usize = 32;

/// Whether any of `counts` is not zero, in one OR over them (which the
/// compiler vectorises, unlike a test of each).
#[inline]
fn any_counted<C: Count>(counts: &[C]) -> bool {
    counts.iter().fold(C::default(), |any, &c| any | c) != C::default()
}

/// Adds `mine` to `theirs`, index by index, and zeroes `mine`.
#[inline]
fn add_and_zero<C: Count, D: Count + From<C>>(mine: &mut [C], theirs: &mut [D]) {
    for (mine, theirs) in mine.iter_mut().zip(theirs) {
        *theirs += D::from(*mine);
        *mine = C::default();
    }
}

/// How many values the bucket at `index` holds: HdrHistogram's
/// `equivalent_range` (1 in the first two half-buckets, then doubling
/// with each bucket).
fn equivalent_range(index: usize) -> u64 {
    let bucket = (index >> SUB_BUCKET_HALF_COUNT_MAGNITUDE).saturating_sub(1);
    1 << bucket
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
        let mut f = FlatCounts::<u32>::default();
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
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
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
    /// period (with that period's extremes), the slot into the time-series
    /// interval every few, the interval drained now and then.
    /// Values of every magnitude grow the worker's and the slot's arrays at
    /// different times; a count left behind or added twice changes the
    /// histogram.
    #[test]
    fn moved_then_drained_counts_make_the_same_histogram() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(12);
        let (mut local, mut slot) = (FlatCounts::<u32>::default(), FlatCounts::<u32>::default());
        let mut series = FlatCounts::<u64>::default();
        let (mut slot_lowest, mut slot_highest) = (u64::MAX, 0);
        let mut series_lowest = u64::MAX;
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
            (slot_lowest, slot_highest) = (slot_lowest.min(lowest), slot_highest.max(highest));
            if period % 3 == 2 {
                // A tick: the slot into the time-series interval.
                slot.move_into(&mut series, slot_lowest, slot_highest);
                series_lowest = series_lowest.min(slot_lowest);
                (slot_lowest, slot_highest) = (u64::MAX, 0);
            }
            if period % 7 == 6 {
                // The fold, from the interval's minimum.
                series.drain(series_lowest, |v, n| moved.record_n(v, n).unwrap());
                series_lowest = u64::MAX;
            }
        }
        slot.move_into(&mut series, slot_lowest, slot_highest);
        series.drain(series_lowest.min(slot_lowest), |v, n| {
            moved.record_n(v, n).unwrap()
        });
        let direct = direct(&all);
        let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(buckets(&moved), buckets(&direct));
        assert_eq!(moved.len(), all.len() as u64);
    }

    /// The percentiles a tick reads off the time-series interval's counts
    /// are the crate's, at every quantile a report asks for and at the
    /// edges (0, 1, a rank between two buckets), for latencies of every
    /// spread.
    #[test]
    fn quantiles_are_hdrhistograms() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(13);
        let mut quantiles = vec![0.0, 1e-9, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0, 1.5];
        for p in [50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            quantiles.push(ycsb_results::java_quantile(1_000, p));
            quantiles.push(ycsb_results::java_quantile(7, p));
        }
        for spread in [1, 5, 11, 20, 40] {
            for n in [1, 2, 7, 1_000, 20_000] {
                let values: Vec<u64> = (0..n)
                    .map(|_| {
                        let magnitude = rng.random_range(0..=spread);
                        rng.random_range(0..=(1u64 << magnitude))
                    })
                    .collect();
                let mut counts = FlatCounts::<u64>::default();
                for &v in &values {
                    counts.record(v);
                }
                let histogram = direct(&values);
                for &q in &quantiles {
                    assert_eq!(
                        counts.values_at_quantiles([q]),
                        [histogram.value_at_quantile(q)],
                        "quantile {q} of {n} values of spread 2^{spread}"
                    );
                }
                // In one call: ascending, then out of order.
                let ascending = [0.5, 0.99, 0.999];
                let out_of_order = [0.999, 0.0, 0.9, 0.5, 1.0];
                assert_eq!(
                    counts.values_at_quantiles(ascending),
                    ascending.map(|q| histogram.value_at_quantile(q))
                );
                assert_eq!(
                    counts.values_at_quantiles(out_of_order),
                    out_of_order.map(|q| histogram.value_at_quantile(q))
                );
            }
        }
        assert_eq!(FlatCounts::<u64>::default().values_at_quantiles([0.5]), [0]);
    }

    #[test]
    fn drained_counts_start_again_from_zero() {
        let mut f = FlatCounts::<u32>::default();
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
