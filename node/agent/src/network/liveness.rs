//! Noticing that an agent of our domain died, and saying so.
//!
//! An ad's lifetime (three refresh intervals) was the only way a killed
//! agent left the views: for two minutes jobs were matched to a machine
//! that was gone. As in SWIM and Lifeguard, the agents that were talking
//! to it notice first. When a connection to a peer of our own domain ends
//! with an error (a crash or a `kill -9` closes the socket without
//! libp2p's goodbye), the loop dials the peer once; if that dial fails
//! too, it publishes a signed **suspicion** ([`AdKind::Suspicion`])
//! wherever the suspect's ads travel: a bundle on the domain's own topic
//! holding one for the domain and a copy for each trusted domain, which
//! the domain's bridges hand on to each export topic. Every view that holds the suspect's ad, issued before the
//! suspicion, hides it at once and passes the suspicion on; its directory
//! entry goes with it.
//!
//! A suspicion cannot forge anything: it is signed by its reporter, who
//! must be certified in the suspect's domain, and all it can do is hide an
//! ad until the suspect speaks again. An agent wrongly suspected (a
//! network cut, a malicious colleague) sees its own ad hidden in its own
//! view and publishes it again (`pool::advertiser`), which every view
//! takes in place of the hidden one: that is its refutation. A suspect
//! that was cut off while it was suspected hears nothing of it, so a peer
//! that suspected it says it again, on the domain's topic, when the
//! suspect connects to it again. Only
//! peers of the suspect's own domain suspect it, at most once per
//! connection lost.
//!
//! A connection that a peer closes on purpose (it has more peers than it
//! keeps) ends, on our side, with the same error as one whose process was
//! killed. So only the peers of our domain we would keep anyway (the ones
//! [`super::directory`] chooses for us, whom we would dial again in any
//! case) are dialled to tell the two apart, each at most once per
//! [`CONFIRM_COOLDOWN`]: every agent is among the chosen peers of about
//! five of its colleagues, and they are the ones that notice it die. A
//! peer lost again within the cooldown is dialled at the loop's next tick
//! (a few seconds) instead of at once.

use std::time::Duration;

use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};
use libp2p::PeerId;
use starling_protocol::classad::{ClassAd, Expr, Name, Value};
use starling_protocol::gossip::{self, AdKind, Topic};
use starling_protocol::identity::Timestamp;

use super::Loop;

/// How long a suspicion is valid: long enough to cross the pool, short
/// enough that an old one replayed changes nothing (a view only hides ads
/// issued before it anyway).
pub const SUSPICION_TTL: Duration = Duration::from_secs(60);

/// Peers being dialled to see whether they are alive, at most (beyond
/// this a lost peer is left to its ad's lifetime).
pub const MAX_CONFIRMING: usize = 64;

/// How long after a dial to see whether a peer is alive the loop does not
/// make another for the same peer.
pub const CONFIRM_COOLDOWN: Duration = Duration::from_secs(300);

impl Loop {
    /// A connection to `peer` ended (no other is left); `error` when it
    /// ended without a goodbye.
    pub(super) fn lost(&mut self, peer: PeerId, error: bool) {
        let own = self.domains.first().map(String::as_str);
        if !error || own.is_none() || self.directory.domain_of(&peer) != own {
            return;
        }
        // Only the peers we would keep: the others we may have lost to
        // their own peer limit, and asking would only reopen what they
        // closed. Each agent is among about DOMAIN_PEERS colleagues'
        // chosen peers, and those notice its death.
        let me = *self.swarm.local_peer_id();
        if !own.is_some_and(|own| self.directory.chosen_in_domain(&me, own, &peer)) {
            return;
        }
        let now = tokio::time::Instant::now();
        self.confirmed_at
            .retain(|_, at| now.duration_since(*at) < CONFIRM_COOLDOWN);
        self.confirming
            .retain(|_, (since, _)| now.duration_since(*since) < CONFIRM_COOLDOWN);
        if self.confirming.contains_key(&peer) || self.confirming.len() >= MAX_CONFIRMING {
            return;
        }
        if self.confirmed_at.contains_key(&peer) {
            // Dialled lately: not again at once (a peer that keeps closing
            // our connection would have us dial it in a loop), but at the
            // loop's next tick ([`Loop::confirm_deferred`]). Without that
            // dial an agent lost once (a connection closed while the pool
            // formed) and killed within the cooldown was never suspected:
            // its ad stayed in every view until it expired.
            tracing::debug!(%peer, "lost a peer of our domain again: dialling it at the next tick");
            self.confirming.insert(peer, (now, false));
            return;
        }
        self.confirm(peer, now);
    }

