//! `membench kernel`'s flags, and the [`Description`]s they give: one per value of the
//! `--axis` flags (their product), every expression evaluated with that row's sizes.

use std::path::PathBuf;

use super::expr::{self, Division, Vars};
use super::instance::{Description, Fill, Init, Verify, interpretable};
use crate::run::MeasureArgs;

/// What `membench kernel` takes.
#[derive(clap::Args, Clone, Debug)]
pub struct KernelArgs {
    /// The WGSL file of the kernel.
    pub file: PathBuf,
    /// The compute entry point (default: the only one).
    #[arg(long)]
    pub entry: Option<String>,
    /// A size variable, NAME=EXPR (repeatable): EXPR has whole numbers, sizes, `+ - *
    /// /`, `^` (power) and parentheses; `/` must divide exactly. E.g. `--size n=2^24`.
    #[arg(long, value_name = "NAME=EXPR")]
    pub size: Vec<String>,
    /// A size measured at several values, one row each: NAME=A..B (the powers of two
    /// from A to B) or NAME=A,B,C (repeatable; several axes give their product).
    #[arg(long, value_name = "NAME=VALUES")]
    pub(crate) axis: Vec<String>,
    /// The element count of a storage binding's runtime-sized array (also as a
    /// struct's last member), NAME=EXPR with NAME the WGSL variable (repeatable).
    #[arg(long, value_name = "NAME=EXPR")]
    pub buffer: Vec<String>,
    /// A storage binding's first contents, NAME=random|zeros|ones|ramp (default
    /// random: floats in [-1, 1), integers in [0, 2^16); ramp: each element its index).
    #[arg(long, value_name = "NAME=INIT")]
    pub init: Vec<String>,
    /// A uniform field, NAME.FIELD=EXPR (NAME=EXPR for a uniform that is no struct):
    /// vector fields take comma-separated components, float fields decimals
    /// (repeatable). Every field must be set. A fixed-size storage binding of scalars
    /// and vectors (a shape kept in a storage buffer) is set the same way.
    #[arg(long, value_name = "NAME.FIELD=EXPR")]
    pub uniform: Vec<String>,
    /// A pipeline-overridable constant, NAME=VALUE (repeatable).
    #[arg(long = "override", value_name = "NAME=VALUE")]
    pub overrides: Vec<String>,
    /// Workgroups of the dispatch, X[,Y[,Z]], each an EXPR whose `/` rounds up
    /// (default: n/<workgroup x> where a size `n` is given, as a 2-D grid where x
    /// would exceed the device's limit).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub workgroups: Option<String>,
    /// The bytes the kernel must move (read plus written), an EXPR; default: the
    /// distinct bytes the interpreter sees it read and write.
    #[arg(long, value_name = "EXPR")]
    pub bytes: Option<String>,
    /// Verify at a smaller size, NAME=EXPR replacing that size (repeatable): a row of
    /// its own, verified against the interpreter; the rows at the sizes asked for say
    /// where they were verified. Default, where the kernel has more than 2^22
    /// invocations (seconds in the interpreter): every size halved together until it
    /// has at most that many, said in the row's note.
    #[arg(long, value_name = "NAME=EXPR", conflicts_with = "no_verify")]
    pub(crate) verify_size: Vec<String>,
    /// Skip the check against the interpreter (the rows say `verified` false).
    #[arg(long)]
    pub(crate) no_verify: bool,
    /// The rows' variant (default: the file's stem).
    #[arg(long)]
    pub name: Option<String>,
    /// The memory levels to place the kernel against: a results file with the
    /// hierarchy rows (default: this device's default results file, where the
    /// `levels` profile is measured first if it shows none).
    #[arg(long, value_name = "CSV")]
    pub levels: Option<PathBuf>,
    /// Fewer samples (for CI and software adapters); the kernel's sizes stay as given.
    #[arg(long)]
    pub quick: bool,
    /// Adapter by index, name substring, GPU UUID or PCI bus id (see `membench
    /// devices`); default: the best one, or `WGPU_ADAPTER_NAME`.
    #[arg(long)]
    pub adapter: Option<String>,
    /// Results CSV; default: the device's kernels file beside its `run` results,
    /// results/<device>[-<short uuid>]-<backend>[-quick]-kernels.csv. A file of suite
    /// rows is refused. `-` prints the rows to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The measuring flags `run` has too.
    #[command(flatten)]
    pub measuring: MeasureArgs,
}

/// `NAME=VALUE`, split; an error names the flag.
fn pair<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), String> {
    text.split_once('=')
        .map(|(name, value)| (name.trim(), value.trim()))
        .filter(|(name, value)| !name.is_empty() && !value.is_empty())
        .ok_or_else(|| format!("--{flag} {text}: expected NAME=VALUE"))
}

