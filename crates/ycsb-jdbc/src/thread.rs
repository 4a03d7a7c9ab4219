//! A client thread of the jdbc store, whatever the server: Java's
//! statements built and sent to the key's shard, one connection per shard
//! (made when first used, dropped when lost and made again after a
//! backoff), the writes each has not committed (without autocommit),
//! batched inserts, the names that may go into SQL, and what a failure
//! costs. What differs between servers (placeholders, how a statement
//! runs and its rows are read, commits) is their [`Server`] connection's.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ycsb_db::{
    batch_status, Batch, Fields, ReadOp, Record, ScanOp, ScanResult, Status, StoreError,
    StoreThread,
};

use crate::{is_identifier, shard_of, JdbcConfig, Shard};

/// How long a shard that failed is left alone before the next attempt to
/// reconnect: doubling from the first to the last.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const LAST_BACKOFF: Duration = Duration::from_secs(1);

/// Why a statement failed, as the thread counts it.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The connection is lost: `SERVICE_UNAVAILABLE`, and the shard is
    /// connected again after its backoff.
    Lost(String),
    /// The server refused the statement, or a value could not be sent:
    /// `ERROR`.
    Refused(String),
    /// A row is not a record: `UNEXPECTED_STATE`.
    NotARecord(String),
}

impl Failure {
    fn message(&self) -> &str {
        match self {
            Failure::Lost(m) | Failure::Refused(m) | Failure::NotARecord(m) => m,
        }
    }
}

/// An insert waiting for its batch (`jdbc.batchupdateapi`, `batch.size`).
pub(crate) struct Queued {
    shard: usize,
    /// The insert's statement.
    pub(crate) sql: String,
    /// The key, its first parameter.
    pub(crate) key: String,
    /// The values, the next ones.
    pub(crate) values: Record,
}

impl Queued {
    /// The insert's parameters: the key, then the values.
    pub(crate) fn params(&self) -> Vec<&[u8]> {
        insert_params(&self.key, &self.values)
    }
}

fn insert_params<'a>(key: &'a str, values: &'a Record) -> Vec<&'a [u8]> {
    let mut params = Vec::with_capacity(values.len() + 1);
    params.push(key.as_bytes());
    params.extend(values.iter().map(|f| f.value));
    params
}

/// A connection to one server, as a thread uses it.
pub(crate) trait Server: Sized {
    /// Connects to `shard` with the store's settings (a transaction begun
    /// without autocommit).
    ///
    /// # Errors
    ///
    /// Why the server cannot be reached or refused the login, as a line.
    fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String>;

    /// Appends the placeholder of parameter `n` (from 1): `$n` or `?`.
    fn placeholder(sql: &mut String, n: usize);

    /// Runs `sql`, prepared once per connection, with `params`: the rows
    /// it affected (an update's: matched).
    ///
    /// # Errors
    ///
    /// Why it failed.
    fn write(&mut self, sql: &str, params: &[&[u8]]) -> Result<u64, Failure>;

    /// Runs `sql` with `key`: the row's fields selected by `fields` into
    /// `out` (fields named in lower case); whether there was a row.
    ///
    /// # Errors
    ///
    /// Why it failed.
    fn read(
        &mut self,
        sql: &str,
        key: &str,
        fields: Fields<'_>,
        out: &mut Record,
    ) -> Result<bool, Failure>;

