//! The observation properties and their checked settings.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use ycsb_db::{Properties, Property, PropertyDecl, PropertyError, PropertyKind, PropertyValue};

/// `timeseries.granularity`.
pub const GRANULARITY: Property<u64> = Property::new(
    "timeseries.granularity",
    "1000",
    "Milliseconds (Java's unit) per time-series interval: of measurementtype=timeseries's rows, and of our own series (per-operation throughput and latency, client resources, engine gauges, DB size); 0 turns the series, resource sampling and stability figures off. Independent of status.interval, except that a shorter status.interval makes the series that fine too.",
);

/// `timeseries.file`.
pub const TIMESERIES_FILE: Property<PathBuf> = Property::optional(
    "timeseries.file",
    "File the time series is appended to while the run goes, one row per interval and flushed: CSV when the name ends in .csv, JSON lines otherwise. The JSON export carries the series whether or not this is set.",
);

/// `measurement.warmup`.
pub const WARMUP: Property<Warmup> = Property::new(
    "measurement.warmup",
    "0",
    "Warm-up of the run phase excluded from the final figures but kept in the time series: seconds (30 or 30s) or an operation count (100000ops); 0 for none.",
);

/// `monitor.pid`.
pub const MONITOR_PID: Property<u32> = Property::optional(
    "monitor.pid",
    "Another process (a database server) whose CPU, memory, I/O and context switches are sampled into the time series beside the client's, and whose written bytes count towards write amplification.",
);

/// `monitor.dir`.
pub const MONITOR_DIR: Property<PathBuf> = Property::optional(
    "monitor.dir",
    "Directory whose size on disk is sampled into the time series and used for space amplification; defaults to the store's own data directory (an embedded engine's dbname property).",
);

/// `steadystate.window`.
pub const STEADY_STATE_WINDOW: Property<u64> = Property::new(
    "steadystate.window",
    "5",
    "Steady-state detection: the number of consecutive intervals that must all lie within steadystate.tolerance of the mean throughput from there to the end of the phase.",
);

/// `steadystate.tolerance`.
pub const STEADY_STATE_TOLERANCE: Property<f64> = Property::new(
    "steadystate.tolerance",
    "0.1",
    "Steady-state detection: the largest relative deviation (0.1 = 10 %) of an interval's throughput from the mean of the rest of the phase.",
);

/// `live.port`.
pub const LIVE_PORT: Property<u32> = Property::optional(
    "live.port",
    "Serve a live view of the run on this TCP port (0 picks a free one; the URL is printed on standard error): a page whose charts (throughput, latency percentiles, CPU, RSS, engine gauges) are redrawn every time-series interval and that ends as the final report. Needs the time series (timeseries.granularity above 0). See docs/observability.md.",
);

/// `live.address`.
pub const LIVE_ADDRESS: Property<String> = Property::new(
    "live.address",
    "127.0.0.1",
    "The IP address the live view (live.port) listens on. The page has no authentication and shows the run's configuration (secrets redacted): an address other than loopback serves it to whoever can reach it, so it must be set here explicitly.",
);

/// `live.linger`.
pub const LIVE_LINGER: Property<Duration> = Property::new(
    "live.linger",
    "0",
    "Seconds the live view (live.port) goes on serving the final report after the run ended (Ctrl-C or SIGTERM ends it sooner). With 0, a page that was open still gets the final report: the process waits for it, a few seconds at most.",
);

/// Every property the observation module reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    GRANULARITY.decl(),
    TIMESERIES_FILE.decl(),
    WARMUP.decl(),
    MONITOR_PID.decl(),
    MONITOR_DIR.decl(),
    STEADY_STATE_WINDOW.decl(),
    STEADY_STATE_TOLERANCE.decl(),
    LIVE_PORT.decl(),
    LIVE_ADDRESS.decl(),
    LIVE_LINGER.decl(),
];

/// Where and how long the live view of a run is served (`live.port`,
/// `live.address`, `live.linger`). The serving itself is the program's:
/// the session only hands each interval's row to its observer
/// ([`SessionObserver::interval_observed`](crate::SessionObserver::interval_observed)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveSettings {
    /// The address to listen on; port 0 means any free port.
    pub address: std::net::SocketAddr,
    /// How long to serve the final report after the run.
    pub linger: Duration,
}

