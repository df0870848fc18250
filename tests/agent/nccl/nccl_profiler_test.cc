// The profiler plugin in-process, driven the way NCCL drives it (a scripted core in the test),
// so its lock-free paths run under the sanitizers too. The agent starts and stops once per
// process, hence the one long test case.
#include "agent/nccl/nccl_profiler.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agent/nccl/nccl_channel.h"
#include "agent/runtime/agent_runtime.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

namespace abi = nccl_abi;
namespace pb = ::lumos::trace;

uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

// A scripted NCCL core for one communicator.
class FakeCore {
 public:
  explicit FakeCore(void* context) : context_(context) {}

  void* Start(abi::EventDescrV5 descr) {
    void* handle = reinterpret_cast<void*>(0xdead);  // Must be overwritten.
    EXPECT_EQ(ncclProfiler_v5.start_event(context_, &handle, &descr), ncclSuccess);
    return handle;
  }
  void* Api(uint64_t type, void* stream) {
    abi::EventDescrV5 d{};
    d.type = type;
    if (type == abi::kProfileCollApi) d.coll_api = {"AllReduce", 1, "ncclInt8", 0, stream, false};
    if (type == abi::kProfileP2pApi) d.p2p_api = {"Send", 1, "ncclInt8", stream, false};
    return Start(d);
  }
  void* Group() {
    abi::EventDescrV5 d{};
    d.type = abi::kProfileGroupApi;
    return Start(d);
  }
  void* CollApi(void* group, const char* func, size_t count, void* stream) {
    abi::EventDescrV5 d{};
    d.type = abi::kProfileCollApi;
    d.parent = group;
    d.coll_api = {func, count, "ncclFloat32", 0, stream, false};
    return Start(d);
  }
  void* Coll(void* parent, uint64_t seq, const char* func, size_t count, const char* type,
             uint8_t channels, int root = 0) {
    abi::EventDescrV5 d{};
    d.type = abi::kProfileColl;
    d.parent = parent;
    d.coll = {seq, func, nullptr, nullptr, count, root, type, channels, 8, "Ring", "LL", nullptr};
    return Start(d);
  }
  void* P2p(void* parent, const char* func, size_t count, int peer, uint8_t channels = 1) {
    abi::EventDescrV5 d{};
    d.type = abi::kProfileP2p;
    d.parent = parent;
    d.p2p = {func, nullptr, "ncclUint8", count, peer, channels, nullptr};
    return Start(d);
  }
  // One kernel channel: start at `start`, stop `duration` later.
  void Kernel(void* op, uint8_t channel, uint64_t start, uint64_t duration, bool stop = true) {
    abi::EventDescrV5 d{};
    d.type = abi::kProfileKernelCh;
    d.parent = op;
    d.kernel_ch = {channel, start};
    void* kernel = Start(d);
    ASSERT_NE(kernel, nullptr);
    abi::EventStateArgs args{};
    args.kernel_ch.timer = start + duration;
    ncclProfiler_v5.record_event_state(kernel, abi::kStateKernelChStop, &args);
    if (stop) ncclProfiler_v5.stop_event(kernel);
  }

 private:
  void* context_;
};

void Stop(void* handle) { EXPECT_EQ(ncclProfiler_v5.stop_event(handle), ncclSuccess); }

struct Trace {
  std::vector<pb::NcclCollective> collectives;
  std::vector<int64_t> starts;
  std::vector<pb::Communicator> communicators;
  std::map<std::string, uint64_t> loss;
};

Trace ReadTrace(const std::string& path) {
  Trace trace;
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return trace;
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (packet.has_collective()) {
          trace.collectives.push_back(packet.collective());
          trace.starts.push_back(context.start_ns);
        }
        if (packet.has_communicator()) trace.communicators.push_back(packet.communicator());
        if (packet.has_loss()) trace.loss[packet.loss().detail()] += packet.loss().count();
        return Status::Ok();
      },
      &result);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(result.has_trailer);
  return trace;
}

// The record of `op` number `seq` on communicator `comm_id`.
const pb::NcclCollective* FindSeq(const Trace& trace, pb::CollectiveOp op, uint64_t seq,
                                  uint64_t comm_id) {
  for (const auto& c : trace.collectives) {
    if (c.op() == op && c.seq_number() == seq && c.comm_id() == comm_id) return &c;
  }
  return nullptr;
}

