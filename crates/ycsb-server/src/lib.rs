//! Serves any embedded store over the network, so that the same engine can
//! be measured embedded and over TCP side by side (`ycsb serve`).
//!
//! [`resp`] speaks the subset of the Redis protocol that the `redis` store,
//! `redis-cli` and `redis-benchmark -t set,get` use; [`http`] serves
//! simpleleveldb-style (`/get`, `/put`, `/del`, ...) and WebDAV-style
//! (`GET`/`PUT`/`DELETE /<table>/<key>`) requests. Both run one thread per
//! connection, each with its own store thread, and listen on 127.0.0.1
//! unless given another address; any other address needs a password
//! ([`auth`]).

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

pub mod auth;
pub mod http;
mod limits;
mod listener;
pub mod resp;

pub use listener::{serve, Protocol, ServeError, ServerConfig, ServerHandle};

use ycsb_db::{Fields, ReadOp, Record, Status, StoreThread};

/// Reads every field of the record at `key` in `table` into `record`,
/// cleared first: what each protocol's read of a whole record asks the
/// store (RESP's `GET`, `HGETALL`, `HMGET`; HTTP's gets and scans).
fn read_whole_record(
    thread: &mut dyn StoreThread,
    table: &str,
    key: &str,
    record: &mut Record,
) -> Status {
    record.clear();
    let op = ReadOp {
        table,
        key,
        fields: Fields::All,
    };
    thread.read(&op, record)
}
