//! Which agents the loop knows, by domain, and which of them it should be
//! connected to: the peer set of a pool of many domains.
//!
//! Ads travel on one gossip topic per domain and one per (domain,
//! audience) pair ([`Topic::followed`]), and gossipsub forwards a message
//! only between connected peers that follow its topic. Peers picked at
//! random (what Kademlia gives) rarely share a topic once a pool has many
//! domains: with 10 domains of 5 agents and 8 peers each, an agent had one
//! peer of its own domain on average, its domain's mesh fell apart, and
//! agents missed their own domain's ads for minutes. So peers are chosen
//! by domain, as a two-level overlay:
//!
//! - **inside the domain**, at least [`DOMAIN_PEERS`] connections to agents
//!   of our own domain, so that the domain's topics form a connected mesh
//!   among its agents (every agent of a domain follows its domain's own
//!   topic and what each trusted domain exports to it);
//! - **between domains**, [`BRIDGES`] agents of each domain keep a
//!   connection to an agent of each domain it shares topics with (it
//!   trusts them, or they it). Which agents bridge to which domain is
//!   rendezvous hashing over the domain's agents, so each agent bridges to
//!   about `BRIDGES × domains / agents of its domain` domains, no agent is
//!   every domain's bridge, and every agent computes the same choice from
//!   its view without asking anyone. A bridge is a gossipsub *explicit*
//!   peer: every message on the topics both follow crosses it at once,
//!   whatever the mesh does. Only a domain's bridges to an audience follow
//!   the domain's export topic for it ([`Plan::bridging`]): they hand on
//!   the copies for it that their colleagues' bundles carry, so the other
//!   agents of the domain never handle an export message. An agent that
//!   knows too few of its colleagues counts itself a bridge: during a
//!   pool's formation more agents hand copies on, never fewer.
//!
//! Where agents are comes from the ads themselves: each machine ad names
//! its agent's addresses (`StarlingAddresses`), so the view tells the loop
//! the domain and addresses of every agent it holds an ad of
//! ([`Known`]), and a connected peer's domain is also read from its
//! subscriptions (the domain topic it follows). Kademlia stays the way to
//! meet the first peers and to fill the peer set where the view knows no
//! one yet.
//!
//! The directory is bounded by the view: it holds an entry only for an
//! agent whose machine ad the view holds, with at most
//! [`crate::machine::MAX_ADDRESSES`] addresses each.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use libp2p::{Multiaddr, PeerId};

/// Connections to agents of our own domain the loop keeps at least (where
/// the domain has that many): above the gossip mesh's degree, so that the
/// domain's meshes can form inside it.
pub const DOMAIN_PEERS: usize = 5;

/// Agents of a domain that bridge to each domain it shares topics with.
pub const BRIDGES: usize = 2;

/// What the view knows of an agent from its machine ad.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub peer: PeerId,
    pub domain: String,
    pub addresses: Vec<Multiaddr>,
}

/// A change in what the view knows of agents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    Known(Known),
    /// The agent's machine ad left the view.
    Gone(PeerId),
}

/// The agents the loop knows, by domain.
#[derive(Debug, Default)]
pub struct Directory {
    /// From the view: every agent it holds a machine ad of.
    known: HashMap<PeerId, Known>,
    /// From gossip subscriptions: the domain each connected peer follows
    /// the ads topic of.
    subscribed: HashMap<PeerId, String>,
    /// Per (domain, toward): the [`BRIDGES`] + 1 known agents of the
    /// domain of least weight toward the other, lightest first: enough to
    /// say exactly whether any agent bridges ([`Directory::bridges_to`])
    /// without hashing every agent of the domain again. A plan asks that
    /// for every domain and every peer across, and a forming pool plans
    /// at each ad that arrives; computed when first asked, forgotten when
    /// an agent comes, goes or changes domain.
    lightest: RefCell<HashMap<(String, String), Lightest>>,
}

/// Agents with their rendezvous weights toward a domain, lightest first.
type Lightest = Vec<([u8; 8], PeerId)>;

/// The dials and explicit-peer changes the directory asks of the loop.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Peers to dial, with where.
    pub dial: Vec<(PeerId, Vec<Multiaddr>)>,
    /// Connected peers that are bridges to another domain.
    pub bridges: HashSet<PeerId>,
    /// The domains we are one of our domain's bridges to, in the order
    /// given: we follow our domain's export topic for each and hand our
    /// colleagues' copies on to it.
    pub bridging: Vec<String>,
}

