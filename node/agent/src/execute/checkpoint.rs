//! Taking a running job's checkpoint on the execute agent, and putting a
//! restarted job's latest one back into its sandbox, as HTCondor's
//! self-checkpointing jobs expect.
//!
//! A job checkpoints itself: it writes its checkpoint files and exits with
//! its `checkpoint_exit_code` (on its own, or when asked to leave). The
//! starter then takes the checkpoint ([`take`]):
//!
//! 1. the files: `transfer_checkpoint_files` (`TransferCheckpoint`), or
//!    HTCondor's rule when it is unset: every file the job made or changed
//!    (and those of the checkpoint it restored from), with its stdout and
//!    stderr, less the executable and the input; each opened with the
//!    job's account's rights and never through a link;
//! 2. cut into chunks of [`CHUNK_LEN`], each named by its blake3 hash;
//! 3. replicated to `checkpoint_replicas` store peers (default 2) chosen
//!    by [`starling_policies::replicas::choose`] from the view: trusted,
//!    with room, nearest, on other machines and racks; a peer that refuses
//!    (full, over quota, not storing for the job's domain) is replaced by
//!    the next candidate;
//! 4. described in a manifest signed by this agent, which goes to the
//!    submit agent; the checkpoint counts once the submit agent answers
//!    that it recorded it.
//!
//! With no store peer the checkpoint is still sent (with no replicas): the
//! submit agent counts it, and the job restarts from it only while it stays
//! on this machine (its sandbox keeps the files).

use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt as _;
use libp2p::PeerId;
use starling_policies::replicas::{self, Place};
use starling_protocol::checkpoint::{JobKey, Manifest, ManifestFile, Owner, Replica, CHUNK_LEN};
use starling_protocol::claim::ClaimId;
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use starling_protocol::identity::{AgentId, Envelope, Keypair, Timestamp};
use starling_protocol::transfer::{self, FileName, Hash, Restore};
use tokio::sync::mpsc;

use crate::network::Command;
use crate::store::{client, place};
use starling_process::Sandbox;

/// How often the submit agent is asked to record a checkpoint before the
/// starter gives up on it (the job goes on; its next checkpoint may fare
/// better).
pub const RECORD_TRIES: u32 = 5;

/// What every starter of this agent needs to take and restore checkpoints.
pub struct Context {
    pub network: mpsc::Sender<Command>,
    /// For the current view (it may be restarted).
    pub pool: crate::pool::Pool,
    pub key: Arc<Keypair>,
    /// Where this machine stands.
    pub place: Place,
    /// The lease store peers are asked to keep chunks for.
    pub lease_secs: u32,
    /// This agent's peer id, as text.
    pub me: String,
    /// Reserves the path to each store peer before the chunks go.
    pub links: crate::links::Client,
}

/// A job's checkpointing, as its ad asks and its last checkpoint left it.
#[derive(Debug, Clone)]
pub struct Plan {
    pub job: JobKey,
    pub owner: Owner,
    /// `checkpoint_exit_code`: the job exits with it when it checkpointed.
    pub exit_code: Option<i32>,
    /// `transfer_checkpoint_files`, when set.
    pub files: Option<Vec<String>>,
    /// `when_to_transfer_output = ON_EXIT_OR_EVICT`: an evicted job's
    /// files are kept as a checkpoint whatever its exit code.
    pub on_evict: bool,
    pub replicas: usize,
    /// The sequence number of the next checkpoint.
    pub next_sequence: u64,
    /// The files of the checkpoint restored or last taken.
    pub last_files: Vec<String>,
    /// When the work the next checkpoint saves began (the start, or the
    /// last checkpoint).
    pub since: Instant,
    /// Where the next sequence number is remembered (the run's directory),
    /// so that an agent that restarts and takes the job on goes on from it.
    pub remember_in: Option<PathBuf>,
    /// What the job's earlier starts in this sandbox used (it exited to
    /// checkpoint and was started again): added to the final report, so
    /// that its wall and CPU time are the whole run's.
    pub earlier: transfer::Report,
}

