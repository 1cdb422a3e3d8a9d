//! `starling drain`: stop this machine taking jobs, shaped like
//! `condor_drain`. The addressed agent (`--agent DIR`) refuses new claims
//! and makes its running jobs leave: `-graceful` (the default) after their
//! `MaxJobRetirementTime`, `-quick` now with their vacate grace time,
//! `-fast` killed now. Evicted jobs go back to idle at their submitters. The
//! machine shows `Drained` in `status` until `starling drain -cancel`, or
//! until its last job has gone with `-resume-on-completion`.

use std::path::Path;
use std::process::ExitCode;

use starling_control::{DrainHow, DrainStatus, Request, Response, MAX_DRAIN_REASON_LEN};

/// `starling drain` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Let jobs run out their MaxJobRetirementTime, then vacate them (the
    /// default).
    #[arg(long, group = "how")]
    graceful: bool,
    /// Vacate jobs now (SIGTERM, SIGKILL after MachineMaxVacateTime).
    #[arg(long, group = "how")]
    quick: bool,
    /// Kill jobs now.
    #[arg(long, group = "how")]
    fast: bool,
    /// Why, shown in the machine's log and to the evicted jobs.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    /// Take jobs again once the last one has gone.
    #[arg(long = "resume-on-completion")]
    resume_on_completion: bool,
    /// Stop draining: take jobs again.
    #[arg(long, conflicts_with_all = ["graceful", "quick", "fast", "reason", "resume_on_completion"])]
    cancel: bool,
}

pub(super) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    if let Some(reason) = &args.reason {
        anyhow::ensure!(
            reason.len() <= MAX_DRAIN_REASON_LEN,
            "-reason is {} bytes; at most {MAX_DRAIN_REASON_LEN} are accepted",
            reason.len()
        );
    }
    let how = if args.fast {
        DrainHow::Fast
    } else if args.quick {
        DrainHow::Quick
    } else {
        DrainHow::Graceful
    };
    let request = Request::Drain {
        how,
        reason: args.reason,
        resume_on_completion: args.resume_on_completion,
        cancel: args.cancel,
    };
    let response = super::jobs::call(data_dir, &request)?;
    let Response::Drain(status) = response else {
        anyhow::bail!("the agent answered {response:?}");
    };
    println!("{}", describe(&status));
    Ok(ExitCode::SUCCESS)
}

/// One line for a person.
fn describe(status: &DrainStatus) -> String {
    let jobs = match status.jobs {
        1 => "1 job".to_owned(),
        n => format!("{n} jobs"),
    };
    match (&status.how, status.draining) {
        (Some(how), true) => format!("Draining ({how}): {jobs} still running; no new jobs start"),
        _ => format!("Not draining: the machine takes jobs ({jobs} running)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_the_machine_does() {
        let draining = DrainStatus {
            draining: true,
            how: Some("quick".into()),
            reason: None,
            jobs: 1,
        };
        assert_eq!(
            describe(&draining),
            "Draining (quick): 1 job still running; no new jobs start"
        );
        let back = DrainStatus {
            draining: false,
            how: None,
            reason: None,
            jobs: 2,
        };
        assert_eq!(
            describe(&back),
            "Not draining: the machine takes jobs (2 jobs running)"
        );
    }
}
