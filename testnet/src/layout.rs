//! The files of a testnet: what `up` makes in its directory before any agent
//! starts, and `testnet.toml`, which records it.
//!
//! ```text
//! DIR/testnet.toml                 the layout: domains, agents (name, domain, id)
//! DIR/domains/<domain>.key         each domain's key, mode 0600 (the administrator's)
//! DIR/agent-00/                    an agent's data directory (storage::DataDir):
//!             agent.key            its key
//!             certs/<domain>.cert  its certificate (roles execute,submit,store;
//!                                  a domain's first agent also netmgr)
//!             policies/<domain>.policy  its domain's policy, trusting every other domain
//!             agent.toml           its configuration (listen, bootstrap, mdns off)
//!             agent.log            its standard output and error
//! ```
//!
//! Domains are named `d0.testnet`, `d1.testnet`, …; agents `agent-00`,
//! `agent-01`, … (at least two digits) and are dealt to domains round-robin.
//! Each domain is set up as an administrator would: its key signs a
//! certificate for each of its agents and one policy trusting every other
//! domain of the testnet, installed into each agent through
//! [`DataDir::install_certificate`] and [`DataDir::install_policy`], so a
//! testnet agent reads exactly the files a real one does.
//!
//! A directory is prepared again at every `up`: keys and agent ids are kept,
//! certificates and policies are issued afresh (so they never expire under a
//! testnet that is brought up again a year later), and `agent.toml` is
//! rewritten with the addresses of this run.

use std::fs;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context as _};
use serde::{Deserialize, Serialize};
use starling_agent::config::Config;
use starling_protocol::identity::{
    armor, check_domain_name, AgentId, Certificate, DomainPolicy, Export, Keypair, Roles,
    Timestamp, TrustedDomain,
};
use starling_storage::{datadir, DataDir};

/// The layout file in a testnet's directory.
pub const LAYOUT_FILE: &str = "testnet.toml";

/// The version of `testnet.toml` this code writes and reads.
pub const LAYOUT_VERSION: u32 = 1;

/// The roles every testnet agent is admitted with.
pub const ROLES: &str = "execute,submit,store";

/// The most agents one testnet may have: far beyond what one machine runs,
/// low enough that a typo (`--agents 50000`) is caught before any key is made.
pub const MAX_AGENTS: usize = 1000;

/// How long certificates and policies are valid.
const VALIDITY_MS: u64 = 365 * 86_400_000;

const DOMAINS_DIR: &str = "domains";

/// The agent's configuration file in its data directory.
pub const CONFIG_FILE: &str = "agent.toml";

/// Where an agent's standard output and error go.
pub const LOG_FILE: &str = "agent.log";

/// A testnet's layout, as `testnet.toml` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// The format of this file: [`LAYOUT_VERSION`].
    pub version: u32,
    /// The domains, in order: `d0.testnet`, `d1.testnet`, …
    pub domains: Vec<String>,
    /// The process group the running agents share (the first agent's pid),
    /// so that `down` can be sure nothing of the testnet is left. Absent
    /// while the testnet is down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_group: Option<i32>,
    /// The emulated network (`up --netns`), from the moment `up` starts
    /// making it until `down` has removed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::netns::Network>,
    /// The agents, in order: `agent-00`, `agent-01`, …
    #[serde(rename = "agent", default)]
    pub agents: Vec<Agent>,
    /// The testnet's directory (absolute); not stored in the file.
    #[serde(skip)]
    dir: PathBuf,
}

/// One agent of a testnet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Its name, which is also its data directory under the testnet's.
    pub name: String,
    /// The domain that admitted it.
    pub domain: String,
    /// Its agent id (`12D3KooW…`).
    pub id: String,
}

/// What goes into every agent's configuration besides its addresses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentSettings {
    /// `[advertise] refresh_secs`; `None` leaves the agent's default.
    pub refresh_secs: Option<u64>,
    /// `[advertise] lifetime_secs`; `None` leaves the agent's default.
    pub lifetime_secs: Option<u64>,
    /// Keys of the `[jobs]` section (how jobs are isolated), as TOML.
    pub jobs: toml::Table,
    /// Keys of the `[store]` section (disk lent to checkpoints), as TOML.
    /// Each agent's `host` is its own name unless set here: agents of a
    /// testnet stand for separate machines.
    pub store: toml::Table,
    /// The emulated network's rates (`up --netns`): every agent manages its
    /// host link at this rate (`[links] host_mbps`), and each domain's first
    /// agent (its netmgr) the domain's uplink (`[links] uplink_mbps`).
    pub links: crate::netns::Rates,
    /// Other keys of the `[links]` section (how transfers reserve:
    /// `horizon_secs=5`, `min_reserved_kib=4096`, ...), as TOML; the rates
    /// of `links` win over theirs.
    pub link_settings: toml::Table,
    /// Fake GPUs each agent declares (`up --gpus N`), so that GPU
    /// scheduling can be tried without hardware. The agents share one
    /// host, so none discovers the host's real GPUs.
    pub gpus: u32,
    /// The processors each agent offers (`up --cpus N`, `[machine] cpus`);
    /// `None` leaves what the host has.
    pub cpus: Option<u32>,
}

/// The most fake GPUs a testnet agent may declare.
pub const MAX_FAKE_GPUS: u32 = 64;

