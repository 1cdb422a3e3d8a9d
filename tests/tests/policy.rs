//! Owner policy and fair share on a real pool (`starling testnet up`):
//!
//! - the owner comes back: a machine whose policy says `SUSPEND =
//!   KeyboardIdle < 60` stops the running job (SIGSTOP) when its keyboard is
//!   used, lets it go on when the owner leaves, and vacates it (SIGTERM)
//!   when the owner stays; the job goes back to idle with its run time,
//!   waits while the owner works (`START` is false) and then runs to its
//!   end;
//! - two users share six slots: with equal factors each gets about half of
//!   the slot time; with factors 1 and 2, about two thirds and one third;
//! - a job the machine ranks higher, or (where `PREEMPTION_REQUIREMENTS`
//!   allows, and only then) of a user with a better priority, displaces
//!   the running one, which runs again later;
//! - `starling drain`: a graceful drain lets the job retire, a drained
//!   machine starts nothing, a quick drain vacates, `-cancel` resumes.
//!
//! The keyboard is a file named by `[machine] keyboard_devices`: touching it
//! is keyboard activity, and setting its time back an hour is the owner
//! leaving. Every wait polls with a deadline.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod support;

use support::*;

/// A job that writes its pid where it is told, runs long on its first
/// run, and leaves when asked (SIGTERM), noting it; on a later run it ends
/// at once.
const OWNER_JOB: &str = r#"#!/bin/sh
echo $$ > "$1"
if [ -e "$2" ]; then echo "second run"; exit 0; fi
trap 'echo vacated >> "$2"; exit 143' TERM
i=0
while [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done
echo "first run ran to its end"
"#;

/// Sets `path`'s access and modification times `ago_secs` in the past.
fn touch_ago(path: &Path, ago_secs: u64) {
    let when = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - ago_secs;
    let status = Command::new("touch")
        .arg("-d")
        .arg(format!("@{when}"))
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// The state letter of process `pid` (`T` when stopped), if it runs.
fn process_state(pid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Whether the process is stopped where it is: by SIGSTOP (state `T`), or
/// frozen with its whole cgroup (v1 `freezer.state`, v2 `cgroup.events`),
/// as an agent with cgroups suspends a job.
fn is_stopped(pid: &str) -> bool {
    if process_state(pid) == Some('T') {
        return true;
    }
    let groups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    groups.lines().any(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (
            parts.next(),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "freezer") {
            std::fs::read_to_string(format!("/sys/fs/cgroup/freezer/{path}/freezer.state"))
                .is_ok_and(|s| s.trim() == "FROZEN")
        } else if controllers.is_empty() {
            ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
                .iter()
                .any(|m| {
                    std::fs::read_to_string(format!("{m}/{path}/cgroup.events"))
                        .is_ok_and(|s| s.lines().any(|l| l.trim() == "frozen 1"))
                })
        } else {
            false
        }
    })
}

/// Writes an executable script.
fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn toml_str(s: &str) -> toml::Value {
    toml::Value::String(s.to_owned())
}

#[test]
fn the_owner_coming_back_suspends_then_vacates_the_job_which_runs_again_when_the_owner_leaves() {
    let pool = Pool::up_sharing(2);
    let work = shared_dir();
    let keyboard = work.path().join("keyboard");
    std::fs::write(&keyboard, "").unwrap();
    touch_ago(&keyboard, 3600);
    let _agent = pool.reconfigure(
        1,
        "machine",
        &[
            (
                "keyboard_devices",
                toml::Value::Array(vec![toml_str(keyboard.to_str().unwrap())]),
            ),
            ("policy_interval_secs", toml::Value::Integer(1)),
            ("start", toml_str("KeyboardIdle > 60")),
            ("want_suspend", toml_str("true")),
            ("suspend", toml_str("KeyboardIdle < 60")),
            ("continue", toml_str("KeyboardIdle > 60")),
            (
                "preempt",
                toml_str("Activity == \"Suspended\" && MyCurrentTime - EnteredCurrentActivity > 5"),
            ),
            ("machine_max_vacate_time", toml_str("10")),
        ],
        0,
    );
    let pid_file = work.path().join("job.pid");
    let vacated = work.path().join("vacated");
    script(&work.path().join("job.sh"), OWNER_JOB);
    std::fs::write(
        work.path().join("job.sub"),
        format!(
            "executable = job.sh\narguments = {} {}\noutput = out.txt\nlog = job.log\n\
             requirements = regexp(\"agent-01\", Name)\nqueue\n",
            pid_file.display(),
            vacated.display()
        ),
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let pid = loop {
        let pid = std::fs::read_to_string(&pid_file).unwrap_or_default();
        let pid = pid.trim().to_owned();
        if !pid.is_empty() && process_state(&pid).is_some() {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job did not start within 60 s:\n{}",
            pool.diagnose(0, "1.0", 2)
        );
        std::thread::sleep(POLL);
    };
    assert_eq!(pool.af(0, false, &["JobStatus"]), [["2"]]);

    // The owner comes back: the job stops where it is.
    touch_ago(&keyboard, 0);
    wait_for(Duration::from_secs(15), "the job suspended", || {
        is_stopped(&pid).then_some(())
    });
    wait_for(
        Duration::from_secs(15),
        "Activity Suspended in the ad",
        || (pool.machine_af(1, &["Activity"]) == ["Suspended"]).then_some(()),
    );

    // The owner leaves: it goes on.
    touch_ago(&keyboard, 3600);
    wait_for(Duration::from_secs(15), "the job continued", || {
        (process_state(&pid).is_some() && !is_stopped(&pid)).then_some(())
    });
    wait_for(Duration::from_secs(15), "Activity Busy in the ad", || {
        (pool.machine_af(1, &["Activity"]) == ["Busy"]).then_some(())
    });

    // The owner comes back and stays: suspended, then vacated after 5 s.
    touch_ago(&keyboard, 0);
    wait_for(Duration::from_secs(15), "the job suspended again", || {
        is_stopped(&pid).then_some(())
    });
    wait_for(Duration::from_secs(30), "the job vacated", || {
        vacated.exists().then_some(())
    });
    let row = wait_for(Duration::from_secs(30), "the job idle again", || {
        let rows = pool.af(
            0,
            false,
            &["JobStatus", "NumJobStarts", "RemoteWallClockTime"],
        );
        (rows.first()?.first()? == "1").then(|| rows[0].clone())
    });
    assert_eq!(row[1], "1", "{row:?}");
    let wall: f64 = row[2].parse().unwrap();
    assert!(wall >= 5.0, "the run time is recorded: {row:?}");
    let reason = pool.ok(0, work.path(), &["q", "-af", "LastVacateReason"]);
    assert!(reason.contains("owner policy"), "{reason}");
    // While the owner works the machine is the owner's: START is false.
    wait_for(Duration::from_secs(15), "State Owner in the ad", || {
        (pool.machine_af(1, &["State"]) == ["Owner"]).then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(pool.af(0, false, &["JobStatus"]), [["1"]]);

    // The owner leaves for good: the job runs again, to its end.
    touch_ago(&keyboard, 3600);
    pool.wait_queue_empty(0, Duration::from_secs(60));
    let done = pool.af(0, true, &["JobStatus", "NumJobStarts", "ExitCode"]);
    assert_eq!(done, [["4", "2", "0"]]);
    let out = std::fs::read_to_string(work.path().join("out.txt")).unwrap();
    assert_eq!(out.trim(), "second run");
    let log = std::fs::read_to_string(work.path().join("job.log")).unwrap();
    let codes: Vec<&str> = log
        .lines()
        .filter(|l| l.len() > 3 && l[..3].bytes().all(|b| b.is_ascii_digit()))
        .map(|l| &l[..3])
        .collect();
    assert_eq!(
        codes,
        ["000", "040", "001", "040", "004", "040", "001", "040", "040", "040", "005"],
        "{log}"
    );
}

/// A job that records its user, start and end, then sleeps.
const SHARE_JOB: &str = r#"#!/bin/sh
start=$(date +%s%N)
sleep "$2"
echo "$1 $start $(date +%s%N)"
"#;

/// Each user's share of the slot time while both had jobs waiting: from
/// the first start to the end of the first user's last job.
fn shares(dir: &Path, users: &[&str], procs: usize) -> BTreeMap<String, f64> {
    let mut runs: Vec<(String, u128, u128)> = Vec::new();
    for user in users {
        for p in 0..procs {
            let text = std::fs::read_to_string(dir.join(format!("{user}.{p}.out")))
                .unwrap_or_else(|e| panic!("{user}'s job {p} has no output: {e}"));
            let f: Vec<&str> = text.split_whitespace().collect();
            runs.push((
                f[0].to_owned(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            ));
        }
    }
    let start = runs.iter().map(|r| r.1).min().unwrap();
    let end = users
        .iter()
        .map(|u| {
            runs.iter()
                .filter(|r| r.0 == *u)
                .map(|r| r.2)
                .max()
                .unwrap()
        })
        .min()
        .unwrap();
    let mut time: BTreeMap<String, f64> = BTreeMap::new();
    for (user, s, e) in &runs {
        let overlap = e.min(&end).saturating_sub(*s.max(&start));
        *time.entry(user.clone()).or_default() += overlap as f64;
    }
    let total: f64 = time.values().sum();
    time.values_mut().for_each(|t| *t /= total);
    time
}

fn share_run(pool: &Pool, factors: Option<(f64, f64)>, procs: usize) -> BTreeMap<String, f64> {
    let work = tempfile::tempdir().unwrap();
    script(&work.path().join("job.sh"), SHARE_JOB);
    if let Some((a, b)) = factors {
        for (user, f) in [("group_a.alice", a), ("group_b.bob", b)] {
            pool.ok(
                0,
                work.path(),
                &[
                    "userprio",
                    "-setfactor",
                    &format!("{user}@d0.testnet"),
                    &f.to_string(),
                ],
            );
        }
    }
    for (group, user) in [("group_a", "alice"), ("group_b", "bob")] {
        std::fs::write(
            work.path().join(format!("{user}.sub")),
            format!(
                "executable = job.sh\narguments = {user} 1\noutput = {user}.$(Process).out\n\
                 accounting_group = {group}\naccounting_group_user = {user}\n\
                 requirements = !regexp(\"agent-00\", Name)\nqueue {procs}\n"
            ),
        )
        .unwrap();
    }
    pool.ok(0, work.path(), &["submit", "alice.sub"]);
    pool.ok(0, work.path(), &["submit", "bob.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(600));
    let table = pool.ok(0, work.path(), &["userprio"]);
    eprintln!("{table}");
    shares(work.path(), &["alice", "bob"], procs)
}

#[test]
fn two_users_share_six_slots_by_their_priority_factors() {
    // Four agents of two cpus: agent 0 submits, the others run six slots.
    let pool = Pool::up(4);
    // A short half-life, so that priorities follow the slots in use within
    // the run (150 one-second jobs each, about a minute on six slots); the
    // execute agents are the ones that decide.
    let mut agents = Vec::new();
    for i in 1..4 {
        agents.push(pool.reconfigure(
            i,
            "priority",
            &[("halflife_secs", toml::Value::Integer(10))],
            0,
        ));
    }
    let procs = 150;
    let equal = share_run(&pool, None, procs);
    eprintln!("equal factors: {equal:?}");
    for share in equal.values() {
        assert!(
            (share - 0.5).abs() <= 0.05,
            "equal factors give each about half: {equal:?}"
        );
    }
    let weighted = share_run(&pool, Some((1.0, 2.0)), procs);
    eprintln!("factors 1 and 2: {weighted:?}");
    let ratio = weighted["alice"] / weighted["bob"];
    assert!(
        (1.5..=2.7).contains(&ratio),
        "factors 1 and 2 give about 2:1, got {ratio:.2}: {weighted:?}"
    );
}

/// A job that notes its start, and leaves when asked (SIGTERM).
const RANKED_JOB: &str = r#"#!/bin/sh
echo "$1" >> "$2"
trap 'echo "$1 vacated" >> "$2"; exit 143' TERM
i=0
while [ $i -lt "$3" ]; do sleep 0.2; i=$((i+1)); done
"#;

#[test]
fn a_job_the_machine_ranks_higher_displaces_the_running_one() {
    let pool = Pool::up_sharing(2);
    let _agent = pool.reconfigure(
        1,
        "machine",
        &[
            (
                "rank",
                toml_str("ifThenElse(TARGET.Department =?= \"physics\", 10, 0)"),
            ),
            ("policy_interval_secs", toml::Value::Integer(1)),
            ("machine_max_vacate_time", toml_str("10")),
        ],
        0,
    );
    let work = shared_dir();
    let events = work.path().join("events");
    script(&work.path().join("job.sh"), RANKED_JOB);
    // Each job takes the whole machine (two cpus).
    let submit = |name: &str, extra: &str, loops: u32| {
        std::fs::write(
            work.path().join(format!("{name}.sub")),
            format!(
                "executable = job.sh\narguments = {name} {} {loops}\nrequest_cpus = 2\n\
                 output = {name}.out\nlog = {name}.log\n{extra}\
                 requirements = regexp(\"agent-01\", Name)\nqueue\n",
                events.display()
            ),
        )
        .unwrap();
        pool.ok(0, work.path(), &["submit", &format!("{name}.sub")]);
    };
    submit("low", "", 100);
    wait_for(Duration::from_secs(60), "the low job running", || {
        std::fs::read_to_string(&events)
            .ok()?
            .contains("low")
            .then_some(())
    });
    submit("high", "+Department = \"physics\"\n", 5);
    // The high job takes the machine; the low one is vacated, goes back
    // to idle with its run time, and runs again once the high one is done.
    pool.wait_queue_empty(0, Duration::from_secs(120));
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, ["low", "low vacated", "high", "low"], "{text}");
    let done = pool.af(
        0,
        true,
        &[
            "ClusterId",
            "NumJobStarts",
            "RemoteWallClockTime",
            "LastVacateReason",
        ],
    );
    let low = done.iter().find(|r| r[0] == "1").expect("the low job done");
    assert_eq!(low[1], "2", "{done:?}");
    let reason = pool.ok(0, work.path(), &["history", "-af", "LastVacateReason"]);
    assert!(reason.contains("ranks higher"), "{reason}");
}

/// The event codes of a user log, in order.
fn log_codes(path: &Path) -> Vec<String> {
    let log = std::fs::read_to_string(path).unwrap();
    log.lines()
        .filter(|l| l.len() > 3 && l[..3].bytes().all(|b| b.is_ascii_digit()))
        .map(|l| l[..3].to_owned())
        .collect()
}

/// A pool of two whose agent 1 checks its policy every second and vacates
/// with 10 s of grace (and has `preemption_requirements`, if given); alice
/// (`group_a.alice`, factor 1000) has a far worse priority than bob
/// (`group_b.bob`, factor 1), set on agent 0 and seen by agent 1.
fn priority_pool(preemption_requirements: Option<&str>) -> (Pool, Reap) {
    let pool = Pool::up_sharing(2);
    let mut settings = vec![
        ("policy_interval_secs", toml::Value::Integer(1)),
        ("machine_max_vacate_time", toml_str("10")),
    ];
    if let Some(expr) = preemption_requirements {
        settings.push(("preemption_requirements", toml_str(expr)));
    }
    let agent = pool.reconfigure(1, "machine", &settings, 0);
    let cwd = std::env::temp_dir();
    for (user, factor) in [("group_a.alice", "1000"), ("group_b.bob", "1")] {
        pool.ok(
            0,
            &cwd,
            &[
                "userprio",
                "-setfactor",
                &format!("{user}@d0.testnet"),
                factor,
            ],
        );
    }
    // Agent 1 decides, from the factors in agent 0's ad.
    wait_for(
        Duration::from_secs(60),
        "agent 1 seeing the priority factors",
        || {
            let out = pool.run(
                1,
                &cwd,
                &[
                    "status",
                    "-constraint",
                    "regexp(\"agent-00\", Name)",
                    "-af",
                    "StarlingPrioFactors",
                ],
            );
            let text = String::from_utf8_lossy(&out.stdout);
            (text.contains("group_a.alice@d0.testnet") && text.contains("group_b.bob@d0.testnet"))
                .then_some(())
        },
    );
    (pool, agent)
}

/// Submits on agent 0 a RANKED_JOB of user `name` in `group` that takes
/// the whole of agent 1 (two cpus) and loops `loops` times.
fn submit_as(pool: &Pool, work: &Path, events: &Path, name: &str, group: &str, loops: u32) {
    std::fs::write(
        work.join(format!("{name}.sub")),
        format!(
            "executable = job.sh\narguments = {name} {} {loops}\nrequest_cpus = 2\n\
             output = {name}.out\nlog = {name}.log\n\
             accounting_group = {group}\naccounting_group_user = {name}\n\
             requirements = regexp(\"agent-01\", Name)\nqueue\n",
            events.display()
        ),
    )
    .unwrap();
    pool.ok(0, work, &["submit", &format!("{name}.sub")]);
}

/// Alice's job of `loops` fifths of a second takes agent 1; once it runs,
/// bob submits a short one. Returns the work directory and the events file.
fn alice_runs_then_bob_asks(pool: &Pool, loops: u32) -> (tempfile::TempDir, std::path::PathBuf) {
    let work = shared_dir();
    let events = work.path().join("events");
    script(&work.path().join("job.sh"), RANKED_JOB);
    submit_as(pool, work.path(), &events, "alice", "group_a", loops);
    wait_for(Duration::from_secs(60), "alice's job running", || {
        std::fs::read_to_string(&events)
            .ok()?
            .contains("alice")
            .then_some(())
    });
    submit_as(pool, work.path(), &events, "bob", "group_b", 5);
    (work, events)
}

#[test]
fn a_user_with_a_better_priority_displaces_another_users_job_where_preemption_requirements_allow() {
    let (pool, _agent) = priority_pool(Some("SubmitterUserPrio < RemoteUserPrio"));
    let (work, events) = alice_runs_then_bob_asks(&pool, 100);
    // Bob's better priority takes the machine; alice's job is vacated,
    // goes back to idle with its run time, and runs again after bob's.
    pool.wait_queue_empty(0, Duration::from_secs(120));
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, ["alice", "alice vacated", "bob", "alice"], "{text}");
    let done = pool.af(
        0,
        true,
        &["ClusterId", "NumJobStarts", "RemoteWallClockTime"],
    );
    let alice = done.iter().find(|r| r[0] == "1").expect("alice's job done");
    assert_eq!(alice[1], "2", "{done:?}");
    let wall: f64 = alice[2].parse().unwrap();
    assert!(wall > 0.0, "alice's run time is recorded: {done:?}");
    let bob = done.iter().find(|r| r[0] == "2").expect("bob's job done");
    assert_eq!(bob[1], "1", "{done:?}");
    let reason = pool.ok(0, work.path(), &["history", "-af", "LastVacateReason"]);
    assert!(
        reason.contains("whose priority") && reason.contains("group_b.bob@d0.testnet"),
        "{reason}"
    );
    assert_eq!(
        log_codes(&work.path().join("alice.log")),
        ["000", "040", "001", "040", "004", "040", "001", "040", "040", "040", "005"]
    );
}

#[test]
fn without_preemption_requirements_a_better_priority_waits_for_the_running_job() {
    // The same pool and priorities, PREEMPTION_REQUIREMENTS left at its
    // default (false).
    let (pool, _agent) = priority_pool(None);
    let (work, events) = alice_runs_then_bob_asks(&pool, 50);
    // The policy runs every second: time enough to preempt, were it allowed.
    std::thread::sleep(Duration::from_secs(3));
    let rows = pool.af(0, false, &["ClusterId", "JobStatus"]);
    assert!(
        rows.contains(&vec!["1".to_owned(), "2".to_owned()])
            && rows.contains(&vec!["2".to_owned(), "1".to_owned()]),
        "alice's job runs and bob's waits: {rows:?}"
    );
    assert_eq!(std::fs::read_to_string(&events).unwrap().trim(), "alice");
    pool.wait_queue_empty(0, Duration::from_secs(90));
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, ["alice", "bob"], "{text}");
    let done = pool.af(0, true, &["ClusterId", "NumJobStarts"]);
    let mut starts: Vec<(String, String)> =
        done.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    starts.sort();
    assert_eq!(
        starts,
        [
            ("1".to_owned(), "1".to_owned()),
            ("2".to_owned(), "1".to_owned())
        ],
        "each job started once"
    );
    let reason = pool.ok(0, work.path(), &["history", "-af", "LastVacateReason"]);
    assert!(!reason.contains("whose priority"), "{reason}");
    assert_eq!(
        log_codes(&work.path().join("alice.log")),
        ["000", "040", "001", "040", "040", "040", "005"]
    );
}

/// A job that notes its start and end, leaves when asked (SIGTERM), and
/// runs `$3` fifths of a second.
const DRAINED_JOB: &str = r#"#!/bin/sh
echo "$1" >> "$2"
trap 'echo "$1 vacated" >> "$2"; exit 143' TERM
i=0
while [ $i -lt "$3" ]; do sleep 0.2; i=$((i+1)); done
echo "$1 done" >> "$2"
"#;

#[test]
fn a_drained_machine_lets_its_job_retire_takes_no_new_one_and_vacates_on_a_quick_drain() {
    let pool = Pool::up_sharing(2);
    let _agent = pool.reconfigure(
        1,
        "machine",
        &[
            ("policy_interval_secs", toml::Value::Integer(1)),
            ("max_job_retirement_time", toml_str("300")),
            ("machine_max_vacate_time", toml_str("10")),
        ],
        0,
    );
    let work = shared_dir();
    let events = work.path().join("events");
    script(&work.path().join("job.sh"), DRAINED_JOB);
    let submit = |name: &str, loops: u32| {
        std::fs::write(
            work.path().join(format!("{name}.sub")),
            format!(
                "executable = job.sh\narguments = {name} {} {loops}\nrequest_cpus = 2\n\
                 output = {name}.out\nrequirements = regexp(\"agent-01\", Name)\nqueue\n",
                events.display()
            ),
        )
        .unwrap();
        pool.ok(0, work.path(), &["submit", &format!("{name}.sub")]);
    };
    let events_file = events.as_path();
    let event = |what: &str| {
        let what = what.to_owned();
        move || {
            std::fs::read_to_string(events_file)
                .ok()?
                .lines()
                .any(|l| l == what)
                .then_some(())
        }
    };
    let state = || pool.machine_af(1, &["State", "Activity"]).join(" ");

    // A graceful drain lets the running job run out its retirement time.
    submit("first", 60);
    wait_for(
        Duration::from_secs(60),
        "the first job running",
        event("first"),
    );
    let said = pool.ok(
        1,
        work.path(),
        &["drain", "-graceful", "-reason", "kernel upgrade"],
    );
    assert!(said.contains("Draining (graceful): 1 job"), "{said}");
    wait_for(
        Duration::from_secs(30),
        "Drained/Retiring in the ad",
        || (state() == "Drained Retiring").then_some(()),
    );
    wait_for(
        Duration::from_secs(60),
        "the first job's end",
        event("first done"),
    );
    wait_for(Duration::from_secs(30), "Drained/Idle in the ad", || {
        (state() == "Drained Idle").then_some(())
    });
    // A drained machine takes no new job, and says why.
    submit("second", 1);
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        event("second")().is_none(),
        "a job started on a drained machine"
    );
    let why = pool.ok(0, work.path(), &["why", "2.0"]);
    assert!(why.contains("Draining"), "{why}");
    let said = pool.ok(1, work.path(), &["drain", "-cancel"]);
    assert!(said.contains("Not draining"), "{said}");
    wait_for(
        Duration::from_secs(60),
        "the second job's end",
        event("second done"),
    );

    // A quick drain vacates the running job, which goes back to idle and
    // runs again once the drain is cancelled.
    submit("third", 100);
    wait_for(
        Duration::from_secs(60),
        "the third job running",
        event("third"),
    );
    pool.ok(1, work.path(), &["drain", "-quick", "-reason", "disk swap"]);
    wait_for(
        Duration::from_secs(30),
        "the third job vacated",
        event("third vacated"),
    );
    wait_for(Duration::from_secs(30), "the third job idle again", || {
        let rows = pool.af(0, false, &["ClusterId", "JobStatus", "NumJobStarts"]);
        rows.iter()
            .any(|r| r[0] == "3" && r[1] == "1" && r[2] == "1")
            .then_some(())
    });
    wait_for(
        Duration::from_secs(30),
        "Drained/Idle after the vacate",
        || (state() == "Drained Idle").then_some(()),
    );
    // Another drain is refused while one is in force.
    let out = pool.run(1, work.path(), &["drain", "-fast"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("cancel it first"),
        "{err}"
    );
    pool.ok(1, work.path(), &["drain", "-cancel"]);
    wait_for(
        Duration::from_secs(60),
        "the third job running again",
        || {
            let text = std::fs::read_to_string(&events).ok()?;
            (text.lines().filter(|l| *l == "third").count() == 2).then_some(())
        },
    );
    pool.ok(0, work.path(), &["rm", "3"]);
    pool.wait_queue_empty(0, Duration::from_secs(60));
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "first",
            "first done",
            "second",
            "second done",
            "third",
            "third vacated"
        ],
        "{text}"
    );
    let reason = pool.ok(0, work.path(), &["history", "3", "-af", "LastVacateReason"]);
    assert!(reason.contains("draining (quick): disk swap"), "{reason}");
}
