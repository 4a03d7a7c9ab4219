//! The rocksdb binding (work in progress).
