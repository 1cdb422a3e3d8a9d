//! The checkpoint chunk store of a store peer: the chunks of other agents'
//! checkpoints that this agent keeps for them, within what its
//! configuration lends.
//!
//! It owns one sled database of its own (`<data dir>/chunks`), apart from
//! the job queue's store: its contents are copies (every chunk also lives
//! on the job's other replicas), so it can be lost without losing anything
//! a user relies on, and its size never competes with the queue's
//! records. Chunks are content addressed: a chunk's key is the blake3 hash
//! of its bytes, checked on the way in ([`ChunkStore::put`]) and on the way
//! out ([`ChunkStore::get`]); a chunk held for several jobs (or several
//! checkpoints of one job) is stored once.
//!
//! Data flows: a submit or execute agent asks which chunks of a checkpoint
//! are missing ([`ChunkStore::missing`], which also references those held
//! already so that nothing is collected while the rest is sent), sends
//! those ([`ChunkStore::put`]), and commits the checkpoint
//! ([`ChunkStore::commit`], flushed: the replica's acknowledgement). A
//! replaced checkpoint is released ([`ChunkStore::release`] with the
//! sequence to keep), a job that left the queue is released whole, and a
//! job whose lease was not renewed is collected ([`ChunkStore::collect`]),
//! so a submit agent that vanished leaks no disk.
//!
//! # Accounting
//!
//! - *Physical* use is the bytes of the chunks stored, each once: bounded
//!   by [`Limits::lend_bytes`] and by the filesystem's free space, less
//!   [`KEEP_FREE_BYTES`].
//! - *Logical* use is charged to the job's owner (domain, and user within
//!   it) for each distinct chunk the job references, whatever other jobs
//!   share it: bounded by the domain's and the user's quotas. A job that
//!   references a chunk from several of its checkpoints is charged once.
//!
//! Every change to chunks, references, jobs and the counters is one sled
//! transaction: after a crash it is there whole or not at all, and the
//! counters agree with the records.
//!
//! # Layout (chunk store schema 1)
//!
//! | tree | key | value |
//! |---|---|---|
//! | `meta` | `schema` | `u32` BE, not sealed |
//! | `meta` | `totals` | `{used, chunks}`: physical bytes and chunks present |
//! | `chunks` | hash (32) | the chunk's bytes, not sealed (the key is their hash) |
//! | `held` | hash (32) | `{len, jobs, present}`: the jobs referencing it |
//! | `refs` | job ‖ 0 ‖ sequence `u64` BE ‖ 0 ‖ hash | empty |
//! | `job_chunks` | job ‖ 0 ‖ hash | `u64` BE: the job's sequences referencing it |
//! | `jobs` | job | `{domain, user, lease_until_ms, charged, committed}` |
//! | `usage` | domain, or domain ‖ 0 ‖ user | `u64` BE: logical bytes charged |
//!
//! Every value but the chunks' bytes and the schema is sealed
//! ([`crate::seal`]): a damaged record is an [`Error::Damaged`] naming it,
//! never a panic and never a plausible wrong number. Names (jobs, domains,
//! users) never hold a NUL byte, so the separators are unambiguous.
//!
//! A chunk whose bytes no longer hash to its key is dropped when it is
//! read, and reported as [`Error::Corrupt`]: the job has other replicas,
//! and the chunk may be sent again. So is a chunk whose bytes sled lost
//! (sled drops a page whose own checksum fails when it opens its files) or
//! cannot read: it is marked absent in the counts, its references stay.
//! [`ChunkStore::holds`] reads only the records, not the bytes: a chunk
//! damaged on disk is found when it is read.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sled::transaction::{
    abort, ConflictableTransactionError, TransactionError, Transactional, TransactionalTree,
};
use sled::Tree;

use crate::codec::{decode, encode, hex};
use crate::error::Source;
use crate::seal::{seal, unseal};

/// A chunk's key: the blake3 hash of its bytes.
pub type ChunkHash = [u8; 32];

/// The largest chunk: 1 MiB.
pub const MAX_CHUNK_LEN: usize = 1 << 20;

/// The most hashes one call takes (a 64 GiB checkpoint at 1 MiB a chunk).
pub const MAX_HASHES: usize = 65_536;

/// The longest job key, in bytes.
pub const MAX_JOB_KEY_LEN: usize = 256;

/// The longest domain or user name, in bytes.
pub const MAX_NAME_LEN: usize = 256;

/// Space the store leaves free on its filesystem whatever it lends: room
/// for the agent's queue and for sled's own files to grow.
pub const KEEP_FREE_BYTES: u64 = 64 << 20;

/// The checkpoints of a job one record remembers as committed (the newest).
const MAX_COMMITTED: usize = 64;

/// This chunk store's layout version.
const SCHEMA_VERSION: u32 = 1;

const SCHEMA: &[u8] = b"schema";
const TOTALS: &[u8] = b"totals";

const META: &str = "meta";
const CHUNKS: &str = "chunks";
const HELD: &str = "held";
const REFS: &str = "refs";
const JOB_CHUNKS: &str = "job_chunks";
const JOBS: &str = "jobs";
const USAGE: &str = "usage";

/// Largest small record (a job's, a chunk's bookkeeping).
const MAX_RECORD_LEN: usize = 4096;

/// How long [`ChunkStore::open`] waits for sled's lock, which a store just
/// dropped in this process may hold for a moment.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// What this peer lends, from the agent's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Total bytes of chunk data this peer keeps for others.
    pub lend_bytes: u64,
    /// Quota per owner domain, in logical bytes.
    pub per_domain: BTreeMap<String, u64>,
    /// Quota for a domain not named in `per_domain`; `None`: only
    /// `lend_bytes` bounds it.
    pub other_domains: Option<u64>,
    /// Quota per (domain, user); `None`: no per-user bound.
    pub per_user: Option<u64>,
}

