//! The job watchdog: a small process the agent starts beside itself, so
//! that no job outlives its agent, even one killed with SIGKILL. A job
//! that ran on while its agent was down would finish with nobody to hear
//! of it, and its submitter would run it again elsewhere: two runs would
//! complete. HTCondor's starter dies with the claim in the same way.
//!
//! The agent keeps the write end of a pipe that is the watchdog's
//! standard input; the kernel closes it when the agent ends, however it
//! ends. The watchdog then kills every process in the agent's job cgroups
//! and removes them, or, without cgroups, every process that carries the
//! agent's job marker ([`super::family::MARKER_ENV`]). It runs in a
//! process group of its own, so a signal to the agent's group (Ctrl-C in
//! a terminal) does not take it first.

use std::io::Read as _;
use std::process::{Child, Command, Stdio};

use super::cgroup::Cgroups;
use super::family;

/// `starling job-watchdog` (hidden: the agent starts it).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's cgroup name (`starling-<agent id>`).
    #[arg(long)]
    pub cgroups: String,
    /// The agent's pid: its jobs' markers name it.
    #[arg(long)]
    pub agent_pid: u32,
}

/// Starts the watchdog of this agent; keep the child (its stdin) for as
/// long as the agent runs.
pub fn start(cgroups: &str) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    let exe = std::env::current_exe()?;
    Command::new(exe)
        .args([
            "job-watchdog",
            "--cgroups",
            cgroups,
            "--agent-pid",
            &std::process::id().to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
}

/// Waits for the agent to end, then ends its jobs.
pub fn run(args: &Args) -> std::process::ExitCode {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    // Nothing is ever written: a read returns only at the agent's end.
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    let killed = end_jobs(&args.cgroups, args.agent_pid);
    if killed > 0 {
        eprintln!(
            "starling job-watchdog: agent {} ended; ended {killed} of its jobs",
            args.agent_pid
        );
    }
    std::process::ExitCode::SUCCESS
}

/// Kills the jobs of the agent whose cgroups are `name` and whose pid is
/// `agent_pid`; returns how many job groups or processes went.
fn end_jobs(name: &str, agent_pid: u32) -> usize {
    let mut ended = 0;
    for cgroups in Cgroups::existing(name) {
        ended += cgroups.sweep();
    }
    // Jobs tracked without cgroups carry `_STARLING_JOB=<sandbox>.<agent pid>.<n>`.
    let needle = format!(".{agent_pid}.");
    let marked =
        family::processes_marked(|tag| tag.windows(needle.len()).any(|w| w == needle.as_bytes()));
    for pid in marked
        .into_iter()
        .filter_map(rustix::process::Pid::from_raw)
    {
        if rustix::process::kill_process(pid, rustix::process::Signal::KILL).is_ok() {
            ended += 1;
        }
    }
    ended
}
