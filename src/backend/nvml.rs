//! NVIDIA's management library (NVML), loaded at run time where the driver has it: a
//! GPU's UUID and PCIe link, its clocks, power limit, ECC and MIG state for
//! `membench devices`, and the clocks, power, temperature and throttle reasons while a
//! case runs. Without NVML every answer is empty and one line says why.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::error::NvmlError;

use crate::results::NO_THROTTLE;

/// NVML, loaded once; or why it cannot be.
fn nvml() -> Result<&'static Nvml, &'static str> {
    static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();
    NVML.get_or_init(|| {
        Nvml::init().map_err(|error| match error {
            // Its own text repeats the loader's message at length.
            NvmlError::LibloadingError(_) => "NVML unavailable: libnvidia-ml.so.1 not found (no \
                                              NVIDIA driver on the loader path): no telemetry"
                .to_owned(),
            error => format!("NVML unavailable ({error}): no telemetry"),
        })
    })
    .as_ref()
    .map_err(String::as_str)
}

/// Why NVML cannot be used here, if it cannot: said once per run.
pub(crate) fn unavailable() -> Option<&'static str> {
    nvml().err()
}

/// One GPU as NVML knows it.
#[derive(Debug)]
pub struct Gpu {
    device: nvml_wrapper::Device<'static>,
    pci_bus_id: String,
}

/// The NVIDIA GPU at PCI bus `pci_bus_id` (`0000:07:00.0`, as wgpu and CUDA write it);
/// `None` where there is none or NVML is not there.
pub(crate) fn gpu_at(pci_bus_id: &str) -> Option<Gpu> {
    if pci_bus_id.is_empty() {
        return None;
    }
    let device = nvml().ok()?.device_by_pci_bus_id(pci_bus_id).ok()?;
    Some(Gpu {
        device,
        pci_bus_id: pci_bus_id.to_owned(),
    })
}

/// The GPU's identity as NVML gives it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NvmlIdentity {
    /// `GPU-…`, as `nvidia-smi` prints it.
    pub uuid: String,
    /// The link as it runs now: `gen5x16`.
    pub(crate) pcie_link: String,
}

/// The clocks, power, temperature and throttle reasons at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Reading {
    sm_mhz: Option<u32>,
    mem_mhz: Option<u32>,
    power_w: Option<f64>,
    temperature_c: Option<u32>,
    throttle: Option<ThrottleReasons>,
}

/// What the readings of one case come to: each figure's range, the reasons seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Telemetry {
    pub(crate) sm_clock_mhz: Option<(u32, u32)>,
    pub(crate) mem_clock_mhz: Option<(u32, u32)>,
    pub(crate) power_w_max: Option<f64>,
    pub(crate) temperature_c_max: Option<u32>,
    /// Every reason seen, `+` between them; `none` where there was none but idle.
    pub(crate) throttle: Option<String>,
}

impl Telemetry {
    /// Whether a reason other than idleness held the clocks down.
    pub(crate) fn throttled(&self) -> bool {
        self.throttle.as_deref().is_some_and(|t| t != NO_THROTTLE)
    }

    /// Folds `reading` in.
    fn add(&mut self, reading: &Reading) {
        let widen = |range: Option<(u32, u32)>, value: Option<u32>| match (range, value) {
            (Some((low, high)), Some(v)) => Some((low.min(v), high.max(v))),
            (None, Some(v)) => Some((v, v)),
            (range, None) => range,
        };
        self.sm_clock_mhz = widen(self.sm_clock_mhz, reading.sm_mhz);
        self.mem_clock_mhz = widen(self.mem_clock_mhz, reading.mem_mhz);
        self.power_w_max = max_of(self.power_w_max, reading.power_w, f64::max);
        self.temperature_c_max = max_of(self.temperature_c_max, reading.temperature_c, u32::max);
        if let Some(reasons) = reading.throttle {
            let seen = self
                .throttle
                .as_deref()
                .map_or_else(ThrottleReasons::empty, parse_reasons);
            self.throttle = Some(reasons_text(seen | reasons));
        }
    }
}

/// The larger of two optional values.
fn max_of<T: Copy>(a: Option<T>, b: Option<T>, max: fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(max(a, b)),
        (a, b) => a.or(b),
    }
}

