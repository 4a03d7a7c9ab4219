//! The TCP side both servers share: bind, accept on a thread of its own,
//! one thread per connection up to a cap, and a stop bounded in time.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ycsb_db::{Properties, Property, PropertyError, Store, StoreError, StoreThread, ThreadContext};

use crate::auth::{require_password, Password};
use crate::limits::{Budget, Timed};

/// How long [`ServerHandle::stop`] lets connections finish what they
/// have received before it shuts their sockets down entirely (which
/// ends a write blocked on a client that does not read).
const STOP_GRACE: Duration = Duration::from_secs(2);

/// An error starting or stopping a server.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address is reachable from other hosts and no password is set.
    #[error(transparent)]
    Unprotected(#[from] crate::auth::Unprotected),
    /// The address could not be bound.
    #[error("cannot listen for {protocol} on {addr}: {source}")]
    Bind {
        /// `RESP` or `HTTP`.
        protocol: &'static str,
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Another I/O failure, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A server thread panicked (a bug in a store).
    #[error("a {protocol} server thread panicked")]
    Panicked {
        /// `RESP` or `HTTP`.
        protocol: &'static str,
    },
}

/// Serves one accepted connection; its number is for thread names.
pub(crate) type ConnectionHandler = dyn Fn(TcpStream, usize) + Send + Sync;

/// What the accept loop does with connections beyond the cap.
pub(crate) struct Admission {
    /// The most connections served at once.
    pub(crate) max_connections: usize,
    /// Written to a connection refused for being over the cap, before it
    /// is closed.
    pub(crate) refusal: &'static [u8],
}

/// How a server (RESP or HTTP) behaves; each protocol reads it from its
/// own properties ([`ServerConfig::from_properties`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The table records live in: every RESP key's, the one HTTP's
    /// simpleleveldb endpoints use.
    pub table: String,
    /// The largest single message accepted, in bytes: an HTTP request
    /// body, a RESP bulk string.
    pub max_message: usize,
    /// The most message bytes all connections may hold together.
    pub max_buffered: usize,
    /// The most connections served at once.
    pub max_connections: usize,
    /// How long a client may be idle or slow (zero: forever).
    pub timeout: Duration,
    /// What clients must present before anything else ([`crate::auth`]);
    /// required on an address other than loopback.
    pub password: Option<Password>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            table: "usertable".into(),
            max_message: 64 << 20,
            max_buffered: 256 << 20,
            max_connections: 512,
            timeout: Duration::from_secs(300),
            password: None,
        }
    }
}

/// A protocol's own declarations of what [`ServerConfig`] holds.
pub(crate) struct ConfigProperties {
    pub(crate) table: &'static Property<String>,
    pub(crate) max_message: &'static Property<usize>,
    pub(crate) max_buffered: &'static Property<usize>,
    pub(crate) max_connections: &'static Property<usize>,
    pub(crate) timeout: &'static Property<Duration>,
}

impl ServerConfig {
    /// Reads `protocol`'s properties (`serve.resp.*`, `serve.http.*`): a
    /// table name that is not empty, and limits that are positive (the
    /// password, read from files too, is set with [`Self::with_password`]).
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming an invalid value and its origin.
    pub fn from_properties(props: &Properties, protocol: &Protocol) -> Result<Self, PropertyError> {
        let declared = &protocol.properties;
        let table = props.get_checked(declared.table, |t| {
            if t.is_empty() {
                Err("expected a table name".into())
            } else {
                Ok(())
            }
        })?;
        let positive = |n: &usize| {
            if *n == 0 {
                Err("expected a positive number".to_string())
            } else {
                Ok(())
            }
        };
        Ok(Self {
            table,
            max_message: props.get(declared.max_message)?,
            max_buffered: props.get_checked(declared.max_buffered, positive)?,
            max_connections: props.get_checked(declared.max_connections, positive)?,
            timeout: props.get(declared.timeout)?,
            password: None,
        })
    }

    /// The same configuration, requiring `password` of clients.
    pub fn with_password(mut self, password: Option<Password>) -> Self {
        self.password = password;
        self
    }
}

/// Serves one connection of a protocol: its own store thread (or why the
/// store could not open one), its stream (with the configured timeout),
/// the configuration and the budget all its connections share.
pub(crate) type ServeConnection =
    for<'s> fn(Result<Box<dyn StoreThread + 's>, StoreError>, Timed, &'s ServerConfig, &'s Budget);

