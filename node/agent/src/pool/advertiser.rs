//! The advertiser: builds this machine's ad, signs it and publishes it.
//!
//! It probes the machine once at start (with the short benchmark behind
//! `Mips`/`KFlops`), then every [`CHECK_INTERVAL`] refreshes the cheap
//! readings and rebuilds the ad. It publishes when the ad changed in a way
//! a matchmaker would notice (anything but the readings that drift all the
//! time, see [`VOLATILE`]) and at least every refresh interval; each
//! publication carries the next durable sequence number, so a restarted
//! agent's ads still replace its old ones. On shutdown it publishes a
//! withdrawal: the same ad with a window that has already closed, which
//! every view takes as "remove this agent".
//!
//! The agent's disk state ([`crate::supervisor::disk`]) goes into every ad it builds:
//! while the data directory is full the ad says `StarlingDiskFull` and
//! why, and `START` and `Requirements` are false, so no submitter matches
//! it and the startd shows the Owner state. An ad the store cannot number
//! (no room even for its sequence number) is not an error of the
//! advertiser: it is tried again at the next check.
//!
//! ## Exports
//!
//! Each publication is signed once for the domain's own agents and once
//! more for each trusted domain whose `export` term
//! ([`starling_policies::terms::exported`], evaluated on this very ad)
//! advertises the machine to it: the same ad with `StarlingAudience =
//! "<that domain>"` added and signed, for that audience's topic
//! `starling/ads/<domain>/for/<audience>/1`, with the
//! domain's `accept` term for that audience published in it
//! ([`starling_policies::terms::ACCEPT_ATTR`]), so that its submit agents
//! do not ask for claims the machine would refuse. All of them go out
//! together, as one bundle on the domain's topic `starling/ads/<domain>/2`
//! (see [`crate::network::Command::PublishAds`]): the domain's agents
//! handle one message per publication, and the two that bridge to each
//! audience hand its copy on to the audience's topic. The
//! filtering happens here, at the source, because this is the only agent
//! that signs the ad: no relay can make a copy for an audience it was not
//! signed for, and receivers refuse a copy on any other topic or meant
//! for any other domain (see `view`). The alternative, one flock-wide
//! topic of ads encrypted per audience, would send every ad to every
//! domain and need key agreement between domains; per-audience topics
//! cost one signature and one copy per trusted domain, and gossipsub
//! already sends a topic's messages only to the peers that follow it.
//!
//! When the machine stops being exported to a domain (the policy changed,
//! it now trusts the domain no more, or the ad changed so that the term
//! is false), the next publication sends that audience a withdrawal
//! instead: an ad holding only `MyType`, `StarlingDomain` and
//! `StarlingAudience`, whose window has already closed, which takes the
//! machine out of the audience's views as soon as it arrives. A policy
//! change republishes at once, and a change of what the term says is
//! noticed at the next check ([`CHECK_INTERVAL`]), so a machine leaves an
//! audience's view within seconds. A restarted advertiser does not know
//! what it exported before, so its first publication withdraws from every
//! trusted domain it does not export to (a copy from before the restart
//! would otherwise live out its lifetime there). An audience that never
//! saw the machine learns from such a withdrawal only what the signer's
//! certificate says: that the agent is of this domain.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use starling_protocol::classad::{unparse_ad, ClassAd};
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{Envelope, Keypair, Kind, Timestamp};
use starling_storage::space::Space;
use starling_storage::Store;
use tokio::sync::{mpsc, watch};

use crate::config;
use crate::machine::{self, Identity, Probe, Status};
use crate::network::Command;
use crate::view_actor::ViewMsg;

/// How often the machine is re-read and the ad rebuilt.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(5);

/// When, after start, the ad is published again regardless: the first
/// publication reaches only the peers connected at that instant, and the
/// gossip mesh takes a few heartbeats to form. Once is enough: whoever
/// both missed is brought up to date by its next comparison with a
/// colleague ([`crate::network::SYNC_INTERVAL`], the first 10 s after its
/// start). Every publication costs each agent of the pool a signature
/// check; three of them (at 2, 6 and 15 s) were most of what a forming
/// pool spent on signatures.
pub const STARTUP_REPUBLISH: [Duration; 1] = [Duration::from_secs(4)];

/// Attributes that change all the time and so do not, alone, make the ad
/// worth republishing before the refresh interval.
pub const VOLATILE: &[&str] = &[
    "MyCurrentTime",
    "LoadAvg",
    "TotalLoadAvg",
    "KeyboardIdle",
    "ConsoleIdle",
    "Disk",
    "TotalDisk",
    "ClockMin",
    "ClockDay",
    "StarlingStoreFree",
];

