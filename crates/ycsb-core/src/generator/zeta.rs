//! The generalized harmonic numbers ζ(n, θ) = Σ_{i=1..n} i^−θ behind the
//! zipfian distributions, fast for any n.
//!
//! Java YCSB sums all n terms, which takes minutes for 10^10 items and a
//! non-default θ. Here small counts are summed term by term in Java's
//! order and large ones use an exact head plus an Euler–Maclaurin tail,
//! whose error is far below the rounding error of a `f64`; see [`zeta`].

/// Counts up to this are summed term by term: at most this many `powf`
/// calls, well under a millisecond.
const EXACT_LIMIT: u64 = 10_000;

/// The Euler–Maclaurin tail starts at this term; the terms before it are
/// summed exactly. It makes the remainder bound of [`zeta`] tiny.
const TAIL_START: u64 = 1_000;

/// B_2/2!, B_4/4!, B_6/6!: the Euler–Maclaurin coefficients used.
const EM_COEFFICIENTS: [f64; 3] = [1.0 / 12.0, -1.0 / 720.0, 1.0 / 30_240.0];

/// ζ(n, θ) = Σ_{i=1..n} i^−θ, the normalizing constant of a zipfian
/// distribution over `n` items with constant `theta`.
///
/// Defined for finite `theta ≥ 0`; returns NaN for any other `theta`.
/// `zeta(0, θ)` is 0. Takes under a millisecond for any `n`.
///
/// # Method and error bound
///
/// For `n ≤ 10 000` the terms are summed one by one, in Java YCSB's order
/// (i = 1, 2, …, n, each as `1 / i^θ`), so the value is Java's up to the
/// rounding of `powf` itself.
///
/// For larger `n` the first 999 terms are summed one by one and the tail
/// Σ_{i=a..n} f(i), with f(x) = x^−θ and a = 1000, comes from the
/// Euler–Maclaurin formula with p = 3 correction terms:
///
/// Σ_{i=a..n} f(i) = ∫_a^n f(x) dx + (f(a) + f(n))/2
///   + Σ_{k=1..3} B_{2k}/(2k)! · (f^(2k−1)(n) − f^(2k−1)(a)) + R,
///
/// where ∫_a^n x^−θ dx = a^(1−θ) · expm1((1−θ)·ln(n/a)) / (1−θ) (ln(n/a)
/// when θ = 1), and f^(j)(x) = (−1)^j θ(θ+1)…(θ+j−1) x^(−θ−j). The
/// remainder satisfies the classical bound
/// |R| ≤ 2ζ(6)/(2π)^6 · ∫_a^n |f^(6)(x)| dx. Because f^(6) has constant
/// sign, the integral equals |f^(5)(n) − f^(5)(a)| ≤ |f^(5)(a)| =
/// θ(θ+1)(θ+2)(θ+3)(θ+4) · a^(−θ−5). With 2ζ(6)/(2π)^6 < 3.31·10^−5 and
/// a = 1000: for θ ≤ 1 the product is at most 120 and a^(−θ−5) at most
/// 10^−15, so |R| < 4·10^−18; for θ > 1 the factor a^−θ shrinks faster than
/// the product grows, so the bound only gets smaller. Since ζ(n, θ) ≥ 1,
/// the relative truncation error is below 4·10^−18 for every θ ≥ 0 and
/// every n, far below one unit in the last place of a `f64` (2.2·10^−16).
/// What remains is floating-point rounding in the 999-term head and the
/// formula (the tests find under 10^−13 relative against a compensated sum
/// of all terms), less than the rounding error of Java's n-term sum.
pub fn zeta(n: u64, theta: f64) -> f64 {
    if !valid_theta(theta) {
        return f64::NAN;
    }
    partial_sum(1, n, theta)
}

/// Java's incremental zeta: from `zeta_n` = ζ(`from_n`, θ), the value
/// ζ(`to_n`, θ).
///
/// Growing by up to 10 000 items adds the new terms one by one, as Java
/// does (so repeated small growth gives Java's values); larger growth adds
/// the Euler–Maclaurin sum of the new terms (the bound of [`zeta`]
/// applies). A decrease subtracts the terms that went away instead of
/// recomputing from scratch. Returns NaN for an invalid `theta` (see
/// [`zeta`]).
pub fn zeta_extend(zeta_n: f64, from_n: u64, to_n: u64, theta: f64) -> f64 {
    if !valid_theta(theta) {
        return f64::NAN;
    }
    if to_n == from_n {
        zeta_n
    } else if to_n > from_n {
        add_terms(zeta_n, from_n + 1, to_n, theta)
    } else {
        zeta_n - partial_sum(to_n + 1, from_n, theta)
    }
}

fn valid_theta(theta: f64) -> bool {
    theta.is_finite() && theta >= 0.0
}

/// Σ_{i=a..b} i^−θ, 0 when b < a. Requires a ≥ 1.
fn partial_sum(a: u64, b: u64, theta: f64) -> f64 {
    add_terms(0.0, a, b, theta)
}

