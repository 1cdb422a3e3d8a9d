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

pub mod args;
pub mod dollar_dollar;
mod functions;
pub mod gpus;
pub mod kill_sig;
pub mod limits;
pub mod retry;
pub mod values;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::classad::{parse_expr, unparse, ClassAd, Evaluator, Expr, Name, Side, Value};

/// Largest submit file, in bytes.
pub const MAX_FILE_LEN: usize = 1 << 20;
/// Longest logical line (after joining continuations), in bytes.
pub const MAX_LINE_LEN: usize = 64 << 10;
/// Most procs one file may queue.
pub const MAX_PROCS: usize = 100_000;
/// Deepest macro expansion.
pub const MAX_MACRO_DEPTH: usize = 32;
/// Largest file `queue ... from FILE` reads, in bytes.
pub const MAX_ITEMS_FILE_LEN: usize = 16 << 20;
/// Deepest nesting of `include : FILE`.
pub const MAX_INCLUDE_DEPTH: usize = 8;
/// Statements read from the nth included file carry line numbers offset
/// by `n` times this, so that errors name that file and its own line.
const INCLUDE_LINE_BASE: usize = 1 << 32;
/// `RequestDisk` when the file gives no `request_disk`: HTCondor 25's
/// `JOB_DEFAULT_REQUESTDISK`, in KiB.
pub const DEFAULT_REQUEST_DISK: &str = "MAX({1024, (TransferInputSizeMB + 1) * 1.25}) * 1024";
/// Longest expanded value, in bytes.
pub const MAX_VALUE_LEN: usize = 256 << 10;

/// What the submit needs from the world: the submitter's environment and
/// files. [`SystemEnvironment`] is the real one.
pub trait Environment {
    /// The submitter's environment variable.
    fn var(&self, name: &str) -> Option<String>;
    /// All of it (for `getenv = true`).
    fn vars(&self) -> Vec<(String, String)>;
    fn read_file(&self, path: &Path) -> std::io::Result<String>;
    /// Names in `dir` matching the glob `pattern`, sorted; directories
    /// only if `dirs`, else files only.
    fn glob(&self, dir: &Path, pattern: &str, dirs: bool) -> std::io::Result<Vec<String>>;
    /// `Ok` when `path` is a directory the submitter can reach; else why
    /// not (`NotFound` when it does not exist).
    fn check_directory(&self, path: &Path) -> std::io::Result<()>;
    /// `Ok` when something is at `path` for the submitter (`NotFound`
    /// when nothing is): the executable and input files are checked so.
    fn check_exists(&self, path: &Path) -> std::io::Result<()>;
    /// The size of `path` in KiB as `condor_submit` counts an input
    /// (each file rounded up to a KiB, a directory the sum of what it
    /// holds), 0 when nothing is there: the default `request_disk` grows
    /// with it. A directory's walk reads at most `max_entries` entries
    /// (what it read by then counts); the second value says how many it
    /// read.
    fn size_kib(&self, path: &Path, max_entries: usize) -> (u64, usize);
    /// The submitting user.
    fn owner(&self) -> String;
    /// Unix seconds.
    fn now(&self) -> i64;
    /// The output of `command`, run in `dir` for `include command :` or
    /// `queue ... from COMMAND |`. Programs named in a submit file run
    /// only when the submitter says so (`starling submit
    /// -allow-commands`); by default this refuses, saying how.
    fn run(&self, command: &str, dir: &Path) -> Result<String, String> {
        let _ = dir;
        Err(commands_refused(command))
    }
}

/// Why `command` was not run: programs named in a submit file run only
/// when the submitter asks.
pub fn commands_refused(command: &str) -> String {
    format!(
        "{command:?} is a program named in the submit file; starling submit runs such \
         programs only with -allow-commands (as the submitting user, in the submit directory)"
    )
}

/// A submitter's world in which the programs a file names run
/// (`starling submit -allow-commands`): each once, with [`run_command`]
/// in the submit directory, its output kept ([`Allowing::outputs`]) so
/// that it can go with the file; everything else is `env`'s.
pub struct Allowing<'a> {
    env: &'a dyn Environment,
    ran: std::cell::RefCell<BTreeMap<String, String>>,
}

impl<'a> Allowing<'a> {
    pub fn new(env: &'a dyn Environment) -> Allowing<'a> {
        Allowing {
            env,
            ran: Default::default(),
        }
    }

    /// What each program run printed, by its command line.
    pub fn outputs(self) -> BTreeMap<String, String> {
        self.ran.into_inner()
    }
}

impl Environment for Allowing<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.env.var(name)
    }
    fn vars(&self) -> Vec<(String, String)> {
        self.env.vars()
    }
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        self.env.read_file(path)
    }
    fn glob(&self, dir: &Path, pattern: &str, dirs: bool) -> std::io::Result<Vec<String>> {
        self.env.glob(dir, pattern, dirs)
    }
    fn check_directory(&self, path: &Path) -> std::io::Result<()> {
        self.env.check_directory(path)
    }
    fn check_exists(&self, path: &Path) -> std::io::Result<()> {
        self.env.check_exists(path)
    }
    fn size_kib(&self, path: &Path, max_entries: usize) -> (u64, usize) {
        self.env.size_kib(path, max_entries)
    }
    fn owner(&self) -> String {
        self.env.owner()
    }
    fn now(&self) -> i64 {
        self.env.now()
    }
    fn run(&self, command: &str, dir: &Path) -> Result<String, String> {
        if let Some(out) = self.ran.borrow().get(command) {
            return Ok(out.clone());
        }
        let out = run_command(command, dir, MAX_FILE_LEN)?;
        self.ran
            .borrow_mut()
            .insert(command.to_owned(), out.clone());
        Ok(out)
    }
}

/// The longest a program named in a submit file may run.
pub const COMMAND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `command` with `sh -c` in `dir` as the current user: its standard
/// output, at most `max` bytes, within [`COMMAND_TIMEOUT`]; a program
/// that fails, says more or runs longer is an error naming it.
pub fn run_command(command: &str, dir: &Path, max: usize) -> Result<String, String> {
    use std::io::Read as _;
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{command:?} could not be started: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no output pipe")?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let read = (&mut stdout).take(max as u64 + 1).read_to_end(&mut out);
        read.map(|_| out)
    });
    let deadline = std::time::Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{command:?} ran longer than {} s",
                    COMMAND_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("{command:?}: {e}")),
        }
    };
    let out = reader
        .join()
        .map_err(|_| format!("{command:?}: reading its output failed"))?
        .map_err(|e| format!("{command:?}: reading its output failed: {e}"))?;
    if !status.success() {
        return Err(format!("{command:?} failed ({status})"));
    }
    if out.len() > max {
        return Err(format!("{command:?} wrote more than {max} bytes"));
    }
    String::from_utf8(out).map_err(|_| format!("{command:?} wrote text that is not UTF-8"))
}

/// Most directory entries one expansion reads to size its inputs, all
/// procs together: a huge tree counts as what was read by then, and a
/// submit stays quick.
pub const MAX_SIZED_ENTRIES: usize = 1_000_000;
/// Deepest directory [`SystemEnvironment::size_kib`] descends into.
pub const MAX_SIZED_DEPTH: usize = 64;

/// The submitter's real environment, given as a map (the CLI sends its own).
#[derive(Debug, Clone, Default)]
pub struct SystemEnvironment {
    pub vars: BTreeMap<String, String>,
    pub owner: String,
}

impl Environment for SystemEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
    fn vars(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        use std::io::Read as _;
        let mut text = String::new();
        std::fs::File::open(path)?
            .take(MAX_ITEMS_FILE_LEN as u64 + 1)
            .read_to_string(&mut text)?;
        Ok(text)
    }
    fn glob(&self, dir: &Path, pattern: &str, dirs: bool) -> std::io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.starts_with('.') && !pattern.starts_with('.') {
                continue;
            }
            if entry.file_type()?.is_dir() == dirs && glob_match(pattern, &name) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }
    fn check_directory(&self, path: &Path) -> std::io::Result<()> {
        if std::fs::metadata(path)?.is_dir() {
            Ok(())
        } else {
            Err(std::io::Error::other("it is not a directory"))
        }
    }
    fn check_exists(&self, path: &Path) -> std::io::Result<()> {
        std::fs::metadata(path).map(drop)
    }
    fn size_kib(&self, path: &Path, max_entries: usize) -> (u64, usize) {
        let Ok(meta) = std::fs::metadata(path) else {
            return (0, 0);
        };
        if !meta.is_dir() {
            return (meta.len().div_ceil(1024), 0);
        }
        // A directory: the bytes of all it holds, rounded up once, as
        // HTCondor sizes a directory input. Links are not followed, so
        // a loop cannot keep this walking.
        let mut bytes = 0u64;
        let mut entries = 0usize;
        let mut stack = vec![(path.to_path_buf(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(listing) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in listing.flatten() {
                if entries >= max_entries {
                    return (bytes.div_ceil(1024), entries);
                }
                entries += 1;
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                if meta.is_dir() {
                    if depth < MAX_SIZED_DEPTH {
                        stack.push((entry.path(), depth + 1));
                    }
                } else {
                    bytes = bytes.saturating_add(meta.len());
                }
            }
        }
        (bytes.div_ceil(1024), entries)
    }
    fn owner(&self) -> String {
        self.owner.clone()
    }
    fn now(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }
}

/// HTCondor's match of a name against a pattern of its lists (`getenv`):
/// `*` stands for any text, nothing else is special, case is ignored.
fn star_match(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.to_ascii_lowercase(), name.to_ascii_lowercase());
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// `*`, `?` and `[...]` glob matching of one name.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some('['), Some(c)) => match p.iter().position(|&x| x == ']') {
                Some(end) if end > 1 => {
                    let set = &p[1..end];
                    let (negate, set) = match set.first() {
                        Some('!' | '^') => (true, &set[1..]),
                        _ => (false, set),
                    };
                    let mut hit = false;
                    let mut i = 0;
                    while i < set.len() {
                        if i + 2 < set.len() && set[i + 1] == '-' {
                            hit |= set[i] <= *c && *c <= set[i + 2];
                            i += 3;
                        } else {
                            hit |= set[i] == *c;
                            i += 1;
                        }
                    }
                    hit != negate && go(&p[end + 1..], &n[1..])
                }
                _ => *c == '[' && go(&p[1..], &n[1..]),
            },
            (Some(a), Some(b)) => a == b && go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// A problem in a submit file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitError {
    pub file: String,
    /// 1-based; 0 for the file as a whole.
    pub line: usize,
    pub problem: String,
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.problem)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.problem)
        }
    }
}

impl std::error::Error for SubmitError {}

/// Where a `queue` statement's items come from.
#[derive(Debug, Clone, PartialEq)]
enum Items {
    /// `queue` or `queue N`.
    None,
    /// `in (a, b, c)` or `from ( lines )`: one item per entry.
    List(Vec<String>),
    /// `from FILE`: one item per line of the file.
    File(String),
    /// `from PROGRAM |`: one item per line of its output.
    Command(String),
    /// `matching [files|dirs] PATTERN...`.
    Matching { patterns: Vec<String>, dirs: bool },
}

#[derive(Debug, Clone, PartialEq)]
enum Statement {
    Set {
        key: String,
        value: String,
        line: usize,
    },
    Queue {
        count: Option<String>,
        vars: Vec<String>,
        items: Items,
        /// `[start:end:step]` before the items, Python's slice.
        slice: Option<Slice>,
        line: usize,
    },
}

/// A `queue` statement's `[start:end:step]`: which items are queued.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slice {
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
}

