//! The job event log (`log = FILE`) read back by HTCondor's own reader,
//! `htcondor2.JobEventLog` (the Python package the ClassAd suite already
//! installs), as pipelines (DAGMan, `condor_wait`, Pegasus) read it:
//!
//! - every event Starling writes, as the writer writes it (including the
//!   reconnection events no quick test can provoke), reads back with the
//!   attributes HTCondor gives it;
//! - on a real pool: submitted, executing, checkpointed, output
//!   transferred, terminated (normally and by a signal), held with the
//!   reason, released, evicted by `vacate` and aborted by `rm`, in order.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value as J;
use starling_queue::userlog::{self, CpuTime, Event, Exit, Resource, Transfer};
use starling_storage::JobId;

mod support;

use support::*;

/// HTCondor's Python, as the ClassAd suite finds it.
fn python() -> PathBuf {
    if let Ok(p) = std::env::var("STARLING_ORACLE_PYTHON") {
        return p.into();
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/oracle-venv.sh");
    let out = Command::new("bash").arg(script).output().unwrap();
    assert!(out.status.success(), "scripts/oracle-venv.sh failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .trim()
        .into()
}

/// Each event of the log at `path` as `htcondor2.JobEventLog` reads it:
/// its attributes, with `type` its event number. Fails if the reader
/// stops on an error.
fn read_log(path: &Path) -> Vec<J> {
    const READER: &str = r#"
import json, sys, htcondor2
out = []
with htcondor2.JobEventLog(sys.argv[1]) as log:
    for e in log.events(stop_after=0):
        d = {k: (v if isinstance(v, (int, float, bool)) else str(v)) for k, v in e.items()}
        d["type"] = int(e.type)
        out.append(d)
print(json.dumps(out))
"#;
    let out = Command::new(python())
        .args(["-c", READER])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "htcondor2 could not read {}:\n{}\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_event_starling_writes_reads_back_with_htcondors_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.log");
    let resources = [
        Resource {
            name: "Cpus",
            usage: None,
            request: 2,
            allocated: 2,
        },
        Resource {
            name: "Disk",
            usage: Some(20),
            request: 1024,
            allocated: 1024,
        },
        Resource {
            name: "Memory",
            usage: Some(7),
            request: 128,
            allocated: 128,
        },
    ];
    let cpu = CpuTime {
        user_ms: 3_600_000 + 61_000,
        sys_ms: 2_000,
    };
    let events = [
        Event::Submitted {
            host: "<127.0.0.1:4001?addrs=127.0.0.1-4001&alias=agent-00>",
        },
        Event::FileTransfer {
            step: Transfer::InputStarted,
            host: Some("<agent-01>"),
        },
        Event::Executing {
            host: "<agent-01>",
            slot: Some("slot1_1@agent-01"),
        },
        Event::Checkpointed {
            cpu: CpuTime::default(),
            sent_bytes: 4096,
        },
        Event::Disconnected {
            reason: "The execute agent does not answer (timed out)",
            name: "slot1_1@agent-01",
            addr: "<agent-01>",
        },
        Event::Reconnected {
            name: "slot1_1@agent-01",
            addr: "<agent-01>",
        },
        Event::ReconnectFailed {
            reason: "The lease ran out",
            name: "slot1_1@agent-01",
        },
        Event::Evicted {
            checkpointed: true,
            cpu,
            reason: "the machine's owner came back",
            resources: &resources,
        },
        Event::Held {
            reason: "via starling hold\nby alice",
            code: 1,
            subcode: 0,
        },
        Event::Released {
            reason: "via starling release",
        },
        Event::FileTransfer {
            step: Transfer::OutputFinished,
            host: Some("<agent-01>"),
        },
        Event::Terminated {
            exit: Exit::Code(3),
            cpu,
            total_cpu: cpu,
            sent_bytes: 100,
            received_bytes: 200,
            resources: &resources,
        },
        Event::Terminated {
            exit: Exit::Signal(9),
            cpu: CpuTime::default(),
            total_cpu: CpuTime::default(),
            sent_bytes: 0,
            received_bytes: 0,
            resources: &[],
        },
        Event::Aborted {
            reason: "via starling rm",
        },
    ];
    let text: String = events
        .iter()
        .enumerate()
        .map(|(i, e)| userlog::entry(JobId::new(7, 0), 1_795_000_000 + i as i64, e))
        .collect();
    std::fs::write(&path, text).unwrap();
    let read = read_log(&path);
    let types: Vec<i64> = read.iter().map(|e| e["type"].as_i64().unwrap()).collect();
    assert_eq!(types, [0, 40, 1, 3, 22, 23, 24, 4, 12, 13, 40, 5, 5, 9]);
    assert!(read.iter().all(|e| e["Cluster"] == 7 && e["Proc"] == 0));
    assert_eq!(
        read[0]["SubmitHost"],
        "<127.0.0.1:4001?addrs=127.0.0.1-4001&alias=agent-00>"
    );
    assert_eq!(read[1]["Type"], 2, "{}", read[1]);
    assert_eq!(read[1]["Host"], "<agent-01>", "{}", read[1]);
    assert_eq!(read[2]["ExecuteHost"], "<agent-01>");
    assert_eq!(read[2]["SlotName"], "slot1_1@agent-01", "{}", read[2]);
    assert_eq!(read[3]["SentBytes"], 4096.0, "{}", read[3]);
    assert_eq!(
        read[4]["DisconnectReason"],
        "The execute agent does not answer (timed out)"
    );
    assert_eq!(read[4]["StartdName"], "slot1_1@agent-01", "{}", read[4]);
    assert_eq!(read[5]["StartdName"], "slot1_1@agent-01", "{}", read[5]);
    assert_eq!(read[6]["Reason"], "The lease ran out", "{}", read[6]);
    assert_eq!(read[7]["Checkpointed"], true, "{}", read[7]);
    assert_eq!(
        read[7]["Reason"], "the machine's owner came back",
        "{}",
        read[7]
    );
    assert_eq!(
        read[8]["HoldReason"], "via starling hold by alice",
        "{}",
        read[8]
    );
    assert_eq!(read[8]["HoldReasonCode"], 1);
    assert_eq!(read[9]["Reason"], "via starling release", "{}", read[9]);
    assert_eq!(read[10]["Type"], 6, "{}", read[10]);
    let done = &read[11];
    assert_eq!(done["TerminatedNormally"], true, "{done}");
    assert_eq!(done["ReturnValue"], 3, "{done}");
    assert_eq!(
        done["RunRemoteUsage"], "Usr 0 01:01:01, Sys 0 00:00:02",
        "{done}"
    );
    assert_eq!(done["SentBytes"], 100.0, "{done}");
    assert_eq!(done["ReceivedBytes"], 200.0, "{done}");
    // The resource table, as HTCondor's reader takes it apart.
    assert_eq!(done["RequestCpus"], 2, "{done}");
    assert_eq!(done["DiskUsage"], 20, "{done}");
    assert_eq!(done["RequestMemory"], 128, "{done}");
    assert_eq!(done["Memory"], 128, "{done}");
    let killed = &read[12];
    assert_eq!(killed["TerminatedNormally"], false, "{killed}");
    assert_eq!(killed["TerminatedBySignal"], 9, "{killed}");
    assert_eq!(read[13]["Reason"], "via starling rm", "{}", read[13]);
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn types(events: &[J]) -> Vec<i64> {
    events.iter().map(|e| e["type"].as_i64().unwrap()).collect()
}

#[test]
fn a_pools_job_logs_read_back_with_htcondors_reader_in_order() {
    let pool = Pool::up_as(None, 2, &["--refresh-secs", "2", "--lifetime-secs", "6"]);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    // Job 1: checkpoints once (exits 85), then ends with 3.
    script(
        &dir.join("ckpt.sh"),
        "#!/bin/sh\nif [ -f state ]; then exit 3; fi\necho 1 > state\nexit 85\n",
    );
    // Job 2: killed by a signal.
    script(&dir.join("killed.sh"), "#!/bin/sh\nkill -9 $$\n");
    // Job 3: runs until removed.
    script(
        &dir.join("long.sh"),
        "#!/bin/sh\ni=0\nwhile [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done\n",
    );
    std::fs::write(
        dir.join("jobs.sub"),
        "executable = ckpt.sh\nlog = ckpt.log\noutput = ckpt.out\n\
         checkpoint_exit_code = 85\ntransfer_checkpoint_files = state\nqueue\n\
         executable = killed.sh\nlog = killed.log\nqueue\n\
         executable = long.sh\nlog = long.log\nqueue\n",
    )
    .unwrap();
    let submitted = pool.ok(0, dir, &["submit", "jobs.sub"]);
    assert!(submitted.contains("3 job(s)"), "{submitted}");

    let ckpt = wait_for(Duration::from_secs(60), "job 1.0 done", || {
        let events = read_log(&dir.join("ckpt.log"));
        events.iter().any(|e| e["type"] == 5).then_some(events)
    });
    let seen = types(&ckpt);
    assert_eq!(seen.first(), Some(&0), "{ckpt:?}");
    assert!(
        ckpt[0]["SubmitHost"]
            .as_str()
            .unwrap()
            .contains("alias=agent-"),
        "{}",
        ckpt[0]
    );
    for wanted in [1, 3, 40] {
        assert!(seen.contains(&wanted), "event {wanted} in {seen:?}");
    }
    // Its input (the script) went out on each run, started and finished
    // (HTCondor's types 2 and 3), and its output came back before it
    // terminated: started, then finished (5, 6).
    let transfers: Vec<&J> = ckpt.iter().filter(|e| e["type"] == 40).collect();
    let steps: Vec<i64> = transfers
        .iter()
        .map(|e| e["Type"].as_i64().unwrap())
        .collect();
    assert_eq!(steps[..2], [2, 3], "input first: {ckpt:?}");
    assert_eq!(steps[steps.len() - 2..], [5, 6], "output last: {ckpt:?}");
    assert_eq!(
        steps.iter().filter(|s| **s == 2).count(),
        steps.iter().filter(|s| **s == 3).count(),
        "every input transfer started also finished: {ckpt:?}"
    );
    let output: Vec<&J> = transfers
        .iter()
        .copied()
        .filter(|e| e["Type"] == 5)
        .collect();
    assert_eq!(output.len(), 1, "{ckpt:?}");
    let transfers = &transfers[transfers.len() - 2..];
    assert!(
        transfers[0]["Host"]
            .as_str()
            .unwrap()
            .starts_with("<agent-"),
        "{}",
        transfers[0]
    );
    let done = ckpt.last().unwrap();
    assert_eq!(done["type"], 5, "{seen:?}");
    assert_eq!(done["ReturnValue"], 3, "{done}");
    assert_eq!(done["RequestCpus"], 1, "{done}");

    let killed = wait_for(Duration::from_secs(60), "job 1.1 done", || {
        let events = read_log(&dir.join("killed.log"));
        events.iter().any(|e| e["type"] == 5).then_some(events)
    });
    let end = killed.last().unwrap();
    assert_eq!(end["TerminatedNormally"], false, "{end}");
    assert_eq!(end["TerminatedBySignal"], 9, "{end}");

    // Job 1.2: running; held, released, evicted by vacate, removed. Its
    // events other than transfers, in order.
    let long = dir.join("long.log");
    let core = |n: usize| {
        wait_for(
            Duration::from_secs(60),
            "the job's events in its log",
            || {
                let events: Vec<J> = read_log(&long)
                    .into_iter()
                    .filter(|e| e["type"] != 40)
                    .collect();
                (events.len() >= n).then_some(events)
            },
        )
    };
    core(2);
    pool.ok(0, dir, &["hold", "1.2", "-reason", "disk maintenance"]);
    let events = core(3);
    let held = &events[2];
    assert_eq!(held["type"], 12, "{events:?}");
    assert_eq!(held["HoldReason"], "disk maintenance", "{held}");
    assert_eq!(held["HoldReasonCode"], 1, "{held}");
    pool.ok(0, dir, &["release", "1.2"]);
    let events = core(5);
    assert_eq!(types(&events)[3..5], [13, 1], "{events:?}");
    pool.ok(0, dir, &["vacate", "1.2"]);
    let events = wait_for(Duration::from_secs(60), "the eviction logged", || {
        let events = read_log(&long);
        events.iter().any(|e| e["type"] == 4).then_some(events)
    });
    let evicted = events.iter().find(|e| e["type"] == 4).unwrap();
    assert!(
        evicted["Reason"].as_str().unwrap().contains("vacate"),
        "{evicted}"
    );
    // Each run's input went out; an evicted run sends no output back: no
    // output transfer is logged for it.
    let steps: Vec<i64> = events
        .iter()
        .filter(|e| e["type"] == 40)
        .map(|e| e["Type"].as_i64().unwrap())
        .collect();
    assert_eq!(steps[..4], [2, 3, 2, 3], "{events:?}");
    assert!(!steps.contains(&5) && !steps.contains(&6), "{events:?}");
    // Running again, then removed.
    let before = wait_for(Duration::from_secs(60), "the job running again", || {
        let events = core(0);
        (events.last()?["type"] == 1 && events.len() > 5).then_some(events.len())
    });
    pool.ok(0, dir, &["rm", "1.2"]);
    let events = core(before + 1);
    let aborted = events.last().unwrap();
    assert_eq!(aborted["type"], 9, "{events:?}");
}
