//! The submit agent's job queue: HTCondor's schedd queue, kept in the
//! agent's store and cached in memory.
//!
//! Every change is written to the store (flushed) before it is applied to
//! the cache and announced, so a change a caller saw acknowledged survives
//! `kill -9`. One change at a time: each write holds the queue's write
//! lock from reading the job it decides on, through the store, to the
//! cache, so the cache always says what the store says and nothing
//! decides on a job that another write is changing (a claim recorded for a
//! job the user has just held or removed is refused, not written over the
//! hold).
//!
//! `rm`, `hold`, `release` and `qedit` of many jobs ([`Queue::act_as`],
//! [`Queue::edit_as`]) are one transaction, as HTCondor's job-queue log
//! makes them: every selected job changes or none does, in one store
//! write ([`starling_storage::Batch`], one flush for 100,000 jobs), and
//! only once it is on disk are the cache changed, the negotiator told
//! (which stops the runs of held and removed jobs) and the user logs
//! written (one append and one sync per log). A failure changes nothing
//! and tells no one, so no job is ever left shown as running that is not.
//! Jobs keep HTCondor's status codes and attribute names:
//!
//! ```text
//! submit ─▶ 1 Idle ─started─▶ 2 Running ─completed─▶ 4 Completed (history)
//!             ▲   ◀─evicted──────┘  │ ─held──▶ 5 Held ─release─▶ 1 Idle
//!             └──────────── rm: 3 Removed (history; a running job once
//!                                          its run is stopped)
//! ```
//!
//! [`Event`]s tell the negotiator what changed; the runner calls
//! ([`Queue::started`], [`Queue::completed`]...) are how it reports back.

pub mod userlog;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use starling_policies::control_access::JobAccess;
use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{
    parse_expr, unparse, ClassAd, Evaluator, Expr, Name, Side, Value,
};
use starling_protocol::identity::Timestamp;
use starling_storage::{Batch, Change, Error as StoreError, JobId, Store, MAX_BATCH};
use tokio::sync::broadcast;

/// HTCondor's job status codes.
pub mod status {
    pub const IDLE: i64 = 1;
    pub const RUNNING: i64 = 2;
    pub const REMOVED: i64 = 3;
    pub const COMPLETED: i64 = 4;
    pub const HELD: i64 = 5;
    pub const TRANSFERRING_OUTPUT: i64 = 6;
    pub const SUSPENDED: i64 = 7;

    /// The letter `condor_q` shows.
    pub fn letter(code: i64) -> char {
        match code {
            IDLE => 'I',
            RUNNING => 'R',
            REMOVED => 'X',
            COMPLETED => 'C',
            HELD => 'H',
            TRANSFERRING_OUTPUT => '>',
            SUSPENDED => 'S',
            _ => '?',
        }
    }
}

/// HTCondor's hold reason codes the queue itself uses.
pub mod hold_codes {
    pub const USER_REQUEST: u32 = 1;
    pub const TRANSFER_OUTPUT_ERROR: u32 = 12;
    pub const SUBMITTED_ON_HOLD: u32 = 15;
}

/// Attributes `qedit` may not change: they belong to the queue.
pub const PROTECTED: [&str; 9] = [
    "ClusterId",
    "ProcId",
    "JobStatus",
    "Owner",
    "User",
    "QDate",
    "EnteredCurrentStatus",
    "RemoteHost",
    "ClaimId",
];

/// Most targets (ids, clusters, owners) one request may name.
pub const MAX_TARGETS: usize = 10_000;

/// Longest reason a user may give.
pub const MAX_REASON_LEN: usize = 4096;

/// Capacity of the event channel.
pub const EVENT_CAPACITY: usize = 4096;

/// What changed in the queue.
#[derive(Debug, Clone)]
pub enum Event {
    Submitted {
        cluster: u64,
        procs: usize,
    },
    /// Jobs were held; `running` were placed and must be stopped.
    Held {
        ids: Vec<JobId>,
    },
    /// Jobs were removed; the runner stops those it runs and calls
    /// [`Queue::finish_removed`].
    Removed {
        ids: Vec<JobId>,
    },
    Released {
        ids: Vec<JobId>,
    },
    Edited {
        ids: Vec<JobId>,
    },
}

/// What the queue refused or failed at.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("{0}")]
    Invalid(String),
    #[error("job {0} is not in the queue")]
    NoSuchJob(JobId),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the store task failed: {0}")]
    Task(String),
}

/// A job, a cluster or an owner, as the job commands name them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Job(JobId),
    Cluster(u64),
    Owner(String),
}

impl Target {
    /// `12.3`, `12` or `alice`.
    pub fn parse(word: &str) -> Result<Target, QueueError> {
        let bad = || QueueError::Invalid(format!("{word:?} is not a job id, cluster id or owner"));
        if word.is_empty() || word.len() > 256 {
            return Err(bad());
        }
        if word.starts_with(|c: char| c.is_ascii_digit()) {
            return match word.split_once('.') {
                Some((c, p)) => Ok(Target::Job(JobId::new(
                    c.parse().map_err(|_| bad())?,
                    p.parse().map_err(|_| bad())?,
                ))),
                None => Ok(Target::Cluster(word.parse().map_err(|_| bad())?)),
            };
        }
        if word.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && word
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'))
        {
            Ok(Target::Owner(word.to_owned()))
        } else {
            Err(bad())
        }
    }

    fn selects(&self, id: JobId, ad: &ClassAd) -> bool {
        match self {
            Target::Job(j) => *j == id,
            Target::Cluster(c) => id.cluster == *c,
            Target::Owner(o) => text(ad, "Owner").as_deref() == Some(o),
        }
    }
}

/// Which jobs a request is about: the targets (any of them; none means
/// all) and a constraint (all must satisfy it).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub targets: Vec<Target>,
    pub constraint: Option<Expr>,
}

impl Selection {
    /// From the words and constraint a user typed.
    pub fn parse(words: &[String], constraint: Option<&str>) -> Result<Selection, QueueError> {
        if words.len() > MAX_TARGETS {
            return Err(QueueError::Invalid(format!(
                "at most {MAX_TARGETS} job ids, clusters or owners at once"
            )));
        }
        let targets = words
            .iter()
            .map(|w| Target::parse(w))
            .collect::<Result<_, _>>()?;
        let constraint = constraint
            .map(|c| {
                parse_expr(c).map_err(|e| QueueError::Invalid(format!("the constraint {c:?}: {e}")))
            })
            .transpose()?;
        Ok(Selection {
            targets,
            constraint,
        })
    }

    /// Whether a target names the job (its id, its cluster or its owner),
    /// rather than only the constraint selecting it.
    pub fn names(&self, id: JobId, ad: &ClassAd) -> bool {
        self.targets.iter().any(|t| t.selects(id, ad))
    }

    pub fn matches(&self, id: JobId, ad: &ClassAd) -> bool {
        (self.targets.is_empty() || self.targets.iter().any(|t| t.selects(id, ad)))
            && self.constraint.as_ref().is_none_or(|c| {
                requirement_holds(&Evaluator::with_ads(Some(ad), None).eval_on(Side::My, c))
            })
    }
}

/// What a user asked to do to jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Hold { reason: String },
    Release,
    Remove { reason: String },
}

/// Which jobs an action changed, and which it skipped and why.
#[derive(Debug, Clone, Default)]
pub struct Acted {
    pub changed: Vec<JobId>,
    pub skipped: Vec<(JobId, String)>,
}

/// How a job ended, as its execute agent reported.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub user_cpu_ms: u64,
    pub sys_cpu_ms: u64,
    pub wall_ms: u64,
    pub peak_memory_kib: u64,
    /// The sandbox's largest size (`DiskUsage`), when reported.
    pub disk_usage_kib: Option<u64>,
}

type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

struct Inner {
    store: Arc<dyn Store>,
    cache: Mutex<BTreeMap<JobId, ClassAd>>,
    events: broadcast::Sender<Event>,
    submits: tokio::sync::Mutex<()>,
    /// Held by every change to queued jobs from reading what it decides on
    /// until the cache shows it ([`Writing`]): changes never interleave, so
    /// the cache agrees with the store and an action on a cluster sees no
    /// job change under it. Submits only add jobs and do not take it.
    writes: Arc<tokio::sync::Mutex<()>>,
    clock: Clock,
    /// This agent's address as HTCondor writes a daemon's, for the user
    /// log's submit events ([`Queue::set_host`]).
    host: Mutex<String>,
}

/// The queue; clones share it.
#[derive(Clone)]
pub struct Queue {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").finish_non_exhaustive()
    }
}

/// The job's `JobStatus`.
pub fn status_of(ad: &ClassAd) -> Option<i64> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known("JobStatus").folded())
    {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

fn text(ad: &ClassAd, name: &str) -> Option<String> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn int(ad: &ClassAd, name: &str) -> Option<i64> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::Int(i) => Some(i),
        Value::Real(r) if r.is_finite() => Some(r as i64),
        _ => None,
    }
}

fn real(ad: &ClassAd, name: &str) -> Option<f64> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::Int(i) => Some(i as f64),
        Value::Real(r) if r.is_finite() => Some(r),
        _ => None,
    }
}

/// Whether a job may be changed; a refusal is recorded in `acted`.
fn permitted(acted: &mut Acted, id: JobId, access: JobAccess) -> bool {
    match access {
        JobAccess::Allowed => true,
        JobAccess::Refused(why) => {
            acted.skipped.push((id, why.to_string()));
            false
        }
        JobAccess::Ignored => false,
    }
}

