//! Typed case identity: a [`CaseId`] is a family, a variant and ordered, typed
//! [`Params`]. Its text form `family/variant/key=value;key=value` is the CSV's
//! `family`, `variant` and `param` columns, written by one `Display` and read back by
//! one `FromStr`, so files written before the identity was typed still read.
//!
//! Parameters order by value (numbers as numbers, `332x200` before `4096x4096`), which
//! is the order every table and chart shows.

use std::fmt;
use std::str::FromStr;

/// Declares a closed set of names with their text form, `Display` and `FromStr`.
macro_rules! names {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* #[doc = concat!("Written `", $text, "`.")] $variant),+
        }

        impl $name {
            /// Every name, in declaration order.
            pub const ALL: &[$name] = &[$($name::$variant),+];

            /// The text form, as in the CSV.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let text = <::std::borrow::Cow<'de, str> as ::serde::Deserialize<'de>>::deserialize(
                    deserializer,
                )?;
                text.parse().map_err(::serde::de::Error::custom)
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = String;

            fn from_str(text: &str) -> ::std::result::Result<Self, String> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|name| name.as_str() == text)
                    .ok_or_else(|| format!("unknown {} `{text}`", stringify!($name).to_lowercase()))
            }
        }
    };
}

// The crate's other closed sets of names (`results::Status`) are declared by it too.
pub(crate) use names;

names! {
    /// A family of experiments, in the order runs and reports show them.
    #[derive(Default)]
    Family {
        #[default]
        Copy = "copy",
        Transpose = "transpose",
        Reduce = "reduce",
        Subgroup = "subgroup",
        Bank = "bank",
        Constant = "constant",
        Stencil = "stencil",
        Localmem = "localmem",
        Latency = "latency",
        Hierarchy = "hierarchy",
        Transfer = "transfer",
        Launch = "launch",
        Compute = "compute",
        /// A user's own kernel (`membench kernel`): variant its name, `size` its sizes.
        Kernel = "kernel",
    }
}

names! {
    /// The name of a case parameter.
    Key {
        Offset = "offset",
        Stride = "stride",
        Launch = "launch",
        Wg = "wg",
        Grid = "grid",
        Size = "size",
        Block = "block",
        Rows = "rows",
        N = "n",
        Rounds = "rounds",
        Read = "read",
        Repeats = "r",
        Chunks = "chunks",
        /// Bytes a case's working set spans: a pointer chase's cycle, a re-read window
        /// or buffer.
        Footprint = "footprint",
        /// Host threads that fill a staging buffer.
        Threads = "threads",
        /// Transfers per batch, in rows written before `chunks` replaced it.
        Uploads = "uploads",
        /// The caches' state at each timed dispatch ([`Cache`]); absent: warm.
        Cache = "cache",
        /// What the input holds: `zero` or `random`.
        Data = "data",
        /// Tiles staged in workgroup memory at once.
        Stages = "stages",
        /// The CUDA twin's preferred shared-memory carve-out, percent (CUDA only).
        Carveout = "carveout",
        /// Texels per row of a 2-D texture that holds a 1-D input row by row.
        Width = "width",
        /// Bytes of an L2 access policy window (CUDA only; absent: no window).
        Window = "window",
        /// The share of an access policy window's accesses that persist, percent.
        HitRatio = "hit",
        /// Bytes of the L2 set aside for persisting lines (CUDA only).
        SetAside = "setaside",
    }
}

names! {
    /// The caches' state when a timed dispatch starts: `warm`, right after the last
    /// dispatch of the same kernel on the same data (how every case runs unless it says
    /// otherwise), or `cold`, after an untimed pass that streamed [`FLUSH_BYTES`]
    /// through the L2.
    #[derive(Default)]
    Cache {
        #[default]
        Warm = "warm",
        Cold = "cold",
    }
}

/// Bytes a cold dispatch's untimed flush writes: four times the largest L2 of the
/// device presets (the H200's 60 MiB), so that none of a case's lines survive it.
pub(crate) const FLUSH_BYTES: u64 = 256 << 20;
/// The same on a software adapter: twice a large CPU's last-level cache, since the
/// clear runs on the CPU at a few GB/s.
pub(crate) const SOFTWARE_FLUSH_BYTES: u64 = 64 << 20;

