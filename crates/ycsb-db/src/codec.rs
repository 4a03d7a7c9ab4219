//! The compact value encoding embedded engines store a record in.
//!
//! A record is one engine value: for each field, the name's length as a
//! LEB128 varint, the name, the value's length as a varint, the value.
//! Ten 100-byte fields cost 10 × (1 + 6 + 1) = 80 bytes of framing.
//!
//! Decoding is on the read path of every embedded-engine operation, so it
//! is written for the common case: lengths below 128 (one varint byte) and
//! ASCII field names are checked inline, the general cases out of line.
//! A profile of LevelDB workload C (callgrind, 200,000 cached reads) had
//! the earlier straightforward version at about 2,300 instructions per
//! read, half of what LevelDB's own `Get` costs, of which 900 were
//! `str::from_utf8` on the ten field names.

use crate::field::{Field, Fields};
use crate::record::{Record, RecordView, ScanResult};
use crate::status::Status;
use crate::wire::{
    field_span, next_field, put_varint, uniform_stride, window_at, UniformShape,
    NAME_BYTES_OF_SHORT_FIELD,
};
pub use crate::wire::{DecodeError, EncodedFields, EncodedRecord};

/// The encoding of `record`, borrowed: what [`encode`] appends, for a
/// store that hands the engine a slice to copy (a [`Record`] holds its
/// fields in this encoding).
pub fn encoded(record: &Record) -> &[u8] {
    record.encoded()
}

/// Appends the encoding of `record` to `out` (which is not cleared, so a
/// caller can reuse one buffer across operations).
pub fn encode(record: &Record, out: &mut Vec<u8>) {
    // A record holds its fields in this encoding: one copy.
    out.extend_from_slice(record.encoded());
}

#[inline(always)]
fn put_field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    put_varint(out, name.len());
    out.extend_from_slice(name.as_bytes());
    put_varint(out, value.len());
    out.extend_from_slice(value);
}

/// Decodes `bytes` into `out`, keeping only the fields `fields` selects.
///
/// # Errors
///
/// [`DecodeError`] when `bytes` is not a valid encoding; `out` may then hold
/// the fields decoded before the error.
pub fn decode(bytes: &[u8], fields: Fields<'_>, out: &mut Record) -> Result<(), DecodeError> {
    let mut pos = 0;
    match fields {
        // The read-everything case (every YCSB core workload's default)
        // without the selection test per field.
        Fields::All => {
            while pos < bytes.len() {
                let f = next_field(bytes, &mut pos)?;
                out.push(f.name, f.value);
            }
        }
        Fields::Only(_) => {
            while pos < bytes.len() {
                let f = next_field(bytes, &mut pos)?;
                if fields.contains(f.name) {
                    out.push(f.name, f.value);
                }
            }
        }
    }
    Ok(())
}

/// A stored value that is not a record is the data's fault, not the
/// engine's: reads report it as `UNEXPECTED_STATE`, as Java YCSB reports
/// data that fails verification, and keep `ERROR` for engine failures.
impl From<DecodeError> for Status {
    fn from(_: DecodeError) -> Self {
        Status::UnexpectedState
    }
}

/// What a read of the stored `value` answers: the fields `fields` selects
/// decoded into `out` and `OK`, or `UNEXPECTED_STATE` when `value` is not
/// an encoded record (`out` may then hold the fields before the fault).
/// An embedded engine's `StoreThread::read` once it has found the value.
pub fn read_into(value: &[u8], fields: Fields<'_>, out: &mut Record) -> Status {
    match decode(value, fields, out) {
        Ok(()) => Status::Ok,
        Err(e) => e.into(),
    }
}

/// The rows of a scan of an embedded engine, decoded into `out` as the
/// engine yields its records in key order: what every such engine's
/// `StoreThread::scan` answers once it has the stored keys and values.
#[derive(Debug)]
pub struct ScanRows<'s, 'f> {
    out: &'s mut ScanResult,
    fields: Fields<'f>,
    taken: usize,
    status: Status,
}

impl<'s, 'f> ScanRows<'s, 'f> {
    /// A scan that fills `out` with the fields `fields` selects.
    pub fn new(out: &'s mut ScanResult, fields: Fields<'f>) -> Self {
        Self {
            out,
            fields,
            taken: 0,
            status: Status::Ok,
        }
    }