impl LiveSettings {
    /// Reads the live-view properties: `None` unless `live.port` is set.
    /// `series` says whether the time series is kept (the live view shows
    /// nothing else).
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming the property: a port or linger that does
    /// not parse, an address that is not an IP address, or `live.port`
    /// with `timeseries.granularity=0`.
    pub fn from_properties(
        props: &Properties,
        series: bool,
    ) -> Result<Option<Self>, PropertyError> {
        let address: String = props.get(&LIVE_ADDRESS)?;
        let ip: std::net::IpAddr = address.trim().parse().map_err(|_| {
            props.invalid(
                LIVE_ADDRESS.decl(),
                "expected an IP address (127.0.0.1 or ::1, say), not a name",
            )
        })?;
        let linger = props.get(&LIVE_LINGER)?;
        let Some(port) = props.get_opt(&LIVE_PORT)? else {
            return Ok(None);
        };
        let port = u16::try_from(port)
            .map_err(|_| props.invalid(LIVE_PORT.decl(), "expected a TCP port, 0 to 65535"))?;
        if !series {
            return Err(props.invalid(
                LIVE_PORT.decl(),
                "the live view draws the time series, which timeseries.granularity=0 turns off",
            ));
        }
        Ok(Some(Self {
            address: std::net::SocketAddr::new(ip, port),
            linger,
        }))
    }
}

/// A warm-up: how much of the start of the run phase the final figures
/// leave out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Warmup {
    /// No warm-up.
    #[default]
    None,
    /// The first span of time.
    Time(Duration),
    /// The first operations, over all threads.
    Operations(u64),
}

impl fmt::Display for Warmup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warmup::None => f.write_str("0"),
            Warmup::Time(d) => write!(f, "{}s", d.as_secs_f64()),
            Warmup::Operations(n) => write!(f, "{n}ops"),
        }
    }
}

impl PropertyValue for Warmup {
    const KIND: PropertyKind = PropertyKind::Text;

    fn parse_value(raw: &str) -> Result<Self, String> {
        const EXPECTED: &str = "expected seconds (30 or 30s) or an operation count (100000ops)";
        let raw = raw.trim();
        if let Some(count) = raw.strip_suffix("ops") {
            return match count.trim().parse::<u64>() {
                Ok(0) => Ok(Warmup::None),
                Ok(n) => Ok(Warmup::Operations(n)),
                Err(_) => Err(EXPECTED.to_string()),
            };
        }
        let seconds = raw.strip_suffix('s').unwrap_or(raw).trim();
        match seconds.parse::<f64>() {
            Ok(0.0) => Ok(Warmup::None),
            Ok(s) if s.is_finite() && s > 0.0 && s < 1e9 => {
                Ok(Warmup::Time(Duration::from_secs_f64(s)))
            }
            _ => Err(EXPECTED.to_string()),
        }
    }
}

/// An error setting up observation.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// A property is invalid.
    #[error(transparent)]
    Property(#[from] PropertyError),
    /// The time-series file could not be created or written.
    #[error("timeseries.file {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// The checked observation settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ObserveSettings {
    /// The time-series interval; `None` turns observation off.
    pub granularity: Option<Duration>,
    /// Where rows are appended while the run goes.
    pub file: Option<PathBuf>,
    /// The run phase's warm-up.
    pub warmup: Warmup,
    /// Another process to sample.
    pub monitor_pid: Option<u32>,
    /// The directory whose size is sampled.
    pub db_dir: Option<PathBuf>,
    /// Steady-state window, in intervals (at least 1).
    pub steady_window: usize,
    /// Steady-state tolerance, relative.
    pub steady_tolerance: f64,
    /// The live view, when `live.port` is set.
    pub live: Option<LiveSettings>,
}

