//! The chunk store of a store peer (issue 17): checkpoints' chunks kept for
//! other agents, deduplicated, within what the peer lends, collected when
//! their lease ends, and never handed out damaged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use starling_storage::chunks::{
    ChunkHash, ChunkStore, Collected, Error, Limits, Owner, Refusal, MAX_CHUNK_LEN, MAX_HASHES,
};

fn chunk(seed: u8, len: usize) -> (ChunkHash, Vec<u8>) {
    let data: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    (*blake3::hash(&data).as_bytes(), data)
}

fn owner(job: &str, domain: &str, user: &str) -> Owner {
    Owner {
        job: job.to_owned(),
        domain: domain.to_owned(),
        user: user.to_owned(),
    }
}

fn lend(bytes: u64) -> Limits {
    Limits {
        lend_bytes: bytes,
        ..Limits::default()
    }
}

fn open(path: &Path, limits: Limits) -> ChunkStore {
    ChunkStore::open(path, limits).unwrap()
}

/// The store's sled database opened directly, to damage it: sled's
/// flusher may hold the file lock a moment after the store is dropped,
/// so a refused lock is tried again for up to five seconds.
fn raw_db(path: &Path) -> sled::Db {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match sled::open(path) {
            Ok(db) => return db,
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => panic!("opening {}: {e}", path.display()),
        }
    }
}

#[test]
fn a_checkpoint_round_trips_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunks");
    let alice = owner("1.0@agent", "lab", "alice");
    let chunks: Vec<_> = (0..4).map(|i| chunk(i, 1000 + i as usize)).collect();
    let hashes: Vec<ChunkHash> = chunks.iter().map(|(h, _)| *h).collect();
    {
        let store = open(&path, lend(1 << 20));
        assert_eq!(
            store.missing(&alice, 1, &hashes, 5_000).unwrap(),
            [0, 1, 2, 3]
        );
        // Committing before the chunks came names the first missing one.
        let err = store.commit("1.0@agent", 1, &hashes).unwrap_err();
        assert!(matches!(err, Refusal::Unknown(_)), "{err}");
        assert!(
            err.to_string().contains(
                &hashes[0]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ),
            "{err}"
        );
        for (hash, data) in &chunks {
            store.put(&alice, 1, hash, data, 5_000).unwrap();
        }
        assert_eq!(
            store.missing(&alice, 1, &hashes, 5_000).unwrap(),
            Vec::<u32>::new()
        );
        store.commit("1.0@agent", 1, &hashes).unwrap();
        for (hash, data) in &chunks {
            assert_eq!(store.get(hash).unwrap().as_ref(), Some(data));
            assert!(store.holds("1.0@agent", hash).unwrap());
            assert!(!store.holds("2.0@agent", hash).unwrap());
        }
        assert_eq!(store.get(&[9; 32]).unwrap(), None);
    }
    let store = open(&path, lend(1 << 20));
    for (hash, data) in &chunks {
        assert_eq!(store.get(hash).unwrap().as_ref(), Some(data));
    }
    let stats = store.stats().unwrap();
    let total: u64 = chunks.iter().map(|(_, d)| d.len() as u64).sum();
    assert_eq!((stats.used_bytes, stats.chunks, stats.jobs), (total, 4, 1));
    assert_eq!(
        stats.per_domain,
        BTreeMap::from([("lab".to_owned(), total)])
    );
    assert!(stats.free_bytes <= (1 << 20) - total);
    let jobs = store.jobs().unwrap();
    assert_eq!(jobs.len(), 1);
    let (job, holding) = &jobs[0];
    assert_eq!(job, "1.0@agent");
    assert_eq!(
        (holding.domain.as_str(), holding.user.as_str()),
        ("lab", "alice")
    );
    assert_eq!(holding.lease_until_ms, 5_000);
    assert_eq!(holding.sequences, [1]);
    assert_eq!(holding.committed, [1]);
    assert_eq!(holding.bytes, total);
}