    /// Decodes the record `value` stored under `key` into the next row.
    /// Answers whether the scan goes on: not after a key that is not UTF-8
    /// (the scan is then `UNEXPECTED_STATE`). A value that is not an
    /// encoded record makes the scan `UNEXPECTED_STATE` too, but its row
    /// is kept and the scan goes on.
    pub fn push(&mut self, key: &[u8], value: &[u8]) -> bool {
        let Ok(key) = std::str::from_utf8(key) else {
            self.status = Status::UnexpectedState;
            return false;
        };
        let row = read_into(value, self.fields, self.out.push_row(key));
        if !row.is_ok() {
            self.status = row;
        }
        self.taken += 1;
        true
    }

    /// How many records the scan has taken.
    pub fn taken(&self) -> usize {
        self.taken
    }

    /// What the scan answers: `OK`, or what its last fault was.
    pub fn status(&self) -> Status {
        self.status
    }
}

/// What a read in place of the stored `value` answers: `visit` shown the
/// fields `fields` selects, in place, and `OK`; or `UNEXPECTED_STATE`
/// without a visit when `value` is not an encoded record. An embedded
/// engine's `StoreThread::read_in_place` once it has pinned the value, so
/// that it reports exactly what [`read_into`] would.
///
/// Inline: the binding's read and this check are one call's work, and
/// a call of its own cost a fifth of the check.
#[inline]
pub fn read_in_place(
    value: &[u8],
    fields: Fields<'_>,
    visit: &mut dyn FnMut(RecordView<'_>),
) -> Status {
    match EncodedRecord::parse(value) {
        Ok(record) => {
            visit(RecordView::encoded(record, fields));
            Status::Ok
        }
        Err(e) => e.into(),
    }
}

/// Appends to `out` the encoding of the record `stored` encodes with
/// `changes` applied: each stored field in its order, holding the value of
/// the first field of `changes` with its name if there is one; then, in
/// their order, the fields of `changes` whose name no stored field has.
///
/// This is the read-modify-write of an update (what decoding `stored`,
/// [`Record::merge_from`] and [`encode`] give, byte for byte) without
/// building the two records in between: the unchanged stored fields are
/// copied once, as runs of their encoded bytes, from the engine's buffer
/// into `out`.
///
/// # Errors
///
/// [`DecodeError`] when `stored` is not a valid encoding; `out` then holds a
/// partial encoding and must not be written.
pub fn merge(stored: &[u8], changes: &Record, out: &mut Vec<u8>) -> Result<(), DecodeError> {
    out.reserve(stored.len() + changes.value_bytes() + 16 * changes.len());
    let mut fields = changes.iter();
    if let (Some(change), None) = (fields.next(), fields.next()) {
        // A record of one field is that field's encoding.
        return merge_one(stored, change, changes.encoded(), out);
    }
    // Bit i: field i of `changes` replaced a stored field (the first 64
    // fields; later ones are looked up again in `stored`, which only a
    // record of more than 64 changed fields pays for).
    let mut replaced: u64 = 0;
    // Stored fields that keep their value keep their encoding too: runs of
    // them are copied as they are, from `copied` up to the field at hand.
    let mut copied = 0;
    let mut pos = 0;
    while pos < stored.len() {
        let start = pos;
        let span = field_span(stored, pos)?;
        pos = span.end;
        let name = &stored[span.name_at..span.name_at + span.name_len];
        let mut found = None;
        for (i, change) in changes.iter().enumerate() {
            if same_name(change.name.as_bytes(), name) {
                found.get_or_insert(change);
                if i < 64 {
                    replaced |= 1 << i;
                }
            }
        }
        if let Some(change) = found {
            out.extend_from_slice(&stored[copied..start]);
            // The change's name is the stored one, byte for byte.
            put_field(out, change.name, change.value);
            copied = pos;
        }
    }
    out.extend_from_slice(&stored[copied..]);
    for (i, change) in changes.iter().enumerate() {
        let is_new = if i < 64 {
            replaced & (1 << i) == 0
        } else {
            !has_field(stored, change.name)
        };
        if is_new {
            put_field(out, change.name, change.value);
        }
    }
    Ok(())
}

/// [`merge`] of a single changed field, YCSB's default update
/// (`writeallfields=false`): one name compared per stored field, with no
/// loop over the changes and no bookkeeping of which were found.
/// `framed` is the change encoded.
fn merge_one(
    stored: &[u8],
    change: Field<'_>,
    framed: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    if merge_one_uniform(stored, change.name.as_bytes(), framed, out) {
        return Ok(());
    }
    merge_one_walk(stored, change, framed, out)
}

/// [`merge_one`] into a record of one shape ([`uniform_stride`]), which
/// every YCSB record of a constant `fieldlength` below 128 is: the fields
/// start at multiples of one size, and a field is the changed one when
/// the 8 bytes where it starts hold the change's name length and name, so
/// finding it takes one masked compare a field instead of a walk that
/// reads each field's lengths to find the next (an update of a 10-field
/// record: about 530 instructions in the walk). The record's shape is
/// checked in the same pass over the fields, and nothing is written before
/// it is. `false`, with `out` untouched, for any other record.
#[inline(always)]
fn merge_one_uniform(stored: &[u8], name: &[u8], framed: &[u8], out: &mut Vec<u8>) -> bool {
    let Some(shape) = UniformShape::of(stored) else {
        return false;
    };
    let stride = shape.stride;
    // A uniform record's names are all as long as the first.
    let name_len = stored[0] as usize;
    if name.len() != name_len {
        if uniform_stride(stored).is_none() {
            return false;
        }
        out.extend_from_slice(stored);
        out.extend_from_slice(framed);
        return true;
    }
    // `UniformShape::of` took names of at most 6 bytes.
    let mask = NAME_BYTES_OF_SHORT_FIELD[name_len];
    let mut wanted = [0u8; 8];
    wanted[0] = name_len as u8;
    wanted[1..=name_len].copy_from_slice(name);
    let wanted = u64::from_le_bytes(wanted);
    // What `uniform_stride` takes of each field's window, and where the
    // fields holding the name start: the last one, and how many.
    let (mut all, mut any) = (u64::MAX, 0);
    let (mut found_at, mut found) = (0, 0usize);
    let mut at = 0;
    while at + stride <= stored.len() {
        // SAFETY: the 8 bytes at `at` end at `at + 8 <= at + stride`,
        // within `stored`.
        let word = unsafe { window_at(stored, at) };
        all &= word;
        any |= word;
        if word & mask == wanted {
            found_at = at;
            found += 1;
        }
        at += stride;
    }
    if !shape.holds(all, any, at, stored.len()) {
        return false;
    }
    match found {
        0 => {
            out.extend_from_slice(stored);
            out.extend_from_slice(framed);
        }
        // The change framed as long as the field it replaces (YCSB's
        // update of a constant `fieldlength`): the record copied whole and
        // the field overwritten, two copies instead of three.
        1 if framed.len() == stride => {
            let start = out.len();
            out.extend_from_slice(stored);
            out[start + found_at..start + found_at + stride].copy_from_slice(framed);
        }
        1 => {
            out.extend_from_slice(&stored[..found_at]);
            out.extend_from_slice(framed);
            out.extend_from_slice(&stored[found_at + stride..]);
        }
        // Several fields of that name (a record YCSB never writes): each
        // one replaced, as the walk does.
        _ => {
            let mut copied = 0;
            for at in (0..stored.len()).step_by(stride) {
                // SAFETY: as above, `at + stride <= stored.len()`.
                if unsafe { window_at(stored, at) } & mask == wanted {
                    out.extend_from_slice(&stored[copied..at]);
                    out.extend_from_slice(framed);
                    copied = at + stride;
                }
            }
            out.extend_from_slice(&stored[copied..]);
        }
    }
    true
}

/// [`merge_one`] into any record: field by field.
fn merge_one_walk(
    stored: &[u8],
    change: Field<'_>,
    framed: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let name = change.name.as_bytes();
    let mut replaced = false;
    let mut copied = 0;
    let mut pos = 0;
    while pos < stored.len() {
        let start = pos;
        let span = field_span(stored, pos)?;
        pos = span.end;
        if same_name(name, &stored[span.name_at..span.name_at + span.name_len]) {
            out.extend_from_slice(&stored[copied..start]);
            out.extend_from_slice(framed);
            copied = pos;
            replaced = true;
        }
    }
    out.extend_from_slice(&stored[copied..]);
    if !replaced {
        out.extend_from_slice(framed);
    }
    Ok(())
}

/// Whether two field names are equal: for the short names records have,
/// two overlapping word loads each instead of a call to `memcmp`, which an
/// update makes once per stored field.
#[inline(always)]
fn same_name(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("4 bytes"));
    let dword =
        |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    match n {
        4..=7 => word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4),
        8..=16 => dword(a, 0) == dword(b, 0) && dword(a, n - 8) == dword(b, n - 8),
        _ => a == b,
    }
}

