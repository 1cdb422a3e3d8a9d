//! The runner's reports on a job's runs: claimed and matched, started
//! (here or on a machine), evicted, exited, completed, held or retried,
//! and removed once its run is stopped ([`Queue::finish_removed`]). Each
//! records the run in the job's ad with HTCondor's attributes
//! (`NumJobStarts`, `RemoteWallClockTime`, `ExitCode`, badput...) and
//! writes the user log's event. Its changes go through the queue's
//! `update`, `retire` and `commit`, never to the store or the cache
//! directly; checkpoints and moves are `checkpoints`'.

use starling_protocol::classad::{unparse, ClassAd, Expr};
use starling_storage::{Change, JobId};

use super::{blocking, free_later, leaving, Event, Planned, Queue};
use crate::attributes::{
    int, quote, status_of, BADPUT, EXECUTE_AGENT, EXECUTE_DOMAIN, LOCAL_PID, LOCAL_PID_START,
};
use crate::error::QueueError;
use crate::status::{self, name_of};
use crate::userlog;

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

impl Queue {
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
