//! [`SledStore`]: the store on disk, in sled.
//!
//! # Layout
//!
//! One sled database (a directory), one tree per kind of record. Keys are
//! big-endian so that sled's byte order is numeric order; values are CBOR.
//!
//! | tree | key | value |
//! |---|---|---|
//! | `meta` | `schema`, `next_cluster`, `history_seq` | `u32` / `u64` |
//! | `jobs` | cluster `u64` ‖ proc `u32` | `[[name, expression text], ...]` |
//! | `history` | move number `u64` | `{cluster, proc, finished_at, attrs}` |
//! | `ads` | kind `u16` ‖ signer key (32) | `{seq, expires_at, envelope}` |
//! | `ad_expiry` | expires-at ms `u64` ‖ the `ads` key | empty |
//! | `usage` | user, UTF-8 | `{accumulated, priority, updated_at}` |
//! | `favours` | domain, UTF-8 | `{given, received, updated_at}` |
//! | `factors` | user, UTF-8 | `{factor, set_at}` |
//! | `claims` | claim id bytes | `{peer, cluster, proc, side, lease_expires}` |
//! | `sequences` | kind `u16` | last number handed out, `u64` |
//!
//! Beside sled's files, a small `starling-store` file says that the
//! directory holds a store with a schema version, so a store whose records
//! sled lost is reported as corrupt instead of opening empty.
//!
//! A call that touches several records does it in one sled transaction
//! (sled writes a transaction to its log as one batch that recovery replays
//! whole or not at all), then flushes before returning.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sled::transaction::{abort, ConflictableTransactionError, TransactionError, Transactional};
use sled::Tree;
use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{Envelope, Kind, PublicKey, Timestamp, MAX_ENVELOPE_LEN};

use crate::accounting::check_label;
use crate::claim::check_claim_id;
use crate::codec::{
    ad_key, decode, describe_ad_key, encode, expiry_key, hex, job_key, parse_job_key, AdRecord,
    ClaimRecord, FactorRecord, FavoursRecord, HistoryRecord, UsageRecord, MAX_AD_LEN,
    MAX_HISTORY_LEN, MAX_SMALL_LEN,
};
use crate::error::Source;
use crate::job::{check_changes, Attrs, MAX_JOB_LEN, MAX_PROCS};
use crate::{
    Change, Claim, Error, Factor, Favours, HistoryEntry, JobId, Store, Usage, SCHEMA_VERSION,
};

const SCHEMA: &[u8] = b"schema";
const NEXT_CLUSTER: &[u8] = b"next_cluster";
const HISTORY_SEQ: &[u8] = b"history_seq";

/// A file Starling writes beside sled's once a store has its schema version:
/// if sled later reads no version, the store's records were lost (sled
/// stops replaying its log at the first damaged entry) rather than never
/// written, and opening it fails instead of starting afresh.
const MARKER: &str = "starling-store";

/// The store in a sled database directory. Only one process may have it
/// open at a time.
pub struct SledStore {
    path: PathBuf,
    db: sled::Db,
    meta: Tree,
    jobs: Tree,
    history: Tree,
    ads: Tree,
    ad_expiry: Tree,
    usage: Tree,
    favours: Tree,
    factors: Tree,
    claims: Tree,
    sequences: Tree,
}

impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A transaction's failure: ours, or sled's.
type TxResult<T> = Result<T, ConflictableTransactionError<Error>>;

impl SledStore {
    /// Opens the store in directory `path`, creating it if needed. Fails with
    /// [`Error::Locked`] if another process has it open,
    /// [`Error::NewerSchema`] if a newer Starling wrote it, and
    /// [`Error::Corrupt`] if it is not a store this Starling can read.
    pub fn open(path: impl AsRef<Path>) -> Result<SledStore, Error> {
        let path = path.as_ref().to_path_buf();
        let db = open_db(&path)?;
        let tree = |name: &str| db.open_tree(name).map_err(|e| open_error(&path, e));
        let store = SledStore {
            meta: tree("meta")?,
            jobs: tree("jobs")?,
            history: tree("history")?,
            ads: tree("ads")?,
            ad_expiry: tree("ad_expiry")?,
            usage: tree("usage")?,
            favours: tree("favours")?,
            factors: tree("factors")?,
            claims: tree("claims")?,
            sequences: tree("sequences")?,
            db,
            path,
        };
        store.check_schema()?;
        Ok(store)
    }

