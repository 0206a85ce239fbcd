#include "search_commands.hpp"

#include "cli_checks.hpp"

#include "madmax/codesign.hpp"
#include "madmax/dlrm_search.hpp"
#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
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
                  "Limit a dimension: tp=1,2,4,8 (also pp vp cp ep etp mb zero recompute sp overlap gpus); "
                  "recompute_layers=1,2,4 also tries full recompute of only the first n layers of "
                  "each model chunk (0: every layer); offload_layers=0,20,40 tries activation offloading where "
                  "a configuration allows it (PP 1, no recompute)")
        ->type_name("DIM=V1,V2");
    c->add_option("--objective", o.objective,
                  "throughput, time (to train the token budget) or cost")
        ->check(CLI::IsMember({"throughput", "time", "cost"}));
    c->add_option("--token-budget", o.tokenBudget,
                  "Tokens to train, for time and cost (default 1e12)")
        ->check(kPositive);
    c->add_option("--threads", o.threads, "Worker threads, 1 to 4096 (default 0: every core)")
        ->check(CLI::Range(0, 4096));
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
                  candidateSpec(c).c_str(), c.gpus, c.tokensPerS / c.gpus, c.mfu * 100,
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
    if (r.top.empty())
        std::cout << (r.stats.feasible > 0    ? "  (none listed: --top 0)\n"
                      : r.stats.enumerated > 0 ? "  (no configuration fits in memory)\n"
                                              : "  (no valid configuration: in this space no "
                                                "split divides the GPUs, layers and global "
                                                "batch; widen --restrict or the scenario)\n");
    const auto& st = r.stats;
    std::printf("\n%zu configurations: %zu fit, %zu do not fit in memory, %zu skipped by the "
                "bound; %.3f s, %.0f configurations enumerated/s (%.0f timed in full/s)%s\n",
                st.enumerated, st.feasible, st.infeasible, st.pruned, st.seconds,
                st.enumeratedPerS, st.timedPerS,
                r.cancelled ? " (cancelled)" : "");
    if (r.baseline) {
        std::cout << "\nBaseline " << candidateSpec(*r.baseline) << ": "
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

/// DLRM: the sharding-plan search, ranked and explained.
void runDlrmSearch(const Scenario& sc, int top, bool json) {
    DlrmSearchOptions so;
    so.topN = top;
    const DlrmSearchResult r = searchDlrmPlans(sc, so);
    if (json) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& c : r.top) {
            Scenario s = sc;
            s.strategy.dlrm = c.plan;
            a.push_back({{"strategy", toJson(s)["strategy"]},
                         {"plan", describePlan(sc, c.plan)},
                         {"step_time_s", c.result.stepTimeS},
                         {"samples_per_s", c.result.samplesPerS},
                         {"exposed_comm_s", c.result.exposedCommS},
                         {"memory_bytes", c.result.memory.totalBytes()},
                         {"fits", c.fits}});
        }
        std::cout << nlohmann::json{{"schema", "madmax-dlrm-search/1"},
                                    {"top", a},
                                    {"explanation", r.explanation},
                                    {"stats",
                                     {{"evaluated", r.evaluated},
                                      {"valid", r.valid},
                                      {"fitting", r.fitting},
                                      {"exhaustive", r.exhaustive}}}}
                         .dump(2)
                  << "\n";
        return;
    }
    std::cout << "Sharding-plan search: " << sc.model.name << " on " << sc.gpus << " x "
              << sc.system.gpu.name << "\n";
    std::cout << "rank  group  pipe   samples/s      step   exposed    memory  plan\n";
    int rank = 1;
    for (const auto& c : r.top) {
        const int g = c.plan.groupSize > 0 ? c.plan.groupSize : sc.gpus;
        std::printf("%4d %6d %5s %11.0f %9s %9s %9s%s  %s\n", rank++, g,
                    c.plan.pipelineSparse ? "yes" : "no", c.result.samplesPerS,
                    formatSeconds(c.result.stepTimeS).c_str(),
                    formatSeconds(c.result.exposedCommS).c_str(),
                    formatBytes(c.result.memory.totalBytes()).c_str(), c.fits ? "" : " (!)",
                    describePlan(sc, c.plan).c_str());
    }
    std::printf("\n%lld plans tried (%s), %lld valid, %lld fit in HBM; (!) = does not fit\n",
                r.evaluated, r.exhaustive ? "exhaustive" : "coordinate descent per group size",
                r.valid, r.fitting);
    for (const auto& line : r.explanation)
        std::cout << line << "\n";
}

