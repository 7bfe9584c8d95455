// SPDX-License-Identifier: Apache-2.0
// kiln-prof's pictures, parsed with libxml2: a trace made here with known lanes and events must
// come out with those lanes, one coloured rectangle per event inside its lane, and the kernels
// ranked by device time; a real KILN_PROFILE trace must draw too; bad input is one error line.
// Hostile traces (degenerate time ranges, deep nesting, control characters) must end in seconds
// with a well-formed picture or one line, and the picture must never replace its trace.
#include <gtest/gtest.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

class picture_dir {
  public:
    picture_dir()
        : path_(std::filesystem::temp_directory_path() /
                ("kiln_prof_test_" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(path_);
    }
    ~picture_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

std::string quoted(const std::filesystem::path& path) {
    std::string text(1, '\'');
    text += path.string();
    text += '\'';
    return text;
}

std::string contents(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Runs a shell command; returns its exit status, its standard error in `errors`, its standard
/// output in the file `output`.
int run(const std::string& command, std::string& errors, const picture_dir& dir,
        const std::filesystem::path& output = "/dev/null") {
    const auto err = dir / "stderr.txt";
    const int status =
        std::system((command + " 2> " + quoted(err) + " > " + quoted(output)).c_str());
    errors = contents(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// kiln-prof with `arguments`, killed after 60 s (status 137): a trace that makes it loop
/// fails the test instead of hanging the suite.
int kiln_prof(const std::string& arguments, std::string& errors, const picture_dir& dir,
              const std::filesystem::path& output = "/dev/null") {
    return run("timeout -s KILL 60 " + quoted(KILN_PROF) + " " + arguments, errors, dir, output);
}

json complete(const std::string& name, const std::string& category, int pid, int tid, double ts,
              double dur) {
    return {{"name", name}, {"cat", category}, {"ph", "X"},  {"pid", pid},
            {"tid", tid},   {"ts", ts},        {"dur", dur}, {"args", {{"bytes", 64}}}};
}

json metadata(const std::string& what, int pid, int tid, const std::string& name) {
    return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

/// Two queues of one device and a host thread: 4 kernels (reduce 100 us, axpy 3 x 30 us), two
/// transfers, a fill, a copy, and a region around a wait.
json known_trace() {
    json events = json::array(
        {metadata("process_name", 0, 0, "host"), metadata("thread_name", 0, 1, "thread 1"),
         metadata("process_name", 1, 0, "device 0: test device (opencl)"),
         metadata("thread_name", 1, 1, "queue 1 (in order)"),
         metadata("thread_name", 1, 2, "queue 2 (in order)"),
         complete("solver", "region", 0, 1, 0, 400),
         complete("queue::finish", "wait", 0, 1, 10, 300),
         complete("write", "transfer", 1, 1, 5, 20), complete("axpy", "kernel", 1, 1, 30, 30),
         complete("axpy", "kernel", 1, 1, 60, 30), complete("axpy", "kernel", 1, 1, 90, 30),
         complete("reduce", "kernel", 1, 1, 120, 100), complete("read", "transfer", 1, 1, 230, 10),
         complete("fill", "fill", 1, 2, 20, 5), complete("copy", "copy", 1, 2, 40, 15)});
    return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

using document_ptr = std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)>;

/// The nodes an XPath expression selects (s: is the SVG namespace, h: XHTML's).
std::vector<xmlNodePtr> select(xmlDocPtr doc, xmlNodePtr context, const std::string& path) {
    std::unique_ptr<xmlXPathContext, decltype(&xmlXPathFreeContext)> xpath(xmlXPathNewContext(doc),
                                                                           xmlXPathFreeContext);
    xmlXPathRegisterNs(xpath.get(), BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
    xmlXPathRegisterNs(xpath.get(), BAD_CAST "h", BAD_CAST "http://www.w3.org/1999/xhtml");
    if (context != nullptr) xpath->node = context;
    std::unique_ptr<xmlXPathObject, decltype(&xmlXPathFreeObject)> result(
        xmlXPathEvalExpression(BAD_CAST path.c_str(), xpath.get()), xmlXPathFreeObject);
    std::vector<xmlNodePtr> nodes;
    if (result && result->nodesetval)
        for (int i = 0; i < result->nodesetval->nodeNr; ++i)
            nodes.push_back(result->nodesetval->nodeTab[i]);
    return nodes;
}

std::string text_of(xmlNodePtr node) {
    xmlChar* content = xmlNodeGetContent(node);
    std::string text = content ? reinterpret_cast<const char*>(content) : "";
    xmlFree(content);
    return text;
}

double number_of(xmlNodePtr node, const char* attribute) {
    xmlChar* text = xmlGetProp(node, BAD_CAST attribute);
    const double value = text ? std::stod(reinterpret_cast<const char*>(text)) : -1;
    xmlFree(text);
    return value;
}

/// The lanes and top-kernel rows of a picture, checked against known_trace(). `row_path`
/// selects the table's rows: SVG groups in an SVG, XHTML table rows in the HTML page.
void check_picture(xmlDocPtr doc, const std::string& row_path) {
    const auto lanes = select(doc, nullptr, "//s:g[@class='lane']");
    ASSERT_EQ(lanes.size(), 3u);
    std::vector<std::string> labels;
    for (xmlNodePtr lane : lanes)
        labels.push_back(text_of(select(doc, lane, "s:text[@class='lane-label']").at(0)));
    EXPECT_EQ(labels[0], "host / thread 1");
    EXPECT_EQ(labels[1], "device 0: test device (opencl) / queue 1 (in order)");
    EXPECT_EQ(labels[2], "device 0: test device (opencl) / queue 2 (in order)");
    auto count = [&](xmlNodePtr lane, const char* category) {
        return select(doc, lane, std::string("s:rect[@class='event ") + category + "']").size();
    };
    EXPECT_EQ(count(lanes[0], "region"), 1u);
    EXPECT_EQ(count(lanes[0], "wait"), 1u);
    EXPECT_EQ(count(lanes[1], "kernel"), 4u);
    EXPECT_EQ(count(lanes[1], "transfer"), 2u);
    EXPECT_EQ(count(lanes[2], "fill"), 1u);
    EXPECT_EQ(count(lanes[2], "copy"), 1u);
    EXPECT_EQ(select(doc, nullptr, "//s:rect[starts-with(@class, 'event')]").size(), 10u);
    // The wait is nested under the region: the next row down.
    const double region_y =
                     number_of(select(doc, lanes[0], "s:rect[@class='event region']").at(0), "y"),
                 wait_y =
                     number_of(select(doc, lanes[0], "s:rect[@class='event wait']").at(0), "y");
    EXPECT_GT(wait_y, region_y);
    // Kernels by device time: reduce (100 us in one) before axpy (90 us in three).
    const auto rows = select(doc, nullptr, row_path);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_TRUE(text_of(rows[0]).starts_with("reduce1")) << text_of(rows[0]);
    EXPECT_TRUE(text_of(rows[1]).starts_with("axpy3")) << text_of(rows[1]);
}

TEST(kiln_prof, an_svg_has_a_lane_per_queue_and_thread_and_every_event) {
    picture_dir dir;
    std::ofstream(dir / "trace.json") << known_trace().dump();
    std::string errors;
    ASSERT_EQ(
        kiln_prof(quoted(dir / "trace.json") + " -o " + quoted(dir / "timeline.svg"), errors, dir),
        0)
        << errors;
    document_ptr doc(xmlReadFile((dir / "timeline.svg").c_str(), nullptr, XML_PARSE_NONET),
                     xmlFreeDoc);
    ASSERT_NE(doc, nullptr) << "not well-formed XML";
    EXPECT_STREQ(reinterpret_cast<const char*>(xmlDocGetRootElement(doc.get())->name), "svg");
    check_picture(doc.get(), "//s:g[@class='kernel-row']");
}

TEST(kiln_prof, an_html_page_is_self_contained) {
    picture_dir dir;
    std::ofstream(dir / "trace.json") << known_trace().dump();
    std::string errors;
    const auto page = dir / "timeline.html";
    ASSERT_EQ(kiln_prof(quoted(dir / "trace.json") + " -o " + quoted(page), errors, dir), 0)
        << errors;
    // Well-formed XHTML: the XML parser reads it, with the SVG inside and a real table.
    document_ptr doc(xmlReadFile(page.c_str(), nullptr, XML_PARSE_NONET), xmlFreeDoc);
    ASSERT_NE(doc, nullptr) << "not well-formed XHTML";
    check_picture(doc.get(), "//h:table[@class='top-kernels']/h:tr[@class='kernel-row']");
    // Nothing is fetched from elsewhere: no scripts, links or references to other documents.
    EXPECT_TRUE(
        select(doc.get(), nullptr, "//h:script | //h:link | //*[@src] | //*[@href]").empty());
    // And an HTML parser reads it without complaint.
    document_ptr html(htmlReadFile(page.c_str(), "utf-8",
                                   HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING),
                      xmlFreeDoc);
    EXPECT_NE(html, nullptr);
}

TEST(kiln_prof, bad_input_is_one_line_and_status_1) {
    picture_dir dir;
    std::ofstream(dir / "broken.json") << "{\"traceEvents\": [";
    std::ofstream(dir / "empty.json") << "{\"traceEvents\": []}";
    const std::string out = " -o " + quoted(dir / "x.svg");
    std::string errors;
    EXPECT_EQ(kiln_prof(quoted(dir / "missing.json") + out, errors, dir), 1);
    EXPECT_TRUE(errors.starts_with("kiln-prof: cannot read")) << errors;
    EXPECT_EQ(kiln_prof(quoted(dir / "broken.json") + out, errors, dir), 1);
    EXPECT_NE(errors.find("is not JSON"), std::string::npos) << errors;
    EXPECT_EQ(kiln_prof(quoted(dir / "empty.json") + out, errors, dir), 1);
    EXPECT_NE(errors.find("no complete"), std::string::npos) << errors;
    EXPECT_EQ(kiln_prof(quoted(dir / "empty.json"), errors, dir), 1);
    EXPECT_FALSE(std::filesystem::exists(dir / "x.svg"));
}

TEST(kiln_prof, a_field_of_the_wrong_type_is_named) {
    picture_dir dir;
    json soon = complete("a", "kernel", 0, 0, 0, 1), far = soon;
    soon["ts"] = "soon";
    far["pid"] = 1e30;
    const std::string out = " -o " + quoted(dir / "x.svg");
    std::string errors;
    std::ofstream(dir / "soon.json") << json::array({soon}).dump();
    EXPECT_EQ(kiln_prof(quoted(dir / "soon.json") + out, errors, dir), 1);
    EXPECT_NE(errors.find("event 0: \"ts\" is a string, not a number"), std::string::npos)
        << errors;
    std::ofstream(dir / "far.json") << json::array({far}).dump();
    EXPECT_EQ(kiln_prof(quoted(dir / "far.json") + out, errors, dir), 1);
    EXPECT_NE(errors.find("event 0: \"pid\" is 1e+30"), std::string::npos) << errors;
    EXPECT_FALSE(std::filesystem::exists(dir / "x.svg"));
}

TEST(kiln_prof, never_writes_the_picture_over_its_trace) {
    picture_dir dir;
    const auto trace = dir / "trace.json";
    const std::string original = known_trace().dump();
    std::ofstream(trace) << original;
    std::filesystem::create_symlink(trace, dir / "link.svg");
    std::filesystem::create_hard_link(trace, dir / "hard.svg");
    const std::pair<std::filesystem::path, std::filesystem::path> cases[] = {
        {trace, trace},
        {trace, dir.path() / "." / "trace.json"},
        {trace, dir / "link.svg"},
        {trace, dir / "hard.svg"},
        {dir / "link.svg", trace}};
    for (const auto& [input, output] : cases) {
        std::string errors;
        EXPECT_EQ(kiln_prof(quoted(input) + " -o " + quoted(output), errors, dir), 1) << output;
        EXPECT_NE(errors.find("is the trace being drawn"), std::string::npos) << errors;
        ASSERT_TRUE(contents(trace) == original) << "the trace was replaced through " << output;
    }
    EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.svg"));
}

TEST(kiln_prof, a_dash_writes_the_picture_to_standard_output) {
    picture_dir dir;
    std::ofstream(dir / "trace.json") << known_trace().dump();
    std::string errors;
    ASSERT_EQ(run("cd " + quoted(dir.path()) + " && timeout -s KILL 60 " + quoted(KILN_PROF) +
                      " trace.json -o -",
                  errors, dir, dir / "standard-output.svg"),
              0)
        << errors;
    EXPECT_FALSE(std::filesystem::exists(dir / "-"));
    document_ptr doc(xmlReadFile((dir / "standard-output.svg").c_str(), nullptr, XML_PARSE_NONET),
                     xmlFreeDoc);
    ASSERT_NE(doc, nullptr) << "standard output is not an SVG";
    check_picture(doc.get(), "//s:g[@class='kernel-row']");
}

/// Draws `events` as an SVG; returns kiln-prof's status, its errors, and the parsed picture.
int draw(const json& events, const picture_dir& dir, std::string& errors, document_ptr& doc) {
    std::ofstream(dir / "trace.json") << json{{"traceEvents", events}}.dump();
    const auto picture = dir / "timeline.svg";
    std::filesystem::remove(picture);
    const int status =
        kiln_prof(quoted(dir / "trace.json") + " -o " + quoted(picture), errors, dir);
    doc.reset(status == 0 ? xmlReadFile(picture.c_str(), nullptr, XML_PARSE_NONET) : nullptr);
    return status;
}

// Ranges whose tick step was 0 or infinite made kiln-prof loop, growing without bound.
TEST(kiln_prof, any_time_range_draws_in_bounded_time) {
    const std::pair<const char*, json> cases[] = {
        {"one instant at 1e16 us", json::array({complete("a", "kernel", 0, 0, 1e16, 0)})},
        {"nanosecond epoch timestamps",
         json::array({complete("a", "kernel", 0, 0, 1.7e18, 100),
                      complete("b", "kernel", 0, 0, 1.7e18 + 50, 10)})},
        {"the largest times kiln-prof draws",
         json::array(
             {complete("a", "kernel", 0, 0, -1e20, 0), complete("b", "kernel", 0, 0, 1e20, 1e20)})},
        {"a subnormal duration", json::array({complete("a", "kernel", 0, 0, 0, 5e-324)})}};
    for (const auto& [what, events] : cases) {
        picture_dir dir;
        std::string errors;
        document_ptr doc(nullptr, xmlFreeDoc);
        ASSERT_EQ(draw(events, dir, errors, doc), 0) << what << ": " << errors;
        ASSERT_NE(doc, nullptr) << what;
        const auto ticks = select(doc.get(), nullptr, "//s:g[@class='axis']/s:line");
        EXPECT_GE(ticks.size(), 2u) << what;
        EXPECT_LE(ticks.size(), 10u) << what;
        for (const char* attribute : {"x", "y", "width", "x1", "x2"})
            for (xmlNodePtr node :
                 select(doc.get(), nullptr, std::string("//*[@") + attribute + "]"))
                EXPECT_TRUE(std::isfinite(number_of(node, attribute))) << what << ": " << attribute;
        EXPECT_EQ(select(doc.get(), nullptr, "//s:rect[@class='event kernel']").size(),
                  events.size())
            << what;
    }
}

TEST(kiln_prof, times_beyond_the_limit_are_refused_with_the_limit) {
    picture_dir dir;
    std::string errors;
    document_ptr doc(nullptr, xmlFreeDoc);
    EXPECT_EQ(draw(json::array({complete("a", "kernel", 0, 0, -1e308, 0),
                                complete("b", "kernel", 0, 0, 1e308, 0)}),
                   dir, errors, doc),
              1);
    EXPECT_NE(errors.find("event 0: \"ts\" is -1e+308 us, beyond kiln-prof's limit of ±1e+20 us"),
              std::string::npos)
        << errors;
    EXPECT_EQ(draw(json::array({complete("a", "kernel", 0, 0, 0, 1e308)}), dir, errors, doc), 1);
    EXPECT_NE(errors.find("event 0: \"dur\" is 1e+308 us"), std::string::npos) << errors;
}

// nlohmann-json copies and prints documents recursively: 200,000 brackets overflowed the stack.
TEST(kiln_prof, nesting_deeper_than_the_limit_is_refused) {
    picture_dir dir;
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    const std::string event = R"({"ph": "X", "name": "a", "ts": 0, "dur": 1, "args": {"x": )";
    std::ofstream(dir / "deep.json") << deep;
    std::ofstream(dir / "deep_args.json") << "{\"traceEvents\": [" << event << deep << "}}]}";
    std::ofstream(dir / "unclosed.json") << std::string(200000, '[');
    const std::string out = " -o " + quoted(dir / "x.svg");
    for (const char* name : {"deep.json", "deep_args.json"}) {
        std::string errors;
        EXPECT_EQ(kiln_prof(quoted(dir / name) + out, errors, dir), 1) << name;
        EXPECT_NE(errors.find("nests JSON deeper than 256 levels"), std::string::npos) << errors;
    }
    std::string errors;
    EXPECT_EQ(kiln_prof(quoted(dir / "unclosed.json") + out, errors, dir), 1) << errors;
    EXPECT_FALSE(std::filesystem::exists(dir / "x.svg"));
    // The limit itself: 256 levels are read (an array of arrays has no events), 257 are not.
    std::ofstream(dir / "256.json") << std::string(256, '[') << std::string(256, ']');
    std::ofstream(dir / "257.json") << std::string(257, '[') << std::string(257, ']');
    EXPECT_EQ(kiln_prof(quoted(dir / "256.json") + out, errors, dir), 1);
    EXPECT_NE(errors.find("no complete"), std::string::npos) << errors;
    EXPECT_EQ(kiln_prof(quoted(dir / "257.json") + out, errors, dir), 1);
    EXPECT_NE(errors.find("nests JSON deeper than 256 levels"), std::string::npos) << errors;
    // Nesting within the limit draws, its arguments shown.
    const std::string nested = std::string(250, '[') + std::string(250, ']');
    std::ofstream(dir / "nested.json") << "[" << event << nested << "}}]";
    EXPECT_EQ(kiln_prof(quoted(dir / "nested.json") + out, errors, dir), 0) << errors;
}

// XML 1.0 allows no C0 control but tab, newline and carriage return, not even as a character
// reference, and no broken UTF-8: names holding them must come out replaced (U+FFFD).
TEST(kiln_prof, control_characters_and_broken_utf8_are_replaced) {
    picture_dir dir;
    const std::string accents = "a" + [] {
        std::string text;
        for (int i = 0; i < 20; ++i) text += "\xc3\xa9";  // é, cut in two at 34 bytes
        return text;
    }();
    json kernel = complete("k\x01\x1b", "kernel", 1, 1, 0, 10);
    kernel["args"] = {{"\x02", "v\x03"}};
    const json events = json::array({metadata("process_name", 1, 0, accents + "\x01"),
                                     metadata("thread_name", 1, 1, "t\x1b"), kernel});
    const auto trace = dir / "trace\xff.json";  // the title holds the file name: not UTF-8
    std::ofstream(trace) << json{{"traceEvents", events}}.dump();
    for (const char* name : {"timeline.svg", "timeline.html"}) {
        std::string errors;
        ASSERT_EQ(kiln_prof(quoted(trace) + " -o " + quoted(dir / name), errors, dir), 0) << errors;
        const std::string text = contents(dir / name);
        for (char c : text)
            ASSERT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
                         c != '\r')
                << name << " holds control character " << int(c);
        document_ptr doc(xmlReadFile((dir / name).c_str(), nullptr, XML_PARSE_NONET), xmlFreeDoc);
        ASSERT_NE(doc, nullptr) << name << " is not well-formed XML";
        const auto rows = select(doc.get(), nullptr, "//*[@class='kernel-row']");
        ASSERT_EQ(rows.size(), 1u) << name;
        EXPECT_TRUE(
            text_of(rows[0]).starts_with("k\xef\xbf\xbd\xef\xbf\xbd"
                                         "1"))
            << text_of(rows[0]);
        const auto label = select(doc.get(), nullptr, "//s:text[@class='lane-label']");
        ASSERT_EQ(label.size(), 1u) << name;
        EXPECT_EQ(text_of(label[0]), accents.substr(0, 33) + " / t\xef\xbf\xbd") << name;
    }
}

#ifdef KILN_VECTOR_ADD
TEST(kiln_prof, draws_a_real_trace) {
    picture_dir dir;
    const auto trace = dir / "trace.json", picture = dir / "timeline.svg";
    std::string errors;
    ASSERT_EQ(
        run("KILN_PROFILE=" + quoted(trace) + " " + quoted(KILN_VECTOR_ADD) + " 5000", errors, dir),
        0)
        << errors;
    ASSERT_EQ(kiln_prof(quoted(trace) + " -o " + quoted(picture), errors, dir), 0) << errors;
    document_ptr doc(xmlReadFile(picture.c_str(), nullptr, XML_PARSE_NONET), xmlFreeDoc);
    ASSERT_NE(doc, nullptr);
    // The host thread and the device's queue; the kernel, three transfers and the build.
    EXPECT_EQ(select(doc.get(), nullptr, "//s:g[@class='lane']").size(), 2u);
    EXPECT_EQ(select(doc.get(), nullptr, "//s:rect[@class='event kernel']").size(), 1u);
    EXPECT_EQ(select(doc.get(), nullptr, "//s:rect[@class='event transfer']").size(), 3u);
    EXPECT_EQ(select(doc.get(), nullptr, "//s:rect[@class='event build']").size(), 1u);
    const auto rows = select(doc.get(), nullptr, "//s:g[@class='kernel-row']");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_TRUE(text_of(rows[0]).starts_with("add1")) << text_of(rows[0]);
}
#endif

}  // namespace
