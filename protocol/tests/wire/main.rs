//! The wire messages: every message round-trips, every decoder survives
//! hostile bytes, limits are enforced and named, older and newer peers still
//! understand each other, and the encodings match the golden files in
//! `tests/golden/wire/` byte for byte.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::select;
use serde::Serialize;
use starling_protocol::cbor;
use starling_protocol::claim::{self, ClaimId, RejectCode, ReleaseReason, RequestId};
use starling_protocol::classad::{parse_ad, ClassAd};
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{
    Certificate, Envelope, Freshness, Keypair, Kind, Roles, Timestamp,
};
use starling_protocol::links;
use starling_protocol::transfer::{self, ErrorCode, File, FileName, Hash, TransferId};
use starling_protocol::view::{self, Cursor};
use starling_protocol::wire::{self, Message};

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

// ---------------------------------------------------------------------------
// Strategies, by hand.

fn envelope() -> impl Strategy<Value = Envelope> {
    select(pool())
}

fn boxed_envelope() -> impl Strategy<Value = Box<Envelope>> {
    envelope().prop_map(Box::new)
}

fn envelopes(max: usize) -> impl Strategy<Value = Vec<Envelope>> {
    prop::collection::vec(envelope(), 0..=max)
}

fn claim_id() -> impl Strategy<Value = ClaimId> {
    any::<[u8; 16]>().prop_map(ClaimId::from_bytes)
}

fn reason() -> impl Strategy<Value = String> {
    ".{0,80}"
}

fn slot() -> impl Strategy<Value = String> {
    "[a-z0-9_@.]{1,40}"
}

fn cursor() -> impl Strategy<Value = Cursor> {
    prop::collection::vec(any::<u8>(), 0..=view::MAX_CURSOR_LEN)
        .prop_map(|b| Cursor::new(b).unwrap())
}

fn reject_code() -> impl Strategy<Value = RejectCode> {
    prop_oneof![
        select(RejectCode::ALL),
        any::<u16>().prop_map(RejectCode::from_code)
    ]
}

fn release_reason() -> impl Strategy<Value = ReleaseReason> {
    prop_oneof![
        select(ReleaseReason::ALL),
        any::<u16>().prop_map(ReleaseReason::from_code)
    ]
}

fn error_code() -> impl Strategy<Value = ErrorCode> {
    prop_oneof![
        select(ErrorCode::ALL),
        any::<u16>().prop_map(ErrorCode::from_code)
    ]
}

fn file_name() -> impl Strategy<Value = FileName> {
    prop::collection::vec(
        "[a-zA-Z0-9_ .é-]{1,12}".prop_filter("not . or ..", |c| c != "." && c != ".."),
        1..4,
    )
    .prop_map(|parts| FileName::new(parts.join("/")).unwrap())
}

fn report() -> impl Strategy<Value = transfer::Report> {
    (
        proptest::option::of(any::<i32>()),
        proptest::option::of(1..64i32),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        proptest::option::of((any::<u32>(), any::<i32>(), "[ -~]{0,200}")),
    )
        .prop_map(|(exit_code, signal, user, sys, wall, peak, hold)| {
            let mut report = transfer::Report::default();
            report.exit_code = exit_code;
            report.signal = signal;
            report.user_cpu_ms = user;
            report.sys_cpu_ms = sys;
            report.wall_ms = wall;
            report.peak_memory_kib = peak;
            report.hold =
                hold.map(|(code, subcode, reason)| transfer::Hold::new(code, subcode, reason));
            report
        })
}

fn files() -> impl Strategy<Value = Vec<File>> {
    prop::collection::btree_map(
        file_name(),
        (any::<u64>(), any::<[u8; 32]>(), 0..=transfer::MODE_MASK),
        0..6,
    )
    .prop_map(|files| {
        files
            .into_iter()
            .map(|(name, (size, hash, mode))| {
                File::new(name, size, Hash::from_bytes(hash), mode).unwrap()
            })
            .collect()
    })
}

fn view_request() -> impl Strategy<Value = view::Request> {
    (
        prop::collection::vec(any::<u16>().prop_map(Kind::from_u16), 0..=view::MAX_KINDS),
        prop::option::of(cursor()),
        any::<u32>(),
        envelopes(2),
    )
        .prop_map(|(kinds, after, max, certificates)| view::Request::Pull {
            kinds,
            after,
            max,
            certificates,
        })
}

fn view_response() -> impl Strategy<Value = view::Response> {
    prop_oneof![
        (envelopes(8), prop::option::of(cursor()))
            .prop_map(|(ads, next)| view::Response::Page { ads, next }),
        reason().prop_map(|reason| view::Response::Refused { reason }),
    ]
}