impl Default for ObserveSettings {
    /// The declared defaults.
    fn default() -> Self {
        Self {
            granularity: Some(Duration::from_secs(1)),
            file: None,
            warmup: Warmup::None,
            monitor_pid: None,
            db_dir: None,
            steady_window: 5,
            steady_tolerance: 0.1,
            live: None,
        }
    }
}

/// The smallest granularity: finer ticks would make the status thread
/// compete with the workers for the CPU.
const MIN_GRANULARITY: Duration = Duration::from_millis(10);

impl ObserveSettings {
    /// Reads and checks the [`PROPERTIES`]; the DB directory falls back to
    /// `store_dir`, the store's own data directory (its descriptor's
    /// [`data_dir`](ycsb_db::StoreDescriptor::data_dir)).
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming the property, its value and where it came
    /// from: a value that does not parse, a granularity between 0 and
    /// 10 ms, a `monitor.pid` with no process, a window of 0 or a tolerance
    /// outside `(0, 1]`.
    pub fn from_properties(
        props: &Properties,
        store_dir: Option<PathBuf>,
    ) -> Result<Self, PropertyError> {
        let granularity = granularity(props)?;
        let monitor_pid = props.get_opt(&MONITOR_PID)?;
        if let Some(pid) = monitor_pid {
            if !std::path::Path::new(&format!("/proc/{pid}/stat")).exists() {
                return Err(props.invalid(
                    MONITOR_PID.decl(),
                    format!("no process {pid} to monitor (/proc/{pid}/stat does not exist)"),
                ));
            }
        }
        let db_dir = match props.get_opt(&MONITOR_DIR)? {
            Some(dir) => Some(dir),
            None => store_dir,
        };
        let steady_window = props.get_checked(&STEADY_STATE_WINDOW, |w| {
            if (1..=1_000_000).contains(w) {
                Ok(())
            } else {
                Err("expected between 1 and 1000000 intervals".into())
            }
        })? as usize;
        let steady_tolerance = props.get_checked(&STEADY_STATE_TOLERANCE, |t| {
            if *t > 0.0 && *t <= 1.0 {
                Ok(())
            } else {
                Err("expected a fraction above 0 and at most 1".into())
            }
        })?;
        let live = LiveSettings::from_properties(props, granularity.is_some())?;
        Ok(Self {
            live,
            granularity,
            file: props.get_opt(&TIMESERIES_FILE)?,
            warmup: props.get(&WARMUP)?,
            monitor_pid,
            db_dir,
            steady_window,
            steady_tolerance,
        })
    }
}

/// Reads `timeseries.granularity`: `None` for 0. A shorter
/// `status.interval` makes the series that fine too: a status line covers
/// whole series intervals, so it cannot come more often than they do.
///
/// # Errors
///
/// A [`PropertyError`] for a value that does not parse or lies between 0
/// and 10 ms.
pub(crate) fn granularity(props: &Properties) -> Result<Option<Duration>, PropertyError> {
    let g = Duration::from_millis(granularity_ms(props)?);
    if g.is_zero() {
        return Ok(None);
    }
    // An invalid status.interval is reported by the measurement settings.
    let status = props
        .get(&crate::measurement::STATUS_INTERVAL)
        .unwrap_or(g)
        .max(MIN_GRANULARITY);
    Ok(Some(g.min(status)))
}

