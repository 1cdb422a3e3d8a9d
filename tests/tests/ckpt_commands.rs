//! The checkpoint commands on a real pool: `starling ckpt ls`, `starling
//! ckpt get` and `starling status -store`.
//!
//! A self-checkpointing job (HTCondor's `checkpoint_exit_code`) writes
//! `state` and `notes` and exits 85 twice, then runs on; while its second
//! checkpoint is kept on two store peers:
//!
//! - `ckpt ls` shows its sequence, size, files, chunks and the replicas'
//!   hosts (those `q` shows), in the table, `-l` and `-json` forms;
//! - `ckpt get` writes files whose content is what the job wrote at that
//!   checkpoint (not what it wrote since), refuses to overwrite them
//!   without `-force`, and refuses a DIR that is a file, a job with no
//!   checkpoint, a job that does not exist and (as root) another user's
//!   job;
//! - `status -store` lists the store peers, the replica holders with
//!   chunks; once the job is removed, every store peer is back to none
//!   within seconds.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

mod support;

use support::*;

/// Each run counts itself in `state`, notes it in `notes`, and
/// checkpoints (exits 85) on its first two runs; the third runs on until
/// it is removed.
const JOB: &str = r#"#!/bin/sh
n=0
[ -f state ] && n=$(cat state)
n=$((n+1))
echo $n > state
echo "payload of run $n" > notes
if [ $n -lt 3 ]; then exit 85; fi
i=0
while [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done
"#;

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A pool whose ads follow within a few seconds.
fn pool(agents: usize) -> Pool {
    Pool::up_as(
        None,
        agents,
        &["--refresh-secs", "2", "--lifetime-secs", "6"],
    )
}

/// `ckpt ls -json JOB` on agent 0.
fn ls_json(pool: &Pool, job: &str) -> serde_json::Value {
    let out = pool.ok(0, &std::env::temp_dir(), &["ckpt", "ls", "-json", job]);
    let jobs: serde_json::Value = serde_json::from_str(&out).expect("ckpt ls -json is JSON");
    jobs[0].clone()
}

/// `status -store -af Name StarlingStoreChunks`: chunks by agent name.
fn chunks_by_agent(pool: &Pool) -> Vec<(String, u64)> {
    pool.ok(
        0,
        &std::env::temp_dir(),
        &["status", "-store", "-af", "Name", "StarlingStoreChunks"],
    )
    .lines()
    .filter_map(|l| {
        let (name, chunks) = l.split_once(' ')?;
        Some((name.to_owned(), chunks.trim().parse().ok()?))
    })
    .collect()
}

#[test]
fn ckpt_ls_get_and_status_store_follow_a_checkpointing_job() {
    let pool = pool(3);
    // A store peer's ad says what it lends from its first refresh on: a
    // job checkpointing before every agent knows every store peer would
    // find fewer than two to replicate to.
    for i in 0..3 {
        wait_for(Duration::from_secs(30), "every store peer known", || {
            let peers = pool.ok(
                i,
                &std::env::temp_dir(),
                &["status", "-store", "-af", "Name"],
            );
            (peers.lines().count() == 3).then_some(())
        });
    }
    let work = tempfile::tempdir().unwrap();
    script(&work.path().join("job.sh"), JOB);
    std::fs::write(
        work.path().join("job.sub"),
        "executable = job.sh\noutput = out.txt\nerror = err.txt\nlog = job.log\n\
         checkpoint_exit_code = 85\ntransfer_checkpoint_files = state, notes\nqueue\n",
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    // A job that never runs, to have none.
    std::fs::write(
        work.path().join("held.sub"),
        "executable = job.sh\nhold = true\nqueue\n",
    )
    .unwrap();
    pool.ok(0, work.path(), &["submit", "held.sub"]);

    // On two store peers: at once, or within a keeper's round or two when
    // a store peer was not yet willing when it was taken.
    let latest = wait_for(
        Duration::from_secs(60),
        "the job's second checkpoint recorded on two store peers",
        || {
            let job = ls_json(&pool, "1.0");
            (job["latest"]["sequence"] == 2 && job["latest"]["replicas"].as_array()?.len() == 2)
                .then_some(job)
        },
    );
    let latest = &latest["latest"];
    assert_eq!(latest["file_count"], 2, "{latest}");
    assert_eq!(latest["chunks"], 2, "{latest}");
    let names: BTreeSet<&str> = latest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, BTreeSet::from(["notes", "state"]));
    // Two replicas (the default), on two hosts, both live: the hosts the
    // job ad names.
    let replicas = latest["replicas"].as_array().unwrap();
    let hosts: BTreeSet<String> = replicas
        .iter()
        .map(|r| r["host"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(hosts.len(), 2, "{latest}");
    assert!(replicas.iter().all(|r| r["live"] == true), "{latest}");
    let in_ad: BTreeSet<String> = pool
        .ok(0, work.path(), &["q", "1.0", "-af", "StarlingCkptHosts"])
        .trim()
        .split(',')
        .map(str::to_owned)
        .collect();
    assert_eq!(hosts, in_ad);

    // The table: a row per job, the replicas by host and short id.
    let table = pool.ok(0, work.path(), &["ckpt", "ls", "1.0", "2.0"]);
    let row = table
        .lines()
        .find(|l| l.trim_start().starts_with("1.0 "))
        .unwrap_or_else(|| panic!("no row for 1.0:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], "2", "{table}");
    for host in &hosts {
        assert!(row.contains(host.as_str()), "{table}");
    }
    assert!(!row.contains("gone"), "{table}");
    let short =
        &replicas[0]["peer"].as_str().unwrap()[replicas[0]["peer"].as_str().unwrap().len() - 8..];
    assert!(row.contains(short), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("2.0 ") && l.ends_with("no checkpoint")),
        "{table}"
    );
    // The long form lists the files with their sizes.
    let long = pool.ok(0, work.path(), &["ckpt", "ls", "-l", "1.0"]);
    assert!(long.contains("Latest:              checkpoint 2"), "{long}");
    assert!(
        long.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["state", "2", "B", "0644"]),
        "{long}"
    );
    assert!(long.contains("Replicas:            2 (2 live)"), "{long}");

    // Fetched into a directory that did not exist: what the job wrote at
    // its second checkpoint, though its third run wrote on since.
    let into = work.path().join("restored/ckpt");
    let said = pool.ok(
        0,
        work.path(),
        &["ckpt", "get", "1.0", into.to_str().unwrap()],
    );
    assert!(
        said.starts_with(&format!(
            "Job 1.0: checkpoint 2 written to {} (2 files,",
            into.display()
        )),
        "{said}"
    );
    assert!(said.contains("From (nearest first):"), "{said}");
    assert_eq!(std::fs::read_to_string(into.join("state")).unwrap(), "2\n");
    assert_eq!(
        std::fs::read_to_string(into.join("notes")).unwrap(),
        "payload of run 2\n"
    );
    // Again: the files are there, and are replaced only with -force.
    std::fs::write(into.join("state"), "mine\n").unwrap();
    let out = pool.run(
        0,
        work.path(),
        &["ckpt", "get", "1.0", into.to_str().unwrap()],
    );
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("already holds") && err.contains("state") && err.contains("-force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(into.join("state")).unwrap(),
        "mine\n"
    );
    pool.ok(
        0,
        work.path(),
        &["ckpt", "get", "-force", "1.0", into.to_str().unwrap()],
    );
    assert_eq!(std::fs::read_to_string(into.join("state")).unwrap(), "2\n");

    // The store peers: every agent of the testnet, the replica holders
    // with the checkpoint's chunks.
    let figures = wait_for(
        Duration::from_secs(15),
        "the replica holders advertising chunks",
        || {
            let figures = chunks_by_agent(&pool);
            (figures.len() == 3 && figures.iter().filter(|(_, c)| *c > 0).count() >= 2)
                .then_some(figures)
        },
    );
    assert_eq!(figures.len(), 3, "{figures:?}");
    let table = pool.ok(0, work.path(), &["status", "-store"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("Name") && lines[0].ends_with("Chunks"),
        "{table}"
    );
    for host in &hosts {
        assert!(table.contains(host.as_str()), "{table}");
    }
    assert!(
        lines.last().unwrap().starts_with("Total")
            && lines.last().unwrap().contains("3 store peers"),
        "{table}"
    );
    let json = pool.ok(0, work.path(), &["status", "-store", "-json"]);
    let ads: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(ads.as_array().unwrap().len(), 3, "{json}");

    // Bad input.
    let dir = into.to_str().unwrap();
    let out = pool.run(0, work.path(), &["ckpt", "get", "2.0", dir]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("job 2.0 has no checkpoint"), "{err}");
    let out = pool.run(0, work.path(), &["ckpt", "ls", "99.0"]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("99.0: no such job in the queue or the history"),
        "{err}"
    );
    let out = pool.run(0, work.path(), &["ckpt", "get", "99.0", dir]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("no such job"), "{err}");
    let file = work.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = pool.run(
        0,
        work.path(),
        &["ckpt", "get", "1.0", file.to_str().unwrap()],
    );
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("{} is not a directory", file.display())),
        "{err}"
    );
    if rustix::process::geteuid().is_root() {
        // Another user (nobody) may list the checkpoint, not fetch it.
        for d in [pool.dir.parent().unwrap(), pool.dir.as_path()] {
            std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o711))
                .unwrap();
        }
        let nobody = Some((65_534, 65_534));
        let out = pool.run_as(nobody, 0, Path::new("/"), &["ckpt", "ls", "1.0"]);
        assert!(out.status.success(), "{:?}", text(&out));
        let out = pool.run_as(nobody, 0, Path::new("/"), &["ckpt", "get", "1.0", "/tmp"]);
        let (_, err) = text(&out);
        assert!(!out.status.success());
        assert!(
            err.contains("permission denied: the job belongs to root"),
            "{err}"
        );
    }

    // Removed: its checkpoint goes from every store peer, and the ads say
    // so within seconds (well before the store's 30 s collection).
    pool.ok(0, work.path(), &["rm", "1.0", "2.0"]);
    wait_for(
        Duration::from_secs(20),
        "the store peers holding no chunk",
        || {
            let figures = chunks_by_agent(&pool);
            (figures.len() == 3 && figures.iter().all(|(_, c)| *c == 0)).then_some(())
        },
    );
    let out = pool.run(0, work.path(), &["ckpt", "get", "1.0", dir]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("job 1.0"), "{err}");
}
