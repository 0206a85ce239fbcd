#include "madmax/codesign.hpp"
#include "madmax/dlrm_search.hpp"

#include <chrono>

#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/presets.hpp"
#include "madmax/scenario_io.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace madmax {

const std::vector<std::string>& sensitivityKnobs() {
    static const std::vector<std::string> k = {
        "flops",        "hbm_bw",           "hbm_capacity",      "scale_up_bw",
        "scale_out_bw", "scale_up_latency", "scale_out_latency", "scale_up_domain",
        "host_speed",   "sfu_exp"};
    return k;
}

std::vector<std::string> sensitivityKnobs(const System& sys) {
    std::vector<std::string> k;
    // A GPU without an exponential rate has no special-function units to scale.
    for (const auto& name : sensitivityKnobs())
        if (name != "sfu_exp" || sys.gpu.expPerS > 0) k.push_back(name);
    return k;
}

std::vector<std::string> knobNames(const System& sys) {
    std::vector<std::string> k = {
        "flops",        "hbm_bw",           "hbm_capacity",      "scale_up_bw",
        "scale_out_bw", "scale_up_latency", "scale_out_latency", "scale_up_domain",
        "host_speed",   "sfu_exp",          "gpus"};
    for (std::size_t i = 0; i < sys.tiers.size(); ++i) {
        k.push_back("tier" + std::to_string(i) + "_bw");
        k.push_back("tier" + std::to_string(i) + "_latency");
    }
    return k;
}

namespace {
/// The scenario on `gpus` GPUs of the same build: the outermost tier grows to hold them, DP
/// follows from the other degrees (left as it is when they do not divide the count; the
/// search picks the strategy).
Scenario withGpus(const Scenario& s, int gpus) {
    Scenario o = s;
    o.gpus = gpus;
    if (!o.system.tiers.empty() && gpus > o.system.tiers.back().gpus)
        o.system.tiers.back().gpus = gpus;
    if (const int dp = dataParallelDegree(gpus, o.strategy)) o.strategy.dp = dp;
    return o;
}
} // namespace

Scenario scaleKnob(const Scenario& s, const std::string& knob, double f) {
    if (!(f > 0) || !std::isfinite(f))
        throw InputError("--knob", knob,
                         "factor " + std::to_string(f) + " must be a positive number");
    Scenario o = s;
    auto& sys = o.system;
    auto eachTier = [&](auto pred, auto fn) {
        bool any = false;
        for (std::size_t i = 0; i < sys.tiers.size(); ++i)
            if (pred(i, sys.tiers[i])) {
                fn(sys.tiers[i]);
                any = true;
            }
        return any;
    };
    const auto isUp = [](std::size_t, const NetworkTier& t) { return t.kind == TierKind::ScaleUp; };
    const auto isOut = [](std::size_t, const NetworkTier& t) {
        return t.kind == TierKind::ScaleOut;
    };
    if (knob == "flops") {
        for (auto& p : sys.gpu.peakFlops)
            p *= f;
    } else if (knob == "hbm_bw") {
        sys.gpu.hbmBytesPerS *= f;
    } else if (knob == "hbm_capacity") {
        sys.gpu.hbmBytes *= f;
    } else if (knob == "sfu_exp") {
        // The special-function units' exponential rate (softmax in attention); "flops" scales
        // the tensor cores only. A GPU preset without the rate has nothing to scale.
        if (!(sys.gpu.expPerS > 0))
            throw InputError("--knob", knob,
                             "the GPU gives no exponential rate (gpu.peak_exp_tera_per_s)");
        sys.gpu.expPerS *= f;
    } else if (knob == "host_speed") {
        // A host f times as fast issues a kernel in 1/f of the time (calibration host_op_us).
        sys.gpu.calibration.hostOpS /= f;
    } else if (knob == "scale_up_bw" || knob == "scale_out_bw") {
        if (!eachTier(knob == "scale_up_bw" ? +isUp : +isOut,
                      [&](NetworkTier& t) { t.bytesPerS *= f; }))
            throw InputError("--knob", knob, "the system has no such tier");
    } else if (knob == "scale_up_latency" || knob == "scale_out_latency") {
        if (!eachTier(knob == "scale_up_latency" ? +isUp : +isOut,
                      [&](NetworkTier& t) { t.latencyS *= f; }))
            throw InputError("--knob", knob, "the system has no such tier");
    } else if (knob == "scale_up_domain") {
        if (sys.tiers.empty()) throw InputError("--knob", knob, "the system has no tiers");
        const int limit = sys.tiers.size() > 1 ? sys.tiers[1].gpus : sys.tiers[0].gpus;
        sys.tiers[0].gpus = std::max(1, std::min(limit, int(std::lround(sys.tiers[0].gpus * f))));
    } else if (knob == "gpus") {
        o = withGpus(s, std::max(1, int(std::lround(s.gpus * f))));
    } else if (knob.rfind("tier", 0) == 0 && knob.find('_') != std::string::npos) {
        const std::size_t us = knob.find('_');
        std::size_t k = 0;
        try {
            k = std::stoul(knob.substr(4, us - 4));
        } catch (const std::exception&) {
            k = sys.tiers.size();
        }
        const std::string what = knob.substr(us + 1);
        if (k >= sys.tiers.size() || (what != "bw" && what != "latency"))
            throw InputError("--knob", knob,
                             "no such tier knob; the system has tiers 0 to " +
                                 std::to_string(int(sys.tiers.size()) - 1));
        if (what == "bw")
            sys.tiers[k].bytesPerS *= f;
        else
            sys.tiers[k].latencyS *= f;
    } else {
        const auto names = knobNames(sys);
        auto near = didYouMean(knob, names);
        std::string list;
        for (const auto& n : names)
            list += (list.empty() ? "" : ", ") + n;
        throw InputError("--knob", knob,
                         "unknown knob" +
                             (near ? " (did you mean \"" + *near + "\"?)" : std::string()) +
                             "; knobs: " + list);
    }
    return o;
}