/// A protocol [`serve`] speaks: `crate::resp::RESP` or `crate::http::HTTP`.
pub struct Protocol {
    /// `RESP` or `HTTP`.
    pub(crate) name: &'static str,
    /// Written to a connection over the cap before it is closed.
    pub(crate) refusal: &'static [u8],
    /// Serves one connection.
    pub(crate) serve: ServeConnection,
    /// Its declarations of what [`ServerConfig`] holds.
    pub(crate) properties: ConfigProperties,
}

impl std::fmt::Debug for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protocol")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Starts serving `store` over `protocol` on `addr` (port 0 picks a free
/// port; see [`ServerHandle::local_addr`]): the password rule, the
/// connection cap, one budget for the bytes all connections hold. Each
/// protocol's `DEFAULT_ADDR` listens on loopback only. The caller keeps
/// the store and closes it after [`ServerHandle::stop`].
///
/// # Errors
///
/// [`ServeError::Unprotected`] when `addr` is not loopback and the
/// configuration has no password, [`ServeError::Bind`] when the address
/// cannot be bound, [`ServeError::Io`] when the accept thread cannot
/// start.
pub fn serve(
    protocol: &Protocol,
    store: Arc<dyn Store>,
    addr: SocketAddr,
    config: ServerConfig,
) -> Result<ServerHandle, ServeError> {
    require_password(protocol.name, addr, config.password.as_ref())?;
    let admission = Admission {
        max_connections: config.max_connections,
        refusal: protocol.refusal,
    };
    let budget = Budget::new(config.max_buffered);
    let config = Arc::new(config);
    let serve = protocol.serve;
    let handler = move |stream: TcpStream, id: usize| {
        // Replies are small and answer requests: no Nagle delay.
        let _ = stream.set_nodelay(true);
        let stream = Timed::new(stream, Some(config.timeout));
        let thread = store.thread(ThreadContext::new(id, id + 1));
        serve(thread, stream, &config, &budget);
    };
    ServerHandle::start(protocol.name, addr, Arc::new(handler), admission)
}

/// What the accept loop and the handle share.
struct Shared {
    stopping: AtomicBool,
    /// Live connections and the threads serving them. Touched twice per
    /// connection, never per request.
    connections: Mutex<Vec<Connection>>,
}

/// A connection being served.
struct Connection {
    id: usize,
    /// A clone of its stream, to shut it down on stop; the thread serving
    /// it drops this when it ends, so that the socket really closes then.
    stream: Option<TcpStream>,
    thread: JoinHandle<()>,
}

impl Connection {
    fn shutdown(&self, how: Shutdown) {
        if let Some(stream) = &self.stream {
            let _ = stream.shutdown(how);
        }
    }
}

/// Shuts a connection down when its thread ends, even by a panic in a
/// store: the accept loop holds a clone of the socket (to shut it down on
/// stop), so dropping the thread's own handle would not close it.
struct CloseOnDrop(TcpStream);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let _ = self.0.shutdown(Shutdown::Both);
    }
}

/// A running server (RESP or HTTP): its address, its accept thread and its
/// connections. Dropping it stops the server.
pub struct ServerHandle {
    protocol: &'static str,
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("protocol", &self.protocol)
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// Binds `addr` and accepts connections on a thread named after
    /// `protocol`, handing each to `handler` on a thread of its own.
    pub(crate) fn start(
        protocol: &'static str,
        addr: SocketAddr,
        handler: Arc<ConnectionHandler>,
        admission: Admission,
    ) -> Result<Self, ServeError> {
        let listener = TcpListener::bind(addr).map_err(|source| ServeError::Bind {
            protocol,
            addr,
            source,
        })?;
        let local = listener.local_addr().map_err(|source| ServeError::Io {
            context: format!("reading the address bound for {addr}"),
            source,
        })?;
        let shared = Arc::new(Shared {
            stopping: AtomicBool::new(false),
            connections: Mutex::new(Vec::new()),
        });
        let accept_shared = Arc::clone(&shared);
        let name = protocol.to_ascii_lowercase();
        let accept = std::thread::Builder::new()
            .name(format!("{name}-accept"))
            .spawn(move || accept_loop(&name, listener, handler, &admission, accept_shared))
            .map_err(|source| ServeError::Io {
                context: format!("starting the {protocol} accept thread"),
                source,
            })?;
        Ok(Self {
            protocol,
            addr: local,
            shared,
            accept: Some(accept),
        })
    }

