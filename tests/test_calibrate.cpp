// `madmax calibrate` (issue #12): it must recover parameters it did not know from synthetic
// measurements made with them, and refuse bad measurements with the file, line and fix.
#include "madmax/calibrate.hpp"
#include "madmax/collectives.hpp"
#include "madmax/error.hpp"
#include "madmax/file_io.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/validation.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace madmax;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

/// nccl-tests output as a machine whose tier `k` runs at `truth(bytes)` would print it.
NcclTable synthetic(System sys, int k, Collective op, int ranks, int hosts,
                    const std::function<double(double)>& truth) {
    NcclTable t;
    t.op = op;
    t.ranks = ranks;
    t.hosts = hosts;
    t.file = "synthetic.txt";
    sys.tiers[0].gpus = ranks / hosts;
    for (double bytes : {1048576.0, 16777216.0, 134217728.0, 1073741824.0, 8589934592.0}) {
        System s = sys;
        s.tiers[std::size_t(k)].efficiency = LogCurve::constant(truth(bytes));
        const double time = collectiveTime(s, layoutGroup(s, ranks, 1), op, bytes);
        t.rows.push_back({bytes, time, 0.0});
    }
    // Through nccl-tests' text format and back, as the command reads it.
    return parseNcclTests(formatNcclTests(t), "synthetic_" + std::to_string(ranks) + ".txt");
}

double pointAt(const json& curve, double bytes) {
    for (const auto& p : curve)
        if (p[0].get<double>() == bytes) return p[1].get<double>();
    FAIL("no point at " << bytes);
    return 0;
}

} // namespace

TEST_CASE("Calibrate recovers NVLink efficiencies from synthetic nccl-tests tables") {
    // Truth: a slower NVLink than the H100 preset's, 0.30 at 1 MiB rising to 0.70 at 8 GiB.
    const System sys = test::systemPreset("dgx-h100-superpod");
    auto truth = [](double b) { return 0.30 + 0.40 * (std::log2(b) - 20.0) / 13.0; };
    CalibrationInputs in;
    in.nccl.push_back(synthetic(sys, 0, Collective::AllReduce, 8, 1, truth));
    in.nccl.push_back(synthetic(sys, 0, Collective::AllGather, 8, 1, truth));
    const CalibrationReport r = calibrate("h100-sxm5-80gb", sys, in, "my-h100");
    const json& curve = r.preset["links"]["scale_up"]["efficiency"];
    for (double b : {1048576.0, 16777216.0, 134217728.0, 1073741824.0, 8589934592.0})
        CHECK(pointAt(curve, b) == Approx(truth(b)).epsilon(1e-3));
    // Every residual after the fit is ~0; before it, the preset's curve was off.
    for (const auto& x : r.residuals)
        CHECK(x.after == Approx(x.measured).epsilon(2e-3));
    REQUIRE(r.changes.size() == 1);
    CHECK_THAT(r.changes[0].movedBy, Contains("all_reduce_perf") && Contains("all_gather_perf"));
    // The written preset loads, under its own id, without the shipped SKUs.
    CHECK(r.preset["id"] == "my-h100");
    CHECK_FALSE(r.preset.contains("skus"));
    CHECK_NOTHROW(parseGpu(r.preset, "my-h100.json", "gpu"));
}

/// Calibrate from one synthetic 16-rank table over two DGX H100 hosts whose network runs at a
/// constant 0.55 of its line rate.
CalibrationReport scaleOutFit(Collective op) {
    const System sys = test::systemPreset("dgx-h100-superpod");
    CalibrationInputs in;
    in.nccl.push_back(synthetic(sys, 1, op, 16, 2, [](double) { return 0.55; }));
    return calibrate("h100-sxm5-80gb", sys, in, "my-h100");
}

TEST_CASE("Calibrate fits the scale-out tier from multi-host tables, given NVLink") {
    const CalibrationReport r = scaleOutFit(Collective::AllReduce);
    const json& curve = r.preset["links"]["scale_out"]["efficiency"];
    for (double b : {16777216.0, 1073741824.0, 8589934592.0})
        CHECK(pointAt(curve, b) == Approx(0.55).epsilon(1e-3));
}

