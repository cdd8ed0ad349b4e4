//! How membench replaces a file it owns: whole, through a unique temporary file beside
//! it, under an advisory lock, through symlinks, keeping the file's permissions, owner
//! and group.
//!
//! A crash leaves the old file or the new one, never half of one. Writers that share a
//! file take turns: each reads it under the lock, so none loses another's work, and one
//! that waits says who holds it. A file of several hard links is refused (a rename would
//! split them), and a file the lock made that no write filled is removed.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Held while a file is being replaced, so that an exit can wait for it to finish.
static REPLACING: Mutex<()> = Mutex::new(());

/// Waits until no file is half written, then holds further writes off: an exit on a
/// second signal takes this first, so that it leaves no temporary file behind.
pub(crate) fn quiesce() -> MutexGuard<'static, ()> {
    REPLACING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Set once the process is asked to stop: a wait for a lock then gives up.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// From now on a wait for a lock gives up once it has lasted [`PATIENCE`]: a signal
/// must not leave the process waiting on another's lock until it is killed.
pub(crate) fn stop_waiting() {
    STOPPING.store(true, Ordering::SeqCst);
}

/// How long a lock is waited for before the wait is said (with who holds the lock),
/// and, once the process is asked to stop, before it gives up.
const PATIENCE: Duration = Duration::from_secs(1);

/// How often a waiting writer tries the lock again.
const RETRY: Duration = Duration::from_millis(20);

/// The file `path` names: its symlinks followed to the end, relative ones from their
/// own directory. The target need not exist yet.
pub(crate) fn resolve(path: &Path) -> Result<PathBuf> {
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
pub(crate) fn refuse_unless_regular(path: &Path, metadata: &std::fs::Metadata) -> Result<()> {
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
pub(crate) fn check_writable(path: &Path) -> Result<()> {
    let path = resolve(path)?;
    let io = Error::io(&path);
    match std::fs::metadata(&path) {
        Ok(metadata) => refuse_unless_replaceable(&path, &metadata)?,
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

/// An error unless the file `metadata` describes may be replaced: a regular file, not
/// read-only (someone protected it, and a rename would go around that), of one link (a
/// rename would leave the other links with the old file).
fn refuse_unless_replaceable(path: &Path, metadata: &Metadata) -> Result<()> {
    refuse_unless_regular(path, metadata)?;
    let refuse = |message: String| {
        Err(Error::Results {
            path: path.to_owned(),
            message,
        })
    };
    if metadata.permissions().readonly() {
        return refuse(
            "read-only: membench does not replace a protected file (make it writable, or \
             choose another --out)"
                .to_owned(),
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if metadata.nlink() > 1 {
            return refuse(format!(
                "{} hard links: replacing it would leave the others with the old rows \
                 (copy it to a file of its own, or choose another --out)",
                metadata.nlink()
            ));
        }
    }
    Ok(())
}

/// The file at a path, locked against every other membench that replaces it, until
/// dropped. The file is created empty where there was none, and removed on drop where
/// it still is.
#[derive(Debug)]
pub struct Locked {
    /// The file's own path: the link given, resolved.
    path: PathBuf,
    file: File,
    /// Whether this lock made the file.
    created: bool,
}

/// Locks the file `path` names (resolved), creating it empty where there is none, and
/// its parent directories. A file that cannot be replaced ([`check_writable`]) is
/// refused. Where another holds the lock, the wait is said after [`PATIENCE`].
pub fn lock(path: &Path) -> Result<Locked> {
    let path = resolve(path)?;
    let io = Error::io(&path);
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(&io)?;
    }
    loop {
        let (file, created) = match File::open(&path) {
            Ok(file) => (file, false),
            // Made exclusively: whoever makes it, all lock one file, and none follows a
            // link planted since the path was resolved.
            Err(e) if e.kind() == io::ErrorKind::NotFound => match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => (file, true),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(e)),
            },
            Err(e) => return Err(io(e)),
        };
        refuse_unless_replaceable(&path, &file.metadata().map_err(&io)?)?;
        wait_for_lock(&path, &file)?;
        // While this one waited, the holder may have renamed a new file over the path
        // (or removed the empty one it made): then it is that file which must be locked.
        let locked = Locked {
            path: path.clone(),
            file,
            created,
        };
        if locked.is_at_path().map_err(&io)? {
            return Ok(locked);
        }
    }
}

/// Takes the lock on `file` (at `path`), waiting while another holds it: after
/// [`PATIENCE`] the wait is said, with who holds the lock; once the process is asked to
/// stop ([`stop_waiting`]) it gives up instead.
fn wait_for_lock(path: &Path, file: &File) -> Result<()> {
    let started = Instant::now();
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path)(e)),
        }
        if started.elapsed() >= PATIENCE {
            if STOPPING.load(Ordering::SeqCst) {
                return Err(Error::Results {
                    path: path.to_owned(),
                    message: format!(
                        "gave up waiting for its lock, held by {}, to stop as asked",
                        holder(file)
                    ),
                });
            }
            if !said {
                stderrln!(
                    "membench: {}: waiting for its lock, held by {}",
                    path.display(),
                    holder(file)
                );
                said = true;
            }
        }
        std::thread::sleep(RETRY);
    }
}

