// Float atomic_add/min/max for OpenCL devices, which have them only for integers: kiln prepends
// these overloads when a program's source names one of the functions (the CUDA prelude has them
// as well). Each is a compare-and-swap loop on the float's bits.
#define KILN_FLOAT_ATOMIC(name, space, combine)                                               \
    __attribute__((overloadable)) float name(volatile space float* p, float v) {              \
        volatile space uint* bits = (volatile space uint*)p;                                  \
        uint seen = *bits;                                                                     \
        for (;;) {                                                                             \
            const uint wanted = as_uint(combine(as_float(seen), v));                          \
            const uint before = atomic_cmpxchg(bits, seen, wanted);                            \
            if (before == seen) return as_float(before);                                      \
            seen = before;                                                                     \
        }                                                                                      \
    }
#define KILN_FLOAT_SUM(a, b) ((a) + (b))
KILN_FLOAT_ATOMIC(atomic_add, global, KILN_FLOAT_SUM)
KILN_FLOAT_ATOMIC(atomic_add, local, KILN_FLOAT_SUM)
KILN_FLOAT_ATOMIC(atomic_min, global, fmin)
KILN_FLOAT_ATOMIC(atomic_min, local, fmin)
KILN_FLOAT_ATOMIC(atomic_max, global, fmax)
KILN_FLOAT_ATOMIC(atomic_max, local, fmax)
#undef KILN_FLOAT_SUM
#undef KILN_FLOAT_ATOMIC
