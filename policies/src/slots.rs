//! HTCondor's partitionable slots: one machine-wide slot out of which each
//! claim carves a dynamic slot of the cpus, memory and disk its job asked
//! for, so that one machine runs several jobs and never more than it has.
//!
//! Requests are rounded up as HTCondor's defaults do
//! (`MODIFY_REQUEST_EXPR_REQUESTMEMORY` rounds memory up to a multiple of
//! 128 MiB, disk to 1 MiB), so that a pool of slightly different requests
//! does not fragment a machine into unusable crumbs.
//!
//! The machine advertises one ad, the partitionable slot's (HTCondor
//! advertises each dynamic slot too; here a claim's slot is the claim's
//! business): `Cpus`, `Memory` and `Disk` are what is free, the `Total*`
//! attributes what the machine has, and the `Child*` lists describe the
//! dynamic slots as HTCondor's partitionable slots do.

use std::collections::BTreeMap;
use std::fmt;

use starling_protocol::classad::{ClassAd, Evaluator, Expr, Name, Side, Value};

/// Memory is carved in multiples of this many MiB.
pub const MEMORY_QUANTUM_MIB: u64 = 128;

/// Disk is carved in multiples of this many KiB.
pub const DISK_QUANTUM_KIB: u64 = 1024;

/// The largest request of any one resource taken seriously (a typo such as
/// `request_memory = 4000000000` is refused rather than overflowing).
pub const MAX_REQUEST: u64 = 1 << 48;

/// Cpus, memory in MiB, disk in KiB and whole GPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    pub cpus: u32,
    pub memory_mib: u64,
    pub disk_kib: u64,
    pub gpus: u32,
}

impl Resources {
    pub fn new(cpus: u32, memory_mib: u64, disk_kib: u64) -> Resources {
        Resources {
            cpus,
            memory_mib,
            disk_kib,
            gpus: 0,
        }
    }

    /// The same, with `gpus` GPUs.
    pub fn with_gpus(self, gpus: u32) -> Resources {
        Resources { gpus, ..self }
    }

    /// Whether `want` fits in `self`.
    pub fn fits(&self, want: &Resources) -> bool {
        want.cpus <= self.cpus
            && want.memory_mib <= self.memory_mib
            && want.disk_kib <= self.disk_kib
            && want.gpus <= self.gpus
    }

    pub fn plus(&self, other: &Resources) -> Resources {
        Resources {
            cpus: self.cpus.saturating_add(other.cpus),
            memory_mib: self.memory_mib.saturating_add(other.memory_mib),
            disk_kib: self.disk_kib.saturating_add(other.disk_kib),
            gpus: self.gpus.saturating_add(other.gpus),
        }
    }

    pub fn minus(&self, other: &Resources) -> Resources {
        Resources {
            cpus: self.cpus.saturating_sub(other.cpus),
            memory_mib: self.memory_mib.saturating_sub(other.memory_mib),
            disk_kib: self.disk_kib.saturating_sub(other.disk_kib),
            gpus: self.gpus.saturating_sub(other.gpus),
        }
    }

    /// What does not fit of `want` in `self`, in words ("needs 4 cpus, 2
    /// free"), or `None` when it fits.
    pub fn shortfall(&self, want: &Resources) -> Option<String> {
        let mut missing = Vec::new();
        if want.cpus > self.cpus {
            missing.push(format!("needs {} cpus, {} free", want.cpus, self.cpus));
        }
        if want.memory_mib > self.memory_mib {
            missing.push(format!(
                "needs {} MiB of memory, {} MiB free",
                want.memory_mib, self.memory_mib
            ));
        }
        if want.disk_kib > self.disk_kib {
            missing.push(format!(
                "needs {} KiB of disk, {} KiB free",
                want.disk_kib, self.disk_kib
            ));
        }
        if want.gpus > self.gpus {
            missing.push(format!("needs {} GPUs, {} free", want.gpus, self.gpus));
        }
        (!missing.is_empty()).then(|| missing.join("; "))
    }

    /// A machine's totals from its ad: `TotalCpus`, `TotalMemory`,
    /// `TotalDisk`, `TotalGPUs`, else `Cpus`, `Memory`, `Disk`, `GPUs`;
    /// missing ones are zero.
    pub fn totals_of(machine: &ClassAd) -> Resources {
        let mut ev = Evaluator::with_ads(Some(machine), None);
        let mut get = |total: &str, plain: &str| {
            whole(&mut ev, total)
                .or_else(|| whole(&mut ev, plain))
                .unwrap_or(0)
        };
        Resources {
            cpus: u32::try_from(get("TotalCpus", "Cpus")).unwrap_or(u32::MAX),
            memory_mib: get("TotalMemory", "Memory"),
            disk_kib: get("TotalDisk", "Disk"),
            gpus: u32::try_from(get("TotalGPUs", "GPUs")).unwrap_or(u32::MAX),
        }
    }
}

impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cpus, {} MiB memory, {} KiB disk",
            self.cpus, self.memory_mib, self.disk_kib
        )?;
        if self.gpus > 0 {
            write!(f, ", {} GPUs", self.gpus)?;
        }
        Ok(())
    }
}

fn whole(ev: &mut Evaluator<'_>, name: &str) -> Option<u64> {
    let name = Name::new(name).ok()?;
    match ev.eval_attr(Side::My, name.folded()) {
        Value::Int(i) if i >= 0 => Some(i as u64),
        Value::Real(r) if r.is_finite() && r >= 0.0 => Some(r.ceil() as u64),
        _ => None,
    }
}

/// A job's request that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{attribute}: {problem}")]
pub struct RequestError {
    pub attribute: &'static str,
    pub problem: String,
}

/// The job's `RequestCpus` (default 1), `RequestMemory` (MiB, default
/// [`MEMORY_QUANTUM_MIB`]), `RequestDisk` (KiB, default
/// [`DISK_QUANTUM_KIB`]) and `RequestGPUs` (default 0), evaluated with the machine as `TARGET` at `now`
/// and rounded up to the quanta.
pub fn request_of(job: &ClassAd, machine: &ClassAd, now: i64) -> Result<Resources, RequestError> {
    let mut ev = Evaluator::with_ads(Some(job), Some(machine)).now(now);
    let mut get = |attribute: &'static str, default: u64| -> Result<u64, RequestError> {
        let name = Name::known(attribute);
        let problem = |p: String| RequestError {
            attribute,
            problem: p,
        };
        match ev.eval_attr(Side::My, name.folded()) {
            Value::Undefined => {
                if job.get(attribute).is_some() {
                    Err(problem("evaluates to UNDEFINED".to_owned()))
                } else {
                    Ok(default)
                }
            }
            Value::Int(i) if i < 0 => Err(problem(format!("{i} is negative"))),
            Value::Int(i) => Ok(i as u64),
            Value::Real(r) if !r.is_finite() || r < 0.0 => {
                Err(problem(format!("{r} is not a usable amount")))
            }
            Value::Real(r) => Ok(r.ceil() as u64),
            other => Err(problem(format!(
                "{} is not a number",
                starling_protocol::classad::unparse_value(&other)
            ))),
        }
        .and_then(|n| {
            if n > MAX_REQUEST {
                Err(problem(format!("{n} is more than any machine has")))
            } else {
                Ok(n)
            }
        })
    };
    let cpus = get("RequestCpus", 1)?;
    let memory = get("RequestMemory", MEMORY_QUANTUM_MIB)?;
    let disk = get("RequestDisk", DISK_QUANTUM_KIB)?;
    let gpus = get("RequestGPUs", 0)?;
    Ok(Resources {
        cpus: u32::try_from(cpus.max(1)).map_err(|_| RequestError {
            attribute: "RequestCpus",
            problem: format!("{cpus} is more than any machine has"),
        })?,
        memory_mib: round_up(memory.max(1), MEMORY_QUANTUM_MIB),
        disk_kib: round_up(disk.max(1), DISK_QUANTUM_KIB),
        gpus: u32::try_from(gpus)
            .ok()
            .filter(|g| *g as usize <= MAX_DEVICES)
            .ok_or_else(|| RequestError {
                attribute: "RequestGPUs",
                problem: format!("{gpus} is more than any machine has"),
            })?,
    })
}

fn round_up(n: u64, quantum: u64) -> u64 {
    n.div_ceil(quantum).saturating_mul(quantum)
}

/// The number of the machine's one partitionable slot: `slot1`.
pub const PARTITIONABLE_SLOT: u32 = 1;

/// The most GPUs one machine hands out.
pub const MAX_DEVICES: usize = 64;

/// A GPU, handed out whole: its id (`GPU-9a8ed216`, HTCondor's short
/// UUID, or `CUDA0` where devices are only counted) and its properties
/// (`Capability`, `GlobalMemoryMb`, `DeviceName`...), which a job's
/// `RequireGPUs` is evaluated against.
#[derive(Debug, Clone)]
pub struct Device {
    pub id: String,
    pub properties: ClassAd,
}

impl PartialEq for Device {
    fn eq(&self, other: &Device) -> bool {
        self.id == other.id && self.properties.same_as(&other.properties)
    }
}

