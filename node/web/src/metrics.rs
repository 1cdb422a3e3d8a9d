//! What the actors count for `/metrics` ([`crate`]) that no control
//! request answers: gossiped ads by verdict, claim requests and how long
//! their answers took, the claims this machine decided, the bytes jobs'
//! file transfers moved, and the checkpoint bytes this store peer took and
//! served.
//!
//! One [`Metrics`] is made when the agent starts and handed, by clone, to
//! the view, the shadows (through the negotiator), the link client (pulls), the job
//! router (chunks served) and the web server. Its counters are
//! `prometheus-client` metrics: each is an atomic behind an `Arc`, only
//! ever added to, and read only by the encoder; no actor's state is shared.

use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Bucket bounds of the negotiation latency histogram, in seconds: a
/// claim on a loopback testnet takes milliseconds, one that waits for a
/// busy machine (`wait`) up to a minute.
pub const NEGOTIATION_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0,
];

/// How a claim request ended, as the submit side saw it.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(non_camel_case_types)]
pub enum Outcome {
    /// The machine granted the claim.
    granted,
    /// The machine refused it (busy, its policy, a cap).
    refused,
    /// No answer: the machine could not be reached or answered nonsense.
    failed,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: Outcome,
}

/// Which way file-transfer bytes went.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(non_camel_case_types)]
pub enum Direction {
    /// Pulled from a peer (a job's input on an execute agent, its output
    /// on a submit agent).
    received,
    /// Served to a peer, chunk by chunk.
    sent,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DirectionLabels {
    direction: Direction,
}

/// What the view made of a gossiped ad.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(non_camel_case_types)]
pub enum Judged {
    /// Its signature and certificate verified; taken into the view.
    accepted,
    /// Valid but not news: a duplicate or an older sequence number.
    ignored,
    /// Refused: forged, expired, malformed, oversized or from a stranger.
    rejected,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JudgedLabels {
    verdict: Judged,
}

/// What this machine decided of a claim request for it.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(non_camel_case_types)]
pub enum Decision {
    /// Granted: a slot carved for the job.
    granted,
    /// Refused for want of room now (the asker may wait or try elsewhere).
    busy,
    /// Refused for good: the owner policy, the domain's terms, a cap, a
    /// job that does not match or does not verify.
    refused,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    outcome: Decision,
}

fn negotiation_histogram() -> Histogram {
    Histogram::new(NEGOTIATION_BUCKETS)
}

/// The agent's counters; cheap to clone (every clone counts into the same
/// atomics).
#[derive(Debug, Clone)]
pub struct Metrics {
    ads: Family<JudgedLabels, Counter>,
    claims: Family<OutcomeLabels, Counter>,
    negotiation: Family<OutcomeLabels, Histogram, fn() -> Histogram>,
    transfer_bytes: Family<DirectionLabels, Counter>,
    decided: Family<DecisionLabels, Counter>,
    checkpoint_bytes: Family<DirectionLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let m = Metrics {
            ads: Family::default(),
            claims: Family::default(),
            negotiation: Family::new_with_constructor(negotiation_histogram),
            transfer_bytes: Family::default(),
            decided: Family::default(),
            checkpoint_bytes: Family::default(),
        };
        // Every series is there from the start, at zero.
        for outcome in [Outcome::granted, Outcome::refused, Outcome::failed] {
            let _ = m.claims.get_or_create(&OutcomeLabels { outcome });
            let _ = m.negotiation.get_or_create(&OutcomeLabels { outcome });
        }
        for verdict in [Judged::accepted, Judged::ignored, Judged::rejected] {
            let _ = m.ads.get_or_create(&JudgedLabels { verdict });
        }
        for direction in [Direction::received, Direction::sent] {
            let _ = m
                .transfer_bytes
                .get_or_create(&DirectionLabels { direction });
            let _ = m
                .checkpoint_bytes
                .get_or_create(&DirectionLabels { direction });
        }
        for outcome in [Decision::granted, Decision::busy, Decision::refused] {
            let _ = m.decided.get_or_create(&DecisionLabels { outcome });
        }
        m
    }
}

impl Metrics {
    /// The view judged a gossiped ad.
    pub fn ad_judged(&self, verdict: Judged) {
        self.ads.get_or_create(&JudgedLabels { verdict }).inc();
    }

