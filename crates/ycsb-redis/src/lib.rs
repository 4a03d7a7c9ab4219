//! The `redis` store: YCSB records in Redis (or a Redis-compatible server
//! such as KeyDB, Kvrocks or Pika), standalone or as a Redis Cluster.
//!
//! # Schema (Java YCSB's `RedisClient`)
//!
//! - A record is a hash at its key: insert and update are `HMSET key f v ...`,
//!   read is `HGETALL key` (all fields) or `HMGET key f ...`, delete is
//!   `DEL key`. The table name is ignored, as in Java.
//! - Scans need an index: the sorted set `_indices` holds every inserted key
//!   (`ZADD` on insert, `ZREM` on delete). With `redis.index=hash` (the
//!   default, Java's layout) a key's score is Java's `String.hashCode()` of
//!   the key and a scan is `ZRANGEBYSCORE _indices <hash(start)> +inf LIMIT
//!   0 <count>`, so data loaded by Java YCSB is read back and scanned the
//!   same way. With `redis.index=lex` every score is 0 and a scan is
//!   `ZRANGEBYLEX _indices [<start> + LIMIT 0 <count>`: keys in byte order
//!   from the start key, what embedded engines return (and what
//!   `ycsb serve` maps onto its engine's own ordered scan). With
//!   `redis.index=none` inserts write the hash only and scans report
//!   `NOT_IMPLEMENTED`. The rows of a scan are then read with one pipelined
//!   round trip (Java sends one read per row); a key whose hash has vanished
//!   (deleted meanwhile) yields no row.
//! - Only commands that Redis-compatible servers share are used: `AUTH`,
//!   `HMSET`, `HGETALL`, `HMGET`, `DEL`, `ZADD`, `ZREM`, `ZRANGEBYSCORE`,
//!   `ZRANGEBYLEX` (lex index only), `INFO` (version, once) and, with
//!   `redis.cluster=true`, `CLUSTER SLOTS` and `ASKING`.
//!
//! # Connections, pipelining and failures
//!
//! Each client thread has its own connection (in a cluster, one per node
//! it talks to), speaking RESP over buffers that are reused for every
//! operation, so an operation allocates nothing once they have grown.
//!
//! `redis.pipeline=N` queues up to N writes (insert, update, delete) before
//! sending them in one round trip; they report `BATCHED_OK` until then, and
//! a read or scan sends the queue with its own command. A failed batched
//! write is counted by the next write operation that completes, which
//! reports its status (`ERROR`, `SERVICE_UNAVAILABLE`) instead of success,
//! so every failed write is counted once; [`StoreThread::cleanup`] sends
//! what is left and fails if writes were lost.
//!
//! A lost connection (server killed, timeout) fails the operations that
//! used it with `SERVICE_UNAVAILABLE`, never a panic; the next operation
//! reconnects, after a backoff (50 ms doubling to 1 s) so a dead server is
//! not hammered. Cluster redirections (`MOVED`, `ASK`) are followed.
//!
//! The password (`redis.password`) is a secret property: it is never part
//! of any `Debug` or `Display` output or error of this crate.

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

mod client;
pub mod resp;

use std::sync::Arc;
use std::time::Duration;

use ycsb_db::StoreContext;
use ycsb_db::{
    EngineInfo, Property, PropertyDecl, PropertyError, Protocol, ServerAddress, ServerClient,
    Store, StoreDescriptor, StoreError, StoreThread, ThreadContext,
};

use client::{Client, Health, SlotTable};

#[cfg(feature = "testing")]
pub mod testing;

ycsb_db::choice_property! {
    /// How scans find keys (`redis.index`).
    pub enum IndexMode {
        /// Java YCSB's `_indices` sorted set scored by `String.hashCode()`.
        Hash = "hash",
        /// An `_indices` sorted set with equal scores, scanned in key order.
        Lex = "lex",
        /// No index: inserts write the hash only; scans are not implemented.
        None = "none",
    }
}

ycsb_db::choice_property! {
    /// go-ycsb's name for the kind of server (`redis.mode`).
    pub enum RedisMode {
        /// One server: `redis.cluster=false`.
        Single = "single",
        /// A Redis Cluster: `redis.cluster=true`.
        Cluster = "cluster",
    }
}

/// `redis.host`: the server, or the cluster's seed nodes.
pub const HOST: Property<String> = Property::new(
    "redis.host",
    "127.0.0.1",
    "Host name or address of the Redis server. With redis.cluster=true, a comma-separated \
     list of seed nodes, each host or host:port (redis.port when no port is given); \
     go-ycsb's redis.addr (host:port) means the same.",
)
.aliases(&["redis.addr"]);