#[test]
fn bad_chunks_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("chunks"), lend(4 << 20));
    let alice = owner("1.0@agent", "lab", "alice");
    let (hash, data) = chunk(1, 100);
    let (other, _) = chunk(2, 100);
    assert!(matches!(
        store.put(&alice, 1, &other, &data, 0),
        Err(Refusal::BadHash)
    ));
    let (big_hash, big) = chunk(3, MAX_CHUNK_LEN + 1);
    assert!(matches!(
        store.put(&alice, 1, &big_hash, &big, 0),
        Err(Refusal::TooLarge { len }) if len == MAX_CHUNK_LEN + 1
    ));
    let long = owner(&"j".repeat(257), "lab", "alice");
    let err = store.put(&long, 1, &hash, &data, 0).unwrap_err();
    assert!(
        err.to_string().contains("more than the limit of 256"),
        "{err}"
    );
    let nul = owner("a\0b", "lab", "alice");
    assert!(matches!(
        store.put(&nul, 1, &hash, &data, 0),
        Err(Refusal::Invalid(_))
    ));
    let too_many = vec![hash; MAX_HASHES + 1];
    assert!(matches!(
        store.missing(&alice, 1, &too_many, 0),
        Err(Refusal::Invalid(_))
    ));
    // A job is held for one owner only.
    store.put(&alice, 1, &hash, &data, 0).unwrap();
    let mallory = owner("1.0@agent", "lab", "mallory");
    let err = store.put(&mallory, 1, &hash, &data, 0).unwrap_err();
    assert!(err.to_string().contains("alice@lab"), "{err}");
    // Nothing of the refused calls was kept.
    let stats = store.stats().unwrap();
    assert_eq!((stats.used_bytes, stats.chunks, stats.jobs), (100, 1, 1));
    assert!(matches!(
        store.commit("9.9@agent", 1, &[]),
        Err(Refusal::Unknown(_))
    ));
}

#[test]
fn a_chunk_shared_by_two_jobs_is_stored_once_and_freed_when_both_release() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("chunks"), lend(1 << 20));
    let a = owner("1.0@x", "lab", "alice");
    let b = owner("2.0@x", "other", "bob");
    let (hash, data) = chunk(1, 5000);
    store.put(&a, 1, &hash, &data, 10).unwrap();
    // Held already: b is not asked for it, but is charged for it.
    assert_eq!(
        store.missing(&b, 7, &[hash], 10).unwrap(),
        Vec::<u32>::new()
    );
    store.commit("2.0@x", 7, &[hash]).unwrap();
    let stats = store.stats().unwrap();
    assert_eq!((stats.used_bytes, stats.chunks), (5000, 1));
    assert_eq!(
        stats.per_domain,
        BTreeMap::from([("lab".to_owned(), 5000), ("other".to_owned(), 5000)])
    );
    assert_eq!(store.release("1.0@x", None).unwrap(), 0);
    assert!(!store.holds("1.0@x", &hash).unwrap());
    assert!(store.holds("2.0@x", &hash).unwrap());
    assert_eq!(store.get(&hash).unwrap(), Some(data));
    assert_eq!(store.release("2.0@x", None).unwrap(), 5000);
    assert_eq!(store.get(&hash).unwrap(), None);
    let stats = store.stats().unwrap();
    assert_eq!((stats.used_bytes, stats.chunks, stats.jobs), (0, 0, 0));
    assert!(stats.per_domain.is_empty());
    // Releasing what is not held frees nothing.
    assert_eq!(store.release("2.0@x", None).unwrap(), 0);
}

