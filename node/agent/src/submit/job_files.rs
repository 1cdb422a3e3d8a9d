//! A job's files on the submit side, touched with its owner's rights.
//!
//! An agent running as root reads a job's input and writes its output and
//! log as the job's `Owner` ([`Rights::of_owner`]), so that naming a file
//! in a submit file never reaches further than the user could reach
//! alone:
//!
//! - at submit, [`check_at_submit`] opens each input for reading and the
//!   user log for appending, and refuses the submit naming the first that
//!   fails;
//! - at hand-over, [`open_inputs`] opens the input (executable, standard
//!   input, `transfer_input_files`) and describes it from the open
//!   descriptors, which the router then reads chunks through;
//! - at the end, [`place_output`] moves each pulled file from the agent's
//!   private staging directory to where the job wants it: a temporary file
//!   made there with the owner's rights, filled from the staged copy and
//!   renamed into place, so the result is the owner's and appears whole.
//!
//! An agent that is not root, or a job owned by root, uses the agent's own
//! rights; the steps are the same.

use std::fs::File as FsFile;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use starling_protocol::classad::ClassAd;
use starling_protocol::transfer::{File, FileName, MODE_MASK};

use crate::shadow::{boolean, iwd, resolve, text};
use starling_process::sandbox::{STDERR_FILE, STDOUT_FILE};
use starling_process::users::Rights;

/// Most input files one job may name.
pub const MAX_INPUTS: usize = 4096;

/// Numbers the temporary files of [`place_output`], so that two outputs
/// placed at once in one directory never share one.
static PLACED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The rights for the job's files: its `Owner`'s where the agent is root.
pub fn rights_of(job: &ClassAd) -> Result<Rights, String> {
    let owner = text(job, "Owner").ok_or_else(|| "the job has no Owner".to_owned())?;
    Rights::of_owner(&owner).map_err(|e| format!("the job's owner: {e}"))
}

