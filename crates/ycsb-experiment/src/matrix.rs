//! `matrix.toml`: parsing and validation, all before anything runs.
//!
//! Every refusal names the matrix file and the line of the offending key or
//! value, so a typo costs seconds, not a night of benchmarking.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use ycsb_db::{Protocol, StoreDescriptor};

use crate::error::MatrixError;

/// The registry's descriptor of the store called `name` (or an alias).
pub(crate) fn descriptor(name: &str) -> Option<&'static StoreDescriptor> {
    ycsb_stores::STORES.iter().find(|s| s.matches(name))
}

/// The names of the registry's stores that `keep`, for messages.
fn store_names(keep: impl Fn(&StoreDescriptor) -> bool) -> String {
    let names: Vec<&str> = ycsb_stores::STORES
        .iter()
        .filter(|s| keep(s))
        .map(|s| s.name)
        .collect();
    if names.is_empty() {
        "none in this build".into()
    } else {
        names.join(", ")
    }
}

/// The directory property of an embedded engine, from its descriptor.
pub(crate) fn dir_property(store: &str) -> Option<&'static str> {
    descriptor(store)?.data_dir.map(|d| d.name)
}

type RawAxis = Spanned<Vec<Spanned<toml::Value>>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    experiment: Spanned<RawExperiment>,
    #[serde(default)]
    properties: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    axes: Spanned<BTreeMap<Spanned<String>, RawAxis>>,
    #[serde(default)]
    db: BTreeMap<Spanned<String>, Spanned<RawDb>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    name: Option<Spanned<String>>,
    description: Option<String>,
    repeats: Option<Spanned<u32>>,
    phases: Option<Spanned<Vec<Spanned<String>>>>,
    reuse_load_across: Option<Vec<Spanned<String>>>,
    time_limit: Option<Spanned<u64>>,
    #[serde(default)]
    property_files: Vec<Spanned<String>>,
    baseline: Option<BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
    cpus: Option<Spanned<String>>,
    server_cpus: Option<Spanned<String>>,
    memory_limit: Option<Spanned<String>>,
    io_ceiling: Option<Spanned<String>>,
    status_interval: Option<Spanned<f64>>,
    data_dir: Option<Spanned<String>>,
    keep_data: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDb {
    store: Option<Spanned<String>>,
    #[serde(default)]
    property_files: Vec<Spanned<String>>,
    #[serde(default)]
    properties: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    server: Option<Spanned<String>>,
    engine: Option<Spanned<String>>,
    #[serde(default)]
    engine_property_files: Vec<Spanned<String>>,
    #[serde(default)]
    engine_properties: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// Which phases each cell runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases {
    /// Insert the data set.
    pub load: bool,
    /// Run the operation mix.
    pub run: bool,
}

/// A server a db entry talks to, started per cell on loopback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// The `redis-server` program without persistence, its directory
    /// inside the cell's. (The variant's name is recorded in `cell.json`.)
    Redis,
    /// `ycsb serve <engine>` over the client store's protocol, its data in
    /// the cell's DB directory.
    YcsbServe {
        /// The embedded store served.
        engine: String,
        /// Property files of the served engine.
        property_files: Vec<PathBuf>,
        /// Properties of the served engine.
        properties: Vec<(String, String)>,
    },
}

/// One entry of the `db` axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Db {
    /// The name used on the axis and in cell names.
    pub label: String,
    /// The `ycsb` store (`-db`).
    pub store: String,
    /// Property files of this db, after the base files.
    pub property_files: Vec<PathBuf>,
    /// Properties of this db, after the base properties.
    pub properties: Vec<(String, String)>,
    /// The server to start per cell, if any.
    pub server: Option<Server>,
}

impl Db {
    /// The engine whose data lives in the cell's DB directory, and its
    /// directory property: the client's own store or the served one.
    pub fn data_engine(&self) -> Option<(&str, &'static str)> {
        match &self.server {
            Some(Server::YcsbServe { engine, .. }) => {
                dir_property(engine).map(|p| (engine.as_str(), p))
            }
            Some(Server::Redis) => None,
            None => dir_property(&self.store).map(|p| (self.store.as_str(), p)),
        }
    }

    /// Whether data loaded by one process can be copied and reopened by
    /// another: only engines with a DB directory.
    pub fn data_is_reusable(&self) -> bool {
        self.data_engine().is_some()
    }
}

