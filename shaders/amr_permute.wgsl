// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_reorder.wgsl"

// The slots permuted into the sorted order (reorder::permute_tree, locality::permute and
// locality::permute_coefficients, the exact CPU references): new slot i takes old slot
// order[i]. Everything is copied word for word, so the result is exact. range.pad:
//   0: per new slot i < n: its element id, the solution (register 0's high and low words:
//      the solver's double-float pairs move whole), the geometry and the
//      raw neighbour blocks of old slot order[i] go to the scratch; the element's tree
//      records slot i; new_of[order[i]] = i;
//   1: per slot up to the capacity: the face marks are cleared (and by thread 0 the far-face
//      count); below n the scratch comes back, neighbour slots (not the split mask in w)
//      renamed by new_of;
//   2: per face f in left-element order (faces_by_left: the solver's faces in every layout;
//      the color order is not kept under the gathered one): left and right renamed into a
//      scratch record, which marks marks[c NE + new left] for its color c (an element has one
//      face per color; the color of the left element's edge on the face's side, from the
//      trees); the exclusive scan over the marks then numbers the faces by color, by left slot
//      within it;
//   3: per face f: the record goes to its number (the scan's block prefix plus its block
//      offset), and to its place in left-element order (GpuDg::edges_by_left: the faces of
//      lower left slots, every color's scan at its left slot less at the color's first slot,
//      then those of its left slot in smaller colors, from the marks), and a face whose
//      slots differ by more than FAR_SLOTS counts in counters[C_FAR_FACES]
//      (reorder::far_faces, as amr_faces counts after an adaptation), read with the next
//      adaptation's counters.
// The faces are written in color order too, read or not. Scratch words: 8 NP NE of the
// solution, 6 NE of geometry, 8 NE of neighbours, NE slots, NE new_of, then 8 face_capacity of
// faces.

override NP: u32 = 3u;

@group(0) @binding(0) var<storage, read_write> slots: array<u32>;
@group(0) @binding(1) var<storage, read_write> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> order: array<u32>;
@group(0) @binding(3) var<storage, read_write> regs: array<f32>;
@group(0) @binding(4) var<storage, read_write> inv_jac: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> inv_det: array<f32>;
@group(0) @binding(6) var<storage, read_write> heights: array<f32>;
@group(0) @binding(7) var<storage, read_write> neighbors: array<vec4<u32>>;
// DgEdge records: left, right, info, nx, ny, length, mx, my.
@group(0) @binding(8) var<storage, read_write> faces: array<u32>;
@group(0) @binding(9) var<storage, read_write> marks: array<u32>;
@group(0) @binding(10) var<storage, read> marks_scan: array<u32>;
@group(0) @binding(11) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(12) var<storage, read_write> scratch: array<u32>;
// The face scan's block offsets (its reader adds them).
@group(0) @binding(13) var<storage, read> block_offsets: array<u32>;
// Register 0's low words, 4 NP rows of NE (its high words are `regs`).
@group(0) @binding(14) var<storage, read_write> regs_lo: array<f32>;
// The faces again in left-element order (DgEdge records as in `faces`).
@group(0) @binding(15) var<storage, read_write> faces_by_left: array<u32>;
// The trees' element edges and edge nodes, for the faces' colors.
@group(0) @binding(16) var<storage, read> element_edges: array<vec4<u32>>;
@group(0) @binding(17) var<storage, read> edge_tree: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: ReorderParams;

fn geometry_at() -> u32 {
    return 8u * NP * range.capacity;
}

fn neighbors_at() -> u32 {
    return geometry_at() + 6u * range.capacity;
}

fn slots_at() -> u32 {
    return neighbors_at() + 8u * range.capacity;
}

fn new_of_at() -> u32 {
    return slots_at() + range.capacity;
}

fn faces_at() -> u32 {
    return new_of_at() + range.capacity;
}

fn renamed(slot: u32) -> u32 {
    if (slot == NONE) {
        return NONE;
    }
    return scratch[new_of_at() + slot];
}

// Place of the face of color `color` and left slot `left` in left-element order (phase 3).
fn by_left_place(color: u32, left: u32) -> u32 {
    var place = 0u;
    for (var c = 0u; c < params.colors; c = c + 1u) {
        let first = c * range.capacity;
        let mark = first + left;
        place = place + (marks_scan[mark] + block_offsets[mark / SCAN_BLOCK])
            - (marks_scan[first] + block_offsets[first / SCAN_BLOCK]);
        if (c < color) {
            place = place + marks[mark];
        }
    }
    return place;
}