/// The reasons by the names the `throttle` column uses.
const REASONS: &[(ThrottleReasons, &str)] = &[
    (
        ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
        "applications_clocks",
    ),
    (ThrottleReasons::SW_POWER_CAP, "sw_power_cap"),
    (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown"),
    (ThrottleReasons::SYNC_BOOST, "sync_boost"),
    (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw_thermal"),
    (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw_thermal"),
    (ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN, "hw_power_brake"),
    (ThrottleReasons::DISPLAY_CLOCK_SETTING, "display_clocks"),
];

/// `reasons` as the column writes them; idleness is no throttle.
fn reasons_text(reasons: ThrottleReasons) -> String {
    let names: Vec<&str> = REASONS
        .iter()
        .filter(|(reason, _)| reasons.contains(*reason))
        .map(|(_, name)| *name)
        .collect();
    if names.is_empty() {
        NO_THROTTLE.to_owned()
    } else {
        names.join("+")
    }
}

/// The reasons `text` (as [`reasons_text`] writes them) names.
fn parse_reasons(text: &str) -> ThrottleReasons {
    text.split('+')
        .filter_map(|name| REASONS.iter().find(|(_, n)| *n == name))
        .fold(ThrottleReasons::empty(), |all, (reason, _)| all | *reason)
}

impl Gpu {
    /// Its UUID and link.
    pub fn identity(&self) -> NvmlIdentity {
        let link = self
            .device
            .current_pcie_link_gen()
            .ok()
            .zip(self.device.current_pcie_link_width().ok());
        NvmlIdentity {
            uuid: self.device.uuid().unwrap_or_default(),
            pcie_link: link.map_or_else(String::new, |(generation, width)| {
                format!("gen{generation}x{width}")
            }),
        }
    }

    /// What `membench devices` says of it: clocks now and at most, the power limit,
    /// ECC and MIG.
    pub fn report(&self) -> String {
        let device = &self.device;
        let mhz = |clock: Clock| {
            let now = device.clock_info(clock).ok();
            let max = device.max_clock_info(clock).ok();
            match (now, max) {
                (Some(now), Some(max)) => format!("{now}/{max} MHz"),
                _ => "unknown".to_owned(),
            }
        };
        let power = device
            .enforced_power_limit()
            .map_or("unknown".to_owned(), |mw| format!("{} W", mw / 1000));
        let ecc = device.is_ecc_enabled().map_or("unknown".to_owned(), |ecc| {
            if ecc.currently_enabled { "on" } else { "off" }.to_owned()
        });
        let mig = device.mig_mode().map_or("unsupported".to_owned(), |mig| {
            if mig.current == 1 { "on" } else { "off" }.to_owned()
        });
        let identity = self.identity();
        format!(
            "NVML: {}, PCIe {}, SM clock {} (now/max), memory clock {}, power limit {power}, \
             ECC {ecc}, MIG {mig}",
            identity.uuid,
            if identity.pcie_link.is_empty() {
                "unknown"
            } else {
                &identity.pcie_link
            },
            mhz(Clock::SM),
            mhz(Clock::Memory),
        )
    }

    fn read(&self) -> Reading {
        let device = &self.device;
        Reading {
            sm_mhz: device.clock_info(Clock::SM).ok(),
            mem_mhz: device.clock_info(Clock::Memory).ok(),
            power_w: device.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
            temperature_c: device.temperature(TemperatureSensor::Gpu).ok(),
            throttle: device
                .current_throttle_reasons()
                .ok()
                .map(|r| r - ThrottleReasons::GPU_IDLE - ThrottleReasons::NONE),
        }
    }
}

/// How often a case's telemetry is read while it runs: often enough to see a clock
/// dip of a few milliseconds, rarely enough to cost nothing on a spare core.
const INTERVAL: Duration = Duration::from_millis(10);

/// Readings taken on a thread of their own while a case runs.
#[derive(Debug)]
pub(crate) struct Watch {
    /// Dropped to stop the readings: the thread wakes at once, not at its next reading.
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
    folded: Arc<Mutex<Telemetry>>,
}

impl Watch {
    /// Starts reading `gpu` every [`INTERVAL`], once at once; `None` where NVML
    /// cannot find it again for the thread.
    pub(crate) fn start(gpu: &Gpu) -> Option<Watch> {
        let (stop, stopped) = mpsc::channel();
        let folded = Arc::new(Mutex::new(Telemetry::default()));
        let device = gpu_at(&gpu.pci_bus_id)?;
        let thread_folded = Arc::clone(&folded);
        let thread = std::thread::spawn(move || {
            let mut last = false;
            loop {
                let reading = device.read();
                thread_folded
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .add(&reading);
                if last {
                    break;
                }
                last = stopped.recv_timeout(INTERVAL) != Err(RecvTimeoutError::Timeout);
            }
        });
        Some(Watch {
            stop,
            thread,
            folded,
        })
    }

    /// Stops reading (after one last reading) and says what the readings came to.
    pub(crate) fn finish(self) -> Telemetry {
        drop(self.stop);
        // A reading thread that panicked leaves what it had read.
        let _ = self.thread.join();
        self.folded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_fold_into_ranges_and_reasons() {
        let mut telemetry = Telemetry::default();
        for (sm, reasons) in [
            (1980, ThrottleReasons::empty()),
            (1755, ThrottleReasons::SW_POWER_CAP),
            (1900, ThrottleReasons::HW_SLOWDOWN),
        ] {
            telemetry.add(&Reading {
                sm_mhz: Some(sm),
                mem_mhz: Some(2619),
                power_w: Some(f64::from(sm) / 4.0),
                temperature_c: Some(40 + sm / 100),
                throttle: Some(reasons),
            });
        }
        assert_eq!(telemetry.sm_clock_mhz, Some((1755, 1980)));
        assert_eq!(telemetry.mem_clock_mhz, Some((2619, 2619)));
        assert_eq!(telemetry.power_w_max, Some(495.0));
        assert_eq!(telemetry.temperature_c_max, Some(59));
        assert_eq!(
            telemetry.throttle.as_deref(),
            Some("sw_power_cap+hw_slowdown")
        );
        assert!(telemetry.throttled());
        let mut idle = Telemetry::default();
        idle.add(&Reading {
            throttle: Some(ThrottleReasons::empty()),
            ..Reading::default()
        });
        assert_eq!(idle.throttle.as_deref(), Some(NO_THROTTLE));
        assert!(!idle.throttled());
        assert!(!Telemetry::default().throttled());
    }

    #[test]
    fn without_nvml_there_is_no_gpu_and_a_reason() {
        if unavailable().is_some() {
            assert!(gpu_at("0000:07:00.0").is_none());
        }
        assert!(gpu_at("").is_none());
    }
}
