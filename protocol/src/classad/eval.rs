//! The evaluator: expressions to values, with HTCondor's semantics.
//!
//! An [`Evaluator`] holds up to two top-level ads, MY and TARGET, and
//! evaluates expressions in the scope of one of them. Name resolution follows
//! HTCondor's ClassAd library:
//!
//! - `name` is looked up in the current ad, then in each enclosing (lexical
//!   parent) ad. In [`Mode::Compat`] (HTCondor's daemons, the default) a name
//!   not found in a top-level ad is then looked up in the other top-level ad,
//!   so `Memory > 10` in a job's `Requirements` sees the machine's `Memory`;
//!   in [`Mode::Strict`] (HTCondor's library as the Python `classad2` module
//!   uses it) it is undefined. If nothing defines the name, the special names
//!   `MY`/`SELF`, `TARGET`, `PARENT`, `ROOT`/`TOPLEVEL` name those ads.
//! - `.name` is looked up from the top-level ad of the current side.
//! - `base.name` evaluates `base`; for an ad it looks `name` up there (and in
//!   its parents), for a list of ads it gives the list of each ad's value.
//! - An attribute that refers back to itself while it is being evaluated
//!   yields `undefined`, as in HTCondor.
//!
//! Work is bounded: every node visited costs a step from a budget, and
//! attribute and `eval` recursion is limited in depth; running out yields
//! `error`, never a hang or a stack overflow.

use std::borrow::Cow;
use std::sync::Arc;

use super::ad::ClassAd;
use super::ast::{AttrRef, BinaryOp, Expr};
use super::limits::{DEFAULT_STEP_BUDGET, MAX_EVAL_DEPTH};
use super::name::{Folded, ScopeNames};
use super::operators;
use super::value::{AdValue, Parent, Value};

/// Which of the two top-level ads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    My,
    Target,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::My => Side::Target,
            Side::Target => Side::My,
        }
    }
}

/// How unqualified names resolve past the top-level ad.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// HTCondor's daemons (`STRICT_CLASSAD_EVALUATION = false`): MY, then
    /// TARGET.
    #[default]
    Compat,
    /// HTCondor's ClassAd library by default: MY only.
    Strict,
}

/// A built-in function: called with the unevaluated arguments, so that
/// functions like `ifThenElse` and `unparse` control evaluation themselves.
pub type Builtin = fn(&mut Evaluator<'_>, Ctx<'_>, &[Expr]) -> Value;

/// The scope an expression is being evaluated in.
#[derive(Clone, Copy, Debug)]
pub struct Ctx<'c> {
    scope: Scope<'c>,
    side: Side,
}

#[derive(Clone, Copy, Debug)]
enum Scope<'c> {
    /// No ad at all (a free-standing expression).
    None,
    /// One of the evaluator's top-level ads.
    Top(Side),
    /// A nested ad value.
    Nested(&'c Arc<AdValue>),
}

impl<'c> Ctx<'c> {
    /// The context of the top-level ad on `side`.
    pub fn top(side: Side) -> Ctx<'static> {
        Ctx {
            scope: Scope::Top(side),
            side,
        }
    }

    /// Which top-level ad is MY here.
    pub fn side(&self) -> Side {
        self.side
    }

    /// The context inside a nested ad value.
    pub fn inside(self, ad: &'c Arc<AdValue>) -> Ctx<'c> {
        Ctx {
            scope: Scope::Nested(ad),
            side: self.side,
        }
    }
}