/// `redis.port`: the server's port.
pub const PORT: Property<u32> =
    Property::new("redis.port", "6379", "TCP port of the Redis server.");

/// `redis.password`: the password sent with `AUTH` (secret).
pub const PASSWORD: Property<String> = Property::optional(
    "redis.password",
    "Password sent with AUTH after connecting (requirepass, or the ACL user's password). Never printed.",
)
.aliases(&["redis.cpassword"])
.secret();

/// `redis.username`: the ACL user for `AUTH user password`.
pub const USERNAME: Property<String> = Property::optional(
    "redis.username",
    "ACL user name sent with AUTH together with redis.password (Redis 6 and later).",
)
.aliases(&["redis.cusername"]);

/// `redis.cluster`: talk to a Redis Cluster.
pub const CLUSTER: Property<bool> = Property::new(
    "redis.cluster",
    "false",
    "Whether the server is a Redis Cluster: keys are routed by hash slot (CLUSTER SLOTS), \
     MOVED and ASK redirections are followed.",
);

/// `redis.mode`: go-ycsb's `redis.cluster`.
pub const MODE: Property<RedisMode> = Property::optional(
    "redis.mode",
    "go-ycsb's name for redis.cluster: single (false) or cluster (true); set with \
     redis.cluster, the two must agree.",
);

/// `redis.timeout`: connect, read and write timeout in milliseconds.
pub const TIMEOUT: Property<u64> = Property::new(
    "redis.timeout",
    "2000",
    "Timeout in milliseconds for connecting and for each read or write on a connection; \
     an operation that times out fails with SERVICE_UNAVAILABLE and the connection is reopened.",
);

/// `redis.pipeline`: how many writes to batch per round trip.
pub const PIPELINE: Property<usize> = Property::new(
    "redis.pipeline",
    "1",
    "How many writes (insert, update, delete) each thread queues before sending them in one \
     round trip; 1 sends every operation at once. Queued writes report BATCHED_OK.",
)
.aliases(&["redis.batchsize"]);

/// `redis.index`: how scans find keys.
pub const INDEX: Property<IndexMode> = Property::new(
    "redis.index",
    "hash",
    "Scan index kept in the sorted set _indices: hash (Java YCSB's, scored by the key's \
     String.hashCode), lex (key order, ZRANGEBYLEX; use it with ycsb serve) or none \
     (no index, scans report NOT_IMPLEMENTED).",
);

/// `redis.read_from_replicas`: send reads to cluster replicas.
pub const READ_FROM_REPLICAS: Property<bool> = Property::new(
    "redis.read_from_replicas",
    "false",
    "With redis.cluster=true, send reads, scans' index reads and their row reads to the \
     replicas of each slot's master (READONLY connections; client thread i uses replica \
     i mod n), spreading read load and measuring replica reads as go-ycsb's redis.read_only \
     does. Writes always go to masters; replica reads may lag the master's latest writes.",
)
.aliases(&["redis.read_only"]);

/// `redis.index_shards`: how many sorted sets hold the scan index.
pub const INDEX_SHARDS: Property<usize> = Property::new(
    "redis.index_shards",
    "1",
    "Number of sorted sets the scan index is spread over. 1 is Java YCSB's single _indices \
     (data loaded by Java YCSB scans the same way), whose master in a Redis Cluster gets every \
     insert's ZADD and every scan; N > 1 keeps _indices{<tag>} sets whose hash tags fall in N \
     equal parts of the slot space, each key indexed in the set of its own slot's part, and a \
     scan reads all N (pipelined) and merges them. At most 1024.",
);

/// Every property the redis store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    HOST.decl(),
    PORT.decl(),
    PASSWORD.decl(),
    USERNAME.decl(),
    CLUSTER.decl(),
    MODE.decl(),
    TIMEOUT.decl(),
    PIPELINE.decl(),
    INDEX.decl(),
    READ_FROM_REPLICAS.decl(),
    INDEX_SHARDS.decl(),
];

/// How the command line finds the redis store.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "redis",
    "Redis or a Redis-compatible server (standalone or Redis Cluster), Java YCSB's schema",
    PROPERTIES,
    open_store,
)
.with_aliases(&["site.ycsb.db.RedisClient"])
.with_server(
    ServerClient::new(
        Protocol::Resp,
        ServerAddress::HostPort {
            host: "redis.host",
            port: "redis.port",
        },
    )
    // ycsb serve keeps records in key order and answers scans with
    // ZRANGEBYLEX, the lex index's layout.
    .with_ycsb_serve(&[("redis.index", "lex")]),
)
.with_debian(ycsb_db::DebianPackages::new(
    &[],
    &[],
    &["redis-server", "redis-tools"],
))
.with_batching(ycsb_db::Batching::Native);