impl Plan {
    /// Counts a start of the job that ended in a checkpoint.
    pub fn ran(&mut self, report: &transfer::Report) {
        let e = &mut self.earlier;
        e.wall_ms = e.wall_ms.saturating_add(report.wall_ms);
        e.user_cpu_ms = e.user_cpu_ms.saturating_add(report.user_cpu_ms);
        e.sys_cpu_ms = e.sys_cpu_ms.saturating_add(report.sys_cpu_ms);
        e.peak_memory_kib = e.peak_memory_kib.max(report.peak_memory_kib);
    }

    /// The final report with the earlier starts' use added.
    pub fn whole(&self, mut report: transfer::Report) -> transfer::Report {
        let e = &self.earlier;
        report.wall_ms = report.wall_ms.saturating_add(e.wall_ms);
        report.user_cpu_ms = report.user_cpu_ms.saturating_add(e.user_cpu_ms);
        report.sys_cpu_ms = report.sys_cpu_ms.saturating_add(e.sys_cpu_ms);
        report.peak_memory_kib = report.peak_memory_kib.max(e.peak_memory_kib);
        report
    }
}

fn attr(ad: &ClassAd, name: &str) -> Value {
    match Name::new(name) {
        Ok(name) => Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, name.folded()),
        Err(_) => Value::Undefined,
    }
}

