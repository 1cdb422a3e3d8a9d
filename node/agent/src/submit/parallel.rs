//! A co-allocated job's run: HTCondor's parallel universe, across
//! machines and domains, with no dedicated scheduler anywhere.
//!
//! The procs of one cluster in the parallel universe are one job; each
//! proc is a component of `machine_count` nodes. The negotiator places the
//! components ([`starling_policies::coallocation::place`]) and hands the
//! job here, to one coordinator task, which starts the nodes atomically:
//!
//! ```text
//! one shadow per node: claim ─▶ hand over (input staged, the job waits)
//!                      ─▶ Barrier asks until ready ─▶ prepared(node, host)
//! all nodes prepared   ─▶ the procs are recorded running (Starting)
//!                      ─▶ go(contacts) to every node: they start together
//! any refusal, loss or failure before that ─▶ every shadow is stopped,
//!                      every claim released (GaveUp): the job stays idle
//! ```
//!
//! Deadlock between two submit agents co-allocating on the same machines:
//! a claim is never held waiting for another. The nodes' claims are asked
//! for together and answered at once (no request waits at a busy machine);
//! a refusal of any one gives every other claim back at once and the
//! machine that refused is avoided for a moment, so neither agent holds
//! part of the pool while it waits for the rest. The job that was given
//! up waits a jittered 1–2 s (two agents that collided do not try again in
//! step) and goes behind the parallel jobs waiting then, as the thesis'
//! Scheduler moves a failed job to the tail of its queue; after
//! `[coallocation] max_start_failures` it is held with the last reason
//! rather than tried forever. Holding nothing while waiting rules out the
//! deadlock; the jitter and the requeue keep one job from starving the
//! others behind it, and the failure limit bounds a job that can never
//! start. What is not ruled out: an agent may ask again and again while
//! another agent's job holds what it needs (bounded by that job's
//! runtime), and single jobs waiting at busy machines may take the slots
//! a parallel job needs as they free (no slot is reserved for it).
//!
//! A machine that dies between prepare and start is found by its node's
//! shadow (the barrier is asked about every [`shadow::BARRIER_POLL`], and
//! unanswered for [`shadow::BARRIER_SILENCE`] the node is lost): the
//! co-allocation is given up and every other claim released at once. A prepare that does not finish
//! within [`PREPARE_TIMEOUT`] is given up the same way.
//!
//! Once started, the job ends as its `ParallelShutdownPolicy` says:
//! by default when node 0 ends (the others are stopped), with
//! `WAIT_FOR_ALL` when every node has ended. A node evicted or lost ends
//! the whole run and the job goes back to idle; a node held holds the job,
//! as HTCondor's parallel shadow does.

use std::collections::BTreeMap;
use std::time::Duration;

use libp2p::PeerId;
use starling_protocol::claim::{ClaimId, Contact, ReleaseReason};
use starling_protocol::classad::{ClassAd, Expr, Name, Value};
use starling_protocol::transfer::{self, Report, TransferId};
use starling_storage::JobId;
use tokio::sync::{mpsc, oneshot};

use super::shadow::{self, NodeBarrier, Placement, ShadowArgs, ShadowEvent, ShadowHandle};

/// The longest a co-allocation may take from the first claim to the start
/// (the nodes' inputs are staged meanwhile).
pub const PREPARE_TIMEOUT: Duration = Duration::from_secs(300);

/// What `$(Node)` is in a parallel job's ad until each node's copy gets
/// its number.
pub use starling_protocol::submit::NODE_MARKER;

/// Whether `ad` is a parallel-universe proc (`JobUniverse` 11).
pub fn is_parallel(ad: &ClassAd) -> bool {
    crate::ad::integer(ad, "JobUniverse") == Some(11)
}

/// How many nodes a parallel proc asks for (`MaxHosts`).
pub fn nodes_of(ad: &ClassAd) -> u32 {
    crate::ad::integer(ad, "MaxHosts")
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(1)
        .clamp(1, starling_protocol::claim::MAX_NODES as u32)
}

/// When the job ends: node 0's end (HTCondor's default) or every node's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    NodeZero,
    WaitForAll,
}

