/**
 * The warp engine's post-conditions (checks.ts), each with a drawn case that
 * passes and one that violates it: the face and hair keep their bytes; a
 * garment lies on the body (inside the person, centred, not above the
 * shoulders, bottoms not above the waist, a top's hem not at the knees); a
 * garment is opaque; the customer's old clothing does not show beside the
 * new garment; crossed arms are refused up front.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { faceViolation, garmentViolation, layerViolations, oldClothingViolation, poseViolation } from '../../server/engines/warp/checks.ts';
import { skinModel } from '../../server/engines/warp/composite/colour.ts';
import { overLongSleeves } from '../../server/engines/warp/engine.ts';
import { compose } from '../../server/engines/warp/composite/compose.ts';
import { bodyFrame } from '../../server/engines/warp/fit/body.ts';
import { placeGarment } from '../../server/engines/warp/fit/place.ts';
import { renderGarment, type Layer } from '../../server/engines/warp/fit/render.ts';
import { garmentScale } from '../../server/engines/warp/fit/sizing.ts';
import { POSE, REGION } from '../../server/vision/types.ts';
import { H, SKIN, W, greyLayer, syntheticPerson, syntheticTee } from '../helpers/warp-body.ts';

const { image, person } = syntheticPerson();
const body = bodyFrame(person);
const tee = syntheticTee();
const placed = renderGarment(tee, placeGarment(tee, body, { scale: garmentScale('M', 'M', 'regular'), styling: [], tucked: false }), W, H);
const result = compose({ image, person, layers: [{ layer: placed, category: 'top' }] });

/** A layer that is a solid (or translucent) rectangle in photo pixels. */
function rectangle(x0: number, y0: number, x1: number, y1: number, alpha = 1): Layer {
  return greyLayer(x0, y0, x1 - x0, y1 - y0, { alpha });
}

