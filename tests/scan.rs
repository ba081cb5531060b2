//! The two-launch exclusive prefix sum (src/runtime/scan.rs) against its CPU reference, exactly,
//! on wgpu (lavapipe in CI): sizes at every boundary of the block (SCAN_BLOCK items) and of
//! the last workgroup's loop over the block totals (SCAN_BLOCK totals per pass), random values
//! and values whose sum wraps u32, and one prepared scan reused with changing inputs and
//! counts (the ticket must be back at 0 after every scan, or the next one names no last
//! workgroup, or the wrong one, and its total and offsets are wrong).

use chromaflow::runtime::scan::{
    exclusive_scan_cpu, gpu_exclusive_scan, scan_launches, PrefixSum, SCAN_BLOCK,
};
use chromaflow::runtime::{Buffer, PlanBuilder, Runtime};

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

/// splitmix64: reproducible pseudo-random words without a dependency.
fn random_words(n: usize, seed: u64, bound: u64) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % bound) as u32
        })
        .collect()
}

fn wrapping_total(values: &[u32]) -> u32 {
    values.iter().fold(0u32, |a, &v| a.wrapping_add(v))
}

/// GPU = CPU for the scan and the total, naming the first differing index.
fn assert_scan(rt: &Runtime, values: &[u32], what: &str) {
    let (gpu, total) = gpu_exclusive_scan(rt, values).expect("scan");
    let cpu = exclusive_scan_cpu(values);
    if let Some(i) = (0..values.len()).find(|&i| gpu[i] != cpu[i]) {
        panic!(
            "{what}, n = {}: out[{i}] = {} on the GPU, {} on the CPU",
            values.len(),
            gpu[i],
            cpu[i]
        );
    }
    assert_eq!(
        total,
        wrapping_total(values),
        "{what}, n = {}: total",
        values.len()
    );
}

const B: usize = SCAN_BLOCK as usize;

#[test]
fn scan_matches_the_cpu_at_every_block_boundary() {
    let rt = rt();
    let sizes = [
        1,
        2,
        B - 1,
        B,
        B + 1,
        2 * B,
        7 * B + 3,
        // The last workgroup's loop: exactly one full pass of block totals, then more.
        B * B - 1,
        B * B,
        B * B + 1,
        B * B + B + 1,
    ];
    for (k, &n) in sizes.iter().enumerate() {
        assert_scan(&rt, &random_words(n, k as u64, 1000), "random in [0, 1000)");
    }
}

#[test]
fn scan_of_millions_with_wrapping_sums_matches_the_cpu() {
    let rt = rt();
    // A few million items: three passes of the last workgroup's loop.
    let n = 3_000_017;
    assert_scan(&rt, &random_words(n, 7, 1000), "random in [0, 1000)");
    // Every value near 2^32: the running sums wrap about every item, in every block total
    // and in the carry between the passes over the block totals.
    let big = random_words(n, 8, 1 << 32);
    assert!(big.iter().map(|&v| v as u64).sum::<u64>() > 1 << 40);
    assert_scan(&rt, &big, "random u32");
    assert_scan(&rt, &vec![u32::MAX; B * B + 5], "all u32::MAX");
}

