//! Rows that could not go where they were going (a stdout that broke, a results file on
//! a full disk, a lock given up on) are kept in a file of their own in the temporary
//! directory: made exclusively, under a name no one can foresee, so no link planted
//! there can take them elsewhere.

use std::path::PathBuf;

use super::Row;
use super::write::{saved, write_csv};
use crate::error::{Error, Result};

/// `failed`, the error that kept `rows` from where they were going, said with what was
/// saved and where the rows are now (or why they could not be kept either).
pub fn rescue(rows: &[Row], failed: Error) -> Error {
    let measured = match rows.len() {
        1 => "the 1 row measured is".to_owned(),
        n => format!("the {n} rows measured are"),
    };
    let kept = match keep(rows) {
        Ok(path) => format!("{measured} in {}", path.display()),
        Err(why) => format!("{measured} lost: {why}"),
    };
    Error::Unsaved {
        error: Box::new(failed),
        kept: format!("{}; {kept}", saved()),
    }
}

/// Writes `rows` as CSV to a new file `membench-rows-XXXXXX.csv` in the temporary
/// directory (`TMPDIR`, which must exist), readable by this user alone; its path. A
/// file not written whole is removed.
fn keep(rows: &[Row]) -> Result<PathBuf> {
    let dir = std::env::temp_dir();
    let mut file = tempfile::Builder::new()
        .prefix("membench-rows-")
        .suffix(".csv")
        .tempfile_in(&dir)
        .map_err(|error| match std::env::var_os("TMPDIR") {
            // Named as the variable: that is what to mend.
            Some(_) => Error::Environment(format!("TMPDIR={}: {error}", dir.display())),
            None => Error::io(&dir)(error),
        })?;
    let io = Error::io(file.path());
    write_csv(file.as_file_mut(), rows).map_err(&io)?;
    file.as_file().sync_all().map_err(&io)?;
    let (_, path) = file.keep().map_err(|e| io(e.error))?;
    Ok(path)
}