KnobAxis parseKnobAxis(const std::string& spec) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError("--knob", spec, "expected NAME=F1,F2,… (e.g. hbm_bw=0.5,1,2)");
    KnobAxis a;
    a.knob = spec.substr(0, eq);
    std::stringstream ss(spec.substr(eq + 1));
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            std::size_t used = 0;
            const double v = std::stod(item, &used);
            if (used != item.size() || !(v > 0) || v > 1e6) throw std::invalid_argument(item);
            a.factors.push_back(v);
        } catch (const std::exception&) {
            throw InputError("--knob", a.knob,
                             "\"" + item + "\" is not a factor from above 0 to 1e6");
        }
    }
    if (a.factors.empty()) throw InputError("--knob", a.knob, "give at least one factor");
    return a;
}

std::vector<std::size_t> SweepResult::strategyChanges() const {
    std::vector<std::size_t> out;
    if (axes.empty()) return out;
    const std::size_t lastAxis = axes.back().factors.size();
    for (std::size_t i = 1; i < points.size(); ++i) {
        if (points[i].index % lastAxis == 0) continue; // a new row of the grid
        const auto& a = points[i - 1];
        const auto& b = points[i];
        if (a.feasible != b.feasible) {
            out.push_back(i);
            continue;
        }
        if (!a.feasible) continue;
        const Strategy &x = a.best.strategy, &y = b.best.strategy;
        if (a.best.embTables > 0 || b.best.embTables > 0 || a.best.servingBatch > 0 ||
            b.best.servingBatch > 0) {
            // A DLRM's strategy is its sharding plan; serving's, its degrees and precision.
            if (!sameStrategy(a.best, b.best)) out.push_back(i);
            continue;
        }
        if (x.tp != y.tp || x.pp != y.pp || x.vp != y.vp || x.cp != y.cp || x.dp != y.dp ||
            x.microBatch != y.microBatch || x.zeroStage != y.zeroStage ||
            x.recompute != y.recompute || x.recomputeLayers != y.recomputeLayers ||
            x.offloadLayers != y.offloadLayers ||
            x.sequenceParallel != y.sequenceParallel ||
            x.tpCommOverlap != y.tpCommOverlap || a.best.gpus != b.best.gpus)
            out.push_back(i);
    }
    return out;
}

