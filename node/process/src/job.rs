//! What a job ad asks to run with: its argv (`Arguments`, else the
//! old-syntax `Args`), environment (`Environment`, else the old-syntax
//! `Env`), and the signal it is asked to leave with (`KillSig`).

use rustix::process::Signal;
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use starling_protocol::submit::{args, kill_sig};

fn text(job: &ClassAd, name: &str) -> Option<String> {
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The job's arguments.
pub fn arguments(job: &ClassAd) -> Result<Vec<String>, String> {
    if let Some(new) = text(job, "Arguments") {
        return args::split_stored(&new).map_err(|e| format!("Arguments: {e}"));
    }
    Ok(text(job, "Args")
        .map(|old| args::split_old_args(&old))
        .unwrap_or_default())
}

/// HTCondor's number for the java universe (`JobUniverse`).
pub const JAVA_UNIVERSE: i64 = 10;

/// Whether the job is a java-universe one (`JobUniverse = 10`).
pub fn is_java(job: &ClassAd) -> bool {
    matches!(
        Evaluator::with_ads(Some(job), None)
            .eval_attr(Side::My, Name::known("JobUniverse").folded()),
        Value::Int(JAVA_UNIVERSE)
    )
}

/// What a java-universe job runs, as HTCondor's java starter builds it
/// (`java_proc.cpp`, `java_config.cpp`): `java -classpath <sandbox>:<each
/// jar file of JarFiles, by its name in the sandbox> <the JVM's arguments>
/// <the job's arguments>`, the first of which names the main class. The
/// JVM's arguments are `JavaVMArguments`, else the old-syntax
/// `JavaVMArgs`. HTCondor's wrapper class (`CondorJavaWrapper`) and its
/// Chirp settings are not used: the JVM runs the job's class itself.
pub fn java_arguments(job: &ClassAd, sandbox: &std::path::Path) -> Result<Vec<String>, String> {
    let mut classpath = vec![sandbox.to_string_lossy().into_owned()];
    if let Some(jars) = text(job, "JarFiles") {
        for jar in jars.split(',').map(str::trim).filter(|j| !j.is_empty()) {
            let base = std::path::Path::new(jar)
                .file_name()
                .ok_or_else(|| format!("JarFiles: {jar:?} names no file"))?;
            classpath.push(sandbox.join(base).to_string_lossy().into_owned());
        }
    }
    let mut argv = vec!["-classpath".to_owned(), classpath.join(":")];
    if let Some(new) = text(job, "JavaVMArguments") {
        argv.extend(args::split_stored(&new).map_err(|e| format!("JavaVMArguments: {e}"))?);
    } else if let Some(old) = text(job, "JavaVMArgs") {
        argv.extend(args::split_old_args(&old));
    }
    let job_args = arguments(job)?;
    if job_args.is_empty() {
        return Err(
            "a java job names its main class as its first argument, and this one has no arguments"
                .to_owned(),
        );
    }
    argv.extend(job_args);
    Ok(argv)
}

/// The job's environment.
pub fn environment(job: &ClassAd) -> Result<Vec<(String, String)>, String> {
    if let Some(new) = text(job, "Environment") {
        return args::split_stored(&new)
            .and_then(args::env_pairs)
            .map_err(|e| format!("Environment: {e}"));
    }
    match text(job, "Env") {
        Some(old) => args::split_old_env(&old).map_err(|e| format!("Env: {e}")),
        None => Ok(Vec::new()),
    }
}

/// The signal the job is asked to leave with: its `KillSig` (a name such as
/// `"SIGUSR1"`, or a number), read as `kill_sig` is at submit
/// ([`kill_sig::parse`]); SIGTERM when it names none, or one a job could
/// not catch (the ad was edited past the submit's checks).
pub fn kill_signal(job: &ClassAd) -> Signal {
    let named = match Evaluator::with_ads(Some(job), None)
        .eval_attr(Side::My, Name::known("KillSig").folded())
    {
        Value::String(s) => Some(s.to_string()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    };
    let Some(named) = named else {
        return Signal::TERM;
    };
    match kill_sig::parse(&named).map(signal_named) {
        Ok(Some(signal)) => signal,
        _ => {
            tracing::warn!(kill_sig = %named, "the job's KillSig is not a signal it can catch; sending SIGTERM");
            Signal::TERM
        }
    }
}

/// This machine's signal for a name of [`kill_sig::CATCHABLE`].
fn signal_named(name: &str) -> Option<Signal> {
    Some(match name {
        "SIGHUP" => Signal::HUP,
        "SIGINT" => Signal::INT,
        "SIGQUIT" => Signal::QUIT,
        "SIGILL" => Signal::ILL,
        "SIGTRAP" => Signal::TRAP,
        "SIGABRT" => Signal::ABORT,
        "SIGBUS" => Signal::BUS,
        "SIGFPE" => Signal::FPE,
        "SIGUSR1" => Signal::USR1,
        "SIGSEGV" => Signal::SEGV,
        "SIGUSR2" => Signal::USR2,
        "SIGPIPE" => Signal::PIPE,
        "SIGALRM" => Signal::ALARM,
        "SIGTERM" => Signal::TERM,
        "SIGSTKFLT" => Signal::STKFLT,
        "SIGCHLD" => Signal::CHILD,
        "SIGCONT" => Signal::CONT,
        "SIGTSTP" => Signal::TSTP,
        "SIGTTIN" => Signal::TTIN,
        "SIGTTOU" => Signal::TTOU,
        "SIGURG" => Signal::URG,
        "SIGXCPU" => Signal::XCPU,
        "SIGXFSZ" => Signal::XFSZ,
        "SIGVTALRM" => Signal::VTALARM,
        "SIGPROF" => Signal::PROF,
        "SIGWINCH" => Signal::WINCH,
        "SIGIO" => Signal::IO,
        "SIGPWR" => Signal::POWER,
        "SIGSYS" => Signal::SYS,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    #[test]
    fn a_java_job_runs_the_jvm_on_the_sandbox_and_its_jars_with_its_class_first() {
        let sandbox = std::path::Path::new("/sb/job1");
        let ad = parse_ad(
            r#"[ JobUniverse = 10; Cmd = "java"; JarFiles = "lib/util.jar, /abs/extra.jar";
                 JavaVMArguments = "-Xmx256m '-Dgreeting=hi there'";
                 Arguments = "Hello 'two words' -v" ]"#,
        )
        .unwrap();
        assert!(is_java(&ad));
        assert_eq!(
            java_arguments(&ad, sandbox).unwrap(),
            [
                "-classpath",
                "/sb/job1:/sb/job1/util.jar:/sb/job1/extra.jar",
                "-Xmx256m",
                "-Dgreeting=hi there",
                "Hello",
                "two words",
                "-v"
            ]
        );
        // Old-syntax JVM and job arguments; no jar files.
        let old =
            parse_ad(r#"[ JobUniverse = 10; JavaVMArgs = "-Xss4m -Da=b"; Args = "Main 1 2" ]"#)
                .unwrap();
        assert_eq!(
            java_arguments(&old, sandbox).unwrap(),
            [
                "-classpath",
                "/sb/job1",
                "-Xss4m",
                "-Da=b",
                "Main",
                "1",
                "2"
            ]
        );
        // No main class: refused, saying so.
        let none = parse_ad(r#"[ JobUniverse = 10; Arguments = "" ]"#).unwrap();
        assert!(java_arguments(&none, sandbox)
            .unwrap_err()
            .contains("main class"));
        assert!(!is_java(&parse_ad("[ JobUniverse = 5 ]").unwrap()));
    }

    #[test]
    fn the_kill_signal_is_the_jobs_killsig_else_sigterm() {
        let signal = |ad: &str| kill_signal(&parse_ad(ad).unwrap());
        assert_eq!(signal(r#"[ KillSig = "SIGUSR1" ]"#), Signal::USR1);
        assert_eq!(signal(r#"[ KillSig = "usr2" ]"#), Signal::USR2);
        assert_eq!(signal("[ KillSig = 2 ]"), Signal::INT);
        assert_eq!(signal("[ Cmd = \"/bin/x\" ]"), Signal::TERM);
        // Past the submit's checks (an edited ad): never an uncatchable one.
        assert_eq!(signal(r#"[ KillSig = "SIGKILL" ]"#), Signal::TERM);
        assert_eq!(signal(r#"[ KillSig = "BOGUS" ]"#), Signal::TERM);
        // Every name the submit accepts is a signal here.
        for (name, number) in kill_sig::CATCHABLE {
            let signal = signal_named(name).unwrap();
            assert_eq!(signal.as_raw(), *number, "{name}");
        }
    }
}