/// One value of an axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisValue {
    /// The value given to `ycsb` (a property value or a file path).
    pub value: String,
    /// The short form in cell names and tables.
    pub label: String,
}

/// One axis: `db`, `workload` (property files), `memory_limit` (the
/// client's memory cgroup) or any property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// `db`, `workload` or a property name.
    pub name: String,
    /// Its values in file order.
    pub values: Vec<AxisValue>,
}

/// A validated matrix.
#[derive(Clone, Debug)]
pub struct Matrix {
    /// The experiment's name: `results/<name>/`.
    pub name: String,
    /// Free text for the report.
    pub description: String,
    /// The matrix file.
    pub path: PathBuf,
    /// The matrix file's text, kept with the results.
    pub text: String,
    /// Runs of every cell.
    pub repeats: u32,
    /// The phases of every cell.
    pub phases: Phases,
    /// Axes whose values share one load (the load uses their first value).
    pub reuse_load_across: Vec<String>,
    /// Seconds per phase (`maxexecutiontime`).
    pub time_limit: Option<u64>,
    /// Base property files.
    pub property_files: Vec<PathBuf>,
    /// Base properties.
    pub properties: Vec<(String, String)>,
    /// The axes in file order; `db` is always present.
    pub axes: Vec<Axis>,
    /// The db entries by label (only those on the axis).
    pub dbs: BTreeMap<String, Db>,
    /// Baseline cell coordinates (axis name, value label).
    pub baseline: Option<Vec<(String, String)>>,
    /// `taskset -c` CPU list of the client.
    pub cpus: Option<String>,
    /// `taskset -c` CPU list of servers.
    pub server_cpus: Option<String>,
    /// Memory limit of the client's cgroup in bytes (page cache included).
    pub memory_limit: Option<u64>,
    /// Bytes written to measure the I/O ceiling; `None` skips it.
    pub io_ceiling: Option<u64>,
    /// Seconds between status lines (the time series resolution), at
    /// least [`MIN_STATUS_INTERVAL`].
    pub status_interval: f64,
    /// Where the DB directories go, if not under the results.
    pub data_dir: Option<PathBuf>,
    /// Keep DB directories after their cells.
    pub keep_data: bool,
}

/// Byte offset to a 1-based line number.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
    dir: PathBuf,
}

impl Ctx<'_> {
    fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        message: impl std::fmt::Display,
    ) -> Result<T, MatrixError> {
        Err(MatrixError {
            path: self.path.to_path_buf(),
            line: Some(line_of(self.text, span.start)),
            message: message.to_string(),
        })
    }

    /// Refuses a name that becomes (part of) a directory name unless it
    /// is one directory entry: the rule of [`crate::paths::name_problem`].
    fn dir_name(
        &self,
        span: std::ops::Range<usize>,
        what: &str,
        name: &str,
    ) -> Result<(), MatrixError> {
        match crate::paths::name_problem(name) {
            Some(why) => self.err(
                span,
                format!("{what} '{name}' cannot name a directory under the results: {why}"),
            ),
            None => Ok(()),
        }
    }

    fn file(&self, s: &Spanned<String>, what: &str) -> Result<PathBuf, MatrixError> {
        let path = self.dir.join(s.get_ref());
        if !path.is_file() {
            return self.err(
                s.span(),
                format!(
                    "{what} '{}' not found (relative paths are relative to the matrix file's directory: {})",
                    s.get_ref(),
                    path.display()
                ),
            );
        }
        Ok(path)
    }

    fn files(&self, list: &[Spanned<String>], what: &str) -> Result<Vec<PathBuf>, MatrixError> {
        list.iter().map(|s| self.file(s, what)).collect()
    }

    fn scalar(&self, v: &Spanned<toml::Value>, key: &str) -> Result<String, MatrixError> {
        match v.get_ref() {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Float(f) => Ok(f.to_string()),
            toml::Value::Boolean(b) => Ok(b.to_string()),
            other => self.err(
                v.span(),
                format!(
                    "{key}: expected a string, number or boolean, found {}",
                    other.type_str()
                ),
            ),
        }
    }

    fn properties(
        &self,
        map: &BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    ) -> Result<Vec<(String, String)>, MatrixError> {
        let mut out: Vec<(usize, String, String)> = Vec::new();
        for (k, v) in map {
            if k.get_ref().trim().is_empty() {
                return self.err(k.span(), "empty property name");
            }
            out.push((
                k.span().start,
                k.get_ref().clone(),
                self.scalar(v, k.get_ref())?,
            ));
        }
        // Keep file order: later lines win in ycsb, as users expect.
        out.sort_by_key(|(at, _, _)| *at);
        Ok(out.into_iter().map(|(_, k, v)| (k, v)).collect())
    }
}

