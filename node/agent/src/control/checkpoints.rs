//! The checkpoint requests of the control API: `ckpt ls` (a job's latest
//! checkpoint and where its replicas are) and `ckpt get` (fetch it,
//! verified, into a directory of the asker's).
//!
//! Both read the submit agent's record of each job's latest checkpoint
//! ([`Record`]: the manifest its execute agent signed, and the store peers
//! that hold it now), for jobs in the queue and for jobs in the history
//! whose record the keeper has not released yet.
//!
//! `get` is for the job's owner and administrators
//! ([`control_access::checkpoint_access`]). The agent fetches every chunk
//! from the nearest live replica ([`place::fetch_order`]; a missing,
//! corrupt or slow chunk is asked of the next, every hash is verified)
//! into a private staging directory of its own, then puts each file into
//! the asker's directory with the asker's rights, as output is placed
//! ([`job_files::place_output`]): nobody can make the agent write where
//! they could not write themselves. At most [`MAX_GETS`] fetches run at
//! once, each within [`GET_TIMEOUT`].

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libp2p::PeerId;
use ractor::ActorRef;
use starling_policies::control_access;
use starling_policies::replicas::Place;
use starling_protocol::classad::ClassAd;
use starling_protocol::identity::AgentId;
use starling_storage::JobId;
use tokio::sync::{mpsc, Semaphore};

use crate::control::jobs::Access;
use crate::network::Command;
use crate::store::{client, place};
use crate::submit::checkpoints::Record;
use crate::{current_view, job_files, shadow, SupervisorMsg, QUERY_TIMEOUT};
use starling_control::{
    Caller, Checkpoint, CheckpointFile, CheckpointGot, CheckpointReplica, JobCheckpoints, Request,
    Response, MAX_CHECKPOINT_JOBS, MAX_DIR_LEN,
};
use starling_process::users::Rights;
use starling_queue::{Queue, Selection, Target};

/// Checkpoint fetches (`ckpt get`) one agent runs at once; more are told
/// to try again.
pub const MAX_GETS: usize = super::MAX_CHECKPOINT_GETS;

/// How long one fetch may take, chunks and placing together.
pub const GET_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How far back the history is searched for a job that left the queue.
pub const HISTORY_SCAN: usize = 10_000;

/// Most names a refusal of clashing files lists.
const CLASHES_SHOWN: usize = 5;

/// Numbers the staging directories of fetches.
static FETCHES: AtomicU64 = AtomicU64::new(0);

/// What the checkpoint requests need of the agent.
pub struct Context<'a> {
    pub supervisor: &'a ActorRef<SupervisorMsg>,
    pub network: &'a mpsc::Sender<Command>,
    pub access: &'a Access<'a>,
    /// This agent's id: a replica it holds itself is the nearest.
    pub me: &'a str,
    /// Where this agent stands, for "nearest".
    pub place: &'a Place,
    /// The agent's private directory for staging fetched files.
    pub staging: &'a Path,
    /// Permits for [`MAX_GETS`] fetches.
    pub gets: &'a Arc<Semaphore>,
}

fn error(message: impl Into<String>) -> Response {
    Response::Error {
        message: message.into(),
    }
}

pub async fn handle(ctx: &Context<'_>, request: Request) -> Response {
    let queue = match ctx
        .supervisor
        .call(SupervisorMsg::Queue, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(q)) => q,
        _ => return error("the agent is stopping"),
    };
    match request {
        Request::Checkpoints { jobs, files } => list(ctx, &queue, &jobs, files).await,
        Request::CheckpointGet { job, dir, force } => {
            match get(ctx, &queue, &job, &dir, force).await {
                Ok(got) => Response::CheckpointGot(got),
                Err(message) => error(message),
            }
        }
        _ => error("not a checkpoint request"),
    }
}

/// A job as the agent knows it: its ad (from the queue, else the history)
/// and its checkpoint record.
struct Found {
    id: JobId,
    ad: Option<ClassAd>,
    in_queue: bool,
    record: Option<Vec<u8>>,
}

async fn find(queue: &Queue, id: JobId) -> Option<Found> {
    let record = queue.checkpoint(id).await;
    if let Some(ad) = queue.job(id) {
        return Some(Found {
            id,
            ad: Some(ad),
            in_queue: true,
            record,
        });
    }
    let ad = history_ad(queue, id).await;
    if ad.is_none() && record.is_none() {
        return None;
    }
    Some(Found {
        id,
        ad,
        in_queue: false,
        record,
    })
}

