//! One client thread: its own connection to each server, the key's server
//! chosen as spymemcached chooses it, and what happens when a server is
//! down.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ycsb_db::{
    batch_status, Batch, Fields, ReadOp, Record, ScanOp, ScanResult, Status, StoreError,
    StoreThread,
};

use crate::json;
use crate::wire::{Conn, Item, Outcome, Storage, WireError};
use crate::{FailureMode, MemcachedConfig, UpdateMode, STRING_FLAGS};

/// How long a server that failed is left alone before the next attempt
/// to reconnect: doubling from the first to the last.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const LAST_BACKOFF: Duration = Duration::from_secs(1);

/// Java's `String.hashCode()` of `key` (spymemcached's `NATIVE_HASH`),
/// truncated to 32 bits as spymemcached does: which server a key lives on.
pub fn java_hash(key: &str) -> u32 {
    key.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    }) as u32
}

/// The server of `key` among `servers`, as spymemcached's default
/// `ArrayModNodeLocator` picks it.
pub fn server_of(key: &str, servers: usize) -> usize {
    (u64::from(java_hash(key)) % servers as u64) as usize
}

/// One server as this thread sees it.
#[derive(Debug)]
struct Node {
    conn: Option<Conn>,
    /// When the next reconnect may be tried (while `conn` is `None`).
    retry_at: Instant,
    backoff: Duration,
}

/// A client thread of the memcached store.
pub(crate) struct MemcachedThread {
    config: Arc<MemcachedConfig>,
    nodes: Vec<Node>,
    key: String,
    doc: Vec<u8>,
    value: Vec<u8>,
    merged: Record,
    scratch: json::Scratch,
    /// Whether unanswered writes were sent since the last barrier.
    unanswered: bool,
    last_error: Option<String>,
    /// A batched read's buffers, reused.
    multi: MultiGet,
}

/// The buffers of a batched read (`batch.size`): which server each key
/// goes to, one server's keys, and what came back.
#[derive(Debug, Default)]
struct MultiGet {
    /// (server, entry) of each key that could be asked, sorted.
    routes: Vec<(usize, usize)>,
    /// One server's qualified keys, back to back, and where each ends.
    keys: Vec<u8>,
    ends: Vec<usize>,
    items: Vec<Option<Item>>,
    values: Vec<Vec<u8>>,
}

impl MemcachedThread {
    /// A thread with a connection to every server that answers now; a
    /// server that does not is tried again by the operations that need it.
    pub(crate) fn new(config: Arc<MemcachedConfig>) -> Self {
        let now = Instant::now();
        let nodes = config
            .servers
            .iter()
            .map(|_| Node {
                conn: None,
                retry_at: now,
                backoff: FIRST_BACKOFF,
            })
            .collect();
        let mut thread = Self {
            config,
            nodes,
            key: String::with_capacity(64),
            doc: Vec::with_capacity(2048),
            value: Vec::with_capacity(2048),
            merged: Record::new(),
            scratch: json::Scratch::default(),
            unanswered: false,
            last_error: None,
            multi: MultiGet::default(),
        };
        for i in 0..thread.nodes.len() {
            thread.connected(i);
        }
        thread
    }

    /// Whether server `i` has a connection, making one if its backoff has
    /// passed.
    fn connected(&mut self, i: usize) -> bool {
        let node = &mut self.nodes[i];
        if node.conn.is_some() {
            return true;
        }
        if Instant::now() < node.retry_at {
            return false;
        }
        match Conn::connect(
            &self.config.servers[i],
            self.config.protocol,
            self.config.op_timeout,
            self.config.read_buffer,
        ) {
            Ok(conn) => {
                node.conn = Some(conn);
                node.backoff = FIRST_BACKOFF;
                true
            }
            Err(e) => {
                node.retry_at = Instant::now() + node.backoff;
                node.backoff = (node.backoff * 2).min(LAST_BACKOFF);
                self.last_error =
                    Some(format!("cannot connect to {}: {e}", self.config.servers[i]));
                false
            }
        }
    }

