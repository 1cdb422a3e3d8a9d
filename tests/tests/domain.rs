//! Identity and trust as an administrator handles them: `starling id`, and
//! `starling domain init | admit | policy | install | verify` on real files,
//! including tampered, replayed-elsewhere, expired and wrong-domain ones.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use starling_protocol::identity::{armor, Envelope};

/// A scratch directory with its own agent data directory.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `starling` with this site's data directory.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
            .args(args)
            .env("STARLING_DATA_DIR", self.path("agent"))
            .stdin(Stdio::null())
            .output()
            .expect("starling runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Runs a command that must be refused with exit code `code`; returns stderr.
    fn refused(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}",
            text(&out.stdout)
        );
        text(&out.stderr)
    }

    fn agent_id(&self) -> String {
        let json: serde_json::Value = serde_json::from_str(&self.ok(&["id", "--json"])).unwrap();
        json["agent_id"].as_str().unwrap().to_owned()
    }

    /// Signs a certificate with the domain key file `key`, into `out`.
    fn admit(&self, key: &str, agent: &str, roles: &str, out: &Path, extra: &[&str]) {
        let mut args = vec![
            "domain",
            "admit",
            "--key",
            key,
            agent,
            "--roles",
            roles,
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        self.ok(&args);
    }

    /// Makes a domain key; returns its path and public key.
    fn domain(&self, name: &str) -> (String, String) {
        let key = self.path(&format!("{name}.key"));
        let out = self.ok(&["domain", "init", name, "--out", s(&key)]);
        let public = out
            .lines()
            .find_map(|l| l.strip_prefix("public key"))
            .unwrap()
            .trim()
            .to_owned();
        (s(&key).to_owned(), public)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Re-armors `file` after changing its envelope bytes with `change`.
fn tamper(file: &Path, change: impl FnOnce(&mut Vec<u8>)) {
    let (label, mut bytes) = armor::dearmor(&std::fs::read_to_string(file).unwrap()).unwrap();
    change(&mut bytes);
    std::fs::write(file, armor::armor(&label, &bytes, &[])).unwrap();
}

#[test]
fn id_makes_one_private_key_and_explains_how_to_be_admitted() {
    let site = Site::new();
    let first = site.ok(&["id"]);
    assert!(first.contains("certificates: none"), "{first}");
    assert!(first.contains("starling domain admit"), "{first}");
    let id = site.agent_id();
    assert!(id.starts_with("12D3KooW"), "{id}");
    assert_eq!(site.agent_id(), id, "the id is stable across runs");
    let mode = std::fs::metadata(site.path("agent/agent.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn admitted_agent_installs_and_shows_its_certificate() {
    let site = Site::new();
    let (key, public) = site.domain("physics");
    let id = site.agent_id();
    let cert = site.path("me.cert");
    site.admit(&key, &id, "execute,store", &cert, &["--days", "30"]);

    let verified = site.ok(&[
        "domain",
        "verify",
        s(&cert),
        "--domain-key",
        &public,
        "--agent-id",
        &id,
    ]);
    assert!(verified.contains("certificate: valid"), "{verified}");
    assert!(verified.contains("roles       execute,store"), "{verified}");

    let installed = site.ok(&["domain", "install", s(&cert)]);
    assert!(
        installed.contains("domain physics admits this agent as execute,store"),
        "{installed}"
    );
    let json: serde_json::Value = serde_json::from_str(&site.ok(&["id", "--json"])).unwrap();
    let certs = json["certificates"].as_array().unwrap();
    assert_eq!(certs.len(), 1);
    assert_eq!(certs[0]["domain"], "physics");
    assert_eq!(certs[0]["domain_key"], public.as_str());
    assert_eq!(certs[0]["status"], "valid");
}

#[test]
fn tampered_certificates_are_refused_and_not_installed() {
    let site = Site::new();
    let (key, _) = site.domain("physics");
    let id = site.agent_id();
    let cert = site.path("me.cert");
    site.admit(&key, &id, "execute", &cert, &[]);
    // Grant ourselves a role the administrator did not: "execute" -> "executf"
    // keeps the encoding valid, so only the signature can catch it.
    tamper(&cert, |bytes| {
        let at = bytes.windows(7).position(|w| w == b"execute").unwrap();
        bytes[at + 6] = b'f';
    });
    let err = site.refused(&["domain", "verify", s(&cert)], 1);
    assert!(err.contains("bad signature"), "{err}");
    let err = site.refused(&["domain", "install", s(&cert)], 2);
    assert!(err.contains("bad signature"), "{err}");
    assert!(!site.path("agent/certs/physics.cert").exists());

    // A flipped bit anywhere is caught, whatever part it hits.
    site.admit(&key, &id, "execute", &cert, &[]);
    let len = armor::dearmor(&std::fs::read_to_string(&cert).unwrap())
        .unwrap()
        .1
        .len();
    for i in (0..len).step_by(17) {
        let copy = site.path(&format!("flip{i}.cert"));
        std::fs::copy(&cert, &copy).unwrap();
        tamper(&copy, |bytes| bytes[i] ^= 0x10);
        site.refused(&["domain", "verify", s(&copy)], 1);
    }
}

#[test]
fn certificates_from_the_wrong_domain_or_for_another_agent_are_refused() {
    let site = Site::new();
    let (physics, _) = site.domain("physics");
    let (_, chem_public) = site.domain("chem");
    let id = site.agent_id();
    let other = Site::new().agent_id();
    let cert = site.path("other.cert");
    site.admit(&physics, &other, "submit", &cert, &[]);

    let err = site.refused(
        &["domain", "verify", s(&cert), "--domain-key", &chem_public],
        1,
    );
    assert!(err.contains("not by the expected domain key"), "{err}");
    let err = site.refused(&["domain", "verify", s(&cert), "--agent-id", &id], 1);
    assert!(
        err.contains(&format!("it admits agent {other}, not {id}")),
        "{err}"
    );
    let err = site.refused(&["domain", "install", s(&cert)], 2);
    assert!(
        err.contains(&format!("the certificate admits agent {other}")),
        "{err}"
    );
    assert!(!site.path("agent/certs/physics.cert").exists());
}

#[test]
fn expiry_and_not_yet_valid_are_checked_at_the_given_time() {
    let site = Site::new();
    let (key, _) = site.domain("physics");
    let id = site.agent_id();
    let cert = site.path("me.cert");
    site.admit(&key, &id, "execute", &cert, &["--days", "2"]);
    let err = site.refused(&["domain", "verify", s(&cert), "--at", "2100-01-01"], 1);
    assert!(err.contains("expired at"), "{err}");
    let err = site.refused(&["domain", "verify", s(&cert), "--at", "2001-01-01"], 1);
    assert!(err.contains("not valid yet"), "{err}");
    let err = site.refused(&["domain", "verify", s(&cert), "--at", "tomorrow"], 1);
    assert!(err.contains("expected an ISO 8601 time"), "{err}");
}

#[test]
fn policy_options_belong_to_the_trust_before_them() {
    let site = Site::new();
    let (physics, physics_public) = site.domain("physics");
    let (_, chem) = site.domain("chem");
    let (_, bio) = site.domain("bio");
    let policy = site.path("physics.policy");
    let chem_trust = format!("chem={chem}");
    let bio_trust = format!("bio={bio}");
    site.ok(&[
        "domain",
        "policy",
        "--key",
        &physics,
        "--trust",
        &chem_trust,
        "--accept",
        "RequestCpus <= 4",
        "--max-slots",
        "10",
        "--trust",
        &bio_trust,
        "--priority-factor",
        "5",
        "--max-fraction",
        "0.25",
        "--export",
        "Arch == \"X86_64\"",
        "--out",
        s(&policy),
    ]);
    let shown = site.ok(&[
        "domain",
        "verify",
        s(&policy),
        "--domain-key",
        &physics_public,
    ]);
    let chem_part = &shown[shown.find("trusts chem").unwrap()..shown.find("trusts bio").unwrap()];
    let bio_part = &shown[shown.find("trusts bio").unwrap()..];
    assert!(
        chem_part.contains("accept           RequestCpus <= 4"),
        "{shown}"
    );
    assert!(chem_part.contains("max slots        10"), "{shown}");
    assert!(chem_part.contains("priority factor  1"), "{shown}");
    assert!(bio_part.contains("priority factor  5"), "{shown}");
    assert!(bio_part.contains("max fraction     0.25"), "{shown}");
    assert!(
        bio_part.contains("exports          Arch == \"X86_64\""),
        "{shown}"
    );
    assert!(!bio_part.contains("accept"), "{shown}");
}

#[test]
fn install_takes_our_domains_policy_and_refuses_any_other() {
    let site = Site::new();
    let (physics, physics_public) = site.domain("physics");
    let (_, chem) = site.domain("chem");
    let id = site.agent_id();
    let chem_trust = format!("chem={chem}");
    let sign_policy = |key: &str, out: &Path| {
        site.ok(&[
            "domain",
            "policy",
            "--key",
            key,
            "--trust",
            &chem_trust,
            "--out",
            s(out),
        ]);
    };
    let policy = site.path("physics.policy");
    sign_policy(&physics, &policy);

    // Before this agent is admitted into physics nothing vouches for the key.
    let err = site.refused(&["domain", "install", s(&policy)], 2);
    assert!(err.contains("policy refused"), "{err}");
    assert!(err.contains("install the certificate first"), "{err}");
    assert!(err.contains(&physics_public), "{err}");

    let cert = site.path("me.cert");
    site.admit(&physics, &id, "execute", &cert, &[]);
    site.ok(&["domain", "install", s(&cert)]);
    let installed = site.ok(&["domain", "install", s(&policy)]);
    assert!(
        installed.contains("installed: the policy of domain physics"),
        "{installed}"
    );
    assert!(installed.contains("trusting chem"), "{installed}");
    let path = site.path("agent/policies/physics.policy");
    let shown = site.ok(&[
        "domain",
        "verify",
        s(&path),
        "--domain-key",
        &physics_public,
    ]);
    assert!(shown.contains("trusts chem"), "{shown}");

    // Another administrator's key calling its domain "physics" too: refused,
    // naming both keys, and the installed policy is kept.
    let rogue = Site::new();
    let (rogue_key, rogue_public) = rogue.domain("physics");
    let forged = site.path("rogue.policy");
    sign_policy(&rogue_key, &forged);
    let before = std::fs::read(&path).unwrap();
    let err = site.refused(&["domain", "install", s(&forged)], 2);
    assert!(err.contains(&rogue_public), "{err}");
    assert!(err.contains(&physics_public), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // A damaged policy file is refused by its signature; a cut one by its
    // armor; neither replaces the installed one.
    let damaged = site.path("damaged.policy");
    std::fs::copy(&policy, &damaged).unwrap();
    tamper(&damaged, |bytes| {
        let at = bytes.windows(4).position(|w| w == b"chem").unwrap();
        bytes[at] = b'c' ^ 0x20;
    });
    let err = site.refused(&["domain", "install", s(&damaged)], 2);
    assert!(err.contains("bad signature"), "{err}");
    let text = std::fs::read_to_string(&policy).unwrap();
    std::fs::write(&damaged, &text[..text.len() * 2 / 3]).unwrap();
    let err = site.refused(&["domain", "install", s(&damaged)], 2);
    assert!(err.contains(s(&damaged)), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn bad_policy_input_is_named() {
    let site = Site::new();
    let (physics, _) = site.domain("physics");
    let (_, chem) = site.domain("chem");
    let trust = format!("chem={chem}");
    let out = s(&site.path("p")).to_owned();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--accept", "true", "--trust", &trust],
            "--accept must come after the --trust",
        ),
        (
            &["--trust", &trust, "--accept", "RequestCpus <="],
            "invalid accept expression",
        ),
        (
            &["--trust", &trust, "--max-slots", "1", "--max-slots", "2"],
            "--max-slots given twice for --trust chem",
        ),
        (
            &["--trust", &trust, "--max-fraction", "2"],
            "must be more than 0 and at most 1",
        ),
        (
            &["--trust", &trust, "--max-slots", "0"],
            "a cap must be at least 1",
        ),
        (
            &["--trust", &trust, "--export-slots", "0"],
            "a cap must be at least 1",
        ),
        (&["--trust", "chem"], "expected NAME=KEY"),
        (&["--trust", "chem=notakey"], "is not an ed25519 public key"),
        (&["--trust", &trust, "--trust", &trust], "listed twice"),
        (&[], "give at least one --trust"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["domain", "policy", "--key", &physics, "--out", &out];
        args.extend_from_slice(extra);
        let err = site.refused(&args, 2);
        assert!(err.contains(expected), "{extra:?}: {err}");
        assert!(!site.path("p").exists(), "{extra:?} wrote a policy");
    }
}

#[test]
fn domain_keys_are_private_never_overwritten_and_not_signed_files() {
    let site = Site::new();
    let (key, public) = site.domain("physics");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let before = std::fs::read(&key).unwrap();
    let err = site.refused(&["domain", "init", "physics", "--out", &key], 2);
    assert!(err.contains("never overwritten"), "{err}");
    assert_eq!(std::fs::read(&key).unwrap(), before);
    assert!(String::from_utf8(before).unwrap().contains(&public));
    let err = site.refused(&["domain", "verify", &key], 1);
    assert!(err.contains("is a secret domain key"), "{err}");
    let err = site.refused(
        &["domain", "init", "bad name", "--out", s(&site.path("x"))],
        2,
    );
    assert!(err.contains("like a DNS name"), "{err}");
    let err = site.refused(
        &[
            "domain",
            "admit",
            "--key",
            &key,
            "12D3KooWnope",
            "--roles",
            "execute",
        ],
        2,
    );
    assert!(err.contains("agent id"), "{err}");
    let id = site.agent_id();
    let err = site.refused(
        &["domain", "admit", "--key", &key, &id, "--roles", "cook"],
        2,
    );
    assert!(err.contains("unknown role \"cook\""), "{err}");
}

#[test]
fn verify_reads_raw_envelopes_and_names_garbage() {
    let site = Site::new();
    let (key, _) = site.domain("physics");
    let id = site.agent_id();
    let cert = site.path("me.cert");
    site.admit(&key, &id, "execute", &cert, &[]);
    let (_, bytes) = armor::dearmor(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    assert!(Envelope::decode(&bytes).is_ok());
    let raw = site.path("me.raw");
    std::fs::write(&raw, &bytes).unwrap();
    site.ok(&["domain", "verify", s(&raw)]);
    std::fs::write(&raw, b"\x00\x01garbage").unwrap();
    let err = site.refused(&["domain", "verify", s(&raw)], 1);
    assert!(err.contains("not a signed Starling file"), "{err}");
}

#[test]
fn id_reports_a_damaged_certificate_file_and_keeps_going() {
    let site = Site::new();
    site.agent_id();
    std::fs::create_dir_all(site.path("agent/certs")).unwrap();
    std::fs::write(site.path("agent/certs/broken.cert"), "junk").unwrap();
    let json: serde_json::Value = serde_json::from_str(&site.ok(&["id", "--json"])).unwrap();
    let status = json["certificates"][0]["status"].as_str().unwrap();
    assert!(
        status.starts_with("unreadable: no '-----BEGIN STARLING"),
        "{status}"
    );
}
