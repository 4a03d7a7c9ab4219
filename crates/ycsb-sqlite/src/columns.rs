//! `sqlite.schema=columns`: a table laid out as YCSB-cpp's and Java's JDBC
//! binding lay it out, a `TEXT` column per field beside the key column
//! (YCSB-cpp's `user_id`, Java's `YCSB_KEY`: `sqlite.primary_key`), so that
//! a read of one field reads one column and an update writes only the
//! columns it names, as theirs do.
//!
//! YCSB-cpp creates the table with `fieldcount` columns named after
//! `fieldnameprefix`; a store does not read the workload's properties, so
//! here the table is made with the key column alone and a column is added
//! (`ALTER TABLE ... ADD COLUMN`, once per table and field) the first time
//! a record carries that field: after the first insert the table is
//! YCSB-cpp's. A field whose value is `NULL` is absent from the record.
//! Values are bound as `TEXT`, as YCSB-cpp's `sqlite3_bind_text` (SQLite
//! keeps any bytes in a text value). Column names are SQLite's, so two
//! field names differing only in case are one column.

use rusqlite::types::ValueRef;
use rusqlite::{CachedStatement, Connection, Statement};
use ycsb_db::{Fields, Record, ScanResult, Status};

/// A value bound as `TEXT`, whatever its bytes (YCSB-cpp's
/// `sqlite3_bind_text`; SQLite does not check them).
struct Text<'a>(&'a [u8]);

impl rusqlite::ToSql for Text<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::Borrowed(ValueRef::Text(
            self.0,
        )))
    }
}

/// One table's statements and the columns this connection knows it has.
pub(crate) struct ColumnTable {
    /// The workload's table name.
    pub table: String,
    quoted: String,
    key: String,
    /// The field columns known to exist (not the key column).
    columns: Vec<String>,
    read_all: String,
    scan_all: String,
    exists: String,
    delete: String,
    /// The statement being built, reused.
    sql: String,
}

/// `name` as an SQL identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Appends `name` as an SQL identifier.
fn push_quoted(sql: &mut String, name: &str) {
    sql.push('"');
    for c in name.chars() {
        if c == '"' {
            sql.push('"');
        }
        sql.push(c);
    }
    sql.push('"');
}

impl ColumnTable {
    /// The table `table` keyed by `key`, created (with the key column
    /// alone) when `create` says so and it does not exist.
    pub(crate) fn open(
        conn: &Connection,
        table: &str,
        key: &str,
        create: bool,
    ) -> rusqlite::Result<ColumnTable> {
        let quoted = quote(table);
        if create {
            // A rowid table, as YCSB-cpp's and the blob layout's.
            conn.execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS {quoted} ({key} TEXT PRIMARY KEY)"
            ))?;
        }
        let mut t = ColumnTable {
            table: table.to_string(),
            read_all: format!("SELECT * FROM {quoted} WHERE {key} = ?1"),
            scan_all: format!("SELECT * FROM {quoted} WHERE {key} >= ?1 ORDER BY {key} LIMIT ?2"),
            exists: format!("SELECT 1 FROM {quoted} WHERE {key} = ?1"),
            delete: format!("DELETE FROM {quoted} WHERE {key} = ?1"),
            quoted,
            key: key.to_string(),
            columns: Vec::new(),
            sql: String::new(),
        };
        t.refresh(conn)?;
        Ok(t)
    }

    /// Reads the table's columns again (another connection may have added
    /// some).
    fn refresh(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let mut stmt = conn.prepare(&format!("PRAGMA table_info({})", self.quoted))?;
        let mut rows = stmt.query([])?;
        self.columns.clear();
        while let Some(row) = rows.next()? {
            let name: String = row.get(1)?;
            if !name.eq_ignore_ascii_case(&self.key) {
                self.columns.push(name);
            }
        }
        Ok(())
    }

    fn knows(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c.eq_ignore_ascii_case(name))
    }

    fn is_key(&self, name: &str) -> bool {
        name.eq_ignore_ascii_case(&self.key)
    }

    /// Makes sure every field of `values` has its column, adding the
    /// missing ones when `create` allows (otherwise SQLite's `no such
    /// column` is the operation's error).
    fn ensure_columns(
        &mut self,
        conn: &Connection,
        values: &Record,
        create: bool,
    ) -> rusqlite::Result<()> {
        if let Some(field) = values.iter().find(|f| self.is_key(f.name)) {
            return Err(rusqlite::Error::InvalidColumnName(format!(
                "{} (a field named as the key column, sqlite.primary_key)",
                field.name
            )));
        }
        if values.iter().all(|f| self.knows(f.name)) || !create {
            return Ok(());
        }
        self.refresh(conn)?;
        let missing: Vec<String> = values
            .iter()
            .filter(|f| !self.knows(f.name))
            .map(|f| f.name.to_string())
            .collect();
        for name in missing {
            if self.knows(&name) {
                continue;
            }
            let added = conn.execute_batch(&format!(
                "ALTER TABLE {} ADD COLUMN {} TEXT",
                self.quoted,
                quote(&name)
            ));
            match added {
                Ok(()) => {}
                // Another connection added it meanwhile.
                Err(e) if e.to_string().contains("duplicate column name") => {}
                Err(e) => return Err(e),
            }
            self.columns.push(name);
        }
        Ok(())
    }

    /// `SELECT key, "f1", ... FROM t` and the condition, for the selected
    /// fields that are columns (an unknown one is absent, as a field the
    /// record does not have).
    fn select_some(&mut self, conn: &Connection, names: &[String], condition: &str) {
        if names.iter().any(|n| !self.knows(n)) {
            // A column another connection added; errors show at prepare.
            let _ = self.refresh(conn);
        }
        self.sql.clear();
        self.sql.push_str("SELECT ");
        self.sql.push_str(&self.key);
        for (i, name) in names.iter().enumerate() {
            let repeated = names[..i].iter().any(|n| n.eq_ignore_ascii_case(name));
            if repeated || !self.knows(name) || self.is_key(name) {
                continue;
            }
            self.sql.push_str(", ");
            push_quoted(&mut self.sql, name);
        }
        self.sql.push_str(" FROM ");
        self.sql.push_str(&self.quoted);
        self.sql.push_str(condition);
    }
}

