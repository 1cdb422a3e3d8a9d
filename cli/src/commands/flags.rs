//! HTCondor's spelling of options: its tools take long options with one
//! dash (`condor_q -constraint ... -af Owner`), and its users type them so.
//! [`normalize`] rewrites a one-dash word that names a long option of the
//! (sub)command it follows into clap's two dashes, for every command at
//! once, by asking the command line itself which options exist; a one-dash
//! word that is neither such a name nor a cluster of the command's short
//! flags is refused naming the whole word (clap would name only its first
//! letter: "unexpected argument '-t'" for `-totals`).
//!
//! Values are left alone: the word after an option that takes one, every
//! word after `--`, negative numbers, and the positional words of a command
//! whose positionals may start with a dash (`eval -x`).

use std::ffi::OsString;

/// A one-dash word that names no option of its command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown option '{word}' for '{command}'; its options are listed by '{command} --help'")]
pub(super) struct UnknownFlag {
    pub(super) word: String,
    pub(super) command: String,
}

/// Why a command line was refused before clap saw it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Error {
    #[error(transparent)]
    Unknown(#[from] UnknownFlag),
    /// `--agent` (`-agent`) or `--data-dir` with no directory after it:
    /// clap would name only `--data-dir`, which the user did not type.
    #[error(
        "'{word}' needs the agent's data directory ({word} DIR); to see which agent this \
         is, run 'starling whoami'"
    )]
    NoDataDir { word: String },
}

/// What a command accepts, as far as spelling goes.
struct Scope<'a> {
    command: &'a clap::Command,
    /// The global options of the commands above it.
    globals: Vec<&'a clap::Arg>,
    /// `starling q`, for messages.
    path: String,
}

impl<'a> Scope<'a> {
    fn args(&self) -> impl Iterator<Item = &'a clap::Arg> + '_ {
        self.command
            .get_arguments()
            .chain(self.globals.iter().copied())
    }

    /// The option whose long name or alias is `name`.
    fn long(&self, name: &str) -> Option<&'a clap::Arg> {
        self.args().find(|a| {
            a.get_long() == Some(name)
                || a.get_all_aliases()
                    .is_some_and(|aliases| aliases.contains(&name))
        })
    }

    fn short(&self, c: char) -> Option<&'a clap::Arg> {
        self.args().find(|a| {
            a.get_short() == Some(c)
                || a.get_all_short_aliases()
                    .is_some_and(|aliases| aliases.contains(&c))
        })
    }

    /// Whether a positional of this command may start with a dash.
    fn takes_dashed_words(&self) -> bool {
        self.command
            .get_positionals()
            .any(|p| p.is_allow_hyphen_values_set())
    }

    fn descend(&self, name: &str) -> Option<Scope<'a>> {
        let command = self.command.find_subcommand(name)?;
        let mut globals = self.globals.clone();
        globals.extend(self.command.get_arguments().filter(|a| a.is_global_set()));
        Some(Scope {
            command,
            globals,
            path: format!("{} {}", self.path, command.get_name()),
        })
    }
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values()
}

fn is_number(word: &str) -> bool {
    word.strip_prefix('-')
        .is_some_and(|rest| rest.parse::<f64>().is_ok())
}

/// `args` (the program's name first) with HTCondor's one-dash long
/// options of `root` and its subcommands in clap's spelling.
pub(super) fn normalize(
    root: &clap::Command,
    args: impl IntoIterator<Item = OsString>,
) -> Result<Vec<OsString>, Error> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    // The data directory's option last, with no directory after it (a
    // word after it is its value, even one that starts with a dash).
    let no_dir = |arg: &clap::Arg, word: &str, next: Option<&OsString>| {
        if arg.get_id() == "data_dir" && !word.contains('=') && next.is_none() {
            Err(Error::NoDataDir {
                word: word.to_owned(),
            })
        } else {
            Ok(())
        }
    };
    let mut scope = Scope {
        command: root,
        globals: Vec::new(),
        path: root.get_name().to_owned(),
    };
    let mut value_next = false;
    let mut i = 1;
    while i < args.len() {
        let Some(word) = args[i].to_str().map(str::to_owned) else {
            i += 1;
            value_next = false;
            continue;
        };
        if std::mem::take(&mut value_next) {
            i += 1;
            continue;
        }
        if word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            if let Some(arg) = scope.long(name) {
                no_dir(arg, &word, args.get(i + 1))?;
            }
            value_next = !long.contains('=') && scope.long(name).is_some_and(takes_value);
        } else if word.len() > 1 && word.starts_with('-') && !is_number(&word) {
            let body = &word[1..];
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            if let Some(arg) = scope.long(name) {
                no_dir(arg, &word, args.get(i + 1))?;
                value_next = !body.contains('=') && takes_value(arg);
                args[i] = OsString::from(format!("-{word}"));
            } else if let Some(flags) = short_cluster(&scope, body) {
                value_next = flags;
            } else if !scope.takes_dashed_words() {
                return Err(UnknownFlag {
                    word,
                    command: scope.path,
                }
                .into());
            }
        } else if let Some(sub) = scope.descend(&word) {
            scope = sub;
        }
        i += 1;
    }
    Ok(args)
}

