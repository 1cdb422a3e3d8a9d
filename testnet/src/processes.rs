//! A testnet's agents as processes: starting them ([`up`]), reading their
//! state ([`status`]) and stopping them ([`down`]); one agent at a time,
//! killing it as a crash would ([`kill`]) and starting it again with its
//! data directory ([`start`]), for chaos tests.
//!
//! Each agent is a process of the `starling` binary (`starling agent
//! --data-dir DIR/agent-XX --config DIR/agent-XX/agent.toml`), started
//! detached: its own working directory, standard input from `/dev/null`,
//! output and errors appended to its `agent.log`, and a process group shared
//! by the testnet's agents and led by the first, apart from the terminal's,
//! so that closing the terminal or pressing Ctrl-C in it leaves them
//! running. An agent is asked things through `agent.sock` in its data
//! directory, and found through `/proc` (see below).
//!
//! `up` starts the first agent alone and asks it for its address (it may
//! listen on port 0), then starts the others in waves of
//! [`UpOptions::wave`], each dialling the first agent and up to two more
//! already running (its ancestors in a binary tree over the agents, so no
//! agent but the first is everyone's bootstrap peer). A wave starts once
//! the previous one answers on its control socket, so fifty agents on two
//! cores do not all start their swarms at once. `up` returns when every
//! agent sees every machine ad, the strongest sign that gossip works.
//!
//! Waiting is polling with a growing interval (the agents are not our
//! children once `up` has returned, so there is nothing to block on), and
//! every wait has a deadline. Agents are asked over their control sockets
//! all at once, each question with its own timeout, so one slow agent on
//! a loaded machine delays a round by its timeout, not by fifty of them.
//!
//! Which processes are the testnet's agents is read from `/proc` (see
//! `procfs.rs`), not from their pid files: an agent that does not answer
//! or has not written its pid file yet is still found, and a stale pid
//! file is never believed. `down` also clears what is left in the
//! testnet's process group, so nothing an agent started outlives it.
//!
//! `kill` sends one agent a signal (SIGKILL by default) and waits until its
//! process is gone, cleaning nothing up: its jobs, pid file and socket are
//! left as a crash leaves them. `start` runs a stopped agent again with its
//! data directory and `agent.toml`, whose bootstrap peers it first points
//! at agents still running (the agent may come back on another port, and
//! the agents it knew may be the ones down), and returns once the agent
//! answers and has a peer.

use std::collections::HashMap;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use starling_control::{self as control, Client, Info, Request, Response};
use starling_protocol::identity::Timestamp;

use crate::layout::{self, Agent, AgentSettings, Layout, LOG_FILE};
use crate::{netns, procfs};

/// How long `up` waits for every agent to join, by default.
pub const DEFAULT_UP_TIMEOUT: Duration = Duration::from_secs(120);

/// How long `down` waits for agents to stop before it kills them.
pub const DEFAULT_DOWN_TIMEOUT: Duration = Duration::from_secs(20);

/// How many agents `up` starts at once, by default.
pub const DEFAULT_WAVE: usize = 8;

/// The most bootstrap peers an agent is given.
pub const MAX_BOOTSTRAP: usize = 3;

/// How long an agent has to answer one control request. An idle agent
/// answers in milliseconds; this is for one starved of CPU.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// How many agents are asked at once.
const MAX_ASKING: usize = 32;

/// After SIGKILL, how long to wait for the kernel to take a process away.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// The first and the longest pause between two polls.
const POLL_FIRST: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_millis(500);

/// Lines of an agent's log shown when it dies during `up`.
const LOG_TAIL_LINES: usize = 15;

/// What `up` is asked for.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// The testnet's directory; made if missing.
    pub dir: PathBuf,
    /// How many agents.
    pub agents: usize,
    /// How many domains (agents are dealt to them round-robin).
    pub domains: usize,
    /// Agent `i` listens on `127.0.0.1:(base_port + i)`; `None`: on a port
    /// the system picks, learnt through the control API.
    pub base_port: Option<u16>,
    /// Advertise timers for every agent's configuration.
    pub settings: AgentSettings,
    /// How long to wait for every agent to join.
    pub timeout: Duration,
    /// How many agents to start at once.
    pub wave: usize,
    /// The `starling` binary the agents run.
    pub starling: PathBuf,
    /// Run each agent in a network namespace of its own, with these link
    /// rates ([`crate::netns`]); `None`: all on loopback.
    pub netns: Option<netns::Rates>,
    /// With `netns`: each domain behind a NAT, the first agent a relay on
    /// the core that the others listen through ([`crate::netns`]).
    pub nat: bool,
    /// The terms each domain's policy gives each other domain
    /// ([`layout::DomainTerms`]); none: every domain trusts every other on
    /// default terms.
    pub terms: Vec<layout::DomainTerms>,
}

impl UpOptions {
    /// `agents` agents in one domain in `dir`, run by `starling`, with the
    /// default timeout and wave size.
    pub fn new(dir: impl Into<PathBuf>, agents: usize, starling: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            agents,
            domains: 1,
            base_port: None,
            settings: AgentSettings::default(),
            timeout: DEFAULT_UP_TIMEOUT,
            wave: DEFAULT_WAVE,
            starling: starling.into(),
            netns: None,
            nat: false,
            terms: Vec::new(),
        }
    }
}

