//! The agent's configuration: one TOML file, every field optional.
//!
//! [`Config::load`] reads the file (no file means [`Config::default`]),
//! refuses unknown keys and files over [`MAX_FILE_LEN`], and validates the
//! values: ClassAd expressions must parse, intervals must make sense,
//! addresses must look like multiaddrs. Command-line flags then win over the
//! file through [`Overrides`]. The example at `examples/agent.toml` in the
//! repository shows every field with its default.
//!
//! Errors name the file, the key and, where the TOML parser knows it, the
//! line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use starling_protocol::classad::{parse_expr, Name, ParseError};

/// The `[jobs]` section, kept with the code that applies it.
pub use starling_process::isolation::Jobs;

/// The largest configuration file [`Config::load`] reads, in bytes.
pub const MAX_FILE_LEN: u64 = 1024 * 1024;

/// Default listen address: every IPv4 interface, a port the OS picks.
pub const DEFAULT_LISTEN: &str = "/ip4/0.0.0.0/tcp/0";

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file exists but could not be read.
    #[error("configuration file {path} could not be read")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_LEN`].
    #[error(
        "configuration file {path} is {len} bytes; the limit is {max} bytes: \
         is this the right file?"
    )]
    TooLarge { path: PathBuf, len: u64, max: u64 },
    /// The file is not valid TOML, has an unknown key or a value of the
    /// wrong type. The source names the line, the column and the key.
    #[error("configuration file {path} is not valid")]
    Parse {
        path: PathBuf,
        #[source]
        source: Box<toml::de::Error>,
    },
    /// A ClassAd expression does not parse.
    #[error("{origin}: `{key}` is not a valid ClassAd expression")]
    Expression {
        /// The file, or "command line" / "defaults".
        origin: String,
        /// The dotted key, e.g. `machine.start`.
        key: String,
        #[source]
        source: ParseError,
    },
    /// A value is out of range or malformed.
    #[error("{origin}: `{key}`: {reason}")]
    Invalid {
        /// The file, or "command line" / "defaults".
        origin: String,
        /// The dotted key, e.g. `advertise.lifetime_secs`.
        key: String,
        reason: String,
    },
}

/// The whole configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the agent keeps its key, certificates and store.
    /// Default: unset, meaning `$STARLING_DATA_DIR`, else the user's data
    /// directory (`~/.local/share/starling` on Linux); see
    /// [`Config::data_dir`].
    pub data_dir: Option<PathBuf>,
    /// How the agent joins the network.
    pub network: Network,
    /// How often the machine ad is published and how long it lives.
    pub advertise: Advertise,
    /// What the machine ad says beyond what the agent measures.
    pub machine: Machine,
    /// How jobs run on this machine.
    pub jobs: Jobs,
    /// How users' priorities are computed (fair share).
    pub priority: Priority,
    /// Who may do what through the control socket.
    pub control: Control,
    /// Disk lent to other agents' checkpoints, and where this machine is.
    pub store: StoreConfig,
    /// When running jobs move to better machines.
    pub migration: Migration,
    /// How this agent places and queues its parallel (co-allocated) jobs.
    pub coallocation: Coallocation,
    /// The network links this agent owns and how transfers reserve them.
    pub links: Links,
    /// How the machine's GPUs are found.
    pub gpus: Gpus,
    /// The JVM that runs java-universe jobs.
    pub java: Java,
    /// The local web page and Prometheus metrics.
    pub http: Http,
    /// Whether this agent relays for agents behind NAT, and how much.
    pub relay: Relay,
    /// The domain's concurrency limits, kept by its netmgr agent.
    pub concurrency_limits: ConcurrencyLimits,
}

/// The `[concurrency_limits]` section: HTCondor's concurrency limits
/// (`NAME_LIMIT`, `CONCURRENCY_LIMIT_DEFAULT_SET`,
/// `CONCURRENCY_LIMIT_DEFAULT`) for the jobs that run on this domain's
/// machines, all together. Read by the domain's share keeper (its netmgr
/// agent, [`crate::pool::shares`]); an execute agent grants a claim
/// for a job with `concurrency_limits` only once the keeper holds its
/// units, and gives them back when the claim ends. Names are
/// case-insensitive; each limit is between 0 and 1e9 units.
///
/// ```toml
/// [concurrency_limits]
/// default = 5                     # any other name
/// limits = { xsw = 3, db = 10 }   # by name
/// sets = { large = 100 }          # large.anything
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConcurrencyLimits {
    /// The limit of a name neither named nor in a set.
    /// Default: unset, meaning no limit.
    pub default: Option<u32>,
    /// Limits by name.
    /// Default: none.
    pub limits: std::collections::BTreeMap<String, u32>,
    /// The limit of each member of a set (`large.swlicense` is in the set
    /// `large`) that is not named itself, by set.
    /// Default: none.
    pub sets: std::collections::BTreeMap<String, u32>,
}

impl ConcurrencyLimits {
    /// The limits as the share keeper's ledger takes them.
    pub fn to_limits(&self) -> starling_policies::shares::Limits {
        let lower = |m: &std::collections::BTreeMap<String, u32>| {
            m.iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), f64::from(*v)))
                .collect()
        };
        starling_policies::shares::Limits {
            named: lower(&self.limits),
            sets: lower(&self.sets),
            default: self.default.map(f64::from),
        }
    }

    fn validate(&self, invalid: &dyn Fn(&str, String) -> Error) -> Result<(), Error> {
        const MAX: u32 = 1_000_000_000;
        const MAX_NAMES: usize = 4096;
        if self.default.is_some_and(|n| n > MAX) {
            return Err(invalid(
                "concurrency_limits.default",
                format!("more than {MAX}"),
            ));
        }
        for (table, map) in [("limits", &self.limits), ("sets", &self.sets)] {
            if map.len() > MAX_NAMES {
                return Err(invalid(
                    &format!("concurrency_limits.{table}"),
                    format!("more than {MAX_NAMES} names"),
                ));
            }
            for (name, n) in map {
                let key = format!("concurrency_limits.{table}.{name}");
                let checked = if table == "sets" && name.contains('.') {
                    Err("a set's name has no .".to_owned())
                } else {
                    starling_protocol::submit::limits::check_name(name)
                };
                checked.map_err(|why| invalid(&key, why))?;
                if *n > MAX {
                    return Err(invalid(&key, format!("{n} is more than {MAX}")));
                }
            }
        }
        Ok(())
    }
}

