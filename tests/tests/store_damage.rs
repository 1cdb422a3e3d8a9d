//! A damaged store is caught, never papered over (issue 27, item 2), with a
//! real agent and the real command line.
//!
//! An agent acknowledges 300 jobs (20 submits of 15 held procs) and is
//! stopped. Copies of its data directory then have sled's file cut to 25,
//! 50, 75 and 90% of its size, or one bit flipped in its middle. For each:
//! the agent refuses to start, naming what is missing and what to run;
//! `store check` reports the damage and exits 1; `store salvage` keeps the
//! damaged store aside whole and the agent then starts with the jobs that
//! survived, never a job that was not acknowledged, and the next submit
//! takes a cluster id never handed out before. `store check` refuses while
//! the agent runs.
//!
//! Every wait has a deadline; every process started is killed when the
//! test ends.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;

use support::*;

const CLUSTERS: u64 = 20;
const PROCS: u64 = 15;
const START_WITHIN: Duration = Duration::from_secs(30);

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn config(root: &Path) -> PathBuf {
    let config = root.join("agent.toml");
    std::fs::write(
        &config,
        "[network]\nmdns = false\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\n",
    )
    .unwrap();
    config
}

fn spawn_agent(data: &Path, config: &Path) -> (Reap, PathBuf) {
    let log = data.with_extension("log");
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap();
    let agent = Reap(
        Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
            .args(["agent", "--data-dir", data.to_str().unwrap(), "--config"])
            .arg(config)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap(),
    );
    (agent, log)
}

