//! MySQL and MariaDB: one connection per shard per client thread, its
//! prepared statements cached by their SQL text, reconnected after a
//! failure.

use std::collections::HashMap;

use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder, Params, Row, Statement, Value};
use ycsb_db::{Fields, Record, ScanResult};

use crate::thread::{Failure, Queued, Server};
use crate::{create_table_sql, FieldType, JdbcConfig, Shard, TableSpelling};

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
        let spelling = TableSpelling {
            key: "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
            text: "TEXT",
            binary: "LONGBLOB",
            options: " CHARACTER SET utf8mb4",
        };
        let sql = create_table_sql(table, fields, field_type, &spelling)?;
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

/// A failure of the client as the thread counts it.
fn failure(error: &mysql::Error) -> Failure {
    if is_lost(error) {
        Failure::Lost(describe(error))
    } else {
        Failure::Refused(describe(error))
    }
}

/// Values as the client's parameters.
fn params_of(values: &[&[u8]]) -> Params {
    Params::Positional(values.iter().map(|v| Value::Bytes(v.to_vec())).collect())
}

/// Copies the fields of `row` selected by `fields` into `out`.
fn fill(row: &Row, fields: Fields<'_>, out: &mut Record) -> Result<(), Failure> {
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
                return Err(Failure::NotARecord(format!(
                    "column {name} holds {other:?}, not a field's text or bytes"
                )))
            }
        }
    }
    Ok(())
}

impl Server for Connection {
    fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String> {
        Connection::connect(shard, config)
    }

    fn placeholder(sql: &mut String, _: usize) {
        sql.push('?');
    }

    fn write(&mut self, sql: &str, params: &[&[u8]]) -> Result<u64, Failure> {
        let statement = self.statement(sql).map_err(|e| failure(&e))?;
        self.conn
            .exec_drop(&statement, params_of(params))
            .map_err(|e| failure(&e))?;
        Ok(self.conn.affected_rows())
    }

    fn read(
        &mut self,
        sql: &str,
        key: &str,
        fields: Fields<'_>,
        out: &mut Record,
    ) -> Result<bool, Failure> {
        let statement = self.statement(sql).map_err(|e| failure(&e))?;
        match self.conn.exec_first::<Row, _, _>(&statement, (key,)) {
            Ok(Some(row)) => fill(&row, fields, out).map(|()| true),
            Ok(None) => Ok(false),
            Err(e) => Err(failure(&e)),
        }
    }

    fn scan(
        &mut self,
        sql: &str,
        start: &str,
        limit: usize,
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Result<(), Failure> {
        let statement = self.statement(sql).map_err(|e| failure(&e))?;
        let limit = u64::try_from(limit).unwrap_or(u64::MAX);
        let rows = self
            .conn
            .exec::<Row, _, _>(&statement, (start, limit))
            .map_err(|e| failure(&e))?;
        for row in &rows {
            let key = match row.as_ref(0) {
                Some(Value::Bytes(key)) => String::from_utf8_lossy(key).into_owned(),
                other => {
                    return Err(Failure::NotARecord(format!(
                        "the first column is not YCSB_KEY: {other:?}"
                    )))
                }
            };
            fill(row, fields, out.push_row(&key))?;
        }
        Ok(())
    }

    fn insert_batch(&mut self, batch: &[&Queued], autocommit: bool) -> Result<(), Failure> {
        let sent = (|| {
            if autocommit {
                self.conn.query_drop("BEGIN")?;
            }
            for q in batch {
                let statement = self.statement(&q.sql)?;
                self.conn.exec_drop(&statement, params_of(&q.params()))?;
            }
            self.conn.query_drop("COMMIT")
        })();
        sent.map_err(|e| {
            // The transaction begun here ends here, refused or not.
            if autocommit && !is_lost(&e) {
                let _ = self.conn.query_drop("ROLLBACK");
            }
            failure(&e)
        })
    }

    fn commit(&mut self) -> Result<(), Failure> {
        self.conn.query_drop("COMMIT").map_err(|e| failure(&e))
    }

    fn finish(&mut self) -> Result<(), Failure> {
        self.commit()
    }

    /// Without autocommit, a refused statement rolls the transaction
    /// back, as the thread did before it shared its code with PostgreSQL's.
    fn recover(&mut self) -> Result<bool, Failure> {
        self.conn
            .query_drop("ROLLBACK")
            .map(|()| true)
            .map_err(|e| failure(&e))
    }

    fn is_closed(&self) -> bool {
        // The client says so by the failures it returns (is_lost).
        false
    }
}