// Each subcommand: its options, and a callback that runs it (errors are thrown: InputError for
// bad input, exit code 2; anything else is internal, exit code 1).

/// The throughput-per-GPU vs TPOT front of a serving search, one line a point.
void printServingFront(const ServingSearchResult& r) {
    if (r.pareto.empty()) return;
    std::printf("\nThroughput/TPOT front (no configuration beats one on both):\n");
    for (const auto& c : r.pareto)
        std::printf("  TPOT %10s  %11.1f tok/s/GPU  TP%d PP%d EP%d %s, draft %d, batch %d\n",
                    formatSeconds(c.tpotS).c_str(), c.outputTokensPerSPerGpu,
                    c.scenario.strategy.tp, c.scenario.strategy.pp, c.scenario.strategy.ep,
                    std::string(toString(c.scenario.workload.precision)).c_str(),
                    c.scenario.workload.inference.draftTokens, c.batch);
}

/// The serving search of `madmax search` on an inference scenario: TP, PP, replicas, EP,
/// precision and draft tokens, the ranking and the throughput/TPOT front.
nlohmann::json poolJson(const ServingCandidate& c, int gpus) {
    return {{"gpus", gpus},
            {"strategy", toJson(c.scenario.strategy)},
            {"precision", std::string(toString(c.scenario.workload.precision))},
            {"batch", c.batch},
            {"ttft_s", c.ttftS},
            {"tpot_s", c.tpotS}};
}

nlohmann::json disaggregatedJson(const DisaggregatedPlan& d) {
    if (!d.found) return {{"found", false}, {"why", d.why}, {"evaluated", d.evaluated}};
    return {{"found", true},
            {"prefill", poolJson(d.prefill, d.pools.prefillGpus)},
            {"decode", poolJson(d.decode, d.pools.decodeGpus)},
            {"output_tokens_per_s_per_gpu", d.pools.outputTokensPerSPerGpu},
            {"ttft_s", d.pools.ttftS},
            {"tpot_s", d.pools.tpotS},
            {"evaluated", d.evaluated}};
}

void printDisaggregated(const ServingSearchResult& r, const DisaggregatedPlan& d) {
    std::printf("\nDisaggregated on the same GPUs (prefill and decode pools, balanced):\n");
    if (!d.found) {
        std::printf("  none: %s\n", d.why.c_str());
        return;
    }
    const auto pool = [](const char* name, const ServingCandidate& c, int gpus) {
        std::printf("  %-8s %4d GPUs  TP%d PP%d EP%d x %d replicas, %s, batch %d\n", name, gpus,
                    c.scenario.strategy.tp, c.scenario.strategy.pp, c.scenario.strategy.ep,
                    gpus / std::max(1, c.scenario.strategy.tp * c.scenario.strategy.pp),
                    std::string(toString(c.scenario.workload.precision)).c_str(), c.batch);
    };
    pool("prefill", d.prefill, d.pools.prefillGpus);
    pool("decode", d.decode, d.pools.decodeGpus);
    std::printf("  %.1f tok/s/GPU, TTFT %s, TPOT %s", d.pools.outputTokensPerSPerGpu,
                formatSeconds(d.pools.ttftS).c_str(), formatSeconds(d.pools.tpotS).c_str());
    if (!r.top.empty() && r.top.front().outputTokensPerSPerGpu > 0)
        std::printf("  (%.2fx the best aggregated configuration's throughput per GPU)",
                    d.pools.outputTokensPerSPerGpu / r.top.front().outputTokensPerSPerGpu);
    std::printf("\n");
}

