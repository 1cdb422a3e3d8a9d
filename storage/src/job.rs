//! Jobs as the queue keeps them: ids, attribute changes and their checks.
//!
//! A job's ad is kept as its attributes in order, each as a name and the
//! canonical text of its expression (what the unparser writes), so it reads
//! back exactly as it was written. Everything a caller hands in is checked
//! here, before either backend writes anything.

use std::fmt;

use serde::{Deserialize, Serialize};
use starling_protocol::classad::{parse_expr, unparse, ClassAd, Name};
use starling_protocol::identity::Timestamp;

use crate::Error;

mod record;

pub(crate) use record::{apply as apply_to_record, decode_attrs, history as history_record};

/// Most procs one submit may create (HTCondor's `MAX_JOBS_PER_SUBMISSION`
/// defaults to 20000).
pub const MAX_PROCS: usize = 100_000;
/// Most attributes one job may have.
pub const MAX_ATTRS: usize = 4096;
/// Longest attribute name, in bytes.
pub const MAX_NAME_LEN: usize = 256;
/// Longest expression text of one attribute, in bytes.
pub const MAX_EXPR_LEN: usize = 256 * 1024;
/// Largest encoded job record, in bytes.
pub const MAX_JOB_LEN: usize = 1024 * 1024;
/// Largest checkpoint record of a job ([`crate::Store::put_checkpoint`]).
pub const MAX_CHECKPOINT_LEN: usize = 4 * 1024 * 1024;

/// Refuses a checkpoint record over [`MAX_CHECKPOINT_LEN`].
pub(crate) fn check_checkpoint(id: JobId, record: &[u8]) -> Result<(), crate::Error> {
    if record.len() > MAX_CHECKPOINT_LEN {
        return Err(crate::Error::invalid(format!(
            "the checkpoint record of job {id} is {} bytes, more than the limit of \
             {MAX_CHECKPOINT_LEN}",
            record.len()
        )));
    }
    Ok(())
}

/// The attribute the queue sets to a job's cluster id.
const CLUSTER_ID: &str = "ClusterId";
/// The attribute the queue sets to a job's proc id.
const PROC_ID: &str = "ProcId";

/// A job's id, HTCondor style: the cluster a submit created and the proc's
/// index within it. Displayed `12.0`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct JobId {
    pub cluster: u64,
    pub proc: u32,
}

impl JobId {
    pub fn new(cluster: u64, proc: u32) -> JobId {
        JobId { cluster, proc }
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.cluster, self.proc)
    }
}

/// One change to a job's attributes. Names are compared ignoring case, as
/// ClassAds do; a set keeps the attribute's place but takes the new spelling.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Change {
    /// Sets `name` to the expression written in `expr` (`"4"`, `"\"x\""`,
    /// `"RequestCpus * 2"`).
    Set { name: String, expr: String },
    /// Removes `name`; removing an absent attribute does nothing.
    Remove { name: String },
}

impl Change {
    pub fn set(name: impl Into<String>, expr: impl Into<String>) -> Change {
        Change::Set {
            name: name.into(),
            expr: expr.into(),
        }
    }

    pub fn remove(name: impl Into<String>) -> Change {
        Change::Remove { name: name.into() }
    }
}

/// A job that left the queue (completed or removed).
#[derive(Clone, Debug)]
pub struct HistoryEntry {
    pub id: JobId,
    /// When it left the queue, as the caller said.
    pub finished_at: Timestamp,
    /// Its ad with the final changes applied.
    pub ad: ClassAd,
}

/// A job's attributes as stored: `(name, canonical expression text)` in
/// order, names unique ignoring case.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Attrs(pub(crate) Vec<(String, String)>);

/// A change that passed [`check_changes`]: the name is valid and the text is
/// canonical.
#[derive(Clone, Debug)]
pub(crate) struct Checked {
    name: String,
    /// `None` removes.
    expr: Option<String>,
}