/// Starts the agent of `data` and waits until it answers `q`.
fn start(data: &Path, config: &Path) -> Reap {
    let (mut agent, log) = spawn_agent(data, config);
    let deadline = Instant::now() + START_WITHIN;
    loop {
        if let Some(status) = agent.0.try_wait().unwrap() {
            panic!(
                "the agent on {} exited ({status}):\n{}",
                data.display(),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        let cwd = data.parent().unwrap();
        if starling_in(cwd, &["q", "--data-dir", data.to_str().unwrap()])
            .status
            .success()
        {
            return agent;
        }
        assert!(
            Instant::now() < deadline,
            "the agent on {} did not answer within {START_WITHIN:?}",
            data.display()
        );
        std::thread::sleep(POLL);
    }
}

/// Stops an agent with SIGTERM and waits for it to exit.
fn stop(mut agent: Reap) {
    let pid = rustix::process::Pid::from_raw(agent.0.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let deadline = Instant::now() + START_WITHIN;
    while agent.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the agent did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs the agent of `data`, which must exit unsuccessfully within 30 s;
/// returns what it said.
fn refused_start(data: &Path, config: &Path) -> String {
    let (mut agent, log) = spawn_agent(data, config);
    let deadline = Instant::now() + START_WITHIN;
    let status = loop {
        if let Some(status) = agent.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the agent on a damaged store still runs after {START_WITHIN:?}:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(POLL);
    };
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "exited with {status}:\n{said}");
    assert!(
        !data.join("agent.pid").exists(),
        "a refused agent leaves no pid file"
    );
    said
}

fn ok(data: &Path, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--data-dir", data.to_str().unwrap()]);
    ok_in(data.parent().unwrap(), &all)
}

/// The ids of the jobs in the queue of the running agent of `data`.
fn queue(data: &Path) -> BTreeSet<(u64, u64)> {
    ok(data, &["q", "-af", "ClusterId", "ProcId"])
        .lines()
        .map(|l| {
            let mut f = l.split_whitespace().map(|n| n.parse().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect()
}

/// Submits one held cluster of `procs`; returns its cluster id.
fn submit(data: &Path, procs: u64) -> u64 {
    let file = data.with_extension("sub");
    std::fs::write(
        &file,
        format!("executable = /bin/true\nhold = true\nqueue {procs}\n"),
    )
    .unwrap();
    let said = ok(data, &["submit", file.to_str().unwrap()]);
    let cluster = said
        .split("submitted to cluster ")
        .nth(1)
        .and_then(|rest| rest.trim().trim_end_matches('.').parse().ok());
    cluster.unwrap_or_else(|| panic!("no cluster id in {said:?}"))
}

/// Copies the data directory (files and directories only: no socket).
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy(&entry.path(), &to.join(entry.file_name()));
        } else if kind.is_file() && entry.file_name() != "agent.pid" {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

fn damage(db: &Path, how: &str) {
    let mut bytes = std::fs::read(db).unwrap();
    match how.strip_prefix("cut-") {
        Some(percent) => bytes.truncate(bytes.len() * percent.parse::<usize>().unwrap() / 100),
        None => {
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x10;
        }
    }
    std::fs::write(db, bytes).unwrap();
}

#[test]
fn a_damaged_store_is_refused_checked_and_salvaged_and_no_id_is_reused() {
    let root = tempfile::tempdir().unwrap();
    let config = config(root.path());
    let seed = root.path().join("seed");

    let agent = start(&seed, &config);
    for cluster in 1..=CLUSTERS {
        assert_eq!(submit(&seed, PROCS), cluster);
    }
    let acknowledged = queue(&seed);
    assert_eq!(acknowledged.len() as u64, CLUSTERS * PROCS);
    // Not while the agent runs.
    for command in ["check", "salvage"] {
        let out = starling_in(
            &seed,
            &["store", command, "--data-dir", seed.to_str().unwrap()],
        );
        let (_, err) = text(&out);
        assert!(
            !out.status.success(),
            "store {command} ran beside the agent"
        );
        assert!(
            err.contains("is running") && err.contains("stop it first"),
            "{err}"
        );
    }
    stop(agent);
    let intact = ok(&seed, &["store", "check"]);
    assert!(intact.contains(": intact"), "{intact}");

    for how in ["cut-25", "cut-50", "cut-75", "cut-90", "flip"] {
        let data = root.path().join(how);
        copy(&seed, &data);
        let store = data.join("store");
        damage(&store.join("db"), how);

        // The agent refuses, naming what is missing and what to run.
        let said = refused_start(&data, &config);
        eprintln!("{how}: {}", said.trim_end());
        let dir = data.display().to_string();
        assert!(
            said.contains(&format!("the store at {dir}/store is damaged")),
            "{how}: {said}"
        );
        assert!(said.contains("acknowledged jobs missing"), "{how}: {said}");
        assert!(
            said.contains(&format!("starling store check --data-dir {dir}")),
            "{how}"
        );
        assert!(
            said.contains(&format!("starling store salvage --data-dir {dir}")),
            "{how}"
        );

        // check reports it and exits 1.
        let out = starling_in(&data, &["store", "check", "--data-dir", &dir]);
        let (report, err) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{how}: {report}{err}");
        assert!(report.contains("DAMAGED"), "{how}: {report}");
        assert!(
            report.contains("acknowledged jobs missing"),
            "{how}: {report}"
        );

        // salvage keeps the damaged store aside, whole.
        let damaged_db = std::fs::read(store.join("db")).unwrap();
        let salvaged = ok(&data, &["store", "salvage"]);
        eprintln!("{how}: {salvaged}");
        let aside: Vec<PathBuf> = std::fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("store.damaged-")
            })
            .collect();
        assert_eq!(aside.len(), 1, "{how}: {aside:?}");
        assert!(
            std::fs::read(aside[0].join("db")).unwrap() == damaged_db,
            "{how}: the damaged store was not kept as it was"
        );
        assert!(salvaged.contains("kept at"), "{how}: {salvaged}");

        // The agent starts with what survived, nothing more, and hands out
        // no id twice.
        let agent = start(&data, &config);
        let survived = queue(&data);
        assert!(
            survived.is_subset(&acknowledged),
            "{how}: jobs never acknowledged"
        );
        assert!(
            survived.len() < acknowledged.len(),
            "{how}: nothing was lost?"
        );
        assert!(
            salvaged.contains(&format!("queue: {} of 300 jobs recovered", survived.len())),
            "{how}: {salvaged}"
        );
        assert_eq!(submit(&data, 1), CLUSTERS + 1, "{how}: a cluster id reused");
        eprintln!("{how}: {} of 300 jobs survived", survived.len());
        stop(agent);
    }
}
