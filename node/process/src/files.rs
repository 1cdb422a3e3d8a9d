//! Files moving between agents, at either end: listing what is offered
//! (size, blake3 hash, mode) and assembling what is pulled.
//!
//! The [`Assembler`] asks for chunks in order, writes each file under a
//! temporary name, checks its hash when the last byte is in and only then
//! renames it into place with its mode, so a half-pulled or corrupted file
//! is never seen under its real name. Anything a peer sends that does not
//! fit what was announced (another file, another offset, more bytes, more
//! than the budget, a wrong hash) is refused with a message naming it.

use std::fs::File as FsFile;
use std::io::{self, Read as _, Seek as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use starling_protocol::transfer::{File, FileName, Hash, MAX_CHUNK_LEN, MODE_MASK};

/// Lists `paths` for an offer: each file's size, hash and mode, in order.
/// Blocking: it reads every file.
pub fn offer(paths: &[(FileName, PathBuf)]) -> io::Result<Vec<File>> {
    paths
        .iter()
        .map(|(name, path)| {
            let file = FsFile::open(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            describe(name, &file)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
        })
        .collect()
}

/// What an offer says of the open regular file `file`, offered as `name`:
/// its size, hash and mode. Blocking: it reads the whole file.
pub fn describe(name: &FileName, mut file: &FsFile) -> io::Result<File> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    File::new(
        name.clone(),
        size,
        Hash::from_bytes(*hasher.finalize().as_bytes()),
        meta.permissions().mode() & MODE_MASK,
    )
    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
}

/// [`offer`] off the async threads.
pub async fn offer_async(paths: Vec<(FileName, PathBuf)>) -> io::Result<Vec<File>> {
    tokio::task::spawn_blocking(move || offer(&paths))
        .await
        .map_err(io::Error::other)?
}

/// Reads at most `len` (capped at [`MAX_CHUNK_LEN`]) bytes of `path` from
/// `offset`; fewer at the end of the file.
pub fn read_chunk(path: &Path, offset: u64, len: u32) -> io::Result<Vec<u8>> {
    let mut file = FsFile::open(path)?;
    file.seek(io::SeekFrom::Start(offset))?;
    let mut data = Vec::with_capacity(len.min(MAX_CHUNK_LEN) as usize);
    file.take(u64::from(len.min(MAX_CHUNK_LEN)))
        .read_to_end(&mut data)?;
    Ok(data)
}

/// What was wrong with a pulled file.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    #[error("the files announced total {total} bytes, more than the {budget} allowed")]
    OverBudget { total: u64, budget: u64 },
    #[error("{name}: expected bytes at offset {expected}, got offset {got}")]
    OutOfOrder {
        name: String,
        expected: u64,
        got: u64,
    },
    #[error("{name}: chunk of {len} bytes at {offset} goes past its announced size {size}")]
    TooLong {
        name: String,
        offset: u64,
        len: usize,
        size: u64,
    },
    #[error("{name}: an empty chunk at {offset} of {size}")]
    Empty {
        name: String,
        offset: u64,
        size: u64,
    },
    #[error("{name}: its content does not match its announced hash")]
    HashMismatch { name: String },
    #[error("a chunk of file {index}, which was not asked for")]
    Unexpected { index: usize },
    #[error("{name}: {source}")]
    Io {
        name: String,
        #[source]
        source: io::Error,
    },
}

struct Partial {
    file: FsFile,
    temp: PathBuf,
    hasher: blake3::Hasher,
    written: u64,
}

/// Pulls a list of files into a directory, one chunk at a time.
pub struct Assembler {
    target: PathBuf,
    files: Vec<File>,
    /// The file being pulled (files before it are in place).
    current: usize,
    partial: Option<Partial>,
}

impl Assembler {
    /// Files land in `target` under their names; `budget_bytes` bounds
    /// their total announced size.
    pub fn new(
        target: &Path,
        files: Vec<File>,
        budget_bytes: u64,
    ) -> Result<Assembler, AssembleError> {
        let total = files.iter().map(|f| f.size).fold(0u64, u64::saturating_add);
        if total > budget_bytes {
            return Err(AssembleError::OverBudget {
                total,
                budget: budget_bytes,
            });
        }
        Ok(Assembler {
            target: target.to_path_buf(),
            files,
            current: 0,
            partial: None,
        })
    }

    /// The next chunk to ask for: (file index, offset, length), `None` when
    /// every file is in place. An empty file is asked for as length 0.
    pub fn next_request(&self) -> Option<(usize, u64, u32)> {
        let file = self.files.get(self.current)?;
        let offset = self.partial.as_ref().map_or(0, |p| p.written);
        let len = (file.size - offset).min(u64::from(MAX_CHUNK_LEN)) as u32;
        Some((self.current, offset, len))
    }

    pub fn is_complete(&self) -> bool {
        self.current >= self.files.len()
    }

    /// Takes a chunk. Returns the file when this chunk completed it (its
    /// hash checked and the file in place).
    pub fn chunk(
        &mut self,
        index: usize,
        offset: u64,
        data: &[u8],
    ) -> Result<Option<&File>, AssembleError> {
        if index != self.current || index >= self.files.len() {
            return Err(AssembleError::Unexpected { index });
        }
        let file = &self.files[index];
        let name = file.name.as_str().to_owned();
        let io_err = |source| AssembleError::Io {
            name: name.clone(),
            source,
        };
        if self.partial.is_none() {
            let dest = self.target.join(file.name.as_str());
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(io_err)?;
            }
            let temp = self.target.join(format!(".partial-{index}"));
            let handle = FsFile::create(&temp).map_err(io_err)?;
            self.partial = Some(Partial {
                file: handle,
                temp,
                hasher: blake3::Hasher::new(),
                written: 0,
            });
        }
        let partial = self.partial.as_mut().expect("made above");
        if offset != partial.written {
            return Err(AssembleError::OutOfOrder {
                name,
                expected: partial.written,
                got: offset,
            });
        }
        if offset + data.len() as u64 > file.size {
            return Err(AssembleError::TooLong {
                name,
                offset,
                len: data.len(),
                size: file.size,
            });
        }
        if data.is_empty() && offset < file.size {
            return Err(AssembleError::Empty {
                name,
                offset,
                size: file.size,
            });
        }
        partial.file.write_all(data).map_err(io_err)?;
        partial.hasher.update(data);
        partial.written += data.len() as u64;
        if partial.written < file.size {
            return Ok(None);
        }
        let partial = self.partial.take().expect("present");
        if partial.hasher.finalize().as_bytes() != file.hash.as_bytes() {
            let _ = std::fs::remove_file(&partial.temp);
            return Err(AssembleError::HashMismatch { name });
        }
        partial.file.sync_all().map_err(io_err)?;
        drop(partial.file);
        std::fs::set_permissions(
            &partial.temp,
            std::fs::Permissions::from_mode((file.mode & MODE_MASK) | 0o600),
        )
        .map_err(io_err)?;
        std::fs::rename(&partial.temp, self.target.join(file.name.as_str())).map_err(io_err)?;
        self.current += 1;
        Ok(Some(&self.files[index]))
    }
}

impl Drop for Assembler {
    fn drop(&mut self) {
        if let Some(p) = self.partial.take() {
            let _ = std::fs::remove_file(&p.temp);
        }
    }
}
