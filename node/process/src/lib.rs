//! A job as an operating-system process on the execute machine, as
//! HTCondor's starter runs one: in a sandbox directory, with its standard
//! streams in files, as an account that is not the agent's (when the agent
//! is root), with every process it starts tracked and ended with it,
//! within the memory it asked for, and with an account of how it ended.
//!
//! This crate is the code that runs as root and touches the operating
//! system for a job. It has no network and no actors: the agent
//! (`starling-agent`) decides *whether* a job runs; this crate decides
//! nothing about that and only carries it out safely. A security reviewer
//! reads this crate first.
//!
//! # Threat model
//!
//! - **The job is hostile.** It may fork, daemonise, fill memory or disk,
//!   ignore signals, or try to reach the agent's files. It never runs as
//!   root: a root agent runs it as a dedicated slot account
//!   ([`account`]), as `nobody` past the slot accounts, or as its owner
//!   only where `[jobs] run_as_owner` allows a local owner of the agent's
//!   own domain ([`isolation`] decides, refusing root). Its processes are
//!   tracked by cgroup, or without one by process group, environment
//!   marker and account ([`family`]), so all of them end with it. Memory
//!   and sandbox size are enforced ([`MEMORY_POLL`], [`DISK_POLL`]). Its
//!   `/tmp` is private ([`confine`]).
//! - **The submitter is not trusted with the agent's rights.** On the
//!   submit side a root agent opens a job's input, output and log files
//!   with the owner's rights ([`users::Rights`]), so a user cannot make
//!   the agent read `/etc/shadow` or another user's files. Sandbox paths
//!   a job names are confined to its sandbox ([`sandbox`], [`files`]).
//! - **The agent may die at any moment** (`kill -9`, a crash). A job's
//!   parent is its [`reaper`], not the agent, so how it ended is recorded
//!   even then; each run is recorded outside the agent ([`runs`]) with its
//!   lease, and the [`watchdog`] kills a job whose claim's lease lapses
//!   while its agent is away, so no job outlives its claim and at most one
//!   run of a job completes.
//!
//! `unsafe` is denied workspace-wide and allowed only on the calls a
//! child makes between fork and exec (here and in [`confine`]), each with
//! its safety argument beside it.
//!
//! # Modules
//!
//! - [`sandbox`]: the job's scratch directory and which files go back.
//! - [`files`]: listing files to offer and assembling pulled ones.
//! - [`job`]: the argv and environment a job ad asks for.
//! - [`account`]: local accounts, and the dedicated slot accounts jobs run
//!   as when the agent is root.
//! - [`users`]: local users' names, and file access with a job owner's
//!   rights.
//! - [`cgroup`]: the job's control group (v1 or v2): its memory limit, CPU
//!   weight, usage, freezer and kill.
//! - [`family`]: the job's processes, by cgroup or, without one, by
//!   process group, environment marker and dedicated account.
//! - [`confine`]: what the child does before exec (join the cgroup, a
//!   private `/tmp`, drop to the job's account).
//! - [`isolation`]: what the agent found it can do on this machine, the
//!   `[jobs]` configuration, and the account each job runs as.
//! - [`reaper`]: the small process that is the job's parent and records
//!   how it ended, so that an agent that crashed learns it when it is back.
//! - [`runs`]: the record of each run kept outside the agent, its lease
//!   and its status, from which an agent takes its jobs on again.
//! - [`watchdog`]: the process that ends the agent's jobs when the agent
//!   dies and their claims' leases lapse.
//!
//! Memory is enforced by the cgroup's limit where the kernel gives one
//! (the job is held, code 34, when the kernel killed a process of it for
//! memory); elsewhere by measuring the family's resident memory every
//! [`MEMORY_POLL`] and killing it past the request. The sandbox's size is
//! measured every [`DISK_POLL`] (`DiskUsage`), and a job whose sandbox
//! outgrows its `request_disk` (never less than [`DISK_FLOOR_KIB`]) is held
//! the same way.

pub mod account;
pub mod cgroup;
pub mod confine;
pub mod family;
pub mod files;
pub mod isolation;
pub mod job;
pub mod reaper;
pub mod runs;
pub mod sandbox;
pub mod users;
pub mod watchdog;

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

