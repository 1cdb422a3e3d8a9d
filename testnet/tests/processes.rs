//! `up`, `status` and `down` against stand-in agents: shell processes that
//! look like `starling agent --data-dir DIR` to `/proc` and write a pid
//! file, but serve no control socket. They cover what the real agent never
//! does on purpose: dying at start, never answering, ignoring SIGTERM,
//! leaving a child behind.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use starling_testnet::processes::{AgentState, Stopped};
use starling_testnet::{layout, Layout, UpOptions};

/// Kills a process group when the test ends, passed or failed.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Starts a stand-in agent for `name`, in process group `group` (its own
/// when 0). It writes its pid file, then either dies on SIGTERM (leaving a
/// `sleep` behind) or ignores it.
fn stand_in(layout: &Layout, name: &str, ignores_term: bool, group: i32) -> Child {
    let agent = layout.agents.iter().find(|a| a.name == name).unwrap();
    let dir = layout.agent_dir(agent);
    let script = if ignores_term {
        // `; :` keeps sh from exec'ing sleep, so sh stays the agent.
        "trap '' TERM; echo $$ > agent.pid; sleep 60; :"
    } else {
        "echo $$ > agent.pid; sleep 60 & wait"
    };
    let child = Command::new("sh")
        .args(["-c", script, "agent", "--data-dir"])
        .arg(&dir)
        .current_dir(&dir)
        .process_group(group)
        .spawn()
        .unwrap();
    let pid_file = dir.join("agent.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&pid_file).map_or(true, |t| t.trim().is_empty()) {
        assert!(Instant::now() < deadline, "{name} wrote no pid file");
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

/// Live (not zombie) processes in process group `group`.
fn group_alive(group: i32) -> Vec<i32> {
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .collect();
        if rest[2].parse::<i32>() == Ok(group) && rest[0] != "Z" {
            alive.push(pid);
        }
    }
    alive
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn down_stops_what_stops_kills_what_does_not_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("net");
    let mut layout = layout::prepare(&dir, 3, 2, &[]).unwrap();
    let mut stubborn = stand_in(&layout, "agent-00", true, 0);
    let group = stubborn.id() as i32;
    let mut guard = GroupGuard(Some(group));
    let mut polite = stand_in(&layout, "agent-01", false, group);
    layout.process_group = Some(group);
    layout.save().unwrap();

    let (_, statuses) = starling_testnet::status(&dir).unwrap();
    let pids: Vec<Option<i32>> = statuses.iter().map(|s| s.state.pid()).collect();
    assert_eq!(
        pids,
        [Some(group), Some(polite.id() as i32), None],
        "{statuses:?}"
    );
    // They serve no control socket: running, but not answering.
    assert!(matches!(statuses[0].state, AgentState::NotAnswering { .. }));
    assert!(matches!(statuses[2].state, AgentState::Down));

    // An `up` over running agents is refused, naming them.
    let options = UpOptions {
        domains: 2,
        ..UpOptions::new(&dir, 3, "/nonexistent/starling")
    };
    let err = format!(
        "{:#}",
        starling_testnet::up(&options, &mut |_| {}).unwrap_err()
    );
    assert!(err.contains("has running agents"), "{err}");
    assert!(err.contains(&format!("agent-00 (pid {group})")), "{err}");

    let started = Instant::now();
    let report = starling_testnet::down(&dir, Duration::from_secs(1), &mut |_| {}).unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let outcomes: Vec<Stopped> = report.agents.iter().map(|(_, s)| *s).collect();
    assert_eq!(
        outcomes,
        [Stopped::Killed, Stopped::Cleanly, Stopped::NotRunning]
    );
    // The two `sleep`s the stand-ins left behind went too.
    assert_eq!(report.others_killed, 2, "{report:?}");
    assert!(group_alive(group).is_empty(), "{:?}", group_alive(group));
    assert!(stubborn.wait().is_ok() && polite.wait().is_ok());
    guard.0 = None;
    // The killed agent's stale pid file is gone; the layout forgets the group.
    assert!(!dir.join("agent-00/agent.pid").exists());
    assert_eq!(Layout::load(&dir).unwrap().unwrap().process_group, None);

    // Again: nothing to do.
    let report = starling_testnet::down(&dir, Duration::from_secs(1), &mut |_| {}).unwrap();
    assert!(report.agents.iter().all(|(_, s)| *s == Stopped::NotRunning));
    let (_, statuses) = starling_testnet::status(&dir).unwrap();
    assert!(statuses.iter().all(|s| !s.state.is_running()));
}

#[test]
fn an_agent_that_dies_at_start_is_reported_with_its_log() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = script(
        tmp.path(),
        "starling",
        "echo \"cannot start: $*\" >&2\nexit 3",
    );
    let dir = tmp.path().join("net");
    let err = format!(
        "{:#}",
        starling_testnet::up(&UpOptions::new(&dir, 2, &fake), &mut |_| {}).unwrap_err()
    );
    assert!(err.contains("agent-00 exited (exit status: 3)"), "{err}");
    assert!(err.contains("agent-00/agent.log"), "{err}");
    assert!(err.contains("cannot start: agent --data-dir"), "{err}");
    assert!(!err.contains("left running"), "nothing else started: {err}");
}

#[test]
fn an_agent_that_never_answers_times_out_and_down_still_finds_it() {
    let tmp = tempfile::tempdir().unwrap();
    // Runs, but neither writes a pid file nor answers: only its process
    // group and working directory tie it to the testnet.
    let fake = script(tmp.path(), "starling", "exec sleep 60");
    let dir = tmp.path().canonicalize().unwrap().join("net");
    let options = UpOptions {
        timeout: Duration::from_secs(1),
        ..UpOptions::new(&dir, 2, &fake)
    };
    let started = Instant::now();
    let err = format!(
        "{:#}",
        starling_testnet::up(&options, &mut |_| {}).unwrap_err()
    );
    let group = Layout::load(&dir).unwrap().unwrap().process_group;
    let _guard = GroupGuard(group);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(err.contains("did not come up within 1 s"), "{err}");
    assert!(err.contains("agent-00: not answering"), "{err}");
    assert!(err.contains("starling testnet down --dir"), "{err}");
    let group = group.expect("the first agent leads a process group");
    assert_eq!(group_alive(group).len(), 1);

    let report = starling_testnet::down(&dir, Duration::from_secs(1), &mut |_| {}).unwrap();
    assert_eq!(report.others_killed, 1, "{report:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !group_alive(group).is_empty() {
        assert!(Instant::now() < deadline, "{:?}", group_alive(group));
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ports_in_use_and_bad_options_are_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let fake = script(tmp.path(), "starling", "exit 1");
    let dir = tmp.path().join("net");
    let options = UpOptions {
        base_port: Some(port),
        ..UpOptions::new(&dir, 1, &fake)
    };
    let err = format!(
        "{:#}",
        starling_testnet::up(&options, &mut |_| {}).unwrap_err()
    );
    assert!(
        err.contains(&format!("port {port} on 127.0.0.1 is not free")),
        "{err}"
    );
    assert!(!dir.join("agent-00/agent.log").exists(), "no agent started");

    let options = UpOptions {
        base_port: Some(65_535),
        ..UpOptions::new(&dir, 2, &fake)
    };
    let err = format!(
        "{:#}",
        starling_testnet::up(&options, &mut |_| {}).unwrap_err()
    );
    assert!(err.contains("needs ports 65535 to 65536"), "{err}");
}
