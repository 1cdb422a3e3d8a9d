//! The agent as a long-lived service, as an administrator runs it.
//!
//! - **SIGHUP** reads the configuration again (HTCondor's
//!   `condor_reconfig`): a real agent running a job is sent SIGHUP after
//!   its `[machine]` owner policy and attributes changed in its file; the
//!   new ones are in its ad within seconds (and a new `[store] lend_mib`
//!   in its store figures), the running job runs on
//!   undisturbed (same process, one start), the log names what is in force
//!   and what waits for a restart. A file that no longer reads is reported
//!   and the configuration in force kept.
//!
//! - **install-service** writes a systemd unit that runs this very program,
//!   with restart on failure and the hardening options, says how to start
//!   it, leaves an identical unit alone and an edited one too unless told
//!   `--force` (checked with `systemd-analyze verify` where it exists).
//! - **joining by the policy alone**: an agent whose configuration names
//!   no bootstrap peer (and listens on a new port, so no peer remembers it)
//!   joins its domain's pool from the bootstrap address in the domain's
//!   signed policy: admitting a machine and installing the policy is enough.
//! - **config** prints the configuration the agent runs with, each value
//!   with its origin (the file's line, `--data-dir`, or the default); a
//!   misspelt key is refused naming the file, the line and the key.
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
    // And lends 64 MiB to checkpoints instead of what it lent.
    config
        .entry("store")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .unwrap()
        .insert("lend_mib".into(), toml::Value::Integer(64));
    std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
    let before = log_len(&pool);
    sighup(&dir);

    wait_for(Duration::from_secs(30), "the new ad", || {
        let seen = pool.ok(0, work.path(), &["status", "-af", "Site", "Start"]);
        (seen.trim() == "lab-3 false").then_some(())
    });
    logged(&pool, before, "SIGHUP: machine.start: in force");
    logged(&pool, before, "SIGHUP: store.lend_mib: in force");
    wait_for(Duration::from_secs(30), "64 MiB lent in the ad", || {
        let seen = pool.ok(
            0,
            work.path(),
            &["status", "-store", "-af", "StarlingStoreLent"],
        );
        (seen.trim() == "65536").then_some(())
    });
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

#[test]
fn install_service_writes_a_unit_for_this_program_and_keeps_an_edited_one() {
    let units = tempfile::tempdir().unwrap();
    let dir = units.path().to_str().unwrap();
    let said = ok_in(units.path(), &["install-service", "--unit-dir", dir]);
    assert!(
        said.contains("systemctl enable --now starling-agent"),
        "{said}"
    );
    let path = units.path().join("starling-agent.service");
    let unit = std::fs::read_to_string(&path).unwrap();
    let program = std::fs::canonicalize(env!("CARGO_BIN_EXE_starling-e2e")).unwrap();
    assert!(
        unit.lines()
            .any(|l| l == format!("ExecStart={} agent", program.display())),
        "{unit}"
    );
    for line in [
        "Restart=on-failure",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "KillMode=process",
        "NoNewPrivileges=yes",
        "ProtectSystem=full",
        "WantedBy=multi-user.target",
    ] {
        assert!(unit.lines().any(|l| l == line), "{line} in\n{unit}");
    }
    if std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let verified = std::process::Command::new("systemd-analyze")
            .args(["verify", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            verified.status.success(),
            "{}",
            String::from_utf8_lossy(&verified.stderr)
        );
    }

    let again = ok_in(units.path(), &["install-service", "--unit-dir", dir]);
    assert!(again.contains("installed already"), "{again}");
    std::fs::write(&path, unit.replace("RestartSec=5s", "RestartSec=1s")).unwrap();
    let refused = starling_in(units.path(), &["install-service", "--unit-dir", dir]);
    assert!(!refused.status.success());
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("says something else") && why.contains("--force"),
        "{why}"
    );
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("RestartSec=1s"));
    ok_in(
        units.path(),
        &["install-service", "--unit-dir", dir, "--force"],
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), unit);
}