/// This host's name, as a job's records name it (the user log's
/// `<host>`, the machine ad's `Machine`); `localhost` when it has none.
pub fn hostname() -> String {
    let uname = rustix::system::uname();
    let name = uname.nodename().to_string_lossy().into_owned();
    if name.is_empty() {
        "localhost".to_owned()
    } else {
        name
    }
}

/// How often a running job's memory is measured.
pub const MEMORY_POLL: Duration = Duration::from_millis(500);

/// How often a running job's sandbox is measured.
pub const DISK_POLL: Duration = Duration::from_secs(5);

/// The sandbox any job may fill whatever its `request_disk`, in KiB (the
/// same floor as for its input: HTCondor's default request is only the
/// input's size).
pub const DISK_FLOOR_KIB: u64 = 1 << 20;

/// How long the job's leftover processes may take to die at its end.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// How long a reaper may take to say that the job started.
const REAPER_REPORT_WAIT: Duration = Duration::from_secs(30);

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
    /// The sandbox's name: the job's cgroup and marker are named for it.
    pub name: String,
    /// How the job is kept apart from the machine.
    /// Device files hidden from the job (GPUs it was not given), where
    /// [`Isolation::mount_namespace`] allows.
    pub hidden_devices: Vec<PathBuf>,
    pub isolation: Isolation,
    /// Start it through a reaper ([`reaper`]), so that its end is recorded
    /// even if the agent is gone by then; `None`: the agent is its parent
    /// (agents inside one process, tests).
    pub reaper: Option<Reaping>,
    /// Its standard streams, opened already by the caller (a job the submit
    /// agent runs in its owner's directory opens them with the owner's
    /// rights); `None`: `stdin`, `stdout` and `stderr` are opened here.
    pub streams: Option<Streams>,
    /// Kill it past `request_memory` and `request_disk` (measuring `cwd`
    /// as its sandbox). Off for a job run in place in its owner's
    /// directory, which is no sandbox of its own, as HTCondor's local and
    /// scheduler universes enforce no request.
    pub enforce_requests: bool,
}

/// A job's standard streams, open.
#[derive(Debug, Clone)]
pub struct Streams {
    /// `None`: `/dev/null`.
    pub stdin: Option<Arc<std::fs::File>>,
    pub stdout: Arc<std::fs::File>,
    pub stderr: Arc<std::fs::File>,
}

/// How a job is started through its reaper.
#[derive(Debug, Clone)]
pub struct Reaping {
    /// The program whose `job-reaper` subcommand is the reaper (the
    /// agent's own).
    pub program: PathBuf,
    /// The run's directory ([`runs`]): its record is written there before
    /// the reaper starts, and the reaper writes its pids and the job's
    /// status there.
    pub run_dir: PathBuf,
    /// The run's record, but for how its processes are found (filled in
    /// here).
    pub record: Box<runs::Record>,
    /// A descriptor the reaper keeps open while the job lives (the slot
    /// account's lock), so that the account is not handed to another job
    /// while the agent is away.
    pub hold_fd: Option<std::os::fd::RawFd>,
}

/// How jobs are kept apart from the machine and each other, as the agent
/// found it could at start.
#[derive(Debug, Clone, Default)]
pub struct Isolation {
    /// The agent's job cgroups; `None`: tracked without (see [`family`]).
    pub cgroups: Option<Arc<cgroup::Cgroups>>,
    /// Give each job a private `/tmp` and `/var/tmp`.
    pub private_tmp: bool,
    /// Jobs get a mount namespace of their own on request (the agent is
    /// root and the kernel lets it), so devices can be hidden from them.
    pub mount_namespace: bool,
    /// The job's account is its own (a slot account): every process of
    /// that account belongs to the job.
    pub dedicated_account: bool,
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
            name: sandbox
                .path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            hidden_devices: Vec::new(),
            isolation: Isolation::default(),
            reaper: None,
            streams: None,
            enforce_requests: true,
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

/// HTCondor's `HoldReasonSubCode` of a [`HoldCode::JobOutOfResources`]
/// hold for going over the memory limit: what `retry_request_memory`'s
/// eviction transform looks for (`VacateReasonSubCode == 102`).
pub const MEMORY_EXCEEDED: i32 = 102;
/// ... and for going over the disk limit.
pub const DISK_EXCEEDED: i32 = 104;

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
    /// The sandbox's largest size seen, in KiB (`DiskUsage`).
    pub disk_usage_kib: u64,
    /// It was killed for filling more disk than `disk_limit_kib`.
    pub disk_exceeded: bool,
    pub disk_limit_kib: u64,
}

