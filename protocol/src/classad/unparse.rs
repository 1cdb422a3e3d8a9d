//! The unparser: expressions, values and ads back to text, in HTCondor's
//! canonical form (what `ExprTree.__str__` and `ClassAd.__repr__` print), so
//! that text we write parses back to the same tree in HTCondor and in
//! Starling.

use std::fmt::Write;

use super::ad::ClassAd;
use super::ast::{Expr, UnaryOp};
use super::name::Name;
use super::time::{format_abs_time, format_rel_time};
use super::value::Value;

/// How reals are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RealStyle {
    /// `1.500000000000000E+00`: the new-syntax canonical form (exact).
    Exact,
    /// `1.5`: `%.16G`, as HTCondor's long ("old") format prints them.
    Short,
}

/// Unparses an expression.
pub fn unparse(expr: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, expr, RealStyle::Exact);
    out
}

/// Unparses an expression with a choice of real style.
pub fn unparse_with(expr: &Expr, style: RealStyle) -> String {
    let mut out = String::new();
    write_expr(&mut out, expr, style);
    out
}

/// Unparses a value.
pub fn unparse_value(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, RealStyle::Exact);
    out
}

/// Unparses an ad in the new syntax on one line: `[ a = 1; b = "x" ]`.
pub fn unparse_ad(ad: &ClassAd) -> String {
    let mut out = String::new();
    write_ad(&mut out, ad, RealStyle::Exact);
    out
}

const RESERVED: &[&str] = &[
    "true",
    "false",
    "undefined",
    "error",
    "is",
    "isnt",
    "parent",
];

/// Writes an attribute name, quoting it when it is not a plain identifier or
/// would read as a keyword.
pub fn write_name(out: &mut String, name: Name) {
    let s = name.as_str();
    let plain = s
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(s));
    if plain {
        out.push_str(s);
    } else {
        out.push('\'');
        for c in s.chars() {
            if c == '\'' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('\'');
    }
}

/// Writes a string literal with HTCondor's escapes; bytes outside printable
/// ASCII are written as octal escapes.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            8 => out.push_str("\\b"),
            12 => out.push_str("\\f"),
            7 => out.push_str("\\a"),
            11 => out.push_str("\\v"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
}

/// `%.{prec}E` as C's printf writes it: `1.500000000000000E+00`.
fn format_exp(r: f64, prec: usize) -> String {
    let s = format!("{r:.prec$E}");
    let (mant, exp) = s.split_once('E').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}E{sign}{:02}", exp.abs())
}

