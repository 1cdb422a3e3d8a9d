//! The store side of an agent: keeping other agents' checkpoint chunks
//! (the `store` role), and what every side needs to put checkpoints on
//! store peers and get them back.
//!
//! - [`server`]: answers `/starling/store/1` from the agent's chunk store
//!   (`<data dir>/chunks`, sled), within the disk it lends and the quotas
//!   its configuration sets, and drops chunks whose lease ran out.
//! - [`client`]: replicating a checkpoint's chunks to store peers (only
//!   what each lacks, several chunks in flight), fetching them back with
//!   every chunk verified, renewing and releasing them.
//! - [`place`]: the store peers of the view as candidates for
//!   [`starling_policies::replicas`], nearest first.

pub mod client;
pub mod place;
pub mod server;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use starling_policies::replicas::Place;
use starling_protocol::identity::{Role, Roles};
use starling_storage::chunks::{ChunkStore, Limits, Stats};
use tokio::sync::watch;

use crate::config::StoreConfig;

/// Where this agent's chunk store lives in its data directory.
pub const CHUNKS_DIR: &str = "chunks";

const MIB: u64 = 1 << 20;

/// Where this machine stands, as its configuration says.
pub fn place_of_this(config: &StoreConfig, domain: &str) -> Place {
    Place {
        machine: config.host.clone().unwrap_or_else(crate::machine::hostname),
        domain: domain.to_owned(),
        site: config.site.clone(),
        rack: config.rack.clone(),
    }
}

/// The machine ad attributes that say where it stands (ClassAd text).
pub fn place_attributes(place: &Place) -> BTreeMap<String, String> {
    let quoted = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut attributes = BTreeMap::from([("StarlingHost".to_owned(), quoted(&place.machine))]);
    if let Some(site) = &place.site {
        attributes.insert("StarlingSite".to_owned(), quoted(site));
    }
    if let Some(rack) = &place.rack {
        attributes.insert("StarlingRack".to_owned(), quoted(rack));
    }
    attributes
}

/// The chunk store this agent lends, when it is a store peer (the `store`
/// role, disk lent, a data directory), with the channel its figures go
/// out on.
#[allow(clippy::type_complexity)]
pub fn open_lent(
    config: &StoreConfig,
    roles: Roles,
    data_dir: Option<&Path>,
    policy_quotas: &BTreeMap<String, u64>,
) -> Result<Option<(Arc<ChunkStore>, watch::Sender<Option<Stats>>)>, starling_storage::chunks::Error>
{
    let Some(data_dir) = data_dir else {
        return Ok(None);
    };
    if !roles.contains(Role::Store) || config.lend_mib == 0 {
        return Ok(None);
    }
    let limits = limits_of(config, policy_quotas);
    let chunks = ChunkStore::open(&data_dir.join(CHUNKS_DIR), limits)?;
    let stats = chunks.stats().ok();
    let (tx, _) = watch::channel(stats);
    Ok(Some((Arc::new(chunks), tx)))
}

/// What a store peer lends under `config` and its domain's policy
/// (`policy_quotas`: MiB per trusted domain, which `[store]
/// domain_quota_mib` may lower): what it opens with, and what a reload or
/// a new policy puts in force ([`ChunkStore::set_limits`]).
pub fn limits_of(config: &StoreConfig, policy_quotas: &BTreeMap<String, u64>) -> Limits {
    Limits {
        lend_bytes: config.lend_mib.saturating_mul(MIB),
        per_domain: starling_policies::storing::domain_quotas(
            &config.domain_quota_mib,
            policy_quotas,
        )
        .into_iter()
        .map(|(d, mib)| (d, mib.saturating_mul(MIB)))
        .collect(),
        other_domains: config.other_domains_mib.map(|m| m.saturating_mul(MIB)),
        per_user: config.user_quota_mib.map(|m| m.saturating_mul(MIB)),
    }
}

/// The store's figures as machine ad attributes (KiB, as `Disk`).
pub fn attributes(stats: &Stats) -> BTreeMap<&'static str, i64> {
    let kib = |bytes: u64| i64::try_from(bytes / 1024).unwrap_or(i64::MAX);
    BTreeMap::from([
        ("StarlingStoreLent", kib(stats.lend_bytes)),
        ("StarlingStoreUsed", kib(stats.used_bytes)),
        ("StarlingStoreFree", kib(stats.free_bytes)),
        (
            "StarlingStoreChunks",
            i64::try_from(stats.chunks).unwrap_or(i64::MAX),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_store_role_with_disk_lent_makes_a_store_peer() {
        let dir = tempfile::tempdir().unwrap();
        let none = BTreeMap::new();
        let execute: Roles = "execute".parse().unwrap();
        let store: Roles = "execute,store".parse().unwrap();
        let config = StoreConfig::default();
        assert!(open_lent(&config, execute, Some(dir.path()), &none)
            .unwrap()
            .is_none());
        let lend_none = StoreConfig {
            lend_mib: 0,
            ..StoreConfig::default()
        };
        assert!(open_lent(&lend_none, store, Some(dir.path()), &none)
            .unwrap()
            .is_none());
        let (chunks, _) = open_lent(&config, store, Some(dir.path()), &none)
            .unwrap()
            .unwrap();
        assert_eq!(chunks.stats().unwrap().lend_bytes, 4096 * MIB);
    }
}
