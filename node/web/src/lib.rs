//! The agent's local web page and Prometheus metrics (`[http] listen`).
//!
//! Off unless configured. Everything served is read-only and gathered per
//! request by asking the control API's own [`Handler`] the read requests
//! the CLI asks (`info`, `ads`, `q`, `history`, `userprio`, `peers`,
//! `links`), as the agent's own user: no state is shared with the actors,
//! and what the page shows is what `starling status`, `q` and `userprio`
//! print. A [`Snapshot`] is that answer, reduced to what a page may show
//! (no job arguments, environments or files).
//!
//! - `GET /` — a page that polls `/api/pool` and draws the pool by domain,
//!   this agent's jobs, link reservations and users' priorities.
//! - `GET /api/pool` — the [`Snapshot`] as JSON.
//! - `GET /metrics` — the [`Snapshot`] and the agent's [`Metrics`] (claims,
//!   negotiation latency, transfer bytes) as Prometheus text
//!   ([`render_metrics`]).
//!
//! Bounds: at most [`MAX_CONNECTIONS`] connections at once (more wait to be
//! accepted), each closed after [`CONNECTION_LIFETIME`]; each request is
//! answered within [`REQUEST_TIMEOUT`]; a request with a body over
//! [`MAX_BODY_LEN`] bytes or a target over [`MAX_URI_LEN`] is refused before
//! anything is gathered, and hyper bounds the header block. On a loopback
//! address, a request whose `Host` is not loopback is refused (DNS
//! rebinding).

pub mod metrics;

