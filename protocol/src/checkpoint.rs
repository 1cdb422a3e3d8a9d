//! Checkpoints on the wire: the signed [`Manifest`] an execute agent makes
//! of a job's checkpoint, and the store protocol, `/starling/store/1`, by
//! which agents keep a checkpoint's chunks on store peers.
//!
//! ```text
//! execute agent                                   store peer (role `store`)
//!   Request::Missing {job, sequence, hashes} ──▶  refs what it holds
//!        ◀── Response::Missing {indices}
//!   Request::Put {job, sequence, hash, data} ──▶  checks hash, room, quota
//!        ◀── Response::Stored, or Error {code, reason}
//!   Request::Commit {job, sequence, hashes} ──▶   all held? flush
//!        ◀── Response::Committed
//! (then the signed manifest goes to the submit agent: transfer::Request::Checkpoint)
//!
//! submit agent                                    store peer
//!   Request::Renew {jobs, lease_secs} ──▶         (every few minutes)
//!   Request::Release {job, keep} ──▶              (an older checkpoint, or the job left)
//! any agent restoring the job
//!   Request::Get {job, hash} ──▶                  ◀── Response::Chunk {data}
//! ```
//!
//! A checkpoint is its files cut into chunks of [`CHUNK_LEN`] bytes (the
//! last of each file shorter), each named by its blake3 hash; a store peer
//! keeps each chunk once, however many checkpoints name it, so a checkpoint
//! that changed a few chunks sends only those ([`Request::Missing`] says
//! which). Every chunk is checked against its hash by whoever receives it.
//! The owner of a job's chunks is the submit agent named in its
//! [`JobKey`]: only it renews and releases them, and chunks whose lease
//! was not renewed are dropped by the store peer.

use std::collections::HashSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::files::{FileName, Hash, MAX_CHUNK_LEN, MAX_FILES, MODE_MASK};
use crate::identity::{AgentId, Envelope, Freshness, Keypair, Kind, Timestamp};
use crate::wire::{self, code_enum, Error, Message, Protocol};

/// Length of every chunk but the last of a file (1 MiB).
pub const CHUNK_LEN: u32 = MAX_CHUNK_LEN;

/// Most chunks one checkpoint may have (64 GiB of files).
pub const MAX_CHUNKS: usize = 65_536;

/// Most replicas a manifest names.
pub const MAX_REPLICAS: usize = 8;

/// Longest job key, in bytes.
pub const MAX_JOB_KEY_LEN: usize = 200;

/// Longest peer id or machine name in a replica, in bytes.
pub const MAX_PEER_LEN: usize = 128;

/// Most jobs one renewal names.
pub const MAX_RENEW_JOBS: usize = 4096;

/// The shortest and longest lease a store peer grants (a minute, 30 days).
pub const MIN_LEASE_SECS: u32 = 60;
pub const MAX_LEASE_SECS: u32 = 30 * 24 * 3600;

/// Largest store request: a full chunk, or a hash list of [`MAX_CHUNKS`].
pub const MAX_STORE_REQUEST_LEN: usize = 4 << 20;

/// Largest store response: a full chunk and a little around it.
pub const MAX_STORE_RESPONSE_LEN: usize = MAX_CHUNK_LEN as usize + 4096;

/// Largest manifest body (a 64 GiB checkpoint's chunk list fits).
pub const MAX_MANIFEST_LEN: usize = 1 << 22;

/// How long a manifest's signature is valid: a year, longer than any job
/// is expected to wait between two checkpoints.
pub const MANIFEST_VALIDITY_MS: u64 = 366 * 24 * 3600 * 1000;

/// Names a job across the pool: its submit agent and its id there
/// (`<agent id>/<cluster>.<proc>`). The submit agent is the owner of the
/// job's checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct JobKey(String);

impl JobKey {
    pub fn new(submitter: &AgentId, cluster: u64, proc: u32) -> JobKey {
        JobKey(format!("{submitter}/{cluster}.{proc}"))
    }

