// SPDX-License-Identifier: Apache-2.0
// Internals of the OpenCL C to CUDA translation shared by its parts: vocabulary, tokens,
// translator.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/opencl_c_translation.hpp"

namespace kiln::detail::cuda::opencl_c {

// --- vocabulary (opencl_c_vocabulary.cpp) --------------------------------------------------

bool is_vector_type(std::string_view name);

/// Names that are plain identifiers in C but keywords in C++: renamed consistently.
extern const std::set<std::string_view> cxx_only_keywords;

/// Work-item functions that read the launch's global size or offset (see the prelude).
extern const std::set<std::string_view> launch_dependent_functions;

/// Why an OpenCL C name cannot be translated, or nullopt when it can. Function names count only
/// where they are called, so that a variable such as work_group_size stays usable.
std::optional<std::string> unsupported_feature(std::string_view name, bool called);

inline constexpr std::string_view unsupported_prefix = "kiln_unsupported__";

// --- tokens (opencl_c_lexer.cpp) -----------------------------------------------------------

enum class token_kind { identifier, number, literal, punctuator, header_name, generated };

struct token {
    token_kind kind = token_kind::punctuator;
    std::string text;
    std::string leading;  ///< whitespace before the token; comments blanked, newlines kept
    int line = 0;
    std::size_t file = 0;
    bool starts_line = false;
    bool in_directive = false;
    std::optional<std::string> replacement;
    std::string prefix, suffix;

    std::string_view output_text() const {
        return replacement ? std::string_view(*replacement) : text;
    }
    bool is(std::string_view s) const { return kind != token_kind::generated && text == s; }
};

struct source_file {
    std::string name;                 ///< as #line names it
    std::filesystem::path directory;  ///< for #include "..." next to it; empty for strings
};

/// Throws build_error with a log line in NVRTC's format.
[[noreturn]] void fail(const std::string& file, int line, const std::string& message);

bool is_identifier_start(char c);
bool is_identifier_char(char c);

/// The tokens of one file, keeping line structure in their leading whitespace; the last one is
/// a generated token holding the whitespace after the last real one.
std::vector<token> lex(std::string_view text, std::size_t file, const std::string& file_name);

// --- the translator --------------------------------------------------------------------------

/// One program's translation. Its parts live in opencl_c_translation.cpp (reading files,
/// declarations, navigation), opencl_c_rewrite.cpp (rules per token), opencl_c_printf.cpp (%v)
/// and opencl_c_kernels.cpp (kernel signatures and entry points).
class translator {
  public:
    explicit translator(const translation_options& options) : options_(options) {
        for (const auto& [name, value] : options.macros) record_alias(name, value);
    }

    translation run(std::span<const std::string> sources);

  private:
    /// A kernel with a body becomes a __device__ function, kiln_body_<name>, that other kernels
    /// may call (OpenCL C allows it, CUDA cannot call a __global__), and the __global__ entry
    /// point under the kernel's symbol that sets up the launch and calls it.
    struct kernel_body {
        std::string name;
        std::string symbol;
        std::string launch_bounds;  ///< "__launch_bounds__(n) " or empty
        std::size_t open_brace;     ///< index of the body's `{`
        std::size_t close_brace;
        /// Token ranges [first, end) of the parameters, and the names the body receives them by.
        std::vector<std::pair<std::size_t, std::size_t>> parameters;
        std::vector<std::string> argument_names;
        /// Per local pointer parameter: the entry point's line that turns its offset into it.
        std::map<std::size_t, std::string> local_declarations;
        /// The positions of the constant pointer parameters, read from __constant__ areas.
        std::set<std::size_t> constant_parameters;
        /// The positions of the tile map parameters (kiln_tile_map by value): the entry point
        /// declares them __grid_constant__, so that the body, which receives them by reference,
        /// hands the copies the address of the launch's own bytes
        /// (include/kiln/detail/tile_map.hpp).
        std::map<std::size_t, std::string> tile_map_parameters;
    };

    // --- reading files --------------------------------------------------------------------
    void append_file(std::string_view text, std::size_t file,
                     std::vector<std::string>& include_stack);
    std::optional<std::filesystem::path> find_include(const std::string& name,
                                                      const std::filesystem::path& local_dir);

    // --- declarations seen anywhere: macro and typedef aliases, struct members ------------
    void record_alias(const std::string& name, const std::string& value);
    void collect_declarations();
    /// Every name `name` may stand for through macro and typedef aliases, itself included.
    const std::set<std::string>& meanings(const std::string& name) const;
    bool means_any(const token& t, std::initializer_list<std::string_view> words) const;
    bool means_vector_type(const token& t) const;
    /// The single identifier a macro finally stands for, or the name itself.
    std::string resolved(const std::string& name) const;

