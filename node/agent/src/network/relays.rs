//! Agents behind NAT: the relays an agent listens through, the limits and
//! admission of the relay it may serve as, and its reachability.
//!
//! An agent that cannot be dialled (behind a NAT or a firewall) names
//! relays in `network.relays`: agents with a reachable address and
//! `[relay] serve`. It connects to each, pulls the view from it (the pull
//! shows the relay its certificates), and once the relay has served it a
//! page it reserves a slot there (circuit relay v2) by listening on
//! `<relay>/p2p-circuit`. Its relayed address then reaches its peers as any
//! listen address does (identify, and Kademlia from there), and peers
//! dial it through the relay; DCUtR then tries to replace the relayed
//! connection with a direct one by hole punching.
//!
//! A relay serves only peers it has **admitted**: those it served a view
//! page, which the view does only for a valid certificate of the relay's
//! own domain or one it trusts. Every agent pulls from the relays it is
//! configured with as it connects (and again every [`RESERVATION_RETRY`]
//! until admitted), and from any other peer whose identify says it serves
//! as a relay, so that it may dial others through it; a circuit asked for
//! before that pull was served is refused, and the next dial succeeds. libp2p's relay asks a list of "rate
//! limiters" about every reservation and every circuit's source; admission
//! is one of them, next to libp2p's own per-peer and per-address rates and
//! the limits of `[relay]`. A peer leaves the admitted set when its last
//! connection closes (its reservation and circuits went with it).
//!
//! A relay never closes the connections of the peers it serves now (a
//! reservation, either end of a relayed connection: [`Served`]) to stay
//! under its peer target.
//!
//! [`Client`] and [`Served`] are plain state the network loop drives;
//! nothing here touches the swarm.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use libp2p::core::transport::ListenerId;
use libp2p::multiaddr::Protocol;
use libp2p::{autonat, relay, Multiaddr, PeerId};

/// How long after a refused or lost reservation it is asked for again.
pub const RESERVATION_RETRY: Duration = Duration::from_secs(10);

/// What a relay server allows (`[relay]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_reservations: usize,
    pub max_circuits: usize,
    pub max_circuit_duration: Duration,
    pub max_circuit_bytes: u64,
}

impl Limits {
    /// libp2p's relay configuration: these limits, libp2p's default rates
    /// per peer and per address, and admission by [`Admitted`].
    pub fn config(&self, admitted: &Admitted) -> relay::Config {
        let mut config = relay::Config {
            max_reservations: self.max_reservations,
            max_circuits: self.max_circuits,
            max_circuit_duration: self.max_circuit_duration,
            max_circuit_bytes: self.max_circuit_bytes,
            ..relay::Config::default()
        };
        config
            .reservation_rate_limiters
            .push(Box::new(admitted.clone()));
        config
            .circuit_src_rate_limiters
            .push(Box::new(admitted.clone()));
        config
    }
}

/// The peers a relay server serves. Shared between the network loop, which
/// admits and forgets peers, and the relay behaviour inside the swarm that
/// same loop polls: both run on the loop's task, so the lock is never
/// contended.
#[derive(Debug, Clone, Default)]
pub struct Admitted(Arc<RwLock<HashSet<PeerId>>>);

impl Admitted {
    /// `peer` showed a certificate we trust.
    pub fn admit(&self, peer: PeerId) {
        if let Ok(mut set) = self.0.write() {
            set.insert(peer);
        }
    }

    /// `peer`'s last connection closed.
    pub fn forget(&self, peer: &PeerId) {
        if let Ok(mut set) = self.0.write() {
            set.remove(peer);
        }
    }

    pub fn contains(&self, peer: &PeerId) -> bool {
        self.0.read().is_ok_and(|set| set.contains(peer))
    }
}

impl relay::RateLimiter for Admitted {
    fn try_next(&mut self, peer: PeerId, _: &Multiaddr, _: std::time::Instant) -> bool {
        let admitted = self.contains(&peer);
        if !admitted {
            tracing::debug!(%peer, "not relaying for a peer that showed no trusted certificate");
        }
        admitted
    }
}

/// Whether peers can dial this agent, as AutoNAT last found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reachability {
    /// Not probed yet, or no peer could tell.
    Unknown,
    /// Peers dialled us back at this address.
    Public(Multiaddr),
    /// Peers could not dial us back: we are reachable only through relays.
    Private,
}

