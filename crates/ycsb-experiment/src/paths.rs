//! Paths made of matrix-supplied names, and the directories the runner owns.
//!
//! An experiment's name, its axes' names and values become directory names
//! under the results (`<results>/<name>/cells/<cell>/`) and the data
//! directory. [`name_problem`] is the one rule for such a name: the matrix
//! is refused with it (naming the line) before anything runs, and
//! [`child`] applies it again at every join, so that no path the runner
//! writes or deletes can leave the directory it was joined to.
//!
//! The runner deletes or replaces only directories it made: each carries a
//! [`MARKER`] file from its creation ([`create_owned`]); [`remove_owned`]
//! refuses anything else.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use crate::error::{ExperimentError, Result};

/// The longest file name Linux filesystems take (`NAME_MAX`), in bytes.
pub const NAME_MAX: usize = 255;

/// The prefix of a cell directory being written.
pub const PARTIAL_PREFIX: &str = ".partial-";

/// The prefix of a failed cell's directory, kept for a look.
pub const FAILED_PREFIX: &str = ".failed-";

/// The longest prefix the runner puts in front of a cell's name.
pub const LONGEST_PREFIX: usize = PARTIAL_PREFIX.len();

/// Names the runner gives files of its own at the results root, which an
/// experiment's directory must not take.
const RESERVED: &[&str] = &["io-ceiling.json"];

/// The file in every directory the runner made for a cell (partial,
/// complete, failed, DB parent) or an experiment: what it may delete.
pub const MARKER: &str = ".ycsb-experiment";

const MARKER_TEXT: &str =
    "made by cargo xtask experiment (ycsb-experiment); it may delete or replace this directory\n";

/// Why `name` cannot be one directory entry inside another directory, or
/// `None` when it can: it must be non-empty, not `.` or `..`, without `/`
/// or NUL, not a name the runner reserves, and short enough for the
/// filesystem with the runner's longest prefix in front.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if name == "." || name == ".." {
        return Some(format!(
            "'{name}' is not a directory of its own but the directory itself or its parent"
        ));
    }
    if name.contains('/') {
        return Some(format!("'{name}' contains '/', a path separator"));
    }
    if name.contains('\0') {
        return Some("it contains a NUL character".into());
    }
    if RESERVED.contains(&name) {
        return Some(format!("'{name}' is a file of the results directory"));
    }
    if name.len() + LONGEST_PREFIX > NAME_MAX {
        return Some(format!(
            "it is {} bytes long; a directory name can have at most {} (with the runner's '{PARTIAL_PREFIX}' prefix, {NAME_MAX})",
            name.len(),
            NAME_MAX - LONGEST_PREFIX
        ));
    }
    // What the rules above mean, checked the way the filesystem sees it.
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(_)), None) => None,
        _ => Some(format!("'{name}' is not a single directory name")),
    }
}

/// `dir/name`, when `name` is one directory entry ([`name_problem`]): the
/// last check before a matrix-supplied name touches the filesystem.
///
/// # Errors
/// [`ExperimentError::UnsafePath`] when `name` would leave `dir`.
pub fn child(dir: &Path, name: &str) -> Result<PathBuf> {
    if let Some(why) = name_problem(name) {
        return Err(ExperimentError::UnsafePath {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            why,
        });
    }
    Ok(dir.join(name))
}

/// Every name the runner writes into a cell's directory or a cell's DB
/// parent: how a directory from before the [`MARKER`] is recognised.
const CELL_ENTRIES: &[&str] = &[
    "cell.json",
    "export.json",
    "timeseries.json",
    "command.txt",
    "properties.txt",
    "stdout.txt",
    "stderr.txt",
    "server.log",
    "clients",
    "failure.txt",
    "db",
];

