#include "cli/pub.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/test_support.h"

namespace narad::cli {
namespace {

// Rule: --file wins, then a second argument other than "-", then stdin.
TEST(PubBodySource, FileThenArgumentThenStdin) {
    EXPECT_EQ(pub_body_source({"t", "msg"}, "f.json"), BodySource::file);
    EXPECT_EQ(pub_body_source({"t", "msg"}, ""), BodySource::argument);
    EXPECT_EQ(pub_body_source({"t", "-"}, ""), BodySource::standard_input);
    EXPECT_EQ(pub_body_source({"t"}, ""), BodySource::standard_input);
    EXPECT_EQ(pub_body_source({"t", ""}, ""), BodySource::argument);
}

// Rule: the body is read from the chosen source, byte for byte.
TEST(PubBody, ReadsChosenSource) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/body.bin";
    std::ofstream(path, std::ios::binary) << std::string("bin\x00ary", 7);
    std::istringstream in("from stdin\n");
    EXPECT_EQ(*read_pub_body({"t", "arg"}, path, in), std::string("bin\x00ary", 7));
    EXPECT_EQ(*read_pub_body({"t", "arg"}, "", in), "arg");
    EXPECT_EQ(*read_pub_body({"t", "-"}, "", in), "from stdin\n");
    auto missing = read_pub_body({"t"}, dir.path() + "/none", in);
    ASSERT_FALSE(missing.is_ok());
    EXPECT_EQ(missing.status().message(),
              "open " + dir.path() + "/none: No such file or directory");
}

// Rule: the query carries key then partition (url.Values order), each only when set.
TEST(PubTarget, EncodesKeyAndPartition) {
    EXPECT_EQ(pub_target("orders", "", -1), "/v1/topics/orders/produce");
    EXPECT_EQ(pub_target("orders", "user 7&x", -1), "/v1/topics/orders/produce?key=user+7%26x");
    EXPECT_EQ(pub_target("orders", "", 0), "/v1/topics/orders/produce?partition=0");
    EXPECT_EQ(pub_target("orders", "k", 2), "/v1/topics/orders/produce?key=k&partition=2");
}

}  // namespace
}  // namespace narad::cli