fn claim_request() -> impl Strategy<Value = claim::Request> {
    prop_oneof![
        (
            any::<u64>(),
            boxed_envelope(),
            any::<u64>(),
            prop::option::of(slot()),
            0..=claim::MAX_WAIT_MS,
        )
            .prop_map(
                |(request, job, lease_ms, slot, wait_ms)| claim::Request::Claim {
                    request: RequestId(request),
                    job,
                    lease_ms,
                    slot,
                    wait_ms,
                }
            ),
        claim_id().prop_map(|claim| claim::Request::Keepalive { claim }),
        (claim_id(), release_reason())
            .prop_map(|(claim, reason)| claim::Request::Release { claim, reason }),
        (claim_id(), "[ -~]{0,256}")
            .prop_map(|(claim, reason)| claim::Request::Vacate { claim, reason }),
        (
            "[a-z]{1,12}\\.example",
            claim_id(),
            1..=claim::MAX_SHARE_CPUS,
            0..=claim::MAX_SHARE_GPUS,
            1..=claim::MAX_SHARE_LEASE_MS,
            any::<bool>(),
            prop::option::of("[a-z][a-z0-9_]{0,8}(:[1-9])?(,[a-z]{1,4}\\.[a-z]{1,4})?")
        )
            .prop_map(|(domain, claim, cpus, gpus, lease_ms, renewing, limits)| {
                claim::Request::Share {
                    domain,
                    claim,
                    cpus,
                    gpus,
                    lease_ms,
                    renewing,
                    limits: limits.unwrap_or_default(),
                }
            }),
        ("[a-z]{1,12}\\.example", claim_id())
            .prop_map(|(domain, claim)| claim::Request::Unshare { domain, claim }),
        (
            "[a-z]{1,12}\\.example",
            0..=claim::MAX_SHARE_CPUS,
            0..=claim::MAX_SHARE_CPUS,
            1..=claim::MAX_SHARE_LEASE_MS
        )
            .prop_map(|(domain, cpus, had, lease_ms)| claim::Request::Advertise {
                domain,
                cpus,
                had,
                lease_ms,
            }),
    ]
}

fn claim_response() -> impl Strategy<Value = claim::Response> {
    prop_oneof![
        (any::<u64>(), claim_id(), any::<u64>(), slot()).prop_map(
            |(request, claim, lease_ms, slot)| claim::Response::Granted {
                request: RequestId(request),
                claim,
                lease_ms,
                slot,
            }
        ),
        (any::<u64>(), reject_code(), reason()).prop_map(|(request, code, reason)| {
            claim::Response::Rejected {
                request: RequestId(request),
                code,
                reason,
            }
        }),
        (claim_id(), any::<u64>(), any::<bool>()).prop_map(|(claim, lease_ms, running)| {
            claim::Response::KeptAlive {
                claim,
                lease_ms,
                running,
            }
        }),
        claim_id().prop_map(|claim| claim::Response::Released { claim }),
        (claim_id(), any::<bool>())
            .prop_map(|(claim, running)| claim::Response::Vacating { claim, running }),
        claim_id().prop_map(|claim| claim::Response::UnknownClaim { claim }),
        (claim_id(), any::<u64>())
            .prop_map(|(claim, lease_ms)| claim::Response::Shared { claim, lease_ms }),
        (claim_id(), reason())
            .prop_map(|(claim, reason)| claim::Response::NotShared { claim, reason }),
        (any::<u32>(), any::<u64>())
            .prop_map(|(cpus, lease_ms)| claim::Response::Advertising { cpus, lease_ms }),
    ]
}

fn transfer_request() -> impl Strategy<Value = transfer::Request> {
    prop_oneof![
        (claim_id(), boxed_envelope(), any::<u64>(), files()).prop_map(
            |(claim, job, transfer, files)| transfer::Request::Job {
                claim,
                job,
                transfer: TransferId(transfer),
                files,
                checkpoint: None,
            }
        ),
        (claim_id(), boxed_envelope())
            .prop_map(|(claim, manifest)| { transfer::Request::Checkpoint { claim, manifest } }),
        (
            claim_id(),
            any::<u64>(),
            files(),
            proptest::option::of(report())
        )
            .prop_map(|(claim, transfer, files, report)| {
                transfer::Request::Offer {
                    claim,
                    transfer: TransferId(transfer),
                    files,
                    report,
                }
            }),
        (
            any::<u64>(),
            any::<u32>(),
            0..u64::MAX - u64::from(transfer::MAX_CHUNK_LEN),
            1..=transfer::MAX_CHUNK_LEN
        )
            .prop_map(|(transfer, file, offset, len)| transfer::Request::Chunk {
                transfer: TransferId(transfer),
                file,
                offset,
                len,
            }),
        (
            claim_id(),
            prop::collection::vec(slot(), 0..=transfer::MAX_MIGRATION_TARGETS),
            reason(),
            any::<bool>()
        )
            .prop_map(|(claim, to, reason, reclaim)| transfer::Request::Migrate {
                claim,
                to,
                reason,
                reclaim,
            }),
        link_id().prop_map(|link| transfer::Request::LinkState { link, user: None }),
        (
            any::<u64>(),
            link_id(),
            link_slot(),
            1..=links::MAX_LEASE_MS,
            proptest::option::of("[a-z]{1,8}@[a-z.]{1,12}")
        )
            .prop_map(|(id, link, slot, lease_ms, user)| transfer::Request::Hold {
                id,
                link,
                slot,
                lease_ms,
                user
            }),
        (any::<u64>(), link_id()).prop_map(|(id, link)| transfer::Request::Commit { id, link }),
        (any::<u64>(), link_id()).prop_map(|(id, link)| transfer::Request::Release { id, link }),
        any::<u64>().prop_map(|t| transfer::Request::Close {
            transfer: TransferId(t)
        }),
    ]
}

fn link_id() -> impl Strategy<Value = links::LinkId> {
    prop_oneof![
        Just(links::LinkId::Host),
        "[a-z0-9.]{1,30}".prop_map(|domain| links::LinkId::Uplink { domain }),
    ]
}

fn link_slot() -> impl Strategy<Value = links::Slot> {
    (0..u64::MAX / 2, 1..links::MAX_SLOT_MS, 1..u64::MAX).prop_map(|(start_ms, len, rate)| {
        links::Slot {
            start_ms,
            end_ms: start_ms + len,
            rate,
        }
    })
}

