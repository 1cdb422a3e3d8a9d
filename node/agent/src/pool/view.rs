//! The agent's view of the pool: the signed ads it accepted, newest per
//! signer, indexed by `MyType`, dropped when they expire.
//!
//! [`View`] is a state machine with no I/O: [`View::offer`] takes the bytes
//! of a gossip message on an export topic (or of one ad from a peer's page)
//! and `now`, and returns a [`Verdict`] that the network turns into
//! gossipsub's accept / ignore / reject; [`View::offer_bundle`] does the
//! same for each ad of a bundle from our domain's own topic. The rules, in
//! the order they are checked:
//!
//! 1. Larger than [`gossip::MAX_SIGNED_AD_LEN`]: rejected (oversized).
//! 2. Not an envelope, or a signature that does not match the bytes:
//!    rejected (malformed, forged).
//! 3. Outside its validity window beyond the allowed clock skew, or not a
//!    machine or submitter ad: rejected.
//! 4. No certificate from a domain trusted here admitting the signer, or
//!    an ad whose `StarlingDomain` is not that domain, or (from gossip) a
//!    domain other than the topic's: rejected (not admitted).
//! 5. Misaddressed ([`Topic::admits`], [`Topic::admits_bundled`]): an ad
//!    whose signed audience (`StarlingAudience`) is not the topic's, a
//!    bundle's ad of another domain than the topic's, or a foreign
//!    domain's ad not meant for this agent's domain (its internal ad, or
//!    one exported to a third domain): rejected (not admitted). An ad of
//!    this agent's own domain meant for a trusted domain (it comes in its
//!    signer's bundle) is checked as any other but kept aside, on that
//!    audience's shelf: it is handed on to the audience's topic where
//!    this agent bridges to it ([`BundledVerdict::relay`]) and served to
//!    that audience's pulls ([`View::page`]), never counted, matched or
//!    shown here.
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
    AgentId, CertificateCache, Envelope, Error as IdentityError, Freshness, Kind, Opened,
    Timestamp, TrustAnchors, Verifier,
};
use starling_protocol::view::{Cursor, Digest};
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

/// What [`View::offer_bundle`] decided for one ad of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundledVerdict {
    pub verdict: Verdict,
    /// An accepted copy of our domain's ad meant for a trusted domain: that
    /// domain and the ad as signed, for a bridge to hand on to its topic.
    pub relay: Option<(String, Vec<u8>)>,
}

/// One verdict for a whole bundle, as gossipsub takes one per message: a
/// rejection if any ad was refused (the sender signed or relayed it), else
/// the first acceptance, else the first reason to ignore.
pub fn bundle_verdict(verdicts: &[BundledVerdict]) -> Verdict {
    let first = |f: fn(&Verdict) -> bool| verdicts.iter().map(|v| &v.verdict).find(|v| f(v));
    first(|v| matches!(v, Verdict::Rejected(_)))
        .or_else(|| first(|v| matches!(v, Verdict::Accepted { .. })))
        .or_else(|| verdicts.first().map(|v| &v.verdict))
        .cloned()
        .unwrap_or(Verdict::Ignored(Ignored::Duplicate))
}

