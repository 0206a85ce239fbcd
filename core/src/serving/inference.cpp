// Inference serving (docs/developer/model.md §6; Pope et al. 2022): prefill is compute-bound; a decode step
// reads every weight once and the KV cache of every sequence, plus two latency-bound TP
// all-reduces per layer and per-kernel overheads. Continuous batching interleaves the prefills
// of new requests into the decode iterations; the batch is capped by KV-cache memory. The
// replica's costs are serving/replica.hpp's; here the batch is solved and the result assembled.
#include "serving/inference.hpp"

#include "serving/replica.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace madmax::detail {

namespace {

using serving::Costs;
using serving::Serving;
using serving::PrefillMemo;

/// The generic view of a decode round: one round as the "step".
void roundView(const Scenario& sc, const Serving& sv, const Serving::Iteration& it, int batch,
               Result& r) {
    const InferenceResult& ir = r.inference;
    const double tpot = ir.tpotS, replicas = sc.strategy.dp;
    r.stepTimeS = tpot;
    r.tokensPerS = ir.outputTokensPerS;
    r.tokensPerSPerGpu = ir.outputTokensPerSPerGpu;
    r.samplesPerS = ir.requestsPerS;
    r.microBatches = 1;
    // The decode communication: MoE all-to-alls apart from the TP all-reduces.
    r.comm[int(ParallelDim::TP)][int(Collective::AllReduce)] = {it.decode.comm - it.decode.a2a,
                                                                 it.decode.comm - it.decode.a2a};
    r.comm[int(ParallelDim::EP)][int(Collective::AllToAll)] = {it.decode.a2a, it.decode.a2a};
    r.comm[int(ParallelDim::PP)][int(Collective::P2P)] = {it.p2pS, it.p2pS};
    r.exposedCommS = (it.decode.comm + it.p2pS) / sv.tokensPerStep;
    r.compute.forwardS = tpot - r.exposedCommS;
    r.computeS = r.compute.totalS();
    r.bubbleS = 0;
    // Model FLOPs: 2 per parameter per token kept, generated and computed prompt tokens alike.
    const double params = sc.model.activeParams(); // MoE: the k routed + shared experts
    const bool prompts = sc.workload.inference.phase == ServingPhase::Aggregated;
    const double tokensPerToken = 1 + (prompts ? sv.computedInput / sv.output : 0.0);
    r.modelFlopsPerStep = 2 * params * batch * replicas * tokensPerToken;
    r.hardwareFlopsPerStep = r.modelFlopsPerStep;
    r.modelTflopsPerGpu = r.modelFlopsPerStep / (tpot * sc.gpus) / 1e12;
    r.hardwareTflopsPerGpu = r.modelTflopsPerGpu;
    r.mfu = r.modelTflopsPerGpu * 1e12 / sc.system.gpu.peak(sc.workload.precision);
    r.hfu = r.mfu;
}

/// Memory per GPU: weights, activations, the KV cache of the batch, and the engine's headroom.
void servingMemory(const Scenario& sc, const Serving& sv, double kvBytes, double batch, Result& r) {
    const double capacity = sc.system.gpu.hbmBytes;
    const double reserve = sc.system.reserveBytes;
    MemoryBreakdown& mem = r.memory;
    mem.weightsBytes = sv.weightsBytes;
    mem.activationsBytes = sv.activationBytes(batch);
    mem.kvCacheBytes = kvBytes;
    // The engine keeps (1 - kv_cache_fraction) of the free memory back: part of the reserve, so
    // a batch beyond the KV allotment is flagged as not fitting.
    const double headroom = (capacity - mem.weightsBytes - mem.activationsBytes - reserve) *
                            (1 - sc.system.gpu.calibration.kvCacheFraction);
    mem.reserveBytes = reserve + std::max(0.0, headroom);
    mem.capacityBytes = capacity;
}

/// A prefill pool below capacity queues its prompts: they arrive as a Poisson process and a
/// replica serves them at `prompts` per pass while busy, an M/D/1 queue of service s = pass ÷
/// prompts, whose mean wait is ρ·s / (2(1 − ρ)) at load ρ (Pollaczek–Khinchine). In server mode
/// a TTFT objective caps ρ where the wait still fits in it: ρ ≤ 2D / (s + 2D), D the objective
/// less the prompt's own TTFT. At load 1 (saturation, the throughput bound) TTFT is the service
/// alone, as offline. Sets TTFT, its queue part and the load; returns the load.
double prefillQueue(const Scenario& sc, double passS, double prompts, InferenceResult& ir) {
    const InferenceWorkload& in = sc.workload.inference;
    const double s = passS / prompts;
    double load = in.meanLoad;
    if (in.mode == ServingMode::Server && in.ttftObjectiveS > 0) {
        const double slack = in.ttftObjectiveS - ir.ttftS;
        if (slack > 0) load = std::min(load, 2 * slack / (s + 2 * slack));
    }
    ir.prefillQueueS = load < 1 ? load * s / (2 * (1 - load)) : 0.0;
    ir.ttftS += ir.prefillQueueS;
    ir.poolLoad = load;
    return load;
}

/// A prefill pool (disaggregation): each replica runs chunks of prompts back to back, and each
/// prompt's KV cache leaves for the decode pool over the scale-out network while the next chunk
/// computes, so a pass lasts the longer of the two. Throughput is prompt tokens per second,
/// prefix-cache hits included (as servers count them).
void prefillPool(const Scenario& sc, const Serving& sv, Result& r) {
    InferenceResult& ir = r.inference;
    const double chunk =
        std::max(sv.computedInput, double(sc.workload.inference.prefillChunkTokens));
    const double prompts = chunk / sv.computedInput;
    const Costs pass = sv.stage(chunk, sv.prefillContext, false, prompts);
    // One stage's share, pipelined; an offloaded prefix cache's hits load beside it.
    const double computeS = sv.withPrefixLoad(pass.total(), prompts) + sv.p2p(chunk);
    const double sendS = prompts * sv.kvTransferS();
    const double passS = std::max(computeS, sendS);
    const double replicas = sc.strategy.dp;
    // Below capacity the pool is busy its load's share of the time, idle between passes.
    const double load = prefillQueue(sc, passS, prompts, ir);
    ir.batch = int(std::ceil(prompts));
    ir.requestsPerS = load * replicas * prompts / passS;
    ir.inputTokensPerS = ir.requestsPerS * sv.input;
    ir.outputTokensPerS = ir.requestsPerS; // each prompt's first token
    ir.outputTokensPerSPerGpu = ir.outputTokensPerS / sc.gpus;
    ir.tpotS = 0;
    ir.e2eLatencyS = ir.ttftS;
    ir.meetsObjectives = ir.ttftS <= sc.workload.inference.ttftObjectiveS ||
                         sc.workload.inference.ttftObjectiveS <= 0;
    r.stepTimeS = passS;
    r.tokensPerS = ir.inputTokensPerS;
    r.tokensPerSPerGpu = ir.inputTokensPerS / sc.gpus;
    r.samplesPerS = ir.requestsPerS;
    r.comm = {};
    r.comm[int(ParallelDim::TP)][int(Collective::AllReduce)] = {pass.comm - pass.a2a,
                                                                 pass.comm - pass.a2a};
    r.comm[int(ParallelDim::EP)][int(Collective::AllToAll)] = {pass.a2a, pass.a2a};
    r.exposedCommS = pass.comm + (passS - computeS);
    r.compute = {};
    r.compute.forwardS = passS - r.exposedCommS;
    r.computeS = r.compute.totalS();
    r.modelFlopsPerStep = 2 * sc.model.activeParams() * chunk * replicas;
    r.hardwareFlopsPerStep = r.modelFlopsPerStep;
    r.modelTflopsPerGpu = load * r.modelFlopsPerStep / (passS * sc.gpus) / 1e12;
    r.hardwareTflopsPerGpu = r.modelTflopsPerGpu;
    r.mfu = r.modelTflopsPerGpu * 1e12 / sc.system.gpu.peak(sc.workload.precision);
    r.hfu = r.mfu;
    // The chunk's prompts' KV cache, held until it has been sent.
    servingMemory(sc, sv, prompts * sv.kvTransferBytes(), prompts, r);
}

/// Serving's cost and energy: the scenario's GPUs at their hourly price and board power over
/// the tokens they serve (0 when the system gives no price or power).
void servingCost(const Scenario& sc, Result& r) {
    InferenceResult& ir = r.inference;
    if (!(r.tokensPerS > 0)) return;
    ir.dollarsPerMillionTokens = sc.gpus * sc.system.pricePerGpuHour / 3600.0 / r.tokensPerS * 1e6;
    ir.joulesPerToken = sc.gpus * sc.system.gpu.powerW / r.tokensPerS;
}

/// The largest batch b whose KV cache fits in the engine's share of the memory left, b·s ≤
/// F(b): the activations grow with the batch, so F falls as b rises. b0 = ⌊F(1)/s⌋ bounds it
/// above; if b0 does not fit, ⌊F(b0)/s⌋ does (F(b0) ≤ F of anything smaller), and the answer
/// is bisected between. (Iterating b ← ⌊F(b)/s⌋ instead oscillates when a sequence's
/// activations outweigh its KV cache — short requests, a large vocabulary — and can stop on a
/// batch that does not fit.)
int maxBatchThatFits(const Scenario& sc, const Serving& sv) {
    const double capacity = sc.system.gpu.hbmBytes;
    const double reserve = sc.system.reserveBytes;
    auto freeForKv = [&](double batch) {
        return (capacity - sv.weightsBytes - sv.activationBytes(batch) - reserve) *
               sc.system.gpu.calibration.kvCacheFraction;
    };
    const double perSequence = sv.kvPerToken * sv.reservedContext;
    auto fits = [&](double b) { return b * perSequence <= freeForKv(b); };
    double hi = std::min(std::floor(freeForKv(1) / perSequence), 1e7);
    if (!(hi >= 1) || !fits(1)) return 0;
    if (fits(hi)) return int(hi);
    double lo = std::max(1.0, std::floor(freeForKv(hi) / perSequence)); // fits; hi does not
    while (hi - lo > 1) {
        const double mid = std::floor((lo + hi) / 2);
        (fits(mid) ? lo : hi) = mid;
    }
    return int(lo);
}

/// The largest n in [lo, hi) that meets the objectives, given that lo does and hi does not
/// (both grow with n: the peak, TPOT and TTFT); lo may be 0, no batch at all, whose margin is
/// then an estimate that only places the first probe (0 is returned when 1 fails). The margins are nearly affine in the batch a
/// round runs (weights read once a round, KV reads and math per sequence), so each probe goes
/// where the secant through the two latest probes' margins crosses zero, in run batches
/// (`run(n)`: the server's peak; `below(x)`: the largest n running at most x). TPOT bends
/// upwards where the round turns compute-bound, so the bracket's own chord falls short; the
/// latest two probes follow the local slope. A secant crossing outside the bracket falls back
/// to the bracket's chord with the Illinois rule (an end that stays put twice has its margin
/// halved), and a bracket that neither halves nor sees its steps halve (Brent's rule) three
/// times running is bisected once, so the worst case stays logarithmic. Any probe order ends
/// on the same n: the one before the first that fails.
template <typename ProbeFn, typename RunFn, typename BelowFn>
int largestMeeting(int lo, double loSlack, int hi, double hiSlack, ProbeFn probe, RunFn run,
                   BelowFn below) {
    // The two latest probes (the bracket's ends to begin with): the secant through them
    // follows the curve's local slope, which the bracket's chord misses where it bends.
    double xlo = run(lo), xhi = run(hi); // the bracket's ends in run batches
    double xa = xlo, sa = loSlack, xb = xhi, sb = hiSlack;
    int lastSide = 0, slow = 0; // lastSide: +1 when lo moved last, −1 when hi did
    double step = std::numeric_limits<double>::infinity(), stepBefore = step;
    int last = hi;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (slow < 3) {
            double cross = std::numeric_limits<double>::quiet_NaN();
            if (std::isfinite(sa) && std::isfinite(sb) && sa != sb)
                cross = xb + (xa - xb) * (sb / (sb - sa));
            if (!(cross > xlo && cross < xhi) && std::isfinite(loSlack) &&
                std::isfinite(hiSlack) && loSlack > hiSlack)
                cross = xlo + (xhi - xlo) * (loSlack / (loSlack - hiSlack));
            if (cross > xlo && cross < xhi)
                mid = std::clamp(below(std::floor(cross)), lo + 1, hi - 1);
        } else {
            slow = 0;
        }
        const int width = hi - lo;
        const auto p = probe(mid);
        const int side = p.ok ? 1 : -1;
        const double xmid = run(mid);
        (p.ok ? lo : hi) = mid;
        (p.ok ? xlo : xhi) = xmid;
        (p.ok ? loSlack : hiSlack) = p.slack;
        if (side == lastSide) (p.ok ? hiSlack : loSlack) /= 2;
        lastSide = side;
        xa = xb, sa = sb;
        xb = xmid, sb = p.slack;
        // Progress: the bracket halved, or the step is under half the one before the last
        // (Brent's rule: the secant closing in from one side).
        const double thisStep = std::abs(double(mid - last));
        const bool closing = 2 * thisStep <= stepBefore;
        stepBefore = step, step = thisStep, last = mid;
        slow = 2 * (hi - lo) > width && !closing ? slow + 1 : 0;
    }
    return lo;
}

