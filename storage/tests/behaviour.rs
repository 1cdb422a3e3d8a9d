//! One behaviour suite, run against both stores: what the agent relies on
//! must hold whether the store is on disk or in memory.

use starling_protocol::classad::{parse_ad, ClassAd};
use starling_protocol::identity::{Envelope, Keypair, Kind, Timestamp};
use starling_storage::{
    Batch, Change, Claim, Error, Factor, Favours, JobId, MemoryStore, Side, SledStore, Store,
    Usage, MAX_CHECKPOINT_LEN,
};

macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(
                #[test]
                fn $name() {
                    super::$name(&starling_storage::MemoryStore::new());
                }
            )*
        }
        mod on_disk {
            $(
                #[test]
                fn $name() {
                    let dir = tempfile::tempdir().unwrap();
                    let store = starling_storage::SledStore::open(dir.path().join("store")).unwrap();
                    super::$name(&store);
                }
            )*
        }
    };
}

suite!(
    submit_numbers_clusters_and_procs,
    submit_checks_every_ad_before_writing,
    ads_read_back_exactly,
    update_changes_several_attributes_at_once,
    a_bad_update_changes_nothing_and_names_the_attribute,
    history_takes_jobs_out_of_the_queue_newest_first,
    cluster_ids_are_not_reused_after_history,
    the_view_keeps_the_newest_ad_per_signer,
    expire_forgets_ads_at_or_past_their_expiry,
    usage_and_favours_follow_the_policy_function,
    factors_are_kept_and_bad_ones_refused,
    bad_accounting_changes_nothing,
    claims_are_kept_replaced_and_removed,
    sequences_count_up_per_kind,
    checkpoint_records_are_kept_replaced_and_removed,
    a_batch_changes_every_job_in_one_go,
    a_batch_applies_its_writes_in_order,
    a_failed_batch_changes_nothing_and_names_the_job,
);

fn ad(text: &str) -> ClassAd {
    parse_ad(text).unwrap()
}

fn attr(ad: &ClassAd, name: &str) -> Option<String> {
    ad.get(name).map(starling_protocol::classad::unparse)
}

fn submit_numbers_clusters_and_procs(store: &dyn Store) {
    let procs = [
        ad("[ Cmd = \"a\"; Arg = 0 ]"),
        ad("[ Cmd = \"a\"; Arg = 1 ]"),
    ];
    assert_eq!(store.submit(&procs).unwrap(), 1);
    assert_eq!(store.submit(&procs[..1]).unwrap(), 2);
    let jobs = store.jobs().unwrap();
    let ids: Vec<String> = jobs.iter().map(|(id, _)| id.to_string()).collect();
    assert_eq!(ids, ["1.0", "1.1", "2.0"]);
    let job = store.job(JobId::new(1, 1)).unwrap().unwrap();
    assert_eq!(attr(&job, "Arg").as_deref(), Some("1"));
    assert_eq!(attr(&job, "ClusterId").as_deref(), Some("1"));
    assert_eq!(attr(&job, "ProcId").as_deref(), Some("1"));
    assert!(store.job(JobId::new(3, 0)).unwrap().is_none());
}

fn submit_checks_every_ad_before_writing(store: &dyn Store) {
    let err = store.submit(&[]).unwrap_err();
    assert!(err.to_string().contains("1 to"), "{err}");
    // The second proc has a name no job attribute may have.
    let procs = [ad("[ A = 1 ]"), ad("[ 'not a name' = 1 ]")];
    let err = store.submit(&procs).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidAttribute { name, .. } if name == "not a name"),
        "{err}"
    );
    assert!(store.jobs().unwrap().is_empty());
    assert_eq!(
        store.submit(&procs[..1]).unwrap(),
        1,
        "the failed submit used no id"
    );
}

