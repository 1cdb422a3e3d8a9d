//! The macro functions of HTCondor's submit language: `$INT`, `$REAL`,
//! `$STRING`, `$EVAL`, `$F…`, `$BASENAME` and `$DIRNAME` (parts of a file
//! name), `$SUBSTR`, `$CHOICE`, `$RANDOM_CHOICE`, `$RANDOM_INTEGER` and
//! `$ENV`. Each takes its body already split from
//! the text (`Process,%03d` for `$INT(Process,%03d)`) and a lookup of
//! macros; it returns the text to put in place, or the problem in words,
//! as `condor_submit` would report it.

/// Which function a `$NAME(` opens, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Function {
    Env,
    Int,
    Real,
    Substr,
    Choice,
    RandomChoice,
    RandomInteger,
    String,
    Eval,
    Basename,
    Dirname,
    /// `$F` and its modifier letters.
    File,
}

impl Function {
    /// The function named `name` (what comes between `$` and `(`).
    pub(crate) fn named(name: &str) -> Option<Function> {
        Some(match name {
            "ENV" => Function::Env,
            "INT" => Function::Int,
            "REAL" => Function::Real,
            "SUBSTR" => Function::Substr,
            "CHOICE" => Function::Choice,
            "RANDOM_CHOICE" => Function::RandomChoice,
            "RANDOM_INTEGER" => Function::RandomInteger,
            "STRING" => Function::String,
            "EVAL" => Function::Eval,
            "BASENAME" => Function::Basename,
            "DIRNAME" => Function::Dirname,
            f if f.starts_with('F')
                && f[1..]
                    .chars()
                    .all(|c| "pnxdqabfwu".contains(c.to_ascii_lowercase())) =>
            {
                Function::File
            }
            _ => return None,
        })
    }
}

/// An integer as HTCondor reads one: digits, else a ClassAd expression
/// of constants that evaluates to a number.
pub(crate) fn integer(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Some(i);
    }
    match constant(t)? {
        crate::classad::Value::Int(i) => Some(i),
        crate::classad::Value::Real(r) if r.is_finite() => Some(r as i64),
        crate::classad::Value::Bool(b) => Some(i64::from(b)),
        _ => None,
    }
}

/// A real as HTCondor reads one (see [`integer`]).
pub(crate) fn real(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Ok(r) = t.parse::<f64>() {
        return r.is_finite().then_some(r);
    }
    match constant(t)? {
        crate::classad::Value::Int(i) => Some(i as f64),
        crate::classad::Value::Real(r) if r.is_finite() => Some(r),
        _ => None,
    }
}

/// `$EVAL`: the value of a ClassAd expression of constants, a string as
/// itself and anything else as ClassAd text; `None` when it does not parse.
pub(crate) fn evaluate(text: &str) -> Option<String> {
    Some(match constant(text)? {
        crate::classad::Value::String(s) => s.to_string(),
        other => crate::classad::unparse_value(&other),
    })
}

/// `$STRING`: the value when it is a ClassAd expression that evaluates to
/// a string, else the text itself.
pub(crate) fn string(text: &str) -> String {
    match constant(text) {
        Some(crate::classad::Value::String(s)) => s.to_string(),
        _ => text.to_owned(),
    }
}

/// `printf` of one string with a format such as `%s` or `%-10s`.
pub(crate) fn format_string(format: &str, value: &str) -> Option<String> {
    let (before, spec, after) = one_conversion(format)?;
    if spec.conversion != 's' {
        return None;
    }
    let body: String = match spec.precision {
        Some(p) => value.chars().take(p).collect(),
        None => value.to_owned(),
    };
    let spec = Spec {
        zero: false,
        ..spec
    };
    Some(format!("{before}{}{after}", spec.pad(body)))
}

/// `$BASENAME(path[, suffix])`: the file name, without `suffix` when it
/// ends with it (case aside).
pub(crate) fn basename(path: &str, suffix: Option<&str>) -> String {
    let name = file_parts("nx", path, std::path::Path::new(""));
    match suffix.map(str::trim).filter(|s| !s.is_empty()) {
        Some(suffix)
            if name.len() > suffix.len()
                && name.is_char_boundary(name.len() - suffix.len())
                && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix) =>
        {
            name[..name.len() - suffix.len()].to_owned()
        }
        _ => name,
    }
}

fn constant(text: &str) -> Option<crate::classad::Value> {
    let expr = crate::classad::parse_expr(text).ok()?;
    Some(crate::classad::eval_expr(&expr))
}

