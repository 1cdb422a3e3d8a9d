//! Domain certificates: a domain key admits one agent, with roles, for a
//! window of time.
//!
//! A certificate travels as an [`Envelope`] of kind [`Kind::CERTIFICATE`]
//! signed by the domain key, whose window is the certificate's. An agent that
//! presents one proves its own id in the libp2p handshake; [`Certificate::verify`]
//! checks that the certificate admits that very agent and comes from a domain
//! key the receiver trusts under that domain's name. A [`CertificateCache`]
//! spares a receiver the domain's signature check on a certificate it has
//! opened before; the trust and presenter checks are made every time.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{
    AgentId, Envelope, Error, Freshness, Keypair, Kind, PublicKey, Timestamp, TrustAnchors,
};

/// Certificates are small; anything bigger is not one.
pub const MAX_CERTIFICATE_LEN: usize = 4096;

/// What an admitted agent may do in its domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Runs jobs.
    Execute,
    /// Accepts jobs from users and negotiates for them.
    Submit,
    /// Keeps checkpoint replicas for others.
    Store,
    /// Owns a shared network segment and admits transfers over it.
    Netmgr,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Execute, Role::Submit, Role::Store, Role::Netmgr];

    pub fn name(self) -> &'static str {
        match self {
            Role::Execute => "execute",
            Role::Submit => "submit",
            Role::Store => "store",
            Role::Netmgr => "netmgr",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`Role`]s. Written as `execute,submit`; on the wire a list of
/// names, so a role added later is skipped by older agents rather than
/// breaking the certificate.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Roles(u8);

impl Roles {
    pub fn contains(self, role: Role) -> bool {
        self.0 & role.bit() != 0
    }
    pub fn with(self, role: Role) -> Self {
        Self(self.0 | role.bit())
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn iter(self) -> impl Iterator<Item = Role> {
        Role::ALL.into_iter().filter(move |r| self.contains(*r))
    }
}

impl fmt::Display for Roles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Role::name).collect();
        f.write_str(&names.join(","))
    }
}
impl fmt::Debug for Roles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Roles({self})")
    }
}

impl FromStr for Roles {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut roles = Roles::default();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let role = Role::ALL
                .into_iter()
                .find(|r| r.name().eq_ignore_ascii_case(word))
                .ok_or_else(|| {
                    format!("unknown role {word:?} (roles are execute, submit, store, netmgr)")
                })?;
            roles = roles.with(role);
        }
        if roles.is_empty() {
            return Err("no roles given (roles are execute, submit, store, netmgr)".to_owned());
        }
        Ok(roles)
    }
}

impl Serialize for Roles {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(Role::name))
    }
}
impl<'de> Deserialize<'de> for Roles {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Roles;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of role names")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Roles, A::Error> {
                let mut roles = Roles::default();
                // Bounded by the certificate's size limit.
                while let Some(name) = seq.next_element::<String>()? {
                    if let Some(role) = Role::ALL.into_iter().find(|r| r.name() == name) {
                        roles = roles.with(role);
                    }
                }
                Ok(roles)
            }
        }
        deserializer.deserialize_seq(Visitor)
    }
}

/// A domain's statement that an agent belongs to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Certificate {
    /// The domain's name, e.g. `physics.example.org`.
    pub domain: String,
    /// The domain's public key; must be the key that signed.
    pub domain_key: PublicKey,
    /// The agent admitted.
    pub agent: AgentId,
    pub roles: Roles,
    pub valid_from: Timestamp,
    pub valid_until: Timestamp,
}

/// Checks a domain name: 1 to 253 characters of letters, digits, `-`, `_`
/// and `.`, like a DNS name, so it can appear in `user@domain`.
pub fn check_domain_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !name.starts_with('.')
        && !name.ends_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            field: "domain name",
            reason: format!(
                "{name:?} must be 1-253 letters, digits, '-', '_' or '.', like a DNS name"
            ),
        })
    }
}

