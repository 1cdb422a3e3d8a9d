//! Which attributes an expression refers to, read from its tree without
//! evaluating it: what autoclusters need to know which job attributes
//! machines look at, and what `why` needs to explain a clause.
//!
//! References are sorted by scope as written: `MY.x` (also `SELF.x`),
//! `TARGET.x`, and bare `x`, which HTCondor resolves in MY first and then,
//! in matchmaking, in TARGET. Names are folded to lower case, the identity
//! ClassAds compare names by. A field of a computed value (`x.y` where `x`
//! is an attribute holding a nested ad) is a reference to `x` only; calls
//! that evaluate text at run time (`eval("...")`) are opaque, as they are to
//! HTCondor's own analysis.

use std::collections::BTreeSet;

use super::ad::ClassAd;
use super::ast::Expr;
use super::limits::MAX_DEPTH;
use super::name::{Name, ScopeNames};

/// The attributes an expression refers to, by scope, in lower case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct References {
    /// `MY.x` and `SELF.x`.
    pub my: BTreeSet<String>,
    /// `TARGET.x`.
    pub target: BTreeSet<String>,
    /// Bare `x` (and `PARENT.x`, `ROOT.x`, `.x`): MY's if MY defines it,
    /// else TARGET's in matchmaking.
    pub unscoped: BTreeSet<String>,
}

impl References {
    /// Whether nothing is referred to.
    pub fn is_empty(&self) -> bool {
        self.my.is_empty() && self.target.is_empty() && self.unscoped.is_empty()
    }

    /// Adds `other`'s references to these.
    pub fn extend(&mut self, other: References) {
        self.my.extend(other.my);
        self.target.extend(other.target);
        self.unscoped.extend(other.unscoped);
    }

    /// The names that may be attributes of the ad evaluated as TARGET:
    /// `TARGET.x`, and bare names the MY ad `my_ad` does not define.
    pub fn of_target(&self, my_ad: &ClassAd) -> BTreeSet<String> {
        self.target
            .iter()
            .chain(self.unscoped.iter().filter(|n| my_ad.get(n).is_none()))
            .cloned()
            .collect()
    }

    /// The names that may be attributes of the MY ad `my_ad`: `MY.x`, and
    /// bare names `my_ad` defines.
    pub fn of_my(&self, my_ad: &ClassAd) -> BTreeSet<String> {
        self.my
            .iter()
            .chain(self.unscoped.iter().filter(|n| my_ad.get(n).is_some()))
            .cloned()
            .collect()
    }
}

/// The attributes `expr` refers to.
pub fn references(expr: &Expr) -> References {
    let mut refs = References::default();
    walk(expr, &mut refs, 0);
    refs
}

/// The attributes that `ad`'s attribute `name` refers to, following the
/// ad's own attributes it uses (`MY.x`, or a bare `x` that `ad` defines)
/// transitively, each once: `Requirements = TARGET.Memory >= RequestMemory`
/// with `RequestMemory = ImageSize / 1024` refers to `target.memory`,
/// `requestmemory` and `imagesize`. Empty when `ad` has no `name`.
pub fn attr_references(ad: &ClassAd, name: &str) -> References {
    let mut all = References::default();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut todo = vec![name.to_ascii_lowercase()];
    // Each attribute of the ad is expanded at most once, so the loop ends
    // after at most `ad.len()` expansions, cycles included.
    while let Some(next) = todo.pop() {
        if !seen.insert(next.clone()) {
            continue;
        }
        let Some(expr) = ad.get(&next) else {
            continue;
        };
        let refs = references(expr);
        for own in refs.my.iter().chain(refs.unscoped.iter()) {
            if !seen.contains(own) && ad.get(own).is_some() {
                todo.push(own.clone());
            }
        }
        all.extend(refs);
    }
    all
}

fn folded(name: Name) -> String {
    name.folded().as_str().to_owned()
}

