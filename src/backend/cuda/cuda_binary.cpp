// SPDX-License-Identifier: Apache-2.0
// Reading and writing the CUDA program binary: a small little-endian header, then the image.
#include "backend/cuda/cuda_binary.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kiln::detail::cuda {

namespace {

// Bump the version whenever the layout or the meaning of a field changes.
constexpr std::string_view magic = "KILNCUDA";
constexpr std::uint32_t format_version = 1;

class writer {
  public:
    void u32(std::uint32_t value) {
        for (int i = 0; i < 4; ++i)
            bytes.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
    }
    void u64(std::uint64_t value) {
        for (int i = 0; i < 8; ++i)
            bytes.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
    }
    void raw(const void* data, std::size_t size) {
        const auto* begin = static_cast<const std::byte*>(data);
        bytes.insert(bytes.end(), begin, begin + size);
    }
    void text(const std::string& s) {
        u32(static_cast<std::uint32_t>(s.size()));
        raw(s.data(), s.size());
    }
    std::vector<std::byte> bytes;
};

class reader {
  public:
    explicit reader(std::span<const std::byte> bytes) : rest_(bytes) {}
    bool u32(std::uint32_t& value) {
        std::uint64_t wide = 0;
        if (!little_endian(4, wide)) return false;
        value = static_cast<std::uint32_t>(wide);
        return true;
    }
    bool u64(std::uint64_t& value) { return little_endian(8, value); }
    bool raw(void* out, std::size_t size) {
        if (rest_.size() < size) return false;
        if (size != 0) std::memcpy(out, rest_.data(), size);
        rest_ = rest_.subspan(size);
        return true;
    }
    bool text(std::string& s) {
        std::uint32_t size = 0;
        if (!u32(size) || rest_.size() < size) return false;
        s.assign(reinterpret_cast<const char*>(rest_.data()), size);
        rest_ = rest_.subspan(size);
        return true;
    }
    std::size_t remaining() const noexcept { return rest_.size(); }

  private:
    bool little_endian(int count, std::uint64_t& value) {
        if (rest_.size() < static_cast<std::size_t>(count)) return false;
        value = 0;
        for (int i = 0; i < count; ++i)
            value |= std::uint64_t(std::to_integer<unsigned>(rest_[i])) << (8 * i);
        rest_ = rest_.subspan(count);
        return true;
    }
    std::span<const std::byte> rest_;
};

}  // namespace

std::vector<std::byte> pack_binary(const program_binary& binary) {
    writer out;
    out.raw(magic.data(), magic.size());
    out.u32(format_version);
    out.u32(static_cast<std::uint32_t>(binary.architecture));
    out.u32(binary.is_cubin ? 1 : 0);
    out.u32(static_cast<std::uint32_t>(binary.kernels.size()));
    for (const auto& kernel : binary.kernels) {
        out.text(kernel.name);
        out.text(kernel.symbol);
        out.u32(static_cast<std::uint32_t>(kernel.parameters.size()));
        for (const auto& parameter : kernel.parameters) {
            out.u32(static_cast<std::uint32_t>(parameter.space));
            out.u32(parameter.pointee_const ? 1 : 0);
            out.text(parameter.type_name);
            out.text(parameter.name);
        }
    }
    out.u64(binary.image.size());
    out.raw(binary.image.data(), binary.image.size());
    return std::move(out.bytes);
}

std::optional<program_binary> unpack_binary(std::span<const std::byte> bytes) {
    reader in(bytes);
    char header[magic.size()];
    std::uint32_t version = 0, architecture = 0, is_cubin = 0, kernel_count = 0;
    if (!in.raw(header, sizeof header) || std::string_view(header, sizeof header) != magic)
        return std::nullopt;
    if (!in.u32(version) || version != format_version) return std::nullopt;
    if (!in.u32(architecture) || !in.u32(is_cubin) || is_cubin > 1 || !in.u32(kernel_count))
        return std::nullopt;

    program_binary binary;
    binary.architecture = static_cast<int>(architecture);
    binary.is_cubin = is_cubin == 1;
    for (std::uint32_t k = 0; k < kernel_count; ++k) {
        kernel_signature kernel;
        std::uint32_t parameter_count = 0;
        if (!in.text(kernel.name) || !in.text(kernel.symbol) || !in.u32(parameter_count))
            return std::nullopt;
        for (std::uint32_t p = 0; p < parameter_count; ++p) {
            parameter_info parameter;
            std::uint32_t space = 0, pointee_const = 0;
            if (!in.u32(space) ||
                space > static_cast<std::uint32_t>(parameter_info::address_space::private_) ||
                !in.u32(pointee_const) || !in.text(parameter.type_name) || !in.text(parameter.name))
                return std::nullopt;
            parameter.space = static_cast<parameter_info::address_space>(space);
            parameter.pointee_const = pointee_const != 0;
            kernel.parameters.push_back(std::move(parameter));
        }
        binary.kernels.push_back(std::move(kernel));
    }
    std::uint64_t image_size = 0;
    if (!in.u64(image_size) || image_size != in.remaining() || image_size == 0) return std::nullopt;
    binary.image.resize(image_size);
    in.raw(binary.image.data(), image_size);
    return binary;
}

}  // namespace kiln::detail::cuda