TEST_CASE("Calibrate takes an all-gather across hosts at its largest size only") {
    // A ring across hosts reads only the scale-out tier's large-message efficiency (its smaller
    // sizes are NCCL's protocol latencies), so a multi-host all-gather table sets one point, at
    // its largest size, and the fit reproduces that row; the note says why the others are not
    // fitted.
    const CalibrationReport r = scaleOutFit(Collective::AllGather);
    const json& curve = r.preset["links"]["scale_out"]["efficiency"];
    REQUIRE(curve.size() == 1);
    CHECK(pointAt(curve, 8589934592.0) == Approx(0.55).epsilon(1e-3));
    bool said = false;
    for (const auto& n : r.notes)
        said = said || n.find("only its largest size (8589934592 B) is fitted") != std::string::npos;
    CHECK(said);
    for (const auto& x : r.residuals)
        if (x.measurement.find("8589934592 B") != std::string::npos)
            CHECK(x.after == Approx(x.measured).epsilon(2e-3));
}

TEST_CASE("Calibrate fits the network's all-to-all share from an alltoall table across hosts") {
    // Truth: a network whose rings run at a constant 0.55 of NDR, and whose flat all-to-all
    // reaches 0.45 of that. The all-reduce table fits the curve, the all-to-all table the share
    // (at its largest size), and both tables' rows are reproduced after the fit.
    System sys = test::systemPreset("dgx-h100-superpod");
    System truth = sys;
    truth.tiers.back().allToAllEfficiency = 0.45;
    CalibrationInputs in;
    in.nccl.push_back(synthetic(sys, 1, Collective::AllReduce, 16, 2, [](double) { return 0.55; }));
    in.nccl.push_back(synthetic(truth, 1, Collective::AllToAll, 16, 2, [](double) { return 0.55; }));
    const CalibrationReport r = calibrate("h100-sxm5-80gb", sys, in, "my-h100");
    const json& out = r.preset["links"]["scale_out"];
    CHECK(out["all_to_all_efficiency"].get<double>() == Approx(0.45).epsilon(1e-3));
    CHECK(pointAt(out["efficiency"], 8589934592.0) == Approx(0.55).epsilon(1e-3));
    bool changed = false;
    for (const auto& c : r.changes)
        changed = changed || (c.parameter == "links.scale_out.all_to_all_efficiency" &&
                              c.before == "1" && c.movedBy.find("alltoall_perf") != std::string::npos);
    CHECK(changed);
    for (const auto& x : r.residuals)
        if (x.measurement.find("8589934592 B") != std::string::npos)
            CHECK(x.after == Approx(x.measured).epsilon(2e-3));
    // The written preset loads, and a system built on it takes the share on its network tier.
    const Gpu gpu = parseGpu(r.preset, "my-h100.json", "gpu");
    CHECK(gpu.scaleOutLink.allToAllEfficiency == Approx(0.45).epsilon(1e-3));
}

TEST_CASE("The B200 cluster's flat all-to-all across two nodes calibrates to half the ring's "
          "share") {
    // nccl-tests-b200.json: alltoall_perf on 2 x 8 B200 (8 x NDR per node), 1 GiB at 42.28 GB/s
    // and 8 GiB at 42.41 GB/s bus bandwidth ("B200 / Vultr POC - cluster test summary",
    // section 10), where the engine, with the ring's efficiency, gives 83.9 and 86.2. Its
    // inter-node half ran at 22.6 GB/s per GPU against NDR's 50 at the tier's 0.92: a share of
    // 22.6 / 46 = 0.49, and the 8 GiB row reproduced after the fit.
    const System sys = test::systemPreset("dgx-b200-superpod");
    NcclTable t;
    t.op = Collective::AllToAll;
    t.ranks = 16;
    t.hosts = 2;
    t.file = "vultr-b200-alltoall.txt";
    for (auto [bytes, busbw] : {std::pair{1073741824.0, 42.28}, {8589934592.0, 42.41}})
        t.rows.push_back({bytes, bytes / (busbw * 1e9 / ncclBusFactor(t.op, 16)), 0.0});
    CalibrationInputs in;
    in.nccl.push_back(parseNcclTests(formatNcclTests(t), t.file));
    const CalibrationReport r = calibrate("b200-sxm-180gb", sys, in, "my-b200");
    CHECK(r.preset["links"]["scale_out"]["all_to_all_efficiency"].get<double>() ==
          Approx(0.49).margin(0.02));
    for (const auto& x : r.residuals) {
        if (x.measurement.find("8589934592 B") == std::string::npos) continue;
        CHECK(x.before == Approx(86.2).margin(1.0));
        CHECK(x.after == Approx(42.41).epsilon(2e-3));
    }
}

