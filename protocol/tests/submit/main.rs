//! Differential suite of the submit language against HTCondor's own submit
//! code.
//!
//! Every file of `corpus/` (written by `make_corpus.py`) is turned into job
//! ads by Starling ([`submit::parse`] + [`submit::Description::expand`])
//! and by HTCondor 25 (`oracle.py`: the pinned `htcondor` wheel's
//! `SubmitHash::make_job_ad`, as `condor_submit -dry-run`), both in the
//! corpus directory. Per file they must agree on: accepted or refused;
//! the number of jobs; and, job by job, the attributes of [`ATTRIBUTES`]
//! plus the file's own `+Attr`s, compared as canonical ClassAd text.
//!
//! `differences.txt` lists every difference still seen, one per line with
//! its class (a deliberate difference, with its reason, or work not done
//! yet). An unlisted difference fails the test, and so does a listed one
//! that no longer differs, so the list stays true. The agreement figures
//! are printed, then how many files show each class of difference (an
//! attribute, or what Starling refused):
//!
//!     cargo test -p starling-protocol --test submit -- --nocapture
//!
//! `STARLING_SUBMIT_BLESS=1` rewrites `differences.txt` from what is seen
//! (keeping the classes of lines already there).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value as J};
use starling_protocol::classad::{parse_expr, unparse, ClassAd};
use starling_protocol::submit::{self, SystemEnvironment};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/submit");

/// The job attributes compared (HTCondor's names), besides the `+Attr`s
/// each file sets.
const ATTRIBUTES: &[&str] = &[
    "Cmd",
    "Args",
    "Arguments",
    "Environment",
    "Env",
    "In",
    "Out",
    "Err",
    "UserLog",
    "Iwd",
    "JobUniverse",
    "JavaVMArgs",
    "JavaVMArguments",
    "JarFiles",
    "RequestCpus",
    "RequestMemory",
    "RequestDisk",
    "TransformOnEvict",
    "TransformBody_RequestMemory",
    "RetryRequestMemory",
    "MaxRequestMemory",
    "NextRequestMemory",
    "TransferInputSizeMB",
    "MaxTransferInputMB",
    "MaxTransferOutputMB",
    "RequestGPUs",
    "Requirements",
    "Rank",
    "JobPrio",
    "JobStatus",
    "TransferInput",
    "TransferOutput",
    "TransferOutputRemaps",
    "ShouldTransferFiles",
    "WhenToTransferOutput",
    "TransferExecutable",
    "PeriodicHold",
    "PeriodicRelease",
    "PeriodicRemove",
    "OnExitHold",
    "OnExitRemove",
    "OnExitHoldReason",
    "PeriodicHoldReason",
    "JobMaxRetries",
    "SuccessCheckpointExitCode",
    "TransferCheckpoint",
    "AcctGroup",
    "AcctGroupUser",
    "AccountingGroup",
    "JobBatchName",
    "NotifyUser",
    "JobNotification",
    "KillSig",
    "JobMaxVacateTime",
    "ConcurrencyLimits",
    "NiceUser",
    "MaxHosts",
    "MinHosts",
    "EnvDelim",
    "JobSuccessExitCode",
    "HoldReason",
    "HoldReasonCode",
    "HoldReasonSubCode",
    "JobDescription",
];

