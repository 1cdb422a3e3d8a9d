//! `starling status` as a user runs it, over a file of machine ads
//! (`-ads`): the table and its summary, `-constraint`, `-af`, `-l`, `-json`,
//! `-total`, and the errors a user can make.

use std::process::{Command, Output};

use starling_protocol::classad::formats;

const ADS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/status_machines.ads"
);

fn status(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
        .arg("status")
        .args(args)
        .env("STARLING_DATA_DIR", "/nonexistent/starling-status-test")
        .output()
        .expect("starling runs")
}

fn ok(args: &[&str]) -> String {
    let o = status(args);
    assert!(
        o.status.success(),
        "starling status {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8 output")
}

fn failing(args: &[&str]) -> String {
    let o = status(args);
    assert!(!o.status.success(), "starling status {args:?} succeeded");
    assert!(o.stdout.is_empty(), "no output on failure");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn default_table_has_condor_status_columns_sorted_by_name() {
    let out = ok(&["-ads", ADS]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Name                    OpSys      Arch   State     Activity LoadAv Mem     ActvtyTime"
    );
    assert_eq!(lines[1], "");
    assert_eq!(
        &lines[2..7],
        [
            "slot1@alpha.example.org LINUX      X86_64 Claimed   Busy      1.050    512  1+01:57:42",
            "slot1@beta.example.org  LINUX      X86_64 Unclaimed Idle      0.070   1963  0+00:00:00",
            "slot1@gamma.example.org WINDOWS    INTEL  Owner     Idle      0.250 256000  2+02:00:00",
            "slot2@beta.example.org  LINUX      X86_64 Unclaimed Idle      0.000   1963  0+00:04:37",
            "slot2@gamma.example.org WINDOWS    INTEL  Claimed   Busy      2.000   2048  0+01:00:01",
        ]
    );
    assert_eq!(lines[7], "");
}

const SUMMARY: &str =
    "                Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle

  INTEL/WINDOWS     2     1       1         0       0          0      0        0      0
   X86_64/LINUX     3     0       1         2       0          0      0        0      0

          Total     5     1       2         2       0          0      0        0      0
";

#[test]
fn summary_counts_states_per_arch_and_opsys() {
    let out = ok(&["-ads", ADS]);
    assert!(out.ends_with(SUMMARY), "summary:\n{out}");
}

#[test]
fn total_prints_only_the_summary() {
    assert_eq!(ok(&["-ads", ADS, "-total"]), SUMMARY);
    assert_eq!(ok(&["--ads", ADS, "--total"]), SUMMARY);
}

#[test]
fn constraint_keeps_only_the_ads_where_it_is_true() {
    let out = ok(&[
        "-ads",
        ADS,
        "-constraint",
        "State == \"Unclaimed\"",
        "-af",
        "Name",
    ]);
    assert_eq!(out, "slot1@beta.example.org\nslot2@beta.example.org\n");
    // Undefined (no such attribute) is not true: the ad is skipped.
    assert_eq!(
        ok(&["-ads", ADS, "--constraint", "NoSuchAttr > 1", "-af", "Name"]),
        ""
    );
    let total = ok(&["-ads", ADS, "-constraint", "Arch == \"INTEL\"", "-total"]);
    assert!(
        total.contains("\n  INTEL/WINDOWS     2     1       1"),
        "{total}"
    );
    assert!(!total.contains("X86_64"), "{total}");
    // No machine matches: nothing is printed, as condor_status does.
    assert_eq!(ok(&["-ads", ADS, "-constraint", "Cpus > 100"]), "");
}

#[test]
fn autoformat_prints_values_space_separated_one_ad_a_line() {
    let out = ok(&[
        "-ads",
        ADS,
        "-af",
        "Name",
        "OpSys",
        "Cpus",
        "NoSuchAttr",
        "Memory * 2",
    ]);
    assert_eq!(
        out,
        "slot1@alpha.example.org LINUX 4 undefined 1024\n\
         slot1@beta.example.org LINUX 1 undefined 3926\n\
         slot1@gamma.example.org WINDOWS 2 undefined 512000\n\
         slot2@beta.example.org LINUX 1 undefined 3926\n\
         slot2@gamma.example.org WINDOWS 2 undefined 4096\n"
    );
}

#[test]
fn long_format_round_trips_to_the_same_ads() {
    let out = ok(&["-ads", ADS, "-l"]);
    let printed = formats::parse_ads_any(&out).expect("-l output parses");
    let text = std::fs::read_to_string(ADS).expect("test data");
    let mut original = formats::parse_ads_any(&text).expect("test data parses");
    let name = |ad: &starling_protocol::classad::ClassAd| {
        starling_protocol::classad::unparse(ad.get("Name").expect("Name"))
    };
    original.sort_by_key(name);
    assert_eq!(printed.len(), 5);
    for (p, o) in printed.iter().zip(&original) {
        assert!(p.same_as(o), "{} differs", name(o));
    }
    // Blank lines separate the ads.
    assert_eq!(out.matches("\n\n").count(), 5);
}

#[test]
fn json_is_an_array_of_the_selected_ads() {
    let out = ok(&["-ads", ADS, "-json", "-constraint", "Cpus >= 2"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("-json output is JSON");
    let ads = v.as_array().expect("an array");
    assert_eq!(ads.len(), 3);
    assert_eq!(ads[0]["Name"], "slot1@alpha.example.org");
    assert_eq!(ads[0]["Memory"], 512);
}

#[test]
fn reads_json_output_back_as_ads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("machines.json");
    std::fs::write(&path, ok(&["-ads", ADS, "-json"])).expect("writing");
    let path = path.to_str().expect("utf-8 path");
    assert_eq!(ok(&["-ads", path, "-total"]), SUMMARY);
}

#[test]
fn unparseable_constraint_is_an_error_naming_it() {
    let err = failing(&["-ads", ADS, "-constraint", "Cpus >"]);
    assert!(err.contains("-constraint"), "{err}");
    assert!(err.contains("Cpus >"), "{err}");
}

#[test]
fn missing_ads_file_is_an_error_naming_it() {
    let err = failing(&["-ads", "/nonexistent/machines.ads"]);
    assert!(err.contains("/nonexistent/machines.ads"), "{err}");
}

#[test]
fn without_ads_it_says_no_agent_runs() {
    let err = failing(&[]);
    assert!(
        err.contains("no running agent at /nonexistent/starling-status-test"),
        "{err}"
    );
    assert!(err.contains("-ads FILE"), "{err}");
}

#[test]
fn reads_ads_in_the_new_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("machines.ad");
    std::fs::write(
        &path,
        "[ Name = \"slot1@x\"; OpSys = \"LINUX\"; Arch = \"AARCH64\"; State = \"Matched\"; \
           Activity = \"Idle\"; LoadAvg = 0.5; Memory = 64; MyCurrentTime = 100; \
           EnteredCurrentActivity = 40 ]",
    )
    .expect("writing");
    let out = ok(&["-ads", path.to_str().expect("utf-8 path")]);
    assert!(
        out.contains("slot1@x LINUX      AARCH64 Matched   Idle      0.500   64  0+00:01:00"),
        "{out}"
    );
    assert!(
        out.contains("\n  AARCH64/LINUX     1     0       0         0       1"),
        "{out}"
    );
}
