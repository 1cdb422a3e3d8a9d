//! The commands and flags an HTCondor user reaches for, on a real agent:
//! `wait` (condor_wait) on a log and on a job, with a time limit; `q
//! -totals`, `-allusers`, `-better-analyze`; `status -compact`; `rm -all`;
//! `whoami` and the agent's log naming the address others join it by
//! and, at INFO, the claim, the job's start and end and its transfers;
//! `off -fast`, after which the agent is gone; and a one-dash flag that
//! names no option refused naming the whole flag.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::path::Path;

mod support;

use support::*;

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn out(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn condor_commands_and_flags_work_on_a_real_agent() {
    let pool = Pool::up_sharing(1);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let shared = shared_dir();
    let go = shared.path().join("go");

    // A flag with one dash that names nothing is refused, all of it named.
    let bad = pool.run(0, dir, &["q", "-totalz"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(out(&bad).1.contains("'-totalz'"), "{:?}", out(&bad));

    // A job that runs until told to end.
    script(
        &dir.join("job.sh"),
        &format!(
            "#!/bin/sh\ni=0\nwhile [ ! -e {} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n",
            go.display()
        ),
    );
    std::fs::write(
        dir.join("job.sub"),
        "executable = job.sh\nlog = job.log\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "job.sub"]);
    let expired = pool.run(0, dir, &["wait", "-wait", "1", "job.log"]);
    assert_eq!(expired.status.code(), Some(1), "{:?}", out(&expired));
    assert!(out(&expired).0.contains("Time expired."));
    let expired = pool.run(0, dir, &["wait", "-wait", "1", "1.0"]);
    assert_eq!(expired.status.code(), Some(1), "{:?}", out(&expired));

    // Totals alone; one's own jobs, and everyone's.
    let totals = pool.ok(0, dir, &["q", "-totals"]);
    assert_eq!(totals.lines().count(), 1, "{totals}");
    assert!(totals.starts_with("Total for query: 1 jobs;"), "{totals}");
    let all = pool.ok(0, dir, &["q", "-allusers", "-totals"]);
    assert!(all.starts_with("Total for query: 1 jobs;"), "{all}");
    let analysis = pool.ok(0, dir, &["q", "-better-analyze", "1.0"]);
    assert!(analysis.contains("1.0"), "{analysis}");
    let compact = pool.ok(0, dir, &["status", "-compact"]);
    assert!(compact.contains("agent-00"), "{compact}");
    assert!(
        compact.starts_with("Machine") && compact.contains("FreCpu"),
        "{compact}"
    );

    std::fs::write(&go, "").unwrap();
    let done = pool.run(0, dir, &["wait", "-wait", "60", "job.log"]);
    assert!(done.status.success(), "{:?}", out(&done));
    assert!(out(&done).0.contains("All jobs done."));
    let done = pool.run(0, dir, &["wait", "-wait", "60", "1.0"]);
    assert!(done.status.success(), "{:?}", out(&done));

    // rm -all: every job the caller may remove.
    std::fs::write(
        dir.join("held.sub"),
        "executable = job.sh\nhold = true\nqueue 3\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "held.sub"]);
    pool.ok(0, dir, &["rm", "-all"]);
    assert!(
        pool.af(0, false, &["ProcId"]).is_empty(),
        "every job removed"
    );

    // Who the agent is, and where others join it.
    let me = pool.ok(0, dir, &["whoami"]);
    let id = me
        .lines()
        .find_map(|l| l.strip_prefix("agent"))
        .unwrap()
        .trim()
        .to_owned();
    let bootstrap = me
        .lines()
        .find_map(|l| l.strip_prefix("bootstrap"))
        .unwrap()
        .trim()
        .to_owned();
    assert!(bootstrap.ends_with(&format!("/p2p/{id}")), "{me}");
    let log = std::fs::read_to_string(pool.agent(0).join("agent.log")).unwrap();
    assert!(log.contains(&format!("--bootstrap {bootstrap}")), "{log}");
    // At INFO, the log tells an operator the job's life on both sides.
    for line in [
        "granted a claim",
        "received the job's input",
        "started the job",
        "the job ended",
        "received the job's output",
        "the job completed",
    ] {
        assert!(log.contains(line), "{line:?} not in the log:\n{log}");
    }

    // Off, at once: the command returns once the agent is gone.
    let pid = pid_of(&pool.agent(0)).unwrap();
    let off = pool.ok(0, dir, &["off", "-fast"]);
    assert!(off.contains("has stopped"), "{off}");
    assert!(!running(pid), "the agent's process is gone");
    let gone = pool.run(0, dir, &["q"]);
    assert!(!gone.status.success());
}

#[test]
fn wait_reads_htcondor_logs_it_did_not_write() {
    // A log as HTCondor writes it, two jobs; one still runs.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("condor.log");
    std::fs::write(
        &log,
        "000 (101.000.000) 2026-11-24 02:15:00 Job submitted from host: <10.0.0.1:9618?addrs=10.0.0.1-9618>\n...\n\
         000 (101.001.000) 2026-11-24 02:15:00 Job submitted from host: <10.0.0.1:9618?addrs=10.0.0.1-9618>\n...\n\
         005 (101.000.000) 2026-11-24 02:16:00 Job terminated.\n\t(1) Normal termination (return value 0)\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n...\n",
    )
    .unwrap();
    let one = ok_in(dir.path(), &["wait", "-num", "1", "condor.log"]);
    assert!(one.contains("All jobs done."), "{one}");
    let job = ok_in(dir.path(), &["wait", "condor.log", "101.0"]);
    assert!(job.contains("All jobs done."), "{job}");
    let all = starling_in(dir.path(), &["wait", "-wait", "1", "condor.log"]);
    assert_eq!(all.status.code(), Some(1));
    // The second job is aborted: now all are done.
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("009 (101.001.000) 2026-11-24 02:17:00 Job was aborted.\n\tvia condor_rm\n...\n");
    std::fs::write(&log, text).unwrap();
    let all = ok_in(dir.path(), &["wait", "-wait", "5", "condor.log"]);
    assert!(all.contains("All jobs done."), "{all}");
}

#[test]
fn tail_shows_a_running_jobs_output_and_follows_it_to_its_end() {
    let pool = Pool::up_sharing(2);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let shared = shared_dir();
    let go = shared.path().join("go");
    // Writes lines 1-300 and a note on stderr, waits to be told, writes
    // 301-310 slowly, then ends.
    script(
        &dir.join("job.sh"),
        &format!(
            "#!/bin/sh\ni=1\nwhile [ $i -le 300 ]; do echo \"line $i\"; i=$((i+1)); done\n\
             echo 'a warning' >&2\n\
             n=0\nwhile [ ! -e {go} ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done\n\
             while [ $i -le 310 ]; do echo \"line $i\"; i=$((i+1)); sleep 0.1; done\n",
            go = go.display()
        ),
    );
    std::fs::write(
        dir.join("job.sub"),
        "executable = job.sh\noutput = out.txt\nerror = err.txt\n\
         requirements = StarlingHost == \"agent-01.d0.testnet\"\nqueue\n",
    )
    .unwrap();
    // Not running yet, or not at all: said so.
    let early = pool.run(0, dir, &["tail", "7.0"]);
    assert!(!early.status.success());
    assert!(
        out(&early).1.contains("not in the queue"),
        "{:?}",
        out(&early)
    );
    pool.ok(0, dir, &["submit", "job.sub"]);
    let tail = wait_for(
        std::time::Duration::from_secs(60),
        "the job's first lines",
        || {
            let o = pool.run(0, dir, &["tail", "1.0"]);
            let text = out(&o).0;
            (o.status.success() && text.ends_with("line 300\n")).then_some(text)
        },
    );
    // The last 1024 bytes, as condor_tail: from inside line ~200 on.
    assert!(tail.len() <= 1024, "{} bytes", tail.len());
    assert!(!tail.contains("line 1\n"), "{tail}");
    let all = pool.ok(0, dir, &["tail", "-maxbytes", "100000", "1.0"]);
    assert!(all.starts_with("line 1\nline 2\n"), "{all}");
    assert_eq!(all.lines().count(), 300);
    let err = pool.ok(0, dir, &["tail", "-stderr", "1.0"]);
    assert_eq!(err, "a warning\n");
    // Follow it to its end.
    std::fs::write(&go, "").unwrap();
    // (From the start: the job may write on before `tail -f` asks.)
    let followed = pool.ok(0, dir, &["tail", "-f", "-maxbytes", "100000", "1.0"]);
    let expected: String = (1..=310).map(|n| format!("line {n}\n")).collect();
    assert_eq!(followed, expected, "every line once, in order, to the end");
    pool.wait_queue_empty(0, std::time::Duration::from_secs(60));
    let ended = pool.run(0, dir, &["tail", "1.0"]);
    assert!(!ended.status.success());
}