TEST_CASE("Calibrate recovers a compute scale from synthetic step times") {
    // Truth: the H100 preset with its GEMM and attention efficiencies × 0.8. The "measured"
    // values of the 7 public H100 training rows are what that GPU predicts.
    const auto& lib = PresetLibrary::builtin();
    json truth = lib.find(PresetKind::Gpu, "h100-sxm5-80gb")->json;
    for (auto& p : truth["calibration"]["gemm_efficiency"])
        p[1] = p[1].get<double>() * 0.8;
    truth["calibration"]["attention_efficiency"] =
        truth["calibration"]["attention_efficiency"].get<double>() * 0.8;
    PresetLibrary truthLib = lib;
    truthLib.add(PresetKind::Gpu, "h100-sxm5-80gb", "truth", truth.dump());
    json steps = readJsonFile(MADMAX_PUBLIC_DATASET);
    json kept = json::array();
    for (const auto& c : steps["cases"])
        if (c["id"].get<std::string>().rfind("llama3-t4", 0) == 0 ||
            c["id"].get<std::string>().rfind("nemo2407", 0) == 0)
            kept.push_back(c);
    steps["cases"] = kept;
    const ValidationReport made = runValidation(steps, truthLib, "steps.json");
    for (std::size_t i = 0; i < kept.size(); ++i)
        steps["cases"][i]["measured"]["value"] = *made.cases[i].predicted;
    CalibrationInputs in;
    in.steps = steps;
    in.stepsFile = "steps.json";
    const CalibrationReport r = calibrate("h100-sxm5-80gb", test::systemPreset("dgx-h100-superpod"), in,
                                          "my-h100");
    REQUIRE(r.changes.size() == 1);
    CHECK(std::stod(r.changes[0].after) == Approx(0.8).epsilon(5e-3));
    for (const auto& x : r.residuals)
        CHECK(x.after == Approx(x.measured).epsilon(5e-3));
}

