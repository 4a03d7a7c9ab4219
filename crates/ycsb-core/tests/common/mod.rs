//! A memory store that notes what a workload asks of it, shared by the
//! tests of what ycsb asks a store for.

use std::sync::Mutex;
use ycsb_db::{ReadOp, ScanOp, Visit};

use ycsb_core::db::{
    Properties, Record, RecordView, ScanResult, Status, Store, StoreError, StoreThread,
    ThreadContext,
};
use ycsb_core::properties::load_file;
use ycsb_memory::MemoryStore;

/// One operation asked of the store.
#[derive(Clone, Debug, PartialEq)]
pub enum Asked {
    /// A read: copied into the caller's record (`read`) or shown in place
    /// (`read_in_place`), with the number of fields it returned.
    Read {
        key: String,
        in_place: bool,
        fields: usize,
    },
    /// An update, with the names of the fields it wrote.
    Update { key: String, fields: Vec<String> },
}

/// A [`MemoryStore`] whose threads note every read and update.
#[derive(Default)]
pub struct Noting {
    inner: MemoryStore,
    asked: Mutex<Vec<Asked>>,
}

impl Noting {
    /// What was asked since the last call, in order (one thread's run
    /// gives its order).
    pub fn take(&self) -> Vec<Asked> {
        std::mem::take(&mut self.asked.lock().unwrap())
    }
}

struct NotingThread<'a> {
    store: &'a Noting,
    inner: Box<dyn StoreThread + 'a>,
}

impl Store for Noting {
    fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(NotingThread {
            store: self,
            inner: self.inner.thread(context)?,
        }))
    }
}

impl NotingThread<'_> {
    fn note(&self, asked: Asked) {
        self.store.asked.lock().unwrap().push(asked);
    }
}

impl StoreThread for NotingThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        let status = self.inner.read(op, out);
        self.note(Asked::Read {
            key: op.key.to_string(),
            in_place: false,
            fields: out.len(),
        });
        status
    }

    fn read_in_place(&mut self, op: &ReadOp<'_>, buf: &mut Record, visit: &mut Visit) -> Status {
        assert!(buf.is_empty(), "the scratch record arrives empty");
        let mut record = Record::new();
        let status = self.inner.read(op, &mut record);
        if status.is_ok() {
            visit(RecordView::from(&record));
        }
        self.note(Asked::Read {
            key: op.key.to_string(),
            in_place: true,
            fields: record.len(),
        });
        status
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        self.inner.scan(op, out)
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        let fields = values.iter().map(|f| f.name.to_string()).collect();
        self.note(Asked::Update {
            key: key.to_string(),
            fields,
        });
        self.inner.update(table, key, values)
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        self.inner.insert(table, key, values)
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        self.inner.delete(table, key)
    }
}

/// The properties of the shipped `workloads/<name>`.
pub fn shipped_workload(name: &str) -> Properties {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads")
        .join(name);
    let mut props = Properties::new();
    load_file(&path, &mut props).unwrap();
    props
}
