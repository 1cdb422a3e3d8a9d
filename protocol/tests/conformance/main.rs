//! Differential conformance against HTCondor's own ClassAd library.
//!
//! `oracle.py` runs HTCondor's `classad2` module (pinned in
//! `scripts/oracle-venv.sh`) as a JSON Lines filter. This test feeds the same
//! expressions, ads and pairs to it and to Starling, and requires the same
//! value (same type, same value, reals to 1e-12), in both of HTCondor's
//! evaluation modes:
//!
//! 1. the curated corpus (`corpus.txt`),
//! 2. thousands of seeded random expressions over random ads,
//! 3. two-sided match and rank over random job/machine pairs,
//! 4. unparsing: our canonical text equals HTCondor's for every corpus line.
//!
//! Deliberate differences are listed, with a reason each, in
//! `differences.txt`; a listed case that no longer differs fails the test so
//! the list stays true.

mod canon;
mod generate;
mod oracle;

use std::collections::HashMap;

use canon::{canon_of, same_canon};
use oracle::Oracle;
use serde_json::{json, Value as J};
use starling_protocol::classad::formats;
use starling_protocol::classad::matching::Matcher;
use starling_protocol::classad::{parse_ad, parse_expr, unparse, ClassAd, Mode};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance");

/// One case: an expression with optional MY and TARGET ad texts.
#[derive(Clone, Debug)]
struct Case {
    expr: String,
    my: Option<String>,
    target: Option<String>,
    type_only: bool,
}

fn corpus() -> Vec<Case> {
    let text = std::fs::read_to_string(format!("{DIR}/corpus.txt")).expect("corpus.txt");
    let mut cases = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (type_only, line) = match line.strip_prefix("@type ") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let mut parts = line.split(";;").map(str::trim);
        let expr = parts.next().unwrap_or_default().to_owned();
        let opt = |s: Option<&str>| s.filter(|s| !s.is_empty()).map(str::to_owned);
        let my = opt(parts.next());
        let target = opt(parts.next());
        cases.push(Case {
            expr,
            my,
            target,
            type_only,
        });
    }
    cases
}

/// Cases whose difference from HTCondor is deliberate, keyed by
/// `"compat EXPR"` / `"strict EXPR"` (a `case:` line covers both modes).
fn differences() -> HashMap<String, String> {
    let text = std::fs::read_to_string(format!("{DIR}/differences.txt")).expect("differences.txt");
    let mut out = HashMap::new();
    let mut reason = String::new();
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("# ") {
            reason = r.to_owned();
            continue;
        }
        let (modes, expr): (&[&str], &str) = if let Some(e) = line.strip_prefix("case: ") {
            (&["compat", "strict"], e)
        } else if let Some(e) = line.strip_prefix("case compat: ") {
            (&["compat"], e)
        } else if let Some(e) = line.strip_prefix("case strict: ") {
            (&["strict"], e)
        } else {
            continue;
        };
        for m in modes {
            out.insert(format!("{m} {}", expr.trim()), reason.clone());
        }
    }
    out
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Compat => "compat",
        Mode::Strict => "strict",
    }
}

/// Our canonical value for a case, or a parse error message.
fn ours(case: &Case, mode: Mode) -> Result<J, String> {
    let my = match &case.my {
        Some(t) => parse_ad(t).map_err(|e| format!("MY ad: {e}"))?,
        None => ClassAd::new(),
    };
    let target = match &case.target {
        Some(t) => Some(parse_ad(t).map_err(|e| format!("TARGET ad: {e}"))?),
        None => None,
    };
    let expr = parse_expr(&case.expr).map_err(|e| e.to_string())?;
    Ok(canon_of(&expr, &my, target.as_ref(), mode))
}

struct Tally {
    checked: usize,
    failures: Vec<String>,
    known_still_differ: usize,
    known_now_agree: Vec<String>,
}

impl Case {
    /// The case as a corpus line: `EXPR`, `EXPR ;; MY` or `EXPR ;; MY ;; TARGET`.
    fn line(&self) -> String {
        match (&self.my, &self.target) {
            (None, None) => self.expr.clone(),
            (Some(m), None) => format!("{} ;; {m}", self.expr),
            (m, Some(t)) => format!("{} ;; {} ;; {t}", self.expr, m.as_deref().unwrap_or("")),
        }
    }
}

impl Tally {
    fn new() -> Tally {
        Tally {
            checked: 0,
            failures: Vec::new(),
            known_still_differ: 0,
            known_now_agree: Vec::new(),
        }
    }
}

