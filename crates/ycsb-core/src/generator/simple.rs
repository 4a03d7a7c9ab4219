//! Constant, uniform, hotspot and exponential generators.

use rand::Rng;

use super::error::{range_len, GeneratorError};
use super::{NumberGenerator, Rng64};

/// Always the same value: Java's `ConstantIntegerGenerator`.
#[derive(Clone, Debug)]
pub struct Constant {
    value: u64,
}

impl Constant {
    /// A generator that always returns `value`.
    pub fn new(value: u64) -> Self {
        Self { value }
    }
}

impl NumberGenerator for Constant {
    fn next_value(&mut self, _rng: &mut Rng64) -> u64 {
        self.value
    }

    /// The constant, also before the first draw.
    fn last_value(&self) -> u64 {
        self.value
    }
}

/// Uniform integers in `lb..=ub`: Java's `UniformLongGenerator`.
///
/// Java reduces a random `long` modulo the range size, which favours low
/// values by up to (range size)/2^63; this draw is exactly uniform.
/// [`last_value`](NumberGenerator::last_value) is `lb` before the first
/// draw.
#[derive(Clone, Debug)]
pub struct Uniform {
    lb: u64,
    ub: u64,
    last: u64,
}

impl Uniform {
    /// Uniform over `lb..=ub`, both inclusive.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::EmptyRange`] if `lb > ub`.
    pub fn new(lb: u64, ub: u64) -> Result<Self, GeneratorError> {
        if lb > ub {
            return Err(GeneratorError::EmptyRange { min: lb, max: ub });
        }
        Ok(Self { lb, ub, last: lb })
    }
}

impl NumberGenerator for Uniform {
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        self.last = rng.random_range(self.lb..=self.ub);
        self.last
    }

    fn last_value(&self) -> u64 {
        self.last
    }
}

/// Java's `HotspotIntegerGenerator`: a fraction of operations goes to a
/// hot set at the low end of `lb..=ub`, the rest to the remaining cold set,
/// uniformly within each.
///
/// With n = ub − lb + 1 items the hot set is `lb..lb + ⌊n·h⌋`. Differences
/// from Java: out-of-range fractions and reversed bounds are errors (Java
/// warns, then uses 0 or swaps the bounds); an empty set that would
/// receive operations is an error at construction (Java divides by zero on
/// the first such draw); the hot set size is not truncated to 32 bits; the
/// draw within a set is exactly uniform.
/// [`last_value`](NumberGenerator::last_value) is `lb` before the first
/// draw.
#[derive(Clone, Debug)]
pub struct Hotspot {
    lb: u64,
    hot: u64,
    cold: u64,
    hot_opn_fraction: f64,
    last: u64,
}

impl Hotspot {
    /// A hotspot over `lb..=ub` whose first `hot_data_fraction` of items
    /// receive `hot_opn_fraction` of the operations.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::EmptyRange`] if `lb > ub`,
    /// [`GeneratorError::RangeTooLarge`] for the full `u64` range,
    /// [`GeneratorError::InvalidFraction`] for a fraction outside [0, 1],
    /// [`GeneratorError::EmptyHotspotSet`] when the hot set is empty but
    /// `hot_opn_fraction > 0`, or the cold set is empty but
    /// `hot_opn_fraction < 1`.
    pub fn new(
        lb: u64,
        ub: u64,
        hot_data_fraction: f64,
        hot_opn_fraction: f64,
    ) -> Result<Self, GeneratorError> {
        let items = range_len(lb, ub)?;
        for (name, value) in [
            ("hot data fraction", hot_data_fraction),
            ("hot operation fraction", hot_opn_fraction),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(GeneratorError::InvalidFraction { name, value });
            }
        }
        let hot = ((items as f64 * hot_data_fraction) as u64).min(items);
        let cold = items - hot;
        let empty = if hot == 0 && hot_opn_fraction > 0.0 {
            Some(("hot", hot_opn_fraction))
        } else if cold == 0 && hot_opn_fraction < 1.0 {
            Some(("cold", 1.0 - hot_opn_fraction))
        } else {
            None
        };
        if let Some((set, opn_fraction)) = empty {
            return Err(GeneratorError::EmptyHotspotSet {
                set,
                items,
                hot_data_fraction,
                opn_fraction,
            });
        }
        Ok(Self {
            lb,
            hot,
            cold,
            hot_opn_fraction,
            last: lb,
        })
    }

    /// The number of items in the hot set.
    pub fn hot_items(&self) -> u64 {
        self.hot
    }

    /// The probability of drawing `value`.
    pub fn probability(&self, value: u64) -> f64 {
        match value.checked_sub(self.lb) {
            Some(i) if i < self.hot => self.hot_opn_fraction / self.hot as f64,
            Some(i) if i - self.hot < self.cold => (1.0 - self.hot_opn_fraction) / self.cold as f64,
            _ => 0.0,
        }
    }
}

