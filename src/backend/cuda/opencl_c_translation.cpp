// The OpenCL C to CUDA C++ rewrite: a lexer that keeps line structure, then rules per token.
#include "backend/cuda/opencl_c_translation.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

#include "backend/cuda/opencl_c_prelude.hpp"

namespace kiln::detail::cuda {

namespace {

using namespace std::string_view_literals;

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

constexpr std::array scalar_type_names{"char"sv, "uchar"sv, "short"sv, "ushort"sv, "int"sv,
                                       "uint"sv, "long"sv,  "ulong"sv, "float"sv,  "double"sv};
constexpr std::array vector_widths{"2"sv, "3"sv, "4"sv, "8"sv, "16"sv};

bool is_vector_type(std::string_view name) {
    for (auto scalar : scalar_type_names) {
        if (!name.starts_with(scalar)) continue;
        auto width = name.substr(scalar.size());
        if (std::find(vector_widths.begin(), vector_widths.end(), width) != vector_widths.end())
            return true;
    }
    return false;
}

// Names that are plain identifiers in C but keywords in C++: renamed consistently.
const std::set<std::string_view> cxx_only_keywords{
    "alignas",      "alignof",       "and",         "and_eq",       "asm",
    "bitand",       "bitor",         "catch",       "char8_t",      "char16_t",
    "char32_t",     "class",         "co_await",    "co_return",    "co_yield",
    "compl",        "concept",       "consteval",   "constexpr",    "constinit",
    "const_cast",   "decltype",      "delete",      "dynamic_cast", "explicit",
    "export",       "friend",        "mutable",     "namespace",    "new",
    "noexcept",     "not",           "not_eq",      "nullptr",      "operator",
    "or",           "or_eq",         "protected",   "public",       "reinterpret_cast",
    "requires",     "static_assert", "static_cast", "template",     "this",
    "thread_local", "throw",         "try",         "typeid",       "typename",
    "using",        "virtual",       "wchar_t",     "xor",          "xor_eq"};

// Work-item functions that read the launch's global size or offset (see the prelude).
const std::set<std::string_view> launch_dependent_functions{
    "get_global_id",      "get_global_size", "get_global_offset",
    "get_local_size",     "get_work_dim",    "get_global_linear_id",
    "get_num_sub_groups", "get_group_id",    "get_num_groups"};

/// Why an OpenCL C name cannot be translated, or nullopt when it can. Function names count only
/// where they are called, so that a variable such as work_group_size stays usable.
std::optional<std::string> unsupported_feature(std::string_view name, bool called) {
    static const std::map<std::string_view, std::string_view> names{
        {"sampler_t", "images and samplers"},
        {"read_only", "image access qualifiers"},
        {"write_only", "image access qualifiers"},
        {"read_write", "image access qualifiers"},
        {"__read_only", "image access qualifiers"},
        {"__write_only", "image access qualifiers"},
        {"__read_write", "image access qualifiers"},
        {"half", "the half type"},
        {"half2", "the half type"},
        {"half3", "the half type"},
        {"half4", "the half type"},
        {"half8", "the half type"},
        {"half16", "the half type"},
        {"__generic", "the generic address space (OpenCL C 2.0)"},
        {"reserve_id_t", "pipes (OpenCL C 2.0)"},
        {"queue_t", "device-side enqueue (OpenCL C 2.0)"},
        {"clk_event_t", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_t", "device-side enqueue (OpenCL C 2.0)"},
        {"atomic_int", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_uint", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_long", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_ulong", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_float", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_double", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_flag", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_intptr_t", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_uintptr_t", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_size_t", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_ptrdiff_t", "C11-style atomics (OpenCL C 2.0)"},
        {"kiln_vector_printf",
         "printf with a vector conversion (%v) whose format is not a "
         "string literal or with more than 16 components"},
    };
    static const std::map<std::string_view, std::string_view> functions{
        {"to_global", "address space casts (OpenCL C 2.0)"},
        {"to_local", "address space casts (OpenCL C 2.0)"},
        {"to_private", "address space casts (OpenCL C 2.0)"},
        {"get_fence", "address space queries (OpenCL C 2.0)"},
        {"read_pipe", "pipes (OpenCL C 2.0)"},
        {"write_pipe", "pipes (OpenCL C 2.0)"},
        {"reserve_read_pipe", "pipes (OpenCL C 2.0)"},
        {"reserve_write_pipe", "pipes (OpenCL C 2.0)"},
        {"commit_read_pipe", "pipes (OpenCL C 2.0)"},
        {"commit_write_pipe", "pipes (OpenCL C 2.0)"},
        {"get_pipe_num_packets", "pipes (OpenCL C 2.0)"},
        {"get_pipe_max_packets", "pipes (OpenCL C 2.0)"},
        {"enqueue_kernel", "device-side enqueue (OpenCL C 2.0)"},
        {"enqueue_marker", "device-side enqueue (OpenCL C 2.0)"},
        {"get_default_queue", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_1D", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_2D", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_3D", "device-side enqueue (OpenCL C 2.0)"},
        {"retain_event", "device-side enqueue (OpenCL C 2.0)"},
        {"release_event", "device-side enqueue (OpenCL C 2.0)"},
        {"create_user_event", "device-side enqueue (OpenCL C 2.0)"},
        {"set_user_event_status", "device-side enqueue (OpenCL C 2.0)"},
        {"capture_event_profiling_info", "device-side enqueue (OpenCL C 2.0)"},
        {"get_kernel_work_group_size", "device-side enqueue (OpenCL C 2.0)"},
        {"get_kernel_preferred_work_group_size_multiple", "device-side enqueue (OpenCL C 2.0)"},
        {"atomic_init", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_work_item_fence", "C11-style atomics (OpenCL C 2.0)"},
        {"shuffle", "shuffle and shuffle2"},
        {"shuffle2", "shuffle and shuffle2"},
    };
    struct prefix_rule {
        std::string_view prefix;
        std::string_view feature;
        bool call_only;
    };
    static constexpr std::array<prefix_rule, 19> prefixes{{
        {"image1d_", "images and samplers", false},
        {"image2d_", "images and samplers", false},
        {"image3d_", "images and samplers", false},
        {"CLK_ADDRESS_", "images and samplers", false},
        {"CLK_FILTER_", "images and samplers", false},
        {"CLK_NORMALIZED_COORDS_", "images and samplers", false},
        {"memory_order_", "C11-style atomics (OpenCL C 2.0)", false},
        {"memory_scope_", "C11-style atomics (OpenCL C 2.0)", false},
        {"read_image", "images and samplers", true},
        {"write_image", "images and samplers", true},
        {"get_image_", "images and samplers", true},
        {"vload_half", "half-precision loads and stores", true},
        {"vstore_half", "half-precision loads and stores", true},
        {"vloada_half", "half-precision loads and stores", true},
        {"vstorea_half", "half-precision loads and stores", true},
        {"atomic_load", "C11-style atomics (OpenCL C 2.0)", true},
        {"atomic_store", "C11-style atomics (OpenCL C 2.0)", true},
        {"atomic_exchange", "C11-style atomics (OpenCL C 2.0)", true},
        {"atomic_fetch_", "C11-style atomics (OpenCL C 2.0)", true},
    }};
    if (auto found = names.find(name); found != names.end()) return std::string(found->second);
    if (called) {
        if (auto found = functions.find(name); found != functions.end())
            return std::string(found->second);
        if (name.starts_with("atomic_compare_exchange") || name.starts_with("atomic_flag_"))
            return "C11-style atomics (OpenCL C 2.0)";
    }
    for (const auto& rule : prefixes)
        if (name.starts_with(rule.prefix) && (called || !rule.call_only))
            return std::string(rule.feature);
    return std::nullopt;
}

constexpr std::string_view unsupported_prefix = "kiln_unsupported__";

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------

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

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
    throw build_error("OpenCL C translation", 0, "KILN_TRANSLATION_ERROR",
                      file + "(" + std::to_string(line) + "): error: " + message + "\n");
}

bool is_identifier_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string c_string_literal(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

class lexer {
  public:
    lexer(std::string_view text, std::size_t file, const std::string& file_name)
        : text_(text), file_(file), file_name_(file_name) {}

    std::vector<token> run() {
        std::vector<token> tokens;
        bool line_start = true;
        bool in_directive = false;
        bool expect_header_name = false;
        while (true) {
            std::string leading;
            const bool newline = skip_trivia(leading);
            if (newline) {
                line_start = true;
                in_directive = false;
            }
            if (pos_ >= text_.size()) {
                token end;
                end.kind = token_kind::generated;
                end.leading = std::move(leading);
                end.line = line_;
                end.file = file_;
                tokens.push_back(std::move(end));
                return tokens;
            }
            token t;
            t.leading = std::move(leading);
            t.line = line_;
            t.file = file_;
            t.starts_line = line_start;
            if (line_start && text_[pos_] == '#') in_directive = true;
            t.in_directive = in_directive;
            line_start = false;
            if (expect_header_name && (text_[pos_] == '<' || text_[pos_] == '"')) {
                lex_header_name(t);
            } else {
                lex_token(t);
            }
            expect_header_name = in_directive && t.kind == token_kind::identifier &&
                                 t.text == "include" && tokens.size() >= 1 &&
                                 tokens.back().is("#") && tokens.back().starts_line;
            tokens.push_back(std::move(t));
        }
    }

  private:
    // Returns whether an unescaped newline was crossed (it ends a directive).
    bool skip_trivia(std::string& leading) {
        bool newline = false;
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == '\n') {
                newline = true;
                leading += c;
                ++line_;
                ++pos_;
            } else if (c == '\\' && pos_ + 1 < text_.size() &&
                       (text_[pos_ + 1] == '\n' ||
                        (text_[pos_ + 1] == '\r' && pos_ + 2 < text_.size() &&
                         text_[pos_ + 2] == '\n'))) {
                const std::size_t length = text_[pos_ + 1] == '\n' ? 2 : 3;
                leading.append(text_.substr(pos_, length));
                ++line_;
                pos_ += length;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                leading += c;
                ++pos_;
            } else if (text_.substr(pos_, 2) == "//") {
                while (pos_ < text_.size() && text_[pos_] != '\n') {
                    // A backslash at the end of a // comment continues it, as in C.
                    if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
                        leading += "\\\n";
                        ++line_;
                        pos_ += 2;
                        continue;
                    }
                    ++pos_;
                }
                leading += ' ';
            } else if (text_.substr(pos_, 2) == "/*") {
                const int start_line = line_;
                const auto end = text_.find("*/", pos_ + 2);
                if (end == std::string_view::npos)
                    fail(file_name_, start_line, "unterminated /* comment");
                leading += ' ';
                for (auto i = pos_; i < end; ++i) {
                    if (text_[i] == '\n') {
                        leading += '\n';
                        ++line_;
                    }
                }
                pos_ = end + 2;
            } else {
                break;
            }
        }
        return newline;
    }

    void lex_header_name(token& t) {
        const char close = text_[pos_] == '<' ? '>' : '"';
        const auto end = text_.find(close, pos_ + 1);
        const auto line_end = text_.find('\n', pos_);
        if (end == std::string_view::npos || (line_end != std::string_view::npos && end > line_end))
            fail(file_name_, line_, "unterminated file name in #include");
        t.kind = token_kind::header_name;
        t.text = std::string(text_.substr(pos_, end + 1 - pos_));
        pos_ = end + 1;
    }

    void lex_token(token& t) {
        const char c = text_[pos_];
        const std::size_t start = pos_;
        if (is_identifier_start(c)) {
            while (pos_ < text_.size() && is_identifier_char(text_[pos_])) ++pos_;
            const auto word = text_.substr(start, pos_ - start);
            // Encoding prefixes belong to the literal that follows.
            if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'') &&
                (word == "L" || word == "u" || word == "U" || word == "u8")) {
                lex_literal(t, start);
                return;
            }
            t.kind = token_kind::identifier;
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '.' && pos_ + 1 < text_.size() &&
                    std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
            ++pos_;
            while (pos_ < text_.size()) {
                const char d = text_[pos_];
                if ((d == '+' || d == '-') &&
                    std::string_view("eEpP").find(text_[pos_ - 1]) != std::string_view::npos) {
                    ++pos_;
                } else if (is_identifier_char(d) || d == '.') {
                    ++pos_;
                } else {
                    break;
                }
            }
            t.kind = token_kind::number;
        } else if (c == '"' || c == '\'') {
            lex_literal(t, start);
            return;
        } else {
            static constexpr std::array punctuators{
                "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
                "&&",  "||",  "*=",  "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "::"};
            std::size_t length = 1;
            for (std::string_view p : punctuators) {
                if (text_.substr(pos_, p.size()) == p) {
                    length = p.size();
                    break;
                }
            }
            pos_ += length;
            t.kind = token_kind::punctuator;
        }
        t.text = std::string(text_.substr(start, pos_ - start));
    }

