//! A full disk as a state of the store, not a failure.
//!
//! [`Guarded`] wraps a [`SledStore`] and passes every call through. Three
//! things let an agent live through its filesystem filling up, with no
//! restart:
//!
//! - **A reserve.** Beside the store it keeps a file of [`RESERVE_BYTES`]
//!   (ballast). When the filesystem runs low ([`Guarded::check`] finds
//!   less free than the reserve besides it) or a write fails for space, the
//!   store enters [`Space::Full`] and gives the reserve back to the
//!   filesystem. The agent then refuses new work, but the writes it cannot
//!   refuse (a finished job moving to the history, a claim released, the
//!   sequence number of the ad that says it is not willing) still find
//!   room. Root gets no reserved blocks on tmpfs, and a root agent none on
//!   ext4 either, so the store brings its own.
//! - **Reopening in place.** sled stops working after its first failed
//!   write: it keeps the error and returns it from every later call until
//!   the database is reopened. A call that fails for space reopens it at
//!   once, under the write half of a lock every call holds the read half
//!   of, so no call runs while the database is swapped. The reopened
//!   database holds what is on disk: every call that returned `Ok` had
//!   flushed, so nothing acknowledged is lost. A call that failed for space
//!   is like a call cut by a crash: after the reopen its change is there
//!   whole or not at all. The reopened files are fsynced, so whatever the
//!   store shows after a reopen is durable; a submit whose cluster turns
//!   out to be there after all is answered `Ok`, so that a user told
//!   "disk full" never finds the job queued later.
//! - **Leaving by itself.** [`Guarded::check`], which the agent calls every
//!   few seconds, leaves the state once the filesystem has room for the
//!   reserve and as much again twice over, a trial write and fsync of a
//!   small file succeed, the reserve is back and the database (when a write
//!   had failed) is reopened.
//!
//! The thresholds differ on the way in and out (hysteresis), so a
//! filesystem hovering at the limit does not flap the agent's state.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError, RwLock};

use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{Envelope, Kind, PublicKey, Timestamp};

use crate::{
    Batch, Change, Claim, Error, Factor, Favours, HistoryEntry, JobId, SledStore, Store, Usage,
};

/// The size of the reserve kept beside the store: room for the writes an
/// agent must still make while it refuses new work (sled grows its log by
/// segments of 512 KiB).
pub const RESERVE_BYTES: u64 = 4 << 20;

/// The trial write that tells whether space is really back (a filesystem
/// may count space free that it cannot hand out, e.g. over a quota).
const PROBE_BYTES: usize = 64 << 10;

/// Where the store stands for space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Space {
    /// Writes go through.
    Ok,
    /// The filesystem is full: the agent refuses new work until space
    /// returns.
    Full {
        /// When the state began.
        since: Timestamp,
        /// What ran out, for a person: starts with "disk full".
        reason: String,
    },
}

impl Space {
    pub fn is_full(&self) -> bool {
        matches!(self, Space::Full { .. })
    }
}

pub use crate::error::is_out_of_space;

/// A [`SledStore`] that treats a full filesystem as a state (see the
/// module's documentation). Every [`Store`] call goes to the database as
/// it is; [`Guarded::space`] says where the store stands, cheaply.
pub struct Guarded {
    path: PathBuf,
    /// The reserve file, on the store's filesystem.
    reserve: PathBuf,
    reserve_len: u64,
    /// `None` only while a reopen failed (and is retried by
    /// [`Guarded::check`]).
    db: RwLock<Option<SledStore>>,
    health: Mutex<Health>,
}

impl std::fmt::Debug for Guarded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guarded")
            .field("path", &self.path)
            .field("reserve", &self.reserve)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Health {
    space: Space,
    /// The reserve file is in place.
    reserve_held: bool,
    /// A write failed for space on the database of this generation: it
    /// must be reopened before it takes writes again.
    broken: bool,
    /// Counts reopens, so that a failure seen on an older database does
    /// not reopen the new one again.
    generation: u64,
}