/// Messages the advertiser handles.
#[derive(Debug)]
pub enum AdvertiserMsg {
    /// Re-read the machine; publish if the ad changed or is due.
    Check,
    /// Publish now (one of the [`STARTUP_REPUBLISH`] times).
    Republish,
    /// Publish a withdrawal of the ad; reply once it is handed to the network.
    Withdraw(RpcReplyPort<()>),
    /// What the machine's claims hold now: the ad shows what is left, and
    /// goes out soon (at most every [`OCCUPANCY_DEBOUNCE`]).
    Occupancy(Occupancy),
    /// The ad as it would be published now.
    Current(RpcReplyPort<Option<ClassAd>>),
    /// Set (or, with `None`, remove) a configured attribute of the ad and
    /// publish at once; replies with the sequence number published.
    SetAttribute {
        name: String,
        value: Option<String>,
        reply: RpcReplyPort<Result<u64, String>>,
    },
    /// Replace the machine's configuration (its owner policy and
    /// attributes, on a configuration reload) and publish at once; replies
    /// with the sequence number published, or why the new ad does not build
    /// (the old one stays).
    SetMachine {
        machine: Box<crate::config::Machine>,
        reply: RpcReplyPort<Result<u64, String>>,
    },
    /// Run GPU discovery again with `gpus` (a configuration reload) and
    /// publish the devices found at once; a device a claim holds that is
    /// no longer found stays in the ad until its claim ends. Replies with
    /// a line saying what changed, or `None` when nothing did.
    Rediscover {
        gpus: Box<config::Gpus>,
        reply: RpcReplyPort<Option<String>>,
    },
}

pub struct Advertiser;

/// How much of the machine its claims hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Occupancy {
    pub cpus: u64,
    pub memory_mib: u64,
    pub disk_kib: u64,
    /// The GPUs claims hold: device id and the user whose job holds it
    /// (empty while the claim has no job yet).
    pub gpus: Vec<(String, String)>,
    /// Claims held (dynamic slots).
    pub claims: usize,
    /// Claims whose job runs now.
    pub busy: usize,
    /// HTCondor's `State` and `Activity` as the startd's owner policy has
    /// them (empty before the startd said: Unclaimed/Idle).
    pub state: &'static str,
    pub activity: &'static str,
    /// A drain is in force (`starling drain`): the ad says `Draining` and
    /// its `Requirements` match no job.
    pub draining: bool,
}

/// How old a probe may be when the startd asks for the live machine ad.
pub const LIVE_PROBE: Duration = Duration::from_millis(500);

/// Occupancy changes go out at most this often.
pub const OCCUPANCY_DEBOUNCE: Duration = Duration::from_millis(200);

/// What the advertiser needs; cloned into each restart.
#[derive(Clone)]
pub struct AdvertiserArgs {
    pub key: Arc<Keypair>,
    pub certificates: Vec<Envelope>,
    pub domain: String,
    pub identity: Identity,
    pub machine: config::Machine,
    pub data_dir: std::path::PathBuf,
    pub refresh: Duration,
    pub lifetime: Duration,
    pub store: Arc<dyn Store>,
    pub network: mpsc::Sender<Command>,
    pub view: ActorRef<ViewMsg>,
    /// A probe to use instead of reading the machine (many agents in one
    /// process share one, and skip the benchmark).
    pub probe: Option<Probe>,
    /// The usage books, summarised into the ad ([`crate::usage`]).
    pub accounting: Option<crate::usage::Accounting>,
    /// Whether the data directory is full ([`crate::supervisor::disk`]).
    pub disk: watch::Receiver<Space>,
    /// The figures of the disk lent to checkpoints, when this agent is a
    /// store peer ([`crate::store::server`]).
    pub lent: Option<watch::Receiver<Option<starling_storage::chunks::Stats>>>,
    /// How the machine's GPUs are found (only declared devices count where
    /// a probe is given).
    pub gpus: config::Gpus,
    /// The JVM to look for at start (`[java]`).
    pub java: config::Java,
    /// The trust in force: which domains the ad is exported to, on which
    /// terms.
    pub trust: crate::trust::LiveTrust,
    /// Asking the domain's share keeper how many free CPUs may be
    /// advertised to a trusted domain its terms cap (`export_slots`).
    pub shares: Option<crate::pool::shares::Client>,
}

/// What the ad was last exported as.
#[derive(Debug, Default)]
struct Exports {
    /// The trusted domains the last publication gave a live copy of the ad.
    to: BTreeSet<String>,
    /// The free CPUs the share keeper last let the copy for each capped
    /// domain show.
    granted: BTreeMap<String, u32>,
    /// The shortest lifetime among the ads the last publication gave out
    /// (a capped domain's copy lives only as long as its grant).
    shortest: Option<Duration>,
}

