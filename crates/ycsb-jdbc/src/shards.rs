//! What a client thread does alike on every server: one connection per
//! shard, made when first used, dropped when lost and made again after a
//! backoff; the writes each has not committed (without autocommit); the
//! names that may go into SQL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ycsb_db::Status;

use crate::{is_identifier, shard_of, JdbcConfig, Shard};

/// How long a shard that failed is left alone before the next attempt to
/// reconnect: doubling from the first to the last.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const LAST_BACKOFF: Duration = Duration::from_secs(1);

/// A server connection a thread keeps per shard.
pub(crate) trait ShardConnection: Sized {
    /// Connects to `shard` with the store's settings (a transaction begun
    /// without autocommit).
    ///
    /// # Errors
    ///
    /// Why the server cannot be reached or refused the login, as a line.
    fn connect(shard: &Shard, config: &JdbcConfig) -> Result<Self, String>;
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
pub(crate) struct Shards<C> {
    config: Arc<JdbcConfig>,
    nodes: Vec<Node<C>>,
}

impl<C: ShardConnection> Shards<C> {
    /// No connection yet: each shard is connected when first used.
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
        Self { config, nodes }
    }

    /// How many shards.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The shard of `key`, as Java shards keys.
    pub(crate) fn of(&self, key: &str) -> usize {
        shard_of(key, self.nodes.len())
    }

    /// Shard `i`'s connection, made if its backoff has passed; while it
    /// has not, or when the attempt fails (why, in `last_error`),
    /// `SERVICE_UNAVAILABLE`.
    pub(crate) fn connected(
        &mut self,
        i: usize,
        last_error: &mut Option<String>,
    ) -> Result<&mut C, Status> {
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
    pub(crate) fn conn(&mut self, i: usize) -> Option<&mut C> {
        self.nodes[i].conn.as_mut()
    }

    /// Drops shard `i`'s connection (lost): the next attempt waits for
    /// the backoff, which doubles.
    pub(crate) fn lose(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        node.conn = None;
        node.retry_at = Instant::now() + node.backoff;
        node.backoff = (node.backoff * 2).min(LAST_BACKOFF);
    }

    /// Counts a write on shard `i`: whether it must commit now (without
    /// autocommit, after every write, or every `db.batchsize` writes).
    pub(crate) fn count_write(&mut self, i: usize) -> bool {
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
    pub(crate) fn forget_writes(&mut self, i: usize) {
        self.nodes[i].uncommitted = 0;
    }

    /// Takes every shard's connection, with its shard's number (the
    /// thread's end).
    pub(crate) fn take_all(&mut self) -> Vec<(usize, C)> {
        self.nodes
            .iter_mut()
            .enumerate()
            .filter_map(|(i, node)| node.conn.take().map(|c| (i, c)))
            .collect()
    }
}

/// Checks the table's and the fields' names, which go into SQL unquoted:
/// why one cannot, as a line.
pub(crate) fn check_names<'a>(
    table: &str,
    mut fields: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
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