impl Shutdown {
    /// `ParallelShutdownPolicy` of the job's first proc.
    pub fn of(ad: &ClassAd) -> Shutdown {
        match crate::ad::text(ad, "ParallelShutdownPolicy") {
            Some(p) if p.eq_ignore_ascii_case("WAIT_FOR_ALL") => Shutdown::WaitForAll,
            _ => Shutdown::NodeZero,
        }
    }
}

/// Node `node`'s copy of its proc's ad: `$(Node)` replaced by its number
/// wherever it is, as HTCondor's parallel shadow does, and `StarlingNode`.
pub fn node_ad(ad: &ClassAd, node: u32) -> ClassAd {
    let mut out = ad.clone();
    let number = node.to_string();
    for entry in ad.iter() {
        let text = starling_protocol::classad::unparse(entry.expr());
        if text.contains(NODE_MARKER) {
            match starling_protocol::classad::parse_expr(&text.replace(NODE_MARKER, &number)) {
                Ok(e) => out.insert(entry.name, e),
                Err(e) => {
                    tracing::warn!(attribute = %entry.name, error = %e, "cannot put the node's number in")
                }
            }
        }
    }
    out.insert(
        Name::known("StarlingNode"),
        Expr::Literal(Value::Int(node.into())),
    );
    out
}

/// One node and where it goes.
#[derive(Debug, Clone)]
pub struct NodeAt {
    pub node: u32,
    /// Its proc: an index into [`GangArgs::procs`].
    pub proc: usize,
    pub peer: PeerId,
    /// The machine's name, for messages.
    pub machine: String,
    /// The domain that admitted the machine's agent.
    pub domain: String,
}

/// A node's claim, as the queue records it.
#[derive(Debug, Clone)]
pub struct NodeClaim {
    pub job: JobId,
    pub node: u32,
    pub slot: String,
    pub claim: ClaimId,
    pub peer: PeerId,
    pub domain: String,
}

/// What the coordinator tells the negotiator.
#[derive(Debug)]
pub enum GangEvent {
    /// Every node is prepared: record the procs running (answer whether
    /// they were); then the nodes start.
    Starting {
        cluster: i64,
        claims: Vec<NodeClaim>,
        /// From the first claim asked to now.
        overhead: Duration,
        recorded: oneshot::Sender<bool>,
    },
    /// The job ended as its shutdown policy says: each proc's report and
    /// whether its output came back.
    Ended {
        cluster: i64,
        results: Vec<(JobId, Report, Result<(), String>)>,
    },
    /// The co-allocation was given up (before the start: nothing ran) or
    /// the run was lost (`ran`): every claim is released; the job goes
    /// back to idle. `machine`: the one that refused or was lost.
    GaveUp {
        cluster: i64,
        reason: String,
        machine: Option<String>,
        ran: bool,
    },
    /// A node was held: the job is held.
    Held {
        cluster: i64,
        code: u32,
        subcode: i32,
        reason: String,
    },
}

/// What every node's shadow shares.
pub struct ShadowTemplate {
    pub network: mpsc::Sender<crate::network::Command>,
    pub router: crate::transfers::Router,
    pub key: std::sync::Arc<starling_protocol::identity::Keypair>,
    pub certificates: Vec<starling_protocol::identity::Envelope>,
    pub lease: Duration,
    pub staging: std::path::PathBuf,
    pub queue: starling_queue::Queue,
    pub links: crate::links::Client,
    pub metrics: starling_web::metrics::Metrics,
}

/// A co-allocated job to start.
pub struct GangArgs {
    pub cluster: i64,
    /// The procs (components), in proc order.
    pub procs: Vec<Placement>,
    pub nodes: Vec<NodeAt>,
    pub template: ShadowTemplate,
    pub events: mpsc::Sender<GangEvent>,
}

/// Stops a coordinator: every node is stopped and every claim released,
/// and nothing more is reported.
#[derive(Debug)]
pub struct GangHandle {
    stop: Option<oneshot::Sender<ReleaseReason>>,
}

impl GangHandle {
    pub fn stop(mut self, reason: ReleaseReason) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(reason);
        }
    }
}

pub fn spawn(args: GangArgs) -> GangHandle {
    let (stop, stopped) = oneshot::channel();
    let span = tracing::info_span!("parallel", cluster = args.cluster, nodes = args.nodes.len());
    tokio::spawn(tracing::Instrument::instrument(run(args, stopped), span));
    GangHandle { stop: Some(stop) }
}

