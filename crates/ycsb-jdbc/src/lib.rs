//! The `jdbc` store: YCSB records in PostgreSQL, MySQL or MariaDB tables
//! laid out as Java YCSB's JDBC binding (`site.ycsb.db.JdbcDBClient`) lays
//! them out, so that Java's client and this one read each other's rows.
//!
//! # Layout (Java's)
//!
//! - A table per YCSB table (`usertable`), with the key in `YCSB_KEY`
//!   (primary key) and one column per field, `FIELD0`, `FIELD1`, ... (as
//!   Java's `JdbcDBCreateTable` makes it; `jdbc.createtable=true` makes it
//!   here).
//! - A read is `SELECT * FROM t WHERE YCSB_KEY = ?`; an insert names the
//!   key and the record's fields; an update sets only the fields it
//!   carries; a delete is by key; a scan is Java's range query,
//!   `SELECT * FROM t WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?`.
//!   Table and field names are put in the SQL unquoted, as Java does (so
//!   PostgreSQL folds them to lower case); fields read are named in lower
//!   case on both servers.
//! - Several URLs in `db.url` are shards: a key lives on shard
//!   `|String.hashCode(key)| mod shards`, as in Java.
//!
//! # Where this binding differs from Java's, and why
//!
//! - A read of all fields returns every non-NULL column (Java's returns
//!   none); a NULL column is a field the record does not have.
//! - An update or delete of a missing key is `NOT_FOUND` (Java's:
//!   `UNEXPECTED_STATE`), as every store of this workbench answers.
//! - The key column is created with the C collation (PostgreSQL) or
//!   `utf8mb4_bin` (MySQL), so that keys are ordered bytewise, as every
//!   ordered store here orders them (a Java client reads such a table all
//!   the same).
//! - `jdbc.fieldtype=binary` makes the field columns `BYTEA` (`LONGBLOB`
//!   on MySQL), which hold
//!   any bytes; Java's `TEXT` holds UTF-8 text without NUL, and a value
//!   that is not fails with `ERROR`, naming why.
//!
//! # Failures
//!
//! A lost connection (server killed, restarted) fails the operation with
//! `SERVICE_UNAVAILABLE`; the shard is reconnected after a backoff (50 ms
//! doubling to 1 s), and its prepared statements prepared again.

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

mod my;
mod pg;
mod pgwire;
#[cfg(feature = "testing")]
pub mod testing;
mod thread;
pub mod url;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ycsb_db::{
    DebianPackages, Durability, DurabilitySetting, EngineInfo, Gauge, Properties, Property,
    PropertyDecl, PropertyError, Protocol, ServerAddress, ServerClient, Store, StoreContext,
    StoreDescriptor, StoreError, StoreThread, ThreadContext,
};

pub use url::{Dialect, ShardUrl};

ycsb_db::choice_property! {
    /// What the field columns hold (`jdbc.fieldtype`).
    pub enum FieldType {
        /// Java's: `TEXT` (UTF-8 text without NUL).
        Text = "text",
        /// `BYTEA`: any bytes.
        Binary = "binary",
    }
}

/// `db.url`: Java's JDBC URL(s).
pub const URL: Property<String> = Property::optional(
    "db.url",
    "JDBC URL of the server, jdbc:postgresql://host:port/database (user= and password= \
     parameters allowed); several URLs separated by ; (Java's separator) or by , before jdbc: \
     are shards, a key living on shard |String.hashCode(key)| mod shards as in Java. When \
     unset, the URL is built from jdbc.host, jdbc.port and jdbc.database.",
);

/// `db.driver`: which server, when `db.url` does not say.
pub const DRIVER: Property<String> = Property::optional(
    "db.driver",
    "Which server when db.url is not given: postgresql, mysql (MariaDB too), or Java's driver \
     class (org.postgresql.Driver, com.mysql.cj.jdbc.Driver, org.mariadb.jdbc.Driver). Unset: \
     mysql when a mysql.* name was used, else postgresql. A db.url's scheme decides otherwise.",
);

