//! One proc's job ad from the commands as they stand at its queue line,
//! with HTCondor's attribute names and defaults: the program and its
//! arguments, environment, files and directories, requests and the
//! `Requirements` clauses HTCondor adds for them, retries, accounting,
//! policy expressions and `+Attr` overrides; every value checked at the
//! door ([`values`]) and each problem named by the command that set it.
//!
//! It owns what each command means in the ad; reading the file is
//! `syntax`'s, expanding macros `macros`'s, and it reaches the
//! submitter's files only through the [`Environment`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::commands::{COMMANDS, EXPRESSIONS};
use super::description::{Description, SubmitError, MAX_PROCS};
use super::environment::{resolve, star_match, Environment, MAX_SIZED_ENTRIES};
use super::macros::Macros;
use super::retry::retry_list;
use super::syntax::parse_bool;
use super::universe::{parallel_attributes, universe_of, Universe};
use super::{args, gpus, kill_sig, retry, values};
use crate::classad::{parse_expr, ClassAd, Evaluator, Expr, Name, Side, Value};
use crate::concurrency_limits as limits;

/// `RequestDisk` when the file gives no `request_disk`: HTCondor 25's
/// `JOB_DEFAULT_REQUESTDISK`, in KiB.
pub const DEFAULT_REQUEST_DISK: &str = "MAX({1024, (TransferInputSizeMB + 1) * 1.25}) * 1024";

/// Most store peers a job may ask to keep its checkpoint.
pub const MAX_CHECKPOINT_REPLICAS: i64 = crate::checkpoint::MAX_REPLICAS as i64;