#[test]
fn a_prepared_scan_runs_again_with_new_values_and_counts() {
    let rt = rt();
    let capacity = 5 * B as u32 * B as u32 / 2;
    let input = rt
        .zeroed::<u32>("scan input", capacity as usize)
        .expect("input");
    let output = rt
        .zeroed::<u32>("scan output", capacity as usize)
        .expect("output");
    let scan = PrefixSum::new(&rt, &input, &output, capacity).expect("scan");
    // Same counts back to back (a ticket left at the block count would name no last
    // workgroup), counts up and down (one left over would name the wrong one), and 0.
    let counts = [
        capacity,
        capacity,
        3,
        B as u32 + 1,
        B as u32 * B as u32 + 1,
        0,
        B as u32,
        capacity,
    ];
    for (run, &n) in counts.iter().enumerate() {
        let values = random_words(capacity as usize, 100 + run as u64, 1 << 32);
        rt.write(&input, 0, &values).expect("write input");
        let mut plan = PlanBuilder::new();
        scan.record_first(&mut plan, n).expect("record");
        assert_eq!(plan.launches().len(), scan_launches(n));
        assert!(scan_launches(n) <= 2);
        rt.run(&rt.prepare(&plan).expect("prepare"), 1)
            .expect("run");
        let head = &values[..n as usize];
        let gpu = rt.read::<u32>(&output, 0, n as usize).expect("read");
        assert!(
            gpu == exclusive_scan_cpu(head),
            "run {run}, n = {n}: the scan differs from the CPU's"
        );
        let total = rt.read::<u32>(scan.total(), 0, 1).expect("total")[0];
        assert_eq!(total, wrapping_total(head), "run {run}, n = {n}: total");
    }
    // Twice in one plan: the second scan of the plan sees the first one's reset ticket.
    let values = random_words(capacity as usize, 200, 1000);
    rt.write(&input, 0, &values).expect("write input");
    let mut plan = PlanBuilder::new();
    scan.record(&mut plan);
    scan.record(&mut plan);
    rt.run(&rt.prepare(&plan).expect("prepare"), 3)
        .expect("run");
    let gpu = rt.read::<u32>(&output, 0, capacity as usize).expect("read");
    assert!(gpu == exclusive_scan_cpu(&values));
    assert_eq!(
        rt.read::<u32>(scan.total(), 0, 1).expect("total")[0],
        wrapping_total(&values)
    );
}

#[test]
fn a_scan_asked_for_more_than_its_capacity_is_an_error() {
    let rt = rt();
    let input = rt.zeroed::<u32>("scan input", 10).expect("input");
    let output = rt.zeroed::<u32>("scan output", 10).expect("output");
    let scan = PrefixSum::new(&rt, &input, &output, 10).expect("scan");
    let err = scan
        .record_first(&mut PlanBuilder::new(), 11)
        .expect_err("11 > 10")
        .to_string();
    assert!(err.contains("prepared for 10 items, asked for 11"), "{err}");
}

/// The parts: word k of the sums is the prefix at k stride (1 <= k <= (n - 1) / stride) after
/// launch 1 alone, next to the total in word 0, and launch 1 plus the block offsets is the
/// scan; strides below, at and above the block, one that leaves a single part, and none.
#[test]
fn parts_give_the_prefix_at_every_stride_after_the_first_launch() {
    let rt = rt();
    let n = 3 * B as u32 * 41 + 17;
    let values = random_words(n as usize, 300, 1 << 32);
    let cpu = exclusive_scan_cpu(&values);
    let input = rt.upload("scan input", &values).expect("input");
    for stride in [
        1,
        7,
        B as u32 - 1,
        B as u32,
        B as u32 + 1,
        41 * B as u32,
        n - 1,
        n,
    ] {
        let output = rt.zeroed::<u32>("scan output", n as usize).expect("output");
        let scan = PrefixSum::with_parts(&rt, &input, &output, n, stride).expect("scan");
        let mut plan = PlanBuilder::new();
        scan.record_blocks(&mut plan, n).expect("record");
        assert_eq!(plan.launches().len(), 1);
        rt.run(&rt.prepare(&plan).expect("prepare"), 1)
            .expect("run");
        let parts = ((n - 1) / stride) as usize;
        let sums = rt.read::<u32>(scan.total(), 0, 1 + parts).expect("sums");
        assert_eq!(sums[0], wrapping_total(&values), "stride {stride}: total");
        for k in 1..=parts {
            assert_eq!(
                sums[k],
                cpu[k * stride as usize],
                "stride {stride}: part {k}"
            );
        }
        // Launch 1's output plus the block offsets is the scan.
        let local = rt.read::<u32>(&output, 0, n as usize).expect("output");
        let offsets = rt
            .read::<u32>(scan.block_offsets(), 0, (n as usize).div_ceil(B))
            .expect("offsets");
        let added: Vec<u32> = (0..n as usize)
            .map(|i| local[i].wrapping_add(offsets[i / B]))
            .collect();
        assert!(added == cpu, "stride {stride}: output + block offsets");
    }
}