/// `jdbc.host`: the host when `db.url` is not given (go-ycsb's `pg.host`,
/// `mysql.host`).
pub const HOST: Property<String> = Property::new(
    "jdbc.host",
    "127.0.0.1",
    "The server's host when db.url is not given.",
)
.aliases(&["pg.host", "mysql.host"]);

/// `jdbc.port`: the port when `db.url` is not given.
pub const PORT: Property<u32> = Property::optional(
    "jdbc.port",
    "The server's TCP port when db.url is not given (default: 5432 for PostgreSQL, 3306 for \
     MySQL).",
)
.aliases(&["pg.port", "mysql.port"])
.range(1, 65535);

/// `jdbc.database`: the database when `db.url` is not given.
pub const DATABASE: Property<String> = Property::new(
    "jdbc.database",
    "test",
    "The database when db.url is not given (go-ycsb's default, test).",
)
.aliases(&["pg.db", "mysql.db"]);

/// `db.user`: who logs in.
pub const USER: Property<String> = Property::optional(
    "db.user",
    "The user to log in as (a user= parameter of db.url takes precedence; default: postgres \
     for PostgreSQL, root for MySQL).",
)
.aliases(&["pg.user", "mysql.user"]);

/// `db.passwd`: the password (secret).
pub const PASSWORD: Property<String> = Property::optional(
    "db.passwd",
    "The password (never printed, logged or exported; a password= parameter of db.url takes \
     precedence).",
)
.aliases(&["pg.password", "mysql.password"])
.secret();

/// `db.batchsize`: inserts per batch or per commit.
pub const BATCH_SIZE: Property<i64> = Property::new(
    "db.batchsize",
    "-1",
    "Inserts per batch (jdbc.batchupdateapi=true: sent together in one transaction) or per \
     commit (jdbc.autocommit=false); 0 or less: no batching, a commit per write.",
);

/// `jdbc.autocommit`: every statement its own transaction.
pub const AUTOCOMMIT: Property<bool> = Property::new(
    "jdbc.autocommit",
    "true",
    "Whether every statement commits by itself (Java's default). With false, each shard's \
     connection keeps a transaction open, committed after every write, or after db.batchsize \
     inserts when that is positive, and at the end.",
);

/// `jdbc.fetchsize`: Java's scan fetch size hint.
pub const FETCH_SIZE: Property<i64> = Property::new(
    "jdbc.fetchsize",
    "-1",
    "Java's fetch size hint for scans. Scan rows are decoded here as they arrive, whatever \
     the value, and a scan asks for at most its record count (LIMIT), so it changes nothing; \
     accepted so that Java's property files run unchanged.",
);

/// `jdbc.batchupdateapi`: batch inserts.
pub const BATCH_UPDATES: Property<bool> = Property::new(
    "jdbc.batchupdateapi",
    "false",
    "Whether inserts are batched (Java's addBatch/executeBatch): with db.batchsize > 0, an \
     insert answers BATCHED_OK and every db.batchsize inserts are sent in one transaction \
     (what is left at the end, by cleanup).",
);

/// `jdbc.createtable`: create the table first, as `JdbcDBCreateTable`.
pub const CREATE_TABLE: Property<bool> = Property::new(
    "jdbc.createtable",
    "false",
    "Whether opening the store creates the table (the table property, usertable) when it is \
     missing, as Java's JdbcDBCreateTable does: YCSB_KEY VARCHAR(255) PRIMARY KEY (C \
     collation: keys ordered bytewise) and FIELD0..FIELDn-1 for fieldcount=n, on every shard.",
);

/// `jdbc.fieldtype`: what the created field columns hold.
pub const FIELD_TYPE: Property<FieldType> = Property::new(
    "jdbc.fieldtype",
    "text",
    "Type of the field columns jdbc.createtable creates: text (Java's TEXT: UTF-8 without \
     NUL) or binary (BYTEA: any bytes). Existing tables are used as they are.",
);

