//! Time functions: `time`, `currentTime`, `timeZoneOffset`, `dayTime`,
//! `absTime`, `relTime`, the `get*` field accessors, `splitTime`,
//! `formatTime`, `interval`.
//!
//! Starling's "local" time zone is UTC on every node, so that evaluation
//! does not depend on where it happens.

use std::fmt::Write;
use std::sync::Arc;

use super::super::ad::ClassAd;
use super::super::ast::Expr;
use super::super::eval::{Ctx, Evaluator};
use super::super::name::Name;
use super::super::time::{broken_down, days_from_civil, parse_abs_time, parse_rel_time};
use super::super::value::{AbsTime, AdValue, Value};
use super::{f64_to_i32, f64_to_i64, string_result, to_int_value};

/// Seconds east of UTC of "local" time.
const LOCAL_OFFSET: i32 = 0;

fn no_args(args: &[Expr], v: impl FnOnce() -> Value) -> Value {
    if args.is_empty() {
        v()
    } else {
        Value::Error
    }
}

/// `time()`: seconds since the epoch.
pub(super) fn epoch_time(ev: &mut Evaluator<'_>, _ctx: Ctx<'_>, args: &[Expr]) -> Value {
    no_args(args, || Value::Int(ev.now_secs()))
}

/// `currentTime()`: the current time as an absolute time.
pub(super) fn current_time(ev: &mut Evaluator<'_>, _ctx: Ctx<'_>, args: &[Expr]) -> Value {
    no_args(args, || now(ev))
}

fn now(ev: &Evaluator<'_>) -> Value {
    Value::AbsTime(AbsTime {
        secs: ev.now_secs(),
        offset: LOCAL_OFFSET,
    })
}

/// `timeZoneOffset()`: the local offset from UTC.
pub(super) fn time_zone_offset(_ev: &mut Evaluator<'_>, _ctx: Ctx<'_>, args: &[Expr]) -> Value {
    no_args(args, || Value::RelTime(LOCAL_OFFSET as f64))
}

/// `dayTime()`: the time since local midnight.
pub(super) fn day_time(ev: &mut Evaluator<'_>, _ctx: Ctx<'_>, args: &[Expr]) -> Value {
    no_args(args, || {
        Value::RelTime((ev.now_secs() + LOCAL_OFFSET as i64).rem_euclid(86400) as f64)
    })
}

/// `absTime()`, `absTime(t [, offset])`.
pub(super) fn abs_time(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.is_empty() {
        return now(ev);
    }
    if args.len() > 2 {
        return Value::Error;
    }
    let arg = ev.eval_in(ctx, &args[0]);
    let offset = match args.get(1) {
        None => None,
        Some(e) => Some(match ev.eval_in(ctx, e) {
            Value::Int(i) => i as i32,
            Value::Real(r) => f64_to_i32(r),
            Value::RelTime(r) => f64_to_i64(r) as i32,
            _ => return Value::Error,
        }),
    };
    let at = |secs: i64| {
        Value::AbsTime(AbsTime {
            secs,
            offset: offset.unwrap_or(LOCAL_OFFSET),
        })
    };
    match arg {
        Value::Undefined => Value::Undefined,
        // HTCondor takes the seconds as a C int.
        Value::Int(i) => at(i as i32 as i64),
        Value::Real(r) => at(f64_to_i32(r) as i64),
        Value::RelTime(r) => at(f64_to_i64(r)),
        Value::AbsTime(_) => arg,
        Value::String(s) => match parse_abs_time(&s) {
            Some(t) => match offset {
                Some(o) => Value::AbsTime(AbsTime {
                    secs: t.secs,
                    offset: o,
                }),
                None => Value::AbsTime(t),
            },
            None => Value::Error,
        },
        _ => Value::Error,
    }
}