fn open_store(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(RedisStore::open(context)?))
}

/// A secret string: shown as `<redacted>` by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(pub(crate) String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(ycsb_db::REDACTED)
    }
}

/// The redis store's settings, read from properties.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RedisConfig {
    /// The server (standalone) or seed nodes (cluster), as `host:port`.
    pub nodes: Vec<String>,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<Secret>,
    /// Whether the server is a Redis Cluster.
    pub cluster: bool,
    /// Connect, read and write timeout.
    pub timeout: Duration,
    /// Writes queued per round trip.
    pub pipeline: usize,
    /// How scans find keys.
    pub index: IndexMode,
    /// Whether reads go to cluster replicas.
    pub read_from_replicas: bool,
    /// The sorted sets of the scan index (`_indices`, or its shards).
    pub(crate) index_keys: Vec<Vec<u8>>,
}

impl RedisConfig {
    /// Reads the settings from `properties`.
    ///
    /// # Errors
    ///
    /// [`PropertyError`] naming the property, its value and origin when a
    /// value is invalid (a port above 65535, a zero timeout or pipeline
    /// depth, several hosts without `redis.cluster=true`).
    pub fn from_properties(properties: &ycsb_db::Properties) -> Result<Self, PropertyError> {
        let port = properties.get_checked(&PORT, |p| {
            if (1..=65535).contains(p) {
                Ok(())
            } else {
                Err("expected a port between 1 and 65535".into())
            }
        })?;
        let cluster = match properties.get_opt(&MODE)? {
            None => properties.get(&CLUSTER)?,
            Some(mode) => {
                let cluster = mode == RedisMode::Cluster;
                if properties.is_set(CLUSTER.decl()) && properties.get(&CLUSTER)? != cluster {
                    return Err(properties.invalid(
                        MODE.decl(),
                        "disagrees with redis.cluster (set one of them)",
                    ));
                }
                cluster
            }
        };
        let host = properties.get(&HOST)?;
        let mut nodes = Vec::new();
        for entry in host.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            nodes
                .push(ycsb_db::host_port(entry, port).ok_or_else(|| {
                    properties.invalid(HOST.decl(), "expected host or host:port")
                })?);
        }
        if nodes.is_empty() {
            return Err(properties.invalid(HOST.decl(), "expected a host name or address"));
        }
        if nodes.len() > 1 && !cluster {
            return Err(properties.invalid(
                HOST.decl(),
                "several hosts are only accepted as cluster seeds (redis.cluster=true)",
            ));
        }
        // Zero would wait forever, or send nothing.
        let at_least_one = |n: u64, reason: &str| match n {
            0 => Err(reason.to_string()),
            _ => Ok(()),
        };
        let timeout = properties.get_checked(&TIMEOUT, |t| {
            at_least_one(*t, "expected at least 1 millisecond")
        })?;
        let pipeline = properties.get_checked(&PIPELINE, |d| {
            at_least_one(*d as u64, "expected a depth of at least 1")
        })?;
        let read_from_replicas = properties.get(&READ_FROM_REPLICAS)?;
        if read_from_replicas && !cluster {
            return Err(properties.invalid(
                READ_FROM_REPLICAS.decl(),
                "replica reads need a Redis Cluster (redis.cluster=true)",
            ));
        }
        let shards = properties.get_checked(&INDEX_SHARDS, |n| {
            if (1..=1024).contains(n) {
                Ok(())
            } else {
                Err("expected between 1 and 1024 index sets".into())
            }
        })?;
        Ok(Self {
            nodes,
            read_from_replicas,
            index_keys: client::index_keys(shards),
            username: properties.get_opt(&USERNAME)?,
            password: properties.get_opt(&PASSWORD)?.map(Secret),
            cluster,
            timeout: Duration::from_millis(timeout),
            pipeline,
            index: properties.get(&INDEX)?,
        })
    }
}

/// The redis store: settings and, for a cluster, the slot table found at
/// open, shared by the threads (each opens its own connections).
#[derive(Debug)]
pub struct RedisStore {
    config: Arc<RedisConfig>,
    slots: Option<Arc<SlotTable>>,
    info: EngineInfo,
    health: Arc<Health>,
}

impl RedisStore {
    /// Opens the store: connects once to check that the server answers and
    /// accepts the password, reads its version and, for a cluster, its
    /// slot table.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for an invalid property,
    /// [`StoreError::Open`] when no server could be reached or it refused
    /// the connection (the message never holds the password).
    pub fn open(context: &StoreContext<'_>) -> Result<Self, StoreError> {
        Self::with_config(RedisConfig::from_properties(context.properties)?)
    }

