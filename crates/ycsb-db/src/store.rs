//! The store trait: what an engine binding implements.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::batch::{batch_status, Batch};
use crate::properties::{Properties, PropertyDecl, PropertyError};
use crate::provenance::EngineBuild;
use crate::record::{Fields, Record, RecordView, ScanResult};
use crate::request::{ReadOp, ScanOp, Visit};
use crate::status::Status;
pub use ycsb_results::GaugeKind;

/// A read in place made of a copied read: `read` fills `scratch` (which
/// arrives empty, as [`StoreThread::read`]'s `out` does) and, when the
/// status it returns is OK, `visit` is shown `scratch` once.
///
/// This is [`StoreThread::read_in_place`]'s default, and how a binding
/// whose engine cannot show some records in place (a row layout, column
/// values read one by one) reads those, so that both reads select and
/// report the same.
pub fn read_in_place_by_copy(
    scratch: &mut Record,
    visit: &mut Visit,
    read: impl FnOnce(&mut Record) -> Status,
) -> Status {
    let status = read(scratch);
    if status.is_ok() {
        visit(RecordView::from(&*scratch));
    }
    status
}

/// Facts about the thread a [`StoreThread`] serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadContext {
    /// This thread's number, `0..thread_count`.
    pub thread_id: usize,
    /// How many client threads run in this phase.
    pub thread_count: usize,
}

impl ThreadContext {
    /// Context for thread `thread_id` of `thread_count`.
    pub const fn new(thread_id: usize, thread_count: usize) -> Self {
        Self {
            thread_id,
            thread_count,
        }
    }
}

/// One engine-internal figure sampled during a run, such as
/// `rocksdb.num-files-at-level0`, with its kind (which fixes its unit).
#[derive(Clone, Debug, PartialEq)]
pub struct Gauge {
    /// The gauge's name, stable across runs so that series can be compared.
    pub name: String,
    /// Its current value, in the unit of its kind.
    pub value: f64,
    /// What it measures: bytes, a count, a flag, ... (the export carries
    /// it, reports scale and label the gauge's chart by it).
    pub kind: GaugeKind,
}

impl Gauge {
    /// A gauge called `name` of `kind` with `value`.
    pub fn new(name: impl Into<String>, kind: GaugeKind, value: f64) -> Self {
        Self {
            name: name.into(),
            value,
            kind,
        }
    }

    /// A size in bytes.
    pub fn bytes(name: impl Into<String>, value: f64) -> Self {
        Self::new(name, GaugeKind::Bytes, value)
    }

    /// A number of things (files, pages, keys, or events since the store
    /// opened).
    pub fn count(name: impl Into<String>, value: f64) -> Self {
        Self::new(name, GaugeKind::Count, value)
    }

    /// 0 or 1: whether something holds.
    pub fn flag(name: impl Into<String>, value: bool) -> Self {
        Self::new(name, GaugeKind::Flag, if value { 1.0 } else { 0.0 })
    }

    /// A share between 0 and 1.
    pub fn ratio(name: impl Into<String>, value: f64) -> Self {
        Self::new(name, GaugeKind::Ratio, value)
    }

    /// A duration in seconds.
    pub fn seconds(name: impl Into<String>, value: f64) -> Self {
        Self::new(name, GaugeKind::Seconds, value)
    }
}

/// What engine, in what version, a store runs on, recorded with results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineInfo {
    /// The engine's name, for example `RocksDB`.
    pub name: String,
    /// The exact version linked or connected to, for example `7.8.3`.
    pub version: String,
}

impl EngineInfo {
    /// The engine `name` in `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> EngineInfo {
        EngineInfo {
            name: name.into(),
            version: version.into(),
        }
    }
}

/// A named text the store produces at the end of a run (for example the
/// output of `rocksdb.stats`), saved beside the results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineReport {
    /// A short file-name-safe name, for example `rocksdb.stats`.
    pub name: String,
    /// The report's text.
    pub text: String,
}

impl EngineReport {
    /// `<store>.options`, the report of a store linking an engine library:
    /// the effective settings as the store describes them (`settings`, a
    /// `key=value` line each), then `version=` the linked engine's version
    /// and `library=` the file it was loaded from, when known.
    pub fn linked_options(
        store: &str,
        settings: String,
        version: &str,
        library: Option<String>,
    ) -> EngineReport {
        let mut text = settings;
        text.push_str(&format!("version={version}\n"));
        if let Some(library) = library {
            text.push_str(&format!("library={library}\n"));
        }
        EngineReport {
            name: format!("{store}.options"),
            text,
        }
    }
}

