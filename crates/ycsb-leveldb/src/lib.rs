//! The leveldb binding (work in progress).
