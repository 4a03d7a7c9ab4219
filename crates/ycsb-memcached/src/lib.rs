//! The `memcached` store: YCSB records in one or several memcached
//! servers, laid out as Java YCSB's memcached binding
//! (`site.ycsb.db.MemcachedClient`, on spymemcached) lays them out, so
//! that Java's client and this one read each other's records.
//!
//! # Layout (Java's)
//!
//! - A record is one item at the key `<table>-<key>` (Java's
//!   `MessageFormat.format("{0}-{1}", table, key)`), with client flags 0
//!   (spymemcached's flags for a string) and the expiration time
//!   `memcached.objectExpirationTime`.
//! - Its value is the record as one JSON object, each field name mapping
//!   to the value as a JSON string, in UTF-8, as Jackson writes it (see
//!   [`json`] for how value bytes become characters and back).
//! - Insert is `add` (an existing key is an `ERROR`, as in Java); read is
//!   `get`; delete is `delete`. Scans are `NOT_IMPLEMENTED`, as in Java:
//!   memcached keeps no order.
//! - Keys are spread over the servers of `memcached.hosts` as
//!   spymemcached's default locator spreads them: server number
//!   `String.hashCode()` of the key (taken as an unsigned 32-bit number)
//!   modulo the number of servers, in the order the hosts are listed.
//!
//! # Where this binding differs from Java's, and why
//!
//! - Java's update is `replace` with the updated fields only, so a record
//!   updated with one field (workload A's default, `writeallfields=false`)
//!   loses its other fields. Here an update merges (`gets`, the fields
//!   merged, `cas`, again if another client changed the record between
//!   the two) unless `memcached.update=replace` asks for Java's.
//! - Java answers `OK` with no fields for a read of a missing key, and
//!   `ERROR` for a delete or an update of one; here all three are
//!   `NOT_FOUND`, as every store of this workbench answers.
//! - spymemcached shares one connection per server between all threads;
//!   here each client thread has its own (a store thread per client
//!   thread, as for every store).
//!
//! # Failures
//!
//! A lost connection (server killed, restarted, timed out after
//! `memcached.opTimeoutMillis`) fails the operation that used it with
//! `SERVICE_UNAVAILABLE`, never a panic; the server is reconnected after a
//! backoff (50 ms doubling to 1 s). While a key's server is down,
//! `memcached.failureMode` decides as spymemcached's does:
//! `Redistribute` sends the operation to the next server that is up,
//! `Retry` waits for the key's own server up to the operation timeout,
//! `Cancel` fails at once.
//!
//! memcached keeps everything in memory: nothing survives a restart, and
//! no setting of the client changes that, so the descriptor declares no
//! durability property.

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

pub mod json;
mod thread;
mod wire;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ycsb_db::{
    DebianPackages, EngineInfo, Gauge, Properties, Property, PropertyDecl, PropertyError, Protocol,
    ServerAddress, ServerClient, Store, StoreContext, StoreDescriptor, StoreError, StoreThread,
    ThreadContext,
};

pub use thread::{java_hash, server_of};
pub use wire::WireProtocol;

use wire::Conn;

#[cfg(feature = "testing")]
pub mod testing;

/// The client flags spymemcached gives a string, and so every record.
pub const STRING_FLAGS: u32 = 0;

ycsb_db::choice_property! {
    /// What an operation does while its key's server is down
    /// (`memcached.failureMode`, spymemcached's `FailureMode`).
    pub enum FailureMode {
        /// Use the next server that is up (spymemcached's default).
        Redistribute = "Redistribute",
        /// Wait for the key's own server, up to the operation timeout.
        Retry = "Retry",
        /// Fail at once.
        Cancel = "Cancel",
    }
}

ycsb_db::choice_property! {
    /// How an update writes (`memcached.update`).
    pub enum UpdateMode {
        /// Read, merge the updated fields in, write back if unchanged.
        Merge = "merge",
        /// Java's: `replace` the record with the updated fields alone.
        Replace = "replace",
    }
}

/// `memcached.hosts`: the servers.
pub const HOSTS: Property<String> = Property::new(
    "memcached.hosts",
    "127.0.0.1",
    "Comma-separated memcached servers, each host or host:port (memcached.port when no \
     port is given; IPv6 as [addr]:port). Keys are spread over them in this order as Java's \
     spymemcached spreads them (String.hashCode of the key modulo the number of servers).",
);

/// `memcached.port`: the port of a host given without one.
pub const PORT: Property<u32> = Property::new(
    "memcached.port",
    "11211",
    "TCP port of every host in memcached.hosts given without one (Java's binding: always \
     11211).",
)
.range(1, 65535);