namespace {
/// DLRM: the best sharding plan at this point (samples/s stand in for tokens/s: the sweep
/// reports speedups, ratios of the same quantity).
Candidate bestDlrmPlan(const Scenario& s, SearchStats* stats, bool* feasible) {
    const auto start = std::chrono::steady_clock::now();
    DlrmSearchOptions o;
    o.topN = 1;
    const DlrmSearchResult r = searchDlrmPlans(s, o);
    Candidate c;
    *feasible = !r.top.empty() && r.top.front().fits;
    if (stats) {
        stats->enumerated = std::size_t(r.valid);
        stats->feasible = std::size_t(r.fitting);
        stats->infeasible = std::size_t(r.valid - r.fitting);
        stats->seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (!*feasible) return c;
    const DlrmPlanCandidate& b = r.top.front();
    c.gpus = s.gpus;
    c.strategy = s.strategy;
    c.strategy.dlrm = b.plan;
    c.embTables = int(s.model.dlrm.tables.size());
    c.stepTimeS = b.result.stepTimeS;
    c.tokensPerS = b.result.samplesPerS;
    c.mfu = b.result.mfu;
    c.memoryBytes = b.result.memory.totalBytes();
    c.marginBytes = b.result.memory.marginBytes();
    c.exposedCommS = b.result.exposedCommS;
    c.score = b.result.samplesPerS;
    c.fits = true;
    return c;
}

Candidate bestOf(const Scenario& s, const SearchSpace& space, const SearchOptions& options,
                 SearchStats* stats, bool* feasible) {
    if (s.model.isDlrm()) {
        if (auto why = explainObjective(s, options.objective))
            throw InputError("--objective", std::string(toString(options.objective)), *why);
        return bestDlrmPlan(s, stats, feasible);
    }
    SearchOptions o = options;
    o.topN = 1;
    o.scatterLimit = 0;
    o.baseline.reset();
    o.shardIndex = 0;
    o.shardCount = 1;
    o.progress = nullptr;
    SearchSpace sp = space;
    if (sp.gpus.empty()) sp.gpus = {s.gpus};
    const SearchResult r = search(s, sp, o);
    if (stats) *stats = r.stats;
    *feasible = !r.top.empty();
    return r.top.empty() ? Candidate{} : r.top.front();
}
} // namespace

namespace {
/// Why a search at `s` found nothing: memory (or serving's latency objectives), a DLRM's own
/// rule quoted, or no split of the GPUs, layers and batch at all.
std::string whyNoStrategy(const Scenario& s, const SearchStats& st) {
    if (st.enumerated > 0)
        return s.workload.kind == WorkloadKind::Inference
                   ? "no configuration fits in memory and meets the latency objectives"
                   : "no strategy fits in memory";
    // A DLRM's one strategy is data parallelism over every GPU: its own rule says exactly
    // what fails; a transformer's search tried every split.
    if (const auto rule = s.model.isDlrm() ? explainInvalid(s) : std::nullopt)
        return "no valid strategy: " + *rule;
    return "no valid strategy: no split divides the GPUs, layers and batch at this count";
}

/// bestOf, with a point's reason when nothing is found (an invalid point is not an error of
/// the whole sweep or comparison: its reason is reported in its place). The run's own options
/// (the objective) are checked before any point, by the unscaled search or up front.
Candidate bestOrWhy(const Scenario& s, const SearchSpace& sp, const SearchOptions& options,
                    SearchStats& st, bool& feasible, std::string& whyNone) {
    try {
        Candidate c = bestOf(s, sp, options, &st, &feasible);
        if (!feasible) whyNone = whyNoStrategy(s, st);
        return c;
    } catch (const InputError& e) {
        feasible = false;
        whyNone = "no valid strategy: " + e.message();
        return Candidate{};
    }
}
} // namespace

namespace {
constexpr std::size_t kMaxSweepFactors = 256; ///< factors of one knob
constexpr std::size_t kMaxSweepPoints = 4096; ///< grid points of one sweep
} // namespace

SweepResult sweep(const Scenario& base, const std::vector<KnobAxis>& axes, const SearchSpace& space,
                  const SearchOptions& options) {
    if (axes.empty() || axes.size() > 2)
        throw InputError("--knob", "", "give one knob, or two for a grid");
    SweepResult r;
    r.axes = axes;
    bool ok = false;
    r.unscaled = bestOf(base, space, options, nullptr, &ok);
    const std::size_t n0 = axes[0].factors.size();
    const std::size_t n1 = axes.size() > 1 ? axes[1].factors.size() : 1;
    // Each point is a whole search: a grid beyond this is hours, not a sweep (issue #30).
    if (n0 > kMaxSweepFactors || n1 > kMaxSweepFactors || n0 * n1 > kMaxSweepPoints)
        throw InputError("--knob", axes[0].knob,
                         std::to_string(n0 * n1) + " grid points (" + std::to_string(n0) +
                             (axes.size() > 1 ? " × " + std::to_string(n1) : std::string()) +
                             "): at most " + std::to_string(kMaxSweepFactors) +
                             " factors per knob and " + std::to_string(kMaxSweepPoints) +
                             " points, each a full search; thin the factors");
    // Validate every knob once, up front, so a typo fails before any work.
    for (const auto& a : axes)
        scaleKnob(base, a.knob, 1.0);
    for (std::size_t i = 0; i < n0 * n1; ++i) {
        if (int(i % std::size_t(std::max(1, options.shardCount))) != options.shardIndex) continue;
        if (options.cancel && options.cancel->load()) break;
        SweepPoint p;
        p.index = i;
        Scenario s = scaleKnob(base, axes[0].knob, axes[0].factors[i / n1]);
        p.factors.push_back(axes[0].factors[i / n1]);
        if (axes.size() > 1) {
            s = scaleKnob(s, axes[1].knob, axes[1].factors[i % n1]);
            p.factors.push_back(axes[1].factors[i % n1]);
        }
        SearchSpace sp = space;
        if (std::any_of(axes.begin(), axes.end(),
                        [](const KnobAxis& a) { return a.knob == "gpus"; }))
            sp.gpus = {s.gpus};
        p.best = bestOrWhy(s, sp, options, p.stats, p.feasible, p.whyNone);
        p.speedup = p.feasible && ok ? p.best.score / r.unscaled.score : 0.0;
        r.points.push_back(p);
        if (options.progress) options.progress(i + 1, n0 * n1);
    }
    return r;
}

SweepResult mergeSweeps(const std::vector<SweepResult>& shards) {
    SweepResult r;
    if (shards.empty()) return r;
    r.axes = shards.front().axes;
    r.unscaled = shards.front().unscaled;
    for (std::size_t i = 1; i < shards.size(); ++i) {
        bool same = shards[i].axes.size() == r.axes.size();
        for (std::size_t k = 0; same && k < r.axes.size(); ++k)
            same = shards[i].axes[k].knob == r.axes[k].knob &&
                   shards[i].axes[k].factors == r.axes[k].factors;
        if (!same)
            throw InputError("merge", "axes",
                             "the sweep files were run with different knobs or factors; merge "
                             "shards of one sweep");
        // Every shard searches the unscaled system itself: another best there is another
        // scenario (or --set, or --restrict).
        const Candidate& u = shards[i].unscaled;
        if (u.gpus != r.unscaled.gpus || u.tokensPerS != r.unscaled.tokensPerS ||
            !sameStrategy(u, r.unscaled))
            throw InputError("merge", "unscaled",
                             "the sweep files start from different unscaled results (another "
                             "scenario, --set or --restrict); merge shards of one sweep");
    }
    for (const auto& s : shards)
        r.points.insert(r.points.end(), s.points.begin(), s.points.end());
    std::sort(r.points.begin(), r.points.end(),
              [](const SweepPoint& a, const SweepPoint& b) { return a.index < b.index; });
    // The grid's points, each once: a shard given twice, or one left out, is not the sweep.
    std::size_t grid = 1;
    for (const auto& a : r.axes)
        grid *= a.factors.size();
    for (std::size_t i = 0; i < r.points.size(); ++i) {
        if (i > 0 && r.points[i].index == r.points[i - 1].index)
            throw InputError("merge", "points",
                             "grid point " + std::to_string(r.points[i].index) +
                                 " is in two files: the same shard given twice");
        if (r.points[i].index >= grid)
            throw InputError("merge", "points",
                             "grid point " + std::to_string(r.points[i].index) +
                                 " lies beyond the " + std::to_string(grid) +
                                 " points of the knobs' factors");
    }
    if (r.points.size() < grid)
        throw InputError("merge", "points",
                         std::to_string(grid - r.points.size()) + " of the sweep's " +
                             std::to_string(grid) + " grid points " +
                             (grid - r.points.size() == 1 ? "is" : "are") +
                             " in none of the files; merge every shard");
    return r;
}

std::vector<Sensitivity> sensitivity(const Scenario& base, const SearchSpace& space,
                                     const SearchOptions& options, std::vector<std::string> knobs) {
    if (knobs.empty()) knobs = sensitivityKnobs(base.system);
    std::vector<Sensitivity> out;
    for (const auto& k : knobs) {
        if (options.cancel && options.cancel->load()) break;
        const SweepResult r = sweep(base, {{k, {0.5, 2.0}}}, space, options);
        Sensitivity s;
        s.knob = k;
        s.speedupHalf = r.points.size() > 0 ? r.points[0].speedup : 0;
        s.speedupDouble = r.points.size() > 1 ? r.points[1].speedup : 0;
        out.push_back(s);
    }
    std::sort(out.begin(), out.end(), [](const Sensitivity& a, const Sensitivity& b) {
        const double ia = std::fabs(a.speedupDouble - 1) + std::fabs(1 - a.speedupHalf);
        const double ib = std::fabs(b.speedupDouble - 1) + std::fabs(1 - b.speedupHalf);
        return ia != ib ? ia > ib : a.knob < b.knob;
    });
    return out;
}

namespace {
/// Marks the points no other feasible point beats: at least the throughput for no more of the
/// resource (ties in both keep every tied point).
template <typename Resource, typename Mark>
void markFront(std::vector<ResourcePoint>& points, Resource resource, Mark mark) {
    for (ResourcePoint& p : points) {
        if (!p.feasible) continue;
        bool dominated = false;
        for (const ResourcePoint& q : points) {
            if (&q == &p || !q.feasible) continue;
            const double rp = resource(p), rq = resource(q);
            const double tp = p.best.tokensPerS, tq = q.best.tokensPerS;
            if (rq <= rp && tq >= tp && (rq < rp || tq > tp)) {
                dominated = true;
                break;
            }
        }
        mark(p, !dominated);
    }
}
} // namespace

ResourceSystem loadResourceSystem(const std::string& idOrPath) {
    nlohmann::json doc = {{"system", idOrPath}};
    resolvePresetRefs(doc, PresetLibrary::builtin(), "--system");
    const std::string where =
        PresetLibrary::builtin().find(PresetKind::System, idOrPath) ? "system preset " + idOrPath
                                                                     : idOrPath;
    return {idOrPath, parseSystem(doc.at("system"), where, "system")};
}

ResourcePareto resourcePareto(const Scenario& base, const std::vector<ResourceSystem>& systems,
                              const std::vector<int>& gpuCounts, const SearchSpace& space,
                              const SearchOptions& options) {
    ResourcePareto out;
    out.unit = base.model.isDlrm() ? "samples/s" : "tokens/s";
    // An objective the workload's search cannot rank by is the run's error, not every point's.
    if (auto why = explainObjective(base, options.objective))
        throw InputError("--objective", std::string(toString(options.objective)), *why);
    std::vector<ResourceSystem> sys = systems;
    if (sys.empty()) sys.push_back({"scenario", base.system});
    std::vector<int> counts = gpuCounts;
    if (counts.empty())
        for (double f : {0.125, 0.25, 0.5, 1.0, 2.0, 4.0})
            counts.push_back(std::max(1, int(std::lround(base.gpus * f))));
    for (int g : counts)
        if (g < 1)
            throw InputError("--gpus", std::to_string(g), "a GPU count must be at least 1");
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    out.priced = std::all_of(sys.begin(), sys.end(),
                             [](const ResourceSystem& r) { return r.system.pricePerGpuHour > 0; });
    const std::size_t total = sys.size() * counts.size();
    for (const ResourceSystem& rs : sys) {
        for (int g : counts) {
            if (options.cancel && options.cancel->load()) return out;
            ResourcePoint p;
            p.systemId = rs.id;
            p.systemName = rs.system.name;
            p.gpus = g;
            p.pricePerGpuHour = rs.system.pricePerGpuHour;
            Scenario on = base;
            on.system = rs.system;
            const Scenario s = withGpus(on, g);
            SearchSpace sp = space;
            sp.gpus = {g};
            SearchStats st;
            p.best = bestOrWhy(s, sp, options, st, p.feasible, p.whyNone);
            // A DLRM's strategy is its sharding plan (its TP/PP/DP fields are fixed).
            if (p.feasible)
                p.spec = s.model.isDlrm() ? describePlan(s, p.best.strategy.dlrm)
                                          : candidateSpec(p.best);
            out.points.push_back(p);
            if (options.progress) options.progress(out.points.size(), total);
        }
    }
    markFront(out.points, [](const ResourcePoint& p) { return double(p.gpus); },
              [](ResourcePoint& p, bool on) { p.frontGpus = on; });
    if (out.priced)
        markFront(out.points, [](const ResourcePoint& p) { return p.dollarsPerHour(); },
                  [](ResourcePoint& p, bool on) { p.frontDollars = on; });
    return out;
}

TrainingCost trainingCost(const System& sys, int gpus, double tokensPerS, double tokenBudget) {
    TrainingCost c;
    c.seconds = tokenBudget / tokensPerS;
    c.gpuHours = c.seconds / 3600.0 * gpus;
    c.dollars = c.gpuHours * sys.pricePerGpuHour;
    c.energyKWh = c.gpuHours * sys.gpu.powerW / 1000.0;
    return c;
}

} // namespace madmax