/// The oracle's Python: `STARLING_ORACLE_PYTHON`, else what
/// `scripts/oracle-venv.sh` installs (it prints the path last).
fn python() -> PathBuf {
    if let Ok(p) = std::env::var("STARLING_ORACLE_PYTHON") {
        return p.into();
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/oracle-venv.sh");
    let out = Command::new("bash")
        .arg(script)
        .stderr(Stdio::inherit())
        .output()
        .expect("running scripts/oracle-venv.sh");
    assert!(
        out.status.success(),
        "scripts/oracle-venv.sh failed: the HTCondor oracle is required"
    );
    String::from_utf8(out.stdout)
        .expect("utf-8 path")
        .lines()
        .last()
        .expect("venv python path")
        .trim()
        .into()
}

/// HTCondor's answer for every file, in order.
fn oracle(dir: &Path, files: &[String]) -> Vec<J> {
    let mut child = Command::new(python())
        .arg(format!("{DIR}/oracle.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting oracle.py");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let requests: String = files
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{}\n", json!({"id": i, "dir": dir, "file": f})))
        .collect();
    let answers = std::thread::scope(|s| {
        s.spawn(move || {
            stdin.write_all(requests.as_bytes()).expect("to oracle");
        });
        stdout
            .lines()
            .map(|l| serde_json::from_str::<J>(&l.expect("from oracle")).expect("json"))
            .collect::<Vec<_>>()
    });
    let status = child.wait().expect("oracle exit");
    assert!(status.success(), "oracle.py failed: {status}");
    assert_eq!(answers.len(), files.len(), "the oracle answered every file");
    answers
}

/// A value's canonical text: ClassAd text parsed and unparsed by Starling
/// (so spacing and quoting do not count), else the text itself.
fn canon(text: &str) -> String {
    parse_expr(text)
        .map(|e| unparse(&e))
        .unwrap_or_else(|_| text.to_owned())
}

/// The top-level `&&` clauses of a Requirements text, canonical, sorted;
/// HTCondor's clauses about the submitting machine's platform and shared
/// file system dropped (a deliberate difference: see differences.txt).
fn requirement_clauses(text: &str) -> String {
    fn split(e: &starling_protocol::classad::Expr, out: &mut Vec<String>) {
        use starling_protocol::classad::{BinaryOp, Expr};
        match e {
            Expr::Binary(BinaryOp::And, pair) => {
                split(&pair[0], out);
                split(&pair[1], out);
            }
            Expr::Paren(inner) => match **inner {
                Expr::Binary(BinaryOp::And, _) => split(inner, out),
                Expr::Binary(BinaryOp::Or, _) => out.push(format!("({})", unparse(inner))),
                _ => out.push(unparse(inner)),
            },
            other => out.push(unparse(other)),
        }
    }
    let Ok(e) = parse_expr(text) else {
        return text.to_owned();
    };
    let mut clauses = Vec::new();
    split(&e, &mut clauses);
    // Deliberate: Starling matches no platform of the submitting machine
    // (Arch, OpSys), has no shared file system (FileSystemDomain), and
    // always transfers files, so its machines advertise no HasFileTransfer.
    let platform = [
        "TARGET.Arch",
        "TARGET.OpSys",
        "TARGET.FileSystemDomain",
        "TARGET.HasFileTransfer",
    ];
    clauses.retain(|c| !platform.iter().any(|p| c.contains(p)));
    // With no clause left Starling writes `true`; HTCondor always has the
    // platform's.
    clauses.retain(|c| c != "true");
    // HTCondor 25.12's disk clause leaves the check to startds of 25.12 and
    // later; Starling's matcher checks the disk itself.
    for c in &mut clauses {
        if c.starts_with("(versionGE(split(TARGET.CondorVersion)")
            && c.ends_with("|| (TARGET.Disk >= RequestDisk))")
        {
            *c = "TARGET.Disk >= RequestDisk".to_owned();
        }
    }
    clauses.sort();
    clauses.join(" && ")
}

fn starling_ads(dir: &Path, file: &str, checks: bool) -> Result<Vec<ClassAd>, String> {
    let text = std::fs::read_to_string(dir.join(file)).map_err(|e| e.to_string())?;
    let system = SystemEnvironment {
        vars: std::env::vars().collect(),
        owner: "alice".to_owned(),
    };
    let unchecked = Unchecked(system.clone());
    let env: &dyn submit::Environment = if checks { &system } else { &unchecked };
    // As `starling submit -allow-commands`: HTCondor runs them too.
    let env = &submit::Allowing::new(env);
    let description =
        submit::parse_with_includes(file, &text, dir, env).map_err(|e| e.to_string())?;
    description.expand(1, dir, env).map_err(|e| e.to_string())
}

/// The submitter's world without the checks that files and directories
/// exist: the oracle makes none (as `condor_submit` with no file checks),
/// and files from outside the project come without theirs.
struct Unchecked(SystemEnvironment);

impl submit::Environment for Unchecked {
    fn var(&self, name: &str) -> Option<String> {
        self.0.var(name)
    }
    fn vars(&self) -> Vec<(String, String)> {
        self.0.vars()
    }
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        self.0.read_file(path)
    }
    fn glob(&self, dir: &Path, pattern: &str, dirs: bool) -> std::io::Result<Vec<String>> {
        self.0.glob(dir, pattern, dirs)
    }
    fn check_directory(&self, _: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn check_exists(&self, _: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn size_kib(&self, path: &Path, max_entries: usize) -> (u64, usize) {
        self.0.size_kib(path, max_entries)
    }
    fn owner(&self) -> String {
        self.0.owner()
    }
    fn now(&self) -> i64 {
        self.0.now()
    }
}

/// `+Name` and `MY.Name` set in a file.
fn custom_attributes(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix('+').or_else(|| {
                l.get(..3)
                    .filter(|p| p.eq_ignore_ascii_case("my."))
                    .map(|_| &l[3..])
            })?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    files: usize,
    files_agreeing: usize,
    attributes: usize,
    attributes_agreeing: usize,
}

/// Compares one file; the differences as `file<TAB>what` lines.
fn compare(dir: &Path, file: &str, oracle: &J, tally: &mut Tally, checks: bool) -> Vec<String> {
    let mut diffs = Vec::new();
    let ours = starling_ads(dir, file, checks);
    let theirs = oracle["ok"].as_bool().unwrap_or(false);
    match (&ours, theirs) {
        (Err(_), false) => {}
        (Err(e), true) => diffs.push(format!("{file}\trefused by Starling only: {e}")),
        (Ok(_), false) => diffs.push(format!(
            "{file}\trefused by HTCondor only: {}",
            oracle["error"].as_str().unwrap_or("")
        )),
        (Ok(ads), true) => {
            let jobs = oracle["jobs"].as_array().cloned().unwrap_or_default();
            if ads.len() != jobs.len() {
                diffs.push(format!(
                    "{file}\tjobs: Starling {} HTCondor {}",
                    ads.len(),
                    jobs.len()
                ));
            }
            let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            let mut names: Vec<String> = ATTRIBUTES.iter().map(|a| a.to_string()).collect();
            names.extend(custom_attributes(&text));
            // STARLING_SUBMIT_ALL_ATTRIBUTES=1: every attribute either side
            // writes, to look for differences the list leaves out.
            if std::env::var_os("STARLING_SUBMIT_ALL_ATTRIBUTES").is_some() {
                let mut all: BTreeSet<String> =
                    names.iter().map(|n| n.to_ascii_lowercase()).collect();
                for ad in ads {
                    for entry in ad.iter() {
                        let name = entry.name.to_string();
                        if all.insert(name.to_ascii_lowercase()) {
                            names.push(name);
                        }
                    }
                }
                for job in &jobs {
                    for name in job.as_object().into_iter().flat_map(|j| j.keys()) {
                        if all.insert(name.to_ascii_lowercase()) {
                            names.push(name.clone());
                        }
                    }
                }
            }
            let mut seen = BTreeMap::<String, String>::new();
            for (ad, job) in ads.iter().zip(&jobs) {
                for name in &names {
                    let mut o = ad.get(name).map(unparse);
                    let t = job
                        .as_object()
                        .and_then(|j| j.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
                        .and_then(|(_, v)| v.as_str())
                        .map(str::to_owned);
                    if o.is_none() && t.is_none() {
                        continue;
                    }
                    // HTCondor writes an empty Environment; Starling omits it.
                    if name == "Environment" {
                        o.get_or_insert_with(|| "\"\"".to_owned());
                    }
                    // Old-syntax arguments: HTCondor keeps Args only;
                    // Starling also writes them as Arguments.
                    if name == "Arguments" && t.is_none() && job.get("Args").is_some() {
                        continue;
                    }
                    // A java job: Starling, with no shared file system,
                    // sends the class and jar files always; HTCondor lists
                    // them only beside a transfer_input_files.
                    if name == "TransferInput"
                        && t.is_none()
                        && ad.get("JobUniverse").map(unparse).as_deref() == Some("10")
                    {
                        continue;
                    }
                    tally.attributes += 1;
                    let (o, t) = if name == "Requirements" {
                        (
                            o.map(|s| requirement_clauses(&s)),
                            t.map(|s| requirement_clauses(&s)),
                        )
                    } else {
                        (o.map(|s| canon(&s)), t.map(|s| canon(&s)))
                    };
                    if o == t {
                        tally.attributes_agreeing += 1;
                    } else {
                        seen.entry(name.clone()).or_insert_with(|| {
                            format!(
                                "Starling {} HTCondor {}",
                                o.as_deref().unwrap_or("(none)"),
                                t.as_deref().unwrap_or("(none)")
                            )
                        });
                    }
                }
            }
            for (name, what) in seen {
                diffs.push(format!("{file}\t{name}: {what}"));
            }
        }
    }
    tally.files += 1;
    if diffs.is_empty() {
        tally.files_agreeing += 1;
    }
    diffs
}

/// The key of a difference line: the file and what differs (an attribute,
/// `jobs`, or which side refused), not the values.
fn key(line: &str) -> String {
    let (file, what) = line.split_once('\t').unwrap_or((line, ""));
    let what = what.split(':').next().unwrap_or(what);
    format!("{file}\t{what}")
}

/// The class of a difference line, for the summaries: what differs (an
/// attribute, `jobs`), or which side refused and, for Starling, what it
/// refused (`universe: "grid"`, `cron_minute`).
fn kind(line: &str) -> String {
    let what = line.split_once('\t').map_or(line, |(_, w)| w);
    if let Some(why) = what.strip_prefix("refused by Starling only: ") {
        // Past `file:line: `, up to where the reason starts.
        let why = why.split_once(": ").map_or(why, |(_, w)| w);
        let why = match why
            .split_once(" is not supported")
            .or_else(|| why.split_once(": not supported"))
        {
            Some((what, _)) => what,
            None => why.split([':', ';']).next().unwrap_or(why),
        };
        return format!("refused by Starling only ({why})");
    }
    what.split(':').next().unwrap_or(what).to_owned()
}

/// How many files show each class of difference, most first.
fn summary(diffs_by_file: &[Vec<String>]) -> Vec<(usize, String)> {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for diffs in diffs_by_file {
        let classes: BTreeSet<String> = diffs.iter().map(|d| kind(d)).collect();
        for c in classes {
            *kinds.entry(c).or_default() += 1;
        }
    }
    let mut kinds: Vec<(usize, String)> = kinds.into_iter().map(|(k, n)| (n, k)).collect();
    kinds.sort_by(|a, b| b.cmp(a));
    kinds
}

#[test]
fn submit_files_mean_what_htcondor_makes_of_them() {
    let dir = PathBuf::from(format!("{DIR}/corpus"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".sub"))
        .collect();
    files.sort();
    assert!(files.len() >= 150, "the corpus has {} files", files.len());
    // $ENV(...) reads the same value on both sides.
    std::env::set_var("STARLING_SUBMIT_TEST", "hello");
    let answers = oracle(&dir, &files);
    let mut tally = Tally::default();
    let mut by_file = Vec::new();
    for (file, answer) in files.iter().zip(&answers) {
        by_file.push(compare(&dir, file, answer, &mut tally, true));
    }
    eprintln!(
        "submit differential: {}/{} files agree, {}/{} attributes agree",
        tally.files_agreeing, tally.files, tally.attributes_agreeing, tally.attributes
    );
    for (n, k) in summary(&by_file) {
        eprintln!("{n:5} files: {k}");
    }
    let seen: Vec<String> = by_file.into_iter().flatten().collect();

    // differences.txt: `# class: reason` headers, then `file<TAB>what` lines.
    let listed_path = format!("{DIR}/differences.txt");
    let listed_text = std::fs::read_to_string(&listed_path).unwrap_or_default();
    let mut listed = BTreeMap::new();
    let mut class = String::from("# unclassified");
    for line in listed_text.lines() {
        if line.starts_with('#') {
            class = line.to_owned();
        } else if !line.trim().is_empty() {
            listed.insert(key(line), class.clone());
        }
    }
    if std::env::var_os("STARLING_SUBMIT_BLESS").is_some() {
        let mut by_class: BTreeMap<String, Vec<&String>> = BTreeMap::new();
        for line in &seen {
            let class = listed
                .get(&key(line))
                .cloned()
                .unwrap_or_else(|| "# unclassified".to_owned());
            by_class.entry(class).or_default().push(line);
        }
        let mut out = String::new();
        for (class, lines) in by_class {
            out.push_str(&class);
            out.push('\n');
            for l in lines {
                out.push_str(l);
                out.push('\n');
            }
            out.push('\n');
        }
        std::fs::write(&listed_path, out).expect("writing differences.txt");
        return;
    }
    let seen_keys: BTreeSet<String> = seen.iter().map(|l| key(l)).collect();
    let unlisted: Vec<&String> = seen
        .iter()
        .filter(|l| !listed.contains_key(&key(l)))
        .collect();
    let gone: Vec<&String> = listed.keys().filter(|k| !seen_keys.contains(*k)).collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "differences not in differences.txt:\n{}\nlisted but no longer different:\n{}",
        unlisted
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        gone.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The same comparison over submit files kept outside the project
/// (`STARLING_SUBMIT_ALL_ATTRIBUTES=1` compares every attribute either
/// side writes, not only [`ATTRIBUTES`]):
/// `STARLING_SUBMIT_CORPUS=DIR` (every `*.sub`, `*.submit` and `*.cmd` in
/// DIR, read in DIR, without the checks that the files they name exist,
/// which HTCondor's code makes only in `condor_submit`). Prints the
/// agreement and how often each kind of difference occurs; asserts
/// nothing, since the files are not the project's.
#[test]
fn submit_files_from_outside_the_project() {
    let Some(dir) = std::env::var_os("STARLING_SUBMIT_CORPUS") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("STARLING_SUBMIT_CORPUS")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".sub") || n.ends_with(".submit") || n.ends_with(".cmd"))
        .collect();
    files.sort();
    let answers = oracle(&dir, &files);
    let mut tally = Tally::default();
    let mut by_file = Vec::new();
    for (file, answer) in files.iter().zip(&answers) {
        let diffs = compare(&dir, file, answer, &mut tally, false);
        for d in &diffs {
            eprintln!("{d}");
        }
        by_file.push(diffs);
    }
    eprintln!(
        "outside corpus: {}/{} files agree, {}/{} attributes agree",
        tally.files_agreeing, tally.files, tally.attributes_agreeing, tally.attributes
    );
    for (n, k) in summary(&by_file) {
        eprintln!("{n:5} files: {k}");
    }
}