/// `relTime(t)`.
pub(super) fn rel_time(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match ev.eval_in(ctx, a) {
        Value::Undefined => Value::Undefined,
        Value::Int(i) => Value::RelTime(i as i32 as f64),
        Value::Real(r) => Value::RelTime(r),
        Value::AbsTime(t) => Value::RelTime(t.secs as f64),
        v @ Value::RelTime(_) => v,
        Value::String(s) => match parse_rel_time(&s) {
            Some(r) => Value::RelTime(r),
            None => Value::Error,
        },
        _ => Value::Error,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Year,
    Month,
    DayOfYear,
    DayOfMonth,
    DayOfWeek,
    Days,
    Hours,
    Minutes,
    Seconds,
}

/// `getYear(t)` and friends: fields of an absolute time (in local time) or
/// a relative time.
pub(super) fn get_field(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr], f: Field) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match ev.eval_in(ctx, a) {
        Value::AbsTime(t) => {
            let (y, mo, d, h, mi, s, wday, yday) = broken_down(AbsTime {
                secs: t.secs,
                offset: LOCAL_OFFSET,
            });
            Value::Int(match f {
                Field::Year => y,
                Field::Month => mo as i64,
                Field::DayOfYear => yday as i64,
                Field::DayOfMonth => d as i64,
                Field::DayOfWeek => wday as i64,
                Field::Hours => h as i64,
                Field::Minutes => mi as i64,
                Field::Seconds => s as i64,
                Field::Days => return Value::Error,
            })
        }
        Value::RelTime(r) => {
            let secs = f64_to_i64(r);
            Value::Int(match f {
                Field::Days => secs / 86400,
                Field::Hours => secs % 86400 / 3600,
                Field::Minutes => secs % 3600 / 60,
                Field::Seconds => secs % 60,
                _ => return Value::Error,
            })
        }
        _ => Value::Error,
    }
}

fn insert(ad: &mut ClassAd, name: &str, v: Value) {
    // The names are fixed; interning fails only when a hostile peer has
    // filled the interner, and then the field is left out.
    if let Ok(name) = Name::new(name) {
        ad.insert(name, Expr::Literal(v));
    }
}

/// The broken-down form of a time, as `splitTime` gives it; `None` for
/// values that are not times.
fn split(v: &Value) -> Option<ClassAd> {
    let mut ad = ClassAd::with_capacity(8);
    let t = match v {
        Value::Int(i) => AbsTime {
            secs: *i as i32 as i64,
            offset: LOCAL_OFFSET,
        },
        Value::Real(r) => AbsTime {
            secs: f64_to_i32(*r) as i64,
            offset: LOCAL_OFFSET,
        },
        Value::AbsTime(t) => *t,
        Value::RelTime(r) => {
            let (neg, r) = if *r < 0.0 { (true, -r) } else { (false, *r) };
            let whole = f64_to_i32(r) as i64;
            let (mut days, mut hours, mut mins) =
                (whole / 86400, whole % 86400 / 3600, whole % 3600 / 60);
            let mut secs = (whole % 60) as f64 + (r - r.floor());
            if neg {
                if days > 0 {
                    days = -days;
                } else if hours > 0 {
                    hours = -hours;
                } else if mins > 0 {
                    mins = -mins;
                } else {
                    secs = -secs;
                }
            }
            // In the order HTCondor's ads list them.
            insert(&mut ad, "Days", Value::Int(days));
            insert(&mut ad, "Type", Value::string("RelativeTime"));
            insert(&mut ad, "Hours", Value::Int(hours));
            insert(&mut ad, "Minutes", Value::Int(mins));
            insert(&mut ad, "Seconds", Value::Real(secs));
            return Some(ad);
        }
        _ => return None,
    };
    let (y, mo, d, h, mi, s, _, _) = broken_down(t);
    insert(&mut ad, "Day", Value::Int(d as i64));
    insert(&mut ad, "Type", Value::string("AbsoluteTime"));
    insert(&mut ad, "Year", Value::Int(y));
    insert(&mut ad, "Hours", Value::Int(h as i64));
    insert(&mut ad, "Month", Value::Int(mo as i64));
    insert(&mut ad, "Offset", Value::Int(t.offset as i64));
    insert(&mut ad, "Minutes", Value::Int(mi as i64));
    insert(&mut ad, "Seconds", Value::Int(s as i64));
    Some(ad)
}

