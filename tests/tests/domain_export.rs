//! A domain's `export` term, held by its agents on real pools:
//!
//! - **filtered at the source, even relayed or pulled**: three domains
//!   (agent-00 and agent-03 in d0, agent-01 and agent-04 in d1, agent-02
//!   and agent-05 in d2). d1 exports only agent-01 to d0, and everything
//!   to d2. d2's agents hold agent-04's ad and are connected to d0's, yet
//!   d0's agents never list agent-04, not while the pool forms, not over
//!   several refresh intervals, and not after agent-03 restarts and pulls
//!   the view from its peers. d1 still sees both its machines, and d0
//!   sees the exported one and d2's.
//! - **a live change**: d1's policy re-signed, while the pool runs, to
//!   export nothing to d0. agent-01 leaves d0's view within seconds; the
//!   job d0 runs there runs on to completion; the next job of the same
//!   cluster, sent under the same claim, is refused, naming d1 and the
//!   term, and never runs there. Re-signed to export it again, agent-01
//!   comes back.
//! - **export_slots, domain-wide**: d1 (agent-01 and agent-03, two CPUs
//!   each) advertises at most 3 slots to d0. d0's view of d1's machines
//!   shows 3 free CPUs in all, never more, over several refreshes, while
//!   d1's own view shows all 4.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::path::Path;
use std::time::{Duration, Instant};

mod support;

use support::*;

/// The machine names agent `i` lists in `starling status`.
fn seen(pool: &Pool, i: usize) -> String {
    pool.ok(i, &std::env::temp_dir(), &["status", "-af", "Name"])
}

/// d1's policy for d0, signed with d1's key, with `terms`, into `out`.
fn sign_d1_policy_for_d0(pool: &Pool, out: &Path, terms: &[&str]) {
    let d0 = trust_d0(pool, 1, "d1.testnet");
    let mut args = vec!["--trust", d0.as_str()];
    args.extend_from_slice(terms);
    sign_d1_policy(pool, out, &args);
}

#[test]
fn a_machine_not_exported_never_reaches_the_foreign_domain_even_relayed_or_pulled() {
    let work = tempfile::tempdir().unwrap();
    let terms = work.path().join("terms.toml");
    std::fs::write(
        &terms,
        "[[terms]]\ndomain = \"d1.testnet\"\ntrusts = \"d0.testnet\"\n\
         export = 'regexp(\"agent-01\", Name)'\n",
    )
    .unwrap();
    let pool = Pool::up_as(
        None,
        6,
        &[
            "--domains",
            "3",
            "--refresh-secs",
            "2",
            "--lifetime-secs",
            "10",
            "--terms",
            terms.to_str().unwrap(),
        ],
    );
    let never_agent_04 = |i: usize| {
        let names = seen(&pool, i);
        assert!(
            !names.contains("agent-04"),
            "agent-{i:02} (d0) lists a machine d1 does not export to it:\n{names}\n{}",
            pool.log_tail(i)
        );
        names
    };
    // d2 holds agent-04's ad (d1 exports everything there), d0 the one
    // machine d1 exports to it and d2's.
    wait_for(Duration::from_secs(90), "agent-04 in d2's views", || {
        (seen(&pool, 2).contains("agent-04") && seen(&pool, 5).contains("agent-04")).then_some(())
    });
    wait_for(
        Duration::from_secs(90),
        "d0 sees what is exported to it",
        || {
            never_agent_04(3);
            let names = never_agent_04(0);
            ["agent-01", "agent-02", "agent-03", "agent-05"]
                .iter()
                .all(|n| names.contains(n))
                .then_some(())
        },
    );
    // The exporting side sees all its own machines.
    for i in [1, 4] {
        let names = seen(&pool, i);
        assert!(
            names.contains("agent-01") && names.contains("agent-04"),
            "agent-{i:02}: {names}"
        );
    }
    // The copy d0 holds says whom it is meant for, as signed.
    let audience = pool.ok(
        0,
        &std::env::temp_dir(),
        &[
            "status",
            "-constraint",
            "regexp(\"agent-01\", Name)",
            "-af",
            "StarlingAudience",
        ],
    );
    assert_eq!(audience.trim(), "d0.testnet");
    // Over several refreshes of every ad, relayed by d1's and d2's agents.
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        never_agent_04(0);
        never_agent_04(3);
        std::thread::sleep(POLL);
    }
    // A newcomer of d0 pulls the view from its peers: still not agent-04.
    pool.crash(3);
    pool.restart(3);
    wait_for(
        Duration::from_secs(60),
        "the restarted agent-03's view",
        || {
            let names = never_agent_04(3);
            ["agent-00", "agent-01", "agent-02", "agent-05"]
                .iter()
                .all(|n| names.contains(n))
                .then_some(())
        },
    );
    let until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < until {
        never_agent_04(3);
        std::thread::sleep(POLL);
    }
}

