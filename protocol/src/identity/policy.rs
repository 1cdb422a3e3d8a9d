//! Trust between domains: the signed [`DomainPolicy`] and the
//! [`TrustAnchors`] an agent derives from it.
//!
//! A policy is a domain administrator's whole statement of trust: every
//! foreign domain trusted (by key, with the name it goes by), which of its
//! jobs may run here (a ClassAd expression over the foreign job), how much of
//! this domain they may use, the priority factor their users get, and what of
//! this domain is advertised to them. A newer policy (higher sequence number)
//! replaces the older one whole. Fields are optional on the wire and unknown
//! fields are skipped, so a policy written by a newer Starling still reads.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::certificate::check_domain_name;
use super::{Envelope, Error, Freshness, Keypair, Kind, PublicKey, Timestamp};

/// Policies list domains; a few hundred KiB is far beyond any real one.
pub const MAX_POLICY_LEN: usize = 256 * 1024;

/// Longest ClassAd expression a policy may carry.
pub const MAX_POLICY_EXPR_LEN: usize = 16 * 1024;

/// Most foreign domains one policy may trust.
pub const MAX_TRUSTED_DOMAINS: usize = 1024;

/// A domain's signed statement of whom it trusts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainPolicy {
    /// The name of the domain that signs this policy.
    pub domain: String,
    /// The foreign domains trusted.
    #[serde(default)]
    pub trusts: Vec<TrustedDomain>,
    /// Where the domain's agents find each other: multiaddresses of some of
    /// its agents (`/ip4/…/tcp/…/p2p/<agent id>`), which every agent dials
    /// at start besides its own `network.bootstrap`, so that admitting a
    /// machine and installing the policy is enough for it to join. At most
    /// [`MAX_BOOTSTRAP`], each at most [`MAX_BOOTSTRAP_LEN`] bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bootstrap: Vec<String>,
}

/// Most bootstrap addresses one policy lists.
pub const MAX_BOOTSTRAP: usize = 32;

/// Longest bootstrap address.
pub const MAX_BOOTSTRAP_LEN: usize = 256;

/// One foreign domain and the terms it is trusted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustedDomain {
    /// The name the foreign domain goes by (its certificates must use it).
    pub name: String,
    /// The foreign domain's key.
    pub key: PublicKey,
    /// Which of its jobs may run here, as a ClassAd expression evaluated with
    /// the foreign job as MY. Absent: any job its own policy lets it send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// Most slots its jobs may hold here at once. Absent: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// Largest share of this domain's capacity its jobs may hold, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fraction: Option<f64>,
    /// Most GPUs its jobs may hold here at once, all of this domain's
    /// machines together, at most [`MAX_GPUS_CAP`]; 0 lets its jobs run
    /// but hold no GPU. Absent: no cap but each machine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gpus: Option<u32>,
    /// Multiplies its users' priority here, as HTCondor's priority factor:
    /// higher means lower priority. Default 1.
    #[serde(default = "default_priority_factor")]
    pub priority_factor: f64,
    /// What this domain advertises to it.
    #[serde(default)]
    pub export: Export,
    /// MiB of checkpoint chunks each store peer of this domain keeps for
    /// its jobs, at most; 0 keeps none. Absent: as each store peer's
    /// configuration says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_mib: Option<u64>,
}

/// The largest `max_gpus` a policy may give.
pub const MAX_GPUS_CAP: u32 = 1 << 16;

/// The largest `store_mib` a policy may give (1 EiB).
pub const MAX_STORE_MIB: u64 = 1 << 40;

/// The part of this domain advertised to a trusted domain.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Export {
    /// Which of this domain's machines are advertised, as a ClassAd expression
    /// over the machine ad. Absent: every machine that would accept its jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machines: Option<String>,
    /// Most slots advertised at once. Absent: no cap beyond `max_slots`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
}

fn default_priority_factor() -> f64 {
    1.0
}

fn check_expr(field: &'static str, text: &str) -> Result<(), Error> {
    if text.len() > MAX_POLICY_EXPR_LEN {
        return Err(Error::Invalid {
            field,
            reason: format!(
                "{} bytes, more than the limit of {MAX_POLICY_EXPR_LEN}",
                text.len()
            ),
        });
    }
    crate::classad::parse_expr(text)
        .map(drop)
        .map_err(|e| Error::Invalid {
            field,
            reason: format!("{text:?} is not a ClassAd expression: {e}"),
        })
}

