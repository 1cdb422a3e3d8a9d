//! The machine's GPUs, found as HTCondor's `condor_gpu_discovery` finds
//! them, and described in the machine ad with HTCondor's attribute names.
//!
//! Discovery tries NVML first: the library is loaded at run time, so an
//! agent on a machine without NVIDIA's driver runs as before and simply
//! has no GPUs. Where NVML cannot be loaded, `nvidia-smi` is asked (its
//! CSV query output, parsed by [`parse_nvidia_smi`]). Devices declared in
//! `[[gpus.device]]` replace discovery: GPUs NVML does not see, and tests.
//!
//! Each device is known by HTCondor's id, `GPU-` and the first eight hex
//! digits of its UUID (`GPU-9a8ed216`), which CUDA also accepts in
//! `CUDA_VISIBLE_DEVICES`. Its properties form a small ad (`DeviceName`,
//! `Capability`, `GlobalMemoryMb`, `DriverVersion`...), which
//! `require_gpus` is evaluated against.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use starling_protocol::classad::{ClassAd, Expr, Name, Value};

use crate::config;

/// How long `nvidia-smi` may take before discovery gives up on it.
pub const NVIDIA_SMI_TIMEOUT: Duration = Duration::from_secs(20);

/// The most output of `nvidia-smi` read (a machine with [`config::MAX_GPUS`]
/// devices prints a few KiB).
pub const MAX_NVIDIA_SMI_OUTPUT: usize = 256 * 1024;

/// The fields asked of `nvidia-smi --query-gpu`, in the order
/// [`parse_nvidia_smi`] reads them.
pub const NVIDIA_SMI_FIELDS: &str =
    "index,uuid,name,pci.bus_id,memory.total,compute_cap,clocks.max.sm,ecc.mode.current";

/// One GPU and what is known of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gpu {
    /// HTCondor's id: `GPU-9a8ed216`, or the id declared.
    pub id: String,
    /// The device's full UUID without the `GPU-` prefix.
    pub uuid: Option<String>,
    /// `DeviceName`: `NVIDIA H200`.
    pub name: Option<String>,
    /// `Capability`: the CUDA compute capability, `9.0`.
    pub capability: Option<f64>,
    /// `GlobalMemoryMb`.
    pub memory_mb: Option<u64>,
    /// The CUDA version the driver supports as NVML gives it, 12020 for
    /// 12.2: written as `MaxSupportedVersion`, and as `DriverVersion`
    /// (`12.2`) the way HTCondor writes it ([`driver_version`]).
    pub cuda_version: Option<u32>,
    /// `DevicePciBusId`: `0000:00:06.0`.
    pub pci_bus_id: Option<String>,
    /// `ClockMhz`: the highest SM clock.
    pub clock_mhz: Option<f64>,
    /// `ECCEnabled`.
    pub ecc: Option<bool>,
    /// `DevicePath` (Starling's): the device file (`/dev/nvidia0`), which
    /// jobs not given the device cannot open.
    pub device_path: Option<std::path::PathBuf>,
}

/// Where the GPUs came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Nvml,
    NvidiaSmi,
    Declared,
    /// Discovery is off, or found nothing.
    None,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Nvml => "nvml",
            Source::NvidiaSmi => "nvidia-smi",
            Source::Declared => "declared",
            Source::None => "none",
        }
    }
}

/// What discovery found, and why it found nothing where it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovery {
    pub gpus: Vec<Gpu>,
    pub source: Source,
    /// Why each way tried found no device (no library, no program...),
    /// for the agent's log.
    pub tried: Vec<String>,
}

