//! `starling gpu-discovery`: the GPUs the agent would find on this machine,
//! printed as HTCondor's `condor_gpu_discovery -properties -extra` prints
//! them (the first line `DetectedGPUs="GPU-a, GPU-b"`, the properties all
//! devices share in `Common`, then each device's own), so that an operator
//! checks discovery before starting the agent.

use std::path::PathBuf;
use std::process::ExitCode;

use starling_protocol::classad::{unparse_with, ClassAd, RealStyle};

use starling_agent::config::Config;
use starling_agent::machine::gpus;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The agent's configuration file, whose `[gpus]` section says how
    /// GPUs are found (default: discovery as a fresh agent does it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let found = gpus::discover(&config.gpus);
    print!("{}", report(&found));
    for why in &found.tried {
        eprintln!("gpu-discovery: {why}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The report, in `condor_gpu_discovery`'s nested form.
fn report(found: &gpus::Discovery) -> String {
    if found.gpus.is_empty() {
        return "DetectedGPUs=0\n".to_owned();
    }
    let ids: Vec<&str> = found.gpus.iter().map(|g| g.id.as_str()).collect();
    let mut out = format!("DetectedGPUs=\"{}\"\n", ids.join(", "));
    let ads: Vec<ClassAd> = found.gpus.iter().map(gpus::properties).collect();
    let (first, rest) = ads.split_first().expect("not empty");
    let shared = |name: &str| {
        let value = first.get(name);
        value.is_some()
            && rest
                .iter()
                .all(|ad| ad.get(name).zip(value).is_some_and(|(a, b)| a.same_as(b)))
    };
    // Sorted by name, as HTCondor's map prints them.
    let sorted = |ad: &ClassAd| {
        let mut items: Vec<(String, String)> = ad
            .iter()
            .map(|e| {
                (
                    e.name.as_str().to_owned(),
                    unparse_with(e.expr(), RealStyle::Short),
                )
            })
            .collect();
        items.sort_by_key(|(name, _)| name.to_ascii_lowercase());
        items
    };
    let line = |items: &[(String, String)]| {
        items
            .iter()
            .map(|(n, v)| format!("{n}={v}; "))
            .collect::<String>()
    };
    let common: Vec<(String, String)> = sorted(first)
        .into_iter()
        .filter(|(n, _)| ads.len() > 1 && shared(n))
        .collect();
    if !common.is_empty() {
        out.push_str(&format!("Common=[ {}]\n", line(&common)));
    }
    for (gpu, ad) in found.gpus.iter().zip(&ads) {
        let mut own = vec![("id".to_owned(), format!("\"{}\"", gpu.id))];
        own.extend(
            sorted(ad)
                .into_iter()
                .filter(|(n, _)| !common.iter().any(|(c, _)| c == n)),
        );
        out.push_str(&format!(
            "{}=[ {}]\n",
            gpu.id.replace(['-', '/'], "_"),
            line(&own)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_reads_as_condor_gpu_discoverys() {
        let query = include_str!("../../../node/agent/tests/fixtures/nvidia-smi/h200-query.csv");
        let mut found = gpus::parse_nvidia_smi(query).unwrap();
        found[0].cuda_version = Some(13000);
        let mut second = found[0].clone();
        second.id = "GPU-6a96bd13".to_owned();
        second.uuid = Some("6a96bd13-0000-0000-0000-000000000000".to_owned());
        second.pci_bus_id = Some("0000:00:07.0".to_owned());
        found.push(second);
        let text = report(&gpus::Discovery {
            gpus: found,
            source: gpus::Source::NvidiaSmi,
            tried: Vec::new(),
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "DetectedGPUs=\"GPU-9a8ed216, GPU-6a96bd13\"");
        assert!(lines[1].starts_with("Common=[ Capability=9.0; "), "{text}");
        assert!(lines[1].contains("DeviceName=\"NVIDIA H200\"; "), "{text}");
        assert!(lines[1].contains("MaxSupportedVersion=13000; "), "{text}");
        assert!(
            lines[2].starts_with(
                "GPU_9a8ed216=[ id=\"GPU-9a8ed216\"; DevicePciBusId=\"0000:00:06.0\"; "
            ),
            "{text}"
        );
        assert_eq!(lines.len(), 4);
        let none = gpus::Discovery {
            gpus: Vec::new(),
            source: gpus::Source::None,
            tried: Vec::new(),
        };
        assert_eq!(report(&none), "DetectedGPUs=0\n");
    }
}
