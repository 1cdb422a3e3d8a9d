//! Whether this machine takes a claim: the signed job is opened and its
//! agent's domain verified, the domain's terms consulted, the decision
//! made against the live machine ad, a share of the domain's cap or the
//! job's concurrency limits asked of the keeper, the dynamic slot carved,
//! and the claim recorded in the store.
//!
//! The rules are `starling_policies`' (`claiming`, `terms`, `slots`); this
//! file gathers their inputs and carries out the verdict. It starts no
//! job (`runs`) and orders no waiting request (`waiting`).

use std::time::Duration;

use libp2p::PeerId;
use starling_policies::claiming::{self, ClaimInput, Decision, MachineState};
use starling_policies::shares::Asked;
use starling_policies::slots;
use starling_policies::terms;
use starling_protocol::claim::{self, ClaimId, RejectCode, RequestId};
use starling_protocol::classad::ClassAd;
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{AgentId, Certificate, Envelope, Timestamp};
use starling_storage::{Claim, JobId, Side};

use super::drain::drain_reason;
use super::leases::job_limits;
use super::partitionable::{machine_name, slot_ad};
use super::policy::idle_slot;
use super::{
    millis, peer_agent, unix_now, Held, JobDomain, StartdState, MAX_CLAIMS, MAX_LEASE, MIN_LEASE,
};

impl StartdState {
    pub(super) fn reject(
        request: RequestId,
        code: RejectCode,
        reason: impl Into<String>,
    ) -> claim::Response {
        claim::Response::Rejected {
            request,
            code,
            reason: reason.into(),
        }
    }

    /// Decides a claim ([`Self::decide_claim`]) and says so in the log:
    /// grants and refusals at INFO, "busy" at DEBUG (a full machine says
    /// it to every asker).
    pub(super) async fn grant(
        &mut self,
        peer: PeerId,
        request: RequestId,
        job: &Envelope,
        lease_ms: u64,
    ) -> claim::Response {
        use starling_web::metrics::Decision;
        let response = self.decide_claim(peer, request, job, lease_ms).await;
        match &response {
            claim::Response::Granted { claim, slot, .. } => {
                tracing::info!(%peer, %claim, %slot, "granted a claim");
                self.args.metrics.claim_decided(Decision::granted);
            }
            claim::Response::Rejected { code, reason, .. } if *code == RejectCode::Busy => {
                tracing::debug!(%peer, %reason, "refused a claim: busy");
                self.args.metrics.claim_decided(Decision::busy);
            }
            claim::Response::Rejected { code, reason, .. } => {
                tracing::info!(%peer, ?code, %reason, "refused a claim");
                self.args.metrics.claim_decided(Decision::refused);
            }
            _ => {}
        }
        response
    }