    /// The directory the store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn check_schema(&self) -> Result<(), Error> {
        match self.meta.get(SCHEMA).map_err(|e| self.io(e))? {
            Some(bytes) => {
                let found: u32 = decode(&bytes, MAX_SMALL_LEN, "schema version")
                    .map_err(|e| self.corrupt("meta/schema does not decode", Some(e.into())))?;
                if found > SCHEMA_VERSION {
                    return Err(Error::NewerSchema {
                        path: self.path.clone(),
                        found,
                        supported: SCHEMA_VERSION,
                    });
                }
                if found == 0 {
                    return Err(self.corrupt("meta/schema is 0", None));
                }
                self.write_marker()
            }
            None => {
                if self.path.join(MARKER).exists() {
                    return Err(self.corrupt(
                        "its schema version and records are gone: sled found its log damaged",
                        None,
                    ));
                }
                // A new store; or one whose first open was cut short before
                // the version was written, which has no data either.
                for name in self.db.tree_names() {
                    let tree = self.db.open_tree(&name).map_err(|e| self.io(e))?;
                    if !tree.is_empty() {
                        return Err(self.corrupt(
                            format!(
                                "it has records in {} but no schema version",
                                String::from_utf8_lossy(&name)
                            ),
                            None,
                        ));
                    }
                }
                self.meta
                    .insert(SCHEMA, encode(&SCHEMA_VERSION))
                    .map_err(|e| self.io(e))?;
                self.flush()?;
                self.write_marker()
            }
        }
    }

    /// Writes [`MARKER`] durably if it is not there yet.
    fn write_marker(&self) -> Result<(), Error> {
        let marker = self.path.join(MARKER);
        if marker.exists() {
            return Ok(());
        }
        let io = |e: std::io::Error| Error::Io {
            path: self.path.clone(),
            source: Box::new(e),
        };
        let mut file = File::create(&marker).map_err(io)?;
        writeln!(
            file,
            "A Starling store (schema version {SCHEMA_VERSION}); sled keeps the data here."
        )
        .map_err(io)?;
        file.sync_all().map_err(io)?;
        File::open(&self.path)
            .and_then(|d| d.sync_all())
            .map_err(io)
    }

    fn flush(&self) -> Result<(), Error> {
        self.db.flush().map(drop).map_err(|e| self.io(e))
    }

    fn io(&self, e: sled::Error) -> Error {
        match e {
            sled::Error::Corruption { .. } => self.corrupt("sled found a damaged page", None),
            e => Error::Io {
                path: self.path.clone(),
                source: Box::new(e),
            },
        }
    }

    fn corrupt(&self, what: impl Into<String>, source: Option<Source>) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            what: what.into(),
            source,
        }
    }

    /// The error for an undecodable record, inside a transaction.
    fn tx_corrupt<T>(&self, what: String, source: impl Into<Source>) -> TxResult<T> {
        abort(self.corrupt(what, Some(source.into())))
    }

    fn tx_error(&self, e: TransactionError<Error>) -> Error {
        match e {
            TransactionError::Abort(e) => e,
            TransactionError::Storage(e) => self.io(e),
        }
    }

    fn decode_counter(&self, tree: &str, key: &[u8], bytes: Option<sled::IVec>) -> TxResult<u64> {
        match bytes {
            None => Ok(0),
            Some(bytes) => match decode::<u64>(&bytes, MAX_SMALL_LEN, "counter") {
                Ok(n) => Ok(n),
                Err(e) => self.tx_corrupt(format!("{tree}/{} does not decode", hex(key)), e),
            },
        }
    }

    fn decode_job(&self, id: JobId, bytes: &[u8]) -> Result<Attrs, Error> {
        decode(bytes, MAX_JOB_LEN, "job")
            .map_err(|e| self.corrupt(format!("record jobs/{id} does not decode"), Some(e.into())))
    }

    fn job_ad(&self, id: JobId, attrs: &Attrs) -> Result<ClassAd, Error> {
        attrs
            .to_ad(&format!("jobs/{id}"))
            .map_err(|what| self.corrupt(what, None))
    }
}

