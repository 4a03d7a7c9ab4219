//! db_bench's `mixgraph`: the social-graph workload model of RocksDB's
//! "RocksDB Trace, Replay, Analyzer, and Workload Generation" (Cao et al.,
//! FAST '20), with db_bench's parameters and arithmetic:
//!
//! - the query type (get, put, seek) from the ratios `--mix_get_ratio`,
//!   `--mix_put_ratio`, `--mix_seek_ratio` spread over 1000 slots;
//! - value sizes and scan lengths from the inverse CDF of a generalized
//!   Pareto distribution (`--value_theta/k/sigma`, `--iter_theta/k/sigma`);
//! - key numbers uniform, from the power law `f(x) = a·x^b`
//!   (`--key_dist_a/b`), or from key ranges whose hotness follows the
//!   two-term exponential `f(x) = a·e^(bx) + c·e^(dx)`
//!   (`--keyrange_dist_a/b/c/d`, `--keyrange_num`), each range then
//!   accessed by the power law;
//! - the queries-per-second model `A·sin(B·x + C) + D` (`--sine_a/b/c/d`).

use crate::random::Mt64;

/// db_bench's mixgraph flags, with its defaults.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MixGraphSettings {
    /// `--mix_get_ratio` (1.0).
    pub get_ratio: f64,
    /// `--mix_put_ratio` (0.0).
    pub put_ratio: f64,
    /// `--mix_seek_ratio` (0.0).
    pub seek_ratio: f64,
    /// `--mix_max_scan_len` (10000): scan lengths are taken modulo this.
    pub max_scan_len: u64,
    /// `--mix_max_value_size` (1024): larger value sizes are taken modulo
    /// this (capped at 1 MiB, as db_bench).
    pub max_value_size: u64,
    /// `--keyrange_dist_a/b/c/d` (0): key-range hotness
    /// `a·e^(b·x) + c·e^(d·x)`; all zero means no key ranges.
    pub keyrange_dist: [f64; 4],
    /// `--keyrange_num` (1): key ranges.
    pub keyrange_num: u64,
    /// `--key_dist_a/b` (0): key hotness `a·x^b`; either zero means
    /// uniform keys.
    pub key_dist: [f64; 2],
    /// `--value_theta`, `--value_k`, `--value_sigma` (0, 0.2615, 25.45).
    pub value_pareto: Pareto,
    /// `--iter_theta`, `--iter_k`, `--iter_sigma` (0, 2.517, 14.236).
    pub iter_pareto: Pareto,
    /// `--sine_a/b/c/d` (1, 1, 0, 1): `A·sin(B·x + C) + D`, x in seconds.
    pub sine: [f64; 4],
    /// `--sine_mix_rate`: limit mixgraph's queries per second to the sine.
    pub sine_mix_rate: bool,
    /// `--sine_mix_rate_interval_milliseconds` (10000).
    pub sine_mix_rate_interval_ms: u64,
    /// `--sine_mix_rate_noise` (0): noise ratio in 0..=1 added to the sine.
    pub sine_mix_rate_noise: f64,
    /// `--sine_write_rate`: the fills' write rate limit follows the sine.
    pub sine_write_rate: bool,
    /// `--sine_write_rate_interval_milliseconds` (10000).
    pub sine_write_rate_interval_ms: u64,
}

impl Default for MixGraphSettings {
    fn default() -> Self {
        Self {
            get_ratio: 1.0,
            put_ratio: 0.0,
            seek_ratio: 0.0,
            max_scan_len: 10_000,
            max_value_size: 1024,
            keyrange_dist: [0.0; 4],
            keyrange_num: 1,
            key_dist: [0.0; 2],
            value_pareto: Pareto {
                theta: 0.0,
                k: 0.2615,
                sigma: 25.45,
            },
            iter_pareto: Pareto {
                theta: 0.0,
                k: 2.517,
                sigma: 14.236,
            },
            sine: [1.0, 1.0, 0.0, 1.0],
            sine_mix_rate: false,
            sine_mix_rate_interval_ms: 10_000,
            sine_mix_rate_noise: 0.0,
            sine_write_rate: false,
            sine_write_rate_interval_ms: 10_000,
        }
    }
}

