// `madmax calibrate`: a GPU preset's link efficiency curves and compute scale fitted to the
// user's nccl-tests tables and measured step times, with a report of what moved what.
#include "madmax/calibrate.hpp"

#include "calibration/calibrate_detail.hpp"

#include "madmax/collectives.hpp"
#include "madmax/error.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace madmax {

using nlohmann::json;

namespace calibration_detail {
std::string fmt(const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}
} // namespace calibration_detail

using calibration_detail::fmt;

namespace {

std::vector<std::string> split(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    std::string w;
    while (in >> w)
        out.push_back(w);
    return out;
}

bool isNumber(const std::string& s, double& v) {
    try {
        std::size_t used = 0;
        v = std::stod(s, &used);
        return used == s.size() && std::isfinite(v);
    } catch (const std::exception&) {
        return false;
    }
}

std::optional<Collective> opFromName(const std::string& s) {
    if (s.find("all_reduce") != std::string::npos) return Collective::AllReduce;
    if (s.find("all_gather") != std::string::npos) return Collective::AllGather;
    if (s.find("reduce_scatter") != std::string::npos) return Collective::ReduceScatter;
    if (s.find("alltoall") != std::string::npos || s.find("all_to_all") != std::string::npos)
        return Collective::AllToAll;
    return std::nullopt;
}

const char* perfName(Collective c) {
    switch (c) {
    case Collective::AllReduce: return "all_reduce_perf";
    case Collective::AllGather: return "all_gather_perf";
    case Collective::ReduceScatter: return "reduce_scatter_perf";
    case Collective::AllToAll: return "alltoall_perf";
    case Collective::P2P: return "sendrecv_perf";
    }
    return "?";
}

/// The system as the table's ranks see it: one tier-0 domain per host.
System layoutFor(const System& sys, const NcclTable& t) {
    System s = sys;
    const int perHost = t.ranks / std::max(1, t.hosts);
    if (!s.tiers.empty()) s.tiers[0].gpus = perHost;
    return s;
}

/// The x in [lo, hi] at which `timeAt(x)`, falling as x rises, equals `target` (bisection on
/// log x). The callers check the bounds first.
template <class F> double solveFalling(double lo, double hi, double target, const F& timeAt) {
    for (int i = 0; i < 100; ++i) {
        const double mid = std::sqrt(lo * hi);
        (timeAt(mid) > target ? lo : hi) = mid;
    }
    return std::sqrt(lo * hi);
}

/// The constant efficiency of tier `k` at which the engine's time for one message equals the
/// measured one (bisection: time falls as efficiency rises). nullopt when the latencies alone
/// exceed it; 1 (reported) when even the full bandwidth is slower than the measurement.
std::optional<double> solveEfficiency(System sys, int k, const NcclTable& t, double bytes,
                                      double timeS, bool* atBound) {
    const GroupLayout g = layoutGroup(sys, t.ranks, 1);
    auto timeAt = [&](double eta) {
        sys.tiers[std::size_t(k)].efficiency = LogCurve::constant(eta);
        return collectiveTime(sys, g, t.op, bytes);
    };
    *atBound = false;
    if (timeAt(1.0) > timeS) {
        *atBound = true;
        return 1.0;
    }
    if (timeAt(1e-4) < timeS) return std::nullopt; // latency-bound beyond any efficiency
    return solveFalling(1e-4, 1.0, timeS, timeAt);
}

json curveJson(const std::vector<std::pair<double, double>>& pts) {
    json a = json::array();
    for (const auto& [x, y] : pts)
        a.push_back({x, std::round(y * 1e4) / 1e4});
    return a;
}

std::string curveText(const json& c) {
    if (c.is_number()) return fmt("%.3g", c.get<double>());
    if (!c.is_array()) return "(preset default)";
    std::string s;
    for (const auto& p : c)
        s += (s.empty() ? "" : ", ") + fmt("%.3g B", p[0].get<double>()) + fmt(" → %.3f", p[1].get<double>());
    return s;
}

/// The preset with its compute efficiencies (GEMM curve, attention) scaled by k, capped at 1.
json scaledCompute(json preset, double k) {
    json& c = preset["calibration"];
    if (c.contains("gemm_efficiency")) {
        json& g = c["gemm_efficiency"];
        if (g.is_number()) {
            g = std::min(1.0, g.get<double>() * k);
        } else {
            for (auto& p : g)
                p[1] = std::min(1.0, p[1].get<double>() * k);
        }
    }
    if (c.contains("attention_efficiency"))
        c["attention_efficiency"] = std::min(1.0, c["attention_efficiency"].get<double>() * k);
    return preset;
}

} // namespace

