//! `matrix.toml`: parsing and validation, all before anything runs.
//!
//! Every refusal names the matrix file and the line of the offending key or
//! value, so a typo costs seconds, not a night of benchmarking.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use ycsb_db::StoreDescriptor;

use crate::error::MatrixError;

mod axes;

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
    /// The `memcached` program on loopback, TCP only (memcached keeps
    /// nothing on disk).
    Memcached,
    /// A PostgreSQL cluster made by `initdb` in the cell's directory (as
    /// `nobody` when the runner is root), its postmaster on loopback.
    Postgres,
    /// A MariaDB data directory made by `mariadb-install-db` in the cell's
    /// directory, `mariadbd` on loopback without grant tables.
    MariaDb,
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
            Some(Server::Redis | Server::Memcached | Server::Postgres | Server::MariaDb) => None,
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
    let cx = Ctx {
        path,
        text,
        dir: matrix_dir(path),
    };
    // This order decides which problem is reported when a matrix has
    // several.
    let e = raw.experiment.get_ref();
    let name = cx.experiment_name(e, raw.experiment.span())?;
    let repeats = cx.repeats(e)?;
    let phases = cx.phases(e)?;
    let time_limit = cx.time_limit(e)?;
    let status_interval = cx.status_interval(e)?;
    let memory_limit = cx.size(&e.memory_limit, "memory_limit")?;
    let io_ceiling = cx.io_ceiling(e)?;
    cx.check_cpu_lists(e)?;
    let property_files = cx.files(&e.property_files, "property file")?;
    let properties = cx.properties(&raw.properties)?;
    let (axes, dbs) = cx.axes(&raw, repeats)?;
    cx.check_clients(&raw.axes, &axes, &dbs, &properties)?;
    let reuse_load_across = cx.reuse_load_across(&raw.experiment, &axes, phases, &dbs)?;
    let baseline = cx.baseline(e, &axes)?;
    cx.check_cell_names(raw.axes.span(), &axes, repeats)?;
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