impl Device {
    /// The attribute holding the device's ad in a machine ad:
    /// `GPUs_GPU_9a8ed216` (HTCondor's name, `-` made `_`).
    pub fn attribute(&self) -> String {
        device_attribute(&self.id)
    }
}

/// The attribute holding device `id`'s ad in a machine ad.
pub fn device_attribute(id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("GPUs_{clean}")
}

/// The machine's GPUs as its ad lists them, in order: the ids of
/// `DetectedGPUs` (`"GPU-a, GPU-b"`, as HTCondor's discovery writes it),
/// each with the properties of its nested ad `GPUs_GPU_a` (less `Id`).
/// Without `DetectedGPUs`, `TotalGPUs` devices numbered as HTCondor
/// numbers them by index: `CUDA0`, `CUDA1`...
pub fn devices_of(machine: &ClassAd) -> Vec<Device> {
    let ids: Vec<String> = match machine.get("DetectedGPUs") {
        Some(Expr::Literal(Value::String(s))) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|id| !id.is_empty())
            .take(MAX_DEVICES)
            .map(str::to_owned)
            .collect(),
        _ => return numbered_devices(Resources::totals_of(machine).gpus),
    };
    ids.into_iter()
        .map(|id| {
            let mut properties = match machine.get(&device_attribute(&id)) {
                Some(Expr::Ad(ad)) => (**ad).clone(),
                _ => ClassAd::new(),
            };
            properties.remove(Name::known("Id"));
            Device { id, properties }
        })
        .collect()
}

/// `n` devices known only by number, as HTCondor names them by index:
/// `CUDA0`, `CUDA1`...
fn numbered_devices(n: u32) -> Vec<Device> {
    (0..(n as usize).min(MAX_DEVICES))
        .map(|i| Device {
            id: format!("CUDA{i}"),
            properties: ClassAd::new(),
        })
        .collect()
}

/// Whether `device` satisfies the job's `RequireGPUs` (every device
/// does when the job has none): the constraint evaluated with the device's
/// properties as `MY`, and the job as `TARGET` for what the device does not
/// have (`GPUsMinCapability`...), as HTCondor binds devices to a slot.
pub fn device_fits(job: &ClassAd, device: &Device, now: i64) -> bool {
    let Some(require) = job.get("RequireGPUs") else {
        return true;
    };
    let mut ev = Evaluator::with_ads(Some(&device.properties), Some(job)).now(now);
    matches!(ev.eval_on(Side::My, require), Value::Bool(true))
}

/// Sets the GPU attributes of a slot's ad from the devices it holds (for
/// the partitionable slot, those not handed out), as HTCondor's startd
/// does: `GPUs` (how many), `AssignedGPUs` (`"GPU-a,GPU-b"`, unset when
/// none), `AvailableGPUs` (`{ GPUs_GPU_a, GPUs_GPU_b }`, references to the
/// devices' ads, which `countMatches(MY.RequireGPUs,
/// TARGET.AvailableGPUs)` looks into), each device's ad with its `Id`, and
/// `GPUs_<property>` for each property all of them share.
pub fn set_gpu_attributes(ad: &mut ClassAd, own: &[&Device]) {
    let int = |n: usize| Expr::Literal(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)));
    ad.insert(Name::known("GPUs"), int(own.len()));
    if own.is_empty() {
        ad.remove(Name::known("AssignedGPUs"));
    } else {
        let ids: Vec<&str> = own.iter().map(|d| d.id.as_str()).collect();
        ad.insert(
            Name::known("AssignedGPUs"),
            Expr::Literal(Value::String(ids.join(",").into())),
        );
    }
    let mut refs = Vec::with_capacity(own.len());
    for device in own {
        let attribute = device.attribute();
        let Ok(name) = Name::new(&attribute) else {
            continue;
        };
        let mut props = device.properties.clone();
        props.insert(
            Name::known("Id"),
            Expr::Literal(Value::String(device.id.as_str().into())),
        );
        ad.insert(name, Expr::Ad(std::sync::Arc::new(props)));
        refs.push(Expr::Attr(starling_protocol::classad::AttrRef::new(
            name, false,
        )));
    }
    ad.insert(
        Name::known("AvailableGPUs"),
        Expr::List(refs.into_boxed_slice()),
    );
    if let Some((first, rest)) = own.split_first() {
        for entry in first.properties.iter() {
            let name = entry.name.as_str();
            let shared = rest.iter().all(|d| {
                d.properties
                    .get(name)
                    .is_some_and(|v| v.same_as(entry.expr()))
            });
            if shared {
                if let Ok(n) = Name::new(&format!("GPUs_{name}")) {
                    ad.insert(n, entry.expr().clone());
                }
            }
        }
    }
}

