//! The submit side of checkpoints: the submit agent owns its jobs'
//! checkpoints wherever they are kept.
//!
//! - **Recording** ([`accept`], [`Record`]): a manifest from the execute
//!   agent running the job is checked (signed by that agent, for this job,
//!   a later sequence than the one recorded) and recorded durably in the
//!   queue's store before the execute agent is told; only then does the
//!   older checkpoint's chunks go ([`release_older`]).
//! - **Restoring** ([`restore_for`]): the record goes with the job when it
//!   is handed over, so the execute agent restores it before it starts.
//! - **Keeping** ([`spawn_keeper`]): every [`KEEP_EVERY`] the keeper renews
//!   the chunks' leases on their store peers (so a submit agent that
//!   vanished for good leaks no disk: the leases run out), re-replicates a
//!   checkpoint whose replica holder left the pool (its ad expired), or
//!   that was kept on fewer store peers than it wants (too few were known
//!   or willing when it was taken), from a survivor, to keep k, and
//!   releases every chunk of a job that left the queue. A store peer that
//!   refused a job's checkpoint for want of room is not asked again for
//!   [`REFUSED_FOR`], one that does not know this agent's domain yet for
//!   [`UNKNOWN_FOR`]; a failure on the way (a timeout, a source that did
//!   not answer) is tried again at the next round.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt as _;
use libp2p::PeerId;
use serde::{Deserialize, Serialize};
use starling_policies::replicas::{self, Place};
use starling_protocol::checkpoint::{JobKey, Manifest, Owner, Replica};
use starling_protocol::identity::{AgentId, Envelope, Timestamp};
use starling_protocol::transfer::Restore;
use starling_storage::JobId;
use tokio::sync::mpsc;

use crate::network::Command;
use crate::store::{client, place};
use starling_queue::Queue;

/// How often the keeper looks at the checkpoints.
pub const KEEP_EVERY: Duration = Duration::from_secs(5);

/// How often the keeper says again that a checkpoint's missing replicas
/// have nowhere to go.
const UNPLACED_SAID_EVERY: Duration = Duration::from_secs(60);

/// How long the keeper leaves a store peer that refused a job's
/// checkpoint before asking it again: a refusal (a quota, a full disk)
/// seldom changes within seconds, and each try sends the chunks.
pub const REFUSED_FOR: Duration = Duration::from_secs(60);

/// How long the keeper leaves a store peer that refused a job's
/// checkpoint for not trusting this agent's domain: a peer that joined a
/// moment ago learns of it from the next ads.
pub const UNKNOWN_FOR: Duration = Duration::from_secs(10);

/// How long a store peer that answered `code` (`None`: no answer) is left
/// alone for a job's checkpoint.
fn backoff(code: Option<starling_protocol::checkpoint::ErrorCode>) -> Option<Duration> {
    use starling_protocol::checkpoint::ErrorCode;
    match code? {
        ErrorCode::NoSpace | ErrorCode::Quota | ErrorCode::TooLarge => Some(REFUSED_FOR),
        ErrorCode::Refused => Some(UNKNOWN_FOR),
        _ => None,
    }
}

/// Largest record, in bytes.
pub const MAX_RECORD_LEN: usize = 4 << 20;

/// A job's latest checkpoint as the submit agent keeps it: the manifest as
/// the execute agent signed it, and the store peers that hold it now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    #[serde(with = "serde_bytes")]
    pub manifest: Vec<u8>,
    pub replicas: Vec<Replica>,
}

impl Record {
    pub fn encode(&self) -> Vec<u8> {
        starling_protocol::cbor::encode(self)
    }

    pub fn decode(bytes: &[u8]) -> Result<Record, String> {
        starling_protocol::cbor::decode(bytes, MAX_RECORD_LEN, "checkpoint record")
            .map_err(|e| e.to_string())
    }

    /// The manifest, checked again (the record is ours, but on disk).
    pub fn manifest(&self) -> Result<(Envelope, Manifest), String> {
        let envelope = Envelope::decode(&self.manifest).map_err(|e| e.to_string())?;
        let manifest = Manifest::open(&envelope, Timestamp::now()).map_err(|e| e.to_string())?;
        Ok((envelope, manifest))
    }
}

