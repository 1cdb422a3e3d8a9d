//! Where the components of a multi-component (co-allocated) job go, and
//! which waiting job goes next: Sinaga's Dynamic Co-allocation Service
//! (seed 002, §3.2 and §4.3.3–4.3.4), as a pure function of the submit
//! agent's view.
//!
//! A job is a list of [`Component`]s, each asking for a number of
//! processors (slots) in one *cluster*; in Starling a cluster is a group
//! of machines that communicate well with each other, by default a domain
//! (or a site within one). A component is **ordered** when it names its
//! cluster and **unordered** when the placement chooses.
//!
//! [`fit`] is the thesis' Resource Broker over an idle list (each
//! cluster's idle processors, counted from the view):
//!
//! - ordered components are compared with their cluster's idle processors,
//!   which each one placed there lowers;
//! - unordered ones, largest first, go by the **modified Worst-Fit** rule:
//!   to the unmarked cluster with the most idle processors (spreading
//!   components over as many clusters as possible), marking it; once every
//!   cluster is marked, or no unmarked one has room, to the marked one with
//!   the most idle processors; when every cluster is marked the marks are
//!   cleared. **Modified Best-Fit** is the same with the fewest idle
//!   processors that still fit, which packs instead of spreading.
//!
//! Either the whole job fits, with a cluster for every component, or it
//! does not fit at all: a co-allocated job starts all of its components or
//! none ([`fit`] returns `None`).
//!
//! [`place`] carries a plan down to machines: the clusters come from the
//! view (a machine's cluster is its domain), a cluster's idle processors
//! are the free CPUs of its machines that match one of the job's
//! components both ways, [`fit`] chooses each component's cluster, and
//! the component's nodes are then packed onto its cluster's matching
//! machines in the negotiator's order of preference. A component whose
//! nodes do not pack (the idle CPUs are spread too thinly) makes the job
//! not fit, with the reason `why` shows.
//!
//! [`next`] is the thesis' Scheduler over the wait queue: **FCFS** offers
//! the machines only to the first job in arrival order (a job that does
//! not fit holds up those behind it, as the thesis' experiments show),
//! **FPFS** to the first job that fits, which may pass jobs that do not.

/// One component of a co-allocated job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// Processors (slots) it needs, all in one cluster.
    pub processors: u32,
    /// The cluster it must go to (ordered), or `None` (unordered).
    pub cluster: Option<String>,
}

/// A cluster as the view shows it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub name: String,
    /// Processors idle now.
    pub idle: u32,
}

/// How unordered components are placed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Rule {
    /// Spread over the clusters with the most idle processors.
    #[default]
    WorstFit,
    /// Pack onto the clusters with the fewest idle processors that fit.
    BestFit,
}

impl std::str::FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Rule, String> {
        match s.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "worstfit" => Ok(Rule::WorstFit),
            "bestfit" => Ok(Rule::BestFit),
            _ => Err(format!(
                "unknown placement rule {s:?}: worst-fit or best-fit"
            )),
        }
    }
}

/// Which waiting job is offered the machines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Queueing {
    /// First come, first served: only the first job in arrival order.
    #[default]
    Fcfs,
    /// Fit processors first served: the first job that fits.
    Fpfs,
}

impl std::str::FromStr for Queueing {
    type Err = String;
    fn from_str(s: &str) -> Result<Queueing, String> {
        match s.to_ascii_lowercase().as_str() {
            "fcfs" => Ok(Queueing::Fcfs),
            "fpfs" => Ok(Queueing::Fpfs),
            _ => Err(format!("unknown queueing {s:?}: fcfs or fpfs")),
        }
    }
}

