// PyTorch profiler (Kineto) traces for `madmax calibrate`: the GEMMs a training step ran, with
// their shapes (recorded with `record_shapes=True`) and the GPU time of the kernels each
// launched, matched through the "External id" Kineto writes on both.
#include "madmax/calibrate.hpp"

#include "madmax/error.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace madmax {

namespace {

using nlohmann::json;

/// A dims list ([[M, K], [K, N]] …) as whole numbers up to 2^31 (no GEMM's dimension is
/// larger; their products stay finite); false when it is not one.
bool dims(const json& v, std::vector<std::vector<double>>& out) {
    if (!v.is_array()) return false;
    for (const auto& d : v) {
        if (!d.is_array()) return false;
        std::vector<double> one;
        for (const auto& x : d) {
            if (!x.is_number_integer() || x.get<double>() < 0 || x.get<double>() > 2147483648.0)
                return false;
            one.push_back(x.get<double>());
        }
        out.push_back(one);
    }
    return true;
}

std::optional<Precision> dtypeOf(const json& args) {
    if (!args.contains("Input type") || !args["Input type"].is_array()) return std::nullopt;
    for (const auto& t : args["Input type"]) {
        if (!t.is_string()) continue;
        const std::string s = t.get<std::string>();
        if (s.find("BFloat16") != std::string::npos) return Precision::BF16;
        if (s.find("Half") != std::string::npos) return Precision::FP16;
        if (s == "float" || s.find("Float") != std::string::npos) return Precision::FP32;
    }
    return std::nullopt;
}

} // namespace

namespace {

/// A GEMM op of the trace with its shapes, and its External id.
struct TraceOp {
    std::string name;
    long long id;
    json args;
};

/// The trace's kernels' GPU time per External id (the kernels an op launched), and its shaped
/// GEMM ops; refuses a trace with no GEMM op or none with shapes.
void collectEvents(const json& events, const std::string& file,
                   std::map<long long, double>& kernelS, std::vector<TraceOp>& ops) {
    int gemmOps = 0, shaped = 0;
    static const std::vector<std::string> kGemmOps = {"aten::mm", "aten::addmm", "aten::bmm",
                                                      "aten::baddbmm"};
    for (std::size_t i = 0; i < events.size(); ++i) {
        const json& e = events[i];
        if (!e.is_object() || !e.contains("cat") || !e["cat"].is_string()) continue;
        const std::string cat = e["cat"].get<std::string>();
        const json args = e.contains("args") && e["args"].is_object() ? e["args"] : json::object();
        const bool hasId = args.contains("External id") && args["External id"].is_number_integer();
        if (cat == "kernel" || cat == "Kernel") {
            if (!e.contains("dur") || !e["dur"].is_number())
                throw InputError(file, "traceEvents[" + std::to_string(i) + "].dur",
                                 "a kernel event needs a numeric duration (µs)");
            const double dur = e["dur"].get<double>();
            if (!(dur >= 0) || !std::isfinite(dur) || dur > 3.6e9)
                throw InputError(file, "traceEvents[" + std::to_string(i) + "].dur",
                                 "a kernel's duration must be between 0 and an hour, in µs");
            if (hasId) kernelS[args["External id"].get<long long>()] += dur * 1e-6;
        } else if (cat == "cpu_op" && e.contains("name") && e["name"].is_string()) {
            const std::string name = e["name"].get<std::string>();
            if (std::find(kGemmOps.begin(), kGemmOps.end(), name) == kGemmOps.end()) continue;
            ++gemmOps;
            if (!args.contains("Input Dims")) continue;
            ++shaped;
            if (hasId) ops.push_back({name, args["External id"].get<long long>(), args});
        }
    }
    if (gemmOps == 0)
        throw InputError(file, "traceEvents",
                         "no aten::mm, addmm, bmm or baddbmm op in the trace: profile a training "
                         "step with torch.profiler (activities CPU and CUDA)");
    if (shaped == 0)
        throw InputError(file, "traceEvents",
                         "the GEMM ops carry no \"Input Dims\": profile with record_shapes=True");
}

/// An op's GEMM shape and dtype (mm: [M,K],[K,N]; addmm: [bias],[M,K],[K,N]; bmm:
/// [B,M,K],[B,K,N]; baddbmm: [bias],…), or nothing when it is not a plain one.
std::optional<KinetoGemm> gemmOf(const TraceOp& op) {
    std::vector<std::vector<double>> d;
    if (!dims(op.args["Input Dims"], d)) return std::nullopt;
    const bool bias = op.name == "aten::addmm" || op.name == "aten::baddbmm";
    const bool batched = op.name == "aten::bmm" || op.name == "aten::baddbmm";
    const std::size_t a = bias ? 1 : 0;
    if (d.size() < a + 2 || d[a].size() != (batched ? 3u : 2u) ||
        d[a + 1].size() != (batched ? 3u : 2u))
        return std::nullopt;
    KinetoGemm g;
    g.op = op.name;
    g.batch = batched ? d[a][0] : 1.0;
    g.m = d[a][batched ? 1 : 0];
    g.k = d[a][batched ? 2 : 1];
    g.n = d[a + 1][batched ? 2 : 1];
    const auto p = dtypeOf(op.args);
    if (!p) return std::nullopt;
    g.precision = *p;
    return g;
}

/// What was skipped, said; and a trace with no usable GEMM refused with every reason.
void noteSkipped(const std::string& file, int unmatched, int odd, int other, KinetoTrace& out) {
    if (unmatched > 0)
        out.notes.push_back(file + ": " + std::to_string(unmatched) +
                            " GEMM op(s) with no kernel of the same External id (not run on the "
                            "GPU, or the trace lacks CUDA activity): skipped");
    if (odd > 0)
        out.notes.push_back(file + ": " + std::to_string(odd) +
                            " GEMM op(s) with input dims or dtypes not of a plain 2-D or batched "
                            "16- or 32-bit GEMM (dims whole numbers up to 2^31): skipped");
    if (other > 0)
        out.notes.push_back(file + ": " + std::to_string(other) + " empty GEMM(s): skipped");
    if (!out.gemms.empty()) return;
    std::string why;
    for (const auto& n : out.notes)
        why += "; " + n.substr(file.size() + 2);
    throw InputError(file, "traceEvents",
                     "no usable GEMM: none both matched to its kernels by \"External id\" "
                     "and of a plain shape" + why +
                         " (profile with activities CPU and CUDA and record_shapes=True)");
}

} // namespace

