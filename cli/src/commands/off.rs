//! `starling off` (like `condor_off`) and `starling whoami`: stop the
//! addressed agent cleanly, and say who and where it is.
//!
//! `off` with no option stops the agent at once: running jobs go on under
//! their reapers, and the agent finds them again when it starts (nothing
//! is lost or run twice). `-graceful` first drains the machine as
//! `starling drain -graceful` does (no new jobs; running ones leave after
//! their `MaxJobRetirementTime`), `-fast` as `drain -fast` (killed now,
//! back to idle at their submitters); either waits, at most `-timeout`
//! seconds, until no job runs, and then stops the agent. The command
//! returns once the agent has exited.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use starling_control::{DrainHow, Request, Response};

/// `starling off` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct OffArgs {
    /// Drain first: running jobs leave after their MaxJobRetirementTime.
    #[arg(long, group = "how")]
    graceful: bool,
    /// Drain first: running jobs are killed now and go back to idle.
    #[arg(long, group = "how")]
    fast: bool,
    /// How long to wait for the jobs to leave, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    timeout: u64,
}

/// `starling whoami` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct WhoamiArgs {
    /// Print it as JSON.
    #[arg(long)]
    json: bool,
}

/// How long the agent may take to exit once told to.
const EXIT_WAIT: Duration = Duration::from_secs(60);

pub(super) fn off(args: OffArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let how = if args.fast {
        Some(DrainHow::Fast)
    } else if args.graceful {
        Some(DrainHow::Graceful)
    } else {
        None
    };
    if let Some(how) = how {
        let drain = Request::Drain {
            how,
            reason: Some("the agent is being turned off (starling off)".to_owned()),
            resume_on_completion: false,
            cancel: false,
        };
        let deadline = Instant::now() + Duration::from_secs(args.timeout);
        loop {
            let Response::Drain(status) = super::jobs::call(data_dir, &drain)? else {
                anyhow::bail!("the agent did not answer the drain");
            };
            if status.jobs == 0 {
                break;
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "{} still running after {} s; the agent keeps running (drained: it takes no \
                 new jobs). Run `starling off -fast` to kill them, or `starling drain -cancel` \
                 to take jobs again",
                match status.jobs {
                    1 => "1 job".to_owned(),
                    n => format!("{n} jobs"),
                },
                args.timeout
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    let info = info(data_dir)?;
    super::jobs::call(data_dir, &Request::Shutdown)?;
    let proc = format!("/proc/{}", info.pid);
    let deadline = Instant::now() + EXIT_WAIT;
    while Path::new(&proc).exists() && super::jobs::call(data_dir, &Request::Info).is_ok() {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the agent (pid {}) was told to stop but still runs after {} s",
            info.pid,
            EXIT_WAIT.as_secs()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("Agent {} (pid {}) has stopped", info.agent_id, info.pid);
    Ok(ExitCode::SUCCESS)
}

fn info(data_dir: Option<&Path>) -> anyhow::Result<starling_control::Info> {
    match super::jobs::call(data_dir, &Request::Info)? {
        Response::Info(info) => Ok(info),
        other => anyhow::bail!("the agent answered {other:?}"),
    }
}

pub(super) fn whoami(args: WhoamiArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let info = info(data_dir)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "agent_id": info.agent_id,
                "domain": info.domain,
                "version": info.version,
                "data_dir": info.data_dir,
                "bootstrap": info.listen,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("agent      {}", info.agent_id);
    println!("domain     {}", info.domain);
    println!("version    {}", info.version);
    println!("data dir   {}", info.data_dir.display());
    if info.listen.is_empty() {
        println!("bootstrap  (not listening yet)");
    }
    for addr in &info.listen {
        println!("bootstrap  {addr}");
    }
    Ok(ExitCode::SUCCESS)
}
