//! Bounds on what the language accepts, so hostile input costs bounded time,
//! memory and stack.
//!
//! Past a parse limit the parser fails with a message naming the limit; past
//! an evaluation limit the expression evaluates to `error`.

/// Longest text the parser accepts in one call, in bytes.
pub const MAX_INPUT_LEN: usize = 64 << 20;

/// Deepest expression tree (operators, parentheses, lists, ads, calls).
pub const MAX_DEPTH: u32 = 400;

/// Longest string value (literal or computed), in bytes.
pub const MAX_STRING_LEN: usize = 16 << 20;

/// Longest list (literal or computed).
pub const MAX_LIST_LEN: usize = 1 << 20;

/// Most attributes in one ad.
pub const MAX_AD_ATTRS: usize = 1 << 16;

/// Most arguments to one function call.
pub const MAX_ARGS: usize = 1 << 12;

/// Evaluation steps one top-level evaluation may take before it yields
/// `error` (a step is one node visited).
pub const DEFAULT_STEP_BUDGET: u64 = 4_000_000;

/// Deepest chain of attribute references and `eval` calls in one evaluation.
/// HTCondor uses the same bound.
pub const MAX_EVAL_DEPTH: u32 = 1000;