    async fn decide_claim(
        &mut self,
        peer: PeerId,
        request: RequestId,
        job: &Envelope,
        lease_ms: u64,
    ) -> claim::Response {
        if let Some(claim) = self.granted.get(&(peer, request)) {
            if let Some(held) = self.claims.get(claim) {
                return claim::Response::Granted {
                    request,
                    claim: *claim,
                    lease_ms: millis(held.lease),
                    slot: held.slot.clone(),
                };
            }
        }
        if let Some(drain) = &self.drain {
            return Self::reject(request, RejectCode::ShuttingDown, drain_reason(drain));
        }
        if self.claims.len() >= MAX_CLAIMS {
            return Self::reject(request, RejectCode::Busy, "the agent holds too many claims");
        }
        let (ad, domain) = match self.open_job(peer, job) {
            Ok(opened) => opened,
            Err((code, reason)) => return Self::reject(request, code, reason),
        };
        let Some(machine) = self.args.pool.machine_ad().await else {
            return Self::reject(request, RejectCode::Busy, "the machine ad is not ready yet");
        };
        self.set_totals(&machine);
        self.machine_ad = Some(machine.clone());
        let foreign = domain.verified.as_deref() != Some(self.args.own_domain.as_str());
        let acceptance = domain
            .verified
            .as_deref()
            .filter(|_| foreign)
            .and_then(|d| self.acceptance(d, &ad, &machine));
        let input = ClaimInput {
            job: &ad,
            domain: domain
                .verified
                .as_deref()
                .or(domain.claimed.as_deref())
                .unwrap_or(""),
            trusted: domain.verified.is_some(),
            acceptance: acceptance.as_ref(),
        };
        let state = MachineState {
            ad: &machine,
            slots: &self.slots,
            shutting_down: false,
            foreign_gpus: self.args.foreign_gpus_max.filter(|_| foreign).map(|max| {
                claiming::ForeignGpus {
                    max,
                    held: self
                        .claims
                        .values()
                        .filter(|h| h.foreign)
                        .map(|h| u32::try_from(h.gpus.len()).unwrap_or(u32::MAX))
                        .sum(),
                }
            }),
        };
        let resources = match claiming::decide(&input, &state, unix_now()) {
            Decision::Granted { requested } => requested,
            Decision::Rejected { code, reason } => return Self::reject(request, code, reason),
        };
        let Ok(claim) = ClaimId::random() else {
            return Self::reject(request, RejectCode::Busy, "no randomness for a claim id");
        };
        // A job under its domain's cap here, or using concurrency limits,
        // runs only once the domain's keeper holds its share of them.
        let limits = match job_limits(&ad) {
            Ok(limits) => limits,
            Err(why) => return Self::reject(request, RejectCode::BadRequest, why),
        };
        let capped = domain
            .verified
            .as_deref()
            .filter(|d| foreign && self.args.trust.current().caps.contains_key(*d));
        let share_domain = match (capped, limits.is_empty()) {
            (Some(d), _) => Some(d.to_owned()),
            (None, false) => Some(
                domain
                    .verified
                    .clone()
                    .unwrap_or_else(|| self.args.own_domain.clone()),
            ),
            (None, true) => None,
        };
        let share = match share_domain {
            Some(d) => {
                let held = Asked {
                    cpus: resources.cpus,
                    gpus: resources.gpus,
                    limits,
                };
                match self.args.shares.ask(&d, claim, held.clone(), false).await {
                    Ok(until) => {
                        self.keep_share(claim, &d, held, until);
                        Some(d)
                    }
                    // Beyond the cap or a limit the job waits, as it does
                    // for a full machine, and runs as others finish.
                    Err(why) => {
                        return Self::reject(request, RejectCode::QuotaExceeded, why.to_string())
                    }
                }
            }
            None => None,
        };
        let now = unix_now();
        let fits = |d: &slots::Device| slots::device_fits(&ad, d, now);
        let gpus = match self.slots.carve_where(claim, &resources, &fits) {
            Ok(carved) => self
                .slots
                .devices()
                .iter()
                .filter(|d| carved.gpus.contains(&d.id))
                .cloned()
                .collect::<Vec<_>>(),
            Err(_) => {
                self.give_back_share(claim, share.is_some());
                return Self::reject(request, RejectCode::Busy, "the machine filled up meanwhile");
            }
        };
        let lease = Duration::from_millis(lease_ms).clamp(MIN_LEASE, MAX_LEASE);
        let record = Claim {
            id: claim.as_bytes().to_vec(),
            peer: peer_agent(&peer)
                .unwrap_or_else(|| AgentId::from_public_key(job.header().signer)),
            job: job_id_of(&ad),
            side: Side::Execute,
            lease_expires: Timestamp::from_unix_millis(
                Timestamp::now()
                    .as_unix_millis()
                    .saturating_add(millis(lease)),
            ),
        };
        let store = self.args.store.clone();
        let saved = tokio::task::spawn_blocking(move || store.put_claim(&record)).await;
        if !matches!(saved, Ok(Ok(()))) {
            self.slots.release(&claim);
            self.give_back_share(claim, share.is_some());
            // Refused at once, with the store's reason ("disk full: ..."),
            // rather than left for the submitter to wonder about.
            let why = match saved {
                Ok(Err(e)) => format!("the claim could not be recorded: {e}"),
                _ => "the claim could not be recorded".to_owned(),
            };
            return Self::reject(request, RejectCode::Busy, why);
        }
        let host = machine_name(&machine);
        let slot = format!("slot1_{}@{host}", self.next_slot);
        self.next_slot += 1;
        self.claims.insert(
            claim,
            Held {
                peer,
                request,
                lease,
                deadline: tokio::time::Instant::now() + lease,
                resources,
                machine: slot_ad(&machine, &slot, &resources, &gpus),
                gpus,
                foreign,
                slot: slot.clone(),
                job: None,
                policy: idle_slot(unix_now()),
                evicting: false,
                preempted_for: None,
                drained: false,
                share,
            },
        );
        self.granted.insert((peer, request), claim);
        tracing::debug!(%claim, %peer, %slot, "claim granted");
        self.advertise();
        claim::Response::Granted {
            request,
            claim,
            lease_ms: millis(lease),
            slot,
        }
    }

