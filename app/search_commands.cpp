#include "search_commands.hpp"

#include "madmax/codesign.hpp"
#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/search_io.hpp"
#include "madmax/serving.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <unistd.h>

namespace madmax::cli {

namespace {

struct Common {
    std::string scenario = PresetLibrary::kDefaultScenario;
    std::vector<std::string> sets, restrict;
    std::string objective = "throughput";
    double tokenBudget = 1e12;
    int threads = 0;
    bool json = false, csv = false, noPrune = false, tpAcross = false;
    std::string shard;
};

void addCommon(CLI::App* c, Common& o) {
    c->add_option("scenario", o.scenario,
                  "Scenario file or preset id (default: the built-in default)");
    c->add_option("--set", o.sets, "Override a field of the scenario: path=value")
        ->type_name("PATH=VALUE");
    c->add_option("--restrict", o.restrict,
                  "Limit a dimension: tp=1,2,4,8 (also pp vp cp mb zero recompute sp overlap gpus)")
        ->type_name("DIM=V1,V2");
    c->add_option("--objective", o.objective,
                  "throughput, time (to train the token budget) or cost")
        ->check(CLI::IsMember({"throughput", "time", "cost"}));
    c->add_option("--token-budget", o.tokenBudget,
                  "Tokens to train, for time and cost (default 1e12)")
        ->check(CLI::PositiveNumber);
    c->add_option("--threads", o.threads, "Worker threads (default: every core)")
        ->check(CLI::NonNegativeNumber);
    c->add_flag("--json", o.json, "Print JSON (what `madmax merge` reads)");
    c->add_flag("--csv", o.csv, "Print CSV");
    c->add_flag("--no-prune", o.noPrune, "Evaluate every configuration (no bound-based skipping)");
    c->add_flag("--allow-tp-across-scale-up", o.tpAcross,
                "Let TP groups span beyond the NVLink domain");
    c->add_option("--shard", o.shard,
                  "Run part I of N (0-based), e.g. 3/16; combine with `madmax merge`")
        ->type_name("I/N");
}

void parseShard(const std::string& s, SearchOptions& o) {
    if (s.empty()) return;
    const auto slash = s.find('/');
    try {
        if (slash == std::string::npos) throw std::invalid_argument(s);
        o.shardIndex = std::stoi(s.substr(0, slash));
        o.shardCount = std::stoi(s.substr(slash + 1));
    } catch (const std::exception&) {
        throw InputError("--shard", s, "expected I/N with 0 ≤ I < N, e.g. 0/4");
    }
    if (o.shardCount < 1 || o.shardIndex < 0 || o.shardIndex >= o.shardCount)
        throw InputError("--shard", s, "expected I/N with 0 ≤ I < N, e.g. 0/4");
}

/// A progress bar on stderr, only when stderr is a terminal.
struct Progress {
    bool on = ::isatty(2);
    std::mutex mu;
    int lastPct = -1;
    void operator()(std::size_t done, std::size_t total) {
        if (!on || total == 0) return;
        std::lock_guard<std::mutex> lock(mu);
        const int pct = int(100.0 * done / total);
        if (pct == lastPct) return;
        lastPct = pct;
        std::fprintf(stderr, "\r[%-40s] %3d%%",
                     std::string(std::size_t(pct * 40 / 100), '#').c_str(), pct);
        if (done == total) std::fprintf(stderr, "\n");
    }
};

struct Prepared {
    Scenario scenario;
    SearchSpace space;
    SearchOptions options;
};

Prepared prepare(const Common& c) {
    Prepared p;
    std::vector<Override> ov;
    for (const auto& s : c.sets)
        ov.push_back(parseOverride(s));
    p.scenario = loadScenario(c.scenario, PresetLibrary::builtin(), ov);
    for (const auto& r : c.restrict)
        parseRestriction(r, p.space);
    p.space.allowTpAcrossScaleUp = c.tpAcross;
    p.options.objective = *parseObjective(c.objective);
    p.options.tokenBudget = c.tokenBudget;
    p.options.threads = c.threads;
    p.options.prune = !c.noPrune;
    parseShard(c.shard, p.options);
    return p;
}

std::string row(const Candidate& c, int rank) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%4d  %-62s %6d %10.1f %6.1f%% %9s %9s", rank,
                  strategySpec(c.strategy).c_str(), c.gpus, c.tokensPerS / c.gpus, c.mfu * 100,
                  formatSeconds(c.stepTimeS).c_str(), formatBytes(c.memoryBytes).c_str());
    return buf;
}

