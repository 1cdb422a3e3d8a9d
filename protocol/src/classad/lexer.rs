//! Tokens of the ClassAd language.

use super::limits::MAX_STRING_LEN;

/// Where a token starts, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub(crate) line: u32,
    pub(crate) column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// An integer literal's magnitude; `None` if it does not fit in 64 bits.
    Int(Option<u64>),
    Real(f64),
    Str(String),
    /// An identifier or a 'quoted name'; `quoted` names are never keywords.
    Ident {
        text: String,
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

impl Tok {
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

/// Operators, longest first so that `>>>` wins over `>>` and `>`.
const PUNCT: &[&str] = &[
    ">>>", "=?=", "=!=", "==", "!=", "<=", ">=", "<<", ">>", "&&", "||", "?:", "(", ")", "[", "]",
    "{", "}", ",", ";", ".", "?", ":", "=", "+", "-", "*", "/", "%", "!", "~", "<", ">", "&", "|",
    "^",
];

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
    pub(crate) fn next_token(&mut self) -> Result<(Tok, Pos), LexError> {
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
            _ => {
                let rest = &self.src[self.at..];
                let Some(p) = PUNCT.iter().find(|p| rest.starts_with(p.as_bytes())) else {
                    let ch = std::str::from_utf8(rest)
                        .ok()
                        .and_then(|s| s.chars().next())
                        .map(|c| format!("'{c}'"))
                        .unwrap_or_else(|| format!("byte 0x{b:02x}"));
                    return Err(self.err(pos, format!("unexpected character {ch}")));
                };
                for _ in 0..p.len() {
                    self.bump();
                }
                Tok::Punct(p)
            }
        };
        Ok((tok, pos))
    }

    fn identifier(&mut self) -> Tok {
        let start = self.at;
        while matches!(self.peek_byte(0), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
            self.bump();
        }
        let text = std::str::from_utf8(&self.src[start..self.at]).expect("ascii");
        match text.to_ascii_lowercase().as_str() {
            "true" => Tok::True,
            "false" => Tok::False,
            "undefined" => Tok::Undefined,
            "error" => Tok::Error,
            "is" => Tok::Is,
            "isnt" => Tok::Isnt,
            _ => Tok::Ident {
                text: text.to_owned(),
                quoted: false,
            },
        }
    }

    fn number(&mut self, pos: Pos) -> Result<Tok, LexError> {
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

    fn string(&mut self, pos: Pos) -> Result<Tok, LexError> {
        self.bump();
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
            .map(Tok::Str)
            .map_err(|_| self.err(pos, "string escapes do not form valid UTF-8"))
    }

    fn quoted_name(&mut self, pos: Pos) -> Result<Tok, LexError> {
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
        Ok(Tok::Ident { text, quoted: true })
    }
}
