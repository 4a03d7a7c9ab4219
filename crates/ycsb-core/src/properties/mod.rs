//! Property files (`-P`) and command-line assignments (`-p key=value`).
//!
//! Files are read exactly as Java's `java.util.Properties.load` reads them,
//! so that every workload file written for Java YCSB means the same here:
//!
//! - a line whose first non-blank character is `#` or `!` is a comment;
//! - the key ends at the first unescaped `=`, `:` or blank (space, tab,
//!   form feed); blanks around the separator are skipped, and after a blank
//!   separator one `=` or `:` is skipped too (`key = value`);
//! - a line ending in an odd number of backslashes continues on the next
//!   line, whose leading blanks are dropped (a comment line never
//!   continues);
//! - `\t \n \r \f \\ \uXXXX` are escapes, and a backslash before any other
//!   character stands for that character (`\=`, `\ `, `\#`), in keys and
//!   values alike;
//! - a key alone on its line has the empty value.
//!
//! Two deliberate differences, both about text Java would garble: a file is
//! read as UTF-8 (Java reads ISO-8859-1, which is still used when the file
//! is not valid UTF-8, so Latin-1 files mean what they meant to Java), and a
//! leading byte-order mark is ignored. A `\uXXXX` escape that leaves half of
//! a UTF-16 surrogate pair is an error, because a Rust string cannot hold it.
//!
//! ```
//! use std::path::Path;
//! use ycsb_core::properties::{parse_assignment, parse_str};
//!
//! let lines = parse_str("# workload A\nrecordcount=1000\nreadproportion : 0.5\n",
//!                       Path::new("workloada")).unwrap();
//! assert_eq!(lines[1].key, "readproportion");
//! assert_eq!(lines[1].value, "0.5");
//! assert_eq!(lines[1].line, 3);
//!
//! assert_eq!(parse_assignment("threads=4").unwrap(), ("threads".to_string(), "4".to_string()));
//! ```

use std::path::Path;
use std::sync::Arc;

use ycsb_db::{Origin, Properties};

/// One entry of a property file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyLine {
    /// The key, with escapes resolved.
    pub key: String,
    /// The value, with escapes resolved and continuation lines joined.
    pub value: String,
    /// The 1-based line on which the entry starts.
    pub line: usize,
}

/// An error reading a property file or a `-p` assignment.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum PropertyFileError {
    /// The file could not be read.
    #[error("cannot read property file {}: {source}", path.display())]
    Io {
        /// The file's path as given.
        path: Arc<Path>,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid property-file syntax.
    #[error("{}:{line}: {reason}", path.display())]
    Syntax {
        /// The file's path as given.
        path: Arc<Path>,
        /// The 1-based line of the offending entry.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A `-p` argument that is not `key=value`.
    #[error("invalid property assignment '{arg}': {reason}")]
    Assignment {
        /// The argument as given.
        arg: String,
        /// What is wrong.
        reason: String,
    },
}

/// Java's blanks in property files: space, tab and form feed (not other
/// Unicode white space).
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// One logical line: its characters (continuations joined, the
/// continuation backslashes removed) and the natural line it starts on.
struct LogicalLine {
    chars: Vec<char>,
    line: usize,
}

/// Splits text into logical lines the way Java's `Properties.LineReader`
/// (JDK 9 and later) does: blank and comment lines are dropped,
/// continuations are joined.
fn logical_lines(text: &str) -> Vec<LogicalLine> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1usize;

    let mut buf: Vec<char> = Vec::new();
    let mut start_line = 1usize;
    // Whether a logical line has begun (for its line number); unlike a
    // non-empty `buf`, this stays set over a line holding only `\`.
    let mut started = false;
    // At the start of a natural line: skipping its leading blanks.
    let mut skip_blanks = true;
    // The natural line being started continues a logical line, so an empty
    // line there ends it instead of being skipped.
    let mut continued = false;
    let mut backslash = false;

    while let Some(c) = chars.next() {
        let eol = c == '\n' || c == '\r';
        let crlf = c == '\r' && chars.peek() == Some(&'\n');
        if crlf {
            chars.next();
        }
        if skip_blanks {
            if is_blank(c) {
                continue;
            }
            if eol && !continued {
                line += 1;
                continue;
            }
            skip_blanks = false;
            continued = false;
        }
        // Java looks for a comment whenever nothing is accumulated yet, so
        // `#` after a continued line that held only `\` starts one too.
        if buf.is_empty() && (c == '#' || c == '!') {
            for c in chars.by_ref() {
                if c == '\n' || c == '\r' {
                    if c == '\r' && chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    line += 1;
                    break;
                }
            }
            started = false;
            skip_blanks = true;
            continue;
        }
        if !eol {
            if !started {
                started = true;
                start_line = line;
            }
            buf.push(c);
            backslash = c == '\\' && !backslash;
            continue;
        }
        line += 1;
        if buf.is_empty() {
            started = false;
            skip_blanks = true;
            continue;
        }
        // Java checks for the end of input (right after the `\r` of a
        // `\r\n`) before handling a continuation, so `\` and a line end at
        // the very end give an entry even when nothing else is left (an
        // empty key).
        if backslash && (crlf || chars.peek().is_some()) {
            buf.pop();
            backslash = false;
            skip_blanks = true;
            continued = true;
        } else {
            if backslash {
                buf.pop();
                backslash = false;
            }
            out.push(LogicalLine {
                chars: std::mem::take(&mut buf),
                line: start_line,
            });
            started = false;
            skip_blanks = true;
        }
    }
    if !buf.is_empty() {
        if backslash {
            // Java drops a backslash that continues into the end of input.
            buf.pop();
        }
        out.push(LogicalLine {
            chars: buf,
            line: start_line,
        });
    }
    out
}