impl NumberGenerator for Hotspot {
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        let u: f64 = rng.random();
        self.last = if u < self.hot_opn_fraction {
            self.lb + rng.random_range(0..self.hot)
        } else {
            self.lb + self.hot + rng.random_range(0..self.cold)
        };
        self.last
    }

    fn last_value(&self) -> u64 {
        self.last
    }
}

/// Java's `ExponentialGenerator`: ⌊X⌋ for X exponential with rate γ.
///
/// Built from a percentile p and range r, γ = −ln(1 − p/100)/r, so that p%
/// of the draws fall below r; Java's CoreWorkload uses p = 95 and
/// r = recordcount × 0.8571428571 and subtracts the draw from the latest
/// insert (the workload does that). Java computes −ln(U) with U ∈ [0, 1),
/// which is infinite for U = 0; here U ∈ (0, 1], the same distribution
/// without the infinity. [`last_value`](NumberGenerator::last_value) is 0
/// before the first draw.
#[derive(Clone, Debug)]
pub struct Exponential {
    gamma: f64,
    last: u64,
}

impl Exponential {
    /// The exponential with `percentile`% of its draws below `range`.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::InvalidPercentile`] unless 0 < `percentile` < 100,
    /// [`GeneratorError::InvalidExponential`] unless `range` is positive
    /// and finite.
    pub fn new(percentile: f64, range: f64) -> Result<Self, GeneratorError> {
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err(GeneratorError::InvalidPercentile(percentile));
        }
        if !(range > 0.0 && range.is_finite()) {
            return Err(GeneratorError::InvalidExponential {
                name: "range",
                value: range,
            });
        }
        Self::with_gamma(-(1.0 - percentile / 100.0).ln() / range)
    }

    /// The exponential with the given mean (Java's one-argument
    /// constructor: γ = 1/mean).
    ///
    /// # Errors
    ///
    /// [`GeneratorError::InvalidExponential`] unless `mean` is positive and
    /// finite.
    pub fn with_mean(mean: f64) -> Result<Self, GeneratorError> {
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(GeneratorError::InvalidExponential {
                name: "mean",
                value: mean,
            });
        }
        Self::with_gamma(1.0 / mean)
    }

    fn with_gamma(gamma: f64) -> Result<Self, GeneratorError> {
        // A tiny percentile over a huge range can underflow the rate.
        if !(gamma > 0.0 && gamma.is_finite()) {
            return Err(GeneratorError::InvalidExponential {
                name: "rate",
                value: gamma,
            });
        }
        Ok(Self { gamma, last: 0 })
    }

    /// The rate γ.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The probability of drawing `value`: e^(−γ·value)·(1 − e^(−γ)).
    pub fn probability(&self, value: u64) -> f64 {
        (-self.gamma * value as f64).exp() * -(-self.gamma).exp_m1()
    }
}