/// How a node's run ended.
struct NodeEnd {
    report: Report,
    output: Result<(), String>,
}

async fn run(args: GangArgs, mut stopped: oneshot::Receiver<ReleaseReason>) {
    let began = tokio::time::Instant::now();
    let cluster = args.cluster;
    let (events_tx, mut events) = mpsc::channel::<(u64, ShadowEvent)>(1024);
    let (prepared_tx, mut prepared) = mpsc::channel::<(u32, String)>(args.nodes.len().max(1));
    let mut shadows: BTreeMap<u32, ShadowHandle> = BTreeMap::new();
    let mut go: BTreeMap<u32, oneshot::Sender<Vec<Contact>>> = BTreeMap::new();
    for at in &args.nodes {
        let (go_tx, go_rx) = oneshot::channel();
        go.insert(at.node, go_tx);
        let proc = &args.procs[at.proc];
        let t = &args.template;
        let handle = shadow::spawn(ShadowArgs {
            network: t.network.clone(),
            router: t.router.clone(),
            key: t.key.clone(),
            certificates: t.certificates.clone(),
            lease: t.lease,
            peer: at.peer,
            machine: at.machine.clone(),
            first: Placement {
                job: proc.job,
                ad: node_ad(&proc.ad, at.node),
            },
            wait: Duration::ZERO,
            events: events_tx.clone(),
            id: u64::from(at.node),
            staging: t.staging.clone(),
            reconnect: None,
            queue: t.queue.clone(),
            links: t.links.clone(),
            metrics: t.metrics.clone(),
            standby: None,
            barrier: Some(NodeBarrier {
                node: at.node,
                prepared: prepared_tx.clone(),
                go: go_rx,
            }),
        });
        shadows.insert(at.node, handle);
    }
    drop(prepared_tx);
    let node_of = |id: u64| u32::try_from(id).unwrap_or(u32::MAX);
    let at_of = |node: u32| args.nodes.iter().find(|a| a.node == node);
    let give_up = |reason: String, machine: Option<String>, ran: bool| GangEvent::GaveUp {
        cluster,
        reason,
        machine,
        ran,
    };
    // Phase one: every node claimed, handed over and waiting.
    let mut hosts: BTreeMap<u32, String> = BTreeMap::new();
    let mut claims: BTreeMap<u32, NodeClaim> = BTreeMap::new();
    let deadline = tokio::time::sleep(PREPARE_TIMEOUT);
    tokio::pin!(deadline);
    let failed: Option<GangEvent> = loop {
        if hosts.len() == args.nodes.len() {
            break None;
        }
        tokio::select! {
            reason = &mut stopped => {
                stop_all(shadows, reason.unwrap_or(ReleaseReason::JobRemoved));
                return;
            }
            () = &mut deadline => {
                break Some(give_up(
                    format!("the nodes were not all ready within {} s", PREPARE_TIMEOUT.as_secs()),
                    None,
                    false,
                ));
            }
            Some((node, host)) = prepared.recv() => {
                tracing::debug!(node, %host, "node prepared");
                hosts.insert(node, host);
            }
            Some((id, event)) = events.recv() => {
                let node = node_of(id);
                match event {
                    ShadowEvent::Claimed { job, peer, claim, slot, recorded } => {
                        let domain = at_of(node).map(|a| a.domain.clone()).unwrap_or_default();
                        claims.insert(node, NodeClaim { job, node, slot, claim, peer, domain });
                        let _ = recorded.send(true);
                    }
                    ShadowEvent::Rejected { machine, reason, .. } => {
                        break Some(give_up(format!("{machine} refused node {node}: {reason}"), Some(machine), false));
                    }
                    ShadowEvent::Lost { reason, .. } => {
                        let machine = at_of(node).map(|a| a.machine.clone());
                        break Some(give_up(format!("node {node} was lost before the start: {reason}"), machine, false));
                    }
                    ShadowEvent::Unrunnable { code, subcode, reason, .. } => {
                        break Some(GangEvent::Held { cluster, code, subcode, reason: format!("node {node}: {reason}") });
                    }
                    ShadowEvent::Ended { report, next, .. } => {
                        let _ = next.send(None);
                        break Some(match report.hold {
                            Some(h) => GangEvent::Held { cluster, code: h.code, subcode: h.subcode, reason: format!("node {node}: {}", h.reason) },
                            None => give_up(format!("node {node} ended before the start: {}", report.evicted.unwrap_or_default()), at_of(node).map(|a| a.machine.clone()), false),
                        });
                    }
                    other => decline(other),
                }
            }
        }
    };
    if let Some(event) = failed {
        tracing::info!(
            ?event,
            "the co-allocation is given up; every claim is released"
        );
        stop_all(shadows, ReleaseReason::NoMoreWork);
        let _ = args.events.send(event).await;
        return;
    }
    // Phase two: recorded running, then released together.
    let overhead = began.elapsed();
    let (recorded_tx, recorded) = oneshot::channel();
    let _ = args
        .events
        .send(GangEvent::Starting {
            cluster,
            claims: claims.values().cloned().collect(),
            overhead,
            recorded: recorded_tx,
        })
        .await;
    if !recorded.await.unwrap_or(false) {
        // Held or removed meanwhile: nothing starts.
        stop_all(shadows, ReleaseReason::JobRemoved);
        return;
    }
    let contacts: Vec<Contact> = args
        .nodes
        .iter()
        .map(|a| Contact {
            node: a.node,
            host: hosts.get(&a.node).cloned().unwrap_or_default(),
            machine: claims
                .get(&a.node)
                .map(|c| c.slot.clone())
                .unwrap_or_else(|| a.machine.clone()),
        })
        .collect();
    for (_, tx) in std::mem::take(&mut go) {
        let _ = tx.send(contacts.clone());
    }
    tracing::info!(
        nodes = contacts.len(),
        overhead_ms = overhead.as_millis() as u64,
        "every node is prepared; the job starts"
    );
    // Phase three: running until the shutdown policy says it ended.
    let shutdown = args
        .procs
        .first()
        .map_or(Shutdown::NodeZero, |p| Shutdown::of(&p.ad));
    let first_node = args.nodes.iter().map(|a| a.node).min().unwrap_or(0);
    let mut ends: BTreeMap<u32, NodeEnd> = BTreeMap::new();
    let outcome: GangEvent = loop {
        let done = match shutdown {
            Shutdown::NodeZero => ends.contains_key(&first_node),
            Shutdown::WaitForAll => ends.len() == args.nodes.len(),
        };
        if done {
            break ended(&args, cluster, &ends, first_node);
        }
        tokio::select! {
            reason = &mut stopped => {
                stop_all(shadows, reason.unwrap_or(ReleaseReason::JobRemoved));
                return;
            }
            Some((id, event)) = events.recv() => {
                let node = node_of(id);
                match event {
                    ShadowEvent::Ended { report, output, next, .. } => {
                        let _ = next.send(None);
                        shadows.remove(&node);
                        if let Some(reason) = &report.evicted {
                            break give_up(format!("node {node} was evicted: {reason}"), at_of(node).map(|a| a.machine.clone()), true);
                        }
                        if let Some(h) = &report.hold {
                            break GangEvent::Held { cluster, code: h.code, subcode: h.subcode, reason: format!("node {node}: {}", h.reason) };
                        }
                        tracing::info!(node, exit_code = ?report.exit_code, "node ended");
                        ends.insert(node, NodeEnd { report, output });
                    }
                    ShadowEvent::Lost { reason, .. } => {
                        shadows.remove(&node);
                        break give_up(format!("node {node} was lost: {reason}"), at_of(node).map(|a| a.machine.clone()), true);
                    }
                    ShadowEvent::Unrunnable { code, subcode, reason, .. } => {
                        break GangEvent::Held { cluster, code, subcode, reason: format!("node {node}: {reason}") };
                    }
                    other => decline(other),
                }
            }
        }
    };
    // The nodes still running are stopped (node 0 ended, or the run is
    // over for all).
    stop_all(shadows, ReleaseReason::NoMoreWork);
    let _ = args.events.send(outcome).await;
}

