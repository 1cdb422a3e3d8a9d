//! OurGrid's network of favours between domains: who we owe, and how much.
//!
//! A favour is slot time one domain lends another. Each execute agent
//! records the slot-seconds it gave to each foreign domain's jobs; each
//! submit agent records the slot-seconds foreign machines gave its jobs.
//! A domain's [`Ledger`] is the sum of its agents' records ([`Ledger::merge`]
//! each agent's own ledger once), and the balance of a foreign domain is
//! what we owe it: `max(0, received − given)`. Balances order who gets a
//! machine when several domains wait (see [`crate::arbitration`]).
//!
//! OurGrid keeps one balance per peer and clamps it at zero on every
//! favour given (`balance = max(0, balance − given)`), so that no peer can
//! run a debt: a free rider that changes identity starts at zero like a
//! newcomer, and a negative balance would only punish honest newcomers.
//! Clamping each step makes the balance depend on the order favours
//! happened in (give 10 then receive 10 leaves 10; receive then give
//! leaves 0), and the agents of one domain see records in different
//! orders. This ledger keeps totals instead and clamps once, when the
//! balance is read: the same records give every agent the same balance.
//! It keeps OurGrid's guarantee (a fresh identity's balance is 0, never
//! less, never more) and differs only in that a domain which took more
//! than it gave must make that up before we owe it anything — the net of
//! all favours, not of the recent ones.
//!
//! Amounts are kept as whole milli-slot-seconds, so that sums are exact and
//! merging is associative and commutative: every agent merging the same
//! ledgers gets bit-identical balances in any order.

use std::collections::BTreeMap;

/// Milli-slot-seconds per slot-second.
const SCALE: f64 = 1000.0;

/// Favours given to and received from each foreign domain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Slot time we lent each domain, in milli-slot-seconds.
    given: BTreeMap<String, u64>,
    /// Slot time each domain lent us, in milli-slot-seconds.
    received: BTreeMap<String, u64>,
}

impl Ledger {
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// We lent `domain` `slot_seconds` (slot weight × seconds). Amounts that
    /// are not positive finite numbers are no favour and are not recorded.
    pub fn record_given(&mut self, domain: &str, slot_seconds: f64) {
        add(&mut self.given, domain, slot_seconds);
    }

    /// `domain` lent us `slot_seconds`. As for [`Ledger::record_given`],
    /// only positive finite amounts count.
    pub fn record_received(&mut self, domain: &str, slot_seconds: f64) {
        add(&mut self.received, domain, slot_seconds);
    }

    /// Slot-seconds we lent `domain` in all.
    pub fn given(&self, domain: &str) -> f64 {
        slot_seconds(&self.given, domain)
    }

    /// Slot-seconds `domain` lent us in all.
    pub fn received(&self, domain: &str) -> f64 {
        slot_seconds(&self.received, domain)
    }

    /// What we owe `domain` in slot-seconds: `max(0, received − given)`.
    /// A domain never seen has balance 0.
    pub fn balance(&self, domain: &str) -> f64 {
        let received = self.received.get(domain).copied().unwrap_or(0);
        let given = self.given.get(domain).copied().unwrap_or(0);
        received.saturating_sub(given) as f64 / SCALE
    }

    /// Adds `other`'s records to these. Merging an agent's ledger twice
    /// counts its favours twice: callers build a domain's ledger by merging
    /// each agent's own records once into a fresh one.
    pub fn merge(&mut self, other: &Ledger) {
        for (domain, amount) in &other.given {
            add_scaled(&mut self.given, domain, *amount);
        }
        for (domain, amount) in &other.received {
            add_scaled(&mut self.received, domain, *amount);
        }
    }

    /// Every domain with a record, in name order.
    pub fn domains(&self) -> impl Iterator<Item = &str> {
        let mut all: Vec<&str> = self
            .given
            .keys()
            .chain(self.received.keys())
            .map(String::as_str)
            .collect();
        all.sort_unstable();
        all.dedup();
        all.into_iter()
    }
}

fn add(book: &mut BTreeMap<String, u64>, domain: &str, slot_seconds: f64) {
    if !(slot_seconds.is_finite() && slot_seconds > 0.0) {
        return;
    }
    // `as` saturates: an absurd amount is the largest, never a wrap.
    add_scaled(book, domain, (slot_seconds * SCALE).round() as u64);
}

fn add_scaled(book: &mut BTreeMap<String, u64>, domain: &str, amount: u64) {
    if amount == 0 {
        return;
    }
    let total = book.entry(domain.to_owned()).or_insert(0);
    *total = total.saturating_add(amount);
}

fn slot_seconds(book: &BTreeMap<String, u64>, domain: &str) -> f64 {
    book.get(domain).copied().unwrap_or(0) as f64 / SCALE
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn balance_is_what_we_owe_and_never_negative() {
        let mut l = Ledger::new();
        assert_eq!(l.balance("newcomer"), 0.0);
        l.record_received("d1", 100.0);
        l.record_given("d1", 30.0);
        assert_eq!(l.balance("d1"), 70.0);
        l.record_given("d2", 500.0);
        l.record_received("d2", 100.0);
        assert_eq!(l.balance("d2"), 0.0, "d2 owes us; we owe it nothing");
        assert_eq!((l.given("d2"), l.received("d2")), (500.0, 100.0));
    }

    #[test]
    fn order_of_favours_does_not_matter() {
        // OurGrid's per-step clamp would give 10 one way and 0 the other.
        let mut a = Ledger::new();
        a.record_given("d1", 10.0);
        a.record_received("d1", 10.0);
        let mut b = Ledger::new();
        b.record_received("d1", 10.0);
        b.record_given("d1", 10.0);
        assert_eq!(a, b);
        assert_eq!(a.balance("d1"), 0.0);
    }

    #[test]
    fn bogus_amounts_are_no_favour() {
        let mut l = Ledger::new();
        for bad in [-5.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            l.record_received("d1", bad);
            l.record_given("d1", bad);
        }
        assert_eq!(l, Ledger::new());
    }

    #[test]
    fn merge_sums_every_agents_records() {
        let mut a = Ledger::new();
        a.record_received("d1", 40.0);
        let mut b = Ledger::new();
        b.record_received("d1", 2.5);
        b.record_given("d2", 1.0);
        let mut domain = Ledger::new();
        domain.merge(&a);
        domain.merge(&b);
        assert_eq!(domain.balance("d1"), 42.5);
        assert_eq!(domain.given("d2"), 1.0);
        assert_eq!(domain.domains().collect::<Vec<_>>(), ["d1", "d2"]);
    }

    fn ledger() -> impl Strategy<Value = Ledger> {
        proptest::collection::vec((0usize..3, any::<bool>(), 0.0f64..1e7), 0..8).prop_map(|rs| {
            let mut l = Ledger::new();
            for (d, given, amount) in rs {
                let domain = ["a", "b", "c"][d];
                if given {
                    l.record_given(domain, amount);
                } else {
                    l.record_received(domain, amount);
                }
            }
            l
        })
    }

    proptest! {
        #[test]
        fn merge_order_does_not_matter(parts in proptest::collection::vec(ledger(), 1..6)) {
            let mut forward = Ledger::new();
            parts.iter().for_each(|p| forward.merge(p));
            let mut backward = Ledger::new();
            parts.iter().rev().for_each(|p| backward.merge(p));
            prop_assert_eq!(&forward, &backward);
            for d in ["a", "b", "c"] {
                prop_assert!(forward.balance(d) >= 0.0);
            }
        }
    }
}