TEST_CASE("Bad calibration inputs are refused with the file and the fix") {
    auto err = [](const std::string& text, const std::string& file) {
        try {
            parseNcclTests(text, file);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    const std::string ranks = "#  Rank  0 Group  0 Pid 1 on a device 0 [0x1] GPU\n"
                              "#  Rank  1 Group  0 Pid 2 on a device 1 [0x2] GPU\n";
    const std::string row = "1048576 262144 float sum -1 45.1 23.25 40.69 0\n";
    CHECK_THAT(err(ranks + row, "mystery.txt"), Contains("cannot tell which collective"));
    CHECK_THAT(err(row, "all_reduce_perf.txt"), Contains("Rank"));
    CHECK_THAT(err(ranks, "all_reduce_perf.txt"), Contains("no perf rows"));
    CHECK_THAT(err(ranks + "1048576 262144 float sum -1 fast\n", "all_reduce_perf.txt"),
               Contains("line 3") && Contains("busbw"));
    CHECK_THAT(err(ranks + "1048576 262144 float sum -1 0 0 0 0\n", "all_reduce_perf.txt"),
               Contains("positive"));
    // A fuzzing finding: a 65-digit size once overflowed the printed row and merged two rows.
    CHECK_THAT(err(ranks + "1" + std::string(64, '1') + " 1 float sum -1 32010 1 1 0\n",
                   "all_reduce_perf.txt"),
               Contains("whole number of bytes up to 1e15"));
    CHECK_THAT(err(ranks + "1048576.5 1 float sum -1 10 1 1 0\n", "all_reduce_perf.txt"),
               Contains("whole number of bytes"));
    const System sys = test::systemPreset("dgx-h100-superpod");
    auto calErr = [&](const std::string& gpu, const std::string& id, const CalibrationInputs& in) {
        try {
            calibrate(gpu, sys, in, id);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CalibrationInputs none;
    CHECK_THAT(calErr("h100-sxm5-80gb", "mine", none), Contains("at least one"));
    CHECK_THAT(calErr("h100-sxm5-80gb", "h100-sxm5-80gb", none), Contains("never overwritten"));
    CHECK_THAT(calErr("h999", "mine", none), Contains("no GPU preset"));
}

TEST_CASE("madmax calibrate writes a new preset, never over a file without --force, and "
          "evaluate uses it") {
    namespace fs = std::filesystem;
    const fs::path dir = std::filesystem::temp_directory_path() /
                         ("madmax-calibrate-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const System sys = test::systemPreset("dgx-h100-superpod");
    NcclTable t = synthetic(sys, 0, Collective::AllReduce, 8, 1, [](double) { return 0.5; });
    const std::string nccl = (dir / "all_reduce_perf.txt").string();
    std::ofstream(nccl) << formatNcclTests(t);
    const std::string out = (dir / "mine.json").string();
    const std::string cmd = "calibrate --gpu h100-sxm5-80gb --nccl " + nccl + " --id mine --out " + out;
    std::string text;
    REQUIRE(test::runCli(cmd, &text) == 0);
    CHECK_THAT(text, Contains("links.scale_up.efficiency") && Contains("Wrote"));
    std::string err;
    CHECK(test::runCli(cmd, nullptr, &err) == 2);
    CHECK_THAT(err, Contains("--force"));
    CHECK(test::runCli(cmd + " --force") == 0);
    // The id names the preset and its default file: a path in it is refused, as the explorer
    // and validate --write-scenarios refuse it (issue #30: --id ../../x wrote outside).
    std::string idErr;
    CHECK(test::runCli("calibrate --gpu h100-sxm5-80gb --nccl " + nccl + " --id ../../x", nullptr,
                       &idErr) == 2);
    CHECK_THAT(idErr, Contains("command line: --id") && Contains("plain file name"));
    // The calibrated GPU, used by a scenario: a slower NVLink makes the default step slower.
    std::string a, b;
    REQUIRE(test::runCli("evaluate default --json", &a) == 0);
    REQUIRE(test::runCli("evaluate default --json --set system.gpu=" + out, &b) == 0);
    CHECK(json::parse(b)["step_time_s"].get<double>() > json::parse(a)["step_time_s"].get<double>());
    fs::remove_all(dir);
}

TEST_CASE("Calibrate recovers a GEMM efficiency curve from a synthetic profiler trace") {
    // Truth: a GPU whose 16-bit GEMMs reach 0.8 × the H100 preset's curve. The trace holds
    // compute-bound GEMMs from 2·512·1024·1024 to 2·8192³ FLOPs (three instances each), one
    // batched, and two memory-bound shapes that must be skipped.
    const Gpu h100 = parseGpu(PresetLibrary::builtin().find(PresetKind::Gpu, "h100-sxm5-80gb")->json,
                              "h100", "gpu");
    const double peak = h100.peak(Precision::BF16);
    auto truth = [&](double flops) { return 0.8 * h100.calibration.gemmEfficiency(flops); };
    KinetoTrace t;
    t.file = "synthetic-trace.json";
    for (auto [m, n, k, b] : std::vector<std::tuple<double, double, double, double>>{
             {512, 1024, 1024, 1},
             {1024, 4096, 1024, 1},
             {4096, 4096, 4096, 1},
             {8192, 8192, 8192, 1},
             {8192, 28672, 8192, 1},
             {4096, 4096, 1024, 8}}) {
        const double flops = 2 * m * n * k * b;
        t.gemms.push_back({"aten::mm", m, n, k, b, Precision::BF16, 3,
                           flops / (peak * truth(flops))});
    }
    t.gemms.push_back({"aten::mm", 1, 8192, 8192, 1, Precision::BF16, 3,
                       2.0 * 8192 * 8192 * 2 / (h100.hbmBytesPerS * 0.85)}); // memory-bound
    // Above the ridge (600³: 200 FLOP/B) but measured at 1 µs, of which its 2.16 MB take
    // 0.76 µs at the preset's HBM speed: the measurement says memory-bound, so it is skipped
    // too (used, it would claim 44% efficiency for its size).
    t.gemms.push_back({"aten::mm", 600, 600, 600, 1, Precision::BF16, 3, 1.0e-6});
    const KinetoTrace parsed = parseKinetoTrace(json::parse(formatKinetoTrace(t)), t.file);
    REQUIRE(parsed.gemms.size() == 8);
    CalibrationInputs in;
    in.kineto.push_back(parsed);
    const CalibrationReport r =
        calibrate("h100-sxm5-80gb", test::systemPreset("dgx-h100-superpod"), in, "my-h100");
    // Every compute-bound shape is predicted to within 1% after the fit (the bins hold one
    // shape each here, or shapes of nearly equal FLOPs).
    int residuals = 0;
    for (const auto& x : r.residuals) {
        INFO(x.measurement);
        CHECK(x.after == Approx(x.measured).epsilon(0.01));
        CHECK(std::fabs(x.before - x.measured) > 0.15 * x.measured); // it was 25% off
        ++residuals;
    }
    CHECK(residuals == 6);
    bool skipped = false;
    for (const auto& n : r.notes)
        skipped = skipped || n.find("memory-bound") != std::string::npos;
    CHECK(skipped);
    REQUIRE(r.changes.size() == 1);
    CHECK_THAT(r.changes[0].parameter, Contains("GEMM efficiency curve"));
    CHECK_THAT(r.changes[0].movedBy, Contains("synthetic-trace.json"));
    // The fitted preset loads, and its curve is the truth at the measured sizes.
    const Gpu fitted = parseGpu(r.preset, "my-h100", "gpu");
    for (double f : {2.0 * 4096 * 4096 * 4096, 2.0 * 8192 * 8192 * 8192})
        CHECK(fitted.calibration.gemmEfficiency(f) == Approx(truth(f)).epsilon(0.01));
    // Outside the measured range the preset's curve stays.
    CHECK(fitted.calibration.gemmEfficiency(1e8) == Approx(h100.calibration.gemmEfficiency(1e8)));
}

TEST_CASE("Bad profiler traces are refused with the file and the fix") {
    auto err = [](const std::string& text) {
        try {
            parseKinetoTrace(json::parse(text), "trace.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CHECK_THAT(err("[1, 2]"), Contains("trace.json") && Contains("no aten::mm"));
    CHECK_THAT(err(R"({"events": []})"), Contains("traceEvents"));
    CHECK_THAT(err(R"({"traceEvents": []})"), Contains("no aten::mm"));
    // Shapes not recorded.
    CHECK_THAT(err(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","args":
                   {"External id": 1}}]})"),
               Contains("record_shapes=True"));
    // A kernel with a negative duration.
    CHECK_THAT(err(R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k","dur":-3,
                   "args":{"External id": 1}}]})"),
               Contains("traceEvents[0].dur"));
    // Ops whose kernels are missing (a CPU-only profile).
    CHECK_THAT(err(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","args":
                   {"External id": 1, "Input Dims": [[64,64],[64,64]],
                    "Input type": ["c10::BFloat16","c10::BFloat16"]}}]})"),
               Contains("External id"));
    // Dims beyond 2^31 (or not whole) are no GEMM's: refused with the reason, never an
    // overflowing FLOP count.
    CHECK_THAT(err(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","args":
                   {"External id": 1, "Input Dims": [[1e300,64],[64,64]],
                    "Input type": ["c10::BFloat16","c10::BFloat16"]}},
                   {"ph":"X","cat":"kernel","name":"k","dur":3,"args":{"External id": 1}}]})"),
               Contains("up to 2^31"));
    // A calibration with only an fp32 GEMM changes nothing, and says why.
    KinetoTrace t;
    t.file = "fp32.json";
    t.gemms.push_back({"aten::mm", 4096, 4096, 4096, 1, Precision::FP32, 1, 0.01});
    CalibrationInputs in;
    in.kineto.push_back(parseKinetoTrace(json::parse(formatKinetoTrace(t)), t.file));
    const CalibrationReport r =
        calibrate("h100-sxm5-80gb", test::systemPreset("dgx-h100-superpod"), in, "my-h100");
    CHECK(r.changes.empty());
    bool said = false;
    for (const auto& n : r.notes)
        said = said || n.find("fp32") != std::string::npos;
    CHECK(said);
}