    /// What this domain's `export` and `accept` terms for `domain` say of
    /// `job` on `machine`, when it has either: a machine not exported to
    /// the domain is refused first; an undecidable accept term is logged
    /// once per domain (every job it meets would say so again).
    pub(super) fn acceptance(
        &mut self,
        domain: &str,
        job: &ClassAd,
        machine: &ClassAd,
    ) -> Option<terms::Acceptance> {
        let trust = self.args.trust.current();
        let advertised = self.slots.advertise(machine);
        // A machine not advertised to the domain takes none of its claims.
        let export = trust.export_terms.get(domain);
        if let Err(reason) = terms::exported(
            &self.args.own_domain,
            domain,
            export,
            &advertised,
            unix_now(),
        ) {
            return Some(terms::Acceptance::Refused(reason));
        }
        let accept = trust.accept_terms.get(domain)?;
        let verdict =
            terms::acceptance(&self.args.own_domain, accept, job, &advertised, unix_now());
        if let terms::Acceptance::Undecided(reason) = &verdict {
            if self.undecided_terms.insert(domain.to_owned()) {
                tracing::warn!(%domain, %reason, "this domain's accept term for a trusted domain cannot decide its jobs; they are refused");
            }
        }
        Some(verdict)
    }

    /// Opens a signed job: it must be a JOB envelope in its window, signed
    /// by the peer that sent it. Returns the ad and the signer's domain
    /// when a certificate from a domain we trust admits it.
    pub(super) fn open_job(
        &self,
        peer: PeerId,
        job: &Envelope,
    ) -> Result<(ClassAd, JobDomain), (RejectCode, String)> {
        let now = Timestamp::now();
        let signed = gossip::open_kind(job, AdKind::Job, now, &self.args.freshness)
            .map_err(|e| (RejectCode::BadRequest, format!("the signed job: {e}")))?;
        if peer_agent(&peer) != Some(signed.signer()) {
            return Err((
                RejectCode::BadRequest,
                "the job is signed by another agent than the one asking".to_owned(),
            ));
        }
        let verified = signed
            .verified_certificates(
                &self.args.trust.current().anchors,
                now,
                &self.args.freshness,
            )
            .into_iter()
            .next()
            .map(|c| c.domain);
        let signer = signed.signer();
        let claimed = verified.is_none().then(|| {
            signed.certificates.iter().find_map(|env| {
                Certificate::open(env, now, &self.args.freshness)
                    .ok()
                    .filter(|c| c.agent == signer)
                    .map(|c| c.domain)
            })
        });
        Ok((
            signed.ad,
            JobDomain {
                verified,
                claimed: claimed.flatten(),
            },
        ))
    }
}

fn job_id_of(ad: &ClassAd) -> JobId {
    use starling_protocol::classad::{Evaluator, Name, Side as EvalSide, Value};
    let mut ev = Evaluator::with_ads(Some(ad), None);
    let int = |ev: &mut Evaluator<'_>, n: &str| match ev
        .eval_attr(EvalSide::My, Name::known(n).folded())
    {
        Value::Int(i) => i,
        _ => 0,
    };
    let cluster = int(&mut ev, "ClusterId").max(0) as u64;
    let proc = int(&mut ev, "ProcId").clamp(0, i64::from(u32::MAX)) as u32;
    JobId::new(cluster, proc)
}
