//! File workloads: records loaded from a TSV, CSV or JSON-lines file
//! (`datafile`) instead of random bytes, and run-phase keys drawn from the
//! loaded keys or from a `keyfile`.
//!
//! The file is read once when the workload is built: every row is parsed
//! (so a bad row stops the benchmark before it starts, naming
//! `file:line`), the keys are kept in memory for the run phase, and every
//! [`CHECKPOINT`]th row's byte offset is remembered so that each load
//! thread can open the file at its own contiguous share of rows and read
//! it sequentially, without locks.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ycsb_db::{choice_property, Origin, Properties, Property, PropertyDecl, PropertyError, Record};

/// `datafile`: the records to load.
pub const DATAFILE: Property<PathBuf> = Property::optional(
    "datafile",
    "A TSV, CSV or JSON-lines file whose rows the load phase inserts as records (one row per record) instead of random values; recordcount becomes its number of rows.",
);

choice_property! {
    /// The syntax of a `datafile`.
    pub enum DataFormat {
        /// From the file name: `.csv` is CSV, `.jsonl`, `.ndjson` and
        /// `.json` are JSON lines, anything else is TSV.
        Auto = "auto",
        /// Delimiter-separated values without quoting (tab by default).
        Tsv = "tsv",
        /// Comma-separated values with RFC 4180 quotes (a quoted field may
        /// not span lines).
        Csv = "csv",
        /// One JSON object per line.
        Jsonl = "jsonl" | "json" | "ndjson",
    }
}

/// `dataformat`.
pub const DATA_FORMAT: Property<DataFormat> = Property::new(
    "dataformat",
    "auto",
    "Syntax of datafile: auto (from the extension: .csv, .jsonl/.ndjson/.json, else tsv), tsv, csv or jsonl.",
);
/// `delimiter`.
pub const DELIMITER: Property<String> = Property::optional(
    "delimiter",
    "Column separator of a TSV or CSV datafile, one character (`tab` or `\\t` for a tab); default tab for tsv, comma for csv.",
);
/// `fieldnames`.
pub const FIELD_NAMES: Property<Vec<String>> = Property::optional(
    "fieldnames",
    "Names of the datafile's columns, comma-separated; when set, a TSV/CSV file has no header line (otherwise its first line names the columns). For JSON lines: the members stored (default: every member of the first object).",
);
/// `keyfield`.
pub const KEY_FIELD: Property<Vec<String>> = Property::optional(
    "keyfield",
    "Column(s) of the datafile that form the record key, comma-separated, joined by keyseparator (default: the first column). Key columns are not stored as fields.",
);
/// `keyseparator`.
pub const KEY_SEPARATOR: Property<String> = Property::new(
    "keyseparator",
    ":",
    "Text placed between the values of several keyfield columns.",
);
/// `usecustomkey`.
pub const USE_CUSTOM_KEY: Property<bool> = Property::new(
    "usecustomkey",
    "true",
    "Whether records of a datafile are keyed by keyfield (true) or by YCSB's key names user<hash> of the row number (false; every column is then a field).",
);
/// `keyfile`.
pub const KEY_FILE: Property<PathBuf> = Property::optional(
    "keyfile",
    "A file of keys, one per line, that run-phase operations choose from (with requestdistribution) instead of the loaded or generated keys.",
);

/// Every data-file property.
pub const PROPERTIES: &[&PropertyDecl] = &[
    DATAFILE.decl(),
    DATA_FORMAT.decl(),
    DELIMITER.decl(),
    FIELD_NAMES.decl(),
    KEY_FIELD.decl(),
    KEY_SEPARATOR.decl(),
    USE_CUSTOM_KEY.decl(),
    KEY_FILE.decl(),
];

/// Rows between remembered byte offsets.
pub const CHECKPOINT: u64 = 1024;

