//! The agent's view of the pool: the signed ads it accepted, newest per
//! signer, indexed by `MyType`, dropped when they expire.
//!
//! [`View`] is a state machine with no I/O: [`View::offer`] takes the bytes
//! of a gossip message (or of one ad from a peer's page) and `now`, and
//! returns a [`Verdict`] that the network turns into gossipsub's
//! accept / ignore / reject. The rules, in the order they are checked:
//!
//! 1. Larger than [`gossip::MAX_SIGNED_AD_LEN`]: rejected (oversized).
//! 2. Not an envelope, or a signature that does not match the bytes:
//!    rejected (malformed, forged).
//! 3. Outside its validity window beyond the allowed clock skew, or not a
//!    machine or submitter ad: rejected.
//! 4. No certificate from a domain trusted here admitting the signer, or
//!    an ad whose `StarlingDomain` is not that domain, or (from gossip) a
//!    domain other than the topic's: rejected (not admitted).
//! 5. Misaddressed ([`Topic::admits`]): an ad whose signed audience
//!    (`StarlingAudience`) is not the topic's, or a foreign domain's ad
//!    not meant for this agent's domain (its internal ad, or one exported
//!    to a third domain): rejected (not admitted). An ad of this agent's
//!    own domain meant for a trusted domain is checked as any other but
//!    kept aside, on that audience's shelf: it is relayed (this agent
//!    follows its domain's export topics so that their mesh forms) and
//!    served to that audience's pulls ([`View::page`]), never counted,
//!    matched or shown here.
//! 6. A sequence number below the newest held for the signer: rejected as
//!    a replay when the newest was issued more than [`REPLAY_GRACE_MS`]
//!    later and the offered ad is more than [`REPLAY_AGE_MS`] old by our
//!    clock (gossipsub forgets a message within seconds, so even a starved
//!    honest relay does not hand on one that old); otherwise ignored (two
//!    updates crossed in flight, or a relay was slow). The same sequence number again is
//!    ignored (a duplicate: anti-entropy and gossip overlap).
//! 7. Otherwise accepted, replacing the older ad. An accepted ad whose
//!    `expires_at` has already passed (a withdrawal: an agent shutting down
//!    publishes one) removes the signer's ad from the view.
//!
//! Rejections are counted per peer that delivered them; the network turns
//! the counts into a peer score.
//!
//! Each shelf (the view proper, and one per audience of this domain's
//! exports) holds at most one ad per signer and kind, with its own
//! sequence numbers: an agent signs its internal ad and each audience's
//! copy with the same number, and each travels to different receivers.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use starling_protocol::classad::{ClassAd, Evaluator, Expr, Name, Side, Value};
use starling_protocol::gossip::{self, AdKind, Addressed, Topic};
use starling_protocol::identity::{
    AgentId, CertificateCache, Envelope, Error as IdentityError, Freshness, Kind, Timestamp,
    TrustAnchors, Verifier,
};
use starling_protocol::view::Cursor;
use starling_protocol::wire;

/// How much older than the newest ad held a lower sequence number may be
/// and still count as an update that crossed another in flight (30 s).
pub const REPLAY_GRACE_MS: u64 = 30_000;

/// How old (by the receiver's clock) an out-of-date ad must be before its
/// sender is blamed for a replay (2 min).
pub const REPLAY_AGE_MS: u64 = 120_000;

/// How many peers' reject counts are kept; the oldest entry is dropped
/// beyond this, so a flood of peer ids cannot grow the map.
pub const MAX_TRACKED_PEERS: usize = 4096;

/// How many ads a view holds at most: a pool of this many machines and
/// submitters. Offers beyond it are ignored until ads expire.
pub const MAX_ADS: usize = 100_000;

/// Why an offered ad was refused. Every one is the sender's fault, so the
/// network penalises the peer that delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    Oversized { size: usize },
    Malformed(String),
    Forged(String),
    Expired(String),
    WrongKind(Kind),
    NotAdmitted(String),
    Replayed { seq: u64, newest: u64 },
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::Oversized { size } => write!(
                f,
                "oversized: {size} bytes, more than the limit of {}",
                gossip::MAX_SIGNED_AD_LEN
            ),
            Rejection::Malformed(why) => write!(f, "malformed: {why}"),
            Rejection::Forged(why) => write!(f, "forged: {why}"),
            Rejection::Expired(why) => write!(f, "outside its validity window: {why}"),
            Rejection::WrongKind(kind) => write!(f, "a {kind} is not a gossiped ad"),
            Rejection::NotAdmitted(why) => write!(f, "not admitted: {why}"),
            Rejection::Replayed { seq, newest } => {
                write!(f, "replayed: sequence {seq}, newest held {newest}")
            }
        }
    }
}

/// Why an offered ad was neither taken nor held against its sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ignored {
    /// The same sequence number is already held.
    Duplicate,
    /// An older ad that crossed a newer one in flight.
    Stale,
    /// The view is full.
    Full,
}

/// What [`View::offer`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Taken into the view (or, for a withdrawal, the signer's ad removed).
    Accepted {
        signer: AgentId,
        kind: AdKind,
    },
    Ignored(Ignored),
    Rejected(Rejection),
}

/// The key of an ad in the view: signer and envelope kind. Ordered, so that
/// a page cursor is simply the last key sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Key {
    signer: [u8; 32],
    kind: u16,
}

impl Key {
    const LEN: usize = 34;

    fn to_cursor(self) -> Cursor {
        let mut bytes = Vec::with_capacity(Self::LEN);
        bytes.extend_from_slice(&self.signer);
        bytes.extend_from_slice(&self.kind.to_be_bytes());
        // 34 bytes are always within the cursor limit.
        Cursor::new(bytes).unwrap_or_else(|_| unreachable!("a 34-byte cursor is within limits"))
    }

    fn from_cursor(cursor: &Cursor) -> Option<Key> {
        let bytes = cursor.as_bytes();
        if bytes.len() != Self::LEN {
            return None;
        }
        let mut signer = [0; 32];
        signer.copy_from_slice(&bytes[..32]);
        Some(Key {
            signer,
            kind: u16::from_be_bytes([bytes[32], bytes[33]]),
        })
    }
}

