//! The job's reaper: a small process between the agent and the job, as
//! HTCondor's condor_starter is, so that how a job ended is never lost
//! with its agent.
//!
//! The kernel tells only a process's parent how it ended. Were the agent
//! the job's parent, a job that finished while its agent was being killed
//! would take its exit code with it: the restarted agent could not tell a
//! job that completed from one that died, and its submitter would run it
//! again. So the agent starts `starling job-reaper`, and the reaper starts
//! the job: it confines it ([`super::confine`]: cgroups, private `/tmp`,
//! the job's account) in its child, waits for it, and writes how it ended
//! and what it used into a status file (renamed into place whole), which
//! whichever agent runs then reads ([`Status`]).
//!
//! The reaper stays root (it is outside the job's cgroup, its account and
//! its process group), ignores the signals a job's family is sent, and
//! holds the slot account's lock for as long as the job lives, so that no
//! other job is given the account of one whose agent is away. It tells
//! the agent on a pipe that the job started (`ok <pid>`) or why it could
//! not (`err <errno> <message>`).

use std::ffi::OsString;
use std::io::{self, Write as _};
use std::os::fd::{BorrowedFd, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::confine::Confinement;
use super::family;

/// `starling job-reaper` (hidden: the agent starts it).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's directory ([`super::runs`]): the reaper writes its own
    /// and the job's pid there, then how the job ended.
    #[arg(long)]
    pub run_dir: PathBuf,
    /// The descriptor to tell the agent on that the job started.
    #[arg(long)]
    pub report_fd: RawFd,
    /// A descriptor to keep open while the job lives (the slot account's
    /// lock).
    #[arg(long)]
    pub hold_fd: Option<RawFd>,
    /// The job's marker ([`family::MARKER_ENV`]), set in its environment.
    #[arg(long)]
    pub marker: String,
    /// `cgroup.procs` files the job joins.
    #[arg(long)]
    pub cgroup_procs: Vec<PathBuf>,
    /// Give the job a private `/tmp` and `/var/tmp` (from its sandbox, the
    /// working directory).
    #[arg(long)]
    pub private_tmp: bool,
    /// A device file the job must not open (a GPU it was not given):
    /// `/dev/null` is bound over it in the job's mount namespace.
    #[arg(long = "hide-device", value_name = "PATH")]
    pub hide_devices: Vec<PathBuf>,
    /// The account to run the job as.
    #[arg(long, requires = "gid")]
    pub uid: Option<u32>,
    #[arg(long)]
    pub gid: Option<u32>,
    /// The job's program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}

pub use super::runs::{Status, STATUS_FILE};

/// How often a job whose executable is busy is tried again (see
/// [`super::spawn_retrying_busy_text`]).
const BUSY_TEXT_TRIES: u32 = 8;

/// A no-op handler: unlike `SIG_IGN`, a handler does not survive `exec`, so
/// the job starts with every signal at its default.
extern "C" fn ignore(_: libc::c_int) {}

/// The signals a job's family is sent that must not end its reaper.
const SHIELDED: [libc::c_int; 8] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGPIPE,
];

