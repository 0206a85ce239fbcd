// Design-space search speed (issue #4): configurations per second for GPT-3 175B on 1,024 A100
// (the full space; aim ≥ 1,000,000/s on this 2-core machine) and the wall time of the full space
// for Llama 3.1 405B on 16,384 H100 (aim < 2 s). Also cancellation latency.
#include "madmax/scenario_io.hpp"
#include "madmax/codesign.hpp"
#include "madmax/search.hpp"
#include "madmax/dlrm_search.hpp"
#include "madmax/serving.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <thread>

namespace {

void searchLoop(benchmark::State& state, const char* id, bool prune) {
    const madmax::Scenario s = madmax::loadScenario(id, madmax::PresetLibrary::builtin());
    madmax::SearchOptions o;
    o.prune = prune;
    o.threads = int(state.range(0));
    std::size_t enumerated = 0, timed = 0;
    for (auto _ : state) {
        const madmax::SearchResult r = madmax::search(s, {}, o);
        enumerated += r.stats.enumerated;
        timed += r.stats.feasible;
        benchmark::DoNotOptimize(r.top.data());
    }
    // Enumerated: valid configurations examined (memory-checked); timed: evaluated in full.
    state.counters["enumerated_per_s"] =
        benchmark::Counter(double(enumerated), benchmark::Counter::kIsRate);
    state.counters["timed_per_s"] = benchmark::Counter(double(timed), benchmark::Counter::kIsRate);
    state.counters["configs"] = double(enumerated) / double(state.iterations());
}

void BM_SearchGpt3_175B_1024_A100(benchmark::State& st) {
    searchLoop(st, "gpt3-175b-1024-a100", true);
}
BENCHMARK(BM_SearchGpt3_175B_1024_A100)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SearchGpt3_175B_1024_A100_NoPrune(benchmark::State& st) {
    searchLoop(st, "gpt3-175b-1024-a100", false);
}
BENCHMARK(BM_SearchGpt3_175B_1024_A100_NoPrune)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SearchLlama405B_16384_H100(benchmark::State& st) {
    searchLoop(st, "llama31-405b-16384-h100", true);
}
BENCHMARK(BM_SearchLlama405B_16384_H100)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SearchDeepSeekV3_256_GB200(benchmark::State& st) {
    // Issue #10: the MoE space (EP and ETP enumerated too); aim ≥ 1,000,000 configurations/s.
    searchLoop(st, "deepseek-v3-256-gb200", true);
}
BENCHMARK(BM_SearchDeepSeekV3_256_GB200)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// The DLRM sharding-plan search (issue #11): 26 table groups, every group size, pipelined or
/// not (coordinate descent: the per-group product is far beyond exhaustive).
void BM_DlrmPlanSearch(benchmark::State& st) {
    const madmax::Scenario s =
        madmax::loadScenario("dlrm-dcnv2-64-h100", madmax::PresetLibrary::builtin());
    long long evaluated = 0;
    for (auto _ : st) {
        const madmax::DlrmSearchResult r = madmax::searchDlrmPlans(s);
        evaluated += r.evaluated;
        benchmark::DoNotOptimize(r.top.data());
    }
    st.counters["plans/s"] = benchmark::Counter(double(evaluated), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DlrmPlanSearch)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Resource vs performance (MAD-Max Figure 1): Llama 3 70B on three systems at five GPU counts,
/// a full search at each point (both threads).
void BM_ResourcePareto(benchmark::State& st) {
    const madmax::Scenario s = madmax::loadScenario("default", madmax::PresetLibrary::builtin());
    const std::vector<madmax::ResourceSystem> systems = {
        madmax::loadResourceSystem("dgx-a100-80gb-superpod"),
        madmax::loadResourceSystem("dgx-h100-superpod"),
        madmax::loadResourceSystem("dgx-b200-superpod")};
    for (auto _ : st) {
        const auto r = madmax::resourcePareto(s, systems, {64, 128, 256, 512, 1024}, {},
                                              madmax::SearchOptions{});
        benchmark::DoNotOptimize(r.points.data());
    }
}
BENCHMARK(BM_ResourcePareto)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Time from setting the cancel flag to search() returning.
void BM_CancelLatency(benchmark::State& state) {
    const madmax::Scenario s =
        madmax::loadScenario("gpt3-175b-1024-a100", madmax::PresetLibrary::builtin());
    for (auto _ : state) {
        std::atomic<bool> cancel{false};
        madmax::SearchOptions o;
        o.cancel = &cancel;
        o.threads = 2;
        std::thread t([&] { madmax::search(s, {}, o); });
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const auto start = std::chrono::steady_clock::now();
        cancel = true;
        t.join();
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
}
BENCHMARK(BM_CancelLatency)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);

} // namespace

// The serving search (issue #29): every TP, PP, EP, replica count, precision and batch, with
// and without speculation; configurations evaluated per second (aim ≥ 1,000,000/s). The
// argument is the thread count: 1, or 0 for the search's own choice (the pool's width).
void servingLoop(benchmark::State& state, const char* id, double tpotObjectiveS = 0) {
    const madmax::Scenario s = madmax::loadScenario(id, madmax::PresetLibrary::builtin());
    madmax::ServingSearchOptions o;
    o.draftTokens = {0, 1, 2, 3};
    o.tpotObjectiveS = tpotObjectiveS; // server mode when set
    o.threads = int(state.range(0));
    std::size_t evaluated = 0;
    for (auto _ : state) {
        const madmax::ServingSearchResult r = madmax::searchServing(s, o);
        evaluated += r.evaluated;
        benchmark::DoNotOptimize(r.top.data());
    }
    state.counters["evaluated_per_s"] =
        benchmark::Counter(double(evaluated), benchmark::Counter::kIsRate);
    state.counters["configs"] = double(evaluated) / double(state.iterations());
}
void BM_ServingSearchLlama70B_8xH100(benchmark::State& st) {
    servingLoop(st, "serve-llama2-70b-8xh100-offline");
}
BENCHMARK(BM_ServingSearchLlama70B_8xH100)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
void BM_ServingSearchDeepSeekV3_16xH200(benchmark::State& st) {
    servingLoop(st, "serve-deepseek-v3-16xh200");
}
BENCHMARK(BM_ServingSearchDeepSeekV3_16xH200)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// Under a latency objective each configuration's batch is the largest that meets it: the
// search planners run (a 50 ms TPOT, 20 tokens/s per user).
void BM_ServingSearchLlama70B_8xH100_Tpot50ms(benchmark::State& st) {
    servingLoop(st, "serve-llama2-70b-8xh100-offline", 0.05);
}
BENCHMARK(BM_ServingSearchLlama70B_8xH100_Tpot50ms)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
void BM_ServingSearchDeepSeekV3_16xH200_Tpot50ms(benchmark::State& st) {
    servingLoop(st, "serve-deepseek-v3-16xh200", 0.05);
}
BENCHMARK(BM_ServingSearchDeepSeekV3_16xH200_Tpot50ms)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