/// One ad held in the view.
#[derive(Debug, Clone)]
pub struct Held {
    /// The envelope as received, to hand on to peers unchanged.
    pub envelope: Arc<Envelope>,
    pub ad: Arc<ClassAd>,
    /// The domain whose certificate admitted the signer.
    pub domain: String,
    /// `MyType`, or "" when the ad has none.
    pub my_type: String,
    /// Withdrawn ads are kept (hidden) until their predecessor would have
    /// expired, so that a late copy of the predecessor cannot revive them.
    withdrawn: bool,
    /// When the entry leaves the view.
    until: Timestamp,
    /// When this agent took it in.
    pub received: Timestamp,
}

/// Ads with their indexes: the view proper, or the ads of this domain
/// meant for one audience.
#[derive(Debug, Default)]
struct Shelf {
    ads: BTreeMap<Key, Held>,
    by_type: HashMap<String, BTreeSet<Key>>,
    expiry: BTreeSet<(Timestamp, Key)>,
}

/// The ads an agent accepted, with their indexes and reject counts.
#[derive(Debug)]
pub struct View {
    /// The domain of the agent whose view this is.
    own_domain: String,
    anchors: TrustAnchors,
    freshness: Freshness,
    verifier: Verifier,
    /// Each agent sends the same certificate with every ad.
    certificates: CertificateCache,
    /// The view proper: this domain's internal ads and the ads trusted
    /// domains export to it.
    main: Shelf,
    /// This domain's ads meant for each trusted domain, by audience.
    exports: BTreeMap<String, Shelf>,
    rejects: HashMap<AgentId, (u64, u64)>,
    reject_clock: u64,
}

impl View {
    /// A view of an agent of `own_domain` that admits ads from agents
    /// certified by `anchors`.
    pub fn new(own_domain: &str, anchors: TrustAnchors, freshness: Freshness) -> View {
        View {
            own_domain: own_domain.to_owned(),
            anchors,
            freshness,
            verifier: Verifier::new(freshness),
            certificates: CertificateCache::new(),
            main: Shelf::default(),
            exports: BTreeMap::new(),
            rejects: HashMap::new(),
            reject_clock: 0,
        }
    }

    /// Offers the bytes of one signed ad, delivered by `from` (on `topic`,
    /// when it came by gossip).
    pub fn offer(
        &mut self,
        bytes: &[u8],
        topic: Option<&Topic>,
        from: Option<AgentId>,
        now: Timestamp,
    ) -> Verdict {
        let verdict = self.judge(bytes, topic, now);
        if let (Verdict::Rejected(_), Some(peer)) = (&verdict, from) {
            self.count_reject(peer);
        }
        verdict
    }

    /// Inserts this agent's own ad, already signed by it: its internal ad
    /// (`audience` `None`) or its copy for a trusted domain.
    pub fn insert_own(
        &mut self,
        envelope: Envelope,
        ad: ClassAd,
        domain: &str,
        audience: Option<&str>,
        now: Timestamp,
    ) {
        let key = Key {
            signer: *envelope.header().signer.as_bytes(),
            kind: envelope.header().kind.as_u16(),
        };
        let shelf = match audience {
            None => &mut self.main,
            Some(a) => self.exports.entry(a.to_owned()).or_default(),
        };
        shelf.store(key, envelope, ad, domain.to_owned(), now);
    }

    fn judge(&mut self, bytes: &[u8], topic: Option<&Topic>, now: Timestamp) -> Verdict {
        if bytes.len() > gossip::MAX_SIGNED_AD_LEN {
            return Verdict::Rejected(Rejection::Oversized { size: bytes.len() });
        }
        let envelope = match self.verifier.decode(bytes) {
            Ok(e) => e,
            Err(e @ IdentityError::WeakKey { .. }) => {
                return Verdict::Rejected(Rejection::Forged(e.to_string()))
            }
            Err(e) => return Verdict::Rejected(Rejection::Malformed(e.to_string())),
        };
        let header = envelope.header().clone();
        if AdKind::from_kind(header.kind).is_none() {
            return Verdict::Rejected(Rejection::WrongKind(header.kind));
        }
        let key = Key {
            signer: *header.signer.as_bytes(),
            kind: header.kind.as_u16(),
        };
        // The very envelope already held was checked when it came in: a
        // second copy (pages pulled from several peers hold the same ads)
        // is not worth two signature checks and a parse again.
        if std::iter::once(&self.main)
            .chain(self.exports.values())
            .any(|shelf| {
                shelf
                    .ads
                    .get(&key)
                    .is_some_and(|held| *held.envelope == envelope)
            })
        {
            return Verdict::Ignored(Ignored::Duplicate);
        }
        let signed = match gossip::open(&envelope, now, &self.freshness) {
            Ok(s) => s,
            Err(wire::Error::Identity(
                e @ (IdentityError::Expired { .. }
                | IdentityError::NotYetValid { .. }
                | IdentityError::EmptyWindow { .. }),
            )) => return Verdict::Rejected(Rejection::Expired(e.to_string())),
            Err(wire::Error::Identity(e @ IdentityError::BadSignature { .. })) => {
                return Verdict::Rejected(Rejection::Forged(e.to_string()))
            }
            Err(e) => return Verdict::Rejected(Rejection::Malformed(e.to_string())),
        };
        let signer = signed.signer();
        let certificates = signed.verified_certificates_cached(
            &self.anchors,
            now,
            &self.freshness,
            &mut self.certificates,
        );
        let claimed = text_attr(&signed.ad, "StarlingDomain");
        let domain = match certificates
            .iter()
            .find(|c| Some(c.domain.as_str()) == claimed.as_deref())
        {
            Some(cert) => cert.domain.clone(),
            None => {
                let why = match (&claimed, certificates.is_empty()) {
                    (None, _) => "the ad names no StarlingDomain".to_owned(),
                    (Some(d), true) => {
                        format!("no certificate from a domain trusted here admits it to {d:?}")
                    }
                    (Some(d), false) => format!("its certificates do not admit it to {d:?}"),
                };
                return Verdict::Rejected(Rejection::NotAdmitted(why));
            }
        };
        let audience = text_attr(&signed.ad, gossip::AUDIENCE_ATTR);
        if audience.is_none() && signed.ad.get(gossip::AUDIENCE_ATTR).is_some() {
            return Verdict::Rejected(Rejection::NotAdmitted(format!(
                "its {} is not a string",
                gossip::AUDIENCE_ATTR
            )));
        }
        let addressed = match Topic::admits(topic, &self.own_domain, &domain, audience.as_deref()) {
            Ok(a) => a,
            Err(why) => return Verdict::Rejected(Rejection::NotAdmitted(why.to_string())),
        };
        if signed.kind == AdKind::Suspicion {
            return self.suspicion(&signed.ad, signer, &domain, addressed, header.issued_at);
        }
        let exported_ads: usize = self.exports.values().map(|s| s.ads.len()).sum();
        let viewed_ads = self.main.ads.len();
        let (shelf, held_already) = match addressed {
            Addressed::View => (&mut self.main, viewed_ads),
            Addressed::Export { audience } => {
                (self.exports.entry(audience).or_default(), exported_ads)
            }
        };
        if let Some(held) = shelf.ads.get(&key) {
            let newest = held.envelope.header();
            if header.seq == newest.seq {
                return Verdict::Ignored(Ignored::Duplicate);
            }
            if header.seq < newest.seq {
                let late_by = newest
                    .issued_at
                    .as_unix_millis()
                    .saturating_sub(header.issued_at.as_unix_millis());
                let age = now
                    .as_unix_millis()
                    .saturating_sub(header.issued_at.as_unix_millis());
                return if late_by > REPLAY_GRACE_MS && age > REPLAY_AGE_MS {
                    Verdict::Rejected(Rejection::Replayed {
                        seq: header.seq,
                        newest: newest.seq,
                    })
                } else {
                    Verdict::Ignored(Ignored::Stale)
                };
            }
        } else if held_already >= MAX_ADS {
            return Verdict::Ignored(Ignored::Full);
        }
        let kind = signed.kind;
        shelf.store(key, envelope, signed.ad, domain, now);
        Verdict::Accepted { signer, kind }
    }

