// SPDX-License-Identifier: Apache-2.0
// Vector types (kiln::float4...) and KILN_STRUCTs: layouts against each device's compiler,
// buffers of them in hand-written kernels, kiln::vectors of them with components and fields in
// expressions.
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/device_param.hpp"
#include "test_data.hpp"

// [doc:kernel_struct]
KILN_STRUCT(particle, (kiln::float4, position), (kiln::float4, velocity), (float, mass));
// [/doc]

// Padding everywhere: a 1-byte field before 8-byte vectors, a 3-vector that takes 16 bytes, a
// 2-byte field at the end.
KILN_STRUCT(cell, (char, tag), (kiln::int2, index), (kiln::float3, normal), (std::uint16_t, flags));

// Double fields: the declaration enables fp64 itself, for programs that never name double.
KILN_STRUCT(sample, (float, weight), (double, value), (kiln::double2, range));

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(kernel_types, host_layouts_are_the_opencl_ones) {
    static_assert(sizeof(kiln::float2) == 8 && alignof(kiln::float2) == 8);
    static_assert(sizeof(kiln::float3) == 16 && alignof(kiln::float3) == 16);
    static_assert(sizeof(kiln::int4) == 16 && alignof(kiln::int4) == 16);
    static_assert(sizeof(kiln::double2) == 16 && alignof(kiln::double2) == 16);
    static_assert(sizeof(particle) == 48 && alignof(particle) == 16);
    EXPECT_EQ(offsetof(cell, index), 8u);
    EXPECT_EQ(offsetof(cell, normal), 16u);
    EXPECT_EQ(sizeof(cell), 48u);
    EXPECT_EQ(kiln::field_name<&particle::mass>(), "mass");
    EXPECT_EQ(kiln::field_name<&cell::normal>(), "normal");
    const std::string declaration = kiln::declarations<particle>();
    EXPECT_TRUE(contains(declaration, "float4 position;")) << declaration;
    EXPECT_TRUE(contains(declaration, "float mass;")) << declaration;
    EXPECT_TRUE(contains(kiln::declarations<cell>(), "ushort flags;"));
}

TEST(kernel_types, host_arithmetic_is_element_wise) {
    const kiln::float4 a{1, 2, 3, 4}, b{4, 3, 2, 1};
    EXPECT_EQ(a + b, (kiln::float4{5, 5, 5, 5}));
    EXPECT_EQ(a * 2, (kiln::float4{2, 4, 6, 8}));
    EXPECT_EQ(8.0f / a, (kiln::float4{8, 4, 8.0f / 3, 2}));
    EXPECT_EQ(-a - b, (kiln::float4{-5, -5, -5, -5}));
    kiln::int2 i{7, -7};
    i /= 2;
    EXPECT_EQ(i, (kiln::int2{3, -3}));
    EXPECT_EQ(a[3], 4.0f);
}

// Sums of vector types are not offered (each component's sum is: kiln::sum(component<0>(v))).
template <class V>
concept summable = requires(const V& v) {
    kiln::sum(v);
};
static_assert(!summable<kiln::vector<kiln::float4>>);
static_assert(summable<decltype(kiln::component<0>(std::declval<kiln::vector<kiln::float4>&>()))>);
// Components and fields of a const vector are read-only.
template <class V>
concept mass_assignable = requires(V& v) {
    kiln::field<&particle::mass>(v) = 1.0f;
};
static_assert(mass_assignable<kiln::vector<particle>>);
static_assert(!mass_assignable<const kiln::vector<particle>>);

class kernel_types : public kiln::test::device_queue_test {};

TEST_P(kernel_types, structs_written_by_kernels_read_back_field_by_field) {
    // The device fills every field; the host must find each value where its struct puts it.
    const std::string source = kiln::declarations<particle, cell>() + R"(
kernel void fill(global particle* p, global cell* c, uint n) {
    const uint i = get_global_id(0);
    if (i >= n) return;
    p[i].position = (float4)(i, i + 1, i + 2, i + 3);
    p[i].velocity = (float4)(-1.0f * i);
    p[i].mass = 0.5f * i;
    c[i].tag = (char)i;
    c[i].index = (int2)(i, -(int)i);
    c[i].normal = (float3)(1, 2, i);
    c[i].flags = (ushort)(1000 + i);
}
)";
    kiln::program prog(device(), source);
    const unsigned n = 5;
    kiln::buffer<particle> particles(q, n);
    kiln::buffer<cell> cells(q, n);
    prog.kernel("fill")(particles, cells, n).launch(q, {n});
    const auto p = particles.read(q);
    const auto c = cells.read(q);
    for (unsigned i = 0; i < n; ++i) {
        const float f = static_cast<float>(i);
        EXPECT_EQ(p[i].position, (kiln::float4{f, f + 1, f + 2, f + 3})) << i;
        EXPECT_EQ(p[i].velocity, (kiln::float4{-f, -f, -f, -f})) << i;
        EXPECT_EQ(p[i].mass, 0.5f * f) << i;
        EXPECT_EQ(c[i].tag, static_cast<char>(i)) << i;
        EXPECT_EQ(c[i].index, (kiln::int2{static_cast<int>(i), -static_cast<int>(i)})) << i;
        EXPECT_EQ(c[i].normal.x, 1.0f);
        EXPECT_EQ(c[i].normal.z, f);
        EXPECT_EQ(c[i].flags, 1000 + i) << i;
    }
}