describe('warp post-conditions', () => {
  test('a tee drawn by the engine on the drawn body passes every check', () => {
    assert.deepEqual(layerViolations(placed, 'top', body, person), []);
    assert.equal(faceViolation(image, result, person), null);
    assert.equal(oldClothingViolation(image, result, person, skinModel(image, person), [{ layer: placed, category: 'top' }]), null);
    assert.equal(poseViolation(person, body, [tee]), null);
  });

  test('face: a result that paints over the face and hair is caught', () => {
    const painted = result.slice();
    for (let i = 0; i < W * H; i++) if (person.layout.labels[i] === REGION.head) painted.fill(90, i * 3, i * 3 + 3);
    assert.equal(faceViolation(image, painted, person)?.check, 'face');
  });

  test("face: with Face Mesh's oval, a change inside the oval is caught even where the layout says neck", () => {
    const oval = { data: new Uint8Array(W * H), width: W, height: H };
    const painted = result.slice();
    for (let y = 112; y < 130; y++) {
      for (let x = 192; x < 208; x++) {
        oval.data[y * W + x] = 255;
        painted.fill(10, (y * W + x) * 3, (y * W + x) * 3 + 3);
      }
    }
    assert.equal(faceViolation(image, painted, person), null, 'the layout alone does not cover the neck');
    assert.equal(faceViolation(image, painted, person, oval)?.check, 'face');
  });

  test('placement: a top drawn above the shoulders like a cape is caught', () => {
    const cape = rectangle(150, 10, 250, 200);
    assert.ok(layerViolations(cape, 'top', body, person).some((v) => /above the shoulders/.test(v.detail)));
  });

  test('placement: trousers drawn up to the chest are caught', () => {
    const high = rectangle(160, 170, 240, 560);
    assert.ok(layerViolations(high, 'bottom', body, person).some((v) => /above the waist/.test(v.detail)));
    assert.deepEqual(layerViolations(rectangle(160, 300, 240, 560), 'bottom', body, person), []);
  });

  test('placement: a top hanging off one arm, or reaching far outside the person, is caught', () => {
    const aside = rectangle(250, 150, 330, 300);
    assert.ok(layerViolations(aside, 'top', body, person).some((v) => /centre line/.test(v.detail)));
    const wide = rectangle(0, 150, 399, 300);
    assert.ok(layerViolations(wide, 'top', body, person).some((v) => /outside the person/.test(v.detail)));
  });

  test('placement: a sleeve flying out beside the arm like a wing is caught', () => {
    const wing = rectangle(155, 150, 245, 300);
    const wider = rectangle(155, 150, 380, 300);
    wider.alpha.fill(0);
    for (let y = 0; y < wider.height; y++) for (let x = 0; x < 90; x++) wider.alpha[y * wider.width + x] = 1;
    for (let y = 0; y < 40; y++) for (let x = 150; x < 225; x++) wider.alpha[y * wider.width + x] = 1;
    assert.ok(!layerViolations(wing, 'top', body, person).some((v) => /no body/.test(v.detail)));
    assert.ok(layerViolations(wider, 'top', body, person).some((v) => /no body/.test(v.detail)));
  });

  test('placement: a trouser leg swinging off the legs is caught; a skirt flaring below the hips hangs free', () => {
    // Fitted at the hips, then twice the legs' width below them.
    const hipY = Math.round((body.hip.left.y + body.hip.right.y) / 2);
    const flare = rectangle(90, 300, 310, 560);
    for (let y = 0; y < flare.height; y++)
      for (let x = 0; x < flare.width; x++)
        if (300 + y < hipY + 20 && (90 + x < 160 || 90 + x >= 240)) flare.alpha[y * flare.width + x] = 0;
    const noBody = (skirt: boolean) => layerViolations(flare, 'bottom', body, person, skirt).some((v) => /no body/.test(v.detail));
    assert.equal(noBody(false), true, 'trousers');
    assert.equal(noBody(true), false, 'a skirt');
  });

  test('placement: a top drawn at the wrong scale, far wider than the body across the chest, is caught', () => {
    const huge = rectangle(20, 150, 380, 290);
    assert.ok(layerViolations(huge, 'top', body, person).some((v) => /far wider/.test(v.detail)));
  });

  test('placement: sleeves along arms held out (hands on hips) do not make a top far wider than the body', () => {
    // The same span across the chest, but only its middle is the top's body; the rest is sleeve.
    const akimbo = rectangle(20, 150, 380, 290);
    for (let y = 0; y < akimbo.height; y++)
      for (let x = 0; x < akimbo.width; x++) akimbo.sleeve[y * akimbo.width + x] = x < 130 || x >= 230 ? 1 : 0;
    assert.ok(!layerViolations(akimbo, 'top', body, person).some((v) => /far wider/.test(v.detail)));
  });

  test("placement: a top whose hem falls to the knees is caught (a dress's is not)", () => {
    const tunic = rectangle(155, 150, 245, 500);
    assert.ok(layerViolations(tunic, 'top', body, person).some((v) => /hem/.test(v.detail)));
    assert.deepEqual(
      layerViolations(tunic, 'dress', body, person).filter((v) => /hem/.test(v.detail)),
      [],
    );
  });

  test('opacity: a translucent garment is caught, a soft edge is not', () => {
    assert.equal(layerViolations(rectangle(155, 150, 245, 300, 0.5), 'top', body, person)[0]?.check, 'opacity');
    const edged = rectangle(155, 150, 245, 300);
    for (let x = 0; x < edged.width; x++) edged.alpha[x] = 0.5;
    assert.ok(!layerViolations(edged, 'top', body, person).some((v) => v.check === 'opacity'));
  });

  test('old clothing: beside a bare upper arm, what its region takes in that is not skin is no old sleeve', () => {
    const { image: photo, person: wearer } = syntheticPerson();
    const [shoulder, elbow] = [wearer.landmarks[POSE.leftShoulder]!, wearer.landmarks[POSE.leftElbow]!];
    const t = (y: number): number => (y - shoulder.y) / (elbow.y - shoulder.y);
    for (let y = 160; y < 232; y++) {
      const axis = shoulder.x + (elbow.x - shoulder.x) * t(y);
      // The left upper arm bare (its old sleeve was skin-tight and is now skin), and a dark bag strap 30 pixels wide
      // hanging just outside it, inside the arm's region in the layout.
      for (let x = Math.round(axis - 13); x <= Math.round(axis + 13); x++) photo.data.set(SKIN, (y * W + x) * 3);
      for (let x = Math.round(axis + 15); x < Math.round(axis + 45); x++) {
        photo.data.set([30, 30, 30], (y * W + x) * 3);
        wearer.matte.data[y * W + x] = 255;
        wearer.layout.labels[y * W + x] = REGION.leftUpperArm;
      }
    }
    // A new top over the torso and the other arm; the photo otherwise unchanged.
    const cover = rectangle(120, 130, 250, 320);
    const skin = skinModel(photo, wearer);
    assert.equal(oldClothingViolation(photo, Uint8Array.from(photo.data), wearer, skin, [{ layer: cover, category: 'top' }]), null);
    // The same strap beside an arm in a sleeve is old clothing.
    const sleeved = syntheticPerson();
    for (let y = 160; y < 232; y++) {
      const axis = shoulder.x + (elbow.x - shoulder.x) * t(y);
      for (let x = Math.round(axis + 15); x < Math.round(axis + 45); x++) {
        sleeved.image.data.set([30, 30, 30], (y * W + x) * 3);
        sleeved.person.matte.data[y * W + x] = 255;
        sleeved.person.layout.labels[y * W + x] = REGION.leftUpperArm;
      }
    }
    const covered = [{ layer: cover, category: 'top' as const }];
    const plain = Uint8Array.from(sleeved.image.data);
    assert.equal(
      oldClothingViolation(sleeved.image, plain, sleeved.person, skinModel(sleeved.image, sleeved.person), covered)?.check,
      'old-clothing',
    );
  });

  test('old clothing: a cami over the old long-sleeved top, leaving it on the chest, is caught', () => {
    const cami = rectangle(158, 230, 242, 300);
    const out = compose({ image, person, layers: [{ layer: cami, category: 'top' }] });
    assert.equal(
      oldClothingViolation(image, out, person, skinModel(image, person), [{ layer: cami, category: 'top' }])?.check,
      'old-clothing',
    );
  });

  test('old clothing: the same top layered (a knit vest) is worn over the old top, which is not caught', () => {
    const vest = [{ layer: rectangle(158, 230, 242, 300), category: 'top' as const, layered: true }];
    assert.equal(oldClothingViolation(image, compose({ image, person, layers: vest }), person, skinModel(image, person), vest), null);
  });

  test('old clothing: below a cropped jacket or sleeved top the old top is worn that way; below one without sleeves it is caught', () => {
    // Shoulders to y 230, arms and all, its outer 40 columns each side drawn as sleeves along the arms: the old top
    // runs on to the hips (y 300).
    const cropped = greyLayer(110, 120, 180, 110, { alpha: 1 });
    const tube = new Uint8Array(cropped.width * cropped.height);
    for (let k = 0; k < tube.length; k++) tube[k] = k % cropped.width < 40 || k % cropped.width >= cropped.width - 40 ? 1 : 0;
    const sleeved = { ...cropped, tube };
    const skin = skinModel(image, person);
    const jacket = [{ layer: sleeved, category: 'outerwear' as const }];
    assert.equal(oldClothingViolation(image, compose({ image, person, layers: jacket }), person, skin, jacket), null);
    // A top cropped the same, its sleeves on the arms, is worn over the old top as a cropped sweater over a sweatshirt.
    const top = [{ layer: sleeved, category: 'top' as const }];
    assert.equal(oldClothingViolation(image, compose({ image, person, layers: top }), person, skin, top), null);
    // Drawn without sleeves on the arms (a white T-shirt's stood off the shoulders as wings), it is caught.
    const wings = [{ layer: cropped, category: 'top' as const }];
    assert.equal(oldClothingViolation(image, compose({ image, person, layers: wings }), person, skin, wings)?.check, 'old-clothing');
    // Worn with a new top, the jacket leaves nothing of the old one to show.
    const both = [...jacket, { layer: rectangle(158, 230, 242, 240), category: 'top' as const }];
    assert.equal(oldClothingViolation(image, compose({ image, person, layers: both }), person, skin, both)?.check, 'old-clothing');
    // A jacket drawn with no sleeves on the arms (its sleeves were not found) is no jacket worn over the top.
    const vest = [{ layer: cropped, category: 'outerwear' as const }];
    assert.equal(oldClothingViolation(image, compose({ image, person, layers: vest }), person, skin, vest)?.check, 'old-clothing');
  });

  test('old clothing: trousers below a skirt’s hem are worn that way; below new trousers’ hem they are caught', () => {
    // Short bottoms over the hips (labelled from y 280), down to y 340 (the old trousers run from y 310 to 560).
    const bottoms = rectangle(150, 270, 250, 340);
    const skin = skinModel(image, person);
    const skirt = [{ layer: bottoms, category: 'bottom' as const, skirt: true }];
    assert.equal(oldClothingViolation(image, compose({ image, person, layers: skirt }), person, skin, skirt), null);
    const trousers = [{ layer: bottoms, category: 'bottom' as const }];
    assert.equal(oldClothingViolation(image, Uint8Array.from(image.data), person, skin, trousers)?.check, 'old-clothing');
  });

  test('pose: both forearms folded across the chest are refused for a garment with long sleeves, arms down are not', () => {
    const crossed = {
      ...person,
      landmarks: person.landmarks.map((p, k) =>
        k === POSE.leftWrist ? { ...p, x: 165, y: 220 } : k === POSE.rightWrist ? { ...p, x: 235, y: 220 } : p,
      ),
    };
    // The tee's sleeves run 0.64 of its shoulders' width; these 1.5.
    const longSleeves = { ...tee, landmarks: { ...tee.landmarks, leftSleeveEnd: { x: 190, y: 167 }, rightSleeveEnd: { x: 10, y: 167 } } };
    const bottom = { category: 'bottom' as const, landmarks: {} };
    const dress = { ...longSleeves, category: 'dress' as const };
    assert.equal(poseViolation(crossed, bodyFrame(crossed), [longSleeves])?.check, 'pose');
    assert.equal(poseViolation(crossed, bodyFrame(crossed), [bottom, dress])?.check, 'pose');
    assert.equal(poseViolation(person, body, [longSleeves, bottom]), null);
    // Short sleeves end above the elbows, beside the folded forearms.
    assert.equal(poseViolation(crossed, bodyFrame(crossed), [tee, bottom]), null);
  });

  test('pose: folded arms do not stop a top or dress without sleeves, drawn behind the forearms', () => {
    const crossed = {
      ...person,
      landmarks: person.landmarks.map((p, k) =>
        k === POSE.leftWrist ? { ...p, x: 165, y: 220 } : k === POSE.rightWrist ? { ...p, x: 235, y: 220 } : p,
      ),
    };
    const { leftSleeveEnd: _l, rightSleeveEnd: _r, ...bare } = tee.landmarks;
    const tank = { ...tee, landmarks: bare };
    assert.ok(tee.landmarks.leftSleeveEnd && tee.landmarks.rightSleeveEnd);
    assert.equal(poseViolation(crossed, bodyFrame(crossed), [tank]), null);
    assert.equal(poseViolation(crossed, bodyFrame(crossed), [{ ...tank, category: 'dress' as const }]), null);
  });

  test('garment: a one-shoulder dress laid flat is refused; the drawn tee, and a worn top on a leaning model, are not', () => {
    const oneShoulder = { ...tee, category: 'dress' as const, landmarks: { ...tee.landmarks, rightShoulder: { x: 50, y: 60 } } };
    assert.equal(garmentViolation([tee])?.check, undefined);
    assert.equal(garmentViolation([tee, oneShoulder])?.check, 'garment');
    assert.equal(garmentViolation([{ ...oneShoulder, photo: 'worn' as const }]), null);
    assert.equal(garmentViolation([{ ...oneShoulder, category: 'bottom' as const }]), null);
  });

  test('folded arms: a forearm the layout gives to the torso stays in front of a top drawn behind it', () => {
    // A bare forearm painted across the old top from the left elbow towards the crossed left wrist. The layout is the
    // arms-down one, so its pixels are the torso's, as the coarse layout of real folded arms gave them.
    const elbow = person.landmarks[POSE.leftElbow]!;
    const wrist = { x: 165, y: 220 };
    const folded = {
      ...person,
      landmarks: person.landmarks.map((p, k) =>
        k === POSE.leftWrist ? { ...p, ...wrist } : k === POSE.rightWrist ? { ...p, x: 235, y: 220 } : p,
      ),
    };
    const data = Uint8Array.from(image.data);
    const bar: number[] = [];
    for (let y = 200; y < 250; y++) {
      for (let x = 175; x < 240; x++) {
        const t = (x - wrist.x) / (elbow.x - wrist.x);
        const d = Math.abs(y - (wrist.y + t * (elbow.y - wrist.y)));
        if (d > 4) continue;
        data.set(SKIN, (y * W + x) * 3);
        if (d <= 2) bar.push(y * W + x);
      }
    }
    assert.ok(bar.every((i) => person.layout.labels[i] === REGION.torso));
    const painted = { ...image, data };
    const layers = [{ layer: rectangle(140, 150, 260, 300), category: 'top' as const }];
    const kept = (result: Uint8Array): number =>
      bar.filter((i) => result[i * 3] === SKIN[0] && result[i * 3 + 1] === SKIN[1] && result[i * 3 + 2] === SKIN[2]).length;
    assert.equal(kept(compose({ image: painted, person: folded, layers })), bar.length);
    // Arms down, the same pixels are the torso's skin under the top (a bare chest it covers).
    assert.ok(kept(compose({ image: painted, person, layers })) < bar.length / 2);
    // A shadow across the forearm (grey: neither skin nor skin's chroma), seven columns wide, stays with it.
    const SHADOW = [70, 70, 70];
    const shadow: number[] = [];
    for (const i of bar) if (i % W >= 205 && i % W < 212) shadow.push(i);
    for (const i of shadow) data.set(SHADOW, i * 3);
    const out = compose({ image: painted, person: folded, layers });
    assert.ok(shadow.length > 0);
    for (const i of shadow)
      assert.deepEqual(Array.from(out.subarray(i * 3, i * 3 + 3)), SHADOW, `shadow at ${i % W}, ${Math.floor(i / W)}`);
  });

  test('folded arms: a garment without sleeves lies over an upper arm only near the shoulder', () => {
    const folded = {
      ...person,
      landmarks: person.landmarks.map((p, k) =>
        k === POSE.leftWrist ? { ...p, x: 165, y: 220 } : k === POSE.rightWrist ? { ...p, x: 235, y: 220 } : p,
      ),
    };
    // Bare skin on the left upper arm round a quarter of the shoulders' width (100) from the left shoulder (250,
    // 150); told at the pixels 24 to 29 from it, clear of the patch's edge (what is in front is taken by majority).
    const data = Uint8Array.from(image.data);
    const patch: number[] = [];
    for (let y = 162; y < 184; y++)
      for (let x = 258; x < 272; x++) if (person.layout.labels[y * W + x] === REGION.leftUpperArm) patch.push(y * W + x);
    for (const i of patch) data.set(SKIN, i * 3);
    const inner = new Set(patch);
    const ring = patch.filter((i) => {
      const [x, y] = [i % W, Math.floor(i / W)];
      const d = Math.hypot(x - 250, y - 150);
      return d >= 24 && d <= 29 && [-3, 3].every((o) => inner.has(i + o) && inner.has(i + o * W));
    });
    assert.ok(ring.length >= 10, `${ring.length} pixels to tell`);
    const painted = { ...image, data };
    const layers = [{ layer: rectangle(140, 150, 290, 300), category: 'top' as const }];
    const bare = (out: Uint8Array): number => ring.filter((i) => out[i * 3] === SKIN[0] && out[i * 3 + 1] === SKIN[1]).length;
    assert.equal(bare(compose({ image: painted, person: folded, layers })), ring.length);
    // Arms down, that is the shoulder's cap, where a top's armhole may lie over the arm.
    assert.equal(bare(compose({ image: painted, person, layers })), 0);
  });

  test('pose: folded arms do not stop bottoms, which lie below them', () => {
    const crossed = {
      ...person,
      landmarks: person.landmarks.map((p, k) =>
        k === POSE.leftWrist ? { ...p, x: 165, y: 220 } : k === POSE.rightWrist ? { ...p, x: 235, y: 220 } : p,
      ),
    };
    assert.equal(poseViolation(crossed, bodyFrame(crossed), [{ category: 'bottom' as const, landmarks: {} }]), null);
  });
});

describe("which garments go over a customer's long sleeves", () => {
  // Arms 1.4 shoulder widths long, shoulder to wrist.
  const arm = 1.4;
  test("short sleeves do, long ones do not, but a jacket's do whatever their length; no sleeves never", () => {
    assert.equal(overLongSleeves('top', 0.4, arm), true, 'a T-shirt: the old long sleeves stay below its own');
    assert.equal(overLongSleeves('dress', 0.4, arm), true, 'a tee dress');
    assert.equal(overLongSleeves('top', 1.3, arm), false, 'a long-sleeved top replaces them');
    assert.equal(overLongSleeves('outerwear', 1.3, arm), true, "a blazer: the shirt's cuffs stay below its sleeves");
    assert.equal(overLongSleeves('outerwear', 0, arm), false, 'a gilet without sleeves');
  });
});
