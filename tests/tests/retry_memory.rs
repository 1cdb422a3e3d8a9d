//! A job that goes over its memory runs again with more, as HTCondor 25's
//! `retry_request_memory` and `request_memory = a, b, c` ask, on a real
//! pool:
//!
//! - a job asking `request_memory = 64, 128, 512` that needs about 200
//!   MiB is killed at 64 and at 128 MiB, and each time goes back to idle
//!   instead of being held, with the next size as its `RequestMemory`;
//!   at 512 MiB it completes, after three starts, each eviction in its
//!   user log;
//! - a job whose `retry_request_memory` is still too small runs twice,
//!   then is held with HTCondor's code and subcode for memory (34, 102).
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::time::Duration;

mod support;

use support::*;

/// A job that needs about 200 MiB (python3, else a shell string as big).
const HUNGRY: &str = r#"#!/bin/sh
python3 -c 'x = bytearray(200 << 20); import time; time.sleep(2); print(len(x) >> 20)' && exit 0
x=$(head -c 200000000 /dev/zero | tr '\0' a); sleep 2; echo 200
"#;

#[test]
fn a_job_over_its_memory_runs_again_with_more_until_its_last_size() {
    let pool = Pool::up_sharing(1);
    let work = shared_dir();
    let dir = work.path();
    let exe = dir.join("hungry.sh");
    std::fs::write(&exe, HUNGRY).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("jobs.sub"),
        "executable = hungry.sh\nlog = jobs.log\noutput = out.$(Process)\n\
         request_memory = 64, 128, 512\nqueue\n\
         request_memory = 64\nretry_request_memory = 96\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "jobs.sub"]);
    // The second job: at 96 MiB it is still too big, so it is held.
    let held = wait_for(Duration::from_secs(120), "job 1.1 held", || {
        pool.af(
            0,
            false,
            &[
                "ProcId",
                "JobStatus",
                "HoldReasonCode",
                "HoldReasonSubCode",
                "RequestMemory",
                "NumJobStarts",
            ],
        )
        .into_iter()
        .find(|r| r[0] == "1" && r[1] == "5")
    });
    assert_eq!(held[2..], ["34", "102", "96", "2"], "{held:?}");
    // The first completes at its last size, after three runs.
    let done = wait_for(Duration::from_secs(120), "job 1.0 completed", || {
        pool.af(
            0,
            true,
            &[
                "ProcId",
                "ExitCode",
                "RequestMemory",
                "NumJobStarts",
                "RetryRequestMemoryIndex",
            ],
        )
        .into_iter()
        .find(|r| r[0] == "0")
    });
    assert_eq!(done[1..], ["0", "512", "3", "1"], "{done:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("out.0")).unwrap().trim(),
        "200"
    );
    let log = std::fs::read_to_string(dir.join("jobs.log")).unwrap();
    let evictions = log
        .lines()
        .filter(|l| l.starts_with("004 (001.000.000)"))
        .count();
    assert_eq!(evictions, 2, "{log}");
    assert!(
        log.contains("Running again with RequestMemory = 128")
            && log.contains("RequestMemory = 512"),
        "{log}"
    );
    pool.ok(0, dir, &["rm", "1"]);
    pool.wait_queue_empty(0, Duration::from_secs(30));
}