/// An error opening a store or a store thread. Per-operation failures are
/// [`Status`] values, not errors.
///
/// Its text for users shows every message through
/// [`redact_text`](crate::redact_text): a store that echoes the address it
/// could not reach (`root:pw@host:2379`) never prints the password in it.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A store property is invalid.
    #[error(transparent)]
    Property(#[from] PropertyError),
    /// The store could not be opened or connected to.
    #[error("cannot open {store}: {}", crate::secrets::redact_text(.message))]
    Open {
        /// The store's name (`rocksdb`, `redis`, ...).
        store: String,
        /// What went wrong, in the engine's words where it has them.
        message: String,
    },
    /// An I/O error, with what was being done.
    #[error("{}: {source}", crate::secrets::redact_text(.context))]
    Io {
        /// What was being done, naming the file or address.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The engine's data directory was refused or could not be prepared
    /// (the guard of [`DataDir`](crate::DataDir)).
    #[error(
        "cannot open {store}: {}",
        crate::secrets::redact_text(&.0.to_string()),
        store = .0.store()
    )]
    DataDir(#[from] Box<crate::DataDirError>),
    /// Any other failure.
    #[error("{}", crate::secrets::redact_text(.0))]
    Other(String),
}

impl StoreError {
    /// [`StoreError::Open`]: `store` could not be opened, for the reason
    /// `message` gives (an engine's message, a library that cannot be
    /// loaded).
    pub fn open(store: &str, message: impl std::fmt::Display) -> Self {
        Self::Open {
            store: store.to_owned(),
            message: message.to_string(),
        }
    }
}

/// A store opened once per invocation, used by each of its phases and
/// shared by all client threads.
///
/// The store holds what threads share (an engine handle, a connection
/// pool's settings); each thread gets its own [`StoreThread`] from
/// [`Store::thread`], so per-operation calls need no locking in the client.
pub trait Store: Send + Sync {
    /// Creates the state of one client thread (Java's per-thread `init`),
    /// called on that thread before its first operation.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when the thread cannot start, for example when a
    /// connection is refused; the phase then stops with that error.
    fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError>;

