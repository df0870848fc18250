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

}  // namespace
}  // namespace lumos::modeler