async fn history_ad(queue: &Queue, id: JobId) -> Option<ClassAd> {
    let one = Selection {
        targets: vec![Target::Job(id)],
        constraint: None,
    };
    queue
        .history(HISTORY_SCAN, &one)
        .await
        .ok()?
        .into_iter()
        .next()
}

/// The jobs `words` name (job ids, cluster ids; none: every job with a
/// checkpoint), and the words that name none, with why.
async fn select(
    queue: &Queue,
    words: &[String],
) -> Result<(Vec<Found>, Vec<(String, String)>), String> {
    if words.len() > MAX_CHECKPOINT_JOBS {
        return Err(format!(
            "{} jobs named; at most {MAX_CHECKPOINT_JOBS} at once",
            words.len()
        ));
    }
    let recorded: Vec<JobId> = queue
        .checkpoints()
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let mut ids = BTreeSet::new();
    let mut missing = Vec::new();
    if words.is_empty() {
        ids.extend(recorded.iter().copied());
        ids.extend(
            queue
                .jobs(&Selection::default())
                .into_iter()
                .filter(|(_, ad)| crate::ad::integer(ad, "NumCkpts").unwrap_or(0) > 0)
                .map(|(id, _)| id),
        );
    }
    for word in words {
        match Target::parse(word) {
            Ok(Target::Job(id)) => {
                ids.insert(id);
            }
            Ok(Target::Cluster(cluster)) => {
                let one = Selection {
                    targets: vec![Target::Cluster(cluster)],
                    constraint: None,
                };
                let before = ids.len();
                ids.extend(queue.jobs(&one).into_iter().map(|(id, _)| id));
                ids.extend(recorded.iter().filter(|id| id.cluster == cluster));
                if ids.len() == before {
                    missing.push((word.clone(), "no such cluster in the queue".to_owned()));
                }
            }
            _ => {
                return Err(format!(
                    "{word:?} is not a job id (12.0) or a cluster id (12)"
                ))
            }
        }
    }
    let mut found = Vec::new();
    for id in ids.into_iter().take(MAX_CHECKPOINT_JOBS) {
        match find(queue, id).await {
            Some(f) => found.push(f),
            None => missing.push((
                id.to_string(),
                "no such job in the queue or the history".to_owned(),
            )),
        }
    }
    Ok((found, missing))
}

/// `ckpt ls`.
async fn list(ctx: &Context<'_>, queue: &Queue, words: &[String], files: bool) -> Response {
    let (found, missing) = match select(queue, words).await {
        Ok(s) => s,
        Err(message) => return error(message),
    };
    let live = live_store_peers(ctx.supervisor).await;
    Response::Checkpoints {
        jobs: found.iter().map(|f| describe(f, &live, files)).collect(),
        missing,
    }
}

/// The agent ids of the store peers whose machine ads are in the view.
async fn live_store_peers(supervisor: &ActorRef<SupervisorMsg>) -> HashSet<String> {
    crate::machine_ads(supervisor)
        .await
        .into_iter()
        .filter(|m| place::is_store(&m.ad))
        .map(|m| m.signer.to_string())
        .collect()
}

/// A job and its latest checkpoint, as `ckpt ls` shows them.
fn describe(found: &Found, live: &HashSet<String>, files: bool) -> JobCheckpoints {
    let ad = found.ad.as_ref();
    let mut job = JobCheckpoints {
        job: found.id.to_string(),
        owner: ad.and_then(|ad| crate::ad::text(ad, "Owner")),
        status: ad
            .and_then(starling_queue::status_of)
            .map(|code| starling_queue::name_of(code).to_owned()),
        in_queue: found.in_queue,
        num_ckpts: ad
            .and_then(|ad| crate::ad::integer(ad, "NumCkpts"))
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0),
        local_only: ad
            .and_then(|ad| crate::ad::boolean(ad, starling_queue::CKPT_LOCAL_ONLY))
            .unwrap_or(false),
        latest: None,
        problem: None,
    };
    let Some(bytes) = &found.record else {
        return job;
    };
    match checkpoint_of(bytes, live, files) {
        Ok(checkpoint) => job.latest = Some(checkpoint),
        Err(problem) => job.problem = Some(problem),
    }
    job
}

