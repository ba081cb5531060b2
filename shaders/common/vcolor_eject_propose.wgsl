// Ejection round, step 1 (color reduction), per defect: shared by vcolor_eject_propose (one
// launch per round) and vcolor_eject_tail (many rounds in one workgroup). The including kernel
// binds adjacency_offsets, adjacency, vertex_class, colors and tabu, and includes
// common/vcolor_hash.wgsl.

/// Colors the proposal counts holders of (MAX_EJECT_COLORS in src/color/reduce.rs): the
/// ejection runs on counts k <= MAX_EJECT_COLORS + 1.
const MAX_EJECT_COLORS: u32 = 32u;

/// The color defect v proposes in round `round_number` below color k: the c in 1 .. k-1 that
/// minimizes h(c), the same-class neighbours holding c. A free color (h = 0) if there is one,
/// the smallest; else the fewest holders, ties broken by round_hash(v * MAX_EJECT_COLORS + c,
/// round) so that defects wander instead of cycling. tabu[v], the color v was ejected from, is
/// not proposed unless free. Reads only colors, so every defect sees the previous round.
fn proposed_color(v: u32, k: u32, round_number: u32) -> u32 {
    var holders: array<u32, MAX_EJECT_COLORS>;
    let class_v = vertex_class[v];
    for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        let u = adjacency[j];
        let c = colors[u];
        if (vertex_class[u] == class_v && c != 0u && c < k) {
            holders[c - 1u] = holders[c - 1u] + 1u;
        }
    }
    var best = 0u;
    var best_holders = 0xffffffffu;
    var best_tie = 0xffffffffu;
    for (var c = 1u; c < k; c = c + 1u) {
        let h = holders[c - 1u];
        if (h != 0u && c == tabu[v]) {
            continue;
        }
        let tie = select(round_hash(v * MAX_EJECT_COLORS + c, round_number), c, h == 0u);
        if (h < best_holders || (h == best_holders && tie < best_tie)) {
            best = c;
            best_holders = h;
            best_tie = tie;
        }
    }
    return best;
}