fn check_cases(
    oracle: &mut Oracle,
    cases: &[Case],
    mode: Mode,
    known: &HashMap<String, String>,
    tally: &mut Tally,
    label: &str,
) {
    let requests: Vec<J> = cases
        .iter()
        .map(|c| json!({"op": "eval", "expr": c.expr, "my": c.my, "target": c.target}))
        .collect();
    let answers = oracle.ask_all(&requests);
    for (case, answer) in cases.iter().zip(answers) {
        tally.checked += 1;
        let theirs = if let Some(v) = answer.get("value") {
            Ok(v.clone())
        } else if answer.get("parse_error").is_some() {
            Err(())
        } else {
            panic!("oracle failed on {case:?}: {answer}");
        };
        let mine = ours(case, mode);
        let agree = match (&mine, &theirs) {
            (Ok(a), Ok(b)) if case.type_only => a.get("t") == b.get("t"),
            (Ok(a), Ok(b)) => same_canon(a, b),
            (Err(_), Err(())) => true,
            _ => false,
        };
        let key = format!("{} {}", mode_name(mode), case.line());
        let is_known = known.contains_key(&key);
        match (agree, is_known) {
            (true, false) => {}
            (false, true) => tally.known_still_differ += 1,
            (true, true) => tally.known_now_agree.push(key),
            (false, false) => tally.failures.push(format!(
                "[{label}] {}{}{}\n    htcondor: {}\n    starling: {}",
                case.expr,
                case.my
                    .as_deref()
                    .map(|m| format!("  MY={m}"))
                    .unwrap_or_default(),
                case.target
                    .as_deref()
                    .map(|t| format!("  TARGET={t}"))
                    .unwrap_or_default(),
                match &theirs {
                    Ok(v) => v.to_string(),
                    Err(()) => "parse error".into(),
                },
                match &mine {
                    Ok(v) => v.to_string(),
                    Err(e) => format!("parse error: {e}"),
                }
            )),
        }
    }
}

fn check_unparse(
    oracle: &mut Oracle,
    cases: &[Case],
    known: &HashMap<String, String>,
    tally: &mut Tally,
) {
    let requests: Vec<J> = cases
        .iter()
        .map(|c| json!({"op": "unparse", "expr": c.expr}))
        .collect();
    let answers = oracle.ask_all(&requests);
    for (case, answer) in cases.iter().zip(answers) {
        let Some(theirs) = answer.get("compact").and_then(J::as_str) else {
            continue;
        };
        let Ok(expr) = parse_expr(&case.expr) else {
            continue;
        };
        tally.checked += 1;
        let mine = unparse(&expr);
        let key = format!("strict unparse {}", case.expr);
        let agree = mine.trim() == theirs.trim();
        match (agree, known.contains_key(&key)) {
            (true, false) => {}
            (false, true) => tally.known_still_differ += 1,
            (true, true) => tally.known_now_agree.push(key),
            (false, false) => tally.failures.push(format!(
                "[unparse] {}\n    htcondor: {theirs}\n    starling: {mine}",
                case.expr
            )),
        }
    }
}

fn check_matches(oracle: &mut Oracle, pairs: &[(String, String)], tally: &mut Tally) {
    let requests: Vec<J> = pairs
        .iter()
        .map(|(l, r)| json!({"op": "match", "left": l, "right": r}))
        .collect();
    let answers = oracle.ask_all(&requests);
    // The oracle's symmetricMatch runs in HTCondor's default (compat) mode.
    let matcher = Matcher::new(Mode::Compat);
    for ((l, r), answer) in pairs.iter().zip(answers) {
        tally.checked += 1;
        let left = parse_ad(l).expect("generated ad parses");
        let right = parse_ad(r).expect("generated ad parses");
        let theirs_match = answer
            .get("match")
            .and_then(J::as_bool)
            .expect("match answer");
        let ours_match = matcher.symmetric_match(&left, &right);
        let mut problems = Vec::new();
        if theirs_match != ours_match {
            problems.push(format!(
                "symmetricMatch htcondor={theirs_match} starling={ours_match}"
            ));
        }
        let pairs_to_check = [
            (
                "left_rank",
                canon::value_canon(&matcher.rank_value(&left, &right)),
            ),
            (
                "right_rank",
                canon::value_canon(&matcher.rank_value(&right, &left)),
            ),
            (
                "left_matches_right",
                canon::value_canon(&matcher.requirements_value(&left, &right)),
            ),
            (
                "right_matches_left",
                canon::value_canon(&matcher.requirements_value(&right, &left)),
            ),
        ];
        for (field, mine) in pairs_to_check {
            let theirs = &answer[field];
            if !same_canon(&mine, theirs) {
                problems.push(format!("{field} htcondor={theirs} starling={mine}"));
            }
        }
        if !problems.is_empty() {
            tally.failures.push(format!(
                "[match] {l}\n          {r}\n    {}",
                problems.join("\n    ")
            ));
        }
    }
}

