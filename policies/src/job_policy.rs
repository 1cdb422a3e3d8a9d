//! The job's own policy: HTCondor's `periodic_hold`, `periodic_release`,
//! `periodic_remove`, `on_exit_hold` and `on_exit_remove`.
//!
//! The periodic expressions are evaluated on an interval against the job
//! ad (and `CurrentTime`); when several are true, remove wins over hold,
//! and hold over release, as in HTCondor. `periodic_release` applies to
//! held jobs only, the other two to jobs not held. When a job exits,
//! `on_exit_hold` (default false) is checked first, then `on_exit_remove`
//! (default true: the job leaves the queue); a job whose `on_exit_remove`
//! is false runs again. An expression that is UNDEFINED (an attribute it
//! needs is missing) is not true: it never holds, releases or removes a job
//! by accident. Hold reasons follow HTCondor: code 3 (JobPolicy), the
//! subcode and reason from `PeriodicHoldSubCode`/`PeriodicHoldReason` (or
//! `OnExitHold...`) when the job gives them.
//!
//! A running job is also held when it runs longer than its submit file
//! allows ([`over_duration`]): `allowed_job_duration` from the start of
//! its run (transfers included), code 46, and `allowed_execute_duration`
//! from when its program started or last checkpointed, code 47, with
//! HTCondor's reasons.

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{unparse, ClassAd, Evaluator, Expr, Name, Side, Value};

/// HTCondor's hold reason code for a job's own policy.
pub const JOB_POLICY: u32 = 3;

/// HTCondor's hold reason code for a run longer than `AllowedJobDuration`.
pub const JOB_DURATION_EXCEEDED: u32 = 46;

/// HTCondor's hold reason code for a program that ran longer than
/// `AllowedExecuteDuration`.
pub const JOB_EXECUTE_EXCEEDED: u32 = 47;

/// What a periodic check decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Periodic {
    Hold { subcode: i32, reason: String },
    Release { reason: String },
    Remove { reason: String },
}

/// What a job's exit decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnExit {
    /// It leaves the queue, completed.
    Complete,
    /// `on_exit_remove` is false: it runs again.
    Requeue {
        reason: String,
    },
    Hold {
        subcode: i32,
        reason: String,
    },
}

/// The job with `CurrentTime`, which HTCondor's policy expressions use as
/// an attribute (`CurrentTime - EnteredCurrentStatus > 3600`).
fn at(job: &ClassAd, now: i64) -> ClassAd {
    let mut ad = job.clone();
    ad.insert(Name::known("CurrentTime"), Expr::Literal(Value::Int(now)));
    ad
}

fn is_true(job: &ClassAd, attr: &str, now: i64) -> Option<bool> {
    let expr = job.get(attr)?;
    let job = &at(job, now);
    let mut ev = Evaluator::with_ads(Some(job), None).now(now);
    Some(requirement_holds(&ev.eval_on(Side::My, expr)))
}