impl Limits {
    /// The quota of `domain`, if it has one.
    pub fn domain_limit(&self, domain: &str) -> Option<u64> {
        self.per_domain.get(domain).copied().or(self.other_domains)
    }
}

/// Whose checkpoint a chunk is kept for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The job's global key (at most [`MAX_JOB_KEY_LEN`] bytes, no NUL).
    pub job: String,
    /// The job owner's domain, charged for its chunks.
    pub domain: String,
    /// The job's owner within the domain.
    pub user: String,
}

/// Why the chunk store would not do what it was asked: what a store peer
/// tells the agent sending a checkpoint, which then tries another peer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// This peer lends no more room (or its filesystem has none).
    #[error(
        "no space: the chunk takes {needed} bytes and this store peer has {free} free to lend"
    )]
    NoSpace { needed: u64, free: u64 },
    /// The owner's domain used its quota here.
    #[error("domain {domain:?} has used {used} of the {limit} bytes this store peer lends it")]
    DomainQuota {
        domain: String,
        used: u64,
        limit: u64,
    },
    /// The owner used their quota here.
    #[error(
        "user {user:?} of domain {domain:?} has used {used} of the {limit} bytes this store \
         peer lends a user"
    )]
    UserQuota {
        domain: String,
        user: String,
        used: u64,
        limit: u64,
    },
    /// The chunk's bytes do not hash to the hash it was sent under.
    #[error("the chunk's bytes do not hash (blake3) to the hash it was sent under")]
    BadHash,
    /// The chunk is larger than [`MAX_CHUNK_LEN`].
    #[error("the chunk is {len} bytes, more than the limit of {MAX_CHUNK_LEN}")]
    TooLarge { len: usize },
    /// Something named is not held here: the job, or a chunk of a
    /// checkpoint being committed.
    #[error("{0}")]
    Unknown(String),
    /// An argument out of bounds: a job key too long, too many hashes, a
    /// job already held for another owner.
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] Error),
}

/// Why a chunk store call failed. Messages name the store's path and say
/// what to do; causes are kept as `source`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Another process has the chunk store open.
    #[error(
        "chunk store at {path} is in use by another process: stop the other starling agent, \
         or give this one its own data directory"
    )]
    Locked {
        path: PathBuf,
        #[source]
        source: Source,
    },
    /// A newer Starling wrote the chunk store.
    #[error(
        "chunk store at {path} has schema version {found}; this starling understands up to \
         {supported}: upgrade starling, or remove the directory (it only holds copies of \
         other agents' checkpoints)"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// The chunk store could not be read or written.
    #[error(
        "chunk store at {path} could not be read or written: check that the disk is writable \
         and not full"
    )]
    Io {
        path: PathBuf,
        #[source]
        source: Source,
    },
    /// A chunk's bytes no longer hash to its key (damage on disk): it was
    /// dropped from the store.
    #[error(
        "chunk {hash} in the chunk store at {path} was damaged on disk and is dropped: fetch \
         it from another replica"
    )]
    Corrupt { path: PathBuf, hash: String },
    /// A record of the store is damaged.
    #[error(
        "chunk store at {path} is damaged ({what}): stop the agent and remove the directory \
         (it only holds copies of other agents' checkpoints; their other replicas remain)"
    )]
    Damaged { path: PathBuf, what: String },
    /// An argument out of bounds.
    #[error("{what}")]
    Invalid { what: String },
}

/// What the store holds for one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holding {
    pub domain: String,
    pub user: String,
    /// When the job's chunks may be collected unless renewed (unix ms).
    pub lease_until_ms: u64,
    /// The checkpoint sequences with chunks referenced here, ascending.
    pub sequences: Vec<u64>,
    /// The sequences committed here and not released, ascending.
    pub committed: Vec<u64>,
    /// Logical bytes charged to the owner for the job (each distinct chunk
    /// once).
    pub bytes: u64,
}

/// The store's figures, for `starling status -store` and the store ad.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// What the configuration lends.
    pub lend_bytes: u64,
    /// Bytes of chunks stored, each once.
    pub used_bytes: u64,
    /// What a new chunk may still take: the lent bytes not used, bounded
    /// by the filesystem's free space less [`KEEP_FREE_BYTES`].
    pub free_bytes: u64,
    /// Chunks stored.
    pub chunks: u64,
    /// Jobs with a record here.
    pub jobs: u64,
    /// Logical bytes charged per owner domain.
    pub per_domain: BTreeMap<String, u64>,
}

/// What [`ChunkStore::collect`] released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Collected {
    /// Jobs whose lease had ended.
    pub jobs: u64,
    /// Chunks deleted (no job references them any more).
    pub chunks: u64,
    /// Bytes freed.
    pub bytes: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
