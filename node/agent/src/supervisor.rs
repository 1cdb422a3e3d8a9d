//! The supervisor: starts the view, the network loop, the advertiser, the
//! negotiator, the startd and the control actor, restarts a child that
//! fails, and puts a reloaded configuration or a changed domain policy in
//! force (see the crate's supervision tree).

pub mod disk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libp2p::Multiaddr;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use starling_protocol::identity::{Freshness, Keypair, Timestamp};
use starling_storage::Store;
use tokio::sync::{mpsc, Notify};

use crate::advertiser::{Advertiser, AdvertiserArgs, AdvertiserMsg};
use crate::agent::StaticInfo;
use crate::ask::{ask_network, QUERY_TIMEOUT};
use crate::config::Config;
use crate::machine::{Identity, Probe};
use crate::network::Command;
use crate::pool::handle::{Pool, PoolRequest};
use crate::trust::Trust;
use crate::view_actor::{ViewActor, ViewArgs, ViewMsg};
use crate::{
    advertiser, execute, links, negotiator, network, pool, startd, store, submit, transfers, trust,
    usage,
};

/// Restarts of one child allowed within [`RESTART_WINDOW`].
pub const MAX_RESTARTS: usize = 5;

/// The window over which restarts are counted.
pub const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// How often the domain's policy file is looked at for a change.
const POLICY_WATCH_EVERY: Duration = Duration::from_secs(1);

/// Watches `policies/<domain>.policy` in the data directory `dir` (where
/// `starling domain install` puts it): when it changes and reads well
/// (signed by the domain's key, valid now, the same domain), the
/// supervisor puts it in force at once (`PolicyChanged`); a policy that
/// does not read is reported and the one in force kept.
fn watch_policy(
    dir: PathBuf,
    key: Arc<Keypair>,
    domain: String,
    supervisor: ActorRef<SupervisorMsg>,
) -> tokio::task::JoinHandle<()> {
    let path = dir.join("policies").join(format!("{domain}.policy"));
    let stamp = move |path: &std::path::Path| {
        std::fs::metadata(path).ok().map(|m| {
            (
                m.modified().ok(),
                m.len(),
                std::os::unix::fs::MetadataExt::ino(&m),
            )
        })
    };
    tokio::spawn(tracing::Instrument::in_current_span(async move {
        let mut seen = stamp(&path);
        loop {
            tokio::time::sleep(POLICY_WATCH_EVERY).await;
            let now = stamp(&path);
            if now == seen {
                continue;
            }
            seen = now;
            let loaded = load_trust(dir.clone(), key.clone()).await;
            match loaded {
                Ok(trust) if trust.domain == domain => {
                    let _ = supervisor.cast(SupervisorMsg::PolicyChanged(Box::new(trust)));
                }
                Ok(trust) => tracing::warn!(
                    now = %trust.domain,
                    was = %domain,
                    "the agent's domain changed on disk; it takes effect when the agent restarts"
                ),
                Err(e) => tracing::warn!(
                    error = %e,
                    "the domain's policy changed but cannot be used; the one in force is kept"
                ),
            }
        }
    }))
}