names! {
    /// The programming interface a row was measured through.
    #[derive(Default)]
    Api {
        #[default]
        Wgpu = "wgpu",
        Cuda = "cuda",
    }
}

names! {
    /// How a kernel was built for its api. For wgpu: `default` is what a plain wgpu
    /// program gets (naga's barrier scopes, wgpu's runtime checks); `tax-free` has the
    /// checks off and every barrier at the memory scope the WGSL spec defines (SPIR-V
    /// passthrough); `unchecked` has the checks off and naga's barriers, where
    /// passthrough is not offered. For CUDA: `default` is NVRTC's; `rolled` keeps
    /// every loop whose trip count is a run-time value rolled (`#pragma unroll 1`), as
    /// NVIDIA's Vulkan compiler leaves some of the tax-free build's (the subgroup
    /// rounds, the padded bank tiles' reads): it isolates that cost. wgpu's
    /// `no-bounds-checks`, `no-loop-bounding` and `no-int-div-checks` each turn one of
    /// wgpu's runtime checks off (`ShaderRuntimeChecks`), the others on: each check's
    /// share of the tax.
    #[derive(Default)]
    Build {
        #[default]
        Default = "default",
        TaxFree = "tax-free",
        Unchecked = "unchecked",
        Rolled = "rolled",
        NoBoundsChecks = "no-bounds-checks",
        NoLoopBounding = "no-loop-bounding",
        NoIntDivChecks = "no-int-div-checks",
    }
}

names! {
    /// A build of wgpu's kernels: see [`Build`].
    #[derive(Default)]
    WgpuBuild {
        #[default]
        Default = "default",
        TaxFree = "tax-free",
        Unchecked = "unchecked",
        NoBoundsChecks = "no-bounds-checks",
        NoLoopBounding = "no-loop-bounding",
        NoIntDivChecks = "no-int-div-checks",
    }
}

names! {
    /// A build of the CUDA twins: see [`Build`].
    #[derive(Default)]
    CudaBuild {
        #[default]
        Default = "default",
        Rolled = "rolled",
    }
}

/// An api and one of its builds: what, besides the case, a measurement depends on in
/// the toolchain. Rows of one case differ only in it; no build an api lacks can be
/// named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    /// Through wgpu, in this build.
    Wgpu(WgpuBuild),
    /// Through CUDA, in this build.
    Cuda(CudaBuild),
}

impl Default for Setting {
    fn default() -> Self {
        Setting::WGPU
    }
}

impl Setting {
    /// wgpu's default build.
    pub const WGPU: Setting = Setting::Wgpu(WgpuBuild::Default);
    pub(crate) const TAX_FREE: Setting = Setting::Wgpu(WgpuBuild::TaxFree);
    pub(crate) const UNCHECKED: Setting = Setting::Wgpu(WgpuBuild::Unchecked);
    /// CUDA's default build.
    pub const CUDA: Setting = Setting::Cuda(CudaBuild::Default);

    /// The setting of `api` built as `build`, where the api has that build: what the
    /// CSV's `api` and `build` columns say together.
    pub fn of(api: Api, build: Build) -> Option<Setting> {
        match (api, build) {
            (Api::Wgpu, Build::Default) => Some(Setting::WGPU),
            (Api::Wgpu, Build::TaxFree) => Some(Setting::TAX_FREE),
            (Api::Wgpu, Build::Unchecked) => Some(Setting::UNCHECKED),
            (Api::Wgpu, Build::NoBoundsChecks) => Some(Setting::Wgpu(WgpuBuild::NoBoundsChecks)),
            (Api::Wgpu, Build::NoLoopBounding) => Some(Setting::Wgpu(WgpuBuild::NoLoopBounding)),
            (Api::Wgpu, Build::NoIntDivChecks) => Some(Setting::Wgpu(WgpuBuild::NoIntDivChecks)),
            (Api::Cuda, Build::Default) => Some(Setting::CUDA),
            (Api::Cuda, Build::Rolled) => Some(Setting::Cuda(CudaBuild::Rolled)),
            _ => None,
        }
    }

    /// The api, as the `api` column writes it.
    pub fn api(self) -> Api {
        match self {
            Setting::Wgpu(_) => Api::Wgpu,
            Setting::Cuda(_) => Api::Cuda,
        }
    }

