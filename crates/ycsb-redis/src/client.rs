//! One client thread's connections: routing, pipelining, redirections and
//! reconnection.
//!
//! Work happens in rounds. Commands are appended to the write buffer of the
//! node that owns their key; a round sends every node's buffer, then reads
//! every reply into that node's read buffer (replies stay in place, so
//! callers parse them without copying); [`Client::finish`] clears the
//! buffers for the next round, keeping their capacity. Batched writes are
//! commands left in the buffers until a later round sends them.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ycsb_db::{
    batch_status, Batch, Fields, ReadOp, Record, ScanOp, ScanResult, Status, StoreError,
    StoreThread,
};

use crate::resp::{self, Token, Tokens};
use crate::{IndexMode, RedisConfig};

/// The sorted set that indexes keys for scans (Java's `INDEX_KEY`).
pub(crate) const INDEX_KEY: &[u8] = b"_indices";
const SLOTS: usize = 16384;
const MAX_REDIRECTS: usize = 5;
const BACKOFF_START: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(1);
const REFRESH_INTERVAL: Duration = Duration::from_millis(200);
/// `Cmd::op` of commands that belong to no queued write.
const NO_OP: u32 = u32::MAX;
/// The read buffer's first size; it doubles as large replies need.
const READ_CHUNK: usize = 16 * 1024;

/// A failure to connect, with what to report for it.
#[derive(Debug)]
pub(crate) struct Failure {
    status: Status,
    message: String,
}

/// A Redis Cluster's slot table: which node serves each hash slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SlotTable {
    nodes: Vec<String>,
    slot_node: Vec<u16>,
    /// The replicas of each node in `nodes` that serves slots.
    replicas: Vec<Vec<String>>,
}

impl SlotTable {
    /// Every node to ask for the current map: the seeds, then the
    /// masters and replicas this map knows.
    pub(crate) fn addresses(&self, config: &RedisConfig) -> Vec<String> {
        let mut all = config.nodes.clone();
        for addr in self.nodes.iter().chain(self.replicas.iter().flatten()) {
            if !all.contains(addr) {
                all.push(addr.clone());
            }
        }
        all
    }
}

/// Node health shared by the threads of one store. When one thread finds
/// a node unresponsive (a timeout, a refused connection), the others fail
/// fast on it until its backoff ends, instead of each waiting out
/// `redis.timeout`; then one thread, not all, probes it again. Threads
/// read their node's flag once per round (a load of a line that changes
/// only when a node fails or recovers) and write it only then.
#[derive(Debug)]
pub(crate) struct Health {
    epoch: Instant,
    nodes: Mutex<HashMap<String, Arc<AtomicU64>>>,
}

impl Health {
    pub(crate) fn new() -> Self {
        Self {
            epoch: Instant::now(),
            nodes: Mutex::new(HashMap::new()),
        }
    }

    /// The shared "down until" of `addr`: milliseconds since the epoch
    /// (plus one), 0 while the node is healthy.
    fn of(&self, addr: &str) -> Arc<AtomicU64> {
        match self.nodes.lock() {
            Ok(mut nodes) => nodes.entry(addr.to_string()).or_default().clone(),
            Err(_) => Arc::default(),
        }
    }
}

/// Opens a connection to `addr` and authenticates it.
fn connect(addr: &str, config: &RedisConfig) -> Result<TcpStream, Failure> {
    let unavailable = |what: String| Failure {
        status: Status::ServiceUnavailable,
        message: what,
    };
    let addrs = addr
        .to_socket_addrs()
        .map_err(|e| unavailable(format!("cannot resolve {addr}: {e}")))?;
    let mut last = None;
    let mut stream = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, config.timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let mut stream = stream.ok_or_else(|| {
        unavailable(match last {
            Some(e) => format!("cannot connect to {addr}: {e}"),
            None => format!("cannot connect to {addr}: no address"),
        })
    })?;
    let setup = |s: &TcpStream| -> io::Result<()> {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(config.timeout))?;
        s.set_write_timeout(Some(config.timeout))
    };
    setup(&stream).map_err(|e| unavailable(format!("cannot set up connection to {addr}: {e}")))?;
    if let Some(password) = &config.password {
        let mut args: Vec<&[u8]> = vec![b"AUTH"];
        if let Some(user) = &config.username {
            args.push(user.as_bytes());
        }
        args.push(password.0.as_bytes());
        let reply = call(&mut stream, &args)
            .map_err(|e| unavailable(format!("AUTH on {addr} failed: {e}")))?;
        if let Some(Token::Error(text)) = Tokens::new(&reply).next_token().ok().flatten() {
            // The server's message names the problem, never the password.
            return Err(Failure {
                status: Status::Forbidden,
                message: format!(
                    "{addr} refused the password: {}",
                    String::from_utf8_lossy(text)
                ),
            });
        }
    }
    Ok(stream)
}

