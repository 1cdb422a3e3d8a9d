//! Transfers without a reservation keep to what the host link has, paced
//! by the link's owner (real agents on loopback, where nothing else would
//! slow them): every agent manages an 8 Mbit/s host link and reserves
//! nothing (`min_reserved_kib` past any input), and two jobs with 3 MB of
//! input each go to two machines at once. The submit agent serves both
//! inputs across its one link, sharing it between them (max-min, by what
//! each moves; `links::Owner::gate`): 6 MB take at least about 6 s, where
//! unpaced both would start within a second. (How evenly they share is
//! in the unit tests of `links`, with a clock they control.)
//!
//! Every wait polls a condition until a deadline.

use std::time::Duration;

mod support;

use support::*;

/// Prints when the job started (Unix seconds with a fraction).
const STARTED: &str = "#!/bin/sh\ndate +%s.%N\n";

#[test]
fn unreserved_inputs_keep_to_the_host_link_of_their_submit_agent() {
    let pool = Pool::up_as(
        None,
        3,
        &[
            "--links",
            "host_mbps=8",
            "--links",
            "min_reserved_kib=1073741824",
        ],
    );
    let work = tempfile::tempdir().unwrap();
    let script = work.path().join("started.sh");
    std::fs::write(&script, STARTED).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut description = String::from("executable = started.sh\n");
    for (i, machine) in ["agent-01.d0.testnet", "agent-02.d0.testnet"]
        .iter()
        .enumerate()
    {
        let input = format!("in{i}.dat");
        let bytes: Vec<u8> = (0..3_000_000u32)
            .map(|k| (k.wrapping_mul(2_654_435_761).wrapping_add(i as u32) >> 13) as u8)
            .collect();
        std::fs::write(work.path().join(&input), bytes).unwrap();
        description.push_str(&format!(
            "transfer_input_files = {input}\noutput = started{i}.txt\n\
             requirements = StarlingHost == \"{machine}\"\nqueue\n"
        ));
    }
    std::fs::write(work.path().join("two.sub"), description).unwrap();
    // Both machines are known before the jobs go, so they are placed at once.
    wait_for(Duration::from_secs(30), "every machine in the view", || {
        let hosts = pool.ok(0, work.path(), &["status", "-af", "StarlingHost"]);
        (hosts.lines().count() >= 3).then_some(())
    });
    let submitted = unix_now();
    pool.ok(0, work.path(), &["submit", "two.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(90));
    let started: Vec<f64> = (0..2)
        .map(|i| {
            let out = std::fs::read_to_string(work.path().join(format!("started{i}.txt")))
                .unwrap_or_default();
            out.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("job {i} printed {out:?}"))
                - submitted
        })
        .collect();
    // 6 MB over a 1 MB/s link: the first 3 MB cannot have crossed before
    // about 3 s, nor all 6 MB before about 6 s (a quarter second's burst
    // and the jobs' own start aside).
    let (first, last) = (started[0].min(started[1]), started[0].max(started[1]));
    assert!(
        first >= 2.5,
        "a job started {first:.1} s after submit: {started:?}"
    );
    assert!(
        last >= 5.5,
        "the last job started {last:.1} s after submit: {started:?}"
    );
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}