/// An `--axis` value list: `A..B` (powers of two) or `A,B,C`.
fn axis_values(text: &str) -> Result<Vec<u64>, String> {
    let no_vars = Vars::new();
    let value = |t: &str| expr::eval(t, &no_vars, Division::Exact);
    if let Some((from, to)) = text.split_once("..") {
        let (from, to) = (value(from)?, value(to)?);
        if from == 0 || !from.is_power_of_two() || !to.is_power_of_two() || from > to {
            return Err(format!(
                "`{text}`: A..B takes powers of two, A at most B (or list the values A,B,C)"
            ));
        }
        return Ok(std::iter::successors(Some(from), |v| v.checked_mul(2))
            .take_while(|&v| v <= to)
            .collect());
    }
    text.split(',').map(value).collect()
}

impl KernelArgs {
    /// The kernel's descriptions, one per row of sizes, from its `source`.
    pub(crate) fn descriptions(&self, source: &str) -> Result<Vec<Description>, String> {
        let file = self.file.display().to_string();
        let name = match &self.name {
            Some(name) => name.clone(),
            None => self
                .file
                .file_stem()
                .map(|s| s.to_string_lossy().to_lowercase().replace('-', "_"))
                .unwrap_or_default(),
        };
        let mut axes: Vec<(String, Vec<u64>)> = Vec::new();
        for text in &self.axis {
            let (var, values) = pair("axis", text)?;
            let values = axis_values(values).map_err(|why| format!("--axis {var}: {why}"))?;
            axes.push((var.to_owned(), values));
        }
        let overrides = self
            .overrides
            .iter()
            .map(|text| {
                let (name, value) = pair("override", text)?;
                let value: f64 = value
                    .parse()
                    .map_err(|_| format!("--override {text}: `{value}` is not a number"))?;
                Ok((name.to_owned(), value))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let fills = self
            .init
            .iter()
            .map(|text| {
                let (name, init) = pair("init", text)?;
                let init = <Init as clap::ValueEnum>::from_str(init, true).map_err(|_| {
                    format!("--init {text}: `{init}` is none of random, zeros, ones, ramp")
                })?;
                Ok((name.to_owned(), Fill::Init(init)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let base = Description {
            name,
            file,
            source: source.to_owned(),
            entry: self.entry.clone(),
            overrides,
            fills,
            verify: match self.no_verify {
                true => Verify::Skip("--no-verify".to_owned()),
                false => Verify::Interpreter,
            },
            ..Description::default()
        };
        let smaller = self
            .verify_size
            .iter()
            .map(|text| pair("verify-size", text).map(|(n, e)| (n.to_owned(), e.to_owned())))
            .collect::<Result<Vec<_>, String>>()?;
        for (name, _) in &smaller {
            let known = self
                .size
                .iter()
                .chain(&self.axis)
                .any(|t| t.split_once('=').is_some_and(|(n, _)| n.trim() == name));
            if !known {
                return Err(format!(
                    "--verify-size {name}: no --size or --axis `{name}`"
                ));
            }
        }
        let mut descriptions: Vec<Description> = Vec::new();
        for point in product(&axes) {
            let full = self.at(&base, &point, &[])?;
            if smaller.is_empty() {
                match self.chosen(&base, &point, &full)? {
                    Some(small) => {
                        if !descriptions.iter().any(|d| d.sizes == small.sizes) {
                            descriptions.push(small.clone());
                        }
                        descriptions.push(Description {
                            verify: Verify::Chosen(Box::new(small)),
                            ..full
                        });
                    }
                    None => descriptions.push(full),
                }
                continue;
            }
            let small = self.at(&base, &point, &smaller)?;
            if !descriptions.iter().any(|d| d.sizes == small.sizes) {
                descriptions.push(small.clone());
            }
            if full.sizes != small.sizes {
                descriptions.push(Description {
                    verify: Verify::Smaller(Box::new(small)),
                    ..full
                });
            }
        }
        Ok(descriptions)
    }

    /// Where `full` is to be verified but has more invocations than the interpreter
    /// runs unasked: the largest power-of-two scaling of every size (each halved
    /// together) the interpreter runs unasked ([`interpretable`]); `None` where it needs none or no
    /// size halves evenly (the row then says to give --verify-size).
    fn chosen(
        &self,
        base: &Description,
        point: &[(String, u64)],
        full: &Description,
    ) -> Result<Option<Description>, String> {
        let needs = !self.no_verify && !interpretable(full);
        if !needs {
            return Ok(None);
        }
        for halvings in 1..u64::BITS {
            let divisor = 1u64 << halvings;
            let scaled: Option<Vec<(String, String)>> = full
                .sizes
                .iter()
                .map(|(name, value)| {
                    (value % divisor == 0 && *value >= divisor)
                        .then(|| (name.clone(), (value / divisor).to_string()))
                })
                .collect();
            let Some(scaled) = scaled else {
                return Ok(None);
            };
            let small = self.at(base, point, &scaled)?;
            if interpretable(&small) {
                return Ok(Some(small));
            }
        }
        Ok(None)
    }

    /// The description at one point of the axes: the sizes (those `replaced` names by
    /// its expression instead), then every expression.
    fn at(
        &self,
        base: &Description,
        point: &[(String, u64)],
        replaced: &[(String, String)],
    ) -> Result<Description, String> {
        let mut vars = Vars::new();
        let mut sizes: Vec<(String, u64)> = Vec::new();
        let replacement = |name: &str| replaced.iter().find(|(n, _)| n == name).map(|(_, t)| t);
        for text in &self.size {
            let (name, text) = pair("size", text)?;
            let text = replacement(name).map_or(text, String::as_str);
            let value = expr::eval(text, &vars, Division::Exact)
                .map_err(|why| format!("--size {name}: {why}"))?;
            vars.insert(name.to_owned(), value);
            sizes.retain(|(n, _)| n != name);
            sizes.push((name.to_owned(), value));
        }
        for (name, value) in point {
            let value = match replacement(name) {
                Some(text) => expr::eval(text, &vars, Division::Exact)
                    .map_err(|why| format!("--verify-size {name}: {why}"))?,
                None => *value,
            };
            vars.insert(name.clone(), value);
            sizes.retain(|(n, _)| n != name);
            sizes.push((name.clone(), value));
        }
        let eval = |flag: &str, name: &str, text: &str, division| {
            expr::eval(text, &vars, division).map_err(|why| format!("--{flag} {name}: {why}"))
        };
        let counts = self
            .buffer
            .iter()
            .map(|text| {
                let (name, value) = pair("buffer", text)?;
                Ok((
                    name.to_owned(),
                    eval("buffer", name, value, Division::Exact)?,
                ))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let uniforms = self
            .uniform
            .iter()
            .map(|text| {
                let (name, value) = pair("uniform", text)?;
                let components = value
                    .split(',')
                    .map(|c| match c.trim().parse::<f64>() {
                        Ok(number) => Ok(number),
                        Err(_) => eval("uniform", name, c, Division::Exact).map(|v| v as f64),
                    })
                    .collect::<Result<Vec<f64>, String>>()?;
                Ok((name.to_owned(), components))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let workgroups = match &self.workgroups {
            Some(text) => {
                let counts = text
                    .split(',')
                    .map(|c| {
                        let count = eval("workgroups", "", c, Division::Up)?;
                        u32::try_from(count).map_err(|_| {
                            format!("--workgroups: {count} workgroups in one dimension")
                        })
                    })
                    .collect::<Result<Vec<u32>, String>>()?;
                match counts.as_slice() {
                    [x] => Some([*x, 1, 1]),
                    [x, y] => Some([*x, *y, 1]),
                    [x, y, z] => Some([*x, *y, *z]),
                    _ => return Err(format!("--workgroups {text}: expected X[,Y[,Z]]")),
                }
            }
            None => None,
        };
        let bytes = match &self.bytes {
            Some(text) => Some(eval("bytes", "", text, Division::Exact)?),
            None => None,
        };
        Ok(Description {
            sizes,
            counts,
            uniforms,
            workgroups,
            bytes,
            ..base.clone()
        })
    }
}

/// Every combination of the axes' values, the first axis slowest; one empty point
/// where there are none.
fn product(axes: &[(String, Vec<u64>)]) -> Vec<Vec<(String, u64)>> {
    let mut points = vec![Vec::new()];
    for (name, values) in axes {
        points = points
            .into_iter()
            .flat_map(|point: Vec<(String, u64)>| {
                values.iter().map(move |&value| {
                    let mut point = point.clone();
                    point.push((name.clone(), value));
                    point
                })
            })
            .collect();
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: KernelArgs,
    }

    fn args(flags: &[&str]) -> KernelArgs {
        let mut argv = vec!["membench", "dir/Sax-Py.wgsl"];
        argv.extend_from_slice(flags);
        Cli::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn sizes_axes_and_flags_become_one_description_per_row() {
        let args = args(&[
            "--size",
            "D=768",
            "--axis",
            "n=1024..4096",
            "--buffer",
            "x=n*D/256",
            "--uniform",
            "meta.shape=1,D,-2",
            "--uniform",
            "meta.scale=0.5",
            "--workgroups",
            "n/1000,2",
            "--override",
            "WG=64",
            "--init",
            "x=ramp",
        ]);
        let rows = args.descriptions("source").unwrap();
        assert_eq!(rows.len(), 3);
        let last = &rows[2];
        assert_eq!(last.name, "sax_py");
        assert_eq!(last.sizes, [("D".to_owned(), 768), ("n".to_owned(), 4096)]);
        assert_eq!(last.counts, [("x".to_owned(), 4096 * 3)]);
        assert_eq!(last.workgroups, Some([5, 2, 1]));
        assert_eq!(last.uniforms[0].1, [1.0, 768.0, -2.0]);
        assert_eq!(last.uniforms[1].1, [0.5]);
        assert_eq!(last.overrides, [("WG".to_owned(), 64.0)]);
        assert_eq!(last.fills, [("x".to_owned(), Fill::Init(Init::Ramp))]);
    }

    #[test]
    fn the_measuring_flags_are_runs_own() {
        #[derive(clap::Parser)]
        struct RunCli {
            #[command(flatten)]
            args: crate::run::RunArgs,
        }
        let kernel = <Cli as clap::CommandFactory>::command();
        let run = <RunCli as clap::CommandFactory>::command();
        let help = |command: &clap::Command, flag: &str| {
            command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag))
                .and_then(|a| a.get_help().map(ToString::to_string))
        };
        for flag in ["format", "api", "build", "samples", "timeout-s"] {
            assert!(help(&kernel, flag).is_some(), "--{flag}");
            assert_eq!(help(&kernel, flag), help(&run, flag), "--{flag}");
        }
        let given = args(&[
            "--samples",
            "12",
            "--build",
            "unchecked",
            "--timeout-s",
            "3",
        ]);
        assert_eq!(given.measuring.samples, 12);
        assert_eq!(given.measuring.build, [crate::suite::Build::Unchecked]);
        assert_eq!(given.measuring.timeout_s, 3);
        // A kernel has no CUDA twin: wgpu unless asked.
        let wgpu = [crate::suite::Api::Wgpu];
        assert_eq!(args(&[]).measuring.apis_or(&wgpu), wgpu);
    }

    #[test]
    fn a_kernel_too_large_to_interpret_is_verified_at_its_sizes_halved_together() {
        let source = "@group(0) @binding(0) var<storage, read_write> y: array<f32>;
            @compute @workgroup_size(256)
            fn main(@builtin(global_invocation_id) id: vec3<u32>) { y[id.x] = 1.0; }";
        let rows = args(&["--size", "n=2^24", "--size", "m=12", "--buffer", "y=n"])
            .descriptions(source)
            .unwrap();
        assert_eq!(rows.len(), 2);
        // 2^24 invocations, a quarter of them within 2^22.
        assert_eq!(
            rows[0].sizes,
            [("n".to_owned(), 1 << 22), ("m".to_owned(), 3)]
        );
        assert_eq!(rows[0].counts, [("y".to_owned(), 1 << 22)]);
        assert!(matches!(&rows[1].verify, Verify::Chosen(small) if small.sizes == rows[0].sizes));
        // Few invocations over many elements (each would walk a row): halved by the
        // elements, 2^26 to within 2^24.
        let rows = args(&["--size", "n=2^26", "--buffer", "y=n", "--workgroups", "1"])
            .descriptions(source)
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].counts, [("y".to_owned(), 1 << 24)]);
        // Small enough, or not to be verified: one row.
        let one = |flags: &[&str]| args(flags).descriptions(source).unwrap().len();
        assert_eq!(one(&["--size", "n=2^22", "--buffer", "y=n"]), 1);
        assert_eq!(
            one(&["--size", "n=2^24", "--buffer", "y=n", "--no-verify"]),
            1
        );
        // A size that does not halve evenly that far: the row says to give --verify-size.
        assert_eq!(
            one(&["--size", "n=2^24", "--size", "m=3", "--buffer", "y=n"]),
            1
        );
    }

    #[test]
    fn bad_flags_say_which_and_why() {
        let error = |flags: &[&str]| args(flags).descriptions("").unwrap_err();
        assert_eq!(
            error(&["--size", "n=10", "--buffer", "x=n/3"]),
            "--buffer x: `n/3`: 10 / 3 is not a whole number"
        );
        assert_eq!(error(&["--size", "n"]), "--size n: expected NAME=VALUE");
        assert_eq!(
            error(&["--axis", "n=3..8"]),
            "--axis n: `3..8`: A..B takes powers of two, A at most B (or list the values A,B,C)"
        );
        assert_eq!(
            error(&["--init", "x=noise"]),
            "--init x=noise: `noise` is none of random, zeros, ones, ramp"
        );
        assert_eq!(
            error(&["--workgroups", "1,2,3,4"]),
            "--workgroups 1,2,3,4: expected X[,Y[,Z]]"
        );
    }
}
