//! What a job ad asks to run with: its argv (`Arguments`, else the
//! old-syntax `Args`), environment (`Environment`, else the old-syntax
//! `Env`), and the signal it is asked to leave with (`KillSig`).

use rustix::process::Signal;
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use starling_protocol::submit::{args, kill_sig};

fn text(job: &ClassAd, name: &str) -> Option<String> {
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The job's arguments.
pub fn arguments(job: &ClassAd) -> Result<Vec<String>, String> {
    if let Some(new) = text(job, "Arguments") {
        return args::split_stored(&new).map_err(|e| format!("Arguments: {e}"));
    }
    Ok(text(job, "Args")
        .map(|old| args::split_old_args(&old))
        .unwrap_or_default())
}

/// The job's environment.
pub fn environment(job: &ClassAd) -> Result<Vec<(String, String)>, String> {
    if let Some(new) = text(job, "Environment") {
        return args::split_stored(&new)
            .and_then(args::env_pairs)
            .map_err(|e| format!("Environment: {e}"));
    }
    match text(job, "Env") {
        Some(old) => args::split_old_env(&old).map_err(|e| format!("Env: {e}")),
        None => Ok(Vec::new()),
    }
}

/// The signal the job is asked to leave with: its `KillSig` (a name such as
/// `"SIGUSR1"`, or a number), read as `kill_sig` is at submit
/// ([`kill_sig::parse`]); SIGTERM when it names none, or one a job could
/// not catch (the ad was edited past the submit's checks).
pub fn kill_signal(job: &ClassAd) -> Signal {
    let named = match Evaluator::with_ads(Some(job), None)
        .eval_attr(Side::My, Name::known("KillSig").folded())
    {
        Value::String(s) => Some(s.to_string()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    };
    let Some(named) = named else {
        return Signal::TERM;
    };
    match kill_sig::parse(&named).map(signal_named) {
        Ok(Some(signal)) => signal,
        _ => {
            tracing::warn!(kill_sig = %named, "the job's KillSig is not a signal it can catch; sending SIGTERM");
            Signal::TERM
        }
    }
}

/// This machine's signal for a name of [`kill_sig::CATCHABLE`].
fn signal_named(name: &str) -> Option<Signal> {
    Some(match name {
        "SIGHUP" => Signal::HUP,
        "SIGINT" => Signal::INT,
        "SIGQUIT" => Signal::QUIT,
        "SIGILL" => Signal::ILL,
        "SIGTRAP" => Signal::TRAP,
        "SIGABRT" => Signal::ABORT,
        "SIGBUS" => Signal::BUS,
        "SIGFPE" => Signal::FPE,
        "SIGUSR1" => Signal::USR1,
        "SIGSEGV" => Signal::SEGV,
        "SIGUSR2" => Signal::USR2,
        "SIGPIPE" => Signal::PIPE,
        "SIGALRM" => Signal::ALARM,
        "SIGTERM" => Signal::TERM,
        "SIGSTKFLT" => Signal::STKFLT,
        "SIGCHLD" => Signal::CHILD,
        "SIGCONT" => Signal::CONT,
        "SIGTSTP" => Signal::TSTP,
        "SIGTTIN" => Signal::TTIN,
        "SIGTTOU" => Signal::TTOU,
        "SIGURG" => Signal::URG,
        "SIGXCPU" => Signal::XCPU,
        "SIGXFSZ" => Signal::XFSZ,
        "SIGVTALRM" => Signal::VTALARM,
        "SIGPROF" => Signal::PROF,
        "SIGWINCH" => Signal::WINCH,
        "SIGIO" => Signal::IO,
        "SIGPWR" => Signal::POWER,
        "SIGSYS" => Signal::SYS,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    #[test]
    fn the_kill_signal_is_the_jobs_killsig_else_sigterm() {
        let signal = |ad: &str| kill_signal(&parse_ad(ad).unwrap());
        assert_eq!(signal(r#"[ KillSig = "SIGUSR1" ]"#), Signal::USR1);
        assert_eq!(signal(r#"[ KillSig = "usr2" ]"#), Signal::USR2);
        assert_eq!(signal("[ KillSig = 2 ]"), Signal::INT);
        assert_eq!(signal("[ Cmd = \"/bin/x\" ]"), Signal::TERM);
        // Past the submit's checks (an edited ad): never an uncatchable one.
        assert_eq!(signal(r#"[ KillSig = "SIGKILL" ]"#), Signal::TERM);
        assert_eq!(signal(r#"[ KillSig = "BOGUS" ]"#), Signal::TERM);
        // Every name the submit accepts is a signal here.
        for (name, number) in kill_sig::CATCHABLE {
            let signal = signal_named(name).unwrap();
            assert_eq!(signal.as_raw(), *number, "{name}");
        }
    }
}
