//! The view actor: owns the agent's [`View`] and answers for it.
//!
//! Gossip messages arrive from the network loop; the actor judges each with
//! [`View::offer`] and sends the verdict back (accept, ignore, reject, and
//! the sender's reject count when it rose). Pages pulled from peers are
//! offered the same way, except that an older or duplicate ad in a page is
//! never held against the peer: a peer may simply have missed an update.
//! A timer drops expired ads when the next one's time is up (and looks at
//! least every [`EXPIRY_LOOK`]).
//!
//! Whenever the view takes in an agent's machine ad that says something
//! new of where the agent is (its domain, `StarlingAddresses`), or the
//! last ad of an agent leaves it, the network loop is told
//! ([`Command::Directory`]): that is how it finds the peers of each
//! domain to connect to.
//!
//! A pull is answered by what the asking agent's domain may see: an agent
//! of this domain gets the view; an agent of a trusted domain gets only
//! this domain's ads meant for its domain (what the domain's `export` term
//! advertises to it, as their signers published them) and the ads its own
//! domain exports to us (its own, which tell a newcomer where its
//! domain's agents are before it has met any); a stranger gets a refusal.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use libp2p::gossipsub::MessageAcceptance;
use libp2p::PeerId;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use starling_protocol::classad::{parse_expr, unparse_ad, ClassAd, Expr};
use starling_protocol::gossip::{AdKind, Topic};
use starling_protocol::identity::{
    AgentId, Certificate, Envelope, Freshness, Kind, Timestamp, TrustAnchors,
};
use starling_protocol::view::{Request as PullRequest, Response as PullResponse};
use tokio::sync::mpsc;

use crate::network::directory::{Known, Update};
use crate::network::{Command, ViewInput};
use crate::ticker::Ticker;
use crate::view::{bundle_verdict, BundledVerdict, Rejection, Verdict, View};

impl From<ViewInput> for ViewMsg {
    fn from(input: ViewInput) -> ViewMsg {
        ViewMsg::Network(input)
    }
}

/// Only for ractor's `DerivedActorRef`, which hands back a message it
/// could not deliver.
impl TryFrom<ViewMsg> for ViewInput {
    type Error = ();

    fn try_from(message: ViewMsg) -> Result<ViewInput, ()> {
        match message {
            ViewMsg::Network(input) => Ok(input),
            _ => Err(()),
        }
    }
}

/// The longest the view goes without looking for expired ads; it looks
/// when the next ad's time is up (see [`crate::ticker`]).
pub const EXPIRY_LOOK: Duration = Duration::from_secs(60);

/// Messages the view actor handles.
#[derive(Debug)]
pub enum ViewMsg {
    /// The domain's policy changed: trust these anchors, and only ads of
    /// these domains, from now on.
    SetTrust {
        anchors: TrustAnchors,
        domains: Vec<String>,
    },
    /// What the network loop hands the view ([`ViewInput`]).
    Network(ViewInput),
    /// This agent's own ad, signed: its internal ad (`audience` `None`)
    /// or its copy for a trusted domain.
    Own {
        envelope: Box<Envelope>,
        ad: ClassAd,
        domain: String,
        audience: Option<String>,
    },
    /// The live ads of a kind (`MyType`; all for `None`) that satisfy a
    /// constraint, as ClassAd text.
    Query {
        my_type: Option<String>,
        constraint: Option<String>,
        reply: RpcReplyPort<Result<Vec<String>, String>>,
    },
    /// The live machine ads with their signers, for matchmaking.
    Machines(RpcReplyPort<Vec<MachineAd>>),
    /// How many live ads, by `MyType`.
    Counts(RpcReplyPort<BTreeMap<String, usize>>),
    /// Reject counts of these peers.
    Rejects {
        peers: Vec<PeerId>,
        reply: RpcReplyPort<Vec<u64>>,
    },
    /// The sequence number and arrival time of a signer's machine ad.
    Holding {
        signer: AgentId,
        reply: RpcReplyPort<Option<(u64, Timestamp)>>,
    },
    /// Drop expired ads.
    Tick,
}