    /// Reads a key given as text, checking its shape.
    pub fn parse(text: &str) -> Result<JobKey, Error> {
        let bad = |reason: &str| Error::Invalid {
            field: "job key",
            reason: format!("{:?} {reason}", shown(text)),
        };
        if text.len() > MAX_JOB_KEY_LEN {
            return Err(bad(&format!(
                "is {} bytes, more than the limit of {MAX_JOB_KEY_LEN}",
                text.len()
            )));
        }
        let Some((agent, id)) = text.split_once('/') else {
            return Err(bad("is not <agent id>/<cluster>.<proc>"));
        };
        if agent.parse::<AgentId>().is_err() {
            return Err(bad("does not start with an agent id"));
        }
        let Some((cluster, proc)) = id.split_once('.') else {
            return Err(bad("has no <cluster>.<proc>"));
        };
        if cluster.parse::<u64>().is_err() || proc.parse::<u32>().is_err() {
            return Err(bad("has no <cluster>.<proc>"));
        }
        Ok(JobKey(text.to_owned()))
    }

    /// The submit agent that owns the job.
    pub fn submitter(&self) -> Option<AgentId> {
        self.0.split_once('/')?.0.parse().ok()
    }

    /// The job's `cluster.proc` on its submit agent.
    pub fn local_id(&self) -> Option<(u64, u32)> {
        let (cluster, proc) = self.0.split_once('/')?.1.split_once('.')?;
        Some((cluster.parse().ok()?, proc.parse().ok()?))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for JobKey {
    type Error = Error;
    fn try_from(text: String) -> Result<Self, Error> {
        Self::parse(&text)
    }
}

impl From<JobKey> for String {
    fn from(key: JobKey) -> String {
        key.0
    }
}

/// At most 100 characters of a text, for error messages.
fn shown(text: &str) -> &str {
    text.char_indices()
        .nth(100)
        .map_or(text, |(i, _)| &text[..i])
}

/// One file of a checkpoint. Its chunks are the next
/// `size.div_ceil(CHUNK_LEN)` entries of [`Manifest::chunks`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Where it goes, relative to the sandbox.
    pub name: FileName,
    /// Unix permission bits, within [`MODE_MASK`].
    pub mode: u32,
    /// Length in bytes.
    pub size: u64,
}

impl ManifestFile {
    /// How many chunks the file takes (none for an empty file).
    pub fn chunk_count(&self) -> u64 {
        self.size.div_ceil(u64::from(CHUNK_LEN))
    }

    /// The length of the file's chunk number `index`.
    pub fn chunk_len(&self, index: u64) -> u32 {
        let start = index.saturating_mul(u64::from(CHUNK_LEN));
        let len = self.size.saturating_sub(start).min(u64::from(CHUNK_LEN));
        u32::try_from(len).unwrap_or(CHUNK_LEN)
    }
}

/// A store peer holding a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Replica {
    /// Its libp2p peer id, as text.
    pub peer: String,
    /// Its machine (`Machine` of its ad), so that two replicas are never
    /// on one machine.
    pub machine: String,
}

impl Replica {
    pub(crate) fn check(&self) -> Result<(), Error> {
        for (field, text) in [
            ("replica peer", &self.peer),
            ("replica machine", &self.machine),
        ] {
            if text.is_empty() || text.len() > MAX_PEER_LEN {
                return Err(Error::Invalid {
                    field,
                    reason: format!("{} bytes; 1 to {MAX_PEER_LEN} expected", text.len()),
                });
            }
        }
        Ok(())
    }
}

/// What a checkpoint holds and where, signed ([`Kind::MANIFEST`]) by the
/// execute agent that took it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Manifest {
    pub job: JobKey,
    /// The job's checkpoint number: each is one more than the last the
    /// submit agent recorded.
    pub sequence: u64,
    /// When it was taken.
    pub taken_at: Timestamp,
    /// Wall time the job ran on this execute agent up to this checkpoint,
    /// since it started or restored there, in milliseconds: the work the
    /// checkpoint saves that the previous one did not.
    pub run_ms: u64,
    /// The files, in order.
    pub files: Vec<ManifestFile>,
    /// Every file's chunks, file after file.
    pub chunks: Vec<Hash>,
    /// The store peers that flushed every chunk.
    pub replicas: Vec<Replica>,
}

