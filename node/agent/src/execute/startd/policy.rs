//! The owner policy as the startd applies it every `POLLING_INTERVAL`:
//! each running job's slot goes through HTCondor's state machine
//! (suspend, continue, vacate, kill), a preemption or a drain the same
//! way; and a submitter's `vacate` of its own job.
//!
//! The verdicts and transitions are `starling_policies::owner_policy`'s;
//! this file sends starters their controls and ends no claim itself (the
//! job's end does, in the actor).

use std::time::Duration;

use starling_policies::owner_policy::{self, Action, Activity, DrainHow, SlotState, State};
use starling_protocol::claim::{self, ClaimId};
use starling_protocol::classad::ClassAd;

use super::partitionable::slot_ad;
use super::{unix_now, Held, StartdState};
use crate::starter::Control;

impl StartdState {
    /// The claim's submitter asks for its job to leave (`starling vacate`):
    /// as the owner policy vacates a job, now, whatever retirement the
    /// machine would allow and whatever its `WANT_VACATE` (the user asked
    /// for the job's own signal): the job gets its `KillSig`, the
    /// machine's `MachineMaxVacateTime` to go, and is then killed; it is
    /// reported evicted for `reason`, and the claim ends with it. A job
    /// already leaving is left to it.
    pub(super) async fn vacate_for_submitter(
        &mut self,
        claim: ClaimId,
        reason: String,
    ) -> claim::Response {
        let running = self
            .claims
            .get(&claim)
            .and_then(|h| h.job.as_ref())
            .is_some_and(|j| !j.handle.is_done());
        if !running {
            return claim::Response::Vacating {
                claim,
                running: false,
            };
        }
        let machine = self.args.pool.machine_ad().await;
        let now = unix_now();
        let Some(held) = self.claims.get_mut(&claim) else {
            return claim::Response::UnknownClaim { claim };
        };
        let Some(job) = &held.job else {
            return claim::Response::Vacating {
                claim,
                running: false,
            };
        };
        let slot = machine.map_or_else(ClassAd::new, |m| policy_ad(&m, held));
        let mut verdicts = owner_policy::must_leave(
            owner_policy::evaluate(&slot, Some(&job.ad), now),
            Some(DrainHow::Quick),
        );
        verdicts.want_vacate = true;
        let (next, action) = owner_policy::step(&held.policy, &verdicts, now);
        held.policy = next;
        held.evicting = true;
        if action == Action::Vacate {
            tracing::info!(%claim, %reason, grace = verdicts.machine_max_vacate_time, "vacating the job as its submitter asks");
            job.handle.send(Control::Vacate {
                grace: Duration::from_secs(
                    u64::try_from(verdicts.machine_max_vacate_time).unwrap_or(0),
                ),
                reason,
            });
        } else if action == Action::Kill {
            // The machine's KILL holds already.
            job.handle.send(Control::Kill { reason });
        }
        self.advertise();
        claim::Response::Vacating {
            claim,
            running: true,
        }
    }

    /// One polling step of the owner policy: the machine's state, then each
    /// running job's slot (HTCondor's startd evaluates its policy the same
    /// way, every `POLLING_INTERVAL`).
    pub(super) async fn apply_policy(&mut self) {
        let Some(machine) = self.args.pool.machine_ad().await else {
            return;
        };
        self.set_totals(&machine);
        let now = unix_now();
        if self.claims.is_empty() && self.drain.as_ref().is_some_and(|d| d.resume_on_completion) {
            tracing::info!("drained: taking claims again");
            self.drain = None;
        }
        let drain_how = self.drain.as_ref().map(|d| d.how);
        let machine_state =
            owner_policy::machine_state(&machine, self.claims.len(), self.drain.is_some(), now);
        let mut changed = machine_state != self.machine_state;
        self.machine_state = machine_state;
        let mut reclaimed = Vec::new();
        for (claim, held) in &mut self.claims {
            let Some(job) = &held.job else { continue };
            let slot = policy_ad(&machine, held);
            let mut verdicts = owner_policy::evaluate(&slot, Some(&job.ad), now);
            // A preemption for a waiting job or a drain goes through the
            // same states (retirement, then vacate or kill) as the owner's
            // PREEMPT.
            if held.preempted_for.is_some() {
                let drain = if held.drained { drain_how } else { None };
                verdicts = owner_policy::must_leave(verdicts, drain);
            }
            let (next, action) = owner_policy::step(&held.policy, &verdicts, now);
            if next != held.policy {
                tracing::info!(
                    %claim,
                    from = held.policy.activity.name(),
                    to = next.activity.name(),
                    state = next.state.name(),
                    "owner policy"
                );
                changed = true;
            }
            held.policy = next;
            let why = |what: &str| format!("the machine's owner policy {what} the job");
            match action {
                Action::None => {}
                Action::Suspend => job.handle.send(Control::Suspend),
                Action::Continue => job.handle.send(Control::Continue),
                Action::Vacate => {
                    held.evicting = true;
                    if held.preempted_for.is_none() {
                        reclaimed.push(*claim);
                    }
                    job.handle.send(Control::Vacate {
                        grace: Duration::from_secs(
                            u64::try_from(verdicts.machine_max_vacate_time).unwrap_or(0),
                        ),
                        reason: held
                            .preempted_for
                            .clone()
                            .unwrap_or_else(|| why("preempted (PREEMPT became true)")),
                    });
                }
                Action::Kill => {
                    held.evicting = true;
                    job.handle.send(Control::Kill {
                        reason: held.preempted_for.clone().unwrap_or_else(|| {
                            why("killed (KILL became true or it outlived MachineMaxVacateTime)")
                        }),
                    });
                }
            }
        }
        if changed {
            self.advertise();
        }
        self.consider_moves(&machine, reclaimed).await;
    }
}

/// A claimed slot with no job yet.
pub(super) fn idle_slot(now: i64) -> SlotState {
    SlotState {
        state: State::Claimed,
        activity: Activity::Idle,
        entered_state: now,
        entered_activity: now,
        job_started: now,
    }
}

/// What the owner policy sees as MY: the live machine ad narrowed to the
/// claim's slot, with the slot's State, Activity and their entry times
/// (`PREEMPT = Activity == "Suspended" && MyCurrentTime -
/// EnteredCurrentActivity > 600`), and `JobStart`.
fn policy_ad(machine: &ClassAd, held: &Held) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut ad = slot_ad(machine, &held.slot, &held.resources, &held.gpus);
    let text = |s: &str| Expr::Literal(Value::String(s.into()));
    let int = |i: i64| Expr::Literal(Value::Int(i));
    ad.insert(Name::known("State"), text(held.policy.state.name()));
    ad.insert(Name::known("Activity"), text(held.policy.activity.name()));
    ad.insert(
        Name::known("EnteredCurrentState"),
        int(held.policy.entered_state),
    );
    ad.insert(
        Name::known("EnteredCurrentActivity"),
        int(held.policy.entered_activity),
    );
    ad.insert(Name::known("JobStart"), int(held.policy.job_started));
    ad
}
