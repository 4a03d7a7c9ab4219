//! The compact value encoding embedded engines store a record in.
//!
//! A record is one engine value: for each field, the name's length as a
//! LEB128 varint, the name, the value's length as a varint, the value.
//! Ten 100-byte fields cost 10 × (1 + 6 + 1) = 80 bytes of framing.

use crate::record::{Fields, Record};

/// A stored value that is not a valid encoded record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("corrupt record encoding at byte {offset}: {reason}")]
pub struct DecodeError {
    /// Where in the value decoding failed.
    pub offset: usize,
    /// What was wrong.
    pub reason: &'static str,
}

fn put_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], pos: &mut usize) -> Result<usize, DecodeError> {
    let mut value: usize = 0;
    for shift in (0..64).step_by(7) {
        let Some(&b) = bytes.get(*pos) else {
            return Err(DecodeError {
                offset: *pos,
                reason: "truncated length",
            });
        };
        *pos += 1;
        value |= ((b & 0x7f) as usize) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(DecodeError {
        offset: *pos,
        reason: "length varint too long",
    })
}

fn take<'a>(bytes: &'a [u8], pos: &mut usize, len: usize) -> Result<&'a [u8], DecodeError> {
    let end = pos
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or(DecodeError {
            offset: *pos,
            reason: "length past the end of the value",
        })?;
    let slice = &bytes[*pos..end];
    *pos = end;
    Ok(slice)
}

/// Appends the encoding of `record` to `out` (which is not cleared, so a
/// caller can reuse one buffer across operations).
pub fn encode(record: &Record, out: &mut Vec<u8>) {
    for field in record.iter() {
        put_varint(out, field.name.len());
        out.extend_from_slice(field.name.as_bytes());
        put_varint(out, field.value.len());
        out.extend_from_slice(field.value);
    }
}

/// Decodes `bytes` into `out`, keeping only the fields `fields` selects.
///
/// # Errors
///
/// [`DecodeError`] when `bytes` is not a valid encoding; `out` may then hold
/// the fields decoded before the error.
pub fn decode(bytes: &[u8], fields: Fields<'_>, out: &mut Record) -> Result<(), DecodeError> {
    let mut pos = 0;
    while pos < bytes.len() {
        let name_len = get_varint(bytes, &mut pos)?;
        let name_at = pos;
        let name = take(bytes, &mut pos, name_len)?;
        let value_len = get_varint(bytes, &mut pos)?;
        let value = take(bytes, &mut pos, value_len)?;
        let name = std::str::from_utf8(name).map_err(|_| DecodeError {
            offset: name_at,
            reason: "field name is not UTF-8",
        })?;
        if fields.contains(name) {
            out.push(name, value);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_selection() {
        let mut r = Record::new();
        r.push("field0", b"abc");
        r.push("field1", &[7u8; 300]);
        r.push("", b"");
        let mut buf = vec![0xEE];
        encode(&r, &mut buf);
        let mut back = Record::new();
        decode(&buf[1..], Fields::All, &mut back).unwrap();
        assert_eq!(back, r);
        let only = vec!["field1".to_string()];
        let mut some = Record::new();
        decode(&buf[1..], Fields::Only(&only), &mut some).unwrap();
        assert_eq!(some.len(), 1);
        assert_eq!(some.get("field1").unwrap().len(), 300);
    }

    #[test]
    fn corrupt_values_are_errors_not_panics() {
        let mut r = Record::new();
        r.push("field0", b"value");
        let mut buf = Vec::new();
        encode(&r, &mut buf);
        for cut in 0..buf.len() {
            let mut out = Record::new();
            let res = decode(&buf[..cut], Fields::All, &mut out);
            assert!(cut == 0 || res.is_err(), "prefix of {cut} bytes decoded");
        }
        let mut out = Record::new();
        assert!(decode(&[0xff; 12], Fields::All, &mut out).is_err());
        assert!(decode(&[1, 0xff, 0], Fields::All, &mut out).is_err());
    }
}
