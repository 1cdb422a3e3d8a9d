//! Where a job's checkpoint is replicated, and which replica a restore
//! reads first.
//!
//! A checkpoint goes to `k` store peers ([`replicas_for`]: the job's
//! `checkpoint_replicas`, 2 by default) chosen by [`choose`] from the view:
//! peers that are allowed to store for the job's domain and have room, never
//! the machine the checkpoint is taken on and never two on one machine, so
//! that one machine failing cannot take every copy. Among those, nearest
//! first, and spread across failure domains where the topology labels say
//! two peers share one.
//!
//! # Nearness
//!
//! A peer whose round-trip time was measured comes before one whose was
//! not, in order of that time. Peers without a measurement are ordered by
//! topology, against the place the checkpoint is taken (or restored):
//! same site and rack, then same site, then same domain, then the rest.
//! Equal times are ordered by topology too; what is still tied, by peer id,
//! so the answer never depends on the order candidates came in.
//!
//! # Spread
//!
//! A peer's failure domain is its (site, rack) when either label is set.
//! Each pick prefers the nearest peer that shares a failure domain with no
//! replica chosen or kept; only when none is left does it take the nearest
//! peer that does (on another machine all the same). Peers without labels
//! share a failure domain with nobody: the labels are all there is to go by.

use std::time::Duration;

/// Replicas of a checkpoint when the job does not ask.
pub const DEFAULT_REPLICAS: usize = 2;

/// The most replicas a job may ask for.
pub const MAX_REPLICAS: usize = 8;

/// The number of replicas for a job whose ad asks for `asked`
/// (`CheckpointReplicas`, from `checkpoint_replicas` in the submit file),
/// bounded to `1..=MAX_REPLICAS`; [`DEFAULT_REPLICAS`] when it does not ask.
pub fn replicas_for(asked: Option<i64>) -> usize {
    match asked {
        None => DEFAULT_REPLICAS,
        Some(n) => n.clamp(1, MAX_REPLICAS as i64) as usize,
    }
}

/// Where a machine is, as its configuration labels it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The machine (its agent's machine identity); two agents on one
    /// machine share it.
    pub machine: String,
    /// The machine's administrative domain.
    pub domain: String,
    /// The `site` label, if configured.
    pub site: Option<String>,
    /// The `rack` label, if configured.
    pub rack: Option<String>,
}

impl Place {
    /// The failure domain the labels say this place is in, if any.
    fn failure_domain(&self) -> Option<(Option<&str>, Option<&str>)> {
        (self.site.is_some() || self.rack.is_some())
            .then_some((self.site.as_deref(), self.rack.as_deref()))
    }

    /// Whether the labels say both places share a failure domain.
    fn shares_failure_domain(&self, other: &Place) -> bool {
        matches!(
            (self.failure_domain(), other.failure_domain()),
            (Some(a), Some(b)) if a == b
        )
    }

    /// 0: same site and rack as `from`; 1: same site; 2: same domain;
    /// 3: anywhere else.
    fn distance(&self, from: &Place) -> u8 {
        let same_site = self.site.is_some() && self.site == from.site;
        if same_site && self.rack.is_some() && self.rack == from.rack {
            0
        } else if same_site {
            1
        } else if self.domain == from.domain {
            2
        } else {
            3
        }
    }
}

/// A store peer from the view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its agent id.
    pub peer: String,
    pub place: Place,
    /// Its measured round-trip time, if there is one.
    pub rtt: Option<Duration>,
    /// What it advertises it may still store for others.
    pub free_bytes: u64,
    /// It is trusted and willing to store for the job's domain.
    pub allowed: bool,
}

/// What a choice of replicas is for.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Replicas wanted in all, kept ones included (at most
    /// [`MAX_REPLICAS`] are counted).
    pub replicas: usize,
    /// The checkpoint's size: a peer must have this much free.
    pub bytes: u64,
    /// Where the checkpoint is taken, or the replicas are placed from.
    pub from: &'a Place,
    /// Whether `from` may hold a replica itself: not the machine a job
    /// runs on (it would lose the job and the replica at once), but a
    /// submit agent repairing its job's replicas may keep one.
    pub from_may_hold: bool,
    /// Replicas already holding it, which stay.
    pub keep: &'a [Candidate],
    /// Peers that refused or failed this time.
    pub exclude: &'a [String],
}

/// Ordering key: measured first, by time; then topology; then peer id.
fn nearness<'a>(from: &Place, c: &'a Candidate) -> (bool, Duration, u8, &'a str) {
    (
        c.rtt.is_none(),
        c.rtt.unwrap_or(Duration::ZERO),
        c.place.distance(from),
        c.peer.as_str(),
    )
}

