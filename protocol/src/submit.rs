//! HTCondor's submit description language: what `starling submit FILE`
//! reads, turned into one job ad per proc with HTCondor's attribute names.
//!
//! [`parse`] checks the whole file (commands, expressions, `queue`
//! statements) and [`Description::expand`] makes the procs of one cluster,
//! evaluating macros per proc as `condor_submit` does: `$(Cluster)`,
//! `$(Process)`, `$(Item)`, `$(Step)`, `$(Row)`, `$(ItemIndex)`, any key set
//! anywhere in the file (the latest value at each `queue`), `$(NAME:default)`
//! (an undefined macro is empty) and the macro functions of `functions`
//! (`$INT`, `$REAL`, `$STRING`, `$EVAL`, `$F…`, `$BASENAME`, `$DIRNAME`,
//! `$SUBSTR`, `$CHOICE`, `$RANDOM_CHOICE`, `$RANDOM_INTEGER`, `$ENV`); `$$(Attr)` is left as written, and filled in
//! from the matched machine when the job is handed to it ([`dollar_dollar`]).
//! `if`/`elif`/`else`/`endif` choose lines at parse time, with HTCondor's
//! conditions (numbers, booleans, `defined`, `version`; "complex
//! conditionals" are refused, as HTCondor refuses them). Anything wrong is
//! a [`SubmitError`] naming the file, the line and the problem, and nothing
//! is produced from a file with an error.
//!
//! A key that is neither a submit command nor used as a macro anywhere in
//! the file is a warning with a "did you mean" ([`Description::warnings`]),
//! as in HTCondor; so are HTCondor commands Starling does not carry out
//! (`IGNORED`, each with why).
//!
//! `tests/submit/` compares all this with HTCondor's own submit code.
//!
//! Values are checked at the door ([`values`]): names and paths are one
//! line of printable text, paths fit `PATH_MAX` and `NAME_MAX`, requests
//! are finite amounts a machine can have, and the job's directory
//! (`initialdir`, else the submitter's working directory) and the
//! directories its `output` and `error` go to must exist
//! ([`Environment::check_directory`]): as `condor_submit`, a submit makes
//! no directory.
//!
//! A file that names no `request_disk` asks what HTCondor 25 asks
//! ([`DEFAULT_REQUEST_DISK`]): an expression over `TransferInputSizeMB`,
//! the size of what the job brings (executable, `input`,
//! `transfer_input_files`), measured here at submit
//! ([`Environment::size_kib`]).
//!
//! This file is the pipeline: [`parse`] and [`Description::expand`]. Each
//! step is a module of its own: `description` (the parsed file, its
//! errors and limits), `syntax` (reading the text into statements),
//! `commands` (the tables of commands), `warnings`, `macros` (expansion
//! at a queue statement), `job_ad` (one proc's ad), `universe`, and
//! `environment` (the submitter's world); [`args`], [`gpus`], [`retry`],
//! [`kill_sig`], [`values`] and [`dollar_dollar`] are the rules of single
//! commands.

pub mod args;
mod commands;
mod description;
pub mod dollar_dollar;
mod environment;
mod functions;
pub mod gpus;
mod job_ad;
pub mod kill_sig;
mod macros;
pub mod retry;
mod syntax;
mod universe;
pub mod values;
mod warnings;

/// HTCondor's concurrency limits, as a job names them (kept at this path
/// for the crates that use it).
pub use crate::concurrency_limits as limits;
pub use description::{
    Description, SubmitError, MAX_FILE_LEN, MAX_INCLUDE_DEPTH, MAX_ITEMS_FILE_LEN, MAX_LINE_LEN,
    MAX_MACRO_DEPTH, MAX_PROCS, MAX_VALUE_LEN,
};
pub use environment::{
    commands_refused, glob_match, run_command, Allowing, Environment, SystemEnvironment,
    COMMAND_TIMEOUT, MAX_SIZED_DEPTH, MAX_SIZED_ENTRIES,
};
pub use job_ad::{DEFAULT_REQUEST_DISK, MAX_CHECKPOINT_REPLICAS};
pub use universe::{MAX_MACHINE_COUNT, NODE_MARKER};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::classad::{unparse, ClassAd, Expr};
use commands::REFUSED;
use description::{Items, Statement};
use environment::resolve;
use job_ad::Seen;
use macros::Macros;
use syntax::{read_text, self_reference, Includer, Parsed};

/// Parses a submit file. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Description, SubmitError> {
    parse_source(file, text, None)
}