use std::future::Future as _;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::{Request as HttpRequest, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::get;
use axum::Router;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use serde::Serialize;
use starling_protocol::classad::{parse_ad, ClassAd, Evaluator, Name, Side, Value};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::Metrics;
use starling_control::{self as control, Caller, Handler, Request, Response};

/// Connections served at once; further ones wait in the kernel's backlog.
pub const MAX_CONNECTIONS: usize = 64;

/// How long one connection may stay open, keep-alive included.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// How long one request may take to be answered.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest request body accepted, in bytes (every route is a `GET`).
pub const MAX_BODY_LEN: u64 = 1024;

/// Longest request target (path and query), in bytes.
pub const MAX_URI_LEN: usize = 2048;

/// Requests gathered at once; others wait their turn (within the timeout).
pub const MAX_GATHERS: usize = 4;

/// Most jobs of the history counted in `starling_jobs` and listed.
pub const MAX_HISTORY: usize = 1000;

/// Most jobs of the queue listed on the page (all are counted).
pub const MAX_JOBS_LISTED: usize = 500;

/// Why the web server could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("[http] listen = \"{addr}\": cannot listen there")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// What the page and the metrics show: the answers of the control API's
/// read requests, reduced to what may be shown to anyone who reaches the
/// port.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Snapshot {
    pub agent: Agent,
    /// Machine ads in this agent's view, sorted by domain and name.
    pub machines: Vec<Machine>,
    /// This agent's jobs: the queue, then the latest of the history.
    pub jobs: Vec<Job>,
    /// Jobs by status (HTCondor's names), the queue's and the counted
    /// history's.
    pub jobs_by_status: std::collections::BTreeMap<String, u64>,
    pub users: Vec<control::UserPrio>,
    pub links: Vec<control::LinkSummary>,
    /// Requests the agent did not answer, for a person.
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Agent {
    pub agent_id: String,
    pub domain: String,
    pub version: String,
    pub started_ms: u64,
    pub peers: usize,
    pub ads: std::collections::BTreeMap<String, usize>,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Gossip messages rejected from the connected peers.
    pub rejected: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Machine {
    pub name: String,
    pub domain: String,
    pub state: String,
    pub activity: String,
    pub cpus: Option<i64>,
    pub memory_mb: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Job {
    /// `cluster.proc`.
    pub id: String,
    pub owner: String,
    pub status: String,
    /// The slot running it, when it runs.
    pub remote_host: Option<String>,
}

/// HTCondor's name for a `JobStatus`.
pub fn status_name(code: i64) -> &'static str {
    match code {
        1 => "idle",
        2 => "running",
        3 => "removed",
        4 => "completed",
        5 => "held",
        6 => "transferring_output",
        7 => "suspended",
        _ => "unknown",
    }
}

fn attr(ad: &ClassAd, name: &str) -> Value {
    match Name::new(name) {
        Ok(n) => Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, n.folded()),
        Err(_) => Value::Undefined,
    }
}

fn text(ad: &ClassAd, name: &str) -> Option<String> {
    attr(ad, name).as_str().map(str::to_owned)
}

impl Machine {
    fn of(ad: &ClassAd) -> Machine {
        let or_unknown = |n: &str| text(ad, n).unwrap_or_else(|| "Unknown".to_owned());
        Machine {
            name: or_unknown("Name"),
            domain: or_unknown("StarlingDomain"),
            state: or_unknown("State"),
            activity: or_unknown("Activity"),
            cpus: attr(ad, "Cpus").as_int(),
            memory_mb: attr(ad, "Memory").as_int(),
        }
    }
}

impl Job {
    fn of(ad: &ClassAd) -> Job {
        let int = |n: &str| attr(ad, n).as_int();
        Job {
            id: format!(
                "{}.{}",
                int("ClusterId").unwrap_or(0),
                int("ProcId").unwrap_or(0)
            ),
            owner: text(ad, "Owner").unwrap_or_default(),
            status: status_name(int("JobStatus").unwrap_or(0)).to_owned(),
            remote_host: text(ad, "RemoteHost"),
        }
    }
}

/// Asks `handler` what the page and the metrics show, as `caller`. A
/// request that fails leaves its part empty and says why in `errors`.
pub async fn gather(handler: &dyn Handler, caller: &Caller) -> Snapshot {
    let mut snap = Snapshot::default();
    match handler.handle(caller, Request::Info).await {
        Response::Info(info) => {
            snap.agent = Agent {
                agent_id: info.agent_id,
                domain: info.domain,
                version: info.version,
                started_ms: info.started_ms,
                peers: info.peers,
                ads: info.ads,
                bytes_received: info.bytes_received,
                bytes_sent: info.bytes_sent,
                rejected: 0,
            }
        }
        other => snap.errors.push(failed("info", other)),
    }
    match handler.handle(caller, Request::Peers).await {
        Response::Peers { peers } => snap.agent.rejected = peers.iter().map(|p| p.rejected).sum(),
        other => snap.errors.push(failed("peers", other)),
    }
    match handler
        .handle(
            caller,
            Request::Ads {
                kind: "machine".to_owned(),
                constraint: None,
            },
        )
        .await
    {
        Response::Ads { ads } => {
            snap.machines = ads
                .iter()
                .filter_map(|t| parse_ad(t).ok())
                .map(|ad| Machine::of(&ad))
                .collect();
            snap.machines
                .sort_by(|a, b| (&a.domain, &a.name).cmp(&(&b.domain, &b.name)));
        }
        other => snap.errors.push(failed("ads", other)),
    }
    for history in [false, true] {
        let request = Request::Jobs {
            targets: Vec::new(),
            constraint: None,
            history,
            limit: history.then_some(MAX_HISTORY),
            projection: None,
        };
        match handler.handle(caller, request).await {
            Response::Jobs { jobs } => {
                for job in jobs.iter().filter_map(|t| parse_ad(t).ok()) {
                    let job = Job::of(&job);
                    *snap.jobs_by_status.entry(job.status.clone()).or_default() += 1;
                    if snap.jobs.len() < MAX_JOBS_LISTED {
                        snap.jobs.push(job);
                    }
                }
            }
            other => snap
                .errors
                .push(failed(if history { "history" } else { "q" }, other)),
        }
    }
    match handler
        .handle(caller, Request::UserPrio { set_factor: None })
        .await
    {
        Response::UserPrio { users, .. } => snap.users = users,
        other => snap.errors.push(failed("userprio", other)),
    }
    match handler.handle(caller, Request::Links).await {
        Response::Links { links, .. } => snap.links = links,
        other => snap.errors.push(failed("links", other)),
    }
    snap
}

fn failed(what: &str, response: Response) -> String {
    match response {
        Response::Error { message } => format!("{what}: {message}"),
        other => format!("{what}: unexpected answer {other:?}"),
    }
}

type Labels = Vec<(String, String)>;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The Prometheus text exposition of `snap` and of what the actors
/// counted (OpenMetrics text format, as `prometheus-client` writes it).
/// Every metric is named `starling_*`.
pub fn render_metrics(snap: &Snapshot, counted: &Metrics) -> String {
    let mut registry = Registry::with_prefix("starling");
    counted.register(&mut registry);

    let info = Family::<Labels, Gauge>::default();
    info.get_or_create(&labels(&[
        ("agent_id", &snap.agent.agent_id),
        ("domain", &snap.agent.domain),
        ("version", &snap.agent.version),
    ]))
    .set(1);
    registry.register("agent", "This agent: its id, domain and version", info);

    let start = Gauge::<i64>::default();
    start.set(i64::try_from(snap.agent.started_ms / 1000).unwrap_or(i64::MAX));
    registry.register(
        "start_time_seconds",
        "When this agent started, in unix seconds",
        start,
    );

    let slots = Family::<Labels, Gauge>::default();
    for m in &snap.machines {
        slots
            .get_or_create(&labels(&[
                ("domain", &m.domain),
                ("state", &m.state),
                ("activity", &m.activity),
            ]))
            .inc();
    }
    registry.register(
        "slots",
        "Slots (machine ads) in this agent's view, by domain, state and activity, as starling status counts them",
        slots,
    );

    let jobs = Family::<Labels, Gauge>::default();
    for status in ["idle", "running", "held", "completed", "removed"] {
        let _ = jobs.get_or_create(&labels(&[("status", status)]));
    }
    for (status, n) in &snap.jobs_by_status {
        jobs.get_or_create(&labels(&[("status", status)]))
            .set(i64::try_from(*n).unwrap_or(i64::MAX));
    }
    registry.register(
        "jobs",
        "Jobs submitted to this agent by status: its queue, and its latest history",
        jobs,
    );

    let ads = Family::<Labels, Gauge>::default();
    for (kind, n) in &snap.agent.ads {
        ads.get_or_create(&labels(&[("type", kind)]))
            .set(i64::try_from(*n).unwrap_or(i64::MAX));
    }
    registry.register(
        "view_ads",
        "Verified ads held in this agent's view, by MyType",
        ads,
    );

    let peers = Gauge::<i64>::default();
    peers.set(i64::try_from(snap.agent.peers).unwrap_or(i64::MAX));
    registry.register("peers", "Peers this agent is connected to", peers);

    let rejected = Gauge::<i64>::default();
    rejected.set(i64::try_from(snap.agent.rejected).unwrap_or(i64::MAX));
    registry.register(
        "gossip_rejected_messages",
        "Gossip messages (ads, policies) refused from the peers connected now: bad signature, stale or undecodable",
        rejected,
    );

    let traffic = Family::<Labels, Counter>::default();
    traffic
        .get_or_create(&labels(&[("direction", "received")]))
        .inc_by(snap.agent.bytes_received);
    traffic
        .get_or_create(&labels(&[("direction", "sent")]))
        .inc_by(snap.agent.bytes_sent);
    registry.register(
        "network_bytes",
        "Bytes on all of this agent's peer connections (gossip, claims, transfers)",
        traffic,
    );

    let capacity = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    let reserved = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    let reservations = Family::<Labels, Gauge>::default();
    for link in &snap.links {
        let l = labels(&[("link", &link.link)]);
        capacity.get_or_create(&l).set(link.capacity_mbps * 1e6);
        reserved.get_or_create(&l).set(link.reserved_now_mbps * 1e6);
        reservations
            .get_or_create(&l)
            .set(i64::try_from(link.reservations.len()).unwrap_or(i64::MAX));
    }
    registry.register(
        "link_capacity_bits_per_second",
        "Capacity of each link this agent owns",
        capacity,
    );
    registry.register(
        "link_reserved_bits_per_second",
        "Bandwidth reserved now by transfers on each link this agent owns",
        reserved,
    );
    registry.register(
        "link_reservations",
        "Transfer reservations held on each link this agent owns",
        reservations,
    );

    let effective = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    let in_use = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    for u in &snap.users {
        let l = labels(&[("user", &u.user)]);
        effective.get_or_create(&l).set(u.effective);
        in_use.get_or_create(&l).set(u.in_use);
    }
    registry.register(
        "user_priority",
        "Each user's effective priority in this domain, as starling userprio shows it (smaller is better)",
        effective,
    );
    registry.register(
        "user_resources_in_use",
        "Slot weight (cpus) each user's jobs hold now across the domain",
        in_use,
    );

    let errors = Gauge::<i64>::default();
    errors.set(i64::try_from(snap.errors.len()).unwrap_or(i64::MAX));
    registry.register(
        "scrape_errors",
        "Control requests that failed while gathering this scrape",
        errors,
    );

    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut out, &registry);
    out
}