impl Manifest {
    pub fn new(
        job: JobKey,
        sequence: u64,
        taken_at: Timestamp,
        run_ms: u64,
        files: Vec<ManifestFile>,
        chunks: Vec<Hash>,
        replicas: Vec<Replica>,
    ) -> Result<Manifest, Error> {
        let manifest = Manifest {
            job,
            sequence,
            taken_at,
            run_ms,
            files,
            chunks,
            replicas,
        };
        manifest.check()?;
        Ok(manifest)
    }

    /// The manifest's own rules: counts, file names and modes, and that
    /// the chunk list is exactly the files' chunks.
    pub fn check(&self) -> Result<(), Error> {
        wire::check_count("checkpoint file list", &self.files, MAX_FILES)?;
        wire::check_count("checkpoint chunk list", &self.chunks, MAX_CHUNKS)?;
        wire::check_count("replica list", &self.replicas, MAX_REPLICAS)?;
        let mut names = HashSet::with_capacity(self.files.len());
        let mut count = 0u64;
        for file in &self.files {
            if file.mode & !MODE_MASK != 0 {
                return Err(Error::Invalid {
                    field: "checkpoint file mode",
                    reason: format!(
                        "{:?} has mode {:o}; only permission bits {MODE_MASK:o} are allowed",
                        shown(file.name.as_str()),
                        file.mode
                    ),
                });
            }
            if !names.insert(file.name.as_str()) {
                return Err(Error::Invalid {
                    field: "checkpoint file list",
                    reason: format!("{:?} is listed twice", shown(file.name.as_str())),
                });
            }
            count = count.saturating_add(file.chunk_count());
        }
        if count != self.chunks.len() as u64 {
            return Err(Error::Invalid {
                field: "checkpoint chunk list",
                reason: format!(
                    "the files take {count} chunks but {} are listed",
                    self.chunks.len()
                ),
            });
        }
        let mut machines = HashSet::with_capacity(self.replicas.len());
        for replica in &self.replicas {
            replica.check()?;
            if !machines.insert(replica.machine.as_str()) {
                return Err(Error::Invalid {
                    field: "replica list",
                    reason: format!("two replicas on machine {:?}", shown(&replica.machine)),
                });
            }
        }
        Ok(())
    }

    /// Bytes of all files together.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Each file with its chunks: (file, its hashes, the length of each).
    pub fn file_chunks(&self) -> impl Iterator<Item = (&ManifestFile, &[Hash])> {
        let mut at = 0usize;
        self.files.iter().map(move |file| {
            let count = usize::try_from(file.chunk_count()).unwrap_or(usize::MAX);
            let end = at.saturating_add(count).min(self.chunks.len());
            let hashes = &self.chunks[at..end];
            at = end;
            (file, hashes)
        })
    }

    /// Every distinct chunk with its length, in first-use order.
    pub fn distinct_chunks(&self) -> Vec<(Hash, u32)> {
        let mut seen = HashSet::with_capacity(self.chunks.len());
        let mut out = Vec::with_capacity(self.chunks.len());
        for (file, hashes) in self.file_chunks() {
            for (i, hash) in hashes.iter().enumerate() {
                if seen.insert(*hash) {
                    out.push((*hash, file.chunk_len(i as u64)));
                }
            }
        }
        out
    }