    /// Runs `sql` with `start` and `limit`: each row's key and fields
    /// into `out`.
    ///
    /// # Errors
    ///
    /// Why it failed.
    fn scan(
        &mut self,
        sql: &str,
        start: &str,
        limit: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Result<(), Failure>;

    /// Inserts `batch` in one transaction (the one open, without
    /// autocommit, which is committed and begun again).
    ///
    /// # Errors
    ///
    /// Why it failed (nothing of the batch is committed then).
    fn insert_batch(&mut self, batch: &[&Queued], autocommit: bool) -> Result<(), Failure>;

    /// Without autocommit: commits the open transaction and begins the
    /// next.
    ///
    /// # Errors
    ///
    /// Why it failed.
    fn commit(&mut self) -> Result<(), Failure>;

    /// Without autocommit, at the thread's end: commits.
    ///
    /// # Errors
    ///
    /// Why it failed.
    fn finish(&mut self) -> Result<(), Failure>;

    /// Without autocommit, after a refused statement: rolls the open
    /// transaction back (and begins the next) when the refusal spoiled
    /// it; whether it did.
    ///
    /// # Errors
    ///
    /// The rollback failed: the connection is dropped.
    fn recover(&mut self) -> Result<bool, Failure>;

    /// Whether the connection is closed.
    fn is_closed(&self) -> bool;
}

/// One shard as a thread sees it.
struct Node<C> {
    conn: Option<C>,
    /// When the next reconnect may be tried (while `conn` is `None`).
    retry_at: Instant,
    backoff: Duration,
    /// Writes done since the last commit (without autocommit).
    uncommitted: u64,
}

/// A thread's connections, one per shard.
struct Shards<C> {
    config: Arc<JdbcConfig>,
    nodes: Vec<Node<C>>,
}

impl<C: Server> Shards<C> {
    /// No connection yet: each shard is connected when first used.
    fn new(config: Arc<JdbcConfig>) -> Self {
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
        Self { config, nodes }
    }

    /// How many shards.
    fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The shard of `key`, as Java shards keys.
    fn of(&self, key: &str) -> usize {
        shard_of(key, self.nodes.len())
    }

    /// Shard `i`'s connection, made if its backoff has passed; while it
    /// has not, or when the attempt fails (why, in `last_error`),
    /// `SERVICE_UNAVAILABLE`.
    fn connected(&mut self, i: usize, last_error: &mut Option<String>) -> Result<&mut C, Status> {
        let node = &mut self.nodes[i];
        if node.conn.is_none() {
            if Instant::now() < node.retry_at {
                return Err(Status::ServiceUnavailable);
            }
            match C::connect(&self.config.shards[i], &self.config) {
                Ok(conn) => {
                    node.backoff = FIRST_BACKOFF;
                    node.uncommitted = 0;
                    node.conn = Some(conn);
                }
                Err(e) => {
                    node.retry_at = Instant::now() + node.backoff;
                    node.backoff = (node.backoff * 2).min(LAST_BACKOFF);
                    *last_error = Some(format!(
                        "cannot connect to {}: {e}",
                        self.config.shards[i].url
                    ));
                    return Err(Status::ServiceUnavailable);
                }
            }
        }
        node.conn.as_mut().ok_or(Status::ServiceUnavailable)
    }

    /// Shard `i`'s connection if it has one.
    fn conn(&mut self, i: usize) -> Option<&mut C> {
        self.nodes[i].conn.as_mut()
    }

    /// Drops shard `i`'s connection (lost): the next attempt waits for
    /// the backoff, which doubles.
    fn lose(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        node.conn = None;
        node.retry_at = Instant::now() + node.backoff;
        node.backoff = (node.backoff * 2).min(LAST_BACKOFF);
    }

    /// Counts a write on shard `i`: whether it must commit now (without
    /// autocommit, after every write, or every `db.batchsize` writes).
    fn count_write(&mut self, i: usize) -> bool {
        if self.config.autocommit {
            return false;
        }
        let every = self.config.batch_size.unwrap_or(1);
        let node = &mut self.nodes[i];
        node.uncommitted += 1;
        if node.uncommitted < every {
            return false;
        }
        node.uncommitted = 0;
        true
    }

    /// Forgets shard `i`'s uncommitted writes (rolled back).
    fn forget_writes(&mut self, i: usize) {
        self.nodes[i].uncommitted = 0;
    }

    /// Takes every shard's connection, with its shard's number (the
    /// thread's end).
    fn take_all(&mut self) -> Vec<(usize, C)> {
        self.nodes
            .iter_mut()
            .enumerate()
            .filter_map(|(i, node)| node.conn.take().map(|c| (i, c)))
            .collect()
    }
}

/// Checks the table's and the fields' names, which go into SQL unquoted:
/// why one cannot, as a line.
fn check_names<'a>(table: &str, mut fields: impl Iterator<Item = &'a str>) -> Result<(), String> {
    let bad = if !is_identifier(table) {
        Some(format!("the table name '{table}'"))
    } else {
        fields
            .find(|f| !is_identifier(f))
            .map(|f| format!("the field name '{f}'"))
    };
    match bad {
        Some(what) => Err(format!(
            "{what} cannot be put in SQL unquoted (letters, digits and _)"
        )),
        None => Ok(()),
    }
}