    /// Dials `peer`, lost with an error, to see whether it is alive; if it
    /// cannot even be dialled it is not.
    fn confirm(&mut self, peer: PeerId, now: tokio::time::Instant) {
        self.confirming.insert(peer, (now, true));
        self.confirmed_at.insert(peer, now);
        tracing::debug!(%peer, "lost a peer of our domain: dialling it again");
        let opts = DialOpts::peer_id(peer)
            .condition(PeerCondition::DisconnectedAndNotDialing)
            .addresses(self.directory.addresses_of(&peer))
            .extend_addresses_through_behaviour()
            .build();
        if self.swarm.dial(opts).is_err() {
            self.confirming.remove(&peer);
            self.suspect(peer, true);
        }
    }

    /// Dials the peers lost again within the cooldown ([`Loop::lost`]) and
    /// not connected since; called every few seconds.
    pub(super) fn confirm_deferred(&mut self) {
        let now = tokio::time::Instant::now();
        let due: Vec<PeerId> = self
            .confirming
            .iter()
            .filter(|(peer, (_, dialled))| !dialled && !self.swarm.is_connected(peer))
            .map(|(peer, _)| *peer)
            .collect();
        for peer in due {
            self.confirm(peer, now);
        }
    }

    /// A dial to `peer` failed: if it was to see whether it is alive, it
    /// is not.
    pub(super) fn unreachable(&mut self, peer: PeerId) {
        if self.confirming.remove(&peer).is_some() {
            self.suspect(peer, true);
        }
    }

    /// `peer` is connected: alive, whatever we feared. If we suspected it
    /// lately it may never have heard (it was cut off while we said so):
    /// we say it again on our domain's topic, where it hears it from us
    /// and refutes it, and where views that hid its ad already let the
    /// repeat go no further.
    pub(super) fn reached(&mut self, peer: &PeerId) {
        self.confirming.remove(peer);
        let now = tokio::time::Instant::now();
        if let Some(at) = self.suspected.remove(peer) {
            if now.duration_since(at) < SUSPICION_TTL {
                tracing::info!(%peer, "a peer we suspected is back: telling it, so that it refutes");
                self.suspect(*peer, false);
            }
        }
    }

    /// Publishes a suspicion of `peer` in a bundle on our domain's topic:
    /// for our domain and, when `everywhere`, a copy for each trusted
    /// domain.
    fn suspect(&mut self, peer: PeerId, everywhere: bool) {
        let Some(own) = self.domains.first().cloned() else {
            return;
        };
        if everywhere {
            tracing::info!(%peer, "a peer of our domain is gone (connection lost, dial failed): suspecting it");
            let now = tokio::time::Instant::now();
            self.suspected
                .retain(|_, at| now.duration_since(*at) < SUSPICION_TTL);
            if self.suspected.len() < MAX_CONFIRMING {
                self.suspected.insert(peer, now);
            }
        }
        // Everywhere: on each audience's copy too, as the suspect's ads
        // went (our colleagues that bridge to each hand it on).
        let mut audiences: Vec<Option<String>> = vec![None];
        if everywhere {
            audiences.extend(
                self.domains
                    .iter()
                    .skip(1)
                    .filter(|d| **d != own)
                    .cloned()
                    .map(Some),
            );
        }
        let now = Timestamp::now();
        let mut ads = Vec::new();
        for audience in audiences {
            let ad = suspicion_ad(&own, audience.as_deref(), &peer);
            match gossip::seal(
                &self.key,
                now.as_unix_millis(),
                now,
                SUSPICION_TTL.as_millis() as u64,
                AdKind::Suspicion,
                &ad,
                &self.certificates,
            ) {
                Ok(envelope) => ads.push((audience, envelope.to_bytes())),
                Err(e) => tracing::warn!(error = %e, "cannot sign a suspicion"),
            }
        }
        let Ok(topic) = Topic::ads(&own) else { return };
        for bundle in self.publish_ads(ads) {
            let _ = self.view.send_message(super::ViewInput::Published {
                topic: topic.clone(),
                data: bundle,
            });
        }
    }
}

/// A suspicion's ad: `MyType`, the domain, the suspect and, on an export
/// topic, the audience.
fn suspicion_ad(domain: &str, audience: Option<&str>, suspect: &PeerId) -> ClassAd {
    let mut ad = ClassAd::new();
    let text = |s: &str| Expr::from(Value::string(s));
    ad.insert(Name::known("MyType"), text("Suspicion"));
    ad.insert(Name::known("StarlingDomain"), text(domain));
    ad.insert(
        Name::known(gossip::SUSPECT_ATTR),
        text(&suspect.to_string()),
    );
    if let Some(audience) = audience {
        ad.insert(Name::known(gossip::AUDIENCE_ATTR), text(audience));
    }
    ad
}