impl Directory {
    pub fn update(&mut self, update: Update) {
        match update {
            Update::Known(known) => {
                let domain = known.domain.clone();
                if let Some(was) = self.known.insert(known.peer, known) {
                    if was.domain == domain {
                        return;
                    }
                }
                self.lightest.get_mut().clear();
            }
            Update::Gone(peer) => {
                if self.known.remove(&peer).is_some() {
                    self.lightest.get_mut().clear();
                }
            }
        }
    }

    /// A connected peer follows the ads topic of `domain`.
    pub fn subscribed(&mut self, peer: PeerId, domain: &str) {
        self.subscribed.insert(peer, domain.to_owned());
    }

    pub fn disconnected(&mut self, peer: &PeerId) {
        self.subscribed.remove(peer);
    }

    /// The domain of `peer`, as its ad or its subscriptions say.
    pub fn domain_of(&self, peer: &PeerId) -> Option<&str> {
        self.known
            .get(peer)
            .map(|k| k.domain.as_str())
            .or_else(|| self.subscribed.get(peer).map(String::as_str))
    }

    /// Where the view says `peer` listens.
    pub fn addresses_of(&self, peer: &PeerId) -> Vec<Multiaddr> {
        self.known
            .get(peer)
            .map(|k| k.addresses.clone())
            .unwrap_or_default()
    }

    /// How many agents the directory knows.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// What the loop should do so that `me`, of `domains[0]`, holds
    /// [`DOMAIN_PEERS`] connections in its domain and a bridge to each of
    /// `domains[1..]` it is responsible for; `connected` are the peers
    /// connected now, `excluded` those not to dial (banned).
    pub fn plan(
        &self,
        me: &PeerId,
        domains: &[String],
        connected: &HashSet<PeerId>,
        excluded: &HashSet<PeerId>,
    ) -> Plan {
        let mut plan = Plan::default();
        let Some((own, others)) = domains.split_first() else {
            return plan;
        };
        let in_domain = |d: &str| -> Vec<&Known> {
            self.known
                .values()
                .filter(|k| k.domain == d && k.peer != *me)
                .collect()
        };
        // Inside the domain: the peers nearest us by rendezvous hash, so
        // that the domain's connections spread evenly and do not all go to
        // the agents everyone heard of first.
        let own_connected = connected
            .iter()
            .filter(|p| self.domain_of(p) == Some(own.as_str()))
            .count();
        if own_connected < DOMAIN_PEERS {
            let mut candidates: Vec<&Known> = in_domain(own)
                .into_iter()
                .filter(|k| !connected.contains(&k.peer) && !excluded.contains(&k.peer))
                .collect();
            candidates.sort_by_cached_key(|k| weight(me, &k.peer));
            for k in candidates.into_iter().take(DOMAIN_PEERS - own_connected) {
                plan.dial.push((k.peer, k.addresses.clone()));
            }
        }
        // Between domains: which of the domain's agents bridge to `other`
        // is the same choice on every agent that knows the same agents.
        for other in others.iter().filter(|d| *d != own) {
            let bridging = self.bridges_to(me, own, other);
            if bridging {
                plan.bridging.push(other.clone());
            }
            let mut linked: Vec<PeerId> = connected
                .iter()
                .filter(|p| self.domain_of(p) == Some(other.as_str()))
                .copied()
                .collect();
            // A connection to `other` is a bridge where one end is its
            // domain's chosen bridge to the other end's domain: the peer
            // that dialled us for that keeps it, and so do we (those
            // first). Any other connection across is left to the peer
            // limit.
            linked.sort_by_cached_key(|p| (!self.bridges_to(p, other, own), weight(me, p)));
            plan.bridges.extend(
                linked
                    .iter()
                    .filter(|p| bridging || self.bridges_to(p, other, own))
                    .take(BRIDGES)
                    .copied(),
            );
            if !bridging || !linked.is_empty() {
                continue;
            }
            let mut theirs: Vec<&Known> = in_domain(other);
            theirs.retain(|k| !excluded.contains(&k.peer) && !k.addresses.is_empty());
            theirs.sort_by_cached_key(|k| weight(me, &k.peer));
            if let Some(k) = theirs.first() {
                plan.dial.push((k.peer, k.addresses.clone()));
            }
        }
        plan
    }
}

