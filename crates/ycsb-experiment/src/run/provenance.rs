//! The files of a cell whose processes all ended well, beside its export:
//! `timeseries.json` (each phase's facts, from the export, with the
//! runner's resource samples), `properties.txt`, `command.txt` and, last,
//! `cell.json`, whose presence marks the cell complete.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use ycsb_results::RunReport;

use super::attempt::{Attempt, Ended, Sample};
use super::{write, Runner};
use crate::error::{Context as _, Result};
use crate::host;
use crate::proc;
use crate::redact;
use crate::series::{PhaseSeries, ResourcePoint, StatusPoint};

impl Runner {
    /// Writes the cell's files into `.partial-<cell>/`, `cell.json` last.
    ///
    /// # Errors
    /// A file cannot be encoded or written.
    pub(super) fn write_cell_files(
        &self,
        a: &Attempt<'_>,
        export: &RunReport,
        ended: &Ended,
    ) -> Result<()> {
        let mut phases = phase_series(export, ended.start_time, ended.space_end);
        add_resources(&mut phases, &ended.samples);
        host::write_atomic(
            &a.partial.join("timeseries.json"),
            serde_json::to_string_pretty(&phases)
                .context(|| "encoding timeseries.json".into())?
                .as_bytes(),
        )?;
        write(&a.partial.join("properties.txt"), &properties_txt(export))?;
        // Secrets (password properties, --requirepass) never reach the results.
        let command = redact::argv(&proc::pinned(a.argv, a.m.cpus.as_deref()));
        let server_command = redact::argv(a.server_argv);
        let text = command_txt(a, &command, &server_command, &ended.spawned);
        write(&a.partial.join("command.txt"), &text)?;
        let record = self.cell_record(a, export, ended, &command, &server_command);
        // Last: its presence (after the rename) marks the cell complete.
        host::write_atomic(
            &a.partial.join("cell.json"),
            serde_json::to_string_pretty(&record)
                .context(|| "encoding cell.json".into())?
                .as_bytes(),
        )
    }

    /// `cell.json`: the cell, its inputs' fingerprint, the commands, the
    /// environment and how it ran, the versions, the host.
    fn cell_record(
        &self,
        a: &Attempt<'_>,
        export: &RunReport,
        ended: &Ended,
        command: &[String],
        server_command: &[String],
    ) -> Value {
        let (m, cell) = (a.m, a.cell);
        let coords: serde_json::Map<String, Value> = cell
            .coords
            .iter()
            .map(|(a, v, l)| {
                let (v, l) = (redact::value(a, v), redact::value(a, l));
                (a.clone(), json!({"value": v, "label": l}))
            })
            .collect();
        let engine = match (&export.metadata.engine, &export.metadata.engine_version) {
            (Some(e), Some(v)) => Some(format!("{e} {v}")),
            (Some(e), None) => Some(e.clone()),
            _ => None,
        };
        json!({
            "id": cell.id,
            "group": cell.group,
            "repeat": cell.repeat,
            "kind": format!("{:?}", a.kind),
            "load": cell.load,
            "coords": coords,
            "db": {"label": cell.db.label, "store": cell.db.store, "server": cell.db.server.as_ref().map(|s| format!("{s:?}"))},
            "fingerprint": a.fingerprint,
            "clients": cell.clients(),
            "command": command,
            "server_command": server_command,
            "cwd": std::env::current_dir().ok().map(|d| d.display().to_string()),
            "environment": {"cpus": m.cpus, "server_cpus": m.server_cpus, "memory_limit_bytes": ended.memory_limit, "cgroup_peak_bytes": ended.cgroup_peak},
            "start_time": ended.start_time.to_rfc3339(),
            "end_time": ended.end_time.to_rfc3339(),
            "duration_s": ended.end_s,
            "exit_status": ended.status.code(),
            "engine_version": engine,
            "engine_build": export.metadata.engine_build,
            "server_version": ended.server_version,
            "ycsb_version": export.metadata.version,
            "git_revision": self.git,
            "host": self.host,
            "db_dir": host::filesystem(a.data_dir),
            "space_bytes_end": ended.space_end,
            "io_ceiling": self.io_ceiling,
        })
    }
}

