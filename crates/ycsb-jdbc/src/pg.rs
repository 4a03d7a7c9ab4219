//! PostgreSQL: one connection per shard per client thread, its prepared
//! statements cached by their SQL text, reconnected after a failure.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use postgres::{Client, NoTls, Row, Statement};
use ycsb_db::{batch_status, Batch, Fields, Record, ScanResult, Status, StoreError, StoreThread};

use crate::{is_identifier, shard_of, FieldType, JdbcConfig, Shard};

/// How long a shard that failed is left alone before the next attempt to
/// reconnect: doubling from the first to the last.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const LAST_BACKOFF: Duration = Duration::from_secs(1);

type BoxError = Box<dyn StdError + Sync + Send>;

/// Whether a column of type `ty` holds a field: text or bytes.
fn holds_a_field(ty: &Type) -> bool {
    [
        Type::TEXT,
        Type::VARCHAR,
        Type::BPCHAR,
        Type::NAME,
        Type::BYTEA,
    ]
    .contains(ty)
}

/// A field's value as a statement parameter: bytes for a `BYTEA` column,
/// UTF-8 text for a text column (refused when it is not).
#[derive(Debug)]
struct Value<'a>(&'a [u8]);

impl ToSql for Value<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        if *ty != Type::BYTEA {
            if std::str::from_utf8(self.0).is_err() {
                return Err(
                    "the value is not UTF-8 text, which a text column cannot hold \
                     (jdbc.fieldtype=binary makes BYTEA columns)"
                        .into(),
                );
            }
            if self.0.contains(&0) {
                return Err(
                    "the value holds a NUL byte, which a text column cannot hold \
                     (jdbc.fieldtype=binary makes BYTEA columns)"
                        .into(),
                );
            }
        }
        out.extend_from_slice(self.0);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        holds_a_field(ty)
    }

    to_sql_checked!();
}

/// A column's value as bytes: the binary form of text and of `BYTEA` is
/// the bytes themselves.
struct Raw<'a>(&'a [u8]);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Raw(raw))
    }

    fn accepts(ty: &Type) -> bool {
        holds_a_field(ty)
    }
}

/// What the server's statistics say, for the gauges.
#[derive(Debug)]
pub(crate) struct Stats {
    pub(crate) xact_commit: i64,
    pub(crate) blks_hit: i64,
    pub(crate) blks_read: i64,
    pub(crate) hit_ratio_since_last: Option<f64>,
    pub(crate) table_bytes: Option<i64>,
}

/// One connection and its prepared statements.
pub(crate) struct Connection {
    client: Client,
    /// Whether a transaction is kept open (no autocommit).
    in_transaction: bool,
    statements: HashMap<String, Statement>,
    /// Blocks hit and read at the previous statistics sample.
    last_blocks: Option<(i64, i64)>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("statements", &self.statements.len())
            .finish_non_exhaustive()
    }
}

/// An error of the client as a line: the server's message for a refused
/// statement, the cause for a connection failure.
fn describe(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => match error.source() {
            Some(cause) => format!("{error}: {cause}"),
            None => error.to_string(),
        },
    }
}

impl Connection {
    /// Connects to `shard`, with the session's `synchronous_commit` set
    /// and, without autocommit, a transaction begun.
    pub(crate) fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String> {
        let mut pg = postgres::Config::new();
        pg.host(&shard.url.host)
            .port(shard.url.port)
            .user(&shard.user)
            .application_name("ycsb-rs")
            .connect_timeout(config.connect_timeout)
            .options(&format!(
                "-c synchronous_commit={}",
                config.synchronous_commit
            ));
        if !shard.url.database.is_empty() {
            pg.dbname(&shard.url.database);
        }
        if let Some(password) = &shard.password {
            pg.password(password.expose());
        }
        let mut client = pg.connect(NoTls).map_err(|e| describe(&e))?;
        if !config.autocommit {
            client.batch_execute("BEGIN").map_err(|e| describe(&e))?;
        }
        Ok(Self {
            client,
            in_transaction: !config.autocommit,
            statements: HashMap::new(),
            last_blocks: None,
        })
    }

