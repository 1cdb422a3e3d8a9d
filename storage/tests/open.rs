//! Opening a store on disk: what survives a reopen, and the clear refusals
//! for a newer, damaged or already open store. None of them may panic.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use starling_protocol::cbor;
use starling_protocol::classad::parse_ad;
use starling_protocol::identity::{Envelope, Keypair, Kind, Timestamp};
use starling_storage::{
    Change, Claim, Error, Favours, JobId, Side, SledStore, Store, Usage, SCHEMA_VERSION,
};

/// A fresh directory and the store path inside it.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    (dir, path)
}

/// Opens the sled database under a store directly, to damage it. sled's I/O
/// threads may hold the lock a moment after a store is dropped.
fn raw(path: &Path) -> sled::Db {
    let started = Instant::now();
    loop {
        match sled::open(path) {
            Ok(db) => return db,
            Err(e) if started.elapsed() < Duration::from_secs(5) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("cannot open {path:?}: {e}"),
        }
    }
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

fn expect_damaged(result: Result<SledStore, Error>, path: &Path, mentions: &str) {
    match result {
        Err(err @ Error::Damaged { .. }) => {
            let text = err.to_string();
            assert!(
                text.starts_with(&format!("store at {} is damaged", path.display())),
                "{text}"
            );
            assert!(text.contains(mentions), "{text} should mention {mentions}");
            assert!(text.contains("starling store salvage"), "{text}");
        }
        Err(other) => panic!("expected a damaged store, got {other}"),
        Ok(_) => panic!("a damaged store at {path:?} opened"),
    }
}

#[test]
fn everything_survives_a_reopen() {
    let (_dir, path) = scratch();
    let t = Timestamp::from_unix_secs;
    let key = Keypair::from_seed(&[1; 32]);
    let ad = Envelope::seal(&key, 3, t(0), t(100), Kind::MACHINE_AD, b"body".to_vec());
    let claim = Claim {
        id: b"claim-1".to_vec(),
        peer: key.agent_id(),
        job: JobId::new(1, 1),
        side: Side::Submit,
        lease_expires: t(50),
    };
    {
        let store = SledStore::open(&path).unwrap();
        let procs = [
            parse_ad("[ A = 1 ]").unwrap(),
            parse_ad("[ A = 2 ]").unwrap(),
        ];
        store.submit(&procs).unwrap();
        store
            .update(JobId::new(1, 1), &[Change::set("B", "\"b\"")])
            .unwrap();
        store.move_to_history(JobId::new(1, 0), &[], t(9)).unwrap();
        store.put_ad(&ad).unwrap();
        store
            .update_usage("u@d", &|_| Usage {
                accumulated: 2.0,
                priority: 0.0,
                updated_at: t(1),
            })
            .unwrap();
        store
            .update_favours("d", &|_| Favours {
                given: 1.0,
                received: 3.0,
                updated_at: t(2),
            })
            .unwrap();
        store.put_claim(&claim).unwrap();
        store
            .put_checkpoint(JobId::new(1, 1), b"signed manifest")
            .unwrap();
        assert_eq!(store.next_sequence(Kind::MACHINE_AD).unwrap(), 1);
    }
    let store = SledStore::open(&path).unwrap();
    assert_eq!(store.path(), path);
    let jobs = store.jobs().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].0, JobId::new(1, 1));
    assert!(jobs[0]
        .1
        .same_as(&parse_ad("[ A = 2; ClusterId = 1; ProcId = 1; B = \"b\" ]").unwrap()));
    let history = store.history(5).unwrap();
    assert_eq!(
        (history.len(), history[0].id, history[0].finished_at),
        (1, JobId::new(1, 0), t(9))
    );
    assert_eq!(
        store.ads(Kind::MACHINE_AD).unwrap()[0].to_bytes(),
        ad.to_bytes()
    );
    assert!(
        !store.put_ad(&ad).unwrap(),
        "the view remembers sequence numbers"
    );
    assert_eq!(store.usage().unwrap()[0].1.accumulated, 2.0);
    assert_eq!(store.favours().unwrap()[0].1.received, 3.0);
    assert_eq!(store.claims().unwrap(), [claim]);
    assert_eq!(
        store.checkpoints().unwrap(),
        [(JobId::new(1, 1), b"signed manifest".to_vec())]
    );
    assert_eq!(store.next_sequence(Kind::MACHINE_AD).unwrap(), 2);
    assert_eq!(store.submit(&[parse_ad("[]").unwrap()]).unwrap(), 2);
}

