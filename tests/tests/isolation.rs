//! Jobs kept apart from the machine and from each other, on a real pool of
//! agents running as root (as installed agents do): a job runs as a slot
//! account, cannot read any agent's key or store or another job's
//! sandbox, cannot write outside its sandbox, has a /tmp of its own, and
//! leaves no process behind. Skipped, with a message, when not root.

use std::path::{Path, PathBuf};
use std::time::Duration;

mod support;

use support::*;

fn is_root() -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!("skipped: isolating jobs needs agents running as root");
    }
    root
}

/// Writes `script` as `job.sh` and a submit file running it with `args`.
fn job(dir: &Path, script: &str, args: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let exe = dir.join("job.sh");
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("job.sub"),
        format!(
            "executable = job.sh\narguments = \"{args}\"\noutput = out.txt\nerror = err.txt\n\
             log = job.log\nqueue\n"
        ),
    )
    .unwrap();
}

/// Whether a live process has `needle` in its command line.
fn running_with(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let alive = stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'));
        alive
            && std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
    })
}

const PROBE: &str = r#"#!/bin/sh
# $1, $2: the agents' data directories; $3: a unique number.
try() { if eval "$2" >/dev/null 2>&1; then echo "$1 ALLOWED"; else echo "$1 denied"; fi; }
echo "uid $(id -u)"
try key0 "cat $1/agent.key"
try key1 "cat $2/agent.key"
try store "ls $1/store"
try list-data "ls $1"
try write-data "touch $1/planted"
try write-etc "touch /etc/starling-planted-$3"
try write-root-tmp "touch /tmp/starling-planted-$3 && test -e $_CONDOR_SCRATCH_DIR/tmp/starling-planted-$3"
env -i setsid sleep 9$3 </dev/null >/dev/null 2>&1 &
echo started-daemon
"#;

#[test]
fn a_job_cannot_reach_the_agents_the_machine_or_outlive_itself() {
    if !is_root() {
        return;
    }
    let pool = Pool::up(2);
    let work = tempfile::tempdir().unwrap();
    let unique = format!("{}", 10_000 + std::process::id() % 80_000);
    job(
        work.path(),
        PROBE,
        &format!(
            "{} {} {unique}",
            pool.agent(0).display(),
            pool.agent(1).display()
        ),
    );
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(120));
    let out = std::fs::read_to_string(work.path().join("out.txt")).unwrap();
    let uid: u32 = out
        .lines()
        .find_map(|l| l.strip_prefix("uid "))
        .and_then(|u| u.trim().parse().ok())
        .unwrap_or_else(|| panic!("no uid in {out:?}"));
    assert_ne!(uid, 0, "the job ran as root:\n{out}");
    for what in [
        "key0",
        "key1",
        "store",
        "list-data",
        "write-data",
        "write-etc",
    ] {
        assert!(
            out.contains(&format!("{what} denied")),
            "{what} was not denied:\n{out}"
        );
    }
    assert!(
        out.contains("write-root-tmp ALLOWED"),
        "/tmp is the job's own:\n{out}"
    );
    assert!(!Path::new(&format!("/etc/starling-planted-{unique}")).exists());
    assert!(!Path::new(&format!("/tmp/starling-planted-{unique}")).exists());
    assert!(!pool.agent(0).join("planted").exists());
    assert!(out.contains("started-daemon"), "{out}");
    // The daemon left the job's process group and environment; it went
    // with the job all the same.
    wait_for(
        Duration::from_secs(20),
        "the job's daemon to be gone",
        || (!running_with(&format!("sleep\09{unique}"))).then_some(()),
    );
    // What holds is in the machine ad.
    let ad = pool.ok(0, work.path(), &["status", "-l"]);
    assert!(
        ad.contains("StarlingJobAccounts = \"slot accounts\""),
        "{ad}"
    );
    assert!(ad.contains("StarlingJobTracking = \"cgroup"), "{ad}");
}

const SECRET: &str = r#"#!/bin/sh
echo "the secret" > secret.txt
chmod 644 secret.txt
sleep 60
"#;

const SNOOP: &str = r#"#!/bin/sh
if cat "$1/secret.txt"; then echo "READ"; else echo "denied"; fi
if ls "$1"; then echo "LISTED"; else echo "denied"; fi
"#;

/// The sandbox holding `secret.txt`, once a job made it.
fn sandbox_with_secret() -> Option<PathBuf> {
    let root = Path::new("/var/lib/starling/execute");
    for agent in std::fs::read_dir(root).ok()?.flatten() {
        for sandbox in std::fs::read_dir(agent.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if sandbox.path().join("secret.txt").exists() {
                return Some(sandbox.path());
            }
        }
    }
    None
}