/// [`parse`], reading the files `include : FILE` names (relative to `dir`,
/// the submitter's working directory) through `env`, at most
/// [`MAX_INCLUDE_DEPTH`] deep and [`MAX_FILE_LEN`] bytes in all.
pub fn parse_with_includes(
    file: &str,
    text: &str,
    dir: &Path,
    env: &dyn Environment,
) -> Result<Description, SubmitError> {
    parse_source(file, text, Some(&Includer { dir, env }))
}

/// Macros `condor_submit` defines on a Linux machine before the file.
const PLATFORM_MACROS: &[(&str, &str)] = &[("islinux", "true"), ("iswindows", "false")];

fn parse_source(
    file: &str,
    text: &str,
    includes: Option<&Includer<'_>>,
) -> Result<Description, SubmitError> {
    let mut parsed = Parsed::default();
    for (name, value) in PLATFORM_MACROS {
        parsed
            .defined
            .insert((*name).to_owned(), (*value).to_owned());
    }
    read_text(&mut parsed, file, text, 0, includes, 0)?;
    let mut description = Description {
        file: file.to_owned(),
        statements: parsed.statements,
        warnings: Vec::new(),
        includes: parsed.sources,
        in_conditions: parsed.in_conditions,
    };
    description.check_keys();
    if let Some((line, key, why)) = description.statements.iter().find_map(|s| match s {
        Statement::Set { key, line, .. } => REFUSED
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, why)| (*line, key.clone(), *why)),
        _ => None,
    }) {
        return Err(description.error(line, format!("{key}: not supported: {why}")));
    }
    if !description
        .statements
        .iter()
        .any(|s| matches!(s, Statement::Queue { .. }))
    {
        return Err(SubmitError {
            file: file.to_owned(),
            line: 0,
            problem: "there is no queue statement: nothing would be submitted".to_owned(),
        });
    }
    Ok(description)
}

impl Description {
    /// How many procs the file queues.
    pub fn proc_count(&self, cwd: &Path, env: &dyn Environment) -> Result<usize, SubmitError> {
        Ok(self.expand(0, cwd, env)?.len())
    }

