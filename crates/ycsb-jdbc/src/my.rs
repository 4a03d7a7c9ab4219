//! MySQL and MariaDB: one connection per shard per client thread, its
//! prepared statements cached by their SQL text, reconnected after a
//! failure.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder, Params, Row, Statement, Value};
use ycsb_db::{batch_status, Batch, Fields, Record, ScanResult, Status, StoreError, StoreThread};

use crate::shards::{check_names, ShardConnection, Shards};
use crate::{is_identifier, FieldType, JdbcConfig, Shard};

/// An error of the client as a line: the server's message for a refused
/// statement, the cause for a connection failure.
fn describe(error: &mysql::Error) -> String {
    match error {
        mysql::Error::MySqlError(e) => format!("ERROR {} ({}): {}", e.code, e.state, e.message),
        other => other.to_string(),
    }
}

/// Whether `error` lost the connection (rather than a statement refused).
fn is_lost(error: &mysql::Error) -> bool {
    !matches!(error, mysql::Error::MySqlError(_))
}

/// What the server's status says, for the gauges.
#[derive(Debug)]
pub(crate) struct Stats {
    pub(crate) read_requests: u64,
    pub(crate) reads: u64,
    pub(crate) hit_ratio_since_last: Option<f64>,
    pub(crate) rows_read: u64,
    pub(crate) rows_written: u64,
}

/// One connection and its prepared statements.
pub(crate) struct Connection {
    conn: Conn,
    statements: HashMap<String, Statement>,
    /// Buffer pool requests and reads at the previous sample.
    last_pool: Option<(u64, u64)>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("statements", &self.statements.len())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects to `shard` over TCP (an update reports the rows it
    /// matched, as JDBC's `useAffectedRows=false` does) and, without
    /// autocommit, turns autocommit off.
    pub(crate) fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String> {
        let database = (!shard.url.database.is_empty()).then(|| shard.url.database.clone());
        let opts = OptsBuilder::new()
            .ip_or_hostname(Some(shard.url.host.clone()))
            .tcp_port(shard.url.port)
            .prefer_socket(false)
            .user(Some(shard.user.clone()))
            .pass(shard.password.as_ref().map(|p| p.expose().to_string()))
            .db_name(database)
            .tcp_connect_timeout(Some(config.connect_timeout))
            .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS);
        let mut conn = Conn::new(opts).map_err(|e| describe(&e))?;
        if !config.autocommit {
            conn.query_drop("SET autocommit=0")
                .map_err(|e| describe(&e))?;
        }
        Ok(Self {
            conn,
            statements: HashMap::new(),
            last_pool: None,
        })
    }

    /// The statement for `sql`, prepared once per connection.
    fn statement(&mut self, sql: &str) -> Result<Statement, mysql::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.conn.prep(sql)?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Java's `JdbcDBCreateTable`: the table with `YCSB_KEY` (binary
    /// collation: keys ordered bytewise) and `FIELD0..`, unless it exists.
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
            FieldType::Binary => "LONGBLOB",
        };
        let mut sql = format!(
            "CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY VARCHAR(255) CHARACTER SET utf8mb4 \
             COLLATE utf8mb4_bin PRIMARY KEY"
        );
        for i in 0..fields {
            let _ = write!(sql, ", FIELD{i} {column}");
        }
        sql.push_str(") CHARACTER SET utf8mb4");
        self.conn
            .query_drop(&sql)
            .map_err(|e| format!("cannot create table {table}: {}", describe(&e)))
    }

    /// The server's name, `MariaDB 10.11.6; innodb_flush_log_at_trx_commit=1,
    /// sync_binlog=0`, and `innodb_flush_log_at_trx_commit` alone.
    pub(crate) fn describe_server(&mut self) -> Result<(String, String, String), String> {
        let row: Option<(String, String, String, String)> = self
            .conn
            .query_first(
                "SELECT @@version, @@version_comment, CAST(@@innodb_flush_log_at_trx_commit AS CHAR), \
                 CAST(@@sync_binlog AS CHAR)",
            )
            .map_err(|e| describe(&e))?;
        let (version, comment, flush, sync) = row.unwrap_or_default();
        let name = if version.contains("MariaDB") || comment.contains("MariaDB") {
            "MariaDB"
        } else {
            "MySQL"
        };
        Ok((
            name.to_string(),
            format!("{version}; innodb_flush_log_at_trx_commit={flush}, sync_binlog={sync}"),
            flush,
        ))
    }

    /// The server's InnoDB buffer pool and row counters.
    pub(crate) fn stats(&mut self) -> Result<Stats, String> {
        let rows: Vec<(String, String)> = self
            .conn
            .query(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_read_requests', \
                 'Innodb_buffer_pool_reads', 'Innodb_rows_read', 'Innodb_rows_inserted', \
                 'Innodb_rows_updated', 'Innodb_rows_deleted', 'Rows_read', 'Handler_write', \
                 'Handler_update', 'Handler_delete')",
            )
            .map_err(|e| describe(&e))?;
        let value = |name: &str| {
            rows.iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (read_requests, reads) = (
            value("Innodb_buffer_pool_read_requests"),
            value("Innodb_buffer_pool_reads"),
        );
        let hit_ratio_since_last = match self.last_pool {
            Some((requests, misses)) if requests <= read_requests && misses <= reads => {
                let asked = read_requests - requests;
                (asked > 0).then(|| 1.0 - (reads - misses).min(asked) as f64 / asked as f64)
            }
            _ => None,
        };
        self.last_pool = Some((read_requests, reads));
        Ok(Stats {
            read_requests,
            reads,
            hit_ratio_since_last,
            // MySQL counts InnoDB's rows; MariaDB 10.6 and later keep
            // only the server's own counters.
            rows_read: value("Innodb_rows_read").max(value("Rows_read")),
            rows_written: match value("Innodb_rows_inserted")
                + value("Innodb_rows_updated")
                + value("Innodb_rows_deleted")
            {
                0 => value("Handler_write") + value("Handler_update") + value("Handler_delete"),
                innodb => innodb,
            },
        })
    }
}

