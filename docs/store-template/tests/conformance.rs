//! The store keeps the whole store contract, and its capacity.

use ycsb_db::testing::{assert_conforms, record, Contract};
use ycsb_db::{Properties, Status, Store, ThreadContext};
use ycsb_mystore::MyStore;

#[test]
fn keeps_the_store_contract() {
    let store = MyStore::open(&Properties::new()).unwrap();
    assert_conforms(&store, &Contract::new());
}

#[test]
fn an_insert_beyond_the_capacity_fails() {
    let props = Properties::new().with_flags(&[("mystore.capacity", "1")]);
    let store = MyStore::open(&props).unwrap();
    let mut thread = store.thread(ThreadContext::new(0, 1)).unwrap();
    let value = record(&[("field0", "v")]);
    assert_eq!(thread.insert("t", "a", &value), Status::Ok);
    assert_eq!(thread.insert("t", "b", &value), Status::Error);
}

#[test]
fn a_bad_capacity_is_refused_naming_the_property() {
    let props = Properties::new().with_flags(&[("mystore.capacity", "many")]);
    let err = MyStore::open(&props).unwrap_err().to_string();
    assert!(err.contains("mystore.capacity"), "{err}");
}
