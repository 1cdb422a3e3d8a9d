//! Damage is caught, never papered over (issue 27, item 2): a store holding
//! 300 acknowledged jobs, cut short or with a byte flipped while nothing
//! has it open, is refused at open naming what is missing; `check` reports
//! it without changing a byte; `salvage` keeps the damaged store aside and
//! leaves a store that opens with the jobs that survived, and no id is
//! handed out twice afterwards. Garbage anywhere never panics.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use starling_protocol::cbor;
use starling_protocol::classad::parse_ad;
use starling_protocol::identity::{Kind, Timestamp};
use starling_storage::damage::{check, salvage};
use starling_storage::{Change, Error, JobId, SledStore, Store};

const CLUSTERS: u64 = 20;
const PROCS: u32 = 15;

/// A store with 300 acknowledged jobs in 20 clusters (and a few other
/// changes), closed; and the ids of its jobs.
fn seeded() -> (tempfile::TempDir, PathBuf, BTreeSet<JobId>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let store = SledStore::open(&path).unwrap();
    let job = parse_ad(
        r#"[ Cmd = "/bin/sleep"; Args = "60"; Owner = "alice@lab"; RequestCpus = 1;
             RequestMemory = 1024; Requirements = TARGET.Memory >= RequestMemory ]"#,
    )
    .unwrap();
    for _ in 0..CLUSTERS {
        store.submit(&vec![job.clone(); PROCS as usize]).unwrap();
        store.next_sequence(Kind::MACHINE_AD).unwrap();
    }
    store
        .update(JobId::new(3, 1), &[Change::set("Held", "true")])
        .unwrap();
    let ids = store
        .jobs()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    drop(store);
    (dir, path, ids)
}

