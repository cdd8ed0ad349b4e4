//! A report written into its directory, whole. It owns only what it wrote there:
//! `index.html`, its charts and the manifest that lists them with a digest of each.
//! Everything else in the directory is left as it is.
//!
//! The directory may hold the user's own files (a screenshot beside the page), so it is
//! not swapped for a new one: every file is first written into a hidden directory in
//! it, and only once all are written whole are they renamed into place, the page last.
//! A failure while writing (a full disk) so leaves the old page and charts as they
//! were, and removes what it wrote, the directory too where it made it. Signals wait
//! for the renames to finish. A report killed outright (`kill -9`) leaves no chart
//! that the manifest does not list: a manifest listing the old files and the new is in
//! place before the first chart is.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};

use super::Report;
use crate::error::{Error, Result};
use crate::files;

/// The file that lists what the report in a directory wrote. The next report into the
/// directory removes those it does not write again, and only while their bytes are
/// still the ones listed.
pub const MANIFEST: &str = "membench-report.txt";

/// The first line of a manifest membench wrote: a file without it is never trusted.
const MANIFEST_HEADER: &str = "# membench report: the files it wrote here, each after \
                               its FNV-1a digest; the next report removes those it does \
                               not write again, only while unchanged";

/// The largest manifest read: a report writes a few dozen files.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The largest file read to check whether it is still the one a report wrote.
const MAX_OWNED_BYTES: u64 = 256 << 20;

/// The hidden directory a report is written into before its files take their places:
/// one report at a time, under the manifest's lock.
const STAGING: &str = ".membench-report.tmp";

/// Names within the hidden directory of the manifests it stages: hidden, so never a
/// report file's.
const UNION_MANIFEST: &str = ".union";
const FINAL_MANIFEST: &str = ".final";

/// The digest a manifest keeps of a file: FNV-1a over its bytes, 16 hex digits.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(bytes);
    format!("{:016x}", hasher.finish())
}

/// Writes `index.html` and every chart of `report` into `dir` (a link to a directory
/// is followed), whole or not at all, as the module says. The files an earlier report
/// wrote there and this one does not are removed where unchanged. Two reports into one
/// directory take turns, under the manifest's lock.
pub fn write(report: &Report, dir: &Path) -> Result<()> {
    let dir = destination(dir)?;
    let written: Vec<(&str, &[u8])> = report
        .charts
        .iter()
        .map(|chart| (chart.file.as_str(), chart.svg.as_bytes()))
        .chain([("index.html", report.html.as_bytes())])
        .collect();
    // Names come from results files: none may lead out of the directory.
    if let Some((name, _)) = written.iter().find(|(name, _)| !plain_name(name)) {
        return Err(Error::Internal(format!(
            "a report file named {name:?}, which is not a plain file name"
        )));
    }
    let made = first_missing(&dir);
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let written = write_into(&dir, &written);
    if written.is_err()
        && let Some(made) = made
    {
        // Only empty directories go: a file another writer put there meanwhile stays.
        for made_dir in dir.ancestors().take_while(|d| d.starts_with(&made)) {
            let _ = std::fs::remove_dir(made_dir);
        }
    }
    written
}

/// The outermost of `dir` and its parents that does not exist yet, if any.
fn first_missing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
        .last()
        .map(Path::to_owned)
}

/// [`write`] into the directory `dir`, which exists: every file staged, then put in
/// place.
fn write_into(dir: &Path, written: &[(&str, &[u8])]) -> Result<()> {
    let manifest_path = dir.join(MANIFEST);
    let manifest_was_there = std::fs::symlink_metadata(&manifest_path).is_ok();
    let manifest = files::lock(&manifest_path)?;
    let earlier = Manifest::parse(&manifest.read(MAX_MANIFEST_BYTES)?);
    // From here a signal waits: it finds the report whole, old or new.
    let _whole = files::quiesce();
    let staged = stage(dir, written, &earlier);
    let staged = match staged {
        Ok(staged) => staged,
        Err(error) => {
            // The lock made an empty manifest where there was none: it goes too.
            if !manifest_was_there {
                let _ = std::fs::remove_file(manifest.path());
            }
            return Err(error);
        }
    };
    staged.commit(dir, written, &earlier)
}

/// Every file of a report, written whole into a hidden directory of the report's.
struct Staged {
    staging: tempfile::TempDir,
    /// What the new report wrote.
    manifest: Manifest,
}