/// `printf` of one integer with a format such as `%03d`, `%x` or
/// `run%d`; `None` for a format that is not one integer conversion.
pub(crate) fn format_int(format: &str, value: i64) -> Option<String> {
    let (before, spec, after) = one_conversion(format)?;
    let body = match spec.conversion {
        'd' | 'i' => value.to_string(),
        'u' => (value as u64).to_string(),
        'x' => format!("{value:x}"),
        'X' => format!("{value:X}"),
        'o' => format!("{value:o}"),
        _ => return None,
    };
    Some(format!("{before}{}{after}", spec.pad(body)))
}

/// `printf` of one real with a format such as `%.2f` or `%e`; HTCondor
/// then makes sure the result has a decimal point.
pub(crate) fn format_real(format: &str, value: f64) -> Option<String> {
    let (before, spec, after) = one_conversion(format)?;
    let precision = spec.precision.unwrap_or(6);
    let body = match spec.conversion {
        'f' | 'F' => format!("{value:.precision$}"),
        'e' | 'E' => {
            let s = format!("{value:.precision$e}");
            // C writes the exponent with a sign and two digits.
            let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let sign = if exp < 0 { '-' } else { '+' };
            let text = format!("{mantissa}e{sign}{:02}", exp.abs());
            if spec.conversion == 'E' {
                text.to_uppercase()
            } else {
                text
            }
        }
        'g' | 'G' => general(value, spec.precision.unwrap_or(6)),
        _ => return None,
    };
    let mut out = format!("{before}{}{after}", spec.pad(body));
    if !out.contains('.') {
        out.push_str(".0");
    }
    Some(out)
}

/// `%.NG`: the shorter of fixed and exponent forms, trailing zeros gone.
pub(crate) fn general(value: f64, precision: usize) -> String {
    if value == 0.0 {
        return "0".to_owned();
    }
    let precision = precision.max(1);
    let exp = value.abs().log10().floor() as i32;
    if exp < -4 || exp >= precision as i32 {
        let s = format!("{:.*e}", precision - 1, value);
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = trim_zeros(m);
        let e: i32 = e.parse().unwrap_or(0);
        format!("{m}E{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{value:.decimals$}")).to_owned()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

struct Spec {
    left: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    conversion: char,
}

impl Spec {
    fn pad(&self, body: String) -> String {
        let len = body.chars().count();
        if len >= self.width {
            return body;
        }
        let fill = self.width - len;
        if self.left {
            format!("{body}{}", " ".repeat(fill))
        } else if self.zero {
            match body.strip_prefix('-') {
                Some(digits) => format!("-{}{digits}", "0".repeat(fill)),
                None => format!("{}{body}", "0".repeat(fill)),
            }
        } else {
            format!("{}{body}", " ".repeat(fill))
        }
    }
}

/// The text before, the one `%` conversion, and the text after (`%%` is
/// a literal percent sign).
fn one_conversion(format: &str) -> Option<(String, Spec, String)> {
    let mut before = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            before.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            before.push('%');
            continue;
        }
        let mut spec = Spec {
            left: false,
            zero: false,
            width: 0,
            precision: None,
            conversion: ' ',
        };
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.left = true,
                '0' => spec.zero = true,
                '+' | ' ' | '#' => {}
                _ => break,
            }
            chars.next();
        }
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            spec.width = (spec.width * 10 + d as usize).min(64);
            chars.next();
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = 0;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                p = (p * 10 + d as usize).min(64);
                chars.next();
            }
            spec.precision = Some(p);
        }
        while matches!(chars.peek(), Some('l' | 'h' | 'L' | 'q' | 'j' | 'z')) {
            chars.next();
        }
        spec.conversion = chars.next()?;
        let after: String = chars.collect();
        if after.replace("%%", "").contains('%') {
            return None;
        }
        return Some((before, spec, after.replace("%%", "%")));
    }
    None
}

