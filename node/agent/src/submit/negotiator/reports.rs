//! What the negotiator's shadows and this machine's own runs report, and
//! what the queue records of it.
//!
//! ```text
//! ShadowEvent ──▶ Rejected: the machine avoided a moment, the refusal kept
//!                 Claimed / Started / Transfer / Reconnection: recorded
//!                 Ended: its exit and on_exit_* policy recorded (or held,
//!                        or evicted back to idle); the claim takes the
//!                        next idle job of its autocluster
//!                 Lost / Unrunnable / Checkpointed / Done
//! local::Event ──▶ started here, or its end recorded as any run's
//! ```
//!
//! It owns the recording of a run's end (`record_end`, `record_exit`) and
//! of checkpoints. It plans nothing and starts no shadow: placing jobs is
//! the round's ([`super::round`]), moving them [`super::migration`]'s.

use std::time::{Duration, Instant};

use ractor::ActorRef;
use starling_policies::job_policy::{self, OnExit};
use starling_protocol::claim::RejectCode;
use starling_protocol::classad::ClassAd;
use starling_storage::JobId;

use super::{local, start_of, unix_now, NegotiatorMsg, NegotiatorState, AVOID_FOR};
use crate::shadow::ShadowEvent;
use starling_queue::{Completion, Queue};

impl NegotiatorState {
    /// A job running on this machine started or ended.
    pub(super) async fn on_local(&mut self, myself: &ActorRef<NegotiatorMsg>, event: local::Event) {
        use starling_queue::status;
        let queue = &self.args.queue;
        let (job, end) = match event {
            local::Event::Started {
                job,
                pid,
                pid_start,
            } => {
                queue.started_here(job, pid, pid_start).await;
                return;
            }
            local::Event::Ended { job, end } => (job, end),
        };
        self.local.ended(job);
        let recorded = match queue.job(job).and_then(|ad| starling_queue::status_of(&ad)) {
            // Removed while it ran: it leaves the queue now it has ended.
            Some(status::REMOVED) => queue.finish_removed(&[job]).await,
            Some(status::RUNNING) => match end {
                local::End::Exited(outcome) => match outcome.hold() {
                    Some((code, subcode, reason)) => {
                        queue.held(job, code.code(), subcode, &reason).await
                    }
                    None => record_exit(queue, job, &completion_of(&outcome)).await,
                },
                local::End::Unrunnable {
                    code,
                    subcode,
                    reason,
                } => {
                    tracing::info!(%job, %reason, "the job cannot run here; held");
                    queue.held(job, code, subcode, &reason).await
                }
                local::End::Stopped(local::Stop::Vacated(reason)) => {
                    queue.evicted(job, &reason).await
                }
                local::End::Stopped(why) => {
                    queue
                        .evicted(job, &format!("the job was stopped ({why:?})"))
                        .await
                }
            },
            // Held while it ran (recorded then), or gone.
            _ => Ok(()),
        };
        if let Err(e) = recorded {
            tracing::warn!(%job, error = %e, "could not record the end of the job's run here");
        }
        self.soon(myself);
    }