/// How an ad reached the view: alone on a gossip topic, in a bundle on our
/// domain's topic, or in a page pulled from a peer.
#[derive(Debug, Clone, Copy)]
enum Arrival<'a> {
    Topic(&'a Topic),
    Bundle(&'a Topic),
    Page,
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
        let arrival = match topic {
            Some(topic) => Arrival::Topic(topic),
            None => Arrival::Page,
        };
        let verdict = self.judge(bytes, arrival, now, &mut None);
        if let (Verdict::Rejected(_), Some(peer)) = (&verdict, from) {
            self.count_reject(peer);
        }
        verdict
    }

    /// Offers the ads of a page pulled from a peer, each as
    /// [`View::offer`] would with no topic and no sender (the caller
    /// decides what a refused one counts against whom), their signatures
    /// checked as a batch. Verdicts are in order.
    pub fn offer_page<B: AsRef<[u8]>>(&mut self, ads: &[B], now: Timestamp) -> Vec<Verdict> {
        self.judge_many(ads, Arrival::Page, now)
            .into_iter()
            .map(|(verdict, _)| verdict)
            .collect()
    }

    /// Offers a bundle that came on our domain's own `topic`, delivered by
    /// `from` ([`gossip::bundle`]): each ad in it is judged as one that
    /// came alone, except that it may be meant for any trusted domain
    /// ([`Topic::admits_bundled`]). Returns a verdict per ad, in order; a
    /// bundle that cannot be read is one rejection. The sender is counted
    /// one reject however many of its ads were refused.
    pub fn offer_bundle(
        &mut self,
        bytes: &[u8],
        topic: &Topic,
        from: Option<AgentId>,
        now: Timestamp,
    ) -> Vec<BundledVerdict> {
        let verdicts = match gossip::unbundle(bytes) {
            Ok(ads) => {
                let judged = self.judge_many(&ads, Arrival::Bundle(topic), now);
                ads.into_iter()
                    .zip(judged)
                    .map(|(ad, (verdict, audience))| {
                        let relay = match (&verdict, audience) {
                            (Verdict::Accepted { .. }, Some(audience)) => {
                                Some((audience, ad.into_vec()))
                            }
                            _ => None,
                        };
                        BundledVerdict { verdict, relay }
                    })
                    .collect()
            }
            Err(e) => vec![BundledVerdict {
                verdict: Verdict::Rejected(Rejection::Malformed(e.to_string())),
                relay: None,
            }],
        };
        if let (Some(peer), true) = (
            from,
            verdicts
                .iter()
                .any(|v| matches!(v.verdict, Verdict::Rejected(_))),
        ) {
            self.count_reject(peer);
        }
        verdicts
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

    /// Judges one ad that arrived as `arrival` says; `export_to` is set to
    /// the audience when it is our domain's copy for a trusted domain.
    fn judge(
        &mut self,
        bytes: &[u8],
        arrival: Arrival<'_>,
        now: Timestamp,
        export_to: &mut Option<String>,
    ) -> Verdict {
        match self.decode(bytes) {
            Ok(envelope) if self.holds(&envelope) => Verdict::Ignored(Ignored::Duplicate),
            Ok(envelope) => self.judge_envelope(envelope, None, arrival, now, export_to),
            Err(verdict) => verdict,
        }
    }

    /// Judges the ads of a bundle or a page: as [`View::judge`] one by
    /// one, but with the signatures of those not held already checked in
    /// one batch (about twice as fast; a batch with a bad signature in it
    /// is checked one by one, to say which). Returns each ad's verdict and
    /// the audience of a copy for one.
    fn judge_many<B: AsRef<[u8]>>(
        &mut self,
        ads: &[B],
        arrival: Arrival<'_>,
        now: Timestamp,
    ) -> Vec<(Verdict, Option<String>)> {
        let decoded: Vec<Result<Envelope, Verdict>> = ads
            .iter()
            .map(|ad| match self.decode(ad.as_ref()) {
                Ok(envelope) if self.holds(&envelope) => Err(Verdict::Ignored(Ignored::Duplicate)),
                other => other,
            })
            .collect();
        let fresh: Vec<&Envelope> = decoded.iter().filter_map(|d| d.as_ref().ok()).collect();
        let mut opened = Envelope::open_batch(&fresh, now, &self.freshness).into_iter();
        decoded
            .into_iter()
            .map(|d| match d {
                Ok(envelope) => {
                    let mut audience = None;
                    let verdict =
                        self.judge_envelope(envelope, opened.next(), arrival, now, &mut audience);
                    (verdict, audience)
                }
                Err(verdict) => (verdict, None),
            })
            .collect()
    }

    /// An ad's envelope, decoded and of a kind of ad, or the verdict on it.
    fn decode(&mut self, bytes: &[u8]) -> Result<Envelope, Verdict> {
        if bytes.len() > gossip::MAX_SIGNED_AD_LEN {
            return Err(Verdict::Rejected(Rejection::Oversized {
                size: bytes.len(),
            }));
        }
        let envelope = match self.verifier.decode(bytes) {
            Ok(e) => e,
            Err(e @ IdentityError::WeakKey { .. }) => {
                return Err(Verdict::Rejected(Rejection::Forged(e.to_string())))
            }
            Err(e) => return Err(Verdict::Rejected(Rejection::Malformed(e.to_string()))),
        };
        let kind = envelope.header().kind;
        if AdKind::from_kind(kind).is_none() {
            return Err(Verdict::Rejected(Rejection::WrongKind(kind)));
        }
        Ok(envelope)
    }

    /// Whether the very envelope is held already. It was checked when it
    /// came in: a second copy (pages pulled from several peers hold the
    /// same ads) is not worth two signature checks and a parse again.
    fn holds(&self, envelope: &Envelope) -> bool {
        let header = envelope.header();
        let key = Key {
            signer: *header.signer.as_bytes(),
            kind: header.kind.as_u16(),
        };
        std::iter::once(&self.main)
            .chain(self.exports.values())
            .any(|shelf| {
                shelf
                    .ads
                    .get(&key)
                    .is_some_and(|held| *held.envelope == *envelope)
            })
    }

    /// Judges a decoded envelope not held already; `opened` is its
    /// signature check when a batch made it ([`View::judge_many`]).
    fn judge_envelope(
        &mut self,
        envelope: Envelope,
        opened: Option<Result<Opened, IdentityError>>,
        arrival: Arrival<'_>,
        now: Timestamp,
        export_to: &mut Option<String>,
    ) -> Verdict {
        let header = envelope.header().clone();
        let key = Key {
            signer: *header.signer.as_bytes(),
            kind: header.kind.as_u16(),
        };
        let read = match (opened, AdKind::from_kind(header.kind)) {
            (Some(Ok(opened)), Some(kind)) => gossip::read_opened(opened, kind),
            (Some(Err(e)), _) => Err(e.into()),
            _ => gossip::open(&envelope, now, &self.freshness),
        };
        let signed = match read {
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
        let admitted = match arrival {
            Arrival::Topic(topic) => {
                Topic::admits(Some(topic), &self.own_domain, &domain, audience.as_deref())
            }
            Arrival::Bundle(topic) => {
                topic.admits_bundled(&self.own_domain, &domain, audience.as_deref())
            }
            Arrival::Page => Topic::admits(None, &self.own_domain, &domain, audience.as_deref()),
        };
        let addressed = match admitted {
            Ok(a) => a,
            Err(why) => return Verdict::Rejected(Rejection::NotAdmitted(why.to_string())),
        };
        if let Addressed::Export { audience } = &addressed {
            *export_to = Some(audience.clone());
        }
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

    /// What the view proper holds of `kinds` (every kind when empty): the
    /// live ads a page would send, as a [`Digest`] a pull carries so that a
    /// colleague sends only what differs. Hidden ads count as absent, as
    /// pages leave them out.
    pub fn digest(&self, kinds: &[Kind]) -> Digest {
        let mut digest = Digest::default();
        for (key, held) in &self.main.ads {
            let kind = held.envelope.header().kind;
            if !held.withdrawn && (kinds.is_empty() || kinds.contains(&kind)) {
                digest.add(&key.signer, kind, held.envelope.header().seq);
            }
        }
        digest
    }

    /// A page of the view proper for an agent of our own domain that
    /// holds what `holding` summarises: only the ads of the buckets where
    /// the two differ ([`View::page`] otherwise). The requester takes what
    /// is newer and ignores the rest, as with any page.
    pub fn page_differing(
        &self,
        kinds: &[Kind],
        after: Option<&Cursor>,
        max: usize,
        holding: &Digest,
    ) -> (Vec<Envelope>, Option<Cursor>) {
        let mine = self.digest(kinds);
        let differs = |key: &Key| {
            let bucket = Digest::bucket(&key.signer);
            mine.get(bucket) != holding.get(bucket)
        };
        page_of(
            self.main.after(after).filter(|(key, _)| differs(key)),
            kinds,
            max,
        )
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
mod tests;