/// Whether `dir` is a directory (not a symbolic link) the runner made: it
/// holds the [`MARKER`] file, or, written before there was one, a
/// `cell.json` recording a cell's fingerprint, or nothing but what the
/// runner writes into a cell (a partial cell, a DB directory's parent).
pub fn is_owned(dir: &Path) -> bool {
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return false;
    }
    if std::fs::symlink_metadata(dir.join(MARKER)).is_ok_and(|m| m.is_file()) {
        return true;
    }
    let recorded = std::fs::read_to_string(dir.join("cell.json"))
        .ok()
        .and_then(|t| crate::records::CellFacts::parse(&t))
        .is_some();
    recorded
        || std::fs::read_dir(dir).is_ok_and(|entries| {
            let mut any = false;
            entries.into_iter().all(|e| {
                any = true;
                e.is_ok_and(|e| CELL_ENTRIES.iter().any(|n| e.file_name() == *n))
            }) && any
        })
}

fn foreign(dir: &Path) -> ExperimentError {
    ExperimentError::NotOwned {
        path: dir.to_path_buf(),
    }
}

/// Deletes `dir` if the runner made it; nothing to do if it does not exist.
///
/// # Errors
/// [`ExperimentError::NotOwned`] when something else is there (left
/// untouched), or the deletion fails.
pub fn remove_owned(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        _ => {}
    }
    if !is_owned(dir) {
        return Err(foreign(dir));
    }
    std::fs::remove_dir_all(dir).map_err(|source| ExperimentError::Io {
        context: format!("deleting {}", dir.display()),
        source,
    })
}

/// Creates `dir` empty but for the [`MARKER`] (its parents as needed),
/// replacing a directory the runner made before.
///
/// # Errors
/// [`ExperimentError::NotOwned`] when something the runner did not make is
/// at `dir`, or it cannot be created.
pub fn create_owned(dir: &Path) -> Result<()> {
    remove_owned(dir)?;
    let io = |what: &str, source| ExperimentError::Io {
        context: format!("{what} {}", dir.display()),
        source,
    };
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io("creating the parent of", e))?;
    }
    // Not create_dir_all: whatever appeared meanwhile is not taken over.
    std::fs::create_dir(dir).map_err(|e| io("creating", e))?;
    std::fs::write(dir.join(MARKER), MARKER_TEXT).map_err(|e| io("marking", e))
}

/// Makes `dir` an experiment's results directory, or recognises it as
/// one: it is created (with its parents) and marked when it does not
/// exist or is empty; an existing one must carry the [`MARKER`] or, written
/// before there was one, a `host.json` naming the matrix. Symbolic links
/// are followed: a results directory may live on another disk.
///
/// # Errors
/// [`ExperimentError::NotOwned`] for a directory of something else (its
/// files are not overwritten), or it cannot be created or marked.
pub fn claim_experiment_dir(dir: &Path) -> Result<()> {
    let io = |what: &str, source| ExperimentError::Io {
        context: format!("{what} {}", dir.display()),
        source,
    };
    let empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| io("creating", e))?;
            true
        }
        Err(e) => return Err(io("reading", e)),
    };
    let marker = dir.join(MARKER);
    if marker.is_file() {
        return Ok(());
    }
    let earlier = || {
        std::fs::read_to_string(dir.join("host.json"))
            .ok()
            .is_some_and(|t| serde_json::from_str::<crate::records::HostFile>(&t).is_ok())
    };
    if !empty && !earlier() {
        return Err(foreign(dir));
    }
    std::fs::write(&marker, MARKER_TEXT).map_err(|e| io("marking", e))
}