/// `pg.synchronous_commit`: PostgreSQL's session setting.
pub const SYNCHRONOUS_COMMIT: Property<String> = Property::new(
    "pg.synchronous_commit",
    "on",
    "PostgreSQL's synchronous_commit for the store's sessions (on, off, local, remote_write, \
     remote_apply): on waits for the commit record to be flushed to disk, off does not (a \
     crash may lose the last commits). Recorded with the results.",
);

/// `jdbc.connecttimeout`: how long a connection attempt may take.
pub const CONNECT_TIMEOUT: Property<u64> = Property::new(
    "jdbc.connecttimeout",
    "5000",
    "Timeout in milliseconds of a connection attempt (at open and on reconnection).",
)
.range(1, 86_400_000);

/// Every property the jdbc store reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    URL.decl(),
    DRIVER.decl(),
    HOST.decl(),
    PORT.decl(),
    DATABASE.decl(),
    USER.decl(),
    PASSWORD.decl(),
    BATCH_SIZE.decl(),
    AUTOCOMMIT.decl(),
    FETCH_SIZE.decl(),
    BATCH_UPDATES.decl(),
    CREATE_TABLE.decl(),
    FIELD_TYPE.decl(),
    SYNCHRONOUS_COMMIT.decl(),
    CONNECT_TIMEOUT.decl(),
];

/// How the command line finds the jdbc store.
pub const DESCRIPTOR: StoreDescriptor = StoreDescriptor::new(
    "jdbc",
    "PostgreSQL, MySQL or MariaDB through Java YCSB's JDBC table (YCSB_KEY, FIELD0..); pg.* and mysql.* names as go-ycsb",
    PROPERTIES,
    open_store,
)
.with_aliases(&[
    "postgresql",
    "pg",
    "mysql",
    "mariadb",
    "site.ycsb.db.JdbcDBClient",
])
.with_server(
    ServerClient::new(
        Protocol::Sql,
        ServerAddress::HostPort {
            host: "jdbc.host",
            port: "jdbc.port",
        },
    )
    // What the experiment runner's private servers need: PostgreSQL's
    // cluster trusts loopback logins, MariaDB runs without grant tables.
    .with_servers(&[
        (
            "postgres",
            &[
                ("db.driver", "postgresql"),
                ("jdbc.database", "postgres"),
                ("db.user", "postgres"),
                ("jdbc.createtable", "true"),
            ],
        ),
        (
            "mariadb",
            &[
                ("db.driver", "mysql"),
                ("jdbc.database", "test"),
                ("db.user", "root"),
                ("jdbc.createtable", "true"),
            ],
        ),
    ]),
)
// A batch of inserts is one transaction per shard (one commit): native, and
// atomic only on one server, so not declared atomic.
.with_batching(ycsb_db::Batching::Native)
.with_durability(Durability::new(
    "pg.synchronous_commit",
    &["on", "remote_write", "remote_apply", "local"],
    "off",
))
.with_debian(DebianPackages::new(&[], &[], &["postgresql", "mariadb-server"]));

fn open_store(context: &StoreContext<'_>) -> Result<Box<dyn Store>, StoreError> {
    Ok(Box::new(JdbcStore::open(context.properties)?))
}

/// A password: shown as `<redacted>` by `Debug`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The password itself, to send to the server.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(ycsb_db::REDACTED)
    }
}

/// One shard's connection settings.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Shard {
    /// Where it is (no credentials).
    pub url: ShardUrl,
    /// Who logs in.
    pub user: String,
    /// With which password.
    pub password: Option<Secret>,
}