#[test]
fn config_says_where_each_value_comes_from_and_names_a_misspelt_key() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("agent.toml");
    std::fs::write(
        &file,
        "# an administrator's file\n[machine]\nstart = \"KeyboardIdle > 600\"\n",
    )
    .unwrap();
    let data = work.path().join("data");
    let shown = ok_in(
        work.path(),
        &[
            "config",
            "--config",
            file.to_str().unwrap(),
            "--data-dir",
            data.to_str().unwrap(),
        ],
    );
    let at = format!("{}:3", file.display());
    assert!(
        shown.contains(&format!("start = \"KeyboardIdle > 600\"  # {at}")),
        "{shown}"
    );
    assert!(shown.contains("rank = \"0\"  # default"), "{shown}");
    assert!(
        shown.contains(&format!("data_dir = \"{}\"  # --data-dir", data.display())),
        "{shown}"
    );
    let changed = ok_in(
        work.path(),
        &["config", "--config", file.to_str().unwrap(), "--changed"],
    );
    assert!(!changed.contains("# default"), "{changed}");

    std::fs::write(&file, "[machine]\nstrat = \"true\"\n").unwrap();
    let refused = starling_in(work.path(), &["config", "--config", file.to_str().unwrap()]);
    assert!(!refused.status.success());
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains(file.to_str().unwrap()) && why.contains("line 2") && why.contains("strat"),
        "{why}"
    );
}

#[test]
fn an_agent_joins_by_the_bootstrap_address_in_its_domains_policy() {
    let pool = Pool::up(2);
    let work = tempfile::tempdir().unwrap();
    let config_path = pool.agent(1).join("agent.toml");
    let mut config: toml::Table = std::fs::read_to_string(&config_path)
        .unwrap()
        .parse()
        .unwrap();
    let network = config["network"].as_table_mut().unwrap();
    let join = network["bootstrap"].as_array().unwrap()[0]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(join.contains("/p2p/"), "{join}");
    network.insert("bootstrap".into(), toml::Value::Array(Vec::new()));

    // The administrator lists agent-00 in the domain's policy.
    let policy = work.path().join("d0.policy");
    let key = pool.dir.join("domains").join("d0.testnet.key");
    let signed = starling_in(
        work.path(),
        &[
            "domain",
            "policy",
            "--key",
            key.to_str().unwrap(),
            "--bootstrap",
            &join,
            "--out",
            policy.to_str().unwrap(),
        ],
    );
    assert!(signed.status.success(), "{signed:?}");
    assert!(
        String::from_utf8_lossy(&signed.stderr).contains("its agents join by 1 bootstrap address"),
        "{signed:?}"
    );
    let verified = ok_in(work.path(), &["domain", "verify", policy.to_str().unwrap()]);
    assert!(
        verified.contains(&format!("bootstrap   {join}")),
        "{verified}"
    );

    // agent-01 stops, forgets its bootstrap peer, takes the policy, starts.
    let pid = pid_of(&pool.agent(1)).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    wait_for(Duration::from_secs(30), "agent-01 stopped", || {
        (!running(pid)).then_some(())
    });
    std::fs::write(&config_path, toml::to_string(&config).unwrap()).unwrap();
    pool.ok(
        1,
        work.path(),
        &["domain", "install", policy.to_str().unwrap()],
    );
    let _agent = pool.start(1);
    wait_for(
        Duration::from_secs(60),
        "each agent seeing the other",
        || {
            // agent-01's control socket may not be up yet: not seen yet.
            let seen = |i| {
                let out = pool.run(i, work.path(), &["status", "-af", "Name"]);
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            let (seen_by_0, seen_by_1) = (seen(0), seen(1));
            (seen_by_0.contains("agent-01") && seen_by_1.contains("agent-00")).then_some(())
        },
    );
}