/// Parses a size such as `512M`, `2G`, `1048576`.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let mult: u64 = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult).filter(|&b| b > 0)
}

fn valid_cpu_list(text: &str) -> bool {
    !text.is_empty()
        && text.split(',').all(|part| {
            let mut ends = part.splitn(2, '-');
            ends.all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
}

/// The label of value number `index` of a property axis: the value's
/// characters, or `secretN` when the value is (or holds) a secret, which
/// must not name a directory or appear in a report.
fn axis_label(axis: &str, value: &str, index: usize) -> String {
    if crate::redact::value(axis, value) == value {
        label_of(value)
    } else {
        format!("secret{}", index + 1)
    }
}

/// Characters allowed in directory names of cells.
fn label_of(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The shortest `experiment.status_interval`, seconds: a finer time
/// series would have the status thread compete with the clients.
pub const MIN_STATUS_INTERVAL: f64 = 0.05;

/// The longest interval between the runner's samples of the processes'
/// CPU, seconds: short phases still get a figure.
const MAX_SAMPLE_INTERVAL: f64 = 0.5;

impl Matrix {
    /// How often the runner samples the client's (and a server's) CPU
    /// and memory: every status interval, at least twice a second.
    pub fn sample_interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.status_interval.min(MAX_SAMPLE_INTERVAL))
    }
}

/// The most repeats of a cell a matrix may ask for: each is a whole
/// benchmark, and a thousand already takes days; beyond that it is a typo.
pub const MAX_REPEATS: u32 = 1000;

/// The most `ycsb` processes a cell of the `clients` axis may run at
/// once: beyond that, one host is the bottleneck and the cell measures it.
pub const MAX_CLIENTS: u32 = 64;

/// The most cells (the product of the axes' lengths and the repeats) a
/// matrix may have: every cell is a directory and a process.
pub const MAX_CELLS: u64 = 100_000;

/// Reads and validates a matrix file.
///
/// # Errors
/// The file cannot be read, or the first problem found, naming its line.
pub fn load(path: &Path) -> Result<Matrix, MatrixError> {
    // A FIFO, a device or a huge file is refused, not read.
    let text = ycsb_db::read_input_to_string(path, ycsb_db::CONFIG_FILE_LIMIT).map_err(|e| {
        MatrixError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot read: {e}"),
        }
    })?;
    parse(path, &text)
}