/// `memcached.protocol`: text or binary.
pub const PROTOCOL: Property<WireProtocol> = Property::new(
    "memcached.protocol",
    "text",
    "The memcached protocol spoken: text (Java's default) or binary.",
);

/// `memcached.opTimeoutMillis`: how long an operation may wait.
pub const OP_TIMEOUT: Property<u64> = Property::new(
    "memcached.opTimeoutMillis",
    "60000",
    "Timeout in milliseconds for connecting and for each read or write on a connection (and, \
     with failureMode=Retry, for a down server to come back); an operation that times out \
     fails with SERVICE_UNAVAILABLE and its connection is reopened.",
)
.range(1, 86_400_000);

/// `memcached.objectExpirationTime`: the items' expiration time.
pub const EXPIRATION: Property<i64> = Property::new(
    "memcached.objectExpirationTime",
    "2147483647",
    "Expiration time of every item written, as memcached reads it: 0 never, up to 2592000 \
     seconds from now, more a Unix time (Java's default, Integer.MAX_VALUE, is January 2038).",
)
.range(i32::MIN as i128, i32::MAX as i128);

/// `memcached.checkOperationStatus`: wait for and check write replies.
pub const CHECK_STATUS: Property<bool> = Property::new(
    "memcached.checkOperationStatus",
    "true",
    "Whether inserts, updates and deletes wait for the server's answer and report it. With \
     false they are sent unanswered (text noreply, binary quiet commands) and report OK, as \
     Java's binding does without waiting; cleanup then waits for the servers to process them.",
);

/// `memcached.failureMode`: what to do while a key's server is down.
pub const FAILURE_MODE: Property<FailureMode> = Property::new(
    "memcached.failureMode",
    "Redistribute",
    "While a key's server is down: Redistribute (use the next server that is up, as \
     spymemcached does), Retry (wait for it up to memcached.opTimeoutMillis) or Cancel \
     (fail at once with SERVICE_UNAVAILABLE).",
);

/// `memcached.shutdownTimeoutMillis`: how long cleanup waits.
pub const SHUTDOWN_TIMEOUT: Property<u64> = Property::new(
    "memcached.shutdownTimeoutMillis",
    "30000",
    "How long each thread's cleanup waits, in milliseconds, for the servers to process writes \
     sent unanswered (memcached.checkOperationStatus=false).",
)
.range(1, 86_400_000);

/// `memcached.readBufferSize`: each connection's read buffer.
pub const READ_BUFFER: Property<usize> = Property::new(
    "memcached.readBufferSize",
    "16384",
    "Bytes each connection reads from its socket at once. Java's binding sets 3000000 for \
     spymemcached's one connection per server shared by all threads; here each thread has \
     its own, so the default is spymemcached's own 16384.",
)
.range(64, 1 << 30);

/// `memcached.update`: merge (default) or Java's replace.
pub const UPDATE: Property<UpdateMode> = Property::new(
    "memcached.update",
    "merge",
    "How an update writes: merge (read with gets, merge the updated fields in, write back \
     with cas, again if the record changed meanwhile: other fields are kept) or replace \
     (Java's binding: the record becomes the updated fields alone).",
);

/// Every property the memcached store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    HOSTS.decl(),
    PORT.decl(),
    PROTOCOL.decl(),
    OP_TIMEOUT.decl(),
    EXPIRATION.decl(),
    CHECK_STATUS.decl(),
    FAILURE_MODE.decl(),
    SHUTDOWN_TIMEOUT.decl(),
    READ_BUFFER.decl(),
    UPDATE.decl(),
];

/// How the command line finds the memcached store.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "memcached",
    "memcached servers (text or binary protocol), Java YCSB's JSON records; in memory only",
    PROPERTIES,
    open_store,
)
.with_aliases(&["site.ycsb.db.MemcachedClient"])
.with_server(ServerClient::new(
    Protocol::Memcached,
    ServerAddress::HostPort {
        host: "memcached.hosts",
        port: "memcached.port",
    },
))
.with_debian(DebianPackages::new(&[], &[], &["memcached"]))
.with_batching(ycsb_db::Batching::Native);

fn open_store(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(MemcachedStore::open(context.properties)?))
}