    /// Appends the store's engine-internal gauges (level file counts,
    /// pending compaction, stalls) to `out`. Called from the status thread
    /// at intervals, never on the operation path. A gauge too costly to
    /// take at every interval may be left out of some samples (the series
    /// then has no value there), but never one that
    /// [`Store::gauge_names`] does not list. The default has none.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        let _ = out;
    }

    /// The names of every gauge [`Store::gauges`] may report, in the order
    /// the time series' columns take them; asked once per session, before
    /// the first phase. The default samples the gauges once; a store whose
    /// gauges are costly to sample, or are not all reported at every
    /// sample, lists them without sampling.
    fn gauge_names(&self) -> Vec<String> {
        let mut gauges = Vec::new();
        self.gauges(&mut gauges);
        gauges.into_iter().map(|g| g.name).collect()
    }

    /// The engine and version. The default is empty.
    fn engine_info(&self) -> EngineInfo {
        EngineInfo::default()
    }

    /// The durability in force, when the store learns it once open from
    /// what its descriptor's [`Durability`] property cannot say (a
    /// server's own setting, such as MySQL's
    /// `innodb_flush_log_at_trx_commit`): it then replaces the descriptor's
    /// in the results. The default: `None`, the descriptor's stands.
    /// Called once per session.
    fn durability(&self) -> Option<DurabilitySetting> {
        None
    }

    /// How the engine was built: the library file its code runs from and
    /// whether it was compiled with assertions, recorded with every result
    /// and warned about when assertions are on. An embedded engine reports
    /// it in one line, `EngineBuild::of_code(some_engine_function as *const (),
    /// Assertions::Unknown)`; a client of a server returns
    /// [`EngineBuild::remote`]. The default says nothing is known. Called
    /// once per session, not on the operation path.
    fn engine_build(&self) -> EngineBuild {
        EngineBuild::unknown()
    }

    /// Texts to save with the results at the end of a phase (engine
    /// statistics). The default has none.
    fn final_reports(&self) -> Vec<EngineReport> {
        Vec::new()
    }

    /// Flushes and closes the store at the end of the run. Dropping the
    /// store must also release it; this lets the runner report errors.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when pending writes could not be made durable.
    fn close(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// One client thread's connection to a store.
///
/// Methods take reusable buffers so that neither side must allocate per
/// operation; they report outcomes as [`Status`] values and never panic on
/// store errors.
pub trait StoreThread {
    /// Reads the record at `op.key`, filling `out` (which arrives empty)
    /// with the fields that `op.fields` selects.
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status;

    /// Reads the record at `op.key` in place: calls `visit` once with the
    /// fields that `op.fields` selects, borrowed from wherever the store
    /// holds them, when the status is OK, and not at all otherwise.
    ///
    /// The workload reads this way whenever it keeps no values (every read
    /// unless `dataintegrity=true`), so a read costs what the engine's
    /// lookup costs and not a copy into a [`Record`]. A binding that can
    /// show the engine's bytes in place (an embedded engine's pinned value,
    /// see [`RecordView::encoded`]) overrides this; it must select and
    /// report exactly what [`read`](Self::read) would. The default reads
    /// into `buf`, which arrives empty as `read`'s `out` does, and shows
    /// that.
    fn read_in_place(&mut self, op: &ReadOp<'_>, buf: &mut Record, visit: &mut Visit) -> Status {
        read_in_place_by_copy(buf, visit, |out| self.read(op, out))
    }

    /// Reads up to `op.count` records in key order starting at
    /// `op.start_key` (inclusive), appending them to `out` (which arrives
    /// empty).
    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status;

    /// Writes `values` into the record at `key`, keeping its other fields.
    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status;

    /// Inserts the record at `key` with `values`.
    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status;

    /// Deletes the record at `key`.
    fn delete(&mut self, table: &str, key: &str) -> Status;

    /// Inserts every record of `batch` in one call (go-ycsb's
    /// `BatchInsert`, `batch.size` above 1), writing each record's status
    /// into `statuses` (one per entry, in order) and returning the batch's
    /// ([`batch_status`]: OK, or the first record's failure).
    ///
    /// The default inserts the records one by one, so every store works;
    /// a store with a native batch (a write batch, one transaction, a
    /// pipeline) overrides it and says so on its descriptor
    /// ([`StoreDescriptor::batching`]). A synced store syncs a batch once.
    fn insert_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            *status = self.insert(table, key, values);
        }
        batch_status(&statuses[..batch.len().min(statuses.len())])
    }

    /// Updates every record of `batch` in one call (go-ycsb's
    /// `BatchUpdate`), each as [`update`](Self::update) would; statuses as
    /// [`insert_batch`](Self::insert_batch)'s. The default updates one by
    /// one.
    fn update_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        for (status, (key, values)) in statuses.iter_mut().zip(batch.iter()) {
            *status = self.update(table, key, values);
        }
        batch_status(&statuses[..batch.len().min(statuses.len())])
    }

    /// Reads the record at every key of `batch` in one call (go-ycsb's
    /// `BatchRead`), each into its slot of `out` (one per entry, each
    /// arriving empty) as [`read`](Self::read) would, with its status in
    /// `statuses`; returns the batch's. The default reads one by one.
    fn read_batch(
        &mut self,
        table: &str,
        batch: &Batch,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        for ((status, record), (key, _)) in
            statuses.iter_mut().zip(out.iter_mut()).zip(batch.iter())
        {
            *status = self.read(&ReadOp { table, key, fields }, record);
        }
        batch_status(&statuses[..batch.len().min(statuses.len())])
    }

    /// Deletes the record at every key of `batch` in one call (go-ycsb's
    /// `BatchDelete`), each as [`delete`](Self::delete) would; statuses as
    /// [`insert_batch`](Self::insert_batch)'s. The default deletes one by
    /// one.
    fn delete_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        for (status, (key, _)) in statuses.iter_mut().zip(batch.iter()) {
            *status = self.delete(table, key);
        }
        batch_status(&statuses[..batch.len().min(statuses.len())])
    }

    /// Releases the thread's resources (Java's per-thread `cleanup`); the
    /// runner measures it as the `CLEANUP` operation.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when buffered work could not be completed.
    fn cleanup(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The engine's own message for this thread's most recent failed
    /// operation, when the binding keeps one (`No space left on device`,
    /// a refused connection): the runner quotes it when a failure stops a
    /// load thread. Keeping it costs nothing on operations that succeed.
    /// The default keeps none.
    fn last_error(&self) -> Option<&str> {
        None
    }
}

