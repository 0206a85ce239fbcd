// Scenario files: every preset loads; save → parse round-trips exactly; saving is atomic.
#include "test_support.hpp"

#include "madmax/search.hpp"
#include "madmax/strategy_numbers.hpp"
#include "madmax/strategy_switches.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace madmax;
namespace fs = std::filesystem;

TEST_CASE("Every built-in scenario loads and gives finite, positive results") {
    const auto ids = PresetLibrary::builtin().ids(PresetKind::Scenario);
    REQUIRE(ids.size() >= 5);
    for (const auto& id : ids) {
        INFO(id);
        const Result r = evaluate(test::preset(id));
        CHECK(std::isfinite(r.stepTimeS));
        CHECK(r.stepTimeS > 0);
        CHECK(r.memory.fits());
    }
}

TEST_CASE("Every model and system preset parses, and says where its numbers come from") {
    for (const Preset* p : PresetLibrary::builtin().list(PresetKind::Model)) {
        INFO(p->id);
        CHECK_FALSE(parseModel(p->json, p->origin, "model").source.empty());
    }
    for (const Preset* p : PresetLibrary::builtin().list(PresetKind::System)) {
        INFO(p->id);
        const System s = test::systemPreset(p->id);
        CHECK_FALSE(s.source.empty());
        CHECK_FALSE(s.gpu.source.empty());
    }
}

TEST_CASE("toJson then parse reproduces a scenario exactly") {
    for (const auto& id : PresetLibrary::builtin().ids(PresetKind::Scenario)) {
        INFO(id);
        const Scenario s = test::preset(id);
        const auto once = toJson(s);
        const Scenario back = parseScenario(once, "roundtrip");
        CHECK(toJson(back) == once);
        CHECK(evaluate(back).stepTimeS == evaluate(s).stepTimeS);
    }
}

TEST_CASE("Each strategy switch is declared once: its default is Strategy{}'s, and it round-trips") {
    // The table is what the parser, the JSON writer and the explorer read (issue #32).
    const auto switches = strategySwitches();
    REQUIRE(switches.size() == 8);
    CHECK(findStrategySwitch("no_such_switch") == nullptr);
    const Strategy plain{};
    std::set<std::string_view> keys;
    for (const StrategySwitch& sw : switches) {
        INFO(sw.key);
        CHECK(keys.insert(sw.key).second);            // no key twice
        CHECK(findStrategySwitch(sw.key) == &sw);     // found by its key, as specs look it up
        CHECK(plain.*sw.member == sw.byDefault);      // a file that omits it gets Strategy{}'s
        CHECK_FALSE(sw.label.empty());
        CHECK_FALSE(sw.help.empty());
        // Flip this one switch away from its default: the writer says so and the parser reads
        // it back, and no other switch moves.
        Scenario s = test::preset("default");
        s.strategy.*sw.member = !sw.byDefault;
        const auto doc = toJson(s);
        CHECK(doc.at("strategy").at(std::string(sw.key)).get<bool>() == !sw.byDefault);
        const Scenario back = parseScenario(doc, "switch.json");
        for (const StrategySwitch& other : switches)
            CHECK(back.strategy.*other.member == s.strategy.*other.member);
    }
}