/// The key this agent's job `id` has on store peers.
pub fn job_key(me: &AgentId, id: JobId) -> JobKey {
    JobKey::new(me, id.cluster, id.proc)
}

/// Checks a manifest an execute agent sent for job `id`: signed by `from`
/// (the agent running the job), for this job, later than `recorded`.
pub fn accept(
    envelope: &Envelope,
    from: &PeerId,
    me: &AgentId,
    id: JobId,
    recorded: Option<u64>,
) -> Result<Manifest, String> {
    let manifest = Manifest::open(envelope, Timestamp::now())
        .map_err(|e| format!("the manifest is not valid: {e}"))?;
    let signer = AgentId::from_public_key(envelope.header().signer);
    if PeerId::from_bytes(&signer.to_peer_id_bytes()).ok().as_ref() != Some(from) {
        return Err("the manifest is not signed by the agent running the job".to_owned());
    }
    if manifest.job != job_key(me, id) {
        return Err(format!(
            "the manifest is for job {}, not {}",
            manifest.job,
            job_key(me, id)
        ));
    }
    if recorded.is_some_and(|r| manifest.sequence <= r) {
        return Err(format!(
            "checkpoint {} is not later than the recorded {}",
            manifest.sequence,
            recorded.unwrap_or(0)
        ));
    }
    Ok(manifest)
}

/// What the job restarts from, when it has a checkpoint some store peer
/// keeps.
pub async fn restore_for(queue: &Queue, id: JobId) -> Option<Box<Restore>> {
    let record = Record::decode(&queue.checkpoint(id).await?).ok()?;
    if record.replicas.is_empty() {
        return None;
    }
    let envelope = Envelope::decode(&record.manifest).ok()?;
    Some(Box::new(Restore {
        manifest: Box::new(envelope),
        replicas: record.replicas,
    }))
}

/// The recorded checkpoint's sequence number, if any.
pub async fn recorded_sequence(queue: &Queue, id: JobId) -> Option<u64> {
    let record = Record::decode(&queue.checkpoint(id).await?).ok()?;
    record.manifest().ok().map(|(_, m)| m.sequence)
}

/// Tells the store peers of the new checkpoint and of the one it replaces
/// to drop what is older than the new one (not everything: the next
/// checkpoint may be on its way to them already).
pub async fn release_older(
    network: &mpsc::Sender<Command>,
    job: &JobKey,
    sequence: u64,
    new: &[Replica],
    old: &[Replica],
) {
    let holders: HashSet<&str> = new.iter().chain(old).map(|r| r.peer.as_str()).collect();
    // A holder of only the old one keeps an empty record until its lease
    // ends; a newer checkpoint may be on its way to it.
    for peer in holders {
        let Ok(peer_id) = peer.parse::<PeerId>() else {
            continue;
        };
        if let Err(e) = client::release(network, peer_id, job, Some(sequence)).await {
            tracing::debug!(%peer, error = %e, "could not release an older checkpoint; its lease will");
        }
    }
}

/// What the keeper needs.
pub struct Keeper {
    pub queue: Queue,
    pub network: mpsc::Sender<Command>,
    pub pool: crate::pool::Pool,
    pub me: AgentId,
    pub place: Place,
    pub domain: String,
    pub lease_secs: u32,
    /// Reserves the path to a new store peer before a repair sends to it.
    pub links: crate::links::Client,
}

/// Starts the keeper task.
pub fn spawn_keeper(keeper: Keeper) -> tokio::task::JoinHandle<()> {
    let mut memory = Memory::default();
    tokio::spawn(tracing::Instrument::in_current_span(async move {
        let mut tick = tokio::time::interval(KEEP_EVERY);
        let mut renewed: Option<Instant> = None;
        loop {
            tick.tick().await;
            let renew = renewed.is_none_or(|at| {
                at.elapsed() >= Duration::from_secs(u64::from(keeper.lease_secs) / 4)
            });
            keeper.round(renew, &mut memory).await;
            if renew {
                renewed = Some(Instant::now());
            }
        }
    }))
}