    /// The build, as the `build` column writes it.
    pub fn build(self) -> Build {
        match self {
            Setting::Wgpu(WgpuBuild::Default) | Setting::Cuda(CudaBuild::Default) => Build::Default,
            Setting::Wgpu(WgpuBuild::TaxFree) => Build::TaxFree,
            Setting::Wgpu(WgpuBuild::Unchecked) => Build::Unchecked,
            Setting::Wgpu(WgpuBuild::NoBoundsChecks) => Build::NoBoundsChecks,
            Setting::Wgpu(WgpuBuild::NoLoopBounding) => Build::NoLoopBounding,
            Setting::Wgpu(WgpuBuild::NoIntDivChecks) => Build::NoIntDivChecks,
            Setting::Cuda(CudaBuild::Rolled) => Build::Rolled,
        }
    }

    /// Each of `builds` in each of `apis` that has it, once, in the order of `apis`,
    /// then of `builds`: what `--api` and `--build` select.
    pub fn selected(apis: &[Api], builds: &[Build]) -> Vec<Setting> {
        let mut selected = Vec::new();
        for &api in apis {
            for &build in builds {
                if let Some(setting) = Setting::of(api, build)
                    && !selected.contains(&setting)
                {
                    selected.push(setting);
                }
            }
        }
        selected
    }

    /// How close the setting's kernels are to what the hardware can do: CUDA, then
    /// wgpu's tax-free build, CUDA's rolled loops, wgpu's unchecked and default
    /// builds. Claims are decided on the closest, the toolchain's tax is read against
    /// it.
    pub(crate) fn closeness(self) -> u8 {
        match self {
            Setting::Cuda(CudaBuild::Rolled) => 3,
            Setting::Cuda(CudaBuild::Default) => 5,
            Setting::Wgpu(WgpuBuild::TaxFree) => 4,
            Setting::Wgpu(WgpuBuild::Unchecked) => 2,
            // One check off of three: nearer the default build than the unchecked one.
            Setting::Wgpu(
                WgpuBuild::NoBoundsChecks | WgpuBuild::NoLoopBounding | WgpuBuild::NoIntDivChecks,
            ) => 1,
            Setting::Wgpu(WgpuBuild::Default) => 0,
        }
    }
}

impl fmt::Display for Setting {
    /// `wgpu/tax-free`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.api(), self.build())
    }
}

/// One parameter's value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    /// A whole number: an offset, a count, a size in bytes or elements.
    Number(u64),
    /// Two dimensions `XxY`: a matrix or a workgroup shape.
    Dims(u32, u32),
    /// A named choice (`vec4`, `2d`, `broadcast`).
    Word(String),
    /// Named whole numbers `n:1024,D:768`: a user kernel's sizes, in the order given.
    Vars(Vec<(String, u64)>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Number(n) => write!(f, "{n}"),
            Value::Dims(x, y) => write!(f, "{x}x{y}"),
            Value::Word(word) => f.write_str(word),
            Value::Vars(vars) => {
                for (i, (name, value)) in vars.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "," };
                    write!(f, "{sep}{name}:{value}")?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for Value {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if let Ok(n) = text.parse() {
            return Ok(Value::Number(n));
        }
        if let Some((x, y)) = text.split_once('x')
            && let (Ok(x), Ok(y)) = (x.parse(), y.parse())
        {
            return Ok(Value::Dims(x, y));
        }
        if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Ok(Value::Word(text.to_owned()));
        }
        if let Some(vars) = parse_vars(text) {
            return Ok(Value::Vars(vars));
        }
        Err(format!("`{text}` is not a number, `XxY` or a word"))
    }
}

/// `name:number,name:number`, each name a WGSL-like identifier, or `None`.
fn parse_vars(text: &str) -> Option<Vec<(String, u64)>> {
    text.split(',')
        .map(|pair| {
            let (name, value) = pair.split_once(':')?;
            let identifier = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            identifier.then_some(())?;
            Some((name.to_owned(), value.parse().ok()?))
        })
        .collect()
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Number(n)
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Self {
        Value::Number(n.into())
    }
}

impl From<usize> for Value {
    fn from(n: usize) -> Self {
        Value::Number(n as u64)
    }
}

impl From<(u32, u32)> for Value {
    fn from((x, y): (u32, u32)) -> Self {
        Value::Dims(x, y)
    }
}

