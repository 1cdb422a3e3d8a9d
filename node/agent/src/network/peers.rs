//! The loop's peers: which it knows, dials, keeps connected, closes and
//! bans.
//!
//! ```text
//! every 5 s ──▶ keep_connected: bans run out; our relays dialled and
//!               listened through; fewer than TARGET_PEERS: dial peers
//!               from the Kademlia table
//!           ──▶ arrange: peers of our domain and bridges to the others
//!               dialled as the directory says; bridges made explicit
//!               gossip peers (also soon after the directory changes)
//!           ──▶ prune: above MAX_PEERS, idle connections closed
//!           ──▶ walk: a Kademlia lookup of a random id, only while the
//!               directory knows no agent of our domain (backing off)
//! identify, mDNS ──▶ learn_address (only where its bucket has room)
//! rejected messages ──▶ penalise: gossip score, then a ban
//! ```
//!
//! It owns the peer bookkeeping of [`Loop`] (addresses, round-trip times,
//! bans, job activity) as connections come and go; it carries no message
//! and judges none: gossip goes to the view, job requests to
//! [`super::jobs`].

use std::collections::HashSet;

use libp2p::{kad, Multiaddr, PeerId};

use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};

use super::directory::DOMAIN_PEERS;
use super::{
    Loop, PeerInfo, ARRANGE_DELAY, BAN_AFTER_REJECTS, BAN_DURATION, DIAL_BACKOFF,
    JOB_ACTIVITY_KEEPS, MAX_PEERS, PRUNE_GRACE, REJECT_PENALTY, TARGET_PEERS, WALK_FIRST, WALK_MAX,
};

impl Loop {
    pub(super) fn penalise(&mut self, peer: PeerId, rejects: u64) {
        let score = REJECT_PENALTY * rejects.min(1000) as f64;
        self.swarm
            .behaviour_mut()
            .gossipsub
            .set_application_score(&peer, score);
        if rejects >= BAN_AFTER_REJECTS && !self.bans.contains_key(&peer) {
            tracing::warn!(%peer, rejects, "blocking a peer that keeps sending bad messages");
            self.swarm.behaviour_mut().blocked.block_peer(peer);
            self.bans
                .insert(peer, tokio::time::Instant::now() + BAN_DURATION);
        }
    }

    pub(super) fn peers(&self) -> Vec<PeerInfo> {
        let gossipsub = &self.swarm.behaviour().gossipsub;
        let mut peers: Vec<PeerInfo> = self
            .swarm
            .connected_peers()
            .map(|&peer| PeerInfo {
                peer,
                addresses: self.addresses.get(&peer).cloned().unwrap_or_default(),
                rtt: self.rtt.get(&peer).copied(),
                score: gossipsub.peer_score(&peer),
            })
            .collect();
        peers.sort_by_key(|p| p.peer.to_bytes());
        peers
    }

    /// Closes connections above [`MAX_PEERS`], down to [`TARGET_PEERS`]:
    /// never a gossip mesh peer, a peer with job traffic in the last
    /// [`JOB_ACTIVITY_KEEPS`], one we are pulling the view from or serving
    /// it to, or one connected less than [`PRUNE_GRACE`] ago.
    pub(super) fn prune(&mut self) {
        let now = tokio::time::Instant::now();
        self.job_activity
            .retain(|_, at| now.duration_since(*at) < JOB_ACTIVITY_KEEPS);
        let connected: Vec<PeerId> = self.swarm.connected_peers().copied().collect();
        if connected.len() <= MAX_PEERS {
            return;
        }
        // Mesh peers of our own domain (or not known to be of another):
        // a peer of another domain in a mesh got there by chance, and
        // the bridges carry what it would.
        let own = self.domains.first().map(String::as_str);
        let mut keep: HashSet<PeerId> = self
            .swarm
            .behaviour()
            .gossipsub
            .all_mesh_peers()
            .filter(|p| self.directory.domain_of(p).is_none_or(|d| Some(d) == own))
            .copied()
            .collect();
        keep.extend(self.job_activity.keys().copied());
        // We are reachable through our relays only while connected to them.
        keep.extend(self.relays.addresses().map(|(peer, _)| peer));
        // Nor, serving as a relay, the peers we relay for.
        keep.extend(self.served.peers());
        // A young connection is most likely a Kademlia lookup (ours or a
        // peer's) under way: closing it would make the lookup fail and the
        // next one dial again, a handshake each time.
        keep.extend(
            self.connected_at
                .iter()
                .filter(|(_, since)| now.duration_since(**since) < PRUNE_GRACE)
                .map(|(peer, _)| *peer),
        );
        keep.extend(self.pulls.values().map(|(peer, _, _)| *peer));
        keep.extend(self.serving.values().map(|(peer, _)| *peer));
        // The overlay by domain: bridges, and enough of our own domain.
        keep.extend(self.explicit.iter().copied());
        if let Some(own) = own {
            let me = *self.swarm.local_peer_id();
            keep.extend(
                self.directory
                    .preferred(&me, own, connected.iter())
                    .into_iter()
                    .take(DOMAIN_PEERS),
            );
        }
        let excess = connected.len() - TARGET_PEERS;
        let mut closed = 0;
        for peer in connected {
            if closed >= excess {
                break;
            }
            if !keep.contains(&peer) && self.swarm.disconnect_peer_id(peer).is_ok() {
                closed += 1;
            }
        }
        if closed > 0 {
            tracing::debug!(closed, "closed idle connections above the peer limit");
        }
    }

