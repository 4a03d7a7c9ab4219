//! Field values: random bytes laid out as Java YCSB's
//! `RandomByteIterator`, or, with `dataintegrity`, deterministic values
//! that reads can verify.

use rand::RngCore;

/// Fills `buf` with random field bytes as Java YCSB's `RandomByteIterator`
/// lays them out: groups of six from one random number, the last group cut
/// to fit (see [`random_value_chunk`]).
pub fn fill_random_value(rng: &mut impl RngCore, buf: &mut [u8]) {
    let mut chunks = buf.chunks_exact_mut(VALUE_CHUNK);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&random_value_chunk(rng));
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let chunk = random_value_chunk(rng);
        tail.copy_from_slice(&chunk[..tail.len()]);
    }
}

/// The bytes [`random_value_chunk`] produces at a time: one of Java's
/// six-byte groups.
pub const VALUE_CHUNK: usize = 6;

/// The bits of a random word that become a group's bytes, where Java's
/// `RandomByteIterator` takes its 32-bit number's bits: byte 0 keeps 5
/// bits (mask 31), byte 1 six (63), byte 2 bits 1-4 and 6 (95, bit 0
/// shared with byte 1), byte 3 bits 0 and 2-4 (31, bit 1 shared with byte
/// 2), byte 4 six (63), byte 5 bits 1-4 and 6 (95, bit 0 shared with byte
/// 4).
const GROUP_FRESH_BITS: u64 = 0x5E3F_1D5E_3F1F;
/// Where the three bits each shared by two neighbouring bytes of a Java
/// group are copied to, three bits above where they are drawn: byte 1's
/// bit 5 is byte 2's bit 0, byte 2's bit 6 byte 3's bit 1, byte 4's bit 5
/// byte 5's bit 0 (Java's shifts of 5 between masks that are 6 and 7 bits
/// wide).
const GROUP_SHARED_BITS: u64 = (1 << 16) | (1 << 25) | (1 << 40);
/// `' '` added to each of a group's six bytes.
const GROUP_SPACES: u64 = 0x2020_2020_2020;

/// One of Java's six-byte groups (in the low 48 bits) from a random word.
///
/// Java computes byte `k` as `((n >> 5k) & mask_k) + ' '` with masks 31,
/// 63, 95, 31, 63, 95 from one random `int` `n`: 31 of its bits, three of
/// them appearing in two neighbouring bytes, bit 30 unused. This places 31
/// random bits where those bytes need them and copies the three shared
/// ones, which is the same function of 31 uniform bits (a test maps Java's
/// `n` onto it bit for bit) in five operations instead of seventeen.
#[inline]
fn random_group(word: u64) -> u64 {
    ((word & GROUP_FRESH_BITS) | ((word << 3) & GROUP_SHARED_BITS)) + GROUP_SPACES
}

/// Six random field bytes: one of Java's `RandomByteIterator` groups from
/// its own random word. Every byte lies in 32..=127; a value is these
/// chunks one after another, the last cut to fit, which is Java's layout
/// (a value starts a fresh group and a cut group keeps its first bytes).
///
/// Two groups per 64-bit word would halve the random draws, but the 33
/// bits a group leaves are scattered so that no shift or rotation lines
/// them up with another group's positions; gathering them costs more
/// than the draw.
#[inline]
pub fn random_value_chunk(rng: &mut impl RngCore) -> [u8; VALUE_CHUNK] {
    let [a, b, c, d, e, f, _, _] = random_group(rng.next_u64()).to_le_bytes();
    [a, b, c, d, e, f]
}

/// One of Java's six-byte groups in the low six bytes of a word (the two
/// high bytes are zero), drawn as [`random_value_chunk`] draws it: for
/// [`Record::push_fields_packed`](ycsb_db::Record::push_fields_packed),
/// which stores each word whole instead of cutting it into a 4-byte and
/// a 2-byte store.
#[inline]
pub fn random_value_group(rng: &mut ValueRng) -> u64 {
    random_group(rng.next_u64())
}

