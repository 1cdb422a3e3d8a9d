//! Why is my job idle: HTCondor users' most common question, answered as
//! `condor_q -better-analyze` does, but from this agent's view of the pool.
//!
//! Each machine lands in exactly one bucket, in this order:
//!
//! 1. **rejected by the job**: the job's `Requirements` fail even against the
//!    machine idle (its `Cpus`, `Memory`, `Disk` at their totals, all its
//!    GPUs available), or the
//!    job's request cannot be sized at all;
//! 2. **rejected by the machine**: its `START` or `Requirements` are not true
//!    for the job (UNDEFINED is not true), its disk is full
//!    (`StarlingDiskFull`, whose reason is given), or its domain's
//!    published `accept` term refuses the job (the term is quoted,
//!    [`crate::terms::published_acceptance`]);
//! 3. **too small**: the job's request (rounded as [`crate::slots`] rounds it)
//!    is more than the machine has in all;
//! 4. **busy**: it would match, but not with what is free now;
//! 5. **matched**: it matches both ways and has room now.
//!
//! Then each top-level `&&` clause of the job's `Requirements` with how many
//! machines (as they are now) fail it, the refusals machines sent back when
//! asked for a claim, and suggestions. A suggestion comes from a failing
//! clause that compares a machine attribute with a number or string the job
//! sets (`TARGET.Memory >= RequestMemory` with `RequestMemory = 4096`, or
//! `TARGET.Memory >= 4096`), or from a request larger than some machines: the
//! job is re-analyzed with the value changed to each machine's value, and the
//! smallest change that gains machines is offered ("lower RequestMemory to
//! 2048 to match 6 more machines"), with the change that gains the most when
//! that is a different one.

use std::collections::BTreeMap;
use std::fmt;

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{
    unparse, unparse_value, BinaryOp, ClassAd, Evaluator, Expr, Name, Side, Value,
};

use crate::slots::{request_of, Resources, DISK_QUANTUM_KIB, MEMORY_QUANTUM_MIB};

/// Most values tried per suggestion: each try re-analyzes the job against
/// every machine.
const MAX_TRIES: usize = 12;

/// Most lines of machine-side failures and of claim refusals shown.
const MAX_LISTED: usize = 20;

/// A clause of the job's `Requirements` and how many machines fail it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// The clause as text.
    pub text: String,
    /// Machines (as they are now) on which it is not true.
    pub failing: usize,
}

/// A change to the job that would let more machines match.
#[derive(Debug, Clone)]
pub struct Suggestion {
    /// The clause of the job's `Requirements` the change is for, when it
    /// comes from one.
    pub clause: Option<String>,
    /// What to change: a job attribute, or the clause's constant.
    pub change: Change,
    /// The new value.
    pub value: Value,
    /// How many more machines would match (busy or not).
    pub more: usize,
}

/// What a [`Suggestion`] changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Set this job attribute (as the job spells it) to the new value; whether
    /// it goes up or down.
    Attribute { name: String, raise: Option<bool> },
    /// Write the clause with the new value in place of its constant: the
    /// clause as it would read.
    Clause { rewritten: String },
}

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = unparse_value(&self.value);
        let machines = if self.more == 1 {
            "machine"
        } else {
            "machines"
        };
        match &self.change {
            Change::Attribute { name, raise } => {
                let verb = match raise {
                    Some(true) => "raise",
                    Some(false) => "lower",
                    None => "set",
                };
                write!(f, "{verb} {name} to {value}")?;
            }
            Change::Clause { rewritten } => {
                let clause = self.clause.as_deref().unwrap_or_default();
                write!(f, "change `{clause}` to `{rewritten}`")?;
            }
        }
        write!(f, " to match {} more {machines}", self.more)
    }
}

/// What [`analyze`] found.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Machines in the view.
    pub machines: usize,
    /// Machines the job's Requirements reject even when idle.
    pub rejected_by_job: usize,
    /// Machines whose START or Requirements reject the job.
    pub rejected_by_machine: usize,
    /// Machines with less in all than the job requests.
    pub too_small: usize,
    /// Machines that would match but lack the free resources now.
    pub busy: usize,
    /// Machines matching both ways with room now.
    pub matched: usize,
    /// Why the job's request cannot be sized, when it cannot.
    pub request_error: Option<String>,
    /// Each clause of the job's Requirements, in order.
    pub clauses: Vec<Clause>,
    /// Machine-side failures: machine name and what failed.
    pub machine_side: Vec<(String, String)>,
    /// Refusals of claims: machine and reason.
    pub refusals: Vec<(String, String)>,
    pub suggestions: Vec<Suggestion>,
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

