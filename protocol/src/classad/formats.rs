//! HTCondor's three ways of writing ads, read and written:
//!
//! - **new**: `[ a = 1; b = "x" ]`, one or more ads;
//! - **long** (HTCondor's "old" format, as `condor_status -l` prints):
//!   `Attr = expr` a line, ads separated by blank lines;
//! - **JSON**: an array of objects (or one object); numbers, strings, booleans,
//!   `null` (undefined), arrays (lists) and objects (nested ads) map directly,
//!   any other expression is a string `"\/Expr(...)\/"`.
//!
//! Long and JSON input are read as streams, one ad at a time, so a file of a
//! million machine ads never has to fit in memory.

use std::io::{self, BufRead, Read, Write};
use std::sync::Arc;

use super::ad::ClassAd;
use super::ast::Expr;
use super::limits::{MAX_AD_ATTRS, MAX_DEPTH, MAX_INPUT_LEN};
use super::name::{Folded, Name};
use super::parser::{parse_ad, parse_expr, ParseError};
use super::unparse::{write_expr, write_name, write_string, RealStyle};
use super::value::Value;

/// One of the three formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    New,
    Long,
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s.to_ascii_lowercase().as_str() {
            "new" => Ok(Format::New),
            "long" | "old" => Ok(Format::Long),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "unknown ad format '{other}' (expected new, long or json)"
            )),
        }
    }
}

/// Why ads could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("{0}")]
    Parse(#[from] ParseError),
    #[error("JSON: {0}")]
    Json(String),
    #[error("line {line}: {message}")]
    Long { line: u64, message: String },
}

/// Guesses the format from the first bytes of the input: `{`, or `[`
/// followed by `{` or `]`, is JSON; `[` otherwise is the new syntax;
/// anything else is the long format.
pub fn detect(prefix: &[u8]) -> Format {
    let mut it = prefix.iter().copied().filter(|b| !b.is_ascii_whitespace());
    match it.next() {
        Some(b'{') => Format::Json,
        Some(b'[') => match it.next() {
            Some(b'{') | Some(b']') => Format::Json,
            _ => Format::New,
        },
        _ => Format::Long,
    }
}

/// Reads every ad from `reader` in `format` (or detected when `None`),
/// handing each to `sink` as soon as it is complete. Stops at the first
/// error, which names where it happened.
pub fn read_ads<R: BufRead>(
    mut reader: R,
    format: Option<Format>,
    mut sink: impl FnMut(ClassAd) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let format = match format {
        Some(f) => f,
        None => {
            let buf = reader.fill_buf()?;
            detect(&buf[..buf.len().min(4096)])
        }
    };
    match format {
        Format::Long => {
            let mut long = LongReader::new(reader);
            while let Some(ad) = long.next_ad()? {
                sink(ad)?;
            }
            Ok(())
        }
        Format::Json => read_json(reader, sink),
        Format::New => {
            let mut text = String::new();
            reader
                .take(MAX_INPUT_LEN as u64 + 1)
                .read_to_string(&mut text)?;
            for ad in super::parser::parse_ads(&text)? {
                sink(ad)?;
            }
            Ok(())
        }
    }
}

/// Parses all ads in a string (format detected).
pub fn parse_ads_any(text: &str) -> Result<Vec<ClassAd>, FormatError> {
    let mut ads = Vec::new();
    read_ads(text.as_bytes(), None, |ad| {
        ads.push(ad);
        Ok(())
    })?;
    Ok(ads)
}

/// Parses exactly one ad in any format.
pub fn parse_one_any(text: &str) -> Result<ClassAd, FormatError> {
    let mut ads = parse_ads_any(text)?;
    match ads.len() {
        1 => Ok(ads.pop().expect("one ad")),
        0 => Err(FormatError::Long {
            line: 1,
            message: "no ad found".into(),
        }),
        n => Err(FormatError::Long {
            line: 1,
            message: format!("expected one ad, found {n}"),
        }),
    }
}

