//! Simpleleveldb-style HTTP serving (work in progress).
