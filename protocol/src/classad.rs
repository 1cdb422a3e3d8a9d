//! The ClassAd language, as HTCondor's ClassAd library ("new ClassAds")
//! defines it: values, expressions, ads, the parser and unparser, the
//! evaluator and its built-in functions, HTCondor's long and JSON formats,
//! two-sided matching, and which attributes an expression refers to.
//!
//! Data flows text → [`parse_expr`]/[`parse_ad`] (or [`formats`]) →
//! [`Expr`]/[`ClassAd`] → [`Evaluator`] → [`Value`] → [`unparse`] → text.
//! Everything is bounded (see [`limits`]): hostile input gets a parse error or
//! an `error` value, never a panic, a hang or unbounded memory.

mod ad;
mod ast;
mod eval;
pub mod formats;
mod functions;
mod lexer;
pub mod limits;
pub mod matching;
mod name;
mod operators;
mod parser;
mod references;
pub(crate) mod time;
mod unparse;
mod value;

pub use ad::{ClassAd, Entry};
pub use ast::{AttrRef, BinaryOp, Call, Expr, UnaryOp};
pub use eval::{eval_expr, Builtin, Ctx, Evaluator, Mode, Side};
pub use name::{Folded, Name, NameError, MAX_NAMES, MAX_NAME_LEN};
pub use parser::{parse_ad, parse_ads, parse_expr, ParseError};
pub use references::{attr_references, references, References};
pub use time::{format_abs_time, format_rel_time, parse_abs_time, parse_rel_time};
pub use unparse::{
    format_real_short, unparse, unparse_ad, unparse_value, unparse_with, write_ad, write_expr,
    write_name, write_string, write_value, RealStyle,
};
pub use value::{AbsTime, AdValue, Value, ValueType};
