//! Measurement (filled in by the measurement work).