/// A machine ad of the view and who signed it.
#[derive(Debug, Clone)]
pub struct MachineAd {
    pub signer: AgentId,
    pub ad: std::sync::Arc<starling_protocol::classad::ClassAd>,
    /// The domain that admitted the signer.
    pub domain: String,
}

/// The view actor's fixed configuration.
pub struct ViewActor;

/// What the view actor starts with.
pub struct ViewArgs {
    /// The agent's domain.
    pub domain: String,
    pub anchors: TrustAnchors,
    pub freshness: Freshness,
    pub network: mpsc::Sender<Command>,
    /// Gossiped ads are counted here by verdict.
    pub metrics: starling_web::metrics::Metrics,
}

pub struct ViewState {
    view: View,
    domain: String,
    anchors: TrustAnchors,
    freshness: Freshness,
    network: mpsc::Sender<Command>,
    metrics: starling_web::metrics::Metrics,
    /// What the network loop was last told of each agent.
    announced: HashMap<AgentId, Known>,
    /// The next [`ViewMsg::Tick`]: when the next ad's time is up.
    ticker: Ticker,
}

impl Actor for ViewActor {
    type Msg = ViewMsg;
    type State = ViewState;
    type Arguments = ViewArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<ViewMsg>,
        args: ViewArgs,
    ) -> Result<ViewState, ActorProcessingErr> {
        Ok(ViewState {
            view: View::new(&args.domain, args.anchors.clone(), args.freshness),
            domain: args.domain,
            anchors: args.anchors,
            freshness: args.freshness,
            network: args.network,
            metrics: args.metrics,
            announced: HashMap::new(),
            ticker: Ticker::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<ViewMsg>,
        message: ViewMsg,
        state: &mut ViewState,
    ) -> Result<(), ActorProcessingErr> {
        let now = Timestamp::now();
        match message {
            ViewMsg::SetTrust { anchors, domains } => {
                let gone = state.view.set_anchors(anchors.clone(), &domains);
                state.anchors = anchors;
                if gone > 0 {
                    tracing::info!(ads = gone, "dropped the ads of domains no longer trusted");
                }
            }
            ViewMsg::Network(ViewInput::Gossip {
                id,
                source,
                topic,
                data,
            }) => {
                let from = agent_of(&source);
                let before = from.map_or(0, |a| state.view.rejects(&a));
                let verdicts = offer_message(&mut state.view, &data, &topic, from, now);
                let mut announced = Vec::new();
                for judged in &verdicts {
                    state.metrics.ad_judged(match &judged.verdict {
                        Verdict::Accepted { .. } => starling_web::metrics::Judged::accepted,
                        Verdict::Ignored(_) => starling_web::metrics::Judged::ignored,
                        Verdict::Rejected(_) => starling_web::metrics::Judged::rejected,
                    });
                    match &judged.verdict {
                        Verdict::Accepted { signer, kind } => {
                            tracing::debug!(peer = %source, signer = %signer.short(), "accepted a gossiped ad");
                            if matches!(kind, AdKind::Machine | AdKind::Suspicion) {
                                announced.push(*signer);
                            }
                            if *kind == AdKind::Suspicion && judged.relay.is_none() {
                                tracing::info!(peer = %source, suspect = %signer.short(), "an agent is suspected dead: its machine ad is hidden");
                            }
                        }
                        Verdict::Rejected(why) => {
                            tracing::info!(peer = %source, %topic, %why, "rejected a gossiped ad");
                        }
                        Verdict::Ignored(_) => {}
                    }
                }
                if !announced.is_empty() {
                    state.announce(&announced).await;
                }
                let acceptance = match bundle_verdict(&verdicts) {
                    Verdict::Accepted { .. } => MessageAcceptance::Accept,
                    Verdict::Ignored(_) => MessageAcceptance::Ignore,
                    Verdict::Rejected(_) => MessageAcceptance::Reject,
                };
                let relay = verdicts.into_iter().filter_map(|v| v.relay).collect();
                let after = from.map_or(0, |a| state.view.rejects(&a));
                // The loop waits for this answer; if it has stopped, so
                // has the agent.
                let _ = state
                    .network
                    .send(Command::Validated {
                        id,
                        source,
                        acceptance,
                        rejects: (after > before).then_some(after),
                        relay,
                    })
                    .await;
            }
            ViewMsg::Network(ViewInput::Published { topic, data }) => {
                let mut announced = Vec::new();
                for judged in offer_message(&mut state.view, &data, &topic, None, now) {
                    if let Verdict::Accepted {
                        signer,
                        kind: kind @ (AdKind::Machine | AdKind::Suspicion),
                    } = judged.verdict
                    {
                        announced.push(signer);
                        if kind == AdKind::Suspicion && judged.relay.is_none() {
                            tracing::info!(suspect = %signer.short(), "we suspect an agent dead: its machine ad is hidden here too");
                        }
                    }
                }
                if !announced.is_empty() {
                    state.announce(&announced).await;
                }
            }
            ViewMsg::Network(ViewInput::Pulled { from, ads }) => {
                let agent = agent_of(&from);
                let before = agent.map_or(0, |a| state.view.rejects(&a));
                let mut taken = 0;
                let mut machines = Vec::new();
                for verdict in state.view.offer_page(&ads, now) {
                    match verdict {
                        Verdict::Accepted { signer, kind } => {
                            taken += 1;
                            if kind == AdKind::Machine {
                                machines.push(signer);
                            }
                        }
                        Verdict::Rejected(Rejection::Replayed { .. }) | Verdict::Ignored(_) => {}
                        Verdict::Rejected(why) => {
                            tracing::info!(peer = %from, %why, "rejected an ad in a pulled page");
                            if let Some(a) = agent {
                                state.view.count_reject(a);
                            }
                        }
                    }
                }
                tracing::debug!(peer = %from, offered = ads.len(), taken, "pulled a page of the view");
                state.announce(&machines).await;
                let after = agent.map_or(0, |a| state.view.rejects(&a));
                if after > before {
                    let _ = state
                        .network
                        .send(Command::Penalise {
                            peer: from,
                            rejects: after,
                        })
                        .await;
                }
            }
            ViewMsg::Network(ViewInput::SyncDue { peer }) => {
                let holding = state.view.digest(&crate::network::PULLED_KINDS);
                let _ = state.network.send(Command::Sync { peer, holding }).await;
            }
            ViewMsg::Network(ViewInput::ServePull {
                request,
                from,
                pull,
            }) => {
                let response = serve_pull(state, from, &pull, now);
                let _ = state
                    .network
                    .send(Command::Serve { request, response })
                    .await;
            }
            ViewMsg::Own {
                envelope,
                ad,
                domain,
                audience,
            } => state
                .view
                .insert_own(*envelope, ad, &domain, audience.as_deref(), now),
            ViewMsg::Query {
                my_type,
                constraint,
                reply,
            } => {
                let answer = query(&state.view, my_type.as_deref(), constraint.as_deref());
                let _ = reply.send(answer);
            }
            ViewMsg::Machines(reply) => {
                let list = state
                    .view
                    .ads_of_type(Some("Machine"))
                    .map(|h| MachineAd {
                        signer: AgentId::from_public_key(h.envelope.header().signer),
                        ad: h.ad.clone(),
                        domain: h.domain.clone(),
                    })
                    .collect();
                let _ = reply.send(list);
            }
            ViewMsg::Counts(reply) => {
                let _ = reply.send(state.view.counts());
            }
            ViewMsg::Rejects { peers, reply } => {
                let counts = peers
                    .iter()
                    .map(|p| agent_of(p).map_or(0, |a| state.view.rejects(&a)))
                    .collect();
                let _ = reply.send(counts);
            }
            ViewMsg::Holding { signer, reply } => {
                let _ = reply.send(state.view.holding(&signer, Kind::MACHINE_AD));
            }
            ViewMsg::Tick => {
                state.ticker.fired();
                let gone = state.view.expire(now);
                if gone > 0 {
                    tracing::debug!(gone, "expired ads");
                    let agents: Vec<AgentId> = state.announced.keys().copied().collect();
                    state.announce(&agents).await;
                }
            }
        }
        // Milliseconds as the clock reads them, at least one: a tick a hair
        // early finds nothing and is armed again.
        let next = state.view.next_expiry().map_or(EXPIRY_LOOK, |until| {
            Duration::from_millis(until.as_unix_millis().saturating_sub(now.as_unix_millis()))
                .clamp(Duration::from_millis(1), EXPIRY_LOOK)
        });
        state.ticker.arm(&myself, next, || ViewMsg::Tick);
        Ok(())
    }
}

impl ViewState {
    /// Tells the network loop what changed in what the view knows of
    /// `agents` (their machine ads' domain and addresses, or that none is
    /// held any more).
    async fn announce(&mut self, agents: &[AgentId]) {
        let mut updates = Vec::new();
        for agent in agents {
            let Some(peer) = PeerId::from_bytes(&agent.to_peer_id_bytes()).ok() else {
                continue;
            };
            match self.view.machine_of(agent) {
                Some(held) => {
                    let known = Known {
                        peer,
                        domain: held.domain.clone(),
                        addresses: addresses_of(&held.ad, &peer),
                    };
                    if self.announced.get(agent) != Some(&known) {
                        self.announced.insert(*agent, known.clone());
                        updates.push(Update::Known(known));
                    }
                }
                None => {
                    if self.announced.remove(agent).is_some() {
                        updates.push(Update::Gone(peer));
                    }
                }
            }
        }
        if !updates.is_empty() {
            let _ = self.network.send(Command::Directory(updates)).await;
        }
    }
}

/// The addresses a machine ad names for its agent (`StarlingAddresses`,
/// comma-separated): at most [`crate::machine::MAX_ADDRESSES`], each a
/// multiaddr of at most [`MAX_ADDRESS_LEN`] bytes that ends in the
/// agent's own `/p2p/` id or gets it appended. Any other is left out: a
/// signed ad may only say where its own agent is.
pub fn addresses_of(ad: &ClassAd, peer: &PeerId) -> Vec<libp2p::Multiaddr> {
    use libp2p::multiaddr::Protocol;
    let Some(text) = crate::ad::text(ad, "StarlingAddresses") else {
        return Vec::new();
    };
    text.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty() && a.len() <= MAX_ADDRESS_LEN)
        .filter_map(|a| a.parse::<libp2p::Multiaddr>().ok())
        .filter_map(|a| match a.iter().last() {
            Some(Protocol::P2p(id)) if id == *peer => Some(a),
            Some(Protocol::P2p(_)) => None,
            _ => Some(a.with(Protocol::P2p(*peer))),
        })
        .take(crate::machine::MAX_ADDRESSES)
        .collect()
}

