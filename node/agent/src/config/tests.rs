//! The configuration's tests: defaults, the example file, overrides, and
//! every refusal naming what is wrong.

use super::*;

/// The error and its sources, one line, as the binary prints it.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

fn load_text(text: &str) -> Result<Config, Error> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.toml");
    std::fs::write(&path, text).unwrap();
    Config::load(Some(&path))
}

#[test]
fn a_coallocation_rule_or_queueing_it_does_not_know_is_refused_by_name() {
    let c = load_text("[coallocation]\nrule = \"best-fit\"\nqueueing = \"fpfs\"\n").unwrap();
    c.validate("t").unwrap();
    assert_eq!(
        c.coallocation.rule(),
        starling_policies::coallocation::Rule::BestFit
    );
    assert_eq!(
        c.coallocation.queueing(),
        starling_policies::coallocation::Queueing::Fpfs
    );
    for (text, wanted) in [
        (
            "[coallocation]\nrule = \"first-fit\"\n",
            "coallocation.rule",
        ),
        (
            "[coallocation]\nqueueing = \"lifo\"\n",
            "coallocation.queueing",
        ),
        (
            "[coallocation]\nmax_start_failures = 0\n",
            "coallocation.max_start_failures",
        ),
    ] {
        let e = load_text(text)
            .and_then(|c| c.validate("t").map(|()| c))
            .unwrap_err()
            .to_string();
        assert!(e.contains(wanted), "{e}");
    }
    assert!(load_text("[coallocation]\nrules = \"x\"\n").is_err());
}

#[test]
fn no_file_and_empty_file_mean_defaults() {
    let c = Config::load(None).unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(load_text("").unwrap(), Config::default());
    assert_eq!(c.network.listen, vec![DEFAULT_LISTEN.to_owned()]);
    assert!(c.network.mdns);
    assert_eq!(c.advertise.refresh(), Duration::from_secs(300));
    assert_eq!(c.advertise.lifetime(), Duration::from_secs(900));
    assert_eq!(c.machine.start, "true");
    assert_eq!(c.machine.requirements, "START");
    c.validate("defaults").unwrap();
}

#[test]
fn concurrency_limits_are_read_and_checked() {
    let c = load_text(
        "[concurrency_limits]\ndefault = 5\nlimits = { XSW = 3, db = 10 }\n\
         sets = { large = 100 }\n",
    )
    .unwrap();
    let limits = c.concurrency_limits.to_limits();
    assert_eq!(limits.of("xsw").unwrap().0, 3.0);
    assert_eq!(limits.of("large.sw").unwrap().0, 100.0);
    assert_eq!(limits.of("other").unwrap().0, 5.0);
    for (text, key) in [
        (
            "limits = { 9lives = 1 }",
            "concurrency_limits.limits.9lives",
        ),
        ("sets = { \"a.b\" = 1 }", "concurrency_limits.sets.a.b"),
        ("default = 2000000000", "concurrency_limits.default"),
    ] {
        let e = load_text(&format!("[concurrency_limits]\n{text}\n")).unwrap_err();
        assert!(e.to_string().contains(key), "{text}: {e}");
    }
    assert!(load_text("[concurrency_limits]\nlimit = { a = 1 }\n").is_err());
}

