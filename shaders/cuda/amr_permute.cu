// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_reorder.cuh"

// CUDA twin of shaders/amr_permute.wgsl. The slots permuted into the sorted order
// (reorder::permute_tree, locality::permute and locality::permute_coefficients, the exact CPU
// references): new slot i takes old slot order[i]. Everything is copied word for word, so the
// result is exact. range.pad:
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
//
// The WGSL override constants are preprocessor defines here (the host passes -D values); the
// capacity NE is the module constant of common/dispatch.cuh (WGSL: range.capacity).

#ifndef NP
#define NP 3u
#endif

#define GEOMETRY_AT (8u * NP * NE)
#define NEIGHBORS_AT (GEOMETRY_AT + 6u * NE)
#define SLOTS_AT (NEIGHBORS_AT + 8u * NE)
#define NEW_OF_AT (SLOTS_AT + NE)
#define FACES_AT (NEW_OF_AT + NE)

__device__ __forceinline__ u32 renamed(u32 slot, const u32* scratch) {
    return slot == NONE ? NONE : scratch[NEW_OF_AT + slot];
}

// Place of the face of color `color` and left slot `left` in left-element order (phase 3).
__device__ __forceinline__ u32 by_left_place(u32 color, u32 left, const u32* marks,
                                             const u32* marks_scan, const u32* block_offsets,
                                             u32 colors) {
    u32 place = 0u;
    for (u32 c = 0u; c < colors; c = c + 1u) {
        u32 first = c * NE;
        u32 mark = first + left;
        place += (marks_scan[mark] + block_offsets[mark / SCAN_BLOCK]) -
                 (marks_scan[first] + block_offsets[first / SCAN_BLOCK]);
        if (c < color) {
            place += marks[mark];
        }
    }
    return place;
}

// Color of the face whose left element is in (new) slot `left`, on its side info & 3: the
// color of that element's edge there (slots hold the new order from phase 1 on).
__device__ __forceinline__ u32 face_color(u32 left, u32 info, const u32* slots,
                                          const uint4* element_edges, const uint4* edge_tree) {
    uint4 edges = element_edges[slots[left]];
    u32 side = info & 3u;
    u32 e = side == 0u ? edges.x : (side == 1u ? edges.y : edges.z);
    return (edge_tree[e].x >> 8u) & 0xffu;
}

extern "C" __global__ void amr_permute(
    u32* slots,
    uint4* element_tree,
    const u32* __restrict__ order,
    float* regs,
    float4* inv_jac,
    float* inv_det,
    float* heights,
    uint4* neighbors,
    u32* faces,
    u32* marks,
    const u32* __restrict__ marks_scan,
    u32* counters,
    u32* scratch,
    const u32* __restrict__ block_offsets,
    float* regs_lo,
    u32* faces_by_left,
    const uint4* __restrict__ element_edges,
    const uint4* __restrict__ edge_tree,
    ReorderParams params,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 n = counters[C_ACTIVE];
    u32 num_faces = counters[C_COLOR_OFFSETS + params.colors];
    if (range.pad == 0u) {
        if (i >= n) {
            return;
        }
        // The sorted order, in the half the last radix pass wrote.
        u32 old = order[(RADIX_PASSES % 2u) * NE + i];
        u32 id = slots[old];
        scratch[SLOTS_AT + i] = id;
        scratch[NEW_OF_AT + old] = i;
        element_tree[id].w = i;
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            scratch[j * NE + i] = __float_as_uint(regs[j * NE + old]);
            scratch[(4u * NP + j) * NE + i] = __float_as_uint(regs_lo[j * NE + old]);
        }
        u32 g = GEOMETRY_AT + 6u * i;
        float4 jac = inv_jac[old];
        scratch[g] = __float_as_uint(jac.x);
        scratch[g + 1u] = __float_as_uint(jac.y);
        scratch[g + 2u] = __float_as_uint(jac.z);
        scratch[g + 3u] = __float_as_uint(jac.w);
        scratch[g + 4u] = __float_as_uint(inv_det[old]);
        scratch[g + 5u] = __float_as_uint(heights[old]);
        for (u32 b = 0u; b < 2u; b = b + 1u) {
            uint4 nb = neighbors[b * NE + old];
            u32 at = NEIGHBORS_AT + 8u * i + 4u * b;
            scratch[at] = nb.x;
            scratch[at + 1u] = nb.y;
            scratch[at + 2u] = nb.z;
            scratch[at + 3u] = nb.w;
        }
    } else if (range.pad == 1u) {
        for (u32 c = 0u; c < params.colors; c = c + 1u) {
            marks[c * NE + i] = 0u;
        }
        if (i == 0u) {
            counters[C_FAR_FACES] = 0u;
        }
        if (i >= n) {
            return;
        }
        slots[i] = scratch[SLOTS_AT + i];
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * NE + i] = __uint_as_float(scratch[j * NE + i]);
            regs_lo[j * NE + i] = __uint_as_float(scratch[(4u * NP + j) * NE + i]);
        }
        u32 g = GEOMETRY_AT + 6u * i;
        inv_jac[i] = make_float4(__uint_as_float(scratch[g]), __uint_as_float(scratch[g + 1u]),
                                 __uint_as_float(scratch[g + 2u]), __uint_as_float(scratch[g + 3u]));
        inv_det[i] = __uint_as_float(scratch[g + 4u]);
        heights[i] = __uint_as_float(scratch[g + 5u]);
        for (u32 b = 0u; b < 2u; b = b + 1u) {
            u32 at = NEIGHBORS_AT + 8u * i + 4u * b;
            // The first block's w is the split mask, the second's is unused (NONE).
            neighbors[b * NE + i] =
                make_uint4(renamed(scratch[at], scratch), renamed(scratch[at + 1u], scratch),
                           renamed(scratch[at + 2u], scratch), scratch[at + 3u]);
        }
    } else if (i < num_faces) {
        u32 at = FACES_AT + 8u * i;
        if (range.pad == 2u) {
            u32 left = scratch[NEW_OF_AT + faces_by_left[8u * i]];
            scratch[at] = left;
            scratch[at + 1u] = renamed(faces_by_left[8u * i + 1u], scratch);
            for (u32 w = 2u; w < 8u; w = w + 1u) {
                scratch[at + w] = faces_by_left[8u * i + w];
            }
            u32 color = face_color(left, scratch[at + 2u], slots, element_edges, edge_tree);
            marks[color * NE + left] = 1u;
        } else {
            u32 left = scratch[at];
            u32 color = face_color(left, scratch[at + 2u], slots, element_edges, edge_tree);
            u32 mark = color * NE + left;
            u32 to = 8u * (marks_scan[mark] + block_offsets[mark / SCAN_BLOCK]);
            u32 by_left =
                8u * by_left_place(color, left, marks, marks_scan, block_offsets, params.colors);
            for (u32 w = 0u; w < 8u; w = w + 1u) {
                faces[to + w] = scratch[at + w];
                faces_by_left[by_left + w] = scratch[at + w];
            }
            u32 right = scratch[at + 1u];
            if (right != NONE && max(left, right) - min(left, right) > FAR_SLOTS) {
                atomicAdd(counters + C_FAR_FACES, 1u);
            }
        }
    }
}
