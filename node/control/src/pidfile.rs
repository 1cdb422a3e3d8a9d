//! `agent.pid`: which process is the agent of a data directory.
//!
//! This file owns the pid file's life: [`PidFile::acquire`] writes it when
//! an agent starts (refusing if a live agent holds it, taking it over if
//! the agent that wrote it is gone), the [`PidFile`] removes it when
//! dropped, and [`read_pid`] is how `testnet down` finds whom to stop.
//!
//! Liveness is read from `/proc` (Linux): a pid names a live agent if the
//! process exists, is not a zombie, and runs `starling` or the same
//! program as we do (agents started inside a test binary). Anything else,
//! a dead pid or one reused by an unrelated program, is a stale file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::{pid_path, Error, PID_FILE};

/// The name the agent's process runs under (`/proc/PID/comm`); builds of
/// the same command line under other names (`starling-e2e`, which the
/// end-to-end tests run) start with it and a dash.
const AGENT_COMM: &str = "starling";

/// This process's claim on a data directory, as `agent.pid`. Dropping it
/// removes the file (if it still names this process).
#[derive(Debug)]
pub struct PidFile {
    path: PathBuf,
    pid: u32,
}

impl PidFile {
    /// Writes this process's pid to `agent.pid` in `data_dir`.
    ///
    /// Fails with [`Error::AgentRunning`] if the file names a live agent,
    /// this process included (an agent does not run twice in one
    /// directory). A file naming a dead process, some other program, or
    /// nothing readable is stale and replaced. The file appears whole or
    /// not at all: it is written aside and then linked (or renamed) into
    /// place.
    pub fn acquire(data_dir: &Path) -> Result<PidFile, Error> {
        let path = pid_path(data_dir);
        let pid = std::process::id();
        let tmp = data_dir.join(format!(".{PID_FILE}.{pid}.tmp"));
        let io = |what: &'static str, path: &Path| {
            let path = path.to_owned();
            move |source| Error::Io { what, path, source }
        };
        write_new(&tmp, pid).map_err(io("writing", &tmp))?;
        let claimed = claim(data_dir, &path, &tmp, pid);
        // The temporary is only a name for the contents; gone either way.
        let _ = std::fs::remove_file(&tmp);
        claimed?;
        Ok(PidFile { path, pid })
    }

    /// The pid this file holds: this process's.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Puts `tmp` (holding `pid`) in place as `path` unless a live agent holds
/// `path`.
fn claim(data_dir: &Path, path: &Path, tmp: &Path, pid: u32) -> Result<(), Error> {
    let io = |what: &'static str| {
        let path = path.to_owned();
        move |source| Error::Io { what, path, source }
    };
    // Linking fails if the file exists, so two agents cannot both create
    // it.
    match std::fs::hard_link(tmp, path) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        // A file system without hard links: fall through to the check and
        // the rename.
        Err(_) => {}
    }
    if let Some(holder) = read_pid_file(path).map_err(io("reading"))? {
        if is_live_agent(holder) {
            return Err(Error::AgentRunning {
                data_dir: data_dir.to_owned(),
                pid: Some(holder),
            });
        }
        tracing::info!(path = %path.display(), stale_pid = holder, "taking over a stale pid file");
    }
    // Rename replaces the stale file in one step: there is never a moment
    // with no pid file for a third agent to claim.
    std::fs::rename(tmp, path).map_err(io("writing"))?;
    // Two agents taking over the same stale file at once both rename; the
    // one whose pid is not in the file afterwards lost.
    match read_pid_file(path).map_err(io("reading"))? {
        Some(holder) if holder == pid => Ok(()),
        holder => Err(Error::AgentRunning {
            data_dir: data_dir.to_owned(),
            pid: holder,
        }),
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        // Only our own claim: after a takeover the file is someone else's.
        if read_pid_file(&self.path).ok().flatten() == Some(self.pid) {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!(path = %self.path.display(), error = %e, "removing the pid file failed");
            }
        }
    }
}

/// The pid in `agent.pid` of `data_dir`, if the file exists and holds one.
/// The process may have died since; this does not check.
pub fn read_pid(data_dir: &Path) -> Option<u32> {
    read_pid_file(&pid_path(data_dir)).ok().flatten()
}

/// The pid in the file at `path`: `None` if there is no file or it does
/// not hold a pid (a stale or damaged file, to be replaced).
fn read_pid_file(path: &Path) -> std::io::Result<Option<u32>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.trim().parse().ok().filter(|&pid| pid != 0)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        // Not text: damaged, so stale.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Ok(None),
        Err(e) => Err(e),
    }
}

fn write_new(path: &Path, pid: u32) -> std::io::Result<()> {
    // A temporary left by a crashed earlier process with our pid is junk.
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    writeln!(file, "{pid}")?;
    file.sync_all()
}

/// Whether `pid` is a running starling agent, as far as `/proc` tells.
fn is_live_agent(pid: u32) -> bool {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    if !Path::new("/proc/self").exists() {
        // No procfs to ask: assume it is alive rather than run a second
        // agent beside it; the error names the pid file to remove.
        return true;
    }
    if pid == std::process::id() {
        return true;
    }
    let Ok(stat) = std::fs::read_to_string(proc.join("stat")) else {
        return false;
    };
    // `pid (comm) S ...`: the state follows the last parenthesis (comm may
    // hold any characters). A zombie has exited.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    if state == Some('Z') {
        return false;
    }
    let comm = std::fs::read_to_string(proc.join("comm")).unwrap_or_default();
    let comm = comm.trim_end();
    if comm == AGENT_COMM
        || comm
            .strip_prefix(AGENT_COMM)
            .is_some_and(|rest| rest.starts_with('-'))
    {
        return true;
    }
    // Agents started inside another program (tests, the testnet) run that
    // program; it counts when it is the same one as ours.
    match (
        std::fs::read_link(proc.join("exe")),
        std::fs::read_link("/proc/self/exe"),
    ) {
        (Ok(theirs), Ok(ours)) => theirs == ours,
        _ => false,
    }
}
