// The seed's own files (MAD-Max reference code: model, system and task JSON) and a
// reference-compatible engine that reproduces what that code computes, quirks included
// (docs/reference/seed-format.md). Our native engine is the better-founded model; this one
// exists so that users' files open and their numbers can be compared side by side.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace madmax {
class PresetLibrary;
struct Result;
}

namespace madmax::seed {

enum class ModelType { Dlrm, DlrmMoe, DlrmTransformer, Llm, LlmMoe, Vit };
enum class TaskType { Pretrain, Inference, Finetune };

struct Model {
    std::string name;
    ModelType type = ModelType::Dlrm;
    double bytesNonEmb = 4, bytesEmb = 2;
    // DLRM family.
    int bottomLayers = 0, topLayers = 0;
    double mlpDim = 0;
    double tables = 0, rowsPerTable = 0, embDim = 0, pooling = 0;
    // Mixture of experts (DLRM_MoE: the top MLP; LLM_MoE: every FC).
    int experts = 1, activeExperts = 1;
    // Transformers (DLRM_Transformer, LLM, LLM_MoE, ViT).
    int transformerLayers = 0, heads = 0;
    double hidden = 0, fcDim = 0, seqLen = 0;
    double vocab = 0;                   ///< LLM: entries_per_table
    double imageSize = 0, patchDim = 0; ///< ViT
};

struct System {
    std::string name;
    int devices = 0, nodes = 0;
    double f64 = 0, f32 = 0, f16 = 0, i8 = 0, flopsUtil = 0;
    double memCap = 0, memBw = 0, memBwUtil = 0;
    double nvlinks = 0, bwPerNvlink = 0, nvlinkUtil = 0;
    double ibPorts = 0, ibBw = 0, ibUtil = 0, arPercIntra = 0;
    double pricePerGpuHour = 0; ///< USD per GPU-hour (0: not given); not read by the reference
    double powerPerGpuW = 0;    ///< node TDP per GPU, W (0: not given); not read by the reference
};

/// One component's parallel strategy: levels innermost first (e.g. [tp, ddp] with [8, 16]).
struct Parallel {
    std::vector<std::string> kinds; ///< ddp, fsdp, tp, pp (MLP/transformer); mp, ddp (embedding)
    std::vector<int> degrees;
    bool empty() const { return kinds.empty(); }
};

struct Task {
    std::string name;
    TaskType type = TaskType::Pretrain;
    Parallel mlp, emb, transformer;
    double mlpBatch = 0, embBatch = 0, transformerBatch = 0; ///< local batch sizes
    bool freezeTop = false, freezeBottom = false, freezeEmb = false, freezeTransformer = false;
    int minFrozenLayer = -1; ///< LLM finetune: gradient comm only below this layer (-1: all)
};

/// The seed's shipped files compiled in (presets/seed/{models,systems,tasks}): their ids.
std::vector<std::string> builtinIds(const std::string& kind);
/// A seed file by path, or else by the id of a shipped one (`kind`: models, systems, tasks);
/// an error naming both when neither exists.
nlohmann::json loadFile(const std::string& kind, const std::string& pathOrId);

/// Strict readers: every key known, typed and in range, errors naming the file and field.
Model parseModel(const nlohmann::json& j, const std::string& file);
System parseSystem(const nlohmann::json& j, const std::string& file);
Task parseTask(const nlohmann::json& j, const std::string& file);

/// One op of the reference code's two-stream trace.
struct TraceOp {
    std::string name;
    double startS = 0, endS = 0;
};

/// What the reference code prints for one model/system/task combination.
struct ReferenceResult {
    double iterationS = 0, throughputQps = 0, globalBatch = 0;
    double gemmS = 0, embS = 0;
    double allToAllS = 0, allReduceS = 0, allGatherS = 0, reduceScatterS = 0;
    double exposedCommS = 0, overlappedCommS = 0;
    double mlpWeightsBytesPerDevice = 0;  ///< DLRM family
    double embWeightsBytesPerDevice = 0;
    double transformerWeightsBytesPerDevice = 0;
    double totalParams = 0;
    std::vector<TraceOp> compute, comm; ///< forward then backward, in issue order
};

/// The reference code's computation (docs/reference/seed-format.md §1): effective rates, per-component parallel
/// factors, the issue order of every op and the substring-dependency FIFO scheduler. Checks
/// the reference code's legality assertions as errors naming the task field.
ReferenceResult runReference(const Model& m, const System& s, const Task& t,
                             const std::string& file = "task");

/// The seed's LLM / LLM_MoE pretrain files as a native scenario document (madmax-scenario/1):
/// the seed system's datasheet numbers with the nearest preset GPU's calibration, the
/// transformer's degrees, the shape. Every assumption made is appended to `assumptions`; other
/// model and task types are refused with the reason.
nlohmann::json toScenarioJson(const Model& m, const System& s, const Task& t,
                              const PresetLibrary& lib, std::vector<std::string>& assumptions,
                              const std::string& file = "model");

/// The reference outputs as JSON, in reference.json's "expected" vocabulary (ms, GB, billions);
/// `traces`: both streams' ops too.
nlohmann::json toJson(const ReferenceResult& r, bool traces = false);
/// A plain-text report of one reference evaluation.
std::string formatReport(const Model& m, const System& s, const Task& t, const ReferenceResult& r);

/// The reference and the native engine side by side (step, compute, communication, exposed,
/// throughput, memory), then what differs and why: each difference with its ratio and the
/// convention behind it (docs/reference/seed-format.md: flat utilisations, no latency term, FSDP on the first
/// level, issue-order overlap, no memory check). `native`: the converted scenario evaluated.
std::string formatComparison(const Model& m, const System& s, const Task& t,
                             const ReferenceResult& ref, const Result& native);

} // namespace madmax::seed
