//! HTCondor's limits on the size of a job's transfers, on a real pool:
//!
//! - `max_transfer_input_mb = 1` with 2 MiB of input: the job is queued
//!   held at submit, with HTCondor's code 32 and reason, and never runs;
//! - `max_transfer_output_mb = 1` for a job whose output is a small file
//!   then a 2 MiB one: the small one comes back, the big one does not,
//!   and the job is held with HTCondor's code 33.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::time::Duration;

mod support;

use support::*;

#[test]
fn input_and_output_over_their_limits_hold_the_job() {
    let pool = Pool::up_sharing(1);
    let work = shared_dir();
    let dir = work.path();
    std::fs::write(dir.join("big.in"), vec![b'x'; 2 << 20]).unwrap();
    std::fs::write(
        dir.join("jobs.sub"),
        "executable = /bin/sh\ntransfer_executable = false\n\
         arguments = \"-c 'echo ran > ran.txt'\"\n\
         transfer_input_files = big.in\nmax_transfer_input_mb = 1\nqueue\n\
         transfer_input_files =\nmax_transfer_input_mb = -1\nmax_transfer_output_mb = 1\n\
         arguments = \"-c 'echo small > small.txt; head -c 2097152 /dev/zero > big.out'\"\n\
         transfer_output_files = small.txt, big.out\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "jobs.sub"]);
    let held = wait_for(Duration::from_secs(60), "both jobs held", || {
        let rows = pool.af(
            0,
            false,
            &["ProcId", "JobStatus", "HoldReasonCode", "NumJobStarts"],
        );
        (rows.len() == 2 && rows.iter().all(|r| r[1] == "5")).then_some(rows)
    });
    assert_eq!(held[0][2..], ["32", "undefined"], "never started: {held:?}");
    assert_eq!(held[1][2..], ["33", "1"], "{held:?}");
    let reasons = pool.ok(0, dir, &["q", "-af", "HoldReason"]);
    assert!(
        reasons.contains("TransferInputSizeMB (")
            && reasons.contains(") is greater than MAX_TRANSFER_INPUT_MB (1) at submit time"),
        "{reasons}"
    );
    assert!(
        reasons.contains("max total download bytes exceeded (max=1 MB, this file=2 MB): big.out"),
        "{reasons}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("small.txt"))
            .unwrap()
            .trim(),
        "small"
    );
    assert!(!dir.join("big.out").exists());
    assert!(!dir.join("ran.txt").exists());
    pool.ok(0, dir, &["rm", "1"]);
    pool.wait_queue_empty(0, Duration::from_secs(30));
}