/// `init` + Σ_{i=a..b} i^−θ. Requires a ≥ 1.
fn add_terms(init: f64, a: u64, b: u64, theta: f64) -> f64 {
    if b < a {
        return init;
    }
    if b - a < EXACT_LIMIT {
        return exact(init, a, b, theta);
    }
    if a >= TAIL_START {
        return init + euler_maclaurin(a, b, theta);
    }
    exact(init, a, TAIL_START - 1, theta) + euler_maclaurin(TAIL_START, b, theta)
}

/// `init` + Σ_{i=a..b} 1/i^θ, term by term in increasing order like Java.
fn exact(init: f64, a: u64, b: u64, theta: f64) -> f64 {
    let mut sum = init;
    for i in a..=b {
        sum += 1.0 / (i as f64).powf(theta);
    }
    sum
}

/// Σ_{i=a..b} i^−θ by Euler–Maclaurin; requires TAIL_START ≤ a ≤ b.
fn euler_maclaurin(a: u64, b: u64, theta: f64) -> f64 {
    let (xa, xb) = (a as f64, b as f64);
    let (fa, fb) = (xa.powf(-theta), xb.powf(-theta));
    // ln(b/a) via ln_1p of an exactly computed difference keeps precision
    // when b is close to a.
    let log_ratio = ((b - a) as f64 / xa).ln_1p();
    let s = 1.0 - theta;
    let integral = if s == 0.0 {
        log_ratio
    } else {
        // a^(1−θ)·(exp((1−θ)·ln(b/a)) − 1)/(1−θ) avoids the cancellation of
        // b^(1−θ) − a^(1−θ) when θ is close to 1.
        xa * fa * (s * log_ratio).exp_m1() / s
    };
    let mut sum = integral + 0.5 * (fa + fb);
    // The odd derivatives are f^(j)(x) = −θ(θ+1)…(θ+j−1)·x^(−θ−j).
    let mut rising = theta; // θ(θ+1)…(θ+j−1) for j = 1, 3, 5
    let (mut pa, mut pb) = (fa / xa, fb / xb); // x^(−θ−j)
    for (k, coefficient) in EM_COEFFICIENTS.iter().enumerate() {
        sum += coefficient * rising * (pa - pb);
        let j = (2 * k + 1) as f64;
        rising *= (theta + j) * (theta + j + 1.0);
        pa /= xa * xa;
        pb /= xb * xb;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ_{i=1..n} i^−θ with Kahan–Babuška (Neumaier) compensation: correct
    /// to a few units in the last place even for 10^7 terms.
    fn compensated(n: u64, theta: f64) -> f64 {
        let (mut sum, mut c) = (0.0f64, 0.0f64);
        for i in 1..=n {
            let t = (i as f64).powf(-theta);
            let s = sum + t;
            if sum.abs() >= t.abs() {
                c += (sum - s) + t;
            } else {
                c += (t - s) + sum;
            }
            sum = s;
        }
        sum + c
    }

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn matches_the_reference_values() {
        // Java YCSB's values for θ = 0.99 (printed to 6 decimals).
        for (n, z) in [
            (1_000u64, 7.728953),
            (10_000, 10.224361),
            (100_000, 12.778338),
            (1_000_000, 15.391850),
        ] {
            assert!(
                (zeta(n, 0.99) - z).abs() < 1e-6,
                "zeta({n}) = {}",
                zeta(n, 0.99)
            );
        }
        assert!((1.0 / zeta(1_000_000, 0.99) - 0.064969).abs() < 1e-6);
    }

    #[test]
    fn matches_java_precomputed_zeta_for_ten_billion() {
        let z = zeta(10_000_000_000, 0.99);
        assert!(rel(z, 26.46902820178302) <= 1e-9, "{z}");
    }

    #[test]
    fn matches_the_compensated_sum_up_to_ten_million() {
        // Compensated sums checked at many n on the way, for several θ
        // including 0 (ζ = n), θ = 1 (the harmonic numbers) and θ > 1.
        // 1e-13 allows the rounding of the 999-term head (Java's naive sum
        // of 10^7 terms is off by about 1e-13 too); the Euler–Maclaurin
        // terms themselves are checked by `tail_error_is_within_the_bound`.
        let checkpoints = [1u64, 2, 999, 1_000, 1_001, 10_000, 10_001, 12_345, 100_000];
        for theta in [0.0, 0.5, 0.99, 1.0, 1.5] {
            let mut sum = 0.0;
            let mut lo = 1;
            for n in checkpoints {
                sum += kahan(lo, n, theta);
                lo = n + 1;
                let z = zeta(n, theta);
                assert!(rel(z, sum) < 1e-13, "zeta({n}, {theta}) = {z}, sum {sum}");
            }
        }
        // The default θ up to 10^7, in chunks summed on separate threads to
        // keep the test fast in debug builds.
        let chunks = [
            (100_001u64, 1_000_000u64),
            (1_000_001, 5_500_000),
            (5_500_001, 10_000_000),
        ];
        let sums: Vec<f64> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunks
                .iter()
                .map(|&(lo, hi)| scope.spawn(move || kahan(lo, hi, 0.99)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let upto_1e5 = compensated(100_000, 0.99);
        for (n, sum) in [
            (1_000_000u64, upto_1e5 + sums[0]),
            (10_000_000, upto_1e5 + sums[0] + sums[1] + sums[2]),
        ] {
            let z = zeta(n, 0.99);
            assert!(rel(z, sum) < 1e-13, "zeta({n}, 0.99) = {z}, sum {sum}");
        }
    }

    /// Σ_{i=lo..hi} i^−θ with Kahan summation, enough here because the
    /// terms decrease while the sum grows.
    fn kahan(lo: u64, hi: u64, theta: f64) -> f64 {
        let (mut sum, mut c) = (0.0f64, 0.0f64);
        for i in lo..=hi {
            let y = (i as f64).powf(-theta) - c;
            let t = sum + y;
            c = (t - sum) - y;
            sum = t;
        }
        sum
    }

    #[test]
    fn tail_error_is_within_the_bound() {
        // Starting the tail at a = 10..50 instead of 1000 makes the
        // truncation error large enough to measure. The proven bound is
        // 2ζ(6)/(2π)^6 · θ(θ+1)…(θ+4) · a^(−θ−5), which equals the size of
        // the last (B_6) correction term; the actual error is about the
        // first omitted (B_8) term, under a tenth of the bound for a ≥ 10
        // and θ ≤ 2. So a missing or wrong correction term fails this test,
        // and so would a wrong bound.
        for theta in [0.0, 0.3, 0.99, 1.0, 1.7] {
            for a in [10u64, 20, 50] {
                let rising: f64 = (0..5).map(|j| theta + j as f64).product();
                let bound = 3.31e-5 * rising * (a as f64).powf(-theta - 5.0);
                for b in [a, a + 5, 1_000, 100_000] {
                    let exact = compensated(b, theta) - compensated(a - 1, theta);
                    let error = (euler_maclaurin(a, b, theta) - exact).abs();
                    assert!(
                        error <= bound / 10.0 + 1e-14 * exact,
                        "θ={theta} a={a} b={b}: error {error:e}, bound {bound:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn small_and_degenerate_counts() {
        assert_eq!(zeta(0, 0.99), 0.0);
        assert_eq!(zeta(1, 0.99), 1.0);
        assert_eq!(zeta(2, 0.5), 1.0 + 2f64.powf(-0.5));
        assert!(rel(zeta(12_345_678, 0.0), 12_345_678.0) < 1e-15);
        assert!(zeta(10, -0.5).is_nan());
        assert!(zeta(10, f64::NAN).is_nan());
        assert!(zeta(10, f64::INFINITY).is_nan());
    }

    #[test]
    fn harmonic_numbers_at_huge_n() {
        // H_n = ln n + γ + 1/(2n) − 1/(12n²) + …; at n = 10^12 the omitted
        // terms are below 1e-24.
        let n = 1e12f64;
        let expected = n.ln() + 0.577_215_664_901_532_9 + 0.5 / n;
        assert!(rel(zeta(1_000_000_000_000, 1.0), expected) < 1e-14);
        // And the largest count does not misbehave.
        assert!(zeta(u64::MAX, 0.99).is_finite());
    }

    #[test]
    fn extend_agrees_with_zeta() {
        for theta in [0.2, 0.99] {
            for (from, to) in [
                (0u64, 5u64),
                (1, 1),
                (1_000, 1_500),
                (5, 50_000),
                (2_000, 3_000_000),
                (1_000_000, 10_000_000_000),
            ] {
                let up = zeta_extend(zeta(from, theta), from, to, theta);
                assert!(rel(up, zeta(to, theta)) < 1e-13, "{from} -> {to}: {up}");
                if to > 0 {
                    let down = zeta_extend(zeta(to, theta), to, from, theta);
                    let z = zeta(from, theta);
                    assert!(
                        (down - z).abs() < 1e-12 * zeta(to, theta),
                        "{to} -> {from}: {down}"
                    );
                }
            }
        }
        // Small growth adds the terms exactly as Java does.
        let mut java = compensated(100, 0.99);
        let ours = zeta_extend(java, 100, 110, 0.99);
        for i in 100..110u64 {
            java += 1.0 / ((i + 1) as f64).powf(0.99);
        }
        assert_eq!(ours, java);
        assert!(zeta_extend(1.0, 1, 2, -1.0).is_nan());
        let top = zeta(u64::MAX, 0.5);
        assert_eq!(zeta_extend(top, u64::MAX, u64::MAX, 0.5), top);
        let below = zeta_extend(top, u64::MAX, u64::MAX - 1, 0.5);
        assert!(rel(below, zeta(u64::MAX - 1, 0.5)) < 1e-13);
    }
}
