//! The one rule for where outputs may go: never onto a file the program
//! reads (a `-P` property file, `ycsb merge`'s or `ycsb report`'s inputs),
//! never into the store's database directory, and never two outputs onto
//! one file. Every writer checks it before anything runs: the session
//! ([`Session::new`](crate::Session::new): the export, the HdrHistogram
//! logs, the raw latencies, the time series), `ycsb merge` and
//! `ycsb report`.
//!
//! "The same file" is what the file system will write: paths are compared
//! after resolving symbolic links, `.`, `..` and relative paths (an output
//! that does not exist yet by its directory), and existing files also by
//! device and inode, so a hard link to an input is that input.
//!
//! ```
//! use ycsb_core::outputs::{check_outputs, Output, Protected};
//!
//! let dir = tempfile::tempdir()?;
//! let input = dir.path().join("c0.json");
//! std::fs::write(&input, "{}")?;
//! let alias = dir.path().join(".").join("c0.json");
//! let refused = check_outputs(
//!     &[Output::file("merge -o", &alias)],
//!     &[Protected::file(format!("the input {}", input.display()), &input)],
//! );
//! assert!(refused.unwrap_err().to_string().contains("the input"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use ycsb_db::{Origin, Properties};

/// How many symbolic links one path may go through (Linux's `MAXSYMLINKS`).
const MAX_LINKS: u32 = 40;

/// A file, or a family of files, that a run writes.
#[derive(Clone, Debug)]
pub struct Output {
    what: String,
    target: Target,
}

#[derive(Clone, Debug)]
enum Target {
    File(PathBuf),
    /// HdrHistogram logs: `<dir>/<stem>[load-|run-]<SECTION>.hdr`.
    HdrLogs {
        dir: PathBuf,
        stem: String,
    },
}

impl Output {
    /// One file; `what` names it for the message
    /// (`exportfile=out.json (-p flag)`, `merge -o merged.json`).
    pub fn file(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            what: what.into(),
            target: Target::File(path.into()),
        }
    }

    /// The HdrHistogram interval logs written under `prefix`
    /// (`hdrhistogram.output.path`: `results/` writes `results/READ.hdr`,
    /// `run1-` writes `run1-READ.hdr`), phase-labelled or not.
    pub fn hdr_logs(what: impl Into<String>, prefix: &str) -> Self {
        let (dir, stem) = if prefix.is_empty() || prefix.ends_with('/') {
            (
                PathBuf::from(if prefix.is_empty() { "." } else { prefix }),
                "",
            )
        } else {
            let path = Path::new(prefix);
            let stem = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            (dir, stem)
        };
        Self {
            what: what.into(),
            target: Target::HdrLogs {
                dir,
                stem: stem.to_string(),
            },
        }
    }
}

/// What no output may replace or write into.
#[derive(Clone, Debug)]
pub struct Protected {
    what: String,
    path: PathBuf,
    directory: bool,
}

impl Protected {
    /// A file the program reads; `what` names it for the message (`the
    /// property file wl (read with -P)`).
    pub fn file(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            what: what.into(),
            path: path.into(),
            directory: false,
        }
    }

    /// A directory nothing may be written into (the store's database
    /// directory), whether or not it exists yet.
    pub fn directory(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            what: what.into(),
            path: path.into(),
            directory: true,
        }
    }

    /// Every property file `props` holds a value from (read with `-P`),
    /// once each, in the order first seen.
    pub fn property_files(props: &Properties) -> Vec<Protected> {
        // Files that set nothing still in force are inputs all the same.
        let mut files: Vec<Arc<Path>> = props.files_read().to_vec();
        for (_, _, origin) in props.iter() {
            if let Origin::File { path, .. } = origin {
                if !files.contains(path) {
                    files.push(path.clone());
                }
            }
        }
        files
            .into_iter()
            .map(|path| {
                Protected::file(
                    format!("the property file {} (read with -P)", path.display()),
                    path.to_path_buf(),
                )
            })
            .collect()
    }
}