/// The fields of the current row of `stmt`, but its key column, to `out`;
/// `NULL` is an absent field.
fn row_fields(
    row: &rusqlite::Row<'_>,
    key_column: usize,
    out: &mut Record,
) -> rusqlite::Result<()> {
    let stmt = row.as_ref();
    for i in 0..stmt.column_count() {
        if i == key_column {
            continue;
        }
        let name = stmt.column_name(i)?;
        match row.get_ref(i)? {
            ValueRef::Null => {}
            ValueRef::Text(bytes) | ValueRef::Blob(bytes) => out.push(name, bytes),
            ValueRef::Integer(n) => out.push(name, n.to_string().as_bytes()),
            ValueRef::Real(x) => out.push(name, x.to_string().as_bytes()),
        }
    }
    Ok(())
}

/// The index of the key column among the statement's columns.
fn key_column(stmt: &Statement<'_>, key: &str) -> usize {
    (0..stmt.column_count())
        .find(|&i| {
            stmt.column_name(i)
                .is_ok_and(|n| n.eq_ignore_ascii_case(key))
        })
        .unwrap_or(0)
}

/// What a `SELECT` is for.
#[derive(Clone, Copy)]
enum Select {
    /// One key's row.
    Read,
    /// Rows in key order from a key, up to a limit.
    Scan,
}

/// The statement of a read or scan (every column, or the selected fields'
/// columns) and the index of its key column.
fn prepare_select<'c>(
    conn: &'c Connection,
    t: &mut ColumnTable,
    fields: Fields<'_>,
    select: Select,
) -> rusqlite::Result<(CachedStatement<'c>, usize)> {
    let sql = match (fields, select) {
        (Fields::All, Select::Read) => t.read_all.as_str(),
        (Fields::All, Select::Scan) => t.scan_all.as_str(),
        (Fields::Only(names), _) => {
            let condition = match select {
                Select::Read => format!(" WHERE {} = ?1", t.key),
                Select::Scan => format!(" WHERE {0} >= ?1 ORDER BY {0} LIMIT ?2", t.key),
            };
            t.select_some(conn, names, &condition);
            t.sql.as_str()
        }
    };
    let stmt = conn.prepare_cached(sql)?;
    let key_at = key_column(&stmt, &t.key);
    Ok((stmt, key_at))
}

/// A read: every column, or the selected ones.
pub(crate) fn read(
    conn: &Connection,
    t: &mut ColumnTable,
    key: &str,
    fields: Fields<'_>,
    out: &mut Record,
) -> rusqlite::Result<Status> {
    let (mut stmt, key_at) = prepare_select(conn, t, fields, Select::Read)?;
    let mut rows = stmt.query([key])?;
    match rows.next()? {
        Some(row) => {
            row_fields(row, key_at, out)?;
            Ok(Status::Ok)
        }
        None => Ok(Status::NotFound),
    }
}

