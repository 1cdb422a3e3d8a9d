//! Finding damage in a store and recovering what still reads: what
//! [`crate::SledStore::open`] checks before it hands a store out, and what
//! `starling store check` and `starling store salvage` run ([`check`],
//! [`salvage`]).
//!
//! Damage is judged from three sources that must agree: the records
//! themselves (each sealed, [`crate::seal`]), the store's own tally of what
//! it holds (`meta/tally`, written in every transaction), and the
//! `acknowledged` file beside sled's, written after every acknowledged
//! change ([`crate::acknowledged`]). A record whose seal fails is damaged; a
//! tree holding fewer records than the tally says lost some; a tally behind
//! the acknowledged one means sled recovered an older state (its files were
//! cut short or damaged) and acknowledged changes are gone, even if every
//! record left is sound.
//!
//! [`check`] and [`salvage`] never open the store in place: they work on a
//! copy beside it (sled may rewrite a damaged log's tail when it opens it),
//! so they need as much free space as the store takes. An agent that
//! refused to start did open it in place: what it left is what sled
//! recovers, so nothing readable is lost by that. [`salvage`] never
//! deletes the damaged store: it builds a fresh store from every record that
//! verifies and swaps it in, in one step, for the damaged one, which stays
//! as `store.damaged-<time>`. Counters are carried forward from whichever
//! of the tally and the acknowledged file is higher, so no cluster id,
//! history number or envelope sequence number is handed out twice.

use std::path::{Path, PathBuf};

use starling_protocol::identity::Timestamp;

use crate::acknowledged::{self, Tally};
use crate::codec::{
    decode, describe_ad_key, expiry_key, hex, parse_job_key, AdRecord, ClaimRecord, FactorRecord,
    FavoursRecord, HistoryRecord, UsageRecord, MAX_AD_LEN, MAX_HISTORY_LEN, MAX_SMALL_LEN,
};
use crate::job::{decode_attrs, MAX_CHECKPOINT_LEN};
use crate::seal::unseal;
use crate::sled_store::{
    SledStore, ADS, AD_EXPIRY, CHECKPOINTS, CLAIMS, FACTORS, FAVOURS, HISTORY, JOBS, USAGE,
};
use crate::Error;

/// What is handed each record that verifies: its tree, key and payload.
pub(crate) type Keep<'a> = dyn FnMut(&'static str, &[u8], &[u8]) + 'a;

/// Records as keys and payloads.
pub(crate) type Records = Vec<(Vec<u8>, Vec<u8>)>;

/// Damaged records named one by one in a report, per tree; the rest are
/// counted.
const MAX_NAMED: usize = 10;

/// One kind of record, as checks and reports name it.
pub(crate) struct RecordKind {
    /// The sled tree.
    pub(crate) tree: &'static str,
    /// What an administrator calls the store it makes up.
    pub(crate) store: &'static str,
    /// What its records are.
    pub(crate) unit: &'static str,
    /// Whether a key and payload that passed the seal make a record.
    check: fn(&[u8], &[u8]) -> Result<(), String>,
}

