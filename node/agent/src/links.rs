//! The network as a negotiated resource: the links this agent owns, and
//! reserving a path before a bulk transfer.
//!
//! ```text
//! owner (every agent: its host link; a netmgr: its domain's uplink)
//!   LinkState / Hold / Commit / Release from trusted agents
//!     ──▶ policies::bandwidth::Ledger (never over its capacity, holds
//!         lapse after their lease, commitments a grace after their start)
//! client (a transfer of at least [links] min_reserved_kib)
//!   path: this host link, the peer's, and both domains' uplinks when the
//!         transfer leaves the domain (the owners advertise them)
//!     ──▶ every owner's LinkState ──▶ policies::bandwidth::find
//!     ──▶ Hold on every owner (any refusal: release the holds, read the
//!         states again, at most [`ATTEMPTS`] times) ──▶ Commit on every one
//!     ──▶ wait for the slot, move the bytes paced at its rate, Release
//! ```
//!
//! Two kinds of bulk transfer reserve: a job's input and output files
//! ([`pull`]) and a checkpoint's chunks on their way to a store peer
//! (`store::client::replicate`), which is what Basney's admission control
//! is about: a burst of checkpoints takes turns on a thin link instead of
//! all crawling at once.
//!
//! Unmanaged links (no capacity configured, or a domain without a netmgr)
//! are left out of the path; a path with no managed link, or a transfer
//! smaller than the threshold, is not reserved: it shares what the
//! reservations leave (each link keeps a reserve for that, Basney's goodput
//! reserve). The holder of a reservation is the peer that asked, as the
//! libp2p handshake proves; ids are the holder's own, so a replay of one is
//! refused as taken.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libp2p::PeerId;
use ractor::ActorRef;
use starling_policies::bandwidth::{self, Ledger, Reservation, Strategy, Want};
use starling_policies::net_share::NetShare;
use starling_policies::priority::Factors;
use starling_protocol::identity::AgentId;
use starling_protocol::links::{LinkAnswer, LinkId, LinkState, Slot};
use starling_protocol::transfer::{self, ErrorCode, TransferId};
use tokio::sync::mpsc;

use crate::network::Command;
use crate::view_actor::{agent_of, MachineAd, ViewMsg};

pub mod flights;

pub use flights::{Flight, Flights, Kind};

/// The ad attributes owners advertise: the host link's capacity, and the
/// uplink a netmgr manages and its capacity (Mbit/s).
pub const LINK_MBPS: &str = "StarlingLinkMbps";
pub const UPLINK_MBPS: &str = "StarlingUplinkMbps";
pub const UPLINK_DOMAIN: &str = "StarlingUplinkDomain";

/// How long a hold lasts before it is committed.
pub const HOLD_LEASE: Duration = Duration::from_secs(10);

/// How long after its start a committed slot waits for its transfer.
pub const START_GRACE: Duration = Duration::from_secs(10);

/// Times a path is tried (states read, held) before the transfer gives up.
pub const ATTEMPTS: usize = 3;

/// A peer with a reservation on the host link may go this much faster
/// than it reserved before it is slowed (its window's bursts).
pub const GATE_SLACK: f64 = 0.10;

/// Seconds' worth of bytes a peer may send at once after a pause.
pub const GATE_BURST_SECS: f64 = 0.25;

/// A peer that moved nothing for this long no longer shares the link.
const GATE_ACTIVE_SECS: f64 = 2.0;

/// Peers paced at once, at most; more go unpaced.
const MAX_GATED_PEERS: usize = 4096;

/// How one peer's bytes across the host link are paced.
#[derive(Debug, Default)]
struct PeerGate {
    bucket: bandwidth::Bucket,
    /// Its rate over the last window, bytes per second (`None` before a
    /// whole window), and the rate it was last allowed.
    rate: Option<f64>,
    allowed: f64,
    window_start: f64,
    window_bytes: f64,
    last: f64,
    reserved: bool,
}

/// How long the view's trusted agents are reused.
const TRUSTED_FOR: Duration = Duration::from_secs(10);

/// What this agent owns and how it reserves.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The agent's domain (whose users' priority factors weigh the shares).
    pub domain: String,
    /// Its host link, bytes per second; `None`: not managed.
    pub host: Option<f64>,
    /// The uplink it manages (netmgr): domain and bytes per second.
    pub uplink: Option<(String, f64)>,
    pub horizon_secs: f64,
    /// The share of each link never reserved.
    pub reserve: f64,
    /// Transfers smaller than this are not reserved.
    pub min_reserved: u64,
    pub strategy: Strategy,
    /// The usage horizon of the users' network fair share (seconds).
    pub usage_horizon_secs: f64,
}

impl Settings {
    /// From `[links]`; `netmgr`: the agent's certificate has the role.
    pub fn of(config: &crate::config::Links, domain: &str, netmgr: bool) -> Settings {
        let bytes = |mbps: u32| f64::from(mbps) * 1_000_000.0 / 8.0;
        Settings {
            domain: domain.to_owned(),
            host: config.host_mbps.map(bytes),
            uplink: config
                .uplink_mbps
                .filter(|_| netmgr)
                .map(|m| (domain.to_owned(), bytes(m))),
            horizon_secs: config.horizon_secs as f64,
            reserve: f64::from(config.reserve_percent) / 100.0,
            min_reserved: config.min_reserved_kib.saturating_mul(1024),
            strategy: Strategy::parse(&config.strategy).unwrap_or(Strategy::EarliestCompletion),
            usage_horizon_secs: config.usage_horizon_secs as f64,
        }
    }
}

