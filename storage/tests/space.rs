//! A store on a filesystem that fills up: writes fail as "disk full", what
//! was acknowledged stays, and once space returns the store takes writes
//! again without being reopened by its caller. Runs on a small tmpfs, so
//! only as root; skipped with a message otherwise.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use starling_protocol::classad::parse_ad;
use starling_storage::space::{Guarded, Space};
use starling_storage::{JobId, SledStore, Store};

/// A tmpfs of `mib` MiB mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(mib: u64) -> Option<Tmpfs> {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: mounting a small tmpfs to fill needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let options = format!("size={mib}m,mode=0755");
        rustix::mount::mount(
            "starling-test",
            dir.path(),
            "tmpfs",
            rustix::mount::MountFlags::empty(),
            Some(std::ffi::CString::new(options).unwrap().as_c_str()),
        )
        .expect("mounting a tmpfs");
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = rustix::mount::unmount(self.dir.path(), rustix::mount::UnmountFlags::DETACH);
    }
}

/// Writes to `path` until the filesystem is full.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0xA5u8; 256 << 10];
    loop {
        match file.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(28), "filling: {e}");
                break;
            }
        }
    }
    // Smaller writes take the last partial pages.
    for len in [4096, 512, 1] {
        while file.write(&chunk[..len]).is_ok_and(|n| n > 0) {}
    }
}

fn job(n: usize) -> starling_protocol::classad::ClassAd {
    let padding = "x".repeat(8 << 10);
    parse_ad(&format!(
        "[ Cmd = \"/bin/true\"; N = {n}; Padding = \"{padding}\" ]"
    ))
    .unwrap()
}

#[test]
fn a_full_disk_refuses_writes_keeps_what_was_acknowledged_and_recovers_by_itself() {
    let Some(fs) = Tmpfs::mount(16) else { return };
    let store_path: PathBuf = fs.path().join("store");
    let reserve = fs.path().join("reserve");
    let store = Guarded::with_reserve(&store_path, &reserve, 1 << 20).unwrap();
    assert_eq!(store.space(), Space::Ok);
    assert!(reserve.exists());

    let mut acknowledged: Vec<u64> = Vec::new();
    for n in 0..10 {
        acknowledged.push(store.submit(&[job(n)]).unwrap());
    }

    // Fill the filesystem, then write until a write fails for space.
    fill(&fs.path().join("filler"));
    let mut failure = None;
    for n in 10..2000 {
        match store.submit(&[job(n)]) {
            Ok(cluster) => acknowledged.push(cluster),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let failure = failure.expect("a write fails on a full filesystem");
    assert!(failure.is_disk_full(), "{failure:?}");
    assert!(
        failure.to_string().starts_with("disk full"),
        "the message says so: {failure}"
    );
    let Space::Full { reason, .. } = store.space() else {
        panic!("the store is not full: {:?}", store.space());
    };
    assert!(reason.starts_with("disk full"), "{reason}");
    assert!(!reserve.exists(), "the reserve was given back");

    // Reopened on the reserve's room: what was acknowledged reads, and
    // small writes that must happen still go through.
    let held: Vec<u64> = store
        .jobs()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id.cluster)
        .collect();
    for cluster in &acknowledged {
        assert!(held.contains(cluster), "job {cluster}.0 was lost");
    }
    store
        .next_sequence(starling_protocol::identity::Kind::MACHINE_AD)
        .expect("a small write fits in the reserve's room");
    assert!(
        store.check().is_full(),
        "still full while the filler is there"
    );

    // Space returns: the store leaves the state by itself.
    std::fs::remove_file(fs.path().join("filler")).unwrap();
    assert_eq!(store.check(), Space::Ok);
    assert!(reserve.exists(), "the reserve is back");
    acknowledged.push(store.submit(&[job(9999)]).unwrap());

    // Everything acknowledged is on disk, for a store opened afresh.
    drop(store);
    let reopened = SledStore::open(&store_path).unwrap();
    for cluster in &acknowledged {
        assert!(
            reopened.job(JobId::new(*cluster, 0)).unwrap().is_some(),
            "job {cluster}.0 was lost"
        );
    }
}

#[test]
fn a_store_opened_on_a_full_disk_starts_full_and_recovers() {
    let Some(fs) = Tmpfs::mount(16) else { return };
    let store_path = fs.path().join("store");
    let reserve = fs.path().join("reserve");
    let store = Guarded::with_reserve(&store_path, &reserve, 1 << 20).unwrap();
    let cluster = store.submit(&[job(0)]).unwrap();
    drop(store);
    fill(&fs.path().join("filler"));
    // The reserve a previous run kept is the room to start in.
    let store = Guarded::with_reserve(&store_path, &reserve, 1 << 20).unwrap();
    let Space::Full { reason, .. } = store.space() else {
        panic!("not full: {:?}", store.space());
    };
    assert!(reason.starts_with("disk full"), "{reason}");
    assert!(store.job(JobId::new(cluster, 0)).unwrap().is_some());
    assert!(store.check().is_full());
    std::fs::remove_file(fs.path().join("filler")).unwrap();
    assert_eq!(store.check(), Space::Ok);
    assert!(reserve.exists());
}

#[test]
fn a_store_that_cannot_open_for_space_says_disk_full() {
    let Some(fs) = Tmpfs::mount(16) else { return };
    let store_path = fs.path().join("store");
    fill(&fs.path().join("filler"));
    let error = Guarded::with_reserve(&store_path, fs.path().join("reserve"), 1 << 20)
        .expect_err("no room to open a new store");
    assert!(error.to_string().starts_with("disk full"), "{error}");
}