/// The phases' facts, from the export: when each began and ended (its
/// observation's start, its run time), its throughput over time and the
/// store's gauges, the data set's size.
fn phase_series(export: &RunReport, start_time: DateTime<Utc>, space_end: u64) -> Vec<PhaseSeries> {
    let cell_start_ms = start_time.timestamp_millis();
    let mut phases: Vec<PhaseSeries> = Vec::new();
    for p in &export.phases {
        let start_s = match &p.observation {
            Some(o) => (o.start_unix_ms as i64 - cell_start_ms) as f64 / 1e3,
            // Not observed (timeseries.granularity=0): after the
            // previous phase.
            None => phases.last().map_or(0.0, |q: &PhaseSeries| q.end_s),
        };
        let mut operations = 0;
        let status = p
            .series()
            .iter()
            .map(|row| {
                operations += row.operations;
                StatusPoint {
                    t: row.time_s,
                    operations,
                    ops_per_sec: row.throughput,
                    gauges: row.gauges.clone(),
                }
            })
            .collect();
        // The data directory's size as ycsb measured it at the phase's
        // end, or as the cell measured it after the last phase.
        let measured = p
            .observation
            .as_ref()
            .and_then(|o| o.amplification.as_ref()?.db_size_bytes)
            .or_else(|| p.series().last()?.db_size_bytes);
        phases.push(PhaseSeries {
            phase: p.phase.clone(),
            start_s,
            end_s: start_s + p.runtime_ns as f64 / 1e9,
            status,
            space_bytes: measured,
            ..PhaseSeries::default()
        });
    }
    if let Some(last) = phases.last_mut() {
        last.space_bytes = Some(space_end);
    }
    phases
}

/// Each phase's resources over time and its mean CPU, client and server,
/// from the runner's samples of the whole cell.
fn add_resources(phases: &mut [PhaseSeries], samples: &[Sample]) {
    for p in phases.iter_mut() {
        // The exact total from wait4 is accounted differently from
        // /proc's ticks: right for the phase mean, a spike as a point.
        let sampled = &samples[..samples.len().saturating_sub(1)];
        let in_phase: Vec<_> = sampled
            .iter()
            .filter(|s| s.0 >= p.start_s && s.0 <= p.end_s)
            .collect();
        let mut prev: Option<&Sample> = None;
        for s in &in_phase {
            if let Some(q) = prev {
                let dt = (s.0 - q.0).max(1e-9);
                p.resources.push(ResourcePoint {
                    t: s.0 - p.start_s,
                    cpu_percent: 100.0 * (s.1 - q.1) / dt,
                    rss_bytes: s.2,
                    server_cpu_percent: s.3.zip(q.3).map(|(a, b)| 100.0 * (a.0 - b.0) / dt),
                    server_rss_bytes: s.3.map(|x| x.1),
                });
            }
            prev = Some(s);
        }
        // Mean CPU from the last sample at or before the phase start
        // (or the process start) to the last sample in the phase; the
        // final sample is the exact total from wait4.
        let base = samples
            .iter()
            .rev()
            .find(|s| s.0 <= p.start_s)
            .copied()
            .unwrap_or((0.0, 0.0, 0, Some((0.0, 0))));
        if let Some(last) = samples.iter().rev().find(|s| s.0 <= p.end_s + 1e-6) {
            let dt = last.0 - base.0;
            if dt > 0.0 {
                p.cpu_percent = Some(100.0 * (last.1 - base.1) / dt);
                p.server_cpu_percent = last.3.zip(base.3).map(|(l, b)| 100.0 * (l.0 - b.0) / dt);
            }
        }
    }
}

/// `properties.txt`: every effective property with where it was set.
fn properties_txt(export: &RunReport) -> String {
    let mut props = String::new();
    for c in &export.config {
        // ycsb redacts its export; this holds even for an older binary
        // that did not.
        let value = redact::value(&c.key, &c.value);
        props.push_str(&format!("{}={value}    # {}\n", c.key, c.origin));
    }
    props
}

/// `command.txt`: the commands as they ran, redacted and pinned as they
/// were; for several clients each client's, with its index and the
/// group's start time; then the server's.
fn command_txt(
    a: &Attempt<'_>,
    command: &[String],
    server_command: &[String],
    spawned: &[Vec<String>],
) -> String {
    let n = a.cell.clients();
    let mut text = String::new();
    if n > 1 {
        text.push_str(&format!(
            "# {n} clients per phase, started together (start.at)\n"
        ));
        for client in spawned {
            let pinned = proc::pinned(client, a.m.cpus.as_deref());
            text.push_str(&proc::shell_line(&redact::argv(&pinned)));
            text.push('\n');
        }
    } else {
        text.push_str(&proc::shell_line(command));
        text.push('\n');
    }
    if !server_command.is_empty() {
        text.push_str(&format!(
            "# server:\n{}\n",
            proc::shell_line(server_command)
        ));
    }
    text
}
