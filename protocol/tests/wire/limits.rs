//! Limits: oversize input, pages, chunks, lists and fields are refused,
//! naming the limit or the field. Builds its messages by hand; the
//! properties and golden files are the other modules'.

use serde::Serialize;
use starling_protocol::cbor;
use starling_protocol::claim::{self, ClaimId, RequestId};
use starling_protocol::classad::parse_ad;
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::links;
use starling_protocol::transfer::{self, TransferId};
use starling_protocol::view;
use starling_protocol::wire::Message;

use super::{agent_key, certificate, job, HOUR, T0};

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
