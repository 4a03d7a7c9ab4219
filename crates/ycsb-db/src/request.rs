//! What a read or a scan asks a store for, as one value with named parts.
//!
//! A read names a table and a key (both strings) and a selection of fields;
//! as positional arguments the two strings could be swapped without a
//! compiler noticing, and every store and every wrapper repeated the same
//! five-parameter signatures. A [`ReadOp`] or [`ScanOp`] is built once per
//! operation by the workload and passed by reference, so a wrapper (the
//! error budget, a test's recorder) forwards one pointer. Code that builds
//! one from variables names the parts (`ReadOp { table, key, fields }`);
//! `new` is for literals, as in tests and examples.

use crate::{Fields, RecordView};

/// One read: the record at `key` in `table`, and which of its fields.
///
/// [`StoreThread::read`](crate::StoreThread::read) and
/// [`StoreThread::read_in_place`](crate::StoreThread::read_in_place) take
/// the same request and must select and report the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOp<'a> {
    /// The table (YCSB's `table` property, `usertable` by default).
    pub table: &'a str,
    /// The record's key.
    pub key: &'a str,
    /// Which of the record's fields to report.
    pub fields: Fields<'a>,
}

impl<'a> ReadOp<'a> {
    /// A read of `fields` of the record at `key` in `table`.
    pub const fn new(table: &'a str, key: &'a str, fields: Fields<'a>) -> Self {
        Self { table, key, fields }
    }
}

/// One scan: up to `count` records of `table` in key order, starting at
/// `start_key` (inclusive), and which fields of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOp<'a> {
    /// The table.
    pub table: &'a str,
    /// The first key, included when it is stored.
    pub start_key: &'a str,
    /// The most records to report (YCSB's scan length).
    pub count: usize,
    /// Which fields of each record to report.
    pub fields: Fields<'a>,
}

impl<'a> ScanOp<'a> {
    /// A scan of up to `count` records of `table` from `start_key`,
    /// reporting `fields` of each.
    pub const fn new(table: &'a str, start_key: &'a str, count: usize, fields: Fields<'a>) -> Self {
        Self {
            table,
            start_key,
            count,
            fields,
        }
    }
}

/// What an in-place read calls with the record it found
/// ([`StoreThread::read_in_place`](crate::StoreThread::read_in_place)):
/// the fields borrowed from wherever the store holds them.
pub type Visit<'v> = dyn FnMut(RecordView<'_>) + 'v;
