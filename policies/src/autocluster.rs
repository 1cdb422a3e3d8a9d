//! Autoclusters: idle jobs that look alike to every machine, negotiated as
//! one.
//!
//! As HTCondor's schedd does, two jobs are alike when they agree on every
//! *significant* attribute. Significant are:
//!
//! - the job's own matchmaking attributes ([`ALWAYS`]: `Owner`,
//!   `Requirements`, `Rank`, `RequestCpus`, `RequestMemory`,
//!   `RequestDisk`), since a claim runs only its owner's jobs and these
//!   decide where a job goes and how much of a machine it takes;
//! - every job attribute those refer to, transitively (`RequestMemory =
//!   ImageSize / 1024` makes `ImageSize` significant);
//! - every attribute the machines' `START`, `Requirements` and `Rank` look
//!   at in the job: `TARGET.x`, and bare names the machine itself does not
//!   define (HTCondor's `SIGNIFICANT_ATTRIBUTES`, which its negotiator
//!   computes from the machine ads in the same way).
//!
//! The key is the canonical text of the significant attributes the job
//! defines, so two jobs share an autocluster exactly when those attributes
//! unparse alike. One representative stands for the group, so matching costs
//! a pass over the machines per autocluster, not per job.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use starling_protocol::classad::{attr_references, unparse, ClassAd, Evaluator, Name, Side, Value};

/// Attributes that are significant for every job.
pub const ALWAYS: [&str; 6] = [
    "Owner",
    "Requirements",
    "Rank",
    "RequestCpus",
    "RequestMemory",
    "RequestDisk",
];

/// Machine attributes whose references make a job attribute significant.
const MACHINE_POLICY: [&str; 3] = ["START", "Requirements", "Rank"];

/// Most significant attribute names taken from machines. A pool whose
/// machines look at more job attributes than this is almost surely hostile
/// or broken; past the cap jobs group more coarsely, and the execute agent,
/// which decides on the job itself, refuses what the representative hid.
pub const MAX_SIGNIFICANT: usize = 1024;

/// The significant attribute names, folded to lower case.
#[derive(Debug, Clone, Default)]
pub struct Significant {
    names: BTreeSet<String>,
}

/// Which autocluster a job belongs to: the canonical text of its
/// significant attributes (`name=expression` in name order), comparable and
/// printable.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct AutoclusterKey(String);

impl AutoclusterKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AutoclusterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Significant {
    /// The names in [`ALWAYS`] and `extra` (at most [`MAX_SIGNIFICANT`]
    /// of these).
    pub fn new<'a>(extra: impl IntoIterator<Item = &'a str>) -> Significant {
        let names = ALWAYS
            .iter()
            .copied()
            .chain(extra.into_iter().take(MAX_SIGNIFICANT))
            .map(str::to_ascii_lowercase)
            .collect();
        Significant { names }
    }

    /// [`ALWAYS`] and every job attribute the machines' `START`,
    /// `Requirements` and `Rank` refer to (at most [`MAX_SIGNIFICANT`]).
    pub fn with_machines<'a>(machines: impl IntoIterator<Item = &'a ClassAd>) -> Significant {
        let mut s = Significant::new([]);
        let cap = ALWAYS.len() + MAX_SIGNIFICANT;
        for machine in machines {
            for name in MACHINE_POLICY {
                for job_attr in attr_references(machine, name).of_target(machine) {
                    if s.names.len() >= cap {
                        return s;
                    }
                    s.names.insert(job_attr);
                }
            }
        }
        s
    }

    /// The attribute names, lower case.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The job's autocluster key: each significant attribute the job
    /// defines, and each of the job's attributes those refer to, with its
    /// expression as text.
    pub fn key(&self, job: &ClassAd) -> AutoclusterKey {
        let mut names: BTreeSet<String> = BTreeSet::new();
        for name in &self.names {
            if job.get(name).is_some() && !names.contains(name) {
                names.insert(name.clone());
                names.extend(attr_references(job, name).of_my(job));
            }
        }
        let mut key = String::new();
        for name in &names {
            if let Some(expr) = job.get(name) {
                key.push_str(name);
                key.push('=');
                key.push_str(&unparse(expr));
                key.push('\u{0}');
            }
        }
        AutoclusterKey(key)
    }

    /// Groups `jobs` into autoclusters, best first: by the best `JobPrio`
    /// of their members (higher first), then by the earliest member. Members
    /// are in order of `JobPrio` (higher first), then of id.
    pub fn group<'a, Id: Ord + Copy>(
        &self,
        jobs: impl IntoIterator<Item = (Id, &'a ClassAd)>,
    ) -> Vec<Autocluster<Id>> {
        // Each cluster, with its members' (JobPrio, id) to sort them by.
        type Gathering<Id> = (Autocluster<Id>, Vec<(i64, Id)>);
        let mut by_key: BTreeMap<AutoclusterKey, Gathering<Id>> = BTreeMap::new();
        for (id, job) in jobs {
            let key = self.key(job);
            by_key
                .entry(key.clone())
                .or_insert_with(|| {
                    (
                        Autocluster {
                            key,
                            representative: job.clone(),
                            members: Vec::new(),
                        },
                        Vec::new(),
                    )
                })
                .1
                .push((job_prio(job), id));
        }
        let mut clusters: Vec<(i64, Id, Autocluster<Id>)> = by_key
            .into_values()
            .filter_map(|(mut cluster, mut members)| {
                members.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                let best_prio = members.first()?.0;
                let earliest = members.iter().map(|m| m.1).min()?;
                cluster.members = members.into_iter().map(|m| m.1).collect();
                Some((best_prio, earliest, cluster))
            })
            .collect();
        clusters.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        clusters.into_iter().map(|c| c.2).collect()
    }
}

