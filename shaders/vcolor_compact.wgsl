// #include "common/dispatch.wgsl"

// Speculative greedy vertex coloring, recolor phase: flagged vertices lose their color and are
// scattered to the next worklist at their exclusive-prefix-sum position (no atomics). Thread 0
// logs the round's conflict count (the scan's total) at conflict_log[range.color], so the host
// reads a submit's counts in one read-back, without a buffer copy per round.

@group(0) @binding(0) var<storage, read> worklist: array<u32>;
@group(0) @binding(1) var<storage, read> conflict: array<u32>;
@group(0) @binding(2) var<storage, read> position: array<u32>;
@group(0) @binding(3) var<storage, read_write> next_worklist: array<u32>;
@group(0) @binding(4) var<storage, read_write> colors: array<u32>;
@group(0) @binding(5) var<storage, read> live_count: array<u32>;
@group(0) @binding(6) var<storage, read> round_conflicts: array<u32>;
@group(0) @binding(7) var<storage, read_write> conflict_log: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i == 0u) {
        conflict_log[range.color] = round_conflicts[0];
    }
    if (i >= min(range.count, live_count[0])) {
        return;
    }
    if (conflict[i] != 0u) {
        let v = worklist[i];
        colors[v] = 0u;
        next_worklist[position[i]] = v;
    }
}