/// What every request handler shares.
#[derive(Clone)]
struct Shared {
    handler: Arc<dyn Handler>,
    metrics: Metrics,
    caller: Caller,
    gathers: Arc<Semaphore>,
}

impl Shared {
    async fn snapshot(&self) -> Result<Snapshot, HttpResponse> {
        let gather = async {
            let _permit = self.gathers.acquire().await;
            gather(&*self.handler, &self.caller).await
        };
        tokio::time::timeout(REQUEST_TIMEOUT, gather)
            .await
            .map_err(|_| {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the agent did not answer in time\n",
                )
                    .into_response()
            })
    }
}

/// The page, with its script; it reads `/api/pool`.
const PAGE: &str = include_str!("page.html");

async fn page() -> HttpResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
            ),
        ],
        PAGE,
    )
        .into_response()
}

async fn scrape(State(shared): State<Shared>) -> HttpResponse {
    match shared.snapshot().await {
        Ok(snap) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            render_metrics(&snap, &shared.metrics),
        )
            .into_response(),
        Err(r) => r,
    }
}

async fn pool(State(shared): State<Shared>) -> HttpResponse {
    match shared.snapshot().await {
        Ok(snap) => match serde_json::to_string(&snap) {
            Ok(json) => (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::CACHE_CONTROL, "no-store"),
                ],
                json,
            )
                .into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
        },
        Err(r) => r,
    }
}

