//! Real processes in real sandboxes.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use starling_protocol::transfer::{File, FileName, Hash, MAX_CHUNK_LEN};

use super::files::{self, AssembleError, Assembler};
use super::*;

/// Every wait in these tests ends within this.
/// These tests start real processes, process groups, cgroups and slot
/// accounts, and some stop, freeze or kill a whole family: run in parallel,
/// one test's family could take in another's job (seen as a job that never
/// answered its SIGTERM). One at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const LIMIT: Duration = Duration::from_secs(20);

fn sandbox(root: &std::path::Path) -> Sandbox {
    Sandbox::create(root, "job").unwrap()
}

async fn run(spec: Spec) -> Outcome {
    let mut running = start(spec).await.unwrap();
    tokio::time::timeout(LIMIT, running.wait())
        .await
        .expect("the job ends")
}

fn sh(sandbox: &Sandbox, script: &str) -> Spec {
    let mut spec = Spec::new(sandbox, PathBuf::from("/bin/sh"));
    spec.args = vec!["-c".into(), script.into()];
    spec
}

#[tokio::test]
async fn exit_code_streams_and_environment_are_reported() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let mut spec = sh(&sb, "echo out $GREETING; echo err >&2; pwd; exit 7");
    spec.env = vec![("GREETING".into(), "hi".into())];
    let outcome = run(spec).await;
    assert_eq!(outcome.exit, Exit::Code(7));
    let out = std::fs::read_to_string(sb.stdout()).unwrap();
    assert!(out.starts_with("out hi\n"), "{out}");
    assert!(
        out.contains(sb.path().to_str().unwrap()),
        "runs in its sandbox: {out}"
    );
    assert_eq!(std::fs::read_to_string(sb.stderr()).unwrap(), "err\n");
    let report = outcome.report();
    assert_eq!(
        (report.exit_code, report.signal, report.hold),
        (Some(7), None, None)
    );
}

#[tokio::test]
async fn a_signal_is_reported_as_such() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let outcome = run(sh(&sb, "kill -TERM $$")).await;
    assert_eq!(
        outcome.exit,
        Exit::Signal {
            signal: 15,
            core_dumped: false
        }
    );
    assert_eq!(outcome.report().signal, Some(15));
}

#[tokio::test]
async fn a_missing_or_unrunnable_executable_is_a_start_error_with_hold_code_6() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let e = start(Spec::new(&sb, PathBuf::from("/no/such/program")))
        .await
        .unwrap_err();
    assert_eq!(e.hold_code(), HoldCode::FailedToCreateProcess);
    assert_eq!(e.hold_code().code(), 6);
    assert_eq!(e.hold_subcode(), 2, "ENOENT");
    assert!(e.to_string().contains("/no/such/program"), "{e}");
    let text = sb.path().join("data.txt");
    std::fs::write(&text, "not a program").unwrap();
    let e = start(Spec::new(&sb, text)).await.unwrap_err();
    assert_eq!(e.hold_subcode(), 13, "EACCES: {e}");
}

#[tokio::test]
async fn a_job_over_its_memory_is_killed_and_held_with_code_34() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let mut spec = sh(
        &sb,
        "python3 -c 'x = bytearray(400 << 20); import time; time.sleep(10)' \
         || (x=$(head -c 400000000 /dev/zero | tr '\\0' a); sleep 10)",
    );
    spec.request_memory_mib = 64;
    let outcome = run(spec).await;
    assert!(outcome.memory_exceeded, "{outcome:?}");
    assert!(outcome.peak_memory_kib > 64 * 1024);
    let (code, subcode, reason) = outcome.hold().unwrap();
    assert_eq!(
        (code.code(), subcode),
        (34, 102),
        "HTCondor's codes for memory"
    );
    assert!(reason.contains("memory limit of 64 megabytes"), "{reason}");
    assert_eq!(outcome.report().hold.unwrap().code, 34);
}