/// An output that would land on an input, in the database, or on another
/// output. Its text is one line naming both.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutputCollision {
    /// The output is a file the program reads.
    #[error("{output} is the same file as {input}: an output never replaces an input")]
    Input {
        /// The output, as its property or flag names it.
        output: String,
        /// The input.
        input: String,
    },
    /// The output is inside the store's database directory.
    #[error("{output} is inside {directory}: an output never writes into the store's database")]
    Database {
        /// The output, as its property or flag names it.
        output: String,
        /// The directory.
        directory: String,
    },
    /// Two outputs are one file.
    #[error("{output} is the same file as {other}: each output needs a file of its own")]
    Outputs {
        /// The later output.
        output: String,
        /// The earlier one.
        other: String,
    },
}

/// Checks that no output is the same file as a protected file, lies in a
/// protected directory, or is the same file as another output. An output
/// that exists and is not a regular file (`/dev/null`, a FIFO) is written
/// in place, replaces nothing and may be shared.
///
/// # Errors
///
/// The first [`OutputCollision`], outputs in the order given.
pub fn check_outputs(outputs: &[Output], protected: &[Protected]) -> Result<(), OutputCollision> {
    let protected: Vec<(&Protected, Place)> =
        protected.iter().map(|p| (p, Place::of(&p.path))).collect();
    let mut seen: Vec<(&Output, Resolved)> = Vec::new();
    for output in outputs {
        let resolved = Resolved::of(&output.target);
        if resolved.is_in_place() {
            continue;
        }
        for (p, place) in &protected {
            if p.directory {
                if let Some(file) = resolved.inside(&place.path) {
                    return Err(OutputCollision::Database {
                        output: resolved.describe(&output.what, file),
                        directory: p.what.clone(),
                    });
                }
            } else if let Some(file) = resolved.writes(place) {
                return Err(OutputCollision::Input {
                    output: resolved.describe(&output.what, file),
                    input: p.what.clone(),
                });
            }
        }
        for (other, earlier) in &seen {
            if let Some(file) = resolved.meets(earlier) {
                return Err(OutputCollision::Outputs {
                    output: resolved.describe(&output.what, file),
                    other: other.what.clone(),
                });
            }
        }
        seen.push((output, resolved));
    }
    Ok(())
}

/// A path as the file system resolves it, and the file there if any.
#[derive(Clone, Debug)]
struct Place {
    path: PathBuf,
    /// Device and inode of the existing file (links followed).
    id: Option<(u64, u64)>,
    /// Whether something other than a regular file or a directory exists
    /// there (a device, a FIFO).
    special: bool,
}

impl Place {
    fn of(path: &Path) -> Self {
        let metadata = fs::metadata(path).ok();
        Self {
            path: resolve(path, 0),
            id: metadata.as_ref().map(|m| (m.dev(), m.ino())),
            special: metadata.is_some_and(|m| !m.is_file() && !m.is_dir()),
        }
    }

    fn same(&self, other: &Place) -> bool {
        self.path == other.path || (self.id.is_some() && self.id == other.id)
    }
}

/// An output's target resolved.
#[derive(Debug)]
enum Resolved {
    File(Place),
    /// The logs' directory, the name stem, and the files already there
    /// whose names the logs may take.
    HdrLogs {
        dir: PathBuf,
        stem: String,
        existing: Vec<Place>,
    },
}