/// What `up` is doing, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// The files are ready; agents are about to start.
    Prepared { agents: usize, domains: usize },
    /// A wave of agents answers on its control sockets.
    Answering {
        first: String,
        last: String,
        answering: usize,
        total: usize,
    },
    /// How many agents see every machine ad so far.
    Joining { joined: usize, total: usize },
    /// `down`: agents asked to stop, and how many are still running.
    Stopping { running: usize, total: usize },
}

/// A testnet that came up.
#[derive(Debug, Clone)]
pub struct UpReport {
    pub layout: Layout,
    /// From the start of `up` until every agent had joined.
    pub elapsed: Duration,
    /// Each agent's answer to `Info` once it had joined, in layout order.
    pub infos: Vec<Info>,
}

/// One agent as `status` finds it.
#[derive(Debug, Clone)]
pub struct AgentStatus {
    pub agent: Agent,
    pub state: AgentState,
}

/// Whether an agent runs and what it says.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentState {
    /// Running and answering.
    Running { pid: i32, info: Box<Info> },
    /// Its process runs but its control socket does not answer.
    NotAnswering { pid: i32, error: String },
    /// No process of it runs.
    Down,
}

impl AgentState {
    pub fn pid(&self) -> Option<i32> {
        match self {
            AgentState::Running { pid, .. } | AgentState::NotAnswering { pid, .. } => Some(*pid),
            AgentState::Down => None,
        }
    }

    pub fn is_running(&self) -> bool {
        self.pid().is_some()
    }
}

/// How `down` stopped one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It was not running.
    NotRunning,
    /// It stopped when asked (a control `shutdown`, or SIGTERM when its
    /// socket did not answer).
    Cleanly,
    /// It was still running at the deadline and was killed (SIGKILL).
    Killed,
}

/// What `down` did.
#[derive(Debug, Clone)]
pub struct DownReport {
    /// Each agent, in layout order, and how it stopped.
    pub agents: Vec<(String, Stopped)>,
    /// Other processes of the testnet's process group that were killed:
    /// what agents started, or an agent that does not look like one.
    pub others_killed: usize,
}

/// The number of machine ads in an agent's view.
pub fn machine_ads(info: &Info) -> usize {
    info.ads
        .iter()
        .filter(|(kind, _)| kind.eq_ignore_ascii_case("machine"))
        .map(|(_, n)| *n)
        .sum()
}

/// Whether an agent of a testnet of `total` has joined: it sees the
/// `expected` machine ads it is shown ([`expected_ads`], its own among
/// them) and, unless alone, a peer.
pub fn joined(info: &Info, expected: usize, total: usize) -> bool {
    machine_ads(info) >= expected && (total == 1 || info.peers >= 1)
}

/// How many machine ads each agent of `layout` can be counted on to see:
/// those of its own domain, and those of every domain whose terms for its
/// domain have no `export` expression. What an `export` expression lets
/// through is the exporting agents' to decide, so those are not waited
/// for.
pub fn expected_ads(layout: &Layout, terms: &[layout::DomainTerms]) -> Vec<usize> {
    let filtered = |from: &str, to: &str| {
        terms
            .iter()
            .any(|t| t.domain == from && t.trusts == to && t.export.is_some())
    };
    layout
        .agents
        .iter()
        .map(|me| {
            layout
                .agents
                .iter()
                .filter(|other| other.domain == me.domain || !filtered(&other.domain, &me.domain))
                .count()
        })
        .collect()
}

