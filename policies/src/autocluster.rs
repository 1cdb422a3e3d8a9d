//! Autoclusters: idle jobs that look alike to every machine, negotiated as
//! one.
//!
//! As HTCondor's schedd does, two jobs are alike when they agree on every
//! *significant* attribute: those the jobs' own matchmaking uses
//! (`Requirements`, `Rank`, `RequestCpus`, `RequestMemory`, `RequestDisk`
//! and whatever the job's `Requirements` and `Rank` refer to) and those
//! machines look at (any attribute the machines' `START`, `Requirements` or
//! `Rank` refers to). One representative stands for the group, so matching
//! costs a pass over the machines per autocluster, not per job. The owner is
//! always significant: a claim runs only its owner's jobs.

use std::collections::{BTreeMap, BTreeSet};

use starling_protocol::classad::{unparse, ClassAd, Evaluator, Expr, Name, Side, Value};

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

/// The significant attribute names, folded to lower case.
#[derive(Debug, Clone, Default)]
pub struct Significant {
    names: BTreeSet<String>,
}

impl Significant {
    /// The names in [`ALWAYS`] and `extra`.
    pub fn new<'a>(extra: impl IntoIterator<Item = &'a str>) -> Significant {
        let names = ALWAYS
            .iter()
            .copied()
            .chain(extra)
            .map(str::to_ascii_lowercase)
            .collect();
        Significant { names }
    }

    /// [`ALWAYS`] and every attribute the machines' policy refers to.
    pub fn with_machines<'a>(machines: impl IntoIterator<Item = &'a ClassAd>) -> Significant {
        let mut s = Significant::new([]);
        for machine in machines {
            for name in MACHINE_POLICY {
                if let Some(expr) = machine.get(name) {
                    references(expr, &mut s.names);
                }
            }
        }
        s
    }

    /// The attribute names, lower case.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The job's autocluster key: each significant attribute the job (or
    /// its `Requirements`/`Rank`) mentions, with its expression as text.
    pub fn key(&self, job: &ClassAd) -> String {
        let mut names = self.names.clone();
        for own in ["Requirements", "Rank"] {
            if let Some(expr) = job.get(own) {
                references(expr, &mut names);
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
        key
    }

    /// Groups `jobs` into autoclusters, best first: by the best `JobPrio`
    /// of their members, then by the earliest member. Members keep the
    /// order of priority, then of id.
    pub fn group<'a, Id: Ord + Copy>(
        &self,
        jobs: impl IntoIterator<Item = (Id, &'a ClassAd)>,
    ) -> Vec<Autocluster<Id>> {
        let mut by_key: BTreeMap<String, Autocluster<Id>> = BTreeMap::new();
        let mut prios: BTreeMap<String, Vec<(i64, Id)>> = BTreeMap::new();
        for (id, job) in jobs {
            let key = self.key(job);
            prios
                .entry(key.clone())
                .or_default()
                .push((job_prio(job), id));
            by_key.entry(key.clone()).or_insert_with(|| Autocluster {
                key,
                representative: job.clone(),
                members: Vec::new(),
            });
        }
        let mut clusters: Vec<(i64, Id, Autocluster<Id>)> = by_key
            .into_values()
            .map(|mut cluster| {
                let mut members = prios.remove(&cluster.key).unwrap_or_default();
                members.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                let (best_prio, first) = members[0];
                let earliest = members.iter().map(|m| m.1).min().unwrap_or(first);
                cluster.members = members.into_iter().map(|m| m.1).collect();
                (best_prio, earliest, cluster)
            })
            .collect();
        clusters.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        clusters.into_iter().map(|c| c.2).collect()
    }
}

/// Alike jobs, one of which stands for all.
#[derive(Debug, Clone)]
pub struct Autocluster<Id> {
    pub key: String,
    pub representative: ClassAd,
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

/// Adds the names of the attributes `expr` refers to (bare, `MY.` or
/// `TARGET.`), lower case, to `into`.
pub fn references(expr: &Expr, into: &mut BTreeSet<String>) {
    match expr {
        Expr::Literal(_) => {}
        Expr::Attr(r) => {
            let name = r.name.as_str().to_ascii_lowercase();
            if !matches!(name.as_str(), "my" | "target" | "parent") {
                into.insert(name);
            }
        }
        Expr::Select(base, r) => {
            into.insert(r.name.as_str().to_ascii_lowercase());
            if !matches!(&**base, Expr::Attr(_)) {
                references(base, into);
            }
        }
        Expr::Index(parts) | Expr::Elvis(parts) | Expr::Binary(_, parts) => {
            parts.iter().for_each(|e| references(e, into))
        }
        Expr::Cond(parts) => parts.iter().for_each(|e| references(e, into)),
        Expr::Unary(_, e) | Expr::Paren(e) => references(e, into),
        Expr::Call(call) => call.args.iter().for_each(|e| references(e, into)),
        Expr::List(items) => items.iter().for_each(|e| references(e, into)),
        Expr::Ad(ad) => ad.iter().for_each(|entry| references(entry.expr(), into)),
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