    /// The job ads of cluster `cluster`, one per proc, in order.
    pub fn expand(
        &self,
        cluster: u64,
        cwd: &Path,
        env: &dyn Environment,
    ) -> Result<Vec<ClassAd>, SubmitError> {
        let mut macros: BTreeMap<String, String> = BTreeMap::new();
        // condor_submit's name for the submit file, and its platform
        // macros (Starling's agents run Linux).
        macros.insert("submit_file".to_owned(), self.file.clone());
        for (name, value) in PLATFORM_MACROS {
            macros.insert((*name).to_owned(), (*value).to_owned());
        }
        let mut ads = Vec::new();
        // Directories found there and sizes of inputs, each looked at
        // once for all procs.
        let mut seen = Seen::default();
        for s in &self.statements {
            match s {
                Statement::Set { key, value, .. } => {
                    // `A = $(A) more` refers to the value before this line,
                    // as in condor_submit.
                    let value = self_reference(key, value, macros.get(key).map(String::as_str));
                    macros.insert(key.clone(), value);
                }
                Statement::Queue {
                    count,
                    vars,
                    items,
                    slice,
                    line,
                } => {
                    let base = Macros {
                        map: &macros,
                        cwd,
                        env,
                        file: self,
                        line: *line,
                    };
                    let count = match count {
                        None => 1,
                        Some(c) => {
                            let text = base.expand(c, &BTreeMap::new(), 0)?;
                            text.trim().parse::<usize>().map_err(|_| {
                                self.error(*line, format!("queue count {text:?} is not a number"))
                            })?
                        }
                    };
                    let rows: Vec<String> = match items {
                        Items::None => vec![String::new()],
                        // Items may hold macros; empty ones are dropped.
                        Items::List(list) => {
                            let mut rows = Vec::with_capacity(list.len());
                            for item in list {
                                let item = base.expand(item, &BTreeMap::new(), 0)?;
                                if !item.trim().is_empty() {
                                    rows.push(item);
                                }
                            }
                            rows
                        }
                        Items::File(_) | Items::Command(_) => {
                            let text = match items {
                                Items::Command(c) => {
                                    let c = base.expand(c, &BTreeMap::new(), 0)?;
                                    env.run(&c, cwd).map_err(|e| self.error(*line, e))?
                                }
                                Items::File(f) => {
                                    let f = base.expand(f, &BTreeMap::new(), 0)?;
                                    let path = resolve(cwd, &f);
                                    env.read_file(&path).map_err(|e| {
                                        self.error(
                                            *line,
                                            format!("cannot read {}: {e}", path.display()),
                                        )
                                    })?
                                }
                                _ => String::new(),
                            };
                            let path = PathBuf::from("the item list");
                            if text.len() > MAX_ITEMS_FILE_LEN {
                                return Err(self.error(
                                    *line,
                                    format!(
                                        "{} is larger than {MAX_ITEMS_FILE_LEN} bytes",
                                        path.display()
                                    ),
                                ));
                            }
                            text.lines()
                                .map(str::trim)
                                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                                .map(str::to_owned)
                                .collect()
                        }
                        Items::Matching { patterns, dirs } => {
                            // Matched in the initialdir as it stands
                            // before any proc: only here may it not depend
                            // on the proc (`run_$(Process)` is fine
                            // otherwise).
                            let iwd = resolve(
                                cwd,
                                &base
                                    .expand_opt("initialdir", &BTreeMap::new())?
                                    .or(base.expand_opt("initial_dir", &BTreeMap::new())?)
                                    .unwrap_or_default(),
                            );
                            let mut names = Vec::new();
                            for p in patterns {
                                let p = base.expand(p, &BTreeMap::new(), 0)?;
                                let (dir, pattern) = match p.rsplit_once('/') {
                                    Some((d, pat)) => (resolve(&iwd, d), pat.to_owned()),
                                    None => (iwd.clone(), p.clone()),
                                };
                                let found = env.glob(&dir, &pattern, *dirs).map_err(|e| {
                                    self.error(*line, format!("cannot list {}: {e}", dir.display()))
                                })?;
                                let prefix = p
                                    .rsplit_once('/')
                                    .map(|(d, _)| format!("{d}/"))
                                    .unwrap_or_default();
                                // Directories end in '/', as HTCondor lists them.
                                let end = if *dirs { "/" } else { "" };
                                names
                                    .extend(found.into_iter().map(|n| format!("{prefix}{n}{end}")));
                            }
                            names
                        }
                    };
                    let var_names: Vec<String> = if vars.is_empty() {
                        vec!["item".to_owned()]
                    } else {
                        vars.clone()
                    };
                    for (row_index, row) in rows.iter().enumerate() {
                        if slice.is_some_and(|s| !s.selects(row_index, rows.len())) {
                            continue;
                        }
                        let values: Vec<String> = if var_names.len() == 1 {
                            vec![row.clone()]
                        } else {
                            let mut parts: Vec<String> = row
                                .split(|c: char| c == ',' || c.is_whitespace())
                                .filter(|p| !p.is_empty())
                                .map(str::to_owned)
                                .collect();
                            // The last variable takes the rest of the row.
                            if parts.len() > var_names.len() {
                                let tail = parts.split_off(var_names.len() - 1).join(" ");
                                parts.push(tail);
                            }
                            parts
                        };
                        for step in 0..count {
                            if ads.len() >= MAX_PROCS {
                                return Err(
                                    self.error(*line, format!("more than {MAX_PROCS} procs"))
                                );
                            }
                            let mut per: BTreeMap<String, String> = BTreeMap::new();
                            for (i, name) in var_names.iter().enumerate() {
                                per.insert(
                                    name.clone(),
                                    values.get(i).cloned().unwrap_or_default(),
                                );
                            }
                            let proc = ads.len();
                            for (k, v) in [
                                ("cluster", cluster.to_string()),
                                ("clusterid", cluster.to_string()),
                                ("process", proc.to_string()),
                                ("procid", proc.to_string()),
                                ("step", step.to_string()),
                                ("itemindex", row_index.to_string()),
                                ("row", row_index.to_string()),
                            ] {
                                per.insert(k.to_owned(), v);
                            }
                            // HTCondor's default `$(Node)`: each node's copy
                            // of a parallel job gets its number there; a
                            // user's own Node macro wins.
                            if !base.map.contains_key("node")
                                && base
                                    .map
                                    .get("universe")
                                    .is_some_and(|u| u.trim().eq_ignore_ascii_case("parallel"))
                            {
                                per.insert("node".to_owned(), NODE_MARKER.to_owned());
                            }
                            let ad = self.job_ad(&base, &per, cwd, env, *line, &mut seen)?;
                            ads.push(ad);
                        }
                    }
                }
            }
        }
        Ok(ads)
    }
}

/// A value's ClassAd text, for messages.
pub fn show(expr: &Expr) -> String {
    unparse(expr)
}

#[cfg(test)]
mod tests;
