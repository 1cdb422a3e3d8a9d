//! Real `starling agent` processes on 127.0.0.1, as a user runs them: a
//! pool of agents of one domain (certificates installed through the
//! library, mDNS off, agent 0 the bootstrap peer of the others) finds each
//! other's machine ads within seconds and, as ads are republished and
//! forwarded, holds none of its honest members for a misbehaving peer; an
//! agent killed outright leaves every view once its ad expires, not
//! before, and is back when restarted on the same data directory; an agent
//! stopped with SIGTERM withdraws its ad at once and cleans up after
//! itself; a second agent on a data directory in use, and a bad
//! configuration, are refused with a message that says why.
//!
//! Every agent runs in its own process with its own data directory, and
//! writes its log (stdout and stderr) to `agent.log` there; when a test
//! fails it prints the end of the logs concerned (set `STARLING_TEST_KEEP=1`
//! to keep the whole directories). Every wait polls for a condition until a
//! deadline. Every process a test starts is SIGKILLed when the test ends,
//! however it ends.

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use starling_control::{self as control, Client, Request, Response};
use starling_protocol::classad::{parse_ad, Expr};
use starling_protocol::identity::{Certificate, Keypair, Timestamp};
use starling_storage::DataDir;

/// The domain every pool's agents belong to.
const DOMAIN: &str = "agents-test";

/// Short timers, so that expiry is seen within a test: an ad is refreshed
/// every `REFRESH` seconds and lives `LIFETIME` seconds.
const REFRESH: u64 = 2;
const LIFETIME: u64 = 6;

/// Set this environment variable to keep the agents' directories (data,
/// `agent.toml`, `agent.log`) after a test.
const KEEP: &str = "STARLING_TEST_KEEP";

/// How often a condition is polled.
const POLL: Duration = Duration::from_millis(200);

/// How long an agent may take to answer on its control socket after it is
/// started (it makes its key, opens its store and runs a short benchmark).
const START: Duration = Duration::from_secs(15);

/// A process this test started. Dropping it SIGKILLs the process if it
/// still runs and reaps it, so that no test leaves one behind, passing or
/// panicking.
struct Proc {
    child: Child,
}

