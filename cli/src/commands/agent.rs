//! `starling agent`: runs the agent in the foreground until SIGINT, SIGTERM
//! or a control `shutdown` request, then stops cleanly (exit 0). SIGHUP
//! reads the configuration again and puts in force what can be without a
//! restart (the machine's owner policy and attributes, the domain's
//! policy), leaving claims and jobs alone, and logs what waits for one.

mod memory;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use starling_protocol::identity::Timestamp;
use starling_storage::space::Guarded;
use starling_storage::{DataDir, Store};
use tracing::Instrument as _;

use starling_agent::config::{Config, Overrides};
use starling_agent::{network::Transport, trust, Agent, Setup, Stopped};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The configuration file (TOML; see examples/agent.toml). Default:
    /// /etc/starling/agent.toml as root, else ~/.config/starling/agent.toml,
    /// when it exists; without one, every setting has its default.
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
    /// Listen on this multiaddress instead of network.listen (repeatable).
    #[arg(long, value_name = "MULTIADDR")]
    listen: Vec<String>,
    /// Bootstrap from this peer (`/ip4/…/tcp/…/p2p/<agent id>`) instead of
    /// network.bootstrap (repeatable).
    #[arg(long, value_name = "MULTIADDR")]
    bootstrap: Vec<String>,
}

pub(crate) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let source = Source {
        file: starling_agent::config::locate(args.config.as_deref()),
        overrides: Overrides {
            data_dir: data_dir.map(Path::to_path_buf),
            listen: (!args.listen.is_empty()).then_some(args.listen),
            bootstrap: (!args.bootstrap.is_empty()).then_some(args.bootstrap),
        },
    };
    let config = source.read()?;
    init_tracing();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("starling")
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run_agent(config, source))
}

/// Where the agent's configuration comes from: the file (read again on
/// SIGHUP) and the command line's flags, which win over it.
#[derive(Debug, Clone)]
struct Source {
    file: Option<PathBuf>,
    overrides: Overrides,
}

impl Source {
    fn read(&self) -> anyhow::Result<Config> {
        let mut config = Config::load(self.file.as_deref())?;
        config.apply(self.overrides.clone())?;
        Ok(config)
    }
}

/// Raises the soft limit on open files to the hard one: a job's input is
/// held open while it runs, and each connection is a descriptor.
fn raise_open_files_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if let Err(e) = setrlimit(Resource::Nofile, raised) {
            tracing::debug!(error = %e, "could not raise the open files limit");
        }
    }
}

/// The first directory above `dir` that other users cannot pass through
/// (no `x` for others), if any.
fn closed_ancestor(dir: &std::path::Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::fs::canonicalize(dir).ok()?;
    dir.ancestors()
        .skip(1)
        .find(|a| std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 == 0))
        .map(std::path::Path::to_path_buf)
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A second initialisation (tests in one process) keeps the first.
    // Colours only for a person at a terminal: a log file (a testnet's
    // agent.log, a service's journal) gets plain text.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