/// The memcached store's settings, read from properties.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MemcachedConfig {
    /// The servers, as `host:port`, in `memcached.hosts`' order.
    pub servers: Vec<String>,
    /// The protocol spoken.
    pub protocol: WireProtocol,
    /// Connect, read and write timeout.
    pub op_timeout: Duration,
    /// Every item's expiration time.
    pub expiration: i32,
    /// Whether writes wait for and report the server's answer.
    pub check_operation_status: bool,
    /// What an operation does while its key's server is down.
    pub failure_mode: FailureMode,
    /// How long cleanup waits for unanswered writes.
    pub shutdown_timeout: Duration,
    /// Each connection's read buffer, in bytes.
    pub read_buffer: usize,
    /// How updates write.
    pub update: UpdateMode,
}

impl MemcachedConfig {
    /// Reads the settings from `properties`.
    ///
    /// # Errors
    ///
    /// [`PropertyError`] naming the property, its value and origin when a
    /// value is invalid (a host that is not `host` or `host:port`, no host
    /// at all, a number out of its range, an unknown protocol or mode).
    pub fn from_properties(properties: &Properties) -> Result<Self, PropertyError> {
        let port = properties.get(&PORT)?;
        let hosts = properties.get(&HOSTS)?;
        let mut servers = Vec::new();
        for entry in hosts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            servers.push(ycsb_db::host_port(entry, port).ok_or_else(|| {
                properties.invalid(HOSTS.decl(), format!("'{entry}' is not host or host:port"))
            })?);
        }
        if servers.is_empty() {
            return Err(properties.invalid(HOSTS.decl(), "expected at least one host"));
        }
        let expiration = properties.get(&EXPIRATION)?;
        Ok(Self {
            servers,
            protocol: properties.get(&PROTOCOL)?,
            op_timeout: Duration::from_millis(properties.get(&OP_TIMEOUT)?),
            expiration: i32::try_from(expiration)
                .map_err(|_| properties.invalid(EXPIRATION.decl(), "out of range"))?,
            check_operation_status: properties.get(&CHECK_STATUS)?,
            failure_mode: properties.get(&FAILURE_MODE)?,
            shutdown_timeout: Duration::from_millis(properties.get(&SHUTDOWN_TIMEOUT)?),
            read_buffer: properties.get(&READ_BUFFER)?,
            update: properties.get(&UPDATE)?,
        })
    }
}

/// The gauges, in the time series' column order.
const GAUGES: [&str; 5] = [
    "memcached.curr_items",
    "memcached.bytes",
    "memcached.evictions",
    "memcached.hit_ratio",
    "memcached.servers_up",
];

/// The status thread's view of the servers: its own connections, and
/// the hit and miss counts of the last sample (for the hit ratio since).
#[derive(Debug, Default)]
struct StatsState {
    conns: Vec<Option<Conn>>,
    last_hits: Option<(u64, u64)>,
}

/// The memcached store: its settings, shared by the threads (each opens
/// its own connections), and the status thread's connections.
#[derive(Debug)]
pub struct MemcachedStore {
    config: Arc<MemcachedConfig>,
    info: EngineInfo,
    stats: Mutex<StatsState>,
}

impl MemcachedStore {
    /// Opens the store: connects to every server once, to check that it
    /// answers and to read its version.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for an invalid property,
    /// [`StoreError::Open`] naming the server that cannot be reached or
    /// does not answer.
    pub fn open(properties: &Properties) -> Result<Self, StoreError> {
        Self::with_config(MemcachedConfig::from_properties(properties)?)
    }