/// The `[gpus]` section: how the machine's GPUs are found
/// ([`crate::machine::gpus`]). Declared devices replace discovery, for
/// GPUs NVML does not see (other vendors) and for tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Gpus {
    /// `auto` (NVML, else `nvidia-smi`), `nvml`, `nvidia-smi` or `off`.
    /// Default: `auto`.
    pub discovery: String,
    /// The `nvidia-smi` program. Default: `nvidia-smi`, found on `PATH`.
    pub nvidia_smi: PathBuf,
    /// Devices declared by hand, one `[[gpus.device]]` table each; when
    /// any are given, nothing is discovered. Default: none.
    pub device: Vec<DeclaredGpu>,
    /// The most GPUs jobs from other domains may hold at once here (the
    /// rest stay for the machine's own domain). Default: unset, no cap but
    /// the machine's.
    pub foreign_max: Option<u32>,
}

impl Default for Gpus {
    fn default() -> Self {
        Self {
            discovery: "auto".to_owned(),
            nvidia_smi: PathBuf::from("nvidia-smi"),
            device: Vec::new(),
            foreign_max: None,
        }
    }
}

/// The `[java]` section: the JVM java-universe jobs run on
/// ([`crate::machine::java`]), as HTCondor's `JAVA` setting. The agent
/// runs `<program> -version` at start; the machine advertises `HasJava`
/// only when that works.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Java {
    /// The `java` program. Default: `java`, found on `PATH`.
    pub program: PathBuf,
}

impl Default for Java {
    fn default() -> Self {
        Self {
            program: PathBuf::from("java"),
        }
    }
}