    /// Opens the store with settings already read.
    ///
    /// # Errors
    ///
    /// As [`RedisStore::open`].
    pub fn with_config(config: RedisConfig) -> Result<Self, StoreError> {
        let open_error = |message: String| StoreError::Open {
            store: "redis".into(),
            message,
        };
        let version = client::server_version(&config).map_err(open_error)?;
        let slots = if config.cluster {
            Some(Arc::new(
                client::fetch_slots(&config, &config.nodes).map_err(open_error)?,
            ))
        } else {
            None
        };
        Ok(Self {
            config: Arc::new(config),
            slots,
            info: EngineInfo {
                name: "Redis".into(),
                version,
            },
            health: Arc::new(Health::new()),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &RedisConfig {
        &self.config
    }
}

impl Store for RedisStore {
    fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        // A thread starts from the cluster's current map, not the one
        // read at open: a failover or a replica that joined since then
        // would otherwise cost its first operations (the map read at open
        // is the fallback when no node answers now).
        let fresh = self.slots.as_ref().and_then(|known| {
            client::fetch_slots(&self.config, &known.addresses(&self.config)).ok()
        });
        let client = Client::new(
            self.config.clone(),
            fresh.as_ref().or(self.slots.as_deref()),
            self.health.clone(),
            context.thread_id,
        );
        Ok(Box::new(client.connected().map_err(|message| {
            StoreError::Open {
                store: "redis".into(),
                message,
            }
        })?))
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
    use ycsb_db::Properties;

    #[test]
    fn config_validation_names_the_property() {
        let p = Properties::new().with("redis.port", "70000");
        let err = RedisConfig::from_properties(&p).unwrap_err().to_string();
        assert!(
            err.starts_with("redis.port: invalid value '70000'"),
            "{err}"
        );
        let p = Properties::new().with("redis.host", "a,b");
        let err = RedisConfig::from_properties(&p).unwrap_err().to_string();
        assert!(err.contains("redis.cluster=true"), "{err}");
        let p = Properties::new()
            .with("redis.host", "a, b:7001")
            .with("redis.cluster", "true")
            .with("redis.pipeline", "8")
            .with("redis.index", "lex");
        let c = RedisConfig::from_properties(&p).unwrap();
        assert_eq!(c.nodes, vec!["a:6379", "b:7001"]);
        assert_eq!(c.pipeline, 8);
        assert_eq!(c.index, IndexMode::Lex);
        assert!(
            RedisConfig::from_properties(&Properties::new().with("redis.pipeline", "0")).is_err()
        );
        let err = RedisConfig::from_properties(&Properties::new().with("redis.timeout", "0"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected at least 1 millisecond"), "{err}");
        // A port of 0 or an empty address is refused at open, as in
        // memcached.hosts, not left to fail at connect.
        for host in ["h:0", "[]:6379", "h:x", "[::1]:0"] {
            let p = Properties::new().with("redis.host", host);
            let err = RedisConfig::from_properties(&p).unwrap_err().to_string();
            assert!(err.contains("expected host or host:port"), "{host}: {err}");
        }
    }

    #[test]
    fn go_ycsb_names_mean_ours() {
        let p = Properties::new()
            .with("redis.addr", "a:7000,b:7001")
            .with("redis.mode", "cluster");
        let c = RedisConfig::from_properties(&p).unwrap();
        assert_eq!(c.nodes, vec!["a:7000", "b:7001"]);
        assert!(c.cluster);
        let p = Properties::new().with("redis.mode", "single");
        assert!(!RedisConfig::from_properties(&p).unwrap().cluster);
        let p = Properties::new()
            .with("redis.mode", "single")
            .with("redis.cluster", "true");
        let err = RedisConfig::from_properties(&p).unwrap_err().to_string();
        assert!(
            err.starts_with("redis.mode: invalid value 'single'") && err.contains("redis.cluster"),
            "{err}"
        );
        let p = Properties::new().with("redis.mode", "sentinel");
        let err = RedisConfig::from_properties(&p).unwrap_err().to_string();
        assert!(err.contains("single") && err.contains("cluster"), "{err}");
    }

    #[test]
    fn password_is_redacted_from_debug() {
        let p = Properties::new().with("redis.password", "hunter2-secret");
        let c = RedisConfig::from_properties(&p).unwrap();
        let shown = format!("{c:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains(ycsb_db::REDACTED));
        assert!(PASSWORD.decl().secret);
    }
}
