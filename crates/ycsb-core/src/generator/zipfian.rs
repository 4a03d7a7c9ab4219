//! Zipfian and scrambled zipfian generators (Gray et al., "Quickly
//! Generating Billion-Record Synthetic Databases", SIGMOD 1994), as in
//! Java YCSB's `ZipfianGenerator` and `ScrambledZipfianGenerator`.

use rand::Rng;

use super::error::{range_len, GeneratorError};
use super::zeta::{zeta, zeta_extend};
use super::{fnvhash64_low_bytes, NumberGenerator, Rng64};

/// Java YCSB's default zipfian constant θ.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// The largest zipfian constant accepted.
///
/// Gray et al.'s algorithm works for any θ ≥ 0 but 1 (where α = 1/(1−θ) is
/// infinite): for θ > 1 both η and the exponent α are negative. It needs
/// (n/2)^(θ−1) as a finite `f64` for every item count n < 2^64, which holds
/// up to θ = 16; at such θ nearly every draw is rank 0 or 1 anyway.
pub const MAX_THETA: f64 = 16.0;

/// The largest rank of the scrambled zipfian's inner zipfian: Java draws
/// ranks from `0..=SCRAMBLED_ITEM_COUNT`, i.e. 10^10 + 1 items.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;

/// Java's precomputed ζ(10^10, 0.99), used by the scrambled zipfian with
/// the default constant.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// Zipfian integers in `min..=max`: `min` is the most popular value,
/// `min + 1` the next, and so on.
///
/// With n items, ζ(n) = Σ i^−θ, α = 1/(1−θ) and
/// η = (1 − (2/n)^(1−θ)) / (1 − ζ(2)/ζ(n)), a draw u ∈ [0, 1) gives `min`
/// if u·ζ(n) < 1, `min + 1` if u·ζ(n) < 1 + 2^−θ, and otherwise
/// `min + ⌊n·(η·u − η + 1)^α⌋`. [`probability`](Self::probability) gives
/// the resulting probabilities. Any θ from 0 to [`MAX_THETA`] but 1 works
/// (for θ > 1, η and α are negative).
///
/// Construction takes well under a millisecond for any item count and θ:
/// ζ(n) comes from a fast zeta sum (an exact head and a bounded
/// Euler–Maclaurin tail).
///
/// # Differences from Java
///
/// - [`next_with_item_count`](Self::next_with_item_count) recomputes η with
///   the new item count. Java keeps η of the original count (a bug: the
///   third branch then no longer starts where the second ends, at rank 2,
///   so the top ranks are over- or under-weighted); here the probabilities
///   stay those of [`probability`](Self::probability) for the current
///   count. ζ grows incrementally like Java's, and shrinks by subtracting
///   the removed terms, where Java either keeps the stale ζ or recomputes
///   it from scratch.
/// - [`next_value`](NumberGenerator::next_value) uses the current item
///   count, the one last passed to `next_with_item_count`; Java uses the
///   count given at construction.
/// - When rounding makes (η·u − η + 1)^α equal to 1 (u within about 2^−53
///   of 1), Java returns `max + 1`; here the value is clipped to `max`.
/// - [`last_value`](NumberGenerator::last_value) is updated on every draw
///   (Java skips the first two branches); it is `min` before the first draw.
#[derive(Clone, Debug)]
pub struct Zipfian {
    base: u64,
    items: u64,
    theta: f64,
    alpha: f64,
    zeta_n: f64,
    zeta2: f64,
    /// 2^−θ = 0.5^θ, the second branch's width; Java recomputes it per draw.
    half_pow_theta: f64,
    eta: f64,
    last: u64,
}

impl Zipfian {
    /// A zipfian over `min..=max` with constant `theta`.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::EmptyRange`] if `min > max`,
    /// [`GeneratorError::RangeTooLarge`] for the full `u64` range,
    /// [`GeneratorError::InvalidTheta`] unless 0 ≤ `theta` ≤
    /// [`MAX_THETA`] and `theta` ≠ 1.
    pub fn new(min: u64, max: u64, theta: f64) -> Result<Self, GeneratorError> {
        check_theta(theta)?;
        let items = range_len(min, max)?;
        Ok(Self::build(min, items, theta, zeta(items, theta)))
    }