/// A claim's share of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicSlot {
    /// `n` of `slot1_n`, unique while the machine runs.
    pub id: u32,
    /// HTCondor's name for it: `slot1_n`.
    pub name: String,
    pub resources: Resources,
    /// The ids of the GPUs it holds, `resources.gpus` of them.
    pub gpus: Vec<String>,
}

/// A claim that cannot be carved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlotError {
    #[error("the machine {0}")]
    DoesNotFit(String),
    #[error("the claim already has a slot")]
    AlreadyCarved,
}

/// The machine's one partitionable slot and the dynamic slots carved from
/// it, by claim (keyed by claim id, 16 bytes, unless said otherwise).
#[derive(Debug, Clone)]
pub struct Partitionable<K: Ord + Clone = [u8; 16]> {
    total: Resources,
    devices: Vec<Device>,
    slots: BTreeMap<K, DynamicSlot>,
    next_id: u32,
}

impl<K: Ord + Clone> Partitionable<K> {
    /// A slot of `total`, its GPUs numbered `CUDA0`, `CUDA1`...
    pub fn new(total: Resources) -> Partitionable<K> {
        Self::with_devices(total, numbered_devices(total.gpus))
    }

    /// A slot of `total` whose GPUs are `devices` (their number wins over
    /// `total.gpus`).
    pub fn with_devices(total: Resources, devices: Vec<Device>) -> Partitionable<K> {
        let total = Resources {
            gpus: u32::try_from(devices.len()).unwrap_or(u32::MAX),
            ..total
        };
        Partitionable {
            total,
            devices,
            slots: BTreeMap::new(),
            next_id: 1,
        }
    }

    /// The slot a machine ad describes: its totals and its GPUs.
    pub fn of_machine(machine: &ClassAd) -> Partitionable<K> {
        Self::with_devices(Resources::totals_of(machine), devices_of(machine))
    }

    /// The same machine with nothing carved.
    pub fn idle<L: Ord + Clone>(&self) -> Partitionable<L> {
        Partitionable::with_devices(self.total, self.devices.clone())
    }

    pub fn total(&self) -> Resources {
        self.total
    }

    /// The machine's GPUs, in order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The GPUs no dynamic slot holds, in order.
    pub fn free_devices(&self) -> Vec<&Device> {
        let held: std::collections::BTreeSet<&str> = self
            .slots
            .values()
            .flat_map(|s| s.gpus.iter().map(String::as_str))
            .collect();
        self.devices
            .iter()
            .filter(|d| !held.contains(d.id.as_str()))
            .collect()
    }

    /// What is carved out now.
    pub fn used(&self) -> Resources {
        self.slots
            .values()
            .fold(Resources::default(), |sum, s| sum.plus(&s.resources))
    }

    /// What is left to carve.
    pub fn free(&self) -> Resources {
        self.total.minus(&self.used())
    }

    pub fn slots(&self) -> impl Iterator<Item = (&K, &DynamicSlot)> {
        self.slots.iter()
    }

    pub fn get(&self, key: &K) -> Option<&DynamicSlot> {
        self.slots.get(key)
    }

    /// Carves `want` for `key`, its GPUs the first free ones; never more
    /// than is free.
    pub fn carve(&mut self, key: K, want: &Resources) -> Result<DynamicSlot, SlotError> {
        self.carve_where(key, want, &|_| true)
    }

    /// Carves `want` for `key`, its GPUs the first free ones `accept`
    /// takes (the job's `RequireGPUs`, [`device_fits`]), in the machine's
    /// order as HTCondor binds them.
    pub fn carve_where(
        &mut self,
        key: K,
        want: &Resources,
        accept: &dyn Fn(&Device) -> bool,
    ) -> Result<DynamicSlot, SlotError> {
        if self.slots.contains_key(&key) {
            return Err(SlotError::AlreadyCarved);
        }
        if let Some(short) = self.free().shortfall(want) {
            return Err(SlotError::DoesNotFit(short));
        }
        let fitting: Vec<String> = self
            .free_devices()
            .into_iter()
            .filter(|d| accept(d))
            .map(|d| d.id.clone())
            .collect();
        if fitting.len() < want.gpus as usize {
            return Err(SlotError::DoesNotFit(format!(
                "needs {} GPUs that satisfy RequireGPUs, {} free that do",
                want.gpus,
                fitting.len()
            )));
        }
        let gpus = fitting[..want.gpus as usize].to_vec();
        Ok(self.insert(key, want, gpus))
    }

