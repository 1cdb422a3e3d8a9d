//! `starling testnet up | status | down | kill | start`: many agents on this
//! machine, in several domains, as real processes on loopback; one of them
//! killed as a crash would and started again, for chaos tests.
//!
//! Arguments and output only; the work is `starling_testnet`'s.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::commands::progress;
use anyhow::Context as _;
use clap::{ArgMatches, FromArgMatches as _, Subcommand as _};
use starling_testnet::processes::{self, AgentState, Progress, Stopped};
use starling_testnet::{AgentSettings, UpOptions};

/// The `testnet` subcommand, for `crate::commands::main_with`.
pub(crate) struct Testnet;

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Make a testnet in DIR (domain keys, agents, certificates, trust
    /// policies) and start its agents; returns once every agent sees every
    /// machine ad.
    Up(UpArgs),
    /// One row per agent: id, domain, pid, whether it runs, its peers and
    /// the machine ads it sees. Exits 1 if an agent is down or not answering.
    Status {
        /// The testnet's directory.
        #[arg(long)]
        dir: PathBuf,
    },
    /// Stop every agent of the testnet (a clean shutdown, SIGKILL for those
    /// that do not stop in time). Running it again is harmless.
    Down {
        /// The testnet's directory.
        #[arg(long)]
        dir: PathBuf,
        /// Seconds to wait for the agents to stop before killing them.
        #[arg(long, default_value_t = processes::DEFAULT_DOWN_TIMEOUT.as_secs())]
        timeout: u64,
    },
    /// Kill one agent as a crash would (SIGKILL by default): nothing is
    /// cleaned up, its jobs, pid file and socket are left as they are.
    /// Returns once its process is gone; an agent not running is no error.
    Kill {
        /// The testnet's directory.
        #[arg(long)]
        dir: PathBuf,
        /// The agent (agent-00, agent-01, ...).
        name: String,
        /// The signal: KILL (a crash) or TERM (a clean stop).
        #[arg(long, value_enum, default_value_t = Signal::Kill, ignore_case = true)]
        signal: Signal,
        /// Seconds to wait for its process to be gone.
        #[arg(long, value_name = "SECS", default_value_t = processes::DEFAULT_DOWN_TIMEOUT.as_secs())]
        timeout: u64,
    },
    /// Start one stopped or killed agent again with its data directory and
    /// agent.toml, its bootstrap peers first set to agents still running
    /// (it may listen on a new port). Returns once it answers with a peer.
    Start {
        /// The testnet's directory.
        #[arg(long)]
        dir: PathBuf,
        /// The agent (agent-00, agent-01, ...).
        name: String,
        /// Seconds to wait for it to answer with a peer.
        #[arg(long, value_name = "SECS", default_value_t = processes::DEFAULT_UP_TIMEOUT.as_secs())]
        timeout: u64,
    },
}

/// The signals `testnet kill` sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Signal {
    /// SIGKILL: the agent dies at once, as in a crash.
    Kill,
    /// SIGTERM: the agent stops cleanly.
    Term,
}

