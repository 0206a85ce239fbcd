// One engine evaluation: Llama 3.1 405B on 16,384 H100 (TP8, PP16, DP128, interleaved).
// Target (issue #2): ≤ 20 µs median on a 2-core machine.
#include "madmax/engine.hpp"
#include "madmax/scenario_io.hpp"

#include <benchmark/benchmark.h>

namespace {

void BM_Evaluate405B(benchmark::State& state) {
    const madmax::Scenario s =
        madmax::loadScenario("llama31-405b-16384-h100", madmax::PresetLibrary::builtin());
    for (auto _ : state) {
        madmax::Result r = madmax::evaluate(s);
        benchmark::DoNotOptimize(r.stepTimeS);
    }
}
BENCHMARK(BM_Evaluate405B);

void BM_EvaluateDefault(benchmark::State& state) {
    const madmax::Scenario s = madmax::loadScenario("default", madmax::PresetLibrary::builtin());
    for (auto _ : state) {
        madmax::Result r = madmax::evaluate(s);
        benchmark::DoNotOptimize(r.stepTimeS);
    }
}
BENCHMARK(BM_EvaluateDefault);

void BM_EvaluateWithTimeline(benchmark::State& state) {
    const madmax::Scenario s = madmax::loadScenario("default", madmax::PresetLibrary::builtin());
    madmax::EvaluateOptions opt;
    opt.timeline = true;
    for (auto _ : state) {
        madmax::Result r = madmax::evaluate(s, opt);
        benchmark::DoNotOptimize(r.timeline.data());
    }
}
BENCHMARK(BM_EvaluateWithTimeline);

} // namespace

BENCHMARK_MAIN();