#[test]
fn release_keeps_the_named_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("chunks"), lend(1 << 20));
    let a = owner("1.0@x", "lab", "alice");
    let (shared, shared_data) = chunk(1, 1000);
    let (old, old_data) = chunk(2, 300);
    let (new, new_data) = chunk(3, 200);
    store.put(&a, 1, &shared, &shared_data, 10).unwrap();
    store.put(&a, 1, &old, &old_data, 10).unwrap();
    store.commit("1.0@x", 1, &[shared, old]).unwrap();
    // Checkpoint 2 changed one chunk: only that one is sent.
    assert_eq!(store.missing(&a, 2, &[shared, new], 10).unwrap(), [1]);
    store.put(&a, 2, &new, &new_data, 10).unwrap();
    store.commit("1.0@x", 2, &[shared, new]).unwrap();
    // The job is charged once for the chunk both checkpoints share.
    assert_eq!(store.stats().unwrap().per_domain["lab"], 1500);
    assert_eq!(store.release("1.0@x", Some(2)).unwrap(), 300);
    assert_eq!(store.get(&old).unwrap(), None);
    assert_eq!(store.get(&shared).unwrap(), Some(shared_data));
    assert_eq!(store.get(&new).unwrap(), Some(new_data));
    let stats = store.stats().unwrap();
    assert_eq!((stats.used_bytes, stats.per_domain["lab"]), (1200, 1200));
    let (_, holding) = &store.jobs().unwrap()[0];
    assert_eq!(
        (holding.sequences.as_slice(), holding.committed.as_slice()),
        (&[2][..], &[2][..])
    );
}

/// The owner releases what a checkpoint replaced while the next one is
/// already being sent: the next one's chunks stay.
#[test]
fn release_keeps_newer_sequences_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("chunks"), lend(1 << 20));
    let a = owner("1.0@x", "lab", "alice");
    let (one, one_data) = chunk(1, 100);
    let (two, two_data) = chunk(2, 100);
    let (three, three_data) = chunk(3, 100);
    store.put(&a, 1, &one, &one_data, 10).unwrap();
    store.commit("1.0@x", 1, &[one]).unwrap();
    store.put(&a, 2, &two, &two_data, 10).unwrap();
    store.commit("1.0@x", 2, &[two]).unwrap();
    // Checkpoint 3 is on its way when checkpoint 1 is released.
    store.put(&a, 3, &three, &three_data, 10).unwrap();
    assert_eq!(store.release("1.0@x", Some(2)).unwrap(), 100);
    store.commit("1.0@x", 3, &[three]).unwrap();
    assert_eq!(store.get(&one).unwrap(), None);
    assert_eq!(store.get(&two).unwrap(), Some(two_data));
    assert_eq!(store.get(&three).unwrap(), Some(three_data));
    let (_, holding) = &store.jobs().unwrap()[0];
    assert_eq!(holding.sequences, vec![2, 3]);
}

#[test]
fn limits_changed_while_open_hold_from_the_next_chunk_and_keep_what_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        lend_bytes: 10_000,
        per_domain: BTreeMap::from([("d0".to_owned(), 2_000)]),
        other_domains: None,
        per_user: None,
    };
    let store = open(&dir.path().join("chunks"), limits.clone());
    let chunks: Vec<_> = (0..6).map(|i| chunk(i, 900)).collect();
    let a = owner("1.0@x", "d0", "ann");
    store.put(&a, 1, &chunks[0].0, &chunks[0].1, 0).unwrap();
    store.put(&a, 1, &chunks[1].0, &chunks[1].1, 0).unwrap();
    assert!(matches!(
        store.put(&a, 1, &chunks[2].0, &chunks[2].1, 0),
        Err(Refusal::DomainQuota { limit: 2_000, .. })
    ));
    // Raised: the next chunk is taken.
    store.set_limits(Limits {
        per_domain: BTreeMap::from([("d0".to_owned(), 4_000)]),
        ..limits.clone()
    });
    store.put(&a, 1, &chunks[2].0, &chunks[2].1, 0).unwrap();
    // Lowered below use: nothing held is lost, nothing new is taken.
    store.set_limits(Limits {
        lend_bytes: 2_000,
        ..limits
    });
    assert_eq!(store.limits().lend_bytes, 2_000);
    assert!(store.put(&a, 1, &chunks[3].0, &chunks[3].1, 0).is_err());
    for (hash, data) in &chunks[..3] {
        assert_eq!(store.get(hash).unwrap().as_ref(), Some(data));
    }
    let stats = store.stats().unwrap();
    assert_eq!((stats.lend_bytes, stats.free_bytes), (2_000, 0));
}