    pub(super) async fn on_shadow(
        &mut self,
        myself: &ActorRef<NegotiatorMsg>,
        id: u64,
        event: ShadowEvent,
    ) {
        match event {
            ShadowEvent::Rejected {
                job,
                machine,
                reason,
                code,
                ..
            } => {
                if let Some(shadow) = self.shadows.get(&id) {
                    // A wait that ran out is no reason to avoid the
                    // machine: the job waits there again.
                    let waited = shadow.waits && code == Some(RejectCode::Busy);
                    if !waited {
                        self.avoid.insert(
                            (shadow.machine, shadow.cluster.clone()),
                            Instant::now() + AVOID_FOR,
                        );
                    }
                }
                if self.placed.get(&job) == Some(&id) {
                    self.placed.remove(&job);
                }
                if self.move_of_shadow(id) == Some(job) {
                    self.give_up_move(job, &format!("{machine} refused the claim: {reason}"));
                }
                self.reject(job, machine, reason);
                self.soon(myself);
            }
            ShadowEvent::MigrationProposed { job, offer } => {
                if self.placed.get(&job) == Some(&id) {
                    self.on_proposal(job, offer).await;
                } else {
                    let _ = offer
                        .answer
                        .send(starling_protocol::transfer::Response::Error {
                            transfer: starling_protocol::transfer::TransferId(0),
                            code: starling_protocol::transfer::ErrorCode::Declined,
                            reason: "the job is not running under this claim".to_owned(),
                        });
                }
            }
            ShadowEvent::Standing { job, slot } => {
                tracing::debug!(%job, %slot, "holding the moving job's new machine");
                self.on_standing(id, job);
            }
            ShadowEvent::Claimed {
                job,
                peer,
                claim,
                slot,
                recorded,
            } => {
                if let Some(shadow) = self.shadows.get_mut(&id) {
                    shadow.granted.get_or_insert_with(Instant::now);
                }
                let domain = self
                    .shadows
                    .get(&id)
                    .map(|s| s.domain.clone())
                    .unwrap_or_default();
                let ok = self.placed.get(&job) == Some(&id)
                    && match self
                        .args
                        .queue
                        .claimed(job, &slot, &claim.to_string(), &peer.to_string(), &domain)
                        .await
                    {
                        Ok(()) => true,
                        Err(e) => {
                            tracing::warn!(%job, error = %e, "could not record the claim");
                            false
                        }
                    };
                let _ = recorded.send(ok);
            }
            ShadowEvent::Reconnection {
                job,
                code,
                machine,
                detail,
            } => {
                self.args
                    .queue
                    .reconnection(job, code, &machine, &detail)
                    .await;
            }
            ShadowEvent::Transfer { job, step, machine } => {
                self.args.queue.transferred(job, step, &machine).await;
            }
            ShadowEvent::Started { job, slot, .. } => {
                if self.placed.get(&job) == Some(&id) {
                    tracing::info!(%job, %slot, "the job runs");
                    self.args.queue.started(job, &slot).await;
                    self.on_moved(id, job).await;
                }
            }
            ShadowEvent::Ended {
                job,
                report,
                output,
                output_code,
                next,
            } => {
                let queue = &self.args.queue;
                if let Some(reason) = &report.evicted {
                    // The machine made it leave (owner policy, preemption):
                    // back to idle with its run time, and the claim goes. A
                    // run whose process never started (its input could not
                    // be fetched while this agent was away) is not a start.
                    let back = if report.never_started {
                        tracing::info!(%job, %reason, "the job never started there; back to idle");
                        queue.unclaimed(job).await
                    } else {
                        queue.evicted(job, reason).await
                    };
                    if let Err(e) = back {
                        tracing::warn!(%job, error = %e, "could not return the job to idle");
                    }
                    self.placed.remove(&job);
                    if let Some(shadow) = self.shadows.get_mut(&id) {
                        shadow.job = None;
                    }
                    let _ = next.send(None);
                    // A moving job goes to its new machine.
                    self.on_left(job);
                    self.soon(myself);
                    return;
                }
                if report.hold.is_none() && output.is_ok() {
                    if let Some(shadow) = self.shadows.get(&id) {
                        if shadow.domain != self.args.own_domain {
                            // A foreign domain did us a favour.
                            // Timed by our clock, not the remote report:
                            // a machine cannot say how much we owe it.
                            let ran = queue
                                .job(job)
                                .and_then(|ad| start_of(&ad))
                                .map_or(0, |start| (unix_now() - start).max(0));
                            let slot_secs = shadow.request.cpus.max(1.0) * ran as f64;
                            self.args.accounting.received(&shadow.domain, slot_secs);
                        }
                    }
                }
                match record_end(queue, job, &report, &output, output_code).await {
                    // A job that asked to run again with more memory went
                    // back to idle instead of being held: negotiate soon.
                    Ok(true) => {
                        tracing::info!(%job, "the job runs again with what its eviction transform asks");
                        self.soon(myself);
                    }
                    Ok(false) => {}
                    Err(e) => tracing::warn!(%job, error = %e, "could not record the job's end"),
                }
                // It ended before it could move.
                if self.move_of_shadow(id).is_none() {
                    self.give_up_move(job, "the job ended before it moved");
                }
                self.placed.remove(&job);
                let following = self.next_for(id).await;
                if let Some(shadow) = self.shadows.get_mut(&id) {
                    shadow.job = following.as_ref().map(|p| p.job);
                }
                if let Some(p) = &following {
                    self.placed.insert(p.job, id);
                }
                let _ = next.send(following);
            }
            ShadowEvent::Lost {
                job,
                reason,
                handed_over,
                last_heard,
            } => {
                if self.placed.get(&job) == Some(&id) {
                    self.placed.remove(&job);
                    // A job lost before it was handed over (the claim ended
                    // between two jobs) never ran: nothing to log.
                    let queue = &self.args.queue;
                    let running = queue
                        .job(job)
                        .is_some_and(|ad| starling_queue::status_of(&ad) == Some(2));
                    if !running {
                        tracing::debug!(%job, %reason, "lost before it was claimed; placing it again");
                    } else if !handed_over {
                        tracing::debug!(%job, %reason, "lost before it started; placing it again");
                        if let Err(e) = queue.unclaimed(job).await {
                            tracing::warn!(%job, error = %e, "could not return the job to idle");
                        }
                    } else if let Err(e) = queue.evicted_after(job, &reason, last_heard).await {
                        tracing::warn!(%job, error = %e, "could not return the job to idle");
                    }
                    if self.move_of_shadow(id) == Some(job) {
                        self.give_up_move(job, &format!("the new machine was lost: {reason}"));
                    } else {
                        self.on_left(job);
                    }
                } else if self.move_of_shadow(id) == Some(job) {
                    self.give_up_move(job, &format!("the new machine was lost: {reason}"));
                }
                self.soon(myself);
            }
            ShadowEvent::Unrunnable {
                job,
                code,
                subcode,
                reason,
            } => {
                self.placed.remove(&job);
                if let Err(e) = self.args.queue.held(job, code, subcode, &reason).await {
                    tracing::warn!(%job, error = %e, "could not hold the job");
                }
            }
            ShadowEvent::Checkpointed { job, offer } => {
                let answer = self.record_checkpoint(job, &offer).await;
                let _ = offer.answer.send(answer);
            }
            ShadowEvent::Done { .. } => {
                if let Some(job) = self.move_of_shadow(id) {
                    self.give_up_move(job, "the new machine's claim ended");
                }
                if let Some(shadow) = self.shadows.remove(&id) {
                    if let Some(job) = shadow.job {
                        if self.placed.get(&job) == Some(&id) {
                            self.placed.remove(&job);
                        }
                    }
                }
                self.soon(myself);
            }
        }
    }