/// How long [`SledStore::open`] waits for a lock held by someone else:
/// sled's I/O threads may hold the files for a moment after a store in this
/// same process was dropped.
const LOCK_WAIT: Duration = Duration::from_secs(2);

fn open_db(path: &Path) -> Result<sled::Db, Error> {
    let started = Instant::now();
    loop {
        match sled::Config::new().path(path).open() {
            Ok(db) => return Ok(db),
            Err(e) => match open_error(path, e) {
                Error::Locked { .. } if started.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                e => return Err(e),
            },
        }
    }
}

fn open_error(path: &Path, e: sled::Error) -> Error {
    match e {
        sled::Error::Io(io) if io.to_string().contains("could not acquire lock") => Error::Locked {
            path: path.to_path_buf(),
            source: Box::new(io),
        },
        sled::Error::Io(io) => Error::Io {
            path: path.to_path_buf(),
            source: Box::new(io),
        },
        e => Error::Corrupt {
            path: path.to_path_buf(),
            what: "sled cannot read its files".to_owned(),
            source: Some(Box::new(e)),
        },
    }
}

impl Store for SledStore {
    fn submit(&self, procs: &[ClassAd]) -> Result<u64, Error> {
        if procs.is_empty() || procs.len() > MAX_PROCS {
            return Err(Error::invalid(format!(
                "a cluster has 1 to {MAX_PROCS} procs, not {}",
                procs.len()
            )));
        }
        let attrs = procs
            .iter()
            .map(Attrs::from_ad)
            .collect::<Result<Vec<_>, _>>()?;
        let cluster = (&self.meta, &self.jobs)
            .transaction(|(meta, jobs)| {
                let cluster = self
                    .decode_counter("meta", NEXT_CLUSTER, meta.get(NEXT_CLUSTER)?)?
                    .max(1);
                for (proc, attrs) in attrs.iter().enumerate() {
                    // MAX_PROCS fits in a u32.
                    let id = JobId::new(cluster, proc as u32);
                    let mut attrs = attrs.clone();
                    attrs.stamp(id);
                    let bytes = attrs.encode().or_else(abort)?;
                    jobs.insert(&job_key(id)[..], bytes)?;
                }
                meta.insert(NEXT_CLUSTER, encode(&(cluster + 1)))?;
                Ok(cluster)
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()?;
        Ok(cluster)
    }

    fn next_cluster(&self) -> Result<u64, Error> {
        let stored = self.meta.get(NEXT_CLUSTER).map_err(|e| self.io(e))?;
        match stored {
            None => Ok(1),
            Some(bytes) => decode::<u64>(&bytes, MAX_SMALL_LEN, "counter")
                .map(|n| n.max(1))
                .map_err(|e| {
                    self.corrupt(
                        "record meta/next_cluster does not decode".to_owned(),
                        Some(e.into()),
                    )
                }),
        }
    }

    fn job(&self, id: JobId) -> Result<Option<ClassAd>, Error> {
        match self.jobs.get(job_key(id)).map_err(|e| self.io(e))? {
            None => Ok(None),
            Some(bytes) => {
                let attrs = self.decode_job(id, &bytes)?;
                Ok(Some(self.job_ad(id, &attrs)?))
            }
        }
    }

    fn jobs(&self) -> Result<Vec<(JobId, ClassAd)>, Error> {
        let mut out = Vec::new();
        for item in self.jobs.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let id = parse_job_key(&key)
                .ok_or_else(|| self.corrupt(format!("jobs has a bad key {}", hex(&key)), None))?;
            let attrs = self.decode_job(id, &bytes)?;
            out.push((id, self.job_ad(id, &attrs)?));
        }
        Ok(out)
    }

    fn update(&self, id: JobId, changes: &[Change]) -> Result<(), Error> {
        let changes = check_changes(changes)?;
        let key = job_key(id);
        self.jobs
            .transaction(|jobs| {
                let Some(bytes) = jobs.get(key)? else {
                    return abort(Error::NoSuchJob { id });
                };
                let mut attrs = self.decode_job(id, &bytes).or_else(abort)?;
                attrs.apply(&changes).or_else(abort)?;
                jobs.insert(&key[..], attrs.encode().or_else(abort)?)?;
                Ok(())
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()
    }

    fn move_to_history(
        &self,
        id: JobId,
        changes: &[Change],
        finished_at: Timestamp,
    ) -> Result<(), Error> {
        let changes = check_changes(changes)?;
        let key = job_key(id);
        (&self.meta, &self.jobs, &self.history)
            .transaction(|(meta, jobs, history)| {
                let Some(bytes) = jobs.get(key)? else {
                    return abort(Error::NoSuchJob { id });
                };
                let mut attrs = self.decode_job(id, &bytes).or_else(abort)?;
                attrs.apply(&changes).or_else(abort)?;
                attrs.encode().or_else(abort)?;
                let seq = self.decode_counter("meta", HISTORY_SEQ, meta.get(HISTORY_SEQ)?)? + 1;
                let record = HistoryRecord {
                    cluster: id.cluster,
                    proc: id.proc,
                    finished_at: finished_at.as_unix_millis(),
                    attrs,
                };
                jobs.remove(&key[..])?;
                history.insert(&seq.to_be_bytes()[..], encode(&record))?;
                meta.insert(HISTORY_SEQ, encode(&seq))?;
                Ok(())
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()
    }

    fn history(&self, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        let mut out = Vec::new();
        for item in self.history.iter().rev().take(limit) {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let what = || format!("history/{}", hex(&key));
            let record: HistoryRecord =
                decode(&bytes, MAX_HISTORY_LEN, "history record").map_err(|e| {
                    self.corrupt(format!("record {} does not decode", what()), Some(e.into()))
                })?;
            let ad = record
                .attrs
                .to_ad(&what())
                .map_err(|what| self.corrupt(what, None))?;
            out.push(HistoryEntry {
                id: JobId::new(record.cluster, record.proc),
                finished_at: Timestamp::from_unix_millis(record.finished_at),
                ad,
            });
        }
        Ok(out)
    }

    fn put_ad(&self, envelope: &Envelope) -> Result<bool, Error> {
        let header = envelope.header();
        let bytes = envelope.to_bytes();
        if bytes.len() > MAX_ENVELOPE_LEN {
            return Err(Error::invalid(format!(
                "the envelope is {} bytes, more than the limit of {MAX_ENVELOPE_LEN}",
                bytes.len()
            )));
        }
        let key = ad_key(header.kind, &header.signer);
        let record = encode(&AdRecord {
            seq: header.seq,
            expires_at: header.expires_at.as_unix_millis(),
            envelope: bytes,
        });
        let stored = (&self.ads, &self.ad_expiry)
            .transaction(|(ads, expiry)| {
                if let Some(old) = ads.get(key)? {
                    let old: AdRecord = match decode(&old, MAX_AD_LEN, "ad record") {
                        Ok(old) => old,
                        Err(e) => {
                            return self.tx_corrupt(
                                format!("record {} does not decode", describe_ad_key(&key)),
                                e,
                            )
                        }
                    };
                    if old.seq >= header.seq {
                        return Ok(false);
                    }
                    let old_expiry = Timestamp::from_unix_millis(old.expires_at);
                    expiry.remove(&expiry_key(old_expiry, &key)[..])?;
                }
                ads.insert(&key[..], record.as_slice())?;
                expiry.insert(&expiry_key(header.expires_at, &key)[..], &[][..])?;
                Ok(true)
            })
            .map_err(|e| self.tx_error(e))?;
        if stored {
            self.flush()?;
        }
        Ok(stored)
    }

    fn ads(&self, kind: Kind) -> Result<Vec<Envelope>, Error> {
        let mut out = Vec::new();
        for item in self.ads.scan_prefix(kind.as_u16().to_be_bytes()) {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let what = || format!("record {} does not decode", describe_ad_key(&key));
            let record: AdRecord = decode(&bytes, MAX_AD_LEN, "ad record")
                .map_err(|e| self.corrupt(what(), Some(e.into())))?;
            let envelope = Envelope::decode(&record.envelope)
                .map_err(|e| self.corrupt(what(), Some(e.into())))?;
            out.push(envelope);
        }
        Ok(out)
    }

    fn remove_ad(&self, kind: Kind, signer: &PublicKey) -> Result<bool, Error> {
        let key = ad_key(kind, signer);
        let removed = (&self.ads, &self.ad_expiry)
            .transaction(|(ads, expiry)| {
                let Some(old) = ads.remove(&key[..])? else {
                    return Ok(false);
                };
                match decode::<AdRecord>(&old, MAX_AD_LEN, "ad record") {
                    Ok(old) => {
                        let old_expiry = Timestamp::from_unix_millis(old.expires_at);
                        expiry.remove(&expiry_key(old_expiry, &key)[..])?;
                        Ok(true)
                    }
                    Err(e) => self.tx_corrupt(
                        format!("record {} does not decode", describe_ad_key(&key)),
                        e,
                    ),
                }
            })
            .map_err(|e| self.tx_error(e))?;
        if removed {
            self.flush()?;
        }
        Ok(removed)
    }

    fn expire(&self, now: Timestamp) -> Result<usize, Error> {
        let now = now.as_unix_millis();
        let mut expired = Vec::new();
        for key in self.ad_expiry.iter().keys() {
            let key = key.map_err(|e| self.io(e))?;
            let at = key
                .get(..8)
                .and_then(|k| k.try_into().ok())
                .map(u64::from_be_bytes)
                .ok_or_else(|| {
                    self.corrupt(format!("ad_expiry has a bad key {}", hex(&key)), None)
                })?;
            if at > now {
                break;
            }
            expired.push(key);
        }
        if expired.is_empty() {
            return Ok(0);
        }
        let count = (&self.ads, &self.ad_expiry)
            .transaction(|(ads, expiry)| {
                let mut count = 0;
                for key in &expired {
                    // Still there: the ad was not replaced since the scan.
                    if expiry.remove(key)?.is_some() {
                        ads.remove(&key[8..])?;
                        count += 1;
                    }
                }
                Ok(count)
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()?;
        Ok(count)
    }

    fn update_usage(&self, user: &str, f: &dyn Fn(Option<Usage>) -> Usage) -> Result<Usage, Error> {
        check_label("user", user)?;
        let usage = self
            .usage
            .transaction(|tree| {
                let old = match tree.get(user)? {
                    None => None,
                    Some(bytes) => match decode::<UsageRecord>(&bytes, MAX_SMALL_LEN, "usage") {
                        Ok(r) => Some(Usage::from(r)),
                        Err(e) => {
                            return self
                                .tx_corrupt(format!("record usage/{user} does not decode"), e)
                        }
                    },
                };
                let new = f(old);
                new.check(user).or_else(abort)?;
                tree.insert(user.as_bytes(), encode(&UsageRecord::from(new)))?;
                Ok(new)
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()?;
        Ok(usage)
    }

    fn usage(&self) -> Result<Vec<(String, Usage)>, Error> {
        let mut out = Vec::new();
        for item in self.usage.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let user = String::from_utf8_lossy(&key).into_owned();
            let record: UsageRecord = decode(&bytes, MAX_SMALL_LEN, "usage").map_err(|e| {
                self.corrupt(
                    format!("record usage/{user} does not decode"),
                    Some(e.into()),
                )
            })?;
            out.push((user, record.into()));
        }
        Ok(out)
    }

    fn update_favours(
        &self,
        domain: &str,
        f: &dyn Fn(Option<Favours>) -> Favours,
    ) -> Result<Favours, Error> {
        check_label("domain", domain)?;
        let favours = self
            .favours
            .transaction(|tree| {
                let old = match tree.get(domain)? {
                    None => None,
                    Some(bytes) => {
                        match decode::<FavoursRecord>(&bytes, MAX_SMALL_LEN, "favours") {
                            Ok(r) => Some(Favours::from(r)),
                            Err(e) => {
                                return self.tx_corrupt(
                                    format!("record favours/{domain} does not decode"),
                                    e,
                                )
                            }
                        }
                    }
                };
                let new = f(old);
                new.check(domain).or_else(abort)?;
                tree.insert(domain.as_bytes(), encode(&FavoursRecord::from(new)))?;
                Ok(new)
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()?;
        Ok(favours)
    }

    fn favours(&self) -> Result<Vec<(String, Favours)>, Error> {
        let mut out = Vec::new();
        for item in self.favours.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let domain = String::from_utf8_lossy(&key).into_owned();
            let record: FavoursRecord = decode(&bytes, MAX_SMALL_LEN, "favours").map_err(|e| {
                self.corrupt(
                    format!("record favours/{domain} does not decode"),
                    Some(e.into()),
                )
            })?;
            out.push((domain, record.into()));
        }
        Ok(out)
    }

    fn set_factor(&self, user: &str, factor: Factor) -> Result<(), Error> {
        check_label("user", user)?;
        factor.check(user)?;
        self.factors
            .insert(user.as_bytes(), encode(&FactorRecord::from(factor)))
            .map_err(|e| self.io(e))?;
        self.flush()
    }

    fn factors(&self) -> Result<Vec<(String, Factor)>, Error> {
        let mut out = Vec::new();
        for item in self.factors.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let user = String::from_utf8_lossy(&key).into_owned();
            let record: FactorRecord = decode(&bytes, MAX_SMALL_LEN, "factors").map_err(|e| {
                self.corrupt(
                    format!("record factors/{user} does not decode"),
                    Some(e.into()),
                )
            })?;
            out.push((user, record.into()));
        }
        Ok(out)
    }

    fn put_claim(&self, claim: &Claim) -> Result<(), Error> {
        check_claim_id(&claim.id)?;
        self.claims
            .insert(&claim.id[..], encode(&ClaimRecord::from(claim)))
            .map_err(|e| self.io(e))?;
        self.flush()
    }

    fn remove_claim(&self, id: &[u8]) -> Result<bool, Error> {
        let removed = self.claims.remove(id).map_err(|e| self.io(e))?.is_some();
        if removed {
            self.flush()?;
        }
        Ok(removed)
    }

    fn claims(&self) -> Result<Vec<Claim>, Error> {
        let mut out = Vec::new();
        for item in self.claims.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let what = || format!("record claims/{} does not decode", hex(&key));
            let record: ClaimRecord = decode(&bytes, MAX_SMALL_LEN, "claim")
                .map_err(|e| self.corrupt(what(), Some(e.into())))?;
            let claim = record
                .into_claim(key.to_vec())
                .map_err(|e| self.corrupt(format!("{}: {e}", what()), None))?;
            out.push(claim);
        }
        Ok(out)
    }

    fn next_sequence(&self, kind: Kind) -> Result<u64, Error> {
        let key = kind.as_u16().to_be_bytes();
        let seq = self
            .sequences
            .transaction(|tree| {
                let seq = self.decode_counter("sequences", &key, tree.get(key)?)? + 1;
                tree.insert(&key[..], encode(&seq))?;
                Ok(seq)
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()?;
        Ok(seq)
    }
}