/// Chooses up to `request.replicas - request.keep.len()` new store peers
/// (see the module docs): allowed, with `free_bytes >= request.bytes`, not
/// excluded, not on the checkpoint's machine, never two on one machine nor
/// on a kept replica's machine; nearest first, spread across failure
/// domains. Returns indices into `candidates`, in the order chosen (the
/// first is the nearest). Fewer when fewer machines qualify.
pub fn choose(request: &Request<'_>, candidates: &[Candidate]) -> Vec<usize> {
    let wanted = request
        .replicas
        .min(MAX_REPLICAS)
        .saturating_sub(request.keep.len());
    let mut eligible: Vec<usize> = (0..candidates.len())
        .filter(|&i| {
            let c = &candidates[i];
            c.allowed
                && c.free_bytes >= request.bytes
                && (request.from_may_hold || c.place.machine != request.from.machine)
                && !request.exclude.contains(&c.peer)
                && !request
                    .keep
                    .iter()
                    .any(|k| k.peer == c.peer || k.place.machine == c.place.machine)
        })
        .collect();
    eligible.sort_by(|&a, &b| {
        nearness(request.from, &candidates[a])
            .cmp(&nearness(request.from, &candidates[b]))
            .then(a.cmp(&b))
    });
    let mut chosen: Vec<usize> = Vec::with_capacity(wanted);
    while chosen.len() < wanted {
        let placed = |i: usize| {
            let c = &candidates[i];
            request
                .keep
                .iter()
                .chain(chosen.iter().map(|&j| &candidates[j]))
                .any(|r| r.peer == c.peer || r.place.machine == c.place.machine)
        };
        let spread = |i: usize| {
            !request
                .keep
                .iter()
                .chain(chosen.iter().map(|&j| &candidates[j]))
                .any(|r| r.place.shares_failure_domain(&candidates[i].place))
        };
        let open: Vec<usize> = eligible.iter().copied().filter(|&i| !placed(i)).collect();
        let Some(&next) = open.iter().find(|&&i| spread(i)).or(open.first()) else {
            break;
        };
        chosen.push(next);
        eligible.retain(|&i| i != next);
    }
    chosen
}