impl NumberGenerator for Exponential {
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        let u: f64 = 1.0 - rng.random::<f64>();
        // The float-to-int cast truncates (a floor for X ≥ 0) and saturates.
        self.last = (-u.ln() / self.gamma) as u64;
        self.last
    }

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
    fn constant_is_constant() {
        let mut rng = seeded_rng(30, 0);
        let mut c = Constant::new(42);
        assert_eq!(c.last_value(), 42);
        assert!((0..10).all(|_| c.next_value(&mut rng) == 42));
    }

    #[test]
    fn uniform_fits_and_includes_both_ends() {
        let mut rng = seeded_rng(31, 0);
        let mut g = Uniform::new(10, 59).unwrap();
        let mut counts = vec![0u64; 50];
        for _ in 0..50_000 {
            let v = g.next_value(&mut rng);
            assert_eq!(g.last_value(), v);
            counts[(v - 10) as usize] += 1;
        }
        assert!(counts[0] > 0 && counts[49] > 0);
        assert_fits(&counts, &[1.0 / 50.0; 50]);
        let mut g = Uniform::new(7, 7).unwrap();
        assert_eq!(g.next_value(&mut rng), 7);
        let mut g = Uniform::new(0, u64::MAX).unwrap();
        g.next_value(&mut rng);
        assert!(matches!(
            Uniform::new(2, 1),
            Err(GeneratorError::EmptyRange { min: 2, max: 1 })
        ));
    }

    #[test]
    fn hotspot_fits() {
        let mut rng = seeded_rng(32, 0);
        // 100 items, hot set 0..20 with 80% of operations.
        let mut g = Hotspot::new(100, 199, 0.2, 0.8).unwrap();
        assert_eq!(g.hot_items(), 20);
        let mut counts = vec![0u64; 100];
        for _ in 0..50_000 {
            let v = g.next_value(&mut rng);
            counts[(v - 100) as usize] += 1;
        }
        let expected: Vec<f64> = (100..200).map(|v| g.probability(v)).collect();
        assert!((expected[0] - 0.8 / 20.0).abs() < 1e-15);
        assert!((expected[20] - 0.2 / 80.0).abs() < 1e-15);
        assert_eq!(g.probability(99), 0.0);
        assert_eq!(g.probability(200), 0.0);
        assert_fits(&counts, &expected);
    }

    #[test]
    fn hotspot_edge_fractions() {
        let mut rng = seeded_rng(33, 0);
        // All items hot, all operations hot.
        let mut g = Hotspot::new(0, 9, 1.0, 1.0).unwrap();
        assert!((0..100).all(|_| g.next_value(&mut rng) < 10));
        // No hot set, no hot operations: uniform over the cold set.
        let mut g = Hotspot::new(0, 9, 0.0, 0.0).unwrap();
        assert!((0..100).all(|_| g.next_value(&mut rng) < 10));
        assert!(matches!(
            Hotspot::new(0, 9, 0.05, 0.5),
            Err(GeneratorError::EmptyHotspotSet { set: "hot", .. })
        ));
        assert!(matches!(
            Hotspot::new(0, 9, 1.0, 0.5),
            Err(GeneratorError::EmptyHotspotSet { set: "cold", .. })
        ));
        for (h, o) in [(1.5, 0.5), (0.5, -0.1), (f64::NAN, 0.5)] {
            assert!(matches!(
                Hotspot::new(0, 9, h, o),
                Err(GeneratorError::InvalidFraction { .. })
            ));
        }
        assert!(matches!(
            Hotspot::new(9, 0, 0.5, 0.5),
            Err(GeneratorError::EmptyRange { .. })
        ));
        assert_eq!(
            Hotspot::new(0, 9, 1.5, 0.5).unwrap_err().to_string(),
            "hot data fraction 1.5 must be within 0 and 1"
        );
    }

    #[test]
    fn exponential_fits() {
        let mut rng = seeded_rng(34, 0);
        // Java's latest-style parameters over 1000 records: 95% of draws
        // below 857.
        let mut g = Exponential::new(95.0, 1000.0 * 0.857_142_857_1).unwrap();
        let cap = 3000usize;
        let mut counts = vec![0u64; cap + 1];
        for _ in 0..100_000 {
            let v = g.next_value(&mut rng) as usize;
            assert_eq!(g.last_value(), v as u64);
            counts[v.min(cap)] += 1;
        }
        let mut expected: Vec<f64> = (0..cap as u64).map(|v| g.probability(v)).collect();
        expected.push((-g.gamma() * cap as f64).exp());
        assert_fits(&counts, &expected);
        // P(⌊X⌋ < 857) = 1 − e^(−857γ) ≈ 0.9499; ±0.005 is 7 standard
        // deviations of the observed fraction for 100 000 draws.
        let below: u64 = counts[..857].iter().sum();
        assert!((0.945..0.955).contains(&(below as f64 / 100_000.0)));
    }

    #[test]
    fn exponential_with_mean_and_errors() {
        let g = Exponential::with_mean(4.0).unwrap();
        assert_eq!(g.gamma(), 0.25);
        for p in [0.0, 100.0, -1.0, f64::NAN] {
            assert!(matches!(
                Exponential::new(p, 10.0),
                Err(GeneratorError::InvalidPercentile(_))
            ));
        }
        for r in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            assert!(matches!(
                Exponential::new(95.0, r),
                Err(GeneratorError::InvalidExponential { .. })
            ));
            assert!(matches!(
                Exponential::with_mean(r),
                Err(GeneratorError::InvalidExponential { .. })
            ));
        }
    }

    proptest::proptest! {
        #[test]
        fn draws_stay_in_range(
            lb in 0u64..1_000_000,
            len in 1u64..1_000_000_000,
            data in 0.0f64..=1.0,
            opn in 0.0f64..=1.0,
            seed: u64,
        ) {
            let mut rng = seeded_rng(seed, 0);
            let ub = lb + len - 1;
            let mut u = Uniform::new(lb, ub).unwrap();
            for _ in 0..50 {
                let v = u.next_value(&mut rng);
                proptest::prop_assert!((lb..=ub).contains(&v));
            }
            // Either a valid hotspot or the empty-set error, never a panic.
            match Hotspot::new(lb, ub, data, opn) {
                Ok(mut h) => {
                    for _ in 0..50 {
                        let v = h.next_value(&mut rng);
                        proptest::prop_assert!((lb..=ub).contains(&v));
                        proptest::prop_assert!(h.probability(v) > 0.0);
                    }
                }
                Err(e) => {
                    let empty_set = matches!(e, GeneratorError::EmptyHotspotSet { .. });
                    proptest::prop_assert!(empty_set, "{}", e);
                }
            }
        }
    }
}
