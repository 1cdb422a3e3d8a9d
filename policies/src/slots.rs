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

/// Cpus, memory in MiB and disk in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    pub cpus: u32,
    pub memory_mib: u64,
    pub disk_kib: u64,
}

impl Resources {
    pub fn new(cpus: u32, memory_mib: u64, disk_kib: u64) -> Resources {
        Resources {
            cpus,
            memory_mib,
            disk_kib,
        }
    }

    /// Whether `want` fits in `self`.
    pub fn fits(&self, want: &Resources) -> bool {
        want.cpus <= self.cpus
            && want.memory_mib <= self.memory_mib
            && want.disk_kib <= self.disk_kib
    }

    pub fn plus(&self, other: &Resources) -> Resources {
        Resources {
            cpus: self.cpus.saturating_add(other.cpus),
            memory_mib: self.memory_mib.saturating_add(other.memory_mib),
            disk_kib: self.disk_kib.saturating_add(other.disk_kib),
        }
    }

    pub fn minus(&self, other: &Resources) -> Resources {
        Resources {
            cpus: self.cpus.saturating_sub(other.cpus),
            memory_mib: self.memory_mib.saturating_sub(other.memory_mib),
            disk_kib: self.disk_kib.saturating_sub(other.disk_kib),
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
        (!missing.is_empty()).then(|| missing.join("; "))
    }

    /// A machine's totals from its ad: `TotalCpus`, `TotalMemory`,
    /// `TotalDisk`, else `Cpus`, `Memory`, `Disk`; missing ones are zero.
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
        }
    }
}

impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cpus, {} MiB memory, {} KiB disk",
            self.cpus, self.memory_mib, self.disk_kib
        )
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
/// [`MEMORY_QUANTUM_MIB`]) and `RequestDisk` (KiB, default
/// [`DISK_QUANTUM_KIB`]), evaluated with the machine as `TARGET` at `now`
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
    Ok(Resources {
        cpus: u32::try_from(cpus.max(1)).map_err(|_| RequestError {
            attribute: "RequestCpus",
            problem: format!("{cpus} is more than any machine has"),
        })?,
        memory_mib: round_up(memory.max(1), MEMORY_QUANTUM_MIB),
        disk_kib: round_up(disk.max(1), DISK_QUANTUM_KIB),
    })
}

fn round_up(n: u64, quantum: u64) -> u64 {
    n.div_ceil(quantum).saturating_mul(quantum)
}

/// The number of the machine's one partitionable slot: `slot1`.
pub const PARTITIONABLE_SLOT: u32 = 1;

/// A claim's share of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicSlot {
    /// `n` of `slot1_n`, unique while the machine runs.
    pub id: u32,
    /// HTCondor's name for it: `slot1_n`.
    pub name: String,
    pub resources: Resources,
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
    slots: BTreeMap<K, DynamicSlot>,
    next_id: u32,
}

impl<K: Ord + Clone> Partitionable<K> {
    pub fn new(total: Resources) -> Partitionable<K> {
        Partitionable {
            total,
            slots: BTreeMap::new(),
            next_id: 1,
        }
    }

    pub fn total(&self) -> Resources {
        self.total
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

    /// Carves `want` for `key`; never more than is free.
    pub fn carve(&mut self, key: K, want: &Resources) -> Result<DynamicSlot, SlotError> {
        if self.slots.contains_key(&key) {
            return Err(SlotError::AlreadyCarved);
        }
        if let Some(short) = self.free().shortfall(want) {
            return Err(SlotError::DoesNotFit(short));
        }
        let slot = DynamicSlot {
            id: self.next_id,
            name: dynamic_name(PARTITIONABLE_SLOT, self.next_id),
            resources: *want,
        };
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.slots.insert(key, slot.clone());
        Ok(slot)
    }

    /// Gives `key`'s slot back.
    pub fn release(&mut self, key: &K) -> Option<DynamicSlot> {
        self.slots.remove(key)
    }

    /// The machine ad as it should be advertised: a copy of `machine` with
    ///
    /// - `Cpus`, `Memory`, `Disk`: what is free;
    /// - `TotalCpus`, `TotalMemory`, `TotalDisk`: the machine's totals;
    /// - `PartitionableSlot = true`, `SlotType = "Partitionable"`,
    ///   `NumDynamicSlots`;
    /// - `ChildName`, `ChildCpus`, `ChildMemory`, `ChildDisk`: lists with one
    ///   item per dynamic slot, in claim order, as HTCondor advertises them;
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