namespace {
/// nccl-tests' data types and reduction operators (src/common.cu's test_typenames and
/// test_opnames); a row naming another is not nccl-tests output.
void checkTypeAndOp(const std::vector<std::string>& w, const std::string& file, int lineNo,
                    const std::string& line) {
    static const std::set<std::string> types = {
        "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double",
        "bfloat16", "bf16", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2"};
    static const std::set<std::string> ops = {"sum", "prod", "max", "min", "avg",
                                              "mulsum", "none", "N/A"};
    if (!types.count(w[2]) || !ops.count(w[3]))
        throw InputError(file, "line " + std::to_string(lineNo),
                         "unknown data type \"" + w[2] + "\" or reduction \"" + w[3] +
                             "\" (nccl-tests prints float, half, bfloat16, … and sum, max, …, "
                             "none); got \"" + line + "\"");
}

/// Why a perf row cannot be fitted: the benchmark's own check found wrong results (#wrong not
/// 0, in either the out-of-place or the in-place half), or its bus bandwidth is negative or not
/// a number. N/A (checking off) is taken as it is.
std::optional<std::string> rowRefusal(const std::vector<std::string>& w, double busbw) {
    if (!std::isfinite(busbw) || busbw < 0) return "bus bandwidth " + w[7] + " is not a rate; row skipped";
    for (std::size_t at : {std::size_t(8), std::size_t(12)}) {
        if (at >= w.size() || w[at] == "N/A" || w[at] == "0") continue;
        return "nccl-tests marked " + w[at] + " wrong results (#wrong); row skipped";
    }
    return std::nullopt;
}
} // namespace

NcclTable parseNcclTests(const std::string& text, const std::string& file) {
    NcclTable t;
    t.file = file;
    std::istringstream in(text);
    std::string line;
    std::set<std::string> hosts;
    std::optional<Collective> op;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto w = split(line);
        if (w.empty()) continue;
        if (w[0] == "#") {
            if (line.find("Collective test starting") != std::string::npos) op = opFromName(line);
            if (w.size() >= 7 && w[1] == "Rank") {
                ++t.ranks;
                const auto on = std::find(w.begin(), w.end(), "on");
                if (on != w.end() && on + 1 != w.end()) hosts.insert(*(on + 1));
            }
            continue;
        }
        if (w[0][0] == '#') continue;
        double size = 0;
        if (!isNumber(w[0], size)) continue; // not a table row
        // size count type redop root time algbw busbw #wrong [in-place: time algbw busbw #wrong]
        double time = 0, busbw = 0;
        if (w.size() < 8 || !isNumber(w[5], time) || !isNumber(w[7], busbw))
            throw InputError(file, "line " + std::to_string(lineNo),
                             "a perf row needs size, count, type, redop, root, time (us), algbw "
                             "and busbw; got \"" + line + "\"");
        checkTypeAndOp(w, file, lineNo, line);
        if (!(size > 0) || !(time > 0))
            throw InputError(file, "line " + std::to_string(lineNo),
                             "size and time must be positive; got \"" + line + "\"");
        // nccl-tests sizes are whole bytes below a petabyte; times below a day.
        if (size != std::floor(size) || size > 1e15 || time > 8.64e10)
            throw InputError(file, "line " + std::to_string(lineNo),
                             "size must be a whole number of bytes up to 1e15 and time at most a "
                             "day (in µs); got \"" + line + "\"");
        if (auto why = rowRefusal(w, busbw)) {
            t.skipped.push_back(file + ", line " + std::to_string(lineNo) + ": " + *why);
            continue;
        }
        t.rows.push_back({size, time * 1e-6, busbw});
    }
    if (!op) op = opFromName(file);
    if (!op)
        throw InputError(file, "collective",
                         "cannot tell which collective this is: no \"Collective test starting\" "
                         "line; name the file after the test (all_reduce_perf…, all_gather_perf…, "
                         "reduce_scatter_perf…, alltoall_perf…)");
    t.op = *op;
    if (t.ranks < 2)
        throw InputError(file, "ranks",
                         "no \"#  Rank N … on HOST device …\" lines (or only one): the rank count "
                         "and hosts are read from them; keep nccl-tests' header in the file");
    if (t.rows.empty())
        throw InputError(file, "rows", "no perf rows (size count type redop root time …)");
    t.hosts = std::max(1, int(hosts.size()));
    if (t.ranks % t.hosts != 0)
        throw InputError(file, "ranks",
                         std::to_string(t.ranks) + " ranks do not spread evenly over " +
                             std::to_string(t.hosts) + " hosts");
    return t;
}