impl Attrs {
    /// The attributes of a submitted ad, checked.
    pub(crate) fn from_ad(ad: &ClassAd) -> Result<Attrs, Error> {
        if ad.len() > MAX_ATTRS {
            return Err(Error::invalid(format!(
                "the job has {} attributes, more than the limit of {MAX_ATTRS}",
                ad.len()
            )));
        }
        let mut attrs = Vec::with_capacity(ad.len() + 2);
        for entry in ad {
            let name = entry.name.as_str();
            check_name(name)?;
            let text = unparse(entry.expr());
            check_expr_len(name, &text)?;
            attrs.push((name.to_owned(), text));
        }
        Ok(Attrs(attrs))
    }

    /// The ad these attributes describe. `key` names the record in errors.
    pub(crate) fn to_ad(&self, key: &str) -> Result<ClassAd, String> {
        let mut ad = ClassAd::with_capacity(self.0.len());
        for (name, text) in &self.0 {
            let expr = parse_expr(text)
                .map_err(|e| format!("record {key}: attribute {name:?} does not parse: {e}"))?;
            let name =
                Name::new(name).map_err(|e| format!("record {key}: attribute {name:?}: {e}"))?;
            ad.insert(name, expr);
        }
        Ok(ad)
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.0
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    fn set(&mut self, name: &str, text: String) {
        match self.position(name) {
            Some(i) => self.0[i] = (name.to_owned(), text),
            None => self.0.push((name.to_owned(), text)),
        }
    }

    /// Sets `ClusterId` and `ProcId`, which the queue owns.
    pub(crate) fn stamp(&mut self, id: JobId) {
        self.set(CLUSTER_ID, id.cluster.to_string());
        self.set(PROC_ID, id.proc.to_string());
    }

    /// Applies checked changes in order, then checks the result's size.
    pub(crate) fn apply(&mut self, changes: &[Checked]) -> Result<(), Error> {
        apply_pairs(&mut self.0, changes)
    }

    /// The record's bytes, if it is within [`MAX_JOB_LEN`].
    pub(crate) fn encode(&self) -> Result<Vec<u8>, Error> {
        within_limit(record::encode(&self.0))
    }
}

/// Applies checked changes in order to `(name, expression text)` pairs,
/// then checks how many there are: [`Attrs::apply`] on owned strings, and
/// [`record::apply`] on strings borrowed from a record, so that both
/// change a job alike.
fn apply_pairs<'a, S>(pairs: &mut Vec<(S, S)>, changes: &'a [Checked]) -> Result<(), Error>
where
    S: AsRef<str> + From<&'a str>,
{
    for change in changes {
        let at = pairs
            .iter()
            .position(|(n, _)| n.as_ref().eq_ignore_ascii_case(&change.name));
        match (&change.expr, at) {
            // A set keeps the attribute's place and takes the new spelling.
            (Some(text), Some(i)) => pairs[i] = (change.name.as_str().into(), text.as_str().into()),
            (Some(text), None) => pairs.push((change.name.as_str().into(), text.as_str().into())),
            (None, Some(i)) => {
                pairs.remove(i);
            }
            (None, None) => {}
        }
    }
    if pairs.len() > MAX_ATTRS {
        return Err(Error::invalid(format!(
            "the job would have {} attributes, more than the limit of {MAX_ATTRS}",
            pairs.len()
        )));
    }
    Ok(())
}

