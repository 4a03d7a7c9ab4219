//! Java's `SkewedLatestGenerator`: the newest acknowledged insert is the
//! most popular key.

use std::sync::Arc;

use super::counter::AcknowledgedCounter;
use super::zeta::zeta;
use super::zipfian::{Zipfian, ZIPFIAN_CONSTANT};
use super::{NumberGenerator, Rng64};

/// `max − zipfian(max)`, where `max` is the current
/// [`limit`](AcknowledgedCounter::limit) of the insert sequence: the
/// distribution behind `requestdistribution=latest`.
///
/// As in Java, the zipfian (θ = 0.99) draws from `0..max` (max items, not
/// max + 1), so values fall in `1..=max` and key 0 is never chosen once
/// `max ≥ 1`. The zipfian follows the growing limit incrementally and with
/// the η fix described at [`Zipfian`]. Each thread owns one instance; the
/// counter is shared.
#[derive(Debug)]
pub struct SkewedLatest {
    basis: Arc<AcknowledgedCounter>,
    zipfian: Zipfian,
    last: u64,
}

impl SkewedLatest {
    /// A generator following `basis`'s acknowledged limit.
    pub fn new(basis: Arc<AcknowledgedCounter>) -> Self {
        let items = basis.limit().unwrap_or(0).max(1);
        let zipfian = Zipfian::build(0, items, ZIPFIAN_CONSTANT, zeta(items, ZIPFIAN_CONSTANT));
        Self {
            last: basis.limit().unwrap_or(0),
            basis,
            zipfian,
        }
    }

    /// The next key number, or `None` while no number is readable (the
    /// counter starts at 0 and nothing is acknowledged yet).
    pub fn next_key(&mut self, rng: &mut Rng64) -> Option<u64> {
        let max = self.basis.limit()?;
        // Java's zipfian over zero items returns 0.
        let next = if max == 0 {
            0
        } else {
            max - self.zipfian.next_with_item_count(rng, max)
        };
        self.last = next;
        Some(next)
    }
}

impl NumberGenerator for SkewedLatest {
    /// [`next_key`](SkewedLatest::next_key), with 0 while nothing is
    /// readable.
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        self.next_key(rng).unwrap_or(0)
    }

    /// The last drawn key; before the first draw, the limit at construction
    /// (0 if none).
    fn last_value(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::seeded_rng;
    use crate::generator::testutil::assert_fits;

    #[test]
    fn newest_is_hottest_and_fits_the_zipfian() {
        // Limit 499 (keys 0..=499 loaded): values max − rank for a zipfian
        // rank over 499 items.
        let counter = Arc::new(AcknowledgedCounter::new(500));
        let mut g = SkewedLatest::new(Arc::clone(&counter));
        let mut rng = seeded_rng(20, 0);
        let mut counts = vec![0u64; 499];
        for _ in 0..100_000 {
            let v = g.next_value(&mut rng);
            assert!((1..=499).contains(&v), "{v}");
            assert_eq!(g.last_value(), v);
            counts[(499 - v) as usize] += 1;
        }
        let reference = Zipfian::new(0, 498, ZIPFIAN_CONSTANT).unwrap();
        let expected: Vec<f64> = (0..499).map(|r| reference.probability(r)).collect();
        assert_fits(&counts, &expected);
    }

    #[test]
    fn follows_acknowledged_inserts_only() {
        let counter = Arc::new(AcknowledgedCounter::new(100));
        let mut g = SkewedLatest::new(Arc::clone(&counter));
        let mut rng = seeded_rng(21, 0);
        let a = counter.next();
        let b = counter.next();
        counter.acknowledge(b).unwrap();
        // 100 is not acknowledged, so 101 is not readable either.
        assert!((0..2000).all(|_| g.next_value(&mut rng) <= 99));
        counter.acknowledge(a).unwrap();
        let mut seen_newest = false;
        for _ in 0..2000 {
            let v = g.next_value(&mut rng);
            assert!(v <= 101);
            seen_newest |= v == 101;
        }
        assert!(seen_newest);
    }

    #[test]
    fn nothing_readable_yet() {
        let counter = Arc::new(AcknowledgedCounter::new(0));
        let mut g = SkewedLatest::new(Arc::clone(&counter));
        let mut rng = seeded_rng(22, 0);
        assert_eq!(g.next_key(&mut rng), None);
        let v = counter.next();
        counter.acknowledge(v).unwrap();
        assert_eq!(g.next_key(&mut rng), Some(0));
        let v = counter.next();
        counter.acknowledge(v).unwrap();
        assert_eq!(g.next_key(&mut rng), Some(1));
    }
}
