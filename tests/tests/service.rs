//! The agent as a long-lived service, as an administrator runs it.
//!
//! - **SIGHUP** reads the configuration again (HTCondor's
//!   `condor_reconfig`): a real agent running a job is sent SIGHUP after
//!   its `[machine]` owner policy and attributes changed in its file; the
//!   new ones are in its ad within seconds, the running job runs on
//!   undisturbed (same process, one start), the log names what is in force
//!   and what waits for a restart. A file that no longer reads is reported
//!   and the configuration in force kept.
//!
//! Every wait polls a condition until a deadline; every process started is
//! killed when the test ends.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

fn sighup(dir: &Path) {
    let pid = pid_of(dir).expect("the agent runs");
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
}

/// Waits until agent-00's log, after `from` bytes, holds `text`.
fn logged(pool: &Pool, from: usize, text: &str) {
    let log = pool.agent(0).join("agent.log");
    wait_for(Duration::from_secs(30), text, || {
        let all = std::fs::read_to_string(&log).unwrap_or_default();
        all[from.min(all.len())..].contains(text).then_some(())
    });
}

fn log_len(pool: &Pool) -> usize {
    std::fs::read_to_string(pool.agent(0).join("agent.log"))
        .unwrap_or_default()
        .len()
}

#[test]
fn sighup_puts_a_new_owner_policy_in_force_without_disturbing_the_running_job() {
    let pool = Pool::up(1);
    let dir = pool.agent(0);
    let pid = pid_of(&dir).unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("job.sh"), "#!/bin/sh\nsleep 60\n").unwrap();
    std::fs::set_permissions(
        work.path().join("job.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(work.path().join("job.sub"), "executable = job.sh\nqueue\n").unwrap();
    pool.ok(0, work.path(), &["submit", "job.sub"]);
    wait_for(Duration::from_secs(60), "the job running", || {
        (pool
            .ok(0, work.path(), &["q", "1.0", "-af", "JobStatus"])
            .trim()
            == "2")
            .then_some(())
    });

    // The owner takes the machine back for new jobs, names its site, and
    // asks for a slower refresh (which needs a restart).
    let path = dir.join("agent.toml");
    let mut config: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    let machine = config
        .entry("machine")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .unwrap();
    machine.insert("start".into(), "false".into());
    let mut attributes = toml::Table::new();
    attributes.insert("Site".into(), "\"lab-3\"".into());
    machine.insert("attributes".into(), toml::Value::Table(attributes));
    let advertise = config
        .entry("advertise")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .unwrap();
    advertise.insert("refresh_secs".into(), toml::Value::Integer(7));
    std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
    let before = log_len(&pool);
    sighup(&dir);

    wait_for(Duration::from_secs(30), "the new ad", || {
        let seen = pool.ok(0, work.path(), &["status", "-af", "Site", "Start"]);
        (seen.trim() == "lab-3 false").then_some(())
    });
    logged(&pool, before, "SIGHUP: machine.start: in force");
    logged(&pool, before, "SIGHUP: machine.attributes.Site: in force");
    logged(
        &pool,
        before,
        "SIGHUP: advertise.refresh_secs: takes effect when the agent restarts",
    );
    assert_eq!(pid_of(&dir), Some(pid), "the agent was not restarted");
    let job = pool.ok(
        0,
        work.path(),
        &["q", "1.0", "-af", "JobStatus", "NumJobStarts"],
    );
    assert_eq!(job.trim(), "2 1", "the job runs on, started once");

    // A file that no longer reads changes nothing.
    std::fs::write(&path, "[machine\nstart = ").unwrap();
    let before = log_len(&pool);
    sighup(&dir);
    logged(
        &pool,
        before,
        "SIGHUP: the configuration does not read; the one in force is kept",
    );
    let seen = pool.ok(0, work.path(), &["status", "-af", "Site", "Start"]);
    assert_eq!(seen.trim(), "lab-3 false");
    assert_eq!(pid_of(&dir), Some(pid));
}