void runServingSearch(const Scenario& scenario, const SearchSpace& sp, ServingSearchOptions so,
                      bool json) {
    // The serving search ranks TP, PP, replicas, EP and precision: those restrictions
    // apply; any other is refused rather than ignored.
    
    const std::pair<const char*, bool> other[] = {
        {"vp", !sp.vp.empty()},        {"cp", !sp.cp.empty()},
        {"mb", !sp.microBatch.empty()}, {"zero", !sp.zeroStage.empty()},
        {"etp", !sp.etp.empty()},      {"recompute", !sp.recompute.empty()},
        {"recompute_layers", !sp.recomputeLayers.empty()},
        {"offload_layers", !sp.offloadLayers.empty()},
        {"sp", !sp.sequenceParallel.empty()}, {"overlap", !sp.tpCommOverlap.empty()},
        {"gpus", !sp.gpus.empty()}};
    for (const auto& [dim, set] : other)
        if (set)
            throw InputError("--restrict", dim,
                             "does not apply to a serving search, which ranks TP, PP, "
                             "replicas, EP and precision at the scenario's GPU count "
                             "(restrict tp, pp or ep; change the GPUs with --set gpus=N)");
    so.tp = sp.tp;
    so.pp = sp.pp;
    so.ep = sp.ep;
    so.draftTokens = sp.draftTokens;
    const ServingSearchResult r = searchServing(scenario, so);
    // Aggregated against disaggregated on the same GPUs (a pool scenario searches only itself).
    const bool aggregated = scenario.workload.inference.phase == ServingPhase::Aggregated;
    const DisaggregatedPlan dis =
        aggregated && scenario.gpus >= 2 ? searchDisaggregated(scenario, so) : DisaggregatedPlan{};
    if (json) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& c : r.top)
            a.push_back(
                {{"strategy", toJson(c.scenario.strategy)},
                 {"precision", std::string(toString(c.scenario.workload.precision))},
                 {"batch", c.batch},
                 {"output_tokens_per_s_per_gpu", c.outputTokensPerSPerGpu},
                 {"ttft_s", c.ttftS},
                 {"tpot_s", c.tpotS},
                 {"draft_tokens", c.scenario.workload.inference.draftTokens},
                 {"score", c.score}});
        nlohmann::json front = nlohmann::json::array();
        for (const auto& c : r.pareto)
            front.push_back({{"strategy", toJson(c.scenario.strategy)},
                             {"precision",
                              std::string(toString(c.scenario.workload.precision))},
                             {"draft_tokens", c.scenario.workload.inference.draftTokens},
                             {"batch", c.batch},
                             {"output_tokens_per_s_per_gpu", c.outputTokensPerSPerGpu},
                             {"tpot_s", c.tpotS}});
        nlohmann::json out = {{"schema", "madmax-serving-search/1"},
                               {"top", a},
                               {"pareto", front},
                               {"stats", {{"evaluated", r.evaluated}, {"feasible", r.feasible}}}};
        if (aggregated) out["disaggregated"] = disaggregatedJson(dis);
        std::cout << out.dump(2) << "\n";
    } else {
        std::cout << "rank  TP  PP  replicas   EP  precision  batch   tok/s/GPU       TTFT  "
                     "     TPOT\n";
        int rank = 1;
        for (const auto& c : r.top)
            std::printf("%4d %3d %3d %9d %4d %10s %6d %11.1f %10s %10s\n", rank++,
                        c.scenario.strategy.tp, c.scenario.strategy.pp,
                        c.scenario.strategy.dp, c.scenario.strategy.ep,
                        std::string(toString(c.scenario.workload.precision)).c_str(),
                        c.batch, c.outputTokensPerSPerGpu,
                        formatSeconds(c.ttftS).c_str(), formatSeconds(c.tpotS).c_str());
        if (r.top.empty())
            std::printf("%s\n",
                        r.evaluated == 0
                            ? "  (no valid configuration: TP must divide the attention "
                              "heads within the NVLink domain, PP the layers, EP the "
                              "experts; widen --restrict)"
                        : r.feasible == 0 ? "  (none fits in memory and meets the "
                                            "objectives)"
                                          : "  (none listed: --top 0)");
        std::printf("\n%zu configurations, %zu fit and meet the objectives\n",
                    r.evaluated, r.feasible);
        printServingFront(r);
        if (aggregated) printDisaggregated(r, dis);
    }
}

