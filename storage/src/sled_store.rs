//! [`SledStore`]: the store on disk, in sled.
//!
//! # Layout (schema version 2)
//!
//! One sled database (a directory), one tree per kind of record. Keys are
//! big-endian so that sled's byte order is numeric order. Every value but
//! `meta/schema` is sealed ([`crate::seal`]): a format byte and a 16-byte
//! blake3 checksum over the tree's name, the key and the payload, then the
//! payload, CBOR.
//!
//! | tree | key | payload |
//! |---|---|---|
//! | `meta` | `schema` | `u32`, not sealed (an older Starling must read it to refuse) |
//! | `meta` | `tally` | [`Tally`]: version, next cluster, history count, sequences, records per tree |
//! | `jobs` | cluster `u64` ‖ proc `u32` | `[[name, expression text], ...]` |
//! | `history` | move number `u64` | `{cluster, proc, finished_at, attrs}` |
//! | `ads` | kind `u16` ‖ signer key (32) | `{seq, expires_at, envelope}` |
//! | `ad_expiry` | expires-at ms `u64` ‖ the `ads` key | empty |
//! | `usage` | user, UTF-8 | `{accumulated, priority, updated_at}` |
//! | `favours` | domain, UTF-8 | `{given, received, updated_at}` |
//! | `factors` | user, UTF-8 | `{factor, set_at}` |
//! | `claims` | claim id bytes | `{peer, cluster, proc, side, lease_expires}` |
//! | `checkpoints` | cluster `u64` ‖ proc `u32` | the record as given (bytes, not CBOR) |
//!
//! Beside sled's files:
//!
//! - `starling-store`, a line of text saying that the directory holds a
//!   store, so a store whose records sled lost is reported as damaged
//!   instead of opening empty;
//! - `acknowledged` ([`crate::acknowledged`]), the tally as of the last
//!   acknowledged change, written after sled's flush and before the call
//!   returns, and flushed to disk within milliseconds.
//!
//! # Writing
//!
//! A call that changes anything does it in one sled transaction together
//! with the tally in `meta` (its version goes up by one, the counts of the
//! trees it touched follow), flushes sled, then writes the tally to
//! `acknowledged` (see there for when that file is flushed), then returns. sled writes a transaction
//! to its log as one batch that recovery replays whole or not at all.
//!
//! Job writes ([`Store::update`], [`Store::move_to_history`] and a
//! [`Batch`] of them, [`Store::apply`]) share one path: every write of the
//! call in one transaction with the tally, one flush, one acknowledged
//! tally, however many jobs it changes. A batch is thus exactly as durable
//! and as checkable at open as a single update, and costs one flush. sled
//! runs one transaction at a time, so no other write goes in while a large
//! batch is made.
//!
//! # Opening
//!
//! [`SledStore::open`] checks everything before it hands the store out:
//! sled opens; every record's seal holds and its key has the right shape;
//! each tree holds as many records as the tally says; and the tally is not
//! behind `acknowledged` (a store that sled recovered to an older state
//! lost acknowledged changes). Anything wrong is [`Error::Damaged`], naming
//! each damaged record and what is missing. The check reads every record
//! once: it costs about as much as listing the queue (0.4–0.5 s for
//! 100,000 jobs, release build, development VM).
//!
//! # Older stores
//!
//! A store of schema version 1 (values not sealed, counters as separate
//! `meta` records, a `sequences` tree) is upgraded in place on first open:
//! the `acknowledged` file is written first, then every value is sealed and
//! the tally written in one transaction, so a crash part-way leaves the old
//! store, which upgrades again. What it held unsealed is trusted as it was.

use std::fs::File;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sled::transaction::{
    abort, ConflictableTransactionError, TransactionError, Transactional, TransactionalTree,
};
use sled::Tree;
use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{Envelope, Kind, PublicKey, Timestamp, MAX_ENVELOPE_LEN};

use crate::accounting::check_label;
use crate::acknowledged::{self, AckFile, Recorder, Tally};
use crate::batch::{in_job, CheckedWrite};
use crate::claim::check_claim_id;
use crate::codec::{
    ad_key, decode, describe_ad_key, encode, expiry_key, hex, job_key, parse_job_key, AdRecord,
    ClaimRecord, FactorRecord, FavoursRecord, HistoryRecord, UsageRecord, MAX_AD_LEN,
    MAX_HISTORY_LEN, MAX_SMALL_LEN,
};
use crate::damage::{self, Damage, Keep, Problem, Records, Report};
use crate::error::Source;
use crate::job::{
    apply_to_record, check_checkpoint, decode_attrs, history_record, Attrs, Checked, MAX_PROCS,
};
use crate::seal::{seal, unseal};
use crate::{
    Batch, Change, Claim, Error, Factor, Favours, HistoryEntry, JobId, Store, Usage, SCHEMA_VERSION,
};

const SCHEMA: &[u8] = b"schema";
const TALLY: &[u8] = b"tally";
/// Schema 1's counters, folded into the tally by the upgrade.
const V1_NEXT_CLUSTER: &[u8] = b"next_cluster";
const V1_HISTORY_SEQ: &[u8] = b"history_seq";
const V1_SEQUENCES: &str = "sequences";

