//! Tokens of the ClassAd language.
//!
//! Tokens borrow from the source where they can (names, strings without
//! escapes), so lexing an ad allocates only for what it keeps.

use std::borrow::Cow;

use super::limits::MAX_STRING_LEN;

/// Where a token starts, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub(crate) line: u32,
    pub(crate) column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok<'a> {
    /// An integer literal's magnitude; `None` if it does not fit in 64 bits.
    Int(Option<u64>),
    Real(f64),
    Str(Cow<'a, str>),
    /// An identifier or a 'quoted name'; `quoted` names are never keywords.
    Ident {
        text: Cow<'a, str>,
        quoted: bool,
    },
    True,
    False,
    Undefined,
    Error,
    Is,
    Isnt,
    /// Punctuation and operators, by spelling.
    Punct(&'static str),
    Eof,
}

impl Tok<'_> {
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Int(Some(i)) => format!("integer {i}"),
            Tok::Int(None) => "an integer".into(),
            Tok::Real(r) => format!("real {r}"),
            Tok::Str(_) => "a string".into(),
            Tok::Ident { text, .. } => format!("name '{text}'"),
            Tok::True => "'true'".into(),
            Tok::False => "'false'".into(),
            Tok::Undefined => "'undefined'".into(),
            Tok::Error => "'error'".into(),
            Tok::Is => "'is'".into(),
            Tok::Isnt => "'isnt'".into(),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Eof => "end of input".into(),
        }
    }
}

/// A lexical error: what went wrong and where.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LexError {
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

