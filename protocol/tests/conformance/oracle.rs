//! Starting and talking to `oracle.py` (HTCondor's `classad2`).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value as J;

pub(crate) struct Oracle {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

/// The oracle's Python: `STARLING_ORACLE_PYTHON`, else what
/// `scripts/oracle-venv.sh` installs (it is idempotent and prints the path).
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
    let stdout = String::from_utf8(out.stdout).expect("utf-8 path");
    stdout
        .lines()
        .last()
        .expect("venv python path")
        .trim()
        .into()
}

impl Oracle {
    pub(crate) fn start(strict: bool) -> Oracle {
        let mut cmd = Command::new(python());
        cmd.arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/conformance/oracle.py"
        ));
        if strict {
            cmd.arg("--strict");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting oracle.py");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Oracle {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    /// Sends all requests, then reads all answers (in order). Writing runs
    /// on a thread so that neither pipe fills while the other waits.
    pub(crate) fn ask_all(&mut self, requests: &[J]) -> Vec<J> {
        let first = self.next_id;
        let mut lines = String::new();
        for r in requests {
            let mut r = r.clone();
            r["id"] = J::from(self.next_id);
            self.next_id += 1;
            lines.push_str(&r.to_string());
            lines.push('\n');
        }
        let mut answers = Vec::with_capacity(requests.len());
        std::thread::scope(|s| {
            let stdin = &mut self.stdin;
            s.spawn(move || {
                stdin
                    .write_all(lines.as_bytes())
                    .expect("writing to oracle");
                stdin.flush().expect("flushing oracle");
            });
            let mut line = String::new();
            for i in 0..requests.len() {
                line.clear();
                let n = self.stdout.read_line(&mut line).expect("reading oracle");
                assert!(n > 0, "oracle exited early");
                let answer: J = serde_json::from_str(&line).expect("oracle answers JSON");
                assert_eq!(
                    answer["id"],
                    J::from(first + i as u64),
                    "oracle answered out of order"
                );
                answers.push(answer);
            }
        });
        answers
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
