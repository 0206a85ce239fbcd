// madmax: the command line of MAD-Max Explorer. Exit codes: 0 success, 2 bad input, 1 internal.
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/validation.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

using namespace madmax;

int runEvaluate(const std::string& scenario, const std::vector<std::string>& sets, bool json,
                bool timeline) {
    std::vector<Override> overrides;
    for (const auto& s : sets)
        overrides.push_back(parseOverride(s));
    const Scenario sc = loadScenario(scenario, PresetLibrary::builtin(), overrides);
    EvaluateOptions opt;
    opt.timeline = timeline;
    const Result r = evaluate(sc, opt);
    if (json)
        std::cout << toJson(r).dump(2) << "\n";
    else
        std::cout << formatReport(sc, r);
    return 0;
}

int runValidate(const std::string& dataset, bool json) {
    const auto doc = readJsonFile(dataset);
    const ValidationReport rep = runValidation(doc, PresetLibrary::builtin(), dataset);
    if (json)
        std::cout << toJson(rep).dump(2) << "\n";
    else
        std::cout << formatValidation(rep);
    return 0;
}

int runPresetsList() {
    const auto& lib = PresetLibrary::builtin();
    for (PresetKind k :
         {PresetKind::Model, PresetKind::Gpu, PresetKind::System, PresetKind::Scenario}) {
        std::cout << toString(k) << "s:\n";
        for (const Preset* p : lib.list(k)) {
            std::string name = p->json.value("name", "");
            std::cout << "  " << p->id << (name.empty() ? "" : "  —  " + name) << "\n";
        }
    }
    return 0;
}

int runPresetsShow(const std::string& id) {
    const auto& lib = PresetLibrary::builtin();
    for (PresetKind k :
         {PresetKind::Model, PresetKind::Gpu, PresetKind::System, PresetKind::Scenario})
        if (const Preset* p = lib.find(k, id)) {
            std::cout << p->json.dump(2) << "\n";
            return 0;
        }
    std::vector<std::string> all;
    for (PresetKind k :
         {PresetKind::Model, PresetKind::Gpu, PresetKind::System, PresetKind::Scenario})
        for (auto& i : lib.ids(k))
            all.push_back(i);
    auto near = didYouMean(id, all);
    throw InputError("presets", id,
                     std::string("no preset by that id") +
                         (near ? " (did you mean \"" + *near + "\"?)" : "") +
                         "; see `madmax presets list`");
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"madmax — predict how large models train on GPU clusters (MAD-Max, Hsia et al., "
                 "ISCA 2024)"};
    app.set_version_flag("--version", std::string("madmax ") + MADMAX_VERSION);
    app.require_subcommand(1);

    std::string scenario = PresetLibrary::kDefaultScenario;
    std::vector<std::string> sets;
    bool json = false, timeline = false;
    auto* eval = app.add_subcommand("evaluate",
                                    "Predict step time, throughput, MFU, communication and memory");
    eval->add_option("scenario", scenario,
                     "Scenario file, or a scenario preset id (default: the built-in default)");
    eval->add_option("--set", sets,
                     "Override a field: path=value (e.g. strategy.tp=4, model=llama3-70b)")
        ->type_name("PATH=VALUE");
    eval->add_flag("--json", json, "Print the result as JSON");
    eval->add_flag("--timeline", timeline,
                   "Include the critical stage's op timeline (with --json)");

    std::string dataset;
    bool vjson = false;
    auto* val = app.add_subcommand(
        "validate", "Predict every case of a madmax-validation/1 file and report the errors");
    val->add_option("dataset", dataset, "Validation file (schema madmax-validation/1)")->required();
    val->add_flag("--json", vjson, "Print the report as JSON");

    auto* presets = app.add_subcommand("presets", "List or show the built-in presets");
    presets->require_subcommand(1);
    presets->add_subcommand("list", "List every preset id");
    std::string showId;
    auto* show = presets->add_subcommand("show", "Print one preset's JSON");
    show->add_option("id", showId, "Preset id")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }

    try {
        if (*eval) return runEvaluate(scenario, sets, json, timeline);
        if (*val) return runValidate(dataset, vjson);
        if (*presets) {
            if (*show) return runPresetsShow(showId);
            return runPresetsList();
        }
    } catch (const InputError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    return 1;
}
