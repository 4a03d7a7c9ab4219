//! The `etcd` store: YCSB records in etcd v3, the Raft-replicated
//! key-value store behind Kubernetes.
//!
//! # Schema
//!
//! A record is one etcd key, `<table>/<key>`, whose value is the record's
//! `ycsb_db::codec` encoding (the layout of every other binding). Java
//! YCSB has no etcd binding; go-ycsb's keeps one value per record too.
//!
//! | operation | etcd requests |
//! |---|---|
//! | read | `Range(key)` |
//! | scan | `Range(start, end of the table's prefix, limit = count)`: keys in byte order |
//! | insert | `Put(key, record)` |
//! | update | `Range(key)`, then `Txn(if mod_revision(key) = read revision then Put(key, merged record))`, retried when another client changed the record in between |
//! | delete | `DeleteRange(key)` (`NOT_FOUND` when nothing was deleted) |
//!
//! An update is a read-modify-write because etcd has no partial update;
//! the transaction makes it atomic, so concurrent updates of one record
//! (a zipfian workload's hot keys) never lose a field.
//!
//! Reads are linearizable (etcd's default: they go through the leader's
//! read index); `etcd.serializable_reads=true` answers them from the
//! member asked, as `etcdctl get --consistency=s` does.
//!
//! # Transport
//!
//! Requests go to etcd's gRPC gateway: JSON over HTTP/1.1 on the client
//! port (`/v3/kv/range`, `/v3/kv/put`, `/v3/kv/txn`,
//! `/v3/kv/deleterange`; etcd 3.4 and later), over the keep-alive client
//! of the `http` store, with TLS for `https://` endpoints. This costs a
//! few microseconds of JSON and base64 per operation against etcd's
//! commit latency of a replicated, fsynced write (milliseconds), and it
//! keeps the binding free of an async runtime and a gRPC stack.
//!
//! # Endpoints and failures
//!
//! `etcd.endpoints` lists the members. Client thread `i` starts on member
//! `i mod n`, spreading load as etcd's own client balancer does. When a
//! member cannot be reached or its connection breaks, the operation fails
//! with `SERVICE_UNAVAILABLE` and the thread moves to the next member; an
//! answer that the cluster has no leader (during an election) is
//! `SERVICE_UNAVAILABLE` too. So a member killed mid-run costs a few
//! failed operations, counted apart, and the run goes on.
//!
//! The password (`etcd.password`) is a secret property: it is never part
//! of any `Debug` or `Display` output or error of this crate.

#![deny(missing_docs)]
// The one exception: the generated OpenSSL bindings (`lazy_ssl`,
// `lazy_crypto`), whose trampolines are assembly.
#![deny(unsafe_code)]
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

// OpenSSL's libssl and libcrypto, bound at the first TLS connection.
ycsb_lazylink::bound_on_first_use!(lazy_ssl, "ssl");
ycsb_lazylink::bound_on_first_use!(lazy_crypto, "crypto");
mod json;
#[cfg(feature = "testing")]
pub mod testing;
mod thread;

use std::sync::Mutex;
use std::time::Duration;

use ycsb_db::{
    EngineInfo, EngineReport, Gauge, Properties, Property, PropertyDecl, PropertyError, Store,
    StoreContext, StoreDescriptor, StoreError, StoreThread, ThreadContext,
};

use client::{Client, Endpoint, Transport};

/// `etcd.endpoints`: the members to talk to.
pub const ENDPOINTS: Property<String> = Property::new(
    "etcd.endpoints",
    "127.0.0.1:2379",
    "Comma-separated client URLs of the etcd members: host:port, http://host:port or \
     https://host:port (TLS; a bare host:port uses TLS when etcd.cacert_file is set). \
     Client thread i starts on member i mod n and moves to the next one when its member fails.",
);

/// `etcd.dial_timeout`: how long a connection attempt may take.
pub const DIAL_TIMEOUT: Property<String> = Property::new(
    "etcd.dial_timeout",
    "2s",
    "Timeout for connecting to a member, as go-ycsb writes it: a number with the unit ms, s \
     or m (500ms, 2s); a bare number is milliseconds.",
);

/// `etcd.timeout`: how long one request may take.
pub const TIMEOUT: Property<u64> = Property::new(
    "etcd.timeout",
    "5000",
    "Timeout in milliseconds for each request (sending it and reading the answer); a request \
     that times out fails with SERVICE_UNAVAILABLE and the thread moves to the next member.",
);

