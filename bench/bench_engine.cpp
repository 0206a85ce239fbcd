// One engine evaluation: Llama 3.1 405B on 16,384 H100 (TP8, PP16, DP128, interleaved).
// Target (issue #2): ≤ 20 µs median on a 2-core machine.
#include "madmax/engine.hpp"
#include "madmax/scenario_io.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {

void evaluateLoop(benchmark::State& state, const char* scenarioId, bool timeline) {
    const madmax::Scenario s = madmax::loadScenario(scenarioId, madmax::PresetLibrary::builtin());
    madmax::EvaluateOptions opt;
    opt.timeline = timeline;
    for (auto _ : state) {
        madmax::Result r = madmax::evaluate(s, opt);
        benchmark::DoNotOptimize(r.stepTimeS);
        benchmark::DoNotOptimize(r.timeline.data());
    }
}

void BM_Evaluate405B(benchmark::State& state) {
    evaluateLoop(state, "llama31-405b-16384-h100", false);
}
BENCHMARK(BM_Evaluate405B);

void BM_EvaluateDefault(benchmark::State& state) {
    evaluateLoop(state, "default", false);
}
BENCHMARK(BM_EvaluateDefault);

/// A MoE step: DeepSeek-V3 on 256 GB200 (MLA, dense + MoE layers, EP 64 all-to-all).
void BM_EvaluateMoe(benchmark::State& state) {
    evaluateLoop(state, "deepseek-v3-256-gb200", false);
}
BENCHMARK(BM_EvaluateMoe);

/// A serving configuration: Llama 3.3 70B on 2 H100 (TP2, FP8), batch solved from memory.
void BM_EvaluateServing(benchmark::State& state) {
    evaluateLoop(state, "serve-llama33-70b-2xh100-tp2", false);
}
BENCHMARK(BM_EvaluateServing);

/// A DLRM step: DLRM-DCNv2 (MLPerf, 26 tables) on 64 H100, TWRW/TW/DP plan (table placement
/// included: the shards are placed largest-first on the least loaded GPU every evaluation).
void BM_EvaluateDlrm(benchmark::State& state) {
    evaluateLoop(state, "dlrm-dcnv2-64-h100", false);
}
BENCHMARK(BM_EvaluateDlrm);

/// With the op timeline for a chart (allocates its events).
void BM_EvaluateWithTimeline(benchmark::State& state) {
    evaluateLoop(state, "default", true);
}
BENCHMARK(BM_EvaluateWithTimeline);

} // namespace

// The strict JSON reader on an object of n keys (issue #30: the duplicate-key check was
// quadratic; hashed, the time per key stays flat as n grows).
void BM_ParseManyKeys(benchmark::State& state) {
    std::string text = "{";
    for (int i = 0; i < state.range(0); ++i)
        text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    text += "}";
    for (auto _ : state)
        benchmark::DoNotOptimize(madmax::parseJsonText(text, "bench"));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ParseManyKeys)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
