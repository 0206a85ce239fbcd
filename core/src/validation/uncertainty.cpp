#include "madmax/uncertainty.hpp"

#include "io/embedded_presets.hpp"
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
    if (kind == "inference") return "serving";
    if (kind != "training" || !c.contains("model") || !c["model"].is_object()) return "";
    const std::string arch = c["model"].value("arch", "dense");
    return arch == "moe" ? "MoE training" : arch == "dlrm" ? "DLRM training" : "dense training";
}

} // namespace

std::string UncertaintyBand::text() const {
    if (!known) return "no published run to compare with";
    return "±" + pct(medianAbsPct) + " typical, " + pct(maxAbsPct) + " at worst, over " +
           std::to_string(runs) + " published " + basis + (runs == 1 ? " run" : " runs") +
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
    if (s.workload.kind == WorkloadKind::Inference) return "serving";
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
    const std::string kind = workloadKindOf(s);
    std::vector<double> same, anyGpu;
    const json& cases = dataset.value("cases", json::array());
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
    return b;
}

UncertaintyBand uncertaintyFor(const Scenario& s) {
    return uncertaintyFor(s, builtinValidationReport(), builtinValidationDataset());
}

} // namespace madmax
