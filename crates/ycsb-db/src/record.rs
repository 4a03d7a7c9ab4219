//! Records (field name/value pairs) and field selections, laid out so that
//! a workload and a store can exchange them without allocating per
//! operation.

use crate::codec::{EncodedFields, EncodedRecord};

/// One field of a [`Record`]: a name and its value bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    /// The field's name, for example `field0`.
    pub name: &'a str,
    /// The field's value.
    pub value: &'a [u8],
}

/// A list of field names laid out as a [`Record`] keeps its names (one
/// string, and where each name ends), so that
/// [`Record::push_fields_with`] copies them all at once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldNames {
    names: String,
    ends: Vec<usize>,
}

impl FieldNames {
    /// The names, in order.
    pub fn new<S: AsRef<str>>(names: &[S]) -> Self {
        let mut list = FieldNames::default();
        for name in names {
            list.names.push_str(name.as_ref());
            list.ends.push(list.names.len());
        }
        list
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no name.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.names[start..end])
    }
}

/// Where one field's name and value end in a [`Record`]'s buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FieldEnds {
    name_end: usize,
    value_end: usize,
}

/// An ordered list of fields, stored in two flat buffers.
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
    names: String,
    values: Vec<u8>,
    ends: Vec<FieldEnds>,
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
            names: String::with_capacity(fields * 8),
            values: Vec::with_capacity(value_bytes),
            ends: Vec::with_capacity(fields),
        }
    }

    /// Removes every field, keeping the allocated capacity.
    pub fn clear(&mut self) {
        self.names.clear();
        self.values.clear();
        self.ends.clear();
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the record has no field.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The total number of value bytes over all fields.
    pub fn value_bytes(&self) -> usize {
        self.values.len()
    }

    /// Appends a field.
    pub fn push(&mut self, name: &str, value: &[u8]) {
        self.names.push_str(name);
        self.values.extend_from_slice(value);
        self.ends.push(FieldEnds {
            name_end: self.names.len(),
            value_end: self.values.len(),
        });
    }

    /// Appends a field whose value of `len` bytes is written in place by
    /// `fill`, so that generated values need no intermediate buffer.
    ///
    /// The slice handed to `fill` holds zeroes or stale bytes; `fill` must
    /// overwrite all of it.
    pub fn push_with(&mut self, name: &str, len: usize, fill: impl FnOnce(&mut [u8])) {
        self.names.push_str(name);
        let start = self.values.len();
        self.values.resize(start + len, 0);
        fill(&mut self.values[start..]);
        self.ends.push(FieldEnds {
            name_end: self.names.len(),
            value_end: self.values.len(),
        });
    }

    /// Appends one field per name in `names`, each with a value of `len`
    /// bytes, all of them written in place by one call of `fill`: it gets
    /// the values one after another (`names.len() * len` bytes, zeroed),
    /// so that a generator fills a whole record in one run.
    pub fn push_fields_with(
        &mut self,
        names: &FieldNames,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) {
        let start = self.values.len();
        self.values.resize(start + names.len() * len, 0);
        fill(&mut self.values[start..]);
        self.push_names(names, start, len);
    }

    /// The names and ends of fields of `len` bytes each whose values lie
    /// one after another from `start`.
    fn push_names(&mut self, names: &FieldNames, start: usize, len: usize) {
        let names_start = self.names.len();
        self.names.push_str(&names.names);
        self.ends.extend(
            names
                .ends
                .iter()
                .zip(1..)
                .map(|(&name_end, fields)| FieldEnds {
                    name_end: names_start + name_end,
                    value_end: start + fields * len,
                }),
        );
    }

    /// Appends a field whose value of `len` bytes is produced `N` bytes at
    /// a time by `next_chunk` (the last chunk is cut to fit).
    ///
    /// Unlike [`push_with`](Self::push_with) the value buffer is never
    /// zeroed first: generated values are written once.
    #[inline]
    pub fn push_chunks<const N: usize>(
        &mut self,
        name: &str,
        len: usize,
        next_chunk: impl FnMut() -> [u8; N],
    ) {
        self.names.push_str(name);
        self.fill_values(len, next_chunk);
        self.ends.push(FieldEnds {
            name_end: self.names.len(),
            value_end: self.values.len(),
        });
    }

    /// Appends one field per name in `names`, each with a value of `len`
    /// bytes produced `N` bytes at a time by `next_chunk` (each field's
    /// last chunk is cut to fit).
    ///
    /// The same bytes as [`push_chunks`](Self::push_chunks) for each name
    /// in turn (every value starts with a fresh chunk, as Java YCSB's
    /// values each start a fresh random group), with the buffer reserved
    /// once for the whole record: for ten 100-byte fields the per-field
    /// set-up was a third of the work.
    pub fn push_fields_chunked<S: AsRef<str>, const N: usize>(
        &mut self,
        names: &[S],
        len: usize,
        mut next_chunk: impl FnMut() -> [u8; N],
    ) {
        let Some(last) = names.len().checked_sub(1) else {
            return;
        };
        let start = self.values.len();
        let chunks_per_field = len.div_ceil(N);
        // A field's cut chunk spills into the next field's bytes, which
        // that field then overwrites; only the last one needs room past
        // the end.
        self.values.reserve(last * len + chunks_per_field * N);
        let spare = self.values.spare_capacity_mut().as_mut_ptr().cast::<u8>();
        for (index, name) in names.iter().enumerate() {
            // SAFETY: field `index` writes `chunks_per_field * N` bytes
            // from offset `index * len`, which ends within the
            // `last * len + chunks_per_field * N` bytes reserved.
            unsafe { write_chunks(spare.add(index * len), chunks_per_field, &mut next_chunk) };
            self.names.push_str(name.as_ref());
            self.ends.push(FieldEnds {
                name_end: self.names.len(),
                value_end: start + (index + 1) * len,
            });
        }
        // SAFETY: the fields' chunks initialised every byte of
        // `start..start + names.len() * len`, within the capacity reserved.
        unsafe { self.values.set_len(start + names.len() * len) };
    }

    /// Appends `len` value bytes produced `N` at a time by `next_chunk`.
    #[inline]
    fn fill_values<const N: usize>(&mut self, len: usize, mut next_chunk: impl FnMut() -> [u8; N]) {
        let start = self.values.len();
        let count = len.div_ceil(N);
        self.values.reserve(count * N);
        // Chunks go straight into the spare capacity: `extend_from_slice`
        // per chunk would check the capacity and update the length for
        // every chunk, which cost more than generating it.
        let spare = self.values.spare_capacity_mut().as_mut_ptr().cast::<u8>();
        // SAFETY: `count * N` bytes were reserved past the length.
        unsafe { write_chunks(spare, count, &mut next_chunk) };
        // SAFETY: the chunks initialised `count * N` >= `len` bytes past
        // the old length, within the capacity reserved for them.
        unsafe { self.values.set_len(start + len) };
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
        let end = *self.ends.get(index)?;
        let start = if index == 0 {
            FieldEnds::default()
        } else {
            self.ends[index - 1]
        };
        Some(Field {
            name: &self.names[start.name_end..end.name_end],
            value: &self.values[start.value_end..end.value_end],
        })
    }

    /// The fields in the order they were pushed.
    pub fn iter(&self) -> RecordFields<'_> {
        RecordFields {
            names: &self.names,
            values: &self.values,
            ends: self.ends.iter(),
            start: FieldEnds::default(),
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
        // Rebuilding keeps the buffers flat; records are small (tens of
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

/// The fields of a [`Record`], in the order they were pushed.
#[derive(Clone, Debug)]
pub struct RecordFields<'a> {
    names: &'a str,
    values: &'a [u8],
    ends: std::slice::Iter<'a, FieldEnds>,
    start: FieldEnds,
}

impl<'a> Iterator for RecordFields<'a> {
    type Item = Field<'a>;

    #[inline]
    fn next(&mut self) -> Option<Field<'a>> {
        let end = *self.ends.next()?;
        let start = std::mem::replace(&mut self.start, end);
        // Every update goes through here once per stored field (the merge
        // looks each one up among the changes), so the name is cut without
        // `str` slicing's char-boundary checks: `ends` only ever records
        // the lengths of `names` after whole `&str`s were appended, and
        // they only grow, so each range lies in bounds on char boundaries.
        debug_assert!(self.names.is_char_boundary(start.name_end));
        debug_assert!(self.names.is_char_boundary(end.name_end));
        // SAFETY: see above.
        let name = unsafe { self.names.get_unchecked(start.name_end..end.name_end) };
        Some(Field {
            name,
            value: &self.values[start.value_end..end.value_end],
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ends.size_hint()
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

/// Which fields an operation reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fields<'a> {
    /// Every field of the record.
    All,
    /// Only the named fields.
    Only(&'a [String]),
}

impl Fields<'_> {
    /// Whether the field called `name` is selected.
    pub fn contains(&self, name: &str) -> bool {
        match self {
            Fields::All => true,
            Fields::Only(names) => names.iter().any(|n| n == name),
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

/// Writes `count` chunks from `next_chunk` one after another from `out`.
///
/// # Safety
///
/// `out` must be valid for writes of `count * N` bytes.
#[inline]
unsafe fn write_chunks<const N: usize>(
    out: *mut u8,
    count: usize,
    next_chunk: &mut impl FnMut() -> [u8; N],
) {
    let chunks = out.cast::<[u8; N]>();
    let mut i = 0;
    while i + 4 <= count {
        let (a, b, c, d) = (next_chunk(), next_chunk(), next_chunk(), next_chunk());
        // SAFETY: chunks `i..i + 4` lie within the `count * N` bytes the
        // caller vouches for; `[u8; N]` has alignment 1.
        unsafe {
            chunks.add(i).write(a);
            chunks.add(i + 1).write(b);
            chunks.add(i + 2).write(c);
            chunks.add(i + 3).write(d);
        }
        i += 4;
    }
    while i < count {
        // SAFETY: as above, i < count.
        unsafe { chunks.add(i).write(next_chunk()) };
        i += 1;
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

    #[test]
    fn push_chunks_cuts_the_last_chunk() {
        for len in [0, 1, 7, 8, 9, 100] {
            let mut r = Record::new();
            let mut n = 0u8;
            r.push_chunks("f", len, || {
                n += 1;
                [n; 8]
            });
            let value = r.get("f").unwrap();
            assert_eq!(value.len(), len);
            assert!(value
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i / 8) as u8 + 1));
        }
    }

    #[test]
    fn push_fields_chunked_equals_pushing_each_field() {
        for len in [0, 1, 8, 13, 100] {
            let names = ["a", "bb", "ccc"];
            let counter = |n: &mut u8| {
                *n = n.wrapping_add(1);
                [*n, n.wrapping_mul(3), 7, 9, *n, 1, 2, 3]
            };
            let mut n = 0u8;
            let mut together = record(&[("first", "x")]);
            together.push_fields_chunked(&names, len, || counter(&mut n));
            // Every field starts with a fresh chunk.
            let mut m = 0u8;
            let mut expected = record(&[("first", "x")]);
            for name in names {
                expected.push_chunks(name, len, || counter(&mut m));
            }
            assert_eq!(together, expected, "len {len}");
            assert_eq!(n, m, "len {len}: as many chunks drawn");
        }
        let mut empty = Record::new();
        empty.push_fields_chunked::<&str, 8>(&[], 10, || unreachable!());
        assert!(empty.is_empty());
    }

    /// A record filled in one run holds the same fields as pushing each
    /// field's slice of the run, after whatever the record held before.
    #[test]
    fn push_fields_with_equals_pushing_each_field() {
        let names = ["a", "bb", "", "ccc"];
        let list = FieldNames::new(&names);
        assert_eq!(list.iter().collect::<Vec<_>>(), names);
        assert_eq!((list.len(), list.is_empty()), (4, false));
        for len in [0, 1, 5, 6, 7, 100] {
            let run: Vec<u8> = (0..names.len() * len).map(|i| i as u8).collect();
            let mut filled = record(&[("first", "x")]);
            filled.push_fields_with(&list, len, |out| {
                assert!(out.iter().all(|&b| b == 0), "len {len}: zeroed");
                out.copy_from_slice(&run);
            });
            let mut pushed = record(&[("first", "x")]);
            for (name, value) in names.iter().zip(run.chunks(len.max(1)).chain([&[][..]; 4])) {
                pushed.push(name, value);
            }
            assert_eq!(filled, pushed, "len {len}");
        }
        let mut empty = Record::new();
        empty.push_fields_with(&FieldNames::new::<&str>(&[]), 10, |out| {
            assert!(out.is_empty())
        });
        assert!(empty.is_empty());
    }

    #[test]
    fn clear_keeps_capacity() {
        let mut r = record(&[("field0", "0123456789")]);
        let cap = r.values.capacity();
        r.clear();
        assert!(r.is_empty());
        assert_eq!(r.values.capacity(), cap);
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