/// Makes the testnet in `options.dir` (see [`layout::prepare`]) and starts
/// its agents; returns once every agent has joined.
///
/// A directory with running agents is refused. If an agent dies or the
/// timeout passes, the error names the agents concerned and their logs, and
/// the agents already started are left running for `status` to show and
/// `down` to stop.
pub fn up(options: &UpOptions, progress: &mut dyn FnMut(Progress)) -> anyhow::Result<UpReport> {
    let started = Instant::now();
    let deadline = started + options.timeout;
    layout::check_settings(&options.settings)?;
    if options.wave == 0 {
        bail!("the wave size must be at least 1");
    }
    if options.nat && options.netns.is_none() {
        bail!("--nat puts the domains of an emulated network behind NATs: give --netns too");
    }
    if let Some(rates) = &options.netns {
        netns::check(rates, options.domains)?;
        if !rustix::process::geteuid().is_root() {
            bail!(
                "--netns needs root (network namespaces, veth pairs and tc are root's): run                  the testnet as root, or leave --netns out for a testnet on loopback"
            );
        }
    }
    if let Some(base) = options.base_port {
        let last = u32::from(base) + options.agents.saturating_sub(1) as u32;
        if base == 0 || last > u32::from(u16::MAX) {
            bail!(
                "--base-port {base} with {} agents needs ports {base} to {last}; \
                 choose a base port between 1 and {}",
                options.agents,
                u32::from(u16::MAX) + 1 - options.agents as u32
            );
        }
    }
    // The directory holds domain keys: private, like a data directory.
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&options.dir)
        .with_context(|| format!("creating {}", options.dir.display()))?;
    let dir = options
        .dir
        .canonicalize()
        .with_context(|| format!("opening {}", options.dir.display()))?;
    let _lock = lock(&dir)?;
    if let Some(old) = Layout::load(&dir)? {
        let mut running: Vec<(usize, i32)> = find_agents(&old).into_iter().collect();
        running.sort_unstable();
        let running: Vec<String> = running
            .into_iter()
            .map(|(i, pid)| format!("{} (pid {pid})", old.agents[i].name))
            .collect();
        if !running.is_empty() {
            bail!(
                "{} has running agents: {}; stop them first with `starling testnet down --dir {}`",
                dir.display(),
                running.join(", "),
                dir.display()
            );
        }
        let others = old
            .process_group
            .map_or_else(Vec::new, |g| procfs::group_members(g, &dir));
        if !others.is_empty() {
            bail!(
                "{} has processes left from its last run (pids {others:?}); stop them first \
                 with `starling testnet down --dir {}`",
                dir.display(),
                dir.display()
            );
        }
    }
    let mut layout = layout::prepare(&dir, options.agents, options.domains, &options.terms)?;
    layout.process_group = None;
    // The network of an earlier run (a crash leaves it) goes first.
    if let Some(old) = layout.network.take() {
        netns::destroy(&old)?;
    }
    layout.save()?;
    if let Some(rates) = options.netns {
        let mut net = netns::Network::for_dir(&dir, rates);
        net.nat = options.nat;
        netns::destroy(&net)?;
        // Recorded before anything is made: `down` cleans a half-made one.
        layout.network = Some(net.clone());
        layout.save()?;
        let domain_of: Vec<usize> = (0..layout.agents.len())
            .map(|i| i % layout.domains.len())
            .collect();
        if let Err(e) = netns::create(&net, &domain_of, layout.domains.len()) {
            let _ = netns::destroy(&net);
            layout.network = None;
            layout.save()?;
            return Err(e.context("making the testnet's network"));
        }
    }
    progress(Progress::Prepared {
        agents: layout.agents.len(),
        domains: layout.domains.len(),
    });

    let total = layout.agents.len();
    let ips: Vec<String> = (0..total).map(|i| listen_ip(&layout, i)).collect();
    // Agents manage the links the emulated network shapes.
    let mut settings = options.settings.clone();
    if let Some(rates) = options.netns {
        settings.links = rates;
    }
    let listen = |i: usize| match options.base_port {
        Some(base) => format!("/ip4/{}/tcp/{}", ips[i], u32::from(base) + i as u32),
        None => format!("/ip4/{}/tcp/0", ips[i]),
    };
    if let (Some(base), None) = (options.base_port, &layout.network) {
        check_ports_free(base, total)?;
    }
    // Each agent's dialable address, once it has answered.
    let mut addresses: Vec<Option<String>> = vec![None; total];
    let mut children: Vec<Option<Child>> = (0..total).map(|_| None).collect();
    let mut infos: Vec<Option<Info>> = vec![None; total];

    // Waves: the first agent alone (the others need its address), then
    // `wave` at a time.
    let mut next = 0;
    while next < total {
        let end = if next == 0 {
            1
        } else {
            (next + options.wave).min(total)
        };
        for (i, slot) in children.iter_mut().enumerate().take(end).skip(next) {
            let agent = &layout.agents[i];
            let mut bootstrap = bootstrap_peers(i, &addresses);
            let nat = layout.network.as_ref().is_some_and(|n| n.nat);
            if nat {
                // Behind NAT only the relay and the agent's own domain
                // can be dialled.
                let reachable = |a: &String| {
                    addresses[0].as_ref() == Some(a)
                        || (0..total).any(|j| {
                            addresses[j].as_ref() == Some(a)
                                && layout.agents[j].domain == agent.domain
                        })
                };
                bootstrap.retain(|a| reachable(a));
            }
            let config =
                layout::write_agent_config(&layout, agent, &listen(i), &bootstrap, &settings)?;
            if nat {
                match (i, &addresses[0]) {
                    (0, _) => layout::set_relay(&config, &[], true)?,
                    (_, Some(relay)) => {
                        layout::set_relay(&config, std::slice::from_ref(relay), false)?
                    }
                    (_, None) => {}
                }
            }
            let child = spawn(
                &options.starling,
                &layout,
                agent,
                &config,
                layout.process_group,
                "up",
            )?;
            if i == 0 {
                // The first agent leads the testnet's process group.
                let pid = i32::try_from(child.id()).context("a pid beyond i32")?;
                layout.process_group = Some(pid);
                layout.save()?;
            }
            *slot = Some(child);
        }
        let wave: Vec<usize> = (next..end).collect();
        wait_answering(
            &layout,
            &wave,
            &mut children,
            &mut infos,
            deadline,
            options.timeout,
        )?;
        for &i in &wave {
            if let Some(info) = &infos[i] {
                addresses[i] = Some(dial_address(&layout, i, info)?);
            }
        }
        progress(Progress::Answering {
            first: layout.agents[next].name.clone(),
            last: layout.agents[end - 1].name.clone(),
            answering: end,
            total,
        });
        next = end;
    }

    // Every agent answers; now wait until each sees every machine ad
    // (every one shown to it).
    let expected = expected_ads(&layout, &options.terms);
    let mut done = vec![false; total];
    let mut pause = POLL_FIRST;
    loop {
        let pending: Vec<usize> = (0..total).filter(|&i| !done[i]).collect();
        for &i in &pending {
            check_alive(&layout, i, &mut children)?;
        }
        for (i, answer) in ask_info(&layout, &pending, answer_timeout(deadline)) {
            if let Ok(info) = answer {
                done[i] = joined(&info, expected[i], total);
                infos[i] = Some(info);
            }
        }
        let count = done.iter().filter(|d| **d).count();
        progress(Progress::Joining {
            joined: count,
            total,
        });
        if count == total {
            break;
        }
        if Instant::now() >= deadline {
            bail!(not_joined(
                &layout,
                &done,
                &infos,
                &expected,
                options.timeout
            ));
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(POLL_MAX);
    }
    let infos = infos.into_iter().flatten().collect();
    Ok(UpReport {
        layout,
        elapsed: started.elapsed(),
        infos,
    })
}

