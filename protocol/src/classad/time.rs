//! Absolute and relative times: parsing the strings `absTime` and `relTime`
//! accept, and printing them the way HTCondor unparses them.

use super::value::AbsTime;

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The date of a day number since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Broken-down local time of an absolute time: (year, month, day, hour,
/// minute, second, weekday 0=Sunday, day of year 0-based).
pub(crate) fn broken_down(t: AbsTime) -> (i64, u32, u32, u32, u32, u32, u32, u32) {
    let local = t.secs + t.offset as i64;
    let days = local.div_euclid(86400);
    let rem = local.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    let wday = (days + 4).rem_euclid(7) as u32;
    let yday = (days - days_from_civil(y, 1, 1)) as u32;
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
        wday,
        yday,
    )
}

/// ISO 8601 text of an absolute time, as HTCondor unparses it:
/// `2020-06-01T12:34:56-05:30` (UTC shows as `-00:00`).
pub fn format_abs_time(t: AbsTime) -> String {
    let (y, mo, d, h, mi, s, _, _) = broken_down(t);
    let off = t.offset;
    let sign = if off > 0 { '+' } else { '-' };
    let a = off.unsigned_abs();
    format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{sign}{:02}:{:02}",
        a / 3600,
        a % 3600 / 60
    )
}

/// `[-][D+][HH:][MM:]SS[.fff]`, as HTCondor unparses a relative time.
pub fn format_rel_time(secs: f64) -> String {
    let mut out = String::new();
    let mut v = secs;
    if v < 0.0 {
        out.push('-');
        v = -v;
    }
    let whole = v.trunc();
    let frac = v - whole;
    let whole = whole as i64;
    let days = whole / 86400;
    let hours = whole % 86400 / 3600;
    let mins = whole % 3600 / 60;
    let s = whole % 60;
    let secs_text = if frac != 0.0 {
        let text = format!("{}", s as f64 + frac);
        text
    } else {
        format!("{s:02}")
    };
    if days > 0 {
        out.push_str(&format!("{days}+{hours:02}:{mins:02}:{secs_text}"));
    } else if hours > 0 {
        out.push_str(&format!("{hours:02}:{mins:02}:{secs_text}"));
    } else if mins > 0 {
        out.push_str(&format!("{mins:02}:{secs_text}"));
    } else {
        out.push_str(&secs_text);
    }
    out
}