    /// Opens the store with settings already read.
    ///
    /// # Errors
    ///
    /// As [`MemcachedStore::open`].
    pub fn with_config(config: MemcachedConfig) -> Result<Self, StoreError> {
        let mut versions: Vec<String> = Vec::new();
        let mut conns = Vec::new();
        for server in &config.servers {
            let open_error = |message: String| StoreError::Open {
                store: "memcached".into(),
                message,
            };
            let mut conn = Conn::connect(
                server,
                config.protocol,
                config.op_timeout,
                config.read_buffer,
            )
            .map_err(|e| open_error(format!("cannot connect to {server}: {e}")))?;
            let version = conn.version().map_err(|e| {
                open_error(format!(
                    "{server} does not answer as a memcached server speaking the {} protocol: {e}",
                    config.protocol.name()
                ))
            })?;
            if !versions.contains(&version) {
                versions.push(version);
            }
            conns.push(Some(conn));
        }
        Ok(Self {
            config: Arc::new(config),
            info: EngineInfo {
                name: "memcached".into(),
                version: versions.join(", "),
            },
            stats: Mutex::new(StatsState {
                conns,
                last_hits: None,
            }),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &MemcachedConfig {
        &self.config
    }
}

impl Store for MemcachedStore {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(Box::new(thread::MemcachedThread::new(self.config.clone())))
    }

    /// Summed over the servers that answer `stats`: items, bytes held,
    /// evictions, the share of gets that hit since the previous sample
    /// (left out while no get was answered), and how many servers answered.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        let Ok(mut state) = self.stats.lock() else {
            return;
        };
        let state = &mut *state;
        let (mut items, mut bytes, mut evictions, mut hits, mut misses) = (0u64, 0u64, 0u64, 0, 0);
        let mut up = 0u32;
        // The status thread must not wait out a long operation timeout.
        let timeout = self.config.op_timeout.min(Duration::from_secs(1));
        for (i, server) in self.config.servers.iter().enumerate() {
            let slot = &mut state.conns[i];
            if slot.is_none() {
                *slot = Conn::connect(server, self.config.protocol, timeout, 4096).ok();
            }
            let Some(conn) = slot.as_mut() else { continue };
            let Ok(stats) = conn
                .set_timeout(timeout)
                .map_err(wire::WireError::Io)
                .and_then(|()| conn.stats())
            else {
                *slot = None;
                continue;
            };
            up += 1;
            let stat = |name: &str| {
                stats
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, v)| v.trim().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            items += stat("curr_items");
            bytes += stat("bytes");
            evictions += stat("evictions");
            hits += stat("get_hits");
            misses += stat("get_misses");
        }
        out.push(Gauge::count(GAUGES[4], f64::from(up)));
        if up == 0 {
            state.last_hits = None;
            return;
        }
        out.push(Gauge::count(GAUGES[0], items as f64));
        out.push(Gauge::bytes(GAUGES[1], bytes as f64));
        out.push(Gauge::count(GAUGES[2], evictions as f64));
        // Since the previous sample; counters that went down (a server
        // restarted) start again from this sample.
        let (base_hits, base_misses) = match state.last_hits {
            Some((h, m)) if h <= hits && m <= misses => (h, m),
            _ => (0, 0),
        };
        state.last_hits = Some((hits, misses));
        let gets = (hits - base_hits) + (misses - base_misses);
        if gets > 0 {
            out.push(Gauge::ratio(
                GAUGES[3],
                (hits - base_hits) as f64 / gets as f64,
            ));
        }
    }

    fn gauge_names(&self) -> Vec<String> {
        GAUGES.iter().map(|g| g.to_string()).collect()
    }

    fn engine_build(&self) -> ycsb_db::EngineBuild {
        // The engine runs in the server: its build is not visible here.
        ycsb_db::EngineBuild::remote()
    }

    fn engine_info(&self) -> EngineInfo {
        self.info.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javas_properties_are_read() {
        let p = Properties::new()
            .with("memcached.hosts", "a, b:7001,c")
            .with("memcached.port", "7000")
            .with("memcached.protocol", "BINARY")
            .with("memcached.opTimeoutMillis", "250")
            .with("memcached.objectExpirationTime", "0")
            .with("memcached.checkOperationStatus", "false")
            .with("memcached.failureMode", "Cancel")
            .with("memcached.update", "replace");
        let c = MemcachedConfig::from_properties(&p).unwrap();
        assert_eq!(c.servers, vec!["a:7000", "b:7001", "c:7000"]);
        assert_eq!(c.protocol, WireProtocol::Binary);
        assert_eq!(c.op_timeout, Duration::from_millis(250));
        assert_eq!(c.expiration, 0);
        assert!(!c.check_operation_status);
        assert_eq!(c.failure_mode, FailureMode::Cancel);
        assert_eq!(c.update, UpdateMode::Replace);
        let d = MemcachedConfig::from_properties(&Properties::new()).unwrap();
        assert_eq!(d.servers, vec!["127.0.0.1:11211"]);
        assert_eq!(d.expiration, i32::MAX);
        assert_eq!(d.failure_mode, FailureMode::Redistribute);
        assert_eq!(d.protocol, WireProtocol::Text);
        assert!(d.check_operation_status);
    }

    #[test]
    fn bad_values_name_the_property() {
        for (name, value, expected) in [
            ("memcached.hosts", "a,h:x", "'h:x' is not host or host:port"),
            ("memcached.hosts", " , ", "expected at least one host"),
            ("memcached.port", "70000", "65535"),
            ("memcached.protocol", "udp", "text, binary"),
            (
                "memcached.failureMode",
                "Panic",
                "Redistribute, Retry, Cancel",
            ),
            ("memcached.opTimeoutMillis", "0", "1"),
            ("memcached.objectExpirationTime", "2147483648", "2147483647"),
        ] {
            let p = Properties::new().with(name, value);
            let e = MemcachedConfig::from_properties(&p)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("{name}: invalid value '{value}'")) && e.contains(expected),
                "{e}"
            );
        }
    }
}
