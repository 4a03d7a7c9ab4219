//! The server binding (work in progress).
