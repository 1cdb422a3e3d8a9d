//! HTCondor's late materialization limits on a real pool: a cluster with
//! `max_materialize = 2` never runs more than two of its jobs at once on a
//! machine that could run four, starts them in proc order, and `why` says
//! why the others wait.

use std::time::Duration;

mod support;

use support::*;

/// Appends `START END PROC` to the file the test watches, after a second.
const JOB: &str =
    "#!/bin/sh\nstart=$(date +%s.%N)\nsleep 1\necho \"$start $(date +%s.%N) $2\" >> \"$1/ran\"\n";

#[test]
fn max_materialize_runs_no_more_of_a_cluster_at_once_in_proc_order() {
    let mut args = vec!["--cpus", "4"];
    if rustix::process::geteuid().is_root() {
        args.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    let pool = Pool::up_as(None, 1, &args);
    let work = shared_dir();
    let dir = work.path();
    let script = dir.join("job.sh");
    std::fs::write(&script, JOB).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("m.sub"),
        format!(
            "executable = job.sh\narguments = {} $(Process)\nrequest_memory = 32\n\
             max_materialize = 2\nqueue 5\n",
            dir.display()
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "m.sub"]);
    let why = wait_for(Duration::from_secs(60), "why names the limit", || {
        let why = pool.ok(0, dir, &["why", "1.4"]);
        why.contains("not materialized yet").then_some(why)
    });
    assert!(why.contains("max_materialize = 2"), "{why}");
    pool.wait_queue_empty(0, Duration::from_secs(120));
    let text = std::fs::read_to_string(dir.join("ran")).unwrap();
    let runs: Vec<(f64, f64, u32)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(runs.len(), 5, "{text}");
    for (start, _, proc) in &runs {
        let at_once = runs
            .iter()
            .filter(|(s, e, _)| s <= start && start < e)
            .count();
        assert!(
            at_once <= 2,
            "{at_once} ran at once when proc {proc} started:\n{text}"
        );
    }
    // The first two start before the last two.
    let start_of = |p: u32| runs.iter().find(|r| r.2 == p).unwrap().0;
    assert!(
        start_of(0).max(start_of(1)) < start_of(3).min(start_of(4)),
        "{text}"
    );
}
