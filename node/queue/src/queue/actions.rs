//! What a user does to many jobs at once: `rm`, `hold` and `release`
//! ([`Queue::act_as`] of an [`Action`]) and `qedit` ([`Queue::edit_as`]),
//! each one transaction (see the crate docs). It decides every selected
//! job's changes and hands the plan to the queue's `carry_out`; it writes
//! to neither the store nor the cache itself.

use std::sync::Arc;

use starling_policies::control_access::JobAccess;
use starling_protocol::classad::{parse_expr, unparse, ClassAd, Expr, Name, Value};
use starling_storage::{Change, JobId};

use super::{leaving, Event, LogOf, Planned, Queue};
use crate::attributes::{quote, status_of};
use crate::error::QueueError;
use crate::hold_codes;
use crate::selection::Selection;
use crate::status::{self, name_of};
use crate::userlog;

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

/// Longest reason a user may give.
pub const MAX_REASON_LEN: usize = 4096;

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

impl Queue {
    /// Holds, releases or removes the selected jobs.
    pub async fn act(&self, action: &Action, selection: &Selection) -> Result<Acted, QueueError> {
        self.act_as(action, selection, |_, _| JobAccess::Allowed)
            .await
    }

    /// [`Queue::act`] for someone who may change only the jobs `access`
    /// allows: a refused job is skipped with the refusal, an ignored one
    /// left out.
    ///
    /// One transaction (see the crate docs): every job it changes, or
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
}