fn ads_read_back_exactly(store: &dyn Store) {
    let text = r#"[ Cmd = "/bin/echo"; Args = "a \"quoted\" arg"; Cpus = 2; Mem = 2.5E3;
        Requirements = TARGET.Memory >= MY.Mem && (Arch == "X86_64" || Arch =?= undefined);
        Rank = -Cpus; Env = { "A=1", "B=2" }; Nested = [ x = 1; y = { 2, 3 } ];
        When = absTime("2026-01-02T03:04:05Z"); Big = 12345678901234; Neg = -0.0;
        Call = strcat("a", string(1)) ]"#;
    let submitted = ad(text);
    let cluster = store.submit(std::slice::from_ref(&submitted)).unwrap();
    let back = store.job(JobId::new(cluster, 0)).unwrap().unwrap();
    for entry in &submitted {
        let name = entry.name.as_str();
        let stored = back.get(name).unwrap();
        assert!(stored.same_as(entry.expr()), "{name} changed");
    }
    assert_eq!(back.len(), submitted.len() + 2);
    // Spelling is kept.
    assert!(back.iter().any(|e| e.name.as_str() == "Requirements"));
}

fn update_changes_several_attributes_at_once(store: &dyn Store) {
    store
        .submit(&[ad("[ A = 0; B = 0; C = 0; Gone = 1 ]")])
        .unwrap();
    let id = JobId::new(1, 0);
    store
        .update(
            id,
            &[
                Change::set("a", "7"),
                Change::set("B", "a + 1"),
                Change::set("New", "\"x\""),
                Change::remove("gone"),
            ],
        )
        .unwrap();
    let job = store.job(id).unwrap().unwrap();
    assert_eq!(attr(&job, "A").as_deref(), Some("7"));
    assert_eq!(attr(&job, "B").as_deref(), Some("a + 1"));
    assert_eq!(attr(&job, "C").as_deref(), Some("0"));
    assert_eq!(attr(&job, "New").as_deref(), Some("\"x\""));
    assert!(job.get("Gone").is_none());
    // A set keeps the attribute's place and takes the new spelling.
    assert_eq!(job.iter().next().unwrap().name.as_str(), "a");
    store.update(id, &[]).unwrap();
    let err = store
        .update(JobId::new(1, 1), &[Change::set("A", "1")])
        .unwrap_err();
    assert!(matches!(err, Error::NoSuchJob { .. }), "{err}");
    assert_eq!(err.to_string(), "no job 1.1 in the queue");
}

fn a_bad_update_changes_nothing_and_names_the_attribute(store: &dyn Store) {
    store.submit(&[ad("[ A = 0; B = 0 ]")]).unwrap();
    let id = JobId::new(1, 0);
    let before = store.job(id).unwrap().unwrap();
    let bad = [
        (vec![Change::set("A", "1"), Change::set("B", "1 +")], "B"),
        (
            vec![Change::set("A", "1"), Change::set("has space", "1")],
            "has space",
        ),
        (
            vec![Change::set("A", "1"), Change::set("ProcId", "9")],
            "ProcId",
        ),
        (
            vec![Change::set("A", "1"), Change::remove("clusterid")],
            "clusterid",
        ),
        (
            vec![
                Change::set("A", "1"),
                Change::set("Huge", format!("\"{}\"", "x".repeat(300_000))),
            ],
            "Huge",
        ),
    ];
    for (changes, named) in bad {
        let err = store.update(id, &changes).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{named:?}")),
            "{err} should name {named}"
        );
        let now = store.job(id).unwrap().unwrap();
        assert!(now.same_as(&before), "a refused update changed the job");
    }
    // The job as a whole is bounded too.
    let big = format!("\"{}\"", "x".repeat(200_000));
    let changes: Vec<Change> = (0..6)
        .map(|i| Change::set(format!("P{i}"), big.clone()))
        .collect();
    let err = store.update(id, &changes).unwrap_err();
    assert!(err.to_string().contains("more than the limit"), "{err}");
    assert!(store.job(id).unwrap().unwrap().same_as(&before));
}