/// Every tree but `meta`, in the order reports list them.
pub(crate) const KINDS: &[RecordKind] = &[
    RecordKind {
        tree: JOBS,
        store: "queue",
        unit: "jobs",
        check: |key, payload| {
            parse_job_key(key)
                .filter(|_| key.len() == 12)
                .ok_or("a bad key")?;
            decode_attrs(payload).map_err(|e| e.to_string())?;
            Ok(())
        },
    },
    RecordKind {
        tree: HISTORY,
        store: "history",
        unit: "jobs",
        check: |key, payload| {
            (key.len() == 8).then_some(()).ok_or("a bad key")?;
            decode::<HistoryRecord>(payload, MAX_HISTORY_LEN, "history record")
                .map_err(|e| e.to_string())?;
            Ok(())
        },
    },
    RecordKind {
        tree: CLAIMS,
        store: "claims",
        unit: "claims",
        check: |key, payload| {
            let record: ClaimRecord =
                decode(payload, MAX_SMALL_LEN, "claim").map_err(|e| e.to_string())?;
            record.into_claim(key.to_vec()).map(drop)
        },
    },
    RecordKind {
        tree: ADS,
        store: "view",
        unit: "ads",
        check: |key, payload| {
            (key.len() == 34).then_some(()).ok_or("a bad key")?;
            decode::<AdRecord>(payload, MAX_AD_LEN, "ad record").map_err(|e| e.to_string())?;
            Ok(())
        },
    },
    RecordKind {
        tree: AD_EXPIRY,
        store: "view index",
        unit: "entries",
        check: |key, payload| {
            (key.len() == 42 && payload.is_empty())
                .then_some(())
                .ok_or_else(|| "a bad entry".to_owned())
        },
    },
    RecordKind {
        tree: USAGE,
        store: "usage",
        unit: "users",
        check: |key, payload| {
            std::str::from_utf8(key).map_err(|_| "a key that is not UTF-8")?;
            decode::<UsageRecord>(payload, MAX_SMALL_LEN, "usage").map_err(|e| e.to_string())?;
            Ok(())
        },
    },
    RecordKind {
        tree: FAVOURS,
        store: "favours",
        unit: "domains",
        check: |key, payload| {
            std::str::from_utf8(key).map_err(|_| "a key that is not UTF-8")?;
            decode::<FavoursRecord>(payload, MAX_SMALL_LEN, "favours")
                .map_err(|e| e.to_string())?;
            Ok(())
        },
    },
    RecordKind {
        tree: FACTORS,
        store: "priority factors",
        unit: "users",
        check: |key, payload| {
            std::str::from_utf8(key).map_err(|_| "a key that is not UTF-8")?;
            decode::<FactorRecord>(payload, MAX_SMALL_LEN, "factors").map_err(|e| e.to_string())?;
            Ok(())
        },
    },
    RecordKind {
        tree: CHECKPOINTS,
        store: "checkpoints",
        unit: "records",
        check: |key, payload| {
            parse_job_key(key)
                .filter(|_| key.len() == 12)
                .ok_or("a bad key")?;
            if payload.len() > MAX_CHECKPOINT_LEN {
                return Err(format!(
                    "{} bytes, more than the limit of {MAX_CHECKPOINT_LEN}",
                    payload.len()
                ));
            }
            Ok(())
        },
    },
];

/// A record's name in messages: `job 7.0`, `history record 12`.
pub(crate) fn describe(tree: &str, key: &[u8]) -> String {
    let text = || format!("{:?}", String::from_utf8_lossy(key));
    match tree {
        JOBS => match parse_job_key(key).filter(|_| key.len() == 12) {
            Some(id) => format!("job {id}"),
            None => format!("job with bad key {}", hex(key)),
        },
        HISTORY => match <[u8; 8]>::try_from(key) {
            Ok(n) => format!("history record {}", u64::from_be_bytes(n)),
            Err(_) => format!("history record with bad key {}", hex(key)),
        },
        ADS => describe_ad_key(key),
        AD_EXPIRY => format!("expiry entry {}", hex(key)),
        USAGE => format!("usage of {}", text()),
        FAVOURS => format!("favours with {}", text()),
        FACTORS => format!("priority factor of {}", text()),
        CLAIMS => format!("claim {}", hex(key)),
        CHECKPOINTS => match parse_job_key(key).filter(|_| key.len() == 12) {
            Some(id) => format!("checkpoint of job {id}"),
            None => format!("checkpoint with bad key {}", hex(key)),
        },
        _ => format!("{tree}/{}", hex(key)),
    }
}

pub use crate::error::{Damage, Problem};

/// How one store of records fared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    /// `queue`, `history`...
    pub store: &'static str,
    /// `jobs`, `ads`...
    pub unit: &'static str,
    /// Records that verify.
    pub intact: u64,
    /// Records present whose seal or contents are wrong.
    pub damaged: u64,
    /// How many the last acknowledged change left (from `acknowledged`, or
    /// the store's own tally when that file is unreadable); `None` when
    /// neither can be read.
    pub acknowledged: Option<u64>,
}