    /// Signs the manifest with the execute agent's key.
    pub fn sign(&self, key: &Keypair, now: Timestamp) -> Result<Envelope, Error> {
        self.check()?;
        let body = crate::cbor::encode(self);
        if body.len() > MAX_MANIFEST_LEN {
            return Err(Error::TooLarge {
                what: "checkpoint manifest",
                size: body.len(),
                limit: MAX_MANIFEST_LEN,
            });
        }
        Ok(Envelope::seal(
            key,
            self.sequence,
            now,
            now.saturating_add_millis(MANIFEST_VALIDITY_MS),
            Kind::MANIFEST,
            body,
        ))
    }

    /// Checks a signed manifest (kind, window, signature, rules) and reads
    /// it. Who may have signed it is the caller's to check.
    pub fn open(envelope: &Envelope, now: Timestamp) -> Result<Manifest, Error> {
        let opened = envelope.open_kind(Kind::MANIFEST, now, &Freshness::default())?;
        let manifest: Manifest = opened.decode_body(MAX_MANIFEST_LEN, "checkpoint manifest")?;
        manifest.check()?;
        Ok(manifest)
    }
}

/// Who a job's chunks are charged to on a store peer: the domain and user
/// the job belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub domain: String,
    pub user: String,
}

/// Longest owner domain or user name, in bytes.
pub const MAX_OWNER_LEN: usize = 128;

impl Owner {
    fn check(&self) -> Result<(), Error> {
        for (field, text) in [("owner domain", &self.domain), ("owner user", &self.user)] {
            if text.is_empty() || text.len() > MAX_OWNER_LEN {
                return Err(Error::Invalid {
                    field,
                    reason: format!("{} bytes; 1 to {MAX_OWNER_LEN} expected", text.len()),
                });
            }
        }
        Ok(())
    }
}

/// A store request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Request {
    /// Which of these chunks of checkpoint `sequence` the store lacks; the
    /// ones it holds are kept for the checkpoint from now on.
    Missing {
        job: JobKey,
        owner: Owner,
        sequence: u64,
        hashes: Vec<Hash>,
        lease_secs: u32,
    },
    /// Keep this chunk for checkpoint `sequence`.
    Put {
        job: JobKey,
        owner: Owner,
        sequence: u64,
        hash: Hash,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
        lease_secs: u32,
    },
    /// Checkpoint `sequence` is whole: check every chunk is held and flush.
    Commit {
        job: JobKey,
        sequence: u64,
        hashes: Vec<Hash>,
    },
    /// Send a chunk of the job's.
    Get { job: JobKey, hash: Hash },
    /// Keep these jobs' chunks `lease_secs` longer (the owner only).
    Renew { jobs: Vec<JobKey>, lease_secs: u32 },
    /// Drop the job's chunks of checkpoints older than `keep`, or all of
    /// them (`None`) (the owner only). A newer checkpoint that is being
    /// sent meanwhile stays.
    Release { job: JobKey, keep: Option<u64> },
}

impl Request {
    /// The job the request is about, when it names one.
    pub fn job(&self) -> Option<&JobKey> {
        match self {
            Request::Missing { job, .. }
            | Request::Put { job, .. }
            | Request::Commit { job, .. }
            | Request::Get { job, .. }
            | Request::Release { job, .. } => Some(job),
            Request::Renew { .. } => None,
        }
    }
}

code_enum! {
    /// Why a store request failed.
    pub enum ErrorCode {
        /// This agent keeps no checkpoints (no `store` role, or lends no disk).
        NotStore = 1 => "not a store peer",
        /// The asking agent or the job's domain may not store here.
        Refused = 2 => "refused",
        /// The store's lent space is used up.
        NoSpace = 3 => "no space",
        /// The job's domain or user used its quota.
        Quota = 4 => "quota exceeded",
        /// The data does not hash to the chunk's name.
        BadHash = 5 => "bad hash",
        /// The chunk is larger than a chunk may be.
        TooLarge = 6 => "too large",
        /// The store holds no such chunk for the job.
        NoSuchChunk = 7 => "no such chunk",
        /// The chunk is damaged on the store's disk (it was dropped).
        Corrupt = 8 => "corrupt chunk",
        /// Only the job's submit agent may do this.
        NotOwner = 9 => "not the owner",
        /// The request was malformed.
        BadRequest = 10 => "bad request",
        /// Too much at once; retry later.
        Busy = 11 => "busy",
        /// A chunk of the checkpoint was never sent.
        Incomplete = 12 => "incomplete",
        /// The store failed to read or write its disk.
        Failed = 13 => "store failed",
    }
}