/// A record as a [`Checkpoint`]: what its manifest says, and its replicas
/// with whether each is in the view (`live`).
fn checkpoint_of(record: &[u8], live: &HashSet<String>, files: bool) -> Result<Checkpoint, String> {
    let record = Record::decode(record)?;
    let (envelope, manifest) = record.manifest()?;
    Ok(Checkpoint {
        key: manifest.job.to_string(),
        sequence: manifest.sequence,
        taken_secs: i64::try_from(manifest.taken_at.as_unix_millis() / 1000).unwrap_or(i64::MAX),
        taken_by: AgentId::from_public_key(envelope.header().signer).to_string(),
        run_secs: manifest.run_ms as f64 / 1000.0,
        bytes: manifest.size(),
        file_count: manifest.files.len(),
        chunks: manifest.chunks.len(),
        distinct_chunks: manifest.distinct_chunks().len(),
        files: if files {
            manifest
                .files
                .iter()
                .map(|f| CheckpointFile {
                    name: f.name.as_str().to_owned(),
                    size: f.size,
                    mode: f.mode,
                })
                .collect()
        } else {
            Vec::new()
        },
        replicas: record
            .replicas
            .iter()
            .map(|r| CheckpointReplica {
                peer: r.peer.clone(),
                host: r.machine.clone(),
                live: live.contains(&r.peer),
                chunks: None,
            })
            .collect(),
    })
}

/// Why a job has nothing to fetch.
fn no_checkpoint(found: &Found) -> String {
    let ad = found.ad.as_ref();
    let count = ad
        .and_then(|ad| crate::ad::integer(ad, "NumCkpts"))
        .unwrap_or(0);
    let local_only =
        ad.and_then(|ad| crate::ad::boolean(ad, starling_queue::CKPT_LOCAL_ONLY)) == Some(true);
    let id = found.id;
    if count > 0 && local_only {
        format!(
            "job {id} has no checkpoint on store peers: its checkpoints were kept only on \
             the machine that ran it (no store peer took them)"
        )
    } else if count > 0 && !found.in_queue {
        format!("job {id} left the queue and its checkpoints were released")
    } else {
        format!("job {id} has no checkpoint")
    }
}

/// Whose rights the files are written with: the asker's.
fn rights_of(caller: &Caller, agent_uid: u32) -> Result<Rights, String> {
    if caller.uid == agent_uid {
        return Ok(Rights::Agent);
    }
    match &caller.name {
        Some(name) => Rights::of_owner(name).map_err(|e| format!("{name}: {e}")),
        None => Err(format!(
            "uid {} has no entry in the user database; the agent cannot write files as it",
            caller.uid
        )),
    }
}