#[tokio::test]
async fn suspend_stops_the_job_and_terminate_reaches_a_job_ignoring_sigterm() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let ticks = sb.path().join("ticks");
    let script = format!(
        "trap '' TERM; while true; do echo t >> {}; sleep 0.1; done",
        ticks.display()
    );
    let mut running = start(sh(&sb, &script)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    running.suspend().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let frozen = std::fs::read_to_string(&ticks).unwrap().len();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        std::fs::read_to_string(&ticks).unwrap().len(),
        frozen,
        "stopped"
    );
    running.resume().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        std::fs::read_to_string(&ticks).unwrap().len() > frozen,
        "going again"
    );
    tokio::time::timeout(LIMIT, running.terminate(Duration::from_millis(300)))
        .await
        .expect("terminate ends");
    let outcome = running.wait().await;
    assert!(
        matches!(outcome.exit, Exit::Signal { signal: 9, .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn asking_a_job_to_leave_signals_it_once() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let got = sb.path().join("got");
    let ready = sb.path().join("ready");
    // Each SIGTERM is noted; the job leaves a second after the first, as
    // a job saving its checkpoint would. `left` is set before `ready`
    // appears: a SIGTERM between the two would otherwise be undone, and
    // the job never leave.
    let script = format!(
        "trap 'echo term >> {got}; left=1' TERM; left=0; touch {ready}; \
         while [ $left -eq 0 ]; do sleep 0.05; done; sleep 1; exit 85",
        got = got.display(),
        ready = ready.display()
    );
    let mut running = start(sh(&sb, &script)).await.unwrap();
    while !ready.exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    running.ask_to_leave(Signal::TERM);
    let outcome = tokio::time::timeout(LIMIT, running.wait()).await.unwrap();
    assert!(matches!(outcome.exit, Exit::Code(85)), "{outcome:?}");
    assert_eq!(std::fs::read_to_string(&got).unwrap(), "term\n");
}

#[tokio::test]
async fn dropping_a_running_job_kills_what_it_started() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let pidfile = sb.path().join("child");
    let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let running = start(sh(&sb, &script)).await.unwrap();
    let child: i32 = loop {
        if let Ok(t) = std::fs::read_to_string(&pidfile) {
            if let Ok(p) = t.trim().parse() {
                break p;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    drop(running);
    let gone = tokio::time::timeout(LIMIT, async {
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            if stat.is_empty() || stat.contains(") Z ") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the job's child {child} outlived it");
}

#[tokio::test]
async fn outputs_are_the_new_and_changed_files_or_those_asked_for() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let mut sb = sandbox(root.path());
    std::fs::write(sb.path().join("input.txt"), "in").unwrap();
    std::fs::write(sb.path().join("kept.txt"), "same").unwrap();
    sb.snapshot_inputs().unwrap();
    let outcome = run(sh(
        &sb,
        "sleep 0.01; echo more >> input.txt; echo r > result.txt; echo x",
    ))
    .await;
    assert_eq!(outcome.exit, Exit::Code(0));
    let names: Vec<String> = sb
        .outputs(None)
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["input.txt", "result.txt"]);
    let e = sb.outputs(Some(&["missing.txt".to_owned()])).unwrap_err();
    assert!(e.to_string().contains("missing.txt"), "{e}");
    assert!(sb.outputs(Some(&["../escape".to_owned()])).is_err());
    // A read-only directory the job left does not stop the clean-up.
    std::fs::create_dir(sb.path().join("ro")).unwrap();
    std::fs::write(sb.path().join("ro/f"), "x").unwrap();
    std::fs::set_permissions(
        sb.path().join("ro"),
        std::os::unix::fs::PermissionsExt::from_mode(0o500),
    )
    .unwrap();
    let path = sb.path().to_path_buf();
    sb.remove().unwrap();
    assert!(!path.exists());
}

fn announced(name: &str, data: &[u8]) -> File {
    File::new(
        FileName::new(name).unwrap(),
        data.len() as u64,
        Hash::from_bytes(*blake3::hash(data).as_bytes()),
        0o644,
    )
    .unwrap()
}

#[test]
fn the_assembler_builds_files_chunk_by_chunk_and_refuses_what_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let big = vec![7u8; MAX_CHUNK_LEN as usize + 10];
    let files = vec![announced("a/big.bin", &big), announced("empty", b"")];
    let mut asm = Assembler::new(dir.path(), files.clone(), 1 << 30).unwrap();
    assert_eq!(asm.next_request(), Some((0, 0, MAX_CHUNK_LEN)));
    assert!(matches!(
        asm.chunk(0, 5, &big[..5]),
        Err(AssembleError::OutOfOrder { .. })
    ));
    assert!(matches!(
        asm.chunk(1, 0, b""),
        Err(AssembleError::Unexpected { .. })
    ));
    assert!(asm
        .chunk(0, 0, &big[..MAX_CHUNK_LEN as usize])
        .unwrap()
        .is_none());
    assert!(
        !dir.path().join("a/big.bin").exists(),
        "not in place before it is whole"
    );
    assert!(matches!(
        asm.chunk(0, u64::from(MAX_CHUNK_LEN), &[7u8; 11]),
        Err(AssembleError::TooLong { .. })
    ));
    let done = asm
        .chunk(0, u64::from(MAX_CHUNK_LEN), &big[MAX_CHUNK_LEN as usize..])
        .unwrap();
    assert_eq!(done.map(|f| f.name.as_str()), Some("a/big.bin"));
    assert_eq!(asm.next_request(), Some((1, 0, 0)));
    asm.chunk(1, 0, b"").unwrap();
    assert!(asm.is_complete());
    assert_eq!(std::fs::read(dir.path().join("a/big.bin")).unwrap(), big);

    // A corrupted file never appears; a budget bounds the total.
    let mut asm = Assembler::new(dir.path(), vec![announced("c", b"good")], 100).unwrap();
    assert!(matches!(
        asm.chunk(0, 0, b"evil"),
        Err(AssembleError::HashMismatch { .. })
    ));
    assert!(!dir.path().join("c").exists());
    assert!(matches!(
        Assembler::new(dir.path(), vec![announced("d", &big)], 100),
        Err(AssembleError::OverBudget { .. })
    ));
}

#[test]
fn offered_files_are_listed_with_their_hash_and_read_in_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"hello world").unwrap();
    let listed = files::offer(&[(FileName::new("f").unwrap(), path.clone())]).unwrap();
    assert_eq!(listed[0], announced("f", b"hello world"));
    assert_eq!(files::read_chunk(&path, 6, 100).unwrap(), b"world");
    let e = files::offer(&[(FileName::new("g").unwrap(), dir.path().join("g"))]).unwrap_err();
    assert!(e.to_string().contains("/g"), "{e}");
}

#[tokio::test]
async fn a_sweep_kills_jobs_left_running_and_removes_their_sandboxes() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let left = sandbox(root.path());
    let mut running = start(sh(&left, "sleep 30")).await.unwrap();
    let kept = Sandbox::create(root.path(), "kept").unwrap();
    let removed = Sandbox::sweep(root.path(), &["kept"]).unwrap();
    assert_eq!(removed, 1);
    assert!(!left.path().exists() && kept.path().exists());
    let outcome = tokio::time::timeout(LIMIT, running.wait())
        .await
        .expect("killed");
    assert!(
        matches!(outcome.exit, Exit::Signal { signal: 9, .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn as_root_a_job_runs_as_the_configured_account() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    if rustix::process::getuid().as_raw() != 0 {
        return; // only root can switch users
    }
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let nobody = account::Account::resolve("nobody").unwrap();
    nobody.own(sb.path()).unwrap();
    let mut spec = sh(&sb, "id -u; id -G; touch made-here");
    spec.account = Some(nobody.clone());
    let outcome = run(spec).await;
    assert_eq!(outcome.exit, Exit::Code(0));
    let out = std::fs::read_to_string(sb.stdout()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], nobody.uid.to_string());
    assert_eq!(
        lines[1],
        nobody.gid.to_string(),
        "no supplementary groups of root"
    );
    assert!(sb.path().join("made-here").exists());
}

#[test]
fn an_executable_still_open_for_writing_elsewhere_is_started_once_it_closes() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("job.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Held open for writing, as a forked child of another thread holds a
    // just-written executable until its own exec: exec says ETXTBSY.
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&script)
        .unwrap();
    let mut command = Command::new(&script);
    let busy = spawn_retrying_busy_text(&mut command).unwrap_err();
    assert_eq!(
        busy.raw_os_error(),
        Some(rustix::io::Errno::TXTBSY.raw_os_error())
    );
    // Closed a moment later: the start goes through.
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(writer);
    });
    let status = spawn_retrying_busy_text(&mut command)
        .expect("started once the writer closed")
        .wait()
        .unwrap();
    assert!(status.success());
    closer.join().unwrap();
}

