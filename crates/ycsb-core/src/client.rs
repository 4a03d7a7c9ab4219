//! What Java's `Client` and YCSB-cpp's `ycsbc` read beside the workload:
//! which phases run, whether status lines are shown and with which label,
//! and YCSB-cpp's pause between the phases.
//!
//! The command-line flags of both programs are these properties
//! (`-load`, `-t`, `-run`, `-s`, `-l`), so a property file or `-p` that
//! sets them works as it does there.

use std::time::Duration;

use ycsb_db::{Properties, Property, PropertyDecl, PropertyError, MAX_SECONDS};

use crate::runner::Phase;

/// `dotransactions` (Java): run the transaction phase (`true`, Java's
/// default) or the load phase (`false`, Java's `-load`).
pub(crate) const DO_TRANSACTIONS: Property<bool> = Property::optional(
    "dotransactions",
    "Java YCSB's phase switch: true runs the transaction (run) phase, false the load phase (Java's -t and -load flags). Read when neither doload nor dotransaction is set; with none of the three the run phase runs, as Java's Client does.",
);
/// `doload` (YCSB-cpp's `-load`).
pub(crate) const DO_LOAD: Property<bool> = Property::optional(
    "doload",
    "YCSB-cpp's -load: run the load phase. With doload or dotransaction set, these two decide the phases (both: load, then run, in one process).",
);
/// `dotransaction` (YCSB-cpp's `-run`/`-t`).
pub(crate) const DO_TRANSACTION: Property<bool> = Property::optional(
    "dotransaction",
    "YCSB-cpp's -run (and -t): run the transaction phase. With doload or dotransaction set, these two decide the phases.",
);
/// `status` (the `-s` flag of both programs).
pub(crate) const STATUS: Property<bool> = Property::new(
    "status",
    "false",
    "Print a status line every status.interval seconds on standard error (the -s flag).",
);
/// `label` (Java's `-l` flag).
pub(crate) const LABEL: Property<String> = Property::new(
    "label",
    "",
    "Text put directly before the date of every status line (Java's -l flag), to tell the experiments of a batch apart.",
);
/// `sleepafterload` (YCSB-cpp).
pub(crate) const SLEEP_AFTER_LOAD: Property<u64> = Property::new(
    "sleepafterload",
    "0",
    "Seconds to wait before the run phase, after the load phase when both run (YCSB-cpp's; it waits before a run phase that runs alone too), for example for an engine's compactions to settle. Ctrl-C ends the wait.",
);

/// Every property the client reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    DO_TRANSACTIONS.decl(),
    DO_LOAD.decl(),
    DO_TRANSACTION.decl(),
    STATUS.decl(),
    LABEL.decl(),
    SLEEP_AFTER_LOAD.decl(),
];

/// What to run and show, from the client's properties.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientSettings {
    /// The phases, in order.
    pub phases: Vec<Phase>,
    /// Whether status lines are shown.
    pub status: bool,
    /// The text before the date of each status line.
    pub label: String,
    /// The pause before the run phase.
    pub sleep_after_load: Duration,
}

impl ClientSettings {
    /// Reads the settings. The phases: YCSB-cpp's `doload` and
    /// `dotransaction` when either is set (a phase each); otherwise Java's
    /// `dotransactions` (true: run, false: load), whose default is the run
    /// phase.
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming an invalid value and where it came from,
    /// including a `doload`/`dotransaction` pair that selects no phase.
    pub fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let load = props.get_opt(&DO_LOAD)?;
        let transaction = props.get_opt(&DO_TRANSACTION)?;
        let phases = if load.is_some() || transaction.is_some() {
            let phases: Vec<Phase> = [
                (load == Some(true), Phase::Load),
                (transaction == Some(true), Phase::Run),
            ]
            .into_iter()
            .filter_map(|(on, phase)| on.then_some(phase))
            .collect();
            if phases.is_empty() {
                let decl = if load.is_some() {
                    DO_LOAD.decl()
                } else {
                    DO_TRANSACTION.decl()
                };
                return Err(props.invalid(
                    decl,
                    "doload and dotransaction select no phase: set one of them to true",
                ));
            }
            phases
        } else if props.get_opt(&DO_TRANSACTIONS)? == Some(false) {
            vec![Phase::Load]
        } else {
            vec![Phase::Run]
        };
        let sleep = props.get_checked(&SLEEP_AFTER_LOAD, |s| {
            if *s <= MAX_SECONDS {
                Ok(())
            } else {
                Err(format!("expected at most {MAX_SECONDS} seconds"))
            }
        })?;
        Ok(ClientSettings {
            phases,
            status: props.get(&STATUS)?,
            label: props.get(&LABEL)?,
            sleep_after_load: Duration::from_secs(sleep),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phases(pairs: &[(&str, &str)]) -> Result<Vec<Phase>, PropertyError> {
        let mut props = Properties::new();
        for (k, v) in pairs {
            props = props.with(*k, *v);
        }
        ClientSettings::from_properties(&props).map(|s| s.phases)
    }

    #[test]
    fn phases_follow_java_then_ycsb_cpp() {
        use Phase::{Load, Run};
        // Java's Client: dotransactions defaults to true.
        assert_eq!(phases(&[]).unwrap(), [Run]);
        assert_eq!(phases(&[("dotransactions", "false")]).unwrap(), [Load]);
        assert_eq!(phases(&[("dotransactions", "true")]).unwrap(), [Run]);
        // YCSB-cpp's pair decides when present.
        assert_eq!(phases(&[("doload", "true")]).unwrap(), [Load]);
        assert_eq!(phases(&[("dotransaction", "true")]).unwrap(), [Run]);
        assert_eq!(
            phases(&[("doload", "true"), ("dotransaction", "true")]).unwrap(),
            [Load, Run]
        );
        assert_eq!(
            phases(&[("doload", "true"), ("dotransactions", "true")]).unwrap(),
            [Load]
        );
        let err = phases(&[("doload", "false")]).unwrap_err().to_string();
        assert!(err.contains("doload") && err.contains("no phase"), "{err}");
        let err = phases(&[("dotransactions", "yes")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("dotransactions"), "{err}");
    }

    #[test]
    fn status_label_and_sleep() {
        let props = Properties::new()
            .with("status", "true")
            .with("label", "exp1 ")
            .with("sleepafterload", 3);
        let s = ClientSettings::from_properties(&props).unwrap();
        assert!(s.status);
        assert_eq!(s.label, "exp1 ");
        assert_eq!(s.sleep_after_load, Duration::from_secs(3));
        let d = ClientSettings::from_properties(&Properties::new()).unwrap();
        assert!(!d.status && d.label.is_empty() && d.sleep_after_load.is_zero());
    }
}