/// Evaluates expressions against up to two ads.
///
/// Cheap to make, and cheaper to reuse ([`Evaluator::set_ads`]). It stays on
/// the thread that made it: it knows that thread's stack, and grows onto a
/// fresh segment rather than overflow it.
pub struct Evaluator<'a> {
    my: Option<&'a ClassAd>,
    target: Option<&'a ClassAd>,
    mode: Mode,
    steps_left: u64,
    budget: u64,
    depth: u32,
    /// Attributes being evaluated right now (ad identity, name), to detect
    /// self-reference.
    in_progress: InProgress,
    /// Seconds since the epoch, for `time()` and friends.
    now: Option<i64>,
    rng_state: u64,
    /// Whether MY or TARGET has an attribute named like a scope (`MY`,
    /// `TARGET`…). Almost never, and then scope names need a lookup.
    tops_shadow: bool,
    /// See [`stack_floor`]: computed when the evaluator is made, on the
    /// thread that uses it (an evaluator cannot move between threads).
    stack_floor: usize,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl<'a> Evaluator<'a> {
    /// An evaluator with no ads.
    pub fn new() -> Evaluator<'a> {
        Evaluator {
            my: None,
            target: None,
            mode: Mode::default(),
            steps_left: DEFAULT_STEP_BUDGET,
            budget: DEFAULT_STEP_BUDGET,
            depth: 0,
            in_progress: InProgress::default(),
            now: None,
            rng_state: 0x9E37_79B9_7F4A_7C15,
            tops_shadow: false,
            stack_floor: stack_floor(),
            _not_send: std::marker::PhantomData,
        }
    }

    /// An evaluator with MY (and optionally TARGET).
    pub fn with_ads(my: Option<&'a ClassAd>, target: Option<&'a ClassAd>) -> Evaluator<'a> {
        let mut ev = Evaluator::new();
        ev.set_ads(my, target);
        ev
    }

    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Replaces the step budget of each top-level evaluation.
    pub fn step_budget(mut self, steps: u64) -> Self {
        self.budget = steps;
        self.steps_left = steps;
        self
    }

    /// Fixes the clock (seconds since the epoch) for `time()` and friends.
    pub fn now(mut self, secs: i64) -> Self {
        self.now = Some(secs);
        self
    }

    /// Seeds `random()`.
    pub fn seed(mut self, seed: u64) -> Self {
        self.rng_state = seed | 1;
        self
    }

    /// Swaps in a new pair of ads, keeping the settings.
    pub fn set_ads(&mut self, my: Option<&'a ClassAd>, target: Option<&'a ClassAd>) {
        self.my = my;
        self.target = target;
        self.tops_shadow =
            my.is_some_and(ClassAd::shadows_scopes) || target.is_some_and(ClassAd::shadows_scopes);
    }

    /// Evaluates `expr` in the scope of MY (or with no scope if there is no
    /// MY ad).
    pub fn eval(&mut self, expr: &Expr) -> Value {
        self.eval_on(Side::My, expr)
    }

    /// Evaluates `expr` as if it were written in the top-level ad of `side`.
    pub fn eval_on(&mut self, side: Side, expr: &Expr) -> Value {
        self.eval_on_unguarded(side, expr)
    }

    fn eval_on_unguarded(&mut self, side: Side, expr: &Expr) -> Value {
        self.reset();
        let ctx = if self.ad(side).is_some() {
            Ctx::top(side)
        } else {
            Ctx {
                scope: Scope::None,
                side,
            }
        };
        self.eval_in(ctx, expr)
    }

    /// Evaluates the attribute `name` of the ad on `side`; undefined if absent.
    pub fn eval_attr(&mut self, side: Side, name: Folded) -> Value {
        self.eval_attr_unguarded(side, name)
    }

    fn eval_attr_unguarded(&mut self, side: Side, name: Folded) -> Value {
        self.reset();
        let Some(ad) = self.ad(side) else {
            return Value::Undefined;
        };
        match ad.get_folded(name) {
            Some(e) => self.eval_attr_expr(Ctx::top(side), ad as *const ClassAd as usize, name, e),
            None => Value::Undefined,
        }
    }

    fn reset(&mut self) {
        self.steps_left = self.budget;
        self.depth = 0;
        self.in_progress.clear();
    }

    /// The top-level ad on `side`.
    pub fn ad(&self, side: Side) -> Option<&'a ClassAd> {
        match side {
            Side::My => self.my,
            Side::Target => self.target,
        }
    }

    /// Current time in seconds since the epoch.
    pub fn now_secs(&self) -> i64 {
        self.now.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        })
    }

    /// A pseudo-random number in [0, 1), from the evaluator's seeded stream.
    pub fn next_random(&mut self) -> f64 {
        // SplitMix64.
        self.rng_state = self.rng_state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng_state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Charges `n` steps; false when the budget is spent.
    pub fn charge(&mut self, n: u64) -> bool {
        if self.steps_left < n {
            self.steps_left = 0;
            false
        } else {
            self.steps_left -= n;
            true
        }
    }

    /// Evaluates an expression in a context. The entry point for built-in
    /// functions evaluating their arguments.
    pub fn eval_in(&mut self, ctx: Ctx<'_>, expr: &Expr) -> Value {
        if !self.charge(1) {
            return Value::Error;
        }
        let marker = 0u8;
        if (std::ptr::addr_of!(marker) as usize) < self.stack_floor {
            return self.eval_in_new_stack(ctx, expr);
        }
        self.eval_in_unguarded(ctx, expr)
    }

    fn eval_in_unguarded(&mut self, ctx: Ctx<'_>, expr: &Expr) -> Value {
        match expr {
            // HTCondor quirk: a relative-time literal (what the parser
            // makes of `relTime("1:30")`) evaluates to a real.
            Expr::Literal(Value::RelTime(r)) => Value::Real(*r),
            Expr::Literal(v) => v.clone(),
            Expr::Attr(r) => self.eval_attr_ref(ctx, r),
            Expr::Select(base, r) => self.eval_select(ctx, base, r),
            Expr::Index(pair) => {
                let base = self.eval_in(ctx, &pair[0]);
                let index = self.eval_in(ctx, &pair[1]);
                self.subscript(ctx, base, index)
            }
            Expr::Unary(op, e) => {
                let v = self.eval_in(ctx, e);
                operators::unary(*op, v)
            }
            Expr::Binary(op, pair) => self.eval_binary(ctx, *op, &pair[0], &pair[1]),
            Expr::Cond(parts) => {
                let c = self.eval_in(ctx, &parts[0]);
                match operators::truth(&c) {
                    Ok(Some(true)) => self.eval_in(ctx, &parts[1]),
                    Ok(Some(false)) => self.eval_in(ctx, &parts[2]),
                    Ok(None) => Value::Undefined,
                    Err(()) => Value::Error,
                }
            }
            Expr::Elvis(parts) => {
                let a = self.eval_in(ctx, &parts[0]);
                if a.is_undefined() {
                    self.eval_in(ctx, &parts[1])
                } else {
                    a
                }
            }
            Expr::Paren(e) => self.eval_in(ctx, e),
            Expr::Call(call) => match call.func {
                Some(f) => {
                    if self.depth >= MAX_EVAL_DEPTH {
                        return Value::Error;
                    }
                    self.depth += 1;
                    let v =
                        stacker::maybe_grow(64 * 1024, 1024 * 1024, || f(self, ctx, &call.args));
                    self.depth -= 1;
                    if self.steps_left == 0 {
                        Value::Error
                    } else {
                        v
                    }
                }
                None => Value::Error,
            },
            Expr::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for e in items.iter() {
                    out.push(self.eval_in(ctx, e));
                }
                Value::List(out.into())
            }
            Expr::Ad(ad) => Value::Ad(Arc::new(AdValue {
                ad: ad.clone(),
                parent: self.parent_of(ctx),
            })),
        }
    }

    /// Continues evaluation on a fresh stack segment: deep trees and long
    /// attribute chains never overflow the thread's stack.
    #[cold]
    fn eval_in_new_stack(&mut self, ctx: Ctx<'_>, expr: &Expr) -> Value {
        let saved = self.stack_floor;
        let v = stacker::grow(STACK_GROWTH, || {
            self.stack_floor = stack_floor();
            if self.stack_floor == usize::MAX {
                // Bounds unknown even here: stop rather than risk overflow.
                return Value::Error;
            }
            self.eval_in_unguarded(ctx, expr)
        });
        self.stack_floor = saved;
        v
    }

    /// How a nested ad written in `ctx` records its parent.
    fn parent_of(&self, ctx: Ctx<'_>) -> Parent {
        match ctx.scope {
            Scope::None => Parent::None,
            Scope::Top(s) => Parent::Top(s),
            Scope::Nested(av) => Parent::Ad(av.clone()),
        }
    }

    fn eval_binary(&mut self, ctx: Ctx<'_>, op: BinaryOp, l: &Expr, r: &Expr) -> Value {
        match op {
            BinaryOp::And => {
                let a = self.eval_in(ctx, l);
                match operators::truth(&a) {
                    Ok(Some(false)) => Value::Bool(false),
                    Err(()) => Value::Error,
                    Ok(left) => {
                        let b = self.eval_in(ctx, r);
                        match (left, operators::truth(&b)) {
                            (_, Err(())) => Value::Error,
                            (_, Ok(Some(false))) => Value::Bool(false),
                            (Some(true), Ok(Some(true))) => Value::Bool(true),
                            _ => Value::Undefined,
                        }
                    }
                }
            }
            BinaryOp::Or => {
                let a = self.eval_in(ctx, l);
                match operators::truth(&a) {
                    Ok(Some(true)) => Value::Bool(true),
                    Err(()) => Value::Error,
                    Ok(left) => {
                        let b = self.eval_in(ctx, r);
                        match (left, operators::truth(&b)) {
                            (_, Err(())) => Value::Error,
                            (_, Ok(Some(true))) => Value::Bool(true),
                            (Some(false), Ok(Some(false))) => Value::Bool(false),
                            _ => Value::Undefined,
                        }
                    }
                }
            }
            _ => {
                let a = self.operand(ctx, l);
                let b = self.operand(ctx, r);
                operators::binary(op, &a, &b)
            }
        }
    }

    /// Evaluates an operand, borrowing instead of copying when it is a
    /// literal, or an attribute of a top-level ad whose value is a literal
    /// (`TARGET.Arch == "X86_64"` then copies no string and touches no
    /// reference count).
    #[inline]
    fn operand<'e>(&mut self, ctx: Ctx<'_>, e: &'e Expr) -> Cow<'e, Value>
    where
        'a: 'e,
    {
        match e {
            Expr::Literal(v) if !matches!(v, Value::RelTime(_)) => {
                if !self.charge(1) {
                    return Cow::Owned(Value::Error);
                }
                Cow::Borrowed(v)
            }
            Expr::Select(base, r) => {
                if let Expr::Attr(b) = &**base {
                    if !b.absolute {
                        if let Some(Some(side)) = self.top_scope_named(ctx, b.key) {
                            if !self.defined_in_scope(ctx, b.key) {
                                let ad: &'a ClassAd = self.ad(side).expect("scope exists");
                                if let Some(Expr::Literal(v)) = ad.get_folded(r.key) {
                                    if !matches!(v, Value::RelTime(_)) && self.charge(2) {
                                        return Cow::Borrowed(v);
                                    }
                                }
                            }
                        }
                    }
                }
                Cow::Owned(self.eval_in(ctx, e))
            }
            _ => Cow::Owned(self.eval_in(ctx, e)),
        }
    }

    fn subscript(&mut self, ctx: Ctx<'_>, base: Value, index: Value) -> Value {
        match (&base, &index) {
            (Value::Error, _) | (_, Value::Error) => Value::Error,
            (Value::Undefined, _) | (_, Value::Undefined) => Value::Undefined,
            (Value::List(items), Value::Int(i)) => {
                if *i < 0 || *i as usize >= items.len() {
                    Value::Error
                } else {
                    items[*i as usize].clone()
                }
            }
            // `ad["name"]` looks in that ad only, not its parents.
            (Value::Ad(av), Value::String(name)) => {
                let Ok(n) = super::name::Name::new(name) else {
                    return Value::Undefined;
                };
                let key = n.folded();
                match av.ad.get_folded(key) {
                    Some(e) => {
                        let ident = Arc::as_ptr(&av.ad) as usize;
                        self.eval_attr_expr(ctx.inside(av), ident, key, e)
                    }
                    None => Value::Undefined,
                }
            }
            _ => Value::Error,
        }
    }

    fn eval_attr_ref(&mut self, ctx: Ctx<'_>, r: &AttrRef) -> Value {
        if r.absolute {
            let side = ctx.side;
            return match self.ad(side) {
                Some(_) => self.lookup_top_only(side, r.key),
                None => Value::Undefined,
            };
        }
        self.lookup_from(ctx, r.key)
    }

    /// Resolves a name starting at `origin`, walking out through lexical
    /// parents (and to TARGET in compat mode), then the special scope names
    /// relative to `origin`.
    fn lookup_from(&mut self, origin: Ctx<'_>, key: Folded) -> Value {
        let to_target = self.mode == Mode::Compat;
        self.lookup_from_with(origin, key, to_target)
    }

    /// [`Self::lookup_from`], choosing whether a top-level miss falls back to
    /// the other top-level ad.
    fn lookup_from_with(&mut self, origin: Ctx<'_>, key: Folded, to_target: bool) -> Value {
        match self.lookup_chain(origin, key, to_target) {
            Some(v) => v,
            None => self.special_name(origin, key),
        }
    }

    fn lookup_chain(&mut self, at: Ctx<'_>, key: Folded, to_target: bool) -> Option<Value> {
        match at.scope {
            Scope::None => None,
            Scope::Top(s) => {
                let ad = self.ad(s)?;
                if let Some(e) = ad.get_folded(key) {
                    return Some(self.eval_attr_expr(
                        Ctx::top(s),
                        ad as *const ClassAd as usize,
                        key,
                        e,
                    ));
                }
                if to_target {
                    let other = self.ad(s.other())?;
                    let e = other.get_folded(key)?;
                    return Some(self.eval_attr_expr(
                        Ctx::top(s.other()),
                        other as *const ClassAd as usize,
                        key,
                        e,
                    ));
                }
                None
            }
            Scope::Nested(av) => {
                if let Some(e) = av.ad.get_folded(key) {
                    let ident = Arc::as_ptr(&av.ad) as usize;
                    return Some(self.eval_attr_expr(at.inside(av), ident, key, e));
                }
                match &av.parent {
                    Parent::None => None,
                    Parent::Top(s) => self.lookup_chain(
                        Ctx {
                            scope: Scope::Top(*s),
                            side: at.side,
                        },
                        key,
                        to_target,
                    ),
                    Parent::Ad(p) => {
                        let p = p.clone();
                        self.lookup_chain(at.inside(&p), key, to_target)
                    }
                }
            }
        }
    }

    /// `MY`, `SELF`, `TARGET`, `PARENT`, `ROOT`, `TOPLEVEL` when no ad defines
    /// them.
    ///
    /// `SELF` is the ad the lookup started in; `MY` is too in compat mode,
    /// while in strict mode it exists only in a match (with a TARGET) and is
    /// the top-level ad, as HTCondor's match context defines it.
    fn special_name(&mut self, origin: Ctx<'_>, key: Folded) -> Value {
        let names = ScopeNames::get();
        if key == names.self_ || (key == names.my && self.mode == Mode::Compat) {
            self.scope_value(origin)
        } else if key == names.my {
            if self.ad(origin.side.other()).is_some() {
                self.top_value(origin.side)
            } else {
                Value::Undefined
            }
        } else if key == names.target {
            self.top_value(origin.side.other())
        } else if key == names.root || key == names.toplevel {
            self.top_value(origin.side)
        } else if key == names.parent {
            match origin.scope {
                Scope::Nested(av) => match &av.parent {
                    Parent::None => Value::Undefined,
                    Parent::Top(s) => self.top_value(*s),
                    Parent::Ad(p) => Value::Ad(p.clone()),
                },
                _ => Value::Undefined,
            }
        } else {
            Value::Undefined
        }
    }

    /// The ad a context is in, as a value.
    fn scope_value(&self, ctx: Ctx<'_>) -> Value {
        match ctx.scope {
            Scope::None => Value::Undefined,
            Scope::Top(s) => self.top_value(s),
            Scope::Nested(av) => Value::Ad(av.clone()),
        }
    }

    /// A top-level ad as a value (copied: values own their ads).
    fn top_value(&self, side: Side) -> Value {
        match self.ad(side) {
            Some(ad) => Value::Ad(Arc::new(AdValue {
                ad: Arc::new(ad.clone()),
                parent: Parent::None,
            })),
            None => Value::Undefined,
        }
    }

    /// Evaluates an attribute's expression, guarding against self-reference
    /// and runaway depth.
    fn eval_attr_expr(&mut self, ctx: Ctx<'_>, ad_ident: usize, key: Folded, e: &Expr) -> Value {
        if let Expr::Literal(v) = e {
            if matches!(v, Value::RelTime(_)) {
                return self.eval_in(ctx, e);
            }
            if !self.charge(1) {
                return Value::Error;
            }
            return v.clone();
        }
        if self.in_progress.contains(&(ad_ident, key)) {
            return Value::Undefined;
        }
        if self.depth >= MAX_EVAL_DEPTH {
            return Value::Error;
        }
        self.depth += 1;
        self.in_progress.push((ad_ident, key));
        let v = self.eval_in(ctx, e);
        self.in_progress.pop();
        self.depth -= 1;
        v
    }

    /// `base.name`.
    fn eval_select(&mut self, ctx: Ctx<'_>, base: &Expr, r: &AttrRef) -> Value {
        // Fast path for MY.x / TARGET.x when the scope names are not shadowed
        // by an attribute: no copy of the top-level ad is made.
        if let Expr::Attr(b) = base {
            if !b.absolute {
                if let Some(side) = self.top_scope_named(ctx, b.key) {
                    if !self.defined_in_scope(ctx, b.key) {
                        if !self.charge(1) {
                            return Value::Error;
                        }
                        return match side {
                            Some(side) => self.lookup_top_only(side, r.key),
                            None => Value::Undefined,
                        };
                    }
                }
            }
        }
        let b = self.eval_in(ctx, base);
        self.select(ctx, b, r.key)
    }

    /// For `MY`, `SELF` and `TARGET` seen from a top-level ad: which
    /// top-level ad they name (`Some(None)`: none), or `None` if the name is
    /// not one of those or needs the general path.
    #[inline]
    fn top_scope_named(&self, ctx: Ctx<'_>, key: Folded) -> Option<Option<Side>> {
        let names = ScopeNames::get();
        let Scope::Top(here) = ctx.scope else {
            return None;
        };
        let exists = |side: Side| self.ad(side).map(|_| side);
        if key == names.target {
            Some(exists(here.other()))
        } else if key == names.self_ || (key == names.my && self.mode == Mode::Compat) {
            Some(exists(here))
        } else if key == names.my {
            Some(self.ad(here.other()).and_then(|_| exists(here)))
        } else {
            None
        }
    }

    /// Looks `key` up in the top-level ad on `side` only (then its parents:
    /// a top-level ad has none).
    fn lookup_top_only(&mut self, side: Side, key: Folded) -> Value {
        let ad = self.ad(side).expect("checked");
        match ad.get_folded(key) {
            Some(e) => self.eval_attr_expr(Ctx::top(side), ad as *const ClassAd as usize, key, e),
            None => self.special_name(Ctx::top(side), key),
        }
    }

    #[inline]
    /// Whether an attribute named `key` is visible from `ctx` (so a special
    /// scope name is shadowed).
    fn defined_in_scope(&self, ctx: Ctx<'_>, key: Folded) -> bool {
        if let Scope::Top(_) = ctx.scope {
            if !self.tops_shadow {
                return false;
            }
        }
        let mut scope = ctx.scope;
        loop {
            match scope {
                Scope::None => return false,
                Scope::Top(s) => {
                    let ad = self.ad(s).expect("top scope has an ad");
                    if ad.shadows_scopes() && ad.get_folded(key).is_some() {
                        return true;
                    }
                    if self.mode == Mode::Compat && s == ctx.side {
                        if let Some(o) = self.ad(s.other()) {
                            return o.shadows_scopes() && o.get_folded(key).is_some();
                        }
                    }
                    return false;
                }
                Scope::Nested(av) => {
                    if av.ad.shadows_scopes() && av.ad.get_folded(key).is_some() {
                        return true;
                    }
                    match &av.parent {
                        Parent::None => return false,
                        Parent::Top(s) => scope = Scope::Top(*s),
                        Parent::Ad(p) => {
                            return self.defined_in_scope(ctx.inside(p), key);
                        }
                    }
                }
            }
        }
    }

    /// Selection on an evaluated base.
    pub fn select(&mut self, ctx: Ctx<'_>, base: Value, key: Folded) -> Value {
        match &base {
            Value::Ad(av) => self.lookup_in_selected(ctx, av, key),
            Value::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items.iter() {
                    out.push(match item {
                        // HTCondor stores each selected value as a literal,
                        // and a relative-time literal evaluates to a real.
                        Value::Ad(av) => match self.lookup_in_selected(ctx, av, key) {
                            Value::RelTime(r) => Value::Real(r),
                            v => v,
                        },
                        Value::List(_) => self.select(ctx, item.clone(), key),
                        Value::Undefined => Value::Undefined,
                        _ => Value::Error,
                    });
                }
                Value::List(out.into())
            }
            Value::Undefined => Value::Undefined,
            _ => Value::Error,
        }
    }

    fn lookup_in_selected(&mut self, ctx: Ctx<'_>, av: &Arc<AdValue>, key: Folded) -> Value {
        // Selection looks in the ad and its lexical parents, not TARGET.
        self.lookup_from_with(ctx.inside(av), key, false)
    }

    /// Finds the expression an attribute reference names, without evaluating
    /// it (for `unparse`, `unresolved` and friends).
    pub fn find_attr_expr(&self, ctx: Ctx<'_>, r: &AttrRef) -> Option<Expr> {
        let mut scope = if r.absolute {
            Scope::Top(ctx.side)
        } else {
            ctx.scope
        };
        loop {
            match scope {
                Scope::None => return None,
                Scope::Top(s) => {
                    let ad = self.ad(s)?;
                    if let Some(e) = ad.get_folded(r.key) {
                        return Some(e.clone());
                    }
                    if self.mode == Mode::Compat && s == ctx.side {
                        return self.ad(s.other())?.get_folded(r.key).cloned();
                    }
                    return None;
                }
                Scope::Nested(av) => {
                    if let Some(e) = av.ad.get_folded(r.key) {
                        return Some(e.clone());
                    }
                    match &av.parent {
                        Parent::None => return None,
                        Parent::Top(s) => scope = Scope::Top(*s),
                        Parent::Ad(p) => {
                            let p = p.clone();
                            return self.find_attr_expr(ctx.inside(&p), r);
                        }
                    }
                }
            }
        }
    }

    /// Evaluates `expr` with `ad` as MY and the current TARGET kept, as
    /// `evalInEachContext` needs.
    pub fn eval_in_ad(&mut self, ctx: Ctx<'_>, ad: &Arc<AdValue>, expr: &Expr) -> Value {
        self.eval_in(ctx.inside(ad), expr)
    }

    /// Steps left in the current evaluation.
    pub fn steps_left(&self) -> u64 {
        self.steps_left
    }

    /// Recursion depth of the current evaluation (attribute references and
    /// function calls).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Runs `f` one level deeper, or yields error at the depth limit.
    pub fn deeper(&mut self, f: impl FnOnce(&mut Self) -> Value) -> Value {
        if self.depth >= MAX_EVAL_DEPTH {
            return Value::Error;
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }
}

