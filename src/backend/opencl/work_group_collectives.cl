// kiln's work-group collective functions for OpenCL devices without native ones (OpenCL C 1.2).
//
// Put before the program's sources when they call a collective and the device lacks them. The
// work_group_* names are macros that pass each kernel's scratch array, which kiln declares at the
// top of every kernel body (`local ulong kiln_collective_scratch[KILN_COLLECTIVE_SLOTS]`, one slot
// per work-item of the largest work-group). So on these devices collectives may be called in
// kernel bodies, not in helper functions (docs/runtime.md). Every collective begins with a barrier,
// so that it never overwrites the slots while the previous one is still reading them. Work-item 0
// combines the slots in local-id order: a tree would need a barrier per level inside a loop, which
// makes PoCL's compile time grow steeply with the number of collectives in a kernel (ten took
// minutes), and this helper is the correct fallback, not the fast path: generators that need speed
// ask kiln::detail::subgroup_support and write their own tree.
#define KILN_LOCAL_LINEAR_ID() \
    ((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0))
#define KILN_LOCAL_COUNT() (get_local_size(0) * get_local_size(1) * get_local_size(2))
#define KILN_OVERLOAD __attribute__((overloadable))
#define KILN_ADD(a, b) ((a) + (b))
#define KILN_MIN(a, b) ((b) < (a) ? (b) : (a))
#define KILN_MAX(a, b) ((a) < (b) ? (b) : (a))

#define KILN_COLLECTIVES_OF(T, OP, NAME, IDENTITY)                                          \
    T KILN_OVERLOAD kiln_work_group_reduce_##NAME(T x, local ulong* raw) {                  \
        local T* s = (local T*)raw;                                                         \
        const size_t l = KILN_LOCAL_LINEAR_ID(), n = KILN_LOCAL_COUNT();                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        s[l] = x;                                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        if (l == 0) {                                                                       \
            T total = s[0];                                                                 \
            for (size_t i = 1; i < n; ++i) total = OP(total, s[i]);                         \
            s[0] = total;                                                                   \
        }                                                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        return s[0];                                                                        \
    }                                                                                       \
    T KILN_OVERLOAD kiln_work_group_scan_##NAME(T x, int inclusive, local ulong* raw) {     \
        local T* s = (local T*)raw;                                                         \
        const size_t l = KILN_LOCAL_LINEAR_ID(), n = KILN_LOCAL_COUNT();                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        s[l] = x;                                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        if (l == 0)                                                                         \
            for (size_t i = 1; i < n; ++i) s[i] = OP(s[i - 1], s[i]);                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        return inclusive ? s[l] : l > 0 ? s[l - 1] : (T)(IDENTITY);                          \
    }

#define KILN_COLLECTIVES(T, LARGEST, SMALLEST)                                              \
    KILN_COLLECTIVES_OF(T, KILN_ADD, add, 0)                                                \
    KILN_COLLECTIVES_OF(T, KILN_MIN, min, LARGEST)                                          \
    KILN_COLLECTIVES_OF(T, KILN_MAX, max, SMALLEST)                                         \
    T KILN_OVERLOAD kiln_work_group_broadcast(T x, int is_source, local ulong* raw) {       \
        local T* s = (local T*)raw;                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        if (is_source) s[0] = x;                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        return s[0];                                                                        \
    }

KILN_COLLECTIVES(int, INT_MAX, INT_MIN)
KILN_COLLECTIVES(uint, UINT_MAX, 0)
KILN_COLLECTIVES(long, LONG_MAX, LONG_MIN)
KILN_COLLECTIVES(ulong, ULONG_MAX, 0)
KILN_COLLECTIVES(float, INFINITY, -INFINITY)
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
KILN_COLLECTIVES(double, INFINITY, -INFINITY)
#endif

/// Every work-item stores its own answer: the same value, so the race is harmless.
int kiln_work_group_vote(int predicate, int all, local ulong* raw) {
    local int* s = (local int*)raw;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (KILN_LOCAL_LINEAR_ID() == 0) s[0] = all;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (all ? !predicate : predicate) s[0] = !all;
    barrier(CLK_LOCAL_MEM_FENCE);
    return s[0];
}

#define work_group_reduce_add(x) kiln_work_group_reduce_add((x), kiln_collective_scratch)
#define work_group_reduce_min(x) kiln_work_group_reduce_min((x), kiln_collective_scratch)
#define work_group_reduce_max(x) kiln_work_group_reduce_max((x), kiln_collective_scratch)
#define work_group_scan_inclusive_add(x) kiln_work_group_scan_add((x), 1, kiln_collective_scratch)
#define work_group_scan_inclusive_min(x) kiln_work_group_scan_min((x), 1, kiln_collective_scratch)
#define work_group_scan_inclusive_max(x) kiln_work_group_scan_max((x), 1, kiln_collective_scratch)
#define work_group_scan_exclusive_add(x) kiln_work_group_scan_add((x), 0, kiln_collective_scratch)
#define work_group_scan_exclusive_min(x) kiln_work_group_scan_min((x), 0, kiln_collective_scratch)
#define work_group_scan_exclusive_max(x) kiln_work_group_scan_max((x), 0, kiln_collective_scratch)
#define work_group_any(p) kiln_work_group_vote((p), 0, kiln_collective_scratch)
#define work_group_all(p) kiln_work_group_vote((p), 1, kiln_collective_scratch)
#define KILN_BROADCAST_1(x, i) \
    kiln_work_group_broadcast((x), KILN_LOCAL_LINEAR_ID() == (i), kiln_collective_scratch)
#define KILN_BROADCAST_2(x, i, j)                                                   \
    kiln_work_group_broadcast((x), get_local_id(0) == (i) && get_local_id(1) == (j), \
                              kiln_collective_scratch)
#define KILN_BROADCAST_3(x, i, j, k)                                                  \
    kiln_work_group_broadcast(                                                        \
        (x), get_local_id(0) == (i) && get_local_id(1) == (j) && get_local_id(2) == (k), \
        kiln_collective_scratch)
#define KILN_PICK_BROADCAST(_1, _2, _3, _4, NAME, ...) NAME
#define work_group_broadcast(...) \
    KILN_PICK_BROADCAST(__VA_ARGS__, KILN_BROADCAST_3, KILN_BROADCAST_2, KILN_BROADCAST_1, )(__VA_ARGS__)