    bool is_kernel_keyword(const token& t) const { return means_any(t, {"kernel", "__kernel"}); }
    static std::string body_name(const std::string& kernel) { return "kiln_body_" + kernel; }
    /// A call of a kernel function, `name(`, that is not the kernel's own declaration.
    bool calls_kernel(std::size_t i) const {
        const token& t = tokens_[i];
        return t.kind == token_kind::identifier && !t.replacement &&
               kernel_names_.contains(resolved(t.text)) && next(i).is("(");
    }
    bool is_local_keyword(const token& t) const { return means_any(t, {"local", "__local"}); }
    bool is_constant_keyword(const token& t) const {
        return means_any(t, {"constant", "__constant"});
    }
    /// Address spaces that CUDA does not need, and the image access qualifiers: an image's
    /// texture objects read it and its surface object writes it either way.
    bool is_dropped_qualifier(const token& t) const {
        return means_any(t, {"global", "__global", "private", "__private", "read_only",
                             "__read_only", "write_only", "__write_only"});
    }
    bool is_address_space(const token& t) const {
        return is_local_keyword(t) || is_constant_keyword(t) || is_dropped_qualifier(t);
    }

    // --- token navigation -----------------------------------------------------------------
    std::size_t next_index(std::size_t i) const {
        std::size_t j = i + 1;
        while (j + 1 < tokens_.size() && tokens_[j].kind == token_kind::generated) ++j;
        return std::min(j, tokens_.size() - 1);
    }
    const token& next(std::size_t i) const { return tokens_[next_index(i)]; }
    std::optional<std::size_t> previous_index(std::size_t i) const {
        while (i > 0) {
            --i;
            if (tokens_[i].kind != token_kind::generated) return i;
        }
        return std::nullopt;
    }
    /// The bracket closing the one at `open`, in the same region (directive or not).
    std::size_t matching(std::size_t open) const;
    const std::string& file_name(const token& t) const { return files_[t.file].name; }

    // --- the rewrite (opencl_c_rewrite.cpp) -----------------------------------------------
    void rewrite();
    /// Rewrites a preprocessing directive; returns the index of its last token.
    std::size_t rewrite_directive(std::size_t hash);
    void rename_if_keyword(token& t);
    void rewrite_token(std::size_t i, bool at_file_scope);
    void declare_host_writable_constant(std::size_t qualifier);
    /// Whether the declaration that starts after a `local` qualifier declares a pointer.
    bool declares_pointer(std::size_t qualifier) const;
    void rewrite_vector_literal(std::size_t open);
    void rewrite_component_access(std::size_t member);

    // --- printf with %v (opencl_c_printf.cpp) ---------------------------------------------
    void rewrite_vector_printf(std::size_t printf_token);
    bool has_vector_format(std::size_t printf_token) const;

    // --- kernels (opencl_c_kernels.cpp) ---------------------------------------------------
    /// The index of the name the kernel qualifier at `qualifier` declares, if it can be found.
    std::optional<std::size_t> kernel_name_index(std::size_t qualifier) const;
    /// Rewrites the declaration that starts with the kernel qualifier at `qualifier`; returns the
    /// index of the body's `{`, or 0 for a prototype.
    std::size_t translate_kernel(std::size_t qualifier);
    std::optional<std::string> required_work_group_size(std::size_t open, std::size_t close) const;
    parameter_info translate_parameter(std::size_t first, std::size_t end, std::size_t position,
                                       kernel_body& body);
    void finish_kernel_prologues();
    /// The __constant__ areas of `body`'s constant parameters, declared before its entry point,
    /// and the entry point's lines that pass them to the body in place of pointer arguments.
    std::string constant_area_declarations(const kernel_body& body, std::size_t bytes) const;
    static std::string constant_area_arguments(const kernel_body& body);

    const translation_options& options_;
    std::vector<source_file> files_;
    std::vector<token> tokens_;
    std::map<std::string, std::set<std::string>> aliases_;
    mutable std::map<std::string, std::set<std::string>> meanings_cache_;
    std::set<std::string> struct_members_;
    std::vector<kernel_signature> kernels_;
    std::set<std::string> kernel_names_;
    std::vector<kernel_body> bodies_;
    bool kernels_need_shared_launch_ = false;
    bool program_scope_constants_ = false;
    bool contraction_off_ = false;
};

}  // namespace kiln::detail::cuda::opencl_c