impl Gpus {
    fn validate(&self, invalid: &dyn Fn(&str, String) -> Error) -> Result<(), Error> {
        if !matches!(
            self.discovery.as_str(),
            "auto" | "nvml" | "nvidia-smi" | "off"
        ) {
            return Err(invalid(
                "gpus.discovery",
                format!(
                    "{:?} is not one of \"auto\", \"nvml\", \"nvidia-smi\", \"off\"",
                    self.discovery
                ),
            ));
        }
        if self.nvidia_smi.as_os_str().is_empty() {
            return Err(invalid("gpus.nvidia_smi", "must not be empty".to_owned()));
        }
        if self.foreign_max.is_some_and(|m| m as usize > MAX_GPUS) {
            return Err(invalid(
                "gpus.foreign_max",
                format!("{} is more than {MAX_GPUS}", self.foreign_max.unwrap_or(0)),
            ));
        }
        if self.device.len() > MAX_GPUS {
            return Err(invalid(
                "gpus.device",
                format!("{} devices, more than {MAX_GPUS}", self.device.len()),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, d) in self.device.iter().enumerate() {
            let key = format!("gpus.device[{i}]");
            let ok = !d.id.is_empty()
                && d.id.len() <= 64
                && d.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
            if !ok {
                return Err(invalid(
                    &format!("{key}.id"),
                    format!(
                        "{:?} is not a device id (1 to 64 letters, digits, '-' or '_', \
                         such as \"GPU-1a2b3c4d\")",
                        d.id
                    ),
                ));
            }
            if !seen.insert(d.id.to_ascii_lowercase()) {
                return Err(invalid(
                    &format!("{key}.id"),
                    format!("{:?} is declared twice", d.id),
                ));
            }
            if d.name
                .as_ref()
                .is_some_and(|n| n.len() > 256 || n.contains('\n'))
            {
                return Err(invalid(
                    &format!("{key}.name"),
                    "is longer than 256 bytes or spans lines".to_owned(),
                ));
            }
            for (field, value) in [
                ("capability", d.capability),
                ("driver_version", d.driver_version),
            ] {
                if value.is_some_and(|v| !(v.is_finite() && (0.0..=1000.0).contains(&v))) {
                    return Err(invalid(
                        &format!("{key}.{field}"),
                        format!("{} is not a version such as 8.6", value.unwrap_or(0.0)),
                    ));
                }
            }
            if d.path.as_ref().is_some_and(|p| !p.is_absolute()) {
                return Err(invalid(
                    &format!("{key}.path"),
                    "is not an absolute path".to_owned(),
                ));
            }
            if d.memory_mb.is_some_and(|m| m > 1 << 30) {
                return Err(invalid(
                    &format!("{key}.memory_mb"),
                    format!(
                        "{} MB is more than any device has",
                        d.memory_mb.unwrap_or(0)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The most GPUs one machine may have.
pub const MAX_GPUS: usize = 64;

/// A GPU declared in `[[gpus.device]]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeclaredGpu {
    /// HTCondor's id of the device, as jobs see it in
    /// `CUDA_VISIBLE_DEVICES` (`GPU-1a2b3c4d`): letters, digits, `-`, `_`.
    pub id: String,
    /// `DeviceName`. Default: unset.
    pub name: Option<String>,
    /// `Capability`, the CUDA compute capability (`8.0`). Default: unset.
    pub capability: Option<f64>,
    /// `GlobalMemoryMb`. Default: unset.
    pub memory_mb: Option<u64>,
    /// `DriverVersion`, the CUDA driver's (`12.2`). Default: unset.
    pub driver_version: Option<f64>,
    /// The device file (`/dev/nvidia3`), hidden from jobs not given the
    /// device. Default: unset.
    pub path: Option<PathBuf>,
}

// Validation refuses NaN, the one value that is not equal to itself.
impl Eq for DeclaredGpu {}

/// The `[links]` section: the network as a negotiated resource. Bulk
/// transfers of at least `min_reserved_kib` reserve every managed link on
/// their path (this host's, the peer's, and both domains' uplinks when
/// they cross domains) and are paced at the reserved rate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Links {
    /// This machine's link, both ways, in Mbit/s. Default: unset (the
    /// host link is not managed).
    pub host_mbps: Option<u32>,
    /// The domain's uplink, in Mbit/s, managed by this agent (only with the
    /// `netmgr` role in its certificate). Default: unset.
    pub uplink_mbps: Option<u32>,
    /// Seconds ahead a transfer may be admitted. Default: 60.
    pub horizon_secs: u64,
    /// The share of each link never reserved, for transfers too small to
    /// reserve (Basney's goodput reserve), in percent. Default: 5.
    pub reserve_percent: u32,
    /// Transfers smaller than this, in KiB, are not reserved. Default:
    /// 1024.
    pub min_reserved_kib: u64,
    /// How a slot is chosen: `earliest-completion`, `first-fit`,
    /// `shortest-duration`, `latest-start` or `last-fit`. Default:
    /// `earliest-completion`.
    pub strategy: String,
    /// The usage horizon of the users' network fair share on the links
    /// this agent owns, in seconds: a user's use counts half after it
    /// (Basney's NETWORK_USAGE_HORIZON). Default: 3600.
    pub usage_horizon_secs: u64,
}

impl Default for Links {
    fn default() -> Self {
        Self {
            host_mbps: None,
            uplink_mbps: None,
            horizon_secs: 60,
            reserve_percent: 5,
            min_reserved_kib: 1024,
            strategy: "earliest-completion".to_owned(),
            usage_horizon_secs: 3600,
        }
    }
}

/// The `[migration]` section: when this agent moves running jobs that
/// checkpoint to better machines ([`starling_policies::migration`]). As an
/// execute agent it proposes moves for the jobs it runs; as a submit agent
/// it decides on its own jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Migration {
    /// Move jobs at all (proposing, and accepting for one's own jobs).
    /// Default: true.
    pub enabled: bool,
    /// Dynamite's threshold `T`, in percent of the processors: a job leaves
    /// a machine whose load per processor is above it for one with more
    /// than `100 - T` percent free. Default: unset (the rule is off).
    pub threshold_percent: Option<u32>,
    /// Move a job to a faster or less loaded machine when its expected
    /// remaining time there, moving its checkpoint included, is shorter by
    /// the margin (Hector's migrate-to-idle, Basney's goodput). Default:
    /// true.
    pub to_idle: bool,
    /// The gain asked of a move, in percent of the time left (or of the
    /// load). Default: 25.
    pub margin_percent: u32,
    /// Seconds a job stays where it landed before it is moved for speed or
    /// load. Default: 300.
    pub min_residence_secs: u64,
    /// Moves per job in any hour, at most. Default: 4.
    pub max_per_hour: u32,
    /// Weigh machines by their benchmark (`Mips`). Default: true (a
    /// testnet turns it off: its agents share one host).
    pub compare_speed: bool,
    /// Seconds between looks at the running jobs. Default: 30.
    pub interval_secs: u64,
    /// Seconds a restart costs besides moving the checkpoint. Default: 10.
    pub restart_secs: u64,
}

/// `[coallocation]`: how the submit agent places the components of its
/// parallel jobs over the domains and which waiting job goes first
/// (Sinaga's Dynamic Co-allocation Service, seed 002).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Coallocation {
    /// `worst-fit` (spread over the domains with the most idle slots) or
    /// `best-fit` (pack onto the fullest that fit); a job's own
    /// `co_allocation` wins. Default: worst-fit.
    pub rule: String,
    /// `fcfs` (only the oldest waiting parallel job is started) or `fpfs`
    /// (the oldest that fits). Default: fcfs.
    pub queueing: String,
    /// Failed starts (a machine refused or was lost before every node was
    /// ready) after which a parallel job is held rather than tried again,
    /// as the thesis' Scheduler removes it. Default: 20.
    pub max_start_failures: u32,
}

impl Default for Coallocation {
    fn default() -> Coallocation {
        Coallocation {
            rule: "worst-fit".to_owned(),
            queueing: "fcfs".to_owned(),
            max_start_failures: 20,
        }
    }
}

impl Coallocation {
    pub fn rule(&self) -> starling_policies::coallocation::Rule {
        self.rule.parse().unwrap_or_default()
    }

    pub fn queueing(&self) -> starling_policies::coallocation::Queueing {
        self.queueing.parse().unwrap_or_default()
    }
}

impl Default for Migration {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold_percent: None,
            to_idle: true,
            margin_percent: 25,
            min_residence_secs: 300,
            max_per_hour: 4,
            compare_speed: true,
            interval_secs: 30,
            restart_secs: 10,
        }
    }
}

impl Migration {
    /// The decider's settings.
    pub fn settings(&self) -> starling_policies::migration::Settings {
        starling_policies::migration::Settings {
            threshold: self.threshold_percent.map(|t| f64::from(t) / 100.0),
            to_idle: self.to_idle,
            margin: f64::from(self.margin_percent) / 100.0,
            min_residence_secs: i64::try_from(self.min_residence_secs).unwrap_or(i64::MAX),
            max_per_hour: self.max_per_hour,
            compare_speed: self.compare_speed,
            restart_secs: self.restart_secs as f64,
            ..starling_policies::migration::Settings::default()
        }
    }
}

/// The `[store]` section: how much disk this agent lends for checkpoint
/// replicas (only with the `store` role), to whom, and where the machine
/// stands for placing replicas near and apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// MiB of disk lent to checkpoint chunks, at most. Default: 4096; 0
    /// lends none (the agent is then no store peer, whatever its role).
    pub lend_mib: u64,
    /// MiB each named domain's jobs may use, at most. Default: none.
    pub domain_quota_mib: BTreeMap<String, u64>,
    /// MiB the jobs of a domain not named in `domain_quota_mib` may use.
    /// Default: unset, meaning only `lend_mib` bounds them.
    pub other_domains_mib: Option<u64>,
    /// MiB one user's jobs may use, at most. Default: unset.
    pub user_quota_mib: Option<u64>,
    /// Domains whose jobs' checkpoints this agent does not keep, though
    /// it trusts them. Default: none.
    pub refuse_domains: Vec<String>,
    /// The machine's site and rack: replicas go near (same site) and apart
    /// (other racks). Advertised as `StarlingSite` and `StarlingRack`.
    pub site: Option<String>,
    pub rack: Option<String>,
    /// The host this agent runs on, as far as failures go: two replicas of
    /// a checkpoint never share one, nor the host the job ran on.
    /// Advertised as `StarlingHost`. Default: unset, meaning the machine's
    /// host name (a testnet gives each agent a host of its own).
    pub host: Option<String>,
    /// How long a store peer keeps a checkpoint its submit agent stopped
    /// renewing, in seconds. Default: 3600.
    pub lease_secs: u32,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            lend_mib: 4096,
            domain_quota_mib: BTreeMap::new(),
            other_domains_mib: None,
            user_quota_mib: None,
            refuse_domains: Vec::new(),
            site: None,
            rack: None,
            host: None,
            lease_secs: 3600,
        }
    }
}

