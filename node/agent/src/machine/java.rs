//! The machine's JVM, for java-universe jobs, as HTCondor's startd finds
//! it: the configured `java` program ([`config::Java`]) is asked for its
//! properties once at agent start; a machine whose JVM answers advertises
//! `HasJava = true`, `JavaVendor` and `JavaVersion` (HTCondor's `java.vendor`
//! and `java.version`). A machine without one advertises none of them, so
//! the `TARGET.HasJava` clause of a java job's Requirements matches it to
//! no such machine. `JavaMFlops` (HTCondor's benchmark run in the JVM) is
//! not measured.
//!
//! Starting a JVM costs about a CPU-second, and every agent of a host asks
//! the same JVM the same question: the answer is kept in a file of the
//! agent's user in the temporary directory ([`detect_cached`]), keyed by
//! the program's real path, size and change times, so that an agent that
//! restarts, or the hundreds of a testnet, start one JVM between them. A
//! file owned by anyone else, or writable by others, is never believed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::config;

/// How long `java -version` may take: a JVM starts in well under a second
/// on a machine that can run jobs.
pub const JAVA_TIMEOUT: Duration = Duration::from_secs(10);

/// The most `java -version` may print (its properties run to a few KiB).
pub const MAX_JAVA_OUTPUT: usize = 64 * 1024;

/// The arguments that make a JVM print its properties (`java.vendor = ...`)
/// and its version, on its standard error, and exit.
pub const JAVA_PROBE_ARGS: &[&str] = &["-XshowSettings:properties", "-version"];

/// A JVM found on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jvm {
    /// The program, as configured (`java`: found on `PATH`).
    pub program: PathBuf,
    /// `JavaVendor`: the JVM's `java.vendor`; `None` if it did not say.
    pub vendor: Option<String>,
    /// `JavaVersion`: the JVM's `java.version` (`17.0.8`, `1.8.0_381`).
    pub version: String,
}

/// Asks the configured `java` for its vendor and version; `Err` says why
/// there is no JVM here (not found, no answer in time, an answer that
/// names no version).
pub fn detect(settings: &config::Java) -> Result<Jvm, String> {
    let text = run(&settings.program, JAVA_PROBE_ARGS)?;
    let (vendor, version) = parse_version_output(&text)
        .ok_or_else(|| "its answer to -version names no version".to_owned())?;
    Ok(Jvm {
        program: settings.program.clone(),
        vendor,
        version,
    })
}

/// [`detect`], through the host's cache of answers (see the module's
/// doc): a JVM asked before, unchanged since, is not started again.
pub fn detect_cached(settings: &config::Java) -> Result<Jvm, String> {
    let uid = rustix::process::geteuid().as_raw();
    let cache = std::env::temp_dir().join(format!("starling-jvm-{uid}"));
    let key = resolve(&settings.program).and_then(|p| identity_of(&p));
    if let Some(key) = &key {
        if let Some(jvm) = read_cache(&cache, key, uid, &settings.program) {
            return Ok(jvm);
        }
    }
    let jvm = detect(settings)?;
    if let Some(key) = &key {
        write_cache(&cache, key, &jvm);
    }
    Ok(jvm)
}

/// What identifies an installed JVM: its real path, size and times.
fn identity_of(program: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let real = std::fs::canonicalize(program).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    Some(format!(
        "{} {} {}.{} {}.{}",
        real.display(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec()
    ))
}

/// The cached answer for `key`: three lines (key, vendor or empty,
/// version), in a file `uid` owns that no one else may write.
fn read_cache(cache: &Path, key: &str, uid: u32, program: &Path) -> Option<Jvm> {
    use std::io::Read as _;
    use std::os::unix::fs::MetadataExt as _;
    let file = std::fs::File::open(cache).ok()?;
    let meta = file.metadata().ok()?;
    if meta.uid() != uid || meta.mode() & 0o022 != 0 || !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).ok()?;
    let mut lines = text.lines();
    if lines.next()? != key {
        return None;
    }
    let vendor = lines.next()?;
    let version = lines.next().filter(|v| !v.is_empty())?;
    Some(Jvm {
        program: program.to_path_buf(),
        vendor: (!vendor.is_empty()).then(|| vendor.to_owned()),
        version: version.to_owned(),
    })
}