/// What the keeper remembers from round to round.
#[derive(Default)]
struct Memory {
    /// Since when no holder of a job's checkpoint has been in the pool.
    orphaned: std::collections::HashMap<JobId, Instant>,
    /// Until when a store peer (by peer id) that refused a job's
    /// checkpoint is left alone.
    refused: std::collections::HashMap<(JobId, String), Instant>,
    /// When the keeper last said it found no store peer for a job's
    /// missing replicas.
    unplaced: std::collections::HashMap<JobId, Instant>,
}

impl Keeper {
    /// One look at every record.
    async fn round(&self, renew: bool, memory: &mut Memory) {
        let records = self.queue.checkpoints().await;
        if records.is_empty() {
            return;
        }
        let peers = match self.pool.view().await {
            Ok(view) => place::store_peers(&view, &self.network, &self.me.to_string()).await,
            Err(_) => return,
        };
        let live: HashSet<String> = peers.iter().map(|p| p.candidate.peer.clone()).collect();
        let mut renewals: BTreeMap<String, Vec<JobKey>> = BTreeMap::new();
        for (id, bytes) in records {
            let key = job_key(&self.me, id);
            let Ok(record) = Record::decode(&bytes) else {
                tracing::warn!(%id, "a checkpoint record cannot be read; forgetting it");
                self.queue.forget_checkpoint(id).await;
                continue;
            };
            if self.queue.job(id).is_none() {
                // The job left the queue: its chunks go everywhere.
                for replica in &record.replicas {
                    if let Ok(peer) = replica.peer.parse() {
                        let _ = client::release(&self.network, peer, &key, None).await;
                    }
                }
                self.queue.forget_checkpoint(id).await;
                continue;
            }
            if record.replicas.iter().all(|r| !live.contains(&r.peer)) {
                // Every holder left: their copies may come back (a
                // restart), but not after their lease ran out, when they
                // dropped it. Then the job starts over.
                let since = *memory.orphaned.entry(id).or_insert_with(Instant::now);
                if since.elapsed() >= Duration::from_secs(u64::from(self.lease_secs)) {
                    tracing::warn!(%id, "every store peer of the job's checkpoint has been gone for its lease; the job starts over");
                    self.queue.forget_checkpoint(id).await;
                    let _ = self.queue.checkpoint_lost(id).await;
                    memory.orphaned.remove(&id);
                }
                continue;
            }
            memory.orphaned.remove(&id);
            memory.refused.retain(|_, until| *until > Instant::now());
            let record = self.repair(id, &key, record, &peers, &live, memory).await;
            if renew {
                for replica in &record.replicas {
                    renewals
                        .entry(replica.peer.clone())
                        .or_default()
                        .push(key.clone());
                }
            }
        }
        for (peer, jobs) in renewals {
            let Ok(peer_id) = peer.parse::<PeerId>() else {
                continue;
            };
            for batch in jobs.chunks(starling_protocol::checkpoint::MAX_RENEW_JOBS) {
                match client::renew(&self.network, peer_id, batch.to_vec(), self.lease_secs).await {
                    Ok(unknown) if !unknown.is_empty() => {
                        tracing::warn!(%peer, jobs = unknown.len(), "a store peer no longer holds some checkpoints");
                    }
                    Ok(_) => {}
                    Err(e) => tracing::debug!(%peer, error = %e, "renewing checkpoints failed"),
                }
            }
        }
    }

