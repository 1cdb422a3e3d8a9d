//! `starling vacate` (HTCondor's `condor_vacate_job`) and `kill_sig` on a
//! real pool:
//!
//! - a running job with `kill_sig = SIGUSR1` is vacated: it gets SIGUSR1
//!   (it notes so), leaves, goes back to idle with its user log and
//!   `LastVacateReason` naming who vacated it, runs again and completes;
//! - bad input: a `kill_sig` a job cannot catch or that names no signal is
//!   refused at submit naming the command and the value; vacating a job
//!   that is not in the queue or not running says so, job by job.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

/// A job that notes each start in `$1`; on its first run it runs long and
/// leaves on SIGUSR1, writing `caught` into `$2` (SIGTERM it notes as
/// such); on a later run it ends at once.
const USR1_JOB: &str = r#"#!/bin/sh
echo start >> "$1"
if [ -e "$2" ]; then echo "second run"; exit 0; fi
trap 'echo caught > "$2"; exit 0' USR1
trap 'echo "got TERM" >> "$1"; exit 143' TERM
i=0
while [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done
echo "first run ran to its end"
"#;

/// Writes an executable script.
fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_vacated_job_gets_its_kill_sig_goes_back_to_idle_and_runs_again() {
    let pool = Pool::up_sharing(2);
    let work = shared_dir();
    let starts = work.path().join("starts");
    let caught = work.path().join("caught");
    script(&work.path().join("job.sh"), USR1_JOB);
    std::fs::write(
        work.path().join("job.sub"),
        format!(
            "executable = job.sh\narguments = {} {}\nkill_sig = usr1\noutput = out.txt\n\
             log = job.log\nqueue\n",
            starts.display(),
            caught.display()
        ),
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    assert_eq!(pool.af(0, false, &["KillSig"]), [["SIGUSR1"]]);
    let started = |n: usize| {
        let starts = starts.clone();
        move || {
            let text = std::fs::read_to_string(&starts).ok()?;
            (text.lines().filter(|l| *l == "start").count() >= n).then_some(())
        }
    };
    wait_for(Duration::from_secs(60), "the job running", started(1));
    wait_for(
        Duration::from_secs(30),
        "the job Running in the queue",
        || (pool.af(0, false, &["JobStatus"]) == [["2"]]).then_some(()),
    );

    let said = pool.ok(0, work.path(), &["vacate", "1.0"]);
    assert_eq!(said.trim(), "Job 1.0 vacated", "{said}");
    // It left on its own kill_sig, not SIGTERM (nor SIGKILL: it noted it).
    wait_for(Duration::from_secs(30), "the job catching SIGUSR1", || {
        caught.exists().then_some(())
    });
    assert_eq!(std::fs::read_to_string(&caught).unwrap().trim(), "caught");
    // Back to idle, then run again, to its end.
    pool.wait_queue_empty(0, Duration::from_secs(90));
    assert!(started(2)().is_some(), "the job ran again");
    let done = pool.af(0, true, &["JobStatus", "NumJobStarts", "ExitCode"]);
    assert_eq!(done, [["4", "2", "0"]], "{}", pool.diagnose(0, "1.0", 2));
    let out = std::fs::read_to_string(work.path().join("out.txt")).unwrap();
    assert_eq!(out.trim(), "second run");
    assert!(
        !std::fs::read_to_string(&starts)
            .unwrap()
            .contains("got TERM"),
        "the job was sent SIGTERM"
    );
    let reason = pool.ok(0, work.path(), &["history", "1", "-af", "LastVacateReason"]);
    assert!(
        reason.contains("vacated by user ") && reason.contains(" via starling vacate"),
        "{reason}"
    );
    // The user log: submitted, its input sent and started, evicted
    // (saying who), its input sent and started again, its output back,
    // terminated.
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
    assert_eq!(
        log.matches("Started transferring input files").count(),
        2,
        "{log}"
    );
    assert_eq!(
        log.matches("Finished transferring input files").count(),
        2,
        "{log}"
    );
    assert!(log.contains("via starling vacate"), "{log}");
}

#[test]
fn a_job_taken_on_by_a_restarted_execute_agent_is_vacated_with_its_kill_sig() {
    let pool = Pool::up_sharing(2);
    let work = shared_dir();
    let starts = work.path().join("starts");
    let caught = work.path().join("caught");
    script(&work.path().join("job.sh"), USR1_JOB);
    std::fs::write(
        work.path().join("job.sub"),
        format!(
            "executable = job.sh\narguments = {} {}\nkill_sig = SIGUSR1\noutput = out.txt\n\
             log = job.log\n+JobLeaseDuration = 30\n\
             requirements = regexp(\"agent-01\", Name)\nqueue\n",
            starts.display(),
            caught.display()
        ),
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "the job running", || {
        starts.exists().then_some(())
    });
    // The execute agent crashes and comes back: it takes the job on again
    // from its run record (the job ad, KillSig and all).
    let pid = pid_of(&pool.agent(1)).expect("the agent runs");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    wait_for(Duration::from_secs(10), "the agent gone", || {
        (!Path::new(&format!("/proc/{}", pid.as_raw_nonzero())).exists()).then_some(())
    });
    let _restarted = pool.start(1);
    // Asked until the restarted agent answers.
    wait_for(Duration::from_secs(60), "the vacate taken", || {
        let out = pool.run(0, work.path(), &["vacate", "1.0"]);
        out.status.success().then_some(())
    });
    wait_for(Duration::from_secs(30), "the job catching SIGUSR1", || {
        caught.exists().then_some(())
    });
    pool.wait_queue_empty(0, Duration::from_secs(90));
    let done = pool.af(0, true, &["JobStatus", "NumJobStarts", "ExitCode"]);
    assert_eq!(done, [["4", "2", "0"]], "{}", pool.diagnose(0, "1.0", 2));
    let starts = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(
        starts, "start\nstart\n",
        "sent SIGTERM, or ran a third time"
    );
    let log = std::fs::read_to_string(work.path().join("job.log")).unwrap();
    assert!(log.contains("via starling vacate"), "{log}");
}

#[test]
fn bad_kill_sigs_and_vacates_of_jobs_not_running_are_refused_job_by_job() {
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    let submit = |kill_sig: &str| {
        std::fs::write(
            work.path().join("job.sub"),
            format!(
                "executable = /bin/sleep\narguments = 600\nkill_sig = {kill_sig}\n\
                 requirements = false\nqueue\n"
            ),
        )
        .unwrap();
        pool.run(0, work.path(), &["submit", "job.sub"])
    };
    for (value, problem) in [
        ("SIGKILL", "is a signal a job cannot catch"),
        ("9", "is SIGKILL, a signal a job cannot catch"),
        ("SIGSTOP", "is a signal a job cannot catch"),
        ("BOGUS", "is not a signal name"),
    ] {
        let out = submit(value);
        let (_, err) = text(&out);
        assert!(!out.status.success(), "kill_sig = {value} was taken");
        assert!(
            err.contains(&format!("job.sub:3: kill_sig: \"{value}\" {problem}")),
            "kill_sig = {value}: {err}"
        );
    }
    assert!(
        pool.af(0, false, &["ClusterId"]).is_empty(),
        "nothing queued"
    );

    // A job that stays idle (no machine matches it).
    let out = submit("SIGINT");
    assert!(out.status.success(), "{:?}", text(&out));
    let cluster = pool.af(0, false, &["ClusterId", "KillSig", "JobStatus"]);
    assert_eq!(cluster.len(), 1, "{cluster:?}");
    assert_eq!(cluster[0][1..], ["SIGINT", "1"]);
    let job = format!("{}.0", cluster[0][0]);

    let out = pool.run(0, work.path(), &["vacate", &job]);
    let (said, err) = text(&out);
    assert!(!out.status.success(), "{said}");
    assert_eq!(
        err.trim(),
        format!("Job {job} not vacated: it is idle, not running")
    );

    let out = pool.run(0, work.path(), &["vacate", "999.0"]);
    let (said, err) = text(&out);
    assert!(!out.status.success(), "{said}");
    assert_eq!(
        err.trim(),
        "Job 999.0 not vacated: no such job in the queue"
    );

    // `-all` and `-constraint` select only running jobs to vacate: the
    // idle one is reported.
    for args in [
        vec!["vacate", "-all"],
        vec!["vacate", "-constraint", "JobStatus == 1"],
    ] {
        let out = pool.run(0, work.path(), &args);
        let (_, err) = text(&out);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains("it is idle, not running"), "{args:?}: {err}");
    }
    // Naming no job is an error, not "all".
    let out = pool.run(0, work.path(), &["vacate"]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("say which jobs"), "{err}");
    // The job is untouched.
    assert_eq!(pool.af(0, false, &["JobStatus"]), [["1"]]);
}
