//! The job watchdog: a small process the agent starts beside itself, so
//! that no job outlives its claim, even when its agent was killed with
//! SIGKILL. A job whose claim's lease lapsed may already run again
//! elsewhere: were it to finish too, two runs would complete. HTCondor's
//! startd kills a job when its claim's lease runs out in the same way.
//!
//! The agent keeps the write end of a pipe that is the watchdog's
//! standard input; the kernel closes it when the agent ends, however it
//! ends. From then on the watchdog looks after the agent's runs
//! ([`super::runs`]): a job whose lease still holds runs on, for the
//! agent to take on again when it is back (its reaper records how it
//! ends meanwhile); a job whose lease lapses is killed, its reaper first
//! so that no end is recorded for it. Processes of the agent's jobs that
//! belong to no run (the agent died while starting them) are killed at
//! once: every process in the agent's job cgroups that no run names, or,
//! without cgroups, every process that carries the agent's job marker
//! ([`super::family::MARKER_ENV`]). The watchdog leaves when no job of
//! the agent is left, or when the agent's next run retires it
//! ([`retire_previous`]) to look after the jobs itself.
//!
//! It runs in a process group of its own, so a signal to the agent's
//! group (Ctrl-C in a terminal) does not take it first.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::cgroup::Cgroups;
use super::family;
use super::runs::{self, ProcessId, Runs};

/// How often the runs are looked at while the agent is away.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// The file in the runs directory naming the watchdog in charge.
const WATCHDOG_FILE: &str = "watchdog";

/// `starling job-watchdog` (hidden: the agent starts it).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's cgroup name (`starling-<agent id>`).
    #[arg(long)]
    pub cgroups: String,
    /// The agent's pid: its jobs' markers name it.
    #[arg(long)]
    pub agent_pid: u32,
    /// The agent's runs directory.
    #[arg(long)]
    pub runs: Option<PathBuf>,
}

/// Starts the watchdog of this agent; keep the child (its stdin) for as
/// long as the agent runs.
pub fn start(cgroups: &str, runs: Option<&Runs>) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    let exe = std::env::current_exe()?;
    let mut command = Command::new(exe);
    command.args([
        "job-watchdog",
        "--cgroups",
        cgroups,
        "--agent-pid",
        &std::process::id().to_string(),
    ]);
    if let Some(runs) = runs {
        command.arg("--runs").arg(runs.dir());
    }
    let child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()?;
    if let (Some(runs), Some(me)) = (runs, ProcessId::of(child.id())) {
        let _ = std::fs::write(
            runs.dir().join(WATCHDOG_FILE),
            format!("{} {}\n", me.pid, me.started),
        );
    }
    Ok(child)
}

/// Kills the watchdog of the agent's previous run, if it still looks
/// after jobs: the agent starting now takes them on.
pub fn retire_previous(runs: &Runs) {
    let Ok(text) = std::fs::read_to_string(runs.dir().join(WATCHDOG_FILE)) else {
        return;
    };
    let mut words = text.split_whitespace();
    let (Some(pid), Some(started)) = (
        words.next().and_then(|w| w.parse().ok()),
        words.next().and_then(|w| w.parse().ok()),
    ) else {
        return;
    };
    let previous = ProcessId { pid, started };
    if previous.alive() {
        previous.kill();
        // Gone before this agent looks at the runs.
        for _ in 0..100 {
            if !previous.alive() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Waits for the agent to end, then looks after its jobs.
pub fn run(args: &Args) -> std::process::ExitCode {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    // Nothing is ever written: a read returns only at the agent's end.
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    let runs = args.runs.as_deref().and_then(|d| Runs::open(d).ok());
    // A run without a record was being started when the agent died:
    // nobody could take it on, so its job goes now.
    let names: Vec<String> = runs
        .as_ref()
        .map(|r| {
            r.list()
                .into_values()
                .filter(|f| f.record.is_some())
                .map(|f| f.name)
                .collect()
        })
        .unwrap_or_default();
    let killed = end_strays(&args.cgroups, args.agent_pid, &names);
    if killed > 0 {
        eprintln!(
            "starling job-watchdog: agent {} ended; ended {killed} of its jobs that had not started",
            args.agent_pid
        );
    }
    if let Some(runs) = runs {
        look_after(&runs, args.agent_pid);
    }
    std::process::ExitCode::SUCCESS
}

/// Kills each run as its lease lapses, until none is left running.
fn look_after(runs: &Runs, agent_pid: u32) {
    loop {
        let mut running = 0;
        for found in runs.list().values() {
            let (Some(_), Some(pids)) = (&found.record, &found.pids) else {
                continue;
            };
            if !pids.reaper.alive() {
                continue;
            }
            if found.lease.as_ref().is_none_or(runs::Lease::lapsed) {
                eprintln!(
                    "starling job-watchdog: the lease of job {} (agent {agent_pid}) lapsed; killing it",
                    found.name
                );
                runs::kill(found);
            } else {
                running += 1;
            }
        }
        if running == 0 {
            return;
        }
        std::thread::sleep(LOOK_EVERY);
    }
}

/// Kills the processes of the agent (cgroups `name`, pid `agent_pid`)
/// that belong to no run in `runs`; returns how many job groups or
/// processes went.
fn end_strays(name: &str, agent_pid: u32, runs: &[String]) -> usize {
    let keep: Vec<&str> = runs.iter().map(String::as_str).collect();
    let mut ended = 0;
    for cgroups in Cgroups::existing(name) {
        ended += cgroups.sweep_except(&keep);
    }
    // Jobs tracked without cgroups carry `_STARLING_JOB=<sandbox>.<agent pid>.<n>`.
    let needle = format!(".{agent_pid}.");
    let marked = family::processes_marked(|tag| {
        tag.windows(needle.len()).any(|w| w == needle.as_bytes())
            && !keep.iter().any(|run| tag.starts_with(run.as_bytes()))
    });
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