/// Writes `written` and the two manifests (the old and new files together, and the new
/// alone) into a new hidden directory in `dir`; nothing in `dir` changes. A file to be
/// replaced keeps its permissions.
fn stage(dir: &Path, written: &[(&str, &[u8])], earlier: &Manifest) -> Result<Staged> {
    for (name, _) in written {
        check_replaceable(&dir.join(name))?;
    }
    // One there was left by a report killed outright: the lock says none is under way.
    let abandoned = dir.join(STAGING);
    if std::fs::symlink_metadata(&abandoned).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&abandoned).map_err(Error::io(&abandoned))?;
    }
    let staging = tempfile::Builder::new()
        .prefix(STAGING)
        .rand_bytes(0)
        .tempdir_in(dir)
        .map_err(Error::io(&abandoned))?;
    let manifest = Manifest::of(written);
    let mut union = earlier.clone();
    union.add(&manifest);
    let manifests = [
        (UNION_MANIFEST, union.text()),
        (FINAL_MANIFEST, manifest.text()),
    ];
    let all = written.iter().copied().chain(
        manifests
            .iter()
            .map(|(name, text)| (*name, text.as_bytes())),
    );
    for (name, bytes) in all {
        let path = staging.path().join(name);
        let keep = std::fs::metadata(dir.join(name))
            .ok()
            .map(|m| m.permissions());
        write_new(&path, bytes, keep).map_err(Error::io(&path))?;
    }
    Ok(Staged { staging, manifest })
}

/// `bytes` into a new file at `path`, synced, given `permissions` where there are any.
fn write_new(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut file = std::fs::File::create_new(path)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    Ok(())
}

impl Staged {
    /// Puts the staged files in place, by renames alone: the manifest of old and new
    /// files first, then the charts, the page, and the new manifest once the old
    /// files it no longer lists are removed. Each manifest is locked before it takes
    /// the manifest's place, and the locks go only after the hidden directory: another
    /// report that opens the manifest meanwhile waits for this one ([`files::lock`]
    /// then checks which file is at the path), and never finds the directory in use.
    fn commit(self, dir: &Path, written: &[(&str, &[u8])], earlier: &Manifest) -> Result<()> {
        let mut held = Vec::new();
        let committed = self.put_in_place(dir, written, earlier, &mut held);
        drop(self);
        drop(held);
        committed
    }

    /// [`Staged::commit`]'s renames, each manifest locked into `held` before it is put.
    fn put_in_place(
        &self,
        dir: &Path,
        written: &[(&str, &[u8])],
        earlier: &Manifest,
        held: &mut Vec<std::fs::File>,
    ) -> Result<()> {
        let put = |staged: &str, name: &str| {
            let to = dir.join(name);
            std::fs::rename(self.staging.path().join(staged), &to).map_err(Error::io(&to))
        };
        let hold = |staged: &str| {
            let path = self.staging.path().join(staged);
            let file = std::fs::File::open(&path).map_err(Error::io(&path))?;
            file.lock().map_err(Error::io(&path))?;
            Ok::<_, Error>(file)
        };
        held.push(hold(UNION_MANIFEST)?);
        put(UNION_MANIFEST, MANIFEST)?;
        // `written` ends with the page.
        for (name, _) in written {
            put(name, name)?;
        }
        let mut kept = self.manifest.clone();
        for (name, digests) in &earlier.files {
            if self.manifest.files.contains_key(name) {
                continue;
            }
            let path = dir.join(name);
            if still_written(&path, digests) && std::fs::remove_file(&path).is_err() {
                kept.files.insert(name.clone(), digests.clone());
            }
        }
        if kept.files.len() > self.manifest.files.len() {
            let path = self.staging.path().join(FINAL_MANIFEST);
            std::fs::write(&path, kept.text()).map_err(Error::io(&path))?;
        }
        held.push(hold(FINAL_MANIFEST)?);
        put(FINAL_MANIFEST, MANIFEST)
    }
}

/// Whether the file at `path` is a regular file whose bytes have one of `digests`: one
/// a report wrote, unchanged since.
fn still_written(path: &Path, digests: &BTreeSet<String>) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
    regular
        && files::read_bounded(path, &file, MAX_OWNED_BYTES)
            .is_ok_and(|bytes| digests.contains(&digest(&bytes)))
}