impl From<&autonat::NatStatus> for Reachability {
    fn from(status: &autonat::NatStatus) -> Self {
        match status {
            autonat::NatStatus::Public(address) => Reachability::Public(address.clone()),
            autonat::NatStatus::Private => Reachability::Private,
            autonat::NatStatus::Unknown => Reachability::Unknown,
        }
    }
}

impl std::fmt::Display for Reachability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reachability::Unknown => f.write_str("unknown"),
            Reachability::Public(address) => write!(f, "public at {address}"),
            Reachability::Private => f.write_str("private"),
        }
    }
}

/// AutoNAT's configuration: peers on private addresses count as servers
/// and are dialled back (an organisation's own network is private, and so
/// is a testnet's), and a verdict comes after two agreeing probes, the
/// first five seconds after start, so that an agent knows soon whether it
/// needs its relays.
pub fn autonat_config() -> autonat::Config {
    autonat::Config {
        only_global_ips: false,
        boot_delay: Duration::from_secs(5),
        retry_interval: Duration::from_secs(30),
        throttle_server_period: Duration::from_secs(15),
        confidence_max: 2,
        ..autonat::Config::default()
    }
}

/// One relay of `network.relays`.
#[derive(Debug)]
struct Relay {
    /// Its address, ending in `/p2p/<id>`.
    address: Multiaddr,
    peer: PeerId,
    /// Our listener through it, while we have one.
    listener: Option<ListenerId>,
    /// It served us a view page since we last connected: it admitted us.
    admitted: bool,
    /// No reservation is asked before then (after a refusal).
    not_before: Option<tokio::time::Instant>,
    /// When we last pulled from it to be admitted.
    pulled_at: Option<tokio::time::Instant>,
}

/// The relays an agent listens through.
#[derive(Debug, Default)]
pub struct Client {
    relays: Vec<Relay>,
}

impl Client {
    /// The relays at `addresses`; those without a `/p2p/<id>` are left out
    /// (the configuration refuses them).
    pub fn new(addresses: &[Multiaddr]) -> Self {
        let relays = addresses
            .iter()
            .filter_map(|address| {
                Some(Relay {
                    peer: super::peer_of(address)?,
                    address: address.clone(),
                    listener: None,
                    admitted: false,
                    not_before: None,
                    pulled_at: None,
                })
            })
            .collect();
        Client { relays }
    }

    pub fn is_relay(&self, peer: &PeerId) -> bool {
        self.relays.iter().any(|r| r.peer == *peer)
    }

    /// Whether any relay admitted us (there is a relay to dial through).
    pub fn any_admitted(&self) -> bool {
        self.relays.iter().any(|r| r.admitted)
    }

    /// The relays' addresses, to dial while not connected.
    pub fn addresses(&self) -> impl Iterator<Item = (PeerId, &Multiaddr)> {
        self.relays.iter().map(|r| (r.peer, &r.address))
    }

    /// `peer` (a relay) served us a view page.
    pub fn admitted_by(&mut self, peer: &PeerId) {
        for relay in self.relays.iter_mut().filter(|r| r.peer == *peer) {
            relay.admitted = true;
        }
    }

    /// The connected relays that have not admitted us, to pull from (show
    /// our certificates to) again: at most every [`RESERVATION_RETRY`].
    /// The loop pulls from a relay as soon as it connects; this repeats it
    /// after a refusal (a busy relay, or one whose domain's trust in ours
    /// is still on its way).
    pub fn to_pull(&mut self, connected: &HashSet<PeerId>) -> Vec<PeerId> {
        let now = tokio::time::Instant::now();
        let mut due = Vec::new();
        for relay in &mut self.relays {
            if relay.admitted || !connected.contains(&relay.peer) {
                continue;
            }
            match relay.pulled_at {
                Some(at) if now.duration_since(at) < RESERVATION_RETRY => {}
                // The first pull went out on connecting.
                None => relay.pulled_at = Some(now),
                Some(_) => {
                    relay.pulled_at = Some(now);
                    due.push(relay.peer);
                }
            }
        }
        due
    }

    /// Our last connection to `peer` closed.
    pub fn disconnected(&mut self, peer: &PeerId) {
        for relay in self.relays.iter_mut().filter(|r| r.peer == *peer) {
            relay.admitted = false;
            relay.pulled_at = None;
        }
    }

