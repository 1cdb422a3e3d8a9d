//! Running one job's process on the execute agent, as HTCondor's starter
//! does: in a sandbox directory, with its standard streams in files, in a
//! process group of its own (so that suspending, vacating and killing reach
//! everything it started), within the memory it asked for, and with an
//! account of how it ended.
//!
//! - [`sandbox`]: the job's scratch directory and which files go back.
//! - [`files`]: listing files to offer and assembling pulled ones.
//! - [`job`]: the argv and environment a job ad asks for.
//!
//! Memory is enforced by watching the resident memory of the job's process
//! group every [`MEMORY_POLL`]: a job over its request is killed and its
//! [`Outcome`] says so, which the agent turns into a hold (code 34), as
//! HTCondor does. The job runs as the agent's own user, or as the
//! configured [`account::Account`] when the agent runs as root.

pub mod account;
pub mod files;
pub mod job;
pub mod sandbox;

use std::fmt;
use std::io;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use starling_protocol::transfer::{Hold, Report};
use tokio::sync::oneshot;

pub use sandbox::Sandbox;

/// How often a running job's memory is measured.
pub const MEMORY_POLL: Duration = Duration::from_millis(500);

/// The `PATH` a job gets unless its environment sets one.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// HTCondor's hold reason codes (`HoldReasonCode`) that running a job can
/// lead to, with HTCondor's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldCode {
    /// The process could not be started (missing executable, not
    /// executable, no such interpreter).
    FailedToCreateProcess = 6,
    /// A standard stream file could not be opened.
    UnableToOpenOutput = 7,
    UnableToOpenInput = 8,
    /// The output could not be sent back.
    TransferOutputError = 12,
    /// The input could not be fetched.
    TransferInputError = 13,
    /// The job used more memory than it asked for.
    JobOutOfResources = 34,
}

impl HoldCode {
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    pub executable: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: Option<PathBuf>,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    pub cwd: PathBuf,
    pub request_cpus: u32,
    pub request_memory_mib: u64,
    pub request_disk_kib: u64,
    /// Run as this user instead of the agent's.
    pub account: Option<account::Account>,
}

impl Spec {
    /// `executable` in `sandbox`, its streams in the sandbox's files, with
    /// one cpu and 128 MiB until told otherwise.
    pub fn new(sandbox: &Sandbox, executable: PathBuf) -> Spec {
        Spec {
            executable,
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            stdout: sandbox.stdout(),
            stderr: sandbox.stderr(),
            cwd: sandbox.path().to_path_buf(),
            request_cpus: 1,
            request_memory_mib: 128,
            request_disk_kib: 1024,
            account: None,
        }
    }
}

/// Why a job's process did not start.
#[derive(Debug)]
pub struct StartError {
    code: HoldCode,
    errno: i32,
    message: String,
}

impl StartError {
    pub fn hold_code(&self) -> HoldCode {
        self.code
    }

    /// The OS error number, as HTCondor's `HoldReasonSubCode`.
    pub fn hold_subcode(&self) -> i32 {
        self.errno
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StartError {}

fn start_error(code: HoldCode, what: String, e: &io::Error) -> StartError {
    StartError {
        code,
        errno: e.raw_os_error().unwrap_or(0),
        message: format!("Error from starter: {what}: {e}"),
    }
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal { signal: i32, core_dumped: bool },
    Unknown,
}

/// A job's end and what it used.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub user_cpu: Duration,
    pub system_cpu: Duration,
    pub wall: Duration,
    pub peak_memory_kib: u64,
    /// It was killed for using more memory than `limit_mib`.
    pub memory_exceeded: bool,
    pub limit_mib: u64,
}

impl Outcome {
    /// The hold this end calls for, if any: (code, subcode, reason).
    pub fn hold(&self) -> Option<(HoldCode, i32, String)> {
        self.memory_exceeded.then(|| {
            (
                HoldCode::JobOutOfResources,
                0,
                format!(
                    "Error from starter: Job has gone over memory limit of {} megabytes. \
                     Peak usage: {} megabytes.",
                    self.limit_mib,
                    self.peak_memory_kib.div_ceil(1024)
                ),
            )
        })
    }

