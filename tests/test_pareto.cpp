// Resource against performance (MAD-Max Figure 1): systems × GPU counts, each searched, and the
// fronts in GPUs and in dollars per hour.
#include "madmax/codesign.hpp"
#include "madmax/dlrm_search.hpp"
#include "madmax/scenario.hpp"
#include "madmax/search_io.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

using namespace madmax;
using nlohmann::json;

namespace {

/// Llama 2 7B at global batch 64 × 2048, the scenario's A100 system.
Scenario small() {
    return test::preset(
        "llama2-7b-8-a100-40gb",
        {"gpus=16", "strategy.dp=16", "workload.global_batch=64", "workload.seq_len=2048"});
}

/// The scenario's system at `price` $/GPU-hour, its compute scaled by `flops`.
ResourceSystem priced(const Scenario& s, const std::string& id, double price, double flops = 1) {
    ResourceSystem r{id, scaleKnob(s, "flops", flops).system};
    r.system.pricePerGpuHour = price;
    return r;
}

} // namespace

TEST_CASE("Pareto: every system at every GPU count, searched, with both fronts") {
    const Scenario s = small();
    // Three builds of the same hardware: "cheap" at $1/GPU-hour, "dear" at $2 (same speed), and
    // "fast" with twice the FLOPs at $3.
    const std::vector<ResourceSystem> systems = {priced(s, "cheap", 1.0), priced(s, "dear", 2.0),
                                                 priced(s, "fast", 3.0, 2.0)};
    const ResourcePareto r = resourcePareto(s, systems, {8, 16, 32}, {}, SearchOptions{});
    REQUIRE(r.points.size() == 9);
    CHECK(r.priced);
    CHECK(r.unit == "tokens/s");
    for (const ResourcePoint& p : r.points) {
        INFO(p.systemId << " at " << p.gpus);
        REQUIRE(p.feasible);
        // Each point is the search's best at that count on that system.
        Scenario at = s;
        at.system = systems[p.systemId == "cheap" ? 0 : p.systemId == "dear" ? 1 : 2].system;
        at.gpus = p.gpus;
        at.strategy.dp = p.gpus;
        SearchSpace space;
        space.gpus = {p.gpus};
        SearchOptions o;
        o.topN = 1;
        CHECK(p.best.tokensPerS == Approx(search(at, space, o).top.front().tokensPerS));
        // $ per million tokens: GPUs × price per hour ÷ 3600 ÷ tokens/s × 1e6.
        CHECK(p.dollarsPerMillion() ==
              Approx(p.gpus * p.pricePerGpuHour / 3600.0 / p.best.tokensPerS * 1e6));
    }
    auto point = [&](const std::string& id, int gpus) {
        for (const ResourcePoint& p : r.points)
            if (p.systemId == id && p.gpus == gpus) return p;
        FAIL("no point " << id << " " << gpus);
        return ResourcePoint{};
    };
    // Same hardware, same throughput: "dear" never beats "cheap" in dollars, so it is off that
    // front at every count; in GPUs the two tie and "fast" beats both at every count.
    for (int g : {8, 16, 32}) {
        CHECK(point("dear", g).best.tokensPerS == Approx(point("cheap", g).best.tokensPerS));
        CHECK_FALSE(point("dear", g).frontDollars);
        CHECK(point("fast", g).best.tokensPerS > point("cheap", g).best.tokensPerS);
        CHECK(point("fast", g).frontGpus);
        CHECK_FALSE(point("cheap", g).frontGpus);
    }
    // The cheapest point of all is on the dollar front: nothing costs less per hour.
    CHECK(point("cheap", 8).frontDollars);
    // Every front point is undominated, and every point off the GPU front is dominated.
    for (const ResourcePoint& p : r.points) {
        bool dominated = false;
        for (const ResourcePoint& q : r.points)
            dominated = dominated || (q.gpus <= p.gpus && q.best.tokensPerS > p.best.tokensPerS);
        CHECK(p.frontGpus == !dominated);
    }
}

TEST_CASE("Pareto: identical systems tie, and a tie dominates neither") {
    // Two builds of the same hardware at the same price give the same points: each pair ties
    // in resource and throughput, so all of them sit on both fronts (the larger count has more
    // throughput, the smaller fewer GPUs).
    const Scenario s = small();
    const ResourcePareto r =
        resourcePareto(s, {priced(s, "a", 1.0), priced(s, "b", 1.0)}, {8, 16}, {}, SearchOptions{});
    REQUIRE(r.points.size() == 4);
    for (const ResourcePoint& p : r.points) {
        INFO(p.systemId << " " << p.gpus);
        CHECK(p.frontGpus);
        CHECK(p.frontDollars);
    }
}