TEST_P(kernel_types, structs_with_double_fields_lay_out_alike) {
    if (!has_double()) GTEST_SKIP() << "no double precision on this device";
    kiln::program prog(device(), kiln::declarations<sample>() + R"(
kernel void fill(global sample* s) {
    s[0].weight = 0.5f;
    s[0].value = 1.0 / 3.0;
    s[0].range = (double2)(-1.0e300, 2.5);
}
)");
    kiln::buffer<sample> samples(q, 1);
    prog.kernel("fill")(samples).launch(q, {1});
    const sample result = samples.read(q)[0];
    EXPECT_EQ(result.weight, 0.5f);
    EXPECT_EQ(result.value, 1.0 / 3.0);
    EXPECT_EQ(result.range, (kiln::double2{-1.0e300, 2.5}));
    // And in a generated kernel.
    kiln::vector<sample> v(q, {result, result});
    kiln::field<&sample::value>(v) = kiln::field<&sample::value>(v) * 3;
    EXPECT_EQ(v.read()[1].value, 1.0);
}

TEST_P(kernel_types, struct_buffers_bind_to_pointers_to_their_own_struct_only) {
    kiln::program prog(device(), kiln::declarations<particle, cell>() + R"(
kernel void tag(global cell* c) { c[0].tag = 9; }
kernel void clear(global void* p) { }
)");
    kiln::buffer<particle> particles(q, 1);
    try {
        prog.kernel("tag")(particles);
        ADD_FAILURE() << "a buffer of particle was bound to cell*";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_TRUE(contains(e.what(), "expects a buffer of cell, got a buffer of particle"))
            << e.what();
    }
    prog.kernel("clear")(particles).launch(q, {1}).wait();  // void* takes any buffer
    kiln::buffer<cell> cells(q, 1);
    prog.kernel("tag")(cells).launch(q, {1});
    EXPECT_EQ(cells.read(q)[0].tag, 9);
}

TEST_P(kernel_types, a_declaration_that_disagrees_with_the_struct_is_a_clear_error) {
    // The OpenCL C side declares `index` as a plain int: it lands at byte 4, the host's at 8.
    const std::string wrong =
        kiln::detail::struct_declaration("cell", sizeof(cell), alignof(cell),
                                         {{"tag", "char", offsetof(cell, tag)},
                                          {"index", "int", offsetof(cell, index)},
                                          {"normal", "float3", offsetof(cell, normal)},
                                          {"flags", "ushort", offsetof(cell, flags)}});
    try {
        kiln::program prog(device(), wrong + "kernel void k(global cell* c) { c[0].tag = 1; }\n");
        ADD_FAILURE() << "a program with a mismatched struct was built";
    } catch (const kiln::error& e) {
        EXPECT_EQ(e.code_name(), "KILN_STRUCT_LAYOUT_MISMATCH");
        EXPECT_TRUE(contains(e.what(), "struct cell: field 'index' is at byte 4")) << e.what();
        EXPECT_TRUE(contains(e.what(), "but at byte 8 on the host")) << e.what();
    }
}

TEST_P(kernel_types, vector_type_buffers_bind_to_their_pointer_type_only) {
    kiln::program prog(device(), R"(
kernel void twice(global float4* v) { v[get_global_id(0)] *= 2.0f; }
)");
    kiln::buffer<kiln::float4> v(q, {kiln::float4{1, 2, 3, 4}, kiln::float4{-1, 0, 0.5f, 8}});
    prog.kernel("twice")(v).launch(q, {2});
    EXPECT_EQ(v.read(q), (std::vector<kiln::float4>{{2, 4, 6, 8}, {-2, 0, 1, 16}}));
    kiln::buffer<float> floats(q, 8);
    try {
        prog.kernel("twice")(floats);
        ADD_FAILURE() << "a buffer of float was bound to float4*";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_TRUE(contains(e.what(), "expects a buffer of float4, got a buffer of float"))
            << e.what();
    }
}

std::vector<kiln::float4> test_float4s(std::size_t n, float seed) {
    std::vector<kiln::float4> host(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float f = static_cast<float>(i % 97) + seed;
        host[i] = {f, -f, 0.25f * f, 1.0f + f};
    }
    return host;
}

