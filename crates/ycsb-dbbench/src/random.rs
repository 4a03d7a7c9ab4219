//! db_bench's value generator: LevelDB's `Random` (Park–Miller) and the
//! `RandomGenerator` that serves values compressible to a chosen ratio;
//! the key streams of the benchmark threads (RocksDB's `Random64`, C++'s
//! `std::mt19937_64`).

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
        match Self::try_new(compression_ratio, max_len) {
            Ok(generator) => generator,
            Err(_) => std::alloc::handle_alloc_error(
                std::alloc::Layout::array::<u8>(max_len.max(1 << 20) + PIECE)
                    .unwrap_or(std::alloc::Layout::new::<u8>()),
            ),
        }
    }

    /// [`ValueGenerator::new`], reporting a buffer the allocator refuses
    /// (a `--value_size` of a gigabyte under a memory limit) instead of
    /// aborting.
    ///
    /// # Errors
    ///
    /// The allocator's refusal of the `max(max_len, 1 MiB)` bytes buffer.
    pub fn try_new(
        compression_ratio: f64,
        max_len: usize,
    ) -> Result<Self, std::collections::TryReserveError> {
        let mut rnd = ParkMiller::new(301);
        let target = max_len.max(1 << 20);
        let mut data = Vec::new();
        data.try_reserve_exact(target.saturating_add(PIECE))?;
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
        Ok(Self { data, pos: 0 })
    }

    /// A generator for a benchmark that writes no values: no buffer, and
    /// every [`generate`](Self::generate) is empty.
    pub(crate) fn unused() -> Self {
        Self {
            data: Vec::new(),
            pos: 0,
        }
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

/// RocksDB's `Random64`, which is C++'s `std::mt19937_64`: the 64-bit
/// Mersenne Twister, kept bit-exact so that a thread seeded as db_bench
/// seeds its `ThreadState` draws db_bench's keys.
#[derive(Clone)]
pub(crate) struct Mt64 {
    state: Box<[u64; MT_N]>,
    index: usize,
}

const MT_N: usize = 312;
const MT_M: usize = 156;
const MT_MATRIX: u64 = 0xB502_6F5A_A966_19E9;
const MT_UPPER: u64 = 0xFFFF_FFFF_8000_0000;
const MT_LOWER: u64 = 0x7FFF_FFFF;

impl Mt64 {
    /// `std::mt19937_64(seed)`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut state = Box::new([0u64; MT_N]);
        state[0] = seed;
        for i in 1..MT_N {
            let prev = state[i - 1];
            state[i] = 6_364_136_223_846_793_005u64
                .wrapping_mul(prev ^ (prev >> 62))
                .wrapping_add(i as u64);
        }
        Self { state, index: MT_N }
    }

    fn twist(&mut self) {
        let s = &mut *self.state;
        for i in 0..MT_N {
            let x = (s[i] & MT_UPPER) | (s[(i + 1) % MT_N] & MT_LOWER);
            let mut next = x >> 1;
            if x & 1 != 0 {
                next ^= MT_MATRIX;
            }
            s[i] = s[(i + MT_M) % MT_N] ^ next;
        }
        self.index = 0;
    }

    /// The next output, `generator_()`.
    pub(crate) fn next_u64(&mut self) -> u64 {
        if self.index >= MT_N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= (y >> 29) & 0x5555_5555_5555_5555;
        y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
        y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
        y ^ (y >> 43)
    }
}

impl std::fmt::Debug for Mt64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt64")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_64_matches_the_cpp_standard() {
        // C++11 [rand.predef]: the 10000th invocation of a
        // default-constructed mt19937_64 (seed 5489) yields this value.
        let mut r = Mt64::new(5489);
        let mut v = 0;
        for _ in 0..10_000 {
            v = r.next_u64();
        }
        assert_eq!(v, 9_981_545_732_273_789_042);
        // libstdc++'s std::mt19937_64(43), db_bench's first thread with
        // --seed=42.
        let mut r = Mt64::new(43);
        let first: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(
            first,
            [
                517_903_087_452_778_646,
                5_503_290_952_634_489_979,
                581_382_956_510_732_038,
                7_698_380_982_261_852_713
            ]
        );
    }

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
        assert!(ValueGenerator::unused().generate(100).is_empty());
    }
}
