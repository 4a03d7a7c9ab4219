//! `cargo xtask pg-bench`: the jdbc store's single-row reads against
//! pgbench's, on a private PostgreSQL.
//!
//! Starts a PostgreSQL cluster of its own (`ycsb_jdbc::testing::Postgres`:
//! initdb in a temporary directory, a free loopback port), loads N records
//! into Java's table with `ycsb load jdbc` (`insertorder=ordered`, so the
//! keys are `user0` … `user<N-1>`), then alternates, round by round, one
//! connection each:
//! - `pgbench -n -M prepared -c 1 -j 1 -t N` with a script of one prepared
//!   `SELECT * FROM usertable WHERE ycsb_key = 'user' || :id` over a
//!   uniform `:id` (pgbench -S's single-row read, on YCSB's table);
//! - `ycsb run jdbc` with `readproportion=1`, uniform over the same keys:
//!   the same prepared `SELECT *` per read, and its check of the record.
//!
//! What is compared is the reads per CPU-second of the client (user +
//! system, from `getrusage` of the waited child; the server's work is the
//! same for both), and, for information, the rate.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use ycsb_jdbc::testing::{Postgres, PASSWORD};

use crate::machine::{load_average, Placement};
use crate::peer::{alternate, print_table, timed, Bench, Figures, Options, Run};

/// The bench's name in its messages.
const BENCH: &str = "pg-bench";

const USAGE: &str = "usage: cargo xtask pg-bench [--requests N] [--rounds N] [--no-pin]
  N single-row reads per client and round (default 50000) over N records
  loaded by ycsb; rounds alternate pgbench and ycsb (default 3); the clients
  run on one core unless --no-pin.";

/// `ycsb` with the jdbc store's properties for `pg`.
fn ycsb(bin: &Path, pg: &Postgres, phase: &str, o: &Options, core: Option<usize>) -> Command {
    let mut command = Command::new(bin);
    if let Some(core) = core {
        crate::machine::pin(&mut command, core);
    }
    command
        .args([phase, "jdbc", "-P", "workloads/workloadc", "-threads", "1"])
        .args(["-p", &format!("db.url={}", pg.url())])
        .args(["-p", "db.user=postgres", "-p"])
        .arg(format!("db.passwd={PASSWORD}"))
        .args(["-p", "insertorder=ordered"])
        .args(["-p", &format!("recordcount={}", o.requests)])
        .args(["-p", &format!("operationcount={}", o.requests)])
        .args(["-p", "requestdistribution=uniform"]);
    command
}

fn pgbench(script: &Path, pg: &Postgres, o: &Options, core: Option<usize>) -> Result<Run> {
    let mut command = Command::new("pgbench");
    if let Some(core) = core {
        crate::machine::pin(&mut command, core);
    }
    command
        .env("PGPASSWORD", PASSWORD)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &pg.port.to_string(),
            "-U",
            "postgres",
        ])
        .args(["-n", "-M", "prepared", "-c", "1", "-j", "1"])
        .args(["-t", &o.requests.to_string(), "-f"])
        .arg(script)
        .arg("postgres");
    let (run, stdout) = timed(&mut command, "pgbench (package postgresql)")?;
    let processed = stdout
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("number of transactions actually processed: ")
        })
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if processed != Some(o.requests) {
        bail!("pgbench did not process {} reads:\n{stdout}", o.requests);
    }
    Ok(run)
}

/// Runs the comparison and prints its table.
///
/// # Errors
/// Bad options, a client that cannot start or fails, a load that did not
/// write every record.
pub fn main(root: &Path, args: &[String]) -> Result<()> {
    let Some(bench) = Bench::prepare(root, args, BENCH, USAGE)? else {
        return Ok(());
    };
    let (o, bin) = (bench.options, &bench.ycsb);
    let core = if o.pin {
        Placement::separate_cores().map(|p| p.client)
    } else {
        None
    };
    eprintln!("pg-bench: starting PostgreSQL (initdb)");
    let pg = Postgres::start();
    let script = bench.work.join("read.sql");
    std::fs::write(
        &script,
        format!(
            "\\set id random(0, {})\nSELECT * FROM usertable WHERE ycsb_key = 'user' || :id;\n",
            o.requests - 1
        ),
    )?;
    let mut load = ycsb(bin, &pg, "load", &o, core);
    load.current_dir(root).args(["-p", "jdbc.createtable=true"]);
    timed(&mut load, "ycsb load jdbc")?;
    let rows: i64 = pg
        .client()
        .count("SELECT count(*) FROM usertable")
        .map_err(anyhow::Error::msg)
        .context("counting the loaded rows")?;
    if rows != o.requests as i64 {
        bail!("ycsb load wrote {rows} rows, not {}", o.requests);
    }
    let load_before = load_average();
    eprintln!(
        "pg-bench: port {}; clients {}; {} reads per client, {} round(s); load average {load_before}",
        pg.port,
        core.map_or("not pinned".to_string(), |c| format!("on core {c}")),
        o.requests,
        o.rounds
    );
    let (peer, ours) = alternate(
        BENCH,
        o.rounds,
        || pgbench(&script, &pg, &o, core),
        || {
            let mut run = ycsb(bin, &pg, "run", &o, core);
            run.current_dir(root);
            let (r, stdout) = timed(&mut run, "ycsb run jdbc")?;
            let read_ok = format!("[READ], Return=OK, {}", o.requests);
            if !stdout.lines().any(|l| l == read_ok) {
                bail!("ycsb run did not read every record:\n{stdout}");
            }
            Ok(r)
        },
    )?;
    let reads = o.requests as f64;
    let (peer, ours) = (Figures::of(&peer, reads), Figures::of(&ours, reads));
    print_table(
        "read",
        "reads",
        [("pgbench -M prepared", &peer), ("ycsb jdbc", &ours)],
    );
    println!(
        "\nycsb / pgbench per client CPU-second: {:.3} (rate: {:.3}); medians of {} round(s); load average before {load_before}, after {}",
        ours.per_cpu / peer.per_cpu,
        ours.rate / peer.rate,
        o.rounds,
        load_average()
    );
    println!(
        "both: one connection, prepared SELECT * of one row of Java's usertable (10 fields of 100 bytes) by a uniform key, every key present; ycsb's process includes its start-up and its check of each record"
    );
    Ok(())
}