/// Server mode's 99th percentile in flight for a mean of n (Poisson arrivals): ⌈n + 2.33·√n⌉.
double serverPeak(int n) { return std::ceil(n + 2.33 * std::sqrt(double(n))); }
/// The largest n whose serverPeak is at most `batch` (0 if none).
int largestMeanUnderPeak(double batch) {
    // The closed form's first guess, then exact: the ceiling can move it by one either way.
    const double root = (-2.33 + std::sqrt(2.33 * 2.33 + 4.0 * std::max(0.0, batch))) / 2;
    int n = std::max(0, int(std::floor(root * root)));
    while (serverPeak(n + 1) <= batch)
        ++n;
    while (n > 0 && serverPeak(n) > batch)
        --n;
    return n;
}

/// The batch served. Server mode: requests arrive as a Poisson process, so the number in
/// flight fluctuates around its mean N with a 99th percentile near N + 2.33·√N; the mean batch
/// is the largest whose 99th percentile still fits in KV memory (and the requested cap) and
/// meets the latency objectives. Offline mode runs the requested batch (flagged if it does not
/// fit). `meets` says whether even one request meets the objectives.
int servedBatch(const Scenario& sc, const Serving& sv, int fit, bool& meets) {
    const InferenceWorkload& in = sc.workload.inference;
    int batch = in.batch > 0 ? in.batch : std::max(1, fit);
    const bool server = in.mode == ServingMode::Server;
    if (server) batch = std::min(batch, std::max(1, fit));
    meets = true;
    // A prefill pool generates no tokens to pace: its batch is its chunk (prefillPool).
    const bool constrained = in.phase != ServingPhase::Prefill &&
                             (server || in.ttftObjectiveS > 0 || in.tpotObjectiveS > 0);
    if (!constrained) return batch;
    // The largest mean batch whose peak fits (all of them offline).
    const int top = server ? largestMeanUnderPeak(batch) : batch;
    if (top < 1) {
        meets = false;
        return 1;
    }
    // Whether n meets the objectives at its peak, and by how much (the least relative margin).
    struct Probe {
        bool ok;
        double slack;
    };
    auto probe = [&](int n) {
        const auto it = sv.iteration(server ? serverPeak(n) : n);
        Probe p{true, std::numeric_limits<double>::infinity()};
        if (in.tpotObjectiveS > 0) {
            const double tpot = it.roundS() / sv.tokensPerStep;
            p.ok = p.ok && tpot <= in.tpotObjectiveS;
            p.slack = std::min(p.slack, 1.0 - tpot / in.tpotObjectiveS);
        }
        if (in.ttftObjectiveS > 0) {
            const double ttft = sv.ttft(it);
            p.ok = p.ok && ttft <= in.ttftObjectiveS;
            p.slack = std::min(p.slack, 1.0 - ttft / in.ttftObjectiveS);
        }
        return p;
    };
    const Probe high = probe(top);
    if (high.ok) return top;
    if (top == 1) {
        meets = false;
        return 1;
    }
    // The bracket's low end is no batch at all, whose margin is only estimated — a round that
    // reads the stage's weights and nothing else, and the prompt alone for TTFT — to place the
    // first probe; batch 1 is probed only if every batch above it fails (then nothing meets).
    const double weightsOnlyS = sv.p * sv.weightsBytes / (sv.bw * sv.etaMem) / sv.tokensPerStep;
    double emptySlack = std::numeric_limits<double>::infinity();
    if (in.tpotObjectiveS > 0) emptySlack = 1.0 - weightsOnlyS / in.tpotObjectiveS;
    if (in.ttftObjectiveS > 0)
        emptySlack = std::min(emptySlack, 1.0 - sv.promptS / in.ttftObjectiveS);
    auto run = [&](int n) { return server ? serverPeak(n) : double(n); };
    auto below = [&](double x) {
        return server ? largestMeanUnderPeak(x) : int(std::min<double>(x, top));
    };
    if (!(emptySlack > 0)) {
        // Even the estimate fails: batch 1 decides at once whether anything meets.
        const Probe low = probe(1);
        if (!low.ok) {
            meets = false;
            return 1;
        }
        return largestMeeting(1, low.slack, top, high.slack, probe, run, below);
    }
    const int n = largestMeeting(0, emptySlack, top, high.slack, probe, run, below);
    if (n < 1) meets = false; // batch 1 was probed and failed
    return std::max(1, n);
}