/// The order to restore from: the nearest replica first, by the same rule
/// as [`choose`]. Indices into `replicas`.
pub fn restore_order(from: &Place, replicas: &[Candidate]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..replicas.len()).collect();
    order.sort_by(|&a, &b| {
        nearness(from, &replicas[a])
            .cmp(&nearness(from, &replicas[b]))
            .then(a.cmp(&b))
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn place(machine: &str, domain: &str, site: Option<&str>, rack: Option<&str>) -> Place {
        Place {
            machine: machine.to_owned(),
            domain: domain.to_owned(),
            site: site.map(str::to_owned),
            rack: rack.map(str::to_owned),
        }
    }

    fn peer(id: &str, place: Place, rtt_ms: Option<u64>) -> Candidate {
        Candidate {
            peer: id.to_owned(),
            place,
            rtt: rtt_ms.map(Duration::from_millis),
            free_bytes: 1 << 30,
            allowed: true,
        }
    }

    fn peers(candidates: &[Candidate], chosen: &[usize]) -> Vec<String> {
        chosen.iter().map(|&i| candidates[i].peer.clone()).collect()
    }

    fn request<'a>(replicas: usize, from: &'a Place) -> Request<'a> {
        Request {
            replicas,
            bytes: 1000,
            from,
            from_may_hold: false,
            keep: &[],
            exclude: &[],
        }
    }

    #[test]
    fn a_repairing_submit_agent_may_hold_a_replica_itself() {
        let from = Place {
            machine: "submit".to_owned(),
            ..Place::default()
        };
        let me = Candidate {
            peer: "me".to_owned(),
            place: from.clone(),
            rtt: None,
            free_bytes: 1 << 20,
            allowed: true,
        };
        let only_me = [me];
        assert!(choose(&request(1, &from), &only_me).is_empty());
        let repair = Request {
            from_may_hold: true,
            ..request(1, &from)
        };
        assert_eq!(choose(&repair, &only_me), vec![0]);
    }

    #[test]
    fn replicas_asked_are_bounded() {
        assert_eq!(replicas_for(None), DEFAULT_REPLICAS);
        assert_eq!(replicas_for(Some(3)), 3);
        assert_eq!(replicas_for(Some(0)), 1);
        assert_eq!(replicas_for(Some(-5)), 1);
        assert_eq!(replicas_for(Some(1_000)), MAX_REPLICAS);
        assert_eq!(replicas_for(Some(i64::MAX)), MAX_REPLICAS);
    }

    #[test]
    fn measured_peers_come_first_nearest_first() {
        let from = place("m0", "lab", None, None);
        let candidates = [
            peer("far", place("m1", "lab", None, None), Some(40)),
            peer("unmeasured", place("m2", "lab", None, None), None),
            peer("near", place("m3", "lab", None, None), Some(2)),
        ];
        let chosen = choose(&request(3, &from), &candidates);
        assert_eq!(peers(&candidates, &chosen), ["near", "far", "unmeasured"]);
        assert_eq!(restore_order(&from, &candidates), [2, 0, 1]);
    }

    #[test]
    fn unmeasured_peers_go_by_topology_then_peer_id() {
        let from = place("m0", "lab", Some("ams"), Some("r1"));
        let candidates = [
            peer("other-domain", place("m1", "uni", None, None), None),
            peer("same-domain", place("m2", "lab", Some("rtm"), None), None),
            peer(
                "same-site",
                place("m3", "lab", Some("ams"), Some("r2")),
                None,
            ),
            peer(
                "same-rack-b",
                place("m4", "lab", Some("ams"), Some("r1")),
                None,
            ),
            peer(
                "same-rack-a",
                place("m5", "lab", Some("ams"), Some("r1")),
                None,
            ),
        ];
        assert_eq!(
            peers(&candidates, &restore_order(&from, &candidates)),
            [
                "same-rack-a",
                "same-rack-b",
                "same-site",
                "same-domain",
                "other-domain"
            ]
        );
    }

    #[test]
    fn never_the_checkpoints_machine_nor_two_on_one_machine() {
        let from = place("m0", "lab", None, None);
        let candidates = [
            peer("local", place("m0", "lab", None, None), Some(0)),
            peer("a1", place("m1", "lab", None, None), Some(1)),
            peer("a2", place("m1", "lab", None, None), Some(2)),
            peer("b", place("m2", "lab", None, None), Some(9)),
        ];
        let chosen = choose(&request(3, &from), &candidates);
        assert_eq!(peers(&candidates, &chosen), ["a1", "b"]);
    }

    #[test]
    fn excluded_full_and_disallowed_peers_are_skipped() {
        let from = place("m0", "lab", None, None);
        let mut candidates = vec![
            peer("refused", place("m1", "lab", None, None), Some(1)),
            peer("full", place("m2", "lab", None, None), Some(2)),
            peer("untrusted", place("m3", "lab", None, None), Some(3)),
            peer("ok", place("m4", "lab", None, None), Some(4)),
        ];
        candidates[1].free_bytes = 999;
        candidates[2].allowed = false;
        let exclude = ["refused".to_owned()];
        let request = Request {
            exclude: &exclude,
            ..request(2, &from)
        };
        assert_eq!(peers(&candidates, &choose(&request, &candidates)), ["ok"]);
    }

    #[test]
    fn kept_replicas_count_and_their_machines_are_taken() {
        let from = place("m0", "lab", None, None);
        let kept = [peer("kept", place("m1", "lab", None, None), Some(5))];
        let candidates = [
            peer("kept", place("m1", "lab", None, None), Some(5)),
            peer("beside-kept", place("m1", "lab", None, None), Some(1)),
            peer("c", place("m2", "lab", None, None), Some(7)),
            peer("d", place("m3", "lab", None, None), Some(8)),
        ];
        let request = Request {
            keep: &kept,
            ..request(2, &from)
        };
        assert_eq!(peers(&candidates, &choose(&request, &candidates)), ["c"]);
        let request = Request {
            replicas: 1,
            ..request
        };
        assert!(choose(&request, &candidates).is_empty());
    }

    #[test]
    fn replicas_spread_across_racks_when_labels_allow() {
        let from = place("m0", "lab", Some("ams"), Some("r1"));
        let candidates = [
            peer("r1-a", place("m1", "lab", Some("ams"), Some("r1")), Some(1)),
            peer("r1-b", place("m2", "lab", Some("ams"), Some("r1")), Some(2)),
            peer("r2", place("m3", "lab", Some("ams"), Some("r2")), Some(9)),
            peer("r3", place("m4", "lab", Some("ams"), Some("r3")), Some(30)),
        ];
        assert_eq!(
            peers(&candidates, &choose(&request(3, &from), &candidates)),
            ["r1-a", "r2", "r3"]
        );
        // With racks used up, another machine on a used rack.
        assert_eq!(
            peers(&candidates, &choose(&request(4, &from), &candidates)),
            ["r1-a", "r2", "r3", "r1-b"]
        );
        // A kept replica's rack counts as used.
        let kept = [peer("k", place("m9", "lab", Some("ams"), Some("r2")), None)];
        let request = Request {
            keep: &kept,
            ..request(3, &from)
        };
        assert_eq!(
            peers(&candidates, &choose(&request, &candidates)),
            ["r1-a", "r3"]
        );
    }

    #[test]
    fn the_answer_does_not_depend_on_the_order_candidates_came_in() {
        let from = place("m0", "lab", None, None);
        let a = peer("a", place("m1", "lab", None, None), Some(3));
        let b = peer("b", place("m2", "lab", None, None), Some(3));
        let one = [a.clone(), b.clone()];
        let two = [b, a];
        assert_eq!(peers(&one, &choose(&request(1, &from), &one)), ["a"]);
        assert_eq!(peers(&two, &choose(&request(1, &from), &two)), ["a"]);
    }

    fn arb_candidate() -> impl Strategy<Value = Candidate> {
        (
            0..12u8,
            0..6u8,
            prop::option::of(0..2u8),
            prop::option::of(0..3u8),
            prop::option::of(0..50u64),
            0..3000u64,
            prop::bool::weighted(0.8),
            0..2u8,
        )
            .prop_map(
                |(id, machine, site, rack, rtt, free_bytes, allowed, domain)| Candidate {
                    peer: format!("p{id}"),
                    place: Place {
                        machine: format!("m{machine}"),
                        domain: format!("d{domain}"),
                        site: site.map(|s| format!("s{s}")),
                        rack: rack.map(|r| format!("r{r}")),
                    },
                    rtt: rtt.map(Duration::from_millis),
                    free_bytes,
                    allowed,
                },
            )
    }

    proptest! {
        #[test]
        fn choices_are_always_safe_and_as_many_as_machines_allow(
            candidates in prop::collection::vec(arb_candidate(), 0..16),
            kept in prop::collection::vec(arb_candidate(), 0..3),
            exclude in prop::collection::vec(0..12u8, 0..4),
            replicas in 0..10usize,
        ) {
            let from = Place {
                machine: "m0".to_owned(),
                domain: "d0".to_owned(),
                site: Some("s0".to_owned()),
                rack: Some("r0".to_owned()),
            };
            let exclude: Vec<String> = exclude.iter().map(|i| format!("p{i}")).collect();
            let request = Request { replicas, bytes: 1000, from: &from, from_may_hold: false, keep: &kept, exclude: &exclude };
            let chosen = choose(&request, &candidates);

            let eligible = |c: &Candidate| {
                c.allowed
                    && c.free_bytes >= 1000
                    && c.place.machine != from.machine
                    && !exclude.contains(&c.peer)
                    && !kept.iter().any(|k| k.peer == c.peer || k.place.machine == c.place.machine)
            };
            let mut machines = std::collections::BTreeSet::new();
            let mut ids = std::collections::BTreeSet::new();
            for &i in &chosen {
                let c = &candidates[i];
                prop_assert!(eligible(c), "{c:?} is not eligible");
                prop_assert!(machines.insert(c.place.machine.clone()), "two on {}", c.place.machine);
                prop_assert!(ids.insert(c.peer.clone()), "{} chosen twice", c.peer);
            }
            // As many as wanted, or as many as there are machines (and
            // peers) to put them on.
            let wanted = replicas.min(MAX_REPLICAS).saturating_sub(kept.len());
            let unique_ids = candidates
                .iter()
                .map(|c| &c.peer)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
                == candidates.len();
            if unique_ids {
                let room: std::collections::BTreeSet<_> = candidates
                    .iter()
                    .filter(|c| eligible(c))
                    .map(|c| &c.place.machine)
                    .collect();
                prop_assert_eq!(chosen.len(), wanted.min(room.len()));
            }
            prop_assert!(chosen.len() <= wanted);
            if chosen.len() < wanted {
                // Nothing left that could have been added.
                let exhausted = candidates
                    .iter()
                    .filter(|c| eligible(c))
                    .all(|c| machines.contains(&c.place.machine) || ids.contains(&c.peer));
                prop_assert!(exhausted, "a machine was left out");
            }
            // The same answer, whatever the order of the candidates.
            let mut reversed = candidates.clone();
            reversed.reverse();
            let again: Vec<_> = choose(&request, &reversed)
                .iter()
                .map(|&i| (reversed[i].peer.clone(), reversed[i].place.machine.clone()))
                .collect();
            let first: Vec<_> = chosen
                .iter()
                .map(|&i| (candidates[i].peer.clone(), candidates[i].place.machine.clone()))
                .collect();
            if unique_ids {
                prop_assert_eq!(again, first);
            }
        }

        #[test]
        fn restore_order_is_a_permutation_nearest_first(
            replicas in prop::collection::vec(arb_candidate(), 0..10),
        ) {
            let from = Place { machine: "m0".to_owned(), domain: "d0".to_owned(), site: None, rack: None };
            let order = restore_order(&from, &replicas);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..replicas.len()).collect::<Vec<_>>());
            for pair in order.windows(2) {
                let (a, b) = (&replicas[pair[0]], &replicas[pair[1]]);
                if let (Some(x), Some(y)) = (a.rtt, b.rtt) {
                    prop_assert!(x <= y);
                }
                prop_assert!(!(a.rtt.is_none() && b.rtt.is_some()));
            }
        }
    }
}
