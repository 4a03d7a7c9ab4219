//! The redis binding (work in progress).
