//! Records (field name/value pairs) and field selections, laid out so that
//! a workload and a store can exchange them without allocating per
//! operation.

pub use crate::field::{Field, Fields};
use crate::wire::{put_varint, EncodedFields, EncodedRecord};

/// Where one field's name and value lie in a [`Record`]'s bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FieldSpan {
    name_at: usize,
    name_end: usize,
    value_at: usize,
    value_end: usize,
}

/// An ordered list of fields, held as the codec stores a record.
///
/// The fields lie one after another in one buffer in the encoding of
/// [`codec`](crate::codec) (for each, the name's length, the name, the
/// value's length, the value), so that an embedded engine stores a record
/// the workload built with one copy ([`codec::encode`](crate::codec::encode)),
/// where building names and values apart and framing them at the store
/// cost a tenth of a load insert on LMDB.
///
/// A `Record` is meant to be reused: [`Record::clear`] keeps its capacity,
/// so a thread that fills the same record for every operation stops
/// allocating once the buffers have grown to the largest record seen. The
/// workload passes a `Record` to [`StoreThread::insert`] and
/// [`StoreThread::update`], and a cleared one to [`StoreThread::read`] for
/// the store to fill.
///
/// Field names are unique by convention; [`Record::merge_from`] keeps them
/// so, and [`Record::get`] returns the first match.
///
/// [`StoreThread::insert`]: crate::StoreThread::insert
/// [`StoreThread::update`]: crate::StoreThread::update
/// [`StoreThread::read`]: crate::StoreThread::read
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The fields in the codec's encoding.
    bytes: Vec<u8>,
    /// Where each field lies in `bytes`.
    spans: Vec<FieldSpan>,
    /// The values' lengths summed.
    value_bytes: usize,
}