/// A scan from `start_key`, in key order.
pub(crate) fn scan(
    conn: &Connection,
    t: &mut ColumnTable,
    start_key: &str,
    count: usize,
    fields: Fields<'_>,
    out: &mut ScanResult,
) -> rusqlite::Result<Status> {
    let limit = i64::try_from(count).unwrap_or(i64::MAX);
    let (mut stmt, key_at) = prepare_select(conn, t, fields, Select::Scan)?;
    let mut rows = stmt.query(rusqlite::params![start_key, limit])?;
    while let Some(row) = rows.next()? {
        let ValueRef::Text(key) = row.get_ref(key_at)? else {
            return Ok(Status::UnexpectedState);
        };
        let Ok(key) = std::str::from_utf8(key) else {
            return Ok(Status::UnexpectedState);
        };
        row_fields(row, key_at, out.push_row(key))?;
    }
    Ok(Status::Ok)
}

/// Whether a later field of `values` has the same name as field `i` (the
/// last of a name given twice wins, as in a record's merge).
fn overridden(values: &Record, i: usize, name: &str) -> bool {
    values
        .iter()
        .skip(i + 1)
        .any(|f| f.name.eq_ignore_ascii_case(name))
}

/// Runs the insert or update `sql`: `key` its parameter 1, then the
/// values of the fields of `values` that are not given again later, as
/// `TEXT`, in the order of its columns. The rows it changed.
fn run_write(conn: &Connection, sql: &str, key: &str, values: &Record) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare_cached(sql)?;
    stmt.raw_bind_parameter(1, key)?;
    let mut at = 2;
    for (i, f) in values.iter().enumerate() {
        if overridden(values, i, f.name) {
            continue;
        }
        stmt.raw_bind_parameter(at, Text(f.value))?;
        at += 1;
    }
    stmt.raw_execute()
}

/// An insert, replacing a record of the same key (YCSB-cpp's `INSERT OR
/// REPLACE`): the record's fields in their columns, the others `NULL`.
pub(crate) fn insert(
    conn: &Connection,
    t: &mut ColumnTable,
    key: &str,
    values: &Record,
    create: bool,
) -> rusqlite::Result<Status> {
    t.ensure_columns(conn, values, create)?;
    t.sql.clear();
    t.sql.push_str("INSERT OR REPLACE INTO ");
    t.sql.push_str(&t.quoted);
    t.sql.push_str(" (");
    t.sql.push_str(&t.key);
    let mut params = 1;
    for (i, f) in values.iter().enumerate() {
        if overridden(values, i, f.name) {
            continue;
        }
        t.sql.push_str(", ");
        push_quoted(&mut t.sql, f.name);
        params += 1;
    }
    t.sql.push_str(") VALUES (?1");
    for p in 2..=params {
        t.sql.push_str(&format!(", ?{p}"));
    }
    t.sql.push(')');
    run_write(conn, &t.sql, key, values)?;
    Ok(Status::Ok)
}

/// An update: one statement writing only the columns of the fields it
/// names (Java's JDBC binding's and YCSB-cpp's `UPDATE ... SET`), no read
/// of the record; `NOT_FOUND` when no row has the key.
pub(crate) fn update(
    conn: &Connection,
    t: &mut ColumnTable,
    key: &str,
    values: &Record,
    create: bool,
) -> rusqlite::Result<Status> {
    t.ensure_columns(conn, values, create)?;
    if values.is_empty() {
        let found = conn.prepare_cached(&t.exists)?.exists([key])?;
        return Ok(if found { Status::Ok } else { Status::NotFound });
    }
    t.sql.clear();
    t.sql.push_str("UPDATE ");
    t.sql.push_str(&t.quoted);
    t.sql.push_str(" SET ");
    let mut params = 1;
    for (i, f) in values.iter().enumerate() {
        if overridden(values, i, f.name) {
            continue;
        }
        if params > 1 {
            t.sql.push_str(", ");
        }
        params += 1;
        push_quoted(&mut t.sql, f.name);
        t.sql.push_str(&format!(" = ?{params}"));
    }
    t.sql.push_str(" WHERE ");
    t.sql.push_str(&t.key);
    t.sql.push_str(" = ?1");
    let changed = run_write(conn, &t.sql, key, values)?;
    Ok(if changed == 0 {
        Status::NotFound
    } else {
        Status::Ok
    })
}

/// A delete; `NOT_FOUND` when no row had the key.
pub(crate) fn delete(conn: &Connection, t: &ColumnTable, key: &str) -> rusqlite::Result<Status> {
    let deleted = conn.prepare_cached(&t.delete)?.execute([key])?;
    Ok(if deleted == 0 {
        Status::NotFound
    } else {
        Status::Ok
    })
}
