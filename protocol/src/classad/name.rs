//! Attribute names, interned.
//!
//! ClassAd attribute names are case-insensitive but case-preserving, and the
//! same few hundred names (`Requirements`, `Memory`, `Cpus`…) appear in every
//! one of a pool's ads. Interning them makes an attribute entry four bytes and
//! makes lookup a comparison of integers instead of a case-folding string
//! comparison: the two things that matter when matching a job against a
//! million machine ads.
//!
//! The interner is process-global and append-only. It holds at most
//! [`MAX_NAMES`] distinct spellings; past that, parsing fails with a clear
//! error instead of growing without bound when a hostile peer sends ads full
//! of made-up names.

use std::collections::HashMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

/// The most distinct attribute-name spellings one process will intern.
pub const MAX_NAMES: usize = 1 << 22;

/// The longest attribute name accepted, in bytes.
pub const MAX_NAME_LEN: usize = 1024;

/// An interned attribute name. Equality is exact (case-sensitive) spelling;
/// use [`Name::folded`] to compare the way ClassAds do.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(u32);

/// A case-folded name: the key under which ClassAds look attributes up.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Folded(u32);

struct Interner {
    by_text: HashMap<&'static str, u32>,
    text: Vec<&'static str>,
    folded: Vec<u32>,
}

fn interner() -> &'static RwLock<Interner> {
    static INTERNER: OnceLock<RwLock<Interner>> = OnceLock::new();
    INTERNER.get_or_init(|| {
        RwLock::new(Interner {
            by_text: HashMap::new(),
            text: Vec::new(),
            folded: Vec::new(),
        })
    })
}

/// Why a name could not be interned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("attribute name is longer than {MAX_NAME_LEN} bytes")]
    TooLong,
    #[error("more than {MAX_NAMES} distinct attribute names in this process")]
    TooMany,
}

impl Interner {
    fn insert(&mut self, text: &str) -> Result<u32, NameError> {
        if let Some(&id) = self.by_text.get(text) {
            return Ok(id);
        }
        if self.text.len() >= MAX_NAMES {
            return Err(NameError::TooMany);
        }
        let lower = text.to_ascii_lowercase();
        let folded = if lower == text {
            self.text.len() as u32
        } else {
            self.insert(&lower)?
        };
        let id = self.text.len() as u32;
        // Leaked on purpose: names live as long as the process and the table
        // is capped, so this is a bounded arena rather than a leak.
        let stored: &'static str = Box::leak(text.to_owned().into_boxed_str());
        self.by_text.insert(stored, id);
        self.text.push(stored);
        self.folded.push(folded);
        Ok(id)
    }
}

/// Most names one thread's cache remembers before starting over.
const CACHE_LIMIT: usize = 1 << 16;

thread_local! {
    /// Recently interned names with their folded form, so parsing the same
    /// names ad after ad takes neither the interner's lock nor a SipHash.
    static CACHE: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, (Name, Folded)>> =
        std::cell::RefCell::new(rustc_hash::FxHashMap::default());
}

impl Name {
    /// Interns `text` and returns it with its folded form, through a
    /// per-thread cache: the parsers' fast path.
    pub fn intern(text: &str) -> Result<(Name, Folded), NameError> {
        if let Some(hit) = CACHE.with(|c| c.borrow().get(text).copied()) {
            return Ok(hit);
        }
        let name = Name::new(text)?;
        let pair = (name, name.folded());
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() >= CACHE_LIMIT {
                c.clear();
            }
            c.insert(text.into(), pair);
        });
        Ok(pair)
    }

    /// Interns `text`, keeping its spelling.
    pub fn new(text: &str) -> Result<Name, NameError> {
        if text.len() > MAX_NAME_LEN {
            return Err(NameError::TooLong);
        }
        if let Some(&id) = interner()
            .read()
            .expect("interner poisoned")
            .by_text
            .get(text)
        {
            return Ok(Name(id));
        }
        interner()
            .write()
            .expect("interner poisoned")
            .insert(text)
            .map(Name)
    }

    /// Interns a name known to be short and valid (built-in attribute names).
    pub fn known(text: &str) -> Name {
        Name::new(text).expect("built-in attribute name")
    }

    /// The spelling this name was written with.
    pub fn as_str(self) -> &'static str {
        interner().read().expect("interner poisoned").text[self.0 as usize]
    }

    /// The case-insensitive identity of this name.
    pub fn folded(self) -> Folded {
        Folded(interner().read().expect("interner poisoned").folded[self.0 as usize])
    }

    /// Case-insensitive equality, as ClassAds compare names.
    pub fn same_as(self, other: Name) -> bool {
        self == other || self.folded() == other.folded()
    }
}

/// The names that denote scopes when no attribute has them, interned once so
/// the evaluator compares integers instead of taking the interner's lock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScopeNames {
    pub(crate) my: Folded,
    pub(crate) self_: Folded,
    pub(crate) target: Folded,
    pub(crate) parent: Folded,
    pub(crate) root: Folded,
    pub(crate) toplevel: Folded,
}

impl ScopeNames {
    pub(crate) fn get() -> &'static ScopeNames {
        static NAMES: OnceLock<ScopeNames> = OnceLock::new();
        NAMES.get_or_init(|| {
            let f = |s: &str| Name::known(s).folded();
            ScopeNames {
                my: f("my"),
                self_: f("self"),
                target: f("target"),
                parent: f("parent"),
                root: f("root"),
                toplevel: f("toplevel"),
            }
        })
    }

    /// Whether `key` is one of the scope names.
    pub(crate) fn contains(&self, key: Folded) -> bool {
        key == self.my
            || key == self.self_
            || key == self.target
            || key == self.parent
            || key == self.root
            || key == self.toplevel
    }
}

impl Folded {
    /// The interned id, for hashing.
    #[inline]
    pub(crate) fn id(self) -> u32 {
        self.0
    }

    /// The lower-case spelling.
    pub fn as_str(self) -> &'static str {
        Name(self.0).as_str()
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_is_kept_and_case_folds() {
        let a = Name::new("RequestCpus").unwrap();
        let b = Name::new("requestcpus").unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_str(), "RequestCpus");
        assert!(a.same_as(b));
        assert_eq!(a.folded(), b.folded());
        assert_eq!(a.folded().as_str(), "requestcpus");
    }

    #[test]
    fn overlong_names_are_refused() {
        assert_eq!(
            Name::new(&"x".repeat(MAX_NAME_LEN + 1)),
            Err(NameError::TooLong)
        );
    }
}