fn int(ad: &ClassAd, name: &str) -> Option<i64> {
    match attr(ad, name) {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

fn text(ad: &ClassAd, name: &str) -> Option<String> {
    match attr(ad, name) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

impl Plan {
    /// The plan for a job handed over by `submitter`, in `domain`; `None`
    /// when the job does not checkpoint (no exit code, not ON_EXIT_OR_EVICT)
    /// or has no id.
    pub fn of(job: &ClassAd, submitter: &PeerId, domain: &str) -> Option<Plan> {
        let exit_code = int(job, "CheckpointExitCode").and_then(|c| i32::try_from(c).ok());
        let on_evict = text(job, "WhenToTransferOutput")
            .is_some_and(|w| w.eq_ignore_ascii_case("ON_EXIT_OR_EVICT"));
        if exit_code.is_none() && !on_evict {
            return None;
        }
        let agent = AgentId::from_peer_id_bytes(&submitter.to_bytes())?;
        let cluster = u64::try_from(int(job, "ClusterId")?).ok()?;
        let proc = u32::try_from(int(job, "ProcId")?).ok()?;
        let files = text(job, "TransferCheckpoint").map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        });
        Some(Plan {
            job: JobKey::new(&agent, cluster, proc),
            owner: Owner {
                domain: domain.to_owned(),
                user: text(job, "Owner").unwrap_or_else(|| "nobody".to_owned()),
            },
            exit_code,
            files,
            on_evict,
            replicas: replicas::replicas_for(int(job, "CheckpointReplicas")),
            next_sequence: 1,
            last_files: Vec::new(),
            since: Instant::now(),
            remember_in: None,
            earlier: transfer::Report::default(),
        })
    }

    /// Goes on from what an earlier run of this agent remembered in `dir`.
    pub fn recall(&mut self, dir: PathBuf) {
        if let Ok(text) = std::fs::read_to_string(dir.join(REMEMBERED)) {
            let mut lines = text.lines();
            if let Some(next) = lines.next().and_then(|l| l.trim().parse().ok()) {
                self.next_sequence = next;
                self.last_files = lines.map(str::to_owned).collect();
            }
        }
        self.remember_in = Some(dir);
    }

    fn remember(&self) {
        if let Some(dir) = &self.remember_in {
            let mut text = format!("{}\n", self.next_sequence);
            for name in &self.last_files {
                text.push_str(name);
                text.push('\n');
            }
            if let Err(e) = std::fs::write(dir.join(REMEMBERED), text) {
                tracing::warn!(error = %e, "cannot remember the checkpoint's sequence");
            }
        }
    }
}

/// The file of a run's directory that remembers its checkpoints.
pub const REMEMBERED: &str = "checkpoint";

/// A checkpoint taken and recorded.
#[derive(Debug)]
pub struct Taken {
    pub sequence: u64,
    pub bytes: u64,
    pub replicas: Vec<Replica>,
    /// Bytes sent to store peers (chunks they lacked), all together.
    pub sent: u64,
    /// From the job's exit to the checkpoint's record.
    pub elapsed: Duration,
}

/// Restores `restore` into `sandbox`; returns the names of the files
/// written. Checks the manifest is signed and for this job.
pub async fn restore(
    ctx: &Context,
    plan: &mut Plan,
    restore: &Restore,
    sandbox: &Path,
) -> Result<Vec<String>, String> {
    let manifest = Manifest::open(&restore.manifest, Timestamp::now())
        .map_err(|e| format!("the checkpoint's manifest is not valid: {e}"))?;
    if manifest.job != plan.job {
        return Err(format!(
            "the checkpoint is job {}'s, not this job's ({})",
            manifest.job, plan.job
        ));
    }
    let peers: Vec<PeerId> = order(ctx, &restore.replicas).await;
    if peers.is_empty() && !manifest.chunks.is_empty() {
        return Err("the checkpoint names no replica to fetch it from".to_owned());
    }
    let started = Instant::now();
    let user = format!("{}@{}", plan.owner.user, plan.owner.domain);
    let restored = client::restore(
        &ctx.network,
        &peers,
        &manifest,
        sandbox,
        Some(&ctx.links),
        Some(user),
    )
    .await?;
    tracing::info!(
        job = %plan.job,
        sequence = manifest.sequence,
        bytes = restored.bytes,
        files = restored.files,
        elapsed = ?started.elapsed(),
        "restored the job's checkpoint"
    );
    plan.next_sequence = manifest.sequence + 1;
    plan.last_files = manifest
        .files
        .iter()
        .map(|f| f.name.as_str().to_owned())
        .collect();
    plan.since = Instant::now();
    Ok(plan.last_files.clone())
}

/// The replicas' peers: those in the view nearest first, then the others
/// (they may be back).
async fn order(ctx: &Context, replicas: &[Replica]) -> Vec<PeerId> {
    let known = match ctx.pool.view().await {
        Ok(view) => place::store_peers(&view, &ctx.network, &ctx.me).await,
        Err(_) => Vec::new(),
    };
    place::fetch_order(&ctx.place, replicas, &known)
        .into_iter()
        .filter_map(|(i, _)| replicas[i].peer.parse().ok())
        .collect()
}

/// One file of the checkpoint, open, and where its chunks are.
struct Opened {
    file: std::fs::File,
}

/// Takes the job's checkpoint from `sandbox` (see the module's steps) and
/// has the submit agent `submitter` record it under `claim`.
#[allow(clippy::too_many_arguments)]
pub async fn take(
    ctx: &Context,
    plan: &mut Plan,
    claim: ClaimId,
    submitter: PeerId,
    sandbox: &Sandbox,
    account: Option<&starling_process::account::Account>,
    executable: &Path,
) -> Result<Taken, String> {
    let started = Instant::now();
    let names = files_of(plan, sandbox, executable)?;
    let account = account.cloned();
    let (files, chunks, opened, locations) = tokio::task::spawn_blocking(move || {
        let opened = crate::starter::open_checkpoint(account.as_ref(), names)?;
        cut(opened)
    })
    .await
    .map_err(|e| e.to_string())??;
    let cut_at = started.elapsed();
    let run_ms = u64::try_from(plan.since.elapsed().as_millis()).unwrap_or(u64::MAX);
    let sequence = plan.next_sequence;
    let draft = Manifest::new(
        plan.job.clone(),
        sequence,
        Timestamp::now(),
        run_ms,
        files,
        chunks,
        Vec::new(),
    )
    .map_err(|e| format!("the checkpoint cannot be described: {e}"))?;
    let bytes = draft.size();
    let opened = Arc::new(opened);
    let locations = Arc::new(locations);
    let source: client::Source = Arc::new(move |index| {
        let (opened, locations) = (opened.clone(), locations.clone());
        async move {
            tokio::task::spawn_blocking(move || {
                let (file, offset, len) = *locations
                    .get(index)
                    .ok_or_else(|| format!("no chunk {index}"))?;
                let mut data = vec![0u8; len as usize];
                opened[file]
                    .file
                    .read_exact_at(&mut data, offset)
                    .map_err(|e| format!("reading the checkpoint: {e}"))?;
                Ok(data)
            })
            .await
            .map_err(|e| e.to_string())?
        }
        .boxed()
    });
    let (replicas, sent) = replicate(ctx, plan, &draft, &source).await;
    let replicated_at = started.elapsed();
    let manifest = Manifest::new(
        draft.job.clone(),
        sequence,
        draft.taken_at,
        run_ms,
        draft.files.clone(),
        draft.chunks.clone(),
        replicas.clone(),
    )
    .map_err(|e| format!("the checkpoint cannot be described: {e}"))?;
    let envelope = manifest
        .sign(&ctx.key, Timestamp::now())
        .map_err(|e| format!("cannot sign the checkpoint's manifest: {e}"))?;
    record(ctx, claim, submitter, envelope).await?;
    plan.next_sequence = sequence + 1;
    plan.last_files = manifest
        .files
        .iter()
        .map(|f| f.name.as_str().to_owned())
        .collect();
    plan.since = Instant::now();
    plan.remember();
    tracing::info!(
        job = %plan.job,
        sequence,
        bytes,
        sent,
        replicas = replicas.len(),
        elapsed = ?started.elapsed(),
        cut = ?cut_at,
        replicated = ?replicated_at.saturating_sub(cut_at),
        "took the job's checkpoint"
    );
    Ok(Taken {
        sequence,
        bytes,
        replicas,
        sent,
        elapsed: started.elapsed(),
    })
}

/// Has the submit agent record the checkpoint.
async fn record(
    ctx: &Context,
    claim: ClaimId,
    submitter: PeerId,
    envelope: Envelope,
) -> Result<(), String> {
    let request = transfer::Request::Checkpoint {
        claim,
        manifest: Box::new(envelope),
    };
    let mut last = String::new();
    for _ in 0..RECORD_TRIES {
        match crate::transfers::fetch::request(&ctx.network, submitter, request.clone()).await {
            Ok(transfer::Response::Recorded { .. }) => return Ok(()),
            Ok(transfer::Response::Error { code, reason, .. }) => {
                last = format!("{code}: {reason}");
                if code != transfer::ErrorCode::Busy {
                    break;
                }
            }
            Ok(other) => last = format!("unexpected answer {other:?}"),
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(format!(
        "the submit agent did not record the checkpoint: {last}"
    ))
}

/// Sends the checkpoint to as many store peers as the plan wants, each
/// refusal replaced by the next candidate. Returns those that committed it
/// and the bytes sent.
async fn replicate(
    ctx: &Context,
    plan: &Plan,
    manifest: &Manifest,
    source: &client::Source,
) -> (Vec<Replica>, u64) {
    let peers = match ctx.pool.view().await {
        Ok(view) => place::store_peers(&view, &ctx.network, &ctx.me).await,
        Err(_) => Vec::new(),
    };
    let candidates: Vec<replicas::Candidate> = peers.iter().map(|p| p.candidate.clone()).collect();
    let checkpoint = client::Checkpoint {
        job: &plan.job,
        owner: &plan.owner,
        sequence: manifest.sequence,
        manifest,
        lease_secs: ctx.lease_secs,
    };
    let mut kept: Vec<replicas::Candidate> = Vec::new();
    let mut excluded: Vec<String> = Vec::new();
    let mut sent = 0;
    // Each round replaces the peers that refused; a pool has only so many.
    for _ in 0..4 {
        if kept.len() >= plan.replicas {
            break;
        }
        let request = replicas::Request {
            replicas: plan.replicas,
            bytes: manifest.size(),
            from: &ctx.place,
            from_may_hold: false,
            keep: &kept,
            exclude: &excluded,
        };
        let chosen = replicas::choose(&request, &candidates);
        if chosen.is_empty() {
            break;
        }
        let sends = chosen.iter().map(|&i| {
            let peer = peers[i].peer;
            let checkpoint = &checkpoint;
            async move {
                (
                    i,
                    client::replicate(&ctx.network, peer, checkpoint, source, Some(&ctx.links))
                        .await,
                )
            }
        });
        for (i, result) in futures::future::join_all(sends).await {
            match result {
                Ok(s) => {
                    sent += s.bytes;
                    kept.push(candidates[i].clone());
                }
                Err(e) => {
                    tracing::info!(peer = %peers[i].peer, error = %e, "a store peer did not take the checkpoint; trying another");
                    excluded.push(candidates[i].peer.clone());
                }
            }
        }
    }
    let replicas = kept
        .into_iter()
        .map(|c| Replica {
            peer: c.peer,
            machine: c.place.machine,
        })
        .collect();
    (replicas, sent)
}

/// The files of the checkpoint, relative to the sandbox.
fn files_of(
    plan: &Plan,
    sandbox: &Sandbox,
    executable: &Path,
) -> Result<Vec<(FileName, PathBuf)>, String> {
    let mut paths = sandbox
        .outputs(plan.files.as_deref())
        .map_err(|e| format!("listing the checkpoint files: {e}"))?;
    if plan.files.is_none() {
        for name in &plan.last_files {
            let path = sandbox.path().join(name);
            if path.is_file() && !paths.contains(&path) {
                paths.push(path);
            }
        }
        for stream in [sandbox.stdout(), sandbox.stderr()] {
            if stream.is_file() && !paths.contains(&stream) {
                paths.push(stream);
            }
        }
        paths.retain(|p| p != executable);
    }
    paths
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(sandbox.path()).unwrap_or(&path);
            let name = FileName::new(relative.to_string_lossy().into_owned())
                .map_err(|e| format!("{}: {e}", relative.display()))?;
            Ok((name, path))
        })
        .collect()
}

/// Where each distinct chunk is: (file, offset, length).
type Locations = Vec<(usize, u64, u32)>;

/// Threads that read and hash a checkpoint's chunks at once, at most.
pub const CUT_THREADS: usize = 4;

/// Reads the files through and cuts them into chunks, hashing them on up
/// to [`CUT_THREADS`] threads (the cores this machine has). Blocking.
///
/// Each file is cut at the size it has when opened; a file that shrinks
/// meanwhile is an error (the job is not running: its files should not
/// change).
#[allow(clippy::type_complexity)]
fn cut(
    opened: Vec<(FileName, std::fs::File, u32)>,
) -> Result<(Vec<ManifestFile>, Vec<Hash>, Vec<Opened>, Locations), String> {
    let mut files = Vec::with_capacity(opened.len());
    // Every chunk in order: (file, offset, length).
    let mut pieces: Locations = Vec::new();
    let mut kept = Vec::with_capacity(opened.len());
    for (index, (name, file, mode)) in opened.into_iter().enumerate() {
        let size = file
            .metadata()
            .map_err(|e| format!("reading {name}: {e}"))?
            .len();
        let mut offset = 0u64;
        while offset < size {
            let len = (size - offset).min(u64::from(CHUNK_LEN));
            // At most CHUNK_LEN.
            pieces.push((index, offset, len as u32));
            offset += len;
        }
        files.push(ManifestFile { name, mode, size });
        kept.push(Opened { file });
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, CUT_THREADS)
        .min(pieces.len().max(1));
    let share = pieces.len().div_ceil(threads).max(1);
    let hashed: Vec<Result<Vec<Hash>, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = pieces
            .chunks(share)
            .map(|part| {
                let (kept, files) = (&kept, &files);
                scope.spawn(move || {
                    let mut buf = vec![0u8; CHUNK_LEN as usize];
                    part.iter()
                        .map(|&(file, offset, len)| {
                            let data = &mut buf[..len as usize];
                            kept[file]
                                .file
                                .read_exact_at(data, offset)
                                .map_err(|e| format!("reading {}: {e}", files[file].name))?;
                            Ok(Hash::from_bytes(*blake3::hash(data).as_bytes()))
                        })
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("hashing the checkpoint failed".to_owned()))
            })
            .collect()
    });
    let mut chunks = Vec::with_capacity(pieces.len());
    for part in hashed {
        chunks.extend(part?);
    }
    let mut seen = std::collections::HashSet::new();
    let locations = pieces
        .iter()
        .zip(&chunks)
        .filter(|(_, hash)| seen.insert(**hash))
        .map(|(piece, _)| *piece)
        .collect();
    Ok((files, chunks, kept, locations))
}
