//! What a job ad asks to run with: its argv (`Arguments`, else the
//! old-syntax `Args`) and environment (`Environment`, else the old-syntax
//! `Env`).

use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use starling_protocol::submit::args;

fn text(job: &ClassAd, name: &str) -> Option<String> {
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The job's arguments.
pub fn arguments(job: &ClassAd) -> Result<Vec<String>, String> {
    if let Some(new) = text(job, "Arguments") {
        return args::split_new(&new).map_err(|e| format!("Arguments: {e}"));
    }
    Ok(text(job, "Args")
        .map(|old| args::split_old_args(&old))
        .unwrap_or_default())
}

/// The job's environment.
pub fn environment(job: &ClassAd) -> Result<Vec<(String, String)>, String> {
    if let Some(new) = text(job, "Environment") {
        return args::split_new(&new)
            .and_then(args::env_pairs)
            .map_err(|e| format!("Environment: {e}"));
    }
    match text(job, "Env") {
        Some(old) => args::split_old_env(&old).map_err(|e| format!("Env: {e}")),
        None => Ok(Vec::new()),
    }
}