/// The random stream field values are drawn from: wyrand (Wang Yi's
/// generator, which passes BigCrush and PractRand).
///
/// Values take most of the random bits a workload draws (a 100-byte field
/// is 17 words), and filling them is on the path of every insert and
/// update. A xoshiro state update is a chain the next word must wait for;
/// wyrand's state only advances by an addition, and each word is a
/// multiplication of its own, so the CPU computes the words of a value side
/// by side. Key choice and the operation mix keep their own streams.
#[derive(Clone, Debug)]
pub struct ValueRng {
    state: u64,
}

impl ValueRng {
    /// A stream starting from `seed`.
    pub fn new(seed: u64) -> Self {
        ValueRng { state: seed }
    }
}

impl RngCore for ValueRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0xA076_1D64_78BD_642F);
        let product = u128::from(self.state) * u128::from(self.state ^ 0xE703_7ED1_A0B4_28DB);
        ((product >> 64) as u64) ^ (product as u64)
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        let mut chunks = dst.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let tail = chunks.into_remainder();
        let word = self.next_u64().to_le_bytes();
        let len = tail.len();
        tail.copy_from_slice(&word[..len]);
    }
}

/// Java's `String.hashCode` step for one more (ASCII) character.
fn java_hash_step(hash: i32, byte: u8) -> i32 {
    hash.wrapping_mul(31).wrapping_add(i32::from(byte))
}

/// Writes Java YCSB's deterministic value for (`key`, `field`) of `length`
/// bytes into `out` (cleared first).
///
/// Java starts with `<key>:<field>`; while shorter than the length it
/// appends `:` and the `String.hashCode()` of the whole buffer so far, as a
/// signed decimal; then it cuts the buffer to the length. The hash of the
/// buffer is kept incrementally here, which gives Java's value without
/// rehashing the buffer each round. Keys and field names are ASCII in every
/// workload, so Java's UTF-16 units are the bytes.
pub fn build_deterministic_value(key: &str, field: &str, length: usize, out: &mut Vec<u8>) {
    out.clear();
    let mut hash: i32 = 0;
    fn push(out: &mut Vec<u8>, hash: &mut i32, bytes: &[u8]) {
        for &b in bytes {
            *hash = java_hash_step(*hash, b);
        }
        out.extend_from_slice(bytes);
    }
    push(out, &mut hash, key.as_bytes());
    push(out, &mut hash, b":");
    push(out, &mut hash, field.as_bytes());
    let mut digits = [0u8; 12];
    while out.len() < length {
        push(out, &mut hash, b":");
        let current = hash;
        push(out, &mut hash, format_i32(current, &mut digits));
    }
    out.truncate(length);
}

