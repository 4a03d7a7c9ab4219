//! db_bench's latency histogram: RocksDB's `HistogramStat` buckets,
//! interpolated percentiles and text, so `--histogram` output reads the
//! same as db_bench's.

use std::fmt;
use std::sync::OnceLock;

/// The bucket limits of RocksDB's `HistogramBucketMapper`: 1, 2, then ×1.5
/// each step, cut to two significant digits (172 becomes 170).
fn limits() -> &'static [u64] {
    static LIMITS: OnceLock<Vec<u64>> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let mut limits = vec![1u64, 2];
        let mut value = 2.0f64;
        loop {
            value *= 1.5;
            if value > u64::MAX as f64 {
                break;
            }
            let mut limit = value as u64;
            let mut pow = 1u64;
            while limit / 10 > 10 {
                limit /= 10;
                pow *= 10;
            }
            limits.push(limit * pow);
        }
        limits
    })
}

/// Latencies in whole microseconds, in db_bench's buckets. One per thread;
/// [`Histogram::merge`] combines them at the end.
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    min: u64,
    max: u64,
    sum: f64,
    sum_squares: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self {
            buckets: vec![0; limits().len()],
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0.0,
            sum_squares: 0.0,
        }
    }

    /// Records one latency of `micros` microseconds.
    pub fn add(&mut self, micros: u64) {
        let limits = limits();
        // The first bucket whose limit is at least the value (RocksDB's
        // lower_bound), the last one for anything larger.
        let index = limits
            .partition_point(|&l| l < micros)
            .min(limits.len() - 1);
        self.buckets[index] += 1;
        self.count += 1;
        self.min = self.min.min(micros);
        self.max = self.max.max(micros);
        let v = micros as f64;
        self.sum += v;
        self.sum_squares += v * v;
    }

    /// Adds `other`'s counts to this histogram.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_squares += other.sum_squares;
    }

    /// The number of recorded latencies.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean latency in microseconds.
    pub fn average(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// The standard deviation in microseconds, RocksDB's formula.
    pub fn std_dev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let n = self.count as f64;
        let variance = (self.sum_squares * n - self.sum * self.sum) / (n * n);
        variance.max(0.0).sqrt()
    }

    /// The `p`th percentile, interpolated linearly inside its bucket and
    /// clamped to the recorded minimum and maximum, as RocksDB does.
    pub fn percentile(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let limits = limits();
        let threshold = self.count as f64 * (p / 100.0);
        let mut cumulative = 0u64;
        for (b, &in_bucket) in self.buckets.iter().enumerate() {
            cumulative += in_bucket;
            if cumulative as f64 >= threshold {
                let left = if b == 0 { 0 } else { limits[b - 1] } as f64;
                let right = limits[b] as f64;
                let left_sum = (cumulative - in_bucket) as f64;
                let pos = if in_bucket == 0 {
                    0.0
                } else {
                    (threshold - left_sum) / in_bucket as f64
                };
                let r = left + (right - left) * pos;
                return r.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }
}

/// RocksDB's `HistogramStat::ToString`: count, average, percentiles, then
/// one line per non-empty bucket with 20 `#` for 100 %.
impl fmt::Display for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (min, max) = if self.count == 0 {
            (0, 0)
        } else {
            (self.min, self.max)
        };
        writeln!(
            f,
            "Count: {} Average: {:.4}  StdDev: {:.2}",
            self.count,
            self.average(),
            self.std_dev()
        )?;
        writeln!(
            f,
            "Min: {min}  Median: {:.4}  Max: {max}",
            self.percentile(50.0)
        )?;
        writeln!(
            f,
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            self.percentile(50.0),
            self.percentile(75.0),
            self.percentile(99.0),
            self.percentile(99.9),
            self.percentile(99.99)
        )?;
        writeln!(f, "------------------------------------------------------")?;
        if self.count == 0 {
            return Ok(());
        }
        let limits = limits();
        let mult = 100.0 / self.count as f64;
        let mut cumulative = 0u64;
        for (b, &in_bucket) in self.buckets.iter().enumerate() {
            if in_bucket == 0 {
                continue;
            }
            cumulative += in_bucket;
            let (open, left) = if b == 0 {
                ('[', 0)
            } else {
                ('(', limits[b - 1])
            };
            let marks = (mult * in_bucket as f64 / 5.0 + 0.5) as usize;
            writeln!(
                f,
                "{open} {left:>7}, {:>7} ] {in_bucket:>8} {:>7.3}% {:>7.3}% {}",
                limits[b],
                mult * in_bucket as f64,
                mult * cumulative as f64,
                "#".repeat(marks)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_rocksdbs() {
        assert_eq!(
            &limits()[..14],
            &[1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, 250]
        );
        assert!(limits().windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn median_interpolates_like_db_bench() {
        // The bucket counts of a real db_bench fillseq histogram: 6190 in
        // (1,2] and 12354 in (2,3] put the median at 2 + 3810/12354.
        let mut h = Histogram::new();
        for _ in 0..6190 {
            h.add(2);
        }
        for _ in 0..12354 {
            h.add(3);
        }
        for _ in 0..1456 {
            h.add(5);
        }
        assert_eq!(h.count(), 20_000);
        assert!(
            (h.percentile(50.0) - 2.3084).abs() < 1e-4,
            "{}",
            h.percentile(50.0)
        );
        let text = h.to_string();
        assert!(text.starts_with("Count: 20000 Average: "), "{text}");
        assert!(text.contains("Min: 2  Median: 2.3084  Max: 5\n"), "{text}");
        assert!(
            text.contains("(       1,       2 ]     6190  30.950%  30.950% ######\n"),
            "{text}"
        );
    }

    #[test]
    fn merge_and_extremes() {
        let mut a = Histogram::new();
        a.add(0);
        let mut b = Histogram::new();
        b.add(u64::MAX);
        a.merge(&b);
        assert_eq!(a.count(), 2);
        // As RocksDB: interpolated up to the last bucket's limit.
        assert_eq!(a.percentile(100.0), *limits().last().unwrap() as f64);
        assert!(a.to_string().contains("[       0,       1 ]"));
        assert_eq!(Histogram::new().percentile(50.0), 0.0);
    }
}