#[test]
fn a_live_change_of_export_withdraws_the_machine_and_refuses_the_next_claim() {
    let pool = Pool::up_as(
        None,
        3,
        &[
            "--domains",
            "2",
            "--cpus",
            "1",
            "--refresh-secs",
            "2",
            "--lifetime-secs",
            "60",
        ],
    );
    let work = tempfile::tempdir().unwrap();
    let job = work.path().join("job.sh");
    std::fs::write(&job, "#!/bin/sh\nsleep 12\n").unwrap();
    std::fs::set_permissions(&job, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    wait_for(Duration::from_secs(60), "agent-01 in d0's view", || {
        seen(&pool, 0).contains("agent-01").then_some(())
    });
    // Two one-CPU jobs of one cluster that may run only on agent-01 (one
    // CPU): the second waits for the first's claim.
    std::fs::write(
        work.path().join("job.sub"),
        "executable = job.sh\nrequest_cpus = 1\n\
         requirements = regexp(\"agent-01\", Name)\nqueue 2\n",
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "a job running on agent-01", || {
        let rows = pool.af(0, false, &["ProcId", "JobStatus"]);
        rows.iter().any(|r| r[1] == "2").then_some(())
    });

    let policy = work.path().join("none.policy");
    sign_d1_policy_for_d0(&pool, &policy, &["--export", "false"]);
    install_policy(&pool, 1, &policy);
    let changed = Instant::now();
    wait_for(
        Duration::from_secs(20),
        "agent-01 gone from d0's views",
        || {
            (!seen(&pool, 0).contains("agent-01") && !seen(&pool, 2).contains("agent-01"))
                .then_some(())
        },
    );
    eprintln!(
        "agent-01 left d0's views {:?} after the policy changed",
        changed.elapsed()
    );
    // d1 itself still sees it.
    assert!(seen(&pool, 1).contains("agent-01"));

    // The running job runs on to completion under the old terms.
    wait_for(Duration::from_secs(60), "the first job done", || {
        (!pool.af(0, true, &["ProcId"]).is_empty()).then_some(())
    });
    // The next one is refused there, naming the domain and the term.
    let reason = "d1.testnet does not export this machine to d0.testnet: export = false is false";
    let said = wait_for(Duration::from_secs(60), "the refusal said", || {
        let why = pool.ok(0, work.path(), &["why", "1.1"]);
        let logs: String = (0..2)
            .map(|i| std::fs::read_to_string(pool.agent(i).join("agent.log")).unwrap_or_default())
            .collect();
        (why.contains(reason) || logs.contains(reason)).then_some(why)
    });
    let rows = pool.af(0, true, &["ProcId"]);
    assert_eq!(rows.len(), 1, "only the first job ran: {rows:?}\n{said}");

    // Exported again: agent-01 comes back, and the job runs there.
    let policy = work.path().join("all.policy");
    sign_d1_policy_for_d0(&pool, &policy, &[]);
    install_policy(&pool, 1, &policy);
    wait_for(
        Duration::from_secs(20),
        "agent-01 back in d0's view",
        || seen(&pool, 0).contains("agent-01").then_some(()),
    );
    wait_for(Duration::from_secs(90), "the second job done", || {
        (pool.af(0, true, &["ProcId"]).len() == 2).then_some(())
    });
}

/// The free CPUs agent `i` sees on each machine of `domain`.
fn cpus_seen(pool: &Pool, i: usize, domain: &str) -> Vec<(String, i64)> {
    let constraint = format!("StarlingDomain == \"{domain}\"");
    pool.ok(
        i,
        &std::env::temp_dir(),
        &["status", "-constraint", &constraint, "-af", "Name", "Cpus"],
    )
    .lines()
    .filter_map(|l| {
        let (name, cpus) = l.split_once(' ')?;
        Some((name.to_owned(), cpus.trim().parse().ok()?))
    })
    .collect()
}

#[test]
fn export_slots_caps_what_the_whole_domain_advertises_to_the_partner() {
    let work = tempfile::tempdir().unwrap();
    let pool = pool_on_terms(work.path(), 4, "export_slots = 3");
    // d0 sees both of d1's machines, 3 CPUs in all.
    wait_for(Duration::from_secs(60), "d1's 3 slots in d0's view", || {
        let seen = cpus_seen(&pool, 0, "d1.testnet");
        (seen.len() == 2 && seen.iter().map(|(_, c)| c).sum::<i64>() == 3).then_some(())
    });
    // Never more, over several refreshes, from either of d0's agents.
    let until = Instant::now() + Duration::from_secs(8);
    while Instant::now() < until {
        for i in [0, 2] {
            let seen = cpus_seen(&pool, i, "d1.testnet");
            let total: i64 = seen.iter().map(|(_, c)| c).sum();
            assert!(total <= 3, "agent-0{i} sees {seen:?}");
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    // d1 sees its own machines whole.
    let own = cpus_seen(&pool, 1, "d1.testnet");
    assert_eq!(own.iter().map(|(_, c)| c).sum::<i64>(), 4, "{own:?}");
}