impl Record {
    /// An empty record.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty record with room for `fields` fields holding `value_bytes`
    /// bytes of values in all.
    pub fn with_capacity(fields: usize, value_bytes: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(value_bytes + fields * 10),
            spans: Vec::with_capacity(fields),
            value_bytes: 0,
        }
    }

    /// [`Record::with_capacity`], reporting a buffer the allocator refuses
    /// (a value size of a gigabyte under a memory limit) instead of
    /// aborting the process.
    ///
    /// # Errors
    ///
    /// The allocator's refusal.
    pub fn try_with_capacity(
        fields: usize,
        value_bytes: usize,
    ) -> Result<Self, std::collections::TryReserveError> {
        let mut record = Self::new();
        record
            .bytes
            .try_reserve_exact(value_bytes.saturating_add(fields.saturating_mul(10)))?;
        record.spans.try_reserve_exact(fields)?;
        Ok(record)
    }

    /// Removes every field, keeping the allocated capacity.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
        self.value_bytes = 0;
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the record has no field.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The total number of value bytes over all fields.
    pub fn value_bytes(&self) -> usize {
        self.value_bytes
    }

    /// The record in the codec's encoding.
    pub(crate) fn encoded(&self) -> &[u8] {
        &self.bytes
    }

    /// Appends the frame of a field called `name` with a value of `len`
    /// bytes, up to where the value goes, and returns that position.
    #[inline]
    fn push_header(&mut self, name: &str, len: usize) -> usize {
        put_varint(&mut self.bytes, name.len());
        let name_at = self.bytes.len();
        self.bytes.extend_from_slice(name.as_bytes());
        let name_end = self.bytes.len();
        put_varint(&mut self.bytes, len);
        let value_at = self.bytes.len();
        self.spans.push(FieldSpan {
            name_at,
            name_end,
            value_at,
            value_end: value_at + len,
        });
        self.value_bytes += len;
        value_at
    }

    /// Appends a field.
    pub fn push(&mut self, name: &str, value: &[u8]) {
        self.push_header(name, value.len());
        self.bytes.extend_from_slice(value);
    }

    /// Appends a field whose value of `len` bytes is written in place by
    /// `fill`, so that generated values need no intermediate buffer.
    ///
    /// The slice handed to `fill` holds zeroes; `fill` must overwrite all
    /// of it.
    pub fn push_with(&mut self, name: &str, len: usize, fill: impl FnOnce(&mut [u8])) {
        let at = self.push_header(name, len);
        self.bytes.resize(at + len, 0);
        fill(&mut self.bytes[at..]);
    }

    /// Appends the fields of `template`, their values written in place by
    /// one call of `fill`, so that a generator fills a whole record in one
    /// run.
    ///
    /// `fill` gets the bytes of the fields being pushed (their values
    /// zeroed) and where in them each value starts, in order: it must
    /// write each value's bytes ([`RecordTemplate::value_len`] of them)
    /// and may write anything anywhere else in the slice, as the fields'
    /// frames are written again after it. So a generator whose stores run
    /// past the end of a value (whole steps of several groups) writes
    /// every value in place.
    pub fn push_template(
        &mut self,
        template: &RecordTemplate,
        fill: impl FnOnce(&mut [u8], &[usize]),
    ) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&template.image);
        let area = &mut self.bytes[start..];
        fill(area, &template.starts);
        // A field's frame (its name's length, its name, its value's length)
        // runs from where the field before it ends to its value.
        let mut at = 0;
        for span in &template.spans {
            let end = span.value_at;
            copy_frame(&mut area[at..end], &template.image[at..end]);
            at = span.value_end;
        }
        // The spans last: until the frames are back, the new bytes are not
        // yet fields (a `fill` that panics leaves them past every span).
        if start == 0 {
            self.spans.extend_from_slice(&template.spans);
        } else {
            self.spans.extend(template.spans.iter().map(|s| FieldSpan {
                name_at: start + s.name_at,
                name_end: start + s.name_end,
                value_at: start + s.value_at,
                value_end: start + s.value_end,
            }));
        }
        self.value_bytes += template.spans.len() * template.value_len;
    }

    /// Appends a field whose name arrives as bytes (for example decoded from
    /// an engine's stored value).
    ///
    /// # Errors
    ///
    /// Returns [`std::str::Utf8Error`] when `name` is not UTF-8; the record
    /// is then unchanged.
    pub fn push_bytes(&mut self, name: &[u8], value: &[u8]) -> Result<(), std::str::Utf8Error> {
        let name = std::str::from_utf8(name)?;
        self.push(name, value);
        Ok(())
    }

    /// The field at `index`, if there is one.
    pub fn field(&self, index: usize) -> Option<Field<'_>> {
        let span = self.spans.get(index)?;
        Some(span_field(&self.bytes, span))
    }

    /// The fields in the order they were pushed.
    pub fn iter(&self) -> RecordFields<'_> {
        RecordFields {
            bytes: &self.bytes,
            spans: self.spans.iter(),
        }
    }

    /// The value of the first field called `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.iter().find(|f| f.name == name).map(|f| f.value)
    }

    /// Merges `changes` into this record: a field present in both takes the
    /// value from `changes`, a field only in `changes` is appended, the
    /// others are kept. This is what an update does to a stored record.
    pub fn merge_from(&mut self, changes: &Record) {
        if changes.is_empty() {
            return;
        }
        // Rebuilding keeps the buffer flat; records are small (tens of
        // fields), so the quadratic name lookup is cheaper than hashing.
        let mut merged = Record::with_capacity(
            self.len() + changes.len(),
            self.value_bytes() + changes.value_bytes(),
        );
        for field in self.iter() {
            let value = changes.get(field.name).unwrap_or(field.value);
            merged.push(field.name, value);
        }
        for field in changes.iter() {
            if self.get(field.name).is_none() {
                merged.push(field.name, field.value);
            }
        }
        *self = merged;
    }

    /// Keeps only the fields that `fields` selects.
    pub fn retain(&mut self, fields: Fields<'_>) {
        if let Fields::All = fields {
            return;
        }
        let mut kept = Record::with_capacity(self.len(), self.value_bytes());
        for field in self.iter().filter(|f| fields.contains(f.name)) {
            kept.push(field.name, field.value);
        }
        *self = kept;
    }
}

/// Fields of the given names with values of one length, framed as a
/// [`Record`] holds them and their values left to fill: what the workload
/// pushes for every insert ([`Record::push_template`]), built once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordTemplate {
    /// The fields encoded, every value zeroed.
    image: Vec<u8>,
    /// Where each field lies in `image`.
    spans: Vec<FieldSpan>,
    /// Where each value starts in `image` (the spans' `value_at`, as the
    /// slice `fill` gets).
    starts: Vec<usize>,
    value_len: usize,
}

impl RecordTemplate {
    /// A field for each of `names`, in order, each with a value of
    /// `value_len` bytes.
    pub fn new<S: AsRef<str>>(names: &[S], value_len: usize) -> Self {
        let mut record = Record::new();
        for name in names {
            let name = name.as_ref();
            record.push_with(name, value_len, |_| {});
        }
        RecordTemplate {
            starts: record.spans.iter().map(|s| s.value_at).collect(),
            image: record.bytes,
            spans: record.spans,
            value_len,
        }
    }