impl Description {
    /// One proc's ad from the commands as they stand at its queue line.
    pub(super) fn job_ad(
        &self,
        m: &Macros<'_>,
        per: &BTreeMap<String, String>,
        cwd: &Path,
        env: &dyn Environment,
        line: usize,
        seen: &mut Seen,
    ) -> Result<ClassAd, SubmitError> {
        let mut ad = ClassAd::new();
        let get = |key: &str| m.expand_opt(key, per);
        let line_of = |key: &str| m.line_of(key).unwrap_or(line);
        let bad =
            |key: &str, problem: String| self.error(line_of(key), format!("{key}: {problem}"));
        let set = |ad: &mut ClassAd, name: &str, value: Value| {
            ad.insert(Name::known(name), Expr::Literal(value));
        };
        let set_str = |ad: &mut ClassAd, name: &str, value: &str| {
            ad.insert(
                Name::known(name),
                Expr::Literal(Value::String(value.into())),
            );
        };
        let set_expr =
            |ad: &mut ClassAd, key: &str, name: &str, text: &str| -> Result<(), SubmitError> {
                let expr = parse_expr(text)
                    .map_err(|e| bad(key, format!("{text:?} is not a ClassAd expression: {e}")))?;
                ad.insert(Name::known(name), expr);
                Ok(())
            };

        let universe = match get("universe")? {
            None => Universe::Vanilla,
            Some(u) => universe_of(&u).map_err(|why| {
                bad(
                    "universe",
                    format!(
                        "{u:?} is not supported (only vanilla, scheduler, local, java and \
                         parallel): {why}"
                    ),
                )
            })?,
        };
        let iwd = resolve(
            cwd,
            &get("initialdir")?
                .or(get("initial_dir")?)
                .unwrap_or_default(),
        );
        // The job's directory must exist: it is refused here, as
        // condor_submit refuses it, and never made by the agent.
        let iwd_fault = |problem: String| match ["initialdir", "initial_dir"]
            .into_iter()
            .find(|k| m.map.contains_key(*k))
        {
            Some(key) => bad(key, problem),
            None => self.error(line, format!("the working directory: {problem}")),
        };
        values::path(&iwd.to_string_lossy()).map_err(iwd_fault)?;
        Self::directory(env, &iwd, &mut seen.directories).map_err(iwd_fault)?;
        let Some(executable) = get("executable")? else {
            return Err(self.error(
                line,
                "no executable: say `executable = PROGRAM` before queue",
            ));
        };
        if executable.is_empty() {
            return Err(bad("executable", "is empty".to_owned()));
        }
        set_str(&mut ad, "Owner", &env.owner());
        set(&mut ad, "JobUniverse", Value::Int(universe.number()));
        // As condor_submit: any value but one that starts with `f` sends
        // the program, and only `false` is written.
        let transfer_executable =
            !get("transfer_executable")?.is_some_and(|t| t.trim_start().starts_with(['f', 'F']));
        // As condor_submit: a program sent with the job is named from the
        // submit directory, not from initialdir; one already on the
        // machines is named as given, found there.
        let cmd = if transfer_executable {
            resolve(cwd, &executable)
        } else {
            PathBuf::from(&executable)
        };
        set_str(&mut ad, "Cmd", &cmd.to_string_lossy());
        set_str(&mut ad, "Iwd", &iwd.to_string_lossy());
        // The file as it was named, as condor_submit writes it (the same
        // text `$(SUBMIT_FILE)` gives), when it is a name a path may hold.
        if values::path(&self.file).is_ok() {
            set_str(&mut ad, "SubmitFile", &self.file);
        }
        set(&mut ad, "QDate", Value::Int(env.now()));
        set(&mut ad, "JobStatus", Value::Int(1));

        if let Some(a) = get("arguments")?.or(get("args")?).filter(|a| !a.is_empty()) {
            let key = if m.map.contains_key("arguments") {
                "arguments"
            } else {
                "args"
            };
            let argv = if let Some(inner) = a.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                args::split_new(inner).map_err(|e| bad(key, e))?
            } else if a.starts_with('"') {
                return Err(bad(key, unterminated(&a)));
            } else {
                // A double quote in the old syntax is written `\"`: a
                // bare one is refused, as HTCondor refuses it (the value
                // was most likely meant in the new syntax).
                if args::has_bare_double_quote(&a) {
                    return Err(bad(
                        key,
                        format!(
                            "{a:?} holds a double quote that is not escaped: write \\\" for \
                             one, or put the whole value in double quotes (the new syntax, \
                             with single quotes around an argument that holds spaces)"
                        ),
                    ));
                }
                // HTCondor keeps old-syntax arguments as it splits them,
                // joined by one space (`\"` a plain double quote).
                let argv = args::split_old_args(&a);
                set_str(&mut ad, "Args", &argv.join(" "));
                argv
            };
            set_str(&mut ad, "Arguments", &args::join_new(&argv));
        } else {
            // HTCondor writes no arguments as an empty Arguments, but
            // old-syntax arguments that expand to blanks as an empty Args.
            let key = ["arguments", "args"]
                .into_iter()
                .find(|k| per.contains_key(*k) || m.map.contains_key(*k));
            let raw = match key.and_then(|k| per.get(k).or_else(|| m.map.get(k))) {
                Some(v) => m.expand(v, per, 0)?,
                None => String::new(),
            };
            if !raw.is_empty() {
                set_str(&mut ad, "Args", "");
            }
            set_str(&mut ad, "Arguments", "");
        }
        if universe == Universe::Java {
            // As HTCondor: the first argument names the class to run.
            let no_class = match ad.get("Arguments") {
                Some(Expr::Literal(Value::String(a))) => a.trim().is_empty(),
                _ => true,
            };
            if no_class {
                let key = if m.map.contains_key("args") {
                    "args"
                } else {
                    "arguments"
                };
                return Err(bad(
                    key,
                    "the java universe runs the class named by the first argument: \
                     say `arguments = MyClass ...`"
                        .to_owned(),
                ));
            }
            // The JVM's own arguments, old syntax (JavaVMArgs) or new
            // (JavaVMArguments), as HTCondor keeps them.
            let key = ["java_vm_args", "java_vm_arguments"]
                .into_iter()
                .find(|k| m.map.contains_key(*k));
            if let Some(key) = key {
                if let Some(a) = get(key)?.filter(|a| !a.is_empty()) {
                    if let Some(inner) = a.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                        let argv = args::split_new(inner).map_err(|e| bad(key, e))?;
                        set_str(&mut ad, "JavaVMArguments", &args::join_new(&argv));
                    } else if a.starts_with('"') || args::has_bare_double_quote(&a) {
                        return Err(bad(key, unterminated(&a)));
                    } else {
                        let argv = args::split_old_args(&a);
                        set_str(&mut ad, "JavaVMArgs", &argv.join(" "));
                    }
                }
            }
            if let Some(jars) = get("jar_files")?.filter(|j| !j.is_empty()) {
                // Sent with the job whatever should_transfer_files says:
                // they must be here now.
                for jar in jars.split(',').map(str::trim).filter(|j| !j.is_empty()) {
                    must_exist(env, &resolve(&iwd, jar)).map_err(|e| bad("jar_files", e))?;
                }
                set_str(&mut ad, "JarFiles", &jars);
            }
        }
        let mut environment: Vec<(String, String)> = Vec::new();
        // `env` (not `environment`) in the old syntax asks for the old
        // syntax in the ad, as HTCondor keeps it: `Env`, `;` between
        // pairs, and none of the submitter's variables whose value the
        // old syntax cannot hold (a `;` or a newline).
        let prefer_v1 = m.map.contains_key("env")
            && get("env")?.is_some_and(|e| !e.trim_start().starts_with('"'));
        // The submitter's variables HTCondor takes: none with a newline
        // in its value (nor, for the old syntax, a `;`).
        let importable = |v: &str| !(v.contains('\n') || (prefer_v1 && v.contains(';')));
        if let Some(g) = get("getenv")? {
            match submit_bool(&g) {
                Some(true) => {
                    environment.extend(env.vars().into_iter().filter(|(_, v)| importable(v)))
                }
                Some(false) => {}
                // Names to take and, after `!`, names to leave, with `*`
                // wildcards and in any case, as HTCondor 10 and later.
                None => {
                    let (mut take, mut leave) = (Vec::new(), Vec::new());
                    for p in g.split([',', ';', ' ', '\t', '\r', '\n']) {
                        match p.strip_prefix('!') {
                            Some(p) if !p.trim().is_empty() => leave.push(p.trim()),
                            Some(_) => {}
                            None if !p.is_empty() => take.push(p),
                            None => {}
                        }
                    }
                    environment.extend(env.vars().into_iter().filter(|(k, v)| {
                        importable(v)
                            && !leave.iter().any(|p| star_match(p, k))
                            && (take.is_empty() || take.iter().any(|p| star_match(p, k)))
                    }));
                }
            }
        }
        if let Some(e) = get("environment")?.or(get("env")?) {
            let key = if m.map.contains_key("environment") {
                "environment"
            } else {
                "env"
            };
            let pairs = if let Some(inner) = e.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                args::split_new(inner)
                    .and_then(args::env_pairs)
                    .map_err(|x| bad(key, x))?
            } else if e.starts_with('"') {
                return Err(bad(key, unterminated(&e)));
            } else {
                // Written in the new syntax only, as HTCondor does.
                args::split_old_env(&e).map_err(|x| bad(key, x))?
            };
            for (k, v) in pairs {
                environment.retain(|(old, _)| *old != k);
                environment.push((k, v));
            }
        }
        if prefer_v1 {
            let mut pairs: Vec<&(String, String)> = environment.iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            let v1: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            set_str(&mut ad, "Env", &v1.join(";"));
            set_str(&mut ad, "EnvDelim", ";");
        } else if !environment.is_empty() {
            set_str(&mut ad, "Environment", &args::join_env(&environment));
        }
        for (key, name) in [("input", "In"), ("output", "Out"), ("error", "Err")] {
            let v = get(key)?
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "/dev/null".to_owned());
            values::path(&v).map_err(|e| bad(key, e))?;
            if key == "input" && v != "/dev/null" {
                must_exist(env, &resolve(&iwd, &v)).map_err(|e| bad(key, e))?;
            }
            if key != "input" && v != "/dev/null" {
                // Output lands in a directory that must be there: the
                // agent makes none.
                let to = resolve(&iwd, &v);
                values::path(&to.to_string_lossy()).map_err(|e| bad(key, e))?;
                if let Some(parent) = to.parent() {
                    Self::directory(env, parent, &mut seen.directories).map_err(|e| bad(key, e))?;
                }
            }
            set_str(&mut ad, name, &v);
        }
        if let Some(log) = get("log")? {
            let to = resolve(&iwd, &log);
            values::path(&to.to_string_lossy()).map_err(|e| bad("log", e))?;
            if let Some(parent) = to.parent() {
                Self::directory(env, parent, &mut seen.directories).map_err(|e| bad("log", e))?;
            }
            set_str(&mut ad, "UserLog", &to.to_string_lossy());
        }
        // A file list may come in double quotes (`""`: no files), as
        // HTCondor reads it; an empty one is not given.
        let file_list = |key: &str| -> Result<Option<String>, SubmitError> {
            Ok(get(key)?.filter(|v| !v.is_empty()).map(|v| {
                let inner = v.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
                comma_list(inner.unwrap_or(&v))
            }))
        };
        let input_list = file_list("transfer_input_files")?.filter(|l| !l.is_empty());
        if let Some(list) = &input_list {
            // URLs are fetched where the job runs; files must be here now.
            for name in list
                .split(',')
                .filter(|n| !n.is_empty() && !n.contains("://"))
            {
                must_exist(env, &resolve(&iwd, name))
                    .map_err(|e| bad("transfer_input_files", e))?;
            }
            set_str(&mut ad, "TransferInput", list);
        }
        if let Some(list) = file_list("transfer_output_files")? {
            set_str(&mut ad, "TransferOutput", &list);
        }
        if let Some(list) = get("transfer_checkpoint_files")? {
            let list = comma_list(&list);
            // Checkpoint files are the sandbox's: named from inside it.
            for name in list.split(',').filter(|n| !n.is_empty()) {
                let inside = std::path::Path::new(name)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
                if !inside {
                    return Err(bad(
                        "transfer_checkpoint_files",
                        format!("{name:?} is not a path inside the job's sandbox"),
                    ));
                }
            }
            set_str(&mut ad, "TransferCheckpoint", &list);
        }
        if let Some(k) = get("checkpoint_replicas")? {
            let replicas = k
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|k| (1..=MAX_CHECKPOINT_REPLICAS).contains(k))
                .ok_or_else(|| {
                    bad(
                        "checkpoint_replicas",
                        format!("{k:?} is not a whole number from 1 to {MAX_CHECKPOINT_REPLICAS}"),
                    )
                })?;
            set(&mut ad, "CheckpointReplicas", Value::Int(replicas));
        }
        if !transfer_executable {
            set(&mut ad, "TransferExecutable", Value::Bool(false));
        }
        // A program sent with the job must be here; one that is already on
        // the machines (transfer_executable = false) need not.
        if transfer_executable {
            must_exist(env, &resolve(cwd, &executable)).map_err(|e| bad("executable", e))?;
        }
        // HTCondor's defaults: IF_NEEDED, and output back when the job
        // exits; ON_EXIT_OR_EVICT with no should_transfer_files given makes
        // it YES (the two are incompatible only when IF_NEEDED is said).
        let on_exit_or_evict = get("when_to_transfer_output")?
            .is_some_and(|w| w.eq_ignore_ascii_case("ON_EXIT_OR_EVICT"));
        let should = match get("should_transfer_files")? {
            None if on_exit_or_evict => "YES".to_owned(),
            None => "IF_NEEDED".to_owned(),
            Some(s) => {
                let mut up = s.to_ascii_uppercase();
                // HTCondor takes ALWAYS and booleans too.
                match parse_bool(&up) {
                    _ if up == "ALWAYS" => up = "YES".to_owned(),
                    Some(true) => up = "YES".to_owned(),
                    Some(false) => up = "NO".to_owned(),
                    None => {}
                }
                if !["YES", "NO", "IF_NEEDED"].contains(&up.as_str()) {
                    return Err(bad(
                        "should_transfer_files",
                        format!("{s:?} is not YES, NO or IF_NEEDED"),
                    ));
                }
                up
            }
        };
        set_str(&mut ad, "ShouldTransferFiles", &should);
        if should == "NO" && input_list.is_some() {
            return Err(bad(
                "transfer_input_files",
                "is set but should_transfer_files = NO: say YES or IF_NEEDED to send them"
                    .to_owned(),
            ));
        }
        // As HTCondor: a java job sends its class file and jar files as
        // input (never renamed) and runs the machine's `java`.
        let mut java_inputs = Vec::new();
        if universe == Universe::Java && should != "NO" {
            let mut list: Vec<String> = input_list
                .as_deref()
                .map(|l| l.split(',').map(str::to_owned).collect())
                .unwrap_or_default();
            let class = cmd.to_string_lossy().into_owned();
            if !list.contains(&class) {
                list.push(class.clone());
                java_inputs.push(class);
            }
            if let Some(jars) = get("jar_files")?.filter(|j| !j.is_empty()) {
                for jar in jars.split(',').map(str::trim).filter(|j| !j.is_empty()) {
                    list.push(jar.to_owned());
                    java_inputs.push(jar.to_owned());
                }
            }
            set_str(&mut ad, "TransferInput", &list.join(","));
            set_str(&mut ad, "Cmd", "java");
            set(&mut ad, "TransferExecutable", Value::Bool(false));
        }
        if let Some(w) = get("when_to_transfer_output")? {
            let up = w.to_ascii_uppercase();
            if !["ON_EXIT", "ON_EXIT_OR_EVICT", "ON_SUCCESS"].contains(&up.as_str()) {
                return Err(bad(
                    "when_to_transfer_output",
                    format!("{w:?} is not ON_EXIT or ON_EXIT_OR_EVICT"),
                ));
            }
            if up == "ON_EXIT_OR_EVICT" && should == "IF_NEEDED" {
                return Err(bad(
                    "when_to_transfer_output",
                    "ON_EXIT_OR_EVICT needs should_transfer_files = YES (as in HTCondor)"
                        .to_owned(),
                ));
            }
            set_str(&mut ad, "WhenToTransferOutput", &up);
        } else if should != "NO" {
            set_str(&mut ad, "WhenToTransferOutput", "ON_EXIT");
        }
        // Where output files not remapped come back (relative to Iwd; the
        // submit agent makes it, as HTCondor's shadow does).
        if let Some(dir) = get("output_directory")?.filter(|d| !d.trim().is_empty()) {
            let dir = dir.trim();
            values::path(dir).map_err(|e| bad("output_directory", e))?;
            set_str(&mut ad, "OutputDirectory", dir);
        }
        // Late materialization's limits, kept by the submit agent as the
        // schedd's factory would (starling_policies::materialize).
        for (keys, name) in [
            (&["max_materialize"][..], "JobMaterializeLimit"),
            (
                &["max_idle", "materialize_max_idle"][..],
                "JobMaterializeMaxIdle",
            ),
        ] {
            for key in keys {
                if let Some(v) = get(key)? {
                    let n: i64 = v
                        .trim()
                        .parse()
                        .map_err(|_| bad(key, format!("{v:?} is not a whole number of jobs")))?;
                    if !(1..=MAX_PROCS as i64).contains(&n) {
                        return Err(bad(key, format!("{n} is not within 1-{MAX_PROCS}")));
                    }
                    set(&mut ad, name, Value::Int(n));
                    break;
                }
            }
        }
        if universe == Universe::Parallel {
            parallel_attributes(&mut ad, &get, &bad)?;
        } else {
            // One machine per job, as HTCondor writes for every universe
            // but parallel.
            set(&mut ad, "MinHosts", Value::Int(1));
            set(&mut ad, "MaxHosts", Value::Int(1));
        }
        let notification = match get("notification")? {
            None => 0,
            Some(n) => match n.to_ascii_lowercase().as_str() {
                "never" => 0,
                "always" => 1,
                "complete" => 2,
                "error" => 3,
                _ => {
                    return Err(bad(
                        "notification",
                        format!("{n:?} is not Never, Always, Complete or Error"),
                    ))
                }
            },
        };
        set(&mut ad, "JobNotification", Value::Int(notification));
        // Requests: a number with an optional unit, or an expression.
        let cpus = get("request_cpus")?.unwrap_or_else(|| "1".to_owned());
        request(&mut ad, "RequestCpus", &cpus, None, values::CPUS)
            .map_err(|e| bad("request_cpus", e))?;
        let memory = get("request_memory")?.unwrap_or_else(|| "128".to_owned());
        // A list of sizes is HTCondor's retry ladder: the first is the
        // request, the rest the sizes of its retries.
        let ladder = retry_list(&memory).map(|first| {
            let rest = memory.split_once(',').map_or("", |(_, r)| r);
            (first.to_owned(), rest.to_owned())
        });
        request(
            &mut ad,
            "RequestMemory",
            ladder.as_ref().map_or(&memory, |(first, _)| first),
            Some(Unit::Mib),
            values::MEMORY,
        )
        .map_err(|e| bad("request_memory", e))?;
        // A job that goes over its memory runs again with more
        // (`retry_request_memory*`), as HTCondor writes it: only beside
        // a request that is an amount, not an expression.
        if let Some(Expr::Literal(Value::Int(request_mib))) = ad.get("RequestMemory").cloned() {
            let (key, list) = match &ladder {
                Some((_, rest)) => ("request_memory", Some(rest.clone())),
                None => match get("retry_request_memory")? {
                    Some(l) => ("retry_request_memory", Some(l)),
                    None => ("retry_request_memory_max", get("retry_request_memory_max")?),
                },
            };
            let increase = get("retry_request_memory_increase")?;
            let retry = retry::Memory {
                request_mib,
                key,
                list: list.as_deref(),
                increase: increase.as_deref(),
            };
            retry::memory(&mut ad, &retry).map_err(|(key, e)| bad(key, e))?;
        }
        // What the job brings, as condor_submit counts it: the executable
        // (sent or not), the input and transfer_input_files, each file
        // rounded up to a KiB; URLs are fetched where the job runs.
        let mut input_kib = seen.size_kib(env, resolve(&iwd, &cmd.to_string_lossy()));
        if let Some(stdin) = get("input")?.filter(|v| !v.is_empty() && !v.contains("://")) {
            input_kib = input_kib.saturating_add(seen.size_kib(env, resolve(&iwd, &stdin)));
        }
        if let Some(list) = &input_list {
            for name in list
                .split(',')
                .filter(|n| !n.is_empty() && !n.contains("://"))
            {
                input_kib = input_kib.saturating_add(seen.size_kib(env, resolve(&iwd, name)));
            }
        }
        for name in &java_inputs {
            input_kib = input_kib.saturating_add(seen.size_kib(env, resolve(&iwd, name)));
        }
        set(
            &mut ad,
            "TransferInputSizeMB",
            Value::Int(i64::try_from(input_kib.div_ceil(1024)).unwrap_or(i64::MAX)),
        );
        match get("request_disk")? {
            Some(disk) => {
                let disk = retry_list(&disk).map_or(disk.clone(), str::to_owned);
                request(&mut ad, "RequestDisk", &disk, Some(Unit::Kib), values::DISK)
                    .map_err(|e| bad("request_disk", e))?;
            }
            // HTCondor 25's default (JOB_DEFAULT_REQUESTDISK), kept as the
            // expression so that the ad reads as HTCondor's: 1.25 times
            // the input plus 1 MiB, at least 1 GiB, in KiB.
            None => set_expr(&mut ad, "request_disk", "RequestDisk", DEFAULT_REQUEST_DISK)?,
        }

        // Any other `request_<name>` asks for a custom machine resource
        // as HTCondor does: Request<name> in the job, a clause below.
        let mut custom = Vec::new();
        for key in m.map.keys() {
            let Some(tag) = key.strip_prefix("request_") else {
                continue;
            };
            if tag.len() < 2
                || tag.starts_with('_')
                || COMMANDS.contains(&key.as_str())
                || gpus::COMMANDS.contains(&key.as_str())
            {
                continue;
            }
            let Some(v) = get(key)? else { continue };
            let name = format!("Request{tag}");
            set_expr(&mut ad, key, &name, &v)?;
            custom.push((tag.to_owned(), name));
        }
        let user_requirements = get("requirements")?;
        let mut machine_refs = std::collections::BTreeSet::new();
        if let Some(r) = &user_requirements {
            let expr = parse_expr(r).map_err(|e| {
                bad(
                    "requirements",
                    format!("{r:?} is not a ClassAd expression: {e}"),
                )
            })?;
            machine_refs = crate::classad::references(&expr).of_target(&ad);
        }
        // HTCondor's resource clauses, as it adds them: a request that is
        // a literal amount no machine lacks (no disk, one core, 1 MiB of
        // memory) makes none; disk and cores none either when the user's
        // requirements look at the machine's own (TARGET.Disk, Cpus),
        // except that a disk request is still checked.
        let mut clauses = Vec::new();
        let more_than = |name: &str, floor: f64| match ad.get(name) {
            None => None,
            Some(Expr::Literal(Value::Int(n))) => Some(*n as f64 > floor),
            Some(Expr::Literal(Value::Real(n))) => Some(*n > floor),
            Some(_) => Some(true),
        };
        if machine_refs.contains("disk") {
            if ad.get("RequestDisk").is_some() {
                clauses.push("(TARGET.Disk >= RequestDisk)");
            }
        } else if more_than("RequestDisk", 0.0) == Some(true) {
            clauses.push("(TARGET.Disk >= RequestDisk)");
        }
        if more_than("RequestMemory", 1.0) == Some(true) {
            clauses.push("(TARGET.Memory >= RequestMemory)");
        }
        if !machine_refs.contains("cpus") && more_than("RequestCpus", 1.0) == Some(true) {
            clauses.push("(TARGET.Cpus >= RequestCpus)");
        }
        let mut clauses: Vec<String> = clauses.into_iter().map(str::to_owned).collect();
        for (tag, name) in &custom {
            if machine_refs.contains(&tag.to_ascii_lowercase()) {
                continue;
            }
            // A positive amount (or one known only at the machine) is
            // compared with the machine's; a non-empty text matched.
            match Evaluator::with_ads(Some(&ad), None)
                .eval_attr(Side::My, Name::known(name).folded())
            {
                Value::Int(n) if n <= 0 => {}
                Value::Real(n) if n <= 0.0 => {}
                Value::Int(_) | Value::Real(_) | Value::Undefined => {
                    clauses.push(format!("(TARGET.{tag} >= {name})"));
                }
                Value::String(text) if !text.is_empty() => {
                    clauses.push(format!("regexp({name}, TARGET.{tag})"));
                }
                _ => {}
            }
        }
        let mut resources = clauses.join(" && ");
        let mut gpu_values = Vec::with_capacity(gpus::COMMANDS.len());
        for key in gpus::COMMANDS {
            gpu_values.push(get(key)?);
        }
        let gpu_clause = gpus::job_attributes(&mut ad, &gpu_values, user_requirements.as_deref())
            .map_err(|(i, problem)| bad(gpus::COMMANDS[i], problem))?;
        if let Some(clause) = gpu_clause {
            if !resources.is_empty() {
                resources.push_str(" && ");
            }
            resources.push_str(&clause);
        }
        if universe == Universe::Java {
            // As HTCondor: the job needs a machine with a JVM.
            resources = if resources.is_empty() {
                "TARGET.HasJava".to_owned()
            } else {
                format!("TARGET.HasJava && {resources}")
            };
        }
        let requirements = match (&user_requirements, resources.is_empty()) {
            (Some(r), false) => format!("({r}) && {resources}"),
            (Some(r), true) => format!("({r})"),
            (None, false) => resources,
            (None, true) => "true".to_owned(),
        };
        set_expr(&mut ad, "requirements", "Requirements", &requirements)?;
        match get("rank")? {
            Some(r) => set_expr(&mut ad, "rank", "Rank", &r)?,
            None => set(&mut ad, "Rank", Value::Real(0.0)),
        }
        let prio = match get("priority")? {
            Some(p) => p
                .trim()
                .parse::<i64>()
                .map_err(|_| bad("priority", format!("{p:?} is not a whole number")))?,
            None => 0,
        };
        set(&mut ad, "JobPrio", Value::Int(prio));
        // nice_user puts the job in HTCondor's nice-user accounting group
        // (whose share the pool's priority factors make small).
        let nice = match get("nice_user")? {
            None => false,
            Some(n) => submit_bool(&n)
                .ok_or_else(|| bad("nice_user", format!("{n:?} is not true or false")))?,
        };
        let group = get("accounting_group")?.or(nice.then(|| "nice-user".to_owned()));
        let group_user = get("accounting_group_user")?;
        if let Some(g) = &group {
            set_str(&mut ad, "AcctGroup", g);
        }
        if let Some(u) = &group_user {
            set_str(&mut ad, "AcctGroupUser", u);
        } else if group.is_some() {
            set_str(&mut ad, "AcctGroupUser", &env.owner());
        }
        // HTCondor's accounting principal: the group and its user (the
        // owner unless given), whose usage fair share counts.
        if let Some(g) = &group {
            let user = group_user.clone().unwrap_or_else(|| env.owner());
            set_str(&mut ad, "AccountingGroup", &format!("{g}.{user}"));
        }
        if let Some(b) = get("batch_name")? {
            // Written without its quotes, as HTCondor writes it.
            let b = b
                .strip_prefix('"')
                .and_then(|b| b.strip_suffix('"'))
                .unwrap_or(&b);
            set_str(&mut ad, "JobBatchName", b);
        }
        if let Some(d) = get("description")? {
            set_str(&mut ad, "JobDescription", &d);
        }
        if let Some(n) = get("notify_user")? {
            set_str(&mut ad, "NotifyUser", &n);
        }
        for (key, name) in EXPRESSIONS {
            if let Some(v) = get(key)? {
                set_expr(&mut ad, key, name, &v)?;
            }
        }
        // max_retries, success_exit_code and retry_until as HTCondor
        // writes them: the job leaves the queue when it succeeds or has
        // run out of retries (2 unless max_retries says).
        let max_retries = get("max_retries")?;
        let success = get("success_exit_code")?;
        let retry_until = get("retry_until")?;
        if max_retries.is_some() || success.is_some() || retry_until.is_some() {
            let n = match &max_retries {
                None => 2,
                Some(n) => n
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| bad("max_retries", format!("{n:?} is not a whole number")))?,
            };
            set(&mut ad, "JobMaxRetries", Value::Int(n));
            let mut done = match &success {
                None => "0".to_owned(),
                Some(code) => {
                    let code = code.trim().parse::<i32>().map_err(|_| {
                        bad("success_exit_code", format!("{code:?} is not an exit code"))
                    })?;
                    set(&mut ad, "JobSuccessExitCode", Value::Int(code.into()));
                    "JobSuccessExitCode".to_owned()
                }
            };
            if let Some(until) = &retry_until {
                // An exit code that ends the retries, or a condition.
                let until = match until.trim().parse::<i32>() {
                    Ok(code) => format!("ExitCode =?= {code}"),
                    Err(_) => {
                        let expr = parse_expr(until).map_err(|e| {
                            bad(
                                "retry_until",
                                format!(
                                    "{until:?} is not an exit code or a ClassAd expression: {e}"
                                ),
                            )
                        })?;
                        or_operand(&expr, until)
                    }
                };
                done = format!("{done} || {until}");
            }
            let mut remove = format!("NumJobCompletions > JobMaxRetries || ExitCode =?= {done}");
            if let Some(user) = get("on_exit_remove")? {
                let expr = parse_expr(&user).map_err(|e| {
                    bad(
                        "on_exit_remove",
                        format!("{user:?} is not a ClassAd expression: {e}"),
                    )
                })?;
                remove = format!("{remove} || {}", or_operand(&expr, &user));
            }
            set_expr(&mut ad, "max_retries", "OnExitRemove", &remove)?;
            if get("on_exit_hold")?.is_none() {
                set(&mut ad, "OnExitHold", Value::Bool(false));
            }
        }
        if let Some(code) = get("checkpoint_exit_code")? {
            // HTCondor's name for it, beside the one Starling's execute
            // side reads.
            set_expr(
                &mut ad,
                "checkpoint_exit_code",
                "SuccessCheckpointExitCode",
                &code,
            )?;
        }
        // Held for the whole domain the job runs in by its share keeper
        // (see `limits`); in lower case and sorted, as HTCondor keeps them.
        if let Some(v) = get("concurrency_limits")? {
            let limits = limits::parse(&v).map_err(|e| bad("concurrency_limits", e))?;
            if !limits.is_empty() {
                set_str(&mut ad, "ConcurrencyLimits", &limits::show(&limits));
            }
        }
        for (key, name) in [("transfer_output_remaps", "TransferOutputRemaps")] {
            if let Some(v) = get(key)? {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(v);
                // Output goes into files the owner may write, not to URLs.
                if v.contains("://") {
                    return Err(bad(
                        key,
                        format!(
                            "{v:?} sends output to a URL; Starling places output only in \
                             files (a path, relative to initialdir or absolute)"
                        ),
                    ));
                }
                set_str(&mut ad, name, v);
            }
        }
        // Held when exceeded (the submit agent's job policy, HTCondor's
        // codes 46 and 47).
        for (key, name) in [
            ("allowed_job_duration", "AllowedJobDuration"),
            ("allowed_execute_duration", "AllowedExecuteDuration"),
        ] {
            if let Some(v) = get(key)? {
                set_expr(&mut ad, key, name, v.trim())?;
            }
        }
        if let Some(k) = get("kill_sig")? {
            let signal = kill_sig::parse(&k).map_err(|e| bad("kill_sig", e))?;
            set_str(&mut ad, "KillSig", signal);
        } else if universe != Universe::Vanilla {
            // HTCondor writes its default for every universe but vanilla.
            set_str(&mut ad, "KillSig", kill_sig::DEFAULT);
        }
        // Integer expressions of the job, as HTCondor writes them; -1: no
        // limit.
        for (key, name) in [
            ("max_transfer_input_mb", "MaxTransferInputMB"),
            ("max_transfer_output_mb", "MaxTransferOutputMB"),
        ] {
            if let Some(v) = get(key)? {
                set_expr(&mut ad, key, name, &v)?;
            }
        }
        if let Some(h) = get("hold")? {
            if submit_bool(&h).ok_or_else(|| bad("hold", format!("{h:?} is not true or false")))? {
                set(&mut ad, "JobStatus", Value::Int(5));
                // As HTCondor words it, with no subcode.
                set_str(&mut ad, "HoldReason", "submitted on hold at user's request");
                set(&mut ad, "HoldReasonCode", Value::Int(15));
            }
        }
        // +Attr and MY.Attr last: the user may override anything.
        for (key, _) in m.map.iter().filter(|(k, _)| k.starts_with("my.")) {
            let text = m.expand(&m.map[key], per, 0)?;
            let attr = &key[3..];
            let expr = parse_expr(&text).map_err(|e| bad(key, format!("{text:?}: {e}")))?;
            let name = Name::new(attr).map_err(|e| bad(key, e.to_string()))?;
            if ["clusterid", "procid"].contains(&attr.to_ascii_lowercase().as_str()) {
                return Err(bad(key, "belongs to the queue".to_owned()));
            }
            ad.insert(name, expr);
        }
        if let Err((attribute, problem)) = values::check_job(&ad) {
            let (key, shown) = responsible(m.map, attribute);
            let at = key.and_then(|k| m.line_of(&k)).unwrap_or(line);
            return Err(self.error(at, format!("{shown}: {problem}")));
        }
        input_over_its_limit(&mut ad);
        Ok(ad)
    }

    /// `Ok` when `dir` is a directory the submitter can reach (remembered
    /// in `seen`), else the problem in words.
    fn directory(
        env: &dyn Environment,
        dir: &Path,
        seen: &mut std::collections::BTreeSet<PathBuf>,
    ) -> Result<(), String> {
        if seen.contains(dir) {
            return Ok(());
        }
        match env.check_directory(dir) {
            Ok(()) => {
                seen.insert(dir.to_path_buf());
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
                "the directory {} does not exist; make it first (starling submit, like \
                 condor_submit, does not create it)",
                dir.display()
            )),
            Err(e) => Err(format!(
                "the directory {} cannot be used: {e}",
                dir.display()
            )),
        }
    }
}