impl Count {
    /// Acknowledged records that are not intact.
    pub fn lost(&self) -> u64 {
        match self.acknowledged {
            Some(n) => n.saturating_sub(self.intact).max(self.damaged),
            None => self.damaged,
        }
    }
}

/// What a check found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The store checked.
    pub path: PathBuf,
    /// Per store of records, in a fixed order (queue first).
    pub counts: Vec<Count>,
    /// Everything wrong; empty when the store is intact.
    pub problems: Vec<Problem>,
    /// The store's own tally, if it reads.
    pub(crate) tally: Option<Tally>,
    /// The acknowledged tally, if the file reads.
    pub(crate) acknowledged: Option<Tally>,
}

impl Report {
    pub fn is_intact(&self) -> bool {
        self.problems.is_empty()
    }

    /// Changes the store had acknowledged, by `acknowledged`.
    pub fn acknowledged_version(&self) -> Option<u64> {
        self.acknowledged.as_ref().map(|t| t.version)
    }

    /// Changes the store holds, by its own tally.
    pub fn store_version(&self) -> Option<u64> {
        self.tally.as_ref().map(|t| t.version)
    }
}

/// What reading one tree found.
pub(crate) struct TreeScan {
    kind: &'static RecordKind,
    intact: u64,
    damaged: u64,
    named: Vec<String>,
    /// sled failed part-way.
    unreadable: Option<String>,
}

/// Reads every record of `tree`, handing each that verifies to `keep`.
pub(crate) fn scan(kind: &'static RecordKind, tree: &sled::Tree, keep: &mut Keep<'_>) -> TreeScan {
    let mut scan = TreeScan {
        kind,
        intact: 0,
        damaged: 0,
        named: Vec::new(),
        unreadable: None,
    };
    for item in tree.iter() {
        let (key, value) = match item {
            Ok(item) => item,
            Err(e) => {
                scan.unreadable = Some(e.to_string());
                break;
            }
        };
        let verdict = unseal(kind.tree, &key, &value)
            .map_err(|e| e.to_string())
            .and_then(|payload| (kind.check)(&key, payload).map(|()| payload));
        match verdict {
            Ok(payload) => {
                scan.intact += 1;
                keep(kind.tree, &key, payload);
            }
            Err(why) => {
                scan.damaged += 1;
                if scan.named.len() < MAX_NAMED {
                    scan.named
                        .push(format!("{}: {why}", describe(kind.tree, &key)));
                }
            }
        }
    }
    scan
}