pub struct AdvertiserState {
    args: AdvertiserArgs,
    probe: Probe,
    status: Status,
    /// The stable part of the last published ad, and when it went out.
    published: Option<(String, tokio::time::Instant)>,
    last: Option<ClassAd>,
    occupancy: Occupancy,
    /// A debounced publication is scheduled.
    publish_pending: bool,
    /// When the probe was last refreshed.
    probed: tokio::time::Instant,
    /// The trusted domains the last publication gave a live copy of the ad
    /// (at start: every trusted domain, so that the first publication
    /// withdraws whatever an earlier run exported), and the grants of
    /// capped ones.
    exported: Exports,
    /// Devices no longer found that stay in the ad because a claim holds
    /// them; each leaves once its claim ends.
    vanished: BTreeSet<String>,
    /// The ad was withdrawn (the agent is stopping): publish no more.
    stopping: bool,
}

impl Actor for Advertiser {
    type Msg = AdvertiserMsg;
    type State = AdvertiserState;
    type Arguments = AdvertiserArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<AdvertiserMsg>,
        args: AdvertiserArgs,
    ) -> Result<AdvertiserState, ActorProcessingErr> {
        let probe = match &args.probe {
            Some(p) => {
                let mut p = p.clone();
                p.gpus = args
                    .gpus
                    .device
                    .iter()
                    .map(machine::gpus::declared)
                    .collect();
                p.cpus = args.machine.cpus.unwrap_or(p.cpus);
                p
            }
            None => {
                let dir = args.data_dir.clone();
                let devices = args.machine.keyboard_devices.clone();
                let settings = args.gpus.clone();
                let java = args.java.clone();
                let cpus = args.machine.cpus;
                tokio::task::spawn_blocking(move || {
                    let mut probe = Probe::read(&dir, devices.as_deref());
                    probe.cpus = cpus.unwrap_or(probe.cpus);
                    let found = machine::gpus::discover(&settings);
                    log_gpus(&found);
                    probe.gpus = found.gpus;
                    probe.java = match machine::java::detect_cached(&java) {
                        Ok(jvm) => {
                            tracing::info!(program = %jvm.program.display(), version = %jvm.version, vendor = ?jvm.vendor, "JVM found: java jobs run here");
                            Some(jvm)
                        }
                        Err(e) => {
                            tracing::info!(program = %java.program.display(), error = %e, "no JVM: this machine runs no java jobs");
                            None
                        }
                    };
                    probe
                })
                .await?
            }
        };
        let now = unix_secs();
        let exported = Exports {
            to: args.trust.current().trusted().iter().cloned().collect(),
            granted: BTreeMap::new(),
            shortest: None,
        };
        myself.send_interval(check_interval(args.refresh), || AdvertiserMsg::Check);
        for after in STARTUP_REPUBLISH {
            myself.send_after(after, || AdvertiserMsg::Republish);
        }
        // The first ad goes out at once.
        myself.cast(AdvertiserMsg::Check)?;
        Ok(AdvertiserState {
            args,
            probe,
            status: Status::unclaimed(now),
            published: None,
            last: None,
            occupancy: Occupancy::default(),
            publish_pending: false,
            probed: tokio::time::Instant::now(),
            exported,
            vanished: BTreeSet::new(),
            stopping: false,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<AdvertiserMsg>,
        message: AdvertiserMsg,
        state: &mut AdvertiserState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            AdvertiserMsg::Occupancy(occupancy) => {
                if occupancy != state.occupancy {
                    let shown = (
                        if occupancy.state.is_empty() {
                            "Unclaimed"
                        } else {
                            occupancy.state
                        },
                        if occupancy.activity.is_empty() {
                            "Idle"
                        } else {
                            occupancy.activity
                        },
                    );
                    if (shown.0, shown.1)
                        != (state.status.state.as_str(), state.status.activity.as_str())
                    {
                        state.status = machine::Status {
                            state: shown.0.to_owned(),
                            activity: shown.1.to_owned(),
                            entered: unix_secs(),
                            draining: occupancy.draining,
                            disk_full: None,
                        };
                    }
                    state.status.draining = occupancy.draining;
                    state.occupancy = occupancy;
                    state.forget_vanished();
                    if !state.publish_pending {
                        state.publish_pending = true;
                        let since = state
                            .published
                            .as_ref()
                            .map_or(OCCUPANCY_DEBOUNCE, |(_, at)| at.elapsed());
                        let wait = OCCUPANCY_DEBOUNCE.saturating_sub(since);
                        if wait.is_zero() {
                            myself.cast(AdvertiserMsg::Republish)?;
                        } else {
                            myself.send_after(wait, || AdvertiserMsg::Republish);
                        }
                    }
                }
            }
            AdvertiserMsg::Current(reply) => {
                // The startd's owner policy reads the live machine
                // (KeyboardIdle, LoadAvg), not the last published ad.
                if state.probed.elapsed() >= LIVE_PROBE {
                    state.refresh_probe();
                }
                let ad = state.build().ok();
                let _ = reply.send(ad);
            }
            AdvertiserMsg::Check => {
                if state.stopping {
                    return Ok(());
                }
                state.refresh_probe();
                state.refresh_addresses().await;
                let ad = state.build()?;
                let stable = stable_text(&ad);
                let due = match &state.published {
                    None => true,
                    Some((text, at)) => {
                        *text != stable
                            || at.elapsed()
                                >= refresh_due(effective_refresh(
                                    state.args.refresh,
                                    state.exported.shortest,
                                ))
                    }
                } || audiences(&state.args, &ad) != state.exported.to
                    || state.suspected().await;
                if due
                    && publish(&state.args, &ad, state.args.lifetime, &mut state.exported)
                        .await?
                        .is_some()
                {
                    state.published = Some((stable, tokio::time::Instant::now()));
                }
                state.last = Some(ad);
            }
            AdvertiserMsg::Republish => {
                state.publish_pending = false;
                if state.last.is_some() && !state.stopping {
                    state.refresh_addresses().await;
                    let ad = state.build()?;
                    if publish(&state.args, &ad, state.args.lifetime, &mut state.exported)
                        .await?
                        .is_some()
                    {
                        state.published = Some((stable_text(&ad), tokio::time::Instant::now()));
                    }
                    state.last = Some(ad);
                }
            }
            AdvertiserMsg::SetAttribute { name, value, reply } => {
                let mut machine = state.args.machine.clone();
                match value {
                    Some(v) => machine.attributes.insert(name, v),
                    None => machine.attributes.remove(&name),
                };
                let _ = reply.send(state.put_machine(machine).await?);
            }
            AdvertiserMsg::SetMachine { machine, reply } => {
                let _ = reply.send(state.put_machine(*machine).await?);
            }
            AdvertiserMsg::Rediscover { gpus, reply } => {
                let _ = reply.send(state.rediscover(*gpus).await?);
            }
            AdvertiserMsg::Withdraw(reply) => {
                state.stopping = true;
                if let Some(ad) = &state.last {
                    publish(&state.args, ad, Duration::ZERO, &mut state.exported).await?;
                }
                let _ = reply.send(());
            }
        }
        Ok(())
    }
}