impl DomainPolicy {
    /// Checks every field: names, no domain trusted twice, expressions that
    /// parse, quotas and factors in range.
    pub fn validate(&self) -> Result<(), Error> {
        check_domain_name(&self.domain)?;
        if self.trusts.len() > MAX_TRUSTED_DOMAINS {
            return Err(Error::Invalid {
                field: "trusts",
                reason: format!(
                    "{} domains, more than the limit of {MAX_TRUSTED_DOMAINS}",
                    self.trusts.len()
                ),
            });
        }
        if self.bootstrap.len() > MAX_BOOTSTRAP {
            return Err(Error::Invalid {
                field: "bootstrap",
                reason: format!(
                    "{} addresses, more than the limit of {MAX_BOOTSTRAP}",
                    self.bootstrap.len()
                ),
            });
        }
        for addr in &self.bootstrap {
            let printable = addr.chars().all(|c| c.is_ascii_graphic());
            if addr.len() > MAX_BOOTSTRAP_LEN
                || !printable
                || !addr.starts_with('/')
                || !addr.contains("/p2p/")
            {
                return Err(Error::Invalid {
                    field: "bootstrap",
                    reason: format!(
                        "{:?} is not a peer's address: expected /ip4/ADDR/tcp/PORT/p2p/AGENT_ID \
                         (at most {MAX_BOOTSTRAP_LEN} printable bytes)",
                        addr.chars().take(80).collect::<String>()
                    ),
                });
            }
        }
        let mut names = HashMap::new();
        let mut keys = HashMap::new();
        for trust in &self.trusts {
            check_domain_name(&trust.name)?;
            if trust.name == self.domain {
                return Err(Error::Invalid {
                    field: "trust",
                    reason: format!(
                        "domain {:?} cannot list itself as a foreign domain",
                        trust.name
                    ),
                });
            }
            if names.insert(trust.name.as_str(), ()).is_some() {
                return Err(Error::Invalid {
                    field: "trust",
                    reason: format!("domain {:?} is listed twice", trust.name),
                });
            }
            if let Some(other) = keys.insert(trust.key, trust.name.as_str()) {
                return Err(Error::Invalid {
                    field: "trust",
                    reason: format!(
                        "key {} is listed for both {other:?} and {:?}",
                        trust.key, trust.name
                    ),
                });
            }
            if let Some(accept) = &trust.accept {
                check_expr("accept expression", accept)?;
            }
            if let Some(machines) = &trust.export.machines {
                check_expr("export expression", machines)?;
            }
            for (field, cap) in [
                ("max slots", trust.max_slots),
                ("export slots", trust.export.max_slots),
            ] {
                if cap == Some(0) {
                    return Err(Error::Invalid {
                        field,
                        reason: format!(
                            "0 for {:?}: a cap must be at least 1 (to run none of its jobs, \
                             accept none: --accept false)",
                            trust.name
                        ),
                    });
                }
            }
            if let Some(f) = trust.max_fraction {
                if !(f > 0.0 && f <= 1.0) {
                    return Err(Error::Invalid {
                        field: "max fraction",
                        reason: format!(
                            "{f} for {:?} must be more than 0 and at most 1",
                            trust.name
                        ),
                    });
                }
            }
            if let Some(n) = trust.max_gpus.filter(|n| *n > MAX_GPUS_CAP) {
                return Err(Error::Invalid {
                    field: "max gpus",
                    reason: format!(
                        "{n} for {:?}, more than the limit of {MAX_GPUS_CAP}",
                        trust.name
                    ),
                });
            }
            if trust.store_mib.is_some_and(|m| m > MAX_STORE_MIB) {
                return Err(Error::Invalid {
                    field: "store",
                    reason: format!(
                        "{} MiB for {:?}, more than the limit of {MAX_STORE_MIB}",
                        trust.store_mib.unwrap_or(0),
                        trust.name
                    ),
                });
            }
            if !(trust.priority_factor.is_finite() && trust.priority_factor > 0.0) {
                return Err(Error::Invalid {
                    field: "priority factor",
                    reason: format!(
                        "{} for {:?} must be a positive number",
                        trust.priority_factor, trust.name
                    ),
                });
            }
        }
        Ok(())
    }

