//! The ClassAd: a case-insensitive, order-preserving map from attribute names
//! to expressions.

use std::sync::Arc;

use super::ast::Expr;
use super::name::{Folded, Name, ScopeNames};

/// One attribute of an ad.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: Name,
    pub expr: Expr,
}

/// A classified advertisement.
///
/// Attributes keep the order they were inserted in (so printing an ad shows
/// it as written); lookup is by case-folded name through a sorted index.
#[derive(Clone, Debug, Default)]
pub struct ClassAd {
    entries: Vec<Entry>,
    /// Folded name and position in `entries`, sorted by name.
    index: Vec<(Folded, u32)>,
    /// Whether some attribute is named like a scope (`MY`, `TARGET`…), which
    /// then shadows the scope. Almost never; knowing it lets the evaluator
    /// skip the check.
    shadows_scopes: bool,
}

impl ClassAd {
    pub fn new() -> ClassAd {
        ClassAd::default()
    }

    pub fn with_capacity(n: usize) -> ClassAd {
        ClassAd {
            entries: Vec::with_capacity(n),
            index: Vec::with_capacity(n),
            shadows_scopes: false,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Inserts or replaces an attribute. A replaced attribute keeps its place
    /// but takes the new spelling.
    pub fn insert(&mut self, name: Name, expr: Expr) {
        let key = name.folded();
        self.shadows_scopes |= ScopeNames::get().contains(key);
        match self.index.binary_search_by_key(&key, |&(k, _)| k) {
            Ok(i) => {
                let pos = self.index[i].1 as usize;
                self.entries[pos] = Entry { name, expr };
            }
            Err(i) => {
                self.index.insert(i, (key, self.entries.len() as u32));
                self.entries.push(Entry { name, expr });
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
        let key = name.folded();
        let i = self.index.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        let (_, pos) = self.index.remove(i);
        let entry = self.entries.remove(pos as usize);
        for (_, p) in self.index.iter_mut() {
            if *p > pos {
                *p -= 1;
            }
        }
        Some(entry.expr)
    }

    /// Whether an attribute is named `MY`, `TARGET`, `PARENT`, `SELF`, `ROOT`
    /// or `TOPLEVEL`.
    pub(crate) fn shadows_scopes(&self) -> bool {
        self.shadows_scopes
    }

    /// Looks an attribute up by folded name.
    #[inline]
    pub fn get_folded(&self, key: Folded) -> Option<&Expr> {
        let i = self.index.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        Some(&self.entries[self.index[i].1 as usize].expr)
    }

    /// Looks an attribute up, ignoring case.
    pub fn get(&self, name: &str) -> Option<&Expr> {
        let name = Name::new(name).ok()?;
        self.get_folded(name.folded())
    }

    /// The attribute with this name, with its spelling.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        let key = Name::new(name).ok()?.folded();
        let i = self.index.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        Some(&self.entries[self.index[i].1 as usize])
    }

    /// Attributes in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Entry> {
        self.entries.iter()
    }

    /// Same attributes (names ignoring case) with structurally equal
    /// expressions.
    pub fn same_as(&self, other: &ClassAd) -> bool {
        self.len() == other.len()
            && self
                .index
                .iter()
                .zip(other.index.iter())
                .all(|(&(k1, p1), &(k2, p2))| {
                    k1 == k2
                        && self.entries[p1 as usize]
                            .expr
                            .same_as(&other.entries[p2 as usize].expr)
                })
    }

    /// Copies every attribute of `other` into this ad, replacing ones with the
    /// same name.
    pub fn update(&mut self, other: &ClassAd) {
        for e in other.iter() {
            self.insert(e.name, e.expr.clone());
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
