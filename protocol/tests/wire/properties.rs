//! Properties over every message: each round-trips, and each decoder
//! survives truncated, bit-flipped and random bytes without panicking.
//! Draws messages from [`super::strategies`]; limits and golden bytes are
//! the other modules'.

use proptest::prelude::*;
use proptest::sample::select;
use starling_protocol::claim;
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::Freshness;
use starling_protocol::transfer;
use starling_protocol::view;
use starling_protocol::wire::Message;

use super::golden::golden_messages;
use super::strategies::{
    claim_request, claim_response, class_ad, envelope, transfer_request, transfer_response,
    view_request, view_response,
};
use super::{agent_key, certificate, HOUR, T0};

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