    /// A claim request this agent sent was answered (or failed) after
    /// `took`.
    pub fn claim_answered(&self, outcome: Outcome, took: Duration) {
        let labels = OutcomeLabels { outcome };
        self.claims.get_or_create(&labels).inc();
        self.negotiation
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// `bytes` of files moved `direction`.
    pub fn transferred(&self, direction: Direction, bytes: u64) {
        self.transfer_bytes
            .get_or_create(&DirectionLabels { direction })
            .inc_by(bytes);
    }

    /// This machine decided a claim request.
    pub fn claim_decided(&self, outcome: Decision) {
        self.decided
            .get_or_create(&DecisionLabels { outcome })
            .inc();
    }

    /// `bytes` of checkpoint chunks this store peer stored for a peer
    /// (received) or served back (sent).
    pub fn checkpoint_moved(&self, direction: Direction, bytes: u64) {
        self.checkpoint_bytes
            .get_or_create(&DirectionLabels { direction })
            .inc_by(bytes);
    }

    /// Registers every metric (clones of the same atomics) in `registry`,
    /// whose prefix names them (`starling_`).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "gossip_ads",
            "Gossiped ads this agent's view judged: accepted (verified and taken), ignored (duplicate or older), rejected (forged, expired, malformed, from a stranger)",
            self.ads.clone(),
        );
        registry.register(
            "claims",
            "Claim requests this agent sent to machines for its jobs, by outcome",
            self.claims.clone(),
        );
        registry.register(
            "negotiation_latency_seconds",
            "Time from a claim request sent to its answer, by outcome (includes a busy machine's wait)",
            self.negotiation.clone(),
        );
        registry.register(
            "transfer_bytes",
            "Bytes of jobs' input and output files this agent pulled from peers (received) or served to them (sent)",
            self.transfer_bytes.clone(),
        );
        registry.register(
            "claims_decided",
            "Claim requests for this machine, by what it decided: granted, busy (no room now) or refused (policy, terms, caps, a bad job)",
            self.decided.clone(),
        );
        registry.register(
            "checkpoint_bytes",
            "Bytes of checkpoint chunks this store peer stored for peers (received) or served back to them (sent)",
            self.checkpoint_bytes.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_appear_in_the_text_format() {
        let m = Metrics::default();
        m.claim_answered(Outcome::granted, Duration::from_millis(20));
        m.clone()
            .claim_answered(Outcome::refused, Duration::from_secs(3));
        m.transferred(Direction::received, 1000);
        m.ad_judged(Judged::rejected);
        m.claim_decided(Decision::busy);
        m.checkpoint_moved(Direction::received, 4096);
        let mut registry = Registry::with_prefix("starling");
        m.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            r#"starling_claims_total{outcome="granted"} 1"#,
            r#"starling_claims_total{outcome="refused"} 1"#,
            r#"starling_claims_total{outcome="failed"} 0"#,
            r#"starling_negotiation_latency_seconds_count{outcome="granted"} 1"#,
            r#"starling_negotiation_latency_seconds_bucket{le="0.025",outcome="granted"} 1"#,
            r#"starling_negotiation_latency_seconds_bucket{le="0.01",outcome="granted"} 0"#,
            r#"starling_negotiation_latency_seconds_bucket{le="5.0",outcome="refused"} 1"#,
            r#"starling_transfer_bytes_total{direction="received"} 1000"#,
            r#"starling_transfer_bytes_total{direction="sent"} 0"#,
            r#"starling_gossip_ads_total{verdict="rejected"} 1"#,
            r#"starling_gossip_ads_total{verdict="accepted"} 0"#,
            r#"starling_claims_decided_total{outcome="busy"} 1"#,
            r#"starling_claims_decided_total{outcome="granted"} 0"#,
            r#"starling_checkpoint_bytes_total{direction="received"} 4096"#,
            r#"starling_checkpoint_bytes_total{direction="sent"} 0"#,
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
        }
    }
}