    /// The `/p2p-circuit` addresses to listen on now: through each relay
    /// that admitted us and that we do not listen through yet.
    pub fn to_listen(&self) -> Vec<Multiaddr> {
        let now = tokio::time::Instant::now();
        self.relays
            .iter()
            .filter(|r| r.admitted && r.listener.is_none())
            .filter(|r| r.not_before.is_none_or(|t| t <= now))
            .map(|r| r.address.clone().with(Protocol::P2pCircuit))
            .collect()
    }

    /// We listen on `circuit` (a relay's address and `/p2p-circuit`).
    pub fn listening(&mut self, circuit: &Multiaddr, id: ListenerId) {
        let relay = circuit
            .iter()
            .take_while(|p| *p != Protocol::P2pCircuit)
            .collect::<Multiaddr>();
        for r in self.relays.iter_mut().filter(|r| r.address == relay) {
            r.listener = Some(id);
        }
    }

    /// Listener `id` closed; the relay it listened through, if it was one.
    /// Its reservation is asked for again after [`RESERVATION_RETRY`].
    pub fn closed(&mut self, id: ListenerId) -> Option<PeerId> {
        let relay = self.relays.iter_mut().find(|r| r.listener == Some(id))?;
        relay.listener = None;
        relay.not_before = Some(tokio::time::Instant::now() + RESERVATION_RETRY);
        Some(relay.peer)
    }

    /// Addresses of `peer` through the relays that admitted us: a peer
    /// behind another NAT that listens through one of them is reachable
    /// there before we learnt its relayed address.
    pub fn circuits_to(&self, peer: PeerId) -> Vec<Multiaddr> {
        self.relays
            .iter()
            .filter(|r| r.admitted && r.peer != peer)
            .map(|r| {
                r.address
                    .clone()
                    .with(Protocol::P2pCircuit)
                    .with(Protocol::P2p(peer))
            })
            .collect()
    }
}

/// Whom a relay server is serving now: peers holding a reservation, and
/// both ends of each relayed connection. Their connections to the relay
/// carry that service, so the loop never closes them to save connections.
#[derive(Debug, Default)]
pub struct Served {
    reservations: HashSet<PeerId>,
    /// Relayed connections each peer is an end of.
    circuits: std::collections::HashMap<PeerId, usize>,
}

impl Served {
    /// Notes what the relay server did, and logs it.
    pub fn on_event(&mut self, event: &relay::Event) {
        match event {
            relay::Event::ReservationReqAccepted {
                src_peer_id,
                renewed,
            } => {
                if !renewed {
                    tracing::info!(peer = %src_peer_id, "relaying for a peer (reservation accepted)");
                }
                self.reservations.insert(*src_peer_id);
            }
            relay::Event::ReservationReqDenied { src_peer_id, .. } => {
                tracing::info!(peer = %src_peer_id, "refused a reservation");
            }
            relay::Event::ReservationClosed { src_peer_id }
            | relay::Event::ReservationTimedOut { src_peer_id } => {
                self.reservations.remove(src_peer_id);
            }
            relay::Event::CircuitReqAccepted {
                src_peer_id,
                dst_peer_id,
            } => {
                tracing::debug!(from = %src_peer_id, to = %dst_peer_id, "relaying a connection");
                for peer in [src_peer_id, dst_peer_id] {
                    *self.circuits.entry(*peer).or_default() += 1;
                }
            }
            relay::Event::CircuitClosed {
                src_peer_id,
                dst_peer_id,
                ..
            } => {
                for peer in [src_peer_id, dst_peer_id] {
                    if let std::collections::hash_map::Entry::Occupied(mut n) =
                        self.circuits.entry(*peer)
                    {
                        *n.get_mut() -= 1;
                        if *n.get() == 0 {
                            n.remove();
                        }
                    }
                }
            }
            relay::Event::CircuitReqDenied {
                src_peer_id,
                dst_peer_id,
                ..
            } => {
                tracing::info!(from = %src_peer_id, to = %dst_peer_id, "refused to relay a connection");
            }
            _ => {}
        }
    }