    /// The report for the submit agent.
    pub fn report(&self) -> Report {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let (exit_code, signal) = match self.exit {
            Exit::Code(c) => (Some(c), None),
            Exit::Signal { signal, .. } => (None, Some(signal)),
            Exit::Unknown => (None, None),
        };
        let mut report = Report::default();
        report.exit_code = exit_code;
        report.signal = signal;
        report.user_cpu_ms = millis(self.user_cpu);
        report.sys_cpu_ms = millis(self.system_cpu);
        report.wall_ms = millis(self.wall);
        report.peak_memory_kib = self.peak_memory_kib;
        report.hold = self
            .hold()
            .map(|(code, subcode, reason)| Hold::new(code.code(), subcode, reason));
        report
    }
}

/// A job's process, running. Dropping it kills the process group.
#[derive(Debug)]
pub struct Running {
    pub pid: u32,
    ended: Option<oneshot::Receiver<Outcome>>,
    outcome: Option<Outcome>,
    peak_kib: Arc<AtomicU64>,
    finished: Arc<AtomicBool>,
}

/// Starts the job's process.
pub async fn start(spec: Spec) -> Result<Running, StartError> {
    tokio::task::spawn_blocking(move || start_blocking(spec))
        .await
        .map_err(|e| StartError {
            code: HoldCode::FailedToCreateProcess,
            errno: 0,
            message: format!("Error from starter: {e}"),
        })?
}

fn open_stream(path: &PathBuf, write: bool) -> Result<std::fs::File, StartError> {
    let opened = if write {
        std::fs::File::create(path)
    } else {
        std::fs::File::open(path)
    };
    opened.map_err(|e| {
        let code = if write {
            HoldCode::UnableToOpenOutput
        } else {
            HoldCode::UnableToOpenInput
        };
        start_error(code, format!("cannot open {}", path.display()), &e)
    })
}

/// How often a start that finds its executable busy is tried, and how long
/// is waited between tries (growing).
const BUSY_TEXT_TRIES: u32 = 8;
const BUSY_TEXT_WAIT: Duration = Duration::from_millis(10);

/// Spawns `command`, trying again while exec says the executable is busy
/// (ETXTBSY). That happens when another thread of this agent forks while
/// it still holds the just-written executable open for writing (a transfer
/// of another job's files): the forked child keeps that descriptor until
/// its own exec, a few milliseconds. It is no fault of the job's.
fn spawn_retrying_busy_text(command: &mut Command) -> std::io::Result<std::process::Child> {
    let mut wait = BUSY_TEXT_WAIT;
    for _ in 1..BUSY_TEXT_TRIES {
        match command.spawn() {
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::TXTBSY.raw_os_error()) => {
                tracing::debug!(?wait, "the executable is busy; trying again");
                std::thread::sleep(wait);
                wait = wait.saturating_mul(2);
            }
            other => return other,
        }
    }
    command.spawn()
}

fn start_blocking(spec: Spec) -> Result<Running, StartError> {
    let stdin = match &spec.stdin {
        Some(path) => Stdio::from(open_stream(path, false)?),
        None => Stdio::null(),
    };
    let stdout = open_stream(&spec.stdout, true)?;
    let stderr = open_stream(&spec.stderr, true)?;
    let mut command = Command::new(&spec.executable);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .env("PATH", DEFAULT_PATH)
        .env("_CONDOR_SCRATCH_DIR", &spec.cwd)
        .env("TMPDIR", &spec.cwd)
        .env("OMP_NUM_THREADS", spec.request_cpus.to_string())
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    if let Some(account) = &spec.account {
        // std drops the supplementary groups when it sets the uid.
        command
            .uid(account.uid)
            .gid(account.gid)
            .env("USER", &account.name);
    }
    let started = Instant::now();
    let mut child = spawn_retrying_busy_text(&mut command).map_err(|e| {
        start_error(
            HoldCode::FailedToCreateProcess,
            format!("failed to execute '{}'", spec.executable.display()),
            &e,
        )
    })?;
    let pid = child.id();
    if let Some(p) = Pid::from_raw(pid as i32) {
        // No core files filling the sandbox.
        let _ = rustix::process::prlimit(
            Some(p),
            rustix::process::Resource::Core,
            rustix::process::Rlimit {
                current: Some(0),
                maximum: Some(0),
            },
        );
    }
    let peak_kib = Arc::new(AtomicU64::new(0));
    let finished = Arc::new(AtomicBool::new(false));
    let exceeded = Arc::new(AtomicBool::new(false));
    let limit_kib = spec.request_memory_mib.saturating_mul(1024);
    spawn_memory_watch(
        pid,
        limit_kib,
        peak_kib.clone(),
        finished.clone(),
        exceeded.clone(),
    );
    let (tx, rx) = oneshot::channel();
    let peak = peak_kib.clone();
    let done = finished.clone();
    let limit_mib = spec.request_memory_mib;
    std::thread::Builder::new()
        .name(format!("job-{pid}"))
        .spawn(move || {
            // Wait without reaping, so the zombie's CPU times can be read.
            let (user_cpu, system_cpu) = match Pid::from_raw(pid as i32) {
                Some(p) => {
                    let _ = rustix::process::waitid(
                        rustix::process::WaitId::Pid(p),
                        rustix::process::WaitIdOptions::EXITED
                            | rustix::process::WaitIdOptions::NOWAIT,
                    );
                    cpu_times(pid).unwrap_or_default()
                }
                None => (Duration::ZERO, Duration::ZERO),
            };
            let status = child.wait();
            done.store(true, Ordering::SeqCst);
            let exit = match status {
                Ok(s) => match (s.code(), s.signal()) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(signal)) => Exit::Signal {
                        signal,
                        core_dumped: s.core_dumped(),
                    },
                    _ => Exit::Unknown,
                },
                Err(_) => Exit::Unknown,
            };
            // Leftovers of the job (daemons it started) go with it.
            if let Some(p) = Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process_group(p, Signal::KILL);
            }
            let _ = tx.send(Outcome {
                exit,
                user_cpu,
                system_cpu,
                wall: started.elapsed(),
                peak_memory_kib: peak.load(Ordering::SeqCst),
                memory_exceeded: exceeded.load(Ordering::SeqCst),
                limit_mib,
            });
        })
        .map_err(|e| start_error(HoldCode::FailedToCreateProcess, "no thread".into(), &e))?;
    Ok(Running {
        pid,
        ended: Some(rx),
        outcome: None,
        peak_kib,
        finished,
    })
}

