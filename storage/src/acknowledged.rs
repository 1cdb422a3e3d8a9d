//! What the store has acknowledged, kept twice: as the [`Tally`] record
//! inside sled (updated in the same transaction as every change), and in
//! the `acknowledged` file beside sled's files, written and flushed after
//! each change is on disk and before the call returns.
//!
//! sled recovers from a damaged or cut log by replaying it up to the first
//! bad entry: what it opens is an older store, consistent with itself, whose
//! own tally agrees with its records. Only a record kept outside sled tells
//! that acknowledged changes went missing; that is this file.
//!
//! # The file
//!
//! Two slots of [`SLOT_LEN`] bytes, written in turn, so a write torn by a
//! crash spoils at most the slot being written and the other still holds
//! the tally before it. The file is made whole (both slots) before it is
//! renamed into place, then only ever overwritten in place: its size never
//! changes, so a write cannot fail for want of space and its flush
//! (`fdatasync`) writes no metadata.
//!
//! # When it is written and flushed
//!
//! Each acknowledging call writes its tally into the file (into the
//! kernel's cache, a few microseconds) after sled's flush and before it
//! returns, so the file is exact at every return against a crash of the
//! process (`kill -9`, a panic, the OOM killer): the kernel still writes it
//! out. A [`Recorder`] thread flushes the file to the disk off the calls'
//! path, at most [`SYNC_INTERVAL`] apart, and when the store closes: a
//! flush on each call would double the cost of a submit (measured:
//! 122 → 302 µs median on the development VM's disk). Against a power cut
//! the file may therefore lag by the changes of the last few milliseconds;
//! it never leads sled, whose own flush came first, so a lag is never taken
//! for damage, and damage that reaches further back is caught.
//!
//! ```text
//! slot = MAGIC "STRLACK1" ‖ length u32 BE ‖ CBOR Tally (length bytes)
//!        ‖ blake3(MAGIC ‖ length ‖ tally) (32 bytes) ‖ zeros to SLOT_LEN
//! ```
//!
//! The valid slot with the higher `version` is the record. Because the file
//! is written after sled's flush, it may lag the store by the calls in
//! flight at a crash, never lead it: a store whose version is below the
//! file's lost acknowledged changes.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::codec::{decode, encode};

/// The file's name in the store's directory.
pub(crate) const FILE: &str = "acknowledged";

/// Bytes per slot: one page, so a slot is usually written in one piece.
pub(crate) const SLOT_LEN: usize = 4096;

const MAGIC: &[u8; 8] = b"STRLACK1";
const HASH_LEN: usize = 32;
/// Largest tally that fits a slot.
const MAX_TALLY_LEN: usize = SLOT_LEN - MAGIC.len() - 4 - HASH_LEN;

/// The store's counters and how many records each tree holds: what every
/// change moves forward, and what an intact store agrees with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tally {
    /// Changes committed, store-wide: every mutating call that changed
    /// something adds one.
    pub(crate) version: u64,
    /// The cluster id the next submit takes (at least 1 once used).
    pub(crate) next_cluster: u64,
    /// Moves to history so far: the key of the newest history record.
    pub(crate) history_seq: u64,
    /// The last sequence number handed out, by envelope kind.
    pub(crate) sequences: BTreeMap<u16, u64>,
    /// Records in each tree, by tree name (absent: none).
    pub(crate) records: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn count(&self, tree: &str) -> u64 {
        self.records.get(tree).copied().unwrap_or(0)
    }

    /// Adds `delta` records to `tree`'s count (never below 0).
    pub(crate) fn add(&mut self, tree: &str, delta: i64) {
        let n = self.count(tree).saturating_add_signed(delta);
        if n == 0 {
            self.records.remove(tree);
        } else {
            self.records.insert(tree.to_owned(), n);
        }
    }
}

