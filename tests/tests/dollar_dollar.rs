//! HTCondor's match-time substitution on a real pool: `$$(Attr)` in a job's
//! attributes is filled in from the machine it was matched to when it is
//! handed over.
//!
//! - `arguments = $$(Machine) $$(Cpus) $$(Site:nowhere) $$([TARGET.Cpus * 2])`
//!   echoes the machine's name, its cpus, the default, and the value of
//!   the expression; the job records `MATCH_Machine`, `MATCH_Cpus`,
//!   `MATCH_Site` and `MATCH_EXP_Arguments` as HTCondor does, and keeps
//!   its `Arguments` as written;
//! - `$$(NoSuchAttr)` with no default is held before it runs, with
//!   HTCondor's reason `Cannot expand $$ expression (NoSuchAttr).`.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::time::Duration;

mod support;

use support::*;

#[test]
fn a_job_gets_the_matched_machines_attributes_in_its_arguments() {
    let pool = Pool::up_sharing(1);
    let work = shared_dir();
    let dir = work.path();
    let machine = pool.machine_af(0, &["Machine", "Cpus"]);
    let [name, cpus] = &machine[..] else {
        panic!("{machine:?}");
    };
    std::fs::write(
        dir.join("jobs.sub"),
        "executable = /bin/echo\ntransfer_executable = false\n\
         arguments = $$(Machine) $$(Cpus) $$(Site:nowhere) $$([TARGET.Cpus * 2])\n\
         output = out.txt\nqueue\n\
         arguments = $$(NoSuchAttr)\noutput = never.txt\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "jobs.sub"]);
    let out = wait_for(Duration::from_secs(60), "the echo job's output", || {
        std::fs::read_to_string(dir.join("out.txt")).ok()
    });
    let cpus_n: i64 = cpus.parse().unwrap();
    assert_eq!(out.trim(), format!("{name} {cpus} nowhere {}", cpus_n * 2));
    let history = |attrs: &[&str]| {
        let mut with_proc = vec!["ProcId"];
        with_proc.extend(attrs);
        wait_for(Duration::from_secs(30), "job 1.0 in the history", || {
            pool.af(0, true, &with_proc)
                .into_iter()
                .find(|r| r[0] == "0")
        })[1..]
            .join(" ")
    };
    let expanded = format!("{name} {cpus} nowhere {}", cpus_n * 2);
    assert_eq!(
        history(&[
            "MATCH_Machine",
            "MATCH_Cpus",
            "MATCH_Site",
            "MATCH_EXP_Arguments"
        ]),
        format!("{name} {cpus} nowhere {expanded}")
    );
    assert_eq!(
        history(&["Arguments"]),
        "$$(Machine) $$(Cpus) $$(Site:nowhere) $$([TARGET.Cpus * 2])"
    );
    // The job whose machine has no NoSuchAttr never runs: it is held.
    let held = wait_for(Duration::from_secs(30), "job 1.1 held", || {
        pool.af(0, false, &["ProcId", "JobStatus", "NumJobStarts"])
            .into_iter()
            .find(|r| r[0] == "1" && r[1] == "5")
    });
    assert_eq!(held[2], "undefined", "it never started: {held:?}");
    let reasons = pool.ok(0, dir, &["q", "-af", "HoldReason"]);
    assert_eq!(
        reasons.trim(),
        "Cannot expand $$ expression (NoSuchAttr).",
        "{reasons}"
    );
    assert!(!dir.join("never.txt").exists());
    pool.ok(0, dir, &["rm", "1"]);
    pool.wait_queue_empty(0, Duration::from_secs(30));
}