    void lex_literal(token& t, std::size_t start) {
        while (text_[pos_] != '"' && text_[pos_] != '\'') ++pos_;
        const char quote = text_[pos_++];
        while (true) {
            if (pos_ >= text_.size() || text_[pos_] == '\n')
                fail(file_name_, line_,
                     quote == '"' ? "unterminated string literal"
                                  : "unterminated character literal");
            if (text_[pos_] == '\\') {
                pos_ += 2;
                continue;
            }
            if (text_[pos_++] == quote) break;
        }
        t.kind = token_kind::literal;
        t.text = std::string(text_.substr(start, pos_ - start));
    }

    std::string_view text_;
    std::size_t file_;
    const std::string& file_name_;
    std::size_t pos_ = 0;
    int line_ = 1;
};

// ---------------------------------------------------------------------------------------------
// The translator
// ---------------------------------------------------------------------------------------------

class translator {
  public:
    explicit translator(const translation_options& options) : options_(options) {
        for (const auto& [name, value] : options.macros) record_alias(name, value);
    }

    translation run(std::span<const std::string> sources) {
        std::vector<std::size_t> source_starts;
        for (std::size_t i = 0; i < sources.size(); ++i) {
            source_starts.push_back(tokens_.size());
            files_.push_back({source_file_name(i), {}});
            std::vector<std::string> include_stack;
            append_file(sources[i], files_.size() - 1, include_stack);
        }
        collect_declarations();
        rewrite();
        finish_kernel_prologues();

        translation result;
        std::string& out = result.source;
        out += "#include \"" + std::string(opencl_c_prelude_name) + "\"\nnamespace kiln_opencl {\n";
        std::size_t next_source = 0;
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            while (next_source < source_starts.size() && source_starts[next_source] == i)
                out += "\n#line 1 " + c_string_literal(source_file_name(next_source++)) + "\n";
            const token& t = tokens_[i];
            out += t.leading;
            out += t.prefix;
            out += t.output_text();
            out += t.suffix;
        }
        out += "\n}  // namespace kiln_opencl\n";
        result.kernels = std::move(kernels_);
        result.contraction_off = contraction_off_;
        return result;
    }

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
    };

    // --- reading files --------------------------------------------------------------------
    void append_file(std::string_view text, std::size_t file,
                     std::vector<std::string>& include_stack) {
        auto tokens = lexer(text, file, files_[file].name).run();
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            token& t = tokens[i];
            const bool include = t.is("#") && t.starts_line && i + 2 < tokens.size() &&
                                 tokens[i + 1].in_directive && tokens[i + 1].is("include");
            if (!include) {
                tokens_.push_back(std::move(t));
                continue;
            }
            const token& target = tokens[i + 2];
            if (target.kind != token_kind::header_name || !target.in_directive ||
                tokens[i + 2].starts_line)
                fail(files_[file].name, t.line,
                     "#include needs a file name in \"\" or <>; a macro is not supported");
            const std::string wanted = target.text.substr(1, target.text.size() - 2);
            const auto path =
                find_include(wanted, target.text.front() == '"' ? files_[file].directory
                                                                : std::filesystem::path());
            if (!path) {
                std::string searched;
                for (const auto& dir : options_.include_directories) searched += " " + dir.string();
                fail(files_[file].name, t.line,
                     "cannot open include file \"" + wanted + "\" (searched:" +
                         (searched.empty() ? std::string(" no -I directories") : searched) + ")");
            }
            const int directive_line = target.line;
            token hash = std::move(t);
            token name = std::move(tokens[i + 1]);
            token file_token = tokens[i + 2];
            i += 2;
            const std::string canonical = std::filesystem::weakly_canonical(*path).string();
            const bool recursive = std::find(include_stack.begin(), include_stack.end(),
                                             canonical) != include_stack.end();
            // A file that includes itself (directly or not) was meant to be guarded: the inner
            // copy would be empty anyway, so it is left out.
            hash.replacement =
                recursive ? "" : "#line 1 " + c_string_literal(path->string()) + "\n";
            name.replacement = "";
            file_token.replacement = "";
            tokens_.push_back(std::move(hash));
            tokens_.push_back(std::move(name));
            tokens_.push_back(std::move(file_token));
            if (recursive) continue;

            std::ifstream in(*path, std::ios::binary);
            std::stringstream contents;
            contents << in.rdbuf();
            files_.push_back({path->string(), path->parent_path()});
            include_stack.push_back(canonical);
            append_file(contents.str(), files_.size() - 1, include_stack);
            include_stack.pop_back();
            token back;
            back.kind = token_kind::generated;
            back.text = "\n#line " + std::to_string(directive_line + 1) + " " +
                        c_string_literal(files_[file].name);
            back.file = file;
            back.line = directive_line;
            tokens_.push_back(std::move(back));
        }
    }

    std::optional<std::filesystem::path> find_include(const std::string& name,
                                                      const std::filesystem::path& local_dir) {
        std::error_code ignored;
        std::vector<std::filesystem::path> candidates;
        // Never the current directory unless named (-I .): a file planted where the program
        // runs must not become part of its kernels (docs/reliability.md).
        if (std::filesystem::path(name).is_absolute()) candidates.emplace_back(name);
        if (!local_dir.empty()) candidates.push_back(local_dir / name);
        for (const auto& dir : options_.include_directories) candidates.push_back(dir / name);
        for (const auto& candidate : candidates)
            if (std::filesystem::is_regular_file(candidate, ignored)) return candidate;
        return std::nullopt;
    }

    // --- declarations seen anywhere: macro and typedef aliases, struct members ------------
    void record_alias(const std::string& name, const std::string& value) {
        if (!value.empty() && is_identifier_start(value[0]) &&
            std::all_of(value.begin(), value.end(), is_identifier_char))
            aliases_[name].insert(value);
    }

    void collect_declarations() {
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            const token& t = tokens_[i];
            if (!t.in_directive && is_kernel_keyword(t)) {
                if (auto name = kernel_name_index(i))
                    kernel_names_.insert(resolved(tokens_[*name].text));
            } else if (t.is("#") && t.starts_line && next(i).is("define") &&
                       next(next_index(i)).kind == token_kind::identifier) {
                const std::size_t name = next_index(next_index(i));
                const std::size_t body = next_index(name);
                const bool function_like = tokens_[body].is("(") && tokens_[body].leading.empty();
                const bool single_token = tokens_[body].in_directive &&
                                          !tokens_[body].starts_line &&
                                          !(tokens_[next_index(body)].in_directive &&
                                            !tokens_[next_index(body)].starts_line);
                if (!function_like && single_token && tokens_[body].kind == token_kind::identifier)
                    record_alias(tokens_[name].text, tokens_[body].text);
            } else if (!t.in_directive && t.is("typedef") &&
                       next(i).kind == token_kind::identifier &&
                       next(next_index(i)).kind == token_kind::identifier &&
                       next(next_index(next_index(i))).is(";")) {
                record_alias(next(next_index(i)).text, next(i).text);
            } else if (!t.in_directive && (t.is("struct") || t.is("union"))) {
                std::size_t j = next_index(i);
                if (tokens_[j].kind == token_kind::identifier) j = next_index(j);
                if (!tokens_[j].is("{")) continue;
                const std::size_t close = matching(j);
                for (std::size_t k = j + 1; k < close; ++k) {
                    if (tokens_[k].kind != token_kind::identifier) continue;
                    const token& after = next(k);
                    if (after.is(";") || after.is(",") || after.is("[") || after.is(":"))
                        struct_members_.insert(tokens_[k].text);
                }
            }
        }
    }

    /// Every name `name` may stand for through macro and typedef aliases, itself included.
    const std::set<std::string>& meanings(const std::string& name) const {
        if (auto cached = meanings_cache_.find(name); cached != meanings_cache_.end())
            return cached->second;
        std::set<std::string> result{name};
        std::vector<std::string> pending{name};
        while (!pending.empty() && result.size() < 64) {
            const std::string current = pending.back();
            pending.pop_back();
            auto found = aliases_.find(current);
            if (found == aliases_.end()) continue;
            for (const auto& target : found->second)
                if (result.insert(target).second) pending.push_back(target);
        }
        return meanings_cache_.emplace(name, std::move(result)).first->second;
    }

    bool means_any(const token& t, std::initializer_list<std::string_view> words) const {
        if (t.kind != token_kind::identifier) return false;
        for (const auto& meaning : meanings(t.text))
            if (std::find(words.begin(), words.end(), meaning) != words.end()) return true;
        return false;
    }
    bool means_vector_type(const token& t) const {
        if (t.kind != token_kind::identifier) return false;
        for (const auto& meaning : meanings(t.text))
            if (is_vector_type(meaning)) return true;
        return false;
    }
    /// The single identifier a macro finally stands for, or the name itself.
    std::string resolved(const std::string& name) const {
        std::string current = name;
        for (int depth = 0; depth < 16; ++depth) {
            auto found = aliases_.find(current);
            if (found == aliases_.end() || found->second.size() != 1) break;
            current = *found->second.begin();
        }
        return current;
    }

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
    bool is_dropped_qualifier(const token& t) const {
        return means_any(t, {"global", "__global", "private", "__private"});
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
    std::size_t matching(std::size_t open) const {
        const std::string& opening = tokens_[open].text;
        const std::string closing = opening == "(" ? ")" : opening == "[" ? "]" : "}";
        int depth = 0;
        for (std::size_t i = open; i < tokens_.size(); ++i) {
            const token& t = tokens_[i];
            if (t.kind == token_kind::generated || t.in_directive != tokens_[open].in_directive)
                continue;
            if (t.is(opening)) ++depth;
            if (t.is(closing) && --depth == 0) return i;
        }
        fail(file_name(tokens_[open]), tokens_[open].line, "'" + opening + "' is never closed");
    }
    const std::string& file_name(const token& t) const { return files_[t.file].name; }

    // --- the rewrite ----------------------------------------------------------------------
    void rewrite() {
        int brace_depth = 0;
        int paren_depth = 0;
        int kernel_body_depth = -1;  // brace depth inside the current kernel's body
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            token& t = tokens_[i];
            if (t.kind == token_kind::generated) continue;
            if (t.in_directive) {
                i = rewrite_directive(i);
                continue;
            }
            if (t.is("{")) {
                ++brace_depth;
            } else if (t.is("}")) {
                if (brace_depth == kernel_body_depth) kernel_body_depth = -1;
                --brace_depth;
            } else if (t.is("(")) {
                ++paren_depth;
            } else if (t.is(")")) {
                --paren_depth;
            }
            if (t.replacement) continue;  // already decided by a kernel signature
            if (t.kind == token_kind::identifier && brace_depth == 0 && is_kernel_keyword(t)) {
                const std::size_t open = translate_kernel(i);
                if (open != 0) kernel_body_depth = brace_depth + 1;
                continue;
            }
            if (t.kind == token_kind::identifier && kernel_body_depth < 0 &&
                (launch_dependent_functions.contains(t.text) || calls_kernel(i)))
                kernels_need_shared_launch_ = true;
            rewrite_token(i, brace_depth == 0 && paren_depth == 0);
        }
    }

    /// Rewrites a preprocessing directive; returns the index of its last token.
    std::size_t rewrite_directive(std::size_t hash) {
        std::size_t last = hash;
        while (last + 1 < tokens_.size() && tokens_[last + 1].in_directive &&
               !tokens_[last + 1].starts_line)
            ++last;
        if (!tokens_[hash].is("#") || hash == last) return last;
        token& name = tokens_[hash + 1];
        if (name.is("pragma") && hash + 2 <= last && tokens_[hash + 2].is("OPENCL")) {
            // OPENCL EXTENSION / FP_CONTRACT pragmas mean nothing to NVRTC, which would warn;
            // FP_CONTRACT OFF becomes a compile option instead.
            if (hash + 4 <= last && tokens_[hash + 3].is("FP_CONTRACT") &&
                tokens_[hash + 4].is("OFF"))
                contraction_off_ = true;
            for (std::size_t i = hash; i <= last; ++i) tokens_[i].replacement = "";
            return last;
        }
        if (!name.is("define") || hash + 2 > last) return last;
        // The macro's name and parameters only get renamed; its body is translated.
        std::size_t body = hash + 3;
        rename_if_keyword(tokens_[hash + 2]);
        if (body <= last && tokens_[body].is("(") && tokens_[body].leading.empty()) {
            for (; body <= last && !tokens_[body].is(")"); ++body) rename_if_keyword(tokens_[body]);
            ++body;
        }
        for (std::size_t i = body; i <= last; ++i) {
            token& t = tokens_[i];
            if (t.replacement) continue;
            if (t.kind == token_kind::identifier &&
                (launch_dependent_functions.contains(t.text) || calls_kernel(i)))
                kernels_need_shared_launch_ = true;
            // Leaving these to the prelude's macros makes an expansion in an unforeseen place
            // a clear error rather than a guess.
            if (is_kernel_keyword(t) || is_local_keyword(t) || is_constant_keyword(t)) continue;
            rewrite_token(i, false);
        }
        return last;
    }

    void rename_if_keyword(token& t) {
        if (t.kind == token_kind::identifier && cxx_only_keywords.contains(t.text))
            t.replacement = "kiln_cxx_" + t.text;
    }

    void rewrite_token(std::size_t i, bool at_file_scope) {
        token& t = tokens_[i];
        if (t.kind == token_kind::number) {
            if (options_.single_precision_constants && is_unsuffixed_floating_literal(t.text))
                t.replacement = t.text + "f";
            return;
        }
        if (t.is("(")) {
            rewrite_vector_literal(i);
            return;
        }
        if ((t.is(".") || t.is("->")) && next(i).kind == token_kind::identifier) {
            rewrite_component_access(next_index(i));
            return;
        }
        if (t.kind != token_kind::identifier) return;

        if (calls_kernel(i)) {
            // Inside a kernel `kiln_launch` is the kernel's own; elsewhere the shared copy.
            t.replacement = body_name(resolved(t.text));
            const std::size_t open = next_index(i);
            tokens_[open].suffix = next(open).is(")") ? "kiln_launch" : "kiln_launch, ";
        } else if (is_local_keyword(t)) {
            t.replacement = declares_pointer(i) ? "" : "__shared__";
        } else if (is_constant_keyword(t)) {
            t.replacement = at_file_scope ? "__constant__" : "";
        } else if (is_dropped_qualifier(t)) {
            t.replacement = "";
        } else if (t.text == "restrict") {
            t.replacement = "__restrict__";
        } else if (t.text == "_Bool") {
            t.replacement = "bool";
        } else if (cxx_only_keywords.contains(t.text)) {
            t.replacement = "kiln_cxx_" + t.text;
        } else if (t.text == "printf" && has_vector_format(i)) {
            rewrite_vector_printf(i);
        } else if (unsupported_feature(t.text, next(i).is("("))) {
            t.replacement = std::string(unsupported_prefix) + t.text;
        } else if (auto builtin = templated_builtin(t.text)) {
            t.replacement = *builtin;
        }
    }

    static bool is_unsuffixed_floating_literal(std::string_view text) {
        const bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
        const bool floating = hex ? text.find_first_of("pP") != std::string_view::npos
                                  : text.find_first_of(".eE") != std::string_view::npos;
        return floating && std::string_view("fFlL").find(text.back()) == std::string_view::npos;
    }

    /// convert_float4_sat_rte(x), as_uint(x), vload4(i, p) and vstore4(v, i, p).
    static std::optional<std::string> templated_builtin(const std::string& name) {
        static const std::regex convert(
            R"(convert_(char|uchar|short|ushort|int|uint|long|ulong|float|double)(2|3|4|8|16)?(_sat)?(_rte|_rtz|_rtp|_rtn)?)");
        static const std::regex as(
            R"(as_(char|uchar|short|ushort|int|uint|long|ulong|float|double)(2|3|4|8|16)?)");
        static const std::regex load_store(R"((vload|vstore)(2|3|4|8|16))");
        if (!name.starts_with("convert_") && !name.starts_with("as_") &&
            !name.starts_with("vload") && !name.starts_with("vstore"))
            return std::nullopt;
        // OpenCL's own type names live in the prelude's namespace; C's keywords cannot be
        // qualified.
        const auto type = [](const std::smatch& m) {
            const std::string base = m[1].str(), width = m[2].str();
            const bool keyword = width.empty() && base != "uchar" && base != "ushort" &&
                                 base != "uint" && base != "ulong";
            return keyword ? base : "::kiln_opencl::" + base + width;
        };
        std::smatch m;
        if (std::regex_match(name, m, convert)) {
            const std::string rounding = m[4].str();
            const char* mode = rounding == "_rte"   ? "1"
                               : rounding == "_rtz" ? "2"
                               : rounding == "_rtp" ? "3"
                               : rounding == "_rtn" ? "4"
                                                    : "0";
            return "::kiln_opencl::detail::convert< " + type(m) + ", " +
                   (m[3].matched ? "true" : "false") + ", " + mode + ">";
        }
        if (std::regex_match(name, m, as)) return "::kiln_opencl::detail::as< " + type(m) + ">";
        if (std::regex_match(name, m, load_store))
            return "::kiln_opencl::detail::" + m[1].str() + "<" + m[2].str() + ">";
        return std::nullopt;
    }

    /// Whether the declaration that starts after a `local` qualifier declares a pointer.
    bool declares_pointer(std::size_t qualifier) const {
        int depth = 0;
        for (std::size_t i = next_index(qualifier); i + 1 < tokens_.size(); i = next_index(i)) {
            const token& t = tokens_[i];
            if (t.in_directive != tokens_[qualifier].in_directive) break;
            if (depth == 0 &&
                (t.is(";") || t.is("=") || t.is(",") || t.is(")") || t.is("[") || t.is("{")))
                break;
            if (t.is("(")) ++depth;
            if (t.is(")")) --depth;
            if (t.is("*")) return true;
        }
        return false;
    }

    /// CUDA's printf has no %v: `%v4f` becomes `%f,%f,%f,%f` (OpenCL separates components with
    /// commas) and its argument v becomes four, through the prelude's KILN_PRINTF_COMPONENTS.
    void rewrite_vector_printf(std::size_t printf_token) {
        const std::size_t open = next_index(printf_token);
        const std::size_t close = matching(open);
        std::vector<std::size_t> literals;
        std::size_t i = next_index(open);
        for (; tokens_[i].kind == token_kind::literal; i = next_index(i)) literals.push_back(i);
        // The arguments after the format, as token ranges [first, last].
        std::vector<std::pair<std::size_t, std::size_t>> arguments;
        for (std::size_t k = i, first = 0; k <= close; k = next_index(k)) {
            if (tokens_[k].is("(") || tokens_[k].is("[") || tokens_[k].is("{")) {
                k = matching(k);
                continue;
            }
            if (!(tokens_[k].is(",") || k == close)) continue;
            if (first != 0 && *previous_index(k) >= first)
                arguments.emplace_back(first, *previous_index(k));
            first = next_index(k);
        }
        std::size_t argument = 0;
        for (std::size_t literal : literals) {
            const std::string& text = tokens_[literal].text;
            std::string out;
            for (std::size_t p = 0; p < text.size(); ++p) {
                out += text[p];
                if (text[p] != '%') continue;
                if (p + 1 < text.size() && text[p + 1] == '%') {
                    out += text[++p];
                    continue;
                }
                std::size_t q = p + 1;
                std::string flags;
                while (q < text.size() &&
                       std::string_view("-+ #0123456789.*").find(text[q]) != std::string::npos) {
                    if (text[q] == '*') ++argument;
                    flags += text[q++];
                }
                if (q >= text.size() || text[q] != 'v') {
                    out += flags;
                    p = q - 1;
                    if (q < text.size()) ++argument;
                    continue;
                }
                std::size_t digits = q + 1;
                while (digits < text.size() &&
                       std::isdigit(static_cast<unsigned char>(text[digits])))
                    ++digits;
                const std::string count = text.substr(q + 1, digits - q - 1);
                std::size_t conversion = digits;
                while (conversion < text.size() &&
                       (text[conversion] == 'h' || text[conversion] == 'l'))
                    ++conversion;
                std::string length = text.substr(digits, conversion - digits);
                if (length == "hl") length.clear();  // hl: 32-bit components, which need none
                const bool known =
                    count == "2" || count == "3" || count == "4" || count == "8" || count == "16";
                if (!known || conversion >= text.size() || argument >= arguments.size()) {
                    tokens_[printf_token].replacement =
                        std::string(unsupported_prefix) + "kiln_vector_printf";
                    return;
                }
                const std::string one = "%" + flags + length + text[conversion];
                for (int c = 0; c < std::stoi(count); ++c)
                    out += (c == 0 ? one.substr(1) : "," + one);
                const auto [first, last] = arguments[argument++];
                tokens_[first].prefix =
                    "KILN_PRINTF_COMPONENTS" + count + "(" + tokens_[first].prefix;
                tokens_[last].suffix += ")";
                p = conversion;
            }
            tokens_[literal].replacement = out;
        }
    }

    bool has_vector_format(std::size_t printf_token) const {
        if (!next(printf_token).is("(")) return false;
        for (std::size_t i = next_index(next_index(printf_token));
             tokens_[i].kind == token_kind::literal; i = next_index(i)) {
            const std::string& s = tokens_[i].text;
            for (std::size_t p = s.find('%'); p != std::string::npos; p = s.find('%', p + 1)) {
                std::size_t q = p + 1;
                if (q < s.size() && s[q] == '%') {
                    p = q;
                    continue;
                }
                while (q < s.size() &&
                       std::string_view("-+ #0123456789.").find(s[q]) != std::string_view::npos)
                    ++q;
                if (q < s.size() && s[q] == 'v') return true;
            }
        }
        return false;
    }

    /// `(float4)(a, b)` and `(float4){a, b}` become `float4(a, b)`: a C++ cast of a parenthesised
    /// list would apply the comma operator.
    void rewrite_vector_literal(std::size_t open) {
        std::size_t type = next_index(open);
        std::vector<std::size_t> qualifiers;
        while (tokens_[type].is("const") || tokens_[type].is("volatile")) {
            qualifiers.push_back(type);
            type = next_index(type);
        }
        if (!means_vector_type(tokens_[type])) return;
        std::size_t close = next_index(type);
        while (tokens_[close].is("const") || tokens_[close].is("volatile")) {
            qualifiers.push_back(close);
            close = next_index(close);
        }
        if (!tokens_[close].is(")")) return;
        const token& after = next(close);
        if (!(after.is("(") || after.is("{")) || after.in_directive != tokens_[open].in_directive)
            return;
        if (auto before = previous_index(open);
            before && tokens_[*before].in_directive == tokens_[open].in_directive) {
            const token& b = tokens_[*before];
            const bool callee = b.kind == token_kind::identifier && !b.is("return") &&
                                !b.is("case") && !b.is("else") && !b.is("do");
            if (callee || b.is(")") || b.is("]")) return;
        }
        tokens_[open].replacement = "";
        for (auto q : qualifiers) tokens_[q].replacement = "";
        tokens_[close].replacement = "";
    }

    /// .xy / .s01 / .lo / .s3 on vectors become calls of the prelude's vector members.
    void rewrite_component_access(std::size_t member) {
        token& t = tokens_[member];
        if (struct_members_.contains(t.text)) return;
        const token& after = next(member);
        const bool assigned =
            after.in_directive == t.in_directive &&
            (after.is("=") || after.is("+=") || after.is("-=") || after.is("*=") ||
             after.is("/=") || after.is("%=") || after.is("&=") || after.is("|=") ||
             after.is("^=") || after.is("<<=") || after.is(">>="));
        const std::string ref = assigned ? "_ref" : "";
        if (t.text == "lo" || t.text == "hi" || t.text == "even" || t.text == "odd") {
            t.replacement = "kiln_" + t.text + ref + "()";
            return;
        }
        const auto indices = swizzle_indices(t.text);
        if (!indices) return;
        if (indices->size() == 1) {
            t.replacement = "kiln_s<" + std::to_string(indices->front()) + ">()";
            return;
        }
        std::string list;
        for (int index : *indices) list += (list.empty() ? "" : ",") + std::to_string(index);
        t.replacement = "kiln_swizzle" + ref + "<" + list + ">()";
    }

    /// Component indices named by a swizzle, or nullopt for anything else (including the single
    /// .x .y .z .w, which the vector types have as members).
    static std::optional<std::vector<int>> swizzle_indices(const std::string& name) {
        std::vector<int> indices;
        if (name.size() >= 2 && (name[0] == 's' || name[0] == 'S')) {
            for (std::size_t i = 1; i < name.size(); ++i) {
                const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
                if (c >= '0' && c <= '9')
                    indices.push_back(c - '0');
                else if (c >= 'a' && c <= 'f')
                    indices.push_back(c - 'a' + 10);
                else
                    return std::nullopt;
            }
            return indices;
        }
        for (std::string_view set : {"xyzw"sv, "rgba"sv}) {
            indices.clear();
            for (char c : name) {
                const auto index = set.find(c);
                if (index == std::string_view::npos) break;
                indices.push_back(static_cast<int>(index));
            }
            if (indices.size() != name.size() || name.size() > 4) continue;
            if (set == "xyzw" && name.size() == 1) return std::nullopt;
            return indices;
        }
        return std::nullopt;
    }

    // --- kernels --------------------------------------------------------------------------
    /// The index of the name the kernel qualifier at `qualifier` declares, if it can be found.
    std::optional<std::size_t> kernel_name_index(std::size_t qualifier) const {
        for (std::size_t i = next_index(qualifier); i + 1 < tokens_.size(); i = next_index(i)) {
            const token& t = tokens_[i];
            if (t.kind == token_kind::generated || t.is(";") || t.is("{") || t.in_directive)
                return std::nullopt;
            if (t.is("__attribute__") && next(i).is("(")) {
                i = matching(next_index(i));
                continue;
            }
            if (t.kind == token_kind::identifier && next(i).is("("))
                return is_type_keyword(t.text) ? std::nullopt : std::optional(i);
        }
        return std::nullopt;
    }

    /// Rewrites the declaration that starts with the kernel qualifier at `qualifier`; returns the
    /// index of the body's `{`, or 0 for a prototype.
    std::size_t translate_kernel(std::size_t qualifier) {
        const token& start = tokens_[qualifier];
        tokens_[qualifier].replacement = "__device__ __forceinline__";
        std::optional<std::string> launch_bounds;
        std::size_t i = next_index(qualifier);
        for (;; i = next_index(i)) {
            token& t = tokens_[i];
            if (t.kind == token_kind::generated || t.is(";") || t.is("{") || t.in_directive)
                fail(file_name(start), start.line,
                     "cannot find the kernel's name and parameter list");
            if (t.is("__attribute__")) {
                const std::size_t open = next_index(i);
                if (!tokens_[open].is("(")) fail(file_name(t), t.line, "malformed __attribute__");
                const std::size_t close = matching(open);
                if (auto bounds = required_work_group_size(open, close)) launch_bounds = bounds;
                for (std::size_t k = i; k <= close; ++k) tokens_[k].replacement = "";
                i = close;
                continue;
            }
            if (t.kind == token_kind::identifier && next(i).is("(")) {
                if (is_type_keyword(t.text))
                    fail(file_name(start), start.line, "cannot find the kernel's name");
                break;
            }
        }
        const std::size_t name_index = i;
        const std::size_t open = next_index(name_index);
        const std::size_t close = matching(open);

        kernel_signature signature;
        signature.name = resolved(tokens_[name_index].text);
        signature.symbol = cxx_only_keywords.contains(signature.name) ? "kiln_cxx_" + signature.name
                                                                      : signature.name;
        kernel_body body;
        body.name = signature.name;
        body.symbol = signature.symbol;
        if (launch_bounds) body.launch_bounds = "__launch_bounds__(" + *launch_bounds + ") ";
        tokens_[name_index].replacement = body_name(signature.name);
        std::vector<std::pair<std::size_t, std::size_t>> ranges;
        std::size_t begin = next_index(open);
        for (std::size_t k = begin; k <= close; k = next_index(k)) {
            if (tokens_[k].is("(") || tokens_[k].is("[")) {
                k = matching(k);
                continue;
            }
            if (tokens_[k].is(",") || k == close) {
                if (k != begin) ranges.emplace_back(begin, k);
                begin = next_index(k);
            }
        }
        if (ranges.size() == 1 && tokens_[ranges[0].first].is("void") &&
            next_index(ranges[0].first) == ranges[0].second) {
            tokens_[ranges[0].first].replacement = "";
            ranges.clear();
        }
        tokens_[open].suffix = "const ::kiln_opencl::detail::launch_info& kiln_launch_parameter" +
                               std::string(ranges.empty() ? "" : ", ");
        body.parameters = ranges;
        for (std::size_t p = 0; p < ranges.size(); ++p)
            signature.parameters.push_back(
                translate_parameter(ranges[p].first, ranges[p].second, p, body));

        const std::size_t after = next_index(close);
        std::erase_if(kernels_,
                      [&](const kernel_signature& k) { return k.name == signature.name; });
        kernels_.push_back(std::move(signature));
        if (!tokens_[after].is("{")) return 0;
        body.open_brace = after;
        body.close_brace = matching(after);
        bodies_.push_back(std::move(body));
        return after;
    }

    /// `reqd_work_group_size(x, y, z)` inside an attribute becomes the launch bound x*y*z.
    std::optional<std::string> required_work_group_size(std::size_t open, std::size_t close) const {
        for (std::size_t i = open; i < close; ++i) {
            if (!tokens_[i].is("reqd_work_group_size") || !next(i).is("(")) continue;
            const std::size_t args_open = next_index(i);
            const std::size_t args_close = matching(args_open);
            std::string product = "(";
            for (std::size_t k = next_index(args_open); k < args_close; k = next_index(k))
                product += tokens_[k].is(",") ? ")*(" : tokens_[k].text;
            return product + ")";
        }
        return std::nullopt;
    }

    parameter_info translate_parameter(std::size_t first, std::size_t end, std::size_t position,
                                       kernel_body& body) {
        parameter_info info;
        std::optional<std::size_t> name_index;
        std::size_t type_words = 0;
        bool pointer = false, has_const = false, const_before_star = false;
        for (std::size_t i = first; i < end; i = next_index(i)) {
            const token& t = tokens_[i];
            if (t.is("[")) {
                pointer = true;
                i = matching(i);
                continue;
            }
            if (t.is("*")) pointer = true;
            if (t.is("const")) {
                has_const = true;
                if (!pointer) const_before_star = true;
            }
            if (t.kind == token_kind::identifier && !is_address_space(t) && !t.is("const") &&
                !t.is("volatile") && !t.is("restrict") && !t.is("__restrict")) {
                if (name_index) ++type_words;
                name_index = i;
            }
        }
        // The name is the last word, after at least one word of type that is not itself a name.
        if (!name_index || type_words == 0 || is_type_keyword(tokens_[*name_index].text))
            fail(file_name(tokens_[first]), tokens_[first].line,
                 "kernel parameter " + std::to_string(position + 1) + " needs a name");
        info.name = tokens_[*name_index].text;
        info.pointee_const = pointer && const_before_star;

        std::string type_name;
        std::string declaration_type;  // for local pointers, without the name and qualifier
        for (std::size_t i = first; i < end; i = next_index(i)) {
            const token& t = tokens_[i];
            if (is_local_keyword(t))
                info.space = parameter_info::address_space::local;
            else if (is_constant_keyword(t))
                info.space = parameter_info::address_space::constant;
            else if (means_any(t, {"global", "__global"}))
                info.space = parameter_info::address_space::global;
            if (i == *name_index || is_address_space(t)) continue;
            if (!(t.is("const") || t.is("volatile") || t.is("restrict") || t.is("__restrict")))
                type_name += (type_name.empty() || t.is("*") ? "" : " ") + resolved(t.text);
            if (!t.is("restrict") && !t.is("__restrict"))
                declaration_type += (declaration_type.empty() ? "" : " ") + t.text;
        }
        // OpenCL C 1.2 has no unqualified pointer parameters; treat 2.0's generic ones as global.
        if (pointer && info.space == parameter_info::address_space::private_)
            info.space = parameter_info::address_space::global;
        info.type_name = normalised_type_name(type_name);

        const std::string cuda_name =
            cxx_only_keywords.contains(info.name) ? "kiln_cxx_" + info.name : info.name;
        body.argument_names.push_back(cuda_name);
        if (info.space == parameter_info::address_space::local) {
            // The entry point receives an offset into the dynamic shared memory block and
            // passes the pointer on to the body.
            const std::string offset = "kiln_local_offset_" + std::to_string(position);
            body.local_declarations[position] =
                declaration_type + " " + cuda_name + " = (" + declaration_type +
                ")(::kiln_opencl::detail::dynamic_shared_memory + " + offset + ");";
        }
        for (std::size_t i = first; i < end; i = next_index(i))
            if (is_address_space(tokens_[i])) tokens_[i].replacement = "";
        if (info.space == parameter_info::address_space::constant && !has_const)
            tokens_[first].prefix = "const ";
        return info;
    }

    static bool is_type_keyword(const std::string& word) {
        static const std::set<std::string_view> keywords{
            "void",   "char",     "short",  "int",       "long",     "float",
            "double", "unsigned", "signed", "bool",      "size_t",   "uchar",
            "ushort", "uint",     "ulong",  "ptrdiff_t", "intptr_t", "uintptr_t"};
        return keywords.contains(word) || is_vector_type(word);
    }

    static std::string normalised_type_name(std::string name) {
        static const std::array<std::pair<std::string_view, std::string_view>, 8> spellings{{
            {"unsigned char", "uchar"},
            {"unsigned short", "ushort"},
            {"unsigned int", "uint"},
            {"unsigned long", "ulong"},
            {"signed char", "char"},
            {"long int", "long"},
            {"short int", "short"},
            {"unsigned", "uint"},
        }};
        for (auto [from, to] : spellings) {
            if (auto at = name.find(from); at != std::string::npos) {
                name.replace(at, from.size(), to);
                break;
            }
        }
        return name;
    }

    /// The body reads the launch through `kiln_launch`; the entry point, appended on the body's
    /// last line so that no line moves, drops work-items past the range and calls the body.
    void finish_kernel_prologues() {
        for (const auto& body : bodies_) {
            tokens_[body.open_brace].suffix +=
                " const ::kiln_opencl::detail::launch_info& kiln_launch = kiln_launch_parameter;";
            std::string entry = " extern \"C\" __global__ void " + body.launch_bounds +
                                body.symbol +
                                "(::kiln_opencl::detail::launch_info kiln_launch_parameter";
            for (std::size_t p = 0; p < body.parameters.size(); ++p) {
                entry += ", ";
                if (body.local_declarations.contains(p)) {
                    entry += "unsigned int kiln_local_offset_" + std::to_string(p);
                    continue;
                }
                for (std::size_t i = body.parameters[p].first; i < body.parameters[p].second;
                     i = next_index(i)) {
                    const token& t = tokens_[i];
                    const std::string text = t.prefix + std::string(t.output_text()) + t.suffix;
                    if (!text.empty()) entry += (entry.back() == ' ' ? "" : " ") + text;
                }
            }
            entry += ") {";
            if (kernels_need_shared_launch_) {
                entry +=
                    " if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) "
                    "::kiln_opencl::kiln_launch = kiln_launch_parameter; __syncthreads();";
            }
            entry +=
                " if (kiln_launch_parameter.overhang && "
                "!::kiln_opencl::detail::inside_global_range(kiln_launch_parameter))"
                " return;";
            for (const auto& [position, declaration] : body.local_declarations)
                entry += " " + declaration;
            entry += " " + body_name(body.name) + "(kiln_launch_parameter";
            for (const auto& argument : body.argument_names) entry += ", " + argument;
            entry += "); }";
            tokens_[body.close_brace].suffix += entry;
        }
    }

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
    bool contraction_off_ = false;
};

}  // namespace