    /// Validates and signs the policy with the domain key.
    pub fn sign(
        &self,
        domain_key: &Keypair,
        seq: u64,
        issued_at: Timestamp,
        expires_at: Timestamp,
    ) -> Result<Envelope, Error> {
        self.validate()?;
        Ok(Envelope::seal(
            domain_key,
            seq,
            issued_at,
            expires_at,
            Kind::POLICY,
            crate::cbor::encode(self),
        ))
    }

    /// Opens and validates a policy envelope. It says nothing about whether
    /// the signer is the domain it names: check the signer against
    /// [`TrustAnchors`] (or the agent's own domain key) too.
    pub fn open(
        envelope: &Envelope,
        now: Timestamp,
        freshness: &Freshness,
    ) -> Result<DomainPolicy, Error> {
        let opened = envelope.open_kind(Kind::POLICY, now, freshness)?;
        let policy: DomainPolicy = opened.decode_body(MAX_POLICY_LEN, "domain policy")?;
        policy.validate()?;
        Ok(policy)
    }

    /// The trust anchors this policy gives an agent of `own_key`'s domain:
    /// its own domain plus every domain it trusts.
    pub fn anchors(&self, own_key: PublicKey) -> TrustAnchors {
        let mut anchors = TrustAnchors::default();
        anchors.insert(&self.domain, own_key);
        for trust in &self.trusts {
            anchors.insert(&trust.name, trust.key);
        }
        anchors
    }

    /// The terms for a foreign domain's key, if it is trusted.
    pub fn trust_for(&self, key: &PublicKey) -> Option<&TrustedDomain> {
        self.trusts.iter().find(|t| t.key == *key)
    }
}

/// The domain keys an agent trusts, by the name each goes by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustAnchors {
    by_name: HashMap<String, PublicKey>,
}

impl TrustAnchors {
    /// Trusts `key` under `name`, replacing any earlier key for that name.
    pub fn insert(&mut self, name: &str, key: PublicKey) {
        self.by_name.insert(name.to_owned(), key);
    }

    /// Whether `key` is trusted under `name`. A trusted key signing under
    /// another domain's name is refused: one domain cannot speak for another.
    pub fn check(&self, name: &str, key: &PublicKey) -> Result<(), Error> {
        match self.by_name.get(name) {
            Some(expected) if expected == key => Ok(()),
            Some(expected) => Err(Error::WrongDomainKey {
                name: name.to_owned(),
                expected: *expected,
                found: *key,
            }),
            None => Err(Error::UntrustedDomain {
                name: name.to_owned(),
                key: *key,
            }),
        }
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
    const DAY: u64 = 86_400_000;

    fn key(n: u8) -> Keypair {
        Keypair::from_seed(&[n; 32])
    }

    fn policy() -> DomainPolicy {
        DomainPolicy {
            domain: "physics".to_owned(),
            trusts: vec![TrustedDomain {
                name: "chem".to_owned(),
                key: key(2).public(),
                accept: Some("RequestCpus <= 4 && Owner =!= \"mallory\"".to_owned()),
                max_slots: Some(20),
                max_fraction: Some(0.25),
                max_gpus: Some(2),
                priority_factor: 10.0,
                export: Export::default(),
                store_mib: None,
            }],
            bootstrap: Vec::new(),
        }
    }

    #[test]
    fn signed_policy_opens_and_gives_anchors() {
        let env = policy()
            .sign(&key(1), 1, T0, T0.saturating_add_millis(DAY))
            .unwrap();
        let back = DomainPolicy::open(
            &Envelope::decode(&env.to_bytes()).unwrap(),
            T0,
            &Freshness::default(),
        )
        .unwrap();
        assert_eq!(back, policy());
        let anchors = back.anchors(key(1).public());
        assert!(anchors.check("physics", &key(1).public()).is_ok());
        assert!(anchors.check("chem", &key(2).public()).is_ok());
        assert!(matches!(
            anchors.check("chem", &key(1).public()),
            Err(Error::WrongDomainKey { .. })
        ));
        assert!(matches!(
            anchors.check("bio", &key(3).public()),
            Err(Error::UntrustedDomain { .. })
        ));
        assert_eq!(
            back.trust_for(&key(2).public()).unwrap().max_slots,
            Some(20)
        );
    }

    #[test]
    fn invalid_policies_are_refused_with_the_field_named() {
        let mut bad = policy();
        for export in [false, true] {
            let mut zero = policy();
            if export {
                zero.trusts[0].export.max_slots = Some(0);
            } else {
                zero.trusts[0].max_slots = Some(0);
            }
            let err = zero.validate().unwrap_err().to_string();
            assert!(err.contains("a cap must be at least 1"), "{err}");
        }
        bad.trusts[0].accept = Some("RequestCpus <=".to_owned());
        let err = bad.sign(&key(1), 1, T0, T0).unwrap_err();
        assert!(
            err.to_string().starts_with("invalid accept expression"),
            "{err}"
        );

        let mut bad = policy();
        bad.trusts[0].max_gpus = Some(MAX_GPUS_CAP + 1);
        let err = bad.validate().unwrap_err().to_string();
        assert!(err.starts_with("invalid max gpus"), "{err}");
        // No GPU at all is a cap like any other.
        bad.trusts[0].max_gpus = Some(0);
        assert!(bad.validate().is_ok());

        let mut bad = policy();
        bad.trusts[0].max_fraction = Some(1.5);
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("at most 1"));

        let mut bad = policy();
        bad.trusts[0].priority_factor = f64::NAN;
        assert!(bad.validate().is_err());

        let mut bad = policy();
        bad.trusts.push(bad.trusts[0].clone());
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("listed twice"));

