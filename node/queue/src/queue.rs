//! The [`Queue`]: the jobs in the store and their cache in memory, the
//! write lock, and the one way a change reaches them (store first, then
//! the cache, then the [`Event`]s and the user logs: see the crate docs).
//! It owns the reads (`job`, `jobs`, `history`...), submits, and the
//! writes the rest of the queue goes through (`update`, `retire`, and
//! `carry_out`/`commit` for one transaction over many jobs). What a
//! change is lives in its children, which call into this file and are
//! never called from it:
//!
//! - `actions`: a user's `rm`, `hold`, `release` and `qedit` of many jobs;
//! - `runs`: the runner's reports on a job's runs;
//! - `checkpoints`: checkpoint and migration records.

pub(crate) mod actions;
pub(crate) mod checkpoints;
pub(crate) mod runs;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use starling_protocol::classad::{parse_expr, unparse, ClassAd, Expr, Name, Value};
use starling_protocol::identity::Timestamp;
use starling_storage::{Batch, Change, Error as StoreError, JobId, Store, MAX_BATCH};
use tokio::sync::broadcast;

use crate::attributes::{status_of, text};
use crate::error::QueueError;
use crate::selection::Selection;
use crate::status;
use crate::userlog;

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
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, QueueError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| QueueError::Task(e.to_string()))
}
