//! HTCondor's concurrency limits on a real pool, kept peer to peer: the
//! domain's netmgr agent (its share keeper) holds `[concurrency_limits]`
//! for every machine of the domain, and an execute agent runs a job that
//! uses a limit only once the keeper holds its units.
//!
//! - two jobs with `concurrency_limits = lic`, where `lic = 1`, on a
//!   machine with room for both (two cpus): they run one after the other,
//!   never together, and both complete;
//! - while one runs, `why` says of the other that the limit is full.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::time::Duration;

mod support;

use support::*;

/// Says when it started and ended, in nanoseconds.
const TIMED: &str = "#!/bin/sh\necho \"$(date +%s%N)\"\nsleep 3\necho \"$(date +%s%N)\"\n";

#[test]
fn two_jobs_under_a_limit_of_one_run_one_after_the_other() {
    let mut extra = vec!["--cpus", "2", "--refresh-secs", "2", "--lifetime-secs", "6"];
    if rustix::process::geteuid().is_root() {
        extra.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    // One agent, the domain's netmgr: its keeper holds the limits. (A
    // restarted first agent is not found again by the others of a
    // testnet, which dial it; the keeper answers its own agent as it
    // answers the others, with the same request.)
    let pool = Pool::up_as(None, 1, &extra);
    let limits: toml::Table = [("lic".to_owned(), toml::Value::Integer(1))]
        .into_iter()
        .collect();
    let _keeper = pool.reconfigure(
        0,
        "concurrency_limits",
        &[("limits", toml::Value::Table(limits))],
        0,
    );
    let work = shared_dir();
    let dir = work.path();
    let exe = dir.join("timed.sh");
    std::fs::write(&exe, TIMED).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("jobs.sub"),
        "executable = timed.sh\noutput = out.$(Process)\nconcurrency_limits = LIC\nqueue 2\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "jobs.sub"]);
    // While one runs, the other waits for the limit.
    let why = wait_for(Duration::from_secs(60), "one job running", || {
        let rows = pool.af(0, false, &["ProcId", "JobStatus"]);
        let waiting = rows.iter().find(|r| r[1] == "1")?;
        rows.iter().any(|r| r[1] == "2").then_some(())?;
        let why = pool.ok(0, dir, &["why", &format!("1.{}", waiting[0])]);
        why.contains("concurrency limit lic").then_some(why)
    });
    assert!(why.contains("at most 1 unit"), "{why}");
    pool.wait_queue_empty(0, Duration::from_secs(90));
    let span = |proc: usize| -> (u128, u128) {
        let out = std::fs::read_to_string(dir.join(format!("out.{proc}"))).unwrap();
        let t: Vec<u128> = out.lines().map(|l| l.trim().parse().unwrap()).collect();
        (t[0], t[1])
    };
    let (a, b) = (span(0), span(1));
    assert!(
        a.1 <= b.0 || b.1 <= a.0,
        "the two jobs ran together: {a:?} {b:?}"
    );
    let history = pool.af(0, true, &["ProcId", "ExitCode", "ConcurrencyLimits"]);
    assert_eq!(history.len(), 2, "{history:?}");
    assert!(
        history.iter().all(|r| r[1] == "0" && r[2] == "lic"),
        "{history:?}"
    );
}
