//! `-p live.port=N`: a live view of a running benchmark, served over
//! HTTP/1.1 on its own threads.
//!
//! The status thread hands each interval's row (already computed for the
//! time series: `SessionObserver::interval_observed`) and the gauges'
//! kinds to [`LiveFeed`], which appends a clone under a lock taken once
//! per interval; nothing is added to the operations' path. The server
//! builds the page from those rows only when a page asks and the rows
//! changed since the last render: the phase sections of `ycsb report`'s
//! model (`ycsb_report::Comparison`, the engine's gauges charted by kind
//! among them), rendered by its one HTML renderer. When the run ends, the
//! page becomes the final report: `ycsb report`'s page of the run's JSON
//! export.
//!
//! Routes (GET or HEAD only; anything else gets 400, 404 or 405):
//! - `/`: the page (the final report once the run ended);
//! - `/charts?have=<version>`: the charts as an HTML fragment, 204 when
//!   `have` is current, with `X-Live-Version` and `X-Live-Finished`;
//! - `/data`: the series so far as JSON;
//! - `/report`: the final report (404 while the run goes).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use serde_json::{json, Value};
use ycsb_core::db::GaugeKind;
use ycsb_core::observe::LiveSettings;
use ycsb_core::{Phase, PhaseOutcome, StopSignal};
use ycsb_report::{LiveRefresh, Note, Page, Section};
use ycsb_results::SeriesRow;
use ycsb_results::{
    ConfigEntry, Operation, PhaseReport, ReportFormat, RunMetadata, RunReport, SectionReport,
};

/// The longest request head read (request line and headers).
const MAX_HEAD: usize = 8 * 1024;
/// Connections served at once. A connection beyond it takes the place of
/// the one that has been sending its request the longest; when every
/// connection is being answered, it is answered 503 at once.
const MAX_CONNECTIONS: usize = 32;
/// How long a client may take to send its whole request (not each read:
/// a client trickling a byte a second would never trip a per-read
/// timeout).
const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// How long a client may take to take the response.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After the run, how long a page that was polling is waited for to
/// fetch the final report (with `live.linger=0`).
const FINAL_FETCH_WAIT: Duration = Duration::from_secs(5);
/// The fastest the page polls, whatever the granularity.
const MIN_POLL: Duration = Duration::from_millis(100);

/// What the server shows, shared by the status thread and the server.
struct State {
    /// Bumped at every change, so that a page and the chart cache know
    /// whether they are current.
    version: u64,
    metadata: RunMetadata,
    config: Vec<ConfigEntry>,
    granularity_s: f64,
    /// Reports of the phases that ended.
    finished_phases: Vec<Arc<PhaseReport>>,
    /// The phase running and its rows so far.
    current: Option<(Phase, Vec<SeriesRow>)>,
    /// The kind of each gauge the running phase sampled.
    gauge_kinds: BTreeMap<String, GaugeKind>,
    /// The final report page, once the run ended.
    final_page: Option<Arc<String>>,
    /// The last rendered chart fragment and the version it shows.
    charts: Option<(u64, Arc<String>)>,
}

/// The state and what the server tells the end of the run.
struct Shared {
    state: Mutex<State>,
    title: String,
    poll: Duration,
    /// When a page last polled for charts.
    last_poll: Mutex<Option<Instant>>,
    /// Whether the final report was sent.
    report_served: AtomicBool,
    connections: AtomicUsize,
    /// The connections still sending their request, oldest first: those
    /// a new connection may evict, so that slow or idle clients never
    /// keep complete requests from being answered.
    reading: Mutex<Vec<Reading>>,
    next_connection: AtomicU64,
}

/// A connection still sending its request.
struct Reading {
    id: u64,
    /// A handle on the socket, to shut it down when evicted.
    stream: TcpStream,
}