/// Reads long-format ads one at a time.
///
/// Long expressions that recur from ad to ad (every machine of a pool
/// advertises the same `START`, `Requirements`, `WithinResourceLimits`…)
/// are parsed once and shared between the ads, as HTCondor's collector does
/// with its ClassAd cache.
pub struct LongReader<R> {
    reader: R,
    /// A line that straddles the end of the reader's buffer, being joined.
    partial: Vec<u8>,
    state: LongState,
}

/// What the long-format reader knows between lines.
struct LongState {
    line_no: u64,
    shared: SharedExprs,
    /// The previous ad's attribute names, in order: the next ad almost
    /// always has the same ones in the same order, so a name is usually
    /// recognised by one comparison with the name at the same position.
    names: Vec<(Box<str>, Name, Folded)>,
    /// Position of the current attribute within its ad.
    position: usize,
}

/// The longest line the long-format reader accepts.
pub const MAX_LINE_LEN: usize = 16 << 20;

/// Expression texts seen more than once, parsed once.
#[derive(Default)]
struct SharedExprs {
    /// Hashes of long texts seen once (a second sighting earns a place).
    seen: rustc_hash::FxHashSet<u64>,
    parsed: rustc_hash::FxHashMap<Box<str>, Arc<Expr>>,
}

impl SharedExprs {
    /// Texts shorter than this are cheaper to parse than to look up.
    const MIN_LEN: usize = 24;
    const MAX_ENTRIES: usize = 4096;

    fn get_or_parse(&mut self, text: &str) -> Result<Attribute, ParseError> {
        if let Some(v) = plain_literal(text) {
            return Ok(Attribute::Own(Expr::Literal(v)));
        }
        if text.len() < Self::MIN_LEN {
            return parse_expr(text).map(Attribute::Own);
        }
        if let Some(e) = self.parsed.get(text) {
            return Ok(Attribute::Shared(e.clone()));
        }
        let expr = Arc::new(parse_expr(text)?);
        let hash = {
            use std::hash::BuildHasher;
            rustc_hash::FxBuildHasher.hash_one(text)
        };
        if !self.seen.insert(hash) {
            if self.parsed.len() >= Self::MAX_ENTRIES {
                self.parsed.clear();
            }
            // A fresh deep copy: its nodes are allocated one after another,
            // so evaluating it touches fewer cache lines than the parse's
            // scattered allocations.
            let compact = Arc::new(Expr::clone(&expr));
            self.parsed.insert(text.into(), compact.clone());
            return Ok(Attribute::Shared(compact));
        } else if self.seen.len() >= 16 * Self::MAX_ENTRIES {
            self.seen.clear();
        }
        Ok(Attribute::Shared(expr))
    }
}

/// A parsed attribute value: the ad's own, or shared with other ads.
enum Attribute {
    Own(Expr),
    Shared(Arc<Expr>),
}

/// The value of a text that is obviously a plain literal (most attributes
/// of a machine ad: `64`, `"X86_64"`, `true`), read without the parser; the
/// parser gives the same value. Anything less obvious returns `None`.
fn plain_literal(text: &str) -> Option<Value> {
    let b = text.as_bytes();
    match b.first()? {
        b'"' => {
            let inner = &text[1..text.len().checked_sub(1).filter(|&e| e >= 1)?];
            (b[b.len() - 1] == b'"'
                && !inner.bytes().any(|c| c == b'"' || c == b'\\' || c == b'\n'))
            .then(|| Value::String(inner.into()))
        }
        b'0'..=b'9' | b'-' => {
            let digits = b.strip_prefix(b"-").unwrap_or(b);
            if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            text.parse::<i64>().ok().map(Value::Int)
        }
        _ if text.eq_ignore_ascii_case("true") => Some(Value::Bool(true)),
        _ if text.eq_ignore_ascii_case("false") => Some(Value::Bool(false)),
        _ if text.eq_ignore_ascii_case("undefined") => Some(Value::Undefined),
        _ => None,
    }
}

impl<R: BufRead> LongReader<R> {
    pub fn new(reader: R) -> LongReader<R> {
        LongReader {
            reader,
            partial: Vec::new(),
            state: LongState {
                line_no: 0,
                shared: SharedExprs::default(),
                names: Vec::new(),
                position: 0,
            },
        }
    }

