//! Many full agents inside one process, over libp2p's memory transport.
//!
//! Each agent is the real thing ([`starling_agent::Agent`]: its
//! actors, its swarm with noise and yamux, gossipsub, Kademlia, the view
//! pull) with two substitutions that make hundreds fit in one process: the
//! transport is `/memory/N` instead of TCP, and the store is
//! [`MemoryStore`] instead of sled. One machine probe is shared by all.
//! Large measurements may also drop noise ([`Options::plaintext`]).
//!
//! Everything is derived from a seed: the domain keys, the agent keys, and
//! which earlier agents each one bootstraps from, so a run can be repeated.
//! Agents are spread round-robin over `domains` domains, each of whose
//! policies trusts all the others, as `starling testnet up` does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use starling_agent::config::Config;
use starling_agent::machine::Probe;
use starling_agent::network::Transport;
use starling_agent::trust::Trust;
use starling_agent::{Agent, Setup};
use starling_protocol::identity::{
    AgentId, Certificate, Keypair, Role, Roles, Timestamp, TrustAnchors,
};
use starling_storage::{MemoryStore, Store};

/// Bootstrap peers each agent is given (earlier agents, picked by seed).
pub const BOOTSTRAP_PEERS: usize = 3;

/// Memory-transport ports are process-wide: every testnet takes a fresh
/// block so that several can run at once (tests in one binary).
static NEXT_PORT: AtomicU64 = AtomicU64::new(1 << 20);

/// How to build an in-process testnet.
#[derive(Debug, Clone)]
pub struct Options {
    pub agents: usize,
    pub domains: usize,
    pub seed: u64,
    /// The agents' configuration (advertise timers, machine section); the
    /// network section's addresses are set per agent.
    pub config: Config,
    /// Connections without noise ([`Transport::MemoryPlaintext`]): for
    /// measurements of hundreds of agents, where the handshakes and ciphers
    /// of noise are a quarter of the CPU and protect nothing in one process.
    pub plaintext: bool,
}

impl Options {
    pub fn new(agents: usize, domains: usize, seed: u64) -> Options {
        let mut config = Config::default();
        config.network.mdns = false;
        Options {
            agents,
            domains,
            seed,
            config,
            plaintext: false,
        }
    }
}

/// One domain of the testnet.
#[derive(Debug)]
pub struct Domain {
    pub name: String,
    pub key: Keypair,
}

/// A running in-process testnet.
pub struct Testnet {
    pub agents: Vec<Agent>,
    pub keys: Vec<Keypair>,
    pub domains: Vec<Domain>,
    options: Options,
    base_port: u64,
}

/// A small deterministic generator (SplitMix64) for keys and choices.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn seed32(&mut self) -> [u8; 32] {
        let mut out = [0; 32];
        for chunk in out.chunks_mut(8) {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        out
    }
}

impl Testnet {
    /// Starts `options.agents` agents, each bootstrapping from up to
    /// [`BOOTSTRAP_PEERS`] earlier ones. Returns once all have started (not
    /// yet converged: see [`Testnet::wait_converged`]).
    pub async fn start(options: Options) -> anyhow::Result<Testnet> {
        anyhow::ensure!(options.agents > 0, "a testnet needs at least one agent");
        anyhow::ensure!(
            (1..=options.agents).contains(&options.domains),
            "--domains must be between 1 and the number of agents"
        );
        let mut rng = Rng::new(options.seed);
        let domains: Vec<Domain> = (0..options.domains)
            .map(|d| Domain {
                name: format!("d{d}.testnet"),
                key: Keypair::from_seed(&rng.seed32()),
            })
            .collect();
        let keys: Vec<Keypair> = (0..options.agents)
            .map(|_| Keypair::from_seed(&rng.seed32()))
            .collect();
        let base_port = NEXT_PORT.fetch_add(options.agents as u64 + 1, Ordering::Relaxed);
        let probe = shared_probe();
        let mut testnet = Testnet {
            agents: Vec::with_capacity(options.agents),
            keys,
            domains,
            options,
            base_port,
        };
        for i in 0..testnet.options.agents {
            let bootstrap = testnet.bootstrap_for(i, &mut rng);
            let agent = testnet.start_agent(i, bootstrap, probe.clone()).await?;
            testnet.agents.push(agent);
        }
        Ok(testnet)
    }

    fn address(&self, i: usize) -> String {
        format!("/memory/{}", self.base_port + i as u64)
    }