void addSearchCommand(CLI::App& app) {
    struct Options {
        Common common;
        int top = 10;
        std::string baseline;
        double ttft = 0, tpot = 0;
        bool perDollar = false, scatter = false;
    };
    auto o = std::make_shared<Options>();
    auto* search = app.add_subcommand(
        "search", "Rank every valid parallelization strategy (or serving configuration)");
    addCommon(search, o->common);
    search->add_option("--ttft", o->ttft, "Serving: time-to-first-token objective in seconds")
        ->check(kNonNegative);
    search->add_option("--tpot", o->tpot, "Serving: time-per-output-token objective in seconds")
        ->check(kNonNegative);
    search->add_flag("--per-dollar", o->perDollar, "Serving: rank by output tokens per dollar");
    search->add_option("--top", o->top, "How many to list, 0 to 2^30 (default 10)")
        ->check(CLI::Range(0, 1 << 30));
    search->add_option(
        "--baseline", o->baseline,
        "What you run today, e.g. \"tp=8,pp=16,vp=2,mb=1,cuda_graphs=1\" (any strategy field "
        "by key or short name; switches 0/1); the best is compared with it");
    search->add_flag("--scatter", o->scatter,
                     "With --json: include the scatter sample (up to 20,000 configurations)");
    search->callback([o, search] {
        Prepared p = prepare(o->common);
        // An option this workload's search has no use for is refused, never ignored.
        const auto refuse = [search](std::initializer_list<const char*> names,
                                     const std::string& why) {
            for (const char* n : names)
                if (*n && search->get_option(n)->count() > 0)
                    throw InputError(n, "", "does not apply to " + why);
        };
        // Throughput is what the serving and plan searches rank: saying so is not an error.
        const char* objective = p.options.objective != Objective::Throughput ? "--objective" : "";
        if (p.scenario.model.isDlrm())
            refuse({"--restrict", objective, "--token-budget", "--no-prune",
                    "--allow-tp-across-scale-up", "--shard", "--baseline", "--scatter", "--ttft",
                    "--tpot", "--per-dollar", "--csv"},
                   "a DLRM's plan search, which ranks embedding sharding plans by samples/s "
                   "(it takes --top and --json)");
        else if (p.scenario.workload.kind == WorkloadKind::Inference)
            refuse({objective, "--token-budget", "--no-prune", "--allow-tp-across-scale-up",
                    "--shard", "--baseline", "--scatter", "--csv"},
                   "a serving search, which ranks output tokens/s per GPU (per dollar with "
                   "--per-dollar) under --ttft / --tpot, and takes --restrict tp, pp, ep, --top "
                   "and --json");
        else
            refuse({"--ttft", "--tpot", "--per-dollar"},
                   "a training search (it is a serving search's option, for an inference "
                   "scenario)");
        if (p.scenario.model.isDlrm()) {
            runDlrmSearch(p.scenario, o->top, o->common.json);
            return;
        }
        if (p.scenario.workload.kind == WorkloadKind::Inference) {
            ServingSearchOptions so;
            so.ttftObjectiveS = o->ttft;
            so.tpotObjectiveS = o->tpot;
            so.perDollar = o->perDollar;
            so.topN = o->top;
            runServingSearch(p.scenario, p.space, so, o->common.json);
            return;
        }
        p.options.topN = o->top;
        Progress progress;
        p.options.progress = [&progress](std::size_t d, std::size_t t) { progress(d, t); };
        if (!o->baseline.empty()) p.options.baseline = parseStrategySpec(o->baseline, p.scenario);
        SearchResult r = madmax::search(p.scenario, p.space, p.options);
        r.fingerprint = searchFingerprint(p.scenario, p.space, p.options);
        if (o->common.json)
            std::cout << toJson(r, o->scatter).dump(2) << "\n";
        else if (o->common.csv)
            std::cout << searchCsv(r);
        else
            printSearch(r, p.scenario);
        return;
    });
}