    /// The server for the key in `self.key`, connected, as the failure mode
    /// says when its own server is down: another one (`Redistribute`),
    /// waiting for it up to the operation timeout (`Retry`), or none
    /// (`Cancel`).
    fn server(&mut self) -> Result<usize, Status> {
        let primary = server_of(&self.key, self.nodes.len());
        if self.connected(primary) {
            return Ok(primary);
        }
        match self.config.failure_mode {
            FailureMode::Cancel => {}
            FailureMode::Redistribute => {
                let n = self.nodes.len();
                for step in 1..n {
                    let i = (primary + step) % n;
                    if self.connected(i) {
                        return Ok(i);
                    }
                }
            }
            FailureMode::Retry => {
                let deadline = Instant::now() + self.config.op_timeout;
                loop {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    let wait = self.nodes[primary].retry_at.saturating_duration_since(now);
                    std::thread::sleep(wait.min(deadline - now));
                    if self.connected(primary) {
                        return Ok(primary);
                    }
                }
            }
        }
        Err(Status::ServiceUnavailable)
    }

    /// Sets `self.key` to Java's qualified key, `<table>-<key>`, and
    /// checks it as spymemcached does.
    fn qualify(&mut self, table: &str, key: &str) -> Result<(), Status> {
        self.key.clear();
        self.key.push_str(table);
        self.key.push('-');
        self.key.push_str(key);
        let bad = if self.key.len() > 250 {
            Some("longer than 250 bytes")
        } else if self.config.protocol == crate::WireProtocol::Text
            && self.key.bytes().any(|b| b <= b' ' || b == 0x7f)
        {
            Some("holds a space or a control character (the text protocol cannot send it)")
        } else {
            None
        };
        match bad {
            Some(why) => {
                self.last_error = Some(format!("the key {:?} {why}", self.key));
                Err(Status::Error)
            }
            None => Ok(()),
        }
    }

    /// What a failed command costs: a lost connection is dropped (and
    /// retried after the backoff) and reported `SERVICE_UNAVAILABLE`; a
    /// refused command is an `ERROR`.
    fn failed(&mut self, server: usize, error: WireError) -> Status {
        self.last_error = Some(format!("{}: {error}", self.config.servers[server]));
        match error {
            WireError::Server(_) => Status::Error,
            WireError::Io(_) | WireError::Protocol(_) => {
                let node = &mut self.nodes[server];
                node.conn = None;
                node.retry_at = Instant::now() + node.backoff;
                node.backoff = (node.backoff * 2).min(LAST_BACKOFF);
                match error {
                    WireError::Protocol(_) => Status::Error,
                    _ => Status::ServiceUnavailable,
                }
            }
        }
    }

    fn conn(&mut self, server: usize) -> &mut Conn {
        self.nodes[server]
            .conn
            .as_mut()
            .expect("server() returns connected servers")
    }

    /// Reads the item at the qualified key into `self.value`.
    fn get(&mut self, with_cas: bool) -> Result<(usize, Option<u64>), Status> {
        let server = self.server()?;
        let mut value = std::mem::take(&mut self.value);
        let key = std::mem::take(&mut self.key);
        let got = self.conn(server).get(key.as_bytes(), with_cas, &mut value);
        self.key = key;
        self.value = value;
        match got {
            Ok(None) => Ok((server, None)),
            Ok(Some(item)) if item.flags == STRING_FLAGS => Ok((server, Some(item.cas))),
            Ok(Some(item)) => {
                self.last_error = Some(format!(
                    "{} holds flags {} (not a string spymemcached stored)",
                    self.key, item.flags
                ));
                Err(Status::UnexpectedState)
            }
            Err(e) => Err(self.failed(server, e)),
        }
    }

    fn store(&mut self, server: usize, command: Storage) -> Result<Option<Outcome>, Status> {
        let quiet = !self.config.check_operation_status;
        let key = std::mem::take(&mut self.key);
        let doc = std::mem::take(&mut self.doc);
        let expiration = self.config.expiration;
        let result = self.conn(server).store(
            command,
            key.as_bytes(),
            STRING_FLAGS,
            expiration,
            &doc,
            quiet,
        );
        self.key = key;
        self.doc = doc;
        self.unanswered |= quiet;
        result.map_err(|e| self.failed(server, e))
    }

    fn decode_into(&mut self, fields: Fields<'_>, out: &mut Record) -> Status {
        match json::decode(&self.value, fields, out, &mut self.scratch) {
            Ok(()) => Status::Ok,
            Err(e) => {
                out.clear();
                self.last_error = Some(format!("{}: {e}", self.key));
                Status::UnexpectedState
            }
        }
    }