/// Every agent of the testnet in `dir` and its state.
pub fn status(dir: &Path) -> anyhow::Result<(Layout, Vec<AgentStatus>)> {
    let layout = existing(dir)?;
    let running = find_agents(&layout);
    let mut asked: Vec<usize> = running.keys().copied().collect();
    asked.sort_unstable();
    let mut answers: HashMap<usize, anyhow::Result<Info>> =
        ask_info(&layout, &asked, ANSWER_TIMEOUT)
            .into_iter()
            .collect();
    let statuses = layout
        .agents
        .iter()
        .enumerate()
        .map(|(i, agent)| {
            let state = match (running.get(&i), answers.remove(&i)) {
                (Some(&pid), Some(Ok(info))) => AgentState::Running {
                    pid,
                    info: Box::new(info),
                },
                (Some(&pid), Some(Err(e))) => AgentState::NotAnswering {
                    pid,
                    error: format!("{e:#}"),
                },
                _ => AgentState::Down,
            };
            AgentStatus {
                agent: agent.clone(),
                state,
            }
        })
        .collect();
    Ok((layout, statuses))
}

/// Clears what the testnet's agents, all stopped, left on the machine:
/// jobs still running in their cgroups, the groups, their sandboxes, and
/// the emulated network's namespaces.
pub fn forget(layout: &Layout) {
    for agent in &layout.agents {
        starling_process::isolation::forget_agent(&agent.id);
    }
    if let Some(net) = &layout.network {
        if let Err(e) = netns::destroy(net) {
            eprintln!("starling testnet: the network's namespaces stay: {e}");
        }
    }
}

/// Stops every agent of the testnet in `dir`: a control `shutdown` to each
/// (SIGTERM when its socket does not answer), up to `timeout` for them to
/// exit, then SIGKILL for the rest and for any other process left in the
/// testnet's process group. Returns once no process of the testnet
/// remains; running it again finds nothing to stop.
pub fn down(
    dir: &Path,
    timeout: Duration,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<DownReport> {
    let mut layout = existing(dir)?;
    let _lock = lock(layout.dir())?;
    let total = layout.agents.len();
    let mut outcome = vec![Stopped::NotRunning; total];
    let mut pids: Vec<Option<i32>> = vec![None; total];
    for (i, pid) in find_agents(&layout) {
        pids[i] = Some(pid);
        outcome[i] = Stopped::Cleanly;
    }
    let running: Vec<usize> = (0..total).filter(|&i| pids[i].is_some()).collect();
    for (i, answer) in ask(&layout, &running, ANSWER_TIMEOUT, &Request::Shutdown) {
        if !matches!(answer, Ok(Response::Done)) {
            // Not answering (or refusing): the agent stops cleanly on
            // SIGTERM too.
            if let Some(pid) = pids[i] {
                procfs::signal(pid, rustix::process::Signal::TERM);
            }
        }
    }

    let still_running = |layout: &Layout, pids: &[Option<i32>]| -> Vec<usize> {
        (0..total)
            .filter(|&i| {
                pids[i].is_some_and(|pid| {
                    procfs::is_agent_of(pid, &layout.agent_dir(&layout.agents[i]))
                })
            })
            .collect()
    };
    let asked = pids.iter().filter(|p| p.is_some()).count();
    let deadline = Instant::now() + timeout;
    let mut pause = POLL_FIRST;
    loop {
        let running = still_running(&layout, &pids);
        progress(Progress::Stopping {
            running: running.len(),
            total: asked,
        });
        if running.is_empty() || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(POLL_MAX);
    }
    let stragglers = still_running(&layout, &pids);
    for &i in &stragglers {
        if let Some(pid) = pids[i] {
            procfs::signal(pid, rustix::process::Signal::KILL);
            outcome[i] = Stopped::Killed;
        }
    }

    // Whatever else is left in the testnet's process group and is the
    // testnet's (by its command line or working directory). The agents are
    // counted above: one just sent SIGKILL can still be listed for a moment
    // before it turns zombie.
    let others: Vec<i32> = layout
        .process_group
        .map_or_else(Vec::new, |g| procfs::group_members(g, layout.dir()))
        .into_iter()
        .filter(|pid| !pids.contains(&Some(*pid)))
        .collect();
    for &pid in &others {
        procfs::signal(pid, rustix::process::Signal::KILL);
    }

    let kill_deadline = Instant::now() + KILL_GRACE;
    loop {
        let left: Vec<String> = still_running(&layout, &pids)
            .into_iter()
            .map(|i| layout.agents[i].name.clone())
            .chain(
                others
                    .iter()
                    .filter(|pid| procfs::is_alive(**pid))
                    .map(|pid| format!("pid {pid}")),
            )
            .collect();
        if left.is_empty() {
            break;
        }
        if Instant::now() >= kill_deadline {
            bail!(
                "still running after SIGKILL: {} (stuck in the kernel?); run down again \
                 once they are gone",
                left.join(", ")
            );
        }
        std::thread::sleep(POLL_MAX / 5);
    }
    for &i in &stragglers {
        // A killed agent cannot remove its own pid file.
        let path = control::pid_path(&layout.agent_dir(&layout.agents[i]));
        if read_pid(&path) == pids[i] {
            let _ = fs::remove_file(path);
        }
    }
    forget(&layout);
    layout.process_group = None;
    layout.save()?;
    if let Some(net) = layout.network.take() {
        netns::destroy(&net)?;
        layout.save()?;
    }
    Ok(DownReport {
        agents: layout
            .agents
            .iter()
            .map(|a| a.name.clone())
            .zip(outcome)
            .collect(),
        others_killed: others.len(),
    })
}

/// The signals [`kill`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGKILL: the agent dies at once, as in a crash.
    Kill,
    /// SIGTERM: the agent stops cleanly.
    Term,
}

