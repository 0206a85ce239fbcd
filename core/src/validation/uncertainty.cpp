#include "madmax/uncertainty.hpp"

#include "files/embedded_presets.hpp"
#include "madmax/file_io.hpp"
#include "madmax/presets.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace madmax {

namespace {

using nlohmann::json;

std::string pct(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", v);
    return b;
}

/// The family of a case, from the calibration note validate made for it ("calibration
/// h100-sxm5-80gb", "calibration generic (…)").
std::string caseFamily(const CaseOutcome& o) {
    for (const auto& n : o.notes)
        if (n.rfind("calibration ", 0) == 0) {
            const std::string id = n.substr(12, n.find(' ', 12) - 12);
            return id == "generic" ? "" : gpuFamilyOf(id);
        }
    return "";
}

std::string caseKind(const json& c) {
    const std::string kind = c.value("kind", "");
    if ((kind != "training" && kind != "inference") || !c.contains("model") ||
        !c["model"].is_object())
        return "";
    const std::string arch = c["model"].value("arch", "dense");
    if (kind == "inference") return arch == "moe" ? "MoE serving" : "dense serving";
    if (c["model"].contains("vit") && c["model"]["vit"].is_object()) return "ViT training";
    return arch == "moe" ? "MoE training" : arch == "dlrm" ? "DLRM training" : "dense training";
}

/// The kind whose runs stand in for one no published run has (a ViT trains as a dense
/// transformer; MoE serving is decoding as dense serving is, plus the all-to-all), or "".
std::string proxyKind(const std::string& kind) {
    if (kind == "ViT training") return "dense training";
    if (kind == "MoE serving") return "dense serving";
    return "";
}

} // namespace

std::string UncertaintyBand::text() const {
    if (!known) return "no published run to compare with";
    return "±" + pct(medianAbsPct) + " typical, " + pct(maxAbsPct) + " at worst, over " +
           std::to_string(runs) + " published " + basis + (runs == 1 ? " run" : " runs") +
           (standIn.empty() ? "" : ", as no " + standIn + " run is published") +
           " (validate lists them; fitted rows included)";
}

std::string gpuFamilyOf(const std::string& idOrName) {
    std::string f;
    for (char ch : idOrName) {
        if (ch == '-' || ch == ' ' || ch == '_') break;
        f += char(std::toupper(static_cast<unsigned char>(ch)));
    }
    return f;
}

std::string workloadKindOf(const Scenario& s) {
    if (s.model.isDlrm()) return "DLRM training";
    if (s.workload.kind == WorkloadKind::Inference)
        return s.model.isMoe() ? "MoE serving" : "dense serving";
    if (s.model.vit) return "ViT training";
    return s.model.isMoe() ? "MoE training" : "dense training";
}

/// Every built-in validation file's cases (presets/validation/*.json: the public set and the
/// held-out Megatron-Bridge 25.11 rows), one dataset.
const json& builtinValidationDataset() {
    static const json doc = [] {
        json all = {{"schema", "madmax-validation/1"}, {"cases", json::array()}};
        const std::string prefix = "validation/";
        for (int i = 0; i < detail::kEmbeddedPresetCount; ++i) {
            const std::string path = detail::kEmbeddedPresets[i].path;
            if (path.rfind(prefix, 0) != 0) continue;
            const json one = parseJsonText(detail::kEmbeddedPresets[i].text, "presets/" + path);
            for (const auto& c : one.value("cases", json::array()))
                all["cases"].push_back(c);
        }
        return all;
    }();
    return doc;
}

const ValidationReport& builtinValidationReport() {
    static const ValidationReport r = runValidation(
        builtinValidationDataset(), PresetLibrary::builtin(), "presets/validation/*.json");
    return r;
}

UncertaintyBand uncertaintyFor(const Scenario& s, const ValidationReport& report,
                               const json& dataset) {
    const std::string family = gpuFamilyOf(s.system.gpu.id.empty() ? s.system.gpu.name
                                                                    : s.system.gpu.id);
    const std::string own = workloadKindOf(s);
    const json& cases = dataset.value("cases", json::array());
    // The |errors| of the predicted runs of one kind: all of them, and those on this family.
    auto collect = [&](const std::string& kind, std::vector<double>& same,
                       std::vector<double>& anyGpu) {
        for (const CaseOutcome& o : report.cases) {
            if (!o.predicted) continue;
            const auto it = std::find_if(cases.begin(), cases.end(), [&](const json& c) {
                return c.is_object() && c.value("id", "") == o.id;
            });
            if (it == cases.end() || caseKind(*it) != kind) continue;
            const double e = std::fabs(o.errorPct());
            anyGpu.push_back(e);
            if (!family.empty() && caseFamily(o) == family) same.push_back(e);
        }
    };
    std::vector<double> same, anyGpu;
    collect(own, same, anyGpu);
    // No run of this kind at all: another kind's runs stand in, and the basis says so.
    std::string kind = own;
    if (anyGpu.empty() && !proxyKind(own).empty()) {
        kind = proxyKind(own);
        collect(kind, same, anyGpu);
    }
    UncertaintyBand b;
    const bool useSame = !same.empty();
    const std::vector<double>& v = useSame ? same : anyGpu;
    if (v.empty()) return b;
    const ErrorStats st = errorStats(v);
    b.known = true;
    b.medianAbsPct = st.medianAbsPct;
    b.p90AbsPct = st.p90AbsPct;
    b.maxAbsPct = st.maxAbsPct;
    b.runs = st.count;
    b.basis = useSame ? family + " " + kind : kind + " (any GPU)";
    if (kind != own) b.standIn = own;
    return b;
}

UncertaintyBand uncertaintyFor(const Scenario& s) {
    return uncertaintyFor(s, builtinValidationReport(), builtinValidationDataset());
}

} // namespace madmax
