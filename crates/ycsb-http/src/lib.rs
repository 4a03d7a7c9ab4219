//! The http binding (work in progress).