/// Resolves the escapes of a key or a value, as Java's `loadConvert`.
fn unescape(chars: &[char]) -> Result<String, String> {
    let mut out = String::with_capacity(chars.len());
    // A high surrogate from a `\uXXXX` escape, waiting for its low half.
    let mut high: Option<u16> = None;
    let mut i = 0;
    while i < chars.len() {
        let mut c = chars[i];
        i += 1;
        let mut unit = None;
        if c == '\\' {
            // A lone trailing backslash cannot reach here (line joining
            // removes it); dropping it is what Java's reader would do.
            let Some(&next) = chars.get(i) else { break };
            i += 1;
            c = match next {
                't' => '\t',
                'n' => '\n',
                'r' => '\r',
                'f' => '\x0c',
                'u' => {
                    let digits = chars.get(i..i + 4).unwrap_or(&chars[i..]);
                    let text: String = digits.iter().collect();
                    let value = if digits.len() == 4 && digits.iter().all(char::is_ascii_hexdigit) {
                        u16::from_str_radix(&text, 16).ok()
                    } else {
                        None
                    };
                    let Some(value) = value else {
                        return Err(format!("malformed \\uXXXX escape '\\u{text}'"));
                    };
                    i += 4;
                    unit = Some(value);
                    '\0'
                }
                other => other,
            };
        }
        if let Some(h) = high.take() {
            match unit {
                Some(low @ 0xDC00..=0xDFFF) => {
                    let code =
                        0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    // Both halves are in range, so the code point is valid.
                    out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                    continue;
                }
                _ => return Err(format!("unpaired UTF-16 surrogate \\u{h:04X}")),
            }
        }
        match unit {
            Some(u @ 0xD800..=0xDBFF) => high = Some(u),
            Some(u @ 0xDC00..=0xDFFF) => {
                return Err(format!("unpaired UTF-16 surrogate \\u{u:04X}"))
            }
            Some(u) => {
                out.push(char::from_u32(u32::from(u)).unwrap_or(char::REPLACEMENT_CHARACTER))
            }
            None => out.push(c),
        }
    }
    if let Some(h) = high {
        return Err(format!("unpaired UTF-16 surrogate \\u{h:04X}"));
    }
    Ok(out)
}