fn walk(expr: &Expr, refs: &mut References, depth: u32) {
    // Parsed trees are at most MAX_DEPTH deep; a tree built by hand that is
    // deeper is cut off rather than overflowing the stack.
    if depth > MAX_DEPTH * 2 {
        return;
    }
    let scopes = ScopeNames::get();
    let deeper = depth + 1;
    match expr {
        Expr::Literal(_) => {}
        Expr::Attr(r) => {
            if !scopes.contains(r.key) {
                refs.unscoped.insert(folded(r.name));
            }
        }
        Expr::Select(base, r) => match &**base {
            Expr::Attr(b) if !b.absolute && (b.key == scopes.my || b.key == scopes.self_) => {
                refs.my.insert(folded(r.name));
            }
            Expr::Attr(b) if !b.absolute && b.key == scopes.target => {
                refs.target.insert(folded(r.name));
            }
            Expr::Attr(b) if !b.absolute && scopes.contains(b.key) => {
                refs.unscoped.insert(folded(r.name));
            }
            // `x.y`: `y` is a field of x's value, not an attribute.
            other => walk(other, refs, deeper),
        },
        Expr::Index(pair) | Expr::Binary(_, pair) | Expr::Elvis(pair) => {
            walk(&pair[0], refs, deeper);
            walk(&pair[1], refs, deeper);
        }
        Expr::Cond(parts) => parts.iter().for_each(|e| walk(e, refs, deeper)),
        Expr::Unary(_, e) | Expr::Paren(e) => walk(e, refs, deeper),
        Expr::Call(call) => call.args.iter().for_each(|e| walk(e, refs, deeper)),
        Expr::List(items) => items.iter().for_each(|e| walk(e, refs, deeper)),
        // A nested ad's expressions are walked in the enclosing scope, as
        // HTCondor's external-reference walk does.
        Expr::Ad(ad) => ad.iter().for_each(|e| walk(e.expr(), refs, deeper)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parser::{parse_ad, parse_expr};

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn references_are_sorted_by_scope_and_folded() {
        let e = parse_expr(
            "TARGET.Memory >= MY.RequestMemory && Arch == \"X86_64\" \
             && SELF.Owner =!= undefined && ifThenElse(TARGET.HasGPU, Cpus, 1) > 0",
        )
        .unwrap();
        let r = references(&e);
        assert_eq!(r.target, set(&["hasgpu", "memory"]));
        assert_eq!(r.my, set(&["owner", "requestmemory"]));
        assert_eq!(r.unscoped, set(&["arch", "cpus"]));
    }

    #[test]
    fn fields_of_nested_values_and_literals_are_not_attributes() {
        let e = parse_expr("Config.Limit > 3 && TARGET.Info.Speed > 1 && {1, x}[0] == 1").unwrap();
        let r = references(&e);
        assert_eq!(r.unscoped, set(&["config", "x"]));
        assert_eq!(r.target, set(&["info"]));
        assert!(references(&parse_expr("1 + 2 == \"three\"").unwrap()).is_empty());
    }

    #[test]
    fn attr_references_follow_the_ads_own_attributes_through_cycles() {
        let ad = parse_ad(
            "[Requirements = TARGET.Memory >= RequestMemory && Loop; \
              RequestMemory = ImageSize / 1024 + MY.Extra; Extra = TARGET.Disk; \
              ImageSize = 4096; Loop = Loop2; Loop2 = Loop]",
        )
        .unwrap();
        let r = attr_references(&ad, "requirements");
        assert_eq!(r.target, set(&["disk", "memory"]));
        assert_eq!(r.my, set(&["extra"]));
        assert_eq!(
            r.unscoped,
            set(&["imagesize", "loop", "loop2", "requestmemory"])
        );
        assert!(attr_references(&ad, "Rank").is_empty());
    }

    #[test]
    fn target_names_are_what_the_other_ad_may_define() {
        let machine = parse_ad("[Memory = 1; START = Memory > 0 && Owner == \"x\"]").unwrap();
        let r = attr_references(&machine, "START");
        assert_eq!(r.of_target(&machine), set(&["owner"]));
        assert_eq!(r.of_my(&machine), set(&["memory"]));
    }

    proptest::proptest! {
        #[test]
        fn every_referenced_name_appears_in_the_text(
            names in proptest::collection::vec("[a-z][a-z0-9_]{0,6}", 1..6),
            scopes in proptest::collection::vec(0u8..3, 6),
        ) {
            let text = names
                .iter()
                .zip(scopes.iter())
                .map(|(n, s)| match s {
                    0 => format!("MY.{n}_"),
                    1 => format!("TARGET.{n}_"),
                    _ => format!("{n}_"),
                })
                .collect::<Vec<_>>()
                .join(" + ");
            let r = references(&parse_expr(&text).unwrap());
            let total = r.my.len() + r.target.len() + r.unscoped.len();
            proptest::prop_assert!(total >= 1 && total <= names.len());
            for n in r.my.iter().chain(&r.target).chain(&r.unscoped) {
                proptest::prop_assert!(text.to_ascii_lowercase().contains(n.as_str()));
            }
        }
    }
}