fn history_takes_jobs_out_of_the_queue_newest_first(store: &dyn Store) {
    store
        .submit(&[ad("[ A = 0 ]"), ad("[ A = 1 ]"), ad("[ A = 2 ]")])
        .unwrap();
    let t = Timestamp::from_unix_secs;
    store
        .move_to_history(JobId::new(1, 2), &[Change::set("JobStatus", "4")], t(200))
        .unwrap();
    store
        .move_to_history(JobId::new(1, 0), &[Change::set("JobStatus", "3")], t(100))
        .unwrap();
    let queue: Vec<JobId> = store
        .jobs()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(queue, [JobId::new(1, 1)]);
    let history = store.history(10).unwrap();
    let ids: Vec<String> = history.iter().map(|h| h.id.to_string()).collect();
    assert_eq!(
        ids,
        ["1.0", "1.2"],
        "newest move first, whatever the timestamps"
    );
    assert_eq!(history[0].finished_at, t(100));
    assert_eq!(attr(&history[0].ad, "JobStatus").as_deref(), Some("3"));
    assert_eq!(attr(&history[1].ad, "A").as_deref(), Some("2"));
    assert_eq!(store.history(1).unwrap().len(), 1);
    assert!(store.history(0).unwrap().is_empty());

    let err = store
        .move_to_history(JobId::new(1, 0), &[], t(300))
        .unwrap_err();
    assert!(matches!(err, Error::NoSuchJob { .. }), "{err}");
    // A bad final change leaves the job in the queue.
    let err = store
        .move_to_history(JobId::new(1, 1), &[Change::set("X", ")")], t(300))
        .unwrap_err();
    assert!(matches!(err, Error::BadExpression { .. }), "{err}");
    assert!(store.job(JobId::new(1, 1)).unwrap().is_some());
    assert_eq!(store.history(10).unwrap().len(), 2);
}

/// Jobs as `(id, ad text)`.
type Listing = Vec<(JobId, String)>;

/// The queue and the history as text, to compare before and after.
fn snapshot(store: &dyn Store) -> (Listing, Listing) {
    let text = starling_protocol::classad::unparse_ad;
    (
        store
            .jobs()
            .unwrap()
            .iter()
            .map(|(id, ad)| (*id, text(ad)))
            .collect(),
        store
            .history(usize::MAX)
            .unwrap()
            .iter()
            .map(|h| (h.id, text(&h.ad)))
            .collect(),
    )
}

fn a_batch_changes_every_job_in_one_go(store: &dyn Store) {
    let procs = vec![ad("[ JobStatus = 1; Note = 0 ]"); 300];
    store.submit(&procs).unwrap();
    store.submit(&[ad("[ JobStatus = 1 ]")]).unwrap();
    let t = Timestamp::from_unix_secs;
    // rm of a cluster whose even procs are idle (they leave) and odd ones
    // run (they stay, marked removed, until their run stops).
    let mut batch = Batch::new();
    for proc in 0..300 {
        let id = JobId::new(1, proc);
        let changes = vec![
            Change::set("JobStatus", "3"),
            Change::set("RemoveReason", "\"by the user\""),
        ];
        if proc % 2 == 0 {
            batch.move_to_history(id, changes, t(1000 + u64::from(proc)));
        } else {
            batch.update(id, changes);
        }
    }
    assert_eq!(batch.len(), 300);
    store.apply(&batch).unwrap();
    let queue = store.jobs().unwrap();
    assert_eq!(queue.len(), 151, "150 running procs and the other cluster");
    for (id, job) in &queue {
        let status = attr(job, "JobStatus");
        if id.cluster == 1 {
            assert_eq!(id.proc % 2, 1);
            assert_eq!(status.as_deref(), Some("3"));
            assert_eq!(
                attr(job, "RemoveReason").as_deref(),
                Some("\"by the user\"")
            );
            assert_eq!(attr(job, "Note").as_deref(), Some("0"));
        } else {
            assert_eq!(status.as_deref(), Some("1"), "a job outside the batch");
        }
    }
    let history = store.history(usize::MAX).unwrap();
    assert_eq!(history.len(), 150);
    // Newest first: the batch's moves in the order they were added.
    assert_eq!(history[0].id, JobId::new(1, 298));
    assert_eq!(history[149].id, JobId::new(1, 0));
    assert_eq!(history[149].finished_at, t(1000));
    assert_eq!(attr(&history[0].ad, "JobStatus").as_deref(), Some("3"));
    assert_eq!(attr(&history[0].ad, "ProcId").as_deref(), Some("298"));
    // Nothing to do is not an error.
    store.apply(&Batch::new()).unwrap();
    assert_eq!(store.jobs().unwrap().len(), 151);
}