void printSearch(const SearchResult& r, const Scenario& s) {
    std::cout << "Search: " << s.model.name << " on " << s.system.name << ", objective "
              << toString(r.objective) << "\n";
    std::cout << "rank  strategy                                                         GPUs  "
                 "tok/s/GPU    MFU      step    memory\n";
    int rank = 1;
    for (const auto& c : r.top)
        std::cout << row(c, rank++) << "\n";
    if (r.top.empty()) std::cout << "  (no configuration fits in memory)\n";
    const auto& st = r.stats;
    std::printf("\n%zu configurations: %zu fit, %zu do not fit in memory, %zu skipped by the "
                "bound; %.3f s, %.0f configs/s%s\n",
                st.evaluated, st.feasible, st.infeasible, st.pruned, st.seconds, st.configsPerS,
                r.cancelled ? " (cancelled)" : "");
    if (r.baseline) {
        std::cout << "\nBaseline " << strategySpec(r.baseline->strategy) << ": "
                  << (r.baseline->fits ? "" : "DOES NOT FIT; ")
                  << r.baseline->tokensPerS / r.baseline->gpus << " tok/s/GPU\n";
        if (r.speedupOverBaseline)
            std::printf("Best is %.2fx the baseline\n", *r.speedupOverBaseline);
    }
    if (!r.top.empty()) {
        const auto cost =
            trainingCost(s.system, r.top.front().gpus, r.top.front().tokensPerS, r.tokenBudget);
        std::printf("\nBest, to train %.3g tokens: %.1f days, %.3g GPU-hours, $%.3g at "
                    "$%.2f/GPU-hour, %.3g MWh of GPU energy\n",
                    r.tokenBudget, cost.seconds / 86400, cost.gpuHours, cost.dollars,
                    s.system.pricePerGpuHour, cost.energyKWh / 1000);
    }
    std::cout << "\nPareto front, throughput vs memory headroom:\n";
    rank = 1;
    for (const auto& c : r.paretoMemory)
        std::cout << row(c, rank++) << "  headroom " << formatBytes(c.marginBytes) << "\n";
}

} // namespace

