// kiln-prof's pictures, parsed with libxml2: a trace made here with known lanes and events must
// come out with those lanes, one coloured rectangle per event inside its lane, and the kernels
// ranked by device time; a real KILN_PROFILE trace must draw too; bad input is one error line.
#include <gtest/gtest.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <sys/wait.h>

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

  private:
    std::filesystem::path path_;
};

std::string quoted(const std::filesystem::path& path) {
    std::string text(1, '\'');
    text += path.string();
    text += '\'';
    return text;
}

/// Runs a shell command; returns its exit status, its standard error in `errors`.
int run(const std::string& command, std::string& errors, const picture_dir& dir) {
    const auto err = dir / "stderr.txt";
    const int status = std::system((command + " 2> " + quoted(err) + " > /dev/null").c_str());
    std::ifstream in(err);
    std::ostringstream text;
    text << in.rdbuf();
    errors = text.str();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int kiln_prof(const std::string& arguments, std::string& errors, const picture_dir& dir) {
    return run(quoted(KILN_PROF) + " " + arguments, errors, dir);
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

double y_of(xmlNodePtr node) {
    xmlChar* y = xmlGetProp(node, BAD_CAST "y");
    const double value = y ? std::stod(reinterpret_cast<const char*>(y)) : -1;
    xmlFree(y);
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
    const double region_y = y_of(select(doc, lanes[0], "s:rect[@class='event region']").at(0)),
                 wait_y = y_of(select(doc, lanes[0], "s:rect[@class='event wait']").at(0));
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