/// `$F…(path)`: the parts of a file name the modifier letters keep.
/// `cwd` makes a relative path full for `f`.
pub(crate) fn file_parts(modifiers: &str, path: &str, cwd: &std::path::Path) -> String {
    let mut parts = 0u8;
    let mut dirs = 0usize;
    let (mut quoted, mut full, mut bare, mut arg_quote) = (false, false, false, false);
    for c in modifiers.chars() {
        match c.to_ascii_lowercase() {
            'x' => parts |= 1,
            'n' => parts |= 2,
            'p' => parts |= 4,
            'd' => {
                parts |= 8;
                dirs += 1;
            }
            'a' => arg_quote = true,
            'b' => bare = true,
            'f' => full = true,
            'q' => quoted = true,
            _ => {}
        }
    }
    let unquoted = path
        .trim()
        .strip_prefix('"')
        .and_then(|p| p.strip_suffix('"'))
        .unwrap_or(path.trim());
    let path = if full && !unquoted.starts_with('/') {
        cwd.join(unquoted).to_string_lossy().into_owned()
    } else {
        unquoted.to_owned()
    };
    let name_at = path.rfind('/').map_or(0, |i| i + 1);
    let ext_at = match path[name_at..].rfind('.') {
        Some(0) | None => path.len(),
        Some(i) => name_at + i,
    };
    if name_at == 0 && parts & 3 != 0 {
        parts &= !(4 | 8);
    }
    let end = path.len();
    let piece: &str = match parts & 0xF {
        1 => {
            let from = if bare && ext_at < end {
                ext_at + 1
            } else {
                ext_at
            };
            &path[from..]
        }
        3 => &path[name_at..],
        2 => &path[name_at..ext_at],
        0 | 7 | 5 => &path,
        4 => {
            let to = if bare && name_at > 0 {
                name_at - 1
            } else {
                name_at
            };
            &path[..to]
        }
        6 => &path[..ext_at],
        _ => {
            if name_at == 0 {
                ""
            } else {
                // The last `dirs` directories, then what n and x keep.
                let head = &path[..name_at - 1];
                let mut start = head.len();
                for _ in 0..dirs {
                    start = head[..start].rfind('/').unwrap_or(0);
                    if start == 0 {
                        break;
                    }
                }
                let start = if start > 0 { start + 1 } else { 0 };
                match parts & 3 {
                    2 => &path[start..ext_at],
                    0 => {
                        let to = if bare { name_at - 1 } else { name_at };
                        &path[start..to]
                    }
                    _ => &path[start..],
                }
            }
        }
    };
    if quoted {
        let q = if arg_quote { '\'' } else { '"' };
        format!("{q}{piece}{q}")
    } else {
        piece.to_owned()
    }
}

/// The `index`th item of a comma-separated list, trimmed.
pub(crate) fn nth_item(list: &str, index: usize) -> Option<String> {
    list.split(',').nth(index).map(|s| s.trim().to_owned())
}

/// A random number below `n` (n > 0).
pub(crate) fn random_below(n: u64) -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0;
    }
    u64::from_le_bytes(bytes) % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn integers_format_as_printf_does() {
        assert_eq!(format_int("%03d", 7).as_deref(), Some("007"));
        assert_eq!(format_int("%x", 255).as_deref(), Some("ff"));
        assert_eq!(format_int("run%d.dat", 3).as_deref(), Some("run3.dat"));
        assert_eq!(format_int("%-3d|", 5).as_deref(), Some("5  |"));
        assert_eq!(format_int("%s", 5), None);
        assert_eq!(integer("2 * 3"), Some(6));
        assert_eq!(integer("abc"), None);
    }

    #[test]
    fn reals_format_as_printf_does() {
        assert_eq!(format_real("%.2f", 1.255).as_deref(), Some("1.25"));
        assert_eq!(format_real("%.0f", 3.0).as_deref(), Some("3.0"));
        assert_eq!(general(2.5, 16), "2.5");
        assert_eq!(general(2.0, 16), "2");
        assert_eq!(general(1e20, 16), "1E+20");
    }

    #[test]
    fn string_eval_basename_and_dirname() {
        assert_eq!(evaluate("1 + 2").as_deref(), Some("3"));
        assert_eq!(evaluate("strcat(\"a\", \"b\")").as_deref(), Some("ab"));
        assert_eq!(string("\"quoted\""), "quoted");
        assert_eq!(string("plain words"), "plain words");
        assert_eq!(format_string("[%-4s]", "ab").as_deref(), Some("[ab  ]"));
        assert_eq!(basename("/d/file.tar.gz", Some(".tar.gz")), "file");
        assert_eq!(basename("/d/file.tar.gz", None), "file.tar.gz");
        assert_eq!(file_parts("p", "/d/e/f.txt", Path::new("/")), "/d/e/");
    }

    #[test]
    fn file_parts_keep_what_the_letters_say() {
        let cwd = Path::new("/home/a");
        let p = "dir/file.tar.gz";
        assert_eq!(file_parts("n", p, cwd), "file.tar");
        assert_eq!(file_parts("x", p, cwd), ".gz");
        assert_eq!(file_parts("nx", p, cwd), "file.tar.gz");
        assert_eq!(file_parts("p", p, cwd), "dir/");
        assert_eq!(file_parts("pb", p, cwd), "dir");
        assert_eq!(file_parts("q", "a.txt", cwd), "\"a.txt\"");
        assert_eq!(file_parts("d", "/x/y/z.dat", cwd), "y/");
        assert_eq!(file_parts("db", "/x/y/z.dat", cwd), "y");
        assert_eq!(file_parts("fp", "a/b.c", cwd), "/home/a/a/");
        assert_eq!(file_parts("n", "plain", cwd), "plain");
    }
}
