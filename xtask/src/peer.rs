//! What the benches that compare a store with its server's own load tool
//! share (`redis-bench`, `memcached-bench`, `pg-bench`): the release build
//! of `ycsb`, a client run timed with its CPU time, rounds that alternate
//! the clients, and medians.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::machine::{children_cpu_seconds, load_average};

/// The options every peer bench reads: `--requests N`, `--rounds N`,
/// `--no-pin`.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Operations per client and round.
    pub requests: u64,
    /// Rounds, alternating the clients.
    pub rounds: usize,
    /// Server and clients on separate cores.
    pub pin: bool,
}

impl Options {
    /// Reads the options of `bench`, whose `usage` an unknown one prints.
    ///
    /// # Errors
    /// An unknown option, a value that is not a whole number, or zero.
    pub fn parse(args: &[String], bench: &str, usage: &str) -> Result<Options> {
        for flag in args.iter().filter(|a| a.starts_with("--")) {
            if !["--requests", "--rounds", "--no-pin"].contains(&flag.as_str()) {
                bail!("{bench}: unknown option {flag}\n{usage}");
            }
        }
        let o = Options {
            requests: crate::flag_value(args, "--requests", 50_000)?,
            rounds: crate::flag_value(args, "--rounds", 3)? as usize,
            pin: !args.iter().any(|a| a == "--no-pin"),
        };
        if o.requests == 0 || o.rounds == 0 {
            bail!("{bench}: --requests and --rounds must be at least 1");
        }
        Ok(o)
    }
}

/// What a bench that alternates two clients (`memcached-bench`,
/// `pg-bench`) starts from.
pub struct Bench {
    /// Its options.
    pub options: Options,
    /// The release build of `ycsb`.
    pub ycsb: PathBuf,
    /// Its working directory, `<target>/<bench>`.
    pub work: PathBuf,
}

impl Bench {
    /// Reads the options of `bench`, builds `ycsb` and makes the working
    /// directory; `None` when `-h` or `--help` asked for `usage` (printed).
    ///
    /// # Errors
    /// Bad options, a failed build, a directory that cannot be made.
    pub fn prepare(
        root: &Path,
        args: &[String],
        bench: &str,
        usage: &str,
    ) -> Result<Option<Bench>> {
        if args.iter().any(|a| a == "-h" || a == "--help") {
            println!("{usage}");
            return Ok(None);
        }
        let options = Options::parse(args, bench, usage)?;
        let ycsb = build_ycsb(root, bench)?;
        let work = crate::target::target_dir(root).join(bench);
        std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
        Ok(Some(Bench {
            options,
            ycsb,
            work,
        }))
    }
}

/// One client process's run: its wall time and its CPU time (user +
/// system, from `getrusage` of the waited child), in seconds.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub wall: f64,
    pub cpu: f64,
}

/// Runs the peer's client and ycsb once a round for `rounds` rounds, the
/// peer first in even rounds and second in odd ones (so that neither
/// always runs on a warmer server), saying when each round is done: the
/// peer's runs and ycsb's.
///
/// # Errors
/// The first client that fails.
pub fn alternate(
    bench: &str,
    rounds: usize,
    mut peer: impl FnMut() -> Result<Run>,
    mut ours: impl FnMut() -> Result<Run>,
) -> Result<(Vec<Run>, Vec<Run>)> {
    let (mut peer_runs, mut our_runs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for client in if round % 2 == 0 { [0, 1] } else { [1, 0] } {
            if client == 0 {
                peer_runs.push(peer()?);
            } else {
                our_runs.push(ours()?);
            }
        }
        eprintln!(
            "{bench}: round {} done; load average {}",
            round + 1,
            load_average()
        );
    }
    Ok((peer_runs, our_runs))
}

/// A client's medians over its runs.
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    /// Operations per second.
    pub rate: f64,
    /// Client CPU time per operation, in µs.
    pub cpu_us: f64,
    /// Operations per client CPU-second.
    pub per_cpu: f64,
}

impl Figures {
    /// The medians of `runs` of `operations` operations each.
    pub fn of(runs: &[Run], operations: f64) -> Figures {
        Figures {
            rate: median(runs.iter().map(|r| operations / r.wall).collect()),
            cpu_us: median(runs.iter().map(|r| r.cpu * 1e6 / operations).collect()),
            per_cpu: median(runs.iter().map(|r| operations / r.cpu).collect()),
        }
    }
}

