//! A domain's caps on what each trusted domain holds in it at once
//! (`max_slots`, `max_fraction`, `max_gpus` of its signed terms), and its
//! concurrency limits (`[concurrency_limits]` of the keeper's
//! configuration, for the jobs of any domain that name them), held domain-wide:
//! the keeper on the domain's `netmgr` agent, and the execute side's
//! client that asks it for a share before it grants a foreign claim and
//! keeps the share while the claim lives. Why this design never exceeds a
//! cap, and what it does on failures, is in [`starling_policies::shares`].
//!
//! ```text
//! execute agent (claim from a capped domain, or for a job with limits)
//!   Share{domain, claim, cpus, lease} ──▶ keeper (netmgr of its domain)
//!     granted: claim granted, share renewed every RENEW_EVERY
//!     refused: claim refused as busy, naming the term (the job waits)
//!   renewal failing for LOSE_AFTER ──▶ the job is vacated (its checkpoint
//!     kept) before the keeper's lease can end
//!   claim ends ──▶ Unshare
//! ```
//!
//! The keeper is the domain's agent with the `netmgr` role (one per domain,
//! as for its uplink; with several, the lowest agent id is asked); a domain
//! with no netmgr in view runs no capped foreign job, and says why.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libp2p::PeerId;
use starling_policies::shares::{Asked, Holder, Ledger, Limits};
use starling_protocol::claim::{self, ClaimId};
use starling_protocol::identity::{AgentId, Role};
use tokio::sync::mpsc;

use crate::network::Command;
use crate::trust::LiveTrust;
use crate::view_actor::{agent_of, MachineAd};

/// The lease a keeper grants a share for.
pub const LEASE: Duration = Duration::from_secs(30);

/// The longest lease an advertising share is granted for: the ad it
/// covers lives at most this less [`ADVERTISE_MARGIN`], shorter than a
/// machine ad's default lifetime (900 s): the advertiser renews such a copy
/// at a third of its life.
pub const ADVERTISE_LEASE: Duration = Duration::from_secs(240);

/// How much longer than the ad it covers an advertising share lasts.
pub const ADVERTISE_MARGIN: Duration = Duration::from_secs(10);

/// How often a held share is renewed.
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// A share not renewed for this long (counted from the last successful
/// ask, so before the keeper's lease could end) makes its job leave: half
/// the lease, leaving the other half for the job to vacate in.
pub const LOSE_AFTER: Duration = Duration::from_secs(15);

/// The longest a job losing its share is given to leave.
pub const LEAVE_WITHIN: Duration = Duration::from_secs(10);

/// How long the view's machines are reused by the keeper.
const MACHINES_FOR: Duration = Duration::from_secs(5);

/// The ad attribute that names an agent's roles.
const ROLES: &str = "StarlingRoles";

/// The keeper of the domain's shares (on its netmgr agent).
pub struct Keeper {
    domain: String,
    trust: LiveTrust,
    /// The domain's concurrency limits (`[concurrency_limits]`).
    limits: Limits,
    pool: crate::pool::Pool,
    ledger: Mutex<Ledger>,
    machines: tokio::sync::Mutex<(Vec<MachineAd>, Option<Instant>)>,
    /// The file that says shares may be held ([`HELD_MARKER`]), and
    /// whether it is there now; the lock orders a change of the ledger and
    /// of the file as one.
    marker: tokio::sync::Mutex<(Option<std::path::PathBuf>, bool)>,
}

