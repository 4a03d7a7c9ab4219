//! The TCP side both servers share: bind, accept on a thread of its own,
//! one thread per connection, and a clean stop.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// An error starting or stopping a server.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
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

/// What the accept loop and the handle share.
struct Shared {
    stopping: AtomicBool,
    /// Live connections (a clone of each stream, to shut them down on
    /// stop) and the threads serving them. Touched once per connection,
    /// never per request.
    connections: Mutex<Vec<(TcpStream, JoinHandle<()>)>>,
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
            .spawn(move || accept_loop(&name, listener, handler, accept_shared))
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
    /// commands it has received and waits for all server threads.
    ///
    /// # Errors
    ///
    /// [`ServeError::Panicked`] when a server thread panicked.
    pub fn stop(mut self) -> Result<(), ServeError> {
        self.shutdown()
    }

    /// Stops accepting, shuts the reading side of every connection (an
    /// idle one sees the end of its input, one in progress still answers)
    /// and waits for every thread. Calling it again does nothing.
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
        for (stream, _) in &connections {
            let _ = stream.shutdown(Shutdown::Read);
        }
        for (_, thread) in connections {
            panicked |= thread.join().is_err();
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
            std::thread::sleep(std::time::Duration::from_millis(10));
            continue;
        };
        let (Ok(handle_copy), Ok(closer)) = (stream.try_clone(), stream.try_clone()) else {
            continue;
        };
        let id = next_id;
        next_id += 1;
        let handler = Arc::clone(&handler);
        let spawned = std::thread::Builder::new()
            .name(format!("{name}-conn-{id}"))
            .spawn(move || {
                let _closer = CloseOnDrop(closer);
                handler(stream, id);
            });
        let mut connections = shared
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        connections.retain(|(_, t)| !t.is_finished());
        if let Ok(thread) = spawned {
            connections.push((handle_copy, thread));
        }
    }
}
