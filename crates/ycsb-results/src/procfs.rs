//! What a process's `/proc/<pid>/stat` line says, parsed once for the
//! whole tool: the observers' CPU sampling (ycsb-core), the experiment
//! runner's per-cell process figures and the benches (xtask) all read it
//! here. Parsing only: the caller reads the file.

/// The figures of one `/proc/<pid>/stat` line the tool uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// The parent's process id (field 4).
    pub ppid: u32,
    /// User CPU time, in clock ticks (field 14).
    pub utime_ticks: u64,
    /// System CPU time, in clock ticks (field 15).
    pub stime_ticks: u64,
    /// User plus system CPU time of its children that ended and were
    /// waited for, in clock ticks (fields 16 and 17).
    pub children_ticks: u64,
    /// Resident set size, in pages (field 24).
    pub rss_pages: u64,
}

impl ProcStat {
    /// Parses a `/proc/<pid>/stat` line; `None` when it is truncated or
    /// not one. The command name (field 2) may hold spaces and
    /// parentheses, so fields are counted after its last `)`.
    pub fn parse(stat: &str) -> Option<ProcStat> {
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_ascii_whitespace();
        // After the name, field 3 (state) is the first: ppid is field 4,
        // utime field 14.
        let ppid = fields.nth(1)?.parse().ok()?;
        let utime_ticks = fields.nth(9)?.parse().ok()?;
        let stime_ticks = fields.next()?.parse().ok()?;
        let cutime: u64 = fields.next()?.parse().ok()?;
        let cstime: u64 = fields.next()?.parse().ok()?;
        let rss_pages = fields.nth(6)?.parse().ok()?;
        Some(ProcStat {
            ppid,
            utime_ticks,
            stime_ticks,
            children_ticks: cutime + cstime,
            rss_pages,
        })
    }

    /// User plus system CPU time, in clock ticks.
    pub fn cpu_ticks(&self) -> u64 {
        self.utime_ticks + self.stime_ticks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from a real `ycsb` process on Linux 6.x (a multi-threaded
    // run); the name was edited to hold spaces and a parenthesis, which
    // the kernel allows.
    const STAT: &str = "48211 (ycsb (a) b) S 48190 48211 48190 34816 48211 4194304 1873 0 0 0 1523 311 40 2 20 0 3 0 9874321 251727872 3012 18446744073709551615 94403237888000 94403241238833 140727389512096 0 0 0 0 4096 17922 0 0 0 17 1 0 0 0 0 0 94403241556472 94403241700568 94403270344704 140727389516107 140727389516300 140727389516300 140727389519834 0\n";

    #[test]
    fn parses_a_captured_line() {
        let stat = ProcStat::parse(STAT).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                ppid: 48190,
                utime_ticks: 1523,
                stime_ticks: 311,
                children_ticks: 42,
                rss_pages: 3012
            }
        );
        assert_eq!(stat.cpu_ticks(), 1834);
    }

    #[test]
    fn refuses_truncated_lines() {
        assert_eq!(ProcStat::parse("48211 (ycsb) S 1 2 3"), None);
        assert_eq!(ProcStat::parse("no parenthesis"), None);
        let cut = &STAT[..STAT.find(" 251727872").unwrap()];
        assert_eq!(ProcStat::parse(cut), None);
    }
}
