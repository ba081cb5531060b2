// CUDA twin of shaders/common/amr_raise.wgsl: the smoothing's raise (amr_smooth's stages,
// amr_settle's rounds) on `slot_info` (per slot its level and its siblings' slots) and `after`
// (per slot a = level + flag as the smoothing stands). `follow(pos)` is called for every slot
// that rises: amr_settle settles it again, the stages leave it to the next stage.

// Sibling c (0..2) of a slot from its slot_info record.
__device__ __forceinline__ u32 sibling(uint4 info, u32 c) {
    return c == 0u ? info.y : (c == 1u ? info.z : info.w);
}

// Slot pos's a as it stands (raised by other threads of the launch).
__device__ __forceinline__ u32 load_after(const u32* after, u32 pos) {
    return *(const volatile u32*)(after + pos);
}

// Raise slot pos to a = wanted; when that lifts its -1, lift its siblings' -1 too (the cluster
// rule): exactly one raise lifts a given -1, the one whose atomic max saw level - 1. The slot's
// record is loaded with the atomic max rather than after it (as the WGSL twin).
template <typename Follow>
__device__ void raise(u32* after, const uint4* slot_info, u32 pos, u32 wanted, Follow follow) {
    uint4 info = slot_info[pos];
    u32 old = atomicMax(after + pos, wanted);
    if (old >= wanted) {
        return;
    }
    follow(pos);
    if (old + 1u != info.x) {
        return;
    }
#pragma unroll
    for (u32 c = 0u; c < 3u; c = c + 1u) {
        u32 s = sibling(info, c);
        if (s != NONE && atomicMax(after + s, info.x) < info.x) {
            follow(s);
        }
    }
}