/// The round's parts by cause and by roofline side, and the prompt's prefill parts.
void roundBreakdown(const Serving& sv, const Serving::Iteration& it, InferenceResult& ir) {
    ir.draftS = it.draftS;
    ir.decodeWeightReadS = it.decode.weight;
    ir.decodeKvReadS = it.decode.kv;
    ir.decodeComputeS = it.decode.compute;
    ir.decodeCommS = it.decode.comm;
    ir.decodeOverheadS = it.decode.overhead;
    ir.decodeWeightSideS = it.decode.weightSide;
    ir.decodeGemmSideS = it.decode.gemmSide;
    ir.decodeKvSideS = it.decode.kvSide;
    ir.decodeAttentionSideS = it.decode.attentionSide;
    ir.prefillPerIterationS = it.prefillPerIterS;
    const Costs prompt = sv.promptStage.scaled(sv.p);
    ir.prefillComputeS = prompt.compute + prompt.weight + prompt.kv;
    ir.prefillCommS = prompt.comm;
    ir.prefillAllToAllS = prompt.a2a;
    ir.prefillOverheadS = prompt.overhead;
}

/// A finite benchmark (workload.requests R, trtllm-bench's --num-requests): R fixed-length
/// requests, all queued at the start, run in waves of C = batch × replicas. Every sequence of a
/// wave finishes in the same round and the next wave takes its place, so the makespan is the
/// first token's TTFT, each full wave's output rounds, and those of a last wave of the R mod C
/// left over (spread over the replicas, so its rounds run a smaller batch). Throughput is the
/// benchmark's: R·O output tokens over the makespan.
void finiteBenchmark(const Scenario& sc, const Serving& sv, int batch, Result& r) {
    const long long requests = sc.workload.inference.requests;
    if (requests <= 0) return;
    InferenceResult& ir = r.inference;
    const long long replicas = sc.strategy.dp, wave = batch * replicas;
    const long long full = requests / wave, rest = requests % wave;
    double makespan = ir.ttftS + double(full) * sv.output * ir.tpotS;
    if (rest > 0) {
        const double lastBatch = std::ceil(double(rest) / double(replicas));
        makespan += sv.output * sv.iteration(lastBatch).roundS() / sv.tokensPerStep;
    }
    ir.waves = int(std::min<long long>(full + (rest > 0 ? 1 : 0), INT_MAX));
    ir.makespanS = makespan;
    ir.outputTokensPerS = double(requests) * sv.output / makespan;
    ir.outputTokensPerSPerGpu = ir.outputTokensPerS / sc.gpus;
    ir.requestsPerS = double(requests) / makespan;
    r.tokensPerS = ir.outputTokensPerS;
    r.tokensPerSPerGpu = ir.outputTokensPerSPerGpu;
    r.samplesPerS = ir.requestsPerS;
}

} // namespace

