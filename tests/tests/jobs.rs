//! Jobs on a real pool: `starling testnet up` starts agent processes on
//! loopback, `starling submit` queues HTCondor submit files on some of them,
//! and the jobs (real processes) run on the others, chosen peer to peer.
//!
//! - many jobs from two submit agents all complete with their outputs and
//!   exit codes, and no machine ever runs more jobs than it has cpus;
//! - an execute agent killed mid-job: its job runs again elsewhere;
//! - the submit agent killed and restarted: nothing lost, nothing twice;
//! - bad submit files, a missing executable, an input that vanished and a
//!   job over its memory end as errors or held jobs with HTCondor's codes.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

/// A job that records where and when it ran, and echoes its input.
const RECORDER: &str = r#"#!/bin/sh
start=$(date +%s%N)
slot=$(grep '^Name = ' "$_CONDOR_MACHINE_AD" | sed 's/^Name = "\(.*\)"$/\1/')
sleep "$2"
echo "$1 $(cat in.txt) $slot $start $(date +%s%N)"
exit $(( $1 % 5 ))
"#;

fn write_workload(dir: &Path, procs: usize, sleep: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let exe = dir.join("record.sh");
    std::fs::write(&exe, RECORDER).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("in.txt"), "payload").unwrap();
    std::fs::write(
        dir.join("job.sub"),
        format!(
            "executable = record.sh\narguments = $(Process) {sleep}\n\
             transfer_input_files = in.txt\noutput = out/$(Process).txt\n\
             error = out/$(Process).err\nlog = job.log\nrequest_memory = 64\nqueue {procs}\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
}

/// (slot, start ns, end ns) of every job run in `dir`, checking each
/// output and returning them.
fn check_outputs(dir: &Path, procs: usize) -> Vec<(String, u128, u128)> {
    (0..procs)
        .map(|p| {
            let text = std::fs::read_to_string(dir.join(format!("out/{p}.txt")))
                .unwrap_or_else(|e| panic!("output of job {p} in {}: {e}", dir.display()));
            let f: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(f.len(), 5, "job {p}: {text:?}");
            assert_eq!(f[0], p.to_string());
            assert_eq!(f[1], "payload");
            (
                f[2].to_owned(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn two_submitters_run_many_jobs_across_the_pool_without_oversubscribing() {
    let pool = Pool::up(6);
    let per_submitter = 100;
    let work = tempfile::tempdir().unwrap();
    let dirs = [work.path().join("a"), work.path().join("b")];
    for (i, dir) in dirs.iter().enumerate() {
        write_workload(dir, per_submitter, "0.2");
        let said = pool.ok(i, dir, &["submit", "job.sub"]);
        assert!(
            said.contains(&format!("{per_submitter} job(s) submitted to cluster 1.")),
            "{said}"
        );
    }
    for i in 0..2 {
        pool.wait_queue_empty(i, Duration::from_secs(300));
    }
    let mut runs = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let done = pool.af(i, true, &["ProcId", "ExitCode", "JobStatus"]);
        assert_eq!(done.len(), per_submitter, "agent {i}'s history");
        for row in &done {
            let proc: usize = row[0].parse().unwrap();
            assert_eq!(row[1], (proc % 5).to_string(), "exit code of {proc}");
            assert_eq!(row[2], "4", "completed");
        }
        runs.extend(check_outputs(dir, per_submitter));
    }
    // Per machine, never more jobs at once than its cpus (2 in a testnet
    // agent's ad... or whatever the machine has).
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut by_machine: BTreeMap<String, Vec<(u128, u128)>> = BTreeMap::new();
    for (slot, start, end) in &runs {
        let machine = slot.split('@').nth(1).unwrap_or(slot).to_owned();
        by_machine.entry(machine).or_default().push((*start, *end));
    }
    assert!(
        by_machine.len() >= 3,
        "jobs spread over the pool: {:?}",
        by_machine.keys()
    );
    for (machine, spans) in &by_machine {
        let mut edges: Vec<(u128, i32)> = spans
            .iter()
            .flat_map(|(s, e)| [(*s, 1), (*e, -1)])
            .collect();
        edges.sort();
        let (mut now, mut most) = (0, 0);
        for (_, d) in edges {
            now += d;
            most = most.max(now);
        }
        assert!(
            most as usize <= cpus,
            "{machine} ran {most} jobs at once with {cpus} cpus"
        );
    }
}

/// The agent (index) whose machine name `slot` names.
fn agent_of(slot: &str) -> usize {
    let host = slot.split('@').nth(1).unwrap_or(slot);
    host.trim_start_matches("agent-")
        .split('.')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no agent in {slot:?}"))
}

#[test]
fn a_job_whose_machine_is_killed_runs_again_elsewhere() {
    let pool = Pool::up(3);
    let work = tempfile::tempdir().unwrap();
    write_workload(work.path(), 1, "6");
    // Not on the submit agent's own machine: killing it would kill both.
    let sub = std::fs::read_to_string(work.path().join("job.sub")).unwrap();
    std::fs::write(
        work.path().join("job.sub"),
        sub.replace(
            "queue",
            "requirements = TARGET.Name =!= \"slot1@agent-00.d0.testnet\"\nqueue",
        ),
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    let host = wait_for(Duration::from_secs(60), "the job starting", || {
        let rows = pool.af(0, false, &["JobStatus", "RemoteHost"]);
        rows.first()
            .filter(|r| r[0] == "2" && r.len() > 1)
            .map(|r| r[1].clone())
    });
    let victim = agent_of(&host);
    assert_ne!(victim, 0, "the requirements keep it off the submit agent");
    let pid = pid_of(&pool.agent(victim)).expect("the victim's pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    // Back to idle once the lease lapses, then it runs on the other machine.
    pool.wait_queue_empty(0, Duration::from_secs(120));
    let done = pool.af(0, true, &["ExitCode", "NumJobStarts", "LastRemoteHost"]);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0][0], "0");
    assert_eq!(done[0][1], "2", "it started twice");
    let (slot, _, _) = check_outputs(work.path(), 1).remove(0);
    assert_ne!(agent_of(&slot), victim, "it finished elsewhere");
    // The user log tells the story as HTCondor's would.
    let log = std::fs::read_to_string(work.path().join("job.log")).unwrap();
    let events: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" (001.000.000) "))
        .map(|l| &l[..3])
        .collect();
    // Disconnected, reconnection failed once the lease lapsed, evicted,
    // executing elsewhere, its output back, terminated.
    assert_eq!(
        events,
        vec![
            "000", "040", "001", "040", "022", "024", "004", "040", "001", "040", "040", "040",
            "005"
        ],
        "{log}"
    );
    assert!(
        log.contains("(1) Normal termination (return value 0)"),
        "{log}"
    );
}

#[test]
fn a_killed_and_restarted_submit_agent_loses_nothing_and_runs_nothing_twice() {
    const SUBMITTER: usize = 2;
    let pool = Pool::up(3);
    let work = tempfile::tempdir().unwrap();
    let procs = 8;
    write_workload(work.path(), procs, "2");
    // Agent 2: it finds the pool again through its bootstrap peer (agent 0)
    // when it restarts on a new port.
    pool.ok(SUBMITTER, work.path(), &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "jobs running", || {
        let rows = pool.af(SUBMITTER, false, &["JobStatus"]);
        rows.iter().any(|r| r[0] == "2").then_some(())
    });
    let pid = pid_of(&pool.agent(SUBMITTER)).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    wait_for(Duration::from_secs(10), "the agent dying", || {
        (!std::path::Path::new(&format!("/proc/{}", pid.as_raw_nonzero())).exists()).then_some(())
    });
    // Restarted as the testnet started it.
    let _restarted = pool.start(SUBMITTER);
    wait_for(Duration::from_secs(30), "the agent answering", || {
        pool.run(SUBMITTER, work.path(), &["q"])
            .status
            .success()
            .then_some(())
    });
    pool.wait_queue_empty(SUBMITTER, Duration::from_secs(180));
    let done = pool.af(
        SUBMITTER,
        true,
        &["ProcId", "JobStatus", "ExitCode", "NumJobStarts"],
    );
    let ids: BTreeSet<String> = done.iter().map(|r| r[0].clone()).collect();
    assert_eq!(done.len(), procs, "each job once in the history: {done:?}");
    assert_eq!(ids.len(), procs);
    for row in &done {
        assert_eq!(row[1], "4");
        // Reconnected to, not run again.
        assert_eq!(
            row[3],
            "1",
            "{row:?}\n{}\n{}",
            std::fs::read_to_string(work.path().join("job.log")).unwrap_or_default(),
            pool.diagnose(SUBMITTER, &format!("1.{}", row[0]), 3)
        );
    }
    check_outputs(work.path(), procs);
}

#[test]
fn bad_input_ends_as_errors_or_held_jobs_with_htcondors_codes() {
    let pool = Pool::up(2);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    // A bad file: an error naming the line, and nothing queued.
    std::fs::write(
        dir.join("bad.sub"),
        "executable = /bin/true\nrequest_memory = lots of it\nqueue\n",
    )
    .unwrap();
    let out = pool.run(0, dir, &["submit", "bad.sub"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.sub:2:") && err.contains("request_memory"),
        "{err}"
    );
    assert!(pool.af(0, false, &["ProcId"]).is_empty(), "nothing queued");

    // A missing executable, an input removed before the job ran, and a job
    // that uses far more memory than it asked for.
    std::fs::write(dir.join("gone.txt"), "x").unwrap();
    std::fs::write(
        dir.join("jobs.sub"),
        "executable = /no/such/program\ntransfer_executable = false\nqueue\n\
         executable = /bin/cat\ntransfer_executable = false\ntransfer_input_files = gone.txt\nhold = true\nqueue\n\
         executable = /bin/sh\ntransfer_executable = false\ntransfer_input_files =\nhold = false\n\
         arguments = \"-c 'python3 -c \"\"x = bytearray(600 << 20); import time; time.sleep(5)\"\"'\"\n\
         request_memory = 100\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "jobs.sub"]);
    std::fs::remove_file(dir.join("gone.txt")).unwrap();
    pool.ok(0, dir, &["release", "1.1"]);
    let held = wait_for(Duration::from_secs(90), "three held jobs", || {
        let rows = pool.af(0, false, &["ProcId", "JobStatus", "HoldReasonCode"]);
        (rows.len() == 3 && rows.iter().all(|r| r[1] == "5")).then_some(rows)
    });
    let codes: Vec<&str> = held.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(codes, vec!["6", "13", "34"], "{held:?}");
    let reasons = pool.ok(0, dir, &["q", "-hold"]);
    assert!(reasons.contains("/no/such/program"), "{reasons}");
    assert!(reasons.contains("gone.txt"), "{reasons}");
    assert!(reasons.contains("memory"), "{reasons}");
    // The pool still works: a good job after all that completes.
    std::fs::write(dir.join("good.sub"), "executable = /bin/echo\narguments = fine\noutput = good.out\ntransfer_executable = false\nqueue\n").unwrap();
    pool.ok(0, dir, &["submit", "good.sub"]);
    wait_for(Duration::from_secs(60), "the good job", || {
        std::fs::read_to_string(dir.join("good.out"))
            .ok()
            .filter(|t| t.trim() == "fine")
    });
    // Removing held jobs empties the queue.
    let removed = pool.ok(0, dir, &["rm", "1"]);
    assert_eq!(
        removed.trim(),
        "All jobs in cluster 1 have been marked for removal",
        "{removed}"
    );
    pool.wait_queue_empty(0, Duration::from_secs(30));

    // A job no machine can run stays idle, and `why` says which clause.
    std::fs::write(
        dir.join("huge.sub"),
        "executable = /bin/true\ntransfer_executable = false\n\
         requirements = TARGET.Memory > 100000000\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "huge.sub"]);
    let why = pool.ok(0, dir, &["why", "3.0"]);
    assert!(
        why.contains("2 are rejected by the job's Requirements"),
        "{why}"
    );
    assert!(
        why.contains("2 machines fail  (TARGET.Memory > 100000000)"),
        "{why}"
    );
    let bad = pool.run(0, dir, &["why", "99.0"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("job 99.0 is not in the queue"));
    // Widening it with qedit lets it run.
    let edited = pool.ok(
        0,
        dir,
        &["qedit", "3.0", "Requirements", "TARGET.Memory > 1"],
    );
    assert!(edited.contains("Job 3.0 set Requirements"), "{edited}");
    let refused = pool.run(0, dir, &["qedit", "3.0", "JobStatus", "4"]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("JobStatus belongs to the queue"));
    pool.wait_queue_empty(0, Duration::from_secs(60));

    // Removing a running job stops it on its machine.
    std::fs::write(
        dir.join("long.sub"),
        "executable = /bin/sleep\ntransfer_executable = false\narguments = 60\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "long.sub"]);
    wait_for(Duration::from_secs(60), "the long job running", || {
        let rows = pool.af(0, false, &["JobStatus"]);
        (rows.first().map(|r| r[0].as_str()) == Some("2")).then_some(())
    });
    let sleeping = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read_to_string(e.path().join("cmdline"))
                    .is_ok_and(|c| c == "/bin/sleep\u{0}60\u{0}")
            })
            .count()
    };
    // Running in the queue's eyes a moment before its process starts.
    wait_for(Duration::from_secs(30), "the job's process", || {
        (sleeping() == 1).then_some(())
    });
    pool.ok(0, dir, &["rm", "4.0"]);
    pool.wait_queue_empty(0, Duration::from_secs(30));
    let last = pool.af(0, true, &["ClusterId", "JobStatus"]);
    assert_eq!(last[0], vec!["4", "3"], "removed, in the history: {last:?}");
    wait_for(Duration::from_secs(30), "the job's process gone", || {
        (sleeping() == 0).then_some(())
    });
}

#[test]
fn a_pool_of_one_runs_its_own_jobs() {
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    write_workload(work.path(), 3, "0");
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(60));
    for (slot, _, _) in check_outputs(work.path(), 3) {
        assert_eq!(agent_of(&slot), 0);
    }
}

#[test]
fn output_remaps_put_output_files_where_the_submit_file_says() {
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    std::fs::create_dir(dir.join("results")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.join("remap.sub"),
        format!(
            "executable = /bin/sh\ntransfer_executable = false\n\
             arguments = \"-c 'echo a > a.txt; echo b > b.txt; echo c > c.txt'\"\n\
             transfer_output_files = a.txt, b.txt, c.txt\n\
             transfer_output_remaps = \"a.txt = results/first.txt; b.txt = {}/second.txt\"\n\
             queue\n",
            elsewhere.path().display()
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "remap.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(60));
    let read =
        |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert_eq!(read(&dir.join("results/first.txt")), "a\n");
    assert_eq!(read(&elsewhere.path().join("second.txt")), "b\n");
    assert_eq!(
        read(&dir.join("c.txt")),
        "c\n",
        "not remapped: into initialdir"
    );
    assert!(!dir.join("a.txt").exists() && !dir.join("b.txt").exists());
    // output_directory: what is not remapped goes there, made if missing;
    // the job's output stream stays where `output` says.
    std::fs::write(
        dir.join("outdir.sub"),
        "executable = /bin/sh\ntransfer_executable = false\n\
         arguments = \"-c 'echo d > d.txt; echo e > e.txt; echo out'\"\n\
         transfer_output_files = d.txt, e.txt\noutput = stream.txt\n\
         transfer_output_remaps = \"e.txt = results/e.txt\"\n\
         output_directory = made/$(Cluster)\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "outdir.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(60));
    assert_eq!(read(&dir.join("made/2/d.txt")), "d\n");
    assert_eq!(
        read(&dir.join("results/e.txt")),
        "e\n",
        "remapped: as remapped"
    );
    assert_eq!(read(&dir.join("stream.txt")), "out\n");
}

#[test]
fn a_job_running_longer_than_allowed_is_held_with_htcondors_code() {
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("long.sub"),
        "executable = /bin/sleep\ntransfer_executable = false\narguments = 60\n\
         allowed_execute_duration = 2\nqueue\n",
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "long.sub"]);
    let row = wait_for(Duration::from_secs(60), "the job held", || {
        let rows = pool.af(0, false, &["JobStatus", "HoldReasonCode", "HoldReason"]);
        rows.into_iter().find(|r| r[0] == "5")
    });
    assert_eq!(row[1], "47", "{row:?}");
    assert_eq!(
        row[2..].join(" "),
        "The job exceeded allowed execute duration of 00:02",
        "{row:?}"
    );
}

#[test]
fn the_jobs_own_policy_holds_requeues_retries_and_removes_it() {
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    std::fs::write(
        dir.join("policy.sub"),
        "transfer_executable = false\n\
         executable = /bin/false\non_exit_hold = ExitCode =!= 0\nqueue\n\
         executable = /bin/true\non_exit_hold = false\nhold = true\n\
         periodic_remove = CurrentTime - QDate >= 0 && UNDEFINED_THING =!= 1\nqueue\n\
         hold = false\nperiodic_remove = false\n\
         executable = /bin/sh\narguments = \"-c 'echo run >> runs.txt'\"\n\
         on_exit_remove = NumJobStarts >= 2\nqueue\n\
         on_exit_remove = false\nmax_retries = 2\n\
         arguments = \"-c 'exit 3'\"\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "policy.sub"]);
    let rows = wait_for(Duration::from_secs(60), "the policies applied", || {
        let rows = pool.af(0, false, &["ProcId", "JobStatus", "HoldReasonCode"]);
        (rows.len() == 1 && rows[0][1] == "5").then_some(rows)
    });
    assert_eq!(rows[0], vec!["0", "5", "3"], "held by on_exit_hold");
    let held = pool.ok(0, dir, &["q", "-hold"]);
    assert!(held.contains("OnExitHold"), "{held}");
    let history = pool.af(0, true, &["ProcId", "JobStatus", "NumJobStarts"]);
    let by_proc: BTreeMap<String, Vec<String>> =
        history.into_iter().map(|r| (r[0].clone(), r)).collect();
    assert_eq!(by_proc["1"][1], "3", "removed by periodic_remove");
    assert_eq!(by_proc["2"][1], "4", "completed on its second run");
    assert_eq!(by_proc["2"][2], "2");
    // max_retries = 2: a job that fails runs three times in all, and
    // leaves with its exit code.
    let retried = pool.af(
        0,
        true,
        &["ProcId", "NumJobStarts", "NumJobCompletions", "ExitCode"],
    );
    let retried = retried.iter().find(|r| r[0] == "3").expect("proc 3 done");
    assert_eq!(retried[1..], ["3", "3", "3"], "{retried:?}");
    // Each run starts from a fresh sandbox; the last one's output is back.
    assert_eq!(
        std::fs::read_to_string(dir.join("runs.txt")).unwrap(),
        "run\n"
    );
}

/// A job that writes its pid to the marker file it is given and runs a
/// minute on its first run; once the marker exists it ends at once.
const HELD_JOB: &str = r#"#!/bin/sh
if [ -e "$1" ]; then echo "second run"; exit 0; fi
echo $$ > "$1.tmp" && mv "$1.tmp" "$1"
i=0
while [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done
echo "first run ran to its end"
"#;

#[test]
fn periodic_hold_holds_a_running_job_and_periodic_release_requeues_it() {
    let pool = Pool::up_sharing(1);
    let work = shared_dir();
    let dir = work.path();
    let exe = dir.join("hold.sh");
    std::fs::write(&exe, HELD_JOB).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let marker = dir.join("first-run.pid");
    // Held on its first run once it has run 2 s; released after 6 s held
    // (the periodic policy runs every 5 s: the hold lasts about 10 s).
    std::fs::write(
        dir.join("hold.sub"),
        format!(
            "executable = hold.sh\narguments = {}\noutput = out.txt\nlog = job.log\n\
             periodic_hold = JobStatus == 2 && NumJobStarts == 1 && CurrentTime - JobCurrentStartDate >= 2\n\
             periodic_release = JobStatus == 5 && HoldReasonCode == 3 && CurrentTime - EnteredCurrentStatus >= 6\n\
             queue\n",
            marker.display()
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "hold.sub"]);
    let pid = wait_for(Duration::from_secs(60), "the first run started", || {
        let pid = std::fs::read_to_string(&marker).ok()?;
        let pid = pid.trim().to_owned();
        (!pid.is_empty()).then_some(pid)
    });
    let first_run_alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.contains(marker.to_str().unwrap()))
    };
    let held = wait_for(
        Duration::from_secs(60),
        "the job held by periodic_hold",
        || {
            let rows = pool.af(
                0,
                false,
                &[
                    "JobStatus",
                    "HoldReasonCode",
                    "HoldReasonSubCode",
                    "NumJobStarts",
                    "HoldReason",
                ],
            );
            (rows.first()?.first()? == "5").then(|| rows[0].clone())
        },
    );
    assert_eq!(held[..4], ["5", "3", "0", "1"], "{held:?}");
    let reason = held[4..].join(" ");
    assert!(
        reason.contains("PeriodicHold") && reason.contains("evaluated to TRUE"),
        "{reason}"
    );
    // Holding a running job stops it on its machine.
    wait_for(Duration::from_secs(30), "the first run stopped", || {
        (!first_run_alive()).then_some(())
    });
    // Released, it runs again (NumJobStarts 2: no more hold) and ends.
    pool.wait_queue_empty(0, Duration::from_secs(90));
    let done = pool.af(
        0,
        true,
        &[
            "JobStatus",
            "NumJobStarts",
            "ExitCode",
            "RemoteWallClockTime",
        ],
    );
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0][..3], ["4", "2", "0"], "{done:?}");
    let wall: f64 = done[0][3].parse().unwrap();
    assert!(wall >= 2.0, "the held run's time is recorded: {done:?}");
    let last_hold = pool.ok(0, dir, &["history", "-af", "LastHoldReason"]);
    assert!(last_hold.contains("PeriodicHold"), "{last_hold}");
    assert_eq!(
        std::fs::read_to_string(dir.join("out.txt")).unwrap().trim(),
        "second run"
    );
    let log = std::fs::read_to_string(dir.join("job.log")).unwrap();
    let events: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" (001.000.000) "))
        .map(|l| &l[..3])
        .collect();
    assert_eq!(
        events,
        ["000", "040", "001", "040", "012", "013", "040", "001", "040", "040", "040", "005"],
        "{log}"
    );
    assert!(log.contains("Code 3 Subcode 0"), "{log}");
    assert!(log.contains("PeriodicHold"), "{log}");
}

#[test]
fn programs_named_in_a_submit_file_run_only_with_allow_commands() {
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    std::fs::write(dir.join("settings.sh"), "echo 'arguments = item-$(x)'\n").unwrap();
    std::fs::write(
        dir.join("p.sub"),
        "executable = /bin/echo\ntransfer_executable = false\n\
         include command : sh settings.sh\nqueue x from seq 1 3 |\n",
    )
    .unwrap();
    let refused = pool.run(0, dir, &["submit", "p.sub"]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("p.sub:3") && said.contains("-allow-commands"),
        "{said}"
    );
    let out = pool.ok(0, dir, &["submit", "-allow-commands", "p.sub"]);
    assert!(out.contains("3 job(s) submitted"), "{out}");
    pool.wait_queue_empty(0, Duration::from_secs(60));
    let mut args: Vec<String> = pool
        .af(0, true, &["Arguments"])
        .into_iter()
        .map(|r| r.join(" "))
        .collect();
    args.sort();
    assert_eq!(args, ["item-1", "item-2", "item-3"]);
}