    /// Dials what the directory says is missing (peers of our domain,
    /// bridges to others; see [`super::directory`]) and makes the
    /// connected bridges gossipsub's explicit peers.
    pub(super) fn arrange(&mut self) {
        self.arrange_due = None;
        let now = tokio::time::Instant::now();
        self.dial_failures
            .retain(|_, at| now.duration_since(*at) < DIAL_BACKOFF);
        let me = *self.swarm.local_peer_id();
        let connected: HashSet<PeerId> = self.swarm.connected_peers().copied().collect();
        let mut excluded: HashSet<PeerId> = self.bans.keys().copied().collect();
        excluded.extend(self.dial_failures.keys().copied());
        let plan = self
            .directory
            .plan(&me, &self.domains, &connected, &excluded);
        for (peer, addresses) in plan.dial {
            let opts = DialOpts::peer_id(peer)
                .condition(PeerCondition::DisconnectedAndNotDialing)
                .addresses(addresses)
                .extend_addresses_through_behaviour()
                .build();
            if let Err(e) = self.swarm.dial(opts) {
                tracing::trace!(%peer, error = %e, "cannot dial");
            }
        }
        let gossip = &mut self.swarm.behaviour_mut().gossipsub;
        for peer in plan.bridges.difference(&self.explicit) {
            gossip.add_explicit_peer(peer);
        }
        for peer in self.explicit.difference(&plan.bridges) {
            gossip.remove_explicit_peer(peer);
        }
        self.explicit = plan.bridges;
        if plan.bridging != self.bridging {
            self.bridging = plan.bridging;
            self.follow();
        }
    }

    /// Arranges the peer set shortly (changes come in bursts: a pulled
    /// page, a peer's subscriptions).
    pub(super) fn arrange_soon(&mut self) {
        if self.arrange_due.is_none() {
            self.arrange_due = Some(tokio::time::Instant::now() + ARRANGE_DELAY);
        }
    }

    /// Puts a peer's address in the routing table if the peer is there
    /// already or its bucket has room. Kademlia would otherwise make room in
    /// a full bucket by dialling its oldest disconnected entry to see if it
    /// is alive, and with connections closed by [`Loop::prune`] most are
    /// disconnected: every peer heard of would cost a connection, and the
    /// peer dialled hears of us in turn. Dead entries leave the table when
    /// a dial to them fails.
    pub(super) fn learn_address(&mut self, peer: PeerId, address: Multiaddr) {
        let kad = &mut self.swarm.behaviour_mut().kad;
        let room = kad.kbucket(peer).is_none_or(|bucket| {
            bucket.num_entries() < kad::K_VALUE.get()
                || bucket.iter().any(|e| *e.node.key.preimage() == peer)
        });
        if room {
            kad.add_address(&peer, address);
        }
    }

    /// Whether the agent knows no agent of its domain and is connected to
    /// none: the one case in which it needs Kademlia to find peers.
    pub(super) fn without_domain(&self, connected: &HashSet<PeerId>) -> bool {
        let own = self.domains.first().map_or("", String::as_str);
        connected
            .iter()
            .all(|p| self.directory.domain_of(p) != Some(own))
            && self.directory.count(own) == 0
    }

