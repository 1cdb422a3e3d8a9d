use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::classad::{parse_expr, Evaluator, Name, Side, Value};

/// A world with fixed files, globs and environment.
struct Fake {
    files: BTreeMap<PathBuf, String>,
    names: Vec<String>,
}

impl Environment for Fake {
    fn var(&self, name: &str) -> Option<String> {
        (name == "HOME").then(|| "/home/alice".to_owned())
    }
    fn vars(&self) -> Vec<(String, String)> {
        vec![("HOME".into(), "/home/alice".into())]
    }
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    }
    fn glob(&self, _dir: &Path, pattern: &str, _dirs: bool) -> std::io::Result<Vec<String>> {
        Ok(self
            .names
            .iter()
            .filter(|n| glob_match(pattern, n))
            .cloned()
            .collect())
    }
    /// Every directory exists but those under `/gone`.
    fn check_directory(&self, path: &Path) -> std::io::Result<()> {
        if path.starts_with("/gone") {
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        } else {
            Ok(())
        }
    }
    /// Everything exists but what is under `/gone` or named `missing*`.
    fn check_exists(&self, path: &Path) -> std::io::Result<()> {
        let missing = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("missing"));
        if path.starts_with("/gone") || missing {
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        } else {
            Ok(())
        }
    }
    /// Every file is 3 MiB and a bit (so inputs add up in whole MiB).
    fn size_kib(&self, path: &Path, _max_entries: usize) -> (u64, usize) {
        if self.check_exists(path).is_ok() {
            (3 * 1024 + 1, 0)
        } else {
            (0, 0)
        }
    }
    fn owner(&self) -> String {
        "alice".into()
    }
    fn now(&self) -> i64 {
        1_700_000_000
    }
    /// `echo-items` prints three items; `settings` prints submit lines;
    /// anything else fails.
    fn run(&self, command: &str, _dir: &Path) -> Result<String, String> {
        match command {
            "echo-items" => Ok("a\nb\n\nc\n".into()),
            "settings" => Ok("arguments = from-a-program\nrequest_cpus = 2\n".into()),
            _ => Err(format!("{command:?} failed (exit status: 1)")),
        }
    }
}

/// The fake's world, but the programs a file names are refused (the
/// default: no -allow-commands).
struct NoCommands(Fake);

impl Environment for NoCommands {
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
    fn check_directory(&self, path: &Path) -> std::io::Result<()> {
        self.0.check_directory(path)
    }
    fn check_exists(&self, path: &Path) -> std::io::Result<()> {
        self.0.check_exists(path)
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

fn fake() -> Fake {
    let mut files = BTreeMap::new();
    files.insert(
        PathBuf::from("/work/params.txt"),
        "1, x\n2, y\n\n# c\n3, z\n".into(),
    );
    Fake {
        files,
        names: vec!["a.dat".into(), "b.dat".into(), "c.txt".into()],
    }
}

fn expand(text: &str) -> Result<Vec<ClassAd>, SubmitError> {
    parse("job.sub", text)?.expand(7, Path::new("/work"), &fake())
}

fn s(ad: &ClassAd, name: &str) -> String {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::String(v) => v.to_string(),
        other => format!("{other:?}"),
    }
}

fn i(ad: &ClassAd, name: &str) -> i64 {
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::Int(v) => v,
        other => panic!("{name} is {other:?}"),
    }
}

#[test]
fn a_realistic_file_gives_htcondor_job_ads() {
    let ads = expand(
        "# analysis\n\
         executable = bin/analyse\n\
         arguments = \"--in '$(file)' --n $(Process)\"\n\
         environment = \"MODE=fast 'GREETING=hello world'\"\n\
         initialdir = run\n\
         input = data.in\n\
         output = out.$(Cluster).$(Process)\n\
         error = err.$(Process)\n\
         log = job.log\n\
         transfer_input_files = common.dat, \\\n    extra.dat\n\
         should_transfer_files = YES\n\
         when_to_transfer_output = ON_EXIT\n\
         request_cpus = 2\n\
         request_memory = 2G\n\
         request_disk = 10MB\n\
         requirements = OpSys == \"LINUX\"\n\
         rank = TARGET.Mips\n\
         priority = 5\n\
         +Department = \"physics\"\n\
         MY.Tag = \"$(file)\"\n\
         queue file matching *.dat\n\
         arguments = plain old args\n\
         queue 2\n",
    )
    .unwrap();
    assert_eq!(ads.len(), 4);
    let a = &ads[0];
    // The program is named from the submit directory, not initialdir.
    assert_eq!(s(a, "Cmd"), "/work/bin/analyse");
    assert_eq!(s(a, "Iwd"), "/work/run");
    assert_eq!(s(a, "Arguments"), "--in a.dat --n 0");
    // Sorted by name and quoted as HTCondor writes it.
    assert_eq!(s(a, "Environment"), "GREETING=hello' 'world MODE=fast");
    assert_eq!(s(a, "Out"), "out.7.0");
    assert_eq!(s(&ads[1], "Err"), "err.1");
    assert_eq!(s(a, "TransferInput"), "common.dat,extra.dat");
    assert_eq!(s(a, "UserLog"), "/work/run/job.log");
    assert_eq!(i(a, "RequestCpus"), 2);
    assert_eq!(i(a, "RequestMemory"), 2048);
    assert_eq!(i(a, "RequestDisk"), 10240);
    assert_eq!(i(a, "JobPrio"), 5);
    assert_eq!(s(a, "Owner"), "alice");
    assert_eq!(s(a, "Department"), "physics");
    assert_eq!(s(&ads[1], "Tag"), "b.dat");
    assert_eq!(
        s(&ads[3], "Tag"),
        "",
        "a queue variable is empty at another queue"
    );
    assert_eq!(i(a, "JobStatus"), 1);
    assert!(unparse(a.get("Requirements").unwrap()).contains("OpSys == \"LINUX\""));
    assert_eq!(s(&ads[2], "Args"), "plain old args");
    assert_eq!(s(&ads[3], "Arguments"), "plain old args");
    assert_eq!(s(&ads[3], "Out"), "out.7.3");
}

#[test]
fn queue_forms() {
    let base = "executable = /bin/echo\narguments = $(a) $(b)\n";
    let ads = expand(&format!("{base}queue a, b from params.txt\n")).unwrap();
    let args: Vec<String> = ads.iter().map(|ad| s(ad, "Arguments")).collect();
    assert_eq!(args, vec!["1 x", "2 y", "3 z"]);
    let ads = expand("executable = /bin/echo\narguments = $(a)\nqueue 2 a in (p, q)\n").unwrap();
    assert_eq!(ads.len(), 4);
    assert_eq!(s(&ads[2], "Arguments"), "q");
    let ads =
        expand("executable = /bin/echo\narguments = $(Item) $(Step)\nqueue 2 in (\n  x\n  y\n)\n")
            .unwrap();
    let args: Vec<String> = ads.iter().map(|ad| s(ad, "Arguments")).collect();
    assert_eq!(args, vec!["x 0", "x 1", "y 0", "y 1"]);
    let ads = expand("executable = /bin/echo\nqueue a from (\n 1\n 2\n)\n").unwrap();
    assert_eq!(ads.len(), 2);
}

