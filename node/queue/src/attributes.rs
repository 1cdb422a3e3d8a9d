//! The job attributes the queue names and reads: Starling's own
//! (`Starling*`: the execute agent of a claim, checkpoints, moves, runs
//! on this machine, badput), a string's ClassAd text ([`quote`]), and
//! readers of a job ad's values ([`status_of`], [`recent_moves`], and the
//! crate's `text`, `int` and `real`). Plain functions of a [`ClassAd`]:
//! it changes no job and knows nothing of the queue or its store.

use starling_protocol::classad::{unparse, ClassAd, Evaluator, Expr, Name, Side, Value};

/// The job's `JobStatus`.
pub fn status_of(ad: &ClassAd) -> Option<i64> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known("JobStatus").folded())
    {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

pub(crate) fn text(ad: &ClassAd, name: &str) -> Option<String> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

pub(crate) fn int(ad: &ClassAd, name: &str) -> Option<i64> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::Int(i) => Some(i),
        Value::Real(r) if r.is_finite() => Some(r as i64),
        _ => None,
    }
}

pub(crate) fn real(ad: &ClassAd, name: &str) -> Option<f64> {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::Int(i) => Some(i as f64),
        Value::Real(r) if r.is_finite() => Some(r),
        _ => None,
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
