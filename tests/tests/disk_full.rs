//! A full data directory is a state the agent lives through, not a
//! failure: an agent whose data directory sits on a small tmpfs that the
//! test fills refuses submissions with "disk full", shows itself in the
//! Owner state with the reason, keeps every job it had acknowledged, and,
//! once the filler is deleted, takes submissions and runs jobs again with
//! no restart.
//!
//! Mounting the tmpfs needs root: the test is skipped, saying so, when not
//! root. Every wait polls a condition until a deadline.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

/// A tmpfs of `mib` MiB mounted on a fresh directory, unmounted (lazily,
/// should a process still hold it) when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(mib: u64) -> Option<Tmpfs> {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: putting an agent on a small tmpfs to fill needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let options = std::ffi::CString::new(format!("size={mib}m,mode=0755")).unwrap();
        rustix::mount::mount(
            "starling-disk-full",
            dir.path(),
            "tmpfs",
            rustix::mount::MountFlags::empty(),
            Some(options.as_c_str()),
        )
        .expect("mounting a tmpfs");
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = rustix::mount::unmount(self.dir.path(), rustix::mount::UnmountFlags::DETACH);
    }
}

/// Writes to `path` until the filesystem has no byte left.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5Au8; 1 << 20];
    for len in [chunk.len(), 4096, 1] {
        loop {
            match file.write(&chunk[..len]) {
                Ok(n) if n > 0 => {}
                Ok(_) => break,
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(28), "filling: {e}");
                    break;
                }
            }
        }
    }
}

/// `State`, `StarlingDiskFull` and `StarlingDiskFullReason` of the agent's
/// own machine ad, as `status` shows them.
fn shown(pool: &Pool) -> String {
    let out = pool.run(
        0,
        &std::env::temp_dir(),
        &[
            "status",
            "-af",
            "State",
            "StarlingDiskFull",
            "StarlingDiskFullReason",
        ],
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_full_data_directory_refuses_work_keeps_its_jobs_and_recovers_without_a_restart() {
    // Declared first, so dropped last: after the pool's agents are killed.
    let Some(fs) = Tmpfs::mount(64) else { return };
    let pool = Pool::up_in(fs.path(), 1);
    let pid = pid_of(&pool.agent(0)).expect("the agent runs");
    let work = tempfile::tempdir().unwrap();
    // The agent's disk is the 64 MiB tmpfs: the jobs ask 1 MiB, not the
    // default (at least 1 GiB, as HTCondor), which no slot there has.
    std::fs::write(
        work.path().join("held.sub"),
        "executable = /bin/echo\narguments = kept\noutput = held.out\n\
         transfer_executable = false\nrequest_memory = 64\nrequest_disk = 1M\nhold = true\nqueue\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join("job.sub"),
        "executable = /bin/echo\narguments = ran\noutput = job.out\n\
         transfer_executable = false\nrequest_memory = 64\nrequest_disk = 1M\nqueue\n",
    )
    .unwrap();
    // Acknowledged before the disk fills: a job that waits, held.
    pool.ok(0, work.path(), &["submit", "held.sub"]);
    wait_for(Duration::from_secs(20), "the agent willing", || {
        shown(&pool).starts_with("Unclaimed false").then_some(())
    });

    fill(&fs.path().join("filler"));

    // What a user notices: the machine is in the Owner state and says why.
    let full = wait_for(
        Duration::from_secs(15),
        "the ad showing the full disk",
        || {
            let shown = shown(&pool);
            (shown.starts_with("Owner true") && shown.contains("disk full")).then_some(shown)
        },
    );
    let refused = pool.run(0, work.path(), &["submit", "job.sub"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(
        !refused.status.success() && said.contains("disk full"),
        "a submission on a full disk is refused, saying why ({}): {said}",
        refused.status
    );
    // Nothing acknowledged is lost.
    let queued = pool.af(0, false, &["ClusterId", "JobStatus"]);
    assert_eq!(
        queued,
        vec![vec!["1", "5"]],
        "the held job, while full ({full})"
    );

    // A job released now (a small write, which the store's reserve takes)
    // is not claimed here: `why` says the disk is full.
    pool.ok(0, work.path(), &["release", "1"]);
    let why = wait_for(Duration::from_secs(15), "why naming the full disk", || {
        let out = pool.run(0, work.path(), &["why", "1.0"]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        said.contains("disk full").then_some(said)
    });
    let queued = pool.af(0, false, &["ClusterId", "JobStatus"]);
    assert_eq!(queued, vec![vec!["1", "1"]], "idle while full: {why}");

    std::fs::remove_file(fs.path().join("filler")).unwrap();

    // Space is back: with no restart, the agent takes work again.
    wait_for(Duration::from_secs(20), "the ad willing again", || {
        shown(&pool).starts_with("Unclaimed false").then_some(())
    });
    let submitted = wait_for(Duration::from_secs(10), "a submission accepted", || {
        let out = pool.run(0, work.path(), &["submit", "job.sub"]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    });
    assert!(submitted.contains("cluster 2"), "{submitted}");
    pool.wait_queue_empty(0, Duration::from_secs(40));
    assert_eq!(
        std::fs::read_to_string(work.path().join("job.out")).unwrap(),
        "ran\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("held.out")).unwrap(),
        "kept\n"
    );
    assert_eq!(
        pid_of(&pool.agent(0)),
        Some(pid),
        "the same agent process throughout"
    );
    let log = std::fs::read_to_string(pool.agent(0).join("agent.log")).unwrap_or_default();
    assert!(
        log.contains("space is back"),
        "the recovery is logged:\n{}",
        pool.log_tail(0)
    );
}
