//! What an agent trusts at start: its domain, its certificates, and the
//! domains its domain's policy trusts.
//!
//! The agent's domain is the one of its first valid installed certificate
//! (in `certs/`, by file name). Its trust anchors are that domain's key and
//! the keys trusted by the domain's policy in `policies/<domain>.policy`,
//! which must be signed by the same domain key. An agent with no valid
//! certificate is the only member of a personal domain,
//! `personal-<its key in hex, shortened>`, whose "domain key" is the agent's
//! own key: it certifies itself, so it can run alone with no set-up, and
//! no other agent trusts it unless an administrator says so.
//!
//! An installed certificate that cannot be used (damaged, not signed by
//! the domain key it names, for another agent, expired or not yet valid)
//! stops the agent from starting, naming the file and the reason, as a
//! damaged policy does: carrying on as a personal domain would quietly
//! take the machine out of the domain it was admitted to.

use std::path::PathBuf;

use starling_protocol::identity::{
    armor, Certificate, DomainPolicy, Envelope, Freshness, Keypair, Role, Roles, Timestamp,
    TrustAnchors,
};
use starling_storage::DataDir;

/// How long the personal domain's self-issued certificate is valid.
const PERSONAL_CERTIFICATE_DAYS: u64 = 365;

/// Why the agent's trust could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    DataDir(#[from] starling_storage::datadir::Error),
    #[error("the trust policy {path}: {reason}")]
    Policy { path: PathBuf, reason: String },
    #[error(
        "the certificate {path} cannot be used: {reason}; the agent does not start with it: \
         install a valid one (starling domain install CERTFILE) or move this one away to start \
         without it"
    )]
    Certificate { path: PathBuf, reason: String },
    #[error("issuing the personal domain's certificate: {0}")]
    Personal(starling_protocol::identity::Error),
}

/// An agent's domain and what it trusts.
#[derive(Debug, Clone)]
pub struct Trust {
    /// The domain the agent advertises in.
    pub domain: String,
    /// Its roles there.
    pub roles: Roles,
    /// Its valid certificates, attached to every ad.
    pub certificates: Vec<Envelope>,
    /// Domain keys trusted: its own domain's and those its policy trusts.
    pub anchors: TrustAnchors,
    /// Its own domain first, then the trusted ones: the ad topics it
    /// subscribes to.
    pub domains: Vec<String>,
    /// The priority factor the domain's policy gives each trusted domain's
    /// users (HTCondor's factor for foreign users); 1 when it says none.
    pub foreign_factors: std::collections::BTreeMap<String, f64>,
    /// The MiB of checkpoints the domain's policy lets each store peer keep
    /// for a trusted domain's jobs, where it says.
    pub store_quotas: std::collections::BTreeMap<String, u64>,
    /// Which of a trusted domain's jobs the domain's policy accepts here,
    /// where it says ([`starling_policies::terms`]).
    pub accept_terms: std::collections::BTreeMap<String, starling_policies::terms::Accept>,
    /// Where the domain's agents find each other, as its policy says
    /// (dialed at start besides `network.bootstrap`).
    pub bootstrap: Vec<String>,
    /// What each trusted domain's jobs may hold in this whole domain at
    /// once, where the policy caps it ([`starling_policies::shares`]).
    pub caps: std::collections::BTreeMap<String, starling_policies::shares::Caps>,
    /// Which of this domain's machines its policy advertises to a trusted
    /// domain, where it says; a trusted domain not here gets every machine
    /// ([`starling_policies::terms::exported`]).
    pub export_terms: std::collections::BTreeMap<String, starling_policies::terms::Export>,
    /// The most free CPUs (slots) this domain advertises to a trusted
    /// domain at once, where its policy caps it (`export_slots`), held
    /// domain-wide by the share keeper.
    pub export_caps: std::collections::BTreeMap<String, u32>,
}

impl Trust {
    /// The domains this one trusts (its own excluded).
    pub fn trusted(&self) -> &[String] {
        self.domains.get(1..).unwrap_or_default()
    }
}

/// An agent's trust as it holds it now: replaced whole when its domain's
/// policy changes on disk (see `agent::watch_policy`), so that each
/// decision (a claim's domain, its terms, a foreign user's factor) reads
/// the policy in force when it is made. Claims granted under the old one
/// run on.
#[derive(Debug, Clone)]
pub struct LiveTrust(std::sync::Arc<std::sync::RwLock<std::sync::Arc<Trust>>>);