    pub(super) fn note_job_traffic(&mut self, peer: PeerId) {
        self.job_activity.insert(peer, tokio::time::Instant::now());
    }

    /// Dials known peers while fewer than [`TARGET_PEERS`] are connected,
    /// and lifts bans that have run out.
    pub(super) fn keep_connected(&mut self) {
        let now = tokio::time::Instant::now();
        let expired: Vec<PeerId> = self
            .bans
            .iter()
            .filter(|(_, until)| **until <= now)
            .map(|(p, _)| *p)
            .collect();
        for peer in expired {
            self.bans.remove(&peer);
            self.swarm.behaviour_mut().blocked.unblock_peer(peer);
        }
        let connected: HashSet<PeerId> = self.swarm.connected_peers().copied().collect();
        // Our relays, whatever the number of peers: through them we are
        // reachable.
        let relays: Vec<(PeerId, Multiaddr)> = self
            .relays
            .addresses()
            .filter(|(peer, _)| !connected.contains(peer))
            .map(|(peer, address)| (peer, address.clone()))
            .collect();
        for (peer, address) in relays {
            let opts = libp2p::swarm::dial_opts::DialOpts::peer_id(peer)
                .condition(libp2p::swarm::dial_opts::PeerCondition::DisconnectedAndNotDialing)
                .addresses(vec![address.clone()])
                .build();
            if let Err(e) = self.swarm.dial(opts) {
                tracing::debug!(%address, error = %e, "cannot dial a relay");
            }
        }
        // A relay that refused our pull (busy, or not trusting our domain
        // yet: a policy on its way) is asked again.
        for peer in self.relays.to_pull(&connected) {
            self.pull(peer, None, 0, None);
        }
        self.listen_through_relays();
        // Where the directory knows agents, `arrange` picks the peers;
        // Kademlia's random ones would only be pruned. Where it knows no
        // agent of our domain and we have no peer of it, we walk Kademlia
        // to random ids (backing off): every peer met says its domain by
        // its subscriptions, and the first of ours gives us the rest.
        let lost = self.without_domain(&connected);
        if lost && now >= self.next_walk {
            self.walk_backoff = (self.walk_backoff * 2).clamp(WALK_FIRST, WALK_MAX);
            self.next_walk = now + self.walk_backoff;
            let kad = &mut self.swarm.behaviour_mut().kad;
            if kad.kbuckets().any(|bucket| bucket.num_entries() > 0) {
                kad.get_closest_peers(PeerId::random());
            }
        }
        let limit = if lost || self.directory.is_empty() {
            TARGET_PEERS
        } else {
            0
        };
        if connected.len() >= limit {
            return;
        }
        let local = *self.swarm.local_peer_id();
        let mut candidates = Vec::new();
        for bucket in self.swarm.behaviour_mut().kad.kbuckets() {
            for entry in bucket.iter() {
                let peer = *entry.node.key.preimage();
                if peer != local && !connected.contains(&peer) && !self.bans.contains_key(&peer) {
                    candidates.push(peer);
                }
            }
        }
        for peer in candidates.into_iter().take(limit - connected.len()) {
            // Kademlia knows its addresses; a failed dial is retried next tick.
            let _ = self.swarm.dial(peer);
        }
    }

    /// Dials `peer` at the addresses Kademlia knows and, behind NAT, also
    /// through each of our relays: a peer behind another NAT that listens
    /// through the same relay is reachable there even before we learnt its
    /// relayed address.
    pub(super) fn dial_with_circuits(&mut self, peer: PeerId) {
        let circuits = self.relays.circuits_to(peer);
        let opts = libp2p::swarm::dial_opts::DialOpts::peer_id(peer)
            .addresses(circuits)
            .extend_addresses_through_behaviour()
            .build();
        if let Err(e) = self.swarm.dial(opts) {
            tracing::trace!(%peer, error = %e, "cannot dial");
        }
    }

    /// Listens through every relay not listened through yet (a reservation
    /// refused, or lost with its connection, is asked for again here).
    pub(super) fn listen_through_relays(&mut self) {
        for address in self.relays.to_listen() {
            match self.swarm.listen_on(address.clone()) {
                Ok(id) => self.relays.listening(&address, id),
                Err(e) => tracing::warn!(%address, error = %e, "cannot listen through a relay"),
            }
        }
    }
}