/// The longest address a machine ad may name.
pub const MAX_ADDRESS_LEN: usize = 256;

fn query(
    view: &View,
    my_type: Option<&str>,
    constraint: Option<&str>,
) -> Result<Vec<String>, String> {
    let constraint: Option<Expr> = constraint
        .map(|c| parse_expr(c).map_err(|e| format!("constraint {c:?} does not parse: {e}")))
        .transpose()?;
    Ok(view
        .select(my_type, constraint.as_ref())
        .into_iter()
        .map(|held| unparse_ad(&held.ad))
        .collect())
}

/// A page for a peer that showed a certificate from a domain trusted here;
/// strangers may gossip, nothing more.
fn serve_pull(state: &ViewState, from: PeerId, pull: &PullRequest, now: Timestamp) -> PullResponse {
    let PullRequest::Pull {
        kinds,
        after,
        certificates,
        holding,
        ..
    } = pull
    else {
        return PullResponse::Refused {
            reason: "unknown request".to_owned(),
        };
    };
    let domains: Vec<String> = agent_of(&from)
        .map(|agent| {
            certificates
                .iter()
                .filter_map(|c| {
                    Certificate::verify(c, &agent, &state.anchors, now, &state.freshness).ok()
                })
                .map(|c| c.domain)
                .collect()
        })
        .unwrap_or_default();
    let Some(audience) = audience_of(&state.domain, &domains) else {
        return PullResponse::Refused {
            reason: "no certificate from a domain trusted here".to_owned(),
        };
    };
    let max = pull.page_size() as usize;
    let (ads, next) = match (&audience, holding) {
        // A colleague's digest is of the same view; a stranger's share
        // is a part of ours, which its digest does not summarise.
        (None, Some(holding)) => state
            .view
            .page_differing(kinds, after.as_ref(), max, holding),
        _ => state
            .view
            .page(audience.as_deref(), kinds, after.as_ref(), max),
    };
    PullResponse::Page { ads, next }
}

