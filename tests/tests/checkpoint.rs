//! Checkpoints that survive the machine, with real agents on loopback: a
//! self-checkpointing job (HTCondor's `checkpoint_exit_code`) has its
//! checkpoints replicated to store peers, and resumes from the latest on
//! another machine when its execute agent is killed with SIGKILL, also
//! when a replica holder dies with it, when one replica is damaged, and
//! after its submit agent crashed; full store peers are passed over; with
//! no store peer the job still runs and says its checkpoints are only
//! local; and when it leaves the queue no store peer keeps any of it.
//!
//! The job counts steps in a `state` file its checkpoint carries and
//! writes, at each start, the step it starts from into a ledger outside
//! the sandbox: a job that lost its progress would start from 0 twice.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

/// The exit code the test job checkpoints with.
const CKPT: &str = "85";

/// A job of `total` steps of a quarter second that checkpoints (exits
/// 85) after every `every` steps, or only at step `every` when `once`;
/// each start writes `start N` into `ledger`.
fn job(dir: &Path, ledger: &Path, total: u32, every: u32, once: bool, extra: &str) {
    let when = if once {
        format!("[ $n -eq {every} ] && [ ! -f .once ]")
    } else {
        format!("[ $((n % {every})) -eq 0 ] && [ $n -lt {total} ]")
    };
    let script = format!(
        "#!/bin/sh\nn=0\n[ -f state ] && n=$(cat state)\n\
         host=$(grep '^StarlingHost' \"$_CONDOR_MACHINE_AD\" | cut -d'\"' -f2)\n\
         echo \"start $n $host\" >> \"$1\"\n\
         while [ $n -lt {total} ]; do\n  n=$((n+1))\n  echo $n > state\n  sleep 0.25\n  \
         if {when}; then {mark}exit {CKPT}; fi\ndone\necho \"finished $n\"\n",
        mark = if once { "touch .once; " } else { "" },
    );
    write_job(
        dir,
        ledger,
        &script,
        &format!(
            "output = out.txt\nerror = err.txt\ncheckpoint_exit_code = {CKPT}\n\
             +JobLeaseDuration = 4\n\
             requirements = StarlingHost =!= \"agent-00.d0.testnet\"\n{extra}"
        ),
    );
}

/// A directory for the job's files, and one every account may write
/// into with the ledger's path in it.
fn scratch() -> (tempfile::TempDir, tempfile::TempDir, std::path::PathBuf) {
    let shared = shared_dir();
    let ledger = shared.path().join("ledger");
    (tempfile::tempdir().unwrap(), shared, ledger)
}

/// Writes `script` as the job's `steps.sh` (its first argument: the
/// ledger) and a submit file with `commands` for it.
fn write_job(dir: &Path, ledger: &Path, script: &str, commands: &str) {
    let exe = dir.join("steps.sh");
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("job.sub"),
        format!(
            "executable = steps.sh\narguments = \"{}\"\nlog = job.log\n\
             transfer_output_files = state\n{commands}queue\n",
            ledger.display()
        ),
    )
    .unwrap();
}

/// Each start of the job: the step it began from and the host it ran on.
fn runs(ledger: &Path) -> Vec<(u32, String)> {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix("start ")?.split_whitespace();
            Some((words.next()?.parse().ok()?, words.next()?.to_owned()))
        })
        .collect()
}

/// The step each start on a new host began from (starts after a
/// checkpoint on the same host are not counted).
fn starts(ledger: &Path) -> Vec<u32> {
    let mut last: Option<String> = None;
    runs(ledger)
        .into_iter()
        .filter_map(|(step, host)| {
            let new = last.as_deref() != Some(host.as_str());
            last = Some(host);
            new.then_some(step)
        })
        .collect()
}

