//! GPUs on a real pool, as HTCondor users ask for them:
//!
//! - a machine with four (declared) GPUs runs four one-GPU jobs at once and
//!   the fifth waits; each job's environment names its own device and no
//!   other; `status -gpus` shows who holds each; a two-GPU job gets two
//!   distinct devices; a job that asks for more than the machine has, or
//!   for devices it lacks (`require_gpus`), never runs and `why` names the
//!   clause;
//! - discovery through `nvidia-smi` (a fake one on the agent's path,
//!   printing what a real NVIDIA H200 machine printed): the machine ad says
//!   what HTCondor's would, a job bounded by `gpus_minimum_capability`
//!   gets the device by its full UUID, a job bounded beyond it does not
//!   run, and a job without GPUs is shown none;
//! - another domain's jobs hold no more GPUs than the machine lends them
//!   (`[gpus] foreign_max`) nor than the domain's signed terms let them
//!   (`max_gpus`), and `why` names the cap that stops them;
//! - SIGHUP runs discovery again: a device added to the file is in the ad
//!   without a restart, and one taken out while a job holds it stays that
//!   job's until it ends.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod support;

use support::*;

/// A job that writes what it was told of GPUs into `$1/gpus.$2`, and what
/// it reads of the device files `$1/dev/*` into `$1/read.$2`, then waits
/// until `$1/go` exists.
const GPU_JOB: &str = r#"#!/bin/sh
cat "$1"/dev/* > "$1/read.$2" 2>&1
echo "$_CONDOR_AssignedGPUs|$CUDA_VISIBLE_DEVICES|$NVIDIA_VISIBLE_DEVICES|$GPU_DEVICE_ORDINAL" > "$1/gpus.$2.tmp"
mv "$1/gpus.$2.tmp" "$1/gpus.$2"
i=0
while [ ! -e "$1/go" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
"#;

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A pool whose jobs can write into a [`shared_dir`], with `extra` options.
fn pool_sharing(agents: usize, extra: &[&str]) -> Pool {
    let mut args: Vec<&str> = extra.to_vec();
    if rustix::process::geteuid().is_root() {
        args.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    Pool::up_as(None, agents, &args)
}

/// What job `n` was told: `_CONDOR_AssignedGPUs`, `CUDA_VISIBLE_DEVICES`,
/// `NVIDIA_VISIBLE_DEVICES`, `GPU_DEVICE_ORDINAL`.
fn told(dir: &Path, n: &str) -> Option<[String; 4]> {
    let text = std::fs::read_to_string(dir.join(format!("gpus.{n}"))).ok()?;
    let parts: Vec<String> = text.trim_end().split('|').map(str::to_owned).collect();
    parts.try_into().ok()
}

fn statuses(pool: &Pool) -> Vec<String> {
    pool.af(0, false, &["JobStatus"])
        .into_iter()
        .map(|row| row.join(" "))
        .collect()
}

#[test]
fn four_gpus_run_four_one_gpu_jobs_at_once_each_seeing_only_its_own() {
    let pool = pool_sharing(1, &["--cpus", "8"]);
    let work = shared_dir();
    let dir = work.path();
    script(&dir.join("job.sh"), GPU_JOB);
    // Four declared GPUs, each with a device file that says its id.
    std::fs::create_dir(dir.join("dev")).unwrap();
    let devices: Vec<toml::Value> = (0..4)
        .map(|i| {
            let id = format!("GPU-0000000{i}");
            let path = dir.join("dev").join(&id);
            std::fs::write(&path, format!("{id}\n")).unwrap();
            let mut d = toml::Table::new();
            d.insert("id".into(), id.into());
            d.insert("path".into(), path.to_string_lossy().into_owned().into());
            d.insert("capability".into(), 8.0.into());
            d.into()
        })
        .collect();
    let _restarted = pool.reconfigure(0, "gpus", &[("device", devices.into())], 0);
    assert_eq!(
        pool.machine_af(0, &["TotalGPUs", "GPUs", "MachineResources"]),
        ["4", "4", "Cpus", "Memory", "Disk", "GPUs"]
    );
    std::fs::write(
        dir.join("one.sub"),
        format!(
            "executable = job.sh\narguments = {} $(Process)\nrequest_gpus = 1\nqueue 5\n",
            dir.display()
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "one.sub"]);
    assert_eq!(
        pool.af(0, false, &["RequestGPUs"]),
        vec![vec!["1".to_owned()]; 5]
    );
    let started = || {
        (0..5)
            .filter(|n| told(dir, &n.to_string()).is_some())
            .count()
    };
    wait_for(Duration::from_secs(90), "four jobs started", || {
        (started() >= 4).then_some(())
    });
    // The fifth waits: no device is free for it, though cpus are.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(started(), 4, "a fifth job started with four GPUs held");
    let mut devices = BTreeSet::new();
    for n in 0..5 {
        let Some([assigned, cuda, nvidia, ordinal]) = told(dir, &n.to_string()) else {
            continue;
        };
        assert!(
            assigned.starts_with("GPU-") && !assigned.contains(','),
            "job {n} was given {assigned:?}"
        );
        // Declared devices have no UUID: CUDA is told the id, and the
        // NVIDIA container runtime nothing.
        assert_eq!(
            (cuda.as_str(), ordinal.as_str()),
            (assigned.as_str(), assigned.as_str())
        );
        assert_eq!(nvidia, "none");
        assert!(
            devices.insert(assigned.clone()),
            "{assigned} was given twice"
        );
        // Where the agent can give jobs a mount namespace (root), the
        // other devices' files are empty to the job: it reads only its own.
        if rustix::process::geteuid().is_root() {
            let read = std::fs::read_to_string(dir.join(format!("read.{n}"))).unwrap();
            assert_eq!(read, format!("{assigned}\n"), "job {n} read other devices");
        }
    }
    assert_eq!(devices.len(), 4);
    let shown = pool.ok(0, dir, &["status", "-gpus"]);
    assert!(
        shown.contains("Total: 4 GPUs, 4 claimed, 0 free"),
        "{shown}"
    );
    for device in &devices {
        assert!(
            shown
                .lines()
                .any(|l| l.contains(device.as_str()) && l.contains(" Cb ")),
            "{device} not shown held:\n{shown}"
        );
    }
    let why = pool.ok(0, dir, &["why", "1.4"]);
    assert!(why.contains("have too little free now"), "{why}");

    // An agent killed and started again takes its jobs on with the very
    // devices they hold: none is handed to the fifth job.
    pool.crash(0);
    pool.restart(0);
    wait_for(Duration::from_secs(60), "the jobs taken on again", || {
        let shown = pool.ok(0, dir, &["status", "-gpus"]);
        shown.contains("Total: 4 GPUs, 4 claimed").then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(started(), 4, "a device held by a job was handed out again");
    assert_eq!(statuses(&pool).iter().filter(|s| *s == "2").count(), 4);

    // They end; the fifth runs on a device given back.
    std::fs::write(dir.join("go"), "").unwrap();
    wait_for(Duration::from_secs(90), "the fifth job started", || {
        (started() == 5).then_some(())
    });
    pool.wait_queue_empty(0, Duration::from_secs(90));
    std::fs::remove_file(dir.join("go")).unwrap();

    // Two GPUs are two devices. More than the machine has, or devices it
    // has not, never match, and `why` says which clause.
    std::fs::write(
        dir.join("more.sub"),
        format!(
            "executable = job.sh\narguments = {dir} two\nrequest_gpus = 2\nqueue\n\
             arguments = {dir} five\nrequest_gpus = 5\nqueue\n\
             arguments = {dir} newer\nrequest_gpus = 1\ngpus_minimum_capability = 9.0\nqueue\n",
            dir = dir.display()
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "more.sub"]);
    let [assigned, cuda, _, _] = wait_for(Duration::from_secs(60), "the two-GPU job", || {
        told(dir, "two")
    });
    let two: BTreeSet<&str> = assigned.split(',').collect();
    assert_eq!(two.len(), 2, "{assigned}");
    assert_eq!(cuda, assigned);
    let why = pool.ok(0, dir, &["why", "2.1"]);
    assert!(why.contains("too small for the job's request"), "{why}");
    let why = pool.ok(0, dir, &["why", "2.2"]);
    assert!(
        why.contains("countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs"),
        "{why}"
    );
    assert!(told(dir, "five").is_none() && told(dir, "newer").is_none());
    std::fs::write(dir.join("go"), "").unwrap();
    pool.ok(0, dir, &["rm", "2.1", "2.2"]);
    pool.wait_queue_empty(0, Duration::from_secs(60));
}

/// `nvidia-smi`'s answers on a machine with one NVIDIA H200, as captured.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../node/agent/tests/fixtures/nvidia-smi")
        .join(name)
}

#[test]
fn a_gpu_found_by_nvidia_smi_is_advertised_and_given_by_its_uuid() {
    let pool = pool_sharing(1, &["--cpus", "4"]);
    let work = shared_dir();
    let dir = work.path();
    script(&dir.join("job.sh"), GPU_JOB);
    // Requests that cannot mean anything are refused at submit, naming
    // the command, and nothing is queued.
    for (line, says) in [
        ("request_gpus = -1", "request_gpus"),
        ("request_gpus = \"two\"", "request_gpus"),
        (
            "request_gpus = 1\nrequire_gpus = Capability >",
            "require_gpus",
        ),
        (
            "request_gpus = 1\ngpus_minimum_memory = 4 4",
            "gpus_minimum_memory",
        ),
    ] {
        std::fs::write(
            dir.join("bad.sub"),
            format!("executable = job.sh\n{line}\nqueue\n"),
        )
        .unwrap();
        let out = pool.run(0, dir, &["submit", "bad.sub"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{line:?} was accepted");
        assert!(err.contains(says), "{line:?}: {err}");
    }
    assert!(
        pool.af(0, false, &["ClusterId"]).is_empty(),
        "nothing queued"
    );
    // A stand-in for nvidia-smi that answers only what the agent should
    // ask, with what the real one printed.
    let fake = dir.join("nvidia-smi");
    script(
        &fake,
        &format!(
            "#!/bin/sh\ncase \"$*\" in\n\
             '--query-gpu=index,uuid,name,pci.bus_id,memory.total,compute_cap,clocks.max.sm,ecc.mode.current --format=csv,noheader,nounits') cat '{}';;\n\
             '') cat '{}';;\n\
             *) echo \"unexpected: $*\" >&2; exit 2;;\nesac\n",
            fixture("h200-query.csv").display(),
            fixture("h200-plain.txt").display()
        ),
    );
    let _restarted = pool.reconfigure(
        0,
        "gpus",
        &[
            ("discovery", "nvidia-smi".into()),
            ("nvidia_smi", fake.to_string_lossy().into_owned().into()),
        ],
        0,
    );
    let ad = wait_for(Duration::from_secs(30), "the GPU in the machine ad", || {
        let ad = pool.machine_af(
            0,
            &[
                "TotalGPUs",
                "DetectedGPUs",
                "GPUs_DeviceName",
                "GPUs_Capability",
                "GPUs_GlobalMemoryMb",
                "GPUs_MaxSupportedVersion",
                "GPUs_GPU_9a8ed216.DeviceUuid",
            ],
        );
        (ad.first().map(String::as_str) == Some("1")).then_some(ad)
    });
    assert_eq!(
        ad,
        [
            "1",
            "GPU-9a8ed216",
            "NVIDIA",
            "H200",
            "9.000000000000000E+00",
            "143771",
            "13000",
            "9a8ed216-3854-e861-579d-9a1df0118bfc"
        ],
        "{}",
        pool.log_tail(0)
    );
    // The agent's log says what it found, in plain text (it is a file, not
    // a terminal).
    let log = std::fs::read_to_string(pool.agent(0).join("agent.log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("GPUs found") && l.contains("nvidia-smi")),
        "{log}"
    );
    assert!(!log.contains('\x1b'), "colour codes in a log file");
    std::fs::write(
        dir.join("jobs.sub"),
        format!(
            "executable = job.sh\n\
             arguments = {dir} hopper\nrequest_gpus = 1\ngpus_minimum_capability = 9.0\n\
             gpus_minimum_memory = 80G\nqueue\n\
             arguments = {dir} bigger\nrequest_gpus = 1\ngpus_minimum_memory = 200G\nqueue\n\
             arguments = {dir} cpu\nrequest_gpus = 0\nqueue\n",
            dir = dir.display()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("go"), "").unwrap();
    pool.ok(0, dir, &["submit", "jobs.sub"]);
    let uuid = "GPU-9a8ed216-3854-e861-579d-9a1df0118bfc";
    let hopper = wait_for(Duration::from_secs(60), "the GPU job", || {
        told(dir, "hopper")
    });
    assert_eq!(
        hopper,
        ["GPU-9a8ed216", uuid, uuid, "GPU-9a8ed216"].map(str::to_owned)
    );
    // A job that holds no GPU is shown none, as HTCondor shows it.
    let cpu = wait_for(Duration::from_secs(60), "the CPU job", || told(dir, "cpu"));
    assert_eq!(cpu, ["10000", "10000", "none", "10000"].map(str::to_owned));
    wait_for(
        Duration::from_secs(60),
        "the jobs that can run done",
        || (statuses(&pool) == ["1"]).then_some(()),
    );
    let why = pool.ok(0, dir, &["why", "1.1"]);
    assert!(why.contains("RequireGPUs"), "{why}");
    assert!(told(dir, "bigger").is_none());
    pool.ok(0, dir, &["rm", "1.1"]);
}

#[test]
fn other_domains_jobs_hold_no_more_gpus_than_the_machine_lends_them() {
    // agent-01 in d1.testnet lends at most one of its two GPUs to jobs of
    // other domains; agent-00 is in d0.testnet.
    let pool = pool_sharing(2, &["--domains", "2", "--gpus", "2", "--cpus", "8"]);
    let _restarted = pool.reconfigure(1, "gpus", &[("foreign_max", 1.into())], 0);
    let work = shared_dir();
    let dir = work.path();
    script(&dir.join("job.sh"), GPU_JOB);
    std::fs::create_dir(dir.join("dev")).unwrap();
    let sub = |name: &str, tag: &str| {
        std::fs::write(
            dir.join(name),
            format!(
                "executable = job.sh\narguments = {} {tag}$(Process)\nrequest_gpus = 1\n\
                 requirements = TARGET.StarlingDomain == \"d1.testnet\"\nqueue 2\n",
                dir.display()
            ),
        )
        .unwrap();
    };
    sub("foreign.sub", "foreign");
    pool.ok(0, dir, &["submit", "foreign.sub"]);
    let started = |tag: &str| {
        (0..2)
            .filter(|n| told(dir, &format!("{tag}{n}")).is_some())
            .count()
    };
    wait_for(Duration::from_secs(90), "one foreign job started", || {
        (started("foreign") >= 1).then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        started("foreign"),
        1,
        "the foreign jobs hold more than one GPU"
    );
    let waiting = if told(dir, "foreign0").is_some() {
        "1.1"
    } else {
        "1.0"
    };
    let why = pool.ok(0, dir, &["why", waiting]);
    assert!(
        why.contains("jobs from other domains hold 1 of the 1"),
        "{why}"
    );
    // The device it keeps is its own domain's.
    sub("own.sub", "own");
    pool.ok(1, dir, &["submit", "own.sub"]);
    wait_for(
        Duration::from_secs(60),
        "the own domain's job started",
        || (started("own") >= 1).then_some(()),
    );
    std::fs::write(dir.join("go"), "").unwrap();
    pool.wait_queue_empty(0, Duration::from_secs(90));
    pool.wait_queue_empty(1, Duration::from_secs(60));
    assert_eq!((started("foreign"), started("own")), (2, 2));
}

#[test]
fn a_signed_max_gpus_term_caps_another_domains_gpus_in_the_whole_domain() {
    // d1.testnet (agent-01, two GPUs) signs terms that let d0.testnet's
    // jobs hold one GPU at once; the machine itself would lend both.
    let work = shared_dir();
    let dir = work.path();
    let terms = dir.join("terms.toml");
    std::fs::write(
        &terms,
        "[[terms]]\ndomain = \"d1.testnet\"\ntrusts = \"d0.testnet\"\nmax_gpus = 1\n",
    )
    .unwrap();
    let pool = pool_sharing(
        2,
        &[
            "--domains",
            "2",
            "--gpus",
            "2",
            "--cpus",
            "8",
            "--terms",
            terms.to_str().unwrap(),
        ],
    );
    script(&dir.join("job.sh"), GPU_JOB);
    std::fs::create_dir(dir.join("dev")).unwrap();
    let sub = |name: &str, tag: &str, gpus: u32, count: u32| {
        std::fs::write(
            dir.join(name),
            format!(
                "executable = job.sh\narguments = {} {tag}$(Process)\nrequest_gpus = {gpus}\n\
                 requirements = TARGET.StarlingDomain == \"d1.testnet\"\nqueue {count}\n",
                dir.display()
            ),
        )
        .unwrap();
    };
    let started = |tag: &str, of: u32| {
        (0..of)
            .filter(|n| told(dir, &format!("{tag}{n}")).is_some())
            .count()
    };
    sub("gpu.sub", "gpu", 1, 2);
    pool.ok(0, dir, &["submit", "gpu.sub"]);
    wait_for(Duration::from_secs(90), "one GPU job started", || {
        (started("gpu", 2) >= 1).then_some(())
    });
    // A job of theirs that needs no GPU is not stopped by the GPU cap.
    sub("cpu.sub", "cpu", 0, 1);
    pool.ok(0, dir, &["submit", "cpu.sub"]);
    wait_for(Duration::from_secs(90), "the CPU job started", || {
        (started("cpu", 1) == 1).then_some(())
    });
    assert_eq!(started("gpu", 2), 1, "d0's jobs hold more than one GPU");
    let waiting = if told(dir, "gpu0").is_some() {
        "1.1"
    } else {
        "1.0"
    };
    let why = pool.ok(0, dir, &["why", waiting]);
    assert!(
        why.contains("d1.testnet lets d0.testnet hold at most 1 GPU at once (max_gpus = 1)"),
        "{why}"
    );
    std::fs::write(dir.join("go"), "").unwrap();
    pool.wait_queue_empty(0, Duration::from_secs(120));
    assert_eq!((started("gpu", 2), started("cpu", 1)), (2, 1));
}

#[test]
fn sighup_finds_gpus_again_and_a_held_device_stays_until_its_job_ends() {
    let pool = pool_sharing(1, &["--gpus", "2", "--cpus", "4"]);
    let agent = pool.agent(0);
    let pid = pid_of(&agent).expect("the agent runs");
    let work = shared_dir();
    let dir = work.path();
    script(&dir.join("job.sh"), GPU_JOB);
    std::fs::create_dir(dir.join("dev")).unwrap();
    let total = || pool.machine_af(0, &["TotalGPUs"]);
    assert_eq!(total(), ["2"]);
    // A job holds one of the two devices.
    std::fs::write(
        dir.join("one.sub"),
        format!(
            "executable = job.sh\narguments = {} held\nrequest_gpus = 1\nqueue\n",
            dir.display()
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "one.sub"]);
    let [held, ..] = wait_for(Duration::from_secs(60), "the GPU job", || told(dir, "held"));
    // The administrator declares a third device, and reloads.
    let path = agent.join("agent.toml");
    let edit = |devices: &dyn Fn(&mut Vec<toml::Value>)| {
        let mut config: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let gpus = config["gpus"].as_table_mut().unwrap();
        let list = gpus["device"].as_array_mut().unwrap();
        devices(list);
        std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
    };
    edit(&|list| {
        let mut third = list[0].as_table().unwrap().clone();
        third.insert("id".into(), "GPU-00000099".into());
        list.push(third.into());
    });
    wait_for(Duration::from_secs(30), "three GPUs in the ad", || {
        (total() == ["3"]).then_some(())
    });
    let detected = pool.machine_af(0, &["DetectedGPUs"]).join(" ");
    assert!(detected.contains("GPU-00000099"), "{detected}");
    // Two free now: the job keeps its device, and two more jobs can run.
    assert_eq!(pool.machine_af(0, &["GPUs"]), ["2"]);
    // The held device is taken out of the file: it stays the job's, and
    // in the ad, until the job ends.
    edit(&|list| list.retain(|d| d["id"].as_str() != Some(held.as_str())));
    let log = agent.join("agent.log");
    wait_for(
        Duration::from_secs(30),
        "the reload's word on the held GPU",
        || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            text.contains(&format!(
                "{held} no longer found stays assigned until its job ends"
            ))
            .then_some(())
        },
    );
    assert_eq!(
        total(),
        ["3"],
        "a held device left the ad while its job ran"
    );
    assert_eq!(pid_of(&agent), Some(pid), "the agent was restarted");
    assert_eq!(told(dir, "held").map(|t| t[0].clone()), Some(held.clone()));
    std::fs::write(dir.join("go"), "").unwrap();
    pool.wait_queue_empty(0, Duration::from_secs(60));
    wait_for(
        Duration::from_secs(30),
        "the freed device gone from the ad",
        || (total() == ["2"]).then_some(()),
    );
    let detected = pool.machine_af(0, &["DetectedGPUs"]).join(" ");
    assert!(!detected.contains(held.as_str()), "{detected}");
}

#[test]
fn bad_gpu_and_cpu_counts_for_a_testnet_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net");
    for (flag, value) in [
        ("--gpus", "65"),
        ("--gpus", "=-1"),
        ("--cpus", "0"),
        ("--cpus", "many"),
    ] {
        let mut args = vec![
            "testnet",
            "up",
            "--dir",
            net.to_str().unwrap(),
            "--agents",
            "1",
        ];
        // `--gpus=-1`: as a word of its own, `-1` reads as an option.
        let joined = format!("{flag}{value}");
        if value.starts_with('=') {
            args.push(&joined);
        } else {
            args.extend([flag, value]);
        }
        let out = starling_in(dir.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} {value} was taken");
        assert!(err.contains(flag), "{flag} {value}: {err}");
        assert!(!net.exists(), "{flag} {value} made a testnet");
    }
}
