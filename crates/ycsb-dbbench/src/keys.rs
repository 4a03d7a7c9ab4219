//! db_bench's keys: key numbers as zero-padded decimal (LevelDB's `%016d`).
//!
//! Formatted by hand from a pair table: `write!` with a width costs as much
//! per key as a memtable insert's comparisons (a profile showed it at 1.6 %
//! of a fillseq), and this runs once per operation.

/// Writes `n` as decimal, zero-padded to `width` digits (`%0*llu`).
#[inline]
pub(crate) fn make_key(buf: &mut String, n: u64, width: usize) {
    // All 20 digit places are written, so the zero padding up to 20 places
    // is already there: one copy into `buf`.
    let mut digits = [b'0'; 20];
    write_20_digits(n, &mut digits);
    let start = digits.len() - decimal_digits(n);
    buf.clear();
    let from = if width > digits.len() {
        buf.extend(std::iter::repeat_n('0', width - digits.len()));
        0
    } else {
        start.min(digits.len() - width)
    };
    // SAFETY: `digits` holds only the ASCII digits written above. (The
    // UTF-8 check cost as much per key as the formatting.)
    buf.push_str(unsafe { std::str::from_utf8_unchecked(&digits[from..]) });
}

/// Writes `number` in decimal into all 20 places of `digits`, with
/// leading zeros. Three chunks of at most 8 digits that the CPU formats in
/// parallel, where the usual formatting divides the whole number again for
/// every digit pair.
#[inline(always)]
fn write_20_digits(number: u64, digits: &mut [u8; 20]) {
    let low = (number % 100_000_000) as u32;
    let rest = number / 100_000_000;
    let middle = (rest % 100_000_000) as u32;
    let high = (rest / 100_000_000) as u32; // below 10^4
    write_4_digits(high, &mut digits[..4]);
    write_8_digits(middle, &mut digits[4..12]);
    write_8_digits(low, &mut digits[12..]);
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

#[inline]
fn write_8_digits(v: u32, out: &mut [u8]) {
    write_4_digits(v / 10_000, &mut out[..4]);
    write_4_digits(v % 10_000, &mut out[4..8]);
}

/// The number of decimal digits of `v` (1 for 0).
#[inline]
fn decimal_digits(v: u64) -> usize {
    // The bit length gives the digit count or one less (1233/4096 is just
    // above log10(2)); one comparison settles which.
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

#[cfg(test)]
mod tests {
    use super::*;

    // make_key itself is checked against `format!` in the crate's tests.
    #[test]
    fn decimal_digits_match_the_formatted_length() {
        let mut v = 1u64;
        for _ in 0..19 {
            for w in [v - 1, v, v + 1] {
                assert_eq!(decimal_digits(w), w.to_string().len(), "{w}");
            }
            v *= 10;
        }
        assert_eq!(decimal_digits(u64::MAX), 20);
    }
}