TEST_CASE("Pareto: a DLRM compares sharding plans in samples/s, and a system without a price "
          "has no dollar front") {
    const Scenario d = test::preset("dlrm-dcnv2-64-h100");
    ResourceSystem unpriced{"unpriced", d.system};
    unpriced.system.pricePerGpuHour = 0;
    const ResourcePareto r = resourcePareto(d, {unpriced}, {32, 64}, {}, SearchOptions{});
    CHECK(r.unit == "samples/s");
    CHECK_FALSE(r.priced);
    REQUIRE(r.points.size() == 2);
    for (const ResourcePoint& p : r.points) {
        CHECK(p.feasible);
        CHECK_FALSE(p.frontDollars);
        CHECK(p.dollarsPerMillion() == 0.0);
    }
    const json j = toJson(r);
    CHECK(j["schema"] == "madmax-pareto/1");
    CHECK(j["points"].size() == 2);
    // Its best strategy is a sharding plan, and every output says which one: the JSON lists a
    // type per table (26 tables), the spec and CSV give the plan, not the unused TP/PP/DP
    // fields (they had read "tp=1,pp=1,...,dp=64" for every DLRM point).
    for (std::size_t i = 0; i < 2; ++i) {
        const ResourcePoint& p = r.points[i];
        CHECK(p.best.embTables == 26);
        CHECK(p.spec == describePlan(d, p.best.strategy.dlrm));
        const json& b = j["points"][i]["best"];
        REQUIRE(b["strategy"]["emb_sharding"].size() == 26);
        for (int t = 0; t < 26; ++t)
            CHECK(b["strategy"]["emb_sharding"][t] ==
                  std::string(toString(p.best.strategy.dlrm.sharding[t])));
        CHECK_THAT(b["spec"].get<std::string>(), Catch::StartsWith("emb="));
        CHECK(j["points"][i]["spec"] == p.spec);
        CHECK_THAT(paretoCsv(r), Catch::Contains("\"" + p.spec + "\""));
    }
    CHECK_THAT(paretoCsv(r), !Catch::Contains("tp=1,pp=1"));
}

TEST_CASE("Pareto: bad systems and GPU counts are named") {
    std::string msg;
    try {
        loadResourceSystem("dgx-h100-superpd");
    } catch (const InputError& e) {
        msg = e.what();
    }
    CHECK_THAT(msg, Catch::Contains("dgx-h100-superpod"));
    msg.clear();
    try {
        resourcePareto(small(), {}, {0, 8}, {}, SearchOptions{});
    } catch (const InputError& e) {
        msg = e.what();
    }
    CHECK_THAT(msg, Catch::Contains("at least 1"));
    std::string out, err;
    // The table prices to three significant figures: a DLRM's dollars per million samples are
    // hundredths of a cent (DCNv2 on 8 H100 at $2.99/GPU-hour: 8 · 2.99 = $23.9 an hour for
    // about 1.8·10⁷ samples/s, so 23.92 / (1.8e7 · 3600) · 1e6 ≈ $0.00037), not "0.000".
    CHECK(test::runCli("pareto dlrm-dcnv2-64-h100 --gpus 8 --json", &out, &err) == 0);
    const double perM = json::parse(out)["points"][0]["dollars_per_million"].get<double>();
    CHECK(perM == Approx(23.92 / 3600.0 / 1.8e7 * 1e6).epsilon(0.05));
    char expect[32];
    std::snprintf(expect, sizeof expect, " %.3g ", perM);
    CHECK(test::runCli("pareto dlrm-dcnv2-64-h100 --gpus 8", &out, &err) == 0);
    CHECK_THAT(out, Catch::Contains("   23.9 ") && Catch::Contains(expect) &&
                        !Catch::Contains(" 0.000 "));
    CHECK(test::runCli("pareto llama2-7b-8-a100-40gb --gpus 8,16 --json", &out, &err) == 0);
    const json j = json::parse(out);
    CHECK(j["points"].size() == 2);
    CHECK(test::runCli("pareto --system no-such-system", &out, &err) == 2);
    CHECK_THAT(err, Catch::Contains("no-such-system"));
}

TEST_CASE("Pareto: a point with no strategy says why - memory, or no valid split") {
    // Llama 2 7B with Adam holds 16 B per parameter (6.7 B of them: 108 GB): on one 40 GB A100
    // nothing fits.
    // 65,537 GPUs (a prime): TP·PP·CP·DP = 65,537 needs one degree of 65,537, and none may be
    // (TP ≤ 8 in the node, PP ≤ 32 layers, DP divides the 64 sequences, CP the 2048 tokens).
    const ResourcePareto r = resourcePareto(small(), {}, {1, 65537}, {}, SearchOptions{});
    REQUIRE(r.points.size() == 2);
    CHECK_FALSE(r.points[0].feasible);
    CHECK(r.points[0].whyNone == "no strategy fits in memory");
    CHECK_FALSE(r.points[1].feasible);
    CHECK_THAT(r.points[1].whyNone, Catch::StartsWith("no valid strategy"));
    CHECK(toJson(r)["points"][1]["why_none"] == r.points[1].whyNone);
    // A DLRM's one strategy (data parallel over every GPU): its own rule, verbatim.
    const ResourcePareto d =
        resourcePareto(test::preset("dlrm-dcnv2-64-h100"), {}, {3}, {}, SearchOptions{});
    REQUIRE(d.points.size() == 1);
    CHECK_THAT(d.points[0].whyNone, Catch::Contains("must be a multiple of the 3 GPUs"));
}