// A v5 communicator, rank 0 of `nranks` (later sections).
void* InitComm(uint64_t comm_id, const char* name, int nranks) {
  void* context = nullptr;
  int mask = 0;
  EXPECT_EQ(ncclProfiler_v5.init(&context, comm_id, &mask, name, 1, nranks, 0, nullptr),
            ncclSuccess);
  EXPECT_NE(context, nullptr) << name;
  return context;
}

// Races sequenced by hand (section 7), through the plugin's test hooks: between a read of an
// API slot and its claim (finalize) or its link (a late Coll), another claim (the sweep's; here
// a GroupApi's stop, which claims the same way) frees the slot and the heir's call takes it.
struct SlotRace {
  FakeCore* heir_core = nullptr;
  void* claimed_group = nullptr;  // Its stop claims and frees the raced slot.
  void* heir_stream = nullptr;
  void* hog = nullptr;  // Link race: holds a slot until the heir's Coll needs it.
  void* heir_group = nullptr;
  void* heir_api = nullptr;
  void* heir_coll = nullptr;
};
SlotRace g_race;
void HandTheSlotToTheHeir() {
  Stop(g_race.claimed_group);
  g_race.heir_group = g_race.heir_core->Group();
  g_race.heir_api =
      g_race.heir_core->CollApi(g_race.heir_group, "AllReduce", 16, g_race.heir_stream);
}
void ClaimBeforeFinalizeDoes() {
  internal::SetNcclFinalizeScanHookForTest(nullptr);  // Once.
  HandTheSlotToTheHeir();
}
void FreeAndReuseTheParentBeforeTheLink() {
  internal::SetNcclLinkHookForTest(nullptr);  // Once.
  HandTheSlotToTheHeir();
  Stop(g_race.hog);
  g_race.heir_core->Kernel(g_race.hog, 0, RealtimeNs(), 10);  // Written: its slot is free.
  g_race.heir_coll = g_race.heir_core->Coll(g_race.heir_api, 0, "AllReduce", 16, "ncclFloat32", 1);
}