fn a_batch_applies_its_writes_in_order(store: &dyn Store) {
    store.submit(&[ad("[ A = 0 ]"), ad("[ A = 0 ]")]).unwrap();
    let (a, b) = (JobId::new(1, 0), JobId::new(1, 1));
    let mut batch = Batch::new();
    batch.update(a, vec![Change::set("A", "1")]);
    batch.update(a, vec![Change::set("B", "A + 1"), Change::remove("A")]);
    batch.update(b, vec![Change::set("A", "5")]);
    batch.move_to_history(
        b,
        vec![Change::set("JobStatus", "4")],
        Timestamp::from_unix_secs(9),
    );
    store.apply(&batch).unwrap();
    let job = store.job(a).unwrap().unwrap();
    assert!(job.get("A").is_none());
    assert_eq!(attr(&job, "B").as_deref(), Some("A + 1"));
    assert!(store.job(b).unwrap().is_none());
    let history = store.history(1).unwrap();
    assert_eq!(attr(&history[0].ad, "A").as_deref(), Some("5"));
    assert_eq!(attr(&history[0].ad, "JobStatus").as_deref(), Some("4"));
    // A write after its job left, in the same batch, fails the batch.
    let mut batch = Batch::new();
    batch.update(a, vec![Change::set("C", "1")]);
    batch.move_to_history(a, vec![], Timestamp::from_unix_secs(10));
    batch.update(a, vec![Change::set("D", "1")]);
    let err = store.apply(&batch).unwrap_err();
    assert_eq!(err.to_string(), "no job 1.0 in the queue");
    assert!(store.job(a).unwrap().unwrap().get("C").is_none());
}

fn a_failed_batch_changes_nothing_and_names_the_job(store: &dyn Store) {
    store.submit(&vec![ad("[ A = 0 ]"); 50]).unwrap();
    let before = snapshot(store);
    let t = Timestamp::from_unix_secs(5);
    // Every write would do, but for one at the end of the batch.
    let failing = |last: &dyn Fn(&mut Batch)| {
        let mut batch = Batch::new();
        for proc in 0..49 {
            let id = JobId::new(1, proc);
            if proc % 3 == 0 {
                batch.move_to_history(id, vec![Change::set("JobStatus", "3")], t);
            } else {
                batch.update(
                    id,
                    vec![Change::set("A", "1"), Change::set("JobStatus", "5")],
                );
            }
        }
        last(&mut batch);
        batch
    };
    type Last<'a> = Box<dyn Fn(&mut Batch) + 'a>;
    let cases: Vec<(Last<'_>, &str)> = vec![
        (
            Box::new(|b| b.update(JobId::new(1, 77), vec![Change::set("A", "1")])),
            "no job 1.77 in the queue",
        ),
        (
            Box::new(|b| b.move_to_history(JobId::new(2, 0), vec![], t)),
            "no job 2.0 in the queue",
        ),
        (
            Box::new(|b| b.update(JobId::new(1, 49), vec![Change::set("B", "1 +")])),
            "attribute \"B\"",
        ),
        (
            Box::new(|b| b.update(JobId::new(1, 49), vec![Change::set("ProcId", "3")])),
            "(job 1.49)",
        ),
        (
            Box::new(|b| {
                let big = format!("\"{}\"", "x".repeat(200_000));
                let changes: Vec<Change> = (0..6)
                    .map(|i| Change::set(format!("P{i}"), big.clone()))
                    .collect();
                b.update(JobId::new(1, 49), changes)
            }),
            "job 1.49: the job's attributes take",
        ),
    ];
    for (last, says) in cases {
        let err = store.apply(&failing(&*last)).unwrap_err();
        assert!(err.to_string().contains(says), "{err} should say {says}");
        assert!(
            snapshot(store) == before,
            "a failed batch ({says}) changed the store"
        );
    }
    // The same batch, made good, goes through whole.
    store
        .apply(&failing(&|b| {
            b.update(JobId::new(1, 49), vec![Change::set("A", "2")])
        }))
        .unwrap();
    let (queue, history) = snapshot(store);
    assert_eq!(history.len(), 17);
    assert_eq!(queue.len(), 33);
}