/// `ckpt get`.
async fn get(
    ctx: &Context<'_>,
    queue: &Queue,
    job: &str,
    dir: &Path,
    force: bool,
) -> Result<CheckpointGot, String> {
    let id = match Target::parse(job) {
        Ok(Target::Job(id)) => id,
        _ => return Err(format!("{job:?} is not a job id (like 12.0)")),
    };
    check_dir(dir)?;
    let Some(found) = find(queue, id).await else {
        return Err(format!("job {id}: no such job in the queue or the history"));
    };
    let owner = found
        .ad
        .as_ref()
        .and_then(|ad| crate::ad::text(ad, "Owner"));
    control_access::checkpoint_access(&ctx.access.asker(), &ctx.access.agent(), owner.as_deref())
        .map_err(|refusal| format!("job {id}: {refusal}"))?;
    let Some(mut bytes) = found.record.clone() else {
        return Err(no_checkpoint(&found));
    };
    let rights = rights_of(ctx.access.caller, ctx.access.agent_uid)?;
    let Ok(_permit) = ctx.gets.clone().try_acquire_owned() else {
        return Err(format!(
            "this agent is fetching {MAX_GETS} checkpoints already; try again in a while"
        ));
    };
    let started = Instant::now();
    // A newer checkpoint may replace this one while it is fetched (and its
    // chunks go): then the newer one is fetched instead, once.
    let mut tries = 0;
    loop {
        tries += 1;
        let record = Record::decode(&bytes)
            .map_err(|e| format!("job {id}: its checkpoint record cannot be read: {e}"))?;
        let (_, manifest) = record
            .manifest()
            .map_err(|e| format!("job {id}: its checkpoint's manifest is not valid: {e}"))?;
        let names: Vec<String> = manifest
            .files
            .iter()
            .map(|f| f.name.as_str().to_owned())
            .collect();
        prepare_dir(&rights, dir, &names, force).await?;
        let known = match current_view(ctx.supervisor).await {
            Ok(view) => place::store_peers(&view, ctx.network, ctx.me).await,
            Err(message) => return Err(message),
        };
        let order = place::fetch_order(ctx.place, &record.replicas, &known);
        let asked: Vec<(PeerId, CheckpointReplica)> = order
            .iter()
            .filter_map(|&(i, live)| {
                let replica = &record.replicas[i];
                Some((
                    replica.peer.parse().ok()?,
                    CheckpointReplica {
                        peer: replica.peer.clone(),
                        host: replica.machine.clone(),
                        live,
                        chunks: None,
                    },
                ))
            })
            .collect();
        if asked.is_empty() && !manifest.chunks.is_empty() {
            return Err(format!(
                "job {id}: its checkpoint names no store peer to fetch it from"
            ));
        }
        let peers: Vec<PeerId> = asked.iter().map(|(p, _)| *p).collect();
        let fetched = fetch_and_place(ctx, &rights, &peers, &manifest, dir).await;
        let restored = match fetched {
            Ok(restored) => restored,
            Err(e) => {
                // Fetched again only if a newer checkpoint took its place.
                let newer = queue.checkpoint(id).await.filter(|now| *now != bytes);
                match newer {
                    Some(newer) if tries < 2 => {
                        tracing::info!(job = %id, error = %e, "the checkpoint changed while it was fetched; fetching the new one");
                        bytes = newer;
                        continue;
                    }
                    _ => {
                        return Err(format!(
                            "job {id}: fetching checkpoint {}: {e}",
                            manifest.sequence
                        ))
                    }
                }
            }
        };
        tracing::info!(
            job = %id,
            sequence = manifest.sequence,
            bytes = restored.bytes,
            dir = %dir.display(),
            "fetched a checkpoint for its owner"
        );
        return Ok(CheckpointGot {
            job: id.to_string(),
            sequence: manifest.sequence,
            dir: dir.to_owned(),
            files: manifest
                .files
                .iter()
                .map(|f| CheckpointFile {
                    name: f.name.as_str().to_owned(),
                    size: f.size,
                    mode: f.mode,
                })
                .collect(),
            bytes: manifest.size(),
            replicas: asked
                .into_iter()
                .zip(
                    restored
                        .chunks_from
                        .iter()
                        .copied()
                        .chain(std::iter::repeat(0)),
                )
                .map(|((_, mut replica), chunks)| {
                    replica.chunks = Some(chunks);
                    replica
                })
                .collect(),
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
    }
}

/// The rules a directory named in a request must meet before anything is
/// touched.
fn check_dir(dir: &Path) -> Result<(), String> {
    let len = dir.as_os_str().len();
    if len == 0 || len > MAX_DIR_LEN {
        return Err(format!(
            "the directory's path is {len} bytes; 1 to {MAX_DIR_LEN} are accepted"
        ));
    }
    if !dir.is_absolute() {
        return Err(format!("{}: the directory must be absolute", dir.display()));
    }
    Ok(())
}

/// Makes `dir` if it is missing, with `rights`, and checks that it holds
/// none of `names` unless `force`.
async fn prepare_dir(
    rights: &Rights,
    dir: &Path,
    names: &[String],
    force: bool,
) -> Result<(), String> {
    let (rights, at, names) = (rights.clone(), dir.to_owned(), names.to_vec());
    let checked = tokio::task::spawn_blocking(move || {
        let dir = at.clone();
        rights.run(move || -> std::io::Result<Result<(), String>> {
            match std::fs::metadata(&dir) {
                Ok(meta) if !meta.is_dir() => {
                    return Ok(Err(format!("{} is not a directory", dir.display())))
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir_all(&dir)?;
                }
                Err(e) => return Err(e),
            }
            Ok(refuse_clashes(&dir, &names, force))
        })
    })
    .await
    .map_err(|e| format!("checking {}: {e}", dir.display()))?;
    match checked {
        Ok(verdict) => verdict,
        Err(e) => Err(format!("cannot use {}: {e}", dir.display())),
    }
}

/// The refusal when `dir` already holds files named in `names` and the
/// request did not say to replace them. Blocking.
fn refuse_clashes(dir: &Path, names: &[String], force: bool) -> Result<(), String> {
    if force {
        return Ok(());
    }
    let clashes: Vec<&str> = names
        .iter()
        .filter(|name| std::fs::symlink_metadata(dir.join(name)).is_ok())
        .map(String::as_str)
        .collect();
    if clashes.is_empty() {
        return Ok(());
    }
    let mut shown = clashes[..clashes.len().min(CLASHES_SHOWN)].join(", ");
    if clashes.len() > CLASHES_SHOWN {
        shown.push_str(&format!(" and {} more", clashes.len() - CLASHES_SHOWN));
    }
    Err(format!(
        "{} already holds {shown}, which the checkpoint would replace; use -force to replace \
         them, or another directory",
        dir.display()
    ))
}

/// Fetches the checkpoint into a private staging directory and puts its
/// files into `dir` with `rights`; the staging directory goes either way.
async fn fetch_and_place(
    ctx: &Context<'_>,
    rights: &Rights,
    peers: &[PeerId],
    manifest: &starling_protocol::checkpoint::Manifest,
    dir: &Path,
) -> Result<client::Restored, String> {
    let staging = ctx.staging.join(format!(
        "ckpt-get-{}-{}",
        manifest.job.local_id().map_or(0, |(c, _)| c),
        FETCHES.fetch_add(1, Ordering::Relaxed)
    ));
    let made = {
        let staging = staging.clone();
        tokio::task::spawn_blocking(move || shadow::make_private_dir(&staging))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r)
    };
    let result = match made {
        Err(e) => Err(e),
        Ok(()) => {
            let work = async {
                // A user waits on it: it moves unreserved, in what
                // reservations leave.
                let restored =
                    client::restore(ctx.network, peers, manifest, &staging, None, None).await?;
                let moves: Vec<(PathBuf, PathBuf)> = manifest
                    .files
                    .iter()
                    .map(|f| (staging.join(f.name.as_str()), dir.join(f.name.as_str())))
                    .collect();
                let rights = rights.clone();
                tokio::task::spawn_blocking(move || place_all(&rights, &moves))
                    .await
                    .map_err(|e| format!("placing the files failed: {e}"))??;
                Ok(restored)
            };
            match tokio::time::timeout(GET_TIMEOUT, work).await {
                Ok(result) => result,
                Err(_) => Err(format!("it took longer than {} s", GET_TIMEOUT.as_secs())),
            }
        }
    };
    let gone = staging.clone();
    let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(gone)).await;
    result
}