/// A data file or key file that cannot be used: one line naming
/// `file:line`.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum DataFileError {
    /// The file cannot be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A row that does not parse.
    #[error("{path}:{line}: {reason}")]
    Row {
        /// The file.
        path: String,
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// The file as a whole cannot be used (no rows, unknown key column).
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

/// Many strings in one buffer: the loaded keys.
#[derive(Debug, Default)]
struct Strings {
    text: String,
    ends: Vec<usize>,
}

impl Strings {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len());
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

/// How rows are split into columns.
#[derive(Clone, Debug)]
enum Syntax {
    Delimited { delimiter: char, quoted: bool },
    Jsonl,
}

/// A checked data file: its layout, its keys and where its rows start.
#[derive(Debug)]
pub struct DataSet {
    path: PathBuf,
    syntax: Syntax,
    header_line: bool,
    columns: Vec<String>,
    key_columns: Vec<usize>,
    field_columns: Vec<usize>,
    key_separator: String,
    custom_keys: bool,
    rows: u64,
    /// (byte offset, line number) of rows 0, CHECKPOINT, 2·CHECKPOINT, ...
    checkpoints: Vec<(u64, u64)>,
    load_keys: Strings,
    run_keys: Option<Strings>,
    value_bytes: u64,
    key_bytes: u64,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DataFileError + '_ {
    move |source| DataFileError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Splits one delimited line into `out`; CSV quotes when `quoted`.
fn split_delimited(
    line: &str,
    delimiter: char,
    quoted: bool,
    out: &mut Vec<String>,
) -> Result<(), String> {
    out.clear();
    if !quoted {
        out.extend(line.split(delimiter).map(str::to_string));
        return Ok(());
    }
    let mut chars = line.chars().peekable();
    let mut field = String::new();
    loop {
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => {
                        return Err("a quoted field continues past the end of the line (multi-line CSV fields are not supported)".into())
                    }
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            match chars.next() {
                None => {
                    out.push(std::mem::take(&mut field));
                    return Ok(());
                }
                Some(c) if c == delimiter => out.push(std::mem::take(&mut field)),
                Some(c) => return Err(format!("unexpected '{c}' after a closing quote")),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        out.push(std::mem::take(&mut field));
                        return Ok(());
                    }
                    Some(c) if c == delimiter => {
                        out.push(std::mem::take(&mut field));
                        break;
                    }
                    Some(c) => field.push(c),
                }
            }
        }
    }
}

/// Reads a line without its `\n` / `\r\n`; `None` at the end.
fn read_line(reader: &mut impl BufRead, buf: &mut String) -> std::io::Result<Option<usize>> {
    buf.clear();
    let n = reader.read_line(buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.ends_with('\n') {
        buf.pop();
        if buf.ends_with('\r') {
            buf.pop();
        }
    }
    Ok(Some(n))
}

fn parse_delimiter(props: &Properties, default: char) -> Result<char, PropertyError> {
    match props.get_opt(&DELIMITER)? {
        None => Ok(default),
        Some(d) if d == "tab" || d == "\\t" || d == "\t" => Ok('\t'),
        Some(d) => {
            let mut chars = d.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c != '"' && c != '\n' && c != '\r' => Ok(c),
                _ => Err(props.invalid(
                    DELIMITER.decl(),
                    "expected one character (not a quote or line break), or tab",
                )),
            }
        }
    }
}

/// One row as column values (delimited) or a JSON object.
enum Row {
    Columns(Vec<String>),
    Object(serde_json::Map<String, serde_json::Value>),
}

impl DataSet {
    /// Reads and checks the data file and key file the properties name;
    /// `None` when neither `datafile` nor `keyfile` is set.
    ///
    /// # Errors
    ///
    /// [`DataSetError::Property`] for an invalid data-file property and
    /// [`DataSetError::File`] naming the file (and line) that cannot be
    /// read or parsed.
    pub fn from_properties(props: &Properties) -> Result<Option<Self>, DataSetError> {
        let datafile = props.get_opt(&DATAFILE)?;
        let keyfile = props.get_opt(&KEY_FILE)?;
        let run_keys = match &keyfile {
            Some(path) => Some(read_key_file(path)?),
            None => None,
        };
        let Some(path) = datafile else {
            return Ok(run_keys.map(Self::key_file_only));
        };
        let format = match props.get(&DATA_FORMAT)? {
            DataFormat::Auto => {
                let ext = path
                    .extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or("")
                    .to_ascii_lowercase();
                match ext.as_str() {
                    "csv" => DataFormat::Csv,
                    "jsonl" | "ndjson" | "json" => DataFormat::Jsonl,
                    _ => DataFormat::Tsv,
                }
            }
            f => f,
        };
        let syntax = match format {
            DataFormat::Csv => Syntax::Delimited {
                delimiter: parse_delimiter(props, ',')?,
                quoted: true,
            },
            DataFormat::Jsonl => Syntax::Jsonl,
            _ => Syntax::Delimited {
                delimiter: parse_delimiter(props, '\t')?,
                quoted: false,
            },
        };
        let names = props.get_opt(&FIELD_NAMES)?;
        let mut set = Self {
            header_line: names.is_none() && !matches!(syntax, Syntax::Jsonl),
            path,
            syntax,
            columns: names.unwrap_or_default(),
            key_columns: Vec::new(),
            field_columns: Vec::new(),
            key_separator: props.get(&KEY_SEPARATOR)?,
            custom_keys: props.get(&USE_CUSTOM_KEY)?,
            rows: 0,
            checkpoints: Vec::new(),
            load_keys: Strings::default(),
            run_keys,
            value_bytes: 0,
            key_bytes: 0,
        };
        let key_names = props.get_opt(&KEY_FIELD)?;
        set.scan(key_names.as_deref())?;
        Ok(Some(set))
    }

