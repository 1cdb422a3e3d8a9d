//! Why is my job idle: HTCondor users' most common question, answered as
//! `condor_q -better-analyze` does, but from this agent's view of the pool.
//!
//! For each machine: does the job's `Requirements` hold against it, and if
//! not, which of its top-level `&&` clauses fail; does the machine's
//! `START` and `Requirements` hold for the job. Then the refusals machines
//! sent back when asked for a claim, and for each failing clause that
//! compares a job attribute with a machine attribute, what would widen the
//! match ("RequestMemory of at most 2048 would match 3 more machines").

use std::fmt;

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::BinaryOp;
use starling_protocol::classad::{unparse, ClassAd, Evaluator, Expr, Name, Side, Value};

/// What [`analyze`] found.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub machines: usize,
    /// Machines the job's Requirements reject.
    pub rejected_by_job: usize,
    /// Machines whose START or Requirements reject the job.
    pub rejected_by_machine: usize,
    /// Machines matching both ways.
    pub matched: usize,
    /// Each clause of the job's Requirements and how many machines fail it.
    pub clauses: Vec<(String, usize)>,
    /// Machine-side failures: machine name and what failed.
    pub machine_side: Vec<(String, String)>,
    /// Refusals of claims: machine and reason.
    pub refusals: Vec<(String, String)>,
    pub suggestions: Vec<String>,
}

/// The name a machine is shown by.
pub fn machine_name(machine: &ClassAd) -> String {
    for attr in ["Name", "Machine"] {
        if let Value::String(s) =
            Evaluator::with_ads(Some(machine), None).eval_attr(Side::My, Name::known(attr).folded())
        {
            return s.to_string();
        }
    }
    "(unnamed)".to_owned()
}

/// The top-level `&&` clauses of an expression.
fn clauses(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::Binary(BinaryOp::And, parts) => {
            let mut out = clauses(&parts[0]);
            out.extend(clauses(&parts[1]));
            out
        }
        Expr::Paren(inner) if matches!(**inner, Expr::Binary(BinaryOp::And, _)) => clauses(inner),
        other => vec![other],
    }
}

/// Which clauses of `my`'s `Requirements` fail against `target`.
pub fn check_side(my: &ClassAd, target: &ClassAd, now: i64) -> Vec<String> {
    let Some(requirements) = my.get("Requirements") else {
        return Vec::new();
    };
    clauses(requirements)
        .into_iter()
        .filter(|clause| {
            let mut ev = Evaluator::with_ads(Some(my), Some(target)).now(now);
            !requirement_holds(&ev.eval_on(Side::My, clause))
        })
        .map(unparse)
        .collect()
}

fn holds(my: &ClassAd, target: &ClassAd, attr: &str, now: i64) -> Option<String> {
    let expr = my.get(attr)?;
    let mut ev = Evaluator::with_ads(Some(my), Some(target)).now(now);
    let v = ev.eval_on(Side::My, expr);
    (!requirement_holds(&v)).then(|| format!("{attr} ({}) is not true", unparse(expr)))
}

/// Explains `job` against `machines` (name, ad) and the claim `refusals`.
pub fn analyze(
    job: &ClassAd,
    machines: &[(String, &ClassAd)],
    refusals: &[(String, String)],
    now: i64,
) -> Analysis {
    let mut a = Analysis {
        machines: machines.len(),
        refusals: refusals.to_vec(),
        ..Analysis::default()
    };
    let mut clause_counts: Vec<(String, usize)> = job
        .get("Requirements")
        .map(|r| clauses(r).into_iter().map(|c| (unparse(c), 0)).collect())
        .unwrap_or_default();
    for (name, machine) in machines {
        let failing = check_side(job, machine, now);
        for f in &failing {
            if let Some(entry) = clause_counts.iter_mut().find(|(c, _)| c == f) {
                entry.1 += 1;
            }
        }
        let machine_fails =
            holds(machine, job, "START", now).or_else(|| holds(machine, job, "Requirements", now));
        if !failing.is_empty() {
            a.rejected_by_job += 1;
        }
        if let Some(why) = machine_fails {
            a.rejected_by_machine += 1;
            a.machine_side.push((name.clone(), why));
        }
        if failing.is_empty()
            && holds(machine, job, "START", now).is_none()
            && holds(machine, job, "Requirements", now).is_none()
        {
            a.matched += 1;
        }
    }
    a.suggestions = suggestions(job, machines, &clause_counts, now);
    a.clauses = clause_counts;
    a
}

