//! The codec's wire format, field by field: varint lengths, the framing
//! of one field, and a checked encoded record read in place. The codec
//! (`codec.rs`) builds its encode, decode and merge on it; a [`Record`](crate::Record)
//! (`record.rs`) frames its fields with it.
//!
//! [`Record`]: crate::Record

use crate::field::Field;

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

/// Appends `v` as a LEB128 varint: one byte (every length below 128)
/// inline, longer ones in [`put_varint_slow`]. Every field pushed writes
/// two; as a call each they cost a fifth of an update's framing.
#[inline(always)]
pub(crate) fn put_varint(out: &mut Vec<u8>, v: usize) {
    if v < 0x80 {
        out.push(v as u8);
    } else {
        put_varint_slow(out, v);
    }
}

#[inline(never)]
fn put_varint_slow(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`: one byte (every length below 128) inline,
/// longer ones in [`get_varint_slow`].
#[inline(always)]
pub(crate) fn get_varint(bytes: &[u8], pos: &mut usize) -> Result<usize, DecodeError> {
    match bytes.get(*pos) {
        Some(&b) if b < 0x80 => {
            *pos += 1;
            Ok(b as usize)
        }
        _ => get_varint_slow(bytes, pos),
    }
}

#[inline(never)]
pub(crate) fn get_varint_slow(bytes: &[u8], pos: &mut usize) -> Result<usize, DecodeError> {
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

#[inline(always)]
pub(crate) fn take<'a>(
    bytes: &'a [u8],
    pos: &mut usize,
    len: usize,
) -> Result<&'a [u8], DecodeError> {
    let start = *pos;
    match start.checked_add(len).and_then(|end| bytes.get(start..end)) {
        Some(slice) => {
            *pos = start + len;
            Ok(slice)
        }
        None => Err(DecodeError {
            offset: start,
            reason: "length past the end of the value",
        }),
    }
}

/// Whether `b` is ASCII, for the short strings field names are: two
/// overlapping word loads cover 4 to 16 bytes without a loop.
#[inline(always)]
pub(crate) fn is_ascii_short(b: &[u8]) -> bool {
    let n = b.len();
    // One load per word, not one per byte (an array built from four
    // indexed bytes compiles to four loads).
    let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let dword = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    match n {
        0..=3 => b.iter().all(|&c| c < 0x80),
        4..=7 => (word(0) | word(n - 4)) & 0x8080_8080 == 0,
        8..=16 => (dword(0) | dword(n - 8)) & 0x8080_8080_8080_8080 == 0,
        _ => b.is_ascii(),
    }
}

/// A stored field name as text. Names are ASCII in practice (`field0`…),
/// which [`is_ascii_short`] proves in a few instructions; anything else
/// goes through the full UTF-8 check.
#[inline(always)]
pub(crate) fn name_str(name: &[u8], offset: usize) -> Result<&str, DecodeError> {
    if is_ascii_short(name) {
        // SAFETY: every byte is below 0x80, and ASCII is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(name) });
    }
    std::str::from_utf8(name).map_err(|_| DecodeError {
        offset,
        reason: "field name is not UTF-8",
    })
}

/// One field of an encoded record, as borrowed slices of it.
pub(crate) struct RawField<'a> {
    pub(crate) name: &'a str,
    pub(crate) value: &'a [u8],
}

/// Reads the field at `*pos` and moves past it.
#[inline(always)]
pub(crate) fn next_field<'a>(
    bytes: &'a [u8],
    pos: &mut usize,
) -> Result<RawField<'a>, DecodeError> {
    let name_len = get_varint(bytes, pos)?;
    let name_at = *pos;
    let name = take(bytes, pos, name_len)?;
    let value_len = get_varint(bytes, pos)?;
    let value = take(bytes, pos, value_len)?;
    Ok(RawField {
        name: name_str(name, name_at)?,
        value,
    })
}

/// Where one valid field lies in an encoding: its name, and where the
/// next field starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldSpan {
    pub(crate) name_at: usize,
    pub(crate) name_len: usize,
    pub(crate) end: usize,
}

/// Checks the field at `pos` as [`next_field`] does and says where it lies,
/// without cutting out its value.
///
/// Every read ([`EncodedRecord::parse`]) and update ([`merge`]) walks a
/// record with this, so the common field takes a few instructions: a name
/// of up to 6 bytes (`field0`…`field9`) puts the field's two length bytes
/// and its name in the 8 bytes at `pos`, and one load shows all of them
/// below 0x80 (one-byte lengths, an ASCII name). Anything else takes
/// [`field_span_slow`].
#[inline(always)]
pub(crate) fn field_span(bytes: &[u8], pos: usize) -> Result<FieldSpan, DecodeError> {
    if let Some(window) = bytes.get(pos..pos + 8) {
        let word = u64::from_le_bytes(window.try_into().expect("8 bytes"));
        let name_len = window[0] as usize;
        // A table rather than a shift by a variable amount, which the
        // x86-64 baseline (no BMI2) can only do through `cl`.
        if let Some(&high_bits) = HIGH_BITS_OF_SHORT_FIELD.get(name_len) {
            if word & high_bits == 0 {
                let value_len = window[name_len + 1] as usize;
                let end = pos + name_len + 2 + value_len;
                if end <= bytes.len() {
                    return Ok(FieldSpan {
                        name_at: pos + 1,
                        name_len,
                        end,
                    });
                }
            }
        }
    }
    field_span_slow(bytes, pos)
}

/// Whether `bytes` is a valid encoding whose fields all have the first
/// field's shape: a name of the same length n ≤ 6, ASCII, and a value of
/// the same length v < 128 (every record YCSB writes with a constant
/// `fieldlength` of up to 127 bytes and `field0`…`field9`).
///
/// This accepts nothing the field-by-field walk of [`EncodedRecord::parse`]
/// would refuse, and is why a read's check is cheap: the walk finds each
/// field's position from the length stored in the one before, a chain of
/// dependent loads through every cache line of the value (each one a miss
/// when the engine has just brought the value in from memory), where here
/// the positions are the multiples of the first field's size, known before
/// any of the other fields is loaded, so the loads all go out at once. A
/// record of another shape is left to the walk.
#[inline(always)]
pub(crate) fn is_uniform_record(bytes: &[u8]) -> bool {
    uniform_stride(bytes).is_some()
}

/// [`is_uniform_record`]'s test, giving the size of each field (its two
/// length bytes, its name and its value) of a record that passes it: field
/// `i` then starts at `i` times that size.
#[inline(always)]
pub(crate) fn uniform_stride(bytes: &[u8]) -> Option<usize> {
    let shape = UniformShape::of(bytes)?;
    let stride = shape.stride;
    // The window of every field after the first, two fields a turn: the
    // loop's own count and test were half of it a field.
    let (mut all, mut any) = (shape.first, shape.first);
    let mut at = stride;
    while at + 2 * stride <= bytes.len() {
        // SAFETY: the 8 bytes at `at` and at `at + stride` end by
        // `at + stride + 8 <= at + 2 * stride`, within `bytes`.
        let (a, b) = unsafe { (window_at(bytes, at), window_at(bytes, at + stride)) };
        all &= a & b;
        any |= a | b;
        at += 2 * stride;
    }
    if at + stride <= bytes.len() {
        // SAFETY: the 8 bytes at `at` end at `at + 8 <= at + stride`.
        let a = unsafe { window_at(bytes, at) };
        all &= a;
        any |= a;
        at += stride;
    }
    shape.holds(all, any, at, bytes.len()).then_some(stride)
}

/// The 8 bytes at `at`, as a little-endian word.
///
/// # Safety
///
/// `at + 8 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn window_at(bytes: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= bytes.len());
    // SAFETY: the caller's promise.
    u64::from_le(unsafe { bytes.as_ptr().add(at).cast::<u64>().read_unaligned() })
}