impl MixGraphSettings {
    /// The sine model at `seconds` since the thread started (db_bench's
    /// `SineRate`).
    pub fn sine_rate(&self, seconds: f64) -> f64 {
        let [a, b, c, d] = self.sine;
        a * (b * seconds + c).sin() + d
    }
}

/// A generalized Pareto distribution `f(x) = (1/σ)(1 + k(x−θ)/σ)^−(1/k+1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pareto {
    /// θ, the location.
    pub theta: f64,
    /// k, the shape.
    pub k: f64,
    /// σ, the scale.
    pub sigma: f64,
}

impl Pareto {
    /// db_bench's `ParetoCdfInversion`: the value whose CDF is `u`, rounded
    /// up (`u` = 0 gives infinity, saturated).
    pub fn inverse(&self, u: f64) -> i64 {
        let x = if self.k == 0.0 {
            self.theta - self.sigma * u.ln()
        } else {
            self.theta + self.sigma * (u.powf(-self.k) - 1.0) / self.k
        };
        // C++'s cast of an out-of-range double is undefined; Rust's
        // saturates, which is what x86 gives for +inf in practice
        // (i64::MIN there, a scan of length 0 after the modulo either way).
        x.ceil() as i64
    }
}

/// db_bench's `PowerCdfInversion`: `ceil((u / a)^(1/b))`.
pub fn power_inverse(u: f64, a: f64, b: f64) -> i64 {
    (u / a).powf(1.0 / b).ceil() as i64
}

/// The query types of mixgraph, in db_bench's numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// 0: `Get`.
    Get,
    /// 1: `Put`.
    Put,
    /// 2: `Seek` and a scan.
    Seek,
}

/// db_bench's `QueryDecider`: the ratios normalised and spread over about
/// 1000 slots (each share rounded up), a query type chosen by a number
/// modulo the slots.
#[derive(Clone, Debug)]
pub struct QueryDecider {
    bounds: [i64; 3],
    /// The normalised ratios of get, put and seek.
    pub ratios: [f64; 3],
}

impl QueryDecider {
    /// The decider for (get, put, seek) ratios; `None` when they sum to 0
    /// (db_bench divides by zero there).
    pub fn new(ratios: [f64; 3]) -> Option<Self> {
        let sum: f64 = ratios.iter().sum();
        // Also refuses a NaN sum.
        if sum.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let mut bounds = [0i64; 3];
        let mut range = 0i64;
        let mut normalised = [0.0; 3];
        for (i, r) in ratios.iter().enumerate() {
            range += (1000.0 * (r / sum)).ceil() as i64;
            bounds[i] = range;
            normalised[i] = r / sum;
        }
        Some(Self {
            bounds,
            ratios: normalised,
        })
    }