/// Renames the directory `from` to `to`, which must not exist: never
/// replaces anything (`renameat2` with `RENAME_NOREPLACE`).
///
/// # Errors
/// `to` exists, or the rename fails.
pub fn rename_no_replace(from: &Path, to: &Path) -> Result<()> {
    let io = |source| ExperimentError::Io {
        context: format!("renaming {} to {}", from.display(), to.display()),
        source,
    };
    let c =
        |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(|e| io(std::io::Error::other(e)));
    let (old, new) = (c(from)?, c(to)?);
    // SAFETY: two valid NUL-terminated paths, relative to the working
    // directory only if relative; no memory is handed over.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            old.as_ptr(),
            libc::AT_FDCWD,
            new.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) {
        return Err(io(e));
    }
    // A filesystem without RENAME_NOREPLACE: the same rule, checked first.
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(io(std::io::Error::from(std::io::ErrorKind::AlreadyExists)));
    }
    std::fs::rename(from, to).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_their_directory_are_refused() {
        let long = "x".repeat(NAME_MAX);
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "/abs",
            "../up",
            "a\0b",
            "io-ceiling.json",
            &long,
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?} accepted");
            let e = child(Path::new("/r"), bad).unwrap_err();
            assert!(matches!(e, ExperimentError::UnsafePath { .. }), "{e}");
        }
        for good in [
            "e2e",
            "db=memory,fieldlength=8,r1",
            "...",
            ".x",
            "load,db=a,r1",
        ] {
            assert_eq!(name_problem(good), None, "{good:?}");
            assert_eq!(
                child(Path::new("/r"), good).unwrap(),
                Path::new("/r").join(good)
            );
        }
        let longest = "x".repeat(NAME_MAX - LONGEST_PREFIX);
        assert_eq!(name_problem(&longest), None);
        assert!(name_problem(&format!("{longest}x")).is_some());
    }

    #[test]
    fn only_directories_the_runner_made_are_removed_or_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let mine = tmp.path().join("mine");
        create_owned(&mine).unwrap();
        std::fs::write(mine.join("f"), "x").unwrap();
        create_owned(&mine).unwrap();
        assert!(!mine.join("f").exists(), "replaced empty");
        remove_owned(&mine).unwrap();
        assert!(!mine.exists());
        remove_owned(&mine).unwrap();

        let theirs = tmp.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("keep"), "x").unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        create_owned(&mine).unwrap();
        for other in [&theirs, &file, &link] {
            assert!(matches!(
                remove_owned(other),
                Err(ExperimentError::NotOwned { .. })
            ));
            assert!(matches!(
                create_owned(other),
                Err(ExperimentError::NotOwned { .. })
            ));
        }
        assert!(theirs.join("keep").is_file() && file.is_file() && mine.is_dir());

        // Written before the marker: a cell's files only, or a DB parent.
        let earlier = tmp.path().join(".partial-x");
        std::fs::create_dir_all(earlier.join("db")).unwrap();
        std::fs::write(earlier.join("stderr.txt"), "x").unwrap();
        assert!(is_owned(&earlier));
        std::fs::write(earlier.join("notes.txt"), "x").unwrap();
        assert!(!is_owned(&earlier), "not with a file of someone else's");
        let empty = tmp.path().join("empty-dir");
        std::fs::create_dir(&empty).unwrap();
        assert!(
            !is_owned(&empty),
            "nothing says whose an empty directory is"
        );

        // An experiment's directory: new, empty, or marked, never another's.
        let exp = tmp.path().join("results").join("e");
        claim_experiment_dir(&exp).unwrap();
        claim_experiment_dir(&exp).unwrap();
        assert!(exp.join(MARKER).is_file());
        assert!(matches!(
            claim_experiment_dir(&theirs),
            Err(ExperimentError::NotOwned { .. })
        ));
        assert!(!theirs.join(MARKER).exists());

        // A rename never replaces what is there.
        let from = tmp.path().join("from");
        create_owned(&from).unwrap();
        assert!(rename_no_replace(&from, &theirs).is_err());
        assert!(theirs.join("keep").is_file() && from.is_dir());
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(
            rename_no_replace(&from, &empty).is_err(),
            "not even an empty directory"
        );
        rename_no_replace(&from, &tmp.path().join("to")).unwrap();
        assert!(is_owned(&tmp.path().join("to")));
    }
}