/// Sends one command and reads its whole reply (for setup commands, where
/// allocating is fine).
fn call(stream: &mut TcpStream, args: &[&[u8]]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    resp::write_command(&mut out, args);
    stream.write_all(&out)?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        match resp::value_len(&buf, 0) {
            Ok(Some(n)) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Ok(None) => {}
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Sends `READONLY`, which lets a replica answer reads of its master's
/// slots (harmless on a master).
fn readonly(stream: &mut TcpStream, addr: &str) -> Result<(), Failure> {
    let reply = call(stream, &[b"READONLY"]).map_err(|e| Failure {
        status: Status::ServiceUnavailable,
        message: format!("READONLY on {addr} failed: {e}"),
    })?;
    match Tokens::new(&reply).next_token() {
        Ok(Some(Token::Error(text))) => Err(Failure {
            status: error_status(text),
            message: format!("{addr} refused READONLY: {}", String::from_utf8_lossy(text)),
        }),
        _ => Ok(()),
    }
}

/// The server's version from `INFO server` (empty when the server has no
/// such field), checking on the way that a node answers and accepts the
/// password.
pub(crate) fn server_version(config: &RedisConfig) -> Result<String, String> {
    let mut last = String::from("no server address");
    for addr in &config.nodes {
        let mut stream = match connect(addr, config) {
            Ok(s) => s,
            Err(f) => {
                last = f.message;
                continue;
            }
        };
        let reply = call(&mut stream, &[b"INFO", b"server"])
            .map_err(|e| format!("INFO on {addr} failed: {e}"))?;
        let mut tokens = Tokens::new(&reply);
        let text = match tokens.next_token() {
            Ok(Some(Token::Bulk(Some(text)))) => text,
            Ok(Some(Token::Error(e))) if is_auth_error(e) => {
                return Err(format!(
                    "{addr} needs a password (set redis.password): {}",
                    String::from_utf8_lossy(e)
                ))
            }
            _ => return Ok(String::new()),
        };
        let version = String::from_utf8_lossy(text)
            .lines()
            .find_map(|l| {
                l.strip_prefix("redis_version:")
                    .map(|v| v.trim().to_string())
            })
            .unwrap_or_default();
        return Ok(version);
    }
    Err(last)
}

/// Reads the slot table from the first of `addrs` that answers.
pub(crate) fn fetch_slots(config: &RedisConfig, addrs: &[String]) -> Result<SlotTable, String> {
    let mut last = String::from("no cluster node address");
    for addr in addrs {
        let mut stream = match connect(addr, config) {
            Ok(s) => s,
            Err(f) => {
                last = f.message;
                continue;
            }
        };
        match call(&mut stream, &[b"CLUSTER", b"SLOTS"]) {
            Ok(reply) => match parse_slots(&reply, addr) {
                Ok(table) => return Ok(table),
                Err(e) => last = format!("CLUSTER SLOTS on {addr}: {e}"),
            },
            Err(e) => last = format!("CLUSTER SLOTS on {addr} failed: {e}"),
        }
    }
    Err(last)
}

fn parse_slots(reply: &[u8], asked: &str) -> Result<SlotTable, String> {
    let bad = |e: resp::ProtocolError| e.to_string();
    let mut t = Tokens::new(reply);
    let ranges = match t.next_token().map_err(bad)? {
        Some(Token::Array(Some(n))) => n,
        Some(Token::Error(e)) => return Err(String::from_utf8_lossy(e).into_owned()),
        _ => return Err("unexpected reply".into()),
    };
    let integer = |t: &mut Tokens<'_>| match t.next_token() {
        Ok(Some(Token::Integer(v))) => Ok(v),
        _ => Err("expected an integer".to_string()),
    };
    let mut table = SlotTable {
        nodes: Vec::new(),
        slot_node: vec![u16::MAX; SLOTS],
        replicas: Vec::new(),
    };
    let host_of = |host: &[u8]| {
        let host = String::from_utf8_lossy(host);
        // Nodes that do not know their own address answer "" or "?": the
        // address we asked is then the one to use.
        if host.is_empty() || host == "?" {
            asked.rsplit_once(':').map_or(asked, |(h, _)| h).to_string()
        } else if host.contains(':') {
            format!("[{host}]")
        } else {
            host.into_owned()
        }
    };
    for _ in 0..ranges {
        let Ok(Some(Token::Array(Some(k)))) = t.next_token() else {
            return Err("expected a slot range".into());
        };
        if k < 3 {
            return Err("slot range without a node".into());
        }
        let start = integer(&mut t)?;
        let end = integer(&mut t)?;
        let Ok(Some(Token::Array(Some(m)))) = t.next_token() else {
            return Err("expected a node".into());
        };
        if m < 2 {
            return Err("node without a port".into());
        }
        let host = host_of(t.bulk().map_err(bad)?.unwrap_or_default());
        let port = integer(&mut t)?;
        for _ in 2..m {
            t.skip_value().map_err(bad)?;
        }
        let mut replicas = Vec::new();
        for _ in 3..k {
            let Ok(Some(Token::Array(Some(m)))) = t.next_token() else {
                return Err("expected a replica".into());
            };
            if m < 2 {
                return Err("replica without a port".into());
            }
            let host = host_of(t.bulk().map_err(bad)?.unwrap_or_default());
            let port = integer(&mut t)?;
            for _ in 2..m {
                t.skip_value().map_err(bad)?;
            }
            replicas.push(format!("{host}:{port}"));
        }
        let addr = format!("{host}:{port}");
        let index = match table.nodes.iter().position(|n| *n == addr) {
            Some(i) => i,
            None => {
                table.nodes.push(addr);
                table.replicas.push(Vec::new());
                table.nodes.len() - 1
            }
        };
        for replica in replicas {
            if !table.replicas[index].contains(&replica) {
                table.replicas[index].push(replica);
            }
        }
        if !(0..SLOTS as i64).contains(&start) || !(start..SLOTS as i64).contains(&end) {
            return Err(format!("invalid slot range {start}-{end}"));
        }
        for slot in start..=end {
            table.slot_node[slot as usize] = index as u16;
        }
    }
    if table.nodes.is_empty() {
        return Err("the cluster serves no slot".into());
    }
    Ok(table)
}

/// The sorted sets of a scan index of `shards` parts: Java's `_indices`
/// alone, or `_indices{<tag>}` for each part, the tag of part `s` chosen
/// (the first of `s`, `s.1`, `s.2`, ...) so that its hash slot falls in
/// the `s`-th of `shards` equal ranges of the slot space. Keys of slots in
/// that range are indexed there, so in a cluster each part lives on the
/// master of (most of) the keys it indexes.
pub(crate) fn index_keys(shards: usize) -> Vec<Vec<u8>> {
    if shards <= 1 {
        return vec![INDEX_KEY.to_vec()];
    }
    (0..shards)
        .map(|s| {
            let range = s * SLOTS / shards..(s + 1) * SLOTS / shards;
            (0usize..)
                .map(|j| {
                    if j == 0 {
                        format!("_indices{{{s}}}")
                    } else {
                        format!("_indices{{{s}.{j}}}")
                    }
                })
                .find(|key| range.contains(&hash_slot(key.as_bytes())))
                .unwrap_or_default()
                .into_bytes()
        })
        .collect()
}

/// The index set that holds `key`: the part of the slot space its slot
/// is in.
fn index_key_of<'a>(index_keys: &'a [Vec<u8>], key: &[u8]) -> &'a [u8] {
    if index_keys.len() == 1 {
        return &index_keys[0];
    }
    &index_keys[hash_slot(key) * index_keys.len() / SLOTS]
}

/// CRC16/XMODEM, the hash of Redis Cluster key slots.
const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// The cluster hash slot of `key`, honouring `{hash tags}`.
pub(crate) fn hash_slot(key: &[u8]) -> usize {
    let mut hashed = key;
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                hashed = &key[open + 1..open + 1 + len];
            }
        }
    }
    let crc = hashed.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ b)]
    });
    usize::from(crc) % SLOTS
}