/// The answer to a store [`Request`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Response {
    /// Indices into the request's hashes of the chunks the store lacks.
    Missing {
        indices: Vec<u32>,
    },
    Stored,
    Committed,
    Chunk {
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    /// Indices of the jobs the store holds nothing for.
    Renewed {
        unknown: Vec<u32>,
    },
    Released {
        freed: u64,
    },
    Error {
        code: ErrorCode,
        reason: String,
    },
}

fn check_lease(lease_secs: u32) -> Result<(), Error> {
    if !(MIN_LEASE_SECS..=MAX_LEASE_SECS).contains(&lease_secs) {
        return Err(Error::Invalid {
            field: "lease",
            reason: format!("{lease_secs} s is not between {MIN_LEASE_SECS} and {MAX_LEASE_SECS}"),
        });
    }
    Ok(())
}

impl Message for Request {
    const PROTOCOL: Protocol = Protocol::Store;
    const NAME: &'static str = "store request";
    const MAX_LEN: usize = MAX_STORE_REQUEST_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Request::Missing {
                owner,
                hashes,
                lease_secs,
                ..
            } => {
                owner.check()?;
                check_lease(*lease_secs)?;
                wire::check_count("hash list", hashes, MAX_CHUNKS)
            }
            Request::Put {
                owner,
                data,
                lease_secs,
                ..
            } => {
                owner.check()?;
                check_lease(*lease_secs)?;
                if data.len() > CHUNK_LEN as usize {
                    return Err(Error::TooLarge {
                        what: "chunk",
                        size: data.len(),
                        limit: CHUNK_LEN as usize,
                    });
                }
                Ok(())
            }
            Request::Commit { hashes, .. } => wire::check_count("hash list", hashes, MAX_CHUNKS),
            Request::Renew { jobs, lease_secs } => {
                check_lease(*lease_secs)?;
                wire::check_count("job list", jobs, MAX_RENEW_JOBS)
            }
            Request::Get { .. } | Request::Release { .. } => Ok(()),
        }
    }
}

impl Message for Response {
    const PROTOCOL: Protocol = Protocol::Store;
    const NAME: &'static str = "store response";
    const MAX_LEN: usize = MAX_STORE_RESPONSE_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Response::Chunk { data } if data.len() > CHUNK_LEN as usize => Err(Error::TooLarge {
                what: "chunk",
                size: data.len(),
                limit: CHUNK_LEN as usize,
            }),
            Response::Missing { indices } => wire::check_count("index list", indices, MAX_CHUNKS),
            Response::Renewed { unknown } => {
                wire::check_count("index list", unknown, MAX_RENEW_JOBS)
            }
            Response::Error { reason, .. } => {
                wire::check_text("reason", reason, wire::MAX_REASON_LEN)
            }
            _ => Ok(()),
        }
    }
}