struct Totals {
    used: u64,
    chunks: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
struct HeldRecord {
    len: u64,
    /// Jobs referencing the chunk.
    jobs: u64,
    /// The bytes are in `chunks` (false once they were found damaged).
    present: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
struct JobRecord {
    domain: String,
    user: String,
    lease_until_ms: u64,
    charged: u64,
    committed: Vec<u64>,
}

/// A transaction's failure: a refusal, or sled's.
type TxResult<T> = Result<T, ConflictableTransactionError<Refusal>>;

/// The checkpoint chunks a store peer keeps for others (see the module
/// docs). `Send + Sync`; calls block on disk I/O, so call them off the
/// async threads. Changes are serialised; reads run beside them.
pub struct ChunkStore {
    path: PathBuf,
    /// Replaced whole when the agent's configuration or its domain's
    /// policy changes ([`ChunkStore::set_limits`]); what is already held
    /// stays, whatever the new limits.
    limits: std::sync::RwLock<Limits>,
    db: sled::Db,
    meta: Tree,
    chunks: Tree,
    held: Tree,
    refs: Tree,
    job_chunks: Tree,
    jobs: Tree,
    usage: Tree,
    /// Held by every change: releases and collection scan before their
    /// transaction, and no change may slip in between.
    write: Mutex<()>,
}

impl std::fmt::Debug for ChunkStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkStore")
            .field("path", &self.path)
            .field("limits", &self.limits())
            .finish_non_exhaustive()
    }
}

impl ChunkStore {
    /// Opens the chunk store in directory `path`, creating it if needed,
    /// lending what `limits` says. Fails with [`Error::Locked`] if another
    /// process has it open and [`Error::NewerSchema`] if a newer Starling
    /// wrote it.
    pub fn open(path: &Path, limits: Limits) -> Result<ChunkStore, Error> {
        let path = path.to_path_buf();
        let db = open_db(&path)?;
        let tree = |name: &str| db.open_tree(name).map_err(|e| io(&path, e));
        let store = ChunkStore {
            meta: tree(META)?,
            chunks: tree(CHUNKS)?,
            held: tree(HELD)?,
            refs: tree(REFS)?,
            job_chunks: tree(JOB_CHUNKS)?,
            jobs: tree(JOBS)?,
            usage: tree(USAGE)?,
            db,
            limits: std::sync::RwLock::new(limits),
            path,
            write: Mutex::new(()),
        };
        store.check_schema()?;
        Ok(store)
    }

