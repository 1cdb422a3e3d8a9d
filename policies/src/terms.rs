//! The terms a domain's signed policy sets on each domain it trusts, as
//! the domain's own agents apply them to that domain's jobs.
//!
//! - **accept** ([`acceptance`]): a ClassAd expression with the foreign
//!   job as MY and this machine (as it would be advertised now) as
//!   TARGET. Only true accepts: false refuses, and UNDEFINED or ERROR
//!   refuse too (an administrator's term that cannot be decided must not
//!   let jobs through), said as such so the administrator can fix it.
//! - **export** ([`exported`]): a ClassAd expression with this machine's
//!   ad (as it is advertised) as MY. Only true exports: a machine the term
//!   does not export is never advertised to the domain, and its claims are
//!   refused, said as "d1 does not export this machine to d0: export = …
//!   is false". No term exports every machine. UNDEFINED or ERROR do not
//!   export (said as such).
//!
//! The execute agent decides. So that a trusted domain's submit agents do
//! not spend claim rounds on machines that would refuse, each machine's
//! copy of its ad for a trusted domain publishes the accept term for that
//! domain as [`ACCEPT_ATTR`] (signed with the ad, so it is the term the
//! machine applies), and the submit side checks it
//! ([`published_acceptance`]) where it matches and where `why` explains.
//! A published term that does not parse is ignored there: the execute
//! agent still decides, and its refusal reaches `why` as any refusal does.

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{
    parse_expr, unparse_value, ClassAd, Evaluator, Expr, Side, Value,
};

/// A trusted domain's `accept` term, parsed.
#[derive(Debug, Clone)]
pub struct Accept {
    /// As the policy says it (what a refusal quotes).
    pub text: String,
    pub expr: Expr,
}

impl Accept {
    /// Parses the term; the policy was checked when it was signed and
    /// installed, so an error here means a damaged policy.
    pub fn parse(text: &str) -> Result<Accept, String> {
        let expr = parse_expr(text).map_err(|e| format!("invalid accept expression: {e}"))?;
        Ok(Accept {
            text: text.to_owned(),
            expr,
        })
    }
}

/// The attribute of a machine ad's copy for a trusted domain that carries
/// the domain's `accept` term for it, as the policy says it (a string:
/// the term reads the job as MY, the other way round from the ad's own
/// expressions).
pub const ACCEPT_ATTR: &str = "StarlingAcceptTerm";

/// The longest published term a submit agent parses (an ad is bounded as
/// a whole; this keeps one attribute from costing a parse of all of it
/// per job and machine).
pub const MAX_PUBLISHED_TERM: usize = 4096;

/// What the `accept` term `machine`'s ad publishes ([`ACCEPT_ATTR`]) says
/// of `job` at `now` (unix seconds), named by the machine's
/// `StarlingDomain`: `None` when it publishes none, or one that is not a
/// string, is longer than [`MAX_PUBLISHED_TERM`] or does not parse (the
/// execute agent decides then).
pub fn published_acceptance(job: &ClassAd, machine: &ClassAd, now: i64) -> Option<Acceptance> {
    let Some(Expr::Literal(Value::String(text))) = machine.get(ACCEPT_ATTR) else {
        return None;
    };
    if text.len() > MAX_PUBLISHED_TERM {
        return None;
    }
    let accept = Accept::parse(text).ok()?;
    let by = match machine.get("StarlingDomain") {
        Some(Expr::Literal(Value::String(domain))) => domain.to_string(),
        _ => "the machine's domain".to_owned(),
    };
    Some(acceptance(&by, &accept, job, machine, now))
}

/// What a domain's `accept` term says of one job on one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acceptance {
    /// True: the job may run here.
    Accepted,
    /// False: the reason, naming the domain and the term.
    Refused(String),
    /// UNDEFINED or ERROR, counted as false: the reason, for the job and
    /// for the administrator.
    Undecided(String),
}

impl Acceptance {
    /// The reason a claim is refused for, if it is.
    pub fn refusal(&self) -> Option<&str> {
        match self {
            Acceptance::Accepted => None,
            Acceptance::Refused(reason) | Acceptance::Undecided(reason) => Some(reason),
        }
    }
}

/// A trusted domain's `export` term, parsed.
#[derive(Debug, Clone)]
pub struct Export {
    /// As the policy says it (what a refusal quotes).
    pub text: String,
    pub expr: Expr,
}

impl Export {
    /// Parses the term (checked when the policy was signed and installed).
    pub fn parse(text: &str) -> Result<Export, String> {
        let expr = parse_expr(text).map_err(|e| format!("invalid export expression: {e}"))?;
        Ok(Export {
            text: text.to_owned(),
            expr,
        })
    }
}

/// Whether domain `by`'s `export` term (none: every machine) advertises
/// `machine` to domain `to` at `now` (unix seconds): `Ok` when it does,
/// else the reason, naming both domains and the term, which a refused
/// claim quotes.
pub fn exported(
    by: &str,
    to: &str,
    export: Option<&Export>,
    machine: &ClassAd,
    now: i64,
) -> Result<(), String> {
    let Some(export) = export else {
        return Ok(());
    };
    let value = Evaluator::with_ads(Some(machine), None)
        .now(now)
        .eval_on(Side::My, &export.expr);
    if requirement_holds(&value) {
        return Ok(());
    }
    let what = match value {
        Value::Undefined | Value::Error => {
            format!("{} (counted as false)", unparse_value(&value))
        }
        other => unparse_value(&other),
    };
    Err(format!(
        "{by} does not export this machine to {to}: export = {} is {what}",
        export.text
    ))
}