/// The files the execute agent needs: the executable (unless
/// `TransferExecutable` is false), standard input, and
/// `transfer_input_files`, and for a java job its `JarFiles` (the machine
/// runs it with them on its classpath, and has no shared file system to
/// find them on when `should_transfer_files = NO` left them out), each
/// under its base name as HTCondor does, resolved against `Iwd`. The first
/// of two with the same base name wins.
pub fn input_paths(job: &ClassAd) -> Result<Vec<(FileName, PathBuf)>, String> {
    let iwd = iwd(job);
    let mut list = Vec::new();
    if let Some(cmd) = text(job, "Cmd") {
        if boolean(job, "TransferExecutable").unwrap_or(true) {
            list.push(cmd);
        }
    }
    if let Some(input) = text(job, "In").filter(|p| p != "/dev/null") {
        list.push(input);
    }
    if let Some(more) = text(job, "TransferInput") {
        list.extend(
            more.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
    }
    if starling_process::job::is_java(job) {
        if let Some(jars) = text(job, "JarFiles") {
            list.extend(
                jars.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
        }
    }
    if list.len() > MAX_INPUTS {
        return Err(format!(
            "Transfer input files failure: {} files, more than the limit of {MAX_INPUTS}",
            list.len()
        ));
    }
    let mut files: Vec<(FileName, PathBuf)> = Vec::with_capacity(list.len());
    for path in list {
        let name = base_name(&path)?;
        if files.iter().any(|(n, _)| n == &name) {
            continue;
        }
        files.push((name, resolve(&iwd, &path)));
    }
    Ok(files)
}

fn base_name(path: &str) -> Result<FileName, String> {
    let base = Path::new(path)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{path:?} names no file"))?;
    FileName::new(base).map_err(|e| e.to_string())
}

fn unreadable(path: &Path, e: &std::io::Error) -> String {
    format!(
        "Transfer input files failure: {} could not be read: {e}",
        path.display()
    )
}

/// Opens `paths` for reading with `rights`, all on one thread of the
/// user's; the error names the first that failed.
fn open_all(rights: &Rights, paths: Vec<PathBuf>) -> Result<Vec<FsFile>, String> {
    let failed = std::sync::Arc::new(std::sync::Mutex::new(None::<PathBuf>));
    let record = failed.clone();
    let opened = rights.run(move || {
        paths
            .iter()
            .map(|p| {
                FsFile::open(p).inspect_err(|_| {
                    if let Ok(mut slot) = record.lock() {
                        *slot = Some(p.clone());
                    }
                })
            })
            .collect::<std::io::Result<Vec<FsFile>>>()
    });
    opened.map_err(|e| {
        let path = failed.lock().ok().and_then(|mut p| p.take());
        match path {
            Some(path) => unreadable(&path, &e),
            None => format!("Transfer input files failure: {e}"),
        }
    })
}

/// Opens the job's input with `rights` and describes each file (size,
/// blake3 hash, mode) from its descriptor. Blocking.
pub fn open_inputs(
    rights: &Rights,
    paths: Vec<(FileName, PathBuf)>,
) -> Result<Vec<(File, PathBuf, FsFile)>, String> {
    let opened = open_all(rights, paths.iter().map(|(_, p)| p.clone()).collect())?;
    paths
        .into_iter()
        .zip(opened)
        .map(|((name, path), file)| {
            let described = starling_process::files::describe(&name, &file)
                .map_err(|e| unreadable(&path, &e))?;
            Ok((described, path, file))
        })
        .collect()
}

/// What a submit checks of each job before queueing it: every input can
/// be opened for reading and the user log (`UserLog`) for appending, with
/// the owner's rights. The message names the file. Blocking.
pub fn check_at_submit(job: &ClassAd) -> Result<(), String> {
    let rights = rights_of(job)?;
    let inputs = input_paths(job)?;
    open_all(&rights, inputs.into_iter().map(|(_, p)| p).collect())?;
    if let Some(log) = text(job, "UserLog") {
        let path = PathBuf::from(&log);
        rights
            .open(&path, std::fs::OpenOptions::new().create(true).append(true))
            .map_err(|e| format!("the log file {log} cannot be written: {e}"))?;
    }
    Ok(())
}

/// Where an output file goes: stdout and stderr to `Out` and `Err`, a
/// file `transfer_output_remaps` names where it says (relative to `Iwd`),
/// the rest into `Iwd`; `None` for `/dev/null` or an unset `Out`/`Err`.
pub fn destination(job: &ClassAd, name: &str) -> Option<PathBuf> {
    let iwd = iwd(job);
    let to = match name {
        STDOUT_FILE => text(job, "Out").map(|p| resolve(&iwd, &p)),
        STDERR_FILE => text(job, "Err").map(|p| resolve(&iwd, &p)),
        _ => match text(job, "TransferOutputRemaps").and_then(|remaps| remapped(&remaps, name)) {
            Some(to) => Some(resolve(&iwd, &to)),
            None => Some(output_directory(job).unwrap_or(iwd).join(name)),
        },
    };
    to.filter(|p| p != Path::new("/dev/null"))
}

/// Where the output files not remapped come back, when the job names a
/// directory for them (`OutputDirectory`, relative to `Iwd`).
pub fn output_directory(job: &ClassAd) -> Option<PathBuf> {
    let dir = text(job, "OutputDirectory").filter(|d| !d.is_empty())?;
    Some(resolve(&iwd(job), &dir))
}

/// Makes the job's `OutputDirectory` and its missing parents as the owner
/// (mode 0700, as HTCondor's shadow makes it), if it names one. Blocking.
pub fn make_output_directory(rights: &Rights, job: &ClassAd) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt as _;
    let Some(dir) = output_directory(job) else {
        return Ok(());
    };
    let made = dir.clone();
    rights
        .run(move || {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&made)
        })
        .map_err(|e| format!("cannot make the output directory {}: {e}", dir.display()))
}

