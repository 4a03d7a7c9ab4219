//! A batch: the records (or keys alone) one store call carries, go-ycsb's
//! `batch.size`.

use crate::record::Record;
use crate::status::Status;

/// The keys of one batched store call, each with a record for inserts and
/// updates (reads and deletes use the keys alone).
///
/// A batch is a reusable buffer: the workload keeps one per thread and
/// refills it for every call, so that once its buffers have grown a batch
/// allocates nothing. Keys are kept back to back in one string; records
/// are kept in slots that keep their capacity across [`Batch::clear`].
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Every key, back to back.
    keys: String,
    /// Where each key ends in `keys`.
    ends: Vec<usize>,
    /// A record per key (slots beyond `ends.len()` are spare buffers).
    records: Vec<Record>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.ends.clear();
    }

    /// The number of keys in the batch.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch holds no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Adds `key` and returns its record, empty, to be filled (left empty
    /// for a read or a delete).
    pub fn push(&mut self, key: &str) -> &mut Record {
        self.keys.push_str(key);
        self.ends.push(self.keys.len());
        let index = self.ends.len() - 1;
        if self.records.len() <= index {
            self.records.push(Record::new());
        }
        let record = &mut self.records[index];
        record.clear();
        record
    }

    /// Adds `key` with `record`, which is swapped in (so no value is
    /// copied); `record` comes back holding a spare buffer of the batch.
    pub fn push_swap(&mut self, key: &str, record: &mut Record) {
        std::mem::swap(self.push(key), record);
    }

    /// The key at `index`.
    ///
    /// # Panics
    ///
    /// When `index` is not below [`Batch::len`].
    pub fn key(&self, index: usize) -> &str {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.keys[start..self.ends[index]]
    }

    /// The record at `index` (empty for reads and deletes).
    ///
    /// # Panics
    ///
    /// When `index` is not below [`Batch::len`].
    pub fn record(&self, index: usize) -> &Record {
        assert!(index < self.len(), "batch index {index} out of range");
        &self.records[index]
    }

    /// Every key with its record, in the order they were added.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Record)> + '_ {
        (0..self.len()).map(move |i| (self.key(i), &self.records[i]))
    }

    /// Keeps only the entries whose status in `statuses` (one per entry,
    /// in order) is not OK, in their order: what a retry of a batch sends
    /// again. Records are swapped in place; keys move within the key
    /// buffer (a retry's path, not the per-operation one).
    ///
    /// # Panics
    ///
    /// When `statuses` is shorter than the batch.
    pub fn retain_failed(&mut self, statuses: &[Status]) {
        assert!(statuses.len() >= self.len(), "a status per batch entry");
        let mut kept = 0;
        let mut write_end = 0;
        for (index, status) in statuses.iter().enumerate().take(self.len()) {
            if status.is_ok() {
                continue;
            }
            let start = if index == 0 { 0 } else { self.ends[index - 1] };
            let end = self.ends[index];
            let bytes = move_key(&mut self.keys, start..end, write_end);
            write_end += bytes;
            self.ends[kept] = write_end;
            self.records.swap(kept, index);
            kept += 1;
        }
        self.ends.truncate(kept);
        self.keys.truncate(write_end);
    }
}

/// Moves the bytes of `range` of `keys` to `to` (at or before its start)
/// and returns how many moved; whole keys only, so the string stays UTF-8.
fn move_key(keys: &mut String, range: std::ops::Range<usize>, to: usize) -> usize {
    let len = range.len();
    if range.start != to {
        let moved = keys[range].to_string();
        keys.replace_range(to..to + len, &moved);
    }
    len
}

/// A batch of updates as one write batch of an embedded engine (RocksDB's,
/// LevelDB's), whose writes cannot be read before they are written: each
/// key's updates merged in their order into one value, so that two
/// updates of one key in a batch both apply. Keeps its buffers.
#[derive(Clone, Debug, Default)]
pub struct UpdateMerger {
    /// The batch's entries ordered by key, equal keys in batch order.
    order: Vec<usize>,
    /// The value being merged into.
    value: Vec<u8>,
    /// The value merged so far, while the next update merges into `value`.
    scratch: Vec<u8>,
}

