//! db_bench's keys: key numbers as zero-padded decimal (LevelDB's `%016d`).
//!
//! Formatted with the workload's own digit writer (ycsb-core's pair-table
//! formatting): `write!` with a width costs as much per key as a memtable
//! insert's comparisons (a profile showed it at 1.6 % of a fillseq), and
//! this runs once per operation.

use ycsb_core::internals::{decimal_digits, write_20_digits};

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