    /// Carves `want` for `key` with the very GPUs `ids` (a job taken on
    /// again after a restart keeps the devices it was started with).
    pub fn carve_devices(
        &mut self,
        key: K,
        want: &Resources,
        ids: &[String],
    ) -> Result<DynamicSlot, SlotError> {
        if self.slots.contains_key(&key) {
            return Err(SlotError::AlreadyCarved);
        }
        let want = Resources {
            gpus: u32::try_from(ids.len()).unwrap_or(u32::MAX),
            ..*want
        };
        if let Some(short) = self.free().shortfall(&want) {
            return Err(SlotError::DoesNotFit(short));
        }
        let free = self.free_devices();
        if let Some(gone) = ids.iter().find(|id| !free.iter().any(|d| &d.id == *id)) {
            return Err(SlotError::DoesNotFit(format!("has no free GPU {gone}")));
        }
        Ok(self.insert(key, &want, ids.to_vec()))
    }

    fn insert(&mut self, key: K, want: &Resources, gpus: Vec<String>) -> DynamicSlot {
        let slot = DynamicSlot {
            id: self.next_id,
            name: dynamic_name(PARTITIONABLE_SLOT, self.next_id),
            resources: *want,
            gpus,
        };
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.slots.insert(key, slot.clone());
        slot
    }

    /// Gives `key`'s slot back.
    pub fn release(&mut self, key: &K) -> Option<DynamicSlot> {
        self.slots.remove(key)
    }

    /// The machine ad as it should be advertised: a copy of `machine` with
    ///
    /// - `Cpus`, `Memory`, `Disk`, `GPUs`: what is free;
    /// - `TotalCpus`, `TotalMemory`, `TotalDisk`, `TotalGPUs`: the
    ///   machine's totals;
    /// - the free GPUs' `AssignedGPUs` and `AvailableGPUs`
    ///   ([`set_gpu_attributes`]);
    /// - `PartitionableSlot = true`, `SlotType = "Partitionable"`,
    ///   `NumDynamicSlots`;
    /// - `ChildName`, `ChildCpus`, `ChildMemory`, `ChildDisk`, `ChildGPUs`:
    ///   lists with one item per dynamic slot, in claim order, as HTCondor
    ///   advertises them;
    /// - `State`/`Activity`: `Unclaimed`/`Idle` while nothing is carved,
    ///   `Claimed`/`Busy` once something is (so `status` shows a machine in
    ///   use), unless the machine ad says another state (`Owner`,
    ///   `Drained`...), which the owner's policy set and which outranks
    ///   claims.
    pub fn advertise(&self, machine: &ClassAd) -> ClassAd {
        let mut ad = machine.clone();
        let free = self.free();
        let set = |ad: &mut ClassAd, name: &str, value: Expr| {
            if let Ok(n) = Name::new(name) {
                ad.insert(n, value);
            }
        };
        let int = |n: u64| Expr::Literal(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)));
        let text = |s: &str| Expr::Literal(Value::String(s.into()));
        set(&mut ad, "Cpus", int(u64::from(free.cpus)));
        set(&mut ad, "Memory", int(free.memory_mib));
        set(&mut ad, "Disk", int(free.disk_kib));
        set(&mut ad, "TotalCpus", int(u64::from(self.total.cpus)));
        set(&mut ad, "TotalMemory", int(self.total.memory_mib));
        set(&mut ad, "TotalDisk", int(self.total.disk_kib));
        set(&mut ad, "TotalGPUs", int(u64::from(self.total.gpus)));
        set_gpu_attributes(&mut ad, &self.free_devices());
        set(&mut ad, "NumDynamicSlots", int(self.slots.len() as u64));
        set(
            &mut ad,
            "PartitionableSlot",
            Expr::Literal(Value::Bool(true)),
        );
        set(&mut ad, "SlotType", text("Partitionable"));
        let children =
            |f: &dyn Fn(&DynamicSlot) -> Expr| Expr::list(self.slots.values().map(f).collect());
        set(&mut ad, "ChildName", children(&|s| text(&s.name)));
        set(
            &mut ad,
            "ChildCpus",
            children(&|s| int(u64::from(s.resources.cpus))),
        );
        set(
            &mut ad,
            "ChildMemory",
            children(&|s| int(s.resources.memory_mib)),
        );
        set(
            &mut ad,
            "ChildDisk",
            children(&|s| int(s.resources.disk_kib)),
        );
        set(
            &mut ad,
            "ChildGPUs",
            children(&|s| int(u64::from(s.resources.gpus))),
        );
        let claim_state = match machine.get("State") {
            None => true,
            Some(Expr::Literal(Value::String(s))) => {
                s.eq_ignore_ascii_case("Unclaimed") || s.eq_ignore_ascii_case("Claimed")
            }
            Some(_) => false,
        };
        if claim_state {
            let (state, activity) = if self.slots.is_empty() {
                ("Unclaimed", "Idle")
            } else {
                ("Claimed", "Busy")
            };
            set(&mut ad, "State", text(state));
            set(&mut ad, "Activity", text(activity));
        }
        ad
    }
}