impl Certificate {
    /// Signs this certificate with the domain key. `seq` orders certificates a
    /// domain issues; the CLI uses the issue time in milliseconds.
    pub fn issue(&self, domain_key: &Keypair, seq: u64) -> Result<Envelope, Error> {
        check_domain_name(&self.domain)?;
        if domain_key.public() != self.domain_key {
            return Err(Error::CertificateKeyMismatch {
                claimed: self.domain_key,
                signer: domain_key.public(),
            });
        }
        if self.roles.is_empty() {
            return Err(Error::Invalid {
                field: "roles",
                reason: "a certificate must grant at least one role".to_owned(),
            });
        }
        Ok(Envelope::seal(
            domain_key,
            seq,
            self.valid_from,
            self.valid_until,
            Kind::CERTIFICATE,
            crate::cbor::encode(self),
        ))
    }

    /// Opens a certificate and checks that it is internally consistent:
    /// signature, window, and that the key it names is the key that signed.
    /// It does not say whether that domain is trusted: see [`Certificate::verify`].
    pub fn open(
        envelope: &Envelope,
        now: Timestamp,
        freshness: &Freshness,
    ) -> Result<Certificate, Error> {
        let opened = envelope.open_kind(Kind::CERTIFICATE, now, freshness)?;
        let cert: Certificate = opened.decode_body(MAX_CERTIFICATE_LEN, "certificate")?;
        if cert.domain_key != opened.header.signer {
            return Err(Error::CertificateKeyMismatch {
                claimed: cert.domain_key,
                signer: opened.header.signer,
            });
        }
        if (cert.valid_from, cert.valid_until)
            != (opened.header.issued_at, opened.header.expires_at)
        {
            return Err(Error::Invalid {
                field: "certificate",
                reason: "its validity window differs from its envelope's".to_owned(),
            });
        }
        check_domain_name(&cert.domain)?;
        Ok(cert)
    }

    /// The full check a receiver makes: [`Certificate::open`], then that the
    /// domain is trusted here under this name and key, and that the agent
    /// presenting it (proved by the transport) is the agent it admits.
    pub fn verify(
        envelope: &Envelope,
        presenter: &AgentId,
        anchors: &TrustAnchors,
        now: Timestamp,
        freshness: &Freshness,
    ) -> Result<Certificate, Error> {
        let cert = Self::open(envelope, now, freshness)?;
        cert.check_admits(presenter, anchors)?;
        Ok(cert)
    }

    /// That the domain is trusted here under this name and key, and that
    /// `presenter` is the agent admitted.
    fn check_admits(&self, presenter: &AgentId, anchors: &TrustAnchors) -> Result<(), Error> {
        anchors.check(&self.domain, &self.domain_key)?;
        if self.agent != *presenter {
            return Err(Error::NotThisAgent {
                admitted: self.agent,
                presenter: *presenter,
            });
        }
        Ok(())
    }

    /// [`Certificate::verify`], skipping the signature check and decoding
    /// for a certificate `cache` has opened before (byte for byte). Trust,
    /// presenter and validity window are checked every time, so a cached
    /// certificate whose domain is no longer trusted, or whose window has
    /// closed, fails as it would uncached.
    pub fn verify_cached(
        envelope: &Envelope,
        presenter: &AgentId,
        anchors: &TrustAnchors,
        now: Timestamp,
        freshness: &Freshness,
        cache: &mut CertificateCache,
    ) -> Result<Certificate, Error> {
        let digest = CertificateCache::digest(envelope);
        let cert = match cache.opened.get(&digest) {
            Some(cert) => {
                envelope.check_before_signature(now, freshness)?;
                cert.clone()
            }
            None => {
                let cert = Self::open(envelope, now, freshness)?;
                if cache.opened.len() >= cache.capacity {
                    cache.opened.clear();
                }
                cache.opened.insert(digest, cert.clone());
                cert
            }
        };
        cert.check_admits(presenter, anchors)?;
        Ok(cert)
    }
}

/// Certificates already opened (signature checked, body decoded), by the
/// digest of their exact bytes. An agent attaches the same certificate to
/// every ad it publishes, so without this a view checks the domain's
/// signature again with every refresh of every ad: half of its signature
/// checks. Bounded: when full it starts again empty.
#[derive(Debug, Clone)]
pub struct CertificateCache {
    opened: std::collections::HashMap<[u8; 32], Certificate>,
    capacity: usize,
}