    /// A zipfian over `min..=max` with constant `theta` and a precomputed
    /// ζ(max − min + 1, θ), as Java's constructor taking `zetan` (used by
    /// the scrambled zipfian with Java's [`SCRAMBLED_ZETAN`]).
    ///
    /// # Errors
    ///
    /// Those of [`new`](Self::new), and [`GeneratorError::InvalidZeta`]
    /// unless `zeta_n` is finite and at least 1.
    pub fn with_zeta(min: u64, max: u64, theta: f64, zeta_n: f64) -> Result<Self, GeneratorError> {
        check_theta(theta)?;
        let items = range_len(min, max)?;
        if !(zeta_n.is_finite() && zeta_n >= 1.0) {
            return Err(GeneratorError::InvalidZeta(zeta_n));
        }
        Ok(Self::build(min, items, theta, zeta_n))
    }

    /// Requires `items ≥ 1`, a `theta` accepted by `check_theta` and
    /// `zeta_n` = ζ(items, θ).
    pub(super) fn build(base: u64, items: u64, theta: f64, zeta_n: f64) -> Self {
        let zeta2 = 1.0 + 2f64.powf(-theta);
        let mut zipfian = Self {
            base,
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta_n,
            zeta2,
            half_pow_theta: 0.5f64.powf(theta),
            eta: 0.0,
            last: base,
        };
        zipfian.eta = zipfian.compute_eta();
        zipfian
    }

    fn compute_eta(&self) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zeta_n)
    }

    /// The number of items currently drawn from.
    pub fn item_count(&self) -> u64 {
        self.items
    }

    /// The zipfian constant θ.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// ζ(n, θ) for the current item count n.
    pub fn zeta_n(&self) -> f64 {
        self.zeta_n
    }

    /// Changes the number of items to draw from (`min..min + item_count`),
    /// updating ζ incrementally and η. A count of 0 is taken as 1, and a
    /// count reaching beyond `u64::MAX` as the largest that does not.
    pub fn set_item_count(&mut self, item_count: u64) {
        let largest = (u64::MAX - self.base).saturating_add(1);
        let item_count = item_count.clamp(1, largest);
        if item_count != self.items {
            self.zeta_n = zeta_extend(self.zeta_n, self.items, item_count, self.theta);
            self.items = item_count;
            self.eta = self.compute_eta();
        }
    }

    /// Draws from `min..min + item_count` (Java's `nextLong(itemcount)`),
    /// for a key space that grows during the run; see
    /// [`set_item_count`](Self::set_item_count).
    pub fn next_with_item_count(&mut self, rng: &mut Rng64, item_count: u64) -> u64 {
        self.set_item_count(item_count);
        self.next_value(rng)
    }

    /// The rank (offset from `min`) of one draw.
    #[inline]
    fn next_rank(&mut self, rng: &mut Rng64) -> u64 {
        let u: f64 = rng.random();
        let uz = u * self.zeta_n;
        let rank = if uz < 1.0 {
            0
        } else if uz < 1.0 + self.half_pow_theta {
            1
        } else {
            // The float-to-int cast truncates like Java's (long) cast.
            // x^α as exp(α·ln x): half the instructions of powf, which
            // took a sixth of an operation against the basic store.
            // |α·ln x| is at most ln(n/2) < 45 where the rank matters, so
            // the result is within about 2·10^−14 relative of powf's; the
            // rounding of x = η·u − η + 1 itself, amplified by α, already
            // moves it by as much (Java's value included). The rank can
            // differ only when n·x^α falls within that of an integer, and
            // then by one: a test finds no difference in 10^6 draws.
            (self.items as f64 * ((self.eta * u - self.eta + 1.0).ln() * self.alpha).exp()) as u64
        };
        rank.min(self.items - 1)
    }

    /// The probability that a draw returns `min + rank`, exactly as the
    /// algorithm produces it (not the ideal Zipf law rank^−θ/ζ(n)):
    /// 1/ζ(n) for rank 0, 2^−θ/ζ(n) for rank 1, and
    /// [((r+1)/n)^(1−θ) − (r/n)^(1−θ)] / η for 2 ≤ r < n; 0 beyond.
    pub fn probability(&self, rank: u64) -> f64 {
        let n = self.items;
        if rank >= n {
            return 0.0;
        }
        match rank {
            0 => (1.0 / self.zeta_n).min(1.0),
            1 => self.half_pow_theta / self.zeta_n,
            r => {
                let s = 1.0 - self.theta;
                let nf = n as f64;
                (((r + 1) as f64 / nf).powf(s) - (r as f64 / nf).powf(s)) / self.eta
            }
        }
    }
}

impl NumberGenerator for Zipfian {
    #[inline]
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        self.last = self.base + self.next_rank(rng);
        self.last
    }

    fn last_value(&self) -> u64 {
        self.last
    }
}

fn check_theta(theta: f64) -> Result<(), GeneratorError> {
    if (0.0..=MAX_THETA).contains(&theta) && theta != 1.0 {
        Ok(())
    } else {
        Err(GeneratorError::InvalidTheta(theta))
    }
}