    fn bootstrap_for(&self, i: usize, rng: &mut Rng) -> Vec<String> {
        let mut picks = Vec::new();
        for _ in 0..BOOTSTRAP_PEERS.min(i) {
            let j = rng.below(i);
            if !picks.contains(&j) {
                picks.push(j);
            }
        }
        picks
            .into_iter()
            .map(|j| format!("{}/p2p/{}", self.address(j), self.keys[j].agent_id()))
            .collect()
    }

    /// The trust agent `i` starts with: certified in its domain, trusting
    /// every domain of the testnet.
    pub fn trust_for(&self, i: usize) -> anyhow::Result<Trust> {
        let domain = &self.domains[i % self.domains.len()];
        let now = Timestamp::now();
        let roles = [Role::Execute, Role::Submit, Role::Store]
            .into_iter()
            .fold(Roles::default(), Roles::with);
        let certificate = Certificate {
            domain: domain.name.clone(),
            domain_key: domain.key.public(),
            agent: self.keys[i].agent_id(),
            roles,
            valid_from: now.saturating_sub_millis(60_000),
            valid_until: now.saturating_add_millis(7 * 86_400_000),
        }
        .issue(&domain.key, 1)?;
        let mut anchors = TrustAnchors::default();
        let mut names = vec![domain.name.clone()];
        for d in &self.domains {
            anchors.insert(&d.name, d.key.public());
            if d.name != domain.name {
                names.push(d.name.clone());
            }
        }
        Ok(Trust {
            domain: domain.name.clone(),
            roles,
            certificates: vec![certificate],
            anchors,
            domains: names,
            foreign_factors: std::collections::BTreeMap::new(),
            store_quotas: std::collections::BTreeMap::new(),
            accept_terms: std::collections::BTreeMap::new(),
            caps: std::collections::BTreeMap::new(),
            export_terms: std::collections::BTreeMap::new(),
            export_caps: std::collections::BTreeMap::new(),
            bootstrap: Vec::new(),
        })
    }

    async fn start_agent(
        &self,
        i: usize,
        bootstrap: Vec<String>,
        probe: Probe,
    ) -> anyhow::Result<Agent> {
        let mut config = self.options.config.clone();
        config.network.listen = vec![self.address(i)];
        config.network.bootstrap = bootstrap;
        config.network.mdns = false;
        config.machine.name = Some(format!("slot1@agent-{i:03}"));
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        Agent::start(Setup {
            key: Keypair::from_seed(&self.keys[i].seed()),
            trust: self.trust_for(i)?,
            config,
            data_dir: None,
            store,
            disk: None,
            transport: if self.options.plaintext {
                Transport::MemoryPlaintext
            } else {
                Transport::Memory
            },
            control: false,
            probe: Some(probe),
        })
        .await
        .with_context(|| format!("starting agent {i}"))
    }

    /// The agent id of agent `i`.
    pub fn id(&self, i: usize) -> AgentId {
        self.keys[i].agent_id()
    }

    /// Waits until every agent's view holds every agent's machine ad, or
    /// `timeout` passes; returns how many agents hold them all.
    pub async fn wait_converged(&self, timeout: Duration) -> usize {
        self.watch_formation(timeout, |_| {}).await.complete()
    }

    /// How many machine ads each agent's view holds now (an agent that
    /// does not answer counts none).
    pub async fn coverage(&self) -> Coverage {
        let mut held = Vec::with_capacity(self.agents.len());
        for agent in &self.agents {
            let counts = agent.counts().await.unwrap_or_default();
            held.push(counts.get("Machine").copied().unwrap_or(0));
        }
        Coverage {
            held,
            pool: self.agents.len(),
        }
    }

    /// The agents whose machine ads agent `i`'s view lacks.
    pub async fn missing(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for j in 0..self.agents.len() {
            if j != i && self.agents[i].holding(&self.id(j)).await.is_none() {
                out.push(j);
            }
        }
        out
    }

    /// The domain agent `i` belongs to (its index in `domains`).
    pub fn domain_of(&self, i: usize) -> usize {
        i % self.domains.len()
    }