/// Who holds the lock on `file`, as far as this system says: on Linux the process
/// `/proc/locks` names and its command line; elsewhere, or where it is out of sight
/// (another container), another process.
fn holder(file: &File) -> String {
    #[cfg(target_os = "linux")]
    if let Some(holder) = linux_holder(file) {
        return holder;
    }
    let _ = file;
    "another process".to_owned()
}

/// `pid N (COMMAND LINE)` of the process that `/proc/locks` says holds a lock on
/// `file`, whose lines read `1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0
/// EOF` (a waiter's with `->` after the number).
#[cfg(target_os = "linux")]
fn linux_holder(file: &File) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let metadata = file.metadata().ok()?;
    let dev = metadata.dev();
    // glibc's gnu_dev_major and gnu_dev_minor; /proc/locks writes both in hex.
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff);
    let id = format!("{major:02x}:{minor:02x}:{}", metadata.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid: u32 = locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [_, kind, _, _, pid, at, ..] if *kind != "->" && *at == id => pid.parse().ok(),
            _ => None,
        }
    })?;
    // 0: a process of another PID namespace.
    if pid == 0 {
        return None;
    }
    let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let command: String = String::from_utf8_lossy(&command)
        .split('\0')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(COMMAND_CHARS)
        .collect();
    Some(match command.is_empty() {
        true => format!("pid {pid}"),
        false => format!("pid {pid} ({command})"),
    })
}

/// As much of a lock holder's command line as a message shows.
#[cfg(target_os = "linux")]
const COMMAND_CHARS: usize = 120;

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
        let metadata = self.file.metadata().map_err(Error::io(&self.path))?;
        replace_locked(&self.path, &metadata, fill)
    }

    /// Whether the locked file is the one at the path now.
    fn is_at_path(&self) -> io::Result<bool> {
        let locked = same_file::Handle::from_file(self.file.try_clone()?)?;
        match same_file::Handle::from_path(&self.path) {
            Ok(now) => Ok(now == locked),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Locked {
    /// Removes the file this lock made where no write replaced it (one failed): a new
    /// results file on a full disk leaves no empty file. Before the lock is released.
    fn drop(&mut self) {
        let empty = self.file.metadata().is_ok_and(|m| m.len() == 0);
        if self.created && empty && self.is_at_path().unwrap_or(false) {
            // Best effort: an empty file left is what there was before this change.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Reads at most `limit` bytes of `file` (at `path`, for errors).
pub(crate) fn read_bounded(path: &Path, file: &File, limit: u64) -> Result<Vec<u8>> {
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
fn remove_stale(dir: &Path, prefix: &OsString) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(random) = name
            .as_encoded_bytes()
            .strip_prefix(prefix.as_encoded_bytes())
            .and_then(|n| n.strip_suffix(TEMPORARY_SUFFIX.as_bytes()))
        else {
            continue;
        };
        if random.len() == TEMPORARY_RANDOM && random.iter().all(u8::is_ascii_alphanumeric) {
            // Best effort: a stale file left is hidden and harmless.
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The temporary file, filled and renamed over `path`, given the permissions, owner and
/// group of the locked file (`metadata`).
fn replace_locked(
    path: &Path,
    metadata: &Metadata,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<()> {
    let io = Error::io(path);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut prefix = OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(format!(".{TEMPORARY_TAG}"));
    let _replacing = quiesce();
    remove_stale(dir, &prefix);
    // Hidden, named after the file and unique per writer, made exclusively (never
    // through a link); removed when dropped.
    let mut temporary = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(TEMPORARY_SUFFIX)
        .rand_bytes(TEMPORARY_RANDOM)
        .tempfile_in(dir)
        .map_err(&io)?;
    fill(temporary.as_file_mut()).map_err(&io)?;
    temporary.as_file().sync_all().map_err(&io)?;
    // The owner first: changing it may clear the permissions' set-id bits.
    keep_owner(temporary.as_file(), metadata).map_err(&io)?;
    temporary
        .as_file()
        .set_permissions(metadata.permissions())
        .map_err(&io)?;
    temporary.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Gives `file` the owner and group `metadata` has, as far as this process may: root
/// rewriting a user's file leaves it the user's; a user keeps its group where the user
/// is in it, and else the file becomes the writer's.
#[cfg(unix)]
fn keep_owner(file: &File, metadata: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt as _, fchown};
    let owner = (metadata.uid(), metadata.gid());
    let now = file.metadata()?;
    if (now.uid(), now.gid()) == owner {
        return Ok(());
    }
    let not_allowed = |e: &io::Error| e.kind() == io::ErrorKind::PermissionDenied;
    match fchown(file, Some(owner.0), Some(owner.1)) {
        Err(e) if not_allowed(&e) => match fchown(file, None, Some(owner.1)) {
            Err(e) if not_allowed(&e) => Ok(()),
            group => group,
        },
        both => both,
    }
}

/// Owners are Unix's: elsewhere the writer's stays.
#[cfg(not(unix))]
fn keep_owner(_file: &File, _metadata: &Metadata) -> io::Result<()> {
    Ok(())
}
