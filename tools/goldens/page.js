// Runs inside headless Chromium, next to MediaPipe's own pose.js or
// selfie_segmentation.js (a classic script, so no imports). make-goldens.ts
// calls window.runSolution() and gets plain numbers back.
'use strict';

/** Base64 of a Uint8Array, in chunks (String.fromCharCode has an argument limit). */
function toBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/**
 * Draws a result image (mask) at the photo's size and returns its four
 * channels' sums and each channel's bytes, so the caller can tell which
 * channel carries the mask.
 */
function readMask(mask, width, height) {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.clearRect(0, 0, width, height);
  ctx.drawImage(mask, 0, 0, width, height);
  const rgba = ctx.getImageData(0, 0, width, height).data;
  const n = width * height;
  const channels = [new Uint8Array(n), new Uint8Array(n), new Uint8Array(n), new Uint8Array(n)];
  const sums = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < 4; c++) {
      const v = rgba[i * 4 + c];
      channels[c][i] = v;
      sums[c] += v;
    }
  }
  return { sums, channels: channels.map(toBase64) };
}

/**
 * Runs one MediaPipe solution with the given options on each photo URL in
 * turn and returns, per photo, its size, landmarks (normalised, as MediaPipe
 * gives them) and the mask's channels.
 */
window.runSolution = async function runSolution(solution, options, photoUrls) {
  const base = solution === 'pose' ? '/mp/pose/' : '/mp/selfie_segmentation/';
  const sol = solution === 'pose' ? new Pose({ locateFile: (f) => base + f }) : new SelfieSegmentation({ locateFile: (f) => base + f });
  sol.setOptions(options);
  let pending = null;
  // The result images are only guaranteed valid inside the callback, so the
  // mask is read there.
  sol.onResults((r) => {
    const img = pending.image;
    const w = img.naturalWidth;
    const h = img.naturalHeight;
    pending.result = {
      width: w,
      height: h,
      landmarks: r.poseLandmarks ? r.poseLandmarks.map((p) => ({ x: p.x, y: p.y, z: p.z, visibility: p.visibility })) : null,
      mask: r.segmentationMask ? readMask(r.segmentationMask, w, h) : null,
    };
  });
  await sol.initialize();
  const out = [];
  for (const url of photoUrls) {
    const image = new Image();
    image.src = url;
    await image.decode();
    pending = { image, result: null };
    // The legacy JS solutions have no static image mode (an unknown option is
    // ignored): after one frame Pose tracks from the previous landmarks and
    // skips the detector, so each photo starts from a reset graph instead.
    sol.reset();
    const t0 = performance.now();
    await sol.send({ image });
    const ms = performance.now() - t0;
    if (!pending.result) throw new Error(`no result for ${url}`);
    out.push({ url, ms, ...pending.result });
  }
  await sol.close();
  return out;
};