    /// The next ad, or `None` at the end of input.
    ///
    /// Lines are parsed where they lie in the reader's buffer; only a line
    /// that straddles the buffer's end is copied.
    pub fn next_ad(&mut self) -> Result<Option<ClassAd>, FormatError> {
        let mut ad: Option<ClassAd> = None;
        self.state.position = 0;
        loop {
            let buf = self.reader.fill_buf()?;
            let kind = if buf.is_empty() {
                if self.partial.is_empty() {
                    return Ok(ad);
                }
                self.state.line_no += 1;
                let kind = self.state.line_into(&self.partial, &mut ad);
                self.partial.clear();
                kind?
            } else {
                match memchr::memchr(b'\n', buf) {
                    Some(end) if self.partial.is_empty() => {
                        self.state.line_no += 1;
                        let kind = self.state.line_into(&buf[..end], &mut ad);
                        self.reader.consume(end + 1);
                        kind?
                    }
                    Some(end) => {
                        self.partial.extend_from_slice(&buf[..end]);
                        self.reader.consume(end + 1);
                        self.state.line_no += 1;
                        self.check_partial()?;
                        let kind = self.state.line_into(&self.partial, &mut ad);
                        self.partial.clear();
                        kind?
                    }
                    None => {
                        let n = buf.len();
                        self.partial.extend_from_slice(buf);
                        self.reader.consume(n);
                        self.check_partial()?;
                        continue;
                    }
                }
            };
            if matches!(kind, LineKind::EndOfAd) && ad.is_some() {
                return Ok(ad);
            }
        }
    }

    fn check_partial(&self) -> Result<(), FormatError> {
        if self.partial.len() > MAX_LINE_LEN {
            return Err(self
                .state
                .error(format!("line longer than {MAX_LINE_LEN} bytes")));
        }
        Ok(())
    }
}

impl LongState {
    fn line_into(
        &mut self,
        line: &[u8],
        ad: &mut Option<ClassAd>,
    ) -> Result<LineKind, FormatError> {
        let text = std::str::from_utf8(line)
            .map_err(|e| self.error(format!("not UTF-8 at byte {}", e.valid_up_to())))?
            .trim();
        if text.is_empty() {
            return Ok(LineKind::EndOfAd);
        }
        // HTCondor separates ads in some outputs with a line of dashes
        // (`condor_q -l` of several schedds); comments start with '#'.
        if text.starts_with('#') {
            return Ok(LineKind::Skip);
        }
        if text.bytes().all(|b| b == b'-') {
            return Ok(LineKind::EndOfAd);
        }
        let expected = self.names.len().max(16);
        let current = ad.get_or_insert_with(|| ClassAd::with_capacity(expected));
        match self.attribute(text)? {
            (name, key, Attribute::Own(e)) => current.insert_keyed(name, key, e),
            (name, key, Attribute::Shared(e)) => current.insert_keyed_shared(name, key, e),
        }
        if current.len() > MAX_AD_ATTRS {
            return Err(self.error(format!("ad has more than {MAX_AD_ATTRS} attributes")));
        }
        Ok(LineKind::Attribute)
    }

    /// Interns an attribute name, predicting it from the previous ad.
    fn name(&mut self, text: &str) -> Result<(Name, Folded), FormatError> {
        let at = self.position;
        self.position += 1;
        if let Some((known, name, key)) = self.names.get(at) {
            if **known == *text {
                return Ok((*name, *key));
            }
        }
        let (name, key) = Name::intern(text).map_err(|e| self.error(e.to_string()))?;
        if at < self.names.len() {
            self.names[at] = (text.into(), name, key);
        } else if at < MAX_AD_ATTRS {
            self.names.push((text.into(), name, key));
        }
        Ok((name, key))
    }

    fn error(&self, message: String) -> FormatError {
        FormatError::Long {
            line: self.line_no,
            message,
        }
    }