/// What [`start`] did.
#[derive(Debug, Clone)]
pub struct StartReport {
    /// The agent's process.
    pub pid: i32,
    /// Its answer to `Info` once it had a peer.
    pub info: Info,
    /// The bootstrap peers written into its `agent.toml` (none when no
    /// other agent was running: the file's are kept).
    pub bootstrap: Vec<String>,
    /// From the start of `start` until the agent answered with a peer.
    pub elapsed: Duration,
}

/// Sends `signal` to agent `name` of the testnet in `dir` and waits up to
/// `timeout` for its process to be gone. With SIGKILL this is a crash:
/// nothing is cleaned up, its jobs, cgroups, sandboxes, pid file and
/// socket are left as they are. Returns the pid it had, or `None` if it
/// was not running.
pub fn kill(
    dir: &Path,
    name: &str,
    signal: Signal,
    timeout: Duration,
) -> anyhow::Result<Option<i32>> {
    let layout = existing(dir)?;
    let _lock = lock(layout.dir())?;
    let i = agent_index(&layout, name)?;
    let Some(&pid) = find_agents(&layout).get(&i) else {
        return Ok(None);
    };
    procfs::signal(
        pid,
        match signal {
            Signal::Kill => rustix::process::Signal::KILL,
            Signal::Term => rustix::process::Signal::TERM,
        },
    );
    let data_dir = layout.agent_dir(&layout.agents[i]);
    let deadline = Instant::now() + timeout;
    let mut pause = POLL_FIRST;
    while procfs::is_agent_of_or_exiting(pid, &data_dir) {
        if Instant::now() >= deadline {
            bail!(
                "{name} (pid {pid}) still runs {} s after the signal; `starling testnet \
                 kill --dir {} {name}` kills it",
                timeout.as_secs(),
                layout.dir().display()
            );
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(POLL_MAX);
    }
    Ok(Some(pid))
}

/// Starts agent `name` of the testnet in `dir` again, after [`kill`] or a
/// crash: `starling agent` on its own data directory and `agent.toml`, in
/// the testnet's process group (or, if every agent of that group is gone,
/// in a new group it leads, which the layout then records). Its bootstrap
/// peers in `agent.toml` are first set to the addresses of up to
/// [`MAX_BOOTSTRAP`] running agents, the rest of the file kept. Returns
/// once it answers and, unless it is the only agent running, has a peer;
/// fails if it is already running, exits, or `timeout` passes.
pub fn start(
    dir: &Path,
    name: &str,
    starling: &Path,
    timeout: Duration,
) -> anyhow::Result<StartReport> {
    let started = Instant::now();
    let deadline = started + timeout;
    let mut layout = existing(dir)?;
    let _lock = lock(layout.dir())?;
    let i = agent_index(&layout, name)?;
    let running = find_agents(&layout);
    if let Some(pid) = running.get(&i) {
        bail!("{name} is running already (pid {pid})");
    }
    let mut others: Vec<usize> = running.keys().copied().collect();
    others.sort_unstable();
    let mut bootstrap = Vec::new();
    for (j, answer) in ask_info(&layout, &others, answer_timeout(deadline)) {
        if bootstrap.len() < MAX_BOOTSTRAP {
            if let Ok(address) = answer.and_then(|info| dial_address(&layout, j, &info)) {
                bootstrap.push(address);
            }
        }
    }
    let agent = layout.agents[i].clone();
    let config = layout.agent_dir(&agent).join(layout::CONFIG_FILE);
    if !bootstrap.is_empty() {
        layout::set_bootstrap(&config, &bootstrap)?;
    }
    let group = layout
        .process_group
        .filter(|&g| !procfs::group_members(g, layout.dir()).is_empty());
    let mut child = spawn(starling, &layout, &agent, &config, group, "start")?;
    let pid = i32::try_from(child.id()).context("a pid beyond i32")?;
    if group.is_none() {
        layout.process_group = Some(pid);
        layout.save()?;
    }
    let log = layout.agent_dir(&agent).join(LOG_FILE);
    let mut pause = POLL_FIRST;
    loop {
        if let Some(status) = child
            .try_wait()
            .with_context(|| format!("waiting for {name}"))?
        {
            bail!(
                "{name} exited ({status}) as it started; the end of {}:\n{}",
                log.display(),
                log_tail(&log)
            );
        }
        let info = ask_info(&layout, &[i], answer_timeout(deadline))
            .pop()
            .and_then(|(_, answer)| answer.ok());
        if let Some(info) = info.filter(|info| others.is_empty() || info.peers >= 1) {
            return Ok(StartReport {
                pid,
                info,
                bootstrap,
                elapsed: started.elapsed(),
            });
        }
        if Instant::now() >= deadline {
            bail!(
                "{name} (pid {pid}) did not answer with a peer within {} s; it is left \
                 running; the end of {}:\n{}",
                timeout.as_secs(),
                log.display(),
                log_tail(&log)
            );
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(POLL_MAX);
    }
}

/// The index of agent `name` in `layout`, or an error naming the agents.
fn agent_index(layout: &Layout, name: &str) -> anyhow::Result<usize> {
    layout
        .agents
        .iter()
        .position(|a| a.name == name)
        .with_context(|| {
            let names: Vec<&str> = layout.agents.iter().map(|a| a.name.as_str()).collect();
            let shown = match names.as_slice() {
                [] => "none".to_owned(),
                [one] => (*one).to_owned(),
                [first, .., last] => format!("{first} to {last}"),
            };
            format!(
                "no agent {name:?} in the testnet in {} (its agents: {shown})",
                layout.dir().display()
            )
        })
}

/// The layout of the testnet in `dir`, which must exist.
fn existing(dir: &Path) -> anyhow::Result<Layout> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("no testnet in {}", dir.display()))?;
    Layout::load(&dir)?.with_context(|| {
        format!(
            "no testnet in {}: it has no {}",
            dir.display(),
            layout::LAYOUT_FILE
        )
    })
}

