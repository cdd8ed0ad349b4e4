//! How membench replaces a file it owns: whole, through a unique temporary file beside
//! it, under an advisory lock, through symlinks, keeping the file's permissions.
//!
//! A crash leaves the old file or the new one, never half of one. Writers that share a
//! file take turns: each reads it under the lock, so none loses another's work.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{Error, Result};

/// Held while a file is being replaced, so that an exit can wait for it to finish.
static REPLACING: Mutex<()> = Mutex::new(());

/// Waits until no file is half written, then holds further writes off: an exit on a
/// second signal takes this first, so that it leaves no temporary file behind.
pub fn quiesce() -> MutexGuard<'static, ()> {
    REPLACING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The file `path` names: its symlinks followed to the end, relative ones from their
/// own directory. The target need not exist yet.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    let io = Error::io(path);
    // What the links lead to, where it is there: a device or a pipe (`/dev/stdout`) is
    // refused as itself, not as the path its last link names.
    if let Ok(metadata) = std::fs::metadata(path)
        && !metadata.is_dir()
    {
        refuse_unless_regular(path, &metadata)?;
    }
    let mut resolved = path.to_owned();
    // As many links as Linux follows.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&resolved) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(&resolved).map_err(&io)?;
                // `join` keeps an absolute target as it is.
                resolved = match resolved.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Ok(_) => return Ok(resolved),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(resolved),
            Err(e) => return Err(io(e)),
        }
    }
    Err(io(io::Error::other("too many levels of symbolic links")))
}

/// An error unless `metadata` is a regular file's: membench never reads from or writes
/// to a device, a FIFO or a directory in a file's place.
pub fn refuse_unless_regular(path: &Path, metadata: &std::fs::Metadata) -> Result<()> {
    if metadata.is_file() {
        return Ok(());
    }
    let kind = if metadata.is_dir() {
        "a directory"
    } else {
        "a device, FIFO or socket"
    };
    Err(Error::Results {
        path: path.to_owned(),
        message: format!(
            "{kind}, not a regular file: results are read from and written to regular files \
             (`--out -` prints them)"
        ),
    })
}

/// Whether the file at `path` (resolved) could be replaced now: it is a regular file
/// that is not read-only, or it does not exist and its nearest existing directory takes
/// a new file. Checked before a run measures anything; nothing is left behind.
pub fn check_writable(path: &Path) -> Result<()> {
    let path = resolve(path)?;
    let io = Error::io(&path);
    match std::fs::metadata(&path) {
        Ok(metadata) => {
            refuse_unless_regular(&path, &metadata)?;
            refuse_read_only(&path, &metadata)?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let existing = path
        .ancestors()
        .skip(1)
        .map(|dir| {
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            }
        })
        .find(|dir| dir.exists())
        .unwrap_or(Path::new("."));
    // Made and removed at once: the directory takes new files.
    tempfile::Builder::new()
        .prefix(".membench-check-")
        .tempfile_in(existing)
        .map(drop)
        .map_err(Error::io(existing))
}

/// An error where `metadata` says the file is read-only: someone protected it, and
/// replacing it by a rename would go around that.
fn refuse_read_only(path: &Path, metadata: &std::fs::Metadata) -> Result<()> {
    if metadata.permissions().readonly() {
        return Err(Error::Results {
            path: path.to_owned(),
            message: "read-only: membench does not replace a protected file (make it \
                      writable, or choose another --out)"
                .to_owned(),
        });
    }
    Ok(())
}

/// The file at a path, locked against every other membench that replaces it, until
/// dropped. The file is created empty where there was none.
pub struct Locked {
    /// The file's own path: the link given, resolved.
    path: PathBuf,
    file: File,
}

/// Locks the file `path` names (resolved), creating it empty where there is none, and
/// its parent directories. A read-only file, or anything but a regular file, is refused.
pub fn lock(path: &Path) -> Result<Locked> {
    let path = resolve(path)?;
    let io = Error::io(&path);
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(&io)?;
    }
    loop {
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Created, then opened again above: whoever creates it, all lock one file.
                OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(&path)
                    .map_err(&io)?;
                continue;
            }
            Err(e) => return Err(io(e)),
        };
        let metadata = file.metadata().map_err(&io)?;
        refuse_unless_regular(&path, &metadata)?;
        refuse_read_only(&path, &metadata)?;
        file.lock().map_err(&io)?;
        // While this one waited, the holder may have renamed a new file over the path:
        // then it is that file which must be locked.
        let locked = same_file::Handle::from_file(file.try_clone().map_err(&io)?).map_err(&io)?;
        match same_file::Handle::from_path(&path) {
            Ok(now) if now == locked => return Ok(Locked { path, file }),
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(e)),
        }
    }
}

impl Locked {
    /// The file's own path (symlinks resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's bytes, or an error where there are more than `limit`.
    pub fn read(&self, limit: u64) -> Result<Vec<u8>> {
        read_bounded(&self.path, &self.file, limit)
    }

    /// Replaces the file with what `fill` writes, keeping the lock: see [`replace`].
    pub fn replace(&self, fill: impl FnOnce(&mut File) -> io::Result<()>) -> Result<()> {
        let permissions = self
            .file
            .metadata()
            .map_err(Error::io(&self.path))?
            .permissions();
        replace_locked(&self.path, permissions, fill)
    }
}

/// Reads at most `limit` bytes of `file` (at `path`, for errors).
pub fn read_bounded(path: &Path, file: &File, limit: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Error::io(path))?;
    if bytes.len() as u64 > limit {
        return Err(Error::Results {
            path: path.to_owned(),
            message: format!(
                "larger than the {} MiB a results file may have",
                limit >> 20
            ),
        });
    }
    Ok(bytes)
}

/// Replaces the file `path` names with what `fill` writes, under its lock: a unique
/// temporary file beside it, filled, synced and given the file's permissions, then
/// renamed over it. On any error the temporary file is removed and the file is as it
/// was.
pub fn replace(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> Result<()> {
    lock(path)?.replace(fill)
}

/// What a temporary file's name has after the file's own: `.results.csv.membench-`,
/// then [`TEMPORARY_RANDOM`] letters and digits, then [`TEMPORARY_SUFFIX`].
const TEMPORARY_TAG: &str = "membench-";
const TEMPORARY_RANDOM: usize = 6;
const TEMPORARY_SUFFIX: &str = ".tmp";

/// Removes the temporary files named with `prefix` in `dir`: a writer makes one only
/// while it holds the file's lock, which the caller holds now, so any there was left by
/// a writer that was killed (`kill -9`) before it could remove it.
fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(random) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(TEMPORARY_SUFFIX))
        else {
            continue;
        };
        if random.len() == TEMPORARY_RANDOM && random.chars().all(|c| c.is_ascii_alphanumeric()) {
            // Best effort: a stale file left is hidden and harmless.
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The temporary file, filled and renamed over `path`, given `permissions` (the
/// locked file's).
fn replace_locked(
    path: &Path,
    permissions: std::fs::Permissions,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<()> {
    let io = Error::io(path);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.{TEMPORARY_TAG}");
    let _replacing = quiesce();
    remove_stale(dir, &prefix);
    // Hidden, named after the file and unique per writer; removed when dropped.
    let mut temporary = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(TEMPORARY_SUFFIX)
        .rand_bytes(TEMPORARY_RANDOM)
        .tempfile_in(dir)
        .map_err(&io)?;
    fill(temporary.as_file_mut()).map_err(&io)?;
    temporary.as_file().sync_all().map_err(&io)?;
    std::fs::set_permissions(temporary.path(), permissions).map_err(&io)?;
    temporary.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