impl Guarded {
    /// Opens the store at `path` (as [`SledStore::open`]) and keeps a
    /// reserve of [`RESERVE_BYTES`] in the file `reserve`, which must be on
    /// the same filesystem (the data directory). A store opened on a full
    /// filesystem opens in [`Space::Full`].
    pub fn open(path: impl AsRef<Path>, reserve: impl AsRef<Path>) -> Result<Guarded, Error> {
        Guarded::with_reserve(path, reserve, RESERVE_BYTES)
    }

    /// [`Guarded::open`] with a reserve of `reserve_len` bytes (tests use
    /// a small one).
    pub fn with_reserve(
        path: impl AsRef<Path>,
        reserve: impl AsRef<Path>,
        reserve_len: u64,
    ) -> Result<Guarded, Error> {
        let path = path.as_ref().to_path_buf();
        let reserve = reserve.as_ref().to_path_buf();
        // sled writes when it opens: on a full filesystem the reserve a
        // previous run kept makes the room to start in (full, refusing new
        // work) rather than not at all.
        let (db, mut held) = match SledStore::open(&path) {
            Ok(db) => (db, true),
            Err(e) if e.is_disk_full() && reserve.exists() => {
                let _ = std::fs::remove_file(&reserve);
                (
                    SledStore::open(&path).map_err(|e| disk_full(&path, e))?,
                    false,
                )
            }
            Err(e) => return Err(disk_full(&path, e)),
        };
        held = held && std::fs::metadata(&reserve).is_ok_and(|m| m.len() == reserve_len);
        let guarded = Guarded {
            path,
            reserve,
            reserve_len,
            db: RwLock::new(Some(db)),
            health: Mutex::new(Health {
                space: Space::Ok,
                reserve_held: held,
                broken: false,
                generation: 0,
            }),
        };
        if !held {
            let mut health = guarded.lock_health();
            let room = guarded.available();
            // Made only where it leaves room: otherwise the store starts
            // full, and check() makes it once space is back.
            if room.is_some_and(|free| free >= 3 * reserve_len) && guarded.make_reserve().is_ok() {
                health.reserve_held = true;
            } else {
                let free = room.map_or_else(|| "unknown".to_owned(), human);
                health.space = Space::Full {
                    since: Timestamp::now(),
                    reason: format!(
                        "disk full: {free} free in {}, too little for the {} the agent keeps \
                         in reserve",
                        guarded.dir().display(),
                        human(reserve_len)
                    ),
                };
            }
        }
        Ok(guarded)
    }

    /// Where the store stands for space, as last found (no I/O).
    pub fn space(&self) -> Space {
        self.lock_health().space.clone()
    }

    /// Looks at the filesystem and moves between the states: into
    /// [`Space::Full`] when less than the reserve is free besides it; out
    /// of it when three reserves' worth is free, a trial write and fsync
    /// succeed, the reserve is made again and the database reopened (if a
    /// write had failed). Blocks on disk I/O: call it off the async
    /// threads, every few seconds. Returns the state it leaves the store in.
    pub fn check(&self) -> Space {
        let Some(free) = self.available() else {
            // Nothing to go on: stay as we are.
            return self.space();
        };
        let mut health = self.lock_health();
        if !health.space.is_full() {
            // The reserve is held while the store is not full: what is
            // free is free besides it.
            if free < self.reserve_len {
                self.enter_full(
                    &mut health,
                    format!(
                        "disk full: {} free in {}, less than the {} the agent keeps in reserve",
                        human(free),
                        self.dir().display(),
                        human(self.reserve_len)
                    ),
                );
            }
            return health.space.clone();
        }
        let broken = health.broken.then_some(health.generation);
        if free < 3 * self.reserve_len || self.trial_write().is_err() {
            drop(health);
            // A database that failed is reopened on what room there is, so
            // that reads and the writes that must happen work meanwhile.
            if let Some(generation) = broken {
                self.reopen(generation);
            }
            return self.space();
        }
        if !health.reserve_held {
            if self.make_reserve().is_err() {
                return health.space.clone();
            }
            health.reserve_held = true;
        }
        drop(health);
        if let Some(generation) = broken {
            if !self.reopen(generation) {
                return self.space();
            }
        }
        let mut health = self.lock_health();
        if !health.broken {
            health.space = Space::Ok;
        }
        health.space.clone()
    }