/// Ads we write in the long and JSON formats read back in HTCondor as the
/// same attributes with the same expressions, and we read them back the same.
fn check_formats(oracle: &mut Oracle, ads: &[ClassAd], tally: &mut Tally) {
    use starling_protocol::classad::formats::{parse_ads_any, to_json, to_long};
    let mut requests = Vec::new();
    let mut texts = Vec::new();
    for ad in ads {
        let long = to_long(ad);
        let json = format!("[{}]", to_json(ad));
        requests.push(json!({"op": "parse_ads", "text": long, "format": "old"}));
        texts.push(("long", long));
        requests.push(json!({"op": "parse_ads", "text": json, "format": "json"}));
        texts.push(("json", json));
    }
    let answers = oracle.ask_all(&requests);
    for ((format, text), answer) in texts.iter().zip(answers) {
        tally.checked += 1;
        let ours = match parse_ads_any(text) {
            Ok(ads) if ads.len() == 1 => ads.into_iter().next().unwrap(),
            other => {
                tally.failures.push(format!(
                    "[{format}] we cannot read back what we wrote: {other:?}\n{text}"
                ));
                continue;
            }
        };
        let theirs = answer["ads_compact"]
            .as_array()
            .and_then(|a| a.first())
            .and_then(J::as_object);
        // classad2's JSON reader leaves an array's closing bracket unread,
        // which the oracle reports; what counts is the ad it read.
        let clean = answer.get("parse_error").is_none() || *format == "json";
        let Some(theirs) = theirs.filter(|_| clean) else {
            tally.failures.push(format!(
                "[{format}] HTCondor cannot read what we wrote: {answer}\n{text}"
            ));
            continue;
        };
        let mut problems = Vec::new();
        if theirs.len() != ours.len() {
            problems.push(format!(
                "{} attributes in HTCondor, {} in Starling",
                theirs.len(),
                ours.len()
            ));
        }
        for (name, value) in theirs {
            match ours.get(name) {
                Some(e) if unparse(e).trim() == value.as_str().unwrap_or_default().trim() => {}
                Some(e) => {
                    problems.push(format!("{name}: htcondor {value} starling {}", unparse(e)))
                }
                None => problems.push(format!("{name}: missing in Starling")),
            }
        }
        if !problems.is_empty() {
            tally
                .failures
                .push(format!("[{format}] {}\n{text}", problems.join("; ")));
        }
    }
}

fn report(tally: &Tally) {
    eprintln!(
        "conformance: {} checks, {} failures, {} deliberate differences (differences.txt)",
        tally.checked,
        tally.failures.len(),
        tally.known_still_differ
    );
    if let Ok(path) = std::env::var("STARLING_CONFORMANCE_REPORT") {
        std::fs::write(&path, tally.failures.join("\n")).expect("writing the report");
        eprintln!("every failure written to {path}");
    }
    for f in tally.failures.iter().take(60) {
        eprintln!("{f}");
    }
    if tally.failures.len() > 60 {
        eprintln!("... and {} more", tally.failures.len() - 60);
    }
    for k in &tally.known_now_agree {
        eprintln!("listed in differences.txt but now agrees with HTCondor: {k}");
    }
}

#[test]
fn agrees_with_htcondor() {
    let known = differences();
    let corpus = corpus();
    assert!(
        corpus.len() >= 400,
        "corpus has only {} cases",
        corpus.len()
    );
    let seed = std::env::var("STARLING_CONFORMANCE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261122u64);
    let count: usize = std::env::var("STARLING_CONFORMANCE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    eprintln!(
        "conformance: corpus of {} cases; {count} generated cases and pairs with seed {seed}",
        corpus.len()
    );
    let mut gen = generate::Generator::new(seed);
    let generated: Vec<Case> = (0..count).map(|_| gen.case()).collect();
    let pairs: Vec<(String, String)> = (0..count / 2).map(|_| gen.match_pair()).collect();

    let mut tally = Tally::new();
    {
        let mut strict = Oracle::start(true);
        check_cases(
            &mut strict,
            &corpus,
            Mode::Strict,
            &known,
            &mut tally,
            "strict corpus",
        );
        check_cases(
            &mut strict,
            &generated,
            Mode::Strict,
            &known,
            &mut tally,
            "strict generated",
        );
        check_unparse(&mut strict, &corpus, &known, &mut tally);
        let ads: Vec<ClassAd> = pairs
            .iter()
            .take(200)
            .flat_map(|(job, machine)| [parse_ad(job).unwrap(), parse_ad(machine).unwrap()])
            .chain(
                formats::parse_ads_any(
                    &std::fs::read_to_string(format!("{DIR}/../../../examples/machines.ads"))
                        .unwrap(),
                )
                .unwrap(),
            )
            .collect();
        check_formats(&mut strict, &ads, &mut tally);
    }
    {
        let mut compat = Oracle::start(false);
        check_cases(
            &mut compat,
            &corpus,
            Mode::Compat,
            &known,
            &mut tally,
            "compat corpus",
        );
        check_cases(
            &mut compat,
            &generated,
            Mode::Compat,
            &known,
            &mut tally,
            "compat generated",
        );
        check_matches(&mut compat, &pairs, &mut tally);
    }
    report(&tally);
    assert!(
        tally.failures.is_empty() && tally.known_now_agree.is_empty(),
        "{} disagreements with HTCondor (see above)",
        tally.failures.len() + tally.known_now_agree.len()
    );
}
