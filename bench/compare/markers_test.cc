#include "compare/markers.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace narad::compare {
namespace {

const std::string kDocument =
    "# Benchmarks\n\nIntro.\n\n## Machine\n\nTwo cores.\n\n" + std::string(kCompareHeading) +
    "\n\n<!-- compare:begin -->\nold table\n<!-- compare:end -->\n\n## Single node (issue 2)\n\n"
    "Hand-written.\n";

TEST(MarkersTest, ReplacesOnlyWhatIsBetweenTheMarkers) {
    // Rule: the generated part changes; every hand-written byte around it stays.
    auto updated = replace_generated(kDocument, "new table\n");
    ASSERT_TRUE(updated.is_ok()) << updated.status().message();
    std::string expected = kDocument;
    expected.replace(expected.find("old table"), 9, "new table");
    EXPECT_EQ(*updated, expected);
}

TEST(MarkersTest, ReplacingTwiceGivesTheSameDocument) {
    // Rule: a second run with the same output leaves the file as the first run did.
    auto once = replace_generated(kDocument, "table");
    ASSERT_TRUE(once.is_ok());
    auto twice = replace_generated(*once, "table");
    ASSERT_TRUE(twice.is_ok());
    EXPECT_EQ(*once, *twice);
}

TEST(MarkersTest, MissingMarkersAreAddedRightAfterTheMachineSection) {
    // Rule: without markers the section (heading and markers) goes after "## Machine", before
    // the next level-2 heading.
    const std::string document =
        "# B\n\n## Machine\n\nTwo cores.\n\n### Sub\n\nstill machine\n\n## Single node\n\nx\n";
    auto updated = replace_generated(document, "generated");
    ASSERT_TRUE(updated.is_ok());
    EXPECT_EQ(*updated, "# B\n\n## Machine\n\nTwo cores.\n\n### Sub\n\nstill machine\n\n" +
                            std::string(kCompareHeading) +
                            "\n\n<!-- compare:begin -->\ngenerated\n<!-- compare:end -->\n\n"
                            "## Single node\n\nx\n");
}

TEST(MarkersTest, MissingMarkersWithoutMachineSectionGoAtTheEnd) {
    // Rule: a document with no "## Machine" gets the section appended.
    auto updated = replace_generated("# B\n\nText.", "g");
    ASSERT_TRUE(updated.is_ok());
    EXPECT_EQ(*updated, "# B\n\nText.\n\n" + std::string(kCompareHeading) +
                            "\n\n<!-- compare:begin -->\ng\n<!-- compare:end -->\n");
}

TEST(MarkersTest, UnbalancedReversedOrRepeatedMarkersAreErrors) {
    // Rule: when the markers are damaged nothing is guessed and the file is not touched.
    EXPECT_FALSE(replace_generated("a <!-- compare:begin --> b", "g").is_ok());
    EXPECT_FALSE(replace_generated("a <!-- compare:end --> b", "g").is_ok());
    EXPECT_FALSE(replace_generated("<!-- compare:end --> x <!-- compare:begin -->", "g").is_ok());
    EXPECT_FALSE(replace_generated("<!-- compare:begin --><!-- compare:end -->"
                                   "<!-- compare:begin --><!-- compare:end -->",
                                   "g")
                     .is_ok());
}

TEST(MarkersTest, UpdateFileRewritesTheFileInPlace) {
    // Rule: update_markdown_file replaces the section in the file itself.
    char dir[] = "/tmp/narad-markers-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string path = std::string(dir) + "/benchmarks.md";
    std::ofstream(path) << kDocument;
    ASSERT_TRUE(update_markdown_file(path, "fresh").is_ok());
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("<!-- compare:begin -->\nfresh\n<!-- compare:end -->"),
              std::string::npos);
    EXPECT_NE(text.str().find("Hand-written."), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    EXPECT_FALSE(update_markdown_file(std::string(dir) + "/missing.md", "x").is_ok());
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace narad::compare
