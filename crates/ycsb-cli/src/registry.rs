//! Every store the `ycsb` binary knows, by name.

use ycsb_db::StoreDescriptor;

/// The stores users can name with `-db` or as Java's `<db>` argument.
pub fn stores() -> Vec<StoreDescriptor> {
    vec![
        ycsb_basic::DESCRIPTOR,
        ycsb_memory::DESCRIPTOR,
        ycsb_rocksdb::DESCRIPTOR,
        ycsb_leveldb::DESCRIPTOR,
        ycsb_http::DESCRIPTOR,
        ycsb_redis::DESCRIPTOR,
    ]
}
