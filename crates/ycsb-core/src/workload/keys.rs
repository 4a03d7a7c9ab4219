//! Key names, bit-identical to Java YCSB's `CoreWorkload.buildKeyName`.

use crate::generator::fnvhash64;

/// The prefix of every generated key, as in Java YCSB.
pub const KEY_PREFIX: &str = "user";

/// How key numbers become key names (`insertorder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// The number is hashed with FNV-1a 64 first (Java's default), which
    /// spreads consecutive inserts over the key space.
    Hashed,
    /// The number is used as it is.
    Ordered,
}

/// Writes the key name of `number` into `out` (cleared first), as Java's
/// `buildKeyName`: `user` followed by the (hashed) number in decimal,
/// left-padded with zeros to `zero_padding` digits.
///
/// Writing into a reused `String` keeps key building free of allocation.
/// This runs once per operation: the digits come from three independent
/// 8-digit chunks (so the CPU works on them in parallel, where the usual
/// formatting divides the whole number again for every pair of digits),
/// and the key is assembled in one copy.
pub fn build_key_name(number: u64, order: KeyOrder, zero_padding: usize, out: &mut String) {
    out.clear();
    out.push_str(KEY_PREFIX);
    if zero_padding > 20 {
        for _ in 20..zero_padding {
            out.push('0');
        }
    }
    let name = KeyName::new(number, order, zero_padding);
    out.push_str(&name.as_str()[KEY_PREFIX.len()..]);
}

/// A key name of at most 20 digit places, formatted into a fixed buffer:
/// what [`build_key_name`] writes when `zero_padding` is 20 or less (more
/// padding only adds zeros in front of the digits).
#[derive(Clone, Copy)]
pub(crate) struct KeyName {
    /// "user" then 20 digit places.
    bytes: [u8; KEY_PREFIX.len() + 20],
    /// Where the name starts in `bytes`: the prefix is moved up to touch
    /// the first digit used.
    start: u8,
}

impl KeyName {
    /// Replaces this name with that of `number`, written in place: a
    /// name built on the stack and then copied was read back in 16-byte
    /// loads across the smaller stores that wrote it, which the CPU cannot
    /// forward (a stall per key).
    #[inline(always)]
    pub(crate) fn set(&mut self, number: u64, order: KeyOrder, zero_padding: usize) {
        let number = match order {
            KeyOrder::Hashed => fnvhash64(number),
            KeyOrder::Ordered => number,
        };
        self.set_digits(number, zero_padding);
    }

    /// Replaces this name with `user` and the decimal digits of `digits`
    /// (the key number already hashed when the order says so), padded to
    /// `zero_padding` digits (at most 20 count).
    #[inline(always)]
    pub(crate) fn set_digits(&mut self, number: u64, zero_padding: usize) {
        // All 20 digit places are written, and the prefix just before the
        // first one used, so nothing of the previous name shows through.
        let digits: &mut [u8; 20] = (&mut self.bytes[KEY_PREFIX.len()..])
            .try_into()
            .expect("20 digit places");
        write_20_digits(number, digits);
        let used = decimal_digits(number).max(zero_padding.min(20));
        let start = 20 - used;
        self.bytes[start..start + KEY_PREFIX.len()].copy_from_slice(KEY_PREFIX.as_bytes());
        self.start = start as u8;
    }

    /// The name of `number`, padded to `zero_padding` digits (at most 20
    /// count).
    #[inline(always)]
    pub(crate) fn new(number: u64, order: KeyOrder, zero_padding: usize) -> Self {
        let mut name = KeyName {
            bytes: [b'0'; KEY_PREFIX.len() + 20],
            start: 0,
        };
        name.set(number, order, zero_padding);
        name
    }

    /// The name.
    #[inline]
    pub(crate) fn as_str(&self) -> &str {
        // SAFETY: `start` is at most 20 (`set_digits` sets it to 20 minus
        // at least one digit, `new` to 0), inside `bytes`; and `bytes`
        // holds only ASCII: the prefix and digits written from `PAIRS`.
        // (Checking either, every operation, would cost a tenth of an
        // operation against the `basic` store.)
        unsafe { std::str::from_utf8_unchecked(self.bytes.get_unchecked(self.start as usize..)) }
    }
}