#[test]
fn example_file_is_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    // Every field is written out (commented or not) in the example.
    for key in [
        "data_dir",
        "listen",
        "bootstrap",
        "mdns",
        "max_connections",
        "relays",
        "[relay]",
        "serve",
        "max_reservations",
        "max_circuits",
        "max_circuit_secs",
        "max_circuit_mib",
        "refresh_secs",
        "lifetime_secs",
        "name",
        "start",
        "requirements",
        "rank",
        "suspend",
        "continue",
        "preempt",
        "kill",
        "want_suspend",
        "want_vacate",
        "max_job_retirement_time",
        "machine_max_vacate_time",
        "preemption_requirements",
        "policy_interval_secs",
        "keyboard_devices",
        "halflife_secs",
        "[machine.attributes]",
        "run_as_owner",
        "slot_accounts",
        "cgroups",
        "private_tmp",
        "execute_dir",
        "[control]",
        "administrators",
        "[store]",
        "lend_mib",
        "domain_quota_mib",
        "other_domains_mib",
        "user_quota_mib",
        "refuse_domains",
        "site",
        "rack",
        "host",
        "lease_secs",
        "owner_load_file",
        "cpus",
        "[gpus]",
        "discovery",
        "nvidia_smi",
        "foreign_max",
        "[[gpus.device]]",
        "[java]",
        "program",
        "[coallocation]",
        "queueing",
        "max_start_failures",
        "[migration]",
        "threshold_percent",
        "to_idle",
        "margin_percent",
        "min_residence_secs",
        "max_per_hour",
        "compare_speed",
        "interval_secs",
        "restart_secs",
        "[links]",
        "host_mbps",
        "uplink_mbps",
        "horizon_secs",
        "reserve_percent",
        "min_reserved_kib",
        "strategy",
        "usage_horizon_secs",
        "[http]",
        "public",
        "[concurrency_limits]",
        "default",
        "limits",
        "sets",
    ] {
        assert!(text.contains(key), "examples/agent.toml lacks {key}");
    }
    assert_eq!(Config::load(Some(&path)).unwrap(), Config::default());
}

#[test]
fn values_are_read() {
    let c = load_text(
        r#"
        data_dir = "/var/lib/starling"
        [network]
        listen = ["/ip4/0.0.0.0/tcp/4001", "/ip6/::/tcp/4001"]
        bootstrap = ["/ip4/192.0.2.1/tcp/4001/p2p/12D3KooWabc"]
        mdns = false
        max_connections = 16
        [advertise]
        refresh_secs = 10
        lifetime_secs = 25
        [machine]
        name = "worker7"
        start = "TARGET.Owner == \"alice\""
        rank = "TARGET.ImageSize"
        [machine.attributes]
        HasGpu = "true"
        "#,
    )
    .unwrap();
    assert_eq!(c.data_dir.as_deref(), Some(Path::new("/var/lib/starling")));
    assert_eq!(c.network.listen.len(), 2);
    assert!(!c.network.mdns);
    assert_eq!(c.network.max_connections, 16);
    assert_eq!(c.advertise.refresh_secs, 10);
    assert_eq!(c.machine.name.as_deref(), Some("worker7"));
    assert_eq!(c.machine.requirements, "START", "unset keys keep defaults");
    assert_eq!(c.machine.attributes["HasGpu"], "true");
}

#[test]
fn unknown_keys_are_named_with_their_line() {
    for (text, key, line) in [
        ("colour = 1\n", "colour", "line 1"),
        (
            "[network]\nmdns = true\nlisten_on = []\n",
            "listen_on",
            "line 3",
        ),
        ("[machine]\nSTART = \"true\"\n", "START", "line 2"),
        ("[gossip]\n", "gossip", "line 1"),
    ] {
        let e = load_text(text).unwrap_err();
        assert!(matches!(e, Error::Parse { .. }), "{e:?}");
        let msg = chain(&e);
        assert!(msg.contains("agent.toml"), "{msg}");
        assert!(msg.contains(key), "{msg}");
        assert!(msg.contains(line), "{msg}");
    }
}

#[test]
fn wrong_types_are_named() {
    let msg = chain(&load_text("[network]\nmdns = \"yes\"\n").unwrap_err());
    assert!(msg.contains("line 2") && msg.contains("mdns"), "{msg}");
}

#[test]
fn bad_expressions_name_the_key() {
    for (text, key) in [
        ("[machine]\nstart = \"Memory >\"\n", "machine.start"),
        ("[machine]\nrequirements = \"(\"\n", "machine.requirements"),
        ("[machine]\nrank = \"1 +\"\n", "machine.rank"),
        (
            "[machine]\nsuspend = \"KeyboardIdle <\"\n",
            "machine.suspend",
        ),
        ("[machine]\ncontinue = \"&&\"\n", "machine.continue"),
        (
            "[machine]\npreemption_requirements = \"[\"\n",
            "machine.preemption_requirements",
        ),
        (
            "[machine.attributes]\nHasGpu = \"tru e e\"\n",
            "machine.attributes.HasGpu",
        ),
    ] {
        let e = load_text(text).unwrap_err();
        let msg = chain(&e);
        assert!(matches!(e, Error::Expression { .. }), "{msg}");
        assert!(msg.contains(&format!("`{key}`")), "{msg}");
        assert!(msg.contains("agent.toml"), "{msg}");
    }
}

