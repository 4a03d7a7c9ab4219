//! Java's `HistogramGenerator`: values drawn from a histogram of block
//! counts (field lengths from a measured distribution).

use std::path::Path;

use rand::Rng;

use super::error::GeneratorError;
use super::{NumberGenerator, Rng64};

/// Buckets beyond this index are refused, so that a typo in a file cannot
/// allocate gigabytes.
const MAX_BUCKETS: u64 = 1 << 24;

/// Integers drawn from a histogram exactly as Java's `HistogramGenerator`
/// draws them, its off-by-one included.
///
/// Java draws k uniformly in `0..Σ counts`, then for i = 0, 1, …, n − 2
/// (n buckets) subtracts `counts[i]` and returns (i + 1)·`block_size` as
/// soon as the rest is ≤ 0; after the loop it returns (n − 1)·`block_size`.
/// With `S_i = counts[0] + … + counts[i]`, value (i + 1)·b is drawn for
/// S_(i−1) < k ≤ S_i: bucket 0 gets one draw more than its count and the
/// last bucket's draws go to the value of the one before (a single bucket
/// gives 0). Counts 1, 1, 1, 7 with block size 10 give P(10) = 0.2,
/// P(20) = 0.1, P(30) = 0.7. Trailing empty buckets matter, as in Java
/// (they move the last value up).
///
/// Differences that only widen what is accepted: counts and their sum are
/// 64-bit (Java: 32-bit). [`mean`](Self::mean) is the mean of the values
/// actually drawn (Java's `mean()`, `Σ i·b·counts[i] / Σ counts`, is used by
/// no workload). [`last_value`](NumberGenerator::last_value) is
/// `block_size` before the first draw.
#[derive(Clone, Debug)]
pub struct HistogramGenerator {
    block_size: u64,
    /// cumulative[i] = counts[0] + … + counts[i], for i < n − 1 (the
    /// buckets Java's loop visits).
    cumulative: Vec<u64>,
    /// Σ counts.
    total: u64,
    /// draws[j]: how many of the `total` values of k give j·`block_size`.
    draws: Vec<u64>,
    mean: f64,
    last: u64,
}