/// The cluster (an index into `clusters`) of each of `job`'s components,
/// in the job's order, or `None` when the job does not fit as a whole (a
/// component's processors are not idle where it must or may go). A
/// component of no processors takes none, wherever it is put.
pub fn fit(job: &[Component], clusters: &[Cluster], rule: Rule) -> Option<Vec<usize>> {
    let mut idle: Vec<u32> = clusters.iter().map(|c| c.idle).collect();
    let mut placed = vec![usize::MAX; job.len()];
    // Ordered components first: they have no choice.
    for (i, component) in job.iter().enumerate() {
        let Some(name) = &component.cluster else {
            continue;
        };
        let at = clusters.iter().position(|c| &c.name == name)?;
        idle[at] = idle[at].checked_sub(component.processors)?;
        placed[i] = at;
    }
    // Then the unordered ones, largest first (stable: equal sizes keep the
    // job's order).
    let mut unordered: Vec<usize> = (0..job.len())
        .filter(|&i| job[i].cluster.is_none())
        .collect();
    unordered.sort_by(|&a, &b| job[b].processors.cmp(&job[a].processors));
    let mut marked = vec![false; clusters.len()];
    for i in unordered {
        if !marked.is_empty() && marked.iter().all(|&m| m) {
            marked.fill(false);
        }
        let need = job[i].processors;
        let choose = |want_marked: bool| {
            let candidates =
                (0..clusters.len()).filter(|&c| marked[c] == want_marked && idle[c] >= need);
            match rule {
                // The first of equals: the idle list's order decides ties.
                Rule::WorstFit => candidates.min_by(|&a, &b| idle[b].cmp(&idle[a]).then(a.cmp(&b))),
                Rule::BestFit => candidates.min_by(|&a, &b| idle[a].cmp(&idle[b]).then(a.cmp(&b))),
            }
        };
        let at = choose(false).or_else(|| choose(true))?;
        marked[at] = true;
        idle[at] -= need;
        placed[i] = at;
    }
    Some(placed)
}

/// The job of `queue` (in arrival order) that is offered the machines
/// now, and where its components go: the first one under FCFS if it fits,
/// else the first that fits under FPFS. `None`: none is started now.
pub fn next(
    queue: &[Vec<Component>],
    clusters: &[Cluster],
    rule: Rule,
    queueing: Queueing,
) -> Option<(usize, Vec<usize>)> {
    let tried = match queueing {
        Queueing::Fcfs => queue.len().min(1),
        Queueing::Fpfs => queue.len(),
    };
    (0..tried).find_map(|j| fit(&queue[j], clusters, rule).map(|placed| (j, placed)))
}

/// One component of a job to [`place`]: `nodes` slots alike its ad.
#[derive(Debug, Clone)]
pub struct Part<'a> {
    pub ad: &'a starling_protocol::classad::ClassAd,
    pub nodes: u32,
    /// The cluster (domain) it must go to, for an ordered component.
    pub cluster: Option<String>,
}

/// Where every node of a job goes: for each component, one machine (an
/// index into the machines given to [`place`]) per node.
pub type Placement = Vec<Vec<usize>>;