    /// The length of each value.
    pub fn value_len(&self) -> usize {
        self.value_len
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the template has no field.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// Copies a field's frame (a few bytes: a length and a short name) with
/// fixed-size moves, where `copy_from_slice` of a length known only at
/// run time is a `memcpy` call.
#[inline(always)]
fn copy_frame(to: &mut [u8], from: &[u8]) {
    let n = from.len();
    match n {
        8..=16 => {
            to[..8].copy_from_slice(&from[..8]);
            to[n - 8..].copy_from_slice(&from[n - 8..]);
        }
        4..=7 => {
            to[..4].copy_from_slice(&from[..4]);
            to[n - 4..].copy_from_slice(&from[n - 4..]);
        }
        1..=3 => {
            to[0] = from[0];
            to[n / 2] = from[n / 2];
            to[n - 1] = from[n - 1];
        }
        _ => to.copy_from_slice(from),
    }
}

/// The field `span` marks in `bytes`.
#[inline]
fn span_field<'a>(bytes: &'a [u8], span: &FieldSpan) -> Field<'a> {
    // Every update goes through here once per stored field (the merge
    // looks each one up among the changes), so the name is cut without
    // `str`'s UTF-8 check: a span only ever marks the bytes of a whole
    // `&str` written there (appended, or a template's frame copied back)
    // before the span was recorded, and `bytes` changes otherwise only by
    // appending or by writes past the spans recorded so far.
    let name = &bytes[span.name_at..span.name_end];
    debug_assert!(std::str::from_utf8(name).is_ok());
    Field {
        // SAFETY: see above.
        name: unsafe { std::str::from_utf8_unchecked(name) },
        value: &bytes[span.value_at..span.value_end],
    }
}

/// The fields of a [`Record`], in the order they were pushed.
#[derive(Clone, Debug)]
pub struct RecordFields<'a> {
    bytes: &'a [u8],
    spans: std::slice::Iter<'a, FieldSpan>,
}

impl<'a> Iterator for RecordFields<'a> {
    type Item = Field<'a>;

    #[inline]
    fn next(&mut self) -> Option<Field<'a>> {
        Some(span_field(self.bytes, self.spans.next()?))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.spans.size_hint()
    }
}

impl ExactSizeIterator for RecordFields<'_> {}

impl<'a> FromIterator<Field<'a>> for Record {
    fn from_iter<I: IntoIterator<Item = Field<'a>>>(iter: I) -> Self {
        let mut record = Record::new();
        for field in iter {
            record.push(field.name, field.value);
        }
        record
    }
}

/// A record read in place: the fields a read selected, borrowed from
/// wherever the store holds them for the duration of a
/// [`StoreThread::read_in_place`] callback.
///
/// An embedded engine shows its pinned value ([`RecordView::encoded`]),
/// so that a caller that only looks at the fields (or not even that: a
/// benchmark that does not verify data) costs no copy; a store that reads
/// into a [`Record`] shows that ([`RecordView::from`]).
///
/// [`StoreThread::read_in_place`]: crate::StoreThread::read_in_place
#[derive(Clone, Copy, Debug)]
pub struct RecordView<'a> {
    repr: ViewRepr<'a>,
}

#[derive(Clone, Copy, Debug)]
enum ViewRepr<'a> {
    Record(&'a Record),
    Encoded(EncodedRecord<'a>, Fields<'a>),
    Single(Option<Field<'a>>),
}

impl<'a> RecordView<'a> {
    /// The fields of `record` that `fields` selects.
    pub fn encoded(record: EncodedRecord<'a>, fields: Fields<'a>) -> Self {
        Self {
            repr: ViewRepr::Encoded(record, fields),
        }
    }

    /// A record of the one field `field`.
    pub fn single(field: Field<'a>) -> Self {
        Self {
            repr: ViewRepr::Single(Some(field)),
        }
    }

    /// A record with no field (for example when the selection named none
    /// of the stored ones).
    pub fn empty() -> Self {
        Self {
            repr: ViewRepr::Single(None),
        }
    }

    /// The fields, in the order the store holds them.
    pub fn iter(&self) -> ViewFields<'a> {
        ViewFields {
            repr: match self.repr {
                ViewRepr::Record(r) => FieldsRepr::Record(r, 0),
                ViewRepr::Encoded(e, fields) => FieldsRepr::Encoded(e.iter(), fields),
                ViewRepr::Single(f) => FieldsRepr::Single(f),
            },
        }
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        match self.repr {
            ViewRepr::Record(r) => r.len(),
            _ => self.iter().count(),
        }
    }

    /// Whether the record has no field.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The total number of value bytes over all fields.
    pub fn value_bytes(&self) -> usize {
        match self.repr {
            ViewRepr::Record(r) => r.value_bytes(),
            _ => self.iter().map(|f| f.value.len()).sum(),
        }
    }

    /// The value of the first field called `name`.
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.iter().find(|f| f.name == name).map(|f| f.value)
    }

    /// Appends the fields to `out`: the copy [`StoreThread::read`] makes.
    ///
    /// [`StoreThread::read`]: crate::StoreThread::read
    pub fn copy_to(&self, out: &mut Record) {
        for field in self.iter() {
            out.push(field.name, field.value);
        }
    }
}

