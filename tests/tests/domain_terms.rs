//! A domain's signed terms for the domains it trusts, held by its agents
//! on a real pool of two domains (agent-00 and agent-02 in d0, agent-01
//! in d1):
//!
//! - **accept**: d1's administrator signs a policy whose terms for d0
//!   accept only one-CPU jobs and installs it into agent-01. d0's
//!   one-CPU job runs there; its two-CPU job never does, and `why` says
//!   which domain refuses it and by which term: agent-01's ad for d0
//!   publishes the term, so d0 asks for no claim it would refuse (the
//!   execute side's own refusal is `policies::claiming`'s unit tests'). A
//!   policy file damaged on disk afterwards is reported, and the terms in
//!   force stay.
//! - **trust withdrawn**: d1's policy re-signed to trust another domain
//!   only; d0's machines leave agent-01's view, and agent-01's machine
//!   leaves d0's (d1 advertises nothing to a domain it does not trust: it
//!   withdraws its ad there), so d0's job for d1 stays idle. A claim that
//!   reaches d1 anyway is refused naming d0 as the domain not trusted
//!   (`policies::claiming`'s unit tests).
//!
//! - **caps held domain-wide**: on eight agents (d1 = agent-01, -03, -05,
//!   -07, two CPUs each), d1's terms let d0 hold 3 slots at once
//!   (`testnet up --terms`). Twenty one-CPU jobs of d0 submitted at once
//!   all finish, and the jobs' own start and end times show never more
//!   than 3 running in d1 at any instant (and 3 at some instant); a job
//!   waiting meanwhile is explained by the term. Then a policy with
//!   `max_fraction = 0.25` (2 of d1's 8 CPUs), installed into d1's running
//!   agents, holds the next jobs to 2 at once.
//! - **a cap through its keeper's crash**: d1 lets d0 hold 1 slot; while
//!   d0's first job holds it on agent-03, d1's keeper (agent-01, its
//!   netmgr) is killed with SIGKILL and restarted, and a second job
//!   submitted: it runs only after the first has ended (a restarted keeper
//!   counts the shares held before it grants a new one).
//!
//! Each policy is installed into the running agent, which puts it in
//! force within seconds with no restart.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Submits from agent-00 a job of `cpus` CPUs that may run only in d1.
fn submit_to_d1(pool: &Pool, dir: &Path, name: &str, cpus: u32) {
    std::fs::write(
        dir.join(format!("{name}.sub")),
        format!(
            "executable = job.sh\nrequest_cpus = {cpus}\n\
             requirements = StarlingDomain == \"d1.testnet\"\nqueue\n"
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", &format!("{name}.sub")]);
}

#[test]
fn a_trusting_domain_runs_only_the_jobs_its_accept_term_accepts() {
    let pool = Pool::up_as(
        None,
        3,
        &[
            "--domains",
            "2",
            "--cpus",
            "4",
            "--refresh-secs",
            "2",
            "--lifetime-secs",
            "6",
        ],
    );
    let work = tempfile::tempdir().unwrap();
    script(&work.path().join("job.sh"), "#!/bin/sh\nexit 0\n");
    let policy = work.path().join("d1.policy");
    let d0 = trust_d0(&pool, 1, "d1.testnet");
    sign_d1_policy(
        &pool,
        &policy,
        &["--trust", &d0, "--accept", "RequestCpus <= 1"],
    );
    install_policy(&pool, 1, &policy);
    // agent-01's ad for d0 publishes the term, so d0 need not ask to learn it.
    wait_for(
        Duration::from_secs(30),
        "d1's accept term in agent-00's view",
        || {
            let seen = pool.ok(
                0,
                work.path(),
                &["status", "-af", "Name", "StarlingAcceptTerm"],
            );
            seen.lines()
                .any(|l| l.contains("agent-01") && l.contains("RequestCpus <= 1"))
                .then_some(())
        },
    );

    submit_to_d1(&pool, work.path(), "small", 1);
    submit_to_d1(&pool, work.path(), "big", 2);
    wait_for(
        Duration::from_secs(60),
        "the one-CPU job done in d1",
        || {
            let done = pool.af(0, true, &["ClusterId", "LastRemoteHost"]);
            done.into_iter()
                .find(|row| row[0] == "1")
                .map(|row| assert!(row[1].contains("agent-01"), "{row:?}"))
        },
    );
    // `why` names the domain and its term for the machine, and the
    // submit side never spent a claim round on it.
    let why = pool.ok(0, work.path(), &["why", "2.0"]);
    assert!(
        why.lines().any(|l| l.contains("agent-01")
            && l.contains(
                "d1.testnet does not accept this job: accept = RequestCpus <= 1 is false"
            )),
        "{why}"
    );
    assert!(!why.contains("Claims refused recently:"), "{why}");
    let status = pool.ok(0, work.path(), &["q", "2.0", "-af", "JobStatus"]);
    assert_eq!(status.trim(), "1", "the two-CPU job stays idle");

    // A damaged policy file is reported and the terms in force kept.
    let installed = pool.agent(1).join("policies").join("d1.testnet.policy");
    let good = std::fs::read_to_string(&installed).unwrap();
    std::fs::write(&installed, &good[..good.len() / 2]).unwrap();
    let log = pool.agent(1).join("agent.log");
    wait_for(
        Duration::from_secs(30),
        "the damaged policy reported",
        || {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("cannot be used; the one in force is kept")
                .then_some(())
        },
    );
    submit_to_d1(&pool, work.path(), "small2", 1);
    wait_for(
        Duration::from_secs(60),
        "another one-CPU job done in d1",
        || {
            let done = pool.af(0, true, &["ClusterId"]);
            done.iter().any(|row| row[0] == "3").then_some(())
        },
    );
    let status = pool.ok(0, work.path(), &["q", "2.0", "-af", "JobStatus"]);
    assert_eq!(status.trim(), "1", "the two-CPU job is still refused");
}

#[test]
fn a_domain_no_longer_trusted_no_longer_sees_or_claims_this_domains_machines() {
    let pool = Pool::up_as(
        None,
        2,
        &[
            "--domains",
            "2",
            "--refresh-secs",
            "2",
            "--lifetime-secs",
            "6",
        ],
    );
    let work = tempfile::tempdir().unwrap();
    script(&work.path().join("job.sh"), "#!/bin/sh\nexit 0\n");
    // d1 now trusts only a domain of its own making.
    let other = work.path().join("other.key");
    let made = pool.ok(
        1,
        work.path(),
        &[
            "domain",
            "init",
            "other.example",
            "--out",
            other.to_str().unwrap(),
        ],
    );
    let key = made
        .lines()
        .find_map(|l| l.strip_prefix("public key"))
        .unwrap_or_else(|| panic!("domain init names the public key:\n{made}"))
        .trim()
        .to_owned();
    let policy = work.path().join("d1.policy");
    sign_d1_policy(
        &pool,
        &policy,
        &["--trust", &format!("other.example={key}")],
    );
    install_policy(&pool, 1, &policy);

    // d0's machines leave d1's view at once.
    wait_for(
        Duration::from_secs(30),
        "d0's ads gone from agent-01",
        || {
            let seen = pool.ok(1, work.path(), &["status", "-af", "Name"]);
            (!seen.contains("agent-00") && !seen.contains("agent-02")).then_some(())
        },
    );
    wait_for(
        Duration::from_secs(30),
        "agent-01's ad gone from d0's views",
        || {
            let seen = |i| pool.ok(i, work.path(), &["status", "-af", "Name"]);
            (!seen(0).contains("agent-01")).then_some(())
        },
    );
    submit_to_d1(&pool, work.path(), "job", 1);
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < until {
        let status = pool.ok(0, work.path(), &["q", "1.0", "-af", "JobStatus"]);
        assert_eq!(status.trim(), "1", "the job stays idle");
        std::thread::sleep(POLL);
    }
}

/// A job that records when it starts and ends (unix nanoseconds) in the
/// shared log `$2` as job `$1`, running `$3` seconds in between.
const RECORDED_JOB: &str = "#!/bin/sh\n\
echo \"start $(date +%s%N) $1\" >> \"$2\"\n\
sleep \"$3\"\n\
echo \"end $(date +%s%N) $1\" >> \"$2\"\n";

/// The requirements of a job that may run only in d1.
const IN_D1: &str = "StarlingDomain == \"d1.testnet\"";

/// The jobs' recorded runs: (job, start ns, end ns) of each ended run.
fn runs(log: &Path) -> Vec<(String, u128, u128)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut started = std::collections::HashMap::new();
    let mut runs = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let [what, at, job] = words[..] else { continue };
        let at: u128 = at.parse().unwrap();
        match what {
            "start" => {
                started.insert(job.to_owned(), at);
            }
            "end" => runs.push((job.to_owned(), started[job], at)),
            _ => {}
        }
    }
    runs
}