/// Whose pages an agent certified (as far as this agent trusts) in
/// `domains` gets from an agent of `own`: the view (`Some(None)`) when it
/// is of the same domain, else what is meant for its first trusted domain;
/// `None` for a stranger. An agent certified in two trusted domains sees
/// what one of them is shown, never both together.
fn audience_of(own: &str, domains: &[String]) -> Option<Option<String>> {
    if domains.iter().any(|d| d == own) {
        return Some(None);
    }
    domains.first().map(|d| Some(d.clone()))
}

/// The agent id of a libp2p peer (every Starling peer has an ed25519 key).
pub fn agent_of(peer: &PeerId) -> Option<AgentId> {
    AgentId::from_peer_id_bytes(&peer.to_bytes())
}

/// Offers a gossip message to the view: a bundle on a domain's own topic,
/// one ad on an export topic.
fn offer_message(
    view: &mut View,
    data: &[u8],
    topic: &Topic,
    from: Option<AgentId>,
    now: Timestamp,
) -> Vec<BundledVerdict> {
    match topic {
        Topic::Ads { .. } => view.offer_bundle(data, topic, from, now),
        _ => vec![BundledVerdict {
            verdict: view.offer(data, Some(topic), from, now),
            relay: None,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ad_names_only_its_own_agents_addresses_and_a_bounded_few() {
        let key = |i: u8| libp2p::identity::Keypair::ed25519_from_bytes([i; 32]).unwrap();
        let me = key(1).public().to_peer_id();
        let other = key(2).public().to_peer_id();
        let ad_with = |text: &str| {
            let mut ad = ClassAd::new();
            ad.insert(
                starling_protocol::classad::Name::new("StarlingAddresses").unwrap(),
                Expr::from(starling_protocol::classad::Value::string(text)),
            );
            ad
        };
        let long = format!("/dns4/{}/tcp/1", "a".repeat(300));
        let text = format!(
            "/ip4/10.0.0.1/tcp/4001/p2p/{me}, /ip4/10.0.0.2/tcp/4001, \
             /ip4/10.0.0.3/tcp/4001/p2p/{other}, not an address, {long}, \
             /ip4/10.0.0.4/tcp/1, /ip4/10.0.0.5/tcp/1, /ip4/10.0.0.6/tcp/1"
        );
        let got: Vec<String> = addresses_of(&ad_with(&text), &me)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                format!("/ip4/10.0.0.1/tcp/4001/p2p/{me}"),
                format!("/ip4/10.0.0.2/tcp/4001/p2p/{me}"),
                format!("/ip4/10.0.0.4/tcp/1/p2p/{me}"),
                format!("/ip4/10.0.0.5/tcp/1/p2p/{me}"),
            ],
            "another agent's address, junk and an overlong one are left out; at most four"
        );
        assert!(addresses_of(&ClassAd::new(), &me).is_empty());
        let mut not_text = ClassAd::new();
        not_text.insert(
            starling_protocol::classad::Name::new("StarlingAddresses").unwrap(),
            Expr::from(starling_protocol::classad::Value::Int(7)),
        );
        assert!(addresses_of(&not_text, &me).is_empty());
    }

    #[test]
    fn a_pull_is_answered_with_what_the_asking_domain_may_see() {
        let of = |ds: &[&str]| {
            audience_of(
                "d1",
                &ds.iter().map(|d| (*d).to_owned()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(of(&["d1"]), Some(None));
        assert_eq!(of(&["d0", "d1"]), Some(None));
        assert_eq!(of(&["d0"]), Some(Some("d0".to_owned())));
        assert_eq!(of(&[]), None);
    }
}