/// Keeps an answer for the next agent (atomically: written aside, then
/// renamed); a cache that cannot be written is only a slower next start.
fn write_cache(cache: &Path, key: &str, jvm: &Jvm) {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let clean = |s: &str| s.replace(['\n', '\r'], " ");
    let aside = cache.with_extension(format!("{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&aside)
        .and_then(|mut f| {
            writeln!(
                f,
                "{}\n{}\n{}",
                clean(key),
                clean(jvm.vendor.as_deref().unwrap_or("")),
                clean(&jvm.version)
            )
        });
    if written.is_err() || std::fs::rename(&aside, cache).is_err() {
        let _ = std::fs::remove_file(&aside);
    }
}

/// The program as a path: a bare name (`java`) is looked up on the agent's
/// `PATH`, as the agent itself found it at start; `None` where it is not
/// there.
pub fn resolve(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return Some(program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Reads what `java -XshowSettings:properties -version` prints: the
/// `java.vendor` and `java.version` properties, else the version from the
/// first line (`openjdk version "17.0.8" 2023-07-18`,
/// `java version "1.8.0_381"`).
pub fn parse_version_output(text: &str) -> Option<(Option<String>, String)> {
    let property = |name: &str| {
        text.lines().find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == name)
                .then(|| value.trim().to_owned())
                .filter(|v| !v.is_empty())
        })
    };
    let vendor = property("java.vendor");
    let version = property("java.version").or_else(|| {
        text.lines().find_map(|l| {
            let (_, rest) = l.split_once(" version \"")?;
            let (v, _) = rest.split_once('"')?;
            (!v.is_empty()).then(|| v.to_owned())
        })
    })?;
    Some((vendor, version))
}

/// Runs `program args`, bounded in time and output; its standard error
/// (where a JVM prints its version), when it exits 0.
fn run(program: &Path, args: &[&str]) -> Result<String, String> {
    use std::io::Read;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut err = child.stderr.take().ok_or("no output")?;
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut err)
            .take(MAX_JAVA_OUTPUT as u64 + 1)
            .read_to_end(&mut text);
        text
    });
    let deadline = Instant::now() + JAVA_TIMEOUT;
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("gave no answer in {} s", JAVA_TIMEOUT.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let text = reader.join().map_err(|_| "its output could not be read")?;
    if text.len() > MAX_JAVA_OUTPUT {
        return Err(format!("printed more than {MAX_JAVA_OUTPUT} bytes"));
    }
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_answer_is_believed_only_for_the_same_jvm_in_our_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("jvm");
        let uid = rustix::process::geteuid().as_raw();
        let jvm = Jvm {
            program: PathBuf::from("java"),
            vendor: Some("Debian".to_owned()),
            version: "17.0.15".to_owned(),
        };
        write_cache(&cache, "/usr/lib/jvm/java 10 1.2 3.4", &jvm);
        let read = |key: &str| read_cache(&cache, key, uid, Path::new("java"));
        assert_eq!(read("/usr/lib/jvm/java 10 1.2 3.4"), Some(jvm.clone()));
        // Another JVM, or the same one changed: ask it again.
        assert_eq!(read("/usr/lib/jvm/java 10 1.2 3.5"), None);
        // A file others may write is not believed.
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(read("/usr/lib/jvm/java 10 1.2 3.4"), None);
        // Nor one that is not ours.
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            read_cache(
                &cache,
                "/usr/lib/jvm/java 10 1.2 3.4",
                uid + 1,
                Path::new("java")
            ),
            None
        );
    }

    #[test]
    fn properties_give_vendor_and_version() {
        let text = "Property settings:\n    file.encoding = UTF-8\n    \
                    java.vendor = Eclipse Adoptium\n    java.vendor.url = https://adoptium.net/\n    \
                    java.version = 17.0.8\n    java.version.date = 2023-07-18\n\n\
                    openjdk version \"17.0.8\" 2023-07-18\n";
        assert_eq!(
            parse_version_output(text),
            Some((Some("Eclipse Adoptium".to_owned()), "17.0.8".to_owned()))
        );
    }

    #[test]
    fn a_plain_version_line_gives_the_version_alone() {
        let text =
            "java version \"1.8.0_381\"\nJava(TM) SE Runtime Environment (build 1.8.0_381-b09)\n";
        assert_eq!(
            parse_version_output(text),
            Some((None, "1.8.0_381".to_owned()))
        );
        assert_eq!(
            parse_version_output("Error: could not create the JVM\n"),
            None
        );
    }

    #[test]
    fn a_missing_or_failing_program_is_no_jvm() {
        let missing = config::Java {
            program: "/nonexistent/bin/java".into(),
        };
        assert!(detect(&missing).is_err());
        let failing = config::Java {
            program: "false".into(),
        };
        assert!(detect(&failing).unwrap_err().contains("exited"));
    }
}
