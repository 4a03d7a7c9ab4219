//! What the benches say about the machine they ran on, and where they put
//! their processes on it.

use std::process::Command;

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` gives them
/// ("unknown" where it cannot be read): printed around timed runs so that
/// a reader can judge how much other work competed with them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A loopback port nothing listens on now, for a server a bench starts.
///
/// # Errors
/// When no socket can be bound on loopback.
pub fn free_loopback_port() -> anyhow::Result<u16> {
    use anyhow::Context;
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .context("finding a free loopback port")?;
    Ok(listener.local_addr()?.port())
}

/// CPU time, split as the kernel accounts it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTime {
    /// Seconds running the program's own code.
    pub user: f64,
    /// Seconds in the kernel on its behalf: system calls (an engine's
    /// writes and fsyncs among them) and page faults.
    pub system: f64,
}

impl CpuTime {
    /// User plus system seconds.
    pub fn total(&self) -> f64 {
        self.user + self.system
    }
}

impl std::ops::Sub for CpuTime {
    type Output = CpuTime;

    fn sub(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user - earlier.user,
            system: self.system - earlier.system,
        }
    }
}

/// CPU time of this process's children that have been waited for: the
/// difference around one child's run is its CPU time.
pub fn children_cpu() -> CpuTime {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    CpuTime {
        user: secs(usage.ru_utime),
        system: secs(usage.ru_stime),
    }
}

/// User plus system CPU seconds of this process's children that have been
/// waited for (see [`children_cpu`]).
pub fn children_cpu_seconds() -> f64 {
    children_cpu().total()
}

/// The CPUs this process may run on, in order.
fn allowed_cores() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the set it is given; CPU_ISSET only
    // reads it, for indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// Where a server and the clients measured against it run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub server: usize,
    pub client: usize,
}

impl Placement {
    /// The first two cores this process may use, the server on the first:
    /// on one machine, a client and a server left to the scheduler share a
    /// core part of the time, and how much differs from run to run. None
    /// when fewer than two cores are allowed.
    pub fn separate_cores() -> Option<Placement> {
        match allowed_cores()[..] {
            [server, client, ..] => Some(Placement { server, client }),
            _ => None,
        }
    }
}

/// A command for `program`, pinned to `core` when one is given.
pub fn pinned(program: impl AsRef<std::ffi::OsStr>, core: Option<usize>) -> Command {
    let mut command = Command::new(program);
    if let Some(core) = core {
        pin(&mut command, core);
    }
    command
}

/// Makes `command`'s process (and its threads and children) run on `core`
/// only.
pub fn pin(command: &mut Command, core: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only builds a CPU set on
    // its stack and makes the sched_setaffinity system call, both
    // async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_average_has_three_figures() {
        let load = load_average();
        let figures: Vec<f64> = load
            .split(' ')
            .map(|f| f.parse().unwrap_or_else(|_| panic!("{load:?}")))
            .collect();
        assert_eq!(figures.len(), 3, "{load:?}");
    }

    #[test]
    fn a_pinned_child_runs_on_its_core_only() {
        let Some(cores) = Placement::separate_cores() else {
            eprintln!("one core allowed: nothing to pin apart");
            return;
        };
        for core in [cores.server, cores.client] {
            let mut command = Command::new("grep");
            command.args(["Cpus_allowed_list", "/proc/self/status"]);
            pin(&mut command, core);
            let out = command.output().expect("grep runs");
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                text.split_whitespace().nth(1),
                Some(core.to_string().as_str()),
                "{text}"
            );
        }
    }
}