    /// An update merged into the stored record: `gets`, merge, `cas`, and
    /// again while other clients change the record in between (one of
    /// them always wins), up to the operation timeout.
    fn merged_update(&mut self, values: &Record) -> Status {
        let deadline = Instant::now() + self.config.op_timeout;
        let mut conflicts = 0u32;
        loop {
            let (server, cas) = match self.get(true) {
                Ok((server, Some(cas))) => (server, cas),
                Ok((_, None)) => return Status::NotFound,
                Err(status) => return status,
            };
            let mut merged = std::mem::take(&mut self.merged);
            merged.clear();
            let status = self.decode_into(Fields::All, &mut merged);
            if status != Status::Ok {
                self.merged = merged;
                return status;
            }
            merged.merge_from(values);
            self.doc.clear();
            json::encode(&merged, &mut self.doc);
            self.merged = merged;
            match self.store(server, Storage::Cas(cas)) {
                Ok(None | Some(Outcome::Done)) => return Status::Ok,
                // Changed since the gets: read it again.
                Ok(Some(Outcome::Exists)) => {
                    conflicts += 1;
                    if Instant::now() >= deadline {
                        self.last_error = Some(format!(
                            "{} changed under {conflicts} merged updates in a row",
                            self.key
                        ));
                        return Status::Error;
                    }
                    std::thread::yield_now();
                }
                Ok(Some(Outcome::NotFound | Outcome::NotStored)) => return Status::NotFound,
                Err(status) => return status,
            }
        }
    }
}

impl MemcachedThread {
    /// Asks the server of `group` (routes of entries of `batch`, all to
    /// one server) for their keys in one text `get`, decoding each hit
    /// into its `out` record.
    fn get_group(
        &mut self,
        table: &str,
        batch: &Batch,
        group: std::ops::Range<usize>,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) {
        let mut multi = std::mem::take(&mut self.multi);
        let server = multi.routes[group.start].0;
        multi.keys.clear();
        multi.ends.clear();
        for &(_, entry) in &multi.routes[group.clone()] {
            multi.keys.extend_from_slice(table.as_bytes());
            multi.keys.push(b'-');
            multi.keys.extend_from_slice(batch.key(entry).as_bytes());
            multi.ends.push(multi.keys.len());
        }
        let n = multi.ends.len();
        if multi.items.len() < n {
            multi.items.resize(n, None);
            multi.values.resize_with(n, Vec::new);
        }
        let got = self.conn(server).get_many(
            &multi.keys,
            &multi.ends,
            &mut multi.items[..n],
            &mut multi.values[..n],
        );
        match got {
            Err(e) => {
                let status = self.failed(server, e);
                for &(_, entry) in &multi.routes[group] {
                    statuses[entry] = status;
                }
            }
            Ok(()) => {
                for (slot, &(_, entry)) in multi.routes[group].iter().enumerate() {
                    statuses[entry] = match multi.items[slot] {
                        None => Status::NotFound,
                        Some(item) if item.flags != STRING_FLAGS => Status::UnexpectedState,
                        Some(_) => {
                            std::mem::swap(&mut self.value, &mut multi.values[slot]);
                            let status = self.decode_into(fields, &mut out[entry]);
                            std::mem::swap(&mut self.value, &mut multi.values[slot]);
                            status
                        }
                    };
                }
            }
        }
        self.multi = multi;
    }
}