    /// A suspicion from `reporter`, of `domain`, issued at `issued_at`:
    /// the suspect's machine ad on the shelf it is addressed to, if it is
    /// of the reporter's domain and older than the suspicion, is hidden
    /// (as a withdrawal hides it: a later ad of the suspect, its
    /// refutation, takes its place). Accepted, and so passed on, only when
    /// it hid something: a suspicion of an agent already gone, or about
    /// one that has spoken since, goes no further.
    fn suspicion(
        &mut self,
        ad: &ClassAd,
        reporter: AgentId,
        domain: &str,
        addressed: Addressed,
        issued_at: Timestamp,
    ) -> Verdict {
        let Some(suspect) =
            text_attr(ad, gossip::SUSPECT_ATTR).and_then(|s| s.parse::<AgentId>().ok())
        else {
            return Verdict::Rejected(Rejection::Malformed(format!(
                "a suspicion whose {} is not an agent id",
                gossip::SUSPECT_ATTR
            )));
        };
        if suspect == reporter {
            return Verdict::Rejected(Rejection::Malformed("an agent suspects itself".to_owned()));
        }
        let shelf = match addressed {
            Addressed::View => &mut self.main,
            Addressed::Export { audience } => match self.exports.get_mut(&audience) {
                Some(shelf) => shelf,
                None => return Verdict::Ignored(Ignored::Stale),
            },
        };
        let key = Key {
            signer: *suspect.public_key().as_bytes(),
            kind: Kind::MACHINE_AD.as_u16(),
        };
        let older = shelf.ads.get(&key).is_some_and(|held| {
            !held.withdrawn && held.domain == domain && held.envelope.header().issued_at < issued_at
        });
        if !older {
            return Verdict::Ignored(Ignored::Stale);
        }
        shelf.hide(&key);
        Verdict::Accepted {
            signer: suspect,
            kind: AdKind::Suspicion,
        }
    }

    /// Trusts `anchors` from now on (the domain's policy changed): ads of
    /// domains no longer among `domains`, and this domain's ads meant for
    /// them, leave at once; the rest are admitted again by their next copy
    /// as before. Returns how many live ads left the view proper.
    pub fn set_anchors(&mut self, anchors: TrustAnchors, domains: &[String]) -> usize {
        self.anchors = anchors;
        self.certificates = CertificateCache::new();
        self.exports
            .retain(|audience, _| domains.contains(audience));
        let gone: Vec<Key> = self
            .main
            .ads
            .iter()
            .filter(|(_, held)| !domains.contains(&held.domain))
            .map(|(key, _)| *key)
            .collect();
        gone.iter()
            .filter_map(|key| self.main.remove(key))
            .filter(|held| !held.withdrawn)
            .count()
    }

    /// When the next ad's time is up (the view's own or an export
    /// shelf's), if any is held.
    pub fn next_expiry(&self) -> Option<Timestamp> {
        std::iter::once(&self.main)
            .chain(self.exports.values())
            .filter_map(|shelf| shelf.expiry.first().map(|(until, _)| *until))
            .min()
    }

    /// Drops every ad whose time is up; returns how many live ads left the
    /// view proper.
    pub fn expire(&mut self, now: Timestamp) -> usize {
        for shelf in self.exports.values_mut() {
            shelf.expire(now);
        }
        self.exports.retain(|_, shelf| !shelf.ads.is_empty());
        self.main.expire(now)
    }

