//! The wire messages: every message round-trips, every decoder survives
//! hostile bytes, limits are enforced and named, older and newer peers still
//! understand each other, and the encodings match the golden files in
//! `tests/golden/wire/` byte for byte.
//!
//! `main.rs` holds the fixtures every part shares (keys, certificates, ads,
//! a pool of signed envelopes); each part is a module of its own:
//! [`strategies`] (how messages are drawn), [`properties`] (round trips and
//! hostile bytes), [`limits`], [`compatibility`] (older and newer peers) and
//! [`golden`] (the golden files).

mod compatibility;
mod golden;
mod limits;
mod properties;
mod strategies;

use std::sync::OnceLock;

use starling_protocol::classad::{parse_ad, ClassAd};
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{Certificate, Envelope, Keypair, Kind, Roles, Timestamp};

const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
const HOUR: u64 = 3_600_000;

fn agent_key(n: u8) -> Keypair {
    Keypair::from_seed(&[n; 32])
}

fn domain_key() -> Keypair {
    Keypair::from_seed(&[200; 32])
}

fn certificate(agent: u8) -> Envelope {
    Certificate {
        domain: "physics.example.org".to_owned(),
        domain_key: domain_key().public(),
        agent: agent_key(agent).agent_id(),
        roles: "execute,submit".parse::<Roles>().unwrap(),
        valid_from: T0,
        valid_until: T0.saturating_add_millis(30 * 24 * HOUR),
    }
    .issue(&domain_key(), 1)
    .unwrap()
}

fn machine_ad() -> ClassAd {
    parse_ad(
        r#"[ Machine = "node7.physics.example.org"; Cpus = 8; Memory = 32768;
             Arch = "X86_64"; OpSys = "LINUX"; Start = KeyboardIdle > 15 * 60;
             Requirements = TARGET.RequestCpus <= Cpus ]"#,
    )
    .unwrap()
}

fn submitter_ad() -> ClassAd {
    parse_ad(r#"[ Name = "ann@physics.example.org"; IdleJobs = 12; RunningJobs = 3 ]"#).unwrap()
}

fn job_ad() -> ClassAd {
    parse_ad(
        r#"[ Owner = "ann"; User = "ann@physics.example.org"; Cmd = "sim";
             RequestCpus = 2; RequestMemory = 2048; Requirements = OpSys == "LINUX" ]"#,
    )
    .unwrap()
}

fn signed(kind: AdKind, agent: u8, seq: u64, ad: &ClassAd) -> Envelope {
    gossip::seal(
        &agent_key(agent),
        seq,
        T0,
        HOUR,
        kind,
        ad,
        &[certificate(agent)],
    )
    .unwrap()
}

fn job() -> Envelope {
    signed(AdKind::Job, 1, 1, &job_ad())
}

/// Envelopes signed once: signing in every proptest case would make the
/// tests slow without testing more.
fn pool() -> &'static [Envelope] {
    static POOL: OnceLock<Vec<Envelope>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut pool = vec![
            job(),
            signed(AdKind::Machine, 2, 7, &machine_ad()),
            signed(AdKind::Submitter, 3, 9, &submitter_ad()),
            certificate(4),
        ];
        for n in 0..4u8 {
            pool.push(Envelope::seal(
                &agent_key(n),
                u64::from(n),
                T0,
                T0.saturating_add_millis(HOUR),
                Kind::from_u16(u16::from(n) * 300),
                vec![n; usize::from(n) * 10],
            ));
        }
        pool
    })
}