void addParetoCommand(CLI::App& app) {
    struct Options {
        Common common;
        std::vector<std::string> systems;
        std::vector<int> gpus;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "pareto",
        "Resource against performance (MAD-Max Figure 1): the best strategy of each system at "
        "each GPU count, and the fronts in GPUs and in dollars per hour");
    addCommon(cmd, o->common);
    cmd->add_option("--system", o->systems,
                    "System preset id or preset file to compare (repeat; default: the "
                    "scenario's system)")
        ->type_name("ID");
    cmd->add_option("--gpus", o->gpus,
                    "GPU counts (default: the scenario's × 1/8, 1/4, 1/2, 1, 2, 4)")
        ->delimiter(',')
        ->check(CLI::Range(1, 1 << 30))
        ->type_name("N,N,…");
    cmd->callback([o, cmd] {
        Prepared p = prepare(o->common);
        // The comparison is one run over systems × --gpus: no shards, and its own GPU counts.
        if (cmd->get_option("--shard")->count() > 0)
            throw InputError("--shard", o->common.shard,
                             "does not apply to the Pareto comparison (it is not sharded); "
                             "split it by --system or --gpus instead");
        if (!p.space.gpus.empty())
            throw InputError("--restrict", "gpus",
                             "the Pareto comparison takes its GPU counts from --gpus");
        Progress progress;
        p.options.progress = [&progress](std::size_t d, std::size_t t) { progress(d, t); };
        std::vector<ResourceSystem> systems;
        for (const auto& id : o->systems)
            systems.push_back(loadResourceSystem(id));
        const ResourcePareto r = resourcePareto(p.scenario, systems, o->gpus, p.space, p.options);
        if (o->common.json) {
            std::cout << toJson(r).dump(2) << "\n";
            return;
        }
        if (o->common.csv) {
            std::cout << paretoCsv(r);
            return;
        }
        const bool dlrm = p.scenario.model.isDlrm();
        std::printf("%-28s %6s %10s %14s %12s %10s  %-6s %s\n", "system", "GPUs", "$/hour",
                    r.unit.c_str(), "per GPU", dlrm ? "$/M samp." : "$/M tok.", "front",
                    "best strategy");
        for (const ResourcePoint& pt : r.points) {
            const std::string front = std::string(pt.frontGpus ? "G" : "") +
                                      (pt.frontDollars ? "$" : "");
            // Dollars to three significant figures (whole dollars from $100): a DLRM's cost
            // per million samples is a few hundredths of a cent, not "0.000".
            const auto money = [](double v) {
                char b[32];
                std::snprintf(b, sizeof b, v >= 100 ? "%.0f" : "%.3g", v);
                return std::string(b);
            };
            const std::string price = pt.pricePerGpuHour > 0 ? money(pt.dollarsPerHour()) : "?";
            const std::string perM =
                pt.dollarsPerMillion() > 0 ? money(pt.dollarsPerMillion()) : "?";
            if (!pt.feasible) {
                std::printf("%-28s %6d %10s %14s %12s %10s  %-6s %s\n", pt.systemId.c_str(),
                            pt.gpus, price.c_str(), "-", "-", "-", "", pt.whyNone.c_str());
                continue;
            }
            std::printf("%-28s %6d %10s %14.4g %12.1f %10s  %-6s %s\n", pt.systemId.c_str(),
                        pt.gpus, price.c_str(), pt.best.tokensPerS, pt.best.tokensPerS / pt.gpus,
                        perM.c_str(), front.c_str(), pt.spec.c_str());
        }
        std::printf("\nfront: G = no point has more %s with as few GPUs; $ = none with as few "
                    "dollars per hour%s\n",
                    r.unit.c_str(),
                    r.priced ? "" : " (not drawn: a system states no price_per_gpu_hour)");
    });
}