impl Slice {
    /// Reads `[a:b:c]` (each part optional) at the start of `text`; the
    /// slice and the text after it.
    fn parse(text: &str) -> Result<Option<(Slice, &str)>, String> {
        let Some(rest) = text.strip_prefix('[') else {
            return Ok(None);
        };
        let end = rest
            .find(']')
            .ok_or_else(|| format!("the slice {text:?} has no ']'"))?;
        let parts: Vec<&str> = rest[..end].split(':').collect();
        if parts.len() > 3 {
            return Err(format!(
                "[{}] is not a slice [start:end:step]",
                &rest[..end]
            ));
        }
        let num = |i: usize| -> Result<Option<i64>, String> {
            match parts.get(i).map(|p| p.trim()) {
                None | Some("") => Ok(None),
                Some(p) => p
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("{p:?} in a slice is not a whole number")),
            }
        };
        let slice = Slice {
            start: num(0)?,
            end: num(1)?,
            step: num(2)?,
        };
        if slice.step == Some(0) {
            return Err("a slice's step cannot be 0".to_owned());
        }
        if parts.len() == 1 && slice.start.is_some() {
            // `[n]`: the one item n.
            return Ok(Some((
                Slice {
                    end: slice.start.map(|s| {
                        if s == -1 {
                            i64::MAX
                        } else {
                            s.saturating_add(1)
                        }
                    }),
                    ..slice
                },
                rest[end + 1..].trim_start(),
            )));
        }
        Ok(Some((slice, rest[end + 1..].trim_start())))
    }

    /// Whether item `index` of `len` is selected (Python's rules).
    fn selects(&self, index: usize, len: usize) -> bool {
        // In i128, so that no bound a user writes overflows.
        let len = len as i128;
        let at = |v: i64| {
            let v = i128::from(v);
            if v < 0 {
                (len + v).max(0)
            } else {
                v.min(len)
            }
        };
        let step = i128::from(self.step.unwrap_or(1));
        let i = index as i128;
        if step > 0 {
            let start = self.start.map_or(0, at);
            let end = self.end.map_or(len, at);
            i >= start && i < end && (i - start) % step == 0
        } else {
            let start = self.start.map_or(len - 1, |v| at(v).min(len - 1));
            let end = self.end.map_or(-1, at);
            i <= start && i > end && (start - i) % (-step) == 0
        }
    }
}

/// A parsed submit file.
#[derive(Debug, Clone)]
pub struct Description {
    file: String,
    statements: Vec<Statement>,
    warnings: Vec<SubmitError>,
    /// The files `include` read, in order: the statements of the nth
    /// have lines offset by `n * INCLUDE_LINE_BASE`.
    includes: Vec<String>,
    /// Macros named by `if` conditions (so not unused).
    in_conditions: std::collections::BTreeSet<String>,
}

/// The commands `starling submit` knows, lower case (and the GPU ones,
/// [`gpus::COMMANDS`]).
const COMMANDS: &[&str] = &[
    "universe",
    "jar_files",
    "java_vm_args",
    "java_vm_arguments",
    "executable",
    "arguments",
    "args",
    "environment",
    "env",
    "input",
    "output",
    "error",
    "log",
    "initialdir",
    "initial_dir",
    "transfer_input_files",
    "transfer_output_files",
    "transfer_output_remaps",
    "allowed_execute_duration",
    "allowed_job_duration",
    "transfer_executable",
    "should_transfer_files",
    "when_to_transfer_output",
    "request_cpus",
    "request_memory",
    "retry_request_memory",
    "retry_request_memory_increase",
    "retry_request_memory_max",
    "concurrency_limits",
    "max_transfer_input_mb",
    "max_transfer_output_mb",
    "request_disk",
    "requirements",
    "rank",
    "priority",
    "accounting_group",
    "accounting_group_user",
    "notification",
    "notify_user",
    "getenv",
    "hold",
    "batch_name",
    "max_retries",
    "success_exit_code",
    "retry_until",
    "nice_user",
    "periodic_hold",
    "periodic_release",
    "periodic_remove",
    "on_exit_hold",
    "on_exit_remove",
    "periodic_hold_reason",
    "periodic_hold_subcode",
    "on_exit_hold_reason",
    "on_exit_hold_subcode",
    "job_max_vacate_time",
    "component_domain",
    "co_allocation",
    "max_materialize",
    "max_idle",
    "materialize_max_idle",
    "output_directory",
    "checkpoint_exit_code",
    "transfer_checkpoint_files",
    "checkpoint_replicas",
    "kill_sig",
    "description",
];

/// Job attribute names HTCondor takes for the commands that set them,
/// lower case, with the command.
const ATTRIBUTE_ALIASES: &[(&str, &str)] = &[
    ("jobbatchname", "batch_name"),
    ("jobdescription", "description"),
    ("notifyuser", "notify_user"),
    ("jobprio", "priority"),
    ("prio", "priority"),
    ("jobmaxvacatetime", "job_max_vacate_time"),
    ("checkpointexitcode", "checkpoint_exit_code"),
];

/// HTCondor 25's submit commands that Starling accepts and ignores, each
/// with why it has no effect here.
const IGNORED: &[(&str, &str)] = &[
    (
        "want_graceful_removal",
        "Starling always sends the kill signal first",
    ),
    ("use_oauth_services", "Starling has no credential service"),
    ("transfer_output", "only for the grid universe"),
    ("transfer_input", "only for the grid universe"),
    ("transfer_error", "only for the grid universe"),
    ("stream_output", "output comes back when the job ends"),
    ("stream_error", "errors come back when the job ends"),
    ("stream_input", "input goes with the job when it starts"),
    (
        "job_lease_duration",
        "Starling's claims keep their own leases",
    ),
    ("coresize", "Starling does not limit core files"),
    ("image_size", "Starling schedules by request_memory"),
    (
        "leave_in_queue",
        "Starling keeps finished jobs in its history",
    ),
    ("preserve_relative_paths", "not supported by Starling yet"),
    ("want_remote_io", "Starling has no remote I/O"),
    ("want_io_proxy", "Starling has no remote I/O"),
    ("encrypt_input_files", "Starling encrypts every transfer"),
    ("encrypt_output_files", "Starling encrypts every transfer"),
    (
        "dont_encrypt_input_files",
        "Starling encrypts every transfer",
    ),
    (
        "dont_encrypt_output_files",
        "Starling encrypts every transfer",
    ),
    ("job_machine_attrs", "not recorded by Starling yet"),
    ("periodic_vacate", "not supported by Starling yet"),
    ("submit_event_notes", "Starling's user log has no notes"),
    ("load_profile", "Starling runs jobs without a login profile"),
    (
        "run_as_owner",
        "Starling runs jobs as its configured account",
    ),
    ("skip_filechecks", "Starling always checks the files"),
    (
        "machine_count",
        "only a parallel-universe job runs on several machines",
    ),
    (
        "grid_resource",
        "only for the grid universe, which Starling refuses",
    ),
];

/// HTCondor 25's submit commands whose job Starling would run wrongly if
/// it ignored them (at the wrong time, outside its container): refused,
/// each with why.
const REFUSED: &[(&str, &str)] = &[
    (
        "docker_image",
        "Starling cannot run containers yet (no machine advertises a container runtime)",
    ),
    (
        "container_image",
        "Starling cannot run containers yet (no machine advertises a container runtime)",
    ),
    (
        "deferral_time",
        "Starling has no deferred start yet: submit the job when it should start",
    ),
    (
        "deferral_window",
        "Starling has no deferred start yet: submit the job when it should start",
    ),
    (
        "deferral_prep_time",
        "Starling has no deferred start yet: submit the job when it should start",
    ),
    (
        "cron_minute",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_hour",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_day_of_month",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_month",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_day_of_week",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_prep_time",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_window",
        "Starling has no cron jobs: submit from cron instead",
    ),
];

/// Attribute names of the commands that are ClassAd expressions.
const EXPRESSIONS: &[(&str, &str)] = &[
    ("periodic_hold", "PeriodicHold"),
    ("periodic_release", "PeriodicRelease"),
    ("periodic_remove", "PeriodicRemove"),
    ("on_exit_hold", "OnExitHold"),
    ("on_exit_remove", "OnExitRemove"),
    ("periodic_hold_reason", "PeriodicHoldReason"),
    ("periodic_hold_subcode", "PeriodicHoldSubCode"),
    ("on_exit_hold_reason", "OnExitHoldReason"),
    ("on_exit_hold_subcode", "OnExitHoldSubCode"),
    ("job_max_vacate_time", "JobMaxVacateTime"),
    ("checkpoint_exit_code", "CheckpointExitCode"),
];

/// Most store peers a job may ask to keep its checkpoint.
pub const MAX_CHECKPOINT_REPLICAS: i64 = crate::checkpoint::MAX_REPLICAS as i64;

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

/// Where included files come from.
struct Includer<'a> {
    dir: &'a Path,
    env: &'a dyn Environment,
}