    /// Records a checkpoint the job's execute agent took, and has its store
    /// peers drop the one it replaces; the answer goes to that agent.
    async fn record_checkpoint(
        &self,
        job: JobId,
        offer: &crate::transfers::CheckpointOffer,
    ) -> starling_protocol::transfer::Response {
        use crate::submit::checkpoints::{self, Record};
        use starling_protocol::transfer::{ErrorCode, Response, TransferId};
        let refuse = |code, reason: String| Response::Error {
            transfer: TransferId(0),
            code,
            reason,
        };
        let queue = &self.args.queue;
        let me = self.args.key.agent_id();
        let previous = match queue.checkpoint(job).await {
            Some(bytes) => Record::decode(&bytes).ok(),
            None => None,
        };
        let recorded = previous
            .as_ref()
            .and_then(|r| r.manifest().ok())
            .map(|(_, m)| m.sequence);
        let manifest = match checkpoints::accept(&offer.manifest, &offer.peer, &me, job, recorded) {
            Ok(m) => m,
            Err(reason) => {
                tracing::warn!(%job, %reason, "refused a checkpoint");
                return refuse(ErrorCode::BadRequest, reason);
            }
        };
        let restorable = !manifest.replicas.is_empty();
        let record = restorable.then(|| {
            Record {
                manifest: offer.manifest.to_bytes(),
                replicas: manifest.replicas.clone(),
            }
            .encode()
        });
        let figures = starling_queue::Checkpointed {
            sequence: manifest.sequence,
            taken_secs: i64::try_from(manifest.taken_at.as_unix_millis() / 1000)
                .unwrap_or(i64::MAX),
            run_ms: manifest.run_ms,
            bytes: manifest.size(),
            replicas: manifest
                .replicas
                .iter()
                .map(|r| r.machine.clone())
                .collect(),
        };
        if let Err(e) = queue.checkpointed(job, &figures, record).await {
            tracing::warn!(%job, error = %e, "could not record the checkpoint");
            return refuse(ErrorCode::BadRequest, format!("could not record it: {e}"));
        }
        tracing::info!(%job, sequence = manifest.sequence, replicas = manifest.replicas.len(), "recorded the job's checkpoint");
        if restorable {
            let network = self.args.network.clone();
            let key = checkpoints::job_key(&me, job);
            let old = previous.map(|r| r.replicas).unwrap_or_default();
            let (sequence, new) = (manifest.sequence, manifest.replicas.clone());
            tokio::spawn(async move {
                checkpoints::release_older(&network, &key, sequence, &new, &old).await;
            });
        }
        Response::Recorded {
            sequence: manifest.sequence,
        }
    }
}

