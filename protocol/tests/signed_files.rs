//! Certificates, policies and envelopes as bytes: every one round-trips,
//! hostile bytes are refused without a panic, and the encoding is pinned by
//! golden hex files so an accidental change shows up as a diff.
//!
//! To accept a deliberate encoding change: `STARLING_UPDATE_GOLDEN=1 cargo
//! test -p starling-protocol --test signed_files`, then review the diff.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use starling_protocol::identity::{
    armor, AgentId, Certificate, DomainPolicy, Envelope, Export, Freshness, Keypair, Kind,
    PublicKey, Roles, Timestamp, TrustedDomain, Verifier,
};

const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
const DAY: u64 = 86_400_000;

fn config() -> Config {
    Config {
        cases: 256,
        rng_seed: RngSeed::Fixed(20_261_122),
        failure_persistence: None,
        ..Config::default()
    }
}

fn key(n: u8) -> Keypair {
    Keypair::from_seed(&[n; 32])
}

fn domain_name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,20}(\\.[a-z0-9]{1,10}){0,3}"
}

fn roles() -> impl Strategy<Value = Roles> {
    (1u8..16).prop_map(|bits| {
        let names = ["execute", "submit", "store", "netmgr"];
        let chosen: Vec<&str> = (0..4)
            .filter(|i| bits & (1 << i) != 0)
            .map(|i| names[i])
            .collect();
        chosen.join(",").parse().unwrap()
    })
}

fn certificate() -> impl Strategy<Value = (Certificate, u8)> {
    (
        domain_name(),
        any::<u8>(),
        any::<u8>(),
        roles(),
        0u64..10_000 * DAY,
        1u64..1000 * DAY,
    )
        .prop_map(|(domain, domain_seed, agent_seed, roles, from, length)| {
            let cert = Certificate {
                domain,
                domain_key: key(domain_seed).public(),
                agent: key(agent_seed).agent_id(),
                roles,
                valid_from: Timestamp::from_unix_millis(from),
                valid_until: Timestamp::from_unix_millis(from + length),
            };
            (cert, domain_seed)
        })
}

fn trusted(i: usize) -> impl Strategy<Value = TrustedDomain> {
    (
        domain_name(),
        proptest::option::of(prop::sample::select(vec![
            "true",
            "RequestCpus <= 4",
            "Owner =!= \"eve\" && Memory > 1024",
        ])),
        proptest::option::of(any::<u32>()),
        proptest::option::of(0.01f64..=1.0),
        0.1f64..1000.0,
        proptest::option::of(prop::sample::select(vec!["Arch == \"X86_64\"", "false"])),
        proptest::option::of(any::<u32>()),
        proptest::option::of(0u32..=starling_protocol::identity::MAX_GPUS_CAP),
    )
        .prop_map(
            move |(
                name,
                accept,
                max_slots,
                max_fraction,
                priority_factor,
                machines,
                export_slots,
                max_gpus,
            )| {
                TrustedDomain {
                    // Distinct names and keys per position keep the policy valid.
                    name: format!("d{i}-{name}"),
                    key: key(100 + i as u8).public(),
                    accept: accept.map(str::to_owned),
                    max_slots,
                    max_fraction,
                    max_gpus,
                    priority_factor,
                    export: Export {
                        machines: machines.map(str::to_owned),
                        max_slots: export_slots,
                    },
                    store_mib: None,
                }
            },
        )
}

fn policy() -> impl Strategy<Value = DomainPolicy> {
    (domain_name(), 0usize..5)
        .prop_flat_map(|(domain, n)| {
            let trusts: Vec<_> = (0..n).map(trusted).collect();
            (Just(format!("home-{domain}")), trusts)
        })
        .prop_map(|(domain, trusts)| DomainPolicy {
            domain,
            trusts,
            bootstrap: Vec::new(),
        })
}