    /// Brings the record back to the replicas the job wants when holders
    /// left the pool or there were never enough: copies from a survivor
    /// to new store peers, neither the machine running the job (it would
    /// lose both at once) nor one that refused it lately.
    async fn repair(
        &self,
        id: JobId,
        key: &JobKey,
        record: Record,
        peers: &[place::StorePeer],
        live: &HashSet<String>,
        memory: &mut Memory,
    ) -> Record {
        let Memory {
            refused, unplaced, ..
        } = memory;
        let (survivors, gone): (Vec<Replica>, Vec<Replica>) = record
            .replicas
            .iter()
            .cloned()
            .partition(|r| live.contains(&r.peer));
        let Some(ad) = self.queue.job(id) else {
            return record;
        };
        let wanted = replicas::replicas_for(crate::ad::integer(&ad, "CheckpointReplicas"));
        if gone.is_empty() && survivors.len() >= wanted {
            return record;
        }
        let Ok((_, manifest)) = record.manifest() else {
            return record;
        };
        let candidates: Vec<replicas::Candidate> =
            peers.iter().map(|p| p.candidate.clone()).collect();
        let keep: Vec<replicas::Candidate> = survivors
            .iter()
            .filter_map(|s| candidates.iter().find(|c| c.peer == s.peer).cloned())
            .collect();
        let running_on = crate::ad::text(&ad, starling_queue::EXECUTE_AGENT)
            .filter(|_| crate::ad::integer(&ad, "JobStatus") == Some(2));
        let exclude: Vec<String> = gone
            .iter()
            .map(|g| g.peer.clone())
            .chain(running_on)
            .chain(
                refused
                    .keys()
                    .filter(|(job, _)| *job == id)
                    .map(|(_, peer)| peer.clone()),
            )
            .collect();
        let request = replicas::Request {
            replicas: wanted,
            bytes: manifest.size(),
            // The job's own machine is excluded above: place near the
            // survivors' owner, this agent, which may hold one too (with
            // few peers left it may be the only place).
            from: &self.place,
            from_may_hold: true,
            keep: &keep,
            exclude: &exclude,
        };
        let chosen = replicas::choose(&request, &candidates);
        if chosen.is_empty() {
            // Said once a minute: why a checkpoint stays short of replicas.
            let said = unplaced
                .get(&id)
                .is_some_and(|at| at.elapsed() < UNPLACED_SAID_EVERY);
            if !said {
                unplaced.insert(id, Instant::now());
                tracing::info!(
                    %id,
                    replicas = survivors.len(),
                    wanted,
                    store_peers = candidates.len(),
                    excluded = ?exclude,
                    "no store peer to put the checkpoint's missing replicas on; trying again"
                );
            }
            return record;
        }
        let sources: Vec<PeerId> = survivors
            .iter()
            .filter_map(|s| s.peer.parse().ok())
            .collect();
        let distinct = Arc::new(manifest.distinct_chunks());
        let source: client::Source = {
            let (network, key, sources, distinct) = (
                self.network.clone(),
                key.clone(),
                sources.clone(),
                distinct.clone(),
            );
            Arc::new(move |index| {
                let (network, key, sources, distinct) = (
                    network.clone(),
                    key.clone(),
                    sources.clone(),
                    distinct.clone(),
                );
                async move {
                    let (hash, len) = *distinct.get(index).ok_or("no such chunk")?;
                    client::get_chunk(&network, &sources, &key, hash, len).await
                }
                .boxed()
            })
        };
        let owner = Owner {
            domain: self.domain.clone(),
            user: crate::ad::text(&ad, "Owner").unwrap_or_else(|| "nobody".to_owned()),
        };
        let checkpoint = client::Checkpoint {
            job: key,
            owner: &owner,
            sequence: manifest.sequence,
            manifest: &manifest,
            lease_secs: self.lease_secs,
        };
        let mut replicas = survivors;
        for index in chosen {
            let target = &peers[index];
            match client::replicate(
                &self.network,
                target.peer,
                &checkpoint,
                &source,
                Some(&self.links),
            )
            .await
            {
                Ok(sent) => {
                    tracing::info!(%id, peer = %target.peer, bytes = sent.bytes, "re-replicated the job's checkpoint");
                    replicas.push(Replica {
                        peer: target.candidate.peer.clone(),
                        machine: target.candidate.place.machine.clone(),
                    });
                }
                Err(e) => {
                    tracing::info!(%id, peer = %target.peer, error = %e, "re-replicating the checkpoint failed");
                    if let Some(wait) = backoff(e.code) {
                        refused.insert((id, target.candidate.peer.clone()), Instant::now() + wait);
                    }
                }
            }
        }
        // Replicas that left stay listed until enough new ones took it,
        // in case they come back.
        let kept_enough = replicas.len() >= wanted;
        if !kept_enough {
            replicas.extend(gone);
            replicas.truncate(starling_protocol::checkpoint::MAX_REPLICAS);
        }
        let updated = Record {
            manifest: record.manifest.clone(),
            replicas,
        };
        let hosts: Vec<String> = updated
            .replicas
            .iter()
            .filter(|r| live.contains(&r.peer))
            .map(|r| r.machine.clone())
            .collect();
        if let Err(e) = self
            .queue
            .replicas_moved(id, manifest.sequence, &hosts, updated.encode())
            .await
        {
            tracing::warn!(%id, error = %e, "could not record the checkpoint's new replicas");
            return record;
        }
        updated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::checkpoint::{chunk_hashes, ManifestFile};
    use starling_protocol::identity::Keypair;
    use starling_protocol::transfer::FileName;

    fn peer_of(key: &Keypair) -> PeerId {
        PeerId::from_bytes(&key.agent_id().to_peer_id_bytes()).unwrap()
    }

    fn manifest(me: &AgentId, id: JobId, sequence: u64, by: &Keypair) -> Envelope {
        Manifest::new(
            job_key(me, id),
            sequence,
            Timestamp::now(),
            1000,
            vec![ManifestFile {
                name: FileName::new("state").unwrap(),
                mode: 0o644,
                size: 2,
            }],
            chunk_hashes(b"42"),
            vec![Replica {
                peer: "p1".into(),
                machine: "m1".into(),
            }],
        )
        .unwrap()
        .sign(by, Timestamp::now())
        .unwrap()
    }

    #[test]
    fn a_manifest_is_taken_only_from_the_jobs_execute_agent_for_that_job_and_later() {
        let me = Keypair::generate().unwrap().agent_id();
        let execute = Keypair::generate().unwrap();
        let other = Keypair::generate().unwrap();
        let id = JobId::new(3, 0);
        let good = manifest(&me, id, 2, &execute);
        assert_eq!(
            accept(&good, &peer_of(&execute), &me, id, Some(1))
                .unwrap()
                .sequence,
            2
        );
        // Signed by another agent than the one running the job.
        let err = accept(&good, &peer_of(&other), &me, id, None).unwrap_err();
        assert!(
            err.contains("not signed by the agent running the job"),
            "{err}"
        );
        // For another job.
        let err = accept(&good, &peer_of(&execute), &me, JobId::new(4, 0), None).unwrap_err();
        assert!(err.contains("is for job"), "{err}");
        // Not later than the one recorded.
        let err = accept(&good, &peer_of(&execute), &me, id, Some(2)).unwrap_err();
        assert!(err.contains("not later than the recorded 2"), "{err}");
        // Another kind of envelope.
        let job = Envelope::seal(
            &execute,
            1,
            Timestamp::now(),
            Timestamp::now().saturating_add_millis(60_000),
            starling_protocol::identity::Kind::JOB,
            vec![1, 2, 3],
        );
        assert!(accept(&job, &peer_of(&execute), &me, id, None).is_err());
    }

    #[test]
    fn records_round_trip_and_damaged_ones_are_refused() {
        let me = Keypair::generate().unwrap().agent_id();
        let execute = Keypair::generate().unwrap();
        let envelope = manifest(&me, JobId::new(1, 0), 1, &execute);
        let record = Record {
            manifest: envelope.to_bytes(),
            replicas: vec![Replica {
                peer: "p1".into(),
                machine: "m1".into(),
            }],
        };
        let back = Record::decode(&record.encode()).unwrap();
        assert_eq!(back.manifest().unwrap().1.sequence, 1);
        assert!(Record::decode(b"\xff\x00garbage").is_err());
        let mut damaged = record.clone();
        let last = damaged.manifest.len() - 1;
        damaged.manifest[last] ^= 1;
        assert!(damaged.manifest().is_err());
    }
}
