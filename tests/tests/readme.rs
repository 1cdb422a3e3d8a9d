//! The book's walk-through, run as written: the shell block after the
//! marker `<!-- tests/tests/readme.rs runs the next block -->` in
//! [`WALKTHROUGH`] (the chapter "From one machine to two organisations",
//! which the README points newcomers to), run with bash (`-euo pipefail`,
//! as a careful reader would) in an empty directory with this build's
//! `starling` first on the `PATH`.
//! It makes two domains, admits three machines, starts their agents on
//! loopback, joins them by address, trusts each domain with a signed
//! policy and runs a chem job on a physics machine; the test checks what
//! the reader is told to expect: the job's output and where it ran.
//!
//! The block is bounded by a timeout, and every agent it started is
//! killed when the test ends, whether the block stopped them or not.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;

/// The chapter holding the tested block, from the repository's root.
const WALKTHROUGH: &str = "docs/book/src/operating/two-organisations.md";

/// The marker that precedes the tested block.
const MARKER: &str = "<!-- tests/tests/readme.rs runs the next block -->";

/// The shell block after [`MARKER`] in `chapter`.
fn walkthrough(chapter: &str) -> String {
    let after = chapter
        .split_once(MARKER)
        .unwrap_or_else(|| panic!("{WALKTHROUGH} has no line {MARKER}"))
        .1;
    let body = after
        .split_once("```sh\n")
        .expect("a ```sh block follows the marker")
        .1;
    body.split_once("\n```")
        .expect("the block is closed")
        .0
        .to_owned()
}

/// Kills the agents of the machines the block made, if they still run.
struct Agents<'a>(&'a Path);

impl Drop for Agents<'_> {
    fn drop(&mut self) {
        for machine in ["p1", "p2", "c1"] {
            if let Some(pid) = support::pid_of(&self.0.join(machine)) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

#[test]
fn the_readme_walkthrough_runs_a_job_across_two_organisations_as_written() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(WALKTHROUGH);
    let chapter = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} does not read: {e}", path.display()));
    let script = walkthrough(&chapter);
    let work = tempfile::tempdir().unwrap();
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_starling-e2e"), bin.join("starling")).unwrap();
    let walk = work.path().join("walk");
    std::fs::create_dir(&walk).unwrap();
    let _agents = Agents(&walk);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(&walk)
        .env("PATH", path)
        .env_remove("STARLING_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(240);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let logs: String = ["p1", "p2", "c1"]
        .iter()
        .map(|m| {
            let log = std::fs::read_to_string(walk.join(m).join("agent.out")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            format!(
                "--- {m}/agent.out (end)\n{}\n",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )
        })
        .collect();
    let said = format!("stdout:\n{stdout}\nstderr:\n{stderr}\n{logs}");
    assert!(
        out.status.success(),
        "the walk-through failed ({}):\n{said}",
        out.status
    );
    assert!(stdout.contains("hello from physics"), "{said}");
    assert!(
        stdout.lines().any(|l| l.trim() == "1 physics.example.org"),
        "the chem job ran in physics:\n{said}"
    );
}