/// The jdbc store's settings, read from properties.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct JdbcConfig {
    /// The server kind of every shard.
    pub dialect: Dialect,
    /// The shards, in `db.url`'s order.
    pub shards: Vec<Shard>,
    /// Where they came from (`db.url=... (-p flag)`), for messages.
    pub origin: String,
    /// Inserts per batch or per commit (positive), or none.
    pub batch_size: Option<u64>,
    /// Whether statements commit by themselves.
    pub autocommit: bool,
    /// Whether inserts are batched.
    pub batch_updates: bool,
    /// Whether opening creates the table.
    pub create_table: bool,
    /// The created columns' type.
    pub field_type: FieldType,
    /// The table the workload names (`table`), created by `create_table`.
    pub table: String,
    /// Its field count (`fieldcount`).
    pub field_count: u64,
    /// PostgreSQL's `synchronous_commit` for the sessions.
    pub synchronous_commit: String,
    /// Connection attempt timeout.
    pub connect_timeout: Duration,
}

impl JdbcConfig {
    /// Reads the settings from `properties`.
    ///
    /// # Errors
    ///
    /// [`PropertyError`] naming the property, its value and origin for a
    /// bad URL, a number out of range or an unknown setting.
    pub fn from_properties(properties: &Properties) -> Result<Self, PropertyError> {
        let password = properties.get_opt(&PASSWORD)?.map(Secret);
        let mut shards: Vec<Shard> = Vec::new();
        let origin;
        let dialect;
        match properties.get_opt(&URL)? {
            Some(urls) => {
                origin = properties.describe(URL.decl());
                for text in url::split_urls(&urls) {
                    let parsed = url::parse(&text).map_err(|why| {
                        properties.invalid(URL.decl(), format!("'{}': {why}", redact_url(&text)))
                    })?;
                    if let Some(first) = shards.first() {
                        if first.url.dialect != parsed.dialect {
                            return Err(properties.invalid(
                                URL.decl(),
                                "every shard must be the same kind of server",
                            ));
                        }
                    }
                    let user = match properties.get_opt(&USER)? {
                        Some(user) => user,
                        None => default_user(parsed.dialect).to_string(),
                    };
                    shards.push(Shard {
                        user: parsed.user.clone().unwrap_or(user),
                        password: parsed.password.clone().map(Secret).or(password.clone()),
                        url: ShardUrl {
                            user: None,
                            password: None,
                            ..parsed
                        },
                    });
                }
                let Some(first) = shards.first() else {
                    return Err(properties.invalid(URL.decl(), "expected at least one JDBC URL"));
                };
                dialect = first.url.dialect;
            }
            None => {
                dialect = dialect_without_url(properties)?;
                origin = format!(
                    "{}, {}",
                    properties.describe(HOST.decl()),
                    properties.describe(PORT.decl())
                );
                let host = properties.get(&HOST)?;
                let host = host
                    .strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .unwrap_or(&host)
                    .to_string();
                let port = match properties.get_opt(&PORT)? {
                    Some(port) => port as u16,
                    None => dialect.default_port(),
                };
                shards.push(Shard {
                    url: ShardUrl {
                        dialect,
                        host,
                        port,
                        database: properties.get(&DATABASE)?,
                        user: None,
                        password: None,
                    },
                    user: match properties.get_opt(&USER)? {
                        Some(user) => user,
                        None => default_user(dialect).to_string(),
                    },
                    password,
                });
            }
        }
        let batch_size = u64::try_from(properties.get(&BATCH_SIZE)?)
            .ok()
            .filter(|n| *n > 0);
        // Checked so that a typo fails; see FETCH_SIZE's meaning.
        properties.get(&FETCH_SIZE)?;
        let synchronous_commit = properties.get(&SYNCHRONOUS_COMMIT)?.trim().to_string();
        const LEVELS: [&str; 5] = ["on", "off", "local", "remote_write", "remote_apply"];
        if !LEVELS
            .iter()
            .any(|l| l.eq_ignore_ascii_case(&synchronous_commit))
        {
            return Err(properties.invalid(
                SYNCHRONOUS_COMMIT.decl(),
                format!("expected one of {}", LEVELS.join(", ")),
            ));
        }
        let field_count = properties
            .get_str("fieldcount")
            .map(|s| s.trim().parse::<u64>())
            .transpose()
            .ok()
            .flatten()
            .unwrap_or(10);
        Ok(Self {
            dialect,
            shards,
            origin,
            batch_size,
            autocommit: properties.get(&AUTOCOMMIT)?,
            batch_updates: properties.get(&BATCH_UPDATES)?,
            create_table: properties.get(&CREATE_TABLE)?,
            field_type: properties.get(&FIELD_TYPE)?,
            table: properties
                .get_str("table")
                .unwrap_or("usertable")
                .trim()
                .to_string(),
            field_count,
            synchronous_commit: synchronous_commit.to_ascii_lowercase(),
            connect_timeout: Duration::from_millis(properties.get(&CONNECT_TIMEOUT)?),
        })
    }
}