impl AdvertiserState {
    /// Builds the ad with `machine` as the machine's configuration and
    /// publishes it at once; keeps `machine` only if the ad builds. The
    /// outer error is the store's, which stops the actor as a publish's
    /// does.
    async fn put_machine(
        &mut self,
        machine: crate::config::Machine,
    ) -> Result<Result<u64, String>, ActorProcessingErr> {
        let built = machine::build_ad(
            &self.probe,
            &machine,
            &self.args.identity,
            &self.status_now(),
            unix_secs(),
        )
        .and_then(|ad| occupied(ad, &self.occupancy, owner_load(&machine)));
        let ad = match built {
            Ok(ad) => ad,
            Err(e) => return Ok(Err(e.to_string())),
        };
        self.args.machine = machine;
        let Some(seq) = publish(&self.args, &ad, self.args.lifetime, &mut self.exported).await?
        else {
            return Ok(Err(
                "the store could not number the ad (see the agent's log)".to_owned(),
            ));
        };
        self.published = Some((stable_text(&ad), tokio::time::Instant::now()));
        self.last = Some(ad);
        Ok(Ok(seq))
    }

    /// Runs GPU discovery again with `settings` ([`AdvertiserMsg::Rediscover`]).
    async fn rediscover(
        &mut self,
        settings: config::Gpus,
    ) -> Result<Option<String>, ActorProcessingErr> {
        let probe_given = self.args.probe.is_some();
        let asked = settings.clone();
        let found = tokio::task::spawn_blocking(move || {
            machine::gpus::discover_as_configured(&asked, probe_given)
        })
        .await?;
        log_gpus(&found);
        let held: Vec<String> = self
            .occupancy
            .gpus
            .iter()
            .map(|(id, _)| id.clone())
            .collect();
        let source = found.source;
        let (gpus, kept) = machine::gpus::rediscovered(&self.probe.gpus, found.gpus, &held);
        for id in &kept {
            tracing::warn!(device = %id, "GPU no longer found, but a claim holds it: it stays assigned until its job ends");
        }
        self.args.gpus = settings;
        let ids = |gpus: &[machine::gpus::Gpu]| -> Vec<String> {
            gpus.iter().map(|g| g.id.clone()).collect()
        };
        let changed = (ids(&self.probe.gpus) != ids(&gpus)).then(|| {
            format!(
                "gpus: found again ({}): {} device{}{}",
                source.name(),
                gpus.len() - kept.len(),
                if gpus.len() - kept.len() == 1 {
                    ""
                } else {
                    "s"
                },
                match kept.len() {
                    0 => String::new(),
                    1 => format!(
                        "; {} no longer found stays assigned until its job ends",
                        kept[0]
                    ),
                    _ => format!(
                        "; {} no longer found stay assigned until their jobs end",
                        kept.join(", ")
                    ),
                }
            )
        });
        self.probe.gpus = gpus;
        self.vanished = kept.into_iter().collect();
        if changed.is_some() {
            let machine = self.args.machine.clone();
            if let Err(why) = self.put_machine(machine).await? {
                return Ok(Some(format!(
                    "gpus: the ad with the devices found again does not build: {why}"
                )));
            }
        }
        Ok(changed)
    }