/// The kernels' scan block is the runtime's, defined once in the dispatch include of both
/// backends, and no kernel defines one of its own that could differ; the scan's two launches
/// and the kernels that add its block offsets themselves (the adaptation's readers of a scan,
/// amr_radix) include it.
#[test]
fn every_kernel_uses_the_runtimes_scan_block() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let read = |path: &str| std::fs::read_to_string(root.join(path)).expect(path);
    let want = format!("const SCAN_BLOCK: u32 = {SCAN_BLOCK}u;");
    assert!(
        read("common/dispatch.wgsl").contains(&want),
        "dispatch.wgsl lacks '{want}'"
    );
    let want = format!("#define SCAN_BLOCK {SCAN_BLOCK}u");
    assert!(
        read("cuda/common/dispatch.cuh").contains(&want),
        "dispatch.cuh lacks '{want}'"
    );
    for dir in ["", "cuda/"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("shaders") {
            let path = entry.expect("entry").path();
            if !path.is_file() {
                continue;
            }
            let src = std::fs::read_to_string(&path).expect("source");
            assert!(
                !src.contains("const SCAN_BLOCK") && !src.contains("#define SCAN_BLOCK"),
                "{} defines its own SCAN_BLOCK",
                path.display()
            );
        }
    }
    for stem in [
        "common/scan_blocks",
        "scan_add",
        "amr_scan",
        "amr_coarsen",
        "amr_refine",
        "amr_compact",
        "amr_faces",
        "amr_radix",
    ] {
        for (path, include) in [
            (
                format!("{stem}.wgsl"),
                "// #include \"common/dispatch.wgsl\"",
            ),
            (cuda_twin(stem), "// #include \"common/dispatch.cuh\""),
        ] {
            let src = read(&path);
            assert!(
                src.contains("SCAN_BLOCK") && src.contains(include),
                "{path} does not use the shared SCAN_BLOCK"
            );
        }
    }
}

/// n random values (bounded by 1000, from `seed`) uploaded, with two zeroed buffers of n words
/// for a scan of them (`middle`) and a scan of that (`output`).
struct ScanOfScan {
    values: Vec<u32>,
    input: Buffer,
    middle: Buffer,
    output: Buffer,
}

fn scan_of_scan(rt: &Runtime, n: u32, seed: u64) -> ScanOfScan {
    let values = random_words(n as usize, seed, 1000);
    ScanOfScan {
        input: rt.upload("scan input", &values).expect("input"),
        middle: rt.zeroed::<u32>("scan middle", n as usize).expect("middle"),
        output: rt.zeroed::<u32>("scan output", n as usize).expect("output"),
        values,
    }
}

/// A plan appended to another runs after it, as one plan: a scan of a scan, each recorded in
/// a plan of its own, gives the CPU's scan of the scan (in the wrong order the second scan
/// would read a zeroed buffer).
#[test]
fn an_appended_plan_runs_after_the_plan_it_follows() {
    let rt = rt();
    let n = 5 * B as u32 + 3;
    let ScanOfScan {
        values,
        input,
        middle,
        output,
    } = scan_of_scan(&rt, n, 500);
    let first = PrefixSum::new(&rt, &input, &middle, n).expect("first scan");
    let second = PrefixSum::new(&rt, &middle, &output, n).expect("second scan");
    let mut plan = PlanBuilder::new();
    first.record(plan.segment("first"));
    let mut then = PlanBuilder::new();
    second.record(then.segment("second"));
    let launches = plan.launches().len() + then.launches().len();
    plan.append(&then);
    assert_eq!(plan.launches().len(), launches);
    rt.run(&rt.prepare(&plan).expect("prepare"), 1)
        .expect("run");
    let gpu = rt.read::<u32>(&output, 0, n as usize).expect("read");
    assert!(gpu == exclusive_scan_cpu(&exclusive_scan_cpu(&values)));
}