/// Finds the machine's GPUs as `[gpus]` says. Blocks (loads a library,
/// may run `nvidia-smi`): keep it off the async threads.
pub fn discover(settings: &config::Gpus) -> Discovery {
    let mut tried = Vec::new();
    if !settings.device.is_empty() {
        return Discovery {
            gpus: settings.device.iter().map(declared).collect(),
            source: Source::Declared,
            tried,
        };
    }
    let way = settings.discovery.as_str();
    if matches!(way, "auto" | "nvml") {
        match nvml() {
            Ok(gpus) => {
                return Discovery {
                    gpus,
                    source: Source::Nvml,
                    tried,
                }
            }
            Err(e) => tried.push(format!("nvml: {e}")),
        }
    }
    if matches!(way, "auto" | "nvidia-smi") {
        match nvidia_smi(&settings.nvidia_smi) {
            Ok(gpus) => {
                return Discovery {
                    gpus,
                    source: Source::NvidiaSmi,
                    tried,
                }
            }
            Err(e) => tried.push(format!("{}: {e}", settings.nvidia_smi.display())),
        }
    }
    Discovery {
        gpus: Vec::new(),
        source: Source::None,
        tried,
    }
}

/// The machine's devices after discovery ran again (a reload): those
/// `found`, then each device of `before` that a claim holds (`held`) and
/// that was not found again: it stays assigned until its job ends. The
/// second list names those kept so.
pub fn rediscovered(before: &[Gpu], found: Vec<Gpu>, held: &[String]) -> (Vec<Gpu>, Vec<String>) {
    let mut gpus = found;
    let mut kept = Vec::new();
    for old in before {
        if held.contains(&old.id) && !gpus.iter().any(|g| g.id == old.id) {
            kept.push(old.id.clone());
            gpus.push(old.clone());
        }
    }
    (gpus, kept)
}

/// What discovery finds with `settings`, as the agent's start finds it:
/// only declared devices where the machine is not read (`probe_given`,
/// in-process testnets).
pub fn discover_as_configured(settings: &config::Gpus, probe_given: bool) -> Discovery {
    if probe_given {
        return Discovery {
            gpus: settings.device.iter().map(declared).collect(),
            source: if settings.device.is_empty() {
                Source::None
            } else {
                Source::Declared
            },
            tried: Vec::new(),
        };
    }
    discover(settings)
}

/// A device declared in `[[gpus.device]]`.
pub fn declared(d: &config::DeclaredGpu) -> Gpu {
    Gpu {
        id: d.id.clone(),
        name: d.name.clone(),
        capability: d.capability,
        memory_mb: d.memory_mb,
        cuda_version: d.driver_version.and_then(cuda_version_of_real),
        device_path: d.path.clone(),
        ..Gpu::default()
    }
}

/// HTCondor's id of a device from its UUID (`GPU-9a8ed216-f0b3-...` or
/// without the prefix): `GPU-` and the first eight hex digits.
pub fn short_id(uuid: &str) -> Option<String> {
    let bare = uuid.trim().trim_start_matches("GPU-");
    let head: String = bare.chars().take_while(|c| *c != '-').collect();
    (head.len() >= 8 && head.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| format!("GPU-{}", &head[..8]))
}

fn nvml() -> Result<Vec<Gpu>, String> {
    use nvml_wrapper::enum_wrappers::device::Clock;
    use nvml_wrapper::Nvml;
    // The versioned name is what the driver installs; the bare one only
    // comes with development packages.
    let nvml = Nvml::builder()
        .lib_path(std::ffi::OsStr::new("libnvidia-ml.so.1"))
        .init()
        .or_else(|_| Nvml::init())
        .map_err(|e| e.to_string())?;
    let count = nvml.device_count().map_err(|e| e.to_string())?;
    let cuda = nvml
        .sys_cuda_driver_version()
        .ok()
        .and_then(|v| u32::try_from(v).ok());
    let mut gpus = Vec::new();
    for i in 0..count.min(config::MAX_GPUS as u32) {
        let device = nvml.device_by_index(i).map_err(|e| e.to_string())?;
        let uuid = device.uuid().map_err(|e| e.to_string())?;
        let Some(id) = short_id(&uuid) else {
            return Err(format!("device {i} has no usable UUID ({uuid:?})"));
        };
        gpus.push(Gpu {
            id,
            uuid: Some(uuid.trim_start_matches("GPU-").to_owned()),
            name: device.name().ok(),
            capability: device
                .cuda_compute_capability()
                .ok()
                .map(|c| f64::from(c.major) + f64::from(c.minor) / 10.0),
            memory_mb: device.memory_info().ok().map(|m| m.total / (1024 * 1024)),
            cuda_version: cuda,
            pci_bus_id: device.pci_info().ok().map(|p| short_bus_id(&p.bus_id)),
            clock_mhz: device.max_clock_info(Clock::SM).ok().map(f64::from),
            ecc: device.is_ecc_enabled().ok().map(|e| e.currently_enabled),
            device_path: device
                .minor_number()
                .ok()
                .map(|m| std::path::PathBuf::from(format!("/dev/nvidia{m}"))),
        });
    }
    Ok(gpus)
}