fn cluster_ids_are_not_reused_after_history(store: &dyn Store) {
    store.submit(&[ad("[ A = 0 ]")]).unwrap();
    store
        .move_to_history(JobId::new(1, 0), &[], Timestamp::from_unix_secs(1))
        .unwrap();
    assert!(store.jobs().unwrap().is_empty());
    assert_eq!(store.submit(&[ad("[ A = 0 ]")]).unwrap(), 2);
}

fn envelope(signer: u8, seq: u64, expires_secs: u64, kind: Kind) -> Envelope {
    let key = Keypair::from_seed(&[signer; 32]);
    Envelope::seal(
        &key,
        seq,
        Timestamp::from_unix_secs(0),
        Timestamp::from_unix_secs(expires_secs),
        kind,
        format!("ad {signer} {seq}").into_bytes(),
    )
}

/// The kept ads of `kind` as (signer seed, sequence number), sorted.
fn seqs(store: &dyn Store, kind: Kind) -> Vec<(u8, u64)> {
    let mut out: Vec<(u8, u64)> = store
        .ads(kind)
        .unwrap()
        .iter()
        .map(|e| {
            let header = e.header();
            let seed = (1..=3)
                .find(|s| Keypair::from_seed(&[*s; 32]).public() == header.signer)
                .unwrap();
            (seed, header.seq)
        })
        .collect();
    out.sort();
    out
}

fn the_view_keeps_the_newest_ad_per_signer(store: &dyn Store) {
    let machine = Kind::MACHINE_AD;
    assert!(store.put_ad(&envelope(1, 5, 100, machine)).unwrap());
    assert!(store.put_ad(&envelope(2, 1, 100, machine)).unwrap());
    assert!(store
        .put_ad(&envelope(1, 1, 100, Kind::SUBMITTER_AD))
        .unwrap());
    // Stale and equal sequence numbers are ignored.
    assert!(!store.put_ad(&envelope(1, 4, 100, machine)).unwrap());
    assert!(!store.put_ad(&envelope(1, 5, 100, machine)).unwrap());
    assert!(store.put_ad(&envelope(1, 6, 100, machine)).unwrap());
    assert_eq!(seqs(store, machine), [(1, 6), (2, 1)]);
    assert_eq!(seqs(store, Kind::SUBMITTER_AD), [(1, 1)]);
    // What comes back is the envelope as it went in, signature and all.
    let kept = store.ads(Kind::SUBMITTER_AD).unwrap();
    assert_eq!(
        kept[0].to_bytes(),
        envelope(1, 1, 100, Kind::SUBMITTER_AD).to_bytes()
    );

    let signer = Keypair::from_seed(&[2; 32]).public();
    assert!(store.remove_ad(machine, &signer).unwrap());
    assert!(!store.remove_ad(machine, &signer).unwrap());
    assert_eq!(seqs(store, machine), [(1, 6)]);
    assert!(store.ads(Kind::POLICY).unwrap().is_empty());
}

fn expire_forgets_ads_at_or_past_their_expiry(store: &dyn Store) {
    let machine = Kind::MACHINE_AD;
    store.put_ad(&envelope(1, 1, 10, machine)).unwrap();
    store.put_ad(&envelope(2, 1, 20, machine)).unwrap();
    store.put_ad(&envelope(3, 1, 10, machine)).unwrap();
    // Signer 3 refreshed its ad: the old expiry no longer applies.
    store.put_ad(&envelope(3, 2, 30, machine)).unwrap();
    let secs = Timestamp::from_unix_secs;
    assert_eq!(store.expire(secs(9)).unwrap(), 0);
    assert_eq!(store.expire(secs(10)).unwrap(), 1);
    assert_eq!(seqs(store, machine), [(2, 1), (3, 2)]);
    assert_eq!(store.expire(secs(25)).unwrap(), 1);
    assert_eq!(seqs(store, machine), [(3, 2)]);
    assert_eq!(store.expire(secs(25)).unwrap(), 0);
    // A removed ad leaves nothing behind to expire.
    store
        .remove_ad(machine, &Keypair::from_seed(&[3; 32]).public())
        .unwrap();
    assert_eq!(store.expire(secs(1000)).unwrap(), 0);
}