/// Validates matrix text read from `path` (used for messages and relative
/// paths).
///
/// # Errors
/// The first problem found, naming its line.
pub fn parse(path: &Path, text: &str) -> Result<Matrix, MatrixError> {
    let raw: RawMatrix = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        MatrixError {
            path: path.to_path_buf(),
            line: Some(line),
            message: e.message().trim().to_string(),
        }
    })?;
    let dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let cx = Ctx { path, text, dir };
    let e = raw.experiment.get_ref();
    let exp_span = raw.experiment.span();

    let name = match &e.name {
        Some(n) => {
            if label_of(n.get_ref()) != *n.get_ref() {
                return cx.err(
                    n.span(),
                    format!("experiment.name '{}': use letters, digits, '.', '_', '-' or '+' (it names a directory)", n.get_ref()),
                );
            }
            cx.dir_name(n.span(), "experiment.name", n.get_ref())?;
            n.get_ref().clone()
        }
        None => {
            let name = label_of(
                &path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
            if let Some(why) = crate::paths::name_problem(&name) {
                return cx.err(
                    exp_span.clone(),
                    format!("the experiment's name, '{name}' from the file name, cannot name its results directory ({why}): set experiment.name"),
                );
            }
            name
        }
    };
    let repeats = match &e.repeats {
        Some(r) if *r.get_ref() == 0 => {
            return cx.err(r.span(), "experiment.repeats must be at least 1")
        }
        Some(r) if *r.get_ref() > MAX_REPEATS => {
            return cx.err(
                r.span(),
                format!(
                    "experiment.repeats = {} is absurd: at most {MAX_REPEATS}",
                    r.get_ref()
                ),
            )
        }
        Some(r) => *r.get_ref(),
        None => 1,
    };
    let phases = match &e.phases {
        None => Phases {
            load: true,
            run: true,
        },
        Some(list) => {
            if list.get_ref().is_empty() {
                return cx.err(
                    list.span(),
                    "experiment.phases is empty: use [\"load\"], [\"run\"] or [\"load\", \"run\"]",
                );
            }
            let mut p = Phases {
                load: false,
                run: false,
            };
            for item in list.get_ref() {
                match item.get_ref().as_str() {
                    "load" if !p.load => p.load = true,
                    "run" if !p.run => p.run = true,
                    "load" | "run" => {
                        return cx.err(
                            item.span(),
                            format!("experiment.phases: '{}' listed twice", item.get_ref()),
                        )
                    }
                    other => {
                        return cx.err(
                            item.span(),
                            format!("experiment.phases: unknown phase '{other}' (load or run)"),
                        )
                    }
                }
            }
            p
        }
    };
    let time_limit = match &e.time_limit {
        Some(t) if *t.get_ref() == 0 => {
            return cx.err(t.span(), "experiment.time_limit must be at least 1 second")
        }
        Some(t) => Some(*t.get_ref()),
        None => None,
    };
    let status_interval = match &e.status_interval {
        Some(t) if !(t.get_ref().is_finite() && *t.get_ref() >= MIN_STATUS_INTERVAL) => {
            return cx.err(
                t.span(),
                format!(
                    "experiment.status_interval = {}: expected seconds, at least {MIN_STATUS_INTERVAL} (0.25 gives four time-series points a second)",
                    t.get_ref()
                ),
            )
        }
        Some(t) => *t.get_ref(),
        None => 1.0,
    };
    let size = |s: &Option<Spanned<String>>, key: &str| -> Result<Option<u64>, MatrixError> {
        match s {
            None => Ok(None),
            Some(s) => match parse_size(s.get_ref()) {
                Some(b) => Ok(Some(b)),
                None => cx.err(
                    s.span(),
                    format!(
                        "experiment.{key} '{}': expected a size such as 512M or 2G",
                        s.get_ref()
                    ),
                ),
            },
        }
    };
    let memory_limit = size(&e.memory_limit, "memory_limit")?;
    let io_ceiling = match &e.io_ceiling {
        Some(s) if s.get_ref() == "off" => None,
        other => Some(size(other, "io_ceiling")?.unwrap_or(256 << 20)),
    };
    for (cpus, key) in [(&e.cpus, "cpus"), (&e.server_cpus, "server_cpus")] {
        if let Some(c) = cpus {
            if !valid_cpu_list(c.get_ref()) {
                return cx.err(
                    c.span(),
                    format!(
                        "experiment.{key} '{}': expected a CPU list such as 0 or 0,2 or 0-3",
                        c.get_ref()
                    ),
                );
            }
        }
    }
    let property_files = cx.files(&e.property_files, "property file")?;
    let properties = cx.properties(&raw.properties)?;

    // Axes, in file order.
    let mut raw_axes: Vec<_> = raw.axes.get_ref().iter().collect();
    raw_axes.sort_by_key(|(k, _)| k.span().start);
    if !raw_axes.iter().any(|(k, _)| k.get_ref() == "db") {
        return cx.err(
            raw.axes.span(),
            format!(
                "axes: no 'db' axis (list the stores to compare, some of: {})",
                store_names(|_| true)
            ),
        );
    }
    // Before any value is looked at: a typo of a size must cost no time.
    let cells = raw_axes.iter().fold(u64::from(repeats), |n, (_, values)| {
        n.saturating_mul(values.get_ref().len() as u64)
    });
    if cells > MAX_CELLS {
        return cx.err(
            raw.axes.span(),
            format!("the matrix has {cells} cells (axes times repeats): at most {MAX_CELLS}"),
        );
    }
    let raw_dbs: HashMap<&str, &Spanned<RawDb>> = raw
        .db
        .iter()
        .map(|(k, d)| (k.get_ref().as_str(), d))
        .collect();
    let mut axes = Vec::new();
    let mut dbs = BTreeMap::new();
    for (key, values) in raw_axes {
        let name = key.get_ref().clone();
        // Part of every cell's directory name: `<axis>=<label>`.
        if label_of(&name) != name {
            return cx.err(
                key.span(),
                format!("axes.{name}: an axis name is part of cell directory names: use letters, digits, '.', '_', '-' or '+'"),
            );
        }
        cx.dir_name(key.span(), "axis", &name)?;
        if values.get_ref().is_empty() {
            return cx.err(
                values.span(),
                format!("axes.{name} is empty: give at least one value"),
            );
        }
        let mut out: Vec<AxisValue> = Vec::with_capacity(values.get_ref().len());
        // Labels seen: a set, so that a long axis is checked in linear time.
        let mut labels: HashSet<String> = HashSet::with_capacity(values.get_ref().len());
        for v in values.get_ref() {
            let value = cx.scalar(v, &format!("axes.{name}"))?;
            let label = match name.as_str() {
                "workload" => {
                    let path = cx.file(&Spanned::new(v.span(), value.clone()), "workload file")?;
                    let stem = path
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let label = label_of(&stem);
                    if !labels.insert(label.clone()) {
                        return cx.err(
                            v.span(),
                            format!(
                                "axes.workload: two files named '{stem}'; cell names would clash"
                            ),
                        );
                    }
                    out.push(AxisValue {
                        value: path.display().to_string(),
                        label,
                    });
                    continue;
                }
                "db" => {
                    let label = value.clone();
                    if label_of(&label) != label || label.is_empty() {
                        return cx.err(
                            v.span(),
                            format!("axes.db '{label}': use letters, digits, '.', '_', '-' or '+'"),
                        );
                    }
                    cx.dir_name(v.span(), "axes.db", &label)?;
                    let db = match raw_dbs.get(label.as_str()) {
                        Some(d) => build_db(&cx, &label, d.get_ref(), d.span())?,
                        None if descriptor(&label).is_some() => Db {
                            label: label.clone(),
                            store: descriptor(&label).map(|d| d.name.to_string()).unwrap_or_default(),
                            property_files: Vec::new(),
                            properties: Vec::new(),
                            server: None,
                        },
                        None => {
                            return cx.err(
                                v.span(),
                                format!(
                                    "axes.db: unknown db '{label}': not a store ({}) and no [db.{label}] table",
                                    store_names(|_| true)
                                ),
                            )
                        }
                    };
                    dbs.insert(label.clone(), db);
                    label
                }
                "clients" => {
                    if !value
                        .parse::<u32>()
                        .is_ok_and(|n| (1..=MAX_CLIENTS).contains(&n))
                    {
                        return cx.err(
                            v.span(),
                            format!(
                                "axes.clients '{value}': expected a number of ycsb processes from 1 to {MAX_CLIENTS}"
                            ),
                        );
                    }
                    label_of(&value)
                }
                crate::sweep::AXIS => {
                    if !value
                        .trim()
                        .parse::<f64>()
                        .is_ok_and(|t| t.is_finite() && t >= 0.0)
                    {
                        return cx.err(
                            v.span(),
                            format!(
                                "axes.target '{value}': expected a rate in operations per second, 0 or more (0: unthrottled)"
                            ),
                        );
                    }
                    label_of(&value)
                }
                "memory_limit" => {
                    if parse_size(&value).is_none() {
                        return cx.err(
                            v.span(),
                            format!(
                                "axes.memory_limit '{value}': expected a size such as 512M or 2G"
                            ),
                        );
                    }
                    label_of(&value)
                }
                _ => axis_label(&name, &value, out.len()),
            };
            if !labels.insert(label.clone()) {
                return cx.err(
                    v.span(),
                    format!("axes.{name}: value '{value}' listed twice"),
                );
            }
            out.push(AxisValue { value, label });
        }
        axes.push(Axis { name, values: out });
    }
    for (k, d) in &raw.db {
        if !dbs.contains_key(k.get_ref()) {
            // A table nobody uses is most likely a misspelt axis value.
            return cx.err(
                d.span(),
                format!("[db.{}] is not on the db axis", k.get_ref()),
            );
        }
    }

    if let Some(clients) = axes.iter().find(|a| a.name == "clients") {
        let clients_span = raw
            .axes
            .get_ref()
            .iter()
            .find(|(k, _)| k.get_ref() == "clients")
            .map_or_else(|| raw.axes.span(), |(k, _)| k.span());
        let many = clients.values.iter().any(|v| v.value != "1");
        // Several processes share one data set only through a server.
        if let Some(db) = dbs
            .values()
            .find(|d| many && descriptor(&d.store).is_some_and(|x| x.server.is_none()))
        {
            return cx.err(
                clients_span.clone(),
                format!(
                    "axes.clients: db '{}' is embedded in each ycsb process; several clients need a server db (a client store such as {} with server = \"redis-server\" or \"ycsb-serve\")",
                    db.label,
                    store_names(|s| s.server.is_some())
                ),
            );
        }
        if let Some((k, _)) = properties
            .iter()
            .find(|(k, _)| k == "client.count" || k == "client.index")
        {
            return cx.err(
                clients_span,
                format!("axes.clients sets {k} for each client; remove it from [properties]"),
            );
        }
    }
    let mut reuse_load_across = Vec::new();
    if let Some(list) = &e.reuse_load_across {
        for a in list {
            let n = a.get_ref();
            if !axes.iter().any(|x| &x.name == n) {
                return cx.err(
                    a.span(),
                    format!("experiment.reuse_load_across: no axis '{n}'"),
                );
            }
            if n == "db" {
                return cx.err(
                    a.span(),
                    "experiment.reuse_load_across: the db axis cannot share a load",
                );
            }
            reuse_load_across.push(n.clone());
        }
        if !reuse_load_across.is_empty() {
            if !(phases.load && phases.run) {
                return cx.err(
                    exp_span.clone(),
                    "experiment.reuse_load_across needs phases = [\"load\", \"run\"]",
                );
            }
            if let Some(db) = dbs.values().find(|d| !d.data_is_reusable()) {
                return cx.err(
                    exp_span.clone(),
                    format!(
                        "experiment.reuse_load_across: db '{}' keeps no data directory to copy; only {} (embedded or served) can reuse a load",
                        db.label,
                        store_names(|s| s.data_dir.is_some())
                    ),
                );
            }
        }
    }

    let baseline = match &e.baseline {
        None => None,
        Some(map) => {
            let mut coords = Vec::new();
            for (k, v) in map {
                let value = cx.scalar(v, "experiment.baseline")?;
                let Some(axis) = axes.iter().find(|a| &a.name == k.get_ref()) else {
                    return cx.err(
                        k.span(),
                        format!("experiment.baseline: no axis '{}'", k.get_ref()),
                    );
                };
                let label = if axis.name == "workload" {
                    Path::new(&value)
                        .file_stem()
                        .map(|s| label_of(&s.to_string_lossy()))
                        .unwrap_or_default()
                } else if axis.name == "db" {
                    value.clone()
                } else {
                    axis.values
                        .iter()
                        .find(|x| x.value == value)
                        .map_or_else(|| label_of(&value), |x| x.label.clone())
                };
                if !axis.values.iter().any(|x| x.label == label) {
                    return cx.err(
                        v.span(),
                        format!(
                            "experiment.baseline: '{value}' is not a value of axis '{}'",
                            axis.name
                        ),
                    );
                }
                coords.push((axis.name.clone(), label));
            }
            Some(coords)
        }
    };
    // Every cell's name, with the runner's prefix, must fit in a directory
    // entry: the longest is each axis' longest `<axis>=<label>`.
    let longest = axes
        .iter()
        .map(|a| a.name.len() + 1 + a.values.iter().map(|v| v.label.len()).max().unwrap_or(0) + 1)
        .sum::<usize>()
        + format!("load,r{repeats}").len();
    if longest + crate::paths::LONGEST_PREFIX > crate::paths::NAME_MAX {
        return cx.err(
            raw.axes.span(),
            format!(
                "the longest cell name would be {longest} bytes: a directory name can have at most {} (shorten axis names or values)",
                crate::paths::NAME_MAX - crate::paths::LONGEST_PREFIX
            ),
        );
    }
    if let Some(d) = &e.data_dir {
        if d.get_ref().is_empty() {
            return cx.err(d.span(), "experiment.data_dir is empty");
        }
    }
    Ok(Matrix {
        name,
        description: e.description.clone().unwrap_or_default(),
        path: path.to_path_buf(),
        text: text.to_string(),
        repeats,
        phases,
        reuse_load_across,
        time_limit,
        property_files,
        properties,
        axes,
        dbs,
        baseline,
        cpus: e.cpus.as_ref().map(|c| c.get_ref().clone()),
        server_cpus: e.server_cpus.as_ref().map(|c| c.get_ref().clone()),
        memory_limit,
        io_ceiling,
        status_interval,
        data_dir: e.data_dir.as_ref().map(|d| cx.dir.join(d.get_ref())),
        keep_data: e.keep_data.unwrap_or(false),
    })
}