/// `DriverVersion` as HTCondor's `condor_gpu_discovery` writes it from
/// NVML's CUDA version: `"%d.%d"` of `v / 1000` and `v % 100`, so 12020
/// (CUDA 12.2) is `12.20`, the real 12.2.
pub fn driver_version(v: u32) -> f64 {
    format!("{}.{}", v / 1000, v % 100)
        .parse()
        .unwrap_or(f64::from(v / 1000))
}

/// A CUDA version written as a real (`12.2`, as `[[gpus.device]]`
/// declares it and `DriverVersion` reads) as NVML gives it: 12020.
fn cuda_version_of_real(d: f64) -> Option<u32> {
    if !(d.is_finite() && (0.0..1_000_000.0).contains(&d)) {
        return None;
    }
    let major = d.trunc();
    let minor = ((d - major) * 10.0).round();
    Some(major as u32 * 1000 + minor as u32 * 10)
}

/// `00000000:00:06.0` as HTCondor writes it: `0000:00:06.0`.
fn short_bus_id(id: &str) -> String {
    match id.split_once(':') {
        Some((domain, rest)) if domain.len() > 4 => {
            format!("{}:{rest}", &domain[domain.len() - 4..])
        }
        _ => id.to_owned(),
    }
}

fn nvidia_smi(program: &Path) -> Result<Vec<Gpu>, String> {
    let query = run(
        program,
        &[
            &format!("--query-gpu={NVIDIA_SMI_FIELDS}"),
            "--format=csv,noheader,nounits",
        ],
    )?;
    let mut gpus = parse_nvidia_smi(&query)?;
    for gpu in &mut gpus {
        gpu.device_path = gpu.pci_bus_id.as_deref().and_then(device_file);
    }
    // The CUDA version is only in the banner of the plain report.
    if let Some(cuda) = run(program, &[])
        .ok()
        .as_deref()
        .and_then(parse_cuda_version)
    {
        for gpu in &mut gpus {
            gpu.cuda_version = Some(cuda);
        }
    }
    Ok(gpus)
}

/// The device file of the NVIDIA GPU at PCI address `bus` (`0000:00:06.0`),
/// from the minor number the driver reports for it.
fn device_file(bus: &str) -> Option<std::path::PathBuf> {
    let info = std::fs::read_to_string(format!(
        "/proc/driver/nvidia/gpus/{}/information",
        bus.to_ascii_lowercase()
    ))
    .ok()?;
    parse_device_minor(&info).map(|m| std::path::PathBuf::from(format!("/dev/nvidia{m}")))
}

/// The `Device Minor:` of the driver's information about one GPU.
pub fn parse_device_minor(information: &str) -> Option<u32> {
    information.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "Device Minor")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

/// Runs `program args`, bounded in time and output.
fn run(program: &Path, args: &[&str]) -> Result<String, String> {
    use std::io::Read;
    let mut child = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut out = child.stdout.take().ok_or("no output")?;
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut out)
            .take(MAX_NVIDIA_SMI_OUTPUT as u64 + 1)
            .read_to_end(&mut text);
        text
    });
    let deadline = std::time::Instant::now() + NVIDIA_SMI_TIMEOUT;
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "gave no answer in {} s",
                    NVIDIA_SMI_TIMEOUT.as_secs()
                ));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let text = reader.join().map_err(|_| "its output could not be read")?;
    if text.len() > MAX_NVIDIA_SMI_OUTPUT {
        return Err(format!("printed more than {MAX_NVIDIA_SMI_OUTPUT} bytes"));
    }
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    String::from_utf8(text).map_err(|_| "printed text that is not UTF-8".to_owned())
}