/// Where `TransferOutputRemaps` (HTCondor's `"name = dest; name2 =
/// dest2"`, `\\` escaping a `;` or `=` within a name) sends the output
/// file `name`, if it names it.
pub fn remapped(remaps: &str, name: &str) -> Option<String> {
    let mut entries = vec![(String::new(), String::new(), false)];
    let mut chars = remaps.chars();
    while let Some(c) = chars.next() {
        let (from, to, past_eq) = entries.last_mut()?;
        let field = if *past_eq { to } else { from };
        match c {
            '\\' => field.push(chars.next().unwrap_or('\\')),
            ';' => entries.push((String::new(), String::new(), false)),
            '=' if !*past_eq => *past_eq = true,
            c => field.push(c),
        }
    }
    entries
        .into_iter()
        .find(|(from, to, past_eq)| *past_eq && from.trim() == name && !to.trim().is_empty())
        .map(|(_, to, _)| to.trim().to_owned())
}

/// Puts the staged file `staged` at `to` with `rights`: a temporary file
/// next to `to` made by the user, filled from `staged`, renamed over `to`.
/// The directory must be there (the submit checked it): none is made, so
/// a job whose directory has gone is held naming it rather than
/// recreating it wherever its path points. The message names `to`.
/// Blocking.
pub fn place_output(rights: &Rights, staged: &Path, to: &Path) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", to.display());
    // Opened with the agent's rights: the staging directory is private.
    let mut from = FsFile::open(staged).map_err(|e| format!("{}: {e}", staged.display()))?;
    let mode = from
        .metadata()
        .map(|m| m.permissions().mode() & MODE_MASK)
        .unwrap_or(0o644);
    let to_owned = to.to_owned();
    rights
        .run(move || {
            let to = to_owned;
            let parent = to.parent().unwrap_or(Path::new("/"));
            let name = to
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let temp = parent.join(format!(
                ".{name}.starling-{}-{}",
                std::process::id(),
                PLACED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                // Never an existing file or a link: a fresh one, the user's.
                .create_new(true)
                .mode(mode)
                .open(&temp)?;
            let copied = std::io::copy(&mut from, &mut out)
                .and_then(|_| out.sync_data())
                .and_then(|()| std::fs::rename(&temp, &to));
            if copied.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
            copied
        })
        .map_err(|e| {
            let parent = to.parent().unwrap_or(Path::new("/"));
            if e.kind() == std::io::ErrorKind::NotFound && !parent.is_dir() {
                format!(
                    "cannot write {}: the directory {} does not exist (the agent makes no \
                     directories)",
                    to.display(),
                    parent.display()
                )
            } else {
                cannot(e)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    #[test]
    fn output_remaps_send_the_files_they_name_where_they_say() {
        let remaps = r"out.txt = results/out.txt; b\;c = /abs/b ;  = nothing; d.txt =";
        assert_eq!(
            remapped(remaps, "out.txt").as_deref(),
            Some("results/out.txt")
        );
        assert_eq!(remapped(remaps, "b;c").as_deref(), Some("/abs/b"));
        assert_eq!(
            remapped(remaps, "d.txt"),
            None,
            "no destination: not remapped"
        );
        assert_eq!(remapped(remaps, "other"), None);
        let job = parse_ad(
            r#"[ Owner = "root"; Iwd = "/w"; Out = "o"; TransferOutputRemaps = "out.txt = r/out.txt; x = /abs/y" ]"#,
        )
        .unwrap();
        assert_eq!(
            destination(&job, "out.txt"),
            Some(PathBuf::from("/w/r/out.txt"))
        );
        assert_eq!(destination(&job, "x"), Some(PathBuf::from("/abs/y")));
        assert_eq!(destination(&job, "z"), Some(PathBuf::from("/w/z")));
        assert_eq!(destination(&job, STDOUT_FILE), Some(PathBuf::from("/w/o")));
        // OutputDirectory takes what is not remapped, not the streams.
        let job = parse_ad(
            r#"[ Owner = "root"; Iwd = "/w"; Out = "o"; OutputDirectory = "res/1"; TransferOutputRemaps = "x = /abs/y" ]"#,
        )
        .unwrap();
        assert_eq!(destination(&job, "z"), Some(PathBuf::from("/w/res/1/z")));
        assert_eq!(destination(&job, "x"), Some(PathBuf::from("/abs/y")));
        assert_eq!(destination(&job, STDOUT_FILE), Some(PathBuf::from("/w/o")));
    }

    #[test]
    fn inputs_are_the_executable_stdin_and_the_listed_files_once_each() {
        let job = parse_ad(
            r#"[ Owner = "root"; Iwd = "/w"; Cmd = "/bin/prog"; In = "data.in";
                 TransferInput = "a.txt, /abs/b.txt, sub/a.txt" ]"#,
        )
        .unwrap();
        let paths: Vec<(String, PathBuf)> = input_paths(&job)
            .unwrap()
            .into_iter()
            .map(|(n, p)| (n.as_str().to_owned(), p))
            .collect();
        assert_eq!(
            paths,
            [
                ("prog".to_owned(), PathBuf::from("/bin/prog")),
                ("data.in".to_owned(), PathBuf::from("/w/data.in")),
                ("a.txt".to_owned(), PathBuf::from("/w/a.txt")),
                ("b.txt".to_owned(), PathBuf::from("/abs/b.txt")),
            ]
        );
    }

    #[test]
    fn a_java_job_sends_its_class_and_jar_files_even_without_transfer() {
        let names = |ad: &str| -> Vec<(String, PathBuf)> {
            input_paths(&parse_ad(ad).unwrap())
                .unwrap()
                .into_iter()
                .map(|(n, p)| (n.as_str().to_owned(), p))
                .collect()
        };
        // should_transfer_files = NO: the class is the executable, the
        // jar files are in no list but JarFiles.
        assert_eq!(
            names(
                r#"[ Owner = "root"; Iwd = "/w"; JobUniverse = 10; Cmd = "/w/Hello.class";
                     JarFiles = "lib/util.jar,/abs/x.jar" ]"#
            ),
            [
                ("Hello.class".to_owned(), PathBuf::from("/w/Hello.class")),
                ("util.jar".to_owned(), PathBuf::from("/w/lib/util.jar")),
                ("x.jar".to_owned(), PathBuf::from("/abs/x.jar")),
            ]
        );
        // As HTCondor writes it when transferring: each file once.
        assert_eq!(
            names(
                r#"[ Owner = "root"; Iwd = "/w"; JobUniverse = 10; Cmd = "java";
                     TransferExecutable = false; JarFiles = "lib/util.jar";
                     TransferInput = "/w/Hello.class,lib/util.jar" ]"#
            ),
            [
                ("Hello.class".to_owned(), PathBuf::from("/w/Hello.class")),
                ("util.jar".to_owned(), PathBuf::from("/w/lib/util.jar")),
            ]
        );
        // Not a java job: JarFiles means nothing.
        assert_eq!(
            names(r#"[ Owner = "root"; Iwd = "/w"; Cmd = "/bin/p"; JarFiles = "a.jar" ]"#),
            [("p".to_owned(), PathBuf::from("/bin/p"))]
        );
    }

    #[test]
    fn a_missing_input_is_named_at_submit() {
        let dir = tempfile::tempdir().unwrap();
        let job = parse_ad(&format!(
            r#"[ Owner = "root"; Iwd = "{}"; Cmd = "/bin/true"; TransferInput = "gone.txt" ]"#,
            dir.path().display()
        ))
        .unwrap();
        let e = check_at_submit(&job).unwrap_err();
        assert!(e.contains("gone.txt could not be read"), "{e}");
    }

    #[test]
    fn output_is_placed_whole_with_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("staged");
        std::fs::write(&staged, "result").unwrap();
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o640)).unwrap();
        let to = dir.path().join("out/deep/result.txt");
        let e = place_output(&Rights::Agent, &staged, &to).unwrap_err();
        assert!(e.contains("out/deep does not exist"), "{e}");
        assert!(!dir.path().join("out").exists(), "no directory is made");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        place_output(&Rights::Agent, &staged, &to).unwrap();
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "result");
        let names: Vec<_> = std::fs::read_dir(to.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["result.txt"], "no temporary file is left");
    }
}