#[test]
fn bad_values_are_refused() {
    for (text, key) in [
        ("[advertise]\nrefresh_secs = 0\n", "advertise.refresh_secs"),
        (
            "[advertise]\nlifetime_secs = 60\n",
            "advertise.lifetime_secs",
        ),
        ("[network]\nlisten = [\"0.0.0.0:4001\"]\n", "network.listen"),
        (
            "[network]\nbootstrap = [\"/ip4/192.0.2.1/tcp/1\"]\n",
            "network.bootstrap",
        ),
        (
            "[network]\nmax_connections = 0\n",
            "network.max_connections",
        ),
        ("[jobs]\naccount = \"no body\"\n", "jobs.account"),
        (
            "[network]\nrelays = [\"/ip4/192.0.2.1/tcp/4001\"]\n",
            "network.relays",
        ),
        (
            "[network]\nrelays = [\"/ip4/192.0.2.1/tcp/1/p2p/12D3KooWabc/p2p-circuit\"]\n",
            "network.relays",
        ),
        ("[relay]\nmax_reservations = 0\n", "relay.max_reservations"),
        ("[relay]\nmax_circuits = 5000\n", "relay.max_circuits"),
        ("[relay]\nmax_circuit_secs = 1\n", "relay.max_circuit_secs"),
        ("[relay]\nmax_circuit_mib = 0\n", "relay.max_circuit_mib"),
        ("[jobs]\ncgroups = \"v3\"\n", "jobs.cgroups"),
        ("[links]\nhorizon_secs = 0\n", "links.horizon_secs"),
        ("[links]\nreserve_percent = 95\n", "links.reserve_percent"),
        (
            "[links]\nusage_horizon_secs = 1\n",
            "links.usage_horizon_secs",
        ),
        ("[links]\nstrategy = \"fastest\"\n", "links.strategy"),
        ("[store]\nlease_secs = 5\n", "store.lease_secs"),
        ("[store]\nlend_mib = 2199023255553\n", "store.lend_mib"),
        ("[store]\nsite = \"a\\\"b\"\n", "store.site"),
        ("[store]\nhost = \"\"\n", "store.host"),
        (
            "[migration]\nthreshold_percent = 0\n",
            "migration.threshold_percent",
        ),
        (
            "[migration]\nthreshold_percent = 101\n",
            "migration.threshold_percent",
        ),
        (
            "[migration]\nmargin_percent = 500\n",
            "migration.margin_percent",
        ),
        (
            "[migration]\ninterval_secs = 0\n",
            "migration.interval_secs",
        ),
        (
            "[migration]\nmax_per_hour = 1000\n",
            "migration.max_per_hour",
        ),
        (
            "[migration]\nmin_residence_secs = 99999999\n",
            "migration.min_residence_secs",
        ),
        ("[jobs]\nslot_accounts = 100000\n", "jobs.slot_accounts"),
        (
            "[control]\nadministrators = [\"alice\", \"root:x\"]\n",
            "control.administrators",
        ),
        (
            "[machine]\npolicy_interval_secs = 0\n",
            "machine.policy_interval_secs",
        ),
        ("[priority]\nhalflife_secs = 0\n", "priority.halflife_secs"),
        ("[machine]\nname = \" \"\n", "machine.name"),
        ("[http]\nlisten = \"localhost\"\n", "http.listen"),
        ("[http]\nlisten = \"0.0.0.0:9618\"\n", "http.listen"),
        (
            "[machine.attributes]\nMemory = \"1\"\n",
            "machine.attributes.Memory",
        ),
        (
            "[machine.attributes]\n\"1bad\" = \"1\"\n",
            "machine.attributes.1bad",
        ),
        (
            "[machine.attributes]\nGPUs_DeviceName = \"1\"\n",
            "machine.attributes.GPUs_DeviceName",
        ),
        ("[machine]\ncpus = 0\n", "machine.cpus"),
        ("[gpus]\ndiscovery = \"cuda\"\n", "gpus.discovery"),
        ("[gpus]\nforeign_max = 65\n", "gpus.foreign_max"),
        ("[[gpus.device]]\nid = \"GPU 1\"\n", "gpus.device[0].id"),
        (
            "[[gpus.device]]\nid = \"a\"\n[[gpus.device]]\nid = \"A\"\n",
            "gpus.device[1].id",
        ),
        (
            "[[gpus.device]]\nid = \"a\"\ncapability = nan\n",
            "gpus.device[0].capability",
        ),
        (
            "[[gpus.device]]\nid = \"a\"\npath = \"dev/nvidia0\"\n",
            "gpus.device[0].path",
        ),
        (
            "[[gpus.device]]\nid = \"a\"\nmemory_mb = 9999999999999\n",
            "gpus.device[0].memory_mb",
        ),
    ] {
        let e = load_text(text).unwrap_err();
        let msg = chain(&e);
        assert!(matches!(e, Error::Invalid { .. }), "{msg}");
        assert!(msg.contains(&format!("`{key}`")), "{msg}");
    }
}