/// Where a store may write human-readable output, such as the `basic`
/// store's one line per operation. The program decides where it goes (the
/// `ycsb` binary passes standard output); libraries never print directly.
pub type OutputSink = Arc<Mutex<dyn Write + Send>>;

/// What a store is opened with.
#[derive(Clone)]
#[non_exhaustive]
pub struct StoreContext<'a> {
    /// The effective properties.
    pub properties: &'a Properties,
    /// Where human-readable output goes.
    pub output: OutputSink,
}

impl<'a> StoreContext<'a> {
    /// A context whose output is discarded.
    pub fn new(properties: &'a Properties) -> Self {
        Self {
            properties,
            output: Arc::new(Mutex::new(std::io::sink())),
        }
    }

    /// Sends human-readable output to `output`.
    pub fn with_output(mut self, output: OutputSink) -> Self {
        self.output = output;
        self
    }
}

impl std::fmt::Debug for StoreContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreContext")
            .field("properties", &self.properties)
            .finish_non_exhaustive()
    }
}

/// What a program needs to know about a store without naming it: how users
/// name it, what it reads, how to open it, and its capabilities.
///
/// The `ycsb` binary, `ycsb serve`, `ycsb bench`, the observers and the
/// experiment runner ask a descriptor, never a store's name, so that a new
/// store is one crate and one line in the registry. Build one with
/// [`StoreDescriptor::new`] and the `with_*` methods; every capability
/// defaults to "none":
///
/// ```
/// use ycsb_db::{Store, StoreContext, StoreDescriptor, StoreError};
///
/// fn open(_: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
///     Err(StoreError::Other("not in this example".into()))
/// }
///
/// const DESCRIPTOR: StoreDescriptor =
///     StoreDescriptor::new("mine", "My engine, embedded", &[], open).with_aliases(&["my"]);
/// assert!(DESCRIPTOR.matches("MY"));
/// assert!(DESCRIPTOR.data_dir.is_none() && DESCRIPTOR.server.is_none());
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct StoreDescriptor {
    /// The name users type (`rocksdb`).
    pub name: &'static str,
    /// Other accepted names, such as Java's class names
    /// (`site.ycsb.BasicDB`). Default: none.
    pub aliases: &'static [&'static str],
    /// One line saying what the store is.
    pub summary: &'static str,
    /// Every property the store reads.
    pub properties: &'static [&'static PropertyDecl],
    /// Opens the store.
    pub open: fn(&StoreContext<'_>) -> Result<Box<dyn Store>, StoreError>,
    /// The property naming the directory where an embedded engine keeps its
    /// files: the observers size it (space amplification), experiments copy
    /// it to reuse a load, `ycsb bench --db` sets it. Default: `None`, the
    /// store keeps no files of its own.
    pub data_dir: Option<&'static PropertyDecl>,
    /// What the engine keeps in its data directory, by name and content:
    /// how the one guard ([`DataDir`](crate::DataDir)) recognises the
    /// engine's files, and what the conformance kit checks it refuses.
    /// Set with the data directory by [`with_data_dir`](Self::with_data_dir).
    pub dir_layout: Option<&'static crate::DirLayout>,
    /// The property that decides whether an acknowledged write survives a
    /// machine crash, and which of its values do: recorded with every
    /// result, so that runs of different durability are not compared
    /// unawares. Default: `None` (nothing of the client's decides it: a
    /// server's configuration, or no data kept).
    pub durability: Option<Durability>,
    /// Properties that make [`open`](Self::open) start on an empty database
    /// (`rocksdb.destroy=true`), for db_bench's fill benchmarks. Default:
    /// empty, the store cannot be emptied (a server's data).
    pub fresh: &'static [(&'static str, &'static str)],
    /// The server this store is a client of; `None` (the default) for a
    /// store in the client's process, which `ycsb serve` can embed.
    pub server: Option<ServerClient>,
    /// db_bench's engine flags this store understands, each with the
    /// property it sets (`--cache_size` → `rocksdb.cache_size`). Default:
    /// none.
    pub dbbench_flags: &'static [(&'static str, &'static str)],
    /// Properties `ycsb bench` sets unless the user did, so that the store
    /// holds db_bench's values as db_bench does. Default: none.
    pub dbbench_properties: &'static [(&'static str, &'static str)],
    /// The Debian packages the store needs: to build it, to run a binary
    /// with it, and for its tests. `cargo xtask deps` and the Dockerfile
    /// install them (a test checks both against every descriptor).
    /// Default: none (a store in pure Rust).
    pub debian: DebianPackages,
    /// What one batched call (`batch.size` above 1) is on this store:
    /// records one by one, one request, or one atomic write. Default:
    /// [`Batching::OneByOne`], the trait's default batch calls.
    pub batching: Batching,
}

