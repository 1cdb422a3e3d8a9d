//! The submitter's world as a submit sees it: the [`Environment`] trait
//! (variables, files, globs, directories, sizes, the owner, the clock, and
//! running the programs a file names), the real one
//! ([`SystemEnvironment`]), the one that lets programs run ([`Allowing`],
//! with [`run_command`]), and the name patterns of `queue ... matching` and
//! `getenv` ([`glob_match`]).
//!
//! It owns every access to the outside world a submit makes; it knows
//! nothing of the submit language: no statements, macros or job ads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::description::{MAX_FILE_LEN, MAX_ITEMS_FILE_LEN};

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
pub(super) fn star_match(pattern: &str, name: &str) -> bool {
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

/// `path` as the submitter means it from `base`: itself when absolute,
/// `base` when empty, else joined.
pub(super) fn resolve(base: &Path, path: &str) -> PathBuf {
    if path.is_empty() {
        base.to_path_buf()
    } else if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        base.join(path)
    }
}