#[test]
fn administrators_are_read_and_default_to_none() {
    assert!(Config::default().control.administrators.is_empty());
    let c = load_text("[control]\nadministrators = [\"alice\", \"bob\"]\n").unwrap();
    assert_eq!(c.control.administrators, ["alice", "bob"]);
    let e = load_text("[control]\nadmins = []\n").unwrap_err();
    assert!(chain(&e).contains("admins"), "{}", chain(&e));
}

#[test]
fn http_is_off_by_default_and_public_only_when_asked() {
    assert_eq!(Config::default().http.listen_addr(), None);
    let c = load_text("[http]\nlisten = \"127.0.0.1:9618\"\n").unwrap();
    assert_eq!(
        c.http.listen_addr(),
        Some("127.0.0.1:9618".parse().unwrap())
    );
    let c = load_text("[http]\nlisten = \"[::]:9618\"\npublic = true\n").unwrap();
    assert_eq!(c.http.listen_addr(), Some("[::]:9618".parse().unwrap()));
    let e = load_text("[http]\nport = 9618\n").unwrap_err();
    assert!(chain(&e).contains("port"), "{}", chain(&e));
}

#[test]
fn oversized_files_are_refused_before_reading() {
    let text = format!("# {}\n", "x".repeat(MAX_FILE_LEN as usize));
    assert!(matches!(load_text(&text), Err(Error::TooLarge { .. })));
}

#[test]
fn a_missing_named_file_is_an_error() {
    let e = Config::load(Some(Path::new("/nonexistent/agent.toml"))).unwrap_err();
    assert!(matches!(e, Error::Read { .. }));
    assert!(e.to_string().contains("/nonexistent/agent.toml"));
}

#[test]
fn flags_win_over_the_file() {
    let mut c = load_text(
        "data_dir = \"/from/file\"\n[network]\nlisten = [\"/ip4/0.0.0.0/tcp/1\"]\n\
         bootstrap = [\"/ip4/192.0.2.1/tcp/1/p2p/12D3KooWabc\"]\n",
    )
    .unwrap();
    let file_bootstrap = c.network.bootstrap.clone();
    c.apply(Overrides {
        data_dir: Some("/from/flag".into()),
        listen: Some(vec!["/ip4/127.0.0.1/tcp/2".to_owned()]),
        bootstrap: None,
    })
    .unwrap();
    assert_eq!(c.data_dir().unwrap(), PathBuf::from("/from/flag"));
    assert_eq!(c.network.listen, vec!["/ip4/127.0.0.1/tcp/2".to_owned()]);
    assert_eq!(
        c.network.bootstrap, file_bootstrap,
        "no flag keeps the file"
    );
    // An empty list is a real override: no bootstrap peers.
    c.apply(Overrides {
        bootstrap: Some(Vec::new()),
        ..Overrides::default()
    })
    .unwrap();
    assert!(c.network.bootstrap.is_empty());
    let e = c
        .apply(Overrides {
            listen: Some(vec!["localhost:1".to_owned()]),
            ..Overrides::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("--listen"), "{e}");
}

#[test]
fn defaults_round_trip_through_toml() {
    let text = toml::to_string(&Config::default()).unwrap();
    assert_eq!(Config::parse(&text).unwrap(), Config::default());
}
