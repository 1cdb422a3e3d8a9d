//! Our values in the oracle's canonical JSON form (see `oracle.py`): nested
//! parts are found by evaluating probe expressions (`starling_r__[0]`,
//! `starling_r__.'name'`) in the same scope, exactly as the oracle does.

use serde_json::{json, Value as J};
use starling_protocol::classad::{parse_expr, ClassAd, Evaluator, Expr, Mode, Name, Side, Value};

const PROBE: &str = "starling_r__";
const MAX_DEPTH: usize = 4;
const MAX_ITEMS: usize = 64;

pub(crate) fn canon_of(expr: &Expr, my: &ClassAd, target: Option<&ClassAd>, mode: Mode) -> J {
    let mut scope = my.clone();
    scope.insert(Name::new(PROBE).unwrap(), expr.clone());
    let mut ev = Evaluator::with_ads(Some(&scope), target).mode(mode);
    probe(&mut ev, PROBE, 0)
}

fn probe(ev: &mut Evaluator<'_>, text: &str, depth: usize) -> J {
    let e = parse_expr(text).expect("probe parses");
    let v = ev.eval_on(Side::My, &e);
    match &v {
        Value::List(items) => {
            if depth >= MAX_DEPTH {
                return json!({"t": "truncated"});
            }
            let mut out: Vec<J> = (0..items.len().min(MAX_ITEMS))
                .map(|i| probe(ev, &format!("{text}[{i}]"), depth + 1))
                .collect();
            if items.len() > MAX_ITEMS {
                out.push(json!({"t": "truncated"}));
            }
            json!({"t": "list", "v": out})
        }
        Value::Ad(av) => {
            if depth >= MAX_DEPTH {
                return json!({"t": "truncated"});
            }
            let mut map = serde_json::Map::new();
            let names: Vec<String> = av.ad.iter().map(|e| e.name.as_str().to_owned()).collect();
            for name in names {
                if name.eq_ignore_ascii_case(PROBE) {
                    continue;
                }
                let quoted = name.replace('\\', "\\\\").replace('\'', "\\'");
                map.insert(
                    name.to_ascii_lowercase(),
                    probe(ev, &format!("{text}.'{quoted}'"), depth + 1),
                );
            }
            json!({"t": "ad", "v": map})
        }
        other => value_canon(other),
    }
}

/// The canonical form of a scalar value (lists and ads shallowly).
pub(crate) fn value_canon(v: &Value) -> J {
    match v {
        Value::Undefined => json!({"t": "undefined"}),
        Value::Error => json!({"t": "error"}),
        Value::Bool(b) => json!({"t": "bool", "v": b}),
        Value::Int(i) => json!({"t": "int", "v": i}),
        Value::Real(r) => json!({"t": "real", "v": real(*r)}),
        Value::String(s) => json!({"t": "string", "v": &**s}),
        Value::AbsTime(t) => json!({"t": "abstime", "v": t.secs}),
        Value::RelTime(r) => json!({"t": "reltime", "v": real(*r)}),
        Value::List(items) => {
            json!({"t": "list", "v": items.iter().map(value_canon).collect::<Vec<_>>()})
        }
        Value::Ad(_) => json!({"t": "ad"}),
    }
}

fn real(r: f64) -> J {
    if r.is_nan() {
        json!("nan")
    } else if r.is_infinite() {
        json!(if r > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(r)
    }
}

/// Equal canonical values, reals to a relative 1e-12.
pub(crate) fn same_canon(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) if x.is_i64() && y.is_i64() => i == j,
            _ => {
                let (x, y) = (
                    x.as_f64().unwrap_or(f64::NAN),
                    y.as_f64().unwrap_or(f64::NAN),
                );
                x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
            }
        },
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_canon(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_canon(v, w)))
        }
        _ => a == b,
    }
}