impl Shared {
    fn new(
        title: String,
        granularity: Duration,
        metadata: &RunMetadata,
        config: &[ConfigEntry],
    ) -> Self {
        Self {
            state: Mutex::new(State {
                version: 0,
                metadata: metadata.clone(),
                config: config.to_vec(),
                granularity_s: granularity.as_secs_f64(),
                finished_phases: Vec::new(),
                current: None,
                gauge_kinds: BTreeMap::new(),
                final_page: None,
                charts: None,
            }),
            title,
            poll: granularity.max(MIN_POLL),
            last_poll: Mutex::new(None),
            report_served: AtomicBool::new(false),
            connections: AtomicUsize::new(0),
            reading: Mutex::new(Vec::new()),
            next_connection: AtomicU64::new(0),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not take the view down with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reading(&self) -> MutexGuard<'_, Vec<Reading>> {
        self.reading.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Shuts down the connection that has been sending its request the
    /// longest (its thread then ends at once); false when every connection
    /// has its request and is being answered.
    fn evict_oldest_reader(&self) -> bool {
        let mut reading = self.reading();
        if reading.is_empty() {
            return false;
        }
        let oldest = reading.remove(0);
        let _ = oldest.stream.shutdown(std::net::Shutdown::Both);
        true
    }

    /// The connection `id` has its request (or gave up): it can no longer
    /// be evicted.
    fn done_reading(&self, id: u64) {
        self.reading().retain(|r| r.id != id);
    }
}

/// The status thread's handle: what the run shows goes in here.
#[derive(Clone)]
pub(crate) struct LiveFeed {
    shared: Arc<Shared>,
}

impl LiveFeed {
    pub(crate) fn phase_starting(&self, phase: Phase) {
        let mut state = self.shared.state();
        state.current = Some((phase, Vec::new()));
        state.gauge_kinds.clear();
        state.version += 1;
    }

    pub(crate) fn interval_observed(
        &self,
        phase: Phase,
        row: &SeriesRow,
        gauge_kinds: &BTreeMap<String, GaugeKind>,
    ) {
        let row = row.clone();
        let mut state = self.shared.state();
        match &mut state.current {
            Some((p, rows)) if *p == phase => rows.push(row),
            _ => state.current = Some((phase, vec![row])),
        }
        if state.gauge_kinds.len() != gauge_kinds.len() {
            state.gauge_kinds.clone_from(gauge_kinds);
        }
        state.version += 1;
    }

    pub(crate) fn phase_finished(&self, outcome: &PhaseOutcome) {
        let report = outcome.report.clone();
        let mut state = self.shared.state();
        state.finished_phases.push(Arc::new(report));
        state.current = None;
        state.version += 1;
    }
}

/// A live view being served.
pub(crate) struct LiveView {
    shared: Arc<Shared>,
    url: String,
    linger: Duration,
}

impl LiveView {
    /// Listens on the settings' address and serves from a thread of its
    /// own. `granularity` is the time series' interval (the page polls as
    /// often, 0.1 s at the fastest).
    ///
    /// # Errors
    ///
    /// The error of binding the address, as one line naming it.
    pub(crate) fn start(
        settings: &LiveSettings,
        granularity: Duration,
        title: String,
        metadata: &RunMetadata,
        config: &[ConfigEntry],
    ) -> Result<Self, String> {
        let listener = TcpListener::bind(settings.address).map_err(|e| {
            format!(
                "{}={} with {}={}: cannot listen on {}: {e}",
                ycsb_core::observe::LIVE_PORT.name(),
                settings.address.port(),
                ycsb_core::observe::LIVE_ADDRESS.name(),
                settings.address.ip(),
                settings.address
            )
        })?;
        let address = listener
            .local_addr()
            .map_err(|e| format!("the live view's address: {e}"))?;
        let shared = Arc::new(Shared::new(title, granularity, metadata, config));
        let server = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("live-view".into())
            .spawn(move || accept(&listener, &server))
            .map_err(|e| format!("starting the live view: {e}"))?;
        Ok(Self {
            shared,
            url: format!("http://{address}/"),
            linger: settings.linger,
        })
    }

    /// The page's address.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The handle the status thread feeds.
    pub(crate) fn feed(&self) -> LiveFeed {
        LiveFeed {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The run ended with `report`: the page becomes its final report.
    pub(crate) fn finish(&self, report: &RunReport) {
        let page = final_page(report, &self.shared.title);
        let mut state = self.shared.state();
        state.current = None;
        state.final_page = Some(Arc::new(page));
        state.version += 1;
    }

    /// After [`LiveView::finish`]: waits for a page that was open to fetch
    /// the final report (a few seconds at most), then serves for
    /// `live.linger` or until `stop` is raised (Ctrl-C, SIGTERM).
    pub(crate) fn linger(&self, stop: &StopSignal) {
        let polled_lately = self
            .shared
            .last_poll
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|t| t.elapsed() < 2 * self.shared.poll + Duration::from_secs(2));
        let start = Instant::now();
        if polled_lately {
            while !self.shared.report_served.load(Ordering::SeqCst)
                && start.elapsed() < FINAL_FETCH_WAIT
                && !stop.is_stopped()
            {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if self.linger.is_zero() || stop.is_stopped() {
            return;
        }
        eprintln!(
            "ycsb: live view: the run ended; the final report is served at {} for {} s (Ctrl-C ends it sooner)",
            self.url,
            self.linger.as_secs_f64()
        );
        let start = Instant::now();
        while start.elapsed() < self.linger && !stop.is_stopped() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            // A connection reset before it was accepted, or no file
            // descriptors left for a moment: the next one may do.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        // At the cap, the newcomer takes the place of the slowest sender;
        // the evicted thread ends as its socket shuts down, so the count
        // exceeds the cap only for that moment.
        if shared.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS
            && !shared.evict_oldest_reader()
        {
            shared.connections.fetch_sub(1, Ordering::SeqCst);
            let busy = Response::text(503, "too many connections to the live view\n");
            let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
            let _ = busy.write_to(&mut stream, false);
            continue;
        }
        let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
        if let Ok(handle) = stream.try_clone() {
            shared.reading().push(Reading { id, stream: handle });
        }
        let mine = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("live-view-conn".into())
            .spawn(move || {
                serve_connection(stream, &mine, id);
                mine.done_reading(id);
                mine.connections.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            shared.done_reading(id);
            shared.connections.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// How reading a request head ended.
enum Head {
    Complete,
    TooLarge,
    /// Closed, failed or evicted.
    Gone,
    /// Not all there by the deadline.
    TooSlow,
}

/// Reads a request head into `head`, all of it within [`REQUEST_DEADLINE`]
/// of `start`.
fn read_head(stream: &mut TcpStream, head: &mut Vec<u8>, start: Instant) -> Head {
    let mut buf = [0u8; 1024];
    loop {
        if head_end(head).is_some() {
            return Head::Complete;
        }
        if head.len() > MAX_HEAD {
            return Head::TooLarge;
        }
        let left = REQUEST_DEADLINE.saturating_sub(start.elapsed());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Head::TooSlow;
        }
        match stream.read(&mut buf) {
            Ok(0) => return Head::Gone,
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Head::TooSlow
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Head::Gone,
        }
    }
}

/// Serves one request on `stream`, then closes it.
fn serve_connection(mut stream: TcpStream, shared: &Shared, id: u64) {
    let start = Instant::now();
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut head = Vec::with_capacity(1024);
    let read = read_head(&mut stream, &mut head, start);
    // Answering takes its time (rendering charts): the connection no
    // longer counts among those a newcomer may evict.
    shared.done_reading(id);
    let response = match read {
        Head::Complete => respond(&head, shared),
        Head::TooLarge => Response::text(431, "request head too large\n"),
        Head::TooSlow => Response::text(
            408,
            &format!(
                "the request was not received within {} s\n",
                REQUEST_DEADLINE.as_secs()
            ),
        ),
        Head::Gone if head.is_empty() => return,
        Head::Gone => Response::text(400, "incomplete request\n"),
    };
    let head_only = head.starts_with(b"HEAD ");
    let _ = response.write_to(&mut stream, head_only);
}

/// Where the request head ends (after its empty line).
fn head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
        .or_else(|| bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2))
}

/// An HTTP response.
#[derive(Debug)]
struct Response {
    status: u16,
    content_type: &'static str,
    headers: Vec<(&'static str, String)>,
    body: Arc<String>,
}

impl Response {
    fn new(status: u16, content_type: &'static str, body: impl Into<Arc<String>>) -> Self {
        Self {
            status,
            content_type,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    fn text(status: u16, body: &str) -> Self {
        Self::new(status, "text/plain; charset=utf-8", body.to_string())
    }

    fn with(mut self, name: &'static str, value: impl ToString) -> Self {
        self.headers.push((name, value.to_string()));
        self
    }

    fn write_to(&self, out: &mut impl Write, head_only: bool) -> std::io::Result<()> {
        let reason = match self.status {
            200 => "OK",
            204 => "No Content",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            408 => "Request Timeout",
            431 => "Request Header Fields Too Large",
            503 => "Service Unavailable",
            _ => "",
        };
        let mut head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n",
            self.status,
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        if !head_only {
            out.write_all(self.body.as_bytes())?;
        }
        out.flush()
    }
}

/// The response to one request head.
fn respond(head: &[u8], shared: &Shared) -> Response {
    let Ok(head) = std::str::from_utf8(head) else {
        return Response::text(400, "the request is not UTF-8\n");
    };
    let line = head.lines().next().unwrap_or("");
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts.as_slice() else {
        return Response::text(400, "expected 'METHOD /path HTTP/1.1'\n");
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Response::text(400, "expected 'METHOD /path HTTP/1.1'\n");
    }
    if *method != "GET" && *method != "HEAD" {
        return Response::text(405, "the live view only answers GET and HEAD\n")
            .with("Allow", "GET, HEAD");
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    match path {
        "/" | "/report" => {
            let final_page = shared.state().final_page.clone();
            match final_page {
                Some(page) => {
                    shared.report_served.store(true, Ordering::SeqCst);
                    Response::new(200, "text/html; charset=utf-8", page)
                }
                None if path == "/" => {
                    Response::new(200, "text/html; charset=utf-8", live_page(shared))
                }
                None => Response::text(404, "the run has not ended: no final report yet\n"),
            }
        }
        "/charts" => {
            *shared.last_poll.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
            let have = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("have="))
                .and_then(|v| v.parse::<u64>().ok());
            let (version, finished) = {
                let state = shared.state();
                (state.version, state.final_page.is_some())
            };
            if finished || have == Some(version) {
                return Response::new(204, "text/html; charset=utf-8", String::new())
                    .with("X-Live-Version", version)
                    .with("X-Live-Finished", u8::from(finished));
            }
            let (version, charts) = charts(shared);
            Response::new(200, "text/html; charset=utf-8", charts)
                .with("X-Live-Version", version)
                .with("X-Live-Finished", 0)
        }
        "/data" => Response::new(200, "application/json", data(shared).to_string()),
        _ => Response::text(
            404,
            "not found: the live view has /, /charts, /data and /report\n",
        ),
    }
}

/// The series so far as JSON: every phase's rows, the running one last.
fn data(shared: &Shared) -> Value {
    let state = shared.state();
    let mut phases: Vec<Value> = state
        .finished_phases
        .iter()
        .map(|p| {
            json!({
                "phase": p.phase,
                "series": p.series(),
            })
        })
        .collect();
    if let Some((phase, rows)) = &state.current {
        phases.push(json!({ "phase": phase.name(), "series": rows }));
    }
    json!({
        "version": state.version,
        "finished": state.final_page.is_some(),
        "running": state.current.as_ref().map(|(p, _)| p.name()),
        "granularity_s": state.granularity_s,
        "phases": phases,
    })
}

/// The charts fragment for the current version, rendered at most once
/// per version (several pages share it).
fn charts(shared: &Shared) -> (u64, Arc<String>) {
    // The rows are copied out so that the status thread never waits for a
    // render.
    let (version, metadata, config, finished, current, gauge_kinds, granularity_s) = {
        let state = shared.state();
        if let Some((v, html)) = &state.charts {
            if *v == state.version {
                return (*v, Arc::clone(html));
            }
        }
        (
            state.version,
            state.metadata.clone(),
            state.config.clone(),
            state.finished_phases.clone(),
            state.current.clone(),
            state.gauge_kinds.clone(),
            state.granularity_s,
        )
    };
    let mut phases: Vec<PhaseReport> = finished.iter().map(|p| PhaseReport::clone(p)).collect();
    if let Some((phase, rows)) = &current {
        phases.push(running_phase(*phase, rows, gauge_kinds, granularity_s));
    }
    let doc = RunReport {
        schema_version: ycsb_results::SCHEMA_VERSION,
        metadata,
        config,
        phases,
        engine_reports: Vec::new(),
    };
    let mut sections = vec![now_section(&current)];
    sections.extend(
        ycsb_report::Comparison::new(ycsb_report::runs_from_exports(vec![("live".into(), doc)]))
            .phase_sections(),
    );
    let html = Arc::new(ycsb_report::render_sections(&sections));
    let mut state = shared.state();
    if state.charts.as_ref().is_none_or(|(v, _)| *v < version) {
        state.charts = Some((version, Arc::clone(&html)));
    }
    (version, html)
}

/// What runs now: the phase, how far it is and its last throughput.
fn now_section(current: &Option<(Phase, Vec<SeriesRow>)>) -> Section {
    let mut section = Section::new("Now");
    section.blocks.push(Note::plain(match current {
        Some((phase, rows)) => match rows.last() {
            Some(row) => format!(
                "{} phase running: {:.1} s, {:.0} operations/s in the last interval",
                phase.name(),
                row.time_s,
                row.throughput
            ),
            None => format!("{} phase running: no interval has ended yet", phase.name()),
        },
        None => "between phases".to_string(),
    }));
    section
}

/// A running phase as an export's phase: its sections (from the rows,
/// without figures), its series so far and its gauges' kinds.
fn running_phase(
    phase: Phase,
    rows: &[SeriesRow],
    gauge_kinds: BTreeMap<String, GaugeKind>,
    granularity_s: f64,
) -> PhaseReport {
    let mut sections: Vec<SectionReport> = Vec::new();
    for s in rows.iter().flat_map(|r| &r.sections) {
        if sections
            .iter()
            .any(|known| known.name == s.name && known.intended == s.intended)
        {
            continue;
        }
        sections.push(SectionReport {
            name: s.name.clone(),
            operation: Operation::from_name(&s.operation).unwrap_or(Operation::Read),
            intended: s.intended,
            failed: false,
            operations: 0,
            average_us: 0.0,
            min_us: 0,
            max_us: 0,
            average_ns: 0.0,
            min_ns: 0,
            max_ns: 0,
            percentiles: Vec::new(),
            histogram: None,
            returns: Vec::new(),
            java: None,
        });
    }
    PhaseReport {
        phase: phase.name().to_string(),
        runtime_ms: 0,
        runtime_ns: 0,
        operations: 0,
        throughput: 0.0,
        sections,
        format: ReportFormat::default(),
        observation: Some(ycsb_results::PhaseObservation {
            granularity_s,
            start_unix_ms: 0,
            warmup: None,
            series: rows.to_vec(),
            stability: None,
            amplification: None,
            gauge_kinds,
        }),
    }
}

/// The final report: `ycsb report`'s page of the run's JSON export.
fn final_page(report: &RunReport, title: &str) -> String {
    let runs = ycsb_report::runs_from_exports(vec![("this run".into(), report.clone())]);
    ycsb_report::Comparison::new(runs).to_html(title)
}

/// The page shown while the run goes: the charts so far, redrawn every
/// interval, turning into the final report when the run ends.
fn live_page(shared: &Shared) -> String {
    let (version, charts) = charts(shared);
    let page = Page {
        title: format!("{} (live)", shared.title),
        sections: Vec::new(),
        live: Some(LiveRefresh {
            fragment: "/charts".into(),
            final_page: "/report".into(),
            poll_ms: u64::try_from(shared.poll.as_millis()).unwrap_or(u64::MAX),
            version,
        }),
    };
    // The sections were rendered once for this version, for the
    // fragment the script fetches again.
    ycsb_report::render_html_with(&page, &charts)
}

/// The URL line printed on standard error, and a warning when the view
/// is reachable from other machines.
pub(crate) fn announce(view: &LiveView, address: SocketAddr) {
    eprintln!("ycsb: live view at {}", view.url());
    if !address.ip().is_loopback() {
        eprintln!(
            "ycsb: warning: the live view listens on {} with no authentication: whoever reaches it sees this run's configuration (secrets redacted)",
            address.ip()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Shared {
        Shared::new(
            "test".into(),
            Duration::from_millis(200),
            &ycsb_core::measurement::run_metadata("ycsb", "0", Vec::new(), &[]),
            &[],
        )
    }

    fn status(head: &[u8], shared: &Shared) -> u16 {
        respond(head, shared).status
    }

    #[test]
    fn bad_requests_get_400_404_or_405() {
        let s = shared();
        for (head, expected) in [
            (&b"GET / HTTP/1.1\r\n\r\n"[..], 200),
            (b"HEAD /data HTTP/1.0\r\n\r\n", 200),
            (b"GET /charts?have=zz HTTP/1.1\r\nHost: x\r\n\r\n", 200),
            (b"GET /report HTTP/1.1\r\n\r\n", 404),
            (b"GET /etc/passwd HTTP/1.1\r\n\r\n", 404),
            (b"GET /../ HTTP/1.1\r\n\r\n", 404),
            (b"POST /data HTTP/1.1\r\n\r\n", 405),
            (b"DELETE / HTTP/1.1\r\n\r\n", 405),
            (b"GET / HTTP/2\r\n\r\n", 400),
            (b"GET  / HTTP/1.1\r\n\r\n", 400),
            (b"GET http://x/ HTTP/1.1\r\n\r\n", 400),
            (b"GET /\r\n\r\n", 400),
            (b"\r\n\r\n", 400),
            (b"\xff\xfe / HTTP/1.1\r\n\r\n", 400),
            (b"", 400),
        ] {
            assert_eq!(
                status(head, &s),
                expected,
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }

    #[test]
    fn a_current_page_gets_no_content_and_the_end_says_finished() {
        let s = shared();
        let first = respond(b"GET /charts HTTP/1.1\r\n\r\n", &s);
        assert_eq!(first.status, 200);
        let version = first
            .headers
            .iter()
            .find(|(n, _)| *n == "X-Live-Version")
            .map(|(_, v)| v.clone())
            .unwrap();
        let again = format!("GET /charts?have={version} HTTP/1.1\r\n\r\n");
        assert_eq!(status(again.as_bytes(), &s), 204);
        s.state().final_page = Some(Arc::new("<p>final</p>".into()));
        let end = respond(again.as_bytes(), &s);
        assert_eq!(end.status, 204);
        assert!(end.headers.contains(&("X-Live-Finished", "1".to_string())));
        let page = respond(b"GET / HTTP/1.1\r\n\r\n", &s);
        assert_eq!(page.body.as_str(), "<p>final</p>");
        assert!(s.report_served.load(Ordering::SeqCst));
    }

    #[test]
    fn responses_are_whole_http_messages() {
        let mut out = Vec::new();
        Response::text(404, "nope\n")
            .write_to(&mut out, false)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\n"), "{text}");
        assert!(text.contains("Content-Length: 5\r\n"), "{text}");
        assert!(text.ends_with("\r\n\r\nnope\n"), "{text}");
        let mut out = Vec::new();
        Response::text(200, "body")
            .write_to(&mut out, true)
            .unwrap();
        assert!(String::from_utf8(out).unwrap().ends_with("\r\n\r\n"));
    }

    proptest::proptest! {
        /// Whatever arrives, the answer is a response, never a panic.
        #[test]
        fn any_bytes_get_a_response(head in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let s = shared();
            let r = respond(&head, &s);
            proptest::prop_assert!([200, 204, 400, 404, 405].contains(&r.status));
        }
    }
}