std::function<int()> addSearchCommands(CLI::App& app) {
    auto common = std::make_shared<Common>();
    auto sweepCommon = std::make_shared<Common>();
    auto top = std::make_shared<int>(10);
    auto baseline = std::make_shared<std::string>();
    auto knobs = std::make_shared<std::vector<std::string>>();
    auto sens = std::make_shared<bool>(false);
    auto files = std::make_shared<std::vector<std::string>>();
    auto mergeJson = std::make_shared<bool>(false);
    auto mergeCsv = std::make_shared<bool>(false);
    auto mergeTop = std::make_shared<int>(10);

    auto ttft = std::make_shared<double>(0.0), tpot = std::make_shared<double>(0.0);
    auto perDollar = std::make_shared<bool>(false);
    auto* search = app.add_subcommand(
        "search", "Rank every valid parallelization strategy (or serving configuration)");
    addCommon(search, *common);
    search->add_option("--ttft", *ttft, "Serving: time-to-first-token objective in seconds")
        ->check(CLI::NonNegativeNumber);
    search->add_option("--tpot", *tpot, "Serving: time-per-output-token objective in seconds")
        ->check(CLI::NonNegativeNumber);
    search->add_flag("--per-dollar", *perDollar, "Serving: rank by output tokens per dollar");
    search->add_option("--top", *top, "How many to list (default 10)")
        ->check(CLI::NonNegativeNumber);
    search->add_option(
        "--baseline", *baseline,
        "What you run today, e.g. \"tp=8,pp=16,vp=2,mb=1\"; the best is compared with it");

    auto* sweep = app.add_subcommand(
        "sweep", "Scale hardware knobs, re-search at each point, report the speedups");
    addCommon(sweep, *sweepCommon);
    sweep
        ->add_option("--knob", *knobs,
                     "NAME=F1,F2,… (flops, hbm_bw, hbm_capacity, scale_up_bw, scale_out_bw, "
                     "scale_up_latency, scale_out_latency, tier<K>_bw, tier<K>_latency, "
                     "scale_up_domain, gpus); two for a grid")
        ->type_name("NAME=F1,F2");
    sweep->add_flag("--sensitivity", *sens,
                    "The ×0.5 / ×2 speedup of every knob (tornado chart data)");

    auto curveScenario = std::make_shared<std::string>(PresetLibrary::kDefaultScenario);
    auto curveSets = std::make_shared<std::vector<std::string>>();
    auto curveJson = std::make_shared<bool>(false);
    auto* curve = app.add_subcommand("curve", "Serving: latency vs throughput as the batch grows");
    curve->add_option("scenario", *curveScenario, "An inference scenario file or preset id")
        ->required();
    curve->add_option("--set", *curveSets, "Override a field: path=value")->type_name("PATH=VALUE");
    curve->add_flag("--json", *curveJson, "Print JSON");

    auto* merge =
        app.add_subcommand("merge", "Combine the --json outputs of sharded search or sweep runs");
    merge
        ->add_option("files", *files,
                     "JSON files written by `madmax search|sweep --shard I/N --json`")
        ->required();
    merge->add_flag("--json", *mergeJson, "Print JSON");
    merge->add_flag("--csv", *mergeCsv, "Print CSV");
    merge->add_option("--top", *mergeTop, "How many to keep from a search (default 10)");

    return [=]() -> int {
        if (*curve) {
            std::vector<Override> ov;
            for (const auto& x : *curveSets)
                ov.push_back(parseOverride(x));
            const Scenario sc = loadScenario(*curveScenario, PresetLibrary::builtin(), ov);
            if (sc.workload.kind != WorkloadKind::Inference)
                throw InputError(*curveScenario, "workload.kind",
                                 "the curve is for inference scenarios (kind \"inference\")");
            const auto pts = latencyThroughputCurve(sc);
            if (*curveJson) {
                nlohmann::json a = nlohmann::json::array();
                for (const auto& p : pts)
                    a.push_back({{"batch", p.batch},
                                 {"ttft_s", p.ttftS},
                                 {"tpot_s", p.tpotS},
                                 {"e2e_latency_s", p.e2eS},
                                 {"output_tokens_per_s_per_gpu", p.outputTokensPerSPerGpu},
                                 {"fits", p.fits}});
                std::cout << a.dump(2) << "\n";
            } else {
                std::cout << "batch        TTFT        TPOT   tok/s/GPU  memory\n";
                for (const auto& p : pts)
                    std::printf("%5d  %10s  %10s  %10.1f  %s\n", p.batch,
                                formatSeconds(p.ttftS).c_str(), formatSeconds(p.tpotS).c_str(),
                                p.outputTokensPerSPerGpu, p.fits ? "fits" : "DOES NOT FIT");
            }
            return 0;
        }
        if (*search) {
            Prepared p = prepare(*common);
            if (p.scenario.workload.kind == WorkloadKind::Inference) {
                ServingSearchOptions so;
                so.ttftObjectiveS = *ttft;
                so.tpotObjectiveS = *tpot;
                so.perDollar = *perDollar;
                so.topN = *top;
                const ServingSearchResult r = searchServing(p.scenario, so);
                if (common->json) {
                    nlohmann::json a = nlohmann::json::array();
                    for (const auto& c : r.top)
                        a.push_back(
                            {{"strategy", toJson(c.scenario.strategy)},
                             {"precision", std::string(toString(c.scenario.workload.precision))},
                             {"batch", c.batch},
                             {"output_tokens_per_s_per_gpu", c.outputTokensPerSPerGpu},
                             {"ttft_s", c.ttftS},
                             {"tpot_s", c.tpotS},
                             {"score", c.score}});
                    std::cout << nlohmann::json{{"schema", "madmax-serving-search/1"},
                                                {"top", a},
                                                {"stats",
                                                 {{"evaluated", r.evaluated},
                                                  {"feasible", r.feasible}}}}
                                     .dump(2)
                              << "\n";
                } else {
                    std::cout << "rank  TP  PP  replicas  precision  batch   tok/s/GPU       TTFT  "
                                 "     TPOT\n";
                    int rank = 1;
                    for (const auto& c : r.top)
                        std::printf("%4d %3d %3d %9d %10s %6d %11.1f %10s %10s\n", rank++,
                                    c.scenario.strategy.tp, c.scenario.strategy.pp,
                                    c.scenario.strategy.dp,
                                    std::string(toString(c.scenario.workload.precision)).c_str(),
                                    c.batch, c.outputTokensPerSPerGpu,
                                    formatSeconds(c.ttftS).c_str(), formatSeconds(c.tpotS).c_str());
                    std::printf("\n%zu configurations, %zu fit and meet the objectives\n",
                                r.evaluated, r.feasible);
                }
                return 0;
            }
            p.options.topN = *top;
            Progress progress;
            p.options.progress = [&progress](std::size_t d, std::size_t t) { progress(d, t); };
            if (!baseline->empty()) p.options.baseline = parseStrategySpec(*baseline, p.scenario);
            const SearchResult r = madmax::search(p.scenario, p.space, p.options);
            if (common->json)
                std::cout << toJson(r).dump(2) << "\n";
            else if (common->csv)
                std::cout << searchCsv(r);
            else
                printSearch(r, p.scenario);
            return 0;
        }
        if (*sweep) {
            Prepared p = prepare(*sweepCommon);
            Progress progress;
            p.options.progress = [&progress](std::size_t d, std::size_t t) { progress(d, t); };
            if (*sens) {
                const auto s = sensitivity(p.scenario, p.space, p.options);
                if (sweepCommon->json) {
                    std::cout << toJson(s).dump(2) << "\n";
                } else {
                    std::cout << "knob                    x0.5      x2\n";
                    for (const auto& x : s)
                        std::printf("%-20s %7.3fx %7.3fx\n", x.knob.c_str(), x.speedupHalf,
                                    x.speedupDouble);
                }
                return 0;
            }
            if (knobs->empty())
                throw InputError("--knob", "",
                                 "give at least one knob, e.g. --knob hbm_bw=0.5,1,2");
            std::vector<KnobAxis> axes;
            for (const auto& k : *knobs)
                axes.push_back(parseKnobAxis(k));
            const SweepResult r = madmax::sweep(p.scenario, axes, p.space, p.options);
            if (sweepCommon->json) {
                std::cout << toJson(r).dump(2) << "\n";
            } else if (sweepCommon->csv) {
                std::cout << sweepCsv(r);
            } else {
                std::cout << sweepCsv(r);
                std::cout << "\nunscaled best: " << strategySpec(r.unscaled.strategy) << ", "
                          << r.unscaled.tokensPerS / std::max(1, r.unscaled.gpus) << " tok/s/GPU\n";
            }
            return 0;
        }
        if (*merge) {
            std::vector<SearchResult> searches;
            std::vector<SweepResult> sweeps;
            for (const auto& f : *files) {
                const auto j = readJsonFile(f);
                if (j.value("schema", "") == "madmax-sweep/1")
                    sweeps.push_back(sweepFromJson(j, f));
                else
                    searches.push_back(searchFromJson(j, f));
            }
            if (!searches.empty() && !sweeps.empty())
                throw InputError(
                    "merge", "",
                    "the files mix search and sweep outputs; merge one kind at a time");
            if (!sweeps.empty()) {
                const SweepResult r = mergeSweeps(sweeps);
                if (*mergeCsv)
                    std::cout << sweepCsv(r);
                else
                    std::cout << toJson(r).dump(2) << "\n";
            } else {
                const SearchResult r = mergeResults(searches, *mergeTop);
                if (*mergeCsv)
                    std::cout << searchCsv(r);
                else
                    std::cout << toJson(r).dump(2) << "\n";
            }
            return 0;
        }
        return -1;
    };
}

} // namespace madmax::cli
