//! What `/proc` says about a testnet's processes (Linux): which live
//! processes are its agents, which others are left in its process group,
//! and whether a pid is still alive.
//!
//! An agent is recognised by its command line: `starling agent --data-dir
//! D` (as `up` starts it) with D one of the testnet's agent directories.
//! That needs neither its pid file nor its control socket, so an agent that
//! is wedged, overloaded or has not written its pid file yet is still found
//! (and stopped), and a pid file naming a pid that now belongs to another
//! program is never believed. A zombie is not alive.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// One live process, as far as needed here.
struct Process {
    pid: i32,
    pgrp: i32,
    cmdline: Vec<u8>,
}

/// Every live process (zombies left out) that `/proc` shows us.
fn processes() -> Vec<Process> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = stat(pid)?;
            if stat.zombie {
                return None;
            }
            // A process may exit between the two reads: then it is gone.
            let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            Some(Process {
                pid,
                pgrp: stat.pgrp,
                cmdline,
            })
        })
        .collect()
}

/// The fields of `/proc/<pid>/stat` used here.
struct Stat {
    zombie: bool,
    pgrp: i32,
}

fn stat(pid: i32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parens.
    let mut fields = text[text.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat {
        zombie: matches!(state, "Z" | "X" | "x"),
        pgrp,
    })
}

/// Whether `pid` is a live process (a zombie is not).
pub(crate) fn is_alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| !s.zombie)
}

/// The data directory in an agent's command line: the argument after
/// `--data-dir`, if the command is `… agent … --data-dir D …`.
fn agent_data_dir(cmdline: &[u8]) -> Option<&[u8]> {
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    if !args.contains(&b"agent".as_slice()) {
        return None;
    }
    args.windows(2)
        .find(|w| w[0] == b"--data-dir".as_slice())
        .map(|w| w[1])
}

/// Whether `pid` is `starling agent --data-dir <data_dir>`, alive.
pub(crate) fn is_agent_of(pid: i32, data_dir: &Path) -> bool {
    is_alive(pid)
        && fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
            agent_data_dir(&cmdline) == Some(data_dir.as_os_str().as_encoded_bytes())
        })
}

/// Whether `pid` is an agent of `data_dir`, or a process on its way out
/// (its memory, command line included, already gone, but not yet a
/// zombie): a killed agent is gone only once it is neither.
pub(crate) fn is_agent_of_or_exiting(pid: i32, data_dir: &Path) -> bool {
    is_agent_of(pid, data_dir)
        || (is_alive(pid) && fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.is_empty()))
}

/// The running agents among `dirs`: for each index into `dirs` whose agent
/// runs, its pid (the lowest, should two run on one directory).
pub(crate) fn find_agents(dirs: &[PathBuf]) -> HashMap<usize, i32> {
    let by_dir: HashMap<&[u8], usize> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.as_os_str().as_encoded_bytes(), i))
        .collect();
    let mut found: HashMap<usize, i32> = HashMap::new();
    for process in processes() {
        let Some(&i) = agent_data_dir(&process.cmdline).and_then(|d| by_dir.get(d)) else {
            continue;
        };
        let pid = found.entry(i).or_insert(process.pid);
        *pid = (*pid).min(process.pid);
    }
    found
}

/// The live processes in process group `group` that belong to the testnet
/// in `dir`: their command line names it, or they run inside it.
pub(crate) fn group_members(group: i32, dir: &Path) -> Vec<i32> {
    let dir_bytes = dir.as_os_str().as_encoded_bytes();
    let mut members: Vec<i32> = processes()
        .into_iter()
        .filter(|p| p.pgrp == group)
        .filter(|p| {
            p.cmdline.windows(dir_bytes.len()).any(|w| w == dir_bytes)
                || fs::read_link(format!("/proc/{}/cwd", p.pid))
                    .is_ok_and(|cwd| cwd.starts_with(dir))
        })
        .map(|p| p.pid)
        .collect();
    members.sort_unstable();
    members
}

/// Sends `signal` to `pid`; a process that exited meanwhile is no error.
pub(crate) fn signal(pid: i32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt as _;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::*;

    /// A process whose command line reads `sh -c 'sleep 30; :' agent
    /// --data-dir DIR`, as an agent's does.
    fn pretend_agent(dir: &Path) -> std::process::Child {
        let child = Command::new("sh")
            .args(["-c", "sleep 30; :", "agent", "--data-dir"])
            .arg(dir)
            .spawn()
            .unwrap();
        // Until the child has exec'd, /proc shows the test's own command
        // line: wait for the new one (at most 5 s).
        let cmdline = format!("/proc/{}/cmdline", child.id());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !std::fs::read(&cmdline).is_ok_and(|c| c.windows(10).any(|w| w == b"--data-dir"))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child
    }

    #[test]
    fn agents_are_known_by_their_data_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = ["agent-00", "agent-01", "agent-02"]
            .iter()
            .map(|n| tmp.path().join(n))
            .collect();
        let mut one = pretend_agent(&dirs[1]);
        // Same directory as a prefix is not the same directory.
        let mut other = pretend_agent(&tmp.path().join("agent-0"));
        let found = find_agents(&dirs);
        let pid = one.id() as i32;
        assert!(is_agent_of(pid, &dirs[1]));
        assert!(!is_agent_of(pid, &dirs[0]));
        let me = std::process::id() as i32;
        assert!(
            is_alive(me) && !is_agent_of(me, &dirs[1]),
            "a test is no agent"
        );
        one.kill().unwrap();
        other.kill().unwrap();
        assert_eq!(found, HashMap::from([(1, pid)]));

        // Killed but not reaped: a zombie, neither alive nor an agent.
        let deadline = Instant::now() + Duration::from_secs(10);
        while stat(pid).is_some_and(|s| !s.zombie) {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!is_alive(pid) && !is_agent_of(pid, &dirs[1]));
        assert!(find_agents(&dirs).is_empty());
        one.wait().unwrap();
        other.wait().unwrap();
        assert!(!is_alive(i32::MAX));
    }

    #[test]
    fn group_members_are_only_the_testnets_own() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        // A process in its own group, running inside the testnet directory.
        let mut inside = Command::new("sleep")
            .arg("30")
            .current_dir(&dir)
            .process_group(0)
            .spawn()
            .unwrap();
        let group = inside.id() as i32;
        // Another in that group but elsewhere, naming nothing of ours.
        let mut outside = Command::new("sleep")
            .arg("30")
            .current_dir("/")
            .process_group(group)
            .spawn()
            .unwrap();
        let members = group_members(group, &dir);
        inside.kill().unwrap();
        outside.kill().unwrap();
        inside.wait().unwrap();
        outside.wait().unwrap();
        assert_eq!(members, [group]);
    }
}