/// Whether domain `by`'s `accept` term lets `job` (from a domain it
/// trusts) run on `machine` at `now` (unix seconds).
pub fn acceptance(
    by: &str,
    accept: &Accept,
    job: &ClassAd,
    machine: &ClassAd,
    now: i64,
) -> Acceptance {
    let value = Evaluator::with_ads(Some(job), Some(machine))
        .now(now)
        .eval_on(Side::My, &accept.expr);
    let said = |what: &str| {
        format!(
            "{by} does not accept this job: accept = {} is {what}",
            accept.text
        )
    };
    match value {
        _ if requirement_holds(&value) => Acceptance::Accepted,
        Value::Undefined | Value::Error => Acceptance::Undecided(said(&format!(
            "{} (counted as false)",
            unparse_value(&value)
        ))),
        other => Acceptance::Refused(said(&unparse_value(&other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    fn job(text: &str) -> ClassAd {
        parse_ad(text).unwrap()
    }

    #[test]
    fn only_true_accepts_and_the_refusal_names_the_domain_and_the_term() {
        let machine = parse_ad("[ Cpus = 8; StarlingDomain = \"d1\" ]").unwrap();
        let small = job("[ RequestCpus = 1; Owner = \"ann\" ]");
        let big = job("[ RequestCpus = 16; Owner = \"ann\" ]");
        let accept = Accept::parse("RequestCpus <= TARGET.Cpus && Owner =!= \"mallory\"").unwrap();
        assert_eq!(
            acceptance("d1", &accept, &small, &machine, 0),
            Acceptance::Accepted
        );
        let refused = acceptance("d1", &accept, &big, &machine, 0);
        assert_eq!(
            refused,
            Acceptance::Refused(
                "d1 does not accept this job: accept = RequestCpus <= TARGET.Cpus && Owner =!= \
                 \"mallory\" is false"
                    .to_owned()
            )
        );
        assert!(refused.refusal().is_some());
        // A job the term cannot decide is refused, and said to be.
        let undecided = acceptance(
            "d1",
            &Accept::parse("Project == \"x\"").unwrap(),
            &small,
            &machine,
            0,
        );
        assert!(
            matches!(&undecided, Acceptance::Undecided(r) if r.ends_with("is undefined (counted as false)")),
            "{undecided:?}"
        );
        let error = acceptance(
            "d1",
            &Accept::parse("Owner + 1").unwrap(),
            &small,
            &machine,
            0,
        );
        assert!(
            matches!(&error, Acceptance::Undecided(r) if r.contains("error (counted as false)")),
            "{error:?}"
        );
        // A non-boolean that is not true refuses.
        let number = acceptance("d1", &Accept::parse("0").unwrap(), &small, &machine, 0);
        assert!(matches!(number, Acceptance::Refused(_)));
        assert!(Accept::parse("RequestCpus <=").is_err());
    }

    #[test]
    fn a_published_accept_term_is_checked_by_the_submit_side_and_a_bad_one_left_to_the_machine() {
        let small = job("[ RequestCpus = 1 ]");
        let big = job("[ RequestCpus = 2 ]");
        let copy = |term: &str| {
            parse_ad(&format!(
                "[ Cpus = 4; StarlingDomain = \"d1\"; {ACCEPT_ATTR} = {term} ]"
            ))
            .unwrap()
        };
        let published = copy("\"RequestCpus <= TARGET.Cpus / 4\"");
        assert_eq!(
            published_acceptance(&small, &published, 0),
            Some(Acceptance::Accepted)
        );
        assert_eq!(
            published_acceptance(&big, &published, 0),
            Some(Acceptance::Refused(
                "d1 does not accept this job: accept = RequestCpus <= TARGET.Cpus / 4 is false"
                    .to_owned()
            ))
        );
        // None published, not a string, damaged or too long: the machine decides.
        let plain = parse_ad("[ Cpus = 4; StarlingDomain = \"d1\" ]").unwrap();
        assert_eq!(published_acceptance(&big, &plain, 0), None);
        assert_eq!(published_acceptance(&big, &copy("false"), 0), None);
        assert_eq!(
            published_acceptance(&big, &copy("\"RequestCpus <=\""), 0),
            None
        );
        let long = format!("\"{}\"", "RequestCpus <= 1 && ".repeat(300) + "true");
        assert_eq!(published_acceptance(&big, &copy(&long), 0), None);
    }

    #[test]
    fn only_a_true_export_term_advertises_a_machine_and_none_advertises_all() {
        let gpu = parse_ad("[ Name = \"m1\"; Cpus = 8; HasGpu = true ]").unwrap();
        let plain = parse_ad("[ Name = \"m2\"; Cpus = 2 ]").unwrap();
        assert_eq!(exported("d1", "d0", None, &plain, 0), Ok(()));
        let term = Export::parse("HasGpu =?= true").unwrap();
        assert_eq!(exported("d1", "d0", Some(&term), &gpu, 0), Ok(()));
        assert_eq!(
            exported("d1", "d0", Some(&term), &plain, 0),
            Err(
                "d1 does not export this machine to d0: export = HasGpu =?= true is false"
                    .to_owned()
            )
        );
        let undefined = Export::parse("HasGpu").unwrap();
        let err = exported("d1", "d0", Some(&undefined), &plain, 0).unwrap_err();
        assert!(err.ends_with("is undefined (counted as false)"), "{err}");
        let error = Export::parse("Name + 1").unwrap();
        let err = exported("d1", "d0", Some(&error), &plain, 0).unwrap_err();
        assert!(err.ends_with("is error (counted as false)"), "{err}");
        assert!(Export::parse("Cpus >").is_err());
    }
}