/// `splitTime(t)`: an ad of the fields of an absolute or relative time.
pub(super) fn split_time(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match ev.eval_in(ctx, a) {
        Value::Undefined => Value::Undefined,
        v => match split(&v) {
            Some(ad) => Value::Ad(AdValue::new(Arc::new(ad))),
            None => Value::Error,
        },
    }
}

/// A C `struct tm`, as `formatTime` fills it in.
struct Tm {
    year: i64,
    /// 0-based.
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    wday: i64,
    /// 0-based.
    yday: i64,
}

impl Tm {
    /// From the fields of a date; the day of the week and of the year are
    /// computed from them.
    fn new(year: i64, mon: i64, mday: i64, hour: i64, min: i64, sec: i64) -> Tm {
        let days = Tm::days(year, mon, mday);
        Tm {
            year,
            mon,
            mday,
            hour,
            min,
            sec,
            wday: (days + 4).rem_euclid(7),
            yday: days - days_from_civil(year.clamp(-1_000_000, 1_000_000), 1, 1),
        }
    }

    /// Days since the epoch of a (possibly denormal) date.
    fn days(year: i64, mon: i64, mday: i64) -> i64 {
        let y = (year + mon.div_euclid(12)).clamp(-1_000_000, 1_000_000);
        let m = mon.rem_euclid(12) as u32 + 1;
        days_from_civil(y, m, 1) + mday.clamp(-1_000_000_000, 1_000_000_000) - 1
    }

    fn epoch_secs(&self) -> i64 {
        Tm::days(self.year, self.mon, self.mday) * 86400
            + self.hour.clamp(-1 << 40, 1 << 40) * 3600
            + self.min.clamp(-1 << 40, 1 << 40) * 60
            + self.sec.clamp(-1 << 40, 1 << 40)
    }
}

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// ISO 8601 week-based year and week number.
fn iso_week(tm: &Tm) -> (i64, i64) {
    // Days in the ISO year before its first Monday-based week.
    fn iso_week_days(yday: i64, wday: i64) -> i64 {
        // 14 keeps the dividend positive (yday - wday >= -6).
        yday - (yday - wday + 4 + 14) % 7 + 3
    }
    let is_leap = |y: i64| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let mut year = tm.year;
    let mut days = iso_week_days(tm.yday, tm.wday);
    if days < 0 {
        year -= 1;
        days = iso_week_days(tm.yday + if is_leap(year) { 366 } else { 365 }, tm.wday);
    } else {
        let d = iso_week_days(tm.yday - if is_leap(year) { 366 } else { 365 }, tm.wday);
        if d >= 0 {
            year += 1;
            days = d;
        }
    }
    (year, days / 7 + 1)
}