/// The job's end: each proc's report is its first node's, if that one
/// ended, else node 0's (the job's exit is node 0's, as in HTCondor);
/// its output came back if every one of its nodes' that ended did.
fn ended(args: &GangArgs, cluster: i64, ends: &BTreeMap<u32, NodeEnd>, first: u32) -> GangEvent {
    let zero = ends
        .get(&first)
        .map(|e| e.report.clone())
        .unwrap_or_default();
    let results = args
        .procs
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let mine: Vec<(&u32, &NodeEnd)> = args
                .nodes
                .iter()
                .filter(|a| a.proc == k)
                .filter_map(|a| ends.get_key_value(&a.node))
                .collect();
            let report = mine
                .first()
                .map_or_else(|| zero.clone(), |(_, e)| e.report.clone());
            let output = mine
                .iter()
                .find_map(|(n, e)| e.output.clone().err().map(|r| format!("node {n}: {r}")))
                .map_or(Ok(()), Err);
            (p.job, report, output)
        })
        .collect();
    GangEvent::Ended { cluster, results }
}

fn stop_all(shadows: BTreeMap<u32, ShadowHandle>, reason: ReleaseReason) {
    for (_, s) in shadows {
        s.stop(reason);
    }
}

/// Events a node's shadow may send that a parallel job does not act on:
/// checkpoints and moves are declined (a parallel job neither checkpoints
/// through Starling nor migrates node by node).
fn decline(event: ShadowEvent) {
    let refuse = |reason: &str| transfer::Response::Error {
        transfer: TransferId(0),
        code: transfer::ErrorCode::Declined,
        reason: reason.to_owned(),
    };
    match event {
        ShadowEvent::Checkpointed { offer, .. } => {
            let _ = offer.answer.send(refuse(
                "a parallel job's nodes do not checkpoint through Starling",
            ));
        }
        ShadowEvent::MigrationProposed { offer, .. } => {
            let _ = offer
                .answer
                .send(refuse("a parallel job's nodes do not move one by one"));
        }
        _ => {}
    }
}

