//! Number generators with the distributions of Java YCSB's
//! `site.ycsb.generator` package.
//!
//! Unlike Java, where generators are shared by all client threads and draw
//! from thread-local random sources, every generator here is owned by one
//! thread and takes the random source as an argument: no locks, no shared
//! atomics and no allocation per draw, and a run is reproducible from its
//! seed ([`seeded_rng`]). The one shared generator is
//! [`AcknowledgedCounter`], the run-phase insert sequence that all threads
//! must agree on.
//!
//! Every integer generator implements [`NumberGenerator`]. Where this
//! module deliberately differs from Java (mostly fixes of rare Java bugs),
//! the type's documentation says so.
//!
//! ```
//! use std::sync::Arc;
//! use ycsb_core::generator::{
//!     seeded_rng, AcknowledgedCounter, NumberGenerator, ScrambledZipfian, SkewedLatest,
//! };
//!
//! // One random stream per client thread, all derived from the run's seed.
//! let mut rng = seeded_rng(42, 0);
//!
//! // Java's default request distribution over 1000 loaded records.
//! let mut keys = ScrambledZipfian::new(0, 999)?;
//! assert!(keys.next_value(&mut rng) <= 999);
//!
//! // Run-phase inserts: claim, insert, acknowledge; `latest` reads only
//! // what has been acknowledged.
//! let inserts = Arc::new(AcknowledgedCounter::new(1000));
//! let mut latest = SkewedLatest::new(Arc::clone(&inserts));
//! let number = inserts.next();
//! assert_eq!(number, 1000);
//! assert!(latest.next_value(&mut rng) <= 999);
//! inserts.acknowledge(number)?;
//! assert_eq!(inserts.limit(), Some(1000));
//! assert!(latest.next_value(&mut rng) <= 1000);
//! # Ok::<(), ycsb_core::generator::GeneratorError>(())
//! ```

mod counter;
mod discrete;
mod error;
mod histogram;
mod latest;
mod simple;
pub(crate) mod zeta;
mod zipfian;

#[cfg(test)]
pub(crate) mod testutil;

pub use counter::{AcknowledgedCounter, Counter, Sequential, ACK_WINDOW_SIZE};
pub use discrete::Discrete;
pub use error::GeneratorError;
pub use histogram::HistogramGenerator;
pub use latest::SkewedLatest;
pub use simple::{Constant, Exponential, Hotspot, Uniform};
pub use zipfian::{
    ScrambledZipfian, Zipfian, MAX_THETA, SCRAMBLED_ITEM_COUNT, SCRAMBLED_ZETAN, ZIPFIAN_CONSTANT,
};

use rand::SeedableRng;

/// The random source every generator draws from: small, fast and not
/// cryptographic (xoshiro256++ on 64-bit targets).
pub type Rng64 = rand::rngs::SmallRng;