#[test]
fn quotas_refuse_with_the_right_reason_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        lend_bytes: 10_000,
        per_domain: BTreeMap::from([("big".to_owned(), 8_000), ("small".to_owned(), 1_000)]),
        other_domains: Some(2_000),
        per_user: Some(5_000),
    };
    let store = open(&dir.path().join("chunks"), limits);
    let chunks: Vec<_> = (0..20).map(|i| chunk(i, 900)).collect();

    // A named domain's quota.
    let s = owner("1.0@x", "small", "sam");
    store.put(&s, 1, &chunks[0].0, &chunks[0].1, 0).unwrap();
    match store.put(&s, 1, &chunks[1].0, &chunks[1].1, 0) {
        Err(Refusal::DomainQuota {
            domain,
            used,
            limit,
        }) => assert_eq!((domain.as_str(), used, limit), ("small", 900, 1_000)),
        other => panic!("expected the domain's quota, got {other:?}"),
    }
    // A chunk held already still charges another job of the domain.
    let s2 = owner("2.0@x", "small", "sue");
    assert!(matches!(
        store.missing(&s2, 1, &[chunks[0].0], 0),
        Err(Refusal::DomainQuota { used: 900, .. })
    ));
    assert!(store.jobs().unwrap().iter().all(|(j, _)| j != "2.0@x"));

    // A domain not named gets `other_domains`.
    let o = owner("4.0@x", "elsewhere", "olga");
    store.put(&o, 1, &chunks[3].0, &chunks[3].1, 0).unwrap();
    store.put(&o, 1, &chunks[4].0, &chunks[4].1, 0).unwrap();
    assert!(matches!(
        store.put(&o, 1, &chunks[5].0, &chunks[5].1, 0),
        Err(Refusal::DomainQuota { limit: 2_000, .. })
    ));

    // The per-user quota within a domain with room.
    let b = owner("5.0@x", "big", "bea");
    for c in &chunks[6..11] {
        store.put(&b, 1, &c.0, &c.1, 0).unwrap();
    }
    match store.put(&b, 1, &chunks[11].0, &chunks[11].1, 0) {
        Err(Refusal::UserQuota {
            domain,
            user,
            used,
            limit,
        }) => assert_eq!(
            (domain.as_str(), user.as_str(), used, limit),
            ("big", "bea", 4_500, 5_000)
        ),
        other => panic!("expected the user's quota, got {other:?}"),
    }

    // And the total lent: 8 chunks stored (7,200 bytes); another user of
    // `big` fills it.
    let c = owner("6.0@x", "big", "cid");
    for ch in &chunks[11..14] {
        store.put(&c, 1, &ch.0, &ch.1, 0).unwrap();
    }
    assert_eq!(store.stats().unwrap().used_bytes, 9_900);
    match store.put(&c, 1, &chunks[14].0, &chunks[14].1, 0) {
        Err(Refusal::NoSpace { needed, free }) => assert_eq!((needed, free), (900, 100)),
        other => panic!("expected no space, got {other:?}"),
    }
    let stats = store.stats().unwrap();
    assert_eq!((stats.used_bytes, stats.free_bytes), (9_900, 100));
    assert_eq!(stats.per_domain["small"], 900);
    assert_eq!(stats.per_domain["elsewhere"], 1_800);
    assert_eq!(stats.per_domain["big"], 7_200);
}