/// A job whose input (`TransferInputSizeMB`, measured at submit) is more
/// than its `MaxTransferInputMB` (an integer expression of the job; -1 or
/// anything else: no limit) is queued held, with HTCondor's code 32 and
/// reason, as the schedd holds it at submit.
fn input_over_its_limit(ad: &mut ClassAd) {
    let eval = |name: &str| {
        ad.get(name)
            .map(|e| Evaluator::with_ads(Some(ad), None).eval(e))
    };
    let (Some(Value::Int(max)), Some(Value::Int(size))) =
        (eval("MaxTransferInputMB"), eval("TransferInputSizeMB"))
    else {
        return;
    };
    if max >= 0 && size > max {
        let reason = format!(
            "TransferInputSizeMB ({size}) is greater than MAX_TRANSFER_INPUT_MB ({max}) at \
             submit time"
        );
        for (name, value) in [
            ("JobStatus", Value::Int(5)),
            ("HoldReason", Value::String(reason.into())),
            ("HoldReasonCode", Value::Int(32)),
            ("HoldReasonSubCode", Value::Int(0)),
        ] {
            ad.insert(Name::known(name), Expr::Literal(value));
        }
    }
}

/// The submit commands that set each job attribute [`values`] checks.
const ATTRIBUTE_COMMANDS: &[(&str, &[&str])] = &[
    ("Iwd", &["initialdir", "initial_dir"]),
    ("Cmd", &["executable"]),
    ("In", &["input"]),
    ("Out", &["output"]),
    ("Err", &["error"]),
    ("UserLog", &["log"]),
    ("TransferInput", &["transfer_input_files"]),
    ("TransferOutput", &["transfer_output_files"]),
    ("TransferCheckpoint", &["transfer_checkpoint_files"]),
    ("JobBatchName", &["batch_name"]),
    ("AcctGroup", &["accounting_group"]),
    ("AcctGroupUser", &["accounting_group_user"]),
    (
        "AccountingGroup",
        &["accounting_group_user", "accounting_group"],
    ),
    ("NotifyUser", &["notify_user"]),
    ("JobDescription", &["description"]),
    ("HoldReason", &["hold"]),
    ("Arguments", &["arguments", "args"]),
    ("Args", &["arguments", "args"]),
    ("KillSig", &["kill_sig"]),
    ("RequestCpus", &["request_cpus"]),
    ("RequestMemory", &["request_memory"]),
    ("RequestDisk", &["request_disk"]),
];

