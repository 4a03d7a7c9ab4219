//! One client thread: its member connection, token and reused buffers.

use std::time::Duration;

use ycsb_db::{
    batch_status, codec, Batch, Fields, ReadOp, Record, ScanOp, ScanResult, Status, StoreThread,
};

use crate::client::{Client, Failure};
use crate::json;
use crate::EtcdConfig;

/// How often an update's read-modify-write is retried when another client
/// changed the record between the read and the write.
const UPDATE_ATTEMPTS: u32 = 32;

/// The most operations one `Txn` may hold: etcd's default
/// `--max-txn-ops`. A larger batch of inserts is sent as several.
const MAX_TXN_OPS: usize = 128;

/// gRPC status codes the gateway reports.
mod grpc {
    pub const INVALID_ARGUMENT: i64 = 3;
    pub const DEADLINE_EXCEEDED: i64 = 4;
    pub const NOT_FOUND: i64 = 5;
    pub const PERMISSION_DENIED: i64 = 7;
    pub const RESOURCE_EXHAUSTED: i64 = 8;
    pub const OUT_OF_RANGE: i64 = 11;
    pub const UNAVAILABLE: i64 = 14;
    pub const UNAUTHENTICATED: i64 = 16;
}

/// A client thread of the etcd store.
pub(crate) struct EtcdThread<'a> {
    config: &'a EtcdConfig,
    client: Client,
    /// The etcd key: `<table>/<key>`.
    key: Vec<u8>,
    /// A scan's end key: the table prefix's successor.
    range_end: Vec<u8>,
    /// The request body.
    request: Vec<u8>,
    /// A value decoded from base64.
    value: Vec<u8>,
    /// An update's merged record, or an insert's encoding.
    encoded: Vec<u8>,
    /// An update's read revision.
    revision: String,
    /// Consecutive operations that found no member: they back off.
    unreachable_streak: u32,
    last_error: Option<String>,
}

/// What an operation's request came to.
enum Outcome {
    /// 200: the body is in the client.
    Answered,
    /// Anything else, as a status.
    Failed(Status),
}

impl<'a> EtcdThread<'a> {
    /// A thread that starts on member `first` (or the next reachable one).
    pub(crate) fn connect(config: &'a EtcdConfig, first: usize) -> Result<Self, String> {
        let mut client = Client::new(first);
        client.connect_any(config)?;
        Ok(Self {
            config,
            client,
            key: Vec::with_capacity(64),
            range_end: Vec::with_capacity(64),
            request: Vec::with_capacity(4096),
            value: Vec::with_capacity(4096),
            encoded: Vec::with_capacity(4096),
            revision: String::new(),
            unreachable_streak: 0,
            last_error: None,
        })
    }

    fn set_key(&mut self, table: &str, key: &str) {
        self.key.clear();
        self.key.extend_from_slice(table.as_bytes());
        self.key.push(b'/');
        self.key.extend_from_slice(key.as_bytes());
    }

