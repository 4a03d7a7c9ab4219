//! Child processes of a cell: spawning with CPU pinning, a memory cgroup
//! and death with the xtask; `/proc` sampling; servers on loopback.

use std::ffi::CString;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::error::{Context as _, ExperimentError, Result};

/// A memory cgroup (v2 or v1) a cell's client runs in; removed on drop.
pub struct Cgroup {
    dir: PathBuf,
    procs: CString,
    version: u8,
}

fn own_cgroup_path(controller_v1: Option<&str>) -> String {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        match controller_v1 {
            None if ctrls.is_empty() => return path.to_string(),
            Some(c) if ctrls.split(',').any(|x| x == c) => return path.to_string(),
            _ => {}
        }
    }
    "/".into()
}

impl Cgroup {
    /// Creates a cgroup below this process's own, limited to `bytes` of
    /// memory including page cache (and no swap, where the host allows
    /// setting it).
    ///
    /// # Errors
    /// No memory controller is mounted, or it is not writable (root is
    /// needed).
    pub fn create(name: &str, bytes: u64) -> Result<Cgroup> {
        let v2_root = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
            .into_iter()
            .map(Path::new)
            .find(|p| {
                std::fs::read_to_string(p.join("cgroup.controllers"))
                    .map(|c| c.split_whitespace().any(|x| x == "memory"))
                    .unwrap_or(false)
            });
        let (dir, version) = if let Some(root) = v2_root {
            let parent = root.join(own_cgroup_path(None).trim_start_matches('/'));
            // A v2 child only gets a memory controller its parent delegates.
            let _ = std::fs::write(parent.join("cgroup.subtree_control"), "+memory");
            (parent.join(name), 2)
        } else if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
            let parent = Path::new("/sys/fs/cgroup/memory")
                .join(own_cgroup_path(Some("memory")).trim_start_matches('/'));
            (parent.join(name), 1)
        } else {
            return Err(ExperimentError::Cgroup("memory_limit: no memory cgroup controller is mounted (looked for cgroup v2 at /sys/fs/cgroup and v1 at /sys/fs/cgroup/memory)".into()));
        };
        if let Err(e) = std::fs::create_dir(&dir) {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(ExperimentError::Cgroup(format!(
                    "memory_limit: cannot create cgroup {}: {e} (creating cgroups needs root)",
                    dir.display()
                )));
            }
        }
        let procs = dir.join("cgroup.procs");
        let cg = Cgroup {
            procs: CString::new(procs.as_os_str().as_encoded_bytes()).map_err(|_| {
                ExperimentError::Cgroup(format!(
                    "memory_limit: the cgroup path {} holds a NUL byte",
                    procs.display()
                ))
            })?,
            dir,
            version,
        };
        let (limit, swap) = if version == 2 {
            ("memory.max", "memory.swap.max")
        } else {
            ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
        };
        if let Err(e) = std::fs::write(cg.dir.join(limit), bytes.to_string()) {
            return Err(ExperimentError::Cgroup(format!("memory_limit: cannot write {}: {e} (cgroup v{version}; needs root, and on v2 a parent that delegates the memory controller)", cg.dir.join(limit).display())));
        }
        let swap_value = if version == 2 {
            "0".to_string()
        } else {
            bytes.to_string()
        };
        let _ = std::fs::write(cg.dir.join(swap), swap_value);
        Ok(cg)
    }

    /// Highest memory use seen in the cgroup, when the kernel tells.
    pub fn peak_bytes(&self) -> Option<u64> {
        let file = if self.version == 2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Only succeeds once its processes are gone, which callers ensure.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `argv` pinned to the CPU list `cpus` with `taskset -c`, when it is set.
pub fn pinned(argv: &[String], cpus: Option<&str>) -> Vec<String> {
    let mut full: Vec<String> = Vec::new();
    if let Some(c) = cpus {
        full.extend(["taskset".into(), "-c".into(), c.into()]);
    }
    full.extend(argv.iter().cloned());
    full
}

/// Builds the command for `argv`, pinned with `taskset -c` when `cpus` is
/// set, in its own process group (Ctrl-C reaches the xtask, which stops
/// the cell itself), killed when the xtask dies, and joined to `cgroup`.
pub fn command(argv: &[String], cpus: Option<&str>, cgroup: Option<&Cgroup>) -> Command {
    let full = pinned(argv, cpus);
    let mut cmd = Command::new(&full[0]);
    cmd.args(&full[1..]);
    let procs = cgroup.map(|c| c.procs.clone());
    // SAFETY: the closure runs between fork and exec and only makes
    // async-signal-safe system calls (prctl, setpgid, open, write, close)
    // on memory prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            libc::setpgid(0, 0);
            if let Some(p) = &procs {
                let fd = libc::open(p.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let ok = libc::write(fd, b"0\n".as_ptr().cast(), 2) == 2;
                libc::close(fd);
                if !ok {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd
}

/// Kills a child's process group and reaps it.
pub fn kill(child: &mut Child, signal: i32, grace: Duration) {
    let pid = child.id() as i32;
    // SAFETY: plain syscalls on a process group this xtask created.
    unsafe {
        libc::kill(-pid, signal);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        // An error means it was already reaped (by try_wait4).
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    let _ = child.wait();
}

/// Reaps the child if it has exited: its exit status and the CPU seconds
/// (user + system) it used in total, exact where `/proc` sampling is not.
///
/// # Errors
/// `wait4` fails (the pid is not our child).
pub fn try_wait4(pid: u32) -> std::io::Result<Option<(std::process::ExitStatus, f64)>> {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 writes both out-parameters.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid as i32, &mut status, libc::WNOHANG, &mut usage) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if r == 0 {
        return Ok(None);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Some((
        std::process::ExitStatus::from_raw(status),
        secs(usage.ru_utime) + secs(usage.ru_stime),
    )))
}

/// CPU seconds (user + system) and resident bytes of a process.
pub fn sample(pid: u32) -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let stat = ycsb_results::ProcStat::parse(&stat)?;
    // SAFETY: sysconf has no preconditions.
    let (tick, page) = unsafe {
        (
            libc::sysconf(libc::_SC_CLK_TCK),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    Some((
        stat.cpu_ticks() as f64 / tick.max(1) as f64,
        stat.rss_pages * page.max(1) as u64,
    ))
}

/// A server's CPU seconds (user + system) with its descendants' (live
/// ones, and those that ended and were waited for), and the server
/// process's own resident bytes: a server that works in processes it
/// forks (PostgreSQL's backends) is counted whole. The resident bytes are
/// the first process's alone, since its children share its pages.
pub fn sample_tree(pid: u32) -> Option<(f64, u64)> {
    sample_tree_in(Path::new("/proc"), pid)
}

fn sample_tree_in(proc_root: &Path, pid: u32) -> Option<(f64, u64)> {
    let read = |pid: u32| {
        let text = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
        ycsb_results::ProcStat::parse(&text)
    };
    let root = read(pid)?;
    // Every process's parent, to find the tree under `pid`.
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(proc_root) {
        for entry in entries.flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if child != pid {
                if let Some(stat) = read(child) {
                    parents.push((child, stat.ppid));
                }
            }
        }
    }
    let mut ticks = root.cpu_ticks() + root.children_ticks;
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(child, _) in parents.iter().filter(|(_, p)| *p == parent) {
            // A process that ended since the scan is left out.
            if let Some(stat) = read(child) {
                ticks += stat.cpu_ticks() + stat.children_ticks;
                frontier.push(child);
            }
        }
    }
    // SAFETY: sysconf has no preconditions.
    let (tick, page) = unsafe {
        (
            libc::sysconf(libc::_SC_CLK_TCK),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    Some((
        ticks as f64 / tick.max(1) as f64,
        root.rss_pages * page.max(1) as u64,
    ))
}

/// A free loopback port (bound, read, released).
///
/// # Errors
/// No port can be bound.
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context(|| "binding a loopback port".into())?;
    Ok(l.local_addr()
        .context(|| "reading a bound loopback port".into())?
        .port())
}

/// Waits until the server answers a request on the port (a RESP `PING`,
/// an HTTP `HEAD /`: any reply, even an error, means it is serving), or
/// the server exits, or `timeout` passes. Accepting a connection is not
/// enough: a server can accept before it serves (nginx, a store still
/// opening), and a cell's first operations would then fail.
///
/// # Errors
/// The server exited or never answered: what happened, for the cell's
/// failure.
pub fn wait_listening(
    child: &mut Child,
    port: u16,
    protocol: Option<ycsb_db::Protocol>,
    timeout: Duration,
) -> std::result::Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        if answers(port, protocol) {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the server exited ({status}) before answering on 127.0.0.1:{port}"
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the server did not answer on 127.0.0.1:{port} within {timeout:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a request in `protocol` on the port gets any reply (with no
/// known protocol, whether a connection is accepted).
fn answers(port: u16, protocol: Option<ycsb_db::Protocol>) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request: &[u8] = match protocol {
        Some(ycsb_db::Protocol::Resp) => b"*1\r\n$4\r\nPING\r\n",
        Some(ycsb_db::Protocol::Http) => {
            b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        }
        Some(ycsb_db::Protocol::Memcached) => b"version\r\n",
        // PostgreSQL's SSLRequest, answered by one byte (N or S); a MySQL
        // server greets first, which is an answer too.
        Some(ycsb_db::Protocol::Sql) => &[0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f],
        _ => return true,
    };
    let mut reply = [0u8; 16];
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .is_ok()
        && stream.write_all(request).is_ok()
        && matches!(stream.read(&mut reply), Ok(n) if n > 0)
}

/// The argv as one line a shell would run (for people, not for us).
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod wait_tests {
    use super::*;
    use std::io::{Read, Write};

    /// A server that accepts connections at once but closes them
    /// unanswered until `delay` has passed, as a server still starting
    /// does: the wait ends once it answers, not when a connection is
    /// accepted.
    #[test]
    fn waiting_for_a_server_waits_until_it_answers() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let delay = Duration::from_millis(600);
        let started = Instant::now();
        let server = std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                if started.elapsed() < delay {
                    continue; // accepted, closed unanswered
                }
                let mut buf = [0u8; 64];
                if matches!(stream.read(&mut buf), Ok(n) if n > 0) {
                    let _ = stream.write_all(b"+PONG\r\n");
                    return;
                }
            }
        });
        // A real child process standing in for the server's.
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let waited = wait_listening(
            &mut child,
            port,
            Some(ycsb_db::Protocol::Resp),
            Duration::from_secs(20),
        );
        let elapsed = started.elapsed();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(waited, Ok(()));
        assert!(
            elapsed >= delay,
            "returned after {elapsed:?}, before the server answered"
        );
        // The server answered the wait's own request and ended.
        server.join().unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a live process has `pid` as its parent.
    fn has_children(pid: u32) -> bool {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|s| ycsb_results::ProcStat::parse(&s))
                .is_some_and(|s| s.ppid == pid)
        })
    }

    /// A server that does its work in a child it forks (as PostgreSQL's
    /// backends do) is counted with that child, while it runs and after
    /// it ended and was waited for; the server process alone is not.
    #[test]
    fn a_server_s_forked_children_are_counted() {
        // The busy child stops by itself; the parent waits for it, then
        // idles reading its standard input until it is killed. (Python,
        // which every machine this runs on has, rather than a shell: no
        // code of the project runs one.)
        let mut server = Command::new("python3")
            .args([
                "-c",
                "import os, sys\n\
                 if os.fork() == 0:\n    \
                     i = 0\n    \
                     while i < 20000000: i += 1\n    \
                     os._exit(0)\n\
                 os.wait()\n\
                 sys.stdin.readline()\n",
            ])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = server.id();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut counted = 0.0;
        while counted < 0.3 {
            assert!(Instant::now() < deadline, "the busy child is not counted");
            std::thread::sleep(Duration::from_millis(50));
            counted = sample_tree(pid).unwrap().0;
        }
        assert!(sample(pid).unwrap().0 < 0.1, "the parent itself idles");
        while has_children(pid) {
            assert!(Instant::now() < deadline, "the busy child does not end");
            std::thread::sleep(Duration::from_millis(50));
        }
        let after = sample_tree(pid).unwrap().0;
        assert!(
            after >= counted,
            "{after} < {counted}: the ended child is lost"
        );
        server.kill().unwrap();
        server.wait().unwrap();
    }
}
