//! How records and keys travel over HTTP.
//!
//! A record is one value: the [`ycsb_db::codec`] encoding of its fields
//! (name and value lengths as varints, then the bytes). Where the value
//! must be text (a query string, a line of simpleleveldb's `format=txt`
//! output), that encoding is written in unpadded base64url (RFC 4648 §5):
//! its alphabet (`A-Z a-z 0-9 - _`) needs no percent-escaping in a URL and
//! contains neither `,` nor a line break, so it is both compact (4/3 of
//! the binary size, against up to 3× for percent-escaped bytes) and safe in
//! comma-separated lines. Where the value is a request or response body
//! (WebDAV), the binary encoding is sent as it is.
//!
//! Every function appends to a caller's buffer, so that a thread reusing
//! its buffers allocates nothing per operation.

use ycsb_db::{codec, Fields, Record};

const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A value that is not valid text or binary record encoding.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A base64url text with a character outside the alphabet or an
    /// impossible length.
    #[error("invalid base64url value at byte {offset}")]
    Base64 {
        /// Where in the text decoding failed.
        offset: usize,
    },
    /// Bytes that are not a record encoding.
    #[error(transparent)]
    Record(#[from] codec::DecodeError),
}

/// Appends the unpadded base64url encoding of `bytes` to `out`.
pub fn base64url_encode(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        out.extend_from_slice(&[
            BASE64URL[(n >> 18) as usize & 63],
            BASE64URL[(n >> 12) as usize & 63],
            BASE64URL[(n >> 6) as usize & 63],
            BASE64URL[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend_from_slice(&[
                BASE64URL[(n >> 18) as usize],
                BASE64URL[(n >> 12) as usize & 63],
            ]);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.extend_from_slice(&[
                BASE64URL[(n >> 18) as usize],
                BASE64URL[(n >> 12) as usize & 63],
                BASE64URL[(n >> 6) as usize & 63],
            ]);
        }
        _ => {}
    }
}

fn base64url_digit(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => return None,
    } as u32)
}

/// Appends the bytes of the base64url text `text` to `out`. Padding (`=`)
/// at the end is accepted, so that a padded value written by another tool
/// also decodes.
///
/// # Errors
///
/// [`ValueError::Base64`] at the first character outside the alphabet, or
/// for a length no encoding has; `out` may then hold a prefix.
pub fn base64url_decode(text: &[u8], out: &mut Vec<u8>) -> Result<(), ValueError> {
    let trimmed = match text.iter().rposition(|&c| c != b'=') {
        Some(last) if text.len() - last - 1 <= 2 => &text[..=last],
        Some(_) => return Err(ValueError::Base64 { offset: text.len() }),
        None if text.is_empty() => text,
        None => return Err(ValueError::Base64 { offset: 0 }),
    };
    if trimmed.len() % 4 == 1 {
        return Err(ValueError::Base64 {
            offset: trimmed.len(),
        });
    }
    out.reserve(trimmed.len() / 4 * 3 + 2);
    let digit = |i: usize| base64url_digit(trimmed[i]).ok_or(ValueError::Base64 { offset: i });
    let mut i = 0;
    while i + 4 <= trimmed.len() {
        let n = (digit(i)? << 18) | (digit(i + 1)? << 12) | (digit(i + 2)? << 6) | digit(i + 3)?;
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
        i += 4;
    }
    match trimmed.len() - i {
        2 => {
            let n = (digit(i)? << 18) | (digit(i + 1)? << 12);
            out.push((n >> 16) as u8);
        }
        3 => {
            let n = (digit(i)? << 18) | (digit(i + 1)? << 12) | (digit(i + 2)? << 6);
            out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8]);
        }
        _ => {}
    }
    Ok(())
}

/// Appends the binary encoding of `record` to `out`.
pub fn encode_record(record: &Record, out: &mut Vec<u8>) {
    codec::encode(record, out);
}

/// Appends the base64url text encoding of `record` to `out`, using
/// `scratch` (cleared first) for the binary form.
pub fn encode_record_text(record: &Record, scratch: &mut Vec<u8>, out: &mut Vec<u8>) {
    scratch.clear();
    codec::encode(record, scratch);
    base64url_encode(scratch, out);
}

/// Decodes a binary record encoding into `out`, keeping the fields that
/// `fields` selects.
///
/// # Errors
///
/// [`ValueError::Record`] when `bytes` is not a record encoding.
pub fn decode_record(bytes: &[u8], fields: Fields<'_>, out: &mut Record) -> Result<(), ValueError> {
    codec::decode(bytes, fields, out)?;
    Ok(())
}