impl Resolved {
    fn of(target: &Target) -> Self {
        match target {
            Target::File(path) => Resolved::File(Place::of(path)),
            Target::HdrLogs { dir, stem } => {
                let existing = fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|entry| {
                        entry
                            .file_name()
                            .to_str()
                            .is_some_and(|name| may_be_log(stem, name))
                    })
                    .map(|entry| Place::of(&entry.path()))
                    .collect();
                Resolved::HdrLogs {
                    dir: resolve(dir, 0),
                    stem: stem.clone(),
                    existing,
                }
            }
        }
    }

    /// A device or FIFO: written in place, so nothing is replaced.
    fn is_in_place(&self) -> bool {
        matches!(self, Resolved::File(place) if place.special)
    }

    /// The file of this output that is `place`, if any.
    fn writes(&self, place: &Place) -> Option<PathBuf> {
        match self {
            Resolved::File(mine) => mine.same(place).then(|| mine.path.clone()),
            Resolved::HdrLogs {
                dir,
                stem,
                existing,
            } => {
                let named = place.path.parent() == Some(dir.as_path())
                    && place
                        .path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|name| may_be_log(stem, name));
                if named {
                    return Some(place.path.clone());
                }
                existing
                    .iter()
                    .find(|log| log.same(place))
                    .map(|log| log.path.clone())
            }
        }
    }

    /// The file of this output that lies in `dir`, if any.
    fn inside(&self, dir: &Path) -> Option<PathBuf> {
        match self {
            Resolved::File(place) => place.path.starts_with(dir).then(|| place.path.clone()),
            Resolved::HdrLogs { dir: logs, .. } => logs.starts_with(dir).then(|| logs.clone()),
        }
    }

    /// The file this output shares with `other`, if any.
    fn meets(&self, other: &Resolved) -> Option<PathBuf> {
        match (self, other) {
            (Resolved::File(mine), _) => other.writes(mine),
            (_, Resolved::File(theirs)) => self.writes(theirs),
            // A session writes one family of logs.
            (Resolved::HdrLogs { .. }, Resolved::HdrLogs { .. }) => None,
        }
    }

    /// `what`, naming the colliding file when it is one of a family or
    /// reached through a link or another name.
    fn describe(&self, what: &str, file: PathBuf) -> String {
        match self {
            Resolved::HdrLogs { .. } => format!("{what} (the log {})", file.display()),
            Resolved::File(_) => what.to_string(),
        }
    }
}