impl UpdateMerger {
    /// An empty merger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Merges the updates of `batch`: for the first update of each key,
    /// `first(key, changes, out)` reads the stored record and merges
    /// `changes` into `out` (answering `NOT_FOUND` for a missing key, an
    /// error otherwise); the key's later updates are merged into that
    /// with [`codec::merge`](crate::codec::merge); then `write(key, value)`
    /// adds the key's final value to the write batch. Each entry's status
    /// goes into `statuses` (its key's first update's, or the merge's
    /// error): `OK` means written once the write batch is.
    ///
    /// # Panics
    ///
    /// When `statuses` is shorter than the batch.
    pub fn merge(
        &mut self,
        batch: &Batch,
        statuses: &mut [Status],
        mut first: impl FnMut(&str, &Record, &mut Vec<u8>) -> Status,
        mut write: impl FnMut(&str, &[u8]),
    ) {
        let n = batch.len();
        self.order.clear();
        self.order.extend(0..n);
        // Unstable with the index as a tie-break: stable without the merge
        // sort's buffer.
        self.order
            .sort_unstable_by(|&a, &b| batch.key(a).cmp(batch.key(b)).then(a.cmp(&b)));
        let mut start = 0;
        while start < n {
            let key = batch.key(self.order[start]);
            let mut end = start + 1;
            while end < n && batch.key(self.order[end]) == key {
                end += 1;
            }
            self.value.clear();
            let mut status = first(key, batch.record(self.order[start]), &mut self.value);
            for &index in &self.order[start + 1..end] {
                if !status.is_ok() {
                    break;
                }
                std::mem::swap(&mut self.value, &mut self.scratch);
                self.value.clear();
                if let Err(e) =
                    crate::codec::merge(&self.scratch, batch.record(index), &mut self.value)
                {
                    status = e.into();
                }
            }
            if status.is_ok() {
                write(key, &self.value);
            }
            for &index in &self.order[start..end] {
                statuses[index] = status;
            }
            start = end;
        }
    }
}

/// The status of a whole batch from its records' statuses: OK when every
/// record's is, else the first record's that is not (what go-ycsb's
/// `BATCH_*` measurement counts).
pub fn batch_status(statuses: &[Status]) -> Status {
    statuses
        .iter()
        .copied()
        .find(|s| !s.is_ok())
        .unwrap_or(Status::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(batch: &Batch) -> Vec<&str> {
        batch.iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn a_batch_keeps_keys_and_records_in_order_and_reuses_its_buffers() {
        let mut batch = Batch::new();
        let mut values = Record::new();
        values.push("f", b"1");
        batch.push_swap("user1", &mut values);
        batch.push("user22").push("g", b"2");
        assert_eq!(keys(&batch), ["user1", "user22"]);
        assert_eq!(batch.record(0).get("f"), Some(&b"1"[..]));
        assert_eq!(batch.record(1).get("g"), Some(&b"2"[..]));
        batch.clear();
        assert!(batch.is_empty());
        assert!(batch.push("k").is_empty(), "a reused slot arrives empty");
        assert_eq!(keys(&batch), ["k"]);
    }

    #[test]
    fn updates_of_one_key_in_a_batch_merge_in_order() {
        let mut stored = std::collections::BTreeMap::new();
        let mut a = Record::new();
        a.push("f", b"0");
        a.push("g", b"0");
        stored.insert("a".to_string(), crate::codec::encoded(&a).to_vec());
        let mut batch = Batch::new();
        batch.push("a").push("f", b"1");
        batch.push("missing").push("f", b"1");
        batch.push("a").push("g", b"2");
        let mut statuses = [Status::Error; 3];
        let mut written = Vec::new();
        UpdateMerger::new().merge(
            &batch,
            &mut statuses,
            |key, changes, out| match stored.get(key) {
                Some(value) => match crate::codec::merge(value, changes, out) {
                    Ok(()) => Status::Ok,
                    Err(e) => e.into(),
                },
                None => Status::NotFound,
            },
            |key, value| written.push((key.to_string(), value.to_vec())),
        );
        assert_eq!(statuses, [Status::Ok, Status::NotFound, Status::Ok]);
        let mut expected = Record::new();
        expected.push("f", b"1");
        expected.push("g", b"2");
        assert_eq!(
            written,
            [("a".to_string(), crate::codec::encoded(&expected).to_vec())]
        );
    }

    #[test]
    fn retain_failed_keeps_the_failed_entries_in_order() {
        let mut batch = Batch::new();
        for (i, key) in ["a", "bb", "ccc", "dddd"].iter().enumerate() {
            batch.push(key).push("n", i.to_string().as_bytes());
        }
        batch.retain_failed(&[Status::Ok, Status::Error, Status::Ok, Status::NotFound]);
        assert_eq!(keys(&batch), ["bb", "dddd"]);
        assert_eq!(batch.record(0).get("n"), Some(&b"1"[..]));
        assert_eq!(batch.record(1).get("n"), Some(&b"3"[..]));
        assert_eq!(
            batch_status(&[Status::Ok, Status::NotFound, Status::Error]),
            Status::NotFound
        );
        assert_eq!(batch_status(&[Status::Ok, Status::BatchedOk]), Status::Ok);
    }
}