/// A copy of the store directory `from` at `to`.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Every file under `dir` and its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                let rel = entry.path().strip_prefix(dir).unwrap().to_owned();
                out.push((rel, std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Opens, waiting out sled's lock from a store just dropped in this process.
fn open(path: &Path) -> Result<SledStore, Error> {
    let started = Instant::now();
    loop {
        match SledStore::open(path) {
            Err(Error::Locked { .. }) if started.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

fn damage_text(result: Result<SledStore, Error>) -> String {
    match result {
        Err(err @ Error::Damaged { .. }) => err.to_string(),
        Err(other) => panic!("expected damage, got {other}"),
        Ok(store) => panic!(
            "a damaged store opened with {} jobs",
            store.jobs().unwrap().len()
        ),
    }
}

/// Damages the store at `path` as `how` says: `cut-N` keeps N% of sled's
/// `db` file, `flip` flips one bit in its middle.
fn damage(path: &Path, how: &str) {
    let db = path.join("db");
    let mut bytes = std::fs::read(&db).unwrap();
    match how.strip_prefix("cut-") {
        Some(percent) => bytes.truncate(bytes.len() * percent.parse::<usize>().unwrap() / 100),
        None => {
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x10;
        }
    }
    std::fs::write(&db, bytes).unwrap();
}

#[test]
fn cut_or_flipped_stores_are_refused_checked_and_salvaged() {
    let (dir, pristine, ids) = seeded();
    assert_eq!(ids.len(), 300);
    for how in ["cut-25", "cut-50", "cut-75", "cut-90", "flip"] {
        let path = dir.path().join(how).join("store");
        copy(&pristine, &path);
        damage(&path, how);

        // Refused at open, the queue's loss first. (sled's recovery may
        // tidy the damaged log's tail as it opens it.)
        let text = damage_text(open(&path));
        let before = snapshot(&path);
        eprintln!("{how}: {text}");
        assert!(text.contains("acknowledged jobs missing"), "{how}: {text}");
        assert!(text.contains("starling store salvage"), "{how}: {text}");

        // Checked without changing a byte.
        let report = check(&path).unwrap();
        assert!(!report.is_intact(), "{how}");
        let queue = &report.counts[0];
        assert_eq!(queue.store, "queue");
        assert_eq!(queue.acknowledged, Some(300), "{how}");
        assert!(queue.intact < 300 && queue.lost() > 0, "{how}: {queue:?}");
        assert!(snapshot(&path) == before, "{how}: check changed the store");
        let no_scratch = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(no_scratch, 1, "{how}: check left its copy behind");

        // Salvaged: the damaged store kept whole, the fresh one opens with
        // what survived, ids go on from the highest handed out.
        let salvaged = salvage(&path, Timestamp::from_unix_secs(1_800_000_000)).unwrap();
        let aside = salvaged.aside.clone().expect("moved aside");
        assert_eq!(
            aside.file_name().unwrap().to_string_lossy(),
            "store.damaged-20270115T080000Z"
        );
        assert!(
            snapshot(&aside) == before,
            "{how}: the damaged store changed"
        );
        assert_eq!(salvaged.next_cluster, CLUSTERS + 1, "{how}");
        let store = open(&path).unwrap();
        let jobs: BTreeSet<JobId> = store
            .jobs()
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert!(jobs.is_subset(&ids), "{how}: jobs that were never there");
        assert_eq!(jobs.len() as u64, salvaged.recovered[0].intact, "{how}");
        eprintln!("{how}: {} of 300 jobs recovered", jobs.len());
        assert_eq!(
            store.submit(&[parse_ad("[]").unwrap()]).unwrap(),
            CLUSTERS + 1
        );
        assert_eq!(
            store.next_sequence(Kind::MACHINE_AD).unwrap(),
            CLUSTERS + 1,
            "{how}: a sequence number handed out again"
        );
        drop(store);
        assert!(check(&path).unwrap().is_intact(), "{how}");
    }
}

#[test]
fn an_intact_store_checks_clean_and_salvage_leaves_it_be() {
    let (dir, path, _) = seeded();
    let report = check(&path).unwrap();
    assert!(report.is_intact(), "{:?}", report.problems);
    assert_eq!(report.counts[0].intact, 300);
    assert_eq!(report.acknowledged_version(), report.store_version());
    let before = snapshot(&path);
    let salvaged = salvage(&path, Timestamp::from_unix_secs(1)).unwrap();
    assert!(salvaged.aside.is_none());
    assert!(snapshot(&path) == before);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let err = check(&dir.path().join("nothing")).unwrap_err();
    assert!(err.to_string().contains("there is no store at"), "{err}");
}

#[test]
fn the_acknowledged_record_lost_or_unreadable_is_damage() {
    let (dir, pristine, _) = seeded();
    for how in ["deleted", "zeroed"] {
        let path = dir.path().join(how).join("store");
        copy(&pristine, &path);
        let ack = path.join("acknowledged");
        match how {
            "deleted" => std::fs::remove_file(&ack).unwrap(),
            _ => std::fs::write(&ack, vec![0; 8192]).unwrap(),
        }
        let text = damage_text(open(&path));
        assert!(
            text.contains("the record of acknowledged changes"),
            "{how}: {text}"
        );
        // Every record is there; salvage writes a new record of them.
        let salvaged = salvage(&path, Timestamp::from_unix_secs(2)).unwrap();
        assert_eq!(salvaged.recovered[0].intact, 300);
        assert_eq!(open(&path).unwrap().jobs().unwrap().len(), 300);
    }
}

#[test]
fn a_version_1_store_is_upgraded_on_first_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    {
        let db = sled::open(&path).unwrap();
        let meta = db.open_tree("meta").unwrap();
        meta.insert("schema", cbor::encode(&1u32)).unwrap();
        meta.insert("next_cluster", cbor::encode(&3u64)).unwrap();
        meta.insert("history_seq", cbor::encode(&1u64)).unwrap();
        let jobs = db.open_tree("jobs").unwrap();
        for proc in 0..2u32 {
            let mut key = 2u64.to_be_bytes().to_vec();
            key.extend(proc.to_be_bytes());
            let attrs = vec![
                ("Cmd".to_owned(), "\"/bin/true\"".to_owned()),
                ("ClusterId".to_owned(), "2".to_owned()),
                ("ProcId".to_owned(), proc.to_string()),
            ];
            jobs.insert(key, cbor::encode(&attrs)).unwrap();
        }
        db.open_tree("sequences")
            .unwrap()
            .insert(
                Kind::MACHINE_AD.as_u16().to_be_bytes(),
                cbor::encode(&41u64),
            )
            .unwrap();
        db.flush().unwrap();
    }
    std::fs::write(
        path.join("starling-store"),
        "A Starling store (schema version 1)\n",
    )
    .unwrap();
    let store = open(&path).unwrap();
    assert_eq!(store.jobs().unwrap().len(), 2);
    assert_eq!(store.next_sequence(Kind::MACHINE_AD).unwrap(), 42);
    assert_eq!(store.submit(&[parse_ad("[]").unwrap()]).unwrap(), 3);
    drop(store);
    let report = check(&path).unwrap();
    assert!(report.is_intact(), "{:?}", report.problems);
    assert_eq!(report.counts[0].intact, 3);
}

#[test]
fn a_damaged_checkpoint_record_is_named_and_salvage_keeps_the_others() {
    let (_dir, path, _) = seeded();
    {
        let store = open(&path).unwrap();
        store
            .put_checkpoint(JobId::new(1, 0), b"manifest of 1.0")
            .unwrap();
        store
            .put_checkpoint(JobId::new(2, 3), b"manifest of 2.3")
            .unwrap();
        store
            .put_checkpoint(JobId::new(4, 1), b"manifest of 4.1")
            .unwrap();
        store.remove_checkpoint(JobId::new(4, 1)).unwrap();
    }
    {
        let db = sled::open(&path).unwrap();
        let tree = db.open_tree("checkpoints").unwrap();
        let mut key = 2u64.to_be_bytes().to_vec();
        key.extend(3u32.to_be_bytes());
        let mut value = tree.get(&key).unwrap().unwrap().to_vec();
        let last = value.len() - 1;
        value[last] ^= 0x04;
        tree.insert(key, value).unwrap();
        db.flush().unwrap();
    }
    let text = damage_text(open(&path));
    assert!(
        text.contains("checkpoints: checkpoint of job 2.3: checksum mismatch"),
        "{text}"
    );
    let report = check(&path).unwrap();
    let counts = report
        .counts
        .iter()
        .find(|c| c.store == "checkpoints")
        .unwrap();
    assert_eq!(
        (counts.intact, counts.damaged, counts.acknowledged),
        (1, 1, Some(2))
    );
    salvage(&path, Timestamp::from_unix_secs(1_800_000_000)).unwrap();
    let store = open(&path).unwrap();
    assert_eq!(
        store.checkpoints().unwrap(),
        [(JobId::new(1, 0), b"manifest of 1.0".to_vec())]
    );
    assert_eq!(store.jobs().unwrap().len(), 300);
}

/// Deterministic noise.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn garbage_anywhere_never_panics_and_never_opens_short() {
    let (dir, pristine, _) = seeded();
    let len = std::fs::metadata(pristine.join("db")).unwrap().len() as usize;
    for seed in 1..=12u64 {
        let path = dir.path().join(format!("noise-{seed}")).join("store");
        copy(&pristine, &path);
        let db = path.join("db");
        let mut bytes = std::fs::read(&db).unwrap();
        // A run of garbage somewhere; sometimes sled's config or the
        // acknowledged file instead.
        let at = (noise(seed, 8)
            .iter()
            .fold(0usize, |a, b| a * 256 + *b as usize))
            % len;
        let run = noise(seed + 1000, 64);
        for (i, b) in run.iter().enumerate() {
            if let Some(x) = bytes.get_mut(at + i) {
                *x = *b;
            }
        }
        std::fs::write(&db, bytes).unwrap();
        if seed % 4 == 0 {
            std::fs::write(path.join("conf"), noise(seed, 62)).unwrap();
        }
        if seed % 3 == 0 {
            std::fs::write(path.join("acknowledged"), noise(seed, 8192)).unwrap();
        }
        match open(&path) {
            // Garbage where sled keeps nothing live: everything still there.
            Ok(store) => assert_eq!(store.jobs().unwrap().len(), 300, "seed {seed}"),
            Err(Error::Damaged { .. }) => {}
            Err(other) => panic!("seed {seed}: {other}"),
        }
        let report = check(&path).unwrap();
        if !report.is_intact() {
            let salvaged = salvage(&path, Timestamp::from_unix_secs(seed)).unwrap();
            assert!(salvaged.aside.is_some());
            let store = open(&path).unwrap();
            assert!(store.jobs().unwrap().len() <= 300);
            assert!(store.submit(&[parse_ad("[]").unwrap()]).unwrap() > CLUSTERS || seed % 3 == 0);
        }
    }
}