/// For clauses `TARGET.X >= MY.Y` (or `<=`, `>`, `<`) where `Y` is a
/// number in the job: the value of `Y` that would let more machines match.
fn suggestions(
    job: &ClassAd,
    machines: &[(String, &ClassAd)],
    counts: &[(String, usize)],
    now: i64,
) -> Vec<String> {
    let mut out = Vec::new();
    let Some(requirements) = job.get("Requirements") else {
        return out;
    };
    for clause in clauses(requirements) {
        let text = unparse(clause);
        if !counts.iter().any(|(c, n)| *c == text && *n > 0) {
            continue;
        }
        let inner = match clause {
            Expr::Paren(e) => e.as_ref(),
            e => e,
        };
        let Expr::Binary(op @ (BinaryOp::Ge | BinaryOp::Gt), parts) = inner else {
            continue;
        };
        let (Expr::Select(_, target_attr), Expr::Attr(my_attr)) = (&parts[0], &parts[1]) else {
            continue;
        };
        let mut values: Vec<f64> = machines
            .iter()
            .filter_map(|(_, m)| {
                let mut ev = Evaluator::with_ads(Some(m), None).now(now);
                match ev.eval_attr(Side::My, target_attr.name.folded()) {
                    Value::Int(i) => Some(i as f64),
                    Value::Real(r) => Some(r),
                    _ => None,
                }
            })
            .collect();
        if values.is_empty() {
            continue;
        }
        values.sort_by(|a, b| b.total_cmp(a));
        let mine =
            match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, my_attr.name.folded()) {
                Value::Int(i) => i as f64,
                Value::Real(r) => r,
                _ => continue,
            };
        let fits = |v: f64| {
            if *op == BinaryOp::Ge {
                v >= mine
            } else {
                v > mine
            }
        };
        let now_matching = values.iter().filter(|v| fits(**v)).count();
        if now_matching < values.len() {
            let best = values[0];
            let more = values
                .iter()
                .filter(|v| **v >= values[values.len() - 1])
                .count()
                - now_matching;
            out.push(format!(
                "{} of at most {} would pass `{}` on the largest machine; {} would pass it on every machine ({} more)",
                my_attr.name.as_str(),
                best,
                text,
                values[values.len() - 1],
                more
            ));
        }
    }
    out
}

impl fmt::Display for Analysis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} machines in this agent's view of the pool",
            self.machines
        )?;
        writeln!(
            f,
            "  {} are rejected by the job's Requirements",
            self.rejected_by_job
        )?;
        writeln!(
            f,
            "  {} reject the job (their START or Requirements)",
            self.rejected_by_machine
        )?;
        writeln!(f, "  {} match both ways", self.matched)?;
        if !self.clauses.is_empty() {
            writeln!(f, "\nThe job's Requirements, clause by clause:")?;
            for (clause, n) in &self.clauses {
                writeln!(f, "  {:>5} machines fail  {clause}", n)?;
            }
        }
        if !self.machine_side.is_empty() {
            writeln!(f, "\nMachines that do not want the job:")?;
            for (name, why) in self.machine_side.iter().take(20) {
                writeln!(f, "  {name}: {why}")?;
            }
        }
        if !self.refusals.is_empty() {
            writeln!(f, "\nClaims refused recently:")?;
            for (name, why) in &self.refusals {
                writeln!(f, "  {name}: {why}")?;
            }
        }
        if !self.suggestions.is_empty() {
            writeln!(f, "\nTo widen the match:")?;
            for s in &self.suggestions {
                writeln!(f, "  {s}")?;
            }
        }
        if self.matched > 0 && self.refusals.is_empty() {
            writeln!(
                f,
                "\nThe job matches; it runs as soon as a matching machine has room."
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    #[test]
    fn the_failing_clause_and_a_wider_request_are_named() {
        let job = parse_ad(
            "[RequestMemory = 4096; Requirements = (TARGET.Arch == \"X86_64\") && (TARGET.Memory >= RequestMemory)]",
        )
        .unwrap();
        let small = parse_ad("[Name = \"small\"; Arch = \"X86_64\"; Memory = 2048]").unwrap();
        let big = parse_ad("[Name = \"big\"; Arch = \"X86_64\"; Memory = 8192]").unwrap();
        let arm =
            parse_ad("[Name = \"arm\"; Arch = \"ARM\"; Memory = 8192; START = false]").unwrap();
        let machines = vec![
            ("small".to_owned(), &small),
            ("big".to_owned(), &big),
            ("arm".to_owned(), &arm),
        ];
        let a = analyze(
            &job,
            &machines,
            &[("big".into(), "machine is busy".into())],
            0,
        );
        assert_eq!(
            (
                a.machines,
                a.rejected_by_job,
                a.rejected_by_machine,
                a.matched
            ),
            (3, 2, 1, 1)
        );
        assert_eq!(
            a.clauses[1],
            ("(TARGET.Memory >= RequestMemory)".to_owned(), 1)
        );
        let text = a.to_string();
        assert!(text.contains("arm: START (false) is not true"), "{text}");
        assert!(text.contains("RequestMemory of at most"), "{text}");
        assert!(text.contains("big: machine is busy"), "{text}");
    }
}
