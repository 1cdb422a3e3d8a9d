//! The ClassAd: a case-insensitive, order-preserving map from attribute names
//! to expressions.
//!
//! Attributes keep the order they were inserted in (so printing an ad shows it
//! as written). Lookup, the innermost step of matching, goes through a small
//! open-addressing table keyed by the interned, case-folded name: one or two
//! probes, no string comparison. Expressions are shared (`Arc`), so ads read
//! from a stream can share the identical `START` or `Requirements` that every
//! machine of a pool advertises, as HTCondor's collector does.

use std::sync::Arc;

use super::ast::Expr;
use super::name::{Folded, Name, ScopeNames};

/// One attribute of an ad.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: Name,
    pub key: Folded,
    value: Slot,
}

/// An attribute's expression: kept in the entry (most attributes are small
/// literals), or shared with other ads.
#[derive(Clone, Debug)]
enum Slot {
    Inline(Expr),
    Shared(Arc<Expr>),
}

impl Entry {
    /// The attribute's expression.
    #[inline]
    pub fn expr(&self) -> &Expr {
        match &self.value {
            Slot::Inline(e) => e,
            Slot::Shared(e) => e,
        }
    }
}

/// An empty slot in the lookup table.
const EMPTY: u64 = u64::MAX;

/// A table slot: the folded name's id (high half) and the position in
/// `entries` (low half), so a probe never touches an entry that is not the
/// one sought.
#[inline]
fn slot_value(key: Folded, pos: usize) -> u64 {
    (u64::from(key.id()) << 32) | pos as u64
}

/// A classified advertisement.
#[derive(Clone, Debug, Default)]
pub struct ClassAd {
    entries: Vec<Entry>,
    /// Open addressing, linear probing: see [`slot_value`], or `EMPTY`. Its
    /// length is a power of two at least twice the number of entries (or zero
    /// for an empty ad).
    table: Vec<u64>,
    /// Whether some attribute is named like a scope (`MY`, `TARGET`…), which
    /// then shadows the scope. Almost never; knowing it lets the evaluator
    /// skip the check.
    shadows_scopes: bool,
}

#[inline]
fn slot_of(key: Folded, mask: usize) -> usize {
    // Fibonacci hashing of the interned id.
    ((key.id().wrapping_mul(0x9E37_79B9)) >> 7) as usize & mask
}

impl ClassAd {
    pub fn new() -> ClassAd {
        ClassAd::default()
    }