fn text_of(job: &ClassAd, attr: &str, now: i64) -> Option<String> {
    let mut ev = Evaluator::with_ads(Some(job), None).now(now);
    match ev.eval_attr(Side::My, Name::known(attr).folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn int_of(job: &ClassAd, attr: &str, now: i64) -> Option<i32> {
    let mut ev = Evaluator::with_ads(Some(job), None).now(now);
    match ev.eval_attr(Side::My, Name::known(attr).folded()) {
        Value::Int(i) => i32::try_from(i).ok(),
        _ => None,
    }
}

fn because(job: &ClassAd, attr: &str) -> String {
    let expr = job.get(attr).map(unparse).unwrap_or_default();
    format!("The job attribute {attr} expression '{expr}' evaluated to TRUE")
}

/// The periodic decision for `job` (`held`: its status is Held) at `now`.
pub fn periodic(job: &ClassAd, held: bool, now: i64) -> Option<Periodic> {
    if !held && is_true(job, "PeriodicRemove", now) == Some(true) {
        return Some(Periodic::Remove {
            reason: because(job, "PeriodicRemove"),
        });
    }
    if held {
        if is_true(job, "PeriodicRemove", now) == Some(true) {
            return Some(Periodic::Remove {
                reason: because(job, "PeriodicRemove"),
            });
        }
        if is_true(job, "PeriodicRelease", now) == Some(true) {
            return Some(Periodic::Release {
                reason: because(job, "PeriodicRelease"),
            });
        }
        return None;
    }
    if is_true(job, "PeriodicHold", now) == Some(true) {
        return Some(Periodic::Hold {
            subcode: int_of(job, "PeriodicHoldSubCode", now).unwrap_or(0),
            reason: text_of(job, "PeriodicHoldReason", now)
                .unwrap_or_else(|| because(job, "PeriodicHold")),
        });
    }
    None
}

fn integer(job: &ClassAd, attr: &str, now: i64) -> Option<i64> {
    let mut ev = Evaluator::with_ads(Some(job), None).now(now);
    match ev.eval_attr(Side::My, Name::known(attr).folded()) {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

/// Whether the running `job` has run longer than it is allowed at `now`:
/// HTCondor's hold code and reason. `AllowedJobDuration` counts from the
/// start of the run (`JobCurrentStartDate`), `AllowedExecuteDuration`
/// from when the program started executing or, if later, its last
/// checkpoint (`LastCkptTime`).
pub fn over_duration(job: &ClassAd, now: i64) -> Option<(u32, String)> {
    let started = integer(job, "JobCurrentStartDate", now)?;
    if let Some(allowed) = integer(job, "AllowedJobDuration", now) {
        if now - started >= allowed {
            return Some((
                JOB_DURATION_EXCEEDED,
                format!(
                    "The job exceeded allowed job duration of {}",
                    duration_short(allowed)
                ),
            ));
        }
    }
    let allowed = integer(job, "AllowedExecuteDuration", now)?;
    let executing = integer(job, "JobCurrentStartExecutingDate", now).filter(|e| *e >= started)?;
    let since = integer(job, "LastCkptTime", now).map_or(executing, |c| c.max(executing));
    (now - since > allowed).then(|| {
        (
            JOB_EXECUTE_EXCEEDED,
            format!(
                "The job exceeded allowed execute duration of {}",
                duration_short(allowed)
            ),
        )
    })
}

/// A duration as HTCondor's `format_time_short` writes it: `d+hh:mm:ss`
/// less its leading zeros (`01:00` for a minute, `1:01:40`, `1+00:00:00`).
fn duration_short(secs: i64) -> String {
    let secs = secs.max(0);
    let full = format!(
        "{}+{:02}:{:02}:{:02}",
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60
    );
    let trimmed = full.trim_start_matches(['0', '+']);
    trimmed.strip_prefix(':').unwrap_or(trimmed).to_owned()
}

/// The decision when `job` (with its exit attributes set: `ExitCode`,
/// `ExitBySignal`...) has exited.
pub fn on_exit(job: &ClassAd, now: i64) -> OnExit {
    if is_true(job, "OnExitHold", now) == Some(true) {
        return OnExit::Hold {
            subcode: int_of(job, "OnExitHoldSubCode", now).unwrap_or(0),
            reason: text_of(job, "OnExitHoldReason", now)
                .unwrap_or_else(|| because(job, "OnExitHold")),
        };
    }
    // Default true; only an expression that is *false* keeps the job.
    let expr = job.get("OnExitRemove");
    let keep = expr.is_some_and(|e| {
        let mut ev = Evaluator::with_ads(Some(job), None).now(now);
        matches!(ev.eval_on(Side::My, e), Value::Bool(false))
    });
    if keep {
        OnExit::Requeue {
            reason: format!(
                "The job attribute OnExitRemove expression '{}' evaluated to FALSE",
                expr.map(unparse).unwrap_or_default()
            ),
        }
    } else {
        OnExit::Complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_longer_than_allowed_is_held_with_htcondors_code_and_reason() {
        let job = |extra: &str| {
            starling_protocol::classad::parse_ad(&format!(
                "[ JobCurrentStartDate = 1000; JobCurrentStartExecutingDate = 1010; {extra} ]"
            ))
            .unwrap()
        };
        let execute = job("AllowedExecuteDuration = 60");
        assert_eq!(over_duration(&execute, 1070), None);
        assert_eq!(
            over_duration(&execute, 1071),
            Some((
                JOB_EXECUTE_EXCEEDED,
                "The job exceeded allowed execute duration of 01:00".to_owned()
            ))
        );
        // A checkpoint starts the count again.
        assert_eq!(
            over_duration(
                &job("AllowedExecuteDuration = 60; LastCkptTime = 1050"),
                1071
            ),
            None
        );
        let whole = job("AllowedJobDuration = 3700");
        assert_eq!(
            over_duration(&whole, 4700),
            Some((
                JOB_DURATION_EXCEEDED,
                "The job exceeded allowed job duration of 1:01:40".to_owned()
            ))
        );
        assert_eq!(over_duration(&whole, 4699), None);
        assert_eq!(over_duration(&job(""), 999_999), None);
        assert_eq!(duration_short(86_400), "1+00:00:00");
        assert_eq!(duration_short(5), "00:05");
    }
    use starling_protocol::classad::parse_ad;

    fn job(extra: &str) -> ClassAd {
        parse_ad(&format!(
            "[JobStatus = 2; ExitCode = 3; NumJobStarts = 1; {extra}]"
        ))
        .unwrap()
    }

    #[test]
    fn remove_beats_hold_and_hold_beats_nothing() {
        let j = job("PeriodicHold = true; PeriodicRemove = NumJobStarts > 0");
        assert!(matches!(
            periodic(&j, false, 0),
            Some(Periodic::Remove { .. })
        ));
        let j = job("PeriodicHold = CurrentTime > 100; PeriodicHoldReason = \"too late\"; PeriodicHoldSubCode = 7");
        assert_eq!(periodic(&j, false, 50), None);
        assert_eq!(
            periodic(&j, false, 200),
            Some(Periodic::Hold {
                subcode: 7,
                reason: "too late".into()
            })
        );
    }

    #[test]
    fn release_applies_to_held_jobs_only() {
        let j = job("PeriodicRelease = true; PeriodicHold = false");
        assert_eq!(periodic(&j, false, 0), None);
        assert!(matches!(
            periodic(&j, true, 0),
            Some(Periodic::Release { .. })
        ));
    }

    #[test]
    fn undefined_is_not_true() {
        let j = job("PeriodicHold = NoSuchAttr > 3; PeriodicRemove = NoSuchAttr; OnExitHold = NoSuchAttr == 1; OnExitRemove = NoSuchAttr");
        assert_eq!(periodic(&j, false, 0), None);
        assert_eq!(periodic(&j, true, 0), None);
        assert_eq!(
            on_exit(&j, 0),
            OnExit::Complete,
            "undefined on_exit_remove removes, as by default"
        );
    }

    #[test]
    fn on_exit_hold_wins_and_on_exit_remove_false_requeues() {
        let j = job("OnExitHold = ExitCode != 0; OnExitRemove = false");
        let OnExit::Hold { reason, .. } = on_exit(&j, 0) else {
            panic!()
        };
        assert!(reason.contains("OnExitHold"), "{reason}");
        let j = job("OnExitRemove = ExitCode == 0");
        assert!(matches!(on_exit(&j, 0), OnExit::Requeue { .. }));
        assert_eq!(on_exit(&job(""), 0), OnExit::Complete);
    }
}