    /// The peers being served.
    pub fn peers(&self) -> impl Iterator<Item = PeerId> + '_ {
        self.reservations
            .iter()
            .chain(self.circuits.keys())
            .copied()
    }

    /// `peer`'s last connection closed: its reservation and circuits went
    /// with it.
    pub fn disconnected(&mut self, peer: &PeerId) {
        self.reservations.remove(peer);
        self.circuits.remove(peer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay_address(n: u8) -> (PeerId, Multiaddr) {
        let peer = libp2p::identity::Keypair::ed25519_from_bytes([n; 32])
            .unwrap()
            .public()
            .to_peer_id();
        let address: Multiaddr = format!("/ip4/192.0.2.{n}/tcp/4001/p2p/{peer}")
            .parse()
            .unwrap();
        (peer, address)
    }

    #[test]
    fn a_relay_is_listened_through_once_it_admitted_us_and_again_after_a_refusal() {
        let (peer, address) = relay_address(1);
        let mut client = Client::new(std::slice::from_ref(&address));
        assert!(client.is_relay(&peer));
        assert!(client.to_listen().is_empty(), "not before it admitted us");
        client.admitted_by(&peer);
        let circuit = address.clone().with(Protocol::P2pCircuit);
        assert_eq!(client.to_listen(), std::slice::from_ref(&circuit));
        let id = ListenerId::next();
        client.listening(&circuit, id);
        assert!(client.to_listen().is_empty(), "already listening");
        assert_eq!(client.closed(id), Some(peer));
        assert_eq!(client.closed(ListenerId::next()), None);
        assert!(client.to_listen().is_empty(), "not at once after a refusal");
        client.relays[0].not_before = Some(tokio::time::Instant::now());
        assert_eq!(client.to_listen(), [circuit]);
        client.disconnected(&peer);
        assert!(client.to_listen().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_relay_that_did_not_admit_us_is_pulled_from_again_now_and_then() {
        let (peer, address) = relay_address(1);
        let mut client = Client::new(&[address]);
        let connected: HashSet<PeerId> = [peer].into();
        assert!(client.to_pull(&HashSet::new()).is_empty(), "not connected");
        assert!(
            client.to_pull(&connected).is_empty(),
            "pulled on connecting"
        );
        tokio::time::advance(RESERVATION_RETRY).await;
        assert_eq!(client.to_pull(&connected), [peer]);
        assert!(client.to_pull(&connected).is_empty());
        client.admitted_by(&peer);
        tokio::time::advance(RESERVATION_RETRY).await;
        assert!(client.to_pull(&connected).is_empty(), "admitted");
    }

    #[test]
    fn peers_are_dialled_through_the_relays_that_admitted_us_only() {
        let (one, first) = relay_address(1);
        let (two, second) = relay_address(2);
        let mut client = Client::new(&[first.clone(), second]);
        let (target, _) = relay_address(3);
        assert!(client.circuits_to(target).is_empty());
        client.admitted_by(&one);
        let want: Multiaddr = format!("{first}/p2p-circuit/p2p/{target}").parse().unwrap();
        assert_eq!(client.circuits_to(target), [want]);
        // A relay is never dialled through itself.
        assert!(client.circuits_to(one).is_empty());
        assert!(!client.is_relay(&target) && client.is_relay(&two));
    }

    #[test]
    fn peers_with_a_reservation_or_a_circuit_are_served_until_it_ends() {
        let (a, _) = relay_address(1);
        let (b, _) = relay_address(2);
        let mut served = Served::default();
        served.on_event(&relay::Event::ReservationReqAccepted {
            src_peer_id: b,
            renewed: false,
        });
        served.on_event(&relay::Event::CircuitReqAccepted {
            src_peer_id: a,
            dst_peer_id: b,
        });
        let mut now: Vec<PeerId> = served.peers().collect();
        now.sort();
        now.dedup();
        assert_eq!(now.len(), 2);
        served.on_event(&relay::Event::CircuitClosed {
            src_peer_id: a,
            dst_peer_id: b,
            error: None,
        });
        assert_eq!(served.peers().collect::<Vec<_>>(), [b]);
        served.on_event(&relay::Event::ReservationClosed { src_peer_id: b });
        assert_eq!(served.peers().count(), 0);
    }

    #[test]
    fn only_admitted_peers_may_reserve_or_open_circuits() {
        let admitted = Admitted::default();
        let (peer, address) = relay_address(1);
        let mut limiter: Box<dyn relay::RateLimiter> = Box::new(admitted.clone());
        let now = std::time::Instant::now();
        assert!(!limiter.try_next(peer, &address, now));
        admitted.admit(peer);
        assert!(limiter.try_next(peer, &address, now));
        admitted.forget(&peer);
        assert!(!limiter.try_next(peer, &address, now));
    }
}
