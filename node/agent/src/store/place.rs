//! The store peers this agent knows of, as candidates for a checkpoint's
//! replicas ([`starling_policies::replicas`]): from the machine ads of the
//! view (a store peer advertises `StarlingRoles` with `store`, its free
//! space in `StarlingStoreFree`, and its `StarlingSite` and
//! `StarlingRack`) and the round-trip times the network measured.

use std::collections::HashMap;
use std::time::Duration;

use libp2p::PeerId;
use ractor::ActorRef;
use starling_policies::replicas::{self, Candidate, Place};
use starling_protocol::checkpoint::Replica;
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use tokio::sync::mpsc;

use crate::network::Command;
use crate::view_actor::ViewMsg;

/// A store peer and what the placement rule needs of it.
#[derive(Debug, Clone)]
pub struct StorePeer {
    pub peer: PeerId,
    pub candidate: Candidate,
}

fn attr(ad: &ClassAd, name: &str) -> Value {
    match Name::new(name) {
        Ok(name) => Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, name.folded()),
        Err(_) => Value::Undefined,
    }
}

fn text(ad: &ClassAd, name: &str) -> Option<String> {
    match attr(ad, name) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn int(ad: &ClassAd, name: &str) -> Option<i64> {
    match attr(ad, name) {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

/// Where the machine of `ad` stands: its `StarlingHost` (else its
/// `Machine`), domain, site and rack.
pub fn place_of(ad: &ClassAd, domain: &str) -> Place {
    Place {
        machine: text(ad, "StarlingHost")
            .or_else(|| text(ad, "Machine"))
            .unwrap_or_default(),
        domain: domain.to_owned(),
        site: text(ad, "StarlingSite"),
        rack: text(ad, "StarlingRack"),
    }
}

/// Whether the machine ad is a store peer's.
pub fn is_store(ad: &ClassAd) -> bool {
    text(ad, "StarlingRoles").is_some_and(|roles| roles.split(',').any(|r| r.trim() == "store"))
        && int(ad, "StarlingStoreLent").is_some_and(|lent| lent > 0)
}

/// Every store peer of the view, with its measured round-trip time when
/// it is connected; `me` (this agent's peer id, as text) is nearest of
/// all, though no ping measures it.
pub async fn store_peers(
    view: &ActorRef<ViewMsg>,
    network: &mpsc::Sender<Command>,
    me: &str,
) -> Vec<StorePeer> {
    let machines = match view
        .call(ViewMsg::Machines, Some(crate::QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(m)) => m,
        _ => return Vec::new(),
    };
    let rtts: HashMap<PeerId, Duration> = crate::ask_network(network, Command::Peers)
        .await
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| Some((p.peer, p.rtt?)))
        .collect();
    let mut seen = std::collections::HashSet::new();
    machines
        .into_iter()
        .filter(|m| is_store(&m.ad))
        .filter_map(|m| {
            let peer = PeerId::from_bytes(&m.signer.to_peer_id_bytes()).ok()?;
            // One entry per agent (a partitionable machine has one ad).
            if !seen.insert(peer) {
                return None;
            }
            let free_kib = int(&m.ad, "StarlingStoreFree").unwrap_or(0).max(0);
            Some(StorePeer {
                peer,
                candidate: Candidate {
                    peer: peer.to_string(),
                    place: place_of(&m.ad, &m.domain),
                    rtt: if peer.to_string() == me {
                        Some(Duration::ZERO)
                    } else {
                        rtts.get(&peer).copied()
                    },
                    free_bytes: u64::try_from(free_kib).unwrap_or(0).saturating_mul(1024),
                    allowed: true,
                },
            })
        })
        .collect()
}

/// The order to fetch a checkpoint from its `replicas` in, seen from
/// `from`: those whose store peer is in the view (`known`), nearest first
/// ([`replicas::restore_order`]), then the others as listed (they may come
/// back). Each as its index in `replicas` and whether it is in the view.
pub fn fetch_order(from: &Place, replicas: &[Replica], known: &[StorePeer]) -> Vec<(usize, bool)> {
    let (live, gone): (Vec<usize>, Vec<usize>) = (0..replicas.len())
        .partition(|&i| known.iter().any(|k| k.candidate.peer == replicas[i].peer));
    let candidates: Vec<Candidate> = live
        .iter()
        .filter_map(|&i| {
            known
                .iter()
                .find(|k| k.candidate.peer == replicas[i].peer)
                .map(|k| k.candidate.clone())
        })
        .collect();
    replicas::restore_order(from, &candidates)
        .into_iter()
        .map(|c| (live[c], true))
        .chain(gone.into_iter().map(|i| (i, false)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(machine: &str, site: Option<&str>) -> Place {
        Place {
            machine: machine.to_owned(),
            domain: "d".to_owned(),
            site: site.map(str::to_owned),
            rack: None,
        }
    }

    fn known(peer: PeerId, machine: &str, site: Option<&str>, rtt_ms: Option<u64>) -> StorePeer {
        StorePeer {
            peer,
            candidate: Candidate {
                peer: peer.to_string(),
                place: place(machine, site),
                rtt: rtt_ms.map(Duration::from_millis),
                free_bytes: 1 << 30,
                allowed: true,
            },
        }
    }

    fn replica(peer: PeerId, machine: &str) -> Replica {
        Replica {
            peer: peer.to_string(),
            machine: machine.to_owned(),
        }
    }

    #[test]
    fn live_replicas_come_nearest_first_and_gone_ones_last() {
        let (a, b, c) = (PeerId::random(), PeerId::random(), PeerId::random());
        let replicas = [replica(a, "far"), replica(b, "gone"), replica(c, "near")];
        let view = [
            known(a, "far", None, Some(40)),
            known(c, "near", None, Some(2)),
        ];
        let order = fetch_order(&place("here", None), &replicas, &view);
        assert_eq!(order, [(2, true), (0, true), (1, false)]);
        // Nothing in the view: the replicas as listed.
        let order = fetch_order(&place("here", None), &replicas, &[]);
        assert_eq!(order, [(0, false), (1, false), (2, false)]);
        // Without round-trip times, the same site comes first.
        let view = [
            known(a, "far", Some("elsewhere"), None),
            known(c, "near", Some("here"), None),
        ];
        let order = fetch_order(&place("here", Some("here")), &replicas, &view);
        assert_eq!(order[0], (2, true));
    }
}
