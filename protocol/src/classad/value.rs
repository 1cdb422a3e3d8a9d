//! Values: what evaluating an expression produces.
//!
//! HTCondor's ten value types. Strings, lists and ads are reference-counted so
//! that copying a value out of an ad (the common case in matching) never
//! copies text.

use std::fmt;
use std::sync::Arc;

use super::ad::ClassAd;

/// An absolute time: seconds since the Unix epoch, plus the time-zone offset
/// (seconds east of UTC) it should be shown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbsTime {
    pub secs: i64,
    pub offset: i32,
}

/// A ClassAd value.
#[derive(Clone, Debug, Default)]
pub enum Value {
    #[default]
    Undefined,
    Error,
    Bool(bool),
    Int(i64),
    Real(f64),
    String(Arc<str>),
    /// A list; its elements are already evaluated.
    List(Arc<[Value]>),
    /// A nested ad, with the scope it was written in.
    Ad(Arc<AdValue>),
    AbsTime(AbsTime),
    /// A relative time in seconds.
    RelTime(f64),
}

/// An ad produced by evaluation, remembering its lexical parent so that
/// `PARENT.x` and names defined by an enclosing ad still resolve.
#[derive(Debug)]
pub struct AdValue {
    pub ad: Arc<ClassAd>,
    pub(crate) parent: Parent,
}

/// Where a nested ad was written.
#[derive(Debug, Clone)]
pub(crate) enum Parent {
    /// A free-standing ad (a literal evaluated with no enclosing ad, or an ad
    /// built by a function).
    None,
    /// Directly inside one of the top-level ads of the evaluation.
    Top(super::eval::Side),
    /// Inside another nested ad.
    Ad(Arc<AdValue>),
}

impl AdValue {
    /// A free-standing ad value.
    pub fn new(ad: Arc<ClassAd>) -> Arc<AdValue> {
        Arc::new(AdValue {
            ad,
            parent: Parent::None,
        })
    }
}

/// The type of a value, as `typeOf`-style messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    Undefined,
    Error,
    Bool,
    Int,
    Real,
    String,
    List,
    Ad,
    AbsTime,
    RelTime,
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueType::Undefined => "undefined",
            ValueType::Error => "error",
            ValueType::Bool => "boolean",
            ValueType::Int => "integer",
            ValueType::Real => "real",
            ValueType::String => "string",
            ValueType::List => "list",
            ValueType::Ad => "classad",
            ValueType::AbsTime => "absolute time",
            ValueType::RelTime => "relative time",
        })
    }
}

impl Value {
    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value::String(s.into())
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(items.into())
    }

    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Undefined => ValueType::Undefined,
            Value::Error => ValueType::Error,
            Value::Bool(_) => ValueType::Bool,
            Value::Int(_) => ValueType::Int,
            Value::Real(_) => ValueType::Real,
            Value::String(_) => ValueType::String,
            Value::List(_) => ValueType::List,
            Value::Ad(_) => ValueType::Ad,
            Value::AbsTime(_) => ValueType::AbsTime,
            Value::RelTime(_) => ValueType::RelTime,
        }
    }

    pub fn is_undefined(&self) -> bool {
        matches!(self, Value::Undefined)
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Value::Error)
    }

    /// True for integers and reals.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Real(_))
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The value as a real, for integers and reals.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Real(r) => Some(*r),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub fn as_ad(&self) -> Option<&ClassAd> {
        match self {
            Value::Ad(a) => Some(&a.ad),
            _ => None,
        }
    }

    /// `true` only for the boolean `true`: what a `Requirements` must yield.
    pub fn is_true(&self) -> bool {
        matches!(self, Value::Bool(true))
    }

    /// Structural identity, as `=?=` sees it: same type and same value, strings
    /// compared case-sensitively, reals numerically (so NaN is not identical
    /// to itself), times with their zone.
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Undefined, Value::Undefined) | (Value::Error, Value::Error) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Real(a), Value::Real(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::AbsTime(a), Value::AbsTime(b)) => a == b,
            (Value::RelTime(a), Value::RelTime(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                Arc::ptr_eq(a, b)
                    || (a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.identical(y)))
            }
            (Value::Ad(a), Value::Ad(b)) => Arc::ptr_eq(a, b) || a.ad.same_as(&b.ad),
            _ => false,
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(r: f64) -> Value {
        Value::Real(r)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s.into())
    }
}