impl<'a> From<&'a Record> for RecordView<'a> {
    fn from(record: &'a Record) -> Self {
        Self {
            repr: ViewRepr::Record(record),
        }
    }
}

/// The fields of a [`RecordView`].
#[derive(Clone, Debug)]
pub struct ViewFields<'a> {
    repr: FieldsRepr<'a>,
}

#[derive(Clone, Debug)]
enum FieldsRepr<'a> {
    Record(&'a Record, usize),
    Encoded(EncodedFields<'a>, Fields<'a>),
    Single(Option<Field<'a>>),
}

impl<'a> Iterator for ViewFields<'a> {
    type Item = Field<'a>;

    #[inline]
    fn next(&mut self) -> Option<Field<'a>> {
        match &mut self.repr {
            FieldsRepr::Record(r, index) => {
                let field = r.field(*index)?;
                *index += 1;
                Some(field)
            }
            FieldsRepr::Encoded(fields, Fields::All) => fields.next(),
            FieldsRepr::Encoded(fields, selection) => {
                let selection = *selection;
                fields.find(|f| selection.contains(f.name))
            }
            FieldsRepr::Single(field) => field.take(),
        }
    }
}

/// The rows a scan returns, reused across operations like [`Record`].
#[derive(Clone, Debug, Default)]
pub struct ScanResult {
    rows: Vec<(String, Record)>,
    len: usize,
}

impl ScanResult {
    /// An empty result.
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes every row, keeping the allocated rows for reuse.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the scan returned no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a row for `key` and returns its (empty) record for the store
    /// to fill.
    pub fn push_row(&mut self, key: &str) -> &mut Record {
        if self.len == self.rows.len() {
            self.rows.push((String::new(), Record::new()));
        }
        let (row_key, record) = &mut self.rows[self.len];
        self.len += 1;
        row_key.clear();
        row_key.push_str(key);
        record.clear();
        record
    }

