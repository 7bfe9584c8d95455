// SPDX-License-Identifier: Apache-2.0
// The device vocabulary's OpenCL C definitions, one set per target.
#include "codegen/device_vocabulary.hpp"

#include <kiln/detail/ptx_instructions.hpp>
#include <kiln/detail/source_builder.hpp>

namespace kiln::detail {
namespace {

// NVIDIA's OpenCL compiles inline PTX. shfl.sync over the full warp: every lane runs the
// caller, so all 32 take part; the clamp operand (0 up, 31 down) gives lanes without a source
// their own value. The memory clobber of the warp barrier keeps the compiler from moving local
// memory accesses across it (the hardware orders them).
std::string ptx_shuffle(const std::string& way, const std::string& clamp) {
    return "uint kiln_shuffle_" + way +
           "(uint x, uint delta) {\n"
           "    uint r;\n"
           "    asm volatile(\"shfl.sync." +
           way + ".b32 %0, %1, %2, " + clamp +
           ", 0xffffffff;\" : \"=r\"(r) : \"r\"(x), \"r\"(delta));\n"
           "    return r;\n}\n"
           "ulong kiln_shuffle_" +
           way +
           "_64(ulong x, uint delta) {\n"
           "    uint2 halves = as_uint2(x);\n"
           "    halves.x = kiln_shuffle_" +
           way +
           "(halves.x, delta);\n"
           "    halves.y = kiln_shuffle_" +
           way +
           "(halves.y, delta);\n"
           "    return as_ulong(halves);\n}\n";
}

std::string inline_ptx_vocabulary() {
    return "uint kiln_ballot(uint predicate) {\n"
           "    uint mask;\n"
           "    asm volatile(\"{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, "
           "0xffffffff; }\" : \"=r\"(mask) : \"r\"(predicate));\n"
           "    return mask;\n}\n"
           "void kiln_sub_group_sync(void) {\n"
           "    asm volatile(\"bar.warp.sync 0xffffffff;\" ::: \"memory\");\n}\n"
           // One tested bit serves the vote and the complement: C's select over a second test of
           // the bit compiled to seven instructions a bit (the radix sort's ranking, H100).
           "uint kiln_ballot_agree(uint x, uint bit) {\n"
           "    uint lanes;\n"
           "    asm(\"{ .reg .pred set; .reg .b32 masked; and.b32 masked, %1, %2; "
           "setp.ne.u32 set, masked, 0; vote.sync.ballot.b32 %0, set, 0xffffffff; "
           "@!set not.b32 %0, %0; }\" : \"=r\"(lanes) : \"r\"(x), \"r\"(bit));\n"
           "    return lanes;\n}\n" +
           ptx_shuffle("up", "0") + ptx_shuffle("down", "31") +
           "void kiln_fence_acq_rel(void) {\n"
           "    asm volatile(\"fence.acq_rel.gpu;\" ::: \"memory\");\n}\n";
}

std::string builtin_shuffle(const std::string& way) {
    return "uint kiln_shuffle_" + way + "(uint x, uint delta) {\n    return sub_group_shuffle_" +
           way + "(x, delta);\n}\nulong kiln_shuffle_" + way +
           "_64(ulong x, uint delta) {\n    return sub_group_shuffle_" + way + "(x, delta);\n}\n";
}

constexpr const char* mem_fence_acq_rel =
    "void kiln_fence_acq_rel(void) {\n    mem_fence(CLK_GLOBAL_MEM_FENCE);\n}\n";

// Sub-groups emulated in local memory: 32 consecutive work-items, every work-item of the group
// calling (the barriers are the group's), `scratch` holding a uint per work-item.
constexpr const char* local_memory_sub_groups =
    R"(uint kiln_ballot_local(local uint* scratch, uint predicate) {
    const uint lid = get_local_id(0), first = lid & ~31u;
    scratch[lid] = predicate != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mask = 0;
    for (uint l = 0; l < 32u && first + l < get_local_size(0); ++l) mask |= scratch[first + l] << l;
    barrier(CLK_LOCAL_MEM_FENCE);
    return mask;
}
uint kiln_shuffle_local(local uint* scratch, uint x, int delta) {
    const uint lid = get_local_id(0), lane = lid & 31u;
    scratch[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int from = (int)lane + delta;
    const uint r = from >= 0 && from < 32 && lid - lane + from < get_local_size(0) ? scratch[lid + delta] : x;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
uint kiln_shuffle_up_local(local uint* scratch, uint x, uint delta) {
    return kiln_shuffle_local(scratch, x, -(int)delta);
}
uint kiln_shuffle_down_local(local uint* scratch, uint x, uint delta) {
    return kiln_shuffle_local(scratch, x, (int)delta);
}
ulong kiln_shuffle_up_64_local(local uint* scratch, ulong x, uint delta) {
    uint2 halves = as_uint2(x);
    halves.x = kiln_shuffle_up_local(scratch, halves.x, delta);
    halves.y = kiln_shuffle_up_local(scratch, halves.y, delta);
    return as_ulong(halves);
}
ulong kiln_shuffle_down_64_local(local uint* scratch, ulong x, uint delta) {
    uint2 halves = as_uint2(x);
    halves.x = kiln_shuffle_down_local(scratch, halves.x, delta);
    halves.y = kiln_shuffle_down_local(scratch, halves.y, delta);
    return as_ulong(halves);
}
)";

std::string sub_group_builtin_vocabulary(const target_features& target) {
    std::string text;
    if (target.ballot)
        text +=
            "uint kiln_ballot(uint predicate) {\n"
            "    return sub_group_ballot((int)predicate).x;\n}\n"
            "void kiln_sub_group_sync(void) {\n"
            "    sub_group_barrier(CLK_LOCAL_MEM_FENCE);\n}\n"
            "uint kiln_ballot_agree(uint x, uint bit) {\n"
            "    const uint set = x & bit;\n"
            "    const uint lanes = sub_group_ballot(set != 0u).x;\n"
            "    return set != 0u ? lanes : ~lanes;\n}\n";
    if (target.shuffles) text += builtin_shuffle("up") + builtin_shuffle("down");
    return text + mem_fence_acq_rel;
}

}  // namespace

std::string device_vocabulary_source(const target_features& target) {
    switch (target.vocabulary) {
        case vocabulary_target::cuda_prelude:
            return "";
        case vocabulary_target::inline_ptx:
            return inline_ptx_vocabulary();
        case vocabulary_target::sub_group_builtins:
            return sub_group_builtin_vocabulary(target);
        case vocabulary_target::local_memory:
            break;
    }
    return std::string(mem_fence_acq_rel) + local_memory_sub_groups;
}

void use_device_vocabulary(source_builder& b, const target_features& target) {
    const std::string text = device_vocabulary_source(target);
    if (!text.empty()) b.define("kiln_device_vocabulary", text);
}

void use_tensor_core_vocabulary(source_builder& b, const target_features& target) {
    if (target.vocabulary != vocabulary_target::inline_ptx) return;
    static const std::string wrappers =
        ptx_wrappers(ptx_dialect::opencl_inline_asm, ptx_set::tensor_cores);
    b.define("kiln_tensor_core_vocabulary", wrappers);
}

void use_match_any_vocabulary(source_builder& b, const target_features& target) {
    if (target.vocabulary == vocabulary_target::inline_ptx)
        b.define("kiln_match_any",
                 "uint kiln_match_any(uint x) {\n"
                 "    uint peers;\n"
                 "    asm volatile(\"match.any.sync.b32 %0, %1, 0xffffffff;\" : \"=r\"(peers) : "
                 "\"r\"(x));\n"
                 "    return peers;\n}\n");
}

void use_rounding_vocabulary(source_builder& b, const target_features& target,
                             std::string_view type) {
    const std::string t(type), name = "kiln_rounded_" + t;
    if (target.vocabulary == vocabulary_target::cuda_prelude) return;
    if (target.vocabulary != vocabulary_target::inline_ptx) {
        b.define(name, t + " " + name + "(" + t + " x) { return x; }\n");
        return;
    }
    const bool wide = t == "double";
    const std::string ptx =
        wide ? "add.rn.f64 %0, %1, 0d8000000000000000;" : "add.rn.f32 %0, %1, 0f80000000;";
    const std::string r = wide ? "d" : "f";
    b.define(name, t + " " + name + "(" + t + " x) { " + t + " y; asm volatile(\"" + ptx +
                       "\" : \"=" + r + "\"(y) : \"" + r + "\"(x)); return y; }\n");
}

void use_streaming_vocabulary(source_builder& b, const target_features& target,
                              std::string_view type) {
    const std::string c(type);
    if (target.vocabulary == vocabulary_target::cuda_prelude) return;
    if (target.vocabulary != vocabulary_target::inline_ptx) {
        b.define("kiln_streaming_vocabulary",
                 c + " kiln_load_streaming(global const " + c + "* p) { return *p; }\nvoid " +
                     "kiln_store_streaming(global " + c + "* p, " + c + " v) { *p = v; }\n");
        return;
    }
    // ld/st.global.cs: evict first, so that streamed data leaves the L2 cache before what the
    // kernel reads again.
    const bool wide = c.starts_with("double");
    const std::string v = wide ? "v2.f64" : "v2.f32";
    const std::string r = wide ? "d" : "f";
    b.define("kiln_streaming_vocabulary",
             c + " kiln_load_streaming(global const " + c + "* p) { " + c +
                 " v; asm(\"ld.global.cs." + v + " {%0, %1}, [%2];\" : \"=" + r + "\"(v.x), \"=" +
                 r + "\"(v.y) : \"l\"((ulong)p)); return v; }\nvoid kiln_store_streaming(global " +
                 c + "* p, " + c + " v) { asm volatile(\"st.global.cs." + v +
                 " [%0], {%1, %2};\" :: \"l\"((ulong)p), \"" + r + "\"(v.x), \"" + r +
                 "\"(v.y) : \"memory\"); }\n");
}

}  // namespace kiln::detail