    fn attribute(&mut self, text: &str) -> Result<(Name, Folded, Attribute), FormatError> {
        let Some(eq) = text.find('=') else {
            return Err(self.error(format!(
                "expected 'Name = expression' but found '{}'",
                excerpt(text)
            )));
        };
        let raw_name = text[..eq].trim();
        let name_text = raw_name
            .strip_prefix('\'')
            .and_then(|n| n.strip_suffix('\''))
            .unwrap_or(raw_name);
        let valid = !name_text.is_empty()
            && (raw_name.starts_with('\'')
                || name_text
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.'));
        if !valid {
            return Err(self.error(format!("'{}' is not an attribute name", excerpt(raw_name))));
        }
        let (name, key) = self.name(name_text)?;
        let rest = &text[eq + 1..];
        let expr_text = rest.trim_start();
        let column_base = eq + 1 + (rest.len() - expr_text.len());
        let expr = self.shared.get_or_parse(expr_text).map_err(|e| {
            self.error(format!(
                "{name_text}: column {}: {}",
                e.column as usize + column_base,
                e.message
            ))
        })?;
        Ok((name, key, expr))
    }
}

/// What one line of long format was.
enum LineKind {
    Attribute,
    Skip,
    /// A blank line or a separator: the end of the current ad, if any.
    EndOfAd,
}

fn excerpt(s: &str) -> String {
    if s.len() <= 60 {
        s.to_owned()
    } else {
        let mut end = 60;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

/// Writes an ad in the long format (ends with a blank line).
pub fn write_long(out: &mut impl Write, ad: &ClassAd) -> io::Result<()> {
    let mut text = String::new();
    for e in ad.iter() {
        write_name(&mut text, e.name);
        text.push_str(" = ");
        write_expr(&mut text, e.expr(), RealStyle::Short);
        text.push('\n');
    }
    text.push('\n');
    out.write_all(text.as_bytes())
}

/// The long-format text of an ad, without the trailing blank line.
pub fn to_long(ad: &ClassAd) -> String {
    let mut buf = Vec::new();
    write_long(&mut buf, ad).expect("writing to memory");
    let mut s = String::from_utf8(buf).expect("utf-8");
    s.pop();
    s
}

// ---- JSON -----------------------------------------------------------------

fn read_json<R: BufRead>(
    reader: R,
    mut sink: impl FnMut(ClassAd) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};

    struct AdsVisitor<'s, F>(&'s mut F, &'s mut Option<FormatError>);

    impl<'de, F: FnMut(ClassAd) -> Result<(), FormatError>> Visitor<'de> for AdsVisitor<'_, F> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array of ads or one ad")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(v) = seq.next_element::<serde_json::Value>()? {
                let ad = json_to_ad(&v, 0).map_err(serde::de::Error::custom)?;
                if let Err(e) = (self.0)(ad) {
                    *self.1 = Some(e);
                    return Err(serde::de::Error::custom("stopped"));
                }
            }
            Ok(())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
            let v: serde_json::Value =
                serde::Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
            let ad = json_to_ad(&v, 0).map_err(serde::de::Error::custom)?;
            if let Err(e) = (self.0)(ad) {
                *self.1 = Some(e);
                return Err(serde::de::Error::custom("stopped"));
            }
            Ok(())
        }
    }

    struct Seed<'s, F>(&'s mut F, &'s mut Option<FormatError>);
    impl<'de, F: FnMut(ClassAd) -> Result<(), FormatError>> DeserializeSeed<'de> for Seed<'_, F> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(AdsVisitor(self.0, self.1))
        }
    }

    let mut stopped = None;
    let mut de = serde_json::Deserializer::from_reader(reader.take(u64::MAX));
    let result = Seed(&mut sink, &mut stopped).deserialize(&mut de);
    if let Some(e) = stopped {
        return Err(e);
    }
    result.map_err(|e| FormatError::Json(e.to_string()))?;
    de.end().map_err(|e| FormatError::Json(e.to_string()))
}