impl Directory {
    /// Whether `agent`, of `domain`, is one of the [`BRIDGES`] agents of
    /// its domain (as far as the directory knows them) that bridge to
    /// `toward`.
    fn bridges_to(&self, agent: &PeerId, domain: &str, toward: &str) -> bool {
        let mine = weight_for(agent, toward);
        let mut cache = self.lightest.borrow_mut();
        let lightest = cache
            .entry((domain.to_owned(), toward.to_owned()))
            .or_insert_with(|| {
                let mut all: Lightest = self
                    .known
                    .values()
                    .filter(|k| k.domain == domain)
                    .map(|k| (weight_for(&k.peer, toward), k.peer))
                    .collect();
                all.sort_unstable();
                all.truncate(BRIDGES + 1);
                all
            });
        // Exact: were `agent` beyond the lightest, all of them would be
        // ahead of it, and BRIDGES + 1 is too many.
        let ahead = lightest
            .iter()
            .filter(|(w, p)| p != agent && *w < mine)
            .count();
        ahead < BRIDGES
    }

    /// Whether `peer` is one of the [`DOMAIN_PEERS`] agents of `domain`
    /// (ours) that `me` prefers: those [`Directory::plan`] dials first.
    pub fn chosen_in_domain(&self, me: &PeerId, domain: &str, peer: &PeerId) -> bool {
        if self.known.get(peer).is_none_or(|k| k.domain != domain) {
            return false;
        }
        let mine = weight(me, peer);
        let ahead = self
            .known
            .values()
            .filter(|k| k.domain == domain && k.peer != *me && k.peer != *peer)
            .filter(|k| weight(me, &k.peer) < mine)
            .count();
        ahead < DOMAIN_PEERS
    }

    /// The agents of `domain` connected now that `me` prefers, best first.
    pub fn preferred<'a>(
        &self,
        me: &PeerId,
        domain: &str,
        connected: impl Iterator<Item = &'a PeerId>,
    ) -> Vec<PeerId> {
        let mut ours: Vec<PeerId> = connected
            .filter(|p| self.domain_of(p) == Some(domain))
            .copied()
            .collect();
        ours.sort_by_cached_key(|p| weight(me, p));
        ours
    }

    /// How many agents of `domain` the directory knows.
    pub fn count(&self, domain: &str) -> usize {
        self.known.values().filter(|k| k.domain == domain).count()
    }
}

/// A pair's rendezvous weight: the same on every agent, spread evenly.
fn weight(a: &PeerId, b: &PeerId) -> [u8; 8] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&a.to_bytes());
    hasher.update(&b.to_bytes());
    first_eight(hasher.finalize())
}

/// An agent's rendezvous weight for bridging to `domain`.
fn weight_for(agent: &PeerId, domain: &str) -> [u8; 8] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&agent.to_bytes());
    hasher.update(domain.as_bytes());
    first_eight(hasher.finalize())
}