    /// Whether the server closed the connection.
    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// The statement for `sql`, prepared once per connection.
    fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql)?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Java's `JdbcDBCreateTable`: the table with `YCSB_KEY` and
    /// `FIELD0..FIELD<fields-1>`, unless it exists.
    pub(crate) fn create_table(
        &mut self,
        table: &str,
        fields: u64,
        field_type: FieldType,
    ) -> Result<(), String> {
        if !is_identifier(table) {
            return Err(format!(
                "the table name '{table}' cannot be put in SQL unquoted"
            ));
        }
        let column = match field_type {
            FieldType::Text => "TEXT",
            FieldType::Binary => "BYTEA",
        };
        let mut sql = format!(
            "CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY VARCHAR(255) COLLATE \"C\" PRIMARY KEY"
        );
        for i in 0..fields {
            let _ = write!(sql, ", FIELD{i} {column}");
        }
        sql.push(')');
        self.client
            .batch_execute(&sql)
            .map_err(|e| format!("cannot create table {table}: {}", describe(&e)))?;
        if self.in_transaction {
            self.client
                .batch_execute("COMMIT; BEGIN")
                .map_err(|e| describe(&e))?;
        }
        Ok(())
    }

    /// `15.8 (Debian 15.8-1); synchronous_commit=on, fsync=on`.
    pub(crate) fn describe_server(&mut self) -> Result<String, String> {
        let row = self
            .client
            .query_one(
                "SELECT current_setting('server_version'), current_setting('synchronous_commit'), \
                 current_setting('fsync')",
                &[],
            )
            .map_err(|e| describe(&e))?;
        let text = |i: usize| row.try_get::<_, String>(i).unwrap_or_default();
        Ok(format!(
            "{}; synchronous_commit={}, fsync={}",
            text(0),
            text(1),
            text(2)
        ))
    }

    /// The database's commits and block counts, and `table`'s size.
    pub(crate) fn stats(&mut self, table: &str) -> Result<Stats, String> {
        // A session keeps the statistics it read (stats_fetch_consistency):
        // each sample must see the server's current ones.
        self.client
            .batch_execute("SELECT pg_stat_clear_snapshot()")
            .map_err(|e| describe(&e))?;
        let row = self
            .client
            .query_one(
                "SELECT xact_commit, blks_hit, blks_read, pg_total_relation_size(to_regclass($1)) \
                 FROM pg_stat_database WHERE datname = current_database()",
                &[&table],
            )
            .map_err(|e| describe(&e))?;
        let number = |i: usize| row.try_get::<_, Option<i64>>(i).ok().flatten();
        let (xact_commit, blks_hit, blks_read) = (
            number(0).unwrap_or(0),
            number(1).unwrap_or(0),
            number(2).unwrap_or(0),
        );
        let hit_ratio_since_last = match self.last_blocks {
            Some((hit, read)) if hit <= blks_hit && read <= blks_read => {
                let (hits, reads) = (blks_hit - hit, blks_read - read);
                (hits + reads > 0).then(|| hits as f64 / (hits + reads) as f64)
            }
            _ => None,
        };
        self.last_blocks = Some((blks_hit, blks_read));
        Ok(Stats {
            xact_commit,
            blks_hit,
            blks_read,
            hit_ratio_since_last,
            table_bytes: number(3),
        })
    }
}

/// One shard as a thread sees it.
struct Node {
    conn: Option<Connection>,
    /// When the next reconnect may be tried (while `conn` is `None`).
    retry_at: Instant,
    backoff: Duration,
    /// Writes done since the last commit (without autocommit).
    uncommitted: u64,
}

/// An insert waiting for its batch (`jdbc.batchupdateapi`).
struct Queued {
    shard: usize,
    sql: String,
    key: String,
    values: Record,
}

/// A client thread of the jdbc store on PostgreSQL.
pub(crate) struct PgThread {
    config: Arc<JdbcConfig>,
    nodes: Vec<Node>,
    sql: String,
    queued: Vec<Queued>,
    last_error: Option<String>,
}

impl PgThread {
    /// A thread; each shard is connected when first used.
    pub(crate) fn new(config: Arc<JdbcConfig>) -> Self {
        let now = Instant::now();
        let nodes = config
            .shards
            .iter()
            .map(|_| Node {
                conn: None,
                retry_at: now,
                backoff: FIRST_BACKOFF,
                uncommitted: 0,
            })
            .collect();
        Self {
            config,
            nodes,
            sql: String::with_capacity(256),
            queued: Vec::new(),
            last_error: None,
        }
    }

