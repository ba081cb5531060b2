// Ejection round, step 2 (color reduction), per defect: shared by vcolor_eject_resolve (one
// launch per round) and vcolor_eject_tail (many rounds in one workgroup). The including kernel
// binds adjacency_offsets, adjacency, vertex_class, colors and proposal, and includes
// common/vcolor_hash.wgsl.

/// 1 when defect v keeps its proposal p = proposal[v] in round `round_number`, else 0 (also
/// for p = 0, no color below k): v loses to a same-class uncolored neighbour u (a defect too,
/// with this round's proposal) that proposed p with a higher priority, round_hash(u, round)
/// smaller, ties by number. So two neighbours never take one color.
fn proposal_wins(v: u32, round_number: u32) -> u32 {
    let p = proposal[v];
    var wins = select(1u, 0u, p == 0u);
    let pv = round_hash(v, round_number);
    let class_v = vertex_class[v];
    for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        let u = adjacency[j];
        if (vertex_class[u] == class_v && colors[u] == 0u && proposal[u] == p) {
            let pu = round_hash(u, round_number);
            if (pu < pv || (pu == pv && u < v)) {
                wins = 0u;
            }
        }
    }
    return wins;
}