/// The queue's write lock, held ([`Inner::writes`]); owned, so that it
/// can go with a write into the blocking task that makes it.
type Writing = tokio::sync::OwnedMutexGuard<()>;

/// Frees what an action on many jobs leaves behind (the ads of 100,000
/// jobs that left take 0.37 s to free on the development VM) on a blocking
/// thread of its own, so the caller has its answer first. Called from a
/// blocking task, inside the runtime.
fn free_later<T: Send + 'static>(garbage: T) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(move || drop(garbage))),
        Err(_) => drop(garbage),
    }
}

/// Reports user logs that could not be written: the job goes on.
fn log_failures(failed: Vec<userlog::Unwritten>) {
    for log in failed {
        tracing::warn!(
            path = %log.path,
            events = log.events,
            error = %log.error,
            "cannot write a user log"
        );
    }
}

/// One job's part of an action, worked out before anything is written.
struct Planned {
    id: JobId,
    /// Shared by the jobs that get the same ones (a cluster held with one
    /// reason).
    changes: Arc<[Change]>,
    /// It moves to the history.
    leaves: bool,
    log: Option<LogOf>,
}

/// Where a job's user log events go and with whose rights.
struct LogOf {
    owner: String,
    path: String,
}

impl LogOf {
    /// The job's user log (`UserLog`), if it has one.
    fn job(ad: &ClassAd) -> Option<LogOf> {
        Some(LogOf {
            path: text(ad, "UserLog")?,
            owner: text(ad, "Owner").unwrap_or_default(),
        })
    }
}

/// The changes a job leaving the queue gets beside its final status: where
/// it ran is history now (HTCondor's history says `LastRemoteHost`, and
/// `RemoteHost` only of jobs that run).
fn leaving(ad: &ClassAd) -> Vec<Change> {
    match ad.get("RemoteHost") {
        Some(host) => vec![
            Change::set("LastRemoteHost", unparse(host)),
            Change::remove("RemoteHost"),
        ],
        None => Vec::new(),
    }
}

/// An attribute and its new expression (`None`: it is removed).
type ParsedChange = (Name, Option<Arc<Expr>>);

/// Applies changes the store has made to cached ads, as the store applies
/// them (a set replaces an attribute in its place, ignoring case, and takes
/// the new spelling; a remove of an absent one does nothing), so the cache
/// need not read 100,000 ads back. A list of changes shared by many jobs is
/// parsed once and its expressions shared between their ads.
#[derive(Default)]
struct Parsed {
    /// The last list seen...
    list: Option<Arc<[Change]>>,
    /// ...and its parse (`None`: it did not parse).
    parsed: Option<Vec<ParsedChange>>,
}

impl Parsed {
    /// `false` if a change did not parse here, which the store's checks
    /// rule out: then the ad is left for the caller to read back.
    fn apply(&mut self, ad: &mut ClassAd, changes: &Arc<[Change]>) -> bool {
        if !self.list.as_ref().is_some_and(|l| Arc::ptr_eq(l, changes)) {
            self.list = Some(changes.clone());
            self.parsed = changes
                .iter()
                .map(|change| match change {
                    Change::Set { name, expr } => Some((
                        Name::new(name).ok()?,
                        Some(Arc::new(parse_expr(expr).ok()?)),
                    )),
                    Change::Remove { name } => Some((Name::new(name).ok()?, None)),
                })
                .collect();
        }
        let Some(parsed) = &self.parsed else {
            return false;
        };
        for (name, expr) in parsed {
            match expr {
                Some(expr) => ad.insert_shared(*name, expr.clone()),
                None => {
                    ad.remove(*name);
                }
            }
        }
        true
    }
}

/// The job's resources as the user log's table shows them: what it
/// asked for (and was carved: a claim carves the request) and, where
/// measured, used. Only requests that are plain numbers are shown.
fn resources_of(
    ad: &ClassAd,
    memory_mib: Option<i64>,
    disk_kib: Option<i64>,
) -> Vec<userlog::Resource> {
    [
        ("Cpus", "RequestCpus", None),
        ("Disk", "RequestDisk", disk_kib),
        ("Memory", "RequestMemory", memory_mib),
        ("Gpus", "RequestGPUs", None),
    ]
    .into_iter()
    .filter_map(|(name, request, usage)| {
        let request = int(ad, request)?;
        (name != "Gpus" || request > 0).then_some(userlog::Resource {
            name,
            usage,
            request,
            allocated: request,
        })
    })
    .collect()
}

/// The job ad's record of how its program ended.
fn exit_changes(how: &Completion) -> Vec<Change> {
    match (how.exit_code, how.signal) {
        (Some(code), _) => vec![
            Change::set("ExitCode", code.to_string()),
            Change::set("ExitBySignal", "false"),
        ],
        (None, Some(signal)) => vec![
            Change::set("ExitSignal", signal.to_string()),
            Change::set("ExitBySignal", "true"),
        ],
        (None, None) => Vec::new(),
    }
}

/// A string literal's ClassAd text.
pub fn quote(s: &str) -> String {
    unparse(&Expr::Literal(Value::String(s.into())))
}

/// The execute agent (its libp2p peer id) of a running job's claim.
pub const EXECUTE_AGENT: &str = "StarlingExecuteAgent";

/// The domain that admitted that agent.
pub const EXECUTE_DOMAIN: &str = "StarlingExecuteDomain";

/// The latest checkpoint's number, size, replicas (how many, and on which
/// hosts) and whether no store peer keeps it.
pub const CKPT_SEQUENCE: &str = "StarlingCkptSequence";
pub const CKPT_BYTES: &str = "StarlingCkptBytes";
pub const CKPT_REPLICAS: &str = "StarlingCkptReplicas";
pub const CKPT_HOSTS: &str = "StarlingCkptHosts";
pub const CKPT_LOCAL_ONLY: &str = "StarlingCkptLocalOnly";
/// Why the latest checkpoint was given up, when it was.
pub const CKPT_LOST: &str = "StarlingCkptLost";

/// Moves of a running job to another machine (`starling migrate`, or
/// proposed by its machine): how many, the seconds they took all
/// together (from the vacate asked to the start elsewhere), the unix times
/// of those of the last hour, and the last one's destination and reason.
pub const NUM_MIGRATIONS: &str = "StarlingNumMigrations";
pub const MIGRATION_TIME: &str = "StarlingMigrationTime";
pub const RECENT_MIGRATIONS: &str = "StarlingRecentMigrations";