/// Converts one JSON object to an ad.
pub fn json_to_ad(v: &serde_json::Value, depth: u32) -> Result<ClassAd, String> {
    let serde_json::Value::Object(map) = v else {
        return Err("expected an object (an ad)".into());
    };
    if depth > MAX_DEPTH {
        return Err("ads nested too deeply".into());
    }
    if map.len() > MAX_AD_ATTRS {
        return Err(format!("ad has more than {MAX_AD_ATTRS} attributes"));
    }
    let mut ad = ClassAd::with_capacity(map.len());
    for (k, v) in map {
        let (name, key) = Name::intern(k).map_err(|e| format!("{k}: {e}"))?;
        let expr = json_to_expr(v, depth + 1).map_err(|e| format!("{k}: {e}"))?;
        ad.insert_keyed(name, key, expr);
    }
    Ok(ad)
}

fn json_to_expr(v: &serde_json::Value, depth: u32) -> Result<Expr, String> {
    use serde_json::Value as J;
    if depth > MAX_DEPTH {
        return Err("value nested too deeply".into());
    }
    Ok(match v {
        J::Null => Expr::Literal(Value::Undefined),
        J::Bool(b) => Expr::Literal(Value::Bool(*b)),
        J::Number(n) => match n.as_i64() {
            Some(i) => Expr::Literal(Value::Int(i)),
            None => Expr::Literal(Value::Real(n.as_f64().unwrap_or(f64::NAN))),
        },
        J::String(s) => match s.strip_prefix("/Expr(").and_then(|r| r.strip_suffix(")/")) {
            Some(expr) => parse_expr(expr).map_err(|e| format!("in /Expr(...)/: {e}"))?,
            None => Expr::Literal(Value::String(s.as_str().into())),
        },
        J::Array(items) => Expr::list(
            items
                .iter()
                .map(|i| json_to_expr(i, depth + 1))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        J::Object(_) => Expr::Ad(Arc::new(json_to_ad(v, depth + 1)?)),
    })
}

/// Writes ads as a JSON array, as `condor_status -json` does.
pub fn write_json_ads<'a>(
    out: &mut impl Write,
    ads: impl IntoIterator<Item = &'a ClassAd>,
) -> io::Result<()> {
    let mut text = String::from("[\n");
    for (i, ad) in ads.into_iter().enumerate() {
        if i > 0 {
            text.push_str(",\n");
        }
        write_json_ad(&mut text, ad, 1);
        if text.len() > 1 << 16 {
            out.write_all(text.as_bytes())?;
            text.clear();
        }
    }
    text.push_str("\n]\n");
    out.write_all(text.as_bytes())
}

/// The JSON text of one ad.
pub fn to_json(ad: &ClassAd) -> String {
    let mut s = String::new();
    write_json_ad(&mut s, ad, 0);
    s
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether a value has a direct JSON form (others are written as
/// `\/Expr(...)\/`).
fn json_native(v: &Value) -> bool {
    match v {
        Value::Undefined | Value::Bool(_) | Value::Int(_) | Value::String(_) => true,
        Value::Real(r) => r.is_finite(),
        Value::List(items) => items.iter().all(json_native),
        _ => false,
    }
}

/// A JSON array of items, one per line.
fn write_json_items<'i, T: 'i>(
    out: &mut String,
    items: impl Iterator<Item = &'i T>,
    level: usize,
    mut write: impl FnMut(&mut String, &T, usize),
) {
    out.push_str("[\n");
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(out, level + 1);
        write(out, item, level + 1);
    }
    out.push('\n');
    indent(out, level);
    out.push(']');
}

fn write_json_ad(out: &mut String, ad: &ClassAd, level: usize) {
    indent(out, level);
    write_json_ad_body(out, ad, level);
}

fn write_json_ad_body(out: &mut String, ad: &ClassAd, level: usize) {
    out.push_str("{\n");
    for (i, e) in ad.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(out, level + 1);
        write_json_string(out, e.name.as_str());
        out.push_str(": ");
        write_json_expr(out, e.expr(), level + 1);
    }
    out.push('\n');
    indent(out, level);
    out.push('}');
}

