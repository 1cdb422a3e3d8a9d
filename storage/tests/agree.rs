//! The two stores agree: any sequence of queue calls, valid or not, gives
//! the same answers and leaves the same queue and history in memory as on
//! disk, so tests written against [`MemoryStore`] speak for [`SledStore`].

use proptest::prelude::*;
use starling_protocol::classad::{parse_ad, unparse_ad};
use starling_protocol::identity::Timestamp;
use starling_storage::{Batch, Change, JobId, MemoryStore, SledStore, Store};

#[derive(Clone, Debug)]
enum Op {
    Submit(Vec<String>),
    Update(u64, u32, Vec<Change>),
    History(u64, u32, Vec<Change>),
    /// Updates (`false`) and moves to history (`true`), as one batch.
    Batch(Vec<(u64, u32, bool, Vec<Change>)>),
}

fn change() -> impl Strategy<Value = Change> {
    let name = prop::sample::select(vec!["A", "a", "B", "Req", "ProcId", "bad name", "_x1"]);
    let expr = prop::sample::select(vec!["1", "A + 1", "\"s\"", "{1, 2}", "1 +", "[x = 1]"]);
    prop_oneof![
        3 => (name.clone(), expr).prop_map(|(n, e)| Change::set(n, e)),
        1 => name.prop_map(Change::remove),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let ad = prop::sample::select(vec![
        "[ A = 1 ]",
        "[ A = 1; B = \"x\" ]",
        "[]",
        "[ 'a b' = 1 ]",
    ]);
    prop_oneof![
        1 => prop::collection::vec(ad.prop_map(str::to_owned), 0..4).prop_map(Op::Submit),
        3 => (1..4u64, 0..3u32, prop::collection::vec(change(), 0..4))
            .prop_map(|(c, p, ch)| Op::Update(c, p, ch)),
        1 => (1..4u64, 0..3u32, prop::collection::vec(change(), 0..2))
            .prop_map(|(c, p, ch)| Op::History(c, p, ch)),
        2 => prop::collection::vec(
            (1..4u64, 0..3u32, prop::bool::weighted(0.3), prop::collection::vec(change(), 0..3)),
            0..6,
        )
        .prop_map(Op::Batch),
    ]
}

fn run(store: &dyn Store, op: &Op) -> Result<Option<u64>, String> {
    let at = Timestamp::from_unix_secs(7);
    match op {
        Op::Submit(ads) => {
            let ads: Vec<_> = ads.iter().map(|a| parse_ad(a).unwrap()).collect();
            store.submit(&ads).map(Some)
        }
        Op::Update(c, p, changes) => store.update(JobId::new(*c, *p), changes).map(|()| None),
        Op::History(c, p, changes) => store
            .move_to_history(JobId::new(*c, *p), changes, at)
            .map(|()| None),
        Op::Batch(writes) => {
            let mut batch = Batch::new();
            for (c, p, leaves, changes) in writes {
                let id = JobId::new(*c, *p);
                if *leaves {
                    batch.move_to_history(id, changes.clone(), at);
                } else {
                    batch.update(id, changes.clone());
                }
            }
            store.apply(&batch).map(|()| None)
        }
    }
    .map_err(|e| e.to_string())
}

/// Jobs as `(id, ad text)`.
type Listing = Vec<(JobId, String)>;

/// The queue and the history.
fn contents(store: &dyn Store) -> (Listing, Listing) {
    let jobs = store
        .jobs()
        .unwrap()
        .iter()
        .map(|(id, ad)| (*id, unparse_ad(ad)))
        .collect();
    let history = store
        .history(usize::MAX)
        .unwrap()
        .iter()
        .map(|h| (h.id, unparse_ad(&h.ad)))
        .collect();
    (jobs, history)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20261122),
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn both_stores_answer_alike(ops in prop::collection::vec(op(), 1..25)) {
        let dir = tempfile::tempdir().unwrap();
        let disk = SledStore::open(dir.path()).unwrap();
        let memory = MemoryStore::new();
        for op in &ops {
            prop_assert_eq!(run(&memory, op), run(&disk, op), "{:?}", op);
        }
        prop_assert_eq!(contents(&memory), contents(&disk));
    }
}