/// Kernels built at once (`Runtime::kernels`, on several threads) come back in the order
/// asked, a bad one is an error naming it (not a panic or a missing kernel), and the scan
/// whose kernels were built that way, then taken from the runtime's cache by the prefix sum,
/// still equals the CPU.
#[test]
fn kernels_built_at_once_are_in_order_and_serve_the_scan() {
    let rt = rt();
    let built = rt
        .kernels([
            ("scan_add", &[]),
            ("stream_copy", &[]),
            ("scan_blocks", &[]),
            ("reduce_min", &[]),
        ])
        .expect("kernels");
    let stems: Vec<&str> = built.iter().map(|k| k.stem()).collect();
    assert_eq!(
        stems,
        ["scan_add", "stream_copy", "scan_blocks", "reduce_min"]
    );
    let err = rt
        .kernels([
            ("scan_add", &[]),
            ("scan_blocks", &[("NO_SUCH_CONSTANT", 1.0)]),
        ])
        .err()
        .expect("a constant the kernel lacks")
        .to_string();
    assert!(
        err.contains("NO_SUCH_CONSTANT") && err.contains("scan_blocks"),
        "{err}"
    );
    let values = random_words(3 * SCAN_BLOCK as usize + 17, 5, 1000);
    assert_scan(&rt, &values, "after Runtime::kernels");
}

/// The CUDA twin of shader `stem`: a kernel's `.cu`, a common include's `.cuh`.
fn cuda_twin(stem: &str) -> String {
    match stem.strip_prefix("common/") {
        Some(include) => format!("cuda/common/{include}.cuh"),
        None => format!("cuda/{stem}.cu"),
    }
}

/// Timing every launch on its own (`Runtime::set_time_each_launch`, `bench amr --per-launch`)
/// gives one entry per launch per repeat, labelled "<segment>: <kernel>" with the repeat
/// number of a kernel within its segment, and the plan still computes what it computes;
/// switched off, the entries are the segments again. A timing that kept the segments, or
/// labels that merged two launches of one kernel, fails the counts or the labels.
#[test]
fn timing_each_launch_labels_every_launch_by_segment_and_kernel() {
    let rt = rt();
    let n = 3 * B as u32 + 5;
    let ScanOfScan {
        values,
        input,
        middle,
        output,
    } = scan_of_scan(&rt, n, 600);
    let first = PrefixSum::new(&rt, &input, &middle, n).expect("first scan");
    let again = PrefixSum::new(&rt, &input, &middle, n).expect("the first scan again");
    let second = PrefixSum::new(&rt, &middle, &output, n).expect("second scan");
    let mut plan = PlanBuilder::new();
    first.record(plan.segment("first"));
    again.record(&mut plan);
    second.record(plan.segment("second"));
    let plan = rt.prepare(&plan).expect("prepare");
    let segments = rt.time(&plan, 2).expect("time by segment");
    assert_eq!(segments.labels, ["first", "second"]);
    assert_eq!(segments.seconds.len(), 4);

    rt.set_time_each_launch(true);
    let launches = rt.time(&plan, 2);
    rt.set_time_each_launch(false);
    let launches = launches.expect("time each launch");
    assert_eq!(
        launches.labels,
        [
            "first: scan_blocks",
            "first: scan_add",
            "first: scan_blocks 2",
            "first: scan_add 2",
            "second: scan_blocks",
            "second: scan_add",
        ]
    );
    assert_eq!(launches.seconds.len(), 12);
    assert!(
        launches.seconds.iter().all(|s| s.is_finite() && *s >= 0.0),
        "{launches:?}"
    );
    let gpu = rt.read::<u32>(&output, 0, n as usize).expect("read");
    assert!(gpu == exclusive_scan_cpu(&exclusive_scan_cpu(&values)));
    assert_eq!(rt.time(&plan, 1).expect("time again").labels.len(), 2);
}