/// The unix times of the job's moves in its record
/// ([`RECENT_MIGRATIONS`]).
pub fn recent_moves(job: &ClassAd) -> Vec<i64> {
    let value = match Name::new(RECENT_MIGRATIONS) {
        Ok(name) => Evaluator::with_ads(Some(job), None).eval_attr(Side::My, name.folded()),
        Err(_) => Value::Undefined,
    };
    match value {
        Value::List(items) => items
            .iter()
            .filter_map(|v| match v {
                Value::Int(i) => Some(*i),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}
pub const LAST_MIGRATION: &str = "StarlingLastMigration";

/// The process of a job the submit agent runs itself (scheduler and
/// local universes), and its start time in clock ticks since boot
/// (`/proc/PID/stat`), while it runs.
pub const LOCAL_PID: &str = "StarlingLocalPid";
pub const LOCAL_PID_START: &str = "StarlingLocalPidStart";

/// Seconds of work lost to runs that ended early, since their last
/// checkpoint (badput).
pub const BADPUT: &str = "StarlingBadputTime";

/// A checkpoint the execute agent took, as the queue records it.
#[derive(Debug, Clone)]
pub struct Checkpointed {
    pub sequence: u64,
    pub taken_secs: i64,
    /// Wall time of work it saves beyond the previous one.
    pub run_ms: u64,
    pub bytes: u64,
    /// The hosts of the store peers keeping it.
    pub replicas: Vec<String>,
}

fn replica_changes(sequence: u64, hosts: &[String]) -> Vec<Change> {
    vec![
        Change::set(CKPT_SEQUENCE, sequence.to_string()),
        Change::set(CKPT_REPLICAS, hosts.len().to_string()),
        Change::set(CKPT_HOSTS, quote(&hosts.join(","))),
        Change::set(CKPT_LOCAL_ONLY, hosts.is_empty().to_string()),
    ]
}

fn unix_now() -> i64 {
    i64::try_from(Timestamp::now().as_unix_millis() / 1000).unwrap_or(i64::MAX)
}

impl Queue {
    /// Opens the queue on `store`, loading it into memory.
    pub async fn open(store: Arc<dyn Store>) -> Result<Queue, QueueError> {
        Queue::with_clock(store, Arc::new(unix_now)).await
    }

    /// [`Queue::open`] with a clock (unix seconds), for tests.
    pub async fn with_clock(store: Arc<dyn Store>, clock: Clock) -> Result<Queue, QueueError> {
        let loaded = {
            let store = store.clone();
            blocking(move || store.jobs()).await??
        };
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        Ok(Queue {
            inner: Arc::new(Inner {
                store,
                cache: Mutex::new(loaded.into_iter().collect()),
                events,
                submits: tokio::sync::Mutex::new(()),
                writes: Arc::new(tokio::sync::Mutex::new(())),
                clock,
                host: Mutex::new(format!("<{}>", starling_process::hostname())),
            }),
        })
    }

    /// Says where this agent listens, once the network knows: `ip:port`
    /// of its first address and its host name, written into submit events
    /// as HTCondor writes a schedd's address
    /// (`<ip:port?addrs=ip-port&alias=host>`).
    pub fn set_host(&self, ip_port: Option<(std::net::IpAddr, u16)>, alias: &str) {
        let sinful = match ip_port {
            Some((ip, port)) => {
                let addr = std::net::SocketAddr::new(ip, port);
                let dashed = match ip {
                    std::net::IpAddr::V4(_) => format!("{ip}-{port}"),
                    std::net::IpAddr::V6(_) => format!("[{ip}]-{port}"),
                };
                format!("<{addr}?addrs={dashed}&alias={alias}>")
            }
            None => format!("<{alias}>"),
        };
        *self.inner.host.lock().unwrap_or_else(|p| p.into_inner()) = sinful;
    }

    fn host(&self) -> String {
        self.inner
            .host
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    fn now(&self) -> i64 {
        (self.inner.clock)()
    }

    fn announce(&self, event: Event) {
        let _ = self.inner.events.send(event);
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, BTreeMap<JobId, ClassAd>> {
        self.inner.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues one cluster made by `make` from its cluster id (a submit file
    /// may use `$(Cluster)`). Nothing is queued if `make` fails.
    pub async fn submit_with(
        &self,
        make: impl FnOnce(u64) -> Result<Vec<ClassAd>, String> + Send + 'static,
    ) -> Result<(u64, usize), QueueError> {
        let _one_at_a_time = self.inner.submits.lock().await;
        let store = self.inner.store.clone();
        let now = self.now();
        let (cluster, ads) = blocking(
            move || -> Result<(u64, Vec<(JobId, ClassAd)>), QueueError> {
                let cluster = store.next_cluster()?;
                let mut ads = make(cluster).map_err(QueueError::Invalid)?;
                if ads.is_empty() {
                    return Err(QueueError::Invalid("the submit queues no jobs".to_owned()));
                }
                for ad in &mut ads {
                    if ad.get("JobStatus").is_none() {
                        ad.insert(
                            Name::known("JobStatus"),
                            Expr::Literal(Value::Int(status::IDLE)),
                        );
                    }
                    for (name, value) in [("QDate", now), ("EnteredCurrentStatus", now)] {
                        if ad.get(name).is_none() {
                            ad.insert(Name::known(name), Expr::Literal(Value::Int(value)));
                        }
                    }
                }
                let got = store.submit(&ads)?;
                if got != cluster {
                    return Err(QueueError::Invalid(format!(
                        "the store gave cluster {got}, not {cluster}"
                    )));
                }
                let stored = (0..ads.len() as u32)
                    .map(|p| {
                        let id = JobId::new(cluster, p);
                        store
                            .job(id)?
                            .map(|ad| (id, ad))
                            .ok_or(QueueError::NoSuchJob(id))
                    })
                    .collect::<Result<Vec<_>, QueueError>>()?;
                Ok((cluster, stored))
            },
        )
        .await??;
        let procs = ads.len();
        let host = self.host();
        let entries = userlog::Entries::new(self.now(), &userlog::Event::Submitted { host: &host });
        let mut appends = userlog::Appends::default();
        for (id, ad) in &ads {
            if let Some(log) = LogOf::job(ad) {
                appends.add(&log.owner, &log.path, &entries.of(*id));
            }
        }
        self.write_logs(appends).await;
        self.cache().extend(ads);
        self.announce(Event::Submitted { cluster, procs });
        Ok((cluster, procs))
    }

    pub fn job(&self, id: JobId) -> Option<ClassAd> {
        self.cache().get(&id).cloned()
    }

    /// The queued jobs `selection` selects, by id.
    pub fn jobs(&self, selection: &Selection) -> Vec<(JobId, ClassAd)> {
        self.cache()
            .iter()
            .filter(|(id, ad)| selection.matches(**id, ad))
            .map(|(id, ad)| (*id, ad.clone()))
            .collect()
    }

    /// Idle jobs, by id.
    pub fn idle(&self) -> Vec<(JobId, ClassAd)> {
        self.cache()
            .iter()
            .filter(|(_, ad)| status_of(ad) == Some(status::IDLE))
            .map(|(id, ad)| (*id, ad.clone()))
            .collect()
    }

    /// Every job of `cluster` in the queue, by proc: its `JobStatus`.
    pub fn statuses_of(&self, cluster: u64) -> Vec<(u32, i64)> {
        self.cache()
            .range(JobId::new(cluster, 0)..=JobId::new(cluster, u32::MAX))
            .map(|(id, ad)| (id.proc, status_of(ad).unwrap_or(0)))
            .collect()
    }

    /// Jobs the queue says are running (or sending output, or suspended).
    pub fn running(&self) -> Vec<JobId> {
        self.cache()
            .iter()
            .filter(|(_, ad)| {
                matches!(
                    status_of(ad),
                    Some(status::RUNNING | status::TRANSFERRING_OUTPUT | status::SUSPENDED)
                )
            })
            .map(|(id, _)| *id)
            .collect()
    }

    /// The last `limit` jobs that left the queue, newest first.
    pub async fn history(
        &self,
        limit: usize,
        selection: &Selection,
    ) -> Result<Vec<ClassAd>, QueueError> {
        let store = self.inner.store.clone();
        let limit = limit.min(100_000);
        let entries = blocking(move || store.history(limit)).await??;
        Ok(entries
            .into_iter()
            .filter(|e| selection.matches(e.id, &e.ad))
            .map(|e| e.ad)
            .collect())
    }

    /// Appends an event to the job's user log, if it has one (`UserLog`),
    /// with the job owner's rights (see [`starling_process::users::Rights`]): a log
    /// the owner cannot write is not written.
    async fn log(&self, id: JobId, ad: &ClassAd, event: &userlog::Event<'_>) {
        let mut appends = userlog::Appends::default();
        if let Some(log) = LogOf::job(ad) {
            appends.add(
                &log.owner,
                &log.path,
                &userlog::entry(id, self.now(), event),
            );
        }
        self.write_logs(appends).await;
    }

    /// Writes the events gathered for user logs: one append and one sync
    /// per log.
    async fn write_logs(&self, appends: userlog::Appends) {
        if appends.is_empty() {
            return;
        }
        if let Ok(failed) = blocking(move || appends.write()).await {
            log_failures(failed);
        }
    }

    /// Waits for the queue's write lock ([`Inner::writes`]).
    async fn writing(&self) -> Writing {
        self.inner.writes.clone().lock_owned().await
    }

    /// Applies `changes` to one job in the store, then the cache.
    async fn update(&self, id: JobId, changes: Vec<Change>) -> Result<(), QueueError> {
        let writing = self.writing().await;
        self.update_holding(writing, id, changes).await
    }

    /// [`Queue::update`] for a caller holding the write lock, which is let
    /// go once the cache shows the change. The store write and the cache
    /// change are one blocking task that runs to its end even if this
    /// future is dropped, so they never part.
    async fn update_holding(
        &self,
        writing: Writing,
        id: JobId,
        changes: Vec<Change>,
    ) -> Result<(), QueueError> {
        if !self.cache().contains_key(&id) {
            return Err(QueueError::NoSuchJob(id));
        }
        let queue = self.clone();
        blocking(move || -> Result<(), QueueError> {
            let store = &queue.inner.store;
            store.update(id, &changes)?;
            if let Some(ad) = store.job(id)? {
                queue.cache().insert(id, ad);
            }
            drop(writing);
            Ok(())
        })
        .await?
    }

    /// Moves a job to the history with its final `changes`.
    async fn retire(&self, id: JobId, mut changes: Vec<Change>) -> Result<(), QueueError> {
        let writing = self.writing().await;
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        changes.extend(leaving(&ad));
        let at = Timestamp::now();
        let queue = self.clone();
        blocking(move || -> Result<(), QueueError> {
            queue.inner.store.move_to_history(id, &changes, at)?;
            queue.cache().remove(&id);
            drop(writing);
            Ok(())
        })
        .await?
    }

    /// Carries out a decided action: `plan` as one store batch, then the
    /// cache, then (the write lock let go) the negotiator is told
    /// (`event` of the changed jobs) and the user logs written. One
    /// blocking task that runs to its end even if this future is dropped,
    /// so a change on disk is always in the cache and announced. Returns
    /// the changed jobs; on an error nothing changed and no one is told.
    async fn carry_out(
        &self,
        writing: Writing,
        plan: Vec<Planned>,
        event: fn(Vec<JobId>) -> Event,
        appends: userlog::Appends,
    ) -> Result<Vec<JobId>, QueueError> {
        let queue = self.clone();
        blocking(move || -> Result<Vec<JobId>, QueueError> {
            let gone = queue.commit(&writing, &plan)?;
            drop(writing);
            let ids: Vec<JobId> = plan.iter().map(|p| p.id).collect();
            if !ids.is_empty() {
                queue.announce(event(ids.clone()));
            }
            log_failures(appends.write());
            free_later((plan, gone));
            Ok(ids)
        })
        .await?
    }

    /// Makes `plan` as one store batch, then changes the cache to match:
    /// every planned job or, on an error, none (the cache is then read back
    /// from the store for the jobs it names, in case the batch landed
    /// although the store said otherwise, as a write cut by a full disk
    /// may: see [`starling_storage::space`]). Returns the ads of the jobs
    /// that left the queue, for the caller to free. Blocking.
    fn commit(&self, _writing: &Writing, plan: &[Planned]) -> Result<Vec<ClassAd>, QueueError> {
        if plan.is_empty() {
            return Ok(Vec::new());
        }
        if plan.len() > MAX_BATCH {
            return Err(QueueError::Invalid(format!(
                "{} jobs at once, more than the {MAX_BATCH} one request may change: \
                 narrow the selection",
                plan.len()
            )));
        }
        let at = Timestamp::now();
        let mut batch = Batch::with_capacity(plan.len());
        for p in plan {
            if p.leaves {
                batch.move_to_history(p.id, p.changes.clone(), at);
            } else {
                batch.update(p.id, p.changes.clone());
            }
        }
        if let Err(e) = self.inner.store.apply(&batch) {
            return if self.reconcile(plan)? {
                tracing::warn!(error = %e, "the store failed a batch that landed all the same");
                Ok(Vec::new())
            } else {
                Err(e.into())
            };
        }
        let mut gone = Vec::new();
        let mut unparsed = Vec::new();
        {
            let mut cache = self.cache();
            let mut parsed = Parsed::default();
            for p in plan {
                if p.leaves {
                    gone.extend(cache.remove(&p.id));
                } else if let Some(ad) = cache.get_mut(&p.id) {
                    if !parsed.apply(ad, &p.changes) {
                        unparsed.push(p.id);
                    }
                }
            }
        }
        if !unparsed.is_empty() {
            self.reload(unparsed)?;
        }
        Ok(gone)
    }

    /// Reads jobs back from the store into the cache (a job the store no
    /// longer has leaves the cache); returns what the store had. Blocking.
    fn reload(&self, ids: Vec<JobId>) -> Result<Vec<(JobId, Option<ClassAd>)>, QueueError> {
        let stored = ids
            .into_iter()
            .map(|id| Ok((id, self.inner.store.job(id)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let mut cache = self.cache();
        for (id, ad) in &stored {
            match ad {
                Some(ad) => cache.insert(*id, ad.clone()),
                None => cache.remove(id),
            };
        }
        Ok(stored)
    }

    /// After a failed batch: reads the planned jobs back from the store
    /// into the cache, so that the cache says what the store says, and
    /// tells whether the batch landed (its first job shows it; a batch is
    /// all or none). Blocking.
    fn reconcile(&self, plan: &[Planned]) -> Result<bool, QueueError> {
        let first = &plan[0];
        let before = self.job(first.id);
        let stored = self.reload(plan.iter().map(|p| p.id).collect())?;
        Ok(match (&stored[0].1, before) {
            (None, _) => first.leaves,
            (Some(now), Some(before)) => !first.leaves && !now.same_as(&before),
            (Some(_), None) => false,
        })
    }

    fn status_changes(&self, code: i64) -> Vec<Change> {
        vec![
            Change::set("JobStatus", code.to_string()),
            Change::set("EnteredCurrentStatus", self.now().to_string()),
        ]
    }

    /// Holds, releases or removes the selected jobs.
    pub async fn act(&self, action: &Action, selection: &Selection) -> Result<Acted, QueueError> {
        self.act_as(action, selection, |_, _| JobAccess::Allowed)
            .await
    }

    /// [`Queue::act`] for someone who may change only the jobs `access`
    /// allows: a refused job is skipped with the refusal, an ignored one
    /// left out.
    ///
    /// One transaction (see the module docs): every job it changes, or
    /// none and an error. Held and removed jobs that run are announced
    /// ([`Event::Held`], [`Event::Removed`]) once the change is on disk, so
    /// that their runs are stopped; a removed job that runs stays in the
    /// queue, marked removed, until [`Queue::finish_removed`]. Dropping the
    /// future part-way is safe: once the action is decided, its store
    /// write, the cache, the announcement and the user logs are one task
    /// that finishes by itself ([`Queue::carry_out`]).
    pub async fn act_as(
        &self,
        action: &Action,
        selection: &Selection,
        access: impl Fn(JobId, &ClassAd) -> JobAccess,
    ) -> Result<Acted, QueueError> {
        if let Action::Hold { reason } | Action::Remove { reason } = action {
            if reason.len() > MAX_REASON_LEN {
                return Err(QueueError::Invalid(format!(
                    "a reason is at most {MAX_REASON_LEN} bytes"
                )));
            }
            // `q -hold` shows it on the job's line, the user log in one
            // event.
            starling_protocol::submit::values::one_line(reason)
                .map_err(|e| QueueError::Invalid(format!("the reason {e}")))?;
        }
        let writing = self.writing().await;
        // What every job of the action gets, made once.
        let shared: Arc<[Change]> = match action {
            Action::Hold { reason } => {
                let mut c = self.status_changes(status::HELD);
                c.extend([
                    Change::set("HoldReason", quote(reason)),
                    Change::set("HoldReasonCode", hold_codes::USER_REQUEST.to_string()),
                    Change::set("HoldReasonSubCode", "0"),
                ]);
                c.into()
            }
            Action::Release => self.status_changes(status::IDLE).into(),
            Action::Remove { reason } => {
                let mut c = self.status_changes(status::REMOVED);
                c.push(Change::set("RemoveReason", quote(reason)));
                c.into()
            }
        };
        let mut acted = Acted::default();
        let mut plan = Vec::new();
        // A release's changes as made for the last hold reason seen: the
        // jobs of a cluster held together share them.
        let mut released: Option<(String, Arc<[Change]>)> = None;
        for (id, ad) in self.cache().iter() {
            if !selection.matches(*id, ad) || !permitted(&mut acted, *id, access(*id, ad)) {
                continue;
            }
            let (id, code) = (*id, status_of(ad).unwrap_or(0));
            let running = matches!(
                code,
                status::RUNNING | status::TRANSFERRING_OUTPUT | status::SUSPENDED
            );
            let changes = match action {
                Action::Hold { .. } => {
                    if matches!(code, status::HELD | status::COMPLETED | status::REMOVED) {
                        Err(format!("already {}", name_of(code)))
                    } else {
                        Ok(shared.clone())
                    }
                }
                Action::Release => {
                    if code != status::HELD {
                        Err(format!("not held ({})", name_of(code)))
                    } else {
                        let reason = ad
                            .get("HoldReason")
                            .map(unparse)
                            .unwrap_or_else(|| quote(""));
                        match &released {
                            Some((last, changes)) if *last == reason => Ok(changes.clone()),
                            _ => {
                                let mut c = shared.to_vec();
                                c.extend([
                                    Change::set("LastHoldReason", reason.clone()),
                                    Change::remove("HoldReason"),
                                    Change::remove("HoldReasonCode"),
                                    Change::remove("HoldReasonSubCode"),
                                ]);
                                let c: Arc<[Change]> = c.into();
                                released = Some((reason, c.clone()));
                                Ok(c)
                            }
                        }
                    }
                }
                Action::Remove { .. } => {
                    if matches!(code, status::REMOVED | status::COMPLETED) {
                        Err(format!("already {}", name_of(code)))
                    } else if running {
                        Ok(shared.clone())
                    } else {
                        let mut c = shared.to_vec();
                        c.extend(leaving(ad));
                        Ok(c.into())
                    }
                }
            };
            match changes {
                Err(why) => acted.skipped.push((id, why)),
                Ok(changes) => plan.push(Planned {
                    id,
                    // An idle or held job leaves the queue at once; a
                    // running one once its run is stopped.
                    leaves: matches!(action, Action::Remove { .. }) && !running,
                    changes,
                    log: LogOf::job(ad),
                }),
            }
        }
        let event = match action {
            Action::Hold { reason } => userlog::Event::Held {
                reason,
                code: hold_codes::USER_REQUEST,
                subcode: 0,
            },
            Action::Release => userlog::Event::Released {
                reason: "via starling release",
            },
            Action::Remove { reason } => userlog::Event::Aborted { reason },
        };
        let appends = self.appends(&plan, &event);
        let announce: fn(Vec<JobId>) -> Event = match action {
            Action::Hold { .. } => |ids| Event::Held { ids },
            Action::Release => |ids| Event::Released { ids },
            Action::Remove { .. } => |ids| Event::Removed { ids },
        };
        acted.changed = self.carry_out(writing, plan, announce, appends).await?;
        Ok(acted)
    }

    /// The event of an action for each planned job's user log.
    fn appends(&self, plan: &[Planned], event: &userlog::Event<'_>) -> userlog::Appends {
        let mut appends = userlog::Appends::default();
        let entries = userlog::Entries::new(self.now(), event);
        for p in plan {
            if let Some(log) = &p.log {
                appends.add(&log.owner, &log.path, &entries.of(p.id));
            }
        }
        appends
    }

    /// Sets `attribute` to `value` (ClassAd syntax) in the selected jobs.
    pub async fn edit(
        &self,
        selection: &Selection,
        attribute: &str,
        value: &str,
    ) -> Result<Acted, QueueError> {
        self.edit_as(selection, attribute, value, |_, _| JobAccess::Allowed)
            .await
    }

    /// [`Queue::edit`] of only the jobs `access` allows, as
    /// [`Queue::act_as`]: one transaction, all the jobs it changes or none.
    pub async fn edit_as(
        &self,
        selection: &Selection,
        attribute: &str,
        value: &str,
        access: impl Fn(JobId, &ClassAd) -> JobAccess,
    ) -> Result<Acted, QueueError> {
        Name::new(attribute).map_err(|e| QueueError::Invalid(format!("{attribute:?}: {e}")))?;
        if PROTECTED.iter().any(|p| p.eq_ignore_ascii_case(attribute)) {
            return Err(QueueError::Invalid(format!(
                "{attribute} belongs to the queue and cannot be edited"
            )));
        }
        let expr = parse_expr(value)
            .map_err(|e| QueueError::Invalid(format!("{attribute} = {value}: {e}")))?;
        // The same rules as at submit for names and paths.
        if let Expr::Literal(Value::String(s)) = &expr {
            starling_protocol::submit::values::check_attribute(attribute, s)
                .map_err(|e| QueueError::Invalid(format!("{attribute}: {e}")))?;
        }
        let changes: Arc<[Change]> = vec![Change::set(attribute, unparse(&expr))].into();
        let writing = self.writing().await;
        let mut acted = Acted::default();
        let mut plan = Vec::new();
        for (id, ad) in self.cache().iter() {
            if !selection.matches(*id, ad) || !permitted(&mut acted, *id, access(*id, ad)) {
                continue;
            }
            let code = status_of(ad).unwrap_or(0);
            if matches!(code, status::RUNNING | status::TRANSFERRING_OUTPUT) {
                acted.skipped.push((*id, "it is running".to_owned()));
                continue;
            }
            plan.push(Planned {
                id: *id,
                changes: changes.clone(),
                leaves: false,
                log: None,
            });
        }
        acted.changed = self
            .carry_out(
                writing,
                plan,
                |ids| Event::Edited { ids },
                userlog::Appends::default(),
            )
            .await?;
        Ok(acted)
    }

    /// A machine granted a claim for the job: it is recorded as running
    /// there (`RemoteHost`, `ClaimId`, the execute agent) before it is
    /// handed over, so that a submit agent that restarts reconnects to it
    /// rather than run it a second time. The start is counted now
    /// (`NumJobStarts`), in the same write, and taken back by
    /// [`Queue::unclaimed`] if the hand-over fails.
    pub async fn claimed(
        &self,
        id: JobId,
        host: &str,
        claim: &str,
        agent: &str,
        domain: &str,
    ) -> Result<(), QueueError> {
        // Decided and written under the write lock: a hold or rm of the
        // job that came first is not written over (the negotiator stops
        // its run for it, and a job shown running would run nowhere).
        let writing = self.writing().await;
        let now = self.now();
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        if let Some(code @ (status::HELD | status::REMOVED | status::COMPLETED)) = status_of(&ad) {
            return Err(QueueError::Invalid(format!(
                "job {id} is {}: its claim is not recorded",
                name_of(code)
            )));
        }
        let count = |name: &str| int(&ad, name).unwrap_or(0);
        let mut c = self.status_changes(status::RUNNING);
        c.extend([
            Change::set("RemoteHost", quote(host)),
            Change::set("ClaimId", quote(claim)),
            Change::set(EXECUTE_AGENT, quote(agent)),
            Change::set(EXECUTE_DOMAIN, quote(domain)),
            Change::set("JobCurrentStartDate", now.to_string()),
            Change::set("JobCurrentStartExecutingDate", now.to_string()),
            Change::set(
                "NumShadowStarts",
                (count("NumShadowStarts") + 1).to_string(),
            ),
            Change::set("NumJobStarts", (count("NumJobStarts") + 1).to_string()),
        ]);
        if ad.get("JobStartDate").is_none() {
            c.push(Change::set("JobStartDate", now.to_string()));
        }
        self.update_holding(writing, id, c).await
    }

    /// The job was matched to a machine and its `$$(...)` filled in from
    /// the machine's ad: what was used is recorded (`MATCH_<Attr>`,
    /// `MATCH_EXP_<attribute>`), as HTCondor records it, unless the job
    /// is no longer idle.
    pub async fn matched(&self, id: JobId, record: &[(String, Expr)]) -> Result<(), QueueError> {
        let writing = self.writing().await;
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        if let Some(code @ (status::HELD | status::REMOVED | status::COMPLETED)) = status_of(&ad) {
            return Err(QueueError::Invalid(format!(
                "job {id} is {}: its match is not recorded",
                name_of(code)
            )));
        }
        let c = record
            .iter()
            .map(|(name, expr)| Change::set(name.clone(), unparse(expr)))
            .collect();
        self.update_holding(writing, id, c).await
    }

    /// A job the submit agent runs itself (scheduler and local universes)
    /// starts on this machine, `host`: it is recorded running here
    /// (`RemoteHost`) and its start counted before its process starts, so
    /// that an agent that restarts finds it and runs no second copy. A
    /// hold or rm that came first is not written over.
    pub async fn running_here(&self, id: JobId, host: &str) -> Result<(), QueueError> {
        let writing = self.writing().await;
        let now = self.now();
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        if status_of(&ad) != Some(status::IDLE) {
            return Err(QueueError::Invalid(format!(
                "job {id} is {}: it is not started",
                status_of(&ad).map_or("gone", name_of)
            )));
        }
        let mut c = self.status_changes(status::RUNNING);
        c.extend([
            Change::set("RemoteHost", quote(host)),
            Change::set("JobCurrentStartDate", now.to_string()),
            Change::set("JobCurrentStartExecutingDate", now.to_string()),
            Change::set(
                "NumJobStarts",
                (int(&ad, "NumJobStarts").unwrap_or(0) + 1).to_string(),
            ),
            Change::remove(LOCAL_PID),
            Change::remove(LOCAL_PID_START),
        ]);
        if ad.get("JobStartDate").is_none() {
            c.push(Change::set("JobStartDate", now.to_string()));
        }
        self.update_holding(writing, id, c).await
    }

    /// The process of a job run here started: its pid and the kernel's
    /// start time of that pid are recorded (a restarted agent ends that
    /// process, not another that took its pid), and the user log says it
    /// executes.
    pub async fn started_here(&self, id: JobId, pid: u32, pid_start: u64) {
        let changes = vec![
            Change::set(LOCAL_PID, pid.to_string()),
            Change::set(LOCAL_PID_START, pid_start.to_string()),
        ];
        if let Err(e) = self.update(id, changes).await {
            tracing::warn!(job = %id, error = %e, "could not record the job's process");
        }
        if let Some(ad) = self.job(id) {
            let host = self.host();
            let event = userlog::Event::Executing {
                host: &host,
                slot: None,
            };
            self.log(id, &ad, &event).await;
        }
    }

    /// A parallel job's proc started on its nodes (`NODE SLOT, ...`):
    /// `q -l` shows them (`StarlingParallelNodes`) and how long the
    /// co-allocation took from the first claim to the start
    /// (`StarlingCoallocationOverhead`, seconds).
    /// `claims` (`AGENT CLAIM, ...`, every node's) let an agent that
    /// restarts release them (`StarlingParallelClaims`).
    pub async fn coallocated(
        &self,
        id: JobId,
        nodes: &str,
        claims: &str,
        overhead: std::time::Duration,
    ) {
        let changes = vec![
            Change::set("StarlingParallelNodes", quote(nodes)),
            Change::set("StarlingParallelClaims", quote(claims)),
            Change::set(
                "StarlingCoallocationOverhead",
                format!("{:.3}", overhead.as_secs_f64()),
            ),
        ];
        if let Err(e) = self.update(id, changes).await {
            tracing::warn!(job = %id, error = %e, "could not record the parallel job's nodes");
        }
    }

    /// The job was handed over and runs in `slot` (`slot1_2@host`): the
    /// user log says so.
    pub async fn started(&self, id: JobId, slot: &str) {
        if let Some(ad) = self.job(id) {
            let host = format!("<{}>", slot.rsplit_once('@').map_or(slot, |(_, h)| h));
            let event = userlog::Event::Executing {
                host: &host,
                slot: Some(slot),
            };
            self.log(id, &ad, &event).await;
        }
    }

    /// A step of the job's file transfer with `host`, for the user log.
    pub async fn transferred(&self, id: JobId, step: userlog::Transfer, host: &str) {
        if let Some(ad) = self.job(id) {
            let host = format!("<{}>", host.rsplit_once('@').map_or(host, |(_, h)| h));
            let event = userlog::Event::FileTransfer {
                step,
                host: Some(&host),
            };
            self.log(id, &ad, &event).await;
        }
    }

    /// The job moved: it started on `to` after `secs` seconds of moving,
    /// `asked_at` (unix seconds) being when the move was decided.
    pub async fn migrated(
        &self,
        id: JobId,
        to: &str,
        reason: &str,
        secs: f64,
        asked_at: i64,
    ) -> Result<(), QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        let now = self.now();
        let mut moves = recent_moves(&ad);
        moves.push(asked_at.min(now));
        let moves = starling_policies::migration::recent_moves(&moves, now);
        let list: Vec<String> = moves.iter().map(i64::to_string).collect();
        let total = real(&ad, MIGRATION_TIME).unwrap_or(0.0) + secs.max(0.0);
        self.update(
            id,
            vec![
                Change::set(
                    NUM_MIGRATIONS,
                    (int(&ad, NUM_MIGRATIONS).unwrap_or(0) + 1).to_string(),
                ),
                Change::set(MIGRATION_TIME, format!("{total:.3}")),
                Change::set(RECENT_MIGRATIONS, format!("{{{}}}", list.join(", "))),
                Change::set(LAST_MIGRATION, quote(&format!("to {to}: {reason}"))),
            ],
        )
        .await
    }

    /// A claim was granted but the job was never handed over under it: back
    /// to idle, its start not counted, with nothing to log.
    pub async fn unclaimed(&self, id: JobId) -> Result<(), QueueError> {
        let starts = self
            .job(id)
            .and_then(|ad| int(&ad, "NumJobStarts"))
            .unwrap_or(0);
        let mut c = self.status_changes(status::IDLE);
        c.extend([
            Change::remove("RemoteHost"),
            Change::remove("ClaimId"),
            Change::remove(EXECUTE_AGENT),
            Change::remove(EXECUTE_DOMAIN),
            Change::remove("JobCurrentStartDate"),
            Change::remove("JobCurrentStartExecutingDate"),
        ]);
        if starts <= 1 {
            c.extend([
                Change::remove("NumJobStarts"),
                Change::remove("JobStartDate"),
            ]);
        } else {
            c.push(Change::set("NumJobStarts", (starts - 1).to_string()));
        }
        self.update(id, c).await
    }

    /// Writes a reconnection event in the job's user log: the submit agent
    /// lost touch with the run (`JOB_DISCONNECTED`), found it again
    /// (`JOB_RECONNECTED`), or gave up once its lease lapsed
    /// (`JOB_RECONNECT_FAILED`).
    pub async fn reconnection(&self, id: JobId, code: u32, host: &str, detail: &str) {
        let Some(ad) = self.job(id) else {
            return;
        };
        let addr = format!("<{host}>");
        let event = match code {
            userlog::codes::JOB_DISCONNECTED => userlog::Event::Disconnected {
                reason: detail,
                name: host,
                addr: &addr,
            },
            userlog::codes::JOB_RECONNECTED => userlog::Event::Reconnected {
                name: host,
                addr: &addr,
            },
            _ => userlog::Event::ReconnectFailed {
                reason: detail,
                name: host,
            },
        };
        self.log(id, &ad, &event).await;
    }

    /// The job's program exited (`how`), before its own policy says
    /// whether it leaves, is held or runs again: `NumJobCompletions`
    /// counts the exit and the exit's code or signal is recorded, so that
    /// `OnExitRemove` (`max_retries`' `NumJobCompletions > JobMaxRetries`),
    /// `OnExitHold` and the next run see them, as in HTCondor.
    pub async fn exited(&self, id: JobId, how: &Completion) -> Result<(), QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        let mut c = vec![Change::set(
            "NumJobCompletions",
            (int(&ad, "NumJobCompletions").unwrap_or(0) + 1).to_string(),
        )];
        c.extend(exit_changes(how));
        self.update(id, c).await
    }

    /// The run ended early (lost machine, lapsed claim): back to idle.
    pub async fn evicted(&self, id: JobId, reason: &str) -> Result<(), QueueError> {
        self.evicted_after(id, reason, None).await
    }

    /// [`Queue::evicted`] of a run last known to work at `ran_until`
    /// (unix seconds; `None`: now): its work since its last checkpoint,
    /// up to then, is lost.
    pub async fn evicted_after(
        &self,
        id: JobId,
        reason: &str,
        ran_until: Option<i64>,
    ) -> Result<(), QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        let c = self.back_to_idle(&ad, reason, ran_until);
        self.update(id, c).await?;
        self.log_evicted(id, &ad, reason).await;
        Ok(())
    }

    /// What sends a job whose run ended early back to idle: its run and
    /// lost time counted, where it ran forgotten.
    fn back_to_idle(&self, ad: &ClassAd, reason: &str, ran_until: Option<i64>) -> Vec<Change> {
        let mut c = self.status_changes(status::IDLE);
        c.extend(self.run_time(ad));
        c.extend(self.badput(ad, ran_until.unwrap_or_else(|| self.now())));
        c.extend([
            Change::set("LastVacateReason", quote(reason)),
            Change::set(
                "LastRemoteHost",
                ad.get("RemoteHost")
                    .map(unparse)
                    .unwrap_or_else(|| quote("")),
            ),
            Change::remove("RemoteHost"),
            Change::remove("ClaimId"),
            Change::remove(EXECUTE_AGENT),
            Change::remove(EXECUTE_DOMAIN),
            Change::remove("JobCurrentStartDate"),
            Change::remove("JobCurrentStartExecutingDate"),
        ]);
        c
    }

    /// The user log's eviction event for `ad`'s run.
    async fn log_evicted(&self, id: JobId, ad: &ClassAd, reason: &str) {
        let resources = resources_of(ad, None, None);
        self.log(
            id,
            ad,
            &userlog::Event::Evicted {
                checkpointed: int(ad, "NumCkpts").unwrap_or(0) > 0,
                cpu: userlog::CpuTime::default(),
                reason,
                resources: &resources,
            },
        )
        .await;
    }

    /// The job's latest checkpoint record, as [`Queue::checkpointed`] kept
    /// it.
    pub async fn checkpoint(&self, id: JobId) -> Option<Vec<u8>> {
        let store = self.inner.store.clone();
        blocking(move || store.checkpoint(id)).await.ok()?.ok()?
    }

    /// Every checkpoint record, by job (jobs that left the queue too,
    /// until [`Queue::forget_checkpoint`]).
    pub async fn checkpoints(&self) -> Vec<(JobId, Vec<u8>)> {
        let store = self.inner.store.clone();
        blocking(move || store.checkpoints())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    }

    /// Drops the job's checkpoint record.
    pub async fn forget_checkpoint(&self, id: JobId) {
        let store = self.inner.store.clone();
        let _ = blocking(move || store.remove_checkpoint(id)).await;
    }

    /// Records a checkpoint the job took: `record` (durable before this
    /// returns, when `restorable`: the job restarts from it) and HTCondor's
    /// attributes (`NumCkpts`, `LastCkptTime`, `CommittedTime`,
    /// `CommittedSlotTime`) with ours (`StarlingCkpt*`). A checkpoint kept
    /// by no store peer is counted but does not replace a restorable one.
    pub async fn checkpointed(
        &self,
        id: JobId,
        checkpoint: &Checkpointed,
        record: Option<Vec<u8>>,
    ) -> Result<(), QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        if let Some(record) = record {
            let store = self.inner.store.clone();
            blocking(move || store.put_checkpoint(id, &record)).await??;
        }
        let count = |name: &str| int(&ad, name).unwrap_or(0);
        let saved = i64::try_from(checkpoint.run_ms / 1000).unwrap_or(i64::MAX);
        let cpus = int(&ad, "RequestCpus").unwrap_or(1).max(1);
        let mut c = vec![
            Change::set("NumCkpts", (count("NumCkpts") + 1).to_string()),
            Change::set("LastCkptTime", checkpoint.taken_secs.to_string()),
            Change::set(
                "CommittedTime",
                (count("CommittedTime") + saved).to_string(),
            ),
            Change::set(
                "CommittedSlotTime",
                (count("CommittedSlotTime") + saved * cpus).to_string(),
            ),
            Change::set(CKPT_BYTES, checkpoint.bytes.to_string()),
            Change::set(CKPT_LOCAL_ONLY, checkpoint.replicas.is_empty().to_string()),
        ];
        if !checkpoint.replicas.is_empty() {
            c.extend(replica_changes(checkpoint.sequence, &checkpoint.replicas));
        }
        self.update(id, c).await?;
        let event = userlog::Event::Checkpointed {
            cpu: userlog::CpuTime::default(),
            sent_bytes: checkpoint.bytes,
        };
        self.log(id, &ad, &event).await;
        Ok(())
    }

    /// The job's checkpoint moved to other store peers (repair).
    pub async fn replicas_moved(
        &self,
        id: JobId,
        sequence: u64,
        replicas: &[String],
        record: Vec<u8>,
    ) -> Result<(), QueueError> {
        let store = self.inner.store.clone();
        blocking(move || store.put_checkpoint(id, &record)).await??;
        if self.job(id).is_none() {
            return Ok(());
        }
        self.update(id, replica_changes(sequence, replicas)).await
    }

    /// Work the current run did since its last checkpoint (or its start)
    /// up to `until`, lost now that it ends early: added to
    /// `StarlingBadputTime`.
    fn badput(&self, ad: &ClassAd, until: i64) -> Vec<Change> {
        let Some(start) = int(ad, "JobCurrentStartDate") else {
            return Vec::new();
        };
        let since = int(ad, "LastCkptTime").map_or(start, |c| c.max(start));
        let lost = (until.min(self.now()) - since).max(0);
        vec![Change::set(
            BADPUT,
            (int(ad, BADPUT).unwrap_or(0) + lost).to_string(),
        )]
    }

    /// The job's checkpoint is gone (every store peer keeping it left the
    /// pool for longer than its lease): it starts over at its next run.
    pub async fn checkpoint_lost(&self, id: JobId) -> Result<(), QueueError> {
        let mut c = replica_changes(0, &[]);
        c.push(Change::set(
            CKPT_LOST,
            quote("every store peer keeping it left the pool"),
        ));
        self.update(id, c).await
    }

    /// Wall time of the current run, added to `RemoteWallClockTime`.
    fn run_time(&self, ad: &ClassAd) -> Vec<Change> {
        let Some(start) = int(ad, "JobCurrentStartDate") else {
            return Vec::new();
        };
        let total = int(ad, "RemoteWallClockTime").unwrap_or(0) + (self.now() - start).max(0);
        vec![Change::set("RemoteWallClockTime", total.to_string())]
    }

    /// The job ended and its output is in place: to the history.
    pub async fn completed(&self, id: JobId, how: &Completion) -> Result<(), QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        let secs = |ms: u64| format!("{:.3}", ms as f64 / 1000.0);
        let mut c = self.status_changes(status::COMPLETED);
        // The work since the last checkpoint is committed by completion.
        if let Some(start) = int(&ad, "JobCurrentStartDate") {
            let since = int(&ad, "LastCkptTime").map_or(start, |c| c.max(start));
            let done = (self.now() - since).max(0);
            let cpus = int(&ad, "RequestCpus").unwrap_or(1).max(1);
            c.extend([
                Change::set(
                    "CommittedTime",
                    (int(&ad, "CommittedTime").unwrap_or(0) + done).to_string(),
                ),
                Change::set(
                    "CommittedSlotTime",
                    (int(&ad, "CommittedSlotTime").unwrap_or(0) + done * cpus).to_string(),
                ),
            ]);
        }
        c.extend([
            Change::set("CompletionDate", self.now().to_string()),
            Change::set("RemoteUserCpu", secs(how.user_cpu_ms)),
            Change::set("RemoteSysCpu", secs(how.sys_cpu_ms)),
            Change::set("LastJobWallTime", secs(how.wall_ms)),
            Change::set(
                "MemoryUsage",
                how.peak_memory_kib.div_ceil(1024).to_string(),
            ),
            Change::set(
                "RemoteWallClockTime",
                (int(&ad, "RemoteWallClockTime").unwrap_or(0) as f64 + how.wall_ms as f64 / 1000.0)
                    .to_string(),
            ),
        ]);
        if let Some(kib) = how.disk_usage_kib {
            c.push(Change::set("DiskUsage", kib.max(1).to_string()));
        }
        c.extend(exit_changes(how));
        self.retire(id, c).await?;
        let exit = match (how.exit_code, how.signal) {
            (Some(code), _) => userlog::Exit::Code(code),
            (None, signal) => userlog::Exit::Signal(signal.unwrap_or(0)),
        };
        let cpu = userlog::CpuTime {
            user_ms: how.user_cpu_ms,
            sys_ms: how.sys_cpu_ms,
        };
        let memory_mib = i64::try_from(how.peak_memory_kib.div_ceil(1024)).unwrap_or(i64::MAX);
        let disk_kib = how
            .disk_usage_kib
            .map(|kib| i64::try_from(kib.max(1)).unwrap_or(i64::MAX));
        let resources = resources_of(&ad, Some(memory_mib), disk_kib);
        self.log(
            id,
            &ad,
            &userlog::Event::Terminated {
                exit,
                cpu,
                total_cpu: cpu,
                sent_bytes: 0,
                received_bytes: 0,
                resources: &resources,
            },
        )
        .await;
        Ok(())
    }

    /// The job cannot go on: held with HTCondor's code and a reason.
    /// Unless its eviction transforms cure the hold (see
    /// [`Queue::held_or_retried`]).
    pub async fn held(
        &self,
        id: JobId,
        code: u32,
        subcode: i32,
        reason: &str,
    ) -> Result<(), QueueError> {
        self.held_or_retried(id, code, subcode, reason)
            .await
            .map(drop)
    }

    /// [`Queue::held`], which says whether the job went back to idle
    /// instead: a job whose eviction transforms
    /// ([`starling_policies::on_evict`]: `retry_request_memory` and its
    /// kin) change its requests for this hold (code, subcode) is not held
    /// but made idle with the larger request, as HTCondor's schedd does,
    /// with `VacateReason`, `VacateReasonCode` and `VacateReasonSubCode`
    /// saying why its run ended and an eviction event in its user log.
    pub async fn held_or_retried(
        &self,
        id: JobId,
        code: u32,
        subcode: i32,
        reason: &str,
    ) -> Result<bool, QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        if let Some(retry) = starling_policies::on_evict::on_hold(&ad, code, subcode) {
            let mut c = self.back_to_idle(&ad, reason, None);
            c.extend([
                Change::set("VacateReason", quote(reason)),
                Change::set("VacateReasonCode", code.to_string()),
                Change::set("VacateReasonSubCode", subcode.to_string()),
            ]);
            let mut retried = Vec::new();
            for (attr, value) in retry {
                retried.push(format!("{attr} = {}", unparse(&value)));
                c.push(Change::set(attr, unparse(&value)));
            }
            self.update(id, c).await?;
            let why = format!("{reason} Running again with {}.", retried.join(", "));
            self.log_evicted(id, &ad, &why).await;
            return Ok(true);
        }
        let mut c = self.status_changes(status::HELD);
        c.extend(self.run_time(&ad));
        c.extend([
            Change::set("HoldReason", quote(reason)),
            Change::set("HoldReasonCode", code.to_string()),
            Change::set("HoldReasonSubCode", subcode.to_string()),
            Change::remove("RemoteHost"),
            Change::remove("ClaimId"),
            Change::remove("JobCurrentStartDate"),
        ]);
        self.update(id, c).await?;
        self.log(
            id,
            &ad,
            &userlog::Event::Held {
                reason,
                code,
                subcode,
            },
        )
        .await;
        self.announce(Event::Held { ids: vec![id] });
        Ok(false)
    }

    /// Removed jobs' runs were stopped: to the history, all in one write.
    /// Jobs no longer in the queue are passed over.
    pub async fn finish_removed(&self, ids: &[JobId]) -> Result<(), QueueError> {
        let writing = self.writing().await;
        let plan: Vec<Planned> = {
            let cache = self.cache();
            ids.iter()
                .filter_map(|id| {
                    let ad = cache.get(id)?;
                    let mut changes = self.run_time(ad);
                    changes.extend(leaving(ad));
                    Some(Planned {
                        id: *id,
                        changes: changes.into(),
                        leaves: true,
                        log: None,
                    })
                })
                .collect()
        };
        let queue = self.clone();
        blocking(move || {
            let gone = queue.commit(&writing, &plan)?;
            free_later((plan, gone));
            Ok(())
        })
        .await?
    }
}

/// A job status in words ("idle", "held"), for messages.
pub fn name_of(code: i64) -> &'static str {
    match code {
        status::IDLE => "idle",
        status::RUNNING => "running",
        status::REMOVED => "removed",
        status::COMPLETED => "completed",
        status::HELD => "held",
        status::TRANSFERRING_OUTPUT => "transferring output",
        status::SUSPENDED => "suspended",
        _ => "in an unknown state",
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, QueueError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| QueueError::Task(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;
    use starling_storage::SledStore;

    fn job(owner: &str) -> ClassAd {
        parse_ad(&format!("[Owner = \"{owner}\"; Cmd = \"/bin/true\"]")).unwrap()
    }

    async fn queue(dir: &std::path::Path) -> Queue {
        let store: Arc<dyn Store> = Arc::new(SledStore::open(dir).unwrap());
        Queue::open(store).await.unwrap()
    }

    #[tokio::test]
    async fn a_job_goes_through_its_states_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let q = queue(dir.path()).await;
        let mut events = q.subscribe();
        let (cluster, procs) = q
            .submit_with(|c| Ok(vec![job("alice"), job(&format!("bob{c}"))]))
            .await
            .unwrap();
        assert_eq!((cluster, procs), (1, 2));
        assert!(matches!(
            events.recv().await.unwrap(),
            Event::Submitted {
                cluster: 1,
                procs: 2
            }
        ));
        let a = JobId::new(1, 0);
        assert_eq!(q.idle().len(), 2);
        q.claimed(a, "slot1_1@m", "c", "peer", "d").await.unwrap();
        assert_eq!(q.running(), vec![a]);
        assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), Some(1));
        // The hand-over failed: as if it had never been claimed.
        q.unclaimed(a).await.unwrap();
        assert_eq!(status_of(&q.job(a).unwrap()), Some(status::IDLE));
        assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), None);
        assert!(q.job(a).unwrap().get("JobStartDate").is_none());
        q.claimed(a, "slot1_1@m", "c", "peer", "d").await.unwrap();
        q.started(a, "slot1_1@m").await;
        assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), Some(1));
        q.evicted(a, "machine lost").await.unwrap();
        assert_eq!(status_of(&q.job(a).unwrap()), Some(status::IDLE));
        assert!(q.job(a).unwrap().get("ClaimId").is_none());
        q.claimed(a, "slot1_2@m", "c2", "peer", "d").await.unwrap();
        q.started(a, "slot1_2@m").await;
        assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), Some(2));
        assert_eq!(int(&q.job(a).unwrap(), "NumShadowStarts"), Some(3));
        q.completed(
            a,
            &Completion {
                exit_code: Some(3),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert!(q.job(a).is_none());
        let held = Selection::parse(&["bob1".into()], None).unwrap();
        let acted = q
            .act(
                &Action::Hold {
                    reason: "wait".into(),
                },
                &held,
            )
            .await
            .unwrap();
        assert_eq!(acted.changed, vec![JobId::new(1, 1)]);
        drop(q);
        let q = queue(dir.path()).await;
        let b = q.job(JobId::new(1, 1)).unwrap();
        assert_eq!(status_of(&b), Some(status::HELD));
        assert_eq!(text(&b, "HoldReason").as_deref(), Some("wait"));
        let history = q.history(10, &Selection::default()).await.unwrap();
        assert_eq!(int(&history[0], "ExitCode"), Some(3));
        assert_eq!(int(&history[0], "NumJobStarts"), Some(2));
        // Where it last ran, by HTCondor's name: it runs nowhere now.
        assert_eq!(
            text(&history[0], "LastRemoteHost").as_deref(),
            Some("slot1_2@m")
        );
        assert!(history[0].get("RemoteHost").is_none());
        // A second cluster gets the next id, also after reopening.
        let (cluster, _) = q
            .submit_with(|c| Ok(vec![job(&c.to_string())]))
            .await
            .unwrap();
        assert_eq!(cluster, 2);
        assert_eq!(
            text(&q.job(JobId::new(2, 0)).unwrap(), "Owner").as_deref(),
            Some("2")
        );
    }

    #[tokio::test]
    async fn bad_requests_are_refused_and_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let q = queue(dir.path()).await;
        assert!(q.submit_with(|_| Err("line 3: nope".into())).await.is_err());
        let (cluster, _) = q.submit_with(|_| Ok(vec![job("a")])).await.unwrap();
        assert_eq!(cluster, 1, "a failed submit uses no cluster id");
        for word in ["1.x", "", "a b", "-3"] {
            assert!(Target::parse(word).is_err(), "{word:?}");
        }
        assert!(Selection::parse(&[], Some("Owner ==")).is_err());
        let all = Selection::default();
        let e = q.edit(&all, "JobStatus", "5").await.unwrap_err();
        assert!(e.to_string().contains("JobStatus"), "{e}");
        let acted = q.act(&Action::Release, &all).await.unwrap();
        assert_eq!(acted.skipped.len(), 1);
        assert!(acted.skipped[0].1.contains("not held"));
        // Names, paths and reasons stay one line, as at submit.
        let long = format!("\"/{}\"", "d".repeat(5000));
        for (attribute, value) in [
            ("JobBatchName", r#""a\nb""#),
            ("Out", r#""out\t.txt""#),
            ("Iwd", long.as_str()),
        ] {
            let e = q.edit(&all, attribute, value).await.unwrap_err();
            assert!(e.to_string().starts_with(attribute), "{e}");
        }
        q.edit(&all, "Note", r#""free\ntext""#).await.unwrap();
        let e = q
            .act(
                &Action::Hold {
                    reason: "two\nlines".into(),
                },
                &all,
            )
            .await
            .unwrap_err();
        assert!(e.to_string().contains("a newline"), "{e}");
        assert_eq!(
            status_of(&q.jobs(&all)[0].1),
            Some(status::IDLE),
            "a refused hold holds nothing"
        );
        let acted = q
            .act(&Action::Remove { reason: "x".into() }, &all)
            .await
            .unwrap();
        assert_eq!(acted.changed.len(), 1);
        assert!(q.jobs(&all).is_empty(), "an idle job leaves at once");
    }
    /// Every job in the cache as the store has it.
    fn assert_cache_is_store(q: &Queue) {
        let stored = q.inner.store.jobs().unwrap();
        let cached: Vec<(JobId, ClassAd)> = q.cache().clone().into_iter().collect();
        assert_eq!(stored.len(), cached.len());
        for ((a, ad), (b, cached)) in stored.iter().zip(&cached) {
            assert_eq!(a, b);
            assert!(
                ad.same_as(cached),
                "job {a}: the cache and the store differ"
            );
        }
    }

    /// `rm`, `hold`, `release` and `qedit` of a 20,000-job cluster: every
    /// job changes in one go (one event names them all), or none does; the
    /// user log gets every event; the cache is what the store says.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_large_cluster_changes_in_one_go_or_not_at_all() {
        const N: u32 = 20_000;
        let dir = tempfile::tempdir().unwrap();
        let q = queue(&dir.path().join("store")).await;
        let log = dir.path().join("jobs.log");
        // A log written with the agent's rights: its own user's.
        let owner = if rustix::process::geteuid().is_root() {
            "root"
        } else {
            "alice"
        };
        let ad = parse_ad(&format!(
            "[Owner = \"{owner}\"; Cmd = \"/bin/true\"; UserLog = {}]",
            quote(&log.to_string_lossy())
        ))
        .unwrap();
        // The last proc is near the size limit of a job.
        let mut big = ad.clone();
        for i in 0..4 {
            let text = quote(&"b".repeat(240 * 1024));
            big.insert(
                Name::new(&format!("Big{i}")).unwrap(),
                parse_expr(&text).unwrap(),
            );
        }
        let cluster = move |_| {
            let mut ads = vec![ad.clone(); N as usize - 1];
            ads.push(big.clone());
            Ok(ads)
        };
        q.submit_with(cluster).await.unwrap();
        q.submit_with(|_| Ok(vec![job("bob")])).await.unwrap();
        let mut events = q.subscribe();
        let one = Selection::parse(&["1".into()], None).unwrap();
        let ids = |event: Event| match event {
            Event::Held { ids }
            | Event::Released { ids }
            | Event::Removed { ids }
            | Event::Edited { ids } => ids,
            Event::Submitted { .. } => panic!("{event:?}"),
        };
        let in_cluster = |q: &Queue, status: i64| {
            q.jobs(&one)
                .iter()
                .filter(|(_, ad)| status_of(ad) == Some(status))
                .count()
        };

        let acted = q.edit(&one, "Note", "\"first\"").await.unwrap();
        assert_eq!(acted.changed.len(), N as usize);
        assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
        assert!(q
            .jobs(&one)
            .iter()
            .all(|(_, ad)| text(ad, "Note").as_deref() == Some("first")));

        let hold = Action::Hold {
            reason: "disk quota".into(),
        };
        let acted = q.act(&hold, &one).await.unwrap();
        assert_eq!((acted.changed.len(), acted.skipped.len()), (N as usize, 0));
        assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
        assert_eq!(in_cluster(&q, status::HELD), N as usize);
        assert_cache_is_store(&q);
        // A claim that comes after the hold is refused, not written over
        // it.
        let e = q
            .claimed(JobId::new(1, 5), "slot1@m", "c", "p", "d")
            .await
            .unwrap_err();
        assert!(e.to_string().contains("is held"), "{e}");
        assert_eq!(
            status_of(&q.job(JobId::new(1, 5)).unwrap()),
            Some(status::HELD)
        );

        // The last job would outgrow its limit: nothing changes, no one is
        // told.
        let long = quote(&"n".repeat(100 * 1024));
        let e = q.edit(&one, "Note", &long).await.unwrap_err();
        assert!(e.to_string().contains(&format!("job 1.{}", N - 1)), "{e}");
        assert!(events.try_recv().is_err(), "a failed edit was announced");
        assert!(q
            .jobs(&one)
            .iter()
            .all(|(_, ad)| text(ad, "Note").as_deref() == Some("first")));
        assert_cache_is_store(&q);

        let acted = q.act(&Action::Release, &one).await.unwrap();
        assert_eq!(acted.changed.len(), N as usize);
        assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
        assert_eq!(in_cluster(&q, status::IDLE), N as usize);
        let released = q.job(JobId::new(1, 7)).unwrap();
        assert_eq!(
            text(&released, "LastHoldReason").as_deref(),
            Some("disk quota")
        );
        assert!(released.get("HoldReason").is_none());

        // Two run; rm keeps them, marked removed, until their runs stop.
        let running = [JobId::new(1, 0), JobId::new(1, 1)];
        for id in running {
            q.claimed(id, "slot1@m", "c", "p", "d").await.unwrap();
        }
        let rm = Action::Remove {
            reason: "not needed".into(),
        };
        let acted = q.act(&rm, &one).await.unwrap();
        assert_eq!(acted.changed.len(), N as usize);
        assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
        let left = q.jobs(&one);
        assert_eq!(left.len(), 2);
        assert!(left
            .iter()
            .all(|(id, ad)| running.contains(id) && status_of(ad) == Some(status::REMOVED)));
        assert_cache_is_store(&q);
        q.finish_removed(&running).await.unwrap();
        assert!(q.jobs(&one).is_empty());
        let history = q.history(usize::MAX, &one).await.unwrap();
        assert_eq!(history.len(), N as usize);
        assert_eq!(
            text(&history[0], "LastRemoteHost").as_deref(),
            Some("slot1@m"),
            "the last to leave ran"
        );
        assert_eq!(q.jobs(&Selection::default()).len(), 1, "cluster 2 stays");

        // Every job's event, once, in each action's order.
        let written = std::fs::read_to_string(&log).unwrap();
        for code in ["000", "012", "013", "009"] {
            let procs: Vec<u32> = written
                .lines()
                .filter_map(|line| line.strip_prefix(&format!("{code} (001.")))
                .map(|rest| rest[..rest.find('.').unwrap()].parse().unwrap())
                .collect();
            assert_eq!(procs, (0..N).collect::<Vec<_>>(), "events {code}");
        }
        drop(q);
        let q = queue(&dir.path().join("store")).await;
        assert_eq!(q.jobs(&Selection::default()).len(), 1);
    }
}