impl StoreThread for MemcachedThread {
    /// Text protocol: one `get k1 k2 ...` per server for the batch's keys
    /// on it (spymemcached's bulk get); the binary protocol reads key by
    /// key.
    fn read_batch(
        &mut self,
        table: &str,
        batch: &Batch,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        let mut routes = std::mem::take(&mut self.multi.routes);
        routes.clear();
        for (entry, (key, _)) in batch.iter().enumerate() {
            let routed = self.qualify(table, key).and_then(|()| self.server());
            match routed {
                Ok(server)
                    if self.nodes[server]
                        .conn
                        .as_ref()
                        .is_some_and(Conn::has_multi_get) =>
                {
                    routes.push((server, entry));
                }
                Ok(_) => {
                    statuses[entry] = self.read(&ReadOp { table, key, fields }, &mut out[entry])
                }
                Err(status) => statuses[entry] = status,
            }
        }
        routes.sort_unstable();
        self.multi.routes = routes;
        let mut start = 0;
        while start < self.multi.routes.len() {
            let server = self.multi.routes[start].0;
            let end = start
                + self.multi.routes[start..]
                    .iter()
                    .take_while(|(s, _)| *s == server)
                    .count();
            self.get_group(table, batch, start..end, fields, out, statuses);
            start = end;
        }
        batch_status(&statuses[..batch.len()])
    }

    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        if let Err(status) = self.qualify(op.table, op.key) {
            return status;
        }
        match self.get(false) {
            Ok((_, Some(_))) => self.decode_into(op.fields, out),
            Ok((_, None)) => Status::NotFound,
            Err(status) => status,
        }
    }

    fn scan(&mut self, _: &ScanOp<'_>, _: &mut ScanResult) -> Status {
        // memcached has no order to scan in; Java's binding says the same.
        Status::NotImplemented
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Err(status) = self.qualify(table, key) {
            return status;
        }
        match self.config.update {
            UpdateMode::Merge => self.merged_update(values),
            UpdateMode::Replace => {
                self.doc.clear();
                json::encode(values, &mut self.doc);
                let server = match self.server() {
                    Ok(server) => server,
                    Err(status) => return status,
                };
                match self.store(server, Storage::Replace) {
                    Ok(None | Some(Outcome::Done)) => Status::Ok,
                    Ok(Some(_)) => Status::NotFound,
                    Err(status) => status,
                }
            }
        }
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        if let Err(status) = self.qualify(table, key) {
            return status;
        }
        self.doc.clear();
        json::encode(values, &mut self.doc);
        let server = match self.server() {
            Ok(server) => server,
            Err(status) => return status,
        };
        match self.store(server, Storage::Add) {
            Ok(None | Some(Outcome::Done)) => Status::Ok,
            Ok(Some(_)) => {
                self.last_error = Some(format!("{} already holds a record", self.key));
                Status::Error
            }
            Err(status) => status,
        }
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        if let Err(status) = self.qualify(table, key) {
            return status;
        }
        let server = match self.server() {
            Ok(server) => server,
            Err(status) => return status,
        };
        let quiet = !self.config.check_operation_status;
        let key = std::mem::take(&mut self.key);
        let result = self.conn(server).delete(key.as_bytes(), quiet);
        self.key = key;
        self.unanswered |= quiet;
        match result {
            Ok(None | Some(Outcome::Done)) => Status::Ok,
            Ok(Some(_)) => Status::NotFound,
            Err(e) => self.failed(server, e),
        }
    }

    /// With `memcached.checkOperationStatus=false`, waits (up to
    /// `memcached.shutdownTimeoutMillis`) until every server has processed
    /// the writes sent unanswered, as Java's client shutdown waits for its
    /// queued operations.
    fn cleanup(&mut self) -> Result<(), StoreError> {
        if !std::mem::take(&mut self.unanswered) {
            return Ok(());
        }
        let mut lost = Vec::new();
        for (i, node) in self.nodes.iter_mut().enumerate() {
            let Some(conn) = node.conn.as_mut() else {
                continue;
            };
            let done = conn
                .set_timeout(self.config.shutdown_timeout)
                .map_err(WireError::Io)
                .and_then(|()| conn.barrier());
            if let Err(e) = done {
                node.conn = None;
                lost.push(format!("{}: {e}", self.config.servers[i]));
            }
        }
        if lost.is_empty() {
            Ok(())
        } else {
            Err(StoreError::Other(format!(
                "memcached: unanswered writes may be lost ({})",
                lost.join("; ")
            )))
        }
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_spread_as_spymemcached_spreads_them() {
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("a"), 97);
        assert_eq!(java_hash("ab"), 97 * 31 + 98);
        let h = java_hash("usertable-user6284781860667377211");
        let expected = "usertable-user6284781860667377211"
            .chars()
            .fold(0i64, |h, c| (h * 31 + c as i64) & 0xFFFF_FFFF);
        assert_eq!(u64::from(h), expected as u64);
        assert_eq!(server_of("a", 3), 97 % 3);
        // A negative int hash is taken as its unsigned 32-bit value.
        let negative = "usertable-user1000385";
        let signed = negative
            .encode_utf16()
            .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
        assert!(signed < 0, "{signed}");
        assert_eq!(
            server_of(negative, 3),
            ((signed as i64 + (1i64 << 32)) % 3) as usize
        );
    }
}