/// The `[gpus]` section of a testnet agent: `count` declared devices,
/// with ids unique in the testnet (`GPU-0003000a`: the agent's number, the
/// device's), or, without any, no discovery (the host's GPUs are not each
/// agent's).
fn fake_gpus(layout: &Layout, agent: &Agent, count: u32) -> anyhow::Result<toml::Table> {
    anyhow::ensure!(
        count <= MAX_FAKE_GPUS,
        "{count} GPUs per agent is more than {MAX_FAKE_GPUS}"
    );
    let mut gpus = toml::Table::new();
    if count == 0 {
        gpus.insert("discovery".into(), "off".into());
        return Ok(gpus);
    }
    let n = layout
        .agents
        .iter()
        .position(|a| a == agent)
        .unwrap_or_default();
    let devices: Vec<toml::Value> = (0..count)
        .map(|i| {
            let mut d = toml::Table::new();
            d.insert("id".into(), format!("GPU-{n:04x}{i:04x}").into());
            d.insert("name".into(), "Starling Testnet GPU".into());
            d.insert("capability".into(), 8.0.into());
            d.insert("memory_mb".into(), 16384.into());
            d.into()
        })
        .collect();
    gpus.insert("device".into(), devices.into());
    Ok(gpus)
}

/// Parses `KEY=VALUE` into a `[jobs]` setting: VALUE is TOML (`false`,
/// `4`, `"v2"`), and a bare word is a string (`cgroups=off`).
pub fn parse_jobs_setting(text: &str) -> anyhow::Result<(String, toml::Value)> {
    let (key, value) = text
        .split_once('=')
        .with_context(|| format!("{text:?} is not KEY=VALUE"))?;
    let key = key.trim();
    anyhow::ensure!(
        !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "{key:?} is not a configuration key"
    );
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_owned()));
    Ok((key.to_owned(), parsed))
}

/// The name of domain `i`.
pub fn domain_name(i: usize) -> String {
    format!("d{i}.testnet")
}

/// The name of agent `i` of `n`: zero-padded to at least two digits, and to
/// as many as the largest index needs, so names sort in order.
pub fn agent_name(i: usize, n: usize) -> String {
    let width = n.saturating_sub(1).to_string().len().max(2);
    format!("agent-{i:0width$}")
}

impl Layout {
    /// The layout of `agents` agents in `domains` domains in `dir`, before
    /// any agent has an id.
    pub(crate) fn plan(dir: &Path, agents: usize, domains: usize) -> anyhow::Result<Layout> {
        ensure!(agents >= 1, "--agents must be at least 1");
        ensure!(
            agents <= MAX_AGENTS,
            "--agents {agents} is more than {MAX_AGENTS}, the most one testnet runs"
        );
        ensure!(domains >= 1, "--domains must be at least 1");
        ensure!(
            domains <= agents,
            "--domains {domains} is more than --agents {agents}: every domain needs an agent"
        );
        let domain_names: Vec<String> = (0..domains).map(domain_name).collect();
        Ok(Layout {
            version: LAYOUT_VERSION,
            agents: (0..agents)
                .map(|i| Agent {
                    name: agent_name(i, agents),
                    domain: domain_names[i % domains].clone(),
                    id: String::new(),
                })
                .collect(),
            domains: domain_names,
            process_group: None,
            network: None,
            dir: dir.to_owned(),
        })
    }

    /// Reads `DIR/testnet.toml`; `None` if there is none.
    pub fn load(dir: &Path) -> anyhow::Result<Option<Layout>> {
        let path = dir.join(LAYOUT_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let mut layout: Layout =
            toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
        ensure!(
            layout.version == LAYOUT_VERSION,
            "{}: layout version {} is not {LAYOUT_VERSION}, the one this starling understands",
            path.display(),
            layout.version
        );
        for domain in layout
            .domains
            .iter()
            .chain(layout.agents.iter().map(|a| &a.domain))
        {
            // Domain names become file names; DNS-like names are safe ones.
            check_domain_name(domain).with_context(|| path.display().to_string())?;
        }
        for agent in &layout.agents {
            // Names become paths: only the ones `up` makes are accepted.
            let digits = agent.name.strip_prefix("agent-").unwrap_or_default();
            ensure!(
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()),
                "{}: agent name {:?} is not one `testnet up` makes",
                path.display(),
                agent.name
            );
        }
        layout.dir = dir.to_owned();
        Ok(Some(layout))
    }

    /// Writes `DIR/testnet.toml` (through a temporary file and a rename).
    pub fn save(&self) -> anyhow::Result<()> {
        let path = self.dir.join(LAYOUT_FILE);
        let text = format!(
            "# A Starling testnet, written by `starling testnet up`.\n\
             # Each agent's data directory is the directory of its name next to\n\
             # this file; domain keys are in domains/.\n\n{}",
            toml::to_string(self).context("encoding the testnet layout")?
        );
        let temp = self
            .dir
            .join(format!(".{LAYOUT_FILE}.{}.tmp", std::process::id()));
        fs::write(&temp, text).with_context(|| format!("writing {}", temp.display()))?;
        fs::rename(&temp, &path).with_context(|| format!("writing {}", path.display()))
    }

    /// The testnet's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// An agent's data directory.
    pub fn agent_dir(&self, agent: &Agent) -> PathBuf {
        self.dir.join(&agent.name)
    }

