//! `starling config`: the configuration `starling agent` would run with,
//! each value with where it comes from (HTCondor's `condor_config_val
//! -summary`): a line of the file, the command line, or the default. The
//! output is itself a valid configuration file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use starling_agent::config::{self, Config, Overrides};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The configuration file, as `starling agent --config` takes it.
    /// Default: /etc/starling/agent.toml as root, else
    /// ~/.config/starling/agent.toml, when it exists.
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
    /// Only the values that differ from the defaults.
    #[arg(long)]
    changed: bool,
}

pub(crate) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let file = config::locate(args.config.as_deref());
    let mut effective = Config::load(file.as_deref())?;
    effective.apply(Overrides {
        data_dir: data_dir.map(Path::to_path_buf),
        ..Overrides::default()
    })?;
    let lines = match &file {
        Some(path) => config::lines_of_keys(&std::fs::read_to_string(path)?),
        None => BTreeMap::new(),
    };
    let origin = |key: &str| -> Option<String> {
        if key == "data_dir" && data_dir.is_some() {
            return Some("--data-dir".to_owned());
        }
        let path = file.as_ref()?;
        // A key inside an array of tables is found by its array's line.
        let line = lines.get(key).or_else(|| {
            lines
                .iter()
                .find(|(k, _)| key.starts_with(&format!("{k}.")))
                .map(|(_, l)| l)
        })?;
        Some(format!("{}:{line}", path.display()))
    };
    print!(
        "{}",
        render(&effective, &Config::default(), &origin, args.changed, &file)
    );
    Ok(ExitCode::SUCCESS)
}

/// The effective configuration as TOML, each value followed by its origin.
fn render(
    effective: &Config,
    defaults: &Config,
    origin: &dyn Fn(&str) -> Option<String>,
    changed_only: bool,
    file: &Option<PathBuf>,
) -> String {
    let flat = |c: &Config| {
        let mut out = Vec::new();
        if let Ok(toml::Value::Table(table)) = toml::Value::try_from(c) {
            flatten(&[], &table, &mut out);
        }
        out
    };
    let defaults: BTreeMap<String, toml::Value> = flat(defaults)
        .into_iter()
        .map(|(path, v)| (path.join("."), v))
        .collect();
    let mut text = String::from(
        "# The configuration `starling agent` runs with: each value and where it comes from.\n",
    );
    text.push_str(&match file {
        Some(path) => format!("# file: {}\n", path.display()),
        None => format!(
            "# file: none ({} does not exist): every value not given on the command line is \
             a default\n",
            config::default_path().map_or_else(
                || config::SYSTEM_FILE.to_owned(),
                |p| p.display().to_string()
            )
        ),
    });
    let mut section: Option<String> = None;
    for (path, value) in flat(effective) {
        let key = path.join(".");
        let from = origin(&key);
        let is_default = from.is_none() && defaults.get(&key) == Some(&value);
        if changed_only && is_default {
            continue;
        }
        // Top-level values first, then one [section] per table.
        let (table, rest) = if path.len() > 1 {
            (Some(path[0].clone()), &path[1..])
        } else {
            (None, &path[..])
        };
        if table != section {
            if let Some(t) = &table {
                text.push_str(&format!("\n[{}]\n", toml_key(t)));
            }
            section = table;
        }
        let name: Vec<String> = rest.iter().map(|k| toml_key(k)).collect();
        let from = from.unwrap_or_else(|| {
            if is_default {
                "default".to_owned()
            } else {
                "command line".to_owned()
            }
        });
        text.push_str(&format!("{} = {value}  # {from}\n", name.join(".")));
    }
    text
}

/// The leaves of a table as (key path, value), top-level values first;
/// arrays are one value.
fn flatten(prefix: &[String], table: &toml::Table, out: &mut Vec<(Vec<String>, toml::Value)>) {
    let (tables, values): (Vec<_>, Vec<_>) = table.iter().partition(|(_, v)| v.is_table());
    for (k, v) in values {
        let mut path = prefix.to_vec();
        path.push(k.clone());
        out.push((path, v.clone()));
    }
    for (k, v) in tables {
        let mut path = prefix.to_vec();
        path.push(k.clone());
        if let toml::Value::Table(inner) = v {
            if inner.is_empty() {
                out.push((path, v.clone()));
            } else {
                flatten(&path, inner, out);
            }
        }
    }
}

/// A key as TOML writes it: bare when it can be, else quoted.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_owned()
    } else {
        toml::Value::String(key.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_says_where_it_comes_from_and_the_output_reads_back() {
        let text = "[network]\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\n\n[machine]\nstart = \"false\"\nattributes = { Site = '\"lab\"' }\n";
        let effective = Config::parse(text).unwrap();
        let lines = config::lines_of_keys(text);
        assert_eq!(lines.get("network.listen"), Some(&2));
        assert_eq!(lines.get("machine.start"), Some(&5));
        assert_eq!(lines.get("machine.attributes.Site"), Some(&6));
        let file = Some(PathBuf::from("agent.toml"));
        let origin =
            |key: &str| -> Option<String> { lines.get(key).map(|l| format!("agent.toml:{l}")) };
        let all = render(&effective, &Config::default(), &origin, false, &file);
        assert!(
            all.contains("listen = [\"/ip4/127.0.0.1/tcp/0\"]  # agent.toml:2"),
            "{all}"
        );
        assert!(all.contains("start = \"false\"  # agent.toml:5"), "{all}");
        assert!(
            all.contains("attributes.Site = '\"lab\"'  # agent.toml:6"),
            "{all}"
        );
        assert!(all.contains("rank = \"0\"  # default"), "{all}");
        // What it prints is a configuration meaning the same.
        assert_eq!(Config::parse(&all).unwrap(), effective);
        // Only what differs from the defaults.
        let changed = render(&effective, &Config::default(), &origin, true, &file);
        assert!(!changed.contains("# default"), "{changed}");
        assert!(changed.contains("start = \"false\""), "{changed}");
    }
}