    /// Drops from the ad the devices no longer found whose claims ended.
    fn forget_vanished(&mut self) {
        if self.vanished.is_empty() {
            return;
        }
        let held: BTreeSet<&str> = self
            .occupancy
            .gpus
            .iter()
            .map(|(id, _)| id.as_str())
            .collect();
        let freed: Vec<String> = self
            .vanished
            .iter()
            .filter(|id| !held.contains(id.as_str()))
            .cloned()
            .collect();
        for id in &freed {
            tracing::info!(device = %id, "the claim holding a GPU no longer found ended; the device leaves the machine ad");
            self.vanished.remove(id);
        }
        self.probe.gpus.retain(|g| !freed.contains(&g.id));
    }

    /// Whether a peer suspected us dead: our own view no longer shows the
    /// ad we published (a suspicion hides it everywhere it arrives,
    /// ours included). Publishing again refutes it: the new ad is issued
    /// after the suspicion.
    async fn suspected(&self) -> bool {
        if self.published.is_none() {
            return false;
        }
        let Ok(me) = self.args.identity.agent_id.parse() else {
            return false;
        };
        let held = self
            .args
            .view
            .call(
                |reply| ViewMsg::Holding { signer: me, reply },
                Some(crate::QUERY_TIMEOUT),
            )
            .await;
        let suspected = matches!(held, Ok(ractor::rpc::CallResult::Success(None)));
        if suspected {
            tracing::info!("a peer suspected this agent dead: publishing the ad again");
        }
        suspected
    }

    /// Where peers dial us now (`StarlingAddresses`), as the network loop
    /// listens; kept as it was when the loop does not answer.
    async fn refresh_addresses(&mut self) {
        if let Some(listen) = crate::ask_network(&self.args.network, Command::ListenAddrs).await {
            let addresses = crate::network::advertised_addresses(&listen);
            if !addresses.is_empty() {
                self.args.identity.addresses = addresses;
            }
        }
    }

    /// Re-reads the cheap, changing parts of the machine (unless a probe
    /// was given, as in-process testnets do).
    fn refresh_probe(&mut self) {
        if self.args.probe.is_none() {
            self.probe.refresh(
                &self.args.data_dir,
                self.args.machine.keyboard_devices.as_deref(),
                std::time::SystemTime::now(),
            );
            if let Some(file) = &self.args.machine.owner_load_file {
                // The emulated owner's load; the jobs' own is added where
                // the ad is built (`occupied`).
                self.probe.load_avg = std::fs::read_to_string(file)
                    .ok()
                    .as_deref()
                    .and_then(machine::parse_loadavg);
            }
        }
        self.probed = tokio::time::Instant::now();
    }

    /// The machine's status with the disk state as it is now.
    fn status_now(&self) -> Status {
        let mut status = self.status.clone();
        status.disk_full = match &*self.args.disk.borrow() {
            Space::Full { reason, .. } => Some(reason.clone()),
            Space::Ok => None,
        };
        status
    }

    /// The ad from the last probe, the configuration, the disk state and
    /// what claims hold.
    fn build(&self) -> Result<ClassAd, machine::Error> {
        let ad = machine::build_ad(
            &self.probe,
            &self.args.machine,
            &self.args.identity,
            &self.status_now(),
            unix_secs(),
        )?;
        let mut ad = occupied(ad, &self.occupancy, owner_load(&self.args.machine))?;
        if let Some(accounting) = &self.args.accounting {
            for (name, expr) in accounting.attributes() {
                ad.insert(starling_protocol::classad::Name::known(name), expr);
            }
        }
        if let Some(stats) = self.args.lent.as_ref().and_then(|l| l.borrow().clone()) {
            for (name, kib) in crate::store::attributes(&stats) {
                ad.insert(
                    starling_protocol::classad::Name::known(name),
                    starling_protocol::classad::Expr::from(starling_protocol::classad::Value::Int(
                        kib,
                    )),
                );
            }
        }
        Ok(ad)
    }
}

/// Says in the agent's log what GPU discovery found, and why it found
/// nothing where it tried and failed.
fn log_gpus(found: &machine::gpus::Discovery) {
    if found.gpus.is_empty() {
        tracing::info!(tried = ?found.tried, "no GPUs found");
        return;
    }
    let devices: Vec<String> = found
        .gpus
        .iter()
        .map(|g| format!("{} ({})", g.id, g.name.as_deref().unwrap_or("unnamed")))
        .collect();
    tracing::info!(
        source = found.source.name(),
        count = found.gpus.len(),
        devices = %devices.join(", "),
        "GPUs found"
    );
}

