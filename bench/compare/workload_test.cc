#include "compare/workload.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace narad::compare {
namespace {

TEST(WorkloadTest, ParsesOmbKeysAndOurs) {
    // Rule: OMB's key names map onto the workload, plus batchSize, count and warmupCount.
    auto w = parse_workload(R"(
name: 1 topic / 16 partitions / 1kb
topics: 1
partitionsPerTopic: 16
messageSize: 1024
subscriptionsPerTopic: 1
consumerPerSubscription: 4
producersPerTopic: 2
producerRate: 50000
consumerBacklogSizeGB: 0
testDurationMinutes: 2
batchSize: 100
warmupCount: 300
timeoutSeconds: 200
)");
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    EXPECT_EQ(w->name, "1 topic / 16 partitions / 1kb");
    EXPECT_EQ(w->partitions, 16u);
    EXPECT_EQ(w->message_bytes, 1024u);
    EXPECT_EQ(w->consumers, 4u);
    EXPECT_EQ(w->producers, 2u);
    EXPECT_DOUBLE_EQ(w->producer_rate, 50000);
    EXPECT_EQ(w->duration_ns, int64_t(120) * 1'000'000'000);
    EXPECT_EQ(w->count, 0u);
    EXPECT_EQ(w->batch, 100u);
    EXPECT_EQ(w->warmup_count, 300u);
    EXPECT_EQ(w->timeout_ns, int64_t(200) * 1'000'000'000);
    EXPECT_TRUE(w->rate_limited());
}

TEST(WorkloadTest, AbsentKeysTakeTheDefaults) {
    // Rule: only name and an amount are required; everything else has a documented default.
    auto w = parse_workload("name: tiny\ncount: 10\n");
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    const Workload defaults;
    EXPECT_EQ(w->count, 10u);
    EXPECT_EQ(w->partitions, defaults.partitions);
    EXPECT_EQ(w->message_bytes, defaults.message_bytes);
    EXPECT_FALSE(w->message_bytes_set);
    EXPECT_EQ(w->producers, 1u);
    EXPECT_EQ(w->consumers, 1u);
    EXPECT_EQ(w->batch, 1u);
    EXPECT_EQ(w->producer_rate, 0);
    EXPECT_EQ(w->warmup_count, defaults.warmup_count);
    EXPECT_EQ(w->timeout_ns, defaults.timeout_ns);
    EXPECT_FALSE(w->rate_limited());
}

TEST(WorkloadTest, ProducerRateMaxAndZeroBothMeanUnlimited) {
    // Rule: producerRate "max" and 0 mean as fast as possible; a negative rate is an error.
    auto max = parse_workload("name: a\ncount: 1\nproducerRate: max\n");
    auto zero = parse_workload("name: a\ncount: 1\nproducerRate: 0\n");
    ASSERT_TRUE(max.is_ok());
    ASSERT_TRUE(zero.is_ok());
    EXPECT_FALSE(max->rate_limited());
    EXPECT_FALSE(zero->rate_limited());
    EXPECT_FALSE(parse_workload("name: a\ncount: 1\nproducerRate: -5\n").is_ok());
}

TEST(WorkloadTest, DurationInSecondsIsAccepted) {
    // Rule: testDurationSeconds is the seconds form of testDurationMinutes, fractions allowed.
    auto w = parse_workload("name: a\ntestDurationSeconds: 2.5\n");
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    EXPECT_EQ(w->duration_ns, 2'500'000'000);
}

TEST(WorkloadTest, BothDurationFormsAreAnError) {
    // Rule: the duration is given once, in minutes or in seconds.
    auto w = parse_workload("name: a\ntestDurationSeconds: 2\ntestDurationMinutes: 1\n");
    ASSERT_FALSE(w.is_ok());
    EXPECT_NE(w.status().message().find("not both"), std::string::npos);
}

TEST(WorkloadTest, CountAndDurationExcludeEachOtherAndOneIsRequired) {
    // Rule: a workload is either N messages or a duration, never both, never neither.
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\ntestDurationSeconds: 1\n").is_ok());
    auto none = parse_workload("name: a\n");
    ASSERT_FALSE(none.is_ok());
    EXPECT_NE(none.status().message().find("count"), std::string::npos);
}

TEST(WorkloadTest, UnknownKeyIsAnErrorNamingIt) {
    // Rule: a misspelt key fails loudly instead of silently using a default.
    auto w = parse_workload("name: a\ncount: 5\nproducersPerTopc: 4\n");
    ASSERT_FALSE(w.is_ok());
    EXPECT_NE(w.status().message().find("producersPerTopc"), std::string::npos);
    EXPECT_NE(w.status().message().find("unknown key"), std::string::npos);
}

TEST(WorkloadTest, DuplicateKeyIsAnError) {
    // Rule: a key given twice is ambiguous.
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\ncount: 6\n").is_ok());
}

TEST(WorkloadTest, OutOfRangeValuesAreErrors) {
    // Rule: every numeric key has limits (payload room for the id, one topic, clients).
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\nmessageSize: 10\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\npartitionsPerTopic: 0\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\ntopics: 2\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\nsubscriptionsPerTopic: 2\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\nproducersPerTopic: 257\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\nbatchSize: 0\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\nconsumerBacklogSizeGB: 1\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 0\n").is_ok());
}

TEST(WorkloadTest, NonNumbersAreErrors) {
    // Rule: numbers must be numbers, whole where a count is meant.
    auto w = parse_workload("name: a\ncount: lots\n");
    ASSERT_FALSE(w.is_ok());
    EXPECT_NE(w.status().message().find("count"), std::string::npos);
    EXPECT_FALSE(parse_workload("name: a\ncount: 1.5\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: [1]\n").is_ok());
}

TEST(WorkloadTest, RatePercentOfMaxNeedsItsReference) {
    // Rule: a share of the max names the workload whose max it is, and excludes producerRate.
    auto w = parse_workload(
        "name: half\ntestDurationSeconds: 5\nratePercentOfMax: 50\nrateReference: full\n");
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    EXPECT_DOUBLE_EQ(w->rate_percent_of_max, 50);
    EXPECT_EQ(w->rate_reference, "full");
    EXPECT_TRUE(w->rate_limited());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\nratePercentOfMax: 50\n").is_ok());
    EXPECT_FALSE(parse_workload("name: a\ncount: 5\nrateReference: b\n").is_ok());
    EXPECT_FALSE(parse_workload(
                     "name: a\ncount: 5\nratePercentOfMax: 50\nrateReference: b\nproducerRate: 9\n")
                     .is_ok());
    EXPECT_FALSE(
        parse_workload("name: a\ncount: 5\nratePercentOfMax: 150\nrateReference: b\n").is_ok());
    EXPECT_FALSE(
        parse_workload("name: a\ncount: 5\nratePercentOfMax: 50\nrateReference: a\n").is_ok());
}

TEST(WorkloadTest, InvalidYamlAndNonMappingsAreErrors) {
    // Rule: yaml-cpp's exceptions become errors, never escape.
    EXPECT_FALSE(parse_workload("name: [unclosed\n").is_ok());
    EXPECT_FALSE(parse_workload("- a\n- b\n").is_ok());
    EXPECT_FALSE(parse_workload("").is_ok());
}

class WorkloadFileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char path[] = "/tmp/narad-workload-test-XXXXXX";
        ASSERT_NE(::mkdtemp(path), nullptr);
        dir_ = path;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ + "/" + name) << text;
    }
    std::string dir_;
};

TEST_F(WorkloadFileTest, PayloadFileIsResolvedBesideTheWorkloadAndGivesTheSize) {
    // Rule: a relative payloadFile is found next to the workload file; without messageSize its
    // size is the message size.
    write("payload.data", std::string(300, 'x'));
    write("w.yaml", "name: w\ncount: 3\npayloadFile: payload.data\n");
    auto w = load_workload(dir_ + "/w.yaml");
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    EXPECT_EQ(w->payload_file, dir_ + "/payload.data");
    EXPECT_EQ(w->message_bytes, 300u);
    EXPECT_EQ(w->source_path, dir_ + "/w.yaml");
}

TEST_F(WorkloadFileTest, MissingPayloadFileIsAnError) {
    // Rule: a payloadFile that does not exist fails the load, naming it.
    write("w.yaml", "name: w\ncount: 3\npayloadFile: nowhere.data\n");
    auto w = load_workload(dir_ + "/w.yaml");
    ASSERT_FALSE(w.is_ok());
    EXPECT_NE(w.status().message().find("nowhere.data"), std::string::npos);
}

TEST_F(WorkloadFileTest, ErrorsNameTheFile) {
    // Rule: a bad workload file is reported with its path.
    write("bad.yaml", "name: w\n");
    auto w = load_workload(dir_ + "/bad.yaml");
    ASSERT_FALSE(w.is_ok());
    EXPECT_NE(w.status().message().find("bad.yaml"), std::string::npos);
}

TEST(ShippedWorkloadsTest, EveryShippedWorkloadParses) {
    // Rule: the workloads `make bench` runs are valid, and the fixed-rate one refers to a
    // max-throughput workload that is shipped too.
    const std::string dir = std::string(NARAD_SOURCE_DIR) + "/bench/workloads";
    std::vector<Workload> workloads;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".yaml") continue;
        auto w = load_workload(entry.path().string());
        ASSERT_TRUE(w.is_ok()) << w.status().message();
        workloads.push_back(*w);
    }
    ASSERT_GE(workloads.size(), 4u);
    bool found_fixed_rate = false;
    for (const Workload& w : workloads) {
        if (w.rate_percent_of_max == 0) continue;
        found_fixed_rate = true;
        bool reference_found = false;
        for (const Workload& other : workloads) {
            reference_found |= other.name == w.rate_reference && !other.rate_limited();
        }
        EXPECT_TRUE(reference_found) << w.name;
    }
    EXPECT_TRUE(found_fixed_rate);
}

}  // namespace
}  // namespace narad::compare