fn transfer_response() -> impl Strategy<Value = transfer::Response> {
    prop_oneof![
        any::<u64>().prop_map(|t| transfer::Response::Accepted {
            transfer: TransferId(t)
        }),
        (
            any::<u64>(),
            any::<u32>(),
            any::<u64>(),
            prop::collection::vec(any::<u8>(), 0..2048)
        )
            .prop_map(|(transfer, file, offset, data)| transfer::Response::Chunk {
                transfer: TransferId(transfer),
                file,
                offset,
                data,
            }),
        (any::<u64>(), error_code(), reason()).prop_map(|(transfer, code, reason)| {
            transfer::Response::Error {
                transfer: TransferId(transfer),
                code,
                reason,
            }
        }),
        any::<u64>().prop_map(|t| transfer::Response::Closed {
            transfer: TransferId(t)
        }),
        slot().prop_map(|to| transfer::Response::Migrating { to }),
        (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            prop::collection::vec(link_slot(), 0..10)
        )
            .prop_map(|(capacity, horizon_ms, now_ms, slots)| {
                transfer::Response::Link(links::LinkAnswer::State(links::LinkState {
                    capacity,
                    horizon_ms,
                    now_ms,
                    slots,
                }))
            }),
        any::<u64>().prop_map(|id| transfer::Response::Link(links::LinkAnswer::Held { id })),
    ]
}

/// Simple ads: distinct names (ignoring case, and no keywords) with literal
/// and expression values.
fn class_ad() -> impl Strategy<Value = ClassAd> {
    let value = prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        "[a-zA-Z0-9 ._@-]{0,20}".prop_map(|s| format!("{s:?}")),
        any::<bool>().prop_map(|b| b.to_string()),
        Just("undefined".to_owned()),
        Just("TARGET.RequestCpus <= Cpus && Memory > 1024".to_owned()),
        Just("{ 1, \"two\", 3.5 }".to_owned()),
        Just("[ x = 1; y = x + 1 ]".to_owned()),
    ];
    prop::collection::btree_map(
        "[A-Za-z][A-Za-z0-9_]{0,10}".prop_map(|n| n.to_lowercase()),
        value,
        0..12,
    )
    .prop_filter("no keywords as names", |attrs| {
        attrs.keys().all(|n| {
            ![
                "true",
                "false",
                "undefined",
                "error",
                "is",
                "isnt",
                "parent",
            ]
            .contains(&n.as_str())
        })
    })
    .prop_map(|attrs: BTreeMap<String, String>| {
        let body: Vec<String> = attrs.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        parse_ad(&format!("[ {} ]", body.join("; "))).unwrap()
    })
}

// ---------------------------------------------------------------------------
// Properties.

fn round_trips<M: Message + PartialEq + std::fmt::Debug>(message: &M) -> Result<(), TestCaseError> {
    let bytes = message
        .encode()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(bytes.len() <= M::MAX_LEN);
    let back = M::decode(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, message);
    prop_assert_eq!(back.encode().unwrap(), bytes);
    Ok(())
}

/// How a valid encoding is damaged.
#[derive(Debug, Clone)]
enum Damage {
    Truncate(prop::sample::Index),
    FlipBit(prop::sample::Index, u8),
    Overwrite(prop::sample::Index, u8),
    Insert(prop::sample::Index, u8),
}

fn damage() -> impl Strategy<Value = Vec<Damage>> {
    prop::collection::vec(
        prop_oneof![
            any::<prop::sample::Index>().prop_map(Damage::Truncate),
            (any::<prop::sample::Index>(), 0..8u8).prop_map(|(i, b)| Damage::FlipBit(i, b)),
            (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Damage::Overwrite(i, b)),
            (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Damage::Insert(i, b)),
        ],
        1..4,
    )
}

fn apply(mut bytes: Vec<u8>, damage: &[Damage]) -> Vec<u8> {
    for d in damage {
        if bytes.is_empty() {
            break;
        }
        match d {
            Damage::Truncate(i) => bytes.truncate(i.index(bytes.len())),
            Damage::FlipBit(i, bit) => {
                let i = i.index(bytes.len());
                bytes[i] ^= 1 << bit;
            }
            Damage::Overwrite(i, b) => {
                let i = i.index(bytes.len());
                bytes[i] = *b;
            }
            Damage::Insert(i, b) => {
                let i = i.index(bytes.len() + 1);
                bytes.insert(i, *b);
            }
        }
    }
    bytes
}

/// Decoding hostile bytes returns (no panic); whatever decodes is a valid
/// message that encodes and decodes to itself.
fn survives<M: Message + PartialEq + std::fmt::Debug>(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(message) = M::decode(bytes) {
        let again = message.encode().map_err(|e| {
            TestCaseError::fail(format!("decoded {message:?} but cannot encode it: {e}"))
        })?;
        prop_assert_eq!(M::decode(&again).unwrap(), message);
    }
    Ok(())
}

