//! Running jobs that move to better machines, with real agents on
//! loopback (issue 20):
//!
//! - the owner of the machine a job runs on comes back: the job is not
//!   just vacated but moved, its new machine claimed before it leaves,
//!   and it finishes there from its checkpoint;
//! - with Dynamite's threshold set, a job on an overloaded machine moves to
//!   one with capacity; two machines of equal load never trade it, before
//!   or after the move;
//! - `starling migrate --to` a machine that dies mid-move: the job resumes
//!   from its last checkpoint elsewhere and runs to completion once.
//!
//! Each agent emulates its owner: `[machine] keyboard_devices` (touching
//! the file is the owner at the keyboard) and `[machine] owner_load_file`
//! (the load of the owner's processes). The job counts steps in a `state`
//! file its checkpoints carry, and writes at each start the step it starts
//! from and the host into a ledger outside the sandbox: a job that lost
//! its progress would start from 0 twice. Every wait polls with a
//! deadline.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

/// The exit code the test job checkpoints with.
const CKPT: &str = "85";

/// A job of `total` steps of a quarter second that checkpoints every 8
/// steps and, sent SIGTERM (a vacate), checkpoints and leaves after
/// `linger` seconds. Each start writes `start N HOST` into the ledger.
fn job(dir: &Path, ledger: &Path, total: u32, linger: u32, requirements: &str) {
    let script = format!(
        "#!/bin/sh\nn=0\n[ -f state ] && n=$(cat state)\n\
         host=$(grep '^StarlingHost' \"$_CONDOR_MACHINE_AD\" | cut -d'\"' -f2)\n\
         echo \"start $n $host\" >> \"$1\"\n\
         trap 'echo \"term $n $host\" >> \"$1\"; sleep {linger}; exit {CKPT}' TERM\n\
         while [ $n -lt {total} ]; do\n  n=$((n+1))\n  echo $n > state\n  sleep 0.25\n  \
         if [ $((n % 8)) -eq 0 ] && [ $n -lt {total} ]; then exit {CKPT}; fi\ndone\n\
         echo \"finished $n $host\" >> \"$1\"\n"
    );
    let exe = dir.join("steps.sh");
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("job.sub"),
        format!(
            "executable = steps.sh\narguments = \"{}\"\nlog = job.log\noutput = out.txt\n\
             transfer_output_files = state\ncheckpoint_exit_code = {CKPT}\n\
             +JobLeaseDuration = 6\nrequirements = {requirements}\n\
             rank = StarlingHost == \"agent-01.d0.testnet\"\nqueue\n",
            ledger.display()
        ),
    )
    .unwrap();
}

/// Each start of the job: the step it began from and its host.
fn starts(ledger: &Path) -> Vec<(u32, String)> {
    lines(ledger, "start ")
}

fn lines(ledger: &Path, prefix: &str) -> Vec<(u32, String)> {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix(prefix)?.split_whitespace();
            Some((words.next()?.parse().ok()?, words.next()?.to_owned()))
        })
        .collect()
}

/// A pool whose jobs run as `nobody` with the machine's /tmp (so they can
/// write the ledger), whose ads are refreshed every 2 s and expire a few
/// seconds after an agent dies.
fn pool(agents: usize) -> Pool {
    let mut args = vec!["--refresh-secs", "2", "--lifetime-secs", "6"];
    if rustix::process::geteuid().is_root() {
        args.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    Pool::up_as(None, agents, &args)
}

/// Sets `(section, key, value)`s in agent `i`'s `agent.toml` and starts it
/// again; returns once agent 0 sees it.
fn configure(pool: &Pool, i: usize, settings: &[(&str, &str, toml::Value)]) {
    pool.crash(i);
    let path = pool.agent(i).join("agent.toml");
    let mut config: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    for (section, key, value) in settings {
        config
            .entry(*section)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .unwrap()
            .insert((*key).to_owned(), value.clone());
    }
    std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
    pool.restart(i);
    let name = format!("agent-{i:02}");
    wait_for(
        Duration::from_secs(30),
        "the agent back in the view",
        || {
            let out = pool.run(0, &std::env::temp_dir(), &["status", "-af", "Name"]);
            String::from_utf8_lossy(&out.stdout)
                .contains(&name)
                .then_some(())
        },
    );
}

fn str_value(s: &str) -> toml::Value {
    toml::Value::String(s.to_owned())
}

/// One attribute of job 1.0 (queue, else history); `None` if undefined.
fn attr(pool: &Pool, name: &str) -> Option<String> {
    for history in [false, true] {
        if let Some(row) = pool.af(0, history, &[name]).into_iter().next() {
            let value = row.first()?.trim().trim_matches('"').to_owned();
            return (value != "undefined").then_some(value);
        }
    }
    None
}

/// A text attribute of job 1.0 in the queue, whole.
fn text(pool: &Pool, name: &str) -> String {
    pool.ok(0, &std::env::temp_dir(), &["q", "-af", name])
}

/// The host (`agent-NN`) job 1.0 runs on, if it runs.
fn running_on(pool: &Pool) -> Option<String> {
    let rows = pool.af(0, false, &["JobStatus", "RemoteHost"]);
    let row = rows.first()?;
    (row[0] == "2").then(|| row[1].split('@').nth(1).unwrap_or(&row[1]).to_owned())
}

fn wait_running_on(pool: &Pool, host: &str, within: Duration, what: &str) {
    wait_for(within, what, || {
        running_on(pool).filter(|h| h.starts_with(host)).map(|_| ())
    });
}

/// Submits [`job`] (any machine but agent-00, agent-01 preferred) and
/// waits until it runs on agent-01 and has taken a checkpoint.
fn submit_on_agent_01(pool: &Pool, dir: &Path, ledger: &Path, total: u32, linger: u32) {
    job(
        dir,
        ledger,
        total,
        linger,
        "StarlingHost =!= \"agent-00.d0.testnet\"",
    );
    pool.ok(0, dir, &["submit", "job.sub"]);
    wait_running_on(
        pool,
        "agent-01",
        Duration::from_secs(60),
        "the job on agent-01",
    );
    wait_for(Duration::from_secs(60), "a checkpoint", || {
        attr(pool, "NumCkpts")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| *n >= 1)
    });
}