impl Outcome {
    /// The hold this end calls for, if any: (code, subcode, reason).
    pub fn hold(&self) -> Option<(HoldCode, i32, String)> {
        if self.disk_exceeded && !self.memory_exceeded {
            return Some((
                HoldCode::JobOutOfResources,
                DISK_EXCEEDED,
                format!(
                    "Error from starter: Job has gone over disk limit of {} megabytes \
                     (request_disk). Peak usage: {} megabytes.",
                    self.disk_limit_kib.div_ceil(1024),
                    self.disk_usage_kib.div_ceil(1024)
                ),
            ));
        }
        self.memory_exceeded.then(|| {
            (
                HoldCode::JobOutOfResources,
                MEMORY_EXCEEDED,
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
        report.disk_usage_kib = Some(self.disk_usage_kib);
        report.hold = self
            .hold()
            .map(|(code, subcode, reason)| Hold::new(code.code(), subcode, reason));
        report
    }
}

/// A job's process, running. Dropping it kills every process of the job.
#[derive(Debug)]
pub struct Running {
    pub pid: u32,
    /// Its reaper, when it has one.
    pub reaper: Option<runs::ProcessId>,
    /// How its processes are found again.
    pub tracking: runs::Tracking,
    ended: Option<oneshot::Receiver<Outcome>>,
    outcome: Option<Outcome>,
    peak_kib: Arc<AtomicU64>,
    finished: Arc<AtomicBool>,
    family: Arc<family::Family>,
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

/// Opens a standard stream of the job. Its sandbox may be the job
/// account's already, so nothing found there is trusted: an output is made
/// anew (whatever link or file held its name is removed first, and none
/// is followed), and the input is opened with the account's own rights.
fn open_stream(
    path: &PathBuf,
    write: bool,
    account: Option<&account::Account>,
) -> Result<std::fs::File, StartError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    let opened = if write {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(nofollow)
                .open(path)
        })
        .and_then(|file| {
            if let Some(account) = account {
                rustix::fs::fchown(
                    &file,
                    Some(rustix::fs::Uid::from_raw(account.uid)),
                    Some(rustix::fs::Gid::from_raw(account.gid)),
                )?;
            }
            Ok(file)
        })
    } else {
        let mut options = std::fs::OpenOptions::new();
        options.read(true).custom_flags(nofollow);
        match account {
            Some(account) if rustix::process::geteuid().is_root() => {
                crate::users::Rights::User(crate::users::User {
                    name: account.name.clone(),
                    uid: account.uid,
                    gid: account.gid,
                    groups: vec![account.gid],
                })
                .open(path, &options)
            }
            _ => options.open(path),
        }
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

/// The job's cgroup, or `None` (and why, logged) when it cannot have one.
fn job_cgroup(spec: &Spec) -> Option<cgroup::JobCgroup> {
    let cgroups = spec.isolation.cgroups.as_ref()?;
    let limits = cgroup::Limits {
        memory_bytes: spec.request_memory_mib.saturating_mul(1024 * 1024),
        cpus: spec.request_cpus,
    };
    match cgroups.create(&spec.name, limits) {
        Ok(group) => Some(group),
        Err(e) => {
            tracing::warn!(error = %e, "cannot make the job's cgroup; tracking it without");
            None
        }
    }
}

fn start_blocking(spec: Spec) -> Result<Running, StartError> {
    let account = spec.account.as_ref();
    let (stdin, stdout, stderr) = match &spec.streams {
        Some(streams) => {
            let dup = |file: &std::fs::File, code| {
                file.try_clone().map_err(|e| {
                    start_error(code, "cannot hand the job its streams".to_owned(), &e)
                })
            };
            (
                match &streams.stdin {
                    Some(file) => Stdio::from(dup(file, HoldCode::UnableToOpenInput)?),
                    None => Stdio::null(),
                },
                dup(&streams.stdout, HoldCode::UnableToOpenOutput)?,
                dup(&streams.stderr, HoldCode::UnableToOpenOutput)?,
            )
        }
        None => (
            match &spec.stdin {
                Some(path) => Stdio::from(open_stream(path, false, account)?),
                None => Stdio::null(),
            },
            open_stream(&spec.stdout, true, account)?,
            open_stream(&spec.stderr, true, account)?,
        ),
    };
    let credentials = account.map(|a| (a.uid, a.gid));
    let mut confinement = confine::Confinement::default();
    confinement.credentials = credentials;
    if spec.isolation.private_tmp {
        confinement.private_tmp(&spec.cwd).map_err(|e| {
            start_error(
                HoldCode::FailedToCreateProcess,
                "cannot make the job's private /tmp".to_owned(),
                &e,
            )
        })?;
    }
    if spec.isolation.mount_namespace {
        confinement
            .hide_devices(&spec.hidden_devices)
            .map_err(|e| {
                start_error(
                    HoldCode::FailedToCreateProcess,
                    "cannot hide the GPUs the job was not given".to_owned(),
                    &e,
                )
            })?;
    }
    let group = job_cgroup(&spec);
    if let Some(group) = &group {
        confinement.cgroup_procs = group.procs_files().map_err(|e| {
            start_error(
                HoldCode::FailedToCreateProcess,
                "cannot open the job's cgroup".to_owned(),
                &e,
            )
        })?;
    }
    // Unique per start, even for two jobs with one sandbox name.
    static STARTS: AtomicU64 = AtomicU64::new(0);
    let tag = format!(
        "{}.{}.{}",
        spec.name,
        std::process::id(),
        STARTS.fetch_add(1, Ordering::Relaxed)
    );
    let marker = format!("{}={tag}", family::MARKER_ENV);
    let program = match &spec.reaper {
        Some(reaping) => &reaping.program,
        None => &spec.executable,
    };
    let mut command = Command::new(program);
    // The reaper's report: our end, and its end until it is forked.
    let mut report: Option<std::os::fd::OwnedFd> = None;
    let mut report_write: Option<std::os::fd::OwnedFd> = None;
    if let Some(reaping) = &spec.reaper {
        // The reaper confines the job in its own child; the agent only
        // hands it the descriptors it needs.
        let (read, write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| {
                start_error(
                    HoldCode::FailedToCreateProcess,
                    "no pipe for the job's reaper".to_owned(),
                    &e.into(),
                )
            })?;
        use std::os::fd::AsRawFd as _;
        let write_fd = write.as_raw_fd();
        command
            .arg("job-reaper")
            .arg("--run-dir")
            .arg(&reaping.run_dir)
            .arg("--report-fd")
            .arg(write_fd.to_string())
            .arg("--marker")
            .arg(&tag);
        if let Some(fd) = reaping.hold_fd {
            command.arg("--hold-fd").arg(fd.to_string());
        }
        if let Some(group) = &group {
            for path in group.procs_paths() {
                command.arg("--cgroup-procs").arg(path);
            }
        }
        if spec.isolation.private_tmp {
            command.arg("--private-tmp");
        }
        if spec.isolation.mount_namespace {
            for device in &spec.hidden_devices {
                command.arg("--hide-device").arg(device);
            }
        }
        if let Some((uid, gid)) = credentials {
            command
                .arg("--uid")
                .arg(uid.to_string())
                .arg("--gid")
                .arg(gid.to_string());
        }
        command.arg("--").arg(&spec.executable).args(&spec.args);
        // Handed down by leaving them open across exec, with no code run
        // between fork and exec: the agent, a large process, starts the
        // reaper with posix_spawn rather than copying itself with fork.
        // Another thread's child may inherit them meanwhile; the reaper
        // closes what it did not ask for, and reads its report by line.
        for fd in std::iter::once(write_fd).chain(reaping.hold_fd) {
            // SAFETY: both stay open until the spawn below returns.
            #[allow(unsafe_code)]
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty());
        }
        report = Some(read);
        report_write = Some(write);
    } else {
        command.args(&spec.args);
        // SAFETY: between fork and exec the child only makes system calls
        // on what `confinement` prepared before the fork; it allocates
        // nothing.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || confinement.apply())
        };
    }
    command
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
    if spec.reaper.is_none() {
        command.env(family::MARKER_ENV, &tag);
    }
    if let Some(account) = &spec.account {
        command.env("USER", &account.name).env("HOME", &spec.cwd);
    }
    let tracking = match (&group, &spec.isolation.cgroups) {
        (Some(_), Some(cgroups)) => runs::Tracking::Cgroup {
            agent: cgroups.name().to_owned(),
            job: spec.name.clone(),
        },
        _ => runs::Tracking::Found {
            marker: tag.clone(),
            uid: credentials.map_or_else(|| rustix::process::geteuid().as_raw(), |(uid, _)| uid),
            dedicated: spec.isolation.dedicated_account && credentials.is_some(),
        },
    };
    if let Some(reaping) = &spec.reaper {
        // Before anything starts: an agent that dies from here on leaves
        // a run that can be found.
        let mut record = (*reaping.record).clone();
        record.tracking = tracking.clone();
        runs::write_record(&reaping.run_dir, &record).map_err(|e| {
            start_error(
                HoldCode::FailedToCreateProcess,
                "cannot record the run".to_owned(),
                &e,
            )
        })?;
    }
    let started = Instant::now();
    let spawned = spawn_retrying_busy_text(&mut command);
    let failed = |e: &io::Error| {
        if let Some(group) = &group {
            let _ = group.remove();
        }
        start_error(
            HoldCode::FailedToCreateProcess,
            format!("failed to execute '{}'", spec.executable.display()),
            e,
        )
    };
    // Only the reaper holds its end now: the report ends when it closes it.
    drop(report_write);
    if let Some(fd) = spec.reaper.as_ref().and_then(|r| r.hold_fd) {
        // SAFETY: the slot account's lock stays open while the job runs.
        #[allow(unsafe_code)]
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC);
    }
    let mut child = spawned.map_err(|e| failed(&e))?;
    let pid = match report {
        None => child.id(),
        Some(pipe) => match reaper::read_report(pipe, REAPER_REPORT_WAIT) {
            Ok(reaper::Started::Job(pid)) => pid,
            Ok(reaper::Started::Failed(errno, message)) => {
                let _ = child.wait();
                let e = io::Error::from_raw_os_error(errno);
                let mut error = failed(&e);
                if errno == 0 {
                    error.message = format!(
                        "Error from starter: failed to execute '{}': {message}",
                        spec.executable.display()
                    );
                }
                return Err(error);
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(&e));
            }
        },
    };
    let reaper = spec
        .reaper
        .as_ref()
        .and_then(|_| runs::ProcessId::of(child.id()));
    let kernel_limits_memory = group.as_ref().is_some_and(cgroup::JobCgroup::limits_memory);
    let family = Arc::new(match group {
        Some(group) => family::Family::Cgroup(group),
        None => family::Family::Found {
            pgid: pid as i32,
            marker: marker.into_bytes(),
            uid: credentials.map_or_else(|| rustix::process::geteuid().as_raw(), |(uid, _)| uid),
            dedicated: spec.isolation.dedicated_account && credentials.is_some(),
        },
    });
    tracing::debug!(pid, tracking = family.kind(), "job started");
    let watch = Watch::spawn(
        family.clone(),
        kernel_limits_memory,
        // No limit: 0 MiB is none, and a disk limit this large is not
        // measured.
        if spec.enforce_requests {
            spec.request_memory_mib
        } else {
            0
        },
        spec.cwd.clone(),
        if spec.enforce_requests {
            spec.request_disk_kib
        } else {
            u64::MAX
        },
    );
    let (peak_kib, finished) = (watch.peak_kib.clone(), watch.finished.clone());
    let (tx, rx) = oneshot::channel();
    let limit_mib = spec.request_memory_mib;
    let status_path = spec
        .reaper
        .as_ref()
        .map(|r| r.run_dir.join(reaper::STATUS_FILE));
    std::thread::Builder::new()
        .name(format!("job-{pid}"))
        .spawn(move || {
            // Wait without reaping: the zombie keeps its pid and process
            // group from being reused while the rest of the family goes,
            // and its CPU times can still be read.
            let zombie_cpu = match Pid::from_raw(child.id() as i32) {
                Some(p) => {
                    let _ = rustix::process::waitid(
                        rustix::process::WaitId::Pid(p),
                        rustix::process::WaitIdOptions::EXITED
                            | rustix::process::WaitIdOptions::NOWAIT,
                    );
                    cpu_times(child.id()).unwrap_or_default()
                }
                None => (Duration::ZERO, Duration::ZERO),
            };
            // What the reaper recorded, when there is one: the job's own
            // exit, not the reaper's.
            let recorded = status_path
                .as_deref()
                .and_then(|p| reaper::Status::read(p).ok().flatten());
            watch.finished.store(true, Ordering::SeqCst);
            // Leftovers of the job (daemons it started) go with it; a
            // cgroup counts their CPU and memory too.
            watch.family.kill_all(KILL_WAIT);
            let usage = watch.family.usage();
            let (user_cpu, system_cpu) = match &*watch.family {
                family::Family::Cgroup(_) => (
                    usage.user_cpu.max(zombie_cpu.0),
                    usage.system_cpu.max(zombie_cpu.1),
                ),
                family::Family::Found { .. } => zombie_cpu,
            };
            let oom = usage.oom_kills > 0;
            watch.family.finish();
            let status = child.wait();
            let exit = match (&recorded, status) {
                (Some(r), _) => r.exit,
                // A reaper that recorded nothing was killed with the job.
                (None, Ok(s)) if status_path.is_some() => match s.signal() {
                    Some(signal) => Exit::Signal {
                        signal,
                        core_dumped: false,
                    },
                    None => Exit::Unknown,
                },
                (None, Ok(s)) => match (s.code(), s.signal()) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(signal)) => Exit::Signal {
                        signal,
                        core_dumped: s.core_dumped(),
                    },
                    _ => Exit::Unknown,
                },
                (None, Err(_)) => Exit::Unknown,
            };
            // The sandbox as the job left it.
            watch
                .disk_kib
                .fetch_max(sandbox::disk_usage_kib(&watch.sandbox), Ordering::SeqCst);
            let peak = watch
                .peak_kib
                .load(Ordering::SeqCst)
                .max(usage.peak_memory_kib);
            let _ = tx.send(Outcome {
                exit,
                user_cpu,
                system_cpu,
                wall: started.elapsed(),
                peak_memory_kib: peak,
                memory_exceeded: oom || watch.memory_exceeded.load(Ordering::SeqCst),
                limit_mib,
                disk_usage_kib: watch.disk_kib.load(Ordering::SeqCst),
                disk_exceeded: watch.disk_exceeded.load(Ordering::SeqCst),
                disk_limit_kib: watch.disk_limit_kib,
            });
        })
        .map_err(|e| start_error(HoldCode::FailedToCreateProcess, "no thread".into(), &e))?;
    Ok(Running {
        pid,
        reaper,
        tracking,
        ended: Some(rx),
        outcome: None,
        peak_kib,
        finished,
        family,
    })
}