/// Whether `name` is a file name the HdrHistogram logs of `stem` may take:
/// `<stem>[load-|run-]<SECTION>.hdr`, a section being an operation or
/// status in capitals (`READ`, `READ-FAILED`, `INTENDED-UPDATE`,
/// `READ-NOT_FOUND`).
fn may_be_log(stem: &str, name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix(stem)
        .and_then(|rest| rest.strip_suffix(".hdr"))
    else {
        return false;
    };
    let section = rest
        .strip_prefix("load-")
        .or_else(|| rest.strip_prefix("run-"))
        .unwrap_or(rest);
    !section.is_empty()
        && section
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// `path` as the file system will resolve it when it is written: absolute,
/// every existing component's links resolved (a dangling link followed to
/// where a write through it goes), `.` and `..` applied, the components
/// that do not exist yet kept as given.
fn resolve(path: &Path, links: u32) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut resolved = PathBuf::new();
    let mut missing = false;
    for component in absolute.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => resolved.push(component.as_os_str()),
            Component::CurDir => {}
            // What is resolved so far has no links left: `..` is its parent.
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                let next = resolved.join(name);
                if missing {
                    resolved = next;
                    continue;
                }
                match fs::canonicalize(&next) {
                    Ok(real) => resolved = real,
                    Err(_) => match fs::read_link(&next) {
                        Ok(target) if links < MAX_LINKS => {
                            resolved = resolve(&resolved.join(target), links + 1);
                        }
                        _ => {
                            missing = true;
                            resolved = next;
                        }
                    },
                }
            }
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &Path) -> Protected {
        Protected::file(format!("the input {}", path.display()), path)
    }

    #[test]
    fn every_alias_of_an_input_is_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let wl = d.join("wl");
        fs::write(&wl, "recordcount=1\n").unwrap();
        fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink(&wl, d.join("link")).unwrap();
        fs::hard_link(&wl, d.join("hard")).unwrap();
        std::os::unix::fs::symlink(d.join("sub"), d.join("sublink")).unwrap();
        for alias in [
            wl.clone(),
            d.join("./wl"),
            d.join("sub/../wl"),
            d.join("sublink/../wl"),
            d.join("link"),
            d.join("hard"),
        ] {
            let err =
                check_outputs(&[Output::file("exportfile", &alias)], &[input(&wl)]).unwrap_err();
            assert!(
                matches!(err, OutputCollision::Input { .. }),
                "{}: {err}",
                alias.display()
            );
        }
        // A relative path, resolved against the working directory.
        let relative = wl.strip_prefix("/").unwrap();
        let up = "../".repeat(std::env::current_dir().unwrap().components().count());
        let err = check_outputs(
            &[Output::file(
                "exportfile",
                format!("{up}{}", relative.display()),
            )],
            &[input(&wl)],
        );
        assert!(err.is_err());
        // A file beside it is not it.
        check_outputs(&[Output::file("exportfile", d.join("out"))], &[input(&wl)]).unwrap();
    }

    #[test]
    fn a_dangling_link_is_where_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::os::unix::fs::symlink(d.join("target.json"), d.join("link.json")).unwrap();
        let err = check_outputs(
            &[
                Output::file("exportfile", d.join("target.json")),
                Output::file("timeseries.file", d.join("link.json")),
            ],
            &[],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "timeseries.file is the same file as exportfile: each output needs a file of its own"
        );
    }

    #[test]
    fn nothing_is_written_into_the_database_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("db")).unwrap();
        std::os::unix::fs::symlink(d.join("db"), d.join("dblink")).unwrap();
        let db = Protected::directory("the database directory db", d.join("db"));
        for output in [
            Output::file("exportfile", d.join("db/out.json")),
            Output::file("exportfile", d.join("dblink/ycsb.sqlite")),
            Output::file("exportfile", d.join("db")),
            Output::hdr_logs(
                "hdrhistogram.output.path",
                &format!("{}/", d.join("db").display()),
            ),
        ] {
            let err = check_outputs(std::slice::from_ref(&output), std::slice::from_ref(&db))
                .unwrap_err();
            assert!(matches!(err, OutputCollision::Database { .. }), "{err}");
        }
        // A database directory that does not exist yet (the load creates it).
        let later = Protected::directory("the database directory new", d.join("new"));
        let err = check_outputs(&[Output::file("exportfile", d.join("new"))], &[later]);
        assert!(err.is_err());
        check_outputs(&[Output::file("exportfile", d.join("dbx"))], &[db]).unwrap();
    }

    #[test]
    fn hdr_logs_collide_by_the_names_they_may_take() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let prefix = format!("{}/r1-", d.display());
        let logs = Output::hdr_logs("hdrhistogram.output.path", &prefix);
        for name in [
            "r1-READ.hdr",
            "r1-run-READ-FAILED.hdr",
            "r1-load-INSERT.hdr",
        ] {
            let path = d.join(name);
            fs::write(&path, "x").unwrap();
            let err = check_outputs(std::slice::from_ref(&logs), &[input(&path)]).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
        // Another name in the directory, or an input linked under a log's
        // name.
        let other = d.join("r1-notes.hdr");
        fs::write(&other, "x").unwrap();
        check_outputs(std::slice::from_ref(&logs), &[input(&other)]).unwrap();
        let wl = d.join("wl");
        fs::write(&wl, "x").unwrap();
        fs::hard_link(&wl, d.join("r1-UPDATE.hdr")).unwrap();
        assert!(check_outputs(std::slice::from_ref(&logs), &[input(&wl)]).is_err());
        // An export named like a log.
        let err = check_outputs(
            &[logs, Output::file("exportfile", d.join("r1-SCAN.hdr"))],
            &[],
        )
        .unwrap_err();
        assert!(matches!(err, OutputCollision::Outputs { .. }), "{err}");
    }

    #[test]
    fn special_files_are_shared_and_property_files_come_from_origins() {
        // Neither a regular file nor a directory, as a device or a FIFO:
        // written in place, never replaced.
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        check_outputs(
            &[
                Output::file("exportfile", &socket),
                Output::file("timeseries.file", &socket),
            ],
            &[],
        )
        .unwrap();
        let mut props = Properties::new();
        let file: Arc<Path> = Arc::from(Path::new("workloads/workloada"));
        for line in [1, 2] {
            props.set(
                format!("k{line}"),
                "v",
                Origin::File {
                    path: file.clone(),
                    line,
                },
            );
        }
        props.set("exportfile", "x", Origin::Flag("-p"));
        let files = Protected::property_files(&props);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, Path::new("workloads/workloada"));
    }
}