/// C's `strftime` in the C locale, with glibc's flags (`_ - 0 ^ #`), field
/// widths and `E`/`O` modifiers.
fn strftime(fmt: &str, tm: &Tm) -> String {
    let mut out = String::new();
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            // Copy up to the next conversion.
            let next = fmt[i..].find('%').map_or(b.len(), |n| i + n);
            out.push_str(&fmt[i..next]);
            i = next;
            continue;
        }
        let start = i;
        i += 1;
        let mut flag = None;
        let (mut upper, mut swap) = (false, false);
        while let Some(&c) = b.get(i) {
            match c {
                b'_' | b'-' | b'0' => flag = Some(c),
                b'^' => upper = true,
                b'#' => swap = true,
                _ => break,
            }
            i += 1;
        }
        let mut width: Option<usize> = None;
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            width = Some((width.unwrap_or(0) * 10 + (c - b'0') as usize).min(1024));
            i += 1;
        }
        while matches!(b.get(i), Some(b'E' | b'O')) {
            i += 1;
        }
        let Some(conv) = fmt[i..].chars().next() else {
            out.push_str(&fmt[start..]);
            break;
        };
        i += conv.len_utf8();
        let num = |out: &mut String, v: i64, dw: usize, dpad: char| {
            let (pad, w) = match flag {
                Some(b'-') => (' ', width.unwrap_or(0)),
                Some(b'_') => (' ', width.unwrap_or(dw)),
                Some(b'0') => ('0', width.unwrap_or(dw)),
                _ => (
                    if width.is_some() { '0' } else { dpad },
                    width.unwrap_or(dw),
                ),
            };
            let digits = v.unsigned_abs().to_string();
            let len = digits.len() + (v < 0) as usize;
            if pad == '0' {
                if v < 0 {
                    out.push('-');
                }
                out.extend(std::iter::repeat_n('0', w.saturating_sub(len)));
            } else {
                out.extend(std::iter::repeat_n(' ', w.saturating_sub(len)));
                if v < 0 {
                    out.push('-');
                }
            }
            out.push_str(&digits);
        };
        let text = |out: &mut String, s: &str, to_upper: bool| {
            let s = if to_upper || upper {
                s.to_ascii_uppercase()
            } else {
                s.to_owned()
            };
            let pad = if flag == Some(b'0') { '0' } else { ' ' };
            out.extend(std::iter::repeat_n(
                pad,
                width.unwrap_or(0).saturating_sub(s.len()),
            ));
            out.push_str(&s);
        };
        let name = |names: &[&'static str], i: i64, short: bool| -> String {
            match usize::try_from(i).ok().and_then(|i| names.get(i)) {
                Some(n) if short => n[..3].to_owned(),
                Some(n) => (*n).to_owned(),
                None => "?".to_owned(),
            }
        };
        let hour12 = if tm.hour % 12 == 0 { 12 } else { tm.hour % 12 };
        match conv {
            'a' => text(&mut out, &name(&DAYS, tm.wday, true), swap),
            'A' => text(&mut out, &name(&DAYS, tm.wday, false), swap),
            'b' | 'h' => text(&mut out, &name(&MONTHS, tm.mon, true), swap),
            'B' => text(&mut out, &name(&MONTHS, tm.mon, false), swap),
            'p' => text(&mut out, if tm.hour >= 12 { "PM" } else { "AM" }, false),
            'P' => text(&mut out, if tm.hour >= 12 { "pm" } else { "am" }, false),
            'Z' => text(&mut out, "UTC", false),
            'z' => text(&mut out, "+0000", false),
            'n' => text(&mut out, "\n", false),
            't' => text(&mut out, "\t", false),
            '%' => text(&mut out, "%", false),
            'c' | 'x' | 'X' | 'D' | 'T' | 'R' | 'F' | 'r' => {
                let inner = match conv {
                    'c' => "%a %b %e %H:%M:%S %Y",
                    'x' | 'D' => "%m/%d/%y",
                    'X' | 'T' => "%H:%M:%S",
                    'R' => "%H:%M",
                    'F' => "%Y-%m-%d",
                    _ => "%I:%M:%S %p",
                };
                let s = strftime(inner, tm);
                text(&mut out, &s, false);
            }
            'C' => num(&mut out, tm.year.div_euclid(100), 2, '0'),
            'd' => num(&mut out, tm.mday, 2, '0'),
            'e' => num(&mut out, tm.mday, 2, ' '),
            'H' => num(&mut out, tm.hour, 2, '0'),
            'I' => num(&mut out, hour12, 2, '0'),
            'k' => num(&mut out, tm.hour, 2, ' '),
            'l' => num(&mut out, hour12, 2, ' '),
            'j' => num(&mut out, tm.yday + 1, 3, '0'),
            'm' => num(&mut out, tm.mon + 1, 2, '0'),
            'M' => num(&mut out, tm.min, 2, '0'),
            'S' => num(&mut out, tm.sec, 2, '0'),
            's' => num(&mut out, tm.epoch_secs(), 1, '0'),
            'u' => num(&mut out, if tm.wday == 0 { 7 } else { tm.wday }, 1, '0'),
            'w' => num(&mut out, tm.wday, 1, '0'),
            'U' => num(&mut out, (tm.yday + 7 - tm.wday) / 7, 2, '0'),
            'W' => num(&mut out, (tm.yday + 7 - (tm.wday + 6) % 7) / 7, 2, '0'),
            'V' => num(&mut out, iso_week(tm).1, 2, '0'),
            'G' => num(&mut out, iso_week(tm).0, 1, '0'),
            'g' => num(&mut out, iso_week(tm).0.rem_euclid(100), 2, '0'),
            'y' => num(&mut out, tm.year.rem_euclid(100), 2, '0'),
            'Y' => num(&mut out, tm.year, 1, '0'),
            _ => out.push_str(&fmt[start..i]),
        }
        if out.len() > super::MAX_STRING_LEN {
            break;
        }
    }
    out
}