impl CertificateCache {
    /// Certificates remembered by default: one each for a pool of ten
    /// thousand agents.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    pub fn new() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }

    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            opened: std::collections::HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// How many certificates are remembered.
    pub fn len(&self) -> usize {
        self.opened.len()
    }

    pub fn is_empty(&self) -> bool {
        self.opened.is_empty()
    }

    /// The signed bytes and the signature both: an envelope with the same
    /// digest is the same certificate.
    fn digest(envelope: &Envelope) -> [u8; 32] {
        let mut hasher = blake3::Hasher::new();
        hasher.update(envelope.signed_bytes());
        hasher.update(envelope.signature());
        *hasher.finalize().as_bytes()
    }
}

impl Default for CertificateCache {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
    const DAY: u64 = 86_400_000;

    fn domain(n: u8) -> Keypair {
        Keypair::from_seed(&[n; 32])
    }
    fn agent(n: u8) -> AgentId {
        Keypair::from_seed(&[100 + n; 32]).agent_id()
    }

    fn cert(domain_n: u8, name: &str, agent_n: u8) -> Envelope {
        Certificate {
            domain: name.to_owned(),
            domain_key: domain(domain_n).public(),
            agent: agent(agent_n),
            roles: "execute,submit".parse().unwrap(),
            valid_from: T0,
            valid_until: T0.saturating_add_millis(30 * DAY),
        }
        .issue(&domain(domain_n), 1)
        .unwrap()
    }

    fn anchors() -> TrustAnchors {
        let mut anchors = TrustAnchors::default();
        anchors.insert("physics", domain(1).public());
        anchors.insert("chem", domain(2).public());
        anchors
    }

    #[test]
    fn a_trusted_certificate_for_the_presenter_verifies() {
        let env = Envelope::decode(&cert(1, "physics", 1).to_bytes()).unwrap();
        let got =
            Certificate::verify(&env, &agent(1), &anchors(), T0, &Freshness::default()).unwrap();
        assert_eq!(got.domain, "physics");
        assert!(got.roles.contains(Role::Execute) && got.roles.contains(Role::Submit));
        assert!(!got.roles.contains(Role::Store));
    }