/// Takes on a job that an earlier run of this agent started (found by
/// [`runs::Runs::list`] and [`runs::Found::adoptable`]): its processes are
/// watched and measured again, and its end is read from what its reaper
/// recorded. Must be called within the tokio runtime.
pub fn adopt(found: &runs::Found, isolation: &Isolation, status: PathBuf) -> Option<Running> {
    let record = found.record.as_ref()?;
    let pids = found.pids?;
    let family = Arc::new(match &record.tracking {
        runs::Tracking::Cgroup { job, .. } => {
            family::Family::Cgroup(isolation.cgroups.as_ref()?.job(job))
        }
        runs::Tracking::Found {
            marker,
            uid,
            dedicated,
        } => family::Family::Found {
            pgid: i32::try_from(pids.job).unwrap_or(0),
            marker: format!("{}={marker}", family::MARKER_ENV).into_bytes(),
            uid: *uid,
            dedicated: *dedicated,
        },
    });
    let kernel_limits_memory = match &*family {
        family::Family::Cgroup(group) => group.limits_memory(),
        family::Family::Found { .. } => false,
    };
    let watch = Watch::spawn(
        family.clone(),
        kernel_limits_memory,
        record.memory_limit_mib,
        record.sandbox.clone(),
        record.disk_limit_kib,
    );
    let (peak_kib, finished) = (watch.peak_kib.clone(), watch.finished.clone());
    let (tx, rx) = oneshot::channel();
    let reaper = pids.reaper;
    let limit_mib = record.memory_limit_mib;
    let started_ms = record.started_ms;
    std::thread::Builder::new()
        .name(format!("adopted-{}", pids.job))
        .spawn(move || {
            wait_for_exit(&reaper);
            let recorded = reaper::Status::read(&status).ok().flatten();
            watch.finished.store(true, Ordering::SeqCst);
            watch.family.kill_all(KILL_WAIT);
            let usage = watch.family.usage();
            watch.family.finish();
            watch
                .disk_kib
                .fetch_max(sandbox::disk_usage_kib(&watch.sandbox), Ordering::SeqCst);
            let now_ms = starling_protocol::identity::Timestamp::now().as_unix_millis();
            let (exit, user_cpu, system_cpu, rss) = match &recorded {
                Some(r) => (r.exit, r.user_cpu, r.system_cpu, r.max_rss_kib),
                None => (
                    Exit::Signal {
                        signal: Signal::KILL.as_raw(),
                        core_dumped: false,
                    },
                    usage.user_cpu,
                    usage.system_cpu,
                    0,
                ),
            };
            let _ = tx.send(Outcome {
                exit,
                user_cpu: user_cpu.max(usage.user_cpu),
                system_cpu: system_cpu.max(usage.system_cpu),
                wall: Duration::from_millis(now_ms.saturating_sub(started_ms)),
                peak_memory_kib: watch
                    .peak_kib
                    .load(Ordering::SeqCst)
                    .max(usage.peak_memory_kib)
                    .max(rss),
                memory_exceeded: usage.oom_kills > 0
                    || watch.memory_exceeded.load(Ordering::SeqCst),
                limit_mib,
                disk_usage_kib: watch.disk_kib.load(Ordering::SeqCst),
                disk_exceeded: watch.disk_exceeded.load(Ordering::SeqCst),
                disk_limit_kib: watch.disk_limit_kib,
            });
        })
        .ok()?;
    Some(Running {
        pid: pids.job,
        reaper: Some(reaper),
        tracking: record.tracking.clone(),
        ended: Some(rx),
        outcome: None,
        peak_kib,
        finished,
        family,
    })
}