    /// Posts the rendered request, re-authenticating once when the token
    /// expired, and maps failures to statuses.
    fn call(&mut self, path: &str) -> Outcome {
        if self.unreachable_streak >= self.config.endpoints.len() as u32 {
            // Every member failed in turn: do not hammer a dead cluster.
            let shift = (self.unreachable_streak / self.config.endpoints.len() as u32).min(5);
            std::thread::sleep(Duration::from_millis(50 << shift).min(Duration::from_secs(1)));
        }
        for attempt in 0..2 {
            let answer = match self.client.post(self.config, path, &self.request) {
                Ok(answer) => answer,
                Err(failure) => return self.failed(failure),
            };
            self.unreachable_streak = 0;
            if answer.code == 200 {
                return Outcome::Answered;
            }
            let error = json::error_of(&self.client.body);
            if error.code == grpc::UNAUTHENTICATED
                && attempt == 0
                && self.config.credentials.is_some()
            {
                // Simple tokens expire after --auth-token-ttl of idleness.
                if let Err(failure) = self.client.refresh_token(self.config) {
                    return self.failed(failure);
                }
                continue;
            }
            let status = match error.code {
                grpc::UNAVAILABLE | grpc::DEADLINE_EXCEEDED => Status::ServiceUnavailable,
                grpc::UNAUTHENTICATED | grpc::PERMISSION_DENIED => Status::Forbidden,
                // etcd 3.4 answers a request without a token, when
                // authentication is on, with InvalidArgument.
                grpc::INVALID_ARGUMENT if error.message.ends_with("user name is empty") => {
                    Status::Forbidden
                }
                grpc::INVALID_ARGUMENT | grpc::OUT_OF_RANGE | grpc::RESOURCE_EXHAUSTED => {
                    Status::BadRequest
                }
                grpc::NOT_FOUND => Status::NotFound,
                _ if answer.code == 503 || answer.code == 504 => Status::ServiceUnavailable,
                _ => Status::Error,
            };
            if status == Status::ServiceUnavailable {
                // No leader, or this member is cut off: try another one.
                self.client.next_member(self.config);
            }
            self.last_error = Some(format!(
                "{}: {} (HTTP {}, gRPC code {})",
                path, error.message, answer.code, error.code
            ));
            return Outcome::Failed(status);
        }
        Outcome::Failed(Status::Forbidden)
    }

    fn failed(&mut self, failure: Failure) -> Outcome {
        self.last_error = Some(failure.to_string());
        match failure {
            Failure::Unreachable(_) => {
                self.unreachable_streak += 1;
                self.client.next_member(self.config);
                Outcome::Failed(Status::ServiceUnavailable)
            }
            Failure::Protocol(_) => Outcome::Failed(Status::Error),
        }
    }

    /// Asks for the keys from `self.key` (up to `self.range_end` when
    /// `to_end`, else that key alone), at most `limit` (0: no limit); the
    /// answer is the client's body.
    fn send_range(&mut self, to_end: bool, limit: usize) -> Result<(), Status> {
        json::range(
            &mut self.request,
            &self.key,
            to_end.then_some(self.range_end.as_slice()),
            limit,
            self.config.serializable_reads,
        );
        match self.call("/v3/kv/range") {
            Outcome::Answered => Ok(()),
            Outcome::Failed(status) => Err(status),
        }
    }

    /// Reads the record at `self.key` into `self.value` (its encoding) and
    /// `self.revision`.
    fn get(&mut self) -> Status {
        if let Err(status) = self.send_range(false, 0) {
            return status;
        }
        let Ok(answer) = serde_json::from_slice::<json::RangeAnswer<'_>>(&self.client.body) else {
            return self.malformed("range");
        };
        let Some(kv) = answer.kvs.first() else {
            return Status::NotFound;
        };
        self.value.clear();
        if json::decode_b64(&kv.value, &mut self.value).is_err() {
            return Status::UnexpectedState;
        }
        self.revision.clear();
        self.revision.push_str(&kv.mod_revision);
        Status::Ok
    }

    fn malformed(&mut self, what: &str) -> Status {
        self.last_error = Some(format!(
            "unexpected {what} answer: {}",
            String::from_utf8_lossy(&self.client.body[..self.client.body.len().min(200)])
        ));
        Status::Error
    }
}