TEST_CASE("nccl-tests rows the benchmark marks wrong are skipped and said, unknown types refused") {
    // Issue #30: rows with #wrong non-zero or nan, a negative bus bandwidth, or an unknown data
    // type or reduction were fitted as if measured.
    const System sys = test::systemPreset("dgx-h100-superpod");
    const NcclTable good = synthetic(sys, 0, Collective::AllReduce, 8, 1, [](double) { return 0.5; });
    const std::string text = formatNcclTests(good);
    auto withRow = [&](int row, const std::string& from, const std::string& to) {
        std::string t = text;
        std::size_t at = t.find("#       size");
        for (int i = 0; i <= row; ++i) at = t.find('\n', at) + 1;
        const std::size_t end = t.find('\n', at);
        std::string line = t.substr(at, end - at);
        const std::size_t p = line.rfind(from);
        REQUIRE(p != std::string::npos);
        line.replace(p, from.size(), to);
        return t.substr(0, at) + line + t.substr(end);
    };
    const NcclTable wrong = parseNcclTests(withRow(1, " 0", " 3"), "all_reduce_perf.txt");
    CHECK(wrong.rows.size() == good.rows.size() - 1);
    REQUIRE(wrong.skipped.size() == 1);
    CHECK_THAT(wrong.skipped[0], Contains("#wrong") && Contains("line"));
    CHECK(parseNcclTests(withRow(2, " 0", " nan"), "all_reduce_perf.txt").skipped.size() == 1);
    CHECK_THROWS_WITH(parseNcclTests(withRow(0, "float", "quux"), "all_reduce_perf.txt"),
                      Contains("unknown data type \"quux\""));
    CHECK_THROWS_WITH(parseNcclTests(withRow(0, "sum", "xor"), "all_reduce_perf.txt"),
                      Contains("reduction \"xor\""));
}