/// Why the file cannot be used.
#[derive(Debug)]
pub(crate) enum AckError {
    Io(std::io::Error),
    /// Neither slot holds a tally whose checksum matches.
    Unreadable(String),
    /// The tally does not fit in a slot.
    TooLarge(usize),
}

impl std::fmt::Display for AckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AckError::Io(e) => write!(f, "{e}"),
            AckError::Unreadable(why) => write!(f, "{why}"),
            AckError::TooLarge(len) => write!(
                f,
                "the tally takes {len} bytes, more than the {MAX_TALLY_LEN} a slot holds"
            ),
        }
    }
}

impl From<std::io::Error> for AckError {
    fn from(e: std::io::Error) -> Self {
        AckError::Io(e)
    }
}

fn slot_bytes(tally: &Tally) -> Result<Vec<u8>, AckError> {
    let body = encode(tally);
    if body.len() > MAX_TALLY_LEN {
        return Err(AckError::TooLarge(body.len()));
    }
    let mut slot = Vec::with_capacity(SLOT_LEN);
    slot.extend_from_slice(MAGIC);
    slot.extend_from_slice(&(body.len() as u32).to_be_bytes());
    slot.extend_from_slice(&body);
    let hash = blake3::hash(&slot);
    slot.extend_from_slice(hash.as_bytes());
    slot.resize(SLOT_LEN, 0);
    Ok(slot)
}

/// The tally in one slot, or why not.
fn parse_slot(slot: &[u8]) -> Result<Tally, String> {
    let header = MAGIC.len() + 4;
    if slot.len() < header + HASH_LEN {
        return Err(format!("{} bytes, too short", slot.len()));
    }
    if &slot[..MAGIC.len()] != MAGIC {
        return Err("no slot marker".to_owned());
    }
    let len = u32::from_be_bytes(slot[MAGIC.len()..header].try_into().unwrap_or([0xff; 4]));
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > MAX_TALLY_LEN || header + len + HASH_LEN > slot.len() {
        return Err(format!("a length of {len} bytes, more than a slot holds"));
    }
    let (signed, rest) = slot.split_at(header + len);
    if blake3::hash(signed).as_bytes()[..] != rest[..HASH_LEN] {
        return Err("checksum mismatch".to_owned());
    }
    decode(&signed[header..], MAX_TALLY_LEN, "tally").map_err(|e| e.to_string())
}

/// Reads the file at `path`: `Ok(None)` if there is none.
pub(crate) fn read(path: &Path) -> Result<Option<Tally>, AckError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut bytes = Vec::with_capacity(2 * SLOT_LEN);
    file.take(2 * SLOT_LEN as u64).read_to_end(&mut bytes)?;
    best(&bytes).map(|(tally, _)| Some(tally))
}

/// The newer valid slot's tally and its index.
fn best(bytes: &[u8]) -> Result<(Tally, usize), AckError> {
    let mut found: Option<(Tally, usize)> = None;
    let mut why = Vec::new();
    for index in 0..2 {
        let slot = bytes
            .get(index * SLOT_LEN..)
            .map(|b| &b[..b.len().min(SLOT_LEN)])
            .unwrap_or(&[]);
        match parse_slot(slot) {
            Ok(tally) => {
                if found
                    .as_ref()
                    .is_none_or(|(t, _)| tally.version > t.version)
                {
                    found = Some((tally, index));
                }
            }
            Err(e) => why.push(format!("slot {index}: {e}")),
        }
    }
    found.ok_or_else(|| AckError::Unreadable(why.join(", ")))
}

/// The file, open for writing.
#[derive(Debug)]
pub(crate) struct AckFile {
    file: File,
    /// The slot the next write goes to.
    next_slot: usize,
    /// The version last written.
    written: u64,
}