    /// Runs `call` on the database; a failure for space enters
    /// [`Space::Full`], gives back the reserve, reopens the database and
    /// comes back as [`Error::DiskFull`].
    fn call<T>(&self, call: impl FnOnce(&SledStore) -> Result<T, Error>) -> Result<T, Error> {
        let db = self.db.read().unwrap_or_else(PoisonError::into_inner);
        let Some(store) = db.as_ref() else {
            return Err(self.closed());
        };
        let generation = self.lock_health().generation;
        match call(store) {
            Err(e) if e.is_disk_full() => {
                drop(db);
                let reason = match &e {
                    Error::DiskFull { reason, .. } => reason.clone(),
                    _ => "a write failed: no space left on the device".to_owned(),
                };
                {
                    let mut health = self.lock_health();
                    if health.generation == generation {
                        health.broken = true;
                    }
                    if !health.space.is_full() {
                        self.enter_full(&mut health, format!("disk full: {reason}"));
                    }
                }
                self.reopen(generation);
                Err(match e {
                    e @ Error::DiskFull { .. } => e,
                    e => Error::DiskFull {
                        path: self.path.clone(),
                        reason,
                        source: Some(Box::new(e)),
                    },
                })
            }
            other => other,
        }
    }

    /// Reopens the database if it still is the broken one of `generation`;
    /// true when the store is usable afterwards.
    fn reopen(&self, generation: u64) -> bool {
        let mut db = self.db.write().unwrap_or_else(PoisonError::into_inner);
        {
            let health = self.lock_health();
            if !health.broken || health.generation != generation {
                return db.is_some();
            }
        }
        // The old database must be gone (its lock and files released)
        // before the new one opens the same directory.
        drop(db.take());
        match SledStore::open(&self.path).and_then(|store| {
            // What a failed flush left in the page cache is what the new
            // database reads: make it durable before anyone sees it.
            sync_tree(&self.path).map_err(|e| Error::Io {
                path: self.path.clone(),
                source: Box::new(e),
            })?;
            Ok(store)
        }) {
            Ok(store) => {
                *db = Some(store);
                let mut health = self.lock_health();
                health.broken = false;
                health.generation += 1;
                true
            }
            Err(_) => false,
        }
    }

    /// Enters [`Space::Full`] and gives the reserve back to the filesystem.
    fn enter_full(&self, health: &mut Health, reason: String) {
        health.space = Space::Full {
            since: Timestamp::now(),
            reason,
        };
        if health.reserve_held {
            match std::fs::remove_file(&self.reserve) {
                Ok(()) => health.reserve_held = false,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => health.reserve_held = false,
                Err(_) => {}
            }
        }
    }

    fn closed(&self) -> Error {
        Error::DiskFull {
            path: self.path.clone(),
            reason: "the store is closed until it can be reopened".to_owned(),
            source: None,
        }
    }

    fn lock_health(&self) -> std::sync::MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The directory of the reserve (the data directory).
    fn dir(&self) -> &Path {
        self.reserve.parent().unwrap_or(Path::new("."))
    }

    /// Bytes an unprivileged user may still write where the reserve lives.
    fn available(&self) -> Option<u64> {
        let st = rustix::fs::statvfs(self.dir()).ok()?;
        Some(st.f_bavail.saturating_mul(st.f_frsize))
    }

    /// Writes, fsyncs and removes a small file beside the reserve.
    fn trial_write(&self) -> std::io::Result<()> {
        let probe = self.reserve.with_extension("probe");
        let written = write_synced(&probe, PROBE_BYTES as u64);
        let _ = std::fs::remove_file(&probe);
        written
    }