/// What parsing has gathered so far, over the file and its includes.
#[derive(Default)]
struct Parsed {
    statements: Vec<Statement>,
    /// The macros set so far, for `if` conditions.
    defined: BTreeMap<String, String>,
    /// The included files, in order (see [`INCLUDE_LINE_BASE`]).
    sources: Vec<String>,
    /// Macros `if` conditions name: used, for [`Description::warnings`].
    in_conditions: std::collections::BTreeSet<String>,
    bytes: usize,
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

/// Reads one file's lines into `parsed`; its statements' lines are offset
/// by `base` (0 for the submit file itself).
fn read_text(
    parsed: &mut Parsed,
    file: &str,
    text: &str,
    base: usize,
    includes: Option<&Includer<'_>>,
    depth: usize,
) -> Result<(), SubmitError> {
    let err = |line: usize, problem: String| SubmitError {
        file: file.to_owned(),
        line,
        problem,
    };
    if text.len() > MAX_FILE_LEN {
        return Err(err(
            0,
            format!("the file is {} bytes, more than {MAX_FILE_LEN}", text.len()),
        ));
    }
    let lines = logical_lines(text).map_err(|(l, p)| err(l, p))?;
    // The open `if`s of this file.
    let mut conditions: Vec<Branch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (line, body) = (lines[i].0, lines[i].1.as_str());
        i += 1;
        if body.len() > MAX_LINE_LEN {
            return Err(err(
                line,
                format!("the line is longer than {MAX_LINE_LEN} bytes"),
            ));
        }
        let lower = body.to_ascii_lowercase();
        let word = lower.split_whitespace().next().unwrap_or("");
        if matches!(word, "if" | "elif" | "else" | "endif") {
            let rest = body[word.len()..].trim();
            referenced(rest, &mut parsed.in_conditions);
            if let Some(name) = rest
                .trim_start_matches(['!', ' ', '\t'])
                .strip_prefix("defined")
            {
                parsed
                    .in_conditions
                    .insert(name.trim().to_ascii_lowercase());
            }
            let active = conditions.iter().all(|c: &Branch| c.active);
            match word {
                "if" => {
                    let value = if active {
                        condition(rest, &parsed.defined).map_err(|p| err(line, p))?
                    } else {
                        false
                    };
                    conditions.push(Branch {
                        active: value,
                        taken: value,
                        line,
                        seen_else: false,
                    });
                }
                "elif" | "else" => {
                    let parent = conditions.len() > 1
                        && conditions[..conditions.len() - 1].iter().all(|c| c.active);
                    let parent = parent || conditions.len() == 1;
                    let Some(top) = conditions.last_mut() else {
                        return Err(err(line, format!("{word} without an if")));
                    };
                    if top.seen_else {
                        return Err(err(line, format!("{word} after else")));
                    }
                    let value = if top.taken || !parent {
                        false
                    } else if word == "else" {
                        true
                    } else {
                        condition(rest, &parsed.defined).map_err(|p| err(line, p))?
                    };
                    top.seen_else = word == "else";
                    top.active = value;
                    top.taken |= value;
                }
                _ => {
                    if conditions.pop().is_none() {
                        return Err(err(line, "endif without an if".to_owned()));
                    }
                }
            }
            continue;
        }
        if !conditions.iter().all(|c| c.active) {
            continue;
        }
        if word == "include" || lower.starts_with("include:") {
            let rest = body["include".len()..].trim_start();
            let command = rest
                .get(.."command".len())
                .is_some_and(|w| w.eq_ignore_ascii_case("command"))
                .then(|| rest["command".len()..].trim_start())
                .and_then(|r| r.strip_prefix(':'));
            if let Some(command) = command {
                let command = expand_simple(command.trim(), &parsed.defined, 0);
                let Some(includer) = includes else {
                    return Err(err(line, commands_refused(&command)));
                };
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(err(
                        line,
                        format!("include command : {command}: includes nest deeper than {MAX_INCLUDE_DEPTH}"),
                    ));
                }
                let included = includer
                    .env
                    .run(&command, includer.dir)
                    .map_err(|e| err(line, format!("include command : {e}")))?;
                parsed.bytes += included.len();
                if parsed.bytes > MAX_FILE_LEN {
                    return Err(err(
                        line,
                        format!("include command : {command}: the file and its includes come to more than {MAX_FILE_LEN} bytes"),
                    ));
                }
                let name = format!("command {command}");
                parsed.sources.push(name.clone());
                let included_base = parsed.sources.len() * INCLUDE_LINE_BASE;
                read_text(parsed, &name, &included, included_base, includes, depth + 1)?;
                continue;
            }
            let Some(target) = rest.strip_prefix(':') else {
                return Err(err(
                    line,
                    "expected `include : FILE` or `include command : PROGRAM`".to_owned(),
                ));
            };
            let target = expand_simple(target.trim(), &parsed.defined, 0);
            let Some(includer) = includes else {
                return Err(err(
                    line,
                    format!("include : {target}: included files are read only where the submitter's files are"),
                ));
            };
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(err(
                    line,
                    format!("include : {target}: includes nest deeper than {MAX_INCLUDE_DEPTH}"),
                ));
            }
            let path = resolve(includer.dir, &target);
            let included = includer.env.read_file(&path).map_err(|e| {
                err(
                    line,
                    format!("include : cannot read {}: {e}", path.display()),
                )
            })?;
            parsed.bytes += included.len();
            if parsed.bytes > MAX_FILE_LEN {
                return Err(err(
                    line,
                    format!("include : {target}: the file and its includes come to more than {MAX_FILE_LEN} bytes"),
                ));
            }
            let name = path.display().to_string();
            parsed.sources.push(name.clone());
            let included_base = parsed.sources.len() * INCLUDE_LINE_BASE;
            read_text(parsed, &name, &included, included_base, includes, depth + 1)?;
            continue;
        }
        if lower == "queue" || lower.starts_with("queue ") || lower.starts_with("queue\t") {
            let mut rest = body[5..].trim().to_owned();
            // A parenthesised list may go on over several lines.
            if rest.contains('(') && !rest.contains(')') {
                loop {
                    let Some((_, more)) = lines.get(i) else {
                        return Err(err(line, "the item list's '(' is never closed".to_owned()));
                    };
                    i += 1;
                    rest.push('\n');
                    rest.push_str(more);
                    if more.contains(')') {
                        break;
                    }
                }
            }
            parsed
                .statements
                .push(parse_queue(&rest, base + line).map_err(|p| err(line, p))?);
            continue;
        }
        let Some((key, value)) = body.split_once('=') else {
            return Err(err(
                line,
                format!("{body:?} is neither `command = value` nor a queue statement"),
            ));
        };
        let key = key.trim();
        let value = value.trim().to_owned();
        let key = if let Some(attr) = key.strip_prefix('+') {
            format!("my.{attr}")
        } else {
            key.to_owned()
        };
        let lower_key = key.to_ascii_lowercase();
        if lower_key.starts_with("my.") {
            let attr = &key[3..];
            if !attr.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                return Err(err(
                    line,
                    format!("+{attr}: an attribute name starts with a letter"),
                ));
            }
            Name::new(attr).map_err(|e| err(line, format!("+{attr}: {e}")))?;
            if !value.contains("$(") {
                parse_expr(&value).map_err(|e| err(line, format!("+{attr} = {value}: {e}")))?;
            }
            parsed.statements.push(Statement::Set {
                key: format!("my.{attr}"),
                value,
                line: base + line,
            });
            continue;
        }
        if lower_key.is_empty()
            || !lower_key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(err(line, format!("{key:?} is not a command name")));
        }
        // HTCondor also takes a command by the name of the attribute it
        // sets (`JobBatchName = x` for `batch_name = x`).
        let lower_key = ATTRIBUTE_ALIASES
            .iter()
            .find(|(alias, _)| *alias == lower_key)
            .map_or(lower_key, |(_, command)| (*command).to_owned());
        let value = self_reference(
            &lower_key,
            &value,
            parsed.defined.get(&lower_key).map(String::as_str),
        );
        parsed.defined.insert(lower_key.clone(), value.clone());
        parsed.statements.push(Statement::Set {
            key: lower_key,
            value,
            line: base + line,
        });
    }
    if let Some(open) = conditions.last() {
        return Err(err(open.line, "this if has no endif".to_owned()));
    }
    Ok(())
}

/// One open `if`: whether its lines count now, whether a branch was
/// taken, where it opened.
struct Branch {
    active: bool,
    taken: bool,
    line: usize,
    seen_else: bool,
}

/// The HTCondor version whose submit language this is, for `if version`.
const HTCONDOR_VERSION: [i64; 3] = [25, 14, 1];

/// The value of an `if`/`elif` condition as HTCondor reads one: a number,
/// a boolean word, `defined NAME`, `version OP X.Y[.Z]`, any of them after
/// macro expansion and a leading `!`. Anything else ("complex
/// conditionals") HTCondor refuses, and so does Starling.
fn condition(text: &str, macros: &BTreeMap<String, String>) -> Result<bool, String> {
    let expanded = expand_simple(text, macros, 0);
    let t = expanded.trim();
    if let Some(rest) = t.strip_prefix('!') {
        return condition(rest, macros).map(|v| !v);
    }
    if let Ok(n) = t.parse::<f64>() {
        return Ok(n != 0.0);
    }
    if let Some(b) = parse_bool(t).filter(|_| !t.chars().all(|c| c.is_ascii_digit())) {
        return Ok(b);
    }
    let lower = t.to_ascii_lowercase();
    if let Some(name) = lower.strip_prefix("defined") {
        let name = name.trim();
        if name.is_empty() {
            return Ok(false);
        }
        if name.parse::<f64>().is_ok() || parse_bool(name).is_some() {
            return Ok(true);
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(format!(
                "{t:?} is not a valid if condition: defined takes a macro name, a boolean or a number"
            ));
        }
        return Ok(macros.get(name).is_some_and(|v| !v.is_empty()));
    }
    if let Some(rest) = lower.strip_prefix("version") {
        let rest = rest.trim();
        let (negated, rest) = match rest.strip_prefix('!') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let op_len = rest
            .find(|c: char| !"<=>".contains(c))
            .unwrap_or(rest.len());
        let (op, version) = rest.split_at(op_len);
        let parts: Vec<i64> = version
            .trim()
            .trim_start_matches(['v', 'V'])
            .split('.')
            .map(|p| p.trim().parse::<i64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("{t:?}: the version literal is invalid"))?;
        if parts.len() < 2 || parts.len() > 3 || parts[0] < 6 {
            return Err(format!("{t:?}: the version literal is invalid"));
        }
        let given = [
            parts[0],
            parts[1],
            parts.get(2).copied().unwrap_or(HTCONDOR_VERSION[2]),
        ];
        let ordering = HTCONDOR_VERSION.cmp(&given);
        use std::cmp::Ordering::*;
        let value = match op {
            ">" => ordering == Greater,
            ">=" => ordering != Less,
            "<" => ordering == Less,
            "<=" => ordering != Greater,
            "==" | "=" => ordering == Equal,
            _ => return Err(format!("{t:?}: {op:?} is not a comparison")),
        };
        return Ok(value != negated);
    }
    Err(format!(
        "{t:?} is not a valid if condition: complex conditionals are not supported (as in \
         HTCondor: use a number, true/false, `defined NAME` or `version >= X.Y`)"
    ))
}

/// `$(NAME)` and `$(NAME:default)` replaced by the macros set so far, for
/// `if` conditions.
fn expand_simple(text: &str, macros: &BTreeMap<String, String>, depth: usize) -> String {
    if depth > MAX_MACRO_DEPTH {
        return String::new();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("$(") {
        out.push_str(&rest[..at]);
        let body = &rest[at + 2..];
        let Some(end) = body.find(')') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let inner = &body[..end];
        let (name, default) = match inner.split_once(':') {
            Some((n, d)) => (n.trim(), Some(d)),
            None => (inner.trim(), None),
        };
        match macros.get(&name.to_ascii_lowercase()) {
            Some(v) => out.push_str(&expand_simple(v, macros, depth + 1)),
            None => out.push_str(default.unwrap_or("")),
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Joins continuation lines, drops comments and blank lines; each line
/// keeps the number it started on.
fn logical_lines(text: &str) -> Result<Vec<(usize, String)>, (usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (n, raw) in text.lines().enumerate() {
        let n = n + 1;
        let trimmed = raw.trim();
        if pending.is_none() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        let (start, mut acc) = pending.take().unwrap_or((n, String::new()));
        // As HTCondor joins a continued line: the next line's leading
        // blanks dropped, the blanks before the backslash kept, nothing
        // put between (`a\` then `  b` is `ab`).
        if let Some(head) = raw.trim_start().trim_end().strip_suffix('\\') {
            acc.push_str(head);
            if acc.len() > MAX_LINE_LEN {
                return Err((
                    start,
                    format!("the line is longer than {MAX_LINE_LEN} bytes"),
                ));
            }
            pending = Some((start, acc));
        } else {
            acc.push_str(trimmed);
            out.push((start, acc.trim().to_owned()));
        }
    }
    if let Some((start, acc)) = pending {
        out.push((start, acc.trim().to_owned()));
    }
    Ok(out)
}

fn parse_queue(rest: &str, _line: usize) -> Result<Statement, String> {
    let line = _line;
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(Statement::Queue {
            count: None,
            vars: Vec::new(),
            items: Items::None,
            slice: None,
            line,
        });
    }
    let lower = rest.to_ascii_lowercase();
    // Find the keyword that separates "[count] [vars]" from the items.
    let keyword = [" in ", " from ", " matching "]
        .iter()
        .filter_map(|k| {
            let padded = format!(" {lower} ");
            padded.find(k).map(|at| (at, *k))
        })
        .min_by_key(|(at, _)| *at);
    let Some((at, keyword)) = keyword else {
        // `queue N` (N may be a macro or an expression).
        if rest.split_whitespace().count() != 1 {
            return Err(format!(
                "`queue {rest}`: expected `queue [N] [VAR] in|from|matching ...`"
            ));
        }
        return Ok(Statement::Queue {
            count: Some(rest.to_owned()),
            vars: Vec::new(),
            items: Items::None,
            slice: None,
            line,
        });
    };
    let head = rest[..at.saturating_sub(0).min(rest.len())].trim();
    let tail = rest[(at + keyword.len() - 1).min(rest.len())..].trim();
    let (slice, tail) = match Slice::parse(tail)? {
        Some((slice, tail)) => (Some(slice), tail),
        None => (None, tail),
    };
    let mut words: Vec<&str> = head
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let count = match words.first() {
        Some(w) if w.starts_with(|c: char| c.is_ascii_digit() || c == '$') => {
            let c = w.to_string();
            words.remove(0);
            Some(c)
        }
        _ => None,
    };
    let mut vars = Vec::new();
    for w in words {
        if !w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || w.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!("{w:?} is not a variable name"));
        }
        vars.push(w.to_ascii_lowercase());
    }
    let items = match keyword.trim() {
        "in" => Items::List(list_items(tail, true)?),
        "from" => {
            if tail.starts_with('(') {
                Items::List(list_items(tail, false)?)
            } else if tail.is_empty() {
                return Err("`queue ... from` needs a file name or a ( list )".to_owned());
            } else if let Some(command) = tail.strip_suffix('|') {
                if command.trim().is_empty() {
                    return Err("`queue ... from |` names no program".to_owned());
                }
                Items::Command(command.trim().to_owned())
            } else {
                Items::File(tail.to_owned())
            }
        }
        _ => {
            let mut words: Vec<&str> = tail.split_whitespace().collect();
            let mut dirs = false;
            match words.first().map(|w| w.to_ascii_lowercase()) {
                Some(w) if w == "files" => {
                    words.remove(0);
                }
                Some(w) if w == "dirs" => {
                    dirs = true;
                    words.remove(0);
                }
                _ => {}
            }
            let patterns: Vec<String> = words
                .iter()
                .map(|w| w.trim_matches(|c| c == '(' || c == ')' || c == ','))
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            if patterns.is_empty() {
                return Err("`queue ... matching` needs a pattern".to_owned());
            }
            Items::Matching { patterns, dirs }
        }
    };
    Ok(Statement::Queue {
        count,
        vars,
        items,
        slice,
        line,
    })
}

/// The items of `( a, b, c )` (commas or new lines separate them when
/// `commas`, else each line is an item).
fn list_items(tail: &str, commas: bool) -> Result<Vec<String>, String> {
    let inner = match tail
        .strip_prefix('(')
        .and_then(|t| t.trim_end().strip_suffix(')'))
    {
        Some(inner) => inner,
        // `queue name in A, B, C`: the rest of the line is the list.
        None if commas && !tail.starts_with('(') => tail,
        None => return Err(format!("expected a ( list ), not {tail:?}")),
    };
    let items: Vec<String> = if commas {
        // `in`: items are separated by commas and white space.
        inner
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .flat_map(|l| l.split(|c: char| c == ',' || c.is_whitespace()))
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    } else {
        inner
            .lines()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty() && !s.starts_with('#'))
            .collect()
    };
    Ok(items)
}