impl AckFile {
    /// Makes the file anew at `path` holding `tally` in both slots: written
    /// aside, flushed, renamed into place, the directory flushed.
    pub(crate) fn create(path: &Path, tally: &Tally) -> Result<AckFile, AckError> {
        let slot = slot_bytes(tally)?;
        let tmp = path.with_extension("tmp");
        {
            let mut file = File::create(&tmp)?;
            file.write_all(&slot)?;
            file.write_all(&slot)?;
            file.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        AckFile::open(path)
    }

    /// Opens the file at `path` to write it; it must be readable.
    pub(crate) fn open(path: &Path) -> Result<AckFile, AckError> {
        let mut file = OpenOptions::new().read(true).write(true).open(path)?;
        let mut bytes = Vec::with_capacity(2 * SLOT_LEN);
        (&mut file)
            .take(2 * SLOT_LEN as u64)
            .read_to_end(&mut bytes)?;
        let (tally, index) = best(&bytes)?;
        if bytes.len() < 2 * SLOT_LEN {
            // Short (a file from a crashed create is never renamed into
            // place, so this is damage): make it whole again.
            file.set_len(2 * SLOT_LEN as u64)?;
        }
        Ok(AckFile {
            file,
            next_slot: 1 - index,
            written: tally.version,
        })
    }

    /// The version last written.
    #[cfg(test)]
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Records `tally` durably, unless a newer one is recorded already (a
    /// call that finished after it was flushed with it).
    pub(crate) fn write(&mut self, tally: &Tally) -> Result<(), AckError> {
        if self.write_cached(tally)? {
            self.file.sync_data()?;
        }
        Ok(())
    }

    /// Writes `tally` into the kernel's cache, unless a newer one is
    /// recorded already; `true` if it wrote.
    fn write_cached(&mut self, tally: &Tally) -> Result<bool, AckError> {
        if tally.version <= self.written {
            return Ok(false);
        }
        let slot = slot_bytes(tally)?;
        self.file
            .write_all_at(&slot, (self.next_slot * SLOT_LEN) as u64)?;
        self.next_slot = 1 - self.next_slot;
        self.written = tally.version;
        Ok(true)
    }
}

/// The longest a written tally waits for its flush to disk.
pub(crate) const SYNC_INTERVAL: Duration = Duration::from_millis(10);

/// Records tallies as calls acknowledge them, and flushes the file in a
/// thread of its own; the last write is flushed when it is dropped.
#[derive(Debug)]
pub(crate) struct Recorder {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Debug)]
struct State {
    file: AckFile,
    /// Written since the last flush began.
    dirty: bool,
    stop: bool,
    /// Why the last flush failed, told to the next call.
    failed: Option<std::io::Error>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic under the lock leaves the state as consistent as before:
        // every field is set after the I/O it records.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Recorder {
    pub(crate) fn start(file: AckFile) -> Result<Recorder, AckError> {
        let syncing = file.file.try_clone()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                file,
                dirty: false,
                stop: false,
                failed: None,
            }),
            wake: Condvar::new(),
        });
        let thread = std::thread::Builder::new()
            .name("starling-ack".to_owned())
            .spawn({
                let shared = shared.clone();
                move || sync_loop(&shared, &syncing)
            })?;
        Ok(Recorder {
            shared,
            thread: Some(thread),
        })
    }

    /// Writes `tally` (unless a newer one is written) for the thread to
    /// flush. Fails if the write, or the last flush, failed.
    pub(crate) fn record(&self, tally: &Tally) -> Result<(), AckError> {
        let mut state = self.shared.state();
        if let Some(e) = state.failed.take() {
            return Err(e.into());
        }
        if state.file.write_cached(tally)? {
            state.dirty = true;
            self.shared.wake.notify_one();
        }
        Ok(())
    }
}

