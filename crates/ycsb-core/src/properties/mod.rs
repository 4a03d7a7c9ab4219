//! Property files (filled in by the properties work).
