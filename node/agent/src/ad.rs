//! Reading an attribute of a job's or a machine's ad as a plain value:
//! text, an integer, a boolean; `None` when it is absent, of another type,
//! or not a valid name. A leaf every side uses; it may use nothing of the
//! agent.

use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};

/// The string value of `name` in the job ad.
pub fn text(job: &ClassAd, name: &str) -> Option<String> {
    let Ok(name) = Name::new(name) else {
        return None;
    };
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, name.folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The integer value of `name` in the job ad.
pub fn integer(job: &ClassAd, name: &str) -> Option<i64> {
    let name = Name::new(name).ok()?;
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, name.folded()) {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

pub fn boolean(job: &ClassAd, name: &str) -> Option<bool> {
    let name = Name::new(name).ok()?;
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, name.folded()) {
        Value::Bool(b) => Some(b),
        _ => None,
    }
}