/// `%.16G` plus a trailing `.0` when the result would read as an integer.
pub fn format_real_short(r: f64) -> String {
    if r == 0.0 {
        return if r.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let sci = format!("{r:.15E}");
    let (_, exp) = sci.split_once('E').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    let mut s = if !(-4..16).contains(&exp) {
        let m = format_exp(r, 15);
        let (mant, e) = m.split_once('E').expect("exponent");
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        format!("{mant}E{e}")
    } else {
        let decimals = (15 - exp).max(0) as usize;
        let f = format!("{r:.decimals$}");
        if f.contains('.') {
            f.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            f
        }
    };
    if !s.contains(['.', 'E']) {
        s.push_str(".0");
    }
    s
}

fn write_real(out: &mut String, r: f64, style: RealStyle) {
    if r.is_nan() {
        out.push_str("real(\"NaN\")");
    } else if r.is_infinite() {
        out.push_str(if r > 0.0 {
            "real(\"INF\")"
        } else {
            "real(\"-INF\")"
        });
    } else if r == 0.0 {
        out.push_str(if r.is_sign_negative() { "-0.0" } else { "0.0" });
    } else {
        match style {
            RealStyle::Exact => out.push_str(&format_exp(r, 15)),
            RealStyle::Short => out.push_str(&format_real_short(r)),
        }
    }
}

/// Writes a value in ClassAd syntax.
pub fn write_value(out: &mut String, v: &Value, style: RealStyle) {
    match v {
        Value::Undefined => out.push_str("undefined"),
        Value::Error => out.push_str("error"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Real(r) => write_real(out, *r, style),
        Value::String(s) => write_string(out, s),
        Value::List(items) => {
            out.push_str("{ ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, style);
            }
            out.push_str(" }");
        }
        Value::Ad(av) => write_ad(out, &av.ad, style),
        Value::AbsTime(t) => {
            out.push_str("absTime(\"");
            out.push_str(&format_abs_time(*t));
            out.push_str("\")");
        }
        Value::RelTime(r) => {
            out.push_str("relTime(\"");
            out.push_str(&format_rel_time(*r));
            out.push_str("\")");
        }
    }
}

/// Writes an ad in the new syntax on one line.
pub fn write_ad(out: &mut String, ad: &ClassAd, style: RealStyle) {
    out.push_str("[ ");
    for (i, e) in ad.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        write_name(out, e.name);
        out.push_str(" = ");
        write_expr(out, e.expr(), style);
    }
    out.push_str(" ]");
}

/// Writes an expression.
pub fn write_expr(out: &mut String, e: &Expr, style: RealStyle) {
    match e {
        Expr::Literal(v) => write_value(out, v, style),
        Expr::Attr(r) => {
            if r.absolute {
                out.push('.');
            }
            write_name(out, r.name);
        }
        Expr::Select(base, r) => {
            write_expr(out, base, style);
            out.push('.');
            write_name(out, r.name);
        }
        Expr::Index(pair) => {
            write_expr(out, &pair[0], style);
            out.push('[');
            write_expr(out, &pair[1], style);
            out.push(']');
        }
        Expr::Unary(op, inner) => {
            out.push(' ');
            out.push_str(match op {
                UnaryOp::Minus => "-",
                UnaryOp::Plus => "+",
                UnaryOp::Not => "!",
                UnaryOp::BitNot => "~",
            });
            write_expr(out, inner, style);
        }
        Expr::Binary(op, pair) => {
            write_expr(out, &pair[0], style);
            out.push(' ');
            out.push_str(op.symbol_canonical());
            out.push(' ');
            write_expr(out, &pair[1], style);
        }
        Expr::Cond(parts) => {
            write_expr(out, &parts[0], style);
            out.push_str(" ? ");
            write_expr(out, &parts[1], style);
            out.push_str(" : ");
            write_expr(out, &parts[2], style);
        }
        Expr::Elvis(parts) => {
            write_expr(out, &parts[0], style);
            out.push_str(" ?: ");
            write_expr(out, &parts[1], style);
        }
        Expr::Paren(inner) => {
            out.push('(');
            write_expr(out, inner, style);
            out.push(')');
        }
        Expr::Call(call) => {
            out.push_str(call.name.as_str());
            out.push('(');
            for (i, a) in call.args.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_expr(out, a, style);
            }
            out.push(')');
        }
        Expr::List(items) => {
            out.push_str("{ ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_expr(out, item, style);
            }
            out.push_str(" }");
        }
        Expr::Ad(ad) => write_ad(out, ad, style),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_reals_match_printf_g16() {
        assert_eq!(format_real_short(1.5), "1.5");
        assert_eq!(format_real_short(0.1), "0.1");
        assert_eq!(format_real_short(1e20), "1E+20");
        assert_eq!(format_real_short(123456789.123), "123456789.123");
        assert_eq!(format_real_short(2.0), "2.0");
        assert_eq!(format_real_short(1e-7), "1E-07");
        assert_eq!(format_real_short(100.0), "100.0");
        assert_eq!(format_real_short(3e15), "3000000000000000.0");
        assert_eq!(format_real_short(1e16), "1E+16");
    }

    #[test]
    fn exact_reals_match_printf_e15() {
        assert_eq!(format_exp(1.5, 15), "1.500000000000000E+00");
        assert_eq!(
            format_exp(1.234567890123457e17, 15),
            "1.234567890123457E+17"
        );
        assert_eq!(format_exp(1e-5, 15), "1.000000000000000E-05");
    }
}