TEST_CASE("Each numeric strategy field is declared once: default, range, writer, parser, spec") {
    // madmax/strategy_numbers.hpp is what the parser, the JSON writer, the --baseline and
    // --restrict specs and the explorer's spin boxes read (issue #32, "a field declared once").
    const auto numbers = strategyNumbers();
    REQUIRE(numbers.size() == 19);
    const Strategy plain{};
    std::set<std::string_view> names;
    for (const StrategyNumber& n : numbers) {
        INFO(n.key);
        CHECK(names.insert(n.key).second); // no key or alias twice
        if (!n.alias.empty()) CHECK(names.insert(n.alias).second);
        CHECK(n.integer() == (n.realMember == nullptr)); // exactly one member
        if (!n.derivedDefault) CHECK(n.get(plain) == n.byDefault);
        CHECK(n.min <= n.byDefault);
        CHECK(n.byDefault <= n.max);
        CHECK_FALSE(n.label.empty());
        CHECK_FALSE(n.help.empty());
        CHECK(findStrategyNumber(n.key) == &n);
        // The writer writes the member in the file's unit, and the parser reads it back: a
        // value other than the current one, inside the range; nothing else moves. (Field by
        // field: the scenario's cross-field rules, such as TP dividing the heads, are not this
        // table's business.)
        Strategy st = test::preset("default").strategy;
        const double old = n.get(st);
        const double v = old + 1 <= n.max ? old + 1 : n.min;
        n.set(st, v);
        const auto doc = toJson(st);
        CHECK(doc.at(std::string(n.key)).get<double>() == v);
        const int gpus = int(replicaGpus(st) * st.dp);
        const Strategy back = parseStrategy(doc, "number.json", gpus);
        for (const StrategyNumber& other : numbers)
            CHECK(other.get(back) == other.get(st));
        // Out of its range, the file is refused naming the field.
        auto bad = doc;
        bad[std::string(n.key)] = n.max * 2 + 1;
        CHECK_THROWS_WITH(parseStrategy(bad, "number.json", gpus),
                          Catch::Contains("strategy." + std::string(n.key)));
    }
    // The spec names: bucket_mb is in MB in the file and in a spec, in bytes in the member.
    const Scenario s = test::preset("default");
    CHECK(parseStrategySpec("bucket_mb=25", s).bucketBytes == 25e6);
    CHECK(parseStrategySpec("mb=2", s).microBatch == 2);
    CHECK(parseStrategySpec("cuda_graphs=1", s).cudaGraphs);
    CHECK_THROWS_WITH(parseStrategySpec("zero=4", s), Catch::Contains("zero_stage takes 0 to 3"));
    CHECK_THROWS_WITH(parseStrategySpec("bogus=1", s), Catch::Contains("redundant_experts"));
}

TEST_CASE("Overrides in the file apply before --set, and a preset id can be swapped by path") {
    nlohmann::json doc = PresetLibrary::builtin().find(PresetKind::Scenario, "default")->json;
    // Llama 2's context is 4,096 tokens: the swap shortens the sequence with it.
    doc["overrides"] = {{"strategy.micro_batch", 2}, {"model", "llama2-70b"},
                        {"workload.seq_len", 4096}};
    const auto resolved = resolveScenario(doc, PresetLibrary::builtin(), "x.json",
                                          {parseOverride("strategy.micro_batch=4")});
    const Scenario s = parseScenario(resolved, "x.json");
    CHECK(s.strategy.microBatch == 4);
    CHECK(s.model.vocab == 32000);
}

TEST_CASE("dp is derived from the GPU count when omitted") {
    nlohmann::json doc = PresetLibrary::builtin().find(PresetKind::Scenario, "default")->json;
    doc["strategy"].erase("dp");
    const Scenario s =
        parseScenario(resolveScenario(doc, PresetLibrary::builtin(), "x.json"), "x.json");
    CHECK(s.strategy.dp == 256 / (8 * 4));
}

TEST_CASE("Atomic save replaces the file, and a failed save leaves the old one intact") {
    const fs::path dir =
        std::filesystem::temp_directory_path() / ("madmax-save-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string file = (dir / "s.json").string();
    writeFileAtomically(file, "old");
    writeFileAtomically(file, "new contents");
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str() == "new contents");
    // The target is a non-empty directory: rename must fail, and no temporary is left behind.
    const fs::path blocker = dir / "blocker";
    fs::create_directories(blocker / "inside");
    CHECK_THROWS(writeFileAtomically(blocker.string(), "x"));
    CHECK(fs::is_directory(blocker / "inside"));
    int leftovers = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp") != std::string::npos) ++leftovers;
    CHECK(leftovers == 0);
    std::ifstream again(file);
    std::stringstream ss2;
    ss2 << again.rdbuf();
    CHECK(ss2.str() == "new contents");
}

TEST_CASE("The core publishes each field's unit and what its parser accepts") {
    const PresetLibrary& lib = PresetLibrary::builtin();
    const nlohmann::json doc = loadScenarioJson("default", lib);
    const FieldCatalog fields = describeScenarioFields(doc);
    // Ranges are those the strict parser enforces (scenario_parse.cpp), cross-field rules those
    // of explainInvalid(); a change to either shows here.
    REQUIRE(fields.count("strategy.tp"));
    CHECK(fields.at("strategy.tp").allowed == "integer, 1 to 1048576");
    CHECK(fields.at("workload.seq_len").allowed ==
          "integer, 1 to 1073741824; divisible by CP");
    CHECK(fields.at("workload.seq_len").unit == "tokens");
    CHECK(fields.at("system.tiers.0.oversubscription").allowed == "1 to 10000");
    CHECK(fields.at("system.tiers.1.gpus").allowed.find("≥ the tier inside") != std::string::npos);
    CHECK(fields.at("system.gpu.hbm_gb").unit == "GB");
    CHECK(fields.at("workload.attention").allowed == "flash / unfused");
    CHECK(fields.at("strategy.sequence_parallel").allowed == "true / false");
    // Outside a describe call nothing is recorded.
    FieldCatalog none;
    parseScenario(doc, "x");
    CHECK(none.empty());
}