fn build_db(
    cx: &Ctx<'_>,
    label: &str,
    d: &RawDb,
    span: std::ops::Range<usize>,
) -> Result<Db, MatrixError> {
    let client = match &d.store {
        Some(s) => match descriptor(s.get_ref()) {
            Some(found) => found,
            None => {
                return cx.err(
                    s.span(),
                    format!(
                        "db.{label}.store: unknown store '{}' ({})",
                        s.get_ref(),
                        store_names(|_| true)
                    ),
                )
            }
        },
        None => match descriptor(label) {
            Some(found) => found,
            None => {
                return cx.err(
                    span,
                    format!(
                        "[db.{label}]: '{label}' is not a store: set store = \"...\" ({})",
                        store_names(|_| true)
                    ),
                )
            }
        },
    };
    let store = client.name.to_string();
    let server = match &d.server {
        None => {
            if let Some(e) = &d.engine {
                return cx.err(
                    e.span(),
                    format!("db.{label}.engine needs server = \"ycsb-serve\""),
                );
            }
            None
        }
        Some(s) => {
            let Some(protocol) = client.server.map(|c| c.protocol) else {
                return cx.err(
                    s.span(),
                    format!(
                        "db.{label}.server: the client store must be a client of a server ({}) to talk to one, not '{store}'",
                        store_names(|s| s.server.is_some())
                    ),
                );
            };
            match s.get_ref().as_str() {
                "redis-server" => {
                    if protocol != Protocol::Resp {
                        return cx.err(
                            s.span(),
                            format!(
                                "db.{label}.server: redis-server speaks RESP, which '{store}' does not (RESP clients: {})",
                                store_names(|s| s.server.is_some_and(|c| c.protocol == Protocol::Resp))
                            ),
                        );
                    }
                    if let Some(e) = &d.engine {
                        return cx.err(
                            e.span(),
                            format!("db.{label}.engine is only for server = \"ycsb-serve\""),
                        );
                    }
                    Some(Server::Redis)
                }
                "ycsb-serve" => {
                    if !protocol.served_by_ycsb_serve() {
                        return cx.err(
                            s.span(),
                            format!(
                                "db.{label}.server: ycsb serve speaks RESP and HTTP, not the protocol of '{store}' (its clients: {})",
                                store_names(|s| s.server.is_some_and(|c| c.protocol.served_by_ycsb_serve()))
                            ),
                        );
                    }
                    let embedded = || store_names(StoreDescriptor::is_embedded);
                    let Some(engine) = &d.engine else {
                        return cx.err(
                            s.span(),
                            format!(
                                "db.{label}: server = \"ycsb-serve\" needs engine = one of {}",
                                embedded()
                            ),
                        );
                    };
                    let Some(served) = descriptor(engine.get_ref()).filter(|e| e.is_embedded())
                    else {
                        return cx.err(
                            engine.span(),
                            format!(
                                "db.{label}.engine '{}': ycsb serve embeds {}",
                                engine.get_ref(),
                                embedded()
                            ),
                        );
                    };
                    Some(Server::YcsbServe {
                        engine: served.name.to_string(),
                        property_files: cx.files(&d.engine_property_files, "property file")?,
                        properties: cx.properties(&d.engine_properties)?,
                    })
                }
                other => {
                    let known = "redis-server or ycsb-serve";
                    return cx.err(
                        s.span(),
                        format!("db.{label}.server: unknown server '{other}' ({known})"),
                    );
                }
            }
        }
    };
    if server.is_none() && (!d.engine_property_files.is_empty() || !d.engine_properties.is_empty())
    {
        return cx.err(span, format!("db.{label}: engine_property_files and engine_properties need server = \"ycsb-serve\""));
    }
    Ok(Db {
        label: label.to_string(),
        store,
        property_files: cx.files(&d.property_files, "property file")?,
        properties: cx.properties(&d.properties)?,
        server,
    })
}