/// The macros a value refers to (`$(NAME)` and `$(NAME:default)`), lower case.
fn referenced(value: &str, into: &mut std::collections::BTreeSet<String>) {
    let mut rest = value;
    while let Some(at) = rest.find("$(") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find(')') {
            let name = after[..end].split(':').next().unwrap_or("");
            into.insert(name.trim().to_ascii_lowercase());
            rest = &after[end..];
        } else {
            break;
        }
    }
}

impl Description {
    fn error(&self, line: usize, problem: impl Into<String>) -> SubmitError {
        let (file, line) = match (line / INCLUDE_LINE_BASE).checked_sub(1) {
            Some(n) => (
                self.includes.get(n).cloned().unwrap_or_default(),
                line % INCLUDE_LINE_BASE,
            ),
            None => (self.file.clone(), line),
        };
        SubmitError {
            file,
            line,
            problem: problem.into(),
        }
    }

    /// What the file says that Starling ignores, as warnings naming the
    /// line: keys that are neither a command, a `+Attr` nor a macro used
    /// anywhere (with a "did you mean"), and HTCondor commands Starling
    /// does not carry out.
    pub fn warnings(&self) -> &[SubmitError] {
        &self.warnings
    }

    /// Finds the keys [`Description::warnings`] reports.
    fn check_keys(&mut self) {
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

    /// One proc's ad from the commands as they stand at its queue line.
    fn job_ad(
        &self,
        m: &Macros<'_>,
        per: &BTreeMap<String, String>,
        cwd: &Path,
        env: &dyn Environment,
        line: usize,
        seen: &mut Seen,
    ) -> Result<ClassAd, SubmitError> {
        let mut ad = ClassAd::new();
        let get = |key: &str| m.expand_opt(key, per);
        let line_of = |key: &str| m.line_of(key).unwrap_or(line);
        let bad =
            |key: &str, problem: String| self.error(line_of(key), format!("{key}: {problem}"));
        let set = |ad: &mut ClassAd, name: &str, value: Value| {
            ad.insert(Name::known(name), Expr::Literal(value));
        };
        let set_str = |ad: &mut ClassAd, name: &str, value: &str| {
            ad.insert(
                Name::known(name),
                Expr::Literal(Value::String(value.into())),
            );
        };
        let set_expr =
            |ad: &mut ClassAd, key: &str, name: &str, text: &str| -> Result<(), SubmitError> {
                let expr = parse_expr(text)
                    .map_err(|e| bad(key, format!("{text:?} is not a ClassAd expression: {e}")))?;
                ad.insert(Name::known(name), expr);
                Ok(())
            };

        let universe = match get("universe")? {
            None => Universe::Vanilla,
            Some(u) => universe_of(&u).map_err(|why| {
                bad(
                    "universe",
                    format!(
                        "{u:?} is not supported (only vanilla, scheduler, local, java and \
                         parallel): {why}"
                    ),
                )
            })?,
        };
        let iwd = resolve(
            cwd,
            &get("initialdir")?
                .or(get("initial_dir")?)
                .unwrap_or_default(),
        );
        // The job's directory must exist: it is refused here, as
        // condor_submit refuses it, and never made by the agent.
        let iwd_fault = |problem: String| match ["initialdir", "initial_dir"]
            .into_iter()
            .find(|k| m.map.contains_key(*k))
        {
            Some(key) => bad(key, problem),
            None => self.error(line, format!("the working directory: {problem}")),
        };
        values::path(&iwd.to_string_lossy()).map_err(iwd_fault)?;
        Self::directory(env, &iwd, &mut seen.directories).map_err(iwd_fault)?;
        let Some(executable) = get("executable")? else {
            return Err(self.error(
                line,
                "no executable: say `executable = PROGRAM` before queue",
            ));
        };
        if executable.is_empty() {
            return Err(bad("executable", "is empty".to_owned()));
        }
        set_str(&mut ad, "Owner", &env.owner());
        set(&mut ad, "JobUniverse", Value::Int(universe.number()));
        // As condor_submit: any value but one that starts with `f` sends
        // the program, and only `false` is written.
        let transfer_executable =
            !get("transfer_executable")?.is_some_and(|t| t.trim_start().starts_with(['f', 'F']));
        // As condor_submit: a program sent with the job is named from the
        // submit directory, not from initialdir; one already on the
        // machines is named as given, found there.
        let cmd = if transfer_executable {
            resolve(cwd, &executable)
        } else {
            PathBuf::from(&executable)
        };
        set_str(&mut ad, "Cmd", &cmd.to_string_lossy());
        set_str(&mut ad, "Iwd", &iwd.to_string_lossy());
        // The file as it was named, as condor_submit writes it (the same
        // text `$(SUBMIT_FILE)` gives), when it is a name a path may hold.
        if values::path(&self.file).is_ok() {
            set_str(&mut ad, "SubmitFile", &self.file);
        }
        set(&mut ad, "QDate", Value::Int(env.now()));
        set(&mut ad, "JobStatus", Value::Int(1));

        if let Some(a) = get("arguments")?.or(get("args")?).filter(|a| !a.is_empty()) {
            let key = if m.map.contains_key("arguments") {
                "arguments"
            } else {
                "args"
            };
            let argv = if let Some(inner) = a.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                args::split_new(inner).map_err(|e| bad(key, e))?
            } else if a.starts_with('"') {
                return Err(bad(key, unterminated(&a)));
            } else {
                // A double quote in the old syntax is written `\"`: a
                // bare one is refused, as HTCondor refuses it (the value
                // was most likely meant in the new syntax).
                if args::has_bare_double_quote(&a) {
                    return Err(bad(
                        key,
                        format!(
                            "{a:?} holds a double quote that is not escaped: write \\\" for \
                             one, or put the whole value in double quotes (the new syntax, \
                             with single quotes around an argument that holds spaces)"
                        ),
                    ));
                }
                // HTCondor keeps old-syntax arguments as it splits them,
                // joined by one space (`\"` a plain double quote).
                let argv = args::split_old_args(&a);
                set_str(&mut ad, "Args", &argv.join(" "));
                argv
            };
            set_str(&mut ad, "Arguments", &args::join_new(&argv));
        } else {
            // HTCondor writes no arguments as an empty Arguments, but
            // old-syntax arguments that expand to blanks as an empty Args.
            let key = ["arguments", "args"]
                .into_iter()
                .find(|k| per.contains_key(*k) || m.map.contains_key(*k));
            let raw = match key.and_then(|k| per.get(k).or_else(|| m.map.get(k))) {
                Some(v) => m.expand(v, per, 0)?,
                None => String::new(),
            };
            if !raw.is_empty() {
                set_str(&mut ad, "Args", "");
            }
            set_str(&mut ad, "Arguments", "");
        }
        if universe == Universe::Java {
            // As HTCondor: the first argument names the class to run.
            let no_class = match ad.get("Arguments") {
                Some(Expr::Literal(Value::String(a))) => a.trim().is_empty(),
                _ => true,
            };
            if no_class {
                let key = if m.map.contains_key("args") {
                    "args"
                } else {
                    "arguments"
                };
                return Err(bad(
                    key,
                    "the java universe runs the class named by the first argument: \
                     say `arguments = MyClass ...`"
                        .to_owned(),
                ));
            }
            // The JVM's own arguments, old syntax (JavaVMArgs) or new
            // (JavaVMArguments), as HTCondor keeps them.
            let key = ["java_vm_args", "java_vm_arguments"]
                .into_iter()
                .find(|k| m.map.contains_key(*k));
            if let Some(key) = key {
                if let Some(a) = get(key)?.filter(|a| !a.is_empty()) {
                    if let Some(inner) = a.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                        let argv = args::split_new(inner).map_err(|e| bad(key, e))?;
                        set_str(&mut ad, "JavaVMArguments", &args::join_new(&argv));
                    } else if a.starts_with('"') || args::has_bare_double_quote(&a) {
                        return Err(bad(key, unterminated(&a)));
                    } else {
                        let argv = args::split_old_args(&a);
                        set_str(&mut ad, "JavaVMArgs", &argv.join(" "));
                    }
                }
            }
            if let Some(jars) = get("jar_files")?.filter(|j| !j.is_empty()) {
                // Sent with the job whatever should_transfer_files says:
                // they must be here now.
                for jar in jars.split(',').map(str::trim).filter(|j| !j.is_empty()) {
                    must_exist(env, &resolve(&iwd, jar)).map_err(|e| bad("jar_files", e))?;
                }
                set_str(&mut ad, "JarFiles", &jars);
            }
        }
        let mut environment: Vec<(String, String)> = Vec::new();
        // `env` (not `environment`) in the old syntax asks for the old
        // syntax in the ad, as HTCondor keeps it: `Env`, `;` between
        // pairs, and none of the submitter's variables whose value the
        // old syntax cannot hold (a `;` or a newline).
        let prefer_v1 = m.map.contains_key("env")
            && get("env")?.is_some_and(|e| !e.trim_start().starts_with('"'));
        // The submitter's variables HTCondor takes: none with a newline
        // in its value (nor, for the old syntax, a `;`).
        let importable = |v: &str| !(v.contains('\n') || (prefer_v1 && v.contains(';')));
        if let Some(g) = get("getenv")? {
            match submit_bool(&g) {
                Some(true) => {
                    environment.extend(env.vars().into_iter().filter(|(_, v)| importable(v)))
                }
                Some(false) => {}
                // Names to take and, after `!`, names to leave, with `*`
                // wildcards and in any case, as HTCondor 10 and later.
                None => {
                    let (mut take, mut leave) = (Vec::new(), Vec::new());
                    for p in g.split([',', ';', ' ', '\t', '\r', '\n']) {
                        match p.strip_prefix('!') {
                            Some(p) if !p.trim().is_empty() => leave.push(p.trim()),
                            Some(_) => {}
                            None if !p.is_empty() => take.push(p),
                            None => {}
                        }
                    }
                    environment.extend(env.vars().into_iter().filter(|(k, v)| {
                        importable(v)
                            && !leave.iter().any(|p| star_match(p, k))
                            && (take.is_empty() || take.iter().any(|p| star_match(p, k)))
                    }));
                }
            }
        }
        if let Some(e) = get("environment")?.or(get("env")?) {
            let key = if m.map.contains_key("environment") {
                "environment"
            } else {
                "env"
            };
            let pairs = if let Some(inner) = e.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                args::split_new(inner)
                    .and_then(args::env_pairs)
                    .map_err(|x| bad(key, x))?
            } else if e.starts_with('"') {
                return Err(bad(key, unterminated(&e)));
            } else {
                // Written in the new syntax only, as HTCondor does.
                args::split_old_env(&e).map_err(|x| bad(key, x))?
            };
            for (k, v) in pairs {
                environment.retain(|(old, _)| *old != k);
                environment.push((k, v));
            }
        }
        if prefer_v1 {
            let mut pairs: Vec<&(String, String)> = environment.iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            let v1: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            set_str(&mut ad, "Env", &v1.join(";"));
            set_str(&mut ad, "EnvDelim", ";");
        } else if !environment.is_empty() {
            set_str(&mut ad, "Environment", &args::join_env(&environment));
        }
        for (key, name) in [("input", "In"), ("output", "Out"), ("error", "Err")] {
            let v = get(key)?
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "/dev/null".to_owned());
            values::path(&v).map_err(|e| bad(key, e))?;
            if key == "input" && v != "/dev/null" {
                must_exist(env, &resolve(&iwd, &v)).map_err(|e| bad(key, e))?;
            }
            if key != "input" && v != "/dev/null" {
                // Output lands in a directory that must be there: the
                // agent makes none.
                let to = resolve(&iwd, &v);
                values::path(&to.to_string_lossy()).map_err(|e| bad(key, e))?;
                if let Some(parent) = to.parent() {
                    Self::directory(env, parent, &mut seen.directories).map_err(|e| bad(key, e))?;
                }
            }
            set_str(&mut ad, name, &v);
        }
        if let Some(log) = get("log")? {
            let to = resolve(&iwd, &log);
            values::path(&to.to_string_lossy()).map_err(|e| bad("log", e))?;
            if let Some(parent) = to.parent() {
                Self::directory(env, parent, &mut seen.directories).map_err(|e| bad("log", e))?;
            }
            set_str(&mut ad, "UserLog", &to.to_string_lossy());
        }
        // A file list may come in double quotes (`""`: no files), as
        // HTCondor reads it; an empty one is not given.
        let file_list = |key: &str| -> Result<Option<String>, SubmitError> {
            Ok(get(key)?.filter(|v| !v.is_empty()).map(|v| {
                let inner = v.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
                comma_list(inner.unwrap_or(&v))
            }))
        };
        let input_list = file_list("transfer_input_files")?.filter(|l| !l.is_empty());
        if let Some(list) = &input_list {
            // URLs are fetched where the job runs; files must be here now.
            for name in list
                .split(',')
                .filter(|n| !n.is_empty() && !n.contains("://"))
            {
                must_exist(env, &resolve(&iwd, name))
                    .map_err(|e| bad("transfer_input_files", e))?;
            }
            set_str(&mut ad, "TransferInput", list);
        }
        if let Some(list) = file_list("transfer_output_files")? {
            set_str(&mut ad, "TransferOutput", &list);
        }
        if let Some(list) = get("transfer_checkpoint_files")? {
            let list = comma_list(&list);
            // Checkpoint files are the sandbox's: named from inside it.
            for name in list.split(',').filter(|n| !n.is_empty()) {
                let inside = std::path::Path::new(name)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
                if !inside {
                    return Err(bad(
                        "transfer_checkpoint_files",
                        format!("{name:?} is not a path inside the job's sandbox"),
                    ));
                }
            }
            set_str(&mut ad, "TransferCheckpoint", &list);
        }
        if let Some(k) = get("checkpoint_replicas")? {
            let replicas = k
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|k| (1..=MAX_CHECKPOINT_REPLICAS).contains(k))
                .ok_or_else(|| {
                    bad(
                        "checkpoint_replicas",
                        format!("{k:?} is not a whole number from 1 to {MAX_CHECKPOINT_REPLICAS}"),
                    )
                })?;
            set(&mut ad, "CheckpointReplicas", Value::Int(replicas));
        }
        if !transfer_executable {
            set(&mut ad, "TransferExecutable", Value::Bool(false));
        }
        // A program sent with the job must be here; one that is already on
        // the machines (transfer_executable = false) need not.
        if transfer_executable {
            must_exist(env, &resolve(cwd, &executable)).map_err(|e| bad("executable", e))?;
        }
        // HTCondor's defaults: IF_NEEDED, and output back when the job
        // exits; ON_EXIT_OR_EVICT with no should_transfer_files given makes
        // it YES (the two are incompatible only when IF_NEEDED is said).
        let on_exit_or_evict = get("when_to_transfer_output")?
            .is_some_and(|w| w.eq_ignore_ascii_case("ON_EXIT_OR_EVICT"));
        let should = match get("should_transfer_files")? {
            None if on_exit_or_evict => "YES".to_owned(),
            None => "IF_NEEDED".to_owned(),
            Some(s) => {
                let mut up = s.to_ascii_uppercase();
                // HTCondor takes ALWAYS and booleans too.
                match parse_bool(&up) {
                    _ if up == "ALWAYS" => up = "YES".to_owned(),
                    Some(true) => up = "YES".to_owned(),
                    Some(false) => up = "NO".to_owned(),
                    None => {}
                }
                if !["YES", "NO", "IF_NEEDED"].contains(&up.as_str()) {
                    return Err(bad(
                        "should_transfer_files",
                        format!("{s:?} is not YES, NO or IF_NEEDED"),
                    ));
                }
                up
            }
        };
        set_str(&mut ad, "ShouldTransferFiles", &should);
        if should == "NO" && input_list.is_some() {
            return Err(bad(
                "transfer_input_files",
                "is set but should_transfer_files = NO: say YES or IF_NEEDED to send them"
                    .to_owned(),
            ));
        }
        // As HTCondor: a java job sends its class file and jar files as
        // input (never renamed) and runs the machine's `java`.
        let mut java_inputs = Vec::new();
        if universe == Universe::Java && should != "NO" {
            let mut list: Vec<String> = input_list
                .as_deref()
                .map(|l| l.split(',').map(str::to_owned).collect())
                .unwrap_or_default();
            let class = cmd.to_string_lossy().into_owned();
            if !list.contains(&class) {
                list.push(class.clone());
                java_inputs.push(class);
            }
            if let Some(jars) = get("jar_files")?.filter(|j| !j.is_empty()) {
                for jar in jars.split(',').map(str::trim).filter(|j| !j.is_empty()) {
                    list.push(jar.to_owned());
                    java_inputs.push(jar.to_owned());
                }
            }
            set_str(&mut ad, "TransferInput", &list.join(","));
            set_str(&mut ad, "Cmd", "java");
            set(&mut ad, "TransferExecutable", Value::Bool(false));
        }
        if let Some(w) = get("when_to_transfer_output")? {
            let up = w.to_ascii_uppercase();
            if !["ON_EXIT", "ON_EXIT_OR_EVICT", "ON_SUCCESS"].contains(&up.as_str()) {
                return Err(bad(
                    "when_to_transfer_output",
                    format!("{w:?} is not ON_EXIT or ON_EXIT_OR_EVICT"),
                ));
            }
            if up == "ON_EXIT_OR_EVICT" && should == "IF_NEEDED" {
                return Err(bad(
                    "when_to_transfer_output",
                    "ON_EXIT_OR_EVICT needs should_transfer_files = YES (as in HTCondor)"
                        .to_owned(),
                ));
            }
            set_str(&mut ad, "WhenToTransferOutput", &up);
        } else if should != "NO" {
            set_str(&mut ad, "WhenToTransferOutput", "ON_EXIT");
        }
        // Where output files not remapped come back (relative to Iwd; the
        // submit agent makes it, as HTCondor's shadow does).
        if let Some(dir) = get("output_directory")?.filter(|d| !d.trim().is_empty()) {
            let dir = dir.trim();
            values::path(dir).map_err(|e| bad("output_directory", e))?;
            set_str(&mut ad, "OutputDirectory", dir);
        }
        // Late materialization's limits, kept by the submit agent as the
        // schedd's factory would (starling_policies::materialize).
        for (keys, name) in [
            (&["max_materialize"][..], "JobMaterializeLimit"),
            (
                &["max_idle", "materialize_max_idle"][..],
                "JobMaterializeMaxIdle",
            ),
        ] {
            for key in keys {
                if let Some(v) = get(key)? {
                    let n: i64 = v
                        .trim()
                        .parse()
                        .map_err(|_| bad(key, format!("{v:?} is not a whole number of jobs")))?;
                    if !(1..=MAX_PROCS as i64).contains(&n) {
                        return Err(bad(key, format!("{n} is not within 1-{MAX_PROCS}")));
                    }
                    set(&mut ad, name, Value::Int(n));
                    break;
                }
            }
        }
        if universe == Universe::Parallel {
            parallel_attributes(&mut ad, &get, &bad)?;
        } else {
            // One machine per job, as HTCondor writes for every universe
            // but parallel.
            set(&mut ad, "MinHosts", Value::Int(1));
            set(&mut ad, "MaxHosts", Value::Int(1));
        }
        let notification = match get("notification")? {
            None => 0,
            Some(n) => match n.to_ascii_lowercase().as_str() {
                "never" => 0,
                "always" => 1,
                "complete" => 2,
                "error" => 3,
                _ => {
                    return Err(bad(
                        "notification",
                        format!("{n:?} is not Never, Always, Complete or Error"),
                    ))
                }
            },
        };
        set(&mut ad, "JobNotification", Value::Int(notification));
        // Requests: a number with an optional unit, or an expression.
        let cpus = get("request_cpus")?.unwrap_or_else(|| "1".to_owned());
        request(&mut ad, "RequestCpus", &cpus, None, values::CPUS)
            .map_err(|e| bad("request_cpus", e))?;
        let memory = get("request_memory")?.unwrap_or_else(|| "128".to_owned());
        // A list of sizes is HTCondor's retry ladder: the first is the
        // request, the rest the sizes of its retries.
        let ladder = retry_list(&memory).map(|first| {
            let rest = memory.split_once(',').map_or("", |(_, r)| r);
            (first.to_owned(), rest.to_owned())
        });
        request(
            &mut ad,
            "RequestMemory",
            ladder.as_ref().map_or(&memory, |(first, _)| first),
            Some(Unit::Mib),
            values::MEMORY,
        )
        .map_err(|e| bad("request_memory", e))?;
        // A job that goes over its memory runs again with more
        // (`retry_request_memory*`), as HTCondor writes it: only beside
        // a request that is an amount, not an expression.
        if let Some(Expr::Literal(Value::Int(request_mib))) = ad.get("RequestMemory").cloned() {
            let (key, list) = match &ladder {
                Some((_, rest)) => ("request_memory", Some(rest.clone())),
                None => match get("retry_request_memory")? {
                    Some(l) => ("retry_request_memory", Some(l)),
                    None => ("retry_request_memory_max", get("retry_request_memory_max")?),
                },
            };
            let increase = get("retry_request_memory_increase")?;
            let retry = retry::Memory {
                request_mib,
                key,
                list: list.as_deref(),
                increase: increase.as_deref(),
            };
            retry::memory(&mut ad, &retry).map_err(|(key, e)| bad(key, e))?;
        }
        // What the job brings, as condor_submit counts it: the executable
        // (sent or not), the input and transfer_input_files, each file
        // rounded up to a KiB; URLs are fetched where the job runs.
        let mut input_kib = seen.size_kib(env, resolve(&iwd, &cmd.to_string_lossy()));
        if let Some(stdin) = get("input")?.filter(|v| !v.is_empty() && !v.contains("://")) {
            input_kib = input_kib.saturating_add(seen.size_kib(env, resolve(&iwd, &stdin)));
        }
        if let Some(list) = &input_list {
            for name in list
                .split(',')
                .filter(|n| !n.is_empty() && !n.contains("://"))
            {
                input_kib = input_kib.saturating_add(seen.size_kib(env, resolve(&iwd, name)));
            }
        }
        for name in &java_inputs {
            input_kib = input_kib.saturating_add(seen.size_kib(env, resolve(&iwd, name)));
        }
        set(
            &mut ad,
            "TransferInputSizeMB",
            Value::Int(i64::try_from(input_kib.div_ceil(1024)).unwrap_or(i64::MAX)),
        );
        match get("request_disk")? {
            Some(disk) => {
                let disk = retry_list(&disk).map_or(disk.clone(), str::to_owned);
                request(&mut ad, "RequestDisk", &disk, Some(Unit::Kib), values::DISK)
                    .map_err(|e| bad("request_disk", e))?;
            }
            // HTCondor 25's default (JOB_DEFAULT_REQUESTDISK), kept as the
            // expression so that the ad reads as HTCondor's: 1.25 times
            // the input plus 1 MiB, at least 1 GiB, in KiB.
            None => set_expr(&mut ad, "request_disk", "RequestDisk", DEFAULT_REQUEST_DISK)?,
        }

        // Any other `request_<name>` asks for a custom machine resource
        // as HTCondor does: Request<name> in the job, a clause below.
        let mut custom = Vec::new();
        for key in m.map.keys() {
            let Some(tag) = key.strip_prefix("request_") else {
                continue;
            };
            if tag.len() < 2
                || tag.starts_with('_')
                || COMMANDS.contains(&key.as_str())
                || gpus::COMMANDS.contains(&key.as_str())
            {
                continue;
            }
            let Some(v) = get(key)? else { continue };
            let name = format!("Request{tag}");
            set_expr(&mut ad, key, &name, &v)?;
            custom.push((tag.to_owned(), name));
        }
        let user_requirements = get("requirements")?;
        let mut machine_refs = std::collections::BTreeSet::new();
        if let Some(r) = &user_requirements {
            let expr = parse_expr(r).map_err(|e| {
                bad(
                    "requirements",
                    format!("{r:?} is not a ClassAd expression: {e}"),
                )
            })?;
            machine_refs = crate::classad::references(&expr).of_target(&ad);
        }
        // HTCondor's resource clauses, as it adds them: a request that is
        // a literal amount no machine lacks (no disk, one core, 1 MiB of
        // memory) makes none; disk and cores none either when the user's
        // requirements look at the machine's own (TARGET.Disk, Cpus),
        // except that a disk request is still checked.
        let mut clauses = Vec::new();
        let more_than = |name: &str, floor: f64| match ad.get(name) {
            None => None,
            Some(Expr::Literal(Value::Int(n))) => Some(*n as f64 > floor),
            Some(Expr::Literal(Value::Real(n))) => Some(*n > floor),
            Some(_) => Some(true),
        };
        if machine_refs.contains("disk") {
            if ad.get("RequestDisk").is_some() {
                clauses.push("(TARGET.Disk >= RequestDisk)");
            }
        } else if more_than("RequestDisk", 0.0) == Some(true) {
            clauses.push("(TARGET.Disk >= RequestDisk)");
        }
        if more_than("RequestMemory", 1.0) == Some(true) {
            clauses.push("(TARGET.Memory >= RequestMemory)");
        }
        if !machine_refs.contains("cpus") && more_than("RequestCpus", 1.0) == Some(true) {
            clauses.push("(TARGET.Cpus >= RequestCpus)");
        }
        let mut clauses: Vec<String> = clauses.into_iter().map(str::to_owned).collect();
        for (tag, name) in &custom {
            if machine_refs.contains(&tag.to_ascii_lowercase()) {
                continue;
            }
            // A positive amount (or one known only at the machine) is
            // compared with the machine's; a non-empty text matched.
            match Evaluator::with_ads(Some(&ad), None)
                .eval_attr(Side::My, Name::known(name).folded())
            {
                Value::Int(n) if n <= 0 => {}
                Value::Real(n) if n <= 0.0 => {}
                Value::Int(_) | Value::Real(_) | Value::Undefined => {
                    clauses.push(format!("(TARGET.{tag} >= {name})"));
                }
                Value::String(text) if !text.is_empty() => {
                    clauses.push(format!("regexp({name}, TARGET.{tag})"));
                }
                _ => {}
            }
        }
        let mut resources = clauses.join(" && ");
        let mut gpu_values = Vec::with_capacity(gpus::COMMANDS.len());
        for key in gpus::COMMANDS {
            gpu_values.push(get(key)?);
        }
        let gpu_clause = gpus::job_attributes(&mut ad, &gpu_values, user_requirements.as_deref())
            .map_err(|(i, problem)| bad(gpus::COMMANDS[i], problem))?;
        if let Some(clause) = gpu_clause {
            if !resources.is_empty() {
                resources.push_str(" && ");
            }
            resources.push_str(&clause);
        }
        if universe == Universe::Java {
            // As HTCondor: the job needs a machine with a JVM.
            resources = if resources.is_empty() {
                "TARGET.HasJava".to_owned()
            } else {
                format!("TARGET.HasJava && {resources}")
            };
        }
        let requirements = match (&user_requirements, resources.is_empty()) {
            (Some(r), false) => format!("({r}) && {resources}"),
            (Some(r), true) => format!("({r})"),
            (None, false) => resources,
            (None, true) => "true".to_owned(),
        };
        set_expr(&mut ad, "requirements", "Requirements", &requirements)?;
        match get("rank")? {
            Some(r) => set_expr(&mut ad, "rank", "Rank", &r)?,
            None => set(&mut ad, "Rank", Value::Real(0.0)),
        }
        let prio = match get("priority")? {
            Some(p) => p
                .trim()
                .parse::<i64>()
                .map_err(|_| bad("priority", format!("{p:?} is not a whole number")))?,
            None => 0,
        };
        set(&mut ad, "JobPrio", Value::Int(prio));
        // nice_user puts the job in HTCondor's nice-user accounting group
        // (whose share the pool's priority factors make small).
        let nice = match get("nice_user")? {
            None => false,
            Some(n) => submit_bool(&n)
                .ok_or_else(|| bad("nice_user", format!("{n:?} is not true or false")))?,
        };
        let group = get("accounting_group")?.or(nice.then(|| "nice-user".to_owned()));
        let group_user = get("accounting_group_user")?;
        if let Some(g) = &group {
            set_str(&mut ad, "AcctGroup", g);
        }
        if let Some(u) = &group_user {
            set_str(&mut ad, "AcctGroupUser", u);
        } else if group.is_some() {
            set_str(&mut ad, "AcctGroupUser", &env.owner());
        }
        // HTCondor's accounting principal: the group and its user (the
        // owner unless given), whose usage fair share counts.
        if let Some(g) = &group {
            let user = group_user.clone().unwrap_or_else(|| env.owner());
            set_str(&mut ad, "AccountingGroup", &format!("{g}.{user}"));
        }
        if let Some(b) = get("batch_name")? {
            // Written without its quotes, as HTCondor writes it.
            let b = b
                .strip_prefix('"')
                .and_then(|b| b.strip_suffix('"'))
                .unwrap_or(&b);
            set_str(&mut ad, "JobBatchName", b);
        }
        if let Some(d) = get("description")? {
            set_str(&mut ad, "JobDescription", &d);
        }
        if let Some(n) = get("notify_user")? {
            set_str(&mut ad, "NotifyUser", &n);
        }
        for (key, name) in EXPRESSIONS {
            if let Some(v) = get(key)? {
                set_expr(&mut ad, key, name, &v)?;
            }
        }
        // max_retries, success_exit_code and retry_until as HTCondor
        // writes them: the job leaves the queue when it succeeds or has
        // run out of retries (2 unless max_retries says).
        let max_retries = get("max_retries")?;
        let success = get("success_exit_code")?;
        let retry_until = get("retry_until")?;
        if max_retries.is_some() || success.is_some() || retry_until.is_some() {
            let n = match &max_retries {
                None => 2,
                Some(n) => n
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| bad("max_retries", format!("{n:?} is not a whole number")))?,
            };
            set(&mut ad, "JobMaxRetries", Value::Int(n));
            let mut done = match &success {
                None => "0".to_owned(),
                Some(code) => {
                    let code = code.trim().parse::<i32>().map_err(|_| {
                        bad("success_exit_code", format!("{code:?} is not an exit code"))
                    })?;
                    set(&mut ad, "JobSuccessExitCode", Value::Int(code.into()));
                    "JobSuccessExitCode".to_owned()
                }
            };
            if let Some(until) = &retry_until {
                // An exit code that ends the retries, or a condition.
                let until = match until.trim().parse::<i32>() {
                    Ok(code) => format!("ExitCode =?= {code}"),
                    Err(_) => {
                        let expr = parse_expr(until).map_err(|e| {
                            bad(
                                "retry_until",
                                format!(
                                    "{until:?} is not an exit code or a ClassAd expression: {e}"
                                ),
                            )
                        })?;
                        or_operand(&expr, until)
                    }
                };
                done = format!("{done} || {until}");
            }
            let mut remove = format!("NumJobCompletions > JobMaxRetries || ExitCode =?= {done}");
            if let Some(user) = get("on_exit_remove")? {
                let expr = parse_expr(&user).map_err(|e| {
                    bad(
                        "on_exit_remove",
                        format!("{user:?} is not a ClassAd expression: {e}"),
                    )
                })?;
                remove = format!("{remove} || {}", or_operand(&expr, &user));
            }
            set_expr(&mut ad, "max_retries", "OnExitRemove", &remove)?;
            if get("on_exit_hold")?.is_none() {
                set(&mut ad, "OnExitHold", Value::Bool(false));
            }
        }
        if let Some(code) = get("checkpoint_exit_code")? {
            // HTCondor's name for it, beside the one Starling's execute
            // side reads.
            set_expr(
                &mut ad,
                "checkpoint_exit_code",
                "SuccessCheckpointExitCode",
                &code,
            )?;
        }
        // Held for the whole domain the job runs in by its share keeper
        // (see `limits`); in lower case and sorted, as HTCondor keeps them.
        if let Some(v) = get("concurrency_limits")? {
            let limits = limits::parse(&v).map_err(|e| bad("concurrency_limits", e))?;
            if !limits.is_empty() {
                set_str(&mut ad, "ConcurrencyLimits", &limits::show(&limits));
            }
        }
        for (key, name) in [("transfer_output_remaps", "TransferOutputRemaps")] {
            if let Some(v) = get(key)? {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(v);
                // Output goes into files the owner may write, not to URLs.
                if v.contains("://") {
                    return Err(bad(
                        key,
                        format!(
                            "{v:?} sends output to a URL; Starling places output only in \
                             files (a path, relative to initialdir or absolute)"
                        ),
                    ));
                }
                set_str(&mut ad, name, v);
            }
        }
        // Held when exceeded (the submit agent's job policy, HTCondor's
        // codes 46 and 47).
        for (key, name) in [
            ("allowed_job_duration", "AllowedJobDuration"),
            ("allowed_execute_duration", "AllowedExecuteDuration"),
        ] {
            if let Some(v) = get(key)? {
                set_expr(&mut ad, key, name, v.trim())?;
            }
        }
        if let Some(k) = get("kill_sig")? {
            let signal = kill_sig::parse(&k).map_err(|e| bad("kill_sig", e))?;
            set_str(&mut ad, "KillSig", signal);
        } else if universe != Universe::Vanilla {
            // HTCondor writes its default for every universe but vanilla.
            set_str(&mut ad, "KillSig", kill_sig::DEFAULT);
        }
        // Integer expressions of the job, as HTCondor writes them; -1: no
        // limit.
        for (key, name) in [
            ("max_transfer_input_mb", "MaxTransferInputMB"),
            ("max_transfer_output_mb", "MaxTransferOutputMB"),
        ] {
            if let Some(v) = get(key)? {
                set_expr(&mut ad, key, name, &v)?;
            }
        }
        if let Some(h) = get("hold")? {
            if submit_bool(&h).ok_or_else(|| bad("hold", format!("{h:?} is not true or false")))? {
                set(&mut ad, "JobStatus", Value::Int(5));
                // As HTCondor words it, with no subcode.
                set_str(&mut ad, "HoldReason", "submitted on hold at user's request");
                set(&mut ad, "HoldReasonCode", Value::Int(15));
            }
        }
        // +Attr and MY.Attr last: the user may override anything.
        for (key, _) in m.map.iter().filter(|(k, _)| k.starts_with("my.")) {
            let text = m.expand(&m.map[key], per, 0)?;
            let attr = &key[3..];
            let expr = parse_expr(&text).map_err(|e| bad(key, format!("{text:?}: {e}")))?;
            let name = Name::new(attr).map_err(|e| bad(key, e.to_string()))?;
            if ["clusterid", "procid"].contains(&attr.to_ascii_lowercase().as_str()) {
                return Err(bad(key, "belongs to the queue".to_owned()));
            }
            ad.insert(name, expr);
        }
        if let Err((attribute, problem)) = values::check_job(&ad) {
            let (key, shown) = responsible(m.map, attribute);
            let at = key.and_then(|k| m.line_of(&k)).unwrap_or(line);
            return Err(self.error(at, format!("{shown}: {problem}")));
        }
        input_over_its_limit(&mut ad);
        Ok(ad)
    }

    /// `Ok` when `dir` is a directory the submitter can reach (remembered
    /// in `seen`), else the problem in words.
    fn directory(
        env: &dyn Environment,
        dir: &Path,
        seen: &mut std::collections::BTreeSet<PathBuf>,
    ) -> Result<(), String> {
        if seen.contains(dir) {
            return Ok(());
        }
        match env.check_directory(dir) {
            Ok(()) => {
                seen.insert(dir.to_path_buf());
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
                "the directory {} does not exist; make it first (starling submit, like \
                 condor_submit, does not create it)",
                dir.display()
            )),
            Err(e) => Err(format!(
                "the directory {} cannot be used: {e}",
                dir.display()
            )),
        }
    }
}