/// The load is an emulated owner's (`[machine] owner_load_file`): the
/// jobs' own is added to it.
fn owner_load(machine: &crate::config::Machine) -> bool {
    machine.owner_load_file.is_some()
}

/// The partitionable slot as HTCondor shows it: `Cpus`, `Memory` and `Disk`
/// are what is left for new claims; the totals stay in `Total*`. With
/// `add_jobs_load`, `LoadAvg` gains the processors claimed, as the kernel's
/// would count the jobs running on them.
fn occupied(
    mut ad: ClassAd,
    occupancy: &Occupancy,
    add_jobs_load: bool,
) -> Result<ClassAd, machine::Error> {
    use starling_protocol::classad::{Expr, Name, Value};
    let int = |ad: &ClassAd, name: &str| match ad.get(name) {
        Some(Expr::Literal(Value::Int(i))) => *i,
        _ => 0,
    };
    let left = [
        ("Cpus", "TotalCpus", occupancy.cpus),
        ("Memory", "TotalMemory", occupancy.memory_mib),
        ("Disk", "TotalDisk", occupancy.disk_kib),
    ];
    for (name, total, used) in left {
        if ad.get(total).is_some() {
            let free = (int(&ad, total) - i64::try_from(used).unwrap_or(i64::MAX)).max(0);
            ad.insert(Name::known(name), Expr::from(Value::Int(free)));
        }
    }
    if add_jobs_load && occupancy.busy > 0 {
        if let Some(Expr::Literal(Value::Real(load))) = ad.get("LoadAvg").cloned() {
            let load = Expr::from(Value::Real(load + occupancy.cpus as f64));
            ad.insert(Name::known("LoadAvg"), load.clone());
            ad.insert(Name::known("TotalLoadAvg"), load);
        }
    }
    if ad.get("DetectedGPUs").is_some() {
        // The devices claims hold are not the partitionable slot's to offer.
        let devices = starling_policies::slots::devices_of(&ad);
        let free: Vec<&starling_policies::slots::Device> = devices
            .iter()
            .filter(|d| !occupancy.gpus.iter().any(|(id, _)| *id == d.id))
            .collect();
        starling_policies::slots::set_gpu_attributes(&mut ad, &free);
        // Who holds which device, for `starling status -gpus`.
        let held = occupancy
            .gpus
            .iter()
            .map(|(id, user)| {
                let mut holder = ClassAd::new();
                holder.insert(Name::known("Id"), Expr::from(Value::string(id.as_str())));
                holder.insert(
                    Name::known("User"),
                    Expr::from(Value::string(user.as_str())),
                );
                Expr::Ad(Arc::new(holder))
            })
            .collect();
        ad.insert(Name::known("StarlingClaimedGPUs"), Expr::list(held));
    }
    ad.insert(
        Name::known("PartitionableSlot"),
        Expr::from(Value::Bool(true)),
    );
    ad.insert(
        Name::known("NumDynamicSlots"),
        Expr::from(Value::Int(
            i64::try_from(occupancy.claims).unwrap_or(i64::MAX),
        )),
    );
    Ok(ad)
}

/// The trusted domains the domain's `export` terms advertise `ad` to.
fn audiences(args: &AdvertiserArgs, ad: &ClassAd) -> BTreeSet<String> {
    exports(args, ad)
        .into_iter()
        .filter(|(_, verdict)| verdict.is_ok())
        .map(|(audience, _)| audience)
        .collect()
}

/// What the domain's `export` term for each trusted domain says of `ad`:
/// `Ok` where it is advertised there, else the reason.
fn exports(args: &AdvertiserArgs, ad: &ClassAd) -> Vec<(String, Result<(), String>)> {
    let trust = args.trust.current();
    let now = unix_secs();
    trust
        .trusted()
        .iter()
        .map(|to| {
            let verdict = starling_policies::terms::exported(
                &args.domain,
                to,
                trust.export_terms.get(to),
                ad,
                now,
            );
            (to.clone(), verdict)
        })
        .collect()
}

/// `ad` as meant for `audience`: with the audience signed into it.
fn addressed(ad: &ClassAd, audience: &str) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut copy = ad.clone();
    copy.insert(
        Name::known(gossip::AUDIENCE_ATTR),
        Expr::from(Value::string(audience)),
    );
    copy
}

/// What a withdrawal from `audience` carries: only what a view needs to
/// admit it and find the ad it removes, nothing of the machine.
fn withdrawal_for(ad: &ClassAd, domain: &str, audience: &str) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut bare = ClassAd::new();
    if let Some(my_type) = ad.get("MyType") {
        bare.insert(Name::known("MyType"), my_type.clone());
    }
    bare.insert(
        Name::known("StarlingDomain"),
        Expr::from(Value::string(domain)),
    );
    addressed(&bare, audience)
}