impl HistogramGenerator {
    /// Reads Java's histogram file format: a first line `BlockSize\t<b>`,
    /// then one `<bucket>\t<count>` line per bucket (buckets from 0). Java
    /// needs the buckets in order from 0 with tabs and no blank line; here
    /// fields may be separated by any whitespace, blank lines are ignored
    /// and missing buckets count 0 (files Java reads give the same buckets).
    ///
    /// # Errors
    ///
    /// [`GeneratorError::HistogramRead`] if the file cannot be read,
    /// [`GeneratorError::HistogramSyntax`] naming `path:line` for a
    /// malformed line, a repeated bucket or a bucket beyond 2^24, and the
    /// errors of [`from_buckets`](Self::from_buckets).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, GeneratorError> {
        let path = path.as_ref();
        let text =
            ycsb_db::read_input_to_string(path, ycsb_db::CONFIG_FILE_LIMIT).map_err(|e| {
                GeneratorError::HistogramRead {
                    path: path.to_path_buf(),
                    source: e.into(),
                }
            })?;
        let syntax = |line: usize, problem: String| GeneratorError::HistogramSyntax {
            path: path.to_path_buf(),
            line,
            problem,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty());
        let Some((line, first)) = lines.next() else {
            return Err(syntax(
                1,
                "empty file: expected 'BlockSize<TAB><size>'".into(),
            ));
        };
        let block_size = match first.split_whitespace().collect::<Vec<_>>()[..] {
            ["BlockSize", size] => {
                parse(size).map_err(|e| syntax(line, format!("block size {e}")))?
            }
            _ => {
                return Err(syntax(
                    line,
                    format!("expected 'BlockSize<TAB><size>', found '{first}'"),
                ))
            }
        };
        let mut counts: Vec<Option<u64>> = Vec::new();
        for (line, text) in lines {
            let (bucket, count) = match text.split_whitespace().collect::<Vec<_>>()[..] {
                [bucket, count] => (
                    parse(bucket).map_err(|e| syntax(line, format!("bucket {e}")))?,
                    parse(count).map_err(|e| syntax(line, format!("count {e}")))?,
                ),
                _ => {
                    return Err(syntax(
                        line,
                        format!("expected '<bucket><TAB><count>', found '{text}'"),
                    ))
                }
            };
            if bucket >= MAX_BUCKETS {
                return Err(syntax(
                    line,
                    format!(
                        "bucket {bucket} is beyond the largest supported, {}",
                        MAX_BUCKETS - 1
                    ),
                ));
            }
            let index = bucket as usize;
            if index >= counts.len() {
                counts.resize(index + 1, None);
            }
            if counts[index].replace(count).is_some() {
                return Err(syntax(line, format!("bucket {bucket} appears twice")));
            }
        }
        Self::from_buckets(
            block_size,
            counts.into_iter().map(Option::unwrap_or_default).collect(),
        )
    }

    /// A histogram of the bucket counts `counts` (bucket i, value
    /// (i + 1)·`block_size` in Java's intent; see the type for what Java
    /// actually draws).
    ///
    /// # Errors
    ///
    /// [`GeneratorError::ZeroBlockSize`] for a block size of 0,
    /// [`GeneratorError::EmptyHistogram`] when all counts are 0,
    /// [`GeneratorError::HistogramTooLarge`] when the total count or the
    /// largest value does not fit in 64 bits.
    pub fn from_buckets(block_size: u64, counts: Vec<u64>) -> Result<Self, GeneratorError> {
        if block_size == 0 {
            return Err(GeneratorError::ZeroBlockSize);
        }
        let mut total = 0u64;
        let mut cumulative = Vec::with_capacity(counts.len());
        for &count in &counts {
            total = total
                .checked_add(count)
                .ok_or(GeneratorError::HistogramTooLarge(
                    "the total count exceeds 2^64 - 1",
                ))?;
            cumulative.push(total);
        }
        if total == 0 {
            return Err(GeneratorError::EmptyHistogram);
        }
        let n = counts.len();
        cumulative.truncate(n - 1);
        // F(x): how many k in 0..total satisfy k <= x.
        let at_most = |x: u64| x.min(total - 1) + 1;
        let mut draws = vec![0u64; n];
        let mut below = 0;
        for (i, &s) in cumulative.iter().enumerate() {
            let upto = at_most(s);
            draws[i + 1] += upto - below;
            below = upto;
        }
        draws[n - 1] += total - below;
        let used = draws.iter().rposition(|&d| d > 0).unwrap_or(0) as u64;
        used.checked_mul(block_size)
            .ok_or(GeneratorError::HistogramTooLarge(
                "the largest value exceeds 2^64 - 1",
            ))?;
        let mean = draws
            .iter()
            .enumerate()
            .map(|(j, &d)| j as f64 * block_size as f64 * d as f64)
            .sum::<f64>()
            / total as f64;
        Ok(Self {
            block_size,
            cumulative,
            total,
            draws,
            mean,
            last: block_size,
        })
    }

    /// The value Java's loop returns for the uniform draw `k` (below the
    /// total count): the first visited bucket i with S_i >= k gives
    /// (i + 1)·b; when none does, (n − 1)·b, n − 1 being the number of
    /// visited buckets.
    #[inline]
    fn value_of(&self, k: u64) -> u64 {
        let i = self.cumulative.partition_point(|&c| c < k);
        let j = if i < self.cumulative.len() { i + 1 } else { i };
        j as u64 * self.block_size
    }

    /// The mean of the drawn values.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The largest value it draws.
    pub fn max_value(&self) -> u64 {
        self.draws.iter().rposition(|&d| d > 0).unwrap_or(0) as u64 * self.block_size
    }

    /// The block size.
    pub fn block_size(&self) -> u64 {
        self.block_size
    }

    /// The exact probability of drawing `value`, from Java's algorithm.
    pub fn probability(&self, value: u64) -> f64 {
        if !value.is_multiple_of(self.block_size) {
            return 0.0;
        }
        usize::try_from(value / self.block_size)
            .ok()
            .and_then(|j| self.draws.get(j))
            .map_or(0.0, |&d| d as f64 / self.total as f64)
    }
}

