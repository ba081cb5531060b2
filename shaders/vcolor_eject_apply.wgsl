// #include "common/dispatch.wgsl"

// Color reduction, ejection round, step 3 of 3, over the defect list (defects[0 ..
// defect_count[0]]): each winner takes its proposed color and ejects the same-class neighbours
// that held it (uncolored, that color becomes their tabu); the losers and the ejected vertices
// form the next round's list, next_defects[0 .. next_count[0]] (vcolor_eject_count emptied
// it), so the list always holds exactly the uncolored vertices and a round costs what its
// defects cost.
//
// Races are benign: two winners ejecting one vertex write the same values; a winner never
// ejects a winner (neighbouring winners proposed different colors) nor a defect (color 0). A
// vertex two winners eject is listed once: the winner whose atomicExchange first stamps
// listed[u] with the round (round_base[0] + range.pad + 1; the attempt's start cleared the
// stamps) lists it. The list's order varies from run to run, its contents do not.
//
// Appends are gathered per workgroup: each thread counts its entries (1 for a loser, its claimed
// ejections for a winner, remembered as bits of their adjacency positions below 64), takes its
// slot in workgroup memory, and one atomicAdd per workgroup reserves the run; a claim at a
// position past 64 (vertices of degree > 64) takes its slot at once. The loop over the list is
// a grid-stride loop in whole workgroups, so the barriers stay in uniform control flow.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> proposal: array<u32>;
@group(0) @binding(4) var<storage, read> winner: array<u32>;
@group(0) @binding(5) var<storage, read> round_base: array<u32>;
@group(0) @binding(6) var<storage, read> defects: array<u32>;
@group(0) @binding(7) var<storage, read> defect_count: array<u32>;
@group(0) @binding(8) var<storage, read_write> colors: array<u32>;
@group(0) @binding(9) var<storage, read_write> tabu: array<u32>;
@group(0) @binding(10) var<storage, read_write> listed: array<atomic<u32>>;
@group(0) @binding(11) var<storage, read_write> next_defects: array<u32>;
@group(0) @binding(12) var<storage, read_write> next_count: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

var<workgroup> list_length: u32;
var<workgroup> local_count: atomic<u32>;
var<workgroup> local_first: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let threads = nwg.x * nwg.y * WORKGROUP_SIZE;
    let group = wid.x + wid.y * nwg.x;
    if (lid.x == 0u) {
        list_length = defect_count[0];
    }
    let len = workgroupUniformLoad(&list_length);
    let stamp = round_base[0] + range.pad + 1u;
    for (var chunk = group * WORKGROUP_SIZE; chunk < len; chunk = chunk + threads) {
        if (lid.x == 0u) {
            atomicStore(&local_count, 0u);
        }
        workgroupBarrier();
        let i = chunk + lid.x;
        var v = 0u;
        var won = false;
        var entries = 0u;
        var claimed = vec2<u32>(0u, 0u);
        var begin = 0u;
        if (i < len) {
            v = defects[i];
            if (winner[v] != 0u) {
                won = true;
                let c = proposal[v];
                colors[v] = c;
                let class_v = vertex_class[v];
                begin = adjacency_offsets[v];
                for (var j = begin; j < adjacency_offsets[v + 1u]; j = j + 1u) {
                    let u = adjacency[j];
                    if (vertex_class[u] == class_v && colors[u] == c) {
                        colors[u] = 0u;
                        tabu[u] = c;
                        if (atomicExchange(&listed[u], stamp) != stamp) {
                            let at = j - begin;
                            if (at < 32u) {
                                claimed.x = claimed.x | (1u << at);
                                entries = entries + 1u;
                            } else if (at < 64u) {
                                claimed.y = claimed.y | (1u << (at - 32u));
                                entries = entries + 1u;
                            } else {
                                next_defects[atomicAdd(&next_count[0], 1u)] = u;
                            }
                        }
                    }
                }
            } else {
                entries = 1u;
            }
        }
        let slot = atomicAdd(&local_count, entries);
        workgroupBarrier();
        if (lid.x == 0u) {
            local_first = atomicAdd(&next_count[0], atomicLoad(&local_count));
        }
        workgroupBarrier();
        var at = local_first + slot;
        if (i < len && !won) {
            next_defects[at] = v;
        }
        for (var half = 0u; half < 2u; half = half + 1u) {
            var bits = claimed[half];
            while (bits != 0u) {
                let b = countTrailingZeros(bits);
                bits = bits & (bits - 1u);
                next_defects[at] = adjacency[begin + 32u * half + b];
                at = at + 1u;
            }
        }
    }
}