/// The file in the keeper's data directory that exists while it may have
/// granted shares still held. A keeper that starts and finds it recovers
/// (takes only renewals for a lease); one that finds none, because it
/// never granted or every share it granted ended, grants at once.
pub const HELD_MARKER: &str = "shares-held";

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Keeper {
    /// A keeper for `domain`, starting now, keeping its [`HELD_MARKER`] in
    /// `data_dir` (none: an agent with no data directory, which recovers
    /// at every start). When shares may be held from before, for one
    /// [`LEASE`] it takes only renewals (see [`Ledger::recovering`]).
    pub fn new(
        domain: &str,
        trust: LiveTrust,
        limits: Limits,
        pool: crate::pool::Pool,
        data_dir: Option<&std::path::Path>,
    ) -> Arc<Keeper> {
        let marker = data_dir.map(|d| d.join(HELD_MARKER));
        let held_before = marker.as_ref().is_none_or(|m| m.exists());
        let (recovery, advertise_recovery) = if held_before {
            (millis(LEASE), millis(ADVERTISE_LEASE))
        } else {
            (0, 0)
        };
        Arc::new(Keeper {
            domain: domain.to_owned(),
            trust,
            limits,
            pool,
            ledger: Mutex::new(Ledger::new(domain, now_ms(), recovery, advertise_recovery)),
            machines: tokio::sync::Mutex::new((Vec::new(), None)),
            marker: tokio::sync::Mutex::new((marker, held_before)),
        })
    }

    /// Makes the marker say what the ledger holds: written (and synced)
    /// before a share is answered, removed once none is held.
    async fn mark(
        marker: &mut (Option<std::path::PathBuf>, bool),
        held: bool,
    ) -> std::io::Result<()> {
        let Some(path) = marker.0.clone() else {
            return Ok(());
        };
        if marker.1 == held {
            return Ok(());
        }
        tokio::task::spawn_blocking(move || {
            if held {
                let file = std::fs::File::create(&path)?;
                file.sync_all()?;
                if let Some(dir) = path.parent() {
                    std::fs::File::open(dir)?.sync_all()?;
                }
                Ok(())
            } else {
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                }
            }
        })
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))?;
        marker.1 = held;
        Ok(())
    }

    async fn machines(&self) -> Vec<MachineAd> {
        let mut cached = self.machines.lock().await;
        if cached.1.is_none_or(|at| at.elapsed() >= MACHINES_FOR) {
            cached.0 = self.pool.machine_ads().await;
            cached.1 = Some(Instant::now());
        }
        cached.0.clone()
    }

    /// Answers a [`claim::Request::Share`] or [`claim::Request::Unshare`]
    /// from `asker` (`None`: this agent itself).
    pub async fn serve(&self, asker: Option<&PeerId>, request: &claim::Request) -> claim::Response {
        let machines = self.machines().await;
        let holder_agent = match asker {
            None => None,
            Some(peer) => agent_of(peer),
        };
        let own = |agent: &AgentId| {
            machines
                .iter()
                .any(|m| &m.signer == agent && m.domain == self.domain)
        };
        let key = match (asker, &holder_agent) {
            (None, _) => "self".to_owned(),
            (Some(_), Some(agent)) if own(agent) => agent.to_string(),
            (Some(_), _) => {
                let claim = match request {
                    claim::Request::Share { claim, .. } | claim::Request::Unshare { claim, .. } => {
                        *claim
                    }
                    claim::Request::Advertise { lease_ms, .. } => {
                        return claim::Response::Advertising {
                            cpus: 0,
                            lease_ms: *lease_ms,
                        }
                    }
                    _ => ClaimId::from_bytes([0; 16]),
                };
                return claim::Response::NotShared {
                    claim,
                    reason: format!("only agents of {} may ask its share keeper", self.domain),
                };
            }
        };
        match request {
            claim::Request::Share {
                domain,
                claim,
                cpus,
                gpus,
                lease_ms,
                renewing,
                limits,
            } => {
                // Checked when the request was decoded.
                let limits = starling_protocol::submit::limits::parse(limits).unwrap_or_default();
                let caps = self
                    .trust
                    .current()
                    .caps
                    .get(domain)
                    .copied()
                    .unwrap_or_default();
                let total_cpus: u64 = machines
                    .iter()
                    .filter(|m| m.domain == self.domain)
                    .filter_map(|m| crate::ad::integer(&m.ad, "TotalCpus"))
                    .map(|n| u64::try_from(n).unwrap_or(0))
                    .sum();
                let lease_ms = (*lease_ms).min(millis(LEASE));
                let holder: Holder = (key, *claim.as_bytes());
                let mut marker = self.marker.lock().await;
                let asked = self.ledger.lock().map_or_else(
                    |_| Err("the share ledger is unusable".to_owned()),
                    |mut ledger| {
                        ledger.ask(
                            domain,
                            holder.clone(),
                            Asked {
                                cpus: *cpus,
                                gpus: *gpus,
                                limits,
                            },
                            lease_ms,
                            *renewing,
                            &caps,
                            &self.limits,
                            total_cpus,
                            now_ms(),
                        )
                    },
                );
                // A share is answered only once a restart would know one
                // may be held.
                let asked = match asked {
                    Ok(()) => Self::mark(&mut marker, true).await.map_err(|e| {
                        if let Ok(mut ledger) = self.ledger.lock() {
                            ledger.release(domain, &holder);
                        }
                        format!("the share keeper cannot record that shares are held: {e}")
                    }),
                    Err(e) => Err(e),
                };
                match asked {
                    Ok(()) => claim::Response::Shared {
                        claim: *claim,
                        lease_ms,
                    },
                    Err(reason) => claim::Response::NotShared {
                        claim: *claim,
                        reason,
                    },
                }
            }
            claim::Request::Advertise {
                domain,
                cpus,
                had,
                lease_ms,
            } => {
                let lease_ms = (*lease_ms).min(millis(ADVERTISE_LEASE));
                let cap = self.trust.current().export_caps.get(domain).copied();
                let Some(cap) = cap else {
                    // No cap (any more): advertise what there is.
                    return claim::Response::Advertising {
                        cpus: *cpus,
                        lease_ms,
                    };
                };
                let mut marker = self.marker.lock().await;
                let granted = self.ledger.lock().map_or(0, |mut ledger| {
                    ledger.advertise(domain, &key, *cpus, *had, lease_ms, cap, now_ms())
                });
                let granted = if granted > 0 && Self::mark(&mut marker, true).await.is_err() {
                    if let Ok(mut ledger) = self.ledger.lock() {
                        ledger.advertise(domain, &key, 0, 0, lease_ms, cap, now_ms());
                    }
                    0
                } else {
                    granted
                };
                claim::Response::Advertising {
                    cpus: granted,
                    lease_ms,
                }
            }
            claim::Request::Unshare { domain, claim } => {
                let mut marker = self.marker.lock().await;
                let none_held = self.ledger.lock().is_ok_and(|mut ledger| {
                    ledger.release(domain, &(key, *claim.as_bytes()));
                    ledger.none_held(now_ms())
                });
                if none_held {
                    if let Err(e) = Self::mark(&mut marker, false).await {
                        tracing::warn!(error = %e, "could not remove the share keeper's marker; its next start waits a lease");
                    }
                }
                claim::Response::Released { claim: *claim }
            }
            _ => claim::Response::UnknownClaim {
                claim: ClaimId::from_bytes([0; 16]),
            },
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The domain's keeper in `machines`: its netmgr agent (the lowest id if
/// several).
pub fn keeper_of(machines: &[MachineAd], domain: &str) -> Option<AgentId> {
    machines
        .iter()
        .filter(|m| m.domain == domain)
        .filter(|m| {
            crate::ad::text(&m.ad, ROLES)
                .is_some_and(|roles| roles.split(',').any(|r| r.trim() == Role::Netmgr.name()))
        })
        .map(|m| m.signer)
        .min_by_key(|a| a.to_string())
}

/// What a startd needs to ask for shares and keep them.
#[derive(Clone)]
pub struct Client {
    pub network: mpsc::Sender<Command>,
    pub pool: crate::pool::Pool,
    pub me: PeerId,
    pub domain: String,
    /// This agent's own keeper, when it is its domain's netmgr.
    pub keeper: Option<Arc<Keeper>>,
}

/// Why a share was not had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotHad {
    /// The keeper said no (the terms leave no room): why, naming the term.
    Refused(String),
    /// The keeper could not be asked or did not answer.
    Unreachable(String),
}

impl std::fmt::Display for NotHad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotHad::Refused(why) | NotHad::Unreachable(why) => f.write_str(why),
        }
    }
}

