// Bad input gets a clear error naming the file, the field and the fix — never a crash or NaN.
#include "madmax/error.hpp"
#include "madmax/search.hpp"
#include "madmax/search_io.hpp"
#include "madmax/validation.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <functional>

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace madmax;
using Catch::Matchers::Contains;

namespace {

/// The default scenario as an inline document, with one edit applied by `edit`.
template <class F> std::string errorFor(F edit) {
    nlohmann::json doc = PresetLibrary::builtin().find(PresetKind::Scenario, "default")->json;
    edit(doc);
    try {
        parseScenario(resolveScenario(doc, PresetLibrary::builtin(), "bad.json"), "bad.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

std::string errorForSetOn(const std::string& id, const std::vector<std::string>& sets) {
    try {
        test::preset(id, sets);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

std::string errorForSet(const std::vector<std::string>& sets) {
    try {
        test::preset("default", sets);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST_CASE("A tier's all_to_all_efficiency outside 0 to 1 is refused naming the field") {
    // The parser's range (scenario_parse.cpp): 0.01 to 1, a share of the tier's efficiency.
    for (const char* v : {"0", "1.5", "-0.2"})
        CHECK_THAT(errorForSet({std::string("system.tiers.1.all_to_all_efficiency=") + v}),
                   Contains("system.tiers[1].all_to_all_efficiency: value") &&
                       Contains("allowed: from 0.01 to 1"));
    CHECK_THAT(errorForSet({"system.tiers.1.all_to_all_efficiency=\"half\""}),
               Contains("system.tiers[1].all_to_all_efficiency"));
    CHECK_THAT(errorForSet({"system.gpu.links.scale_out.all_to_all_efficiency=2"}),
               Contains("system.gpu.links.scale_out.all_to_all_efficiency: value 2 is out of "
                        "range; allowed: from 0.01 to 1"));
    CHECK(errorForSet({"system.tiers.1.all_to_all_efficiency=0.5"}) == "(no error)");
}

TEST_CASE("Malformed JSON names the file, line and column") {
    const auto dir =
        std::filesystem::temp_directory_path() / ("madmax-bad-json-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = (dir / "broken.json").string();
    std::ofstream(file) << "{\n  \"model\": \"llama3-8b\",\n  \"gpus\": 8,,\n}";
    try {
        loadScenario(file, PresetLibrary::builtin());
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK_THAT(e.what(), Contains("broken.json") && Contains("malformed JSON at line 3"));
    }
}

TEST_CASE("A missing file says so") {
    CHECK_THROWS_WITH(loadScenario("/nonexistent/x.json", PresetLibrary::builtin()),
                      Contains("/nonexistent/x.json") && Contains("no such file"));
}

TEST_CASE("An unknown top-level key suggests the nearest") {
    CHECK_THAT(errorFor([](auto& d) { d["strategyy"] = 1; }),
               Contains("bad.json: strategyy: unknown key (did you mean \"strategy\"?)"));
}

TEST_CASE("An unknown nested key names its JSON path") {
    CHECK_THAT(errorFor([](auto& d) { d["strategy"]["tpp"] = 2; }),
               Contains("strategy.tpp: unknown key (did you mean \"tp\"?)"));
}

TEST_CASE("A wrong type names the field and what was given") {
    CHECK_THAT(errorFor([](auto& d) { d["strategy"]["tp"] = "eight"; }),
               Contains("strategy.tp: expected an integer") && Contains("string \"eight\""));
}

TEST_CASE("A negative size is out of range, with the allowed range") {
    CHECK_THAT(errorForSet({"model.layers=-3"}),
               Contains("model.layers: value -3 is out of range; allowed: 1 to"));
}

TEST_CASE("A number no double holds (--set x=1e400) names the field, not a JSON library error") {
    // It had escaped as nlohmann's out_of_range.406 ("internal error: number overflow").
    for (const char* set : {"system.host_link_gbps=1e400", "strategy.tp=-1e999"}) {
        const std::string e = errorForSet({set});
        INFO(set);
        CHECK_THAT(e, Contains("number overflow") && Contains("give a finite value"));
        CHECK_THAT(e, Contains(std::string(set).substr(0, std::string(set).find('='))));
        CHECK_THAT(e, !Contains("json.exception"));
    }
}

TEST_CASE("An exponential rate must be positive, and says its unit") {
    CHECK_THAT(errorForSet({"system.gpu.peak_exp_tera_per_s=0"}),
               Contains("system.gpu.peak_exp_tera_per_s: value 0 is out of range; allowed: "
                        "from 0.001"));
    CHECK_THAT(errorForSet({"system.gpu.peak_exp_tera_per_s=-4"}),
               Contains("system.gpu.peak_exp_tera_per_s: value -4 is out of range"));
    CHECK_THAT(errorForSet({"system.gpu.peak_exp_tera_per_s=\"fast\""}),
               Contains("system.gpu.peak_exp_tera_per_s: expected a number"));
}

TEST_CASE("Degrees whose product is not the GPU count explain the constraint") {
    CHECK_THAT(errorForSet({"strategy.dp=4"}),
               Contains("tp × pp × cp × dp = 8×4×1×4 = 128, but the scenario has 256 GPUs") &&
                   Contains("dp = 8 would fit"));
}

TEST_CASE("TP must divide the KV heads") {
    CHECK_THAT(errorForSet({"strategy.tp=16", "strategy.dp=4"}),
               Contains("TP=16 does not divide 8 KV heads"));
}

TEST_CASE("Layers must divide into pp × vp chunks") {
    CHECK_THAT(errorForSet({"strategy.vp=3"}),
               Contains("80 layers do not divide into pp × vp = 4×3 = 12"));
}

TEST_CASE("The global batch must divide into micro-batches") {
    CHECK_THAT(errorForSet({"workload.global_batch=100"}),
               Contains("global_batch 100 is not divisible by dp × micro_batch = 8×1 = 8"));
}

TEST_CASE("Virtual stages need the interleaved schedule") {
    CHECK_THAT(errorForSet({"strategy.schedule=1f1b"}),
               Contains("strategy.vp = 5 needs strategy.schedule = \"interleaved\""));
}

TEST_CASE("The interleaved schedule needs micro-batches in multiples of pp") {
    CHECK_THAT(errorForSet({"workload.global_batch=40"}), Contains("multiple of pp (4)"));
}

TEST_CASE("An unknown preset id suggests the nearest and lists the rest") {
    CHECK_THAT(errorForSet({"model=llama3-70"}), Contains("no model preset named \"llama3-70\"") &&
                                                     Contains("did you mean \"llama3-70b\"?") &&
                                                     Contains("available:"));
}

TEST_CASE("An unknown enum value lists the choices") {
    CHECK_THAT(errorForSet({"workload.precision=bf61"}),
               Contains("workload.precision: \"bf61\" is not allowed; choose one of") &&
                   Contains("did you mean \"bf16\"?"));
}

TEST_CASE("A precision the GPU has no peak for is refused") {
    CHECK_THAT(
        errorForSet({"system=dgx-a100-80gb-superpod", "workload.precision=fp8"}),
        Contains("workload.precision is fp8, which the GPU NVIDIA A100 SXM4 80GB has no peak for"));
}

TEST_CASE("An override path that does not exist suggests the nearest field") {
    CHECK_THAT(
        errorForSet({"strategyy.tp=2"}),
        Contains("--set: strategyy: no such field to override (did you mean \"strategy\"?)"));
}

TEST_CASE("An override without '=' shows the form") {
    CHECK_THROWS_WITH(parseOverride("strategy.tp"), Contains("expected path=value"));
}

TEST_CASE("An override index past the end of an array gives the array's size") {
    CHECK_THAT(errorForSet({"system.tiers.5.gbps=10"}),
               Contains("index 5 is past the end; the array has 2 elements"));
}

TEST_CASE("ZeRO stage 4 is out of range") {
    CHECK_THAT(errorForSet({"strategy.zero_stage=4"}),
               Contains("strategy.zero_stage: value 4 is out of range; allowed: 0 to 3"));
}

TEST_CASE("A shard group must divide dp") {
    CHECK_THAT(errorForSet({"strategy.shard_group=3"}),
               Contains("strategy.shard_group (3) must divide dp (8)"));
}

TEST_CASE("More GPUs than the system has is refused") {
    CHECK_THAT(errorForSet({"gpus=65536", "strategy.dp=2048"}),
               Contains("exceeds the 32768 GPUs of the system's outermost tier"));
}

TEST_CASE("CP must divide the sequence length") {
    CHECK_THAT(errorForSet({"strategy.cp=3", "strategy.dp=1", "gpus=96"}),
               Contains("CP=3 does not divide seq_len 8192"));
}

TEST_CASE("An efficiency above 1 in a curve names the point") {
    CHECK_THAT(
        errorForSet({"system.gpu.calibration.gemm_efficiency=[[1e9, 1.5]]"}),
        Contains("system.gpu.calibration.gemm_efficiency[0]: efficiency 1.5 must be in [0.001, 1]"));
}

TEST_CASE("Tiers must be listed innermost first") {
    CHECK_THAT(errorForSet({"system.tiers.1.gpus=4"}),
               Contains("system.tiers[1].gpus (4) is smaller than the tier inside it (8)"));
}

TEST_CASE("A placement naming a dimension twice is refused") {
    CHECK_THAT(errorForSet({"strategy.placement=[\"tp\",\"tp\",\"dp\",\"pp\"]"}),
               Contains("strategy.placement: \"tp\" appears twice"));
}

TEST_CASE("A document with another schema is refused") {
    CHECK_THAT(errorFor([](auto& d) { d["schema"] = "madmax-validation/1"; }),
               Contains("schema: \"madmax-validation/1\" is not a scenario"));
}

TEST_CASE("A missing required field is named") {
    CHECK_THAT(errorFor([](auto& d) { d["workload"].erase("seq_len"); }),
               Contains("workload.seq_len: required field is missing"));
}

TEST_CASE("dp that cannot be derived says why") {
    CHECK_THAT(
        errorFor([](auto& d) {
            d["strategy"].erase("dp");
            d["gpus"] = 100;
        }),
        Contains(
            "strategy.dp: cannot derive dp: gpus (100) is not divisible by tp × pp × cp = 32"));
}

TEST_CASE("Degree products that overflow 32 bits are rejected, never divided by") {
    // Each degree passes its own range check; their product would wrap to 0 in int arithmetic
    // and end in SIGFPE (issue #9). Products are computed wide and named in the message.
    const std::vector<std::string> huge = {"gpus=1073741824", "system.tiers.1.gpus=1073741824"};
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(), huge.begin(), huge.end());
        return errorForSet(more);
    };
    CHECK_THAT(with({"strategy.tp=1", "strategy.pp=65536", "strategy.vp=65536",
                     "strategy.dp=16384", "strategy.schedule=interleaved"}),
               Contains("pp × vp = 65536×65536 = 4294967296"));
    CHECK_THAT(with({"strategy.tp=1", "strategy.pp=1", "strategy.vp=1", "strategy.dp=1073741824",
                     "strategy.micro_batch=1048576"}),
               Contains("dp × micro_batch = 1073741824×1048576 = 1125899906842624"));
    CHECK_THAT(errorForSet({"strategy.tp=1048576", "strategy.pp=1048576"}),
               Contains("1048576×1048576×1×8 = 8796093022208"));
    CHECK_THAT(errorForSet({"strategy.tp=1048576", "strategy.pp=1048576", "strategy.dp=1"}),
               Contains("= 1099511627776, but the scenario has 256 GPUs"));
}

TEST_CASE("Hostile files get a clear error: depth, duplicate keys, huge numbers, folders, loops") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("madmax-hostile-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    };
    auto errorOf = [](const std::string& path) -> std::string {
        try {
            loadScenario(path, PresetLibrary::builtin());
        } catch (const InputError& e) {
            return e.what();
        }
        return "(no error)";
    };
    // 100,000 levels would overflow the stack of recursive JSON code (issue #9).
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    CHECK_THAT(errorOf(write("deep.json", "{\"name\": " + deep + "}")),
               Contains("nested more than 64 levels"));
    CHECK_THAT(errorOf(write("dup.json", R"({"gpus": 8, "gpus": 16})")),
               Contains("duplicate key \"gpus\""));
    CHECK_THAT(errorOf(write("big.json", R"({"gpus": 1e400})")),
               Contains("gpus: unreadable JSON value: number overflow"));
    // An integer beyond 64 bits is quoted as written, not as the float it became (1e+20).
    const std::string huge = errorOf(write("huge.json", R"({"strategy": {"tp": 100000000000000000000}})"));
    CHECK_THAT(huge, Contains("tp: integer 100000000000000000000 is out of range"));
    CHECK_THAT(huge, !Contains("1e+20"));
    CHECK_THAT(errorOf(dir.string()), Contains("is a folder, not a file"));
    fs::create_symlink(dir / "b", dir / "a");
    fs::create_symlink(dir / "a", dir / "b");
    CHECK_THAT(errorOf((dir / "a").string()), Contains("a loop of symbolic links"));
    // A device, a named pipe: refused before any read, so nothing blocks (issue #30: a FIFO hung
    // every command that reads a file).
    CHECK_THAT(errorOf("/dev/zero"), Contains("is not a regular file"));
    const fs::path fifo = dir / "pipe.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THAT(errorOf(fifo.string()), Contains("is not a regular file"));
    CHECK_THROWS_WITH(readTextFile(fifo.string()), Contains("pipe"));
    // A file over the size limit is refused by its size, unread.
    {
        std::ofstream big(dir / "large.json");
        big << '{' << std::string(65u << 20, ' ') << '}';
    }
    CHECK_THAT(errorOf((dir / "large.json").string()), Contains("more than 64 MiB"));
    fs::remove_all(dir);
}

TEST_CASE("An object of 100,000 keys parses, and its duplicate is still found") {
    // Issue #30: the duplicate-key check was quadratic (9 s for 100,000 keys). It is hashed now;
    // the parse is timed by bench_io, this test holds what it must find.
    std::string text = "{";
    for (int i = 0; i < 100000; ++i)
        text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    const nlohmann::json j = parseJsonText(text + "}", "keys.json");
    CHECK(j.size() == 100000);
    CHECK(j.at("k99999") == 99999);
    CHECK_THROWS_WITH(parseJsonText(text + ",\"k5\":1}", "keys.json"),
                      Contains("duplicate key \"k5\""));
}

TEST_CASE("Saving refuses to replace what is not a regular file") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("madmax-save-" + std::to_string(::getpid()));
    fs::create_directories(dir / "folder");
    CHECK_THROWS_WITH(writeFileAtomically((dir / "folder").string(), "{}"),
                      Contains("not a regular file"));
    CHECK_THROWS_WITH(writeFileAtomically("/dev/full", "{}"), Contains("not a regular file"));
    CHECK(fs::is_character_file("/dev/full"));
    fs::create_symlink(dir / "target.json", dir / "link.json");
    CHECK_THROWS_WITH(writeFileAtomically((dir / "link.json").string(), "{}"),
                      Contains("symbolic link"));
    writeFileAtomically((dir / "ok.json").string(), "{\"a\": 1}\n");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 3); // no temp
    fs::remove_all(dir);
}

namespace {
/// Run `madmax validate`-style validation on public.json with one case edited.
std::string validationErrorFor(std::size_t index, const std::string& path, const nlohmann::json& v) {
    nlohmann::json doc = readJsonFile(MADMAX_PUBLIC_DATASET);
    applyOverride(doc["cases"][index], path, v, "test");
    try {
        runValidation(doc, PresetLibrary::builtin(), "v.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}
std::size_t firstCase(const char* kind) {
    const nlohmann::json doc = readJsonFile(MADMAX_PUBLIC_DATASET);
    for (std::size_t i = 0; i < doc["cases"].size(); ++i)
        if (doc["cases"][i]["kind"] == kind) return i;
    FAIL("no " << kind << " case");
    return 0;
}
} // namespace

TEST_CASE("Validation files: impossible measurements and degrees are errors naming the case") {
    // Issue #9: tp = 0 divided by zero, collective rows with 1 GPU or 0 bytes printed NaN, and a
    // negative measurement was accepted.
    const std::size_t train = firstCase("training"), coll = firstCase("collective");
    CHECK_THAT(validationErrorFor(train, "parallel.tp", 0),
               Contains("cases[" + std::to_string(train) + "].parallel.tp"));
    CHECK_THAT(validationErrorFor(train, "parallel.vp", 0), Contains("at least 1, got 0"));
    CHECK_THAT(validationErrorFor(train, "measured.value", -3),
               Contains("measured.value: a measurement must be a positive number, got -3"));
    CHECK_THAT(validationErrorFor(coll, "collective.gpus", 1), Contains("at least 2 GPUs"));
    CHECK_THAT(validationErrorFor(coll, "collective.bytes", 0),
               Contains("collective.bytes: the message size must be a positive number"));
}

TEST_CASE("A serving case without request lengths is skipped naming the file, the case and the fix") {
    // The shared public.json leaves the DeepSeek-V3/R1 production rows' lengths null (issue #29
    // asks for them to be derived from the source); the skip had named "<input>" for the file.
    nlohmann::json doc = readJsonFile(MADMAX_PUBLIC_DATASET);
    std::size_t index = 0;
    for (std::size_t i = 0; i < doc["cases"].size(); ++i)
        if (doc["cases"][i]["id"] == "deepseek-v3r1-serving-h800-decode") index = i;
    REQUIRE(index > 0);
    doc["cases"][index]["inference"]["input_tokens"] = nullptr;
    doc["cases"][index]["inference"]["output_tokens"] = nullptr;
    const ValidationReport r = runValidation(doc, PresetLibrary::builtin(), "v.json");
    const auto c = std::find_if(r.cases.begin(), r.cases.end(), [](const CaseOutcome& o) {
        return o.id == "deepseek-v3r1-serving-h800-decode";
    });
    REQUIRE(c != r.cases.end());
    CHECK_FALSE(c->predicted);
    CHECK_THAT(c->skipped, Contains("v.json: case deepseek-v3r1-serving-h800-decode: "
                                    "inference.output_tokens") &&
                               Contains("give inference.input_tokens and output_tokens") &&
                               !Contains("<input>"));
}

TEST_CASE("Search and sweep files that are not JSON objects are bad input (found by fuzzing)") {
    // libFuzzer's first finding: a file holding the number 7 ended in an uncaught type_error.
    CHECK_THROWS_AS(searchFromJson(nlohmann::json(7), "r.json"), InputError);
    CHECK_THROWS_AS(sweepFromJson(nlohmann::json::array(), "w.json"), InputError);
}

TEST_CASE("A serving request longer than the model's context is refused") {
    // Issue #9: output length beyond the context was accepted. Llama 2 70B: 4,096 tokens.
    CHECK_THAT(errorForSetOn("serve-llama2-70b-8xh100-offline", {"workload.output_tokens=9000"}),
               Contains("exceeds the model's context of 4096 tokens"));
}

TEST_CASE("A validation case without a model is reported, not read out of bounds (fuzzing)") {
    // libFuzzer + ASan: operator[] on the const case document read freed memory when "model"
    // was missing (tests/fuzz/seeds/regression-validation-missing-model.bin).
    nlohmann::json doc = readJsonFile(MADMAX_PUBLIC_DATASET);
    doc["cases"][0].erase("model");
    const ValidationReport r = runValidation(doc, PresetLibrary::builtin(), "v.json");
    CHECK_FALSE(r.cases.front().predicted.has_value());
    CHECK_FALSE(r.cases.front().skipped.empty());
}

TEST_CASE("A schema field of the wrong type is bad input, not an exception (fuzzing)") {
    // libFuzzer's third finding: {"schema": 2} threw from json::value() in every reader of
    // schema'd files (tests/fuzz/seeds/regression-sweep-schema-number.bin).
    const auto doc = nlohmann::json::parse(R"({"schema": 2})");
    CHECK_THROWS_AS(sweepFromJson(doc, "w.json"), InputError);
    CHECK_THROWS_AS(searchFromJson(doc, "r.json"), InputError);
    CHECK_THROWS_AS(runValidation(doc, PresetLibrary::builtin(), "v.json"), InputError);
}

TEST_CASE("Huge numbers in a validation case are refused, never converted out of range (fuzzing)") {
    // UBSan's finding: scaleup_domain 8.2e22 was converted to int
    // (tests/fuzz/seeds/regression-validation-huge-domain.bin).
    nlohmann::json doc = readJsonFile(MADMAX_PUBLIC_DATASET);
    doc["cases"][0]["system"]["scaleup_domain"] = 8.2e22;
    const ValidationReport r = runValidation(doc, PresetLibrary::builtin(), "v.json");
    CHECK_FALSE(r.cases.front().predicted.has_value());
    CHECK_THAT(r.cases.front().skipped, Contains("system.scaleup_domain"));
    CHECK_THAT(validationErrorFor(0, "system.gpus", 1e30), Contains("from 1 to 2^30"));
}

TEST_CASE("An out-of-range whole number given with --set is quoted as written") {
    // Issue #9: 99999999999999999999 was reported as "1e+20".
    CHECK_THAT(errorForSet({"strategy.tp=99999999999999999999"}),
               Contains("value 99999999999999999999 is beyond the range"));
    CHECK_THAT(errorForSet({"strategy.tp=3000000000"}), Contains("value 3000000000 is out of range"));
}

TEST_CASE("A search file's counts must be whole numbers (fuzzing)") {
    // UBSan's fifth finding: "enumerated": 1.1e123 was converted to size_t
    // (tests/fuzz/seeds/regression-search-stats-huge-count.bin).
    nlohmann::json doc = toJson(search(test::preset("llama2-7b-8-a100-40gb"), {}, SearchOptions{}));
    doc["stats"]["enumerated"] = 1.1e123;
    CHECK_THROWS_AS(searchFromJson(doc, "r.json"), InputError);
}

TEST_CASE("A positive but physically meaningless rate or size is refused, naming its range") {
    // Issue #30: 5e-324 TFLOP/s printed -nan with exit 0; 1e-300 gave a 10^304-second step.
    // Every rate and size has a floor a real machine could have, said in the error.
    for (const char* value : {"5e-324", "1e-300", "1e-9"}) {
        INFO(value);
        for (const std::string field :
             {"system.gpu.peak_tflops.bf16", "system.gpu.hbm_tbps", "system.gpu.hbm_gb",
              "system.tiers.0.gbps", "system.tiers.1.gbps", "system.gpu.peak_exp_tera_per_s",
              "system.gpu.calibration.memory_efficiency",
              "system.gpu.calibration.attention_efficiency",
              "system.gpu.calibration.kv_cache_fraction",
              "system.gpu.calibration.deepep_nvlink_efficiency", "strategy.bucket_mb"}) {
            INFO(field);
            const std::string err = errorForSet({field + "=" + value});
            CHECK_THAT(err, Contains(field.substr(field.rfind('.') + 1)));
            CHECK_THAT(err, !Contains("(no error)"));
        }
        const std::string curve =
            std::string("system.gpu.calibration.gemm_efficiency=[[1e9, ") + value + "]]";
        CHECK_THAT(errorForSet({curve}), Contains("[0.001, 1]"));
    }
}

TEST_CASE("Contradictory inputs are refused, naming both sides") {
    // Issue #30: an interleaved schedule with one chunk per GPU, and a sequence beyond the
    // model's context, were accepted silently.
    CHECK_THAT(errorForSet({"strategy.vp=1"}),
               Contains("strategy.schedule \"interleaved\" needs vp ≥ 2") && Contains("1f1b"));
    CHECK_THAT(errorForSet({"workload.seq_len=16384"}),
               Contains("workload.seq_len 16384 exceeds the model's context of 8192") &&
                   Contains("model.max_seq_len"));
    // End stages larger than the model: said as such, never as "the remaining -920 layers"
    // (the default preset: 80 layers, pp 4).
    CHECK_THAT(errorForSet({"strategy.first_stage_layers=1000"}),
               Contains("first_stage_layers + last_stage_layers = 1000 + 0 exceeds the model's "
                        "80 layers"));
    CHECK_THAT(errorForSet({"strategy.first_stage_layers=3"}),
               Contains("the remaining 77 of 80 layers do not split evenly over the other 3") &&
                   Contains("multiple of 3"));
    CHECK_THAT(errorForSet({"strategy.pp=2", "strategy.dp=16", "strategy.vp=1",
                            "strategy.schedule=\"1f1b\"", "strategy.first_stage_layers=30",
                            "strategy.last_stage_layers=20"}),
               Contains("every stage is an end stage") && Contains("(30 + 20) must equal"));
}

TEST_CASE("merge refuses what no search produced, naming the field") {
    // Issue #30: a cancelled part, a negative score or budget and an unknown objective were
    // merged silently; a wrong type printed the JSON library's own words.
    const nlohmann::json good =
        toJson(search(test::preset("llama2-7b-8-a100-40gb"), {}, SearchOptions{}));
    REQUIRE_FALSE(good["top"].empty());
    auto errorWith = [&](const std::function<void(nlohmann::json&)>& edit) -> std::string {
        nlohmann::json doc = good;
        edit(doc);
        try {
            const SearchResult r = searchFromJson(doc, "part.json");
            checkSearchShards({r}, {"part.json"});
        } catch (const InputError& e) {
            return e.what();
        }
        return "(no error)";
    };
    CHECK_THAT(errorWith([](auto& d) { d["cancelled"] = true; }),
               Contains("part.json: cancelled") && Contains("re-run it"));
    CHECK_THAT(errorWith([](auto& d) { d["token_budget"] = -5; }), Contains("token_budget"));
    CHECK_THAT(errorWith([](auto& d) { d["objective"] = "bogus"; }),
               Contains("objective: expected throughput, time or cost"));
    CHECK_THAT(errorWith([](auto& d) { d["top"][0]["score"] = -1; }),
               Contains("candidate.score: must be a non-negative number"));
    const std::string type = errorWith([](auto& d) { d["top"][0]["mfu"] = "high"; });
    CHECK_THAT(type, Contains("candidate.mfu: expected a number"));
    CHECK_THAT(type, !Contains("json.exception"));
    CHECK(errorWith([](auto&) {}) == "(no error)");
}

TEST_CASE("A validation case's field of the wrong type is named, not the JSON library's words") {
    // Issue #30: "layers": "many" printed "[json.exception.type_error.302] type must be number".
    for (const char* field : {"model.layers", "system.hbm_tbps", "parallel.global_batch",
                              "model.moe.top_k"}) {
        INFO(field);
        // Case 0 is dense; a MoE field is checked on the first MoE case.
        nlohmann::json doc = readJsonFile(MADMAX_PUBLIC_DATASET);
        std::size_t index = 0;
        if (std::string(field).rfind("model.moe", 0) == 0)
            while (doc["cases"][index]["model"].value("arch", "") != "moe") ++index;
        const std::string err = validationErrorFor(index, field, "many");
        CHECK_THAT(err, Contains(std::string(field) + ": expected a number or null"));
        CHECK_THAT(err, !Contains("json.exception"));
    }
}

TEST_CASE("A sweep's grid is bounded, and the bound is said") {
    // Issue #30: the grid size was uncapped (each point is a whole search).
    std::vector<double> many(300, 1.0);
    for (std::size_t i = 0; i < many.size(); ++i) many[i] = 1.0 + double(i) / 1000;
    KnobAxis a{"scale_out_bw", many};
    CHECK_THROWS_WITH(sweep(test::preset("default"), {a}, {}, SearchOptions{}),
                      Contains("at most 256 factors per knob and 4096 points"));
}

TEST_CASE("Node and scale-up domain sizes that disagree between fields are refused") {
    // Issue #30: a scale-up domain must divide the node or span whole nodes (NVL72: 18 nodes of
    // 4); an inner network tier must hold whole domains of the one inside. The outermost tier is
    // the cluster or the job's share (256 GB200 over NVL72 racks), so it need not.
    CHECK_THAT(test::toyError({{"system.gpus_per_node", 6}}),
               Catch::Contains("system.gpus_per_node (6) and system.tiers[0].gpus (8) disagree"));
    CHECK_THAT(test::toyError({{"system.tiers.0.gpus", 6}, {"system.gpus_per_node", 4}}),
               Catch::Contains("disagree"));
    // Domains of 16 over nodes of 8 (two nodes on one NVLink) and pairs inside a node of 8 are
    // both real machines.
    CHECK(test::toyError({{"system.tiers.0.gpus", 16}, {"system.tiers.1.gpus", 64}}) == "(no error)");
    CHECK(test::toyError({{"system.tiers.0.gpus", 2}}) == "(no error)");
    // Three tiers: a leaf of 12 GPUs cannot hold whole 8-GPU nodes.
    const nlohmann::json leaf = {{"name", "leaf"}, {"kind", "scale_out"}, {"gpus", 12}, {"gbps", 10}};
    const nlohmann::json spine = {{"name", "spine"}, {"kind", "scale_out"}, {"gpus", 96}, {"gbps", 5}};
    nlohmann::json tiers = test::toySystem()["tiers"];
    tiers = nlohmann::json::array({tiers[0], leaf, spine});
    CHECK_THAT(test::toyError({{"system.tiers", tiers}}),
               Catch::Contains("system.tiers[1].gpus (12) is not a whole number of the tier inside"));
    tiers[1]["gpus"] = 16;
    CHECK(test::toyError({{"system.tiers", tiers}}) == "(no error)");
}