impl LiveTrust {
    pub fn new(trust: Trust) -> LiveTrust {
        LiveTrust(std::sync::Arc::new(std::sync::RwLock::new(
            std::sync::Arc::new(trust),
        )))
    }

    /// The trust in force now.
    pub fn current(&self) -> std::sync::Arc<Trust> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Puts `trust` in force.
    pub fn replace(&self, trust: Trust) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = std::sync::Arc::new(trust);
    }
}

/// Loads the agent's trust from its data directory, at `now`.
pub fn load(data: &DataDir, key: &Keypair, now: Timestamp) -> Result<Trust, Error> {
    let freshness = Freshness::default();
    let ours = key.agent_id();
    let mut valid: Vec<(Envelope, Certificate)> = Vec::new();
    for installed in data.certificates()? {
        let opened = installed
            .envelope
            .map_err(|e| e.to_string())
            .and_then(|env| {
                let cert = Certificate::open(&env, now, &freshness).map_err(|e| e.to_string())?;
                if cert.agent != ours {
                    return Err(format!("it admits {}, not this agent", cert.agent));
                }
                Ok((env, cert))
            });
        match opened {
            Ok(pair) => valid.push(pair),
            Err(reason) => {
                return Err(Error::Certificate {
                    path: installed.path,
                    reason,
                })
            }
        }
    }
    let Some((_, primary)) = valid.first().cloned() else {
        return personal(key, now);
    };
    let mut anchors = TrustAnchors::default();
    for (_, cert) in &valid {
        anchors.insert(&cert.domain, cert.domain_key);
    }
    let mut domains = vec![primary.domain.clone()];
    let mut foreign_factors = std::collections::BTreeMap::new();
    let mut store_quotas = std::collections::BTreeMap::new();
    let mut accept_terms = std::collections::BTreeMap::new();
    let mut caps = std::collections::BTreeMap::new();
    let mut bootstrap = Vec::new();
    let mut export_terms = std::collections::BTreeMap::new();
    let mut export_caps = std::collections::BTreeMap::new();
    let path = data
        .policies_path()
        .join(format!("{}.policy", primary.domain));
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let policy =
                read_policy(&text, &primary, now, &freshness).map_err(|reason| Error::Policy {
                    path: path.clone(),
                    reason,
                })?;
            bootstrap.clone_from(&policy.bootstrap);
            for trusted in &policy.trusts {
                anchors.insert(&trusted.name, trusted.key);
                foreign_factors.insert(trusted.name.clone(), trusted.priority_factor);
                if let Some(mib) = trusted.store_mib {
                    store_quotas.insert(trusted.name.clone(), mib);
                }
                if let Some(text) = &trusted.accept {
                    let accept =
                        starling_policies::terms::Accept::parse(text).map_err(|reason| {
                            Error::Policy {
                                path: path.clone(),
                                reason: format!("the terms for {}: {reason}", trusted.name),
                            }
                        })?;
                    accept_terms.insert(trusted.name.clone(), accept);
                }
                let cap = starling_policies::shares::Caps {
                    max_slots: trusted.max_slots,
                    max_fraction: trusted.max_fraction,
                    max_gpus: trusted.max_gpus,
                };
                if cap.any() {
                    caps.insert(trusted.name.clone(), cap);
                }
                if let Some(n) = trusted.export.max_slots {
                    export_caps.insert(trusted.name.clone(), n);
                }
                if let Some(text) = &trusted.export.machines {
                    let export =
                        starling_policies::terms::Export::parse(text).map_err(|reason| {
                            Error::Policy {
                                path: path.clone(),
                                reason: format!("the terms for {}: {reason}", trusted.name),
                            }
                        })?;
                    export_terms.insert(trusted.name.clone(), export);
                }
                if !domains.contains(&trusted.name) {
                    domains.push(trusted.name.clone());
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::Policy {
                path,
                reason: e.to_string(),
            })
        }
    }
    Ok(Trust {
        domain: primary.domain.clone(),
        roles: primary.roles,
        certificates: valid.into_iter().map(|(env, _)| env).collect(),
        anchors,
        domains,
        foreign_factors,
        store_quotas,
        accept_terms,
        caps,
        export_terms,
        export_caps,
        bootstrap,
    })
}

