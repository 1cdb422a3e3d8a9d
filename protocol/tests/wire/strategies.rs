//! How each wire message is drawn for the properties: by hand, one
//! strategy per message and per field worth varying. Owns no test; draws
//! envelopes from the shared pool in `main.rs` rather than signing anew.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::sample::select;
use starling_protocol::claim::{self, ClaimId, RejectCode, ReleaseReason, RequestId};
use starling_protocol::classad::{parse_ad, ClassAd};
use starling_protocol::identity::{Envelope, Kind};
use starling_protocol::links;
use starling_protocol::transfer::{self, ErrorCode, File, FileName, Hash, TransferId};
use starling_protocol::view::{self, Cursor};

use super::pool;

pub(crate) fn envelope() -> impl Strategy<Value = Envelope> {
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

pub(crate) fn view_request() -> impl Strategy<Value = view::Request> {
    (
        prop::collection::vec(any::<u16>().prop_map(Kind::from_u16), 0..=view::MAX_KINDS),
        prop::option::of(cursor()),
        any::<u32>(),
        envelopes(2),
        prop::option::of(prop::collection::vec(
            (any::<[u8; 32]>(), any::<u64>()),
            0..4,
        )),
    )
        .prop_map(
            |(kinds, after, max, certificates, held)| view::Request::Pull {
                kinds,
                after,
                max,
                certificates,
                holding: held.map(|held| {
                    let mut digest = view::Digest::default();
                    for (signer, seq) in held {
                        digest.add(&signer, Kind::MACHINE_AD, seq);
                    }
                    digest
                }),
            },
        )
}

pub(crate) fn view_response() -> impl Strategy<Value = view::Response> {
    prop_oneof![
        (envelopes(8), prop::option::of(cursor()))
            .prop_map(|(ads, next)| view::Response::Page { ads, next }),
        reason().prop_map(|reason| view::Response::Refused { reason }),
    ]
}

pub(crate) fn claim_request() -> impl Strategy<Value = claim::Request> {
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

pub(crate) fn claim_response() -> impl Strategy<Value = claim::Response> {
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

pub(crate) fn transfer_request() -> impl Strategy<Value = transfer::Request> {
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

pub(crate) fn transfer_response() -> impl Strategy<Value = transfer::Response> {
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
pub(crate) fn class_ad() -> impl Strategy<Value = ClassAd> {
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