void addSweepCommand(CLI::App& app) {
    struct Options {
        Common common;
        std::vector<std::string> knobs;
        bool sensitivity = false;
    };
    auto o = std::make_shared<Options>();
    auto* sweep = app.add_subcommand(
        "sweep", "Scale hardware knobs, re-search at each point, report the speedups");
    addCommon(sweep, o->common);
    sweep
        ->add_option("--knob", o->knobs,
                     "NAME=F1,F2,… (flops, hbm_bw, hbm_capacity, scale_up_bw, scale_out_bw, "
                     "scale_up_latency, scale_out_latency, tier<K>_bw, tier<K>_latency, "
                     "scale_up_domain, host_speed, sfu_exp, gpus); two for a grid")
        ->type_name("NAME=F1,F2");
    sweep->add_flag("--sensitivity", o->sensitivity,
                    "The ×0.5 / ×2 speedup of every knob (tornado chart data)");
    sweep->callback([o] {
        Prepared p = prepare(o->common);
        Progress progress;
        p.options.progress = [&progress](std::size_t d, std::size_t t) { progress(d, t); };
        if (o->sensitivity) {
            if (!o->knobs.empty())
                throw InputError("--knob", o->knobs.front(),
                                 "--sensitivity ranks every knob at x0.5 and x2 by itself; give "
                                 "--knob for a sweep or --sensitivity, not both");
            if (!o->common.shard.empty())
                throw InputError("--shard", o->common.shard,
                                 "--sensitivity is not sharded (each knob is two searches)");
            const auto s = sensitivity(p.scenario, p.space, p.options);
            if (o->common.json) {
                std::cout << toJson(s).dump(2) << "\n";
            } else if (o->common.csv) {
                std::cout << "knob,speedup_half,speedup_double\n";
                for (const auto& x : s)
                    std::cout << x.knob << ',' << x.speedupHalf << ',' << x.speedupDouble << '\n';
            } else {
                std::cout << "knob                    x0.5      x2\n";
                for (const auto& x : s)
                    std::printf("%-20s %7.3fx %7.3fx\n", x.knob.c_str(), x.speedupHalf,
                                x.speedupDouble);
            }
            return;
        }
        if (o->knobs.empty())
            throw InputError("--knob", "",
                             "give at least one knob, e.g. --knob hbm_bw=0.5,1,2");
        std::vector<KnobAxis> axes;
        for (const auto& k : o->knobs)
            axes.push_back(parseKnobAxis(k));
        const SweepResult r = madmax::sweep(p.scenario, axes, p.space, p.options);
        if (o->common.json) {
            std::cout << toJson(r).dump(2) << "\n";
        } else if (o->common.csv) {
            std::cout << sweepCsv(r);
        } else if (p.scenario.model.isDlrm()) {
            // A DLRM: samples, and the best sharding plan at each point.
            std::cout << sweepCsv(r);
            std::cout << "\nunscaled best plan: "
                      << describePlan(p.scenario, r.unscaled.strategy.dlrm) << ", "
                      << r.unscaled.tokensPerS / std::max(1, r.unscaled.gpus)
                      << " samples/s/GPU\n";
        } else {
            std::cout << sweepCsv(r);
            std::cout << "\nunscaled best: " << candidateSpec(r.unscaled) << ", "
                      << r.unscaled.tokensPerS / std::max(1, r.unscaled.gpus) << " tok/s/GPU\n";
        }
        return;
    });
}

} // namespace

void addSearchCommands(CLI::App& app) {
    addSearchCommand(app);
    addSweepCommand(app);
    addParetoCommand(app);
    addCurveCommand(app);
    addPoolsCommand(app);
    addMergeCommand(app);
    addCollectiveCommand(app);
}

} // namespace madmax::cli
