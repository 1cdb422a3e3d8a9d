//! Putting a checkpoint's chunks on store peers and getting them back.
//!
//! Replicating to one peer: ask which chunks it lacks
//! ([`Request::Missing`]), send those with [`WINDOW`] in flight, then
//! [`Request::Commit`], which the peer answers only once every chunk is
//! on its disk. Several peers are sent to at once. Restoring: each chunk
//! from the first replica that gives one whose blake3 hash is right, in
//! the order given (nearest first); a missing, corrupt or slow chunk
//! ([`CHUNK_TIMEOUT`]) is asked of the next replica.

use std::collections::HashMap;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::StreamExt as _;
use libp2p::PeerId;
use starling_protocol::checkpoint::{ErrorCode, JobKey, Manifest, Owner, Request, Response};
use starling_protocol::transfer::Hash;
use tokio::sync::mpsc;

use crate::links::Bulk;
use crate::network::{jobs, Command};

/// Chunks in flight to one peer at once.
pub const WINDOW: usize = 16;

/// How long one chunk may take from a replica before the next is asked.
pub const CHUNK_TIMEOUT: Duration = Duration::from_secs(20);

/// Sends a store request and waits for the answer.
pub async fn ask(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    request: Request,
) -> Result<Response, String> {
    jobs::ask(network, |reply| Command::Store {
        peer,
        request,
        reply,
    })
    .await
}

/// Why a store peer would not take a checkpoint.
#[derive(Debug, Clone)]
pub struct Failed {
    /// The store's code, when it answered with one (`None`: it could not be
    /// reached or answered nonsense).
    pub code: Option<ErrorCode>,
    pub reason: String,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            Some(code) => write!(f, "{code}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

fn failed(response: Result<Response, String>) -> Failed {
    match response {
        Ok(Response::Error { code, reason }) => Failed {
            code: Some(code),
            reason,
        },
        Ok(other) => Failed {
            code: None,
            reason: format!("unexpected answer {other:?}"),
        },
        Err(reason) => Failed { code: None, reason },
    }
}

/// Reads chunk `index` of a checkpoint's distinct chunks (as
/// [`Manifest::distinct_chunks`] orders them).
pub type Source = Arc<dyn Fn(usize) -> BoxFuture<'static, Result<Vec<u8>, String>> + Send + Sync>;

/// What was sent to one peer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent {
    pub chunks: usize,
    pub bytes: u64,
}

/// What a checkpoint is, for replicating it.
pub struct Checkpoint<'a> {
    pub job: &'a JobKey,
    pub owner: &'a Owner,
    pub sequence: u64,
    pub manifest: &'a Manifest,
    pub lease_secs: u32,
}

/// How long a checkpoint waits for its path to admit it before its chunks
/// go unreserved: a job waits for its checkpoint before it goes on, so
/// less than a job's input waits.
pub const ADMISSION_WAIT: Duration = Duration::from_secs(120);

/// Puts the checkpoint on `peer`: the chunks it lacks, then a commit.
/// With `links`, the chunks to send are a bulk transfer like a job's
/// input: the path to the peer is reserved first (admission control,
/// [`crate::links`]) and the chunks paced at the reserved rate.
pub async fn replicate(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    checkpoint: &Checkpoint<'_>,
    source: &Source,
    links: Option<&crate::links::Client>,
) -> Result<Sent, Failed> {
    let distinct = checkpoint.manifest.distinct_chunks();
    let hashes: Vec<Hash> = distinct.iter().map(|(h, _)| *h).collect();
    let missing = match ask(
        network,
        peer,
        Request::Missing {
            job: checkpoint.job.clone(),
            owner: checkpoint.owner.clone(),
            sequence: checkpoint.sequence,
            hashes: hashes.clone(),
            lease_secs: checkpoint.lease_secs,
        },
    )
    .await
    {
        Ok(Response::Missing { indices }) => indices,
        other => return Err(failed(other)),
    };
    let to_send: u64 = missing
        .iter()
        .filter_map(|&i| distinct.get(i as usize))
        .map(|(_, len)| u64::from(*len))
        .sum();
    let bulk = Bulk::start(
        links,
        peer,
        to_send,
        ADMISSION_WAIT,
        &crate::links::Purpose {
            kind: crate::links::Kind::CheckpointOut,
            job: None,
            user: Some(format!(
                "{}@{}",
                checkpoint.owner.user, checkpoint.owner.domain
            )),
        },
    )
    .await;
    let sent = put_and_commit(
        network,
        peer,
        checkpoint,
        source,
        &distinct,
        missing,
        bulk.pace(),
    )
    .await;
    let moved = sent.as_ref().ok().map(|s| s.bytes);
    bulk.finish(links, peer, moved, "sent the checkpoint").await;
    sent
}

