/**
 * Geometry and tensors for the model's fixed input: the reference's
 * AspectPreserveResize ("fit", no upsampling before pose detection) and
 * ResizePad (fit inside width×height, then symmetric zero padding), the
 * padding remembered to crop the result back, and images as [C,H,W] in −1..1.
 */

/** A resize to `width`×`height` and the padding around it that fills the target. */
export interface PadPlan {
  width: number;
  height: number;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The size after the reference's pre-resize: fit inside max×max, never upsampled. */
export function preResize(width: number, height: number, max: number): { width: number; height: number } {
  const scale = Math.min(max / width, max / height);
  if (scale >= 1) return { width, height };
  return { width: Math.floor(scale * width), height: Math.floor(scale * height) };
}

/** ResizePad's plan: scale to fit (up or down, int() of the scaled size), pad left/top with the smaller half. */
export function resizePadPlan(width: number, height: number, targetWidth: number, targetHeight: number): PadPlan {
  const scale = Math.min(targetWidth / width, targetHeight / height);
  const w = scale === 1 ? width : Math.floor(scale * width);
  const h = scale === 1 ? height : Math.floor(scale * height);
  const padW = Math.max(targetWidth - w, 0);
  const padH = Math.max(targetHeight - h, 0);
  const left = Math.floor(padW / 2);
  const top = Math.floor(padH / 2);
  return { width: w, height: h, left, top, right: padW - left, bottom: padH - top };
}

/** Nearest-neighbour resize of a single-channel map (cv2's INTER_NEAREST_EXACT: pixel centres). */
export function resizeNearest(src: Uint8Array, width: number, height: number, toWidth: number, toHeight: number): Uint8Array {
  const out = new Uint8Array(toWidth * toHeight);
  for (let y = 0; y < toHeight; y++) {
    const sy = Math.min(height - 1, Math.floor(((y + 0.5) * height) / toHeight));
    for (let x = 0; x < toWidth; x++) {
      const sx = Math.min(width - 1, Math.floor(((x + 0.5) * width) / toWidth));
      out[y * toWidth + x] = src[sy * width + sx]!;
    }
  }
  return out;
}

/**
 * An 8-bit image (interleaved, `channels` per pixel, already resized to the
 * plan's size) placed into the padded target as [channels, H, W] in −1..1;
 * padding is pixel value 0 (−1), as cv2.copyMakeBorder with 0 gives.
 */
export function toPaddedTensor(pixels: Uint8Array, channels: number, plan: PadPlan): Float32Array {
  const W = plan.left + plan.width + plan.right;
  const H = plan.top + plan.height + plan.bottom;
  const out = new Float32Array(channels * W * H).fill(-1);
  for (let y = 0; y < plan.height; y++) {
    for (let x = 0; x < plan.width; x++) {
      for (let c = 0; c < channels; c++) {
        out[(c * H + y + plan.top) * W + x + plan.left] = pixels[(y * plan.width + x) * channels + c]! / 127.5 - 1;
      }
    }
  }
  return out;
}

/**
 * One value in −1..1 as the reference's byte: ((x + 1) · 0.5) · 255 in
 * float32, then truncated toward zero as numpy's astype(uint8) does
 * (tensor_to_pil), clamped so an out-of-range value cannot wrap.
 */
function toByte(value: number): number {
  const f = Math.fround;
  const scaled = f(f(f(value + 1) * 0.5) * 255);
  return Math.max(0, Math.min(255, Math.trunc(scaled)));
}

/** The model's [3, H, W] output in −1..1, cropped to the plan's image and returned as interleaved RGB bytes. */
export function unpadToRgb(tensor: Float32Array, plan: PadPlan): Uint8Array {
  const W = plan.left + plan.width + plan.right;
  const H = plan.top + plan.height + plan.bottom;
  const out = new Uint8Array(plan.width * plan.height * 3);
  for (let y = 0; y < plan.height; y++) {
    for (let x = 0; x < plan.width; x++) {
      for (let c = 0; c < 3; c++) {
        out[(y * plan.width + x) * 3 + c] = toByte(tensor[(c * H + y + plan.top) * W + x + plan.left]!);
      }
    }
  }
  return out;
}
