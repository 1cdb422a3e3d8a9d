//! Signed ClassAds and the gossipsub topics they travel on.
//!
//! A machine ad or a submitter ad is an [`Envelope`] of kind
//! [`Kind::MACHINE_AD`] or [`Kind::SUBMITTER_AD`], signed by the agent it
//! describes. Its body is the CBOR map `{ad, certificates}`: the ClassAd as
//! new-syntax text (`[ a = 1; b = "x" ]`, as [`unparse_ad`] writes it) and
//! the signer's domain certificates (envelope bytes), so a receiver can check
//! which domains the signer belongs to without asking anyone. A job is the
//! same body in an envelope of kind [`Kind::JOB`], signed by the agent it was
//! submitted to; it travels in claim and transfer requests, never by gossip.
//!
//! [`decode`] reads one envelope (bounded by [`MAX_SIGNED_AD_LEN`]),
//! [`open`] checks signature and window and parses the ad with the bounded
//! ClassAd parser.
//!
//! Topics: full machine ads go to their domain's own topic
//! (`starling/ads/<domain>/2`, [`Topic::Ads`]), which only the domain's own
//! agents follow. What a domain exports to a trusted domain goes to a topic
//! of its own, one per audience (`starling/ads/<domain>/for/<audience>/1`,
//! [`Topic::Export`]), which only the audience's agents and the domain's
//! bridges to it follow: gossipsub hands a message only to peers that
//! follow its topic, so an ad not exported to a domain is never sent, nor
//! relayed, to that domain's agents.
//!
//! A message on an export topic is one envelope's bytes, nothing around
//! them. A message on a domain's own topic is a [`bundle`]: all that one
//! publication of an agent signs (its internal ad and its copy for each
//! trusted domain), so that the domain's agents handle one message per
//! publication, not one per audience, and keep the copies for their
//! audiences' pulls; the agents that bridge to an audience hand its copy
//! on to the audience's topic, as signed. The audience is also signed inside the ad
//! ([`AUDIENCE_ATTR`]), so an ad copied onto another topic is refused by
//! its receivers ([`Topic::admits`]). [`Topic::Flock`] (`starling/flock/1`)
//! is reserved and not used. gossipsub payloads stay a few KiB in
//! practice; the limits below only refuse what no honest agent sends.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cbor;
use crate::classad::{parse_ad, unparse_ad, ClassAd};
use crate::identity::{
    check_domain_name, AgentId, Certificate, CertificateCache, Envelope, Error as IdentityError,
    Freshness, Header, Keypair, Kind, Opened, Timestamp, TrustAnchors, MAX_CERTIFICATE_LEN,
};
use crate::wire::{self, envelope_list, Error};

/// Longest ClassAd text a signed ad may carry (64 KiB). A machine ad is a
/// few KiB; anything this big is refused, not truncated.
pub const MAX_AD_TEXT_LEN: usize = 64 << 10;

/// Most domain certificates one signed ad may carry.
pub const MAX_CERTIFICATES: usize = 4;

/// Largest certificate envelope: the certificate body and the envelope's
/// signer, signature and window around it.
pub const MAX_CERTIFICATE_ENVELOPE_LEN: usize = MAX_CERTIFICATE_LEN + 512;

/// Largest signed ad, as envelope bytes: the ad text, its certificates and
/// the envelope around them (83 KiB). Set gossipsub's `max_transmit_size` to
/// at least this.
pub const MAX_SIGNED_AD_LEN: usize =
    MAX_AD_TEXT_LEN + MAX_CERTIFICATES * MAX_CERTIFICATE_ENVELOPE_LEN + 1024;

/// The flock-wide topic for exported availability (reserved: exports go
/// to per-audience topics, [`Topic::Export`]).
pub const FLOCK_TOPIC: &str = "starling/flock/1";

/// The attribute of a machine ad that names the domain it is meant for
/// (`StarlingAudience = "d0.example"`), signed with the ad. An ad without
/// it is its domain's internal ad, for the domain's own agents only.
pub const AUDIENCE_ATTR: &str = "StarlingAudience";

