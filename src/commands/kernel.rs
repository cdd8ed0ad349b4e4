//! `membench kernel FILE.wgsl`: a user's kernel, one row per set of sizes, through the
//! plan and session `membench run` uses, into the device's kernels file; the summary
//! places each row against the device's memory levels.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::backend::wgpu::GpuContext;
use crate::error::{Error, Result};
use crate::kernel::{KernelArgs, instance, place, reflect};
use crate::measure::MIN_SAMPLES;
use crate::run::{
    Adapters, CaseSource, Destination, Ended, Given, Plan, RunSettings, check_settings,
};
use crate::suite::{Api, Build, Profile, Setting, Sizing};

/// Runs `membench kernel` as `args` ask, printing to `out`: the device's levels
/// measured first where its results file has none and no `--levels` is given.
pub fn kernel(out: &mut (dyn Write + Send), args: KernelArgs) -> Result<Ended> {
    let levels = args.levels.is_none().then(|| levels_plan(&args));
    let plan = plan(args)?;
    if let Some(levels) = levels {
        measure_levels(levels)?;
    }
    plan.execute(out)
}

/// The `levels` profile on the kernel's adapter, into the device's default results
/// file: `membench run --profile levels`.
fn levels_plan(args: &KernelArgs) -> Plan {
    Plan {
        cases: CaseSource::Suite,
        filters: Vec::new(),
        settings: RunSettings {
            quick: args.quick,
            samples: MIN_SAMPLES,
            ..RunSettings::default()
        },
        apis: vec![Api::Wgpu],
        builds: vec![Build::Default],
        timeout: Duration::from_secs(args.measuring.timeout_s),
        adapters: Adapters::One(args.adapter.clone()),
        destination: Destination::DefaultFile,
        profile: Some(Profile::Levels),
        expect: None,
        bless: None,
    }
}

/// Measures `levels` where the device's default results file shows no levels, and
/// says so.
fn measure_levels(levels: Plan) -> Result<()> {
    let Adapters::One(adapter) = &levels.adapters else {
        return Ok(());
    };
    let ctx = GpuContext::new(adapter.as_deref(), levels.timeout)?;
    let identity = crate::run::identity(&ctx.info, &ctx.identity, levels.settings.sizing());
    drop(ctx);
    let path = identity.default_path();
    let rows: Vec<crate::results::Row> = crate::results::read_existing(&path)?
        .into_iter()
        .map(|(_, row)| row)
        .collect();
    if !place::device_levels(&rows, Setting::WGPU).is_empty() {
        return Ok(());
    }
    stderrln!(
        "membench: no memory levels of this device in {}: measuring them first \
         (membench run --profile levels{})",
        crate::text::shown_path(&path),
        if levels.settings.quick {
            " --quick"
        } else {
            ""
        }
    );
    // Its summary is not this command's output; its rows are in the file.
    levels.execute(&mut std::io::sink())?;
    stderrln!(
        "membench: levels saved in {}",
        crate::text::shown_path(&path)
    );
    Ok(())
}

/// The plan of `args`: the kernel read, reflected and its flags evaluated before any
/// device is opened, so that bad input costs nothing.
pub(crate) fn plan(args: KernelArgs) -> Result<Plan> {
    let source = std::fs::read_to_string(&args.file).map_err(Error::io(&args.file))?;
    let descriptions = args.descriptions(&source).map_err(Error::Usage)?;
    for description in &descriptions {
        reflect::shape(
            &description.file,
            &description.source,
            description.entry.as_deref(),
            &description.overrides,
        )
        .map_err(Error::Usage)?;
    }
    let apis = args.measuring.apis_or(&[Api::Wgpu]);
    check_settings(&apis, &args.measuring.build)?;
    let make = move |sizing: &Sizing| {
        descriptions
            .iter()
            .map(|description| {
                let made = instance(description, sizing).map_err(Error::Usage)?;
                // The default dispatch split where n/<workgroup x> exceeds x's limit.
                let split = match (description.workgroups, made.case.workgroups) {
                    (None, [_, y, _]) if y > 1 => {
                        " (a 2-D grid: more workgroups than the device's limit in x; \
                         invocation (x, y) is element y * num_workgroups.x * <workgroup x> + x)"
                    }
                    _ => "",
                };
                stderrln!(
                    "membench: {}/{}: {} workgroups{split} of {:?}; bytes: {} ({}); {}",
                    made.experiment.name(),
                    made.case.params,
                    made.case
                        .workgroups
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join("x"),
                    made.shape.workgroup_size,
                    made.case.bytes,
                    made.bytes_source,
                    match &made.case.unverified {
                        Some(why) => format!("not verified: {why}"),
                        None => format!(
                            "verified against the interpreter, {}",
                            crate::kernel::checked::TOLERANCE
                        ),
                    }
                );
                Ok((made.experiment, made.case))
            })
            .collect()
    };
    let levels = args.levels.clone();
    let explain = move |rows: &[crate::results::Row], default: &std::path::Path| {
        place::explain(rows, levels.as_deref().unwrap_or(default))
    };
    let samples = match args.quick {
        true => args.measuring.samples.min(MIN_SAMPLES),
        false => args.measuring.samples,
    };
    Ok(Plan {
        cases: CaseSource::Given(Given {
            make: Arc::new(make),
            explain: Arc::new(explain),
        }),
        filters: Vec::new(),
        settings: RunSettings {
            quick: args.quick,
            samples,
            ..RunSettings::default()
        },
        apis,
        builds: args.measuring.build,
        timeout: Duration::from_secs(args.measuring.timeout_s),
        adapters: Adapters::One(args.adapter),
        destination: Destination::of(args.out, args.measuring.format)?,
        profile: None,
        expect: None,
        bless: None,
    })
}