    pub fn with_capacity(n: usize) -> ClassAd {
        let mut ad = ClassAd {
            entries: Vec::with_capacity(n),
            table: Vec::new(),
            shadows_scopes: false,
        };
        ad.rebuild_table((2 * n).next_power_of_two().max(8));
        ad
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn rebuild_table(&mut self, size: usize) {
        self.table.clear();
        self.table.resize(size, EMPTY);
        let mask = size - 1;
        for (pos, e) in self.entries.iter().enumerate() {
            let mut i = slot_of(e.key, mask);
            while self.table[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.table[i] = slot_value(e.key, pos);
        }
    }

    /// The table slot holding `key`, or the empty slot where it would go.
    #[inline]
    fn probe(&self, key: Folded) -> Result<usize, usize> {
        let mask = self.table.len() - 1;
        let mut i = slot_of(key, mask);
        let id = u64::from(key.id());
        loop {
            match self.table[i] {
                EMPTY => return Err(i),
                slot if slot >> 32 == id => return Ok(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    #[inline]
    fn position(&self, slot: usize) -> usize {
        (self.table[slot] & 0xFFFF_FFFF) as usize
    }

    /// Gives back the room kept for attributes not added yet, and lets the
    /// hash table fill to three quarters (it grows at one half, so that
    /// inserting stays cheap): an ad held for long, as a view holds
    /// thousands, takes half the table. Probes stay within a cache line or
    /// two either way.
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        let size = (4 * self.entries.len() / 3 + 1).next_power_of_two().max(8);
        if size < self.table.len() {
            self.rebuild_table(size);
            self.table.shrink_to_fit();
        }
    }

    /// Inserts or replaces an attribute. A replaced attribute keeps its place
    /// but takes the new spelling.
    pub fn insert(&mut self, name: Name, expr: Expr) {
        let key = name.folded();
        self.insert_slot(name, key, Slot::Inline(expr));
    }

    /// Inserts an expression that may be shared with other ads.
    pub fn insert_shared(&mut self, name: Name, expr: Arc<Expr>) {
        let key = name.folded();
        self.insert_slot(name, key, Slot::Shared(expr));
    }

    /// Inserts with the folded name already known (the readers' fast path).
    pub(crate) fn insert_keyed(&mut self, name: Name, key: Folded, expr: Expr) {
        self.insert_slot(name, key, Slot::Inline(expr));
    }

    /// [`Self::insert_shared`] with the folded name already known.
    pub(crate) fn insert_keyed_shared(&mut self, name: Name, key: Folded, expr: Arc<Expr>) {
        self.insert_slot(name, key, Slot::Shared(expr));
    }

    fn insert_slot(&mut self, name: Name, key: Folded, value: Slot) {
        if self.table.len() < 2 * (self.entries.len() + 1) {
            self.rebuild_table((2 * (self.entries.len() + 1)).next_power_of_two().max(8));
        }
        match self.probe(key) {
            Ok(slot) => {
                let pos = self.position(slot);
                self.entries[pos] = Entry { name, key, value };
            }
            Err(slot) => {
                self.shadows_scopes |= ScopeNames::get().contains(key);
                self.table[slot] = slot_value(key, self.entries.len());
                self.entries.push(Entry { name, key, value });
            }
        }
    }

    /// Inserts by name text; fails only for a name the interner refuses.
    pub fn insert_str(
        &mut self,
        name: &str,
        expr: impl Into<Expr>,
    ) -> Result<(), super::name::NameError> {
        self.insert(Name::new(name)?, expr.into());
        Ok(())
    }

    /// Removes an attribute, returning its expression.
    pub fn remove(&mut self, name: Name) -> Option<Expr> {
        if self.entries.is_empty() {
            return None;
        }
        let slot = self.probe(name.folded()).ok()?;
        let pos = self.position(slot);
        let entry = self.entries.remove(pos);
        let size = self.table.len();
        self.rebuild_table(size);
        Some(match entry.value {
            Slot::Inline(e) => e,
            Slot::Shared(e) => Arc::unwrap_or_clone(e),
        })
    }

    /// Whether an attribute is named `MY`, `TARGET`, `PARENT`, `SELF`, `ROOT`
    /// or `TOPLEVEL`.
    pub(crate) fn shadows_scopes(&self) -> bool {
        self.shadows_scopes
    }

    /// Looks an attribute up by folded name.
    #[inline]
    pub fn get_folded(&self, key: Folded) -> Option<&Expr> {
        if self.entries.is_empty() {
            return None;
        }
        let slot = self.probe(key).ok()?;
        Some(self.entries[self.position(slot)].expr())
    }

    /// Looks an attribute up, ignoring case.
    pub fn get(&self, name: &str) -> Option<&Expr> {
        let name = Name::new(name).ok()?;
        self.get_folded(name.folded())
    }

    /// The attribute with this name, with its spelling.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        if self.entries.is_empty() {
            return None;
        }
        let slot = self.probe(Name::new(name).ok()?.folded()).ok()?;
        Some(&self.entries[self.position(slot)])
    }

    /// Attributes in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Entry> {
        self.entries.iter()
    }

    /// Same attributes (names ignoring case) with structurally equal
    /// expressions.
    pub fn same_as(&self, other: &ClassAd) -> bool {
        self.len() == other.len()
            && self.entries.iter().all(|e| {
                other
                    .get_folded(e.key)
                    .is_some_and(|o| std::ptr::eq(e.expr(), o) || e.expr().same_as(o))
            })
    }

    /// Copies every attribute of `other` into this ad, replacing ones with the
    /// same name.
    pub fn update(&mut self, other: &ClassAd) {
        for e in other.iter() {
            self.insert_slot(e.name, e.key, e.value.clone());
        }
    }

    /// Shares this ad for use inside an expression or value.
    pub fn into_shared(self) -> Arc<ClassAd> {
        Arc::new(self)
    }
}

impl<'a> IntoIterator for &'a ClassAd {
    type Item = &'a Entry;
    type IntoIter = std::slice::Iter<'a, Entry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::{parse_ad, Value};

    #[test]
    fn a_shrunk_ad_finds_every_attribute_misses_others_and_grows_again() {
        for n in 0..200 {
            let text: String = (0..n).map(|i| format!("A{i} = {i}; ")).collect();
            let mut ad = parse_ad(&format!("[ {text} ]")).unwrap();
            // Parsing shrinks: the table is at most three quarters full.
            assert!(ad.table.len() * 3 >= ad.len() * 4, "{n} attributes");
            for i in 0..n {
                assert!(ad.get(&format!("a{i}")).is_some(), "A{i} of {n}");
            }
            assert!(ad.get("Missing").is_none());
            ad.insert(Name::known("Extra"), Expr::from(Value::Int(1)));
            ad.insert(Name::known("A0"), Expr::from(Value::Int(7)));
            assert_eq!(ad.len(), n + 1 + usize::from(n == 0));
            assert!(ad.get("extra").is_some() && ad.get("a0").is_some());
        }
    }
}