    /// Watches the pool form until every agent holds every machine ad or
    /// `timeout` passes, calling `progress` with each look (about every
    /// 100 ms, or as often as a look over every agent allows). Returns the
    /// last look and when the pool first reached 99% of agents holding 99%
    /// of the ads, and all of them, measured from the call.
    pub async fn watch_formation(
        &self,
        timeout: Duration,
        mut progress: impl FnMut(&Coverage),
    ) -> Formation {
        let started = tokio::time::Instant::now();
        let deadline = started + timeout;
        let mut formation = Formation::default();
        loop {
            let coverage = self.coverage().await;
            let now = tokio::time::Instant::now();
            if formation.mostly.is_none() && coverage.holding(0.99) >= coverage.needed(0.99) {
                formation.mostly = Some(now - started);
            }
            let done = coverage.complete() == coverage.pool;
            if done {
                formation.all = Some(now - started);
            }
            progress(&coverage);
            formation.last = coverage;
            if done || now >= deadline {
                return formation;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops every agent cleanly, all at once: each withdraws its ad and
    /// waits a moment for the withdrawal to go out, which one after another
    /// took half a minute for a hundred agents.
    pub async fn shutdown(self) {
        let mut stopping = tokio::task::JoinSet::new();
        for agent in self.agents {
            stopping.spawn(agent.shutdown());
        }
        while stopping.join_next().await.is_some() {}
    }
}

/// How many machine ads each agent of a testnet holds at one moment.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// Per agent, in start order.
    pub held: Vec<usize>,
    /// How many machine ads there are to hold (one per agent).
    pub pool: usize,
}

impl Coverage {
    /// How many `fraction` of `pool` is, rounded up.
    pub fn needed(&self, fraction: f64) -> usize {
        ((self.pool as f64) * fraction).ceil() as usize
    }

    /// Agents that hold at least `fraction` of the machine ads.
    pub fn holding(&self, fraction: f64) -> usize {
        let need = self.needed(fraction);
        self.held.iter().filter(|&&h| h >= need).count()
    }

    /// Agents that hold every machine ad.
    pub fn complete(&self) -> usize {
        self.holding(1.0)
    }

    /// The fewest ads any agent holds.
    pub fn least(&self) -> usize {
        self.held.iter().copied().min().unwrap_or(0)
    }
}

/// How a testnet formed ([`Testnet::watch_formation`]).
#[derive(Debug, Clone, Default)]
pub struct Formation {
    /// When 99% of the agents first held 99% of the machine ads.
    pub mostly: Option<Duration>,
    /// When every agent first held every machine ad.
    pub all: Option<Duration>,
    /// The last look.
    pub last: Coverage,
}

impl Formation {
    /// Agents that held every machine ad at the last look.
    pub fn complete(&self) -> usize {
        self.last.complete()
    }
}

/// One probe of this machine for all agents (the benchmark runs once).
fn shared_probe() -> Probe {
    static PROBE: std::sync::OnceLock<Probe> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(|| Probe::read(&std::env::temp_dir(), None))
        .clone()
}

/// How an ad change spread: for each other agent, how long after the
/// change it held the new ad (`None`: not within the timeout).
#[derive(Debug, Clone)]
pub struct Spread {
    pub delays: Vec<Option<Duration>>,
}

impl Spread {
    /// The time by which `fraction` of the agents held the change.
    pub fn quantile(&self, fraction: f64) -> Option<Duration> {
        let mut got: Vec<Duration> = self.delays.iter().flatten().copied().collect();
        let need = ((self.delays.len() as f64) * fraction).ceil() as usize;
        if need == 0 {
            return Some(Duration::ZERO);
        }
        if got.len() < need {
            return None;
        }
        got.sort();
        Some(got[need - 1])
    }
}

impl Testnet {
    /// Changes an attribute of agent `who`'s machine ad and measures how
    /// long the new ad takes to reach every other agent's view (by the
    /// arrival time each view records).
    pub async fn measure_spread(
        &self,
        who: usize,
        value: i64,
        timeout: Duration,
    ) -> anyhow::Result<Spread> {
        let start = Timestamp::now();
        let seq = self.agents[who]
            .set_attribute("TestnetProbe", Some(&value.to_string()))
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        let signer = self.id(who);
        let deadline = tokio::time::Instant::now() + timeout;
        let others: Vec<usize> = (0..self.agents.len()).filter(|&i| i != who).collect();
        let mut delays: Vec<Option<Duration>> = vec![None; others.len()];
        loop {
            for (slot, &i) in others.iter().enumerate() {
                if delays[slot].is_some() {
                    continue;
                }
                if let Some((held, at)) = self.agents[i].holding(&signer).await {
                    if held >= seq {
                        let ms = at.as_unix_millis().saturating_sub(start.as_unix_millis());
                        delays[slot] = Some(Duration::from_millis(ms));
                    }
                }
            }
            if delays.iter().all(Option::is_some) || tokio::time::Instant::now() >= deadline {
                return Ok(Spread { delays });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