/// Prints the clients' figures as a table, an operation named `unit`
/// (`op`, `read`) and `units`.
pub fn print_table(unit: &str, units: &str, clients: [(&str, &Figures); 2]) {
    println!("\n| client | {units}/s | client CPU µs/{unit} | {units} per client CPU-second |");
    println!("|---|---:|---:|---:|");
    for (name, f) in clients {
        println!(
            "| {name} | {:.0} | {:.1} | {:.0} |",
            f.rate, f.cpu_us, f.per_cpu
        );
    }
}

/// Runs `command` to its end (no standard input), with its wall and CPU
/// time and its standard output.
///
/// # Errors
/// When it cannot start or fails; the error names `what` and quotes its
/// standard error.
pub fn timed(command: &mut Command, what: &str) -> Result<(Run, String)> {
    let cpu_before = children_cpu_seconds();
    let start = Instant::now();
    let out = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {what}"))?;
    let wall = start.elapsed().as_secs_f64();
    let cpu = children_cpu_seconds() - cpu_before;
    if !out.status.success() {
        bail!(
            "{what} failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((
        Run { wall, cpu },
        String::from_utf8_lossy(&out.stdout).into(),
    ))
}

/// The median (the mean of the middle two for an even count; NaN for
/// none).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Builds the current tree's `ycsb` in release mode; returns the binary.
///
/// # Errors
/// A failed build.
pub fn build_ycsb(root: &Path, bench: &str) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("{bench}: building ycsb (release)");
    crate::run(Command::new(&cargo).current_dir(root).args([
        "build",
        "--release",
        "-p",
        "ycsb-cli",
        "--bin",
        "ycsb",
    ]))?;
    Ok(crate::target::target_dir(root).join("release").join("ycsb"))
}

/// A peer's server process on a loopback port of its own (its output
/// discarded), killed when dropped.
pub struct Server {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl Server {
    /// Starts `program` with `args(port)` on a free loopback port, on
    /// `core` alone when one is given, and waits up to 10 s until
    /// `ready(port)` (what it waits for, `waiting_for`, names it in the
    /// error).
    ///
    /// # Errors
    /// When it cannot start or is not ready in time.
    pub fn start(
        program: &str,
        core: Option<usize>,
        args: impl FnOnce(u16) -> Vec<String>,
        ready: impl Fn(u16) -> bool,
        waiting_for: &str,
    ) -> Result<Server> {
        let port = crate::machine::free_loopback_port()?;
        let child = crate::machine::pinned(program, core)
            .args(args(port))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {program} (cargo xtask deps installs it)"))?;
        let server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ready(port) {
            if Instant::now() > deadline {
                bail!("{program} on port {port} did not {waiting_for} within 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    /// The server's process.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_read_and_bad_ones_named() {
        let parse = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            Options::parse(&args, "x-bench", "usage")
        };
        let o = parse(&["--requests", "10", "--no-pin"]).unwrap();
        assert_eq!((o.requests, o.rounds, o.pin), (10, 3, false));
        let e = parse(&["--rounds", "0"]).err().unwrap();
        assert!(e.to_string().contains("must be at least 1"), "{e}");
        let e = parse(&["--bogus"]).err().unwrap();
        assert!(
            e.to_string().contains("x-bench: unknown option --bogus"),
            "{e}"
        );
    }

    #[test]
    fn rounds_alternate_which_client_goes_first_and_figures_are_medians() {
        let order = std::cell::RefCell::new(Vec::new());
        let run = |cpu: f64| Run { wall: 2.0, cpu };
        let (peer, ours) = alternate(
            "x-bench",
            3,
            || {
                order.borrow_mut().push("peer");
                Ok(run(1.0))
            },
            || {
                order.borrow_mut().push("ours");
                Ok(run(4.0 + order.borrow().len() as f64))
            },
        )
        .unwrap();
        assert_eq!(
            order.into_inner(),
            ["peer", "ours", "ours", "peer", "peer", "ours"]
        );
        assert_eq!((peer.len(), ours.len()), (3, 3));
        // ycsb's CPU times: 6, 7, 10 s for 100 operations each.
        let f = Figures::of(&ours, 100.0);
        assert_eq!((f.rate, f.cpu_us, f.per_cpu), (50.0, 7e4, 100.0 / 7.0));
        let e = alternate("x-bench", 1, || Ok(run(1.0)), || bail!("down")).unwrap_err();
        assert_eq!(e.to_string(), "down");
    }

    #[test]
    fn the_median_of_odd_even_and_no_values() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
