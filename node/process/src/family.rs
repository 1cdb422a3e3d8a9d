//! A job's process family: every process it started, found again to be
//! measured, suspended and killed, daemons included.
//!
//! With cgroups ([`super::cgroup`]) the kernel keeps the family: a
//! process cannot leave its group. Without them the family is found on
//! each look, as HTCondor's procd does without cgroups: the processes in
//! the job's process group, those that still carry its marker in their
//! environment (`_STARLING_JOB`, inherited by everything the job starts
//! unless it clears it), and, when the job has a dedicated account, every
//! process of that account. A job that calls `setsid` and clears its
//! environment as a user it shares with others can escape the fallback;
//! it cannot escape a cgroup.

use std::time::Duration;

use rustix::process::{Pid, Signal};

use super::cgroup::{JobCgroup, Usage};

/// The environment variable that marks a job's processes.
pub const MARKER_ENV: &str = "_STARLING_JOB";

/// How a job's processes are found.
#[derive(Debug)]
pub enum Family {
    Cgroup(JobCgroup),
    Found {
        /// The process group the job's first process leads.
        pgid: i32,
        /// `MARKER_ENV=name`, as found in `/proc/PID/environ`.
        marker: Vec<u8>,
        /// The uid the job runs as: its processes can have no other (it
        /// cannot change user), so only these are looked at closely.
        uid: u32,
        /// Every process of `uid` is the job's (a slot account).
        dedicated: bool,
    },
}