/// Signs `ad` with the next sequence number, valid for `lifetime`, puts it
/// in our own view and hands it to the network; then a copy for each
/// trusted domain it is exported to, and a withdrawal for each of
/// `exported` it no longer is (see the module's "Exports"), updating
/// `exported`. Returns the sequence number, or `None` when the store could
/// not give one (a full disk), for the caller to try again later.
async fn publish(
    args: &AdvertiserArgs,
    ad: &ClassAd,
    lifetime: Duration,
    exported: &mut Exports,
) -> Result<Option<u64>, ActorProcessingErr> {
    let store = args.store.clone();
    let seq = match tokio::task::spawn_blocking(move || store.next_sequence(Kind::MACHINE_AD))
        .await?
    {
        Ok(seq) => seq,
        Err(e) => {
            // A full disk is logged once, where the agent notices it.
            if e.is_disk_full() {
                tracing::debug!(error = %e, "the machine ad waits for a sequence number");
            } else {
                tracing::warn!(error = %e, "the machine ad could not be numbered; trying again later");
            }
            return Ok(None);
        }
    };
    let now = Timestamp::now();
    let ttl = u64::try_from(lifetime.as_millis()).unwrap_or(u64::MAX);
    tracing::debug!(seq, withdrawal = ttl == 0, "publishing the machine ad");
    let signed = Signed { seq, now, ttl };
    let mut ads = vec![sign(args, signed, ad.clone(), None)?];
    let withdrawing = ttl == 0;
    let trust = args.trust.current();
    let mut now_exported = BTreeSet::new();
    let mut copies = Vec::new();
    for (audience, verdict) in exports(args, ad) {
        match verdict {
            Ok(()) if !withdrawing => match capped_copy(args, ad, &audience, ttl, exported).await {
                Some((copy, ttl)) => {
                    copies.push((audience.clone(), copy, ttl));
                    now_exported.insert(audience);
                }
                None if exported.to.contains(&audience) => {
                    let bare = withdrawal_for(ad, &args.domain, &audience);
                    copies.push((audience, bare, 0));
                }
                None => {}
            },
            Ok(()) => {
                let bare = withdrawal_for(ad, &args.domain, &audience);
                copies.push((audience, bare, 0));
            }
            Err(reason) if exported.to.contains(&audience) => {
                tracing::info!(%audience, %reason, "the machine is no longer advertised to a trusted domain; withdrawing it there");
                let bare = withdrawal_for(ad, &args.domain, &audience);
                copies.push((audience, bare, 0));
            }
            Err(_) => {}
        }
    }
    // Trusted no more: withdrawn there too, as far as the peers that
    // follow its topic still carry it.
    for audience in exported.to.iter().filter(|a| !trust.trusted().contains(a)) {
        let bare = withdrawal_for(ad, &args.domain, audience);
        copies.push((audience.clone(), bare, 0));
    }
    let mut shortest = ttl;
    for (audience, copy, ttl) in copies {
        if ttl > 0 {
            shortest = shortest.min(ttl);
        }
        ads.push(sign(args, Signed { ttl, ..signed }, copy, Some(audience))?);
    }
    exported.shortest = Some(Duration::from_millis(shortest));
    send(args, ads).await?;
    exported.to = now_exported;
    Ok(Some(seq))
}

/// The sequence number, time and lifetime (milliseconds) an ad is signed
/// with.
#[derive(Debug, Clone, Copy)]
struct Signed {
    seq: u64,
    now: Timestamp,
    ttl: u64,
}

/// Signs `ad` as `signed` says and puts it in our own view: our internal
/// ad, or with `audience` the copy meant for that trusted domain. Returns
/// it as it goes to the network.
fn sign(
    args: &AdvertiserArgs,
    signed: Signed,
    ad: ClassAd,
    audience: Option<String>,
) -> Result<(Option<String>, Vec<u8>), ActorProcessingErr> {
    let envelope = gossip::seal(
        &args.key,
        signed.seq,
        signed.now,
        signed.ttl,
        AdKind::Machine,
        &ad,
        &args.certificates,
    )?;
    let bytes = envelope.to_bytes();
    let _ = args.view.cast(ViewMsg::Own {
        envelope: Box::new(envelope),
        ad,
        domain: args.domain.clone(),
        audience: audience.clone(),
    });
    Ok((audience, bytes))
}