/// What a store's batch calls ([`StoreThread::insert_batch`] and the
/// others) do with the records of one batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Batching {
    /// One call per record: the trait's default batch calls.
    #[default]
    OneByOne,
    /// One request to the engine or server for the whole batch (a
    /// pipeline, a multi-get), each record applied on its own: some may
    /// fail while the others are written.
    Native,
    /// One atomic write (a write batch, a transaction): the records of a
    /// batch of inserts, updates or deletes are written all together or,
    /// when the store reports the batch failed, none of them.
    Atomic,
}

impl Batching {
    /// Whether the store's batch writes all records or none.
    pub const fn is_atomic(self) -> bool {
        matches!(self, Batching::Atomic)
    }

    /// A short phrase for docs and listings: `one by one`, `native`,
    /// `atomic`.
    pub const fn describe(self) -> &'static str {
        match self {
            Batching::OneByOne => "one by one",
            Batching::Native => "native",
            Batching::Atomic => "atomic",
        }
    }
}

/// The Debian packages a store needs, by when they are needed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DebianPackages {
    /// To build the store (headers, pkg-config, clang for bindgen).
    pub build: &'static [&'static str],
    /// To run a binary that links it (the shared libraries).
    pub runtime: &'static [&'static str],
    /// For its tests (the real server, the engine's own tools).
    pub test: &'static [&'static str],
}

impl DebianPackages {
    /// Packages to build, to run, and to test.
    pub const fn new(
        build: &'static [&'static str],
        runtime: &'static [&'static str],
        test: &'static [&'static str],
    ) -> Self {
        Self {
            build,
            runtime,
            test,
        }
    }
}

/// Which property of a store makes an acknowledged write survive a machine
/// crash (a synced write-ahead log or commit), and with which values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Durability {
    /// The property (`rocksdb.sync`).
    pub property: &'static str,
    /// Its values that make every acknowledged write durable (`true`),
    /// compared without case.
    pub durable: &'static [&'static str],
    /// A value that does not: what a comparison of engines at equal
    /// durability sets when it wants none of them to sync (`false`).
    pub relaxed: &'static str,
}

impl Durability {
    /// `property` makes writes durable with one of `durable`, and not with
    /// `relaxed`.
    pub const fn new(
        property: &'static str,
        durable: &'static [&'static str],
        relaxed: &'static str,
    ) -> Self {
        Self {
            property,
            durable,
            relaxed,
        }
    }
}

/// A run's durability: the property, its value, and whether that makes
/// acknowledged writes survive a machine crash.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DurabilitySetting {
    /// The property.
    pub property: &'static str,
    /// Its value in force (set, or the default).
    pub value: String,
    /// Whether acknowledged writes are synced to disk.
    pub durable: bool,
}

impl DurabilitySetting {
    /// `property` at `value`, durable or not.
    pub fn new(property: &'static str, value: impl Into<String>, durable: bool) -> Self {
        Self {
            property,
            value: value.into(),
            durable,
        }
    }
}

/// How a client store reaches its server: what the experiment runner and
/// `ycsb serve` need to point it at a server they start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerClient {
    /// The wire protocol the store speaks.
    pub protocol: Protocol,
    /// The properties that say where the server is.
    pub address: ServerAddress,
    /// Properties the store needs to talk to `ycsb serve` rather than the
    /// original server (the redis store's scan index in key order).
    pub for_ycsb_serve: &'static [(&'static str, &'static str)],
    /// Servers the experiment runner starts for this client by name
    /// (`postgres`, `mariadb`), each with the properties the client needs
    /// against it (which server kind, database and user).
    pub for_servers: &'static [ServerFor],
}

/// A server the experiment runner can start for a client store: its name
/// in a matrix (`server = "postgres"`) and the client's properties for it.
pub type ServerFor = (&'static str, &'static [(&'static str, &'static str)]);

/// The properties naming a client store's server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerAddress {
    /// A host property and a port property.
    HostPort {
        /// The property naming the host.
        host: &'static str,
        /// The property naming the port.
        port: &'static str,
    },
    /// One property holding a base URL, `http://host:port`.
    Url(&'static str),
}