/// The shape of a record's first field, which [`uniform_stride`] asks every
/// other field to have: the 8 bytes where each field starts (its window)
/// hold the same two length bytes, and the high bit of none of the name's
/// length, the name and the value's length is set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UniformShape {
    /// The size of a field: its two length bytes, its name and its value.
    pub(crate) stride: usize,
    /// The first field's window.
    first: u64,
    /// The high bits of the window's bytes that must be clear, and the
    /// bits of its two length bytes.
    checked: u64,
    /// What every window must hold under `checked`: the first window's
    /// length bytes, their high bits clear.
    lengths: u64,
}

impl UniformShape {
    /// The shape of the first field of `bytes`, if it can be one (a name of
    /// at most 6 bytes and a field of at least 8), with nothing yet
    /// checked of the rest.
    #[inline(always)]
    pub(crate) fn of(bytes: &[u8]) -> Option<Self> {
        let first = bytes.get(..8)?;
        let first = u64::from_le_bytes(first.try_into().expect("8 bytes"));
        let name_len = (first & 0xff) as usize;
        let high_bits = *HIGH_BITS_OF_SHORT_FIELD.get(name_len)?;
        // The name's length byte and the value's length byte.
        let length_bytes = 0xff | (0xff << (8 * (name_len + 1)));
        let stride = name_len + 2 + ((first >> (8 * (name_len + 1))) & 0xff) as usize;
        // Each field's 8-byte window must lie inside the value: true of the
        // last one when a field is at least 8 bytes long.
        if stride < 8 {
            return None;
        }
        Some(UniformShape {
            stride,
            first,
            checked: high_bits | length_bytes,
            lengths: first & length_bytes & !high_bits,
        })
    }