        let mut bad = policy();
        bad.trusts[0].name = "physics".to_owned();
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("cannot list itself"));
    }

    /// A policy from a newer Starling, with fields this one does not know,
    /// still reads; missing optional fields take their defaults.
    #[test]
    fn newer_fields_are_skipped_and_missing_ones_defaulted() {
        #[derive(Serialize)]
        struct NewerTrust {
            name: String,
            key: PublicKey,
            bandwidth_share: f64,
        }
        #[derive(Serialize)]
        struct NewerPolicy {
            domain: String,
            trusts: Vec<NewerTrust>,
            shared_segments: Vec<String>,
        }
        let newer = NewerPolicy {
            domain: "physics".to_owned(),
            trusts: vec![NewerTrust {
                name: "chem".to_owned(),
                key: key(2).public(),
                bandwidth_share: 0.5,
            }],
            shared_segments: vec!["uplink".to_owned()],
        };
        let env = Envelope::seal(
            &key(1),
            1,
            T0,
            T0.saturating_add_millis(DAY),
            Kind::POLICY,
            crate::cbor::encode(&newer),
        );
        let policy = DomainPolicy::open(&env, T0, &Freshness::default()).unwrap();
        assert_eq!(policy.trusts[0].name, "chem");
        assert_eq!(policy.trusts[0].priority_factor, 1.0);
        assert_eq!(policy.trusts[0].accept, None);
    }

    #[test]
    fn bootstrap_addresses_are_peers_addresses_and_bounded() {
        let mut p = policy();
        p.bootstrap = vec![
            "/ip4/10.0.0.1/tcp/9618/p2p/12D3KooWRYh97xd2nuGcr3hcs6244VJ2mpMvNWQ3NViszmZZL1t6"
                .to_owned(),
        ];
        p.validate().unwrap();
        for bad in [
            "10.0.0.1:9618",
            "/ip4/10.0.0.1/tcp/9618",
            "/ip4/10.0.0.1/tcp/1/p2p/x\ny",
        ] {
            p.bootstrap = vec![bad.to_owned()];
            let err = p.validate().unwrap_err().to_string();
            assert!(err.contains("not a peer's address"), "{bad}: {err}");
        }
        p.bootstrap = vec![format!("/p2p/{}", "x".repeat(MAX_BOOTSTRAP_LEN))];
        assert!(p.validate().is_err());
        p.bootstrap = vec!["/dns/a/tcp/1/p2p/x".to_owned(); MAX_BOOTSTRAP + 1];
        assert!(p
            .validate()
            .unwrap_err()
            .to_string()
            .contains("more than the limit"));
    }
}