/// A URL as it may be shown: its `password=` parameter redacted.
fn redact_url(url: &str) -> String {
    ycsb_db::redact_text(url).into_owned()
}

/// Each server's superuser, the user when none is given.
fn default_user(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "postgres",
        Dialect::MySql => "root",
    }
}

/// The server kind when no `db.url` says it: `db.driver`, else `mysql`
/// when a `mysql.*` name was used, else PostgreSQL.
fn dialect_without_url(properties: &Properties) -> Result<Dialect, PropertyError> {
    if let Some(driver) = properties.get_opt(&DRIVER)? {
        let lower = driver.trim().to_ascii_lowercase();
        return if lower.contains("postgres") {
            Ok(Dialect::Postgres)
        } else if lower.contains("mysql") || lower.contains("mariadb") {
            Ok(Dialect::MySql)
        } else {
            Err(properties.invalid(
                DRIVER.decl(),
                "expected postgresql, mysql, mariadb or a driver class naming one",
            ))
        };
    }
    let named_mysql = [
        HOST.decl(),
        PORT.decl(),
        DATABASE.decl(),
        USER.decl(),
        PASSWORD.decl(),
    ]
    .iter()
    .filter_map(|d| properties.raw(d))
    .any(|raw| raw.key.starts_with("mysql."));
    Ok(if named_mysql {
        Dialect::MySql
    } else {
        Dialect::Postgres
    })
}

/// Whether `name` may be put in SQL unquoted, as Java puts table and field
/// names.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 63
}

/// How a server spells Java's table (`JdbcDBCreateTable`'s).
pub(crate) struct TableSpelling {
    /// The key column's type, with the collation that orders keys bytewise.
    pub(crate) key: &'static str,
    /// A field column's type for text (`jdbc.fieldtype=text`).
    pub(crate) text: &'static str,
    /// A field column's type for bytes (`jdbc.fieldtype=binary`).
    pub(crate) binary: &'static str,
    /// What follows the column list.
    pub(crate) options: &'static str,
}

/// Java's `JdbcDBCreateTable` as SQL: `table` with `YCSB_KEY` (primary
/// key) and `FIELD0..FIELD<fields-1>`, unless it exists.
///
/// # Errors
///
/// A table name that cannot go into SQL unquoted.
pub(crate) fn create_table_sql(
    table: &str,
    fields: u64,
    field_type: FieldType,
    spelling: &TableSpelling,
) -> Result<String, String> {
    if !is_identifier(table) {
        return Err(format!(
            "the table name '{table}' cannot be put in SQL unquoted"
        ));
    }
    let column = match field_type {
        FieldType::Text => spelling.text,
        FieldType::Binary => spelling.binary,
    };
    let mut sql = format!(
        "CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY {} PRIMARY KEY",
        spelling.key
    );
    for i in 0..fields {
        let _ = write!(sql, ", FIELD{i} {column}");
    }
    sql.push(')');
    sql.push_str(spelling.options);
    Ok(sql)
}