/// A client thread of the jdbc store on the servers `S` connects to.
pub(crate) struct JdbcThread<S> {
    config: Arc<JdbcConfig>,
    shards: Shards<S>,
    sql: String,
    queued: Vec<Queued>,
    last_error: Option<String>,
}

impl<S: Server> JdbcThread<S> {
    /// A thread; each shard is connected when first used.
    pub(crate) fn new(config: Arc<JdbcConfig>) -> Self {
        Self {
            shards: Shards::new(config.clone()),
            config,
            sql: String::with_capacity(256),
            queued: Vec::new(),
            last_error: None,
        }
    }

    /// Checks the names that go into SQL unquoted (a refusal is `ERROR`).
    fn check_names<'a>(
        &mut self,
        table: &str,
        fields: impl Iterator<Item = &'a str>,
    ) -> Result<(), Status> {
        check_names(table, fields).map_err(|why| {
            self.last_error = Some(why);
            Status::Error
        })
    }

    /// What a failed statement costs: a lost connection is dropped (and
    /// retried after the backoff) and reported `SERVICE_UNAVAILABLE`; a
    /// statement the server refused is an `ERROR` (without autocommit, a
    /// transaction it spoiled is rolled back and begun again); a row that
    /// is not a record `UNEXPECTED_STATE`.
    fn failed(&mut self, shard: usize, failure: &Failure) -> Status {
        self.last_error = Some(format!(
            "{}: {}",
            self.config.shards[shard].url,
            failure.message()
        ));
        let lost = matches!(failure, Failure::Lost(_))
            || self.shards.conn(shard).is_none_or(|c| c.is_closed());
        if lost {
            self.shards.lose(shard);
            return Status::ServiceUnavailable;
        }
        if !self.config.autocommit {
            if let Some(conn) = self.shards.conn(shard) {
                match conn.recover() {
                    Ok(true) => self.shards.forget_writes(shard),
                    Ok(false) => {}
                    Err(_) => self.shards.lose(shard),
                }
            }
        }
        match failure {
            Failure::NotARecord(_) => Status::UnexpectedState,
            _ => Status::Error,
        }
    }

    /// Runs `run` with shard `shard`'s connection and the statement in
    /// `self.sql`.
    fn execute<R>(
        &mut self,
        shard: usize,
        run: impl FnOnce(&mut S, &str) -> Result<R, Failure>,
    ) -> Result<R, Status> {
        let result = match self.shards.connected(shard, &mut self.last_error) {
            Ok(conn) => run(conn, &self.sql),
            Err(status) => return Err(status),
        };
        result.map_err(|e| self.failed(shard, &e))
    }

    /// Without autocommit: commits shard `shard` after a write, or every
    /// `db.batchsize` writes.
    fn wrote(&mut self, shard: usize) -> Status {
        if !self.shards.count_write(shard) {
            return Status::Ok;
        }
        let Some(conn) = self.shards.conn(shard) else {
            return Status::ServiceUnavailable;
        };
        match conn.commit() {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(shard, &e),
        }
    }

    /// `INSERT INTO <table> (YCSB_KEY, <fields>) VALUES(<placeholders>)`.
    fn build_insert(&mut self, table: &str, values: &Record) {
        self.sql.clear();
        let _ = write!(self.sql, "INSERT INTO {table} (YCSB_KEY");
        for field in values.iter() {
            let _ = write!(self.sql, ",{}", field.name);
        }
        self.sql.push_str(") VALUES(");
        for i in 0..=values.len() {
            if i > 0 {
                self.sql.push(',');
            }
            S::placeholder(&mut self.sql, i + 1);
        }
        self.sql.push(')');
    }

    fn queue(&mut self, shard: usize, key: &str, values: &Record) {
        self.queued.push(Queued {
            shard,
            sql: self.sql.clone(),
            key: key.to_string(),
            values: values.clone(),
        });
    }

    /// Sends the queued inserts, each shard's in one transaction.
    fn flush(&mut self) -> Status {
        let queued = std::mem::take(&mut self.queued);
        let mut status = Status::Ok;
        let autocommit = self.config.autocommit;
        for shard in 0..self.shards.len() {
            let mine: Vec<&Queued> = queued.iter().filter(|q| q.shard == shard).collect();
            if mine.is_empty() {
                continue;
            }
            let result = match self.shards.connected(shard, &mut self.last_error) {
                Ok(conn) => conn.insert_batch(&mine, autocommit),
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

impl<S: Server> StoreThread for JdbcThread<S> {
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
                let shard = self.shards.of(key);
                self.build_insert(table, values);
                self.queue(shard, key, values);
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

    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        out.clear();
        if let Err(status) = self.check_names(op.table, std::iter::empty()) {
            return status;
        }
        let shard = self.shards.of(op.key);
        self.sql.clear();
        let _ = write!(self.sql, "SELECT * FROM {} WHERE YCSB_KEY = ", op.table);
        S::placeholder(&mut self.sql, 1);
        match self.execute(shard, |conn, sql| conn.read(sql, op.key, op.fields, out)) {
            Ok(true) => Status::Ok,
            Ok(false) => Status::NotFound,
            Err(status) => {
                out.clear();
                status
            }
        }
    }

    /// Java's range query on the start key's shard.
    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        out.clear();
        if let Err(status) = self.check_names(op.table, std::iter::empty()) {
            return status;
        }
        let shard = self.shards.of(op.start_key);
        self.sql.clear();
        let _ = write!(self.sql, "SELECT * FROM {} WHERE YCSB_KEY >= ", op.table);
        S::placeholder(&mut self.sql, 1);
        self.sql.push_str(" ORDER BY YCSB_KEY LIMIT ");
        S::placeholder(&mut self.sql, 2);
        match self.execute(shard, |conn, sql| {
            conn.scan(sql, op.start_key, op.count, op.fields, out)
        }) {
            Ok(()) => Status::Ok,
            Err(status) => {
                out.clear();
                status
            }
        }
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Err(status) = self.check_names(table, values.iter().map(|f| f.name)) {
            return status;
        }
        if values.is_empty() {
            return Status::Ok;
        }
        let shard = self.shards.of(key);
        self.sql.clear();
        let _ = write!(self.sql, "UPDATE {table} SET ");
        for (i, field) in values.iter().enumerate() {
            let comma = if i == 0 { "" } else { ", " };
            let _ = write!(self.sql, "{comma}{}=", field.name);
            S::placeholder(&mut self.sql, i + 1);
        }
        self.sql.push_str(" WHERE YCSB_KEY = ");
        S::placeholder(&mut self.sql, values.len() + 1);
        let mut params: Vec<&[u8]> = Vec::with_capacity(values.len() + 1);
        params.extend(values.iter().map(|f| f.value));
        params.push(key.as_bytes());
        match self.execute(shard, |conn, sql| conn.write(sql, &params)) {
            Ok(0) => Status::NotFound,
            Ok(_) => self.wrote(shard),
            Err(status) => status,
        }
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Err(status) = self.check_names(table, values.iter().map(|f| f.name)) {
            return status;
        }
        let shard = self.shards.of(key);
        self.build_insert(table, values);
        match (self.config.batch_updates, self.config.batch_size) {
            (true, Some(size)) => {
                self.queue(shard, key, values);
                if (self.queued.len() as u64) < size {
                    Status::BatchedOk
                } else {
                    self.flush()
                }
            }
            _ => {
                let params = insert_params(key, values);
                match self.execute(shard, |conn, sql| conn.write(sql, &params)) {
                    Ok(_) => self.wrote(shard),
                    Err(status) => status,
                }
            }
        }
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        if let Err(status) = self.check_names(table, std::iter::empty()) {
            return status;
        }
        let shard = self.shards.of(key);
        self.sql.clear();
        let _ = write!(self.sql, "DELETE FROM {table} WHERE YCSB_KEY = ");
        S::placeholder(&mut self.sql, 1);
        match self.execute(shard, |conn, sql| conn.write(sql, &[key.as_bytes()])) {
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
            for (i, mut conn) in self.shards.take_all() {
                if let Err(e) = conn.finish() {
                    failures.push(format!("{}: {}", self.config.shards[i].url, e.message()));
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
