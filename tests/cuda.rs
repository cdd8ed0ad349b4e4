//! Every case the CUDA backend takes (every kernel's twin, CUDA's transfer paths), at
//! quick size, through the CUDA backend on device 0 in both its builds: verified
//! against its CPU reference, then timed. Where there is no NVIDIA driver (CI, most
//! machines) the test says why and passes: the NVRTC test of the library
//! (`backend::cuda::compile`) is what CI holds the twins to.
#![cfg(feature = "cuda")]

use std::time::Duration;

use membench::backend::Backend;
use membench::backend::cuda::Cuda;
use membench::measure::{MIN_SAMPLES, Stats, SuiteSampler, gbps};
use membench::run::{self, Outcome};
use membench::suite::{CudaBuild, REGISTRY, Sizing};

#[test]
fn every_twin_matches_its_reference_on_the_device() {
    let cuda = match Cuda::open(0, Duration::from_secs(60)) {
        Ok(cuda) => cuda,
        Err(error) => {
            eprintln!("CUDA device tests skipped: {error}");
            return;
        }
    };
    eprintln!("CUDA device 0: {}", cuda.device.report());
    let sizing = Sizing::nominal(true);
    let mut sampler = SuiteSampler::new(MIN_SAMPLES);
    let (mut measured, mut failures) = (0, Vec::new());
    for cuda in [
        cuda.with_build(CudaBuild::Default),
        cuda.with_build(CudaBuild::Rolled),
    ] {
        let build = cuda.setting().build();
        for experiment in REGISTRY.iter().filter(|e| cuda.takes(e)) {
            for case in (experiment.cases)(&sizing) {
                let id = format!("{} ({build})", case.id(experiment));
                let data = (case.data)();
                match run::measure_case(&cuda, experiment, &case, MIN_SAMPLES, &mut sampler, &data)
                {
                    Outcome::Measured(timing) => {
                        let median = Stats::of(&timing.samples_ns).map_or(0.0, |s| s.median);
                        eprintln!("ok {id}: {:.1} GB/s", gbps(case.bytes, median));
                        measured += 1;
                    }
                    Outcome::Skipped(why) => eprintln!("skipped {id}: {why}"),
                    Outcome::Failed(why) => failures.push(format!("{id}: {why}")),
                    Outcome::Predicted => failures.push(format!("{id}: not run")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(measured > 200, "{measured} cases measured");
}
