//! Goodness-of-fit helpers shared by the generators' tests.

use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The significance level of every goodness-of-fit test.
///
/// Samples come from fixed seeds, so each test is deterministic: a correct
/// generator passes with these seeds forever. The level says how unlucky a
/// seed would have to be to make a correct generator fail (1 in 10 000),
/// while the sample sizes are large enough that the mistakes the tests guard
/// against (an off-by-one bucket, a wrong η, a swapped hot/cold set) give
/// statistics many times the critical value; `zipfian` checks this power
/// explicitly against the ideal Zipf law.
pub const ALPHA: f64 = 1e-4;

/// The Pearson chi-square statistic of `observed` counts against
/// `expected` probabilities, and its degrees of freedom.
///
/// Adjacent categories are pooled until each expects at least 5 draws, the
/// usual condition for the chi-square approximation; a short remainder
/// joins the last pooled category. Probability mass not covered by
/// `expected` (a tail) must be given as a last category by the caller.
pub fn chi_square(observed: &[u64], expected: &[f64]) -> (f64, usize) {
    assert_eq!(observed.len(), expected.len());
    let n: u64 = observed.iter().sum();
    let total_p: f64 = expected.iter().sum();
    assert!(
        (total_p - 1.0).abs() < 1e-9,
        "expected probabilities sum to {total_p}, not 1"
    );
    let n = n as f64;
    let mut pooled: Vec<(f64, f64)> = Vec::new();
    let (mut o, mut e) = (0.0, 0.0);
    for (&obs, &p) in observed.iter().zip(expected) {
        o += obs as f64;
        e += p * n;
        if e >= 5.0 {
            pooled.push((o, e));
            o = 0.0;
            e = 0.0;
        }
    }
    if e > 0.0 || o > 0.0 {
        match pooled.last_mut() {
            Some(last) => {
                last.0 += o;
                last.1 += e;
            }
            None => pooled.push((o, e)),
        }
    }
    let stat = pooled.iter().map(|&(o, e)| (o - e) * (o - e) / e).sum();
    (stat, pooled.len().saturating_sub(1))
}

/// The critical chi-square value at [`ALPHA`] for `df` degrees of freedom.
pub fn critical(df: usize) -> f64 {
    ChiSquared::new(df as f64)
        .expect("degrees of freedom are positive")
        .inverse_cdf(1.0 - ALPHA)
}

/// Asserts that `observed` fits `expected` at level [`ALPHA`].
#[track_caller]
pub fn assert_fits(observed: &[u64], expected: &[f64]) {
    let (stat, df) = chi_square(observed, expected);
    assert!(df >= 1, "too few categories for a chi-square test");
    let crit = critical(df);
    assert!(
        stat < crit,
        "chi-square {stat:.2} exceeds the critical value {crit:.2} ({df} degrees of freedom)"
    );
}

/// Asserts that `observed` does NOT fit `expected`: shows that a test has
/// the power to tell the distributions apart.
#[track_caller]
pub fn assert_does_not_fit(observed: &[u64], expected: &[f64]) {
    let (stat, df) = chi_square(observed, expected);
    let crit = critical(df);
    assert!(
        stat > crit,
        "chi-square {stat:.2} is below the critical value {crit:.2}: the test cannot tell these apart"
    );
}