impl StoreThread for EtcdThread<'_> {
    fn read(&mut self, op: &ReadOp<'_>, out: &mut Record) -> Status {
        self.set_key(op.table, op.key);
        match self.get() {
            Status::Ok => codec::read_into(&self.value, op.fields, out),
            other => other,
        }
    }

    fn scan(&mut self, op: &ScanOp<'_>, out: &mut ScanResult) -> Status {
        if op.count == 0 {
            return Status::Ok;
        }
        self.set_key(op.table, op.start_key);
        // Every key of the table starts with "<table>/"; the prefix with
        // '/' raised to '0' is the first key past them.
        self.range_end.clear();
        self.range_end.extend_from_slice(op.table.as_bytes());
        self.range_end.push(b'/' + 1);
        if let Err(status) = self.send_range(true, op.count) {
            return status;
        }
        let Ok(answer) = serde_json::from_slice::<json::RangeAnswer<'_>>(&self.client.body) else {
            return self.malformed("range");
        };
        let prefix = op.table.len() + 1;
        let mut status = Status::Ok;
        for kv in answer.kvs.iter().take(op.count) {
            self.key.clear();
            self.value.clear();
            if json::decode_b64(&kv.key, &mut self.key).is_err()
                || json::decode_b64(&kv.value, &mut self.value).is_err()
            {
                return Status::UnexpectedState;
            }
            let Some(row_key) = self
                .key
                .get(prefix..)
                .and_then(|k| std::str::from_utf8(k).ok())
            else {
                return Status::UnexpectedState;
            };
            let row = codec::read_into(&self.value, op.fields, out.push_row(row_key));
            if !row.is_ok() {
                status = row;
            }
        }
        status
    }

    fn update(&mut self, table: &str, key: &str, values: &Record) -> Status {
        self.set_key(table, key);
        for _ in 0..UPDATE_ATTEMPTS {
            let read = self.get();
            if !read.is_ok() {
                return read;
            }
            self.encoded.clear();
            if codec::merge(&self.value, values, &mut self.encoded).is_err() {
                return Status::UnexpectedState;
            }
            json::put_if_unchanged(&mut self.request, &self.key, &self.revision, &self.encoded);
            if let Outcome::Failed(status) = self.call("/v3/kv/txn") {
                return status;
            }
            match serde_json::from_slice::<json::TxnAnswer>(&self.client.body) {
                Ok(answer) if answer.succeeded => return Status::Ok,
                // Another client wrote the record since the read: again.
                Ok(_) => continue,
                Err(_) => return self.malformed("txn"),
            }
        }
        self.last_error = Some(format!(
            "update of {key} lost {UPDATE_ATTEMPTS} races with other writers"
        ));
        Status::Error
    }

    fn insert(&mut self, table: &str, key: &str, values: &Record) -> Status {
        self.set_key(table, key);
        self.encoded.clear();
        codec::encode(values, &mut self.encoded);
        json::put(&mut self.request, &self.key, &self.encoded);
        match self.call("/v3/kv/put") {
            Outcome::Answered => Status::Ok,
            Outcome::Failed(status) => status,
        }
    }

    fn delete(&mut self, table: &str, key: &str) -> Status {
        self.set_key(table, key);
        json::delete(&mut self.request, &self.key);
        if let Outcome::Failed(status) = self.call("/v3/kv/deleterange") {
            return status;
        }
        match serde_json::from_slice::<json::DeleteAnswer>(&self.client.body) {
            Ok(answer) if answer.deleted > 0 => Status::Ok,
            Ok(_) => Status::NotFound,
            Err(_) => self.malformed("deleterange"),
        }
    }

    /// One `Txn` of puts per 128 records (etcd's default
    /// `--max-txn-ops`): a batch of up to 128 is one atomic request, a
    /// larger one several. The keys of a batch of inserts are distinct (etcd
    /// refuses a `Txn` that puts one key twice).
    fn insert_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        for chunk in txn_chunks(batch.len()) {
            self.render_txn(table, batch, chunk.clone(), |request, first, key, index| {
                json::txn_put(request, first, key, codec::encoded(batch.record(index)));
            });
            let status = match self.call("/v3/kv/txn") {
                Outcome::Answered => Status::Ok,
                Outcome::Failed(status) => status,
            };
            for slot in statuses.iter_mut().take(chunk.end).skip(chunk.start) {
                *slot = status;
            }
        }
        batch_status(statuses)
    }

    /// One `Txn` of single-key ranges per 128 keys: each key is answered
    /// as [`read`](StoreThread::read) answers it (a missing one NOT_FOUND),
    /// from one revision of the store per `Txn`.
    fn read_batch(
        &mut self,
        table: &str,
        batch: &Batch,
        fields: Fields<'_>,
        out: &mut [Record],
        statuses: &mut [Status],
    ) -> Status {
        let serializable = self.config.serializable_reads;
        for chunk in txn_chunks(batch.len()) {
            self.render_txn(table, batch, chunk.clone(), |request, first, key, _| {
                json::txn_range(request, first, key, serializable);
            });
            let answered = self.txn_answers(chunk, statuses, |thread, index, answer| {
                let Some(range) = &answer.response_range else {
                    return Status::Error;
                };
                let Some(kv) = range.kvs.first() else {
                    return Status::NotFound;
                };
                thread.value.clear();
                if json::decode_b64(&kv.value, &mut thread.value).is_err() {
                    return Status::UnexpectedState;
                }
                codec::read_into(&thread.value, fields, &mut out[index])
            });
            if !answered {
                break;
            }
        }
        batch_status(&statuses[..batch.len()])
    }

    /// One `Txn` of single-key deletes per 128 keys (atomic within each),
    /// each key answered as [`delete`](StoreThread::delete) answers it.
    fn delete_batch(&mut self, table: &str, batch: &Batch, statuses: &mut [Status]) -> Status {
        for chunk in txn_chunks(batch.len()) {
            self.render_txn(table, batch, chunk.clone(), |request, first, key, _| {
                json::txn_delete(request, first, key);
            });
            let answered = self.txn_answers(chunk, statuses, |_, _, answer| {
                match &answer.response_delete_range {
                    Some(deleted) if deleted.deleted > 0 => Status::Ok,
                    Some(_) => Status::NotFound,
                    None => Status::Error,
                }
            });
            if !answered {
                break;
            }
        }
        batch_status(&statuses[..batch.len()])
    }

    fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

