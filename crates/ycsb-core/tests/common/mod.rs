//! A memory store that notes what a workload asks of it, shared by the
//! tests of what ycsb asks a store for.

use std::sync::Mutex;

use ycsb_core::db::{
    Fields, Properties, Record, RecordView, ScanResult, Status, Store, StoreError, StoreThread,
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
    fn read(&mut self, table: &str, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
        let status = self.inner.read(table, key, fields, out);
        let (key, fields) = (key.to_string(), out.len());
        self.note(Asked::Read {
            key,
            in_place: false,
            fields,
        });
        status
    }

    fn read_in_place(
        &mut self,
        table: &str,
        key: &str,
        fields: Fields<'_>,
        scratch: &mut Record,
        visit: &mut dyn FnMut(RecordView<'_>),
    ) -> Status {
        assert!(scratch.is_empty(), "scratch arrives empty");
        let mut record = Record::new();
        let status = self.inner.read(table, key, fields, &mut record);
        if status.is_ok() {
            visit(RecordView::from(&record));
        }
        let (key, fields) = (key.to_string(), record.len());
        self.note(Asked::Read {
            key,
            in_place: true,
            fields,
        });
        status
    }

    fn scan(
        &mut self,
        table: &str,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Status {
        self.inner.scan(table, start_key, count, fields, out)
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