/// Sends the `missing` chunks of `distinct` (paced by `pace`, if given)
/// and commits the checkpoint.
async fn put_and_commit(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    checkpoint: &Checkpoint<'_>,
    source: &Source,
    distinct: &[(Hash, u32)],
    missing: Vec<u32>,
    pace: Option<&tokio::sync::Mutex<crate::links::Pace>>,
) -> Result<Sent, Failed> {
    let hashes: Vec<Hash> = distinct.iter().map(|(h, _)| *h).collect();
    let mut sent = Sent::default();
    let mut puts = futures::stream::iter(missing.into_iter().map(|index| {
        let index = index as usize;
        async move {
            let Some((hash, _)) = distinct.get(index) else {
                return Err(Failed {
                    code: None,
                    reason: format!("the store named chunk {index}, which the checkpoint lacks"),
                });
            };
            let data = source(index)
                .await
                .map_err(|reason| Failed { code: None, reason })?;
            let len = data.len() as u64;
            if let Some(pace) = pace {
                pace.lock().await.moved(len).await;
            }
            match ask(
                network,
                peer,
                Request::Put {
                    job: checkpoint.job.clone(),
                    owner: checkpoint.owner.clone(),
                    sequence: checkpoint.sequence,
                    hash: *hash,
                    data,
                    lease_secs: checkpoint.lease_secs,
                },
            )
            .await
            {
                Ok(Response::Stored) => Ok(len),
                other => Err(failed(other)),
            }
        }
    }))
    .buffer_unordered(WINDOW);
    while let Some(put) = puts.next().await {
        sent.bytes += put?;
        sent.chunks += 1;
    }
    drop(puts);
    match ask(
        network,
        peer,
        Request::Commit {
            job: checkpoint.job.clone(),
            sequence: checkpoint.sequence,
            hashes,
        },
    )
    .await
    {
        Ok(Response::Committed) => Ok(sent),
        other => Err(failed(other)),
    }
}

/// One chunk of `job`, from the first of `peers` that gives a whole one
/// with the right hash. The error says what each peer answered.
pub async fn get_chunk(
    network: &mpsc::Sender<Command>,
    peers: &[PeerId],
    job: &JobKey,
    hash: Hash,
    len: u32,
) -> Result<Vec<u8>, String> {
    fetch_chunk(network, peers, job, hash, len)
        .await
        .map(|(data, _)| data)
}

/// [`get_chunk`], also saying which of `peers` (its index) gave the chunk.
pub async fn fetch_chunk(
    network: &mpsc::Sender<Command>,
    peers: &[PeerId],
    job: &JobKey,
    hash: Hash,
    len: u32,
) -> Result<(Vec<u8>, usize), String> {
    let mut errors = Vec::new();
    for (index, peer) in peers.iter().enumerate() {
        let asked = tokio::time::timeout(
            CHUNK_TIMEOUT,
            ask(
                network,
                *peer,
                Request::Get {
                    job: job.clone(),
                    hash,
                },
            ),
        )
        .await;
        match asked {
            Ok(Ok(Response::Chunk { data })) => {
                if data.len() == len as usize && blake3::hash(&data).as_bytes() == hash.as_bytes() {
                    return Ok((data, index));
                }
                tracing::warn!(%peer, %hash, "a replica sent a chunk that does not match its hash");
                errors.push(format!("{peer}: the chunk does not match its hash"));
            }
            Ok(other) => errors.push(format!("{peer}: {}", failed(other))),
            Err(_) => errors.push(format!("{peer}: no chunk in {CHUNK_TIMEOUT:?}")),
        }
    }
    Err(format!("chunk {hash}: {}", errors.join("; ")))
}

/// What a restore wrote.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    pub files: usize,
    pub bytes: u64,
    /// How many chunks each of the peers gave, in the order given.
    pub chunks_from: Vec<u64>,
}

/// Fetches the checkpoint from `peers` (in order of preference) into
/// `dir`, every chunk verified, with [`WINDOW`] chunks in flight. With
/// `links`, the path from the first peer is reserved first (admission
/// control, as for replication) and the chunks paced at the reserved
/// rate; chunks another peer gives instead are not paced.
pub async fn restore(
    network: &mpsc::Sender<Command>,
    peers: &[PeerId],
    manifest: &Manifest,
    dir: &Path,
    links: Option<&crate::links::Client>,
    user: Option<String>,
) -> Result<Restored, String> {
    let Some(&first) = peers.first() else {
        return fetch_all(network, peers, manifest, dir, None).await;
    };
    let bulk = Bulk::start(
        links,
        first,
        manifest.size(),
        ADMISSION_WAIT,
        &crate::links::Purpose {
            kind: crate::links::Kind::CheckpointIn,
            job: None,
            user,
        },
    )
    .await;
    let restored = fetch_all(network, peers, manifest, dir, bulk.pace()).await;
    let moved = restored.as_ref().ok().map(|r| r.bytes);
    bulk.finish(links, first, moved, "restored the checkpoint")
        .await;
    restored
}