    /// A domain's key file.
    pub fn domain_key_path(&self, domain: &str) -> PathBuf {
        self.dir.join(DOMAINS_DIR).join(format!("{domain}.key"))
    }

    /// The agents of `domain`.
    pub fn agents_of(&self, domain: &str) -> impl Iterator<Item = &Agent> + '_ {
        let domain = domain.to_owned();
        self.agents.iter().filter(move |a| a.domain == domain)
    }

    /// Reads a domain's key.
    pub fn domain_key(&self, domain: &str) -> anyhow::Result<Keypair> {
        let path = self.domain_key_path(domain);
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let (name, key) = armor::dearmor_domain_key(&text)
            .with_context(|| format!("{}: not a domain key file", path.display()))?;
        ensure!(
            name == domain,
            "{} holds the key of domain {name:?}, not {domain:?}",
            path.display()
        );
        Ok(key)
    }
}

/// The terms one domain of a testnet gives another in its policy, as
/// `starling domain policy` signs them (`testnet up --terms FILE`, an
/// array `[[terms]]` of these): experiments with unequal partners in one
/// command.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainTerms {
    /// The domain whose policy this is (`d1.testnet`).
    pub domain: String,
    /// The domain it trusts on these terms.
    pub trusts: String,
    pub accept: Option<String>,
    pub max_slots: Option<u32>,
    pub max_fraction: Option<f64>,
    /// Most GPUs its jobs may hold in the domain at once.
    pub max_gpus: Option<u32>,
    pub priority_factor: Option<f64>,
    /// Which machines are advertised to it (a ClassAd expression).
    pub export: Option<String>,
    pub export_slots: Option<u32>,
    pub store_mib: Option<u64>,
}

/// A terms file: `[[terms]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TermsFile {
    #[serde(default)]
    terms: Vec<DomainTerms>,
}

/// Largest terms file read.
const MAX_TERMS_FILE: u64 = 1 << 20;

/// Reads a terms file, naming the file and what is wrong.
pub fn read_terms(path: &Path) -> anyhow::Result<Vec<DomainTerms>> {
    let len = fs::metadata(path)
        .with_context(|| format!("reading the terms file {}", path.display()))?
        .len();
    ensure!(
        len <= MAX_TERMS_FILE,
        "the terms file {} is {len} bytes, more than {MAX_TERMS_FILE}",
        path.display()
    );
    let text = fs::read_to_string(path)
        .with_context(|| format!("reading the terms file {}", path.display()))?;
    let file: TermsFile = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("the terms file {}: {e}", path.display()))?;
    Ok(file.terms)
}

/// Terms name domains of the testnet, each pair once, never a domain and
/// itself.
fn check_terms(terms: &[DomainTerms], domains: &[String]) -> anyhow::Result<()> {
    for (i, t) in terms.iter().enumerate() {
        for name in [&t.domain, &t.trusts] {
            ensure!(
                domains.contains(name),
                "terms for {} trusting {}: {name:?} is not a domain of this testnet ({})",
                t.domain,
                t.trusts,
                domains.join(", ")
            );
        }
        ensure!(
            t.domain != t.trusts,
            "terms for {} trusting itself: a domain's policy names only other domains",
            t.domain
        );
        ensure!(
            !terms[..i]
                .iter()
                .any(|o| o.domain == t.domain && o.trusts == t.trusts),
            "terms for {} trusting {} are given twice",
            t.domain,
            t.trusts
        );
    }
    Ok(())
}