    /// Makes the reserve file durably, whole or not at all.
    fn make_reserve(&self) -> std::io::Result<()> {
        let partial = self.reserve.with_extension("partial");
        let made = write_synced(&partial, self.reserve_len)
            .and_then(|()| std::fs::rename(&partial, &self.reserve));
        if made.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        made?;
        if let Some(dir) = self.reserve.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

/// Fsyncs every file under `dir`, and the directories.
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            sync_tree(&entry.path())?;
        } else if kind.is_file() {
            File::open(entry.path())?.sync_all()?;
        }
    }
    File::open(dir)?.sync_all()
}

/// `e` as [`Error::DiskFull`] when it is a failure for space.
fn disk_full(path: &Path, e: Error) -> Error {
    match e {
        Error::Io { source, .. } if is_out_of_space(source.as_ref()) => Error::DiskFull {
            path: path.to_path_buf(),
            reason: "opening it needs a little room and there is none".to_owned(),
            source: Some(source),
        },
        e => e,
    }
}

/// Writes `len` zero bytes to a new file at `path` and fsyncs it. Zeros
/// written, not a sparse length: a sparse file holds no space.
fn write_synced(path: &Path, len: u64) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let chunk = [0u8; 64 << 10];
    let mut left = len;
    while left > 0 {
        let n = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        file.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    file.sync_all()
}

/// Bytes for a person: `3.2 MiB`.
fn human(bytes: u64) -> String {
    const MIB: f64 = (1 << 20) as f64;
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (MIB * 1024.0))
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / MIB)
    } else {
        format!("{} KiB", bytes / 1024)
    }
}

impl Store for Guarded {
    fn submit(&self, procs: &[ClassAd]) -> Result<u64, Error> {
        let expected = self.call(SledStore::next_cluster);
        match self.call(|s| s.submit(procs)) {
            Err(e) if e.is_disk_full() => {
                // The counter moves only with a whole submit, and callers
                // serialise their submits (see `next_cluster`): past the
                // expected cluster after the reopen means this one landed.
                match (expected, self.call(SledStore::next_cluster)) {
                    (Ok(cluster), Ok(next)) if next > cluster => Ok(cluster),
                    _ => Err(e),
                }
            }
            other => other,
        }
    }

    fn next_cluster(&self) -> Result<u64, Error> {
        self.call(SledStore::next_cluster)
    }

    fn job(&self, id: JobId) -> Result<Option<ClassAd>, Error> {
        self.call(|s| s.job(id))
    }

    fn jobs(&self) -> Result<Vec<(JobId, ClassAd)>, Error> {
        self.call(SledStore::jobs)
    }

    fn update(&self, id: JobId, changes: &[Change]) -> Result<(), Error> {
        self.call(|s| s.update(id, changes))
    }

    fn move_to_history(
        &self,
        id: JobId,
        changes: &[Change],
        finished_at: Timestamp,
    ) -> Result<(), Error> {
        self.call(|s| s.move_to_history(id, changes, finished_at))
    }

    fn apply(&self, batch: &Batch) -> Result<(), Error> {
        self.call(|s| s.apply(batch))
    }

    fn history(&self, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        self.call(|s| s.history(limit))
    }

    fn put_ad(&self, envelope: &Envelope) -> Result<bool, Error> {
        self.call(|s| s.put_ad(envelope))
    }

    fn ads(&self, kind: Kind) -> Result<Vec<Envelope>, Error> {
        self.call(|s| s.ads(kind))
    }

    fn remove_ad(&self, kind: Kind, signer: &PublicKey) -> Result<bool, Error> {
        self.call(|s| s.remove_ad(kind, signer))
    }

    fn expire(&self, now: Timestamp) -> Result<usize, Error> {
        self.call(|s| s.expire(now))
    }