/// A random source for one stream (typically one client thread) of a run
/// seeded with `seed`.
///
/// The same `seed` and `stream` always give the same sequence. Distinct
/// `(seed, stream)` pairs give distinct generator states: the 256-bit state
/// is two SplitMix64 outputs of `seed` followed by two of `stream`, and
/// SplitMix64's output is a bijection of its input, so the state is an
/// injective function of the pair. With a 2^256 − 1 period, sequences
/// started from distinct states do not overlap in any feasible run.
pub fn seeded_rng(seed: u64, stream: u64) -> Rng64 {
    let mut state = <Rng64 as SeedableRng>::Seed::default();
    // A different starting constant for the stream keeps (s, s) from giving
    // the same two halves.
    let mut a = seed;
    let mut b = stream ^ 0x6A09_E667_F3BC_C909;
    let words = [
        splitmix64(&mut a),
        splitmix64(&mut a),
        splitmix64(&mut b),
        splitmix64(&mut b),
    ];
    for (chunk, word) in state.as_mut().chunks_mut(8).zip(words.iter().cycle()) {
        let bytes = word.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    Rng64::from_seed(state)
}

/// One step of SplitMix64 (Steele, Lea and Flood), the customary way to
/// expand a 64-bit seed into generator state.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Java YCSB's `Utils.fnvhash64`: FNV-1a 64 over the 8 bytes of `v`, least
/// significant byte first, then the absolute value of the result taken as a
/// signed 64-bit number.
///
/// This is the hash behind `insertorder=hashed` keys and the scrambled
/// zipfian. Edge case: Java's `Math.abs(Long.MIN_VALUE)` is
/// `Long.MIN_VALUE` itself; this function returns its bit pattern,
/// 2^63, for that one hash value, where Java would go on with a negative
/// number.
///
/// Numbers below 2^32 (every key number of a workload under 4·10^9
/// records) take a shorter path with the same result: the steps of
/// their four zero high bytes are one multiplication by the prime's
/// fourth power.
#[inline]
pub fn fnvhash64(v: u64) -> u64 {
    if v >> 32 == 0 {
        fnvhash64_low_bytes::<4>(v)
    } else {
        fnvhash64_low_bytes::<8>(v)
    }
}

const FNV_OFFSET_BASIS: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 1_099_511_628_211;

/// `FNV_PRIME^k` (wrapping) for k = 0..=8.
const FNV_PRIME_POWERS: [u64; 9] = {
    let mut powers = [1u64; 9];
    let mut k = 1;
    while k < 9 {
        powers[k] = powers[k - 1].wrapping_mul(FNV_PRIME);
        k += 1;
    }
    powers
};

/// [`fnvhash64`] of a `v` below 2^(8·`BYTES`), exactly.
///
/// FNV-1a's step for a zero byte, `(h ^ 0) · p`, is only the
/// multiplication, and wrapping multiplication is associative, so the
/// 8 − `BYTES` steps of the zero high bytes are one multiplication by
/// p^(8 − `BYTES`): the same 64 bits in `BYTES` + 1 multiplications
/// instead of eight (the scrambled zipfian's ranks, below 2^34, take
/// five bytes; key numbers below 2^32 four).
#[inline(always)]
pub(crate) fn fnvhash64_low_bytes<const BYTES: usize>(v: u64) -> u64 {
    const { assert!(BYTES >= 1 && BYTES <= 8) };
    debug_assert!(
        BYTES == 8 || v >> (8 * BYTES) == 0,
        "{v} has more than {BYTES} bytes"
    );
    let mut hash = FNV_OFFSET_BASIS;
    for &byte in &v.to_le_bytes()[..BYTES] {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash = hash.wrapping_mul(FNV_PRIME_POWERS[8 - BYTES]);
    (hash as i64).wrapping_abs() as u64
}

/// A per-thread generator of integers.
///
/// Implementations draw from the random source they are given and keep no
/// shared state, so each client thread owns its own instance.
pub trait NumberGenerator: Send {
    /// Draws the next value.
    fn next_value(&mut self, rng: &mut Rng64) -> u64;

    /// The value the last [`next_value`](Self::next_value) returned; before
    /// the first draw, an initial value documented by each type.
    fn last_value(&self) -> u64;
}

impl<G: NumberGenerator + ?Sized> NumberGenerator for Box<G> {
    fn next_value(&mut self, rng: &mut Rng64) -> u64 {
        (**self).next_value(rng)
    }

    fn last_value(&self) -> u64 {
        (**self).last_value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn fnvhash64_matches_java_key_hashes() {
        // Java: 0 -> user6284781860667377211, 1 -> user8517097267634966620,
        // 2 -> user1820151046732198393.
        assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnvhash64(1), 8_517_097_267_634_966_620);
        assert_eq!(fnvhash64(2), 1_820_151_046_732_198_393);
    }

    /// FNV-1a over all eight bytes, as Java computes it.
    fn fnvhash64_byte_by_byte(v: u64) -> u64 {
        let mut hash = FNV_OFFSET_BASIS;
        for byte in v.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(FNV_PRIME);
        }
        (hash as i64).wrapping_abs() as u64
    }

    /// The shortened hashes are FNV-1a's over eight bytes, bit for bit, on
    /// both sides of every byte boundary and on random numbers of each
    /// width.
    #[test]
    fn short_fnv_hashes_are_the_eight_byte_hashes() {
        use rand::Rng;
        let mut rng = seeded_rng(8, 0);
        let mut values = vec![0, 1, u64::from(u32::MAX), 1 << 32, u64::MAX];
        for bits in 1..64 {
            values.extend([
                (1u64 << bits) - 1,
                1 << bits,
                rng.random::<u64>() >> (64 - bits),
            ]);
        }
        values.extend((0..100_000).map(|_| rng.random::<u64>() >> rng.random_range(0..64)));
        for v in values {
            let expected = fnvhash64_byte_by_byte(v);
            assert_eq!(fnvhash64(v), expected, "{v}");
            if v >> 40 == 0 {
                assert_eq!(fnvhash64_low_bytes::<5>(v), expected, "{v}");
            }
            if v >> 24 == 0 {
                assert_eq!(fnvhash64_low_bytes::<3>(v), expected, "{v}");
            }
        }
    }

    #[test]
    fn fnvhash64_never_exceeds_the_java_long_range_but_at_min_value() {
        for v in 0..10_000u64 {
            assert!(fnvhash64(v) <= 1 << 63);
        }
    }

    fn first_draws(mut rng: Rng64) -> [u64; 4] {
        [rng.random(), rng.random(), rng.random(), rng.random()]
    }

    #[test]
    fn seeded_rng_is_reproducible_and_streams_differ() {
        let a = first_draws(seeded_rng(42, 0));
        assert_eq!(a, first_draws(seeded_rng(42, 0)));
        assert_ne!(a, first_draws(seeded_rng(42, 1)));
        assert_ne!(a, first_draws(seeded_rng(43, 0)));
        // Swapping seed and stream must not give the same state either.
        assert_ne!(first_draws(seeded_rng(5, 7)), first_draws(seeded_rng(7, 5)));
    }
}