/// Asserts the job finished once, never started over, and moved `moves`
/// times.
fn assert_finished_with_progress(pool: &Pool, ledger: &Path, moves: &str) {
    pool.wait_queue_empty(0, Duration::from_secs(120));
    let done = pool.af(0, true, &["JobStatus", "ExitCode", "StarlingNumMigrations"]);
    assert_eq!(
        done,
        [["4", "0", moves]],
        "{}",
        std::fs::read_to_string(ledger).unwrap()
    );
    let starts = starts(ledger);
    assert_eq!(
        starts.iter().filter(|(step, _)| *step == 0).count(),
        1,
        "the job started over: {starts:?}"
    );
    assert_eq!(lines(ledger, "finished ").len(), 1, "{starts:?}");
}

#[test]
fn a_job_whose_owner_comes_back_moves_to_an_idle_machine_and_finishes_there_from_its_checkpoint() {
    let pool = pool(3);
    let work = shared_dir();
    let keyboard = work.path().join("keyboard");
    std::fs::write(&keyboard, "").unwrap();
    set_idle(&keyboard, 3600);
    configure(
        &pool,
        1,
        &[
            (
                "machine",
                "keyboard_devices",
                toml::Value::Array(vec![str_value(keyboard.to_str().unwrap())]),
            ),
            ("machine", "policy_interval_secs", toml::Value::Integer(1)),
            ("machine", "start", str_value("KeyboardIdle > 60")),
            ("machine", "preempt", str_value("KeyboardIdle < 60")),
            ("machine", "machine_max_vacate_time", str_value("20")),
        ],
    );
    let ledger = work.path().join("ledger");
    submit_on_agent_01(&pool, work.path(), &ledger, 200, 0);

    // The owner comes back: the job moves, as soon as it left.
    set_idle(&keyboard, 0);
    wait_running_on(
        &pool,
        "agent-02",
        Duration::from_secs(60),
        "the job moved to agent-02",
    );
    let last = text(&pool, "StarlingLastMigration");
    assert!(last.contains("owner"), "{last}");
    let moving: f64 = attr(&pool, "StarlingMigrationTime")
        .unwrap()
        .parse()
        .unwrap();
    assert!(moving > 0.0 && moving < 60.0, "{moving}");
    // The machine vacated it (its owner policy), the move took it on.
    let reason = text(&pool, "LastVacateReason");
    assert!(reason.contains("owner policy"), "{reason}");
    assert!(last.contains("to slot1@agent-02"), "{last}");

    assert_finished_with_progress(&pool, &ledger, "1");
    let starts = starts(&ledger);
    let resumed = starts
        .iter()
        .find(|(_, host)| host.starts_with("agent-02"))
        .unwrap();
    assert!(resumed.0 >= 8, "resumed from its checkpoint: {starts:?}");
    // The user log tells the move as HTCondor tells an eviction and a new
    // execution.
    let log = std::fs::read_to_string(work.path().join("job.log")).unwrap();
    assert!(log.contains("Job was checkpointed"), "{log}");
    let executions = log.lines().filter(|l| l.starts_with("001 ")).count();
    assert_eq!(executions, 2, "{log}");
}