KinetoTrace parseKinetoTrace(const json& trace, const std::string& file) {
    KinetoTrace out;
    out.file = file;
    const json* events = nullptr;
    if (trace.is_object() && trace.contains("traceEvents")) events = &trace["traceEvents"];
    else if (trace.is_array()) events = &trace;
    if (!events || !events->is_array())
        throw InputError(file, "traceEvents",
                         "not a PyTorch profiler trace: expected a JSON object with a "
                         "\"traceEvents\" array (torch.profiler … export_chrome_trace)");
    std::map<long long, double> kernelS;
    std::vector<TraceOp> ops;
    collectEvents(*events, file, kernelS, ops);
    // One entry per (op, shape, dtype): the mean GPU time of its instances.
    std::map<std::tuple<std::string, double, double, double, double, int>, KinetoGemm> byShape;
    int unmatched = 0, odd = 0, other = 0;
    for (const TraceOp& op : ops) {
        const std::optional<KinetoGemm> shape = gemmOf(op);
        if (!shape) {
            ++odd;
            continue;
        }
        const KinetoGemm& g = *shape;
        const auto k = kernelS.find(op.id);
        if (k == kernelS.end() || !(k->second > 0)) {
            ++unmatched;
            continue;
        }
        if (g.m * g.n * g.k * g.batch <= 0) {
            ++other;
            continue;
        }
        KinetoGemm& acc = byShape[{g.op, g.batch, g.m, g.n, g.k, int(g.precision)}];
        if (acc.count == 0) acc = g;
        acc.kernelS += k->second; // summed, divided below
        acc.count += 1;
    }
    for (auto& [key, g] : byShape) {
        g.kernelS /= g.count;
        out.gemms.push_back(g);
    }
    noteSkipped(file, unmatched, odd, other, out);
    return out;
}

std::string formatKinetoTrace(const KinetoTrace& t) {
    // A minimal trace of the same GEMMs (tests build synthetic ones): one op and one kernel per
    // instance class, linked by External id.
    json events = json::array();
    long long id = 1;
    for (const KinetoGemm& g : t.gemms) {
        const bool batched = g.batch > 1 || g.op == "aten::bmm";
        const auto b = (long long)g.batch, m = (long long)g.m, n = (long long)g.n,
                   k = (long long)g.k; // Kineto writes dims as integers
        json dims = batched ? json::array({json::array({b, m, k}), json::array({b, k, n})})
                            : json::array({json::array({m, k}), json::array({k, n})});
        const char* type = g.precision == Precision::FP16   ? "c10::Half"
                           : g.precision == Precision::FP32 ? "float"
                                                            : "c10::BFloat16";
        for (int i = 0; i < std::max(1, g.count); ++i, ++id) {
            events.push_back({{"ph", "X"},
                              {"cat", "cpu_op"},
                              {"name", batched ? "aten::bmm" : "aten::mm"},
                              {"ts", double(id) * 1000.0},
                              {"dur", 10.0},
                              {"args",
                               {{"External id", id},
                                {"Input Dims", dims},
                                {"Input type", json::array({type, type})}}}});
            events.push_back({{"ph", "X"},
                              {"cat", "kernel"},
                              {"name", "sm90_xmma_gemm_bf16bf16_bf16f32"},
                              {"ts", double(id) * 1000.0 + 20.0},
                              {"dur", g.kernelS * 1e6},
                              {"args", {{"External id", id}, {"correlation", id}}}});
        }
    }
    return json{{"schemaVersion", 1}, {"traceEvents", events}}.dump();
}

} // namespace madmax
