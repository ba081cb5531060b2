// #include "common/dispatch.wgsl"
// #include "common/vcolor_hash.wgsl"
// #include "common/vcolor_eject_propose.wgsl"
// #include "common/vcolor_eject_resolve.wgsl"
// #include "common/vcolor_eject_apply.wgsl"
// #include "common/vcolor_eject_record.wgsl"

// Color reduction, the tail of an ejection attempt: ONE workgroup runs many rounds on a short
// defect list in one launch, where each launched round (vcolor_eject_propose, _resolve, _apply,
// _count) costs four launches and their barriers whatever its length. Each round is the three
// steps of the launched round, the same per-defect functions (common/vcolor_eject_*.wgsl) over
// the list with a storage barrier between the steps (within one workgroup the writes of one
// step are visible to the next after it), so it gives exactly their colors; the next list
// (next_defects, its length in workgroup memory) is copied back into `defects`.
//
// Host words: round_base = [first round, defects after the last window boundary at or before
// it (the stop rule's reference), rounds to run (at most range.count, the log's capacity), the
// attempt's cap on rounds]; range.color = k, range.pad = the bound (the most defects the tail
// carries). Rounds stop after the one that empties the list, grows it past the bound (handed
// back: the launched rounds take over), or ends a window of EJECT_WINDOW rounds (counted from
// the attempt's first) where the host's stop rule gives the attempt up (gives_up), so the tail
// does not run on far past the host's stop. Entry 0 of defect_log is
// the list's length at the start, entry r the length after round r, and the rounds not run
// read NOT_RUN. At the end the list is in defects[0 .. defect_count[0]], the other list's
// length is zero and the launch record fits the list, as after vcolor_eject_count, so launched
// rounds can follow.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> round_base: array<u32>;
@group(0) @binding(4) var<storage, read_write> colors: array<u32>;
@group(0) @binding(5) var<storage, read_write> tabu: array<u32>;
@group(0) @binding(6) var<storage, read_write> proposal: array<u32>;
@group(0) @binding(7) var<storage, read_write> winner: array<u32>;
@group(0) @binding(8) var<storage, read_write> listed: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> defects: array<u32>;
@group(0) @binding(10) var<storage, read_write> defect_count: array<u32>;
@group(0) @binding(11) var<storage, read_write> next_defects: array<u32>;
@group(0) @binding(12) var<storage, read_write> emptied_count: array<u32>;
@group(0) @binding(13) var<storage, read_write> record: array<u32>;
@group(0) @binding(14) var<storage, read_write> defect_log: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

/// Rounds of a window of the stop rule (EJECT_WINDOW in src/color/reduce.rs).
const EJECT_WINDOW: u32 = 8u;
/// Log entry of a round the tail did not run (NOT_RUN in src/color/reduce.rs).
const NOT_RUN: u32 = 0xffffffffu;
/// Windows added to the windows left before the tail gives up on the log test, so that f32
/// rounding never makes it stop where the host's f64 rule goes on (1/64 of a window; the ratio
/// tested is at most tens, f32 rounding moves it by ~1e-5).
const STOP_MARGIN: f32 = 0.015625;

/// The host's stop rule (`hopeless` in src/color/reduce.rs, whose docs give the reasoning):
/// the last window took the defects from `previous` to `now`; shrinking by that ratio per
/// window they would not reach zero (ln(now) / ln(previous / now) windows) within
/// `windows_left` (plus STOP_MARGIN). Where it gives up, the host stops the attempt as well.
fn gives_up(previous: u32, now: u32, windows_left: u32) -> bool {
    if (now >= previous) {
        return true;
    }
    if (now == 0u) {
        return false;
    }
    return log(f32(now)) > (f32(windows_left) + STOP_MARGIN) * log(f32(previous) / f32(now));
}

var<workgroup> next_count: array<atomic<u32>, 1>;
/// Values every thread needs in uniform control flow, written by thread 0: the list's length,
/// the first round, the stop rule's reference, the rounds to run and the attempt's cap.
var<workgroup> list_length: u32;
var<workgroup> host_words: vec4<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let k = min(range.color, MAX_EJECT_COLORS + 1u);
    let bound = range.pad;
    if (lid.x == 0u) {
        list_length = defect_count[0];
        host_words = vec4<u32>(
            round_base[0],
            round_base[1],
            min(round_base[2], range.count),
            round_base[3],
        );
        atomicStore(&next_count[0], 0u);
        defect_log[0] = defect_count[0];
    }
    let words = workgroupUniformLoad(&host_words);
    let first = words.x;
    var window_defects = words.y;
    let rounds = words.z;
    let cap = words.w;
    var len = workgroupUniformLoad(&list_length);
    var ran = 0u;
    while (ran < rounds && len != 0u && len <= bound) {
        let round_number = first + ran;
        for (var i = lid.x; i < len; i = i + WORKGROUP_SIZE) {
            let v = defects[i];
            proposal[v] = proposed_color(v, k, round_number);
        }
        storageBarrier();
        for (var i = lid.x; i < len; i = i + WORKGROUP_SIZE) {
            let v = defects[i];
            winner[v] = proposal_wins(v, round_number);
        }
        storageBarrier();
        for (var chunk = 0u; chunk < len; chunk = chunk + WORKGROUP_SIZE) {
            apply_chunk(chunk + lid.x, len, lid.x, round_number + 1u);
        }
        storageBarrier();
        if (lid.x == 0u) {
            list_length = atomicLoad(&next_count[0]);
            atomicStore(&next_count[0], 0u);
        }
        len = workgroupUniformLoad(&list_length);
        for (var i = lid.x; i < len; i = i + WORKGROUP_SIZE) {
            defects[i] = next_defects[i];
        }
        storageBarrier();
        ran = ran + 1u;
        if (lid.x == 0u) {
            defect_log[ran] = len;
        }
        let done = first + ran;
        if (done % EJECT_WINDOW == 0u) {
            let windows_left = (max(cap, done) - done) / EJECT_WINDOW;
            let stop = done >= 2u * EJECT_WINDOW && gives_up(window_defects, len, windows_left);
            window_defects = len;
            if (stop) {
                break;
            }
        }
    }
    if (lid.x == 0u) {
        for (var r = ran + 1u; r <= rounds; r = r + 1u) {
            defect_log[r] = NOT_RUN;
        }
        defect_count[0] = len;
        emptied_count[0] = 0u;
        write_defect_record(len);
    }
}
