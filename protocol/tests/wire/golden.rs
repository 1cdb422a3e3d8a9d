//! Golden encodings: one fixed instance of every message, compared byte
//! for byte with `tests/golden/wire/` and decoded back from it. The only
//! part that reads or (with `STARLING_UPDATE_GOLDEN=1`) writes those files.

use starling_protocol::claim::{self, ClaimId, RejectCode, ReleaseReason, RequestId};
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{Freshness, Kind};
use starling_protocol::transfer::{self, ErrorCode, File, FileName, Hash, TransferId};
use starling_protocol::view::{self, Cursor};
use starling_protocol::wire::Message;

use super::{certificate, job, machine_ad, signed, submitter_ad, T0};

/// One fixed instance of every message, named as its golden file.
pub(crate) fn golden_messages() -> Vec<(&'static str, Vec<u8>)> {
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
                holding: None,
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