impl Family {
    /// How the family is tracked, for the log.
    pub fn kind(&self) -> &'static str {
        match self {
            Family::Cgroup(_) => "cgroup",
            Family::Found { .. } => "process group and environment",
        }
    }

    /// The processes of the family now.
    pub fn members(&self) -> Vec<i32> {
        match self {
            Family::Cgroup(group) => group.pids(),
            Family::Found {
                pgid,
                marker,
                uid: job_uid,
                dedicated,
            } => scan(*job_uid, |pid, stat| {
                *dedicated
                    || stat.get(2).and_then(|f| f.parse::<i32>().ok()) == Some(*pgid)
                    || environ_has(pid, marker)
            }),
        }
    }

    /// Resident memory of the family, in KiB, and what a cgroup counted.
    pub fn usage(&self) -> Usage {
        match self {
            Family::Cgroup(group) if group.measures_memory() => group.usage(),
            Family::Cgroup(group) => {
                let rss = rss_kib(&group.pids());
                Usage {
                    memory_kib: rss,
                    peak_memory_kib: rss,
                    ..group.usage()
                }
            }
            Family::Found { .. } => {
                let rss = rss_kib(&self.members());
                Usage {
                    memory_kib: rss,
                    peak_memory_kib: rss,
                    ..Usage::default()
                }
            }
        }
    }

    /// Sends `signal` to the job's process group (what the job itself
    /// would see from a terminal).
    pub fn signal_group(&self, leader: u32, signal: Signal) -> std::io::Result<()> {
        let pid = Pid::from_raw(leader as i32)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "pid 0"))?;
        rustix::process::kill_process_group(pid, signal).map_err(std::io::Error::from)
    }

    /// Sends `signal` to every process of the family outside the process
    /// group led by `leader` (those a signal to that group missed: daemons
    /// that made groups of their own). A process of the group is not sent
    /// it twice: a job saving its checkpoint in its handler for the first
    /// would be killed by the second.
    pub fn signal_outside_group(&self, leader: u32, signal: Signal) {
        let group = Pid::from_raw(leader as i32);
        for pid in self.members() {
            if let Some(pid) = Pid::from_raw(pid) {
                if group.is_some() && rustix::process::getpgid(Some(pid)).ok() == group {
                    continue;
                }
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
    }

    /// Sends `signal` to every process of the family.
    pub fn signal_all(&self, signal: Signal) {
        for pid in self.members() {
            if let Some(pid) = Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
    }

    /// Stops (`true`) or continues every process of the family: the
    /// cgroup's freezer where there is one, else SIGSTOP/SIGCONT to each.
    pub fn suspend(&self, stop: bool) -> std::io::Result<()> {
        if let Family::Cgroup(group) = self {
            if group.freeze(stop)? {
                return Ok(());
            }
        }
        let signal = if stop { Signal::STOP } else { Signal::CONT };
        for pid in self.members() {
            if let Some(pid) = Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
        Ok(())
    }

    /// SIGKILLs every process of the family, again until none is left
    /// (a fork can race a listing) or `within` has passed.
    pub fn kill_all(&self, within: Duration) {
        let deadline = std::time::Instant::now() + within;
        loop {
            match self {
                Family::Cgroup(group) => {
                    group.kill_all();
                }
                Family::Found { .. } => {
                    for pid in self.members() {
                        if let Some(pid) = Pid::from_raw(pid) {
                            let _ = rustix::process::kill_process(pid, Signal::KILL);
                        }
                    }
                }
            }
            let left = self.members();
            // Zombies waiting for their parent's reaping still list.
            if left.iter().all(|pid| is_zombie(*pid)) || std::time::Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills what is left and lets go of the family (removes its cgroup).
    pub fn finish(&self) {
        self.kill_all(Duration::from_secs(2));
        if let Family::Cgroup(group) = self {
            if let Err(e) = group.remove() {
                tracing::warn!(error = %e, "cannot remove the job's cgroup");
            }
        }
    }
}

/// The live (not zombie) processes of `uid`, never this one.
pub fn processes_of(uid: u32) -> Vec<i32> {
    scan(uid, |_, stat| stat.first().map(String::as_str) != Some("Z"))
}

/// Resident memory of `pids`, in KiB.
fn rss_kib(pids: &[i32]) -> u64 {
    let page_kib = rustix::param::page_size() as u64 / 1024;
    pids.iter()
        .filter_map(|pid| stat_fields(*pid))
        .map(|f| f.get(21).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) * page_kib)
        .sum()
}

fn is_zombie(pid: i32) -> bool {
    stat_fields(pid).is_none_or(|f| f.first().map(String::as_str) == Some("Z"))
}

/// The pids of `/proc` owned by `uid` for which `keep(pid, stat fields)`
/// holds, never this process. Processes of other users are passed over
/// on the directory's owner alone, without reading their files.
fn scan(uid: u32, keep: impl Fn(i32, &[String]) -> bool) -> Vec<i32> {
    use std::os::unix::fs::MetadataExt as _;
    proc_entries()
        .filter(|(_, entry)| entry.metadata().map(|m| m.uid()).ok() == Some(uid))
        .filter(|(pid, _)| stat_fields(*pid).is_some_and(|fields| keep(*pid, &fields)))
        .map(|(pid, _)| pid)
        .collect()
}

/// Every process's pid and `/proc` entry, but this process's.
fn proc_entries() -> impl Iterator<Item = (i32, std::fs::DirEntry)> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            Some((pid, entry))
        })
        .filter(move |(pid, _)| *pid != me)
}

/// The processes, of any user, whose job marker's value satisfies
/// `tag` (jobs tracked without cgroups; see [`MARKER_ENV`]).
pub fn processes_marked(tag: impl Fn(&[u8]) -> bool) -> Vec<i32> {
    proc_entries()
        .filter(|(_, entry)| {
            std::fs::read(entry.path().join("environ")).is_ok_and(|environ| {
                environ.split(|b| *b == 0).any(|var| {
                    var.strip_prefix(MARKER_ENV.as_bytes())
                        .and_then(|rest| rest.strip_prefix(b"="))
                        .is_some_and(&tag)
                })
            })
        })
        .map(|(pid, _)| pid)
        .collect()
}

fn environ_has(pid: i32, marker: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == marker))
}

/// The fields of `/proc/PID/stat` after the command name: state(0)
/// ppid(1) pgrp(2) ... utime(11) stime(12) cutime(13) cstime(14) ...
/// rss(21).
pub fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}