    /// The store's directory (tests damage its files).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the store lends now.
    pub fn limits(&self) -> Limits {
        self.limits
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Lends what `limits` says from now on. Chunks already held stay
    /// (a smaller quota refuses new ones until use falls below it, as a
    /// smaller `lend_bytes` does).
    pub fn set_limits(&self, limits: Limits) {
        *self
            .limits
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = limits;
    }

    /// The bytes lent now.
    fn lend_bytes(&self) -> u64 {
        self.limits
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .lend_bytes
    }

    /// Indices (into `hashes`) of the chunks this store lacks, in order.
    /// The chunks it holds are referenced for `(owner.job, sequence)`, so
    /// that none is collected while the rest of the checkpoint is sent,
    /// and charged to the owner if the job did not reference them yet; the
    /// job's lease goes to `lease_until_ms` if that is later. All or
    /// nothing: a refusal (a quota) references nothing.
    pub fn missing(
        &self,
        owner: &Owner,
        sequence: u64,
        hashes: &[ChunkHash],
        lease_until_ms: u64,
    ) -> Result<Vec<u32>, Refusal> {
        check_owner(owner)?;
        check_hashes(hashes)?;
        let _write = self.lock();
        self.transaction(|tx| {
            let mut job = tx.job_for(owner, lease_until_ms)?;
            let mut missing = Vec::new();
            for (index, hash) in hashes.iter().enumerate() {
                if !tx.reference(owner, &mut job, sequence, hash, None, None)? {
                    // MAX_HASHES fits in a u32.
                    missing.push(index as u32);
                }
            }
            tx.set_job(&owner.job, &job)?;
            Ok(missing)
        })
    }

    /// Stores one chunk of checkpoint `(owner.job, sequence)`: its length
    /// must be at most [`MAX_CHUNK_LEN`] and its bytes must hash to `hash`;
    /// then a chunk not held yet must fit in the space lent, and a chunk
    /// the job does not reference yet within the owner's domain and user
    /// quotas. A chunk held already is only referenced. The job's lease
    /// goes to `lease_until_ms` if that is later. Atomic; not flushed
    /// (see [`ChunkStore::commit`]).
    pub fn put(
        &self,
        owner: &Owner,
        sequence: u64,
        hash: &ChunkHash,
        data: &[u8],
        lease_until_ms: u64,
    ) -> Result<(), Refusal> {
        if data.len() > MAX_CHUNK_LEN {
            return Err(Refusal::TooLarge { len: data.len() });
        }
        if blake3::hash(data).as_bytes() != hash {
            return Err(Refusal::BadHash);
        }
        check_owner(owner)?;
        let room = self.filesystem_room();
        let _write = self.lock();
        self.transaction(|tx| {
            let mut job = tx.job_for(owner, lease_until_ms)?;
            tx.reference(owner, &mut job, sequence, hash, Some(data), room)?;
            tx.set_job(&owner.job, &job)
        })
    }

    /// Records that checkpoint `(job, sequence)` is complete here: every
    /// one of `hashes` is held and referenced by it. Flushes to disk
    /// before `Ok`: this is the replica's acknowledgement. A refusal names
    /// the first chunk missing.
    pub fn commit(&self, job: &str, sequence: u64, hashes: &[ChunkHash]) -> Result<(), Refusal> {
        check_job(job).map_err(Refusal::Invalid)?;
        check_hashes(hashes)?;
        {
            let _write = self.lock();
            self.transaction(|tx| {
                let Some(mut record) = tx.job(job)? else {
                    return abort(Refusal::Unknown(format!(
                        "this store peer holds nothing for job {job:?}"
                    )));
                };
                for hash in hashes {
                    let present = tx.held(hash)?.is_some_and(|h| h.present);
                    if !present || tx.refs.get(ref_key(job, sequence, hash))?.is_none() {
                        return abort(Refusal::Unknown(format!(
                            "chunk {} of checkpoint {sequence} of job {job:?} is not held here",
                            hex(hash)
                        )));
                    }
                }
                if let Err(at) = record.committed.binary_search(&sequence) {
                    record.committed.insert(at, sequence);
                    if record.committed.len() > MAX_COMMITTED {
                        record.committed.remove(0);
                    }
                }
                tx.set_job(job, &record)
            })?;
        }
        self.flush().map_err(Refusal::Store)
    }

    /// The chunk's bytes, verified against `hash`; `None` if it is not
    /// held. A chunk whose bytes no longer hash to it (damage on disk) is
    /// dropped and reported as [`Error::Corrupt`], never returned.
    pub fn get(&self, hash: &ChunkHash) -> Result<Option<Vec<u8>>, Error> {
        match self.chunks.get(hash) {
            Ok(None) => {
                // sled drops a value whose page fails its own checksum when
                // it opens: the chunk's record says it is here, its bytes
                // are gone.
                let present = match self.held.get(hash).map_err(|e| self.io(e))? {
                    Some(value) => self.decode_held(hash, &value)?.present,
                    None => false,
                };
                if !present {
                    return Ok(None);
                }
                self.drop_damaged(hash)?;
                Err(Error::Corrupt {
                    path: self.path.clone(),
                    hash: hex(hash),
                })
            }
            Ok(Some(bytes)) if blake3::hash(&bytes).as_bytes() == hash => Ok(Some(bytes.to_vec())),
            Ok(Some(_)) | Err(sled::Error::Corruption { .. }) => {
                self.drop_damaged(hash)?;
                Err(Error::Corrupt {
                    path: self.path.clone(),
                    hash: hex(hash),
                })
            }
            Err(e) => Err(self.io(e)),
        }
    }

    /// Whether `job` references the chunk and the store holds its bytes:
    /// a peer may read only chunks of the jobs it names.
    pub fn holds(&self, job: &str, hash: &ChunkHash) -> Result<bool, Error> {
        check_job(job).map_err(|what| Error::Invalid { what })?;
        let key = job_chunk_key(job, hash);
        if self.job_chunks.get(key).map_err(|e| self.io(e))?.is_none() {
            return Ok(false);
        }
        match self.held.get(hash).map_err(|e| self.io(e))? {
            None => Ok(false),
            Some(value) => Ok(self.decode_held(hash, &value)?.present),
        }
    }

    /// Drops the job's references from every sequence older than `keep`
    /// (`None`: all of them, and the job's record): a newer checkpoint
    /// being sent meanwhile is kept; chunks no job references any
    /// more are deleted, and the owner is charged only for what the job
    /// still references. Returns the bytes freed. Not flushed: after a
    /// crash a release may have to be done again, never half of it.
    pub fn release(&self, job: &str, keep: Option<u64>) -> Result<u64, Error> {
        check_job(job).map_err(|what| Error::Invalid { what })?;
        let _write = self.lock();
        self.release_locked(job, keep).map(|(_, bytes)| bytes)
    }

    /// Extends the job's lease to `lease_until_ms` (unix ms) if that is
    /// later; `false` if the store holds nothing for the job.
    pub fn renew(&self, job: &str, lease_until_ms: u64) -> Result<bool, Error> {
        check_job(job).map_err(|what| Error::Invalid { what })?;
        let _write = self.lock();
        self.transaction(|tx| {
            let Some(mut record) = tx.job(job)? else {
                return Ok(false);
            };
            if lease_until_ms > record.lease_until_ms {
                record.lease_until_ms = lease_until_ms;
                tx.set_job(job, &record)?;
            }
            Ok(true)
        })
        .map_err(into_error)
    }

    /// Releases every job whose lease ended before `now_ms` (unix ms),
    /// whole: a submit agent that vanished leaks no disk.
    pub fn collect(&self, now_ms: u64) -> Result<Collected, Error> {
        let _write = self.lock();
        let mut expired = Vec::new();
        for item in self.jobs.iter() {
            let (key, value) = item.map_err(|e| self.io(e))?;
            let record = self.decode_job(&key, &value)?;
            if record.lease_until_ms < now_ms {
                expired.push(String::from_utf8_lossy(&key).into_owned());
            }
        }
        let mut collected = Collected::default();
        for job in expired {
            let (chunks, bytes) = self.release_locked(&job, None)?;
            collected.jobs += 1;
            collected.chunks += chunks;
            collected.bytes += bytes;
        }
        Ok(collected)
    }

    /// The store's figures.
    pub fn stats(&self) -> Result<Stats, Error> {
        let totals = self.totals()?;
        let mut per_domain = BTreeMap::new();
        for item in self.usage.iter() {
            let (key, value) = item.map_err(|e| self.io(e))?;
            if key.contains(&0) {
                continue;
            }
            let bytes = self.decode_count(USAGE, &key, &value)?;
            per_domain.insert(String::from_utf8_lossy(&key).into_owned(), bytes);
        }
        let lend_bytes = self.lend_bytes();
        let lent = lend_bytes.saturating_sub(totals.used);
        let free_bytes = match self.filesystem_room() {
            Some(room) => lent.min(room),
            None => lent,
        };
        Ok(Stats {
            lend_bytes,
            used_bytes: totals.used,
            free_bytes,
            chunks: totals.chunks,
            jobs: self.jobs.len() as u64,
            per_domain,
        })
    }

    /// Every job the store holds something for, by job key.
    pub fn jobs(&self) -> Result<Vec<(String, Holding)>, Error> {
        let mut out = Vec::new();
        for item in self.jobs.iter() {
            let (key, value) = item.map_err(|e| self.io(e))?;
            let record = self.decode_job(&key, &value)?;
            let job = String::from_utf8_lossy(&key).into_owned();
            let mut sequences = BTreeSet::new();
            for item in self.refs.scan_prefix(job_prefix(&job)).keys() {
                let key = item.map_err(|e| self.io(e))?;
                let (sequence, _) = self.parse_ref(&job, &key)?;
                sequences.insert(sequence);
            }
            out.push((
                job,
                Holding {
                    domain: record.domain,
                    user: record.user,
                    lease_until_ms: record.lease_until_ms,
                    sequences: sequences.into_iter().collect(),
                    committed: record.committed,
                    bytes: record.charged,
                },
            ));
        }
        Ok(out)
    }

    // ---- internals -------------------------------------------------------

    fn lock(&self) -> MutexGuard<'_, ()> {
        // The guard protects no data: a panic under it left nothing half
        // done (changes are transactions).
        self.write.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn flush(&self) -> Result<(), Error> {
        self.db.flush().map(drop).map_err(|e| self.io(e))
    }

    fn io(&self, e: sled::Error) -> Error {
        io(&self.path, e)
    }

    fn damaged(&self, what: impl Into<String>) -> Error {
        Error::Damaged {
            path: self.path.clone(),
            what: what.into(),
        }
    }

    fn check_schema(&self) -> Result<(), Error> {
        match self.meta.get(SCHEMA).map_err(|e| self.io(e))? {
            Some(bytes) => {
                let found = <[u8; 4]>::try_from(&bytes[..])
                    .map(u32::from_be_bytes)
                    .map_err(|_| self.damaged("meta/schema is not a version number"))?;
                if found > SCHEMA_VERSION {
                    return Err(Error::NewerSchema {
                        path: self.path.clone(),
                        found,
                        supported: SCHEMA_VERSION,
                    });
                }
                if found == 0 {
                    return Err(self.damaged("meta/schema is 0"));
                }
                self.totals().map(drop)
            }
            None => {
                for tree in [&self.chunks, &self.held, &self.refs, &self.jobs] {
                    if !tree.is_empty() {
                        return Err(self.damaged("it has records but no schema version"));
                    }
                }
                let mut batch = sled::Batch::default();
                batch.insert(TOTALS, seal(META, TOTALS, &encode(&Totals::default())));
                batch.insert(SCHEMA, &SCHEMA_VERSION.to_be_bytes()[..]);
                self.meta.apply_batch(batch).map_err(|e| self.io(e))?;
                self.flush()
            }
        }
    }

    fn totals(&self) -> Result<Totals, Error> {
        let value = self
            .meta
            .get(TOTALS)
            .map_err(|e| self.io(e))?
            .ok_or_else(|| self.damaged("meta/totals is missing"))?;
        let payload =
            unseal(META, TOTALS, &value).map_err(|e| self.damaged(format!("meta/totals: {e}")))?;
        decode(payload, MAX_RECORD_LEN, "chunk store totals")
            .map_err(|e| self.damaged(format!("meta/totals: {e}")))
    }

    fn decode_job(&self, key: &[u8], value: &[u8]) -> Result<JobRecord, Error> {
        decode_job(key, value).map_err(|what| self.damaged(what))
    }

    fn decode_held(&self, hash: &[u8], value: &[u8]) -> Result<HeldRecord, Error> {
        decode_held(hash, value).map_err(|what| self.damaged(what))
    }

    fn decode_count(&self, tree: &'static str, key: &[u8], value: &[u8]) -> Result<u64, Error> {
        decode_count(tree, key, value).map_err(|what| self.damaged(what))
    }

    /// The sequence and hash of a `refs` key of `job`.
    fn parse_ref(&self, job: &str, key: &[u8]) -> Result<(u64, ChunkHash), Error> {
        parse_ref(job, key).ok_or_else(|| self.damaged(format!("refs has a bad key {}", hex(key))))
    }

    /// Bytes the filesystem may still give the store, if it can be told.
    fn filesystem_room(&self) -> Option<u64> {
        let st = rustix::fs::statvfs(&self.path).ok()?;
        Some(
            st.f_bavail
                .saturating_mul(st.f_frsize)
                .saturating_sub(KEEP_FREE_BYTES),
        )
    }

    /// Runs `f` in one transaction over every tree.
    fn transaction<T>(&self, f: impl Fn(&Tx<'_>) -> TxResult<T>) -> Result<T, Refusal> {
        (
            &self.meta,
            &self.chunks,
            &self.held,
            &self.refs,
            &self.job_chunks,
            &self.jobs,
            &self.usage,
        )
            .transaction(|(meta, chunks, held, refs, job_chunks, jobs, usage)| {
                f(&Tx {
                    store: self,
                    meta,
                    chunks,
                    held,
                    refs,
                    job_chunks,
                    jobs,
                    usage,
                })
            })
            .map_err(|e| match e {
                TransactionError::Abort(refusal) => refusal,
                TransactionError::Storage(e) => Refusal::Store(self.io(e)),
            })
    }

    /// [`ChunkStore::release`] under the write lock: (chunks, bytes) freed.
    fn release_locked(&self, job: &str, keep: Option<u64>) -> Result<(u64, u64), Error> {
        let mut refs = Vec::new();
        for item in self.refs.scan_prefix(job_prefix(job)).keys() {
            let key = item.map_err(|e| self.io(e))?;
            let (sequence, hash) = self.parse_ref(job, &key)?;
            if keep.is_none_or(|keep| sequence < keep) {
                refs.push((key, hash));
            }
        }
        self.transaction(|tx| {
            let mut record = tx.job(job)?;
            let mut freed = (0, 0);
            for (key, hash) in &refs {
                if tx.refs.remove(key)?.is_none() {
                    continue;
                }
                let jkey = job_chunk_key(job, hash);
                let n = tx.count(tx.job_chunks, JOB_CHUNKS, &jkey)?;
                if n > 1 {
                    tx.set_count(tx.job_chunks, JOB_CHUNKS, &jkey, n - 1)?;
                    continue;
                }
                tx.job_chunks.remove(&jkey[..])?;
                let Some(mut held) = tx.held(hash)? else {
                    return abort(Refusal::Store(self.damaged(format!(
                        "chunk {} is referenced by job {job:?} but has no record in held",
                        hex(hash)
                    ))));
                };
                if let Some(record) = &mut record {
                    tx.uncharge(&record.domain, &record.user, held.len)?;
                    record.charged = record.charged.saturating_sub(held.len);
                }
                held.jobs = held.jobs.saturating_sub(1);
                if held.jobs > 0 {
                    tx.set_held(hash, &held)?;
                    continue;
                }
                tx.held.remove(&hash[..])?;
                if held.present {
                    tx.chunks.remove(&hash[..])?;
                    let mut totals = tx.totals()?;
                    totals.used = totals.used.saturating_sub(held.len);
                    totals.chunks = totals.chunks.saturating_sub(1);
                    tx.set_totals(&totals)?;
                    freed.0 += 1;
                    freed.1 += held.len;
                }
            }
            match (record, keep) {
                (Some(_), None) => {
                    tx.jobs.remove(job.as_bytes())?;
                }
                (Some(mut record), Some(keep)) => {
                    record.committed.retain(|&s| s >= keep);
                    tx.set_job(job, &record)?;
                }
                (None, _) => {}
            }
            Ok(freed)
        })
        .map_err(into_error)
    }

    /// Drops a chunk found damaged: its bytes, and its presence in the
    /// counts. The references stay (their jobs are still charged), so the
    /// chunk can be sent again.
    fn drop_damaged(&self, hash: &ChunkHash) -> Result<(), Error> {
        let _write = self.lock();
        let mark = |tx: &Tx<'_>, remove_bytes: bool| -> TxResult<()> {
            if remove_bytes {
                tx.chunks.remove(&hash[..])?;
            }
            if let Some(mut held) = tx.held(hash)? {
                if held.present {
                    held.present = false;
                    tx.set_held(hash, &held)?;
                    let mut totals = tx.totals()?;
                    totals.used = totals.used.saturating_sub(held.len);
                    totals.chunks = totals.chunks.saturating_sub(1);
                    tx.set_totals(&totals)?;
                }
            }
            Ok(())
        };
        // Removing reads the old value; if sled cannot read it, the chunk
        // is only marked absent.
        if self.transaction(|tx| mark(tx, true)).is_err() {
            self.transaction(|tx| mark(tx, false)).map_err(into_error)?;
        }
        self.flush()
    }
}

/// One transaction's views of the trees.
struct Tx<'a> {
    store: &'a ChunkStore,
    meta: &'a TransactionalTree,
    chunks: &'a TransactionalTree,
    held: &'a TransactionalTree,
    refs: &'a TransactionalTree,
    job_chunks: &'a TransactionalTree,
    jobs: &'a TransactionalTree,
    usage: &'a TransactionalTree,
}

