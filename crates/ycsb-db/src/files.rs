//! Opening input files with limits: every file the tool reads that a user
//! names (property files, data files, key files, histograms, engine
//! option files, exports and logs given to `ycsb merge`/`ycsb report`,
//! experiment matrices) goes through [`open_input`] or [`read_input`].
//!
//! Only regular files are read: a FIFO would hang the program, a device
//! such as `/dev/zero` would be read until memory runs out, a directory
//! is a mistake. A file read whole is read up to a limit, checked both
//! before reading (its size) and while reading (a file that grows).
//!
//! Errors do not name the file: the caller knows it and where it came
//! from (`file:line`, a flag) and names both.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The limit for small, hand-written files read whole: property files,
/// experiment matrices, field-length histograms, engine option files.
/// 16 MiB is hundreds of times the largest real one and still reads in
/// milliseconds, so a wrong path fails at once instead of filling memory.
pub const CONFIG_FILE_LIMIT: u64 = 16 << 20;

/// The limit for result files read whole: JSON exports and HdrHistogram
/// interval logs given to `ycsb merge` and `ycsb report`. An export with
/// a long per-second time series, or a day-long log, is tens of MiB; 1 GiB
/// leaves room for far more while keeping a wrong path from reading a
/// disk image.
pub const RESULT_FILE_LIMIT: u64 = 1 << 30;

/// Why an input file cannot be read (the file itself is named by the
/// caller).
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The system could not open or read it.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// It is not a regular file (a directory, FIFO, device or socket).
    #[error("is {kind}, not a regular file")]
    NotRegular {
        /// What it is: "a directory", "a FIFO", ...
        kind: &'static str,
    },
    /// It is larger than the limit for its kind of file.
    #[error("is larger than {limit} bytes, the limit for this kind of file")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// It is not UTF-8 text ([`read_input_to_string`]).
    #[error("is not UTF-8 text")]
    NotText,
}

impl From<InputError> for io::Error {
    fn from(e: InputError) -> Self {
        match e {
            InputError::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// What a non-regular file is, in words.
fn kind_of(file_type: std::fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        return None;
    }
    if file_type.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return Some("a FIFO");
        }
        if file_type.is_char_device() {
            return Some("a character device");
        }
        if file_type.is_block_device() {
            return Some("a block device");
        }
        if file_type.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Opens `path` for reading if it is a regular file (a symbolic link is
/// followed). Its type is checked before opening, so that a FIFO is
/// refused instead of blocking, and again on the opened file.
///
/// # Errors
///
/// [`InputError::NotRegular`] or the system's error.
pub fn open_input(path: &Path) -> Result<File, InputError> {
    if let Some(kind) = kind_of(std::fs::metadata(path)?.file_type()) {
        return Err(InputError::NotRegular { kind });
    }
    let file = File::open(path)?;
    if let Some(kind) = kind_of(file.metadata()?.file_type()) {
        return Err(InputError::NotRegular { kind });
    }
    Ok(file)
}

/// Reads a whole regular file of at most `limit` bytes.
///
/// # Errors
///
/// As [`open_input`], or [`InputError::TooLarge`].
pub fn read_input(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let file = open_input(path)?;
    let size = file.metadata()?.len();
    if size > limit {
        return Err(InputError::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // One byte beyond the limit tells a file that grew past it.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { limit });
    }
    Ok(bytes)
}

/// [`read_input`] of a UTF-8 text file.
///
/// # Errors
///
/// As [`read_input`], or [`InputError::NotText`].
pub fn read_input_to_string(path: &Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read_input(path, limit)?).map_err(|_| InputError::NotText)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_up_to_the_limit() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let path = dir.join("f");
        std::fs::write(&path, "hello").unwrap();
        assert_eq!(read_input(&path, 5).unwrap(), b"hello");
        assert!(matches!(
            read_input(&path, 4),
            Err(InputError::TooLarge { limit: 4 })
        ));
        assert!(matches!(
            read_input(dir, 100),
            Err(InputError::NotRegular {
                kind: "a directory"
            })
        ));
        assert!(matches!(
            read_input(&dir.join("missing"), 100),
            Err(InputError::Io(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused() {
        let e = read_input(Path::new("/dev/zero"), 100).unwrap_err();
        assert_eq!(e.to_string(), "is a character device, not a regular file");
    }
}
