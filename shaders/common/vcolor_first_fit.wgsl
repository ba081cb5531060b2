// First-fit color choice shared by vcolor_assign and vcolor_recolor. The including kernel binds
// adjacency_offsets, adjacency, vertex_class and colors.

/// Smallest color >= 1 not held by a same-class neighbour of v (0 = uncolored neighbour).
/// Colors are searched in windows of 32 with a bit mask; the loop ends because once the window
/// passes the degree of v no neighbour color falls inside it.
fn smallest_free_color(v: u32) -> u32 {
    let class_v = vertex_class[v];
    let begin = adjacency_offsets[v];
    let end = adjacency_offsets[v + 1u];
    var window = 0u;
    var chosen = 0u;
    loop {
        var used = 0u;
        for (var j = begin; j < end; j = j + 1u) {
            let u = adjacency[j];
            if (vertex_class[u] == class_v) {
                let c = colors[u];
                if (c > window && c <= window + 32u) {
                    used = used | (1u << (c - window - 1u));
                }
            }
        }
        if (used != 0xffffffffu) {
            chosen = window + countTrailingZeros(~used) + 1u;
            break;
        }
        window = window + 32u;
    }
    return chosen;
}