#[test]
fn jobs_whose_lease_ends_are_collected() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("chunks"), lend(1 << 20));
    let gone = owner("1.0@vanished", "lab", "alice");
    let live = owner("1.0@alive", "lab", "bob");
    let (h1, d1) = chunk(1, 700);
    let (h2, d2) = chunk(2, 300);
    store.put(&gone, 1, &h1, &d1, 1_000).unwrap();
    store.put(&gone, 1, &h2, &d2, 1_000).unwrap();
    store.put(&live, 1, &h2, &d2, 1_000).unwrap();
    assert!(store.renew("1.0@alive", 5_000).unwrap());
    // A renewal never shortens a lease.
    assert!(store.renew("1.0@alive", 2_000).unwrap());
    assert!(!store.renew("9.9@nobody", 5_000).unwrap());
    assert_eq!(store.collect(1_000).unwrap(), Collected::default());
    assert_eq!(
        store.collect(1_001).unwrap(),
        Collected {
            jobs: 1,
            chunks: 1,
            bytes: 700
        }
    );
    assert_eq!(store.get(&h1).unwrap(), None);
    assert!(store.holds("1.0@alive", &h2).unwrap());
    assert_eq!(store.collect(4_999).unwrap(), Collected::default());
    assert_eq!(store.collect(5_001).unwrap().bytes, 300);
    let stats = store.stats().unwrap();
    assert_eq!((stats.used_bytes, stats.chunks, stats.jobs), (0, 0, 0));
}

#[test]
fn a_damaged_chunk_is_never_returned_and_can_be_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunks");
    let a = owner("1.0@x", "lab", "alice");
    let (hash, data) = chunk(1, 4000);
    let (good, good_data) = chunk(2, 100);
    {
        let store = open(&path, lend(1 << 20));
        store.put(&a, 1, &hash, &data, 10).unwrap();
        store.put(&a, 1, &good, &good_data, 10).unwrap();
        store.commit("1.0@x", 1, &[hash, good]).unwrap();
    }
    {
        // Bytes changed under the store's feet, while it was closed.
        let db = raw_db(&path);
        let chunks = db.open_tree("chunks").unwrap();
        let mut value = chunks.get(hash).unwrap().unwrap().to_vec();
        value[1234] ^= 0x20;
        chunks.insert(hash, value).unwrap();
        db.flush().unwrap();
    }
    let store = open(&path, lend(1 << 20));
    let err = store.get(&hash).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("damaged on disk"), "{err}");
    // Gone: not held, not offered, asked for again.
    assert_eq!(store.get(&hash).unwrap(), None);
    assert!(!store.holds("1.0@x", &hash).unwrap());
    assert_eq!(store.missing(&a, 1, &[hash, good], 10).unwrap(), [0]);
    assert!(matches!(
        store.commit("1.0@x", 1, &[hash, good]),
        Err(Refusal::Unknown(_))
    ));
    assert_eq!(store.stats().unwrap().used_bytes, 100);
    // Sent again, it is whole.
    store.put(&a, 1, &hash, &data, 10).unwrap();
    store.commit("1.0@x", 1, &[hash, good]).unwrap();
    assert_eq!(store.get(&hash).unwrap(), Some(data));
    let stats = store.stats().unwrap();
    assert_eq!((stats.used_bytes, stats.per_domain["lab"]), (4100, 4100));
    assert_eq!(store.release("1.0@x", None).unwrap(), 4100);
}