/// A pool whose jobs run as `nobody` with the machine's /tmp (so they can
/// write the ledger), whose ads expire a few seconds after an agent dies.
fn pool(agents: usize, extra: &[&str]) -> Pool {
    let mut args = vec!["--refresh-secs", "2", "--lifetime-secs", "6"];
    if rustix::process::geteuid().is_root() {
        args.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    args.extend_from_slice(extra);
    Pool::up_as(None, agents, &args)
}

/// Sets `[store] key` of agent `i` and starts it again (a crash, then
/// `testnet start`, which points it at the running agents).
fn set_store(pool: &Pool, i: usize, key: &str, value: toml::Value) {
    pool.crash(i);
    let path = pool.agent(i).join("agent.toml");
    let mut config: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    config
        .entry("store")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .unwrap()
        .insert(key.to_owned(), value);
    std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
    pool.restart(i);
    let name = format!("agent-{i:02}");
    let other = usize::from(i == 0);
    wait_for(
        Duration::from_secs(30),
        "the agent back in the view",
        || {
            let out = pool.run(other, &std::env::temp_dir(), &["status", "-af", "Name"]);
            String::from_utf8_lossy(&out.stdout)
                .contains(&name)
                .then_some(())
        },
    );
}

/// One attribute of job 1.0 in agent 0's queue (`None`: undefined, or the
/// job left the queue).
fn attr(pool: &Pool, name: &str) -> Option<String> {
    let out = pool.ok(0, &std::env::temp_dir(), &["q", "-af", name]);
    out.lines()
        .next()
        .map(str::trim)
        .filter(|v| *v != "undefined")
        .map(|v| v.trim_matches('"').to_owned())
}

fn number(pool: &Pool, name: &str) -> i64 {
    attr(pool, name).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The agent index of a testnet host name (`agent-03.d0.testnet` → 3).
fn index_of(host: &str) -> usize {
    let start = host.find("agent-").expect("an agent's host") + 6;
    host[start..start + 2].parse().unwrap()
}

/// The agent running job 1.0.
fn executing(pool: &Pool) -> usize {
    let host = attr(pool, "RemoteHost").expect("the job runs");
    index_of(&host)
}

/// Waits until job 1.0 has recorded at least `n` checkpoints.
fn wait_checkpoints(pool: &Pool, n: i64) {
    wait_for(Duration::from_secs(60), "the job's checkpoints", || {
        (number(pool, "NumCkpts") >= n).then_some(())
    });
}

/// Waits until job 1.0 completed; returns its history row for `attrs`.
fn completed(pool: &Pool, attrs: &[&str], agents: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let rows = pool.af(0, true, attrs);
        if let Some(row) = rows.into_iter().next() {
            return row;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job did not complete:\n{}",
            pool.diagnose(0, "1.0", agents)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Chunks each of `agents` holds as a store peer.
fn chunks_held(pool: &Pool, agents: &[usize]) -> Vec<i64> {
    agents
        .iter()
        .map(|&i| {
            pool.machine_af(i, &["StarlingStoreChunks"])
                .first()
                .and_then(|v| v.parse().ok())
                .unwrap_or(-1)
        })
        .collect()
}

/// The execute agent killed mid-run, and the submit agent before it: the
/// job resumes on another machine from its last checkpoint, with its
/// committed time and badput accounted; once it leaves the queue no store
/// peer keeps a chunk of it.
#[test]
fn a_job_whose_machine_dies_resumes_elsewhere_from_its_checkpoint() {
    const AGENTS: usize = 4;
    let pool = pool(AGENTS, &[]);
    let (work, _shared, ledger) = scratch();
    job(work.path(), &ledger, 48, 4, false, "");
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_checkpoints(&pool, 2);
    assert_eq!(attr(&pool, "StarlingCkptReplicas").as_deref(), Some("2"));
    let hosts = attr(&pool, "StarlingCkptHosts").unwrap();
    let first = executing(&pool);
    assert!(
        !hosts.contains(&format!("agent-{first:02}")),
        "a replica on the job's own machine: {hosts}"
    );

    // The submit agent crashes and comes back: its record of the
    // checkpoint is intact, and nothing was collected meanwhile.
    pool.crash(0);
    pool.restart(0);
    // Then the machine dies.
    let before = number(&pool, "NumCkpts");
    let machine = executing(&pool);
    pool.crash(machine);
    let row = completed(
        &pool,
        &[
            "ExitCode",
            "NumJobStarts",
            "NumCkpts",
            "CommittedTime",
            "StarlingBadputTime",
            "RemoteWallClockTime",
        ],
        AGENTS,
    );
    let starts = starts(&ledger);
    assert_eq!(
        starts.iter().filter(|s| **s == 0).count(),
        1,
        "the job started over: {starts:?}"
    );
    assert!(
        starts
            .iter()
            .any(|s| *s >= 4 * u32::try_from(before).unwrap()),
        "no start from the last checkpoint: {starts:?}"
    );
    assert_eq!(row[0], "0", "{row:?}");
    assert_eq!(row[1], "2", "one start per machine: {row:?}");
    assert!(row[2].parse::<i64>().unwrap() >= before, "{row:?}");
    let committed: f64 = row[3].parse().unwrap();
    let badput: f64 = row[4].parse().unwrap();
    let wall: f64 = row[5].parse().unwrap();
    // 48 steps of a quarter second were committed; a lease and a few
    // steps were lost.
    assert!((10.0..=wall + 1.0).contains(&committed), "{row:?}");
    assert!((0.0..=12.0).contains(&badput), "{row:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("state"))
            .unwrap()
            .trim(),
        "48"
    );
    let alive: Vec<usize> = (0..AGENTS).filter(|i| *i != machine).collect();
    wait_for(
        Duration::from_secs(60),
        "store peers holding nothing of it",
        || {
            chunks_held(&pool, &alive)
                .iter()
                .all(|held| *held == 0)
                .then_some(())
        },
    );
}

/// The machine and one replica holder die together: the job restores from
/// the other replica, and the submit agent re-replicates the checkpoint to
/// bring it back to two.
#[test]
fn a_checkpoint_outlives_a_replica_holder_and_is_repaired() {
    const AGENTS: usize = 5;
    let pool = pool(AGENTS, &[]);
    let (work, _shared, ledger) = scratch();
    // One checkpoint, at step 4; then a long run.
    job(work.path(), &ledger, 100, 4, true, "");
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_checkpoints(&pool, 1);
    let hosts = attr(&pool, "StarlingCkptHosts").unwrap();
    let holders: Vec<usize> = hosts.split(',').map(index_of).collect();
    assert_eq!(holders.len(), 2, "{hosts}");
    // Not the submit agent: it owns the record.
    let dead_holder = *holders.iter().find(|h| **h != 0).unwrap();
    let machine = executing(&pool);
    pool.crash(machine);
    pool.crash(dead_holder);
    wait_for(
        Duration::from_secs(60),
        "the job restored elsewhere",
        || (starts(&ledger).len() >= 2).then_some(()),
    );
    assert_eq!(
        starts(&ledger),
        vec![0, 4],
        "it resumed from its checkpoint"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let repaired = attr(&pool, "StarlingCkptHosts").is_some_and(|hosts| {
            let now: Vec<usize> = hosts.split(',').map(index_of).collect();
            number(&pool, "StarlingCkptReplicas") == 2 && !now.contains(&dead_holder)
        });
        if repaired {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the checkpoint was not back on two store peers within 60 s\n{}",
            pool.diagnose(0, "1.0", AGENTS)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    pool.ok(0, work.path(), &["rm", "1.0"]);
}

/// A checkpoint taken when only one store peer would keep it is kept on
/// that one, and topped up to two when another store peer joins, without
/// the job doing anything; never on the machine running the job.
#[test]
fn a_checkpoint_kept_on_too_few_store_peers_is_topped_up_when_one_joins() {
    const AGENTS: usize = 3;
    let pool = pool(AGENTS, &[]);
    let lends_nothing = pool.reconfigure(2, "store", &[("lend_mib", toml::Value::Integer(0))], 0);
    let (work, _shared, ledger) = scratch();
    // One checkpoint, at step 4, on agent-01; then a long run.
    job(
        work.path(),
        &ledger,
        400,
        4,
        true,
        "requirements = StarlingHost == \"agent-01.d0.testnet\"\n",
    );
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_checkpoints(&pool, 1);
    assert_eq!(
        attr(&pool, "StarlingCkptHosts").as_deref(),
        Some("agent-00.d0.testnet"),
        "only agent-00 keeps checkpoints and agent-01 runs the job"
    );
    let _lends = pool.reconfigure(2, "store", &[("lend_mib", toml::Value::Integer(64))], 0);
    drop(lends_nothing);
    let hosts = wait_for(
        Duration::from_secs(60),
        "the checkpoint topped up to two store peers",
        || {
            (number(&pool, "StarlingCkptReplicas") == 2)
                .then(|| attr(&pool, "StarlingCkptHosts"))?
        },
    );
    let mut hosts: Vec<&str> = hosts.split(',').collect();
    hosts.sort();
    assert_eq!(hosts, ["agent-00.d0.testnet", "agent-02.d0.testnet"]);
    assert_eq!(starts(&ledger).len(), 1, "the job ran on undisturbed");
    // Its ad says so at its next refresh.
    wait_for(Duration::from_secs(30), "agent-02 holding chunks", || {
        (chunks_held(&pool, &[2])[0] > 0).then_some(())
    });
    pool.ok(0, work.path(), &["rm", "1.0"]);
}

/// Flips bytes of `data`'s copies in every file under `dir`; returns how
/// many bytes it changed.
fn damage(dir: &Path, data: &[u8]) -> usize {
    let mut changed = 0;
    for entry in walk(dir) {
        let Ok(mut bytes) = std::fs::read(&entry) else {
            continue;
        };
        let mut hit = false;
        let mut at = 0;
        while let Some(i) = find(&bytes[at..], data) {
            let i = at + i + data.len() / 2;
            bytes[i] ^= 0xff;
            changed += 1;
            hit = true;
            at = i + 1;
        }
        if hit {
            std::fs::write(&entry, &bytes).unwrap();
        }
    }
    changed
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A replica damaged on disk is never used: with the other replica's
/// holder down, the job cannot restore and waits (it does not start over);
/// once that holder is back, it restores from it.
#[test]
fn a_damaged_replica_is_detected_and_the_other_used() {
    const AGENTS: usize = 5;
    let pool = pool(AGENTS, &[]);
    // The submit agent keeps no replica: the test stops the holders.
    set_store(&pool, 0, "lend_mib", toml::Value::Integer(0));
    let (work, _shared, ledger) = scratch();
    // A checkpoint with a file of recognisable content.
    let marker = "starling-checkpoint-marker-".repeat(40);
    std::fs::write(work.path().join("blob"), &marker).unwrap();
    job(
        work.path(),
        &ledger,
        100,
        4,
        true,
        "transfer_input_files = blob\ntransfer_checkpoint_files = state, blob\n",
    );
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_checkpoints(&pool, 1);
    let hosts = attr(&pool, "StarlingCkptHosts").unwrap();
    let holders: Vec<usize> = hosts.split(',').map(index_of).collect();
    let (damaged, other) = (holders[0], holders[1]);
    // The damaged holder's chunks are flipped while it is stopped; the
    // other holder is down when the job needs its checkpoint.
    pool.crash(other);
    pool.crash(damaged);
    let flipped = damage(&pool.agent(damaged).join("chunks"), marker.as_bytes());
    assert!(flipped > 0, "the chunk is not on the holder's disk");
    pool.restart(damaged);
    pool.crash(executing(&pool));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !attr(&pool, "LastVacateReason").is_some_and(|r| r.contains("could not be restored")) {
        assert!(
            std::time::Instant::now() < deadline,
            "no restore refused; starts {:?}\n{}",
            starts(&ledger),
            pool.diagnose(0, "1.0", AGENTS)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(starts(&ledger), vec![0], "the job must not start over");
    pool.restart(other);
    wait_for(
        Duration::from_secs(90),
        "the job restored from the good replica",
        || (starts(&ledger).len() >= 2).then_some(()),
    );
    assert_eq!(starts(&ledger)[1], 4);
    pool.ok(0, work.path(), &["rm", "1.0"]);
}

/// A store peer that lends too little refuses, and the checkpoint goes to
/// the store peers that have room; with no store peer at all the job
/// still runs and its checkpoints are said to be kept only locally.
#[test]
fn full_store_peers_are_passed_over_and_none_at_all_leaves_checkpoints_local() {
    const AGENTS: usize = 3;
    let pool = pool(AGENTS, &[]);
    // agent-02 lends a user 1 MiB: too little for the 3 MiB checkpoint,
    // which it learns only when asked (quotas are not advertised).
    let _full = pool.reconfigure(
        2,
        "store",
        &[("user_quota_mib", toml::Value::Integer(1))],
        0,
    );
    let (work, shared, ledger) = scratch();
    std::fs::write(work.path().join("big"), vec![7u8; 3 << 20]).unwrap();
    job(
        work.path(),
        &ledger,
        12,
        4,
        false,
        "transfer_input_files = big\ntransfer_checkpoint_files = state, big\n\
         requirements = StarlingHost == \"agent-01.d0.testnet\"\n",
    );
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_checkpoints(&pool, 1);
    assert_eq!(
        attr(&pool, "StarlingCkptHosts").as_deref(),
        Some("agent-00.d0.testnet"),
        "{}",
        pool.log_tail(1)
    );
    assert_eq!(attr(&pool, "StarlingCkptReplicas").as_deref(), Some("1"));
    let log = std::fs::read_to_string(pool.agent(1).join("agent.log")).unwrap();
    assert!(
        log.contains("quota"),
        "agent-02 did not refuse for its quota"
    );
    completed(&pool, &["ExitCode"], AGENTS);

    // No store peer at all.
    let lonely = self::pool(2, &["--store", "lend_mib=0"]);
    let work = tempfile::tempdir().unwrap();
    let ledger = shared.path().join("ledger2");
    job(work.path(), &ledger, 12, 4, false, "");
    lonely.ok(0, work.path(), &["submit", "job.sub"]);
    wait_checkpoints(&lonely, 1);
    assert_eq!(
        attr(&lonely, "StarlingCkptLocalOnly").as_deref(),
        Some("true")
    );
    let long = lonely.ok(0, work.path(), &["q", "-l", "1.0"]);
    assert!(long.contains("StarlingCkptLocalOnly = true"), "{long}");
    let row = completed(&lonely, &["ExitCode", "NumCkpts"], 2);
    assert_eq!(row[0], "0");
    assert_eq!(row[1], "2", "{row:?}");
    // Each restart after a checkpoint resumed where it left off.
    let steps: Vec<u32> = runs(&ledger).into_iter().map(|(step, _)| step).collect();
    assert_eq!(steps, vec![0, 4, 8]);
}

/// `starling vacate`: the job gets its kill signal, writes its checkpoint
/// and exits with its checkpoint exit code within its vacate time; the
/// checkpoint is kept and the job resumes from it.
#[test]
fn a_vacated_job_checkpoints_on_its_kill_signal_and_resumes_from_it() {
    const AGENTS: usize = 3;
    let pool = pool(AGENTS, &[]);
    let (work, _shared, ledger) = scratch();
    write_job(
        work.path(),
        &ledger,
        &format!(
            "#!/bin/sh\nn=0\n[ -f state ] && n=$(cat state)\n\
             echo \"start $n vacated\" >> \"$1\"\n\
             trap 'echo $n > state; exit {CKPT}' USR1\n\
             while [ $n -lt 40 ]; do n=$((n+1)); sleep 0.25 & wait $!; done\n\
             echo $n > state\n"
        ),
        &format!("checkpoint_exit_code = {CKPT}\nkill_sig = SIGUSR1\n"),
    );
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "the job running a while", || {
        (runs(&ledger).len() == 1).then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    pool.ok(0, work.path(), &["vacate", "1.0"]);
    wait_for(Duration::from_secs(60), "the job started again", || {
        (runs(&ledger).len() >= 2).then_some(())
    });
    let steps: Vec<u32> = runs(&ledger).into_iter().map(|(step, _)| step).collect();
    assert_eq!(steps[0], 0);
    assert!(
        steps[1] >= 8,
        "it did not resume from its checkpoint: {steps:?}"
    );
    let row = completed(
        &pool,
        &["NumCkpts", "NumJobStarts", "LastVacateReason"],
        AGENTS,
    );
    assert_eq!(row[0], "1", "{row:?}");
    assert_eq!(row[1], "2", "{row:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("state"))
            .unwrap()
            .trim(),
        "40"
    );
}

/// `when_to_transfer_output = ON_EXIT_OR_EVICT` with no checkpoint exit
/// code: an evicted job's files are kept as its checkpoint whatever ended
/// it, and it starts again with them.
#[test]
fn an_evicted_on_exit_or_evict_job_starts_again_with_its_files() {
    const AGENTS: usize = 3;
    let pool = pool(AGENTS, &[]);
    let (work, _shared, ledger) = scratch();
    // No trap: SIGTERM ends it where it is.
    write_job(
        work.path(),
        &ledger,
        "#!/bin/sh\nn=0\n[ -f state ] && n=$(cat state)\necho \"start $n evicted\" >> \"$1\"\n\
         while [ $n -lt 24 ]; do n=$((n+1)); echo $n > state; sleep 0.25; done\n",
        "when_to_transfer_output = ON_EXIT_OR_EVICT\n",
    );
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "the job running", || {
        (runs(&ledger).len() == 1).then_some(())
    });
    std::thread::sleep(Duration::from_secs(2));
    pool.ok(0, work.path(), &["vacate", "1.0"]);
    wait_for(Duration::from_secs(60), "the job started again", || {
        (runs(&ledger).len() >= 2).then_some(())
    });
    let steps: Vec<u32> = runs(&ledger).into_iter().map(|(step, _)| step).collect();
    assert!(steps[1] >= 4, "it started without its files: {steps:?}");
    let row = completed(&pool, &["NumCkpts", "ExitCode"], AGENTS);
    assert_eq!(row, vec!["1", "0"]);
}

/// A checkpointed job that is held and released starts again from its
/// checkpoint.
#[test]
fn a_held_job_released_resumes_from_its_checkpoint() {
    const AGENTS: usize = 3;
    let pool = pool(AGENTS, &[]);
    let (work, _shared, ledger) = scratch();
    job(work.path(), &ledger, 100, 4, true, "");
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_checkpoints(&pool, 1);
    // The start in place after the checkpoint, from step 4.
    wait_for(Duration::from_secs(30), "the job going on", || {
        (runs(&ledger).len() == 2).then_some(())
    });
    pool.ok(0, work.path(), &["hold", "1.0"]);
    wait_for(Duration::from_secs(30), "the job held", || {
        (attr(&pool, "JobStatus").as_deref() == Some("5")).then_some(())
    });
    pool.ok(0, work.path(), &["release", "1.0"]);
    wait_for(Duration::from_secs(60), "the job started again", || {
        (runs(&ledger).len() >= 3).then_some(())
    });
    let steps: Vec<u32> = runs(&ledger).into_iter().map(|(step, _)| step).collect();
    assert_eq!(
        steps,
        vec![0, 4, 4],
        "it did not resume from its checkpoint"
    );
    pool.ok(0, work.path(), &["rm", "1.0"]);
}
