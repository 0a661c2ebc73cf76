/**
 * The camera's live framing advice: while the preview runs, a small frame
 * goes to the appliance about every 700 ms, one request at a time, and each
 * answer is shown over the preview. Staff may take the photo whatever it
 * says; the advice only helps the customer stand right.
 */
import type { FramingAdvice } from '../server/gui/contract.ts';
import { ApiProblem, call } from './api.ts';
import type { CameraView } from './camera.ts';

/** How often a frame is sent, and how long to wait after a failure other than "busy". */
const EVERY_MS = 700;
const AFTER_FAILURE_MS = 3000;
/** The frames' long side: the pose models look at 224–256 px anyway. */
const FRAME_SIDE = 256;

/** Starts sending frames from `camera`; `show` gets each advice (null when none can be had). Returns the stop function. */
export function watchFraming(camera: CameraView, show: (advice: FramingAdvice | null) => void): () => void {
  let active = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = async (): Promise<void> => {
    const started = performance.now();
    let wait = EVERY_MS;
    try {
      if (!document.hidden) {
        const frame = await camera.frame(FRAME_SIDE);
        if (!active) return;
        const advice = await call<FramingAdvice>('POST', '/gui/api/framing', frame);
        if (active) show(advice);
      }
    } catch (error) {
      // Busy with another screen's frame: this one is simply skipped.
      if (!(error instanceof ApiProblem && error.code === 'rate_limited')) {
        if (active) show(null);
        wait = AFTER_FAILURE_MS;
      }
    }
    if (active) timer = setTimeout(() => void tick(), Math.max(0, wait - (performance.now() - started)));
  };
  void tick();
  return () => {
    active = false;
    clearTimeout(timer);
  };
}
