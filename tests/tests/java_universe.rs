//! The java universe on a real pool, as HTCondor users submit it
//! (`universe = java`, the class file as executable, the main class as the
//! first argument, `jar_files`, `java_vm_args`):
//!
//! - a machine whose `[java] program` does not run advertises no
//!   `HasJava`, never runs a java job, and `why` names the clause;
//! - the same machine given a JVM (a fake `java` that answers
//!   `-XshowSettings:properties -version` as a real one does, and
//!   otherwise prints its arguments) advertises `HasJava`, `JavaVendor`
//!   and `JavaVersion`, and runs the waiting job as HTCondor's java
//!   starter would: `java -classpath <sandbox>:<sandbox>/util.jar
//!   <JVM arguments> Hello <arguments>` in the sandbox, where the class
//!   and jar files were sent;
//! - so does a job with `should_transfer_files = NO`: its class and jar
//!   files still go with it (Starling has no shared file system);
//! - a java job without a main class is refused at submit, naming the
//!   command.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

/// A stand-in JVM: a real one's answer to the agent's probe, and for a
/// job its arguments, its working directory and what is there.
const FAKE_JAVA: &str = r#"#!/bin/sh
if [ "$1" = "-XshowSettings:properties" ] && [ "$2" = "-version" ]; then
    echo "Property settings:" >&2
    echo "    java.vendor = Starling Test Vendor" >&2
    echo "    java.version = 21.0.2" >&2
    echo 'openjdk version "21.0.2" 2024-01-16' >&2
    exit 0
fi
for a in "$@"; do echo "arg: $a"; done
echo "cwd: $(pwd)"
ls
"#;

/// The classpath the fake `java` was given for its sandbox, and every
/// argument it got, from what it printed (`cwd: DIR`, `arg: A` lines).
fn what_java_was_told(out: &str) -> (String, Vec<&str>) {
    let cwd = out
        .lines()
        .find_map(|l| l.strip_prefix("cwd: "))
        .unwrap_or_else(|| panic!("{out}"));
    let argv = out
        .lines()
        .filter_map(|l| l.strip_prefix("arg: "))
        .collect();
    (format!("{cwd}:{cwd}/util.jar"), argv)
}

/// Whether the sandbox listing the fake `java` printed holds the class
/// and the jar.
fn sent_class_and_jar(out: &str) -> bool {
    let listed: Vec<&str> = out.lines().collect();
    listed.contains(&"Hello.class") && listed.contains(&"util.jar")
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
fn java_jobs_run_only_where_a_jvm_is_advertised_with_its_classpath_class_and_arguments() {
    let mut args: Vec<&str> = Vec::new();
    if rustix::process::geteuid().is_root() {
        args.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    let pool = Pool::up_as(None, 1, &args);
    let work = shared_dir();
    let dir = work.path();
    // A machine whose JVM is missing (whatever this test machine has).
    let _no_jvm = pool.reconfigure(0, "java", &[("program", "/nonexistent/bin/java".into())], 0);
    assert_eq!(
        pool.machine_af(0, &["HasJava"]),
        ["undefined"],
        "{}",
        pool.log_tail(0)
    );
    std::fs::write(dir.join("Hello.class"), "\u{ca}not really a class\n").unwrap();
    std::fs::create_dir(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/util.jar"), "PK not really a jar\n").unwrap();
    // No main class: refused, naming the command; nothing queued.
    std::fs::write(
        dir.join("bad.sub"),
        "universe = java\nexecutable = Hello.class\nqueue\n",
    )
    .unwrap();
    let out = pool.run(0, dir, &["submit", "bad.sub"]);
    assert!(
        !out.status.success(),
        "a java job without a class was taken"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("arguments") && err.contains("class"), "{err}");
    std::fs::write(
        dir.join("hello.sub"),
        "universe     = java\n\
         executable   = Hello.class\n\
         jar_files    = lib/util.jar\n\
         java_vm_args = -Xmx64m -Dmode=batch\n\
         arguments    = \"Hello 'two words' -v\"\n\
         output       = hello.out\n\
         error        = hello.err\n\
         queue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "hello.sub"]);
    // Without file transfer, as HTCondor's tests often say: the class and
    // jar files still go with it (no shared file system).
    std::fs::write(
        dir.join("plain.sub"),
        "universe   = java\n\
         executable = Hello.class\n\
         jar_files  = lib/util.jar\n\
         arguments  = Hello plain\n\
         should_transfer_files = NO\n\
         output     = plain.out\n\
         queue\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "plain.sub"]);
    // Idle, and `why` says the machine lacks a JVM.
    let why = wait_for(Duration::from_secs(30), "why naming HasJava", || {
        let why = pool.ok(0, dir, &["why", "1.0"]);
        why.contains("HasJava").then_some(why)
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        pool.af(0, false, &["JobStatus"]),
        [["1"], ["1"]],
        "the java job did not wait: {why}"
    );
    assert!(!dir.join("hello.out").exists(), "{why}");

    // The same machine with a JVM runs it.
    let fake = dir.join("java");
    script(&fake, FAKE_JAVA);
    let _jvm = pool.reconfigure(
        0,
        "java",
        &[("program", fake.to_string_lossy().into_owned().into())],
        0,
    );
    let ad = wait_for(Duration::from_secs(30), "HasJava in the machine ad", || {
        let ad = pool.machine_af(0, &["HasJava", "JavaVersion", "JavaVendor"]);
        (ad.first().map(String::as_str) == Some("true")).then_some(ad)
    });
    assert_eq!(ad, ["true", "21.0.2", "Starling", "Test", "Vendor"]);
    pool.wait_queue_empty(0, Duration::from_secs(120));
    let out = std::fs::read_to_string(dir.join("hello.out"))
        .unwrap_or_else(|e| panic!("no output ({e}): {}", pool.log_tail(0)));
    let (classpath, argv) = what_java_was_told(&out);
    assert_eq!(
        argv,
        [
            "-classpath",
            classpath.as_str(),
            "-Xmx64m",
            "-Dmode=batch",
            "Hello",
            "two words",
            "-v"
        ],
        "{out}"
    );
    // The class and jar files were sent into the sandbox.
    assert!(sent_class_and_jar(&out), "{out}");
    let plain = std::fs::read_to_string(dir.join("plain.out")).unwrap();
    let (classpath, argv) = what_java_was_told(&plain);
    assert_eq!(
        argv,
        ["-classpath", classpath.as_str(), "Hello", "plain"],
        "{plain}"
    );
    assert!(sent_class_and_jar(&plain), "{plain}");
    let mut history = pool.af(0, true, &["ClusterId", "JobUniverse", "ExitCode"]);
    history.sort();
    assert_eq!(history, [["1", "10", "0"], ["2", "10", "0"]]);
}