#[derive(Debug, clap::Args)]
struct UpArgs {
    /// The testnet's directory: new, empty, or one that held a testnet of the
    /// same shape (its keys and agent ids are kept).
    #[arg(long)]
    dir: PathBuf,
    /// How many agents.
    #[arg(long)]
    agents: usize,
    /// How many domains (d0.testnet, d1.testnet, ...); agents are dealt to
    /// them in turn, and each domain's policy trusts every other.
    #[arg(long, default_value_t = 1)]
    domains: usize,
    /// Agent i listens on 127.0.0.1 port P+i. Default: ports the system picks.
    #[arg(long, value_name = "P")]
    base_port: Option<u16>,
    /// Seconds between republications of each agent's machine ad (default:
    /// the agent's own).
    #[arg(long, value_name = "SECS")]
    refresh_secs: Option<u64>,
    /// Seconds each machine ad stays valid (default: the agent's own).
    #[arg(long, value_name = "SECS")]
    lifetime_secs: Option<u64>,
    /// Sets `[jobs] KEY` in every agent's configuration (how jobs are
    /// isolated: `cgroups=off`, `private_tmp=false`, ...); VALUE is TOML,
    /// a bare word a string. Repeat for more keys.
    #[arg(long = "jobs", value_name = "KEY=VALUE", value_parser = starling_testnet::layout::parse_jobs_setting)]
    jobs: Vec<(String, toml::Value)>,
    /// Sets `[store] KEY` in every agent's configuration (the disk lent to
    /// checkpoints: `lend_mib=64`, `lease_secs=120`, ...), as `--jobs`.
    #[arg(long = "store", value_name = "KEY=VALUE", value_parser = starling_testnet::layout::parse_jobs_setting)]
    store: Vec<(String, toml::Value)>,
    /// Sets `[links] KEY` in every agent's configuration (how bulk
    /// transfers reserve their path: `horizon_secs=5`, `strategy=first-fit`,
    /// ...), as `--jobs`; `--host-mbps` and `--uplink-mbps` set the rates.
    #[arg(long = "links", value_name = "KEY=VALUE", value_parser = starling_testnet::layout::parse_jobs_setting)]
    links: Vec<(String, toml::Value)>,
    /// Seconds to wait for every agent to join before giving up.
    #[arg(long, value_name = "SECS", default_value_t = processes::DEFAULT_UP_TIMEOUT.as_secs())]
    timeout: u64,
    /// Run each agent in a network namespace of its own (as root): a router
    /// namespace per domain, a core between domains, veth links; `down`
    /// removes them all.
    #[arg(long)]
    netns: bool,
    /// Fake GPUs each agent declares (`[[gpus.device]]`), for GPU
    /// scheduling without hardware (default: none, and no discovery: the
    /// agents share this host's devices).
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(starling_testnet::layout::MAX_FAKE_GPUS)))]
    gpus: u32,
    /// The processors each agent offers (`[machine] cpus`, HTCondor's
    /// NUM_CPUS; default: the host's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    cpus: Option<u32>,
    /// With --netns: each agent's host link, both ways, in Mbit/s
    /// (default: unshaped).
    #[arg(long, value_name = "MBPS", requires = "netns")]
    host_mbps: Option<u32>,
    /// With --netns: each domain's uplink to the others, both ways, in
    /// Mbit/s (default: unshaped).
    #[arg(long, value_name = "MBPS", requires = "netns")]
    uplink_mbps: Option<u32>,
    /// With --netns: each domain behind a NAT (nftables masquerade; its
    /// agents cannot be dialled from outside), and the first agent a relay
    /// with a public address on the core, which every other agent listens
    /// through (`network.relays`).
    #[arg(long, requires = "netns")]
    nat: bool,
    /// The terms each domain's policy gives another: a TOML file of
    /// `[[terms]]` tables with `domain`, `trusts` and any of `accept`,
    /// `max_slots`, `max_fraction`, `priority_factor`, `export`,
    /// `export_slots`, `store_mib` (as `starling domain policy` takes them).
    #[arg(long, value_name = "FILE")]
    terms: Option<PathBuf>,
}

impl crate::commands::Extension for Testnet {
    fn command(&self) -> clap::Command {
        Command::augment_subcommands(
            clap::Command::new("testnet")
                .about("Many agents on this machine, in several domains: start, inspect, stop.")
                .subcommand_required(true),
        )
    }

    fn run(&self, matches: &ArgMatches, _data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
        match Command::from_arg_matches(matches)? {
            Command::Up(args) => up(args),
            Command::Status { dir } => status(&dir),
            Command::Down { dir, timeout } => down(&dir, Duration::from_secs(timeout)),
            Command::Kill {
                dir,
                name,
                signal,
                timeout,
            } => kill(&dir, &name, signal, Duration::from_secs(timeout)),
            Command::Start { dir, name, timeout } => {
                start(&dir, &name, Duration::from_secs(timeout))
            }
        }
    }
}