/// Reads the agent's trust from its data directory `dir` again (off the
/// async threads): its certificates and its domain's policy.
async fn load_trust(dir: PathBuf, key: Arc<Keypair>) -> Result<Trust, String> {
    tokio::task::spawn_blocking(move || {
        let data = starling_storage::DataDir::open(&dir).map_err(|e| e.to_string())?;
        trust::load(&data, &key, Timestamp::now()).map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
}

/// The IP address and TCP port of a listen address, if it has both.
fn ip_and_port(addr: &Multiaddr) -> Option<(std::net::IpAddr, u16)> {
    use libp2p::multiaddr::Protocol;
    let mut ip = None;
    for part in addr.iter() {
        match part {
            Protocol::Ip4(a) => ip = Some(std::net::IpAddr::V4(a)),
            Protocol::Ip6(a) => ip = Some(std::net::IpAddr::V6(a)),
            Protocol::Tcp(port) => return Some((ip?, port)),
            _ => {}
        }
    }
    None
}

/// Messages the supervisor handles.
#[derive(Debug)]
pub enum SupervisorMsg {
    /// What the other sides ask of the pool's actors ([`Pool`]).
    Pool(PoolRequest),
    /// The domain's policy changed on disk and reads well: put it in
    /// force ([`watch_policy`]).
    PolicyChanged(Box<Trust>),
    /// Put a configuration read again (SIGHUP) in force where it can be
    /// without a restart: the machine's owner policy and attributes, and
    /// the domain's policy read again from disk. Replies with what changed
    /// and what waits for a restart, one line each.
    Reload {
        config: Box<Config>,
        reply: RpcReplyPort<Vec<String>>,
    },
    /// Withdraw the ad (through the advertiser).
    Withdraw(RpcReplyPort<()>),
    /// Set or remove a configured attribute of the machine ad (through the
    /// advertiser), publishing at once.
    SetAttribute {
        name: String,
        value: Option<String>,
        reply: RpcReplyPort<Result<u64, String>>,
    },
    /// The job queue.
    Queue(RpcReplyPort<starling_queue::Queue>),
    /// The negotiator (for `why`).
    Negotiator(RpcReplyPort<ActorRef<negotiator::NegotiatorMsg>>),
    /// The startd (for `drain`).
    Startd(RpcReplyPort<ActorRef<startd::StartdMsg>>),
    /// The usage books and what priorities need besides the view (for
    /// `userprio`).
    Accounting(RpcReplyPort<AccountingSetup>),
    /// The data directory filled up or has room again ([`disk`]): rebuild
    /// the ad and evaluate the owner policy now.
    DiskChanged,
    /// Hand the network loop's channel and task to the agent (once).
    #[allow(clippy::type_complexity)]
    TakeNetwork(RpcReplyPort<Option<(mpsc::Sender<Command>, tokio::task::JoinHandle<()>)>>),
}

impl From<disk::Changed> for SupervisorMsg {
    fn from(_: disk::Changed) -> SupervisorMsg {
        SupervisorMsg::DiskChanged
    }
}

/// Only for ractor's `DerivedActorRef` (see [`PoolRequest`]'s).
impl TryFrom<SupervisorMsg> for disk::Changed {
    type Error = ();

    fn try_from(message: SupervisorMsg) -> Result<disk::Changed, ()> {
        match message {
            SupervisorMsg::DiskChanged => Ok(disk::Changed),
            _ => Err(()),
        }
    }
}

impl From<PoolRequest> for SupervisorMsg {
    fn from(request: PoolRequest) -> SupervisorMsg {
        SupervisorMsg::Pool(request)
    }
}

/// Only for ractor's `DerivedActorRef`, which hands back a message it
/// could not deliver.
impl TryFrom<SupervisorMsg> for PoolRequest {
    type Error = ();

    fn try_from(message: SupervisorMsg) -> Result<PoolRequest, ()> {
        match message {
            SupervisorMsg::Pool(request) => Ok(request),
            _ => Err(()),
        }
    }
}

impl From<ActorRef<SupervisorMsg>> for Pool {
    fn from(supervisor: ActorRef<SupervisorMsg>) -> Pool {
        Pool::new(supervisor.get_derived())
    }
}

impl SupervisorMsg {
    /// The pool's actors as the other sides reach them, through `supervisor`.
    pub fn pool(supervisor: &ActorRef<SupervisorMsg>) -> Pool {
        Pool::new(supervisor.get_derived())
    }
}

/// The current view actor, through the supervisor (see [`crate::pool::Pool`]).
pub(crate) async fn current_view(
    supervisor: &ActorRef<SupervisorMsg>,
) -> Result<ActorRef<ViewMsg>, String> {
    SupervisorMsg::pool(supervisor).view().await
}

/// The machine ads of the view (empty when the agent is stopping).
pub(crate) async fn machine_ads(
    supervisor: &ActorRef<SupervisorMsg>,
) -> Vec<crate::view_actor::MachineAd> {
    SupervisorMsg::pool(supervisor).machine_ads().await
}

pub(crate) struct Supervisor;

pub(crate) struct SupervisorArgs {
    pub(crate) key: Arc<Keypair>,
    pub(crate) settings: network::Settings,
    pub(crate) trust: Trust,
    pub(crate) identity: Identity,
    pub(crate) config: Config,
    pub(crate) data_dir: Option<PathBuf>,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) disk: Option<Arc<starling_storage::space::Guarded>>,
    pub(crate) probe: Option<Probe>,
    pub(crate) control: bool,
    pub(crate) info: StaticInfo,
    pub(crate) shutdown_requested: Arc<Notify>,
    /// Inbound requests of the job protocols, for the router.
    pub(crate) jobs: mpsc::Receiver<network::jobs::Inbound>,
}

pub(crate) struct SupervisorState {
    view_args: (Freshness, starling_protocol::identity::TrustAnchors),
    /// Handed to a restarted view.
    metrics: starling_web::metrics::Metrics,
    advertiser_args: AdvertiserArgs,
    network: mpsc::Sender<Command>,
    network_handle: Option<(mpsc::Sender<Command>, tokio::task::JoinHandle<()>)>,
    view: ActorRef<ViewMsg>,
    advertiser: ActorRef<AdvertiserMsg>,
    control: Option<ActorRef<crate::control::ControlMsg>>,
    control_args: Option<crate::control::ControlArgs>,
    startd: ActorRef<startd::StartdMsg>,
    startd_args: StartdSetup,
    router: transfers::Router,
    queue: starling_queue::Queue,
    negotiator: ActorRef<negotiator::NegotiatorMsg>,
    negotiator_args: NegotiatorSetup,
    occupancy: advertiser::Occupancy,
    restarts: BTreeMap<&'static str, Vec<Instant>>,
    /// The disk watch ([`disk::watch`]), aborted on the way out: it holds
    /// the store open.
    disk_task: Option<tokio::task::JoinHandle<()>>,
    /// The checkpoint keeper ([`submit::checkpoints`]), aborted on the way
    /// out: it holds the queue.
    keeper_task: tokio::task::JoinHandle<()>,
    /// The trust in force, which the policy watch replaces.
    trust: trust::LiveTrust,
    /// The policy watch ([`watch_policy`]), aborted on the way out.
    policy_task: Option<tokio::task::JoinHandle<()>>,
    /// What a configuration reload compares with and needs.
    reload: ReloadSetup,
}

/// The configuration in force, and what a reload needs besides.
struct ReloadSetup {
    config: Config,
    /// The ad attributes the agent adds to the configured ones (isolation,
    /// store place, links), kept across reloads.
    machine_extras: BTreeMap<String, String>,
    data_dir: Option<PathBuf>,
    key: Arc<Keypair>,
    /// The chunk store this agent lends, whose limits a reload or a new
    /// policy replaces.
    lent: Option<Arc<starling_storage::chunks::ChunkStore>>,
    /// `[store] refuse_domains` as the store server reads it.
    refuse_domains: tokio::sync::watch::Sender<Vec<String>>,
}

/// What a (re)started negotiator is given.
#[derive(Clone)]
struct NegotiatorSetup {
    key: Arc<Keypair>,
    certificates: Vec<starling_protocol::identity::Envelope>,
    accounting: AccountingSetup,
    /// The agent's private directory for pulled output.
    staging: PathBuf,
    migration: crate::config::Migration,
    coallocation: crate::config::Coallocation,
    links: links::Client,
    metrics: starling_web::metrics::Metrics,
}

/// The usage books, the agent's domain and the trust in force (whose
/// policy puts factors on trusted domains' users).
#[derive(Clone, Debug)]
pub struct AccountingSetup {
    pub accounting: usage::Accounting,
    pub own_domain: String,
    pub trust: trust::LiveTrust,
}

/// What a (re)started startd is given.
#[derive(Clone)]
struct StartdSetup {
    freshness: Freshness,
    store: Arc<dyn Store>,
    sandboxes: PathBuf,
    isolation: Arc<starling_process::isolation::Setup>,
    policy_interval: Duration,
    accounting: AccountingSetup,
    checkpoints: Arc<execute::checkpoint::Context>,
    migration: crate::config::Migration,
    links: links::Client,
    foreign_gpus_max: Option<u32>,
    java: std::path::PathBuf,
    shares: pool::shares::Client,
    metrics: starling_web::metrics::Metrics,
}

impl Actor for Supervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = SupervisorArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<SupervisorMsg>,
        args: SupervisorArgs,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let freshness = Freshness::default();
        let live_trust = trust::LiveTrust::new(args.trust.clone());
        let policy_task = args.data_dir.clone().map(|dir| {
            watch_policy(
                dir,
                args.key.clone(),
                args.trust.domain.clone(),
                myself.clone(),
            )
        });
        let (network_tx, network_rx) = mpsc::channel(network::COMMAND_CAPACITY);
        // Counted by the view, the shadows, pulls and the router; read by
        // `/metrics`.
        let metrics = starling_web::metrics::Metrics::default();
        let (view, _) = Actor::spawn_linked(
            None,
            ViewActor,
            ViewArgs {
                domain: args.trust.domain.clone(),
                anchors: args.trust.anchors.clone(),
                freshness,
                network: network_tx.clone(),
                metrics: metrics.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let net = network::start(
            &args.key,
            args.settings,
            view.get_derived(),
            network_tx,
            network_rx,
        )?;
        let accounting = AccountingSetup {
            accounting: usage::Accounting::load(
                args.store.clone(),
                args.config.priority.halflife_secs,
                args.info.agent_id.clone(),
            )?,
            own_domain: args.trust.domain.clone(),
            trust: live_trust.clone(),
        };
        let sandboxes = execute_dir(
            &args.config,
            args.data_dir.as_deref(),
            &args.info.agent_id.to_string(),
        );
        let isolation = {
            let (jobs, name, data, root) = (
                args.config.jobs.clone(),
                format!("starling-{}", args.info.agent_id),
                args.data_dir.clone(),
                sandboxes.clone(),
            );
            Arc::new(
                tokio::task::spawn_blocking(move || {
                    starling_process::isolation::Setup::prepare(
                        &jobs,
                        &name,
                        data.as_deref(),
                        &root,
                    )
                })
                .await??,
            )
        };
        let (disk, disk_task) = disk::watch(args.disk, myself.get_derived());
        let mut machine_extras = BTreeMap::new();
        machine_extras.extend(isolation.attributes());
        let place = store::place_of_this(&args.config.store, &args.trust.domain);
        machine_extras.extend(store::place_attributes(&place));
        let link_owner = links::Owner::new(links::Settings::of(
            &args.config.links,
            &args.trust.domain,
            args.trust
                .roles
                .contains(starling_protocol::identity::Role::Netmgr),
        ));
        machine_extras.extend(link_owner.attributes());
        let mut machine = args.config.machine.clone();
        machine.attributes.extend(machine_extras.clone());
        let lending = store::open_lent(
            &args.config.store,
            args.trust.roles,
            args.data_dir.as_deref(),
            &args.trust.store_quotas,
        )?;
        // The keeper of the domain's caps on trusted domains is its netmgr.
        let shares_keeper = args
            .trust
            .roles
            .contains(starling_protocol::identity::Role::Netmgr)
            .then(|| {
                pool::shares::Keeper::new(
                    &args.trust.domain,
                    live_trust.clone(),
                    args.config.concurrency_limits.to_limits(),
                    SupervisorMsg::pool(&myself),
                    args.data_dir.as_deref(),
                )
            });
        let shares = pool::shares::Client {
            network: net.commands.clone(),
            pool: SupervisorMsg::pool(&myself),
            me: net.peer_id,
            domain: args.trust.domain.clone(),
            keeper: shares_keeper.clone(),
        };
        let advertiser_args = AdvertiserArgs {
            key: args.key.clone(),
            certificates: args.trust.certificates.clone(),
            domain: args.trust.domain.clone(),
            identity: args.identity,
            machine,
            data_dir: args.data_dir.clone().unwrap_or_else(std::env::temp_dir),
            refresh: args.config.advertise.refresh(),
            lifetime: args.config.advertise.lifetime(),
            store: args.store,
            network: net.commands.clone(),
            view: view.clone(),
            probe: args.probe,
            accounting: Some(accounting.accounting.clone()),
            disk: disk.clone(),
            lent: lending.as_ref().map(|(_, stats)| stats.subscribe()),
            gpus: args.config.gpus.clone(),
            java: args.config.java.clone(),
            trust: live_trust.clone(),
            shares: Some(shares.clone()),
        };
        let (advertiser, _) =
            Actor::spawn_linked(None, Advertiser, advertiser_args.clone(), myself.get_cell())
                .await?;
        let (router, router_rx) = transfers::channel();
        let link_client = links::Client {
            metrics: metrics.clone(),
            network: net.commands.clone(),
            owner: link_owner.clone(),
            pool: SupervisorMsg::pool(&myself),
            me: net.peer_id,
            domain: args.trust.domain.clone(),
        };
        let startd_args = StartdSetup {
            freshness,
            store: advertiser_args.store.clone(),
            sandboxes: sandboxes.clone(),
            isolation: isolation.clone(),
            policy_interval: Duration::from_secs(args.config.machine.policy_interval_secs),
            accounting: accounting.clone(),
            checkpoints: Arc::new(execute::checkpoint::Context {
                network: net.commands.clone(),
                pool: SupervisorMsg::pool(&myself),
                key: args.key.clone(),
                place,
                lease_secs: args.config.store.lease_secs,
                me: net.peer_id.to_string(),
                links: link_client.clone(),
            }),
            migration: args.config.migration.clone(),
            links: link_client.clone(),
            foreign_gpus_max: args.config.gpus.foreign_max,
            java: args.config.java.program.clone(),
            shares,
            metrics: metrics.clone(),
        };
        let (refuse_domains, refused) =
            tokio::sync::watch::channel(args.config.store.refuse_domains.clone());
        let lent = lending.as_ref().map(|(chunks, _)| chunks.clone());
        let store_server = lending.map(|(chunks, stats)| {
            store::server::spawn(store::server::ServerArgs {
                chunks,
                network: net.commands.clone(),
                view: view.clone(),
                me: net.peer_id,
                own_domain: args.trust.domain.clone(),
                refuse_domains: refused,
                stats,
                metrics: metrics.clone(),
                links: Some(link_owner.clone()),
            })
        });
        let startd =
            spawn_startd(&myself, &startd_args, net.commands.clone(), router.clone()).await?;
        // The router lives as long as the network loop: it ends when the
        // loop drops its sender of inbound requests.
        let _router_task = transfers::spawn(
            router_rx,
            args.jobs,
            net.commands.clone(),
            startd.get_derived(),
            store_server,
            Some((link_owner.clone(), view.clone())),
            shares_keeper,
            metrics.clone(),
        );
        let queue = starling_queue::Queue::open(advertiser_args.store.clone()).await?;
        // The user log's submit events name this agent's address once it
        // listens (HTCondor writes its schedd's).
        {
            let (queue, network) = (queue.clone(), net.commands.clone());
            let alias = startd_args.checkpoints.place.machine.clone();
            tokio::spawn(async move {
                for _ in 0..50 {
                    let listen = ask_network(&network, Command::ListenAddrs)
                        .await
                        .unwrap_or_default();
                    if let Some(at) = listen.iter().find_map(ip_and_port) {
                        queue.set_host(Some(at), &alias);
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            });
        }
        let keeper_task = submit::checkpoints::spawn_keeper(submit::checkpoints::Keeper {
            queue: queue.clone(),
            network: net.commands.clone(),
            pool: SupervisorMsg::pool(&myself),
            me: args.key.agent_id(),
            place: startd_args.checkpoints.place.clone(),
            domain: args.trust.domain.clone(),
            lease_secs: args.config.store.lease_secs,
            links: link_client.clone(),
        });
        let negotiator_args = NegotiatorSetup {
            key: args.key.clone(),
            certificates: args.trust.certificates.clone(),
            accounting,
            staging: args
                .data_dir
                .clone()
                .unwrap_or_else(|| {
                    std::env::temp_dir().join(format!("starling-{}", args.info.agent_id))
                })
                .join("transfer"),
            migration: args.config.migration.clone(),
            coallocation: args.config.coallocation.clone(),
            links: link_client.clone(),
            metrics: metrics.clone(),
        };
        let negotiator = spawn_negotiator(
            &myself,
            &negotiator_args,
            queue.clone(),
            net.commands.clone(),
            router.clone(),
        )
        .await?;
        let control_args = match (&args.data_dir, args.control) {
            (Some(dir), true) => Some(crate::control::ControlArgs {
                data_dir: dir.clone(),
                supervisor: myself.clone(),
                network: net.commands.clone(),
                info: args.info,
                shutdown_requested: args.shutdown_requested,
                administrators: Arc::new(args.config.control.administrators.clone()),
                disk,
                place: startd_args.checkpoints.place.clone(),
                checkpoint_gets: Arc::new(tokio::sync::Semaphore::new(
                    crate::control::MAX_CHECKPOINT_GETS,
                )),
                links: link_owner.clone(),
                http: args.config.http.listen_addr(),
                metrics: metrics.clone(),
            }),
            _ => None,
        };
        let control = match &control_args {
            Some(c) => Some(
                Actor::spawn_linked(None, crate::control::Control, c.clone(), myself.get_cell())
                    .await?
                    .0,
            ),
            None => None,
        };
        Ok(SupervisorState {
            view_args: (freshness, args.trust.anchors),
            metrics: metrics.clone(),
            advertiser_args,
            network: net.commands.clone(),
            network_handle: Some((net.commands, net.task)),
            view,
            advertiser,
            control,
            control_args,
            startd,
            startd_args,
            router,
            queue,
            negotiator,
            negotiator_args,
            occupancy: advertiser::Occupancy::default(),
            restarts: BTreeMap::new(),
            disk_task,
            keeper_task,
            trust: live_trust,
            policy_task,
            reload: ReloadSetup {
                config: args.config.clone(),
                machine_extras,
                data_dir: args.data_dir.clone(),
                key: args.key.clone(),
                lent,
                refuse_domains,
            },
        })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<SupervisorMsg>,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(task) = state.disk_task.take() {
            task.abort();
        }
        state.keeper_task.abort();
        if let Some(task) = state.policy_task.take() {
            task.abort();
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<SupervisorMsg>,
        message: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SupervisorMsg::Pool(PoolRequest::View(reply)) => {
                let _ = reply.send(state.view.clone());
            }
            SupervisorMsg::PolicyChanged(trust) => {
                let trusted: Vec<&str> = trust.domains.iter().skip(1).map(String::as_str).collect();
                tracing::info!(
                    trusts = %trusted.join(", "),
                    "the domain's policy changed: new claims follow it; running ones run on"
                );
                state.view_args.1 = trust.anchors.clone();
                let _ = state.view.cast(ViewMsg::SetTrust {
                    anchors: trust.anchors.clone(),
                    domains: trust.domains.clone(),
                });
                let _ = state
                    .network
                    .send(Command::SetDomains(trust.domains.clone()))
                    .await;
                // The policy's `store_mib` for each domain, at once.
                if let Some(chunks) = &state.reload.lent {
                    chunks.set_limits(store::limits_of(
                        &state.reload.config.store,
                        &trust.store_quotas,
                    ));
                }
                state.trust.replace(*trust);
                // Published again at once, into the topics followed now.
                let _ = state.advertiser.cast(AdvertiserMsg::Republish);
            }
            SupervisorMsg::Reload { config, reply } => {
                let said = state.reload(&myself, *config).await;
                let _ = reply.send(said);
            }
            SupervisorMsg::Withdraw(reply) => {
                let answer = state
                    .advertiser
                    .call(AdvertiserMsg::Withdraw, Some(QUERY_TIMEOUT))
                    .await;
                if !matches!(answer, Ok(ractor::rpc::CallResult::Success(()))) {
                    tracing::warn!("the advertiser did not withdraw the ad");
                }
                let _ = reply.send(());
            }
            SupervisorMsg::SetAttribute { name, value, reply } => {
                let advertiser = state.advertiser.clone();
                // Answered from a task: the supervisor must stay free to
                // handle its children meanwhile.
                tokio::spawn(async move {
                    let answer = advertiser
                        .call(
                            |reply| AdvertiserMsg::SetAttribute { name, value, reply },
                            Some(QUERY_TIMEOUT),
                        )
                        .await;
                    let _ = reply.send(match answer {
                        Ok(ractor::rpc::CallResult::Success(r)) => r,
                        _ => Err("the advertiser did not answer in time".to_owned()),
                    });
                });
            }
            SupervisorMsg::Pool(PoolRequest::MachineAd(reply)) => {
                let advertiser = state.advertiser.clone();
                tokio::spawn(async move {
                    let answer = advertiser
                        .call(AdvertiserMsg::Current, Some(QUERY_TIMEOUT))
                        .await;
                    let _ = reply.send(match answer {
                        Ok(ractor::rpc::CallResult::Success(ad)) => ad,
                        _ => None,
                    });
                });
            }
            SupervisorMsg::Pool(PoolRequest::Occupancy(occupancy)) => {
                state.occupancy = occupancy.clone();
                let _ = state.advertiser.cast(AdvertiserMsg::Occupancy(occupancy));
            }
            SupervisorMsg::Queue(reply) => {
                let _ = reply.send(state.queue.clone());
            }
            SupervisorMsg::Negotiator(reply) => {
                let _ = reply.send(state.negotiator.clone());
            }
            SupervisorMsg::Startd(reply) => {
                let _ = reply.send(state.startd.clone());
            }
            SupervisorMsg::Accounting(reply) => {
                let _ = reply.send(state.negotiator_args.accounting.clone());
            }
            SupervisorMsg::Pool(PoolRequest::Republish) => {
                let _ = state.advertiser.cast(AdvertiserMsg::Republish);
            }
            SupervisorMsg::DiskChanged => {
                // The advertiser reads the disk state as it builds; the
                // startd's policy then finds START changed and shows it.
                let _ = state.advertiser.cast(AdvertiserMsg::Check);
                let _ = state.startd.cast(startd::StartdMsg::Policy);
            }
            SupervisorMsg::TakeNetwork(reply) => {
                let _ = reply.send(state.network_handle.take());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<SupervisorMsg>,
        event: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, why) = match event {
            SupervisionEvent::ActorFailed(cell, error) => (cell, error.to_string()),
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                (cell, reason.unwrap_or_else(|| "stopped".to_owned()))
            }
            _ => return Ok(()),
        };
        let Some(child) = state.which(&cell) else {
            return Ok(()); // an earlier instance, already replaced
        };
        tracing::warn!(child, why, "an agent actor stopped; restarting it");
        let now = Instant::now();
        let times = state.restarts.entry(child).or_default();
        times.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
        times.push(now);
        if times.len() > MAX_RESTARTS {
            tracing::error!(child, "restarted too often; stopping the agent");
            myself.stop(Some(format!(
                "{child} failed {MAX_RESTARTS} times in a minute"
            )));
            return Ok(());
        }
        match child {
            "view" => {
                let (freshness, anchors) = state.view_args.clone();
                let (view, _) = Actor::spawn_linked(
                    None,
                    ViewActor,
                    ViewArgs {
                        domain: state.advertiser_args.domain.clone(),
                        anchors,
                        freshness,
                        network: state.network.clone(),
                        metrics: state.metrics.clone(),
                    },
                    myself.get_cell(),
                )
                .await?;
                state.view = view.clone();
                let _ = state
                    .network
                    .send(Command::SetView(view.get_derived()))
                    .await;
                let _ = state.network.send(Command::PullAgain).await;
                // The advertiser follows the view, so its ad is in the new one.
                state.advertiser_args.view = view;
                let old = state.advertiser.clone();
                state.advertiser = self.spawn_advertiser(&myself, state).await?;
                old.stop(Some("following a restarted view".to_owned()));
            }
            "advertiser" => {
                state.advertiser = self.spawn_advertiser(&myself, state).await?;
                let _ = state
                    .advertiser
                    .cast(AdvertiserMsg::Occupancy(state.occupancy.clone()));
            }
            "startd" => {
                // Its claims are gone with it: submitters hear UnknownClaim
                // at their next keepalive and place their jobs again.
                state.startd = spawn_startd(
                    &myself,
                    &state.startd_args,
                    state.network.clone(),
                    state.router.clone(),
                )
                .await?;
                let _ = state
                    .router
                    .commands
                    .send(transfers::RouterCmd::SetStartd(state.startd.get_derived()))
                    .await;
            }
            "negotiator" => {
                state.negotiator = spawn_negotiator(
                    &myself,
                    &state.negotiator_args,
                    state.queue.clone(),
                    state.network.clone(),
                    state.router.clone(),
                )
                .await?;
            }
            "control" => {
                if let Some(args) = state.control_args.clone() {
                    state.control = Some(
                        Actor::spawn_linked(None, crate::control::Control, args, myself.get_cell())
                            .await?
                            .0,
                    );
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl Supervisor {
    async fn spawn_advertiser(
        &self,
        myself: &ActorRef<SupervisorMsg>,
        state: &SupervisorState,
    ) -> Result<ActorRef<AdvertiserMsg>, ActorProcessingErr> {
        Ok(Actor::spawn_linked(
            None,
            Advertiser,
            state.advertiser_args.clone(),
            myself.get_cell(),
        )
        .await?
        .0)
    }
}

async fn spawn_negotiator(
    supervisor: &ActorRef<SupervisorMsg>,
    setup: &NegotiatorSetup,
    queue: starling_queue::Queue,
    network: mpsc::Sender<Command>,
    router: transfers::Router,
) -> Result<ActorRef<negotiator::NegotiatorMsg>, ActorProcessingErr> {
    Ok(Actor::spawn_linked(
        None,
        negotiator::Negotiator,
        negotiator::NegotiatorArgs {
            queue,
            pool: SupervisorMsg::pool(supervisor),
            network,
            router,
            key: setup.key.clone(),
            certificates: setup.certificates.clone(),
            accounting: setup.accounting.accounting.clone(),
            own_domain: setup.accounting.own_domain.clone(),
            staging: setup.staging.clone(),
            migration: setup.migration.clone(),
            coallocation: setup.coallocation.clone(),
            links: setup.links.clone(),
            metrics: setup.metrics.clone(),
        },
        supervisor.get_cell(),
    )
    .await?
    .0)
}

/// Where this agent's job sandboxes go: `[jobs] execute_dir`, else
/// [`starling_process::isolation::ROOT_EXECUTE_DIR`] for a root agent (a
/// path every job account can pass through), else `<data_dir>/execute`.
fn execute_dir(config: &Config, data_dir: Option<&Path>, agent: &str) -> PathBuf {
    if let Some(dir) = &config.jobs.execute_dir {
        return dir.join(agent);
    }
    if rustix::process::geteuid().is_root() {
        return PathBuf::from(starling_process::isolation::ROOT_EXECUTE_DIR).join(agent);
    }
    data_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("starling-{agent}")))
        .join("execute")
}

async fn spawn_startd(
    supervisor: &ActorRef<SupervisorMsg>,
    setup: &StartdSetup,
    network: mpsc::Sender<Command>,
    router: transfers::Router,
) -> Result<ActorRef<startd::StartdMsg>, ActorProcessingErr> {
    Ok(Actor::spawn_linked(
        None,
        startd::Startd,
        startd::StartdArgs {
            metrics: setup.metrics.clone(),
            trust: setup.accounting.trust.clone(),
            freshness: setup.freshness,
            network,
            store: setup.store.clone(),
            pool: SupervisorMsg::pool(supervisor),
            router,
            sandboxes: setup.sandboxes.clone(),
            isolation: setup.isolation.clone(),
            policy_interval: setup.policy_interval,
            accounting: setup.accounting.accounting.clone(),
            own_domain: setup.accounting.own_domain.clone(),
            checkpoints: setup.checkpoints.clone(),
            migration: setup.migration.clone(),
            links: setup.links.clone(),
            foreign_gpus_max: setup.foreign_gpus_max,
            java: setup.java.clone(),
            shares: setup.shares.clone(),
        },
        supervisor.get_cell(),
    )
    .await?
    .0)
}

impl SupervisorState {
    /// Puts `config` in force where it can be without a restart
    /// ([`SupervisorMsg::Reload`]); says what changed, what is in force and
    /// what waits for a restart.
    async fn reload(&mut self, myself: &ActorRef<SupervisorMsg>, config: Config) -> Vec<String> {
        let mut said = Vec::new();
        let (live, mut later) = config_changes(&self.reload.config, &config);
        let (store_keys, live): (Vec<String>, Vec<String>) =
            live.into_iter().partition(|k| k.starts_with("store."));
        let (gpu_keys, live): (Vec<String>, Vec<String>) =
            live.into_iter().partition(|k| k.starts_with("gpus."));
        // GPU discovery runs again on every reload (a device may have come
        // or gone with no change to the file); the devices claims hold stay
        // theirs.
        let mut gpus = config.gpus.clone();
        gpus.foreign_max = self.reload.config.gpus.foreign_max;
        let answer = self
            .advertiser
            .call(
                |reply| AdvertiserMsg::Rediscover {
                    gpus: Box::new(gpus.clone()),
                    reply,
                },
                Some(QUERY_TIMEOUT),
            )
            .await;
        match answer {
            Ok(ractor::rpc::CallResult::Success(found)) => {
                self.advertiser_args.gpus = gpus.clone();
                self.reload.config.gpus = gpus;
                said.extend(gpu_keys.iter().map(|k| format!("{k}: in force")));
                said.extend(found);
            }
            _ => {
                said.push("gpus: not found again: the advertiser did not answer".to_owned());
            }
        }
        if !store_keys.is_empty() {
            match &self.reload.lent {
                Some(chunks) if config.store.lend_mib > 0 => {
                    let in_force = &mut self.reload.config.store;
                    in_force.lend_mib = config.store.lend_mib;
                    in_force.domain_quota_mib = config.store.domain_quota_mib.clone();
                    in_force.other_domains_mib = config.store.other_domains_mib;
                    in_force.user_quota_mib = config.store.user_quota_mib;
                    in_force.refuse_domains = config.store.refuse_domains.clone();
                    chunks.set_limits(store::limits_of(
                        in_force,
                        &self.trust.current().store_quotas,
                    ));
                    self.reload
                        .refuse_domains
                        .send_replace(in_force.refuse_domains.clone());
                    said.extend(store_keys.iter().map(|k| format!("{k}: in force")));
                }
                // Starting or stopping to lend starts or stops the store
                // peer, which a restart does.
                _ => later.extend(store_keys),
            }
        }
        if !live.is_empty() {
            let mut machine = config.machine.clone();
            machine
                .attributes
                .extend(self.reload.machine_extras.clone());
            let answer = self
                .advertiser
                .call(
                    |reply| AdvertiserMsg::SetMachine {
                        machine: Box::new(machine.clone()),
                        reply,
                    },
                    Some(QUERY_TIMEOUT),
                )
                .await;
            match answer {
                Ok(ractor::rpc::CallResult::Success(Ok(_))) => {
                    self.advertiser_args.machine = machine;
                    self.reload.config.machine = config.machine.clone();
                    for key in &live {
                        said.push(format!("{key}: in force"));
                    }
                    // The owner policy is evaluated again at once.
                    let _ = self.startd.cast(startd::StartdMsg::Policy);
                }
                Ok(ractor::rpc::CallResult::Success(Err(why))) => {
                    said.push(format!("[machine] not changed: {why}"));
                }
                _ => said.push("[machine] not changed: the advertiser did not answer".to_owned()),
            }
        }
        for key in later {
            said.push(format!("{key}: takes effect when the agent restarts"));
        }
        // The domain's policy is read again now (the watch would within a
        // second).
        if let Some(dir) = self.reload.data_dir.clone() {
            let loaded = load_trust(dir, self.reload.key.clone()).await;
            match loaded {
                Ok(trust) if trust.domain == self.trust.current().domain => {
                    let _ = myself.cast(SupervisorMsg::PolicyChanged(Box::new(trust)));
                    said.push("the domain's policy: read again, in force".to_owned());
                }
                Ok(_) => said.push(
                    "the agent's domain changed on disk: takes effect when the agent restarts"
                        .to_owned(),
                ),
                Err(e) => said.push(format!(
                    "the domain's policy cannot be used ({e}); the one in force is kept"
                )),
            }
        }
        said
    }

    fn which(&self, cell: &ActorCell) -> Option<&'static str> {
        let id = cell.get_id();
        if id == self.view.get_id() {
            Some("view")
        } else if id == self.advertiser.get_id() {
            Some("advertiser")
        } else if self.control.as_ref().is_some_and(|c| c.get_id() == id) {
            Some("control")
        } else if id == self.startd.get_id() {
            Some("startd")
        } else if id == self.negotiator.get_id() {
            Some("negotiator")
        } else {
            None
        }
    }
}

/// The keys whose values differ between the configuration in force and a
/// new one, as `section.key`: those a reload puts in force (the machine's
/// owner policy and attributes) and those that wait for a restart.
fn config_changes(old: &Config, new: &Config) -> (Vec<String>, Vec<String>) {
    /// `[machine]` keys that shape the slots or the startd's timers.
    const MACHINE_AT_RESTART: [&str; 2] = ["machine.cpus", "machine.policy_interval_secs"];
    /// `[gpus]` keys discovery takes when it runs again.
    const GPUS_LIVE: [&str; 3] = ["gpus.device", "gpus.discovery", "gpus.nvidia_smi"];
    /// `[store]` keys a running store peer takes (its limits; see
    /// `SupervisorState::reload`).
    const STORE_LIVE: [&str; 5] = [
        "store.lend_mib",
        "store.domain_quota_mib",
        "store.other_domains_mib",
        "store.user_quota_mib",
        "store.refuse_domains",
    ];
    let flat = |config: &Config| {
        let mut keys = BTreeMap::new();
        if let Ok(toml::Value::Table(table)) = toml::Value::try_from(config) {
            flatten("", &toml::Value::Table(table), &mut keys);
        }
        keys
    };
    let (old, new) = (flat(old), flat(new));
    let mut changed: Vec<String> = old
        .keys()
        .chain(new.keys())
        .filter(|k| old.get(*k) != new.get(*k))
        .cloned()
        .collect();
    changed.sort();
    changed.dedup();
    changed.into_iter().partition(|k| {
        (k.starts_with("machine.") && !MACHINE_AT_RESTART.iter().any(|r| k == r))
            || GPUS_LIVE.contains(&k.as_str())
            || STORE_LIVE
                .iter()
                .any(|live| k == live || k.starts_with(&format!("{live}.")))
    })
}

/// The leaves of a TOML table as `a.b.c` to value (arrays are leaves).
fn flatten(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, toml::Value>) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_owned(), other.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reload_puts_the_owner_policy_and_store_limits_in_force_and_the_rest_at_restart() {
        let old = Config::default();
        let mut new = old.clone();
        new.machine.start = "false".to_owned();
        new.machine.cpus = Some(2);
        new.store.lend_mib = 64;
        new.store.domain_quota_mib.insert("d1".to_owned(), 10);
        new.store.refuse_domains.push("d2".to_owned());
        new.store.lease_secs = 60;
        new.advertise.refresh_secs = 7;
        new.gpus.device.push(crate::config::DeclaredGpu {
            id: "GPU-00000001".to_owned(),
            ..Default::default()
        });
        new.gpus.foreign_max = Some(1);
        let (live, later) = config_changes(&old, &new);
        assert_eq!(
            live,
            [
                "gpus.device",
                "machine.start",
                "store.domain_quota_mib.d1",
                "store.lend_mib",
                "store.refuse_domains",
            ]
        );
        assert_eq!(
            later,
            [
                "advertise.refresh_secs",
                "gpus.foreign_max",
                "machine.cpus",
                "store.lease_secs"
            ]
        );
    }
}