/// Judges what the scans found against the store's tally and the
/// acknowledged one.
pub(crate) fn judge(
    path: &Path,
    scans: Vec<TreeScan>,
    tally: Result<Tally, String>,
    acknowledged: Result<Option<Tally>, String>,
) -> Report {
    let mut problems = Vec::new();
    let mut cut = Vec::new();
    let ack = acknowledged.as_ref().ok().and_then(Option::as_ref);
    let own = tally.as_ref().ok();
    let behind = match (own, ack) {
        (Some(own), Some(ack)) => own.version < ack.version,
        _ => false,
    };
    let mut counts = Vec::new();
    for scan in &scans {
        let kind = scan.kind;
        let present = scan.intact + scan.damaged;
        for named in &scan.named {
            problems.push(Problem::new(kind.store, named.clone()));
        }
        if scan.damaged > scan.named.len() as u64 {
            problems.push(Problem::new(
                kind.store,
                format!(
                    "and {} more damaged {}",
                    scan.damaged - scan.named.len() as u64,
                    kind.unit
                ),
            ));
        }
        if let Some(e) = &scan.unreadable {
            problems.push(Problem::new(
                kind.store,
                format!("sled could not read past {present} {}: {e}", kind.unit),
            ));
        }
        if let Some(own) = own {
            let expected = own.count(kind.tree);
            if present < expected {
                problems.push(Problem::new(
                    kind.store,
                    format!(
                        "{} of {expected} {} its tally records are missing",
                        expected - present,
                        kind.unit
                    ),
                ));
            } else if present > expected {
                problems.push(Problem::new(
                    kind.store,
                    format!(
                        "{} {} more than its tally records ({expected})",
                        present - expected,
                        kind.unit
                    ),
                ));
            }
        }
        if let (true, Some(ack)) = (behind, ack) {
            let acked = ack.count(kind.tree);
            if scan.intact < acked {
                cut.push(Problem::new(
                    kind.store,
                    format!(
                        "{} of {acked} acknowledged {} missing (the store was cut short?)",
                        acked - scan.intact,
                        kind.unit
                    ),
                ));
            }
        }
        counts.push(Count {
            store: kind.store,
            unit: kind.unit,
            intact: scan.intact,
            damaged: scan.damaged,
            acknowledged: ack.or(own).map(|t| t.count(kind.tree)),
        });
    }
    // What was cut short comes first: it is what an administrator must
    // know before anything else.
    problems.splice(0..0, cut);
    if let Err(e) = &tally {
        problems.push(Problem::new("store", e.clone()));
    }
    match (&acknowledged, own) {
        (Err(e), _) => problems.push(Problem::new(
            "store",
            format!(
                "the record of acknowledged changes ({}) is unreadable ({e}): whether changes \
                 were lost cannot be told",
                path.join(acknowledged::FILE).display()
            ),
        )),
        (Ok(None), Some(own)) if own.version > 0 => problems.push(Problem::new(
            "store",
            format!(
                "the record of acknowledged changes ({}) is missing: whether changes were \
                 lost cannot be told",
                path.join(acknowledged::FILE).display()
            ),
        )),
        (Ok(Some(ack)), Some(own)) => {
            if own.version < ack.version {
                problems.push(Problem::new(
                    "store",
                    format!(
                        "it holds {} changes but {} were acknowledged: sled recovered an \
                         older state (its files were cut short or damaged)",
                        own.version, ack.version
                    ),
                ));
            } else if own.version == ack.version && own != ack {
                problems.push(Problem::new(
                    "store",
                    "its tally differs from the acknowledged one at the same version",
                ));
            }
            if own.next_cluster < ack.next_cluster {
                problems.push(Problem::new(
                    "queue",
                    format!(
                        "cluster ids up to {} were handed out, but it would hand out {} again",
                        ack.next_cluster - 1,
                        own.next_cluster.max(1)
                    ),
                ));
            }
        }
        _ => {}
    }
    Report {
        path: path.to_owned(),
        counts,
        problems,
        tally: tally.ok(),
        acknowledged: acknowledged.ok().flatten(),
    }
}