/// Which top-level `&&` clauses of `my`'s `Requirements` are not true
/// against `target`, as text; empty when they all hold or there are none.
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

/// `None` when `my`'s `attr` is missing or true against `target`, else what
/// failed.
fn fails(my: &ClassAd, target: &ClassAd, attr: &str, now: i64) -> Option<String> {
    let expr = my.get(attr)?;
    let mut ev = Evaluator::with_ads(Some(my), Some(target)).now(now);
    let v = ev.eval_on(Side::My, expr);
    (!requirement_holds(&v)).then(|| {
        format!(
            "{attr} ({}) is {}",
            unparse(expr),
            if matches!(v, Value::Bool(false)) {
                "false".to_owned()
            } else {
                unparse_value(&v)
            }
        )
    })
}

/// The machine as it would be with nothing claimed: `Cpus`, `Memory` and
/// `Disk` at their totals where the ad gives totals, and every GPU it
/// lists available.
fn idle_view(machine: &ClassAd) -> ClassAd {
    let mut idle = machine.clone();
    for (plain, total) in [
        ("Cpus", "TotalCpus"),
        ("Memory", "TotalMemory"),
        ("Disk", "TotalDisk"),
    ] {
        if let Some(expr) = machine.get(total) {
            idle.insert(Name::known(plain), expr.clone());
        }
    }
    if machine.get("DetectedGPUs").is_some() {
        let devices = crate::slots::devices_of(machine);
        crate::slots::set_gpu_attributes(&mut idle, &devices.iter().collect::<Vec<_>>());
    }
    idle
}

/// Where one machine stands for the job.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    RejectedByJob,
    BadRequest(String),
    RejectedByMachine(String),
    TooSmall,
    Busy,
    Matched,
}

impl Verdict {
    fn would_match(&self) -> bool {
        matches!(self, Verdict::Busy | Verdict::Matched)
    }
}

/// A machine of the view, with its idle view made once.
struct Seen<'a> {
    name: &'a str,
    now_ad: &'a ClassAd,
    idle: ClassAd,
}

fn verdict(job: &ClassAd, machine: &Seen<'_>, now: i64) -> Verdict {
    // A request that cannot be sized (NaN, infinite, negative) first: the
    // Requirements that compare with it fail too, and would only say that
    // the job rejects every machine.
    let request = match request_of(job, machine.now_ad, now) {
        Ok(r) => r,
        Err(e) => return Verdict::BadRequest(e.to_string()),
    };
    let job_holds = |target: &ClassAd| fails(job, target, "Requirements", now).is_none();
    if !job_holds(&machine.idle) {
        return Verdict::RejectedByJob;
    }
    // A full disk makes START false; its reason says more than START.
    if let Some(reason) = crate::claiming::disk_full(machine.now_ad) {
        return Verdict::RejectedByMachine(reason);
    }
    if let Some(why) = fails(machine.now_ad, job, "START", now)
        .or_else(|| fails(machine.now_ad, job, "Requirements", now))
    {
        return Verdict::RejectedByMachine(why);
    }
    if let Some(reason) = crate::terms::published_acceptance(job, machine.now_ad, now)
        .as_ref()
        .and_then(|a| a.refusal())
    {
        return Verdict::RejectedByMachine(reason.to_owned());
    }
    if !Resources::totals_of(machine.now_ad).fits(&request) {
        return Verdict::TooSmall;
    }
    if !job_holds(machine.now_ad) || !free_of(machine.now_ad).fits(&request) {
        return Verdict::Busy;
    }
    Verdict::Matched
}

/// What the machine's ad says is free: `Cpus`, `Memory`, `Disk`, `GPUs`,
/// else the totals.
fn free_of(machine: &ClassAd) -> Resources {
    let mut plain = ClassAd::new();
    for name in ["Cpus", "Memory", "Disk", "GPUs"] {
        if let Some(e) = machine.get(name) {
            plain.insert(Name::known(name), e.clone());
        }
    }
    let totals = Resources::totals_of(machine);
    let free = Resources::totals_of(&plain);
    Resources {
        cpus: if machine.get("Cpus").is_some() {
            free.cpus
        } else {
            totals.cpus
        },
        memory_mib: if machine.get("Memory").is_some() {
            free.memory_mib
        } else {
            totals.memory_mib
        },
        disk_kib: if machine.get("Disk").is_some() {
            free.disk_kib
        } else {
            totals.disk_kib
        },
        gpus: if machine.get("GPUs").is_some() {
            free.gpus
        } else {
            totals.gpus
        },
    }
}