TEST(NcclProfilerTest, BuildsCollectivesFromNcclEvents) {
  lumos::testing::TempDir dir;
  setenv("LUMOS_OUTPUT_DIR", dir.path().c_str(), 1);
  setenv("LUMOS_CHANNELS", "nccl_plugin", 1);
  setenv("LUMOS_FLUSH_INTERVAL_MS", "10", 1);

  // v5 communicator "tp": rank 1 of 4.
  void* tp = nullptr;
  int mask = 0;
  ASSERT_EQ(ncclProfiler_v5.init(&tp, 0xA11, &mask, "tp", 1, 4, 1, nullptr), ncclSuccess);
  ASSERT_NE(tp, nullptr);
  ASSERT_FALSE(Agent::Get().trace_path().empty());
  const uint64_t wanted = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh |
                          abi::kProfileGroupApi | abi::kProfileCollApi | abi::kProfileP2pApi;
  EXPECT_EQ(static_cast<uint64_t>(mask), wanted);
  FakeCore core(tp);
  void* stream = reinterpret_cast<void*>(0x77);

  // 1. Ungrouped all-reduce: the Coll runs inside its API event; it stops ("enqueued") before
  //    its two kernel channels, which finish on another thread (NCCL's proxy thread).
  abi::EventDescrV5 group{};
  group.type = abi::kProfileGroupApi;
  void* group_handle = core.Start(group);
  EXPECT_NE(group_handle, nullptr);
  void* api = core.Api(abi::kProfileCollApi, stream);
  void* coll = core.Coll(api, 5, "AllReduce", 256, "ncclBfloat16", 2);
  ASSERT_NE(coll, nullptr);
  Stop(coll);
  Stop(api);
  Stop(group_handle);
  const uint64_t t0 = RealtimeNs();
  std::thread proxy([&] {
    core.Kernel(coll, 0, t0, 5000);
    core.Kernel(coll, 1, t0 + 100, 5000);
  });
  proxy.join();

  // 2. Grouped send: its API event stops before the P2p starts (at ncclGroupEnd).
  void* p2p_api = core.Api(abi::kProfileP2pApi, stream);
  Stop(p2p_api);
  void* send = core.P2p(p2p_api, "Send", 100, 3);
  Stop(send);
  core.Kernel(send, 0, RealtimeNs(), 2000);

  // 3. A broadcast whose third channel never reports: written at finalize, with what came.
  void* waiting = core.Coll(nullptr, 0, "Broadcast", 8, "ncclInt64", 3, /*root=*/2);
  Stop(waiting);
  core.Kernel(waiting, 0, RealtimeNs(), 700);
  core.Kernel(waiting, 1, RealtimeNs(), 700, /*stop=*/false);  // Never stopped either.

  // 4. A channel more than announced is ignored (null handle), not counted twice.
  void* surplus = core.Coll(nullptr, 1, "AllGather", 64, "ncclFloat32", 1);
  Stop(surplus);
  core.Kernel(surplus, 0, RealtimeNs(), 300);
  abi::EventDescrV5 extra{};
  extra.type = abi::kProfileKernelCh;
  extra.parent = surplus;  // Stale by now: the all-gather was written.
  EXPECT_EQ(core.Start(extra), nullptr);

  // Stale and foreign handles are ignored.
  Stop(reinterpret_cast<void*>(0x12345678));
  Stop(coll);
  EXPECT_EQ(ncclProfiler_v5.finalize(tp), ncclSuccess);

  // 5. v4 (NCCL 2.27): no API events, so host times are the Coll's own start and stop.
  void* dp = nullptr;
  ASSERT_EQ(ncclProfiler_v4.init(&dp, &mask, "dp", 0xB22, 1, 2, 0, nullptr), ncclSuccess);
  EXPECT_EQ(static_cast<uint64_t>(mask),
            abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh);
  abi::EventDescrV4 v4{};
  v4.type = static_cast<uint8_t>(abi::kProfileColl);
  v4.coll = {0, "ReduceScatter", nullptr, nullptr, 64, 0, "ncclFloat32", 1, 8, "Tree", "Simple"};
  void* rs = nullptr;
  ASSERT_EQ(ncclProfiler_v4.start_event(dp, &rs, &v4), ncclSuccess);
  ASSERT_NE(rs, nullptr);
  Stop(rs);
  abi::EventDescrV4 kernel{};
  kernel.type = static_cast<uint8_t>(abi::kProfileKernelCh);
  kernel.parent = rs;
  kernel.kernel_ch = {0, 1000};
  void* kernel_handle = nullptr;
  ncclProfiler_v4.start_event(dp, &kernel_handle, &kernel);
  abi::EventStateArgs args{};
  args.kernel_ch.timer = 1900;
  ncclProfiler_v4.record_event_state(kernel_handle, abi::kStateKernelChStop, &args);
  ncclProfiler_v4.stop_event(kernel_handle);

  // 6. Pool exhaustion: 4 slots, 6 operations in flight: 2 get null handles, counted as loss.
  internal::SetNcclEventPoolCapacityForTest(4);
  std::vector<void*> handles;
  for (int i = 0; i < 6; ++i) {
    abi::EventDescrV4 d{};
    d.type = static_cast<uint8_t>(abi::kProfileColl);
    d.coll = {static_cast<uint64_t>(10 + i),
              "AllReduce",
              nullptr,
              nullptr,
              1,
              0,
              "ncclInt8",
              0,
              8,
              "Ring",
              "LL"};
    void* handle = nullptr;
    ncclProfiler_v4.start_event(dp, &handle, &d);
    handles.push_back(handle);
  }
  int null_handles = 0;
  for (void* handle : handles) null_handles += handle == nullptr ? 1 : 0;
  EXPECT_EQ(null_handles, 2);
  for (void* handle : handles) Stop(handle);
  internal::SetNcclEventPoolCapacityForTest(kNcclEventPoolSize);
  EXPECT_EQ(ncclProfiler_v4.finalize(dp), ncclSuccess);

  // 7. A one-rank communicator: NCCL 2.28 runs its collectives without a Coll event
  //    (ncclLaunchOneRank), so the API event is all there is. Each becomes a record when its
  //    GroupApi stops, and frees its slot: 300 calls through a 64-slot pool lose nothing.
  internal::SetNcclEventPoolCapacityForTest(64);
  void* solo = nullptr;
  ASSERT_EQ(ncclProfiler_v5.init(&solo, 0xC33, &mask, "solo", 1, 1, 0, nullptr), ncclSuccess);
  ASSERT_NE(solo, nullptr);
  FakeCore solo_core(solo);
  void* solo_stream = reinterpret_cast<void*>(0x88);
  for (int i = 0; i < 300; ++i) {
    void* solo_group = solo_core.Group();
    // As the wrapper publishes it around the real call (nccl_channel.h).
    t_nccl_call = {
        .active = true, .reduce_op = static_cast<uint8_t>(schema::ReduceOp::kMax), .stream = 0x88};
    void* solo_api = solo_core.CollApi(solo_group, "AllReduce", 4, solo_stream);
    ASSERT_NE(solo_api, nullptr) << i;
    EXPECT_TRUE(t_nccl_call.plugin_saw);  // The wrapper leaves this call to the plugin.
    t_nccl_call = {};
    Stop(solo_api);
    Stop(solo_group);
  }
  //    Empty collectives on a communicator of 2: NCCL drops them after the API event; the slot
  //    is freed, and nothing is written (no seq number exists for them).
  void* pair = nullptr;
  ASSERT_EQ(ncclProfiler_v5.init(&pair, 0xD44, &mask, "pair", 1, 2, 0, nullptr), ncclSuccess);
  FakeCore pair_core(pair);
  for (int i = 0; i < 300; ++i) {
    void* pair_group = pair_core.Group();
    void* empty = pair_core.CollApi(pair_group, "AllReduce", 0, stream);
    ASSERT_NE(empty, nullptr) << i;
    Stop(empty);
    Stop(pair_group);
  }
  //    A grouped call whose GroupApi stops after its Coll started keeps the API's host times,
  //    and the wrapper's reduce op reaches the plugin's record.
  void* pair_group = pair_core.Group();
  t_nccl_call = {.active = true, .reduce_op = static_cast<uint8_t>(schema::ReduceOp::kMin)};
  void* grouped_api = pair_core.CollApi(pair_group, "AllReduce", 16, stream);
  t_nccl_call = {};
  Stop(grouped_api);
  void* grouped = pair_core.Coll(grouped_api, 3, "AllReduce", 16, "ncclFloat32", 1);
  ASSERT_NE(grouped, nullptr);
  Stop(grouped);
  Stop(pair_group);
  pair_core.Kernel(grouped, 0, RealtimeNs(), 400);
  //    A launch mode where the Coll starts only after its GroupApi stopped (a host callback):
  //    the API event still waits for it.
  void* late_group = pair_core.Group();
  t_nccl_call = {.active = true, .reduce_op = static_cast<uint8_t>(schema::ReduceOp::kProd)};
  void* late_api = pair_core.CollApi(late_group, "AllReduce", 16, reinterpret_cast<void*>(0x99));
  t_nccl_call = {};
  Stop(late_api);
  Stop(late_group);
  void* late_coll = pair_core.Coll(late_api, 4, "AllReduce", 16, "ncclFloat32", 1);
  Stop(late_coll);
  pair_core.Kernel(late_coll, 0, RealtimeNs(), 450);

  //    ncclCommDestroy's finalize racing another claim of the same stopped API slot (the
  //    writer's sweep, here its GroupApi's stop, which claims it the same way): the other claim
  //    wins and frees the slot, and another communicator's event takes it before finalize
  //    claims. Finalize must leave that live event alone. One slot, so the heir gets the same.
  internal::SetNcclEventPoolCapacityForTest(1);
  void* doomed = InitComm(0xF55, "doomed", 2);
  void* heir = InitComm(0xF66, "heir", 1);
  FakeCore doomed_core(doomed);
  FakeCore heir_core(heir);
  g_race.heir_core = &heir_core;
  g_race.heir_stream = reinterpret_cast<void*>(0x66);
  g_race.claimed_group = doomed_core.Group();
  void* orphan = doomed_core.CollApi(g_race.claimed_group, "AllReduce", 0, stream);  // No child.
  ASSERT_NE(orphan, nullptr);
  Stop(orphan);
  internal::SetNcclFinalizeScanHookForTest(&ClaimBeforeFinalizeDoes);
  EXPECT_EQ(ncclProfiler_v5.finalize(doomed), ncclSuccess);
  internal::SetNcclFinalizeScanHookForTest(nullptr);
  ASSERT_NE(g_race.heir_api, nullptr);  // The heir's one-rank call holds the only slot.
  Stop(g_race.heir_api);
  Stop(g_race.heir_group);  // Its record: only if finalize left the slot to it.
  EXPECT_EQ(ncclProfiler_v5.finalize(heir), ncclSuccess);

  //    The pool full when a call's API event starts: the call is still marked seen (else the
  //    wrapper records it as well: NCCL starts its Coll anyway, checking only its activation
  //    mask), and its Coll, once it gets a slot, is its one record, with the call's stream and
  //    reduce op.
  void* crowded = InitComm(0xF77, "crowded", 2);
  FakeCore crowded_core(crowded);
  void* hog = crowded_core.Coll(nullptr, 0, "Broadcast", 8, "ncclInt8", 1);
  ASSERT_NE(hog, nullptr);  // Holds the only slot.
  t_nccl_call = {.active = true,
                 .reduce_op = static_cast<uint8_t>(schema::ReduceOp::kMax),
                 .stream = 0x55,
                 .start_ns = 1};
  void* api_without_slot =
      crowded_core.CollApi(nullptr, "AllReduce", 16, reinterpret_cast<void*>(0x55));
  EXPECT_EQ(api_without_slot, nullptr);
  EXPECT_TRUE(t_nccl_call.plugin_saw);  // The wrapper leaves the call to the plugin.
  Stop(hog);
  crowded_core.Kernel(hog, 0, RealtimeNs(), 100);  // Written; the slot is free again.
  void* coll_without_api =
      crowded_core.Coll(api_without_slot, 0, "AllReduce", 16, "ncclFloat32", 1);
  t_nccl_call = {};
  ASSERT_NE(coll_without_api, nullptr);
  Stop(coll_without_api);
  crowded_core.Kernel(coll_without_api, 0, RealtimeNs(), 300);
  EXPECT_EQ(ncclProfiler_v5.finalize(crowded), ncclSuccess);

  //    A late link racing the free of its API parent (LinkRace above). Three slots: the late
  //    API event, its Coll, and a hog that keeps the heir's API event on the freed slot.
  internal::SetNcclEventPoolCapacityForTest(3);
  void* linker = InitComm(0xF88, "linker", 2);
  void* heir2 = InitComm(0xF99, "heir2", 2);
  FakeCore linker_core(linker);
  FakeCore heir2_core(heir2);
  g_race = {.heir_core = &heir2_core, .heir_stream = reinterpret_cast<void*>(0x44)};
  g_race.claimed_group = linker_core.Group();
  void* late_parent = linker_core.CollApi(g_race.claimed_group, "AllReduce", 0, stream);
  ASSERT_NE(late_parent, nullptr);
  Stop(late_parent);
  g_race.hog = heir2_core.Coll(nullptr, 7, "Broadcast", 8, "ncclInt8", 1);
  ASSERT_NE(g_race.hog, nullptr);
  internal::SetNcclLinkHookForTest(&FreeAndReuseTheParentBeforeTheLink);
  void* linking_coll = linker_core.Coll(late_parent, 0, "AllGather", 8, "ncclInt8", 1);
  internal::SetNcclLinkHookForTest(nullptr);
  ASSERT_NE(linking_coll, nullptr);
  ASSERT_NE(g_race.heir_coll, nullptr);
  Stop(linking_coll);
  linker_core.Kernel(linking_coll, 0, RealtimeNs(), 20);
  Stop(g_race.heir_coll);
  heir2_core.Kernel(g_race.heir_coll, 0, RealtimeNs(), 30);
  Stop(g_race.heir_api);  // Its Coll's last part: written, and every slot is free.
  Stop(g_race.heir_group);
  std::vector<void*> probes;
  for (int i = 0; i < 3; ++i) {
    probes.push_back(heir2_core.Coll(nullptr, 100 + i, "Reduce", 1, "ncclInt8", 0));
    EXPECT_NE(probes.back(), nullptr) << i;
  }
  for (void* probe : probes) Stop(probe);
  EXPECT_EQ(ncclProfiler_v5.finalize(linker), ncclSuccess);
  EXPECT_EQ(ncclProfiler_v5.finalize(heir2), ncclSuccess);
  internal::SetNcclEventPoolCapacityForTest(kNcclEventPoolSize);

  // 8. NCCL 2.28 announcing more channels than it reports KernelCh events for (issue #2056):
  //    the send is written with what it has once it saw nothing for a second, not at finalize.
  void* starved = pair_core.P2p(nullptr, "Send", 64, 1, /*channels=*/2);
  ASSERT_NE(starved, nullptr);
  Stop(starved);
  pair_core.Kernel(starved, 0, RealtimeNs(), 800);
  timespec wait = {1, 300'000'000};
  nanosleep(&wait, nullptr);  // Idle for longer than the sweep's 1 s.
  // Then a writer pass (each one sweeps), done when this returns: the writer thread's own
  // passes (every 10 ms) may come late on a busy machine.
  ASSERT_TRUE(Agent::Get().FlushFromSignal(/*finish=*/false, /*timeout_ns=*/60'000'000'000));
  abi::EventDescrV5 late{};
  late.type = abi::kProfileKernelCh;
  late.parent = starved;
  EXPECT_EQ(pair_core.Start(late), nullptr);  // Written and freed already.

  // 9. The job exits without ncclCommDestroy while an operation waits for a kernel channel:
  //    the final flush writes it ("pair" is never finalized).
  void* pending = pair_core.Coll(nullptr, 77, "AllReduce", 8, "ncclFloat32", 2);
  ASSERT_NE(pending, nullptr);
  Stop(pending);
  pair_core.Kernel(pending, 0, RealtimeNs(), 600);

  // 10. More communicators than contexts: NCCL's activation mask is one int shared by all its
  //     communicators, so an init without a context must leave it as the others set it.
  std::vector<void*> many;
  int shared_mask = 0;
  for (uint32_t i = 0; i < kNcclMaxContexts + 1; ++i) {
    void* context = nullptr;
    ASSERT_EQ(ncclProfiler_v5.init(&context, 0xE000 + i, &shared_mask, "many", 1, 2, 1, nullptr),
              ncclSuccess);
    EXPECT_EQ(static_cast<uint64_t>(shared_mask), wanted) << i;
    many.push_back(context);
  }
  int without_context = 0;
  for (void* context : many) {
    without_context += context == nullptr ? 1 : 0;
    EXPECT_EQ(ncclProfiler_v5.finalize(context), ncclSuccess);
  }
  EXPECT_GE(without_context, 1);
  EXPECT_EQ(ncclProfiler_v5.finalize(solo), ncclSuccess);

  Agent::Get().Stop();
  // After Stop(): the close names the file after the largest communicator ("tp": rank 1 of 4).
  const std::string path = Agent::Get().trace_path();
  EXPECT_EQ(path.substr(path.size() - 13), ".rank1.pb.zst") << path;
  Trace trace = ReadTrace(path);

  ASSERT_GE(trace.communicators.size(), 4u);
  EXPECT_EQ(trace.communicators[0].comm_id(), 0xA11u);
  EXPECT_EQ(trace.communicators[0].rank(), 1);
  EXPECT_EQ(trace.communicators[0].comm_size(), 4u);
  EXPECT_EQ(trace.communicators[0].name(), "tp");
  EXPECT_EQ(trace.communicators[1].comm_id(), 0xB22u);
  EXPECT_EQ(trace.collectives.size(), 4u + 1u + 4u + 300u + 2u + 1u + 1u + 1u + 2u + 6u);

  const pb::NcclCollective* all_reduce = FindSeq(trace, pb::COLLECTIVE_OP_ALL_REDUCE, 5, 0xA11);
  ASSERT_NE(all_reduce, nullptr);
  EXPECT_EQ(all_reduce->comm_id(), 0xA11u);
  EXPECT_EQ(all_reduce->data_type(), pb::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(all_reduce->count(), 256u);
  EXPECT_EQ(all_reduce->bytes(), 512u);
  EXPECT_FALSE(all_reduce->has_root_rank());
  EXPECT_EQ(all_reduce->algorithm(), pb::NCCL_ALGORITHM_RING);
  EXPECT_EQ(all_reduce->protocol(), pb::NCCL_PROTOCOL_LL);
  EXPECT_EQ(all_reduce->channels(), 2u);
  EXPECT_EQ(all_reduce->stream_id(), 0x77u);
  EXPECT_EQ(all_reduce->comm_size(), 4u);
  EXPECT_TRUE(all_reduce->has_host_time());
  EXPECT_EQ(all_reduce->gpu_duration_ns(), 5100u);  // First channel start to last stop.
  // The fake GPU timer is CLOCK_REALTIME read after the call: it maps to just after its start.
  EXPECT_GT(all_reduce->gpu_start_offset_ns(), 0);
  EXPECT_LT(all_reduce->gpu_start_offset_ns(), 1'000'000'000);

  const pb::NcclCollective* sent = FindSeq(trace, pb::COLLECTIVE_OP_SEND, 0, 0xA11);
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->peer_rank(), 3);
  EXPECT_EQ(sent->bytes(), 100u);
  EXPECT_EQ(sent->stream_id(), 0x77u);  // From the P2pApi that had stopped already.
  EXPECT_EQ(sent->gpu_duration_ns(), 2000u);

  const pb::NcclCollective* broadcast = FindSeq(trace, pb::COLLECTIVE_OP_BROADCAST, 0, 0xA11);
  ASSERT_NE(broadcast, nullptr);
  EXPECT_EQ(broadcast->root_rank(), 2);
  EXPECT_EQ(broadcast->channels(), 3u);
  EXPECT_GE(broadcast->gpu_duration_ns(), 700u);  // What arrived before finalize.

  const pb::NcclCollective* gathered = FindSeq(trace, pb::COLLECTIVE_OP_ALL_GATHER, 1, 0xA11);
  ASSERT_NE(gathered, nullptr);
  EXPECT_EQ(gathered->gpu_duration_ns(), 300u);

  const pb::NcclCollective* v4_op = FindSeq(trace, pb::COLLECTIVE_OP_REDUCE_SCATTER, 0, 0xB22);
  ASSERT_NE(v4_op, nullptr);
  EXPECT_EQ(v4_op->comm_id(), 0xB22u);
  EXPECT_EQ(v4_op->algorithm(), pb::NCCL_ALGORITHM_TREE);
  EXPECT_EQ(v4_op->protocol(), pb::NCCL_PROTOCOL_SIMPLE);
  EXPECT_EQ(v4_op->gpu_duration_ns(), 900u);
  EXPECT_EQ(v4_op->gpu_start_offset_ns(), 0);  // Timer 1000 is no realtime clock: unknown.
  EXPECT_EQ(v4_op->stream_id(), 0u);

  int exhausted = 0;
  for (const auto& c : trace.collectives) {
    exhausted += c.comm_id() == 0xB22u && c.seq_number() >= 10 ? 1 : 0;
  }
  EXPECT_EQ(exhausted, 4);
  EXPECT_EQ(trace.loss["NCCL profiler events beyond the event pool"], 2u + 1u);
  EXPECT_EQ(trace.loss["NCCL communicators beyond the profiler's table"],
            static_cast<uint64_t>(without_context));

  // 7. The one-rank all-reduces, numbered per communicator and op, with the wrapper's reduce op.
  std::vector<bool> solo_seen(300, false);
  for (const auto& c : trace.collectives) {
    if (c.comm_id() != 0xC33u) continue;
    EXPECT_EQ(c.op(), pb::COLLECTIVE_OP_ALL_REDUCE);
    EXPECT_EQ(c.count(), 4u);
    EXPECT_EQ(c.bytes(), 16u);
    EXPECT_EQ(c.stream_id(), 0x88u);
    EXPECT_EQ(c.reduce_op(), pb::REDUCE_OP_MAX);
    EXPECT_EQ(c.comm_size(), 1u);
    EXPECT_TRUE(c.has_host_time());
    ASSERT_LT(c.seq_number(), 300u);
    EXPECT_FALSE(solo_seen[c.seq_number()]);
    solo_seen[c.seq_number()] = true;
  }
  EXPECT_EQ(std::count(solo_seen.begin(), solo_seen.end(), true), 300);
  const pb::NcclCollective* grouped_record = FindSeq(trace, pb::COLLECTIVE_OP_ALL_REDUCE, 3, 0xD44);
  ASSERT_NE(grouped_record, nullptr);
  EXPECT_EQ(grouped_record->comm_id(), 0xD44u);
  EXPECT_EQ(grouped_record->reduce_op(), pb::REDUCE_OP_MIN);
  EXPECT_EQ(grouped_record->gpu_duration_ns(), 400u);
  const pb::NcclCollective* late_record = FindSeq(trace, pb::COLLECTIVE_OP_ALL_REDUCE, 4, 0xD44);
  ASSERT_NE(late_record, nullptr);
  EXPECT_EQ(late_record->stream_id(), 0x99u);  // From its API event.
  EXPECT_EQ(late_record->reduce_op(), pb::REDUCE_OP_PROD);
  EXPECT_EQ(late_record->gpu_duration_ns(), 450u);
  //    The heir's call, whose slot finalize of "doomed" left alone.
  const pb::NcclCollective* heir_record = FindSeq(trace, pb::COLLECTIVE_OP_ALL_REDUCE, 0, 0xF66);
  ASSERT_NE(heir_record, nullptr);
  EXPECT_EQ(heir_record->stream_id(), 0x66u);
  //    The call whose API event found the pool full: recorded once, from its Coll.
  int crowded_all_reduces = 0;
  for (const auto& c : trace.collectives) {
    if (c.comm_id() != 0xF77u || c.op() != pb::COLLECTIVE_OP_ALL_REDUCE) continue;
    ++crowded_all_reduces;
    EXPECT_EQ(c.seq_number(), 0u);
    EXPECT_EQ(c.stream_id(), 0x55u);
    EXPECT_EQ(c.reduce_op(), pb::REDUCE_OP_MAX);
    EXPECT_EQ(c.gpu_duration_ns(), 300u);
  }
  EXPECT_EQ(crowded_all_reduces, 1);
  // 8. The starved send: one channel of the two it announced.
  const pb::NcclCollective* starved_record = nullptr;
  for (const auto& c : trace.collectives) {
    if (c.comm_id() == 0xD44u && c.op() == pb::COLLECTIVE_OP_SEND) starved_record = &c;
  }
  ASSERT_NE(starved_record, nullptr);
  EXPECT_EQ(starved_record->peer_rank(), 1);
  EXPECT_EQ(starved_record->channels(), 2u);
  EXPECT_EQ(starved_record->gpu_duration_ns(), 800u);
  // 9. Written at the final flush.
  const pb::NcclCollective* pending_record =
      FindSeq(trace, pb::COLLECTIVE_OP_ALL_REDUCE, 77, 0xD44);
  ASSERT_NE(pending_record, nullptr);
  EXPECT_EQ(pending_record->gpu_duration_ns(), 600u);
}

// After the agent stopped (or with the channel off), init asks NCCL for nothing.
TEST(NcclProfilerTest, InitWithTheChannelOffAsksForNoEvents) {
  setenv("LUMOS_CHANNELS", "nvtx", 1);
  void* context = reinterpret_cast<void*>(1);
  int mask = -1;
  ASSERT_EQ(ncclProfiler_v5.init(&context, 1, &mask, "x", 1, 1, 0, nullptr), ncclSuccess);
  EXPECT_EQ(mask, 0);
  EXPECT_EQ(context, nullptr);
  EXPECT_EQ(ncclProfiler_v5.init(nullptr, 1, &mask, "x", 1, 1, 0, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclProfiler_v5.finalize(nullptr), ncclSuccess);
  void* handle = nullptr;
  abi::EventDescrV5 d{};
  d.type = abi::kProfileColl;
  EXPECT_EQ(ncclProfiler_v5.start_event(nullptr, &handle, &d), ncclSuccess);
  EXPECT_EQ(handle, nullptr);
}

}  // namespace
}  // namespace lumos::agent