/// Java's `String.hashCode()`, the score of a key in the hash index.
pub(crate) fn java_hash(key: &str) -> i32 {
    key.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

fn is_auth_error(text: &[u8]) -> bool {
    text.starts_with(b"NOAUTH") || text.starts_with(b"WRONGPASS") || text.starts_with(b"NOPERM")
}

/// The status for an error reply.
fn error_status(text: &[u8]) -> Status {
    if is_auth_error(text) {
        Status::Forbidden
    } else if [
        &b"LOADING"[..],
        b"BUSY",
        b"CLUSTERDOWN",
        b"TRYAGAIN",
        b"MASTERDOWN",
    ]
    .iter()
    .any(|p| text.starts_with(p))
    {
        Status::ServiceUnavailable
    } else {
        Status::Error
    }
}

/// A `MOVED` or `ASK` reply: whether it is `ASK`, the slot and the address.
fn parse_redirect(reply: &[u8]) -> Option<(bool, usize, &str)> {
    let (ask, rest) = if let Some(rest) = reply.strip_prefix(b"-MOVED ") {
        (false, rest)
    } else {
        (true, reply.strip_prefix(b"-ASK ")?)
    };
    let rest = std::str::from_utf8(rest).ok()?.trim_end();
    let (slot, addr) = rest.split_once(' ')?;
    Some((ask, slot.parse().ok()?, addr))
}

/// One command in a node's write buffer.
#[derive(Clone, Copy, Debug)]
struct Cmd {
    start: usize,
    end: usize,
    /// The queued write it belongs to, or [`NO_OP`].
    op: u32,
}

/// A connection to one server, with its buffers.
#[derive(Debug)]
struct Node {
    addr: String,
    stream: Option<TcpStream>,
    retry_at: Option<Instant>,
    backoff: Duration,
    wbuf: Vec<u8>,
    /// How much of `wbuf` has been written to the socket.
    sent: usize,
    cmds: Vec<Cmd>,
    /// The reply to each of `cmds` received so far, as ranges of `rbuf`.
    replies: Vec<(usize, usize)>,
    rbuf: Vec<u8>,
    /// How much of `rbuf` holds received bytes.
    rlen: usize,
    /// Why this round's commands on this node failed.
    failed: Option<Status>,
    /// The node's health as every thread of the store sees it
    /// ([`Health`]).
    down_until: Arc<AtomicU64>,
    epoch: Instant,
    /// Whether connections send `READONLY` (replica reads).
    readonly: bool,
}

impl Node {
    fn new(addr: String, health: &Health, readonly: bool) -> Self {
        Self {
            down_until: health.of(&addr),
            epoch: health.epoch,
            readonly,
            addr,
            stream: None,
            retry_at: None,
            backoff: BACKOFF_START,
            wbuf: Vec::with_capacity(4096),
            sent: 0,
            cmds: Vec::new(),
            replies: Vec::new(),
            rbuf: Vec::new(),
            rlen: 0,
            failed: None,
        }
    }

    fn begin(&mut self, args: usize) -> usize {
        let start = self.wbuf.len();
        resp::write_array_header(&mut self.wbuf, args);
        start
    }

    fn arg(&mut self, arg: &[u8]) {
        resp::write_bulk(&mut self.wbuf, arg);
    }

    fn end(&mut self, start: usize, op: u32) -> usize {
        self.cmds.push(Cmd {
            start,
            end: self.wbuf.len(),
            op,
        });
        self.cmds.len() - 1
    }

    /// Milliseconds since the store's epoch, plus one (0 means healthy).
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    /// Drops the connection and schedules the next attempt, telling the
    /// other threads to leave the node alone until then.
    fn lose_connection(&mut self) -> Status {
        let until = self.now_ms() + self.backoff.as_millis() as u64;
        self.down_until.fetch_max(until, Ordering::Relaxed);
        self.back_off();
        Status::ServiceUnavailable
    }

    /// Drops the connection and schedules this thread's next attempt only
    /// (a refused password is not the node's unresponsiveness).
    fn back_off(&mut self) {
        self.stream = None;
        self.retry_at = Some(Instant::now() + self.backoff);
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
    }

    /// Whether this thread may use the node now: no thread found it
    /// unresponsive, or its backoff ended and this thread won the right
    /// to probe it (for one timeout, during which the others still fail
    /// fast).
    fn gate(&mut self, config: &RedisConfig) -> Result<(), Failure> {
        let until = self.down_until.load(Ordering::Relaxed);
        if until == 0 {
            return Ok(());
        }
        let now = self.now_ms();
        let probe_until = now + config.timeout.as_millis() as u64;
        if now >= until
            && self
                .down_until
                .compare_exchange(until, probe_until, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return Ok(());
        }
        Err(Failure {
            status: Status::ServiceUnavailable,
            message: format!(
                "{} is unresponsive (seen by another thread); retrying later",
                self.addr
            ),
        })
    }

    /// Marks the node healthy for every thread after an answer.
    fn answered(&mut self) {
        if self.down_until.load(Ordering::Relaxed) != 0 {
            self.down_until.store(0, Ordering::Relaxed);
        }
        self.backoff = BACKOFF_START;
    }

    fn ensure_connected(&mut self, config: &RedisConfig) -> Result<(), Failure> {
        if self.stream.is_some() {
            return Ok(());
        }
        if self.retry_at.is_some_and(|at| Instant::now() < at) {
            return Err(Failure {
                status: Status::ServiceUnavailable,
                message: format!("{} is down; retrying later", self.addr),
            });
        }
        self.gate(config)?;
        match connect(&self.addr, config).and_then(|mut stream| {
            if self.readonly {
                readonly(&mut stream, &self.addr)?;
            }
            Ok(stream)
        }) {
            Ok(stream) => {
                self.stream = Some(stream);
                self.retry_at = None;
                Ok(())
            }
            Err(f) => {
                if f.status == Status::ServiceUnavailable {
                    self.lose_connection();
                } else {
                    // The node answered (refusing the password): it is
                    // responsive, whatever this thread's own backoff.
                    self.down_until.store(0, Ordering::Relaxed);
                    self.back_off();
                }
                Err(f)
            }
        }
    }

    /// Writes the unsent part of the write buffer.
    fn send(&mut self, config: &RedisConfig) -> Result<(), Status> {
        if self.sent == self.wbuf.len() {
            return Ok(());
        }
        if self.stream.is_some() {
            self.gate(config).map_err(|f| f.status)?;
        } else {
            self.ensure_connected(config).map_err(|f| f.status)?;
        }
        let Some(stream) = self.stream.as_mut() else {
            return Err(Status::ServiceUnavailable);
        };
        match stream.write_all(&self.wbuf[self.sent..]) {
            Ok(()) => {
                self.sent = self.wbuf.len();
                Ok(())
            }
            Err(_) => Err(self.lose_connection()),
        }
    }

    /// Reads until every sent command has its reply in the read buffer.
    fn receive(&mut self) -> Result<(), Status> {
        while self.replies.len() < self.cmds.len() {
            let pos = self.replies.last().map_or(0, |r| r.1);
            match resp::value_len(&self.rbuf[..self.rlen], pos) {
                Ok(Some(n)) => self.replies.push((pos, pos + n)),
                Ok(None) => self.fill()?,
                Err(_) => return Err(self.lose_connection()),
            }
        }
        self.answered();
        Ok(())
    }

    fn fill(&mut self) -> Result<(), Status> {
        if self.rlen == self.rbuf.len() {
            let size = (self.rbuf.len() * 2).max(READ_CHUNK);
            self.rbuf.resize(size, 0);
        }
        let Some(stream) = self.stream.as_mut() else {
            return Err(Status::ServiceUnavailable);
        };
        match stream.read(&mut self.rbuf[self.rlen..]) {
            Ok(0) => Err(self.lose_connection()),
            Ok(n) => {
                self.rlen += n;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(_) => Err(self.lose_connection()),
        }
    }

    /// Clears the round's buffers, keeping any bytes received past the
    /// last reply.
    fn reset(&mut self) {
        let used = self.replies.last().map_or(0, |r| r.1);
        if self.stream.is_none() || self.failed.is_some() || used >= self.rlen {
            self.rlen = 0;
        } else {
            self.rbuf.copy_within(used..self.rlen, 0);
            self.rlen -= used;
        }
        self.wbuf.clear();
        self.sent = 0;
        self.cmds.clear();
        self.replies.clear();
        self.failed = None;
    }
}

/// The outcome of one queued write.
#[derive(Clone, Copy, Debug)]
struct WriteOp {
    status: Status,
    delete: bool,
    found: bool,
}

impl WriteOp {
    fn outcome(self) -> Status {
        if self.status != Status::Ok {
            self.status
        } else if self.delete && !self.found {
            Status::NotFound
        } else {
            Status::Ok
        }
    }
}

/// One client thread of the redis store.
#[derive(Debug)]
pub(crate) struct Client {
    config: Arc<RedisConfig>,
    health: Arc<Health>,
    nodes: Vec<Node>,
    /// The node of each hash slot (cluster), or empty (standalone).
    slot_node: Vec<u16>,
    /// With replica reads: the node that answers reads for each node in
    /// `nodes` that serves slots (one of its replicas, or itself).
    read_node: Vec<u16>,
    /// Which of a master's replicas this thread reads from (its number).
    replica_choice: usize,
    refresh_due: bool,
    refresh_at: Option<Instant>,
    /// Writes queued and not yet answered.
    ops: Vec<WriteOp>,
    /// Batched writes that failed and have not yet been reported.
    failures: usize,
    failure_status: Status,
    scratch: Vec<u8>,
    scan_keys: Vec<u8>,
    scan_ends: Vec<usize>,
    scan_cmds: Vec<(usize, usize)>,
    /// Sharded scan index: (score, start, end) of each listed key.
    scan_spans: Vec<(i32, usize, usize)>,
    /// Sharded scan index: the merged keys.
    scan_merged: Vec<u8>,
    /// A batched read's commands: (node, index) per key.
    batch_cmds: Vec<(usize, usize)>,
}

impl Client {
    pub(crate) fn new(
        config: Arc<RedisConfig>,
        slots: Option<&SlotTable>,
        health: Arc<Health>,
        thread: usize,
    ) -> Self {
        let nodes = match slots {
            Some(_) => Vec::new(),
            None => vec![Node::new(config.nodes[0].clone(), &health, false)],
        };
        let mut client = Self {
            config,
            health,
            nodes,
            slot_node: Vec::new(),
            read_node: Vec::new(),
            replica_choice: thread,
            refresh_due: false,
            refresh_at: None,
            ops: Vec::new(),
            failures: 0,
            failure_status: Status::Ok,
            scratch: Vec::new(),
            scan_keys: Vec::new(),
            scan_ends: Vec::new(),
            scan_cmds: Vec::new(),
            scan_spans: Vec::new(),
            scan_merged: Vec::new(),
            batch_cmds: Vec::new(),
        };
        if let Some(table) = slots {
            client.slot_node = vec![u16::MAX; SLOTS];
            client.apply(table);
        }
        client
    }

    /// Routes slots (and, with replica reads, reads) as `table` says.
    fn apply(&mut self, table: &SlotTable) {
        let map: Vec<usize> = table.nodes.iter().map(|a| self.node_for(a)).collect();
        for (slot, node) in self.slot_node.iter_mut().zip(&table.slot_node) {
            *slot = match *node {
                u16::MAX => u16::MAX,
                n => map[usize::from(n)] as u16,
            };
        }
        if self.config.read_from_replicas {
            self.read_node = (0..self.nodes.len() as u16).collect();
            for (master, replicas) in map.iter().zip(&table.replicas) {
                if replicas.is_empty() {
                    continue;
                }
                let replica = &replicas[self.replica_choice % replicas.len()];
                let node = self.node_for(replica);
                self.read_node.resize(self.nodes.len(), u16::MAX);
                self.read_node[*master] = node as u16;
            }
        }
    }

    /// Connects to the server now (standalone), so that a thread that
    /// cannot reach it fails at start as Java's `init` does; cluster nodes
    /// are connected when first used.
    pub(crate) fn connected(mut self) -> Result<Self, String> {
        if self.slot_node.is_empty() {
            let config = self.config.clone();
            self.nodes[0]
                .ensure_connected(&config)
                .map_err(|f| f.message)?;
        }
        Ok(self)
    }

    fn route(&self, key: &[u8]) -> usize {
        if self.slot_node.is_empty() {
            return 0;
        }
        match self.slot_node[hash_slot(key)] {
            u16::MAX => 0,
            n => usize::from(n),
        }
    }

    /// The node to read `key` from: its master's replica with replica
    /// reads, its master otherwise.
    fn route_read(&self, key: &[u8]) -> usize {
        let master = self.route(key);
        match self.read_node.get(master) {
            Some(&n) if n != u16::MAX => usize::from(n),
            _ => master,
        }
    }

    fn node_for(&mut self, addr: &str) -> usize {
        if let Some(i) = self.nodes.iter().position(|n| n.addr == addr) {
            return i;
        }
        let readonly = self.config.read_from_replicas;
        self.nodes
            .push(Node::new(addr.to_string(), &self.health, readonly));
        self.nodes.len() - 1
    }

    /// Re-reads the cluster's slot table after a node failed, at most every
    /// [`REFRESH_INTERVAL`].
    fn prepare(&mut self) {
        if !self.refresh_due || self.refresh_at.is_some_and(|at| Instant::now() < at) {
            return;
        }
        let mut addrs: Vec<String> = self.config.nodes.clone();
        addrs.extend(self.nodes.iter().map(|n| n.addr.clone()));
        if let Ok(table) = fetch_slots(&self.config, &addrs) {
            self.apply(&table);
            self.refresh_due = false;
        }
        // Refreshes are at least REFRESH_INTERVAL apart, failed or not: a
        // burst of MOVED replies during a resharding costs one CLUSTER
        // SLOTS per thread per interval.
        self.refresh_at = Some(Instant::now() + REFRESH_INTERVAL);
    }

    /// Sends every node's unsent commands, then reads all their replies.
    fn exchange(&mut self) {
        let config = &*self.config;
        for node in &mut self.nodes {
            if node.failed.is_none() && node.sent < node.wbuf.len() {
                if let Err(status) = node.send(config) {
                    node.failed = Some(status);
                }
            }
        }
        for node in &mut self.nodes {
            if node.failed.is_none() && node.replies.len() < node.cmds.len() {
                if let Err(status) = node.receive() {
                    node.failed = Some(status);
                }
            }
        }
        if !self.slot_node.is_empty() && self.nodes.iter().any(|n| n.failed.is_some()) {
            self.refresh_due = true;
        }
    }

    /// The reply to command `index` on `node`, following cluster
    /// redirections: the node whose read buffer holds it and its range.
    fn reply(&mut self, node: usize, index: usize) -> Result<(usize, (usize, usize)), Status> {
        let (mut n, mut i) = (node, index);
        for _ in 0..=MAX_REDIRECTS {
            let current = &self.nodes[n];
            if let Some(status) = current.failed {
                return Err(status);
            }
            let Some(&(start, end)) = current.replies.get(i) else {
                return Err(Status::ServiceUnavailable);
            };
            let Some((ask, slot, addr)) = parse_redirect(&current.rbuf[start..end]) else {
                return Ok((n, (start, end)));
            };
            let addr = addr.to_string();
            let cmd = current.cmds[i];
            self.scratch.clear();
            self.scratch
                .extend_from_slice(&current.wbuf[cmd.start..cmd.end]);
            let target = self.node_for(&addr);
            if !ask {
                if let Some(owner) = self.slot_node.get_mut(slot) {
                    *owner = target as u16;
                }
                // A MOVED says the map is stale: other slots have probably
                // moved too (a failover moves all of a master's slots).
                self.refresh_due = true;
            }
            let config = &*self.config;
            let t = &mut self.nodes[target];
            if t.failed.is_some() {
                return Err(Status::ServiceUnavailable);
            }
            if ask {
                let start = t.begin(1);
                t.arg(b"ASKING");
                t.end(start, NO_OP);
            }
            let start = t.wbuf.len();
            t.wbuf.extend_from_slice(&self.scratch);
            let resent = t.end(start, NO_OP);
            if let Err(status) = t.send(config).and_then(|()| t.receive()) {
                t.failed = Some(status);
            }
            (n, i) = (target, resent);
        }
        Err(Status::Error)
    }

    /// Records the outcome of every queued write from its replies.
    fn settle(&mut self) {
        for n in 0..self.nodes.len() {
            // Redirections append commands while this runs; those carry
            // NO_OP and are settled through the command they stand for.
            let mut i = 0;
            while i < self.nodes[n].cmds.len() {
                let op = self.nodes[n].cmds[i].op;
                if op != NO_OP {
                    let outcome = match self.reply(n, i) {
                        Err(status) => Err(status),
                        Ok((m, (s, e))) => {
                            match Tokens::new(&self.nodes[m].rbuf[s..e]).next_token() {
                                Ok(Some(Token::Error(text))) => Err(error_status(text)),
                                Ok(Some(Token::Integer(v))) => Ok(v > 0),
                                Ok(Some(_)) => Ok(false),
                                _ => Err(Status::Error),
                            }
                        }
                    };
                    if let Some(w) = self.ops.get_mut(op as usize) {
                        match outcome {
                            Err(status) if w.status == Status::Ok => w.status = status,
                            Err(_) => {}
                            Ok(found) => w.found |= found,
                        }
                    }
                }
                i += 1;
            }
        }
    }

    /// Counts the failed writes among the settled ones, to be reported by
    /// later write operations.
    fn count_failures(&mut self) {
        for w in &self.ops {
            let status = w.outcome();
            if !matches!(status, Status::Ok | Status::NotFound) {
                self.failures += 1;
                self.failure_status = status;
            }
        }
    }

    fn take_failure(&mut self) -> Option<Status> {
        if self.failures > 0 {
            self.failures -= 1;
            Some(self.failure_status)
        } else {
            None
        }
    }

    fn finish(&mut self) {
        for node in &mut self.nodes {
            node.reset();
        }
        self.ops.clear();
    }

    /// Sends and settles everything queued, then runs `then` on the reply
    /// to command `index` of `node`.
    fn round<R>(
        &mut self,
        node: usize,
        index: usize,
        then: impl FnOnce(&[u8]) -> Result<R, Status>,
    ) -> Result<R, Status> {
        self.exchange();
        self.settle();
        self.count_failures();
        let result = self
            .reply(node, index)
            .and_then(|(m, (s, e))| then(&self.nodes[m].rbuf[s..e]));
        self.finish();
        result
    }

    fn queue_read(&mut self, node: usize, key: &[u8], fields: Fields<'_>) -> usize {
        let n = &mut self.nodes[node];
        match fields {
            Fields::Only(names) if !names.is_empty() => {
                let start = n.begin(2 + names.len());
                n.arg(b"HMGET");
                n.arg(key);
                for name in names {
                    n.arg(name.as_bytes());
                }
                n.end(start, NO_OP)
            }
            _ => {
                let start = n.begin(2);
                n.arg(b"HGETALL");
                n.arg(key);
                n.end(start, NO_OP)
            }
        }
    }

    fn queue_write(&mut self, key: &str, values: &Record, op: u32) {
        let node = self.route(key.as_bytes());
        let n = &mut self.nodes[node];
        let start = n.begin(2 + 2 * values.len());
        n.arg(b"HMSET");
        n.arg(key.as_bytes());
        for field in values.iter() {
            n.arg(field.name.as_bytes());
            n.arg(field.value);
        }
        n.end(start, op);
    }

    fn new_op(&mut self, delete: bool) -> u32 {
        self.ops.push(WriteOp {
            status: Status::Ok,
            delete,
            found: false,
        });
        (self.ops.len() - 1) as u32
    }

    /// Queues an insert: `HMSET`, and `ZADD` to the scan index.
    fn queue_insert(&mut self, key: &str, values: &Record, op: u32) {
        self.queue_write(key, values, op);
        if self.config.index != IndexMode::None {
            let mut digits = [0u8; 20];
            let score = match self.config.index {
                IndexMode::Hash => resp::decimal_bytes(i64::from(java_hash(key)), &mut digits),
                _ => b"0",
            };
            let config = self.config.clone();
            let index_key = index_key_of(&config.index_keys, key.as_bytes());
            let node = self.route(index_key);
            let n = &mut self.nodes[node];
            let start = n.begin(4);
            n.arg(b"ZADD");
            n.arg(index_key);
            n.arg(score);
            n.arg(key.as_bytes());
            n.end(start, op);
        }
    }

    /// Queues a delete: `DEL`, and `ZREM` from the scan index.
    fn queue_delete(&mut self, key: &str, op: u32) {
        let node = self.route(key.as_bytes());
        let n = &mut self.nodes[node];
        let start = n.begin(2);
        n.arg(b"DEL");
        n.arg(key.as_bytes());
        n.end(start, op);
        if self.config.index != IndexMode::None {
            let config = self.config.clone();
            let index_key = index_key_of(&config.index_keys, key.as_bytes());
            let node = self.route(index_key);
            let n = &mut self.nodes[node];
            let start = n.begin(3);
            n.arg(b"ZREM");
            n.arg(index_key);
            n.arg(key.as_bytes());
            n.end(start, op);
        }
    }

    /// Sends a batch's queued writes (every node's commands in one
    /// pipeline, each node's keys together) and reads their replies: each
    /// write's outcome into `statuses`, the writes queued before the batch
    /// (`redis.pipeline`) counted as their failures are.
    fn batch_round(&mut self, first: usize, statuses: &mut [Status]) -> Status {
        self.exchange();
        self.settle();
        for index in 0..first.min(self.ops.len()) {
            let status = self.ops[index].outcome();
            if !matches!(status, Status::Ok | Status::NotFound) {
                self.failures += 1;
                self.failure_status = status;
            }
        }
        for (status, write) in statuses
            .iter_mut()
            .zip(&self.ops[first.min(self.ops.len())..])
        {
            *status = write.outcome();
        }
        self.finish();
        batch_status(statuses)
    }

    /// Sends the queued writes when the batch is full; the status of a
    /// write operation.
    fn complete_write(&mut self) -> Status {
        if self.ops.len() < self.config.pipeline {
            return self.take_failure().unwrap_or(Status::BatchedOk);
        }
        self.exchange();
        self.settle();
        let status = if self.config.pipeline == 1 {
            self.ops.first().map_or(Status::Ok, |w| w.outcome())
        } else {
            self.count_failures();
            self.take_failure().unwrap_or(Status::Ok)
        };
        self.finish();
        status
    }
}

/// Whether a read reply holds a record.
fn holds_record(reply: &[u8]) -> bool {
    let mut t = Tokens::new(reply);
    match t.next_token() {
        Ok(Some(Token::Array(Some(len)))) => {
            (0..len).any(|_| matches!(t.next_token(), Ok(Some(Token::Bulk(Some(_))))))
        }
        _ => false,
    }
}

/// Fills `out` from an `HGETALL` or `HMGET` reply.
fn parse_record(reply: &[u8], fields: Fields<'_>, out: &mut Record) -> Status {
    let mut t = Tokens::new(reply);
    let len = match t.next_token() {
        Ok(Some(Token::Array(Some(len)))) => len,
        Ok(Some(Token::Error(text))) => return error_status(text),
        _ => return Status::Error,
    };
    match fields {
        Fields::Only(names) if !names.is_empty() => {
            let mut found = false;
            for name in names.iter().take(len) {
                match t.bulk() {
                    Ok(Some(value)) => {
                        out.push(name, value);
                        found = true;
                    }
                    Ok(None) => {}
                    Err(_) => return Status::Error,
                }
            }
            if found {
                Status::Ok
            } else {
                Status::NotFound
            }
        }
        _ => {
            if len == 0 {
                return Status::NotFound;
            }
            if len % 2 != 0 {
                return Status::Error;
            }
            for _ in 0..len / 2 {
                let (Ok(Some(name)), Ok(Some(value))) = (t.bulk(), t.bulk()) else {
                    return Status::Error;
                };
                let Ok(name) = std::str::from_utf8(name) else {
                    return Status::Error;
                };
                if fields.contains(name) {
                    out.push(name, value);
                }
            }
            Status::Ok
        }
    }
}

impl StoreThread for Client {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        self.prepare();
        let node = self.route_read(op.key.as_bytes());
        let index = self.queue_read(node, op.key.as_bytes(), op.fields);
        self.round(node, index, |reply| Ok(parse_record(reply, op.fields, out)))
            .unwrap_or_else(|status| status)
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        let mode = self.config.index;
        if mode == IndexMode::None {
            return Status::NotImplemented;
        }
        self.prepare();
        let config = self.config.clone();
        let mut cmds = std::mem::take(&mut self.scan_cmds);
        cmds.clear();
        let mut digits = [0u8; 20];
        for index_key in &config.index_keys {
            let node = self.route_read(index_key);
            let n = &mut self.nodes[node];
            let start = n.begin(7);
            if mode == IndexMode::Hash {
                n.arg(b"ZRANGEBYSCORE");
                n.arg(index_key);
                let score = resp::decimal_bytes(i64::from(java_hash(op.start_key)), &mut digits);
                n.arg(score);
                n.arg(b"+inf");
            } else {
                n.arg(b"ZRANGEBYLEX");
                n.arg(index_key);
                resp::write_bulk_parts(&mut n.wbuf, &[b"[", op.start_key.as_bytes()]);
                n.arg(b"+");
            }
            n.arg(b"LIMIT");
            n.arg(b"0");
            n.arg(resp::decimal_bytes(
                op.count.min(i64::MAX as usize) as i64,
                &mut digits,
            ));
            cmds.push((node, n.end(start, NO_OP)));
        }
        self.exchange();
        self.settle();
        self.count_failures();

        let mut keys = std::mem::take(&mut self.scan_keys);
        let mut ends = std::mem::take(&mut self.scan_ends);
        keys.clear();
        ends.clear();
        let mut listed = Ok(());
        for &(node, index) in &cmds {
            listed = self.reply(node, index).and_then(|(m, (s, e))| {
                let mut t = Tokens::new(&self.nodes[m].rbuf[s..e]);
                match t.next_token() {
                    Ok(Some(Token::Array(Some(len)))) => {
                        for _ in 0..len {
                            let Ok(Some(key)) = t.bulk() else {
                                return Err(Status::Error);
                            };
                            keys.extend_from_slice(key);
                            ends.push(keys.len());
                        }
                        Ok(())
                    }
                    Ok(Some(Token::Error(text))) => Err(error_status(text)),
                    _ => Err(Status::Error),
                }
            });
            if listed.is_err() {
                break;
            }
        }
        self.finish();
        self.scan_cmds = cmds;
        if listed.is_ok() && config.index_keys.len() > 1 {
            self.merge_parts(&mut keys, &mut ends, op.count, mode);
        }
        let status = match listed {
            Err(status) => status,
            Ok(()) => self.read_rows(&keys, &ends, op.fields, out),
        };
        self.scan_keys = keys;
        self.scan_ends = ends;
        status
    }

    fn update(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.prepare();
        let op = self.new_op(false);
        self.queue_write(key, values, op);
        self.complete_write()
    }

    fn insert(&mut self, _table: &str, key: &str, values: &Record) -> Status {
        self.prepare();
        let op = self.new_op(false);
        self.queue_insert(key, values, op);
        self.complete_write()
    }

    fn delete(&mut self, _table: &str, key: &str) -> Status {
        self.prepare();
        let op = self.new_op(true);
        self.queue_delete(key, op);
        self.complete_write()
    }

    /// One pipeline per node (cluster: the keys grouped by the node that
    /// serves their slot), one round trip each; not atomic.
    fn insert_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.prepare();
        let first = self.ops.len();
        for (key, values) in batch.iter() {
            let op = self.new_op(false);
            self.queue_insert(key, values, op);
        }
        self.batch_round(first, statuses)
    }

    /// One pipeline per node, as [`insert_batch`](Self::insert_batch).
    fn update_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.prepare();
        let first = self.ops.len();
        for (key, values) in batch.iter() {
            let op = self.new_op(false);
            self.queue_write(key, values, op);
        }
        self.batch_round(first, statuses)
    }

    /// One pipeline per node, as [`insert_batch`](Self::insert_batch).
    fn delete_batch(&mut self, _table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        self.prepare();
        let first = self.ops.len();
        for (key, _) in batch.iter() {
            let op = self.new_op(true);
            self.queue_delete(key, op);
        }
        self.batch_round(first, statuses)
    }

    /// Every key's `HGETALL` or `HMGET` in one pipeline per node (replicas
    /// with replica reads).
    fn read_batch(
        &mut self,
        _table: &str,
        batch: &Batch,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        self.prepare();
        let mut cmds = std::mem::take(&mut self.batch_cmds);
        cmds.clear();
        for (key, _) in batch.iter() {
            let node = self.route_read(key.as_bytes());
            cmds.push((node, self.queue_read(node, key.as_bytes(), fields)));
        }
        self.exchange();
        self.settle();
        self.count_failures();
        for ((status, record), &(node, index)) in statuses.iter_mut().zip(out.iter_mut()).zip(&cmds)
        {
            *status = self
                .reply(node, index)
                .map(|(m, (s, e))| parse_record(&self.nodes[m].rbuf[s..e], fields, record))
                .unwrap_or_else(|status| status);
        }
        self.finish();
        self.batch_cmds = cmds;
        batch_status(statuses)
    }

    fn cleanup(&mut self) -> Result<(), StoreError> {
        if !self.ops.is_empty() {
            self.exchange();
            self.settle();
            self.count_failures();
            self.finish();
        }
        for node in &mut self.nodes {
            node.stream = None;
        }
        let lost = std::mem::take(&mut self.failures);
        if lost > 0 {
            return Err(StoreError::Other(format!(
                "redis: {lost} batched writes failed ({})",
                self.failure_status
            )));
        }
        Ok(())
    }
}