impl Tx<'_> {
    fn damaged<T>(&self, what: String) -> TxResult<T> {
        abort(Refusal::Store(self.store.damaged(what)))
    }

    fn job(&self, job: &str) -> TxResult<Option<JobRecord>> {
        match self.jobs.get(job.as_bytes())? {
            None => Ok(None),
            Some(value) => decode_job(job.as_bytes(), &value)
                .map(Some)
                .or_else(|what| self.damaged(what)),
        }
    }

    fn set_job(&self, job: &str, record: &JobRecord) -> TxResult<()> {
        let key = job.as_bytes();
        self.jobs.insert(key, seal(JOBS, key, &encode(record)))?;
        Ok(())
    }

    /// The job's record, made for `owner` if there is none, with its lease
    /// moved to `lease_until_ms` if that is later. A job held for another
    /// owner is refused.
    fn job_for(&self, owner: &Owner, lease_until_ms: u64) -> TxResult<JobRecord> {
        let mut record = match self.job(&owner.job)? {
            Some(record) => {
                if record.domain != owner.domain || record.user != owner.user {
                    return abort(Refusal::Invalid(format!(
                        "job {:?} is held here for {}@{}, not {}@{}",
                        owner.job, record.user, record.domain, owner.user, owner.domain
                    )));
                }
                record
            }
            None => JobRecord {
                domain: owner.domain.clone(),
                user: owner.user.clone(),
                lease_until_ms,
                charged: 0,
                committed: Vec::new(),
            },
        };
        record.lease_until_ms = record.lease_until_ms.max(lease_until_ms);
        Ok(record)
    }

    fn held(&self, hash: &ChunkHash) -> TxResult<Option<HeldRecord>> {
        match self.held.get(hash)? {
            None => Ok(None),
            Some(value) => decode_held(hash, &value)
                .map(Some)
                .or_else(|what| self.damaged(what)),
        }
    }

    fn set_held(&self, hash: &ChunkHash, record: &HeldRecord) -> TxResult<()> {
        self.held
            .insert(&hash[..], seal(HELD, hash, &encode(record)))?;
        Ok(())
    }

    fn totals(&self) -> TxResult<Totals> {
        let Some(value) = self.meta.get(TOTALS)? else {
            return self.damaged("meta/totals is missing".to_owned());
        };
        let decoded = unseal(META, TOTALS, &value)
            .map_err(|e| e.to_string())
            .and_then(|payload| {
                decode(payload, MAX_RECORD_LEN, "chunk store totals").map_err(|e| e.to_string())
            });
        decoded.or_else(|e| self.damaged(format!("meta/totals: {e}")))
    }

    fn set_totals(&self, totals: &Totals) -> TxResult<()> {
        self.meta
            .insert(TOTALS, seal(META, TOTALS, &encode(totals)))?;
        Ok(())
    }

    /// A counter (`usage`, `job_chunks`); 0 when absent.
    fn count(&self, tree: &TransactionalTree, name: &'static str, key: &[u8]) -> TxResult<u64> {
        match tree.get(key)? {
            None => Ok(0),
            Some(value) => decode_count(name, key, &value).or_else(|what| self.damaged(what)),
        }
    }

    /// Sets a counter; 0 removes it.
    fn set_count(
        &self,
        tree: &TransactionalTree,
        name: &'static str,
        key: &[u8],
        n: u64,
    ) -> TxResult<()> {
        if n == 0 {
            tree.remove(key)?;
        } else {
            tree.insert(key, seal(name, key, &n.to_be_bytes()))?;
        }
        Ok(())
    }

    /// Charges `len` logical bytes to the owner's domain and user, within
    /// their quotas.
    fn charge(&self, owner: &Owner, len: u64) -> TxResult<()> {
        let limits = self.store.limits();
        let domain_key = owner.domain.as_bytes();
        let used = self.count(self.usage, USAGE, domain_key)?;
        if let Some(limit) = limits.domain_limit(&owner.domain) {
            if used.saturating_add(len) > limit {
                return abort(Refusal::DomainQuota {
                    domain: owner.domain.clone(),
                    used,
                    limit,
                });
            }
        }
        let user_key = user_key(&owner.domain, &owner.user);
        let user_used = self.count(self.usage, USAGE, &user_key)?;
        if let Some(limit) = limits.per_user {
            if user_used.saturating_add(len) > limit {
                return abort(Refusal::UserQuota {
                    domain: owner.domain.clone(),
                    user: owner.user.clone(),
                    used: user_used,
                    limit,
                });
            }
        }
        self.set_count(self.usage, USAGE, domain_key, used.saturating_add(len))?;
        self.set_count(self.usage, USAGE, &user_key, user_used.saturating_add(len))
    }

    fn uncharge(&self, domain: &str, user: &str, len: u64) -> TxResult<()> {
        let domain_key = domain.as_bytes();
        let used = self.count(self.usage, USAGE, domain_key)?;
        self.set_count(self.usage, USAGE, domain_key, used.saturating_sub(len))?;
        let user_key = user_key(domain, user);
        let used = self.count(self.usage, USAGE, &user_key)?;
        self.set_count(self.usage, USAGE, &user_key, used.saturating_sub(len))
    }

    /// References chunk `hash` for `(owner.job, sequence)`, storing `data`
    /// if the chunk is not held and `data` is given (`room`: what the
    /// filesystem may still give). `false` when the chunk is not held and
    /// no data was given.
    fn reference(
        &self,
        owner: &Owner,
        job: &mut JobRecord,
        sequence: u64,
        hash: &ChunkHash,
        data: Option<&[u8]>,
        room: Option<u64>,
    ) -> TxResult<bool> {
        let mut held = self.held(hash)?;
        let mut changed = false;
        if !held.as_ref().is_some_and(|h| h.present) {
            let Some(data) = data else {
                return Ok(false);
            };
            let len = data.len() as u64;
            let mut totals = self.totals()?;
            let lent = self.store.lend_bytes().saturating_sub(totals.used);
            let free = room.map_or(lent, |room| lent.min(room));
            if len > free {
                return abort(Refusal::NoSpace { needed: len, free });
            }
            self.chunks.insert(&hash[..], data)?;
            totals.used += len;
            totals.chunks += 1;
            self.set_totals(&totals)?;
            let record = held.get_or_insert(HeldRecord {
                len,
                jobs: 0,
                present: true,
            });
            record.present = true;
            record.len = len;
            changed = true;
        }
        // Present now, or returned above.
        let Some(mut held) = held else {
            return Ok(false);
        };
        let key = ref_key(&owner.job, sequence, hash);
        if self.refs.get(&key[..])?.is_none() {
            let jkey = job_chunk_key(&owner.job, hash);
            let n = self.count(self.job_chunks, JOB_CHUNKS, &jkey)?;
            if n == 0 {
                self.charge(owner, held.len)?;
                job.charged = job.charged.saturating_add(held.len);
                held.jobs += 1;
                changed = true;
            }
            self.set_count(self.job_chunks, JOB_CHUNKS, &jkey, n + 1)?;
            self.refs.insert(&key[..], seal(REFS, &key, &[]))?;
        }
        if changed {
            self.set_held(hash, &held)?;
        }
        Ok(true)
    }
}