Result evaluateInference(const Scenario& sc, PrefillMemo* memo) {
    const Serving sv(sc, memo);
    const InferenceWorkload& in = sc.workload.inference;
    const double perSequence = sv.kvPerToken * sv.reservedContext;
    const int fit = maxBatchThatFits(sc, sv);
    bool meets = true;
    int batch = servedBatch(sc, sv, fit, meets);
    // A finite benchmark never runs more sequences than it has requests.
    if (in.requests > 0)
        batch = int(std::min<double>(batch, std::ceil(double(in.requests) / sc.strategy.dp)));
    // A deployment below capacity holds its mean load's share of the batch it runs at capacity
    // (a prefill pool instead idles between full passes: prefillPool).
    if (in.meanLoad < 1 && in.phase != ServingPhase::Prefill)
        batch = std::max(1, int(std::lround(in.meanLoad * batch)));
    const auto it = sv.iteration(batch);
    const double tpot = it.roundS() / sv.tokensPerStep;
    const double replicas = sc.strategy.dp;

    Result r;
    r.isInference = true;
    InferenceResult& ir = r.inference;
    ir.batch = batch;
    ir.maxBatchThatFits = fit;
    ir.meetsObjectives = meets;
    ir.tpotS = tpot;
    ir.ttftS = sv.ttft(it);
    ir.e2eLatencyS = ir.ttftS + (sv.output - 1) * tpot;
    ir.outputTokensPerS = batch / tpot * replicas;
    ir.outputTokensPerSPerGpu = ir.outputTokensPerS / sc.gpus;
    ir.requestsPerS = ir.outputTokensPerS / sv.output;
    ir.tokensPerStep = sv.tokensPerStep;
    ir.kvTransferBytes = sv.kvTransferBytes();
    ir.kvTransferS = sv.kvTransferS();
    ir.prefixLoadS = sv.prefixLoadS;
    ir.prefixLoadBytesPerS = sv.prefixLoadS > 0 ? sv.prefixLoadRate() : 0.0;
    ir.prefixLoadWaitS = sv.promptLoadWaitS;
    ir.kvBytesPerToken = sv.kvPerToken;
    ir.kvBytesPerSequence = perSequence;
    roundBreakdown(sv, it, ir);
    roundView(sc, sv, it, batch, r);
    servingMemory(sc, sv, batch * perSequence, batch, r);
    if (in.phase == ServingPhase::Prefill) prefillPool(sc, sv, r);
    finiteBenchmark(sc, sv, batch, r);
    servingCost(sc, r);
    return r;
}

} // namespace madmax::detail