std::string formatNcclTests(const NcclTable& t) {
    std::string s = "# Collective test starting: " + std::string(perfName(t.op)) + "\n";
    s += "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor)\n#\n"
         "# Using devices\n";
    const int perHost = t.ranks / std::max(1, t.hosts);
    for (int r = 0; r < t.ranks; ++r) {
        char b[160];
        std::snprintf(b, sizeof b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x00] GPU\n",
                      r, 1000 + r, ("node-" + std::to_string(r / perHost)).c_str(), r % perHost);
        s += b;
    }
    s += "#       size         count      type   redop    root     time   algbw   busbw #wrong\n";
    for (const auto& row : t.rows) {
        const double alg = row.bytes / row.timeS / 1e9;
        char b[512]; // sizes ≤ 1e15 and times ≤ a day keep a row well inside this
        const int n = std::snprintf(b, sizeof b,
                                    "%12.0f %13.0f     float     sum      -1 %9.6g %7.2f %7.2f      0\n",
                                    row.bytes, row.bytes / 4, row.timeS * 1e6, alg,
                                    alg * ncclBusFactor(t.op, t.ranks));
        if (n < 0 || n >= int(sizeof b))
            throw InputError(t.file, "rows", "a row too long to print (size or time out of range)");
        s += b;
    }
    return s;
}