impl ShardConnection for Connection {
    fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String> {
        Connection::connect(shard, config)
    }
}

/// An insert waiting for its batch (`jdbc.batchupdateapi`).
struct Queued {
    shard: usize,
    sql: String,
    params: Vec<Value>,
}

/// A client thread of the jdbc store on MySQL or MariaDB.
pub(crate) struct MyThread {
    config: Arc<JdbcConfig>,
    shards: Shards<Connection>,
    sql: String,
    queued: Vec<Queued>,
    last_error: Option<String>,
}

/// The parameters `key` and `values` (in order), as bytes.
fn params_of<'a>(
    key: Option<&str>,
    values: impl Iterator<Item = &'a [u8]>,
    key_last: Option<&str>,
) -> Vec<Value> {
    key.map(|k| Value::Bytes(k.as_bytes().to_vec()))
        .into_iter()
        .chain(values.map(|v| Value::Bytes(v.to_vec())))
        .chain(key_last.map(|k| Value::Bytes(k.as_bytes().to_vec())))
        .collect()
}

impl MyThread {
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

    fn connected(&mut self, i: usize) -> Result<&mut Connection, Status> {
        self.shards.connected(i, &mut self.last_error)
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

    /// As the PostgreSQL thread's: a lost connection is
    /// `SERVICE_UNAVAILABLE` and reconnected later; a refused statement is
    /// an `ERROR` (rolling back the open transaction without autocommit).
    fn failed(&mut self, shard: usize, error: &mysql::Error) -> Status {
        self.last_error = Some(format!(
            "{}: {}",
            self.config.shards[shard].url,
            describe(error)
        ));
        if is_lost(error) {
            self.shards.lose(shard);
            return Status::ServiceUnavailable;
        }
        if !self.config.autocommit {
            if let Some(conn) = self.shards.conn(shard) {
                let rolled_back = conn.conn.query_drop("ROLLBACK").is_ok();
                self.shards.forget_writes(shard);
                if !rolled_back {
                    self.shards.lose(shard);
                }
            }
        }
        Status::Error
    }

    fn execute<R>(
        &mut self,
        shard: usize,
        run: impl FnOnce(&mut Conn, &Statement) -> Result<R, mysql::Error>,
    ) -> Result<R, Status> {
        let sql = std::mem::take(&mut self.sql);
        let result = match self.connected(shard) {
            Ok(conn) => conn
                .statement(&sql)
                .and_then(|statement| run(&mut conn.conn, &statement)),
            Err(status) => {
                self.sql = sql;
                return Err(status);
            }
        };
        self.sql = sql;
        result.map_err(|e| self.failed(shard, &e))
    }

    fn wrote(&mut self, shard: usize) -> Status {
        if !self.shards.count_write(shard) {
            return Status::Ok;
        }
        let Some(conn) = self.shards.conn(shard) else {
            return Status::ServiceUnavailable;
        };
        match conn.conn.query_drop("COMMIT") {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(shard, &e),
        }
    }

    /// Copies the fields of `row` selected by `fields` into `out`.
    fn fill(&mut self, row: &Row, fields: Fields<'_>, out: &mut Record) -> Status {
        for (i, column) in row.columns_ref().iter().enumerate() {
            let name = column.name_str();
            if name.eq_ignore_ascii_case("ycsb_key") {
                continue;
            }
            // MySQL keeps the created columns' case (FIELD0); the fields
            // are named as PostgreSQL and the workloads name them.
            let lower = name.to_ascii_lowercase();
            let shown: &str = match fields {
                Fields::All => &lower,
                Fields::Only(names) => match names.iter().find(|n| n.eq_ignore_ascii_case(&name)) {
                    Some(n) => n.as_str(),
                    None => continue,
                },
            };
            match row.as_ref(i) {
                Some(Value::Bytes(value)) => out.push(shown, value),
                Some(Value::NULL) | None => {}
                Some(other) => {
                    out.clear();
                    self.last_error = Some(format!(
                        "column {name} holds {other:?}, not a field's text or bytes"
                    ));
                    return Status::UnexpectedState;
                }
            }
        }
        Status::Ok
    }

    fn flush(&mut self) -> Status {
        let queued = std::mem::take(&mut self.queued);
        let mut status = Status::Ok;
        let autocommit = self.config.autocommit;
        for shard in 0..self.shards.len() {
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

/// Inserts `batch` in one transaction.
fn send_batch(
    conn: &mut Connection,
    batch: &[&Queued],
    autocommit: bool,
) -> Result<(), mysql::Error> {
    if autocommit {
        conn.conn.query_drop("BEGIN")?;
    }
    for q in batch {
        let statement = conn.statement(&q.sql)?;
        conn.conn
            .exec_drop(&statement, Params::Positional(q.params.clone()))?;
    }
    conn.conn.query_drop("COMMIT")
}

impl MyThread {
    /// `INSERT INTO <table> (YCSB_KEY, <fields>) VALUES(?, ...)` into `sql`.
    fn build_insert(&mut self, table: &str, values: &Record) {
        self.sql.clear();
        let _ = write!(self.sql, "INSERT INTO {table} (YCSB_KEY");
        for field in values.iter() {
            let _ = write!(self.sql, ",{}", field.name);
        }
        self.sql.push_str(") VALUES(?");
        for _ in 0..values.len() {
            self.sql.push_str(",?");
        }
        self.sql.push(')');
    }
}

impl StoreThread for MyThread {
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
                let params = params_of(Some(key), values.iter().map(|f| f.value), None);
                self.queued.push(Queued {
                    shard,
                    sql: self.sql.clone(),
                    params,
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
        let shard = self.shards.of(key);
        self.sql.clear();
        let _ = write!(self.sql, "SELECT * FROM {table} WHERE YCSB_KEY = ?");
        match self.execute(shard, |conn, statement| {
            conn.exec_first::<Row, _, _>(statement, (key,))
        }) {
            Ok(Some(row)) => self.fill(&row, fields, out),
            Ok(None) => Status::NotFound,
            Err(status) => status,
        }
    }

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
        let shard = self.shards.of(start);
        self.sql.clear();
        let _ = write!(
            self.sql,
            "SELECT * FROM {table} WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"
        );
        let limit = u64::try_from(count).unwrap_or(u64::MAX);
        let rows = match self.execute(shard, |conn, statement| {
            conn.exec::<Row, _, _>(statement, (start, limit))
        }) {
            Ok(rows) => rows,
            Err(status) => return status,
        };
        for row in &rows {
            let key = match row.as_ref(0) {
                Some(Value::Bytes(key)) => String::from_utf8_lossy(key).into_owned(),
                other => {
                    self.last_error = Some(format!("the first column is not YCSB_KEY: {other:?}"));
                    out.clear();
                    return Status::UnexpectedState;
                }
            };
            let status = self.fill(row, fields, out.push_row(&key));
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
        let shard = self.shards.of(key);
        self.sql.clear();
        let _ = write!(self.sql, "UPDATE {table} SET ");
        for (i, field) in values.iter().enumerate() {
            let comma = if i == 0 { "" } else { ", " };
            let _ = write!(self.sql, "{comma}{}=?", field.name);
        }
        self.sql.push_str(" WHERE YCSB_KEY = ?");
        let params = params_of(None, values.iter().map(|f| f.value), Some(key));
        let updated = self.execute(shard, |conn, statement| {
            conn.exec_drop(statement, Params::Positional(params))
                .map(|()| conn.affected_rows())
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
        let shard = self.shards.of(key);
        self.build_insert(table, values);
        let params = params_of(Some(key), values.iter().map(|f| f.value), None);
        match (self.config.batch_updates, self.config.batch_size) {
            (true, Some(size)) => {
                self.queued.push(Queued {
                    shard,
                    sql: self.sql.clone(),
                    params,
                });
                if (self.queued.len() as u64) < size {
                    Status::BatchedOk
                } else {
                    self.flush()
                }
            }
            _ => match self.execute(shard, |conn, statement| {
                conn.exec_drop(statement, Params::Positional(params))
            }) {
                Ok(()) => self.wrote(shard),
                Err(status) => status,
            },
        }
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        if let Err(status) = self.check_names(table, std::iter::empty()) {
            return status;
        }
        let shard = self.shards.of(key);
        self.sql.clear();
        let _ = write!(self.sql, "DELETE FROM {table} WHERE YCSB_KEY = ?");
        match self.execute(shard, |conn, statement| {
            conn.exec_drop(statement, (key,))
                .map(|()| conn.affected_rows())
        }) {
            Ok(0) => Status::NotFound,
            Ok(_) => self.wrote(shard),
            Err(status) => status,
        }
    }

    fn cleanup(&mut self) -> Result<(), StoreError> {
        let mut failures = Vec::new();
        if !self.queued.is_empty() && self.flush() != Status::Ok {
            failures.push(self.last_error.clone().unwrap_or_default());
        }
        if !self.config.autocommit {
            for (i, mut conn) in self.shards.take_all() {
                if let Err(e) = conn.conn.query_drop("COMMIT") {
                    failures.push(format!("{}: {}", self.config.shards[i].url, describe(&e)));
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