/// The directory relative paths in the matrix start from: the matrix
/// file's.
fn matrix_dir(path: &Path) -> PathBuf {
    path.parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// The keys of the `[experiment]` table, each checked on its line.
impl Ctx<'_> {
    /// `experiment.name`, or the file's name: it names the results'
    /// directory.
    fn experiment_name(
        &self,
        e: &RawExperiment,
        exp_span: std::ops::Range<usize>,
    ) -> Result<String, MatrixError> {
        if let Some(n) = &e.name {
            if label_of(n.get_ref()) != *n.get_ref() {
                return self.err(
                    n.span(),
                    format!("experiment.name '{}': use letters, digits, '.', '_', '-' or '+' (it names a directory)", n.get_ref()),
                );
            }
            self.dir_name(n.span(), "experiment.name", n.get_ref())?;
            return Ok(n.get_ref().clone());
        }
        let name = label_of(
            &self
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        if let Some(why) = crate::paths::name_problem(&name) {
            return self.err(
                exp_span,
                format!("the experiment's name, '{name}' from the file name, cannot name its results directory ({why}): set experiment.name"),
            );
        }
        Ok(name)
    }

    fn repeats(&self, e: &RawExperiment) -> Result<u32, MatrixError> {
        match &e.repeats {
            Some(r) if *r.get_ref() == 0 => {
                self.err(r.span(), "experiment.repeats must be at least 1")
            }
            Some(r) if *r.get_ref() > MAX_REPEATS => self.err(
                r.span(),
                format!(
                    "experiment.repeats = {} is absurd: at most {MAX_REPEATS}",
                    r.get_ref()
                ),
            ),
            Some(r) => Ok(*r.get_ref()),
            None => Ok(1),
        }
    }

    /// `experiment.phases`: load, run or both (the default), each once.
    fn phases(&self, e: &RawExperiment) -> Result<Phases, MatrixError> {
        let Some(list) = &e.phases else {
            return Ok(Phases {
                load: true,
                run: true,
            });
        };
        if list.get_ref().is_empty() {
            return self.err(
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
                    return self.err(
                        item.span(),
                        format!("experiment.phases: '{}' listed twice", item.get_ref()),
                    )
                }
                other => {
                    return self.err(
                        item.span(),
                        format!("experiment.phases: unknown phase '{other}' (load or run)"),
                    )
                }
            }
        }
        Ok(p)
    }

    fn time_limit(&self, e: &RawExperiment) -> Result<Option<u64>, MatrixError> {
        match &e.time_limit {
            Some(t) if *t.get_ref() == 0 => {
                self.err(t.span(), "experiment.time_limit must be at least 1 second")
            }
            Some(t) => Ok(Some(*t.get_ref())),
            None => Ok(None),
        }
    }

    fn status_interval(&self, e: &RawExperiment) -> Result<f64, MatrixError> {
        match &e.status_interval {
            Some(t) if !(t.get_ref().is_finite() && *t.get_ref() >= MIN_STATUS_INTERVAL) => self.err(
                t.span(),
                format!(
                    "experiment.status_interval = {}: expected seconds, at least {MIN_STATUS_INTERVAL} (0.25 gives four time-series points a second)",
                    t.get_ref()
                ),
            ),
            Some(t) => Ok(*t.get_ref()),
            None => Ok(1.0),
        }
    }

    /// A size key of `[experiment]`, such as `512M`.
    fn size(&self, s: &Option<Spanned<String>>, key: &str) -> Result<Option<u64>, MatrixError> {
        let Some(s) = s else {
            return Ok(None);
        };
        match parse_size(s.get_ref()) {
            Some(b) => Ok(Some(b)),
            None => self.err(
                s.span(),
                format!(
                    "experiment.{key} '{}': expected a size such as 512M or 2G",
                    s.get_ref()
                ),
            ),
        }
    }

    /// `experiment.io_ceiling`: how much to write to measure the disk,
    /// 256 MiB unless set; `off` skips it.
    fn io_ceiling(&self, e: &RawExperiment) -> Result<Option<u64>, MatrixError> {
        match &e.io_ceiling {
            Some(s) if s.get_ref() == "off" => Ok(None),
            other => Ok(Some(self.size(other, "io_ceiling")?.unwrap_or(256 << 20))),
        }
    }

    fn check_cpu_lists(&self, e: &RawExperiment) -> Result<(), MatrixError> {
        for (cpus, key) in [(&e.cpus, "cpus"), (&e.server_cpus, "server_cpus")] {
            if let Some(c) = cpus {
                if !valid_cpu_list(c.get_ref()) {
                    return self.err(
                        c.span(),
                        format!(
                            "experiment.{key} '{}': expected a CPU list such as 0 or 0,2 or 0-3",
                            c.get_ref()
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// `experiment.reuse_load_across`: axes (not db) whose cells share
    /// one load, which needs both phases and data that can be copied.
    fn reuse_load_across(
        &self,
        experiment: &Spanned<RawExperiment>,
        axes: &[Axis],
        phases: Phases,
        dbs: &BTreeMap<String, Db>,
    ) -> Result<Vec<String>, MatrixError> {
        let mut reuse_load_across = Vec::new();
        let Some(list) = &experiment.get_ref().reuse_load_across else {
            return Ok(reuse_load_across);
        };
        for a in list {
            let n = a.get_ref();
            if !axes.iter().any(|x| &x.name == n) {
                return self.err(
                    a.span(),
                    format!("experiment.reuse_load_across: no axis '{n}'"),
                );
            }
            if n == "db" {
                return self.err(
                    a.span(),
                    "experiment.reuse_load_across: the db axis cannot share a load",
                );
            }
            reuse_load_across.push(n.clone());
        }
        if reuse_load_across.is_empty() {
            return Ok(reuse_load_across);
        }
        if !(phases.load && phases.run) {
            return self.err(
                experiment.span(),
                "experiment.reuse_load_across needs phases = [\"load\", \"run\"]",
            );
        }
        if let Some(db) = dbs.values().find(|d| !d.data_is_reusable()) {
            return self.err(
                experiment.span(),
                format!(
                    "experiment.reuse_load_across: db '{}' keeps no data directory to copy; only {} (embedded or served) can reuse a load",
                    db.label,
                    store_names(|s| s.data_dir.is_some())
                ),
            );
        }
        Ok(reuse_load_across)
    }

    /// `experiment.baseline`: a value of some axes, as (axis, label).
    fn baseline(
        &self,
        e: &RawExperiment,
        axes: &[Axis],
    ) -> Result<Option<Vec<(String, String)>>, MatrixError> {
        let Some(map) = &e.baseline else {
            return Ok(None);
        };
        let mut coords = Vec::new();
        for (k, v) in map {
            let value = self.scalar(v, "experiment.baseline")?;
            let Some(axis) = axes.iter().find(|a| &a.name == k.get_ref()) else {
                return self.err(
                    k.span(),
                    format!("experiment.baseline: no axis '{}'", k.get_ref()),
                );
            };
            let label = baseline_label(axis, &value);
            if !axis.values.iter().any(|x| x.label == label) {
                return self.err(
                    v.span(),
                    format!(
                        "experiment.baseline: '{value}' is not a value of axis '{}'",
                        axis.name
                    ),
                );
            }
            coords.push((axis.name.clone(), label));
        }
        Ok(Some(coords))
    }

    /// Every cell's name, with the runner's prefix, must fit in a
    /// directory entry: the longest is each axis' longest `<axis>=<label>`.
    fn check_cell_names(
        &self,
        axes_span: std::ops::Range<usize>,
        axes: &[Axis],
        repeats: u32,
    ) -> Result<(), MatrixError> {
        let longest = axes
            .iter()
            .map(|a| {
                a.name.len() + 1 + a.values.iter().map(|v| v.label.len()).max().unwrap_or(0) + 1
            })
            .sum::<usize>()
            + format!("load,r{repeats}").len();
        if longest + crate::paths::LONGEST_PREFIX > crate::paths::NAME_MAX {
            return self.err(
                axes_span,
                format!(
                    "the longest cell name would be {longest} bytes: a directory name can have at most {} (shorten axis names or values)",
                    crate::paths::NAME_MAX - crate::paths::LONGEST_PREFIX
                ),
            );
        }
        Ok(())
    }
}

/// The label a baseline value names on its axis: a workload by its file
/// name, a db by itself, another value by the label it has on the axis.
fn baseline_label(axis: &Axis, value: &str) -> String {
    if axis.name == "workload" {
        Path::new(value)
            .file_stem()
            .map(|s| label_of(&s.to_string_lossy()))
            .unwrap_or_default()
    } else if axis.name == "db" {
        value.to_string()
    } else {
        axis.values
            .iter()
            .find(|x| x.value == value)
            .map_or_else(|| label_of(value), |x| x.label.clone())
    }
}