/// What an earlier run of this agent left of a parallel proc that ran
/// when it stopped: every node's claim it recorded
/// (`StarlingParallelClaims`) is released, so the old nodes end now
/// rather than when their leases lapse. Each release is asked again
/// until its machine answers or `within` has passed (the network may not
/// know the machines yet, moments after a start); by then the nodes have
/// ended either way, and the job may run again.
pub async fn release_left(
    network: mpsc::Sender<crate::network::Command>,
    ad: ClassAd,
    within: Duration,
) {
    let Some(recorded) = crate::ad::text(&ad, "StarlingParallelClaims") else {
        return;
    };
    let deadline = tokio::time::Instant::now() + within;
    let asks: Vec<(PeerId, ClaimId)> = recorded
        .split(',')
        .filter_map(|pair| {
            let (peer, claim) = pair.trim().split_once(' ')?;
            Some((peer.parse().ok()?, claim.parse().ok()?))
        })
        .collect();
    let network = &network;
    let releases = asks.into_iter().map(|(peer, claim)| async move {
        while tokio::time::Instant::now() < deadline {
            let request = starling_protocol::claim::Request::Release {
                claim,
                reason: ReleaseReason::ShuttingDown,
            };
            let answer = tokio::time::timeout(
                Duration::from_secs(2),
                shadow::claim_request(network, peer, request),
            )
            .await;
            if let Ok(Ok(_)) = answer {
                tracing::info!(%peer, %claim, "released a node the last run left");
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    futures::future::join_all(releases).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    #[test]
    fn each_node_gets_its_number_wherever_node_was_written() {
        let ad = parse_ad(
            "[JobUniverse = 11; MaxHosts = 3; Arguments = \"-n #pArAlLeLnOdE#\"; \
             Out = \"/d/out.#pArAlLeLnOdE#\"; Cmd = \"/bin/x\"]",
        )
        .unwrap();
        let two = node_ad(&ad, 2);
        assert_eq!(crate::ad::text(&two, "Arguments").as_deref(), Some("-n 2"));
        assert_eq!(crate::ad::text(&two, "Out").as_deref(), Some("/d/out.2"));
        assert_eq!(crate::ad::integer(&two, "StarlingNode"), Some(2));
        assert_eq!(crate::ad::text(&two, "Cmd").as_deref(), Some("/bin/x"));
        assert!(is_parallel(&ad));
        assert_eq!(nodes_of(&ad), 3);
        assert_eq!(Shutdown::of(&ad), Shutdown::NodeZero);
        let all = parse_ad("[ParallelShutdownPolicy = \"wait_for_all\"]").unwrap();
        assert_eq!(Shutdown::of(&all), Shutdown::WaitForAll);
    }
}