#[test]
fn a_chunk_damaged_in_sleds_files_is_reported_and_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunks");
    let a = owner("1.0@x", "lab", "alice");
    // Large enough that sled keeps it in a blob file of its own.
    let (hash, data) = chunk(5, 600_000);
    {
        let store = open(&path, lend(4 << 20));
        store.put(&a, 1, &hash, &data, 10).unwrap();
        store.commit("1.0@x", 1, &[hash]).unwrap();
    }
    // Flip a byte wherever the chunk's bytes are on disk.
    let needle = &data[1000..1064];
    let mut flipped = 0;
    let mut stack = vec![path.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
                continue;
            }
            let mut bytes = std::fs::read(entry.path()).unwrap();
            if let Some(at) = bytes.windows(needle.len()).position(|w| w == needle) {
                bytes[at + 10] ^= 0x01;
                std::fs::write(entry.path(), bytes).unwrap();
                flipped += 1;
            }
        }
    }
    assert!(flipped > 0, "the chunk's bytes were not found on disk");
    // sled checks its own files when it opens them: it drops the damaged
    // value, or it fails to read it later. Either way the chunk is never
    // handed out, the store says it lacks it, its counts agree, and it
    // takes the chunk again.
    let store = open(&path, lend(4 << 20));
    match store.get(&hash) {
        Err(Error::Corrupt { .. }) | Ok(None) => {}
        Err(e) => panic!("{e}"),
        Ok(Some(_)) => panic!("a damaged chunk was handed out"),
    }
    assert_eq!(store.get(&hash).unwrap(), None);
    assert!(!store.holds("1.0@x", &hash).unwrap());
    assert_eq!(store.stats().unwrap().used_bytes, 0);
    assert_eq!(store.missing(&a, 2, &[hash], 10).unwrap(), [0]);
    store.put(&a, 2, &hash, &data, 10).unwrap();
    store.commit("1.0@x", 2, &[hash]).unwrap();
    assert_eq!(store.get(&hash).unwrap(), Some(data));
    assert_eq!(store.release("1.0@x", None).unwrap(), 600_000);
    assert_eq!(store.stats().unwrap().jobs, 0);
}

#[test]
fn a_damaged_record_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunks");
    let a = owner("1.0@x", "lab", "alice");
    let (hash, data) = chunk(1, 100);
    {
        let store = open(&path, lend(1 << 20));
        store.put(&a, 1, &hash, &data, 10).unwrap();
    }
    {
        let db = raw_db(&path);
        let jobs = db.open_tree("jobs").unwrap();
        let mut value = jobs.get("1.0@x").unwrap().unwrap().to_vec();
        let last = value.len() - 1;
        value[last] ^= 0x01;
        jobs.insert("1.0@x", value).unwrap();
        db.flush().unwrap();
    }
    let store = open(&path, lend(1 << 20));
    let err = store.jobs().unwrap_err();
    assert!(err.to_string().contains("jobs/\"1.0@x\""), "{err}");
    let err = store.put(&a, 2, &hash, &data, 10).unwrap_err();
    assert!(err.to_string().contains("checksum mismatch"), "{err}");
}

#[test]
fn a_second_opener_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunks");
    let _first = open(&path, lend(1));
    let err = ChunkStore::open(&path, lend(1)).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
}

// ---- accounting under random operations ----------------------------------

#[derive(Clone, Debug)]
enum Op {
    Missing {
        job: usize,
        seq: u64,
        chunks: Vec<usize>,
        lease: u64,
    },
    Put {
        job: usize,
        seq: u64,
        chunk: usize,
        lease: u64,
    },
    Commit {
        job: usize,
        seq: u64,
        chunks: Vec<usize>,
    },
    Release {
        job: usize,
        keep: Option<u64>,
    },
    Collect {
        now: u64,
    },
}

const JOBS: [(&str, &str, &str); 4] = [
    ("1.0@a", "lab", "alice"),
    ("2.0@a", "lab", "bob"),
    ("3.0@a", "far", "carol"),
    ("4.0@a", "lab", "alice"),
];

fn op() -> impl Strategy<Value = Op> {
    let job = 0..JOBS.len();
    let seq = 1..4u64;
    let chunks = prop::collection::vec(0..8usize, 0..5);
    prop_oneof![
        2 => (job.clone(), seq.clone(), chunks.clone(), 0..100u64)
            .prop_map(|(job, seq, chunks, lease)| Op::Missing { job, seq, chunks, lease }),
        5 => (job.clone(), seq.clone(), 0..8usize, 0..100u64)
            .prop_map(|(job, seq, chunk, lease)| Op::Put { job, seq, chunk, lease }),
        1 => (job.clone(), seq.clone(), chunks)
            .prop_map(|(job, seq, chunks)| Op::Commit { job, seq, chunks }),
        1 => (job, prop::option::of(seq))
            .prop_map(|(job, keep)| Op::Release { job, keep }),
        1 => (0..120u64).prop_map(|now| Op::Collect { now }),
    ]
}