/// Holds an exclusive lock on the testnet's directory, so that two `up`s or
/// an `up` and a `down` do not interleave. Released when dropped.
fn lock(dir: &Path) -> anyhow::Result<fs::File> {
    let file = fs::File::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(file),
        Err(rustix::io::Errno::WOULDBLOCK) => bail!(
            "another `starling testnet` command is working on {}; wait for it to finish",
            dir.display()
        ),
        Err(e) => Err(e).with_context(|| format!("locking {}", dir.display())),
    }
}

/// Starts one agent, detached, in the process group `group` (a new one
/// led by itself when `None`).
fn spawn(
    starling: &Path,
    layout: &Layout,
    agent: &Agent,
    config: &Path,
    group: Option<i32>,
    why: &str,
) -> anyhow::Result<Child> {
    let dir = layout.agent_dir(agent);
    let log_path = dir.join(LOG_FILE);
    let mut log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log_path)
        .with_context(|| format!("opening {}", log_path.display()))?;
    // Logs are appended across runs; a marker shows where each run starts.
    writeln!(
        log,
        "==== starling testnet {why}: {} starts at {} ====",
        agent.name,
        Timestamp::now()
    )
    .with_context(|| format!("writing {}", log_path.display()))?;
    let errors = log
        .try_clone()
        .with_context(|| format!("opening {}", log_path.display()))?;
    let i = agent_index(layout, &agent.name)?;
    let mut command = match &layout.network {
        Some(net) => netns::command_in(net, i, starling)?,
        None => Command::new(starling),
    };
    command
        .arg("agent")
        .arg("--data-dir")
        .arg(&dir)
        .arg("--config")
        .arg(config)
        .current_dir(&dir)
        // Its output goes to a file: no terminal colour codes.
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(errors)
        .process_group(group.unwrap_or(0))
        .spawn()
        .with_context(|| match group {
            Some(g) => format!(
                "starting {} ({} agent) in the testnet's process group {g}",
                agent.name,
                starling.display()
            ),
            None => format!("starting {} ({} agent)", agent.name, starling.display()),
        })
}

/// Waits until every agent of `wave` answers `Info`, failing at once if one
/// of them exits.
fn wait_answering(
    layout: &Layout,
    wave: &[usize],
    children: &mut [Option<Child>],
    infos: &mut [Option<Info>],
    deadline: Instant,
    timeout: Duration,
) -> anyhow::Result<()> {
    let mut pause = POLL_FIRST;
    loop {
        let pending: Vec<usize> = wave
            .iter()
            .copied()
            .filter(|&i| infos[i].is_none())
            .collect();
        for &i in &pending {
            check_alive(layout, i, children)?;
        }
        let mut waiting = Vec::new();
        for (i, answer) in ask_info(layout, &pending, answer_timeout(deadline)) {
            match answer {
                Ok(info) => infos[i] = Some(info),
                Err(e) => waiting.push((i, e)),
            }
        }
        if waiting.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let lines: Vec<String> = waiting
                .iter()
                .map(|(i, e)| {
                    let agent = &layout.agents[*i];
                    format!(
                        "  {}: not answering on its control socket ({e:#}); see {}",
                        agent.name,
                        layout.agent_dir(agent).join(LOG_FILE).display()
                    )
                })
                .collect();
            bail!(
                "the testnet did not come up within {} s:\n{}\n{}",
                timeout.as_secs(),
                lines.join("\n"),
                left_running(layout)
            );
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(POLL_MAX);
    }
}