/// Splits a logical line into its raw key and value, as Java's `load0`.
fn split_entry(chars: &[char]) -> (&[char], &[char]) {
    let mut key_len = 0;
    let mut value_start = chars.len();
    let mut has_separator = false;
    let mut backslash = false;
    while key_len < chars.len() {
        let c = chars[key_len];
        if !backslash && (c == '=' || c == ':') {
            value_start = key_len + 1;
            has_separator = true;
            break;
        }
        if !backslash && is_blank(c) {
            value_start = key_len + 1;
            break;
        }
        backslash = c == '\\' && !backslash;
        key_len += 1;
    }
    while value_start < chars.len() {
        let c = chars[value_start];
        if !is_blank(c) {
            if !has_separator && (c == '=' || c == ':') {
                has_separator = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    (&chars[..key_len], &chars[value_start..])
}

/// Parses property-file text; `path` is only used in error messages.
///
/// Entries are returned in file order; a key set twice appears twice (the
/// later one wins when loaded into [`Properties`]).
///
/// # Errors
///
/// [`PropertyFileError::Syntax`] naming `path` and the entry's line for a
/// malformed `\uXXXX` escape or an unpaired UTF-16 surrogate.
pub fn parse_str(text: &str, path: &Path) -> Result<Vec<PropertyLine>, PropertyFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let syntax = |line: usize, reason: String| PropertyFileError::Syntax {
        path: Arc::from(path),
        line,
        reason,
    };
    logical_lines(text)
        .into_iter()
        .map(|logical| {
            let (key, value) = split_entry(&logical.chars);
            Ok(PropertyLine {
                key: unescape(key).map_err(|r| syntax(logical.line, format!("in key: {r}")))?,
                value: unescape(value)
                    .map_err(|r| syntax(logical.line, format!("in value: {r}")))?,
                line: logical.line,
            })
        })
        .collect()
}

/// Reads a property file into `into`, each entry set with
/// [`Origin::File`] naming `path` and the entry's line.
///
/// The file is read as UTF-8, or as ISO-8859-1 (Java's encoding for
/// property files) when it is not valid UTF-8. Nothing is set when the file
/// has an error.
///
/// # Errors
///
/// [`PropertyFileError::Io`] when the file cannot be read;
/// [`PropertyFileError::Syntax`] as [`parse_str`].
pub fn load_file(path: &Path, into: &mut Properties) -> Result<(), PropertyFileError> {
    load_file_after_flags(path, into).map(|_| ())
}

/// A property that a flag set and a property file read after it set
/// again, to another value: properties apply in argv order (YCSB-cpp's
/// rule; Java lets `-p` win whatever the order), so the file's value is
/// the one used, which is rarely what was meant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileOverride {
    /// The property.
    pub key: String,
    /// The flag's value, now replaced.
    pub flag_value: String,
    /// The flag (`-p flag`).
    pub flag_origin: Origin,
    /// The file's value, the one used.
    pub file_value: String,
    /// The file and line.
    pub file_origin: Origin,
}

impl std::fmt::Display for FileOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{key}={} ({}) overrides {key}={} ({}) given before it: properties apply in command-line order, so put -p after -P to override a file",
            self.file_value,
            self.file_origin,
            self.flag_value,
            self.flag_origin,
            key = self.key
        )
    }
}

/// A source of properties on a command line, in the order given: every
/// frontend (`ycsb load|run`, `shell`, `serve`, `bench`) reads `-P` and
/// `-p` into these and [`load_sources`] reads them in that order, so a
/// later source overrides an earlier one the same way everywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropertySource {
    /// `-P <file>`.
    File(std::path::PathBuf),
    /// `-p key=value` (or a flag such as `-threads`, with the flag's name).
    Assignment {
        /// The flag that set it (`-p`, `-threads`, `-target`, ...).
        flag: &'static str,
        /// The property's name.
        key: String,
        /// Its value.
        value: String,
    },
}

impl PropertySource {
    /// `text` given with `flag` (`-p`) as `key=value`: the key trimmed, the
    /// value as given; `None` when there is no `=` or the key is empty
    /// (the frontend words the error).
    pub fn assignment(flag: &'static str, text: &str) -> Option<PropertySource> {
        let (key, value) = text.split_once('=')?;
        let key = key.trim();
        (!key.is_empty()).then(|| PropertySource::Assignment {
            flag,
            key: key.to_string(),
            value: value.to_string(),
        })
    }
}

