//! What bounds a server's memory and time: the input budget all of a
//! server's connections share, and a stream that gives up on a client
//! that is idle or too slow.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Bytes of client input that all connections of one server may hold
/// together (read buffers and request bodies).
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicUsize,
    limit: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            used: AtomicUsize::new(0),
            limit,
        }
    }

    /// The bytes still free.
    pub(crate) fn available(&self) -> usize {
        self.limit.saturating_sub(self.used.load(Ordering::Relaxed))
    }

    /// The configured limit.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    fn take(&self, bytes: usize) -> bool {
        let before = self.used.fetch_add(bytes, Ordering::AcqRel);
        if before.saturating_add(bytes) > self.limit {
            self.used.fetch_sub(bytes, Ordering::AcqRel);
            false
        } else {
            true
        }
    }

    fn give(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// One connection's share of a [`Budget`]; released when dropped.
#[derive(Debug)]
pub(crate) struct Charge<'b> {
    budget: &'b Budget,
    held: usize,
}

impl<'b> Charge<'b> {
    pub(crate) fn new(budget: &'b Budget) -> Self {
        Self { budget, held: 0 }
    }

    /// Holds `bytes` from now on; `false` (and nothing changed) when the
    /// budget cannot afford the increase.
    pub(crate) fn hold(&mut self, bytes: usize) -> bool {
        if bytes > self.held {
            if !self.budget.take(bytes - self.held) {
                return false;
            }
        } else {
            self.budget.give(self.held - bytes);
        }
        self.held = bytes;
        true
    }

    /// The bytes this charge holds.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// The bytes the budget has still free (for anyone).
    pub(crate) fn available(&self) -> usize {
        self.budget.available()
    }
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        self.budget.give(self.held);
    }
}

/// A client stream whose reads give up (`TimedOut`) when the client
/// stays silent for `timeout`, or when a command or request that started
/// arriving is not complete within about twice `timeout`: the deadline is
/// armed by the first byte after [`Timed::rearm`] and checked after each
/// read, whose own wait the socket's read timeout bounds. Writes block
/// for at most `timeout` each (the socket's write timeout).
#[derive(Debug)]
pub(crate) struct Timed {
    pub(crate) stream: TcpStream,
    timeout: Option<Duration>,
    deadline: Option<Instant>,
}

impl Timed {
    /// Wraps `stream`, setting its socket timeouts (`None` or zero: none).
    pub(crate) fn new(stream: TcpStream, timeout: Option<Duration>) -> Self {
        let timeout = timeout.filter(|t| !t.is_zero());
        let _ = stream.set_read_timeout(timeout);
        let _ = stream.set_write_timeout(timeout);
        Self {
            stream,
            timeout,
            deadline: None,
        }
    }

    /// A new command or request may start: its deadline is armed by the
    /// next byte read.
    pub(crate) fn rearm(&mut self) {
        self.deadline = None;
    }
}

/// Whether an I/O error is a timeout of [`Timed`] or of the socket.
pub(crate) fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.stream.read(buf)?;
        if let Some(timeout) = self.timeout {
            let now = Instant::now();
            match self.deadline {
                Some(deadline) if now > deadline => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client is too slow",
                    ))
                }
                None if n > 0 => self.deadline = Some(now + timeout),
                _ => {}
            }
        }
        Ok(n)
    }
}

impl Write for Timed {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// Closes our side and drains what the client still sends, briefly, so
/// that closing with unread input (which makes the kernel send a reset)
/// cannot destroy an error answer before the client reads it.
pub(crate) fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 8192];
    let mut drained = 0usize;
    while drained < (4 << 20) {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_bounded_and_released() {
        let budget = Budget::new(100);
        let mut a = Charge::new(&budget);
        let mut b = Charge::new(&budget);
        assert!(a.hold(60));
        assert!(!b.hold(50));
        assert!(b.hold(40));
        assert_eq!(budget.available(), 0);
        assert!(a.hold(10));
        assert_eq!(budget.available(), 50);
        drop(a);
        drop(b);
        assert_eq!(budget.available(), 100);
    }
}