#[test]
fn errors_name_the_line_and_the_problem() {
    let cases = [
        (
            "executable = /bin/x\nrequirements = (Memory >\nqueue\n",
            2,
            "requirements",
        ),
        (
            "executable = /bin/x\nuniverse = grid\nqueue\n",
            2,
            "only vanilla, scheduler, local, java and parallel",
        ),
        (
            "executable = /bin/x\nrequest_memory = -4\nqueue\n",
            2,
            "negative",
        ),
        ("executable = /bin/x\n", 0, "no queue statement"),
        ("queue\n", 1, "no executable"),
        (
            "executable = /bin/x\nif $(N) > 3\nendif\nqueue\n",
            2,
            "complex conditionals",
        ),
        ("executable = /bin/x\nif true\nqueue\n", 2, "no endif"),
        (
            "executable = /bin/x\ncontainer_image = a.sif\nqueue\n",
            2,
            "container_image: not supported: Starling cannot run containers",
        ),
        (
            "executable = /bin/x\ncron_minute = 5\nqueue\n",
            2,
            "no cron jobs",
        ),
        ("executable = /bin/x\nelse\nqueue\n", 2, "without an if"),
        (
            "executable = /bin/x\narguments = $INT(x)\nqueue\n",
            3,
            "does not evaluate to an integer",
        ),
        (
            "executable = /bin/x\na = $(b)\nb = $(a)\narguments = $(a)\nqueue\n",
            5,
            "deeper",
        ),
        (
            "executable = /bin/x\nqueue a from missing.txt\n",
            2,
            "cannot read",
        ),
        (
            "executable = /bin/x\nthis is not a command\nqueue\n",
            2,
            "neither",
        ),
        ("executable = /bin/x\n+1bad = 3\nqueue\n", 2, "+1bad"),
        ("executable = /bin/x\nqueue x in (a, b\n", 2, "never closed"),
        (
            "executable = /bin/x\nshould_transfer_files = SOMETIMES\nqueue\n",
            2,
            "YES, NO or IF_NEEDED",
        ),
    ];
    for (text, line, needle) in cases {
        let e = expand(text).unwrap_err();
        assert_eq!(e.line, line, "{text:?}: {e}");
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
        assert!(e.to_string().starts_with("job.sub"), "{e}");
    }
}

#[test]
fn hold_and_units() {
    let ads = expand(
        "executable = /bin/x\nhold = true\nrequest_memory = 512MB\nrequest_disk = 1G\nqueue\n",
    )
    .unwrap();
    assert_eq!(i(&ads[0], "JobStatus"), 5);
    assert_eq!(i(&ads[0], "HoldReasonCode"), 15);
    assert_eq!(i(&ads[0], "RequestMemory"), 512);
    assert_eq!(i(&ads[0], "RequestDisk"), 1024 * 1024);
    let ads = expand("executable = /bin/x\nrequest_memory = TARGET.Memory / 2\nqueue\n").unwrap();
    assert!(unparse(ads[0].get("RequestMemory").unwrap()).contains("TARGET.Memory"));
}

/// `(line, message)` of the error `text` gives.
fn refused(text: &str) -> (usize, String) {
    let e = expand(text).unwrap_err();
    assert!(e.to_string().starts_with("job.sub"), "{e}");
    (e.line, e.to_string())
}