/// Whether `body` (after the dash) is a cluster of `scope`'s short flags
/// (`-lh`), and if so whether its last one takes the next word as its
/// value. A short option that takes a value may end the cluster with the
/// value glued on (`-n5`): then nothing follows.
fn short_cluster(scope: &Scope<'_>, body: &str) -> Option<bool> {
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        let arg = scope.short(c)?;
        if takes_value(arg) {
            return Some(chars.peek().is_none());
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn normalized(args: &[&str]) -> Result<Vec<OsString>, Error> {
        normalize(&crate::commands::Cli::command(), os(args))
    }

    #[test]
    fn one_dash_long_options_become_two_for_every_command() {
        assert_eq!(
            normalized(&["starling", "status", "-af", "Name", "-constraint", "-json"]).unwrap(),
            os(&[
                "starling",
                "status",
                "--af",
                "Name",
                "--constraint",
                "-json"
            ])
        );
        assert_eq!(
            normalized(&[
                "starling",
                "--data-dir",
                "d",
                "status",
                "-total",
                "--",
                "-json"
            ])
            .unwrap(),
            os(&[
                "starling",
                "--data-dir",
                "d",
                "status",
                "--total",
                "--",
                "-json"
            ])
        );
        assert_eq!(
            normalized(&["starling", "q", "-nobatch", "-l", "12"]).unwrap(),
            os(&["starling", "q", "--nobatch", "-l", "12"])
        );
        // Nested subcommands, and a global option after the subcommand.
        assert_eq!(
            normalized(&["starling", "ckpt", "ls", "-json", "-agent", "a"]).unwrap(),
            os(&["starling", "ckpt", "ls", "--json", "--agent", "a"])
        );
        // Expressions may start with a dash; numbers are values.
        assert_eq!(
            normalized(&["starling", "eval", "-json"]).unwrap(),
            os(&["starling", "eval", "-json"])
        );
        assert_eq!(
            normalized(&["starling", "userprio", "-setfactor", "bob@d", "-1"]).unwrap(),
            os(&["starling", "userprio", "--setfactor", "bob@d", "-1"])
        );
    }

    #[test]
    fn the_value_of_an_option_is_never_rewritten() {
        // `--agent status` names a directory called "status"; the
        // subcommand comes after it.
        assert_eq!(
            normalized(&["starling", "--agent", "status", "status", "-af", "Name"]).unwrap(),
            os(&["starling", "--agent", "status", "status", "--af", "Name"])
        );
        assert_eq!(
            normalized(&["starling", "--agent", "-json", "status", "-json"]).unwrap(),
            os(&["starling", "--agent", "-json", "status", "--json"])
        );
        assert_eq!(
            normalized(&["starling", "status", "--agent", "-total", "-total"]).unwrap(),
            os(&["starling", "status", "--agent", "-total", "--total"])
        );
        assert_eq!(
            normalized(&["starling", "q", "-constraint", "-Owner", "-long"]).unwrap(),
            os(&["starling", "q", "--constraint", "-Owner", "--long"])
        );
    }

    #[test]
    fn an_unknown_one_dash_word_is_refused_naming_all_of_it() {
        let Err(Error::Unknown(err)) = normalized(&["starling", "history", "-bogus", "3"]) else {
            panic!("-bogus accepted");
        };
        assert_eq!(err.word, "-bogus");
        assert_eq!(err.command, "starling history");
        assert!(err.to_string().contains("'-bogus'"), "{err}");
    }

    #[test]
    fn the_agent_option_with_no_directory_names_what_was_typed() {
        for args in [
            &["starling", "status", "-agent"][..],
            &["starling", "status", "--agent"],
            &["starling", "q", "--data-dir"],
        ] {
            let err = normalized(args).unwrap_err();
            let typed = args
                .iter()
                .find(|a| a.contains("agent") || a.contains("data"))
                .unwrap();
            assert_eq!(
                err,
                Error::NoDataDir {
                    word: (*typed).to_owned()
                },
                "{args:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains(&format!("'{typed}'")) && text.contains("starling whoami"),
                "{text}"
            );
        }
        // A directory given, or named after `=`, is left to clap.
        assert!(normalized(&["starling", "status", "-agent", "a/dir"]).is_ok());
        assert!(normalized(&["starling", "status", "--agent=a/dir"]).is_ok());
    }
}
