//! The `starling` command as a user runs it: `eval` and `match` on real
//! files, their output and exit codes.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn starling() -> Command {
    Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
}

fn run(cmd: &mut Command, stdin: Option<&str>) -> Output {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("starting starling");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().expect("starling finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("starling-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn eval_prints_one_value_per_expression() {
    let o = run(
        starling().args([
            "eval",
            "--my",
            "[Cpus = 8; Name = \"slot1@a\"]",
            "--target",
            "[RequestCpus = 2]",
            "TARGET.RequestCpus <= Cpus",
            "strcat(Name, \"/\", 1 + 1)",
            "{1, 2}[5]",
            "-1",
            "RequestCpus",
        ]),
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "true\n\"slot1@a/2\"\nerror\n-1\n2\n");
}

#[test]
fn strict_mode_does_not_fall_back_to_target() {
    let o = run(
        starling().args([
            "eval", "--strict", "--my", "[a = 1]", "--target", "[b = 2]", "b",
        ]),
        None,
    );
    assert_eq!(stdout(&o), "undefined\n");
}

#[test]
fn eval_stdin_keeps_order_and_fails_at_the_end_on_bad_lines() {
    let o = run(
        starling().args(["eval", "--stdin"]),
        Some("1 + 1\n(((\n\"x\" == \"X\"\n"),
    );
    assert_eq!(stdout(&o), "2\nerror\ntrue\n");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("expression 2") && err.contains("line 1, column 4"),
        "{err}"
    );
}

#[test]
fn eval_rejects_a_bad_ad_naming_it() {
    let o = run(starling().args(["eval", "--my", "[a = ]", "1"]), None);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("--my") && err.contains("column"), "{err}");
}

#[test]
fn match_lists_the_best_machines_by_job_rank_then_machine_rank() {
    let dir = temp_dir("rank");
    let machines = dir.join("machines.ads");
    std::fs::write(
        &machines,
        "Name = \"slow\"\nCpus = 4\nMips = 100\nRequirements = TARGET.RequestCpus <= Cpus\nRank = 0\n\n\
         Name = \"fast\"\nCpus = 4\nMips = 900\nRequirements = TARGET.RequestCpus <= Cpus\nRank = 0\n\n\
         Name = \"tiny\"\nCpus = 1\nMips = 5000\nRequirements = TARGET.RequestCpus <= Cpus\n\n\
         Name = \"fast-fond\"\nCpus = 4\nMips = 900\nRequirements = true\nRank = TARGET.Owner == \"alice\"\n",
    )
    .unwrap();
    let job = "[Owner = \"alice\"; RequestCpus = 2; Requirements = TARGET.Cpus >= RequestCpus; Rank = TARGET.Mips]";
    let o = run(
        starling()
            .args(["match", "--job", job, "--machines"])
            .arg(&machines),
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "4 machines, 3 match");
    let names: Vec<&str> = lines[2..]
        .iter()
        .map(|l| l.split_whitespace().last().unwrap())
        .collect();
    assert_eq!(names, ["fast-fond", "fast", "slow"]);

    let o = run(
        starling()
            .args(["match", "--json", "--top", "1", "--job", job, "--machines"])
            .arg(&machines),
        None,
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["machines"], 4);
    assert_eq!(doc["matched"], 3);
    assert_eq!(doc["top"][0]["Name"], "fast-fond");
}

#[test]
fn match_reports_where_a_machine_file_is_broken() {
    let dir = temp_dir("broken");
    let machines = dir.join("machines.ads");
    std::fs::write(
        &machines,
        "Name = \"a\"\nCpus = 4\n\nName = \"b\"\nCpus = (4\n",
    )
    .unwrap();
    let o = run(
        starling()
            .args(["match", "--job", "[Requirements = true]", "--machines"])
            .arg(&machines),
        None,
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("ad 2") && err.contains("line 5"), "{err}");
}

#[test]
fn match_streams_a_million_machine_ads() {
    let dir = temp_dir("million");
    let path = dir.join("machines.ads");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for i in 0..1_000_000u32 {
            writeln!(
                f,
                "Name = \"slot1@n{i}\"\nCpus = {}\nRequirements = TARGET.RequestCpus <= Cpus\n",
                i % 16
            )
            .unwrap();
        }
    }
    let job = "[RequestCpus = 12; Requirements = TARGET.Cpus >= RequestCpus; Rank = TARGET.Cpus]";
    let o = run(
        starling()
            .args(["match", "--top", "2", "--json", "--job", job, "--machines"])
            .arg(&path),
        None,
    );
    std::fs::remove_file(&path).unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["machines"], 1_000_000);
    assert_eq!(doc["matched"], 250_000);
    // Cpus 15 first, ties in file order.
    assert_eq!(doc["top"][0]["Name"], "slot1@n15");
    assert_eq!(doc["top"][1]["Name"], "slot1@n31");
}

#[test]
fn a_command_whose_output_is_closed_ends_quietly() {
    use std::io::Read;
    let dir = temp_dir("closed-output");
    // More output than a pipe holds, so that the command is still
    // writing when the reader goes away (`status ... | head -1`).
    let mut ads = String::new();
    for i in 0..20_000 {
        ads.push_str(&format!(
            "MyType = \"Machine\"\nName = \"slot1@machine{i:05}.example.org\"\n\n"
        ));
    }
    let file = dir.join("machines.ads");
    std::fs::write(&file, ads).unwrap();
    let mut child = starling()
        .args(["status", "-ads", file.to_str().unwrap(), "-af", "Name"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 32];
    out.read_exact(&mut first).unwrap();
    assert!(first.starts_with(b"slot1@machine"));
    drop(out);
    let done = child.wait_with_output().unwrap();
    assert_eq!(
        stderr(&done),
        "",
        "the command complained of its closed output ({})",
        done.status
    );
}

/// Standard output whose reader is already gone (`... | head` once head
/// has exited): the first write fails with a broken pipe.
fn closed_output() -> Stdio {
    let (reader, writer) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(reader);
    std::os::fd::OwnedFd::from(writer).into()
}

#[test]
fn demo_with_its_output_closed_does_not_panic() {
    // `demo | head`: demo keeps SIGPIPE ignored (it talks to agents), so
    // its printing must survive the closed pipe. A pool directory that is
    // a file makes it fail right after its first line.
    let dir = temp_dir("demo-closed");
    std::fs::write(dir.join("pool"), "not a directory").unwrap();
    let done = starling()
        .args(["demo", "--dir", dir.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(closed_output())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = stderr(&done);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("starting the demo pool"), "{err}");
    assert_eq!(done.status.code(), Some(2), "{err}");
}