/// Writes `number` in decimal into all 20 places of `digits`, with
/// leading zeros. The number is split into chunks of at most 8 digits
/// that the CPU formats in parallel, where the usual formatting divides
/// the whole number again for every digit pair: on x86-64 the low 16
/// digits in SSE2 lanes (a third of the instructions of a pair table,
/// which took a sixth of a read against the `basic` store), elsewhere and
/// for the top 4 digits from a pair table.
#[inline(always)]
pub fn write_20_digits(number: u64, digits: &mut [u8; 20]) {
    const E16: u64 = 10_000_000_000_000_000;
    let high = (number / E16) as u32; // below 1845
    let low = number % E16;
    let (top, rest) = digits.split_at_mut(4);
    write_4_digits(high, top);
    let rest: &mut [u8; 16] = rest.try_into().expect("16 digit places");
    write_16_digits(low, rest);
}

/// Writes `v` (below 10^16) in decimal into all 16 places of `out`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn write_16_digits(v: u64, out: &mut [u8; 16]) {
    use std::arch::x86_64::{_mm_add_epi8, _mm_packus_epi16, _mm_set1_epi8, _mm_storeu_si128};
    let (high, low) = ((v / 100_000_000) as u32, (v % 100_000_000) as u32);
    // SAFETY: SSE2 is part of every x86-64 CPU; `out` is 16 writable
    // bytes, and the store is unaligned.
    unsafe {
        // Each word of the two halves is one digit (0 to 9), so packing
        // to bytes saturates nothing.
        let digits = _mm_packus_epi16(eight_digit_lanes(high), eight_digit_lanes(low));
        let ascii = _mm_add_epi8(digits, _mm_set1_epi8(b'0' as i8));
        _mm_storeu_si128(out.as_mut_ptr().cast(), ascii);
    }
}

/// The 8 decimal digits of `v` (below 10^8), most significant first, one
/// per 16-bit lane: `v` divided by 10^4 with a multiplication, each half
/// spread over four lanes and divided there by 10^3, 10^2, 10^1 and 10^0
/// (multiplications by reciprocals, exact below 10^4), and each lane
/// minus ten times the lane before it.
///
/// # Safety
///
/// The CPU must have SSE2, as every x86-64 CPU has.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn eight_digit_lanes(v: u32) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::{
        _mm_cvtsi32_si128, _mm_mul_epu32, _mm_mulhi_epu16, _mm_mullo_epi16, _mm_set1_epi16,
        _mm_set1_epi32, _mm_setr_epi16, _mm_slli_epi64, _mm_srli_epi64, _mm_sub_epi16,
        _mm_sub_epi32, _mm_unpacklo_epi16, _mm_unpacklo_epi32,
    };
    // ⌈2^45 / 10^4⌉: (v · this) >> 45 is v / 10^4 for every v below 10^8.
    const DIV_10000: i32 = 0xD1B7_1759_u32 as i32;
    // SAFETY: the caller's (SSE2).
    unsafe {
        let whole = _mm_cvtsi32_si128(v as i32);
        let high = _mm_srli_epi64(_mm_mul_epu32(whole, _mm_set1_epi32(DIV_10000)), 45);
        let low = _mm_sub_epi32(whole, _mm_mul_epu32(high, _mm_set1_epi32(10_000)));
        // [high, low, 0, ...] times 4, then [h, h, h, h, l, l, l, l].
        let pair = _mm_slli_epi64(_mm_unpacklo_epi16(high, low), 2);
        let pair = _mm_unpacklo_epi16(pair, pair);
        let spread = _mm_unpacklo_epi32(pair, pair);
        // (4x · m) >> 16 >> s = x / 10^k: m, s = 8389, 9 (10^3); 5243, 5
        // (10^2); 13108, 3 (10); 32768, 1 (1). The second high multiply
        // by 2^(16-s) is the shift.
        let reciprocals = _mm_setr_epi16(8389, 5243, 13108, i16::MIN, 8389, 5243, 13108, i16::MIN);
        let shifts = _mm_setr_epi16(
            1 << 7,
            1 << 11,
            1 << 13,
            i16::MIN,
            1 << 7,
            1 << 11,
            1 << 13,
            i16::MIN,
        );
        // [a, ab, abc, abcd, e, ef, efg, efgh] for the digits abcdefgh.
        // Opaque to the optimiser: seen as constant powers of two, the
        // multiply became per-lane shifts, which SSE2 lacks and which
        // took four times the instructions.
        let shifts = std::hint::black_box(shifts);
        let prefixes = _mm_mulhi_epu16(_mm_mulhi_epu16(spread, reciprocals), shifts);
        let tens = _mm_slli_epi64(_mm_mullo_epi16(prefixes, _mm_set1_epi16(10)), 16);
        _mm_sub_epi16(prefixes, tens)
    }
}