/// The `[control]` section: who may use the control socket for what.
///
/// An agent running as root serves every local user: each may read the
/// pool and the queue, submit, and change their own jobs. Administrators
/// also change any user's jobs and the machine (drain, priority factors,
/// shutdown).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Control {
    /// Local users who administer this agent, beside root and the agent's
    /// own user, who always do. Default: none.
    pub administrators: Vec<String>,
}

/// The `[http]` section: the agent's web page (`/`) and Prometheus
/// metrics (`/metrics`), read-only and off unless `listen` is set
/// ([`starling_web`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Http {
    /// The address and port to serve on, e.g. `"127.0.0.1:9618"`.
    /// Default: unset, nothing served. An address other than loopback
    /// shows the pool to whoever can reach it, so it must be chosen
    /// explicitly (`public = true`).
    pub listen: Option<String>,
    /// Allow a `listen` address that is not loopback. Default: false.
    pub public: bool,
}

impl Http {
    /// The address to serve on, once [`Config::validate`] has passed.
    pub fn listen_addr(&self) -> Option<std::net::SocketAddr> {
        self.listen.as_deref().and_then(|a| a.parse().ok())
    }
}

/// The `[priority]` section: HTCondor's user priority, computed by every
/// agent from the usage its domain's execute agents gossip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Priority {
    /// HTCondor's `PRIORITY_HALFLIFE`: how fast a user's priority forgets
    /// past usage, in seconds. Default: 86400 (one day).
    pub halflife_secs: u64,
}

impl Default for Priority {
    fn default() -> Self {
        Self {
            halflife_secs: 86_400,
        }
    }
}

/// The `[network]` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Network {
    /// libp2p multiaddrs to listen on.
    /// Default: `["/ip4/0.0.0.0/tcp/0"]` (every IPv4 interface, any port).
    pub listen: Vec<String>,
    /// Peers to dial at start, as multiaddrs ending in `/p2p/<agent id>`.
    /// Default: `[]` (find peers by mDNS only).
    pub bootstrap: Vec<String>,
    /// Whether to find peers on the local network with mDNS.
    /// Default: `true`.
    pub mdns: bool,
    /// The most connections the agent keeps open at once, both directions.
    /// Default: `256`.
    pub max_connections: u32,
    /// Relays (libp2p circuit relay v2) to reserve a slot on and listen
    /// through, for an agent behind NAT or a firewall: multiaddrs ending in
    /// `/p2p/<agent id>` of agents that serve as relays (`[relay] serve`),
    /// dialled at start and kept connected (no need to repeat them in
    /// `bootstrap`). The agent is then reachable at `<relay>/p2p-circuit/p2p/<its id>`,
    /// which it advertises, and upgrades relayed connections to direct ones
    /// by hole punching where the NATs allow. At most [`MAX_RELAYS`].
    /// Default: `[]` (reachable only at the addresses it listens on).
    pub relays: Vec<String>,
}

/// The most relays `network.relays` may name.
pub const MAX_RELAYS: usize = 8;

impl Default for Network {
    fn default() -> Self {
        Self {
            listen: vec![DEFAULT_LISTEN.to_owned()],
            bootstrap: Vec::new(),
            mdns: true,
            max_connections: 256,
            relays: Vec::new(),
        }
    }
}

/// The `[relay]` section: serving as a circuit relay (v2) for agents that
/// cannot be dialled directly. Only an agent with an address its peers can
/// reach should serve. It relays only for peers of its own and its trusted
/// domains: a peer is admitted once it has shown a valid certificate of
/// such a domain (in the view pull every agent makes of a new peer, and
/// always of its relays), and only admitted peers may reserve a slot or
/// open a circuit. The limits below bound what even admitted peers cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Relay {
    /// Whether to serve as a relay.
    /// Default: `false`.
    pub serve: bool,
    /// Reservations (agents listening through this relay) held at once, at
    /// most; between 1 and 4096.
    /// Default: `128`.
    pub max_reservations: u32,
    /// Relayed connections open at once, at most; between 1 and 4096.
    /// Default: `64`.
    pub max_circuits: u32,
    /// How long one relayed connection may stay open, in seconds, before
    /// the relay closes it (the peers dial again when they need to);
    /// between 10 and 86400.
    /// Default: `3600`.
    pub max_circuit_secs: u64,
    /// Bytes one relayed connection may carry each way, in MiB, before the
    /// relay closes it; between 1 and 1048576 (1 TiB).
    /// Default: `1024`.
    pub max_circuit_mib: u64,
}