fn read_policy(
    text: &str,
    primary: &Certificate,
    now: Timestamp,
    freshness: &Freshness,
) -> Result<DomainPolicy, String> {
    let (_, bytes) = armor::dearmor(text).map_err(|e| e.to_string())?;
    let envelope = Envelope::decode(&bytes).map_err(|e| e.to_string())?;
    let policy = DomainPolicy::open(&envelope, now, freshness).map_err(|e| e.to_string())?;
    if envelope.header().signer != primary.domain_key || policy.domain != primary.domain {
        return Err(format!(
            "it is not signed by the key of domain {:?} that admitted this agent",
            primary.domain
        ));
    }
    Ok(policy)
}

/// The personal one-agent domain of an agent with no certificate.
fn personal(key: &Keypair, now: Timestamp) -> Result<Trust, Error> {
    let public = key.public();
    let name = format!("personal-{}", hex::encode(&public.as_bytes()[..6]));
    let roles = [Role::Execute, Role::Submit, Role::Store]
        .into_iter()
        .fold(Roles::default(), Roles::with);
    let certificate = Certificate {
        domain: name.clone(),
        domain_key: public,
        agent: key.agent_id(),
        roles,
        valid_from: now,
        valid_until: now.saturating_add_millis(PERSONAL_CERTIFICATE_DAYS * 86_400_000),
    }
    .issue(key, now.as_unix_millis())
    .map_err(Error::Personal)?;
    let mut anchors = TrustAnchors::default();
    anchors.insert(&name, public);
    Ok(Trust {
        domain: name.clone(),
        roles,
        certificates: vec![certificate],
        anchors,
        domains: vec![name],
        foreign_factors: std::collections::BTreeMap::new(),
        accept_terms: std::collections::BTreeMap::new(),
        export_terms: std::collections::BTreeMap::new(),
        export_caps: std::collections::BTreeMap::new(),
        store_quotas: std::collections::BTreeMap::new(),
        caps: std::collections::BTreeMap::new(),
        bootstrap: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::identity::armor;

    fn certificate(domain: &Keypair, agent: starling_protocol::identity::AgentId) -> Envelope {
        let now = Timestamp::now();
        Certificate {
            domain: "physics".to_owned(),
            domain_key: domain.public(),
            agent,
            roles: "execute".parse().unwrap(),
            valid_from: now,
            valid_until: now.saturating_add_millis(86_400_000),
        }
        .issue(domain, 1)
        .unwrap()
    }

    fn write_cert(data: &DataDir, name: &str, text: &str) -> PathBuf {
        std::fs::create_dir_all(data.certs_path()).unwrap();
        let path = data.certs_path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn no_certificate_is_a_personal_domain_and_a_valid_one_is_the_domain() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let key = data.agent_key().unwrap();
        let trust = load(&data, &key, Timestamp::now()).unwrap();
        assert!(trust.domain.starts_with("personal-"), "{}", trust.domain);
        let physics = Keypair::from_seed(&[1; 32]);
        let env = certificate(&physics, key.agent_id());
        write_cert(&data, "physics.cert", &armor::armor_envelope(&env, &[]));
        let trust = load(&data, &key, Timestamp::now()).unwrap();
        assert_eq!(trust.domain, "physics");
    }

    #[test]
    fn a_certificate_that_does_not_verify_stops_the_start_naming_the_file() {
        let physics = Keypair::from_seed(&[1; 32]);
        let stranger = Keypair::from_seed(&[2; 32]).agent_id();
        for (name, needle) in [
            ("junk.cert", "BEGIN"),
            ("other.cert", "not this agent"),
            ("flipped.cert", ""),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let data = DataDir::open(dir.path()).unwrap();
            let key = data.agent_key().unwrap();
            // A valid certificate beside it does not make it acceptable.
            let good = certificate(&physics, key.agent_id());
            write_cert(&data, "a-good.cert", &armor::armor_envelope(&good, &[]));
            let text = match name {
                "junk.cert" => "junk".to_owned(),
                "other.cert" => armor::armor_envelope(&certificate(&physics, stranger), &[]),
                _ => {
                    let mut bytes = good.to_bytes();
                    let last = bytes.len() - 1;
                    bytes[last] ^= 1;
                    armor::armor("CERTIFICATE", &bytes, &[])
                }
            };
            let path = write_cert(&data, name, &text);
            let err = load(&data, &key, Timestamp::now()).unwrap_err();
            assert!(matches!(err, Error::Certificate { .. }), "{name}: {err}");
            let msg = err.to_string();
            assert!(msg.contains(&path.display().to_string()), "{name}: {msg}");
            assert!(msg.contains(needle), "{name}: {msg}");
            assert!(msg.contains("does not start"), "{msg}");
        }
    }
}