    /// Shard `i`'s connection, made if its backoff has passed.
    fn connected(&mut self, i: usize) -> Result<&mut Connection, Status> {
        let node = &mut self.nodes[i];
        if node.conn.is_none() {
            if Instant::now() < node.retry_at {
                return Err(Status::ServiceUnavailable);
            }
            match Connection::connect(&self.config.shards[i], &self.config) {
                Ok(conn) => {
                    node.conn = Some(conn);
                    node.backoff = FIRST_BACKOFF;
                    node.uncommitted = 0;
                }
                Err(e) => {
                    node.retry_at = Instant::now() + node.backoff;
                    node.backoff = (node.backoff * 2).min(LAST_BACKOFF);
                    self.last_error = Some(format!(
                        "cannot connect to {}: {e}",
                        self.config.shards[i].url
                    ));
                    return Err(Status::ServiceUnavailable);
                }
            }
        }
        Ok(node.conn.as_mut().expect("connected above"))
    }

    /// What a failed statement costs: a lost connection is dropped (and
    /// retried after the backoff) and reported `SERVICE_UNAVAILABLE`; a
    /// statement the server refused is an `ERROR` (and, without
    /// autocommit, rolls back the transaction, which begins again).
    fn failed(&mut self, shard: usize, error: &postgres::Error) -> Status {
        self.last_error = Some(format!(
            "{}: {}",
            self.config.shards[shard].url,
            describe(error)
        ));
        let node = &mut self.nodes[shard];
        // A value the client could not encode is no lost connection.
        let lost = error.is_closed()
            || error
                .source()
                .is_some_and(|cause| cause.is::<std::io::Error>())
            || node.conn.as_ref().is_none_or(Connection::is_closed);
        if lost {
            node.conn = None;
            node.retry_at = Instant::now() + node.backoff;
            node.backoff = (node.backoff * 2).min(LAST_BACKOFF);
            return Status::ServiceUnavailable;
        }
        if !self.config.autocommit {
            if let Some(conn) = node.conn.as_mut() {
                node.uncommitted = 0;
                if conn.client.batch_execute("ROLLBACK; BEGIN").is_err() {
                    node.conn = None;
                }
            }
        }
        Status::Error
    }

    /// Runs the statement in `self.sql` on `shard` with `run`.
    fn execute<R>(
        &mut self,
        shard: usize,
        run: impl FnOnce(&mut Client, &Statement) -> Result<R, postgres::Error>,
    ) -> Result<R, Status> {
        let sql = std::mem::take(&mut self.sql);
        let result = match self.connected(shard) {
            Ok(conn) => conn
                .statement(&sql)
                .and_then(|statement| run(&mut conn.client, &statement)),
            Err(status) => {
                self.sql = sql;
                return Err(status);
            }
        };
        self.sql = sql;
        result.map_err(|e| self.failed(shard, &e))
    }

    /// Without autocommit: commits shard `shard` after a write, or every
    /// `db.batchsize` writes.
    fn wrote(&mut self, shard: usize) -> Status {
        if self.config.autocommit {
            return Status::Ok;
        }
        let every = self.config.batch_size.unwrap_or(1);
        let node = &mut self.nodes[shard];
        node.uncommitted += 1;
        if node.uncommitted < every {
            return Status::Ok;
        }
        node.uncommitted = 0;
        let Some(conn) = node.conn.as_mut() else {
            return Status::ServiceUnavailable;
        };
        match conn.client.batch_execute("COMMIT; BEGIN") {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(shard, &e),
        }
    }