/// A job whose input (`TransferInputSizeMB`, measured at submit) is more
/// than its `MaxTransferInputMB` (an integer expression of the job; -1 or
/// anything else: no limit) is queued held, with HTCondor's code 32 and
/// reason, as the schedd holds it at submit.
fn input_over_its_limit(ad: &mut ClassAd) {
    let eval = |name: &str| {
        ad.get(name)
            .map(|e| Evaluator::with_ads(Some(ad), None).eval(e))
    };
    let (Some(Value::Int(max)), Some(Value::Int(size))) =
        (eval("MaxTransferInputMB"), eval("TransferInputSizeMB"))
    else {
        return;
    };
    if max >= 0 && size > max {
        let reason = format!(
            "TransferInputSizeMB ({size}) is greater than MAX_TRANSFER_INPUT_MB ({max}) at \
             submit time"
        );
        for (name, value) in [
            ("JobStatus", Value::Int(5)),
            ("HoldReason", Value::String(reason.into())),
            ("HoldReasonCode", Value::Int(32)),
            ("HoldReasonSubCode", Value::Int(0)),
        ] {
            ad.insert(Name::known(name), Expr::Literal(value));
        }
    }
}

/// The submit commands that set each job attribute [`values`] checks.
const ATTRIBUTE_COMMANDS: &[(&str, &[&str])] = &[
    ("Iwd", &["initialdir", "initial_dir"]),
    ("Cmd", &["executable"]),
    ("In", &["input"]),
    ("Out", &["output"]),
    ("Err", &["error"]),
    ("UserLog", &["log"]),
    ("TransferInput", &["transfer_input_files"]),
    ("TransferOutput", &["transfer_output_files"]),
    ("TransferCheckpoint", &["transfer_checkpoint_files"]),
    ("JobBatchName", &["batch_name"]),
    ("AcctGroup", &["accounting_group"]),
    ("AcctGroupUser", &["accounting_group_user"]),
    (
        "AccountingGroup",
        &["accounting_group_user", "accounting_group"],
    ),
    ("NotifyUser", &["notify_user"]),
    ("JobDescription", &["description"]),
    ("HoldReason", &["hold"]),
    ("Arguments", &["arguments", "args"]),
    ("Args", &["arguments", "args"]),
    ("KillSig", &["kill_sig"]),
    ("RequestCpus", &["request_cpus"]),
    ("RequestMemory", &["request_memory"]),
    ("RequestDisk", &["request_disk"]),
];