/// A share's renewal failed for too long, or was refused: its claim's job
/// must leave.
#[derive(Debug, Clone)]
pub struct Lost {
    pub claim: ClaimId,
    pub reason: String,
}

impl Client {
    /// Asks the domain's keeper for (or to keep) a share of one slot of
    /// `held` CPUs and GPUs, and the units of the concurrency limits it
    /// uses, for `domain`'s job under `claim`. `Ok` with the instant the
    /// share must be renewed by, counted from before the ask.
    pub async fn ask(
        &self,
        domain: &str,
        claim: ClaimId,
        held: Asked,
        renewing: bool,
    ) -> Result<Instant, NotHad> {
        let asked = Instant::now();
        let request = claim::Request::Share {
            domain: domain.to_owned(),
            claim,
            cpus: held.cpus.clamp(1, claim::MAX_SHARE_CPUS),
            gpus: held.gpus.min(claim::MAX_SHARE_GPUS),
            lease_ms: millis(LEASE),
            renewing,
            limits: starling_protocol::submit::limits::show(&held.limits),
        };
        match self.send(request).await.map_err(NotHad::Unreachable)? {
            claim::Response::Shared { lease_ms, .. } => {
                Ok(asked + Duration::from_millis(lease_ms.min(millis(LEASE))))
            }
            claim::Response::NotShared { reason, .. } => Err(NotHad::Refused(reason)),
            other => Err(NotHad::Unreachable(format!(
                "the share keeper answered {other:?}"
            ))),
        }
    }