#[test]
fn a_newer_schema_is_refused_with_what_to_do() {
    let (_dir, path) = scratch();
    drop(SledStore::open(&path).unwrap());
    {
        let db = raw(&path);
        let meta = db.open_tree("meta").unwrap();
        meta.insert("schema", cbor::encode(&(SCHEMA_VERSION + 1)))
            .unwrap();
        db.flush().unwrap();
    }
    let err = SledStore::open(&path).unwrap_err();
    assert!(matches!(err, Error::NewerSchema { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "store at {} has schema version {}; this starling understands up to {}: \
             upgrade starling",
            path.display(),
            SCHEMA_VERSION + 1,
            SCHEMA_VERSION
        )
    );
}

#[test]
fn an_undecodable_schema_version_is_damage() {
    let (_dir, path) = scratch();
    drop(SledStore::open(&path).unwrap());
    {
        let db = raw(&path);
        db.open_tree("meta")
            .unwrap()
            .insert("schema", &b"\xff\x00junk"[..])
            .unwrap();
        db.flush().unwrap();
    }
    expect_damaged(SledStore::open(&path), &path, "meta/schema does not decode");
}

#[test]
fn garbage_files_are_damage() {
    for seed in 1..8 {
        let (_dir, path) = scratch();
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("conf"), noise(seed, 64)).unwrap();
        std::fs::write(path.join("db"), noise(seed + 100, 3 * 4096)).unwrap();
        expect_damaged(SledStore::open(&path), &path, "sled cannot read its files");
    }
    // A file where the directory should be.
    let (_dir, path) = scratch();
    std::fs::write(&path, b"not a directory").unwrap();
    let err = SledStore::open(&path).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn a_store_whose_records_were_lost_is_damaged_not_new() {
    for damage in ["truncated", "overwritten"] {
        let (_dir, path) = scratch();
        {
            let store = SledStore::open(&path).unwrap();
            store.submit(&[parse_ad("[ A = 1 ]").unwrap()]).unwrap();
        }
        let data = path.join("db");
        let len = std::fs::metadata(&data).unwrap().len() as usize;
        match damage {
            "truncated" => std::fs::write(&data, b"").unwrap(),
            _ => std::fs::write(&data, noise(7, len)).unwrap(),
        }
        expect_damaged(SledStore::open(&path), &path, "records are gone");
    }
}

#[test]
fn records_without_a_schema_version_are_damage() {
    let (_dir, path) = scratch();
    {
        let db = raw(&path);
        db.open_tree("jobs")
            .unwrap()
            .insert(b"key", b"value")
            .unwrap();
        db.flush().unwrap();
    }
    expect_damaged(
        SledStore::open(&path),
        &path,
        "records in jobs but no schema version",
    );
}

#[test]
fn a_damaged_record_is_an_error_naming_it() {
    let (_dir, path) = scratch();
    let key = Keypair::from_seed(&[1; 32]);
    {
        let store = SledStore::open(&path).unwrap();
        store.submit(&[parse_ad("[ A = 1 ]").unwrap()]).unwrap();
        let t = Timestamp::from_unix_secs;
        store
            .put_ad(&Envelope::seal(
                &key,
                1,
                t(0),
                t(9),
                Kind::MACHINE_AD,
                vec![],
            ))
            .unwrap();
    }
    {
        let db = raw(&path);
        // One bit of a job's expression flipped.
        let mut job_key = 1u64.to_be_bytes().to_vec();
        job_key.extend(0u32.to_be_bytes());
        let jobs = db.open_tree("jobs").unwrap();
        let mut value = jobs.get(&job_key).unwrap().unwrap().to_vec();
        let last = value.len() - 1;
        value[last] ^= 0x01;
        jobs.insert(job_key, value).unwrap();
        let mut ad_key = Kind::MACHINE_AD.as_u16().to_be_bytes().to_vec();
        ad_key.extend(key.public().as_bytes());
        db.open_tree("ads")
            .unwrap()
            .insert(ad_key, &b"\xa0"[..])
            .unwrap();
        // A job whose expression text no longer parses.
        let mut other = 2u64.to_be_bytes().to_vec();
        other.extend(0u32.to_be_bytes());
        let attrs = vec![("Attribute".to_owned(), "1 + 2 + 3".to_owned())];
        db.open_tree("jobs")
            .unwrap()
            .insert(other, cbor::encode(&attrs))
            .unwrap();
        db.flush().unwrap();
    }
    // Found when the store is opened, before anything reads it: each
    // record named, the extra one counted.
    let err = SledStore::open(&path).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Damaged { .. }), "{text}");
    let Error::Damaged { damage, .. } = err else {
        unreachable!()
    };
    let problems: Vec<String> = damage.problems().iter().map(ToString::to_string).collect();
    for expected in [
        "queue: job 1.0: checksum mismatch",
        "queue: job 2.0: unknown value format 129",
        "queue: 1 jobs more than its tally records (1)",
    ] {
        assert!(
            problems.iter().any(|p| p == expected),
            "{problems:?} should hold {expected}"
        );
    }
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("view: ads/machine ad/")
                && p.ends_with("too short to be a sealed value")),
        "{problems:?}"
    );
}

#[test]
fn an_open_store_is_refused_to_a_second_opener() {
    let (_dir, path) = scratch();
    let _first = SledStore::open(&path).unwrap();
    let err = SledStore::open(&path).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "store at {} is in use by another process: stop the other starling agent, \
             or give this one its own data directory",
            path.display()
        )
    );
}
