//! Java's `DiscreteGenerator`: a weighted choice among values.

use rand::Rng;

use super::error::GeneratorError;
use super::Rng64;

/// A weighted choice among values (operation kinds, say): Java's
/// `DiscreteGenerator`.
///
/// Same algorithm as Java: draw u ∈ [0, 1), walk the choices in order
/// subtracting each normalized weight until u falls below one. Java
/// normalizes on every draw; the weights are normalized once here, which
/// gives the same values. When rounding leaves u above the sum of the
/// normalized weights, Java throws; here the last choice of positive
/// weight is returned. Choices of zero weight are never returned.
///
/// With a single choice of positive weight (workload C's reads, a load's
/// inserts) nothing is drawn: the walk would return that choice for every
/// u, so the draw changed only the random stream's position, never a
/// value's distribution, and cost an operation of workload C against the
/// basic store a twentieth of its instructions.
#[derive(Clone, Debug)]
pub struct Discrete<T: Copy> {
    /// (normalized weight, value), in the given order.
    choices: Vec<(f64, T)>,
    /// The last choice of positive weight.
    fallback: T,
    /// Whether `fallback` is the only choice of positive weight.
    only: bool,
}

impl<T: Copy> Discrete<T> {
    /// A choice among `(weight, value)` pairs; weights need not sum to 1.
    ///
    /// # Errors
    ///
    /// [`GeneratorError::NoChoices`] for an empty list,
    /// [`GeneratorError::InvalidWeight`] for a negative, infinite or NaN
    /// weight, [`GeneratorError::ZeroWeights`] when all weights are 0.
    pub fn new(choices: Vec<(f64, T)>) -> Result<Self, GeneratorError> {
        let mut total = 0.0;
        for (index, &(weight, _)) in choices.iter().enumerate() {
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(GeneratorError::InvalidWeight { index, weight });
            }
            total += weight;
        }
        let Some(&(_, fallback)) = choices.iter().rev().find(|(w, _)| *w > 0.0) else {
            return Err(if choices.is_empty() {
                GeneratorError::NoChoices
            } else {
                GeneratorError::ZeroWeights
            });
        };
        if !total.is_finite() {
            return Err(GeneratorError::InvalidWeight {
                index: choices.len() - 1,
                weight: total,
            });
        }
        let only = choices.iter().filter(|(w, _)| *w > 0.0).count() == 1;
        let choices = choices.into_iter().map(|(w, v)| (w / total, v)).collect();
        Ok(Self {
            choices,
            fallback,
            only,
        })
    }

    /// Draws a value.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng64) -> T {
        if self.only {
            return self.fallback;
        }
        let mut u: f64 = rng.random();
        for &(p, value) in &self.choices {
            if u < p {
                return value;
            }
            u -= p;
        }
        self.fallback
    }

    /// The probability of each choice, in the given order.
    pub fn probabilities(&self) -> impl Iterator<Item = (f64, T)> + '_ {
        self.choices.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::seeded_rng;
    use crate::generator::testutil::assert_fits;

    /// A single choice of positive weight comes out every time without a
    /// draw: the stream is where it was.
    #[test]
    fn a_single_positive_choice_draws_nothing() {
        let mut g = Discrete::new(vec![(0.0, 'x'), (2.5, 'r'), (0.0, 'y')]).unwrap();
        let mut rng = seeded_rng(3, 0);
        for _ in 0..100 {
            assert_eq!(g.next(&mut rng), 'r');
        }
        let mut untouched = seeded_rng(3, 0);
        assert_eq!(rng.random::<u64>(), untouched.random::<u64>());
        // Two positive choices still draw.
        let mut two = Discrete::new(vec![(1.0, 'a'), (1.0, 'b')]).unwrap();
        two.next(&mut rng);
        assert_ne!(rng.random::<u64>(), untouched.random::<u64>());
    }

    #[test]
    fn fits_the_weights() {
        // Workload A-like mix plus a zero-weight choice that must never
        // come up.
        let mut g = Discrete::new(vec![
            (0.5, 'r'),
            (0.0, 'x'),
            (0.3, 'u'),
            (0.15, 'i'),
            (0.05, 's'),
        ])
        .unwrap();
        let mut rng = seeded_rng(40, 0);
        let names = ['r', 'x', 'u', 'i', 's'];
        let mut counts = [0u64; 5];
        for _ in 0..100_000 {
            let c = g.next(&mut rng);
            counts[names.iter().position(|&n| n == c).unwrap()] += 1;
        }
        assert_eq!(counts[1], 0);
        let expected: Vec<f64> = g.probabilities().map(|(p, _)| p).collect();
        assert_eq!(expected, [0.5, 0.0, 0.3, 0.15, 0.05]);
        let (c, e): (Vec<u64>, Vec<f64>) = counts
            .iter()
            .zip(&expected)
            .filter(|(_, &p)| p > 0.0)
            .map(|(&c, &p)| (c, p))
            .unzip();
        assert_fits(&c, &e);
    }

    #[test]
    fn unnormalized_weights_and_single_choice() {
        let g = Discrete::new(vec![(2.0, 1u8), (6.0, 2u8)]).unwrap();
        let p: Vec<(f64, u8)> = g.probabilities().collect();
        assert_eq!(p, [(0.25, 1), (0.75, 2)]);
        let mut g = Discrete::new(vec![(0.0, 1u8), (3.0, 2u8), (0.0, 3u8)]).unwrap();
        let mut rng = seeded_rng(41, 0);
        assert!((0..1000).all(|_| g.next(&mut rng) == 2));
    }

    #[test]
    fn rejects_bad_weights() {
        assert!(matches!(
            Discrete::<u8>::new(vec![]),
            Err(GeneratorError::NoChoices)
        ));
        assert!(matches!(
            Discrete::new(vec![(0.0, 1), (0.0, 2)]),
            Err(GeneratorError::ZeroWeights)
        ));
        for w in [-0.5, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                Discrete::new(vec![(1.0, 1), (w, 2)]),
                Err(GeneratorError::InvalidWeight { index: 1, .. })
            ));
        }
        assert!(matches!(
            Discrete::new(vec![(f64::MAX, 1), (f64::MAX, 2)]),
            Err(GeneratorError::InvalidWeight { .. })
        ));
        assert_eq!(
            Discrete::new(vec![(-1.0, 1)]).unwrap_err().to_string(),
            "weight -1 of choice 0 must be a finite number of at least 0"
        );
    }
}