/// Whether the valid encoding `stored` has a field called `name`.
#[cold]
fn has_field(stored: &[u8], name: &str) -> bool {
    let mut pos = 0;
    while pos < stored.len() {
        match next_field(stored, &mut pos) {
            Ok(f) if f.name == name => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{is_ascii_short, is_uniform_record};

    #[test]
    fn a_scan_keeps_rows_that_do_not_decode_and_stops_at_a_key_that_is_not_utf8() {
        let mut r = Record::new();
        r.push("field0", b"abc");
        let mut good = Vec::new();
        encode(&r, &mut good);
        let mut out = ScanResult::default();
        let mut rows = ScanRows::new(&mut out, Fields::All);
        assert!(rows.push(b"k1", &good));
        assert_eq!((rows.taken(), rows.status()), (1, Status::Ok));
        assert!(rows.push(b"k2", b"\xff"), "a bad value goes on");
        assert!(rows.push(b"k3", &good));
        assert_eq!((rows.taken(), rows.status()), (3, Status::UnexpectedState));
        assert!(!rows.push(b"\xff", &good), "a bad key stops");
        assert_eq!((rows.taken(), rows.status()), (3, Status::UnexpectedState));
        let keys: Vec<&str> = out.iter().map(|(key, _)| key).collect();
        assert_eq!(keys, ["k1", "k2", "k3"]);
        assert_eq!(out.iter().nth(2).map(|(_, row)| row.clone()), Some(r));
    }

    #[test]
    fn reads_map_decoding_to_statuses_alike() {
        let mut r = Record::new();
        r.push("field0", b"abc");
        r.push("field1", b"de");
        let mut good = Vec::new();
        encode(&r, &mut good);
        let only = vec!["field1".to_string()];
        for fields in [Fields::All, Fields::Only(&only)] {
            let mut out = Record::new();
            assert_eq!(read_into(&good, fields, &mut out), Status::Ok);
            let mut expected = r.clone();
            expected.retain(fields);
            assert_eq!(out, expected);
            let mut seen = Vec::new();
            let status = read_in_place(&good, fields, &mut |v| {
                seen.push(v.iter().collect::<Record>())
            });
            assert_eq!((status, seen), (Status::Ok, vec![expected]));
        }
        // A value cut inside a field is not a record.
        let bad = &good[..good.len() - 1];
        assert_eq!(
            read_into(bad, Fields::All, &mut Record::new()),
            Status::UnexpectedState
        );
        let mut visits = 0;
        let status = read_in_place(bad, Fields::All, &mut |_| visits += 1);
        assert_eq!((status, visits), (Status::UnexpectedState, 0));
    }

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
    fn encoded_record_reads_in_place_what_decode_copies() {
        let mut r = Record::new();
        r.push("field0", b"abc");
        r.push("f\u{e9}ld1", &[7u8; 300]);
        r.push("", b"");
        let mut buf = Vec::new();
        encode(&r, &mut buf);
        let stored = EncodedRecord::parse(&buf).unwrap();
        assert_eq!(stored.as_bytes(), &buf[..]);
        assert_eq!(stored.iter().collect::<Record>(), r);
        assert_eq!(EncodedRecord::parse(&[]).unwrap().iter().count(), 0);
        for cut in 1..buf.len() {
            let whole_fields = [11, 320];
            assert_eq!(
                EncodedRecord::parse(&buf[..cut]).is_ok(),
                whole_fields.contains(&cut),
                "prefix of {cut} bytes"
            );
        }
        assert!(EncodedRecord::parse(&[2, 0xc3, 0x28, 0]).is_err());
    }

    /// `EncodedRecord::parse` and `merge` walk records with a one-load
    /// path and the full one; both must accept exactly what `decode`
    /// accepts, and `merge` must write what decoding, merging and encoding
    /// would. Records
    /// with names of 0 to 17 bytes (ASCII and not) and values across the
    /// one-byte length limit, every prefix of their encodings and every
    /// byte of them altered.
    #[test]
    fn parse_accepts_exactly_what_decode_accepts() {
        let mut cases = Vec::new();
        for name_len in 0..=17 {
            for value_len in [0, 1, 5, 127, 128, 200] {
                for ascii in [true, false] {
                    let mut name: String = "fieldname_abcdefg"[..name_len].to_string();
                    if !ascii && name_len >= 2 {
                        name.replace_range(..2, "\u{e9}");
                    }
                    let mut r = Record::new();
                    r.push(&name, &vec![b'v'; value_len]);
                    r.push("field1", b"tail");
                    let mut buf = Vec::new();
                    encode(&r, &mut buf);
                    cases.push(buf);
                }
            }
        }
        // Records of fields of one shape (what `is_uniform_record` takes),
        // and of nearly one shape: the last field's value a byte longer.
        for name_len in 0..=7 {
            for value_len in [0, 1, 5, 20, 127, 128] {
                for count in 1..=4 {
                    for longer_last in [false, true] {
                        let mut r = Record::new();
                        for i in 0..count {
                            let name = format!("{i}abcdefg");
                            let extra = usize::from(longer_last && i + 1 == count);
                            r.push(&name[..name_len], &vec![b'v'; value_len + extra]);
                        }
                        let mut buf = Vec::new();
                        encode(&r, &mut buf);
                        cases.push(buf);
                    }
                }
            }
        }
        // Two changes (the general merge) and one (its single-field path),
        // each replacing a stored field or adding a new one.
        let mut two = Record::new();
        two.push("field1", b"changed");
        two.push("new", b"added");
        let mut replacing = Record::new();
        replacing.push("field1", b"changed");
        let mut adding = Record::new();
        adding.push("new", b"added");
        let mut all_changes = vec![two, replacing, adding];
        // A field of the uniform records above replaced (every field when
        // the names are empty: they are all the same name then), by a
        // value of another length, and of the same for 20-byte values.
        for name_len in 0..=7 {
            for (field, value_len) in [("1abcdefg", 3), ("0abcdefg", 20)] {
                let mut change = Record::new();
                change.push(&field[..name_len], &vec![b'c'; value_len]);
                all_changes.push(change);
            }
        }
        let agree = |bytes: &[u8]| {
            let decoded = decode(bytes, Fields::All, &mut Record::new()).is_ok();
            for changes in &all_changes {
                let mut merged = Vec::new();
                match merge(bytes, changes, &mut merged) {
                    Ok(()) => {
                        assert!(decoded, "merge accepted {bytes:?}");
                        let mut stored = Record::new();
                        decode(bytes, Fields::All, &mut stored).unwrap();
                        assert_eq!(merged, merged_the_long_way(&stored, changes));
                    }
                    Err(_) => assert!(!decoded, "merge refused {bytes:?}"),
                }
            }
            match EncodedRecord::parse(bytes) {
                Ok(record) => {
                    assert!(decoded, "parse accepted {bytes:?}");
                    let mut copied = Record::new();
                    decode(bytes, Fields::All, &mut copied).unwrap();
                    assert_eq!(record.iter().collect::<Record>(), copied);
                }
                Err(_) => assert!(!decoded, "parse refused {bytes:?}"),
            }
        };
        for buf in &cases {
            for cut in 0..=buf.len() {
                agree(&buf[..cut]);
            }
            for at in 0..buf.len() {
                for replacement in [0x00, 0x05, 0x7f, 0x80, 0xc3, 0xff] {
                    let mut altered = buf.clone();
                    altered[at] = replacement;
                    agree(&altered);
                }
            }
        }
    }

    #[test]
    fn records_of_one_field_shape_take_the_uniform_check() {
        let record = |fields: &[(&str, usize)]| {
            let mut r = Record::new();
            for &(name, len) in fields {
                r.push(name, &vec![b'x'; len]);
            }
            let mut buf = Vec::new();
            encode(&r, &mut buf);
            buf
        };
        let ycsb: Vec<(String, usize)> = (0..10).map(|i| (format!("field{i}"), 100)).collect();
        let ycsb: Vec<(&str, usize)> = ycsb.iter().map(|(n, l)| (n.as_str(), *l)).collect();
        assert!(is_uniform_record(&record(&ycsb)));
        assert!(is_uniform_record(&record(&[("f", 6)])));
        // Another shape: the walk decides (and accepts).
        for other in [
            record(&[("field0", 100), ("field1", 99)]),
            record(&[("field0", 100), ("field10", 100)]),
            record(&[("field0", 128)]),
            record(&[("long_name", 10)]),
            record(&[("f", 4)]),
            Vec::new(),
        ] {
            assert!(!is_uniform_record(&other), "{other:?}");
            assert!(EncodedRecord::parse(&other).is_ok());
        }
        // A uniform record with one name byte not ASCII is not uniform.
        let mut bytes = record(&ycsb);
        bytes[108 * 3 + 2] = 0xc3;
        assert!(!is_uniform_record(&bytes));
    }

    #[test]
    fn same_name_agrees_with_equality() {
        let names: Vec<Vec<u8>> = (0..=20usize)
            .flat_map(|n| {
                let base: Vec<u8> = (0..n).map(|i| b'a' + i as u8).collect();
                // The same length differing at the first, a middle and the
                // last byte, and a shorter prefix.
                let mut variants = vec![base.clone()];
                for at in [0, n / 2, n.saturating_sub(1)] {
                    if n > 0 {
                        let mut v = base.clone();
                        v[at] ^= 0x20;
                        variants.push(v);
                    }
                }
                variants
            })
            .collect();
        for a in &names {
            for b in &names {
                assert_eq!(same_name(a, b), a == b, "{a:?} {b:?}");
            }
        }
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

    /// The slow way an update used to take: decode, merge, encode.
    fn merged_the_long_way(stored: &Record, changes: &Record) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(stored, &mut buf);
        let mut back = Record::new();
        decode(&buf, Fields::All, &mut back).unwrap();
        back.merge_from(changes);
        let mut out = Vec::new();
        encode(&back, &mut out);
        out
    }

    #[test]
    fn merge_matches_decode_merge_from_encode() {
        let mut stored = Record::new();
        for i in 0..10 {
            stored.push(&format!("field{i}"), &[b'a' + i as u8; 100]);
        }
        let mut one = Record::new();
        one.push("field3", b"new");
        let mut new_and_old = Record::new();
        new_and_old.push("extra", &[1u8; 200]);
        new_and_old.push("field0", b"");
        new_and_old.push("extra2", b"x");
        // Duplicate names in the changes: the first wins for a stored
        // field; both are appended when the name is new (as merge_from).
        let mut dupes = Record::new();
        dupes.push("field9", b"first");
        dupes.push("field9", b"second");
        dupes.push("new", b"1");
        dupes.push("new", b"2");
        // More than 64 changes: the ones past the bit set are looked up.
        let mut many = Record::new();
        for i in 0..80 {
            many.push(&format!("f{}", i % 70), &[i as u8; 3]);
        }
        many.push("field5", b"late");
        let mut stored_many = stored.clone();
        stored_many.push("f66", b"old");
        for (stored, changes) in [
            (&stored, &one),
            (&stored, &new_and_old),
            (&stored, &dupes),
            (&stored, &Record::new()),
            (&Record::new(), &one),
            (&stored_many, &many),
        ] {
            let mut buf = Vec::new();
            encode(stored, &mut buf);
            let mut out = vec![0xEE];
            merge(&buf, changes, &mut out).unwrap();
            assert_eq!(out[1..], merged_the_long_way(stored, changes)[..]);
        }
    }

    /// The one-shape path of a one-field update writes what the walk
    /// writes, byte for byte, for records of every name length it takes,
    /// a change of every field, a new name, a name of another length and
    /// names every field shares; and it declines any other record.
    #[test]
    fn merging_into_a_uniform_record_is_the_walk() {
        for name_len in 0..=6 {
            for value_len in [6, 7, 20, 100, 127] {
                for count in [1, 2, 3, 10, 11] {
                    let mut stored = Record::new();
                    for i in 0..count {
                        let name = format!("{}abcdef", i % 10);
                        stored.push(&name[..name_len], &vec![b'a' + i as u8; value_len]);
                    }
                    let bytes = encoded(&stored).to_vec();
                    assert!(is_uniform_record(&bytes), "{name_len} {value_len} {count}");
                    let mut names: Vec<String> = (0..count.min(10))
                        .map(|i| format!("{i}abcdef")[..name_len].to_string())
                        .collect();
                    names.extend([
                        "zzzzzz"[..name_len].to_string(),
                        "longer_name".to_string(),
                        String::new(),
                    ]);
                    for name in &names {
                        for new_len in [0, 5, value_len, 300] {
                            let mut change = Record::new();
                            change.push(name, &vec![b'z'; new_len]);
                            let field = change.iter().next().unwrap();
                            let (mut fast, mut walked) = (vec![0xEE], vec![0xEE]);
                            assert!(merge_one_uniform(
                                &bytes,
                                name.as_bytes(),
                                change.encoded(),
                                &mut fast
                            ));
                            merge_one_walk(&bytes, field, change.encoded(), &mut walked).unwrap();
                            assert_eq!(
                                fast, walked,
                                "{name_len} {value_len} {count} {name:?} {new_len}"
                            );
                        }
                    }
                }
            }
        }
        // Not one shape: a longer last value, a 7-byte name, a 128-byte
        // value, nothing at all.
        let mut change = Record::new();
        change.push("field1", b"x");
        let mut longer_last = Record::new();
        longer_last.push("field0", &[1; 10]);
        longer_last.push("field1", &[1; 11]);
        let mut long_name = Record::new();
        long_name.push("field10", &[1; 10]);
        let mut long_value = Record::new();
        long_value.push("field1", &[1; 128]);
        for stored in [longer_last, long_name, long_value, Record::new()] {
            let mut out = Vec::new();
            assert!(!merge_one_uniform(
                stored.encoded(),
                b"field1",
                change.encoded(),
                &mut out
            ));
            assert!(out.is_empty());
        }
    }

    /// The test `uniform_stride` made before it took two fields a turn
    /// and the AND and OR of their windows: one field at a time, each
    /// window's checked bits against the first's.
    fn uniform_stride_field_by_field(bytes: &[u8]) -> Option<usize> {
        let first = u64::from_le_bytes(bytes.get(..8)?.try_into().unwrap());
        let name_len = (first & 0xff) as usize;
        let high_bits = *crate::wire::HIGH_BITS_OF_SHORT_FIELD.get(name_len)?;
        let length_bytes = 0xff | (0xff << (8 * (name_len + 1)));
        let lengths = first & length_bytes;
        let stride = name_len + 2 + ((first >> (8 * (name_len + 1))) & 0xff) as usize;
        if stride < 8 {
            return None;
        }
        let mut wrong = first & high_bits;
        let mut at = stride;
        while at + stride <= bytes.len() {
            let word = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            wrong |= (word & (high_bits | length_bytes)) ^ lengths;
            at += stride;
        }
        (wrong == 0 && at == bytes.len()).then_some(stride)
    }

    /// A small deterministic generator for the randomised tests (xorshift).
    struct Shapes(u64);

    impl Shapes {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Uniform records of 1 to 12 fields (both parities of the two-a-turn
    /// loop), every name length the check takes and value lengths up to
    /// the one-byte limit, each with every byte altered to values that
    /// break a length, a name or the high bits: the check answers as the
    /// field-by-field one did.
    #[test]
    fn uniform_check_answers_as_field_by_field() {
        let mut checked = 0;
        for name_len in 0..=7 {
            for value_len in [0, 5, 6, 7, 20, 100, 126, 127, 128] {
                for count in 1..=12 {
                    let mut r = Record::new();
                    for i in 0..count {
                        let name = format!("{}abcdefg", i % 10);
                        r.push(&name[..name_len], &vec![b'v'; value_len]);
                    }
                    let bytes = encoded(&r).to_vec();
                    let mut agree = |b: &[u8]| {
                        assert_eq!(uniform_stride(b), uniform_stride_field_by_field(b), "{b:?}");
                        checked += 1;
                    };
                    agree(&bytes);
                    for cut in [1, 7, 8, bytes.len().saturating_sub(1)] {
                        agree(&bytes[..bytes.len().saturating_sub(cut)]);
                    }
                    let mut longer = bytes.clone();
                    longer.extend_from_slice(&bytes[..bytes.len().min(9)]);
                    agree(&longer);
                    for at in 0..bytes.len() {
                        for replacement in [0x00, 0x05, 0x06, 0x7f, 0x80, 0xff] {
                            let mut altered = bytes.clone();
                            altered[at] = replacement;
                            agree(&altered);
                        }
                    }
                }
            }
        }
        assert!(checked > 100_000);
    }

    /// `merge` of one changed field writes what decoding, merging and
    /// encoding write, over many random records of one shape and of
    /// nearly one shape (names shared by several fields, a field of
    /// another length or name length) and random changes: a name stored,
    /// a new one, of the stored names' length or not, a value of the
    /// stored values' length or not.
    #[test]
    fn merge_of_one_field_matches_the_long_way_on_random_shapes() {
        let mut shapes = Shapes(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let name_len = shapes.below(8);
            let value_len = [0, 6, 7, 20, 100, 127, 128][shapes.below(7)];
            let count = shapes.below(13);
            let distinct = 1 + shapes.below(10);
            let mut stored = Record::new();
            for i in 0..count {
                let name = format!("{}abcdefgh", i % distinct);
                let mut name = name[..name_len].to_string();
                let mut len = value_len;
                // Now and then a field that breaks the shape.
                match shapes.below(20) {
                    0 => len += 1,
                    1 => name.push('x'),
                    _ => {}
                }
                let value: Vec<u8> = (0..len).map(|_| shapes.below(256) as u8).collect();
                stored.push(&name, &value);
            }
            let change_name = match shapes.below(4) {
                0 => "zzzzzzzz"[..name_len].to_string(),
                1 => "longer_name".to_string(),
                _ => format!("{}abcdefgh", shapes.below(distinct))[..name_len].to_string(),
            };
            let change_len = match shapes.below(3) {
                0 => value_len,
                1 => shapes.below(10),
                _ => 130,
            };
            let mut change = Record::new();
            change.push(&change_name, &vec![b'z'; change_len]);
            let mut out = vec![0xEE];
            merge(encoded(&stored), &change, &mut out).unwrap();
            assert_eq!(
                out[1..],
                merged_the_long_way(&stored, &change)[..],
                "{stored:?} {change:?}"
            );
        }
    }

    #[test]
    fn merge_rejects_corrupt_values() {
        let mut changes = Record::new();
        changes.push("field0", b"v");
        let mut out = Vec::new();
        assert!(merge(&[0xff; 12], &changes, &mut out).is_err());
        assert!(merge(&[1, 0xff, 0], &changes, &mut out).is_err());
        assert!(merge(&[5, b'a'], &changes, &mut out).is_err());
    }

    #[test]
    fn names_and_lengths_beyond_the_fast_paths() {
        let mut r = Record::new();
        r.push("größe", &[9u8; 1000]);
        r.push(&"n".repeat(200), b"");
        r.push("ascii", &[0u8; 127]);
        r.push("ascii2", &[0u8; 128]);
        let mut buf = Vec::new();
        encode(&r, &mut buf);
        let mut back = Record::new();
        decode(&buf, Fields::All, &mut back).unwrap();
        assert_eq!(back, r);
        // A name that is not UTF-8 is an error at its offset.
        let mut out = Record::new();
        let err = decode(&[2, 0xc3, 0x28, 0], Fields::All, &mut out).unwrap_err();
        assert_eq!(err.offset, 1);
        assert_eq!(err.reason, "field name is not UTF-8");
    }

    #[test]
    fn ascii_check_at_every_length_and_position() {
        for n in 0..40 {
            let ascii = vec![b'a'; n];
            assert!(is_ascii_short(&ascii), "{n}");
            for at in 0..n {
                let mut b = ascii.clone();
                b[at] = 0xc3;
                assert!(!is_ascii_short(&b), "{n} {at}");
            }
        }
    }
}