/// `etcd.serializable_reads`: serializable instead of linearizable reads.
pub const SERIALIZABLE_READS: Property<bool> = Property::new(
    "etcd.serializable_reads",
    "false",
    "Answer reads and scans from the member asked (serializable, possibly stale), instead of \
     etcd's default linearizable reads confirmed by the leader.",
);

/// `etcd.cacert_file`: the CA that signed the members' certificates.
pub const CACERT_FILE: Property<String> = Property::optional(
    "etcd.cacert_file",
    "PEM file of the certificate authority that signed the members' server certificates; \
     setting it turns TLS on for every endpoint.",
);

/// `etcd.cert_file`: the client certificate, for client-certificate auth.
pub const CERT_FILE: Property<String> = Property::optional(
    "etcd.cert_file",
    "PEM file of the client certificate, for members started with --client-cert-auth \
     (needs etcd.key_file).",
);

/// `etcd.key_file`: the client certificate's private key.
pub const KEY_FILE: Property<String> = Property::optional(
    "etcd.key_file",
    "PEM file (PKCS#8) of the client certificate's private key.",
);

/// `etcd.user`: the user to authenticate as.
pub const USER: Property<String> = Property::optional(
    "etcd.user",
    "User name for etcd's authentication (with etcd.password); each client thread gets its \
     own token.",
)
.aliases(&["etcd.username"]);

/// `etcd.password`: the user's password (secret).
pub const PASSWORD: Property<String> =
    Property::optional("etcd.password", "Password of etcd.user. Never printed.").secret();

/// Every property the etcd store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    ENDPOINTS.decl(),
    DIAL_TIMEOUT.decl(),
    TIMEOUT.decl(),
    SERIALIZABLE_READS.decl(),
    CACERT_FILE.decl(),
    CERT_FILE.decl(),
    KEY_FILE.decl(),
    USER.decl(),
    PASSWORD.decl(),
];

/// How the command line finds the etcd store.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "etcd",
    "etcd v3 (Raft-replicated; a cluster of members) through its gRPC-JSON gateway",
    PROPERTIES,
    open_store,
)
.with_debian(ycsb_db::DebianPackages::new(
    &["libssl-dev", "pkg-config"],
    &["libssl3"],
    &["etcd-server", "openssl"],
))
.with_batching(ycsb_db::Batching::Native);

fn open_store(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(EtcdStore::open(context.properties)?))
}

/// A secret string: shown as `<redacted>` by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(pub(crate) String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(ycsb_db::REDACTED)
    }
}

/// The etcd store's settings, read from properties.
#[derive(Debug)]
#[non_exhaustive]
pub struct EtcdConfig {
    pub(crate) endpoints: Vec<Endpoint>,
    pub(crate) transport: Transport,
    /// Connect timeout.
    pub dial_timeout: Duration,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Whether reads and scans are serializable.
    pub serializable_reads: bool,
    pub(crate) credentials: Option<(String, Secret)>,
}

impl EtcdConfig {
    /// Reads the settings from `properties`, loading TLS files if given.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] naming the property, its value and origin
    /// (an endpoint that is not `host:port`, a bad duration, a password
    /// without a user, a certificate without its key);
    /// [`StoreError::Io`] when a TLS file cannot be read, and
    /// [`StoreError::Open`] when it is not valid PEM.
    pub fn from_properties(properties: &Properties) -> Result<Self, StoreError> {
        let dial_timeout =
            properties.get_checked(&DIAL_TIMEOUT, |text| parse_duration(text).map(|_| ()))?;
        let dial_timeout = parse_duration(&dial_timeout)
            .map_err(|reason| properties.invalid(DIAL_TIMEOUT.decl(), reason))?;
        let timeout = properties.get_checked(&TIMEOUT, |t| {
            if *t > 0 {
                Ok(())
            } else {
                Err("expected at least 1 millisecond".into())
            }
        })?;
        let cacert = properties.get_opt(&CACERT_FILE)?;
        let cert = properties.get_opt(&CERT_FILE)?;
        let key = properties.get_opt(&KEY_FILE)?;
        if cert.is_some() != key.is_some() {
            let missing = if cert.is_some() {
                &KEY_FILE
            } else {
                &CERT_FILE
            };
            return Err(PropertyError::Missing {
                name: missing.name().to_string(),
                meaning: "a client certificate needs both etcd.cert_file and etcd.key_file"
                    .to_string(),
            }
            .into());
        }
        let raw = properties.get(&ENDPOINTS)?;
        let mut endpoints = Vec::new();
        for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let endpoint = Endpoint::parse(entry, cacert.is_some())
                .map_err(|reason| properties.invalid(ENDPOINTS.decl(), reason))?;
            endpoints.push(endpoint);
        }
        if endpoints.is_empty() {
            return Err(properties
                .invalid(ENDPOINTS.decl(), "expected at least one host:port")
                .into());
        }
        let transport = if endpoints.iter().any(|e| e.tls) {
            Transport::tls(cacert.as_deref(), cert.as_deref().zip(key.as_deref()))?
        } else {
            Transport::Plain
        };
        let user = properties.get_opt(&USER)?;
        let password = properties.get_opt(&PASSWORD)?;
        let credentials = match (user, password) {
            (Some(user), password) => Some((user, Secret(password.unwrap_or_default()))),
            (None, Some(_)) => {
                return Err(PropertyError::Missing {
                    name: USER.name().to_string(),
                    meaning: "etcd.password is set: name the user it belongs to".to_string(),
                }
                .into())
            }
            (None, None) => None,
        };
        Ok(Self {
            endpoints,
            transport,
            dial_timeout,
            timeout: Duration::from_millis(timeout),
            serializable_reads: properties.get(&SERIALIZABLE_READS)?,
            credentials,
        })
    }

    /// The endpoints, as `host:port` (with `https://` for TLS ones).
    pub fn endpoints(&self) -> Vec<String> {
        self.endpoints.iter().map(Endpoint::to_string).collect()
    }
}

