// Design: how a channel that costs something even when its callbacks return at once (CUPTI:
// activity collection and API callbacks are CUPTI's work, not ours) is turned off between capture
// windows and on again when one is armed (windowed modes, agent_runtime.h). The agent holds one
// switch; the CUPTI channel registers itself.
// Threading: SetCapturing and FlushForWindow run on the writer thread (SetCapturing also once on
// the registering thread, under the agent's lock); never concurrently.
#pragma once

namespace lumos::agent {

class CaptureSwitch {
 public:
  virtual ~CaptureSwitch() = default;
  // armed: a window is armed or capturing (collect); false: dormant (collect nothing).
  virtual void SetCapturing(bool armed) = 0;
  // Before a window's last drain: hand over what is buffered (not the exit's final flush).
  virtual void FlushForWindow() = 0;
};

}  // namespace lumos::agent