impl ServerClient {
    /// A client speaking `protocol` to the server that `address` names.
    pub const fn new(protocol: Protocol, address: ServerAddress) -> Self {
        Self {
            protocol,
            address,
            for_ycsb_serve: &[],
            for_servers: &[],
        }
    }

    /// The servers the experiment runner may start for this client, with
    /// the properties the client needs against each.
    pub const fn with_servers(mut self, servers: &'static [ServerFor]) -> Self {
        self.for_servers = servers;
        self
    }

    /// The client's properties against the runner's server `name`, if
    /// the runner can start it for this client.
    pub fn properties_for(&self, name: &str) -> Option<&'static [(&'static str, &'static str)]> {
        self.for_servers
            .iter()
            .find(|(server, _)| *server == name)
            .map(|(_, properties)| *properties)
    }

    /// The properties the store needs against `ycsb serve`.
    pub const fn with_ycsb_serve(
        mut self,
        properties: &'static [(&'static str, &'static str)],
    ) -> Self {
        self.for_ycsb_serve = properties;
        self
    }

    /// The properties that point the store at the server listening on
    /// `addr`.
    pub fn address_properties(&self, addr: std::net::SocketAddr) -> Vec<(String, String)> {
        match self.address {
            ServerAddress::HostPort { host, port } => vec![
                (host.to_string(), addr.ip().to_string()),
                (port.to_string(), addr.port().to_string()),
            ],
            ServerAddress::Url(property) => vec![(property.to_string(), format!("http://{addr}"))],
        }
    }
}

/// A wire protocol a client store speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protocol {
    /// RESP, Redis's protocol (`redis-server`, `ycsb serve --resp`).
    Resp,
    /// HTTP/1.1 (`ycsb serve --http`, REST key-value servers).
    Http,
    /// memcached's text or binary protocol (`memcached`); `ycsb serve`
    /// does not speak it.
    Memcached,
    /// SQL servers' own protocols, PostgreSQL's or MySQL's, the client's
    /// properties saying which (`postgres`, `mariadbd`); `ycsb serve`
    /// speaks neither.
    Sql,
}

impl Protocol {
    /// Whether `ycsb serve` speaks this protocol, so that a client of it
    /// can be pointed at an engine that `ycsb serve` embeds.
    pub const fn served_by_ycsb_serve(self) -> bool {
        matches!(self, Protocol::Resp | Protocol::Http)
    }
}

impl StoreDescriptor {
    /// `error` from [`open`](Self::open) with the properties that named
    /// the server it could not reach, and where they were set (`cannot
    /// open redis: cannot connect to 127.0.0.1:6380: Connection refused
    /// (the server from redis.host=127.0.0.1 (default), redis.port=6380
    /// (-p flag))`): an unusable store is reported as bad input is, one
    /// line naming the input. Errors of stores with no
    /// [`server`](Self::server), and errors that name a property already,
    /// are returned as they are.
    pub fn name_server_in(&self, error: StoreError, props: &Properties) -> StoreError {
        let Some(server) = self.server else {
            return error;
        };
        let names: &[&str] = match &server.address {
            ServerAddress::HostPort { host, port } => &[host, port],
            ServerAddress::Url(url) => std::slice::from_ref(url),
        };
        let described: Vec<String> = names
            .iter()
            .filter_map(|name| self.properties.iter().find(|d| d.name == *name))
            .map(|decl| props.describe(decl))
            .collect();
        if described.is_empty() {
            return error;
        }
        let from = format!("the server from {}", described.join(", "));
        match error {
            StoreError::Open { store, message } => StoreError::Open {
                store,
                message: format!("{message} ({from})"),
            },
            StoreError::Io { context, source } => StoreError::Io {
                context: format!("{context} ({from})"),
                source,
            },
            other => other,
        }
    }

    /// A store called `name`, with no aliases and no capabilities.
    pub const fn new(
        name: &'static str,
        summary: &'static str,
        properties: &'static [&'static PropertyDecl],
        open: fn(&StoreContext<'_>) -> Result<Box<dyn Store>, StoreError>,
    ) -> Self {
        Self {
            name,
            aliases: &[],
            summary,
            properties,
            open,
            data_dir: None,
            dir_layout: None,
            durability: None,
            fresh: &[],
            server: None,
            dbbench_flags: &[],
            dbbench_properties: &[],
            debian: DebianPackages::new(&[], &[], &[]),
            batching: Batching::OneByOne,
        }
    }

    /// What a batched call is on this store (its overrides of the batch
    /// calls of [`StoreThread`]).
    pub const fn with_batching(mut self, batching: Batching) -> Self {
        self.batching = batching;
        self
    }