/// What the store should hold.
#[derive(Default)]
struct Model {
    /// (job, seq, chunk)
    refs: BTreeSet<(usize, u64, usize)>,
    /// job → lease
    jobs: BTreeMap<usize, u64>,
}

impl Model {
    fn held(&self) -> BTreeSet<usize> {
        self.refs.iter().map(|&(_, _, c)| c).collect()
    }

    fn job_chunks(&self, job: usize) -> BTreeSet<usize> {
        self.refs
            .iter()
            .filter(|r| r.0 == job)
            .map(|r| r.2)
            .collect()
    }

    fn domain_used(&self, domain: &str, sizes: &[(ChunkHash, Vec<u8>)]) -> u64 {
        (0..JOBS.len())
            .filter(|&j| JOBS[j].1 == domain)
            .flat_map(|j| self.job_chunks(j))
            .map(|c| sizes[c].1.len() as u64)
            .sum()
    }

    fn user_used(&self, domain: &str, user: &str, sizes: &[(ChunkHash, Vec<u8>)]) -> u64 {
        (0..JOBS.len())
            .filter(|&j| JOBS[j].1 == domain && JOBS[j].2 == user)
            .flat_map(|j| self.job_chunks(j))
            .map(|c| sizes[c].1.len() as u64)
            .sum()
    }

    fn used(&self, sizes: &[(ChunkHash, Vec<u8>)]) -> u64 {
        self.held().iter().map(|&c| sizes[c].1.len() as u64).sum()
    }