/// Puts each staged file at its place, making the directories a nested
/// name needs, with `rights`. Blocking.
fn place_all(rights: &Rights, moves: &[(PathBuf, PathBuf)]) -> Result<(), String> {
    for (from, to) in moves {
        if let Some(parent) = to.parent() {
            rights
                .create_dir_all(parent)
                .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        }
        job_files::place_output(rights, from, to)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::checkpoint::{JobKey, Manifest, ManifestFile, Replica};
    use starling_protocol::identity::{Keypair, Timestamp};
    use starling_protocol::transfer::{FileName, Hash};

    fn record(replicas: &[(&str, &str)]) -> (Vec<u8>, AgentId) {
        let key = Keypair::from_seed(&[7; 32]);
        let submitter = Keypair::from_seed(&[8; 32]).agent_id();
        let data = b"step 3\n";
        let hash = Hash::from_bytes(*blake3::hash(data).as_bytes());
        let manifest = Manifest::new(
            JobKey::new(&submitter, 4, 0),
            3,
            Timestamp::from_unix_millis(1_700_000_000_000),
            12_500,
            vec![
                ManifestFile {
                    name: FileName::new("state").unwrap(),
                    mode: 0o644,
                    size: data.len() as u64,
                },
                ManifestFile {
                    name: FileName::new("sub/empty").unwrap(),
                    mode: 0o600,
                    size: 0,
                },
            ],
            vec![hash],
            replicas
                .iter()
                .map(|(peer, machine)| Replica {
                    peer: (*peer).to_owned(),
                    machine: (*machine).to_owned(),
                })
                .collect(),
        )
        .unwrap();
        let envelope = manifest.sign(&key, Timestamp::now()).unwrap();
        let record = Record {
            manifest: envelope.to_bytes(),
            replicas: manifest.replicas.clone(),
        };
        (record.encode(), key.agent_id())
    }

    #[test]
    fn a_record_reads_as_its_manifest_with_live_replicas_marked() {
        let (bytes, signer) = record(&[("peerA", "host-a"), ("peerB", "host-b")]);
        let live = HashSet::from(["peerB".to_owned()]);
        let checkpoint = checkpoint_of(&bytes, &live, true).unwrap();
        assert_eq!(checkpoint.sequence, 3);
        assert_eq!(checkpoint.taken_secs, 1_700_000_000);
        assert_eq!(checkpoint.taken_by, signer.to_string());
        assert_eq!(checkpoint.run_secs, 12.5);
        assert_eq!(checkpoint.bytes, 7);
        assert_eq!((checkpoint.file_count, checkpoint.chunks), (2, 1));
        assert!(checkpoint.key.ends_with("/4.0"), "{}", checkpoint.key);
        assert_eq!(
            checkpoint.files,
            [
                CheckpointFile {
                    name: "state".into(),
                    size: 7,
                    mode: 0o644
                },
                CheckpointFile {
                    name: "sub/empty".into(),
                    size: 0,
                    mode: 0o600
                }
            ]
        );
        let replicas: Vec<(&str, &str, bool)> = checkpoint
            .replicas
            .iter()
            .map(|r| (r.peer.as_str(), r.host.as_str(), r.live))
            .collect();
        assert_eq!(
            replicas,
            [("peerA", "host-a", false), ("peerB", "host-b", true)]
        );
        // Files only when asked for.
        assert!(checkpoint_of(&bytes, &live, false)
            .unwrap()
            .files
            .is_empty());
        // A damaged record says so.
        assert!(checkpoint_of(&bytes[..bytes.len() / 2], &live, false).is_err());
    }

    fn found(ad: &str, in_queue: bool) -> Found {
        Found {
            id: JobId::new(7, 0),
            ad: Some(starling_protocol::classad::parse_ad(ad).unwrap()),
            in_queue,
            record: None,
        }
    }

    #[test]
    fn a_job_without_a_fetchable_checkpoint_says_why() {
        assert_eq!(
            no_checkpoint(&found("[ NumCkpts = 0 ]", true)),
            "job 7.0 has no checkpoint"
        );
        assert!(no_checkpoint(&found(
            "[ NumCkpts = 2; StarlingCkptLocalOnly = true ]",
            true
        ))
        .contains("kept only on the machine that ran it"),);
        assert_eq!(
            no_checkpoint(&found("[ NumCkpts = 2 ]", false)),
            "job 7.0 left the queue and its checkpoints were released"
        );
        let described = describe(
            &found(
                "[ Owner = \"alice\"; JobStatus = 2; NumCkpts = 2; StarlingCkptLocalOnly = true ]",
                true,
            ),
            &HashSet::new(),
            false,
        );
        assert_eq!(described.owner.as_deref(), Some("alice"));
        assert_eq!(described.status.as_deref(), Some("running"));
        assert_eq!((described.num_ckpts, described.local_only), (2, true));
        assert!(described.latest.is_none());
    }

    #[test]
    fn a_directory_is_checked_before_anything_is_fetched() {
        assert!(check_dir(Path::new("relative/dir")).is_err());
        assert!(check_dir(Path::new("")).is_err());
        assert!(check_dir(&PathBuf::from(format!("/{}", "a".repeat(MAX_DIR_LEN)))).is_err());
        assert!(check_dir(Path::new("/tmp/out")).is_ok());
    }

    #[test]
    fn files_of_the_same_names_are_replaced_only_when_forced() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = ["state", "b", "c", "d", "e", "f", "g"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(refuse_clashes(dir.path(), &names, false), Ok(()));
        for name in &names {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let e = refuse_clashes(dir.path(), &names, false).unwrap_err();
        assert!(
            e.contains("already holds state, b, c, d, e and 2 more") && e.contains("-force"),
            "{e}"
        );
        assert_eq!(refuse_clashes(dir.path(), &names, true), Ok(()));
    }

    #[tokio::test]
    async fn a_directory_that_is_a_file_is_refused_and_a_missing_one_made() {
        let base = tempfile::tempdir().unwrap();
        let file = base.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let e = prepare_dir(&Rights::Agent, &file, &[], false)
            .await
            .unwrap_err();
        assert_eq!(e, format!("{} is not a directory", file.display()));
        let made = base.path().join("a/b");
        prepare_dir(&Rights::Agent, &made, &["state".to_owned()], false)
            .await
            .unwrap();
        assert!(made.is_dir());
    }
}
