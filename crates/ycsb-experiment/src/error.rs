//! What can go wrong, typed, so that the caller decides how to say it.

use std::path::PathBuf;

/// A refused matrix: the file, the line of the offending key or value, and
/// what is wrong with it. Displayed as one line, `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
#[non_exhaustive]
pub struct MatrixError {
    /// The matrix file.
    pub path: PathBuf,
    /// The 1-based line, when the problem is on one (not for an unreadable
    /// file).
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Why an experiment stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// The matrix was refused before anything ran.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
    /// A file or directory could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A result file (export, cell record, time series) is not the JSON
    /// it should be.
    #[error("{context}: {source}")]
    Json {
        /// The file or what was being encoded.
        context: String,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// A cell's JSON export cannot be read as one.
    #[error("{}: {source}", path.display())]
    Export {
        /// The export.
        path: std::path::PathBuf,
        /// Why it cannot be read.
        #[source]
        source: ycsb_results::ResultsError,
    },
    /// A program the experiment needs (cargo, cp, the `ycsb` binary,
    /// redis-server, taskset) is missing, failed or lacks something the
    /// matrix names (a store).
    #[error("{0}")]
    Tool(String),
    /// A memory limit cannot be enforced: no memory cgroup controller, or
    /// not allowed to create one.
    #[error("{0}")]
    Cgroup(String),
    /// A name from the matrix would make a path outside the directory it
    /// is joined to (refused by the matrix's validation first; this is the
    /// last check before the filesystem).
    #[error("{}: '{name}' cannot be a directory name there: {why}", dir.display())]
    UnsafePath {
        /// The directory the name was to be joined to.
        dir: PathBuf,
        /// The name.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// Something the runner did not make is where it would delete or
    /// replace a directory of its own; it is left untouched.
    #[error("{} exists and was not made by cargo xtask experiment: it is left untouched (move it away to run this)", path.display())]
    NotOwned {
        /// The path.
        path: PathBuf,
    },
    /// Some cells failed; the others are complete and reported.
    #[error("{} cells failed (rerun to retry them): {}", cells.len(), cells.join(" "))]
    CellsFailed {
        /// The failed cells' names.
        cells: Vec<String>,
    },
    /// The stop flag was set (Ctrl-C, SIGTERM); complete cells are kept
    /// and the same command resumes.
    #[error("{}", interrupted_message(during.as_deref(), *complete))]
    Interrupted {
        /// The cell that was running and has been discarded, if one was.
        during: Option<String>,
        /// Complete cells kept.
        complete: usize,
    },
}

fn interrupted_message(during: Option<&str>, complete: usize) -> String {
    match during {
        Some(cell) => format!("interrupted during {cell}; {complete} cells complete are kept, the partial one was discarded: run the same command again to resume"),
        None => "interrupted; run the same command again to resume".into(),
    }
}

/// Adds what was being done to I/O and JSON errors, as the variants of
/// [`ExperimentError`] want it.
pub(crate) trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, ExperimentError>;
}

impl<T> Context<T> for Result<T, std::io::Error> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, ExperimentError> {
        self.map_err(|source| ExperimentError::Io {
            context: what(),
            source,
        })
    }
}

impl<T> Context<T> for Result<T, serde_json::Error> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, ExperimentError> {
        self.map_err(|source| ExperimentError::Json {
            context: what(),
            source,
        })
    }
}

/// The library's result.
pub(crate) type Result<T, E = ExperimentError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_naming_the_place() {
        let e = MatrixError {
            path: "m.toml".into(),
            line: Some(3),
            message: "axes.db is empty".into(),
        };
        assert_eq!(e.to_string(), "m.toml:3: axes.db is empty");
        let unreadable = MatrixError {
            line: None,
            ..e.clone()
        };
        assert_eq!(unreadable.to_string(), "m.toml: axes.db is empty");
        let failed = ExperimentError::CellsFailed {
            cells: vec!["a,r1".into(), "b,r1".into()],
        };
        assert_eq!(
            failed.to_string(),
            "2 cells failed (rerun to retry them): a,r1 b,r1"
        );
        let stopped = ExperimentError::Interrupted {
            during: Some("a,r1".into()),
            complete: 4,
        };
        assert!(stopped
            .to_string()
            .starts_with("interrupted during a,r1; 4 cells complete"));
    }
}
