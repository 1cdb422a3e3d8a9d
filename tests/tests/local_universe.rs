//! Scheduler- and local-universe jobs run on the submit agent's own
//! machine, as their owner, in their directory: their output lands there,
//! their exit is recorded in history, rm stops their process, and an agent
//! killed while one runs kills what is left of it and runs it again, once.
//!
//! As root, the jobs are submitted by a local user made for the test (a
//! root agent runs no job as root: a job of root's is held); as anyone
//! else, by the test's own user.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

mod support;

use support::*;

const WAIT: Duration = Duration::from_secs(90);

/// Who submits: a local user made for the test (removed at the end) when
/// the test runs as root, else the test's own user.
struct Submitter {
    name: Option<String>,
    who: As,
    _base: tempfile::TempDir,
    dir: PathBuf,
}

impl Submitter {
    fn new(pool: &Pool) -> Submitter {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("work");
        std::fs::create_dir(&dir).unwrap();
        if !is_root() {
            return Submitter {
                name: None,
                who: None,
                _base: base,
                dir,
            };
        }
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        // Every user may reach the agent's control socket.
        for d in [pool.dir.parent().unwrap(), pool.dir.as_path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o711)).unwrap();
        }
        let mut bytes = [0u8; 4];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            .unwrap();
        let name = format!("stl{:08x}", u32::from_le_bytes(bytes));
        let made = Command::new("useradd")
            .args(["--no-create-home", "--shell", "/bin/sh", &name])
            .output()
            .expect("useradd runs");
        assert!(made.status.success(), "useradd {name}: {made:?}");
        let id = |flag: &str| -> u32 {
            let out = Command::new("id").args([flag, &name]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        let (uid, gid) = (id("-u"), id("-g"));
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        Submitter {
            name: Some(name),
            who: Some((uid, gid)),
            _base: base,
            dir,
        }
    }

    /// Writes `text` into the submitter's directory as their file.
    fn write(&self, name: &str, text: &str, mode: u32) {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        if let Some((uid, gid)) = self.who {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }

    fn submit(&self, pool: &Pool, file: &str) {
        let out = pool.run_as(self.who, 0, &self.dir, &["submit", file]);
        assert!(
            out.status.success(),
            "submit {file}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Submitter {
    fn drop(&mut self) {
        if let Some(name) = &self.name {
            let _ = Command::new("userdel").arg(name).output();
        }
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `-af` of cluster `cluster`, in the queue or history of agent 0, one
/// value per word.
fn af(pool: &Pool, history: bool, cluster: u32, attrs: &[&str]) -> Vec<String> {
    let constraint = format!("ClusterId == {cluster}");
    let mut args = vec![
        if history { "history" } else { "q" },
        "-constraint",
        &constraint,
    ];
    if !history {
        args.push("-allusers");
    }
    args.push("-af");
    args.extend(attrs);
    pool.ok(0, &std::env::temp_dir(), &args)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn pid_in(text: &str, line: usize) -> Option<rustix::process::Pid> {
    text.lines()
        .nth(line)
        .and_then(|l| l.trim().parse().ok())
        .and_then(rustix::process::Pid::from_raw)
}

/// The job watchdog of the agent `agent`.
fn watchdog_of(agent: rustix::process::Pid) -> Option<rustix::process::Pid> {
    let wanted = "job-watchdog\0";
    let agent_arg = format!("--agent-pid\0{}\0", agent.as_raw_nonzero());
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            (cmdline.contains(wanted) && cmdline.contains(&agent_arg))
                .then(|| rustix::process::Pid::from_raw(pid))
                .flatten()
        })
}

const JOB: &str = "#!/bin/sh\necho \"out $1 $K\"\necho \"err $1\" >&2\npwd\nexit $2\n";

#[test]
fn scheduler_and_local_jobs_run_here_in_their_directory() {
    let pool = Pool::up(1);
    let user = Submitter::new(&pool);
    user.write("job.sh", JOB, 0o755);
    for (universe, code) in [("scheduler", 3), ("local", 4)] {
        user.write(
            &format!("{universe}.sub"),
            &format!(
                "universe = {universe}\nexecutable = job.sh\narguments = \"{universe} {code}\"\n\
                 environment = \"K=v\"\noutput = {universe}.out\nerror = {universe}.err\n\
                 log = {universe}.log\nqueue\n"
            ),
            0o644,
        );
        user.submit(&pool, &format!("{universe}.sub"));
    }
    pool.wait_queue_empty(0, WAIT);
    for (cluster, universe, code, number) in [(1, "scheduler", 3, 7), (2, "local", 4, 12)] {
        assert_eq!(
            af(
                &pool,
                true,
                cluster,
                &["JobUniverse", "ExitCode", "JobStatus"]
            ),
            [number.to_string(), code.to_string(), "4".to_owned()],
            "{universe}\n{}",
            pool.log_tail(0)
        );
        let out = user.read(&format!("{universe}.out"));
        assert_eq!(
            out,
            format!("out {universe} v\n{}\n", user.dir.display()),
            "{universe}: it ran in its Iwd with its arguments and environment"
        );
        assert_eq!(
            user.read(&format!("{universe}.err")),
            format!("err {universe}\n")
        );
        if let Some((uid, _)) = user.who {
            let meta = std::fs::metadata(user.dir.join(format!("{universe}.out"))).unwrap();
            assert_eq!(meta.uid(), uid, "its output is its owner's");
        }
        let log = user.read(&format!("{universe}.log"));
        for event in ["000 (", "001 (", "005 ("] {
            assert!(
                log.contains(event),
                "{universe}: no event {event} in\n{log}"
            );
        }
        assert!(
            log.contains(&format!("return value {code}")),
            "{universe}:\n{log}"
        );
    }
}

#[test]
fn a_local_job_that_fails_is_retried_as_its_policy_says() {
    let pool = Pool::up(1);
    let user = Submitter::new(&pool);
    user.write(
        "fail.sh",
        "#!/bin/sh\necho run >> runs.txt\nexit 1\n",
        0o755,
    );
    user.write(
        "fail.sub",
        "universe = local\nexecutable = fail.sh\nmax_retries = 2\nqueue\n",
        0o644,
    );
    user.submit(&pool, "fail.sub");
    pool.wait_queue_empty(0, WAIT);
    assert_eq!(
        user.read("runs.txt").lines().count(),
        3,
        "a run and two retries"
    );
    assert_eq!(
        af(&pool, true, 1, &["ExitCode", "NumJobStarts", "JobStatus"]),
        ["1", "3", "4"]
    );
}

#[test]
fn a_root_agent_holds_a_local_job_of_root() {
    if !is_root() {
        eprintln!("skipped: only a root agent has root's jobs to refuse");
        return;
    }
    let pool = Pool::up(1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("job.sub"),
        "universe = local\nexecutable = /bin/true\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir.path(), &["submit", "job.sub"]);
    let reason = wait_for(WAIT, "the job held", || {
        let row = af(&pool, false, 1, &["JobStatus", "HoldReason"]);
        (row.first().map(String::as_str) == Some("5")).then(|| row[1..].join(" "))
    });
    assert!(reason.contains("runs no job as root"), "{reason}");
    assert_eq!(af(&pool, false, 1, &["NumJobStarts"]), ["1"]);
}

/// A job that writes its pid into `pids.txt`; its first run sleeps long.
const SLEEPER: &str = "#!/bin/sh\nruns=$(cat pids.txt 2>/dev/null | wc -l)\necho $$ >> pids.txt\n\
                       if [ \"$runs\" = 0 ]; then sleep 120; fi\nexit 0\n";

fn submit_sleeper(pool: &Pool, user: &Submitter) -> rustix::process::Pid {
    let cluster =
        pool.af(0, false, &["ClusterId"]).len() + pool.af(0, true, &["ClusterId"]).len() + 1;
    user.write("sleep.sh", SLEEPER, 0o755);
    user.write(
        "sleep.sub",
        "universe = local\nexecutable = sleep.sh\nlog = sleep.log\nqueue\n",
        0o644,
    );
    user.submit(pool, "sleep.sub");
    let pid = wait_for(WAIT, "the job started", || {
        pid_in(&user.read("pids.txt"), 0)
    });
    let row = af(pool, false, cluster as u32, &["JobStatus", "RemoteHost"]);
    assert_eq!(row.first().map(String::as_str), Some("2"), "{row:?}");
    assert!(row.len() == 2 && !row[1].is_empty(), "RemoteHost: {row:?}");
    assert!(running(pid), "its process runs");
    pid
}

fn act(pool: &Pool, user: &Submitter, args: &[&str]) {
    let out = pool.run_as(user.who, 0, &user.dir, args);
    assert!(out.status.success(), "{args:?}: {out:?}");
}

#[test]
fn hold_and_rm_stop_a_running_local_job() {
    let pool = Pool::up(1);
    let user = Submitter::new(&pool);
    let pid = submit_sleeper(&pool, &user);
    act(&pool, &user, &["hold", "1.0"]);
    wait_for(WAIT, "the held job's process ended", || {
        (!running(pid)).then_some(())
    });
    wait_for(WAIT, "the job held", || {
        (af(&pool, false, 1, &["JobStatus"]) == ["5"]).then_some(())
    });
    act(&pool, &user, &["release", "1.0"]);
    let again = wait_for(WAIT, "the released job ran again", || {
        pid_in(&user.read("pids.txt"), 1)
    });
    // Its second run is short; a third start would leave a third pid.
    pool.wait_queue_empty(0, WAIT);
    assert_ne!(again, pid);
    assert_eq!(af(&pool, true, 1, &["ExitCode"]), ["0"]);

    user.write("pids.txt", "", 0o644);
    let pid = submit_sleeper(&pool, &user);
    act(&pool, &user, &["rm", "2"]);
    wait_for(WAIT, "the removed job's process ended", || {
        (!running(pid)).then_some(())
    });
    pool.wait_queue_empty(0, WAIT);
    assert_eq!(af(&pool, true, 2, &["JobStatus"]), ["3"]);
    assert_eq!(user.read("pids.txt").lines().count(), 1, "it ran once");
}

#[test]
fn a_vacated_local_job_stops_and_runs_again() {
    let pool = Pool::up(1);
    let user = Submitter::new(&pool);
    let first = submit_sleeper(&pool, &user);
    act(&pool, &user, &["vacate", "1.0"]);
    wait_for(WAIT, "the vacated run ended", || {
        (!running(first)).then_some(())
    });
    pool.wait_queue_empty(0, WAIT);
    assert_eq!(user.read("pids.txt").lines().count(), 2);
    assert_eq!(
        af(&pool, true, 1, &["ExitCode", "NumJobStarts"]),
        ["0", "2"]
    );
}

#[test]
fn a_crashed_agent_ends_the_leftover_run_and_runs_the_job_again_once() {
    let pool = Pool::up(1);
    let user = Submitter::new(&pool);
    let first = submit_sleeper(&pool, &user);
    // The agent's job watchdog would kill the job as the agent dies; with
    // it gone too (killed as a machine short of memory might), the job
    // outlives its agent, and the agent must end it when it is back.
    let agent = pid_of(&pool.agent(0)).expect("the agent's pid");
    let watchdog = watchdog_of(agent).expect("the agent's job watchdog");
    rustix::process::kill_process(watchdog, rustix::process::Signal::KILL).unwrap();
    wait_for(WAIT, "the watchdog gone", || {
        (!running(watchdog)).then_some(())
    });
    pool.crash(0);
    assert!(running(first), "the job outlives its agent");
    pool.restart(0);
    wait_for(WAIT, "the leftover run ended", || {
        (!running(first)).then_some(())
    });
    pool.wait_queue_empty(0, WAIT);
    let pids = user.read("pids.txt");
    assert_eq!(pids.lines().count(), 2, "it ran again, once: {pids}");
    assert_eq!(
        af(&pool, true, 1, &["ExitCode", "NumJobStarts"]),
        ["0", "2"],
        "{}",
        pool.log_tail(0)
    );
    let log = user.read("sleep.log");
    assert_eq!(log.matches("001 (").count(), 2, "{log}");
}