/// A duration as go-ycsb's properties write it: `500ms`, `2s`, `1m`, or
/// a bare number of milliseconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| "expected a duration such as 500ms, 2s or 1m".to_string())?;
    let seconds = match unit.trim() {
        "" | "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        other => return Err(format!("unknown unit '{other}' (expected ms, s or m)")),
    };
    if !(seconds > 0.0 && seconds <= ycsb_db::MAX_SECONDS as f64) {
        return Err("expected a positive duration".to_string());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// The etcd store: settings shared by the threads (each opens its own
/// connection), and the status thread's connections for gauges.
#[derive(Debug)]
pub struct EtcdStore {
    config: EtcdConfig,
    info: EngineInfo,
    /// One connection per member for [`Store::gauges`], used only by the
    /// status thread (the lock is never taken on the operation path).
    status: Mutex<Vec<Client>>,
}

impl EtcdStore {
    /// Opens the store: asks the members for their status until one
    /// answers (its version names the engine), and authenticates once
    /// when a user is set, so that a wrong password fails here.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for an invalid property,
    /// [`StoreError::Open`] when no member answers or authentication
    /// fails (the message never holds the password).
    pub fn open(properties: &Properties) -> Result<Self, StoreError> {
        Self::with_config(EtcdConfig::from_properties(properties)?).map_err(|e| match e {
            // Name the input, as a bad input's one line does.
            StoreError::Open { store, message } => StoreError::Open {
                store,
                message: format!(
                    "{message} (the members from {})",
                    properties.describe(ENDPOINTS.decl())
                ),
            },
            other => other,
        })
    }

    /// Opens the store with settings already read.
    ///
    /// # Errors
    ///
    /// As [`EtcdStore::open`].
    pub fn with_config(config: EtcdConfig) -> Result<Self, StoreError> {
        let mut status: Vec<Client> = (0..config.endpoints.len()).map(Client::new).collect();
        let mut failures = Vec::new();
        let mut version = None;
        for client in &mut status {
            match client.member_status(&config) {
                Ok(s) => {
                    version = Some(s.version);
                    break;
                }
                Err(e) => failures.push(format!("{}: {e}", config.endpoints[client.endpoint()])),
            }
        }
        let Some(version) = version else {
            return Err(StoreError::Open {
                store: "etcd".into(),
                message: format!("no member answered ({})", failures.join("; ")),
            });
        };
        if config.credentials.is_some() {
            let mut probe = Client::new(0);
            probe
                .connect_any(&config)
                .map_err(|message| StoreError::Open {
                    store: "etcd".into(),
                    message,
                })?;
        }
        Ok(Self {
            config,
            info: EngineInfo {
                name: "etcd".into(),
                version,
            },
            status: Mutex::new(status),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &EtcdConfig {
        &self.config
    }
}

impl Store for EtcdStore {
    fn thread(&self, context: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        let first = context.thread_id % self.config.endpoints.len();
        let thread = thread::EtcdThread::connect(&self.config, first).map_err(|message| {
            StoreError::Open {
                store: "etcd".into(),
                message,
            }
        })?;
        Ok(Box::new(thread))
    }

    fn gauges(&self, out: &mut Vec<Gauge>) {
        let Ok(mut clients) = self.status.lock() else {
            return;
        };
        let mut up = 0u32;
        let (mut db_size, mut db_in_use, mut term, mut index) = (0f64, 0f64, 0f64, 0f64);
        for client in clients.iter_mut() {
            if let Ok(s) = client.member_status(&self.config) {
                up += 1;
                db_size = db_size.max(s.db_size as f64);
                db_in_use = db_in_use.max(s.db_size_in_use as f64);
                term = term.max(s.raft_term as f64);
                index = index.max(s.raft_index as f64);
            }
        }
        out.push(Gauge::count("etcd.members-up", f64::from(up)));
        if up > 0 {
            out.push(Gauge::bytes("etcd.db-size-bytes", db_size));
            out.push(Gauge::bytes("etcd.db-size-in-use-bytes", db_in_use));
            out.push(Gauge::count("etcd.raft-term", term));
            out.push(Gauge::count("etcd.raft-index", index));
        }
    }

    fn engine_build(&self) -> ycsb_db::EngineBuild {
        // The engine runs in the server: its build is not visible here.
        ycsb_db::EngineBuild::remote()
    }

    fn engine_info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn final_reports(&self) -> Vec<EngineReport> {
        let Ok(mut clients) = self.status.lock() else {
            return Vec::new();
        };
        let mut text = String::new();
        for client in clients.iter_mut() {
            let endpoint = &self.config.endpoints[client.endpoint()];
            match client.member_status(&self.config) {
                Ok(s) => text.push_str(&format!(
                    "{endpoint}: version {} member {} leader {} raft term {} index {} db size {} (in use {})\n",
                    s.version, s.member_id, s.leader, s.raft_term, s.raft_index, s.db_size, s.db_size_in_use
                )),
                Err(e) => text.push_str(&format!("{endpoint}: no answer: {e}\n")),
            }
        }
        vec![EngineReport {
            name: "etcd.status".into(),
            text,
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_go_ycsb_writes_them() {
        for (text, ms) in [("2s", 2000), ("500ms", 500), ("750", 750), ("1m", 60_000)] {
            assert_eq!(
                parse_duration(text).unwrap(),
                Duration::from_millis(ms),
                "{text}"
            );
        }
        for bad in ["", "s", "2h", "-1s", "0"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn config_validation_names_the_property() {
        let err = EtcdConfig::from_properties(&Properties::new().with("etcd.endpoints", "a:b"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("etcd.endpoints: invalid value 'a:b'"),
            "{err}"
        );
        let err = EtcdConfig::from_properties(&Properties::new().with("etcd.dial_timeout", "2h"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("etcd.dial_timeout"), "{err}");
        let err = EtcdConfig::from_properties(&Properties::new().with("etcd.password", "x"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("etcd.user"), "{err}");
        let err =
            EtcdConfig::from_properties(&Properties::new().with("etcd.cert_file", "/nonexistent"))
                .unwrap_err()
                .to_string();
        assert!(err.contains("etcd.key_file"), "{err}");
        let c = EtcdConfig::from_properties(
            &Properties::new().with("etcd.endpoints", "127.0.0.1:1, http://[::1]:2,https://h:3"),
        )
        .unwrap();
        assert_eq!(c.endpoints(), vec!["127.0.0.1:1", "[::1]:2", "https://h:3"]);
    }

    /// Issue 33 item 9: an endpoint carrying user information is refused
    /// without printing the password, whichever form it takes (a closed
    /// loopback port: nothing answers, nothing needs to).
    #[test]
    fn an_endpoint_s_password_is_never_shown() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        for endpoints in [
            format!("http://root:S3cr3tPW@127.0.0.1:{port}"),
            format!("root:S3cr3tPW@127.0.0.1:{port}"),
            format!("https://root:S3cr3tPW@127.0.0.1:{port}/"),
            format!("ftp://root:S3cr3tPW@127.0.0.1:{port}"),
            format!("127.0.0.1:{port},root:S3cr3tPW@[::1]:{port}"),
        ] {
            let props = Properties::new().with("etcd.endpoints", endpoints.as_str());
            let err = EtcdStore::open(&props).unwrap_err();
            let shown = format!("{err}");
            assert!(
                !shown.contains("S3cr3tPW") && shown.contains("etcd.endpoints"),
                "{endpoints}: {shown}"
            );
        }
    }

    #[test]
    fn password_is_redacted_from_debug() {
        let p = Properties::new()
            .with("etcd.user", "root")
            .with("etcd.password", "hunter2-secret");
        let c = EtcdConfig::from_properties(&p).unwrap();
        let shown = format!("{c:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains(ycsb_db::REDACTED));
        assert!(PASSWORD.decl().secret);
    }
}