/// What a signed ad describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AdKind {
    /// A machine (its slots), signed by its agent. Gossiped.
    Machine,
    /// A submitter (idle jobs per user), signed by its agent. Gossiped.
    Submitter,
    /// A job, signed by the agent it was submitted to. Sent in claims.
    Job,
    /// That an agent seems dead: signed by an agent of the same domain
    /// that lost its connection to it and could not dial it again, and
    /// gossiped on the topics the suspect's ads travel on. Its ad names
    /// the suspect ([`SUSPECT_ATTR`]); a view hides the suspect's machine
    /// ad issued before the suspicion, and the suspect, alive after all,
    /// refutes it by publishing its ad again. Never held in a view.
    Suspicion,
}

/// The attribute of a suspicion's ad that names the suspect's agent id.
pub const SUSPECT_ATTR: &str = "StarlingSuspect";

impl AdKind {
    pub const ALL: [AdKind; 4] = [
        AdKind::Machine,
        AdKind::Submitter,
        AdKind::Job,
        AdKind::Suspicion,
    ];

    /// The envelope kind.
    pub const fn kind(self) -> Kind {
        match self {
            AdKind::Machine => Kind::MACHINE_AD,
            AdKind::Submitter => Kind::SUBMITTER_AD,
            AdKind::Job => Kind::JOB,
            AdKind::Suspicion => Kind::SUSPICION,
        }
    }

    /// The ad kind of an envelope kind, if it is one.
    pub fn from_kind(kind: Kind) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.kind() == kind)
    }
}

/// A gossipsub topic Starling uses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Topic {
    /// Full machine ads of one domain, for its own agents:
    /// `starling/ads/<domain>/1`.
    Ads { domain: String },
    /// The ads `domain` exports to the trusted domain `audience`:
    /// `starling/ads/<domain>/for/<audience>/1`.
    Export { domain: String, audience: String },
    /// Reserved, not used: `starling/flock/1`.
    Flock,
}

/// Why an ad may not travel on a topic, or be held by an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misaddressed {
    /// The ad is of another domain than the topic's.
    Domain { ad: String, topic: String },
    /// The ad is meant for another audience than the topic's (`None`: the
    /// domain's own agents).
    Audience {
        ad: Option<String>,
        topic: Option<String>,
    },
    /// A foreign domain's ad that is not meant for the receiver's domain.
    NotForUs {
        domain: String,
        audience: Option<String>,
    },
}

impl fmt::Display for Misaddressed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = |a: &Option<String>| match a {
            Some(a) => format!("{a:?}"),
            None => "its own domain".to_owned(),
        };
        match self {
            Misaddressed::Domain { ad, topic } => {
                write!(f, "an ad of domain {ad:?} on the topic of {topic:?}")
            }
            Misaddressed::Audience { ad, topic } => write!(
                f,
                "an ad meant for {} on the topic meant for {}",
                who(ad),
                who(topic)
            ),
            Misaddressed::NotForUs { domain, audience } => write!(
                f,
                "an ad of domain {domain:?} meant for {}, not for this domain",
                who(audience)
            ),
        }
    }
}

/// Where an ad that may be held goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addressed {
    /// Into the view: the receiver's own domain's internal ad, or a foreign
    /// domain's ad meant for the receiver's domain.
    View,
    /// The receiver's own domain's ad meant for `audience`: relayed (and
    /// kept to answer that audience's pulls), never counted in the view.
    Export { audience: String },
}

impl Topic {
    /// The ads topic of `domain`, which must be a valid domain name.
    pub fn ads(domain: &str) -> Result<Self, Error> {
        check_domain_name(domain)?;
        Ok(Topic::Ads {
            domain: domain.to_owned(),
        })
    }

    /// The topic of what `domain` exports to `audience`; both must be
    /// valid domain names.
    pub fn export(domain: &str, audience: &str) -> Result<Self, Error> {
        check_domain_name(domain)?;
        check_domain_name(audience)?;
        Ok(Topic::Export {
            domain: domain.to_owned(),
            audience: audience.to_owned(),
        })
    }

    /// The topic an ad of `domain` meant for `audience` travels on.
    pub fn of(domain: &str, audience: Option<&str>) -> Result<Self, Error> {
        match audience {
            None => Self::ads(domain),
            Some(a) => Self::export(domain, a),
        }
    }

