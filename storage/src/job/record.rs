//! A job record's bytes, read and written by hand.
//!
//! A job is kept as CBOR: an array of `[name, expression text]` arrays,
//! exactly what `ciborium` writes for `Vec<(String, String)>`. Going
//! through serde costs about 14 µs a job (development VM): most of a
//! 100,000-job `rm` or `hold`. Here the layout `ciborium` writes is written
//! and read directly, byte for byte the same (tests hold the two to each
//! other); anything else that is valid CBOR (other length encodings,
//! indefinite lengths) is handed to `ciborium`, so a record reads the same
//! either way and a damaged one fails with `ciborium`'s error.

use starling_protocol::cbor::DecodeError;

use super::{apply_pairs, within_limit, Attrs, Checked, MAX_JOB_LEN};
use crate::codec::decode;
use crate::Error;

const UINT: u8 = 0;
const TEXT: u8 = 3;
const ARRAY: u8 = 4;
const MAP: u8 = 5;

/// Appends a CBOR head: the major type and `n` in its shortest form.
fn head(out: &mut Vec<u8>, major: u8, n: usize) {
    head64(out, major, n as u64);
}

fn head64(out: &mut Vec<u8>, major: u8, n: u64) {
    let major = major << 5;
    if n < 24 {
        out.push(major | n as u8);
    } else if n <= u64::from(u8::MAX) {
        out.extend_from_slice(&[major | 24, n as u8]);
    } else if n <= u64::from(u16::MAX) {
        out.push(major | 25);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else if n <= u64::from(u32::MAX) {
        out.push(major | 26);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(major | 27);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn text(out: &mut Vec<u8>, s: &str) {
    head(out, TEXT, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// The record of `(name, expression text)` pairs: what
/// `ciborium::into_writer` writes for an [`Attrs`] holding them.
pub(crate) fn encode<S: AsRef<str>>(pairs: &[(S, S)]) -> Vec<u8> {
    let len = pairs
        .iter()
        .map(|(n, t)| n.as_ref().len() + t.as_ref().len() + 11)
        .sum::<usize>();
    let mut out = Vec::with_capacity(len + 9);
    head(&mut out, ARRAY, pairs.len());
    for (name, expr) in pairs {
        head(&mut out, ARRAY, 2);
        text(&mut out, name.as_ref());
        text(&mut out, expr.as_ref());
    }
    out
}

/// [`Attrs::apply`] then [`Attrs::encode`] on a record's bytes, with the
/// attributes borrowed from them rather than made into strings (making
/// them was most of the cost of changing 100,000 jobs). `None` when the
/// bytes are not in the layout [`encode`] writes: the caller then decodes
/// them the long way, which names what is wrong.
pub(crate) fn apply(bytes: &[u8], changes: &[Checked]) -> Option<Result<Vec<u8>, Error>> {
    let mut pairs = Reader(bytes).pairs()?;
    Some(apply_pairs(&mut pairs, changes).and_then(|()| within_limit(encode(&pairs))))
}

/// The history record of a job whose record (what [`encode`] wrote) is
/// `attrs`: what `ciborium` writes for [`crate::codec::HistoryRecord`] (a
/// map of its fields by name, in order), without encoding the job again.
pub(crate) fn history(cluster: u64, proc: u32, finished_at: u64, attrs: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(attrs.len() + 64);
    head(&mut out, MAP, 4);
    for (name, n) in [
        ("cluster", cluster),
        ("proc", u64::from(proc)),
        ("finished_at", finished_at),
    ] {
        text(&mut out, name);
        head64(&mut out, UINT, n);
    }
    text(&mut out, "attrs");
    out.extend_from_slice(attrs);
    out
}

/// Reads a record: what `ciborium` would read from it, errors included.
pub(crate) fn decode_attrs(bytes: &[u8]) -> Result<Attrs, DecodeError> {
    match (bytes.len() <= MAX_JOB_LEN)
        .then(|| Reader(bytes).attrs())
        .flatten()
    {
        Some(attrs) => Ok(attrs),
        None => decode(bytes, MAX_JOB_LEN, "job"),
    }
}

/// The bytes not read yet.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(taken)
    }

    /// A head of major type `major` with a definite length.
    fn head(&mut self, major: u8) -> Option<usize> {
        let first = *self.take(1)?.first()?;
        if first >> 5 != major {
            return None;
        }
        let n = match first & 0x1f {
            n @ 0..=23 => u64::from(n),
            24 => u64::from(self.take(1)?[0]),
            25 => u64::from(u16::from_be_bytes(self.take(2)?.try_into().ok()?)),
            26 => u64::from(u32::from_be_bytes(self.take(4)?.try_into().ok()?)),
            27 => u64::from_be_bytes(self.take(8)?.try_into().ok()?),
            // Reserved, or an indefinite length: left to ciborium.
            _ => return None,
        };
        usize::try_from(n).ok()
    }

    fn text(&mut self) -> Option<&'a str> {
        let len = self.head(TEXT)?;
        std::str::from_utf8(self.take(len)?).ok()
    }

    /// The whole input as the layout [`encode`] writes, or `None`.
    fn pairs(mut self) -> Option<Vec<(&'a str, &'a str)>> {
        let n = self.head(ARRAY)?;
        // Each pair takes at least three bytes: a length read from damaged
        // bytes allocates no more than the input could hold.
        let mut pairs = Vec::with_capacity(n.min(self.0.len() / 3));
        for _ in 0..n {
            if self.head(ARRAY)? != 2 {
                return None;
            }
            pairs.push((self.text()?, self.text()?));
        }
        self.0.is_empty().then_some(pairs)
    }

    fn attrs(self) -> Option<Attrs> {
        let pairs = self.pairs()?;
        Some(Attrs(
            pairs
                .into_iter()
                .map(|(n, t)| (n.to_owned(), t.to_owned()))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn by_serde(bytes: &[u8]) -> Result<Attrs, DecodeError> {
        decode(bytes, MAX_JOB_LEN, "job")
    }

    fn attrs() -> impl Strategy<Value = Attrs> {
        // Lengths across the head's widths (< 24, one byte, two bytes).
        let text = prop_oneof![
            ".{0,30}",
            proptest::collection::vec(any::<char>(), 20..300)
                .prop_map(|c| c.into_iter().collect::<String>()),
            (250usize..70_000).prop_map(|n| "x".repeat(n)),
        ];
        proptest::collection::vec((".{0,12}", text), 0..40).prop_map(Attrs)
    }

    #[test]
    fn lengths_take_every_width() {
        for n in [0, 23, 24, 255, 256, 65_535, 65_536, 1 << 19] {
            let attrs = Attrs(vec![("A".to_owned(), "y".repeat(n))]);
            let bytes = encode(&attrs.0);
            assert_eq!(bytes, crate::codec::encode(&attrs), "{n}");
            assert_eq!(decode_attrs(&bytes).unwrap(), attrs);
        }
        // A long list's head too.
        let many = Attrs(vec![("A".to_owned(), "1".to_owned()); 300]);
        assert_eq!(encode(&many.0), crate::codec::encode(&many));
    }

    proptest! {
        #[test]
        fn history_records_are_written_as_serde_writes_them(
            attrs in attrs(),
            cluster in prop_oneof![0..30u64, any::<u64>()],
            proc in prop_oneof![0..30u32, any::<u32>()],
            finished_at in any::<u64>(),
        ) {
            let record = crate::codec::HistoryRecord { cluster, proc, finished_at, attrs };
            let bytes = history(cluster, proc, finished_at, &encode(&record.attrs.0));
            prop_assert_eq!(bytes, crate::codec::encode(&record));
        }

        #[test]
        fn changed_in_place_as_attrs_change(
            attrs in attrs(),
            changes in proptest::collection::vec(
                (
                    prop::sample::select(vec!["a", "A", "b", "Name", "NAME", "new", "x"]),
                    prop_oneof![Just(None), "[0-9]{1,3}".prop_map(Some)],
                ),
                0..8,
            ),
            many in 0..2usize,
        ) {
            let mut attrs = attrs;
            // Near the limits, for their errors.
            if many == 1 {
                attrs.0.extend((attrs.0.len()..super::super::MAX_ATTRS).map(|i| (format!("F{i}"), "1".to_owned())));
            }
            let changes: Vec<crate::Change> = changes
                .into_iter()
                .map(|(name, expr)| match expr {
                    Some(e) => crate::Change::set(name, e),
                    None => crate::Change::remove(name),
                })
                .collect();
            let checked = super::super::check_changes(&changes).unwrap();
            let mut long_way = attrs.clone();
            let expected = long_way.apply(&checked).and_then(|()| long_way.encode());
            let got = apply(&encode(&attrs.0), &checked).unwrap();
            prop_assert_eq!(
                got.map_err(|e| e.to_string()),
                expected.map_err(|e| e.to_string())
            );
        }

        #[test]
        fn written_as_serde_writes_and_read_back(attrs in attrs()) {
            let bytes = encode(&attrs.0);
            prop_assert_eq!(&bytes, &crate::codec::encode(&attrs));
            prop_assert_eq!(decode_attrs(&bytes).unwrap(), attrs);
        }

        #[test]
        fn damaged_records_read_as_serde_reads_them(
            attrs in attrs(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            cut in any::<usize>(),
        ) {
            let mut bytes = encode(&attrs.0);
            for (at, bits) in flips {
                if !bytes.is_empty() {
                    let i = at % bytes.len();
                    bytes[i] ^= bits;
                }
            }
            prop_assert_eq!(decode_attrs(&bytes), by_serde(&bytes));
            let cut = cut % (bytes.len() + 1);
            prop_assert_eq!(decode_attrs(&bytes[..cut]), by_serde(&bytes[..cut]));
        }

        #[test]
        fn any_bytes_read_as_serde_reads_them(
            bytes in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            prop_assert_eq!(decode_attrs(&bytes), by_serde(&bytes));
        }
    }
}