    /// The address the server listens on (with the real port when 0 was
    /// asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, closes every connection after the request or
    /// commands it has received and waits for all server threads. A
    /// connection still busy after two seconds (typically writing to a
    /// client that does not read its replies) has its socket shut down
    /// entirely, which ends its thread; so this returns within a few
    /// seconds, unless a store call itself does not return.
    ///
    /// # Errors
    ///
    /// [`ServeError::Panicked`] when a server thread panicked.
    pub fn stop(mut self) -> Result<(), ServeError> {
        self.shutdown()
    }

    /// Stops accepting, shuts the reading side of every connection (an
    /// idle one sees the end of its input, one in progress still answers),
    /// gives them [`STOP_GRACE`], shuts down what is left and waits for
    /// every thread. Calling it again does nothing.
    fn shutdown(&mut self) -> Result<(), ServeError> {
        let Some(accept) = self.accept.take() else {
            return Ok(());
        };
        self.shared.stopping.store(true, Ordering::Release);
        // Wake the blocking accept with a connection of our own.
        let wake = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => {
                SocketAddr::new(Ipv4Addr::LOCALHOST.into(), self.addr.port())
            }
            IpAddr::V6(ip) if ip.is_unspecified() => {
                SocketAddr::new(Ipv6Addr::LOCALHOST.into(), self.addr.port())
            }
            _ => self.addr,
        };
        let _ = TcpStream::connect(wake);
        let mut panicked = accept.join().is_err();
        let connections = std::mem::take(
            &mut *self
                .shared
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for c in &connections {
            c.shutdown(Shutdown::Read);
        }
        let grace = Instant::now() + STOP_GRACE;
        while Instant::now() < grace && connections.iter().any(|c| !c.thread.is_finished()) {
            std::thread::sleep(Duration::from_millis(10));
        }
        for c in &connections {
            if !c.thread.is_finished() {
                c.shutdown(Shutdown::Both);
            }
        }
        for c in connections {
            panicked |= c.thread.join().is_err();
        }
        if panicked {
            Err(ServeError::Panicked {
                protocol: self.protocol,
            })
        } else {
            Ok(())
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

fn accept_loop(
    name: &str,
    listener: TcpListener,
    handler: Arc<ConnectionHandler>,
    admission: &Admission,
    shared: Arc<Shared>,
) {
    let mut next_id = 0usize;
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::Acquire) {
            break;
        }
        let Ok(stream) = stream else {
            // Failed handshakes and exhausted descriptors are transient:
            // keep accepting, without spinning while descriptors are out.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        // Spawning under the lock: a thread that ends at once still finds
        // its entry to drop its stream's clone.
        let mut connections = shared
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        connections.retain(|c| !c.thread.is_finished());
        if connections.len() >= admission.max_connections {
            drop(connections);
            refuse(stream, admission.refusal);
            continue;
        }
        let (Ok(handle_copy), Ok(closer)) = (stream.try_clone(), stream.try_clone()) else {
            continue;
        };
        let id = next_id;
        next_id += 1;
        let handler = Arc::clone(&handler);
        let thread_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(format!("{name}-conn-{id}"))
            .spawn(move || {
                let _closer = CloseOnDrop(closer);
                handler(stream, id);
                let mut connections = thread_shared
                    .connections
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if let Some(c) = connections.iter_mut().find(|c| c.id == id) {
                    c.stream = None;
                }
            });
        if let Ok(thread) = spawned {
            connections.push(Connection {
                id,
                stream: Some(handle_copy),
                thread,
            });
        }
    }
}

/// Answers a connection over the cap with `refusal` and closes it,
/// without ever blocking the accept loop: what the client already sent
/// is read first (so that closing does not reset the connection before
/// the refusal is read), and nothing waits on the client.
fn refuse(mut stream: TcpStream, refusal: &[u8]) {
    use std::io::{Read, Write};
    if stream.set_nonblocking(true).is_ok() {
        let mut sink = [0u8; 4096];
        for _ in 0..16 {
            match stream.read(&mut sink) {
                Ok(n) if n > 0 => {}
                _ => break,
            }
        }
        let _ = stream.write(refusal);
    }
    let _ = stream.shutdown(Shutdown::Write);
}