fn gossip_survives(bytes: &[u8]) {
    if let Ok(env) = gossip::decode(bytes) {
        let _ = gossip::open(&env, T0, &Freshness::default());
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20261122),
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn view_requests_round_trip(m in view_request()) { round_trips(&m)?; }
    #[test]
    fn view_responses_round_trip(m in view_response()) { round_trips(&m)?; }
    #[test]
    fn claim_requests_round_trip(m in claim_request()) { round_trips(&m)?; }
    #[test]
    fn claim_responses_round_trip(m in claim_response()) { round_trips(&m)?; }
    #[test]
    fn transfer_requests_round_trip(m in transfer_request()) { round_trips(&m)?; }
    #[test]
    fn transfer_responses_round_trip(m in transfer_response()) { round_trips(&m)?; }

    #[test]
    fn signed_ads_round_trip(
        ad in class_ad(),
        kind in select(AdKind::ALL.to_vec()),
        agent in 0..4u8,
        seq in any::<u64>(),
        certs in 0..=gossip::MAX_CERTIFICATES,
    ) {
        let certificates = vec![certificate(agent); certs];
        let env = gossip::seal(&agent_key(agent), seq, T0, HOUR, kind, &ad, &certificates).unwrap();
        let bytes = env.to_bytes();
        prop_assert!(bytes.len() <= gossip::MAX_SIGNED_AD_LEN);
        let back = gossip::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &env);
        let opened = gossip::open(&back, T0, &Freshness::default()).unwrap();
        prop_assert_eq!(opened.kind, kind);
        prop_assert_eq!(opened.header.seq, seq);
        prop_assert_eq!(opened.signer(), agent_key(agent).agent_id());
        prop_assert_eq!(opened.certificates, certificates);
        prop_assert!(opened.ad.same_as(&ad), "{:?} became {:?}", ad, opened.ad);
    }

    #[test]
    fn view_decoders_never_panic(
        req in view_request(), resp in view_response(), d in damage()
    ) {
        survives::<view::Request>(&apply(req.encode().unwrap(), &d))?;
        survives::<view::Response>(&apply(resp.encode().unwrap(), &d))?;
    }

    #[test]
    fn claim_decoders_never_panic(
        req in claim_request(), resp in claim_response(), d in damage()
    ) {
        survives::<claim::Request>(&apply(req.encode().unwrap(), &d))?;
        survives::<claim::Response>(&apply(resp.encode().unwrap(), &d))?;
    }

    #[test]
    fn transfer_decoders_never_panic(
        req in transfer_request(), resp in transfer_response(), d in damage()
    ) {
        survives::<transfer::Request>(&apply(req.encode().unwrap(), &d))?;
        survives::<transfer::Response>(&apply(resp.encode().unwrap(), &d))?;
    }

    #[test]
    fn gossip_decoder_never_panics(env in envelope(), d in damage()) {
        gossip_survives(&apply(env.to_bytes(), &d));
    }

    #[test]
    fn every_decoder_survives_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        survives::<view::Request>(&bytes)?;
        survives::<view::Response>(&bytes)?;
        survives::<claim::Request>(&bytes)?;
        survives::<claim::Response>(&bytes)?;
        survives::<transfer::Request>(&bytes)?;
        survives::<transfer::Response>(&bytes)?;
        gossip_survives(&bytes);
    }
}