pub(crate) struct Lexer<'a> {
    src: &'a [u8],
    at: usize,
    line: u32,
    line_start: usize,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src: src.as_bytes(),
            at: 0,
            line: 1,
            line_start: 0,
        }
    }

    /// Byte offset of the next unread character.
    pub(crate) fn offset(&self) -> usize {
        self.at
    }

    /// Whether the character right after the last token is a digit (so a
    /// `-` just read starts a negative number).
    pub(crate) fn next_byte_is_digit(&self) -> bool {
        matches!(self.peek_byte(0), Some(b'0'..=b'9' | b'.'))
    }

    pub(crate) fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: (self.at - self.line_start + 1) as u32,
        }
    }

    fn err(&self, pos: Pos, message: impl Into<String>) -> LexError {
        LexError {
            pos,
            message: message.into(),
        }
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.at + ahead).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.src.get(self.at).copied()?;
        self.at += 1;
        if b == b'\n' {
            self.line += 1;
            self.line_start = self.at;
        }
        Some(b)
    }

    fn skip_space_and_comments(&mut self) -> Result<(), LexError> {
        loop {
            match self.peek_byte(0) {
                Some(b) if b.is_ascii_whitespace() => {
                    self.bump();
                }
                Some(b'/') if self.peek_byte(1) == Some(b'/') => {
                    while let Some(b) = self.peek_byte(0) {
                        if b == b'\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                Some(b'/') if self.peek_byte(1) == Some(b'*') => {
                    let start = self.pos();
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            None => return Err(self.err(start, "unterminated /* comment")),
                            Some(b'*') if self.peek_byte(0) == Some(b'/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// The next token and where it starts.
    pub(crate) fn next_token(&mut self) -> Result<(Tok<'a>, Pos), LexError> {
        self.skip_space_and_comments()?;
        let pos = self.pos();
        let Some(b) = self.peek_byte(0) else {
            return Ok((Tok::Eof, pos));
        };
        let tok = match b {
            b'0'..=b'9' => self.number(pos)?,
            b'.' if matches!(self.peek_byte(1), Some(b'0'..=b'9')) => self.number(pos)?,
            b'"' => self.string(pos)?,
            b'\'' => self.quoted_name(pos)?,
            b if b.is_ascii_alphabetic() || b == b'_' => self.identifier(),
            _ => match self.punct(b) {
                Some(p) => {
                    for _ in 0..p.len() {
                        self.bump();
                    }
                    Tok::Punct(p)
                }
                None => {
                    let rest = &self.src[self.at..];
                    let ch = std::str::from_utf8(&rest[..rest.len().min(4)])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .or_else(|| String::from_utf8_lossy(rest).chars().next())
                        .map(|c| format!("'{c}'"))
                        .unwrap_or_else(|| format!("byte 0x{b:02x}"));
                    return Err(self.err(pos, format!("unexpected character {ch}")));
                }
            },
        };
        Ok((tok, pos))
    }

    /// The operator starting with byte `b`, longest match first.
    fn punct(&self, b: u8) -> Option<&'static str> {
        let next = self.peek_byte(1);
        let third = self.peek_byte(2);
        Some(match (b, next) {
            (b'>', Some(b'>')) if third == Some(b'>') => ">>>",
            (b'=', Some(b'?')) if third == Some(b'=') => "=?=",
            (b'=', Some(b'!')) if third == Some(b'=') => "=!=",
            (b'=', Some(b'=')) => "==",
            (b'!', Some(b'=')) => "!=",
            (b'<', Some(b'=')) => "<=",
            (b'>', Some(b'=')) => ">=",
            (b'<', Some(b'<')) => "<<",
            (b'>', Some(b'>')) => ">>",
            (b'&', Some(b'&')) => "&&",
            (b'|', Some(b'|')) => "||",
            (b'?', Some(b':')) => "?:",
            (b'(', _) => "(",
            (b')', _) => ")",
            (b'[', _) => "[",
            (b']', _) => "]",
            (b'{', _) => "{",
            (b'}', _) => "}",
            (b',', _) => ",",
            (b';', _) => ";",
            (b'.', _) => ".",
            (b'?', _) => "?",
            (b':', _) => ":",
            (b'=', _) => "=",
            (b'+', _) => "+",
            (b'-', _) => "-",
            (b'*', _) => "*",
            (b'/', _) => "/",
            (b'%', _) => "%",
            (b'!', _) => "!",
            (b'~', _) => "~",
            (b'<', _) => "<",
            (b'>', _) => ">",
            (b'&', _) => "&",
            (b'|', _) => "|",
            (b'^', _) => "^",
            _ => return None,
        })
    }

    fn identifier(&mut self) -> Tok<'a> {
        let start = self.at;
        while matches!(self.peek_byte(0), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
            self.at += 1;
        }
        let src: &'a [u8] = self.src;
        let text = std::str::from_utf8(&src[start..self.at]).expect("ascii");
        let keyword = |k: &str| text.len() == k.len() && text.eq_ignore_ascii_case(k);
        if text.len() <= 9 {
            if keyword("true") {
                return Tok::True;
            } else if keyword("false") {
                return Tok::False;
            } else if keyword("undefined") {
                return Tok::Undefined;
            } else if keyword("error") {
                return Tok::Error;
            } else if keyword("is") {
                return Tok::Is;
            } else if keyword("isnt") {
                return Tok::Isnt;
            }
        }
        Tok::Ident {
            text: Cow::Borrowed(text),
            quoted: false,
        }
    }

    fn number(&mut self, pos: Pos) -> Result<Tok<'a>, LexError> {
        let start = self.at;
        // HTCondor reads `0x1F` as one token and converts it in base 10,
        // giving 0; we do the same rather than reject what it accepts.
        if self.peek_byte(0) == Some(b'0')
            && matches!(self.peek_byte(1), Some(b'x' | b'X'))
            && matches!(self.peek_byte(2), Some(b) if b.is_ascii_hexdigit())
        {
            self.bump();
            self.bump();
            while matches!(self.peek_byte(0), Some(b) if b.is_ascii_hexdigit()) {
                self.bump();
            }
            return Ok(Tok::Int(Some(0)));
        }
        while matches!(self.peek_byte(0), Some(b'0'..=b'9')) {
            self.bump();
        }
        let mut real = false;
        if self.peek_byte(0) == Some(b'.') {
            real = true;
            self.bump();
            let digits = self.at;
            while matches!(self.peek_byte(0), Some(b'0'..=b'9')) {
                self.bump();
            }
            if self.at == digits {
                return Err(self.err(pos, "expected digits after the decimal point"));
            }
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E')) {
            real = true;
            self.bump();
            if matches!(self.peek_byte(0), Some(b'+' | b'-')) {
                self.bump();
            }
            let digits = self.at;
            while matches!(self.peek_byte(0), Some(b'0'..=b'9')) {
                self.bump();
            }
            if self.at == digits {
                return Err(self.err(pos, "expected digits in the exponent"));
            }
        }
        if matches!(self.peek_byte(0), Some(b) if b.is_ascii_alphabetic() || b == b'_') {
            return Err(self.err(pos, "a number runs into a name"));
        }
        let text = std::str::from_utf8(&self.src[start..self.at]).expect("ascii");
        if real {
            let r: f64 = text
                .parse()
                .map_err(|_| self.err(pos, format!("malformed real '{text}'")))?;
            Ok(Tok::Real(r))
        } else {
            Ok(Tok::Int(text.parse().ok()))
        }
    }

    fn string(&mut self, pos: Pos) -> Result<Tok<'a>, LexError> {
        self.bump();
        // Fast path: no escapes and no newline, borrow the text.
        let start = self.at;
        let src: &'a [u8] = self.src;
        let rest = &src[start..];
        if let Some(end) = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b == b'\n')
        {
            if rest[end] == b'"' {
                if end > MAX_STRING_LEN {
                    return Err(self.err(pos, format!("string longer than {MAX_STRING_LEN} bytes")));
                }
                let text = std::str::from_utf8(&rest[..end])
                    .map_err(|_| self.err(pos, "string is not valid UTF-8"))?;
                self.at += end + 1;
                return Ok(Tok::Str(Cow::Borrowed(text)));
            }
        }
        let mut bytes = Vec::new();
        loop {
            let Some(b) = self.bump() else {
                return Err(self.err(pos, "unterminated string"));
            };
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.bump() else {
                        return Err(self.err(pos, "unterminated string"));
                    };
                    let c = match e {
                        b'a' => 7,
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'v' => 11,
                        b'0'..=b'7' => {
                            // Up to three octal digits, the first at most 3.
                            let mut v = u32::from(e - b'0');
                            let max_digits = if e <= b'3' { 3 } else { 2 };
                            for _ in 1..max_digits {
                                match self.peek_byte(0) {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.bump();
                                    }
                                    _ => break,
                                }
                            }
                            if v == 0 {
                                return Err(self.err(pos, "a string may not contain \\0"));
                            }
                            v as u8
                        }
                        other => other,
                    };
                    bytes.push(c);
                }
                _ => bytes.push(b),
            }
            if bytes.len() > MAX_STRING_LEN {
                return Err(self.err(pos, format!("string longer than {MAX_STRING_LEN} bytes")));
            }
        }
        String::from_utf8(bytes)
            .map(|s| Tok::Str(Cow::Owned(s)))
            .map_err(|_| self.err(pos, "string escapes do not form valid UTF-8"))
    }

    fn quoted_name(&mut self, pos: Pos) -> Result<Tok<'a>, LexError> {
        self.bump();
        let mut bytes = Vec::new();
        loop {
            match self.bump() {
                None => return Err(self.err(pos, "unterminated quoted name")),
                Some(b'\'') => break,
                Some(b'\\') => match self.bump() {
                    None => return Err(self.err(pos, "unterminated quoted name")),
                    Some(e) => bytes.push(e),
                },
                Some(b) => bytes.push(b),
            }
            if bytes.len() > super::name::MAX_NAME_LEN {
                return Err(self.err(pos, "quoted name too long"));
            }
        }
        let text =
            String::from_utf8(bytes).map_err(|_| self.err(pos, "quoted name is not UTF-8"))?;
        Ok(Tok::Ident {
            text: Cow::Owned(text),
            quoted: true,
        })
    }
}