/// The copy of `ad` for `audience`, living `ttl` (milliseconds), when the
/// domain's `export_slots` term for it leaves room: with `Cpus` cut to
/// what the share keeper grants (none: not advertised there, and a
/// keeper that cannot be asked grants none). Uncapped domains get the ad
/// as it is. Either way the copy publishes the domain's `accept` term for
/// the audience, where its policy sets one.
async fn capped_copy(
    args: &AdvertiserArgs,
    ad: &ClassAd,
    audience: &str,
    ttl: u64,
    exported: &mut Exports,
) -> Option<(ClassAd, u64)> {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut copy = addressed(ad, audience);
    let trust = args.trust.current();
    if let Some(accept) = trust.accept_terms.get(audience) {
        copy.insert(
            Name::known(starling_policies::terms::ACCEPT_ATTR),
            Expr::from(Value::string(accept.text.as_str())),
        );
    }
    if !trust.export_caps.contains_key(audience) {
        exported.granted.remove(audience);
        return Some((copy, ttl));
    }
    let free = crate::ad::integer(ad, "Cpus")
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0);
    let had = exported.granted.get(audience).copied().unwrap_or(0);
    let shares = args.shares.as_ref()?;
    let answer = shares
        .advertise(audience, free, had, Duration::from_millis(ttl))
        .await;
    let (granted, until) = match answer {
        Ok(grant) => grant,
        Err(why) => {
            tracing::warn!(%audience, reason = %why, "cannot ask how many slots to advertise to a capped domain; not advertising there");
            return None;
        }
    };
    exported.granted.insert(audience.to_owned(), granted);
    if granted == 0 {
        return None;
    }
    copy.insert(
        Name::known("Cpus"),
        Expr::from(Value::Int(i64::from(granted))),
    );
    // The copy lives no longer than the grant covers.
    let covered = until
        .saturating_duration_since(std::time::Instant::now())
        .saturating_sub(crate::pool::shares::ADVERTISE_MARGIN);
    let ttl = ttl.min(u64::try_from(covered.as_millis()).unwrap_or(u64::MAX));
    Some((copy, ttl))
}

/// Hands one publication to the network: our internal ad and the copies
/// for trusted domains, which go out together ([`Command::PublishAds`]).
async fn send(
    args: &AdvertiserArgs,
    ads: Vec<(Option<String>, Vec<u8>)>,
) -> Result<(), ActorProcessingErr> {
    args.network
        .send(Command::PublishAds(ads))
        .await
        .map_err(|_| "the network loop has stopped")?;
    Ok(())
}

/// How often to check: [`CHECK_INTERVAL`], or more often when the refresh
/// interval is shorter, so that a refresh is never late by a whole check.
fn check_interval(refresh: Duration) -> Duration {
    CHECK_INTERVAL
        .min(refresh / 2)
        .max(Duration::from_millis(100))
}

/// How often an unchanged ad goes out again: every `refresh`, or a third of
/// the shortest lifetime the last publication gave (a capped domain's
/// copy, which lives only as long as its grant), so that it is renewed
/// twice before it expires, as the ad is with the default lifetime.
fn effective_refresh(refresh: Duration, shortest: Option<Duration>) -> Duration {
    match shortest {
        Some(lifetime) if !lifetime.is_zero() => refresh.min(lifetime / 3),
        _ => refresh,
    }
}

/// When an unchanged ad is due again: half a check early, so that a tick
/// landing a hair before the refresh time does not put it off a whole
/// check (timer jitter would otherwise stretch every refresh by one).
fn refresh_due(refresh: Duration) -> Duration {
    refresh.saturating_sub(check_interval(refresh) / 2)
}

/// The ad without its [`VOLATILE`] attributes, as text to compare.
fn stable_text(ad: &ClassAd) -> String {
    let mut stable = ad.clone();
    for name in VOLATILE {
        if let Ok(name) = starling_protocol::classad::Name::new(name) {
            stable.remove(name);
        }
    }
    unparse_ad(&stable)
}

fn unix_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refresh_is_never_late_by_more_than_half_a_check() {
        for secs in [1, 2, 3, 5, 10, 60, 3600] {
            let refresh = Duration::from_secs(secs);
            let check = check_interval(refresh);
            assert!(check <= refresh / 2, "refresh {secs} s: check {check:?}");
            // The first tick at or after refresh_due is at most one check
            // after it, and refresh_due is half a check before refresh.
            assert!(refresh_due(refresh) + check <= refresh + check / 2 + Duration::from_millis(1));
        }
    }

    #[test]
    fn a_copy_that_lives_less_than_three_refreshes_is_renewed_at_a_third_of_its_life() {
        let refresh = Duration::from_secs(300);
        assert_eq!(effective_refresh(refresh, None), refresh);
        assert_eq!(
            effective_refresh(refresh, Some(Duration::from_secs(900))),
            refresh
        );
        // A capped domain's copy, as long as its grant covers.
        assert_eq!(
            effective_refresh(refresh, Some(Duration::from_secs(230))),
            Duration::from_secs(230) / 3
        );
        // A withdrawal gives nothing to renew.
        assert_eq!(effective_refresh(refresh, Some(Duration::ZERO)), refresh);
    }
}