fn usage_and_favours_follow_the_policy_function(store: &dyn Store) {
    let t = Timestamp::from_unix_secs;
    let charge = |amount: f64, at: Timestamp| {
        move |old: Option<Usage>| Usage {
            // Halve what was there, as a decay policy might.
            accumulated: old.map_or(0.0, |u| u.accumulated / 2.0) + amount,
            priority: 0.5,
            updated_at: at,
        }
    };
    let first = store
        .update_usage("alice@lab", &charge(100.0, t(1)))
        .unwrap();
    assert_eq!(first.accumulated, 100.0);
    let second = store
        .update_usage("alice@lab", &charge(10.0, t(2)))
        .unwrap();
    assert_eq!(
        second,
        Usage {
            accumulated: 60.0,
            priority: 0.5,
            updated_at: t(2)
        }
    );
    store.update_usage("bob@lab", &charge(1.0, t(3))).unwrap();
    let all = store.usage().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0], ("alice@lab".to_owned(), second));

    let favour = |given: f64, received: f64| {
        move |old: Option<Favours>| {
            let old = old.unwrap_or(Favours {
                given: 0.0,
                received: 0.0,
                updated_at: t(0),
            });
            Favours {
                given: old.given + given,
                received: old.received + received,
                updated_at: t(5),
            }
        }
    };
    store
        .update_favours("physics.example", &favour(3.0, 0.0))
        .unwrap();
    let f = store
        .update_favours("physics.example", &favour(0.0, 2.0))
        .unwrap();
    assert_eq!((f.given, f.received), (3.0, 2.0));
    assert_eq!(
        store.favours().unwrap(),
        [("physics.example".to_owned(), f)]
    );
}

fn bad_accounting_changes_nothing(store: &dyn Store) {
    let t = Timestamp::from_unix_secs(1);
    let set = |v: f64| {
        move |_: Option<Usage>| Usage {
            accumulated: v,
            priority: 0.0,
            updated_at: t,
        }
    };
    store.update_usage("u@d", &set(5.0)).unwrap();
    for bad in [f64::NAN, f64::INFINITY, -1.0] {
        let err = store.update_usage("u@d", &set(bad)).unwrap_err();
        assert!(err.to_string().contains("\"u@d\""), "{err}");
    }
    assert_eq!(store.usage().unwrap()[0].1.accumulated, 5.0);
    for user in ["", "a\nb", &"x".repeat(300)] {
        assert!(matches!(
            store.update_usage(user, &set(1.0)),
            Err(Error::Invalid { .. })
        ));
    }
    let err = store
        .update_favours("d", &|_| Favours {
            given: -1.0,
            received: 0.0,
            updated_at: t,
        })
        .unwrap_err();
    assert!(err.to_string().contains("favours given"), "{err}");
    assert!(store.favours().unwrap().is_empty());
}

fn factors_are_kept_and_bad_ones_refused(store: &dyn Store) {
    let t = Timestamp::from_unix_secs;
    let set = |factor: f64, at: u64| Factor {
        factor,
        set_at: t(at),
    };
    store.set_factor("alice@lab", set(2.0, 1)).unwrap();
    store.set_factor("alice@lab", set(3.0, 2)).unwrap();
    store.set_factor("bob@lab", set(1.0, 3)).unwrap();
    for bad in [0.5, f64::NAN, f64::INFINITY, -2.0] {
        let err = store.set_factor("alice@lab", set(bad, 4)).unwrap_err();
        assert!(err.to_string().contains("priority factor"), "{err}");
    }
    assert!(store.set_factor("", set(2.0, 4)).is_err());
    assert_eq!(
        store.factors().unwrap(),
        [
            ("alice@lab".to_owned(), set(3.0, 2)),
            ("bob@lab".to_owned(), set(1.0, 3))
        ]
    );
}

fn claim(id: &[u8], lease: u64) -> Claim {
    Claim {
        id: id.to_vec(),
        peer: Keypair::from_seed(&[9; 32]).agent_id(),
        job: JobId::new(4, 2),
        side: Side::Execute,
        lease_expires: Timestamp::from_unix_secs(lease),
    }
}