    #[test]
    fn a_certificate_presented_by_another_agent_is_refused() {
        let err = Certificate::verify(
            &cert(1, "physics", 1),
            &agent(2),
            &anchors(),
            T0,
            &Freshness::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::NotThisAgent { .. }), "{err}");
    }

    #[test]
    fn wrong_and_untrusted_domains_are_refused() {
        // chem's key signing a certificate that claims to be physics.
        let err = Certificate::verify(
            &cert(2, "physics", 1),
            &agent(1),
            &anchors(),
            T0,
            &Freshness::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::WrongDomainKey { .. }), "{err}");
        // A domain nobody here trusts.
        let err = Certificate::verify(
            &cert(3, "bio", 1),
            &agent(1),
            &anchors(),
            T0,
            &Freshness::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::UntrustedDomain { .. }), "{err}");
    }

    #[test]
    fn a_cached_certificate_is_checked_for_trust_presenter_and_window_every_time() {
        let env = cert(1, "physics", 1);
        let mut cache = CertificateCache::new();
        let mut verify = |presenter: u8, anchors: &TrustAnchors, now: Timestamp| {
            let fresh = Freshness::default();
            Certificate::verify_cached(&env, &agent(presenter), anchors, now, &fresh, &mut cache)
        };
        let first = verify(1, &anchors(), T0).unwrap();
        let again = verify(1, &anchors(), T0).unwrap();
        assert_eq!(first, again);
        let err = verify(2, &anchors(), T0).unwrap_err();
        assert!(matches!(err, Error::NotThisAgent { .. }), "{err}");
        let mut only_chem = TrustAnchors::default();
        only_chem.insert("chem", domain(2).public());
        let err = verify(1, &only_chem, T0).unwrap_err();
        assert!(matches!(err, Error::UntrustedDomain { .. }), "{err}");
        let late = T0.saturating_add_millis(31 * DAY);
        let err = verify(1, &anchors(), late).unwrap_err();
        assert!(matches!(err, Error::Expired { .. }), "{err}");
        assert_eq!(cache.len(), 1, "the same certificate is remembered once");
    }

    #[test]
    fn a_certificate_with_a_broken_signature_fails_even_when_the_genuine_one_is_cached() {
        let genuine = cert(1, "physics", 1);
        let fresh = Freshness::default();
        let mut cache = CertificateCache::new();
        Certificate::verify_cached(&genuine, &agent(1), &anchors(), T0, &fresh, &mut cache)
            .unwrap();
        // The signature is the envelope's last field.
        let mut bytes = genuine.to_bytes();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let forged = Envelope::decode(&bytes).unwrap();
        let err =
            Certificate::verify_cached(&forged, &agent(1), &anchors(), T0, &fresh, &mut cache)
                .unwrap_err();
        assert!(matches!(err, Error::BadSignature { .. }), "{err}");
    }

    #[test]
    fn a_full_cache_starts_again_rather_than_growing() {
        let fresh = Freshness::default();
        let mut cache = CertificateCache::with_capacity(2);
        for n in 1..=3 {
            Certificate::verify_cached(
                &cert(1, "physics", n),
                &agent(n),
                &anchors(),
                T0,
                &fresh,
                &mut cache,
            )
            .unwrap();
        }
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn expired_and_future_certificates_are_refused() {
        let env = cert(1, "physics", 1);
        let late = T0.saturating_add_millis(31 * DAY);
        assert!(matches!(
            Certificate::verify(&env, &agent(1), &anchors(), late, &Freshness::default()),
            Err(Error::Expired { .. })
        ));
        let early = T0.saturating_sub_millis(DAY);
        assert!(matches!(
            Certificate::verify(&env, &agent(1), &anchors(), early, &Freshness::default()),
            Err(Error::NotYetValid { .. })
        ));
    }

    #[test]
    fn a_certificate_naming_another_domain_key_is_refused() {
        let body = Certificate {
            domain: "physics".to_owned(),
            domain_key: domain(1).public(),
            agent: agent(1),
            roles: "store".parse().unwrap(),
            valid_from: T0,
            valid_until: T0.saturating_add_millis(DAY),
        };
        assert!(matches!(
            body.issue(&domain(2), 1),
            Err(Error::CertificateKeyMismatch { .. })
        ));
        // Forged by hand, bypassing issue().
        let forged = Envelope::seal(
            &domain(2),
            1,
            T0,
            T0.saturating_add_millis(DAY),
            Kind::CERTIFICATE,
            crate::cbor::encode(&body),
        );
        assert!(matches!(
            Certificate::open(&forged, T0, &Freshness::default()),
            Err(Error::CertificateKeyMismatch { .. })
        ));
    }

    #[test]
    fn a_policy_is_not_a_certificate() {
        let env = Envelope::seal(&domain(1), 1, T0, T0, Kind::POLICY, vec![]);
        assert!(matches!(
            Certificate::open(&env, T0, &Freshness::default()),
            Err(Error::WrongKind { .. })
        ));
    }

    #[test]
    fn roles_parse_print_and_skip_unknown_names_on_the_wire() {
        let roles: Roles = "Submit, execute,netmgr".parse().unwrap();
        assert_eq!(roles.to_string(), "execute,submit,netmgr");
        assert_eq!(
            "execute,cook".parse::<Roles>().unwrap_err(),
            "unknown role \"cook\" (roles are execute, submit, store, netmgr)"
        );
        assert!("".parse::<Roles>().is_err());
        let newer = crate::cbor::encode(&["store", "teleport"]);
        let decoded: Roles = crate::cbor::decode(&newer, 100, "roles").unwrap();
        assert_eq!(decoded.to_string(), "store");
    }

    #[test]
    fn domain_names_are_checked() {
        assert!(check_domain_name("physics.example.org").is_ok());
        for bad in ["", "has space", ".lead", "trail.", "a@b", &"x".repeat(254)] {
            assert!(check_domain_name(bad).is_err(), "{bad:?}");
        }
    }
}