    /// Whether a record of `len` bytes has this shape, given `all` and
    /// `any`, the AND and the OR of the first window and every other
    /// field's, and `end`, where the field after the last one windowed
    /// starts. Every window holds `lengths` under `checked` exactly when
    /// their AND and their OR both do (a bit is the same in every window
    /// when it is in both). The first window is one of them, so its high
    /// bits are clear then too.
    #[inline(always)]
    pub(crate) fn holds(&self, all: u64, any: u64, end: usize, len: usize) -> bool {
        (all & self.checked == self.lengths) & (any & self.checked == self.lengths) & (end == len)
    }
}

/// For a name of `n` ≤ 6 bytes, the bytes holding the name's length and
/// the name: what identifies a field in the 8 bytes where it starts.
pub(crate) const NAME_BYTES_OF_SHORT_FIELD: [u64; 7] = {
    let mut table = [0; 7];
    let mut n = 0;
    while n < 7 {
        table[n] = u64::MAX >> (8 * (6 - n) + 8);
        n += 1;
    }
    table
};

/// For a name of `n` ≤ 6 bytes, the high bit of each of the `n + 2` bytes
/// holding the name's length, the name and the value's length.
pub(crate) const HIGH_BITS_OF_SHORT_FIELD: [u64; 7] = {
    let mut table = [0; 7];
    let mut n = 0;
    while n < 7 {
        table[n] = 0x8080_8080_8080_8080_u64 >> (8 * (6 - n));
        n += 1;
    }
    table
};

/// [`field_span`] for any field, by the full checks of [`next_field`]
/// (out of line, so that the callers' loops keep their positions in
/// registers).
#[inline(never)]
pub(crate) fn field_span_slow(bytes: &[u8], mut pos: usize) -> Result<FieldSpan, DecodeError> {
    let name_len = get_varint(bytes, &mut pos)?;
    let name_at = pos;
    name_str(take(bytes, &mut pos, name_len)?, name_at)?;
    let value_len = get_varint(bytes, &mut pos)?;
    take(bytes, &mut pos, value_len)?;
    Ok(FieldSpan {
        name_at,
        name_len,
        end: pos,
    })
}

/// A valid encoded record, borrowed from wherever it is held (an engine's
/// pinned value): its fields can be read in place, without decoding them
/// into a [`Record`](crate::Record).
///
/// ```
/// use ycsb_db::{codec, Record};
///
/// let mut record = Record::new();
/// record.push("field0", b"hello");
/// let mut bytes = Vec::new();
/// codec::encode(&record, &mut bytes);
/// let stored = codec::EncodedRecord::parse(&bytes).unwrap();
/// assert_eq!(stored.iter().next().unwrap().value, b"hello");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodedRecord<'a> {
    bytes: &'a [u8],
}

impl<'a> EncodedRecord<'a> {
    /// Checks that `bytes` is a valid encoding (every length in bounds,
    /// every name UTF-8), so that reading its fields cannot fail later.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when `bytes` is not a valid encoding.
    #[inline]
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if is_uniform_record(bytes) {
            return Ok(Self { bytes });
        }
        let mut pos = 0;
        while pos < bytes.len() {
            pos = field_span(bytes, pos)?.end;
        }
        Ok(Self { bytes })
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The fields, in their stored order.
    pub fn iter(&self) -> EncodedFields<'a> {
        EncodedFields {
            bytes: self.bytes,
            pos: 0,
        }
    }
}

/// The fields of an [`EncodedRecord`], read in place.
#[derive(Clone, Debug)]
pub struct EncodedFields<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for EncodedFields<'a> {
    type Item = Field<'a>;

    #[inline]
    fn next(&mut self) -> Option<Field<'a>> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        // `EncodedRecord::parse` checked every field, so this cannot fail;
        // ending the iteration is the answer if it ever did.
        let f = next_field(self.bytes, &mut self.pos).ok()?;
        Some(Field {
            name: f.name,
            value: f.value,
        })
    }
}