fn up(args: UpArgs) -> anyhow::Result<ExitCode> {
    let starling = std::env::current_exe().context("finding the starling binary to run")?;
    let terms = match &args.terms {
        Some(path) => starling_testnet::layout::read_terms(path)?,
        None => Vec::new(),
    };
    let options = UpOptions {
        terms,
        domains: args.domains,
        base_port: args.base_port,
        settings: AgentSettings {
            refresh_secs: args.refresh_secs,
            lifetime_secs: args.lifetime_secs,
            jobs: args.jobs.into_iter().collect(),
            store: args.store.into_iter().collect(),
            links: Default::default(),
            link_settings: args.links.into_iter().collect(),
            gpus: args.gpus,
            cpus: args.cpus,
        },
        timeout: Duration::from_secs(args.timeout),
        netns: args.netns.then_some(starling_testnet::netns::Rates {
            host_mbps: args.host_mbps,
            uplink_mbps: args.uplink_mbps,
        }),
        nat: args.nat,
        ..UpOptions::new(&args.dir, args.agents, starling)
    };
    // Progress on a terminal only: one bar, first of agents answering,
    // then of agents that see the whole pool.
    let bar = progress::bar(0);
    let mut show = |p: Progress| match p {
        Progress::Prepared { agents, domains } => {
            bar.set_length(agents as u64);
            bar.set_message(format!("agents of {domains} domains started"));
        }
        Progress::Answering {
            answering, total, ..
        } => {
            bar.set_length(total as u64);
            bar.set_position(answering as u64);
            bar.set_message("agents answering");
        }
        Progress::Joining { joined, total } => {
            bar.set_length(total as u64);
            bar.set_position(joined as u64);
            bar.set_message("agents see every machine ad");
        }
        _ => {}
    };
    let report = starling_testnet::up(&options, &mut show);
    bar.finish_and_clear();
    let report = report?;
    let layout = &report.layout;
    let dir = layout.dir().display();
    say!(
        "testnet up: {} agents in {} domains, joined in {:.1} s",
        layout.agents.len(),
        layout.domains.len(),
        report.elapsed.as_secs_f64()
    );
    say!("  dir      {dir}");
    let domains: Vec<String> = layout
        .domains
        .iter()
        .map(|d| format!("{d} ({} agents)", layout.agents_of(d).count()))
        .collect();
    say!("  domains  {}", domains.join(", "));
    if let Some(net) = &layout.network {
        let rate = |r: Option<u32>| r.map_or("unshaped".to_owned(), |m| format!("{m} Mbit/s"));
        say!(
            "  network  namespaces {}-*, host links {}, uplinks {}",
            net.prefix,
            rate(net.rates.host_mbps),
            rate(net.rates.uplink_mbps)
        );
    }
    if let (Some(first), Some(info)) = (layout.agents.first(), report.infos.first()) {
        say!(
            "  {}  {} at {}",
            first.name,
            info.agent_id,
            info.listen.first().map_or("?", String::as_str)
        );
    }
    let first = layout
        .agents
        .first()
        .map_or_else(|| "agent-00".to_owned(), |a| a.name.clone());
    say!("Ask one agent:  starling status --agent {dir}/{first}");
    say!("Every agent:    starling testnet status --dir {dir}");
    say!("Stop them:      starling testnet down --dir {dir}");
    Ok(ExitCode::SUCCESS)
}

