//! The simulator against measurements the project did not make: per-level sweeps that
//! others published (gpu-benches' `gpu-cache`, `gpu-l2-cache` and `gpu-latency`, as
//! extracts in `tests/fixtures/published/`), compared level by level with a preset's
//! predictions, the preset never fitted to them.
//!
//! The three sweeps are membench's own experiments' kin: `window` (one workgroup per
//! SM re-reads its own data set: the L1), `shared` (every workgroup reads a slice of
//! one data set: the L2, a last-level cache, DRAM) and `chase` (one dependent load
//! after another: each level's latency). Each sweep's levels are found as a run's are
//! ([`crate::results::levels`]), on the published points and on the predicted ones,
//! and named from the preset's hierarchy. A level agrees when it ends within one of
//! membench's sweep steps of where the published one ends (the last level has no end)
//! and its plateau (GB/s or ns per load) is within [`TOLERANCE`].

use crate::error::{Error, Result};
use crate::results::levels::{self, BANDWIDTH_MIN_POINTS, LATENCY_MIN_POINTS, Level, Sense};
use crate::run;
use crate::sim::device::DeviceModel;
use crate::suite::families::{hierarchy, latency};
use crate::suite::{self, Experiment, Key, RunSizing, Sizing};

/// How far a predicted plateau may be from the published one: 20 %.
pub(crate) const TOLERANCE: f64 = 0.2;

/// One of the three sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublishedSweep {
    /// Each SM re-reads its own data set: the L1 (GB/s).
    Window,
    /// Every workgroup reads a slice of one data set: the L2 and beyond (GB/s).
    Shared,
    /// One dependent load after another (ns per load).
    Chase,
}

impl PublishedSweep {
    /// The three, in the order the tables show them.
    pub const ALL: [PublishedSweep; 3] = [
        PublishedSweep::Window,
        PublishedSweep::Shared,
        PublishedSweep::Chase,
    ];

    /// The name in a published file's `sweep` column and in tables.
    pub fn name(self) -> &'static str {
        match self {
            PublishedSweep::Window => "window",
            PublishedSweep::Shared => "shared",
            PublishedSweep::Chase => "chase",
        }
    }

    fn sense(self) -> Sense {
        match self {
            PublishedSweep::Chase => Sense::Latency,
            _ => Sense::Bandwidth,
        }
    }

    fn min_points(self) -> usize {
        match self {
            PublishedSweep::Chase => LATENCY_MIN_POINTS,
            _ => BANDWIDTH_MIN_POINTS,
        }
    }

    /// membench's experiment of this sweep.
    fn experiment(self) -> &'static Experiment {
        match self {
            PublishedSweep::Window => &hierarchy::WINDOW,
            PublishedSweep::Shared => &hierarchy::SHARED,
            PublishedSweep::Chase => &latency::CHASE,
        }
    }

    /// The ratio between neighbouring sizes of membench's sweep, where the levels end:
    /// 2^(1/4) for `window`, 2^(1/5) for `shared` and the chase beyond 1 MiB.
    pub fn step(self) -> f64 {
        match self {
            PublishedSweep::Window => 2f64.powf(0.25),
            _ => 2f64.powf(0.2),
        }
    }

    /// The names of the levels this sweep shows on `model`: the window the L1 and the
    /// L2 (the one it spills to), the shared buffer everything past the L1, the chase
    /// every level.
    fn level_names(self, model: &DeviceModel) -> Vec<&'static str> {
        let names = model.level_names();
        match self {
            PublishedSweep::Window => names.into_iter().take(2).collect(),
            PublishedSweep::Shared => names.into_iter().skip(1).collect(),
            PublishedSweep::Chase => names,
        }
    }
}

/// The `(footprint bytes, value)` points of each sweep: GB/s, or ns per load.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sweeps {
    /// The `window` sweep's points.
    pub window: Vec<(u64, f64)>,
    /// The `shared` sweep's points.
    pub shared: Vec<(u64, f64)>,
    /// The `chase` sweep's points.
    pub chase: Vec<(u64, f64)>,
}

impl Sweeps {
    /// The points of `sweep`.
    pub fn of(&self, sweep: PublishedSweep) -> &[(u64, f64)] {
        match sweep {
            PublishedSweep::Window => &self.window,
            PublishedSweep::Shared => &self.shared,
            PublishedSweep::Chase => &self.chase,
        }
    }

