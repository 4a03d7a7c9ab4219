//! Errors for bad generator parameters.

use std::path::PathBuf;

/// A generator parameter or input that cannot produce a valid distribution.
///
/// Each message is one line naming the offending parameter and value; the
/// caller (the workload) adds which property the value came from.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum GeneratorError {
    /// The lower bound of an inclusive range is above its upper bound.
    #[error("empty range: lower bound {min} is above upper bound {max}")]
    EmptyRange {
        /// The lower bound.
        min: u64,
        /// The upper bound.
        max: u64,
    },
    /// An inclusive range covering all 2^64 values, whose size does not fit
    /// in a `u64`.
    #[error("range {min}..={max} is too large: its size does not fit in 64 bits")]
    RangeTooLarge {
        /// The lower bound.
        min: u64,
        /// The upper bound.
        max: u64,
    },
    /// A zipfian constant where Gray et al.'s algorithm is not defined (1)
    /// or not computable: outside 0..=16 (see `MAX_THETA`).
    #[error("zipfian constant {0} must be within 0 and 16 and must not be 1")]
    InvalidTheta(f64),
    /// A precomputed zeta value that cannot belong to any item count.
    #[error("precomputed zeta {0} must be a finite number of at least 1")]
    InvalidZeta(f64),
    /// A fraction outside `[0, 1]`.
    #[error("{name} {value} must be within 0 and 1")]
    InvalidFraction {
        /// The parameter's name.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A hotspot whose hot or cold set is empty although operations are sent
    /// to it.
    #[error(
        "hotspot over {items} items with hot data fraction {hot_data_fraction} \
         has an empty {set} set that receives a fraction {opn_fraction} of operations"
    )]
    EmptyHotspotSet {
        /// Which set is empty: `"hot"` or `"cold"`.
        set: &'static str,
        /// The number of items in the whole range.
        items: u64,
        /// The hot data fraction.
        hot_data_fraction: f64,
        /// The fraction of operations the empty set would receive.
        opn_fraction: f64,
    },
    /// An exponential percentile outside the open interval (0, 100).
    #[error("exponential percentile {0} must be above 0 and below 100")]
    InvalidPercentile(f64),
    /// An exponential range or mean that is not a positive finite number.
    #[error("exponential {name} {value} must be a positive finite number")]
    InvalidExponential {
        /// `"range"` or `"mean"`.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A thread id that is not below the thread count, or no threads.
    #[error("thread id {thread_id} is invalid for {thread_count} threads")]
    InvalidThread {
        /// The thread's 0-based id.
        thread_id: u64,
        /// The number of threads.
        thread_count: u64,
    },
    /// A weighted choice without choices.
    #[error("weighted choice has no choices")]
    NoChoices,
    /// A weight that is negative, infinite or NaN.
    #[error("weight {weight} of choice {index} must be a finite number of at least 0")]
    InvalidWeight {
        /// The 0-based position of the choice.
        index: usize,
        /// The offending weight.
        weight: f64,
    },
    /// A weighted choice whose weights are all zero.
    #[error("weighted choice has only zero weights")]
    ZeroWeights,
    /// An acknowledgement window size that is not a power of two.
    #[error("acknowledgement window {0} must be a power of two")]
    InvalidWindow(usize),
    /// An acknowledgement of a number the counter never handed out.
    #[error("cannot acknowledge {value}: it was never claimed from the counter")]
    NotClaimed {
        /// The acknowledged number.
        value: u64,
    },
    /// A number acknowledged twice.
    #[error("cannot acknowledge {value}: it is already acknowledged")]
    AlreadyAcknowledged {
        /// The acknowledged number.
        value: u64,
    },
    /// More numbers in flight than the acknowledgement window holds.
    #[error(
        "cannot acknowledge {value}: more than {window} inserts are unacknowledged \
         (oldest pending is {oldest})"
    )]
    WindowOverflow {
        /// The acknowledged number.
        value: u64,
        /// The oldest number not yet acknowledged.
        oldest: u64,
        /// The window size.
        window: usize,
    },
    /// A histogram block size of zero.
    #[error("histogram block size must be at least 1")]
    ZeroBlockSize,
    /// A histogram whose counts are all zero.
    #[error("histogram has no entries: all bucket counts are 0")]
    EmptyHistogram,
    /// A histogram whose values or total count do not fit in 64 bits.
    #[error("histogram is too large: {0}")]
    HistogramTooLarge(&'static str),
    /// A histogram file that cannot be read.
    #[error("cannot read histogram file {}: {source}", path.display())]
    HistogramRead {
        /// The file's path as given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A malformed line in a histogram file.
    #[error("{}:{line}: {problem}", path.display())]
    HistogramSyntax {
        /// The file's path as given.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with the line.
        problem: String,
    },
}

/// The size of the inclusive range `min..=max`.
pub(crate) fn range_len(min: u64, max: u64) -> Result<u64, GeneratorError> {
    if min > max {
        return Err(GeneratorError::EmptyRange { min, max });
    }
    (max - min)
        .checked_add(1)
        .ok_or(GeneratorError::RangeTooLarge { min, max })
}