/// Parses an unsigned decimal, saying what is wrong otherwise.
fn parse(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("'{text}' is not an unsigned integer"))
}

impl NumberGenerator for HistogramGenerator {
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        self.last = self.value_of(rng.random_range(0..self.total));
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
    use std::io::Write;

    fn file(content: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content.as_bytes()).unwrap();
        f
    }

    /// Java's `nextValue` loop, transcribed: `number` is the uniform draw
    /// in `0..area`.
    fn java_next_value(block_size: u64, buckets: &[u64], mut number: i128) -> u64 {
        let mut i = 0;
        while i < buckets.len() - 1 {
            number -= i128::from(buckets[i]);
            if number <= 0 {
                return (i as u64 + 1) * block_size;
            }
            i += 1;
        }
        i as u64 * block_size
    }

    /// Every draw k maps to the value Java's loop returns for it, so the
    /// table of probabilities is Java's exactly (no tolerance needed).
    #[test]
    fn every_draw_gives_javas_value() {
        let cases: [&[u64]; 7] = [
            &[1, 1, 1, 7],
            &[0, 5, 1, 0, 4],
            &[3, 1, 0, 4],
            &[1, 1, 1, 7, 0, 0],
            &[5],
            &[0, 0, 3],
            &[2, 0],
        ];
        for buckets in cases {
            let g = HistogramGenerator::from_buckets(10, buckets.to_vec()).unwrap();
            let total: u64 = buckets.iter().sum();
            let mut counts = std::collections::BTreeMap::<u64, u64>::new();
            for k in 0..total {
                let java = java_next_value(10, buckets, i128::from(k));
                assert_eq!(g.value_of(k), java, "{buckets:?}, k = {k}");
                *counts.entry(java).or_default() += 1;
            }
            for v in (0..=10 * buckets.len() as u64 + 10).step_by(5) {
                let expected = counts.get(&v).copied().unwrap_or(0) as f64 / total as f64;
                assert_eq!(g.probability(v), expected, "{buckets:?}, value {v}");
            }
            let mean = counts.iter().map(|(&v, &c)| (v * c) as f64).sum::<f64>() / total as f64;
            assert!((g.mean() - mean).abs() < 1e-9, "{buckets:?}");
            assert_eq!(g.max_value(), *counts.keys().last().unwrap(), "{buckets:?}");
        }
    }

    /// The reference's example: buckets 1, 1, 1, 7 with BlockSize 10 give
    /// Java {10: 0.2, 20: 0.1, 30: 0.7}. Drawn 20,000 times with a fixed
    /// seed, the counts fit these probabilities by chi-square at the
    /// shared test level (testutil::ALPHA); the seed makes it repeatable.
    #[test]
    fn java_off_by_one_probabilities() {
        let mut g = HistogramGenerator::from_buckets(10, vec![1, 1, 1, 7]).unwrap();
        let probs: Vec<f64> = [0, 10, 20, 30, 40]
            .iter()
            .map(|&v| g.probability(v))
            .collect();
        assert_eq!(probs, [0.0, 0.2, 0.1, 0.7, 0.0]);
        let mut rng = seeded_rng(50, 0);
        let mut counts = [0u64; 3];
        for _ in 0..20_000 {
            let v = g.next_value(&mut rng);
            assert_eq!(g.last_value(), v);
            assert!([10, 20, 30].contains(&v), "{v}");
            counts[(v / 10 - 1) as usize] += 1;
        }
        assert_fits(&counts, &[0.2, 0.1, 0.7]);
        // An empty first bucket is still drawn once (k = 0), as in Java.
        let g = HistogramGenerator::from_buckets(100, vec![0, 5, 1, 0, 4]).unwrap();
        let probs: Vec<f64> = (1..=5).map(|b| g.probability(b * 100)).collect();
        assert_eq!(probs, [0.1, 0.5, 0.1, 0.3, 0.0]);
        assert_eq!(g.probability(150), 0.0);
    }

    #[test]
    fn reads_java_files() {
        let f = file("BlockSize\t10\n0\t3\n1\t1\n\n3\t4\n");
        let mut g = HistogramGenerator::from_file(f.path()).unwrap();
        assert_eq!(g.block_size(), 10);
        // Buckets 3, 1, 0, 4 (bucket 2 missing counts 0): Java's loop
        // gives k = 0..=3 -> 10, k = 4 -> 20, k = 5..=7 -> 30.
        let probs: Vec<f64> = (1..=4).map(|b| g.probability(b * 10)).collect();
        assert_eq!(probs, [0.5, 0.125, 0.375, 0.0]);
        let mut rng = seeded_rng(51, 0);
        assert!((0..100).all(|_| [10, 20, 30].contains(&g.next_value(&mut rng))));
        // Out-of-order buckets are fine.
        let f = file("BlockSize 10\n3 4\n0 3\n1 1\n");
        let h = HistogramGenerator::from_file(f.path()).unwrap();
        assert_eq!(h.probability(30), 0.375);
    }

    #[test]
    fn file_errors_name_path_and_line() {
        let cases = [
            ("", ":1: empty file"),
            (
                "Blocksize\t10\n",
                ":1: expected 'BlockSize<TAB><size>', found 'Blocksize\t10'",
            ),
            (
                "BlockSize\tten\n",
                ":1: block size 'ten' is not an unsigned integer",
            ),
            (
                "BlockSize\t10\n0\t1\n1\n",
                ":3: expected '<bucket><TAB><count>', found '1'",
            ),
            (
                "BlockSize\t10\n0\t-1\n",
                ":2: count '-1' is not an unsigned integer",
            ),
            (
                "BlockSize\t10\nx\t1\n",
                ":2: bucket 'x' is not an unsigned integer",
            ),
            ("BlockSize\t10\n0\t1\n0\t2\n", ":3: bucket 0 appears twice"),
            (
                "BlockSize\t10\n99999999\t1\n",
                ":2: bucket 99999999 is beyond",
            ),
        ];
        for (content, message) in cases {
            let f = file(content);
            let err = HistogramGenerator::from_file(f.path())
                .unwrap_err()
                .to_string();
            let expected = format!("{}{message}", f.path().display());
            assert!(
                err.starts_with(&expected),
                "{err:?} does not start with {expected:?}"
            );
        }
        let f = file("BlockSize\t10\n0\t0\n");
        assert!(matches!(
            HistogramGenerator::from_file(f.path()),
            Err(GeneratorError::EmptyHistogram)
        ));
        let err = HistogramGenerator::from_file("/nonexistent/histogram.txt").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("cannot read histogram file /nonexistent/histogram.txt: "));
    }

    #[test]
    fn bucket_errors() {
        assert!(matches!(
            HistogramGenerator::from_buckets(0, vec![1]),
            Err(GeneratorError::ZeroBlockSize)
        ));
        assert!(matches!(
            HistogramGenerator::from_buckets(1, vec![]),
            Err(GeneratorError::EmptyHistogram)
        ));
        assert!(matches!(
            HistogramGenerator::from_buckets(1, vec![u64::MAX, 1]),
            Err(GeneratorError::HistogramTooLarge(_))
        ));
        // The largest value drawn counts: 2 * b for buckets 1, 5, 1
        // (k = 2..=6), which overflows.
        assert!(matches!(
            HistogramGenerator::from_buckets(u64::MAX, vec![1, 5, 1]),
            Err(GeneratorError::HistogramTooLarge(_))
        ));
        // Buckets 0, 1 and 1, 0, 0 draw only b (k = 0), which fits; a
        // single bucket draws only 0, as Java's loop does.
        for buckets in [vec![0, 1], vec![1, 0, 0], vec![1]] {
            let g = HistogramGenerator::from_buckets(u64::MAX, buckets.clone()).unwrap();
            let only = if buckets.len() == 1 { 0 } else { u64::MAX };
            assert_eq!(g.max_value(), only, "{buckets:?}");
            assert_eq!(g.probability(only), 1.0, "{buckets:?}");
        }
    }
}