/// Reads `nvidia-smi --query-gpu=`[`NVIDIA_SMI_FIELDS`]` --format=csv,noheader,nounits`:
/// one line per device. A line that cannot be read fails the whole
/// answer, naming it: a half-read machine would hand out devices it
/// does not know.
pub fn parse_nvidia_smi(text: &str) -> Result<Vec<Gpu>, String> {
    let mut gpus = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if gpus.len() == config::MAX_GPUS {
            return Err(format!("more than {} devices", config::MAX_GPUS));
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 6 {
            return Err(format!(
                "line {}: {} fields where {} were asked for: {line:?}",
                n + 1,
                fields.len(),
                NVIDIA_SMI_FIELDS.split(',').count()
            ));
        }
        let known = |i: usize| {
            fields
                .get(i)
                .copied()
                .filter(|f| !f.is_empty() && !f.starts_with('[') && *f != "N/A")
        };
        let Some(id) = known(1).and_then(short_id) else {
            return Err(format!("line {}: no device UUID in {line:?}", n + 1));
        };
        gpus.push(Gpu {
            id,
            uuid: known(1).map(|u| u.trim_start_matches("GPU-").to_owned()),
            name: known(2).map(str::to_owned),
            pci_bus_id: known(3).map(short_bus_id),
            memory_mb: known(4).and_then(|m| m.parse().ok()),
            capability: known(5).and_then(|c| c.parse().ok()),
            clock_mhz: known(6).and_then(|c| c.parse().ok()),
            ecc: known(7).and_then(|e| match e {
                "Enabled" => Some(true),
                "Disabled" => Some(false),
                _ => None,
            }),
            cuda_version: None,
            device_path: None,
        });
    }
    Ok(gpus)
}

/// The CUDA version from the banner of `nvidia-smi`'s plain report
/// (`... CUDA Version: 12.2 |`), as NVML gives it: 12020.
pub fn parse_cuda_version(text: &str) -> Option<u32> {
    let at = text.find("CUDA Version:")? + "CUDA Version:".len();
    let rest = text[at..].trim_start();
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (major, minor) = number.split_once('.').unwrap_or((&number, "0"));
    let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
    (minor < 100).then_some(major.checked_mul(1000)? + minor * 10)
}