/// Java's `String.hashCode()` of `key`.
pub fn java_hash(key: &str) -> i32 {
    key.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The shard of `key` among `shards`, as Java's `getShardIndexByKey`
/// (`Math.abs(key.hashCode()) % shards`).
pub fn shard_of(key: &str, shards: usize) -> usize {
    (i64::from(java_hash(key)).unsigned_abs() % shards as u64) as usize
}

/// PostgreSQL's gauges, in the time series' column order.
const PG_GAUGES: [&str; 5] = [
    "pg.xact_commit",
    "pg.blks_hit",
    "pg.blks_read",
    "pg.buffer_hit_ratio",
    "pg.table_bytes",
];

/// MySQL's gauges, in the time series' column order.
const MYSQL_GAUGES: [&str; 5] = [
    "mysql.buffer_pool_read_requests",
    "mysql.buffer_pool_reads",
    "mysql.buffer_pool_hit_ratio",
    "mysql.rows_read",
    "mysql.rows_written",
];

/// The status thread's connection to the first shard.
#[derive(Debug)]
enum StatsConnection {
    Postgres(Option<Box<pg::Connection>>),
    MySql(Option<Box<my::Connection>>),
}

/// The jdbc store: settings shared by the threads (each opens its own
/// connections) and the status thread's connection to the first shard.
#[derive(Debug)]
pub struct JdbcStore {
    config: Arc<JdbcConfig>,
    info: EngineInfo,
    /// On MySQL and MariaDB, the servers' `innodb_flush_log_at_trx_commit`
    /// (a server setting: the descriptor's `pg.synchronous_commit` does
    /// not apply there).
    durability: Option<DurabilitySetting>,
    stats: Mutex<StatsConnection>,
}

impl JdbcStore {
    /// Opens the store: connects to every shard once (to check that it
    /// answers and to read its version and durability settings) and, with
    /// `jdbc.createtable`, creates the table where it is missing.
    ///
    /// # Errors
    ///
    /// [`StoreError::Property`] for an invalid property; an error naming
    /// the shard's URL (never its password) and where it was set when a
    /// shard cannot be reached, refuses the login or the table.
    pub fn open(properties: &Properties) -> Result<Self, StoreError> {
        Self::with_config(JdbcConfig::from_properties(properties)?)
    }

    /// Opens the store with settings already read.
    ///
    /// # Errors
    ///
    /// As [`JdbcStore::open`].
    pub fn with_config(config: JdbcConfig) -> Result<Self, StoreError> {
        let mut versions: Vec<String> = Vec::new();
        let mut flushes: Vec<String> = Vec::new();
        let mut name = String::from("PostgreSQL");
        let mut stats = match config.dialect {
            Dialect::Postgres => StatsConnection::Postgres(None),
            Dialect::MySql => StatsConnection::MySql(None),
        };
        for shard in &config.shards {
            let open_error = |message: String| {
                StoreError::Other(format!(
                    "cannot open jdbc: {}: {message} (the server from {})",
                    shard.url, config.origin
                ))
            };
            let version = match &mut stats {
                StatsConnection::Postgres(first) => {
                    let mut conn = pg::Connection::connect(shard, &config).map_err(open_error)?;
                    if config.create_table {
                        conn.create_table(&config.table, config.field_count, config.field_type)
                            .map_err(open_error)?;
                    }
                    let version = conn.describe_server().map_err(open_error)?;
                    first.get_or_insert(Box::new(conn));
                    version
                }
                StatsConnection::MySql(first) => {
                    let mut conn = my::Connection::connect(shard, &config).map_err(open_error)?;
                    if config.create_table {
                        conn.create_table(&config.table, config.field_count, config.field_type)
                            .map_err(open_error)?;
                    }
                    let (server, version, flush) = conn.describe_server().map_err(open_error)?;
                    name = server;
                    flushes.push(flush);
                    first.get_or_insert(Box::new(conn));
                    version
                }
            };
            if !versions.contains(&version) {
                versions.push(version);
            }
        }
        // InnoDB makes a commit durable only at 1 (2 writes the log at
        // commit and flushes it once a second; 0 neither), on every shard.
        let durability = (!flushes.is_empty()).then(|| {
            DurabilitySetting::new(
                "innodb_flush_log_at_trx_commit",
                flushes.join(","),
                flushes.iter().all(|f| f.trim() == "1"),
            )
        });
        Ok(Self {
            config: Arc::new(config),
            durability,
            info: EngineInfo {
                name,
                version: versions.join("; "),
            },
            stats: Mutex::new(stats),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &JdbcConfig {
        &self.config
    }
}

impl Store for JdbcStore {
    fn thread(&self, _: ThreadContext) -> Result<Box<dyn StoreThread + '_>, StoreError> {
        Ok(match self.config.dialect {
            Dialect::Postgres => Box::new(thread::JdbcThread::<pg::Connection>::new(
                self.config.clone(),
            )),
            Dialect::MySql => Box::new(thread::JdbcThread::<my::Connection>::new(
                self.config.clone(),
            )),
        })
    }

    /// On the first shard. PostgreSQL: its database's `pg_stat_database`
    /// row (commits, blocks found in shared buffers and read, the share
    /// found since the previous sample) and the table's size with its
    /// indexes. MySQL: InnoDB's buffer pool requests and reads (the share
    /// served from the pool since the previous sample) and rows read and
    /// written.
    fn gauges(&self, out: &mut Vec<Gauge>) {
        let Ok(mut state) = self.stats.lock() else {
            return;
        };
        let shard = &self.config.shards[0];
        match &mut *state {
            StatsConnection::Postgres(slot) => {
                if slot.as_ref().is_none_or(|c| c.is_closed()) {
                    *slot = pg::Connection::connect(shard, &self.config)
                        .ok()
                        .map(Box::new);
                }
                let Some(conn) = slot.as_mut() else { return };
                let Ok(stats) = conn.stats(&self.config.table) else {
                    *slot = None;
                    return;
                };
                out.push(Gauge::count(PG_GAUGES[0], stats.xact_commit as f64));
                out.push(Gauge::count(PG_GAUGES[1], stats.blks_hit as f64));
                out.push(Gauge::count(PG_GAUGES[2], stats.blks_read as f64));
                if let Some(ratio) = stats.hit_ratio_since_last {
                    out.push(Gauge::ratio(PG_GAUGES[3], ratio));
                }
                if let Some(bytes) = stats.table_bytes {
                    out.push(Gauge::bytes(PG_GAUGES[4], bytes as f64));
                }
            }
            StatsConnection::MySql(slot) => {
                if slot.is_none() {
                    *slot = my::Connection::connect(shard, &self.config)
                        .ok()
                        .map(Box::new);
                }
                let Some(conn) = slot.as_mut() else { return };
                let Ok(stats) = conn.stats() else {
                    *slot = None;
                    return;
                };
                out.push(Gauge::count(MYSQL_GAUGES[0], stats.read_requests as f64));
                out.push(Gauge::count(MYSQL_GAUGES[1], stats.reads as f64));
                if let Some(ratio) = stats.hit_ratio_since_last {
                    out.push(Gauge::ratio(MYSQL_GAUGES[2], ratio));
                }
                out.push(Gauge::count(MYSQL_GAUGES[3], stats.rows_read as f64));
                out.push(Gauge::count(MYSQL_GAUGES[4], stats.rows_written as f64));
            }
        }
    }

    fn gauge_names(&self) -> Vec<String> {
        let names = match self.config.dialect {
            Dialect::Postgres => PG_GAUGES,
            Dialect::MySql => MYSQL_GAUGES,
        };
        names.iter().map(|g| g.to_string()).collect()
    }

    fn engine_build(&self) -> ycsb_db::EngineBuild {
        // The engine runs in the server: its build is not visible here.
        ycsb_db::EngineBuild::remote()
    }

    /// `PostgreSQL 15.8 (synchronous_commit=on, fsync=on)`: the server's
    /// version and what its commits promise, as the server reports them.
    fn engine_info(&self) -> EngineInfo {
        self.info.clone()
    }

    fn durability(&self) -> Option<DurabilitySetting> {
        self.durability.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_go_into_sql() {
        assert!(is_identifier("usertable"));
        assert!(is_identifier("FIELD0"));
        assert!(is_identifier("_x9"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("0field"));
        assert!(!is_identifier("a b"));
        assert!(!is_identifier("t; DROP TABLE x"));
        assert!(!is_identifier(&"a".repeat(64)));
    }

    #[test]
    fn javas_table_is_spelled_per_server() {
        let spelling = TableSpelling {
            key: "VARCHAR(255) COLLATE \"C\"",
            text: "TEXT",
            binary: "BYTEA",
            options: " WITH (fillfactor=100)",
        };
        assert_eq!(
            create_table_sql("usertable", 2, FieldType::Binary, &spelling).unwrap(),
            "CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY VARCHAR(255) COLLATE \"C\" \
             PRIMARY KEY, FIELD0 BYTEA, FIELD1 BYTEA) WITH (fillfactor=100)"
        );
        let e = create_table_sql("t; DROP", 1, FieldType::Text, &spelling).unwrap_err();
        assert!(e.contains("cannot be put in SQL unquoted"), "{e}");
    }

    #[test]
    fn keys_are_sharded_as_java_shards_them() {
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("ab"), 97 * 31 + 98);
        assert_eq!(shard_of("a", 3), 97 % 3);
        // A negative hash: Math.abs first.
        let negative = "user1000385";
        let h = java_hash(negative);
        assert!(h < 0, "{h}");
        assert_eq!(shard_of(negative, 7), (-(h as i64) % 7) as usize);
    }

    #[test]
    fn properties_are_read_with_go_ycsbs_names_too() {
        let p = Properties::new()
            .with("pg.host", "db")
            .with("pg.port", "6000")
            .with("pg.db", "bench")
            .with("pg.user", "u")
            .with("pg.password", "S3cr3t");
        let c = JdbcConfig::from_properties(&p).unwrap();
        assert_eq!(c.shards.len(), 1);
        assert_eq!(
            c.shards[0].url.to_string(),
            "jdbc:postgresql://db:6000/bench"
        );
        assert_eq!(c.shards[0].user, "u");
        assert_eq!(c.shards[0].password.as_ref().unwrap().expose(), "S3cr3t");
        assert!(!format!("{c:?}").contains("S3cr3t"));
        let p = Properties::new()
            .with(
                "db.url",
                "jdbc:postgresql://a:1/d?password=S3cr3t;jdbc:postgresql://b:2/d",
            )
            .with("db.user", "x")
            .with("db.passwd", "other")
            .with("db.batchsize", "100")
            .with("jdbc.autocommit", "false");
        let c = JdbcConfig::from_properties(&p).unwrap();
        assert_eq!(c.shards.len(), 2);
        assert_eq!(c.shards[0].password.as_ref().unwrap().expose(), "S3cr3t");
        assert_eq!(c.shards[1].password.as_ref().unwrap().expose(), "other");
        assert_eq!(c.batch_size, Some(100));
        assert!(!c.autocommit);
        assert!(!format!("{c:?}").contains("S3cr3t"));
    }

    #[test]
    fn bad_urls_name_the_property_and_hide_the_password() {
        for (url, why) in [
            (
                "jdbc:postgresql://h:0/d?password=S3cr3t",
                "'0' is not a port",
            ),
            (
                "jdbc:postgresql://h/d;jdbc:mysql://h/d?password=S3cr3t",
                "same kind of server",
            ),
            ("http://h/d?password=S3cr3t", "starts with jdbc:"),
            (" ; ", "at least one JDBC URL"),
        ] {
            let p = Properties::new().with("db.url", url);
            let e = JdbcConfig::from_properties(&p).unwrap_err().to_string();
            assert!(e.starts_with("db.url: invalid value"), "{e}");
            assert!(e.contains(why), "{e}");
            assert!(!e.contains("S3cr3t"), "{e}");
        }
        let p = Properties::new().with("pg.synchronous_commit", "maybe");
        let e = JdbcConfig::from_properties(&p).unwrap_err().to_string();
        assert!(e.contains("on, off, local"), "{e}");
    }
}