/// Fails if agent `i`, started by this `up`, has exited.
fn check_alive(layout: &Layout, i: usize, children: &mut [Option<Child>]) -> anyhow::Result<()> {
    let Some(child) = children[i].as_mut() else {
        return Ok(());
    };
    let status = child
        .try_wait()
        .with_context(|| format!("waiting for {}", layout.agents[i].name))?;
    if let Some(status) = status {
        let agent = &layout.agents[i];
        let log = layout.agent_dir(agent).join(LOG_FILE);
        let others = children.iter().filter(|c| c.is_some()).count() - 1;
        bail!(
            "{} exited ({status}) during `testnet up`; the end of {}:\n{}{}",
            agent.name,
            log.display(),
            log_tail(&log),
            if others > 0 {
                format!("\n{}", left_running(layout))
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

fn left_running(layout: &Layout) -> String {
    format!(
        "The agents that started are left running: `starling testnet status --dir {0}` \
         shows them, `starling testnet down --dir {0}` stops them.",
        layout.dir().display()
    )
}

/// The error for agents that answer but have not joined by the deadline.
fn not_joined(
    layout: &Layout,
    done: &[bool],
    infos: &[Option<Info>],
    expected: &[usize],
    timeout: Duration,
) -> String {
    let total = layout.agents.len();
    let lines: Vec<String> = (0..total)
        .filter(|&i| !done[i])
        .map(|i| {
            let agent = &layout.agents[i];
            let seen = match &infos[i] {
                Some(info) => format!(
                    "sees {} of {} machine ads and {} peers",
                    machine_ads(info),
                    expected[i],
                    info.peers
                ),
                None => "does not answer".to_owned(),
            };
            format!(
                "  {}: {seen}; see {}",
                agent.name,
                layout.agent_dir(agent).join(LOG_FILE).display()
            )
        })
        .collect();
    format!(
        "{} of {total} agents did not join within {} s (an agent has joined when it sees \
         every machine ad shown to it):\n{}\n{}",
        lines.len(),
        timeout.as_secs(),
        lines.join("\n"),
        left_running(layout)
    )
}

/// The last lines of a log file, indented.
fn log_tail(path: &Path) -> String {
    let text = match fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => return format!("    (cannot read it: {e})"),
    };
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..]
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asks the agent whose data directory is `data_dir` for its `Info`,
/// waiting at most `timeout` for the answer.
pub fn agent_info(data_dir: &Path, timeout: Duration) -> anyhow::Result<Info> {
    match request(data_dir, timeout, &Request::Info)? {
        Response::Info(info) => Ok(info),
        Response::Error { message } => bail!("the agent refused: {message}"),
        other => bail!("the agent answered {other:?} to info"),
    }
}

fn request(data_dir: &Path, timeout: Duration, request: &Request) -> anyhow::Result<Response> {
    let mut client = Client::connect(data_dir)
        .with_context(|| format!("connecting to {}", control::socket_path(data_dir).display()))?;
    client.set_read_timeout(timeout);
    client.request(request).context("waiting for its answer")
}

/// Asks the agents `which` (indices into the layout) for their `Info`, all
/// at once.
fn ask_info(
    layout: &Layout,
    which: &[usize],
    timeout: Duration,
) -> Vec<(usize, anyhow::Result<Info>)> {
    ask(layout, which, timeout, &Request::Info)
        .into_iter()
        .map(|(i, answer)| {
            let info = answer.and_then(|response| match response {
                Response::Info(info) => Ok(info),
                Response::Error { message } => bail!("the agent refused: {message}"),
                other => bail!("the agent answered {other:?} to info"),
            });
            (i, info)
        })
        .collect()
}

/// Sends `what` to the agents `which`, up to [`MAX_ASKING`] at a time, each
/// on its own thread with its own timeout; returns their answers in the
/// order of `which`.
fn ask(
    layout: &Layout,
    which: &[usize],
    timeout: Duration,
    what: &Request,
) -> Vec<(usize, anyhow::Result<Response>)> {
    let mut answers = Vec::with_capacity(which.len());
    for chunk in which.chunks(MAX_ASKING) {
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|&i| {
                    let dir = layout.agent_dir(&layout.agents[i]);
                    (i, scope.spawn(move || request(&dir, timeout, what)))
                })
                .collect();
            for (i, handle) in handles {
                let answer = handle
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("asking it panicked")));
                answers.push((i, answer));
            }
        });
    }
    answers
}

/// How long one answer may take when everything must be done by
/// `deadline`: [`ANSWER_TIMEOUT`], or what is left if less (but not zero,
/// which would mean no timeout at all to a socket).
fn answer_timeout(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .clamp(Duration::from_millis(100), ANSWER_TIMEOUT)
}

/// The running agents of `layout`, by index: see [`procfs::find_agents`].
fn find_agents(layout: &Layout) -> HashMap<usize, i32> {
    let dirs: Vec<PathBuf> = layout.agents.iter().map(|a| layout.agent_dir(a)).collect();
    procfs::find_agents(&dirs)
}

/// The address agent `i` listens on: loopback, or its namespace's.
fn listen_ip(layout: &Layout, i: usize) -> String {
    match &layout.network {
        Some(net) => net.listen_address(i % layout.domains.len().max(1), i),
        None => "127.0.0.1".to_owned(),
    }
}

/// The address to dial an agent at: its listen address on loopback (or in
/// its namespace), which ends in `/p2p/<id>`.
fn dial_address(layout: &Layout, i: usize, info: &Info) -> anyhow::Result<String> {
    let agent = &layout.agents[i];
    let ours = format!("/ip4/{}/", listen_ip(layout, i));
    let usable: Vec<&String> = info.listen.iter().filter(|a| a.contains("/p2p/")).collect();
    usable
        .iter()
        .find(|a| a.starts_with(&ours))
        .or(usable.first())
        .map(|a| (*a).clone())
        .with_context(|| {
            format!(
                "{} reports no address to dial (listen: {:?})",
                agent.name, info.listen
            )
        })
}

/// The bootstrap peers of agent `i`: the first agent, then its ancestors in
/// a binary tree over the agents (`(i - 1) / 2`, and so on), among those
/// whose address is known, at most [`MAX_BOOTSTRAP`] in all.
fn bootstrap_peers(i: usize, addresses: &[Option<String>]) -> Vec<String> {
    if i == 0 {
        return Vec::new();
    }
    let mut peers: Vec<usize> = vec![0];
    let mut j = i;
    while j > 0 && peers.len() < MAX_BOOTSTRAP {
        j = (j - 1) / 2;
        if j > 0 && addresses[j].is_some() {
            peers.push(j);
        }
    }
    peers
        .into_iter()
        .filter_map(|j| addresses[j].clone())
        .collect()
}

