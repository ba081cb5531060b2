// Ejection round, step 3 (color reduction), one workgroup's chunk of the defect list: shared by
// vcolor_eject_apply (one launch per round) and vcolor_eject_tail (many rounds in one
// workgroup). The including kernel binds adjacency_offsets, adjacency, vertex_class, proposal,
// winner, defects (the list), colors, tabu, listed (atomic) and next_defects, and declares
// next_count, the next list's length: an atomic array in storage (the round kernel) or in
// workgroup memory (the tail, whose lists no other workgroup touches).
//
// Each winner takes its proposed color and ejects the same-class neighbours that held it
// (uncolored, that color becomes their tabu); the losers and the ejected vertices form the next
// list, next_defects[0 .. next_count[0]], so the list always holds exactly the uncolored
// vertices. Races are benign: two winners ejecting one vertex write the same values; a winner
// never ejects a winner (neighbouring winners proposed different colors) nor a defect (color
// 0). A vertex two winners eject is listed once: the winner whose atomicExchange first stamps
// listed[u] with the round's stamp (round + 1; the attempt's start cleared the stamps) lists
// it. The list's order varies from run to run, its contents do not.
//
// Appends are gathered per workgroup: each thread counts its entries (1 for a loser, its
// claimed ejections for a winner, remembered as bits of their adjacency positions below 64),
// takes its slot in workgroup memory, and one atomicAdd per workgroup reserves the run; a claim
// at a position past 64 (vertices of degree > 64) takes its slot at once.

var<workgroup> local_count: atomic<u32>;
var<workgroup> local_first: u32;

/// Step 3 for list entry i (< len, else only the barriers) of a chunk of WORKGROUP_SIZE entries,
/// thread `lid` of the workgroup; `stamp` = round + 1. Has workgroup barriers: every thread of
/// the workgroup calls it, in uniform control flow.
fn apply_chunk(i: u32, len: u32, lid: u32, stamp: u32) {
    if (lid == 0u) {
        atomicStore(&local_count, 0u);
    }
    workgroupBarrier();
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
    if (lid == 0u) {
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
