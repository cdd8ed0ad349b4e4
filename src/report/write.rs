//! A report written into its directory. It owns only what it wrote there: `index.html`,
//! its charts and the manifest that lists them. Everything else in the directory is
//! left as it is.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;

use super::Report;
use crate::error::{Error, Result};
use crate::files;

/// The file that lists what the report in a directory wrote, a name a line. The next
/// report into the directory removes those it does not write again, and nothing else.
pub const MANIFEST: &str = "membench-report.txt";

/// The largest manifest read: a report writes a few dozen files.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Writes `index.html` and every chart of `report` into `dir` (a link to a directory
/// is followed), each file replaced whole, the page last. The files an earlier report
/// wrote there and this one does not are removed. Two reports into one directory take
/// turns, under the manifest's lock.
pub fn write(report: &Report, dir: &Path) -> Result<()> {
    let dir = destination(dir)?;
    let written: Vec<(&str, &str)> = report
        .charts
        .iter()
        .map(|chart| (chart.file.as_str(), chart.svg.as_str()))
        .chain([("index.html", report.html.as_str())])
        .collect();
    // Names come from results files: none may lead out of the directory.
    if let Some((name, _)) = written.iter().find(|(name, _)| !plain_name(name)) {
        return Err(Error::Internal(format!(
            "a report file named {name:?}, which is not a plain file name"
        )));
    }
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let manifest = files::lock(&dir.join(MANIFEST))?;
    let earlier = String::from_utf8_lossy(&manifest.read(MAX_MANIFEST_BYTES)?).into_owned();
    for (name, text) in &written {
        files::replace(&dir.join(name), |file| file.write_all(text.as_bytes()))?;
    }
    let names: BTreeSet<&str> = written.iter().map(|(name, _)| *name).collect();
    for stale in earlier
        .lines()
        .filter(|name| plain_name(name) && !names.contains(name))
    {
        let path = dir.join(stale);
        let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if is_file {
            std::fs::remove_file(&path).map_err(Error::io(&path))?;
        }
    }
    manifest.replace(|file| {
        for name in &names {
            writeln!(file, "{name}")?;
        }
        Ok(())
    })
}

/// The directory `dir` names (a link followed), where it is one or is not there yet:
/// `report` checks it before it reads anything, so a file named by mistake is refused,
/// not replaced.
pub fn destination(dir: &Path) -> Result<std::path::PathBuf> {
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
}