/// The most runs of `runs` under way at one instant.
fn most_at_once(runs: &[(String, u128, u128)]) -> usize {
    let mut events: Vec<(u128, i32)> = runs
        .iter()
        .flat_map(|(_, start, end)| [(*start, 1), (*end, -1)])
        .collect();
    // At a tie an end counts first: the slot was free.
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    most as usize
}

/// The runs of the jobs named `name.*` that have ended.
fn ended_of(log: &Path, name: &str) -> Vec<(String, u128, u128)> {
    runs(log)
        .into_iter()
        .filter(|(job, _, _)| job.starts_with(&format!("{name}.")))
        .collect()
}

#[test]
fn a_cap_on_a_trusted_domain_holds_across_the_whole_domain_and_changes_live() {
    let work = tempfile::tempdir().unwrap();
    let pool = pool_on_terms(work.path(), 8, "max_slots = 3");
    let shared = shared_dir();
    let log = shared.path().join("runs");
    script(&work.path().join("job.sh"), RECORDED_JOB);

    submit_recorded(&pool, (work.path(), &log), "slots", (20, 3), IN_D1);
    let runs = wait_for(Duration::from_secs(150), "20 jobs ended", || {
        let runs = ended_of(&log, "slots");
        (runs.len() >= 20).then_some(runs)
    });
    let jobs: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(jobs.len(), 20, "every job ran: {runs:?}");
    assert_eq!(
        most_at_once(&runs),
        3,
        "d0 held 3 of d1's 8 CPUs at most, and used them: {runs:?}"
    );
    // The claims beyond the cap were refused naming the term.
    let refused = [1, 3, 5, 7].iter().any(|i| {
        std::fs::read_to_string(pool.agent(*i).join("agent.log"))
            .unwrap_or_default()
            .contains("d1.testnet lets d0.testnet hold at most 3 slots at once (max_slots = 3)")
    });
    assert!(refused, "a refusal names the cap");

    // A share of the domain's CPUs instead, put in force while running.
    let policy = work.path().join("fraction.policy");
    let d0 = trust_d0(&pool, 1, "d1.testnet");
    sign_d1_policy(&pool, &policy, &["--trust", &d0, "--max-fraction", "0.25"]);
    for i in [1, 3, 5, 7] {
        install_policy(&pool, i, &policy);
    }
    submit_recorded(&pool, (work.path(), &log), "fraction", (6, 3), IN_D1);
    let runs = wait_for(Duration::from_secs(120), "6 more jobs ended", || {
        let runs = ended_of(&log, "fraction");
        (runs.len() >= 6).then_some(runs)
    });
    assert_eq!(
        most_at_once(&runs),
        2,
        "a quarter of d1's 8 CPUs is 2: {runs:?}"
    );
}