/// Isolation as a root agent has it: cgroups of `version` (skipped, with
/// a message, where the machine has none or this is not root).
fn confined(version: cgroup::Version, name: &str) -> Option<Isolation> {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: cgroups need root");
        return None;
    }
    match cgroup::Cgroups::detect(
        &format!("starling-test-{name}-{}", std::process::id()),
        Some(version),
    ) {
        Ok(c) => Some(Isolation {
            cgroups: Some(Arc::new(c)),
            private_tmp: false,
            mount_namespace: false,
            dedicated_account: false,
        }),
        Err(e) => {
            eprintln!("skipped: no cgroups here: {e}");
            None
        }
    }
}

/// Whether a process whose command line holds `needle` runs.
fn running_with(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
            && family::stat_fields(
                e.file_name()
                    .to_str()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0),
            )
            .is_some_and(|f| f[0] != "Z")
    })
}

/// Waits until no live process has `needle` in its command line.
async fn wait_gone(needle: &str) {
    let deadline = std::time::Instant::now() + LIMIT;
    while running_with(needle) {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon outlived its job"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn daemons_die_with_the_job(version: cgroup::Version, name: &str) {
    let Some(isolation) = confined(version, name) else {
        return;
    };
    let cgroups = isolation.cgroups.clone().unwrap();
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let secs = format!("777{}", std::process::id() % 1000);
    // A daemon that leaves the job's process group and session, and
    // clears the environment that would mark it as the job's.
    let mut spec = sh(
        &sb,
        &format!("env -i setsid sleep {secs} </dev/null >/dev/null 2>&1 & sleep 0.3; exit 0"),
    );
    spec.isolation = isolation;
    spec.request_cpus = 2;
    let outcome = run(spec).await;
    assert_eq!(outcome.exit, Exit::Code(0));
    wait_gone(&format!("sleep{}{secs}", '\0')).await;
    cgroups.release();
}

#[tokio::test]
async fn with_cgroup_v1_a_daemonised_child_dies_with_its_job() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    daemons_die_with_the_job(cgroup::Version::V1, "v1").await;
}

