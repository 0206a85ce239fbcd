// madmax: the command line of MAD-Max Explorer. Exit codes: 0 success, 2 bad input, 1 internal.
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/validation.hpp"

#include "search_commands.hpp"

#include <CLI/CLI.hpp>

#ifdef MADMAX_WITH_FIGURE
#include "figure_command.hpp"
#endif

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

#ifdef MADMAX_WITH_FIGURE
    cli::FigureRequest fig;
    fig.scenario = PresetLibrary::kDefaultScenario;
    std::vector<std::string> figSets;
    bool listCharts = false;
    auto* figure = app.add_subcommand(
        "figure",
        "Render one of the explorer's charts to SVG, PDF, PNG, CSV or JSON (no display needed)");
    figure->add_option("scenario", fig.scenario,
                       "Scenario file or preset id (default: the built-in default)");
    figure->add_option("--set", figSets, "Override a field: path=value")->type_name("PATH=VALUE");
    figure->add_option("--chart", fig.chart, "Chart name (see --list)");
    figure->add_option("--format", fig.format, "svg, pdf, png, csv or json")
        ->check(CLI::IsMember({"svg", "pdf", "png", "csv", "json"}));
    figure
        ->add_option("--width-in", fig.widthIn,
                     "Width in inches (3.5 single column, 7 double column)")
        ->check(CLI::Range(0.5, 100.0));
    figure->add_option("--height-in", fig.heightIn, "Height in inches")
        ->check(CLI::Range(0.5, 100.0));
    figure->add_option("--scale", fig.scale, "PNG pixel scale: 1, 2 or 3 × 96 dpi")
        ->check(CLI::Range(1, 8));
    figure->add_flag("--hatching", fig.hatching, "Greyscale-safe fill patterns");
    figure->add_option("-o,--output", fig.output, "Output file");
    figure->add_flag("--list", listCharts, "Print the chart names and exit");
#endif

    const auto runSearchCommands = cli::addSearchCommands(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }

    try {
        if (*eval) return runEvaluate(scenario, sets, json, timeline);
        if (*val) return runValidate(dataset, vjson);
        if (const int code = runSearchCommands(); code >= 0) return code;
#ifdef MADMAX_WITH_FIGURE
        if (*figure) {
            if (listCharts) {
                for (const auto& n : cli::figureChartNames())
                    std::cout << n << "\n";
                return 0;
            }
            if (fig.chart.empty())
                throw InputError("--chart", "",
                                 "required: one of the names `madmax figure --list` prints");
            if (fig.output.empty()) throw InputError("-o", "", "required: the file to write");
            for (const auto& s : figSets)
                fig.overrides.push_back(parseOverride(s));
            return cli::runFigure(fig, argv[0]);
        }
#endif
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