#[test]
fn with_a_threshold_an_overloaded_machine_sheds_its_job_and_equal_machines_never_trade_it() {
    let pool = pool(3);
    let work = shared_dir();
    let cpus: f64 = pool.machine_af(1, &["TotalCpus"])[0].parse().unwrap();
    // Loads where Dynamite's rule alone (T = 0.4) would move the job from
    // either machine to the other: the load per processor here, with the
    // job, is above T, and the other has more than 1 - T free. Counting
    // the job where it would go, neither is better.
    let equal = (0.4 * cpus - 0.5).max(0.0);
    // The submit agent keeps its own limits on moves: a short residence.
    configure(
        &pool,
        0,
        &[("migration", "min_residence_secs", toml::Value::Integer(2))],
    );
    let loads: Vec<_> = (1..=2)
        .map(|i| work.path().join(format!("load-{i}")))
        .collect();
    for (i, load) in loads.iter().enumerate() {
        std::fs::write(load, format!("{equal:.2} 0 0 1/1 1\n")).unwrap();
        configure(
            &pool,
            i + 1,
            &[
                (
                    "machine",
                    "owner_load_file",
                    str_value(load.to_str().unwrap()),
                ),
                ("migration", "threshold_percent", toml::Value::Integer(40)),
                ("migration", "interval_secs", toml::Value::Integer(1)),
                ("migration", "min_residence_secs", toml::Value::Integer(2)),
            ],
        );
    }
    let ledger = work.path().join("ledger");
    job(
        work.path(),
        &ledger,
        240,
        0,
        "StringListMember(StarlingHost, \"agent-01.d0.testnet,agent-02.d0.testnet\")",
    );
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_running_on(
        &pool,
        "agent-01",
        Duration::from_secs(60),
        "the job on agent-01",
    );

    // Equal machines: it stays.
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(running_on(&pool).as_deref(), Some("agent-01.d0.testnet"));
    assert_eq!(attr(&pool, "StarlingNumMigrations"), None);

    // agent-01's owner loads it: the job moves to agent-02.
    std::fs::write(&loads[0], format!("{:.2} 0 0 1/1 1\n", 4.0 * cpus)).unwrap();
    wait_for(
        Duration::from_secs(60),
        "the job off the overloaded agent-01",
        || {
            running_on(&pool)
                .filter(|h| h.starts_with("agent-02"))
                .map(|_| ())
        },
    );
    let last = text(&pool, "StarlingLastMigration");
    assert!(last.contains("overloaded"), "{last}");

    // The owner leaves: the machines are equal again, and it stays.
    std::fs::write(&loads[0], format!("{equal:.2} 0 0 1/1 1\n")).unwrap();
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(running_on(&pool).as_deref(), Some("agent-02.d0.testnet"));
    assert_eq!(attr(&pool, "StarlingNumMigrations").as_deref(), Some("1"));

    assert_finished_with_progress(&pool, &ledger, "1");
}

#[test]
fn a_destination_dying_mid_move_leaves_the_job_to_resume_from_its_checkpoint_elsewhere_once() {
    let pool = pool(4);
    let work = shared_dir();
    let ledger = work.path().join("ledger");
    // Slow to leave: the move is caught between the new machine's claim
    // and the job's start there.
    submit_on_agent_01(&pool, work.path(), &ledger, 120, 3);

    // Bad input first: no such machine, and a job that is not running.
    let out = pool.run(0, work.path(), &["migrate", "1.0", "--to", "slot1@nowhere"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no other machine named slot1@nowhere"),
        "{said}"
    );
    let out = pool.run(0, work.path(), &["migrate", "7.0"]);
    assert!(!out.status.success());

    let said = pool.ok(
        0,
        work.path(),
        &["migrate", "1.0", "--to", "slot1@agent-02.d0.testnet"],
    );
    assert!(said.contains("1.0 moves to slot1@agent-02"), "{said}");
    wait_for(Duration::from_secs(30), "the job told to leave", || {
        (!lines(&ledger, "term ").is_empty()).then_some(())
    });
    pool.crash(2);

    // It resumes elsewhere from its checkpoint, and ends once.
    wait_for(Duration::from_secs(90), "the job running again", || {
        running_on(&pool).filter(|h| !h.starts_with("agent-02"))
    });
    assert_finished_with_progress(&pool, &ledger, "undefined");
    let starts = starts(&ledger);
    assert!(
        starts.iter().all(|(_, host)| !host.starts_with("agent-02")),
        "{starts:?}"
    );
    assert!(
        starts.len() >= 2 && starts.last().unwrap().0 >= 8,
        "{starts:?}"
    );
}

/// Sets a file's access and change times `ago` seconds back: the owner
/// was last at the keyboard then.
fn set_idle(path: &Path, ago: u64) {
    let when = std::time::SystemTime::now() - Duration::from_secs(ago);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_times(
        std::fs::FileTimes::new()
            .set_accessed(when)
            .set_modified(when),
    )
    .unwrap();
}