async fn not_found() -> HttpResponse {
    (
        StatusCode::NOT_FOUND,
        "not found: this agent serves /, /api/pool and /metrics\n",
    )
        .into_response()
}

/// Whether `host` (a `Host` header) names a loopback address: an IP
/// literal that is loopback, or `localhost`, with any port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Refuses requests over the size limits before any handler runs, and, on
/// a loopback address, requests for another host name: a web site whose
/// name a browser was made to resolve to 127.0.0.1 (DNS rebinding) reads
/// nothing.
async fn bounds(State(loopback): State<bool>, request: HttpRequest, next: Next) -> HttpResponse {
    if loopback {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        if !is_loopback_host(host) {
            return (
                StatusCode::FORBIDDEN,
                "this agent serves loopback only: ask for http://127.0.0.1:PORT/\n",
            )
                .into_response();
        }
    }
    let uri_len = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if uri_len > MAX_URI_LEN {
        return (StatusCode::URI_TOO_LONG, "request target too long\n").into_response();
    }
    let headers = request.headers();
    let body_len = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if headers.contains_key(header::TRANSFER_ENCODING) || body_len.is_some_and(|n| n > MAX_BODY_LEN)
    {
        return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n").into_response();
    }
    next.run(request).await
}

/// The routes, for [`serve`] and tests; `loopback`: served on a loopback
/// address only, so other `Host` names are refused.
pub fn router(
    handler: Arc<dyn Handler>,
    caller: Caller,
    metrics: Metrics,
    loopback: bool,
) -> Router {
    let shared = Shared {
        handler,
        metrics,
        caller,
        gathers: Arc::new(Semaphore::new(MAX_GATHERS)),
    };
    Router::new()
        .route("/", get(page))
        .route("/api/pool", get(pool))
        .route("/metrics", get(scrape))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(loopback, bounds))
        .with_state(shared)
}