/// An error where a report file cannot take `path`'s place: a directory is there, or
/// a read-only file (someone protected it).
fn check_replaceable(path: &Path) -> Result<()> {
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let why = if metadata.is_dir() {
        "a directory is where the report writes a file of this name"
    } else if metadata.is_file() && metadata.permissions().readonly() {
        "read-only: the report does not replace a protected file (make it writable, or \
         choose another --out)"
    } else {
        return Ok(());
    };
    Err(Error::Results {
        path: path.to_owned(),
        message: why.to_owned(),
    })
}

/// What a manifest lists: per file name, the digests of the files a report wrote
/// under it (two where a killed report left the old and the new listed).
#[derive(Clone, Debug, Default, PartialEq)]
struct Manifest {
    files: BTreeMap<String, BTreeSet<String>>,
}

impl Manifest {
    /// The files `written`, each with its digest.
    fn of(written: &[(&str, &[u8])]) -> Manifest {
        let mut manifest = Manifest::default();
        for (name, bytes) in written {
            manifest
                .files
                .entry((*name).to_owned())
                .or_default()
                .insert(digest(bytes));
        }
        manifest
    }

    /// A manifest's text as membench writes it; nothing from any other file (a user's
    /// file of the same name, an older membench's list of names), nor from a line that
    /// is not a digest and a plain name.
    fn parse(bytes: &[u8]) -> Manifest {
        let text = String::from_utf8_lossy(bytes);
        let mut lines = text.lines();
        if lines.next() != Some(MANIFEST_HEADER) {
            return Manifest::default();
        }
        let mut manifest = Manifest::default();
        for line in lines {
            let Some((digest, name)) = line.split_once("  ") else {
                continue;
            };
            let hex = digest.len() == 16 && digest.chars().all(|c| c.is_ascii_hexdigit());
            if hex && plain_name(name) && name != MANIFEST {
                manifest
                    .files
                    .entry(name.to_owned())
                    .or_default()
                    .insert(digest.to_owned());
            }
        }
        manifest
    }

    /// Adds every file of `other`.
    fn add(&mut self, other: &Manifest) {
        for (name, digests) in &other.files {
            self.files
                .entry(name.clone())
                .or_default()
                .extend(digests.iter().cloned());
        }
    }

    /// The text [`Manifest::parse`] reads: the header, then `digest  name` a line.
    fn text(&self) -> String {
        let mut text = format!("{MANIFEST_HEADER}\n");
        for (name, digests) in &self.files {
            for digest in digests {
                text.push_str(&format!("{digest}  {name}\n"));
            }
        }
        text
    }
}

/// The directory `dir` names (a link followed), where it is one or is not there yet:
/// `report` checks it before it reads anything, so a file named by mistake is refused,
/// not replaced.
pub(crate) fn destination(dir: &Path) -> Result<PathBuf> {
    let dir = files::resolve(dir)?;
    match std::fs::metadata(&dir) {
        Ok(metadata) if !metadata.is_dir() => Err(Error::Results {
            path: dir,
            message: "not a directory: --out names the directory a report is written into"
                .to_owned(),
        }),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&dir)(e)),
        _ => Ok(dir),
    }
}

/// Whether `name` is a plain file name: letters, digits, `-`, `_` and `.`, not hidden,
/// no separator, so never a path out of the directory.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_are_written_or_removed() {
        for good in ["index.html", "copy-offset-sizing-2.svg", MANIFEST] {
            assert!(plain_name(good), "{good}");
        }
        for bad in [
            "",
            "..",
            ".hidden",
            "../x.svg",
            "a/b.svg",
            "/etc/passwd",
            "a\u{1b}[31m",
        ] {
            assert!(!plain_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_manifest_is_trusted_only_as_membench_writes_it() {
        let written = Manifest::of(&[("index.html", b"<html>"), ("a.svg", b"<svg/>")]);
        assert_eq!(Manifest::parse(written.text().as_bytes()), written);
        // A list of names, a user's own file or an older membench's: nothing in it.
        let names = b"index.html\nnotes.txt\n";
        assert_eq!(Manifest::parse(names), Manifest::default());
        let forged = format!(
            "{MANIFEST_HEADER}\nxyz  notes.txt\n{}  ../up.svg\n",
            digest(b"")
        );
        assert_eq!(Manifest::parse(forged.as_bytes()), Manifest::default());
        assert_eq!(digest(b""), "cbf29ce484222325", "FNV-1a's offset basis");
    }
}