/// A batch's entries `MAX_TXN_OPS` at a time, one `Txn` each.
fn txn_chunks(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..len)
        .step_by(MAX_TXN_OPS)
        .map(move |start| start..(start + MAX_TXN_OPS).min(len))
}

impl EtcdThread<'_> {
    /// Renders the `Txn` of the entries `chunk` of `batch` as the request:
    /// `operation` writes each entry's (given the request, whether the
    /// entry is the first, its etcd key and its index).
    fn render_txn(
        &mut self,
        table: &str,
        batch: &Batch,
        chunk: std::ops::Range<usize>,
        mut operation: impl FnMut(&mut Vec<u8>, bool, &[u8], usize),
    ) {
        json::txn_puts_start(&mut self.request);
        for index in chunk.clone() {
            self.set_key(table, batch.key(index));
            operation(&mut self.request, index == chunk.start, &self.key, index);
        }
        json::txn_end(&mut self.request);
    }

    /// Posts the `Txn` rendered in the request for the entries `range` of
    /// a batch and files each entry's status from its answer (`answer`
    /// gets the thread, the entry's index and its response). A failed
    /// request fails every entry of the batch from `range.start` on, and
    /// returns false: the rest of the batch is not sent.
    fn txn_answers(
        &mut self,
        range: std::ops::Range<usize>,
        statuses: &mut [Status],
        mut answer: impl FnMut(&mut Self, usize, &json::TxnResponse<'_>) -> Status,
    ) -> bool {
        let failure = match self.call("/v3/kv/txn") {
            Outcome::Failed(status) => status,
            Outcome::Answered => {
                let body = std::mem::take(&mut self.client.body);
                let parsed = serde_json::from_slice::<json::TxnResponses<'_>>(&body);
                let filed = match &parsed {
                    Ok(answers) if answers.responses.len() == range.len() => {
                        for (index, response) in range.clone().zip(&answers.responses) {
                            statuses[index] = answer(self, index, response);
                        }
                        true
                    }
                    _ => false,
                };
                drop(parsed);
                self.client.body = body;
                if filed {
                    return true;
                }
                self.malformed("txn")
            }
        };
        for status in &mut statuses[range.start..] {
            *status = failure;
        }
        false
    }
}
