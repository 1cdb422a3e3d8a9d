//! Compatibility between versions of the same protocol: a newer peer's
//! extra fields and codes, an older peer's missing optional fields. Writes
//! its foreign encodings by hand; it does not touch the golden files.

use serde::Serialize;
use starling_protocol::cbor;
use starling_protocol::claim::{self, ClaimId, RejectCode, RequestId};
use starling_protocol::classad::parse_ad;
use starling_protocol::gossip;
use starling_protocol::identity::{Envelope, Freshness, Kind};
use starling_protocol::view;
use starling_protocol::wire::{self, Message};

use super::{agent_key, certificate, job, HOUR, T0};

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
            holding: None,
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