    /// The Debian packages the store needs.
    pub const fn with_debian(mut self, packages: DebianPackages) -> Self {
        self.debian = packages;
        self
    }

    /// Other names users may type.
    pub const fn with_aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    /// The property naming the engine's data directory, and what the
    /// engine keeps there.
    pub const fn with_data_dir(
        mut self,
        property: &'static PropertyDecl,
        layout: &'static crate::DirLayout,
    ) -> Self {
        self.data_dir = Some(property);
        self.dir_layout = Some(layout);
        self
    }

    /// The property that makes writes durable.
    pub const fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
        self
    }

    /// Whether writes are durable with `props`, by the store's
    /// [`durability`](Self::durability) property (its value or default).
    pub fn durability_in(&self, props: &Properties) -> Option<DurabilitySetting> {
        let d = self.durability?;
        let decl = self.properties.iter().find(|p| p.name == d.property)?;
        let value = props
            .raw(decl)
            .map(|raw| raw.value.trim().to_string())
            .unwrap_or_else(|| decl.default.unwrap_or_default().to_string());
        Some(DurabilitySetting {
            property: d.property,
            durable: d.durable.iter().any(|v| v.eq_ignore_ascii_case(&value)),
            value,
        })
    }

    /// The properties that open an empty database.
    pub const fn with_fresh(mut self, properties: &'static [(&'static str, &'static str)]) -> Self {
        self.fresh = properties;
        self
    }

    /// The server this store is a client of.
    pub const fn with_server(mut self, server: ServerClient) -> Self {
        self.server = Some(server);
        self
    }

    /// db_bench's flags (flag, property) and the properties `ycsb bench`
    /// sets by default.
    pub const fn with_dbbench(
        mut self,
        flags: &'static [(&'static str, &'static str)],
        properties: &'static [(&'static str, &'static str)],
    ) -> Self {
        self.dbbench_flags = flags;
        self.dbbench_properties = properties;
        self
    }

    /// Whether `name` names this store (case-insensitively).
    pub fn matches(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// Whether the store runs in the client's process (no server), so that
    /// `ycsb serve` can embed it.
    pub const fn is_embedded(&self) -> bool {
        self.server.is_none()
    }

    /// Whether `ycsb bench` can give a benchmark an empty database.
    pub const fn can_start_fresh(&self) -> bool {
        !self.fresh.is_empty()
    }

    /// The property that db_bench's `flag` sets on this store, if it has
    /// the setting.
    pub fn dbbench_property(&self, flag: &str) -> Option<&'static str> {
        self.dbbench_flags
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, p)| *p)
    }

    /// The data directory `props` configures (under the property's name,
    /// an alias, or its default), if the store keeps one.
    pub fn data_dir_in(&self, props: &Properties) -> Option<std::path::PathBuf> {
        let raw = props.raw(self.data_dir?)?;
        let dir = raw.value.trim();
        (!dir.is_empty()).then(|| std::path::PathBuf::from(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_engine_s_options_end_with_its_version_and_library() {
        let report =
            EngineReport::linked_options("x", "x.a=1\n".into(), "1.2", Some("/lib/x.so".into()));
        assert_eq!(report.name, "x.options");
        assert_eq!(report.text, "x.a=1\nversion=1.2\nlibrary=/lib/x.so\n");
        let report = EngineReport::linked_options("x", String::new(), "1.2", None);
        assert_eq!(report.text, "version=1.2\n");
    }

    /// Issue 33 item 9: whatever a store puts in its error, the text shown
    /// to users holds no password from an address (etcd's endpoints, a
    /// redis URL given as the host).
    #[test]
    fn store_errors_never_show_a_password() {
        let errors = [
            StoreError::Open {
                store: "etcd".into(),
                message: "no member answered ([root:S3cr3tPW@127.0.0.1]:1: refused)".into(),
            },
            StoreError::Open {
                store: "redis".into(),
                message: "cannot resolve [redis://root:S3cr3tPW@127.0.0.1]:1".into(),
            },
            StoreError::Io {
                context: "connecting to http://root:S3cr3tPW@127.0.0.1:1/".into(),
                source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
            },
            StoreError::Other("root:S3cr3tPW@127.0.0.1:1 refused".into()),
        ];
        for error in errors {
            let text = error.to_string();
            assert!(
                !text.contains("S3cr3tPW") && text.contains("<redacted>@127.0.0.1"),
                "{text}"
            );
        }
    }

    /// Issue 35 item 4: a client store that cannot reach its server names
    /// the properties that said where it is, with their origins (and no
    /// password from a URL).
    #[test]
    fn an_unreachable_server_is_named_by_its_properties() {
        fn open(_: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
            Err(StoreError::Other("unused".into()))
        }
        use crate::properties::Property;
        const HOST: Property<String> = Property::new("kv.host", "127.0.0.1", "The host.");
        const PORT: Property<u64> = Property::new("kv.port", "7000", "The port.");
        const URL: Property<String> = Property::new("kv.url", "http://127.0.0.1/", "The URL.");
        const HOST_PORT: StoreDescriptor =
            StoreDescriptor::new("kv", "test", &[HOST.decl(), PORT.decl()], open).with_server(
                ServerClient::new(
                    Protocol::Resp,
                    ServerAddress::HostPort {
                        host: "kv.host",
                        port: "kv.port",
                    },
                ),
            );
        const BY_URL: StoreDescriptor = StoreDescriptor::new("kv", "test", &[URL.decl()], open)
            .with_server(ServerClient::new(
                Protocol::Http,
                ServerAddress::Url("kv.url"),
            ));
        let props = Properties::new().with("kv.port", 7001);
        let refused = || StoreError::Open {
            store: "kv".into(),
            message: "cannot connect: refused".into(),
        };
        assert_eq!(
            HOST_PORT.name_server_in(refused(), &props).to_string(),
            "cannot open kv: cannot connect: refused (the server from kv.host=127.0.0.1 (default), kv.port=7001 (set by the program))"
        );
        let props = Properties::new().with("kv.url", "http://root:S3cr3tPW@127.0.0.1:1/");
        let text = BY_URL.name_server_in(refused(), &props).to_string();
        assert!(
            text.ends_with(
                "(the server from kv.url=http://<redacted>@127.0.0.1:1/ (set by the program))"
            ),
            "{text}"
        );
        // A store with no server, and errors naming a property already,
        // are left as they are.
        const EMBEDDED: StoreDescriptor = StoreDescriptor::new("kv", "test", &[], open);
        assert_eq!(
            EMBEDDED.name_server_in(refused(), &props).to_string(),
            "cannot open kv: cannot connect: refused"
        );
        let bad = StoreError::Property(props.invalid(URL.decl(), "not a URL"));
        let text = BY_URL.name_server_in(bad, &props).to_string();
        assert!(!text.contains("the server from"), "{text}");
    }

    /// A store thread holding one record under the key `k`.
    struct One(Record);

    impl StoreThread for One {
        fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
            if op.key != "k" {
                return Status::NotFound;
            }
            for field in self.0.iter().filter(|f| op.fields.contains(f.name)) {
                out.push(field.name, field.value);
            }
            Status::Ok
        }
        fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
            Status::NotImplemented
        }
        fn update(&mut self, _: &str, _: &str, _: &Record) -> Status {
            Status::NotImplemented
        }
        fn insert(&mut self, _: &str, _: &str, _: &Record) -> Status {
            Status::NotImplemented
        }
        fn delete(&mut self, _: &str, _: &str) -> Status {
            Status::NotImplemented
        }
    }

    #[test]
    fn the_default_read_in_place_shows_what_read_copies() {
        let mut stored = Record::new();
        stored.push("a", b"1");
        stored.push("b", b"22");
        let mut t = One(stored);
        let only_b = vec!["b".to_string()];
        for (key, fields, expected) in [
            ("k", Fields::All, Some(vec![("a", &b"1"[..]), ("b", b"22")])),
            ("k", Fields::Only(&only_b), Some(vec![("b", &b"22"[..])])),
            ("other", Fields::All, None),
        ] {
            let mut seen = None;
            let mut scratch = Record::new();
            let status =
                t.read_in_place(&ReadOp::new("t", key, fields), &mut scratch, &mut |view| {
                    let fields: Vec<_> = view
                        .iter()
                        .map(|f| (f.name.to_string(), f.value.to_vec()))
                        .collect();
                    seen = Some(fields);
                });
            assert_eq!(status.is_ok(), expected.is_some(), "{key}");
            let expected = expected.map(|e| {
                e.into_iter()
                    .map(|(n, v)| (n.to_string(), v.to_vec()))
                    .collect::<Vec<_>>()
            });
            assert_eq!(seen, expected, "{key} {fields:?}");
        }
    }
}