/// [`restore`]'s fetching and writing, paced by `pace` if given.
async fn fetch_all(
    network: &mpsc::Sender<Command>,
    peers: &[PeerId],
    manifest: &Manifest,
    dir: &Path,
    pace: Option<&tokio::sync::Mutex<crate::links::Pace>>,
) -> Result<Restored, String> {
    // Where each distinct chunk goes: (file, offset) for every use.
    let mut places: HashMap<Hash, Vec<(usize, u64)>> = HashMap::new();
    let mut paths = Vec::with_capacity(manifest.files.len());
    for (index, (file, hashes)) in manifest.file_chunks().enumerate() {
        paths.push(dir.join(file.name.as_str()));
        for (i, hash) in hashes.iter().enumerate() {
            let offset = i as u64 * u64::from(starling_protocol::checkpoint::CHUNK_LEN);
            places.entry(*hash).or_default().push((index, offset));
        }
    }
    let opened = {
        let paths = paths.clone();
        let sizes: Vec<u64> = manifest.files.iter().map(|f| f.size).collect();
        tokio::task::spawn_blocking(move || create_files(&paths, &sizes))
            .await
            .map_err(|e| e.to_string())??
    };
    let opened = Arc::new(opened);
    let distinct = manifest.distinct_chunks();
    let places = Arc::new(places);
    let mut fetches = futures::stream::iter(distinct.into_iter().map(|(hash, len)| {
        let opened = opened.clone();
        let places = places.clone();
        async move {
            if let Some(pace) = pace {
                pace.lock().await.moved(u64::from(len)).await;
            }
            let (data, from) = fetch_chunk(network, peers, &manifest.job, hash, len).await?;
            tokio::task::spawn_blocking(move || {
                for (file, offset) in places.get(&hash).into_iter().flatten() {
                    opened[*file]
                        .write_all_at(&data, *offset)
                        .map_err(|e| format!("writing the checkpoint: {e}"))?;
                }
                Ok::<(u64, usize), String>((data.len() as u64, from))
            })
            .await
            .map_err(|e| e.to_string())?
        }
    }))
    .buffer_unordered(WINDOW);
    let mut restored = Restored {
        files: manifest.files.len(),
        bytes: 0,
        chunks_from: vec![0; peers.len()],
    };
    while let Some(fetched) = fetches.next().await {
        let (bytes, from) = fetched?;
        restored.bytes += bytes;
        restored.chunks_from[from] += 1;
    }
    drop(fetches);
    let modes: Vec<(PathBuf, u32)> = paths
        .into_iter()
        .zip(manifest.files.iter().map(|f| f.mode))
        .collect();
    tokio::task::spawn_blocking(move || {
        use std::os::unix::fs::PermissionsExt as _;
        for (file, (path, mode)) in opened.iter().zip(&modes) {
            file.sync_all()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok::<(), String>(())
    })
    .await
    .map_err(|e| e.to_string())??;
    Ok(restored)
}

/// Creates each file (and its directories), at its size. A file already
/// there (an input of the same name) is replaced: the checkpoint's is
/// newer. Blocking.
fn create_files(paths: &[PathBuf], sizes: &[u64]) -> Result<Vec<std::fs::File>, String> {
    paths
        .iter()
        .zip(sizes)
        .map(|(path, size)| {
            let cannot = |e: std::io::Error| format!("cannot create {}: {e}", path.display());
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(cannot)?;
            }
            let _ = std::fs::remove_file(path);
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(cannot)?;
            file.set_len(*size).map_err(cannot)?;
            Ok(file)
        })
        .collect()
}

/// Asks `peer` to keep these jobs' chunks `lease_secs` longer; returns the
/// jobs it holds nothing for.
pub async fn renew(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    jobs: Vec<JobKey>,
    lease_secs: u32,
) -> Result<Vec<JobKey>, String> {
    match ask(
        network,
        peer,
        Request::Renew {
            jobs: jobs.clone(),
            lease_secs,
        },
    )
    .await
    {
        Ok(Response::Renewed { unknown }) => Ok(unknown
            .into_iter()
            .filter_map(|i| jobs.get(i as usize).cloned())
            .collect()),
        other => Err(failed(other).to_string()),
    }
}

/// Asks `peer` to drop the job's chunks but those of checkpoint `keep`.
pub async fn release(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    job: &JobKey,
    keep: Option<u64>,
) -> Result<u64, String> {
    match ask(
        network,
        peer,
        Request::Release {
            job: job.clone(),
            keep,
        },
    )
    .await
    {
        Ok(Response::Released { freed }) => Ok(freed),
        other => Err(failed(other).to_string()),
    }
}