    /// Reads a topic name this code publishes to.
    pub fn parse(name: &str) -> Option<Self> {
        if name == FLOCK_TOPIC {
            return Some(Topic::Flock);
        }
        let rest = name.strip_prefix("starling/ads/")?;
        if let Some((domain, audience)) =
            rest.strip_suffix("/1").and_then(|r| r.split_once("/for/"))
        {
            return Self::export(domain, audience).ok();
        }
        Self::ads(rest.strip_suffix("/2")?).ok()
    }

    /// The domain whose ads travel here.
    pub fn domain(&self) -> Option<&str> {
        match self {
            Topic::Ads { domain } | Topic::Export { domain, .. } => Some(domain),
            Topic::Flock => None,
        }
    }

    /// The domain the ads here are meant for (`None`: the domain's own).
    pub fn audience(&self) -> Option<&str> {
        match self {
            Topic::Export { audience, .. } => Some(audience),
            _ => None,
        }
    }

    /// The topics an agent of `own` follows when its domain trusts
    /// `trusted` and it bridges to `bridging`: its domain's own, what each
    /// trusted domain exports to it, and what its domain exports to each
    /// domain it bridges to (where it hands on the copies its colleagues'
    /// bundles carry). Never a trusted domain's own topic: that carries
    /// ads not exported.
    pub fn followed(own: &str, trusted: &[String], bridging: &[String]) -> Vec<Topic> {
        let mut topics: Vec<Topic> = Self::ads(own).into_iter().collect();
        for other in trusted.iter().filter(|t| *t != own) {
            topics.extend(Self::export(other, own));
            if bridging.contains(other) {
                topics.extend(Self::export(own, other));
            }
        }
        topics.sort();
        topics.dedup();
        topics
    }

    /// Whether an ad of `domain` meant for `audience` may travel in a
    /// [`bundle`] on this topic, and be held by an agent of `receiver`: a
    /// bundle travels only on a domain's own topic and carries only that
    /// domain's ads, for its own agents or for any of their audiences.
    pub fn admits_bundled(
        &self,
        receiver: &str,
        domain: &str,
        audience: Option<&str>,
    ) -> Result<Addressed, Misaddressed> {
        match self {
            Topic::Ads { domain: of } if of == domain => {
                Topic::admits(None, receiver, domain, audience)
            }
            _ => Err(Misaddressed::Domain {
                ad: domain.to_owned(),
                topic: self.to_string(),
            }),
        }
    }

    /// Whether an ad of `domain` meant for `audience` may travel on this
    /// topic, and be held by an agent of `receiver`, and where it goes.
    pub fn admits(
        topic: Option<&Topic>,
        receiver: &str,
        domain: &str,
        audience: Option<&str>,
    ) -> Result<Addressed, Misaddressed> {
        if let Some(topic) = topic {
            if topic.domain() != Some(domain) {
                return Err(Misaddressed::Domain {
                    ad: domain.to_owned(),
                    topic: topic.domain().unwrap_or_default().to_owned(),
                });
            }
            if topic.audience() != audience {
                return Err(Misaddressed::Audience {
                    ad: audience.map(str::to_owned),
                    topic: topic.audience().map(str::to_owned),
                });
            }
        }
        match audience {
            None if domain == receiver => Ok(Addressed::View),
            Some(a) if a == receiver && domain != receiver => Ok(Addressed::View),
            Some(a) if domain == receiver => Ok(Addressed::Export {
                audience: a.to_owned(),
            }),
            _ => Err(Misaddressed::NotForUs {
                domain: domain.to_owned(),
                audience: audience.map(str::to_owned),
            }),
        }
    }
}

impl fmt::Display for Topic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Topic::Ads { domain } => write!(f, "starling/ads/{domain}/2"),
            Topic::Export { domain, audience } => {
                write!(f, "starling/ads/{domain}/for/{audience}/1")
            }
            Topic::Flock => f.write_str(FLOCK_TOPIC),
        }
    }
}

/// The body of a signed ad. New fields must be optional.
#[derive(Serialize, Deserialize)]
struct Body {
    /// The ClassAd in new syntax.
    ad: String,
    /// The signer's domain certificates.
    #[serde(default, with = "envelope_list")]
    certificates: Vec<Envelope>,
}

/// A signed ad whose signature and window have been checked.
#[derive(Debug, Clone)]
pub struct SignedAd {
    /// Signer, sequence number and window, as signed.
    pub header: Header,
    pub kind: AdKind,
    /// The ad, parsed.
    pub ad: ClassAd,
    /// The certificates the signer attached, read but not yet verified: see
    /// [`SignedAd::verified_certificates`].
    pub certificates: Vec<Envelope>,
}

