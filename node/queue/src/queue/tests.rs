//! The queue end to end over a real store: a job's states across a
//! reopening, refused requests that change nothing, and actions on a
//! large cluster as one transaction.

use super::*;
use starling_protocol::classad::parse_ad;
use starling_storage::SledStore;

use crate::attributes::{int, quote, status_of, text};
use crate::queue::actions::Action;
use crate::queue::runs::Completion;
use crate::selection::{Selection, Target};

fn job(owner: &str) -> ClassAd {
    parse_ad(&format!("[Owner = \"{owner}\"; Cmd = \"/bin/true\"]")).unwrap()
}

async fn queue(dir: &std::path::Path) -> Queue {
    let store: Arc<dyn Store> = Arc::new(SledStore::open(dir).unwrap());
    Queue::open(store).await.unwrap()
}

#[tokio::test]
async fn a_job_goes_through_its_states_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let q = queue(dir.path()).await;
    let mut events = q.subscribe();
    let (cluster, procs) = q
        .submit_with(|c| Ok(vec![job("alice"), job(&format!("bob{c}"))]))
        .await
        .unwrap();
    assert_eq!((cluster, procs), (1, 2));
    assert!(matches!(
        events.recv().await.unwrap(),
        Event::Submitted {
            cluster: 1,
            procs: 2
        }
    ));
    let a = JobId::new(1, 0);
    assert_eq!(q.idle().len(), 2);
    q.claimed(a, "slot1_1@m", "c", "peer", "d").await.unwrap();
    assert_eq!(q.running(), vec![a]);
    assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), Some(1));
    // The hand-over failed: as if it had never been claimed.
    q.unclaimed(a).await.unwrap();
    assert_eq!(status_of(&q.job(a).unwrap()), Some(status::IDLE));
    assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), None);
    assert!(q.job(a).unwrap().get("JobStartDate").is_none());
    q.claimed(a, "slot1_1@m", "c", "peer", "d").await.unwrap();
    q.started(a, "slot1_1@m").await;
    assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), Some(1));
    q.evicted(a, "machine lost").await.unwrap();
    assert_eq!(status_of(&q.job(a).unwrap()), Some(status::IDLE));
    assert!(q.job(a).unwrap().get("ClaimId").is_none());
    q.claimed(a, "slot1_2@m", "c2", "peer", "d").await.unwrap();
    q.started(a, "slot1_2@m").await;
    assert_eq!(int(&q.job(a).unwrap(), "NumJobStarts"), Some(2));
    assert_eq!(int(&q.job(a).unwrap(), "NumShadowStarts"), Some(3));
    q.completed(
        a,
        &Completion {
            exit_code: Some(3),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(q.job(a).is_none());
    let held = Selection::parse(&["bob1".into()], None).unwrap();
    let acted = q
        .act(
            &Action::Hold {
                reason: "wait".into(),
            },
            &held,
        )
        .await
        .unwrap();
    assert_eq!(acted.changed, vec![JobId::new(1, 1)]);
    drop(q);
    let q = queue(dir.path()).await;
    let b = q.job(JobId::new(1, 1)).unwrap();
    assert_eq!(status_of(&b), Some(status::HELD));
    assert_eq!(text(&b, "HoldReason").as_deref(), Some("wait"));
    let history = q.history(10, &Selection::default()).await.unwrap();
    assert_eq!(int(&history[0], "ExitCode"), Some(3));
    assert_eq!(int(&history[0], "NumJobStarts"), Some(2));
    // Where it last ran, by HTCondor's name: it runs nowhere now.
    assert_eq!(
        text(&history[0], "LastRemoteHost").as_deref(),
        Some("slot1_2@m")
    );
    assert!(history[0].get("RemoteHost").is_none());
    // A second cluster gets the next id, also after reopening.
    let (cluster, _) = q
        .submit_with(|c| Ok(vec![job(&c.to_string())]))
        .await
        .unwrap();
    assert_eq!(cluster, 2);
    assert_eq!(
        text(&q.job(JobId::new(2, 0)).unwrap(), "Owner").as_deref(),
        Some("2")
    );
}

#[tokio::test]
async fn bad_requests_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let q = queue(dir.path()).await;
    assert!(q.submit_with(|_| Err("line 3: nope".into())).await.is_err());
    let (cluster, _) = q.submit_with(|_| Ok(vec![job("a")])).await.unwrap();
    assert_eq!(cluster, 1, "a failed submit uses no cluster id");
    for word in ["1.x", "", "a b", "-3"] {
        assert!(Target::parse(word).is_err(), "{word:?}");
    }
    assert!(Selection::parse(&[], Some("Owner ==")).is_err());
    let all = Selection::default();
    let e = q.edit(&all, "JobStatus", "5").await.unwrap_err();
    assert!(e.to_string().contains("JobStatus"), "{e}");
    let acted = q.act(&Action::Release, &all).await.unwrap();
    assert_eq!(acted.skipped.len(), 1);
    assert!(acted.skipped[0].1.contains("not held"));
    // Names, paths and reasons stay one line, as at submit.
    let long = format!("\"/{}\"", "d".repeat(5000));
    for (attribute, value) in [
        ("JobBatchName", r#""a\nb""#),
        ("Out", r#""out\t.txt""#),
        ("Iwd", long.as_str()),
    ] {
        let e = q.edit(&all, attribute, value).await.unwrap_err();
        assert!(e.to_string().starts_with(attribute), "{e}");
    }
    q.edit(&all, "Note", r#""free\ntext""#).await.unwrap();
    let e = q
        .act(
            &Action::Hold {
                reason: "two\nlines".into(),
            },
            &all,
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("a newline"), "{e}");
    assert_eq!(
        status_of(&q.jobs(&all)[0].1),
        Some(status::IDLE),
        "a refused hold holds nothing"
    );
    let acted = q
        .act(&Action::Remove { reason: "x".into() }, &all)
        .await
        .unwrap();
    assert_eq!(acted.changed.len(), 1);
    assert!(q.jobs(&all).is_empty(), "an idle job leaves at once");
}
/// Every job in the cache as the store has it.
fn assert_cache_is_store(q: &Queue) {
    let stored = q.inner.store.jobs().unwrap();
    let cached: Vec<(JobId, ClassAd)> = q.cache().clone().into_iter().collect();
    assert_eq!(stored.len(), cached.len());
    for ((a, ad), (b, cached)) in stored.iter().zip(&cached) {
        assert_eq!(a, b);
        assert!(
            ad.same_as(cached),
            "job {a}: the cache and the store differ"
        );
    }
}

/// `rm`, `hold`, `release` and `qedit` of a 20,000-job cluster: every
/// job changes in one go (one event names them all), or none does; the
/// user log gets every event; the cache is what the store says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_cluster_changes_in_one_go_or_not_at_all() {
    const N: u32 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let q = queue(&dir.path().join("store")).await;
    let log = dir.path().join("jobs.log");
    // A log written with the agent's rights: its own user's.
    let owner = if rustix::process::geteuid().is_root() {
        "root"
    } else {
        "alice"
    };
    let ad = parse_ad(&format!(
        "[Owner = \"{owner}\"; Cmd = \"/bin/true\"; UserLog = {}]",
        quote(&log.to_string_lossy())
    ))
    .unwrap();
    // The last proc is near the size limit of a job.
    let mut big = ad.clone();
    for i in 0..4 {
        let text = quote(&"b".repeat(240 * 1024));
        big.insert(
            Name::new(&format!("Big{i}")).unwrap(),
            parse_expr(&text).unwrap(),
        );
    }
    let cluster = move |_| {
        let mut ads = vec![ad.clone(); N as usize - 1];
        ads.push(big.clone());
        Ok(ads)
    };
    q.submit_with(cluster).await.unwrap();
    q.submit_with(|_| Ok(vec![job("bob")])).await.unwrap();
    let mut events = q.subscribe();
    let one = Selection::parse(&["1".into()], None).unwrap();
    let ids = |event: Event| match event {
        Event::Held { ids }
        | Event::Released { ids }
        | Event::Removed { ids }
        | Event::Edited { ids } => ids,
        Event::Submitted { .. } => panic!("{event:?}"),
    };
    let in_cluster = |q: &Queue, status: i64| {
        q.jobs(&one)
            .iter()
            .filter(|(_, ad)| status_of(ad) == Some(status))
            .count()
    };

    let acted = q.edit(&one, "Note", "\"first\"").await.unwrap();
    assert_eq!(acted.changed.len(), N as usize);
    assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
    assert!(q
        .jobs(&one)
        .iter()
        .all(|(_, ad)| text(ad, "Note").as_deref() == Some("first")));

    let hold = Action::Hold {
        reason: "disk quota".into(),
    };
    let acted = q.act(&hold, &one).await.unwrap();
    assert_eq!((acted.changed.len(), acted.skipped.len()), (N as usize, 0));
    assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
    assert_eq!(in_cluster(&q, status::HELD), N as usize);
    assert_cache_is_store(&q);
    // A claim that comes after the hold is refused, not written over
    // it.
    let e = q
        .claimed(JobId::new(1, 5), "slot1@m", "c", "p", "d")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("is held"), "{e}");
    assert_eq!(
        status_of(&q.job(JobId::new(1, 5)).unwrap()),
        Some(status::HELD)
    );

    // The last job would outgrow its limit: nothing changes, no one is
    // told.
    let long = quote(&"n".repeat(100 * 1024));
    let e = q.edit(&one, "Note", &long).await.unwrap_err();
    assert!(e.to_string().contains(&format!("job 1.{}", N - 1)), "{e}");
    assert!(events.try_recv().is_err(), "a failed edit was announced");
    assert!(q
        .jobs(&one)
        .iter()
        .all(|(_, ad)| text(ad, "Note").as_deref() == Some("first")));
    assert_cache_is_store(&q);

    let acted = q.act(&Action::Release, &one).await.unwrap();
    assert_eq!(acted.changed.len(), N as usize);
    assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
    assert_eq!(in_cluster(&q, status::IDLE), N as usize);
    let released = q.job(JobId::new(1, 7)).unwrap();
    assert_eq!(
        text(&released, "LastHoldReason").as_deref(),
        Some("disk quota")
    );
    assert!(released.get("HoldReason").is_none());

    // Two run; rm keeps them, marked removed, until their runs stop.
    let running = [JobId::new(1, 0), JobId::new(1, 1)];
    for id in running {
        q.claimed(id, "slot1@m", "c", "p", "d").await.unwrap();
    }
    let rm = Action::Remove {
        reason: "not needed".into(),
    };
    let acted = q.act(&rm, &one).await.unwrap();
    assert_eq!(acted.changed.len(), N as usize);
    assert_eq!(ids(events.try_recv().unwrap()).len(), N as usize);
    let left = q.jobs(&one);
    assert_eq!(left.len(), 2);
    assert!(left
        .iter()
        .all(|(id, ad)| running.contains(id) && status_of(ad) == Some(status::REMOVED)));
    assert_cache_is_store(&q);
    q.finish_removed(&running).await.unwrap();
    assert!(q.jobs(&one).is_empty());
    let history = q.history(usize::MAX, &one).await.unwrap();
    assert_eq!(history.len(), N as usize);
    assert_eq!(
        text(&history[0], "LastRemoteHost").as_deref(),
        Some("slot1@m"),
        "the last to leave ran"
    );
    assert_eq!(q.jobs(&Selection::default()).len(), 1, "cluster 2 stays");

    // Every job's event, once, in each action's order.
    let written = std::fs::read_to_string(&log).unwrap();
    for code in ["000", "012", "013", "009"] {
        let procs: Vec<u32> = written
            .lines()
            .filter_map(|line| line.strip_prefix(&format!("{code} (001.")))
            .map(|rest| rest[..rest.find('.').unwrap()].parse().unwrap())
            .collect();
        assert_eq!(procs, (0..N).collect::<Vec<_>>(), "events {code}");
    }
    drop(q);
    let q = queue(&dir.path().join("store")).await;
    assert_eq!(q.jobs(&Selection::default()).len(), 1);
}