/// Random bytes rarely look like CBOR maps; these start like a message and
/// then go wrong, which reaches deeper into the decoders.
#[test]
fn decoders_survive_every_truncation_of_every_golden_message() {
    for (name, bytes) in golden_messages() {
        for end in 0..bytes.len() {
            let cut = &bytes[..end];
            let results = [
                view::Request::decode(cut).is_ok(),
                view::Response::decode(cut).is_ok(),
                claim::Request::decode(cut).is_ok(),
                claim::Response::decode(cut).is_ok(),
                transfer::Request::decode(cut).is_ok(),
                transfer::Response::decode(cut).is_ok(),
                gossip::decode(cut).is_ok(),
            ];
            assert!(
                results.iter().all(|ok| !ok),
                "{name} cut to {end} bytes still decodes as something"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Limits.

fn assert_refused_naming_limit<M: Message + std::fmt::Debug>() {
    let bytes = vec![0u8; M::MAX_LEN + 1];
    let err = M::decode(&bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is {} bytes, more than the limit of {}",
            M::NAME,
            M::MAX_LEN + 1,
            M::MAX_LEN
        )
    );
}

#[test]
fn oversize_input_is_refused_naming_the_limit() {
    assert_refused_naming_limit::<view::Request>();
    assert_refused_naming_limit::<view::Response>();
    assert_refused_naming_limit::<claim::Request>();
    assert_refused_naming_limit::<claim::Response>();
    assert_refused_naming_limit::<transfer::Request>();
    assert_refused_naming_limit::<transfer::Response>();
    let err = gossip::decode(&vec![0u8; gossip::MAX_SIGNED_AD_LEN + 1]).unwrap_err();
    assert!(
        err.to_string().ends_with(&format!(
            "more than the limit of {}",
            gossip::MAX_SIGNED_AD_LEN
        )),
        "{err}"
    );
    assert_eq!(view::MAX_RESPONSE_LEN, 4 << 20);
    assert_eq!(transfer::MAX_CHUNK_LEN, 1 << 20);
}

#[test]
fn an_oversize_page_or_chunk_is_refused_before_sending() {
    // 72 ads of 60 KiB: each is a valid signed ad, the page is not.
    let big = parse_ad(&format!("[ Blob = \"{}\" ]", "x".repeat(60 << 10))).unwrap();
    let ad = gossip::seal(&agent_key(1), 1, T0, HOUR, AdKind::Machine, &big, &[]).unwrap();
    let page = view::Response::Page {
        ads: vec![ad; 72],
        next: None,
    };
    let err = page.encode().unwrap_err();
    assert!(
        err.to_string().starts_with("view response would be")
            && err.to_string().ends_with("more than the limit of 4194304"),
        "{err}"
    );
    let chunk = transfer::Response::Chunk {
        transfer: TransferId(1),
        file: 0,
        offset: 0,
        data: vec![0; transfer::MAX_CHUNK_LEN as usize + 1],
    };
    let err = chunk.encode().unwrap_err();
    assert_eq!(
        err.to_string(),
        "chunk would be 1048577 bytes, more than the limit of 1048576"
    );
    // The same chunk built by a hostile peer is refused on receipt.
    let bytes = cbor::encode(&chunk);
    assert!(bytes.len() <= transfer::MAX_RESPONSE_LEN);
    assert_eq!(transfer::Response::decode(&bytes).unwrap_err(), err);
}

#[test]
fn a_page_with_too_many_ads_is_refused_on_receipt() {
    let ad = certificate(1);
    let page = view::Response::Page {
        ads: vec![ad; view::MAX_PAGE_ADS as usize + 1],
        next: None,
    };
    let err = view::Response::decode(&cbor::encode(&page)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "page holds 1025 entries, more than the limit of 1024"
    );
}

#[test]
fn a_claim_request_waiting_too_long_is_refused_naming_the_field() {
    let request = claim::Request::Claim {
        request: RequestId(1),
        job: Box::new(job()),
        lease_ms: 20_000,
        slot: None,
        wait_ms: claim::MAX_WAIT_MS + 1,
    };
    let err = claim::Request::decode(&cbor::encode(&request)).unwrap_err();
    assert!(err.to_string().contains("wait_ms"), "{err}");
    assert!(err.to_string().contains("10000"), "{err}");
}

#[test]
fn a_migration_proposal_with_too_many_or_too_long_targets_is_refused_naming_them() {
    let proposal = |to: Vec<String>, reason: String| transfer::Request::Migrate {
        claim: ClaimId::from_bytes([7; 16]),
        to,
        reason,
        reclaim: false,
    };
    let many = proposal(vec!["slot1@a".to_owned(); 9], String::new());
    let err = transfer::Request::decode(&cbor::encode(&many)).unwrap_err();
    assert!(
        err.to_string()
            .contains("migration targets holds 9 entries"),
        "{err}"
    );
    let long = proposal(
        vec!["s".repeat(transfer::MAX_SLOT_NAME_LEN + 1)],
        String::new(),
    );
    let err = transfer::Request::decode(&cbor::encode(&long)).unwrap_err();
    assert!(
        err.to_string().contains("invalid migration target"),
        "{err}"
    );
    let wordy = proposal(vec![], "x".repeat(2000));
    let err = transfer::Request::decode(&cbor::encode(&wordy)).unwrap_err();
    assert!(err.to_string().contains("invalid reason"), "{err}");
}

#[test]
fn a_hold_with_a_bad_slot_lease_or_link_is_refused_naming_the_field() {
    let hold = |slot: links::Slot, lease_ms: u64, link: links::LinkId| transfer::Request::Hold {
        id: 1,
        link,
        slot,
        lease_ms,
        user: None,
    };
    let good = links::Slot {
        start_ms: 1000,
        end_ms: 2000,
        rate: 10,
    };
    for (request, said) in [
        (
            hold(links::Slot { rate: 0, ..good }, 1000, links::LinkId::Host),
            "invalid slot: a rate of 0",
        ),
        (
            hold(
                links::Slot {
                    end_ms: 500,
                    ..good
                },
                1000,
                links::LinkId::Host,
            ),
            "invalid slot: it ends",
        ),
        (
            hold(
                links::Slot {
                    end_ms: 1000 + links::MAX_SLOT_MS + 1,
                    ..good
                },
                1000,
                links::LinkId::Host,
            ),
            "invalid slot: longer than",
        ),
        (hold(good, 0, links::LinkId::Host), "invalid lease_ms"),
        (
            hold(good, links::MAX_LEASE_MS + 1, links::LinkId::Host),
            "invalid lease_ms",
        ),
        (
            hold(
                good,
                1000,
                links::LinkId::Uplink {
                    domain: "d".repeat(300),
                },
            ),
            "invalid link",
        ),
        (
            transfer::Request::Hold {
                id: 1,
                link: links::LinkId::Host,
                slot: good,
                lease_ms: 1000,
                user: Some("u".repeat(transfer::MAX_LINK_USER_LEN + 1)),
            },
            "invalid user",
        ),
        (
            transfer::Request::LinkState {
                link: links::LinkId::Host,
                user: Some("u".repeat(transfer::MAX_LINK_USER_LEN + 1)),
            },
            "invalid user",
        ),
    ] {
        let err = transfer::Request::decode(&cbor::encode(&request)).unwrap_err();
        assert!(err.to_string().contains(said), "{err} for {said}");
    }
    let state = transfer::Response::Link(links::LinkAnswer::State(links::LinkState {
        capacity: 1,
        horizon_ms: 1,
        now_ms: 1,
        slots: vec![good; links::MAX_SLOTS + 1],
    }));
    let err = transfer::Response::decode(&cbor::encode(&state)).unwrap_err();
    assert!(err.to_string().contains("link slots holds"), "{err}");
}

#[test]
fn a_page_of_bogus_tiny_entries_fails_at_the_first() {
    #[derive(Serialize)]
    enum Forged {
        Page {
            ads: Vec<serde_bytes::ByteBuf>,
            next: Option<()>,
        },
    }
    // Two million one-byte entries: under the size limit, but buffering them
    // all before checking would cost 24 times the input.
    let forged = cbor::encode(&Forged::Page {
        ads: vec![serde_bytes::ByteBuf::new(); 2_000_000],
        next: None,
    });
    assert!(forged.len() <= view::MAX_RESPONSE_LEN);
    let err = view::Response::decode(&forged).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("view response is malformed: envelope is malformed"),
        "{err}"
    );
}

#[test]
fn a_bad_file_name_from_a_peer_is_refused_naming_the_file() {
    #[derive(Serialize)]
    struct BadFile {
        name: &'static str,
        size: u64,
        hash: serde_bytes::ByteArray<32>,
        mode: u32,
    }
    #[derive(Serialize)]
    enum Forged {
        Offer {
            claim: serde_bytes::ByteArray<16>,
            transfer: u64,
            files: Vec<BadFile>,
        },
    }
    let forged = Forged::Offer {
        claim: serde_bytes::ByteArray::new([1; 16]),
        transfer: 1,
        files: vec![BadFile {
            name: "../../home/ann/.ssh/authorized_keys",
            size: 1,
            hash: serde_bytes::ByteArray::new([0; 32]),
            mode: 0o644,
        }],
    };
    let err = transfer::Request::decode(&cbor::encode(&forged)).unwrap_err();
    assert!(
        err.to_string().contains(
            "invalid file name: \"../../home/ann/.ssh/authorized_keys\" has a \"..\" component"
        ),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Compatibility between versions of the same protocol.

#[derive(Serialize)]
enum NewerClaimRequest {
    /// A keepalive with a field this version does not know.
    Keepalive {
        claim: serde_bytes::ByteArray<16>,
        load_average: f64,
        hints: Vec<String>,
    },
    /// A request this version does not know.
    Suspend { claim: serde_bytes::ByteArray<16> },
}

#[test]
fn a_newer_peers_extra_fields_are_skipped() {
    let bytes = cbor::encode(&NewerClaimRequest::Keepalive {
        claim: serde_bytes::ByteArray::new([9; 16]),
        load_average: 0.5,
        hints: vec!["x".to_owned()],
    });
    assert_eq!(
        claim::Request::decode(&bytes).unwrap(),
        claim::Request::Keepalive {
            claim: ClaimId::from_bytes([9; 16])
        }
    );

    // A signed ad body with a field this version does not know still opens.
    #[derive(Serialize)]
    struct NewerBody {
        ad: String,
        certificates: Vec<serde_bytes::ByteBuf>,
        attestation: serde_bytes::ByteBuf,
    }
    let body = cbor::encode(&NewerBody {
        ad: "[ Cpus = 4 ]".to_owned(),
        certificates: vec![serde_bytes::ByteBuf::from(certificate(1).to_bytes())],
        attestation: serde_bytes::ByteBuf::from(vec![1, 2, 3]),
    });
    let env = Envelope::seal(
        &agent_key(1),
        1,
        T0,
        T0.saturating_add_millis(HOUR),
        Kind::MACHINE_AD,
        body,
    );
    let opened = gossip::open(&env, T0, &Freshness::default()).unwrap();
    assert!(opened.ad.same_as(&parse_ad("[ Cpus = 4 ]").unwrap()));
    assert_eq!(opened.certificates, vec![certificate(1)]);
}

#[test]
fn an_older_peers_message_without_optional_fields_decodes() {
    #[derive(Serialize)]
    enum OlderClaimRequest {
        Claim {
            request: u64,
            #[serde(with = "serde_bytes")]
            job: Vec<u8>,
            lease_ms: u64,
        },
    }
    let bytes = cbor::encode(&OlderClaimRequest::Claim {
        request: 5,
        job: job().to_bytes(),
        lease_ms: 60_000,
    });
    assert_eq!(
        claim::Request::decode(&bytes).unwrap(),
        claim::Request::Claim {
            request: RequestId(5),
            job: Box::new(job()),
            lease_ms: 60_000,
            slot: None,
            wait_ms: 0,
        }
    );

    #[derive(Serialize)]
    enum OlderViewRequest {
        Pull {
            kinds: Vec<u16>,
            after: Option<()>,
            max: u32,
        },
    }
    let bytes = cbor::encode(&OlderViewRequest::Pull {
        kinds: vec![1],
        after: None,
        max: 100,
    });
    assert_eq!(
        view::Request::decode(&bytes).unwrap(),
        view::Request::Pull {
            kinds: vec![Kind::MACHINE_AD],
            after: None,
            max: 100,
            certificates: vec![],
        }
    );
}

#[test]
fn unknown_codes_from_a_newer_peer_are_kept() {
    #[derive(Serialize)]
    enum NewerClaimResponse {
        Rejected {
            request: u64,
            code: u16,
            reason: &'static str,
        },
    }
    let bytes = cbor::encode(&NewerClaimResponse::Rejected {
        request: 1,
        code: 4242,
        reason: "gpu firmware too old",
    });
    let response = claim::Response::decode(&bytes).unwrap();
    assert_eq!(
        response,
        claim::Response::Rejected {
            request: RequestId(1),
            code: RejectCode::Other(4242),
            reason: "gpu firmware too old".to_owned(),
        }
    );
    // Passed on unchanged.
    assert_eq!(response.encode().unwrap(), bytes);
}

#[test]
fn an_unknown_request_is_a_typed_error_naming_it() {
    let bytes = cbor::encode(&NewerClaimRequest::Suspend {
        claim: serde_bytes::ByteArray::new([9; 16]),
    });
    let err = claim::Request::decode(&bytes).unwrap_err();
    assert!(matches!(err, wire::Error::Decode(_)), "{err:?}");
    assert!(
        err.to_string().starts_with("claim request is malformed"),
        "{err}"
    );
    assert!(err.to_string().contains("Suspend"), "{err}");
}

#[test]
fn a_vacate_sent_to_a_peer_older_than_it_is_refused_not_misread() {
    // Version 1 as it was before `Vacate`: such a peer cannot take it for
    // another request; it refuses it, and the submit agent says so.
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    enum OlderClaimRequest {
        Claim {},
        Keepalive {
            claim: serde_bytes::ByteArray<16>,
        },
        Release {
            claim: serde_bytes::ByteArray<16>,
            reason: u16,
        },
    }
    let bytes = claim::Request::Vacate {
        claim: ClaimId::from_bytes([9; 16]),
        reason: "vacated by user ann@lab via starling vacate".to_owned(),
    }
    .encode()
    .unwrap();
    let err = cbor::decode::<OlderClaimRequest>(&bytes, claim::MAX_REQUEST_LEN, "claim request")
        .unwrap_err();
    assert!(err.to_string().contains("Vacate"), "{err}");
}

// ---------------------------------------------------------------------------
// Golden encodings.

/// One fixed instance of every message, named as its golden file.
fn golden_messages() -> Vec<(&'static str, Vec<u8>)> {
    let claim = ClaimId::from_bytes(*b"0123456789abcdef");
    let files = vec![
        File::new(
            FileName::new("sim").unwrap(),
            1_234_567,
            Hash::from_bytes([0x5a; 32]),
            0o755,
        )
        .unwrap(),
        File::new(
            FileName::new("data/input 1.csv").unwrap(),
            0,
            Hash::from_bytes([0xa5; 32]),
            0o644,
        )
        .unwrap(),
    ];
    let cursor = Cursor::new(b"after:12D3KooW".to_vec()).unwrap();
    fn enc<M: Message>(m: M) -> Vec<u8> {
        m.encode().unwrap()
    }
    vec![
        (
            "gossip_machine_ad",
            signed(AdKind::Machine, 2, 7, &machine_ad()).to_bytes(),
        ),
        (
            "gossip_submitter_ad",
            signed(AdKind::Submitter, 3, 9, &submitter_ad()).to_bytes(),
        ),
        ("gossip_job", job().to_bytes()),
        (
            "view_request_pull",
            enc(view::Request::Pull {
                kinds: vec![Kind::MACHINE_AD, Kind::SUBMITTER_AD],
                after: Some(cursor.clone()),
                max: 500,
                certificates: vec![certificate(1)],
            }),
        ),
        (
            "view_response_page",
            enc(view::Response::Page {
                ads: vec![
                    signed(AdKind::Machine, 2, 7, &machine_ad()),
                    signed(AdKind::Submitter, 3, 9, &submitter_ad()),
                ],
                next: Some(cursor),
            }),
        ),
        (
            "view_response_refused",
            enc(view::Response::Refused {
                reason: "too many pulls; retry in 30 s".to_owned(),
            }),
        ),
        (
            "claim_request_claim",
            enc(claim::Request::Claim {
                request: RequestId(42),
                job: Box::new(job()),
                lease_ms: 20 * 60 * 1000,
                slot: Some("slot1".to_owned()),
                wait_ms: 0,
            }),
        ),
        (
            "claim_request_keepalive",
            enc(claim::Request::Keepalive { claim }),
        ),
        (
            "claim_request_release",
            enc(claim::Request::Release {
                claim,
                reason: ReleaseReason::JobCompleted,
            }),
        ),
        (
            "claim_request_vacate",
            enc(claim::Request::Vacate {
                claim,
                reason: "vacated by user ann@lab via starling vacate".to_owned(),
            }),
        ),
        (
            "claim_response_granted",
            enc(claim::Response::Granted {
                request: RequestId(42),
                claim,
                lease_ms: 20 * 60 * 1000,
                slot: "slot1_3".to_owned(),
            }),
        ),
        (
            "claim_response_rejected",
            enc(claim::Response::Rejected {
                request: RequestId(42),
                code: RejectCode::StartFalse,
                reason: "START: KeyboardIdle > 15 * 60 is false".to_owned(),
            }),
        ),
        (
            "claim_response_kept_alive",
            enc(claim::Response::KeptAlive {
                claim,
                lease_ms: 20 * 60 * 1000,
                running: false,
            }),
        ),
        (
            "claim_response_released",
            enc(claim::Response::Released { claim }),
        ),
        (
            "claim_response_vacating",
            enc(claim::Response::Vacating {
                claim,
                running: true,
            }),
        ),
        (
            "claim_response_unknown_claim",
            enc(claim::Response::UnknownClaim { claim }),
        ),
        (
            "transfer_request_job",
            enc(transfer::Request::Job {
                claim,
                job: Box::new(job()),
                transfer: TransferId(7),
                files: files.clone(),
                checkpoint: None,
            }),
        ),
        (
            "transfer_request_offer",
            enc(transfer::Request::Offer {
                claim,
                transfer: TransferId(8),
                files,
                report: None,
            }),
        ),
        (
            "transfer_request_chunk",
            enc(transfer::Request::Chunk {
                transfer: TransferId(7),
                file: 1,
                offset: 1 << 20,
                len: 1 << 20,
            }),
        ),
        (
            "transfer_request_close",
            enc(transfer::Request::Close {
                transfer: TransferId(7),
            }),
        ),
        (
            "transfer_response_accepted",
            enc(transfer::Response::Accepted {
                transfer: TransferId(7),
            }),
        ),
        (
            "transfer_response_chunk",
            enc(transfer::Response::Chunk {
                transfer: TransferId(7),
                file: 1,
                offset: 1 << 20,
                data: b"hello, starling".to_vec(),
            }),
        ),
        (
            "transfer_response_error",
            enc(transfer::Response::Error {
                transfer: TransferId(7),
                code: ErrorCode::OutOfRange,
                reason: "offset 9999999 is past the end of sim (1234567 bytes)".to_owned(),
            }),
        ),
        (
            "transfer_response_closed",
            enc(transfer::Response::Closed {
                transfer: TransferId(7),
            }),
        ),
    ]
}

/// Hex, 32 bytes a line, so a change shows as a small diff.
fn to_hex_lines(bytes: &[u8]) -> String {
    let mut out = String::new();
    for line in bytes.chunks(32) {
        out.push_str(&hex::encode(line));
        out.push('\n');
    }
    out
}

#[test]
fn encodings_match_the_golden_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/wire");
    let update = std::env::var_os("STARLING_UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let messages = golden_messages();
    let mut changed = Vec::new();
    for (name, bytes) in &messages {
        let path = dir.join(format!("{name}.hex"));
        let want = to_hex_lines(bytes);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &want).unwrap();
            } else {
                changed.push(format!("{name}.hex"));
            }
        }
    }
    let known: Vec<String> = messages.iter().map(|(n, _)| format!("{n}.hex")).collect();
    let mut stale: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| !known.contains(n))
                .collect()
        })
        .unwrap_or_default();
    stale.sort();
    if update {
        for name in &stale {
            std::fs::remove_file(dir.join(name)).unwrap();
        }
        stale.clear();
    }
    assert!(
        changed.is_empty() && stale.is_empty(),
        "the wire encoding changed in tests/golden/wire/: {changed:?}; no message writes {stale:?}.\n\
         Peers running the old code would see different bytes. If the change is \
         intended and compatible, rewrite the files with\n  \
         STARLING_UPDATE_GOLDEN=1 cargo test -p starling-protocol --test wire golden\n\
         and commit the diff; otherwise it needs a new protocol version."
    );
    golden_files_decode_to_their_messages(&dir);
}