fn would_match_count(job: &ClassAd, machines: &[Seen<'_>], now: i64) -> usize {
    machines
        .iter()
        .filter(|m| verdict(job, m, now).would_match())
        .count()
}

/// Explains `job` against `machines` (name, ad as advertised now) and the
/// claim `refusals` (machine, reason) at `now`.
pub fn analyze(
    job: &ClassAd,
    machines: &[(String, &ClassAd)],
    refusals: &[(String, String)],
    now: i64,
) -> Analysis {
    let seen: Vec<Seen<'_>> = machines
        .iter()
        .map(|(name, ad)| Seen {
            name,
            now_ad: ad,
            idle: idle_view(ad),
        })
        .collect();
    let mut a = Analysis {
        machines: machines.len(),
        refusals: refusals.to_vec(),
        ..Analysis::default()
    };
    let requirement_clauses: Vec<&Expr> = job.get("Requirements").map(clauses).unwrap_or_default();
    a.clauses = requirement_clauses
        .iter()
        .map(|c| Clause {
            text: unparse(c),
            failing: 0,
        })
        .collect();
    for machine in &seen {
        for (clause, count) in requirement_clauses.iter().zip(a.clauses.iter_mut()) {
            let mut ev = Evaluator::with_ads(Some(job), Some(machine.now_ad)).now(now);
            if !requirement_holds(&ev.eval_on(Side::My, clause)) {
                count.failing += 1;
            }
        }
        match verdict(job, machine, now) {
            Verdict::RejectedByJob => a.rejected_by_job += 1,
            Verdict::BadRequest(e) => {
                a.rejected_by_job += 1;
                a.request_error.get_or_insert(e);
            }
            Verdict::RejectedByMachine(why) => {
                a.rejected_by_machine += 1;
                a.machine_side.push((machine.name.to_owned(), why));
            }
            Verdict::TooSmall => a.too_small += 1,
            Verdict::Busy => a.busy += 1,
            Verdict::Matched => a.matched += 1,
        }
    }
    a.suggestions = suggestions(job, &requirement_clauses, &a, &seen, now);
    a
}

/// One side of a comparison, as far as suggestions care.
#[derive(Debug, Clone)]
enum Operand<'e> {
    /// An attribute of the machine.
    Machine(Name),
    /// A job attribute set to a literal.
    JobAttr(Name, Value),
    /// A literal in the clause.
    Constant(&'e Expr, Value),
}

fn operand<'e>(e: &'e Expr, job: &ClassAd) -> Option<Operand<'e>> {
    let literal = |v: &Value| matches!(v, Value::Int(_) | Value::Real(_) | Value::String(_));
    let job_attr = |name: Name| match job.get_folded(name.folded()) {
        Some(Expr::Literal(v)) if literal(v) => Some(Operand::JobAttr(name, v.clone())),
        _ => None,
    };
    match e {
        Expr::Paren(inner) => operand(inner, job),
        Expr::Literal(v) if literal(v) => Some(Operand::Constant(e, v.clone())),
        Expr::Select(base, r) => match &**base {
            Expr::Attr(b) if b.key.as_str() == "target" => Some(Operand::Machine(r.name)),
            Expr::Attr(b) if b.key.as_str() == "my" => job_attr(r.name),
            _ => None,
        },
        Expr::Attr(r) if !r.absolute => {
            if job.get_folded(r.key).is_some() {
                job_attr(r.name)
            } else {
                Some(Operand::Machine(r.name))
            }
        }
        _ => None,
    }
}

/// `a op b` read as `b op' a`.
fn flipped(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        other => other,
    }
}

/// A failing clause `machine_attr op job_value` the job can change.
struct Lever<'e> {
    clause: Option<&'e Expr>,
    machine_attr: Name,
    /// With the machine's attribute on the left.
    op: BinaryOp,
    job_side: Operand<'e>,
    current: Value,
}