async fn run_agent(config: Config, source: Source) -> anyhow::Result<ExitCode> {
    raise_open_files_limit();
    let dir = config.data_dir()?;
    let data = DataDir::open(&dir)?;
    if rustix::process::geteuid().is_root() {
        // Every local user may use a root agent's control socket.
        data.open_to_local_users()?;
        if let Some(closed) = closed_ancestor(&dir) {
            tracing::warn!(
                data_dir = %dir.display(),
                closed = %closed.display(),
                "local users cannot reach the control socket: a directory on the way is not \
                 searchable by others (use a data directory such as /var/lib/starling)"
            );
        }
    }
    // Held until the agent exits; it keeps a second agent out of this
    // directory and tells `testnet down` whom to signal.
    let _pid = starling_control::PidFile::acquire(&dir)?;
    let key = data.agent_key()?;
    let trust = trust::load(&data, &key, Timestamp::now())?;
    let store_path = data.store_path();
    // The reserve that lets the agent live through a full disk lies on
    // the store's filesystem, beside it.
    let reserve = dir.join(RESERVE_FILE);
    let disk = Arc::new(
        match tokio::task::spawn_blocking(move || Guarded::open(store_path, reserve)).await? {
            Ok(store) => store,
            // What is damaged, and what to run.
            Err(starling_storage::Error::Damaged { path, damage }) => {
                anyhow::bail!(
                    "the store at {} is damaged:\n{}\n{}",
                    path.display(),
                    damage
                        .problems()
                        .iter()
                        .map(|p| format!("  {p}\n"))
                        .collect::<String>()
                        .trim_end(),
                    super::store::damaged_hint(&dir)
                )
            }
            Err(e) => {
                return Err(e).with_context(|| format!("opening the store in {}", dir.display()))
            }
        },
    );
    let span = tracing::info_span!("agent", id = %key.agent_id().short());
    serve(key, trust, (config, source), dir, disk)
        .instrument(span)
        .await
}

/// SIGHUP: reads the configuration again and puts in force what can be
/// without a restart (HTCondor's `condor_reconfig`); a file that does not
/// read is reported and the configuration in force kept.
async fn reload(agent: &Agent, source: &Source) {
    let file = source.file.as_ref().map_or_else(
        || "no file, the defaults".to_owned(),
        |f| f.display().to_string(),
    );
    let config = match tokio::task::spawn_blocking({
        let source = source.clone();
        move || source.read()
    })
    .await
    {
        Ok(Ok(config)) => config,
        Ok(Err(e)) => {
            tracing::warn!(%file, error = %format!("{e:#}"), "SIGHUP: the configuration does not read; the one in force is kept");
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "SIGHUP: reading the configuration failed");
            return;
        }
    };
    let said = agent.reload(config).await;
    if said.is_empty() {
        tracing::info!(%file, "SIGHUP: configuration read again; nothing changed");
    }
    for line in said {
        tracing::info!(%file, "SIGHUP: {line}");
    }
}

/// The reserve file in the data directory ([`Guarded`]).
const RESERVE_FILE: &str = "disk-reserve";

async fn serve(
    key: starling_protocol::identity::Keypair,
    trust: trust::Trust,
    (config, source): (Config, Source),
    dir: PathBuf,
    disk: Arc<Guarded>,
) -> anyhow::Result<ExitCode> {
    let store: Arc<dyn Store> = disk.clone();
    tracing::info!(
        agent = %key.agent_id(),
        domain = %trust.domain,
        data_dir = %dir.display(),
        "starting"
    );
    let mut agent = Agent::start(Setup {
        key,
        trust,
        config,
        data_dir: Some(dir.clone()),
        store,
        disk: Some(disk),
        transport: Transport::Tcp,
        control: true,
        probe: None,
    })
    .await?;
    // Where other machines join this one (`--bootstrap ADDR`), once it
    // listens: printed for the person who starts it, as `whoami` does.
    for _ in 0..40 {
        let addrs = agent.listen_addrs().await;
        if !addrs.is_empty() {
            for addr in addrs {
                tracing::info!(%addr, "listening; other agents join with --bootstrap {addr}");
            }
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("listening for SIGTERM")?;
    // Owned here and aborted on the way out, with the agent.
    let trim = tokio::spawn(memory::trim_periodically());
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .context("listening for SIGHUP")?;
    let outcome = loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break Stopped::Requested,
            _ = terminate.recv() => break Stopped::Requested,
            stopped = agent.stopped() => break stopped,
            _ = hangup.recv() => reload(&agent, &source).await,
        }
    };
    tracing::info!("stopping");
    trim.abort();
    agent.shutdown().await;
    match outcome {
        Stopped::Requested => {
            tracing::info!("stopped");
            Ok(ExitCode::SUCCESS)
        }
        Stopped::Failed(why) => anyhow::bail!("the agent failed: {why}"),
    }
}