/// Decodes a base64url text record encoding into `out`, using `scratch`
/// (cleared first) for the binary form.
///
/// # Errors
///
/// [`ValueError`] when `text` is not base64url or not a record encoding.
pub fn decode_record_text(
    text: &[u8],
    fields: Fields<'_>,
    scratch: &mut Vec<u8>,
    out: &mut Record,
) -> Result<(), ValueError> {
    scratch.clear();
    base64url_decode(text, scratch)?;
    codec::decode(scratch, fields, out)?;
    Ok(())
}

fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

/// Appends `bytes` to `out` percent-encoded for a URL path segment or a
/// query value: every byte outside RFC 3986's unreserved set becomes
/// `%XX`, so `/`, `&`, `=`, `+`, `?` and `#` in a key cannot change the
/// URL's structure.
pub fn percent_encode(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &c in bytes {
        if is_unreserved(c) {
            out.push(c);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        }
    }
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Appends the percent-decoded `text` to `out`. With `plus_is_space`
/// (query strings, as HTML forms and libevent's simpleleveldb write them)
/// `+` decodes to a space.
///
/// # Errors
///
/// The offset of a `%` not followed by two hexadecimal digits.
pub fn percent_decode(text: &[u8], plus_is_space: bool, out: &mut Vec<u8>) -> Result<(), usize> {
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'%' => {
                let hi = text.get(i + 1).copied().and_then(hex_digit);
                let lo = text.get(i + 2).copied().and_then(hex_digit);
                match (hi, lo) {
                    (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                    _ => return Err(i),
                }
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        base64url_encode(bytes, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn base64url_matches_rfc4648_vectors() {
        // RFC 4648 §10 test vectors, unpadded.
        let vectors = [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in vectors {
            assert_eq!(b64(plain.as_bytes()), coded);
            let mut back = Vec::new();
            base64url_decode(coded.as_bytes(), &mut back).unwrap();
            assert_eq!(back, plain.as_bytes());
        }
        assert_eq!(b64(&[0xfb, 0xff]), "-_8");
        let mut back = Vec::new();
        base64url_decode(b"Zm8=", &mut back).unwrap();
        assert_eq!(back, b"fo");
    }

    #[test]
    fn base64url_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for len in 0..40 {
            let mut back = Vec::new();
            base64url_decode(b64(&all[..len]).as_bytes(), &mut back).unwrap();
            assert_eq!(back, &all[..len]);
        }
    }

    #[test]
    fn base64url_rejects_bad_text() {
        let mut out = Vec::new();
        assert_eq!(
            base64url_decode(b"Zm9v!A", &mut out),
            Err(ValueError::Base64 { offset: 4 })
        );
        assert!(base64url_decode(b"Z", &mut out).is_err());
        assert!(base64url_decode(b"Zm9+", &mut out).is_err());
        assert!(base64url_decode(b"Zm===", &mut out).is_err());
        assert!(base64url_decode(b"==", &mut out).is_err());
    }

    #[test]
    fn record_text_round_trip() {
        let mut r = Record::new();
        r.push("field0", b"a,b\n&c=%");
        r.push("field1", &[0, 255, 10]);
        let (mut scratch, mut text) = (Vec::new(), Vec::new());
        encode_record_text(&r, &mut scratch, &mut text);
        assert!(text.iter().all(|&c| is_unreserved(c)));
        let mut back = Record::new();
        decode_record_text(&text, Fields::All, &mut scratch, &mut back).unwrap();
        assert_eq!(back, r);
        let mut bad = Record::new();
        assert!(matches!(
            decode_record_text(b"AAAB", Fields::All, &mut scratch, &mut bad),
            Err(ValueError::Record(_))
        ));
    }

    #[test]
    fn percent_round_trip_and_errors() {
        let key = "user 1/2?a=b&c+d#é";
        let mut enc = Vec::new();
        percent_encode(key.as_bytes(), &mut enc);
        assert_eq!(enc, b"user%201%2F2%3Fa%3Db%26c%2Bd%23%C3%A9");
        let mut dec = Vec::new();
        percent_decode(&enc, true, &mut dec).unwrap();
        assert_eq!(dec, key.as_bytes());
        dec.clear();
        percent_decode(b"a+b", true, &mut dec).unwrap();
        assert_eq!(dec, b"a b");
        dec.clear();
        percent_decode(b"a+b", false, &mut dec).unwrap();
        assert_eq!(dec, b"a+b");
        assert_eq!(percent_decode(b"ab%4", false, &mut dec), Err(2));
        assert_eq!(percent_decode(b"%zz", false, &mut dec), Err(0));
    }
}