    /// The live ads of one `MyType` (all types when `None`), in key order.
    pub fn ads_of_type<'a>(
        &'a self,
        my_type: Option<&str>,
    ) -> Box<dyn Iterator<Item = &'a Held> + 'a> {
        self.main.ads_of_type(my_type)
    }

    /// The live ads for which `constraint` evaluates to true.
    pub fn select<'a>(&'a self, my_type: Option<&str>, constraint: Option<&Expr>) -> Vec<&'a Held> {
        self.ads_of_type(my_type)
            .filter(|h| {
                constraint.is_none_or(|c| Evaluator::with_ads(Some(&h.ad), None).eval(c).is_true())
            })
            .collect()
    }

    /// How many live ads the view holds, by `MyType`.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        self.main
            .by_type
            .iter()
            .map(|(t, keys)| (t.clone(), keys.len()))
            .collect()
    }

    /// How many live ads the view holds.
    pub fn len(&self) -> usize {
        self.main.by_type.values().map(BTreeSet::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many live ads of this domain meant for `audience` are held.
    pub fn exported_to(&self, audience: &str) -> usize {
        self.exports
            .get(audience)
            .map_or(0, |shelf| shelf.by_type.values().map(BTreeSet::len).sum())
    }

    /// One page of live envelopes of `kinds` (all when empty) after
    /// `after`, at most `max`, and the cursor of the next page: of the
    /// view proper for an agent of this domain (`audience` `None`), else of
    /// this domain's ads meant for `audience`'s agents and the ads
    /// `audience`'s own agents sent us (nothing else of the view is theirs
    /// to see).
    pub fn page(
        &self,
        audience: Option<&str>,
        kinds: &[Kind],
        after: Option<&Cursor>,
        max: usize,
    ) -> (Vec<Envelope>, Option<Cursor>) {
        match audience {
            None => self.main.page(kinds, after, max),
            Some(a) => {
                // What this domain exports to `a`, and what `a` exports to
                // us: its own agents' ads, which tell a newcomer of `a`
                // where its own domain's agents are before it meets any.
                let ours = self
                    .exports
                    .get(a)
                    .into_iter()
                    .flat_map(|shelf| shelf.after(after));
                let theirs = self.main.after(after).filter(|(_, h)| h.domain == a);
                page_of(merged(ours, theirs), kinds, max)
            }
        }
    }

    /// The sequence number and arrival time of `signer`'s live ad of `kind`.
    pub fn holding(&self, signer: &AgentId, kind: Kind) -> Option<(u64, Timestamp)> {
        let key = Key {
            signer: *signer.public_key().as_bytes(),
            kind: kind.as_u16(),
        };
        self.main
            .ads
            .get(&key)
            .filter(|h| !h.withdrawn)
            .map(|h| (h.envelope.header().seq, h.received))
    }

    /// `signer`'s live machine ad: the one in the view proper, else any
    /// copy of it meant for another domain.
    pub fn machine_of(&self, signer: &AgentId) -> Option<&Held> {
        let key = Key {
            signer: *signer.public_key().as_bytes(),
            kind: Kind::MACHINE_AD.as_u16(),
        };
        std::iter::once(&self.main)
            .chain(self.exports.values())
            .find_map(|shelf| shelf.ads.get(&key).filter(|h| !h.withdrawn))
    }

    /// How many messages from `peer` were rejected.
    pub fn rejects(&self, peer: &AgentId) -> u64 {
        self.rejects.get(peer).map_or(0, |&(n, _)| n)
    }

    /// Counts one rejected message against `peer`.
    pub fn count_reject(&mut self, peer: AgentId) {
        self.reject_clock += 1;
        let clock = self.reject_clock;
        if !self.rejects.contains_key(&peer) && self.rejects.len() >= MAX_TRACKED_PEERS {
            // Forget the peer whose last reject is oldest.
            if let Some(oldest) = self
                .rejects
                .iter()
                .min_by_key(|(_, &(_, at))| at)
                .map(|(p, _)| *p)
            {
                self.rejects.remove(&oldest);
            }
        }
        let entry = self.rejects.entry(peer).or_insert((0, clock));
        entry.0 += 1;
        entry.1 = clock;
    }
}

impl Shelf {
    fn store(&mut self, key: Key, envelope: Envelope, ad: ClassAd, domain: String, now: Timestamp) {
        let expires = envelope.header().expires_at;
        // A withdrawal stays (hidden) as long as the ad it replaces would
        // have lived, so the older ad cannot come back in the meantime.
        let (withdrawn, until) = if expires <= now {
            let previous = self.ads.get(&key).map_or(now, |h| h.until);
            (true, previous.max(now))
        } else {
            (false, expires)
        };
        self.remove(&key);
        let my_type = text_attr(&ad, "MyType").unwrap_or_default();
        if !withdrawn {
            self.by_type.entry(my_type.clone()).or_default().insert(key);
        }
        self.expiry.insert((until, key));
        self.ads.insert(
            key,
            Held {
                envelope: Arc::new(envelope),
                ad: Arc::new(ad),
                domain,
                my_type,
                withdrawn,
                until,
                received: now,
            },
        );
    }

    /// Hides a live ad as a withdrawal would, until it would have expired.
    fn hide(&mut self, key: &Key) {
        if let Some(held) = self.ads.get_mut(key) {
            held.withdrawn = true;
            let my_type = held.my_type.clone();
            self.unindex(&my_type, key);
        }
    }

    fn remove(&mut self, key: &Key) -> Option<Held> {
        let held = self.ads.remove(key)?;
        self.expiry.remove(&(held.until, *key));
        self.unindex(&held.my_type, key);
        Some(held)
    }

    /// Takes `key` out of the index of its `MyType`.
    fn unindex(&mut self, my_type: &str, key: &Key) {
        if let Some(keys) = self.by_type.get_mut(my_type) {
            keys.remove(key);
            if keys.is_empty() {
                self.by_type.remove(my_type);
            }
        }
    }

    /// Drops every ad whose time is up; returns how many live ads left.
    fn expire(&mut self, now: Timestamp) -> usize {
        let mut gone = 0;
        while let Some(&(until, key)) = self.expiry.first() {
            if until > now {
                break;
            }
            if let Some(held) = self.remove(&key) {
                gone += usize::from(!held.withdrawn);
            }
        }
        gone
    }

    /// The live ads of one `MyType` (all types when `None`), in key order.
    fn ads_of_type<'a>(&'a self, my_type: Option<&str>) -> Box<dyn Iterator<Item = &'a Held> + 'a> {
        match my_type {
            None => Box::new(self.ads.values().filter(|h| !h.withdrawn)),
            Some(t) => match self.by_type.get(t) {
                Some(keys) => Box::new(keys.iter().filter_map(|k| self.ads.get(k))),
                None => Box::new(std::iter::empty()),
            },
        }
    }

    /// One page of live envelopes of `kinds` (all when empty) after
    /// `after`, at most `max`, and the cursor of the next page.
    fn page(
        &self,
        kinds: &[Kind],
        after: Option<&Cursor>,
        max: usize,
    ) -> (Vec<Envelope>, Option<Cursor>) {
        page_of(self.after(after), kinds, max)
    }

    /// The ads after the cursor, in key order.
    fn after<'a>(&'a self, after: Option<&Cursor>) -> impl Iterator<Item = (&'a Key, &'a Held)> {
        let start = after.and_then(Key::from_cursor);
        match start {
            Some(k) => self
                .ads
                .range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded)),
            None => self.ads.range(..),
        }
    }
}

/// One page of the live envelopes of `kinds` among `ads` (in key order):
/// at most `max`, within a response's size, and the cursor of the next.
fn page_of<'a>(
    ads: impl Iterator<Item = (&'a Key, &'a Held)>,
    kinds: &[Kind],
    max: usize,
) -> (Vec<Envelope>, Option<Cursor>) {
    let mut page = Vec::new();
    let mut budget = starling_protocol::view::MAX_RESPONSE_LEN.saturating_sub(1024);
    let mut last = None;
    for (key, held) in ads {
        if held.withdrawn || !(kinds.is_empty() || kinds.contains(&held.envelope.header().kind)) {
            continue;
        }
        let len = held.envelope.to_bytes().len() + 16;
        if page.len() >= max || len > budget {
            return (page, last.map(Key::to_cursor));
        }
        budget -= len;
        page.push((*held.envelope).clone());
        last = Some(*key);
    }
    (page, None)
}