/// Blocks until `process` (not a child of ours) has ended.
fn wait_for_exit(process: &runs::ProcessId) {
    let pidfd = Pid::from_raw(process.pid as i32).and_then(|pid| {
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    });
    // The pid may have been reused between the record and the open.
    if !process.alive() {
        return;
    }
    if let Some(fd) = pidfd {
        loop {
            let mut fds = [rustix::event::PollFd::new(
                &fd,
                rustix::event::PollFlags::IN,
            )];
            match rustix::event::poll(&mut fds, None) {
                Ok(n) if n > 0 => return,
                Err(rustix::io::Errno::INTR) | Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    while process.alive() {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What the watch of a running job measures and decides.
#[derive(Debug)]
struct Watch {
    family: Arc<family::Family>,
    memory_limit_kib: u64,
    /// The cgroup enforces the limit: watch for its kills, not the size.
    kernel_limits_memory: bool,
    sandbox: PathBuf,
    disk_limit_kib: u64,
    peak_kib: Arc<AtomicU64>,
    disk_kib: AtomicU64,
    finished: Arc<AtomicBool>,
    memory_exceeded: AtomicBool,
    disk_exceeded: AtomicBool,
}

impl Watch {
    /// Starts measuring a job's `family` against its limits; see
    /// [`spawn_watch`].
    fn spawn(
        family: Arc<family::Family>,
        kernel_limits_memory: bool,
        memory_mib: u64,
        sandbox: PathBuf,
        disk_kib: u64,
    ) -> Arc<Watch> {
        let watch = Arc::new(Watch {
            family,
            memory_limit_kib: memory_mib.saturating_mul(1024),
            kernel_limits_memory,
            sandbox,
            disk_limit_kib: disk_kib.max(DISK_FLOOR_KIB),
            peak_kib: Arc::new(AtomicU64::new(0)),
            disk_kib: AtomicU64::new(0),
            finished: Arc::new(AtomicBool::new(false)),
            memory_exceeded: AtomicBool::new(false),
            disk_exceeded: AtomicBool::new(false),
        });
        spawn_watch(watch.clone());
        watch
    }

    /// One look at memory (and, when `disk`, the sandbox). Returns false
    /// once the job must go.
    fn look(&self, disk: bool) -> bool {
        let usage = self.family.usage();
        self.peak_kib.fetch_max(
            usage.peak_memory_kib.max(usage.memory_kib),
            Ordering::SeqCst,
        );
        let over_memory = if self.kernel_limits_memory {
            usage.oom_kills > 0
        } else {
            self.memory_limit_kib > 0 && usage.memory_kib > self.memory_limit_kib
        };
        if over_memory {
            self.memory_exceeded.store(true, Ordering::SeqCst);
        }
        if disk && self.disk_limit_kib != u64::MAX {
            let size = sandbox::disk_usage_kib(&self.sandbox);
            self.disk_kib.fetch_max(size, Ordering::SeqCst);
            if size > self.disk_limit_kib {
                self.disk_exceeded.store(true, Ordering::SeqCst);
            }
        }
        if over_memory || self.disk_exceeded.load(Ordering::SeqCst) {
            self.family.kill_all(KILL_WAIT);
            return false;
        }
        true
    }
}

/// Measures the job until it ends; kills it past its memory or disk.
fn spawn_watch(watch: Arc<Watch>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(MEMORY_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let disk_every = (DISK_POLL.as_millis() / MEMORY_POLL.as_millis()).max(1) as u64;
        let mut n: u64 = 0;
        loop {
            tick.tick().await;
            if watch.finished.load(Ordering::SeqCst) {
                break;
            }
            let disk = n % disk_every == 0;
            n += 1;
            let w = watch.clone();
            let go_on = tokio::task::spawn_blocking(move || w.look(disk))
                .await
                .unwrap_or(true);
            if !go_on {
                break;
            }
        }
    });
}

/// User and system CPU of a process and its reaped children.
fn cpu_times(pid: u32) -> Option<(Duration, Duration)> {
    let fields = family::stat_fields(pid as i32)?;
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    let get = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let user = (get(11) + get(13)) as f64 / ticks;
    let system = (get(12) + get(14)) as f64 / ticks;
    Some((
        Duration::from_secs_f64(user),
        Duration::from_secs_f64(system),
    ))
}

impl Running {
    fn ended(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// Stops the whole job: its cgroup's freezer, else SIGSTOP to each of
    /// its processes.
    pub fn suspend(&self) -> io::Result<()> {
        if self.ended() {
            return Ok(());
        }
        self.family.suspend(true)
    }

    /// Lets it go on.
    pub fn resume(&self) -> io::Result<()> {
        if self.ended() {
            return Ok(());
        }
        self.family.suspend(false)
    }

    /// The peak resident memory so far, in KiB.
    pub fn peak_memory_kib(&self) -> u64 {
        self.peak_kib.load(Ordering::SeqCst)
    }

    /// Asks the job to leave: `signal` (its `KillSig`,
    /// [`job::kill_signal`]; SIGTERM by default) to its process group,
    /// after letting it go on in case it is suspended (a stopped process
    /// would not see the signal until continued).
    pub fn ask_to_leave(&self, signal: Signal) {
        if self.ended() {
            return;
        }
        let _ = self.family.suspend(false);
        let _ = self.family.signal_group(self.pid, signal);
        let _ = self.family.signal_group(self.pid, Signal::CONT);
        // Daemons outside the job's process group get the warning too;
        // the group has had it once.
        self.family.signal_outside_group(self.pid, signal);
    }

    /// Asks the job to leave with SIGTERM, then kills it after `grace`.
    pub async fn terminate(&mut self, grace: Duration) {
        self.ask_to_leave(Signal::TERM);
        if tokio::time::timeout(grace, self.wait()).await.is_err() {
            self.kill();
            let _ = self.wait().await;
        }
    }

    /// Kills every process of the job now (SIGKILL).
    pub fn kill(&mut self) {
        if self.ended() {
            return;
        }
        let family = self.family.clone();
        // Off the async threads: a kill waits for the family to go.
        std::thread::spawn(move || family.kill_all(KILL_WAIT));
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
            disk_usage_kib: 0,
            disk_exceeded: false,
            disk_limit_kib: 0,
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