    /// Checks the table's and the fields' names, which go into SQL
    /// unquoted.
    fn check_names<'a>(
        &mut self,
        table: &str,
        mut fields: impl Iterator<Item = &'a str>,
    ) -> Result<(), Status> {
        let bad = if !is_identifier(table) {
            Some(format!("the table name '{table}'"))
        } else {
            fields
                .find(|f| !is_identifier(f))
                .map(|f| format!("the field name '{f}'"))
        };
        match bad {
            Some(what) => {
                self.last_error = Some(format!(
                    "{what} cannot be put in SQL unquoted (letters, digits and _)"
                ));
                Err(Status::Error)
            }
            None => Ok(()),
        }
    }

    /// Copies the fields of `row` selected by `fields` into `out`.
    fn fill(&mut self, row: &Row, fields: Fields<'_>, out: &mut Record) -> Status {
        for (i, column) in row.columns().iter().enumerate() {
            let name = column.name();
            if name.eq_ignore_ascii_case("ycsb_key") {
                continue;
            }
            let shown = match fields {
                Fields::All => name,
                Fields::Only(names) => match names.iter().find(|n| n.eq_ignore_ascii_case(name)) {
                    Some(n) => n.as_str(),
                    None => continue,
                },
            };
            match row.try_get::<_, Option<Raw<'_>>>(i) {
                Ok(Some(Raw(value))) => out.push(shown, value),
                Ok(None) => {}
                Err(e) => {
                    out.clear();
                    self.last_error = Some(format!(
                        "column {name} of type {} is not a field: {e}",
                        column.type_()
                    ));
                    return Status::UnexpectedState;
                }
            }
        }
        Status::Ok
    }

    fn build_insert(&mut self, table: &str, values: &Record) {
        self.sql.clear();
        let _ = write!(self.sql, "INSERT INTO {table} (YCSB_KEY");
        for field in values.iter() {
            let _ = write!(self.sql, ",{}", field.name);
        }
        self.sql.push_str(") VALUES($1");
        for i in 0..values.len() {
            let _ = write!(self.sql, ",${}", i + 2);
        }
        self.sql.push(')');
    }

    fn insert_now(&mut self, shard: usize, key: &str, values: &Record) -> Status {
        let mut params: Vec<Value<'_>> = Vec::with_capacity(values.len());
        params.extend(values.iter().map(|f| Value(f.value)));
        let inserted = self.execute(shard, |client, statement| {
            let mut all: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(params.len() + 1);
            all.push(&key);
            all.extend(params.iter().map(|p| p as &(dyn ToSql + Sync)));
            client.execute(statement, &all)
        });
        match inserted {
            Ok(_) => self.wrote(shard),
            Err(status) => status,
        }
    }

    /// Sends the queued inserts, each shard's in one transaction.
    fn flush(&mut self) -> Status {
        let queued = std::mem::take(&mut self.queued);
        let mut status = Status::Ok;
        let autocommit = self.config.autocommit;
        for shard in 0..self.nodes.len() {
            let mine: Vec<&Queued> = queued.iter().filter(|q| q.shard == shard).collect();
            if mine.is_empty() {
                continue;
            }
            let result = match self.connected(shard) {
                Ok(conn) => send_batch(conn, &mine, autocommit),
                Err(s) => {
                    status = s;
                    continue;
                }
            };
            if let Err(e) = result {
                status = self.failed(shard, &e);
            }
        }
        status
    }
}

/// Inserts `batch` in one transaction (the one open, without autocommit).
fn send_batch(
    conn: &mut Connection,
    batch: &[&Queued],
    autocommit: bool,
) -> Result<(), postgres::Error> {
    if autocommit {
        conn.client.batch_execute("BEGIN")?;
    }
    for q in batch {
        let statement = conn.statement(&q.sql)?;
        let params: Vec<Value<'_>> = q.values.iter().map(|f| Value(f.value)).collect();
        let mut all: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(params.len() + 1);
        all.push(&q.key);
        all.extend(params.iter().map(|p| p as &(dyn ToSql + Sync)));
        conn.client.execute(&statement, &all)?;
    }
    conn.client.batch_execute(if autocommit {
        "COMMIT"
    } else {
        "COMMIT; BEGIN"
    })
}