impl SignedAd {
    /// The agent that signed.
    pub fn signer(&self) -> AgentId {
        AgentId::from_public_key(self.header.signer)
    }

    /// The attached certificates that admit the signer into a domain trusted
    /// by `anchors`, now. The others are dropped: a stale or foreign
    /// certificate does not make the ad itself invalid.
    pub fn verified_certificates(
        &self,
        anchors: &TrustAnchors,
        now: Timestamp,
        freshness: &Freshness,
    ) -> Vec<Certificate> {
        let mut cache = CertificateCache::with_capacity(MAX_CERTIFICATES);
        self.verified_certificates_cached(anchors, now, freshness, &mut cache)
    }

    /// [`SignedAd::verified_certificates`] with a [`CertificateCache`].
    pub fn verified_certificates_cached(
        &self,
        anchors: &TrustAnchors,
        now: Timestamp,
        freshness: &Freshness,
        cache: &mut CertificateCache,
    ) -> Vec<Certificate> {
        let signer = self.signer();
        self.certificates
            .iter()
            .filter_map(|env| {
                Certificate::verify_cached(env, &signer, anchors, now, freshness, cache).ok()
            })
            .collect()
    }
}

/// Signs `ad` as `kind`, valid from `now` for `ttl_ms`, with the signer's
/// domain `certificates` attached.
pub fn seal(
    key: &Keypair,
    seq: u64,
    now: Timestamp,
    ttl_ms: u64,
    kind: AdKind,
    ad: &ClassAd,
    certificates: &[Envelope],
) -> Result<Envelope, Error> {
    wire::check_count("certificate list", certificates, MAX_CERTIFICATES)?;
    for cert in certificates {
        if cert.header().kind != Kind::CERTIFICATE {
            return Err(crate::identity::Error::WrongKind {
                expected: Kind::CERTIFICATE,
                found: cert.header().kind,
            }
            .into());
        }
    }
    let text = unparse_ad(ad);
    if text.len() > MAX_AD_TEXT_LEN {
        return Err(Error::TooLarge {
            what: "ad text",
            size: text.len(),
            limit: MAX_AD_TEXT_LEN,
        });
    }
    let body = cbor::encode(&Body {
        ad: text,
        certificates: certificates.to_vec(),
    });
    let envelope = Envelope::seal(
        key,
        seq,
        now,
        now.saturating_add_millis(ttl_ms),
        kind.kind(),
        body,
    );
    let len = envelope.to_bytes().len();
    if len > MAX_SIGNED_AD_LEN {
        return Err(Error::TooLarge {
            what: "signed ad",
            size: len,
            limit: MAX_SIGNED_AD_LEN,
        });
    }
    Ok(envelope)
}

/// Reads a signed ad's envelope from a gossip payload (or any bytes), without
/// trusting it yet: see [`open`].
pub fn decode(bytes: &[u8]) -> Result<Envelope, Error> {
    Ok(Envelope::decode_with_limit(bytes, MAX_SIGNED_AD_LEN)?)
}

/// Opens a signed ad of any [`AdKind`]: checks the window and the signature
/// over the bytes received, then decodes the body and parses the ad.
pub fn open(envelope: &Envelope, now: Timestamp, freshness: &Freshness) -> Result<SignedAd, Error> {
    let found = envelope.header().kind;
    let kind = AdKind::from_kind(found).ok_or(Error::Invalid {
        field: "signed ad",
        reason: format!("a {found} is not a signed ad"),
    })?;
    open_kind(envelope, kind, now, freshness)
}

/// [`open`], also requiring the ad to be of `kind`.
pub fn open_kind(
    envelope: &Envelope,
    kind: AdKind,
    now: Timestamp,
    freshness: &Freshness,
) -> Result<SignedAd, Error> {
    let opened = envelope.open_kind(kind.kind(), now, freshness)?;
    read_opened(opened, kind)
}