/// Zipfian popularity scattered over `min..=max`: Java's
/// `ScrambledZipfianGenerator`, behind `requestdistribution=zipfian`.
///
/// A rank r is drawn from a zipfian over `0..=`[`SCRAMBLED_ITEM_COUNT`]
/// (10^10 + 1 items, independent of the key range) and becomes
/// `min + fnvhash64(r) % (max − min + 1)`. With the default constant the
/// inner zipfian uses Java's precomputed [`SCRAMBLED_ZETAN`], so the
/// draws are Java's. [`last_value`](NumberGenerator::last_value) is `min`
/// before the first draw.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    inner: Zipfian,
    min: u64,
    item_count: u64,
    last: u64,
}

impl ScrambledZipfian {
    /// A scrambled zipfian over `min..=max` with Java's default constant.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::EmptyRange`] if `min > max`,
    /// [`GeneratorError::RangeTooLarge`] for the full `u64` range.
    pub fn new(min: u64, max: u64) -> Result<Self, GeneratorError> {
        Self::with_constant(min, max, ZIPFIAN_CONSTANT)
    }

    /// A scrambled zipfian over `min..=max` with zipfian constant `theta`
    /// (YCSB-cpp's `zipfian_const`). For a non-default constant ζ over the
    /// 10^10 + 1 inner items is computed with the fast zeta sum, where Java
    /// takes minutes.
    ///
    /// # Errors
    ///
    /// Those of [`new`](Self::new), and [`GeneratorError::InvalidTheta`]
    /// unless 0 ≤ `theta` ≤ [`MAX_THETA`] and `theta` ≠ 1.
    pub fn with_constant(min: u64, max: u64, theta: f64) -> Result<Self, GeneratorError> {
        let item_count = range_len(min, max)?;
        // Java compares the constant exactly too.
        let inner = if theta == ZIPFIAN_CONSTANT {
            Zipfian::with_zeta(0, SCRAMBLED_ITEM_COUNT, theta, SCRAMBLED_ZETAN)?
        } else {
            Zipfian::new(0, SCRAMBLED_ITEM_COUNT, theta)?
        };
        Ok(Self {
            inner,
            min,
            item_count,
            last: min,
        })
    }

    /// The probability that the inner zipfian draws `rank`; the value it
    /// maps to is `min + fnvhash64(rank) % (max − min + 1)`.
    pub fn rank_probability(&self, rank: u64) -> f64 {
        self.inner.probability(rank)
    }
}