    fn of_mut(&mut self, sweep: PublishedSweep) -> &mut Vec<(u64, f64)> {
        match sweep {
            PublishedSweep::Window => &mut self.window,
            PublishedSweep::Shared => &mut self.shared,
            PublishedSweep::Chase => &mut self.chase,
        }
    }
}

/// A published file: `#` lines (the source), a `sweep,footprint_bytes,value` header,
/// then one point a line.
pub fn parse(text: &str) -> Result<Sweeps> {
    let mut sweeps = Sweeps::default();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
    let bad = |n: usize, why: &str| Error::Usage(format!("published sweep, line {}: {why}", n + 1));
    match lines.next() {
        Some((_, "sweep,footprint_bytes,value")) => {}
        Some((n, _)) => return Err(bad(n, "expected the header sweep,footprint_bytes,value")),
        None => return Err(Error::Usage("published sweep: no header".into())),
    }
    for (n, line) in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let [sweep, bytes, value] = fields[..] else {
            return Err(bad(n, "expected three fields"));
        };
        let sweep = PublishedSweep::ALL
            .into_iter()
            .find(|s| s.name() == sweep)
            .ok_or_else(|| bad(n, "unknown sweep"))?;
        let bytes = bytes.parse().map_err(|_| bad(n, "bad footprint"))?;
        let value: f64 = value.parse().map_err(|_| bad(n, "bad value"))?;
        sweeps.of_mut(sweep).push((bytes, value));
    }
    Ok(sweeps)
}

/// The largest footprint worth predicting on `model`: four times all its caches, so
/// DRAM's plateau has points, at least 64 MiB.
fn largest_footprint(model: &DeviceModel) -> u64 {
    (4 * (model.l2_bytes + model.llc_bytes)).max(64 << 20)
}

/// The three sweeps predicted on `model` at a full run's sizes (to
/// [`largest_footprint`]).
pub fn predict(model: &DeviceModel) -> Result<Sweeps> {
    let names: Vec<String> = PublishedSweep::ALL
        .iter()
        .map(|s| {
            let e = s.experiment();
            format!("{}/{}/", e.family, e.variant)
        })
        .collect();
    let largest = largest_footprint(model);
    let cases: Vec<_> = suite::select(&Sizing::nominal(false), &names)?
        .into_iter()
        .filter(|(_, case)| {
            case.params
                .number(Key::Footprint)
                .is_some_and(|bytes| bytes <= largest)
        })
        .collect();
    let predictions = run::predict_cases(&cases, model, &|| {});
    let rows = run::predicted_rows(&cases, RunSizing::default(), &predictions, model);
    let mut sweeps = Sweeps::default();
    for sweep in PublishedSweep::ALL {
        let e = sweep.experiment();
        *sweeps.of_mut(sweep) = rows
            .iter()
            .filter(|row| row.family == e.family && row.variant == e.variant)
            .filter_map(|row| levels::sweep_point(row, sweep.sense(), true))
            .collect();
    }
    Ok(sweeps)
}

/// One level of one sweep, predicted against published.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelJudged {
    /// The sweep.
    pub sweep: PublishedSweep,
    /// The level's name.
    pub level: &'static str,
    /// The level the prediction shows, if any.
    pub predicted: Option<Level>,
    /// The level the published sweep shows, if any.
    pub published: Option<Level>,
    /// Whether the predicted level ends within one sweep step of the published one
    /// (`None` for the sweep's last level, which has no end).
    pub end_agrees: Option<bool>,
    /// Whether the plateau is within [`TOLERANCE`].
    pub value_agrees: bool,
}

/// The levels of `points` on `model`'s sweep, named from its hierarchy: all of them
/// where there are as many as it has, else the first and the last.
fn named(points: &[(u64, f64)], sweep: PublishedSweep, names: &[&str]) -> Vec<Level> {
    let mut found = levels::levels(points, sweep.sense(), sweep.min_points());
    if found.len() == names.len() {
        return levels::renamed(found, names);
    }
    let count = found.len();
    for (index, level) in found.iter_mut().enumerate() {
        level.name = match (index, names) {
            (0, [first, ..]) => (*first).to_owned(),
            (i, [.., last]) if i + 1 == count => (*last).to_owned(),
            _ => format!("{} (unmatched)", level.name),
        };
    }
    found
}