/// The caller the page asks as: the agent's own user, who may read
/// everything (and the page only reads).
pub fn own_caller() -> Caller {
    Caller {
        uid: rustix::process::geteuid().as_raw(),
        gid: rustix::process::getegid().as_raw(),
        pid: None,
        name: None,
    }
}

/// Binds `addr` (so that a port in use is reported at start).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, Error> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Bind { addr, source })
}

/// Serves `listener` until dropped (cancel-safe: dropping the future closes
/// the listener and every connection).
pub async fn serve(listener: TcpListener, handler: Arc<dyn Handler>, metrics: Metrics) {
    let loopback = listener.local_addr().is_ok_and(|a| a.ip().is_loopback());
    let listener = Bounded {
        listener,
        permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
    };
    let app = router(handler, own_caller(), metrics, loopback);
    if let Err(e) = axum::serve(listener, app).await {
        tracing::warn!(error = %e, "the web server stopped");
    }
}

/// A listener that holds one of [`MAX_CONNECTIONS`] permits per connection.
struct Bounded {
    listener: TcpListener,
    permits: Arc<Semaphore>,
}

impl axum::serve::Listener for Bounded {
    type Io = Conn;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Conn, SocketAddr) {
        let permit = match self.permits.clone().acquire_owned().await {
            Ok(p) => p,
            // The semaphore is never closed.
            Err(_) => std::future::pending().await,
        };
        loop {
            match self.listener.accept().await {
                Ok((stream, addr)) => {
                    let conn = Conn {
                        stream,
                        _permit: permit,
                        deadline: Box::pin(tokio::time::sleep(CONNECTION_LIFETIME)),
                    };
                    return (conn, addr);
                }
                Err(e) => {
                    // Out of descriptors and the like: wait, do not spin.
                    tracing::debug!(error = %e, "web: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// One connection: fails its reads and writes once its lifetime is over,
/// which makes hyper close it.
struct Conn {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl Conn {
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        self.deadline.as_mut().poll(cx).is_ready()
    }
}

fn timed_out() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "connection lifetime over")
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.expired(cx) {
            return Poll::Ready(Err(timed_out()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.expired(cx) {
            return Poll::Ready(Err(timed_out()));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// Answers as an agent with two machines, one of them claimed, and
    /// three jobs (one completed, in the history).
    struct Fake;

    #[async_trait::async_trait]
    impl Handler for Fake {
        async fn handle(&self, _caller: &Caller, request: Request) -> Response {
            match request {
                Request::Info => Response::Info(control::Info {
                    agent_id: "12D3KooWfake".into(),
                    domain: "d0".into(),
                    version: "0.1.0".into(),
                    pid: 1,
                    data_dir: "/tmp".into(),
                    listen: vec![],
                    peers: 3,
                    ads: [("Machine".to_owned(), 2)].into(),
                    started_ms: 1_700_000_000_000,
                    bytes_received: 1234,
                    bytes_sent: 567,
                    reachability: String::new(),
                }),
                Request::Peers => Response::Peers { peers: vec![] },
                Request::Ads { .. } => Response::Ads {
                    ads: vec![
                        r#"[ Name = "slot1@m1"; StarlingDomain = "d0"; State = "Claimed"; Activity = "Busy"; Cpus = 1; Memory = 512 ]"#.into(),
                        r#"[ Name = "slot1@m2"; StarlingDomain = "d0"; State = "Unclaimed"; Activity = "Idle"; Cpus = 2; Memory = 1024 ]"#.into(),
                    ],
                },
                Request::Jobs { history: false, .. } => Response::Jobs {
                    jobs: vec![
                        r#"[ ClusterId = 1; ProcId = 0; Owner = "alice"; JobStatus = 2; RemoteHost = "slot1@m1"; Environment = "SECRET=x" ]"#.into(),
                        r#"[ ClusterId = 1; ProcId = 1; Owner = "alice"; JobStatus = 1 ]"#.into(),
                    ],
                },
                Request::Jobs { history: true, .. } => Response::Jobs {
                    jobs: vec![r#"[ ClusterId = 0; ProcId = 0; Owner = "bob"; JobStatus = 4 ]"#.into()],
                },
                Request::UserPrio { .. } => Response::UserPrio {
                    users: vec![control::UserPrio {
                        user: "alice@d0".into(),
                        effective: 0.5,
                        real: 0.5,
                        factor: 1.0,
                        in_use: 1.0,
                        accumulated: 60.0,
                        first_usage: 0,
                        last_usage: 0,
                    }],
                    halflife_secs: 86400.0,
                },
                Request::Links => Response::Links {
                    links: vec![],
                    transfers: vec![],
                },
                _ => Response::Error {
                    message: "not in this test".into(),
                },
            }
        }
    }

    fn caller() -> Caller {
        Caller {
            uid: 0,
            gid: 0,
            pid: None,
            name: None,
        }
    }

    #[tokio::test]
    async fn metrics_count_slots_jobs_and_users() {
        let snap = gather(&Fake, &caller()).await;
        assert!(snap.errors.is_empty(), "{:?}", snap.errors);
        let text = render_metrics(&snap, &Metrics::default());
        for line in [
            r#"starling_slots{domain="d0",state="Claimed",activity="Busy"} 1"#,
            r#"starling_slots{domain="d0",state="Unclaimed",activity="Idle"} 1"#,
            r#"starling_jobs{status="running"} 1"#,
            r#"starling_jobs{status="idle"} 1"#,
            r#"starling_jobs{status="completed"} 1"#,
            r#"starling_jobs{status="held"} 0"#,
            r#"starling_view_ads{type="Machine"} 2"#,
            "starling_peers 3",
            r#"starling_network_bytes_total{direction="received"} 1234"#,
            r#"starling_user_priority{user="alice@d0"} 0.5"#,
            "# TYPE starling_jobs gauge",
            "# TYPE starling_network_bytes counter",
            "# EOF",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line:?} in:\n{text}"
            );
        }
    }

    #[tokio::test]
    async fn the_page_data_holds_no_job_environment() {
        let snap = gather(&Fake, &caller()).await;
        let json = serde_json::to_string(&snap).unwrap();
        assert!(json.contains("slot1@m1"), "{json}");
        assert!(!json.contains("SECRET"), "{json}");
        assert_eq!(snap.jobs.len(), 3);
        assert_eq!(snap.jobs[0].remote_host.as_deref(), Some("slot1@m1"));
    }

    /// Serves the fake agent on a loopback port.
    async fn server() -> (SocketAddr, tokio::task::JoinHandle<()>) {
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let metrics = Metrics::default();
        metrics.claim_answered(crate::metrics::Outcome::granted, Duration::from_millis(3));
        (addr, tokio::spawn(serve(listener, Arc::new(Fake), metrics)))
    }

    /// Sends `request` raw and reads the whole answer (the server closes).
    async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(request).await.unwrap();
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer));
        read.await.expect("an answer in time").unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    fn status_line(answer: &str) -> &str {
        answer.lines().next().unwrap_or_default()
    }

    #[tokio::test]
    async fn known_paths_answer_and_unknown_ones_are_404() {
        let (addr, task) = server().await;
        let get = |path: &str| {
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        };
        let answer = exchange(addr, get("/metrics").as_bytes()).await;
        assert_eq!(status_line(&answer), "HTTP/1.1 200 OK", "{answer}");
        assert!(
            answer.contains(r#"starling_jobs{status="running"} 1"#)
                && answer.contains(r#"starling_claims_total{outcome="granted"} 1"#),
            "{answer}"
        );
        let answer = exchange(addr, get("/").as_bytes()).await;
        assert_eq!(status_line(&answer), "HTTP/1.1 200 OK");
        assert!(answer.contains("/api/pool"), "{answer}");
        let answer = exchange(addr, get("/api/pool").as_bytes()).await;
        assert!(answer.contains(r#""state":"Claimed""#), "{answer}");
        let answer = exchange(addr, get("/secrets").as_bytes()).await;
        assert_eq!(status_line(&answer), "HTTP/1.1 404 Not Found", "{answer}");
        let answer = exchange(
            addr,
            b"POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(
            status_line(&answer),
            "HTTP/1.1 405 Method Not Allowed",
            "{answer}"
        );
        task.abort();
    }

    #[tokio::test]
    async fn oversized_requests_are_refused() {
        let (addr, task) = server().await;
        let big_body = format!(
            "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            MAX_BODY_LEN + 1
        );
        let answer = exchange(addr, big_body.as_bytes()).await;
        assert_eq!(
            status_line(&answer),
            "HTTP/1.1 413 Payload Too Large",
            "{answer}"
        );
        let chunked = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n";
        let answer = exchange(addr, chunked.as_bytes()).await;
        assert_eq!(
            status_line(&answer),
            "HTTP/1.1 413 Payload Too Large",
            "{answer}"
        );
        let long = format!(
            "GET /{} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            "a".repeat(MAX_URI_LEN)
        );
        let answer = exchange(addr, long.as_bytes()).await;
        assert_eq!(
            status_line(&answer),
            "HTTP/1.1 414 URI Too Long",
            "{answer}"
        );
        // A header block far over hyper's limit is refused, not buffered.
        let huge = format!(
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n",
            "a".repeat(1 << 20)
        );
        let mut s = TcpStream::connect(addr).await.unwrap();
        let _ = s.write_all(huge.as_bytes()).await;
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer))
            .await
            .expect("the server closes the connection");
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.is_empty() || status_line(&answer).starts_with("HTTP/1.1 431"),
            "{answer}"
        );
        task.abort();
    }

    #[test]
    fn loopback_hosts() {
        for host in [
            "127.0.0.1:9618",
            "localhost:9618",
            "LOCALHOST",
            "[::1]:9618",
            "127.0.0.2",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example:9618",
            "10.0.0.1:9618",
            "[2001:db8::1]:80",
            "",
            "localhost.evil.example",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[tokio::test]
    async fn other_host_names_are_refused_on_loopback() {
        let (addr, task) = server().await;
        let answer = exchange(
            addr,
            b"GET /api/pool HTTP/1.1\r\nHost: rebound.example:9618\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status_line(&answer), "HTTP/1.1 403 Forbidden", "{answer}");
        task.abort();
    }

    #[tokio::test]
    async fn connections_past_the_limit_wait_their_turn() {
        let (addr, task) = server().await;
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            idle.push(TcpStream::connect(addr).await.unwrap());
        }
        // Accepted by the kernel, not served: no answer while all are held.
        let mut late = TcpStream::connect(addr).await.unwrap();
        late.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let waited =
            tokio::time::timeout(Duration::from_millis(300), late.read_to_end(&mut answer)).await;
        assert!(waited.is_err(), "answered past the limit: {answer:?}");
        // One leaves; the late one is served.
        drop(idle.pop());
        tokio::time::timeout(Duration::from_secs(10), late.read_to_end(&mut answer))
            .await
            .expect("served once a connection closed")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status_line(&answer), "HTTP/1.1 200 OK", "{answer}");
        task.abort();
    }

    #[tokio::test]
    async fn connections_end_after_their_lifetime() {
        tokio::time::pause();
        let (addr, task) = server().await;
        let mut idle = TcpStream::connect(addr).await.unwrap();
        let mut buf = [0u8; 16];
        // Paused time runs ahead while everything waits.
        let n = tokio::time::timeout(CONNECTION_LIFETIME * 2, idle.read(&mut buf)).await;
        assert!(matches!(n, Ok(Ok(0)) | Ok(Err(_))), "{n:?}");
        task.abort();
    }
}