/// The signed ad of `kind` in an envelope already opened (its signature
/// and times checked, as [`Envelope::open_batch`] does for many at once):
/// its body decoded, bounded and parsed. Never call it with an [`Opened`]
/// built by hand: it checks no signature.
pub fn read_opened(opened: Opened, kind: AdKind) -> Result<SignedAd, Error> {
    if opened.header.kind != kind.kind() {
        return Err(IdentityError::WrongKind {
            expected: kind.kind(),
            found: opened.header.kind,
        }
        .into());
    }
    let body: Body = cbor::decode(&opened.body, MAX_SIGNED_AD_LEN, "signed ad body")?;
    if body.ad.len() > MAX_AD_TEXT_LEN {
        return Err(Error::Invalid {
            field: "ad",
            reason: format!(
                "{} bytes of text, more than the limit of {MAX_AD_TEXT_LEN}",
                body.ad.len()
            ),
        });
    }
    wire::check_count("certificate list", &body.certificates, MAX_CERTIFICATES)?;
    let ad = parse_ad(&body.ad).map_err(|e| Error::Invalid {
        field: "ad",
        reason: e.to_string(),
    })?;
    Ok(SignedAd {
        header: opened.header,
        kind,
        ad,
        certificates: body.certificates,
    })
}

/// Most signed ads one bundle carries: an agent's internal ad and one copy
/// per trusted domain, with room to spare.
pub const MAX_BUNDLE_ADS: usize = 256;

/// Largest bundle, as CBOR bytes (120 KiB): one ad of the largest size
/// always fits, and gossipsub's `max_transmit_size` must leave room for
/// its own framing around it.
pub const MAX_BUNDLE_LEN: usize = 120 << 10;

/// Bytes CBOR adds around each ad in a bundle (a byte string's header) and
/// around the list (an array's header), at most.
const BUNDLE_OVERHEAD: usize = 9;

/// Packs signed ads (envelope bytes) into bundles: the payload of a message
/// on a domain's own topic ([`Topic::Ads`]). One publication of an agent
/// goes out as one bundle (its internal ad and each trusted domain's copy
/// together), so the domain's agents handle one message where they would
/// handle one per audience; the domain's bridges hand each copy on to its
/// audience's topic. More than fit in [`MAX_BUNDLE_LEN`] or
/// [`MAX_BUNDLE_ADS`] go in several bundles, in order; an ad too large for
/// any bundle goes alone, and its receivers refuse it as they would alone.
pub fn bundle<B: AsRef<[u8]>>(ads: &[B]) -> Vec<Vec<u8>> {
    let mut bundles = Vec::new();
    let mut start = 0;
    while start < ads.len() {
        let mut end = start;
        let mut size = BUNDLE_OVERHEAD;
        while end < ads.len() && end - start < MAX_BUNDLE_ADS {
            let next = ads[end].as_ref().len() + BUNDLE_OVERHEAD;
            if end > start && size + next > MAX_BUNDLE_LEN {
                break;
            }
            size += next;
            end += 1;
        }
        let chunk: Vec<&serde_bytes::Bytes> = ads[start..end]
            .iter()
            .map(|a| serde_bytes::Bytes::new(a.as_ref()))
            .collect();
        bundles.push(cbor::encode(&chunk));
        start = end;
    }
    bundles
}