impl From<&str> for Value {
    fn from(word: &str) -> Self {
        Value::Word(word.to_owned())
    }
}

/// A case's parameters, in the order its family declares them.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Params(Vec<(Key, Value)>);

impl Params {
    /// No parameters.
    pub fn new() -> Self {
        Params(Vec::new())
    }

    /// These parameters and `key = value` after them.
    pub fn with(mut self, key: Key, value: impl Into<Value>) -> Self {
        self.0.push((key, value.into()));
        self
    }

    /// The value of `key`, if the case has one.
    pub fn get(&self, key: Key) -> Option<&Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The whole-number value of `key`, if it has one.
    pub fn number(&self, key: Key) -> Option<u64> {
        match self.get(key)? {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// Whether every pair of `other` is among these (in any order).
    pub fn contains(&self, other: &Params) -> bool {
        other.0.iter().all(|pair| self.0.contains(pair))
    }

    /// Whether these and `other` are the same pairs, in any order.
    pub(crate) fn same_pairs(&self, other: &Params) -> bool {
        fn sorted(params: &Params) -> Vec<&(Key, Value)> {
            let mut pairs: Vec<&(Key, Value)> = params.0.iter().collect();
            pairs.sort();
            pairs
        }
        sorted(self) == sorted(other)
    }

    /// These parameters without `key`, the others in their order.
    pub fn without(&self, key: Key) -> Params {
        Params(self.0.iter().filter(|(k, _)| *k != key).cloned().collect())
    }

    /// These parameters with `key`'s value replaced by `value`, in place.
    pub(crate) fn replaced(&self, key: Key, value: impl Into<Value>) -> Params {
        let value = value.into();
        Params(
            self.0
                .iter()
                .map(|(k, v)| (*k, if *k == key { value.clone() } else { v.clone() }))
                .collect(),
        )
    }

    /// Whether there are no parameters.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = &(Key, Value)> {
        self.0.iter()
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, value)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ";" };
            write!(f, "{sep}{key}={value}")?;
        }
        Ok(())
    }
}

impl serde::Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Params {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text =
            <::std::borrow::Cow<'de, str> as ::serde::Deserialize<'de>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Params {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        text.split(';')
            .filter(|pair| !pair.trim().is_empty())
            .map(|pair| {
                let (key, value) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("`{pair}` is not key=value"))?;
                Ok((key.trim().parse()?, value.trim().parse()?))
            })
            .collect::<Result<_, String>>()
            .map(Params)
    }
}

/// `Params::new()` followed by `.with(Key::K, v)` for each `K => v`.
#[macro_export]
macro_rules! params {
    ($($key:ident => $value:expr),* $(,)?) => {
        $crate::suite::Params::new()$(.with($crate::suite::Key::$key, $value))*
    };
}

/// The identity of one case: what filters match, rows are keyed on and reports name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CaseId {
    /// The experiment's family.
    pub family: Family,
    /// The experiment's variant.
    pub variant: String,
    /// Its parameters.
    pub params: Params,
}

impl fmt::Display for CaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.family, self.variant, self.params)
    }
}

impl FromStr for CaseId {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.splitn(3, '/');
        let (Some(family), Some(variant), Some(params)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("`{text}` is not family/variant/param"));
        };
        CaseId::from_columns(family, variant, params)
    }
}

impl CaseId {
    /// The identity from the CSV's `family`, `variant` and `param` columns.
    pub(crate) fn from_columns(family: &str, variant: &str, params: &str) -> Result<Self, String> {
        check_variant(variant)?;
        Ok(CaseId {
            family: family.parse()?,
            variant: variant.to_owned(),
            params: params.parse()?,
        })
    }
}