/// The attributes being evaluated, innermost last: a short stack kept inline
/// (matching never allocates for it) that spills only for deep chains.
#[derive(Default)]
struct InProgress {
    inline: [(usize, u32); 16],
    len: usize,
    spill: Vec<(usize, u32)>,
}

impl InProgress {
    #[inline]
    fn contains(&self, item: &(usize, Folded)) -> bool {
        let item = (item.0, item.1.id());
        self.inline[..self.len.min(16)].contains(&item) || self.spill.contains(&item)
    }

    #[inline]
    fn push(&mut self, item: (usize, Folded)) {
        let item = (item.0, item.1.id());
        if self.len < 16 {
            self.inline[self.len] = item;
        } else {
            self.spill.push(item);
        }
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) {
        self.len -= 1;
        if self.len >= 16 {
            self.spill.pop();
        }
    }

    fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }
}

/// Stack that must remain before evaluation goes one level deeper, and how
/// much to add when it does not.
const RED_ZONE: usize = 128 << 10;
const STACK_GROWTH: usize = 4 << 20;

/// The lowest stack address evaluation may reach on this thread's current
/// stack before growing it (stacks grow down on every platform we run on).
fn stack_floor() -> usize {
    let marker = 0u8;
    let here = std::ptr::addr_of!(marker) as usize;
    match stacker::remaining_stack() {
        Some(left) => here.saturating_sub(left) + RED_ZONE,
        // Unknown bounds: always take the slow, checked path.
        None => usize::MAX,
    }
}

impl Default for Evaluator<'_> {
    fn default() -> Self {
        Evaluator::new()
    }
}

/// Evaluates a free-standing expression (no ads).
pub fn eval_expr(expr: &Expr) -> Value {
    Evaluator::new().eval(expr)
}