    /// Asks how many of `cpus` free CPUs this machine may advertise to
    /// `domain` (having been granted `had` last time), for an ad living
    /// `ttl`: the grant, and until when it holds, counted from before the
    /// ask.
    pub async fn advertise(
        &self,
        domain: &str,
        cpus: u32,
        had: u32,
        ttl: Duration,
    ) -> Result<(u32, Instant), NotHad> {
        let asked = Instant::now();
        let lease = (ttl + ADVERTISE_MARGIN).min(ADVERTISE_LEASE);
        let request = claim::Request::Advertise {
            domain: domain.to_owned(),
            cpus: cpus.min(claim::MAX_SHARE_CPUS),
            had: had.min(claim::MAX_SHARE_CPUS),
            lease_ms: millis(lease),
        };
        match self.send(request).await.map_err(NotHad::Unreachable)? {
            claim::Response::Advertising { cpus, lease_ms } => {
                Ok((cpus, asked + Duration::from_millis(lease_ms)))
            }
            claim::Response::NotShared { reason, .. } => Err(NotHad::Refused(reason)),
            other => Err(NotHad::Unreachable(format!(
                "the share keeper answered {other:?}"
            ))),
        }
    }

    /// Gives `claim`'s share back; best effort (an unreturned share lapses).
    pub async fn give_back(&self, domain: &str, claim: ClaimId) {
        let _ = self
            .send(claim::Request::Unshare {
                domain: domain.to_owned(),
                claim,
            })
            .await;
    }

    async fn send(&self, request: claim::Request) -> Result<claim::Response, String> {
        let machines = self.pool.machine_ads().await;
        let keeper = keeper_of(&machines, &self.domain).ok_or_else(|| {
            format!(
                "{} caps this domain's slots or the job uses concurrency limits, and no share \
                 keeper (an agent of {} with the netmgr role) is in view to hold them",
                self.domain, self.domain
            )
        })?;
        let peer = PeerId::from_bytes(&keeper.to_peer_id_bytes())
            .map_err(|e| format!("the share keeper's id: {e}"))?;
        if peer == self.me {
            return match &self.keeper {
                Some(keeper) => Ok(keeper.serve(None, &request).await),
                None => Err("this agent is its domain's netmgr but keeps no shares".to_owned()),
            };
        }
        let asked = tokio::time::timeout(
            crate::QUERY_TIMEOUT,
            crate::network::jobs::ask(&self.network, |reply| Command::Claim {
                peer,
                request,
                reply,
            }),
        )
        .await
        .map_err(|_| "the share keeper did not answer in time".to_owned())?;
        asked.map_err(|e| format!("the share keeper could not be asked: {e}"))
    }
}

/// What the renewal task is told.
#[derive(Debug)]
pub enum Renew {
    /// Keep `claim`'s share (granted, to be renewed by `until`).
    Keep {
        claim: ClaimId,
        domain: String,
        held: Asked,
        until: Instant,
    },
    /// `claim` ended: give its share back.
    Drop { claim: ClaimId },
}

/// Capacity of the renewal task's channel.
pub const RENEW_CAPACITY: usize = 256;

struct Kept {
    domain: String,
    held: Asked,
    until: Instant,
    lost: bool,
}

/// Runs the renewals of the shares this agent holds: every
/// [`RENEW_EVERY`] each is asked again; one refused, or not renewed by
/// [`LOSE_AFTER`] before its end, is reported on `lost` (once).
pub fn spawn_renewals(
    client: Client,
    mut orders: mpsc::Receiver<Renew>,
    lost: mpsc::Sender<Lost>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut kept: HashMap<ClaimId, Kept> = HashMap::new();
        let mut tick = tokio::time::interval(RENEW_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                order = orders.recv() => match order {
                    None => break,
                    Some(Renew::Keep { claim, domain, held, until }) => {
                        kept.insert(claim, Kept { domain, held, until, lost: false });
                    }
                    Some(Renew::Drop { claim }) => {
                        if let Some(k) = kept.remove(&claim) {
                            let client = client.clone();
                            tokio::spawn(async move { client.give_back(&k.domain, claim).await });
                        }
                    }
                },
                _ = tick.tick() => {
                    let asks = kept.iter().filter(|(_, k)| !k.lost).map(|(claim, k)| {
                        let (client, domain, held, claim) = (&client, k.domain.clone(), k.held.clone(), *claim);
                        async move { (claim, client.ask(&domain, claim, held, true).await) }
                    });
                    for (claim, answer) in futures::future::join_all(asks).await {
                        let Some(k) = kept.get_mut(&claim) else { continue };
                        let why = match answer {
                            Ok(until) => {
                                k.until = until;
                                continue;
                            }
                            Err(NotHad::Refused(reason)) => Some(reason),
                            Err(NotHad::Unreachable(reason)) => {
                                tracing::warn!(%claim, %reason, "could not renew a share of the domain's cap");
                                (Instant::now() + LOSE_AFTER >= k.until).then(|| {
                                    format!("its share of the domain's cap could not be kept: {reason}")
                                })
                            }
                        };
                        if let Some(reason) = why {
                            k.lost = true;
                            let _ = lost.send(Lost { claim, reason }).await;
                        }
                    }
                }
            }
        }
    })
}