#[tokio::test]
async fn with_cgroup_v2_a_daemonised_child_dies_with_its_job() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    daemons_die_with_the_job(cgroup::Version::V2, "v2").await;
}

#[tokio::test]
async fn without_cgroups_a_daemon_of_a_dedicated_account_dies_with_its_job() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    // A slot account, as a root agent gives each job.
    let slots = account::SlotAccounts::prepare(account::MAX_SLOT_ACCOUNTS, 0).unwrap();
    let lease = slots.take().expect("a free slot account");
    let root = tempfile::tempdir().unwrap();
    let mut sb = sandbox(root.path());
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    lease.account.own(sb.path()).unwrap();
    sb.snapshot_inputs().unwrap();
    let secs = format!("778{}", std::process::id() % 1000);
    let mut spec = sh(
        &sb,
        &format!("env -i setsid sleep {secs} </dev/null >/dev/null 2>&1 & sleep 0.3; exit 0"),
    );
    spec.account = Some(lease.account.clone());
    spec.isolation.dedicated_account = true;
    let outcome = run(spec).await;
    assert_eq!(outcome.exit, Exit::Code(0), "{outcome:?}");
    wait_gone(&format!("sleep{}{secs}", '\0')).await;
}

#[tokio::test]
async fn a_cgroup_holds_a_job_to_its_memory_and_counts_its_children() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let Some(isolation) = confined(cgroup::Version::V1, "mem") else {
        return;
    };
    let cgroups = isolation.cgroups.clone().unwrap();
    if !cgroups.limits_memory() {
        eprintln!("skipped: no memory controller");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    // The memory is taken by a child in a session of its own.
    let mut spec = sh(
        &sb,
        "setsid python3 -c 'x = bytearray(400 << 20); import time; time.sleep(10)' & wait",
    );
    spec.request_memory_mib = 64;
    spec.isolation = isolation;
    let outcome = run(spec).await;
    assert!(outcome.memory_exceeded, "{outcome:?}");
    let (code, subcode, reason) = outcome.hold().unwrap();
    assert_eq!(
        (code.code(), subcode),
        (34, 102),
        "HTCondor's codes for memory"
    );
    assert!(reason.contains("memory limit of 64 megabytes"), "{reason}");
    cgroups.release();
}