namespace {

/// One link tier's efficiency curve fitted to the nccl-tests tables measured on it, point by
/// point (pass 0: scale-up from single-host tables; pass 1: scale-out given scale-up); `sys`
/// takes the fitted curve.
void fitLinkTier(int pass, const CalibrationInputs& in, json& preset, System& sys,
                 CalibrationReport& r) {
    const int k = pass == 0 ? 0 : int(sys.tiers.size()) - 1;
    std::vector<std::pair<double, double>> pts;
    std::vector<std::string> sources;
    for (const NcclTable& t : in.nccl) {
        if ((t.hosts > 1) != (pass == 1)) continue;
        if (pass == 1 && t.hosts < 2) continue;
        // A flat all-to-all across hosts fits its own share of the curve (fitAllToAll).
        if (pass == 1 && t.op == Collective::AllToAll) continue;
        const System ls = layoutFor(sys, t);
        // A ring across hosts (all-gather, reduce-scatter) reads only the tier's large-message
        // efficiency: its protocols' latencies make its size dependence (collectives.cpp,
        // spanningRingTime), so only its largest size can say what the curve should be.
        const bool spanningRing =
            pass == 1 && (t.op == Collective::AllGather || t.op == Collective::ReduceScatter);
        double largest = 0;
        for (const auto& row : t.rows)
            largest = std::max(largest, row.bytes);
        if (spanningRing && t.rows.size() > 1)
            r.notes.push_back(t.file + ": across hosts only its largest size (" +
                              fmt("%.0f B", largest) +
                              ") is fitted; its ring's smaller sizes take NCCL's protocol "
                              "latencies, not the curve (their residuals say how well)");
        int used = 0;
        for (const auto& row : t.rows) {
            if (spanningRing && row.bytes < largest) continue;
            bool bound = false;
            const auto eta = solveEfficiency(ls, k, t, row.bytes, row.timeS, &bound);
            if (!eta) {
                r.notes.push_back(t.file + fmt(": %.0f B skipped, latency-bound (the tier's ", row.bytes) +
                                  "latency alone exceeds the measured time)");
                continue;
            }
            if (bound)
                r.notes.push_back(t.file + fmt(": %.0f B is faster than the tier's ", row.bytes) +
                                  "bandwidth allows; efficiency capped at 1 (check the "
                                  "system's gbps)");
            pts.emplace_back(row.bytes, *eta);
            ++used;
        }
        sources.push_back(t.file + " (" + perfName(t.op) + ", " + std::to_string(t.ranks) +
                          " ranks on " + std::to_string(t.hosts) + " host" +
                          (t.hosts > 1 ? "s" : "") + ", " + std::to_string(used) + " sizes)");
    }
    if (pts.empty()) return;
    // One point per size: the mean over the tables that measured it.
    std::sort(pts.begin(), pts.end());
    std::vector<std::pair<double, double>> merged;
    for (std::size_t i = 0; i < pts.size();) {
        std::size_t j = i;
        double sum = 0;
        while (j < pts.size() && pts[j].first == pts[i].first)
            sum += pts[j++].second;
        merged.emplace_back(pts[i].first, sum / double(j - i));
        i = j;
    }
    const char* key = pass == 0 ? "scale_up" : "scale_out";
    json& link = preset["links"][key];
    const std::string before = curveText(link.value("efficiency", json()));
    link["efficiency"] = curveJson(merged);
    link["notes"] = std::string("Fitted by madmax calibrate, point by point, to ") +
                    std::to_string(sources.size()) + " nccl-tests table(s)";
    std::string by;
    for (const auto& src : sources)
        by += (by.empty() ? "" : "; ") + src;
    r.changes.push_back({std::string("links.") + key + ".efficiency", before,
                         curveText(link["efficiency"]), by});
    sys.gpu = parseGpu(preset, "calibrated", "gpu");
    sys.tiers[std::size_t(k)].efficiency =
        pass == 0 ? sys.gpu.scaleUpLink.efficiency : sys.gpu.scaleOutLink.efficiency;
}

/// The outer tier's all_to_all_efficiency (NetworkTier::allToAllEfficiency), from the
/// alltoall_perf tables across hosts, given the fitted curve: at each table's largest size,
/// where bandwidth rules, the share at which the engine's time equals the measured one
/// (bisection: time falls as the share rises); the mean over the tables.
void fitAllToAll(const CalibrationInputs& in, json& preset, System& sys, CalibrationReport& r) {
    const std::size_t k = sys.tiers.size() - 1;
    double sum = 0;
    int used = 0;
    std::string by;
    for (const NcclTable& t : in.nccl) {
        if (t.hosts < 2 || t.op != Collective::AllToAll || t.rows.empty()) continue;
        const auto row = std::max_element(t.rows.begin(), t.rows.end(), [](const auto& a,
                                                                           const auto& b) {
            return a.bytes < b.bytes;
        });
        System ls = layoutFor(sys, t);
        const GroupLayout g = layoutGroup(ls, t.ranks, 1);
        auto timeAt = [&](double share) {
            ls.tiers[k].allToAllEfficiency = share;
            return collectiveTime(ls, g, t.op, row->bytes);
        };
        double share = 1.0;
        if (timeAt(0.01) < row->timeS) {
            r.notes.push_back(t.file + fmt(": %.0f B is slower than 1%% of the fabric would be; ",
                                           row->bytes) +
                              "all_to_all_efficiency not fitted from it (check the system)");
            continue;
        }
        if (timeAt(1.0) > row->timeS)
            r.notes.push_back(t.file + ": the all-to-all is as fast as the ring's efficiency "
                                       "allows; all_to_all_efficiency stays 1");
        else
            share = solveFalling(0.01, 1.0, row->timeS, timeAt);
        sum += share;
        ++used;
        by += (by.empty() ? "" : "; ") + t.file + " (alltoall_perf, " + std::to_string(t.ranks) +
              " ranks on " + std::to_string(t.hosts) + fmt(" hosts, at %.0f B)", row->bytes);
        if (t.rows.size() > 1)
            r.notes.push_back(t.file + ": across hosts the all-to-all's largest size alone sets "
                                       "all_to_all_efficiency (its residuals say how the others fare)");
    }
    if (used == 0) return;
    const double share = sum / used;
    json& link = preset["links"]["scale_out"];
    r.changes.push_back({"links.scale_out.all_to_all_efficiency",
                         fmt("%.3g", link.value("all_to_all_efficiency", 1.0)),
                         fmt("%.3g", share), by});
    link["all_to_all_efficiency"] = share;
    sys.gpu = parseGpu(preset, "calibrated", "gpu");
    sys.tiers[k].allToAllEfficiency = share;
}

/// Residuals of the nccl tables: busbw measured, before (the base preset) and after (the fit).
void ncclResiduals(const System& system, const Preset& base, const System& sys,
                   const CalibrationInputs& in, CalibrationReport& r) {
    System before = system;
    before.gpu = parseGpu(base.json, "base", "gpu");
    for (const NcclTable& t : in.nccl) {
        const System b = layoutFor(before, t), a = layoutFor(sys, t);
        const GroupLayout gb = layoutGroup(b, t.ranks, 1), ga = layoutGroup(a, t.ranks, 1);
        for (const auto& row : t.rows) {
            auto busbw = [&](const System& s, const GroupLayout& g) {
                return row.bytes / collectiveTime(s, g, t.op, row.bytes) * ncclBusFactor(t.op, t.ranks) / 1e9;
            };
            r.residuals.push_back({t.file + fmt(" %.0f B", row.bytes),
                                   row.bytes / row.timeS * ncclBusFactor(t.op, t.ranks) / 1e9,
                                   busbw(b, gb), busbw(a, ga), "GB/s busbw"});
        }
    }
}

/// Compute: one scale on the GEMM and attention efficiencies, fitted to the step-time cases
/// that use this GPU's calibration (golden-section search on log k over [ln 0.25, ln 2]).
void fitComputeScale(const std::string& gpuPresetId, const Preset& base,
                     const CalibrationInputs& in, const PresetLibrary& lib, json& preset,
                     CalibrationReport& r) {
    auto run = [&](const json& candidate) {
        PresetLibrary l = lib;
        l.add(PresetKind::Gpu, gpuPresetId, "calibrating", candidate.dump());
        return runValidation(in.steps, l, in.stepsFile);
    };
    auto fitted = [&](const ValidationReport& rep) {
        std::vector<const CaseOutcome*> out;
        for (const auto& o : rep.cases) {
            if (!o.predicted || o.kind != "training") continue;
            const bool ours = std::any_of(o.notes.begin(), o.notes.end(), [&](const auto& n) {
                return n.rfind("calibration " + gpuPresetId, 0) == 0;
            });
            if (ours) out.push_back(&o);
        }
        return out;
    };
    auto loss = [&](double logK) {
        const ValidationReport rep = run(scaledCompute(preset, std::exp(logK)));
        double s = 0;
        for (const CaseOutcome* o : fitted(rep)) {
            const double e = std::log(*o->predicted / o->measured);
            s += e * e;
        }
        return s;
    };
    const ValidationReport beforeRep = run(base.json);
    const auto used = fitted(beforeRep);
    if (used.empty()) {
        r.notes.push_back(in.stepsFile + ": no training case uses the " + gpuPresetId +
                          " calibration (its GPU names another SKU), nothing fitted");
        return;
    }
    double a = std::log(0.25), b = std::log(2.0);
    const double g = (std::sqrt(5.0) - 1) / 2;
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = loss(c), fd = loss(d);
    for (int i = 0; i < 40; ++i) {
        if (fc < fd) {
            b = d, d = c, fd = fc, c = b - g * (b - a), fc = loss(c);
        } else {
            a = c, c = d, fc = fd, d = a + g * (b - a), fd = loss(d);
        }
    }
    const double k = std::exp((a + b) / 2);
    preset = scaledCompute(preset, k);
    std::string ids;
    for (const CaseOutcome* o : used)
        ids += (ids.empty() ? "" : ", ") + o->id;
    r.changes.push_back({"compute efficiency scale (GEMM curve and attention)", "1",
                         fmt("%.4f", k),
                         in.stepsFile + ": " + std::to_string(used.size()) +
                             " step-time case(s): " + ids});
    const ValidationReport afterRep = run(preset);
    for (const CaseOutcome* o : used) {
        const auto it = std::find_if(afterRep.cases.begin(), afterRep.cases.end(),
                                     [&](const CaseOutcome& x) { return x.id == o->id; });
        r.residuals.push_back({o->id, o->measured, *o->predicted,
                               it != afterRep.cases.end() && it->predicted ? *it->predicted : 0.0,
                               o->metric});
    }
}

} // namespace

