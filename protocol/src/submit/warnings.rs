//! What a parsed file says that Starling ignores, as warnings naming the
//! line ([`Description::warnings`]): keys that are neither a command, a
//! `+Attr` nor a macro used anywhere (with a "did you mean"), custom
//! resource requests a letter away from a command, and HTCondor commands
//! Starling does not carry out.
//!
//! It only reads the statements: it never refuses a file (errors are the
//! other steps') and never builds a job ad.

use super::commands::{COMMANDS, IGNORED};
use super::description::{Description, Items, Statement};
use super::gpus;
use super::retry::retry_list;
use super::syntax::referenced;

impl Description {
    /// Finds the keys [`Description::warnings`] reports.
    pub(super) fn check_keys(&mut self) {
        let mut used = self.in_conditions.clone();
        for s in &self.statements {
            match s {
                Statement::Set { value, .. } => referenced(value, &mut used),
                Statement::Queue { count, items, .. } => {
                    if let Some(c) = count {
                        referenced(c, &mut used);
                    }
                    match items {
                        Items::File(f) | Items::Command(f) => referenced(f, &mut used),
                        Items::List(l) => l.iter().for_each(|i| referenced(i, &mut used)),
                        Items::Matching { patterns, .. } => {
                            patterns.iter().for_each(|p| referenced(p, &mut used))
                        }
                        Items::None => {}
                    }
                }
            }
        }
        let mut warnings = Vec::new();
        // A parallel job reads machine_count (`parallel_attributes`).
        let parallel = self.statements.iter().any(|s| {
            matches!(s, Statement::Set { key, value, .. }
                if key == "universe" && value.trim().eq_ignore_ascii_case("parallel"))
        });
        for s in &self.statements {
            if let Statement::Set { key, line, value } = s {
                if parallel && ["machine_count", "node_count"].contains(&key.as_str()) {
                    continue;
                }
                if key == "retry_request_memory_increase"
                    && self.statements.iter().any(|s| {
                        matches!(s, Statement::Set { key, .. } if key == "retry_request_memory")
                    })
                {
                    warnings.push(self.error(
                        *line,
                        "retry_request_memory_increase: ignored because retry_request_memory \
                         is used (as in HTCondor)",
                    ));
                }
                if key == "request_disk" && retry_list(value).is_some() {
                    warnings.push(self.error(
                        *line,
                        format!(
                            "{key}: only the first size is requested; Starling does not \
                             retry with larger requests yet"
                        ),
                    ));
                }
                // `request_<name>` asks for a custom resource.
                let known = |k: &str| COMMANDS.contains(&k) || gpus::COMMANDS.contains(&k);
                // `request_<name>` asks for a custom resource, as in
                // HTCondor; one a letter away from a command is most
                // likely that command mistyped, which no machine has.
                let custom = key
                    .strip_prefix("request_")
                    .is_some_and(|t| t.len() >= 2 && !t.starts_with('_'));
                if custom && !known(key) {
                    if let Some(c) = COMMANDS
                        .iter()
                        .chain(gpus::COMMANDS)
                        .find(|c| close(c, key))
                    {
                        warnings.push(self.error(
                            *line,
                            format!(
                                "{key}: asks for a custom machine resource (Request{}), \
                                 which machines must advertise; did you mean {c}?",
                                &key["request_".len()..]
                            ),
                        ));
                    }
                    continue;
                }
                if key.starts_with("my.") || known(key) || used.contains(key) {
                    continue;
                }
                if let Some((_, why)) = IGNORED.iter().find(|(c, _)| c == key) {
                    warnings.push(self.error(
                        *line,
                        format!("{key}: an HTCondor command Starling ignores ({why})"),
                    ));
                    continue;
                }
                let hint = COMMANDS
                    .iter()
                    .chain(gpus::COMMANDS)
                    .find(|c| close(c, key))
                    .map(|c| format!(" (did you mean {c}?)"))
                    .unwrap_or_default();
                warnings.push(self.error(
                    *line,
                    format!(
                        "{key:?} is not a submit command{hint}; as a macro it is never used \
                         (ignored, as condor_submit does)"
                    ),
                ));
            }
        }
        self.warnings = warnings;
    }
}

/// Whether two command names are one typo apart (a swap, a letter more or
/// less, or a different letter).
fn close(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = row;
    }
    prev[b.len()] <= 2
}