/// Who set job attribute `attribute` in the file: the `+Attr` that
/// overrode it, else its command; the key as stored (for its line) and as
/// shown.
fn responsible(map: &BTreeMap<String, String>, attribute: &str) -> (Option<String>, String) {
    if let Some(key) = map.keys().find(|k| {
        k.strip_prefix("my.")
            .is_some_and(|a| a.eq_ignore_ascii_case(attribute))
    }) {
        return (Some(key.clone()), format!("+{}", &key[3..]));
    }
    ATTRIBUTE_COMMANDS
        .iter()
        .find(|(a, _)| *a == attribute)
        .and_then(|(_, commands)| commands.iter().find(|c| map.contains_key(**c)))
        .map_or((None, attribute.to_owned()), |c| {
            (Some((*c).to_owned()), (*c).to_owned())
        })
}

#[derive(Clone, Copy)]
enum Unit {
    Mib,
    Kib,
}

/// Sets a request: `2G`, `512MB`, `100` (in the default unit) or an
/// expression. An amount, or an expression of constants, must be one
/// [`values::amount`] allows for `resource`; `nan` and `inf` are refused by
/// name (they would be attribute references that never evaluate).
fn request(
    ad: &mut ClassAd,
    name: &str,
    text: &str,
    unit: Option<Unit>,
    resource: values::Resource,
) -> Result<(), String> {
    let t = text.trim();
    if values::names_non_finite(t) {
        return Err(format!(
            "{t:?} is not a finite number; give an amount such as 1024"
        ));
    }
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits_end);
    if !number.is_empty() {
        if let (Ok(n), Some(unit)) = (number.parse::<f64>(), unit) {
            let kib = match suffix.trim().to_ascii_uppercase().as_str() {
                "" => match unit {
                    Unit::Mib => n * 1024.0,
                    Unit::Kib => n,
                },
                "K" | "KB" | "KIB" => n,
                "M" | "MB" | "MIB" => n * 1024.0,
                "G" | "GB" | "GIB" => n * 1024.0 * 1024.0,
                "T" | "TB" | "TIB" => n * 1024.0 * 1024.0 * 1024.0,
                _ => f64::NAN,
            };
            if !kib.is_nan() {
                let value = match unit {
                    Unit::Mib => (kib / 1024.0).ceil(),
                    Unit::Kib => kib.ceil(),
                };
                values::amount(resource, t, value)?;
                ad.insert(Name::known(name), Expr::Literal(Value::Int(value as i64)));
                return Ok(());
            }
        } else if suffix.is_empty() {
            let n: f64 = number
                .parse()
                .map_err(|_| format!("{t:?} is not a number"))?;
            values::amount(resource, t, n)?;
        }
    }
    let expr =
        parse_expr(t).map_err(|e| format!("{t:?} is neither an amount nor an expression: {e}"))?;
    values::constant_request(resource, t, &expr)?;
    ad.insert(Name::known(name), expr);
    Ok(())
}