/// An error unless `variant` is a variant's name: lower-case letters, digits and `_`,
/// as the registry names them (and so safe in a file name or a page).
pub(crate) fn check_variant(variant: &str) -> Result<(), String> {
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    if variant.is_empty() || !variant.chars().all(valid) {
        return Err(format!(
            "`{}` is not a variant (lower-case letters, digits and `_`)",
            variant.escape_debug()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_gets_only_the_builds_it_has() {
        let all = [
            Build::TaxFree,
            Build::Default,
            Build::Rolled,
            Build::Default,
        ];
        assert_eq!(
            Setting::selected(&[Api::Cuda, Api::Wgpu], &all),
            [
                Setting::CUDA,
                Setting::Cuda(CudaBuild::Rolled),
                Setting::TAX_FREE,
                Setting::WGPU,
            ]
        );
        for setting in Setting::selected(&[Api::Wgpu, Api::Cuda], Build::ALL) {
            assert_eq!(Setting::of(setting.api(), setting.build()), Some(setting));
        }
        assert_eq!(Setting::of(Api::Wgpu, Build::Rolled), None);
        assert!(Setting::selected(&[Api::Cuda], &[Build::TaxFree, Build::Unchecked]).is_empty());
        assert!(Setting::selected(&[Api::Wgpu], &[Build::Rolled]).is_empty());
    }

    #[test]
    fn a_kernels_sizes_round_trip_and_bad_ones_are_refused() {
        let params: Params = "size=n:1024,D:768".parse().unwrap();
        let vars = vec![("n".to_owned(), 1024), ("D".to_owned(), 768)];
        assert_eq!(params.get(Key::Size), Some(&Value::Vars(vars)));
        assert_eq!(params.to_string(), "size=n:1024,D:768");
        for bad in ["size=n:", "size=1n:4", "size=n:4,", "size=n-1:4"] {
            assert!(bad.parse::<Params>().is_err(), "{bad}");
        }
    }

    #[test]
    fn text_round_trips_for_every_param_of_the_committed_results() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut seen = 0;
        for dir in ["results", "tests/fixtures"] {
            let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
                continue;
            };
            for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
                if path.extension().is_none_or(|e| e != "csv") {
                    continue;
                }
                let Ok(mut reader) = csv::Reader::from_path(&path) else {
                    continue;
                };
                let Ok(header) = reader.headers().cloned() else {
                    continue;
                };
                let column = |name| header.iter().position(|h| h == name);
                let (Some(f), Some(v), Some(p)) =
                    (column("family"), column("variant"), column("param"))
                else {
                    continue;
                };
                for record in reader.records().filter_map(|r| r.ok()) {
                    let text = format!("{}/{}/{}", &record[f], &record[v], &record[p]);
                    let id: CaseId = text.parse().unwrap();
                    assert_eq!(id.to_string(), text, "{}", path.display());
                    seen += 1;
                }
            }
        }
        assert!(seen > 500, "{seen} rows");
    }

    #[test]
    fn params_order_by_value_not_text() {
        let ids: Vec<Params> = ["offset=10", "offset=2", "offset=1"]
            .iter()
            .map(|p| p.parse().unwrap())
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        let text: Vec<String> = sorted.iter().map(Params::to_string).collect();
        assert_eq!(text, ["offset=1", "offset=2", "offset=10"]);
        let small: Params = "size=332x200".parse().unwrap();
        let large: Params = "size=4096x4096".parse().unwrap();
        assert!(small < large);
    }

    #[test]
    fn bad_text_says_why() {
        assert!(
            "copy/offset"
                .parse::<CaseId>()
                .unwrap_err()
                .contains("family/variant")
        );
        assert!(
            "nope/x/n=1"
                .parse::<CaseId>()
                .unwrap_err()
                .contains("unknown family")
        );
        assert!(
            "offset"
                .parse::<Params>()
                .unwrap_err()
                .contains("key=value")
        );
        assert!(
            "colour=1"
                .parse::<Params>()
                .unwrap_err()
                .contains("unknown key")
        );
        assert_eq!(
            params!(Offset => 1u32, Grid => "2d").to_string(),
            "offset=1;grid=2d"
        );
    }

    #[test]
    fn pairs_compare_in_any_order_and_edit_in_place() {
        let params = params!(Size => (4096u32, 4096u32), Block => (32u32, 16u32), Rows => 2u32);
        assert!(params.same_pairs(
            &params!(Rows => 2u32, Size => (4096u32, 4096u32), Block => (32u32, 16u32))
        ));
        assert!(!params.same_pairs(&params!(Size => (4096u32, 4096u32), Block => (32u32, 16u32))));
        assert_eq!(
            params.without(Key::Block).to_string(),
            "size=4096x4096;rows=2"
        );
        assert_eq!(
            params.replaced(Key::Block, (32u32, 8u32)).to_string(),
            "size=4096x4096;block=32x8;rows=2"
        );
        assert!(Params::new().is_empty() && !params.is_empty());
    }
}