fn first_eight(hash: blake3::Hash) -> [u8; 8] {
    let mut out = [0; 8];
    out.copy_from_slice(&hash.as_bytes()[..8]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(i: u8) -> PeerId {
        let key = libp2p::identity::Keypair::ed25519_from_bytes([i; 32]).unwrap();
        key.public().to_peer_id()
    }

    fn address(i: u8) -> Multiaddr {
        format!("/ip4/127.0.0.1/tcp/{}", 4000 + u16::from(i))
            .parse()
            .unwrap()
    }

    /// 10 domains of 10 agents, every agent known to every other.
    fn pool() -> (Directory, Vec<(PeerId, String)>) {
        let mut directory = Directory::default();
        let mut agents = Vec::new();
        for i in 0..100u8 {
            let domain = format!("d{}", i % 10);
            directory.update(Update::Known(Known {
                peer: peer(i),
                domain: domain.clone(),
                addresses: vec![address(i)],
            }));
            agents.push((peer(i), domain));
        }
        (directory, agents)
    }

    fn domains_of(own: &str) -> Vec<String> {
        let mut d = vec![own.to_owned()];
        d.extend((0..10).map(|i| format!("d{i}")).filter(|d| d != own));
        d
    }

    /// What `bridges_to` means, counted over every known agent.
    fn bridges_by_counting(d: &Directory, agent: &PeerId, domain: &str, toward: &str) -> bool {
        let mine = weight_for(agent, toward);
        d.known
            .values()
            .filter(|k| k.domain == domain && k.peer != *agent)
            .filter(|k| weight_for(&k.peer, toward) < mine)
            .count()
            < BRIDGES
    }

    #[test]
    fn the_remembered_bridges_are_those_counting_would_choose_as_agents_come_and_go() {
        let (mut directory, agents) = pool();
        let stranger = peer(200);
        let check = |d: &Directory| {
            for (p, own) in agents.iter().chain([(stranger, "d1".to_owned())].iter()) {
                for toward in ["d0", "d3", "d9"] {
                    assert_eq!(
                        d.bridges_to(p, own, toward),
                        bridges_by_counting(d, p, own, toward),
                        "{p} of {own} toward {toward}"
                    );
                }
            }
        };
        check(&directory);
        // The chosen bridges leave, one by one: the next lightest take over.
        for _ in 0..3 {
            let chosen = agents
                .iter()
                .find(|(p, own)| {
                    own == "d1"
                        && directory.known.contains_key(p)
                        && directory.bridges_to(p, own, "d3")
                })
                .map(|(p, _)| *p)
                .unwrap();
            directory.update(Update::Gone(chosen));
            check(&directory);
        }
        directory.update(Update::Known(Known {
            peer: stranger,
            domain: "d1".to_owned(),
            addresses: vec![],
        }));
        check(&directory);
    }

    #[test]
    fn an_agent_alone_dials_its_own_domain_first_and_bridges_only_where_chosen() {
        let (directory, agents) = pool();
        let none = HashSet::new();
        let mut bridges_per_domain_pair: HashMap<(String, String), usize> = HashMap::new();
        for (me, own) in &agents {
            let plan = directory.plan(me, &domains_of(own), &none, &none);
            let own_dials = plan
                .dial
                .iter()
                .filter(|(p, _)| directory.domain_of(p) == Some(own.as_str()))
                .count();
            assert_eq!(own_dials, DOMAIN_PEERS, "{me} dials its domain");
            for (p, addresses) in &plan.dial {
                assert!(!addresses.is_empty());
                let theirs = directory.domain_of(p).unwrap().to_owned();
                if theirs != *own {
                    *bridges_per_domain_pair
                        .entry((own.clone(), theirs))
                        .or_default() += 1;
                }
            }
        }
        // Each domain bridges to each other domain through exactly BRIDGES
        // of its agents: every pair of domains is linked, no agent bridges
        // to all.
        assert_eq!(bridges_per_domain_pair.len(), 90);
        assert!(bridges_per_domain_pair.values().all(|&n| n == BRIDGES));
        // The same agents follow their domain's export topic for it, and
        // no others.
        let mut following: HashMap<(String, String), usize> = HashMap::new();
        for (me, own) in &agents {
            for other in directory.plan(me, &domains_of(own), &none, &none).bridging {
                *following.entry((own.clone(), other)).or_default() += 1;
            }
        }
        assert_eq!(following, bridges_per_domain_pair);
    }

    #[test]
    fn a_connected_domain_is_not_dialled_again_and_at_most_two_of_its_peers_are_bridges() {
        let (directory, agents) = pool();
        let (me, own) = &agents[0];
        let connected: HashSet<PeerId> = agents
            .iter()
            .filter(|(p, d)| p != me && (d == own || d == "d3"))
            .map(|(p, _)| *p)
            .collect();
        let plan = directory.plan(me, &domains_of(own), &connected, &HashSet::new());
        assert!(plan.dial.iter().all(|(p, _)| {
            let d = directory.domain_of(p);
            d != Some(own.as_str()) && d != Some("d3")
        }));
        assert!(plan.bridges.len() <= BRIDGES);
        assert!(plan
            .bridges
            .iter()
            .all(|p| directory.domain_of(p) == Some("d3")));
        // Whoever of d3 is one of its bridges to d0 is kept as one.
        let chosen: Vec<&PeerId> = connected
            .iter()
            .filter(|p| directory.domain_of(p) == Some("d3"))
            .filter(|p| directory.bridges_to(p, "d3", own))
            .collect();
        assert_eq!(chosen.len(), BRIDGES);
        assert!(chosen.iter().all(|p| plan.bridges.contains(p)));
    }

    #[test]
    fn a_gone_agent_is_not_dialled_and_a_subscription_names_a_domain() {
        let (mut directory, agents) = pool();
        let (me, own) = agents[0].clone();
        for (p, d) in &agents {
            if *d == own && *p != me {
                directory.update(Update::Gone(*p));
            }
        }
        let plan = directory.plan(&me, &domains_of(&own), &HashSet::new(), &HashSet::new());
        assert!(plan
            .dial
            .iter()
            .all(|(p, _)| directory.domain_of(p) != Some(own.as_str())));
        let stranger = peer(200);
        assert_eq!(directory.domain_of(&stranger), None);
        directory.subscribed(stranger, "d7");
        assert_eq!(directory.domain_of(&stranger), Some("d7"));
        directory.disconnected(&stranger);
        assert_eq!(directory.domain_of(&stranger), None);
    }
}