#[test]
fn control_characters_in_names_are_refused_naming_the_key() {
    let cases = [
        // A tab and an escape straight in the file.
        ("batch_name = a\tb\n", 2, "batch_name", "a tab"),
        (
            "accounting_group = g\u{1b}[2J\n",
            2,
            "accounting_group",
            "an escape",
        ),
        (
            "accounting_group_user = u\u{7f}\n",
            2,
            "accounting_group_user",
            "U+007F",
        ),
        ("notify_user = m\u{b}e\n", 2, "notify_user", "U+000B"),
        // A newline brought in by $ENV or a ClassAd string's escape.
        ("batch_name = $ENV(NL)\n", 2, "batch_name", "a newline"),
        (
            "+JobBatchName = \"a\\nb\"\n",
            2,
            "+JobBatchName",
            "a newline",
        ),
        ("+AcctGroup = \"x\\ty\"\n", 2, "+AcctGroup", "a tab"),
        ("output = out\u{1}.txt\n", 2, "output", "U+0001"),
    ];
    for (body, line, key, named) in cases {
        let text = format!("executable = /bin/x\n{body}queue\n");
        let (at, e) = refused_with_env(&text);
        assert_eq!(at, line, "{text:?}: {e}");
        assert!(e.contains(&format!("{key}: ")), "{text:?}: {e}");
        assert!(e.contains(named), "{text:?}: {e}");
    }
    // A tab or a newline between arguments is only white space, one
    // space in Args as HTCondor writes it.
    let ads = expand("executable = /bin/x\narguments = a\tb\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "a b");
}

/// [`expand`] with `NL` in the environment holding a newline.
fn refused_with_env(text: &str) -> (usize, String) {
    struct WithNewline(Fake);
    impl Environment for WithNewline {
        fn var(&self, name: &str) -> Option<String> {
            (name == "NL").then(|| "one\ntwo".to_owned())
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
        fn check_directory(&self, path: &Path) -> std::io::Result<()> {
            self.0.check_directory(path)
        }
        fn check_exists(&self, path: &Path) -> std::io::Result<()> {
            self.0.check_exists(path)
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
    let e = parse("job.sub", text)
        .unwrap()
        .expand(7, Path::new("/work"), &WithNewline(fake()))
        .unwrap_err();
    (e.line, e.to_string())
}

#[test]
fn non_finite_or_absurd_requests_are_refused_with_their_line() {
    for (body, needle) in [
        ("request_disk = nan", "not a finite number"),
        ("request_memory = inf", "not a finite number"),
        ("request_cpus = -Infinity", "not a finite number"),
        ("request_cpus = -1", "negative"),
        ("request_cpus = 1e308", "more than any machine has"),
        ("request_cpus = 2000000", "more than any machine has"),
        ("request_memory = 1e308", "more than any machine has"),
        (
            "request_memory = 99999999999999T",
            "more than any machine has",
        ),
        ("request_disk = -2.5", "negative"),
        ("request_disk = \"big\"", "not an amount"),
    ] {
        let (line, e) = refused(&format!("executable = /bin/x\n{body}\nqueue\n"));
        assert_eq!(line, 2, "{body}: {e}");
        let key = body.split(' ').next().unwrap();
        assert!(e.contains(&format!("{key}: ")), "{body}: {e}");
        assert!(e.contains(needle), "{body}: {e}");
    }
    // Expressions of the machine are left to the machine.
    let ads =
        expand("executable = /bin/x\nrequest_disk = TARGET.Disk / 2\nrequest_cpus = 1.5\nqueue\n")
            .unwrap();
    assert_eq!(ads.len(), 1);
}

#[test]
fn paths_longer_than_the_system_allows_are_refused_naming_the_key() {
    let long = "p".repeat(10_000);
    for key in [
        "output",
        "error",
        "log",
        "transfer_input_files",
        "initialdir",
        "executable",
    ] {
        let text = if key == "executable" {
            format!("executable = {long}\nqueue\n")
        } else {
            format!("executable = /bin/x\n{key} = {long}\nqueue\n")
        };
        let (line, e) = refused(&text);
        assert!(e.contains(&format!("{key}: ")), "{key}: {e}");
        assert!(e.contains("PATH_MAX"), "{key}: {e}");
        assert_eq!(line, if key == "executable" { 1 } else { 2 }, "{e}");
    }
    let name = "n".repeat(300);
    let (_, e) = refused(&format!(
        "executable = /bin/x\noutput = out/{name}\nqueue\n"
    ));
    assert!(e.contains("output: ") && e.contains("NAME_MAX"), "{e}");
}

#[test]
fn a_missing_initialdir_is_refused_not_made() {
    let (line, e) = refused("executable = x\ninitialdir = /gone/run\nqueue\n");
    assert_eq!(line, 2, "{e}");
    assert!(
        e.contains("initialdir: the directory /gone/run does not exist"),
        "{e}"
    );
    // Per proc, from a macro.
    let (_, e) = refused("executable = x\ninitialdir = /gone/$(Process)\nqueue\n");
    assert!(e.contains("/gone/0 does not exist"), "{e}");
    // The submitter's own directory when no initialdir is given.
    let e = parse("job.sub", "executable = x\nqueue\n")
        .unwrap()
        .expand(7, Path::new("/gone/cwd"), &fake())
        .unwrap_err();
    assert!(e.to_string().contains("the working directory"), "{e}");
    // Output into a directory that is not there.
    let (line, e) = refused("executable = x\ninitialdir = /w\nerror = /gone/err.txt\nqueue\n");
    assert_eq!(line, 3, "{e}");
    assert!(
        e.contains("error: the directory /gone does not exist"),
        "{e}"
    );
}

proptest::proptest! {
    #[test]
    fn parsing_never_panics(text in "(?s).{0,400}") {
        if let Ok(d) = parse("x.sub", &text) {
            let _ = d.expand(1, Path::new("/w"), &fake());
        }
    }

    /// Macro functions, conditionals and queue forms in any combination
    /// give ads or an error, never a panic.
    #[test]
    fn macro_language_never_panics(
        lines in proptest::collection::vec(
            proptest::prop_oneof![
                "[A-Z]{1,2} = [a-z0-9,./ -]{0,8}",
                "arguments = (\\$(INT|REAL|SUBSTR|CHOICE|RANDOM_CHOICE|RANDOM_INTEGER|ENV|F[pnxdqabfwu]{0,3})\\([A-Z0-9,%.x -]{0,10}\\)?|\\$\\([A-Z]{1,2}(:[a-z]{0,3})?\\)|[a-z ]{0,4}){0,4}",
                "(if|elif) (defined [A-Z]|version [<>=]{1,2} [0-9.]{0,5}|[0-9!]{0,2}|true|\\$\\([A-Z]\\))",
                "(else|endif)",
                "queue( [0-9]{0,2})?( [a-z]{1,2})?( in| from| matching)?( \\[[0-9:-]{0,5}\\])?( \\(?[a-z, ]{0,8}\\)?)?",
            ],
            0..12,
        )
    ) {
        let text = format!("executable = /bin/x\n{}\n", lines.join("\n"));
        if let Ok(d) = parse("x.sub", &text) {
            let _ = d.expand(1, Path::new("/w"), &fake());
        }
    }

    #[test]
    fn glob_matching_never_panics(p in "[a-z*?\\[\\]!-]{0,12}", n in "[a-z]{0,12}") {
        let _ = glob_match(&p, &n);
    }
}

#[test]
fn kill_sig_becomes_the_signals_name_and_bad_ones_are_refused_naming_the_command() {
    let ads = expand("executable = /bin/x\nkill_sig = usr1\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "KillSig"), "SIGUSR1");
    let ads = expand("executable = /bin/x\nkill_sig = 2\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "KillSig"), "SIGINT");
    // None asked for: the execute side sends its default.
    let ads = expand("executable = /bin/x\nqueue\n").unwrap();
    assert!(ads[0].get("KillSig").is_none());
    for (body, key, value) in [
        ("kill_sig = SIGKILL\n", "kill_sig", "SIGKILL"),
        ("kill_sig = stop\n", "kill_sig", "stop"),
        ("kill_sig = BOGUS\n", "kill_sig", "BOGUS"),
        ("+KillSig = \"SIGKILL\"\n", "+KillSig", "SIGKILL"),
    ] {
        let text = format!("executable = /bin/x\n{body}queue\n");
        let (line, e) = refused(&text);
        assert_eq!(line, 2, "{e}");
        assert!(
            e.starts_with(&format!("job.sub:2: {key}: \"{value}\"")),
            "{e}"
        );
    }
}

#[test]
fn checkpoint_commands_become_attributes_and_bad_ones_are_refused_naming_the_command() {
    let ads = expand(
        "executable = /bin/x\ncheckpoint_exit_code = 85\n\
         transfer_checkpoint_files = state, out/log\ncheckpoint_replicas = 3\nqueue\n",
    )
    .unwrap();
    assert_eq!(i(&ads[0], "CheckpointExitCode"), 85);
    assert_eq!(s(&ads[0], "TransferCheckpoint"), "state,out/log");
    assert_eq!(i(&ads[0], "CheckpointReplicas"), 3);
    for (line, problem) in [
        (
            "checkpoint_replicas = 0\n",
            "\"0\" is not a whole number from 1 to 8",
        ),
        (
            "checkpoint_replicas = 9\n",
            "\"9\" is not a whole number from 1 to 8",
        ),
        (
            "checkpoint_replicas = two\n",
            "\"two\" is not a whole number",
        ),
        (
            "transfer_checkpoint_files = ../../etc/passwd\n",
            "\"../../etc/passwd\" is not a path inside the job's sandbox",
        ),
        (
            "transfer_checkpoint_files = /etc/passwd\n",
            "\"/etc/passwd\" is not a path inside the job's sandbox",
        ),
    ] {
        let e = expand(&format!("executable = /bin/x\n{line}queue\n")).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(problem), "{line}: {text}");
        let command = line.split(' ').next().unwrap();
        assert!(text.contains(command), "{line}: {text}");
    }
}

#[test]
fn files_that_are_not_there_and_words_for_amounts_are_refused_with_the_line() {
    let refused = |text: &str| refused(text).1;
    let e = refused("executable = missing.sh\nqueue\n");
    assert!(
        e.contains("job.sub:1: executable: ") && e.contains("missing.sh does not exist"),
        "{e}"
    );
    // Not sent with the job: it need only be on the machines.
    assert!(expand("executable = missing.sh\ntransfer_executable = false\nqueue\n").is_ok());
    let e = refused("executable = a.sh\ntransfer_input_files = in.dat, missing.dat\nqueue\n");
    assert!(
        e.contains("job.sub:2: transfer_input_files: ") && e.contains("missing.dat does not exist"),
        "{e}"
    );
    let e = refused("executable = a.sh\ninput = missing.in\nqueue\n");
    assert!(e.contains("job.sub:2: input: "), "{e}");
    let e = refused("executable = a.sh\nlog = /gone/job.log\nqueue\n");
    assert!(
        e.contains("job.sub:2: log: the directory /gone does not exist"),
        "{e}"
    );
    let e = refused("executable = a.sh\narguments = \"one two\nqueue\n");
    assert!(
        e.contains("job.sub:2: arguments: ") && e.contains("unterminated"),
        "{e}"
    );
    let e = refused("executable = a.sh\nenvironment = \"A=1\nqueue\n");
    assert!(
        e.contains("job.sub:2: environment: ") && e.contains("unterminated"),
        "{e}"
    );
    let e = refused("executable = a.sh\nrequest_memory = lots\nqueue\n");
    assert!(
        e.contains("job.sub:2: request_memory: \"lots\" is neither an amount"),
        "{e}"
    );
    // A name the job defines, or the machine's, is an expression.
    for ok in [
        "request_memory = mem\n+mem = 2048\n",
        "request_memory = Memory\n",
        "request_memory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage, 2048)\n",
    ] {
        let text = format!("executable = a.sh\n{ok}queue\n");
        assert!(expand(&text).is_ok(), "{ok}");
    }
}

#[test]
fn unknown_commands_are_warnings_with_a_suggestion() {
    let d = super::parse(
        "job.sub",
        "executable = /bin/x\nexectuable = y\nstream_output = true\nqueue\n",
    )
    .unwrap();
    let w: Vec<String> = d.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].starts_with("job.sub:2:") && w[0].contains("did you mean executable"));
    assert!(w[1].starts_with("job.sub:3:") && w[1].contains("stream_output"));
}

#[test]
fn undefined_macros_expand_to_nothing() {
    let ads = expand("executable = /bin/x\narguments = a$(nope)b\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "ab");
}

#[test]
fn macro_functions_expand_as_in_htcondor() {
    let ads = expand(
        "N = 7\nNAME = abcdefgh\nL = red, green, blue\nexecutable = /bin/x\n\
         arguments = $INT(Process,%03d) $INT(N,%x) $Fn(d/f.tar.gz) $Fx(d/f.tar.gz) \
         $SUBSTR(NAME,2,3) $CHOICE(Process,L) $RANDOM_INTEGER(4,4) $RANDOM_CHOICE(z)\n\
         queue 2\n",
    )
    .unwrap();
    assert_eq!(s(&ads[0], "Args"), "000 7 f.tar .gz cde red 4 z");
    assert_eq!(s(&ads[1], "Args"), "001 7 f.tar .gz cde green 4 z");
}

#[test]
fn conditionals_choose_lines_as_in_htcondor() {
    let ads = expand(
        "MODE = 1\nexecutable = /bin/x\nif defined MODE\n  arguments = d\nelse\n  arguments = u\nendif\n\
         if version >= 8.0\n  request_cpus = 2\nendif\n\
         if $(MODE)\n  if false\n    priority = 9\n  elif true\n    priority = 3\n  endif\nendif\nqueue\n",
    )
    .unwrap();
    assert_eq!(s(&ads[0], "Args"), "d");
    assert_eq!(
        ads[0].get("RequestCpus").map(super::show).as_deref(),
        Some("2")
    );
    assert_eq!(ads[0].get("JobPrio").map(super::show).as_deref(), Some("3"));
}

#[test]
fn queue_in_multiplies_every_item_by_the_count() {
    let ads = expand("executable = /bin/x\narguments = $(x)\nqueue 3 x in (a b c)\n").unwrap();
    assert_eq!(ads.len(), 9);
    let ads = expand("executable = /bin/x\narguments = $(n)\nqueue n in A, B, C\n").unwrap();
    let args: Vec<String> = ads.iter().map(|ad| s(ad, "Args")).collect();
    assert_eq!(args, ["A", "B", "C"]);
}

#[test]
fn includes_read_files_from_the_submit_directory_with_their_own_lines() {
    let mut world = fake();
    world.files.insert(
        PathBuf::from("/work/common.inc"),
        "executable = /bin/x\nif defined FAST\n  request_cpus = 4\nendif\n".into(),
    );
    world.files.insert(
        PathBuf::from("/work/bad.inc"),
        "\nrequirements = (\n".into(),
    );
    world.files.insert(
        PathBuf::from("/work/loop.inc"),
        "include : loop.inc\n".into(),
    );
    let dir = Path::new("/work");
    let text = "FAST = 1\nNAME = common\ninclude : $(NAME).inc\nqueue\n";
    let d = parse_with_includes("job.sub", text, dir, &world).unwrap();
    let ads = d.expand(1, dir, &world).unwrap();
    assert_eq!(i(&ads[0], "RequestCpus"), 4);

    // An error in an included file names that file and its line.
    let text = "executable = /bin/x\ninclude : bad.inc\nqueue\n";
    let d = parse_with_includes("job.sub", text, dir, &world).unwrap();
    let e = d.expand(1, dir, &world).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("/work/bad.inc", 2), "{e}");

    let e = parse_with_includes("job.sub", "include : none.inc\nqueue\n", dir, &world).unwrap_err();
    assert_eq!(e.line, 1);
    assert!(e.problem.contains("cannot read /work/none.inc"), "{e}");
    let e = parse_with_includes("job.sub", "include : loop.inc\nqueue\n", dir, &world).unwrap_err();
    assert!(e.problem.contains("nest deeper"), "{e}");
    let e = parse_with_includes(
        "job.sub",
        "include command : ls\nqueue\n",
        dir,
        &NoCommands(fake()),
    )
    .unwrap_err();
    assert!(e.problem.contains("only with -allow-commands"), "{e}");
    assert_eq!(e.line, 1);
    // Without the submitter's files, an include is refused by name.
    let e = parse("job.sub", "include : common.inc\nqueue\n").unwrap_err();
    assert!(e.problem.contains("include"), "{e}");
}

#[test]
fn a_macro_may_extend_its_own_value() {
    let ads =
        expand("A = one\nA = $(A) two\nexecutable = /bin/x\narguments = $(A)\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "one two");
}

#[test]
fn queue_variables_named_like_commands_set_them() {
    let ads = expand("executable = /bin/x\nqueue arguments in (one, two)\n").unwrap();
    let args: Vec<String> = ads.iter().map(|ad| s(ad, "Args")).collect();
    assert_eq!(args, ["one", "two"]);
}

#[test]
fn slices_choose_items_as_python_does() {
    let args = |text: &str| -> Vec<String> {
        expand(text)
            .unwrap()
            .iter()
            .map(|ad| s(ad, "Args"))
            .collect()
    };
    let q = |slice: &str| {
        format!("executable = /bin/x\narguments = $(Item)\nqueue in {slice} (a, b, c, d)\n")
    };
    assert_eq!(args(&q("[1:3]")), ["b", "c"]);
    assert_eq!(args(&q("[::2]")), ["a", "c"]);
    assert_eq!(args(&q("[-1]")), ["d"]);
    assert_eq!(
        args(&q("[::-1]")),
        ["a", "b", "c", "d"].map(String::from)[..4].to_vec()
    );
    assert!(expand(&q("[::0]")).unwrap_err().problem.contains("step"));
}

#[test]
fn max_retries_is_written_as_htcondor_writes_it() {
    let ads = expand("executable = /bin/x\nmax_retries = 5\nqueue\n").unwrap();
    let show = |n: &str| ads[0].get(n).map(super::show).unwrap_or_default();
    assert_eq!(show("JobMaxRetries"), "5");
    assert_eq!(
        show("OnExitRemove"),
        "NumJobCompletions > JobMaxRetries || ExitCode is 0"
    );
    assert_eq!(show("OnExitHold"), "false");
}

#[test]
fn getenv_takes_a_list_of_names() {
    let ads = expand("executable = /bin/x\ngetenv = HOME, NOPE\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Environment"), "HOME=/home/alice");
}

#[test]
fn programs_named_in_a_submit_file_are_not_run_unless_allowed() {
    let world = NoCommands(fake());
    let d = parse_with_includes(
        "job.sub",
        "executable = /bin/x\nqueue from seq 1 3 |\n",
        Path::new("/work"),
        &world,
    )
    .unwrap();
    let e = d.expand(1, Path::new("/work"), &world).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.problem.contains("only with -allow-commands"), "{e}");
}

#[test]
fn submit_file_names_the_file() {
    let ads = expand("executable = /bin/x\narguments = $Fn(SUBMIT_FILE)\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "job");
}

#[test]
fn nice_user_jobs_go_to_the_nice_user_group() {
    let ads = expand("executable = /bin/x\nnice_user = true\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "AcctGroup"), "nice-user");
    assert_eq!(s(&ads[0], "AccountingGroup"), "nice-user.alice");
}

#[test]
fn output_remaps_go_into_the_ad_and_a_url_is_refused() {
    let d = super::parse(
        "job.sub",
        "executable = /bin/x\ntransfer_output_remaps = \"a = r/a; b = /abs/b\"\nqueue\n",
    )
    .unwrap();
    assert!(d.warnings().is_empty(), "{:?}", d.warnings());
    let ads =
        expand("executable = /bin/x\ntransfer_output_remaps = \"a = r/a; b = /abs/b\"\nqueue\n")
            .unwrap();
    assert_eq!(s(&ads[0], "TransferOutputRemaps"), "a = r/a; b = /abs/b");
    let e = expand("executable = /bin/x\ntransfer_output_remaps = \"a = https://x/a\"\nqueue\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("transfer_output_remaps") && e.contains("URL"),
        "{e}"
    );
}

#[test]
fn allowed_durations_go_into_the_ad_as_expressions() {
    let ads = expand(
        "executable = /bin/x\nallowed_execute_duration = 60\nallowed_job_duration = 2 * 3600\nqueue\n",
    )
    .unwrap();
    assert_eq!(
        ads[0].get("AllowedExecuteDuration").map(unparse).as_deref(),
        Some("60")
    );
    assert_eq!(
        ads[0].get("AllowedJobDuration").map(unparse).as_deref(),
        Some("2 * 3600")
    );
    let e = expand("executable = /bin/x\nallowed_execute_duration = 60 *\nqueue\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("allowed_execute_duration"), "{e}");
}

#[test]
fn max_retries_is_carried_out_with_no_warning() {
    let d = super::parse("job.sub", "executable = /bin/x\nmax_retries = 3\nqueue\n").unwrap();
    assert!(d.warnings().is_empty(), "{:?}", d.warnings());
}

#[test]
fn extreme_bounds_are_no_overflow() {
    let ads = expand(
        "executable = /bin/x\narguments = $RANDOM_INTEGER(-9223372036854775808, 9223372036854775807)\n\
         queue in [::-9223372036854775808] (a, b)\n",
    )
    .unwrap();
    assert_eq!(ads.len(), 1);
    let ads = expand("executable = /bin/x\nqueue in [9223372036854775807] (a, b)\n").unwrap();
    assert!(ads.is_empty());
}

#[test]
fn commands_may_be_named_by_their_attribute() {
    let ads =
        expand("executable = /bin/x\nJobBatchName = \"named\"\nJobPrio = 4\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "JobBatchName"), "named");
    assert_eq!(i(&ads[0], "JobPrio"), 4);
}

#[test]
fn string_eval_basename_and_dirname_expand_as_in_htcondor() {
    let ads = expand(
        "F = /data/run/file.tar.gz\nS = \"q v\"\nexecutable = /bin/x\n\
         arguments = $EVAL(2 * 3) $BASENAME(F, .tar.gz) $DIRNAME(F) $STRING(S)\nqueue\n",
    )
    .unwrap();
    assert_eq!(s(&ads[0], "Args"), "6 file /data/run/ q v");
    // A function's body ends at the first ')', as HTCondor reads it.
    let ads = expand("executable = /bin/x\narguments = $EVAL(f(1))x\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), ")x");
}

#[test]
fn on_exit_or_evict_alone_transfers_files_as_htcondor_makes_it() {
    // Alone, it makes should_transfer_files YES (HTCondor's convenience).
    let ads = expand("executable = /bin/true\nwhen_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n")
        .unwrap();
    assert_eq!(s(&ads[0], "ShouldTransferFiles"), "YES");
    assert_eq!(s(&ads[0], "WhenToTransferOutput"), "ON_EXIT_OR_EVICT");
    // With IF_NEEDED said, the two are incompatible.
    let (line, why) = refused(
        "executable = /bin/true\nshould_transfer_files = IF_NEEDED\n\
         when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n",
    );
    assert_eq!(line, 3);
    assert!(why.contains("should_transfer_files = YES"), "{why}");
}

/// Without `request_disk` the job asks HTCondor 25's default: its inputs
/// (executable, input, transfer_input_files; URLs count
/// nothing) in whole MiB as TransferInputSizeMB, and RequestDisk the
/// expression over it, at least 1 GiB.
#[test]
fn default_disk_request_grows_with_the_inputs() {
    let ads = expand(
        "executable = /bin/x\ninput = in.txt\n\
         transfer_input_files = a, b, http://example.org/d\nqueue\n",
    )
    .unwrap();
    // Four files of 3073 KiB each: 12292 KiB, 13 MiB rounded up.
    assert_eq!(i(&ads[0], "TransferInputSizeMB"), 13);
    assert_eq!(
        unparse(ads[0].get("RequestDisk").unwrap()),
        unparse(&parse_expr(DEFAULT_REQUEST_DISK).unwrap())
    );
    let disk = |ad: &ClassAd| match Evaluator::with_ads(Some(ad), None)
        .eval_attr(Side::My, Name::known("RequestDisk").folded())
    {
        Value::Int(v) => v as f64,
        Value::Real(v) => v,
        other => panic!("RequestDisk is {other:?}"),
    };
    assert_eq!(disk(&ads[0]), 1024.0 * 1024.0);
    // Large inputs raise it: 1.25 times the input and 1 MiB.
    let mut big = ads[0].clone();
    big.insert(
        Name::known("TransferInputSizeMB"),
        Expr::Literal(Value::Int(2047)),
    );
    assert_eq!(disk(&big), 2560.0 * 1024.0);
    // The executable counts even when it is not sent, as in HTCondor.
    let ads = expand("executable = /bin/x\ntransfer_executable = false\nqueue\n").unwrap();
    assert_eq!(i(&ads[0], "TransferInputSizeMB"), 4);
    // An explicit request stands alone.
    let ads = expand("executable = /bin/x\nrequest_disk = 10M\nqueue\n").unwrap();
    assert_eq!(i(&ads[0], "RequestDisk"), 10240);
}

/// HTCondor's resource clauses: none for a literal request no machine
/// lacks (one core, 1 MiB, no disk), and none for cores when the user's
/// requirements look at the machine's own.
#[test]
fn resource_clauses_as_htcondor_adds_them() {
    let req = |text: &str| unparse(expand(text).unwrap()[0].get("Requirements").unwrap());
    let r = req(
        "executable = /bin/x\nrequest_cpus = 1.0\nrequest_memory = 1\nrequest_disk = 0\nqueue\n",
    );
    assert_eq!(r, "true");
    let r = req("executable = /bin/x\nrequest_cpus = 2\nqueue\n");
    assert!(r.contains("TARGET.Cpus >= RequestCpus"), "{r}");
    assert!(r.contains("TARGET.Disk >= RequestDisk"), "{r}");
    assert!(r.contains("TARGET.Memory >= RequestMemory"), "{r}");
    let r = req("executable = /bin/x\nrequest_cpus = 2\nrequirements = Cpus > 3\nqueue\n");
    assert!(!r.contains("RequestCpus"), "{r}");
    let r = req("executable = /bin/x\nrequest_disk = 0\nrequirements = TARGET.Disk > 3\nqueue\n");
    assert!(r.contains("TARGET.Disk >= RequestDisk"), "{r}");
}

/// success_exit_code and retry_until as HTCondor writes them, with two
/// retries unless max_retries says.
#[test]
fn retry_policy_as_htcondor_writes_it() {
    let ads = expand(
        "executable = /bin/x\nsuccess_exit_code = 3\nretry_until = 7\n\
         on_exit_remove = a ? b : c\nqueue\n",
    )
    .unwrap();
    assert_eq!(i(&ads[0], "JobMaxRetries"), 2);
    assert_eq!(i(&ads[0], "JobSuccessExitCode"), 3);
    assert_eq!(
        unparse(ads[0].get("OnExitRemove").unwrap()),
        unparse(
            &parse_expr(
                "NumJobCompletions > JobMaxRetries || ExitCode =?= JobSuccessExitCode \
                 || ExitCode =?= 7 || (a ? b : c)"
            )
            .unwrap()
        )
    );
    let e = expand("executable = /bin/x\nsuccess_exit_code = zero\nqueue\n").unwrap_err();
    assert!(e.to_string().contains("success_exit_code"), "{e}");
}

/// `max_transfer_input_mb`: a job whose input is bigger is queued held
/// (HTCondor's code 32), one whose input fits is not; both limits are
/// written as expressions.
#[test]
fn input_over_max_transfer_input_mb_is_held_at_submit() {
    // Each file of the fake world is 3 MiB and a bit: 4 MiB of input.
    let ads = expand("executable = prog\nmax_transfer_input_mb = 3\nqueue\n").unwrap();
    assert_eq!(i(&ads[0], "TransferInputSizeMB"), 4);
    assert_eq!(i(&ads[0], "JobStatus"), 5);
    assert_eq!(i(&ads[0], "HoldReasonCode"), 32);
    assert_eq!(
        s(&ads[0], "HoldReason"),
        "TransferInputSizeMB (4) is greater than MAX_TRANSFER_INPUT_MB (3) at submit time"
    );
    for limit in ["4", "-1", "RequestCpus * 100", "undefined"] {
        let ads = expand(&format!(
            "executable = prog\nmax_transfer_input_mb = {limit}\n\
             max_transfer_output_mb = 2 * 1024\nqueue\n"
        ))
        .unwrap();
        assert!(ads[0].get("HoldReasonCode").is_none(), "{limit}");
        assert_eq!(i(&ads[0], "MaxTransferOutputMB"), 2048);
    }
    let (line, e) = refused("executable = prog\nmax_transfer_output_mb = (\nqueue\n");
    assert_eq!(line, 2);
    assert!(e.contains("max_transfer_output_mb"), "{e}");
}

/// Details HTCondor writes that real submit files run into.
#[test]
fn ad_details_as_htcondor_writes_them() {
    // A program already on the machines keeps its relative name, and
    // TransferExecutable is written only when false.
    let ads = expand("executable = ./prog\ntransfer_executable = false\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Cmd"), "./prog");
    assert_eq!(s(&ads[0], "TransferExecutable"), "Bool(false)");
    let ads = expand("executable = prog\ntransfer_executable = true\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Cmd"), "/work/prog");
    assert!(ads[0].get("TransferExecutable").is_none());
    // Concurrency limits in lower case, sorted; bad ones refused.
    let ads = expand("executable = /bin/x\nconcurrency_limits = Zed, DB:2\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "ConcurrencyLimits"), "db:2,zed");
    let (line, e) = refused("executable = /bin/x\nconcurrency_limits = db:0\nqueue\n");
    assert_eq!(line, 2);
    assert!(e.contains("concurrency_limits: \"db:0\""), "{e}");
    // `env` in the old syntax stays in the old syntax.
    let ads = expand("executable = /bin/x\nenv = B=2;A=1\ngetenv = !HOME\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Env"), "A=1;B=2");
    assert!(ads[0].get("Environment").is_none());
    // getenv lists: `!` leaves a name out, case does not matter.
    let ads = expand("executable = /bin/x\ngetenv = ho*\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Environment"), "HOME=/home/alice");
    let ads = expand("executable = /bin/x\ngetenv = !H*\nqueue\n").unwrap();
    assert!(ads[0].get("Environment").is_none());
    // Old-syntax arguments that expand to blanks: an empty Args.
    let ads = expand("executable = /bin/x\narguments = $(a) $(b)\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "");
    // A custom resource: its request and a clause for it.
    let ads = expand("executable = /bin/x\nrequest_foobar = 3\nqueue\n").unwrap();
    assert_eq!(i(&ads[0], "Requestfoobar"), 3);
    let r = unparse(ads[0].get("Requirements").unwrap());
    assert!(r.contains("TARGET.foobar >= Requestfoobar"), "{r}");
}

/// A continued line joins as HTCondor joins it: the next line's leading
/// blanks dropped, the blanks before the backslash kept.
#[test]
fn continued_lines_join_as_in_htcondor() {
    let ads = expand("executable = /bin/x\narguments = a\\\n  b \\\n  c\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "ab c");
}

/// Old-syntax arguments with a bare double quote are refused, as HTCondor
/// refuses them; `$ENV` of an unset variable reads UNDEFINED.
#[test]
fn old_syntax_quotes_and_unset_variables_as_htcondor() {
    let e = expand("executable = /bin/sh\narguments = -c \"echo hi\"\nqueue\n").unwrap_err();
    assert!(e.to_string().contains("not escaped"), "{e}");
    let ads = expand("executable = /bin/sh\narguments = say \\\"hi\\\"\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "say \"hi\"");
    let ads = expand("executable = /bin/x\narguments = $ENV(NOT_SET_ANYWHERE)\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Args"), "UNDEFINED");
}

/// File lists as HTCondor reads them: `""` is no files, an empty value
/// is not given.
#[test]
fn file_lists_in_quotes_or_empty() {
    let ads = expand("executable = /bin/x\ntransfer_output_files = \"\"\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "TransferOutput"), "");
    let ads = expand("executable = /bin/x\ntransfer_input_files =\nqueue\n").unwrap();
    assert!(ads[0].get("TransferInput").is_none());
    let ads = expand("executable = /bin/x\ntransfer_input_files = \"a, b\"\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "TransferInput"), "a,b");
}

/// Boolean commands read as HTCondor reads them: true/false/1/0 or an
/// expression; `yes` is neither.
#[test]
fn booleans_as_htcondor_reads_them() {
    let ads = expand("executable = /bin/x\nhold = TRUE && true\nqueue\n").unwrap();
    assert_eq!(i(&ads[0], "JobStatus"), 5);
    let e = expand("executable = /bin/x\nnice_user = yes\nqueue\n").unwrap_err();
    assert!(e.to_string().contains("nice_user"), "{e}");
    // `getenv = yes` is a list naming a variable `yes`, which is not set.
    let ads = expand("executable = /bin/x\ngetenv = yes\nqueue\n").unwrap();
    assert!(ads[0].get("Environment").is_none());
}

/// The submitter's files sized as condor_submit sizes an input: a file
/// rounded up to a KiB, a directory the sum of its files, its walk
/// stopped after the entries allowed.
#[test]
fn inputs_are_sized_as_htcondor_sizes_them() {
    let dir = std::env::temp_dir().join(format!("starling-size-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("d/e")).unwrap();
    std::fs::write(dir.join("f"), vec![0u8; 1500]).unwrap();
    std::fs::write(dir.join("d/a"), vec![0u8; 1000]).unwrap();
    std::fs::write(dir.join("d/e/b"), vec![0u8; 1000]).unwrap();
    let env = SystemEnvironment::default();
    assert_eq!(env.size_kib(&dir.join("f"), 10), (2, 0));
    assert_eq!(env.size_kib(&dir.join("missing"), 10), (0, 0));
    assert_eq!(env.size_kib(&dir.join("d"), 10), (2, 3));
    // Only `a` and `e` read: `b` is not counted.
    let (kib, read) = env.size_kib(&dir.join("d"), 2);
    assert_eq!(read, 2);
    assert!(kib <= 1, "{kib}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The ad names its submit file, as condor_submit writes it.
#[test]
fn the_ad_names_its_submit_file() {
    let ads = expand("executable = /bin/x\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "SubmitFile"), "job.sub");
}

/// A custom resource a letter away from a request command is warned of;
/// a real custom resource is not.
#[test]
fn a_mistyped_request_is_warned_of() {
    let d = super::parse(
        "job.sub",
        "executable = /bin/x\nrequest_memroy = 100\nrequest_foobar = 2\nqueue\n",
    )
    .unwrap();
    let w: Vec<String> = d.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("did you mean request_memory"), "{w:?}");
}

#[test]
fn a_parallel_job_is_one_proc_per_component_with_its_node_count() {
    let ads = expand(
        "universe = parallel\nexecutable = /bin/x\narguments = -n $(Node)\noutput = out.$(Node)\n\
         machine_count = 4\nqueue\nmachine_count = 2\ncomponent_domain = d1.testnet\n\
         co_allocation = best-fit\nrequest_cpus = 2\nqueue\n",
    )
    .unwrap();
    assert_eq!(ads.len(), 2);
    assert_eq!(i(&ads[0], "JobUniverse"), 11);
    assert_eq!(i(&ads[0], "MaxHosts"), 4);
    assert_eq!(i(&ads[0], "MinHosts"), 4);
    assert_eq!(s(&ads[0], "Arguments"), "-n #pArAlLeLnOdE#");
    assert!(s(&ads[0], "Out").ends_with("out.#pArAlLeLnOdE#"));
    assert!(ads[0].get("StarlingComponentDomain").is_none());
    assert_eq!(i(&ads[1], "MaxHosts"), 2);
    assert_eq!(i(&ads[1], "RequestCpus"), 2);
    assert_eq!(s(&ads[1], "StarlingComponentDomain"), "d1.testnet");
    assert_eq!(s(&ads[1], "StarlingCoallocation"), "best_fit");
    // Commands hold until changed: an empty component_domain undoes one.
    let d = expand(
        "universe = parallel\nexecutable = /bin/x\nmachine_count = 1\ncomponent_domain = d1\nqueue\n\
         component_domain =\nqueue\n",
    )
    .unwrap();
    assert_eq!(s(&d[0], "StarlingComponentDomain"), "d1");
    assert!(d[1].get("StarlingComponentDomain").is_none());
    // Not parallel: $(Node) is an undefined macro, empty.
    let ads = expand("executable = /bin/x\narguments = a$(Node)b\nqueue\n").unwrap();
    assert_eq!(s(&ads[0], "Arguments"), "ab");
    for (text, wanted) in [
        ("universe = parallel\nexecutable = /bin/x\nqueue\n", "machine_count: a parallel job needs one"),
        ("universe = parallel\nexecutable = /bin/x\nmachine_count = 0\nqueue\n", "machine_count: 0 is not within 1-128"),
        ("universe = parallel\nexecutable = /bin/x\nmachine_count = 129\nqueue\n", "not within 1-128"),
        ("universe = parallel\nexecutable = /bin/x\nmachine_count = many\nqueue\n", "\"many\" is not a whole number"),
        ("universe = parallel\nexecutable = /bin/x\nmachine_count = 2\nco_allocation = first\nqueue\n", "co_allocation: \"first\" is not worst_fit or best_fit"),
        ("universe = parallel\nexecutable = /bin/x\nmachine_count = 2\ncomponent_domain = a b\nqueue\n", "component_domain: \"a b\""),
        ("universe = mpi\nexecutable = /bin/x\nqueue\n", "use that"),
    ] {
        let e = expand(text).unwrap_err().to_string();
        assert!(e.contains(wanted), "{text:?}: {e}");
    }
}

#[test]
fn late_materialization_limits_are_written_as_htcondor_names_them() {
    let ads = expand("executable = /bin/x\nmax_materialize = 5\nmax_idle = 2\nqueue 10\n").unwrap();
    assert_eq!(ads.len(), 10);
    assert_eq!(i(&ads[9], "JobMaterializeLimit"), 5);
    assert_eq!(i(&ads[0], "JobMaterializeMaxIdle"), 2);
    let ads = expand("executable = /bin/x\nmaterialize_max_idle = 3\nqueue\n").unwrap();
    assert_eq!(i(&ads[0], "JobMaterializeMaxIdle"), 3);
    for (text, wanted) in [
        (
            "executable = /bin/x\nmax_materialize = 0\nqueue\n",
            "max_materialize: 0 is not within 1-",
        ),
        (
            "executable = /bin/x\nmax_idle = lots\nqueue\n",
            "max_idle: \"lots\" is not a whole number",
        ),
    ] {
        let e = expand(text).unwrap_err().to_string();
        assert!(e.contains(wanted), "{text:?}: {e}");
    }
}

#[test]
fn programs_named_in_the_file_run_only_when_the_submitter_allows_them() {
    let dir = Path::new("/work");
    let allowed = fake();
    let text = "executable = /bin/x\ninclude command : settings\nqueue x from echo-items |\n";
    let d = parse_with_includes("job.sub", text, dir, &allowed).unwrap();
    let ads = d.expand(1, dir, &allowed).unwrap();
    assert_eq!(ads.len(), 3, "one job per line of the program's output");
    assert_eq!(s(&ads[0], "Arguments"), "from-a-program");
    assert_eq!(i(&ads[2], "RequestCpus"), 2);
    // A program that fails is an error naming it and the line.
    let d = parse_with_includes(
        "job.sub",
        "executable = /bin/x\nqueue x from false |\n",
        dir,
        &allowed,
    )
    .unwrap();
    let e = d.expand(1, dir, &allowed).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.problem.contains("\"false\" failed"), "{e}");
    let e = parse_with_includes("job.sub", "include command : false\nqueue\n", dir, &allowed)
        .unwrap_err();
    assert!(
        e.problem.contains("include command : \"false\" failed"),
        "{e}"
    );
    // Not allowed: refused, saying how to allow it.
    let refused = NoCommands(fake());
    let e = parse_with_includes("job.sub", text, dir, &refused).unwrap_err();
    assert!(e.problem.contains("only with -allow-commands"), "{e}");
    let d = parse_with_includes(
        "job.sub",
        "executable = /bin/x\nqueue x from echo-items |\n",
        dir,
        &refused,
    )
    .unwrap();
    let e = d.expand(1, dir, &refused).unwrap_err();
    assert!(e.problem.contains("only with -allow-commands"), "{e}");
}

#[test]
fn a_program_is_run_bounded_and_its_failures_named() {
    let dir = std::env::temp_dir();
    assert_eq!(run_command("echo a; echo b", &dir, 100).unwrap(), "a\nb\n");
    let e = run_command("exit 3", &dir, 100).unwrap_err();
    assert!(e.contains("failed"), "{e}");
    let e = run_command("yes | head -c 1000", &dir, 100).unwrap_err();
    assert!(e.contains("more than 100 bytes"), "{e}");
}

/// HTCondor 25's retry of a job that went over its memory (`retry`), from
/// the submit file to the transform in the ad.
mod retry_memory {
    use std::path::Path;

    use super::super::{parse, SystemEnvironment};
    use crate::classad::{unparse, ClassAd, Expr, Value};

    fn ads(lines: &str) -> Result<Vec<ClassAd>, String> {
        let text = format!("executable = /bin/sh\n{lines}\nqueue\n");
        let env = SystemEnvironment {
            owner: "alice".into(),
            ..Default::default()
        };
        parse("job.sub", &text)
            .and_then(|d| d.expand(1, Path::new("/"), &env))
            .map_err(|e| e.to_string())
    }

    fn attr(ad: &ClassAd, name: &str) -> String {
        ad.get(name).map(unparse).unwrap_or_default()
    }

    /// The transform's text, its lines joined by ` | `.
    fn body(ad: &ClassAd) -> String {
        match ad.get("TransformBody_RequestMemory") {
            Some(Expr::Literal(Value::String(s))) => format!("\"{}\"", s.replace('\u{1e}', " | ")),
            _ => String::new(),
        }
    }

    #[test]
    fn each_form_writes_the_transform_htcondor_writes() {
        let one = &ads("request_memory = 1GB\nretry_request_memory = 2GB").unwrap()[0];
        assert_eq!(attr(one, "RequestMemory"), "1024");
        assert_eq!(attr(one, "TransformOnEvict"), "\"RequestMemory\"");
        assert_eq!(
            body(one),
            "\"REQUIREMENTS (VacateReasonCode==21 || VacateReasonCode == 34) && \
             VacateReasonSubCode == 102 | SET RequestMemory 2048\""
        );
        let ladder = &ads("request_memory = 512, 1G, 4G").unwrap()[0];
        assert_eq!(attr(ladder, "RequestMemory"), "512");
        assert_eq!(attr(ladder, "RetryRequestMemory"), "{ 1024,4096 }");
        assert!(body(ladder).contains(
            "EVALSET RequestMemory RetryRequestMemory[RetryRequestMemoryIndex?:0] | \
             EVALSET RetryRequestMemoryIndex"
        ));
        let capped = &ads(
            "request_memory = 1GB\nretry_request_memory_increase = 512MB\n\
             retry_request_memory_max = 2GB",
        )
        .unwrap()[0];
        assert_eq!(attr(capped, "NextRequestMemory"), "RequestMemory + 512");
        assert_eq!(attr(capped, "MaxRequestMemory"), "2048");
        assert!(body(capped)
            .ends_with("EVALSET RequestMemory MIN({NextRequestMemory, MaxRequestMemory})\""));
        // An increase without a maximum is applied once.
        let once = &ads("request_memory = 1GB\nretry_request_memory_increase = RequestMemory * 3")
            .unwrap()[0];
        assert!(
            body(once).ends_with("SET RequestMemory 3072\""),
            "{}",
            body(once)
        );
        // A request that is an expression is not retried (as in HTCondor).
        let expr =
            &ads("request_memory = 2 * 512 + 0 * Cpus\nretry_request_memory = 4GB").unwrap()[0];
        assert_eq!(attr(expr, "TransformOnEvict"), "");
    }

    #[test]
    fn bad_sizes_are_refused_naming_the_command() {
        for (lines, command, says) in [
            (
                "retry_request_memory = -512",
                "retry_request_memory",
                "negative",
            ),
            (
                "retry_request_memory = 9000000000000",
                "retry_request_memory",
                "more than any machine",
            ),
            (
                "retry_request_memory = 4GB, 2GB",
                "retry_request_memory",
                "increasing",
            ),
            (
                "retry_request_memory = lots (&",
                "retry_request_memory",
                "must be an expression or number",
            ),
            (
                "retry_request_memory_max = -1",
                "retry_request_memory_max",
                "negative",
            ),
            (
                "retry_request_memory_increase = 0",
                "retry_request_memory_increase",
                "positive",
            ),
            (
                "retry_request_memory_increase = -5MB",
                "retry_request_memory_increase",
                "positive",
            ),
            (
                "retry_request_memory_increase = Cpus * 2",
                "retry_request_memory_increase",
                "references RequestMemory",
            ),
            (
                "retry_request_memory_increase = RequestMemory * 1e30",
                "retry_request_memory_increase",
                "more than any machine",
            ),
            (
                "retry_request_memory_increase = RequestMemory * \"x\"",
                "retry_request_memory_increase",
                "integer",
            ),
            (
                "request_memory = 1G, 8G, 2G",
                "request_memory",
                "increasing",
            ),
        ] {
            let e = ads(&format!("request_memory = 1GB\n{lines}")).unwrap_err();
            assert!(
                e.contains(&format!("{command}:")) && e.contains(says),
                "{lines}: {e}"
            );
        }
    }
}