    fn key_file_only(keys: Strings) -> Self {
        Self {
            path: PathBuf::new(),
            syntax: Syntax::Jsonl,
            header_line: false,
            columns: Vec::new(),
            key_columns: Vec::new(),
            field_columns: Vec::new(),
            key_separator: String::new(),
            custom_keys: false,
            rows: 0,
            checkpoints: Vec::new(),
            load_keys: Strings::default(),
            run_keys: Some(keys),
            value_bytes: 0,
            key_bytes: 0,
        }
    }

    fn file_error(&self, reason: impl Into<String>) -> DataFileError {
        DataFileError::File {
            path: self.path.display().to_string(),
            reason: reason.into(),
        }
    }

    fn row_error(&self, line: u64, reason: impl Into<String>) -> DataFileError {
        DataFileError::Row {
            path: self.path.display().to_string(),
            line,
            reason: reason.into(),
        }
    }

    /// Resolves the key and field columns once the column names are known.
    fn resolve_columns(&mut self, key_names: Option<&[String]>) -> Result<(), DataFileError> {
        if self.columns.is_empty() {
            return Err(self.file_error("no columns (empty header or fieldnames)"));
        }
        for (i, name) in self.columns.iter().enumerate() {
            if name.is_empty() || self.columns[..i].contains(name) {
                return Err(self.file_error(format!(
                    "column names must be unique and not empty (column {} is '{name}')",
                    i + 1
                )));
            }
        }
        self.key_columns = match key_names {
            None => vec![0],
            Some(names) => names
                .iter()
                .map(|n| {
                    self.columns.iter().position(|c| c == n).ok_or_else(|| {
                        self.file_error(format!(
                            "keyfield '{n}' is not a column (columns: {})",
                            self.columns.join(", ")
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        if !self.custom_keys {
            self.key_columns.clear();
        }
        self.field_columns = (0..self.columns.len())
            .filter(|i| !self.key_columns.contains(i))
            .collect();
        if self.field_columns.is_empty() {
            return Err(self.file_error("every column is a key column: no field to store"));
        }
        Ok(())
    }

    fn parse_row(&self, line: &str, cells: &mut Vec<String>) -> Result<Row, String> {
        match &self.syntax {
            Syntax::Delimited { delimiter, quoted } => {
                split_delimited(line, *delimiter, *quoted, cells)?;
                if cells.len() != self.columns.len() {
                    return Err(format!(
                        "{} columns, expected {} ({})",
                        cells.len(),
                        self.columns.len(),
                        self.columns.join(", ")
                    ));
                }
                Ok(Row::Columns(std::mem::take(cells)))
            }
            Syntax::Jsonl => match serde_json::from_str::<serde_json::Value>(line) {
                Ok(serde_json::Value::Object(map)) => Ok(Row::Object(map)),
                Ok(_) => Err("expected a JSON object".into()),
                Err(e) => Err(format!("invalid JSON: {e}")),
            },
        }
    }

    /// The text of column `i` of a row, if present.
    fn cell<'r>(&self, row: &'r Row, i: usize, scratch: &'r mut String) -> Option<&'r str> {
        match row {
            Row::Columns(c) => c.get(i).map(String::as_str),
            Row::Object(map) => match map.get(&self.columns[i])? {
                serde_json::Value::String(s) => Some(s),
                other => {
                    *scratch = other.to_string();
                    Some(scratch)
                }
            },
        }
    }

    /// Builds row's key into `key` (custom keys only).
    fn row_key(&self, row: &Row, key: &mut String) -> Result<(), String> {
        key.clear();
        let mut scratch = String::new();
        for (n, &i) in self.key_columns.iter().enumerate() {
            if n > 0 {
                key.push_str(&self.key_separator);
            }
            let value = self
                .cell(row, i, &mut scratch)
                .ok_or_else(|| format!("no key field '{}'", self.columns[i]))?;
            key.push_str(value);
        }
        if key.is_empty() {
            return Err("empty key".into());
        }
        Ok(())
    }

    /// Fills `out` with the row's fields; returns their value bytes.
    fn row_fields(&self, row: &Row, out: &mut Record) -> u64 {
        out.clear();
        let mut scratch = String::new();
        for &i in &self.field_columns {
            if let Some(v) = self.cell(row, i, &mut scratch) {
                out.push(&self.columns[i], v.as_bytes());
            }
        }
        out.value_bytes() as u64
    }

    /// Reads the whole file once: columns, keys, checkpoints, sizes.
    fn scan(&mut self, key_names: Option<&[String]>) -> Result<(), DataFileError> {
        let file = ycsb_db::open_input(&self.path).map_err(|e| io(&self.path)(e.into()))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut line = String::new();
        let mut offset = 0u64;
        let mut line_no = 0u64;
        let mut cells = Vec::new();
        let mut key = String::new();
        let mut record = Record::new();
        let mut columns_known = !self.columns.is_empty();
        if columns_known {
            self.resolve_columns(key_names)?;
        }
        loop {
            let read = match read_line(&mut reader, &mut line) {
                Ok(Some(n)) => n as u64,
                Ok(None) => break,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    return Err(self.row_error(line_no + 1, "not UTF-8 text"))
                }
                Err(e) => return Err(io(&self.path)(e)),
            };
            line_no += 1;
            let start = offset;
            offset += read;
            if line.trim().is_empty() {
                continue;
            }
            if self.header_line && line_no == 1 {
                let Syntax::Delimited { delimiter, quoted } = self.syntax else {
                    unreachable!("JSON lines have no header line")
                };
                split_delimited(&line, delimiter, quoted, &mut cells)
                    .map_err(|r| self.row_error(line_no, r))?;
                self.columns = cells.iter().map(|c| c.trim().to_string()).collect();
                self.resolve_columns(key_names)?;
                columns_known = true;
                continue;
            }
            let row = self
                .parse_row(&line, &mut cells)
                .map_err(|r| self.row_error(line_no, r))?;
            if !columns_known {
                // JSON lines without fieldnames: the first object's members.
                if let Row::Object(map) = &row {
                    self.columns = map.keys().cloned().collect();
                }
                self.resolve_columns(key_names)?;
                columns_known = true;
            }
            if self.rows.is_multiple_of(CHECKPOINT) {
                self.checkpoints.push((start, line_no));
            }
            if self.custom_keys {
                self.row_key(&row, &mut key)
                    .map_err(|r| self.row_error(line_no, r))?;
                self.key_bytes += key.len() as u64;
                self.load_keys.push(&key);
            }
            self.value_bytes += self.row_fields(&row, &mut record);
            self.rows += 1;
        }
        if self.rows == 0 {
            return Err(self.file_error("no data rows"));
        }
        Ok(())
    }

    /// `props` with what the data decides: `recordcount` (the rows, or the
    /// keys of a `keyfile` given alone) and `fieldcount`.
    pub fn workload_properties(&self, props: &Properties) -> Properties {
        let mut p = props.clone();
        if self.has_rows() {
            p.set("recordcount", self.rows.to_string(), Origin::Api);
            p.set(
                "fieldcount",
                self.field_columns.len().to_string(),
                Origin::Api,
            );
        } else if let Some(n) = self.run_key_count() {
            p.set("recordcount", n.to_string(), Origin::Api);
        }
        p
    }

    /// Whether records come from a data file (not only run keys).
    pub fn has_rows(&self) -> bool {
        self.rows > 0
    }

    /// The number of data rows.
    #[cfg(test)]
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The names of the stored fields.
    pub fn field_names(&self) -> Vec<String> {
        self.field_columns
            .iter()
            .map(|&i| self.columns[i].clone())
            .collect()
    }

    /// Whether keys come from `keyfield` rather than YCSB's key names.
    pub fn custom_keys(&self) -> bool {
        self.custom_keys && self.has_rows()
    }

    /// The number of keys the run phase chooses from, when not YCSB's.
    pub fn run_key_count(&self) -> Option<u64> {
        match &self.run_keys {
            Some(k) => Some(k.len() as u64),
            None if self.custom_keys() => Some(self.rows),
            None => None,
        }
    }

    /// The run-phase key for key number `number`, when keys are not
    /// YCSB's: from the key file (wrapping if it has fewer keys than the
    /// data set) or the loaded keys.
    pub fn run_key(&self, number: u64) -> Option<&str> {
        let keys = match &self.run_keys {
            Some(k) => k,
            None if self.custom_keys() => &self.load_keys,
            None => return None,
        };
        Some(keys.get((number % keys.len() as u64) as usize))
    }

    /// The loaded key of row `row` (custom keys only).
    pub fn load_key(&self, row: u64) -> Option<&str> {
        (self.custom_keys() && row < self.rows).then(|| self.load_keys.get(row as usize))
    }

    /// Value bytes in the whole file (every stored field of every row).
    #[cfg(test)]
    pub fn value_bytes(&self) -> u64 {
        self.value_bytes
    }

    /// The mean length of a stored field value.
    pub fn mean_field_length(&self) -> f64 {
        let fields = (self.rows * self.field_columns.len() as u64).max(1);
        self.value_bytes as f64 / fields as f64
    }

    /// A reader of rows `first..` for one load thread.
    ///
    /// # Errors
    ///
    /// [`DataFileError::Io`] when the file cannot be reopened.
    pub fn reader(self: &Arc<Self>, first: u64) -> Result<RowReader, DataFileError> {
        let file = ycsb_db::open_input(&self.path).map_err(|e| io(&self.path)(e.into()))?;
        let mut reader = RowReader {
            set: Arc::clone(self),
            input: BufReader::with_capacity(1 << 16, file),
            next_row: 0,
            line_no: 0,
            line: String::new(),
            cells: Vec::new(),
        };
        if self.rows == 0 {
            return Ok(reader);
        }
        let checkpoint = (first.min(self.rows - 1) / CHECKPOINT) as usize;
        let (offset, line_no) = self.checkpoints[checkpoint];
        reader
            .input
            .seek(SeekFrom::Start(offset))
            .map_err(io(&self.path))?;
        reader.next_row = checkpoint as u64 * CHECKPOINT;
        reader.line_no = line_no - 1;
        while reader.next_row < first {
            reader.skip()?;
        }
        Ok(reader)
    }
}

/// Reads the rows of a [`DataSet`] sequentially (one per load thread).
pub struct RowReader {
    set: Arc<DataSet>,
    input: BufReader<File>,
    next_row: u64,
    line_no: u64,
    line: String,
    cells: Vec<String>,
}

impl std::fmt::Debug for RowReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowReader")
            .field("next_row", &self.next_row)
            .finish_non_exhaustive()
    }
}

impl RowReader {
    /// Reads the next non-blank line into `self.line`.
    fn next_line(&mut self) -> Result<(), DataFileError> {
        loop {
            match read_line(&mut self.input, &mut self.line) {
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Err(self.set.row_error(
                        self.line_no,
                        "the file ended early (changed since it was checked?)",
                    ))
                }
                Err(e) => return Err(io(&self.set.path)(e)),
            }
            self.line_no += 1;
            if !(self.line.trim().is_empty() || self.set.header_line && self.line_no == 1) {
                return Ok(());
            }
        }
    }

    fn skip(&mut self) -> Result<(), DataFileError> {
        self.next_line()?;
        self.next_row += 1;
        Ok(())
    }

    /// Reads the next row: its key into `key` (custom keys; otherwise
    /// `key` is untouched) and its fields into `fields`.
    ///
    /// # Errors
    ///
    /// [`DataFileError`] when the file changed since it was checked.
    pub fn next_row(&mut self, key: &mut String, fields: &mut Record) -> Result<(), DataFileError> {
        self.next_line()?;
        let set = Arc::clone(&self.set);
        let row = set
            .parse_row(&self.line, &mut self.cells)
            .map_err(|r| set.row_error(self.line_no, r))?;
        if set.custom_keys {
            set.row_key(&row, key)
                .map_err(|r| set.row_error(self.line_no, r))?;
        }
        set.row_fields(&row, fields);
        if let Row::Columns(cells) = row {
            // Reuse the column strings' allocations for the next row.
            self.cells = cells;
        }
        self.next_row += 1;
        Ok(())
    }
}

fn read_key_file(path: &Path) -> Result<Strings, DataFileError> {
    let file = ycsb_db::open_input(path).map_err(|e| io(path)(e.into()))?;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    let mut keys = Strings::default();
    let mut line_no = 0;
    loop {
        match read_line(&mut reader, &mut line) {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(DataFileError::Row {
                    path: path.display().to_string(),
                    line: line_no + 1,
                    reason: "not UTF-8 text".into(),
                })
            }
            Err(e) => return Err(io(path)(e)),
        }
        line_no += 1;
        if !line.is_empty() {
            keys.push(&line);
        }
    }
    if keys.len() == 0 {
        return Err(DataFileError::File {
            path: path.display().to_string(),
            reason: "no keys".into(),
        });
    }
    Ok(keys)
}

/// An error reading a file workload (`datafile`, `keyfile`): a property
/// or the file.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum DataSetError {
    /// A data-file property is invalid.
    #[error(transparent)]
    Property(#[from] PropertyError),
    /// The data file or key file cannot be used.
    #[error(transparent)]
    File(#[from] DataFileError),
}

#[cfg(test)]
mod tests;