/// Makes or reuses the testnet in `dir` (absolute) for `agents` agents in
/// `domains` domains: domain keys, agent data directories and keys, fresh
/// certificates and policies. Writes `testnet.toml` and returns the layout.
///
/// A directory holding a testnet of another shape is refused rather than
/// reshaped: agents dealt to other domains would keep their old
/// certificates. A directory with other files in it is refused too.
pub fn prepare(
    dir: &Path,
    agents: usize,
    domains: usize,
    terms: &[DomainTerms],
) -> anyhow::Result<Layout> {
    let mut layout = Layout::plan(dir, agents, domains)?;
    check_terms(terms, &layout.domains)?;
    match Layout::load(dir)? {
        Some(old) => {
            if (old.agents.len(), old.domains.len()) != (agents, domains) {
                bail!(
                    "{} holds a testnet of {} agents in {} domains; bring it up with \
                     --agents {} --domains {}, or use another directory (or remove this one)",
                    dir.display(),
                    old.agents.len(),
                    old.domains.len(),
                    old.agents.len(),
                    old.domains.len()
                );
            }
            layout.process_group = old.process_group;
            layout.network = old.network;
        }
        None => {
            let mut entries = match fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    create_private_dir(dir)?;
                    fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?
                }
                Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
            };
            if entries.next().is_some() {
                bail!(
                    "{} is not empty and holds no {LAYOUT_FILE}: choose a new or empty \
                     directory for the testnet",
                    dir.display()
                );
            }
        }
    }

    create_private_dir(&dir.join(DOMAINS_DIR))?;
    let now = Timestamp::now();
    let until = now.saturating_add_millis(VALIDITY_MS);
    let mut keys = Vec::with_capacity(domains);
    for name in &layout.domains {
        keys.push(domain_key(&layout, name)?);
    }
    let roles: Roles = ROLES
        .parse()
        .map_err(|e: String| anyhow::anyhow!("roles {ROLES:?}: {e}"))?;
    // Each domain's first agent also manages its uplink: it does so only
    // where its configuration gives the uplink a rate (`up --netns`).
    let first_roles = roles.with(starling_protocol::identity::Role::Netmgr);
    for (name, key) in layout.domains.iter().zip(&keys) {
        // One policy per domain, trusting every other domain of the testnet.
        let policy = DomainPolicy {
            domain: name.clone(),
            trusts: layout
                .domains
                .iter()
                .zip(&keys)
                .filter(|(other, _)| *other != name)
                .map(|(other, other_key)| {
                    let given = terms
                        .iter()
                        .find(|t| t.domain == *name && t.trusts == *other)
                        .cloned()
                        .unwrap_or_default();
                    TrustedDomain {
                        name: other.clone(),
                        key: other_key.public(),
                        accept: given.accept,
                        max_slots: given.max_slots,
                        max_fraction: given.max_fraction,
                        max_gpus: given.max_gpus,
                        priority_factor: given.priority_factor.unwrap_or(1.0),
                        export: Export {
                            machines: given.export,
                            max_slots: given.export_slots,
                        },
                        store_mib: given.store_mib,
                    }
                })
                .collect(),
            bootstrap: Vec::new(),
        };
        // The issue time orders policies, as `starling domain policy` does.
        let policy_envelope = policy
            .sign(key, now.as_unix_millis(), now, until)
            .with_context(|| format!("the terms of {name}'s policy"))?;
        let members: Vec<usize> = (0..layout.agents.len())
            .filter(|&i| layout.agents[i].domain == *name)
            .collect();
        for (n, i) in members.into_iter().enumerate() {
            let roles = if n == 0 { first_roles } else { roles };
            let data_dir = layout.agent_dir(&layout.agents[i]);
            let data = DataDir::open(&data_dir)?;
            let id: AgentId = data.agent_key()?.agent_id();
            let cert = Certificate {
                domain: name.clone(),
                domain_key: key.public(),
                agent: id,
                roles,
                valid_from: now,
                valid_until: until,
            };
            let envelope = cert.issue(key, now.as_unix_millis())?;
            data.install_certificate(&envelope, &cert)
                .with_context(|| format!("admitting {}", layout.agents[i].name))?;
            data.install_policy(&policy_envelope, &policy)
                .with_context(|| format!("installing the policy of {name}"))?;
            layout.agents[i].id = id.to_string();
        }
    }
    layout.save()?;
    Ok(layout)
}

/// Reads a domain's key, making it on first use.
fn domain_key(layout: &Layout, name: &str) -> anyhow::Result<Keypair> {
    let path = layout.domain_key_path(name);
    if path.exists() {
        return layout.domain_key(name);
    }
    let key = Keypair::generate().context("getting randomness for a domain key")?;
    datadir::write_private(&path, armor::armor_domain_key(name, &key).as_bytes())
        .context("writing a domain key")?;
    Ok(key)
}

fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))
}

/// Checks `settings` as the agent will, before anything is made.
pub fn check_settings(settings: &AgentSettings) -> anyhow::Result<()> {
    let mut config = Config::default();
    if !settings.jobs.is_empty() {
        config.jobs = section(&settings.jobs, "--jobs")?;
        validated(&config, "--jobs")?;
    }
    if !settings.store.is_empty() {
        config.store = section(&settings.store, "--store")?;
        validated(&config, "--store")?;
    }
    if !settings.link_settings.is_empty() {
        config.links = section(&settings.link_settings, "--links")?;
        validated(&config, "--links")?;
    }
    apply_settings(&mut config, settings);
    config
        .validate("testnet options")
        .map_err(|e| anyhow::anyhow!("{e}: set --refresh-secs and --lifetime-secs together"))
}

/// A configuration section from the keys a flag gave.
fn section<T: serde::de::DeserializeOwned>(keys: &toml::Table, flag: &str) -> anyhow::Result<T> {
    toml::Value::Table(keys.clone())
        .try_into()
        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))
}

/// `config` as the agent would check it, a refusal naming `flag`.
fn validated(config: &Config, flag: &str) -> anyhow::Result<()> {
    config.validate(flag).map_err(|e| anyhow::anyhow!("{e}"))
}

fn apply_settings(config: &mut Config, settings: &AgentSettings) {
    if let Some(secs) = settings.refresh_secs {
        config.advertise.refresh_secs = secs;
    }
    if let Some(secs) = settings.lifetime_secs {
        config.advertise.lifetime_secs = secs;
    }
}