fn lever<'e>(clause: &'e Expr, job: &ClassAd) -> Option<Lever<'e>> {
    let mut inner = clause;
    while let Expr::Paren(e) = inner {
        inner = e;
    }
    let Expr::Binary(
        op @ (BinaryOp::Eq
        | BinaryOp::Is
        | BinaryOp::Lt
        | BinaryOp::Le
        | BinaryOp::Gt
        | BinaryOp::Ge),
        parts,
    ) = inner
    else {
        return None;
    };
    let (left, right) = (operand(&parts[0], job)?, operand(&parts[1], job)?);
    let (machine_attr, op, job_side) = match (left, right) {
        (Operand::Machine(m), other @ (Operand::JobAttr(..) | Operand::Constant(..))) => {
            (m, *op, other)
        }
        (other @ (Operand::JobAttr(..) | Operand::Constant(..)), Operand::Machine(m)) => {
            (m, flipped(*op), other)
        }
        _ => return None,
    };
    let current = match &job_side {
        Operand::JobAttr(_, v) | Operand::Constant(_, v) => v.clone(),
        Operand::Machine(_) => return None,
    };
    Some(Lever {
        clause: Some(clause),
        machine_attr,
        op,
        job_side,
        current,
    })
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Real(r) if r.is_finite() => Some(*r),
        _ => None,
    }
}

/// The job values to try for `lever`, nearest the current one first (most
/// common first for `==`), at most [`MAX_TRIES`], with whether each raises
/// the job's value.
fn tries(lever: &Lever<'_>, machine_values: &[Value]) -> Vec<(Value, Option<bool>)> {
    let current = number(&lever.current);
    let mut out: Vec<(Value, Option<bool>)> = Vec::new();
    match (lever.op, current) {
        (BinaryOp::Eq | BinaryOp::Is, _) => {
            let mut counts: BTreeMap<String, (usize, Value)> = BTreeMap::new();
            let now_text = unparse_value(&lever.current).to_ascii_lowercase();
            for v in machine_values {
                let text = unparse_value(v).to_ascii_lowercase();
                if text != now_text {
                    counts.entry(text).or_insert((0, v.clone())).0 += 1;
                }
            }
            let mut by_count: Vec<(usize, Value)> = counts.into_values().collect();
            by_count.sort_by_key(|e| std::cmp::Reverse(e.0));
            out = by_count.into_iter().map(|(_, v)| (v, None)).collect();
        }
        (op, Some(current)) => {
            // The job value that lets a machine value x pass `x op job`.
            let passing = |x: &Value| -> Option<Value> {
                match (op, x) {
                    (BinaryOp::Ge | BinaryOp::Le, Value::Int(_) | Value::Real(_)) => {
                        Some(x.clone())
                    }
                    (BinaryOp::Gt, Value::Int(i)) => i.checked_sub(1).map(Value::Int),
                    (BinaryOp::Lt, Value::Int(i)) => i.checked_add(1).map(Value::Int),
                    _ => None,
                }
            };
            let raise = matches!(op, BinaryOp::Le | BinaryOp::Lt);
            let mut values: Vec<(f64, Value)> = machine_values
                .iter()
                .filter_map(passing)
                .filter_map(|v| Some((number(&v)?, v)))
                .filter(|(n, _)| if raise { *n > current } else { *n < current })
                .collect();
            values.sort_by(|a, b| {
                if raise {
                    a.0.total_cmp(&b.0)
                } else {
                    b.0.total_cmp(&a.0)
                }
            });
            values.dedup_by(|a, b| a.0 == b.0);
            out = values.into_iter().map(|(_, v)| (v, Some(raise))).collect();
        }
        _ => {}
    }
    if out.len() > MAX_TRIES {
        // Evenly spread, keeping the nearest and the farthest.
        let last = out.len() - 1;
        out = (0..MAX_TRIES)
            .map(|i| out[i * last / (MAX_TRIES - 1)].clone())
            .collect();
    }
    out
}

/// `expr` with the node at `target` replaced by `with`.
fn replaced(expr: &Expr, target: *const Expr, with: &Expr) -> Expr {
    if std::ptr::eq(expr, target) {
        return with.clone();
    }
    match expr {
        Expr::Binary(op, parts) => Expr::binary(
            *op,
            replaced(&parts[0], target, with),
            replaced(&parts[1], target, with),
        ),
        Expr::Paren(inner) => Expr::Paren(Box::new(replaced(inner, target, with))),
        other => other.clone(),
    }
}