/// Writes `v` (below 10^16) in decimal into all 16 places of `out`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn write_16_digits(v: u64, out: &mut [u8; 16]) {
    write_8_digits((v / 100_000_000) as u32, &mut out[..8]);
    write_8_digits((v % 100_000_000) as u32, &mut out[8..]);
}

/// "00" to "99".
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

#[inline]
fn write_2_digits(v: u32, out: &mut [u8]) {
    let at = v as usize * 2;
    out[..2].copy_from_slice(&PAIRS[at..at + 2]);
}

#[inline]
fn write_4_digits(v: u32, out: &mut [u8]) {
    write_2_digits(v / 100, &mut out[..2]);
    write_2_digits(v % 100, &mut out[2..4]);
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn write_8_digits(v: u32, out: &mut [u8]) {
    write_4_digits(v / 10_000, &mut out[..4]);
    write_4_digits(v % 10_000, &mut out[4..8]);
}

/// The number of decimal digits of `v` (1 for 0).
#[inline]
pub fn decimal_digits(v: u64) -> usize {
    // The bit length gives the digit count or one less (1233/4096 is just
    // above log10(2)); one comparison settles which. Shorter than
    // `ilog10`'s general path, and this runs for every key.
    const POWERS: [u64; 20] = {
        let mut powers = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            powers[i] = powers[i - 1] * 10;
            i += 1;
        }
        powers
    };
    let v = v | 1;
    let bits = 64 - v.leading_zeros() as usize;
    let guess = (bits * 1233) >> 12;
    guess + usize::from(v >= POWERS[guess])
}

