//! What one launch of the prefix sum's first kernel (`scan_blocks`, the kernel under every
//! adaptation scan) costs on the device, by size, next to a copy of up to 30,000 items (or of
//! up to the second argument's count) before and after it: every launch timed on its own
//! (`Runtime::set_time_each_launch`; on CUDA in one graph), medians of 50 plans. The scan is
//! launched twice in a row, so a second launch shows whether the first paid for the change of
//! kernel; a larger copy before it shows whether a launch's time takes in what the launch
//! before it wrote. The last column times the four launches as one plan, as a run issues them
//! (no timestamps between them). It does not compare the backends launch for launch: on wgpu
//! the first copy and the scan share no buffer, so no barrier orders them and they may
//! overlap, where a CUDA graph captured from one stream orders every launch.
//!
//! `cargo run --release --example scan_cost -- [wgpu|cuda] [copy items]` (CUDA needs
//! `--features cuda`).

use chromaflow::args;
use chromaflow::error::{Error, Result};
use chromaflow::runtime::scan::PrefixSum;
use chromaflow::runtime::{median, BackendKind, GpuOptions, ItemRange, PlanBuilder, Runtime};

fn main() -> Result<()> {
    let kind = match std::env::args().nth(1).as_deref() {
        Some("cuda") => BackendKind::Cuda,
        _ => BackendKind::Wgpu,
    };
    let copy_items: u32 = match std::env::args().nth(2) {
        Some(arg) => arg
            .parse()
            .map_err(|_| Error::Invalid(format!("copy items '{arg}': expected a count")))?,
        None => 30_000,
    };
    let rt = Runtime::new(kind, &GpuOptions::default())?;
    rt.set_time_each_launch(true);
    let copy = rt.kernel("stream_copy", &[])?;
    println!(
        "{} ({}), microseconds per launch\n",
        rt.name(),
        rt.kind().name()
    );
    println!(
        "| items scanned | copy | scan | scan again | copy | the four as one plan |\n\
         |---:|---:|---:|---:|---:|---:|"
    );
    for n in [1024u32, 8192, 32768, 131072, 1 << 20] {
        let values: Vec<u32> = (0..n).map(|i| i % 3).collect();
        let input = rt.upload("scan cost input", &values)?;
        let output = rt.zeroed::<u32>("scan cost output", n as usize)?;
        let copied = n.min(copy_items);
        let a = rt.zeroed::<[f32; 4]>("scan cost a", copied as usize)?;
        let b = rt.zeroed::<[f32; 4]>("scan cost b", copied as usize)?;
        let scan = PrefixSum::new(&rt, &input, &output, n)?;
        let mut plan = PlanBuilder::new();
        plan.segment("scan cost");
        plan.launch(&copy, &args![a, b], ItemRange::all(copied));
        scan.record_blocks(&mut plan, n)?;
        scan.record_blocks(&mut plan, n)?;
        plan.launch(&copy, &args![b, a], ItemRange::all(copied));
        let timed = rt.prepare(&plan)?;
        rt.run(&timed, 1)?;
        let mut launches: Vec<Vec<f64>> = vec![Vec::new(); timed.len()];
        for _ in 0..50 {
            for (k, (_, s)) in rt.time(&timed, 1)?.entries().enumerate() {
                launches[k].push(1e6 * s);
            }
        }
        // The same four launches timed as a run issues them, with no timestamps between.
        rt.set_time_each_launch(false);
        let whole = rt.prepare(&plan)?;
        rt.run(&whole, 1)?;
        let mut plans = Vec::new();
        for _ in 0..50 {
            plans.push(1e6 * rt.time(&whole, 1)?.sum());
        }
        rt.set_time_each_launch(true);
        let us: Vec<String> = launches
            .iter()
            .chain([&plans])
            .map(|v| format!("{:.2}", median(v)))
            .collect();
        println!("| {n} | {} |", us.join(" | "));
    }
    Ok(())
}
