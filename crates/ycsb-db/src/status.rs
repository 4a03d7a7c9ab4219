//! The outcome of one store operation.

use std::fmt;

/// The outcome of one operation, as Java YCSB's `site.ycsb.Status`.
///
/// Statuses are plain values: a store reports failure by returning one,
/// never by panicking. The report counts them per operation as
/// `Return=<NAME>` lines, using [`Status::name`].
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// The operation completed successfully.
    Ok,
    /// The operation failed.
    Error,
    /// The requested record was not found.
    NotFound,
    /// The store does not implement this operation.
    NotImplemented,
    /// The operation completed but the store or the data is in an unexpected
    /// state (for example a value that fails integrity verification).
    UnexpectedState,
    /// The request was malformed.
    BadRequest,
    /// The operation was refused (permissions, authentication).
    Forbidden,
    /// The store is unavailable (connection lost, server down, overloaded).
    ServiceUnavailable,
    /// The operation was queued in a batch; its outcome is known later.
    BatchedOk,
}

impl Status {
    /// Every status, in the order reports list them.
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::Error,
        Status::NotFound,
        Status::NotImplemented,
        Status::UnexpectedState,
        Status::BadRequest,
        Status::Forbidden,
        Status::ServiceUnavailable,
        Status::BatchedOk,
    ];

    /// The number of distinct statuses (the length of [`Status::ALL`]).
    pub const COUNT: usize = Self::ALL.len();

    /// The name Java YCSB prints for this status (`OK`, `NOT_FOUND`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Error => "ERROR",
            Status::NotFound => "NOT_FOUND",
            Status::NotImplemented => "NOT_IMPLEMENTED",
            Status::UnexpectedState => "UNEXPECTED_STATE",
            Status::BadRequest => "BAD_REQUEST",
            Status::Forbidden => "FORBIDDEN",
            Status::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            Status::BatchedOk => "BATCHED_OK",
        }
    }

    /// A dense index in `0..Status::COUNT`, for per-status counters kept in
    /// arrays instead of maps.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether the operation succeeded (`OK` or `BATCHED_OK`), as Java's
    /// `Status.isOk`.
    pub const fn is_ok(self) -> bool {
        matches!(self, Status::Ok | Status::BatchedOk)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_matches_position_in_all() {
        for (i, s) in Status::ALL.iter().enumerate() {
            assert_eq!(s.index(), i, "{s}");
        }
    }

    #[test]
    fn names_are_javas() {
        assert_eq!(Status::Ok.to_string(), "OK");
        assert_eq!(Status::NotFound.name(), "NOT_FOUND");
        assert_eq!(Status::UnexpectedState.name(), "UNEXPECTED_STATE");
        assert!(Status::BatchedOk.is_ok());
        assert!(!Status::Error.is_ok());
    }
}