/// Every way to read untrusted bytes as a signed file; none may panic.
fn read_every_way(bytes: &[u8]) {
    let fresh = Freshness::default();
    if let Ok(envelope) = Envelope::decode(bytes) {
        let _ = envelope.open(T0, &fresh);
        let _ = Certificate::open(&envelope, T0, &fresh);
        let _ = DomainPolicy::open(&envelope, T0, &fresh);
    }
    let _ = Verifier::new(fresh).open_batch(&[bytes, bytes], T0);
    let text = String::from_utf8_lossy(bytes);
    let _ = armor::dearmor(&text);
    let _ = armor::dearmor_domain_key(&text);
    let _ = text.parse::<AgentId>();
    let _ = text.parse::<PublicKey>();
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn certificates_round_trip((cert, domain_seed) in certificate()) {
        let envelope = cert.issue(&key(domain_seed), 7).unwrap();
        let text = armor::armor_envelope(&envelope, &[]);
        let (_, bytes) = armor::dearmor(&text).unwrap();
        let back = Envelope::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &envelope);
        let opened = Certificate::open(&back, cert.valid_from, &Freshness::default()).unwrap();
        prop_assert_eq!(opened, cert);
    }

    #[test]
    fn policies_round_trip(policy in policy(), seq in any::<u64>()) {
        let envelope = policy.sign(&key(1), seq, T0, T0.saturating_add_millis(DAY)).unwrap();
        let back = Envelope::decode(&envelope.to_bytes()).unwrap();
        prop_assert_eq!(back.header().seq, seq);
        prop_assert_eq!(DomainPolicy::open(&back, T0, &Freshness::default()).unwrap(), policy);
    }

    #[test]
    fn truncated_and_flipped_envelopes_never_panic_nor_verify(
        (cert, domain_seed) in certificate(),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let bytes = cert.issue(&key(domain_seed), 1).unwrap().to_bytes();
        let truncated = &bytes[..cut.index(bytes.len())];
        read_every_way(truncated);
        prop_assert!(Envelope::decode(truncated).is_err());
        let mut flipped = bytes.clone();
        let at = flip.index(flipped.len());
        flipped[at] ^= 1 << bit;
        read_every_way(&flipped);
        let opened = Envelope::decode(&flipped).and_then(|e| e.open(cert.valid_from, &Freshness::default()));
        prop_assert!(opened.is_err(), "flipping bit {} of byte {} went unnoticed", bit, at);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        read_every_way(&bytes);
    }
}

#[test]
fn oversized_envelopes_are_refused_naming_the_limit() {
    let huge = Envelope::seal(&key(1), 1, T0, T0, Kind::JOB, vec![0; 2 << 20]).to_bytes();
    let err = Envelope::decode(&huge).unwrap_err().to_string();
    assert!(err.contains("more than the limit of 1048576"), "{err}");
}

fn golden(name: &str, bytes: &[u8]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/identity")
        .join(format!("{name}.hex"));
    let hex: String = bytes
        .chunks(32)
        .map(|line| line.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n")
        .collect();
    if std::env::var_os("STARLING_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &hex).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == hex,
        "the encoding of {name} changed (or {} is missing).\nIf that is deliberate, run with STARLING_UPDATE_GOLDEN=1 and review the diff.\nnow:\n{hex}",
        path.display()
    );
}

#[test]
fn certificate_encoding_is_pinned() {
    let cert = Certificate {
        domain: "physics.example.org".to_owned(),
        domain_key: key(1).public(),
        agent: key(2).agent_id(),
        roles: "execute,submit,store".parse().unwrap(),
        valid_from: T0,
        valid_until: T0.saturating_add_millis(365 * DAY),
    };
    golden("certificate", &cert.issue(&key(1), 1).unwrap().to_bytes());
}

/// The policy whose encoding is pinned; `max_gpus` is left out of it, as
/// policies signed before that term had none.
fn pinned_policy() -> DomainPolicy {
    DomainPolicy {
        domain: "physics.example.org".to_owned(),
        trusts: vec![TrustedDomain {
            name: "chem.example.org".to_owned(),
            key: key(3).public(),
            accept: Some("RequestCpus <= 4".to_owned()),
            max_slots: Some(20),
            max_fraction: Some(0.25),
            max_gpus: None,
            priority_factor: 10.0,
            export: Export {
                machines: Some("Arch == \"X86_64\"".to_owned()),
                max_slots: Some(8),
            },
            store_mib: None,
        }],
        bootstrap: Vec::new(),
    }
}

#[test]
fn policy_encoding_is_pinned() {
    golden(
        "domain_policy",
        &pinned_policy()
            .sign(&key(1), 2, T0, T0.saturating_add_millis(DAY))
            .unwrap()
            .to_bytes(),
    );
    let mut with_gpus = pinned_policy();
    with_gpus.trusts[0].max_gpus = Some(4);
    golden(
        "domain_policy_max_gpus",
        &with_gpus
            .sign(&key(1), 3, T0, T0.saturating_add_millis(DAY))
            .unwrap()
            .to_bytes(),
    );
}

/// A policy signed before `max_gpus` existed (the pinned bytes) still
/// opens, with no GPU cap; one with the term carries it.
#[test]
fn policies_signed_before_max_gpus_still_open() {
    let bytes = |name: &str| -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/identity")
            .join(format!("{name}.hex"));
        let hex: String = std::fs::read_to_string(path)
            .unwrap()
            .split_whitespace()
            .collect();
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    };
    let open = |name: &str| {
        DomainPolicy::open(
            &Envelope::decode(&bytes(name)).unwrap(),
            T0,
            &Freshness::default(),
        )
        .unwrap()
    };
    let old = open("domain_policy");
    assert_eq!(old, pinned_policy());
    assert_eq!(old.trusts[0].max_gpus, None);
    assert_eq!(open("domain_policy_max_gpus").trusts[0].max_gpus, Some(4));
}
