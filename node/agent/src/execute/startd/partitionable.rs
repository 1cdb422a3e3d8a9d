//! The machine as one partitionable slot: its totals learnt from the
//! machine ad, the dynamic slots carved for claims and their ads, and
//! what is left of it, with the machine's State and Activity, told to
//! the advertiser.
//!
//! The slot arithmetic is `starling_policies::slots`', the machine ad the
//! supervisor's; this file decides no claim and changes no job.

use starling_policies::owner_policy::{self, Activity, State};
use starling_policies::slots::{self, Partitionable, Resources};
use starling_protocol::claim::ClaimId;
use starling_protocol::classad::ClassAd;

use super::StartdState;
use crate::advertiser::Occupancy;

impl StartdState {
    /// Sizes the partitionable slot from the machine ad, once it is known,
    /// and carves the claims held (taken on again) out of it.
    pub(super) fn set_totals(&mut self, machine: &ClassAd) {
        let machine_slot: Partitionable<ClaimId> = Partitionable::of_machine(machine);
        // Only while unknown, or with nothing carved: a claim's slot keeps
        // its place.
        let unknown = self.slots.total() == Resources::default();
        let same_devices = self.slots.devices() == machine_slot.devices();
        let same = self.slots.total() == machine_slot.total() && same_devices;
        if same {
            return;
        }
        if !(unknown || self.claims.is_empty()) {
            if !same_devices {
                self.take_devices(machine_slot);
            }
            return;
        }
        // The totals were not known when the startd started (the
        // advertiser may not have measured the machine yet).
        self.slots = machine_slot;
        for (claim, held) in &mut self.claims {
            let ids: Vec<String> = held.gpus.iter().map(|d| d.id.clone()).collect();
            if let Err(e) = self.slots.carve_devices(*claim, &held.resources, &ids) {
                tracing::warn!(%claim, "a claim taken on again does not fit the machine: {e}");
            }
            // A claim taken on again learns its devices' properties.
            for device in &mut held.gpus {
                if let Some(known) = self.slots.devices().iter().find(|d| d.id == device.id) {
                    *device = known.clone();
                }
            }
        }
    }

    /// The machine's GPUs changed while claims hold some (discovery ran
    /// again on a reload): the new devices are taken on with each claim
    /// keeping its own (the advertiser keeps a held device in the ad until
    /// its claim ends, even when it is no longer found). If a claim's
    /// devices cannot be kept, the old shape stays until the claims end.
    fn take_devices(&mut self, machine_slot: Partitionable<ClaimId>) {
        let mut next = machine_slot;
        for (claim, held) in &self.claims {
            let ids: Vec<String> = held.gpus.iter().map(|d| d.id.clone()).collect();
            if let Err(e) = next.carve_devices(*claim, &held.resources, &ids) {
                tracing::warn!(%claim, "the machine's GPUs changed, but a claim's would not be kept ({e}); the devices in force stay until the claims end");
                return;
            }
        }
        tracing::info!(
            gpus = next.devices().len(),
            "the machine's GPUs changed; claims keep theirs"
        );
        self.slots = next;
    }

    /// Learns the machine's totals and the slot ads of claims taken on
    /// again (both wait for the machine ad), before anything needs them.
    pub(super) async fn learn_totals(&mut self) {
        let waiting = self.claims.values().any(|h| h.machine.is_empty());
        if !waiting && (self.claims.is_empty() || self.slots.total() != Resources::default()) {
            return;
        }
        let Some(machine) = self.args.pool.machine_ad().await else {
            return;
        };
        self.set_totals(&machine);
        let host = machine_name(&machine);
        for held in self.claims.values_mut() {
            if held.machine.is_empty() {
                held.slot = format!("{}@{host}", held.slot);
                held.machine = slot_ad(&machine, &held.slot, &held.resources, &held.gpus);
            }
        }
        self.advertise();
    }

    /// The machine's totals as an ad, for evaluating requests that refer
    /// to the machine.
    pub(super) fn slots_machine(&self) -> ClassAd {
        self.slots.advertise(&ClassAd::new())
    }

    /// Tells the advertiser what is left of the machine.
    pub(super) fn advertise(&self) {
        let busy = self.claims.values().filter(|h| h.job.is_some()).count();
        let used = self.slots.used();
        let (state, activity) = self.shown_state();
        self.args.pool.occupancy(Occupancy {
            cpus: u64::from(used.cpus),
            memory_mib: used.memory_mib,
            disk_kib: used.disk_kib,
            gpus: self
                .claims
                .values()
                .flat_map(|h| {
                    let user = h.job.as_ref().map(|j| j.user.clone()).unwrap_or_default();
                    h.gpus.iter().map(move |d| (d.id.clone(), user.clone()))
                })
                .collect(),
            claims: self.claims.len(),
            busy,
            state: state.name(),
            activity: activity.name(),
            draining: self.drain.is_some(),
        });
    }

    /// The State and Activity the machine ad shows
    /// ([`owner_policy::shown_state`]).
    fn shown_state(&self) -> (State, Activity) {
        owner_policy::shown_state(
            self.machine_state,
            self.claims.values().map(|h| {
                if h.job.is_some() {
                    (h.policy.state, h.policy.activity)
                } else {
                    (State::Claimed, Activity::Idle)
                }
            }),
        )
    }
}

/// A dynamic slot's ad: the machine's, named for the slot, with the
/// slot's share of it.
pub(super) fn slot_ad(
    machine: &ClassAd,
    slot: &str,
    resources: &Resources,
    gpus: &[slots::Device],
) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut ad = machine.clone();
    ad.insert(
        Name::known("Name"),
        Expr::Literal(Value::String(slot.into())),
    );
    for (name, value) in [
        ("Cpus", i64::from(resources.cpus)),
        (
            "Memory",
            i64::try_from(resources.memory_mib).unwrap_or(i64::MAX),
        ),
        (
            "Disk",
            i64::try_from(resources.disk_kib).unwrap_or(i64::MAX),
        ),
    ] {
        ad.insert(Name::known(name), Expr::Literal(Value::Int(value)));
    }
    ad.insert(
        Name::known("SlotType"),
        Expr::Literal(Value::String("Dynamic".into())),
    );
    if machine.get("TotalGPUs").is_some() {
        slots::set_gpu_attributes(&mut ad, &gpus.iter().collect::<Vec<_>>());
    }
    ad
}

/// The host part of the machine's slot names: what follows `@` in its
/// `Name` (`slot1@host`), else its `Machine`.
pub(super) fn machine_name(machine: &ClassAd) -> String {
    use starling_protocol::classad::{Evaluator, Name, Side as EvalSide, Value};
    let mut ev = Evaluator::with_ads(Some(machine), None);
    if let Value::String(name) = ev.eval_attr(EvalSide::My, Name::known("Name").folded()) {
        if let Some((_, host)) = name.split_once('@') {
            return host.to_owned();
        }
    }
    match ev.eval_attr(EvalSide::My, Name::known("Machine").folded()) {
        Value::String(s) => s.to_string(),
        _ => "localhost".to_owned(),
    }
}