impl Default for Relay {
    fn default() -> Self {
        Self {
            serve: false,
            max_reservations: 128,
            max_circuits: 64,
            max_circuit_secs: 3600,
            max_circuit_mib: 1024,
        }
    }
}

/// The `[advertise]` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Advertise {
    /// Seconds between republications of an unchanged machine ad (a
    /// changed one goes out at once). Default: `300`, HTCondor's
    /// `UPDATE_INTERVAL`: the refresh only renews the ad and its drifting
    /// readings, since a dead agent leaves the views by its colleagues'
    /// suspicion, and every refresh is a message to every agent that sees
    /// the ad.
    pub refresh_secs: u64,
    /// Seconds a published ad stays valid if not refreshed; must exceed
    /// `refresh_secs`. Default: `900` (three refreshes, HTCondor's
    /// `CLASSAD_LIFETIME`).
    pub lifetime_secs: u64,
}

impl Default for Advertise {
    fn default() -> Self {
        Self {
            refresh_secs: 300,
            lifetime_secs: 900,
        }
    }
}

impl Advertise {
    /// [`Self::refresh_secs`] as a duration.
    pub fn refresh(&self) -> Duration {
        Duration::from_secs(self.refresh_secs)
    }

    /// [`Self::lifetime_secs`] as a duration.
    pub fn lifetime(&self) -> Duration {
        Duration::from_secs(self.lifetime_secs)
    }
}

/// The `[machine]` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Machine {
    /// The ad's `Name`. Default: unset, meaning `slot1@<hostname>`.
    pub name: Option<String>,
    /// HTCondor's `START`: when this machine accepts a job, as a ClassAd
    /// expression over the job (`TARGET`). Default: `"true"`.
    pub start: String,
    /// The ad's `Requirements`, checked in matchmaking.
    /// Default: `"START"` (as HTCondor's startd advertises it).
    pub requirements: String,
    /// The ad's `Rank`: which jobs this machine prefers.
    /// Default: `"0"`.
    pub rank: String,
    /// HTCondor's `SUSPEND`: when a running job is stopped (SIGSTOP), if
    /// `want_suspend` is true. Default: `"false"`.
    pub suspend: String,
    /// HTCondor's `CONTINUE`: when a suspended job goes on. Default: `"true"`.
    #[serde(rename = "continue")]
    pub continue_: String,
    /// HTCondor's `PREEMPT`: when a running job must leave (after its
    /// retirement time). Default: `"false"`.
    pub preempt: String,
    /// HTCondor's `KILL`: when a job being vacated is killed at once.
    /// Default: `"false"`.
    pub kill: String,
    /// HTCondor's `WANT_SUSPEND`: suspend rather than preempt when
    /// `suspend` holds. Default: `"false"`.
    pub want_suspend: String,
    /// HTCondor's `WANT_VACATE`: a preempted job is asked to leave (SIGTERM,
    /// `machine_max_vacate_time` to do so) rather than killed. Default:
    /// `"true"`.
    pub want_vacate: String,
    /// HTCondor's `MAXJOBRETIREMENTTIME`: seconds a job may go on running
    /// once preempted (an expression over the job). Default: `"0"`.
    pub max_job_retirement_time: String,
    /// HTCondor's `MachineMaxVacateTime`: seconds a vacated job has to
    /// leave before it is killed. Default: `"600"`.
    pub machine_max_vacate_time: String,
    /// HTCondor's `PREEMPTION_REQUIREMENTS`: when a user with a better
    /// priority may displace a running job of another user (it sees
    /// `RemoteUserPrio` and `SubmitterUserPrio`). Default: `"false"`, off as
    /// in HTCondor.
    pub preemption_requirements: String,
    /// HTCondor's `POLLING_INTERVAL`: how often the policy above is
    /// evaluated, in seconds. Default: 5.
    pub policy_interval_secs: u64,
    /// Devices (or any files) whose last access time is the last keyboard
    /// and console activity (`KeyboardIdle`, `ConsoleIdle`). Default: unset,
    /// meaning the terminals and input devices of the machine
    /// (`/dev/input/*`, `/dev/console`, `/dev/pts/*`, `/dev/tty*`).
    pub keyboard_devices: Option<Vec<PathBuf>>,
    /// A file holding the load of what else runs on the machine, in
    /// `/proc/loadavg`'s form: `LoadAvg` is then that plus the processors
    /// of the jobs running here. For a testnet whose agents share one host
    /// and emulate owners of their own. Default: unset, meaning the
    /// kernel's `/proc/loadavg`.
    pub owner_load_file: Option<PathBuf>,
    /// HTCondor's `NUM_CPUS`: the processors the machine offers. Default:
    /// unset, meaning those this process may use.
    pub cpus: Option<u32>,
    /// Extra attributes for the ad, name to ClassAd expression text, e.g.
    /// `HasGpu = "true"`. Names the agent sets itself (see
    /// [`crate::machine::AGENT_ATTRIBUTES`]) are refused.
    /// Default: `{}`.
    pub attributes: BTreeMap<String, String>,
}

impl Default for Machine {
    fn default() -> Self {
        Self {
            name: None,
            start: "true".to_owned(),
            requirements: "START".to_owned(),
            rank: "0".to_owned(),
            suspend: "false".to_owned(),
            continue_: "true".to_owned(),
            preempt: "false".to_owned(),
            kill: "false".to_owned(),
            want_suspend: "false".to_owned(),
            want_vacate: "true".to_owned(),
            max_job_retirement_time: "0".to_owned(),
            machine_max_vacate_time: "600".to_owned(),
            preemption_requirements: "false".to_owned(),
            policy_interval_secs: 5,
            keyboard_devices: None,
            owner_load_file: None,
            cpus: None,
            attributes: BTreeMap::new(),
        }
    }
}