fn status(dir: &Path) -> anyhow::Result<ExitCode> {
    let (layout, statuses) = starling_testnet::status(dir)?;
    let total = layout.agents.len();
    let mut rows = vec![[
        "AGENT", "ID", "DOMAIN", "PID", "STATE", "PEERS", "ADS", "LISTEN", "REACH",
    ]
    .map(str::to_owned)];
    let (mut running, mut silent, mut down) = (0, 0, 0);
    let mut notes = Vec::new();
    for s in &statuses {
        let short = s.agent.id[s.agent.id.len().saturating_sub(8)..].to_owned();
        let pid = s
            .state
            .pid()
            .map_or_else(|| "-".to_owned(), |p| p.to_string());
        let (state, peers, ads, reach, listen) = match &s.state {
            AgentState::Running { info, .. } => {
                running += 1;
                (
                    "running".to_owned(),
                    info.peers.to_string(),
                    format!("{}/{total}", processes::machine_ads(info)),
                    reach(&info.reachability),
                    listen_address(&info.listen),
                )
            }
            AgentState::NotAnswering { error, .. } => {
                silent += 1;
                notes.push(format!("{}: {error}", s.agent.name));
                ("no answer".to_owned(), dash(), dash(), dash(), dash())
            }
            _ => {
                down += 1;
                ("down".to_owned(), dash(), dash(), dash(), dash())
            }
        };
        rows.push([
            s.agent.name.clone(),
            short,
            s.agent.domain.clone(),
            pid,
            state,
            peers,
            ads,
            listen,
            reach,
        ]);
    }
    print_table(&rows);
    for note in notes {
        say!("{note}");
    }
    say!(
        "{total} agents: {running} running, {silent} not answering, {down} down ({})",
        layout.dir().display()
    );
    Ok(if running == total {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn down(dir: &Path, timeout: Duration) -> anyhow::Result<ExitCode> {
    let bar = progress::bar(0);
    let mut show = |p: Progress| {
        if let Progress::Stopping { running, total } = p {
            bar.set_length(total as u64);
            bar.set_position(total.saturating_sub(running) as u64);
            bar.set_message("agents stopped");
        }
    };
    let report = starling_testnet::down(dir, timeout, &mut show);
    bar.finish_and_clear();
    let report = report?;
    let count = |what: Stopped| report.agents.iter().filter(|(_, s)| *s == what).count();
    for (name, how) in &report.agents {
        if *how == Stopped::Killed {
            say!(
                "{name}: killed: it did not stop within {} s (see its agent.log)",
                timeout.as_secs()
            );
        }
    }
    say!(
        "testnet down: {} stopped, {} killed, {} were not running{}; no agent of {} runs",
        count(Stopped::Cleanly),
        count(Stopped::Killed),
        count(Stopped::NotRunning),
        match report.others_killed {
            0 => String::new(),
            n => format!(", {n} other processes of the testnet killed"),
        },
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn kill(dir: &Path, name: &str, signal: Signal, timeout: Duration) -> anyhow::Result<ExitCode> {
    let (sig, word) = match signal {
        Signal::Kill => (starling_testnet::Signal::Kill, "killed"),
        Signal::Term => (starling_testnet::Signal::Term, "stopped"),
    };
    match starling_testnet::kill(dir, name, sig, timeout)? {
        Some(pid) => say!("{name}: {word} (pid {pid})"),
        None => say!("{name}: was not running"),
    }
    Ok(ExitCode::SUCCESS)
}

fn start(dir: &Path, name: &str, timeout: Duration) -> anyhow::Result<ExitCode> {
    let starling = std::env::current_exe().context("finding the starling binary to run")?;
    let report = starling_testnet::start(dir, name, &starling, timeout)?;
    say!(
        "{name}: started (pid {}) at {}, {} peers, in {:.1} s",
        report.pid,
        listen_address(&report.info.listen),
        report.info.peers,
        report.elapsed.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn dash() -> String {
    "-".to_owned()
}

/// AutoNAT's verdict in a word: `public`, `private` or `unknown` (the
/// address a public agent was reached at is among its listen addresses).
fn reach(reachability: &str) -> String {
    match reachability.split_whitespace().next() {
        Some(word) => word.to_owned(),
        None => dash(),
    }
}

/// The first listen address, without the `/p2p/<id>` the ID column shows.
fn listen_address(listen: &[String]) -> String {
    listen.first().map_or_else(dash, |a| match a.find("/p2p/") {
        Some(at) => a[..at].to_owned(),
        None => a.clone(),
    })
}

/// Prints rows in left-aligned columns; the last column is not padded.
fn print_table<const N: usize>(rows: &[[String; N]]) {
    let mut widths = [0; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        say!("{}", line.trim_end());
    }
}
