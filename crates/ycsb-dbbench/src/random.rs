//! db_bench's value generator: LevelDB's `Random` (Park–Miller) and the
//! `RandomGenerator` that serves values compressible to a chosen ratio;
//! the key streams of the benchmark threads.

/// LevelDB's and RocksDB's `Random`: the Park–Miller "minimal standard"
/// generator (multiplier 16807 modulo 2^31 − 1), kept bit-exact so that
/// our values are the bytes db_bench writes.
#[derive(Clone, Debug)]
pub(crate) struct ParkMiller {
    seed: u32,
}

const M: u32 = 2_147_483_647;
const A: u64 = 16_807;

impl ParkMiller {
    /// A generator seeded like db_bench's: the low 31 bits of `seed`, with
    /// the two fixed points 0 and 2^31 − 1 replaced by 1.
    pub(crate) fn new(seed: u32) -> Self {
        let mut seed = seed & M;
        if seed == 0 || seed == M {
            seed = 1;
        }
        Self { seed }
    }

    /// The next value in `1..2^31-1`.
    pub(crate) fn next_u32(&mut self) -> u32 {
        // seed * A < 2^46, and (product >> 31) + (product & M) computes the
        // product modulo M without a division, as LevelDB does.
        let product = u64::from(self.seed) * A;
        let mut seed = ((product >> 31) + (product & u64::from(M))) as u32;
        if seed > M {
            seed -= M;
        }
        self.seed = seed;
        seed
    }

    /// A value in `0..n` (`n` > 0), by modulo as db_bench.
    pub(crate) fn uniform(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
}

/// db_bench's `RandomGenerator`: a buffer of at least 1 MiB built from
/// 100-byte pieces, each a random printable prefix of
/// `100 × compression_ratio` bytes repeated to fill the piece, served as
/// consecutive slices. A block compressor shrinks the values to about
/// `compression_ratio` of their size, as with db_bench's own values.
#[derive(Clone, Debug)]
pub struct ValueGenerator {
    data: Vec<u8>,
    pos: usize,
}

/// The piece length of db_bench's generator.
const PIECE: usize = 100;

impl ValueGenerator {
    /// The generator db_bench builds (seeded with 301) for values of up to
    /// `max_len` bytes compressible to `compression_ratio`.
    pub fn new(compression_ratio: f64, max_len: usize) -> Self {
        let mut rnd = ParkMiller::new(301);
        let target = max_len.max(1 << 20);
        let mut data = Vec::with_capacity(target + PIECE);
        // `as` saturates and truncates toward zero, as the C++ int cast.
        let raw = ((PIECE as f64 * compression_ratio) as usize).max(1);
        let mut random = Vec::with_capacity(raw);
        while data.len() < target {
            random.clear();
            // RandomString: ' ' + Uniform(95), printable ASCII.
            random.extend((0..raw).map(|_| b' ' + rnd.uniform(95) as u8));
            let start = data.len();
            while data.len() - start < PIECE {
                data.extend_from_slice(&random);
            }
            data.truncate(start + PIECE);
        }
        Self { data, pos: 0 }
    }

    /// The next `len` bytes (`len` at most the `max_len` given to
    /// [`ValueGenerator::new`]; longer requests are cut to the buffer).
    pub fn generate(&mut self, len: usize) -> &[u8] {
        let len = len.min(self.data.len());
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn park_miller_matches_the_minimal_standard() {
        // Park and Miller's published check: from seed 1, the 10000th value
        // of the multiplier-16807 generator is 1043618065.
        let mut r = ParkMiller::new(1);
        let mut v = 0;
        for _ in 0..10_000 {
            v = r.next_u32();
        }
        assert_eq!(v, 1_043_618_065);
        assert_eq!(ParkMiller::new(0).seed, 1);
        assert_eq!(ParkMiller::new(M).seed, 1);
    }

    #[test]
    fn values_repeat_their_random_prefix() {
        let mut g = ValueGenerator::new(0.5, 100);
        assert_eq!(g.data.len(), 10_486 * 100, "whole pieces up to 1 MiB");
        let v = g.generate(100).to_vec();
        assert_eq!(&v[..50], &v[50..]);
        assert!(v.iter().all(|b| (b' '..=b'~').contains(b)));
        let w = g.generate(100);
        assert_ne!(&v[..], w, "each piece has its own random prefix");
        // Ratio 1 gives no repetition inside a piece.
        let mut g = ValueGenerator::new(1.0, 100);
        let v = g.generate(100);
        assert_ne!(&v[..50], &v[50..]);
    }

    #[test]
    fn generation_wraps_and_honours_long_values() {
        let mut g = ValueGenerator::new(0.5, 3 << 20);
        assert!(g.data.len() >= 3 << 20);
        let first = g.generate(10).to_vec();
        let n = g.data.len() / 10;
        for _ in 1..n {
            g.generate(10);
        }
        assert_eq!(g.generate(10), &first[..], "wraps to the start");
        assert_eq!(g.generate(usize::MAX).len(), g.data.len());
    }
}