#[tokio::test]
async fn a_job_gets_a_private_tmp_in_its_sandbox() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: a private /tmp needs root");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    if let Err(e) = confine::probe_private_tmp(root.path()) {
        eprintln!("skipped: {e}");
        return;
    }
    let name = format!("starling-private-{}", std::process::id());
    let mut spec = sh(
        &sb,
        &format!("echo secret > /tmp/{name} && echo v > /var/tmp/{name} && cat $_CONDOR_SCRATCH_DIR/tmp/{name}"),
    );
    spec.isolation.private_tmp = true;
    confine::make_private_dirs(sb.path()).unwrap();
    let outcome = run(spec).await;
    assert_eq!(
        outcome.exit,
        Exit::Code(0),
        "{}",
        std::fs::read_to_string(sb.stderr()).unwrap()
    );
    assert_eq!(std::fs::read_to_string(sb.stdout()).unwrap(), "secret\n");
    assert!(
        !Path::new("/tmp").join(&name).exists(),
        "the machine's /tmp is untouched"
    );
    assert!(!Path::new("/var/tmp").join(&name).exists());
    assert!(sb.path().join("tmp").join(&name).exists());
    assert!(sb.path().join("var/tmp").join(&name).exists());
}

#[tokio::test]
async fn a_sandbox_is_measured_and_a_job_over_its_disk_is_held_with_code_34() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let root = tempfile::tempdir().unwrap();
    let sb = sandbox(root.path());
    let mut spec = sh(&sb, "head -c 3000000 /dev/zero > big; sleep 30");
    spec.request_disk_kib = 1024;
    // The floor keeps small requests from holding ordinary jobs: a job
    // asking for 1 MiB may still write 3 MB.
    let small = tokio::time::timeout(Duration::from_secs(8), async {
        let mut running = start(spec).await.unwrap();
        tokio::time::sleep(DISK_POLL + Duration::from_secs(1)).await;
        running.kill();
        running.wait().await
    })
    .await
    .unwrap();
    assert!(!small.disk_exceeded, "{small:?}");
    assert!(small.disk_usage_kib >= 2900, "{small:?}");
    assert!(small.report().disk_usage_kib >= Some(2900));
    // Past the floor and the request, the watch kills it and this holds it.
    let over = Outcome {
        disk_exceeded: true,
        disk_usage_kib: 3 << 20,
        disk_limit_kib: 2 << 20,
        ..small
    };
    let (code, subcode, reason) = over.hold().unwrap();
    assert_eq!(
        (code.code(), subcode),
        (34, 104),
        "HTCondor's codes for disk"
    );
    assert!(reason.contains("disk limit of 2048 megabytes"), "{reason}");
}
