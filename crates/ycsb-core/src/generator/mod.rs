//! Number generators (filled in by the generators work).
