//! The universes Starling runs ([`Universe`], by HTCondor's numbers), why
//! it refuses the others, and a parallel-universe proc's own attributes
//! (`machine_count`, `component_domain`, `co_allocation`).
//!
//! It owns the universe names and the parallel commands' checks; the rest
//! of the job ad is `job_ad`'s.

use super::description::SubmitError;
use crate::classad::{ClassAd, Expr, Name, Value};

/// Most nodes one proc (component) of a parallel job may ask for: a
/// co-allocated job's nodes all fit one start barrier
/// ([`crate::claim::MAX_NODES`]).
pub const MAX_MACHINE_COUNT: i64 = crate::claim::MAX_NODES as i64;

/// What `$(Node)` stands for in a parallel job's ad until each node's copy
/// gets its number, as in HTCondor.
pub const NODE_MARKER: &str = "#pArAlLeLnOdE#";

/// A parallel-universe proc's own attributes: `machine_count` (HTCondor's
/// `MinHosts`/`MaxHosts`, required), and Starling's co-allocation
/// commands: `component_domain` pins the component to a domain (an
/// ordered request, `StarlingComponentDomain`), `co_allocation` chooses the
/// placement rule (`worst_fit`, `best_fit`: `StarlingCoallocation`).
pub(super) fn parallel_attributes(
    ad: &mut ClassAd,
    get: &dyn Fn(&str) -> Result<Option<String>, SubmitError>,
    bad: &dyn Fn(&str, String) -> SubmitError,
) -> Result<(), SubmitError> {
    let count = match get("machine_count")?.or(get("node_count")?) {
        Some(c) => c,
        None => {
            return Err(bad(
                "machine_count",
                "a parallel job needs one: say how many machines it runs on".to_owned(),
            ))
        }
    };
    let n: i64 = count
        .trim()
        .parse()
        .map_err(|_| bad("machine_count", format!("{count:?} is not a whole number")))?;
    if !(1..=MAX_MACHINE_COUNT).contains(&n) {
        return Err(bad(
            "machine_count",
            format!("{n} is not within 1-{MAX_MACHINE_COUNT} (Starling's limit per component)"),
        ));
    }
    for name in ["MinHosts", "MaxHosts"] {
        ad.insert(Name::known(name), Expr::Literal(Value::Int(n)));
    }
    // As condor_submit writes for the parallel universe.
    for name in ["WantIOProxy", "JobRequiresSandbox"] {
        ad.insert(Name::known(name), Expr::Literal(Value::Bool(true)));
    }
    // Empty: unordered again (commands hold until changed, so a later
    // component undoes an earlier one's domain this way).
    if let Some(domain) = get("component_domain")?.filter(|d| !d.trim().is_empty()) {
        let domain = domain.trim();
        crate::identity::check_domain_name(domain)
            .map_err(|e| bad("component_domain", format!("{domain:?}: {e}")))?;
        ad.insert(
            Name::known("StarlingComponentDomain"),
            Expr::Literal(Value::String(domain.into())),
        );
    }
    if let Some(rule) = get("co_allocation")? {
        let rule = match rule.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "worst_fit" => "worst_fit",
            "best_fit" => "best_fit",
            _ => {
                return Err(bad(
                    "co_allocation",
                    format!("{rule:?} is not worst_fit or best_fit"),
                ))
            }
        };
        ad.insert(
            Name::known("StarlingCoallocation"),
            Expr::Literal(Value::String(rule.into())),
        );
    }
    Ok(())
}

/// The universes Starling runs, by HTCondor's numbers (`JobUniverse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Universe {
    /// Matched to a machine of the pool (5).
    Vanilla,
    /// Run by the submit agent itself, at once, unmatched (7).
    Scheduler,
    /// As the scheduler universe, under a starter in HTCondor (12).
    Local,
    /// A class (and jar files) run by the JVM of a machine that
    /// advertises `HasJava` (10).
    Java,
    /// `machine_count` nodes started together on as many slots, all or
    /// none (11); the procs of one cluster are one co-allocated job.
    Parallel,
}

impl Universe {
    pub(super) fn number(self) -> i64 {
        match self {
            Universe::Vanilla => 5,
            Universe::Scheduler => 7,
            Universe::Local => 12,
            Universe::Java => 10,
            Universe::Parallel => 11,
        }
    }
}

/// The universe a submit file names, or why Starling refuses it.
pub(super) fn universe_of(universe: &str) -> Result<Universe, &'static str> {
    Err(match universe.to_ascii_lowercase().as_str() {
        "vanilla" => return Ok(Universe::Vanilla),
        "scheduler" => return Ok(Universe::Scheduler),
        "local" => return Ok(Universe::Local),
        "java" => return Ok(Universe::Java),
        "parallel" => return Ok(Universe::Parallel),
        "docker" | "container" => {
            "Starling cannot run containers yet (no machine advertises a container runtime); \
             run the program in the vanilla universe"
        }
        "mpi" => "HTCondor itself replaced the MPI universe with the parallel universe; use that",
        "grid" | "vm" | "standard" | "globus" => {
            "Starling does not hand jobs to other batch systems or virtual machines"
        }
        _ => "it is not an HTCondor universe",
    })
}