impl Proc {
    /// Starts `starling` with `args`, its stdout and stderr appended to
    /// `log`.
    fn spawn(args: &[&str], log: &Path) -> Proc {
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("opening the log");
        let err = out.try_clone().expect("cloning the log handle");
        let child = Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("starling starts");
        Proc { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, if the process has exited (it is then reaped).
    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("waiting for a child")
    }

    /// Waits up to `within` for the process to exit.
    fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL (nothing runs in the agent after it) and reap.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM: the agent's clean stop.
    fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -TERM {} failed", self.pid());
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One agent of a pool: its data directory, configuration and process.
struct Agent {
    name: String,
    dir: PathBuf,
    config: PathBuf,
    log: PathBuf,
    proc: Option<Proc>,
}

impl Agent {
    /// Starts the agent, bootstrapping from `bootstrap` if given.
    fn start(&mut self, bootstrap: Option<&str>) {
        assert!(self.proc.is_none(), "{} is already running", self.name);
        let (dir, config) = (self.dir.to_str().unwrap(), self.config.to_str().unwrap());
        let mut args = vec!["--data-dir", dir, "agent", "--config", config];
        if let Some(address) = bootstrap {
            args.extend(["--bootstrap", address]);
        }
        self.proc = Some(Proc::spawn(&args, &self.log));
    }

    fn proc(&mut self) -> &mut Proc {
        self.proc.as_mut().expect("the agent was started")
    }

    /// The `Name`s of the machine ads in this agent's view.
    fn view(&self) -> Result<BTreeSet<String>, String> {
        Ok(self
            .machine_ads()?
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    /// The machine ads in this agent's view, as (`Name`, `MyCurrentTime`):
    /// the latter is when the advertiser built the ad, in unix seconds.
    fn machine_ads(&self) -> Result<Vec<(String, i64)>, String> {
        let request = Request::Ads {
            kind: "machine".to_owned(),
            constraint: None,
        };
        match Client::call(&self.dir, &request).map_err(|e| e.to_string())? {
            Response::Ads { ads } => ads
                .iter()
                .map(|text| {
                    let ad = parse_ad(text).map_err(|e| format!("ad {text:?}: {e}"))?;
                    let literal = |attr: &str| match ad.get(attr) {
                        Some(Expr::Literal(v)) => Some(v.clone()),
                        _ => None,
                    };
                    let name = literal("Name").and_then(|v| v.as_str().map(str::to_owned));
                    let built = literal("MyCurrentTime").and_then(|v| v.as_int());
                    name.zip(built)
                        .ok_or_else(|| format!("an ad without Name or MyCurrentTime: {text}"))
                })
                .collect(),
            other => Err(format!("asked for ads, got {other:?}")),
        }
    }

    /// The agent's peers, as (agent id, gossip score, rejected messages).
    fn peers(&self) -> Result<Vec<(String, Option<f64>, u64)>, String> {
        match Client::call(&self.dir, &Request::Peers).map_err(|e| e.to_string())? {
            Response::Peers { peers } => Ok(peers
                .into_iter()
                .map(|p| (p.agent_id, p.score, p.rejected))
                .collect()),
            other => Err(format!("asked for peers, got {other:?}")),
        }
    }

    /// The addresses the agent listens on, each ending in `/p2p/<id>`.
    fn listen(&self) -> Result<Vec<String>, String> {
        match Client::call(&self.dir, &Request::Info).map_err(|e| e.to_string())? {
            Response::Info(info) => Ok(info.listen),
            other => Err(format!("asked for info, got {other:?}")),
        }
    }
}

/// Agents of one domain, each with a data directory holding its
/// certificate and an `agent.toml`, in a temporary directory.
struct Pool {
    // Declared first so that it is dropped first: the processes die before
    // their directories are removed.
    agents: Vec<Agent>,
    /// Agent 0's listen address, once it runs.
    bootstrap: Option<String>,
    lifetime: u64,
    root: tempfile::TempDir,
}

impl Pool {
    /// `n` agents, not started, named `slot1@agent-NN`, whose ads live
    /// `lifetime` seconds.
    fn new(n: usize, lifetime: u64) -> Pool {
        let root = test_dir();
        let domain = Keypair::from_seed(&[7; 32]);
        let now = Timestamp::now();
        let agents = (0..n)
            .map(|i| {
                let name = format!("slot1@agent-{i:02}");
                let dir = root.path().join(format!("agent-{i:02}"));
                let data = DataDir::open(&dir).expect("making the data directory");
                let certificate = Certificate {
                    domain: DOMAIN.to_owned(),
                    domain_key: domain.public(),
                    agent: data.agent_key().expect("the agent's key").agent_id(),
                    roles: "execute".parse().expect("a role"),
                    valid_from: now,
                    valid_until: now.saturating_add_millis(86_400_000),
                };
                let envelope = certificate
                    .issue(&domain, i as u64 + 1)
                    .expect("issuing a certificate");
                data.install_certificate(&envelope, &certificate)
                    .expect("installing the certificate");
                let config = dir.join("agent.toml");
                std::fs::write(&config, config_text(&name, REFRESH, lifetime))
                    .expect("writing agent.toml");
                Agent {
                    log: dir.join("agent.log"),
                    name,
                    dir,
                    config,
                    proc: None,
                }
            })
            .collect();
        Pool {
            agents,
            bootstrap: None,
            lifetime,
            root,
        }
    }

    /// Starts agent 0, waits for its listen address, then starts the
    /// others bootstrapping from it.
    fn start(&mut self) {
        self.agents[0].start(None);
        let address = self.wait_for("agent 0 listens", START, &[0], |pool| {
            pool.agents[0]
                .listen()
                .ok()
                .and_then(|l| l.into_iter().find(|a| a.contains("/p2p/")))
        });
        self.bootstrap = Some(address);
        for i in 1..self.agents.len() {
            self.join(i);
        }
    }

    /// Starts agent `i` (again), bootstrapping from agent 0.
    fn join(&mut self, i: usize) {
        let bootstrap = self.bootstrap.clone().expect("agent 0 runs");
        self.agents[i].start(Some(&bootstrap));
    }

    /// The names of the agents `indices`.
    fn names(&self, indices: impl IntoIterator<Item = usize>) -> BTreeSet<String> {
        indices
            .into_iter()
            .map(|i| self.agents[i].name.clone())
            .collect()
    }

    /// The indices of the agents that run.
    fn running(&self) -> Vec<usize> {
        (0..self.agents.len())
            .filter(|&i| self.agents[i].proc.is_some())
            .collect()
    }

    /// Waits until every running agent's view holds exactly the ads of the
    /// running agents; returns how long that took.
    fn wait_converged(&mut self, within: Duration) -> Duration {
        let started = Instant::now();
        let running = self.running();
        let want = self.names(running.clone());
        self.wait_for(
            "every view holds every running agent",
            within,
            &running,
            |pool| {
                running
                    .iter()
                    .all(|&i| pool.agents[i].view().is_ok_and(|v| v == want))
                    .then_some(())
            },
        );
        started.elapsed()
    }

    /// Polls `probe` until it gives a value. Fails the test after `within`,
    /// or as soon as a started agent exits, printing the logs of the agents
    /// `show`.
    fn wait_for<T>(
        &mut self,
        what: &str,
        within: Duration,
        show: &[usize],
        mut probe: impl FnMut(&Pool) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + within;
        loop {
            self.check_running();
            if let Some(value) = probe(self) {
                return value;
            }
            if Instant::now() >= deadline {
                self.fail(
                    &format!("timed out after {within:?} waiting until {what}"),
                    show,
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Fails the test if an agent that should run has exited.
    fn check_running(&mut self) {
        let exited = self.agents.iter_mut().enumerate().find_map(|(i, a)| {
            let status = a.proc.as_mut()?.exited()?;
            Some((i, status))
        });
        if let Some((i, status)) = exited {
            self.agents[i].proc = None;
            self.fail(
                &format!("{} exited unexpectedly ({status})", self.agents[i].name),
                &[i],
            );
        }
    }

    /// Panics with `message`, after the ends of the logs of the agents
    /// `show` and the views of those that run.
    fn fail(&self, message: &str, show: &[usize]) -> ! {
        for &i in show {
            let agent = &self.agents[i];
            let view = match (&agent.proc, agent.view()) {
                (None, _) => "not running".to_owned(),
                (Some(_), Ok(names)) => format!("{names:?}"),
                (Some(_), Err(e)) => e,
            };
            eprintln!(
                "--- {} (view: {view}); end of {}:\n{}",
                agent.name,
                agent.log.display(),
                tail(&agent.log, 40)
            );
        }
        let dir = self.root.path().display();
        if std::env::var_os(KEEP).is_some() {
            panic!("{message} (the agents' directories are kept in {dir})");
        }
        panic!("{message} (set {KEEP}=1 to keep the agents' directories)");
    }
}

/// A temporary directory, kept after the test if [`KEEP`] is set (to read
/// whole logs).
fn test_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("starling-agents-")
        .disable_cleanup(std::env::var_os(KEEP).is_some())
        .tempdir()
        .expect("a temporary directory")
}

fn config_text(name: &str, refresh: u64, lifetime: u64) -> String {
    format!(
        "[network]\n\
         mdns = false\n\
         listen = [\"/ip4/127.0.0.1/tcp/0\"]\n\
         [advertise]\n\
         refresh_secs = {refresh}\n\
         lifetime_secs = {lifetime}\n\
         [machine]\n\
         name = \"{name}\"\n"
    )
}

/// The last `lines` lines of the file at `path`.
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("({e})"));
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn unix_secs_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

#[test]
fn ten_agents_on_loopback_see_each_others_ads_within_seconds() {
    let mut pool = Pool::new(10, LIFETIME);
    pool.start();
    let took = pool.wait_converged(Duration::from_secs(30));
    eprintln!("10 agents converged in {took:?}");

    // Once every agent has republished and its ad has been forwarded
    // around, no agent holds an honest peer for a misbehaving one: a
    // negative gossip score prunes the peer from the mesh and, lower,
    // ignores it, which splits the pool.
    let built = |pool: &Pool, i: usize| -> Vec<(String, i64)> {
        let mut ads = pool.agents[i].machine_ads().unwrap_or_default();
        ads.sort();
        ads
    };
    let converged: Vec<Vec<(String, i64)>> = (0..10).map(|i| built(&pool, i)).collect();
    pool.wait_for(
        "every view holds a republished ad of every agent",
        Duration::from_secs(20),
        &[0],
        |pool| {
            (0..10)
                .all(|i| {
                    let now = built(pool, i);
                    now.len() == 10
                        && now
                            .iter()
                            .zip(&converged[i])
                            .all(|((n, t), (m, t0))| n == m && t > t0)
                })
                .then_some(())
        },
    );
    for i in 0..10 {
        let peers = pool.agents[i]
            .peers()
            .unwrap_or_else(|e| pool.fail(&e, &[i]));
        let blamed: Vec<_> = peers
            .iter()
            .filter(|(_, score, rejected)| score.is_some_and(|s| s < 0.0) || *rejected > 0)
            .collect();
        if !blamed.is_empty() {
            pool.fail(
                &format!(
                    "{} holds honest peers for misbehaving (agent id, score, rejected): {blamed:?}",
                    pool.agents[i].name
                ),
                &[i],
            );
        }
    }

    // What a user runs to see the pool, against one of the agents.
    let dir = pool.agents[7].dir.to_str().unwrap().to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
        .args(["status", "--agent", &dir, "-af", "Name"])
        .output()
        .expect("starling status runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        pool.fail(
            &format!(
                "starling status failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
            &[7],
        );
    }
    let want: Vec<String> = pool.names(0..10).into_iter().collect();
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        want,
        "one name a line, sorted"
    );
}

#[test]
fn a_killed_agent_drops_out_of_every_view_within_seconds_and_comes_back_when_restarted() {
    const KILLED: usize = 3;
    let mut pool = Pool::new(5, LIFETIME);
    pool.start();
    pool.wait_converged(Duration::from_secs(30));
    let killed = pool.agents[KILLED].name.clone();
    let others: Vec<usize> = (0..5).filter(|&i| i != KILLED).collect();

    // Kill just after a fresh ad of the agent reached every other view, so
    // that its ad would live about a lifetime after the kill everywhere:
    // leaving every view before that is the work of its peers, which lost
    // their connections to it, could not dial it again and said so.
    let built_at = |pool: &Pool, i: usize| -> Option<i64> {
        let ads = pool.agents[i].machine_ads().ok()?;
        ads.into_iter().find(|(n, _)| *n == killed).map(|(_, t)| t)
    };
    let first = pool.wait_for(
        "agent 0 holds the ad",
        Duration::from_secs(10),
        &[0],
        |pool| built_at(pool, 0),
    );
    let mut newest = [i64::MIN; 5];
    pool.wait_for(
        "a newer ad reaches every view",
        Duration::from_secs(15),
        &[0, 1, 2, 3, 4],
        |pool| {
            for &i in &others {
                if let Some(t) = built_at(pool, i) {
                    newest[i] = newest[i].max(t);
                }
            }
            others.iter().all(|&i| newest[i] > first).then_some(())
        },
    );
    pool.agents[KILLED].proc().kill();
    let killed_at = Instant::now();
    pool.agents[KILLED].proc = None;

    let lifetime = pool.lifetime;
    pool.wait_for(
        "no view holds the killed agent, within 10 s",
        Duration::from_secs(10),
        &[0, 1, 2, 4],
        |pool| {
            others
                .iter()
                .all(|&i| {
                    pool.agents[i]
                        .machine_ads()
                        .is_ok_and(|ads| !ads.iter().any(|(n, _)| *n == killed))
                })
                .then_some(())
        },
    );
    let left = killed_at.elapsed();
    let expiry = newest.iter().copied().max().unwrap_or(0) as f64 + lifetime as f64;
    assert!(
        unix_secs_now() < expiry,
        "{killed} left the views only when its ad expired"
    );
    eprintln!(
        "{killed} left every view {left:?} after SIGKILL (its ad would have lived {lifetime} s)"
    );

    // The killed agent left its pid file and socket behind; they must not
    // keep it from starting again.
    let dir = pool.agents[KILLED].dir.clone();
    assert!(
        control::pid_path(&dir).exists(),
        "a SIGKILLed agent leaves agent.pid"
    );
    assert!(
        control::socket_path(&dir).exists(),
        "a SIGKILLed agent leaves agent.sock"
    );
    let restarted = Instant::now();
    pool.join(KILLED);
    pool.wait_converged(Duration::from_secs(30));
    eprintln!(
        "{killed} was back in every view {:?} after its restart",
        restarted.elapsed()
    );
}

#[test]
fn a_stopped_agent_withdraws_its_ad_at_once() {
    const STOPPED: usize = 2;
    // Ads live a minute: only a withdrawal explains leaving within seconds.
    let mut pool = Pool::new(3, 60);
    pool.start();
    pool.wait_converged(Duration::from_secs(30));
    let stopped = pool.agents[STOPPED].name.clone();
    let dir = pool.agents[STOPPED].dir.clone();

    pool.agents[STOPPED].proc().terminate();
    let signalled = Instant::now();
    let status = pool.agents[STOPPED]
        .proc()
        .wait_exit(Duration::from_secs(5));
    let Some(status) = status else {
        pool.fail("the agent did not exit within 5 s of SIGTERM", &[STOPPED]);
    };
    let exited = Instant::now();
    pool.agents[STOPPED].proc = None;
    if !status.success() {
        pool.fail(
            &format!("SIGTERM: the agent exited with {status}"),
            &[STOPPED],
        );
    }
    assert!(
        !control::pid_path(&dir).exists(),
        "agent.pid is left behind"
    );
    assert!(
        !control::socket_path(&dir).exists(),
        "agent.sock is left behind"
    );

    pool.wait_for(
        "no view holds the stopped agent",
        Duration::from_secs(3),
        &[0, 1, STOPPED],
        |pool| {
            (0..STOPPED)
                .all(|i| pool.agents[i].view().is_ok_and(|v| !v.contains(&stopped)))
                .then_some(())
        },
    );
    eprintln!(
        "{stopped} exited {:?} after SIGTERM and left every view {:?} after exiting",
        exited - signalled,
        exited.elapsed()
    );
}

#[test]
fn a_second_agent_on_the_same_data_dir_is_refused() {
    let mut pool = Pool::new(1, LIFETIME);
    pool.start();
    let agent = &pool.agents[0];
    let first_pid = agent.proc.as_ref().expect("started").pid();
    let dir = agent.dir.to_str().unwrap().to_owned();
    let config = agent.config.to_str().unwrap().to_owned();
    let log = pool.root.path().join("second.log");
    let mut second = Proc::spawn(&["--data-dir", &dir, "agent", "--config", &config], &log);
    let status = second.wait_exit(Duration::from_secs(10));
    let said = std::fs::read_to_string(&log).expect("reading the log");
    let Some(status) = status else {
        panic!("the second agent still runs after 10 s; it said:\n{said}");
    };
    assert!(
        !status.success(),
        "the second agent exited with {status}:\n{said}"
    );
    assert!(
        said.contains(&format!("another agent is running in {dir}")),
        "the refusal names the directory: {said}"
    );

    // The first agent noticed nothing: still its pid file, still serving.
    assert_eq!(control::read_pid(&pool.agents[0].dir), Some(first_pid));
    match Client::call(&pool.agents[0].dir, &Request::Info) {
        Ok(Response::Info(info)) => assert_eq!(info.pid, first_pid),
        other => pool.fail(&format!("the first agent answers {other:?}"), &[0]),
    }
}

#[test]
fn a_bad_config_is_refused_naming_the_key() {
    let root = test_dir();
    for (case, network, key) in [
        (
            "unknown-key",
            "listen_on = [\"/ip4/127.0.0.1/tcp/0\"]",
            "listen_on",
        ),
        (
            "not-a-multiaddr",
            "listen = [\"127.0.0.1:4001\"]",
            "network.listen",
        ),
        // Looks like a multiaddr, so only the agent's own parsing finds it.
        (
            "bad-port",
            "listen = [\"/ip4/127.0.0.1/tcp/http\"]",
            "network.listen",
        ),
    ] {
        let dir = root.path().join(case);
        std::fs::create_dir(&dir).expect("making the directory");
        let config = dir.join("agent.toml");
        std::fs::write(&config, format!("[network]\nmdns = false\n{network}\n"))
            .expect("writing agent.toml");
        let log = dir.join("agent.log");
        let args = [
            "--data-dir",
            dir.to_str().unwrap(),
            "agent",
            "--config",
            config.to_str().unwrap(),
        ];
        let started = Instant::now();
        let mut agent = Proc::spawn(&args, &log);
        let status = agent.wait_exit(Duration::from_secs(10));
        let said = std::fs::read_to_string(&log).expect("reading the log");
        let Some(status) = status else {
            panic!("{case}: the agent still runs after 10 s; it said:\n{said}");
        };
        assert_eq!(
            status.code(),
            Some(2),
            "{case}: exit status; it said:\n{said}"
        );
        assert!(said.contains(key), "{case}: the error names {key}: {said}");
        assert!(
            !control::pid_path(&dir).exists(),
            "{case}: a refused agent leaves agent.pid behind"
        );
        eprintln!("{case}: refused in {:?}", started.elapsed());
    }
}
