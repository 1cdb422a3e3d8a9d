//! Two-sided matching and rank, as HTCondor's matchmaker defines them.
//!
//! A job and a machine match when each side's `Requirements`, evaluated with
//! itself as MY and the other as TARGET, is true (a non-zero number counts as
//! true, as in HTCondor; a missing `Requirements` does not). Each side's
//! `Rank`, evaluated the same way, says how much it prefers the other; a rank
//! that is not a number counts as 0.

use super::ad::ClassAd;
use super::eval::{Evaluator, Mode, Side};
use super::name::{Folded, Name};
use super::value::Value;

/// Names looked up on every match, interned once.
#[derive(Clone, Copy, Debug)]
pub struct MatchNames {
    pub requirements: Folded,
    pub rank: Folded,
}

impl MatchNames {
    pub fn get() -> MatchNames {
        use std::sync::OnceLock;
        static NAMES: OnceLock<MatchNames> = OnceLock::new();
        *NAMES.get_or_init(|| MatchNames {
            requirements: Name::known("Requirements").folded(),
            rank: Name::known("Rank").folded(),
        })
    }
}

/// The outcome of matching one pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The left ad's `Requirements` against the right ad.
    pub left_matches_right: bool,
    /// The right ad's `Requirements` against the left ad.
    pub right_matches_left: bool,
}

impl Outcome {
    pub fn symmetric(&self) -> bool {
        self.left_matches_right && self.right_matches_left
    }
}

/// How a matched pair rank each other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranks {
    /// The job's `Rank` of the machine.
    pub job: f64,
    /// The machine's `Rank` of the job.
    pub machine: f64,
}

/// Matches ads pairwise; reuse one for many pairs.
#[derive(Clone, Copy, Debug)]
pub struct Matcher {
    mode: Mode,
    names: MatchNames,
}

impl Default for Matcher {
    fn default() -> Self {
        Matcher::new(Mode::default())
    }
}

/// Whether a `Requirements` value admits the match.
pub fn requirement_holds(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Real(r) => *r != 0.0,
        _ => false,
    }
}

/// A rank value as a number (non-numbers rank 0).
pub fn rank_number(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Real(r) => *r,
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

impl Matcher {
    pub fn new(mode: Mode) -> Matcher {
        Matcher {
            mode,
            names: MatchNames::get(),
        }
    }

    fn evaluator<'a>(&self, left: &'a ClassAd, right: &'a ClassAd) -> Evaluator<'a> {
        Evaluator::with_ads(Some(left), Some(right)).mode(self.mode)
    }

    /// Both sides' requirements, with short-circuit: the right side is not
    /// evaluated when the left already refuses.
    pub fn symmetric_match(&self, left: &ClassAd, right: &ClassAd) -> bool {
        let mut ev = self.evaluator(left, right);
        requirement_holds(&ev.eval_attr(Side::My, self.names.requirements))
            && requirement_holds(&ev.eval_attr(Side::Target, self.names.requirements))
    }

    /// Both sides' requirements, each evaluated.
    pub fn outcome(&self, left: &ClassAd, right: &ClassAd) -> Outcome {
        let mut ev = self.evaluator(left, right);
        Outcome {
            left_matches_right: requirement_holds(&ev.eval_attr(Side::My, self.names.requirements)),
            right_matches_left: requirement_holds(
                &ev.eval_attr(Side::Target, self.names.requirements),
            ),
        }
    }

    /// Matches a job against a machine and, if they match, ranks both ways,
    /// with one evaluator: what a negotiation loop does for each candidate.
    pub fn pair(&self, job: &ClassAd, machine: &ClassAd) -> Option<Ranks> {
        let mut ev = self.evaluator(job, machine);
        if !requirement_holds(&ev.eval_attr(Side::My, self.names.requirements))
            || !requirement_holds(&ev.eval_attr(Side::Target, self.names.requirements))
        {
            return None;
        }
        Some(Ranks {
            job: rank_number(&ev.eval_attr(Side::My, self.names.rank)),
            machine: rank_number(&ev.eval_attr(Side::Target, self.names.rank)),
        })
    }

    /// The value of `left`'s `Requirements` against `right`, unconverted.
    pub fn requirements_value(&self, left: &ClassAd, right: &ClassAd) -> Value {
        self.evaluator(left, right)
            .eval_attr(Side::My, self.names.requirements)
    }

    /// The value of `left`'s `Rank` for `right`, unconverted.
    pub fn rank_value(&self, left: &ClassAd, right: &ClassAd) -> Value {
        self.evaluator(left, right)
            .eval_attr(Side::My, self.names.rank)
    }

    /// How much `left` prefers `right`.
    pub fn rank(&self, left: &ClassAd, right: &ClassAd) -> f64 {
        rank_number(&self.rank_value(left, right))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    #[test]
    fn both_sides_must_agree() {
        let job = parse_ad(
            "[ RequestCpus = 2; Requirements = TARGET.Cpus >= RequestCpus; Rank = TARGET.Cpus ]",
        )
        .unwrap();
        let big = parse_ad("[ Cpus = 8; Requirements = TARGET.RequestCpus <= Cpus ]").unwrap();
        let small = parse_ad("[ Cpus = 1; Requirements = true ]").unwrap();
        let picky = parse_ad("[ Cpus = 8; Requirements = TARGET.Owner == \"alice\" ]").unwrap();
        let m = Matcher::default();
        assert!(m.symmetric_match(&job, &big));
        assert!(!m.symmetric_match(&job, &small));
        assert!(!m.symmetric_match(&job, &picky));
        assert_eq!(m.rank(&job, &big), 8.0);
        assert_eq!(m.rank(&big, &job), 0.0);
    }

    #[test]
    fn compat_mode_falls_back_to_target_and_strict_does_not() {
        let job = parse_ad("[ Requirements = Memory > 10 ]").unwrap();
        let machine = parse_ad("[ Memory = 20; Requirements = true ]").unwrap();
        assert!(Matcher::new(Mode::Compat).symmetric_match(&job, &machine));
        assert!(!Matcher::new(Mode::Strict).symmetric_match(&job, &machine));
    }
}