/// The trees, by name.
pub(crate) const META: &str = "meta";
pub(crate) const JOBS: &str = "jobs";
pub(crate) const HISTORY: &str = "history";
pub(crate) const ADS: &str = "ads";
pub(crate) const AD_EXPIRY: &str = "ad_expiry";
pub(crate) const USAGE: &str = "usage";
pub(crate) const FAVOURS: &str = "favours";
pub(crate) const FACTORS: &str = "factors";
pub(crate) const CLAIMS: &str = "claims";
pub(crate) const CHECKPOINTS: &str = "checkpoints";

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
    checkpoints: Tree,
    /// Where acknowledged tallies go; unset only while a store is being
    /// examined, before it is handed out.
    ack: OnceLock<Recorder>,
}

impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A tree's values, sealed, for the upgrade.
type Sealed = Vec<(sled::IVec, Vec<u8>)>;

/// A transaction's failure: ours, or sled's.
type TxResult<T> = Result<T, ConflictableTransactionError<Error>>;

impl SledStore {
    /// Opens the store in directory `path`, creating it if needed, and
    /// checks it whole (see the module docs). Fails with [`Error::Locked`]
    /// if another process has it open, [`Error::NewerSchema`] if a newer
    /// Starling wrote it, and [`Error::Damaged`] if records are damaged or
    /// acknowledged changes are missing: then nothing was changed, and
    /// `starling store check` / `starling store salvage` take over.
    pub fn open(path: impl AsRef<Path>) -> Result<SledStore, Error> {
        let (store, report) = SledStore::examine(path.as_ref(), &mut |_, _, _| {})?;
        if !report.problems.is_empty() {
            return Err(Error::Damaged {
                path: store.path.clone(),
                damage: Damage::new(report.problems),
            });
        }
        store.start_acknowledging(report.acknowledged.as_ref())?;
        Ok(store)
    }

    /// Opens the store at `path` (creating or upgrading it as
    /// [`SledStore::open`] does) and checks every record, handing each one
    /// that verifies to `keep` (its tree, key and payload). Damage that
    /// leaves nothing to examine (sled cannot read its files, the schema
    /// version is gone) is an [`Error::Damaged`]; any other is in the
    /// report. The store does not acknowledge changes until
    /// [`SledStore::start_acknowledging`].
    pub(crate) fn examine(path: &Path, keep: &mut Keep<'_>) -> Result<(SledStore, Report), Error> {
        let path = path.to_path_buf();
        let db = open_db(&path)?;
        let tree = |name: &str| db.open_tree(name).map_err(|e| open_error(&path, e));
        let store = SledStore {
            meta: tree(META)?,
            jobs: tree(JOBS)?,
            history: tree(HISTORY)?,
            ads: tree(ADS)?,
            ad_expiry: tree(AD_EXPIRY)?,
            usage: tree(USAGE)?,
            favours: tree(FAVOURS)?,
            factors: tree(FACTORS)?,
            claims: tree(CLAIMS)?,
            checkpoints: tree(CHECKPOINTS)?,
            db,
            path,
            ack: OnceLock::new(),
        };
        store.check_schema()?;
        let acknowledged = acknowledged::read(&store.ack_path()).map_err(|e| e.to_string());
        let tally = store.read_tally();
        let scans = catch_unwind(AssertUnwindSafe(|| {
            damage::KINDS
                .iter()
                .map(|kind| damage::scan(kind, store.tree(kind.tree), keep))
                .collect::<Vec<_>>()
        }))
        .map_err(|panic| store.damaged("sled failed reading its files", panic_text(&panic)))?;
        let report = damage::judge(&store.path, scans, tally, acknowledged);
        Ok((store, report))
    }

    /// Starts writing acknowledged tallies, bringing the file up to the
    /// store's tally (it lags after a crash between sled's flush and its
    /// own) or making it if the store is new.
    pub(crate) fn start_acknowledging(&self, acknowledged: Option<&Tally>) -> Result<(), Error> {
        let tally = self
            .read_tally()
            .map_err(|what| self.damaged(&what, String::new()))?;
        let path = self.ack_path();
        let mut file = match acknowledged {
            Some(_) => AckFile::open(&path),
            None => AckFile::create(&path, &tally),
        }
        .map_err(|e| self.ack_error(e))?;
        file.write(&tally).map_err(|e| self.ack_error(e))?;
        let recorder = Recorder::start(file).map_err(|e| self.ack_error(e))?;
        // Set once, by open, before the store is handed out.
        let _ = self.ack.set(recorder);
        Ok(())
    }