impl Client {
    /// Merges the index parts' answers (each sorted, each at most
    /// `count` keys) into the first `count` keys in index order: byte
    /// order for `lex`; for `hash`, the Java hash score, then byte order,
    /// as Redis orders equal scores.
    fn merge_parts(
        &mut self,
        keys: &mut Vec<u8>,
        ends: &mut Vec<usize>,
        count: usize,
        mode: IndexMode,
    ) {
        let spans = &mut self.scan_spans;
        spans.clear();
        let mut from = 0;
        for &end in ends.iter() {
            let score = match mode {
                IndexMode::Hash => std::str::from_utf8(&keys[from..end]).map_or(0, java_hash),
                _ => 0,
            };
            spans.push((score, from, end));
            from = end;
        }
        spans.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| keys[a.1..a.2].cmp(&keys[b.1..b.2]))
        });
        spans.truncate(count);
        let merged = &mut self.scan_merged;
        merged.clear();
        ends.clear();
        for &(_, from, end) in spans.iter() {
            merged.extend_from_slice(&keys[from..end]);
            ends.push(merged.len());
        }
        std::mem::swap(keys, merged);
    }

    /// Reads the rows of a scan with one round trip per node.
    fn read_rows(
        &mut self,
        keys: &[u8],
        ends: &[usize],
        fields: Fields<'_>,
        out: &mut ScanResult,
    ) -> Status {
        let mut cmds = std::mem::take(&mut self.scan_cmds);
        cmds.clear();
        let mut from = 0;
        for &end in ends {
            let key = &keys[from..end];
            let node = self.route_read(key);
            cmds.push((node, self.queue_read(node, key, fields)));
            from = end;
        }
        self.exchange();
        let mut status = Status::Ok;
        let mut from = 0;
        for (&end, &(node, index)) in ends.iter().zip(&cmds) {
            let key = &keys[from..end];
            from = end;
            let (m, (s, e)) = match self.reply(node, index) {
                Ok(found) => found,
                Err(failed) => {
                    status = failed;
                    break;
                }
            };
            let reply = &self.nodes[m].rbuf[s..e];
            if let Some(Token::Error(text)) = Tokens::new(reply).next_token().ok().flatten() {
                status = error_status(text);
                break;
            }
            if !holds_record(reply) {
                continue;
            }
            let Ok(key) = std::str::from_utf8(key) else {
                status = Status::Error;
                break;
            };
            let row = out.push_row(key);
            let row_status = parse_record(reply, fields, row);
            if row_status != Status::Ok {
                status = row_status;
                break;
            }
        }
        self.finish();
        self.scan_cmds = cmds;
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_slots_match_redis() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        // CRC16/XMODEM("123456789") is 0x31C3, below 16384.
        assert_eq!(hash_slot(b"123456789"), 0x31C3);
        assert_eq!(hash_slot(b"foo"), 12182);
        assert_eq!(hash_slot(b"{user1000}.following"), hash_slot(b"user1000"));
        assert_eq!(hash_slot(b"foo{}{bar}"), hash_slot(b"foo{}{bar}"));
        assert_ne!(hash_slot(b"foo{}{bar}"), hash_slot(b"bar"));
    }

    #[test]
    fn java_string_hash() {
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("a"), 97);
        // "user6284781860667377211".hashCode() in Java.
        let h = "user6284781860667377211"
            .bytes()
            .fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(i32::from(b)));
        assert_eq!(java_hash("user6284781860667377211"), h);
        assert_eq!(java_hash("é"), 0xe9);
    }

    #[test]
    fn redirects_parse() {
        assert_eq!(
            parse_redirect(b"-MOVED 3999 127.0.0.1:6381\r\n"),
            Some((false, 3999, "127.0.0.1:6381"))
        );
        assert_eq!(parse_redirect(b"-ASK 1 h:1\r\n"), Some((true, 1, "h:1")));
        assert_eq!(parse_redirect(b"-ERR x\r\n"), None);
        assert_eq!(parse_redirect(b"+OK\r\n"), None);
    }

    #[test]
    fn slot_tables_parse() {
        let mut reply = Vec::new();
        resp::write_array_header(&mut reply, 2);
        for (lo, hi, port) in [(0i64, 8191i64, 7000i64), (8192, 16383, 7001)] {
            resp::write_array_header(&mut reply, 3);
            resp::write_integer(&mut reply, lo);
            resp::write_integer(&mut reply, hi);
            resp::write_array_header(&mut reply, 3);
            resp::write_bulk(&mut reply, b"");
            resp::write_integer(&mut reply, port);
            resp::write_bulk(&mut reply, b"id");
        }
        let table = parse_slots(&reply, "10.0.0.1:7000").unwrap();
        assert_eq!(table.nodes, vec!["10.0.0.1:7000", "10.0.0.1:7001"]);
        assert_eq!(table.slot_node[0], 0);
        assert_eq!(table.slot_node[16383], 1);
        assert!(parse_slots(
            b"-ERR This instance has cluster support disabled\r\n",
            "h:1"
        )
        .is_err());
    }

    #[test]
    fn index_parts_cover_the_slot_space_in_order() {
        assert_eq!(index_keys(1), vec![b"_indices".to_vec()]);
        for shards in [2, 3, 16, 1024] {
            let keys = index_keys(shards);
            assert_eq!(keys.len(), shards);
            for (s, key) in keys.iter().enumerate() {
                let slot = hash_slot(key);
                assert!(
                    (s * SLOTS / shards..(s + 1) * SLOTS / shards).contains(&slot),
                    "part {s} of {shards}: {} in slot {slot}",
                    String::from_utf8_lossy(key)
                );
                assert_eq!(
                    index_key_of(&keys, key),
                    &key[..],
                    "a part indexes its own slot range"
                );
            }
        }
        let keys = index_keys(16);
        for user in ["user1", "user2", "user999"] {
            let part = index_key_of(&keys, user.as_bytes());
            assert_eq!(
                hash_slot(part) * 16 / SLOTS,
                hash_slot(user.as_bytes()) * 16 / SLOTS
            );
        }
    }

    #[test]
    fn slot_tables_list_each_masters_replicas() {
        let mut reply = Vec::new();
        resp::write_array_header(&mut reply, 2);
        for (lo, hi, port, replicas) in [
            (0i64, 99i64, 7000i64, &[7003i64, 7004][..]),
            (100, 16383, 7001, &[]),
        ] {
            resp::write_array_header(&mut reply, 3 + replicas.len());
            resp::write_integer(&mut reply, lo);
            resp::write_integer(&mut reply, hi);
            for port in std::iter::once(&port).chain(replicas) {
                resp::write_array_header(&mut reply, 4);
                resp::write_bulk(&mut reply, b"127.0.0.1");
                resp::write_integer(&mut reply, *port);
                resp::write_bulk(&mut reply, b"id");
                resp::write_array_header(&mut reply, 0);
            }
        }
        let table = parse_slots(&reply, "127.0.0.1:7000").unwrap();
        assert_eq!(table.nodes, vec!["127.0.0.1:7000", "127.0.0.1:7001"]);
        assert_eq!(
            table.replicas,
            vec![
                vec!["127.0.0.1:7003".to_string(), "127.0.0.1:7004".to_string()],
                vec![]
            ]
        );
    }

    #[test]
    fn record_replies_parse() {
        let mut reply = Vec::new();
        resp::write_array_header(&mut reply, 4);
        for part in [&b"field0"[..], b"v0", b"field1", b"v1"] {
            resp::write_bulk(&mut reply, part);
        }
        let mut out = Record::new();
        assert_eq!(parse_record(&reply, Fields::All, &mut out), Status::Ok);
        assert_eq!(out.get("field1"), Some(&b"v1"[..]));
        let mut out = Record::new();
        assert_eq!(
            parse_record(b"*0\r\n", Fields::All, &mut out),
            Status::NotFound
        );
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            parse_record(b"*2\r\n$-1\r\n$-1\r\n", Fields::Only(&names), &mut out),
            Status::NotFound
        );
        assert_eq!(
            parse_record(b"*2\r\n$-1\r\n$1\r\nx\r\n", Fields::Only(&names), &mut out),
            Status::Ok
        );
        assert_eq!(out.get("b"), Some(&b"x"[..]));
        assert_eq!(
            parse_record(
                b"-NOAUTH Authentication required.\r\n",
                Fields::All,
                &mut out
            ),
            Status::Forbidden
        );
        assert_eq!(
            parse_record(b"*1\r\n:1\r\n", Fields::All, &mut out),
            Status::Error
        );
    }
}