#[test]
fn a_job_cannot_read_another_jobs_sandbox() {
    if !is_root() {
        return;
    }
    let pool = Pool::up(2);
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("a"), work.path().join("b"));
    job(&a, SECRET, "");
    pool.ok(0, &a, &["submit", "job.sub"]);
    let theirs = wait_for(
        Duration::from_secs(60),
        "the first job's secret",
        sandbox_with_secret,
    );
    job(&b, SNOOP, theirs.to_str().unwrap());
    pool.ok(1, &b, &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "the snooping job's output", || {
        std::fs::read_to_string(b.join("out.txt"))
            .ok()
            .filter(|o| o.lines().count() >= 2)
    });
    let out = std::fs::read_to_string(b.join("out.txt")).unwrap();
    assert!(!out.contains("the secret"), "{out}");
    assert!(!out.contains("READ") && !out.contains("LISTED"), "{out}");
    assert_eq!(out.matches("denied").count(), 2, "{out}");
    pool.ok(0, &a, &["rm", "1"]);
}

const THIEF: &str = r#"#!/bin/sh
# $1: the agent's data directory. Leave links where the agent collects
# output, to files only root may read.
rm -f _condor_stdout _condor_stderr
ln -s /etc/shadow _condor_stdout
ln -s "$1/agent.key" stolen
exit 0
"#;

#[test]
fn output_links_to_files_the_job_cannot_read_bring_nothing_back() {
    if !is_root() {
        return;
    }
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    job(work.path(), THIEF, &pool.agent(0).display().to_string());
    let sub = work.path().join("job.sub");
    let text = std::fs::read_to_string(&sub)
        .unwrap()
        .replace("queue\n", "transfer_output_files = stolen\nqueue\n");
    std::fs::write(&sub, text).unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    let row = wait_for(Duration::from_secs(60), "the job held", || {
        let rows = pool.af(0, false, &["JobStatus", "HoldReasonCode", "HoldReason"]);
        rows.into_iter()
            .find(|r| r.first().map(String::as_str) == Some("5"))
    });
    assert_eq!(row[1], "12", "{row:?}");
    assert!(!work.path().join("stolen").exists());
    let key = std::fs::read_to_string(pool.agent(0).join("agent.key")).unwrap();
    let shadow = std::fs::read_to_string("/etc/shadow").unwrap_or_default();
    for name in ["out.txt", "err.txt", "stolen"] {
        let got = std::fs::read_to_string(work.path().join(name)).unwrap_or_default();
        assert!(
            got.is_empty()
                || (!got.contains(key.trim())
                    && (shadow.is_empty() || !got.contains(shadow.trim()))),
            "{name} holds what the job could not read"
        );
    }
}

#[test]
fn a_job_outlives_its_agent_killed_with_sigkill_only_for_its_lease() {
    job_ends_with_its_lease(&Pool::up(1), 1);
}

#[test]
fn a_job_tracked_without_cgroups_outlives_its_agent_only_for_its_lease_too() {
    job_ends_with_its_lease(&Pool::up_as(None, 1, &["--jobs", "cgroups=off"]), 2);
}

/// Runs a job with a short claim lease on `pool`'s only agent, kills the
/// agent with SIGKILL, and checks that the job runs on (its agent may
/// come back for it) until the lease lapses, and not after: by then its
/// submitter may run it again elsewhere, and two runs would complete.
fn job_ends_with_its_lease(pool: &Pool, salt: u32) {
    let work = tempfile::tempdir().unwrap();
    let unique = format!("{}{salt}", 40_000 + std::process::id() % 9_000);
    job(work.path(), "#!/bin/sh\nexec sleep \"$1\"\n", &unique);
    let sub = work.path().join("job.sub");
    let text = std::fs::read_to_string(&sub)
        .unwrap()
        .replace("queue\n", "+JobLeaseDuration = 4\nqueue\n");
    std::fs::write(&sub, text).unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    let needle = format!("sleep\0{unique}");
    wait_for(Duration::from_secs(60), "the job running", || {
        running_with(&needle).then_some(())
    });
    let agent = pid_of(&pool.agent(0)).expect("the agent runs");
    rustix::process::kill_process(agent, rustix::process::Signal::KILL).unwrap();
    let killed = std::time::Instant::now();
    // Renewed every lease/3: at least 2.6 s of it is left.
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        running_with(&needle),
        "the job died with its agent, before its lease lapsed"
    );
    wait_for(
        Duration::from_secs(15),
        "the job ended with its lease",
        || (!running_with(&needle)).then_some(()),
    );
    assert!(
        killed.elapsed() <= Duration::from_secs(4) + Duration::from_millis(1500),
        "the job ran {:?} past its agent, longer than its lease",
        killed.elapsed()
    );
}