    /// The directory the store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn ack_path(&self) -> PathBuf {
        self.path.join(acknowledged::FILE)
    }

    fn ack_error(&self, e: acknowledged::AckError) -> Error {
        Error::Io {
            path: self.ack_path(),
            source: e.to_string().into(),
        }
    }

    pub(crate) fn tree(&self, name: &str) -> &Tree {
        match name {
            JOBS => &self.jobs,
            HISTORY => &self.history,
            ADS => &self.ads,
            AD_EXPIRY => &self.ad_expiry,
            USAGE => &self.usage,
            FAVOURS => &self.favours,
            FACTORS => &self.factors,
            CLAIMS => &self.claims,
            CHECKPOINTS => &self.checkpoints,
            _ => &self.meta,
        }
    }

    /// The tally in `meta`, or what is wrong with it.
    pub(crate) fn read_tally(&self) -> Result<Tally, String> {
        let bytes = match self.meta.get(TALLY) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err("its tally (meta/tally) is missing".to_owned()),
            Err(e) => return Err(format!("its tally (meta/tally) cannot be read: {e}")),
        };
        let payload =
            unseal(META, TALLY, &bytes).map_err(|e| format!("its tally (meta/tally): {e}"))?;
        decode(payload, acknowledged::SLOT_LEN, "tally")
            .map_err(|e| format!("its tally (meta/tally) does not decode: {e}"))
    }

    /// Checks the schema version; makes a new store's, upgrades an old one.
    fn check_schema(&self) -> Result<(), Error> {
        match self.meta.get(SCHEMA).map_err(|e| self.io(e))? {
            Some(bytes) => {
                let found: u32 = decode(&bytes, MAX_SMALL_LEN, "schema version")
                    .map_err(|e| self.damaged("meta/schema does not decode", e.to_string()))?;
                if found > SCHEMA_VERSION {
                    return Err(Error::NewerSchema {
                        path: self.path.clone(),
                        found,
                        supported: SCHEMA_VERSION,
                    });
                }
                match found {
                    0 => return Err(self.damaged("meta/schema is 0", String::new())),
                    1 => self.upgrade_from_1()?,
                    _ => {}
                }
                self.write_marker()
            }
            None => {
                let acked = acknowledged::read(&self.ack_path())
                    .ok()
                    .flatten()
                    .is_some_and(|t| t.version > 0);
                if self.path.join(MARKER).exists() || acked {
                    return Err(self.damaged(
                        "its schema version and records are gone: sled found its log \
                         damaged",
                        String::new(),
                    ));
                }
                // A new store; or one whose first open was cut short before
                // the version was written, which has no data either.
                for name in self.db.tree_names() {
                    let tree = self.db.open_tree(&name).map_err(|e| self.io(e))?;
                    if !tree.is_empty() {
                        return Err(self.damaged(
                            &format!(
                                "it has records in {} but no schema version",
                                String::from_utf8_lossy(&name)
                            ),
                            String::new(),
                        ));
                    }
                }
                let tally = Tally::default();
                AckFile::create(&self.ack_path(), &tally).map_err(|e| self.ack_error(e))?;
                let mut batch = sled::Batch::default();
                batch.insert(TALLY, seal(META, TALLY, &encode(&tally)));
                batch.insert(SCHEMA, encode(&SCHEMA_VERSION));
                self.meta.apply_batch(batch).map_err(|e| self.io(e))?;
                self.flush()?;
                self.write_marker()
            }
        }
    }

    /// Seals every value of a schema 1 store and folds its counters into
    /// the tally, in one transaction, after writing `acknowledged`.
    fn upgrade_from_1(&self) -> Result<(), Error> {
        let sequences = self.db.open_tree(V1_SEQUENCES).map_err(|e| self.io(e))?;
        let counter = |tree: &Tree, key: &[u8], name: &str| -> Result<u64, Error> {
            match tree.get(key).map_err(|e| self.io(e))? {
                None => Ok(0),
                Some(bytes) => decode::<u64>(&bytes, MAX_SMALL_LEN, "counter")
                    .map_err(|e| self.damaged(&format!("{name} does not decode"), e.to_string())),
            }
        };
        let mut tally = Tally {
            version: 1,
            next_cluster: counter(&self.meta, V1_NEXT_CLUSTER, "meta/next_cluster")?,
            history_seq: counter(&self.meta, V1_HISTORY_SEQ, "meta/history_seq")?,
            ..Tally::default()
        };
        for key in sequences.iter().keys() {
            let key = key.map_err(|e| self.io(e))?;
            let Ok(kind) = <[u8; 2]>::try_from(&key[..]) else {
                return Err(self.damaged(
                    &format!("sequences has a bad key {}", hex(&key)),
                    String::new(),
                ));
            };
            let name = format!("sequences/{}", hex(&key));
            let last = counter(&sequences, &key, &name)?;
            tally.sequences.insert(u16::from_be_bytes(kind), last);
        }
        let mut sealed: Vec<(&str, Sealed)> = Vec::new();
        for kind in damage::KINDS {
            let mut values = Vec::new();
            for item in self.tree(kind.tree).iter() {
                let (key, value) = item.map_err(|e| self.io(e))?;
                let value = seal(kind.tree, &key, &value);
                values.push((key, value));
            }
            tally.add(kind.tree, values.len() as i64);
            sealed.push((kind.tree, values));
        }
        AckFile::create(&self.ack_path(), &tally).map_err(|e| self.ack_error(e))?;
        let trees: Vec<&Tree> = std::iter::once(&self.meta)
            .chain(sealed.iter().map(|(tree, _)| self.tree(tree)))
            .chain(std::iter::once(&sequences))
            .collect();
        trees[..]
            .transaction(|views| {
                let meta = &views[0];
                for (view, (_, values)) in views[1..].iter().zip(&sealed) {
                    for (key, value) in values {
                        view.insert(key, value.as_slice())?;
                    }
                }
                if let Some(old) = views.last() {
                    for kind in tally.sequences.keys() {
                        old.remove(&kind.to_be_bytes()[..])?;
                    }
                }
                meta.remove(V1_NEXT_CLUSTER)?;
                meta.remove(V1_HISTORY_SEQ)?;
                meta.insert(TALLY, seal(META, TALLY, &encode(&tally)))?;
                meta.insert(SCHEMA, encode(&SCHEMA_VERSION))?;
                Ok(())
            })
            .map_err(|e| self.tx_error(e))?;
        self.flush()
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
            "A Starling store; sled keeps the data here, `acknowledged` what it acknowledged."
        )
        .map_err(io)?;
        file.sync_all().map_err(io)?;
        File::open(&self.path)
            .and_then(|d| d.sync_all())
            .map_err(io)
    }

    /// Makes checked job writes in one transaction with the tally, then
    /// flushes and acknowledges once: [`Store::update`],
    /// [`Store::move_to_history`] and [`Store::apply`] are all this, so a
    /// batch keeps every invariant the single-job calls keep.
    fn write_jobs(&self, writes: &[CheckedWrite]) -> Result<(), Error> {
        let tally = (&self.meta, &self.jobs, &self.history)
            .transaction(|(meta, jobs, history)| {
                let mut tally = self.tx_tally(meta)?;
                for write in writes {
                    let id = write.id;
                    let key = job_key(id);
                    let Some(bytes) = jobs.get(key)? else {
                        return abort(Error::NoSuchJob { id });
                    };
                    let bytes = self
                        .changed_job(id, &bytes, &write.changes)
                        .map_err(|e| in_job(id, e))
                        .or_else(abort)?;
                    let Some(finished_at) = write.finished_at else {
                        jobs.insert(&key[..], seal(JOBS, &key, &bytes))?;
                        continue;
                    };
                    tally.history_seq += 1;
                    let record =
                        history_record(id.cluster, id.proc, finished_at.as_unix_millis(), &bytes);
                    jobs.remove(&key[..])?;
                    tally.add(JOBS, -1);
                    let seq = tally.history_seq.to_be_bytes();
                    if history
                        .insert(&seq[..], seal(HISTORY, &seq, &record))?
                        .is_none()
                    {
                        tally.add(HISTORY, 1);
                    }
                }
                self.tx_commit(meta, tally)
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)
    }

    pub(crate) fn flush(&self) -> Result<(), Error> {
        self.db.flush().map(drop).map_err(|e| self.io(e))
    }

    /// Flushes, then records `tally` as acknowledged: what every mutating
    /// call does last.
    fn acknowledge(&self, tally: &Tally) -> Result<(), Error> {
        self.flush()?;
        if let Some(recorder) = self.ack.get() {
            recorder.record(tally).map_err(|e| self.ack_error(e))?;
        }
        Ok(())
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

    /// Damage found while opening: the store is not handed out.
    fn damaged(&self, what: &str, detail: String) -> Error {
        let what = if detail.is_empty() {
            what.to_owned()
        } else {
            format!("{what}: {detail}")
        };
        Error::Damaged {
            path: self.path.clone(),
            damage: Damage::new(vec![Problem::new("store", what)]),
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

    /// The tally, inside a transaction that includes `meta`.
    fn tx_tally(&self, meta: &TransactionalTree) -> TxResult<Tally> {
        let Some(bytes) = meta.get(TALLY)? else {
            return abort(self.corrupt("meta/tally is missing", None));
        };
        let payload = match unseal(META, TALLY, &bytes) {
            Ok(payload) => payload,
            Err(e) => return abort(self.corrupt(format!("meta/tally: {e}"), None)),
        };
        match decode(payload, acknowledged::SLOT_LEN, "tally") {
            Ok(tally) => Ok(tally),
            Err(e) => self.tx_corrupt("meta/tally does not decode".to_owned(), e),
        }
    }

    /// Writes `tally` one version on, inside the transaction that changed
    /// the store; returns it.
    fn tx_commit(&self, meta: &TransactionalTree, mut tally: Tally) -> TxResult<Tally> {
        tally.version += 1;
        meta.insert(TALLY, seal(META, TALLY, &encode(&tally)))?;
        Ok(tally)
    }

    /// The payload of a sealed value, or an error naming the record.
    fn unsealed<'a>(&self, tree: &str, key: &[u8], value: &'a [u8]) -> Result<&'a [u8], Error> {
        unseal(tree, key, value)
            .map_err(|e| self.corrupt(format!("record {}: {e}", damage::describe(tree, key)), None))
    }

    fn tx_unsealed<'a>(&self, tree: &str, key: &[u8], value: &'a [u8]) -> TxResult<&'a [u8]> {
        self.unsealed(tree, key, value).or_else(abort)
    }

    /// The record of job `id` (stored as `bytes`) with `changes` made.
    fn changed_job(&self, id: JobId, bytes: &[u8], changes: &[Checked]) -> Result<Vec<u8>, Error> {
        let payload = self.unsealed(JOBS, &job_key(id), bytes)?;
        if let Some(changed) = apply_to_record(payload, changes) {
            return changed;
        }
        // Not the layout this Starling writes: decoded the long way, which
        // reads any valid record and names a damaged one.
        let mut attrs = self.decode_job(id, bytes)?;
        attrs.apply(changes)?;
        attrs.encode()
    }

    fn decode_job(&self, id: JobId, bytes: &[u8]) -> Result<Attrs, Error> {
        let payload = self.unsealed(JOBS, &job_key(id), bytes)?;
        decode_attrs(payload)
            .map_err(|e| self.corrupt(format!("record jobs/{id} does not decode"), Some(e.into())))
    }

    fn job_ad(&self, id: JobId, attrs: &Attrs) -> Result<ClassAd, Error> {
        attrs
            .to_ad(&format!("jobs/{id}"))
            .map_err(|what| self.corrupt(what, None))
    }

    /// Writes a store afresh at `path` (which must not hold one) with the
    /// given payloads, each checked already, and `tally` with its counts
    /// made from them; `acknowledged` and the marker with it. For salvage.
    pub(crate) fn rebuild(
        path: &Path,
        records: &[(&'static str, Records)],
        mut tally: Tally,
    ) -> Result<Tally, Error> {
        let store = SledStore::open(path)?;
        tally.records.clear();
        for (tree, values) in records {
            let mut batch = sled::Batch::default();
            for (key, payload) in values {
                batch.insert(key.as_slice(), seal(tree, key, payload));
            }
            store
                .tree(tree)
                .apply_batch(batch)
                .map_err(|e| store.io(e))?;
            tally.add(tree, values.len() as i64);
        }
        store
            .meta
            .insert(TALLY, seal(META, TALLY, &encode(&tally)))
            .map_err(|e| store.io(e))?;
        store.acknowledge(&tally)?;
        Ok(tally)
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "it panicked".to_owned())
}

/// How long [`SledStore::open`] waits for a lock held by someone else:
/// sled's I/O threads may hold the files for a moment after a store in this
/// same process was dropped.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// How often sled's own thread flushes and cleans its log. Every
/// acknowledged write is flushed before it returns, so this only bounds
/// what an unacknowledged one may lose; sled's default (500 ms, with an
/// fsync each time even when nothing changed) made the flusher the most
/// frequent wake-up of an idle agent.
pub(crate) const BACKGROUND_FLUSH_MS: u64 = 5_000;

fn open_db(path: &Path) -> Result<sled::Db, Error> {
    let started = Instant::now();
    loop {
        // sled may panic on some damaged files rather than return an error.
        let opened = catch_unwind(|| {
            sled::Config::new()
                .path(path)
                .flush_every_ms(Some(BACKGROUND_FLUSH_MS))
                .open()
        })
        .map_err(|panic| Error::Damaged {
            path: path.to_path_buf(),
            damage: Damage::new(vec![Problem::new(
                "store",
                format!("sled cannot read its files: {}", panic_text(&panic)),
            )]),
        })?;
        match opened {
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
        e => Error::Damaged {
            path: path.to_path_buf(),
            damage: Damage::new(vec![Problem::new(
                "store",
                format!("sled cannot read its files: {e}"),
            )]),
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
        let tally = (&self.meta, &self.jobs)
            .transaction(|(meta, jobs)| {
                let mut tally = self.tx_tally(meta)?;
                let cluster = tally.next_cluster.max(1);
                for (proc, attrs) in attrs.iter().enumerate() {
                    // MAX_PROCS fits in a u32.
                    let id = JobId::new(cluster, proc as u32);
                    let mut attrs = attrs.clone();
                    attrs.stamp(id);
                    let bytes = attrs.encode().or_else(abort)?;
                    let key = job_key(id);
                    if jobs.insert(&key[..], seal(JOBS, &key, &bytes))?.is_none() {
                        tally.add(JOBS, 1);
                    }
                }
                tally.next_cluster = cluster + 1;
                self.tx_commit(meta, tally)
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)?;
        Ok(tally.next_cluster - 1)
    }

    fn next_cluster(&self) -> Result<u64, Error> {
        self.read_tally()
            .map(|t| t.next_cluster.max(1))
            .map_err(|what| self.corrupt(what, None))
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
        self.write_jobs(&[CheckedWrite::one(id, changes, None)?])
    }

    fn move_to_history(
        &self,
        id: JobId,
        changes: &[Change],
        finished_at: Timestamp,
    ) -> Result<(), Error> {
        self.write_jobs(&[CheckedWrite::one(id, changes, Some(finished_at))?])
    }

    fn apply(&self, batch: &Batch) -> Result<(), Error> {
        let writes = batch.check()?;
        if writes.is_empty() {
            return Ok(());
        }
        self.write_jobs(&writes)
    }

    fn history(&self, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        let mut out = Vec::new();
        for item in self.history.iter().rev().take(limit) {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let what = || format!("history/{}", hex(&key));
            let payload = self.unsealed(HISTORY, &key, &bytes)?;
            let record: HistoryRecord = decode(payload, MAX_HISTORY_LEN, "history record")
                .map_err(|e| {
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
        let record = seal(
            ADS,
            &key,
            &encode(&AdRecord {
                seq: header.seq,
                expires_at: header.expires_at.as_unix_millis(),
                envelope: bytes,
            }),
        );
        let new_expiry = expiry_key(header.expires_at, &key);
        let tally = (&self.meta, &self.ads, &self.ad_expiry)
            .transaction(|(meta, ads, expiry)| {
                let mut tally = self.tx_tally(meta)?;
                if let Some(old) = ads.get(key)? {
                    let old = self.tx_unsealed(ADS, &key, &old)?;
                    let old: AdRecord = match decode(old, MAX_AD_LEN, "ad record") {
                        Ok(old) => old,
                        Err(e) => {
                            return self.tx_corrupt(
                                format!("record {} does not decode", describe_ad_key(&key)),
                                e,
                            )
                        }
                    };
                    if old.seq >= header.seq {
                        return Ok(None);
                    }
                    let old_expiry = Timestamp::from_unix_millis(old.expires_at);
                    if expiry.remove(&expiry_key(old_expiry, &key)[..])?.is_some() {
                        tally.add(AD_EXPIRY, -1);
                    }
                }
                if ads.insert(&key[..], record.as_slice())?.is_none() {
                    tally.add(ADS, 1);
                }
                let empty = seal(AD_EXPIRY, &new_expiry, &[]);
                if expiry.insert(&new_expiry[..], empty)?.is_none() {
                    tally.add(AD_EXPIRY, 1);
                }
                self.tx_commit(meta, tally).map(Some)
            })
            .map_err(|e| self.tx_error(e))?;
        match tally {
            Some(tally) => {
                self.acknowledge(&tally)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn ads(&self, kind: Kind) -> Result<Vec<Envelope>, Error> {
        let mut out = Vec::new();
        for item in self.ads.scan_prefix(kind.as_u16().to_be_bytes()) {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let what = || format!("record {} does not decode", describe_ad_key(&key));
            let payload = self.unsealed(ADS, &key, &bytes)?;
            let record: AdRecord = decode(payload, MAX_AD_LEN, "ad record")
                .map_err(|e| self.corrupt(what(), Some(e.into())))?;
            let envelope = Envelope::decode(&record.envelope)
                .map_err(|e| self.corrupt(what(), Some(e.into())))?;
            out.push(envelope);
        }
        Ok(out)
    }

    fn remove_ad(&self, kind: Kind, signer: &PublicKey) -> Result<bool, Error> {
        let key = ad_key(kind, signer);
        let tally = (&self.meta, &self.ads, &self.ad_expiry)
            .transaction(|(meta, ads, expiry)| {
                let Some(old) = ads.remove(&key[..])? else {
                    return Ok(None);
                };
                let mut tally = self.tx_tally(meta)?;
                tally.add(ADS, -1);
                let old = self.tx_unsealed(ADS, &key, &old)?;
                match decode::<AdRecord>(old, MAX_AD_LEN, "ad record") {
                    Ok(old) => {
                        let old_expiry = Timestamp::from_unix_millis(old.expires_at);
                        if expiry.remove(&expiry_key(old_expiry, &key)[..])?.is_some() {
                            tally.add(AD_EXPIRY, -1);
                        }
                        self.tx_commit(meta, tally).map(Some)
                    }
                    Err(e) => self.tx_corrupt(
                        format!("record {} does not decode", describe_ad_key(&key)),
                        e,
                    ),
                }
            })
            .map_err(|e| self.tx_error(e))?;
        match tally {
            Some(tally) => {
                self.acknowledge(&tally)?;
                Ok(true)
            }
            None => Ok(false),
        }
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
        let (count, tally) = (&self.meta, &self.ads, &self.ad_expiry)
            .transaction(|(meta, ads, expiry)| {
                let mut tally = self.tx_tally(meta)?;
                let mut count = 0;
                for key in &expired {
                    // Still there: the ad was not replaced since the scan.
                    if expiry.remove(key)?.is_some() {
                        tally.add(AD_EXPIRY, -1);
                        if ads.remove(&key[8..])?.is_some() {
                            tally.add(ADS, -1);
                        }
                        count += 1;
                    }
                }
                if count == 0 {
                    return Ok((0, None));
                }
                Ok((count, Some(self.tx_commit(meta, tally)?)))
            })
            .map_err(|e| self.tx_error(e))?;
        if let Some(tally) = tally {
            self.acknowledge(&tally)?;
        }
        Ok(count)
    }

    fn update_usage(&self, user: &str, f: &dyn Fn(Option<Usage>) -> Usage) -> Result<Usage, Error> {
        check_label("user", user)?;
        let (usage, tally) = (&self.meta, &self.usage)
            .transaction(|(meta, tree)| {
                let mut tally = self.tx_tally(meta)?;
                let old = match tree.get(user)? {
                    None => {
                        tally.add(USAGE, 1);
                        None
                    }
                    Some(bytes) => {
                        let payload = self.tx_unsealed(USAGE, user.as_bytes(), &bytes)?;
                        match decode::<UsageRecord>(payload, MAX_SMALL_LEN, "usage") {
                            Ok(r) => Some(Usage::from(r)),
                            Err(e) => {
                                return self
                                    .tx_corrupt(format!("record usage/{user} does not decode"), e)
                            }
                        }
                    }
                };
                let new = f(old);
                new.check(user).or_else(abort)?;
                let value = seal(USAGE, user.as_bytes(), &encode(&UsageRecord::from(new)));
                tree.insert(user.as_bytes(), value)?;
                Ok((new, self.tx_commit(meta, tally)?))
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)?;
        Ok(usage)
    }

    fn usage(&self) -> Result<Vec<(String, Usage)>, Error> {
        let mut out = Vec::new();
        for item in self.usage.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let user = String::from_utf8_lossy(&key).into_owned();
            let payload = self.unsealed(USAGE, &key, &bytes)?;
            let record: UsageRecord = decode(payload, MAX_SMALL_LEN, "usage").map_err(|e| {
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
        let (favours, tally) = (&self.meta, &self.favours)
            .transaction(|(meta, tree)| {
                let mut tally = self.tx_tally(meta)?;
                let old = match tree.get(domain)? {
                    None => {
                        tally.add(FAVOURS, 1);
                        None
                    }
                    Some(bytes) => {
                        let payload = self.tx_unsealed(FAVOURS, domain.as_bytes(), &bytes)?;
                        match decode::<FavoursRecord>(payload, MAX_SMALL_LEN, "favours") {
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
                let value = seal(
                    FAVOURS,
                    domain.as_bytes(),
                    &encode(&FavoursRecord::from(new)),
                );
                tree.insert(domain.as_bytes(), value)?;
                Ok((new, self.tx_commit(meta, tally)?))
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)?;
        Ok(favours)
    }

    fn favours(&self) -> Result<Vec<(String, Favours)>, Error> {
        let mut out = Vec::new();
        for item in self.favours.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let domain = String::from_utf8_lossy(&key).into_owned();
            let payload = self.unsealed(FAVOURS, &key, &bytes)?;
            let record: FavoursRecord = decode(payload, MAX_SMALL_LEN, "favours").map_err(|e| {
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
        let value = seal(
            FACTORS,
            user.as_bytes(),
            &encode(&FactorRecord::from(factor)),
        );
        let tally = (&self.meta, &self.factors)
            .transaction(|(meta, tree)| {
                let mut tally = self.tx_tally(meta)?;
                if tree.insert(user.as_bytes(), value.as_slice())?.is_none() {
                    tally.add(FACTORS, 1);
                }
                self.tx_commit(meta, tally)
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)
    }

    fn factors(&self) -> Result<Vec<(String, Factor)>, Error> {
        let mut out = Vec::new();
        for item in self.factors.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let user = String::from_utf8_lossy(&key).into_owned();
            let payload = self.unsealed(FACTORS, &key, &bytes)?;
            let record: FactorRecord = decode(payload, MAX_SMALL_LEN, "factors").map_err(|e| {
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
        let value = seal(CLAIMS, &claim.id, &encode(&ClaimRecord::from(claim)));
        let tally = (&self.meta, &self.claims)
            .transaction(|(meta, tree)| {
                let mut tally = self.tx_tally(meta)?;
                if tree.insert(&claim.id[..], value.as_slice())?.is_none() {
                    tally.add(CLAIMS, 1);
                }
                self.tx_commit(meta, tally)
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)
    }

    fn remove_claim(&self, id: &[u8]) -> Result<bool, Error> {
        let tally = (&self.meta, &self.claims)
            .transaction(|(meta, tree)| {
                if tree.remove(id)?.is_none() {
                    return Ok(None);
                }
                let mut tally = self.tx_tally(meta)?;
                tally.add(CLAIMS, -1);
                self.tx_commit(meta, tally).map(Some)
            })
            .map_err(|e| self.tx_error(e))?;
        match tally {
            Some(tally) => {
                self.acknowledge(&tally)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn claims(&self) -> Result<Vec<Claim>, Error> {
        let mut out = Vec::new();
        for item in self.claims.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let what = || format!("record claims/{} does not decode", hex(&key));
            let payload = self.unsealed(CLAIMS, &key, &bytes)?;
            let record: ClaimRecord = decode(payload, MAX_SMALL_LEN, "claim")
                .map_err(|e| self.corrupt(what(), Some(e.into())))?;
            let claim = record
                .into_claim(key.to_vec())
                .map_err(|e| self.corrupt(format!("{}: {e}", what()), None))?;
            out.push(claim);
        }
        Ok(out)
    }

    fn put_checkpoint(&self, id: JobId, record: &[u8]) -> Result<(), Error> {
        check_checkpoint(id, record)?;
        let key = job_key(id);
        let value = seal(CHECKPOINTS, &key, record);
        let tally = (&self.meta, &self.jobs, &self.checkpoints)
            .transaction(|(meta, jobs, checkpoints)| {
                if jobs.get(key)?.is_none() {
                    return abort(Error::NoSuchJob { id });
                }
                let mut tally = self.tx_tally(meta)?;
                if checkpoints.insert(&key[..], value.as_slice())?.is_none() {
                    tally.add(CHECKPOINTS, 1);
                }
                self.tx_commit(meta, tally)
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)
    }

    fn checkpoint(&self, id: JobId) -> Result<Option<Vec<u8>>, Error> {
        let key = job_key(id);
        match self.checkpoints.get(key).map_err(|e| self.io(e))? {
            None => Ok(None),
            Some(bytes) => Ok(Some(self.unsealed(CHECKPOINTS, &key, &bytes)?.to_vec())),
        }
    }

    fn remove_checkpoint(&self, id: JobId) -> Result<bool, Error> {
        let key = job_key(id);
        let tally = (&self.meta, &self.checkpoints)
            .transaction(|(meta, checkpoints)| {
                if checkpoints.remove(&key[..])?.is_none() {
                    return Ok(None);
                }
                let mut tally = self.tx_tally(meta)?;
                tally.add(CHECKPOINTS, -1);
                self.tx_commit(meta, tally).map(Some)
            })
            .map_err(|e| self.tx_error(e))?;
        match tally {
            Some(tally) => {
                self.acknowledge(&tally)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn checkpoints(&self) -> Result<Vec<(JobId, Vec<u8>)>, Error> {
        let mut out = Vec::new();
        for item in self.checkpoints.iter() {
            let (key, bytes) = item.map_err(|e| self.io(e))?;
            let id = parse_job_key(&key)
                .filter(|_| key.len() == 12)
                .ok_or_else(|| {
                    self.corrupt(format!("checkpoints has a bad key {}", hex(&key)), None)
                })?;
            let payload = self.unsealed(CHECKPOINTS, &key, &bytes)?;
            out.push((id, payload.to_vec()));
        }
        Ok(out)
    }

    fn next_sequence(&self, kind: Kind) -> Result<u64, Error> {
        let tally = self
            .meta
            .transaction(|meta| {
                let mut tally = self.tx_tally(meta)?;
                *tally.sequences.entry(kind.as_u16()).or_insert(0) += 1;
                self.tx_commit(meta, tally)
            })
            .map_err(|e| self.tx_error(e))?;
        self.acknowledge(&tally)?;
        Ok(tally.sequences.get(&kind.as_u16()).copied().unwrap_or(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::{parse_ad, unparse};

    fn status(store: &SledStore, id: JobId) -> Option<String> {
        let ad = store.job(id).unwrap()?;
        ad.get("JobStatus").map(unparse)
    }

    /// A batch is one version of the store: one transaction, one flush,
    /// one acknowledged tally, and the open check agrees with it.
    #[test]
    fn a_batch_is_one_acknowledged_write_that_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        const N: u32 = 20_000;
        {
            let store = SledStore::open(&path).unwrap();
            let job =
                parse_ad("[ JobStatus = 1; Cmd = \"/bin/true\"; Owner = \"alice\" ]").unwrap();
            store.submit(&vec![job; N as usize]).unwrap();
            let before = store.read_tally().unwrap();
            let mut batch = Batch::with_capacity(N as usize);
            let at = Timestamp::from_unix_secs(7);
            for proc in 0..N {
                let id = JobId::new(1, proc);
                if proc < N / 2 {
                    batch.move_to_history(id, vec![Change::set("JobStatus", "3")], at);
                } else {
                    batch.update(id, vec![Change::set("JobStatus", "5")]);
                }
            }
            store.apply(&batch).unwrap();
            let after = store.read_tally().unwrap();
            assert_eq!(after.version, before.version + 1, "one write for the batch");
            assert_eq!(after.count(JOBS), u64::from(N / 2));
            assert_eq!(after.count(HISTORY), u64::from(N / 2));
            assert_eq!(after.history_seq, before.history_seq + u64::from(N / 2));
            let acked = acknowledged::read(&store.ack_path()).unwrap().unwrap();
            assert_eq!(acked, after, "acknowledged before apply returned");

            // A batch that fails at its last job leaves the store as it was.
            let mut batch = Batch::new();
            for proc in N / 2..N {
                batch.update(JobId::new(1, proc), vec![Change::set("JobStatus", "1")]);
            }
            batch.update(JobId::new(1, 0), vec![Change::set("JobStatus", "1")]);
            let err = store.apply(&batch).unwrap_err();
            assert!(matches!(err, Error::NoSuchJob { .. }), "{err}");
            assert_eq!(store.read_tally().unwrap(), after);
        }
        // Reopening checks every record against the tally and what was
        // acknowledged: a batch cut short would fail here.
        let store = SledStore::open(&path).unwrap();
        assert_eq!(store.jobs().unwrap().len(), (N / 2) as usize);
        assert_eq!(status(&store, JobId::new(1, N - 1)).as_deref(), Some("5"));
        assert_eq!(status(&store, JobId::new(1, 0)), None);
        let history = store.history(usize::MAX).unwrap();
        assert_eq!(history.len(), (N / 2) as usize);
        assert_eq!(history[0].id, JobId::new(1, N / 2 - 1));
    }
}
