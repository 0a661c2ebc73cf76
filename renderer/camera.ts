/**
 * The customer's photo from the camera: getUserMedia into a <video>, a
 * framing guide drawn over it (an outline, and the live advice with the
 * body's box when the appliance sends it), small frames for that advice, and
 * a still taken at the camera's own resolution, cropped to exactly what the
 * preview shows (the preview is mirrored like a mirror; the frames and the
 * photo are not).
 */
import type { FramingAdvice } from '../server/gui/contract.ts';
import { h, svg } from './dom.ts';

/** A running camera preview. */
export interface CameraView {
  element: HTMLElement;
  /** The live advice, in large words: shown above the preview, so it never covers the person it is about. */
  advice: HTMLElement;
  /** Takes a JPEG still of the current frame. */
  capture(): Promise<Blob>;
  /** A small JPEG of the current frame, `longSide` pixels on its long side, for the framing advice. */
  frame(longSide: number): Promise<Blob>;
  /** Counts down in large figures over the preview (3, 2, 1), so the customer is ready for the photo. */
  countdown(seconds: number): Promise<void>;
  /** Shows the framing advice (and the body's box over the preview); null falls back to the written instructions. */
  showAdvice(advice: FramingAdvice | null): void;
  stop(): void;
}

/** What the guide says when it has no live advice. */
export const STATIC_HINT =
  'Step back until the head is below the top line and the feet are above the bottom line; centre yourself on the middle line.';

/** Why the camera could not start, in plain words. */
export function cameraProblem(error: unknown): string {
  const name = error instanceof DOMException ? error.name : '';
  if (!window.isSecureContext || !navigator.mediaDevices) {
    return 'The camera only works when this page is opened on the appliance itself (http://127.0.0.1) or over https. Choose a photo file instead.';
  }
  if (name === 'NotAllowedError') return 'The camera is blocked. Allow camera access for this page, or choose a photo file.';
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'No camera was found. Connect one, or choose a photo file.';
  if (name === 'NotReadableError') return 'The camera is in use by another program. Close it, or choose a photo file.';
  return 'The camera could not start. Choose a photo file instead.';
}

function framingGuide(): SVGElement {
  // A body outline in a 3:4 frame: head near the top line, feet near the bottom one.
  return svg(
    'svg',
    { class: 'guide', viewBox: '0 0 300 400', preserveAspectRatio: 'xMidYMid meet', 'aria-hidden': 'true' },
    svg('line', { x1: 150, y1: 10, x2: 150, y2: 390, class: 'guide-centre' }),
    svg('line', { x1: 40, y1: 20, x2: 260, y2: 20, class: 'guide-limit' }),
    svg('line', { x1: 40, y1: 385, x2: 260, y2: 385, class: 'guide-limit' }),
    svg('ellipse', { cx: 150, cy: 55, rx: 24, ry: 30, class: 'guide-body' }),
    svg('path', {
      class: 'guide-body',
      d: 'M150 88 C 110 92 96 100 92 130 L 84 230 M150 88 C 190 92 204 100 208 130 L 216 230 M112 110 L 114 230 L 120 380 M188 110 L 186 230 L 180 380 M150 240 L 150 380',
    }),
  );
}

/** Starts the camera and shows its preview with the framing guide. */
export async function openCamera(): Promise<CameraView> {
  if (!navigator.mediaDevices?.getUserMedia) throw new DOMException('no mediaDevices', 'NotSupportedError');
  const stream = await navigator.mediaDevices.getUserMedia({
    video: { facingMode: 'user', width: { ideal: 1920 }, height: { ideal: 1080 } },
    audio: false,
  });
  const video = h('video', { class: 'camera-video', autoplay: true, muted: true, playsinline: true });
  video.srcObject = stream;
  await video.play().catch(() => undefined);
  const advice = h('p', { class: 'guide-text', role: 'status', 'aria-live': 'polite', 'data-advice': 'none' }, STATIC_HINT);
  const box = h('div', { class: 'framing-box', hidden: true });
  const element = h('div', { class: 'camera' }, video, framingGuide(), box);
  const loaded = async (): Promise<void> => {
    if (video.videoWidth === 0) await new Promise((resolve) => video.addEventListener('loadeddata', resolve, { once: true }));
  };
  const jpeg = (canvas: HTMLCanvasElement, quality: number): Promise<Blob> =>
    new Promise<Blob>((resolve, reject) =>
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('the photo could not be taken'))), 'image/jpeg', quality),
    );
  /**
   * The part of the camera's frame the preview shows (it fills the preview's box like object-fit: cover): the
   * photo and the framing frames are exactly that, so what staff see is what is taken and judged.
   */
  const visible = (): { x: number; y: number; width: number; height: number } => {
    const aspect = element.clientWidth > 0 && element.clientHeight > 0 ? element.clientWidth / element.clientHeight : 3 / 4;
    const width = Math.min(video.videoWidth, Math.round(video.videoHeight * aspect));
    const height = Math.min(video.videoHeight, Math.round(video.videoWidth / aspect));
    return { x: Math.round((video.videoWidth - width) / 2), y: Math.round((video.videoHeight - height) / 2), width, height };
  };
  const draw = (canvas: HTMLCanvasElement, scale: number): void => {
    const crop = visible();
    canvas.width = Math.round(crop.width * scale);
    canvas.height = Math.round(crop.height * scale);
    canvas.getContext('2d')!.drawImage(video, crop.x, crop.y, crop.width, crop.height, 0, 0, canvas.width, canvas.height);
  };
  const small = h('canvas');
  const count = h('p', { class: 'countdown', hidden: true, 'aria-live': 'assertive' });
  element.append(count);
  return {
    element,
    advice,
    async capture() {
      await loaded();
      const canvas = h('canvas');
      draw(canvas, 1);
      return jpeg(canvas, 0.92);
    },
    async frame(longSide) {
      await loaded();
      const crop = visible();
      draw(small, Math.min(1, longSide / Math.max(crop.width, crop.height)));
      return jpeg(small, 0.8);
    },
    async countdown(seconds) {
      count.hidden = false;
      for (let left = seconds; left > 0; left--) {
        count.textContent = String(left);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      count.hidden = true;
    },
    showAdvice(next) {
      const state = next === null ? 'none' : next.advice === 'ok' ? 'ok' : 'fix';
      if (advice.dataset.advice !== (next?.advice ?? 'none')) {
        advice.textContent = next?.message ?? STATIC_HINT;
        advice.dataset.advice = next?.advice ?? 'none';
      }
      element.dataset.framing = state;
      advice.dataset.framing = state;
      box.hidden = !next?.box || video.videoWidth === 0;
      if (!next?.box || box.hidden) return;
      // The frames are the preview's own view, unmirrored; the preview is mirrored.
      const { clientWidth: width, clientHeight: height } = element;
      box.style.left = `${width * (1 - next.box.x - next.box.width)}px`;
      box.style.top = `${next.box.y * height}px`;
      box.style.width = `${next.box.width * width}px`;
      box.style.height = `${next.box.height * height}px`;
    },
    stop() {
      for (const track of stream.getTracks()) track.stop();
      video.srcObject = null;
    },
  };
}