/// An integer field of an ad given to `formatTime`, if it has one.
fn int_field(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, av: &Arc<AdValue>, name: &str) -> Option<i64> {
    let key = Name::new(name).ok()?.folded();
    match ev.select(ctx, Value::Ad(av.clone()), key) {
        Value::Int(i) => Some(i as i32 as i64),
        _ => None,
    }
}

/// `formatTime([t [, format]])`: `strftime` of a time (default now) with a
/// format (default `%c`).
pub(super) fn format_time(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.len() > 2 {
        return Value::Error;
    }
    let arg = match args.first() {
        Some(a) => ev.eval_in(ctx, a),
        None => now(ev),
    };
    let av = match &arg {
        Value::Ad(av) => av.clone(),
        Value::RelTime(_) => return Value::Error,
        v => match split(v) {
            Some(ad) => AdValue::new(Arc::new(ad)),
            None => return Value::Error,
        },
    };
    let mut field = |name| int_field(ev, ctx, &av, name);
    // As in HTCondor, a missing year is 1900 and a missing month January.
    let year = field("Year").unwrap_or(1900);
    let mon = field("Month").map_or(0, |m| m - 1);
    let day = field("Day").unwrap_or(0);
    let hours = field("Hours").unwrap_or(0);
    let minutes = field("Minutes").unwrap_or(0);
    let seconds = field("Seconds").unwrap_or(0);
    let tm = Tm::new(year, mon, day, hours, minutes, seconds);
    let format = match args.get(1) {
        None => "%c".into(),
        Some(f) => match ev.eval_in(ctx, f) {
            Value::String(s) => s,
            _ => return Value::Error,
        },
    };
    if !super::charge_bytes(ev, format.len() * 8) {
        return Value::Error;
    }
    string_result(strftime(&format, &tm))
}

/// `interval(seconds)`: `[days+]hh:mm:ss` with leading zero fields left
/// out.
pub(super) fn interval(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let Value::Int(total) = to_int_value(&ev.eval_in(ctx, a)) else {
        return Value::Error;
    };
    // HTCondor takes the seconds as a C int.
    let total = total as i32 as i64;
    let days = total / 86400;
    let rest = total % 86400;
    let (hours, mins, secs) = (rest / 3600, rest % 3600 / 60, rest % 60);
    let mut out = String::new();
    let _ = if days != 0 {
        write!(
            out,
            "{days}+{:02}:{:02}:{:02}",
            hours.abs(),
            mins.abs(),
            secs.abs()
        )
    } else if hours != 0 {
        write!(out, "{hours}:{:02}:{:02}", mins.abs(), secs.abs())
    } else if mins != 0 {
        write!(out, "{mins}:{:02}", secs.abs())
    } else {
        write!(out, "{secs}")
    };
    Value::String(out.into())
}