/// Every level `model`'s hierarchy has in each sweep that `published` has points of,
/// predicted (`predicted`) against published.
pub fn compare(model: &DeviceModel, predicted: &Sweeps, published: &Sweeps) -> Vec<LevelJudged> {
    let mut compared = Vec::new();
    for sweep in PublishedSweep::ALL {
        if published.of(sweep).is_empty() {
            continue;
        }
        let names = sweep.level_names(model);
        let ours = named(predicted.of(sweep), sweep, &names);
        let theirs = named(published.of(sweep), sweep, &names);
        let find = |found: &[Level], name: &str| found.iter().find(|l| l.name == name).cloned();
        for (index, &name) in names.iter().enumerate() {
            let (p, m) = (find(&ours, name), find(&theirs, name));
            let last = index + 1 == names.len();
            let (end_agrees, value_agrees) = match (&p, &m) {
                (Some(p), Some(m)) => {
                    let ratio = p.last_bytes as f64 / m.last_bytes as f64;
                    let step = sweep.step() * 1.001;
                    let end = (!last).then(|| (1.0 / step..=step).contains(&ratio));
                    (end, (p.value / m.value - 1.0).abs() <= TOLERANCE)
                }
                _ => ((!last).then_some(false), false),
            };
            compared.push(LevelJudged {
                sweep,
                level: name,
                predicted: p,
                published: m,
                end_agrees,
                value_agrees,
            });
        }
    }
    compared
}

/// A markdown table of `compared` for the GPU `gpu`: per sweep and level, where it ends
/// and its plateau, predicted and published.
pub fn table(gpu: &str, compared: &[LevelJudged]) -> String {
    let level = |l: &Option<Level>, sense: Sense, last: bool| match l {
        Some(l) if last => levels::value_text(l.value, sense),
        Some(l) => format!(
            "{} to {}",
            levels::value_text(l.value, sense),
            levels::bytes_text(l.last_bytes)
        ),
        None => "no level".to_owned(),
    };
    let mark = |ok: bool| if ok { "yes" } else { "no" };
    let mut out = String::new();
    for c in compared {
        let last = c.end_agrees.is_none();
        out.push_str(&format!(
            "| {gpu} | {} | {} | {} | {} | {} | {} |\n",
            c.sweep.name(),
            c.level,
            level(&c.predicted, c.sweep.sense(), last),
            level(&c.published, c.sweep.sense(), last),
            c.end_agrees.map_or("-", mark),
            mark(c.value_agrees),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_file_reads_and_bad_lines_are_refused() {
        let text = "# source\nsweep,footprint_bytes,value\nwindow,4096,100.5\nchase,8192,30\n";
        let s = parse(text).unwrap();
        assert_eq!(s.window, vec![(4096, 100.5)]);
        assert_eq!(s.chase, vec![(8192, 30.0)]);
        assert!(s.shared.is_empty());
        for bad in [
            "sweep,bytes\n",
            "sweep,footprint_bytes,value\nwindow,4096\n",
            "sweep,footprint_bytes,value\ntexture,4096,1\n",
            "sweep,footprint_bytes,value\nwindow,x,1\n",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn levels_agree_within_a_step_and_the_tolerance() {
        let model = crate::sim::device::preset("v100").copied().unwrap();
        // A window of an L1 to 96 KiB at 13 TB/s, then an L2 at 2.4 TB/s.
        let sweep = |end: u64, l1: f64| -> Vec<(u64, f64)> {
            (0..20)
                .map(|i| {
                    let bytes = 4096u64 << (i / 2);
                    (bytes, if bytes <= end { l1 } else { 2400.0 })
                })
                .collect()
        };
        let published = Sweeps {
            window: sweep(96 << 10, 13000.0),
            ..Sweeps::default()
        };
        let near = Sweeps {
            window: sweep(96 << 10, 11000.0),
            ..Sweeps::default()
        };
        let c = compare(&model, &near, &published);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].level, c[0].end_agrees, c[0].value_agrees),
            ("L1", Some(true), true)
        );
        assert_eq!(
            (c[1].level, c[1].end_agrees, c[1].value_agrees),
            ("L2", None, true)
        );
        let far = Sweeps {
            window: sweep(512 << 10, 9000.0),
            ..Sweeps::default()
        };
        let c = compare(&model, &far, &published);
        assert_eq!((c[0].end_agrees, c[0].value_agrees), (Some(false), false));
    }
}