/// Writes `agent`'s `agent.toml`: listen on `listen`, dial `bootstrap`, no
/// mDNS (agents find each other through the bootstrap peers, not the LAN),
/// a machine name of its own (they share a host name). Only what differs
/// from the agent's defaults is written. The file is read back with the
/// agent's own loader, so a file the agent would refuse is never left.
pub fn write_agent_config(
    layout: &Layout,
    agent: &Agent,
    listen: &str,
    bootstrap: &[String],
    settings: &AgentSettings,
) -> anyhow::Result<PathBuf> {
    let data_dir = layout.agent_dir(agent);
    let path = data_dir.join(CONFIG_FILE);
    let mut network = toml::Table::new();
    network.insert("listen".into(), vec![listen.to_owned()].into());
    network.insert("bootstrap".into(), bootstrap.to_vec().into());
    network.insert("mdns".into(), false.into());
    let mut machine = toml::Table::new();
    machine.insert(
        "name".into(),
        format!("slot1@{}.{}", agent.name, agent.domain).into(),
    );
    if let Some(n) = settings.cpus {
        machine.insert("cpus".into(), i64::from(n).into());
    }
    let mut file = toml::Table::new();
    file.insert(
        "data_dir".into(),
        data_dir.to_string_lossy().into_owned().into(),
    );
    file.insert("network".into(), network.into());
    let mut advertise = toml::Table::new();
    if let Some(secs) = settings.refresh_secs {
        advertise.insert("refresh_secs".into(), to_toml_int(secs)?.into());
    }
    if let Some(secs) = settings.lifetime_secs {
        advertise.insert("lifetime_secs".into(), to_toml_int(secs)?.into());
    }
    if !advertise.is_empty() {
        file.insert("advertise".into(), advertise.into());
    }
    if !settings.jobs.is_empty() {
        file.insert("jobs".into(), settings.jobs.clone().into());
    }
    let mut store = settings.store.clone();
    store
        .entry("host")
        .or_insert_with(|| format!("{}.{}", agent.name, agent.domain).into());
    file.insert("store".into(), store.into());
    file.insert("machine".into(), machine.into());
    let mut links = settings.link_settings.clone();
    if let Some(mbps) = settings.links.host_mbps {
        links.insert("host_mbps".into(), i64::from(mbps).into());
    }
    let netmgr = layout.agents.iter().find(|a| a.domain == agent.domain) == Some(agent);
    if let (Some(mbps), true) = (settings.links.uplink_mbps, netmgr) {
        links.insert("uplink_mbps".into(), i64::from(mbps).into());
    }
    if !links.is_empty() {
        file.insert("links".into(), links.into());
    }
    file.insert(
        "gpus".into(),
        fake_gpus(layout, agent, settings.gpus)?.into(),
    );
    // The agents share one host: their benchmarks say nothing of which is
    // faster, and weighing them would move jobs for noise.
    let mut migration = toml::Table::new();
    migration.insert("compare_speed".into(), false.into());
    file.insert("migration".into(), migration.into());
    let text = format!(
        "# {} of the Starling testnet in {}, written by `starling testnet up`\n\
         # and rewritten at every `up`. Run it by hand with:\n\
         #   starling agent --data-dir {} --config {}\n\n{}",
        agent.name,
        layout.dir.display(),
        data_dir.display(),
        path.display(),
        toml::to_string(&file).context("encoding an agent configuration")?
    );
    fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Config::load(Some(&path))
        .with_context(|| format!("the agent would refuse {}", path.display()))?;
    Ok(path)
}

/// Behind NAT (`up --netns --nat`): sets `[network] relays` in the agent
/// configuration at `path` to `relays`, and `[relay] serve` to `serve`,
/// keeping the rest of the file, and checks it with the agent's own loader.
pub fn set_relay(path: &Path, relays: &[String], serve: bool) -> anyhow::Result<()> {
    edit_config(path, |file| {
        let network = network_table(file)?;
        network.insert("relays".into(), relays.to_vec().into());
        let mut relay = toml::Table::new();
        relay.insert("serve".into(), serve.into());
        file.insert("relay".into(), relay.into());
        Ok(())
    })
}

/// The `[network]` table of an agent configuration, made if missing.
fn network_table(file: &mut toml::Table) -> anyhow::Result<&mut toml::Table> {
    file.entry("network")
        .or_insert_with(|| toml::Table::new().into())
        .as_table_mut()
        .context("[network] is not a table")
}

/// Sets `[network] bootstrap` in the agent configuration at `path` to
/// `peers`, keeping the rest of the file (its opening comment included),
/// and checks it with the agent's own loader.
pub fn set_bootstrap(path: &Path, peers: &[String]) -> anyhow::Result<()> {
    edit_config(path, |file| {
        let network = network_table(file)?;
        network.insert("bootstrap".into(), peers.to_vec().into());
        Ok(())
    })
}

/// Rewrites the agent configuration at `path` as `edit` changes it,
/// keeping its opening comment, and checks it with the agent's own loader.
fn edit_config(
    path: &Path,
    edit: impl FnOnce(&mut toml::Table) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut file: toml::Table = text
        .parse()
        .with_context(|| format!("parsing {}", path.display()))?;
    edit(&mut file).with_context(|| format!("editing {}", path.display()))?;
    let comment: String = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let encoded = toml::to_string(&file).context("encoding an agent configuration")?;
    fs::write(path, format!("{comment}\n{encoded}"))
        .with_context(|| format!("writing {}", path.display()))?;
    Config::load(Some(path))
        .with_context(|| format!("the agent would refuse {}", path.display()))?;
    Ok(())
}