/// Formats `v` in decimal into `buf`, returning the used tail.
fn format_i32(v: i32, buf: &mut [u8; 12]) -> &[u8] {
    let negative = v < 0;
    let mut rest = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java's `RandomByteIterator.fillBytesImpl` for one random `int`:
    /// byte k is `((n >> shift_k) & mask_k) + ' '` (arithmetic shifts).
    fn java_group(n: i32) -> [u8; 6] {
        let part = |shift: u32, mask: i32| (((n >> shift) & mask) + i32::from(b' ')) as u8;
        [
            part(0, 31),
            part(5, 63),
            part(10, 95),
            part(15, 31),
            part(20, 63),
            part(25, 95),
        ]
    }

    /// Places the 31 bits of Java's `n` that its group uses where
    /// [`random_group`] reads them.
    fn spread(n: i32) -> u64 {
        let n = u64::from(n as u32);
        let bits = |from: u32, to: u32, count: u32| ((n >> from) & ((1 << count) - 1)) << to;
        bits(0, 0, 5)
            | bits(5, 8, 6)
            | bits(11, 17, 4)
            | bits(16, 22, 1)
            | bits(15, 24, 1)
            | bits(17, 26, 3)
            | bits(20, 32, 6)
            | bits(26, 41, 4)
            | bits(31, 46, 1)
    }

    /// Every group is Java's group of some `int` and every Java group is
    /// ours of some word, bit for bit: the same function of uniform random
    /// bits, so the same distribution of bytes.
    #[test]
    fn groups_are_java_s_bit_for_bit() {
        let mut rng = ValueRng::new(0x1DEA);
        let edges = [0, -1, 1, i32::MIN, i32::MAX, 0x4000_0000, 0x0001_0400];
        let randoms = (0..200_000).map(|_| rng.next_u32() as i32);
        for n in edges.into_iter().chain(randoms) {
            let ours = random_group(spread(n)).to_le_bytes();
            assert_eq!(ours[..6], java_group(n), "n = {n:#x}");
            assert_eq!(ours[6..], [0, 0], "n = {n:#x}");
        }
        // Bits outside the 31 read positions change nothing.
        for _ in 0..10_000 {
            let word = rng.next_u64();
            assert_eq!(random_group(word), random_group(word & GROUP_FRESH_BITS));
        }
    }

    /// The bytes each position of a Java group can hold: mask 31 gives
    /// `' '..='?'`, 63 `' '..='_'`, 95 `' '..='?'` and `` '`'..=DEL ``.
    fn allowed(position: usize, byte: u8) -> bool {
        match position % 6 {
            0 | 3 => (32..64).contains(&byte),
            1 | 4 => (32..96).contains(&byte),
            _ => (32..64).contains(&byte) || (96..128).contains(&byte),
        }
    }

    /// Values of every length are Java's groups one after another, the
    /// last cut (`fillBytesImpl`'s switch on the bytes left): each byte
    /// lies in its position's set and the bits Java's shifts share between
    /// neighbouring bytes agree, in every group including cut ones.
    #[test]
    fn values_are_java_groups_cut_to_the_length() {
        let mut rng = ValueRng::new(6);
        for len in (0..=40).chain([100, 1000, 4096]) {
            for _ in 0..200 {
                let mut value = vec![0u8; len];
                fill_random_value(&mut rng, &mut value);
                for (i, &b) in value.iter().enumerate() {
                    assert!(allowed(i, b), "len {len}: byte {i} is {b}");
                }
                for group in value.chunks(6) {
                    let v = |k: usize| group.get(k).map(|b| b - b' ');
                    let bit = |k: usize, bit: u32| v(k).map(|x| (x >> bit) & 1);
                    for (a, b) in [((1, 5), (2, 0)), ((2, 6), (3, 1)), ((4, 5), (5, 0))] {
                        if let (Some(x), Some(y)) = (bit(a.0, a.1), bit(b.0, b.1)) {
                            assert_eq!(x, y, "len {len}: shared bit {a:?}/{b:?}");
                        }
                    }
                }
            }
        }
    }

    /// Each position of a group draws its allowed bytes evenly (Java's
    /// masks of a uniform `int`): 2^17 groups give 2048 to 4096 expected
    /// draws per (position, byte) cell, so a stuck bit or a wrong mask
    /// (a mask of 31 where Java has 95, say) gives a
    /// statistic hundreds of times the critical value; the seed is fixed
    /// and the level is the suite's (see `generator::testutil`).
    #[test]
    fn each_position_draws_its_bytes_evenly() {
        use crate::generator::testutil::{assert_does_not_fit, assert_fits};
        let mut rng = ValueRng::new(0x5EED);
        let mut counts = vec![[0u64; 128]; 6];
        for _ in 0..1 << 16 {
            for (i, &b) in random_value_chunk(&mut rng).iter().enumerate() {
                counts[i % 6][usize::from(b)] += 1;
            }
        }
        for (position, counts) in counts.iter().enumerate() {
            let symbols: Vec<u8> = (0..128).filter(|&b| allowed(position, b)).collect();
            let observed: Vec<u64> = symbols.iter().map(|&b| counts[usize::from(b)]).collect();
            let outside: u64 = counts.iter().sum::<u64>() - observed.iter().sum::<u64>();
            assert_eq!(outside, 0, "position {position}");
            let even = vec![1.0 / symbols.len() as f64; symbols.len()];
            assert_fits(&observed, &even);
        }
        // Power: position 0's draws (32 bytes) read as position 2's
        // (64), which a mask of 31 where Java has 95 would give.
        let position0: Vec<u64> = (32..64).map(|b| counts[0][b]).chain([0; 32]).collect();
        assert_does_not_fit(&position0, &[1.0 / 64.0; 64]);
    }

    /// Compressibility is what the byte layout changes for storage
    /// figures: zlib (default level) on 4 KiB blocks of ten 100-byte
    /// fields per record gives 0.799 for Java's layout (Python's zlib on
    /// Java's algorithm over `random.getrandbits(32)`, seeds 0 to 3, all
    /// 0.7989) and 0.761 for uniform 64-symbol bytes. Over 1.1 MB the ratio
    /// varies by about 1e-4 between seeds, and miniz and zlib differ by
    /// less than 1%, so ±0.008 separates the two layouts with room.
    #[test]
    fn zlib_compresses_values_as_it_does_java_s() {
        use std::io::Write;
        let mut rng = ValueRng::new(42);
        let names: Vec<String> = (0..10).map(|i| format!("field{i}")).collect();
        let mut data = Vec::new();
        let mut record = ycsb_db::Record::new();
        for _ in 0..1100 {
            record.clear();
            record.push_fields_chunked(&names, 100, || random_value_chunk(&mut rng));
            for field in record.iter() {
                data.extend_from_slice(field.value);
            }
        }
        let (mut original, mut compressed) = (0usize, 0usize);
        for block in data.chunks_exact(4096) {
            let mut encoder =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(block).unwrap();
            original += block.len();
            compressed += encoder.finish().unwrap().len();
        }
        let ratio = compressed as f64 / original as f64;
        assert!((ratio - 0.799).abs() < 0.008, "zlib ratio {ratio:.4}");
    }

    /// The packed group is the chunk, with two zero bytes above it, from
    /// the same stream position: packed records keep every byte.
    #[test]
    fn packed_groups_are_the_chunks() {
        let (mut a, mut b) = (ValueRng::new(77), ValueRng::new(77));
        for _ in 0..10_000 {
            let word = random_value_group(&mut a).to_le_bytes();
            assert_eq!(word[..6], random_value_chunk(&mut b));
            assert_eq!(word[6..], [0, 0]);
        }
    }

    #[test]
    fn value_streams_with_different_seeds_differ() {
        let mut a = ValueRng::new(1);
        let mut b = ValueRng::new(2);
        let (x, y): (Vec<u64>, Vec<u64>) = (0..4).map(|_| (a.next_u64(), b.next_u64())).unzip();
        assert_ne!(x, y);
        let mut buf = [0u8; 13];
        a.fill_bytes(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
    }

    #[test]
    fn deterministic_values_match_java() {
        // Produced by Java YCSB's buildDeterministicValue on a JVM.
        let mut out = Vec::new();
        build_deterministic_value("user6284781860667377211", "field0", 100, &mut out);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:-169193395:-1039977118:-10"
        );
        build_deterministic_value("user1", "field9", 37, &mut out);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "user1:field9:-1268390937:701431326:16"
        );
        build_deterministic_value("user8517097267634966620", "field3", 1000, &mut out);
        let java_hash = out.iter().fold(0i32, |h, &b| java_hash_step(h, b));
        assert_eq!(java_hash, 1477606726);
        assert_eq!(out.len(), 1000);
        build_deterministic_value("user1", "field0", 3, &mut out);
        assert_eq!(out, b"use");
    }

    #[test]
    fn format_i32_extremes() {
        let mut b = [0u8; 12];
        assert_eq!(format_i32(i32::MIN, &mut b), b"-2147483648");
        assert_eq!(format_i32(0, &mut b), b"0");
        assert_eq!(format_i32(42, &mut b), b"42");
    }
}