impl StoreThread for PgThread {
    /// A batch of inserts (`batch.size`): each shard's records in one
    /// transaction, as `db.batchsize` sends Java's batches (one statement
    /// per record, one commit); inserts `db.batchsize` still holds go first.
    /// A failure fails the records of the call.
    fn insert_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        let mut status = if self.queued.is_empty() {
            Status::Ok
        } else {
            self.flush()
        };
        if status.is_ok() {
            for (key, values) in batch.iter() {
                if let Err(s) = self.check_names(table, values.iter().map(|f| f.name)) {
                    status = s;
                    break;
                }
                let shard = shard_of(key, self.nodes.len());
                self.build_insert(table, values);
                self.queued.push(Queued {
                    shard,
                    sql: self.sql.clone(),
                    key: key.to_string(),
                    values: values.clone(),
                });
            }
        }
        status = if status.is_ok() {
            self.flush()
        } else {
            self.queued.clear();
            status
        };
        let statuses = &mut statuses[..batch.len()];
        statuses.fill(status);
        batch_status(statuses)
    }

    fn read(&mut self, table: &str, key: &str, fields: Fields<'_>, out: &mut Record) -> Status {
        out.clear();
        if let Err(status) = self.check_names(table, std::iter::empty()) {
            return status;
        }
        let shard = shard_of(key, self.nodes.len());
        self.sql.clear();
        let _ = write!(self.sql, "SELECT * FROM {table} WHERE YCSB_KEY = $1");
        match self.execute(shard, |client, statement| {
            client.query_opt(statement, &[&key])
        }) {
            Ok(Some(row)) => self.fill(&row, fields, out),
            Ok(None) => Status::NotFound,
            Err(status) => status,
        }
    }

    /// Java's range query on the start key's shard.
    fn scan(
        &mut self,
        table: &str,
        start: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Status {
        out.clear();
        if let Err(status) = self.check_names(table, std::iter::empty()) {
            return status;
        }
        let shard = shard_of(start, self.nodes.len());
        self.sql.clear();
        let _ = write!(
            self.sql,
            "SELECT * FROM {table} WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
        );
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        let rows = match self.execute(shard, |client, statement| {
            client.query(statement, &[&start, &limit])
        }) {
            Ok(rows) => rows,
            Err(status) => return status,
        };
        for row in &rows {
            let key: &str = match row.try_get(0) {
                Ok(key) => key,
                Err(e) => {
                    self.last_error = Some(format!("the first column is not YCSB_KEY: {e}"));
                    out.clear();
                    return Status::UnexpectedState;
                }
            };
            let status = self.fill(row, fields, out.push_row(key));
            if status != Status::Ok {
                out.clear();
                return status;
            }
        }
        Status::Ok
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Err(status) = self.check_names(table, values.iter().map(|f| f.name)) {
            return status;
        }
        if values.is_empty() {
            return Status::Ok;
        }
        let shard = shard_of(key, self.nodes.len());
        self.sql.clear();
        let _ = write!(self.sql, "UPDATE {table} SET ");
        for (i, field) in values.iter().enumerate() {
            let comma = if i == 0 { "" } else { ", " };
            let _ = write!(self.sql, "{comma}{}=${}", field.name, i + 1);
        }
        let _ = write!(self.sql, " WHERE YCSB_KEY = ${}", values.len() + 1);
        let params: Vec<Value<'_>> = values.iter().map(|f| Value(f.value)).collect();
        let updated = self.execute(shard, |client, statement| {
            let mut all: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(params.len() + 1);
            all.extend(params.iter().map(|p| p as &(dyn ToSql + Sync)));
            all.push(&key);
            client.execute(statement, &all)
        });
        match updated {
            Ok(0) => Status::NotFound,
            Ok(_) => self.wrote(shard),
            Err(status) => status,
        }
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Err(status) = self.check_names(table, values.iter().map(|f| f.name)) {
            return status;
        }
        let shard = shard_of(key, self.nodes.len());
        self.build_insert(table, values);
        match (self.config.batch_updates, self.config.batch_size) {
            (true, Some(size)) => {
                self.queued.push(Queued {
                    shard,
                    sql: self.sql.clone(),
                    key: key.to_string(),
                    values: values.clone(),
                });
                if (self.queued.len() as u64) < size {
                    Status::BatchedOk
                } else {
                    self.flush()
                }
            }
            _ => self.insert_now(shard, key, values),
        }
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        if let Err(status) = self.check_names(table, std::iter::empty()) {
            return status;
        }
        let shard = shard_of(key, self.nodes.len());
        self.sql.clear();
        let _ = write!(self.sql, "DELETE FROM {table} WHERE YCSB_KEY = $1");
        match self.execute(shard, |client, statement| {
            client.execute(statement, &[&key])
        }) {
            Ok(0) => Status::NotFound,
            Ok(_) => self.wrote(shard),
            Err(status) => status,
        }
    }

    /// Sends the inserts still queued and, without autocommit, commits
    /// every shard.
    fn cleanup(&mut self) -> Result<(), StoreError> {
        let mut failures = Vec::new();
        if !self.queued.is_empty() && self.flush() != Status::Ok {
            failures.push(self.last_error.clone().unwrap_or_default());
        }
        if !self.config.autocommit {
            for (i, node) in self.nodes.iter_mut().enumerate() {
                if let Some(conn) = node.conn.as_mut() {
                    if let Err(e) = conn.client.batch_execute("COMMIT") {
                        failures.push(format!("{}: {}", self.config.shards[i].url, describe(&e)));
                    }
                    node.conn = None;
                }
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(StoreError::Other(format!(
                "jdbc: writes not committed ({})",
                failures.join("; ")
            )))
        }
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}