/// Who set job attribute `attribute` in the file: the `+Attr` that
/// overrode it, else its command; the key as stored (for its line) and as
/// shown.
fn responsible(map: &BTreeMap<String, String>, attribute: &str) -> (Option<String>, String) {
    if let Some(key) = map.keys().find(|k| {
        k.strip_prefix("my.")
            .is_some_and(|a| a.eq_ignore_ascii_case(attribute))
    }) {
        return (Some(key.clone()), format!("+{}", &key[3..]));
    }
    ATTRIBUTE_COMMANDS
        .iter()
        .find(|(a, _)| *a == attribute)
        .and_then(|(_, commands)| commands.iter().find(|c| map.contains_key(**c)))
        .map_or((None, attribute.to_owned()), |c| {
            (Some((*c).to_owned()), (*c).to_owned())
        })
}

#[derive(Clone, Copy)]
enum Unit {
    Mib,
    Kib,
}

/// Sets a request: `2G`, `512MB`, `100` (in the default unit) or an
/// expression. An amount, or an expression of constants, must be one
/// [`values::amount`] allows for `resource`; `nan` and `inf` are refused by
/// name (they would be attribute references that never evaluate).
fn request(
    ad: &mut ClassAd,
    name: &str,
    text: &str,
    unit: Option<Unit>,
    resource: values::Resource,
) -> Result<(), String> {
    let t = text.trim();
    if values::names_non_finite(t) {
        return Err(format!(
            "{t:?} is not a finite number; give an amount such as 1024"
        ));
    }
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits_end);
    if !number.is_empty() {
        if let (Ok(n), Some(unit)) = (number.parse::<f64>(), unit) {
            let kib = match suffix.trim().to_ascii_uppercase().as_str() {
                "" => match unit {
                    Unit::Mib => n * 1024.0,
                    Unit::Kib => n,
                },
                "K" | "KB" | "KIB" => n,
                "M" | "MB" | "MIB" => n * 1024.0,
                "G" | "GB" | "GIB" => n * 1024.0 * 1024.0,
                "T" | "TB" | "TIB" => n * 1024.0 * 1024.0 * 1024.0,
                _ => f64::NAN,
            };
            if !kib.is_nan() {
                let value = match unit {
                    Unit::Mib => (kib / 1024.0).ceil(),
                    Unit::Kib => kib.ceil(),
                };
                values::amount(resource, t, value)?;
                ad.insert(Name::known(name), Expr::Literal(Value::Int(value as i64)));
                return Ok(());
            }
        } else if suffix.is_empty() {
            let n: f64 = number
                .parse()
                .map_err(|_| format!("{t:?} is not a number"))?;
            values::amount(resource, t, n)?;
        }
    }
    let expr =
        parse_expr(t).map_err(|e| format!("{t:?} is neither an amount nor an expression: {e}"))?;
    values::constant_request(resource, t, &expr)?;
    ad.insert(Name::known(name), expr);
    Ok(())
}

