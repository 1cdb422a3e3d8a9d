//! What the tests that run real pools share: a testnet started with
//! `starling testnet up` and killed when the test ends, the `starling`
//! binary run with a deadline, and polling with a deadline.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use starling_testnet::Layout;

pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(240);
pub(crate) const POLL: Duration = Duration::from_millis(250);

/// Kills every process of the testnet in `dir` when the test ends.
pub(crate) struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let layout = Layout::load(&self.0).ok().flatten();
        if let Some(pid) = layout
            .as_ref()
            .and_then(|l| l.process_group)
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        for agent in layout.iter().flat_map(|l| l.agents.iter()) {
            if let Some(pid) = pid_of(&self.0.join(&agent.name)) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        // Jobs the killed agents ran, their cgroups and sandboxes.
        if let Some(layout) = &layout {
            starling_testnet::processes::forget(layout);
        }
    }
}

/// A process the test started itself: killed and reaped at the end.
pub(crate) struct Reap(pub(crate) std::process::Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether process `pid` still runs: a zombie (an agent this test
/// started and has not reaped yet) has stopped.
pub(crate) fn running(pid: rustix::process::Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero()))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

pub(crate) fn pid_of(agent_dir: &Path) -> Option<rustix::process::Pid> {
    std::fs::read_to_string(agent_dir.join("agent.pid"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .and_then(rustix::process::Pid::from_raw)
}

pub(crate) fn starling_in(dir: &Path, args: &[&str]) -> Output {
    starling_as(None, dir, args)
}

/// A local user to run commands as: (uid, gid).
pub(crate) type As = Option<(u32, u32)>;

/// [`starling_in`] as the user `who` (`None`: this process's user).
pub(crate) fn starling_as(who: As, dir: &Path, args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt as _;
    let scratch = tempfile::tempdir().unwrap();
    let (out, err) = (scratch.path().join("out"), scratch.path().join("err"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_starling-e2e"));
    if let Some((uid, gid)) = who {
        // std drops the supplementary groups too when root sets a uid.
        command.uid(uid).gid(gid).env("HOME", dir);
    }
    let mut child = command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("starling starts");
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("starling {args:?} took longer than {COMMAND_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: std::fs::read(out).unwrap(),
        stderr: std::fs::read(err).unwrap(),
    }
}

pub(crate) fn ok_in(dir: &Path, args: &[&str]) -> String {
    let out = starling_in(dir, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "starling {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A testnet of `agents` agents in one domain.
pub(crate) struct Pool {
    pub(crate) dir: PathBuf,
    _cleanup: Cleanup,
    _tmp: tempfile::TempDir,
}

/// A temporary directory every local account may write into, for jobs of
/// a [`Pool::up_sharing`] pool to leave what the test watches.
pub(crate) fn shared_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    dir
}

impl Pool {
    pub(crate) fn up(agents: usize) -> Pool {
        Pool::up_as(None, agents, &[])
    }

    /// A pool whose jobs all run as `nobody` and see the machine's `/tmp`,
    /// so that they can write into a [`shared_dir`] the test watches (as
    /// jobs kept apart by default cannot).
    pub(crate) fn up_sharing(agents: usize) -> Pool {
        if !rustix::process::geteuid().is_root() {
            // Jobs run as the test's own user already.
            return Pool::up(agents);
        }
        Pool::up_as(
            None,
            agents,
            &["--jobs", "account=nobody", "--jobs", "private_tmp=false"],
        )
    }

    /// A testnet started by the user `who` (its agents run as that user),
    /// with `extra` options to `testnet up`.
    pub(crate) fn up_as(who: As, agents: usize, extra: &[&str]) -> Pool {
        Pool::up_with(tempfile::tempdir().unwrap(), who, agents, extra)
    }

    /// A testnet of `agents` agents whose data directories lie under
    /// `parent` (a filesystem the test controls).
    pub(crate) fn up_in(parent: &Path, agents: usize) -> Pool {
        Pool::up_with(tempfile::tempdir_in(parent).unwrap(), None, agents, &[])
    }

    fn up_with(tmp: tempfile::TempDir, who: As, agents: usize, extra: &[&str]) -> Pool {
        if let Some((uid, gid)) = who {
            std::os::unix::fs::chown(tmp.path(), Some(uid), Some(gid)).unwrap();
        }
        let dir = tmp.path().join("net");
        let cleanup = Cleanup(dir.clone());
        let agents = agents.to_string();
        let mut args = vec![
            "testnet",
            "up",
            "--dir",
            dir.to_str().unwrap(),
            "--agents",
            &agents,
            "--timeout",
            "180",
        ];
        args.extend_from_slice(extra);
        let up = starling_as(who, tmp.path(), &args);
        assert!(
            up.status.success(),
            "testnet up failed ({}):\n{}\n{}",
            up.status,
            String::from_utf8_lossy(&up.stdout),
            String::from_utf8_lossy(&up.stderr)
        );
        Pool {
            dir,
            _cleanup: cleanup,
            _tmp: tmp,
        }
    }

    pub(crate) fn agent(&self, i: usize) -> PathBuf {
        self.dir.join(format!("agent-{i:02}"))
    }

    /// Runs `starling ARGS --agent agent-i` in `cwd`.
    pub(crate) fn run(&self, i: usize, cwd: &Path, args: &[&str]) -> Output {
        self.run_as(None, i, cwd, args)
    }

    /// [`Pool::run`] as the user `who`.
    pub(crate) fn run_as(&self, who: As, i: usize, cwd: &Path, args: &[&str]) -> Output {
        let agent = self.agent(i);
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--agent", agent.to_str().unwrap()]);
        starling_as(who, cwd, &all)
    }

    pub(crate) fn ok(&self, i: usize, cwd: &Path, args: &[&str]) -> String {
        let out = self.run(i, cwd, args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "starling {args:?} on agent {i} failed:\n{stdout}\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.log_tail(i)
        );
        stdout
    }

    pub(crate) fn log_tail(&self, i: usize) -> String {
        let log = std::fs::read_to_string(self.agent(i).join("agent.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// `-af` of the queue (every user's jobs) or history of agent `i`, one
    /// row per job.
    pub(crate) fn af(&self, i: usize, history: bool, attrs: &[&str]) -> Vec<Vec<String>> {
        let cwd = std::env::temp_dir();
        let mut args = if history {
            vec!["history", "-af"]
        } else {
            vec!["q", "-allusers", "-af"]
        };
        args.extend(attrs);
        self.ok(i, &cwd, &args)
            .lines()
            .map(|l| l.split_whitespace().map(str::to_owned).collect())
            .collect()
    }

    /// Waits until agent `i`'s queue is empty, or panics with its state.
    pub(crate) fn wait_queue_empty(&self, i: usize, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = self.af(
                i,
                false,
                &["ClusterId", "ProcId", "JobStatus", "HoldReason"],
            );
            if left.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "agent {i} still has {} jobs after {within:?}: {left:?}\n{}",
                    left.len(),
                    self.log_tail(i)
                );
            }
            std::thread::sleep(POLL);
        }
    }
}

pub(crate) fn wait_for<T>(within: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {within:?}"
        );
        std::thread::sleep(POLL);
    }
}

impl Pool {
    /// Stops agent `i`, sets `settings` in the `[section]` of its
    /// `agent.toml`, and starts it again as the testnet did; returns once it
    /// answers and agent `seen_by` sees its machine ad.
    pub(crate) fn reconfigure(
        &self,
        i: usize,
        section: &str,
        settings: &[(&str, toml::Value)],
        seen_by: usize,
    ) -> Reap {
        let dir = self.agent(i);
        let pid = pid_of(&dir).expect("the agent runs");
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        wait_for(Duration::from_secs(30), "the agent stopping", || {
            (!running(pid)).then_some(())
        });
        let path = dir.join("agent.toml");
        let mut config: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let table = config
            .entry(section)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .expect("a table");
        for (key, value) in settings {
            table.insert((*key).to_owned(), value.clone());
        }
        std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
        let child = self.start(i);
        let name = format!("agent-{i:02}");
        wait_for(
            Duration::from_secs(60),
            "the restarted agent in the view",
            || {
                let out = self.run(seen_by, &std::env::temp_dir(), &["status", "-af", "Name"]);
                String::from_utf8_lossy(&out.stdout)
                    .contains(&name)
                    .then_some(())
            },
        );
        child
    }

    /// What agent `submitter` says of job `job` and the last lines of every
    /// agent's log, for a failure message.
    pub(crate) fn diagnose(&self, submitter: usize, job: &str, agents: usize) -> String {
        let cwd = std::env::temp_dir();
        let mut text = String::new();
        for args in [vec!["q", "-l", job], vec!["why", job], vec!["status", "-l"]] {
            let out = self.run(submitter, &cwd, &args);
            text.push_str(&format!(
                "--- starling {args:?}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        for i in 0..agents {
            text.push_str(&format!("--- agent {i} log\n{}\n", self.log_tail(i)));
        }
        text
    }

    /// Starts agent `i` as the testnet did (its own `agent.toml`, its log
    /// appended to); it is killed when the returned [`Reap`] drops.
    pub(crate) fn start(&self, i: usize) -> Reap {
        let dir = self.agent(i);
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("agent.log"))
            .unwrap();
        Reap(
            Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
                .args(["agent", "--data-dir", dir.to_str().unwrap(), "--config"])
                .arg(dir.join("agent.toml"))
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap(),
        )
    }

    /// Kills agent `i` as a crash would (`starling testnet kill`: SIGKILL,
    /// nothing cleaned up) and returns once its process is gone.
    pub(crate) fn crash(&self, i: usize) -> String {
        let name = format!("agent-{i:02}");
        ok_in(
            &std::env::temp_dir(),
            &[
                "testnet",
                "kill",
                "--dir",
                self.dir.to_str().unwrap(),
                &name,
            ],
        )
    }

    /// Starts agent `i` again on its data directory (`starling testnet
    /// start`), in the testnet's process group; returns once it answers
    /// with a peer.
    pub(crate) fn restart(&self, i: usize) -> String {
        let name = format!("agent-{i:02}");
        ok_in(
            &std::env::temp_dir(),
            &[
                "testnet",
                "start",
                "--dir",
                self.dir.to_str().unwrap(),
                &name,
                "--timeout",
                "60",
            ],
        )
    }

    /// Attribute values of agent `i`'s own machine ad, as `status` shows
    /// them.
    pub(crate) fn machine_af(&self, i: usize, attrs: &[&str]) -> Vec<String> {
        let name = format!("agent-{i:02}");
        let mut args = vec![
            "status".to_owned(),
            "-constraint".to_owned(),
            format!("regexp(\"{name}\", Name)"),
            "-af".to_owned(),
        ];
        args.extend(attrs.iter().map(|a| (*a).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.ok(i, &std::env::temp_dir(), &args)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }
}

/// Installs the domain policy `policy` into agent `i` of `pool` while it
/// runs; waits until the agent says it is in force, and checks it was not
/// restarted for it.
pub(crate) fn install_policy(pool: &Pool, i: usize, policy: &Path) {
    let pid = pid_of(&pool.agent(i)).unwrap();
    let log = pool.agent(i).join("agent.log");
    let before = std::fs::read_to_string(&log).unwrap_or_default().len();
    let installed = pool.ok(
        i,
        &std::env::temp_dir(),
        &["domain", "install", policy.to_str().unwrap()],
    );
    assert!(installed.contains("within seconds"), "{installed}");
    wait_for(Duration::from_secs(30), "the new policy in force", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text[before.min(text.len())..]
            .contains("the domain's policy changed")
            .then_some(())
    });
    assert_eq!(
        pid_of(&pool.agent(i)),
        Some(pid),
        "the agent was not restarted"
    );
}

/// `d0.testnet=KEY`, d0's public key as agent `i`'s installed policy of
/// `domain` names it: what `--trust` takes to keep trusting d0.
pub(crate) fn trust_d0(pool: &Pool, i: usize, domain: &str) -> String {
    let policy = pool
        .agent(i)
        .join("policies")
        .join(format!("{domain}.policy"));
    let verified = pool.ok(
        i,
        &std::env::temp_dir(),
        &["domain", "verify", policy.to_str().unwrap()],
    );
    let line = verified
        .lines()
        .find(|l| l.trim_start().starts_with("trusts d0.testnet (key "))
        .unwrap_or_else(|| panic!("{domain} trusts d0:\n{verified}"));
    let key = line.split("(key ").nth(1).unwrap().trim_end_matches(')');
    format!("d0.testnet={key}")
}

/// `starling domain policy` signed with d1's key (a testnet of several
/// domains), with `terms` (`--trust` and its options), into `out`.
pub(crate) fn sign_d1_policy(pool: &Pool, out: &Path, terms: &[&str]) {
    let key = pool.dir.join("domains").join("d1.testnet.key");
    let mut args = vec![
        "domain",
        "policy",
        "--key",
        key.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(terms);
    pool.ok(1, &std::env::temp_dir(), &args);
}

/// A pool of `agents` agents in two domains, two CPUs each, whose d1 trusts
/// d0 on the term `cap` (a line of a `[[terms]]` table), and whose jobs
/// may write into a directory the test reads.
pub(crate) fn pool_on_terms(work: &Path, agents: usize, cap: &str) -> Pool {
    let terms = work.join("terms.toml");
    std::fs::write(
        &terms,
        format!("[[terms]]\ndomain = \"d1.testnet\"\ntrusts = \"d0.testnet\"\n{cap}\n"),
    )
    .unwrap();
    let mut extra = vec![
        "--domains",
        "2",
        "--cpus",
        "2",
        "--refresh-secs",
        "2",
        "--lifetime-secs",
        "6",
        "--terms",
        terms.to_str().unwrap(),
    ];
    if rustix::process::geteuid().is_root() {
        extra.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    Pool::up_as(None, agents, &extra)
}

/// The network namespaces whose names start with `prefix-` (those a
/// `--netns` testnet made).
pub(crate) fn namespaces(prefix: &str) -> Vec<String> {
    let out = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&format!("{prefix}-")))
        .map(str::to_owned)
        .collect()
}

/// Runs `f` on a thread moved into the network namespace `ns`.
pub(crate) fn in_namespace<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let file = std::fs::File::open(format!("/run/netns/{ns}")).unwrap();
    std::thread::spawn(move || {
        rustix::thread::move_into_link_name_space(
            std::os::fd::AsFd::as_fd(&file),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .unwrap();
        f()
    })
}

/// Makes the data directory `data` an agent of the domain whose key is
/// `domain_key` (`id`, `domain admit` with `roles`, `domain install`, run
/// in `root`); returns the agent's id.
pub(crate) fn admit_into(root: &Path, data: &Path, domain_key: &Path, roles: &str) -> String {
    let out = ok_in(
        root,
        &["id", "--json", "--data-dir", data.to_str().unwrap()],
    );
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = json["agent_id"].as_str().unwrap().to_owned();
    let cert = root.join(format!("{id}.cert"));
    ok_in(
        root,
        &[
            "domain",
            "admit",
            "--key",
            domain_key.to_str().unwrap(),
            &id,
            "--roles",
            roles,
            "--out",
            cert.to_str().unwrap(),
        ],
    );
    ok_in(
        root,
        &[
            "domain",
            "install",
            cert.to_str().unwrap(),
            "--data-dir",
            data.to_str().unwrap(),
        ],
    );
    id
}