fn claims_are_kept_replaced_and_removed(store: &dyn Store) {
    store.put_claim(&claim(b"b", 10)).unwrap();
    store.put_claim(&claim(b"a", 10)).unwrap();
    let mut renewed = claim(b"b", 20);
    renewed.side = Side::Submit;
    store.put_claim(&renewed).unwrap();
    assert_eq!(store.claims().unwrap(), [claim(b"a", 10), renewed]);
    assert!(store.remove_claim(b"a").unwrap());
    assert!(!store.remove_claim(b"a").unwrap());
    assert_eq!(store.claims().unwrap().len(), 1);
    for bad in [&b""[..], &[0; 65][..]] {
        assert!(matches!(
            store.put_claim(&claim(bad, 1)),
            Err(Error::Invalid { .. })
        ));
    }
}

fn sequences_count_up_per_kind(store: &dyn Store) {
    assert_eq!(store.next_sequence(Kind::MACHINE_AD).unwrap(), 1);
    assert_eq!(store.next_sequence(Kind::MACHINE_AD).unwrap(), 2);
    assert_eq!(store.next_sequence(Kind::POLICY).unwrap(), 1);
    assert_eq!(store.next_sequence(Kind::MACHINE_AD).unwrap(), 3);
}

/// The store is usable as a shared trait object from several threads, and
/// concurrent submits never hand out the same cluster id.
fn checkpoint_records_are_kept_replaced_and_removed(store: &dyn Store) {
    let id = JobId::new(1, 0);
    // Only a job in the queue takes a checkpoint record.
    let err = store.put_checkpoint(id, b"manifest 1").unwrap_err();
    assert!(matches!(err, Error::NoSuchJob { .. }), "{err}");
    store.submit(&[ad("[ A = 1 ]"), ad("[ A = 2 ]")]).unwrap();
    let other = JobId::new(1, 1);
    assert_eq!(store.checkpoint(id).unwrap(), None);
    store.put_checkpoint(id, b"manifest 1").unwrap();
    store.put_checkpoint(other, b"").unwrap();
    store.put_checkpoint(id, b"manifest 2").unwrap();
    assert_eq!(
        store.checkpoint(id).unwrap().as_deref(),
        Some(&b"manifest 2"[..])
    );
    // Too large: refused, naming the job; the record before it stands.
    let err = store
        .put_checkpoint(id, &vec![7; MAX_CHECKPOINT_LEN + 1])
        .unwrap_err();
    assert!(err.to_string().contains("job 1.0"), "{err}");
    let largest = vec![9; MAX_CHECKPOINT_LEN];
    store.put_checkpoint(other, &largest).unwrap();
    assert_eq!(
        store.checkpoints().unwrap(),
        [(id, b"manifest 2".to_vec()), (other, largest)]
    );
    // The record outlives the job's move to the history, until removed.
    store
        .move_to_history(id, &[], Timestamp::from_unix_secs(5))
        .unwrap();
    assert_eq!(
        store.checkpoint(id).unwrap().as_deref(),
        Some(&b"manifest 2"[..])
    );
    assert!(store.put_checkpoint(id, b"manifest 3").is_err());
    assert!(store.remove_checkpoint(id).unwrap());
    assert!(!store.remove_checkpoint(id).unwrap());
    assert_eq!(store.checkpoint(id).unwrap(), None);
    assert_eq!(store.checkpoints().unwrap().len(), 1);
}

#[test]
fn concurrent_submits_get_distinct_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let stores: [std::sync::Arc<dyn Store>; 2] = [
        std::sync::Arc::new(MemoryStore::new()),
        std::sync::Arc::new(SledStore::open(dir.path()).unwrap()),
    ];
    for store in stores {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let store = store.clone();
                std::thread::spawn(move || {
                    (0..10)
                        .map(|_| store.submit(&[parse_ad("[ A = 1 ]").unwrap()]).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<u64> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        all.sort();
        assert_eq!(all, (1..=40).collect::<Vec<_>>());
    }
}