/// Reads the signed ads (envelope bytes, not yet decoded) of a bundle:
/// refuses one over [`MAX_BUNDLE_LEN`], not a CBOR list of byte strings,
/// empty, or of more than [`MAX_BUNDLE_ADS`] ads.
pub fn unbundle(bytes: &[u8]) -> Result<Vec<serde_bytes::ByteBuf>, Error> {
    let ads: Vec<serde_bytes::ByteBuf> = cbor::decode(bytes, MAX_BUNDLE_LEN, "bundle of ads")?;
    wire::check_count("bundle of ads", &ads, MAX_BUNDLE_ADS)?;
    if ads.is_empty() {
        return Err(Error::Invalid {
            field: "bundle of ads",
            reason: "it holds no ad".to_owned(),
        });
    }
    Ok(ads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Roles;

    const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
    const HOUR: u64 = 3_600_000;

    fn agent() -> Keypair {
        Keypair::from_seed(&[1; 32])
    }
    fn domain() -> Keypair {
        Keypair::from_seed(&[2; 32])
    }

    fn certificate(name: &str) -> Envelope {
        Certificate {
            domain: name.to_owned(),
            domain_key: domain().public(),
            agent: agent().agent_id(),
            roles: "execute".parse::<Roles>().unwrap(),
            valid_from: T0,
            valid_until: T0.saturating_add_millis(24 * HOUR),
        }
        .issue(&domain(), 1)
        .unwrap()
    }

    #[test]
    fn a_sealed_machine_ad_opens_with_its_ad_and_certificates() {
        let ad = parse_ad("[ Machine = \"m1\"; Cpus = 8; Start = true ]").unwrap();
        let env = seal(
            &agent(),
            3,
            T0,
            HOUR,
            AdKind::Machine,
            &ad,
            &[certificate("physics")],
        )
        .unwrap();
        let back = decode(&env.to_bytes()).unwrap();
        let signed = open(&back, T0, &Freshness::default()).unwrap();
        assert_eq!(signed.kind, AdKind::Machine);
        assert_eq!(signed.header.seq, 3);
        assert_eq!(signed.signer(), agent().agent_id());
        assert!(signed.ad.same_as(&ad));
        let mut anchors = TrustAnchors::default();
        anchors.insert("physics", domain().public());
        let certs = signed.verified_certificates(&anchors, T0, &Freshness::default());
        assert_eq!(certs.len(), 1);
        assert_eq!(certs[0].domain, "physics");
        // Another domain's anchors do not vouch for it.
        let mut other = TrustAnchors::default();
        other.insert("chem", Keypair::from_seed(&[3; 32]).public());
        assert!(signed
            .verified_certificates(&other, T0, &Freshness::default())
            .is_empty());
    }

    #[test]
    fn open_kind_refuses_a_job_where_a_machine_ad_is_expected() {
        let ad = parse_ad("[ Owner = \"ann\" ]").unwrap();
        let env = seal(&agent(), 1, T0, HOUR, AdKind::Job, &ad, &[]).unwrap();
        let err = open_kind(&env, AdKind::Machine, T0, &Freshness::default()).unwrap_err();
        assert_eq!(err.to_string(), "expected a machine ad but this is a job");
        assert_eq!(
            open(&env, T0, &Freshness::default()).unwrap().kind,
            AdKind::Job
        );
    }

    #[test]
    fn a_non_ad_envelope_is_named() {
        let env = Envelope::seal(&agent(), 1, T0, T0, Kind::POLICY, vec![]);
        let err = open(&env, T0, &Freshness::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid signed ad: a domain policy is not a signed ad"
        );
    }

    #[test]
    fn an_ad_over_the_text_limit_is_refused_on_both_sides() {
        let big = format!("[ Blob = \"{}\" ]", "x".repeat(MAX_AD_TEXT_LEN));
        let ad = parse_ad(&big).unwrap();
        let err = seal(&agent(), 1, T0, HOUR, AdKind::Machine, &ad, &[]).unwrap_err();
        assert!(err.to_string().contains("limit of 65536"), "{err}");
        // A hand-made envelope with too much text is refused when opened.
        let body = cbor::encode(&Body {
            ad: big,
            certificates: vec![],
        });
        let env = Envelope::seal(&agent(), 1, T0, T0, Kind::MACHINE_AD, body);
        let err = open(&env, T0, &Freshness::default()).unwrap_err();
        assert!(err.to_string().contains("limit of 65536"), "{err}");
    }

    #[test]
    fn an_unparsable_ad_is_an_invalid_ad_not_a_panic() {
        let body = cbor::encode(&Body {
            ad: "[ a = ".to_owned(),
            certificates: vec![],
        });
        let env = Envelope::seal(&agent(), 1, T0, T0, Kind::MACHINE_AD, body);
        let err = open(&env, T0, &Freshness::default()).unwrap_err();
        assert!(err.to_string().starts_with("invalid ad: "), "{err}");
    }

    #[test]
    fn too_many_or_wrong_certificates_are_refused() {
        let ad = ClassAd::new();
        let five = vec![certificate("physics"); 5];
        let err = seal(&agent(), 1, T0, HOUR, AdKind::Machine, &ad, &five).unwrap_err();
        assert_eq!(
            err.to_string(),
            "certificate list holds 5 entries, more than the limit of 4"
        );
        let not_a_cert = Envelope::seal(&agent(), 1, T0, T0, Kind::POLICY, vec![]);
        let err = seal(&agent(), 1, T0, HOUR, AdKind::Machine, &ad, &[not_a_cert]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected a certificate but this is a domain policy"
        );
    }

    #[test]
    fn topics_name_their_domain_and_parse_back() {
        let topic = Topic::ads("physics.example.org").unwrap();
        assert_eq!(topic.to_string(), "starling/ads/physics.example.org/2");
        assert_eq!(Topic::parse(&topic.to_string()), Some(topic));
        // Version 1 carried single ads, not bundles.
        assert_eq!(Topic::parse("starling/ads/physics.example.org/1"), None);
        assert_eq!(Topic::parse("starling/flock/1"), Some(Topic::Flock));
        assert_eq!(Topic::parse("starling/ads/a b/2"), None);
        assert!(Topic::ads("bad/domain").is_err());
    }

    #[test]
    fn export_topics_name_domain_and_audience_and_parse_back() {
        let topic = Topic::export("d1.example", "d0.example").unwrap();
        assert_eq!(
            topic.to_string(),
            "starling/ads/d1.example/for/d0.example/1"
        );
        assert_eq!(Topic::parse(&topic.to_string()), Some(topic.clone()));
        assert_eq!(topic.domain(), Some("d1.example"));
        assert_eq!(topic.audience(), Some("d0.example"));
        assert_eq!(Topic::of("d1.example", Some("d0.example")).unwrap(), topic);
        for bad in [
            "starling/ads/d1/for//1",
            "starling/ads//for/d0/1",
            "starling/ads/d1/for/d0/for/d2/1",
            "starling/ads/d1/for/d 0/1",
            "starling/ads/d1/for/d0/2",
        ] {
            assert_eq!(Topic::parse(bad), None, "{bad}");
        }
        assert!(Topic::export("d1", "a/b").is_err());
    }

    #[test]
    fn an_agent_follows_its_own_topic_its_audiences_and_the_exports_it_bridges_never_a_foreign_domains_own(
    ) {
        let trusted = ["d0".to_owned(), "d1".to_owned(), "d2".to_owned()];
        let followed = Topic::followed("d0", &trusted, &["d2".to_owned()]);
        let names: Vec<String> = followed.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "starling/ads/d0/2",
                "starling/ads/d0/for/d2/1",
                "starling/ads/d1/for/d0/1",
                "starling/ads/d2/for/d0/1",
            ]
        );
        assert!(!followed.contains(&Topic::ads("d1").unwrap()));
        // A bridge to a domain not trusted follows nothing for it.
        let alone = Topic::followed("d0", &["d0".to_owned()], &["d1".to_owned()]);
        assert_eq!(alone, vec![Topic::ads("d0").unwrap()]);
    }

    #[test]
    fn an_ad_is_admitted_only_on_its_own_topic_and_by_its_audience() {
        let d0 = Topic::ads("d0").unwrap();
        let d1_for_d0 = Topic::export("d1", "d0").unwrap();
        let d0_for_d1 = Topic::export("d0", "d1").unwrap();
        // An agent of d0: its own internal ads go into the view.
        assert_eq!(
            Topic::admits(Some(&d0), "d0", "d0", None),
            Ok(Addressed::View)
        );
        // d1's ads meant for d0 too.
        assert_eq!(
            Topic::admits(Some(&d1_for_d0), "d0", "d1", Some("d0")),
            Ok(Addressed::View)
        );
        assert_eq!(
            Topic::admits(None, "d0", "d1", Some("d0")),
            Ok(Addressed::View)
        );
        // d0's own ads meant for d1 are relayed, not viewed.
        assert_eq!(
            Topic::admits(Some(&d0_for_d1), "d0", "d0", Some("d1")),
            Ok(Addressed::Export {
                audience: "d1".to_owned()
            })
        );
        // d1's internal ad, or d1's ad meant for d2, never enters d0.
        assert!(matches!(
            Topic::admits(None, "d0", "d1", None),
            Err(Misaddressed::NotForUs { .. })
        ));
        let err = Topic::admits(None, "d0", "d1", Some("d2")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "an ad of domain \"d1\" meant for \"d2\", not for this domain"
        );
        // An ad copied onto a topic of another audience or domain.
        let err = Topic::admits(Some(&d1_for_d0), "d0", "d1", None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "an ad meant for its own domain on the topic meant for \"d0\""
        );
        assert!(matches!(
            Topic::admits(Some(&d1_for_d0), "d0", "d2", Some("d0")),
            Err(Misaddressed::Domain { .. })
        ));
        assert!(matches!(
            Topic::admits(Some(&Topic::Flock), "d0", "d0", None),
            Err(Misaddressed::Domain { .. })
        ));
    }

    #[test]
    fn a_bundle_on_a_domains_topic_carries_its_ads_for_any_audience_and_nothing_else() {
        let d0 = Topic::ads("d0").unwrap();
        assert_eq!(d0.admits_bundled("d0", "d0", None), Ok(Addressed::View));
        assert_eq!(
            d0.admits_bundled("d0", "d0", Some("d1")),
            Ok(Addressed::Export {
                audience: "d1".to_owned()
            })
        );
        // Another domain's ad, even one meant for us, never rides in d0's
        // bundles; nor does anything on an export topic.
        assert!(d0.admits_bundled("d0", "d1", Some("d0")).is_err());
        let d0_for_d1 = Topic::export("d0", "d1").unwrap();
        assert!(d0_for_d1.admits_bundled("d1", "d0", Some("d1")).is_err());
        // An agent of d1 that follows d0's own topic is not its audience.
        assert!(d0.admits_bundled("d1", "d0", None).is_err());
    }

    #[test]
    fn a_bundle_gives_back_its_ads_in_order_and_splits_where_they_do_not_fit() {
        let small: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i; 2_000]).collect();
        let bundles = bundle(&small);
        assert_eq!(bundles.len(), 1);
        let back: Vec<Vec<u8>> = unbundle(&bundles[0])
            .unwrap()
            .into_iter()
            .map(|b| b.into_vec())
            .collect();
        assert_eq!(back, small);
        // Three ads of the largest size take three bundles, each within
        // the limit; so do more ads than one bundle may count.
        let large = vec![vec![7u8; MAX_SIGNED_AD_LEN]; 3];
        let bundles = bundle(&large);
        assert_eq!(bundles.len(), 3);
        assert!(bundles.iter().all(|b| b.len() <= MAX_BUNDLE_LEN));
        let many = vec![vec![1u8; 10]; MAX_BUNDLE_ADS + 1];
        let bundles = bundle(&many);
        assert_eq!(bundles.len(), 2);
        let count: usize = bundles.iter().map(|b| unbundle(b).unwrap().len()).sum();
        assert_eq!(count, MAX_BUNDLE_ADS + 1);
    }

    #[test]
    fn a_bundle_that_is_empty_too_long_or_not_a_list_of_byte_strings_is_refused() {
        let empty = cbor::encode(&Vec::<serde_bytes::ByteBuf>::new());
        assert_eq!(
            unbundle(&empty).unwrap_err().to_string(),
            "invalid bundle of ads: it holds no ad"
        );
        let too_many = cbor::encode(&vec![
            serde_bytes::ByteBuf::from(vec![0u8]);
            MAX_BUNDLE_ADS + 1
        ]);
        assert_eq!(
            unbundle(&too_many).unwrap_err().to_string(),
            format!(
                "bundle of ads holds {} entries, more than the limit of {MAX_BUNDLE_ADS}",
                MAX_BUNDLE_ADS + 1
            )
        );
        let huge = vec![0u8; MAX_BUNDLE_LEN + 1];
        assert!(unbundle(&huge)
            .unwrap_err()
            .to_string()
            .contains("more than the limit"));
        let numbers = cbor::encode(&vec![1u32, 2, 3]);
        assert!(unbundle(&numbers)
            .unwrap_err()
            .to_string()
            .starts_with("bundle of ads is malformed"));
    }

    proptest::proptest! {
        #[test]
        fn unbundling_any_bytes_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = unbundle(&bytes);
        }

        #[test]
        fn every_ad_bundled_comes_back_once_in_order(sizes in proptest::collection::vec(0usize..40_000, 1..12)) {
            let ads: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, n)| vec![i as u8; *n]).collect();
            let mut back: Vec<Vec<u8>> = Vec::new();
            for b in bundle(&ads) {
                proptest::prop_assert!(b.len() <= MAX_BUNDLE_LEN);
                back.extend(unbundle(&b).unwrap().into_iter().map(|b| b.into_vec()));
            }
            proptest::prop_assert_eq!(back, ads);
        }
    }
}