/// The links this agent owns, and their ledgers.
pub struct Owner {
    settings: Settings,
    ledgers: Mutex<BTreeMap<LinkId, Ledger>>,
    /// Each link's fair share of its users (taken with `ledgers` held).
    shares: Mutex<BTreeMap<LinkId, NetShare>>,
    /// The domain's users' priority factors, as the view last said, and
    /// when.
    factors: Mutex<(Factors, Option<Instant>)>,
    /// The bulk transfers in flight on this agent, managed links or not.
    flights: Arc<Flights>,
    /// Each peer's pace across the host link.
    gates: Mutex<HashMap<String, PeerGate>>,
    trusted: tokio::sync::Mutex<(HashMap<AgentId, String>, Option<Instant>)>,
}

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Owner")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Seconds since the epoch, as the ledgers count.
pub fn now_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn ms(secs: f64) -> u64 {
    (secs.max(0.0) * 1000.0).round() as u64
}

fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

impl Owner {
    pub fn new(settings: Settings) -> Arc<Owner> {
        let usage_horizon = settings.usage_horizon_secs;
        let mut ledgers = BTreeMap::new();
        if let Some(capacity) = settings.host {
            ledgers.insert(
                LinkId::Host,
                Ledger::new(capacity, settings.horizon_secs, settings.reserve),
            );
        }
        if let Some((domain, capacity)) = &settings.uplink {
            ledgers.insert(
                LinkId::Uplink {
                    domain: domain.clone(),
                },
                Ledger::new(*capacity, settings.horizon_secs, settings.reserve),
            );
        }
        Arc::new(Owner {
            settings,
            shares: Mutex::new(
                ledgers
                    .keys()
                    .map(|link| (link.clone(), NetShare::new(usage_horizon)))
                    .collect(),
            ),
            ledgers: Mutex::new(ledgers),
            factors: Mutex::new((Factors::default(), None)),
            flights: Flights::new(),
            gates: Mutex::new(HashMap::new()),
            trusted: tokio::sync::Mutex::new((HashMap::new(), None)),
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The bulk transfers in flight on this agent.
    pub fn flights(&self) -> &Arc<Flights> {
        &self.flights
    }

    /// How long `bytes` to or from `peer` must wait before they cross the
    /// host link: a peer with a reservation on it goes at most at its
    /// reserved rate (and [`GATE_SLACK`] more), so a peer that sends or
    /// pulls faster than it reserved is slowed by this end; peers without
    /// one share what the reservations leave, max-min fairly by what each
    /// moved lately. Zero when the host link is not managed.
    pub fn gate(&self, peer: &str, bytes: u64) -> Duration {
        Duration::from_secs_f64(self.gate_at(peer, bytes, now_secs()).min(60.0))
    }

    fn gate_at(&self, peer: &str, bytes: u64, now: f64) -> f64 {
        let (capacity, mine, all) = {
            let Ok(mut ledgers) = self.ledgers.lock() else {
                return 0.0;
            };
            let Some(host) = ledgers.get_mut(&LinkId::Host) else {
                return 0.0;
            };
            host.expire(now);
            let (mut mine, mut all) = (0.0, 0.0);
            for (_, holder, r, _) in host.entries() {
                if r.start <= now && now < r.end {
                    all += r.rate;
                    if holder == peer {
                        mine += r.rate;
                    }
                }
            }
            (host.capacity, mine, all)
        };
        let Ok(mut gates) = self.gates.lock() else {
            return 0.0;
        };
        if gates.len() >= MAX_GATED_PEERS && !gates.contains_key(peer) {
            gates.retain(|_, g| now - g.last <= GATE_ACTIVE_SECS);
            if gates.len() >= MAX_GATED_PEERS {
                return 0.0;
            }
        }
        let allowed = if mine > 0.0 {
            mine * (1.0 + GATE_SLACK)
        } else {
            // A peer held back here (or not yet measured) would take more:
            // its demand is open; one slower than it is allowed is limited
            // elsewhere and leaves the rest to the others.
            let others: Vec<f64> = gates
                .iter()
                .filter(|(p, g)| {
                    p.as_str() != peer && !g.reserved && now - g.last <= GATE_ACTIVE_SECS
                })
                .map(|(_, g)| match g.rate {
                    Some(rate) if rate < 0.9 * g.allowed => rate,
                    _ => f64::INFINITY,
                })
                .collect();
            // What the reservations leave (never less than a sliver, so
            // unreserved bytes still move on a fully reserved link).
            let left = (capacity - all).max(capacity * 0.01);
            bandwidth::greedy_share(left, &others)
        };
        let gate = gates.entry(peer.to_owned()).or_insert_with(|| PeerGate {
            window_start: now,
            last: now,
            ..PeerGate::default()
        });
        gate.reserved = mine > 0.0;
        gate.allowed = allowed;
        if now - gate.window_start >= 1.0 {
            gate.rate = Some(gate.window_bytes / (now - gate.window_start));
            gate.window_start = now;
            gate.window_bytes = 0.0;
        }
        gate.window_bytes += bytes as f64;
        gate.last = now;
        gate.bucket.delay(bytes, allowed, now, GATE_BURST_SECS)
    }

    /// Takes up the domain's priority factors from the machine ads of the
    /// view (they weigh the users' network shares), at most every
    /// [`TRUSTED_FOR`].
    pub fn learn_factors(&self, machines: &[MachineAd]) {
        let fresh = self
            .factors
            .lock()
            .is_ok_and(|f| f.1.is_some_and(|at| at.elapsed() < TRUSTED_FOR));
        if fresh {
            return;
        }
        let now = now_secs() as i64;
        let (_, factors) = crate::pool::usage::priorities(
            machines,
            &self.settings.domain,
            &std::collections::BTreeMap::new(),
            now,
            self.settings.usage_horizon_secs,
        );
        if let Ok(mut mine) = self.factors.lock() {
            *mine = (factors, Some(Instant::now()));
        }
    }

    /// The ad attributes (name, ClassAd expression text) of the links
    /// owned.
    pub fn attributes(&self) -> Vec<(String, String)> {
        let mbps = |b: f64| format!("{}", (b * 8.0 / 1_000_000.0).round() as i64);
        let mut attributes = Vec::new();
        if let Some(host) = self.settings.host {
            attributes.push((LINK_MBPS.to_owned(), mbps(host)));
        }
        if let Some((domain, uplink)) = &self.settings.uplink {
            attributes.push((UPLINK_MBPS.to_owned(), mbps(*uplink)));
            attributes.push((UPLINK_DOMAIN.to_owned(), starling_queue::quote(domain)));
        }
        attributes
    }

    /// A link's state now, for a requester or `starling net`.
    pub fn state(&self, link: &LinkId) -> Option<LinkState> {
        let now = now_secs();
        let mut ledgers = self.ledgers.lock().ok()?;
        let ledger = ledgers.get_mut(link)?;
        ledger.expire(now);
        let mut slots: Vec<Slot> = ledger
            .entries()
            .map(|(_, _, r, _)| Slot {
                start_ms: ms(r.start),
                end_ms: ms(r.end),
                rate: r.rate.round() as u64,
            })
            .collect();
        slots.sort_by_key(|s| s.start_ms);
        slots.truncate(starling_protocol::links::MAX_SLOTS);
        Some(LinkState {
            capacity: ledger.reservable().round() as u64,
            horizon_ms: ms(ledger.horizon),
            now_ms: ms(now),
            slots,
        })
    }

    /// Every link owned with its reservations, for `starling net`.
    pub fn summary(&self) -> Vec<starling_control::LinkSummary> {
        let now = now_secs();
        let mbps = |bytes: f64| bytes * 8.0 / 1_000_000.0;
        let Ok(mut ledgers) = self.ledgers.lock() else {
            return Vec::new();
        };
        let shares = self.shares.lock().ok();
        ledgers
            .iter_mut()
            .map(|(id, ledger)| {
                ledger.expire(now);
                let reservations: Vec<starling_control::LinkReservation> = ledger
                    .entries()
                    .map(
                        |(i, holder, r, committed)| starling_control::LinkReservation {
                            id: format!("{i:016x}"),
                            holder: holder.to_owned(),
                            start: r.start,
                            end: r.end,
                            rate_mbps: mbps(r.rate),
                            committed,
                        },
                    )
                    .collect();
                let now_reserved = ledger
                    .entries()
                    .filter(|(_, _, r, _)| r.start <= now && now < r.end)
                    .map(|(_, _, r, _)| r.rate)
                    .sum::<f64>();
                let users = shares
                    .as_ref()
                    .and_then(|s| s.get(id))
                    .map(|share| {
                        share
                            .users(now)
                            .into_iter()
                            .take(32)
                            .map(|(user, used, waiting)| starling_control::LinkUser {
                                user,
                                used_mib: used / (1024.0 * 1024.0),
                                waiting,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                starling_control::LinkSummary {
                    link: id.to_string(),
                    capacity_mbps: mbps(ledger.capacity),
                    reservable_mbps: mbps(ledger.reservable()),
                    reserved_now_mbps: mbps(now_reserved).max(0.0),
                    reservations,
                    users,
                }
            })
            .collect()
    }

    /// Carries out a link request of `holder` (a peer id, or this agent).
    pub fn serve(&self, holder: &str, request: &transfer::Request) -> transfer::Response {
        let refuse = |reason: String| transfer::Response::Error {
            transfer: TransferId(0),
            code: ErrorCode::Declined,
            reason,
        };
        let now = now_secs();
        let link = match request {
            transfer::Request::LinkState { link, .. }
            | transfer::Request::Hold { link, .. }
            | transfer::Request::Commit { link, .. }
            | transfer::Request::Release { link, .. } => link,
            _ => return refuse("not a link request".to_owned()),
        };
        if let transfer::Request::LinkState { link, user } = request {
            if let (Some(user), Ok(mut shares)) = (user, self.shares.lock()) {
                if let Some(share) = shares.get_mut(link) {
                    share.asked(user, now);
                }
            }
            return match self.state(link) {
                Some(state) => transfer::Response::Link(LinkAnswer::State(state)),
                None => refuse(format!("this agent does not manage a {link}")),
            };
        }
        let Ok(mut ledgers) = self.ledgers.lock() else {
            return refuse("the link ledger is unavailable".to_owned());
        };
        let Some(ledger) = ledgers.get_mut(link) else {
            return refuse(format!("this agent does not manage a {link}"));
        };
        let done = match request {
            transfer::Request::Hold {
                id,
                slot,
                lease_ms,
                user,
                ..
            } => {
                let r = Reservation {
                    start: secs(slot.start_ms),
                    end: secs(slot.end_ms),
                    rate: slot.rate as f64,
                };
                let bytes = r.rate * (r.end - r.start).max(0.0);
                let mut shares = self.shares.lock().ok();
                let share = shares.as_mut().and_then(|s| s.get_mut(link));
                if let (Some(user), Some(share)) = (user.as_deref(), share) {
                    let factors = self.factors.lock().ok();
                    let weight = |name: &str| {
                        1.0 / factors.as_ref().map_or(1.0, |f| f.0.factor_of(name, 1.0))
                    };
                    if let Err(exceeded) =
                        share.check(user, bytes, ledger.reservable(), &weight, now)
                    {
                        return refuse(format!("{link}: {exceeded}"));
                    }
                    ledger.hold(*id, holder, r, now, secs(*lease_ms)).map(|()| {
                        share.admitted(user, bytes, now);
                        LinkAnswer::Held { id: *id }
                    })
                } else {
                    ledger
                        .hold(*id, holder, r, now, secs(*lease_ms))
                        .map(|()| LinkAnswer::Held { id: *id })
                }
            }
            transfer::Request::Commit { id, .. } => ledger
                .commit(*id, holder, now, START_GRACE.as_secs_f64())
                .map(|()| LinkAnswer::Committed { id: *id }),
            transfer::Request::Release { id, .. } => ledger
                .release(*id, holder)
                .map(|()| LinkAnswer::Released { id: *id }),
            _ => return refuse("not a link request".to_owned()),
        };
        match done {
            Ok(answer) => transfer::Response::Link(answer),
            Err(why) => refuse(format!("{link}: {why}")),
        }
    }

    /// Serves a request from `peer`, which must be an agent of a trusted
    /// domain (its machine ad is in the view).
    pub async fn serve_peer(
        &self,
        view: &ActorRef<ViewMsg>,
        peer: PeerId,
        request: &transfer::Request,
    ) -> transfer::Response {
        if !self.is_trusted(view, &peer).await {
            return transfer::Response::Error {
                transfer: TransferId(0),
                code: ErrorCode::Declined,
                reason: "links are reserved only for agents of trusted domains".to_owned(),
            };
        }
        self.serve(&peer.to_string(), request)
    }

    async fn is_trusted(&self, view: &ActorRef<ViewMsg>, peer: &PeerId) -> bool {
        let Some(agent) = agent_of(peer) else {
            return false;
        };
        let mut trusted = self.trusted.lock().await;
        let fresh = trusted.1.is_some_and(|at| at.elapsed() < TRUSTED_FOR);
        if fresh && trusted.0.contains_key(&agent) {
            return true;
        }
        if let Ok(ractor::rpc::CallResult::Success(machines)) = view
            .call(ViewMsg::Machines, Some(crate::QUERY_TIMEOUT))
            .await
        {
            let machines: Vec<MachineAd> = machines;
            self.learn_factors(&machines);
            trusted.0 = machines.into_iter().map(|m| (m.signer, m.domain)).collect();
            trusted.1 = Some(Instant::now());
        }
        trusted.0.contains_key(&agent)
    }
}

/// One link of a path and who owns it (`None`: this agent).
#[derive(Debug, Clone, PartialEq)]
pub struct Hop {
    pub owner: Option<PeerId>,
    pub link: LinkId,
}

/// What a transfer needs to reserve its path.
#[derive(Clone)]
pub struct Client {
    /// Pulled bytes are counted here.
    pub metrics: starling_web::metrics::Metrics,
    pub network: mpsc::Sender<Command>,
    pub owner: Arc<Owner>,
    pub pool: crate::pool::Pool,
    pub me: PeerId,
    pub domain: String,
}

/// A reservation held on every link of a path.
#[derive(Debug)]
pub struct Reserved {
    pub id: u64,
    pub slot: Reservation,
    pub path: Vec<Hop>,
    /// From the first state read to the last commit.
    pub negotiated: Duration,
}

fn text(ad: &starling_protocol::classad::ClassAd, name: &str) -> Option<String> {
    crate::ad::text(ad, name)
}

fn number(ad: &starling_protocol::classad::ClassAd, name: &str) -> Option<i64> {
    crate::ad::integer(ad, name)
}

/// What a bulk transfer is for: how `starling net` lists it, and the user
/// whose network fair share it is charged to.
#[derive(Debug, Clone, PartialEq)]
pub struct Purpose {
    pub kind: Kind,
    pub job: Option<starling_storage::JobId>,
    pub user: Option<String>,
}

impl Purpose {
    /// A transfer of the job `ad` describes, for its `User`.
    pub fn of_job(kind: Kind, ad: &starling_protocol::classad::ClassAd) -> Purpose {
        Purpose {
            kind,
            job: job_of(ad),
            user: text(ad, "User"),
        }
    }
}

/// The job an ad describes (`ClusterId`.`ProcId`), to list its transfers.
pub fn job_of(ad: &starling_protocol::classad::ClassAd) -> Option<starling_storage::JobId> {
    let cluster = u64::try_from(number(ad, "ClusterId")?).ok()?;
    let proc = u32::try_from(number(ad, "ProcId")?).ok()?;
    Some(starling_storage::JobId::new(cluster, proc))
}

/// The managed links between this agent and `peer`, from the view.
pub fn path(client: &Client, machines: &[MachineAd], peer: PeerId) -> Vec<Hop> {
    let mut hops = Vec::new();
    if client.owner.settings.host.is_some() {
        hops.push(Hop {
            owner: None,
            link: LinkId::Host,
        });
    }
    let Some(agent) = agent_of(&peer) else {
        return hops;
    };
    let Some(theirs) = machines.iter().find(|m| m.signer == agent) else {
        return hops;
    };
    if number(&theirs.ad, LINK_MBPS).is_some() {
        hops.push(Hop {
            owner: Some(peer),
            link: LinkId::Host,
        });
    }
    if theirs.domain != client.domain {
        for domain in [client.domain.clone(), theirs.domain.clone()] {
            let manager = machines.iter().find(|m| {
                m.domain == domain
                    && text(&m.ad, UPLINK_DOMAIN).as_deref() == Some(domain.as_str())
                    && number(&m.ad, UPLINK_MBPS).is_some()
            });
            if let Some(m) = manager {
                let owner = PeerId::from_bytes(&m.signer.to_peer_id_bytes())
                    .ok()
                    .filter(|p| *p != client.me);
                hops.push(Hop {
                    owner,
                    link: LinkId::Uplink { domain },
                });
            }
        }
    }
    hops
}

impl Client {
    async fn ask(&self, hop: &Hop, request: transfer::Request) -> Result<LinkAnswer, String> {
        let response = match hop.owner {
            None => self.owner.serve(&self.me.to_string(), &request),
            Some(peer) => {
                crate::network::jobs::ask(&self.network, |reply| Command::Transfer {
                    peer,
                    request,
                    reply,
                })
                .await?
            }
        };
        match response {
            transfer::Response::Link(answer) => Ok(answer),
            transfer::Response::Error { reason, .. } => Err(reason),
            other => Err(format!("unexpected answer {other:?}")),
        }
    }

    /// Reserves a slot for `bytes` to or from `peer` on every managed link
    /// between them, for `user`'s transfer (charged to its network fair
    /// share on each link); `Ok(None)` when nothing needs reserving.
    pub async fn reserve(
        &self,
        peer: PeerId,
        bytes: u64,
        user: Option<&str>,
    ) -> Result<Option<Reserved>, String> {
        if bytes < self.owner.settings.min_reserved {
            return Ok(None);
        }
        let machines = self.pool.machine_ads().await;
        self.owner.learn_factors(&machines);
        let path = path(self, &machines, peer);
        if path.is_empty() {
            return Ok(None);
        }
        let started = Instant::now();
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            let (links, horizon) = self.read_path(&path, user).await?;
            let want = want(bytes, &links, horizon);
            let refs: Vec<&bandwidth::Link> = links.iter().collect();
            let Some(slot) = bandwidth::find(&refs, &want, self.owner.settings.strategy) else {
                return Err(format!(
                    "no slot on the path within the horizon ({horizon:.0} s): the links are full"
                ));
            };
            let mut bytes = [0u8; 8];
            let _ = getrandom::fill(&mut bytes);
            let id = u64::from_le_bytes(bytes);
            let wire = Slot {
                start_ms: ms(slot.start),
                end_ms: ms(slot.end).max(ms(slot.start) + 1),
                rate: (slot.rate.floor() as u64).max(1),
            };
            let mut held = Vec::new();
            let mut refused = None;
            for hop in &path {
                let hold = transfer::Request::Hold {
                    id,
                    link: hop.link.clone(),
                    slot: wire,
                    lease_ms: HOLD_LEASE.as_millis() as u64,
                    user: user.map(str::to_owned),
                };
                match self.ask(hop, hold).await {
                    Ok(_) => held.push(hop.clone()),
                    Err(why) => {
                        refused = Some(why);
                        break;
                    }
                }
            }
            if let Some(why) = refused {
                self.release_on(id, &held).await;
                last = why;
                continue;
            }
            for hop in &path {
                let commit = transfer::Request::Commit {
                    id,
                    link: hop.link.clone(),
                };
                if let Err(why) = self.ask(hop, commit).await {
                    self.release_on(id, &path).await;
                    return Err(format!("committing the reservation failed: {why}"));
                }
            }
            return Ok(Some(Reserved {
                id,
                slot,
                path,
                negotiated: started.elapsed(),
            }));
        }
        Err(format!(
            "the path could not be held in {ATTEMPTS} tries: {last}"
        ))
    }

    /// Every owner's state of the links of `path`, as the slot finder
    /// takes them, and the shortest horizon among them (seconds). `user`
    /// is told to each owner: it waits for the link.
    async fn read_path(
        &self,
        path: &[Hop],
        user: Option<&str>,
    ) -> Result<(Vec<bandwidth::Link>, f64), String> {
        let mut links = Vec::with_capacity(path.len());
        let mut horizon = f64::INFINITY;
        for hop in path {
            let state = match self
                .ask(
                    hop,
                    transfer::Request::LinkState {
                        link: hop.link.clone(),
                        user: user.map(str::to_owned),
                    },
                )
                .await?
            {
                LinkAnswer::State(state) => state,
                other => return Err(format!("unexpected answer {other:?}")),
            };
            horizon = horizon.min(secs(state.horizon_ms));
            links.push(bandwidth::Link {
                capacity: state.capacity as f64,
                reservations: state
                    .slots
                    .iter()
                    .map(|s| Reservation {
                        start: secs(s.start_ms),
                        end: secs(s.end_ms),
                        rate: s.rate as f64,
                    })
                    .collect(),
            });
        }
        Ok((links, horizon))
    }

    /// Whether a transfer of `bytes` to or from `peer` would be admitted
    /// now (a slot on every managed link of the path that starts within
    /// the horizon), without reserving anything: what a submit agent asks
    /// before it claims a machine for a job with that much input (Basney's
    /// match-failure reason: a machine whose path is full is not a match
    /// now). `Err` names each link that is full and until when, e.g.
    /// "the uplink of d0.testnet is full until 10:02:07 UTC for 12.0 MiB
    /// of input".
    pub async fn admissible(&self, peer: PeerId, bytes: u64) -> Result<(), String> {
        if bytes < self.owner.settings.min_reserved {
            return Ok(());
        }
        let machines = self.pool.machine_ads().await;
        let path = path(self, &machines, peer);
        if path.is_empty() {
            return Ok(());
        }
        let (links, horizon) = self.read_path(&path, None).await?;
        let want = want(bytes, &links, horizon);
        let strategy = self.owner.settings.strategy;
        let refs: Vec<&bandwidth::Link> = links.iter().collect();
        if bandwidth::find(&refs, &want, strategy).is_some() {
            return Ok(());
        }
        let full: Vec<String> = path
            .iter()
            .zip(&links)
            .filter(|(_, link)| bandwidth::find(&[*link], &want, strategy).is_none())
            .map(|(hop, link)| {
                let until = link
                    .reservations
                    .iter()
                    .map(|r| r.end)
                    .fold(want.earliest, f64::max);
                let whose = match (&hop.link, hop.owner) {
                    (LinkId::Host, None) => "this machine's host link".to_owned(),
                    (LinkId::Host, Some(_)) => "the machine's host link".to_owned(),
                    (uplink, _) => format!("the {uplink}"),
                };
                format!("{whose} is full until {} UTC", clock(until))
            })
            .collect();
        let mib = bytes as f64 / (1024.0 * 1024.0);
        Err(if full.is_empty() {
            format!(
                "the links to it have no common free slot within the horizon ({horizon:.0} s) \
                 for {mib:.1} MiB of input"
            )
        } else {
            format!("{} for {mib:.1} MiB of input", full.join("; "))
        })
    }

    async fn release_on(&self, id: u64, hops: &[Hop]) {
        for hop in hops {
            let release = transfer::Request::Release {
                id,
                link: hop.link.clone(),
            };
            let _ = self.ask(hop, release).await;
        }
    }

    /// Gives a reservation back (the transfer ended, or failed).
    pub async fn release(&self, reserved: &Reserved) {
        self.release_on(reserved.id, &reserved.path).await;
    }
}

/// What a transfer of `bytes` asks of a path of `links` whose shortest
/// horizon is `horizon` seconds: to start within it, as fast as the
/// slowest link allows.
fn want(bytes: u64, links: &[bandwidth::Link], horizon: f64) -> Want {
    let now = now_secs();
    let least = links
        .iter()
        .map(|l| l.capacity)
        .fold(f64::INFINITY, f64::min)
        .max(1.0);
    Want {
        bytes: bytes as f64,
        earliest: now + 0.05,
        // It must start within the horizon; it may end past it.
        deadline: now + horizon + bytes as f64 / least,
        min_rate: 1.0,
        max_rate: f64::INFINITY,
    }
}

/// Unix seconds as `HH:MM:SS` of the day, UTC.
fn clock(unix: f64) -> String {
    let secs = unix.max(0.0) as u64 % 86_400;
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Paces a transfer at `rate` bytes per second from when it starts.
#[derive(Debug)]
pub struct Pace {
    rate: f64,
    started: tokio::time::Instant,
    moved: u64,
    /// Where the bytes are counted for `starling net` and `q -l`.
    flight: Option<Flight>,
    /// For a transfer without a reservation: the host link's owner and
    /// the peer at the other end, whose share of what reservations leave
    /// it keeps to.
    gate: Option<(Arc<Owner>, String)>,
}

impl Pace {
    pub fn new(rate: f64) -> Pace {
        Pace {
            rate: rate.max(1.0),
            started: tokio::time::Instant::now(),
            moved: 0,
            flight: None,
            gate: None,
        }
    }

    /// A pace that never waits: it only counts.
    pub fn unlimited() -> Pace {
        Pace::new(f64::INFINITY)
    }

    /// A transfer without a reservation to or from `peer`: it keeps to
    /// its max-min share of what the reservations leave on this agent's
    /// host link (no limit when the host link is not managed).
    pub fn unreserved(owner: &Arc<Owner>, peer: PeerId) -> Pace {
        Pace {
            gate: Some((owner.clone(), peer.to_string())),
            ..Pace::unlimited()
        }
    }

    /// Counts the bytes into `flight` too.
    pub fn counting(mut self, flight: Flight) -> Pace {
        self.flight = Some(flight);
        self
    }

    /// Counts `bytes` moved and waits until the rate allows more.
    pub async fn moved(&mut self, bytes: u64) {
        if let Some(flight) = &self.flight {
            flight.moved(bytes);
        }
        self.moved += bytes;
        if let Some((owner, peer)) = &self.gate {
            let wait = owner.gate(peer, bytes);
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
        }
        if !self.rate.is_finite() {
            return;
        }
        let due = self.started + Duration::from_secs_f64(self.moved as f64 / self.rate);
        tokio::time::sleep_until(due).await;
    }
}

/// How long a transfer waits to be admitted on a full path before it goes
/// unreserved.
pub const ADMISSION_WAIT: Duration = Duration::from_secs(600);

/// Reserves the path to `peer` for `bytes` as admission control says:
/// waiting (up to `wait`) while the links are full within the horizon.
/// `None` when nothing needs reserving, or when nothing was admitted in
/// time (the transfer then moves unreserved, sharing what reservations
/// leave, rather than never).
pub async fn admit(
    client: &Client,
    peer: PeerId,
    bytes: u64,
    wait: Duration,
    user: Option<&str>,
) -> Option<Reserved> {
    let asked = Instant::now();
    loop {
        match client.reserve(peer, bytes, user).await {
            Ok(reserved) => return reserved,
            Err(why) if asked.elapsed() < wait => {
                tracing::info!(%why, bytes, "waiting for the path to admit the transfer");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(why) => {
                tracing::warn!(%why, bytes, "the path admitted nothing in time; moving the bytes unreserved");
                return None;
            }
        }
    }
}

/// A bulk transfer of chunks under admission control (a checkpoint's on
/// its way to or from a store peer): the path reserved, if it needed
/// reserving and was admitted in time, and the pace its chunks keep, one
/// for all the chunks in flight (the window keeps the link busy, the pace
/// keeps it at the reserved rate).
pub struct Bulk {
    reserved: Option<Reserved>,
    pace: Option<tokio::sync::Mutex<Pace>>,
    started: Instant,
}

impl Bulk {
    /// Reserves the path to `peer` for `bytes` (with `links`; waiting up
    /// to `wait` for admission) and waits for the slot to start.
    /// The transfer is listed as its `purpose` says among the flights in
    /// the meantime.
    pub async fn start(
        links: Option<&Client>,
        peer: PeerId,
        bytes: u64,
        wait: Duration,
        purpose: &Purpose,
    ) -> Bulk {
        let flight = links.filter(|_| bytes > 0).map(|l| {
            l.owner
                .flights
                .register(purpose.kind, peer, purpose.job, bytes)
        });
        let reserved = match links {
            Some(links) if bytes > 0 => {
                admit(links, peer, bytes, wait, purpose.user.as_deref()).await
            }
            _ => None,
        };
        if let Some(flight) = &flight {
            match &reserved {
                Some(r) => flight.admitted(r.slot.rate),
                None => flight.unreserved(),
            }
        }
        if let Some(reserved) = &reserved {
            until_start(&reserved.slot).await;
        }
        // The pace counts from the slot's start.
        let pace = flight.map(|flight| {
            let pace = match (&reserved, links) {
                (Some(r), _) => Pace::new(r.slot.rate),
                (None, Some(links)) => Pace::unreserved(&links.owner, peer),
                (None, None) => Pace::unlimited(),
            };
            tokio::sync::Mutex::new(pace.counting(flight))
        });
        Bulk {
            pace,
            reserved,
            started: Instant::now(),
        }
    }

    /// The pace each chunk waits for before it moves (it only counts the
    /// bytes when unreserved).
    pub fn pace(&self) -> Option<&tokio::sync::Mutex<Pace>> {
        self.pace.as_ref()
    }

    /// Gives the reservation back and logs what the transfer achieved
    /// (`moved`: its bytes, when it succeeded) as `what`.
    pub async fn finish(
        self,
        links: Option<&Client>,
        peer: PeerId,
        moved: Option<u64>,
        what: &str,
    ) {
        let (Some(reserved), Some(links)) = (&self.reserved, links) else {
            return;
        };
        links.release(reserved).await;
        if let Some(bytes) = moved {
            let took = self.started.elapsed().as_secs_f64();
            tracing::info!(
                %peer,
                bytes,
                rate = reserved.slot.rate.round(),
                achieved = (bytes as f64 / took.max(1e-3)).round(),
                negotiated_ms = reserved.negotiated.as_millis(),
                hops = reserved.path.len(),
                "{what} in a reserved slot"
            );
        }
    }
}

/// Waits until the reserved slot starts (now if it has).
pub async fn until_start(slot: &Reservation) {
    let wait = slot.start - now_secs();
    if wait > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(wait.min(86_400.0))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(host: Option<f64>) -> Arc<Owner> {
        Owner::new(Settings {
            domain: "d0".to_owned(),
            host,
            uplink: Some(("d0".to_owned(), 1000.0)),
            horizon_secs: 60.0,
            reserve: 0.1,
            min_reserved: 1024,
            strategy: Strategy::EarliestCompletion,
            usage_horizon_secs: 10.0,
        })
    }

    fn hold(id: u64, link: LinkId, start: f64, len: f64, rate: u64) -> transfer::Request {
        hold_for(id, link, start, len, rate, None)
    }

    fn hold_for(
        id: u64,
        link: LinkId,
        start: f64,
        len: f64,
        rate: u64,
        user: Option<&str>,
    ) -> transfer::Request {
        transfer::Request::Hold {
            id,
            link,
            slot: Slot {
                start_ms: ms(start),
                end_ms: ms(start + len),
                rate,
            },
            lease_ms: 5000,
            user: user.map(str::to_owned),
        }
    }

    #[test]
    fn a_user_past_its_network_share_waits_while_one_under_it_waits() {
        // 900 B/s reservable, a 10 s usage horizon: about 13 kB over it,
        // 6.5 kB each for two users.
        let o = owner(None);
        let now = now_secs();
        let uplink = LinkId::Uplink {
            domain: "d0".to_owned(),
        };
        let held =
            |r: transfer::Response| matches!(r, transfer::Response::Link(LinkAnswer::Held { .. }));
        // Alone, alice may take more than half.
        let alice = Some("alice@d0");
        assert!(held(o.serve(
            "a",
            &hold_for(1, uplink.clone(), now + 1.0, 50.0, 200, alice)
        )));
        // Bob looks at the link: he waits for it.
        let state = o.serve(
            "b",
            &transfer::Request::LinkState {
                link: uplink.clone(),
                user: Some("bob@d1".to_owned()),
            },
        );
        assert!(matches!(
            state,
            transfer::Response::Link(LinkAnswer::State(_))
        ));
        match o.serve(
            "a",
            &hold_for(2, uplink.clone(), now + 1.0, 10.0, 200, alice),
        ) {
            transfer::Response::Error { reason, .. } => assert!(
                reason.contains("network share exceeded: alice@d0")
                    && reason.contains("bob@d1 under its share waits"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        // Bob within his share goes first; then alice is let on again.
        assert!(held(o.serve(
            "b",
            &hold_for(3, uplink.clone(), now + 1.0, 10.0, 200, Some("bob@d1"))
        )));
        assert!(held(o.serve(
            "a",
            &hold_for(2, uplink.clone(), now + 1.0, 10.0, 200, alice)
        )));
        // A hold that names no user is not weighed (an older peer).
        assert!(held(o.serve("c", &hold(4, uplink, now + 1.0, 10.0, 100))));
    }

    #[test]
    fn an_owner_holds_commits_and_refuses_past_its_capacity_naming_the_link() {
        let o = owner(Some(10_000.0));
        let now = now_secs();
        let uplink = LinkId::Uplink {
            domain: "d0".to_owned(),
        };
        let ok = o.serve("a", &hold(1, uplink.clone(), now + 1.0, 5.0, 800));
        assert_eq!(ok, transfer::Response::Link(LinkAnswer::Held { id: 1 }));
        let full = o.serve("b", &hold(2, uplink.clone(), now + 2.0, 5.0, 200));
        match full {
            transfer::Response::Error { reason, .. } => {
                assert!(
                    reason.contains("uplink of d0: the link is full"),
                    "{reason}"
                )
            }
            other => panic!("{other:?}"),
        }
        // Replayed: the id is taken.
        let again = o.serve("a", &hold(1, uplink.clone(), now + 30.0, 1.0, 1));
        assert!(
            matches!(again, transfer::Response::Error { reason, .. } if reason.contains("taken"))
        );
        // Another's hold cannot be committed or released.
        let stolen = o.serve(
            "b",
            &transfer::Request::Commit {
                id: 1,
                link: uplink.clone(),
            },
        );
        assert!(matches!(stolen, transfer::Response::Error { .. }));
        let mine = o.serve(
            "a",
            &transfer::Request::Commit {
                id: 1,
                link: uplink.clone(),
            },
        );
        assert_eq!(
            mine,
            transfer::Response::Link(LinkAnswer::Committed { id: 1 })
        );
        let state = o.state(&uplink).unwrap();
        assert_eq!(state.capacity, 900);
        assert_eq!(state.slots.len(), 1);
        let other = o.serve(
            "a",
            &transfer::Request::LinkState {
                link: LinkId::Uplink {
                    domain: "d9".to_owned(),
                },
                user: None,
            },
        );
        assert!(
            matches!(other, transfer::Response::Error { reason, .. } if reason.contains("does not manage an uplink of d9") || reason.contains("does not manage a uplink of d9"))
        );
        assert!(owner(None).state(&LinkId::Host).is_none());
    }

    #[test]
    fn the_host_link_slows_a_peer_past_its_reservation_and_shares_the_rest_max_min() {
        // 10 kB/s, 9 kB/s reservable; p reserves 1 kB/s of it now.
        let o = owner(Some(10_000.0));
        let now = now_secs();
        let held = o.serve("p", &hold(1, LinkId::Host, now, 100.0, 1000));
        assert_eq!(held, transfer::Response::Link(LinkAnswer::Held { id: 1 }));
        let t = now + 0.01;
        // p may go 10% over its 1 kB/s, after a quarter second's burst.
        let delays: Vec<f64> = (0..11).map(|_| o.gate_at("p", 1100, t)).collect();
        // Each chunk waits until it has crossed at that rate.
        assert!((delays[0] - 0.75).abs() < 1e-6, "{delays:?}");
        assert!((delays[10] - 10.75).abs() < 1e-6, "{delays:?}");
        // q alone shares what the reservation leaves: 9 kB/s.
        assert_eq!(o.gate_at("q", 2250, t), 0.0);
        assert!((o.gate_at("q", 9000, t) - 1.0).abs() < 1e-6);
        assert!((o.gate_at("q", 9000, t) - 2.0).abs() < 1e-6);
        // q took what it was allowed in its first second; r arriving then
        // gets an equal half of the 9 kB/s (4.5 kB/s), max-min.
        let later = t + 1.0;
        o.gate_at("q", 1, later);
        assert_eq!(o.gate_at("r", 1125, later), 0.0);
        assert!((o.gate_at("r", 4500, later) - 1.0).abs() < 1e-6);
        assert!((o.gate_at("r", 4500, later) - 2.0).abs() < 1e-6);
        // A peer limited elsewhere (s moved 900 B in a second, well under
        // the 3 kB/s it was allowed) leaves the rest: t, arriving, shares
        // what s leaves with q and r, (9000 - 900) / 3 = 2.7 kB/s.
        o.gate_at("s", 100, later);
        o.gate_at("s", 800, later + 0.5);
        let at = later + 1.0;
        o.gate_at("s", 1, at);
        assert_eq!(o.gate_at("t", 675, at), 0.0);
        assert!((o.gate_at("t", 2700, at) - 1.0).abs() < 1e-6);
        assert!((o.gate_at("t", 2700, at) - 2.0).abs() < 1e-6);
        // Without a managed host link nothing waits.
        assert_eq!(owner(None).gate_at("p", 1 << 30, t), 0.0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_pace_keeps_to_the_rate() {
        let mut pace = Pace::new(1000.0);
        let started = tokio::time::Instant::now();
        for _ in 0..10 {
            pace.moved(500).await;
        }
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }
}