    /// The rows, in the order the store returned them.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Record)> + '_ {
        self.rows[..self.len].iter().map(|(k, r)| (k.as_str(), r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::record;

    #[test]
    fn push_and_iterate_keep_order() {
        let r = record(&[("a", "1"), ("bb", ""), ("c", "333")]);
        let got: Vec<_> = r.iter().map(|f| (f.name, f.value)).collect();
        assert_eq!(got, vec![("a", &b"1"[..]), ("bb", b""), ("c", b"333")]);
        assert_eq!(r.get("c"), Some(&b"333"[..]));
        assert_eq!(r.get("zz"), None);
        assert_eq!(r.value_bytes(), 4);
    }

    /// Every kind of view shows what a read into a `Record` would hold,
    /// for every selection.
    #[test]
    fn views_show_what_a_copying_read_holds() {
        let stored = record(&[("field0", "a"), ("field1", "bb"), ("field2", "")]);
        let mut bytes = Vec::new();
        crate::codec::encode(&stored, &mut bytes);
        let encoded = EncodedRecord::parse(&bytes).unwrap();
        let one = vec!["field1".to_string()];
        let two = vec!["field2".to_string(), "field0".to_string()];
        let none = vec!["nope".to_string()];
        for selection in [
            Fields::All,
            Fields::Only(&one),
            Fields::Only(&two),
            Fields::Only(&none),
        ] {
            let mut copied = Record::new();
            crate::codec::decode(&bytes, selection, &mut copied).unwrap();
            let mut selected = stored.clone();
            selected.retain(selection);
            for view in [
                RecordView::encoded(encoded, selection),
                RecordView::from(&selected),
            ] {
                assert_eq!(view.iter().collect::<Record>(), copied, "{selection:?}");
                assert_eq!(view.len(), copied.len());
                assert_eq!(view.is_empty(), copied.is_empty());
                assert_eq!(view.value_bytes(), copied.value_bytes());
                assert_eq!(view.get("field1"), copied.get("field1"));
                let mut out = record(&[("before", "x")]);
                view.copy_to(&mut out);
                assert_eq!(out.len(), 1 + copied.len());
            }
        }
        let single = RecordView::single(Field {
            name: "v",
            value: b"raw",
        });
        assert_eq!(single.iter().collect::<Record>(), record(&[("v", "raw")]));
        assert_eq!((single.len(), single.value_bytes()), (1, 3));
        assert!(RecordView::empty().is_empty());
        assert_eq!(RecordView::empty().get("v"), None);
    }

    #[test]
    fn push_with_fills_in_place() {
        let mut r = Record::new();
        r.push_with("f", 3, |b| b.copy_from_slice(b"xyz"));
        r.push_with("g", 0, |_| {});
        assert_eq!(r.get("f"), Some(&b"xyz"[..]));
        assert_eq!(r.get("g"), Some(&b""[..]));
    }

    /// Fields pushed from a template and filled in place hold the same
    /// fields as pushing each one, after whatever the record held before,
    /// even when a fill writes over everything it gets besides the values.
    #[test]
    fn push_template_equals_pushing_each_field() {
        let long = "n".repeat(200);
        let names = [
            "a",
            "bb",
            "",
            "ccc",
            "field0",
            "field10",
            "fifteen_letters",
            &long,
        ];
        for len in [0, 1, 5, 6, 7, 100, 127, 128, 300] {
            let template = RecordTemplate::new(&names, len);
            assert_eq!((template.len(), template.value_len()), (8, len));
            for before in [&[][..], &[("first", "x")][..]] {
                let mut next = 0u8;
                let mut filled = record(before);
                let mut values = Vec::new();
                filled.push_template(&template, |area, starts| {
                    assert_eq!(starts.len(), names.len());
                    // Junk everywhere first: the frames are written after.
                    area.fill(0xEE);
                    for &at in starts {
                        let value: Vec<u8> = (0..len).map(|i| next.wrapping_add(i as u8)).collect();
                        area[at..at + len].copy_from_slice(&value);
                        values.push(value);
                        next = next.wrapping_add(31);
                    }
                });
                let mut pushed = record(before);
                for (name, value) in names.iter().zip(&values) {
                    pushed.push(name, value);
                }
                assert_eq!(filled, pushed, "len {len}");
                assert_eq!(filled.value_bytes(), pushed.value_bytes());
            }
        }
        let mut empty = Record::new();
        empty.push_template(&RecordTemplate::new::<&str>(&[], 10), |area, starts| {
            assert!(area.is_empty() && starts.is_empty())
        });
        assert!(empty.is_empty());
    }

    /// A record holds its fields in the codec's encoding, whatever built it.
    #[test]
    fn a_record_is_its_encoding() {
        let mut r = Record::new();
        r.push("field0", b"abc");
        r.push_with("f", 200, |v| v.fill(b'z'));
        r.push_bytes(b"", b"").unwrap();
        let mut framed = vec![6];
        framed.extend_from_slice(b"field0\x03abc\x01f\xc8\x01");
        framed.extend_from_slice(&[b'z'; 200]);
        framed.extend_from_slice(&[0, 0]);
        assert_eq!(r.encoded(), framed);
        assert_eq!(r.value_bytes(), 203);
    }

    #[test]
    fn clear_keeps_capacity() {
        let mut r = record(&[("field0", "0123456789")]);
        let cap = r.bytes.capacity();
        r.clear();
        assert!(r.is_empty());
        assert_eq!(r.bytes.capacity(), cap);
    }

    #[test]
    fn merge_replaces_and_appends() {
        let mut stored = record(&[("a", "1"), ("b", "2")]);
        stored.merge_from(&record(&[("b", "20"), ("c", "30")]));
        assert_eq!(stored, record(&[("a", "1"), ("b", "20"), ("c", "30")]));
    }

    #[test]
    fn retain_selects_fields() {
        let mut r = record(&[("a", "1"), ("b", "2"), ("c", "3")]);
        let only = vec!["c".to_string(), "a".to_string()];
        r.retain(Fields::Only(&only));
        assert_eq!(r, record(&[("a", "1"), ("c", "3")]));
        r.retain(Fields::All);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn push_bytes_rejects_invalid_names() {
        let mut r = Record::new();
        assert!(r.push_bytes(&[0xff], b"v").is_err());
        assert!(r.is_empty());
        r.push_bytes(b"ok", b"v").unwrap();
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn scan_rows_are_reused() {
        let mut s = ScanResult::new();
        s.push_row("k1").push("f", b"1");
        s.push_row("k2");
        assert_eq!(s.len(), 2);
        s.clear();
        assert!(s.is_empty());
        s.push_row("k3").push("g", b"3");
        let rows: Vec<_> = s.iter().map(|(k, r)| (k.to_string(), r.len())).collect();
        assert_eq!(rows, vec![("k3".to_string(), 1)]);
    }
}