    fn release(&mut self, job: usize, keep: Option<u64>) {
        self.refs
            .retain(|r| r.0 != job || keep.is_some_and(|keep| r.1 >= keep));
        if keep.is_none() {
            self.jobs.remove(&job);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20260417),
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn accounting_stays_exact_and_quotas_hold(ops in prop::collection::vec(op(), 1..40)) {
        let limits = Limits {
            lend_bytes: 9_000,
            per_domain: BTreeMap::from([("lab".to_owned(), 6_000)]),
            other_domains: Some(3_000),
            per_user: Some(4_000),
        };
        let chunks: Vec<_> = (0..8u8).map(|i| chunk(i, 500 + 300 * i as usize)).collect();
        let dir = tempfile::tempdir().unwrap();
        let store = ChunkStore::open(&dir.path().join("chunks"), limits.clone()).unwrap();
        let mut model = Model::default();
        for op in &ops {
            match op {
                Op::Missing { job, seq, chunks: list, lease } => {
                    let (key, domain, user) = JOBS[*job];
                    let hashes: Vec<_> = list.iter().map(|&c| chunks[c].0).collect();
                    let held = model.held();
                    match store.missing(&owner(key, domain, user), *seq, &hashes, *lease) {
                        Ok(missing) => {
                            let expected: Vec<u32> = list.iter().enumerate()
                                .filter(|(_, c)| !held.contains(c))
                                .map(|(i, _)| i as u32).collect();
                            prop_assert_eq!(missing, expected);
                            for c in list.iter().filter(|c| held.contains(c)) {
                                model.refs.insert((*job, *seq, *c));
                            }
                            let l = model.jobs.entry(*job).or_insert(*lease);
                            *l = (*l).max(*lease);
                        }
                        Err(Refusal::DomainQuota { .. } | Refusal::UserQuota { .. }) => {
                            let mut after = Model { refs: model.refs.clone(), jobs: BTreeMap::new() };
                            for c in list.iter().filter(|c| held.contains(c)) {
                                after.refs.insert((*job, *seq, *c));
                            }
                            prop_assert!(
                                after.domain_used(domain, &chunks) > limits.domain_limit(domain).unwrap()
                                    || after.user_used(domain, user, &chunks) > 4_000,
                                "an unjustified refusal"
                            );
                        }
                        Err(e) => prop_assert!(false, "{e}"),
                    }
                }
                Op::Put { job, seq, chunk: c, lease } => {
                    let (key, domain, user) = JOBS[*job];
                    let (hash, data) = &chunks[*c];
                    match store.put(&owner(key, domain, user), *seq, hash, data, *lease) {
                        Ok(()) => {
                            model.refs.insert((*job, *seq, *c));
                            let l = model.jobs.entry(*job).or_insert(*lease);
                            *l = (*l).max(*lease);
                        }
                        Err(refusal) => {
                            let mut after = Model { refs: model.refs.clone(), jobs: BTreeMap::new() };
                            after.refs.insert((*job, *seq, *c));
                            let justified = match refusal {
                                Refusal::NoSpace { .. } => after.used(&chunks) > 9_000,
                                Refusal::DomainQuota { .. } => {
                                    after.domain_used(domain, &chunks) > limits.domain_limit(domain).unwrap()
                                }
                                Refusal::UserQuota { .. } => after.user_used(domain, user, &chunks) > 4_000,
                                _ => false,
                            };
                            prop_assert!(justified, "an unjustified refusal: {}", refusal);
                        }
                    }
                }
                Op::Commit { job, seq, chunks: list } => {
                    let hashes: Vec<_> = list.iter().map(|&c| chunks[c].0).collect();
                    let complete = model.jobs.contains_key(job)
                        && list.iter().all(|&c| model.refs.contains(&(*job, *seq, c)));
                    prop_assert_eq!(store.commit(JOBS[*job].0, *seq, &hashes).is_ok(), complete);
                }
                Op::Release { job, keep } => {
                    let before = model.used(&chunks);
                    model.release(*job, *keep);
                    let freed = store.release(JOBS[*job].0, *keep).unwrap();
                    prop_assert_eq!(freed, before - model.used(&chunks));
                }
                Op::Collect { now } => {
                    let expired: Vec<usize> = model.jobs.iter()
                        .filter(|(_, &lease)| lease < *now).map(|(&j, _)| j).collect();
                    let before = model.used(&chunks);
                    for &j in &expired {
                        model.release(j, None);
                    }
                    let collected = store.collect(*now).unwrap();
                    prop_assert_eq!(collected.jobs, expired.len() as u64);
                    prop_assert_eq!(collected.bytes, before - model.used(&chunks));
                }
            }
            // The store agrees with the model, and with itself.
            let stats = store.stats().unwrap();
            prop_assert_eq!(stats.used_bytes, model.used(&chunks), "after {:?}", op);
            prop_assert_eq!(stats.chunks, model.held().len() as u64);
            prop_assert_eq!(stats.jobs, model.jobs.len() as u64);
            prop_assert!(stats.used_bytes <= 9_000);
            let stored: u64 = chunks.iter()
                .filter_map(|(h, _)| store.get(h).unwrap())
                .map(|d| d.len() as u64)
                .sum();
            prop_assert_eq!(stored, stats.used_bytes);
            for domain in ["lab", "far"] {
                let used = stats.per_domain.get(domain).copied().unwrap_or(0);
                prop_assert_eq!(used, model.domain_used(domain, &chunks));
                prop_assert!(used <= limits.domain_limit(domain).unwrap());
            }
            for (j, (key, domain, user)) in JOBS.iter().enumerate() {
                prop_assert!(model.user_used(domain, user, &chunks) <= 4_000);
                for (c, (hash, _)) in chunks.iter().enumerate() {
                    prop_assert_eq!(
                        store.holds(key, hash).unwrap(),
                        model.job_chunks(j).contains(&c)
                    );
                }
            }
        }
    }
}
