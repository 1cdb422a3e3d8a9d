//! What a store peer keeps for whom: who may renew and release a job's
//! checkpoint chunks, for which domains' jobs it keeps chunks at all, and
//! how much each domain may keep (its own configuration and its domain's
//! signed policy, the smaller of the two).

use std::collections::{BTreeMap, BTreeSet};

/// Why a store peer refuses a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Only the submit agent a job belongs to renews or releases it.
    #[error("only the submit agent of job {job} may renew or release its checkpoints")]
    NotOwner { job: String },
    /// The store peer's configuration refuses this domain.
    #[error("this store keeps no checkpoints of domain {domain:?}")]
    DomainRefused { domain: String },
    /// The job's domain is neither this one, the asker's, nor trusted.
    #[error("domain {domain:?} is not trusted here")]
    DomainUntrusted { domain: String },
}

/// Whether `asker` may renew or release the chunks of `job`, whose key
/// names `submitter` (`None`: a key that names none).
pub fn may_manage(job: &str, submitter: Option<&str>, asker: &str) -> Result<(), Refusal> {
    if submitter == Some(asker) {
        Ok(())
    } else {
        Err(Refusal::NotOwner {
            job: job.to_owned(),
        })
    }
}

/// The domains around a store peer: its own, those it trusts (their
/// agents are in its view), and those its configuration refuses.
#[derive(Debug, Clone)]
pub struct Domains<'a> {
    pub own: &'a str,
    pub trusted: &'a BTreeSet<String>,
    pub refused: &'a [String],
}

/// Whether a store peer keeps chunks of a job of `owner` domain sent by an
/// agent of `asker` domain (itself trusted: the caller checks that).
pub fn may_store_for(domains: &Domains<'_>, owner: &str, asker: &str) -> Result<(), Refusal> {
    if domains.refused.iter().any(|d| d == owner) {
        return Err(Refusal::DomainRefused {
            domain: owner.to_owned(),
        });
    }
    if owner != domains.own && owner != asker && !domains.trusted.contains(owner) {
        return Err(Refusal::DomainUntrusted {
            domain: owner.to_owned(),
        });
    }
    Ok(())
}

/// What each domain's jobs may keep on a store peer: the smaller of what
/// its configuration (`configured`) and its domain's signed policy
/// (`policy`) say, for every domain either names.
pub fn domain_quotas(
    configured: &BTreeMap<String, u64>,
    policy: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    let mut quotas = configured.clone();
    for (domain, limit) in policy {
        quotas
            .entry(domain.clone())
            .and_modify(|q| *q = (*q).min(*limit))
            .or_insert(*limit);
    }
    quotas
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_submitter_manages_its_jobs_chunks() {
        assert!(may_manage("a/1.0", Some("a"), "a").is_ok());
        assert_eq!(
            may_manage("a/1.0", Some("a"), "b").unwrap_err().to_string(),
            "only the submit agent of job a/1.0 may renew or release its checkpoints"
        );
        assert!(may_manage("junk", None, "a").is_err());
    }

    #[test]
    fn a_store_keeps_its_own_the_askers_and_trusted_domains_but_not_refused_ones() {
        let trusted = BTreeSet::from(["friend".to_owned()]);
        let refused = ["noisy".to_owned()];
        let domains = Domains {
            own: "home",
            trusted: &trusted,
            refused: &refused,
        };
        assert!(may_store_for(&domains, "home", "friend").is_ok());
        assert!(may_store_for(&domains, "friend", "home").is_ok());
        assert!(may_store_for(&domains, "visitor", "visitor").is_ok());
        assert_eq!(
            may_store_for(&domains, "stranger", "friend"),
            Err(Refusal::DomainUntrusted {
                domain: "stranger".to_owned()
            })
        );
        // Refused even when it asks for itself.
        assert_eq!(
            may_store_for(&domains, "noisy", "noisy"),
            Err(Refusal::DomainRefused {
                domain: "noisy".to_owned()
            })
        );
    }

    #[test]
    fn the_smaller_of_the_configuration_and_the_domain_policy_holds() {
        let configured = BTreeMap::from([("a".to_owned(), 100), ("b".to_owned(), 10)]);
        let policy = BTreeMap::from([
            ("a".to_owned(), 50),
            ("b".to_owned(), 20),
            ("c".to_owned(), 0),
        ]);
        let quotas = domain_quotas(&configured, &policy);
        assert_eq!(quotas["a"], 50);
        assert_eq!(quotas["b"], 10);
        assert_eq!(
            quotas["c"], 0,
            "a domain the policy gives no room gets none"
        );
    }
}
