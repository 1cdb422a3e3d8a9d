//! Bad values are refused at the door (issue 27, item 5), on a real
//! one-agent pool and with the real command line:
//!
//! - submit files with control characters in names, non-finite or absurd
//!   requests, paths longer than the system allows, or a missing
//!   `initialdir` are refused with the file, the line and the key, and
//!   nothing is queued (nor any directory made);
//! - `userprio -setfactor` with an infinite, NaN or absurd factor, a user
//!   name holding a newline or a short name no user has (unless
//!   `-force`), and `hold -reason` / `qedit` with a newline, are refused;
//! - an agent whose installed certificate does not verify, whose
//!   `agent.key` no longer matches its `# agent id` line, or whose
//!   `agent.key` is a directory refuses to start, naming the file and the
//!   reason.
//!
//! Every wait has a deadline; every process started is killed when the
//! test ends.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;

use support::*;

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_submit_files_are_refused_naming_the_line_and_nothing_is_queued() {
    let pool = Pool::up(1);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let long = "p".repeat(10_000);
    let gone = dir.join("no-such-dir");
    let cases: Vec<(&str, String, usize, &str, &str)> = vec![
        // name, the line after `executable`, its line, the key, the problem.
        ("tab", "batch_name = a\tb".into(), 2, "batch_name", "a tab"),
        (
            "escape",
            "accounting_group = g\u{1b}[2J".into(),
            2,
            "accounting_group",
            "an escape",
        ),
        (
            "newline",
            "+JobBatchName = \"x\\ny\"".into(),
            2,
            "+JobBatchName",
            "a newline",
        ),
        (
            "nan",
            "request_disk = nan".into(),
            2,
            "request_disk",
            "not a finite number",
        ),
        (
            "inf",
            "request_memory = inf".into(),
            2,
            "request_memory",
            "not a finite number",
        ),
        (
            "huge",
            "request_cpus = 1e308".into(),
            2,
            "request_cpus",
            "more than any machine has",
        ),
        (
            "negative",
            "request_memory = -512".into(),
            2,
            "request_memory",
            "negative",
        ),
        (
            "long-output",
            format!("output = {long}"),
            2,
            "output",
            "PATH_MAX",
        ),
        (
            "long-error",
            format!("error = {long}"),
            2,
            "error",
            "PATH_MAX",
        ),
        ("long-log", format!("log = {long}"), 2, "log", "PATH_MAX"),
        (
            "long-inputs",
            format!("transfer_input_files = {long}"),
            2,
            "transfer_input_files",
            "PATH_MAX",
        ),
        (
            "long-initialdir",
            format!("initialdir = {long}"),
            2,
            "initialdir",
            "PATH_MAX",
        ),
        (
            "long-name",
            format!("output = {}", "n".repeat(300)),
            2,
            "output",
            "NAME_MAX",
        ),
        (
            "missing-initialdir",
            format!("initialdir = {}", gone.display()),
            2,
            "initialdir",
            "does not exist",
        ),
        (
            "missing-at-root",
            "initialdir = /starling-no-such-initialdir".into(),
            2,
            "initialdir",
            "does not exist",
        ),
        (
            "missing-output-dir",
            "output = no-such-dir/out.txt".into(),
            2,
            "output",
            "does not exist",
        ),
        (
            "missing-log-dir",
            "log = no-such-dir/job.log".into(),
            2,
            "log",
            "does not exist",
        ),
        (
            "unterminated-arguments",
            "arguments = \"one two".into(),
            2,
            "arguments",
            "unterminated",
        ),
        (
            "unparseable-memory",
            "request_memory = lots".into(),
            2,
            "request_memory",
            "lots",
        ),
        (
            "unparseable-disk",
            "request_disk = 3 furlongs".into(),
            2,
            "request_disk",
            "furlongs",
        ),
        (
            "missing-executable",
            "executable = no-such-program.sh".into(),
            2,
            "executable",
            "does not exist",
        ),
        (
            "missing-input",
            "transfer_input_files = /bin/true, no-such-input.dat".into(),
            2,
            "transfer_input_files",
            "no-such-input.dat does not exist",
        ),
    ];
    for (name, line, at, key, problem) in &cases {
        let file = format!("{name}.sub");
        std::fs::write(
            dir.join(&file),
            format!("executable = /bin/true\n{line}\nqueue\n"),
        )
        .unwrap();
        let out = pool.run(0, dir, &["submit", &file]);
        let err = stderr_of(&out);
        assert!(!out.status.success(), "{name}: queued:\n{err}");
        assert!(
            err.contains(&format!("{file}:{at}: {key}: ")),
            "{name}: the message names the file, line and key: {err}"
        );
        assert!(err.contains(problem), "{name}: {err}");
        assert!(err.len() < 1000, "{name}: the message is short: {err}");
        eprintln!("{name}: {}", err.trim_end());
    }
    assert!(pool.af(0, false, &["ProcId"]).is_empty(), "nothing queued");
    assert!(!gone.exists(), "the missing initialdir was not made");
    assert!(!Path::new("/starling-no-such-initialdir").exists());

    // The queue prints one line per cluster still: a good job beside them.
    std::fs::write(
        dir.join("good.sub"),
        "executable = /bin/true\nbatch_name = fine\nhold = true\nqueue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "good.sub"]);
    let q = pool.ok(0, dir, &["q"]);
    assert_eq!(q.lines().filter(|l| l.contains("fine")).count(), 1, "{q}");

    // A reason or an edited name with a newline.
    for args in [
        vec!["hold", "1.0", "-reason", "two\nlines"],
        vec!["qedit", "1.0", "JobBatchName", "\"x\\ny\""],
    ] {
        let out = pool.run(0, dir, &args);
        let err = stderr_of(&out);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(err.contains("a newline"), "{args:?}: {err}");
    }
    let names = pool.af(0, false, &["JobBatchName"]);
    assert_eq!(names, vec![vec!["fine".to_owned()]]);

    // Priority factors: finite, 1 to 1e9; user names on one line.
    for (user, factor, problem) in [
        ("bob@x", "1e308", "above 1e9"),
        ("bob@x", "inf", "not a finite number"),
        ("bob@x", "nan", "not a finite number"),
        ("bo\nb@x", "10", "a newline"),
        ("bob@x", "10", "no such user"),
        ("bob", "10", "no such user: bob"),
    ] {
        let out = pool.run(0, dir, &["userprio", "-setfactor", user, factor]);
        let err = stderr_of(&out);
        assert!(!out.status.success(), "{user:?} {factor} accepted");
        assert!(err.contains(problem), "{user:?} {factor}: {err}");
    }
    let table = pool.ok(0, dir, &["userprio", "-allusers"]);
    assert!(!table.contains("bob"), "no factor was set: {table}");
    // Ahead of bob's first job, said so; then bob is a user (a factor
    // is set) and needs no -force.
    let forced = pool.run(0, dir, &["userprio", "-setfactor", "bob", "10", "-force"]);
    assert!(forced.status.success(), "{}", stderr_of(&forced));
    assert!(
        stderr_of(&forced).contains("bob has no usage recorded yet"),
        "{}",
        stderr_of(&forced)
    );
    wait_for(
        Duration::from_secs(30),
        "bob is known by his factor",
        || {
            pool.run(0, dir, &["userprio", "-setfactor", "bob", "20"])
                .status
                .success()
                .then_some(())
        },
    );
}

/// Runs `starling agent` on the data directory `data` and returns what it
/// said, once it has exited (it must, within 30 s) unsuccessfully.
fn refused_start(data: &Path) -> String {
    let config = data.with_extension("toml");
    std::fs::write(
        &config,
        "[network]\nmdns = false\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\n",
    )
    .unwrap();
    let log = data.with_extension("log");
    let out = std::fs::File::create(&log).unwrap();
    let mut agent = Reap(
        Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
            .args(["agent", "--data-dir", data.to_str().unwrap(), "--config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = agent.0.try_wait().unwrap() {
            break status;
        }
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            Instant::now() < deadline,
            "the agent on {} still runs after 30 s:\n{said}",
            data.display()
        );
        std::thread::sleep(POLL);
    };
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "exited with {status}:\n{said}");
    eprintln!("{}: {}", data.display(), said.trim_end());
    assert!(
        !data.join("agent.pid").exists(),
        "a refused agent leaves no pid file"
    );
    said
}

