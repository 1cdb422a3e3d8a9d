//! Many users on one agent: local users share a root agent's control
//! socket, the agent learns who asks from the socket, each user changes
//! only their own jobs, and a job's files are read and written with its
//! owner's rights. A non-root agent keeps its socket to its own user.
//!
//! These tests need root (they create local users with `useradd` and
//! remove them at the end); as anyone else they say so and pass.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod support;

use support::*;

/// A local user made for one test, removed when it drops.
struct TestUser {
    name: String,
    uid: u32,
    gid: u32,
}

impl TestUser {
    /// A new user with a name no other test or run uses.
    fn new(role: &str) -> TestUser {
        let mut bytes = [0u8; 4];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            .unwrap();
        let name = format!("st{role}{:08x}", u32::from_le_bytes(bytes));
        let made = Command::new("useradd")
            .args(["--no-create-home", "--shell", "/bin/sh", &name])
            .output()
            .expect("useradd runs");
        assert!(
            made.status.success(),
            "useradd {name}: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        let id = |flag: &str| -> u32 {
            let out = Command::new("id").args([flag, &name]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        TestUser {
            uid: id("-u"),
            gid: id("-g"),
            name,
        }
    }

    fn who(&self) -> As {
        Some((self.uid, self.gid))
    }

    /// A directory of this user's own, mode 0700, in `base`.
    fn home_in(&self, base: &Path) -> PathBuf {
        let dir = base.join(&self.name);
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(self.uid), Some(self.gid)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        dir
    }

    /// Writes `text` to `path` as this user's file with `mode`.
    fn write(&self, path: &Path, text: &str, mode: u32) {
        std::fs::write(path, text).unwrap();
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid)).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Runs `program args` as this user.
    fn run(&self, program: &str, args: &[&str]) -> Output {
        Command::new(program)
            .args(args)
            .uid(self.uid)
            .gid(self.gid)
            .output()
            .unwrap()
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A directory every user may enter, for the users' own directories.
fn shared_base() -> tempfile::TempDir {
    let base = tempfile::tempdir().unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    base
}

/// Lets every user reach the pool's control sockets: the test's temporary
/// directories are 0700; the agents made their own data directories 0711.
fn open_pool_to_users(pool: &Pool) {
    for dir in [pool.dir.parent().unwrap(), pool.dir.as_path()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
}

const JOB: &str = "#!/bin/sh\necho \"hello from $1\"\n";

/// A submit file for `job.sh` in `dir`, its output in `out/`.
fn write_job(user: &TestUser, dir: &Path, extra: &str) {
    user.write(&dir.join("job.sh"), JOB, 0o755);
    user.write(
        &dir.join("job.sub"),
        &format!(
            "executable = job.sh\narguments = {}\noutput = out/job.txt\nerror = out/job.err\n\
             log = job.log\n{extra}queue\n",
            user.name
        ),
        0o644,
    );
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::chown(&out, Some(user.uid), Some(user.gid)).unwrap();
}

/// `q -af` of cluster `cluster` on agent 0, as root.
fn job_af(pool: &Pool, cluster: u32, attrs: &[&str]) -> Vec<String> {
    let constraint = format!("ClusterId == {cluster}");
    let mut args = vec!["q", "-constraint", &constraint, "-af"];
    args.extend(attrs);
    pool.ok(0, &std::env::temp_dir(), &args)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn history_af(pool: &Pool, cluster: u32, attrs: &[&str]) -> Vec<String> {
    let constraint = format!("ClusterId == {cluster}");
    let mut args = vec!["history", "-constraint", &constraint, "-af"];
    args.extend(attrs);
    pool.ok(0, &std::env::temp_dir(), &args)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[test]
fn two_users_share_a_root_agent_and_change_only_their_own_jobs() {
    if !is_root() {
        eprintln!("skipped: creating local users and a root agent needs root");
        return;
    }
    let pool = Pool::up(2);
    open_pool_to_users(&pool);
    let socket = pool.agent(0).join("agent.sock");
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666, "a root agent's socket is every user's");
    let data_mode = std::fs::metadata(pool.agent(0))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(
        data_mode, 0o711,
        "its data directory may be passed, not read"
    );
    let key_mode = std::fs::metadata(pool.agent(0).join("agent.key"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(key_mode, 0o600);

    let (alice, bob) = (TestUser::new("a"), TestUser::new("b"));
    let base = shared_base();
    let (a_dir, b_dir) = (alice.home_in(base.path()), bob.home_in(base.path()));
    // A file cannot give the job away: Owner comes from the socket.
    write_job(
        &alice,
        &a_dir,
        &format!("hold = true\n+Owner = \"{}\"\n", bob.name),
    );
    write_job(&bob, &b_dir, "hold = true\n");
    let submitted = |user: &TestUser, dir: &Path| {
        let out = pool.run_as(user.who(), 0, dir, &["submit", "job.sub"]);
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{} submits: {stdout}{stderr}",
            user.name
        );
        assert!(stdout.contains("1 job(s) submitted"), "{stdout}");
    };
    submitted(&alice, &a_dir);
    submitted(&bob, &b_dir);
    // Owner is the user's name, User is name@domain.
    let a_job = job_af(&pool, 1, &["Owner", "User", "JobStatus"]);
    assert_eq!(a_job[0], alice.name);
    assert!(
        a_job[1].starts_with(&format!("{}@", alice.name)),
        "{a_job:?}"
    );
    assert_eq!(job_af(&pool, 2, &["Owner"]), [bob.name.as_str()]);

    // Bob can touch none of Alice's jobs, by id, cluster or owner; each
    // refusal says why, and the job is untouched.
    for args in [
        vec!["rm", "1.0"],
        vec!["rm", alice.name.as_str()],
        vec!["hold", "1"],
        vec!["release", "1.0"],
        vec!["qedit", "1.0", "Touched", "true"],
    ] {
        let out = pool.run_as(bob.who(), 0, &b_dir, &args);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "bob {args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("Job 1.0 not")
                && stderr.contains("permission denied")
                && stderr.contains(&format!("belongs to {}", alice.name)),
            "bob {args:?}: {stderr}"
        );
    }
    // A constraint alone selects only Bob's own jobs.
    let out = pool.run_as(
        bob.who(),
        0,
        &b_dir,
        &["rm", "-constraint", "ClusterId == 1"],
    );
    assert!(!out.status.success());
    assert!(text(&out).1.contains("No jobs matched"), "{:?}", text(&out));
    assert_eq!(
        job_af(&pool, 1, &["JobStatus", "Touched"]),
        ["5", "undefined"],
        "alice's job is still held and unedited"
    );
    // Machine-wide commands are the administrators'.
    let out = pool.run_as(bob.who(), 0, &b_dir, &["drain"]);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("only root"), "{:?}", text(&out));
    // Reading is open to all; `q` shows one's own jobs unless asked for
    // every user's, as condor_q.
    let out = pool.run_as(bob.who(), 0, &b_dir, &["q", "-allusers", "-af", "Owner"]);
    let listed = text(&out).0;
    assert!(
        listed.contains(&alice.name) && listed.contains(&bob.name),
        "{listed}"
    );
    let out = pool.run_as(bob.who(), 0, &b_dir, &["q", "-af", "Owner"]);
    let listed = text(&out).0;
    assert!(
        listed.contains(&bob.name) && !listed.contains(&alice.name),
        "{listed}"
    );

    // Root changes anyone's jobs.
    pool.ok(0, &b_dir, &["qedit", "2.0", "Touched", "true"]);
    assert_eq!(job_af(&pool, 2, &["Touched"]), ["true"]);
    pool.ok(0, &b_dir, &["rm", "2"]);
    assert!(job_af(&pool, 2, &["Owner"]).is_empty());

    // Alice releases her own job; its output is hers, and Bob cannot read
    // it.
    let out = pool.run_as(alice.who(), 0, &a_dir, &["release", "1"]);
    assert!(out.status.success(), "{:?}", text(&out));
    wait_for(Duration::from_secs(120), "alice's job completing", || {
        (history_af(&pool, 1, &["JobStatus"]) == ["4"]).then_some(())
    });
    let output = a_dir.join("out/job.txt");
    let meta = std::fs::metadata(&output).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (alice.uid, alice.gid));
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!("hello from {}\n", alice.name)
    );
    assert_eq!(
        std::fs::metadata(a_dir.join("job.log")).unwrap().uid(),
        alice.uid
    );
    let out = bob.run("cat", &[output.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).1.contains("Permission denied"),
        "{:?}",
        text(&out)
    );

    // Root's own jobs are root's.
    let root_dir = base.path().join("root");
    std::fs::create_dir(&root_dir).unwrap();
    std::fs::write(
        root_dir.join("job.sub"),
        "executable = /bin/true\nhold = true\nqueue\n",
    )
    .unwrap();
    pool.ok(0, &root_dir, &["submit", "job.sub"]);
    assert_eq!(job_af(&pool, 3, &["Owner"]), ["root"]);
}

#[test]
fn a_user_names_only_files_they_could_reach_themselves() {
    if !is_root() {
        eprintln!("skipped: creating local users and a root agent needs root");
        return;
    }
    let pool = Pool::up(2);
    open_pool_to_users(&pool);
    let (alice, bob) = (TestUser::new("a"), TestUser::new("b"));
    let base = shared_base();
    let a_dir = alice.home_in(base.path());
    // Bob's private file, in a directory Alice can enter.
    let bobs = base.path().join("bobs-secret.txt");
    bob.write(&bobs, "secret", 0o600);
    let cases = [
        (
            "shadow.sub",
            "transfer_input_files = /etc/shadow\n",
            "/etc/shadow",
        ),
        (
            "bobs.sub",
            &format!("transfer_input_files = {}\n", bobs.display()),
            bobs.to_str().unwrap(),
        ),
        ("stdin.sub", "input = /etc/shadow\n", "/etc/shadow"),
    ];
    alice.write(&a_dir.join("job.sh"), JOB, 0o755);
    for (file, line, named) in cases {
        alice.write(
            &a_dir.join(file),
            &format!("executable = job.sh\n{line}queue\n"),
            0o644,
        );
        let out = pool.run_as(alice.who(), 0, &a_dir, &["submit", file]);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{file} was accepted: {stdout}");
        assert!(
            stderr.contains(&format!("{named} could not be read")),
            "{file}: {stderr}"
        );
    }
    // The same file is fine for its owner.
    let b_dir = bob.home_in(base.path());
    bob.write(&b_dir.join("job.sh"), JOB, 0o755);
    bob.write(
        &b_dir.join("job.sub"),
        &format!(
            "executable = job.sh\ntransfer_input_files = {}\nhold = true\nqueue\n",
            bobs.display()
        ),
        0o644,
    );
    let out = pool.run_as(bob.who(), 0, &b_dir, &["submit", "job.sub"]);
    assert!(out.status.success(), "{:?}", text(&out));

    // A place Alice cannot write: root's 0755 directory.
    let closed = base.path().join("roots");
    std::fs::create_dir(&closed).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A log there is refused at submit.
    alice.write(
        &a_dir.join("log.sub"),
        &format!(
            "executable = job.sh\nlog = {}/job.log\nqueue\n",
            closed.display()
        ),
        0o644,
    );
    let out = pool.run_as(alice.who(), 0, &a_dir, &["submit", "log.sub"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!("{}/job.log cannot be written", closed.display())),
        "{stderr}"
    );
    // Output there holds the job with a reason naming the file; nothing is
    // written there.
    alice.write(
        &a_dir.join("out.sub"),
        &format!(
            "executable = job.sh\noutput = {}/out.txt\nqueue\n",
            closed.display()
        ),
        0o644,
    );
    let out = pool.run_as(alice.who(), 0, &a_dir, &["submit", "out.sub"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let cluster = 2;
    let held = wait_for(Duration::from_secs(120), "alice's job held", || {
        let constraint = format!("ClusterId == {cluster} && JobStatus == 5");
        let out = pool.ok(
            0,
            &std::env::temp_dir(),
            &[
                "q",
                "-constraint",
                &constraint,
                "-af",
                "HoldReasonCode",
                "HoldReason",
            ],
        );
        (!out.trim().is_empty()).then_some(out)
    });
    assert!(held.starts_with("12 "), "{held}");
    assert!(
        held.contains(&format!("{}/out.txt", closed.display())) && held.contains("denied"),
        "{held}"
    );
    assert!(!closed.join("out.txt").exists());
    assert_eq!(std::fs::read_dir(&closed).unwrap().count(), 0);
}

#[test]
fn a_non_root_agent_serves_only_its_own_user() {
    if !is_root() {
        eprintln!("skipped: creating local users needs root");
        return;
    }
    let (carol, dave) = (TestUser::new("c"), TestUser::new("d"));
    let pool = Pool::up_as(carol.who(), 2, &[]);
    let socket = pool.agent(0).join("agent.sock");
    let meta = std::fs::metadata(&socket).unwrap();
    assert_eq!(meta.uid(), carol.uid);
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    open_pool_to_users(&pool);

    let base = shared_base();
    let dir = carol.home_in(base.path());
    write_job(&carol, &dir, "");
    let out = pool.run_as(carol.who(), 0, &dir, &["submit", "job.sub"]);
    assert!(out.status.success(), "{:?}", text(&out));
    wait_for(Duration::from_secs(120), "carol's job completing", || {
        (history_af(&pool, 1, &["JobStatus"]) == ["4"]).then_some(())
    });
    assert_eq!(history_af(&pool, 1, &["Owner"]), [carol.name.as_str()]);
    let output = dir.join("out/job.txt");
    assert_eq!(std::fs::metadata(&output).unwrap().uid(), carol.uid);
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!("hello from {}\n", carol.name)
    );
    // Another user cannot even connect.
    let out = pool.run_as(dave.who(), 0, base.path(), &["q"]);
    assert!(!out.status.success(), "{:?}", text(&out));
    // What a non-root agent cannot enforce, it says.
    let out = pool.run_as(carol.who(), 0, &dir, &["status", "-l"]);
    let ad = String::from_utf8_lossy(&out.stdout);
    assert!(
        ad.contains("StarlingJobAccounts = \"agent's own user\""),
        "{ad}"
    );
    assert!(ad.contains("StarlingPrivateTmp = false"), "{ad}");
    assert!(
        ad.contains("StarlingIsolationLimits = \"the agent is not root: jobs run as its own user"),
        "{ad}"
    );
}

/// Holds 100 idle connections to the socket in argv[1] and drips requests
/// a byte a second on 20 more, for argv[2] seconds; prints what it got.
const LOCKER: &str = r#"
import socket, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
idle, drips, refused = [], [], 0
for i in range(120):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError:
        refused += 1
        continue
    (idle if i < 100 else drips).append(s)
end = time.time() + secs
while time.time() < end:
    for s in drips:
        try:
            s.send(b"{")
        except OSError:
            pass
    time.sleep(1)
print("held", len(idle), "dripping", len(drips), "refused", refused)
"#;

#[test]
fn no_user_locks_the_control_socket_for_the_others() {
    if !is_root() {
        eprintln!("skipped: creating local users needs root");
        return;
    }
    let (mallory, bob) = (TestUser::new("m"), TestUser::new("b"));
    let pool = Pool::up(1);
    open_pool_to_users(&pool);
    let socket = pool.agent(0).join("agent.sock");
    let base = shared_base();
    let script = base.path().join("lock.py");
    std::fs::write(&script, LOCKER).unwrap();
    let locker = Command::new("python3")
        .args([script.to_str().unwrap(), socket.to_str().unwrap(), "12"])
        .uid(mallory.uid)
        .gid(mallory.gid)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let _locker = Reap(locker);
    // While mallory holds and drips, root and bob are served, each time.
    std::thread::sleep(Duration::from_secs(2));
    let bobs = bob.home_in(base.path());
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let out = pool.run(0, base.path(), &["q"]);
        assert!(out.status.success(), "root's q: {:?}", text(&out));
        let out = pool.run_as(bob.who(), 0, &bobs, &["q"]);
        assert!(out.status.success(), "bob's q: {:?}", text(&out));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "q took {:?}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_secs(1));
    }
}