/// Catches a decoder change that no longer reads bytes already on the wire,
/// even if the encoder changed in step.
fn golden_files_decode_to_their_messages(dir: &std::path::Path) {
    let read = |name: &str| {
        let text = std::fs::read_to_string(dir.join(format!("{name}.hex"))).unwrap_or_else(|e| {
            panic!("{name}.hex: {e}; run the golden test with STARLING_UPDATE_GOLDEN=1")
        });
        hex::decode(text.split_whitespace().collect::<String>()).unwrap()
    };
    for (name, bytes) in golden_messages() {
        let stored = read(name);
        let decoded_again = match name.split('_').take(2).collect::<Vec<_>>()[..] {
            ["gossip", _] => gossip::decode(&stored).map(|e| e.to_bytes()).ok(),
            ["view", "request"] => view::Request::decode(&stored)
                .ok()
                .map(|m| m.encode().unwrap()),
            ["view", "response"] => view::Response::decode(&stored)
                .ok()
                .map(|m| m.encode().unwrap()),
            ["claim", "request"] => claim::Request::decode(&stored)
                .ok()
                .map(|m| m.encode().unwrap()),
            ["claim", "response"] => claim::Response::decode(&stored)
                .ok()
                .map(|m| m.encode().unwrap()),
            ["transfer", "request"] => transfer::Request::decode(&stored)
                .ok()
                .map(|m| m.encode().unwrap()),
            ["transfer", "response"] => transfer::Response::decode(&stored)
                .ok()
                .map(|m| m.encode().unwrap()),
            _ => panic!("no decoder for {name}"),
        };
        assert_eq!(decoded_again.as_deref(), Some(&bytes[..]), "{name}.hex");
    }
    // And the gossiped ads open.
    for name in ["gossip_machine_ad", "gossip_submitter_ad", "gossip_job"] {
        let env = gossip::decode(&read(name)).unwrap();
        gossip::open(&env, T0, &Freshness::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn a_share_request_out_of_bounds_is_refused_naming_the_field() {
    let claim = claim::ClaimId::from_bytes([3; 16]);
    let limited = |limits: &str| {
        cbor::encode(&claim::Request::Share {
            domain: "d1.example".to_owned(),
            claim,
            cpus: 1,
            gpus: 0,
            lease_ms: 1000,
            renewing: false,
            limits: limits.to_owned(),
        })
    };
    for bad in [
        "9lives",
        "a:0",
        "a,a",
        &"x,".repeat(claim::MAX_SHARE_LIMITS_LEN),
    ] {
        let err = claim::Request::decode(&limited(bad)).unwrap_err();
        assert!(err.to_string().contains("share limits"), "{err}");
    }
    assert!(claim::Request::decode(&limited("db:2,xsw")).is_ok());
    let share_of = |domain: &str, cpus, gpus, lease_ms| {
        cbor::encode(&claim::Request::Share {
            domain: domain.to_owned(),
            claim,
            cpus,
            gpus,
            lease_ms,
            renewing: false,
            limits: String::new(),
        })
    };
    let share = |domain: &str, cpus, lease_ms| share_of(domain, cpus, 0, lease_ms);
    for (bytes, field) in [
        (share("", 1, 1000), "share domain"),
        (share("bad domain!", 1, 1000), "share domain"),
        (share("d1.example", 0, 1000), "share cpus"),
        (
            share("d1.example", claim::MAX_SHARE_CPUS + 1, 1000),
            "share cpus",
        ),
        (
            share_of("d1.example", 1, claim::MAX_SHARE_GPUS + 1, 1000),
            "share gpus",
        ),
        (share("d1.example", 1, 0), "share lease_ms"),
        (
            share("d1.example", 1, claim::MAX_SHARE_LEASE_MS + 1),
            "share lease_ms",
        ),
    ] {
        let err = claim::Request::decode(&bytes).unwrap_err();
        assert!(err.to_string().contains(field), "{err}");
    }
    let advertise = |cpus, lease_ms| {
        cbor::encode(&claim::Request::Advertise {
            domain: "d1.example".to_owned(),
            cpus,
            had: 0,
            lease_ms,
        })
    };
    for (bytes, field) in [
        (advertise(claim::MAX_SHARE_CPUS + 1, 1000), "share cpus"),
        (advertise(1, 0), "share lease_ms"),
    ] {
        let err = claim::Request::decode(&bytes).unwrap_err();
        assert!(err.to_string().contains(field), "{err}");
    }
    let good = claim::Request::decode(&share("d1.example", 4, 30_000)).unwrap();
    assert!(matches!(
        good,
        claim::Request::Share {
            cpus: 4,
            gpus: 0,
            ..
        }
    ));
    let good = claim::Request::decode(&share_of("d1.example", 4, 2, 30_000)).unwrap();
    assert!(matches!(
        good,
        claim::Request::Share {
            cpus: 4,
            gpus: 2,
            ..
        }
    ));
}
