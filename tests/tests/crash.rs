//! Nothing lost and nothing run twice when agents crash: a job whose agent
//! is killed with SIGKILL and started again is taken on again by the
//! execute side (its reaper recorded how it ended) and reconnected to by
//! the submit side (HTCondor's job lease and reconnect): it completes once,
//! with its output, and its user log says it was reconnected.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

/// A job that sleeps, then appends `end <tag>` to `ledger` and writes its
/// output: a run that completes leaves one line.
fn job(dir: &Path, ledger: &Path, tag: &str, sleep: &str) {
    let exe = dir.join("job.sh");
    std::fs::write(
        &exe,
        "#!/bin/sh\necho \"start $1\" >> \"$2\"\nsleep \"$3\"\necho \"result of $1\"\necho \"end $1\" >> \"$2\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("job.sub"),
        format!(
            "executable = job.sh\narguments = \"{tag} {} {sleep}\"\noutput = out.txt\n\
             error = err.txt\nlog = job.log\n+JobLeaseDuration = 30\nqueue\n",
            ledger.display()
        ),
    )
    .unwrap();
}

fn count(ledger: &Path, line: &str) -> usize {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count()
}

/// Kills agent `i` with SIGKILL and waits until it is gone.
fn kill_agent(pool: &Pool, i: usize) {
    let pid = pid_of(&pool.agent(i)).expect("the agent runs");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    wait_for(Duration::from_secs(10), "the agent gone", || {
        (!Path::new(&format!("/proc/{}", pid.as_raw_nonzero())).exists()).then_some(())
    });
}

/// Runs a job, kills its agent(s) while it runs, starts them again, and
/// checks that it completed once.
fn survives(pool: &Pool, agents: usize, kill: &[usize], ended_while_away: bool) {
    let work = tempfile::tempdir().unwrap();
    let shared = shared_dir();
    let ledger = shared.path().join("ledger");
    let sleep = if ended_while_away { "1" } else { "4" };
    job(work.path(), &ledger, "j1", sleep);
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "the job running", || {
        (count(&ledger, "start j1") == 1).then_some(())
    });
    for &i in kill {
        kill_agent(pool, i);
    }
    if ended_while_away {
        // The job ends while nobody is there to hear of it.
        wait_for(Duration::from_secs(10), "the job ending", || {
            (count(&ledger, "end j1") == 1).then_some(())
        });
    }
    let _restarted: Vec<Reap> = kill.iter().map(|&i| pool.start(i)).collect();
    wait_for(Duration::from_secs(60), "the job completed", || {
        // The restarted agent may not answer yet.
        let out = pool.run(0, work.path(), &["history", "-af", "JobStatus"]);
        (out.status.success() && !out.stdout.is_empty()).then_some(())
    });
    let rows = pool.af(0, true, &["JobStatus", "NumJobStarts", "ExitCode"]);
    assert_eq!(
        rows,
        vec![vec!["4".to_owned(), "1".to_owned(), "0".to_owned()]],
        "completed once, started once\n{}",
        pool.diagnose(0, "1.0", agents)
    );
    assert_eq!(count(&ledger, "start j1"), 1, "the job ran again");
    assert_eq!(count(&ledger, "end j1"), 1);
    assert_eq!(
        std::fs::read_to_string(work.path().join("out.txt")).unwrap(),
        "result of j1\n"
    );
    let log = std::fs::read_to_string(work.path().join("job.log")).unwrap();
    assert!(log.contains("Job reconnected to"), "{log}");
    assert!(!log.contains("Job was evicted"), "{log}");
}

#[test]
fn a_job_whose_only_agent_is_killed_completes_once_after_its_restart() {
    survives(&Pool::up_sharing(1), 1, &[0], false);
}

#[test]
fn a_job_that_ends_while_its_agent_is_down_completes_once() {
    survives(&Pool::up_sharing(1), 1, &[0], true);
}