fn sync_loop(shared: &Shared, file: &File) {
    loop {
        {
            let mut state = shared.state();
            while !state.dirty && !state.stop {
                state = shared.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            if !state.dirty {
                return;
            }
            state.dirty = false;
        }
        if let Err(e) = file.sync_data() {
            shared.state().failed = Some(e);
        }
        std::thread::sleep(SYNC_INTERVAL);
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.shared.state().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tally(version: u64) -> Tally {
        let mut t = Tally {
            version,
            next_cluster: version + 1,
            history_seq: 3,
            ..Tally::default()
        };
        t.sequences.insert(1, 7);
        t.add("jobs", 300);
        t
    }

    #[test]
    fn counts_go_up_and_down_and_vanish_at_zero() {
        let mut t = Tally::default();
        t.add("jobs", 3);
        t.add("jobs", -1);
        assert_eq!(t.count("jobs"), 2);
        t.add("jobs", -5);
        assert_eq!(t.count("jobs"), 0);
        assert!(t.records.is_empty());
    }

    #[test]
    fn the_newest_write_is_read_back_and_survives_a_torn_slot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        assert!(read(&path).unwrap().is_none());
        let mut file = AckFile::create(&path, &tally(1)).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 * SLOT_LEN as u64);
        for v in 2..=5 {
            file.write(&tally(v)).unwrap();
        }
        // Older versions are not written over newer ones.
        file.write(&tally(4)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(tally(5)));
        drop(file);

        // Tear the slot holding 5: 4 is still there.
        let mut bytes = std::fs::read(&path).unwrap();
        let newest = best(&bytes).unwrap().1;
        bytes[newest * SLOT_LEN + 20] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read(&path).unwrap(), Some(tally(4)));
        // Writing goes on in the torn slot, not over the good one.
        let mut file = AckFile::open(&path).unwrap();
        assert_eq!(file.written(), 4);
        file.write(&tally(6)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(tally(6)));

        // Both slots gone: unreadable, named.
        std::fs::write(&path, vec![0; 2 * SLOT_LEN]).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("slot 0: no slot marker"), "{err}");
        std::fs::write(&path, b"").unwrap();
        assert!(read(&path).is_err());
    }

    #[test]
    fn a_cut_file_keeps_its_whole_first_slot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut file = AckFile::create(&path, &tally(1)).unwrap();
        file.write(&tally(2)).unwrap();
        drop(file);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..SLOT_LEN + 100]).unwrap();
        // Slot 1 (version 2) is cut; slot 0 (version 1) stands.
        assert_eq!(read(&path).unwrap(), Some(tally(1)));
        let mut file = AckFile::open(&path).unwrap();
        file.write(&tally(3)).unwrap();
        assert_eq!(read(&path).unwrap(), Some(tally(3)));
    }

    #[test]
    fn a_recorder_writes_at_once_and_flushes_by_the_time_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let recorder = Recorder::start(AckFile::create(&path, &tally(1)).unwrap()).unwrap();
        for v in 2..=50 {
            recorder.record(&tally(v)).unwrap();
            // Readable at once: in the kernel's cache.
            assert_eq!(read(&path).unwrap(), Some(tally(v)));
        }
        recorder.record(&tally(7)).unwrap();
        drop(recorder);
        assert_eq!(read(&path).unwrap(), Some(tally(50)));
    }

    #[test]
    fn a_huge_length_is_refused_not_allocated() {
        let mut slot = slot_bytes(&tally(1)).unwrap();
        slot[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(parse_slot(&slot)
            .unwrap_err()
            .contains("more than a slot holds"));
    }

    proptest! {
        #[test]
        fn damaged_files_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..(2 * SLOT_LEN + 10)),
            flips in proptest::collection::vec(any::<usize>(), 0..4),
        ) {
            let _ = best(&bytes);
            let mut good = slot_bytes(&tally(9)).unwrap();
            good.extend(slot_bytes(&tally(8)).unwrap());
            for f in flips {
                let i = f % good.len();
                good[i] ^= 1;
            }
            if let Ok((t, _)) = best(&good) {
                prop_assert!(t == tally(9) || t == tally(8));
            }
        }
    }
}