/// A data directory with its key made, by `starling id`.
fn data_dir(root: &Path, name: &str) -> std::path::PathBuf {
    let data = root.join(name);
    ok_in(root, &["id", "--data-dir", data.to_str().unwrap()]);
    data
}

#[test]
fn an_agent_with_a_bad_certificate_or_key_refuses_to_start() {
    use starling_protocol::identity::{armor, Keypair};
    let root = tempfile::tempdir().unwrap();

    // A certificate cut short: the file and the reason.
    let data = data_dir(root.path(), "cut");
    let domain_key = root.path().join("physics.key");
    ok_in(
        root.path(),
        &[
            "domain",
            "init",
            "physics",
            "--out",
            domain_key.to_str().unwrap(),
        ],
    );
    admit_into(root.path(), &data, &domain_key, "execute,submit");
    let installed = data.join("certs/physics.cert");
    let text = std::fs::read_to_string(&installed).unwrap();
    // Change one base64 character in the middle of the block.
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let middle = lines
        .iter()
        .position(|l| l.starts_with("-----BEGIN"))
        .unwrap()
        + 2;
    let flipped: String = lines[middle]
        .chars()
        .enumerate()
        .map(|(i, c)| match (i, c) {
            (10, 'A') => 'B',
            (10, _) => 'A',
            (_, c) => c,
        })
        .collect();
    lines[middle] = flipped;
    std::fs::write(&installed, lines.join("\n") + "\n").unwrap();
    let said = refused_start(&data);
    assert!(
        said.contains(&format!("the certificate {}", installed.display())),
        "names the file: {said}"
    );
    assert!(said.contains("cannot be used"), "{said}");
    assert!(!said.contains("personal-"), "no personal domain: {said}");

    // Junk in certs/.
    let data = data_dir(root.path(), "junk");
    std::fs::create_dir_all(data.join("certs")).unwrap();
    std::fs::write(data.join("certs/junk.cert"), "not a certificate\n").unwrap();
    let said = refused_start(&data);
    assert!(said.contains("junk.cert cannot be used"), "{said}");

    // A key that no longer matches its `# agent id` line.
    let data = data_dir(root.path(), "swapped");
    let key_path = data.join("agent.key");
    let text = std::fs::read_to_string(&key_path).unwrap();
    let comment: String = text
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let stranger = Keypair::from_seed(&[7; 32]);
    std::fs::write(
        &key_path,
        format!(
            "{comment}{}",
            armor::armor("AGENT KEY", &stranger.seed(), &[])
        ),
    )
    .unwrap();
    let said = refused_start(&data);
    assert!(said.contains(&key_path.display().to_string()), "{said}");
    assert!(said.contains("# agent id"), "{said}");
    assert!(said.contains(&stranger.agent_id().to_string()), "{said}");

    // agent.key is a directory.
    let data = root.path().join("dir-key");
    std::fs::create_dir_all(data.join("agent.key")).unwrap();
    let said = refused_start(&data);
    assert!(said.contains("is a directory, not a key file"), "{said}");
    assert!(!said.contains("mode 755"), "{said}");
}