fn to_toml_int(n: u64) -> anyhow::Result<i64> {
    i64::try_from(n).with_context(|| format!("{n} is too large"))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use starling_protocol::identity::{Freshness, Role};

    use super::*;

    fn open_cert(data: &DataDir) -> Certificate {
        let certs = data.certificates().unwrap();
        assert_eq!(certs.len(), 1, "{certs:?}");
        let envelope = certs[0].envelope.as_ref().unwrap();
        Certificate::open(envelope, Timestamp::now(), &Freshness::default()).unwrap()
    }

    fn open_policy(data: &DataDir) -> (DomainPolicy, starling_protocol::identity::PublicKey) {
        let policies = data.policies().unwrap();
        assert_eq!(policies.len(), 1, "{policies:?}");
        let envelope = policies[0].envelope.as_ref().unwrap();
        let policy = DomainPolicy::open(envelope, Timestamp::now(), &Freshness::default()).unwrap();
        (policy, envelope.header().signer)
    }

    #[test]
    fn names_are_padded_to_sort_in_order() {
        assert_eq!(agent_name(0, 1), "agent-00");
        assert_eq!(agent_name(7, 50), "agent-07");
        assert_eq!(agent_name(99, 100), "agent-99");
        assert_eq!(agent_name(5, 101), "agent-005");
        assert_eq!(domain_name(3), "d3.testnet");
    }

    #[test]
    fn domains_certificates_and_policies_are_what_an_administrator_would_make() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("net");
        let layout = prepare(&dir, 5, 3, &[]).unwrap();
        assert_eq!(layout.domains, ["d0.testnet", "d1.testnet", "d2.testnet"]);
        let names: Vec<&str> = layout.agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            ["agent-00", "agent-01", "agent-02", "agent-03", "agent-04"]
        );
        // Round-robin: 0,3 -> d0; 1,4 -> d1; 2 -> d2.
        let of = |d: &str| -> Vec<&str> { layout.agents_of(d).map(|a| a.name.as_str()).collect() };
        assert_eq!(of("d0.testnet"), ["agent-00", "agent-03"]);
        assert_eq!(of("d1.testnet"), ["agent-01", "agent-04"]);
        assert_eq!(of("d2.testnet"), ["agent-02"]);

        for domain in &layout.domains {
            let path = layout.domain_key_path(domain);
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", path.display());
        }
        let keys: Vec<Keypair> = layout
            .domains
            .iter()
            .map(|d| layout.domain_key(d).unwrap())
            .collect();
        let mut ids = std::collections::HashSet::new();
        for agent in &layout.agents {
            let data = DataDir::open(layout.agent_dir(agent)).unwrap();
            let me = data.agent_key().unwrap().agent_id();
            assert_eq!(agent.id, me.to_string());
            assert!(ids.insert(me), "agent ids are distinct");
            let d = layout
                .domains
                .iter()
                .position(|d| *d == agent.domain)
                .unwrap();

            // The certificate verifies against its domain's key, for this agent.
            let cert = open_cert(&data);
            let mut anchors = starling_protocol::identity::TrustAnchors::default();
            anchors.insert(&agent.domain, keys[d].public());
            let envelope = data.certificates().unwrap().remove(0).envelope.unwrap();
            let verified = Certificate::verify(
                &envelope,
                &me,
                &anchors,
                Timestamp::now(),
                &Freshness::default(),
            )
            .unwrap();
            assert_eq!(verified, cert);
            for role in [Role::Execute, Role::Submit, Role::Store] {
                assert!(cert.roles.contains(role), "{}", cert.roles);
            }
            // Each domain's first agent manages its uplink; no other does.
            let first = layout.agents.iter().find(|a| a.domain == agent.domain) == Some(agent);
            assert_eq!(cert.roles.contains(Role::Netmgr), first, "{}", agent.name);

            // The policy is its domain's, signed by its domain's key, and
            // trusts exactly the other domains, by their keys.
            let (policy, signer) = open_policy(&data);
            assert_eq!(policy.domain, agent.domain);
            assert_eq!(signer, keys[d].public());
            let mut trusted: Vec<(String, _)> = policy
                .trusts
                .iter()
                .map(|t| (t.name.clone(), t.key))
                .collect();
            trusted.sort_by(|a, b| a.0.cmp(&b.0));
            let expected: Vec<(String, _)> = layout
                .domains
                .iter()
                .zip(&keys)
                .filter(|(name, _)| **name != agent.domain)
                .map(|(name, key)| (name.clone(), key.public()))
                .collect();
            assert_eq!(trusted, expected);
            // Whatever a trusted domain's agent presents checks out here.
            let anchors = policy.anchors(keys[d].public());
            assert_eq!(anchors.len(), 3);
        }
        assert_eq!(Layout::load(&dir).unwrap().unwrap(), layout);
    }

    #[test]
    fn one_domain_trusts_nobody_else() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = prepare(tmp.path(), 2, 1, &[]).unwrap();
        for agent in &layout.agents {
            let data = DataDir::open(layout.agent_dir(agent)).unwrap();
            let (policy, _) = open_policy(&data);
            assert_eq!(policy.domain, "d0.testnet");
            assert!(policy.trusts.is_empty());
        }
    }

    #[test]
    fn preparing_again_keeps_keys_and_ids_and_refuses_another_shape() {
        let tmp = tempfile::tempdir().unwrap();
        let first = prepare(tmp.path(), 3, 2, &[]).unwrap();
        let key = fs::read(first.domain_key_path("d1.testnet")).unwrap();
        let again = prepare(tmp.path(), 3, 2, &[]).unwrap();
        assert_eq!(again, first);
        assert_eq!(fs::read(first.domain_key_path("d1.testnet")).unwrap(), key);
        // The newer certificate and policy replaced the old ones.
        let data = DataDir::open(first.agent_dir(&first.agents[1])).unwrap();
        assert_eq!(data.certificates().unwrap().len(), 1);
        assert_eq!(data.policies().unwrap().len(), 1);

        let err = prepare(tmp.path(), 4, 2, &[]).unwrap_err().to_string();
        assert!(
            err.contains("holds a testnet of 3 agents in 2 domains"),
            "{err}"
        );
        assert!(err.contains("--agents 3 --domains 2"), "{err}");
    }

    #[test]
    fn bad_shapes_and_foreign_directories_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        for (agents, domains, expected) in [
            (0, 1, "--agents must be at least 1"),
            (2, 0, "--domains must be at least 1"),
            (2, 3, "every domain needs an agent"),
            (MAX_AGENTS + 1, 1, "the most one testnet runs"),
        ] {
            let err = prepare(&tmp.path().join("x"), agents, domains, &[])
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{agents} {domains}: {err}");
        }
        assert!(
            !tmp.path().join("x").exists(),
            "nothing is made for a bad shape"
        );

        fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
        let err = prepare(tmp.path(), 2, 1, &[]).unwrap_err().to_string();
        assert!(err.contains("is not empty"), "{err}");
        assert!(!tmp.path().join("domains").exists());
    }

    #[test]
    fn agent_configs_are_what_the_agent_loads() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = prepare(tmp.path(), 2, 1, &[]).unwrap();
        let agent = &layout.agents[1];
        let bootstrap = vec![format!(
            "/ip4/127.0.0.1/tcp/4001/p2p/{}",
            layout.agents[0].id
        )];
        let path = write_agent_config(
            &layout,
            agent,
            "/ip4/127.0.0.1/tcp/0",
            &bootstrap,
            &AgentSettings::default(),
        )
        .unwrap();
        assert_eq!(path, layout.agent_dir(agent).join(CONFIG_FILE));
        let config = Config::load(Some(&path)).unwrap();
        assert_eq!(config.network.listen, ["/ip4/127.0.0.1/tcp/0"]);
        assert_eq!(config.network.bootstrap, bootstrap);
        assert!(!config.network.mdns);
        assert_eq!(config.data_dir, Some(layout.agent_dir(agent)));
        assert_eq!(
            config.machine.name.as_deref(),
            Some("slot1@agent-01.d0.testnet")
        );
        // Advertise timers stay the agent's defaults unless asked for.
        assert_eq!(config.advertise, Config::default().advertise);
        let text = fs::read_to_string(&path).unwrap();
        assert!(!text.contains("[advertise]"), "{text}");

        let settings = AgentSettings {
            refresh_secs: Some(5),
            lifetime_secs: Some(15),
            jobs: [parse_jobs_setting("cgroups=off").unwrap()]
                .into_iter()
                .collect(),
            store: toml::Table::new(),
            links: crate::netns::Rates::default(),
            link_settings: [parse_jobs_setting("horizon_secs=5").unwrap()]
                .into_iter()
                .collect(),
            gpus: 0,
            cpus: Some(8),
        };
        check_settings(&settings).unwrap();
        let path =
            write_agent_config(&layout, agent, "/ip4/127.0.0.1/tcp/0", &[], &settings).unwrap();
        let config = Config::load(Some(&path)).unwrap();
        assert_eq!(
            (
                config.advertise.refresh_secs,
                config.advertise.lifetime_secs
            ),
            (5, 15)
        );
        assert_eq!(config.machine.cpus, Some(8));
        assert_eq!(config.links.horizon_secs, 5);
        // Agents on one host do not each claim the host's GPUs.
        assert_eq!(config.gpus.discovery, "off");
        assert!(config.gpus.device.is_empty());

        // Fake GPUs have ids unique across the testnet.
        let with_gpus = AgentSettings {
            gpus: 4,
            ..settings.clone()
        };
        let mut ids = std::collections::BTreeSet::new();
        for agent in &layout.agents {
            let path = write_agent_config(&layout, agent, "/ip4/127.0.0.1/tcp/0", &[], &with_gpus)
                .unwrap();
            let config = Config::load(Some(&path)).unwrap();
            assert_eq!(config.gpus.device.len(), 4);
            ids.extend(config.gpus.device.into_iter().map(|d| d.id));
        }
        assert_eq!(ids.len(), 4 * layout.agents.len());
        let too_many = AgentSettings {
            gpus: MAX_FAKE_GPUS + 1,
            ..settings.clone()
        };
        assert!(
            write_agent_config(&layout, agent, "/ip4/127.0.0.1/tcp/0", &[], &too_many).is_err()
        );

        // A refresh longer than the default lifetime (900 s) needs a
        // lifetime of its own.
        let err = check_settings(&AgentSettings {
            refresh_secs: Some(1000),
            lifetime_secs: None,
            ..AgentSettings::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("lifetime_secs"), "{err}");
    }

    #[test]
    fn new_bootstrap_peers_keep_the_rest_of_an_agent_config() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = prepare(tmp.path(), 2, 1, &[]).unwrap();
        let agent = &layout.agents[1];
        let settings = AgentSettings {
            jobs: [parse_jobs_setting("cgroups=off").unwrap()]
                .into_iter()
                .collect(),
            ..AgentSettings::default()
        };
        let old = vec!["/ip4/127.0.0.1/tcp/4001/p2p/x".to_owned()];
        let path =
            write_agent_config(&layout, agent, "/ip4/127.0.0.1/tcp/0", &old, &settings).unwrap();
        let new = vec![format!(
            "/ip4/127.0.0.1/tcp/4555/p2p/{}",
            layout.agents[0].id
        )];
        set_bootstrap(&path, &new).unwrap();
        let config = Config::load(Some(&path)).unwrap();
        assert_eq!(config.network.bootstrap, new);
        assert_eq!(config.network.listen, ["/ip4/127.0.0.1/tcp/0"]);
        assert_eq!(config.jobs.cgroups, "off");
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# agent-01 of the Starling testnet"),
            "{text}"
        );
    }

    #[test]
    fn damaged_layout_files_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join(LAYOUT_FILE), "version = 1\nagents = 3\n").unwrap();
        let err = format!("{:#}", Layout::load(tmp.path()).unwrap_err());
        assert!(err.contains("testnet.toml is not valid"), "{err}");
        fs::write(
            tmp.path().join(LAYOUT_FILE),
            "version = 1\ndomains = []\n[[agent]]\nname = \"../etc\"\ndomain = \"d\"\nid = \"x\"\n",
        )
        .unwrap();
        let err = Layout::load(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("is not one `testnet up` makes"), "{err}");
    }

    #[test]
    fn jobs_settings_are_toml_or_bare_words_and_checked_before_start() {
        assert_eq!(
            parse_jobs_setting("cgroups=off").unwrap(),
            ("cgroups".into(), toml::Value::String("off".into()))
        );
        assert_eq!(
            parse_jobs_setting("private_tmp = false").unwrap(),
            ("private_tmp".into(), toml::Value::Boolean(false))
        );
        assert!(parse_jobs_setting("no-equals").is_err());
        assert!(parse_jobs_setting("a.b=1").is_err());
        let with = |k: &str, v: &str| AgentSettings {
            jobs: [parse_jobs_setting(&format!("{k}={v}")).unwrap()]
                .into_iter()
                .collect(),
            ..AgentSettings::default()
        };
        check_settings(&with("cgroups", "v2")).unwrap();
        let e = check_settings(&with("cgroups", "v3"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("jobs.cgroups"), "{e}");
        let e = check_settings(&with("nonsense", "1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nonsense"), "{e}");
        let e = check_settings(&AgentSettings {
            link_settings: [parse_jobs_setting("horizon_secs=0").unwrap()]
                .into_iter()
                .collect(),
            ..AgentSettings::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("horizon_secs"), "{e}");
    }

    #[test]
    fn terms_go_into_the_policies_and_bad_ones_are_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("terms.toml");
        std::fs::write(
            &file,
            "[[terms]]\ndomain = \"d1.testnet\"\ntrusts = \"d0.testnet\"\n\
             accept = \"RequestCpus <= 1\"\nmax_slots = 2\npriority_factor = 3.0\n\
             export_slots = 4\nmax_gpus = 1\n",
        )
        .unwrap();
        let terms = read_terms(&file).unwrap();
        let layout = prepare(&tmp.path().join("net"), 2, 2, &terms).unwrap();
        let d1 = layout.agents_of("d1.testnet").next().unwrap();
        let (policy, _) = open_policy(&DataDir::open(layout.agent_dir(d1)).unwrap());
        let d0 = &policy.trusts[0];
        assert_eq!(d0.name, "d0.testnet");
        assert_eq!(d0.accept.as_deref(), Some("RequestCpus <= 1"));
        assert_eq!(d0.max_slots, Some(2));
        assert_eq!(d0.max_gpus, Some(1));
        assert_eq!(d0.priority_factor, 3.0);
        assert_eq!(d0.export.max_slots, Some(4));
        // d0's policy for d1 keeps the defaults.
        let a0 = layout.agents_of("d0.testnet").next().unwrap();
        let (policy, _) = open_policy(&DataDir::open(layout.agent_dir(a0)).unwrap());
        assert_eq!(policy.trusts[0].accept, None);

        let refused = |text: &str| {
            std::fs::write(&file, text).unwrap();
            let dir = tempfile::tempdir().unwrap();
            read_terms(&file)
                .and_then(|terms| prepare(&dir.path().join("net"), 2, 2, &terms))
                .map(drop)
                .map_err(|e| format!("{e:#}"))
                .unwrap_err()
        };
        let t = |rest: &str| {
            format!("[[terms]]\ndomain = \"d1.testnet\"\ntrusts = \"d0.testnet\"\n{rest}")
        };
        let err = refused("[[terms]]\ndomain = \"d9.testnet\"\ntrusts = \"d0.testnet\"\n");
        assert!(
            err.contains("\"d9.testnet\" is not a domain of this testnet"),
            "{err}"
        );
        let err = refused("[[terms]]\ndomain = \"d1.testnet\"\ntrusts = \"d1.testnet\"\n");
        assert!(err.contains("trusting itself"), "{err}");
        let err = refused(&format!("{}{}", t(""), t("")));
        assert!(err.contains("given twice"), "{err}");
        let err = refused(&t("acept = \"true\"\n"));
        assert!(err.contains("terms.toml") && err.contains("acept"), "{err}");
        let err = refused(&t("max_fraction = 2.0\n"));
        assert!(
            err.contains("d1.testnet") && err.contains("at most 1"),
            "{err:#}"
        );
        let err = refused(&t("max_gpus = 70000\n"));
        assert!(
            err.contains("d1.testnet") && err.contains("max gpus"),
            "{err:#}"
        );
        let err = refused(&t("accept = \"RequestCpus <=\"\n"));
        assert!(err.contains("accept"), "{err}");
    }
}
