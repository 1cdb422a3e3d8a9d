//! `starling testnet up | status | down` with real agents: four agents in two
//! domains come up on loopback, see each other's machine ads through the
//! domains' trust policies, answer `starling status --agent`, and are all
//! gone after `down`.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use starling_testnet::Layout;

/// The longest any one command may take; `up` has its own, shorter timeout.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(240);

/// Kills every process of the testnet in `dir` when the test ends, passed or
/// failed: its process group (the agents, and anything they started), and
/// each agent named by a pid file, in case it left the group.
struct Cleanup<'a>(&'a Path);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let layout = Layout::load(self.0).ok().flatten();
        let group = layout.as_ref().and_then(|l| l.process_group);
        if let Some(pid) = group.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        for agent in layout.iter().flat_map(|l| l.agents.iter()) {
            let pid_file = self.0.join(&agent.name).join("agent.pid");
            let pid = std::fs::read_to_string(pid_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .and_then(rustix::process::Pid::from_raw);
            if let Some(pid) = pid {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// Runs `starling` with `args`, killing it if it outlives the timeout.
/// Output goes through files so that a full pipe cannot stall it.
fn starling(args: &[&str]) -> Output {
    let scratch = tempfile::tempdir().unwrap();
    let (out, err) = (scratch.path().join("out"), scratch.path().join("err"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("starling starts");
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "starling {args:?} took longer than {COMMAND_TIMEOUT:?}; stderr:\n{}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: std::fs::read(out).unwrap(),
        stderr: std::fs::read(err).unwrap(),
    }
}

fn ok(args: &[&str]) -> String {
    let out = starling(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "starling {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = &stat[stat.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|s| s != "Z" && s != "X")
        })
        .unwrap_or(false)
}

#[test]
fn four_agents_in_two_domains_come_up_see_each_other_and_go() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("net");
    let _cleanup = Cleanup(&dir);
    let d = dir.to_str().unwrap();

    let out = starling(&[
        "testnet",
        "up",
        "--dir",
        d,
        "--agents",
        "4",
        "--domains",
        "2",
        "--timeout",
        "180",
    ]);
    let up = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{up}\n{err}");
    assert!(up.contains("testnet up: 4 agents in 2 domains"), "{up}");
    // Not on a terminal: no progress at all, only the result.
    assert!(!err.contains("agents"), "{err}");
    assert!(
        up.contains(&format!("starling status --agent {d}/agent-00")),
        "{up}"
    );

    // `testnet status | head`: a closed output ends the printing quietly.
    let (reader, writer) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(reader);
    let writer = std::os::fd::OwnedFd::from(writer);
    let closed = Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
        .args(["testnet", "status", "--dir", d])
        .stdout(writer)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&closed.stderr);
    assert!(closed.status.success(), "{said}");
    assert_eq!(said, "", "testnet status complained of its closed output");

    // Every agent runs, has a peer and sees all four machine ads.
    let status = ok(&["testnet", "status", "--dir", d]);
    let rows: Vec<Vec<&str>> = status
        .lines()
        .filter(|l| l.starts_with("agent-"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4, "{status}");
    let mut pids = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        // AGENT ID DOMAIN PID STATE PEERS ADS LISTEN
        assert_eq!(row[0], format!("agent-{i:02}"), "{status}");
        assert_eq!(row[2], format!("d{}.testnet", i % 2), "{status}");
        assert_eq!(row[4], "running", "{status}");
        assert!(row[5].parse::<usize>().unwrap() >= 1, "{status}");
        assert_eq!(row[6], "4/4", "{status}");
        assert!(row[7].starts_with("/ip4/127.0.0.1/tcp/"), "{status}");
        let pid: i32 = row[3].parse().unwrap();
        assert!(alive(pid), "{status}");
        pids.push(pid);
    }
    assert!(status.contains("4 agents: 4 running, 0 not answering, 0 down"));

    // One agent's view, as a user asks for it: all four machines, both
    // domains (the other domain's ads are accepted through the policy).
    let view = ok(&["status", "--agent", &format!("{d}/agent-00")]);
    for i in 0..4 {
        let name = format!("slot1@agent-{i:02}.d{}.testnet", i % 2);
        assert!(view.contains(&name), "{name} missing:\n{view}");
    }

    // A second `up` over running agents is refused.
    let again = starling(&[
        "testnet",
        "up",
        "--dir",
        d,
        "--agents",
        "4",
        "--domains",
        "2",
    ]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("has running agents"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    let down = ok(&["testnet", "down", "--dir", d]);
    assert!(down.contains("testnet down: 4 stopped, 0 killed"), "{down}");
    for pid in &pids {
        assert!(!alive(*pid), "pid {pid} still runs after down");
    }
    let group = Layout::load(&dir).unwrap().unwrap().process_group;
    assert_eq!(group, None, "down forgets the process group");

    // Down again finds nothing; status says so and fails.
    let down = ok(&["testnet", "down", "--dir", d]);
    assert!(down.contains("4 were not running"), "{down}");
    let status = starling(&["testnet", "status", "--dir", d]);
    assert_eq!(status.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&status.stdout).contains("0 running, 0 not answering, 4 down"));
}

#[test]
fn progress_shows_on_a_terminal() {
    // `script` (util-linux) gives the command a terminal.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` command to give testnet up a terminal");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("net");
    let _cleanup = Cleanup(&dir);
    let d = dir.to_str().unwrap();
    let command = format!(
        "{} testnet up --dir {d} --agents 2 --timeout 120",
        env!("CARGO_BIN_EXE_starling-e2e")
    );
    let typescript = tmp.path().join("typescript");
    let mut child = Command::new("script")
        .args(["-qec", &command, typescript.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "testnet up under script took too long"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = std::fs::read_to_string(&typescript).unwrap_or_default();
    assert!(seen.contains("testnet up: 2 agents"), "{seen}");
    assert!(seen.contains("2/2 agents see every machine ad"), "{seen}");
    ok(&["testnet", "down", "--dir", d]);
}

#[test]
fn a_larger_pool_of_many_domains_keeps_few_connections_and_still_sees_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("net");
    let _cleanup = Cleanup(&dir);
    let d = dir.to_str().unwrap();
    // Six domains of four, each trusting the others: a random choice of
    // peers would leave most agents with no peer of their own domain (and
    // its ads unseen); the agents pick peers by domain instead.
    let agents = 24;
    ok(&[
        "testnet",
        "up",
        "--dir",
        d,
        "--agents",
        &agents.to_string(),
        "--domains",
        "6",
        "--timeout",
        "180",
    ]);
    // Within a few prune rounds no agent holds more than MAX_PEERS (16)
    // connections, and every one still sees every machine ad.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = ok(&["testnet", "status", "--dir", d]);
        let rows: Vec<Vec<String>> = status
            .lines()
            .filter(|l| l.starts_with("agent-"))
            .map(|l| l.split_whitespace().map(str::to_owned).collect())
            .collect();
        assert_eq!(rows.len(), agents, "{status}");
        let peers: Vec<usize> = rows.iter().map(|r| r[5].parse().unwrap()).collect();
        let all_seen = rows.iter().all(|r| r[6] == format!("{agents}/{agents}"));
        if peers.iter().all(|&p| (1..=16).contains(&p)) && all_seen {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "peers {peers:?}, all ads seen: {all_seen}\n{status}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // An agent killed as in a crash leaves every other view within
    // seconds (its domain's peers suspect it), not after its ad's
    // lifetime (three minutes); started again, it is back as fast.
    ok(&["testnet", "kill", "--dir", d, "agent-05"]);
    // Waits until every other agent shows `ads` machine ads, at most
    // `within`; `what` says what did not happen.
    let others_show = |ads: &str, within: Duration, what: &str| {
        let deadline = Instant::now() + within;
        loop {
            // `status` fails while an agent is down; its table is still there.
            let status =
                String::from_utf8_lossy(&starling(&["testnet", "status", "--dir", d]).stdout)
                    .into_owned();
            if status
                .lines()
                .filter(|l| l.starts_with("agent-") && !l.starts_with("agent-05 "))
                .all(|l| l.split_whitespace().nth(6) == Some(ads))
            {
                return;
            }
            assert!(Instant::now() < deadline, "{what}:\n{status}");
            std::thread::sleep(Duration::from_millis(250));
        }
    };
    others_show(
        "23/24",
        Duration::from_secs(10),
        "agent-05 still in some views 10 s after it was killed",
    );
    ok(&["testnet", "start", "--dir", d, "agent-05"]);
    others_show("24/24", Duration::from_secs(30), "agent-05 not back");
    // Killed again minutes later, it leaves as fast: its colleagues dialled
    // it after the first crash, so they do not dial it again at once, but at
    // their next tick (every 5 s), and suspect it when that dial fails.
    ok(&["testnet", "kill", "--dir", d, "agent-05"]);
    others_show(
        "23/24",
        Duration::from_secs(20),
        "agent-05, killed a second time, still in some views 20 s later",
    );
    ok(&["testnet", "down", "--dir", d]);
}

/// Agent `i`'s row of `testnet status`: AGENT ID DOMAIN PID STATE PEERS ADS
/// LISTEN.
fn status_row(d: &str, i: usize) -> Vec<String> {
    let status =
        String::from_utf8_lossy(&starling(&["testnet", "status", "--dir", d]).stdout).into_owned();
    status
        .lines()
        .find(|l| l.starts_with(&format!("agent-{i:02} ")))
        .unwrap_or_else(|| panic!("no agent-{i:02} in\n{status}"))
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn group_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn one_agent_killed_as_in_a_crash_starts_again_on_its_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("net");
    let _cleanup = Cleanup(&dir);
    let d = dir.to_str().unwrap();
    ok(&[
        "testnet",
        "up",
        "--dir",
        d,
        "--agents",
        "3",
        "--timeout",
        "180",
    ]);
    let id = status_row(d, 0)[1].clone();
    let first: i32 = status_row(d, 0)[3].parse().unwrap();
    let group = Layout::load(&dir).unwrap().unwrap().process_group;
    assert_eq!(group, Some(first), "the first agent leads the group");

    // SIGKILL, no cleanup: the pid file stays as a crash leaves it.
    let killed = ok(&["testnet", "kill", "--dir", d, "agent-00"]);
    assert_eq!(killed.trim(), format!("agent-00: killed (pid {first})"));
    assert!(!alive(first));
    assert!(dir.join("agent-00/agent.pid").exists());
    assert_eq!(status_row(d, 0)[4], "down");
    let again = ok(&["testnet", "kill", "--dir", d, "agent-00"]);
    assert_eq!(again.trim(), "agent-00: was not running");

    // Started again: same identity, in the testnet's process group, and it
    // finds the others although its own bootstrap list was empty.
    let started = ok(&["testnet", "start", "--dir", d, "agent-00"]);
    assert!(started.starts_with("agent-00: started (pid "), "{started}");
    let row = wait_for_row(d, 0, |row| row[4] == "running" && row[6] == "3/3");
    assert_eq!(row[1], id, "the same agent id");
    let pid: i32 = row[3].parse().unwrap();
    assert_ne!(pid, first);
    assert_eq!(group_of(pid), first, "in the testnet's process group");
    let config = std::fs::read_to_string(dir.join("agent-00/agent.toml")).unwrap();
    assert!(
        config.contains("bootstrap = [\"/ip4/127.0.0.1/tcp/"),
        "{config}"
    );

    let refused = starling(&["testnet", "start", "--dir", d, "agent-00"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("agent-00 is running already"), "{err}");
    let refused = starling(&["testnet", "kill", "--dir", d, "agent-07"]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("agent-00 to agent-02"),
        "{err}"
    );

    // SIGTERM stops cleanly (its pid file goes). With every agent gone,
    // one started alone leads a new group, which `down` then clears.
    let term = ok(&[
        "testnet", "kill", "--dir", d, "agent-01", "--signal", "term",
    ]);
    assert!(term.starts_with("agent-01: stopped (pid"), "{term}");
    assert!(!dir.join("agent-01/agent.pid").exists());
    ok(&["testnet", "kill", "--dir", d, "agent-00"]);
    ok(&["testnet", "kill", "--dir", d, "agent-02"]);
    ok(&["testnet", "start", "--dir", d, "agent-02"]);
    let pid: i32 = status_row(d, 2)[3].parse().unwrap();
    assert_eq!(group_of(pid), pid);
    assert_eq!(
        Layout::load(&dir).unwrap().unwrap().process_group,
        Some(pid)
    );
    let down = ok(&["testnet", "down", "--dir", d]);
    assert!(
        down.contains("1 stopped, 0 killed, 2 were not running"),
        "{down}"
    );
    assert!(!alive(pid));
}

/// Polls agent `i`'s status row until `good` holds (60 s at most).
fn wait_for_row(d: &str, i: usize, good: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let row = status_row(d, i);
        if good(&row) {
            return row;
        }
        assert!(Instant::now() < deadline, "agent-{i:02}: {row:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}
