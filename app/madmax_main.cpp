// madmax: the command line of MAD-Max Explorer. Exit codes: 0 success, 2 bad input, 1 internal.
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/report.hpp"
#include "madmax/file_io.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/seed.hpp"
#include "madmax/seed_cloud_table.hpp"
#include "madmax/validation.hpp"
#include "madmax/uncertainty.hpp"
#include "madmax/calibrate.hpp"

#include "cli_checks.hpp"
#include "search_commands.hpp"

#include <CLI/CLI.hpp>

#ifdef MADMAX_WITH_FIGURE
#include "figure_command.hpp"
#endif

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace {

using namespace madmax;

/// A figure command that already reported its failure (with this exit code).
struct FigureFailed {
    int code;
};

/// `madmax evaluate`'s options.
struct EvaluateCommandOptions {
    std::string scenario = PresetLibrary::kDefaultScenario;
    std::vector<std::string> sets;
    bool json = false, timeline = false;
    std::string modelCfg, systemCfg, taskCfg, engine; // engine: native unless seed files
    std::string writeScenario;
};

/// The seed's three files through the reference engine, the native one on their conversion, or
/// both side by side.
void evaluateSeedFiles(const EvaluateCommandOptions& o) {
    for (auto [flag, value] : {std::pair{"--model-cfg", &o.modelCfg},
                               {"--system-cfg", &o.systemCfg},
                               {"--task-cfg", &o.taskCfg}})
        if (value->empty())
            throw InputError("command line", flag,
                             "the seed's files come as three: --model-cfg, --system-cfg "
                             "and --task-cfg");
    if (!o.sets.empty())
        throw InputError("command line", "--set", "does not apply to the seed's files; edit them");
    const seed::Model m = seed::parseModel(seed::loadFile("models", o.modelCfg), o.modelCfg);
    const seed::System sys = seed::parseSystem(seed::loadFile("systems", o.systemCfg), o.systemCfg);
    const seed::Task t = seed::parseTask(seed::loadFile("tasks", o.taskCfg), o.taskCfg);
    const std::string engine = o.engine.empty() ? "reference" : o.engine;
    const bool native = engine != "reference" || !o.writeScenario.empty();
    std::optional<seed::ReferenceResult> ref;
    if (engine != "native") ref = seed::runReference(m, sys, t, o.taskCfg);
    std::optional<Scenario> sc;
    std::vector<std::string> assumptions;
    if (native) {
        const nlohmann::json doc =
            seed::toScenarioJson(m, sys, t, PresetLibrary::builtin(), assumptions, o.modelCfg);
        sc = parseScenario(doc, o.modelCfg + " (converted)");
        if (!o.writeScenario.empty())
            writeFileAtomically(o.writeScenario, toJson(*sc).dump(2) + "\n");
    }
    std::optional<Result> r;
    if (engine != "reference") r = evaluate(*sc);
    if (o.json) {
        nlohmann::json out = nlohmann::json::object();
        if (ref) out["reference"] = seed::toJson(*ref, o.timeline);
        if (r) {
            out["native"] = toJson(*r);
            out["assumptions"] = assumptions;
        }
        std::cout << (engine == "reference" ? out["reference"] : out).dump(2) << "\n";
        return;
    }
    if (ref) std::cout << seed::formatReport(m, sys, t, *ref);
    if (r) {
        std::cout << (ref ? "\n" : "") << "Native engine on the converted scenario\n";
        for (const auto& a : assumptions)
            std::cout << "  assumed: " << a << "\n";
        std::cout << "\n" << formatReport(*sc, *r);
    }
    if (ref && r) std::cout << seed::formatComparison(m, sys, t, *ref, *r);
}

/// A scenario with its overrides, evaluated, with how far to trust it: the residuals of
/// similar published runs.
void evaluateScenarioCommand(const EvaluateCommandOptions& o) {
    std::vector<Override> overrides;
    for (const auto& s : o.sets)
        overrides.push_back(parseOverride(s));
    const Scenario sc = loadScenario(o.scenario, PresetLibrary::builtin(), overrides);
    EvaluateOptions opt;
    opt.timeline = o.timeline;
    const Result r = evaluate(sc, opt);
    const UncertaintyBand band = uncertaintyFor(sc);
    if (o.json) {
        nlohmann::json j = toJson(r);
        j["uncertainty"] = {{"known", band.known},
                            {"median_abs_error_pct", band.medianAbsPct},
                            {"p90_abs_error_pct", band.p90AbsPct},
                            {"max_abs_error_pct", band.maxAbsPct},
                            {"runs", band.runs},
                            {"basis", band.basis},
                            {"stands_in_for", band.standIn}};
        std::cout << j.dump(2) << "\n";
        return;
    }
    std::string text = formatReport(sc, r);
    // At the end of the header block: how far to trust what follows.
    const auto eol = text.find("\n\n");
    if (eol != std::string::npos) text.insert(eol, "\nAccuracy   " + band.text());
    std::cout << text;
}

void addEvaluateCommand(CLI::App& app) {
    auto o = std::make_shared<EvaluateCommandOptions>();
    auto* eval = app.add_subcommand("evaluate",
                                    "Predict step time, throughput, MFU, communication and memory");
    eval->add_option("scenario", o->scenario,
                     "Scenario file, or a scenario preset id (default: the built-in default)");
    eval->add_option("--set", o->sets,
                     "Override a field: path=value (e.g. strategy.tp=4, model=llama3-70b)")
        ->type_name("PATH=VALUE");
    eval->add_flag("--json", o->json, "Print the result as JSON");
    eval->add_flag("--timeline", o->timeline,
                   "Include the critical stage's op timeline (with --json)");
    eval->add_option("--model-cfg", o->modelCfg,
                     "The seed's model file (MAD-Max reference code format) or a shipped one's "
                     "id (see presets list); with --system-cfg and --task-cfg")
        ->type_name("FILE");
    eval->add_option("--system-cfg", o->systemCfg, "The seed's system file")->type_name("FILE");
    eval->add_option("--task-cfg", o->taskCfg, "The seed's task file")->type_name("FILE");
    eval->add_option("--engine", o->engine,
                     "native (our model; the default for scenarios) or reference (the seed "
                     "reference code's computation, reproduced; the default for its files)")
        ->check(CLI::IsMember({"native", "reference", "both"}));
    eval->add_option("--write-scenario", o->writeScenario,
                     "With the seed's LLM files: also write the native scenario they convert to")
        ->type_name("FILE");
    eval->callback([o] {
        const bool seedFiles = !o->modelCfg.empty() || !o->systemCfg.empty() || !o->taskCfg.empty();
        if (seedFiles || o->engine == "reference")
            evaluateSeedFiles(*o);
        else
            evaluateScenarioCommand(*o);
    });
}

/// The first system preset built on GPU preset `gpu` (calibrate's default --system).
std::string defaultSystemFor(const std::string& gpu) {
    for (const Preset* p : PresetLibrary::builtin().list(PresetKind::System))
        if (p->json.value("gpu", "") == gpu) return p->id;
    throw InputError("--system", gpu, "no system preset is built on this GPU; name one with --system");
}

void addCalibrateCommand(CLI::App& app) {
    struct Options {
        std::string gpu, system, steps, id, out;
        std::vector<std::string> nccl, kineto;
        bool force = false, json = false;
    };
    auto o = std::make_shared<Options>();
    auto* cal = app.add_subcommand(
        "calibrate",
        "Fit a GPU preset's link efficiencies and compute scale to your measurements and write "
        "a new preset (never over a shipped one)");
    cal->add_option("--gpu", o->gpu, "The GPU preset to start from, e.g. h100-sxm5-80gb")
        ->required();
    cal->add_option("--system", o->system,
                    "The system preset whose tiers (bandwidths, GPUs per node) the nccl-tests ran "
                    "on (default: the first system preset built on --gpu)");
    cal->add_option("--nccl", o->nccl,
                    "nccl-tests output files (all_reduce_perf, all_gather_perf, "
                    "reduce_scatter_perf, alltoall_perf), with their header");
    cal->add_option("--kineto", o->kineto,
                    "PyTorch profiler traces (torch.profiler with record_shapes=True, "
                    "export_chrome_trace): the 16-bit GEMM efficiency curve from kernel times");
    cal->add_option("--steps", o->steps,
                    "Measured training runs in the validation format (madmax-validation/1)");
    // No CLI::ExistingFile: the readers refuse a missing file, a folder, a pipe or a link loop
    // by name and say what to give instead (CLI11's "File does not exist" names no fix).
    cal->add_option("--id", o->id, "Id of the new preset (not a shipped one)")->required();
    cal->add_option("--out", o->out, "Where to write it (default: ID.json here)");
    cal->add_flag("--force", o->force, "Replace an existing regular file at --out");
    cal->add_flag("--json", o->json, "Print the report as JSON");
    cal->callback([o] {
        const auto& lib = PresetLibrary::builtin();
        const std::string sysId = o->system.empty() ? defaultSystemFor(o->gpu) : o->system;
        nlohmann::json sysDoc = {{"system", sysId}};
        resolvePresetRefs(sysDoc, lib, "--system");
        const System system = parseSystem(sysDoc["system"], "presets/systems/" + sysId, "system");
        CalibrationInputs in;
        for (const auto& f : o->nccl)
            in.nccl.push_back(parseNcclTests(readTextFile(f), f));
        for (const auto& f : o->kineto)
            in.kineto.push_back(parseKinetoTrace(readJsonFile(f), f));
        if (!o->steps.empty()) {
            in.steps = readJsonFile(o->steps);
            in.stepsFile = o->steps;
        }
        if (auto why = explainBadFileId(o->id)) throw InputError("command line", "--id", *why); // file_io.hpp
        const CalibrationReport r = calibrate(o->gpu, system, in, o->id);
        const std::string out = o->out.empty() ? o->id + ".json" : o->out;
        std::error_code ec;
        const auto st = std::filesystem::symlink_status(out, ec);
        if (std::filesystem::exists(st)) {
            if (!std::filesystem::is_regular_file(st))
                throw InputError(out, "--out", "exists and is not a regular file; not replaced");
            if (!o->force)
                throw InputError(out, "--out", "exists; pass --force to replace it");
        }
        writeFileAtomically(out, r.preset.dump(2) + "\n");
        if (o->json) {
            nlohmann::json j = {{"preset", out}, {"changes", nlohmann::json::array()},
                                {"residuals", nlohmann::json::array()}, {"notes", r.notes}};
            for (const auto& c : r.changes)
                j["changes"].push_back({{"parameter", c.parameter}, {"before", c.before},
                                        {"after", c.after}, {"moved_by", c.movedBy}});
            for (const auto& x : r.residuals)
                j["residuals"].push_back({{"measurement", x.measurement}, {"unit", x.unit},
                                          {"measured", x.measured}, {"before", x.before},
                                          {"after", x.after}});
            std::cout << j.dump(2) << "\n";
        } else {
            std::cout << formatCalibration(r) << "\nWrote " << out
                      << "; use it with --set system.gpu=" << out << "\n";
        }
    });
}

void addValidateCommand(CLI::App& app) {
    struct Options {
        std::string dataset;
        std::string scenarioDir;
        bool json = false;
    };
    auto o = std::make_shared<Options>();
    auto* val = app.add_subcommand(
        "validate", "Predict every case of a madmax-validation/1 file and report the errors");
    val->add_option("dataset", o->dataset, "Validation file (schema madmax-validation/1)")
        ->required();
    val->add_flag("--json", o->json, "Print the report as JSON");
    val->add_option("--write-scenarios", o->scenarioDir,
                    "Also write each training or inference case's scenario, as predicted, to "
                    "DIR/<case id>.json (open it in the explorer or `madmax evaluate`)")
        ->check(CLI::ExistingDirectory);
    val->callback([o] {
        const auto doc = readJsonFile(o->dataset);
        const ValidationReport rep = runValidation(doc, PresetLibrary::builtin(), o->dataset);
        if (!o->scenarioDir.empty()) {
            const int n = writeCaseScenarios(doc, PresetLibrary::builtin(), o->dataset,
                                             o->scenarioDir);
            std::cerr << "wrote " << n << " scenarios to " << o->scenarioDir << "\n";
        }
        if (o->json)
            std::cout << toJson(rep).dump(2) << "\n";
        else
            std::cout << formatValidation(rep);
    });
}

void addCloudTableCommand(CLI::App& app) {
    struct Options {
        std::string file;
        bool json = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "cloud-table",
        "The MAD-Max artifact's DLRM-A cloud table (QPS, hours, GPU-hours, $ and MWh for 5B and "
        "30B samples per provider and GPU), reproduced with the reference engine");
    cmd->add_option("file", o->file,
                    "A madmax-seed-cloud-table/1 file (default: the shipped "
                    "presets/seed/cloud-dlrm-a.json)");
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->callback([o] {
        const auto rows = o->file.empty()
                              ? seed::reproduceCloudTable()
                              : seed::reproduceCloudTable(readJsonFile(o->file), o->file);
        if (o->json)
            std::cout << seed::toJson(rows).dump(2) << "\n";
        else
            std::cout << seed::formatCloudTable(rows);
    });
}

constexpr PresetKind kPresetKinds[] = {PresetKind::Model, PresetKind::Gpu, PresetKind::System,
                                       PresetKind::Scenario};

void addPresetsCommand(CLI::App& app) {
    auto* presets = app.add_subcommand("presets", "List or show the built-in presets");
    presets->require_subcommand(1);
    presets->add_subcommand("list", "List every preset id")->callback([] {
        const auto& lib = PresetLibrary::builtin();
        for (PresetKind k : kPresetKinds) {
            std::cout << toString(k) << "s:\n";
            for (const Preset* p : lib.list(k)) {
                std::string name = p->json.value("name", "");
                std::cout << "  " << p->id << (name.empty() ? "" : "  —  " + name) << "\n";
            }
        }
        // The seed reference code's shipped files (for evaluate --model-cfg/--system-cfg/--task-cfg).
        for (const char* kind : {"models", "systems", "tasks"}) {
            std::cout << "seed " << kind << ":\n";
            for (const auto& i : seed::builtinIds(kind))
                std::cout << "  " << i << "\n";
        }
    });
    auto id = std::make_shared<std::string>();
    auto* show = presets->add_subcommand("show", "Print one preset's JSON");
    show->add_option("id", *id, "Preset id")->required();
    show->callback([id] {
        const auto& lib = PresetLibrary::builtin();
        std::vector<std::string> all;
        for (PresetKind k : kPresetKinds) {
            if (const Preset* p = lib.find(k, *id)) {
                std::cout << p->json.dump(2) << "\n";
                return;
            }
            for (auto& i : lib.ids(k))
                all.push_back(i);
        }
        auto near = didYouMean(*id, all);
        throw InputError("presets", *id,
                         std::string("no preset by that id") +
                             (near ? " (did you mean \"" + *near + "\"?)" : "") +
                             "; see `madmax presets list`");
    });
}

#ifdef MADMAX_WITH_FIGURE
void addFigureCommand(CLI::App& app, const char* argv0) {
    struct Options {
        cli::FigureRequest fig;
        std::vector<std::string> sets, pins;
        std::string baseline;
        bool list = false;
    };
    auto o = std::make_shared<Options>();
    o->fig.scenario = PresetLibrary::kDefaultScenario;
    cli::FigureRequest& fig = o->fig;
    auto* figure = app.add_subcommand(
        "figure",
        "Render one of the explorer's charts to SVG, PDF, PNG, CSV or JSON (no display needed)");
    figure->add_option("scenario", fig.scenario,
                       "Scenario file or preset id (default: the built-in default)");
    figure->add_option("--set", o->sets, "Override a field: path=value")->type_name("PATH=VALUE");
    figure->add_option("--chart", fig.chart, "Chart name (see --list)");
    figure->add_option("--format", fig.format,
                       "svg, pdf, png, csv or json (default: the -o file name's extension)")
        ->check(CLI::IsMember({"svg", "pdf", "png", "csv", "json"}));
    figure
        ->add_option("--width-in", fig.widthIn,
                     "Width in inches (3.5 single column, 7 double column)")
        ->check(cli::kFinite & CLI::Range(0.5, 100.0));
    figure->add_option("--height-in", fig.heightIn, "Height in inches")
        ->check(cli::kFinite & CLI::Range(0.5, 100.0));
    figure->add_option("--scale", fig.scale, "PNG pixel scale: 1, 2 or 3 × 96 dpi")
        ->check(CLI::Range(1, 8));
    figure->add_flag("--hatching", fig.hatching, "Greyscale-safe fill patterns");
    figure->add_option("--knob", fig.knobs,
                       "--chart sweep: NAME=F1,F2,… per line (e.g. gpus=0.25,0.5,1,2,4 for the "
                       "throughput-vs-GPUs curve of MAD-Max's Figure 1; default: NVLink, "
                       "network and HBM bandwidth at ×0.25…×4)")
        ->type_name("NAME=F1,F2");
    figure->add_option("--system", fig.systems,
                       "--chart pareto / pareto_cost: a system preset id or file to compare "
                       "(repeat; default: the scenario's system)")
        ->type_name("ID");
    figure->add_option("--gpus", fig.gpus,
                       "--chart pareto / pareto_cost: GPU counts (default: the scenario's × "
                       "1/8, 1/4, 1/2, 1, 2, 4)")
        ->delimiter(',')
        ->check(CLI::Range(1, 1 << 30))
        ->type_name("N,N,…");
    figure->add_option("--baseline", o->baseline,
                       "A scenario file or preset id pinned as the baseline: the comparison "
                       "chart's 100%, every chart's ghost bars and deltas");
    figure->add_option("--pin", o->pins,
                       "Another scenario pinned beside the baseline (repeat; needs --baseline)");
    figure->add_option("-o,--output", fig.output, "Output file");
    figure->add_flag("--list", o->list, "Print the chart names and exit");
    figure->callback([o, argv0] {
        if (o->list) {
            for (const auto& n : cli::figureChartNames())
                std::cout << n << "\n";
            return;
        }
        if (o->fig.chart.empty())
            throw InputError("--chart", "",
                             "required: one of the names `madmax figure --list` prints");
        if (o->fig.output.empty()) throw InputError("-o", "", "required: the file to write");
        for (const auto& s : o->sets)
            o->fig.overrides.push_back(parseOverride(s));
        if (!o->pins.empty() && o->baseline.empty())
            throw InputError("--pin", "", "needs --baseline: the first pin is the baseline");
        o->fig.pins.clear();
        if (!o->baseline.empty()) o->fig.pins.push_back(o->baseline);
        o->fig.pins.insert(o->fig.pins.end(), o->pins.begin(), o->pins.end());
        if (const int code = cli::runFigure(o->fig, argv0); code != 0)
            throw FigureFailed{code};
    });
}
#endif

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"madmax — predict how large models train on GPU clusters (MAD-Max, Hsia et al., "
                 "ISCA 2024)"};
    app.set_version_flag("--version", std::string("madmax ") + MADMAX_VERSION);
    app.require_subcommand(1);
    addEvaluateCommand(app);
    addValidateCommand(app);
    addCloudTableCommand(app);
    addCalibrateCommand(app);
    addPresetsCommand(app);
#ifdef MADMAX_WITH_FIGURE
    addFigureCommand(app, argv[0]);
#endif
    cli::addSearchCommands(app);

    // Parsing runs the chosen subcommand's callback.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    } catch (const FigureFailed& f) {
        return f.code;
    } catch (const InputError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
