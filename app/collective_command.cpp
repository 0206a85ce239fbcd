// `madmax collective`: one collective's time and bus bandwidth on a scenario's system, as
// nccl-tests prints them (madmax/collectives.hpp), to set beside your own nccl-tests output.
#include "search_commands.hpp"

#include "cli_checks.hpp"

#include "madmax/collectives.hpp"
#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

namespace madmax::cli {

namespace {

struct CollectiveOptions {
    std::string scenario = PresetLibrary::kDefaultScenario;
    std::vector<std::string> sets;
    std::string op = "all_reduce";
    int gpus = 0;
    long long stride = 1;
    std::vector<double> bytes{1048576.0, 16777216.0, 134217728.0, 1073741824.0, 8589934592.0};
    bool json = false;
};

const std::map<std::string, Collective> kCollectiveOps = {
    {"all_reduce", Collective::AllReduce},
    {"all_gather", Collective::AllGather},
    {"reduce_scatter", Collective::ReduceScatter},
    {"all_to_all", Collective::AllToAll}};

/// The command's work: the group on the scenario's system, each size's time and bandwidths.
void runCollective(const CollectiveOptions& o) {
    std::vector<Override> ov;
    for (const auto& x : o.sets)
        ov.push_back(parseOverride(x));
    const Scenario sc = loadScenario(o.scenario, PresetLibrary::builtin(), ov);
    const System& sys = sc.system;
    const double span = double(o.gpus) * double(o.stride);
    if (span > sys.maxGpus())
        throw InputError(o.scenario, "--gpus",
                         "a group of " + std::to_string(o.gpus) + " ranks " +
                             std::to_string(o.stride) + " apart spans " +
                             std::to_string((long long)span) + " GPUs, more than the system's " +
                             std::to_string((long long)sys.maxGpus()) +
                             "; give fewer ranks, a smaller stride, or a larger system");
    const Collective op = kCollectiveOps.at(o.op);
    const GroupLayout g = layoutGroup(sys, o.gpus, o.stride);
    const double factor = ncclBusFactor(op, o.gpus);
    nlohmann::json rows = nlohmann::json::array();
    for (double b : o.bytes) {
        const double t = collectiveTime(sys, g, op, b);
        rows.push_back({{"bytes", b},
                        {"time_s", t},
                        {"algbw_gbps", b / t / 1e9},
                        {"busbw_gbps", b / t * factor / 1e9}});
    }
    if (o.json) {
        std::cout << nlohmann::json{{"op", o.op},
                                    {"gpus", o.gpus},
                                    {"stride", o.stride},
                                    {"system", sys.name},
                                    {"rows", rows}}
                         .dump(2)
                  << "\n";
        return;
    }
    std::printf("%s over %d ranks, %lld apart, on %s (%s)\n", o.op.c_str(), o.gpus, o.stride,
                sys.name.c_str(), sc.name.c_str());
    std::printf("%16s %12s %12s %12s\n", "size (B)", "time", "algbw GB/s", "busbw GB/s");
    for (const auto& r : rows)
        std::printf("%16.0f %12s %12.2f %12.2f\n", r["bytes"].get<double>(),
                    formatSeconds(r["time_s"].get<double>()).c_str(),
                    r["algbw_gbps"].get<double>(), r["busbw_gbps"].get<double>());
}

} // namespace

void addCollectiveCommand(CLI::App& app) {
    auto o = std::make_shared<CollectiveOptions>();
    auto* cmd = app.add_subcommand(
        "collective", "One collective's time and bus bandwidth on a scenario's system, as "
                      "nccl-tests prints them");
    cmd->add_option("scenario", o->scenario,
                    "Scenario file or preset id whose system runs it (default: the built-in "
                    "default)");
    cmd->add_option("--set", o->sets, "Override a field: path=value")->type_name("PATH=VALUE");
    cmd->add_option("--op", o->op, "all_reduce, all_gather, reduce_scatter or all_to_all")
        ->check(CLI::IsMember(kCollectiveOps));
    cmd->add_option("--gpus", o->gpus, "Ranks in the group")
        ->required()
        ->check(CLI::Range(2, 1 << 30));
    cmd->add_option("--stride", o->stride,
                    "Distance between consecutive ranks (1: packed, as nccl-tests places them; "
                    "8 on 8-GPU nodes: one rank per node)")
        ->check(CLI::Range(1LL, 1LL << 30));
    cmd->add_option("--bytes", o->bytes,
                    "Message sizes in bytes, as nccl-tests' size column gives them (all-gather: "
                    "the whole output; all-to-all: each rank's send buffer); default 1 MiB, "
                    "16 MiB, 128 MiB, 1 GiB and 8 GiB")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                std::string why = kFinite(text);
                if (!why.empty()) return why;
                const double v = std::stod(text);
                if (v < 1 || v > 1e15)
                    return "\"" + text + "\" is not a size of 1 byte to 1e15 bytes";
                return {};
            },
            "BYTES"))
        ->delimiter(',');
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->callback([o] { runCollective(*o); });
}

} // namespace madmax::cli