fn into_error(refusal: Refusal) -> Error {
    match refusal {
        Refusal::Store(e) => e,
        // Calls that refuse nothing only abort with store errors.
        other => Error::Invalid {
            what: other.to_string(),
        },
    }
}

fn io(path: &Path, e: sled::Error) -> Error {
    match e {
        sled::Error::Corruption { .. } => Error::Damaged {
            path: path.to_path_buf(),
            what: "sled found a damaged page".to_owned(),
        },
        e => Error::Io {
            path: path.to_path_buf(),
            source: Box::new(e),
        },
    }
}

fn open_db(path: &Path) -> Result<sled::Db, Error> {
    let started = Instant::now();
    loop {
        // sled may panic on some damaged files rather than return an error.
        let opened = catch_unwind(AssertUnwindSafe(|| {
            sled::Config::new()
                .path(path)
                .cache_capacity(64 << 20)
                .flush_every_ms(Some(crate::sled_store::BACKGROUND_FLUSH_MS))
                .open()
        }))
        .map_err(|_| Error::Damaged {
            path: path.to_path_buf(),
            what: "sled cannot read its files".to_owned(),
        })?;
        match opened {
            Ok(db) => return Ok(db),
            Err(sled::Error::Io(e)) if e.to_string().contains("could not acquire lock") => {
                if started.elapsed() >= LOCK_WAIT {
                    return Err(Error::Locked {
                        path: path.to_path_buf(),
                        source: Box::new(e),
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(io(path, e)),
        }
    }
}

fn check_name(what: &str, name: &str, max: usize) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("the {what} is empty"));
    }
    if name.len() > max {
        return Err(format!(
            "the {what} is {} bytes, more than the limit of {max}",
            name.len()
        ));
    }
    if name.contains('\0') {
        return Err(format!("the {what} {name:?} holds a NUL byte"));
    }
    Ok(())
}

fn check_job(job: &str) -> Result<(), String> {
    check_name("job key", job, MAX_JOB_KEY_LEN)
}

fn check_owner(owner: &Owner) -> Result<(), Refusal> {
    check_job(&owner.job)
        .and_then(|()| check_name("domain name", &owner.domain, MAX_NAME_LEN))
        .and_then(|()| check_name("user name", &owner.user, MAX_NAME_LEN))
        .map_err(Refusal::Invalid)
}

fn check_hashes(hashes: &[ChunkHash]) -> Result<(), Refusal> {
    if hashes.len() > MAX_HASHES {
        return Err(Refusal::Invalid(format!(
            "{} chunks in one call, more than the limit of {MAX_HASHES}",
            hashes.len()
        )));
    }
    Ok(())
}

fn job_prefix(job: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(job.len() + 1);
    key.extend_from_slice(job.as_bytes());
    key.push(0);
    key
}

fn ref_key(job: &str, sequence: u64, hash: &ChunkHash) -> Vec<u8> {
    let mut key = job_prefix(job);
    key.extend_from_slice(&sequence.to_be_bytes());
    key.push(0);
    key.extend_from_slice(hash);
    key
}

fn parse_ref(job: &str, key: &[u8]) -> Option<(u64, ChunkHash)> {
    let rest = key.strip_prefix(job.as_bytes())?.strip_prefix(&[0])?;
    if rest.len() != 8 + 1 + 32 || rest[8] != 0 {
        return None;
    }
    let sequence = u64::from_be_bytes(rest[..8].try_into().ok()?);
    let hash = rest[9..].try_into().ok()?;
    Some((sequence, hash))
}

fn job_chunk_key(job: &str, hash: &ChunkHash) -> Vec<u8> {
    let mut key = job_prefix(job);
    key.extend_from_slice(hash);
    key
}

fn user_key(domain: &str, user: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(domain.len() + 1 + user.len());
    key.extend_from_slice(domain.as_bytes());
    key.push(0);
    key.extend_from_slice(user.as_bytes());
    key
}

/// A record's name in messages: `jobs/"1.0@agent"`, `held/<hash>`.
fn describe(tree: &str, key: &[u8]) -> String {
    match tree {
        JOBS | USAGE => format!("{tree}/{:?}", String::from_utf8_lossy(key)),
        _ => format!("{tree}/{}", hex(key)),
    }
}

fn decode_job(key: &[u8], value: &[u8]) -> Result<JobRecord, String> {
    let payload = unseal(JOBS, key, value).map_err(|e| format!("{}: {e}", describe(JOBS, key)))?;
    decode(payload, MAX_RECORD_LEN, "job record")
        .map_err(|e| format!("{} does not decode: {e}", describe(JOBS, key)))
}

fn decode_held(hash: &[u8], value: &[u8]) -> Result<HeldRecord, String> {
    let payload =
        unseal(HELD, hash, value).map_err(|e| format!("{}: {e}", describe(HELD, hash)))?;
    decode(payload, MAX_RECORD_LEN, "chunk record")
        .map_err(|e| format!("{} does not decode: {e}", describe(HELD, hash)))
}

fn decode_count(tree: &'static str, key: &[u8], value: &[u8]) -> Result<u64, String> {
    let payload = unseal(tree, key, value).map_err(|e| format!("{}: {e}", describe(tree, key)))?;
    <[u8; 8]>::try_from(payload)
        .map(u64::from_be_bytes)
        .map_err(|_| format!("{} is not a count", describe(tree, key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_keys_parse_back_and_bad_ones_are_refused() {
        let hash = [7; 32];
        let key = ref_key("1.0@a", 42, &hash);
        assert_eq!(parse_ref("1.0@a", &key), Some((42, hash)));
        assert_eq!(parse_ref("1.0@b", &key), None);
        assert_eq!(parse_ref("1.0@a", &key[..key.len() - 1]), None);
        assert_eq!(parse_ref("1.0", &key), None);
    }

    #[test]
    fn damaged_records_are_errors_naming_them() {
        let err = decode_job(b"j", b"\x01garbage").unwrap_err();
        assert!(err.starts_with("jobs/\"j\""), "{err}");
        let err = decode_count(USAGE, b"d", &seal(USAGE, b"d", b"abc")).unwrap_err();
        assert_eq!(err, "usage/\"d\" is not a count");
        let err = decode_held(&[1; 32], &seal(HELD, &[1; 32], b"\xff")).unwrap_err();
        assert!(err.contains("does not decode"), "{err}");
    }
}