/// A device's properties as an ad, with HTCondor's names (its `Id` is
/// added where the ad is published).
pub fn properties(gpu: &Gpu) -> ClassAd {
    let mut ad = ClassAd::new();
    let mut put = |name: &str, value: Value| {
        if let Ok(n) = Name::new(name) {
            ad.insert(n, Expr::Literal(value));
        }
    };
    if let Some(n) = &gpu.name {
        put("DeviceName", Value::string(n.as_str()));
    }
    if let Some(c) = gpu.capability {
        put("Capability", Value::Real(c));
    }
    if let Some(m) = gpu.memory_mb {
        put(
            "GlobalMemoryMb",
            Value::Int(i64::try_from(m).unwrap_or(i64::MAX)),
        );
    }
    if let Some(v) = gpu.cuda_version {
        put("DriverVersion", Value::Real(driver_version(v)));
        put("MaxSupportedVersion", Value::Int(i64::from(v)));
    }
    if let Some(p) = &gpu.pci_bus_id {
        put("DevicePciBusId", Value::string(p.as_str()));
    }
    if let Some(u) = &gpu.uuid {
        put("DeviceUuid", Value::string(u.as_str()));
    }
    if let Some(c) = gpu.clock_mhz {
        put("ClockMhz", Value::Real(c));
    }
    if let Some(e) = gpu.ecc {
        put("ECCEnabled", Value::Bool(e));
    }
    if let Some(p) = &gpu.device_path {
        put("DevicePath", Value::string(p.to_string_lossy().as_ref()));
    }
    ad
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nvidia-smi --query-gpu=`[`NVIDIA_SMI_FIELDS`]` --format=csv,noheader,nounits`
    /// and plain `nvidia-smi` on a machine with one NVIDIA H200 (driver
    /// 580.159.04, CUDA 13.0), captured 2026-11-26.
    const H200: &str = include_str!("../../tests/fixtures/nvidia-smi/h200-query.csv");
    const H200_BANNER: &str = include_str!("../../tests/fixtures/nvidia-smi/h200-plain.txt");
    /// The banner of plain `nvidia-smi` on a CUDA 12.2 driver (535.x).
    const H100_CUDA_12_2_BANNER: &str =
        include_str!("../../tests/fixtures/nvidia-smi/h100-cuda-12.2-plain.txt");

    #[test]
    fn ids_are_htcondors_short_uuids() {
        assert_eq!(
            short_id("GPU-9a8ed216-3854-e861-579d-9a1df0118bfc").as_deref(),
            Some("GPU-9a8ed216")
        );
        assert_eq!(
            short_id("9a8ed216-3854-e861-579d-9a1df0118bfc").as_deref(),
            Some("GPU-9a8ed216")
        );
        assert_eq!(short_id("GPU-xyz"), None);
        assert_eq!(short_id(""), None);
        assert_eq!(
            starling_policies::slots::device_attribute("GPU-9a8ed216"),
            "GPUs_GPU_9a8ed216"
        );
    }

    #[test]
    fn a_real_nvidia_smi_answer_is_read() {
        let gpus = parse_nvidia_smi(H200).unwrap();
        assert_eq!(gpus.len(), 1);
        let g = &gpus[0];
        assert_eq!(g.id, "GPU-9a8ed216");
        assert_eq!(g.name.as_deref(), Some("NVIDIA H200"));
        assert_eq!(g.capability, Some(9.0));
        assert_eq!(g.memory_mb, Some(143771));
        assert_eq!(g.pci_bus_id.as_deref(), Some("0000:00:06.0"));
        assert_eq!((g.clock_mhz, g.ecc), (Some(1980.0), Some(true)));
        assert_eq!(parse_cuda_version(H200_BANNER), Some(13000));
    }

    #[test]
    fn a_garbled_answer_is_refused_naming_the_line() {
        let e = parse_nvidia_smi("0, GPU-9a8ed216-f0b3, NVIDIA H200, 0:0:6.0, 1, 9.0\nnonsense\n")
            .unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = parse_nvidia_smi("0, N/A, NVIDIA H200, 0:0:6.0, 1, 9.0\n").unwrap_err();
        assert!(e.contains("no device UUID"), "{e}");
        let many = "0, GPU-9a8ed216-f0b3, x, y, 1, 9.0\n".repeat(config::MAX_GPUS + 1);
        assert!(parse_nvidia_smi(&many).unwrap_err().contains("more than"));
        assert_eq!(parse_nvidia_smi("").unwrap(), Vec::new());
    }

    #[test]
    fn the_device_file_comes_from_the_drivers_minor_number() {
        let info = "Model: \t\t NVIDIA H200\nIRQ:   \t\t 37\nGPU UUID: \t GPU-9a8ed216\n\
                    Video BIOS: \t 96.00.a5.00.1a\nBus Type: \t PCIe\nDevice Minor: \t 3\n";
        assert_eq!(parse_device_minor(info), Some(3));
        assert_eq!(parse_device_minor("Model: x\n"), None);
    }

    #[test]
    fn cuda_versions_read_as_htcondor_writes_them() {
        // condor_gpu_discovery on a CUDA 12.2 driver: DriverVersion=12.20,
        // MaxSupportedVersion=12020.
        assert_eq!(parse_cuda_version(H100_CUDA_12_2_BANNER), Some(12020));
        let ad = properties(&Gpu {
            cuda_version: Some(12020),
            ..Gpu::default()
        });
        assert!(
            matches!(ad.get("DriverVersion"), Some(Expr::Literal(Value::Real(v))) if *v == 12.2),
            "{:?}",
            ad.get("DriverVersion")
        );
        assert!(
            matches!(
                ad.get("MaxSupportedVersion"),
                Some(Expr::Literal(Value::Int(12020)))
            ),
            "{:?}",
            ad.get("MaxSupportedVersion")
        );
        assert_eq!(driver_version(13000), 13.0);
        assert_eq!(driver_version(11040), 11.4);
        assert_eq!(parse_cuda_version("CUDA Version: 11.8 |"), Some(11080));
        assert_eq!(parse_cuda_version("CUDA Version: 13 |"), Some(13000));
        assert_eq!(parse_cuda_version("CUDA Version: N/A |"), None);
        // A declared device's DriverVersion means the same.
        assert_eq!(cuda_version_of_real(12.2), Some(12020));
        assert_eq!(cuda_version_of_real(13.0), Some(13000));
        assert_eq!(cuda_version_of_real(f64::NAN), None);
        assert_eq!(short_bus_id("00000000:00:06.0"), "0000:00:06.0");
    }

    /// A device on a CUDA 12.2 driver asks for at least the runtime a job
    /// names: `gpus_minimum_runtime = 12.5` does not match it, 12.1 does.
    #[test]
    fn a_minimum_runtime_above_the_drivers_cuda_does_not_match() {
        use starling_policies::slots::{device_fits, Device};
        use starling_protocol::submit::gpus::{job_attributes, COMMANDS};
        let device = Device {
            id: "GPU-00000001".to_owned(),
            properties: properties(&Gpu {
                cuda_version: parse_cuda_version(H100_CUDA_12_2_BANNER),
                ..Gpu::default()
            }),
        };
        let matches = |runtime: &str| {
            // The job as `condor_submit` writes `request_gpus = 1` and
            // `gpus_minimum_runtime = <runtime>`.
            let values: Vec<Option<String>> = COMMANDS
                .iter()
                .map(|c| match *c {
                    "request_gpus" => Some("1".to_owned()),
                    "gpus_minimum_runtime" => Some(runtime.to_owned()),
                    _ => None,
                })
                .collect();
            let mut job = ClassAd::new();
            job_attributes(&mut job, &values, None).unwrap();
            device_fits(&job, &device, 0)
        };
        assert!(!matches("12.5"));
        assert!(matches("12.1"));
        assert!(matches("12.2"));
    }

    #[test]
    fn discovery_again_keeps_a_held_device_that_vanished() {
        let gpu = |id: &str| Gpu {
            id: id.to_owned(),
            ..Gpu::default()
        };
        let before = [gpu("GPU-a"), gpu("GPU-b"), gpu("GPU-c")];
        let found = vec![gpu("GPU-a"), gpu("GPU-d")];
        // GPU-b is held and gone: kept; GPU-c is free and gone: dropped.
        let (now, kept) = rediscovered(&before, found.clone(), &["GPU-b".to_owned()]);
        let ids: Vec<&str> = now.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["GPU-a", "GPU-d", "GPU-b"]);
        assert_eq!(kept, ["GPU-b"]);
        // A held device still found is not counted twice.
        let (now, kept) = rediscovered(&before, found, &["GPU-a".to_owned()]);
        assert_eq!(now.len(), 2);
        assert!(kept.is_empty());
    }

    #[test]
    fn declared_devices_replace_discovery() {
        let settings = config::Gpus {
            discovery: "nvidia-smi".to_owned(),
            nvidia_smi: "/nonexistent/nvidia-smi".into(),
            foreign_max: None,
            device: vec![config::DeclaredGpu {
                id: "GPU-00000001".to_owned(),
                capability: Some(8.0),
                ..Default::default()
            }],
        };
        let d = discover(&settings);
        assert_eq!(d.source, Source::Declared);
        assert_eq!(d.gpus[0].id, "GPU-00000001");
        let none = discover(&config::Gpus {
            device: Vec::new(),
            ..settings
        });
        assert_eq!(none.source, Source::None);
        assert!(
            none.tried[0].contains("/nonexistent/nvidia-smi"),
            "{:?}",
            none.tried
        );
    }
}
