//! `chromaflow bench launches`: what a launch and a read-back cost apart from their work, on
//! the chosen backend (the yardstick for plans of many small launches).

use crate::commands::GlobalArgs;
use chromaflow::runtime::launch_cost::{launch_costs, LaunchShape};
use clap::Args;

/// Options of `chromaflow bench launches`.
#[derive(Args, Debug)]
pub struct BenchLaunchesArgs {
    /// Dependent launches per plan (2..=1000000).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(2..=1_000_000))]
    pub launches: u32,
    /// Threads per launch (1..=16777216): 64 is one workgroup; an adaptation's launches at
    /// 30,000 elements have about 30,000.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub items: u32,
    /// Alternate two kernels (stream_copy, scan_add), so every launch changes the kernel as
    /// in an adaptation's plan.
    #[arg(long)]
    pub alternate: bool,
    /// Timed plans, the median reported (1..=1000000).
    #[arg(long, default_value_t = 20, value_parser = super::bench_steps())]
    pub samples: usize,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchLaunchesArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let rt = global.runtime()?;
    let shape = LaunchShape {
        launches: args.launches as usize,
        items: args.items,
        alternate: args.alternate,
    };
    let c = launch_costs(&rt, shape, args.samples)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
        return Ok(());
    }
    println!(
        "{} dependent launches of {} threads per plan ({}) on {} ({}), median of {} plans; \
         microseconds per launch\n",
        c.launches,
        c.items,
        if c.alternate {
            "stream_copy and scan_add alternating"
        } else {
            "stream_copy"
        },
        c.device,
        c.backend,
        args.samples
    );
    println!("| grid | host: record + submit | device | submit to done |\n|---|---:|---:|---:|");
    let device = |us: f64| {
        if c.from_device {
            format!("{us:.2}")
        } else {
            "no timestamps".into()
        }
    };
    for (label, p) in [
        ("from the host", &c.direct),
        ("from a device record", &c.device_sized),
    ] {
        println!(
            "| {label} | {:.2} | {} | {:.2} |",
            p.host_us,
            device(p.device_us),
            p.wall_us
        );
    }
    println!(
        "\none launch and a 4-byte read-back, submit to data on the host: {:.1} us",
        c.round_trip_us
    );
    Ok(())
}