/// A copy of a store beside it, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn copy_of(store: &Path, what: &str) -> Result<Scratch, Error> {
        let name = store
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "store".to_owned());
        let path = store.with_file_name(format!(".{name}.{what}-{}", std::process::id()));
        let scratch = Scratch(path);
        if scratch.0.exists() {
            // Ours: a run of this same process id that did not finish.
            let _ = std::fs::remove_dir_all(&scratch.0);
        }
        copy_dir(store, &scratch.0, 0).map_err(|source| Error::Io {
            path: scratch.0.clone(),
            source: format!(
                "copying the store to examine it (that needs as much free space as the store \
                 takes): {source}"
            )
            .into(),
        })?;
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies regular files and directories, a few levels deep (sled keeps
/// `blobs/` under its directory).
fn copy_dir(from: &Path, to: &Path, depth: usize) -> std::io::Result<()> {
    if depth > 4 {
        return Ok(());
    }
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target, depth + 1)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// An error about the scratch copy, told of the store it copies.
fn about(e: Error, copy: &Path, store: &Path) -> Error {
    let fix = |p: PathBuf| if p == copy { store.to_owned() } else { p };
    match e {
        Error::Damaged { path, damage } => Error::Damaged {
            path: fix(path),
            damage,
        },
        Error::Corrupt { path, what, source } => Error::Corrupt {
            path: fix(path),
            what,
            source,
        },
        Error::NewerSchema {
            path,
            found,
            supported,
        } => Error::NewerSchema {
            path: fix(path),
            found,
            supported,
        },
        e => e,
    }
}

fn no_store(path: &Path) -> Error {
    Error::invalid(format!("there is no store at {}", path.display()))
}

/// Examines a copy of the store at `store`; damage that leaves nothing to
/// read becomes the report's only problem.
fn inspect(store: &Path, copy: &Path, keep: &mut Keep<'_>) -> Result<Report, Error> {
    match SledStore::examine(copy, keep) {
        Ok((opened, mut report)) => {
            drop(opened);
            report.path = store.to_owned();
            Ok(report)
        }
        Err(Error::Damaged { damage, .. }) => {
            let acknowledged = acknowledged::read(&copy.join(acknowledged::FILE))
                .ok()
                .flatten();
            let counts = KINDS
                .iter()
                .map(|kind| Count {
                    store: kind.store,
                    unit: kind.unit,
                    intact: 0,
                    damaged: 0,
                    acknowledged: acknowledged.as_ref().map(|t| t.count(kind.tree)),
                })
                .collect();
            Ok(Report {
                path: store.to_owned(),
                counts,
                problems: damage.problems,
                tally: None,
                acknowledged,
            })
        }
        Err(e) => Err(about(e, copy, store)),
    }
}

/// Checks the store at `path` (a store's directory, `<data>/store`) without
/// changing it: every record's seal, the counts, the tally against the
/// acknowledged one. The store must not be open (stop its agent first).
pub fn check(path: &Path) -> Result<Report, Error> {
    if !path.is_dir() {
        return Err(no_store(path));
    }
    let copy = Scratch::copy_of(path, "check")?;
    inspect(path, &copy.0, &mut |_, _, _| {})
}

/// What [`salvage`] did.
#[derive(Debug)]
pub struct Salvaged {
    /// The check of the damaged store.
    pub report: Report,
    /// Where the damaged store now is; `None` when it was intact and
    /// nothing was done.
    pub aside: Option<PathBuf>,
    /// Records per store in the fresh store (`intact`), against what was
    /// acknowledged; `damaged` counts those left behind.
    pub recovered: Vec<Count>,
    /// The cluster id the fresh store hands out next.
    pub next_cluster: u64,
}

/// Keeps the damaged store at `path` aside as `<path>.damaged-<now>` and
/// puts in its place a fresh store holding every record of it that
/// verifies, with its counters carried forward so that no id is handed out
/// twice. An intact store is left as it is. The store must not be open.
pub fn salvage(path: &Path, now: Timestamp) -> Result<Salvaged, Error> {
    if !path.is_dir() {
        return Err(no_store(path));
    }
    let copy = Scratch::copy_of(path, "salvage")?;
    let mut kept: Vec<(&'static str, Records)> =
        KINDS.iter().map(|k| (k.tree, Vec::new())).collect();
    let report = inspect(path, &copy.0, &mut |tree, key, payload| {
        if let Some((_, records)) = kept.iter_mut().find(|(t, _)| *t == tree) {
            records.push((key.to_vec(), payload.to_vec()));
        }
    })?;
    if report.is_intact() {
        return Ok(Salvaged {
            recovered: report.counts.clone(),
            next_cluster: report.tally.as_ref().map_or(1, |t| t.next_cluster.max(1)),
            report,
            aside: None,
        });
    }
    let tally = carried_tally(&report, &mut kept);
    drop(copy);

    let aside = free_name(path, &format!("damaged-{}", stamp(now)));
    // The fresh store is made under the name the damaged one will take,
    // then the two are swapped in one step: there is never a moment with
    // no store in place (an agent would start an empty one).
    let tally = SledStore::rebuild(&aside, &kept, tally).map_err(|e| about(e, &aside, path))?;
    swap(path, &aside).map_err(|source| Error::Io {
        path: path.to_owned(),
        source: format!(
            "putting the salvaged store {} in place of the damaged one: {source}",
            aside.display()
        )
        .into(),
    })?;
    // `kept` is in the order of KINDS, as the counts are.
    let recovered = report
        .counts
        .iter()
        .zip(&kept)
        .map(|(c, (_, records))| Count {
            intact: records.len() as u64,
            ..c.clone()
        })
        .collect();
    Ok(Salvaged {
        report,
        aside: Some(aside),
        recovered,
        next_cluster: tally.next_cluster.max(1),
    })
}

/// The tally for a salvaged store: counters at the highest of the store's
/// tally, the acknowledged one and what the kept records show; the view's
/// expiry index rebuilt from the kept ads; job records whose ads no longer
/// parse dropped. Counts are left to the rebuild.
fn carried_tally(report: &Report, kept: &mut [(&'static str, Records)]) -> Tally {
    let mut tally = Tally::default();
    for known in [report.tally.as_ref(), report.acknowledged.as_ref()]
        .into_iter()
        .flatten()
    {
        tally.version = tally.version.max(known.version);
        tally.next_cluster = tally.next_cluster.max(known.next_cluster);
        tally.history_seq = tally.history_seq.max(known.history_seq);
        for (&kind, &last) in &known.sequences {
            let seq = tally.sequences.entry(kind).or_insert(0);
            *seq = (*seq).max(last);
        }
    }
    tally.version += 1;
    let mut expiry = Vec::new();
    for (tree, records) in kept.iter_mut() {
        match *tree {
            JOBS => {
                records.retain(|(key, payload)| {
                    let Some(id) = parse_job_key(key) else {
                        return false;
                    };
                    let parses = decode_attrs(payload)
                        .ok()
                        .is_some_and(|attrs| attrs.to_ad("").is_ok());
                    if parses {
                        tally.next_cluster = tally.next_cluster.max(id.cluster.saturating_add(1));
                    }
                    parses
                });
            }
            HISTORY => {
                for (key, payload) in records.iter() {
                    if let Ok(n) = <[u8; 8]>::try_from(&key[..]) {
                        tally.history_seq = tally.history_seq.max(u64::from_be_bytes(n));
                    }
                    if let Ok(r) = decode::<HistoryRecord>(payload, MAX_HISTORY_LEN, "history") {
                        tally.next_cluster = tally.next_cluster.max(r.cluster.saturating_add(1));
                    }
                }
            }
            ADS => {
                for (key, payload) in records.iter() {
                    let (Ok(ad_key), Ok(record)) = (
                        <[u8; 34]>::try_from(&key[..]),
                        decode::<AdRecord>(payload, MAX_AD_LEN, "ad record"),
                    ) else {
                        continue;
                    };
                    let at = Timestamp::from_unix_millis(record.expires_at);
                    expiry.push((expiry_key(at, &ad_key).to_vec(), Vec::new()));
                }
            }
            _ => {}
        }
    }
    if let Some((_, records)) = kept.iter_mut().find(|(t, _)| *t == AD_EXPIRY) {
        *records = expiry;
    }
    tally
}

/// `20261122T100000Z`.
fn stamp(now: Timestamp) -> String {
    now.to_string().replace(['-', ':'], "")
}

/// `<path>.<suffix>`, or with `-2`, `-3`... if that is taken.
fn free_name(path: &Path, suffix: &str) -> PathBuf {
    let base = path.as_os_str().to_string_lossy().into_owned();
    let mut candidate = PathBuf::from(format!("{base}.{suffix}"));
    let mut n = 2;
    while candidate.exists() {
        candidate = PathBuf::from(format!("{base}.{suffix}-{n}"));
        n += 1;
    }
    candidate
}

/// Swaps two directories in one step (Linux `renameat2` with
/// `RENAME_EXCHANGE`), then flushes their parent.
fn swap(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE)?;
    if let Some(parent) = a.parent() {
        std::fs::File::open(parent)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(version: u64, jobs: i64) -> Tally {
        let mut t = Tally {
            version,
            next_cluster: 21,
            ..Tally::default()
        };
        t.add(JOBS, jobs);
        t
    }

    fn scans(intact: u64) -> Vec<TreeScan> {
        KINDS
            .iter()
            .map(|kind| TreeScan {
                kind,
                intact: if kind.tree == JOBS { intact } else { 0 },
                damaged: 0,
                named: Vec::new(),
                unreadable: None,
            })
            .collect()
    }

    #[test]
    fn an_agreeing_store_is_intact() {
        let report = judge(
            Path::new("s"),
            scans(300),
            Ok(tally(9, 300)),
            Ok(Some(tally(9, 300))),
        );
        assert!(report.is_intact(), "{:?}", report.problems);
        // Ahead of the file (a crash between the two flushes) is fine.
        let report = judge(
            Path::new("s"),
            scans(299),
            Ok(tally(10, 299)),
            Ok(Some(tally(9, 300))),
        );
        assert!(report.is_intact(), "{:?}", report.problems);
    }

    #[test]
    fn a_store_behind_what_it_acknowledged_is_cut_short() {
        let mut older = tally(3, 88);
        older.next_cluster = 7;
        let report = judge(
            Path::new("s"),
            scans(88),
            Ok(older),
            Ok(Some(tally(9, 300))),
        );
        let text: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            text[0],
            "queue: 212 of 300 acknowledged jobs missing (the store was cut short?)"
        );
        assert!(text
            .iter()
            .any(|t| t.contains("holds 3 changes but 9 were acknowledged")));
        assert!(text
            .iter()
            .any(|t| t.contains("cluster ids up to 20 were handed out, but it would hand out 7")));
        let queue = &report.counts[0];
        assert_eq!(
            (queue.intact, queue.acknowledged, queue.lost()),
            (88, Some(300), 212)
        );
    }

    #[test]
    fn records_missing_from_the_tally_or_damaged_are_named() {
        let mut s = scans(250);
        s[0].damaged = 12;
        s[0].named = (0..MAX_NAMED)
            .map(|i| format!("job {i}.0: checksum mismatch"))
            .collect();
        let report = judge(
            Path::new("s"),
            s,
            Ok(tally(9, 300)),
            Ok(Some(tally(9, 300))),
        );
        let text: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
        assert_eq!(text[0], "queue: job 0.0: checksum mismatch");
        assert!(
            text.contains(&"queue: and 2 more damaged jobs".to_owned()),
            "{text:?}"
        );
        assert!(
            text.contains(&"queue: 38 of 300 jobs its tally records are missing".to_owned()),
            "{text:?}"
        );
        let damage = Damage::new(report.problems);
        assert!(damage.to_string().ends_with("more"), "{damage}");
    }

    #[test]
    fn a_missing_or_unreadable_acknowledged_file_is_damage() {
        let report = judge(Path::new("s"), scans(3), Ok(tally(9, 3)), Ok(None));
        assert!(report.problems[0].what.contains("is missing"));
        let report = judge(
            Path::new("s"),
            scans(3),
            Ok(tally(9, 3)),
            Err("slot 0: x".into()),
        );
        assert!(report.problems[0]
            .what
            .contains("is unreadable (slot 0: x)"));
        // A new store has none yet.
        let report = judge(Path::new("s"), scans(0), Ok(Tally::default()), Ok(None));
        assert!(report.is_intact());
    }

    #[test]
    fn names_are_stamped_and_free() {
        let t = Timestamp::from_unix_secs(1_795_000_000);
        assert_eq!(stamp(t), "20261118T110640Z");
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        std::fs::create_dir(store.with_file_name("store.damaged-x")).unwrap();
        assert_eq!(
            free_name(&store, "damaged-x"),
            dir.path().join("store.damaged-x-2")
        );
    }
}
