//! HTCondor's two syntaxes for `arguments` and `environment`.
//!
//! The new syntax (the whole value in double quotes in a submit file):
//! items separated by blanks (a space, tab, newline or carriage return, as
//! HTCondor splits them: other white space belongs to its item), an item
//! in single quotes may hold blanks, and
//! `''` inside single quotes is one literal single quote; `""` is one
//! literal double quote. The old syntax: arguments separated by whitespace
//! with `\"` for a literal double quote; environment entries separated by
//! `;`. Job ads keep the new syntax in `Arguments` and `Environment`.

/// Splits a new-syntax list, as a submit file writes it (inside its double
/// quotes), into items: `""` is a literal double quote, a lone one an
/// error.
pub fn split_new(text: &str) -> Result<Vec<String>, String> {
    split(text, false)
}

/// Splits a new-syntax list as a job ad stores it (`Arguments`,
/// `Environment`): HTCondor writes a literal double quote as itself;
/// Starling wrote it doubled before, so `""` is still read as one.
pub fn split_stored(text: &str) -> Result<Vec<String>, String> {
    split(text, true)
}

fn split(text: &str, lone_quotes: bool) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut in_item = false;
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if quoted => {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    current.push('\'');
                } else {
                    quoted = false;
                }
            }
            '\'' => {
                quoted = true;
                in_item = true;
            }
            '"' if chars.peek() == Some(&'"') => {
                chars.next();
                current.push('"');
                in_item = true;
            }
            '"' if lone_quotes => {
                current.push('"');
                in_item = true;
            }
            '"' => return Err("a lone double quote; write \"\" for a literal one".to_owned()),
            c if matches!(c, ' ' | '\t' | '\n' | '\r') && !quoted => {
                if in_item {
                    items.push(std::mem::take(&mut current));
                    in_item = false;
                }
            }
            c => {
                current.push(c);
                in_item = true;
            }
        }
    }
    if quoted {
        return Err("a single quote is not closed".to_owned());
    }
    if in_item {
        items.push(current);
    }
    Ok(items)
}

/// Whether old-syntax arguments hold a double quote not written `\"`,
/// which HTCondor refuses.
pub fn has_bare_double_quote(text: &str) -> bool {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return true,
            // `\"` is one double quote; a backslash before anything else
            // is itself.
            '\\' if chars.clone().next() == Some('"') => {
                chars.next();
            }
            _ => {}
        }
    }
    false
}

/// Joins items into the new syntax as HTCondor writes it in job ads
/// (read back by [`split_stored`]): each run of white space and single
/// quotes inside single quotes (a single quote doubled), an empty item as
/// `''`, a double quote as itself.
pub fn join_new(items: &[String]) -> String {
    fn quoted(run: &str, out: &mut String) {
        out.push('\'');
        out.push_str(&run.replace('\'', "''"));
        out.push('\'');
    }
    items
        .iter()
        .map(|item| {
            if item.is_empty() {
                return "''".to_owned();
            }
            let mut out = String::with_capacity(item.len() + 2);
            let mut run = String::new();
            for c in item.chars() {
                // Only these are quoted, as HTCondor quotes: other white
                // space (a vertical tab, a Unicode space) goes as it is.
                if matches!(c, ' ' | '\t' | '\n' | '\r' | '\'') {
                    run.push(c);
                    continue;
                }
                if !run.is_empty() {
                    quoted(&std::mem::take(&mut run), &mut out);
                }
                out.push(c);
            }
            if !run.is_empty() {
                quoted(&run, &mut out);
            }
            out
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits old-syntax arguments: whitespace separated, `\"` a literal quote.
pub fn split_old_args(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|word| word.replace("\\\"", "\""))
        .collect()
}

/// Parses `NAME=value` items (new syntax) into pairs.
pub fn env_pairs(items: Vec<String>) -> Result<Vec<(String, String)>, String> {
    items
        .into_iter()
        .map(|item| match item.split_once('=') {
            Some((name, value)) if valid_env_name(name) => Ok((name.to_owned(), value.to_owned())),
            _ => Err(format!("{item:?} is not NAME=value")),
        })
        .collect()
}

/// Splits an old-syntax environment (`A=1;B=2`) as HTCondor does: an
/// entry's leading white space goes, the rest stays (`B= x y ` is `B` set
/// to ` x y `, and `A = 1` is `A ` set to ` 1`).
pub fn split_old_env(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(';')
        .map(str::trim_start)
        .filter(|s| !s.is_empty())
        .map(|item| match item.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() && !name.contains('\0') => {
                Ok((name.to_owned(), value.to_owned()))
            }
            _ => Err(format!("{item:?} is not NAME=value")),
        })
        .collect()
}

/// Joins an environment into the new syntax, sorted by name as HTCondor
/// writes it.
pub fn join_env(pairs: &[(String, String)]) -> String {
    let mut pairs: Vec<&(String, String)> = pairs.iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let items: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    join_new(&items)
}

/// HTCondor takes any name that is not blank (`A = 1` in the old syntax
/// names `A `).
fn valid_env_name(name: &str) -> bool {
    !name.trim().is_empty() && !name.contains('\0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_syntax_round_trips() {
        let items = split_new("one 'two words' 'it''s' \"\"quoted\"\"").unwrap();
        assert_eq!(items, vec!["one", "two words", "it's", "\"quoted\""]);
        // Stored as HTCondor stores it: the double quotes single.
        assert_eq!(join_new(&items), "one two' 'words it''''s \"quoted\"");
        assert_eq!(split_stored(&join_new(&items)).unwrap(), items);
        // What Starling stored before still reads the same.
        assert_eq!(split_stored("\"\"quoted\"\"").unwrap(), vec!["\"quoted\""]);
        // As HTCondor writes them: only the spaces and quotes quoted.
        let items: Vec<String> = ["two with spaces", "x 'q' y"].map(String::from).to_vec();
        assert_eq!(join_new(&items), "two' 'with' 'spaces x' '''q''' 'y");
        assert_eq!(split_new(&join_new(&items)).unwrap(), items);
        assert_eq!(split_new("''").unwrap(), vec![""]);
        assert!(split_new("'open").unwrap_err().contains("not closed"));
    }

    #[test]
    fn old_syntax_and_environments() {
        assert_eq!(split_old_args(" a  b\\\"c "), vec!["a", "b\"c"]);
        assert_eq!(
            split_old_env("A=1; B=x y").unwrap(),
            vec![("A".into(), "1".into()), ("B".into(), "x y".into())]
        );
        // White space kept as HTCondor keeps it.
        assert_eq!(
            split_old_env("A = 1;B= x y ").unwrap(),
            vec![("A ".into(), " 1".into()), ("B".into(), " x y ".into())]
        );
        let env = env_pairs(split_new("A=1 'B=two words'").unwrap()).unwrap();
        assert_eq!(env[1], ("B".into(), "two words".into()));
        assert!(env_pairs(vec!["novalue".into()]).is_err());
    }
}