/// What command-line flags say; each `Some` replaces the file's value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--data-dir`.
    pub data_dir: Option<PathBuf>,
    /// `--listen` (repeatable); replaces `network.listen`.
    pub listen: Option<Vec<String>>,
    /// `--bootstrap` (repeatable); replaces `network.bootstrap`.
    pub bootstrap: Option<Vec<String>>,
}

/// The configuration file an agent reads when none is named: as root,
/// `/etc/starling/agent.toml` (a machine's service); otherwise
/// `$XDG_CONFIG_HOME/starling/agent.toml`, else
/// `~/.config/starling/agent.toml` (a user's own agent).
pub fn default_path() -> Option<PathBuf> {
    if rustix::process::geteuid().is_root() {
        return Some(PathBuf::from(SYSTEM_FILE));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("starling").join("agent.toml"))
}

/// The system-wide configuration file, read by an agent run as root.
pub const SYSTEM_FILE: &str = "/etc/starling/agent.toml";

/// The file an agent reads: the one named, else [`default_path`] if it
/// exists; `None` means every value is a default.
pub fn locate(named: Option<&Path>) -> Option<PathBuf> {
    match named {
        Some(path) => Some(path.to_owned()),
        None => default_path().filter(|p| p.exists()),
    }
}

/// Where each key of a configuration file is set: `section.key` (dotted
/// for nested tables; arrays are one value) to its line, counted from 1.
/// Empty for text that does not parse (its error is reported by
/// [`Config::parse`]).
pub fn lines_of_keys(text: &str) -> BTreeMap<String, usize> {
    fn walk(
        text: &str,
        prefix: &str,
        table: &toml::de::DeTable<'_>,
        out: &mut BTreeMap<String, usize>,
    ) {
        for (key, value) in table {
            let name = if prefix.is_empty() {
                key.get_ref().to_string()
            } else {
                format!("{prefix}.{}", key.get_ref())
            };
            match value.get_ref() {
                toml::de::DeValue::Table(inner) => walk(text, &name, inner, out),
                _ => {
                    let at = key.span().start;
                    let line = text.get(..at).map_or(0, |t| t.matches('\n').count()) + 1;
                    out.insert(name, line);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    if let Ok(table) = toml::de::DeTable::parse(text) {
        walk(text, "", table.get_ref(), &mut out);
    }
    out
}

impl Config {
    /// Reads and validates the file at `path`; `None` means the defaults.
    pub fn load(path: Option<&Path>) -> Result<Config, Error> {
        let Some(path) = path else {
            return Ok(Config::default());
        };
        let read = |source| Error::Read {
            path: path.to_owned(),
            source,
        };
        let len = std::fs::metadata(path).map_err(read)?.len();
        if len > MAX_FILE_LEN {
            return Err(Error::TooLarge {
                path: path.to_owned(),
                len,
                max: MAX_FILE_LEN,
            });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        let config = Config::parse(&text).map_err(|source| Error::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
        config.validate(&path.display().to_string())?;
        Ok(config)
    }

    /// Parses TOML text without validating the values.
    pub fn parse(text: &str) -> Result<Config, toml::de::Error> {
        toml::from_str(text)
    }

    /// Applies command-line flags, which win over the file, and validates
    /// what they changed.
    pub fn apply(&mut self, overrides: Overrides) -> Result<(), Error> {
        const ORIGIN: &str = "command line";
        if let Some(dir) = overrides.data_dir {
            self.data_dir = Some(dir);
        }
        if let Some(listen) = overrides.listen {
            check_multiaddrs(ORIGIN, "--listen", &listen, false)?;
            self.network.listen = listen;
        }
        if let Some(bootstrap) = overrides.bootstrap {
            check_multiaddrs(ORIGIN, "--bootstrap", &bootstrap, true)?;
            self.network.bootstrap = bootstrap;
        }
        Ok(())
    }

    /// The data directory: the configured one, else
    /// [`starling_storage::DataDir::default_path`]; absolute (a relative
    /// one is taken from the current directory), because jobs and their
    /// reapers run elsewhere.
    pub fn data_dir(&self) -> Result<PathBuf, starling_storage::datadir::Error> {
        let dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None => starling_storage::DataDir::default_path()?,
        };
        std::path::absolute(&dir).map_err(|source| starling_storage::datadir::Error::Io {
            path: dir,
            action: "resolving the data directory",
            source,
        })
    }

    /// Checks every value; `origin` names where the values came from.
    pub fn validate(&self, origin: &str) -> Result<(), Error> {
        let invalid = |key: &str, reason: String| Error::Invalid {
            origin: origin.to_owned(),
            key: key.to_owned(),
            reason,
        };
        if matches!(&self.data_dir, Some(d) if d.as_os_str().is_empty()) {
            return Err(invalid("data_dir", "must not be empty".to_owned()));
        }
        let net = &self.network;
        check_multiaddrs(origin, "network.listen", &net.listen, false)?;
        check_multiaddrs(origin, "network.bootstrap", &net.bootstrap, true)?;
        check_multiaddrs(origin, "network.relays", &net.relays, true)?;
        if net.relays.len() > MAX_RELAYS {
            return Err(invalid(
                "network.relays",
                format!(
                    "{} relays named; name at most {MAX_RELAYS}",
                    net.relays.len()
                ),
            ));
        }
        if let Some(relay) = net.relays.iter().find(|r| r.contains("/p2p-circuit")) {
            return Err(invalid(
                "network.relays",
                format!("{relay:?}: name the relay itself, without `/p2p-circuit`"),
            ));
        }
        let relay = &self.relay;
        for (key, value, range) in [
            (
                "relay.max_reservations",
                u64::from(relay.max_reservations),
                1..=4096,
            ),
            (
                "relay.max_circuits",
                u64::from(relay.max_circuits),
                1..=4096,
            ),
            (
                "relay.max_circuit_secs",
                relay.max_circuit_secs,
                10..=86_400,
            ),
            ("relay.max_circuit_mib", relay.max_circuit_mib, 1..=1 << 20),
        ] {
            if !range.contains(&value) {
                return Err(invalid(
                    key,
                    format!(
                        "{value} is not between {} and {}",
                        range.start(),
                        range.end()
                    ),
                ));
            }
        }
        if net.max_connections == 0 {
            return Err(invalid(
                "network.max_connections",
                "must be at least 1".to_owned(),
            ));
        }
        let adv = &self.advertise;
        if adv.refresh_secs == 0 {
            return Err(invalid(
                "advertise.refresh_secs",
                "must be at least 1".to_owned(),
            ));
        }
        if adv.lifetime_secs <= adv.refresh_secs {
            return Err(invalid(
                "advertise.lifetime_secs",
                format!(
                    "{} must be longer than advertise.refresh_secs ({}), or the ad \
                     expires between refreshes",
                    adv.lifetime_secs, adv.refresh_secs
                ),
            ));
        }
        if let Some(account) = &self.jobs.account {
            let ok = !account.is_empty()
                && account.len() <= 32
                && account
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !ok {
                return Err(invalid(
                    "jobs.account",
                    format!("{account:?} is not a user name"),
                ));
            }
        }
        if !matches!(self.jobs.cgroups.as_str(), "auto" | "v1" | "v2" | "off") {
            return Err(invalid(
                "jobs.cgroups",
                format!(
                    "{:?} is not one of \"auto\", \"v1\", \"v2\", \"off\"",
                    self.jobs.cgroups
                ),
            ));
        }
        if let Some(dir) = &self.jobs.execute_dir {
            if !dir.is_absolute() {
                return Err(invalid(
                    "jobs.execute_dir",
                    format!("{} is not an absolute path", dir.display()),
                ));
            }
        }
        if let Some(n) = self.jobs.slot_accounts {
            if n > starling_process::account::MAX_SLOT_ACCOUNTS {
                return Err(invalid(
                    "jobs.slot_accounts",
                    format!(
                        "{n} is more than {}",
                        starling_process::account::MAX_SLOT_ACCOUNTS
                    ),
                ));
            }
        }
        if self.control.administrators.len() > 1024 {
            return Err(invalid(
                "control.administrators",
                format!(
                    "{} names, more than the limit of 1024",
                    self.control.administrators.len()
                ),
            ));
        }
        for name in &self.control.administrators {
            if !starling_policies::control_access::is_user_name(name) {
                return Err(invalid(
                    "control.administrators",
                    format!("{name:?} is not a user name"),
                ));
            }
        }
        if let Some(listen) = &self.http.listen {
            let addr: std::net::SocketAddr = listen.parse().map_err(|_| {
                invalid(
                    "http.listen",
                    format!("{listen:?} is not an address and port such as \"127.0.0.1:9618\""),
                )
            })?;
            if !addr.ip().is_loopback() && !self.http.public {
                return Err(invalid(
                    "http.listen",
                    format!(
                        "{addr} is reachable from other machines, which would then see \
                         the pool and its jobs; set `http.public = true` to mean it, or \
                         listen on 127.0.0.1"
                    ),
                ));
            }
        }
        let m = &self.machine;
        if let Some(name) = &m.name {
            if name.trim().is_empty() {
                return Err(invalid("machine.name", "must not be empty".to_owned()));
            }
        }
        for (key, text) in [
            ("machine.start", &m.start),
            ("machine.requirements", &m.requirements),
            ("machine.rank", &m.rank),
            ("machine.suspend", &m.suspend),
            ("machine.continue", &m.continue_),
            ("machine.preempt", &m.preempt),
            ("machine.kill", &m.kill),
            ("machine.want_suspend", &m.want_suspend),
            ("machine.want_vacate", &m.want_vacate),
            (
                "machine.max_job_retirement_time",
                &m.max_job_retirement_time,
            ),
            (
                "machine.machine_max_vacate_time",
                &m.machine_max_vacate_time,
            ),
            (
                "machine.preemption_requirements",
                &m.preemption_requirements,
            ),
        ] {
            check_expr(origin, key, text)?;
        }
        if !(1..=3600).contains(&m.policy_interval_secs) {
            return Err(invalid(
                "machine.policy_interval_secs",
                format!("{} is not between 1 and 3600", m.policy_interval_secs),
            ));
        }
        if let Some(devices) = &m.keyboard_devices {
            if devices.len() > 1024 {
                return Err(invalid(
                    "machine.keyboard_devices",
                    format!("{} devices, more than the limit of 1024", devices.len()),
                ));
            }
        }
        let st = &self.store;
        let lease = starling_protocol::checkpoint::MIN_LEASE_SECS
            ..=starling_protocol::checkpoint::MAX_LEASE_SECS;
        if !lease.contains(&st.lease_secs) {
            return Err(invalid(
                "store.lease_secs",
                format!(
                    "{} is not between {} and {}",
                    st.lease_secs,
                    lease.start(),
                    lease.end()
                ),
            ));
        }
        const MAX_MIB: u64 = 1 << 40;
        for (key, mib) in [
            ("store.lend_mib", Some(st.lend_mib)),
            ("store.other_domains_mib", st.other_domains_mib),
            ("store.user_quota_mib", st.user_quota_mib),
        ] {
            if mib.is_some_and(|m| m > MAX_MIB) {
                return Err(invalid(key, format!("more than {MAX_MIB} MiB")));
            }
        }
        for (key, label) in [
            ("store.site", &st.site),
            ("store.rack", &st.rack),
            ("store.host", &st.host),
        ] {
            if let Some(label) = label {
                if label.trim().is_empty() || label.len() > 64 || label.contains('"') {
                    return Err(invalid(
                        key,
                        format!("{label:?}: 1 to 64 characters without quotes expected"),
                    ));
                }
            }
        }
        if st.domain_quota_mib.len() > 1024 || st.refuse_domains.len() > 1024 {
            return Err(invalid(
                "store.domain_quota_mib",
                "more than 1024 domains".to_owned(),
            ));
        }
        let li = &self.links;
        for (key, mbps) in [
            ("links.host_mbps", li.host_mbps),
            ("links.uplink_mbps", li.uplink_mbps),
        ] {
            if mbps.is_some_and(|m| !(1..=100_000).contains(&m)) {
                return Err(invalid(
                    key,
                    format!("{} is not between 1 and 100000 Mbit/s", mbps.unwrap_or(0)),
                ));
            }
        }
        if !(1..=86_400).contains(&li.horizon_secs) {
            return Err(invalid(
                "links.horizon_secs",
                format!("{} is not between 1 and 86400", li.horizon_secs),
            ));
        }
        if !(10..=604_800).contains(&li.usage_horizon_secs) {
            return Err(invalid(
                "links.usage_horizon_secs",
                format!("{} is not between 10 and 604800", li.usage_horizon_secs),
            ));
        }
        if li.reserve_percent > 90 {
            return Err(invalid(
                "links.reserve_percent",
                format!("{} is not between 0 and 90", li.reserve_percent),
            ));
        }
        if li.min_reserved_kib > 1 << 30 {
            return Err(invalid(
                "links.min_reserved_kib",
                format!("{} is more than 1 TiB", li.min_reserved_kib),
            ));
        }
        if starling_policies::bandwidth::Strategy::parse(&li.strategy).is_none() {
            return Err(invalid(
                "links.strategy",
                format!(
                    "{:?}: earliest-completion, first-fit, shortest-duration, latest-start or last-fit expected",
                    li.strategy
                ),
            ));
        }
        self.gpus.validate(&invalid)?;
        self.concurrency_limits.validate(&invalid)?;
        if self.java.program.as_os_str().is_empty() {
            return Err(invalid("java.program", "must not be empty".to_owned()));
        }
        if let Some(n) = self.machine.cpus {
            if !(1..=65_536).contains(&n) {
                return Err(invalid(
                    "machine.cpus",
                    format!("{n} is not between 1 and 65536"),
                ));
            }
        }
        self.coallocation
            .rule
            .parse::<starling_policies::coallocation::Rule>()
            .map_err(|e| invalid("coallocation.rule", e))?;
        self.coallocation
            .queueing
            .parse::<starling_policies::coallocation::Queueing>()
            .map_err(|e| invalid("coallocation.queueing", e))?;
        if !(1..=10_000).contains(&self.coallocation.max_start_failures) {
            return Err(invalid(
                "coallocation.max_start_failures",
                format!(
                    "{} is not between 1 and 10000",
                    self.coallocation.max_start_failures
                ),
            ));
        }
        let mi = &self.migration;
        if mi
            .threshold_percent
            .is_some_and(|t| !(1..=100).contains(&t))
        {
            return Err(invalid(
                "migration.threshold_percent",
                format!(
                    "{} is not between 1 and 100",
                    mi.threshold_percent.unwrap_or(0)
                ),
            ));
        }
        for (key, value, range) in [
            (
                "migration.margin_percent",
                u64::from(mi.margin_percent),
                0..=100,
            ),
            (
                "migration.min_residence_secs",
                mi.min_residence_secs,
                0..=7 * 86_400,
            ),
            ("migration.max_per_hour", u64::from(mi.max_per_hour), 0..=60),
            ("migration.interval_secs", mi.interval_secs, 1..=3600),
            ("migration.restart_secs", mi.restart_secs, 0..=3600),
        ] {
            if !range.contains(&value) {
                return Err(invalid(
                    key,
                    format!(
                        "{value} is not between {} and {}",
                        range.start(),
                        range.end()
                    ),
                ));
            }
        }
        if !(1..=10 * 365 * 86_400).contains(&self.priority.halflife_secs) {
            return Err(invalid(
                "priority.halflife_secs",
                format!(
                    "{} is not between 1 and 315360000 (ten years)",
                    self.priority.halflife_secs
                ),
            ));
        }
        for (name, text) in &m.attributes {
            let key = format!("machine.attributes.{name}");
            if !is_attribute_name(name) {
                return Err(invalid(
                    &key,
                    "an attribute name is a letter or `_` followed by letters, digits \
                     or `_`"
                        .to_owned(),
                ));
            }
            if let Err(e) = Name::new(name) {
                return Err(invalid(&key, e.to_string()));
            }
            let gpu_prefix = crate::machine::GPU_ATTRIBUTE_PREFIX;
            if crate::machine::AGENT_ATTRIBUTES
                .iter()
                .any(|a| a.eq_ignore_ascii_case(name))
                || name
                    .get(..gpu_prefix.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(gpu_prefix))
            {
                return Err(invalid(
                    &key,
                    "the agent sets this attribute itself; choose another name".to_owned(),
                ));
            }
            check_expr(origin, &key, text)?;
        }
        Ok(())
    }
}

/// ClassAd's unquoted attribute names: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_attribute_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_expr(origin: &str, key: &str, text: &str) -> Result<(), Error> {
    parse_expr(text)
        .map(drop)
        .map_err(|source| Error::Expression {
            origin: origin.to_owned(),
            key: key.to_owned(),
            source,
        })
}

/// A light check: the swarm parses multiaddrs for real when it starts.
fn check_multiaddrs(
    origin: &str,
    key: &str,
    addrs: &[String],
    need_peer: bool,
) -> Result<(), Error> {
    for addr in addrs {
        let reason = if !addr.starts_with('/') || addr.len() < 2 {
            Some("a multiaddr starts with `/`, e.g. `/ip4/192.0.2.1/tcp/4001`")
        } else if need_peer && !addr.contains("/p2p/") {
            Some("the address ends in `/p2p/<agent id>`")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(Error::Invalid {
                origin: origin.to_owned(),
                key: key.to_owned(),
                reason: format!("{addr:?}: {reason}"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