fn write_json_expr(out: &mut String, e: &Expr, level: usize) {
    match e {
        Expr::Literal(Value::Undefined) => out.push_str("null"),
        Expr::Literal(Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        Expr::Literal(Value::Int(i)) => out.push_str(&i.to_string()),
        Expr::Literal(Value::Real(r)) if r.is_finite() => {
            out.push_str(&super::unparse::format_real_short(*r))
        }
        Expr::Literal(Value::String(s)) => write_json_string(out, s),
        Expr::List(items) => {
            write_json_items(out, items.iter(), level, |out, item, level| {
                write_json_expr(out, item, level)
            });
        }
        Expr::Literal(Value::List(items)) if items.iter().all(json_native) => {
            write_json_items(out, items.iter(), level, |out, item, level| {
                write_json_expr(out, &Expr::Literal(item.clone()), level)
            });
        }
        Expr::Ad(ad) => write_json_ad_body(out, ad, level),
        other => {
            let mut text = String::from("/Expr(");
            write_expr(&mut text, other, RealStyle::Short);
            text.push_str(")/");
            write_json_string(out, &text);
        }
    }
}

/// Reads one ad given on a command line or in a file: any format.
pub fn parse_ad_text(text: &str) -> Result<ClassAd, FormatError> {
    if detect(text.as_bytes()) == Format::New {
        return Ok(parse_ad(text)?);
    }
    parse_one_any(text)
}

/// Writes a string literal (re-exported for callers printing values).
pub fn quote(s: &str) -> String {
    let mut out = String::new();
    write_string(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: &str = "Name = \"slot1@a\"\nCpus = 4\nRequirements = TARGET.RequestCpus <= Cpus\n\nName = \"slot1@b\"\nCpus = 8\n";

    #[test]
    fn long_format_reads_ads_separated_by_blank_lines() {
        let ads = parse_ads_any(LONG).unwrap();
        assert_eq!(ads.len(), 2);
        assert_eq!(
            to_long(&ads[0]),
            "Name = \"slot1@a\"\nCpus = 4\nRequirements = TARGET.RequestCpus <= Cpus\n"
        );
    }

    #[test]
    fn plain_literals_read_as_the_parser_reads_them() {
        for text in [
            "64",
            "-7",
            "007",
            "\"X86_64\"",
            "\"\"",
            "true",
            "FALSE",
            "undefined",
            "123456789012345678",
        ] {
            let fast = plain_literal(text).unwrap_or_else(|| panic!("{text} is plain"));
            let Expr::Literal(slow) = parse_expr(text).unwrap() else {
                panic!("{text}")
            };
            assert!(fast.identical(&slow), "{text}: {fast:?} vs {slow:?}");
        }
        for text in [
            "\"a\\nb\"",
            "\"a\"b\"",
            "1.5",
            "1e3",
            "0x1F",
            "99999999999999999999",
            "- 1",
            "\"",
            "x",
            "-",
        ] {
            assert!(plain_literal(text).is_none(), "{text} is not plain");
        }
    }

    #[test]
    fn formats_are_detected() {
        assert_eq!(detect(b"  [ a = 1 ]"), Format::New);
        assert_eq!(detect(b"[\n  {\"a\": 1}]"), Format::Json);
        assert_eq!(detect(b"{\"a\": 1}"), Format::Json);
        assert_eq!(detect(b"A = 1\n"), Format::Long);
    }

    #[test]
    fn json_round_trips_expressions() {
        let ad = parse_ad(
            "[ a = 1; b = \"x/y\"; c = x + 1; d = { 1,2 }; e = [ f = 1.5 ]; g = undefined ]",
        )
        .unwrap();
        let text = to_json(&ad);
        assert!(text.contains("\"\\/Expr(x + 1)\\/\""), "{text}");
        let back = parse_ads_any(&format!("[{text}]")).unwrap();
        assert!(back[0].same_as(&ad), "{text}");
    }

    #[test]
    fn long_format_errors_name_the_line() {
        let err = parse_ads_any("A = 1\nB = (\n").unwrap_err().to_string();
        assert!(err.starts_with("line 2:"), "{err}");
        let err = parse_ads_any("A = 1\nnot an attribute\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2") && err.contains("Name = expression"),
            "{err}"
        );
    }
}
