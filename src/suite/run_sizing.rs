//! The settings of a run that size its cases and the conditions they run in: the
//! `sizing` column, written by one `Display` and read back by one `FromStr`.

use std::fmt;
use std::str::FromStr;

/// The settings of `membench run` that change the sizes of its cases (`--quick`,
/// `--buffer-mib`, `--size`), and the one that changes the conditions they run in
/// (`--concurrent`): the `sizing` column. On one device, one sizing gives one size per
/// case, measured alone or beside the same number of adapters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RunSizing {
    /// The `--quick` sizing.
    pub quick: bool,
    /// The main buffer of the streaming experiments, where not the default.
    pub buffer_bytes: Option<u64>,
    /// The matrix (columns, rows) of the 2-D experiments, where not the default.
    pub matrix: Option<(u32, u32)>,
    /// The adapters that measured each case at the same time, this one included (at
    /// least 2), where not alone (`--concurrent`).
    pub concurrent: Option<u32>,
}

impl RunSizing {
    const DEFAULT: &str = "default";
}

impl fmt::Display for RunSizing {
    /// `default`, or the settings that differ from it joined by `;`:
    /// `quick;buffer=64MiB;size=1000x3000;concurrent=2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.quick {
            parts.push("quick".to_owned());
        }
        match self.buffer_bytes {
            Some(bytes) if bytes % (1 << 20) == 0 => {
                parts.push(format!("buffer={}MiB", bytes >> 20))
            }
            Some(bytes) => parts.push(format!("buffer={bytes}B")),
            None => {}
        }
        if let Some((nx, ny)) = self.matrix {
            parts.push(format!("size={nx}x{ny}"));
        }
        if let Some(adapters) = self.concurrent {
            parts.push(format!("concurrent={adapters}"));
        }
        if parts.is_empty() {
            f.write_str(Self::DEFAULT)
        } else {
            f.write_str(&parts.join(";"))
        }
    }
}

impl FromStr for RunSizing {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let mut sizing = RunSizing::default();
        if text == Self::DEFAULT {
            return Ok(sizing);
        }
        let bad = || {
            format!(
                "`{text}` is not a sizing (default, quick, buffer=NMiB, size=NXxNY, concurrent=N)"
            )
        };
        for part in text.split(';') {
            match part.split_once('=') {
                None if part == "quick" && !sizing.quick => sizing.quick = true,
                Some(("buffer", value)) if sizing.buffer_bytes.is_none() => {
                    let bytes = match value.strip_suffix("MiB") {
                        Some(mib) => mib.parse::<u64>().ok().and_then(|m| m.checked_mul(1 << 20)),
                        None => value.strip_suffix('B').and_then(|b| b.parse().ok()),
                    };
                    sizing.buffer_bytes = Some(bytes.filter(|&b| b > 0).ok_or_else(bad)?);
                }
                Some(("size", value)) if sizing.matrix.is_none() => {
                    let (nx, ny) = value.split_once('x').ok_or_else(bad)?;
                    let dimension = |d: &str| d.parse::<u32>().ok().filter(|&n| n > 0);
                    sizing.matrix = Some(dimension(nx).zip(dimension(ny)).ok_or_else(bad)?);
                }
                Some(("concurrent", value)) if sizing.concurrent.is_none() => {
                    let adapters = value.parse::<u32>().ok().filter(|&n| n >= 2);
                    sizing.concurrent = Some(adapters.ok_or_else(bad)?);
                }
                _ => return Err(bad()),
            }
        }
        Ok(sizing)
    }
}

impl serde::Serialize for RunSizing {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for RunSizing {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