/// Submits from agent-00 `count` one-CPU jobs with `requirements` that
/// record their runs in `log` as `name.$(Process)`, each running `secs`.
fn submit_recorded(
    pool: &Pool,
    (dir, log): (&Path, &Path),
    name: &str,
    (count, secs): (usize, u32),
    requirements: &str,
) {
    std::fs::write(
        dir.join(format!("{name}.sub")),
        format!(
            "executable = job.sh\narguments = {name}.$(Process) {} {secs}\nrequest_cpus = 1\n\
             requirements = {requirements}\nqueue {count}\n",
            log.display()
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", &format!("{name}.sub")]);
}

#[test]
fn a_cap_holds_while_its_keeper_is_killed_and_restarted() {
    let work = tempfile::tempdir().unwrap();
    // d0: agent-00, agent-02; d1: agent-01 (its netmgr, the cap's keeper)
    // and agent-03.
    let pool = pool_on_terms(work.path(), 4, "max_slots = 1");
    let shared = shared_dir();
    let log = shared.path().join("runs");
    script(&work.path().join("job.sh"), RECORDED_JOB);
    // The one slot d0 may hold, taken on agent-03.
    submit_recorded(
        &pool,
        (work.path(), &log),
        "first",
        (1, 25),
        "StarlingHost == \"agent-03.d1.testnet\"",
    );
    wait_for(Duration::from_secs(60), "the first job running", || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("start")
            .then_some(())
    });
    // The keeper dies with everything it counted, and comes back.
    pool.crash(1);
    pool.restart(1);
    submit_recorded(&pool, (work.path(), &log), "second", (1, 1), IN_D1);
    let runs = wait_for(Duration::from_secs(120), "both jobs ended", || {
        let runs = runs(&log);
        (runs.len() >= 2).then_some(runs)
    });
    assert_eq!(
        most_at_once(&runs),
        1,
        "the second job waited for the first: {runs:?}"
    );
}