    /// The query type for `n` (db_bench's `GetType`).
    pub fn query(&self, n: i64) -> Query {
        let pos = n.unsigned_abs() % self.bounds[2].max(1) as u64;
        let pos = pos as i64;
        if pos < self.bounds[0] {
            Query::Get
        } else if pos < self.bounds[1] {
            Query::Put
        } else if pos < self.bounds[2] {
            Query::Seek
        } else {
            Query::Get
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct KeyRange {
    start: i64,
    access: i64,
}

/// db_bench's `GenerateTwoTermExpKeys`: key ranges of `num / keyrange_num`
/// keys, each given a share of an integer line proportional to its
/// hotness, shuffled with a generator seeded by the line's length (so the
/// same parameters always give the same layout).
#[derive(Clone, Debug)]
pub struct KeyRanges {
    ranges: Vec<KeyRange>,
    rand_max: i64,
    range_size: i64,
}

impl KeyRanges {
    /// The key ranges of `total_keys` keys for hotness
    /// `a·e^(b·x) + c·e^(d·x)`, x the range number from 1.
    pub fn new(total_keys: u64, keyrange_num: u64, [a, b, c, d]: [f64; 4]) -> Self {
        let count = keyrange_num.max(1) as i64;
        let range_size = total_keys as i64 / count;
        let mut amplify: i64 = 0;
        let mut start = 0i64;
        let mut ranges = Vec::with_capacity(count as usize);
        for x in (1..=count).rev() {
            let x = x as f64;
            let mut p = a * (b * x).exp() + c * (d * x).exp();
            if p < 1e-16 {
                p = 0.0;
            }
            if amplify == 0 && p > 0.0 {
                amplify = (1.0 / p).floor() as i64 + 1;
            }
            let access = if p <= 0.0 {
                0
            } else {
                (amplify as f64 * p).floor() as i64
            };
            ranges.push(KeyRange { start, access });
            // Extreme parameters would overflow db_bench's int64; here the
            // line saturates.
            start = start.saturating_add(access);
        }
        let rand_max = start;
        let mut shuffle = Mt64::new(rand_max as u64);
        for i in 0..ranges.len() {
            let pos = (shuffle.next_u64() % ranges.len() as u64) as usize;
            ranges.swap(i, pos);
        }
        let mut offset = 0;
        for r in &mut ranges {
            r.start = offset;
            offset = offset.saturating_add(r.access);
        }
        Self {
            ranges,
            rand_max,
            range_size,
        }
    }

    /// Whether any range can be chosen (db_bench divides by the line's
    /// length, so hotness all zero is a bad parameter).
    pub fn usable(&self) -> bool {
        self.rand_max > 0 && self.range_size > 0
    }

    /// db_bench's `DistGetKeyID`: the range that `ini_rand` falls in on
    /// the line, then a key in it, uniform or by the power law.
    pub fn key(&self, ini_rand: i64, key_dist_a: f64, key_dist_b: f64) -> i64 {
        let on_line = ini_rand % self.rand_max;
        let (mut lo, mut hi) = (0usize, self.ranges.len());
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if on_line < self.ranges[mid].start {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let offset = if key_dist_a == 0.0 || key_dist_b == 0.0 {
            ini_rand % self.range_size
        } else {
            let u = (ini_rand % self.range_size) as f64 / self.range_size as f64;
            let seed = power_inverse(u, key_dist_a, key_dist_b);
            (Mt64::new(seed as u64).next_u64() % self.range_size as u64) as i64
        };
        self.range_size * lo as i64 + offset
    }

    /// How many of the ranges have a share of the line.
    #[cfg(test)]
    fn accessed(&self) -> usize {
        self.ranges.iter().filter(|r| r.access > 0).count()
    }
}

/// The key number of a mixgraph query: uniform (`ini_rand` itself), by
/// key range, or by the power law as db_bench computes it, including its
/// signed remainder (a negative result wraps to a key number above `num`,
/// a key that no fill wrote, as db_bench's).
pub fn key_number(ini_rand: i64, num: u64, key_dist: [f64; 2], ranges: Option<&KeyRanges>) -> u64 {
    let [a, b] = key_dist;
    if a == 0.0 || b == 0.0 {
        return ini_rand as u64;
    }
    if let Some(ranges) = ranges {
        return ranges.key(ini_rand, a, b) as u64;
    }
    let u = (ini_rand % num as i64) as f64 / num as f64;
    let seed = power_inverse(u, a, b);
    ((Mt64::new(seed as u64).next_u64() as i64) % num as i64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_inverse_is_the_generalized_pareto_quantile() {
        // db_bench's value defaults: theta 0, k 0.2615, sigma 25.45. The
        // median of a GPD is sigma (2^k - 1) / k = 19.99 -> 20 (rounded up).
        let p = MixGraphSettings::default().value_pareto;
        assert_eq!(p.inverse(0.5), 20);
        // u = 1 gives theta exactly; k = 0 is the exponential law.
        assert_eq!(p.inverse(1.0), 0);
        let exp = Pareto {
            theta: 1.0,
            k: 0.0,
            sigma: 10.0,
        };
        // 1 - 10 ln(0.5) = 7.93 -> 8.
        assert_eq!(exp.inverse(0.5), 8);
    }

    #[test]
    fn power_inverse_rounds_up() {
        // (0.25 / 1)^(1/0.5) = 0.0625 -> 1; (0.9/0.1)^(1/2) = 3 -> 3.
        assert_eq!(power_inverse(0.25, 1.0, 0.5), 1);
        assert_eq!(power_inverse(0.9, 0.1, 2.0), 3);
    }

    #[test]
    fn query_decider_spreads_ratios_over_a_thousand_slots() {
        // db_bench's wiki example: 0.83 / 0.14 / 0.03.
        let q = QueryDecider::new([0.83, 0.14, 0.03]).unwrap();
        assert_eq!(q.bounds, [830, 970, 1000]);
        assert_eq!(q.query(829), Query::Get);
        assert_eq!(q.query(830), Query::Put);
        assert_eq!(q.query(975), Query::Seek);
        assert_eq!(q.query(1000 + 5), Query::Get);
        assert_eq!(q.query(-975), Query::Seek, "db_bench takes |n|");
        // Shares are rounded up, so the slots can exceed 1000.
        let q = QueryDecider::new([1.0, 1.0, 1.0]).unwrap();
        assert_eq!(q.bounds, [334, 668, 1002]);
        assert!(QueryDecider::new([0.0, 0.0, 0.0]).is_none());
    }

    #[test]
    fn query_mix_follows_the_ratios() {
        let q = QueryDecider::new([0.6, 0.3, 0.1]).unwrap();
        let mut rng = Mt64::new(42);
        let mut counts = [0u32; 3];
        let n = 100_000;
        for _ in 0..n {
            let t = q.query((rng.next_u64() % 1_000_000) as i64);
            counts[t as usize] += 1;
        }
        // Binomial standard deviation at n = 1e5 is at most 0.0016, so
        // 0.01 is more than 6 sigma: the bound fails only when the mapping
        // is wrong, never by chance (and the seed is fixed anyway).
        for (count, want) in counts.iter().zip([0.6, 0.3, 0.1]) {
            let share = f64::from(*count) / f64::from(n);
            assert!((share - want).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn key_ranges_follow_the_two_term_exponential() {
        // The wiki's fitted parameters for a social graph workload.
        let ranges = KeyRanges::new(1_000_000, 30, [14.18, -2.917, 0.0164, -0.08082]);
        assert!(ranges.usable());
        assert_eq!(ranges.range_size, 33_333);
        assert_eq!(ranges.ranges.len(), 30);
        assert!(ranges.accessed() > 0 && ranges.accessed() <= 30);
        // The line's length is the shares summed, and the same parameters
        // give the same layout (the shuffle is seeded by the length).
        let again = KeyRanges::new(1_000_000, 30, [14.18, -2.917, 0.0164, -0.08082]);
        let starts: Vec<i64> = ranges.ranges.iter().map(|r| r.start).collect();
        let again_starts: Vec<i64> = again.ranges.iter().map(|r| r.start).collect();
        assert_eq!(starts, again_starts);
        // Every key lands in the key space, in a range with a share.
        let mut rng = Mt64::new(3);
        let mut per_range = vec![0u32; 30];
        for _ in 0..30_000 {
            let ini = (rng.next_u64() % 1_000_000) as i64;
            let k = ranges.key(ini, 0.0, 0.0);
            assert!((0..1_000_000).contains(&k), "{k}");
            per_range[(k / 33_333).min(29) as usize] += 1;
        }
        for (i, hits) in per_range.iter().enumerate() {
            if ranges.ranges[i].access == 0 {
                assert_eq!(*hits, 0, "range {i} has no share but was hit");
            }
        }
        // The hottest range (x = 1: a e^b + c e^d = 0.78 of the
        // unnormalised mass) takes most queries.
        assert!(
            *per_range.iter().max().unwrap() > 30_000 / 2,
            "{per_range:?}"
        );
    }

    #[test]
    fn key_numbers_uniform_power_and_signed_remainder() {
        assert_eq!(key_number(1234, 10_000, [0.0, 0.0], None), 1234);
        assert_eq!(key_number(1234, 10_000, [0.002312, 0.0], None), 1234);
        // With the power law, the key is Random64(seed) % num as a signed
        // remainder: below num, or wrapped far above it.
        let mut below = 0;
        for ini in 0..2000 {
            let k = key_number(ini, 10_000, [0.002312, 0.3467], None);
            if k < 10_000 {
                below += 1;
            } else {
                assert!(k > u64::MAX - 10_000, "{k}");
            }
        }
        // mt19937_64's outputs are negative as i64 about half the time.
        assert!(below > 0 && below < 2000, "{below}");
    }

    #[test]
    fn sine_rate_is_a_sin_bx_c_plus_d() {
        let s = MixGraphSettings {
            sine: [100.0, 0.5, 0.0, 200.0],
            ..MixGraphSettings::default()
        };
        assert!((s.sine_rate(0.0) - 200.0).abs() < 1e-9);
        assert!((s.sine_rate(std::f64::consts::PI) - 300.0).abs() < 1e-9);
    }
}