/// Reads `sources` in order into one set, with the properties a file set
/// to another value than an earlier flag did (the program warns about
/// each once the input is known to be good).
///
/// # Errors
///
/// As [`load_file`], for the first file that cannot be read.
pub fn load_sources(
    sources: &[PropertySource],
) -> Result<(Properties, Vec<FileOverride>), PropertyFileError> {
    let mut props = Properties::new();
    let mut overrides = Vec::new();
    for source in sources {
        match source {
            PropertySource::File(path) => {
                overrides.extend(load_file_after_flags(path, &mut props)?);
            }
            PropertySource::Assignment { flag, key, value } => {
                props.set(key.clone(), value.clone(), Origin::Flag(flag));
            }
        }
    }
    Ok((props, overrides))
}

/// [`load_file`], returning the properties a flag set earlier that the
/// file sets to another value (the program warns about each).
///
/// # Errors
///
/// As [`load_file`].
pub fn load_file_after_flags(
    path: &Path,
    into: &mut Properties,
) -> Result<Vec<FileOverride>, PropertyFileError> {
    let shared: Arc<Path> = Arc::from(path);
    // A FIFO or a device (`-P /dev/zero`) is refused, a huge file too.
    let bytes = ycsb_db::read_input(path, ycsb_db::CONFIG_FILE_LIMIT).map_err(|e| {
        PropertyFileError::Io {
            path: shared.clone(),
            source: e.into(),
        }
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // Every byte is a Latin-1 character with the same code point.
        Err(err) => err.into_bytes().iter().map(|&b| char::from(b)).collect(),
    };
    let mut overrides = Vec::new();
    let entries = parse_str(&text, path)?;
    into.note_file_read(shared.clone());
    for entry in entries {
        let file_origin = Origin::File {
            path: shared.clone(),
            line: entry.line,
        };
        if let (Some(origin @ Origin::Flag(_)), Some(flag_value)) =
            (into.origin(&entry.key), into.get_str(&entry.key))
        {
            if flag_value != entry.value {
                overrides.push(FileOverride {
                    key: entry.key.clone(),
                    flag_value: flag_value.to_string(),
                    flag_origin: origin.clone(),
                    file_value: entry.value.clone(),
                    file_origin: file_origin.clone(),
                });
            }
        }
        into.set(entry.key, entry.value, file_origin);
    }
    Ok(overrides)
}

/// Splits a `-p` argument at its first `=` into key and value, as Java
/// YCSB's client does: no escapes, no trimming, the value may be empty or
/// contain more `=`.
///
/// # Errors
///
/// [`PropertyFileError::Assignment`] when `arg` has no `=` or its key is
/// empty.
pub fn parse_assignment(arg: &str) -> Result<(String, String), PropertyFileError> {
    let error = |reason: &str| PropertyFileError::Assignment {
        arg: arg.to_string(),
        reason: reason.to_string(),
    };
    let (key, value) = arg
        .split_once('=')
        .ok_or_else(|| error("expected key=value"))?;
    if key.is_empty() {
        return Err(error("the key before '=' is empty"));
    }
    Ok((key.to_string(), value.to_string()))
}

/// Appends `text` to `out` escaped as Java's `Properties.store` does, so
/// that [`parse_str`] (and Java) read it back unchanged.
///
/// In a key every space is escaped; in a value only a leading one (inner
/// spaces are kept literally). Characters outside printable ASCII are
/// written as `\uXXXX` (UTF-16 units), so the output is plain ASCII.
fn escape_into(text: &str, is_key: bool, out: &mut String) {
    use std::fmt::Write as _;
    for (i, c) in text.chars().enumerate() {
        match c {
            ' ' if is_key || i == 0 => out.push_str("\\ "),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\u{unit:04X}");
                }
            }
        }
    }
}

/// One `key=value` line (without the line end) that [`parse_str`] reads
/// back as exactly `key` and `value`.
pub fn format_entry(key: &str, value: &str) -> String {
    let mut out = String::with_capacity(key.len() + value.len() + 1);
    escape_into(key, true, &mut out);
    out.push('=');
    escape_into(value, false, &mut out);
    out
}

#[cfg(test)]
mod tests;