impl NumberGenerator for ScrambledZipfian {
    #[inline]
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        let rank = self.inner.next_value(rng);
        // The inner zipfian's ranks stop at 10^10 < 2^40.
        const { assert!(SCRAMBLED_ITEM_COUNT < 1 << 40) };
        self.last = self.min + fnvhash64_low_bytes::<5>(rank) % self.item_count;
        self.last
    }

    fn last_value(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::fnvhash64;
    use crate::generator::seeded_rng;
    use crate::generator::testutil::{assert_does_not_fit, assert_fits};

    fn histogram(g: &mut Zipfian, rng: &mut Rng64, draws: usize) -> Vec<u64> {
        let mut counts = vec![0u64; g.item_count() as usize];
        for _ in 0..draws {
            let v = g.next_value(rng) - g.base;
            counts[v as usize] += 1;
        }
        counts
    }

    fn expected(g: &Zipfian) -> Vec<f64> {
        (0..g.item_count()).map(|r| g.probability(r)).collect()
    }

    /// `next_rank` computes x^α as exp(α·ln x); its ranks must be those
    /// of the textbook powf formula (Java's `Math.pow`).
    #[test]
    fn ranks_match_the_powf_formula() {
        for (n, theta) in [
            (1_000u64, 0.99),
            (SCRAMBLED_ITEM_COUNT + 1, 0.99),
            (1_000_000, 0.5),
            (1_000_000, 1.5),
            (100, 4.0),
        ] {
            let mut g = Zipfian::new(0, n - 1, theta).unwrap();
            let mut rng = seeded_rng(3, 0);
            let mut same_draws = rng.clone();
            let mut differ = 0;
            for _ in 0..200_000 {
                let rank = g.next_rank(&mut rng);
                let u: f64 = same_draws.random();
                let uz = u * g.zeta_n;
                let expected = if uz < 1.0 {
                    0
                } else if uz < 1.0 + g.half_pow_theta {
                    1
                } else {
                    ((g.items as f64 * (g.eta * u - g.eta + 1.0).powf(g.alpha)) as u64)
                        .min(g.items - 1)
                };
                differ += u32::from(rank != expected);
            }
            assert_eq!(differ, 0, "n={n} θ={theta}");
        }
    }

    #[test]
    fn probabilities_sum_to_one() {
        for (n, theta) in [
            (1u64, 0.99),
            (2, 0.99),
            (3, 0.5),
            (3, 1.5),
            (1000, 1.2),
            (1000, 16.0),
            (1000, 0.99),
            (1000, 0.0),
            (77, 0.3),
        ] {
            let g = Zipfian::new(0, n - 1, theta).unwrap();
            let total: f64 = expected(&g).iter().sum();
            assert!((total - 1.0).abs() < 1e-12, "n={n} θ={theta}: {total}");
        }
        let g = Zipfian::new(0, 999_999, 0.99).unwrap();
        assert!((g.probability(0) - 0.064969).abs() < 1e-6);
    }

    #[test]
    fn fits_the_exact_probabilities() {
        // 200 000 draws over 1 000 items: the chi-square test pools the
        // sparse tail and keeps a few hundred categories.
        for (seed, theta) in [(1u64, 0.99), (2, 0.5), (3, 0.0), (11, 1.3)] {
            let mut g = Zipfian::new(10, 1009, theta).unwrap();
            let mut rng = seeded_rng(seed, 0);
            let counts = histogram(&mut g, &mut rng, 200_000);
            assert_fits(&counts, &expected(&g));
        }
    }

    #[test]
    fn the_test_tells_the_algorithm_from_the_ideal_zipf_law() {
        // Gray's algorithm only approximates r^−θ/ζ(n) beyond rank 1; with
        // the same sample the chi-square test must see the difference, or
        // it could not catch a wrong formula either.
        let mut g = Zipfian::new(0, 99, 0.99).unwrap();
        let mut rng = seeded_rng(4, 0);
        let counts = histogram(&mut g, &mut rng, 200_000);
        let ideal: Vec<f64> = (1..=100u64)
            .map(|i| (i as f64).powf(-0.99) / g.zeta_n())
            .collect();
        assert_fits(&counts, &expected(&g));
        assert_does_not_fit(&counts, &ideal);
    }

    #[test]
    fn growing_item_count_keeps_the_exact_probabilities() {
        let mut g = Zipfian::new(0, 499, 0.99).unwrap();
        let mut rng = seeded_rng(5, 0);
        for _ in 0..1000 {
            g.next_value(&mut rng);
        }
        // Grow in small steps, like run-phase inserts, to 1 000 items.
        for n in (510..=1000).step_by(10) {
            g.next_with_item_count(&mut rng, n);
        }
        assert_eq!(g.item_count(), 1000);
        assert!((g.zeta_n() - zeta(1000, 0.99)).abs() < 1e-12);
        let counts = histogram(&mut g, &mut rng, 200_000);
        assert_fits(&counts, &expected(&g));
        // Counts are clipped to what fits above min.
        let mut high = Zipfian::new(u64::MAX - 2, u64::MAX, 0.99).unwrap();
        high.set_item_count(10);
        assert_eq!(high.item_count(), 3);
        assert!((0..100).all(|_| high.next_value(&mut rng) >= u64::MAX - 2));
        // Shrinking subtracts the removed terms.
        g.set_item_count(10);
        assert!((g.zeta_n() - zeta(10, 0.99)).abs() < 1e-12);
        assert!((0..100).all(|_| g.next_value(&mut rng) < 10));
    }

    #[test]
    fn stays_in_range_and_tracks_last_value() {
        let mut rng = seeded_rng(6, 0);
        for n in [1u64, 2, 3] {
            let mut g = Zipfian::new(5, 4 + n, 0.99).unwrap();
            assert_eq!(g.last_value(), 5);
            for _ in 0..1000 {
                let v = g.next_value(&mut rng);
                assert!((5..5 + n).contains(&v));
                assert_eq!(g.last_value(), v);
            }
        }
        // A single item.
        let mut g = Zipfian::new(7, 7, 0.5).unwrap();
        assert_eq!(g.next_value(&mut rng), 7);
        assert_eq!(g.probability(0), 1.0);
    }

    #[test]
    fn constructs_quickly_for_huge_counts() {
        // Java would sum 10^12 terms here.
        let g = Zipfian::new(0, 999_999_999_999, 0.7).unwrap();
        assert!((g.zeta_n() - zeta(1_000_000_000_000, 0.7)).abs() < 1e-9);
        let mut g = Zipfian::new(0, u64::MAX - 1, 0.99).unwrap();
        let mut rng = seeded_rng(7, 0);
        for _ in 0..1000 {
            g.next_value(&mut rng);
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(matches!(
            Zipfian::new(5, 4, 0.99),
            Err(GeneratorError::EmptyRange { min: 5, max: 4 })
        ));
        assert!(matches!(
            Zipfian::new(0, u64::MAX, 0.99),
            Err(GeneratorError::RangeTooLarge { .. })
        ));
        for theta in [1.0, 16.5, -0.1, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                Zipfian::new(0, 10, theta),
                Err(GeneratorError::InvalidTheta(_))
            ));
            assert!(matches!(
                ScrambledZipfian::with_constant(0, 10, theta),
                Err(GeneratorError::InvalidTheta(_))
            ));
        }
        for z in [0.5, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                Zipfian::with_zeta(0, 10, 0.99, z),
                Err(GeneratorError::InvalidZeta(_))
            ));
        }
        assert!(matches!(
            ScrambledZipfian::new(3, 2),
            Err(GeneratorError::EmptyRange { .. })
        ));
        let e = Zipfian::new(0, 10, 1.0).unwrap_err().to_string();
        assert_eq!(
            e,
            "zipfian constant 1 must be within 0 and 16 and must not be 1"
        );
    }

    #[test]
    fn scrambled_rank_probabilities_match_java() {
        let g = ScrambledZipfian::new(0, 999).unwrap();
        for (rank, p) in [
            (0u64, 0.037780),
            (1, 0.019021),
            (2, 0.015314),
            (3, 0.010903),
        ] {
            let got = g.rank_probability(rank);
            assert!((got - p).abs() < 1e-6, "rank {rank}: {got}");
        }
        assert_eq!(g.inner.item_count(), SCRAMBLED_ITEM_COUNT + 1);
    }

    #[test]
    fn scrambled_maps_ranks_through_fnv() {
        // The same random stream through a bare inner zipfian and through
        // the scrambled generator: every output is the hashed rank.
        let mut g = ScrambledZipfian::new(100, 1099).unwrap();
        let mut inner = Zipfian::with_zeta(0, SCRAMBLED_ITEM_COUNT, 0.99, SCRAMBLED_ZETAN).unwrap();
        let (mut r1, mut r2) = (seeded_rng(8, 0), seeded_rng(8, 0));
        for _ in 0..10_000 {
            let v = g.next_value(&mut r1);
            assert_eq!(v, 100 + fnvhash64(inner.next_value(&mut r2)) % 1000);
            assert_eq!(g.last_value(), v);
        }
    }

    #[test]
    fn scrambled_fits_the_top_rank_probabilities() {
        // Over 10^15 keys the values of ranks 0..20 are distinct, and any
        // other rank lands on one of them with probability about 20/10^15,
        // so their probabilities are the ranks' to within 1e-13: categories
        // "value of rank r" for r < 20 and "anything else".
        let count = 1_000_000_000_000_000u64;
        for theta in [ZIPFIAN_CONSTANT, 0.8] {
            let mut g = ScrambledZipfian::with_constant(0, count - 1, theta).unwrap();
            let keys: Vec<u64> = (0..20u64).map(|r| fnvhash64(r) % count).collect();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), keys.len());
            let mut expected: Vec<f64> = (0..20).map(|r| g.rank_probability(r)).collect();
            expected.push(1.0 - expected.iter().sum::<f64>());
            let mut counts = vec![0u64; 21];
            let mut rng = seeded_rng(9, 0);
            for _ in 0..100_000 {
                let v = g.next_value(&mut rng);
                let slot = keys.iter().position(|&k| k == v).unwrap_or(20);
                counts[slot] += 1;
            }
            assert_fits(&counts, &expected);
        }
    }

    proptest::proptest! {
        #[test]
        fn draws_stay_in_range(
            min in 0u64..1_000_000,
            len in 1u64..1_000_000_000_000,
            theta in proptest::prop_oneof![0.0f64..0.9999, 1.0001f64..16.0],
            grow in 0u64..100_000,
            seed: u64,
        ) {
            let mut rng = seeded_rng(seed, 0);
            let mut g = Zipfian::new(min, min + len - 1, theta).unwrap();
            for _ in 0..50 {
                let v = g.next_value(&mut rng);
                proptest::prop_assert!(v >= min && v - min < len);
            }
            let v = g.next_with_item_count(&mut rng, len + grow) - min;
            proptest::prop_assert!(v < len + grow);
            let mut s = ScrambledZipfian::with_constant(min, min + len - 1, theta).unwrap();
            for _ in 0..50 {
                let v = s.next_value(&mut rng);
                proptest::prop_assert!(v >= min && v - min < len);
            }
        }
    }
}
