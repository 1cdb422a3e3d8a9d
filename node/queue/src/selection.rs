//! Which jobs a request is about ([`Selection`]): job ids, clusters and
//! owners as the job commands name them ([`Target`]), and a constraint.
//! It parses what a user typed and matches the ads it is given; it never
//! reads or changes the queue.

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{parse_expr, ClassAd, Evaluator, Expr, Side};
use starling_storage::JobId;

use crate::attributes::text;
use crate::error::QueueError;

/// Most targets (ids, clusters, owners) one request may name.
pub const MAX_TARGETS: usize = 10_000;

/// A job, a cluster or an owner, as the job commands name them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Job(JobId),
    Cluster(u64),
    Owner(String),
}

impl Target {
    /// `12.3`, `12` or `alice`.
    pub fn parse(word: &str) -> Result<Target, QueueError> {
        let bad = || QueueError::Invalid(format!("{word:?} is not a job id, cluster id or owner"));
        if word.is_empty() || word.len() > 256 {
            return Err(bad());
        }
        if word.starts_with(|c: char| c.is_ascii_digit()) {
            return match word.split_once('.') {
                Some((c, p)) => Ok(Target::Job(JobId::new(
                    c.parse().map_err(|_| bad())?,
                    p.parse().map_err(|_| bad())?,
                ))),
                None => Ok(Target::Cluster(word.parse().map_err(|_| bad())?)),
            };
        }
        if word.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && word
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'))
        {
            Ok(Target::Owner(word.to_owned()))
        } else {
            Err(bad())
        }
    }

    fn selects(&self, id: JobId, ad: &ClassAd) -> bool {
        match self {
            Target::Job(j) => *j == id,
            Target::Cluster(c) => id.cluster == *c,
            Target::Owner(o) => text(ad, "Owner").as_deref() == Some(o),
        }
    }
}

/// Which jobs a request is about: the targets (any of them; none means
/// all) and a constraint (all must satisfy it).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub targets: Vec<Target>,
    pub constraint: Option<Expr>,
}

impl Selection {
    /// From the words and constraint a user typed.
    pub fn parse(words: &[String], constraint: Option<&str>) -> Result<Selection, QueueError> {
        if words.len() > MAX_TARGETS {
            return Err(QueueError::Invalid(format!(
                "at most {MAX_TARGETS} job ids, clusters or owners at once"
            )));
        }
        let targets = words
            .iter()
            .map(|w| Target::parse(w))
            .collect::<Result<_, _>>()?;
        let constraint = constraint
            .map(|c| {
                parse_expr(c).map_err(|e| QueueError::Invalid(format!("the constraint {c:?}: {e}")))
            })
            .transpose()?;
        Ok(Selection {
            targets,
            constraint,
        })
    }

    /// Whether a target names the job (its id, its cluster or its owner),
    /// rather than only the constraint selecting it.
    pub fn names(&self, id: JobId, ad: &ClassAd) -> bool {
        self.targets.iter().any(|t| t.selects(id, ad))
    }

    pub fn matches(&self, id: JobId, ad: &ClassAd) -> bool {
        (self.targets.is_empty() || self.targets.iter().any(|t| t.selects(id, ad)))
            && self.constraint.as_ref().is_none_or(|c| {
                requirement_holds(&Evaluator::with_ads(Some(ad), None).eval_on(Side::My, c))
            })
    }
}