/// Why a value that opens with a double quote (the new syntax of
/// `arguments` and `environment`) is refused when it does not close with
/// one.
fn unterminated(value: &str) -> String {
    format!(
        "{value:?} opens with a double quote but does not end with one (an unterminated \
         quoted string); close it, or drop the opening quote for the old syntax"
    )
}

/// `text` (parsed as `expr`) as an operand of `||`: in parentheses when
/// its own operator binds more loosely (a `?:`), as HTCondor wraps it.
fn or_operand(expr: &Expr, text: &str) -> String {
    if matches!(expr, Expr::Cond(..)) {
        format!("({})", text.trim())
    } else {
        text.trim().to_owned()
    }
}

/// `Ok` when `path` is there for the submitter; a message naming it when
/// nothing is (other problems are found when the job's files are opened).
fn must_exist(env: &dyn Environment, path: &Path) -> Result<(), String> {
    match env.check_exists(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{} does not exist", path.display()))
        }
        _ => Ok(()),
    }
}

/// A boolean command's value as HTCondor reads it: `true`, `false`, `1`
/// or `0` in any case, else a ClassAd expression that evaluates to a
/// boolean or a number (`yes` is neither: `nice_user = yes` is refused,
/// `getenv = yes` names a variable).
fn submit_bool(v: &str) -> Option<bool> {
    let t = v.trim();
    let lower = t.to_ascii_lowercase();
    for (word, b) in [("true", true), ("1", true), ("false", false), ("0", false)] {
        if lower
            .strip_prefix(word)
            .is_some_and(|rest| rest.trim().is_empty())
        {
            return Some(b);
        }
    }
    let expr = parse_expr(t).ok()?;
    let empty = ClassAd::new();
    match Evaluator::with_ads(Some(&empty), None).eval_on(Side::My, &expr) {
        Value::Bool(b) => Some(b),
        Value::Int(n) => Some(n != 0),
        Value::Real(r) => Some(r != 0.0),
        _ => None,
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "t" | "y" | "1" => Some(true),
        "false" | "no" | "f" | "n" | "0" => Some(false),
        _ => None,
    }
}