/// The job with `lever`'s value set to `value`.
fn changed(job: &ClassAd, lever: &Lever<'_>, value: &Value) -> (ClassAd, Change) {
    let mut job2 = job.clone();
    let literal = Expr::Literal(value.clone());
    let change = match &lever.job_side {
        Operand::JobAttr(name, _) => {
            job2.insert(*name, literal);
            Change::Attribute {
                name: name.as_str().to_owned(),
                raise: None,
            }
        }
        Operand::Constant(node, _) => {
            let clause = lever.clause.map(|c| replaced(c, *node, &literal));
            if let (Some(requirements), Some(_)) = (job.get("Requirements"), lever.clause) {
                let target: *const Expr = *node;
                job2.insert(
                    Name::known("Requirements"),
                    replaced(requirements, target, &literal),
                );
            }
            Change::Clause {
                rewritten: clause.as_ref().map(unparse).unwrap_or_default(),
            }
        }
        Operand::Machine(_) => Change::Clause {
            rewritten: String::new(),
        },
    };
    (job2, change)
}

fn suggestions(
    job: &ClassAd,
    requirement_clauses: &[&Expr],
    analysis: &Analysis,
    machines: &[Seen<'_>],
    now: i64,
) -> Vec<Suggestion> {
    let base = analysis.busy + analysis.matched;
    if base == machines.len() || analysis.request_error.is_some() {
        return Vec::new();
    }
    let mut levers: Vec<Lever<'_>> = requirement_clauses
        .iter()
        .zip(&analysis.clauses)
        .filter(|(_, count)| count.failing > 0)
        .filter_map(|(clause, _)| lever(clause, job))
        .collect();
    if analysis.too_small > 0 {
        for (request, total) in [
            ("RequestCpus", "TotalCpus"),
            ("RequestMemory", "TotalMemory"),
            ("RequestDisk", "TotalDisk"),
        ] {
            let name = Name::known(request);
            if let Some(Expr::Literal(v @ (Value::Int(_) | Value::Real(_)))) = job.get(request) {
                levers.push(Lever {
                    clause: None,
                    machine_attr: Name::known(total),
                    op: BinaryOp::Ge,
                    job_side: Operand::JobAttr(name, v.clone()),
                    current: v.clone(),
                });
            }
        }
    }
    let mut out: Vec<Suggestion> = Vec::new();
    for lever in &levers {
        let machine_values: Vec<Value> = machines
            .iter()
            .filter_map(|m| {
                let key = lever.machine_attr.folded();
                let mut ev = Evaluator::with_ads(Some(&m.idle), None).now(now);
                let v = ev.eval_attr(Side::My, key);
                let v = if matches!(v, Value::Undefined) && lever.clause.is_none() {
                    // A request lever on an ad without totals: its plain
                    // attribute is the total.
                    let plain = &lever.machine_attr.as_str()["Total".len()..];
                    let plain = Name::new(plain).ok()?;
                    ev.eval_attr(Side::My, plain.folded())
                } else {
                    v
                };
                let v = quantized(lever, v);
                matches!(v, Value::Int(_) | Value::Real(_) | Value::String(_)).then_some(v)
            })
            .collect();
        let mut found: Vec<Suggestion> = Vec::new();
        for (value, raise) in tries(lever, &machine_values) {
            let (job2, mut change) = changed(job, lever, &value);
            if let Change::Attribute { raise: r, .. } = &mut change {
                *r = raise;
            }
            let more = would_match_count(&job2, machines, now).saturating_sub(base);
            if more > 0 {
                found.push(Suggestion {
                    clause: lever.clause.map(unparse),
                    change,
                    value,
                    more,
                });
            }
        }
        // The nearest change that helps, and the one that helps most.
        let Some(nearest) = found.first().cloned() else {
            continue;
        };
        let most = found.iter().fold(
            &nearest,
            |best, s| {
                if s.more > best.more {
                    s
                } else {
                    best
                }
            },
        );
        let most = (most.more > nearest.more).then(|| most.clone());
        for s in std::iter::once(nearest).chain(most) {
            if !out
                .iter()
                .any(|o| o.change == s.change && o.value.identical(&s.value))
            {
                out.push(s);
            }
        }
    }
    out
}

/// A machine total as a request that fits it: memory and disk rounded down
/// to the quanta requests are rounded up to.
fn quantized(lever: &Lever<'_>, v: Value) -> Value {
    if lever.clause.is_some() {
        return v;
    }
    let quantum = match lever.machine_attr.folded().as_str() {
        "totalmemory" => MEMORY_QUANTUM_MIB,
        "totaldisk" => DISK_QUANTUM_KIB,
        _ => 1,
    };
    match number(&v) {
        Some(n) if n >= quantum as f64 => {
            let whole = (n as u64 / quantum).saturating_mul(quantum);
            Value::Int(i64::try_from(whole).unwrap_or(i64::MAX))
        }
        _ => Value::Undefined,
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl fmt::Display for Analysis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = &self.request_error {
            writeln!(f, "The job's request cannot be used: {e}\n")?;
        }
        if !self.clauses.is_empty() {
            // "N machines fail  CLAUSE": the line scripts and tests look for.
            writeln!(
                f,
                "The job's Requirements, clause by clause, on the {}:",
                plural(self.machines, "machine", "machines")
            )?;
            for c in &self.clauses {
                let fail = if c.failing == 1 {
                    "machine fails"
                } else {
                    "machines fail"
                };
                writeln!(f, "  {:>5} {fail}  {}", c.failing, c.text)?;
            }
            writeln!(f)?;
        }
        writeln!(
            f,
            "{} in this agent's view of the pool:",
            plural(self.machines, "machine", "machines")
        )?;
        let rows = [
            (
                self.rejected_by_job,
                "are rejected by the job's Requirements",
            ),
            (
                self.rejected_by_machine,
                "reject the job (their START, Requirements or domain's terms)",
            ),
            (self.too_small, "are too small for the job's request"),
            (self.busy, "match but have too little free now"),
            (self.matched, "match and have room now"),
        ];
        for (n, what) in rows {
            writeln!(f, "  {n:>5} {what}")?;
        }
        if !self.machine_side.is_empty() {
            writeln!(f, "\nMachines that do not want the job:")?;
            for (name, why) in self.machine_side.iter().take(MAX_LISTED) {
                writeln!(f, "  {name}: {why}")?;
            }
            if self.machine_side.len() > MAX_LISTED {
                writeln!(f, "  ... and {} more", self.machine_side.len() - MAX_LISTED)?;
            }
        }
        if !self.refusals.is_empty() {
            writeln!(f, "\nClaims refused recently:")?;
            for (name, why) in self.refusals.iter().take(MAX_LISTED) {
                writeln!(f, "  {name}: {why}")?;
            }
            if self.refusals.len() > MAX_LISTED {
                writeln!(f, "  ... and {} more", self.refusals.len() - MAX_LISTED)?;
            }
        }
        if !self.suggestions.is_empty() {
            writeln!(f, "\nSuggestions:")?;
            for s in &self.suggestions {
                writeln!(f, "  {s}")?;
            }
        }
        if self.matched > 0 && self.refusals.is_empty() {
            writeln!(
                f,
                "\nThe job matches; it should start when its agent next negotiates."
            )?;
        } else if self.matched == 0 && self.busy > 0 {
            writeln!(
                f,
                "\nThe job matches busy machines; it runs when one of them has room."
            )?;
        } else if self.matched + self.busy == 0 {
            writeln!(f, "\nNo machine in view can run the job as it is.")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    fn ad(text: &str) -> ClassAd {
        parse_ad(text).unwrap()
    }

    /// A partitionable machine as an agent advertises it.
    fn machine(name: &str, arch: &str, memory: u64, free_memory: u64, extra: &str) -> ClassAd {
        ad(&format!(
            "[Name = \"{name}\"; Arch = \"{arch}\"; OpSys = \"LINUX\"; \
              TotalCpus = 8; Cpus = 8; TotalMemory = {memory}; Memory = {free_memory}; \
              TotalDisk = 100000000; Disk = 100000000; \
              START = true; Requirements = START; {extra}]"
        ))
    }

    fn job(memory: u64, requirements: &str) -> ClassAd {
        ad(&format!(
            "[Owner = \"alice\"; RequestCpus = 1; RequestMemory = {memory}; RequestDisk = 1024; \
              Requirements = {requirements}]"
        ))
    }

    fn named(ads: &[ClassAd]) -> Vec<(String, &ClassAd)> {
        ads.iter().map(|m| (machine_name(m), m)).collect()
    }

    /// Ten machines: 8 x86 (memory 1024, 2048 x3, 4096 x2, 8192, 16384 of
    /// which the 8192 one has only 1024 free), 1 ARM, 1 x86 refusing alice.
    fn pool() -> Vec<ClassAd> {
        let mut ads: Vec<ClassAd> = [1024, 2048, 2048, 2048, 4096, 4096, 16384]
            .iter()
            .enumerate()
            .map(|(i, m)| machine(&format!("x{i}"), "X86_64", *m, *m, ""))
            .collect();
        ads.push(machine("busy", "X86_64", 8192, 1024, ""));
        ads.push(machine("arm", "ARM64", 65536, 65536, ""));
        ads.push(machine(
            "picky",
            "X86_64",
            65536,
            65536,
            "START = TARGET.Owner == \"bob\"",
        ));
        ads
    }

    #[test]
    fn every_machine_lands_in_one_bucket() {
        let ads = pool();
        let job = job(
            4096,
            "(TARGET.Arch == \"X86_64\") && (TARGET.Memory >= RequestMemory)",
        );
        let a = analyze(&job, &named(&ads), &[], 0);
        assert_eq!(a.machines, 10);
        // x0..x3 are too small for the clause; arm is the wrong arch.
        assert_eq!(a.rejected_by_job, 5);
        assert_eq!(a.rejected_by_machine, 1, "picky");
        assert_eq!(a.too_small, 0);
        assert_eq!(a.busy, 1, "8192 MiB, 1024 free");
        assert_eq!(a.matched, 3, "two 4096s and the 16384");
        assert_eq!(
            a.clauses,
            vec![
                Clause {
                    text: "(TARGET.Arch == \"X86_64\")".into(),
                    failing: 1
                },
                Clause {
                    text: "(TARGET.Memory >= RequestMemory)".into(),
                    failing: 5
                },
            ]
        );
        let text = a.to_string();
        assert!(
            text.contains("clause by clause, on the 10 machines"),
            "{text}"
        );
        assert!(
            text.contains("5 machines fail  (TARGET.Memory >= RequestMemory)"),
            "{text}"
        );
        assert!(
            text.contains("1 machine fails  (TARGET.Arch == \"X86_64\")"),
            "{text}"
        );
        assert!(
            text.contains("picky: START (TARGET.Owner == \"bob\") is false"),
            "{text}"
        );
    }

    #[test]
    fn a_domain_that_publishes_an_accept_term_refusing_the_job_is_named_with_the_term() {
        let strict = machine(
            "d1-m",
            "X86_64",
            8192,
            8192,
            "StarlingDomain = \"d1.testnet\"; StarlingAcceptTerm = \"RequestMemory <= 512\"",
        );
        let ads = [strict];
        let a = analyze(&job(1024, "true"), &named(&ads), &[], 0);
        assert_eq!(a.rejected_by_machine, 1);
        let text = a.to_string();
        assert!(
            text.contains(
                "d1-m: d1.testnet does not accept this job: accept = RequestMemory <= 512 is false"
            ),
            "{text}"
        );
        assert_eq!(analyze(&job(512, "true"), &named(&ads), &[], 0).matched, 1);
    }

    #[test]
    fn a_full_disk_is_the_reason_given() {
        let full = machine(
            "full",
            "X86_64",
            8192,
            8192,
            "StarlingDiskFull = true; StarlingDiskFullReason = \"disk full: 0 KiB free\"; \
             START = MY.StarlingDiskFull =!= true",
        );
        let ads = [full];
        let text = analyze(&job(1024, "true"), &named(&ads), &[], 0).to_string();
        assert!(text.contains("full: disk full: 0 KiB free"), "{text}");
    }

    #[test]
    fn a_request_that_evaluates_to_no_number_is_the_reason_given() {
        let ads = pool();
        // Infinite and NaN requests fail the Requirements that compare with
        // them too; the reason shown is the request's.
        for (request, shown) in [
            (
                "RequestDisk = 1e308 * 10",
                "RequestDisk: error is not a number",
            ),
            (
                "RequestDisk = real(\"inf\")",
                "RequestDisk: inf is not a usable amount",
            ),
            (
                "RequestDisk = real(\"NaN\")",
                "RequestDisk: NaN is not a usable amount",
            ),
            (
                "RequestMemory = -TARGET.Memory",
                "RequestMemory: -1024 is negative",
            ),
        ] {
            let job = ad(&format!(
                "[Owner = \"alice\"; {request}; \
                  Requirements = (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory)]"
            ));
            let a = analyze(&job, &named(&ads), &[], 0);
            assert_eq!(a.rejected_by_job, 10, "{request}");
            let text = a.to_string();
            assert!(
                text.contains(&format!("The job's request cannot be used: {shown}")),
                "{request}: {text}"
            );
        }
    }

    #[test]
    fn the_nearest_and_the_widest_request_are_suggested() {
        let ads = pool();
        let job = job(
            4096,
            "TARGET.Arch == \"X86_64\" && TARGET.Memory >= RequestMemory",
        );
        let a = analyze(&job, &named(&ads), &[], 0);
        let lines: Vec<String> = a.suggestions.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            vec![
                "lower RequestMemory to 2048 to match 3 more machines",
                "lower RequestMemory to 1024 to match 4 more machines",
            ]
        );
        // The string clause offers the architecture machines have.
        let arm_only = ad(
            "[Name = \"arm2\"; Arch = \"ARM64\"; Cpus = 4; Memory = 8192; \
                           Disk = 1000000; START = true]",
        );
        let ads = [arm_only];
        let a = analyze(&job, &named(&ads), &[], 0);
        assert_eq!(
            a.suggestions
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            vec!["change `TARGET.Arch == \"X86_64\"` to `TARGET.Arch == \"ARM64\"` to match 1 more machine"]
        );
    }

    #[test]
    fn a_constant_in_the_clause_is_rewritten() {
        let ads = pool();
        let job = job(512, "TARGET.Arch == \"X86_64\" && 8192 <= TARGET.Memory");
        let a = analyze(&job, &named(&ads), &[], 0);
        let first = a.suggestions.first().map(ToString::to_string);
        assert_eq!(
            first.as_deref(),
            Some("change `8192 <= TARGET.Memory` to `4096 <= TARGET.Memory` to match 2 more machines")
        );
    }

    #[test]
    fn a_request_larger_than_machines_is_too_small_and_lowered() {
        let ads = pool();
        let job = job(20000, "TARGET.OpSys == \"LINUX\"");
        let a = analyze(&job, &named(&ads), &[], 0);
        assert_eq!(a.too_small, 8, "{a:?}");
        assert_eq!(a.matched, 1, "arm");
        let lines: Vec<String> = a.suggestions.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines.first().map(String::as_str),
            Some("lower RequestMemory to 16384 to match 1 more machine"),
            "{lines:?}"
        );
    }

    #[test]
    fn refusals_and_bad_requests_are_reported() {
        let ads = pool();
        let job = ad("[RequestMemory = \"lots\"; Requirements = true]");
        let refusals = vec![("x4".to_owned(), "machine is busy".to_owned())];
        let a = analyze(&job, &named(&ads), &refusals, 0);
        assert_eq!(a.matched + a.busy, 0);
        let text = a.to_string();
        assert!(
            text.contains("RequestMemory: \"lots\" is not a number"),
            "{text}"
        );
        assert!(text.contains("x4: machine is busy"), "{text}");
        assert!(a.suggestions.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn buckets_add_up_and_suggestions_only_widen(
            specs in proptest::collection::vec((0u8..2, 0u64..5, 0u64..5, proptest::bool::ANY), 0..12),
            request in 0u64..6,
        ) {
            let ads: Vec<ClassAd> = specs
                .iter()
                .enumerate()
                .map(|(i, (arch, total, used, start))| {
                    let total = 1024 * (total + 1);
                    let free = total.saturating_sub(1024 * used);
                    machine(&format!("m{i}"), ["X86_64", "ARM64"][*arch as usize], total, free,
                            if *start { "" } else { "START = false" })
                })
                .collect();
            let job = job(1024 * request + 1,
                          "TARGET.Arch == \"X86_64\" && TARGET.Memory >= RequestMemory");
            let a = analyze(&job, &named(&ads), &[], 0);
            proptest::prop_assert_eq!(
                a.rejected_by_job + a.rejected_by_machine + a.too_small + a.busy + a.matched,
                ads.len()
            );
            for s in &a.suggestions {
                proptest::prop_assert!(s.more > 0);
                proptest::prop_assert!(a.busy + a.matched + s.more <= ads.len());
            }
        }
    }

    #[test]
    fn check_side_names_the_failing_clauses() {
        let job = job(
            4096,
            "TARGET.Arch == \"X86_64\" && TARGET.Memory >= 4096 && true",
        );
        let m = machine("m", "ARM64", 2048, 2048, "");
        assert_eq!(
            check_side(&job, &m, 0),
            vec![
                "TARGET.Arch == \"X86_64\"".to_owned(),
                "TARGET.Memory >= 4096".to_owned()
            ]
        );
        assert!(check_side(&ad("[A = 1]"), &m, 0).is_empty());
    }
}