/// A scan of nothing with parts (n = 0) names no part: the total is 0 and the parts a scan
/// before it left stay as they were. The parts are stored by the threads of the block holding
/// their items, from the block's last item down; with n = 0 that item is -1, and a kernel
/// that does not stop there loops through 2^32 / stride parts writing zeros.
#[test]
fn a_scan_of_nothing_with_parts_stores_no_part() {
    let rt = rt();
    let values: Vec<u32> = (1..=10).collect();
    let input = rt.upload("scan input", &values).expect("input");
    let output = rt
        .zeroed::<u32>("scan output", values.len())
        .expect("output");
    let scan = PrefixSum::with_parts(&rt, &input, &output, 10, 3).expect("scan");
    let run = |n: u32| {
        let mut plan = PlanBuilder::new();
        scan.record_blocks(&mut plan, n).expect("record");
        rt.run(&rt.prepare(&plan).expect("prepare"), 1)
            .expect("run");
        rt.read::<u32>(scan.total(), 0, 4).expect("sums")
    };
    let cpu = exclusive_scan_cpu(&values);
    assert_eq!(run(10), [55, cpu[3], cpu[6], cpu[9]]);
    assert_eq!(run(0), [0, cpu[3], cpu[6], cpu[9]]);
}

/// The scans run workgroups of the runtime's SCAN_THREADS threads on both backends: the WGSL
/// entry points declare it, the runtime reads it from them (so a launch of blocks x
/// SCAN_THREADS threads is one workgroup per block, and CUDA's blocks are as wide), the CUDA
/// twin defines the same width, and threads x items per thread is the block in both. The
/// adaptation's near-empty per-item kernels and the two that number the faces by workgroups of
/// slots (amr_geometry, amr_faces) run WIDE_WORKGROUP_SIZE, every other kernel
/// WORKGROUP_SIZE (or one thread). A device-sized launch of a scan is an
/// error: the device's launch records are gridded for WORKGROUP_SIZE.
#[test]
fn scan_kernels_run_workgroups_of_the_runtimes_scan_threads() {
    use chromaflow::runtime::interface::reflect_kernel;
    use chromaflow::runtime::scan::SCAN_THREADS;
    use chromaflow::runtime::shaders::kernel_names;
    use chromaflow::runtime::{ItemRange, WIDE_WORKGROUP_SIZE, WORKGROUP_SIZE};
    for stem in kernel_names() {
        let size = reflect_kernel(stem).expect(stem).workgroup_size;
        let want: &[u32] = match stem {
            "scan_blocks" | "amr_scan" => &[SCAN_THREADS],
            "amr_mark" | "amr_compact" | "amr_geometry" | "amr_faces" => &[WIDE_WORKGROUP_SIZE],
            _ => &[WORKGROUP_SIZE, 1],
        };
        assert!(
            want.contains(&size),
            "{stem}: workgroup size {size}, {want:?} expected"
        );
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let read = |path: &str| std::fs::read_to_string(root.join(path)).expect(path);
    let items = SCAN_BLOCK / SCAN_THREADS;
    for (path, threads, per_thread) in [
        (
            "common/scan_blocks.wgsl",
            format!("const SCAN_THREADS: u32 = {SCAN_THREADS}u;"),
            format!("const ITEMS_PER_THREAD: u32 = {items}u;"),
        ),
        (
            "cuda/common/scan_blocks.cuh",
            format!("#define SCAN_THREADS {SCAN_THREADS}u"),
            format!("#define ITEMS_PER_THREAD {items}u"),
        ),
    ] {
        let src = read(path);
        assert!(src.contains(&threads), "{path} lacks '{threads}'");
        assert!(src.contains(&per_thread), "{path} lacks '{per_thread}'");
    }
    let rt = rt();
    let kernel = rt.kernel("scan_blocks", &[]).expect("scan_blocks");
    assert_eq!(kernel.workgroup_size(), SCAN_THREADS);
    let values = rt.upload("records", &[0u32; 8]).expect("upload");
    let mut plan = PlanBuilder::new();
    plan.launch_device(
        &kernel,
        &chromaflow::args![values, values, values, values, values],
        ItemRange::new(0, 1),
        SCAN_THREADS,
        &values,
    );
    let err = rt.prepare(&plan).err().expect("a device-sized scan launch");
    assert!(
        err.to_string().contains("scan_blocks") && err.to_string().contains("device-sized"),
        "{err}"
    );
}