/// Alike jobs, one of which stands for all.
#[derive(Debug, Clone)]
pub struct Autocluster<Id> {
    pub key: AutoclusterKey,
    /// The first job seen of the group.
    pub representative: ClassAd,
    /// Best first.
    pub members: Vec<Id>,
}

/// The job's `JobPrio` (higher runs first), 0 when unset or not a number.
pub fn job_prio(job: &ClassAd) -> i64 {
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, Name::known("JobPrio").folded())
    {
        Value::Int(i) => i,
        Value::Real(r) if r.is_finite() => r as i64,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    fn job(owner: &str, memory: u32, extra: &str) -> ClassAd {
        parse_ad(&format!(
            "[Owner = \"{owner}\"; RequestMemory = {memory}; Cmd = \"/bin/x\"; \
             Requirements = TARGET.Memory >= RequestMemory; {extra}]"
        ))
        .unwrap()
    }

    #[test]
    fn alike_jobs_group_and_different_requests_do_not() {
        let jobs = [
            job("alice", 512, "Args = \"1\""),
            job("alice", 512, "Args = \"2\""),
            job("alice", 1024, ""),
            job("bob", 512, ""),
        ];
        let s = Significant::new([]);
        let clusters = s.group(jobs.iter().enumerate());
        let mut sizes: Vec<usize> = clusters.iter().map(|c| c.members.len()).collect();
        sizes.sort();
        assert_eq!(sizes, vec![1, 1, 2], "Args is not significant, Owner is");
    }

    #[test]
    fn what_machines_look_at_becomes_significant() {
        let machine =
            parse_ad("[START = TARGET.Department == \"physics\"; Requirements = true]").unwrap();
        let s = Significant::with_machines([&machine]);
        assert!(s.names().any(|n| n == "department"));
        let jobs = [
            job("alice", 512, "Department = \"physics\""),
            job("alice", 512, "Department = \"chemistry\""),
        ];
        assert_eq!(s.group(jobs.iter().enumerate()).len(), 2);
    }

    #[test]
    fn what_machines_define_themselves_is_not_significant() {
        let machine = parse_ad(
            "[Memory = 4096; Kflops = 10; START = Memory > 100 && TARGET.Project =!= \"x\"; \
              Requirements = START; Rank = Kflops + Priority]",
        )
        .unwrap();
        let s = Significant::with_machines([&machine]);
        let names: Vec<&str> = s.names().collect();
        assert!(names.contains(&"project"), "{names:?}");
        assert!(
            names.contains(&"priority"),
            "bare and undefined here: {names:?}"
        );
        assert!(!names.contains(&"memory"), "{names:?}");
        assert!(!names.contains(&"kflops"), "{names:?}");
    }

    #[test]
    fn what_a_request_is_computed_from_is_significant() {
        let jobs = [
            job("alice", 512, "RequestDisk = ImageSize * 2; ImageSize = 100"),
            job("alice", 512, "RequestDisk = ImageSize * 2; ImageSize = 900"),
            job(
                "alice",
                512,
                "RequestDisk = ImageSize * 2; ImageSize = 100; Args = \"x\"",
            ),
        ];
        let s = Significant::new([]);
        let clusters = s.group(jobs.iter().enumerate());
        assert_eq!(clusters.len(), 2);
        assert_eq!(clusters[0].members, vec![0, 2]);
        assert!(
            clusters[0].key.to_string().contains("imagesize=100"),
            "{}",
            clusters[0].key
        );
    }

    proptest::proptest! {
        #[test]
        fn every_job_lands_in_exactly_one_cluster_of_alike_jobs(
            specs in proptest::collection::vec((0u8..2, 0u8..3, 0u8..4, -2i64..3), 0..24)
        ) {
            let owners = ["alice", "bob"];
            let jobs: Vec<ClassAd> = specs
                .iter()
                .map(|(o, m, args, prio)| {
                    job(owners[*o as usize], 512 * (u32::from(*m) + 1),
                        &format!("Args = \"{args}\"; JobPrio = {prio}"))
                })
                .collect();
            let s = Significant::new([]);
            let clusters = s.group(jobs.iter().enumerate());
            let mut seen: Vec<usize> = clusters.iter().flat_map(|c| c.members.clone()).collect();
            seen.sort();
            proptest::prop_assert_eq!(seen, (0..jobs.len()).collect::<Vec<_>>());
            let distinct: BTreeSet<(u8, u8)> = specs.iter().map(|(o, m, ..)| (*o, *m)).collect();
            proptest::prop_assert_eq!(clusters.len(), distinct.len());
            for c in &clusters {
                for w in c.members.windows(2) {
                    let (a, b) = (job_prio(&jobs[w[0]]), job_prio(&jobs[w[1]]));
                    proptest::prop_assert!(a > b || (a == b && w[0] < w[1]));
                }
            }
        }
    }

    #[test]
    fn higher_priority_clusters_and_members_come_first() {
        let jobs = [
            job("alice", 512, "JobPrio = 0"),
            job("alice", 512, "JobPrio = 5"),
            job("bob", 512, "JobPrio = 10"),
        ];
        let clusters = Significant::new([]).group(jobs.iter().enumerate());
        assert_eq!(clusters[0].members, vec![2]);
        assert_eq!(clusters[1].members, vec![1, 0]);
    }
}