/// Two key-ordered runs of ads with no key in common, as one.
fn merged<'a>(
    a: impl Iterator<Item = (&'a Key, &'a Held)>,
    b: impl Iterator<Item = (&'a Key, &'a Held)>,
) -> impl Iterator<Item = (&'a Key, &'a Held)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some((ka, _)), Some((kb, _))) if kb < ka => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

/// A string attribute of `ad`, evaluated in the ad alone.
fn text_attr(ad: &ClassAd, name: &str) -> Option<String> {
    let name = Name::new(name).ok()?;
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, name.folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;
    use starling_protocol::identity::{Certificate, Keypair, Roles};

    const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
    const MINUTE: u64 = 60_000;
    const DOMAIN: &str = "lab.test";

    fn domain_key() -> Keypair {
        Keypair::from_seed(&[200; 32])
    }
    fn agent(n: u8) -> Keypair {
        Keypair::from_seed(&[n; 32])
    }
    fn peer() -> AgentId {
        agent(99).agent_id()
    }

    fn certificate(domain: &str, by: &Keypair, for_agent: &Keypair) -> Envelope {
        Certificate {
            domain: domain.to_owned(),
            domain_key: by.public(),
            agent: for_agent.agent_id(),
            roles: "execute".parse::<Roles>().unwrap(),
            valid_from: T0.saturating_sub_millis(MINUTE),
            valid_until: T0.saturating_add_millis(600 * MINUTE),
        }
        .issue(by, 1)
        .unwrap()
    }

    fn ad_text(name: &str, domain: &str) -> ClassAd {
        parse_ad(&format!(
            "[ MyType = \"Machine\"; Name = \"{name}\"; StarlingDomain = \"{domain}\"; Cpus = 4 ]"
        ))
        .unwrap()
    }

    /// A machine ad by agent `n`, certified in DOMAIN, sequence `seq`,
    /// issued at `at` for three minutes.
    fn signed(n: u8, seq: u64, at: Timestamp) -> Vec<u8> {
        let key = agent(n);
        let cert = certificate(DOMAIN, &domain_key(), &key);
        gossip::seal(
            &key,
            seq,
            at,
            3 * MINUTE,
            AdKind::Machine,
            &ad_text(&format!("m{n}"), DOMAIN),
            &[cert],
        )
        .unwrap()
        .to_bytes()
    }

    fn view() -> View {
        let mut anchors = TrustAnchors::default();
        anchors.insert(DOMAIN, domain_key().public());
        View::new(DOMAIN, anchors, Freshness::default())
    }

    fn offer(view: &mut View, bytes: &[u8], now: Timestamp) -> Verdict {
        view.offer(bytes, Some(&Topic::ads(DOMAIN).unwrap()), Some(peer()), now)
    }

    fn names(view: &View) -> Vec<String> {
        let mut names: Vec<String> = view
            .select(Some("Machine"), None)
            .iter()
            .map(|h| text_attr(&h.ad, "Name").unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_certified_ad_enters_and_a_newer_one_replaces_it() {
        let mut v = view();
        assert!(matches!(
            offer(&mut v, &signed(1, 1, T0), T0),
            Verdict::Accepted { .. }
        ));
        assert!(matches!(
            offer(&mut v, &signed(2, 1, T0), T0),
            Verdict::Accepted { .. }
        ));
        assert_eq!(names(&v), ["m1", "m2"]);
        let later = T0.saturating_add_millis(MINUTE);
        assert!(matches!(
            offer(&mut v, &signed(1, 2, later), later),
            Verdict::Accepted { .. }
        ));
        assert_eq!(v.len(), 2, "still one ad per signer");
        assert_eq!(v.counts().get("Machine"), Some(&2));
        assert_eq!(v.rejects(&peer()), 0);
    }

    /// A suspicion of agent `suspect` by agent `by` (certified in
    /// `domain`), issued at `at`.
    fn suspicion(by: u8, domain: &str, suspect: u8, at: Timestamp) -> Vec<u8> {
        let key = agent(by);
        let cert = certificate(domain, &domain_key(), &key);
        let ad = parse_ad(&format!(
            "[ MyType = \"Suspicion\"; StarlingDomain = \"{domain}\"; StarlingSuspect = \"{}\" ]",
            agent(suspect).agent_id()
        ))
        .unwrap();
        gossip::seal(&key, 1, at, MINUTE, AdKind::Suspicion, &ad, &[cert])
            .unwrap()
            .to_bytes()
    }

    #[test]
    fn a_suspicion_hides_the_suspects_older_ad_until_it_speaks_again() {
        let mut v = view();
        offer(&mut v, &signed(1, 1, T0), T0);
        offer(&mut v, &signed(2, 1, T0), T0);
        let at = T0.saturating_add_millis(1_000);
        // Agent 2 lost agent 1 and says so: agent 1 leaves the view.
        assert_eq!(
            offer(&mut v, &suspicion(2, DOMAIN, 1, at), at),
            Verdict::Accepted {
                signer: agent(1).agent_id(),
                kind: AdKind::Suspicion
            }
        );
        assert_eq!(names(&v), ["m2"]);
        assert!(v.machine_of(&agent(1).agent_id()).is_none());
        // The same ad again (a late copy, a pulled page) does not bring it
        // back; a second suspicion has nothing left to hide and goes no
        // further.
        assert_eq!(
            offer(&mut v, &signed(1, 1, T0), at),
            Verdict::Ignored(Ignored::Duplicate)
        );
        assert_eq!(
            offer(&mut v, &suspicion(3, DOMAIN, 1, at), at),
            Verdict::Ignored(Ignored::Stale)
        );
        // Agent 1 was alive after all: its next ad refutes the suspicion.
        let later = at.saturating_add_millis(1_000);
        assert!(matches!(
            offer(&mut v, &signed(1, 2, later), later),
            Verdict::Accepted { .. }
        ));
        assert_eq!(names(&v), ["m1", "m2"]);
        // A suspicion older than the ad it would hide changes nothing.
        assert_eq!(
            offer(&mut v, &suspicion(2, DOMAIN, 1, at), later),
            Verdict::Ignored(Ignored::Stale)
        );
        assert_eq!(names(&v), ["m1", "m2"]);
        assert_eq!(v.rejects(&peer()), 0);
    }

    #[test]
    fn a_suspicion_that_names_no_agent_or_its_own_signer_is_refused() {
        let mut v = view();
        offer(&mut v, &signed(1, 1, T0), T0);
        let key = agent(2);
        let cert = certificate(DOMAIN, &domain_key(), &key);
        for text in [
            "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\" ]".to_owned(),
            "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\"; StarlingSuspect = 42 ]"
                .to_owned(),
            "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\"; StarlingSuspect = \"x\" ]"
                .to_owned(),
            format!(
                "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\"; StarlingSuspect = \"{}\" ]",
                key.agent_id()
            ),
        ] {
            let bytes = gossip::seal(
                &key,
                1,
                T0,
                MINUTE,
                AdKind::Suspicion,
                &parse_ad(&text).unwrap(),
                std::slice::from_ref(&cert),
            )
            .unwrap()
            .to_bytes();
            assert!(
                matches!(offer(&mut v, &bytes, T0), Verdict::Rejected(Rejection::Malformed(_))),
                "{text}"
            );
        }
        assert_eq!(names(&v), ["m1"]);
        assert_eq!(v.rejects(&peer()), 4);
    }

    #[test]
    fn the_same_ad_twice_is_ignored_not_held_against_the_sender() {
        let mut v = view();
        let ad = signed(1, 1, T0);
        offer(&mut v, &ad, T0);
        assert_eq!(offer(&mut v, &ad, T0), Verdict::Ignored(Ignored::Duplicate));
        assert_eq!(v.rejects(&peer()), 0);
    }

    #[test]
    fn an_older_ad_is_a_replay_unless_it_merely_crossed_a_newer_one() {
        let mut v = view();
        let old = signed(1, 1, T0);
        let crossed = signed(1, 2, T0.saturating_add_millis(1_000));
        let newest_at = T0.saturating_add_millis(2 * MINUTE);
        offer(&mut v, &signed(1, 3, newest_at), newest_at);
        // Two minutes older than the newest, but just issued by our clock
        // (a relay was slow, or our clock is behind): not held against anyone.
        assert_eq!(
            offer(&mut v, &old, T0.saturating_add_millis(1_000)),
            Verdict::Ignored(Ignored::Stale)
        );
        // Three minutes old when it arrives: no relay is that late.
        let later = T0.saturating_add_millis(3 * MINUTE);
        assert!(matches!(
            offer(&mut v, &old, later),
            Verdict::Rejected(Rejection::Replayed { seq: 1, newest: 3 })
        ));
        let mut v = view();
        let at = T0.saturating_add_millis(2_000);
        offer(&mut v, &signed(1, 3, at), at);
        assert_eq!(
            offer(&mut v, &crossed, at),
            Verdict::Ignored(Ignored::Stale)
        );
        assert_eq!(v.rejects(&peer()), 0);
    }

    #[test]
    fn oversized_garbage_forged_and_expired_ads_are_rejected_and_counted() {
        let mut v = view();
        let huge = vec![0u8; gossip::MAX_SIGNED_AD_LEN + 1];
        assert!(matches!(
            offer(&mut v, &huge, T0),
            Verdict::Rejected(Rejection::Oversized { .. })
        ));
        assert!(matches!(
            offer(&mut v, b"not an envelope", T0),
            Verdict::Rejected(Rejection::Malformed(_))
        ));
        let mut forged = signed(1, 1, T0);
        let last = forged.len() - 1;
        forged[last] ^= 1; // the signature's last byte
        assert!(matches!(
            offer(&mut v, &forged, T0),
            Verdict::Rejected(Rejection::Forged(_))
        ));
        let long_ago = T0.saturating_sub_millis(60 * MINUTE);
        assert!(matches!(
            offer(&mut v, &signed(1, 1, long_ago), T0),
            Verdict::Rejected(Rejection::Expired(_))
        ));
        assert!(v.is_empty());
        assert_eq!(v.rejects(&peer()), 4);
    }

    #[test]
    fn ads_without_a_certificate_from_a_trusted_domain_are_rejected() {
        let mut v = view();
        let key = agent(1);
        let seal = |ad: &ClassAd, certs: &[Envelope]| {
            gossip::seal(&key, 1, T0, 3 * MINUTE, AdKind::Machine, ad, certs)
                .unwrap()
                .to_bytes()
        };
        let rogue_domain = Keypair::from_seed(&[201; 32]);
        let cases = [
            ("no certificate", seal(&ad_text("m1", DOMAIN), &[])),
            (
                "signed by a domain key not trusted here",
                seal(
                    &ad_text("m1", DOMAIN),
                    &[certificate(DOMAIN, &rogue_domain, &key)],
                ),
            ),
            (
                "a certificate admitting another agent",
                seal(
                    &ad_text("m1", DOMAIN),
                    &[certificate(DOMAIN, &domain_key(), &agent(2))],
                ),
            ),
            (
                "an ad claiming another domain than its certificate",
                seal(
                    &ad_text("m1", "other.test"),
                    &[certificate(DOMAIN, &domain_key(), &key)],
                ),
            ),
        ];
        for (what, bytes) in cases {
            assert!(
                matches!(
                    offer(&mut v, &bytes, T0),
                    Verdict::Rejected(Rejection::NotAdmitted(_))
                ),
                "{what}"
            );
        }
        // A good ad on another domain's topic.
        assert!(matches!(
            v.offer(
                &signed(1, 1, T0),
                Some(&Topic::ads("other.test").unwrap()),
                Some(peer()),
                T0
            ),
            Verdict::Rejected(Rejection::NotAdmitted(_))
        ));
        assert!(v.is_empty());
    }

    #[test]
    fn a_withdrawal_removes_the_ad_and_its_predecessor_cannot_come_back() {
        let mut v = view();
        offer(&mut v, &signed(1, 1, T0), T0);
        let key = agent(1);
        let cert = certificate(DOMAIN, &domain_key(), &key);
        let at = T0.saturating_add_millis(1_000);
        let withdrawal = gossip::seal(
            &key,
            2,
            at,
            0,
            AdKind::Machine,
            &ad_text("m1", DOMAIN),
            &[cert],
        )
        .unwrap()
        .to_bytes();
        assert!(matches!(
            offer(&mut v, &withdrawal, at),
            Verdict::Accepted { .. }
        ));
        assert!(v.is_empty());
        assert_eq!(
            offer(&mut v, &signed(1, 1, T0), at),
            Verdict::Ignored(Ignored::Stale)
        );
        assert!(v.is_empty());
        // Once the predecessor would have expired, the tombstone goes too.
        v.expire(T0.saturating_add_millis(3 * MINUTE));
        assert!(v.main.ads.is_empty());
    }

    #[test]
    fn ads_leave_the_view_when_they_expire() {
        let mut v = view();
        offer(&mut v, &signed(1, 1, T0), T0);
        offer(&mut v, &signed(2, 1, T0.saturating_add_millis(MINUTE)), T0);
        assert_eq!(v.expire(T0.saturating_add_millis(3 * MINUTE - 1)), 0);
        assert_eq!(v.expire(T0.saturating_add_millis(3 * MINUTE)), 1);
        assert_eq!(names(&v), ["m2"]);
        assert_eq!(v.expire(T0.saturating_add_millis(4 * MINUTE)), 1);
        assert!(v.is_empty() && v.counts().is_empty());
    }

    #[test]
    fn pages_cover_every_ad_once_in_order() {
        let mut v = view();
        for n in 1..=25 {
            offer(&mut v, &signed(n, 1, T0), T0);
        }
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let (ads, next) = v.page(None, &[], after.as_ref(), 7);
            assert!(ads.len() <= 7);
            seen.extend(ads.iter().map(|e| e.header().signer));
            match next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        assert_eq!(seen.len(), 25);
        let mut sorted = seen.clone();
        sorted.sort_by_key(|k| *k.as_bytes());
        sorted.dedup();
        assert_eq!(sorted.len(), 25);
        let (only_jobs, _) = v.page(None, &[Kind::SUBMITTER_AD], None, 100);
        assert!(only_jobs.is_empty());
        // A cursor that is not one of ours starts over rather than failing.
        let junk = Cursor::new(vec![1, 2, 3]).unwrap();
        assert_eq!(v.page(None, &[], Some(&junk), 100).0.len(), 25);
    }

    #[test]
    fn a_constraint_selects_ads() {
        let mut v = view();
        offer(&mut v, &signed(1, 1, T0), T0);
        offer(&mut v, &signed(2, 1, T0), T0);
        let c = starling_protocol::classad::parse_expr("Name == \"m2\"").unwrap();
        let picked = v.select(Some("Machine"), Some(&c));
        assert_eq!(picked.len(), 1);
        assert!(v.select(Some("Submitter"), None).is_empty());
        assert_eq!(v.select(None, None).len(), 2);
    }

    const FOREIGN: &str = "far.test";

    fn foreign_key() -> Keypair {
        Keypair::from_seed(&[202; 32])
    }

    /// A view of an agent of DOMAIN that also trusts FOREIGN.
    fn trusting_view() -> View {
        let mut anchors = TrustAnchors::default();
        anchors.insert(DOMAIN, domain_key().public());
        anchors.insert(FOREIGN, foreign_key().public());
        View::new(DOMAIN, anchors, Freshness::default())
    }

    /// A machine ad by agent `n` of `domain` (signed by `by`), meant for
    /// `audience` (its `StarlingAudience`, as ClassAd text; `None`: none).
    fn addressed(n: u8, domain: &str, by: &Keypair, audience: Option<&str>, seq: u64) -> Vec<u8> {
        let key = agent(n);
        let mut ad = ad_text(&format!("m{n}"), domain);
        if let Some(a) = audience {
            ad.insert(
                Name::new(gossip::AUDIENCE_ATTR).unwrap(),
                starling_protocol::classad::parse_expr(a).unwrap(),
            );
        }
        gossip::seal(
            &key,
            seq,
            T0,
            3 * MINUTE,
            AdKind::Machine,
            &ad,
            &[certificate(domain, by, &key)],
        )
        .unwrap()
        .to_bytes()
    }

    #[test]
    fn a_foreign_ad_enters_only_when_meant_for_this_domain_on_its_topic() {
        let mut v = trusting_view();
        let for_us = Topic::export(FOREIGN, DOMAIN).unwrap();
        let meant = addressed(1, FOREIGN, &foreign_key(), Some("\"lab.test\""), 1);
        assert!(matches!(
            v.offer(&meant, Some(&for_us), Some(peer()), T0),
            Verdict::Accepted { .. }
        ));
        assert_eq!(names(&v), ["m1"]);
        // From a pulled page (no topic) as well.
        let mut pulled = trusting_view();
        assert!(matches!(
            pulled.offer(&meant, None, None, T0),
            Verdict::Accepted { .. }
        ));
        // Its internal ad, one meant for a third domain, an audience that
        // is not a string, or a forged audience on our topic: refused,
        // counted, never a panic.
        let cases = [
            (
                "internal, on its own topic",
                addressed(2, FOREIGN, &foreign_key(), None, 1),
                Some(Topic::ads(FOREIGN).unwrap()),
            ),
            (
                "internal, pulled",
                addressed(2, FOREIGN, &foreign_key(), None, 1),
                None,
            ),
            (
                "internal, copied onto our topic",
                addressed(2, FOREIGN, &foreign_key(), None, 1),
                Some(for_us.clone()),
            ),
            (
                "meant for a third domain, on its topic",
                addressed(3, FOREIGN, &foreign_key(), Some("\"third.test\""), 1),
                Some(Topic::export(FOREIGN, "third.test").unwrap()),
            ),
            (
                "meant for a third domain, copied onto ours",
                addressed(3, FOREIGN, &foreign_key(), Some("\"third.test\""), 1),
                Some(for_us.clone()),
            ),
            (
                "an audience that is no string",
                addressed(4, FOREIGN, &foreign_key(), Some("42"), 1),
                Some(for_us.clone()),
            ),
            (
                "an audience that is undefined",
                addressed(4, FOREIGN, &foreign_key(), Some("Nowhere"), 1),
                Some(for_us.clone()),
            ),
            (
                "an audience that is not a domain name",
                addressed(4, FOREIGN, &foreign_key(), Some("\"a/b\""), 1),
                Some(for_us.clone()),
            ),
            (
                "our own domain's ad on the foreign topic",
                addressed(5, DOMAIN, &domain_key(), Some("\"lab.test\""), 1),
                Some(for_us.clone()),
            ),
        ];
        for (what, bytes, topic) in cases {
            let verdict = v.offer(&bytes, topic.as_ref(), Some(peer()), T0);
            assert!(
                matches!(verdict, Verdict::Rejected(Rejection::NotAdmitted(_))),
                "{what}: {verdict:?}"
            );
        }
        assert_eq!(names(&v), ["m1"]);
        assert_eq!(v.rejects(&peer()), 9);
    }

    #[test]
    fn this_domains_ads_for_an_audience_are_relayed_and_served_to_it_but_never_counted() {
        let mut v = trusting_view();
        offer(&mut v, &signed(1, 1, T0), T0);
        let to_far = Topic::export(DOMAIN, FOREIGN).unwrap();
        let copy = addressed(1, DOMAIN, &domain_key(), Some("\"far.test\""), 1);
        // Same signer and sequence as the internal ad, on another shelf.
        assert!(matches!(
            v.offer(&copy, Some(&to_far), Some(peer()), T0),
            Verdict::Accepted { .. }
        ));
        assert!(matches!(
            v.offer(
                &addressed(2, DOMAIN, &domain_key(), Some("\"far.test\""), 1),
                Some(&to_far),
                Some(peer()),
                T0
            ),
            Verdict::Accepted { .. }
        ));
        assert_eq!(
            v.offer(&copy, Some(&to_far), Some(peer()), T0),
            Verdict::Ignored(Ignored::Duplicate)
        );
        assert_eq!(names(&v), ["m1"], "the copies are not in the view");
        assert_eq!(v.len(), 1);
        assert_eq!(v.exported_to(FOREIGN), 2);
        // Pages: our own agents get the view, the audience only its copies,
        // anyone else nothing.
        let signers = |page: Vec<Envelope>| -> Vec<String> {
            page.iter()
                .map(|e| {
                    let ad = gossip::open(e, T0, &Freshness::default()).unwrap().ad;
                    format!(
                        "{}:{}",
                        text_attr(&ad, "Name").unwrap(),
                        text_attr(&ad, gossip::AUDIENCE_ATTR).unwrap_or_default()
                    )
                })
                .collect()
        };
        assert_eq!(signers(v.page(None, &[], None, 100).0), ["m1:"]);
        let mut far = signers(v.page(Some(FOREIGN), &[], None, 100).0);
        far.sort();
        assert_eq!(far, ["m1:far.test", "m2:far.test"]);
        assert!(v.page(Some("third.test"), &[], None, 100).0.is_empty());
        // What far.test's own agents export to us goes back to far.test's
        // agents too (where their own domain is, for a newcomer), page by
        // page in one order with our copies.
        let theirs = addressed(9, FOREIGN, &foreign_key(), Some("\"lab.test\""), 1);
        let for_us = Topic::export(FOREIGN, DOMAIN).unwrap();
        assert!(matches!(
            v.offer(&theirs, Some(&for_us), Some(peer()), T0),
            Verdict::Accepted { .. }
        ));
        let mut far = Vec::new();
        let mut after = None;
        loop {
            let (page, next) = v.page(Some(FOREIGN), &[], after.as_ref(), 1);
            far.extend(signers(page));
            match next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        far.sort();
        assert_eq!(far, ["m1:far.test", "m2:far.test", "m9:lab.test"]);
        assert_eq!(signers(v.page(None, &[], None, 100).0).len(), 2);
        // On the internal topic, a copy is misaddressed.
        assert!(matches!(
            offer(
                &mut v,
                &addressed(3, DOMAIN, &domain_key(), Some("\"far.test\""), 1),
                T0
            ),
            Verdict::Rejected(Rejection::NotAdmitted(_))
        ));
        // A withdrawal of the copy takes it off the audience's pages.
        let key = agent(1);
        let mut ad = ad_text("m1", DOMAIN);
        ad.insert(
            Name::new(gossip::AUDIENCE_ATTR).unwrap(),
            starling_protocol::classad::parse_expr("\"far.test\"").unwrap(),
        );
        let at = T0.saturating_add_millis(1_000);
        let withdrawal = gossip::seal(
            &key,
            2,
            at,
            0,
            AdKind::Machine,
            &ad,
            &[certificate(DOMAIN, &domain_key(), &key)],
        )
        .unwrap()
        .to_bytes();
        assert!(matches!(
            v.offer(&withdrawal, Some(&to_far), Some(peer()), at),
            Verdict::Accepted { .. }
        ));
        let mut far = signers(v.page(Some(FOREIGN), &[], None, 100).0);
        far.sort();
        assert_eq!(far, ["m2:far.test", "m9:lab.test"]);
        assert_eq!(
            names(&v),
            ["m1", "m9"],
            "the internal ad and far.test's stay"
        );
        // When the domain stops trusting the audience, its shelf goes.
        let mut anchors = TrustAnchors::default();
        anchors.insert(DOMAIN, domain_key().public());
        v.set_anchors(anchors, &[DOMAIN.to_owned()]);
        assert_eq!(v.exported_to(FOREIGN), 0);
        assert_eq!(names(&v), ["m1"]);
    }

    #[test]
    fn garbage_under_an_audience_topic_never_panics() {
        let mut v = trusting_view();
        let topics = [
            Topic::export(FOREIGN, DOMAIN).unwrap(),
            Topic::export(DOMAIN, FOREIGN).unwrap(),
            Topic::Flock,
        ];
        let good = addressed(1, FOREIGN, &foreign_key(), Some("\"lab.test\""), 1);
        for topic in &topics {
            for cut in [0, 1, 10, good.len() / 2, good.len() - 1] {
                let verdict = v.offer(&good[..cut], Some(topic), Some(peer()), T0);
                assert!(matches!(verdict, Verdict::Rejected(_)), "{verdict:?}");
            }
            for bit in (0..good.len() * 8).step_by(97) {
                let mut flipped = good.clone();
                flipped[bit / 8] ^= 1 << (bit % 8);
                let _ = v.offer(&flipped, Some(topic), Some(peer()), T0);
            }
        }
    }

    #[test]
    fn reject_counts_are_kept_for_a_bounded_number_of_peers() {
        let mut v = view();
        for n in 0..(MAX_TRACKED_PEERS as u32 + 10) {
            let mut seed = [7u8; 32];
            seed[..4].copy_from_slice(&n.to_be_bytes());
            v.count_reject(Keypair::from_seed(&seed).agent_id());
        }
        assert_eq!(v.rejects.len(), MAX_TRACKED_PEERS);
    }
}