std::string source_file_name(std::size_t index) {
    return "source_" + std::to_string(index + 1);
}

translation translate_opencl_c(std::span<const std::string> sources,
                               const translation_options& options) {
    return translator(options).run(sources);
}

std::string explain_compiler_log(std::string log) {
    static const std::regex placeholder(R"re(identifier "kiln_unsupported__(\w+)" is undefined)re");
    static const std::regex from_macro(R"((kernel|local|constant)_from_macro)");
    std::string result;
    auto begin = log.cbegin();
    for (std::sregex_iterator it(log.cbegin(), log.cend(), placeholder), end; it != end; ++it) {
        const std::smatch& m = *it;
        result.append(begin, m[0].first);
        const std::string name = m[1].str();
        std::smatch macro;
        if (std::regex_match(name, macro, from_macro)) {
            result += "the __" + macro[1].str() +
                      " qualifier inside a macro expansion is not supported by kiln's CUDA backend "
                      "(write it in the source, or define the macro as exactly that one word)";
        } else {
            const auto feature = unsupported_feature(name, true);
            result += "'" + (name == "kiln_vector_printf" ? std::string("printf") : name) +
                      "' is not supported by kiln's CUDA backend (" +
                      feature.value_or("unsupported") + "; see docs/cuda.md)";
        }
        begin = m[0].second;
    }
    result.append(begin, log.cend());
    return result;
}

}  // namespace kiln::detail::cuda