/// Places the nodes of `parts` on `machines` (of the clusters named by
/// `cluster_of`, one per machine) by `rule`, or says why the job does not
/// fit now.
pub fn place(
    parts: &[Part<'_>],
    machines: &[crate::negotiation::Machine<'_>],
    cluster_of: &[String],
    rule: Rule,
) -> Result<Placement, String> {
    use crate::negotiation::{fitting, Request};
    // What each machine has free now, lowered as nodes are packed.
    let mut free: Vec<Request> = machines
        .iter()
        .map(|m| Request::free_in(m.ad).minus(m.pending))
        .collect();
    // Each part's candidates, best first, and what one node takes there.
    let candidates: Vec<Vec<(usize, Request)>> = parts
        .iter()
        .map(|p| {
            fitting(p.ad, machines)
                .into_iter()
                .map(|i| (i, Request::of_job(p.ad, machines[i].ad)))
                .collect()
        })
        .collect();
    let mut names: Vec<String> = cluster_of.to_vec();
    names.sort();
    names.dedup();
    let matching: std::collections::BTreeSet<usize> =
        candidates.iter().flatten().map(|(i, _)| *i).collect();
    let clusters: Vec<Cluster> = names
        .iter()
        .map(|name| Cluster {
            name: name.clone(),
            idle: matching
                .iter()
                .filter(|&&i| &cluster_of[i] == name)
                .map(|&i| free[i].cpus.max(0.0) as u32)
                .sum(),
        })
        .collect();
    let cpus_of = |k: usize| -> u32 {
        let each = candidates[k].first().map_or(1.0, |(_, r)| r.cpus.max(1.0));
        parts[k].nodes.saturating_mul(each as u32)
    };
    let job: Vec<Component> = parts
        .iter()
        .enumerate()
        .map(|(k, p)| Component {
            processors: cpus_of(k),
            cluster: p.cluster.clone(),
        })
        .collect();
    let idle_list = || {
        clusters
            .iter()
            .map(|c| format!("{} {}", c.name, c.idle))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (k, p) in parts.iter().enumerate() {
        if candidates[k].is_empty() {
            return Err(format!(
                "component {k} ({} nodes) matches no machine with room now",
                p.nodes
            ));
        }
        if let Some(c) = &p.cluster {
            if !names.contains(c) {
                return Err(format!(
                    "component {k} must go to {c}, where no machine is in view"
                ));
            }
        }
    }
    let Some(chosen) = fit(&job, &clusters, rule) else {
        let wants: Vec<String> = job
            .iter()
            .enumerate()
            .map(|(k, c)| match &c.cluster {
                Some(at) => format!("component {k}: {} processors in {at}", c.processors),
                None => format!("component {k}: {} processors in one domain", c.processors),
            })
            .collect();
        return Err(format!(
            "the job's components do not fit the idle processors ({}) now: {}",
            idle_list(),
            wants.join("; ")
        ));
    };
    let mut placement: Placement = vec![Vec::new(); parts.len()];
    for (k, p) in parts.iter().enumerate() {
        let cluster = &clusters[chosen[k]].name;
        for &(i, each) in candidates[k]
            .iter()
            .filter(|(i, _)| &cluster_of[*i] == cluster)
        {
            while placement[k].len() < p.nodes as usize && free[i].times(each) > 0 {
                free[i] = free[i].minus(each);
                placement[k].push(i);
            }
        }
        if placement[k].len() < p.nodes as usize {
            return Err(format!(
                "component {k} ({} nodes) does not pack onto {cluster}'s machines: its idle \
                 processors are spread too thinly",
                p.nodes
            ));
        }
    }
    Ok(placement)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn clusters(idle: &[(&str, u32)]) -> Vec<Cluster> {
        idle.iter()
            .map(|(name, idle)| Cluster {
                name: (*name).to_owned(),
                idle: *idle,
            })
            .collect()
    }

    fn unordered(sizes: &[u32]) -> Vec<Component> {
        sizes
            .iter()
            .map(|&processors| Component {
                processors,
                cluster: None,
            })
            .collect()
    }

    fn ordered(parts: &[(u32, &str)]) -> Vec<Component> {
        parts
            .iter()
            .map(|(processors, cluster)| Component {
                processors: *processors,
                cluster: Some((*cluster).to_owned()),
            })
            .collect()
    }

    #[test]
    fn worst_fit_spreads_largest_first_then_reuses_the_emptiest_marked_cluster() {
        // The thesis' shape: 10, 20 and 15 processors over three clusters.
        let c = clusters(&[("a", 30), ("b", 25), ("c", 12)]);
        // 20 → a (30, most idle), 15 → b (25), 10 → c (12).
        assert_eq!(
            fit(&unordered(&[10, 20, 15]), &c, Rule::WorstFit),
            Some(vec![2, 0, 1])
        );
        // Four components on three clusters: the marks are cleared for the
        // fourth, which goes where most is idle then (a: 30 - 8 = 22).
        assert_eq!(
            fit(&unordered(&[8, 8, 8, 8]), &c, Rule::WorstFit),
            Some(vec![0, 1, 2, 0])
        );
        // An unmarked cluster too small: a marked one with room takes it.
        let small = clusters(&[("a", 40), ("b", 4)]);
        assert_eq!(
            fit(&unordered(&[16, 16]), &small, Rule::WorstFit),
            Some(vec![0, 0])
        );
    }

    #[test]
    fn best_fit_packs_into_the_fullest_cluster_that_still_fits() {
        let c = clusters(&[("a", 30), ("b", 25), ("c", 12)]);
        // 20 → b (25 is the least that fits), 15 → a (b's 5 is marked and
        // too small; a's 30 is the only unmarked fit), 10 → c (12).
        assert_eq!(
            fit(&unordered(&[10, 20, 15]), &c, Rule::BestFit),
            Some(vec![2, 1, 0])
        );
    }

    #[test]
    fn ordered_components_go_where_they_say_or_the_job_does_not_fit() {
        let c = clusters(&[("fs0", 144), ("fs3", 64)]);
        let job = ordered(&[(32, "fs0"), (32, "fs0"), (32, "fs3"), (32, "fs3")]);
        assert_eq!(fit(&job, &c, Rule::WorstFit), Some(vec![0, 0, 1, 1]));
        // A third 32 on fs3's 64 does not fit: the job waits as a whole.
        let over = ordered(&[(32, "fs3"), (32, "fs3"), (32, "fs3")]);
        assert_eq!(fit(&over, &c, Rule::WorstFit), None);
        // A cluster not in view.
        assert_eq!(fit(&ordered(&[(1, "fs9")]), &c, Rule::WorstFit), None);
        // Mixed: the ordered part first, the rest around it.
        let mut mixed = ordered(&[(60, "fs3")]);
        mixed.extend(unordered(&[8]));
        assert_eq!(fit(&mixed, &c, Rule::WorstFit), Some(vec![1, 0]));
    }

    #[test]
    fn fcfs_holds_the_queue_for_its_first_job_and_fpfs_lets_a_fitting_one_pass() {
        let c = clusters(&[("fs0", 40), ("fs3", 20)]);
        let big = unordered(&[32, 32]);
        let small = unordered(&[8, 8]);
        let queue = vec![big.clone(), small.clone()];
        assert_eq!(next(&queue, &c, Rule::WorstFit, Queueing::Fcfs), None);
        assert_eq!(
            next(&queue, &c, Rule::WorstFit, Queueing::Fpfs),
            Some((1, vec![0, 1]))
        );
        assert_eq!(next(&[], &c, Rule::WorstFit, Queueing::Fpfs), None);
        assert_eq!("best-fit".parse::<Rule>(), Ok(Rule::BestFit));
        assert_eq!("FPFS".parse::<Queueing>(), Ok(Queueing::Fpfs));
        assert!("random".parse::<Rule>().is_err());
    }

    proptest! {
        /// Whatever fits never takes more than is idle in any cluster,
        /// places every component, and honours every ordered one.
        #[test]
        fn a_fit_never_overcommits_a_cluster(
            idle in proptest::collection::vec(0u32..100, 1..6),
            parts in proptest::collection::vec((0u32..60, proptest::option::of(0usize..6)), 0..8),
            best in any::<bool>(),
        ) {
            let c: Vec<Cluster> = idle
                .iter()
                .enumerate()
                .map(|(i, &idle)| Cluster { name: format!("c{i}"), idle })
                .collect();
            let job: Vec<Component> = parts
                .iter()
                .map(|&(processors, at)| Component {
                    processors,
                    cluster: at.map(|i| format!("c{i}")),
                })
                .collect();
            let rule = if best { Rule::BestFit } else { Rule::WorstFit };
            if let Some(placed) = fit(&job, &c, rule) {
                prop_assert_eq!(placed.len(), job.len());
                let mut used = vec![0u32; c.len()];
                for (component, &at) in job.iter().zip(&placed) {
                    used[at] += component.processors;
                    if let Some(name) = &component.cluster {
                        prop_assert_eq!(&c[at].name, name);
                    }
                }
                for (u, cluster) in used.iter().zip(&c) {
                    prop_assert!(*u <= cluster.idle);
                }
            }
        }
    }

    mod placement {
        use super::super::*;
        use crate::negotiation::{Machine, Request};
        use starling_protocol::classad::{parse_ad, ClassAd};

        fn machine(cpus: i64) -> ClassAd {
            parse_ad(&format!(
                "[MyType = \"Machine\"; Cpus = {cpus}; Memory = 100000; Disk = 10000000; \
                 Requirements = true; Start = true]"
            ))
            .unwrap()
        }

        fn job(cpus: i64) -> ClassAd {
            parse_ad(&format!(
                "[MyType = \"Job\"; RequestCpus = {cpus}; RequestMemory = 1; RequestDisk = 1; \
                 Requirements = TARGET.Cpus >= RequestCpus]"
            ))
            .unwrap()
        }

        fn view(ads: &[ClassAd]) -> Vec<Machine<'_>> {
            ads.iter()
                .map(|ad| Machine {
                    ad,
                    rtt_ms: None,
                    pending: Request::default(),
                    avoid: false,
                })
                .collect()
        }

        #[test]
        fn a_four_node_job_in_two_components_spreads_over_two_domains() {
            let ads = vec![machine(2), machine(2), machine(4), machine(4)];
            let machines = view(&ads);
            let clusters: Vec<String> = ["d0", "d0", "d1", "d1"].map(String::from).to_vec();
            let one = job(1);
            let parts = [
                Part {
                    ad: &one,
                    nodes: 3,
                    cluster: None,
                },
                Part {
                    ad: &one,
                    nodes: 2,
                    cluster: None,
                },
            ];
            // Worst-Fit: the larger component to the domain with the most
            // idle (d1, 8), the other to the unmarked d0.
            let placed = place(&parts, &machines, &clusters, Rule::WorstFit).unwrap();
            assert!(placed[0].iter().all(|&i| clusters[i] == "d1"));
            assert!(placed[1].iter().all(|&i| clusters[i] == "d0"));
            // Its nodes fill the preferred machine before the next.
            assert_eq!(placed[0], vec![2, 2, 2]);
            // Best-Fit: the larger to the fewest idle that fits (d0, 4).
            let placed = place(&parts, &machines, &clusters, Rule::BestFit).unwrap();
            assert!(placed[0].iter().all(|&i| clusters[i] == "d0"));
            assert!(placed[1].iter().all(|&i| clusters[i] == "d1"));
        }

        #[test]
        fn a_job_that_does_not_fit_says_which_component_and_what_is_idle() {
            let ads = vec![machine(2), machine(2)];
            let machines = view(&ads);
            let clusters = vec!["d0".to_owned(), "d1".to_owned()];
            let one = job(1);
            let parts = [Part {
                ad: &one,
                nodes: 3,
                cluster: None,
            }];
            let e = place(&parts, &machines, &clusters, Rule::WorstFit).unwrap_err();
            assert!(e.contains("(d0 2, d1 2)"), "{e}");
            assert!(e.contains("component 0: 3 processors in one domain"), "{e}");
            let pinned = [Part {
                ad: &one,
                nodes: 1,
                cluster: Some("d9".into()),
            }];
            let e = place(&pinned, &machines, &clusters, Rule::WorstFit).unwrap_err();
            assert!(e.contains("must go to d9"), "{e}");
            // Two idle CPUs on each of two machines of one domain hold no
            // node of 3 CPUs, though the domain has 4 idle.
            let big = job(3);
            let same = vec!["d0".to_owned(), "d0".to_owned()];
            let wide = vec![machine(4), machine(4)];
            let mut m = view(&wide);
            for x in &mut m {
                x.pending = Request {
                    cpus: 2.0,
                    memory_mib: 0.0,
                    disk_kib: 0.0,
                };
            }
            let parts = [Part {
                ad: &big,
                nodes: 1,
                cluster: None,
            }];
            let e = place(&parts, &m, &same, Rule::WorstFit).unwrap_err();
            assert!(e.contains("matches no machine with room"), "{e}");
        }

        proptest::proptest! {
            #[test]
            fn a_placement_never_puts_more_on_a_machine_than_it_has_free(
                cpus in proptest::collection::vec(0i64..6, 1..6),
                sizes in proptest::collection::vec((1u32..5, 1i64..3), 1..4),
            ) {
                let ads: Vec<ClassAd> = cpus.iter().map(|&c| machine(c)).collect();
                let machines = view(&ads);
                let clusters: Vec<String> = (0..ads.len()).map(|i| format!("d{}", i % 2)).collect();
                let jobs: Vec<ClassAd> = sizes.iter().map(|&(_, c)| job(c)).collect();
                let parts: Vec<Part<'_>> = sizes
                    .iter()
                    .zip(&jobs)
                    .map(|(&(nodes, _), ad)| Part { ad, nodes, cluster: None })
                    .collect();
                if let Ok(placed) = place(&parts, &machines, &clusters, Rule::WorstFit) {
                    let mut used = vec![0i64; ads.len()];
                    for (k, nodes) in placed.iter().enumerate() {
                        proptest::prop_assert_eq!(nodes.len(), parts[k].nodes as usize);
                        let first = clusters[nodes[0]].clone();
                        for &i in nodes {
                            used[i] += sizes[k].1;
                            // A component stays in one domain.
                            proptest::prop_assert_eq!(&clusters[i], &first);
                        }
                    }
                    for (i, u) in used.iter().enumerate() {
                        proptest::prop_assert!(*u <= cpus[i]);
                    }
                }
            }
        }
    }
}