fn comma_list(list: &str) -> String {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

fn resolve(base: &Path, path: &str) -> PathBuf {
    if path.is_empty() {
        base.to_path_buf()
    } else if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        base.join(path)
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

/// The macros at one queue statement.
/// What one expansion has looked at already, for all its procs: the
/// directories found there, the sizes of inputs (KiB), and how many
/// directory entries it has read to size them.
#[derive(Default)]
struct Seen {
    directories: std::collections::BTreeSet<PathBuf>,
    sizes: BTreeMap<PathBuf, u64>,
    entries_read: usize,
}

impl Seen {
    fn size_kib(&mut self, env: &dyn Environment, path: PathBuf) -> u64 {
        if let Some(kib) = self.sizes.get(&path) {
            return *kib;
        }
        let left = MAX_SIZED_ENTRIES.saturating_sub(self.entries_read);
        let (kib, read) = env.size_kib(&path, left);
        self.entries_read = self.entries_read.saturating_add(read);
        self.sizes.insert(path, kib);
        kib
    }
}

struct Macros<'a> {
    map: &'a BTreeMap<String, String>,
    cwd: &'a Path,
    env: &'a dyn Environment,
    file: &'a Description,
    line: usize,
}

impl Macros<'_> {
    fn line_of(&self, key: &str) -> Option<usize> {
        // The latest setting before this queue statement, in file order
        // (lines of included files are offset, so order is what counts).
        let statements = &self.file.statements;
        let end = statements
            .iter()
            .position(|s| matches!(s, Statement::Queue { line, .. } if *line == self.line))
            .unwrap_or(statements.len());
        statements[..end].iter().rev().find_map(|s| match s {
            Statement::Set { key: k, line, .. } if k == key => Some(*line),
            _ => None,
        })
    }

    /// A macro's raw value: the proc's own (queue variables, Process, …)
    /// first, then the file's.
    fn lookup(&self, lower: &str, per: &BTreeMap<String, String>) -> Option<String> {
        per.get(lower).or_else(|| self.map.get(lower)).cloned()
    }

    /// The value of `name` for a function argument: the macro of that
    /// name, expanded, else the text itself.
    fn argument(
        &self,
        name: &str,
        per: &BTreeMap<String, String>,
        depth: usize,
    ) -> Result<String, SubmitError> {
        let name = name.trim();
        match self.lookup(&name.to_ascii_lowercase(), per) {
            Some(v) => self.expand(&v, per, depth + 1),
            None => self.expand(name, per, depth + 1),
        }
    }

    /// One macro function, `$NAME(body)`.
    fn call(
        &self,
        function: functions::Function,
        name: &str,
        body: &str,
        per: &BTreeMap<String, String>,
        depth: usize,
    ) -> Result<String, SubmitError> {
        use functions::Function as F;
        let err = |p: String| self.file.error(self.line, format!("${name}({body}): {p}"));
        Ok(match function {
            F::Env => {
                let (var, default) = match body.split_once(':') {
                    Some((v, d)) => (v.trim(), Some(d)),
                    None => (body.trim(), None),
                };
                match (self.env.var(var), default) {
                    (Some(v), _) => v,
                    (None, Some(d)) => self.expand(d, per, depth + 1)?,
                    // HTCondor's word for a variable that is not set.
                    (None, None) => "UNDEFINED".to_owned(),
                }
            }
            F::Int | F::Real => {
                let (arg, format) = match body.split_once(',') {
                    Some((a, f)) => (a, Some(f)),
                    None => (body, None),
                };
                let text = self.argument(arg, per, depth)?;
                if function == F::Int {
                    let n = functions::integer(&text)
                        .ok_or_else(|| err(format!("{text:?} does not evaluate to an integer")))?;
                    match format {
                        None => n.to_string(),
                        Some(f) => functions::format_int(f, n)
                            .ok_or_else(|| err(format!("{f:?} is not a valid format")))?,
                    }
                } else {
                    let r = functions::real(&text)
                        .ok_or_else(|| err(format!("{text:?} does not evaluate to a real")))?;
                    match format {
                        None => functions::general(r, 16),
                        Some(f) => functions::format_real(f, r)
                            .ok_or_else(|| err(format!("{f:?} is not a valid format")))?,
                    }
                }
            }
            F::Substr => {
                let mut args = body.splitn(3, ',');
                let target = args.next().unwrap_or("").trim();
                let start = args
                    .next()
                    .ok_or_else(|| err("no length specified".to_owned()))?;
                let start = functions::integer(&self.argument(start, per, depth)?)
                    .ok_or_else(|| err(format!("{start:?} is not a start index")))?;
                let length = match args.next() {
                    Some(l) => Some(
                        functions::integer(&self.argument(l, per, depth)?)
                            .ok_or_else(|| err(format!("{l:?} is not a length")))?,
                    ),
                    None => None,
                };
                let text: Vec<char> = match self.lookup(&target.to_ascii_lowercase(), per) {
                    Some(v) => self.expand(&v, per, depth + 1)?.chars().collect(),
                    None => Vec::new(),
                };
                let n = text.len() as i64;
                let from = if start < 0 { n + start } else { start }.clamp(0, n);
                let left = n - from;
                let take = match length {
                    None => left,
                    Some(l) if l < 0 => (left + l).max(0),
                    Some(l) => l.min(left),
                };
                text[from as usize..(from + take) as usize].iter().collect()
            }
            F::Choice => {
                let (index, list) = body
                    .split_once(',')
                    .ok_or_else(|| err("no list".to_owned()))?;
                let index_text = self.argument(index, per, depth)?;
                let index = functions::integer(&index_text)
                    .filter(|i| *i >= 0)
                    .ok_or_else(|| err(format!("{index_text:?} is not an index")))?;
                let list = if list.contains(',') {
                    list.to_owned()
                } else {
                    let name = list.trim();
                    let v = self
                        .lookup(&name.to_ascii_lowercase(), per)
                        .ok_or_else(|| err(format!("no list named {name:?}")))?;
                    self.expand(&v, per, depth + 1)?
                };
                let item = functions::nth_item(&list, index as usize)
                    .ok_or_else(|| err(format!("index {index} is out of range")))?;
                self.expand(&item, per, depth + 1)?
            }
            F::RandomChoice => {
                let items: Vec<&str> = body.split(',').collect();
                let pick = functions::random_below(items.len() as u64) as usize;
                self.expand(items[pick].trim(), per, depth + 1)?
            }
            F::RandomInteger => {
                let args: Vec<String> = body
                    .split(',')
                    .map(|a| self.expand(a.trim(), per, depth + 1))
                    .collect::<Result<_, _>>()?;
                let num = |i: usize| args.get(i).and_then(|a| functions::integer(a));
                let (Some(min), Some(max)) = (num(0), num(1)) else {
                    return Err(err("needs a minimum and a maximum".to_owned()));
                };
                let step = num(2).unwrap_or(1).max(1);
                if max < min {
                    return Err(err(format!("the maximum {max} is below the minimum {min}")));
                }
                // In i128: any two i64 bounds fit.
                let (min, max, step) = (i128::from(min), i128::from(max), i128::from(step));
                let choices = u64::try_from((max - min) / step + 1).unwrap_or(u64::MAX);
                (min + step * i128::from(functions::random_below(choices))).to_string()
            }
            F::File => {
                let path = self.argument(body, per, depth)?;
                functions::file_parts(&name[1..], &path, self.cwd)
            }
            F::Dirname => {
                let path = self.argument(body, per, depth)?;
                functions::file_parts("p", &path, self.cwd)
            }
            F::Basename => {
                let (arg, suffix) = match body.rsplit_once(',') {
                    Some((a, s)) if !s.contains(')') => (a, Some(s)),
                    _ => (body, None),
                };
                let path = self.argument(arg, per, depth)?;
                functions::basename(&path, suffix)
            }
            F::String => {
                let (arg, format) = match body.split_once(',') {
                    Some((a, f)) => (a, Some(f)),
                    None => (body, None),
                };
                let value = functions::string(&self.argument(arg, per, depth)?);
                match format {
                    None => value,
                    Some(f) => functions::format_string(f, &value)
                        .ok_or_else(|| err(format!("{f:?} is not a valid format")))?,
                }
            }
            F::Eval => {
                // What does not parse is the expanded text when there was
                // a macro in it, else nothing (HTCondor's rule).
                let raw = self
                    .lookup(&body.trim().to_ascii_lowercase(), per)
                    .unwrap_or_else(|| body.to_owned());
                let text = self.expand(&raw, per, depth + 1)?;
                functions::evaluate(&text).unwrap_or(if raw.contains('$') {
                    text
                } else {
                    String::new()
                })
            }
        })
    }

    /// The expanded value of command `key`, if set.
    fn expand_opt(
        &self,
        key: &str,
        per: &BTreeMap<String, String>,
    ) -> Result<Option<String>, SubmitError> {
        // A queue variable named like a command is that command for its
        // item (`queue arguments from args.txt`).
        match per.get(key).or_else(|| self.map.get(key)) {
            None => Ok(None),
            Some(v) => self.expand(v, per, 0).map(|s| Some(s.trim().to_owned())),
        }
    }

    fn expand(
        &self,
        value: &str,
        per: &BTreeMap<String, String>,
        depth: usize,
    ) -> Result<String, SubmitError> {
        let err = |p: String| self.file.error(self.line, p);
        if depth > MAX_MACRO_DEPTH {
            return Err(err(format!(
                "macros nest deeper than {MAX_MACRO_DEPTH} (a macro that refers to itself?) in {value:?}"
            )));
        }
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at..];
            if after.starts_with("$$(") {
                let end = after
                    .find(')')
                    .ok_or_else(|| err(format!("unclosed $$( in {value:?}")))?;
                out.push_str(&after[..=end]);
                rest = &after[end + 1..];
            } else if let Some(body) = after.strip_prefix("$(") {
                let end = body
                    .find(')')
                    .ok_or_else(|| err(format!("unclosed $( in {value:?}")))?;
                let inner = &body[..end];
                let (name, default) = match inner.split_once(':') {
                    Some((n, d)) => (n.trim(), Some(d)),
                    None => (inner.trim(), None),
                };
                let lower = name.to_ascii_lowercase();
                let found = self.lookup(&lower, per);
                let text = match (found, default) {
                    (Some(v), _) => self.expand(&v, per, depth + 1)?,
                    (None, Some(d)) => self.expand(d, per, depth + 1)?,
                    (None, None) if lower == "dollar" => "$".to_owned(),
                    // An undefined macro is empty, as in condor_submit.
                    (None, None) => String::new(),
                };
                out.push_str(&text);
                rest = &body[end + 1..];
            } else if let Some((function, name, body, tail)) = function_call(after) {
                let text = self.call(function, name, body, per, depth)?;
                out.push_str(&text);
                rest = tail;
            } else {
                out.push('$');
                rest = &after[1..];
            }
            if out.len() > MAX_VALUE_LEN {
                return Err(err(format!("a value expands past {MAX_VALUE_LEN} bytes")));
            }
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The first size of a list of sizes (`1024, 2048, 4096`, HTCondor's
/// retry ladder for `request_memory` and `request_disk`), if `text` is one.
fn retry_list(text: &str) -> Option<&str> {
    let is_size = |s: &str| {
        let s = s.trim();
        let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic()).trim();
        !digits.is_empty() && digits.parse::<f64>().is_ok()
    };
    (text.contains(',') && text.split(',').all(is_size))
        .then(|| text.split(',').next().unwrap_or("").trim())
}

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
fn parallel_attributes(
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
enum Universe {
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
    fn number(self) -> i64 {
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
fn universe_of(universe: &str) -> Result<Universe, &'static str> {
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

/// `value` with its references to `key` itself (`$(key)`, any case)
/// replaced by `previous` (empty when there is none).
fn self_reference(key: &str, value: &str, previous: Option<&str>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("$(") {
        let body = &rest[at + 2..];
        let name_end = body.find([')', ':']).unwrap_or(body.len());
        if body[..name_end].trim().eq_ignore_ascii_case(key) && body[name_end..].starts_with(')') {
            out.push_str(&rest[..at]);
            out.push_str(previous.unwrap_or(""));
            rest = &body[name_end + 1..];
        } else {
            out.push_str(&rest[..at + 2]);
            rest = body;
        }
    }
    out.push_str(rest);
    out
}

/// `$NAME(body)` at the start of `text`, when NAME is a macro function:
/// the function, its name, its body and the text after it. The body ends
/// at the first `)`, as in HTCondor (so `$EVAL(f(x))` is `$EVAL(f(x)`
/// then `)`).
fn function_call(text: &str) -> Option<(functions::Function, &str, &str, &str)> {
    let rest = text.strip_prefix('$')?;
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|&n| n > 0 && rest[n..].starts_with('('))?;
    let name = &rest[..name_len];
    let function = functions::Function::named(name)?;
    let open = name_len + 1;
    let close = open + rest[open..].find(')')?;
    Some((function, name, &rest[open..close], &rest[close + 1..]))
}

/// A value's ClassAd text, for messages.
pub fn show(expr: &Expr) -> String {
    unparse(expr)
}

#[cfg(test)]
mod tests;