/// Records the end of a run that came back with a report: held when the
/// report or the pulled output says so, else its exit. `Ok(true)`: the
/// job's eviction transform cured the report's hold (`retry_request_memory`)
/// and it is idle again ([`Queue::held_or_retried`]). A failed `output`
/// holds it with `output_code` (12, or 33 for output over its
/// `MaxTransferOutputMB`).
pub(super) async fn record_end(
    queue: &Queue,
    job: JobId,
    report: &starling_protocol::transfer::Report,
    output: &Result<(), String>,
    output_code: u32,
) -> Result<bool, starling_queue::QueueError> {
    if let Some(hold) = &report.hold {
        return queue
            .held_or_retried(job, hold.code, hold.subcode, &hold.reason)
            .await;
    }
    if let Err(reason) = output {
        let why = format!("Transfer output files failure: {reason}");
        return queue.held(job, output_code, 0, &why).await.map(|()| false);
    }
    let how = Completion {
        exit_code: report.exit_code,
        signal: report.signal,
        user_cpu_ms: report.user_cpu_ms,
        sys_cpu_ms: report.sys_cpu_ms,
        wall_ms: report.wall_ms,
        peak_memory_kib: report.peak_memory_kib,
        disk_usage_kib: report.disk_usage_kib,
    };
    record_exit(queue, job, &how).await.map(|()| false)
}

/// Records `job`'s exit and what its `on_exit_*` policy makes of it:
/// held, back to idle (`max_retries` not reached), or completed.
async fn record_exit(
    queue: &Queue,
    job: JobId,
    how: &Completion,
) -> Result<(), starling_queue::QueueError> {
    if let Err(e) = queue.exited(job, how).await {
        tracing::warn!(%job, error = %e, "could not count the job's exit");
    }
    match queue
        .job(job)
        .map(|ad| job_policy::on_exit(&with_exit(&ad, how), unix_now()))
    {
        Some(OnExit::Hold { subcode, reason }) => {
            queue
                .held(job, job_policy::JOB_POLICY, subcode, &reason)
                .await
        }
        Some(OnExit::Requeue { reason }) => queue.evicted(job, &reason).await,
        _ => {
            tracing::info!(%job, exit_code = ?how.exit_code, signal = ?how.signal, "the job completed");
            queue.completed(job, how).await
        }
    }
}

/// What a run on this machine used and how it ended, as the queue records
/// any run's.
fn completion_of(outcome: &starling_process::Outcome) -> Completion {
    let (exit_code, signal) = match outcome.exit {
        starling_process::Exit::Code(code) => (Some(code), None),
        starling_process::Exit::Signal { signal, .. } => (None, Some(signal)),
        starling_process::Exit::Unknown => (None, None),
    };
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    Completion {
        exit_code,
        signal,
        user_cpu_ms: ms(outcome.user_cpu),
        sys_cpu_ms: ms(outcome.system_cpu),
        wall_ms: ms(outcome.wall),
        peak_memory_kib: outcome.peak_memory_kib,
        disk_usage_kib: None,
    }
}

/// The job ad as its exit left it, for `on_exit_*`.
fn with_exit(ad: &ClassAd, how: &Completion) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut ad = ad.clone();
    let mut set = |name: &str, value: Value| ad.insert(Name::known(name), Expr::Literal(value));
    match (how.exit_code, how.signal) {
        (Some(code), _) => {
            set("ExitCode", Value::Int(i64::from(code)));
            set("ExitBySignal", Value::Bool(false));
        }
        (None, Some(signal)) => {
            set("ExitSignal", Value::Int(i64::from(signal)));
            set("ExitBySignal", Value::Bool(true));
        }
        (None, None) => {}
    }
    ad
}