// Color of the face whose left element is in (new) slot `left`, on its side info & 3: the
// color of that element's edge there (slots hold the new order from phase 1 on).
fn face_color(left: u32, info: u32) -> u32 {
    let e = element_edges[slots[left]][info & 3u];
    return (edge_tree[e].x >> 8u) & 0xffu;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let n = atomicLoad(&counters[C_ACTIVE]);
    let num_faces = atomicLoad(&counters[C_COLOR_OFFSETS + params.colors]);
    if (range.pad == 0u) {
        if (i >= n) {
            return;
        }
        // The sorted order, in the half the last radix pass wrote.
        let old = order[(RADIX_PASSES % 2u) * range.capacity + i];
        let id = slots[old];
        scratch[slots_at() + i] = id;
        scratch[new_of_at() + old] = i;
        element_tree[id].w = i;
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            scratch[j * range.capacity + i] = bitcast<u32>(regs[j * range.capacity + old]);
            scratch[(4u * NP + j) * range.capacity + i] = bitcast<u32>(regs_lo[j * range.capacity + old]);
        }
        let g = geometry_at() + 6u * i;
        let jac = bitcast<vec4<u32>>(inv_jac[old]);
        scratch[g] = jac.x;
        scratch[g + 1u] = jac.y;
        scratch[g + 2u] = jac.z;
        scratch[g + 3u] = jac.w;
        scratch[g + 4u] = bitcast<u32>(inv_det[old]);
        scratch[g + 5u] = bitcast<u32>(heights[old]);
        for (var b = 0u; b < 2u; b = b + 1u) {
            let nb = neighbors[b * range.capacity + old];
            let at = neighbors_at() + 8u * i + 4u * b;
            scratch[at] = nb.x;
            scratch[at + 1u] = nb.y;
            scratch[at + 2u] = nb.z;
            scratch[at + 3u] = nb.w;
        }
    } else if (range.pad == 1u) {
        for (var c = 0u; c < params.colors; c = c + 1u) {
            marks[c * range.capacity + i] = 0u;
        }
        if (i == 0u) {
            atomicStore(&counters[C_FAR_FACES], 0u);
        }
        if (i >= n) {
            return;
        }
        slots[i] = scratch[slots_at() + i];
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * range.capacity + i] = bitcast<f32>(scratch[j * range.capacity + i]);
            regs_lo[j * range.capacity + i] = bitcast<f32>(scratch[(4u * NP + j) * range.capacity + i]);
        }
        let g = geometry_at() + 6u * i;
        inv_jac[i] = bitcast<vec4<f32>>(vec4<u32>(scratch[g], scratch[g + 1u], scratch[g + 2u],
                                                  scratch[g + 3u]));
        inv_det[i] = bitcast<f32>(scratch[g + 4u]);
        heights[i] = bitcast<f32>(scratch[g + 5u]);
        for (var b = 0u; b < 2u; b = b + 1u) {
            let at = neighbors_at() + 8u * i + 4u * b;
            // The first block's w is the split mask, the second's is unused (NONE).
            neighbors[b * range.capacity + i] = vec4<u32>(renamed(scratch[at]), renamed(scratch[at + 1u]),
                                              renamed(scratch[at + 2u]), scratch[at + 3u]);
        }
    } else if (i < num_faces) {
        let at = faces_at() + 8u * i;
        if (range.pad == 2u) {
            let left = scratch[new_of_at() + faces_by_left[8u * i]];
            scratch[at] = left;
            scratch[at + 1u] = renamed(faces_by_left[8u * i + 1u]);
            for (var w = 2u; w < 8u; w = w + 1u) {
                scratch[at + w] = faces_by_left[8u * i + w];
            }
            marks[face_color(left, scratch[at + 2u]) * range.capacity + left] = 1u;
        } else {
            let left = scratch[at];
            let color = face_color(left, scratch[at + 2u]);
            let mark = color * range.capacity + left;
            let to = 8u * (marks_scan[mark] + block_offsets[mark / SCAN_BLOCK]);
            let by_left = 8u * by_left_place(color, left);
            for (var w = 0u; w < 8u; w = w + 1u) {
                faces[to + w] = scratch[at + w];
                faces_by_left[by_left + w] = scratch[at + w];
            }
            let right = scratch[at + 1u];
            if (right != NONE && max(left, right) - min(left, right) > FAR_SLOTS) {
                atomicAdd(&counters[C_FAR_FACES], 1u);
            }
        }
    }
}