/// A record's bytes, if they are within [`MAX_JOB_LEN`].
fn within_limit(bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
    if bytes.len() > MAX_JOB_LEN {
        return Err(Error::invalid(format!(
            "the job's attributes take {} bytes, more than the limit of {MAX_JOB_LEN}",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// Checks every change before anything is written: names valid and not owned
/// by the queue, expressions parse, sizes bounded. The text kept is the
/// canonical unparse of the parsed expression.
pub(crate) fn check_changes(changes: &[Change]) -> Result<Vec<Checked>, Error> {
    if changes.len() > MAX_ATTRS {
        return Err(Error::invalid(format!(
            "{} changes in one update, more than the limit of {MAX_ATTRS}",
            changes.len()
        )));
    }
    changes
        .iter()
        .map(|change| {
            let (name, expr) = match change {
                Change::Set { name, expr } => (name, Some(expr)),
                Change::Remove { name } => (name, None),
            };
            check_name(name)?;
            if name.eq_ignore_ascii_case(CLUSTER_ID) || name.eq_ignore_ascii_case(PROC_ID) {
                return Err(Error::invalid_attribute(
                    name,
                    "it is set by the queue and cannot be changed",
                ));
            }
            let expr = match expr {
                None => None,
                Some(text) => {
                    check_expr_len(name, text)?;
                    let parsed = parse_expr(text).map_err(|source| Error::BadExpression {
                        name: name.clone(),
                        source,
                    })?;
                    let canonical = unparse(&parsed);
                    check_expr_len(name, &canonical)?;
                    Some(canonical)
                }
            };
            Ok(Checked {
                name: name.clone(),
                expr,
            })
        })
        .collect()
}

/// A job attribute name: an identifier, as HTCondor's submit language and
/// job ads use (`RequestCpus`, `My_Attr2`).
fn check_name(name: &str) -> Result<(), Error> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Err(Error::invalid_attribute(name, "the name is empty"));
    };
    if name.len() > MAX_NAME_LEN {
        return Err(Error::invalid_attribute(
            name,
            format!("the name is longer than {MAX_NAME_LEN} bytes"),
        ));
    }
    if !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(Error::invalid_attribute(
            name,
            "a name is a letter or _ followed by letters, digits and _",
        ));
    }
    Ok(())
}

fn check_expr_len(name: &str, text: &str) -> Result<(), Error> {
    if text.len() > MAX_EXPR_LEN {
        return Err(Error::invalid_attribute(
            name,
            format!(
                "the expression is {} bytes, more than the limit of {MAX_EXPR_LEN}",
                text.len()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    #[test]
    fn job_ids_display_like_htcondor() {
        assert_eq!(JobId::new(12, 0).to_string(), "12.0");
    }

    #[test]
    fn attributes_read_back_exactly() {
        let ad = parse_ad(r#"[ Cmd = "/bin/sh"; Cpus = 2; Mem = 1.5e3; Req = Cpus > 1 && x =?= undefined; L = {1, "a"} ]"#)
            .unwrap();
        let attrs = Attrs::from_ad(&ad).unwrap();
        let back = attrs.to_ad("jobs/1.0").unwrap();
        assert!(back.same_as(&ad));
        assert_eq!(Attrs::from_ad(&back).unwrap(), attrs);
    }

    #[test]
    fn sets_replace_ignoring_case_and_keep_their_place() {
        let mut attrs = Attrs::from_ad(&parse_ad("[ a = 1; b = 2 ]").unwrap()).unwrap();
        let changes = check_changes(&[Change::set("A", "3"), Change::remove("b")]).unwrap();
        attrs.apply(&changes).unwrap();
        assert_eq!(attrs.0, vec![("A".to_owned(), "3".to_owned())]);
    }

    #[test]
    fn bad_changes_name_the_attribute() {
        let err = check_changes(&[Change::set("Ok", "1"), Change::set("Bad", "1 +")]).unwrap_err();
        assert!(
            matches!(&err, Error::BadExpression { name, .. } if name == "Bad"),
            "{err}"
        );
        let err = check_changes(&[Change::set("no spaces", "1")]).unwrap_err();
        assert!(
            err.to_string().starts_with("attribute \"no spaces\""),
            "{err}"
        );
        let err = check_changes(&[Change::remove("procid")]).unwrap_err();
        assert!(err.to_string().contains("set by the queue"), "{err}");
        let long = "x".repeat(MAX_EXPR_LEN + 1);
        let err = check_changes(&[Change::set("Big", format!("\"{long}\""))]).unwrap_err();
        assert!(err.to_string().contains("more than the limit"), "{err}");
    }
}