/// Why a value that opens with a double quote (the new syntax of
/// `arguments` and `environment`) is refused when it does not close with
/// one.
fn unterminated(value: &str) -> String {
    format!(
        "{value:?} opens with a double quote but does not end with one (an unterminated \
         quoted string); close it, or drop the opening quote for the old syntax"
    )
}

/// `text` (parsed as `expr`) as an operand of `||`: in parentheses when
/// its own operator binds more loosely (a `?:`), as HTCondor wraps it.
fn or_operand(expr: &Expr, text: &str) -> String {
    if matches!(expr, Expr::Cond(..)) {
        format!("({})", text.trim())
    } else {
        text.trim().to_owned()
    }
}

/// `Ok` when `path` is there for the submitter; a message naming it when
/// nothing is (other problems are found when the job's files are opened).
fn must_exist(env: &dyn Environment, path: &Path) -> Result<(), String> {
    match env.check_exists(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{} does not exist", path.display()))
        }
        _ => Ok(()),
    }
}

/// A boolean command's value as HTCondor reads it: `true`, `false`, `1`
/// or `0` in any case, else a ClassAd expression that evaluates to a
/// boolean or a number (`yes` is neither: `nice_user = yes` is refused,
/// `getenv = yes` names a variable).
fn submit_bool(v: &str) -> Option<bool> {
    let t = v.trim();
    let lower = t.to_ascii_lowercase();
    for (word, b) in [("true", true), ("1", true), ("false", false), ("0", false)] {
        if lower
            .strip_prefix(word)
            .is_some_and(|rest| rest.trim().is_empty())
        {
            return Some(b);
        }
    }
    let expr = parse_expr(t).ok()?;
    let empty = ClassAd::new();
    match Evaluator::with_ads(Some(&empty), None).eval_on(Side::My, &expr) {
        Value::Bool(b) => Some(b),
        Value::Int(n) => Some(n != 0),
        Value::Real(r) => Some(r != 0.0),
        _ => None,
    }
}

fn comma_list(list: &str) -> String {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// What one expansion has looked at already, for all its procs: the
/// directories found there, the sizes of inputs (KiB), and how many
/// directory entries it has read to size them.
#[derive(Default)]
pub(super) struct Seen {
    directories: std::collections::BTreeSet<PathBuf>,
    sizes: BTreeMap<PathBuf, u64>,
    entries_read: usize,
}

impl Seen {
    fn size_kib(&mut self, env: &dyn Environment, path: PathBuf) -> u64 {
        if let Some(kib) = self.sizes.get(&path) {
            return *kib;
        }
        let left = MAX_SIZED_ENTRIES.saturating_sub(self.entries_read);
        let (kib, read) = env.size_kib(&path, left);
        self.entries_read = self.entries_read.saturating_add(read);
        self.sizes.insert(path, kib);
        kib
    }
}
