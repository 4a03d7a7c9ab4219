//! PostgreSQL: one connection per shard per client thread, its prepared
//! statements cached by their SQL text, reconnected after a failure.

use std::fmt::Write as _;
use std::sync::Arc;

use ycsb_db::{batch_status, Batch, Fields, Record, ScanResult, Status, StoreError, StoreThread};

use crate::pgwire::{self, oid, Column, Login, Param, Row, Session, WireError};
use crate::shards::{check_names, ShardConnection, Shards};
use crate::{is_identifier, FieldType, JdbcConfig, Shard};

/// Whether a column of type `ty` holds a field: text or bytes (the binary
/// form of both is the bytes themselves).
fn holds_a_field(ty: pgwire::Oid) -> bool {
    ty == oid::BYTEA || pgwire::is_text(ty)
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
    session: Session,
    /// Whether a transaction is kept open (no autocommit).
    in_transaction: bool,
    /// Blocks hit and read at the previous statistics sample.
    last_blocks: Option<(i64, i64)>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// A bigint in its binary form.
fn int8(value: Option<&[u8]>) -> Option<i64> {
    Some(i64::from_be_bytes(value?.try_into().ok()?))
}

impl Connection {
    /// Connects to `shard`, with the session's `synchronous_commit` set
    /// and, without autocommit, a transaction begun.
    pub(crate) fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String> {
        let options = format!("-c synchronous_commit={}", config.synchronous_commit);
        let login = Login {
            host: &shard.url.host,
            port: shard.url.port,
            user: &shard.user,
            password: shard.password.as_ref().map(|p| p.expose()),
            database: &shard.url.database,
            parameters: &[("application_name", "ycsb-rs"), ("options", &options)],
            timeout: config.connect_timeout,
        };
        let mut session = Session::connect(&login).map_err(|e| e.to_string())?;
        if !config.autocommit {
            session.batch_execute("BEGIN").map_err(|e| e.to_string())?;
        }
        Ok(Self {
            session,
            in_transaction: !config.autocommit,
            last_blocks: None,
        })
    }

    /// Whether the connection is lost.
    pub(crate) fn is_closed(&self) -> bool {
        self.session.is_closed()
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
        self.session
            .batch_execute(&sql)
            .map_err(|e| format!("cannot create table {table}: {e}"))?;
        if self.in_transaction {
            self.session
                .batch_execute("COMMIT; BEGIN")
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// `15.8 (Debian 15.8-1); synchronous_commit=on, fsync=on`.
    pub(crate) fn describe_server(&mut self) -> Result<String, String> {
        let mut settings: Vec<String> = Vec::new();
        self.session
            .simple_query(
                "SELECT current_setting('synchronous_commit'), current_setting('fsync')",
                |row| {
                    settings = (0..row.len())
                        .map(|i| {
                            String::from_utf8_lossy(row.get(i).unwrap_or_default()).into_owned()
                        })
                        .collect();
                    Ok(())
                },
            )
            .map_err(|e| e.to_string())?;
        let text = |i: usize| settings.get(i).map_or("", String::as_str);
        // Reported at the login (ParameterStatus), as current_setting has it.
        let version = self.session.parameter("server_version").unwrap_or("");
        Ok(format!(
            "{version}; synchronous_commit={}, fsync={}",
            text(0),
            text(1)
        ))
    }

    /// The database's commits and block counts, and `table`'s size.
    pub(crate) fn stats(&mut self, table: &str) -> Result<Stats, String> {
        // A session keeps the statistics it read (stats_fetch_consistency):
        // each sample must see the server's current ones.
        self.session
            .batch_execute("SELECT pg_stat_clear_snapshot()")
            .map_err(|e| e.to_string())?;
        let statement = self
            .session
            .prepare(
                "SELECT xact_commit, blks_hit, blks_read, pg_total_relation_size(to_regclass($1)) \
                 FROM pg_stat_database WHERE datname = current_database()",
            )
            .map_err(|e| e.to_string())?;
        let mut numbers: [Option<i64>; 4] = [None; 4];
        let mut rows = 0;
        self.session
            .execute(statement, &[Param::Text(table)], |columns, row| {
                rows += 1;
                for (i, number) in numbers.iter_mut().enumerate() {
                    if columns.get(i).is_some_and(|c| c.ty == oid::INT8) {
                        *number = int8(row.get(i));
                    }
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        if rows != 1 {
            return Err(format!(
                "pg_stat_database has {rows} rows for the current database"
            ));
        }
        let [xact_commit, blks_hit, blks_read, table_bytes] = numbers;
        let (xact_commit, blks_hit, blks_read) = (
            xact_commit.unwrap_or(0),
            blks_hit.unwrap_or(0),
            blks_read.unwrap_or(0),
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
            table_bytes,
        })
    }
}

/// Copies the fields of `row` (with `columns`) selected by `fields` into
/// `out`; a column that cannot hold a field is refused, naming it.
fn fill(
    columns: &[Column],
    row: &Row<'_>,
    fields: Fields<'_>,
    out: &mut Record,
) -> Result<(), String> {
    for (i, column) in columns.iter().enumerate() {
        let name = column.name.as_str();
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
        if !holds_a_field(column.ty) {
            return Err(format!(
                "column {name} of type {} is not a field (text or bytea)",
                pgwire::type_name(column.ty)
            ));
        }
        if let Some(value) = row.get(i) {
            out.push(shown, value);
        }
    }
    Ok(())
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
    key: String,
    values: Record,
}

/// A client thread of the jdbc store on PostgreSQL.
pub(crate) struct PgThread {
    config: Arc<JdbcConfig>,
    shards: Shards<Connection>,
    sql: String,
    queued: Vec<Queued>,
    last_error: Option<String>,
}

impl PgThread {
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

    /// Shard `i`'s connection, made if its backoff has passed.
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

    /// What a failed statement costs: a lost connection is dropped (and
    /// retried after the backoff) and reported `SERVICE_UNAVAILABLE`; a
    /// statement the server refused (or a value it could not be sent) is
    /// an `ERROR`, and a row that is not a record `UNEXPECTED_STATE`;
    /// without autocommit a transaction the refusal failed is rolled back
    /// and begun again.
    fn failed(&mut self, shard: usize, error: &WireError) -> Status {
        self.last_error = Some(format!("{}: {error}", self.config.shards[shard].url));
        let lost = matches!(error, WireError::Lost(_))
            || self.shards.conn(shard).is_none_or(|c| c.is_closed());
        if lost {
            self.shards.lose(shard);
            return Status::ServiceUnavailable;
        }
        if !self.config.autocommit {
            if let Some(conn) = self.shards.conn(shard) {
                if conn.session.transaction_status() == b'E' {
                    let rolled_back = conn.session.batch_execute("ROLLBACK; BEGIN").is_ok();
                    self.shards.forget_writes(shard);
                    if !rolled_back {
                        self.shards.lose(shard);
                    }
                }
            }
        }
        match error {
            WireError::Row(_) => Status::UnexpectedState,
            _ => Status::Error,
        }
    }

    /// Runs the statement in `self.sql` with `params` on `shard`, `on_row`
    /// seeing its rows; the rows it affected.
    fn execute(
        &mut self,
        shard: usize,
        params: &[Param<'_>],
        on_row: impl FnMut(&[Column], &Row<'_>) -> Result<(), String>,
    ) -> Result<u64, Status> {
        let sql = std::mem::take(&mut self.sql);
        let result = match self.connected(shard) {
            Ok(conn) => conn
                .session
                .prepare(&sql)
                .and_then(|statement| conn.session.execute(statement, params, on_row)),
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
        if !self.shards.count_write(shard) {
            return Status::Ok;
        }
        let Some(conn) = self.shards.conn(shard) else {
            return Status::ServiceUnavailable;
        };
        match conn.session.batch_execute("COMMIT; BEGIN") {
            Ok(()) => Status::Ok,
            Err(e) => self.failed(shard, &e),
        }
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
        let params = insert_params(key, values);
        match self.execute(shard, &params, |_, _| Ok(())) {
            Ok(_) => self.wrote(shard),
            Err(status) => status,
        }
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

/// An insert's parameters: the key, then the record's values.
fn insert_params<'a>(key: &'a str, values: &'a Record) -> Vec<Param<'a>> {
    let mut params = Vec::with_capacity(values.len() + 1);
    params.push(Param::Text(key));
    params.extend(values.iter().map(|f| Param::Bytes(f.value)));
    params
}

/// Inserts `batch` in one transaction (the one open, without autocommit).
fn send_batch(conn: &mut Connection, batch: &[&Queued], autocommit: bool) -> Result<(), WireError> {
    if autocommit {
        conn.session.batch_execute("BEGIN")?;
    }
    let sent = batch.iter().try_for_each(|q| {
        let statement = conn.session.prepare(&q.sql)?;
        let params = insert_params(&q.key, &q.values);
        conn.session
            .execute(statement, &params, |_, _| Ok(()))
            .map(|_| ())
    });
    if let Err(e) = sent {
        // The transaction begun here ends here, refused or not.
        if autocommit && !conn.session.is_closed() {
            let _ = conn.session.batch_execute("ROLLBACK");
        }
        return Err(e);
    }
    conn.session.batch_execute(if autocommit {
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
                let shard = self.shards.of(key);
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
        let shard = self.shards.of(key);
        self.sql.clear();
        let _ = write!(self.sql, "SELECT * FROM {table} WHERE YCSB_KEY = $1");
        let mut found = false;
        let read = self.execute(shard, &[Param::Text(key)], |columns, row| {
            if found {
                return Err("more than one row has the key".into());
            }
            found = true;
            fill(columns, row, fields, out)
        });
        match read {
            Ok(_) if found => Status::Ok,
            Ok(_) => Status::NotFound,
            Err(status) => {
                out.clear();
                status
            }
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
        let shard = self.shards.of(start);
        self.sql.clear();
        let _ = write!(
            self.sql,
            "SELECT * FROM {table} WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
        );
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        let params = [Param::Text(start), Param::Int(limit)];
        let scanned = self.execute(shard, &params, |columns, row| {
            let key = columns
                .first()
                .filter(|c| pgwire::is_text(c.ty))
                .and_then(|_| row.get(0))
                .and_then(|k| std::str::from_utf8(k).ok())
                .ok_or("the first column is not YCSB_KEY (text)")?;
            fill(columns, row, fields, out.push_row(key))
        });
        match scanned {
            Ok(_) => Status::Ok,
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
            let _ = write!(self.sql, "{comma}{}=${}", field.name, i + 1);
        }
        let _ = write!(self.sql, " WHERE YCSB_KEY = ${}", values.len() + 1);
        let mut params: Vec<Param<'_>> = Vec::with_capacity(values.len() + 1);
        params.extend(values.iter().map(|f| Param::Bytes(f.value)));
        params.push(Param::Text(key));
        match self.execute(shard, &params, |_, _| Ok(())) {
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
        let shard = self.shards.of(key);
        self.sql.clear();
        let _ = write!(self.sql, "DELETE FROM {table} WHERE YCSB_KEY = $1");
        match self.execute(shard, &[Param::Text(key)], |_, _| Ok(())) {
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
                if let Err(e) = conn.session.batch_execute("COMMIT") {
                    failures.push(format!("{}: {e}", self.config.shards[i].url));
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
