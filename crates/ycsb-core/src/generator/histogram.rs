//! Java's `HistogramGenerator`: values drawn from a histogram of block
//! counts (field lengths from a measured distribution).

use std::path::Path;

use rand::Rng;

use super::error::GeneratorError;
use super::{NumberGenerator, Rng64};

/// Buckets beyond this index are refused, so that a typo in a file cannot
/// allocate gigabytes.
const MAX_BUCKETS: u64 = 1 << 24;

/// Integers drawn from a histogram: bucket i holds `counts[i]` items and
/// stands for the value (i + 1)·`block_size`.
///
/// Java documents the intent: "we always draw the largest value in the
/// current bucket, so the value drawn is always a multiple of blockSize.
/// The minimum value this distribution returns is blockSize (not zero)."
/// Here P((i + 1)·block_size) = `counts[i]` / Σ counts exactly. Java's loop
/// is off by one at both ends (bucket 0 gets one extra draw out of Σ
/// counts, the last bucket's draws go to the value of the one before), and
/// its `mean()` uses i·block_size; [`mean`](Self::mean) here is the mean of
/// the values actually drawn. Counts are 64-bit (Java: 32-bit).
/// [`last_value`](NumberGenerator::last_value) is `block_size` before the
/// first draw.
#[derive(Clone, Debug)]
pub struct HistogramGenerator {
    block_size: u64,
    /// cumulative[i] = counts[0] + … + counts[i].
    cumulative: Vec<u64>,
    mean: f64,
    last: u64,
}

impl HistogramGenerator {
    /// Reads Java's histogram file format: a first line `BlockSize\t<b>`,
    /// then one `<bucket>\t<count>` line per bucket (buckets from 0; fields
    /// may be separated by any whitespace; blank lines are ignored; missing
    /// buckets count 0).
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

    /// A histogram whose bucket i holds `counts[i]` items of value
    /// (i + 1)·`block_size`.
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
        let mut weighted = 0.0;
        let mut cumulative = Vec::with_capacity(counts.len());
        for (i, &count) in counts.iter().enumerate() {
            total = total
                .checked_add(count)
                .ok_or(GeneratorError::HistogramTooLarge(
                    "the total count exceeds 2^64 - 1",
                ))?;
            weighted += (i as f64 + 1.0) * count as f64;
            cumulative.push(total);
        }
        if total == 0 {
            return Err(GeneratorError::EmptyHistogram);
        }
        // Trailing empty buckets can never be drawn: drop them so the
        // largest value check below is about values that occur.
        let used = cumulative
            .iter()
            .position(|&c| c == total)
            .map_or(0, |i| i + 1);
        cumulative.truncate(used);
        (used as u64)
            .checked_mul(block_size)
            .ok_or(GeneratorError::HistogramTooLarge(
                "the largest value exceeds 2^64 - 1",
            ))?;
        Ok(Self {
            block_size,
            cumulative,
            mean: block_size as f64 * weighted / total as f64,
            last: block_size,
        })
    }

    /// The mean of the drawn values: `block_size · Σ (i + 1)·counts[i] / Σ counts`.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The largest value it draws.
    pub fn max_value(&self) -> u64 {
        self.cumulative.len() as u64 * self.block_size
    }

    /// The block size.
    pub fn block_size(&self) -> u64 {
        self.block_size
    }

    /// The probability of drawing `value`.
    pub fn probability(&self, value: u64) -> f64 {
        if value == 0 || value % self.block_size != 0 {
            return 0.0;
        }
        let i = (value / self.block_size - 1) as usize;
        let Some(&upto) = self.cumulative.get(i) else {
            return 0.0;
        };
        let before = if i == 0 { 0 } else { self.cumulative[i - 1] };
        (upto - before) as f64 / self.total() as f64
    }

    fn total(&self) -> u64 {
        // Not empty: from_buckets refuses an all-zero histogram.
        self.cumulative.last().copied().unwrap_or(0)
    }
}

/// Parses an unsigned decimal, saying what is wrong otherwise.
fn parse(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("'{text}' is not an unsigned integer"))
}

impl NumberGenerator for HistogramGenerator {
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        let k = rng.random_range(0..self.total());
        // The first bucket whose cumulative count exceeds k.
        let i = self.cumulative.partition_point(|&c| c <= k) as u64;
        self.last = (i + 1) * self.block_size;
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

    #[test]
    fn fits_the_counts_including_empty_first_bucket() {
        let mut g = HistogramGenerator::from_buckets(100, vec![0, 5, 1, 0, 4]).unwrap();
        assert!((g.mean() - 100.0 * (2.0 * 5.0 + 3.0 + 5.0 * 4.0) / 10.0).abs() < 1e-9);
        let mut rng = seeded_rng(50, 0);
        let mut counts = [0u64; 5];
        for _ in 0..20_000 {
            let v = g.next_value(&mut rng);
            assert_eq!(g.last_value(), v);
            assert!(v % 100 == 0 && v >= 100);
            counts[(v / 100 - 1) as usize] += 1;
        }
        // Zero-count buckets are never drawn.
        assert_eq!((counts[0], counts[3]), (0, 0));
        let expected: Vec<f64> = (1..=5).map(|b| g.probability(b * 100)).collect();
        assert_eq!(expected, [0.0, 0.5, 0.1, 0.0, 0.4]);
        assert_fits(&[counts[1], counts[2], counts[4]], &[0.5, 0.1, 0.4]);
        assert_eq!(g.probability(150), 0.0);
        assert_eq!(g.probability(0), 0.0);
        assert_eq!(g.probability(600), 0.0);
    }

    #[test]
    fn reads_java_files() {
        let f = file("BlockSize\t10\n0\t3\n1\t1\n\n3\t4\n");
        let mut g = HistogramGenerator::from_file(f.path()).unwrap();
        assert_eq!(g.block_size(), 10);
        let probs: Vec<f64> = (1..=4).map(|b| g.probability(b * 10)).collect();
        assert_eq!(probs, [0.375, 0.125, 0.0, 0.5]);
        assert!((g.mean() - 10.0 * (3.0 + 2.0 + 16.0) / 8.0).abs() < 1e-9);
        let mut rng = seeded_rng(51, 0);
        assert!((0..100).all(|_| [10, 20, 40].contains(&g.next_value(&mut rng))));
        // Out-of-order buckets are fine.
        let f = file("BlockSize 10\n3 4\n0 3\n1 1\n");
        let h = HistogramGenerator::from_file(f.path()).unwrap();
        assert_eq!(h.probability(40), 0.5);
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
        assert!(matches!(
            HistogramGenerator::from_buckets(u64::MAX, vec![0, 1]),
            Err(GeneratorError::HistogramTooLarge(_))
        ));
        // Trailing empty buckets do not count towards the largest value.
        assert!(HistogramGenerator::from_buckets(u64::MAX, vec![1, 0, 0]).is_ok());
    }
}
