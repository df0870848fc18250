// The counter tracks of counter_tracks.h written for one rank's hand-built ops and arrivals, with
// every point worked out by hand.
#include "modeler/export/counter_tracks.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "modeler/io/json_writer.h"
#include "tests/modeler/export/export_test_util.h"

namespace lumos::modeler {
namespace {

using Points = std::vector<std::pair<int64_t, double>>;

// The points of counter `name` (time from the origin, value), in file order.
Points CounterPoints(internal::RankCounters counters, const std::string& name) {
  std::string json;
  {
    io::JsonWriter w([&json](std::string_view chunk) {
      json.append(chunk);
      return Status::Ok();
    });
    w.BeginObject();
    w.Key("traceEvents");
    w.BeginArray();
    internal::WriteRankCounters(std::move(counters), 1, 0, &w);
    w.EndArray();
    w.EndObject();
    EXPECT_TRUE(w.Finish().ok());
  }
  export_test::ParsedTrace trace;
  EXPECT_TRUE(export_test::ParseTrace(json, &trace)) << json;
  Points points;
  for (const export_test::Event& e : trace.events) {
    if (e.ph != "C" || e.name != name) continue;
    double value = -1;
    for (auto field : simdjson::dom::object(e.args)) {
      EXPECT_EQ(field.value.get_double().get(value), simdjson::SUCCESS);
    }
    points.emplace_back(e.ts_ns, value);
  }
  return points;
}

// Two back-to-back collectives on different communicators: A [0,100 µs) arrived 5 µs late,
// B [100,200 µs) 7 µs late, B listed first (its communicator's key sorts first). At 100 µs A
// ends and B starts: the track reads 7 from 100 to 200, then 0.
TEST(CounterTracksTest, ArrivalStartingAsAnotherEndsKeepsItsLateness) {
  internal::RankCounters c;
  c.arrivals.push_back({100'000, 200'000, 7.0});  // B
  c.arrivals.push_back({0, 100'000, 5.0});        // A
  const Points points = CounterPoints(std::move(c), "arrival late by");
  ASSERT_FALSE(points.empty());
  // The last point at each time is the value from then on.
  Points last;
  for (const auto& p : points) {
    if (!last.empty() && last.back().first == p.first) last.pop_back();
    last.push_back(p);
  }
  EXPECT_EQ(last, (Points{{0, 5.0}, {100'000, 7.0}, {200'000, 0.0}}));
}

// Overlapping collectives (two communicators on two streams): A [0,100 µs) 5 µs late, B
// [50,150 µs) 7 µs late. From 50 the track reads B's 7 and stays there until B ends at 150 (A's
// end at 100 does not zero it).
TEST(CounterTracksTest, OverlappingArrivalsReadTheOneStillRunning) {
  internal::RankCounters c;
  c.arrivals.push_back({0, 100'000, 5.0});
  c.arrivals.push_back({50'000, 150'000, 7.0});
  const Points points = CounterPoints(std::move(c), "arrival late by");
  EXPECT_EQ(points, (Points{{0, 5.0}, {50'000, 7.0}, {150'000, 0.0}}));
}

// "GPU busy" walks the bins an op covers in one step: an op of 2.5 bins from 50 µs gives the
// points worked out by hand, and an op whose start is a broken timestamp (a copy of the H200
// periodic window, 56 years before the rest) is written at once, not bin by bin (the export of
// that directory never ended).
TEST(CounterTracksTest, BusyJumpsOverTheWholeBinsOfAnOp) {
  internal::RankCounters c;
  c.ops.push_back({50'000, 50'000, 300'000});  // Bins 0 (half), 1, 2 (whole), 3 (none).
  EXPECT_EQ(CounterPoints(std::move(c), "GPU busy"),
            (Points{{0, 0.5}, {100'000, 1.0}, {300'000, 0.0}}));
  internal::RankCounters broken;
  const int64_t decades = int64_t{1'796'395'224} * 1'000'000'000;
  broken.ops.push_back({0, 0, decades + 150'000});
  const Points points = CounterPoints(std::move(broken), "GPU busy");
  const Points want = {{0, 1.0}, {decades + 100'000, 0.5}, {decades + 200'000, 0.0}};
  ASSERT_EQ(points.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    // The parsed µs are doubles: 1.8e18 ns keeps about 0.2 µs.
    EXPECT_NEAR(static_cast<double>(points[i].first), static_cast<double>(want[i].first), 1000.0);
    EXPECT_EQ(points[i].second, want[i].second);
  }
}

}  // namespace
}  // namespace lumos::modeler