    fn update_usage(&self, user: &str, f: &dyn Fn(Option<Usage>) -> Usage) -> Result<Usage, Error> {
        self.call(|s| s.update_usage(user, f))
    }

    fn usage(&self) -> Result<Vec<(String, Usage)>, Error> {
        self.call(SledStore::usage)
    }

    fn update_favours(
        &self,
        domain: &str,
        f: &dyn Fn(Option<Favours>) -> Favours,
    ) -> Result<Favours, Error> {
        self.call(|s| s.update_favours(domain, f))
    }

    fn favours(&self) -> Result<Vec<(String, Favours)>, Error> {
        self.call(SledStore::favours)
    }

    fn set_factor(&self, user: &str, factor: Factor) -> Result<(), Error> {
        self.call(|s| s.set_factor(user, factor))
    }

    fn factors(&self) -> Result<Vec<(String, Factor)>, Error> {
        self.call(SledStore::factors)
    }

    fn put_claim(&self, claim: &Claim) -> Result<(), Error> {
        self.call(|s| s.put_claim(claim))
    }

    fn remove_claim(&self, id: &[u8]) -> Result<bool, Error> {
        self.call(|s| s.remove_claim(id))
    }

    fn claims(&self) -> Result<Vec<Claim>, Error> {
        self.call(SledStore::claims)
    }

    fn put_checkpoint(&self, id: JobId, record: &[u8]) -> Result<(), Error> {
        self.call(|s| s.put_checkpoint(id, record))
    }

    fn checkpoint(&self, id: JobId) -> Result<Option<Vec<u8>>, Error> {
        self.call(|s| s.checkpoint(id))
    }

    fn remove_checkpoint(&self, id: JobId) -> Result<bool, Error> {
        self.call(|s| s.remove_checkpoint(id))
    }

    fn checkpoints(&self) -> Result<Vec<(JobId, Vec<u8>)>, Error> {
        self.call(SledStore::checkpoints)
    }

    fn next_sequence(&self, kind: Kind) -> Result<u64, Error> {
        self.call(|s| s.next_sequence(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_space_is_recognised_however_sled_wraps_it() {
        let enospc = std::io::Error::from_raw_os_error(28);
        assert!(is_out_of_space(&enospc));
        let edquot = std::io::Error::from_raw_os_error(122);
        assert!(is_out_of_space(&edquot));
        // sled's copy of its global error keeps the kind and the text.
        let copied = std::io::Error::new(enospc.kind(), format!("{enospc:?}"));
        assert!(is_out_of_space(&sled::Error::Io(copied)));
        let wrapped = Error::Io {
            path: PathBuf::from("/x"),
            source: Box::new(sled::Error::Io(std::io::Error::from_raw_os_error(28))),
        };
        assert!(wrapped.is_disk_full());
        // Other failures are not space.
        let eio = std::io::Error::from_raw_os_error(5);
        assert!(!is_out_of_space(&eio));
        assert!(!is_out_of_space(&sled::Error::Io(eio)));
        let denied = Error::Io {
            path: PathBuf::from("/x"),
            source: Box::new(std::io::Error::from_raw_os_error(13)),
        };
        assert!(!denied.is_disk_full());
    }

    #[test]
    fn a_store_with_room_holds_its_reserve_and_is_ok() {
        let dir = tempfile::tempdir().unwrap();
        let reserve = dir.path().join("reserve");
        let store = Guarded::with_reserve(dir.path().join("store"), &reserve, 64 << 10).unwrap();
        assert_eq!(store.space(), Space::Ok);
        assert_eq!(std::fs::metadata(&reserve).unwrap().len(), 64 << 10);
        assert_eq!(store.check(), Space::Ok);
        let ad = starling_protocol::classad::parse_ad("[ Cmd = \"/bin/true\" ]").unwrap();
        assert_eq!(store.submit(&[ad]).unwrap(), 1);
        assert_eq!(store.jobs().unwrap().len(), 1);
    }
}