/// Fails, naming the port, if a port `up` would listen on is taken.
fn check_ports_free(base: u16, count: usize) -> anyhow::Result<()> {
    for i in 0..count {
        let port = u16::try_from(u32::from(base) + i as u32).context("port out of range")?;
        if let Err(e) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            bail!(
                "port {port} on 127.0.0.1 is not free ({e}); choose another --base-port, or \
                 leave it out to let the system pick ports"
            );
        }
    }
    Ok(())
}

fn read_pid(path: &Path) -> Option<i32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_peers_are_the_first_agent_and_known_ancestors() {
        let known = |n: usize, up_to: usize| -> Vec<Option<String>> {
            (0..n)
                .map(|i| (i < up_to).then(|| format!("a{i}")))
                .collect()
        };
        assert!(bootstrap_peers(0, &known(10, 1)).is_empty());
        // The first wave only knows agent 0.
        for i in 1..9 {
            assert_eq!(bootstrap_peers(i, &known(50, 1)), ["a0"], "agent {i}");
        }
        // Later agents also dial their ancestors: 20 -> 9 -> 4 -> 1 -> 0.
        assert_eq!(bootstrap_peers(20, &known(50, 17)), ["a0", "a9", "a4"]);
        assert_eq!(bootstrap_peers(10, &known(50, 9)), ["a0", "a4", "a1"]);
        // Unknown ancestors are skipped.
        assert_eq!(bootstrap_peers(20, &known(50, 5)), ["a0", "a4", "a1"]);
        // No agent but the first is everyone's peer.
        let all = known(50, 50);
        let mut uses = vec![0; 50];
        for i in 1..50 {
            for p in bootstrap_peers(i, &all) {
                uses[p[1..].parse::<usize>().unwrap()] += 1;
            }
        }
        assert_eq!(uses[0], 49);
        assert!(uses[1..].iter().all(|&n| n <= 12), "{uses:?}");
    }

    fn info(peers: usize, machines: usize) -> Info {
        Info {
            agent_id: "12D3KooWtest".to_owned(),
            domain: "d0.testnet".to_owned(),
            version: "0".to_owned(),
            pid: 1,
            data_dir: PathBuf::from("/x"),
            listen: vec![
                "/ip4/192.0.2.1/tcp/4001/p2p/12D3KooWtest".to_owned(),
                "/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWtest".to_owned(),
                "/ip4/127.0.0.1/tcp/4001".to_owned(),
            ],
            peers,
            ads: [
                ("Machine".to_owned(), machines),
                ("Submitter".to_owned(), 9),
            ]
            .into_iter()
            .collect(),
            started_ms: 0,
            bytes_received: 0,
            bytes_sent: 0,
            reachability: String::new(),
        }
    }

    #[test]
    fn an_agent_waits_only_for_the_ads_shown_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let layout = layout::Layout::plan(dir.path(), 5, 2).unwrap();
        let export = |from: &str, to: &str, e: Option<&str>| layout::DomainTerms {
            domain: from.to_owned(),
            trusts: to.to_owned(),
            export: e.map(str::to_owned),
            ..Default::default()
        };
        // d0: agents 0, 2, 4; d1: agents 1, 3.
        assert_eq!(expected_ads(&layout, &[]), [5; 5]);
        let terms = [
            export("d1.testnet", "d0.testnet", Some("false")),
            export("d0.testnet", "d1.testnet", None),
        ];
        assert_eq!(expected_ads(&layout, &terms), [3, 5, 3, 5, 3]);
    }

    #[test]
    fn joined_means_every_machine_ad_and_a_peer() {
        assert!(joined(&info(1, 5), 5, 5));
        assert!(!joined(&info(1, 4), 5, 5), "one ad short");
        assert!(!joined(&info(0, 5), 5, 5), "no peer");
        assert!(joined(&info(0, 1), 1, 1), "a testnet of one has no peers");
        assert!(joined(&info(1, 4), 4, 5), "one ad not exported to it");
        assert_eq!(machine_ads(&info(0, 3)), 3, "submitter ads do not count");
    }

    #[test]
    fn the_dial_address_is_on_loopback_with_the_peer_id() {
        let mut layout = Layout::plan(Path::new("/tmp/t"), 1, 1).unwrap();
        assert_eq!(
            dial_address(&layout, 0, &info(0, 0)).unwrap(),
            "/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWtest"
        );
        let mut bare = info(0, 0);
        bare.listen = vec!["/ip4/127.0.0.1/tcp/4001".to_owned()];
        let err = dial_address(&layout, 0, &bare).unwrap_err().to_string();
        assert!(err.contains("agent-00 reports no address to dial"), "{err}");
        // In its own namespace: its namespace's address.
        layout.network = Some(netns::Network::for_dir(
            Path::new("/tmp/t"),
            netns::Rates::default(),
        ));
        let mut both = info(0, 0);
        both.listen
            .push("/ip4/10.0.1.10/tcp/4001/p2p/12D3KooWtest".to_owned());
        assert_eq!(
            dial_address(&layout, 0, &both).unwrap(),
            "/ip4/10.0.1.10/tcp/4001/p2p/12D3KooWtest"
        );
    }
}