/// Cuts `data` (one file's bytes) into chunk hashes, as a manifest lists
/// them.
pub fn chunk_hashes(data: &[u8]) -> Vec<Hash> {
    data.chunks(CHUNK_LEN as usize)
        .map(|c| Hash::from_bytes(*blake3::hash(c).as_bytes()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> JobKey {
        let agent = Keypair::generate().unwrap().public();
        JobKey::new(&AgentId::from_public_key(agent), 12, 3)
    }

    fn file(name: &str, size: u64) -> ManifestFile {
        ManifestFile {
            name: FileName::new(name).unwrap(),
            mode: 0o644,
            size,
        }
    }

    fn replica(peer: &str, machine: &str) -> Replica {
        Replica {
            peer: peer.to_owned(),
            machine: machine.to_owned(),
        }
    }

    #[test]
    fn job_keys_name_their_submitter_and_refuse_other_text() {
        let key = key();
        assert_eq!(key.local_id(), Some((12, 3)));
        assert!(key.submitter().is_some());
        assert_eq!(JobKey::parse(key.as_str()).unwrap(), key);
        for bad in ["", "x/1.2", "nokey", &format!("{}/1", key.as_str())] {
            assert!(JobKey::parse(bad).is_err(), "{bad:?}");
        }
        let long = format!("{}/{}", key.as_str(), "9".repeat(300));
        assert!(JobKey::parse(&long)
            .unwrap_err()
            .to_string()
            .contains("more than the limit of 200"));
    }

    #[test]
    fn a_manifest_lists_exactly_its_files_chunks() {
        let chunk = Hash::from_bytes([1; 32]);
        let big = u64::from(CHUNK_LEN) * 2 + 5;
        let m = Manifest::new(
            key(),
            1,
            Timestamp::from_unix_secs(1),
            10,
            vec![file("a", big), file("empty", 0), file("b", 1)],
            vec![chunk; 4],
            vec![replica("p1", "m1"), replica("p2", "m2")],
        )
        .unwrap();
        assert_eq!(m.size(), big + 1);
        let per_file: Vec<usize> = m.file_chunks().map(|(_, h)| h.len()).collect();
        assert_eq!(per_file, [3, 0, 1]);
        assert_eq!(m.files[0].chunk_len(2), 5);
        assert_eq!(m.distinct_chunks().len(), 1);

        let err = Manifest::new(
            key(),
            1,
            Timestamp::from_unix_secs(1),
            0,
            vec![file("a", 10)],
            vec![chunk; 2],
            vec![],
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("take 1 chunks but 2 are listed"),
            "{err}"
        );
        let err = Manifest::new(
            key(),
            1,
            Timestamp::from_unix_secs(1),
            0,
            vec![],
            vec![],
            vec![replica("p1", "m"), replica("p2", "m")],
        )
        .unwrap_err();
        assert!(err.to_string().contains("two replicas on machine"), "{err}");
    }

    #[test]
    fn signed_manifests_open_and_tampered_ones_do_not() {
        let agent = Keypair::generate().unwrap();
        let now = Timestamp::from_unix_secs(1_800_000_000);
        let m = Manifest::new(
            key(),
            7,
            now,
            0,
            vec![file("x", 3)],
            chunk_hashes(b"abc"),
            vec![],
        )
        .unwrap();
        let env = m.sign(&agent, now).unwrap();
        assert_eq!(Manifest::open(&env, now).unwrap(), m);
        let mut bytes = env.to_bytes();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        if let Ok(tampered) = Envelope::decode(&bytes) {
            assert!(Manifest::open(&tampered, now).is_err());
        }
    }

    #[test]
    fn store_requests_are_bounded() {
        let owner = Owner {
            domain: "d".into(),
            user: "u".into(),
        };
        let job = key();
        let put = |len: usize, lease| Request::Put {
            job: job.clone(),
            owner: owner.clone(),
            sequence: 1,
            hash: Hash::from_bytes([0; 32]),
            data: vec![0; len],
            lease_secs: lease,
        };
        assert!(put(CHUNK_LEN as usize, 3600).encode().is_ok());
        assert!(put(CHUNK_LEN as usize + 1, 3600).check().is_err());
        assert!(put(1, 1).check().unwrap_err().to_string().contains("lease"));
        let bytes = put(10, 3600).encode().unwrap();
        assert_eq!(Request::decode(&bytes).unwrap(), put(10, 3600));
        let empty_owner = Request::Missing {
            job: key(),
            owner: Owner {
                domain: String::new(),
                user: "u".into(),
            },
            sequence: 1,
            hashes: vec![],
            lease_secs: 3600,
        };
        assert!(empty_owner
            .check()
            .unwrap_err()
            .to_string()
            .contains("owner domain"));
    }
}