/// Measures the group's memory until the job ends; kills it past the limit.
fn spawn_memory_watch(
    pid: u32,
    limit_kib: u64,
    peak: Arc<AtomicU64>,
    finished: Arc<AtomicBool>,
    exceeded: Arc<AtomicBool>,
) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(MEMORY_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if finished.load(Ordering::SeqCst) {
                break;
            }
            let rss = tokio::task::spawn_blocking(move || group_rss_kib(pid))
                .await
                .unwrap_or(0);
            peak.fetch_max(rss, Ordering::SeqCst);
            if limit_kib > 0 && rss > limit_kib {
                exceeded.store(true, Ordering::SeqCst);
                if let Some(p) = Pid::from_raw(pid as i32) {
                    let _ = rustix::process::kill_process_group(p, Signal::KILL);
                }
                break;
            }
        }
    });
}

/// Resident memory of every process in group `pgid`, in KiB.
fn group_rss_kib(pgid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let page_kib = rustix::param::page_size() as u64 / 1024;
    let mut total = 0;
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Some(fields) = stat_fields(pid) else {
            continue;
        };
        // Fields after the command: state(0) ppid(1) pgrp(2) ... rss(21).
        if fields.get(2).and_then(|f| f.parse::<u32>().ok()) == Some(pgid) {
            total += fields
                .get(21)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
                * page_kib;
        }
    }
    total
}

/// The fields of `/proc/PID/stat` after the command name.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// User and system CPU of a process and its reaped children.
fn cpu_times(pid: u32) -> Option<(Duration, Duration)> {
    let fields = stat_fields(pid)?;
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    let get = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime(11) stime(12) cutime(13) cstime(14), counted from state.
    let user = (get(11) + get(13)) as f64 / ticks;
    let system = (get(12) + get(14)) as f64 / ticks;
    Some((
        Duration::from_secs_f64(user),
        Duration::from_secs_f64(system),
    ))
}

impl Running {
    fn signal(&self, signal: Signal) -> io::Result<()> {
        if self.finished.load(Ordering::SeqCst) {
            return Ok(());
        }
        let pid = Pid::from_raw(self.pid as i32)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "pid 0"))?;
        rustix::process::kill_process_group(pid, signal).map_err(io::Error::from)
    }

    /// Stops the whole job (SIGSTOP).
    pub fn suspend(&self) -> io::Result<()> {
        self.signal(Signal::STOP)
    }

    /// Lets it go on (SIGCONT).
    pub fn resume(&self) -> io::Result<()> {
        self.signal(Signal::CONT)
    }

    /// The peak resident memory so far, in KiB.
    pub fn peak_memory_kib(&self) -> u64 {
        self.peak_kib.load(Ordering::SeqCst)
    }

    /// Asks the job to leave: SIGTERM, and SIGCONT in case it is stopped
    /// (a stopped process would not see the SIGTERM until continued).
    pub fn ask_to_leave(&self) {
        let _ = self.signal(Signal::TERM);
        let _ = self.signal(Signal::CONT);
    }

    /// Asks the job to leave, then kills it after `grace`.
    pub async fn terminate(&mut self, grace: Duration) {
        self.ask_to_leave();
        if tokio::time::timeout(grace, self.wait()).await.is_err() {
            self.kill();
            let _ = self.wait().await;
        }
    }

    /// Kills the whole job now (SIGKILL).
    pub fn kill(&mut self) {
        let _ = self.signal(Signal::KILL);
    }

    /// Waits for the job to end. Cancel-safe: a dropped wait loses nothing,
    /// and waiting again after the end returns the same outcome.
    pub async fn wait(&mut self) -> Outcome {
        if let Some(outcome) = &self.outcome {
            return outcome.clone();
        }
        let unknown = Outcome {
            exit: Exit::Unknown,
            user_cpu: Duration::ZERO,
            system_cpu: Duration::ZERO,
            wall: Duration::ZERO,
            peak_memory_kib: 0,
            memory_exceeded: false,
            limit_mib: 0,
        };
        let outcome = match self.ended.as_mut() {
            Some(rx) => rx.await.unwrap_or(unknown),
            None => unknown,
        };
        self.ended = None;
        self.outcome = Some(outcome.clone());
        outcome
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests;