/// HTCondor's name of slot `n`: `slot1`.
pub fn slot_name(n: u32) -> String {
    format!("slot{n}")
}

/// HTCondor's name of dynamic slot `k` of slot `n`: `slot1_3`.
pub fn dynamic_name(n: u32, k: u32) -> String {
    format!("slot{n}_{k}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::{parse_ad, unparse};

    fn machine() -> ClassAd {
        parse_ad("[Cpus = 4; Memory = 8192; Disk = 1000000]").unwrap()
    }

    #[test]
    fn requests_default_and_round_up() {
        let job = parse_ad("[RequestMemory = 100]").unwrap();
        let r = request_of(&job, &machine(), 0).unwrap();
        assert_eq!(r, Resources::new(1, 128, 1024));
        let job = parse_ad("[RequestCpus = 2; RequestMemory = TARGET.Memory / 4; RequestDisk = 1]")
            .unwrap();
        assert_eq!(
            request_of(&job, &machine(), 0).unwrap(),
            Resources::new(2, 2048, 1024)
        );
    }

    /// The disk request a submit file without `request_disk` makes
    /// (HTCondor 25's expression over TransferInputSizeMB) sizes the slot.
    #[test]
    fn the_default_disk_request_evaluates() {
        let default = starling_protocol::submit::DEFAULT_REQUEST_DISK;
        for (input_mib, kib) in [(0, 1024 * 1024), (2047, 2560 * 1024)] {
            let job = parse_ad(&format!(
                "[TransferInputSizeMB = {input_mib}; RequestDisk = {default}]"
            ))
            .unwrap();
            assert_eq!(
                request_of(&job, &machine(), 0).unwrap(),
                Resources::new(1, 128, kib),
                "{input_mib} MiB of input"
            );
        }
    }

    #[test]
    fn bad_requests_name_the_attribute() {
        for (text, attr) in [
            ("[RequestCpus = -1]", "RequestCpus"),
            ("[RequestMemory = \"lots\"]", "RequestMemory"),
            ("[RequestDisk = Nope]", "RequestDisk"),
            ("[RequestMemory = 1e300]", "RequestMemory"),
        ] {
            let job = parse_ad(text).unwrap();
            let e = request_of(&job, &machine(), 0).unwrap_err();
            assert_eq!(e.attribute, attr, "{text}: {e}");
            assert!(e.to_string().starts_with(attr), "{e}");
        }
    }

    #[test]
    fn carving_never_oversubscribes() {
        let mut p: Partitionable<u32> = Partitionable::new(Resources::new(4, 1024, 10_000));
        let each = Resources::new(1, 256, 1024);
        for k in 0..4 {
            p.carve(k, &each).unwrap();
        }
        let e = p.carve(9, &Resources::new(1, 1, 1)).unwrap_err();
        assert!(e.to_string().contains("needs 1 cpus, 0 free"), "{e}");
        assert_eq!(p.carve(0, &each), Err(SlotError::AlreadyCarved));
        assert_eq!(p.free(), Resources::new(0, 0, 10_000 - 4 * 1024));
        p.release(&2).unwrap();
        assert_eq!(p.free().cpus, 1);
        let slot = p.carve(7, &each).unwrap();
        assert_eq!(slot.id, 5, "ids are not reused while the machine runs");
    }

    #[test]
    fn the_advertised_ad_shows_what_is_free() {
        let mut p: Partitionable<u32> = Partitionable::new(Resources::totals_of(&machine()));
        p.carve(1, &Resources::new(3, 1024, 1024)).unwrap();
        let ad = p.advertise(&machine());
        let r = Resources::totals_of(&ad);
        assert_eq!(r, Resources::new(4, 8192, 1_000_000), "totals stay");
        let mut ev = Evaluator::with_ads(Some(&ad), None);
        assert_eq!(whole(&mut ev, "Cpus"), Some(1));
        assert_eq!(whole(&mut ev, "Memory"), Some(7168));
        assert_eq!(whole(&mut ev, "NumDynamicSlots"), Some(1));
        let text = |ad: &ClassAd, name: &str| ad.get(name).map(unparse);
        assert_eq!(text(&ad, "ChildCpus").as_deref(), Some("{ 3 }"));
        assert_eq!(text(&ad, "ChildName").as_deref(), Some("{ \"slot1_1\" }"));
        assert_eq!(text(&ad, "State").as_deref(), Some("\"Claimed\""));
        assert_eq!(text(&ad, "Activity").as_deref(), Some("\"Busy\""));
        p.release(&1);
        let idle = p.advertise(&machine());
        assert_eq!(text(&idle, "State").as_deref(), Some("\"Unclaimed\""));
        assert_eq!(text(&idle, "ChildCpus").as_deref(), Some("{  }"));
        // The owner's state is not the slots' to change.
        let mut owned = machine();
        owned.insert(
            Name::known("State"),
            Expr::from(Value::String("Owner".into())),
        );
        p.carve(2, &Resources::new(1, 128, 1024)).unwrap();
        let ad = p.advertise(&owned);
        assert_eq!(text(&ad, "State").as_deref(), Some("\"Owner\""));
    }

    #[test]
    fn slots_are_named_as_htcondor_names_them() {
        let mut p: Partitionable = Partitionable::new(Resources::new(2, 1024, 4096));
        let a = p.carve([1; 16], &Resources::new(1, 128, 1024)).unwrap();
        let b = p.carve([2; 16], &Resources::new(1, 128, 1024)).unwrap();
        assert_eq!((a.name.as_str(), b.name.as_str()), ("slot1_1", "slot1_2"));
        assert_eq!(slot_name(PARTITIONABLE_SLOT), "slot1");
        assert_eq!(
            p.release(&[1; 16]).map(|s| s.name),
            Some("slot1_1".to_owned())
        );
    }

    /// A machine with four GPUs as the agent advertises it: two of
    /// capability 8.0 with 40 GB, two of 9.0 with 80 GB.
    fn gpu_machine() -> ClassAd {
        parse_ad(
            r#"[Cpus = 16; Memory = 65536; Disk = 1000000; TotalGPUs = 4;
               DetectedGPUs = "GPU-aaaaaaaa, GPU-bbbbbbbb, GPU-cccccccc, GPU-dddddddd";
               GPUs_GPU_aaaaaaaa = [ Id = "GPU-aaaaaaaa"; Capability = 8.0; GlobalMemoryMb = 40536 ];
               GPUs_GPU_bbbbbbbb = [ Id = "GPU-bbbbbbbb"; Capability = 8.0; GlobalMemoryMb = 40536 ];
               GPUs_GPU_cccccccc = [ Id = "GPU-cccccccc"; Capability = 9.0; GlobalMemoryMb = 81559 ];
               GPUs_GPU_dddddddd = [ Id = "GPU-dddddddd"; Capability = 9.0; GlobalMemoryMb = 81559 ]]"#,
        )
        .unwrap()
    }

    #[test]
    fn gpus_are_handed_out_whole_and_never_twice() {
        let mut p: Partitionable<u8> = Partitionable::of_machine(&gpu_machine());
        assert_eq!(p.total().gpus, 4);
        let one = Resources::new(1, 128, 1024).with_gpus(1);
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..4 {
            let slot = p.carve(k, &one).unwrap();
            assert_eq!(slot.gpus.len(), 1);
            assert!(
                seen.insert(slot.gpus[0].clone()),
                "{:?} handed out twice",
                slot.gpus
            );
        }
        let e = p.carve(4, &one).unwrap_err();
        assert!(e.to_string().contains("needs 1 GPUs, 0 free"), "{e}");
        p.release(&1);
        let again = p.carve(5, &one).unwrap();
        assert_eq!(
            again.gpus,
            vec!["GPU-bbbbbbbb".to_owned()],
            "the freed device comes back"
        );
    }

    #[test]
    fn require_gpus_picks_the_devices_that_satisfy_it() {
        let job = parse_ad(
            "[RequestGPUs = 2; GPUsMinCapability = 8.5; RequireGPUs = Capability >= GPUsMinCapability]",
        )
        .unwrap();
        let mut p: Partitionable<u8> = Partitionable::of_machine(&gpu_machine());
        let two = Resources::new(1, 128, 1024).with_gpus(2);
        let fits = |d: &Device| device_fits(&job, d, 0);
        let slot = p.carve_where(1, &two, &fits).unwrap();
        assert_eq!(
            slot.gpus,
            vec!["GPU-cccccccc".to_owned(), "GPU-dddddddd".to_owned()]
        );
        // Two older devices are free, but neither satisfies the job.
        let e = p.carve_where(2, &two, &fits).unwrap_err();
        assert!(e.to_string().contains("satisfy RequireGPUs, 0 free"), "{e}");
        // A job taken on again keeps its very devices.
        p.release(&1);
        let kept = p
            .carve_devices(3, &two, &["GPU-dddddddd".to_owned()])
            .unwrap();
        assert_eq!((kept.gpus.len(), kept.resources.gpus), (1, 1));
        assert!(p
            .carve_devices(4, &two, &["GPU-dddddddd".to_owned()])
            .is_err());
    }

    #[test]
    fn the_advertised_gpus_are_the_free_ones_and_count_matches_sees_them() {
        let mut p: Partitionable<u8> = Partitionable::of_machine(&gpu_machine());
        let job = parse_ad(
            r#"[RequestGPUs = 2; GPUsMinCapability = 9.0; RequireGPUs = Capability >= GPUsMinCapability;
               Requirements = countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs]"#,
        )
        .unwrap();
        let holds = |machine: &ClassAd| {
            let mut ev = Evaluator::with_ads(Some(&job), Some(machine));
            ev.eval_attr(Side::My, Name::known("Requirements").folded())
        };
        let ad = p.advertise(&gpu_machine());
        assert!(matches!(holds(&ad), Value::Bool(true)));
        let text = |ad: &ClassAd, name: &str| ad.get(name).map(unparse);
        assert_eq!(text(&ad, "GPUs").as_deref(), Some("4"));
        assert_eq!(
            text(&ad, "AssignedGPUs").as_deref(),
            Some("\"GPU-aaaaaaaa,GPU-bbbbbbbb,GPU-cccccccc,GPU-dddddddd\"")
        );
        p.carve(1, &Resources::new(1, 128, 1024).with_gpus(3))
            .unwrap();
        let ad = p.advertise(&gpu_machine());
        assert_eq!(text(&ad, "GPUs").as_deref(), Some("1"));
        assert_eq!(text(&ad, "TotalGPUs").as_deref(), Some("4"));
        assert_eq!(
            text(&ad, "AssignedGPUs").as_deref(),
            Some("\"GPU-dddddddd\"")
        );
        assert_eq!(
            text(&ad, "AvailableGPUs").as_deref(),
            Some("{ GPUs_GPU_dddddddd }")
        );
        assert_eq!(text(&ad, "ChildGPUs").as_deref(), Some("{ 3 }"));
        assert_eq!(
            text(&ad, "GPUs_Capability").as_deref(),
            Some("9.000000000000000E+00")
        );
        assert!(
            matches!(holds(&ad), Value::Bool(false)),
            "one fitting device is free, two asked"
        );
        p.carve(2, &Resources::new(1, 128, 1024).with_gpus(1))
            .unwrap();
        let ad = p.advertise(&gpu_machine());
        assert_eq!(text(&ad, "AssignedGPUs"), None);
        assert_eq!(text(&ad, "AvailableGPUs").as_deref(), Some("{  }"));
    }

    #[test]
    fn a_gpu_request_is_read_from_the_job() {
        let job = parse_ad("[RequestGPUs = 2]").unwrap();
        assert_eq!(request_of(&job, &machine(), 0).unwrap().gpus, 2);
        let job = parse_ad("[RequestGPUs = -1]").unwrap();
        assert_eq!(
            request_of(&job, &machine(), 0).unwrap_err().attribute,
            "RequestGPUs"
        );
        let job = parse_ad("[RequestGPUs = 100000]").unwrap();
        assert_eq!(
            request_of(&job, &machine(), 0).unwrap_err().attribute,
            "RequestGPUs"
        );
        assert_eq!(request_of(&ClassAd::new(), &machine(), 0).unwrap().gpus, 0);
    }

    proptest::proptest! {
        #[test]
        fn any_sequence_of_carves_and_releases_stays_within_the_total(
            ops in proptest::collection::vec((0u8..8, 0u32..3, 0u64..600, proptest::bool::ANY), 0..64)
        ) {
            let total = Resources::new(4, 2048, 4096);
            let mut p: Partitionable<u8> = Partitionable::new(total);
            for (key, cpus, mem, release) in ops {
                if release {
                    p.release(&key);
                } else {
                    let _ = p.carve(key, &Resources::new(cpus, mem, 512));
                }
                proptest::prop_assert!(total.fits(&p.used()));
                proptest::prop_assert_eq!(p.used().plus(&p.free()), total);
            }
        }
    }
}