fn digits(s: &[u8], n: usize) -> Option<(i64, &[u8])> {
    if s.len() < n || !s[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = std::str::from_utf8(&s[..n]).ok()?.parse().ok()?;
    Some((v, &s[n..]))
}

/// Parses the ISO 8601 forms HTCondor's `absTime` accepts:
/// `YYYY-MM-DD[(T| )HH:MM[:SS]][Z|±HH[:]MM]` and the basic forms without
/// separators. A time without a zone is taken as UTC.
pub fn parse_abs_time(text: &str) -> Option<AbsTime> {
    let s = text.trim().as_bytes();
    let (y, mut s) = digits(s, 4)?;
    let skip = |s: &mut &[u8], c: u8| {
        if s.first() == Some(&c) {
            *s = &s[1..];
        }
    };
    skip(&mut s, b'-');
    let (mo, rest) = digits(s, 2)?;
    s = rest;
    skip(&mut s, b'-');
    let (d, rest) = digits(s, 2)?;
    s = rest;
    let (mut h, mut mi, mut sec) = (0, 0, 0);
    if matches!(s.first(), Some(b'T' | b't' | b' ')) {
        s = &s[1..];
        let (v, rest) = digits(s, 2)?;
        h = v;
        s = rest;
        skip(&mut s, b':');
        let (v, rest) = digits(s, 2)?;
        mi = v;
        s = rest;
        skip(&mut s, b':');
        if let Some((v, rest)) = digits(s, 2) {
            sec = v;
            s = rest;
        }
    }
    let mut offset = 0i64;
    match s.first() {
        None => {}
        Some(b'Z' | b'z') => s = &s[1..],
        Some(&c @ (b'+' | b'-')) => {
            s = &s[1..];
            let (oh, rest) = digits(s, 2)?;
            s = rest;
            skip(&mut s, b':');
            let (om, rest) = digits(s, 2).unwrap_or((0, s));
            s = rest;
            offset = (oh * 3600 + om * 60) * if c == b'-' { -1 } else { 1 };
        }
        Some(_) => return None,
    }
    if !s.is_empty()
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
        || h > 23
        || mi > 59
        || sec > 60
    {
        return None;
    }
    let local = days_from_civil(y, mo as u32, d as u32) * 86400 + h * 3600 + mi * 60 + sec;
    Some(AbsTime {
        secs: local - offset,
        offset: offset as i32,
    })
}

/// Parses the forms HTCondor's `relTime` accepts: `[-][D+][HH:[MM:]]SS[.f]`
/// and `[-]NdNhNmNs` (any subset, in that order, spaces allowed).
pub fn parse_rel_time(text: &str) -> Option<f64> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, t),
    };
    if t.is_empty() {
        return None;
    }
    let v = if t
        .bytes()
        .any(|c| matches!(c.to_ascii_lowercase(), b'd' | b'h' | b'm' | b's'))
    {
        let mut total = 0.0;
        let mut num = String::new();
        let mut last_unit = 0;
        for c in t.chars() {
            match c.to_ascii_lowercase() {
                '0'..='9' | '.' => num.push(c),
                ' ' => {}
                u @ ('d' | 'h' | 'm' | 's') => {
                    let rank = match u {
                        'd' => 1,
                        'h' => 2,
                        'm' => 3,
                        _ => 4,
                    };
                    if num.is_empty() || rank <= last_unit {
                        return None;
                    }
                    last_unit = rank;
                    let n: f64 = num.parse().ok()?;
                    num.clear();
                    total += n * match u {
                        'd' => 86400.0,
                        'h' => 3600.0,
                        'm' => 60.0,
                        _ => 1.0,
                    };
                }
                _ => return None,
            }
        }
        if !num.is_empty() {
            return None;
        }
        total
    } else {
        let (days, rest) = match t.split_once('+') {
            Some((d, rest)) => (d.trim().parse::<u64>().ok()? as f64, rest),
            None => (0.0, t),
        };
        let parts: Vec<&str> = rest.split(':').collect();
        if parts.len() > 3 {
            return None;
        }
        let mut total = days * 86400.0;
        let n = parts.len();
        for (i, p) in parts.iter().enumerate() {
            let p = p.trim();
            if p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
                return None;
            }
            let v: f64 = p.parse().ok()?;
            let scale = match n - 1 - i {
                0 => 1.0,
                1 => 60.0,
                _ => 3600.0,
            };
            if i + 1 < n && p.contains('.') {
                return None;
            }
            total += v * scale;
        }
        total
    };
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rel_times_print_like_htcondor() {
        assert_eq!(format_rel_time(90.0), "01:30");
        assert_eq!(format_rel_time(-90.0), "-01:30");
        assert_eq!(format_rel_time(86400.0), "1+00:00:00");
        assert_eq!(format_rel_time(0.0), "00");
        assert_eq!(format_rel_time(7200.0), "02:00:00");
        assert_eq!(format_rel_time(1.5), "1.5");
        assert_eq!(format_rel_time(-86401.25), "-1+00:00:1.25");
    }

    #[test]
    fn rel_times_parse_both_forms() {
        assert_eq!(parse_rel_time("1d2h3m4.5s"), Some(93784.5));
        assert_eq!(parse_rel_time("1+02:03:4.5"), Some(93784.5));
        assert_eq!(parse_rel_time("5m 3s"), Some(303.0));
        assert_eq!(parse_rel_time("-90"), Some(-90.0));
        assert_eq!(parse_rel_time("bad"), None);
    }

    #[test]
    fn abs_times_round_trip() {
        let t = parse_abs_time("2020-06-01T12:34:56-05:30").unwrap();
        assert_eq!(format_abs_time(t), "2020-06-01T12:34:56-05:30");
        assert_eq!(t.secs, 1591034696);
        let z = parse_abs_time("20200601T123456Z").unwrap();
        assert_eq!(format_abs_time(z), "2020-06-01T12:34:56-00:00");
        assert_eq!(parse_abs_time("bad"), None);
    }
}