TEST_P(kernel_types, float4_vectors_compute_element_wise) {
    for (std::size_t n : kiln::test::edge_sizes()) {
        const auto host_a = test_float4s(n, 1.0f), host_b = test_float4s(n, 3.0f);
        // [doc:float4_vectors]
        kiln::vector<kiln::float4> a(q, host_a), b(q, host_b), c(q, n);
        c = 2 * a + b / 4.0f - a * b;
        kiln::vector<float> lengths(q, n);
        lengths = sqrt(kiln::component<0>(c) * kiln::component<0>(c) +
                       kiln::component<1>(c) * kiln::component<1>(c));
        kiln::component<3>(c) = -kiln::component<3>(a);  // writes only the w components
        // [/doc]
        const auto result = c.read();
        const auto length = lengths.read();
        for (std::size_t i = 0; i < n; ++i) {
            const kiln::float4 expected = 2 * host_a[i] + host_b[i] / 4.0f - host_a[i] * host_b[i];
            for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(result[i][k], expected[k]) << i;
            EXPECT_EQ(result[i].w, -host_a[i].w) << i;
            EXPECT_FLOAT_EQ(length[i], std::sqrt(expected.x * expected.x + expected.y * expected.y))
                << i;
        }
    }
}

TEST_P(kernel_types, nan_stays_in_its_component) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    kiln::vector<kiln::float4> v(q, {kiln::float4{1, nan, 3, 4}, kiln::float4{nan, 2, 2, 2}});
    kiln::vector<kiln::float4> w(q, 2);
    w = v + 1.0f;
    const auto host = w.read();
    EXPECT_EQ(host[0].x, 2.0f);
    EXPECT_TRUE(std::isnan(host[0].y));
    EXPECT_EQ(host[0].w, 5.0f);
    EXPECT_TRUE(std::isnan(host[1].x));
    EXPECT_EQ(host[1].y, 3.0f);
    kiln::vector<float> y(q, 2);
    y = kiln::component<1>(w);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(static_cast<float>(y[1]), 3.0f);
}

TEST_P(kernel_types, vectors_of_other_vector_types_fill_and_add) {
    kiln::vector<kiln::int2> i(q, 7);
    i = kiln::int2{3, -4};
    i += kiln::int2{1, 1};
    EXPECT_EQ(i.read(), std::vector<kiln::int2>(7, kiln::int2{4, -3}));
    kiln::vector<kiln::uint4> u(q, {kiln::uint4{1, 2, 3, 4}});
    u = u * 3u;
    EXPECT_EQ(u.read(), std::vector<kiln::uint4>{(kiln::uint4{3, 6, 9, 12})});
    if (!has_double()) return;
    kiln::vector<kiln::double2> d(q, {kiln::double2{0.5, 1e300}});
    d = d * 2.0;
    EXPECT_EQ(d.read(), std::vector<kiln::double2>{(kiln::double2{1.0, 2e300})});
}

TEST_P(kernel_types, struct_fields_are_read_and_assigned_in_expressions) {
    for (std::size_t n : kiln::test::edge_sizes()) {
        std::vector<particle> host(n);
        for (std::size_t i = 0; i < n; ++i) {
            const float f = static_cast<float>(i % 31);
            host[i] = {{f, f, f, 1}, {1, -1, 0.5f, 0}, 1.0f + f};
        }
        const float dt = 0.125f;
        // [doc:struct_fields]
        kiln::vector<particle> particles(q, host);
        auto position = kiln::field<&particle::position>(particles);
        auto velocity = kiln::field<&particle::velocity>(particles);
        auto mass = kiln::field<&particle::mass>(particles);
        position = position + dt * velocity;
        kiln::vector<float> kinetic(q, n);
        kinetic = 0.5f * mass * dot(velocity, velocity);
        // [/doc]
        const auto result = particles.read();
        const auto energy = kinetic.read();
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(result[i].position, host[i].position + dt * host[i].velocity) << i;
            EXPECT_EQ(result[i].velocity, host[i].velocity) << i;
            EXPECT_EQ(result[i].mass, host[i].mass) << i;
            EXPECT_FLOAT_EQ(energy[i], 0.5f * host[i].mass * 2.25f) << i;
        }
    }
}

TEST_P(kernel_types, struct_fields_are_gathered_through_raw_pointers) {
    // A generated kernel whose only use of the struct is a raw pointer must still declare it.
    const std::size_t n = 7;
    std::vector<particle> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i].mass = static_cast<float>(i);
    kiln::vector<particle> particles(q, host);
    kiln::vector<float> reversed(q, n);
    reversed = kiln::field<&particle::mass>(
        kiln::raw_pointer(particles)[static_cast<std::uint64_t>(n - 1) - kiln::element_index()]);
    EXPECT_EQ(reversed.read(), (std::vector<float>{6, 5, 4, 3, 2, 1, 0}));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(kernel_types);

}  // namespace