CalibrationReport calibrate(const std::string& gpuPresetId, const System& system,
                            const CalibrationInputs& in, const std::string& newId,
                            const PresetLibrary& lib) {
    const Preset* base = lib.find(PresetKind::Gpu, gpuPresetId);
    if (!base)
        throw InputError("--gpu", gpuPresetId, "no GPU preset with this id (madmax presets list)");
    if (newId.empty() || lib.find(PresetKind::Gpu, newId))
        throw InputError("--id", newId,
                         "the calibrated preset needs an id of its own, not a shipped preset's: "
                         "shipped presets are never overwritten");
    if (in.nccl.empty() && in.steps.is_null() && in.kineto.empty())
        throw InputError("calibrate", "inputs",
                         "give at least one nccl-tests file, profiler trace or step-time file");
    CalibrationReport r;
    json preset = base->json;
    System sys = system;
    sys.gpu = parseGpu(preset, "presets/gpus/" + gpuPresetId + ".json", "gpu");
    for (const NcclTable& t : in.nccl) // rows the benchmark marked wrong, said
        r.notes.insert(r.notes.end(), t.skipped.begin(), t.skipped.end());
    // 1. Links: scale-up from single-host tables first, then scale-out given scale-up.
    fitLinkTier(0, in, preset, sys, r);
    if (sys.tiers.size() > 1) {
        fitLinkTier(1, in, preset, sys, r);
        fitAllToAll(in, preset, sys, r);
    }
    ncclResiduals(system, *base, sys, in, r);
    // 2. The 16-bit GEMM efficiency curve from profiled kernels, point by point.
    if (!in.kineto.empty()) calibration_detail::fitGemmCurve(in.kineto, preset, r);
    // 3. Compute: one scale on the GEMM and attention efficiencies, fitted to step times.
    if (!in.steps.is_null()) fitComputeScale(gpuPresetId, *base, in, lib, preset, r);
    preset["id"] = newId;
    preset["name"] = base->json.value("name", gpuPresetId) + " (calibrated)";
    preset.erase("skus");
    std::string why;
    for (const auto& c : r.changes)
        why += " " + c.parameter + ": " + c.before + " → " + c.after + " (from " + c.movedBy + ").";
    preset["calibration"]["notes"] =
        "madmax calibrate from " + gpuPresetId + "." + why;
    r.preset = preset;
    // The written preset must load.
    parseGpu(r.preset, newId, "gpu");
    return r;
}

std::string formatCalibration(const CalibrationReport& r) {
    std::string o = "Calibrated GPU preset " + r.preset.value("id", std::string("?")) + "\n\n";
    o += "What moved\n";
    if (r.changes.empty()) o += "  nothing (no usable measurement)\n";
    for (const auto& c : r.changes) {
        o += "  " + c.parameter + "\n    before: " + c.before + "\n    after:  " + c.after +
             "\n    moved by: " + c.movedBy + "\n";
    }
    o += "\nResiduals (measured, predicted before → after)\n";
    for (const auto& x : r.residuals) {
        char b[320];
        std::snprintf(b, sizeof b, "  %-48s %10.4g  %10.4g → %-10.4g %+6.1f%% → %+6.1f%%  %s\n",
                      x.measurement.c_str(), x.measured, x.before, x.after,
                      100 * (x.before - x.measured) / x.measured,
                      100 * (x.after - x.measured) / x.measured, x.unit.c_str());
        o += b;
    }
    for (const auto& n : r.notes)
        o += "note: " + n + "\n";
    return o;
}

} // namespace madmax