/// The key name of `number`, allocating; see [`build_key_name`].
pub fn key_name(number: u64, order: KeyOrder, zero_padding: usize) -> String {
    let mut out = String::with_capacity(KEY_PREFIX.len() + 20);
    build_key_name(number, order, zero_padding, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Produced by Java YCSB's `buildKeyName` logic (FNV-1a 64, Math.abs,
    /// "user" + zero padding) run on a JVM.
    const JAVA_KEYS: &[(u64, &str, &str, &str)] = &[
        (
            0,
            "user6284781860667377211",
            "user06284781860667377211",
            "user0000000000",
        ),
        (
            1,
            "user8517097267634966620",
            "user08517097267634966620",
            "user0000000001",
        ),
        (
            2,
            "user1820151046732198393",
            "user01820151046732198393",
            "user0000000002",
        ),
        (
            3,
            "user4052466453699787802",
            "user04052466453699787802",
            "user0000000003",
        ),
        (
            1000,
            "user5952875239596136740",
            "user05952875239596136740",
            "user0000001000",
        ),
        (
            123456789,
            "user2350796791908741607",
            "user02350796791908741607",
            "user0123456789",
        ),
    ];

    #[test]
    fn keys_match_java_bit_for_bit() {
        for &(n, hashed, hashed_padded, ordered_padded) in JAVA_KEYS {
            assert_eq!(key_name(n, KeyOrder::Hashed, 1), hashed, "hashed {n}");
            assert_eq!(
                key_name(n, KeyOrder::Hashed, 20),
                hashed_padded,
                "padded {n}"
            );
            assert_eq!(
                key_name(n, KeyOrder::Ordered, 10),
                ordered_padded,
                "ordered {n}"
            );
        }
        assert_eq!(key_name(42, KeyOrder::Ordered, 1), "user42");
        assert_eq!(key_name(42, KeyOrder::Ordered, 0), "user42");
        assert_eq!(
            key_name(u64::MAX, KeyOrder::Ordered, 1),
            "user18446744073709551615"
        );
        assert_eq!(key_name(0, KeyOrder::Ordered, 1), "user0");
        assert_eq!(key_name(0, KeyOrder::Ordered, 0), "user0");
        assert_eq!(key_name(7, KeyOrder::Ordered, 22), format!("user{:022}", 7));
        assert_eq!(
            key_name(u64::MAX, KeyOrder::Ordered, 24),
            "user000018446744073709551615"
        );
    }

    #[test]
    fn every_digit_count_and_padding_matches_std_formatting() {
        let mut out = String::new();
        let mut v = 1u64;
        let mut numbers = vec![0, u64::MAX, u64::MAX - 1, (1 << 63) + 12345];
        for _ in 0..20 {
            numbers.extend([v - 1, v, v + 1, v.wrapping_mul(7) / 3]);
            v = v.saturating_mul(10);
        }
        for &n in &numbers {
            for pad in [0, 1, 5, 19, 20, 21, 30] {
                build_key_name(n, KeyOrder::Ordered, pad, &mut out);
                assert_eq!(out, format!("user{n:0pad$}"), "{n} padded to {pad}");
            }
        }
    }

    /// Every chunk boundary and a spread of numbers of every width format
    /// as `std` does.
    #[test]
    fn twenty_digits_match_std_formatting() {
        let mut numbers = vec![0, 1, 9, 10, 99_999_999, 100_000_000, u64::MAX];
        let mut power = 1u64;
        for _ in 0..20 {
            numbers.extend([power - 1, power, power + 1, power.wrapping_mul(7) / 3]);
            power = power.saturating_mul(10);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            numbers.push(x >> (x % 64));
        }
        let mut digits = [0u8; 20];
        for n in numbers {
            write_20_digits(n, &mut digits);
            assert_eq!(std::str::from_utf8(&digits).unwrap(), format!("{n:020}"));
        }
    }

    #[test]
    fn decimal_digits_match_the_formatted_length() {
        let mut v = 1u64;
        for _ in 0..20 {
            for n in [
                v - 1,
                v,
                v + 1,
                v.saturating_mul(5),
                v.saturating_mul(10) - 1,
            ] {
                assert_eq!(decimal_digits(n), n.to_string().len(), "{n}");
            }
            v = v.saturating_mul(10);
        }
        assert_eq!(decimal_digits(u64::MAX), 20);
    }

    /// A name set in place over a longer or shorter one is exactly the
    /// name built afresh.
    #[test]
    fn names_set_in_place_leave_nothing_of_the_previous_one() {
        let mut name = KeyName::new(u64::MAX, KeyOrder::Ordered, 20);
        for (number, order, padding) in [
            (7, KeyOrder::Ordered, 1),
            (u64::MAX, KeyOrder::Ordered, 0),
            (3, KeyOrder::Ordered, 12),
            (0, KeyOrder::Hashed, 1),
            (42, KeyOrder::Ordered, 0),
        ] {
            name.set(number, order, padding);
            assert_eq!(name.as_str(), key_name(number, order, padding));
        }
    }

    #[test]
    fn buffer_is_reused() {
        let mut buf = String::from("something long that is replaced");
        build_key_name(7, KeyOrder::Ordered, 3, &mut buf);
        assert_eq!(buf, "user007");
    }
}