fn shield_signals() {
    for signal in SHIELDED {
        // SAFETY: installs a handler that does nothing, with an empty
        // mask; no other thread runs yet.
        #[allow(unsafe_code)]
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Closes every descriptor above the standard streams but `keep`: the
/// agent hands its descriptors down without a chance to close the rest,
/// and another job's lock or pipe must not live on in this one.
fn close_strays(keep: &[RawFd]) {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let open: Vec<RawFd> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    for fd in open {
        if fd > 2 && !keep.contains(&fd) {
            // SAFETY: nothing in this process uses a descriptor it did not
            // open itself, and it has opened none yet but the listing's,
            // which is closed by now or fails harmlessly.
            #[allow(unsafe_code)]
            unsafe {
                libc::close(fd);
            }
        }
    }
}

/// Runs the reaper: starts the job, waits for it, records its end.
pub fn run(args: Args) -> ExitCode {
    shield_signals();
    // SAFETY: the agent passed these descriptors open for us alone.
    #[allow(unsafe_code)]
    let report = unsafe { OwnedFd::from_raw_fd(args.report_fd) };
    let mut report = std::fs::File::from(report);
    close_strays(
        &[args.report_fd]
            .into_iter()
            .chain(args.hold_fd)
            .collect::<Vec<_>>(),
    );
    for fd in std::iter::once(args.report_fd).chain(args.hold_fd) {
        // The job inherits neither.
        // SAFETY: the descriptor is open for the life of this process.
        #[allow(unsafe_code)]
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC);
    }
    // Written before the job starts: whoever looks after the run finds
    // the reaper, and through it the job.
    let reaper = super::runs::ProcessId::of(std::process::id());
    if let Some(reaper) = reaper {
        let _ = super::runs::Pids { reaper, job: 0 }.write(&args.run_dir);
    }
    let started = match start(&args) {
        Ok(child) => child,
        Err(e) => {
            let _ = writeln!(
                report,
                "err {} {}",
                e.raw_os_error().unwrap_or(0),
                e.to_string().replace('\n', " ")
            );
            return ExitCode::from(127);
        }
    };
    let pid = started.id();
    if let Some(reaper) = reaper {
        let _ = super::runs::Pids { reaper, job: pid }.write(&args.run_dir);
    }
    let _ = writeln!(report, "ok {pid}");
    drop(report);
    let status = wait(pid);
    let path = args.run_dir.join(STATUS_FILE);
    if let Err(e) = status.write(&path) {
        // The reaper's stderr is the agent's: the line joins its log in
        // the agent's own form.
        init_tracing();
        tracing::error!(
            job_pid = pid,
            path = %path.display(),
            error = %e,
            "job-reaper: cannot record the end of the job's process"
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Logs to stderr (the agent's log) as the agent does; set up only when
/// there is something to say, so that a job's start costs nothing more.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
}

fn start(args: &Args) -> io::Result<std::process::Child> {
    let mut confinement = Confinement::default();
    for path in &args.cgroup_procs {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        confinement.cgroup_procs.push(file.into());
    }
    if args.private_tmp {
        confinement.private_tmp(&std::env::current_dir()?)?;
    }
    confinement.hide_devices(&args.hide_devices)?;
    confinement.credentials = args.uid.zip(args.gid);
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no program to run"))?;
    let mut command = std::process::Command::new(program);
    command
        .args(rest)
        .env(family::MARKER_ENV, &args.marker)
        .process_group(0);
    // SAFETY: between fork and exec the child only makes system calls on
    // what `confinement` prepared; it allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || confinement.apply())
    };
    let mut wait = Duration::from_millis(10);
    for _ in 1..BUSY_TEXT_TRIES {
        match command.spawn() {
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::TXTBSY.raw_os_error()) => {
                std::thread::sleep(wait);
                wait = wait.saturating_mul(2);
            }
            other => return other,
        }
    }
    command.spawn()
}

/// Waits for the job's process, with what it and its reaped children used.
fn wait(pid: u32) -> Status {
    let mut raw: libc::c_int = 0;
    // SAFETY: an all-zero rusage is valid.
    #[allow(unsafe_code)]
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: plain wait4 on our own child into local storage.
        #[allow(unsafe_code)]
        let got = unsafe { libc::wait4(pid as libc::pid_t, &mut raw, 0, &mut usage) };
        if got >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    let status = std::process::ExitStatus::from_raw(raw);
    let exit = match (status.code(), status.signal()) {
        (Some(c), _) => super::Exit::Code(c),
        (None, Some(signal)) => super::Exit::Signal {
            signal,
            core_dumped: status.core_dumped(),
        },
        _ => super::Exit::Unknown,
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Status {
        exit,
        user_cpu: time(usage.ru_utime),
        system_cpu: time(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    }
}

/// What the agent learnt from the reaper's report.
#[derive(Debug)]
pub enum Started {
    /// The job runs as this pid.
    Job(u32),
    /// It could not start: the OS error number and message.
    Failed(i32, String),
}

/// Reads the reaper's report from `pipe` (blocking, at most `within`).
pub fn read_report(pipe: OwnedFd, within: Duration) -> io::Result<Started> {
    use std::io::Read as _;
    let deadline = std::time::Instant::now() + within;
    let mut file = std::fs::File::from(pipe);
    let mut text = Vec::new();
    let mut chunk = [0u8; 512];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut fds = [rustix::event::PollFd::new(
            &file,
            rustix::event::PollFlags::IN,
        )];
        let timeout = rustix::event::Timespec::try_from(left).ok();
        let ready = rustix::event::poll(&mut fds, timeout.as_ref())?;
        if ready == 0 {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the job's reaper did not report within its time",
            ));
        }
        let n = file.read(&mut chunk)?;
        if n == 0 || text.len() > 4096 {
            break;
        }
        text.extend_from_slice(&chunk[..n]);
        if text.ends_with(b"\n") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&text);
    let line = text.trim();
    if let Some(pid) = line.strip_prefix("ok ") {
        if let Ok(pid) = pid.trim().parse() {
            return Ok(Started::Job(pid));
        }
    }
    if let Some(rest) = line.strip_prefix("err ") {
        let (errno, message) = rest.split_once(' ').unwrap_or((rest, ""));
        return Ok(Started::Failed(
            errno.parse().unwrap_or(0),
            message.to_owned(),
        ));
    }
    Err(io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the job's reaper ended without a report ({line:?})"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("status");
        assert_eq!(Status::read(&path).unwrap(), None);
        for exit in [
            super::super::Exit::Code(3),
            super::super::Exit::Signal {
                signal: 9,
                core_dumped: false,
            },
            super::super::Exit::Signal {
                signal: 11,
                core_dumped: true,
            },
        ] {
            let status = Status {
                exit,
                user_cpu: Duration::from_micros(1_234_567),
                system_cpu: Duration::from_micros(89),
                max_rss_kib: 4242,
            };
            status.write(&path).unwrap();
            assert_eq!(Status::read(&path).unwrap(), Some(status));
        }
        std::fs::write(&path, "garbage").unwrap();
        assert!(Status::read(&path).is_err());
    }
}
