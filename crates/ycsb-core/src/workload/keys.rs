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
pub fn build_key_name(number: u64, order: KeyOrder, zero_padding: usize, out: &mut String) {
    let number = match order {
        KeyOrder::Hashed => fnvhash64(number),
        KeyOrder::Ordered => number,
    };
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = number;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    out.clear();
    out.push_str(KEY_PREFIX);
    for _ in digits.len()..zero_padding {
        out.push('0');
    }
    // The digits are ASCII, so this cannot fail.
    out.push_str(std::str::from_utf8(digits).unwrap_or_default());
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
    }

    #[test]
    fn buffer_is_reused() {
        let mut buf = String::from("something long that is replaced");
        build_key_name(7, KeyOrder::Ordered, 3, &mut buf);
        assert_eq!(buf, "user007");
    }
}