TEST_CASE("A strategy edit's implications are the core's rules, not the explorer's") {
    // The default scenario (presets/scenarios/default.json); DP = GPUs / (TP·PP·CP).
    const Scenario s = test::preset("default");
    const auto find = [](const FieldEdits& e, const std::string& path) -> const nlohmann::json* {
        for (const auto& [p, v] : e)
            if (p == path) return &v;
        return nullptr;
    };
    const long long otherDegrees = 1LL * s.strategy.pp * s.strategy.cp;
    // TP doubled: DP halves when the replica still divides the GPUs.
    const FieldEdits tp = impliedEdits(s, "strategy.tp", s.strategy.tp * 2);
    REQUIRE(tp.front().first == "strategy.tp");
    if (s.gpus % (2LL * s.strategy.tp * otherDegrees) == 0) {
        REQUIRE(find(tp, "strategy.dp"));
        CHECK(find(tp, "strategy.dp")->get<long long>() == s.gpus / (2LL * s.strategy.tp * otherDegrees));
    }
    // A TP that does not divide the GPUs leaves DP for the validity check to explain.
    CHECK_FALSE(find(impliedEdits(s, "strategy.tp", 7), "strategy.dp"));
    // DP sets the GPU count to DP · TP · PP · CP.
    const FieldEdits dp = impliedEdits(s, "strategy.dp", 3);
    REQUIRE(find(dp, "gpus"));
    CHECK(find(dp, "gpus")->get<long long>() == 3LL * s.strategy.tp * otherDegrees);
    // Chunks per GPU choose the schedule (Megatron-Core: v > 1 is interleaved).
    CHECK(*find(impliedEdits(s, "strategy.vp", 2), "strategy.schedule") == "interleaved");
    CHECK(*find(impliedEdits(s, "strategy.vp", 1), "strategy.schedule") == "1f1b");
    // A field without rules is the edit alone.
    CHECK(impliedEdits(s, "strategy.micro_batch", 2).size() == 1);
}

TEST_CASE("Saving keeps the file's permissions, refuses read-only files, cleans up after a kill") {
    // Issue #30: a 0600 file became 0644 when saved over; a read-only file was replaced; a kill
    // during a save left its temporary behind for good.
    const fs::path dir =
        fs::temp_directory_path() / ("madmax-mode-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path file = dir / "private.json";
    writeFileAtomically(file.string(), "one");
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    writeFileAtomically(file.string(), "two");
    CHECK((fs::status(file).permissions() & fs::perms::all) ==
          (fs::perms::owner_read | fs::perms::owner_write));
    // Read-only: refused, the file as it was. (Root may write anything: then only the mode.)
    fs::permissions(file, fs::perms::owner_read);
    if (::geteuid() != 0) {
        CHECK_THROWS_WITH(writeFileAtomically(file.string(), "three"),
                          Catch::Matchers::Contains("read-only"));
        std::ifstream in(file);
        std::string text;
        in >> text;
        CHECK(text == "two");
    }
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    // A temporary of a process that no longer runs (pid 2^22 + 1 is above Linux's pid_max
    // default of 2^22) is removed by the next save of that file; another file's is kept.
    const fs::path stale = dir / ".private.json.madmax-tmp.4194305.7";
    const fs::path other = dir / ".other.json.madmax-tmp.4194305.7";
    std::ofstream(stale) << "torn";
    std::ofstream(other) << "torn";
    writeFileAtomically(file.string(), "four");
    CHECK_FALSE(fs::exists(stale));
    CHECK(fs::exists(other));
    fs::remove_all(dir);
}

TEST_CASE("One id rule for every file an id names") {
    CHECK_FALSE(explainBadFileId("h100-mine_2.1"));
    for (const char* bad : {"", ".", "..", "../../x", "a/b", "x y", "é"}) {
        INFO(bad);
        CHECK(explainBadFileId(bad));
    }
    CHECK(explainBadFileId(std::string(129, 'a')));
}