/// Reads `timeseries.granularity` as set, in milliseconds (Java's unit),
/// 0 meaning off.
///
/// # Errors
///
/// A [`PropertyError`] for a value that is not a whole number of
/// milliseconds, or lies between 0 and 10 ms.
pub(crate) fn granularity_ms(props: &Properties) -> Result<u64, PropertyError> {
    let min_ms = MIN_GRANULARITY.as_millis() as u64;
    props.get_checked(&GRANULARITY, |&ms| {
        if ms == 0 || ms >= min_ms {
            Ok(())
        } else {
            Err(format!(
                "expected 0 (off) or at least {min_ms} milliseconds (the unit is milliseconds, as in Java)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_syntax() {
        assert_eq!(Warmup::parse_value("0"), Ok(Warmup::None));
        assert_eq!(Warmup::parse_value("0ops"), Ok(Warmup::None));
        assert_eq!(
            Warmup::parse_value("30"),
            Ok(Warmup::Time(Duration::from_secs(30)))
        );
        assert_eq!(
            Warmup::parse_value(" 1.5s "),
            Ok(Warmup::Time(Duration::from_millis(1500)))
        );
        assert_eq!(
            Warmup::parse_value("100000ops"),
            Ok(Warmup::Operations(100_000))
        );
        for bad in ["soon", "-3", "3m", "ops", "1.5ops", "nan", "inf", ""] {
            assert!(Warmup::parse_value(bad).is_err(), "{bad}");
        }
        assert_eq!(Warmup::Operations(7).to_string(), "7ops");
    }

    #[test]
    fn defaults_and_fallback_directory() {
        let s = ObserveSettings::from_properties(&Properties::new(), None).unwrap();
        assert_eq!(s, ObserveSettings::default());
        let store_dir = Some(PathBuf::from("/tmp/x"));
        let s = ObserveSettings::from_properties(&Properties::new(), store_dir.clone()).unwrap();
        assert_eq!(s.db_dir, store_dir);
        let props = Properties::new().with("monitor.dir", "/tmp/y");
        let s = ObserveSettings::from_properties(&props, store_dir).unwrap();
        assert_eq!(s.db_dir, Some(PathBuf::from("/tmp/y")));
    }

    #[test]
    fn live_view_listens_on_loopback_unless_told() {
        let props = Properties::new().with("live.port", "0");
        let live = ObserveSettings::from_properties(&props, None)
            .unwrap()
            .live
            .unwrap();
        assert_eq!(live.address.to_string(), "127.0.0.1:0");
        assert_eq!(live.linger, Duration::ZERO);
        let props = Properties::new()
            .with("live.port", "8099")
            .with("live.address", "::1")
            .with("live.linger", "2.5");
        let live = ObserveSettings::from_properties(&props, None)
            .unwrap()
            .live
            .unwrap();
        assert_eq!(live.address.to_string(), "[::1]:8099");
        assert_eq!(live.linger, Duration::from_millis(2500));
    }

    #[test]
    fn bad_values_name_the_property() {
        for (key, value) in [
            ("timeseries.granularity", "0.001"),
            ("timeseries.granularity", "5"),
            ("timeseries.granularity", "0.5"),
            ("timeseries.granularity", "-1"),
            ("measurement.warmup", "soon"),
            ("monitor.pid", "abc"),
            ("monitor.pid", "4294967294"),
            ("steadystate.window", "0"),
            ("steadystate.tolerance", "2"),
            ("live.port", "65536"),
            ("live.port", "http"),
            ("live.linger", "-1"),
        ] {
            let props = Properties::new().with(key, value);
            let e = ObserveSettings::from_properties(&props, None).unwrap_err();
            assert!(e.to_string().contains(key), "{key}={value}: {e}");
        }
        let props = Properties::new().with("timeseries.granularity", "0");
        let s = ObserveSettings::from_properties(&props, None).unwrap();
        assert_eq!(s.granularity, None);
        let props = Properties::new().with("status.interval", "0.5");
        let s = ObserveSettings::from_properties(&props, None).unwrap();
        assert_eq!(s.granularity, Some(Duration::from_millis(500)));
        // Java's unit: milliseconds.
        let props = Properties::new().with("timeseries.granularity", "250");
        let s = ObserveSettings::from_properties(&props, None).unwrap();
        assert_eq!(s.granularity, Some(Duration::from_millis(250)));
        let props = Properties::new()
            .with("live.port", "0")
            .with("timeseries.granularity", "0");
        let e = ObserveSettings::from_properties(&props, None).unwrap_err();
        assert!(e.to_string().contains("live.port"), "{e}");
        let props = Properties::new()
            .with("live.port", "0")
            .with("live.address", "localhost");
        let e = ObserveSettings::from_properties(&props, None).unwrap_err();
        assert!(e.to_string().contains("live.address"), "{e}");
        let own = std::process::id().to_string();
        let props = Properties::new().with("monitor.pid", own);
        assert!(ObserveSettings::from_properties(&props, None).is_ok());
    }
}
